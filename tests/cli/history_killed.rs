//! history of runs killed before their verdict, and state files that are links.

use std::path::PathBuf;

use crate::support::{wait_for, TestRepo, BIN};

fn runs_dir(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/phasegate/runs")
}

/// The ids of the run directories, oldest first.
fn run_ids(repo: &TestRepo) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(runs_dir(repo))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// `phasegate history --format json`'s runs, newest first.
fn history(repo: &TestRepo) -> Vec<serde_json::Value> {
    let run = repo.phasegate(&["history", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["runs"].as_array().unwrap().clone()
}

/// A repository whose one check, `tests`, passes, with a first run
/// recorded, and `a.txt` staged with unstaged changes on top.
fn with_unstaged_changes() -> TestRepo {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"tests\", command = \"true\" } ]\n");
    repo.stage("a.txt", "one\n");
    repo.commit_all("base");
    assert_eq!(repo.verdict(&[]).0, 0);
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "staged\nunstaged\n");
    repo
}

#[test]
fn a_run_killed_with_changes_set_aside_is_shown_with_restore_then_resume() {
    let repo = with_unstaged_changes();
    let before = run_ids(&repo);
    repo.kill_run_at("checks-done", &["run"]);
    let killed: Vec<String> = run_ids(&repo)
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert_eq!(killed.len(), 1, "{killed:?}");
    let id = &killed[0];

    let runs = history(&repo);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let shown = &runs[0];
    assert_eq!(shown["run_id"], id.as_str());
    assert_eq!(shown["status"], "killed");
    assert!(shown["phase"].is_null(), "{shown:#}");
    let started = started_of(id);
    assert_eq!(shown["time"], started.as_str());
    assert_eq!(
        shown["logs"],
        serde_json::json!([{
            "check": "tests",
            "log": format!(".git/phasegate/runs/{id}/tests.log"),
        }])
    );
    assert_eq!(
        shown["saved_changes"],
        format!(".git/phasegate/protect/{id}").as_str()
    );
    assert_eq!(shown["next"], "restore");
    let advice = shown["what_to_do"].as_str().unwrap();
    assert!(
        advice.contains("`phasegate restore`") && advice.contains("then `phasegate resume`"),
        "{advice}"
    );
    assert_eq!(runs[1]["status"], "passed");

    let human = repo.phasegate(&["history"]);
    let lines: Vec<&str> = human.stdout.lines().skip(1).collect();
    assert!(
        lines[0].contains("killed")
            && lines[0].contains(id.as_str())
            && lines[0].contains("ended without a verdict")
            && lines[0].contains("logs of: tests"),
        "{}",
        human.stdout
    );
    assert!(
        lines[1].contains("phasegate restore") && lines[1].contains("phasegate resume"),
        "{}",
        human.stdout
    );

    // Restored, the run has nothing set aside any more: resume is next.
    let restored = repo.phasegate(&["restore"]);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    let shown = &history(&repo)[0];
    assert_eq!(shown["status"], "killed");
    assert!(shown["saved_changes"].is_null(), "{shown:#}");
    assert_eq!(shown["next"], "resume");

    // Once a later run is recorded, resume no longer takes it up, and
    // history says so rather than send anyone to resume it.
    assert_eq!(repo.verdict(&[]).0, 0);
    let runs = history(&repo);
    assert_eq!(runs.len(), 3, "{runs:#?}");
    assert_eq!(runs[1]["run_id"], id.as_str());
    assert!(runs[1]["next"].is_null(), "{:#}", runs[1]);
    assert!(
        runs[1]["what_to_do"]
            .as_str()
            .unwrap()
            .contains("nothing to resume"),
        "{:#}",
        runs[1]
    );
}

#[test]
fn a_run_still_going_is_running_and_one_killed_in_a_check_names_its_log() {
    let repo = TestRepo::new();
    let go = repo.path().join("go");
    let started = repo.path().join("started");
    let ended = repo.path().join("ended");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"wait/long\", shell = true, command = \"touch '{}'; while [ ! -e '{}' ]; do sleep 0.05; done; touch '{}'\" }} ]\n",
        started.display(),
        go.display(),
        ended.display()
    ));
    let mut child = repo
        .command(BIN)
        .args(["run", "--all-files"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = wait_for("the check's log", || {
        let id = run_ids(&repo).pop()?;
        let log = runs_dir(&repo).join(&id).join("_wait_2flong.log");
        (started.exists() && log.exists()).then_some((id, log))
    });
    let (id, _) = &log;

    let runs = history(&repo);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["run_id"], id.as_str());
    assert_eq!(runs[0]["status"], "running");
    assert!(runs[0]["next"].is_null(), "{:#}", runs[0]);
    assert_eq!(runs[0]["logs"][0]["check"], "wait/long");
    let human = repo.phasegate(&["history"]);
    assert!(
        human.stdout.contains("running") && human.stdout.contains("still running"),
        "{}",
        human.stdout
    );
    assert!(!human.stdout.contains("restore"), "{}", human.stdout);

    // Killed while its check runs, it left the check's log.
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::write(&go, "").unwrap();
    // The check, which the kill left running, ends before the test's
    // directory goes: else it would wait for `go` for good.
    wait_for("the check to end", || ended.exists().then_some(()));
    let runs = history(&repo);
    assert_eq!(runs[0]["status"], "killed", "{:#}", runs[0]);
    assert_eq!(runs[0]["logs"][0]["check"], "wait/long");
    // No run recorded before it: nothing for resume to take up.
    assert_eq!(runs[0]["next"], "run");
    let human = repo.phasegate(&["history"]);
    assert!(
        human.stdout.contains("logs of: wait/long")
            && human.stdout.contains("`phasegate run` checks again"),
        "{}",
        human.stdout
    );
}

/// A repository whose one check passes, with its state directory made by
/// a first run; `state.json` is then what `link` leads to.
fn with_state_linked(repo: &TestRepo, target: &std::path::Path) -> PathBuf {
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    assert_eq!(repo.verdict(&["--all-files"]).0, 0);
    let link = repo.path().join(".git/phasegate/state.json");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(target, &link).unwrap();
    link
}

#[test]
fn a_state_json_that_links_to_a_file_elsewhere_is_written_there_and_stays_a_link() {
    let repo = TestRepo::new();
    let elsewhere = repo.home().join("disk");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let target = elsewhere.join("state.json");
    let first = {
        repo.config(
            "[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n",
        );
        assert_eq!(repo.verdict(&["--all-files"]).0, 0);
        std::fs::read(repo.path().join(".git/phasegate/state.json")).unwrap()
    };
    std::fs::write(&target, &first).unwrap();
    let link = repo.path().join(".git/phasegate/state.json");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(link.is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(kept["runs"].as_array().unwrap().len(), 2);
    assert_eq!(history(&repo).len(), 2);
    // Nothing is left beside the file the link leads to.
    let beside: Vec<String> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["state.json"]);

    // The intervention queue follows its link the same way.
    let queue_target = elsewhere.join("interventions.jsonl");
    let queue = repo.path().join(".git/phasegate/interventions.jsonl");
    let _ = std::fs::remove_file(&queue);
    std::os::unix::fs::symlink(&queue_target, &queue).unwrap();
    repo.config("[phases.implementation]\nchecks = [ { name = \"bad\", command = \"false\" } ]\n");
    assert_eq!(repo.verdict(&["--all-files"]).0, 1);
    assert!(queue.is_symlink(), "the queue's link was replaced");
    assert!(
        std::fs::read_to_string(&queue_target)
            .unwrap()
            .contains("\"bad\""),
        "the queue was not written where its link leads"
    );
}

#[test]
fn a_state_json_that_links_to_nowhere_makes_the_file_it_names() {
    let repo = TestRepo::new();
    let target = repo.home().join("state.json");
    // A relative link, leading to a file not made yet.
    let state_dir = repo.path().join(".git/phasegate");
    let relative = pathdiff(&target, &state_dir);
    let link = with_state_linked(&repo, &relative);
    assert!(!target.exists());

    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(link.is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_link(&link).unwrap(), relative);
    let made: serde_json::Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(made["runs"].as_array().unwrap().len(), 1);
    // The history begins there: the first run, whose history the link
    // replaced, left its verdict in its directory and is not shown again.
    assert_eq!(history(&repo).len(), 1);
}

#[test]
fn a_state_json_that_links_into_a_missing_directory_is_kept_and_said() {
    let repo = TestRepo::new();
    let target = repo.home().join("unmounted/state.json");
    let link = with_state_linked(&repo, &target);

    let (code, v) = repo.verdict(&["--all-files"]);
    // The verdict stands; the run says the state could not be written.
    assert_eq!(code, 0, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("symbolic link")
            && notes.contains(&target.display().to_string())
            && notes.contains("create that directory"),
        "{v:#}"
    );
    assert!(link.is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    assert!(!target.parent().unwrap().exists());
}

/// `target` relative to the directory `from` (both absolute).
fn pathdiff(target: &std::path::Path, from: &std::path::Path) -> PathBuf {
    let ups = from.components().count() - 1;
    let mut relative = PathBuf::new();
    for _ in 0..ups {
        relative.push("..");
    }
    relative.join(target.strip_prefix("/").unwrap())
}

#[test]
fn a_corrupt_state_json_behind_a_link_is_moved_aside_where_it_is() {
    let repo = TestRepo::new();
    let elsewhere = repo.home().join("disk");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let target = elsewhere.join("state.json");
    std::fs::write(&target, "{ not json").unwrap();
    let link = with_state_linked(&repo, &target);

    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert!(link.is_symlink(), "the link was moved aside");
    let aside: Vec<String> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        std::fs::read_to_string(elsewhere.join(&aside[0])).unwrap(),
        "{ not json"
    );
    let begun: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(begun["runs"].as_array().unwrap().len(), 1);
}

/// `2026-11-22T15:30:00Z` for the run id `20261122T153000Z-42`.
pub(crate) fn started_of(id: &str) -> String {
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &id[..4],
        &id[4..6],
        &id[6..8],
        &id[9..11],
        &id[11..13],
        &id[13..15]
    )
}
