//! Where range runs and --config-from-ref look.

use crate::ci_cargo::FROM_MAIN;
use crate::ci_queue::notes_starting;
use crate::ci_refs::branch_of;
use crate::defaults_mono::Tools;
use crate::policy_history::names;
use crate::support::{check, write_executable, TestRepo};

/// The files of the findings that a check ran something the branch
/// changed, sorted.
pub(crate) fn flagged(v: &serde_json::Value) -> Vec<String> {
    let mut files = crate::ci_nested::flagged(v);
    files.sort();
    files
}

const API_MANIFEST: &str = "[package]\nname = \"api\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

#[test]
fn a_range_run_takes_the_projects_below_the_root_from_its_end_commit_not_the_index() {
    let tools = Tools::new();
    let path = tools.path();
    // A `phasegate.toml` with no phases, and none at all: the defaults'
    // phases check the projects below the root either way.
    for config in [None, Some("[gate]\nprofile = \"auto\"\n")] {
        let repo = TestRepo::new();
        if let Some(config) = config {
            repo.config(config);
        }
        repo.write("README.md", "# projects\n")
            .write(
                "web/package.json",
                r#"{"name": "web", "scripts": {"test": "bun test"}}"#,
            )
            .write("web/bun.lock", "{}\n")
            .write("web/index.ts", "export const x = 1;\n")
            .commit_all("web");
        // `adds` brings a Rust project in `api/`; `drops` takes `web/` out.
        repo.git(&["checkout", "-qb", "adds"]);
        repo.write("api/Cargo.toml", API_MANIFEST)
            .write("api/src/lib.rs", "pub fn api() {}\n")
            .commit_all("api");
        repo.git(&["checkout", "-q", "main"]);
        repo.git(&["checkout", "-qb", "drops"]);
        repo.write("api/Cargo.toml", API_MANIFEST)
            .write("api/src/lib.rs", "pub fn api() {}\n");
        repo.git(&["rm", "-rq", "web"]);
        repo.commit_all("api instead of web");
        // The index is `main`'s: `web/` and no `api/`.
        repo.git(&["checkout", "-q", "main"]);

        let (code, v) = repo.verdict_with(
            &["--from-ref", "main", "--to-ref", "adds"],
            &[("PATH", &path)],
        );
        assert_eq!(code, 0, "{v:#}");
        let checks = names(&v);
        for name in ["api-tests", "api-lint", "api-build", "api-typecheck"] {
            assert!(checks.contains(&name.to_string()), "{config:?}: {v:#}");
        }
        assert_eq!(check(&v, "api-tests")["status"], "passed", "{v:#}");

        let (code, v) = repo.verdict_with(
            &["--from-ref", "main", "--to-ref", "drops"],
            &[("PATH", &path)],
        );
        assert_eq!(code, 0, "{v:#}");
        let checks = names(&v);
        assert!(
            checks.iter().all(|name| !name.starts_with("web-")),
            "{config:?}: the end commit has no `web/`: {v:#}"
        );
        assert!(checks.contains(&"api-tests".to_string()), "{v:#}");
        tools.take(&repo);
    }
}

/// A gate whose one check `lint` runs `command` (its TOML value, written
/// as is).
fn gate(command: &str) -> String {
    format!("[phases.implementation]\nchecks = [ {{ name = \"lint\", {command}, on_failure = \"block\" }} ]\n")
}

/// `main` with `sub/check.sh` and `other/check.sh` (both pass) gated by
/// `command`; the branch `feature` rewrites `sub/check.sh`.
fn scripts_branch(command: &str) -> TestRepo {
    let repo = branch_of(
        &[
            ("phasegate.toml", &gate(command)),
            ("sub/check.sh", "#!/bin/sh\nexit 0\n"),
            ("other/check.sh", "#!/bin/sh\nexit 0\n"),
        ],
        &[],
    );
    write_executable(
        &repo.path().join("sub/check.sh"),
        "#!/bin/sh\n# the branch's own\nexit 0\n",
    );
    write_executable(&repo.path().join("other/check.sh"), "#!/bin/sh\nexit 0\n");
    repo.commit_all("feature's check");
    repo
}

#[test]
fn a_cd_back_or_in_a_substitution_is_followed_to_the_script_the_branch_changed() {
    let commands = [
        // `cd -` goes back to `sub`.
        r#"command = "cd sub && cd ../other && cd - && ./check.sh", shell = true"#,
        // What a backquote or `$(...)` runs does not move the shell.
        r#"command = "cd sub; D=`cd ../other && pwd`; ./check.sh", shell = true"#,
        r#"command = "cd sub; D=$(cd ../other && pwd); ./check.sh", shell = true"#,
        // `sh -c` runs its text as a shell does.
        r#"command = "sh -c 'cd sub && ./check.sh'""#,
    ];
    let found: Vec<(&str, Vec<String>, i32)> = commands
        .iter()
        .map(|command| {
            let repo = scripts_branch(command);
            let (code, v) = repo.verdict(&FROM_MAIN);
            assert!(
                notes_starting(&v, "check `lint` runs `./check.sh` after").is_empty(),
                "{v:#}"
            );
            (*command, flagged(&v), code)
        })
        .collect();
    let expected: Vec<(&str, Vec<String>, i32)> = commands
        .iter()
        .map(|command| (*command, vec!["sub/check.sh".to_string()], 0))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn a_cd_phasegate_cannot_follow_is_named_in_a_note_not_compared_from_the_wrong_directory() {
    // The command goes where `$DIR` says; `other/check.sh`, which is not
    // what runs, is the same as `main`'s, so a comparison from `other`
    // (where the shell was) would pass in silence.
    let repo = scripts_branch(
        r#"command = "cd other\nDIR=../sub\ncd \"$DIR\" && ./check.sh", shell = true"#,
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    let notes = notes_starting(
        &v,
        "check `lint` runs `./check.sh` after `cd $DIR` (line 3 of its command)",
    );
    assert_eq!(notes.len(), 1, "{v:#}");
    assert!(
        notes[0].contains("a directory phasegate cannot tell: what it runs there was not compared with its version in `main` (--config-from-ref)"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("(`cd sub`)"), "{}", notes[0]);

    // In a script the check runs, the note names the script and its line.
    let repo = branch_of(
        &[
            ("phasegate.toml", &gate(r#"command = "sh ci/run.sh""#)),
            (
                "ci/run.sh",
                "set -e\necho start\ncd \"$(dirname \"$0\")/..\"\n./sub/check.sh\n",
            ),
            ("sub/check.sh", "#!/bin/sh\nexit 0\n"),
        ],
        &[],
    );
    write_executable(&repo.path().join("sub/check.sh"), "#!/bin/sh\nexit 0\n");
    repo.commit_all("executable");
    let (_, v) = repo.verdict(&FROM_MAIN);
    let notes = notes_starting(&v, "check `lint` runs `./sub/check.sh` after `cd $(…)/..`");
    assert_eq!(notes.len(), 1, "{v:#}");
    assert!(notes[0].contains("(`ci/run.sh`, line 3)"), "{}", notes[0]);
}

#[test]
fn nested_tool_configuration_that_cannot_be_compared_in_a_partial_clone_is_said() {
    // `main`'s `app/pkg/ruff.toml` differs from the branch's: in a clone
    // that left out the trees below the root, the diff that finds it
    // cannot read `main`'s `app/`.
    let origin = branch_of(
        &[
            ("phasegate.toml", &gate(r#"command = "ruff check .""#)),
            ("app/pkg/ruff.toml", "line-length = 80\n"),
        ],
        &[("app/pkg/ruff.toml", "line-length = 200\n")],
    );
    let (clone, path) = partial_clone(&origin, "partial", "--filter=tree:1");
    let run = origin.phasegate_in_with(
        &clone,
        &[
            "run",
            "--format",
            "json",
            "--config-from-ref",
            "origin/main",
            "--all-files",
        ],
        &[("PATH", &path)],
    );
    let v = run.json();
    let _ = std::fs::remove_dir_all(&clone);
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    let notes = notes_starting(&v, "check `lint` runs `ruff`, whose configuration files below the root could not be compared with their versions in `origin/main` (--config-from-ref): failed to read the files that differ from the gate's commit from git: object not found");
    assert_eq!(notes.len(), 1, "{v:#}");
    assert!(
        notes[0].contains("`git ls-tree -r origin/main` has git fetch the trees it lacks"),
        "{}",
        notes[0]
    );
}

/// A clone of `origin`'s `feature` branch, `name`, that the partial
/// clone `filter` left objects out of, and a `PATH` whose `ruff` passes:
/// the check runs.
pub(crate) fn partial_clone(
    origin: &TestRepo,
    name: &str,
    filter: &str,
) -> (std::path::PathBuf, String) {
    origin.git(&["config", "uploadpack.allowFilter", "true"]);
    let clone = origin.shallow_clone("feature", name, &[filter, "--no-single-branch"]);
    write_executable(&origin.home().join("bin/ruff"), "#!/bin/sh\nexit 0\n");
    let path = format!("{}:/usr/bin:/bin", origin.home().join("bin").display());
    (clone, path)
}

fn as_refs(list: &[(String, String)]) -> Vec<(&str, &str)> {
    list.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

/// A package's manifest, with `unsafe_code` at `level`.
fn package(name: &str, level: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lints.rust]\nunsafe_code = \"{level}\"\n")
}

#[test]
fn only_the_lint_levels_of_crates_cargo_builds_where_the_check_runs_warn() {
    let tools = Tools::new();
    let path = tools.path();
    // A workspace of `crates/*` but `crates/old`; `tools/gen` is in no
    // member list; `helper` is a path dependency of the workspace, which
    // `crates/a` takes from it.
    let workspace = "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/old\"]\nresolver = \"2\"\n\n[workspace.dependencies]\nhelper = { path = \"helper\" }\n";
    let crates = ["crates/a", "crates/old", "tools/gen", "helper"];
    let mut files: Vec<(String, String)> = vec![
        (
            "phasegate.toml".into(),
            gate(r#"command = "cargo clippy --workspace""#),
        ),
        ("Cargo.toml".into(), workspace.into()),
    ];
    let manifest = |dir: &str, level: &str| {
        let name = dir.rsplit('/').next().unwrap();
        let uses = if dir == "crates/a" {
            "\n[dependencies]\nhelper = { workspace = true }\n"
        } else {
            ""
        };
        (
            format!("{dir}/Cargo.toml"),
            format!("{}{uses}", package(name, level)),
        )
    };
    files.extend(crates.iter().map(|dir| manifest(dir, "forbid")));
    let changes: Vec<(String, String)> = crates.iter().map(|dir| manifest(dir, "allow")).collect();
    let repo = branch_of(&as_refs(&files), &as_refs(&changes));
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        flagged(&v),
        ["crates/a/Cargo.toml", "helper/Cargo.toml"],
        "{v:#}"
    );

    // With no workspace, cargo builds the package where it runs and its
    // path dependencies: a fuzz crate beside it is none of them.
    let root = format!(
        "{}\n[dependencies]\nhelper = {{ path = \"helper\" }}\n",
        package("root", "forbid").replace("[lints.rust]\nunsafe_code = \"forbid\"\n", "")
    );
    let repo = branch_of(
        &[
            ("phasegate.toml", &gate(r#"command = "cargo clippy""#)),
            ("Cargo.toml", &root),
            ("helper/Cargo.toml", &package("helper", "forbid")),
            ("fuzz/Cargo.toml", &package("fuzz", "forbid")),
        ],
        &[
            ("helper/Cargo.toml", &package("helper", "allow")),
            ("fuzz/Cargo.toml", &package("fuzz", "allow")),
        ],
    );
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(flagged(&v), ["helper/Cargo.toml"], "{v:#}");
    tools.take(&repo);
}
