//! Handoff documents that claim too much or are told too little: future times and messages that say what to do.

use crate::support::{handoff_errors, TestRepo};

const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// The four checkpoints of an implementation document, each passing.
const PASSING: &str = "checkpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n";

/// An implementation document in progress: `fields` go after
/// `handoff_ready` (line 8 on), `checkpoints` after them.
fn document(fields: &str, checkpoints: &str) -> String {
    format!(
        "---\nid: F7\nstage: implementation\ntitle: Parser\nstarted_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nhandoff_ready: true\n{fields}{checkpoints}---\n# Notes\n"
    )
}

/// `secs` since the epoch as an RFC 3339 UTC timestamp.
fn timestamp(secs: u64) -> String {
    phasegate::handoff::time::utc_text(i64::try_from(secs).unwrap())
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn a_completion_in_the_future_is_a_claim_nothing_verified() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let complete = |started: &str, completed: &str| {
        document("", PASSING)
            .replace(
                "started_at: 2026-01-01T10:00:00Z",
                &format!("started_at: {started}"),
            )
            .replace(
                "status: in_progress",
                &format!("status: complete\ncompleted_at: {completed}"),
            )
    };
    repo.write(
        "handoffs/F7.md",
        &complete("2026-01-01T10:00:00Z", "2999-01-01T00:00:00Z"),
    );
    let found = handoff_errors(&repo, "handoffs/F7.md");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with("7:15 `completed_at` is ")
            && found[0].contains("days in the future: a handoff records what has already happened"),
        "{found:#?}"
    );
    // The gate refuses it as well: `run` judges the staged document.
    repo.stage(
        "handoffs/F7.md",
        &complete("2999-01-01T00:00:00Z", "2999-01-02T00:00:00Z"),
    );
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    let fields: Vec<&str> = verdict["handoffs"][0]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["started_at", "completed_at"], "{verdict:#}");

    // Just now, and a clock a minute or two ahead of phasegate's, are not
    // the future.
    let started = timestamp(now() - 3600);
    for completed in [timestamp(now()), timestamp(now() + 120)] {
        repo.write("handoffs/F7.md", &complete(&started, &completed));
        assert_eq!(
            handoff_errors(&repo, "handoffs/F7.md"),
            Vec::<String>::new(),
            "{completed}"
        );
    }
}

#[test]
fn a_number_is_shown_as_written_and_says_what_is_accepted() {
    let repo = TestRepo::new();
    repo.config(GATE);
    for (count, expected) in [
        (
            "0o7",
            "8:14 `retry_count` must be between 0 and 3 (`max_retries`), not `0o7` (which is 7)",
        ),
        (
            "0x10",
            "8:14 `retry_count` must be between 0 and 3 (`max_retries`), not `0x10` (which is 16)",
        ),
        (
            "100000000000000000000000",
            "8:14 `retry_count` must be a whole number from 0 to 3, not 100000000000000000000000, a number too large to count retries",
        ),
        (
            ".inf",
            "8:14 `retry_count` must be a whole number from 0 to 3, not .inf (infinity)",
        ),
        (
            ".nan",
            "8:14 `retry_count` must be a whole number from 0 to 3, not .nan (not a number)",
        ),
    ] {
        repo.write(
            "handoffs/F7.md",
            &document(&format!("retry_count: {count}\n"), PASSING),
        );
        assert_eq!(handoff_errors(&repo, "handoffs/F7.md"), [expected], "{count}");
    }
    // `.inf` is a number where text is wanted, as `2` is.
    repo.write(
        "handoffs/F7.md",
        &document("", PASSING).replace("title: Parser", "title: .inf"),
    );
    assert_eq!(
        handoff_errors(&repo, "handoffs/F7.md"),
        ["4:8 `title` must be text, not a number: put the value in quotes"]
    );
}

#[test]
fn a_value_of_the_wrong_kind_is_told_the_accepted_values_or_form() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let named = PASSING.replace("name: code_complete", "name: 42");
    repo.write("handoffs/F7.md", &document("", &named));
    let found = handoff_errors(&repo, "handoffs/F7.md");
    assert!(
        found.contains(&"11:11 a checkpoint's `name` must be text, not an integer: put it in quotes (`name: \"42\"`); stage `implementation` requires `code_complete`, which no entry names: if this entry is it, write `name: code_complete`".to_string()),
        "{found:#?}"
    );
    repo.write(
        "handoffs/F7.md",
        &document("block_reason: [a]\n", PASSING).replace("in_progress", "blocked"),
    );
    let found = handoff_errors(&repo, "handoffs/F7.md");
    assert!(
        found.contains(&"8:15 `block_reason` must be one of \"needs_human_input\", \"external_dependency\", \"scope_change\", not a list".to_string()),
        "{found:#?}"
    );
    repo.write(
        "handoffs/F7.md",
        &document("", PASSING).replace("stage: implementation", "stage: 3"),
    );
    assert_eq!(
        handoff_errors(&repo, "handoffs/F7.md"),
        ["3:8 `stage` must be one of \"requirements\", \"architecture\", \"implementation\", \"qa\", not an integer"]
    );
}

#[test]
fn a_checkpoint_with_a_bad_status_is_one_error_not_two() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write(
        "handoffs/F7.md",
        &document("", &PASSING.replacen("status: pass", "status: done", 1)),
    );
    assert_eq!(
        handoff_errors(&repo, "handoffs/F7.md"),
        ["10:13 checkpoint `tests_written`: `status` must be one of \"pass\", \"fail\", \"skip\", not \"done\""]
    );
}

#[test]
fn prose_right_below_the_fields_says_the_closing_line_is_missing() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // The closing `---` forgotten: the body's own rule closes the
    // frontmatter, and the first line of prose follows the last field.
    let doc = document("", PASSING).replace(
        "---\n# Notes\n",
        "The parser is done.\n\nIt reads every form.\n\n---\n\nMore.\n",
    );
    repo.write("handoffs/F7.md", &doc);
    assert_eq!(
        handoff_errors(&repo, "handoffs/F7.md"),
        ["17:1 line 17 is text, not a field (`key: value`): the frontmatter that opens on line 1 is probably missing its closing `---` above it: add a `---` line after line 16, its last field (or, if the line goes on with the value above it, indent it)"]
    );
    // A field missing its `:` is told to add it, mistyped or not.
    for typo in ["retry_count 2", "retry count 2", "staus in_progress"] {
        repo.write("handoffs/F7.md", &document(&format!("{typo}\n"), PASSING));
        let found = handoff_errors(&repo, "handoffs/F7.md");
        assert!(
            found.len() == 1 && found[0].contains("add the missing `:`"),
            "{typo}: {found:#?}"
        );
    }
}
