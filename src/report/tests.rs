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
        invocations: vec![Invocation {
            argv: vec![name.into()],
        }],
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
        run,
    }
}

/// A verdict with a pass, a located failure, an unparsed failure, a
/// warning, a timeout and a skip.
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
            "lint",
            OnFailure::Block,
            4,
            CheckRun::Ran(Box::new(outcome(
                "lint",
                Termination::Exited(101),
                "",
                vec![lint_error],
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
