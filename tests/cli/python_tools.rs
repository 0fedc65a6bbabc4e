//! A Python project's default checks follow the tools it says it uses.
//!
//! mypy where the project configures it and not pyright, flake8 where it
//! configures that and not ruff, and `poetry run` or `pipenv run` where
//! the project's environment lives outside it. The tools and runners are
//! scripts on a `PATH` the test controls that print real recorded output
//! (`fixtures/python/README.md`), so what is installed where the suite runs
//! changes nothing.

use crate::first_use::Tools;
use crate::support::{check, TestRepo};

/// The recorded output `fixtures/python/<name>`.
fn recorded(name: &str) -> String {
    let path = format!("{}/fixtures/python/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The failing project the recordings were made on: `pkg/calc.py` with a
/// type error and unused imports, and its tests.
fn failing_project(repo: &TestRepo) {
    let fixture = |name: &str| {
        std::fs::read_to_string(format!(
            "{}/fixtures/diagnostics/python/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    repo.write("pkg/__init__.py", "")
        .write("pkg/calc.py", &fixture("calc.py.txt"))
        .write("tests/test_calc.py", &fixture("test_calc.py.txt"));
}

const PYPROJECT: &str = "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n";

/// A tool that must not run: it leaves a mark and fails.
fn refused(tools: &Tools, name: &str) {
    let mark = tools.beside(&format!("{name}-ran"));
    tools.add(
        name,
        &format!(
            "touch '{}'\necho '{name} must not run'\nexit 9\n",
            mark.display()
        ),
    );
}

fn ran(tools: &Tools, name: &str) -> bool {
    tools.beside(&format!("{name}-ran")).exists()
}

/// A tool that prints the recorded `file` and exits with `code`, writing
/// its arguments beside the tools.
fn recorded_tool(tools: &Tools, name: &str, file: &str, code: i32) {
    let output = tools.file(&format!("{name}.out"), &recorded(file));
    let args = tools.beside(&format!("{name}.args"));
    tools.add(
        name,
        &format!(
            "echo \"$@\" > '{}'\ncat '{output}'\nexit {code}\n",
            args.display()
        ),
    );
}

/// What `name` was run with, as `recorded_tool` or `runner` wrote it.
fn args_of(tools: &Tools, name: &str) -> String {
    std::fs::read_to_string(tools.beside(&format!("{name}.args")))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A stand-in for poetry or pipenv: `NAME run TOOL ...` prints what
/// `outputs` records for TOOL and exits as recorded; anything else is a
/// mistake of phasegate's, said and exited 64.
fn runner(tools: &Tools, name: &str, outputs: &[(&str, &str, i32)]) {
    let args = tools.beside(&format!("{name}.args"));
    let mut cases = String::new();
    for (tool, file, code) in outputs {
        let output = tools.file(&format!("{name}-{tool}.out"), &recorded(file));
        cases.push_str(&format!("  {tool}) cat '{output}'; exit {code} ;;\n"));
    }
    tools.add(
        name,
        &format!(
            "echo \"$@\" >> '{}'\n[ \"$1\" = run ] || {{ echo \"{name}: unexpected $*\"; exit 64; }}\ncase \"$2\" in\n{cases}  *) echo \"{name}: unexpected $*\"; exit 64 ;;\nesac\n",
            args.display()
        ),
    );
}

/// `phasegate run --all-files --format json` with `tools` first on PATH.
fn run_all(repo: &TestRepo, tools: &Tools, more: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["--all-files"];
    args.extend_from_slice(more);
    repo.verdict_with(&args, &[("PATH", &tools.path())])
}

/// The diagnostics of check `name`, as `file:line code tool`.
fn diagnostics_of(verdict: &serde_json::Value, name: &str) -> Vec<String> {
    verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["check"] == name)
        .map(|d| {
            format!(
                "{}:{} {} {}",
                d["file"].as_str().unwrap_or("?"),
                d["line"],
                d["code"].as_str().unwrap_or("-"),
                d["tool"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// `phasegate init --force` with `path` as PATH; the file it wrote and
/// the run.
fn init(repo: &TestRepo, path: &str) -> (String, crate::support::Run) {
    let run = repo.phasegate_with(&["init", "--force"], &[("PATH", path)]);
    assert_eq!(run.code, 0, "{run:?}");
    (repo.read("phasegate.toml"), run)
}

/// What flake8 finds in the failing project, as `diagnostics_of` says it.
const FLAKE8_FINDINGS: [&str; 4] = [
    "pkg/calc.py:1 F401 flake8",
    "pkg/calc.py:2 F401 flake8",
    "pkg/calc.py:15 F841 flake8",
    "pkg/calc.py:15 E741 flake8",
];

#[test]
fn a_project_that_configures_mypy_and_not_pyright_is_typechecked_by_mypy() {
    let repo = TestRepo::new();
    failing_project(&repo);
    repo.write(
        "pyproject.toml",
        &format!("{PYPROJECT}\n[tool.mypy]\npython_version = \"3.11\"\n"),
    );
    repo.git(&["add", "-A"]);
    let tools = Tools::new();
    recorded_tool(&tools, "pytest", "pytest-passed.txt", 0);
    recorded_tool(&tools, "ruff", "ruff-clean.txt", 0);
    recorded_tool(&tools, "mypy", "poetry-run-mypy.txt", 1);
    refused(&tools, "pyright");

    // No configuration: the embedded default.
    let (code, verdict) = run_all(&repo, &tools, &[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert!(!ran(&tools, "pyright"), "{verdict:#}");
    assert_eq!(args_of(&tools, "mypy"), ".");
    assert_eq!(check(&verdict, "typecheck")["status"], "failed");
    assert_eq!(
        diagnostics_of(&verdict, "typecheck"),
        ["pkg/calc.py:10 assignment mypy"]
    );
    assert_eq!(check(&verdict, "tests")["status"], "passed");
    assert_eq!(check(&verdict, "lint")["status"], "passed");

    // `init` writes the same command, and says why.
    let (text, _) = init(&repo, &tools.path());
    assert!(text.contains("\ntypecheck = \"mypy .\"\n"), "{text}");
    assert!(
        text.contains("# mypy, not pyright: the project configures mypy"),
        "{text}"
    );
    assert!(!text.contains("\"pyright\""), "{text}");
}

#[test]
fn every_place_mypy_reads_its_configuration_from_counts_unless_pyright_is_configured_too() {
    let tools = Tools::new();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("mypy.ini", "[mypy]\nstrict = True\n")], "mypy ."),
        (&[(".mypy.ini", "[mypy]\n")], "mypy ."),
        (
            &[(
                "setup.cfg",
                "[metadata]\nname = calc\n\n[mypy-pkg.*]\nignore_errors = True\n",
            )],
            "mypy .",
        ),
        // A dotted key is the `[tool.mypy]` table too.
        (&[("pyproject.toml", "tool.mypy.strict = true\n")], "mypy ."),
        // Both configured: the default stays.
        (
            &[("mypy.ini", "[mypy]\n"), ("pyrightconfig.json", "{}\n")],
            "pyright",
        ),
        (
            &[(
                "pyproject.toml",
                "[tool.mypy]\nstrict = true\n\n[tool.pyright]\nstrict = [\"pkg\"]\n",
            )],
            "pyright",
        ),
        // Neither: a section of another tool's name, a comment, a file
        // that cannot be read.
        (&[("setup.cfg", "[mypyc]\nx = 1\n# [mypy]\n")], "pyright"),
        (&[("pyproject.toml", "[tool.mypy\n")], "pyright"),
    ];
    for (files, expected) in cases {
        let repo = TestRepo::new();
        repo.write("pyproject.toml", PYPROJECT);
        for (name, text) in *files {
            repo.write(name, text);
        }
        let (text, _) = init(&repo, &tools.path());
        assert!(
            text.contains(&format!("\ntypecheck = \"{expected}\"\n")),
            "{files:?}: {text}"
        );
    }
}

#[test]
fn a_project_that_configures_flake8_and_not_ruff_is_linted_by_flake8() {
    let repo = TestRepo::new();
    failing_project(&repo);
    repo.write("pyproject.toml", PYPROJECT)
        .write(".flake8", "[flake8]\nmax-line-length = 100\n");
    repo.git(&["add", "-A"]);
    let tools = Tools::new();
    recorded_tool(&tools, "pytest", "pytest-passed.txt", 0);
    recorded_tool(&tools, "flake8", "poetry-run-flake8.txt", 1);
    tools.prints("pyright", "0 errors, 0 warnings, 0 informations\n", 0);
    refused(&tools, "ruff");

    let (code, verdict) = run_all(&repo, &tools, &[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert!(!ran(&tools, "ruff"), "{verdict:#}");
    assert_eq!(args_of(&tools, "flake8"), "");
    assert_eq!(diagnostics_of(&verdict, "lint"), FLAKE8_FINDINGS);

    let (text, _) = init(&repo, &tools.path());
    assert!(text.contains("\nlint = \"flake8\"\n"), "{text}");
    assert!(
        text.contains("# flake8, not ruff: the project configures flake8"),
        "{text}"
    );

    // Where else flake8 reads it, and where ruff is configured too.
    for (files, expected) in [
        (
            &[(
                "tox.ini",
                "[tox]\nenvlist = py311\n\n[flake8]\nextend-ignore = E203\n",
            )][..],
            "flake8",
        ),
        (
            &[("setup.cfg", "[flake8]\nmax-line-length = 100\n")][..],
            "flake8",
        ),
        (
            &[
                (".flake8", "[flake8]\n"),
                ("ruff.toml", "line-length = 100\n"),
            ][..],
            "ruff check .",
        ),
        (
            &[
                (".flake8", "[flake8]\n"),
                ("pyproject.toml", "[tool.ruff]\nline-length = 100\n"),
            ][..],
            "ruff check .",
        ),
        (
            &[("tox.ini", "[testenv:flake8]\ncommands = flake8\n")][..],
            "ruff check .",
        ),
    ] {
        let repo = TestRepo::new();
        repo.write("pyproject.toml", PYPROJECT);
        for (name, text) in files {
            repo.write(name, text);
        }
        let (text, _) = init(&repo, &tools.path());
        assert!(
            text.contains(&format!("\nlint = \"{expected}\"\n")),
            "{files:?}: {text}"
        );
    }
}

/// A poetry project that configures mypy and flake8.
fn poetry_project(repo: &TestRepo) {
    failing_project(repo);
    repo.write(
        "pyproject.toml",
        &format!(
            "{PYPROJECT}\n[tool.poetry]\npackage-mode = false\n\n[tool.mypy]\npython_version = \"3.11\"\n"
        ),
    )
    .write(".flake8", "[flake8]\nmax-line-length = 100\n")
    .write("poetry.lock", "# This file is automatically @generated by Poetry 2.5.1 and should not be changed by hand.\npackage = []\n");
}

#[test]
fn a_poetry_project_runs_its_tools_through_poetry_run() {
    // Its environment is under poetry's cache directory: neither on PATH
    // nor in the project, and not activated.
    let repo = TestRepo::new();
    poetry_project(&repo);
    repo.git(&["add", "-A"]);
    let tools = Tools::new();
    runner(
        &tools,
        "poetry",
        &[
            ("pytest", "pytest-passed.txt", 0),
            ("flake8", "poetry-run-flake8.txt", 1),
            ("mypy", "poetry-run-mypy.txt", 1),
        ],
    );
    let (code, verdict) = run_all(&repo, &tools, &[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(check(&verdict, "tests")["status"], "passed", "{verdict:#}");
    assert_eq!(diagnostics_of(&verdict, "lint"), FLAKE8_FINDINGS);
    assert_eq!(
        diagnostics_of(&verdict, "typecheck"),
        ["pkg/calc.py:10 assignment mypy"]
    );
    let mut calls: Vec<String> = args_of(&tools, "poetry")
        .lines()
        .map(str::to_string)
        .collect();
    calls.sort();
    assert_eq!(calls, ["run flake8", "run mypy .", "run pytest"]);

    let (text, init_run) = init(&repo, &tools.path());
    for line in [
        "\ntests = \"poetry run pytest\"\n",
        "\nlint = \"poetry run flake8\"\n",
        "\ntypecheck = \"poetry run mypy .\"\n",
        "# poetry.lock: the tools run in the environment poetry keeps for the project\n",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(
        init_run.stdout.contains("(python (poetry))")
            && init_run.stdout.contains(
                "the checks run their tools through poetry (`poetry run`), in the environment poetry keeps for the project, activated or not"
            ),
        "{init_run:?}"
    );
    assert!(!init_run.stderr.contains("not installed"), "{init_run:?}");
}

#[test]
fn a_tool_poetry_does_not_find_is_missing_and_poetry_install_brings_it() {
    // Poetry's first run: it made an empty environment, and pytest is not
    // in it. A missing dependency (exit 3), not a failed check.
    let repo = TestRepo::new();
    poetry_project(&repo);
    repo.git(&["add", "-A"]);
    let tools = Tools::new();
    runner(&tools, "poetry", &[("pytest", "poetry-run-no-env.txt", 1)]);
    let (code, verdict) = run_all(&repo, &tools, &["--check", "tests"]);
    assert_eq!(code, 3, "{verdict:#}");
    assert_eq!(check(&verdict, "tests")["status"], "missing", "{verdict:#}");
    let said = verdict["diagnostics"].to_string();
    assert!(
        said.contains(
            "`pytest` is not installed (not found in the environment poetry keeps for the project)"
        ) && said.contains("install the project's dependencies (`poetry install`)"),
        "{verdict:#}"
    );

    // A check that fails is still a failure.
    let tools = Tools::new();
    runner(&tools, "poetry", &[("flake8", "poetry-run-flake8.txt", 1)]);
    let (code, verdict) = run_all(&repo, &tools, &["--check", "lint"]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(check(&verdict, "lint")["status"], "failed");

    // poetry itself not installed: `init` says where to get it.
    let (_, init_run) = init(&repo, "/usr/bin:/bin");
    assert!(
        init_run.stderr.contains(
            "warning: `poetry` is not installed (not found on PATH), and checks `tests`, `lint`, `typecheck` run it"
        ) && init_run.stderr.contains(
            "help: install poetry (https://python-poetry.org/docs/#installation, `pipx install poetry`)"
        ),
        "{init_run:?}"
    );
}

#[test]
fn a_pipenv_project_runs_its_tools_through_pipenv_run() {
    let repo = TestRepo::new();
    failing_project(&repo);
    repo.write(
        "Pipfile",
        "[packages]\n\n[dev-packages]\n\n[requires]\npython_version = \"3.11\"\n",
    )
    .write(
        "Pipfile.lock",
        "{\"_meta\": {}, \"default\": {}, \"develop\": {}}\n",
    )
    .write("mypy.ini", "[mypy]\npython_version = 3.11\n")
    .write(".flake8", "[flake8]\nmax-line-length = 100\n");
    repo.git(&["add", "-A"]);
    let tools = Tools::new();
    // pytest passes, flake8 finds what it finds, and mypy is not in the
    // environment: pipenv hands the command to `sh`, which says so.
    runner(
        &tools,
        "pipenv",
        &[
            ("pytest", "pytest-passed.txt", 0),
            ("flake8", "pipenv-run-flake8.txt", 1),
            ("mypy", "pipenv-run-missing.txt", 127),
        ],
    );
    let (code, verdict) = run_all(&repo, &tools, &[]);
    // The failed lint decides the exit; the missing mypy is said.
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(check(&verdict, "tests")["status"], "passed", "{verdict:#}");
    assert_eq!(check(&verdict, "lint")["status"], "failed", "{verdict:#}");
    assert_eq!(diagnostics_of(&verdict, "lint"), FLAKE8_FINDINGS);
    assert_eq!(
        check(&verdict, "typecheck")["status"],
        "missing",
        "{verdict:#}"
    );
    assert!(
        verdict["diagnostics"]
            .to_string()
            .contains("`mypy` is not installed"),
        "{verdict:#}"
    );

    // Its first run, where the environment did not exist yet.
    let tools = Tools::new();
    runner(
        &tools,
        "pipenv",
        &[("pytest", "pipenv-run-no-env.txt", 127)],
    );
    let (code, verdict) = run_all(&repo, &tools, &["--check", "tests"]);
    assert_eq!(code, 3, "{verdict:#}");
    assert_eq!(check(&verdict, "tests")["status"], "missing", "{verdict:#}");
    // pytest is a development package: a plain `pipenv install` leaves
    // it out.
    assert!(
        verdict["diagnostics"].to_string().contains(
            "`pytest` is not installed (not found in the environment pipenv keeps for the project); "
        ) && verdict["diagnostics"]
            .to_string()
            .contains("install the project's dependencies (`pipenv install --dev`)"),
        "{verdict:#}"
    );

    let (text, init_run) = init(&repo, &tools.path());
    for line in [
        "\ntests = \"pipenv run pytest\"\n",
        "\nlint = \"pipenv run flake8\"\n",
        "\ntypecheck = \"pipenv run mypy .\"\n",
        "`pipenv install --dev` puts them there",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(
        init_run
            .stdout
            .contains("the checks run their tools through pipenv (`pipenv run`)"),
        "{init_run:?}"
    );
    let (_, init_run) = init(&repo, "/usr/bin:/bin");
    assert!(
        init_run.stderr.contains("help: install pipenv (https://pipenv.pypa.io/en/latest/installation.html, `pipx install pipenv`)"),
        "{init_run:?}"
    );
}

#[test]
fn a_gate_read_from_a_ref_uses_the_tools_the_refs_project_configures() {
    // `main` configures mypy; the branch under test drops that and
    // configures pyright instead. The gate is `main`'s: mypy.
    let repo = TestRepo::new();
    failing_project(&repo);
    repo.write(
        "pyproject.toml",
        &format!("{PYPROJECT}\n[tool.mypy]\npython_version = \"3.11\"\n"),
    );
    repo.commit_all("a python project that uses mypy");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("pyproject.toml", PYPROJECT)
        .write("pyrightconfig.json", "{}\n")
        .write("pkg/more.py", "X = 1\n");
    repo.commit_all("feature");
    let tools = Tools::new();
    recorded_tool(&tools, "pytest", "pytest-passed.txt", 0);
    recorded_tool(&tools, "ruff", "ruff-clean.txt", 0);
    recorded_tool(&tools, "mypy", "poetry-run-mypy.txt", 1);
    refused(&tools, "pyright");
    let (code, verdict) =
        repo.verdict_with(&crate::ci_cargo::FROM_MAIN, &[("PATH", &tools.path())]);
    assert_eq!(code, 1, "{verdict:#}");
    assert!(!ran(&tools, "pyright"), "{verdict:#}");
    assert_eq!(check(&verdict, "typecheck")["status"], "failed");
    // The gate also notes the `pyproject.toml` the branch changed.
    assert_eq!(
        diagnostics_of(&verdict, "typecheck")
            .first()
            .map(String::as_str),
        Some("pkg/calc.py:10 assignment mypy")
    );
}

#[test]
fn nested_projects_follow_their_own_tools_in_the_work_tree_and_from_a_ref() {
    // No project at the root; `api/` is a poetry project that configures
    // mypy. The branch deletes its `poetry.lock`: the gate of `main` still
    // runs poetry.
    let repo = TestRepo::new();
    repo.write("README.md", "# monorepo\n")
        .write(
            "api/pyproject.toml",
            &format!("{PYPROJECT}\n[tool.mypy]\nstrict = true\n"),
        )
        .write("api/poetry.lock", "package = []\n")
        .write(
            "api/calc.py",
            "def add(a: int, b: int) -> int:\n    return a + b\n",
        );
    repo.commit_all("a monorepo");
    let tools = Tools::new();
    runner(
        &tools,
        "poetry",
        &[
            ("pytest", "pytest-passed.txt", 0),
            ("ruff", "ruff-clean.txt", 0),
            ("mypy", "poetry-run-mypy.txt", 1),
        ],
    );
    let (text, init_run) = init(&repo, &tools.path());
    assert!(
        text.contains(
            r#"{ name = "api-typecheck", command = "poetry run mypy .", cwd = "api", files = ["api/**"]"#
        ),
        "{text}"
    );
    assert!(
        init_run
            .stdout
            .contains("the checks of `api/` run their tools through poetry"),
        "{init_run:?}"
    );
    std::fs::remove_file(repo.path().join("phasegate.toml")).unwrap();

    repo.git(&["checkout", "-qb", "feature"]);
    repo.git(&["rm", "-q", "api/poetry.lock"]);
    repo.write(
        "api/calc.py",
        "def add(a: int, b: int) -> int:\n    return b + a\n",
    );
    repo.commit_all("feature");
    let (code, verdict) =
        repo.verdict_with(&crate::ci_cargo::FROM_MAIN, &[("PATH", &tools.path())]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(
        check(&verdict, "api-tests")["status"],
        "passed",
        "{verdict:#}"
    );
    assert_eq!(
        check(&verdict, "api-typecheck")["status"],
        "failed",
        "{verdict:#}"
    );
    assert!(
        args_of(&tools, "poetry").lines().any(|l| l == "run mypy ."),
        "{verdict:#}"
    );
}
