//! Runner and state: terminals, escaping processes, locks a check holds.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{check, process_gone, recorded_verdicts, wait_for, TestRepo, BIN};

/// Waits for `child` up to `limit`; kills it and fails, saying `what`,
/// when it is still running then.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> (Duration, String) {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut said = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut said).unwrap();
    }
    (started.elapsed(), said)
}

/// The pid a check wrote to `file`, once it is there.
fn pid_in(file: &Path) -> u32 {
    wait_for(&format!("a pid in `{}`", file.display()), || {
        std::fs::read_to_string(file).ok()?.trim().parse().ok()
    })
}

/// Kills the processes whose pids the files hold when the test ends, as
/// it ends: a failed assertion leaves nothing running.
struct Reaper(Vec<std::path::PathBuf>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for file in &self.0 {
            if let Some(pid) = std::fs::read_to_string(file)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
            {
                // The process and the group it leads, if it leads one.
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", "--", &pid.to_string(), &format!("-{pid}")])
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// Whether `pid` is gone, looking for a few seconds.
fn ends(pid: u32) -> bool {
    let started = Instant::now();
    while !process_gone(pid) {
        if started.elapsed() > Duration::from_secs(5) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[test]
fn a_check_that_prompts_on_the_terminal_fails_at_once_under_git_commit_in_a_terminal() {
    // `read x </dev/tty`, as installers and pinentry prompt: run from a
    // terminal, the check must not wait there for an answer until its
    // timeout. It has no terminal: it fails at once, with its output.
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "prompt", shell = true, timeout = "60s", command = "echo 'Proceed? [y/N]'; read answer </dev/tty || exit 1; echo \"answered $answer\"" } ]
"#,
    );
    repo.write("a.md", "# a\n").commit_all("one");
    let installed = repo.phasegate(&["install"]);
    assert_eq!(installed.code, 0, "{installed:?}");
    repo.stage("a.md", "# a, changed\n");

    // `script` gives the commit a pseudo-terminal of its own, its
    // controlling terminal; its input stays open and silent, as a person
    // who has not answered yet.
    let commit = repo
        .command("script")
        .args(["-qec", "git commit -qm two", "/dev/null"])
        .env("PHASEGATE_BIN", BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (took, said) = finish_within(commit, Duration::from_secs(40), "the commit");
    assert!(
        took < Duration::from_secs(20),
        "the commit took {took:?}: {said}"
    );

    let verdicts = recorded_verdicts(&repo);
    let v = verdicts.last().expect("the hook recorded no run");
    let prompt = check(v, "prompt");
    assert_eq!(prompt["status"], "failed", "{v:#}");
    let log = repo.read(prompt["log"].as_str().unwrap());
    assert!(log.starts_with("Proceed? [y/N]\n"), "{log}");
    assert!(log.contains("/dev/tty"), "{log}");
    assert!(!log.contains("answered"), "{log}");
    // The commit was refused, and said why in the terminal.
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    assert!(said.contains("prompt"), "{said}");
}

#[test]
fn what_a_check_leaves_in_its_session_under_env_i_is_stopped_and_named_in_its_log() {
    // Under `env -i` a background job carries nothing of the check's
    // environment; holding the check's output, or not, it still does not
    // outlive the check, and the log names it. `setsid` leaves the
    // session: found by the output it holds.
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let files: Vec<_> = ["held", "closed", "setsid"]
        .iter()
        .map(|name| pids.path().join(name))
        .collect();
    let reaper = Reaper(files.clone());
    repo.config(&format!(
        r#"[phases.implementation]
checks = [
  {{ name = "held", shell = true, timeout = "60s", command = "env -i sh -c 'sleep 600 & echo $! > {}'; echo started" }},
  {{ name = "closed", shell = true, timeout = "60s", command = "env -i sh -c 'sleep 600 > /dev/null 2>&1 & echo $! > {}'; echo started" }},
  {{ name = "setsid", shell = true, timeout = "60s", command = "setsid sleep 600 & echo $! > {}; echo started" }},
]
"#,
        files[0].display(),
        files[1].display(),
        files[2].display()
    ));
    let started = Instant::now();
    let (code, v) = repo.verdict(&["--all-files", "--jobs", "3"]);
    let took = started.elapsed();
    assert_eq!(code, 0, "{v:#}");
    assert!(took < Duration::from_secs(20), "the run took {took:?}");
    let said = [
        "still held its output open 200ms later; it was stopped]",
        "was stopped]",
        "which left the check's session, still held its output open; it was stopped]",
    ];
    for (n, name) in ["held", "closed", "setsid"].into_iter().enumerate() {
        assert_eq!(check(&v, name)["status"], "passed", "{v:#}");
        let pid = pid_in(&reaper.0[n]);
        assert!(ends(pid), "`{name}` left `sleep 600` ({pid}) running");
        let log = repo.read(check(&v, name)["log"].as_str().unwrap());
        let named = format!("`sleep 600` (pid {pid})");
        let note = log
            .lines()
            .find(|line| line.starts_with("[phasegate: "))
            .unwrap_or_else(|| panic!("{name}: no note in {log:?}"));
        assert!(
            note.contains(&named) && note.ends_with(said[n]),
            "{name}: {log}"
        );
    }
}

#[test]
fn a_process_that_keeps_the_state_lock_is_named_within_seconds() {
    // A check leaves a process behind, in a session of its own and away
    // from its output (so it may outlive the check, as a build server
    // does), that holds phasegate's own state lock. The run does not wait
    // the half minute it gives another phasegate run: it names the holder.
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let pid_file = pids.path().join("flock");
    let _reaper = Reaper(vec![pid_file.clone()]);
    repo.config(&format!(
        r#"[phases.implementation]
checks = [ {{ name = "locker", shell = true, command = "setsid --fork sh -c 'echo $$ > {0}.new; mv {0}.new {0}; exec flock .git/phasegate/state.lock sleep 600' > /dev/null 2>&1; until [ -s {0} ] && ! flock -n .git/phasegate/state.lock true; do sleep 0.01; done" }} ]
"#,
        pid_file.display()
    ));
    // The state directory is there before the check locks in it.
    std::fs::create_dir_all(repo.path().join(".git/phasegate")).unwrap();

    let started = Instant::now();
    let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
    let took = started.elapsed();
    let pid = pid_in(&pid_file);
    assert!(took < Duration::from_secs(20), "the run took {took:?}");
    assert!(
        run.stderr.contains(&format!(
            "`flock .git/phasegate/state.lock sleep 600` (pid {pid}) holds `"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("`kill {pid}`")),
        "{}",
        run.stderr
    );
    // The verdict is the check's, and says what could not be recorded.
    let v = run.json();
    assert_eq!(check(&v, "locker")["status"], "passed", "{v:#}");
    assert!(
        v.to_string().contains(&format!("(pid {pid}) holds")),
        "{v:#}"
    );
}
