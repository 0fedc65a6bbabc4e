//! The `Verdict`: the one machine-readable answer of a run
//! (`phasegate/verdict/v1`). Built by `gate::decide`, rendered by `report`.

use serde::Serialize;

use crate::config::{CheckKind, OnFailure, Profile};
use crate::diagnostics::Diagnostic;
use crate::exit::ExitCode;

/// The schema id every verdict carries.
pub const SCHEMA: &str = "phasegate/verdict/v1";

/// The overall outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    Warned,
    Failed,
    Incomplete,
    Blocked,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Warned => "warned",
            Status::Failed => "failed",
            Status::Incomplete => "incomplete",
            Status::Blocked => "blocked",
        }
    }
}

/// What whoever reads the verdict should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Next {
    /// Go on: commit, merge or hand off.
    Proceed,
    /// Fix what the diagnostics say and run again.
    Fix,
    /// Verification did not finish: remove the cause and run again.
    Resume,
    /// Stop and hand the work to a person.
    Escalate,
}

/// How one check ended, as the verdict reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    Warned,
    Skipped,
    Missing,
    TimedOut,
    Crashed,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::Warned => "warned",
            CheckStatus::Skipped => "skipped",
            CheckStatus::Missing => "missing",
            CheckStatus::TimedOut => "timed out",
            CheckStatus::Crashed => "crashed",
        }
    }
}

/// What a check's result does to the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Nothing: it passed or was skipped.
    None,
    /// A warning; the run may proceed.
    Warn,
    /// A blocking failure: `failed`.
    Block,
    /// Verification could not finish and the profile fails closed.
    Incomplete,
    /// Verification could not finish and the `fast` profile fails open.
    FailOpen,
}

/// One check in the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CheckResult {
    pub name: String,
    pub kind: CheckKind,
    pub status: CheckStatus,
    /// As configured; `strict` turns `warn` into `block` (see `effect`).
    pub on_failure: OnFailure,
    pub effect: Effect,
    /// The failure tier (1 missing tool, 2 timeout/crash/spawn error,
    /// 3 unparseable verifier answer) when one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<u8>,
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub duration_ms: u64,
    /// How many diagnostics this check contributed.
    pub diagnostics: usize,
    /// Diagnostics beyond the per-check cap, counted but not kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_diagnostics: usize,
    /// The changed-line filter applied to its diagnostics.
    pub filter: crate::config::Filter,
    /// How many of its diagnostics lie outside the change.
    #[serde(skip_serializing_if = "is_zero")]
    pub pre_existing: usize,
    /// The full output, relative to the repository root where possible.
    pub log: Option<String>,
    /// Why it was skipped, or what went wrong, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it was not run, as a stable word (`disabled`,
    /// `no_matching_files`, `no_files`, `skipped_by_env`), for what reads
    /// the verdict later; `reason` says it to a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_kind: Option<super::SkipReason>,
    /// The command line(s) run, one per batch: the first `MAX_SHOWN_BATCHES`
    /// batches, each with at most its first `MAX_SHOWN_ARGS` words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<Vec<String>>,
    /// The words of the command lines left out of `argv` (a `{files}`
    /// check over a large selection); the check's invocation record in the
    /// run directory (`<check>.json`) has every one.
    #[serde(skip_serializing_if = "is_zero")]
    pub argv_omitted: usize,
    /// The last lines of output of a check that did not pass.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub output_tail: Vec<String>,
}

impl CheckResult {
    /// Whether `PHASEGATE_SKIP` kept it from running. Unlike a check
    /// disabled or with no file to check, it was asked to run: a resume
    /// runs it again (still skipped while the variable names it, and
    /// saying so), never carries it over as settled.
    pub fn skipped_by_env(&self) -> bool {
        // A verdict written before `skip_kind` says it in the words of
        // its reason then.
        self.status == CheckStatus::Skipped
            && self
                .skip_kind
                .or_else(|| super::SkipReason::written_before_kinds(self.reason.as_deref()?))
                == Some(super::SkipReason::SkippedByEnv)
    }
}

/// Whether a count is zero: serde leaves such a count out
/// (`skip_serializing_if`, which passes the field by reference), in the
/// verdict and the other documents.
pub fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A problem that stopped phasegate itself: bad configuration or usage, or
/// an internal failure.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictError {
    /// `config`, `usage` or `internal`.
    pub kind: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<ErrorProblem>,
}

/// One located problem inside a `VerdictError`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorProblem {
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

/// How the files of a run were chosen.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SelectionSummary {
    /// `staged`, `all`, `files` or `range`.
    pub mode: &'static str,
    /// How many files were selected.
    pub files: usize,
    /// The start of a range, as given (`origin/main`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The end of a range, or the commit whose every file was selected, as
    /// given (`HEAD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The full id of the commit `from` named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_commit: Option<String>,
    /// The full id of the commit `to` named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_commit: Option<String>,
    /// The full id of the merge base of `from` and `to`: a range's changes
    /// are counted from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_base: Option<String>,
    /// The CI event that chose the files (`GitHub pull_request`), when one
    /// did: a range, or every tracked file when the event has no range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<String>,
    /// The ref being pushed, when a pre-push hook runs once per pushed ref.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushed_ref: Option<String>,
    /// The published commits a push's own commits were made on, when a
    /// merge brought in more than one: the commits checked are `git log
    /// <to> --not <these>`, and a file counts when it differs from each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<String>,
}

/// The verdict of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub schema: &'static str,
    pub status: Status,
    pub next: Next,
    /// `None` when phasegate stopped before the phase was known.
    pub phase: Option<String>,
    pub profile: Profile,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Verification did not finish but the `fast` profile let it through.
    pub fail_open: bool,
    pub checks: Vec<CheckResult>,
    pub handoffs: Vec<serde_json::Value>,
    pub diagnostics: Vec<Diagnostic>,
    /// The top distinct errors, one line each, root cause first.
    pub summary: Vec<String>,
    /// Visible warnings about the run itself (fail-open, skipped tools).
    pub notes: Vec<String>,
    pub interventions: Vec<String>,
    /// The environment variables phasegate pinned for every check.
    pub environment: Vec<(String, String)>,
    /// Which files the run looked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<VerdictError>,
}

impl Verdict {
    /// The process exit code this verdict maps to.
    pub fn exit_code(&self) -> ExitCode {
        if let Some(error) = &self.error {
            if error.kind != "internal" {
                return ExitCode::Usage;
            }
        }
        match self.status {
            Status::Passed | Status::Warned => ExitCode::Proceed,
            Status::Failed => ExitCode::Failed,
            Status::Incomplete if self.fail_open => ExitCode::Proceed,
            Status::Incomplete => ExitCode::Incomplete,
            Status::Blocked => ExitCode::Escalate,
        }
    }

    /// A verdict holding only `diagnostics` (a saved log parsed by
    /// `diagnostics parse`), for the report formats.
    pub fn of_diagnostics(diagnostics: Vec<Diagnostic>) -> Verdict {
        let failed = diagnostics
            .iter()
            .any(|d| d.severity == crate::diagnostics::Severity::Error);
        Verdict {
            schema: SCHEMA,
            status: if failed {
                Status::Failed
            } else {
                Status::Passed
            },
            next: if failed { Next::Fix } else { Next::Proceed },
            phase: None,
            profile: Profile::default(),
            workflow: None,
            run_id: None,
            fail_open: false,
            checks: Vec::new(),
            handoffs: Vec::new(),
            diagnostics,
            summary: Vec::new(),
            notes: Vec::new(),
            interventions: Vec::new(),
            environment: Vec::new(),
            selection: None,
            error: None,
        }
    }

    /// A verdict for a run that stopped before any check ran.
    pub fn stopped(profile: Profile, phase: Option<String>, error: VerdictError) -> Verdict {
        let next = if error.kind == "internal" {
            Next::Resume
        } else {
            Next::Fix
        };
        Verdict {
            schema: SCHEMA,
            status: Status::Incomplete,
            next,
            phase,
            profile,
            workflow: None,
            run_id: None,
            fail_open: false,
            checks: Vec::new(),
            handoffs: Vec::new(),
            diagnostics: Vec::new(),
            summary: vec![error.message.clone()],
            notes: Vec::new(),
            interventions: Vec::new(),
            environment: Vec::new(),
            selection: None,
            error: Some(error),
        }
    }
}
