//! The decision: repeated errors, tiers and profiles at their edges.

use crate::support::{check, TestRepo};

/// One check, `tests`, whose shell script prints output no parser reads
/// and fails.
fn unparsed_failure(script: &str) -> String {
    format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", shell = true, command = {script:?} }} ]\n"
    )
}

#[test]
fn unparsed_failures_on_other_tests_each_run_are_progress_not_a_repeat() {
    let repo = TestRepo::new();
    // The last line is the same whatever failed, as a test runner's
    // closing `FAILED` or npm's `Test failed.` is.
    repo.config(&unparsed_failure(
        "echo \"running the suite\"; echo \"broken: $(cat which.txt)\"; echo FAILED; exit 1",
    ));
    for which in ["alpha", "beta", "gamma", "delta"] {
        repo.write("which.txt", which);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "another failure each run is not a repeat: {v:#}");
        assert_eq!(v["next"], "fix");
        assert_eq!(v["diagnostics"][0]["code"], "check-failed");
    }
}

#[test]
fn the_same_unparsed_failure_repeats_whatever_timings_pids_addresses_and_temporary_paths_it_prints()
{
    let repo = TestRepo::new();
    // What changes from one run of the same failure to the next: a
    // temporary directory's random name, a process id, an address, a
    // timing.
    repo.config(&unparsed_failure(concat!(
        "dir=$(mktemp -d); ",
        "echo \"suite took $(date +%N)ns\"; ",
        "echo \"workspace $dir/build\"; ",
        // The last line, which a summary shows, changes too.
        "echo \"worker $$ crashed at 0x$(od -An -N6 -tx1 /dev/urandom | tr -d ' \\n') in $dir\"; ",
        "rmdir \"$dir\"; exit 1",
    )));
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{v:#}");
    }
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "the same failure three runs in a row: {v:#}");
    assert_eq!(v["status"], "blocked");
    assert_eq!(v["next"], "escalate");
    assert!(
        v["notes"].to_string().contains("failed 3 runs in a row"),
        "{v:#}"
    );
    assert_eq!(check(&v, "tests")["status"], "failed");
}

#[test]
fn runs_the_fast_profile_let_through_never_add_up_to_blocked() {
    let repo = TestRepo::new();
    // The tool prints an error, then hangs until its timeout: under
    // `fast` the run fails open, and proceeds.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, timeout = \"1s\", command = \"echo 'a.c:1:1: error: stuck'; sleep 30\" } ]\n",
    );
    for _ in 0..3 {
        let (code, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
        assert_eq!(code, 0, "a run that fails open proceeds: {v:#}");
        assert_eq!(
            (&v["status"], &v["next"], &v["fail_open"]),
            (&"incomplete".into(), &"proceed".into(), &true.into()),
            "{v:#}"
        );
        assert!(
            !v["notes"].to_string().contains("a person is needed"),
            "{v:#}"
        );
    }
    // Fail-closed, the same errors stop the run each time, and do add up.
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 3, "{v:#}");
    }
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["next"], "escalate");
}

#[test]
fn a_claim_is_contradicted_by_a_verifier_pass_that_names_an_error() {
    let repo = TestRepo::new();
    // The reviewer says "pass" but names an error: the gate reads it as a
    // fail, which `on_failure = "warn"` lets through, and a document that
    // claims what it verifies claims what it found wanting.
    let answer = r#"{"verdict": "pass", "findings": [{"file": "handoffs/F001.md", "line": 1, "severity": "error", "message": "criterion 2 is not met"}]}"#;
    repo.config(&format!(
        r#"[phases.implementation]
checks = [
  {{ name = "tests", command = "true" }},
  {{ name = "lint", command = "true" }},
  {{ name = "review", kind = "verifier", on_failure = "warn", shell = true, command = {:?} }},
]

[handoff.claims]
code_complete = "review"
"#,
        format!("echo '{answer}'")
    ));
    repo.stage(
        "handoffs/F001.md",
        &std::fs::read_to_string(format!(
            "{}/fixtures/handoff/valid-complete.md",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(check(&v, "review")["status"], "warned", "{v:#}");
    assert_eq!(code, 1, "the document's claim is contradicted: {v:#}");
    assert!(
        v.to_string()
            .contains("claim contradicted by check `review`"),
        "{v:#}"
    );
    // `handoff feedback` reads the run the same way.
    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert!(
        feedback.stdout.contains("`review`"),
        "{}\n{}",
        feedback.stdout,
        feedback.stderr
    );
}
