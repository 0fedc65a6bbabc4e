//! Every renderer on one shared sample verdict, colour off, fixed width.

use std::time::Duration;

use crate::config::{CheckKind, ConfigLocation, OnFailure, OnMissing, Origin, Profile};
use crate::diagnostics::{Diagnostic, Severity};
use crate::gate::{decide, CheckInput, CheckRun, GateInput, SkipReason, Verdict};
use crate::runner::{CapturedOutput, CheckOutcome, Invocation, Termination};

fn outcome(
    name: &str,
    termination: Termination,
    output: &str,
    diagnostics: Vec<Diagnostic>,
) -> CheckOutcome {
    CheckOutcome {
        name: name.to_string(),
        termination,
        duration: Duration::from_millis(1234),
        output: CapturedOutput {
            head: output.as_bytes().to_vec(),
            tail: Vec::new(),
            total_bytes: output.len() as u64,
        },
        log_path: format!("/repo/.git/phasegate/runs/20261122T153000Z-1/{name}.log").into(),
        diagnostics,
        dropped_diagnostics: 0,
        parser_used: None,
        errors_fail: false,
        verifier: None,
        failed_batch: None,
        invocations: vec![Invocation {
            argv: vec![name.into()],
        }],
        batches: Vec::new(),
    }
}

fn input(name: &str, on_failure: OnFailure, line: u32, run: CheckRun) -> CheckInput {
    CheckInput {
        filter: crate::config::Filter::Nofilter,
        name: name.to_string(),
        kind: CheckKind::Code,
        origin: Origin::for_check_name(name),
        on_failure,
        on_missing: OnMissing::Block,
        location: Some(ConfigLocation {
            file: "phasegate.toml".to_string(),
            line,
            column: 5,
        }),
        command_location: None,
        run,
    }
}

/// A verdict with a pass, a located failure with a pre-existing warning,
/// failed tests, an unparsed failure, a warning, a timeout and a skip.
pub fn sample() -> Verdict {
    let lint_error = Diagnostic {
        check: "lint".into(),
        origin: Origin::Lint,
        tool: "cargo".into(),
        file: Some("src/lib.rs".into()),
        line: Some(10),
        column: Some(5),
        severity: Severity::Error,
        code: Some("E0308".into()),
        message: "mismatched types\nexpected `u32`, found `&str`".into(),
        source_line: Some("\tlet s: u32 = \"text\";".into()),
        ..Diagnostic::default()
    };
    let old_warning = Diagnostic {
        check: "lint".into(),
        origin: Origin::Lint,
        tool: "cargo".into(),
        file: Some("src/old.rs".into()),
        line: Some(2),
        column: Some(9),
        severity: Severity::Warning,
        code: Some("unused_variables".into()),
        message: "unused variable: `x`".into(),
        pre_existing: true,
        ..Diagnostic::default()
    };
    let failed_test = |test: &str, line: u32, message: &str| Diagnostic {
        check: "unit".into(),
        origin: Origin::Test,
        tool: "cargo".into(),
        file: Some("src/lib.rs".into()),
        line: Some(line),
        column: Some(9),
        severity: Severity::Error,
        test: Some(test.into()),
        message: message.into(),
        ..Diagnostic::default()
    };
    let checks = vec![
        input(
            "tests",
            OnFailure::Block,
            3,
            CheckRun::Ran(Box::new(outcome(
                "tests",
                Termination::Exited(0),
                "ok\n",
                vec![],
            ))),
        ),
        input(
            "unit",
            OnFailure::Block,
            9,
            CheckRun::Ran(Box::new(outcome(
                "unit",
                Termination::Exited(101),
                "",
                vec![
                    failed_test(
                        "tests::adds",
                        15,
                        "assertion `left == right` failed\n  left: 4\n right: 5",
                    ),
                    failed_test(
                        "tests::parses",
                        22,
                        "called `Option::unwrap()` on a `None` value",
                    ),
                ],
            ))),
        ),
        input(
            "lint",
            OnFailure::Block,
            4,
            CheckRun::Ran(Box::new(outcome(
                "lint",
                Termination::Exited(101),
                "",
                vec![lint_error, old_warning],
            ))),
        ),
        input(
            "build",
            OnFailure::Block,
            5,
            CheckRun::Ran(Box::new(outcome(
                "build",
                Termination::Exited(2),
                "linking\nld: cannot find -lfoo\n",
                vec![],
            ))),
        ),
        input(
            "typecheck",
            OnFailure::Warn,
            6,
            CheckRun::Ran(Box::new(outcome(
                "typecheck",
                Termination::Exited(1),
                "3 problems\n",
                vec![],
            ))),
        ),
        input(
            "slow",
            OnFailure::Block,
            7,
            CheckRun::Ran(Box::new(outcome(
                "slow",
                Termination::TimedOut(Duration::from_secs(90)),
                "",
                vec![],
            ))),
        ),
        input(
            "docs",
            OnFailure::Warn,
            8,
            CheckRun::NotRun(SkipReason::NoMatchingFiles),
        ),
    ];
    decide(GateInput {
        phase: "implementation".into(),
        profile: Profile::Auto,
        workflow: None,
        run_id: Some("20261122T153000Z-1".into()),
        checks,
        notes: Vec::new(),
        environment: vec![("NO_COLOR".into(), "1".into())],
        root: "/repo".into(),
        summary_limit: 5,
        selection: None,
        blocking: Vec::new(),
        interrupted: false,
        handoffs: Vec::new(),
    })
}

#[test]
fn human() {
    let mut out = Vec::new();
    super::human::render(&sample(), &mut out, false).unwrap();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}

#[test]
fn human_in_colour_only_when_asked() {
    let mut out = Vec::new();
    super::human::render(&sample(), &mut out, true).unwrap();
    assert!(String::from_utf8(out).unwrap().contains("\u{1b}[31m"));
}

#[test]
fn json() {
    let mut out = Vec::new();
    super::json::render(&sample(), &mut out).unwrap();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}

/// Every format on the sample.
#[test]
fn ci_formats() {
    let verdict = sample();
    for (name, render) in [
        (
            "sarif",
            super::sarif::render as fn(&Verdict, &mut dyn std::io::Write) -> std::io::Result<()>,
        ),
        ("junit", super::junit::render),
        ("github", super::github::render),
        ("codequality", super::codequality::render),
    ] {
        let mut out = Vec::new();
        render(&verdict, &mut out).unwrap();
        let text = String::from_utf8(out)
            .unwrap()
            .replace(env!("CARGO_PKG_VERSION"), "[version]");
        insta::assert_snapshot!(name, text);
    }
    insta::assert_snapshot!("github_step_summary", super::github::step_summary(&verdict));
}

/// More diagnostics than GitHub annotates: 13 errors, 12 warnings and 11
/// notes, every other one pre-existing.
fn crowded() -> Verdict {
    let mut verdict = sample();
    verdict.diagnostics.clear();
    for (severity, count) in [
        (Severity::Error, 13),
        (Severity::Warning, 12),
        (Severity::Note, 11),
    ] {
        for i in 0..count {
            verdict.diagnostics.push(Diagnostic {
                check: "lint".into(),
                tool: "x".into(),
                file: Some(format!("src/f{i}.rs")),
                line: Some(i + 1),
                severity,
                message: format!("{} {i}", severity.as_str()),
                pre_existing: i % 2 == 1,
                ..Diagnostic::default()
            });
        }
    }
    verdict
}

#[test]
fn github_annotates_ten_of_each_the_changes_own_first() {
    let mut out = Vec::new();
    super::github::render(&crowded(), &mut out).unwrap();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}

#[test]
fn github_commands_escape_what_would_end_them() {
    let mut verdict = sample();
    verdict.diagnostics = vec![Diagnostic {
        check: "lint,strict".into(),
        tool: "x".into(),
        file: Some("src/a:b,c.rs".into()),
        line: Some(3),
        column: Some(1),
        code: Some("E:1".into()),
        message: "100% wrong: a, b\nsecond line\r".into(),
        ..Diagnostic::default()
    }];
    let mut out = Vec::new();
    super::github::render(&verdict, &mut out).unwrap();
    let first = String::from_utf8(out)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        first,
        "::error file=src/a%3Ab%2Cc.rs,line=3,col=1,title=lint%2Cstrict E%3A1::100%25 wrong: a, b%0Asecond line%0D"
    );
}

#[test]
fn sarif_keeps_the_most_important_results_within_githubs_limit() {
    let mut verdict = sample();
    let mut many = Vec::new();
    for i in 0..super::sarif::MAX_RESULTS + 5 {
        many.push(Diagnostic {
            check: "lint".into(),
            tool: "x".into(),
            file: Some("a.rs".into()),
            line: Some(u32::try_from(i + 1).unwrap()),
            severity: if i < 5 {
                Severity::Note
            } else {
                Severity::Error
            },
            message: format!("problem {i}"),
            ..Diagnostic::default()
        });
    }
    verdict.diagnostics = many;
    let log = super::sarif::log(&verdict);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), super::sarif::MAX_RESULTS);
    assert!(
        results.iter().all(|r| r["level"] == "error"),
        "the notes are what is cut"
    );
    assert_eq!(log["runs"][0]["properties"]["resultsCut"], 5);
    let note = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
    assert!(note["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("5 of 25005 results were cut"));
}

#[test]
fn junit_names_are_unique_and_every_failed_test_is_a_case() {
    let mut verdict = sample();
    let dup = verdict
        .diagnostics
        .iter()
        .find(|d| d.test.is_some())
        .unwrap()
        .clone();
    verdict.diagnostics.push(dup);
    let mut out = Vec::new();
    super::junit::render(&verdict, &mut out).unwrap();
    let xml = String::from_utf8(out).unwrap();
    assert!(xml.contains(r#"name="unit::tests::adds""#), "{xml}");
    assert!(xml.contains(r#"name="unit::tests::parses""#), "{xml}");
    let names: Vec<&str> = xml
        .match_indices(r#" name=""#)
        .map(|(i, _)| &xml[i..i + 40])
        .collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(names.len(), unique.len(), "{names:?}");
}

#[test]
fn a_test_checks_case_fails_only_for_what_no_failed_test_accounts_for() {
    // The sample's `unit` check failed through two tests, each its case.
    let mut verdict = sample();
    let case_of = |verdict: &Verdict| {
        let mut out = Vec::new();
        super::junit::render(verdict, &mut out).unwrap();
        let xml = String::from_utf8(out).unwrap();
        let start = xml.find(r#"name="unit" "#).unwrap();
        let end = start + xml[start..].find("</testcase>").unwrap();
        xml[start..end].to_string()
    };
    let case = case_of(&verdict);
    assert!(!case.contains("<failure"), "{case}");
    assert!(case.contains("2 failed test(s)"), "{case}");
    // A build error no test accounts for fails the check's own case, alone.
    let mut build_error = verdict
        .diagnostics
        .iter()
        .find(|d| d.check == "unit")
        .unwrap()
        .clone();
    build_error.test = None;
    build_error.message = "linking with `cc` failed".into();
    verdict.diagnostics.push(build_error);
    let case = case_of(&verdict);
    assert!(case.contains("<failure"), "{case}");
    assert!(case.contains("linking with `cc` failed"), "{case}");
    assert!(!case.contains("tests::adds"), "{case}");
}

#[test]
fn sarif_is_valid_against_the_sarif_2_1_0_schema() {
    let schema_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sarif/sarif-2.1.0.json");
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for verdict in [sample(), crowded(), Verdict::of_diagnostics(Vec::new())] {
        let log = super::sarif::log(&verdict);
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // The validator does catch a broken log.
    let mut broken = super::sarif::log(&sample());
    broken["runs"][0]["results"][0]["level"] = serde_json::json!("fatal");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn junit_is_well_formed_and_its_counts_add_up() {
    let mut verdict = sample();
    // Text XML 1.0 cannot hold, and markup characters, in a message.
    verdict.diagnostics[0].message = "a <b> & \"c\" \u{1} d".into();
    let mut out = Vec::new();
    super::junit::render(&verdict, &mut out).unwrap();
    let xml = String::from_utf8(out).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suite = root
        .children()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let count = |kind: &str| {
        cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name(kind)))
            .count()
    };
    assert_eq!(
        suite.attribute("tests"),
        Some(cases.len().to_string().as_str())
    );
    assert_eq!(
        suite.attribute("failures"),
        Some(count("failure").to_string().as_str())
    );
    assert_eq!(
        suite.attribute("errors"),
        Some(count("error").to_string().as_str())
    );
    assert_eq!(
        suite.attribute("skipped"),
        Some(count("skipped").to_string().as_str())
    );
    let text: String = cases
        .iter()
        .flat_map(roxmltree::Node::descendants)
        .filter_map(|n| n.text())
        .collect();
    assert!(
        text.contains("a <b> & \"c\" \\x01 d"),
        "the message survives escaping, the control character shown: {text}"
    );
}

/// One located diagnostic on `source`, at `column`.
fn located(source: &str, column: Option<u32>) -> Diagnostic {
    Diagnostic {
        check: "lint".into(),
        tool: "x".into(),
        file: Some("src/a.rs".into()),
        line: Some(12),
        column,
        severity: Severity::Error,
        code: Some("E1".into()),
        message: "bad call".into(),
        source_line: Some(source.into()),
        ..Diagnostic::default()
    }
}

/// What `phasegate diagnostics parse` prints for `d`: the headline and
/// miette's snippet.
fn drawn(d: &Diagnostic, color: bool) -> String {
    let mut out = Vec::new();
    super::diagnostics::render_human(std::slice::from_ref(d), 0, &mut out, color).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_label_sits_under_its_character_after_multi_byte_ones() {
    let source = "let é = \"ü→\"; bad();";
    let column = source.chars().position(|c| c == 'b').unwrap() + 1;
    let d = located(source, Some(u32::try_from(column).unwrap()));
    assert_eq!(
        drawn(&d, false),
        "src/a.rs:12:15 error E1 bad call\n\
         \x20    ╭─[src/a.rs:12:15]\n\
         \x20 12 │ let é = \"ü→\"; bad();\n\
         \x20    ·               ─\n\
         \x20    ╰────\n"
    );
    // Every character before `b` is one column wide: the label is as far
    // from the bar as `b` is.
    let text = drawn(&d, false);
    let row = |prefix: &str| {
        text.lines()
            .find(|l| l.contains(prefix))
            .unwrap()
            .to_string()
    };
    let at_b = row("12 │").chars().position(|c| c == 'b').unwrap();
    let at_label = row("·").chars().position(|c| c == '─').unwrap();
    assert_eq!(at_b, at_label);
}

#[test]
fn a_tab_and_a_wide_character_move_the_label_as_far_as_they_are_wide() {
    // The tab reaches the next multiple of 4, `漢` takes two columns.
    let d = located("\t漢x", Some(3));
    assert_eq!(
        drawn(&d, false),
        "src/a.rs:12:3 error E1 bad call\n\
         \x20    ╭─[src/a.rs:12:3]\n\
         \x20 12 │     漢x\n\
         \x20    ·       ─\n\
         \x20    ╰────\n"
    );
}

#[test]
fn a_column_past_the_end_of_the_line_points_just_after_it() {
    let d = located("let x = 1", Some(40));
    assert_eq!(
        drawn(&d, false),
        "src/a.rs:12:40 error E1 bad call\n\
         \x20    ╭─[src/a.rs:12:40]\n\
         \x20 12 │ let x = 1\n\
         \x20    ·          ▲\n\
         \x20    ╰────\n"
    );
}

#[test]
fn without_a_column_the_whole_line_is_marked() {
    let d = located("    assert_eq!(x, 2);  ", None);
    assert_eq!(
        drawn(&d, false),
        "src/a.rs:12 error E1 bad call\n\
         \x20    ╭─[src/a.rs:12:1]\n\
         \x20 12 │     assert_eq!(x, 2);\n\
         \x20    ·     ─────────────────\n\
         \x20    ╰────\n"
    );
}

#[test]
fn without_the_lines_text_there_is_nothing_to_draw() {
    // Nor when the message shows the line already.
    let mut d = located("let x = 1", Some(5));
    d.source_line = None;
    assert_eq!(drawn(&d, false), "src/a.rs:12:5 error E1 bad call\n");
    let mut d = located("let x = 1", Some(5));
    d.message = "bad call\n12 | let x = 1\n  |     ^".into();
    assert_eq!(drawn(&d, false), "src/a.rs:12:5 error E1 bad call\n");
}

#[test]
fn a_span_on_its_line_is_underlined_to_its_end_column() {
    // `end_column` points just past the span: `bad()` is 5 characters.
    let mut d = located("let é = bad();", Some(9));
    d.end_line = Some(12);
    d.end_column = Some(14);
    assert_eq!(
        drawn(&d, false),
        "src/a.rs:12:9 error E1 bad call\n\
         \x20    ╭─[src/a.rs:12:9]\n\
         \x20 12 │ let é = bad();\n\
         \x20    ·         ─────\n\
         \x20    ╰────\n"
    );
    // A span that ends on another line is drawn as its first character.
    d.end_line = Some(14);
    assert!(
        drawn(&d, false).contains("\n     ·         ─\n"),
        "{}",
        drawn(&d, false)
    );
}

#[test]
fn snippets_are_coloured_only_when_asked() {
    let d = located("let x = bad();", Some(9));
    let plain = drawn(&d, false);
    assert!(plain.contains("12 │ let x = bad();"), "{plain}");
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    let mut out = Vec::new();
    super::human::render(&sample(), &mut out, false).unwrap();
    assert!(!String::from_utf8(out).unwrap().contains('\u{1b}'));

    // The label takes the severity's colour (red for an error), in the
    // snippet of the human report too.
    let label_row = |text: &str| {
        text.lines()
            .find(|l| l.contains('·') && l.contains('─'))
            .unwrap_or_default()
            .to_string()
    };
    let coloured = drawn(&d, true);
    assert!(label_row(&coloured).contains("\u{1b}[31m"), "{coloured:?}");
    let mut out = Vec::new();
    super::human::render(&sample(), &mut out, true).unwrap();
    let human = String::from_utf8(out).unwrap();
    assert!(label_row(&human).contains("\u{1b}[31m"), "{human:?}");
}

#[test]
fn odd_lines_and_columns_never_break_the_drawing() {
    let long = "x".repeat(1000);
    let sources = [
        "",
        " ",
        "\t\t",
        "é",
        "漢字漢字",
        "a\u{1b}[31mred\u{1b}[0m",
        "carriage\rreturn",
        "new\nline",
        "\u{301}combining first",
        long.as_str(),
    ];
    let columns = [
        None,
        Some(1),
        Some(2),
        Some(3),
        Some(299),
        Some(300),
        Some(301),
        Some(u32::MAX),
    ];
    for source in sources {
        for column in columns {
            for end in [None, Some(0), Some(1), Some(4), Some(u32::MAX)] {
                for line in [1, 12, u32::MAX] {
                    let mut d = located(source, column);
                    d.line = Some(line);
                    d.end_column = end;
                    for color in [false, true] {
                        let text = drawn(&d, color);
                        assert!(text.starts_with("src/a.rs:"), "{text:?}");
                        if !color {
                            assert!(!text.contains('\u{1b}'), "{text:?}");
                        }
                        // The line is one line, whatever it held.
                        assert!(text.lines().count() <= 5, "{text:?}");
                    }
                }
            }
        }
    }
}

fn junit_of(verdict: &Verdict) -> String {
    let mut out = Vec::new();
    super::junit::render(verdict, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn junit_of_a_verdict_with_no_case_takes_no_time() {
    let mut verdict = sample();
    verdict.checks.clear();
    verdict.diagnostics.clear();
    let xml = junit_of(&verdict);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert!(
        !doc.descendants().any(|n| n.has_tag_name("testcase")),
        "{xml}"
    );
    for node in doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite") || n.has_tag_name("testsuites"))
    {
        assert_eq!(node.attribute("time"), Some("0.000"), "{xml}");
    }
}

#[test]
fn junit_shows_phasegates_own_findings_as_a_case() {
    let mut verdict = sample();
    verdict.diagnostics.push(Diagnostic {
        tool: "phasegate".into(),
        origin: Origin::Runtime,
        severity: Severity::Error,
        code: Some("files-modified".into()),
        message: "files were modified by `fmt`: src/lib.rs".into(),
        ..Diagnostic::default()
    });
    let xml = junit_of(&verdict);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("phasegate"))
        .expect("a case for phasegate's own findings");
    let failure = case.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(
        failure.attribute("message"),
        Some("files were modified by `fmt`: src/lib.rs")
    );
    // A verdict with none of them has no such case.
    let mut none = sample();
    none.diagnostics.retain(|d| !d.check.is_empty());
    assert!(!junit_of(&none).contains(r#"name="phasegate" time="#));
}

#[test]
fn a_stopped_runs_error_becomes_findings_for_the_ci_formats() {
    let error = crate::gate::VerdictError {
        kind: "config",
        message: "invalid configuration in `phasegate.toml`".into(),
        problems: vec![crate::gate::ErrorProblem {
            message: "unknown key `profle` in [gate]".into(),
            help: Some("did you mean `profile`?".into()),
            file: Some("phasegate.toml".into()),
            line: Some(2),
            column: Some(1),
        }],
    };
    let verdict = Verdict::stopped(crate::config::Profile::default(), None, error);
    let shown = super::with_error_findings(&verdict);
    assert_eq!(shown.diagnostics.len(), 1);
    let d = &shown.diagnostics[0];
    assert_eq!(d.file.as_deref(), Some("phasegate.toml"));
    assert_eq!((d.line, d.column), (Some(2), Some(1)));
    assert_eq!(d.code.as_deref(), Some("config-error"));
    assert!(
        d.message.contains("did you mean `profile`?"),
        "{}",
        d.message
    );
    let xml = junit_of(&shown);
    assert!(
        xml.contains(r#"<error message="invalid configuration in `phasegate.toml`""#),
        "{xml}"
    );
    let sarif = super::sarif::log(&shown);
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    assert_eq!(
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    // An internal error with no place is one finding at the configuration.
    let internal = crate::gate::VerdictError {
        kind: "internal",
        message: "failed to read the git index".into(),
        problems: Vec::new(),
    };
    let verdict = Verdict::stopped(crate::config::Profile::default(), None, internal);
    let shown = super::with_error_findings(&verdict);
    assert_eq!(shown.diagnostics[0].message, "failed to read the git index");
    assert_eq!(shown.diagnostics[0].code.as_deref(), Some("internal-error"));
}

/// Every text each format shows for `verdict`'s findings, by format.
fn rendered(verdict: &Verdict) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (name, render) in [
        (
            "sarif",
            super::sarif::render as fn(&Verdict, &mut dyn std::io::Write) -> std::io::Result<()>,
        ),
        ("junit", super::junit::render),
        ("github", super::github::render),
        ("codequality", super::codequality::render),
        ("json", super::json::render),
    ] {
        let mut text = Vec::new();
        render(verdict, &mut text).unwrap();
        out.push((name, String::from_utf8(text).unwrap()));
    }
    let mut text = Vec::new();
    super::human::render(verdict, &mut text, false).unwrap();
    out.push(("human", String::from_utf8(text).unwrap()));
    out.push(("step summary", super::github::step_summary(verdict)));
    out
}

#[test]
fn a_finding_without_a_message_is_never_shown_empty() {
    let mut verdict = sample();
    verdict.diagnostics.push(Diagnostic {
        check: "lint".into(),
        tool: "sh".into(),
        file: Some("a.c".into()),
        line: Some(1),
        message: String::new(),
        ..Diagnostic::default()
    });
    verdict.diagnostics.push(Diagnostic {
        check: "lint".into(),
        tool: "sh".into(),
        file: Some("a.c".into()),
        line: Some(2),
        code: Some("W1".into()),
        message: " \n ".into(),
        test: Some("t".into()),
        ..Diagnostic::default()
    });
    let fallback = "check `lint` reported a finding with no message";
    // SARIF: GitHub rejects a result without text and a rule without
    // descriptions (GH1015, GH1017, GH2012).
    let log = super::sarif::log(&verdict);
    for result in log["runs"][0]["results"].as_array().unwrap() {
        let text = result["message"]["text"].as_str().unwrap();
        assert!(!text.trim().is_empty(), "{result}");
    }
    for rule in log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
    {
        for field in ["shortDescription", "fullDescription"] {
            let text = rule[field]["text"].as_str().unwrap();
            assert!(!text.trim().is_empty(), "{rule}");
        }
    }
    let sarif = log.to_string();
    assert!(sarif.contains(fallback), "{sarif}");
    assert!(sarif.contains("reported a finding with no message (code `W1`)"));
    // Code Quality: a description for every issue.
    let mut out = Vec::new();
    super::codequality::render(&verdict, &mut out).unwrap();
    let issues: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for issue in issues.as_array().unwrap() {
        assert!(
            !issue["description"].as_str().unwrap().trim().is_empty(),
            "{issue}"
        );
    }
    // GitHub annotations, the human report and JUnit say it too.
    for (name, text) in rendered(&verdict) {
        if matches!(name, "github" | "human" | "junit") {
            assert!(text.contains(fallback), "{name}: {text}");
        }
    }
    let mut out = Vec::new();
    super::github::render(&verdict, &mut out).unwrap();
    let annotations = String::from_utf8(out).unwrap();
    assert!(
        annotations.lines().all(|l| !l.ends_with("::")),
        "{annotations}"
    );
    let xml = junit_of(&verdict);
    assert!(!xml.contains(r#"message="""#), "{xml}");
    // The JSON verdict keeps the message as the tool gave it.
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(
        json["diagnostics"][json["diagnostics"].as_array().unwrap().len() - 1]["message"],
        " \n "
    );
}

#[test]
fn a_sarif_rule_describes_the_rule_and_its_results_the_findings() {
    // Two checks share phasegate's `check-failed` rule; two findings of one
    // tool share a rule without a code.
    let mut verdict = sample();
    let mut typecheck = verdict
        .diagnostics
        .iter()
        .find(|d| d.check == "typecheck")
        .unwrap()
        .clone();
    typecheck.severity = Severity::Error;
    verdict.diagnostics.push(Diagnostic {
        message: "alpha broke".into(),
        ..typecheck
    });
    let log = super::sarif::log(&verdict);
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let rule = |id: &str| {
        rules
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no rule {id}: {rules:#?}"))
    };
    let results = run["results"].as_array().unwrap();
    for rule in rules {
        let texts = [
            rule["shortDescription"]["text"].as_str().unwrap(),
            rule["fullDescription"]["text"].as_str().unwrap(),
            rule["help"]["text"].as_str().unwrap(),
        ];
        // No result's message stands for the rule, nor the check of one.
        for result in results.iter().filter(|r| r["ruleId"] == rule["id"]) {
            let first = result["message"]["text"]
                .as_str()
                .unwrap()
                .lines()
                .next()
                .unwrap();
            for text in texts {
                assert!(!text.contains(first), "{rule:#}\n{result:#}");
            }
        }
        assert!(texts.iter().all(|t| !t.trim().is_empty()), "{rule:#}");
    }
    let failed = rule("phasegate/check-failed");
    for text in [
        &failed["shortDescription"]["text"],
        &failed["fullDescription"]["text"],
        &failed["help"]["text"],
    ] {
        let text = text.as_str().unwrap();
        assert!(
            !text.contains("`build`") && !text.contains("`typecheck`"),
            "{text}"
        );
    }
    // A rule without a code is the tool's findings in its check.
    let unit = rule("cargo/unit")["shortDescription"]["text"]
        .as_str()
        .unwrap();
    assert!(unit.contains("cargo") && unit.contains("`unit`"), "{unit}");
    // The results keep their own messages.
    assert!(results.iter().any(|r| r["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("check `build` failed")));
}

#[test]
fn junit_has_one_case_per_failed_test_by_file_and_name_in_any_order() {
    // pytest names a test without its file: test_x fails in two files,
    // with test_y between them.
    let mut verdict = sample();
    let failure = |file: &str, test: &str, message: &str| Diagnostic {
        check: "unit".into(),
        origin: Origin::Test,
        tool: "pytest".into(),
        file: Some(file.into()),
        line: Some(10),
        test: Some(test.into()),
        message: message.into(),
        ..Diagnostic::default()
    };
    verdict.diagnostics.retain(|d| d.check != "unit");
    verdict.diagnostics.extend([
        failure("tests/test_a.py", "test_x", "x in a"),
        failure("tests/test_a.py", "test_y", "y in a"),
        failure("tests/test_b.py", "test_x", "x in b"),
    ]);
    let xml = junit_of(&verdict);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<(&str, String)> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("testcase") && n.attribute("classname") == Some("implementation.unit")
        })
        .map(|n| {
            let text = n
                .children()
                .find(|c| c.has_tag_name("failure"))
                .and_then(|f| f.text())
                .unwrap_or_default()
                .to_string();
            (n.attribute("name").unwrap(), text)
        })
        .collect();
    assert_eq!(cases.len(), 3, "{xml}");
    // Each case holds its own test's failure, and only it.
    for (name, text) in &cases {
        assert_eq!(text.lines().count(), 1, "{name}: {text}");
    }
    let find = |message: &str| {
        cases
            .iter()
            .find(|(_, text)| text.contains(message))
            .map_or_else(|| panic!("no case for {message}: {xml}"), |(name, _)| *name)
    };
    assert_eq!(find("x in a"), "unit::tests/test_a.py::test_x");
    assert_eq!(find("x in b"), "unit::tests/test_b.py::test_x");
    // A name no other file shares stays short.
    assert_eq!(find("y in a"), "unit::test_y");
}

#[test]
fn junit_shows_a_check_that_only_warns_as_passing_with_what_it_said() {
    // The gate proceeds past a check with on_failure = "warn": a failed
    // test case would show the merge request a failure the gate let
    // through. The case passes and its output says what the check found.
    let mut verdict = sample();
    let unit = verdict
        .checks
        .iter_mut()
        .find(|c| c.name == "unit")
        .unwrap();
    unit.status = crate::gate::CheckStatus::Warned;
    unit.effect = crate::gate::Effect::Warn;
    let docs = verdict
        .checks
        .iter_mut()
        .find(|c| c.name == "docs")
        .unwrap();
    // A warn-only check whose program is missing did not run.
    docs.status = crate::gate::CheckStatus::Missing;
    docs.effect = crate::gate::Effect::Warn;
    docs.reason = Some("`mdl` is not installed (not found on PATH)".into());
    let xml = junit_of(&verdict);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no case {name}: {xml}"))
    };
    for name in ["typecheck", "unit"] {
        let case = case(name);
        assert!(
            !case
                .children()
                .any(|n| n.has_tag_name("failure") || n.has_tag_name("error")),
            "{name}: {xml}"
        );
        let out = case
            .children()
            .find(|n| n.has_tag_name("system-out"))
            .and_then(|n| n.text())
            .unwrap_or_else(|| panic!("{name} says nothing: {xml}"));
        assert!(out.starts_with("warned ("), "{out}");
        assert!(out.contains("does not block"), "{out}");
    }
    let typecheck = case("typecheck");
    assert!(xml.contains("3 problems"), "{xml}");
    assert!(typecheck.children().any(|n| n.has_tag_name("system-out")));
    // Its failed tests are in its output, not failed cases of their own.
    assert!(!xml.contains(r#"name="unit::tests::adds""#), "{xml}");
    let unit_out = case("unit")
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(unit_out.contains("[tests::adds]"), "{unit_out}");
    let skipped = case("docs")
        .children()
        .find(|n| n.has_tag_name("skipped"))
        .unwrap_or_else(|| panic!("{xml}"));
    assert!(skipped
        .attribute("message")
        .unwrap()
        .contains("not installed"));
    // The counts are the gate's: the blocking failures only.
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("failures"), Some("2"), "{xml}");
    assert_eq!(suite.attribute("errors"), Some("1"), "{xml}");
    assert_eq!(suite.attribute("skipped"), Some("1"), "{xml}");
}

#[test]
fn githubs_closing_notice_counts_the_findings_no_report_kept() {
    let mut verdict = crowded();
    verdict
        .checks
        .iter_mut()
        .find(|c| c.name == "lint")
        .unwrap()
        .dropped_diagnostics = 200;
    let mut out = Vec::new();
    super::github::render(&verdict, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let notice = text
        .lines()
        .find(|l| l.starts_with("::notice title=phasegate::"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!notice.contains("have them all"), "{notice}");
    assert!(notice.contains("200 more"), "{notice}");
    assert!(
        text.ends_with("(36 diagnostic(s), 200 more not kept)\n"),
        "{text}"
    );
}

#[test]
fn a_failing_checks_details_start_with_its_errors_the_changes_own_first() {
    let mut verdict = sample();
    let finding = |file: &str, line: u32, severity: Severity, pre_existing: bool| Diagnostic {
        check: "lint".into(),
        tool: "generic".into(),
        file: Some(file.into()),
        line: Some(line),
        severity,
        message: format!("{} at {file}:{line}", severity.as_str()),
        pre_existing,
        ..Diagnostic::default()
    };
    verdict.diagnostics.retain(|d| d.check != "lint");
    for line in 1..=25 {
        verdict
            .diagnostics
            .push(finding("a.c", line, Severity::Warning, false));
    }
    verdict
        .diagnostics
        .push(finding("a.c", 30, Severity::Error, true));
    verdict
        .diagnostics
        .push(finding("phasegate.toml", 4, Severity::Error, false));
    verdict
        .diagnostics
        .push(finding("b.c", 2, Severity::Error, false));
    let mut out = Vec::new();
    super::human::render(&verdict, &mut out, false).unwrap();
    let text = String::from_utf8(out).unwrap();
    let section: Vec<&str> = text
        .split("\nlint — ")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("full log"))
        .collect();
    assert_eq!(
        &section[..5],
        [
            "  b.c:2 error error at b.c:2",
            "  phasegate.toml:4 error error at phasegate.toml:4",
            "  a.c:30 error error at a.c:30 (pre-existing)",
            "  a.c:1 warning warning at a.c:1",
            "  a.c:2 warning warning at a.c:2",
        ],
        "{text}"
    );
    assert_eq!(section.last(), Some(&"  … and 8 more"), "{text}");
}

#[test]
fn a_huge_line_of_output_is_shown_cut_and_kept_whole_in_the_json() {
    // A check that printed one 100 KB line: its finding's headline and the
    // output's last lines are shown cut, the JSON keeps all of it.
    let mut verdict = sample();
    let huge = "E".repeat(100_000);
    let build = verdict
        .diagnostics
        .iter_mut()
        .find(|d| d.check == "build")
        .unwrap();
    build.message = format!("check `build` failed (exit 1): {huge}\nlast lines of output:\n{huge}");
    let mut out = Vec::new();
    super::human::render(&verdict, &mut out, false).unwrap();
    let text = String::from_utf8(out).unwrap();
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest < 600, "a line of {longest} characters");
    assert!(text.contains("EEE…\n"), "cut visibly");
    let mut out = Vec::new();
    super::diagnostics::render_human(&verdict.diagnostics, 0, &mut out, false).unwrap();
    let text = String::from_utf8(out).unwrap();
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest < 600, "a line of {longest} characters");
    let json = serde_json::to_string(&verdict).unwrap();
    assert!(json.contains(&format!("output:\\n{huge}\"")));
}

#[test]
fn control_characters_reach_no_terminal_or_ci_log_raw() {
    // A backspace can make a terminal show "EVIL" where the tool said
    // "SAFE"; a bell rings; U+009B starts a terminal command like ESC [.
    let mut verdict = sample();
    let message = "SAFE\u{8}\u{8}\u{8}\u{8}EVIL bell\u{7} soh\u{1} csi\u{9b}2J del\u{7f}\tend";
    let lint = verdict
        .diagnostics
        .iter_mut()
        .find(|d| d.check == "lint")
        .unwrap();
    lint.message = format!("{message}\nsecond\u{8} line");
    lint.file = Some("src/li\u{8}b.rs".into());
    lint.code = Some("E\u{7}1".into());
    lint.test = Some("t\u{1b}[2J".into());
    verdict.summary.push(format!("{message} (lint)"));
    verdict.notes.push(format!("note {message}"));
    verdict.checks[0].name = "te\u{8}sts".into();
    let raw = |c: char| c.is_control() && c != '\n' && c != '\t';
    for (name, text) in rendered(&verdict) {
        if matches!(name, "human" | "github" | "step summary") {
            assert!(!text.chars().any(raw), "{name}: {text:?}");
            assert!(
                text.contains(r"SAFE\x08\x08\x08\x08EVIL bell\x07"),
                "{name}: {text:?}"
            );
        }
    }
    let mut out = Vec::new();
    super::diagnostics::render_human(&verdict.diagnostics, 0, &mut out, false).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.chars().any(raw), "{text:?}");
    assert!(text.contains(r"csi\u{9b}2J"), "{text:?}");
    // The JSON verdict keeps what the tool said.
    let json = serde_json::to_string(&verdict).unwrap();
    assert!(json.contains(r"SAFE\b\b\b\bEVIL"), "{json}");
}

#[test]
fn the_step_summary_shows_names_and_notes_as_text_whatever_they_hold() {
    let mut verdict = sample();
    verdict.checks[1].name = "x `y` <b>z</b> | w".into();
    verdict.checks[2].name = "`edge`".into();
    verdict.summary = vec!["src/a.rs:1 uses `unwrap` (lint)".into()];
    verdict.notes = vec!["check `a<b>` skipped: <img src=x> & **bold** | #1".into()];
    let markdown = super::github::step_summary(&verdict);
    // A code span fenced by more backticks than it holds, `|` escaped in
    // a table cell: the row keeps its three cells.
    assert!(
        markdown.contains("| ``x `y` <b>z</b> \\| w`` | ❌ failed | 2 |\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| `` `edge` `` | ❌ failed | 2 |\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- ``src/a.rs:1 uses `unwrap` (lint)``\n"),
        "{markdown}"
    );
    // Outside code spans, nothing is markup.
    assert!(
        markdown
            .contains("> check `a<b>` skipped: \\<img src=x\\> \\& \\*\\*bold\\*\\* \\| \\#1\n"),
        "{markdown}"
    );
}

/// The rows a terminal shows for each redraw of the progress line.
fn progress_lines(width: Option<usize>, names: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut progress = super::progress::Progress::new(&mut out, names.len()).with_width(width);
    for name in names {
        progress.event(&crate::runner::RunEvent::Started {
            name: (*name).to_string(),
        });
    }
    progress.finish();
    String::from_utf8(out)
        .unwrap()
        .split("\r\u{1b}[2K")
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_progress_line_never_wraps() {
    // `\r` and "erase line" clear one row: a line wider than the terminal
    // wraps and leaves its first rows behind at every redraw.
    use unicode_width::UnicodeWidthStr;
    let names = [
        "unit-tests-with-long-name",
        "integration-tests-long",
        "lint-everything-long",
        "漢字の検査",
    ];
    let lines = progress_lines(Some(40), &names);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0], "[0/4] running unit-tests-with-long-name");
    for line in &lines {
        assert!(line.width() <= 39, "{} columns: {line}", line.width());
    }
    assert!(lines[2].ends_with('…'), "{lines:?}");
    // Where the width is not known, a line fits in 80 columns.
    let lines = progress_lines(None, &names);
    assert!(lines.iter().all(|l| l.width() < 80), "{lines:?}");
    assert!(lines.iter().any(|l| l.width() > 39), "{lines:?}");
    // A check's name cannot move the cursor either.
    let lines = progress_lines(Some(200), &["a\u{8}\u{8}b"]);
    assert_eq!(lines, [r"[0/1] running a\x08\x08b"]);
}

#[test]
fn handoff_warnings_are_in_every_report_people_read() {
    let mut verdict = sample();
    verdict.handoffs = vec![serde_json::json!({
        "path": "handoffs/F001.md", "id": "F001", "stage": "implementation",
        "valid": true, "escalate": false, "errors": [],
        "warnings": [{"line": 10, "column": 1, "field": "reviewr",
                      "message": "unknown field `reviewr`"}],
    })];
    let mut out = Vec::new();
    super::human::render(&verdict, &mut out, false).unwrap();
    let human = String::from_utf8(out).unwrap();
    assert!(
        human.contains(
            "  handoff handoffs/F001.md (F001, implementation): valid\n  handoffs/F001.md:10:1 warning unknown field `reviewr`\n"
        ),
        "{human}"
    );
    let mut out = Vec::new();
    super::github::render(&verdict, &mut out).unwrap();
    let github = String::from_utf8(out).unwrap();
    assert!(
        github.contains(
            "::warning file=handoffs/F001.md,line=10,col=1,title=phasegate handoff-warning::unknown field `reviewr`\n"
        ),
        "{github}"
    );
    let log = super::sarif::log(&verdict);
    let result = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "phasegate/handoff-warning")
        .unwrap_or_else(|| panic!("{log:#}"));
    assert_eq!(result["level"], "note");
    assert_eq!(result["message"]["text"], "unknown field `reviewr`");
    let place = &result["locations"][0]["physicalLocation"];
    assert_eq!(place["artifactLocation"]["uri"], "handoffs/F001.md");
    assert_eq!(place["region"]["startLine"], 10);
    // A warning decides nothing: the findings counted are the checks'.
    assert_eq!(verdict.diagnostics.len(), 7);
}

#[test]
fn every_code_phasegate_sets_has_a_sarif_rule_that_says_what_to_do() {
    // The codes come from `OwnCode::ALL`, the list every finding of
    // phasegate's own takes its code from.
    let mut verdict = sample();
    verdict.diagnostics = crate::diagnostics::OwnCode::ALL
        .iter()
        .map(|&own| Diagnostic {
            check: "tests".into(),
            tool: "phasegate".into(),
            code: Some(match own {
                crate::diagnostics::OwnCode::Handoff => {
                    crate::diagnostics::OwnCode::handoff("completed_at")
                }
                other => other.to_string(),
            }),
            message: format!("a finding coded {own}"),
            ..Diagnostic::default()
        })
        .collect();
    let log = super::sarif::log(&verdict);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), crate::diagnostics::OwnCode::ALL.len());
    for rule in rules {
        let text = |key: &str| rule[key]["text"].as_str().unwrap_or_default().to_string();
        let (short, full, help) = (
            text("shortDescription"),
            text("fullDescription"),
            text("help"),
        );
        // Not the description of a code nobody described.
        assert!(
            !short.is_empty() && !short.starts_with("phasegate reports"),
            "{rule}"
        );
        assert!(full.len() > short.len(), "{rule}");
        // Help that says what to do, not who reported it.
        assert!(
            rule.get("helpUri").is_some() || (!help.is_empty() && !help.starts_with("Reported by")),
            "{rule}"
        );
    }
    let handoff = rules
        .iter()
        .find(|r| r["id"] == "phasegate/handoff:completed_at")
        .unwrap();
    assert!(
        handoff["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("`completed_at`"),
        "{handoff}"
    );
}

#[test]
fn the_sarif_driver_names_its_version_and_homepage_as_the_package_does() {
    let log = super::sarif::log(&sample());
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
    let homepage = [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|uri| !uri.is_empty());
    assert_eq!(
        driver.get("informationUri").and_then(|u| u.as_str()),
        homepage
    );
}
