//! Integration tests: the loop an agent lives in — run, read `next`, fix
//! or resume, and escalate when going round in circles.

use crate::support::{check, TestRepo};

/// A project whose `tests` check fails while the file `broken` exists,
/// and whose `lint` always passes, committed.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "test ! -f broken" },
  { name = "lint", shell = true, command = "true" },
]
"#,
    );
    repo.commit_all("base");
    repo
}

#[test]
fn resume_after_a_killed_run_checks_again_what_that_run_was_checking() {
    let repo = project();
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    // The agent breaks the tests, runs the gate, and the run is killed
    // before it can record a verdict.
    repo.write("broken", "");
    repo.kill_run_at("state-rename", &["run", "--all-files"]);
    // Told to resume, it must not be answered with the pass of the run
    // before: the tests fail now.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 1, "{}\n{}", resumed.stdout, resumed.stderr);
    let v = resumed.json();
    assert_eq!(v["status"], "failed");
    assert_eq!(check(&v, "tests")["status"], "failed");
    assert!(
        resumed.stderr.contains("ended without a verdict"),
        "{}",
        resumed.stderr
    );
    // That resume is on record: the next one resumes it alone.
    std::fs::remove_file(repo.path().join("broken")).unwrap();
    let again = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(check(&again.json(), "lint")["status"], "passed");
    assert!(!again.stderr.contains("ended without a verdict"));
}

/// The state directory of `repo`.
fn state_dir(repo: &TestRepo) -> std::path::PathBuf {
    repo.path().join(".git/phasegate")
}

#[test]
fn resume_over_a_history_that_cannot_be_read_checks_everything_and_repairs_it() {
    let repo = project();
    repo.write("broken", "");
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    std::fs::remove_file(repo.path().join("broken")).unwrap();
    // Cut short (a full disk, a hand edit): an agent told to resume must
    // not be told to resume again and again by a resume that repairs
    // nothing.
    let file = state_dir(&repo).join("state.json");
    let whole = std::fs::read(&file).unwrap();
    std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
    let first = repo.phasegate(&["resume", "--format", "json"]);
    let v = first.json();
    assert_eq!(first.code, 3, "{v:#}\n{}", first.stderr);
    assert_eq!(v["next"], "resume");
    // Every check ran: nothing could be carried over.
    assert_eq!(check(&v, "tests")["status"], "passed");
    assert_eq!(check(&v, "lint")["status"], "passed");
    assert!(first.stderr.contains("state.json"), "{}", first.stderr);
    assert!(v["notes"].to_string().contains("moved to"), "{v:#}");
    // The history is new: the resume that follows reads it, and ends.
    let second = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(second.code, 0, "{}\n{}", second.stdout, second.stderr);
    assert_eq!(second.json()["status"], "passed");
}

#[test]
fn resume_over_a_history_another_version_keeps_escalates() {
    let repo = project();
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0);
    let file = state_dir(&repo).join("state.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("phasegate/state/v1", "phasegate/state/v9"),
    )
    .unwrap();
    // No run of this version records anything while it stands: resuming
    // again would change nothing, a person decides.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 4, "{v:#}");
    assert_eq!(v["next"], "escalate");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("phasegate/state/v9"),
        "{v:#}"
    );
}

#[test]
fn resume_of_a_phase_the_configuration_no_longer_has_says_which_run_and_what_to_do() {
    let repo = project();
    repo.write("broken", "");
    let (code, _) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1);
    // The phase is renamed since.
    repo.config("[gate]\ndefault_phase = \"qa\"\n[phases.qa]\nchecks = [ { name = \"tests\", shell = true, command = \"test ! -f broken\" } ]\n");
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("phase `implementation`")
            && message.contains("no longer has (it has `qa`)")
            && message.contains("`phasegate run`"),
        "{message}"
    );
}
