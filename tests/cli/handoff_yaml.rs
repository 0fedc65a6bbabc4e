//! Handoff frontmatter values: timestamps, types and YAML shapes.

use crate::support::TestRepo;

const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// A complete implementation document whose checkpoints all pass, with
/// `field: value` lines put in place of the line that starts `field:`
/// (or added before `checkpoints:` when none does).
fn document(changes: &[(&str, &str)]) -> String {
    let mut lines: Vec<String> = [
        "---",
        "id: F7",
        "stage: implementation",
        "title: Parse the verdict",
        "started_at: 2026-11-20T09:00:00Z",
        "completed_at: 2026-11-21T17:30:00+01:00",
        "status: complete",
        "handoff_ready: true",
        "retry_count: 0",
        "checkpoints:",
        "  - name: tests_written",
        "    status: pass",
        "  - name: code_complete",
        "    status: pass",
        "  - name: tests_passing",
        "    status: pass",
        "  - name: no_lint_errors",
        "    status: pass",
        "---",
        "",
        "Parses the verdict.",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    for (field, line) in changes {
        let prefix = format!("{field}:");
        match lines.iter().position(|l| l.starts_with(&prefix)) {
            Some(at) => lines[at] = (*line).to_string(),
            None => {
                let at = lines.iter().position(|l| l == "checkpoints:").unwrap();
                lines.insert(at, (*line).to_string());
            }
        }
    }
    lines.join("\n") + "\n"
}

/// The exit code, errors and warnings of `handoff validate --format json`
/// on the one document `text`.
fn validate(text: &str) -> (i32, Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F7.md", text);
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "handoffs/F7.md"]);
    let json = run.json();
    let list = |key: &str| {
        json["handoffs"][0][key]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    (run.code, list("errors"), list("warnings"))
}

#[test]
fn the_baseline_document_is_valid_so_each_case_tests_one_change() {
    let (code, errors, warnings) = validate(&document(&[]));
    assert_eq!(
        (code, errors.len(), warnings.len()),
        (0, 0, 0),
        "{errors:#?}{warnings:#?}"
    );
}

#[test]
fn a_date_that_does_not_exist_is_named_as_such() {
    for (value, said) in [
        (
            "2026-02-30",
            "there is no day 30 in February 2026: it has 28 days",
        ),
        ("2026-11-21T24:00:00Z", "there is no hour 24"),
        ("2026-13-01T10:00:00Z", "there is no month 13"),
    ] {
        let (code, errors, _) = validate(&document(&[(
            "completed_at",
            &format!("completed_at: {value}"),
        )]));
        assert_eq!((code, errors.len()), (1, 1), "{value}: {errors:#?}");
        let message = errors[0]["message"].as_str().unwrap();
        assert_eq!(
            (errors[0]["line"].as_u64(), errors[0]["column"].as_u64()),
            (Some(6), Some(15))
        );
        assert!(
            message.contains(&format!(
                "`completed_at` (`{value}`) is not a real date and time"
            )) && message.contains(said),
            "{value}: {message}"
        );
    }
    // A leap second is a real time.
    let (code, errors, _) = validate(&document(&[(
        "completed_at",
        "completed_at: 2026-11-20T23:59:60Z",
    )]));
    assert_eq!(code, 0, "{errors:#?}");
}

#[test]
fn a_time_without_a_zone_is_read_as_utc_and_says_so() {
    // Written on a clock one hour ahead of UTC: as UTC, the work ended
    // after it began, which only the warning puts in doubt.
    let text = document(&[
        ("started_at", "started_at: 2026-11-20T09:00:00+01:00"),
        ("completed_at", "completed_at: 2026-11-20 08:30"),
    ]);
    let (code, errors, warnings) = validate(&text);
    assert_eq!((code, errors.len()), (0, 0), "{errors:#?}");
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let warning = &warnings[0];
    assert_eq!(
        (warning["line"].as_u64(), warning["column"].as_u64()),
        (Some(6), Some(15))
    );
    assert_eq!(warning["field"], "completed_at");
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("has no time zone, so it is read as UTC") && message.contains("add `Z`"),
        "{message}"
    );
    // A date alone is a day, not a time: no zone to miss.
    let (code, errors, warnings) =
        validate(&document(&[("completed_at", "completed_at: 2026-11-21")]));
    assert_eq!(
        (code, errors.len(), warnings.len()),
        (0, 0, 0),
        "{errors:#?}{warnings:#?}"
    );
}

#[test]
fn an_empty_timestamp_says_it_is_empty() {
    let (code, errors, _) = validate(&document(&[("completed_at", "completed_at: \"\"")]));
    assert_eq!((code, errors.len()), (1, 1), "{errors:#?}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.starts_with("`completed_at` is empty"), "{message}");
}

#[test]
fn a_merge_key_is_an_error_not_an_unknown_field_whose_fields_go_unjudged() {
    // Out of retries by a merged `retry_count`: read as a field named
    // `<<`, the document passed with a warning.
    let text = document(&[("retry_count", "<<: {retry_count: 5, status: failed}")]);
    let (code, errors, _) = validate(&text);
    assert_eq!(code, 1, "a merge key passed: {errors:#?}");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(
        (errors[0]["line"].as_u64(), errors[0]["column"].as_u64()),
        (Some(9), Some(1))
    );
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("merge keys (`<<`) are not supported"),
        "{message}"
    );
    // The run fails on it too.
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.stage("handoffs/F7.md", &text);
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(verdict["handoffs"][0]["valid"], false, "{verdict:#}");
}

#[test]
fn a_tag_is_named_as_it_was_written() {
    let text = document(&[("started_at", "started_at: !!timestamp 2026-11-20T09:00:00Z")]);
    let (code, errors, _) = validate(&text);
    assert_eq!(code, 1);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("the tag `!!timestamp` is not supported here"),
        "{message}"
    );
}

#[test]
fn a_closing_line_forgotten_right_above_a_label_of_the_body_is_found() {
    // No blank line between the last field and the body, whose label
    // `Status: done` read as a field of the author's own: the document
    // passed, with its body judged as frontmatter.
    let text = document(&[]).replacen(
        "    status: pass\n---\n\nParses",
        "    status: pass\nStatus: done\nReviewer: bob\n\n---\n\nParses",
        1,
    );
    let (code, errors, warnings) = validate(&text);
    assert_eq!(code, 1, "{errors:#?}{warnings:#?}");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        warnings.is_empty(),
        "the body's labels read as fields: {warnings:#?}"
    );
    let message = errors[0]["message"].as_str().unwrap();
    assert_eq!(errors[0]["line"], 19, "{message}");
    assert!(
        message.contains("is not closed before the document's text on line 19")
            && message.contains("add a `---` line after line 18"),
        "{message}"
    );
    // With no `---` anywhere below, the same place is named.
    let open = text.replacen("\n---\n\nParses", "\n\nParses", 1);
    let (code, errors, _) = validate(&open);
    assert_eq!(code, 1);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("is never closed: add a `---` line after line 18"),
        "{message}"
    );
    // A field of the author's own, in capitals, among the fields is no
    // body: a field of the schema follows it.
    let own = document(&[("handoff_ready", "Status: done\nhandoff_ready: true")]);
    let (code, errors, _) = validate(&own);
    assert_eq!(code, 0, "{errors:#?}");
}

#[test]
fn stamp_leaves_a_document_whose_frontmatter_runs_into_its_text_alone() {
    let repo = TestRepo::new();
    repo.config(
        r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "false" }, { name = "lint", command = "true" } ]
"#,
    );
    // The closing line was forgotten above the notes; the body's own rule
    // closes what YAML reads. Stamping wrote the missing `handoff_ready`
    // and the failed attempt after the notes, into the body.
    let text = document(&[]).replace("handoff_ready: true\n", "").replacen(
        "    status: pass\n---\n\nParses the verdict.\n",
        "    status: pass\n\n## Notes\n\nStatus: done\n\n---\n\nMore text.\n",
        1,
    );
    repo.write("handoffs/F7.md", &text);
    let (code, verdict) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{verdict:#}");
    let run = repo.phasegate(&["handoff", "stamp", "handoffs/F7.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("is not closed before the document's text on line 19"),
        "{}",
        run.stderr
    );
    assert_eq!(repo.read("handoffs/F7.md"), text, "the document changed");
}
