//! Integration tests: first run.
//!
//! A new user's repository with no `phasegate.toml`: the checks phasegate
//! picks for the project it finds, and the file `phasegate init` writes.
//! Tools that are not installed where the suite runs (npx's behaviour
//! without a terminal, bun, go) are stood for by stubs on a `PATH` each
//! test controls; each stub says what it stands for.

use crate::support::{check, TestRepo};

/// A directory of the test's own for stub programs, outside the
/// repository so no run selects them.
struct Stubs {
    dir: tempfile::TempDir,
}

impl Stubs {
    fn new() -> Stubs {
        Stubs {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// An executable shell script `name` with `body` after its `#!` line.
    fn add(&self, name: &str, body: &str) -> &Self {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    /// A `PATH` that finds the stubs first, then the system's programs.
    fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.dir.path().display())
    }

    /// What the stubs wrote to `name` in their directory.
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }
}

#[test]
fn the_npm_typecheck_never_lets_npx_install_the_unrelated_tsc_package() {
    // The stub stands for npm 11's npx where `typescript` is not installed
    // and nothing can be asked (no terminal, as under phasegate or in CI):
    // npm documents that it then installs what it was asked to run, which
    // for `tsc` is the unrelated package of that name; told not to
    // install, it cancels with the words npm 11.19 prints.
    let stubs = Stubs::new();
    stubs.add(
        "npx",
        r#"for arg in "$@"; do
  case "$arg" in
    --no-install|--no)
      echo 'npm error npx canceled due to missing packages and no YES option: ["tsc@2.0.4"]'
      exit 1;;
  esac
done
echo '                This is not the tsc command you are looking for'
exit 1
"#,
    );
    let repo = TestRepo::new();
    repo.write("package.json", r#"{"name": "web", "version": "1.0.0"}"#)
        .write("package-lock.json", "{}")
        .write("tsconfig.json", "{}")
        .write("index.ts", "export const x = 1;\n")
        .commit_all("a typescript project, typescript not installed");
    let path = stubs.path();
    let (code, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    let typecheck = check(&verdict, "typecheck");
    assert_eq!(typecheck["argv"][0][0], "npx", "{verdict:#}");
    assert_eq!(typecheck["status"], "missing", "{verdict:#}");
    assert_eq!(verdict["status"], "incomplete", "{verdict:#}");
    assert_eq!(code, 3);
}

/// A repository whose projects are only in directories: a Go service in
/// `backend/` and a Node app two levels down in `web/app/`, with installed
/// packages at the root that are no project of the repository.
fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("README.md", "# two projects\n")
        .write("backend/go.mod", "module example.com/backend\n\ngo 1.22\n")
        .write("backend/main.go", "package main\n\nfunc main() {}\n")
        .write(
            "web/app/package.json",
            r#"{"name": "app", "scripts": {"test": "vitest run"}}"#,
        )
        .write("web/app/package-lock.json", "{}")
        .write(".gitignore", "node_modules/\n")
        .commit_all("projects below the root");
    repo.write(
        "node_modules/left-pad/package.json",
        r#"{"name": "left-pad", "scripts": {"test": "node test.js"}}"#,
    );
    repo
}

#[test]
fn projects_only_below_the_root_are_named_and_init_checks_them() {
    let repo = monorepo();
    // Whatever go and npm find here (if they are installed at all), the
    // defaults run their checks, and none of what is installed.
    let (_, verdict) = repo.verdict(&["--all-files", "--profile", "fast"]);
    let names: Vec<&str> = verdict["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "backend-tests",
            "backend-lint",
            "backend-build",
            "backend-typecheck",
            "web-app-tests"
        ],
        "{verdict:#}"
    );
    let notes = verdict["notes"].to_string();
    assert!(
        notes.contains("go in `backend/` and node in `web/app/`"),
        "{notes}"
    );
    assert!(!notes.contains("node_modules"), "{notes}");

    let init = repo.phasegate(&["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains(
            "(no project at the root; checks for go in `backend/` and node in `web/app/`, each run in its directory when its files change)"
        ),
        "{}",
        init.stdout
    );
    let text = repo.read("phasegate.toml");
    for listed in [
        r#"  { name = "backend-tests", command = "go test ./...", cwd = "backend", files = ["backend/**"], origin = "test", on_failure = "block" },"#,
        r#"  { name = "web-app-tests", command = "npm test", cwd = "web/app", files = ["web/app/**"], origin = "test", on_failure = "block" },"#,
    ] {
        assert!(text.contains(listed), "{text}");
    }
    assert!(!text.contains("node_modules"), "{text}");
}

#[test]
fn a_check_init_writes_for_a_project_below_the_root_runs_in_its_project() {
    // The stub stands for go: it records the directory it ran in.
    let stubs = Stubs::new();
    let record = stubs.dir.path().join("go-cwd");
    stubs.add("go", &format!("pwd > '{}'\n", record.display()));
    let repo = monorepo();
    // Written from the project's own directory: the file goes to the root.
    let init = repo.phasegate_in(&repo.path().join("backend"), &["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(!repo.exists("backend/phasegate.toml"));
    let path = stubs.path();
    let (code, verdict) = repo.verdict_with(
        &["--all-files", "--check", "backend-tests"],
        &[("PATH", &path)],
    );
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(check(&verdict, "backend-tests")["status"], "passed");
    assert_eq!(
        stubs.read("go-cwd").trim(),
        repo.path().join("backend").to_string_lossy()
    );
}
