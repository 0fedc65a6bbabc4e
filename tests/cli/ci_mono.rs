//! Under --config-from-ref with no phasegate.toml at the ref, the projects below the ref's root are checked.
//!
//! The target branch `main` holds no `phasegate.toml` and no project at its
//! root, only projects in directories below it; the branch `feature` is
//! checked out and judged by `main`'s gate, as in the README's CI examples.
//! `cargo`, `bun`, `go` and `golangci-lint` are stood for by the stubs of
//! `defaults_mono::Tools`, which write down where they ran and with what.

use crate::ci_cargo::FROM_MAIN;
use crate::defaults_mono::Tools;
use crate::support::{check, TestRepo};

const CARGO_TOML: &str = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const BUN_PACKAGE: &str = r#"{"name": "web", "scripts": {"test": "bun test"}}"#;

/// `main` holding `files` and a README at the root, then a branch
/// `feature` (checked out) that writes `changes` over them (an empty text
/// deletes the file).
fn branch_of(files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("README.md", "# projects\n");
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("target");
    repo.git(&["checkout", "-qb", "feature"]);
    for (path, text) in changes {
        if text.is_empty() {
            repo.git(&["rm", "-q", path]);
        } else {
            repo.write(path, text);
        }
    }
    repo.commit_all("feature");
    repo
}

/// `api/` (Rust) and `web/` (Node, bun, a test script), nothing at the root.
const TWO_PROJECTS: [(&str, &str); 5] = [
    ("api/Cargo.toml", CARGO_TOML),
    ("api/src/lib.rs", "pub fn api() {}\n"),
    ("web/package.json", BUN_PACKAGE),
    ("web/bun.lock", "{}\n"),
    ("web/index.ts", "export const x = 1;\n"),
];

/// The checks of a verdict as `name status`, in its order.
fn statuses(v: &serde_json::Value) -> Vec<String> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["name"].as_str().unwrap(),
                c["status"].as_str().unwrap()
            )
        })
        .collect()
}

/// The note that begins with `start`, whole.
fn note_starting(v: &serde_json::Value, start: &str) -> String {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with(start))
        .unwrap_or_else(|| panic!("no note begins with {start:?}: {v:#}"))
        .to_string()
}

const MAIN_HAS_NO_FILE: &str = "`main` has no `phasegate.toml` (--config-from-ref): the checks are phasegate's defaults for the projects below its root that `main` holds, ";

#[test]
fn the_refs_projects_below_its_root_are_checked_each_in_its_directory() {
    let tools = Tools::new();
    let path = tools.path();
    let repo = branch_of(&TWO_PROJECTS, &[("web/index.ts", "export const x = 2;\n")]);

    // What the branch changed: `web/` only, so only its checks run.
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        statuses(&v),
        [
            "api-tests skipped",
            "api-lint skipped",
            "api-build skipped",
            "api-typecheck skipped",
            "web-tests passed",
        ],
        "{v:#}"
    );
    assert_eq!(
        check(&v, "api-tests")["skip_kind"],
        "no_matching_files",
        "{v:#}"
    );
    assert_eq!(tools.take(&repo), ["web bun run test"], "{v:#}");
    let note = note_starting(&v, MAIN_HAS_NO_FILE);
    assert!(
        note.contains("rust in `api/` and node in `web/`, each project's checks run in its directory when a selected file is in it"),
        "{note}"
    );
    assert!(
        note.contains("add a `phasegate.toml` to `main` to choose the checks"),
        "{note}"
    );
    // A reader of the summary alone (a CI page) sees it too.
    assert!(
        v["summary"].as_array().unwrap().iter().any(|s| s == &note),
        "{v:#}"
    );

    // Every file: every project's checks, each in its directory.
    let all = ["--config-from-ref", "main", "--all-files"];
    let (code, v) = repo.verdict_with(&all, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        tools.take(&repo),
        [
            "api cargo build",
            "api cargo check",
            "api cargo clippy",
            "api cargo test",
            "web bun run test",
        ],
        "{v:#}"
    );

    // A failing project fails the gate: no silent pass.
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path), ("FAIL_IN", "web")]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "web-tests")["status"], "failed", "{v:#}");
}

#[test]
fn a_project_the_branch_adds_or_removes_does_not_change_the_targets_checks() {
    let tools = Tools::new();
    let path = tools.path();
    // The branch adds a Go project in `cli/`, takes `web/`'s
    // `package.json` away and changes a file in each.
    let repo = branch_of(
        &TWO_PROJECTS,
        &[
            ("cli/go.mod", "module example.com/cli\n\ngo 1.22\n"),
            ("cli/main.go", "package main\n\nfunc main() {}\n"),
            ("web/package.json", ""),
            ("web/index.ts", "export const x = 2;\n"),
            ("api/src/lib.rs", "pub fn api() -> u8 { 1 }\n"),
        ],
    );
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        statuses(&v),
        [
            "api-tests passed",
            "api-lint passed",
            "api-build passed",
            "api-typecheck passed",
            "web-tests passed",
        ],
        "{v:#}"
    );
    assert_eq!(
        tools.take(&repo),
        [
            "api cargo build",
            "api cargo check",
            "api cargo clippy",
            "api cargo test",
            "web bun run test",
        ],
        "{v:#}"
    );
    let note = note_starting(&v, MAIN_HAS_NO_FILE);
    assert!(
        note.contains("rust in `api/` and node in `web/`,"),
        "{note}"
    );
    assert!(
        note.contains("a project the branch adds is not checked until `main` holds it"),
        "{note}"
    );
    assert!(!note.contains("cli"), "{note}");

    // Without --config-from-ref the branch's own projects decide: `cli/`
    // is checked, `web/` no longer is.
    let range = ["--from-ref", "main", "--to-ref", "HEAD"];
    let (code, v) = repo.verdict_with(&range, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    let names: Vec<String> = statuses(&v);
    assert!(names.contains(&"cli-tests passed".to_string()), "{v:#}");
    assert!(!names.iter().any(|n| n.starts_with("web-")), "{v:#}");
}

#[test]
fn the_refs_projects_are_found_two_deep_and_never_in_what_is_vendored_or_hidden() {
    let tools = Tools::new();
    let path = tools.path();
    let repo = branch_of(
        &[
            ("packages/web/package.json", BUN_PACKAGE),
            ("packages/web/bun.lock", "{}\n"),
            // Three deep: below the search.
            ("a/b/c/Cargo.toml", CARGO_TOML),
            // Committed, but no project of the repository's own.
            ("vendor/x/Cargo.toml", CARGO_TOML),
            ("node_modules/left-pad/package.json", BUN_PACKAGE),
            (".github/actions/x/package.json", BUN_PACKAGE),
            // Nothing to run: no project.
            ("packages/types/package.json", r#"{"name": "types"}"#),
        ],
        &[("notes.md", "# notes\n")],
    );
    let all = ["--config-from-ref", "main", "--all-files"];
    let (code, v) = repo.verdict_with(&all, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(statuses(&v), ["packages-web-tests passed"], "{v:#}");
    assert_eq!(tools.take(&repo), ["packages/web bun run test"], "{v:#}");
    assert!(
        note_starting(&v, MAIN_HAS_NO_FILE).contains("node in `packages/web/`"),
        "{v:#}"
    );
}

#[test]
fn a_ref_with_a_project_at_its_root_keeps_its_root_checks() {
    let tools = Tools::new();
    let path = tools.path();
    // `main` is a Rust project at its root with a Node project below it;
    // the branch moves the Rust project into `api/`.
    let mut files = TWO_PROJECTS.to_vec();
    files.push(("Cargo.toml", CARGO_TOML));
    let repo = branch_of(
        &files,
        &[
            ("Cargo.toml", ""),
            ("web/index.ts", "export const x = 2;\n"),
        ],
    );
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        statuses(&v),
        [
            "tests passed",
            "lint passed",
            "build passed",
            "typecheck passed"
        ],
        "{v:#}"
    );
    assert_eq!(
        tools.take(&repo),
        [
            " cargo build",
            " cargo check",
            " cargo clippy",
            " cargo test"
        ],
        "{v:#}"
    );
    let note = note_starting(
        &v,
        "`main` has no `phasegate.toml` (--config-from-ref): the checks are phasegate's defaults for rust, the language of the files `main` holds;",
    );
    assert!(!note.contains("below"), "{note}");
}
