//! Every fixture document through the validator, with the exact line and
//! column of each problem.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::validate::{validate, Rules};

fn rules() -> Rules {
    Rules {
        max_retries: 3,
        checkpoints: BTreeMap::new(),
        claims: [("tests_passing", "tests"), ("no_lint_errors", "lint")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        failed_checks: Vec::new(),
        checked_phase: None,
        unverified: std::collections::BTreeMap::new(),
        phases: None,
        now: None,
    }
}

/// A report as lines: validity, escalation, then `line:col field: message`.
fn render(path: &str, text: &str, rules: &Rules) -> String {
    let report = validate(path, text, rules);
    let mut out = format!("valid: {}, escalate: {}\n", report.valid, report.escalate);
    for e in &report.errors {
        let _ = writeln!(
            out,
            "error {}:{} {}: {}",
            e.line, e.column, e.field, e.message
        );
        // The span must be the text at that line and column.
        let line = text.lines().nth(e.line - 1).unwrap_or("");
        let at = line
            .trim_start_matches('\u{feff}')
            .chars()
            .skip(e.column - 1)
            .collect::<String>();
        let spanned = &text[e.offset..(e.offset + e.len).min(text.len())];
        assert!(
            at.starts_with(spanned.lines().next().unwrap_or("")) || spanned.is_empty(),
            "{path}: span {spanned:?} is not at line {} column {} ({at:?})",
            e.line,
            e.column
        );
    }
    for w in &report.warnings {
        let _ = writeln!(
            out,
            "warning {}:{} {}: {}",
            w.line, w.column, w.field, w.message
        );
    }
    out
}

#[test]
fn fixtures() {
    insta::glob!("../../fixtures/handoff", "*.md", |path| {
        if path.file_name().is_some_and(|n| n == "README.md") {
            return;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        insta::assert_snapshot!(render(&name, &text, &rules()));
    });
}

#[test]
fn valid_documents_are_valid() {
    for name in [
        "valid-complete.md",
        "valid-in-progress.md",
        "crlf-bom.md",
        "body-with-dashes.md",
        "escalates.md",
    ] {
        let path = format!("{}/fixtures/handoff/{name}", env!("CARGO_MANIFEST_DIR"));
        let report = validate(name, &std::fs::read_to_string(path).unwrap(), &rules());
        assert!(report.valid, "{name}: {:?}", report.errors);
    }
}

#[test]
fn a_claim_the_run_contradicts_is_an_error_at_the_checkpoint() {
    let path = format!(
        "{}/fixtures/handoff/valid-complete.md",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut rules = rules();
    rules.failed_checks = vec!["tests".to_string()];
    let report = validate("valid-complete.md", &text, &rules);
    assert!(!report.valid);
    let e = &report.errors[0];
    assert_eq!(
        (e.line, e.column, e.field.as_str()),
        (16, 13, "checkpoints.tests_passing")
    );
    assert!(
        e.message.contains("claim contradicted by check `tests`"),
        "{}",
        e.message
    );
}

#[test]
fn required_checkpoints_can_be_overridden() {
    let text = "---\nid: X\nstage: qa\ntitle: t\nstarted_at: 2026-01-01\nstatus: in_progress\nhandoff_ready: true\ncheckpoints:\n  - name: smoke\n    status: pass\n---\n";
    let mut rules = rules();
    assert!(!validate("x.md", text, &rules).valid);
    rules
        .checkpoints
        .insert("qa".to_string(), vec!["smoke".to_string()]);
    let report = validate("x.md", text, &rules);
    assert!(report.valid, "{:?}", report.errors);
}

#[test]
fn a_missing_completion_time_is_reported_where_it_is_written() {
    let text = "---\nid: X\nstage: qa\ntitle: t\nstarted_at: 2026-01-01T00:00:00Z\nstatus: complete\ncompleted_at: null\nhandoff_ready: false\ncheckpoints: []\n---\n";
    let report = validate("x.md", text, &rules());
    let e = report
        .errors
        .iter()
        .find(|e| e.field == "completed_at")
        .unwrap_or_else(|| panic!("{:?}", report.errors));
    assert_eq!((e.line, e.column), (7, 15), "{e:?}");
}

#[test]
fn a_stage_that_requires_no_checkpoint_is_ready_vacuously() {
    let doc = |ready: bool| {
        format!("---\nid: X\nstage: qa\ntitle: t\nstarted_at: 2026-01-01T00:00:00Z\nstatus: in_progress\nhandoff_ready: {ready}\ncheckpoints:\n  - name: smoke\n    status: fail\n---\n")
    };
    let mut rules = rules();
    rules.checkpoints.insert("qa".to_string(), Vec::new());
    let report = validate("x.md", &doc(true), &rules);
    assert!(report.valid, "{:?}", report.errors);
    let report = validate("x.md", &doc(false), &rules);
    let e = report
        .errors
        .iter()
        .find(|e| e.field == "handoff_ready")
        .unwrap_or_else(|| panic!("`handoff_ready: false` went unchecked: {:?}", report.errors));
    assert_eq!((e.line, e.column), (7, 16), "{e:?}");
    assert!(
        e.message.contains("stage `qa` requires no checkpoint")
            && e.message.contains("set it to true"),
        "{}",
        e.message
    );
    // Without a stage to go by, `false` is no second error.
    let report = validate("x.md", &doc(false).replace("stage: qa", "stage: q"), &rules);
    assert!(
        report.errors.iter().all(|e| e.field != "handoff_ready"),
        "{:?}",
        report.errors
    );
}

#[test]
fn a_required_checkpoint_under_a_near_miss_of_its_name_is_reported_at_that_entry() {
    let doc = |names: [&str; 4]| {
        let mut doc = "---\nid: X\nstage: implementation\ntitle: t\nstarted_at: 2026-01-01T00:00:00Z\nstatus: in_progress\nhandoff_ready: false\ncheckpoints:\n".to_string();
        for name in names {
            let _ = write!(doc, "  - name: {name}\n    status: pass\n");
        }
        doc + "---\n"
    };
    let report = validate(
        "x.md",
        &doc([
            "tests_written",
            "Code_Complete",
            "tests-passing",
            "\"no_lint_errors \"",
        ]),
        &rules(),
    );
    let near: Vec<(usize, usize, &str)> = report
        .errors
        .iter()
        .filter(|e| e.field == "checkpoints")
        .map(|e| (e.line, e.column, e.message.as_str()))
        .collect();
    assert_eq!(
        near,
        [
            (11, 11, "checkpoint `Code_Complete` is not `code_complete`, which stage `implementation` requires: names are exact, write `code_complete`"),
            (13, 11, "checkpoint `tests-passing` is not `tests_passing`, which stage `implementation` requires: names are exact, write `tests_passing`"),
            (15, 11, "checkpoint `no_lint_errors ` is not `no_lint_errors`, which stage `implementation` requires: names are exact, write `no_lint_errors`"),
        ],
        "{:?}",
        report.errors
    );
    // A checkpoint of its own whose name starts with a required one's is
    // no misspelling of it: that one is missing.
    let report = validate(
        "x.md",
        &doc([
            "tests_written",
            "code_complete",
            "tests_passing_e2e",
            "no_lint_errors",
        ]),
        &rules(),
    );
    let messages: Vec<&str> = report.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        ["stage `implementation` requires the checkpoint `tests_passing`"],
        "{messages:?}"
    );
}

#[test]
fn a_time_later_than_the_clock_is_an_error_beyond_the_allowed_skew() {
    let now = super::time::parse_instant("2026-06-01T12:00:00Z")
        .unwrap()
        .0;
    let doc = |started: &str, completed: &str| {
        format!("---\nid: X\nstage: qa\ntitle: t\nstarted_at: {started}\ncompleted_at: {completed}\nstatus: complete\nhandoff_ready: true\ncheckpoints: []\n---\n")
    };
    let mut rules = rules();
    rules.checkpoints.insert("qa".to_string(), Vec::new());
    rules.now = Some(now);
    let at = |rules: &Rules, started: &str, completed: &str| -> Vec<(usize, usize, String)> {
        validate("x.md", &doc(started, completed), rules)
            .errors
            .into_iter()
            .map(|e| (e.line, e.column, e.message))
            .collect()
    };
    let future = |started: &str, completed: &str| at(&rules, started, completed);
    // Within the skew, today as a date alone, the same instant in another
    // zone, and a date or a time without a zone that is already today
    // east of the date line (UTC+12, UTC+14): no claim about the future.
    for completed in [
        "2026-06-01T12:04:59Z",
        "2026-06-01",
        "2026-06-01T14:05:00+02:00",
        "2026-06-02",
        "2026-06-02T02:00",
    ] {
        assert_eq!(future("2026-06-01T09:00:00Z", completed), [], "{completed}");
    }
    assert_eq!(
        future("2026-06-01T09:00:00Z", "2026-06-01T12:05:01Z"),
        [(6, 15, "`completed_at` is 5 minutes in the future: a handoff records what has already happened, so write the time it did (and check the time zone: `Z` is UTC)".to_string())]
    );
    // A local time written with `Z`: hours ahead.
    let errors = future("2026-06-01T09:00:00Z", "2026-06-01T14:00:00Z");
    assert!(
        errors[0]
            .2
            .starts_with("`completed_at` is 2 hours in the future"),
        "{errors:?}"
    );
    // A time without a zone is held to the zone farthest ahead.
    let errors = future("2026-06-01T09:00:00Z", "2026-06-02T03:00");
    assert!(
        errors[0]
            .2
            .starts_with("`completed_at` is 1 hour in the future"),
        "{errors:?}"
    );
    // A date that is tomorrow everywhere, and a start in the future as well.
    let errors = future("2026-06-03T00:00:00Z", "2026-06-04");
    let messages: Vec<&str> = errors.iter().map(|e| e.2.as_str()).collect();
    assert!(
        messages[0].starts_with("`started_at` is 1 day in the future")
            && messages[1].starts_with("`completed_at` is 1 day in the future"),
        "{errors:?}"
    );
    // Without a clock, nothing is in the future.
    rules.now = None;
    assert_eq!(at(&rules, "2026-06-01T09:00:00Z", "2999-01-01"), []);
}

#[test]
fn a_checkpoint_entry_in_error_is_not_blamed_on_handoff_ready_too() {
    let doc = |entries: &str| {
        format!("---\nid: X\nstage: implementation\ntitle: t\nstarted_at: 2026-01-01T00:00:00Z\nstatus: in_progress\nhandoff_ready: true\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n{entries}---\n")
    };
    let fields = |entries: &str| -> Vec<String> {
        validate("x.md", &doc(entries), &rules())
            .errors
            .into_iter()
            .map(|e| e.field)
            .collect()
    };
    // A status that is none of the three, a missing status, a near miss
    // of the name: one error each, at the entry.
    assert_eq!(
        fields("  - name: tests_passing\n    status: done\n  - name: no_lint_errors\n    status: pass\n"),
        ["checkpoints.tests_passing"]
    );
    assert_eq!(
        fields("  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n"),
        ["checkpoints.no_lint_errors"]
    );
    assert_eq!(
        fields("  - name: Tests_Passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n"),
        ["checkpoints"]
    );
    // A checkpoint that fails is still `handoff_ready`'s to answer for.
    assert_eq!(
        fields("  - name: tests_passing\n    status: done\n  - name: no_lint_errors\n    status: fail\n"),
        ["handoff_ready", "checkpoints.tests_passing"]
    );
}
