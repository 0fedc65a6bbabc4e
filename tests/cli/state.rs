//! Run state: history, repeated errors escalating, interventions with
//! backpressure, a corrupt or unwritable state, two runs at once, a kill
//! while the state is written, `resume`, `history`, pruning.

use std::path::PathBuf;

use crate::support::{check, wait_for, TestRepo, BIN};

/// phasegate's state directory in `repo`.
pub(crate) fn state(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/phasegate")
}

/// A check failing with whatever `msg.txt` holds, as a compiler line.
fn failing_with_message(repo: &TestRepo) {
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"printf 'a.c:1:1: error: %s\\\\n' \\\"$(cat msg.txt)\\\"; exit 1\" } ]\n",
    );
}

fn interventions(repo: &TestRepo, all: bool) -> Vec<serde_json::Value> {
    let mut args = vec!["interventions", "list", "--format", "json"];
    if all {
        args.push("--all");
    }
    let run = repo.phasegate(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["interventions"].as_array().unwrap().clone()
}

#[test]
fn the_same_errors_three_runs_in_a_row_escalate_and_different_ones_do_not() {
    let repo = TestRepo::new();
    failing_with_message(&repo);
    for word in ["alpha", "beta", "gamma"] {
        repo.write("msg.txt", word);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "different errors never escalate: {v:#}");
    }
    repo.write("msg.txt", "stuck");
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["status"], "blocked");
    assert_eq!(v["next"], "escalate");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("failed 3 runs in a row") && notes.contains("check `build`"),
        "{notes}"
    );
    // The next such run counts on.
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("failed 4 runs in a row"), "{notes}");
    // The queue, where a person looks, says so too: one record, counted
    // for each run escalated on those errors.
    let repeated: Vec<_> = interventions(&repo, false)
        .into_iter()
        .filter(|i| i["type"] == "errors_repeated")
        .collect();
    assert_eq!(repeated.len(), 1, "{repeated:?}");
    assert_eq!(repeated[0]["occurrences"], 2, "{repeated:?}");
    assert_eq!(repeated[0]["priority"], "high");
    assert!(
        repeated[0]["message"]
            .to_string()
            .contains("4 runs in a row"),
        "{repeated:?}"
    );

    let history = repo.phasegate(&["history", "--format", "json"]).json();
    let runs = history["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 7);
    assert_eq!(runs[0]["status"], "blocked");
    assert_eq!(runs[0]["failing"], serde_json::json!(["build"]));
    let human = repo.phasegate(&["history"]);
    assert!(
        human.stdout.contains("blocked") && human.stdout.contains("failing: build"),
        "{}",
        human.stdout
    );
}

#[test]
fn a_run_of_other_checks_neither_resets_nor_counts_toward_the_same_errors() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"echo 'a.c:1:1: error: stuck'; exit 1\" }, { name = \"lint\", command = \"true\" } ]\n",
    );
    // `build` fails the same way every time; the passing `--check lint`
    // runs in between say nothing about it.
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{v:#}");
        let (code, v) = repo.verdict(&["--all-files", "--check", "lint"]);
        assert_eq!(code, 0, "{v:#}");
    }
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["next"], "escalate");
}

#[test]
fn every_failure_becomes_an_intervention_a_person_can_resolve() {
    let repo = TestRepo::new();
    failing_with_message(&repo);
    repo.write("msg.txt", "broken");
    let (_, v) = repo.verdict_with(&["--all-files"], &[("PHASEGATE_SESSION", "agent-7")]);
    let ids = v["interventions"].as_array().unwrap();
    assert_eq!(ids.len(), 1, "{v:#}");
    let list = interventions(&repo, false);
    let record = &list[0];
    assert_eq!(record["id"], ids[0]);
    assert_eq!(record["type"], "check_failed");
    assert_eq!(record["priority"], "high");
    assert_eq!(record["check"], "build");
    assert_eq!(record["session"], "agent-7");
    assert_eq!(record["run_id"], v["run_id"]);
    assert_eq!(record["occurrences"], 1);
    assert_eq!(record["status"], "open");
    assert!(
        record["message"]
            .as_str()
            .unwrap()
            .contains("a.c:1:1 broken"),
        "{record:#}"
    );
    for key in ["phase", "created_at", "note"] {
        assert!(record.get(key).is_some(), "{key} in {record:#}");
    }

    let id = record["id"].as_str().unwrap();
    let shown = repo.phasegate(&["interventions", "show", id, "--format", "json"]);
    assert_eq!(shown.json()["id"], id);
    // For people: the record in words, not JSON.
    let shown = repo.phasegate(&["interventions", "show", id]);
    assert!(shown.stdout.starts_with(id), "{}", shown.stdout);
    assert!(shown.stdout.contains("occurrences 1"), "{}", shown.stdout);
    assert!(!shown.stdout.contains('{'), "{}", shown.stdout);
    let resolved = repo.phasegate(&["interventions", "resolve", id, "--note", "fixed the build"]);
    assert_eq!(resolved.code, 0, "{}", resolved.stderr);
    assert!(interventions(&repo, false).is_empty());
    let all = interventions(&repo, true);
    assert_eq!(all[0]["status"], "resolved");
    assert_eq!(all[0]["note"], "fixed the build");
    let missing = repo.phasegate(&["interventions", "show", "iv-9999"]);
    assert_eq!(missing.code, 2);
}

/// Six failing checks and an invalid handoff per run: six intervention
/// types (`check_failed`, `missing_tool`, `unparsed_failure`,
/// `tool_crashed`, `limit_reached`, `handoff_invalid`). The runs repeat
/// the same errors, which never escalate here (that would be a seventh).
const SIX_WAYS: &str = r#"[gate]
escalate_after = 100

[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "echo 'a.c:1:1: error: lint'; exit 1" },
  { name = "gone", command = "no-such-tool-anywhere" },
  { name = "noisy", shell = true, command = "echo 'something broke'; exit 1" },
  { name = "crash", shell = true, command = "kill -SEGV $$" },
  { name = "flood", shell = true, command = "i=0; while [ $i -lt 1001 ]; do echo \"f$i.c:1:1: error: e\"; i=$((i+1)); done" },
]
"#;

#[test]
fn backpressure_keeps_the_queue_bounded_and_drops_nothing() {
    let repo = TestRepo::new();
    repo.config(SIX_WAYS);
    repo.stage(
        "handoffs/F1.md",
        "---\nid: F1\nstage: implementation\nstatus: in_progress\n---\n",
    );
    // 3 runs of one session: 5 records, each error counted again on its
    // own; the sixth type has no record of its own in that session and
    // overflows.
    for _ in 0..3 {
        repo.verdict_with(&["--all-files"], &[("PHASEGATE_SESSION", "s1")]);
    }
    // 10 runs without a session: 6 more records, each the same error
    // again nine times.
    for _ in 0..10 {
        repo.verdict(&["--all-files"]);
    }
    let open = interventions(&repo, false);
    assert_eq!(open.len(), 11);
    let s1: Vec<&serde_json::Value> = open.iter().filter(|r| r["session"] == "s1").collect();
    assert_eq!(s1.len(), 5);
    assert!(s1.iter().all(|r| r["occurrences"] == 3), "{s1:#?}");
    let mut per_type = std::collections::BTreeMap::new();
    for r in &open {
        *per_type
            .entry(r["type"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    assert_eq!(per_type.len(), 6, "{per_type:?}");
    assert!(per_type.values().all(|n| *n <= 10), "{per_type:?}");
    let occurrences: u64 = open
        .iter()
        .map(|r| r["occurrences"].as_u64().unwrap())
        .sum();
    assert_eq!(occurrences, 75);
    // 13 runs × 6 = 78 = 75 in the queue + 3 in emergency.log.
    let emergency = std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap();
    assert_eq!(emergency.lines().count(), 3, "{emergency}");
    assert!(emergency.contains("handoff_invalid"));
}

#[test]
fn past_ten_of_one_type_the_count_grows() {
    let repo = TestRepo::new();
    failing_with_message(&repo);
    // Twelve errors of one type, none the same as another.
    for word in [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu",
    ] {
        repo.write("msg.txt", word);
        repo.verdict(&["--all-files"]);
    }
    let open = interventions(&repo, false);
    assert_eq!(open.len(), 10);
    let occurrences: Vec<u64> = open
        .iter()
        .map(|r| r["occurrences"].as_u64().unwrap())
        .collect();
    assert_eq!(occurrences.iter().sum::<u64>(), 12);
    assert_eq!(
        open.iter().filter(|r| r["occurrences"] == 3).count(),
        1,
        "{occurrences:?}"
    );
}

#[test]
fn a_state_another_version_wrote_is_left_as_it_is() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    repo.verdict(&["--all-files"]);
    let theirs = br#"{ "schema": "phasegate/state/v2", "runs": [ { "new": "shape" } ] }"#;
    std::fs::write(state(&repo).join("state.json"), theirs).unwrap();
    // Its history cannot be read: the run fails closed, says why, and adds
    // nothing to a file that is not its own; nothing is moved aside.
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert!(
        v["notes"]
            .to_string()
            .contains("another version of phasegate"),
        "{v:#}"
    );
    assert_eq!(
        std::fs::read(state(&repo).join("state.json")).unwrap(),
        theirs
    );
    let aside = std::fs::read_dir(state(&repo))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().contains("corrupt"))
        })
        .count();
    assert_eq!(aside, 0);
    assert_eq!(
        interventions(&repo, false)[0]["type"],
        "state_other_version"
    );
    let history = repo.phasegate(&["history"]);
    assert_ne!(history.code, 0);
    assert!(
        history.stderr.contains("another version of phasegate"),
        "{}",
        history.stderr
    );
}

#[test]
fn a_corrupt_state_is_moved_aside_and_the_run_fails_closed() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    repo.verdict(&["--all-files"]);
    std::fs::write(state(&repo).join("state.json"), b"{ not json").unwrap();
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(v["status"], "incomplete");
    assert!(v["notes"].to_string().contains("moved to"), "{v:#}");
    let aside: Vec<_> = std::fs::read_dir(state(&repo))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read(state(&repo).join(&aside[0])).unwrap(),
        b"{ not json"
    );
    let critical = interventions(&repo, false);
    assert_eq!(critical[0]["priority"], "critical");
    assert_eq!(critical[0]["type"], "state_corrupt");
    // The next run has a fresh state and passes.
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0);

    // A history there that cannot be read at all fails closed too, and
    // says what to fix. (A file whose every read fails, as a disk error
    // would make it; permissions would not stop root.)
    std::fs::remove_file(state(&repo).join("state.json")).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", state(&repo).join("state.json")).unwrap();
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert!(
        v["notes"].to_string().contains("could not be read"),
        "{v:#}"
    );
}

#[test]
fn a_state_that_cannot_be_written_does_not_change_the_verdict() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    // state.json is a directory: it can be neither read nor replaced.
    std::fs::create_dir_all(state(&repo).join("state.json")).unwrap();
    let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["status"], "passed");
    assert!(
        run.stderr.contains("failed to write `state.json`"),
        "{}",
        run.stderr
    );
    let emergency = std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap();
    assert!(
        emergency.contains("failed to write `state.json`"),
        "{emergency}"
    );

    // The whole state directory unusable (a file where it should be): the
    // logs go to the temporary directory and the verdict still stands.
    let other = TestRepo::new();
    other.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    std::fs::write(state(&other), b"not a directory").unwrap();
    let run = other.phasegate(&["run", "--all-files", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "passed");
    assert!(
        v["notes"]
            .to_string()
            .contains("failed to create a run directory"),
        "{v:#}"
    );
    assert!(run.stderr.contains("was not recorded"), "{}", run.stderr);
}

#[test]
fn two_runs_at_once_both_land_in_the_history() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"slow\", command = \"sleep 0.3\" } ]\n",
    );
    let start = || {
        repo.command(BIN)
            .args(["run", "--all-files", "--format", "json"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (start(), start());
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    let text = std::fs::read_to_string(state(&repo).join("state.json")).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["runs"].as_array().unwrap().len(), 2);
    // Let go of: the lock names no holder.
    assert_eq!(
        std::fs::read_to_string(state(&repo).join("state.lock")).unwrap(),
        ""
    );
}

#[test]
fn a_kill_while_the_state_is_written_leaves_the_previous_state() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    repo.verdict(&["--all-files"]);
    let before = std::fs::read(state(&repo).join("state.json")).unwrap();
    let mut child = repo
        .command(BIN)
        .args(["run", "--all-files", "--format", "json"])
        .env("PHASEGATE_TEST_PAUSE_AT", "state-rename")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let marker = state(&repo).join("paused");
    let started = std::time::Instant::now();
    while !marker.exists() {
        assert!(started.elapsed().as_secs() < 60, "never paused");
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before the pause"
        );
        std::thread::yield_now();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(
        std::fs::read(state(&repo).join("state.json")).unwrap(),
        before
    );
    // The killed run's new state is in the spare, never put in place.
    let spare = state(&repo).join(".state.json.spare");
    let unplaced: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&spare).unwrap()).unwrap();
    assert_eq!(unplaced["runs"].as_array().unwrap().len(), 2);
    // The dead run's lock is taken over and the history goes on: the
    // spare is written over and takes the place of the previous state.
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0);
    let history = repo.phasegate(&["history", "--format", "json"]).json();
    // The two recorded runs, and the killed one, shown from its directory.
    let statuses: Vec<&str> = history["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["passed", "killed", "passed"]);
    assert_eq!(std::fs::read(&spare).unwrap(), before);
    let names: Vec<String> = std::fs::read_dir(state(&repo))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("state.json"))
        .collect();
    assert_eq!(names.len(), 2, "state.json and its spare only: {names:?}");
}

#[test]
fn resume_runs_again_only_what_failed_and_keeps_the_passes() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "fine", shell = true, command = "echo ran >> fine.count" },
  { name = "flaky", shell = true, command = "test -f fixed" },
]
"#,
    );
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    repo.write("fixed", "");
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "passed");
    assert_eq!(check(&v, "flaky")["status"], "passed");
    assert!(check(&v, "fine")["reason"]
        .as_str()
        .unwrap()
        .contains("not run again"));
    // `fine` ran once, in the first run only.
    assert_eq!(repo.read("fine.count"), "ran\n");
    let again = repo.phasegate(&["resume"]);
    assert_eq!(again.code, 0);
    assert!(
        again.stderr.contains("nothing to resume"),
        "{}",
        again.stderr
    );
}

#[test]
fn old_runs_are_pruned() {
    let repo = TestRepo::new();
    repo.config("[gate]\nkeep_runs = 2\n[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    let mut ids = Vec::new();
    for _ in 0..4 {
        let (_, v) = repo.verdict(&["--all-files"]);
        ids.push(v["run_id"].as_str().unwrap().to_string());
    }
    let runs = state(&repo).join("runs");
    let mut left: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ids[2..]);
}

#[test]
fn a_run_still_going_is_never_pruned_by_another() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nkeep_runs = 1\n[phases.implementation]\nchecks = [\n  { name = \"wait\", shell = true, command = \"while [ ! -e go ]; do sleep 0.05; done; echo done\" },\n  { name = \"quick\", command = \"true\" },\n]\n",
    );
    let slow = repo
        .command(BIN)
        .args(["run", "--all-files", "--check", "wait", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let runs = state(&repo).join("runs");
    let slow_dir = wait_for("the slow run to start its check", || {
        std::fs::read_dir(&runs)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("wait.log").exists())
    });
    // Two quick runs while the slow one waits: with one run kept, each
    // prunes what is older than itself, except a run still going.
    let mut quick = Vec::new();
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files", "--check", "quick"]);
        assert_eq!(code, 0);
        quick.push(v["run_id"].as_str().unwrap().to_string());
    }
    repo.write("go", "");
    let out = slow.wait_with_output().unwrap();
    assert!(out.status.success());
    let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["status"], "passed");
    assert!(
        slow_dir.join("verdict.json").exists(),
        "the slow run lost its directory"
    );
    assert!(
        std::fs::read_to_string(slow_dir.join("wait.log"))
            .unwrap()
            .contains("done"),
        "the slow run's log is gone"
    );
    assert!(
        !runs.join(&quick[0]).exists(),
        "an ended run beyond keep_runs stays"
    );
}

#[test]
fn linked_worktrees_share_the_state() {
    let repo = TestRepo::new();
    repo.stage("a.txt", "a\n");
    repo.git(&["commit", "-qm", "base"]);
    let linked = repo.home().join(format!(
        "{}-linked",
        repo.path().file_name().unwrap().to_string_lossy()
    ));
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        linked.to_str().unwrap(),
    ]);
    std::fs::write(
        linked.join("phasegate.toml"),
        "[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n",
    )
    .unwrap();
    let run = repo
        .command(BIN)
        .current_dir(&linked)
        .args(["run", "--all-files", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let history = repo.phasegate(&["history", "--format", "json"]).json();
    assert_eq!(history["runs"].as_array().unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(&linked);
}

#[test]
fn a_killed_run_s_snapshot_is_pruned_and_a_live_one_is_not() {
    let repo = TestRepo::new();
    let go = repo.path().join("go");
    repo.config(&format!(
        "[gate]\nisolation = \"snapshot\"\n[phases.implementation]\nchecks = [\n  {{ name = \"wait\", shell = true, command = \"while [ ! -e '{}' ]; do sleep 0.05; done; cat a.txt\" }},\n  {{ name = \"quick\", command = \"true\" }},\n]\n",
        go.display()
    ));
    repo.stage("a.txt", "staged\n");
    // What a killed run left: a checkout, and no run still holding it.
    let leftover = repo.snapshots_dir().join("20200101T000000Z-1");
    std::fs::create_dir_all(&leftover).unwrap();
    std::fs::write(leftover.join("a.txt"), "old\n").unwrap();

    let slow = repo
        .command(BIN)
        .args(["run", "--check", "wait", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let snapshots = repo.snapshots_dir();
    wait_for("the slow run's snapshot", || {
        std::fs::read_dir(&snapshots)
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.path() != leftover && e.path().join("a.txt").exists())
            .then_some(())
    });
    // Another run prunes while the slow one is still in its snapshot.
    let (code, v) = repo.verdict(&["--all-files", "--check", "quick"]);
    let pruned = !leftover.exists();
    // Let the slow run finish before anything can fail the test.
    std::fs::write(&go, "").unwrap();
    let out = slow.wait_with_output().unwrap();
    assert_eq!(code, 0, "{v:#}");
    assert!(pruned, "the killed run's snapshot is gone");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "passed", "{v:#}");
    let log = repo.read(check(&v, "wait")["log"].as_str().unwrap());
    assert!(log.ends_with("staged\n"), "{log}");
    assert!(std::fs::read_dir(&snapshots).unwrap().next().is_none());
}

#[test]
fn resume_runs_again_a_timed_out_check_and_a_pass_whose_configuration_changed() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"slow\", command = \"sleep 5\", timeout = \"300ms\" }, { name = \"ok\", command = \"true\" } ]\n",
    );
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3);
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    assert_eq!(check(&v, "slow")["status"], "timed_out");
    assert!(check(&v, "ok")["reason"]
        .as_str()
        .unwrap()
        .contains("not run again"));

    // The pass of `ok` stood for `true`; `ok` is now `false`.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"slow\", command = \"true\" }, { name = \"ok\", command = \"false\" } ]\n",
    );
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    assert_eq!(check(&v, "ok")["status"], "failed");
    assert_eq!(check(&v, "slow")["status"], "passed");

    // After a run that passed, a check the configuration changed since
    // runs again too.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"slow\", command = \"true\" }, { name = \"ok\", command = \"true\" } ]\n",
    );
    assert_eq!(repo.verdict(&["--all-files"]).0, 0);
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"slow\", command = \"true\" }, { name = \"ok\", command = \"false\" } ]\n",
    );
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(check(&run.json(), "ok")["status"], "failed");
}

#[test]
fn history_resume_and_interventions_answer_in_json_and_lose_no_note() {
    let repo = TestRepo::new();
    // Nothing run yet: `resume` still answers with one verdict.
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["summary"][0]
        .as_str()
        .unwrap()
        .contains("nothing to resume"));

    repo.config("[phases.implementation]\nchecks = [ { name = \"bad\", command = \"false\" } ]\n");
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    let history = repo.phasegate(&["history", "--limit", "0"]);
    assert!(
        history.stdout.contains("1 run(s) recorded"),
        "{}",
        history.stdout
    );

    let unknown = repo.phasegate(&["interventions", "show", "iv-9999", "--format", "json"]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.json()["error"]
        .as_str()
        .unwrap()
        .contains("iv-9999"));

    let id = interventions(&repo, false)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let empty = repo.phasegate(&["interventions", "resolve", &id, "--note", " "]);
    assert_eq!(empty.code, 2);
    for (note, said) in [
        ("first fix", format!("resolved {id}\n")),
        ("second look", format!("{id} was already resolved")),
    ] {
        let run = repo.phasegate(&["interventions", "resolve", &id, "--note", note]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.starts_with(&said), "{}", run.stdout);
    }
    let all = interventions(&repo, true);
    let record = all.iter().find(|r| r["id"] == id.as_str()).unwrap();
    assert_eq!(record["note"], "first fix\nsecond look");
}

fn handoff_fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/fixtures/handoff/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// A valid document that says it waits for a person.
const BLOCKED_HANDOFF: &str = "---\nid: F1\nstage: implementation\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\nstatus: blocked\nblock_reason: needs_human_input\nblock_details: who decides the API?\nhandoff_ready: false\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: fail\n  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n---\n";

#[test]
fn resume_after_a_run_no_check_failed_runs_the_gate_again() {
    let repo = TestRepo::new();
    // No check verifies a claim, so none is made.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"fine\", shell = true, command = \"echo ran >> fine.count\" } ]\n[handoff.claims]\ntests_passing = \"\"\nno_lint_errors = \"\"\n",
    );
    // An invalid handoff fails the run; every check passed.
    repo.stage(
        "handoffs/F1.md",
        "---\nid: F1\nstage: implementation\nstatus: bogus\n---\n",
    );
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 1, "the document is still invalid: {}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "failed");
    assert!(check(&v, "fine")["reason"]
        .as_str()
        .unwrap()
        .contains("passed in run"));
    // Fixed, the resume validates it again and passes.
    repo.stage("handoffs/F1.md", &handoff_fixture("valid-complete.md"));
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["status"], "passed");
    assert_eq!(repo.read("fine.count"), "ran\n", "`fine` ran only once");

    // A blocked document: a resume still needs a person.
    repo.stage("handoffs/F1.md", BLOCKED_HANDOFF);
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4);
    let run = repo.phasegate(&["resume"]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);

    // A history that could not be read: the run was incomplete; the
    // resume begins on the new history and passes.
    repo.git(&["rm", "-qf", "handoffs/F1.md"]);
    std::fs::write(state(&repo).join("state.json"), b"{").unwrap();
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3);
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["status"], "passed");
}

#[test]
fn resume_keeps_the_warnings_and_skips_it_does_not_run_again() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "echo 'w.c:3:1: error: style'; exit 1", on_failure = "warn" },
  { name = "flaky", shell = true, command = "test -f fixed" },
  { name = "docs", command = "true", files = ["*.md"] },
]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    repo.write("fixed", "");
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "warned", "{v:#}");
    let checks: Vec<(&str, &str)> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        checks,
        [("lint", "warned"), ("flaky", "passed"), ("docs", "skipped")]
    );
    // The history keeps them as they were too.
    let text = std::fs::read_to_string(state(&repo).join("state.json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&text).unwrap();
    let last = saved["runs"].as_array().unwrap().last().unwrap();
    assert_eq!(last["status"], "warned");
    let statuses: Vec<&str> = last["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["warned", "passed", "skipped"]);
}

#[test]
fn resume_after_the_failing_check_was_removed_runs_what_is_left_and_says_so() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\" }, { name = \"b\", command = \"false\" } ]\n",
    );
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\" }, { name = \"b2\", command = \"true\" } ]\n",
    );
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "passed");
    assert_eq!(check(&v, "b2")["status"], "passed");
    assert!(check(&v, "a")["reason"]
        .as_str()
        .unwrap()
        .contains("not run again"));
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("no longer has") && notes.contains("`b` (failed)"),
        "{notes}"
    );
}

#[test]
fn a_handoff_that_needs_a_person_becomes_an_intervention() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    repo.stage("handoffs/F016.md", &handoff_fixture("escalates.md"));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["interventions"].as_array().unwrap().len(), 1, "{v:#}");
    repo.git(&["rm", "-qf", "handoffs/F016.md"]);
    repo.stage("handoffs/F1.md", BLOCKED_HANDOFF);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["interventions"].as_array().unwrap().len(), 1, "{v:#}");

    let open = interventions(&repo, false);
    assert_eq!(open.len(), 2, "{open:#?}");
    for (record, path) in open.iter().zip(["handoffs/F016.md", "handoffs/F1.md"]) {
        assert_eq!(record["priority"], "high", "{record:#}");
        let message = record["message"].as_str().unwrap();
        assert!(
            message.contains(path) && message.contains("a person is needed"),
            "{record:#}"
        );
    }
}

#[test]
fn unreadable_queue_lines_are_kept_then_moved_once_to_emergency_log() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"flaky\", shell = true, command = \"test -f fixed\" } ]\n",
    );
    repo.verdict(&["--all-files"]);
    // Another session: a record of its own.
    repo.verdict_with(&["--all-files"], &[("PHASEGATE_SESSION", "s2")]);
    let queue = state(&repo).join("interventions.jsonl");
    let not_utf8: &[u8] = b"{\"id\":\"iv-0008\",\"message\":\"caf\xe9\"}";
    let torn: &[u8] = b"{\"id\":\"iv-0009\",\"type\":\"check_fa";
    let mut bytes = std::fs::read(&queue).unwrap();
    bytes.extend_from_slice(not_utf8);
    bytes.push(b'\n');
    bytes.extend_from_slice(torn);
    std::fs::write(&queue, &bytes).unwrap();
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    let count =
        |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).filter(|w| *w == needle).count();

    // The records around them are read, and the lines named.
    let list = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(list.json()["interventions"].as_array().unwrap().len(), 2);
    assert!(
        list.stderr.contains("interventions.jsonl") && list.stderr.contains("line 3, 4"),
        "{}",
        list.stderr
    );
    let show = repo.phasegate(&["interventions", "show", "iv-0001"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    // Resolving a record writes the queue again, those lines with it.
    let resolved = repo.phasegate(&["interventions", "resolve", "iv-0001", "--note", "done"]);
    assert_eq!(resolved.code, 0, "{}", resolved.stderr);
    let after = std::fs::read(&queue).unwrap();
    assert!(contains(&after, not_utf8) && contains(&after, torn));

    // A run moves them to emergency.log, once, and says so.
    repo.write("fixed", "");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["notes"].to_string().contains("were moved to"), "{v:#}");
    repo.verdict(&["--all-files"]);
    let emergency = std::fs::read(state(&repo).join("emergency.log")).unwrap();
    assert_eq!(count(&emergency, not_utf8), 1);
    assert_eq!(count(&emergency, torn), 1);
    assert!(
        contains(&emergency, b"line 4 of"),
        "{}",
        String::from_utf8_lossy(&emergency)
    );
    let after = std::fs::read(&queue).unwrap();
    assert!(!contains(&after, not_utf8) && !contains(&after, torn));
    assert_eq!(interventions(&repo, true).len(), 2);
}

#[test]
fn a_queue_that_cannot_be_read_is_named_and_its_interventions_kept() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"bad\", command = \"false\" } ]\n");
    std::fs::create_dir_all(state(&repo).join("interventions.jsonl")).unwrap();
    let list = repo.phasegate(&["interventions", "list", "--format", "json"]);
    assert_eq!(list.code, 3);
    let error = list.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("interventions.jsonl") && error.contains("move it aside"),
        "{error}"
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("instead of the queue") && !notes.contains("limits"),
        "{notes}"
    );
    let emergency = std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap();
    assert!(emergency.contains("check `bad` failed"), "{emergency}");
}

#[test]
fn history_and_resume_answer_in_json_when_the_state_is_not_what_they_expect() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0);
    // The last run passed but its directory is gone.
    std::fs::remove_dir_all(state(&repo).join("runs")).unwrap();
    let run = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "passed");
    assert!(v["notes"].to_string().contains("`ok` passed"), "{v:#}");

    std::fs::write(state(&repo).join("state.json"), b"{").unwrap();
    let history = repo.phasegate(&["history", "--format", "json"]);
    assert_eq!(history.code, 3);
    assert!(history.json()["error"]
        .as_str()
        .unwrap()
        .contains("state.json"));
}

#[test]
fn a_state_directory_that_is_a_file_is_named_with_what_to_do() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    std::fs::write(state(&repo), b"not a directory").unwrap();
    let dir = state(&repo).display().to_string();
    let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let said = format!("`{dir}`: it is not a directory");
    assert!(
        run.stderr.contains(&said) && run.stderr.contains("move that file aside"),
        "{}",
        run.stderr
    );
    let resolve = repo.phasegate(&["interventions", "resolve", "iv-0001", "--note", "x"]);
    assert_eq!(resolve.code, 3);
    assert!(
        resolve.stderr.contains(&said) && resolve.stderr.contains("move that file aside"),
        "{}",
        resolve.stderr
    );
}

#[test]
fn an_internal_failure_that_stops_a_run_becomes_a_critical_intervention() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\" } ]\n");
    repo.write("d/f", "x\n")
        .write("b.txt", "y\n")
        .commit_all("base");
    // A staged run that cannot set the unstaged change aside: a tracked
    // directory is a symbolic link now.
    repo.stage("b.txt", "staged\n");
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("f"), "changed\n").unwrap();
    std::fs::remove_dir_all(repo.path().join("d")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), repo.path().join("d")).unwrap();
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(v["error"]["kind"], "internal");
    let id = v["interventions"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!id.is_empty(), "{v:#}");
    let run = repo.phasegate(&["interventions", "list", "--format", "json"]);
    let list = run.json();
    let record = list["interventions"]
        .as_array()
        .and_then(|all| all.iter().find(|i| i["id"] == id.as_str()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(record["priority"], "critical", "{list:#}");
    assert!(
        record["message"].to_string().contains("symbolic link"),
        "{list:#}"
    );
}

#[test]
fn logs_that_cannot_go_under_git_go_to_a_temporary_directory_of_the_users_own_and_are_pruned() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nkeep_runs = 2\n[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\" } ]\n",
    );
    std::fs::create_dir_all(repo.path().join(".git/phasegate")).unwrap();
    // Something that is not a directory where the runs go.
    std::fs::write(repo.path().join(".git/phasegate/runs"), "in the way\n").unwrap();
    let temp = tempfile::tempdir().unwrap();
    let tmpdir = temp.path().to_str().unwrap();
    for _ in 0..4 {
        let (code, v) = repo.verdict_with(&["--all-files"], &[("TMPDIR", tmpdir)]);
        assert_eq!(code, 0, "{v:#}");
        assert!(
            v["notes"].to_string().contains("the logs are under"),
            "{v:#}"
        );
    }
    let fallback: Vec<_> = std::fs::read_dir(temp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(fallback.len(), 1, "{fallback:?}");
    assert!(fallback[0].starts_with("phasegate-runs-"), "{fallback:?}");
    let runs = std::fs::read_dir(temp.path().join(&fallback[0]).join("runs"))
        .unwrap()
        .count();
    assert!(
        runs <= 3,
        "pruned to keep_runs (and the run going on): {runs}"
    );
}

#[test]
fn interventions_emergency_log_cannot_take_are_not_said_to_be_there() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"f1\", command = \"false\" },\n  { name = \"f2\", command = \"false\" },\n  { name = \"f3\", command = \"false\" },\n  { name = \"f4\", command = \"false\" },\n  { name = \"f5\", command = \"false\" },\n  { name = \"m1\", command = \"no-such-tool-phasegate-test\" },\n]\n",
    );
    // A session gets 5 records: the sixth, of a type of its own, goes
    // over the queue's limits to emergency.log, which cannot be written.
    std::fs::create_dir_all(state(&repo).join("emergency.log")).unwrap();
    let run = repo.phasegate_with(
        &["run", "--all-files", "--format", "json"],
        &[("PHASEGATE_SESSION", "s1")],
    );
    let v = run.json();
    let notes: Vec<String> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    assert!(
        !notes.iter().any(|n| n.contains("were written to")),
        "{notes:#?}"
    );
    assert!(
        notes.iter().any(
            |n| n.contains("1 intervention(s) over the queue's limits were not kept")
                && n.contains("emergency.log")
        ),
        "{notes:#?}"
    );
    // Nor is it lost: standard error has it.
    assert!(
        run.stderr.contains("no-such-tool-phasegate-test"),
        "{}",
        run.stderr
    );

    // Where it can be written, it is, and said so.
    std::fs::remove_dir(state(&repo).join("emergency.log")).unwrap();
    let (_, v) = repo.verdict_with(&["--all-files"], &[("PHASEGATE_SESSION", "s2")]);
    assert!(
        v["notes"]
            .to_string()
            .contains("1 intervention(s) over the queue's limits were written to"),
        "{v:#}"
    );
}

/// Rewrites the records of `interventions.jsonl` with `edit`.
fn edit_queue(repo: &TestRepo, edit: impl Fn(&mut Vec<serde_json::Value>)) {
    let path = state(repo).join("interventions.jsonl");
    let mut records: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    edit(&mut records);
    let mut text = String::new();
    for record in &records {
        text.push_str(&record.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
}

#[test]
fn the_highest_id_and_count_in_the_queue_neither_panic_nor_lose_the_run_s_intervention() {
    let repo = TestRepo::new();
    failing_with_message(&repo);
    let session = [("PHASEGATE_SESSION", "s1")];
    let words =
        std::cell::RefCell::new(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"].iter());
    let run = |repo: &TestRepo| {
        // Other errors each time: the same ones would escalate.
        repo.write("msg.txt", words.borrow_mut().next().unwrap());
        let run = repo.phasegate_with(&["run", "--all-files", "--format", "json"], &session);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert_eq!(run.code, 1, "{}", run.stderr);
        run.json()
    };
    run(&repo);
    edit_queue(&repo, |records| {
        records[0]["id"] = serde_json::json!(format!("iv-{}", u64::MAX));
    });
    let v = run(&repo);
    assert_eq!(v["interventions"], serde_json::json!(["iv-0001"]), "{v:#}");
    // Five open records in the session: the next merges into the newest,
    // whose count is at its ceiling.
    for _ in 0..3 {
        run(&repo);
    }
    edit_queue(&repo, |records| {
        let newest = records.last_mut().unwrap();
        assert_eq!(newest["id"], "iv-0004");
        newest["occurrences"] = serde_json::json!(u32::MAX);
    });
    let v = run(&repo);
    assert_eq!(v["interventions"], serde_json::json!(["iv-0004"]), "{v:#}");
    let open = interventions(&repo, false);
    let newest = open.iter().find(|r| r["id"] == "iv-0004").unwrap();
    assert_eq!(newest["occurrences"], u32::MAX, "{open:#?}");
}

#[test]
fn pruning_leaves_and_does_not_count_what_is_no_run() {
    let repo = TestRepo::new();
    repo.config("[gate]\nkeep_runs = 2\n[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    let mut ids = Vec::new();
    let (_, v) = repo.verdict(&["--all-files"]);
    ids.push(v["run_id"].as_str().unwrap().to_string());
    let runs = state(&repo).join("runs");
    std::fs::create_dir_all(runs.join("0-saved-logs")).unwrap();
    std::fs::write(runs.join("0-saved-logs/notes.txt"), "mine\n").unwrap();
    std::fs::create_dir_all(runs.join("zz-other")).unwrap();
    for _ in 0..3 {
        let (_, v) = repo.verdict(&["--all-files"]);
        ids.push(v["run_id"].as_str().unwrap().to_string());
    }
    let mut left: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected = vec!["0-saved-logs".to_string()];
    expected.extend_from_slice(&ids[2..]);
    expected.push("zz-other".to_string());
    assert_eq!(left, expected);
    assert_eq!(
        std::fs::read_to_string(runs.join("0-saved-logs/notes.txt")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_check_named_like_another_s_log_file_gets_a_log_of_its_own() {
    let repo = TestRepo::new();
    let config = |second: &str| {
        format!(
            "[phases.implementation]\nchecks = [\n  {{ name = \"a/b\", command = \"echo FROM_SLASH\" }},\n  {{ name = \"{second}\", command = \"echo FROM_PLAIN\" }},\n]\n"
        )
    };
    repo.config(&config("plain"));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    let log = check(&v, "a/b")["log"].as_str().unwrap().to_string();
    let stem = std::path::Path::new(&log)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // A second check named as the first's log file is.
    repo.config(&config(&stem));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    let slash = check(&v, "a/b")["log"].as_str().unwrap().to_string();
    let plain = check(&v, &stem)["log"].as_str().unwrap().to_string();
    assert_ne!(slash, plain);
    let read = |log: &str| std::fs::read_to_string(repo.path().join(log)).unwrap();
    assert_eq!(read(&slash), "FROM_SLASH\n");
    assert_eq!(read(&plain), "FROM_PLAIN\n");
}

#[test]
fn a_temporary_log_directory_that_is_not_the_users_own_is_never_followed_nor_pruned() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nkeep_runs = 1\n[phases.implementation]\nchecks = [ { name = \"a\", command = \"echo SECRET_OUTPUT\" } ]\n",
    );
    // The state directory cannot be written: the logs go to the temporary
    // directory.
    std::fs::write(state(&repo), b"not a directory").unwrap();
    let temp = tempfile::tempdir().unwrap();
    let uid = std::fs::metadata(temp.path()).unwrap().uid();
    let shared = temp.path().join(format!("phasegate-runs-{uid}"));
    // Another user planted a link where the logs go, to directories that
    // look like old runs.
    let target = tempfile::tempdir().unwrap();
    let old_runs = ["20000101T000000Z-1", "20000101T000000Z-2"];
    for id in old_runs {
        std::fs::create_dir_all(target.path().join("runs").join(id)).unwrap();
    }
    std::os::unix::fs::symlink(target.path(), &shared).unwrap();
    let tmpdir = temp.path().to_str().unwrap();
    let (code, v) = repo.verdict_with(&["--all-files"], &[("TMPDIR", tmpdir)]);
    assert_eq!(code, 0, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("it is a symbolic link") && notes.contains("the logs are under"),
        "{notes}"
    );
    let mut there: Vec<String> = std::fs::read_dir(target.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    there.sort();
    assert_eq!(there, old_runs, "written in or pruned through the link");
    // The log is in a directory of the run's own, and only its user's.
    let log = std::path::PathBuf::from(check(&v, "a")["log"].as_str().unwrap());
    assert!(log.starts_with(temp.path()), "{}", log.display());
    assert!(!log.starts_with(&shared), "{}", log.display());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "SECRET_OUTPUT\n");
    let own = log.parent().unwrap().parent().unwrap().parent().unwrap();
    let meta = std::fs::symlink_metadata(own).unwrap();
    assert!(meta.is_dir(), "{meta:?}");
    assert_eq!(meta.mode() & 0o077, 0, "{meta:?}");

    // Nor one others can write in.
    std::fs::remove_file(&shared).unwrap();
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, v) = repo.verdict_with(&["--all-files"], &[("TMPDIR", tmpdir)]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        v["notes"].to_string().contains("others can write in it"),
        "{v:#}"
    );
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
}
