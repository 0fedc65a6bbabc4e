//! An agent's loop through the gate: what it reads before each retry.
//!
//! Each test plays an agent that commits a handoff document through the
//! installed pre-commit hook, reads the verdict (`run --format json`) and
//! `handoff feedback`, and makes the mistakes agents make. What it reads
//! must say what is wrong, where, and what to change, once.

use crate::support::{output, Run, TestRepo, BIN};

/// A project whose `tests` check fails while the file `broken` exists and
/// whose `lint` passes, with the handoff documents under `handoffs/`, the
/// pre-commit hook installed, and `broken` committed.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(
        r#"[gate]
max_retries = 3
escalate_after = 100

[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "if [ -f broken ]; then echo 'src/lib.rs:2: error: expected 4, got 0'; exit 1; fi" },
  { name = "lint", shell = true, command = "true" },
]

[handoff]
paths = ["handoffs/**/*.md"]
"#,
    );
    repo.write("broken", "");
    repo.commit_all("base");
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{install:?}");
    repo
}

/// `git commit` of everything, through the installed hook.
fn commit(repo: &TestRepo, message: &str) -> Run {
    repo.git(&["add", "-A"]);
    output(
        &repo
            .command("git")
            .args(["commit", "-qm", message])
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    )
}

/// A document of F001 at `implementation` with `fields` as its first
/// fields, then its checkpoints, `tests_passing` saying `tests_passing`.
fn document(fields: &str, tests_passing: &str) -> String {
    format!(
        "---\nid: F001\nstage: implementation\ntitle: Add integers\n{fields}checkpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: {tests_passing}\n  - name: no_lint_errors\n    status: pass\n---\n\nImplemented `add`.\n"
    )
}

/// The "What to fix" lines of a feedback.
fn fixes(feedback: &str) -> Vec<&str> {
    feedback
        .lines()
        .filter_map(|l| l.strip_prefix("- **What to fix:** "))
        .collect()
}

/// The handoff errors of a verdict, `line message` each.
fn errors(verdict: &serde_json::Value) -> Vec<String> {
    verdict["handoffs"][0]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{verdict:#}"))
        .iter()
        .map(|e| format!("{} {}", e["line"], e["message"].as_str().unwrap()))
        .collect()
}

#[test]
fn a_defect_is_said_once_in_the_feedback_and_handoff_ready_says_what_to_set() {
    let repo = project();
    // Told that `tests_passing` is contradicted, the agent skips it and
    // leaves `handoff_ready` true.
    repo.write(
        "handoffs/F001.md",
        &document(
            "started_at: 2026-11-20T09:00:00Z\ncompleted_at: 2026-11-20T10:00:00Z\nstatus: complete\nhandoff_ready: true\nretry_count: 1\nlast_failure: tests_passing contradicted\n",
            "skip\n    message: flaky, later",
        ),
    );
    let hook = commit(&repo, "F001 retry");
    assert_eq!(hook.code, 1, "{hook:?}");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["next"], "fix", "{v:#}");
    let ready = "`handoff_ready` is true but `tests_passing` does not pass (a skip is not a pass): set it to false until every required checkpoint passes";
    assert_eq!(errors(&v), [format!("8 {ready}")], "{v:#}");
    assert!(hook.stderr.contains(ready), "{}", hook.stderr);

    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert_eq!(feedback.code, 1, "{feedback:?}");
    let md = feedback.stdout;
    assert!(md.contains("Retry attempt 2 of 3"), "{md}");
    // How to record the failed run before the next attempt.
    assert!(
        md.contains("Before the next attempt, `phasegate handoff stamp handoffs/F001.md` writes the last run's results into the document: `retry_count`, `last_failure` and the checkpoints its checks verify."),
        "{md}"
    );
    // The reason says it once; the fix points there rather than saying
    // it again.
    assert_eq!(md.matches(ready).count(), 1, "{md}");
    assert!(
        fixes(&md).contains(&"edit line 8 of `handoffs/F001.md` as the reason says"),
        "{md}"
    );

    // A checkpoint that says `fail` is no skip: the reminder is not made.
    repo.write(
        "handoffs/F001.md",
        &document(
            "started_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: true\nretry_count: 2\n",
            "fail",
        ),
    );
    repo.git(&["add", "-A"]);
    let (_, v) = repo.verdict(&[]);
    assert_eq!(
        errors(&v),
        ["7 `handoff_ready` is true but `tests_passing` does not pass: set it to false until every required checkpoint passes"],
        "{v:#}"
    );
}

#[test]
fn completed_before_started_in_another_time_zone_shows_both_in_utc() {
    let repo = project();
    // 09:00 at +01:00 is 08:00 UTC: 07:30Z is before it, which the two
    // values as written do not show.
    repo.write(
        "handoffs/F001.md",
        &document(
            "started_at: 2026-11-20T09:00:00+01:00\ncompleted_at: 2026-11-20T07:30:00Z\nstatus: complete\nhandoff_ready: false\nretry_count: 1\n",
            "fail",
        ),
    );
    let hook = commit(&repo, "F001");
    assert_eq!(hook.code, 1, "{hook:?}");
    let said = "`completed_at` is before `started_at` (line 5) (in UTC, `started_at` is 2026-11-20T08:00:00Z and `completed_at` 2026-11-20T07:30:00Z): correct whichever is wrong";
    assert!(hook.stderr.contains(said), "{}", hook.stderr);
    let (_, v) = repo.verdict(&[]);
    assert_eq!(errors(&v), [format!("6 {said}")], "{v:#}");
}

#[test]
fn a_frontmatter_below_a_title_is_found_and_the_lines_above_it_named() {
    let repo = project();
    let fields = "started_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: false\nretry_count: 1\n";
    for (above, said) in [
        ("\n", "delete line 1 above it"),
        ("# F001\n\n", "delete lines 1-2 above it"),
    ] {
        repo.write(
            "handoffs/F001.md",
            &format!("{above}{}", document(fields, "fail")),
        );
        let hook = commit(&repo, "F001");
        assert_eq!(hook.code, 1, "{hook:?}");
        let line = above.lines().count() + 1;
        let message = format!(
            "the frontmatter must open on line 1, but its `---` is on line {line}: {said} (a title goes below the frontmatter)"
        );
        assert!(hook.stderr.contains(&message), "{}", hook.stderr);
        let (_, v) = repo.verdict(&[]);
        assert_eq!(errors(&v), [format!("1 {message}")], "{v:#}");
    }
    // A `---` rule in a document's Markdown is no frontmatter.
    repo.write("handoffs/F001.md", "# F001\n\nText.\n\n---\n\nMore text.\n");
    repo.git(&["add", "-A"]);
    let (_, v) = repo.verdict(&[]);
    assert_eq!(
        errors(&v),
        ["1 the document has no frontmatter: its first line must be `---`"],
        "{v:#}"
    );
}

#[test]
fn a_tab_after_a_colon_is_named_where_it_is() {
    let repo = project();
    let text = document(
        "started_at: 2026-11-20T09:00:00Z\nstatus:\tin_progress\nhandoff_ready: false\nretry_count: 1\n",
        "fail",
    );
    repo.write("handoffs/F001.md", &text);
    let hook = commit(&repo, "F001");
    assert_eq!(hook.code, 1, "{hook:?}");
    let (_, v) = repo.verdict(&[]);
    assert_eq!(
        errors(&v),
        ["6 the frontmatter is not valid YAML: a tab follows the `:`: write a space there instead"],
        "{v:#}"
    );
    assert_eq!(v["handoffs"][0]["errors"][0]["column"], 8, "{v:#}");
}

#[test]
fn a_blocked_document_without_details_still_shows_its_reason() {
    let repo = project();
    repo.write(
        "handoffs/F001.md",
        &document(
            "started_at: 2026-11-20T09:00:00Z\nstatus: blocked\nblock_reason: needs_human_input\nhandoff_ready: false\nretry_count: 1\n",
            "fail",
        ),
    );
    let hook = commit(&repo, "F001");
    assert_eq!(
        hook.code, 1,
        "git's own status for a refusing hook: {hook:?}"
    );
    let (code, md, v) = crate::handoff_feedback::feedback(&repo);
    assert_eq!(code, 4, "{md}");
    assert!(
        md.contains("- **Block reason:** needs_human_input\n"),
        "{md}"
    );
    assert!(
        md.contains("- **Block details:** none (see the defect in `block_details` below)\n"),
        "{md}"
    );
    assert!(
        md.contains("a blocked document needs `block_details`: say what is needed"),
        "{md}"
    );
    assert_eq!(v["blocked"]["reason"], "needs_human_input", "{v:#}");
    assert_eq!(v["blocked"]["details"], serde_json::Value::Null, "{v:#}");
}

#[test]
fn out_of_retries_with_the_code_fixed_says_how_a_person_lets_work_go_on() {
    let repo = project();
    repo.write(
        "handoffs/F001.md",
        &document(
            "started_at: 2026-11-20T09:00:00Z\nstatus: failed\nhandoff_ready: false\nretry_count: 3\nlast_failure: src/lib.rs:2 expected 4, got 0\n",
            "fail",
        ),
    );
    // The tests pass now: nothing keeps coming back, the document alone
    // holds the commit.
    std::fs::remove_file(repo.path().join("broken")).unwrap();
    let hook = commit(&repo, "F001 fixed");
    assert_eq!(
        hook.code, 1,
        "git's own status for a refusing hook: {hook:?}"
    );
    let note = "handoff `handoffs/F001.md` is out of retries (3 of 3): a person is needed, and goes on by editing it: `status: complete` once its checks pass, or a lower `retry_count` to allow more attempts";
    assert!(hook.stderr.contains(note), "{}", hook.stderr);
    assert!(
        !hook.stderr.contains("keep coming back"),
        "no errors repeat here: {}",
        hook.stderr
    );
    assert!(
        hook.stderr
            .contains("the gate asks for a person (the note above says why)"),
        "{}",
        hook.stderr
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, v["next"].as_str()), (4, Some("escalate")), "{v:#}");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n == note),
        "{v:#}"
    );
    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert_eq!(feedback.code, 4, "{feedback:?}");
    assert!(
        feedback.stdout.contains("Retries used: 3 of 3"),
        "{}",
        feedback.stdout
    );

    // The person marks the work done: the commit goes through.
    repo.write(
        "handoffs/F001.md",
        &document(
            "started_at: 2026-11-20T09:00:00Z\ncompleted_at: 2026-11-20T10:00:00Z\nstatus: complete\nhandoff_ready: true\nretry_count: 3\n",
            "pass",
        ),
    );
    let hook = commit(&repo, "F001 done");
    assert_eq!(hook.code, 0, "{hook:?}");
}
