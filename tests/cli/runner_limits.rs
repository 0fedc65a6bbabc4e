//! The hidden test switches for the log cut size and for a failing state lock.

use crate::support::{check, Run, TestRepo};

/// A check that prints a first line, `noise` bytes of 16-byte lines, and a
/// last line, then fails.
fn loud(noise: u64) -> String {
    format!(
        r#"[phases.implementation]
checks = [ {{ name = "loud", shell = true, command = "echo 'the first line'; yes 'a line of noise' | head -c {noise}; echo 'the last line: it failed'; exit 1" }} ]
"#
    )
}

/// What `loud(noise)` prints.
fn printed(noise: u64) -> Vec<u8> {
    let lines = usize::try_from(noise / 16).unwrap();
    let mut output = b"the first line\n".to_vec();
    output.extend(b"a line of noise\n".repeat(lines));
    output.extend(b"the last line: it failed\n");
    output
}

#[test]
fn output_past_the_log_limit_keeps_its_first_and_last_lines_and_says_what_was_cut() {
    // The log keeps the output up to its limit and the last 64 KiB: 4 MB
    // of lines between a first and a last line of the check's own, over a
    // limit of 1 MiB (`PHASEGATE_TEST_LOG_LIMIT`) that falls one byte into
    // a line, as the real one (1 GiB) does.
    let repo = TestRepo::new();
    let noise: u64 = 4_000_000; // 250,000 lines of 16 bytes
    repo.config(&loud(noise));
    let limit: u64 = 1 << 20;
    let (code, v) = repo.verdict_with(
        &["--all-files"],
        &[("PHASEGATE_TEST_LOG_LIMIT", &limit.to_string())],
    );
    assert_eq!(code, 1, "{v:#}");
    let log = std::fs::read(repo.path().join(check(&v, "loud")["log"].as_str().unwrap())).unwrap();
    let total = 15 + noise + 25;
    let marker = format!(
        "\n[phasegate: the log stops at {limit} bytes; {} more were printed, of which the last 65536 follow]\n",
        total - limit
    );
    let kept = usize::try_from(limit).unwrap();
    assert_eq!(log.len(), kept + marker.len() + 65536);
    assert!(log.starts_with(b"the first line\na line of noise\n"));
    // Cut where the limit falls: one byte into a line.
    assert!(log[..kept].ends_with(b"a line of noise\na"));
    assert_eq!(
        String::from_utf8_lossy(&log[kept..kept + marker.len()]),
        marker
    );
    // The last 64 KiB of the output, exactly.
    let tail = &log[kept + marker.len()..];
    assert!(tail.ends_with(b"a line of noise\nthe last line: it failed\n"));
    let output = printed(noise);
    assert_eq!(tail, &output[output.len() - 65536..]);
    // The verdict still explains the failure from the real end.
    let message = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.ends_with("the last line: it failed"), "{message}");
}

#[test]
fn without_the_switch_a_log_of_a_few_megabytes_is_whole() {
    // The switch is what cut the log above: unset (or not a number), the
    // real limit, far above, keeps every byte.
    let repo = TestRepo::new();
    repo.config(&loud(4_000_000));
    for env in [&[][..], &[("PHASEGATE_TEST_LOG_LIMIT", "1MiB")][..]] {
        let (code, v) = repo.verdict_with(&["--all-files"], env);
        assert_eq!(code, 1, "{v:#}");
        let log =
            std::fs::read(repo.path().join(check(&v, "loud")["log"].as_str().unwrap())).unwrap();
        assert!(log == printed(4_000_000), "{env:?}: {} bytes", log.len());
    }
}

/// A repository whose one check passes and leaves `ran` behind.
pub(crate) fn passing() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"ok\", shell = true, command = \"touch ran\" } ]\n",
    );
    repo.write(".gitignore", "ran\n");
    repo.commit_all("one");
    repo
}

const NO_LOCKS: (&str, &str) = ("PHASEGATE_TEST_LOCK_ERROR", "ENOLCK");

/// `phasegate run --all-files --format json` with
/// `PHASEGATE_TEST_LOCK_ERROR=failure` (`<errno>[:<lock>,...]`): taking
/// those locks fails as flock(2) would.
pub(crate) fn run_with_lock_error(repo: &TestRepo, failure: &str) -> Run {
    repo.phasegate_with(
        &["run", "--all-files", "--format", "json"],
        &[("PHASEGATE_TEST_LOCK_ERROR", failure)],
    )
}

/// What a person is told to do about a file system without locks.
pub(crate) const MOUNT_WITH_LOCKING: &str =
    "does not support flock(2) locks (No locks available (os error 37)); keep the repository on a local file system, or mount it with locking";

#[test]
fn a_state_lock_the_file_system_cannot_give_fails_the_run_closed_and_says_what_to_do() {
    // On a network file system mounted without locks, flock(2) fails with
    // ENOLCK: no run there is ever recorded, so repeated failures would
    // never escalate. The checks' verdict does not pass for good.
    let repo = passing();
    let run = run_with_lock_error(&repo, "ENOLCK");
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "incomplete", "{v:#}");
    assert_eq!(v["next"], "resume", "{v:#}");
    assert_eq!(check(&v, "ok")["status"], "passed", "{v:#}");
    assert!(repo.exists("ran"));
    let lock = repo.path().join(".git/phasegate/state.lock");
    let said = format!(
        "failed to lock `{}`: its file system {MOUNT_WITH_LOCKING}",
        lock.display()
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(&said) && notes.contains("this run is incomplete"),
        "{v:#}"
    );
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    // Nothing was written without the lock; the failure is kept in
    // `emergency.log` as a critical intervention.
    let state = repo.path().join(".git/phasegate");
    assert!(!state.join("state.json").exists());
    assert!(!state.join("interventions.jsonl").exists());
    let emergency = std::fs::read_to_string(state.join("emergency.log")).unwrap();
    let run_id = v["run_id"].as_str().unwrap();
    assert!(
        emergency.lines().any(|line| line.contains(&format!(
            "{run_id} Critical state_lock_unsupported: the run was not recorded"
        )) && line.contains(&said)),
        "{emergency}"
    );

    // A person reading the report is told the same.
    let run = repo.phasegate_with(&["run", "--all-files"], &[NO_LOCKS]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stdout.contains(&said) && run.stdout.contains("incomplete"),
        "{}",
        run.stdout
    );
}

#[test]
fn under_the_fast_profile_a_state_lock_the_file_system_cannot_give_fails_open_and_says_so() {
    // `fast` lets an unfinished run through, as for a check that could not
    // finish, and says so: the verdict is incomplete, the exit status 0.
    let repo = passing();
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--profile",
            "fast",
            "--format",
            "json",
        ],
        &[NO_LOCKS],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "incomplete", "{v:#}");
    assert_eq!(v["next"], "proceed", "{v:#}");
    assert_eq!(v["fail_open"], true, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains(MOUNT_WITH_LOCKING), "{v:#}");
    assert!(
        notes.contains("under the fast profile: verification is incomplete but fails open"),
        "{v:#}"
    );
}

#[test]
fn a_state_lock_that_fails_otherwise_is_named_with_what_to_do_and_the_verdict_stands() {
    // An error of the file system on one call (EIO) is said as a state
    // that cannot be written is: the run is not recorded, the checks'
    // verdict stands.
    let repo = passing();
    let run = run_with_lock_error(&repo, "EIO");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "passed", "{v:#}");
    let said = format!(
        "the run was not recorded: failed to lock `{}`: flock(2) on it failed (Input/output error (os error 5)); look at the state of its file system",
        repo.path().join(".git/phasegate/state.lock").display()
    );
    assert!(v["notes"].to_string().contains(&said), "{v:#}");
    assert!(run.stderr.contains(&said), "{}", run.stderr);
}

#[test]
fn a_protection_lock_the_file_system_cannot_give_stops_the_run_before_anything_is_touched() {
    // Unstaged changes are set aside under a lock of their own, in
    // `.git/phasegate/protect/`: refused, the run stops before any file
    // is touched or any check runs, and says what to do.
    let repo = passing();
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "staged\nunstaged\n");
    let run = repo.phasegate_with(&["run", "--format", "json"], &[NO_LOCKS]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["status"], "incomplete", "{v:#}");
    assert_eq!(v["next"], "resume", "{v:#}");
    let said = format!(
        "failed to take `{}`: its file system {MOUNT_WITH_LOCKING}",
        repo.path().join(".git/phasegate/protect/lock").display()
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains(&said),
        "{v:#}"
    );
    assert!(!repo.exists("ran"), "a check ran");
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    assert_eq!(repo.git(&["show", ":a.txt"]), "staged\n");
    // The state lock fails the same way: the stop is kept in
    // `emergency.log`, as a critical intervention.
    let emergency =
        std::fs::read_to_string(repo.path().join(".git/phasegate/emergency.log")).unwrap();
    assert!(
        emergency
            .lines()
            .any(|line| line.contains("Critical internal: ") && line.contains(&said)),
        "{emergency}"
    );

    let run = repo.phasegate_with(&["run"], &[NO_LOCKS]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("error: {said}")),
        "{}",
        run.stderr
    );
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
}
