//! phasegate's locks and the messages around them.

use crate::git::tree;
use crate::prepush_state::names_in;
use crate::runner_limits::{passing, run_with_lock_error, MOUNT_WITH_LOCKING};
use crate::state::state;
use crate::support::*;

/// The run directories under `runs/`.
fn run_dirs(repo: &TestRepo) -> Vec<String> {
    names_in(&state(repo).join("runs"))
}

/// Takes the lock of the unstaged changes in `repo` as another run (pid
/// 4242) would, until the file it returns is dropped.
pub(crate) fn hold_protection_lock(repo: &TestRepo) -> std::fs::File {
    let protect = state(repo).join("protect");
    std::fs::create_dir_all(&protect).unwrap();
    let held = std::fs::File::create(protect.join("lock")).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    std::fs::write(protect.join("lock"), "4242").unwrap();
    held
}

/// How `emergency.log` names a run stopped before it had an id.
const NEVER_STARTED: &str = r"pid \d+ \(a run stopped before its checks started\)";

#[test]
fn a_run_the_protection_lock_stops_leaves_no_run_directory_and_names_its_pid() {
    // Another run holds the lock of the unstaged changes: this one stops
    // before its checks, and keeps no directory of a run that never ran.
    let repo = passing();
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "staged\nunstaged\n");
    let held = hold_protection_lock(&repo);

    let run = repo.phasegate_with(&["run", "--format", "json"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another phasegate run (pid 4242) is protecting unstaged changes"),
        "{v:#}"
    );
    assert!(v["run_id"].is_null(), "{v:#}");
    assert!(!repo.exists("ran"), "a check ran");
    assert_eq!(run_dirs(&repo), Vec::<String>::new());
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    let history = repo.phasegate(&["history"]);
    assert!(
        history.stdout.contains("no run recorded yet"),
        "{}",
        history.stdout
    );

    // Neither can the state lock be had: the lines `emergency.log` keeps
    // name the process, not a run that has no id.
    let run = repo.phasegate_with(
        &["run", "--format", "json"],
        &[("PHASEGATE_TEST_LOCK_ERROR", "ENOLCK:state")],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    drop(held);
    let emergency = std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap();
    let named = regex::Regex::new(&format!(r"^\S+Z {NEVER_STARTED}(:| Critical) ")).unwrap();
    assert!(
        emergency.lines().count() >= 2 && emergency.lines().all(|line| named.is_match(line)),
        "{emergency}"
    );
    assert!(
        emergency.contains("Critical internal: another phasegate run (pid 4242)"),
        "{emergency}"
    );
    assert_eq!(run_dirs(&repo), Vec::<String>::new());
}

#[test]
fn a_state_warning_is_said_once_in_the_human_report_and_kept_in_the_json_verdict() {
    // The state lock cannot be had: the human report says so among its
    // notes, and standard error does not say it again.
    let repo = passing();
    let lock = state(&repo).join("state.lock");
    let said = format!(
        "failed to lock `{}`: its file system {MOUNT_WITH_LOCKING}",
        lock.display()
    );
    let env = [("PHASEGATE_TEST_LOCK_ERROR", "ENOLCK:state")];
    let run = repo.phasegate_with(&["run", "--all-files", "--profile", "fast"], &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("note: the run was not recorded") && run.stdout.contains(&said),
        "{}",
        run.stdout
    );
    assert!(!run.stderr.contains(&said), "said twice:\n{}", run.stderr);

    // With `--output`, the human report is still what a person reads.
    let out = repo.path().join("verdict.json");
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--profile",
            "fast",
            "--format",
            "json",
            "--output",
            &out.to_string_lossy(),
        ],
        &env,
    );
    assert!(run.stdout.contains(&said), "{}", run.stdout);
    assert!(!run.stderr.contains(&said), "said twice:\n{}", run.stderr);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(written["notes"].to_string().contains(&said), "{written:#}");

    // The JSON verdict keeps it in its notes, and standard error tells
    // the person watching.
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--profile",
            "fast",
            "--format",
            "json",
        ],
        &env,
    );
    let v = run.json();
    assert!(v["notes"].to_string().contains(&said), "{v:#}");
    assert!(run.stderr.contains(&said), "{}", run.stderr);
}

#[test]
fn a_hooks_directory_that_cannot_be_locked_stops_install_and_uninstall_unchanged() {
    let repo = passing();
    let hooks = repo.path().join(".git/hooks");
    write_executable(&hooks.join("pre-commit"), "#!/bin/sh\necho mine\n");
    let before = tree(&hooks);
    let env = [("PHASEGATE_TEST_LOCK_ERROR", "ENOLCK:hooks")];
    let said = format!(
        "failed to lock the hooks directory `{}`: its file system {MOUNT_WITH_LOCKING}; nothing was changed",
        hooks.display()
    );
    let run = repo.phasegate_with(&["install"], &env);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(tree(&hooks), before, "the hooks directory changed");

    // Installed, it is not removed either.
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let installed = tree(&hooks);
    let run = repo.phasegate_with(&["uninstall"], &env);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    assert_eq!(tree(&hooks), installed, "the hooks directory changed");
}

#[test]
fn a_run_directory_that_cannot_be_locked_is_named_and_none_is_left_behind() {
    // Without its lock, another run's pruning would take the run for an
    // ended one and remove its logs under it: the logs go to a local
    // directory, and where neither can be locked the run stops.
    let repo = passing();
    let run = run_with_lock_error(&repo, "ENOLCK:run");
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    let message = v["error"]["message"].as_str().unwrap();
    let runs = state(&repo).join("runs");
    assert!(
        message.contains(&format!("failed to lock `{}/", runs.display()))
            && message.contains(&format!("its file system {MOUNT_WITH_LOCKING}")),
        "{v:#}"
    );
    assert!(!repo.exists("ran"), "a check ran");
    assert_eq!(run_dirs(&repo), Vec::<String>::new());

    // Any other failure of the call is named the same way.
    let run = run_with_lock_error(&repo, "EIO:run");
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.json()["error"]["message"]
            .to_string()
            .contains("flock(2) on it failed (Input/output error (os error 5))"),
        "{}",
        run.stdout
    );
}

#[test]
fn emergency_log_keeps_its_lines_where_it_cannot_be_locked() {
    // The last place a record goes: without its lock it is appended to
    // all the same (not rotated), and nothing is lost.
    let repo = passing();
    let run = run_with_lock_error(&repo, "ENOLCK:state,emergency");
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    let run_id = v["run_id"].as_str().unwrap();
    let emergency = std::fs::read_to_string(state(&repo).join("emergency.log")).unwrap();
    assert!(
        emergency.contains(&format!("{run_id} Critical state_lock_unsupported")),
        "{emergency}"
    );
    assert!(v["notes"].to_string().contains("were written to"), "{v:#}");
}
