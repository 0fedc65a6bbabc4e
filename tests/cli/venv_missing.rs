//! A tool the project's virtual environment has but the active environment lacks; same-input re-runs over a range.

use crate::support::{check, rev, write_executable, TestRepo};

/// A directory holding only the programs phasegate and a shell check
/// need (`git`, `sh`), as `PATH`: whatever Python tools the machine has
/// installed, none is found on it.
fn lean_path(repo: &TestRepo) -> String {
    let dir = repo.home().join("lean-bin");
    std::fs::create_dir_all(&dir).unwrap();
    for program in ["git", "sh"] {
        if dir.join(program).exists() {
            continue;
        }
        let found = which::which(program)
            .unwrap_or_else(|e| panic!("`{program}` is on the suite's PATH: {e}"));
        std::os::unix::fs::symlink(found, dir.join(program)).unwrap();
    }
    dir.to_string_lossy().into_owned()
}

/// Makes `dir` (relative to the repository) a virtual environment, as
/// `python -m venv` would (`pyvenv.cfg` beside `bin/`), whose `bin` holds
/// `tools`, each passing.
fn venv_with(repo: &TestRepo, dir: &str, tools: &[&str]) {
    let venv = repo.path().join(dir);
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(
        venv.join("pyvenv.cfg"),
        "home = /usr/bin\nversion = 3.12.3\n",
    )
    .unwrap();
    for tool in tools {
        write_executable(&venv.join("bin").join(tool), "#!/bin/sh\nexit 0\n");
    }
}

/// Another environment, activated: a virtual environment outside the
/// project, without the project's tools.
fn other_env(repo: &TestRepo) -> String {
    let env = repo.home().join("envs/other");
    std::fs::create_dir_all(env.join("bin")).unwrap();
    std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    env.to_string_lossy().into_owned()
}

/// A Python project whose `.venv` has pytest and ruff, staged, with a
/// `tests` check run as a program and a `lint` check run by the shell.
fn python_repo(checks: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!("[phases.implementation]\nchecks = [\n{checks}]\n"))
        .write(".gitignore", ".venv/\n")
        .write("calc.py", "def add(a, b):\n    return a + b\n");
    venv_with(&repo, ".venv", &["pytest", "ruff"]);
    repo.git(&["add", "-A"]);
    repo
}

const TWO_CHECKS: &str = "  { name = \"tests\", command = \"pytest -q\" },\n  { name = \"lint\", shell = true, command = \"ruff check .\" },\n";

/// The messages of the open interventions.
fn intervention_messages(repo: &TestRepo) -> Vec<String> {
    let list = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(list.code, 0, "{list:?}");
    list.json()["interventions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["message"].as_str().unwrap().to_string())
        .collect()
}

/// The message of the one finding of check `name`.
fn finding(v: &serde_json::Value, name: &str) -> String {
    let of: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["check"] == name)
        .collect();
    assert_eq!(of.len(), 1, "{v:#}");
    assert_eq!(of[0]["code"], "missing-tool", "{v:#}");
    of[0]["message"].as_str().unwrap().to_string()
}

#[test]
fn a_tool_only_the_projects_venv_has_names_the_active_environment_that_kept_it_out() {
    let repo = python_repo(TWO_CHECKS);
    let other = other_env(&repo);
    let env = [("PATH", lean_path(&repo)), ("VIRTUAL_ENV", other.clone())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 3, "{v:#}");
    for (name, program) in [("tests", "pytest"), ("lint", "ruff")] {
        let reason = format!(
            "`{program}` is not on PATH, but the project's virtual environment `.venv` has it (`.venv/bin/{program}`): the check did not run in it, as another environment is active (`VIRTUAL_ENV` is `{other}`)"
        );
        let c = check(&v, name);
        assert_eq!(c["status"], "missing", "{v:#}");
        assert_eq!(c["reason"], reason.as_str(), "{v:#}");
        assert_eq!(
            finding(&v, name),
            format!(
                "{reason}; deactivate that environment (`deactivate`) or activate the project's (`source .venv/bin/activate`), then run again; or install `{program}` in the active one"
            ),
            "{v:#}"
        );
    }
    // The queue a person reads says it too.
    let messages = intervention_messages(&repo);
    for program in ["pytest", "ruff"] {
        assert!(
            messages.iter().any(|m| m.contains(&format!(
                "the project's virtual environment `.venv` has it (`.venv/bin/{program}`): the check did not run in it, as another environment is active (`VIRTUAL_ENV` is `{other}`)"
            ))),
            "{messages:#?}"
        );
    }
    // And the report a person reads.
    let run = repo.phasegate_with(&["run"], &env);
    assert_eq!(run.code, 3, "{run:?}");
    let report = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        report.contains(&format!(
            "`pytest` is not on PATH, but the project's virtual environment `.venv` has it (`.venv/bin/pytest`): the check did not run in it, as another environment is active (`VIRTUAL_ENV` is `{other}`); deactivate that environment"
        )),
        "{}",
        run.stdout
    );
    assert!(!report.contains("is not installed"), "{}", run.stdout);

    // Run from the project's environment, as the finding says, both pass.
    let venv_bin = repo.path().join(".venv/bin");
    let path = format!("{}:{}", venv_bin.display(), lean_path(&repo));
    let venv = repo.path().join(".venv");
    let (code, v) = repo.verdict_with(
        &[],
        &[("PATH", &path), ("VIRTUAL_ENV", &venv.to_string_lossy())],
    );
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_check_whose_env_sets_path_or_virtual_env_is_told_to_fix_its_env() {
    let repo = TestRepo::new();
    let lean = lean_path(&repo);
    let other = other_env(&repo);
    // The project is in `api/`, its environment beside it.
    repo.config(&format!(
        "[phases.implementation]\nchecks = [\n  {{ name = \"tests\", command = \"pytest\", cwd = \"api\", env = {{ PATH = \"{lean}\" }} }},\n  {{ name = \"types\", command = \"pyright\", cwd = \"api\", env = {{ VIRTUAL_ENV = \"{other}\" }} }},\n]\n"
    ))
    .write(".gitignore", ".venv/\n")
    .write("api/calc.py", "x = 1\n");
    venv_with(&repo, "api/.venv", &["pytest", "pyright"]);
    repo.git(&["add", "-A"]);
    // No environment active: the check's own `env` is why.
    let mut cmd = repo.command(crate::support::BIN);
    cmd.args(["run", "--format", "json"])
        .env("PATH", &lean)
        .env_remove("VIRTUAL_ENV");
    let run = crate::support::output(&cmd.output().unwrap());
    assert_eq!(run.code, 3, "{run:?}");
    let v = run.json();
    let tests = finding(&v, "tests");
    assert_eq!(
        tests,
        format!(
            "`pytest` is not on PATH, but the project's virtual environment `api/.venv` has it (`api/.venv/bin/pytest`): the check did not run in it, as its own `env` sets `PATH`; take `PATH` out of check `tests`'s `env` in phasegate.toml, and it runs in `api/.venv` as activating it does; or put `api/.venv/bin` first on the `PATH` it sets, as an absolute path"
        ),
        "{v:#}"
    );
    let types = finding(&v, "types");
    assert!(
        types.starts_with(
            "`pyright` is not on PATH, but the project's virtual environment `api/.venv` has it (`api/.venv/bin/pyright`): the check did not run in it, as its own `env` sets `VIRTUAL_ENV`; take `VIRTUAL_ENV` out of check `types`'s `env`"
        ),
        "{v:#}"
    );
    // Each points at its check in phasegate.toml, where `env` is fixed.
    for (name, line) in [("tests", 3), ("types", 4)] {
        let d = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["check"] == name)
            .unwrap();
        assert_eq!(
            (d["file"].as_str(), d["line"].as_u64()),
            (Some("phasegate.toml"), Some(line)),
            "{v:#}"
        );
    }
    let messages = intervention_messages(&repo);
    assert!(
        messages
            .iter()
            .any(|m| m.contains("as its own `env` sets `PATH`")),
        "{messages:#?}"
    );
    // The check's `env` wins over an activated environment as the reason:
    // deactivating it would not help.
    let (code, v) = repo.verdict_with(&[], &[("PATH", &lean), ("VIRTUAL_ENV", &other)]);
    assert_eq!(code, 3, "{v:#}");
    assert!(
        finding(&v, "tests").contains("as its own `env` sets `PATH`"),
        "{v:#}"
    );
}

#[test]
fn the_projects_own_environment_active_without_its_bin_on_path_says_so() {
    let repo = python_repo(TWO_CHECKS);
    let venv = repo.path().join(".venv");
    let (code, v) = repo.verdict_with(
        &["--check", "tests"],
        &[
            ("PATH", &lean_path(&repo)),
            ("VIRTUAL_ENV", &venv.to_string_lossy()),
        ],
    );
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(
        finding(&v, "tests"),
        "`pytest` is not on PATH, but the project's virtual environment `.venv` has it (`.venv/bin/pytest`): `VIRTUAL_ENV` names it as active, but its `bin` is not on PATH; activate it again (`source .venv/bin/activate`), which puts `.venv/bin` first on PATH, then run again",
        "{v:#}"
    );
}

#[test]
fn a_tool_the_projects_venv_lacks_too_is_not_installed() {
    // The environment has neither program, or has it only as a file that
    // cannot run: the plain message, with how to install it.
    let repo = python_repo(
        "  { name = \"tests\", command = \"pytest\" },\n  { name = \"types\", command = \"pyright\" },\n",
    );
    std::fs::remove_file(repo.path().join(".venv/bin/pytest")).unwrap();
    std::fs::write(repo.path().join(".venv/bin/pyright"), "not a program\n").unwrap();
    let other = other_env(&repo);
    let (code, v) = repo.verdict_with(&[], &[("PATH", &lean_path(&repo)), ("VIRTUAL_ENV", &other)]);
    assert_eq!(code, 3, "{v:#}");
    for (name, program) in [("tests", "pytest"), ("types", "pyright")] {
        assert_eq!(
            check(&v, name)["reason"],
            format!("`{program}` is not installed (not found on PATH)").as_str(),
            "{v:#}"
        );
        assert!(!finding(&v, name).contains("has it"), "{v:#}");
    }
}

/// The gate of the range runs below: a `build` check that fails with the
/// same error whatever the commits hold. Two attempts failing alike
/// escalate (`escalate_after`; `max_retries` is the handoff documents'
/// budget, and the same): were a re-run an attempt, the second run of
/// the same commits would.
const STUCK: &str = "[gate]\nmax_retries = 2\nescalate_after = 2\n\n[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"echo 'src/a.c:1:1: error: stuck'; exit 1\" } ]\n";

/// `main` with `src/a.c` and the gate committed, and `feature` checked
/// out with one commit on top that changes `src/a.c`.
fn branch() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(STUCK).write("src/a.c", "int a;\n");
    repo.commit_all("base");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("src/a.c", "int a = 1;\n");
    repo.commit_all("first try");
    repo
}

/// `phasegate run --format json ARGS`: its exit code, status and next.
fn range_run(repo: &TestRepo, args: &[&str]) -> (i32, String, String) {
    let (code, v) = repo.verdict(args);
    assert_eq!(v["selection"]["mode"], "range", "{v:#}");
    let word = |key: &str| v[key].as_str().unwrap_or_default().to_string();
    (code, word("status"), word("next"))
}

fn fix() -> (i32, String, String) {
    (1, "failed".to_string(), "fix".to_string())
}

fn escalate() -> (i32, String, String) {
    (4, "blocked".to_string(), "escalate".to_string())
}

const FEATURE: [&str; 4] = ["--from-ref", "main", "--to-ref", "feature"];

#[test]
fn the_same_failing_range_run_again_is_no_new_attempt() {
    let repo = branch();
    for n in 1..=3 {
        assert_eq!(
            range_run(&repo, &FEATURE),
            fix(),
            "run {n} of the same commits"
        );
    }
    // Each run is in the history all the same.
    let history = repo.phasegate(&["history", "--format", "json"]).json();
    assert_eq!(history["runs"].as_array().unwrap().len(), 3, "{history:#}");
}

#[test]
fn a_new_commit_on_the_branch_is_a_new_attempt() {
    let repo = branch();
    assert_eq!(range_run(&repo, &FEATURE), fix(), "the first attempt");
    assert_eq!(range_run(&repo, &FEATURE), fix(), "read again");
    // A partial fix, committed: the same error again is the second
    // attempt, and two are the budget.
    repo.write("src/a.c", "int a = 2;\n");
    repo.commit_all("second try");
    let (code, v) = repo.verdict(&FEATURE);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(
        (v["status"].as_str(), v["next"].as_str()),
        (Some("blocked"), Some("escalate"))
    );
    assert!(
        v["notes"].to_string().contains("failed 2 runs in a row"),
        "{v:#}"
    );
    // Reading that verdict again says the same.
    assert_eq!(range_run(&repo, &FEATURE), escalate(), "read again");
}

#[test]
fn another_name_for_the_same_commits_is_the_same_input() {
    let repo = branch();
    repo.git(&["branch", "feature-copy"]);
    repo.git(&["tag", "v1"]);
    let main = rev(&repo, "main");
    for to in ["feature", "HEAD", "feature-copy", "v1", &rev(&repo, "HEAD")] {
        assert_eq!(
            range_run(&repo, &["--from-ref", "main", "--to-ref", to]),
            fix(),
            "`--to-ref {to}`"
        );
    }
    // `--from-ref` by another name of the same commit too.
    assert_eq!(
        range_run(&repo, &["--from-ref", &main, "--to-ref", "v1"]),
        fix(),
        "`--from-ref {main}`"
    );
    // CI's range over the same commits, however often the job is re-run.
    repo.git(&["update-ref", "refs/remotes/origin/main", &main]);
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    for n in 1..=3 {
        let (code, v) = repo.verdict_with(&[], &env);
        assert_eq!(v["selection"]["ci"], "GitHub pull_request", "{v:#}");
        assert_eq!(
            (code, v["next"].as_str()),
            (1, Some("fix")),
            "CI run {n}: {v:#}"
        );
    }
}

#[test]
fn a_new_commit_counts_in_ci_too() {
    let repo = branch();
    repo.git(&[
        "update-ref",
        "refs/remotes/origin/main",
        &rev(&repo, "main"),
    ]);
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    let ci = || {
        let (code, v) = repo.verdict_with(&[], &env);
        assert_eq!(v["selection"]["ci"], "GitHub pull_request", "{v:#}");
        (code, v["next"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(ci(), (1, "fix".to_string()), "the first attempt");
    assert_eq!(ci(), (1, "fix".to_string()), "the job re-run");
    repo.write("src/a.c", "int a = 2;\n");
    repo.commit_all("second try");
    assert_eq!(ci(), (4, "escalate".to_string()), "the second attempt");
}

#[test]
fn init_with_another_environment_active_says_to_install_there_or_deactivate() {
    // With an environment activated, the checks run in it, not in the
    // project's `.venv`: installing in the project's is no advice then.
    let repo = TestRepo::new();
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
    );
    let other = other_env(&repo);
    let init = repo.phasegate_with(
        &["init"],
        &[("PATH", &lean_path(&repo)), ("VIRTUAL_ENV", &other)],
    );
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stderr.contains(&format!(
            "warning: `pytest` is not installed (not found on PATH), and check `tests` runs it: until it is, every run stops there as incomplete (exit 3)\nhelp: install it in the activated environment the checks run in (`{other}/bin/pip install pytest`), or deactivate it for the checks to run in the project's own `.venv`"
        )),
        "{}",
        init.stderr
    );
    assert!(
        !init.stderr.contains("without activating it"),
        "{}",
        init.stderr
    );
}
