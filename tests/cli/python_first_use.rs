//! A new user's first runs on Python projects.
//!
//! The README's first commands (`phasegate run`, `init`, `install`, a
//! commit through the hook) on projects whose tools are installed in the
//! project's own virtual environment, committed from a shell where that
//! environment is not activated, as a GUI git client or an editor commits.
//! The tools are scripts that print real recorded output, in a `.venv/bin`
//! the test makes, so what is installed where the suite runs changes
//! nothing.

use crate::first_use::{python_project, Tools};
use crate::support::{output, write_executable, TestRepo, BIN};

/// What `pytest -p no:cacheprovider` 9.2.0 (pluggy 1.7.0, `CPython` 3.11.7,
/// in a `.venv` made by `uv venv`) printed, recorded, for the project
/// `python_project` makes with a passing test (the repository's path as
/// `$PWD`). Exit 0.
const PYTEST_PASSED: &str = r"============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0
rootdir: $PWD
configfile: pyproject.toml
collected 1 item

tests/test_calc.py .                                                     [100%]

============================== 1 passed in 0.01s ===============================
";

/// What `pyright` 1.1.414 (from the Python package index, same environment) printed on that
/// project, recorded. Exit 0.
const PYRIGHT_CLEAN: &str = "0 errors, 0 warnings, 0 informations\n";

/// What `ruff check .` 0.17.6 printed on it, recorded. Exit 0.
const RUFF_CLEAN: &str = "All checks passed!\n";

/// A `PATH` with the system's programs and none of the project's tools:
/// what a GUI git client or an editor commits with.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// Makes `dir` (relative to the repository) a virtual environment, as
/// `python -m venv` or `uv venv` would (a `pyvenv.cfg` beside `bin/`),
/// whose `bin` holds the project's tools printing their recorded output.
/// Each tool fails unless it runs with its environment active
/// (`VIRTUAL_ENV` naming it), as pyright and uv read it.
fn venv_with_tools(repo: &TestRepo, dir: &str, tools: &[&str]) {
    let venv = repo.path().join(dir);
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(
        venv.join("pyvenv.cfg"),
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n",
    )
    .unwrap();
    for tool in tools {
        let output = match *tool {
            "pytest" => PYTEST_PASSED,
            "pyright" => PYRIGHT_CLEAN,
            "ruff" => RUFF_CLEAN,
            _ => "",
        };
        write_executable(
            &venv.join("bin").join(tool),
            &format!(
                "#!/bin/sh\n[ \"$VIRTUAL_ENV/bin/{tool}\" -ef \"$0\" ] || {{ echo \"{tool}: VIRTUAL_ENV is '$VIRTUAL_ENV'\"; exit 9; }}\ncat <<EOF\n{output}EOF\n"
            ),
        );
    }
}

/// `git ARGS` as a GUI client runs it: the system's `PATH`, no virtual
/// environment active, the hook finding the phasegate under test.
fn git_unactivated(repo: &TestRepo, args: &[&str]) -> crate::support::Run {
    let mut git = repo.command("git");
    git.args(args)
        .env("PHASEGATE_BIN", BIN)
        .env("PATH", SYSTEM_PATH)
        .env_remove("VIRTUAL_ENV");
    output(&git.output().unwrap())
}

/// phasegate with the system's `PATH` and no virtual environment active.
fn phasegate_unactivated(repo: &TestRepo, args: &[&str]) -> crate::support::Run {
    let mut cmd = repo.command(BIN);
    cmd.args(args)
        .env("PATH", SYSTEM_PATH)
        .env_remove("VIRTUAL_ENV");
    output(&cmd.output().unwrap())
}

#[test]
fn a_commit_made_where_the_venv_is_not_activated_runs_the_projects_own_tools() {
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
        .write(".gitignore", ".venv/\n");
    venv_with_tools(&repo, ".venv", &["pytest", "ruff", "pyright"]);
    repo.git(&["add", "-A"]);

    // The first command of the README, with no configuration.
    let run = phasegate_unactivated(&repo, &["run", "--format", "json"]);
    let verdict = run.json();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(verdict["status"], "passed", "{verdict:#}");
    let notes = verdict["notes"].to_string();
    assert!(
        notes.contains(
            "checks `tests`, `lint`, `typecheck` ran in the project's Python virtual environment `.venv`, its `.venv/bin` first on PATH as activating it does (none was active)"
        ),
        "{verdict:#}"
    );

    // `init` says where the checks find their tools, and warns of none.
    let init = phasegate_unactivated(&repo, &["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains(
            "the checks run in the project's Python virtual environment `.venv` (`.venv/bin` first on PATH), activated or not"
        ),
        "{init:?}"
    );
    assert!(!init.stderr.contains("not installed"), "{init:?}");

    // Through the hook, as a GUI client commits.
    let install = phasegate_unactivated(&repo, &["install"]);
    assert_eq!(install.code, 0, "{install:?}");
    repo.git(&["add", "-A"]);
    let commit = git_unactivated(&repo, &["commit", "-qm", "first"]);
    assert_eq!(commit.code, 0, "{commit:?}");
    assert_eq!(repo.git(&["log", "--format=%s"]).trim(), "first");
}

#[test]
fn an_activated_environment_is_the_one_the_checks_use() {
    // The user activated another environment: its tools run, not the
    // project's `.venv` (whose pytest here would fail), and no note says
    // otherwise.
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.write(".gitignore", ".venv/\n");
    venv_with_tools(&repo, ".venv", &["ruff", "pyright"]);
    write_executable(&repo.path().join(".venv/bin/pytest"), "#!/bin/sh\nexit 1\n");
    let active = Tools::new();
    active
        .prints("pytest", PYTEST_PASSED, 0)
        .prints("ruff", RUFF_CLEAN, 0)
        .prints("pyright", PYRIGHT_CLEAN, 0);
    repo.git(&["add", "-A"]);
    let (code, verdict) = repo.verdict_with(
        &[],
        &[("PATH", &active.path()), ("VIRTUAL_ENV", "/elsewhere/env")],
    );
    assert_eq!(code, 0, "{verdict:#}");
    assert!(
        !verdict["notes"].to_string().contains("virtual environment"),
        "{verdict:#}"
    );
}

#[test]
fn requirements_txt_and_setup_cfg_projects_use_a_venv_named_venv_too() {
    for (marker, text) in [
        ("requirements.txt", "requests==2.32.3\n"),
        ("setup.cfg", "[metadata]\nname = calc\n"),
    ] {
        let repo = TestRepo::new();
        repo.write(marker, text)
            .write("src/calc/__init__.py", "def add(a, b):\n    return a + b\n")
            .write(
                "tests/test_calc.py",
                "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            )
            .write(".gitignore", "venv/\n");
        venv_with_tools(&repo, "venv", &["pytest", "ruff", "pyright"]);
        repo.git(&["add", "-A"]);
        let run = phasegate_unactivated(&repo, &["run", "--format", "json"]);
        let verdict = run.json();
        assert_eq!(run.code, 0, "{marker}: {verdict:#}");
        assert!(
            verdict["notes"]
                .to_string()
                .contains("Python virtual environment `venv`, its `venv/bin` first on PATH"),
            "{marker}: {verdict:#}"
        );
    }
}

#[test]
fn init_looks_for_the_tools_in_the_venv_and_says_how_to_install_them_there() {
    // pytest and ruff are in `.venv`, pyright is not, nor on PATH.
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.write(".gitignore", ".venv/\n");
    venv_with_tools(&repo, ".venv", &["pytest", "ruff", "pip"]);
    repo.commit_all("a python project");
    let init = phasegate_unactivated(&repo, &["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stderr.contains(
            "warning: `pyright` is not installed (not in `.venv/bin`, nor elsewhere on PATH), and check `typecheck` runs it"
        ),
        "{init:?}"
    );
    assert!(
        init.stderr
            .contains("help: install it in `.venv` (`.venv/bin/pip install pyright`), or add"),
        "{init:?}"
    );
    assert!(!init.stderr.contains("`pytest`"), "{init:?}");
    assert!(!init.stderr.contains("`ruff`"), "{init:?}");

    // A project uv manages: through uv, so its lock file keeps the tool.
    repo.write("uv.lock", "version = 1\n");
    let init = phasegate_unactivated(&repo, &["init", "--force"]);
    assert!(
        init.stderr.contains(
            "help: install the project's dependencies in `.venv` (`uv sync`), or add it to them (`uv add --dev pyright`), or add"
        ),
        "{init:?}"
    );

    // No environment at all: where to make one that the checks use.
    let bare = TestRepo::new();
    python_project(&bare, "");
    bare.commit_all("a python project");
    let init = phasegate_unactivated(&bare, &["init"]);
    assert!(
        init.stderr.contains(
            "help: install it in a virtual environment of the project's, which its checks run in without activating it (`python3 -m venv .venv`, then `.venv/bin/pip install pytest`; with uv, `uv add --dev pytest`)"
        ),
        "{init:?}"
    );
    assert!(!init.stdout.contains("virtual environment"), "{init:?}");
}

#[test]
fn a_python_tool_missing_at_run_time_is_to_be_installed_in_the_venv() {
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.git(&["add", "-A"]);
    let run = phasegate_unactivated(&repo, &["run"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stdout.contains(
            "`pytest` is not installed (not found on PATH); install `pytest` in the project's virtual environment, which checks run in without activating it (`.venv/bin/pip install pytest`, or `uv add --dev pytest`)"
        ),
        "{}",
        run.stdout
    );
}
