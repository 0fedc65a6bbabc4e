//! State across runs: stable digests, bounded logs, history and resume.

use std::path::Path;

use crate::support::{check, wait_for, TestRepo};

/// How many lines `path` has (0 when it is not there).
fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// A `tests` check that counts its runs in `tests-ran`, and a `lint`
/// check that, in a work tree holding a file `hang`, waits (after saying
/// so in `hanging`) until a file `release` appears, or `hang` is gone (the
/// work tree removed before it looked again).
const COUNTED_AND_HANGING: &str = r#"[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "echo ran >> tests-ran; grep -qx ok tests.txt" },
  { name = "lint", shell = true, command = "if [ -e hang ]; then touch hanging; while [ -e hang ] && [ ! -e release ]; do sleep 0.02; done; fi; grep -qx ok lint.txt" },
]
"#;

#[test]
fn a_run_killed_in_another_worktree_leaves_this_worktree_s_resume_as_it_was() {
    let repo = TestRepo::new();
    repo.config(COUNTED_AND_HANGING);
    repo.write("tests.txt", "ok\n").write("lint.txt", "bad\n");
    repo.write(".gitignore", "tests-ran\nhang\nhanging\nrelease\n");
    repo.commit_all("base");
    let side = &repo.linked_worktree("side");

    // Here the tests pass and lint fails.
    let run = repo.phasegate(&["run", "--format", "json", "--all-files"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(lines(&repo.path().join("tests-ran")), 1);

    // In the other work tree a run is killed while its lint hangs.
    std::fs::write(side.join("hang"), "").unwrap();
    let mut child = repo
        .command(crate::support::BIN)
        .args(["run", "--all-files"])
        .current_dir(side)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the other work tree's lint to start", || {
        side.join("hanging").exists().then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::write(side.join("release"), "").unwrap();

    // Lint fixed here, the resume runs lint alone: the passing tests of
    // this work tree's last run are carried over, whatever another work
    // tree's run left unfinished.
    repo.write("lint.txt", "ok\n");
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 0, "{v:#}\n{}", resumed.stderr);
    assert!(
        !resumed.stderr.contains("without a verdict"),
        "{}",
        resumed.stderr
    );
    assert_eq!(lines(&repo.path().join("tests-ran")), 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed");
    assert_eq!(check(&v, "lint")["status"], "passed");
    repo.git(&["worktree", "remove", "--force", side.to_str().unwrap()]);
}

/// A blocking `tests` check that passes once `tests.txt` says `ok`, and a
/// `docs` check that always fails, with `on_failure = "warn"`.
const TESTS_AND_WARNING_DOCS: &str = r#"[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "grep -qx ok tests.txt" },
  { name = "docs", command = "false", on_failure = "warn" },
]
"#;

#[test]
fn resume_runs_under_the_profile_phasegate_profile_names_now() {
    let repo = TestRepo::new();
    repo.config(TESTS_AND_WARNING_DOCS);
    repo.write("tests.txt", "bad\n");
    repo.commit_all("base");
    let (code, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
    assert_eq!(code, 1, "{v:#}");
    repo.write("tests.txt", "ok\n");

    // Asked for nothing now: the profile the last run was asked for.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!((resumed.code, &v["profile"]), (0, &"fast".into()), "{v:#}");
    assert_eq!(check(&v, "docs")["status"], "warned");

    // Asked for `strict` now: its warnings block, the carried one too.
    let resumed = repo.phasegate_with(
        &["resume", "--format", "json"],
        &[("PHASEGATE_PROFILE", "strict")],
    );
    let v = resumed.json();
    assert_eq!(v["profile"], "strict", "{v:#}\n{}", resumed.stderr);
    assert_eq!(resumed.code, 1, "{v:#}");
    assert_ne!(check(&v, "docs")["status"], "warned", "{v:#}");
    assert!(resumed.stderr.contains("`strict`"), "{}", resumed.stderr);
}

#[test]
fn resume_follows_the_configured_profile_when_the_last_run_took_it_from_there() {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[gate]\nprofile = \"fast\"\n{TESTS_AND_WARNING_DOCS}"
    ));
    repo.write("tests.txt", "bad\n");
    repo.commit_all("base");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!((code, &v["profile"]), (1, &"fast".into()), "{v:#}");

    // The gate is made strict, and the tests fixed.
    repo.config(&format!(
        "[gate]\nprofile = \"strict\"\n{TESTS_AND_WARNING_DOCS}"
    ));
    repo.write("tests.txt", "ok\n");
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(v["profile"], "strict", "{v:#}\n{}", resumed.stderr);
    assert_eq!(resumed.code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed");
}

#[test]
fn a_queue_of_many_resolved_interventions_is_compacted_and_no_id_comes_back() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"false\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    // The record the run wrote, made 300 resolved ones of a long past.
    let queue = repo.path().join(".git/phasegate/interventions.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&queue).unwrap().trim()).unwrap();
    let mut text = String::new();
    for n in 1..=300 {
        let mut record = first.clone();
        record["id"] = format!("iv-{n:04}").into();
        record["status"] = "resolved".into();
        record["note"] = "fixed".into();
        record["updated_at"] = format!("2026-01-01T{:02}:{:02}:00Z", n / 60, n % 60).into();
        text.push_str(&format!("{record}\n"));
    }
    std::fs::write(&queue, text).unwrap();

    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["interventions"], serde_json::json!(["iv-0301"]), "{v:#}");
    let listed = repo.phasegate(&["interventions", "list", "--all", "--format", "json"]);
    let all = listed.json()["interventions"].as_array().unwrap().clone();
    let resolved: Vec<&str> = all
        .iter()
        .filter(|r| r["status"] == "resolved")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // The newest resolved 200 stay, and the open one.
    assert_eq!(resolved.len(), 200, "{resolved:?}");
    assert!(resolved.contains(&"iv-0300") && !resolved.contains(&"iv-0100"));
    assert_eq!(all.len(), 201);
    // A record left out keeps its id given out.
    repo.phasegate(&["interventions", "resolve", "iv-0301", "--note", "done"]);
    repo.write("again.txt", "another failure\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"lint\", command = \"false\" } ]\n");
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(v["interventions"], serde_json::json!(["iv-0302"]), "{v:#}");
}
