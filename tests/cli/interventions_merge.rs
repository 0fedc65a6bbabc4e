//! The intervention queue across an agent's retries: the same error again
//! is one more occurrence of its record, a record that takes in another
//! check's error names that check, and an interrupted run neither starts
//! the count of repeated errors again nor adds to it.

use std::path::PathBuf;
use std::process::Stdio;

use crate::support::{wait_for, TestRepo, BIN};

fn state(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/phasegate")
}

fn open_interventions(repo: &TestRepo) -> Vec<serde_json::Value> {
    let run = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["interventions"].as_array().unwrap().clone()
}

/// `tests` fails on the line `line.txt` names (the test moves as the agent
/// edits around it), always with the same assertion; `lint` fails only
/// while `lint-broken` is there.
const AGENT_LOOP: &str = r#"[gate]
escalate_after = 100

[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "echo \"src/lib.rs:$(cat line.txt):5: error: assertion failed: left == right\"; exit 1" },
  { name = "lint", shell = true, command = "if [ -f lint-broken ]; then echo 'src/main.rs:3:1: error: unused import'; exit 1; fi" },
]
"#;

#[test]
fn the_same_error_run_after_run_is_one_record_and_a_new_error_still_gets_its_own() {
    let repo = TestRepo::new();
    repo.config(AGENT_LOOP);
    let session = [("PHASEGATE_SESSION", "s1")];
    let mut last_run = String::new();
    for line in 10..15 {
        repo.write("line.txt", &line.to_string());
        let (code, v) = repo.verdict_with(&["--all-files"], &session);
        assert_eq!(code, 1, "{v:#}");
        assert_eq!(v["interventions"], serde_json::json!(["iv-0001"]), "{v:#}");
        last_run = v["run_id"].as_str().unwrap().to_string();
    }
    let open = open_interventions(&repo);
    assert_eq!(open.len(), 1, "{open:#?}");
    let record = &open[0];
    assert_eq!(record["occurrences"], 5, "{record:#}");
    assert_eq!(record["check"], "tests");
    assert_eq!(record["session"], "s1");
    // The newest run, whose logs are kept, and where the error is now.
    assert_eq!(record["run_id"], last_run.as_str(), "{record:#}");
    assert!(
        record["message"]
            .as_str()
            .unwrap()
            .contains("src/lib.rs:14:5 assertion failed"),
        "{record:#}"
    );

    // A new kind of error gets a record of its own, not emergency.log.
    repo.write("lint-broken", "");
    let (code, v) = repo.verdict_with(&["--all-files"], &session);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        v["interventions"],
        serde_json::json!(["iv-0001", "iv-0002"]),
        "{v:#}"
    );
    let open = open_interventions(&repo);
    let lint = open.iter().find(|r| r["check"] == "lint");
    assert!(lint.is_some(), "{open:#?}");
    assert!(
        !state(&repo).join("emergency.log").exists(),
        "{}",
        std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap_or_default()
    );
    // Without a session, the same error is counted on its own record.
    std::fs::remove_file(repo.path().join("lint-broken")).unwrap();
    for _ in 0..2 {
        let (_, v) = repo.verdict(&["--all-files"]);
        assert_eq!(v["interventions"], serde_json::json!(["iv-0003"]), "{v:#}");
    }
    // `lint` passed in those runs, on the branch it failed on: its
    // record is closed, and the two of `tests` stay open.
    let open = open_interventions(&repo);
    let ids: Vec<&str> = open.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["iv-0001", "iv-0003"], "{open:#?}");
}

/// A session's five slots taken by five types of error; `tests` fails
/// too, of the type `lint` has, once `tests-broken` is there.
const FIVE_TYPES: &str = r#"[gate]
escalate_after = 100

[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "echo 'a.c:1:1: error: lint'; exit 1" },
  { name = "gone", command = "no-such-tool-anywhere" },
  { name = "noisy", shell = true, command = "echo 'something broke'; exit 1" },
  { name = "crash", shell = true, command = "kill -SEGV $$" },
  { name = "tests", shell = true, command = "if [ -f tests-broken ]; then echo 'b.c:2:1: error: tests'; exit 1; fi" },
]
"#;

#[test]
fn a_record_that_takes_in_another_check_s_failure_names_both_checks() {
    let repo = TestRepo::new();
    repo.config(FIVE_TYPES);
    repo.stage(
        "handoffs/F1.md",
        "---\nid: F1\nstage: implementation\nstatus: in_progress\n---\n",
    );
    let session = [("PHASEGATE_SESSION", "s1")];
    repo.verdict_with(&["--all-files"], &session);
    assert_eq!(open_interventions(&repo).len(), 5);
    // The session is full: `tests`'s failure merges into `lint`'s record.
    repo.write("tests-broken", "");
    let (_, v) = repo.verdict_with(&["--all-files"], &session);
    let open = open_interventions(&repo);
    assert_eq!(open.len(), 5, "{open:#?}");
    let merged = open
        .iter()
        .find(|r| r["type"] == "check_failed")
        .unwrap_or_else(|| panic!("{open:#?}"));
    assert!(
        v["interventions"]
            .as_array()
            .unwrap()
            .contains(&merged["id"]),
        "{v:#}"
    );
    // `check` stays one name, as the schema has it; `checks` names both.
    assert_eq!(merged["check"], "lint", "{merged:#}");
    assert_eq!(
        merged["checks"],
        serde_json::json!(["lint", "tests"]),
        "{merged:#}"
    );
    // `lint` failed again, and `tests` failed: three in all.
    assert_eq!(merged["occurrences"], 3, "{merged:#}");
    let id = merged["id"].as_str().unwrap();
    let shown = repo.phasegate(&["interventions", "show", id]);
    assert!(
        shown.stdout.contains("checks      lint, tests"),
        "{}",
        shown.stdout
    );
}

/// `build` fails the same way every time; while `hold` is there it waits
/// first (having touched `started`), for the test to interrupt or kill it.
const HELD: &str = r#"[gate]
escalate_after = 3

[phases.implementation]
checks = [
  { name = "build", shell = true, command = "touch started; while [ -f hold ]; do sleep 0.05; done; echo 'a.c:1:1: error: stuck'; exit 1" },
]
"#;

/// Starts `phasegate run` with `build` held, waits until the check runs,
/// then sends `signal` to phasegate; its exit code.
fn stop_a_run(repo: &TestRepo, signal: &str) -> Option<i32> {
    repo.write("hold", "");
    // Every run touches it: only this one's may say the check started.
    let started = repo.path().join("started");
    let _ = std::fs::remove_file(&started);
    let mut child = repo
        .command(BIN)
        .args(["run", "--all-files", "--format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the check to start", || {
        assert!(child.try_wait().unwrap().is_none(), "phasegate ended early");
        started.exists().then_some(())
    });
    let sent = repo
        .command("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    // A check a killed phasegate left waiting ends by itself.
    std::fs::remove_file(repo.path().join("hold")).unwrap();
    status.code()
}

#[test]
fn an_interrupted_run_neither_starts_the_count_again_nor_adds_to_it() {
    let repo = TestRepo::new();
    repo.config(HELD);
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{v:#}");
    }
    // A Ctrl-C during the third attempt: it said nothing of the errors.
    assert_eq!(stop_a_run(&repo, "-INT"), Some(3));
    // Nor did the check crash: the queue says it was stopped.
    let open = open_interventions(&repo);
    let stopped: Vec<&serde_json::Value> = open
        .iter()
        .filter(|r| r["check"] == "build" && r["type"] != "check_failed")
        .collect();
    assert_eq!(stopped.len(), 1, "{open:#?}");
    assert_eq!(stopped[0]["type"], "interrupted", "{open:#?}");
    assert_eq!(stopped[0]["priority"], "low", "{open:#?}");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "the third failing run in a row escalates: {v:#}");
    assert!(
        v["notes"].to_string().contains("failed 3 runs in a row"),
        "{v:#}"
    );
    // A run killed outright records nothing, and breaks nothing either.
    assert_eq!(stop_a_run(&repo, "-KILL"), None);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert!(
        v["notes"].to_string().contains("failed 4 runs in a row"),
        "{v:#}"
    );
    // Escalated twice on the same errors: one record, counted twice, that
    // says how long it has gone on.
    let open = open_interventions(&repo);
    let repeated: Vec<&serde_json::Value> = open
        .iter()
        .filter(|r| r["type"] == "errors_repeated")
        .collect();
    assert_eq!(repeated.len(), 1, "{open:#?}");
    assert_eq!(repeated[0]["occurrences"], 2, "{open:#?}");
    assert!(
        repeated[0]["message"]
            .as_str()
            .unwrap()
            .contains("4 runs in a row"),
        "{open:#?}"
    );
}
