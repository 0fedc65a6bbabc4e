//! --config-from-ref and cargo: included configuration files, symbolic links, and commands run in another directory.

use std::os::unix::fs::{symlink, PermissionsExt};

use crate::ci_cargo::{no_warning, BROKEN, FROM_MAIN, MANIFEST, PASSING};
use crate::ci_cargo_more::gate;
use crate::ci_scripts::finding;
use crate::support::{check, TestRepo};

/// A cargo configuration that passes every test, its runner on line 5.
const WEAKENED: &str = "[build]\njobs = 2\n\n[target.'cfg(all())']\nrunner = \"true\"\n";

/// A script that runs the crate's tests, and one that passes whatever.
const RUNS_TESTS: &str = "#!/bin/sh\nexec cargo test --quiet\n";
const PASSES_ALL: &str = "#!/bin/sh\nexit 0\n";

/// What a test puts in the repository.
enum Put<'a> {
    File(&'a str, &'a str),
    /// A symbolic link at the first path, holding the second.
    Link(&'a str, &'a str),
}

/// Writes `put` over what is there (a `.sh` file executable).
fn put(repo: &TestRepo, put: &Put<'_>) {
    match put {
        Put::File(path, text) => {
            let full = repo.path().join(path);
            if full.is_symlink() {
                std::fs::remove_file(&full).unwrap();
            }
            repo.write(path, text);
            if std::path::Path::new(path).extension() == Some("sh".as_ref()) {
                std::fs::set_permissions(full, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        Put::Link(path, target) => {
            let full = repo.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            if full.is_symlink() || full.exists() {
                std::fs::remove_file(&full).unwrap();
            }
            symlink(target, full).unwrap();
        }
    }
}

/// `main` holding a tiny crate (at `at`) whose test passes, gated by
/// `gate`, with `files`; then a branch `feature` (checked out) that
/// breaks the test and puts `changes`.
fn crate_branch(gate: &str, at: &str, files: &[Put<'_>], changes: &[Put<'_>]) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(gate)
        .write(&format!("{at}Cargo.toml"), MANIFEST)
        .write(&format!("{at}src/lib.rs"), PASSING)
        .write(".gitignore", "target/\nCargo.lock\n");
    for one in files {
        put(&repo, one);
    }
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write(&format!("{at}src/lib.rs"), BROKEN);
    for one in changes {
        put(&repo, one);
    }
    repo.commit_all("feature");
    repo
}

/// The run passed the broken test, with a warning on `file` (at `line`
/// when given), and fails under the strict profile.
fn warned_on(repo: &TestRepo, file: &str, line: Option<u32>, what: &str) {
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{what}: {v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed", "{what}: {v:#}");
    assert_eq!(v["status"], "warned", "{what}: {v:#}");
    let found = finding(&v, file);
    if let Some(line) = line {
        assert_eq!(found["line"], line, "{what}: {v:#}");
    }
    let (code, v) = repo.verdict(&[&FROM_MAIN[..], &["--profile", "strict"][..]].concat());
    assert_eq!(code, 1, "{what}: {v:#}");
}

#[test]
fn a_file_a_cargo_configuration_includes_is_compared_at_the_settings_line() {
    let command = gate("cargo test --quiet", "");
    // A list of paths, from the including file's directory.
    let repo = crate_branch(
        &command,
        "",
        &[
            Put::File(".cargo/config.toml", "include = [\"ci.toml\"]\n"),
            Put::File(".cargo/ci.toml", "[build]\njobs = 2\n"),
        ],
        &[Put::File(".cargo/ci.toml", WEAKENED)],
    );
    warned_on(&repo, ".cargo/ci.toml", Some(5), "included");
    let (_, v) = repo.verdict(&FROM_MAIN);
    let message = finding(&v, ".cargo/ci.toml")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("the cargo setting `target.'cfg(all())'.runner` of `.cargo/ci.toml`"),
        "{message}"
    );

    // A table with a path, up and out of `.cargo`, and what that includes
    // in turn, from its own directory: cargo reads them all.
    let repo = crate_branch(
        &command,
        "",
        &[
            Put::File(
                ".cargo/config.toml",
                "include = [{ path = \"../ci/cargo.toml\" }]\n",
            ),
            Put::File("ci/cargo.toml", "include = [\"more.toml\"]\n"),
            Put::File("ci/more.toml", "[build]\njobs = 2\n"),
        ],
        &[Put::File("ci/more.toml", WEAKENED)],
    );
    warned_on(&repo, "ci/more.toml", Some(5), "included twice");

    // The same runner moved from the included file into the including
    // one verifies the same; the broken test fails, with no warning.
    let runner = "[target.'cfg(unix)']\nrunner = \"env\"\n";
    let repo = crate_branch(
        &command,
        "",
        &[
            Put::File(".cargo/config.toml", "include = [\"ci.toml\"]\n"),
            Put::File(".cargo/ci.toml", runner),
        ],
        &[
            Put::File(".cargo/config.toml", runner),
            Put::File(".cargo/ci.toml", "[build]\njobs = 2\n"),
        ],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}

#[test]
fn a_symbolic_link_is_compared_as_what_it_leads_to_and_where() {
    let command = gate("cargo test --quiet", "");
    // `.cargo` a link to a directory: the branch weakens the file there.
    let repo = crate_branch(
        &command,
        "",
        &[
            Put::File("ci/cargo/config.toml", "[build]\njobs = 2\n"),
            Put::Link(".cargo", "ci/cargo"),
        ],
        &[Put::File("ci/cargo/config.toml", WEAKENED)],
    );
    warned_on(&repo, ".cargo/config.toml", Some(5), "linked .cargo");

    // A linked configuration file that leads out of the repository: its
    // settings are not the repository's to read, and it is a change.
    let repo = crate_branch(&command, "", &[], &[]);
    let outside = repo.home().join("weakened.toml");
    std::fs::write(&outside, WEAKENED).unwrap();
    put(
        &repo,
        &Put::Link(".cargo/config.toml", outside.to_str().unwrap()),
    );
    repo.commit_all("link out");
    warned_on(&repo, ".cargo/config.toml", None, "linked out");

    // A script reached through a directory link the branch retargets, a
    // script link retargeted out of the repository.
    let script = gate("./tools/test.sh", "");
    let repo = crate_branch(
        &script,
        "",
        &[
            Put::File("ci/a/test.sh", RUNS_TESTS),
            Put::File("ci/b/test.sh", PASSES_ALL),
            Put::Link("tools", "ci/a"),
        ],
        &[Put::Link("tools", "ci/b")],
    );
    warned_on(&repo, "tools/test.sh", None, "retargeted directory");
    let repo = crate_branch(
        &script,
        "",
        &[
            Put::File("ci/test.sh", RUNS_TESTS),
            Put::Link("tools/test.sh", "../ci/test.sh"),
        ],
        &[Put::Link("tools/test.sh", "/bin/true")],
    );
    warned_on(&repo, "tools/test.sh", None, "link out");

    // A link retargeted at a copy is a change too: the broken test still
    // fails, with the warning.
    let repo = crate_branch(
        &script,
        "",
        &[
            Put::File("ci/test.sh", RUNS_TESTS),
            Put::File("ci/copy.sh", RUNS_TESTS),
            Put::Link("tools/test.sh", "../ci/test.sh"),
        ],
        &[Put::Link("tools/test.sh", "../ci/copy.sh")],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    finding(&v, "tools/test.sh");

    // A Makefile that is a link, the file it leads to left alone: no
    // warning, and the broken test fails.
    let repo = crate_branch(
        &gate("make test", ""),
        "",
        &[
            Put::File("ci/Makefile", "test:\n\tcargo test --quiet\n"),
            Put::Link("Makefile", "ci/Makefile"),
        ],
        &[],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}

#[test]
fn cargo_settings_are_looked_up_where_a_cd_leaves_the_command() {
    let weaken = [Put::File("sub/.cargo/config.toml", WEAKENED)];
    // The gate's own shell command.
    let repo = crate_branch(
        &gate("cd sub && cargo test --quiet", ", shell = true"),
        "sub/",
        &[],
        &weaken,
    );
    warned_on(&repo, "sub/.cargo/config.toml", Some(5), "shell command");
    // A script the command runs, and a Makefile recipe.
    let repo = crate_branch(
        &gate("./ci/test.sh", ""),
        "sub/",
        &[Put::File(
            "ci/test.sh",
            "#!/bin/sh\nset -e\ncd sub\ncargo test --quiet\n",
        )],
        &weaken,
    );
    warned_on(&repo, "sub/.cargo/config.toml", Some(5), "script");
    let repo = crate_branch(
        &gate("make test", ""),
        "sub/",
        &[Put::File(
            "Makefile",
            "test:\n\tcd sub && cargo test --quiet\n",
        )],
        &weaken,
    );
    warned_on(&repo, "sub/.cargo/config.toml", Some(5), "recipe");

    // In a subshell, the `cd` leaves the command after it where it was:
    // cargo there reads no `sub/.cargo`, and the broken test fails.
    let repo = crate_branch(
        &gate("(cd sub && true) && cargo test --quiet", ", shell = true"),
        "",
        &[],
        &weaken,
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}
