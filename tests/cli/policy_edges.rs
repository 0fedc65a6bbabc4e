//! Integration tests: policy edges (verifier batches, wrapped tools,
//! skipped checks).

use crate::support::{check, TestRepo};

/// A repository with enough staged files that a `shell = true` check
/// passing `{files}` runs in two batches (the script must stay under the
/// kernel's single-argument limit), and the verifier `review.sh`, which
/// answers `first` for the batch that starts with the first file and
/// `rest` for the other.
fn two_batch_reviewer(first: &str, rest: &str, on_failure: &str) -> TestRepo {
    two_batch_check(
        first,
        rest,
        &format!("kind = \"verifier\", on_failure = \"{on_failure}\""),
    )
}

/// `two_batch_reviewer` for any check, with its other `options`.
fn two_batch_check(first: &str, rest: &str, options: &str) -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..1500 {
        repo.write(&format!("docs/{}-{i:04}.md", "n".repeat(90)), "");
    }
    repo.write(
        "review.sh",
        &format!("case \"$1\" in\n  *-0000.md) {first} ;;\n  *) {rest} ;;\nesac\n"),
    );
    repo.config(&format!(
        r#"[phases.implementation]
checks = [ {{ name = "review", shell = true, command = "sh review.sh {{files}}", files = ["*.md"], {options} }} ]
"#
    ));
    repo.git(&["add", "-A"]);
    repo
}

const FAIL: &str = r#"echo '{"verdict": "fail", "findings": [{"file": "docs/x.md", "line": 2, "message": "criterion 2 is not met"}]}'; exit 1"#;
const UNREADABLE: &str = "echo 'Reviewing the remaining files...'";

#[test]
fn a_batch_that_answers_fail_is_not_outweighed_by_one_that_cannot_be_read() {
    for (first, rest) in [(FAIL, UNREADABLE), (UNREADABLE, FAIL)] {
        let repo = two_batch_reviewer(first, rest, "block");
        let (code, v) = repo.verdict(&["--profile", "fast"]);
        let review = check(&v, "review");
        assert_eq!(review["argv"].as_array().unwrap().len(), 2, "{review:#}");
        // The reviewer's fail is the answer, under `fast` too.
        assert_eq!(code, 1, "{first} / {rest}: {v:#}");
        assert_eq!(v["status"], "failed");
        assert_eq!(v["next"], "fix");
        assert_eq!(v["fail_open"], false);
        assert!(
            v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["message"] == "criterion 2 is not met" && d["tool"] == "verifier"),
            "{v:#}"
        );
        // The batch that was not reviewed is said too.
        let reason = review["reason"].as_str().unwrap();
        assert!(
            reason.contains("answered \"fail\"")
                && reason.contains("Reviewing the remaining files"),
            "{reason}"
        );
    }
}

#[test]
fn a_fail_that_only_warns_leaves_the_unreadable_batch_unfinished() {
    // Under `auto`, the fail warns but the other batch was never
    // reviewed: verification did not finish.
    let repo = two_batch_reviewer(FAIL, UNREADABLE, "warn");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(
        (v["status"].as_str(), v["next"].as_str()),
        (Some("incomplete"), Some("resume"))
    );
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["message"] == "criterion 2 is not met"),
        "{v:#}"
    );
}

/// A repository whose one check runs `command` (`shell = true` when
/// `shell`), in the implementation phase.
fn one_check(command: &str, shell: bool) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"c\", command = {command:?}, shell = {shell} }} ]\n"
    ));
    repo
}

#[test]
fn a_shell_script_whose_flock_cannot_find_its_tool_is_a_missing_tool() {
    // util-linux flock exits 69 (EX_UNAVAILABLE) or, by its version, 127,
    // saying `flock: failed to execute NAME: No such file or directory`.
    let repo = one_check("flock .lock phasegate-no-such-tool --check", true);
    let (code, v) = repo.verdict(&[]);
    let c = check(&v, "c");
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(
        (c["status"].as_str(), c["tier"].as_u64()),
        (Some("missing"), Some(1)),
        "{c:#}"
    );
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .contains("`phasegate-no-such-tool` is not installed"),
        "{c:#}"
    );
    // Under `fast`, a missing tool is skipped with a note, never a failure.
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "c")["status"], "skipped");
}

#[test]
fn a_lock_flock_gave_up_on_is_a_check_that_did_not_run() {
    for (command, shell) in [
        ("flock -n --verbose .lock true", false),
        ("flock -w 0.01 --verbose .lock true", false),
        ("flock -n -E 75 .lock true", false),
        ("flock -n --verbose .lock true", true),
    ] {
        let repo = one_check(command, shell);
        // Another process holds the lock while the check runs.
        let held = std::fs::File::create(repo.path().join(".lock")).unwrap();
        held.lock().unwrap();
        let (code, v) = repo.verdict(&[]);
        let c = check(&v, "c");
        assert_eq!(code, 3, "{command}: {v:#}");
        assert_eq!(
            (v["status"].as_str(), v["next"].as_str()),
            (Some("incomplete"), Some("resume"))
        );
        assert_eq!(c["tier"], 2, "{command}: {c:#}");
        let reason = c["reason"].as_str().unwrap();
        assert!(
            reason.contains("did not get its lock")
                && reason.contains("run again when the lock is free"),
            "{command}: {reason}"
        );
        // Under `fast`, it fails open, and says so.
        let (code, v) = repo.verdict(&["--profile", "fast"]);
        assert_eq!(
            (code, v["fail_open"].as_bool()),
            (0, Some(true)),
            "{command}: {v:#}"
        );
        // With the lock free, the check runs and passes.
        held.unlock().unwrap();
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{command}: {v:#}");
    }
}

#[test]
fn flock_told_to_pass_when_it_gives_up_is_a_broken_check() {
    // `-E 0` would pass a check whose command never ran.
    let repo = one_check("flock -n -E 0 .lock false", false);
    let (code, v) = repo.verdict(&[]);
    let c = check(&v, "c");
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(c["tier"], 2, "{c:#}");
    assert!(
        c["reason"].as_str().unwrap().contains("`flock -E 0`"),
        "{c:#}"
    );
}

#[test]
fn flocks_silent_status_one_stays_a_failure() {
    // Without `--verbose` or `-E`, flock's 1 is also its command's: the
    // exit status is the truth, and the gate fails closed.
    let repo = one_check("flock -n .lock false", false);
    let held = std::fs::File::create(repo.path().join(".lock")).unwrap();
    held.lock().unwrap();
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "c")["status"], "failed");
}

#[test]
fn a_check_asked_for_by_name_runs_even_when_phasegate_skip_names_it() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"false\" }, { name = \"lint\", command = \"true\" } ]\n",
    );
    let skip = [("PHASEGATE_SKIP", "tests")];
    let (code, v) = repo.verdict_with(&["--check", "tests"], &skip);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed");
    assert!(
        v["notes"]
            .to_string()
            .contains("PHASEGATE_SKIP names `tests`, but `--check` asks for it: it ran"),
        "{v:#}"
    );
    // Without `--check`, the skip is the escape hatch it is documented to
    // be: the run proceeds, warns, and names what was not verified.
    let (code, v) = repo.verdict_with(&[], &[("PHASEGATE_SKIP", "tests,lint")]);
    assert_eq!((code, v["status"].as_str()), (0, Some("warned")), "{v:#}");
    assert!(
        v["notes"].to_string().contains(
            "no check ran in phase `implementation`: PHASEGATE_SKIP skipped `tests`, `lint`, so nothing was verified"
        ),
        "{v:#}"
    );
    let run = repo.phasegate_with(&["run"], &[("PHASEGATE_SKIP", "tests")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("PHASEGATE_SKIP skipped `tests`: not verified in this run"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_batch_that_failed_stands_when_a_later_one_crashes() {
    // The first batch's failure is the tool's word; the second crashes.
    let repo = two_batch_check(
        "echo 'docs/x.md:1: error: broken'; exit 1",
        "kill -SEGV $PPID",
        "on_failure = \"block\"",
    );
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    let review = check(&v, "review");
    assert_eq!(review["argv"].as_array().unwrap().len(), 2, "{review:#}");
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        (v["status"].as_str(), v["fail_open"].as_bool()),
        (Some("failed"), Some(false))
    );
    let reason = review["reason"].as_str().unwrap();
    assert!(
        reason.contains("a batch of files failed (exit 1), and another crashed"),
        "{reason}"
    );
}
