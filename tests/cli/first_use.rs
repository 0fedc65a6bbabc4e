//! A new user's first runs on real projects.
//!
//! What `phasegate init` writes and says for the project it finds, and how
//! the human report reads on a first failing run. Tools a test needs are
//! stood for by scripts on a `PATH` the test controls, so what is
//! installed where the suite runs changes nothing.

use crate::support::TestRepo;

/// A directory of executable scripts, outside the repository, and a
/// `PATH` that finds them first and then only the system's programs.
pub(crate) struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    pub(crate) fn new() -> Tools {
        Tools {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// An executable shell script `name` with `body` after its `#!` line.
    pub(crate) fn add(&self, name: &str, body: &str) -> &Self {
        crate::support::write_executable(
            &self.dir.path().join(name),
            &format!("#!/bin/sh\n{body}"),
        );
        self
    }

    /// A tool `name` that prints `output` as it is and exits with `code`.
    pub(crate) fn prints(&self, name: &str, output: &str, code: i32) -> &Self {
        self.add(name, &format!("cat <<'EOF'\n{output}EOF\nexit {code}\n"))
    }

    /// A file beside the tools, for them to print; its path.
    pub(crate) fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// Where a tool may leave a mark of having run, `name` beside them.
    pub(crate) fn beside(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.dir.path().display())
    }
}

/// A Python project, as `pyproject.toml` makes one, with a test file.
pub(crate) fn python_project(repo: &TestRepo, dir: &str) {
    repo.write(
        &format!("{dir}pyproject.toml"),
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
    )
    .write(
        &format!("{dir}tests/test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    );
}

#[test]
fn init_with_no_known_language_offers_checks_that_run_once_uncommented() {
    let repo = TestRepo::new();
    repo.write("README.md", "# notes\n")
        .write("run.sh", "echo hi\n")
        .commit_all("no project phasegate knows");
    let init = repo.phasegate(&["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    // Said plainly: the file checks nothing until it is edited.
    assert!(
        init.stdout
            .contains("no check runs yet: write the project's commands under [commands]"),
        "{init:?}"
    );
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains("# Written by `phasegate init` for a project of no known language.\n"),
        "{text}"
    );
    // What the file says to do: write the command, uncomment its check.
    // A command no phase lists would never run, and the run would pass.
    let edited = text
        .replace("# tests = \"make test\"", "tests = \"false\"")
        .replace(
            "  # { name = \"tests\", on_failure = \"block\" },",
            "  { name = \"tests\", on_failure = \"block\" },",
        );
    repo.write("phasegate.toml", &edited);
    repo.git(&["add", "-A"]);
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(
        crate::support::check(&verdict, "tests")["status"],
        "failed",
        "{edited}\n{verdict:#}"
    );
    assert_eq!(code, 1, "{verdict:#}");
}

#[test]
fn init_names_a_monorepo_in_a_sentence_that_reads() {
    let repo = TestRepo::new();
    python_project(&repo, "api/");
    repo.commit_all("a project below the root");
    let init = repo.phasegate(&["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains(
            "# Written by `phasegate init` for a repository with no project at its root (a monorepo).\n"
        ),
        "{text}"
    );
}

#[test]
fn init_warns_of_a_tool_its_checks_run_that_is_not_installed() {
    // pytest and ruff are installed, pyright is not: every run would stop
    // as incomplete on the typecheck, which init says before the first
    // commit does.
    let tools = Tools::new();
    tools.add("pytest", "exit 0\n").add("ruff", "exit 0\n");
    let path = tools.path();
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.commit_all("a python project");
    let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stderr.contains(
            "warning: `pyright` is not installed (not found on PATH), and check `typecheck` runs it: until it is, every run stops there as incomplete (exit 3)"
        ),
        "{init:?}"
    );
    assert!(
        init.stderr
            .contains("help: install it in a virtual environment of the project's"),
        "{init:?}"
    );
    assert!(!init.stderr.contains("`pytest`"), "{init:?}");
    assert!(!init.stderr.contains("`ruff`"), "{init:?}");

    // Below the root, the check is named after its directory.
    let mono = TestRepo::new();
    python_project(&mono, "api/");
    mono.commit_all("a python project below the root");
    let init = mono.phasegate_with(&["init"], &[("PATH", &path)]);
    assert!(
        init.stderr.contains(
            "`pyright` is not installed (not found on PATH), and check `api-typecheck` runs it"
        ),
        "{init:?}"
    );
}

/// What `pytest` 9.2.0 (Python 3.11.7) printed, recorded, when its test
/// module imported a module that does not exist (the repository's path
/// as `$PWD`).
pub(crate) const PYTEST_COLLECTION_ERROR: &str = r"============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0
rootdir: $PWD
configfile: pyproject.toml
collected 0 items / 1 error

==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_calc.py ______________________
ImportError while importing test module '$PWD/tests/test_calc.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
tests/test_calc.py:1: in <module>
    from calc import add
E   ModuleNotFoundError: No module named 'calc'
=========================== short test summary info ============================
ERROR tests/test_calc.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.08s ===============================
";

#[test]
fn the_first_failing_python_run_says_each_thing_once() {
    let tools = Tools::new();
    tools
        .add(
            "pytest",
            &format!("cat <<EOF\n{PYTEST_COLLECTION_ERROR}EOF\nexit 2\n"),
        )
        .add("ruff", "exit 0\n");
    let path = tools.path();
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.git(&["add", "-A"]);
    let run = repo.phasegate_with(&["run"], &[("PATH", &path)]);
    assert_eq!(run.code, 1, "{run:?}");
    // The error's name begins its message: it is not said twice.
    assert!(
        run.stdout.contains(
            "  tests/test_calc.py:1 error [tests/test_calc.py] ModuleNotFoundError: No module named 'calc'\n"
        ),
        "{}",
        run.stdout
    );
    // The missing typechecker: its check line says why, the finding under
    // its heading says it again with what to do; the heading does not.
    assert!(
        run.stdout.contains("\ntypecheck — missing\n"),
        "{}",
        run.stdout
    );
    let details = run.stdout.split("\nsummary\n").next().unwrap();
    assert_eq!(
        details.matches("`pyright` is not installed").count(),
        2,
        "{details}"
    );
}
