//! Handoff documents written the way real authors and agents write them.

use crate::support::{handoff_errors, Run, TestRepo};

const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// An implementation document: `fields` go between `id` and the
/// checkpoints, which all pass.
fn document(fields: &str) -> String {
    format!(
        "---\nid: F7\nstage: implementation\n{fields}checkpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n---\n# Notes\n"
    )
}

#[test]
fn feedback_never_guesses_the_attempt_of_a_document_whose_retry_count_cannot_be_read() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // Out of retries (3 of 3), but a colon in the title breaks the YAML:
    // nothing of the frontmatter can be read, its budget included.
    let spent = "title: Parser: third try\nstarted_at: 2026-01-01T10:00:00Z\nstatus: failed\nretry_count: 3\nhandoff_ready: true\n";
    repo.write("handoffs/F7.md", &document(spent));
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F7.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains("Retry attempt 1 of 3"),
        "a spent budget read as the first attempt:\n{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Retry attempt: unknown (`retry_count` cannot be read"),
        "{}",
        run.stdout
    );
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F7.md"])
        .json();
    assert_eq!(json["attempt"], serde_json::Value::Null, "{json:#}");

    // A quoted count is text, not a number: unknown too.
    let quoted = "title: Parser\nstarted_at: 2026-01-01T10:00:00Z\nstatus: failed\nretry_count: \"3\"\nhandoff_ready: true\n";
    repo.write("handoffs/F7.md", &document(quoted));
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F7.md"]);
    assert!(
        !run.stdout.contains("Retry attempt 1 of 3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Retry attempt: unknown"),
        "{}",
        run.stdout
    );

    // A count that can be read still counts.
    let read = "title: Parser\nstarted_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nretry_count: 1\nhandoff_ready: false\n";
    repo.write("handoffs/F7.md", &document(read));
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F7.md"])
        .json();
    assert_eq!(json["attempt"], 2, "{json:#}");
}

#[test]
fn control_characters_in_a_document_never_reach_the_terminal_raw() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // An escape sequence that retitles the terminal and turns it red, a
    // bell, and U+009B (ESC [ in one character), on the line of an error
    // and before it.
    let doc = "---\nid: F7\nstage: implementation\ntitle: \u{1b}]0;owned\u{7} \u{1b}[31mred \u{9b}2J\nstarted_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nhandoff_ready: false\ncheckpoints: [{name: \"a\u{1b}b\", status: bad}]\n---\n";
    repo.write("handoffs/F7.md", doc);
    // No raw control character reaches the terminal.
    let shown_safely = |run: &Run| {
        for raw in ['\u{1b}', '\u{7}', '\u{9b}'] {
            assert!(
                !run.stdout.contains(raw),
                "{raw:?} reached the terminal:\n{}",
                run.stdout.escape_debug()
            );
        }
    };
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F7.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    shown_safely(&run);
    assert!(
        run.stdout.contains("handoffs/F7.md:8:37 error"),
        "{}",
        run.stdout
    );
    // Drawn at a terminal, the label still stands under the bad status,
    // after the replaced character on its line.
    let run = crate::report_once::at_terminal(&repo, &["handoff", "validate", "handoffs/F7.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    shown_safely(&run);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let source = lines
        .iter()
        .position(|l| l.contains("status: bad"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let column = |line: &str, needle: &str| {
        line.rfind(needle)
            .map(|at| line[..at].chars().count())
            .unwrap()
    };
    assert_eq!(
        column(lines[source + 1], "─┬─"),
        column(lines[source], "bad"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_yaml_mistake_says_how_to_write_it_right() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let start = "started_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nhandoff_ready: true\n";
    for (fields, at, advice) in [
        // The mistake agents make most: a colon in a title.
        (
            "title: Fix: the parser # why\n",
            "4:11",
            "a value that holds `: ` must be quoted: write `title: \"Fix: the parser\"`",
        ),
        (
            "title: x\n  owner: me\n",
            "5:8",
            "check this line's indentation",
        ),
        (
            "title: 'it's done'\n",
            "4:12",
            "quote the whole value, and inside it write a `'` as `''`",
        ),
        (
            "title: \"unclosed\n",
            "4:8",
            "the quote that opens here is never closed",
        ),
        (
            "title: @home\n",
            "4:8",
            "a value cannot start with `@`: put the value in quotes",
        ),
        (
            "title: `code`\n",
            "4:8",
            "a value cannot start with a backtick: put the value in quotes",
        ),
        (
            "title: *starred*\n",
            "4:8",
            "a value that starts with `*` or `&` must be quoted",
        ),
        (
            "title: - dash\n",
            "4:8",
            "a text that starts with `- ` must be quoted",
        ),
        (
            "title: x\nnotes\nowner: me\n",
            "6:1",
            "add the missing `:` here or on the line above",
        ),
    ] {
        repo.write("handoffs/F7.md", &document(&format!("{fields}{start}")));
        let found = handoff_errors(&repo, "handoffs/F7.md");
        assert_eq!(found.len(), 1, "{fields:?}: {found:?}");
        assert!(
            found[0].starts_with(&format!("{at} the frontmatter is not valid YAML: ")),
            "{fields:?}: {found:?}"
        );
        assert!(found[0].contains(advice), "{fields:?}: {found:?}");
    }
    // In a checkpoint's list item too, and after the fix it is valid.
    let doc = document(&format!("title: x\n{start}")).replace(
        "name: code_complete",
        "name: code_complete\n    message: done: all of it",
    );
    repo.write("handoffs/F7.md", &doc);
    let found = handoff_errors(&repo, "handoffs/F7.md");
    assert!(
        found[0].contains("write `message: \"done: all of it\"`"),
        "{found:?}"
    );
    repo.write(
        "handoffs/F7.md",
        &doc.replace("done: all of it", "\"done: all of it\""),
    );
    assert_eq!(
        handoff_errors(&repo, "handoffs/F7.md"),
        Vec::<String>::new()
    );
}

#[test]
fn a_value_of_the_wrong_type_says_what_to_write() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let doc = "---\nid: 42\nstage: implementation\ntitle: x\nstarted_at: 2026-01-01T10:00:00Z\nstatus: failed\nhandoff_ready: yes\nretry_count: \"2\"\ncheckpoints:\n  - {name: tests_written, status: PASS}\n  - {name: code_complete, status: true}\n  - {name: tests_passing, status: pass}\n  - {name: no_lint_errors, status: pass}\n---\n";
    repo.write("handoffs/F7.md", doc);
    let found = handoff_errors(&repo, "handoffs/F7.md");
    let expected = [
        "2:5 `id` must be text, not an integer: put the value in quotes",
        "7:16 `handoff_ready` must be true or false, not the text \"yes\": write true (YAML 1.2 reads `yes` as text)",
        "8:14 `retry_count` must be a whole number from 0 to 3, not the text \"2\": write 2 without quotes",
        "10:35 checkpoint `tests_written`: `status` must be one of \"pass\", \"fail\", \"skip\", not \"PASS\"; did you mean \"pass\"?",
        "11:35 checkpoint `code_complete`: `status` must be one of \"pass\", \"fail\", \"skip\", not a boolean: write pass or fail",
    ];
    for line in expected {
        assert!(found.iter().any(|f| f == line), "{line}\nnot in {found:#?}");
    }
    repo.write(
        "handoffs/F7.md",
        &doc.replace("handoff_ready: yes", "handoff_ready: \"false\"")
            .replace("retry_count: \"2\"", "retry_count: 2.0"),
    );
    let found = handoff_errors(&repo, "handoffs/F7.md");
    for line in [
        "7:16 `handoff_ready` must be true or false, not the text \"false\": write false without quotes",
        "8:14 `retry_count` must be a whole number from 0 to 3, not 2.0: write 2 without a fraction",
    ] {
        assert!(found.iter().any(|f| f == line), "{line}\nnot in {found:#?}");
    }
}

#[test]
fn a_date_without_a_time_means_the_whole_day() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let fields = |started: &str, completed: &str| {
        format!("title: x\nstarted_at: {started}\ncompleted_at: {completed}\nstatus: complete\nhandoff_ready: true\n")
    };
    // Started at ten and completed the same day: no contradiction.
    for (started, completed) in [
        ("2026-01-01T10:00:00Z", "2026-01-01"),
        ("2026-01-01", "2026-01-01"),
        ("2026-01-01", "2026-01-01T00:00:00Z"),
        ("2026-01-01T23:30:00+02:00", "2026-01-01"),
    ] {
        repo.write("handoffs/F7.md", &document(&fields(started, completed)));
        assert_eq!(
            handoff_errors(&repo, "handoffs/F7.md"),
            Vec::<String>::new(),
            "{started} → {completed}"
        );
    }
    // A day before the start is before it, whatever its time.
    for (started, completed) in [
        ("2026-01-02", "2026-01-01T23:59:59Z"),
        ("2026-01-02", "2026-01-01"),
        ("2026-01-01T10:00:00Z", "2025-12-31"),
    ] {
        repo.write("handoffs/F7.md", &document(&fields(started, completed)));
        assert_eq!(
            handoff_errors(&repo, "handoffs/F7.md"),
            ["6:15 `completed_at` is before `started_at` (line 5): correct whichever is wrong"],
            "{started} → {completed}"
        );
    }
}
