//! With no phasegate.toml, the projects below a repository's root are checked on the embedded defaults.
//!
//! A Rust project in `api/` and a Node project (bun) in `web/`, nothing at
//! the root: the checks `phasegate init` would write run without the file,
//! each in its project's directory and only when the project's files are
//! selected. `cargo` and `bun` (`Tools`) are stood for by stubs on a `PATH` each test
//! controls, which write down where they ran and with what.

use crate::support::{check, write_executable, TestRepo};

/// A directory of the test's own for the stubs, outside the repository.
pub(crate) struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    /// `cargo`, `bun`, `go` and `golangci-lint`, each writing `<directory>
    /// <program> <arguments>` to `calls` and exiting 0, unless `FAIL_IN`
    /// names the directory.
    pub(crate) fn new() -> Tools {
        let tools = Tools {
            dir: tempfile::tempdir().unwrap(),
        };
        let calls = tools.dir.path().join("calls");
        for program in ["cargo", "bun", "go", "golangci-lint"] {
            write_executable(
                &tools.dir.path().join(program),
                &format!(
                    "#!/bin/sh\necho \"$(pwd) {program} $*\" >> '{}'\n[ \"$(basename \"$(pwd)\")\" != \"$FAIL_IN\" ]\n",
                    calls.display()
                ),
            );
        }
        tools
    }

    /// A `PATH` that finds the stubs first, then the system's programs.
    pub(crate) fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.dir.path().display())
    }

    /// The calls so far, each as `<directory relative to repo> <program>
    /// <arguments>`, in name order (checks run in parallel); forgotten
    /// after.
    pub(crate) fn take(&self, repo: &TestRepo) -> Vec<String> {
        let path = self.dir.path().join("calls");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let root = repo.path().to_string_lossy().into_owned();
        let mut calls: Vec<String> = text
            .lines()
            .map(|line| {
                line.strip_prefix(&root)
                    .unwrap_or(line)
                    .trim_start_matches('/')
                    .to_string()
            })
            .collect();
        calls.sort();
        calls
    }
}

/// A repository with `api/` (Rust) and `web/` (Node, bun, a test script)
/// committed, nothing at the root but a README, and installed packages
/// that are no project of the repository.
fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("README.md", "# two projects\n")
        .write(
            "api/Cargo.toml",
            "[package]\nname = \"api\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write("api/src/lib.rs", "pub fn api() {}\n")
        .write(
            "web/package.json",
            r#"{"name": "web", "scripts": {"test": "bun test"}}"#,
        )
        .write("web/bun.lock", "{}\n")
        .write("web/index.ts", "export const x = 1;\n")
        .write(".gitignore", "node_modules/\n")
        .commit_all("two projects below the root");
    repo.write(
        "web/node_modules/left-pad/package.json",
        r#"{"name": "left-pad", "scripts": {"test": "node test.js"}}"#,
    );
    repo
}

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

const EVERY_CALL: [&str; 5] = [
    "api cargo build",
    "api cargo check",
    "api cargo clippy",
    "api cargo test",
    "web bun run test",
];

#[test]
fn without_a_configuration_each_project_is_checked_in_its_directory() {
    let tools = Tools::new();
    let repo = monorepo();
    let path = tools.path();
    let (code, v) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
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
    assert_eq!(tools.take(&repo), EVERY_CALL);
    // Each check is of its kind, as at the root: lint findings are
    // filtered to the lines a change added, a test's are not.
    assert_eq!(check(&v, "api-lint")["filter"], "added", "{v:#}");
    assert_eq!(check(&v, "api-tests")["filter"], "nofilter", "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(
            "the checks are phasegate's defaults for rust in `api/` and node in `web/`, each project's checks run in its directory when a selected file is in it; `phasegate init` writes them into one"
        ),
        "{notes}"
    );

    // A failing project fails the gate: no silent pass.
    let (code, v) = repo.verdict_with(&["--all-files"], &[("PATH", &path), ("FAIL_IN", "web")]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "web-tests")["status"], "failed", "{v:#}");
    assert_eq!(check(&v, "api-tests")["status"], "passed", "{v:#}");
}

#[test]
fn a_staged_change_in_one_project_runs_only_that_projects_checks() {
    let tools = Tools::new();
    let repo = monorepo();
    let path = tools.path();
    repo.stage("web/index.ts", "export const x = 2;\n");
    let (code, v) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(tools.take(&repo), ["web bun run test"], "{v:#}");
    assert_eq!(check(&v, "web-tests")["status"], "passed", "{v:#}");
    assert_eq!(check(&v, "api-tests")["status"], "skipped", "{v:#}");
    assert_eq!(
        check(&v, "api-tests")["skip_kind"],
        "no_matching_files",
        "{v:#}"
    );

    // The same through the pre-commit hook: a failing test in `web/`
    // stops the commit.
    let installed = repo.phasegate(&["install"]);
    assert_eq!(installed.code, 0, "{installed:?}");
    let commit = repo
        .command("git")
        .args(["commit", "-qm", "web"])
        .env("PATH", &path)
        .env("PHASEGATE_BIN", crate::support::BIN)
        .env("FAIL_IN", "web")
        .output()
        .unwrap();
    assert!(!commit.status.success(), "{commit:?}");
    assert_eq!(tools.take(&repo), ["web bun run test"]);

    // A change to a file of no project runs no project's checks.
    repo.git(&["reset", "-q"]);
    repo.stage("README.md", "# two projects, documented\n");
    let (code, v) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert!(tools.take(&repo).is_empty(), "{v:#}");
    assert!(
        statuses(&v).iter().all(|s| s.ends_with(" skipped")),
        "{v:#}"
    );
}

#[test]
fn check_picks_one_projects_check() {
    let tools = Tools::new();
    let repo = monorepo();
    let path = tools.path();
    let (code, v) = repo.verdict_with(&["--all-files", "--check", "web-tests"], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(statuses(&v), ["web-tests passed"], "{v:#}");
    assert_eq!(tools.take(&repo), ["web bun run test"]);

    let (code, v) = repo.verdict_with(&["--all-files", "--check", "api-tests"], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(statuses(&v), ["api-tests passed"], "{v:#}");
    assert_eq!(tools.take(&repo), ["api cargo test"]);
}

#[test]
fn init_writes_down_the_checks_the_defaults_ran() {
    let tools = Tools::new();
    let repo = monorepo();
    let path = tools.path();
    // Each phase that runs checks, on the defaults and then on the file.
    let run = |phase: &str| {
        let (code, v) = repo.verdict_with(&["--all-files", "--phase", phase], &[("PATH", &path)]);
        assert_eq!(code, 0, "{v:#}");
        (v, tools.take(&repo))
    };
    let (defaults, ran_by_default) = run("implementation");
    let (defaults_qa, _) = run("qa");
    assert_eq!(
        statuses(&defaults_qa),
        ["api-tests passed", "web-tests passed"]
    );

    let init = repo.phasegate(&["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains(
            "(no project at the root; checks for rust in `api/` and node in `web/`, each run in its directory when its files change)"
        ),
        "{}",
        init.stdout
    );
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains(
            r#"  { name = "web-tests", command = "bun run test", cwd = "web", files = ["web/**"], origin = "test", on_failure = "block" },"#
        ),
        "{text}"
    );
    assert!(!text.contains("node_modules"), "{text}");

    let (written, ran_from_file) = run("implementation");
    assert!(
        !written["notes"].to_string().contains("defaults"),
        "{written:#}"
    );
    assert_eq!(statuses(&written), statuses(&defaults));
    assert_eq!(ran_from_file, ran_by_default);
    for c in defaults["checks"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        assert_eq!(check(&written, name)["argv"], c["argv"], "{name}");
        assert_eq!(check(&written, name)["filter"], c["filter"], "{name}");
    }
    let (written_qa, _) = run("qa");
    assert_eq!(statuses(&written_qa), statuses(&defaults_qa));
}

#[test]
fn a_project_at_the_root_keeps_its_checks_at_the_root() {
    let tools = Tools::new();
    let repo = monorepo();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"root\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .commit_all("a project at the root");
    let path = tools.path();
    let (code, v) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
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
        ]
    );
    assert!(
        v["notes"]
            .to_string()
            .contains("phasegate's defaults for rust;"),
        "{v:#}"
    );
}

#[test]
fn projects_git_does_not_track_are_not_checked() {
    // A project only in the work tree (not added yet) and one in an
    // ignored directory: a commit holds neither, so nothing checks them.
    let tools = Tools::new();
    let repo = monorepo();
    repo.write(
        "tools/package.json",
        r#"{"name": "tools", "scripts": {"test": "bun test"}}"#,
    )
    .write("tools/bun.lock", "{}\n");
    let path = tools.path();
    let (code, v) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(tools.take(&repo), EVERY_CALL, "{v:#}");
    assert_eq!(statuses(&v).len(), 5, "no check of `tools/`: {v:#}");
    // Staged, it is checked with the rest.
    repo.git(&["add", "tools"]);
    let (code, v) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(tools.take(&repo), ["tools bun run test"], "{v:#}");
}

#[test]
fn a_project_beyond_hundreds_of_directories_is_still_found() {
    // The directories git tracks are all looked at, however many there
    // are: a project that sorts after 600 others is checked too.
    let tools = Tools::new();
    let repo = monorepo();
    for n in 0..600 {
        repo.write(&format!("docs{n:03}/index.md"), "# page\n");
    }
    repo.write(
        "zz/package.json",
        r#"{"name": "zz", "scripts": {"test": "bun test"}}"#,
    )
    .write("zz/bun.lock", "{}\n")
    .commit_all("many directories");
    let path = tools.path();
    let (code, v) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "zz-tests")["status"], "passed", "{v:#}");
    assert!(tools.take(&repo).contains(&"zz bun run test".to_string()));
}
