//! Checks whose processes outlive them, and what the runner does about it.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{check, process_gone, wait_for, TestRepo, BIN};

/// The pid a check wrote to `file`, once it is there.
fn pid_in(file: &Path) -> u32 {
    wait_for(&format!("a pid in `{}`", file.display()), || {
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    })
}

/// Asserts that every process of `pids` is gone, looking for a few
/// seconds: phasegate has exited, so anything still there is left for
/// good. The processes found alive are killed before the test fails, so a
/// failure leaves nothing behind.
fn assert_gone(pids: &[(u32, &str)]) {
    let started = Instant::now();
    while !pids.iter().all(|(pid, _)| process_gone(*pid)) {
        if started.elapsed() > Duration::from_secs(10) {
            let left: Vec<String> = pids
                .iter()
                .filter(|(pid, _)| !process_gone(*pid))
                .map(|(pid, what)| {
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                    format!("{what} ({pid})")
                })
                .collect();
            panic!("still running after phasegate exited: {}", left.join(", "));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A script that starts a daemon the usual way (`setsid --fork`: a child
/// in a session of its own, whose parent returns at once, so init adopts
/// it), which writes its pid to `pid_file`, then waits for ever.
fn daemon_script(repo: &TestRepo, name: &str, pid_file: &Path) {
    repo.write(
        name,
        &format!(
            "setsid --fork sh -c 'echo $$ > {}; exec sleep 600' > /dev/null 2>&1\nsleep 600\n",
            pid_file.display()
        ),
    );
}

#[test]
fn a_timeout_kills_a_child_that_started_a_session_of_its_own() {
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let pid_file = pids.path().join("sleep.pid");
    repo.config(&format!(
        r#"[phases.implementation]
checks = [ {{ name = "escapes", timeout = "1s", command = "setsid --wait sh -c 'echo $$ > {}; exec sleep 600'" }} ]
"#,
        pid_file.display()
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(check(&v, "escapes")["status"], "timed_out");
    assert_gone(&[(pid_in(&pid_file), "the child in a session of its own")]);
}

#[test]
fn a_timeout_kills_a_daemon_whose_parent_is_gone() {
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let pid_file = pids.path().join("daemon.pid");
    daemon_script(&repo, "daemon.sh", &pid_file);
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "daemon", timeout = "1s", command = "sh daemon.sh" } ]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(check(&v, "daemon")["status"], "timed_out");
    assert_gone(&[(pid_in(&pid_file), "the daemon the check started")]);
}

#[test]
fn ctrl_c_stops_every_running_check_and_all_it_started() {
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let (plain, own_session, daemon) = (
        pids.path().join("plain.pid"),
        pids.path().join("session.pid"),
        pids.path().join("daemon.pid"),
    );
    daemon_script(&repo, "daemon.sh", &daemon);
    repo.config(&format!(
        r#"[phases.implementation]
checks = [
  {{ name = "plain", shell = true, command = "trap '' TERM; sleep 600 & echo $! > {}; wait" }},
  {{ name = "session", command = "setsid --wait sh -c 'echo $$ > {}; exec sleep 600'" }},
  {{ name = "daemon", command = "sh daemon.sh" }},
]
"#,
        plain.display(),
        own_session.display()
    ));
    let phasegate = repo
        .command(BIN)
        .args(["run", "--all-files", "--jobs", "3", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started: Vec<u32> = [&plain, &own_session, &daemon]
        .iter()
        .map(|file| pid_in(file))
        .collect();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &phasegate.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = phasegate.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{v:#}");
    let started: Vec<(u32, &str)> = started
        .into_iter()
        .zip([
            "the plain check's background process",
            "the child in a session of its own",
            "the daemon",
        ])
        .collect();
    assert_gone(&started);
}

#[test]
fn a_killed_runs_daemons_are_stopped_before_its_unstaged_changes_come_back() {
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let pid_file = pids.path().join("daemon.pid");
    daemon_script(&repo, "daemon.sh", &pid_file);
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "daemon", command = "sh daemon.sh" } ]
"#,
    );
    repo.write("a.txt", "a\n").commit_all("one");
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "unstaged\n");
    let mut phasegate = repo
        .command(BIN)
        .arg("run")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let daemon = pid_in(&pid_file);
    phasegate.kill().unwrap();
    phasegate.wait().unwrap();
    assert!(!process_gone(daemon), "killing phasegate alone leaves it");

    let run = repo.phasegate(&["restore"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read("a.txt"), "unstaged\n");
    assert_gone(&[(daemon, "the daemon the killed run's check started")]);
}

#[test]
fn a_background_job_in_a_process_group_of_its_own_does_not_outlive_a_passing_check() {
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let pid_file = pids.path().join("job.pid");
    // `timeout` puts itself and its command in a process group of their
    // own; with its output elsewhere, the check's pipe closes at once.
    repo.config(&format!(
        r#"[phases.implementation]
checks = [ {{ name = "job", shell = true, command = "timeout 600 sh -c 'echo $$ > {0}; exec sleep 600' > /dev/null 2>&1 & while [ ! -s {0} ]; do sleep 0.01; done" }} ]
"#,
        pid_file.display()
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "job")["status"], "passed");
    assert_gone(&[(pid_in(&pid_file), "the background job")]);
}
