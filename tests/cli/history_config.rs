//! The history of runs stopped by a configuration error: columns, phase, selection.

use serde_json::Value;

use crate::support::{docs_files, TestRepo, DOCS};

/// `profile` misspelt, on line 2.
const BROKEN: &str = "[gate]\nprofle = \"auto\"\n\n[phases.implementation]\nchecks = []\n";

/// A phase name longer than the table's phase column was wide.
const LONG: &str = "integration_and_acceptance";

/// Two phases, `implementation` (the default, which passes) and `qa`,
/// each with one check that passes.
const TWO_PHASES: &str = "[gate]\ndefault_phase = \"implementation\"\n\n[phases.implementation]\nchecks = [ { name = \"tests\", command = \"true\" } ]\n\n[phases.qa]\nchecks = [ { name = \"review\", command = \"true\" } ]\n";

/// The GitHub Actions environment of a `pull_request` event whose target
/// branch is `base`.
fn pull_request(base: &str) -> Vec<(&'static str, &str)> {
    vec![
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", base),
    ]
}

/// `phasegate history --format json`'s runs, newest first.
fn history(repo: &TestRepo) -> Vec<Value> {
    let run = repo.phasegate(&["history", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["runs"].as_array().unwrap().clone()
}

/// The runs `state.json` keeps, oldest first.
fn state_runs(repo: &TestRepo) -> Vec<Value> {
    let state: Value = serde_json::from_str(&repo.read(".git/phasegate/state.json")).unwrap();
    state["runs"].as_array().unwrap().clone()
}

/// A run's phase as the table shows it: its name, or `-` for none.
fn shown_phase(run: &Value) -> &str {
    match &run["phase"] {
        Value::Null => "-",
        phase => phase
            .as_str()
            .unwrap_or_else(|| panic!("phase is no string: {run:#}")),
    }
}

/// A run's status as the table shows it.
fn shown_status(run: &Value) -> String {
    run["status"].as_str().unwrap().replace('_', " ")
}

/// Where `cell` starts in `line` (in characters), asserting it is a cell
/// of its own there: at the start of the line or after a space, and
/// followed by a space or the end of the line.
fn cell_at(line: &str, column: usize, cell: &str) {
    let chars: Vec<char> = line.chars().collect();
    let found: String = chars
        .iter()
        .skip(column)
        .take(cell.chars().count())
        .collect();
    assert_eq!(
        found, cell,
        "`{cell}` is not at column {column} of:\n{line}"
    );
    assert!(
        column == 0 || chars[column - 1] == ' ',
        "`{cell}` runs into what comes before it:\n{line}"
    );
    let after = column + cell.chars().count();
    assert!(
        chars.get(after).is_none_or(|c| *c == ' '),
        "`{cell}` runs into what comes after it:\n{line}"
    );
}

#[test]
fn history_columns_line_up_whatever_the_statuses_and_phases() {
    let repo = TestRepo::new();
    let config = format!(
        "[gate]\ndefault_phase = \"implementation\"\n\n[phases.implementation]\nchecks = [ {{ name = \"tests\", command = \"true\" }} ]\n\n[phases.{LONG}]\nchecks = [ {{ name = \"a_check_with_a_rather_long_name\", command = \"false\" }} ]\n"
    );
    repo.config(&config);
    repo.write("a.md", "# a\n");
    repo.commit_all("base");
    assert_eq!(repo.verdict(&["--all-files"]).0, 0);
    assert_eq!(repo.verdict(&["--all-files", "--phase", LONG]).0, 1);
    repo.config(BROKEN);
    assert_eq!(repo.verdict(&["--all-files"]).0, 2);
    // A run killed before its verdict left its directory alone.
    std::fs::create_dir(
        repo.path()
            .join(".git/phasegate/runs/20200101T000000Z-4242"),
    )
    .unwrap();

    let runs = history(&repo);
    let mut statuses: Vec<String> = runs.iter().map(shown_status).collect();
    statuses.sort();
    assert_eq!(
        statuses,
        ["config error", "failed", "killed", "passed"],
        "{runs:#?}"
    );

    let human = repo.phasegate(&["history"]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let lines: Vec<&str> = human.stdout.lines().collect();
    let header = lines[0];
    let column = |title: &str| {
        let at = header
            .find(title)
            .unwrap_or_else(|| panic!("no `{title}` in:\n{}", human.stdout));
        header[..at].chars().count()
    };
    let (status_at, phase_at, id_at) = (column("status"), column("phase"), column("run id"));
    // Where what follows the run id starts, on each line that has more.
    let mut rest_at = Vec::new();
    for run in &runs {
        let id = run["run_id"].as_str().unwrap();
        let line = lines
            .iter()
            .find(|line| line.contains(id) && !line.starts_with(' '))
            .unwrap_or_else(|| panic!("no line of {id} in:\n{}", human.stdout));
        cell_at(line, 0, run["started_at"].as_str().unwrap());
        cell_at(line, status_at, &shown_status(run));
        cell_at(line, phase_at, shown_phase(run));
        cell_at(line, id_at, id);
        let chars: Vec<char> = line.chars().collect();
        let after_id = id_at + id.chars().count();
        if let Some(rest) = (after_id..chars.len()).find(|&i| chars[i] != ' ') {
            rest_at.push((rest, line.to_string()));
        }
    }
    // The failed, config error and killed lines say more, beginning in
    // one column.
    assert_eq!(rest_at.len(), 3, "{}", human.stdout);
    assert!(
        rest_at.iter().all(|(at, _)| *at == rest_at[0].0),
        "what follows the run id starts in different columns:\n{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("failing: a_check_with_a_rather_long_name"),
        "{}",
        human.stdout
    );
    // No line ends in the spaces of an empty cell.
    assert!(
        lines.iter().all(|line| !line.ends_with(' ')),
        "{:?}",
        human.stdout
    );
}

#[test]
fn the_phase_named_by_phasegate_phase_is_recorded_and_none_is_null_not_empty() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    repo.write("a.md", "# a\n");
    repo.commit_all("base");
    repo.config(BROKEN);

    // Named by PHASEGATE_PHASE, which needs no configuration to be read.
    let (code, verdict) = repo.verdict_with(&["--all-files"], &[("PHASEGATE_PHASE", "qa")]);
    assert_eq!(code, 2, "{verdict:#}");
    assert_eq!(verdict["phase"], "qa", "{verdict:#}");
    let runs = history(&repo);
    assert_eq!(runs[0]["status"], "config_error", "{runs:#?}");
    assert_eq!(runs[0]["phase"], "qa", "{runs:#?}");
    assert_eq!(state_runs(&repo)[0]["phase"], "qa");
    let queue = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(
        queue.json()["interventions"][0]["phase"],
        "qa",
        "{}",
        queue.stdout
    );

    // Fixed, a resume runs that phase again, though nothing names it now.
    repo.config(TWO_PHASES);
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["phase"], "qa", "{verdict:#}");
    assert_eq!(verdict["checks"][0]["name"], "review", "{verdict:#}");

    // Named by nothing: no phase, neither in the verdict nor in the
    // history, and `-` in the table.
    repo.config(BROKEN);
    let (code, verdict) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{verdict:#}");
    assert!(verdict["phase"].is_null(), "{verdict:#}");
    let runs = history(&repo);
    assert_eq!(runs[0]["status"], "config_error", "{runs:#?}");
    assert!(runs[0]["phase"].is_null(), "{runs:#?}");
    let kept = state_runs(&repo);
    let last = kept.last().unwrap();
    // Kept as an empty name, which an earlier phasegate reads too.
    assert_eq!(
        last["phase"], "",
        "`state.json` keeps a phase for a run that had none: {last:#}"
    );
    let human = repo.phasegate(&["history"]);
    let id = runs[0]["run_id"].as_str().unwrap();
    let line = human
        .stdout
        .lines()
        .find(|line| line.contains(id))
        .unwrap_or_else(|| panic!("{}", human.stdout));
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[1..4], ["config", "error", "-"], "{line}");

    // Fixed, a resume resolves the phase as a run would: the default.
    repo.config(TWO_PHASES);
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["phase"], "implementation", "{verdict:#}");
    assert_eq!(verdict["checks"][0]["name"], "tests", "{verdict:#}");
}

/// A feature branch checked out, with `origin/main` where `main` is:
/// what a pull request's CI job sees.
fn pull_request_checkout() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(DOCS).with_feature_branch();
    let main = repo.git(&["rev-parse", "main"]);
    repo.git(&["update-ref", "refs/remotes/origin/main", main.trim()]);
    repo.git(&["checkout", "-q", "feature"]);
    repo
}

#[test]
fn in_ci_a_run_stopped_by_its_configuration_records_the_pull_requests_range() {
    let repo = pull_request_checkout();
    repo.config(BROKEN);
    repo.commit_all("broken gate");
    let (code, verdict) = repo.verdict_with(&[], &pull_request("main"));
    assert_eq!(code, 2, "{verdict:#}");
    assert_eq!(verdict["error"]["kind"], "config", "{verdict:#}");
    assert_eq!(history(&repo)[0]["selection"], "range");
    let kept = &state_runs(&repo)[0]["selection"];
    assert_eq!(kept["mode"], "range", "{kept:#}");
    assert_eq!(kept["from"], "origin/main", "{kept:#}");
    assert_eq!(kept["to"], "HEAD", "{kept:#}");

    // Fixed, a resume checks that range again, out of CI too.
    repo.config(DOCS);
    repo.commit_all("gate fixed");
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["selection"]["mode"], "range", "{verdict:#}");
    assert_eq!(docs_files(&verdict), ["feature.md"], "{verdict:#}");
}

#[test]
fn in_ci_a_gate_broken_at_its_ref_records_the_range_or_that_it_is_not_known() {
    let repo = pull_request_checkout();
    // The target branch's gate, which judges the pull request, is broken:
    // the run stops before it selects anything.
    repo.git(&["checkout", "-q", "main"]);
    repo.config(BROKEN);
    repo.commit_all("broken gate");
    let main = repo.git(&["rev-parse", "main"]);
    repo.git(&["update-ref", "refs/remotes/origin/main", main.trim()]);
    repo.git(&["checkout", "-q", "feature"]);
    let gate = ["--config-from-ref", "origin/main"];
    let (code, verdict) = repo.verdict_with(&gate, &pull_request("main"));
    assert_eq!(code, 2, "{verdict:#}");
    assert_eq!(verdict["error"]["kind"], "config", "{verdict:#}");
    let runs = history(&repo);
    assert_eq!(runs[0]["status"], "config_error", "{runs:#?}");
    assert_eq!(runs[0]["selection"], "range", "{runs:#?}");
    let kept = &state_runs(&repo)[0]["selection"];
    assert_eq!(kept["mode"], "range", "{kept:#}");
    assert_eq!(kept["from"], "origin/main", "{kept:#}");
    assert_eq!(kept["config_from_ref"], "origin/main", "{kept:#}");

    // A target branch this clone lacks: the range cannot be told, and
    // the history says so rather than name one.
    let (code, verdict) = repo.verdict_with(&gate, &pull_request("release"));
    assert_eq!(code, 2, "{verdict:#}");
    let runs = history(&repo);
    assert_eq!(runs[0]["selection"], "unknown", "{runs:#?}");
    let kept = state_runs(&repo);
    let kept = &kept.last().unwrap()["selection"];
    assert_eq!(kept["mode"], "unknown", "{kept:#}");
    assert!(kept["from"].is_null() && kept["to"].is_null(), "{kept:#}");

    // Fixed, a resume selects as a run asked for nothing would: here,
    // out of CI, the staged files.
    repo.git(&["checkout", "-q", "main"]);
    repo.config(DOCS);
    repo.commit_all("gate fixed");
    let main = repo.git(&["rev-parse", "main"]);
    repo.git(&["update-ref", "refs/remotes/origin/main", main.trim()]);
    repo.git(&["checkout", "-q", "feature"]);
    repo.stage("staged.md", "# staged\n");
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["selection"]["mode"], "staged", "{verdict:#}");
    assert_eq!(docs_files(&verdict), ["staged.md"], "{verdict:#}");
}
