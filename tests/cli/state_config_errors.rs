//! A run stopped by a configuration error is recorded: run directory, history, intervention.

use std::path::PathBuf;

use serde_json::Value;

use crate::history_killed::started_of;
use crate::support::{git_pushing, recorded_verdicts, TestRepo};

const GOOD: &str = "[gate]\nprofile = \"auto\"\n\n[phases.implementation]\nchecks = []\n";
/// `profile` misspelt, on line 2.
const BROKEN: &str = "[gate]\nprofle = \"auto\"\n\n[phases.implementation]\nchecks = []\n";
/// The same mistake, moved down to line 3 by a comment.
const BROKEN_MOVED: &str =
    "# the gate\n[gate]\nprofle = \"auto\"\n\n[phases.implementation]\nchecks = []\n";

/// A repository whose good configuration and `a.md` are committed, with
/// the pre-commit hook installed.
fn hooked_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(GOOD);
    repo.write("a.md", "# a\n");
    repo.commit_all("base");
    let installed = repo.phasegate(&["install"]);
    assert_eq!(installed.code, 0, "{installed:?}");
    repo
}

/// `git commit -qm MESSAGE` through the installed hook: whether git made
/// the commit, and all it printed.
fn commit(repo: &TestRepo, message: &str) -> (bool, String) {
    let run = git_pushing(repo, &["commit", "-qm", message]);
    (run.code == 0, format!("{}{}", run.stdout, run.stderr))
}

/// `phasegate history --format json`'s runs, newest first.
fn history(repo: &TestRepo) -> Vec<Value> {
    let run = repo.phasegate(&["history", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["runs"].as_array().unwrap().clone()
}

/// The intervention queue as `interventions list --all --format json`
/// prints it.
fn interventions(repo: &TestRepo) -> Vec<Value> {
    let run = repo.phasegate(&["interventions", "list", "--all", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["interventions"].as_array().unwrap().clone()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value:#}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_commit_refused_by_a_broken_config_is_in_the_history_and_its_intervention_grows() {
    let repo = hooked_repo();
    repo.stage("phasegate.toml", BROKEN);
    repo.stage("b.md", "# b\n");
    let (committed, said) = commit(&repo, "two");
    assert!(
        !committed,
        "a broken configuration let the commit through:\n{said}"
    );
    assert!(said.contains("profle"), "{said}");

    // The history names the run, the file and line, and what is wrong.
    let runs = history(&repo);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    let first = &runs[0];
    assert_eq!(first["status"], "config_error", "{first:#}");
    assert_eq!(first["error"]["kind"], "config");
    assert_eq!(first["error"]["file"], "phasegate.toml");
    assert_eq!(first["error"]["line"], 2);
    assert!(
        first["error"]["problem"]
            .as_str()
            .unwrap()
            .contains("unknown key `profle`"),
        "{first:#}"
    );
    let first_id = first["run_id"].as_str().unwrap().to_string();
    let human = repo.phasegate(&["history"]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let line = human
        .stdout
        .lines()
        .find(|line| line.contains(&first_id))
        .unwrap_or_else(|| panic!("{}", human.stdout));
    assert!(line.contains("config error"), "{line}");
    assert!(
        line.contains("phasegate.toml:2:1: unknown key `profle` in [gate]"),
        "{line}"
    );

    // Its directory holds its verdict, the error and the intervention
    // included.
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), 1, "{verdicts:#?}");
    let verdict = &verdicts[0];
    assert_eq!(verdict["run_id"], first_id.as_str());
    assert_eq!(verdict["status"], "incomplete");
    assert_eq!(verdict["error"]["kind"], "config");
    assert_eq!(verdict["error"]["problems"][0]["line"], 2);

    // One intervention, high, naming where the file is wrong.
    let queue = interventions(&repo);
    assert_eq!(queue.len(), 1, "{queue:#?}");
    let record = &queue[0];
    assert_eq!(record["type"], "config_error");
    assert_eq!(record["priority"], "high");
    assert_eq!(record["status"], "open");
    assert_eq!(record["occurrences"], 1);
    assert_eq!(record["run_id"], first_id.as_str());
    assert!(
        record["message"]
            .as_str()
            .unwrap()
            .contains("phasegate.toml:2: unknown key `profle` in [gate]"),
        "{record:#}"
    );
    assert_eq!(
        strings(&verdict["interventions"]),
        [record["id"].as_str().unwrap()]
    );

    // The same mistake on the next commit, on another line now: one more
    // occurrence of that record, not a record of its own.
    repo.stage("phasegate.toml", BROKEN_MOVED);
    repo.stage("c.md", "# c\n");
    let (committed, said) = commit(&repo, "three");
    assert!(!committed, "{said}");
    let runs = history(&repo);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert_eq!(runs[0]["error"]["line"], 3, "{:#}", runs[0]);
    let second_id = runs[0]["run_id"].as_str().unwrap().to_string();
    let queue = interventions(&repo);
    assert_eq!(queue.len(), 1, "{queue:#?}");
    assert_eq!(queue[0]["occurrences"], 2);
    assert_eq!(queue[0]["run_id"], second_id.as_str());
    let shown = repo.phasegate(&[
        "interventions",
        "show",
        queue[0]["id"].as_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        strings(&shown.json()["runs"]),
        [first_id.as_str(), second_id.as_str()]
    );

    // Fixed, the commit goes through; the record stays open until a
    // person resolves it, as a failed check's does once it passes.
    repo.stage("phasegate.toml", GOOD);
    let (committed, said) = commit(&repo, "four");
    assert!(committed, "{said}");
    assert_eq!(history(&repo)[0]["status"], "passed");
    let queue = interventions(&repo);
    assert_eq!(queue.len(), 1, "{queue:#?}");
    assert_eq!(queue[0]["status"], "open");
    assert_eq!(queue[0]["occurrences"], 2);
}

#[test]
fn the_recorded_verdict_is_the_one_printed() {
    let repo = TestRepo::new();
    repo.config(BROKEN);
    repo.stage("a.md", "# a\n");
    let (code, printed) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{printed:#}");
    let recorded = recorded_verdicts(&repo);
    assert_eq!(recorded, std::slice::from_ref(&printed));
    assert!(printed["run_id"].is_string(), "{printed:#}");
    assert_eq!(printed["interventions"].as_array().unwrap().len(), 1);
    // Asked for every file: a resume would ask for them again.
    let state: Value = serde_json::from_str(&repo.read(".git/phasegate/state.json")).unwrap();
    assert_eq!(state["runs"][0]["selection"]["mode"], "all");
}

#[test]
fn a_default_phase_that_does_not_exist_and_a_broken_gate_at_a_ref_are_recorded() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\ndefault_phase = \"implementaton\"\n\n[phases.implementation]\nchecks = []\n",
    );
    repo.stage("a.md", "# a\n");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 2, "{verdict:#}");
    let runs = history(&repo);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "config_error");
    assert_eq!(runs[0]["error"]["line"], 2, "{:#}", runs[0]);
    assert!(
        runs[0]["error"]["problem"]
            .as_str()
            .unwrap()
            .contains("`implementaton`"),
        "{:#}",
        runs[0]
    );

    // The gate a branch is judged by, broken on `main`.
    repo.config(BROKEN);
    repo.commit_all("broken gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.config(GOOD);
    repo.commit_all("feature");
    let (code, verdict) = repo.verdict(&["--config-from-ref", "main", "--all-files"]);
    assert_eq!(code, 2, "{verdict:#}");
    let runs = history(&repo);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert_eq!(runs[0]["status"], "config_error");
    assert_eq!(runs[0]["run_id"], verdict["run_id"]);
    assert!(
        runs[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("as `main` holds it"),
        "{:#}",
        runs[0]
    );
    let queue = interventions(&repo);
    assert_eq!(queue.len(), 2, "{queue:#?}");
    assert!(
        queue.iter().all(|r| r["type"] == "config_error"),
        "{queue:#?}"
    );
}

#[test]
fn resume_after_a_config_error_says_to_fix_the_file_then_runs_the_phase_once_it_loads() {
    let repo = TestRepo::new();
    repo.config(BROKEN);
    repo.stage("a.md", "# a\n");
    assert_eq!(repo.verdict(&["--all-files"]).0, 2);

    // Nothing ran, so nothing can be re-run: where to fix it.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 2, "{resumed:?}");
    let verdict = resumed.json();
    let message = verdict["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nothing to re-run")
            && message.contains("phasegate.toml:2:1: unknown key `profle` in [gate]"),
        "{message}"
    );

    // Fixed: the run is made again as it was asked, every check run.
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"true\" } ]\n");
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["status"], "passed", "{verdict:#}");
    assert_eq!(verdict["checks"][0]["name"], "docs");
    assert_eq!(verdict["checks"][0]["status"], "passed", "{verdict:#}");
    assert!(
        resumed.stderr.contains("which loads now"),
        "{}",
        resumed.stderr
    );
}

#[test]
fn nothing_is_kept_outside_a_repository_and_a_state_that_cannot_be_written_changes_no_answer() {
    // Outside a repository: no state directory is made for it.
    let plain = TestRepo::plain();
    plain.config(BROKEN);
    let temp = plain.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let run = plain.phasegate_with(
        &["run", "--format", "json"],
        &[("TMPDIR", temp.to_str().unwrap())],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.json()["run_id"].is_null());
    assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 0);

    // A file where `.git/phasegate` should be: the same answer, and a
    // note that says why nothing was recorded.
    let repo = TestRepo::new();
    repo.config(BROKEN);
    repo.stage("a.md", "# a\n");
    std::fs::write(repo.path().join(".git/phasegate"), "in the way\n").unwrap();
    let run = repo.phasegate(&["run", "--format", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let verdict = run.json();
    assert_eq!(verdict["status"], "incomplete");
    assert_eq!(verdict["next"], "fix");
    assert_eq!(verdict["error"]["kind"], "config");
    assert!(verdict["run_id"].is_null(), "{verdict:#}");
    let notes = strings(&verdict["notes"]).join("\n");
    assert!(notes.contains("it is not a directory"), "{notes}");
    assert!(run.stderr.contains("warning:"), "{}", run.stderr);
    assert_eq!(repo.read(".git/phasegate"), "in the way\n");
}

/// A pid no process has: that of a child that has ended.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_killed_write_through_linked_state_files_leaves_no_temporary_file_beside_their_targets() {
    let repo = TestRepo::new();
    repo.config(GOOD);
    repo.stage("a.md", "# a\n");
    assert_eq!(repo.verdict(&[]).0, 0);
    // The history and the queue are kept on another disk.
    let elsewhere: PathBuf = repo.home().join("state-disk");
    std::fs::create_dir(&elsewhere).unwrap();
    let kept_in = repo.path().join(".git/phasegate");
    std::fs::rename(kept_in.join("state.json"), elsewhere.join("history.json")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("history.json"), kept_in.join("state.json")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.join("queue.jsonl"),
        kept_in.join("interventions.jsonl"),
    )
    .unwrap();
    // What writes through them left when killed before the rename, and
    // what is not theirs to remove.
    let dead = dead_pid();
    let plant = |name: &str| {
        let path = elsewhere.join(name);
        std::fs::write(&path, "cut short").unwrap();
        path
    };
    let stale = [
        plant(&format!(".history.json.tmp-{dead}")),
        plant(&format!(".queue.jsonl.tmp-{dead}")),
    ];
    let kept = [
        // A writer still alive (this test), and young.
        plant(&format!(".history.json.tmp-{}", std::process::id())),
        // Another file's, and one that is no temporary file.
        plant(&format!(".notes.txt.tmp-{dead}")),
        plant(&format!("history.json.tmp-{dead}")),
    ];

    // A failing run writes both files through their links.
    repo.stage(
        "phasegate.toml",
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"false\" } ]\n",
    );
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert!(kept_in.join("state.json").is_symlink());
    assert!(kept_in.join("interventions.jsonl").is_symlink());
    let history: Value =
        serde_json::from_slice(&std::fs::read(elsewhere.join("history.json")).unwrap()).unwrap();
    assert_eq!(history["runs"].as_array().unwrap().len(), 2);
    assert!(elsewhere.join("queue.jsonl").is_file());
    for path in &stale {
        assert!(!path.exists(), "`{}` was left behind", path.display());
    }
    for path in &kept {
        assert!(path.exists(), "`{}` was removed", path.display());
    }
}

#[test]
fn history_shows_when_each_run_started_recorded_or_killed() {
    let repo = TestRepo::new();
    repo.config(GOOD);
    repo.stage("a.md", "# a\n");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict:#}");
    let id = verdict["run_id"].as_str().unwrap().to_string();
    // A run that took an hour is recorded an hour after it started.
    let file = repo.path().join(".git/phasegate/state.json");
    let mut state: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let recorded = "2031-01-02T03:04:05Z";
    state["runs"][0]["time"] = Value::from(recorded);
    std::fs::write(&file, serde_json::to_vec(&state).unwrap()).unwrap();
    // One killed before its verdict left its directory alone.
    let killed = "20200101T000000Z-4242";
    std::fs::create_dir(repo.path().join(".git/phasegate/runs").join(killed)).unwrap();

    let runs = history(&repo);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let by_id = |wanted: &str| {
        runs.iter()
            .find(|r| r["run_id"] == wanted)
            .unwrap_or_else(|| panic!("{runs:#?}"))
            .clone()
    };
    let done = by_id(&id);
    assert_eq!(done["started_at"], started_of(&id).as_str(), "{done:#}");
    assert_eq!(done["recorded_at"], recorded);
    assert_eq!(done["time"], recorded, "kept as it was");
    let cut = by_id(killed);
    assert_eq!(cut["started_at"], "2020-01-01T00:00:00Z");
    assert_eq!(cut["time"], "2020-01-01T00:00:00Z");

    let human = repo.phasegate(&["history"]);
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert!(lines[0].starts_with("started (UTC)"), "{}", human.stdout);
    let line = |id: &str| {
        *lines
            .iter()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{}", human.stdout))
    };
    assert!(line(&id).starts_with(&started_of(&id)), "{}", human.stdout);
    assert!(!human.stdout.contains(recorded), "{}", human.stdout);
    assert!(
        line(killed).starts_with("2020-01-01T00:00:00Z"),
        "{}",
        human.stdout
    );
}
