//! cargo and eslint configuration that counts under --config-from-ref.

use crate::ci_cargo::FROM_MAIN;
use crate::ci_lookup::{flagged, partial_clone};
use crate::ci_queue::notes_starting;
use crate::ci_refs::branch_of;
use crate::support::{check, write_executable, TestRepo};

/// A gate whose one check `lint` runs `command`.
fn gate(command: &str) -> String {
    format!("[phases.implementation]\nchecks = [ {{ name = \"lint\", command = {command:?}, on_failure = \"block\" }} ]\n")
}

/// A `cargo` that passes, first on the `PATH` of the runs: what the
/// check runs is not what these tests look at.
fn passing_cargo(repo: &TestRepo) -> String {
    write_executable(&repo.home().join("bin/cargo"), "#!/bin/sh\nexit 0\n");
    format!("{}:/usr/bin:/bin", repo.home().join("bin").display())
}

/// A package's manifest with `deps` as its `[dependencies]` and
/// `unsafe_code` at `level`.
fn package(name: &str, deps: &str, level: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}\n[lints.rust]\nunsafe_code = \"{level}\"\n")
}

/// A workspace whose one listed member `crates/a` depends on
/// `libs/b` (which depends on `libs/c` in turn) and on `crates/x`, which
/// the workspace excludes; `unused` is a path dependency of the
/// workspace that no member takes. As `cargo metadata` has it, the
/// members are `a`, `b` and `c`; cargo compiles `x` too, with its
/// `[lints]`, but lints it without clippy; it never builds `unused`.
const WORKSPACE: &str = "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/x\"]\nresolver = \"2\"\n\n[workspace.dependencies]\nunused = { path = \"unused\" }\n";

/// The crates of `WORKSPACE`, by directory, with their dependencies.
const CRATES: [(&str, &str); 5] = [
    (
        "crates/a",
        "b = { path = \"../../libs/b\" }\nx = { path = \"../x\" }\n",
    ),
    ("libs/b", "c = { path = \"../c\" }\n"),
    ("libs/c", ""),
    ("crates/x", ""),
    ("unused", ""),
];

/// `WORKSPACE` on `main` with `files` too; the branch `feature` sets
/// every crate's `unsafe_code` to `allow` when `lints`, and writes
/// `changes`.
fn workspace_branch(lints: bool, files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    let manifests = |level: &str| -> Vec<(String, String)> {
        CRATES
            .iter()
            .map(|(dir, deps)| {
                let name = dir.rsplit('/').next().unwrap();
                (format!("{dir}/Cargo.toml"), package(name, deps, level))
            })
            .collect()
    };
    let lint = gate("cargo clippy --workspace");
    let mut on_main = vec![
        ("phasegate.toml".to_string(), lint),
        ("Cargo.toml".to_string(), WORKSPACE.to_string()),
    ];
    on_main.extend(manifests("forbid"));
    on_main.extend(files.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    let mut on_branch: Vec<(String, String)> = if lints {
        manifests("allow")
    } else {
        Vec::new()
    };
    on_branch.extend(changes.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    branch_of(&as_str(&on_main), &as_str(&on_branch))
}

fn as_str(list: &[(String, String)]) -> Vec<(&str, &str)> {
    list.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

#[test]
fn the_lint_levels_of_every_crate_cargo_builds_warn_path_dependencies_of_members_included() {
    // `libs/c` is a path dependency of a member's path dependency: cargo
    // makes it a member and lints it; `crates/x` it compiles with its
    // `[lints]`; `unused` no member takes.
    let repo = workspace_branch(true, &[], &[]);
    let path = passing_cargo(&repo);
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(
        flagged(&v),
        [
            "crates/a/Cargo.toml",
            "crates/x/Cargo.toml",
            "libs/b/Cargo.toml",
            "libs/c/Cargo.toml"
        ],
        "{v:#}"
    );

    // Run on the work tree as well: the directories of `crates/*` are
    // read there.
    let (code, v) = repo.verdict_with(
        &["--config-from-ref", "main", "--all-files"],
        &[("PATH", &path)],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(flagged(&v).len(), 4, "{v:#}");
}

#[test]
fn a_clippy_toml_warns_only_where_clippy_reads_it_for_a_member() {
    // clippy reads the nearest `clippy.toml` from each member's
    // directory up. `crates/clippy.toml` is `a`'s, `libs/clippy.toml`
    // is `c`'s (`b` has its own); `crates/x` is no member; `tools/` and
    // `shadow/` hold no crate clippy reads them for (`shadow/m` is no
    // member, and has its own file besides).
    let relaxed = "too-many-arguments-threshold = 20\n";
    let repo = workspace_branch(
        false,
        &[
            ("libs/b/clippy.toml", "too-many-arguments-threshold = 5\n"),
            ("shadow/m/clippy.toml", "too-many-arguments-threshold = 5\n"),
        ],
        &[
            ("crates/clippy.toml", relaxed),
            ("libs/clippy.toml", relaxed),
            ("crates/x/clippy.toml", relaxed),
            ("tools/clippy.toml", relaxed),
            ("shadow/clippy.toml", relaxed),
            ("unused/.clippy.toml", relaxed),
        ],
    );
    let path = passing_cargo(&repo);
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        flagged(&v),
        ["crates/clippy.toml", "libs/clippy.toml"],
        "{v:#}"
    );

    // A file nearer the member shadows the one above it: the branch's
    // `libs/clippy.toml` is read for no member, since `c` has its own
    // now, and `main` had neither.
    let repo = workspace_branch(
        false,
        &[("libs/b/clippy.toml", "too-many-arguments-threshold = 5\n")],
        &[
            ("libs/clippy.toml", relaxed),
            ("libs/c/clippy.toml", relaxed),
        ],
    );
    let path = passing_cargo(&repo);
    let (_, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(flagged(&v), ["libs/c/clippy.toml"], "{v:#}");
    assert!(notes_starting(&v, "check `lint`").is_empty(), "{v:#}");
}

#[test]
fn a_file_of_the_ref_a_partial_clone_lacks_is_said_in_a_note_not_taken_for_none() {
    // The branch weakens `ruff.toml`. A clone without blobs has the
    // branch's (checked out) but not `main`'s: that is no `ruff.toml`
    // the branch added.
    let origin = branch_of(
        &[
            ("phasegate.toml", &gate("ruff check .")),
            ("ruff.toml", "[lint]\nselect = [\"E\", \"F\"]\n"),
        ],
        &[("ruff.toml", "[lint]\nselect = []\n")],
    );
    let (clone, path) = partial_clone(&origin, "blobless", "--filter=blob:none");
    let args = [
        "run",
        "--format",
        "json",
        "--config-from-ref",
        "origin/main",
        "--all-files",
    ];
    let v = origin
        .phasegate_in_with(&clone, &args, &[("PATH", &path)])
        .json();
    let said = v.to_string();
    let notes = notes_starting(&v, "check `lint` runs what reads `ruff.toml`, which `origin/main` (--config-from-ref) holds but this clone lacks");
    let fetched = notes.len() == 1
        && notes[0].contains("`git cat-file -e origin/main:ruff.toml` has git fetch it");
    // What the note says to run brings it, and then it is compared.
    origin.git_at(&clone, &["cat-file", "-e", "origin/main:ruff.toml"]);
    let after = origin
        .phasegate_in_with(&clone, &args, &[("PATH", &path)])
        .json();
    let _ = std::fs::remove_dir_all(&clone);
    assert!(!said.contains("is the branch's own"), "{v:#}");
    assert!(flagged(&v).is_empty(), "{v:#}");
    assert!(fetched, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(flagged(&after), ["ruff.toml"], "{after:#}");
    assert!(
        after
            .to_string()
            .contains("whose configuration `ruff.toml` differs from its version in `origin/main`"),
        "{after:#}"
    );
}

#[test]
fn a_cargo_include_that_links_out_of_the_repository_is_said_in_a_note() {
    // `.cargo/ci.toml` leads out of the repository: cargo reads what it
    // leads to, whose settings (a `runner = "true"`) no commit holds.
    let repo = TestRepo::new();
    let outside = repo.home().join("shared-cargo.toml");
    std::fs::write(&outside, "[target.'cfg(all())']\nrunner = \"true\"\n").unwrap();
    repo.config(&gate("cargo test"))
        .write(".cargo/config.toml", "include = [\"ci.toml\"]\n")
        .write("status.txt", "ok\n");
    std::os::unix::fs::symlink(&outside, repo.path().join(".cargo/ci.toml")).unwrap();
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("status.txt", "broken\n");
    repo.commit_all("feature");
    let path = passing_cargo(&repo);
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    let notes = notes_starting(
        &v,
        "check `lint` runs cargo, whose configuration `.cargo/config.toml` includes `.cargo/ci.toml`, a symbolic link out of the repository (to `",
    );
    assert_eq!(notes.len(), 1, "{v:#}");
    assert!(
        notes[0].contains("its settings were not compared with `main` (--config-from-ref)"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("shared-cargo.toml`)"), "{}", notes[0]);
}
