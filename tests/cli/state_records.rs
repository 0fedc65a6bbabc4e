//! What the state keeps of runs that stopped before their checks, and how
//! a problem with the state is said: once, with all it caused.

use crate::state::state;
use crate::state_locks::hold_protection_lock;
use crate::support::*;

/// A repository whose one check passes, or fails while `fail` exists.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"ok\", shell = true, command = \"test ! -e fail\" } ]\n",
    );
    repo.write(".gitignore", "fail\n");
    repo.commit_all("one");
    repo
}

/// The verdict's notes that mention `cause`.
pub(crate) fn notes_naming(v: &serde_json::Value, cause: &str) -> Vec<String> {
    v["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no notes in {v:#}"))
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .filter(|n| n.contains(cause))
        .collect()
}

/// The lines of `text` that mention `cause`.
pub(crate) fn lines_naming(text: &str, cause: &str) -> usize {
    text.lines().filter(|line| line.contains(cause)).count()
}

#[test]
fn a_run_stopped_before_its_checks_is_an_intervention_of_no_run_with_its_phase() {
    // Another run holds the unstaged changes aside: this one stops before
    // its checks, has no run id and keeps no run directory. Its record
    // says so with `null`, not an id nobody can look up.
    let repo = repo();
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "staged\nunstaged\n");
    let held = hold_protection_lock(&repo);
    let run = repo.phasegate(&["run", "--format", "json"]);
    drop(held);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    assert!(v["run_id"].is_null(), "{v:#}");
    // The phase was resolved before the run stopped.
    assert_eq!(v["phase"], "implementation", "{v:#}");
    let id = v["interventions"][0].as_str().unwrap().to_string();

    let list = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let listed = list.json();
    let record = &listed["interventions"][0];
    assert_eq!(record["id"], id.as_str(), "{listed:#}");
    assert!(record["run_id"].is_null(), "{listed:#}");
    assert_eq!(record["runs"], serde_json::json!([]), "{listed:#}");
    assert_eq!(record["phase"], "implementation", "{listed:#}");
    let queue = std::fs::read_to_string(state(&repo).join("interventions.jsonl")).unwrap();
    assert!(queue.contains("\"run_id\":null"), "{queue}");

    let shown = repo.phasegate(&["interventions", "show", &id]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown.stdout.contains(
            "\n  run         none: it stopped before its checks started, and kept no logs\n"
        ),
        "{}",
        shown.stdout
    );
    let shown = repo.phasegate(&["interventions", "show", &id, "--format", "json"]);
    assert!(shown.json()["run_id"].is_null(), "{}", shown.stdout);
    let human = repo.phasegate(&["interventions"]);
    assert!(
        human
            .stdout
            .contains(&format!("{id}  open     critical internal")),
        "{}",
        human.stdout
    );
    // Nothing was verified: the history has no run.
    let history = repo.phasegate(&["history", "--format", "json"]);
    assert_eq!(history.json()["runs"], serde_json::json!([]));
}

#[test]
fn a_record_an_earlier_version_gave_an_empty_run_id_reads_as_no_run() {
    let repo = repo();
    std::fs::create_dir_all(state(&repo)).unwrap();
    let earlier = r#"{"id":"iv-0001","type":"internal","priority":"critical","phase":"","check":null,"checks":[],"session":null,"run_id":"","runs":[""],"message":"another phasegate run (pid 4242) is protecting unstaged changes in this repository; wait for it to finish","occurrences":1,"status":"open","created_at":"2026-11-24T01:02:03Z","updated_at":"2026-11-24T01:02:03Z","note":null}"#;
    std::fs::write(
        state(&repo).join("interventions.jsonl"),
        format!("{earlier}\n"),
    )
    .unwrap();
    let list = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(list.stderr.is_empty(), "{}", list.stderr);
    let record = &list.json()["interventions"][0];
    assert!(record["run_id"].is_null(), "{record:#}");
    assert_eq!(record["runs"], serde_json::json!([]), "{record:#}");
    let shown = repo.phasegate(&["interventions", "show", "1"]);
    assert!(
        shown.stdout.contains("  run         none: "),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_state_lock_the_file_system_cannot_give_is_said_once_with_all_it_stopped() {
    // No pruning, no record, no queue: one lock error, one note.
    let repo = repo();
    repo.write("fail", "");
    let env = [("PHASEGATE_TEST_LOCK_ERROR", "ENOLCK:state")];
    let run = repo.phasegate_with(&["run", "--all-files", "--format", "json"], &env);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    let said = notes_naming(&v, "state.lock");
    assert_eq!(said.len(), 1, "{said:#?}");
    let note = &said[0];
    assert!(
        note.starts_with("the run was not recorded, nor will any be")
            && note.contains("does not support flock(2) locks")
            && note.contains("; old runs were not pruned either;")
            && note.contains("2 intervention(s) were written to `")
            && note.contains("emergency.log` instead of the queue"),
        "{note}"
    );
    assert_eq!(notes_naming(&v, "prune").len(), 1, "{v:#}");
    assert_eq!(notes_naming(&v, "emergency.log").len(), 1, "{v:#}");
    // Standard error tells the person watching, once too.
    assert_eq!(lines_naming(&run.stderr, "state.lock"), 1, "{}", run.stderr);

    // The human report says it once among its notes.
    let run = repo.phasegate_with(&["run", "--all-files"], &env);
    assert_eq!(lines_naming(&run.stdout, "state.lock"), 1, "{}", run.stdout);
}

#[test]
fn a_state_json_that_is_a_directory_is_said_once() {
    // It can be neither read nor replaced: one note, with what to do.
    let repo = repo();
    std::fs::create_dir_all(state(&repo).join("state.json")).unwrap();
    let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "passed", "{v:#}");
    let said = notes_naming(&v, "state.json");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].contains("nor could it be read")
            && said[0].contains("this run is not in the history: move that directory aside"),
        "{}",
        said[0]
    );
    assert_eq!(lines_naming(&run.stderr, "state.json"), 1, "{}", run.stderr);
}

#[test]
fn an_intervention_queue_that_cannot_be_read_is_said_once_with_where_the_records_went() {
    let repo = repo();
    repo.write("fail", "");
    std::fs::create_dir_all(state(&repo).join("interventions.jsonl")).unwrap();
    let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    let said = notes_naming(&v, "queue");
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].contains("it is a directory")
            && said[0].contains("1 intervention(s) were written to `")
            && said[0].contains("emergency.log` instead of the queue"),
        "{}",
        said[0]
    );
    let emergency = std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap();
    assert!(emergency.contains("check `ok` failed"), "{emergency}");
}
