//! Escalation, run history and resume over several real runs.

use crate::support::{check, TestRepo};

/// The checks of a verdict by name, in its order.
pub(crate) fn names(v: &serde_json::Value) -> Vec<String> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// A check failing with a compiler's line for `a.c` at the line
/// `line.txt` holds, naming a directory `mktemp` makes anew each run (as
/// a test's `tempfile.mkdtemp()` does) and an object at an address of its
/// own (as Python's `repr` of an object does).
fn failing_in_a_new_temporary_directory(repo: &TestRepo) {
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"d=$(mktemp -d /tmp/tmp.XXXXXXXXXX); a=$(od -An -tx8 -N8 /dev/urandom | tr -d ' '); printf 'a.c:%s:1: error: cannot open %s/db for <Conn object at 0x%s>\\\\n' \\\"$(cat line.txt)\\\" \\\"$d\\\" \\\"$a\\\"; rmdir \\\"$d\\\"; exit 1\" } ]\n",
    );
}

#[test]
fn the_same_error_moved_down_naming_a_new_temporary_directory_and_address_is_repeated() {
    let repo = TestRepo::new();
    failing_in_a_new_temporary_directory(&repo);
    let mut messages = Vec::new();
    let mut last = (0, serde_json::Value::Null);
    // An agent adding a line above the error each time.
    for line in ["10", "11", "12"] {
        repo.write("line.txt", line);
        last = repo.verdict(&["--all-files"]);
        let diagnostic = &last.1["diagnostics"][0];
        assert_eq!(diagnostic["line"].to_string(), line, "{:#}", last.1);
        messages.push(diagnostic["message"].as_str().unwrap().to_string());
    }
    messages.dedup();
    assert_eq!(
        messages.len(),
        3,
        "each run names its own directory and address: {messages:?}"
    );
    let (code, v) = last;
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["status"], "blocked");
    assert_eq!(v["next"], "escalate");
    assert!(
        v["notes"].to_string().contains("failed 3 runs in a row"),
        "{:#}",
        v["notes"]
    );
}

/// A check failing with the same compiler error on every branch.
fn failing_everywhere(repo: &TestRepo) {
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"echo 'a.c:1:1: error: stuck'; exit 1\" } ]\n",
    );
    repo.commit_all("init");
}

#[test]
fn another_branch_s_failures_neither_start_nor_continue_a_streak() {
    let repo = TestRepo::new();
    failing_everywhere(&repo);
    repo.git(&["checkout", "-q", "-b", "feature-a"]);
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{v:#}");
    }
    // The same work tree, switched to other work: its first failure is
    // its first attempt.
    repo.git(&["checkout", "-q", "-b", "feature-b", "main"]);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "one failure on `feature-b` is no streak: {v:#}");
    assert_eq!(v["status"], "failed");
    // Back on `feature-a`, its streak goes on where it was.
    repo.git(&["checkout", "-q", "feature-a"]);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert!(
        v["notes"].to_string().contains("failed 3 runs in a row"),
        "{:#}",
        v["notes"]
    );
}

#[test]
fn resume_after_a_run_of_named_checks_runs_again_only_those() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"tests\", shell = true, command = \"test -f tests.ok\" },\n  { name = \"lint\", shell = true, command = \"test -f lint.ok\" },\n]\n",
    );
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files", "--check", "lint"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(names(&v), ["lint"]);
    // `tests` still fails, but the run never asked for it: the resume
    // finishes what `--check lint` left, and says what it ran again.
    let run = repo.phasegate(&["resume", "--format", "json"]);
    let v = run.json();
    assert_eq!(run.code, 1, "{v:#}");
    assert_eq!(names(&v), ["lint"], "{v:#}");
    assert!(
        v["notes"].to_string().contains("ran again `lint`"),
        "{:#}",
        v["notes"]
    );
    // Fixed, it passes, and the next resume stays among those checks.
    repo.write("lint.ok", "");
    let run = repo.phasegate(&["resume", "--format", "json"]);
    let v = run.json();
    assert_eq!(run.code, 0, "{v:#}");
    assert_eq!(names(&v), ["lint"], "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed");
    let run = repo.phasegate(&["resume"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("nothing to resume"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

/// A blocking check that fails and another that would time out: neither
/// may go through unverified.
fn tests_and_slow(repo: &TestRepo, profile: &str) {
    repo.config(&format!(
        "[gate]\nprofile = \"{profile}\"\n\n[phases.implementation]\nchecks = [\n  {{ name = \"tests\", shell = true, command = \"test -f tests.ok\" }},\n  {{ name = \"slow\", shell = true, command = \"test -f slow.ok\" }},\n]\n"
    ));
    repo.commit_all("init");
}

#[test]
fn under_strict_a_check_phasegate_skip_skipped_keeps_the_gate_closed_and_says_why() {
    let repo = TestRepo::new();
    tests_and_slow(&repo, "strict");
    repo.write("tests.ok", "");
    let skip = [("PHASEGATE_SKIP", "slow")];
    let (code, v) = repo.verdict_with(&["--all-files"], &skip);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(v["status"], "incomplete");
    assert_eq!(v["next"], "resume");
    assert_eq!(check(&v, "slow")["status"], "skipped");
    assert_eq!(check(&v, "slow")["reason"], "skipped by PHASEGATE_SKIP");
    assert_eq!(check(&v, "tests")["status"], "passed");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("PHASEGATE_SKIP skipped `slow`")
            && notes.contains("strict profile lets nothing unverified through"),
        "{notes}"
    );
    // The person at the terminal reads the same, and the exit code.
    let run = repo.phasegate_with(&["run", "--all-files"], &skip);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("skipped by PHASEGATE_SKIP")
            && run.stdout.contains("unset PHASEGATE_SKIP")
            && run.stdout.contains("incomplete"),
        "{}",
        run.stdout
    );
    // Under `auto` the escape hatch lets the run through, with a warning.
    let (code, v) = repo.verdict_with(&["--all-files", "--profile", "auto"], &skip);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned");
}

#[test]
fn resume_runs_again_a_check_phasegate_skip_skipped_instead_of_passing_it_unseen() {
    let repo = TestRepo::new();
    tests_and_slow(&repo, "auto");
    let (code, v) = repo.verdict_with(&["--all-files"], &[("PHASEGATE_SKIP", "slow")]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "slow")["status"], "skipped");
    // `tests` fixed; `slow` was never verified and still fails.
    repo.write("tests.ok", "");
    let run = repo.phasegate(&["resume", "--format", "json"]);
    let v = run.json();
    assert_eq!(run.code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed");
    assert_eq!(check(&v, "slow")["status"], "failed");
    // While the variable still names it, it is skipped again, and says so.
    let run = repo.phasegate_with(
        &["resume", "--format", "json"],
        &[("PHASEGATE_SKIP", "slow")],
    );
    let v = run.json();
    assert_eq!(run.code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(check(&v, "slow")["reason"], "skipped by PHASEGATE_SKIP");
}
