//! The policy: check outcomes + `on_failure` + profile + failure tiers →
//! `Verdict`. A pure function of its input: no I/O, no clock, no printing.

use std::path::Path;
use std::time::Duration;

use crate::config::{CheckKind, ConfigLocation, Filter, OnFailure, OnMissing, Origin, Profile};
use crate::diagnostics::{Diagnostic, OwnCode, Severity, OUTPUT_TAIL_HEADING};
use crate::runner::{Bypass, CheckOutcome, Termination, UnusedVenv, VerifierAnswer, VerifierReply};

use super::verdict::{
    CheckResult, CheckStatus, Effect, Next, SelectionSummary, Status, Verdict, SCHEMA,
};

/// How many output lines a failing check with no parsed diagnostic shows.
const TAIL_LINES: usize = 20;

/// Why a configured check did not run. Recorded in the verdict as a word
/// (`skip_kind`) that stays when `describe`'s wording changes: what reads
/// the run history later (`handoff feedback`) decides by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// `on_failure = "skip"`: the check is disabled.
    Disabled,
    /// It has a `files` filter and no selected file matches.
    NoMatchingFiles,
    /// It passes `{files}` and no file is selected.
    NoFiles,
    /// Named in `PHASEGATE_SKIP`.
    SkippedByEnv,
}

impl SkipReason {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            SkipReason::Disabled => "disabled (on_failure = \"skip\")",
            SkipReason::NoMatchingFiles => "no selected file matches its `files`",
            SkipReason::NoFiles => "no files selected for `{files}`",
            SkipReason::SkippedByEnv => "skipped by PHASEGATE_SKIP",
        }
    }

    /// The kind of skip a verdict written before `skip_kind` existed says
    /// in its `reason`, in the words phasegate used then: frozen here, so
    /// that a rewording of `describe` cannot change how those verdicts
    /// read.
    pub(crate) fn written_before_kinds(reason: &str) -> Option<SkipReason> {
        match reason {
            "disabled (on_failure = \"skip\")" => Some(SkipReason::Disabled),
            "no selected file matches its `files`" => Some(SkipReason::NoMatchingFiles),
            "no files selected for `{files}`" => Some(SkipReason::NoFiles),
            "skipped by PHASEGATE_SKIP" => Some(SkipReason::SkippedByEnv),
            _ => None,
        }
    }
}

/// What happened to one check.
#[derive(Debug, Clone)]
pub enum CheckRun {
    NotRun(SkipReason),
    Ran(Box<CheckOutcome>),
}

/// One check as the policy sees it.
#[derive(Debug, Clone)]
pub struct CheckInput {
    pub name: String,
    pub kind: CheckKind,
    pub origin: Origin,
    pub on_failure: OnFailure,
    pub on_missing: OnMissing,
    /// The changed-line filter its diagnostics were marked with.
    pub filter: Filter,
    /// Where the check is configured, for diagnostics with nothing better.
    pub location: Option<ConfigLocation>,
    /// Where its command is written (see `CheckSpec::command_location`),
    /// for what is wrong with the command itself: a program that is not
    /// installed is fixed there, not at the check's name.
    pub command_location: Option<ConfigLocation>,
    pub run: CheckRun,
}

/// Everything `decide` needs.
#[derive(Debug, Clone)]
pub struct GateInput {
    pub phase: String,
    pub profile: Profile,
    pub workflow: Option<String>,
    pub run_id: Option<String>,
    pub checks: Vec<CheckInput>,
    /// Notes gathered before the checks ran (e.g. files that do not exist).
    pub notes: Vec<String>,
    pub environment: Vec<(String, String)>,
    /// The repository root: logs are shown relative to it.
    pub root: std::path::PathBuf,
    /// How many lines the summary keeps.
    pub summary_limit: usize,
    /// Which files the run looked at.
    pub selection: Option<SelectionSummary>,
    /// Failures phasegate found itself, outside any check (files the
    /// checks modified): each one fails the run.
    pub blocking: Vec<Diagnostic>,
    /// phasegate was interrupted (Ctrl-C, SIGTERM, SIGHUP) before it
    /// finished: even when every check had, the run never lets a commit
    /// through.
    pub interrupted: bool,
    /// The handoff documents among the selected files, validated.
    pub handoffs: Vec<crate::handoff::HandoffReport>,
}

/// One check judged.
struct Judged {
    status: CheckStatus,
    effect: Effect,
    tier: Option<u8>,
    reason: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

/// Applies the policy.
pub fn decide(input: GateInput) -> Verdict {
    let mut checks = Vec::with_capacity(input.checks.len());
    let mut diagnostics = Vec::new();
    let mut notes = input.notes;

    for check in &input.checks {
        let judged = judge(input.profile, check);
        let result = check_result(check, &judged, &input.root);
        match judged.effect {
            Effect::FailOpen => notes.push(format!(
                "check `{}` {} under the fast profile: verification is incomplete but fails open",
                check.name,
                judged.reason.as_deref().unwrap_or("did not finish"),
            )),
            Effect::None if judged.status == CheckStatus::Skipped && judged.tier == Some(1) => {
                notes.push(format!(
                    "check `{}` skipped: {}",
                    check.name,
                    judged.reason.as_deref().unwrap_or("its tool is missing")
                ));
            }
            _ => {}
        }
        diagnostics.extend(judged.diagnostics);
        checks.push(result);
    }

    let ran = checks
        .iter()
        .filter(|c| c.status != CheckStatus::Skipped)
        .count();
    // A check PHASEGATE_SKIP skipped was asked to run and was not
    // verified: the run proceeds, as that escape hatch promises, but it
    // warns, so that nobody reads the verdict as a pass of that check.
    // `strict` turns every warning into a block: there the unverified
    // check keeps verification from finishing, as a missing tool does, and
    // the run fails closed (`incomplete`) rather than let a merge gate be
    // opened by one environment variable.
    let by_env: Vec<&str> = input
        .checks
        .iter()
        .filter(|c| matches!(c.run, CheckRun::NotRun(SkipReason::SkippedByEnv)))
        .map(|c| c.name.as_str())
        .collect();
    let skip_effect = match input.profile {
        Profile::Strict => Effect::Incomplete,
        Profile::Auto | Profile::Fast => Effect::Warn,
    };
    for result in &mut checks {
        if by_env.contains(&result.name.as_str()) {
            result.effect = skip_effect;
        }
    }
    let by_env: Vec<String> = by_env.iter().map(|name| format!("`{name}`")).collect();
    let strict_skip = if input.profile == Profile::Strict && !by_env.is_empty() {
        "; the strict profile lets nothing unverified through: unset PHASEGATE_SKIP, or run under `--profile auto`, which lets a skipped check through with a warning"
    } else {
        ""
    };
    if ran == 0 && !by_env.is_empty() {
        notes.push(format!(
            "no check ran in phase `{}`: PHASEGATE_SKIP skipped {}, so nothing was verified{strict_skip}",
            input.phase,
            by_env.join(", ")
        ));
    } else if ran == 0 {
        notes.push(format!("no check ran in phase `{}`", input.phase));
    } else if !by_env.is_empty() {
        notes.push(format!(
            "PHASEGATE_SKIP skipped {}: not verified in this run{strict_skip}",
            by_env.join(", ")
        ));
    }

    let mut own = input.blocking;
    own.extend(handoff_findings(&input.handoffs, &mut notes));
    let escalate = input
        .handoffs
        .iter()
        .any(|h| h.escalate || h.status.as_deref() == Some("blocked"));
    if input.interrupted {
        notes.push(
            "phasegate was interrupted before it finished: the run lets nothing through"
                .to_string(),
        );
    }
    let blocked_by_gate = !own.is_empty();
    diagnostics.splice(0..0, own);
    let (mut status, next, fail_open) =
        overall(&checks, escalate, blocked_by_gate, input.interrupted);
    // A handoff's claim no check of the run verified (`tests_passing`
    // while `tests` was skipped) passes nothing in silence: the run
    // proceeds, warned, as when PHASEGATE_SKIP skips a check.
    if unverified_claims(&input.handoffs, &mut notes) && status == Status::Passed {
        status = Status::Warned;
    }

    let summary = summarize(&diagnostics, &checks, input.summary_limit);

    Verdict {
        schema: SCHEMA,
        status,
        next,
        phase: Some(input.phase),
        profile: input.profile,
        workflow: input.workflow,
        run_id: input.run_id,
        fail_open,
        checks,
        handoffs: input
            .handoffs
            .iter()
            .map(|h| serde_json::to_value(h).unwrap_or_default())
            .collect(),
        diagnostics,
        summary,
        notes,
        interventions: Vec::new(),
        environment: input.environment,
        selection: input.selection,
        error: None,
    }
}

/// Each handoff document's errors, as findings of phasegate itself at
/// their place in the document; a note for each document that needs a
/// person (out of retries, or blocked).
fn handoff_findings(
    handoffs: &[crate::handoff::HandoffReport],
    notes: &mut Vec<String>,
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for report in handoffs {
        for issue in &report.errors {
            found.push(Diagnostic {
                check: String::new(),
                origin: Origin::Runtime,
                tool: "phasegate".to_string(),
                file: Some(report.path.clone()),
                line: u32::try_from(issue.line).ok(),
                column: u32::try_from(issue.column).ok(),
                severity: Severity::Error,
                code: Some(OwnCode::handoff(&issue.field)),
                message: issue.message.clone(),
                ..Diagnostic::default()
            });
        }
        if report.escalate {
            // The document stays `blocked` after its code is fixed: the
            // person it waits for is told what in it lets work go on.
            notes.push(format!(
                "handoff `{}` is out of retries ({}): a person is needed, and goes on by editing it: `status: complete` once its checks pass, or a lower `retry_count` to allow more attempts",
                report.path,
                crate::handoff::retries_used(report.retry_count.unwrap_or(0), report.max_retries)
            ));
        } else if report.status.as_deref() == Some("blocked") {
            notes.push(format!(
                "handoff `{}` says it is blocked{}: a person is needed, and goes on by setting its `status` to what comes next (`in_progress`, or `complete` once its checks pass)",
                report.path,
                crate::handoff::blocked_on(
                    report.block_reason.as_deref(),
                    report.block_details.as_deref()
                )
            ));
        }
    }
    found
}

/// A note for each claim of a valid handoff document that no check of the
/// run verified; whether there is one.
fn unverified_claims(handoffs: &[crate::handoff::HandoffReport], notes: &mut Vec<String>) -> bool {
    let mut any = false;
    for report in handoffs.iter().filter(|h| h.valid) {
        for warning in &report.warnings {
            if let Some(check) = &warning.unverified_by {
                any = true;
                notes.push(format!(
                    "handoff `{}:{}`: the claim `{}` is not verified: check `{check}` verified nothing in this run",
                    report.path,
                    warning.line,
                    warning.field.trim_start_matches("checkpoints.")
                ));
            }
        }
    }
    any
}

/// The run's status, what comes next, and whether it failed open: a
/// person needed first, then a failure (a blocking check, or phasegate's
/// own finding), then verification that did not finish, then warnings.
fn overall(
    checks: &[CheckResult],
    escalate: bool,
    blocked_by_gate: bool,
    interrupted: bool,
) -> (Status, Next, bool) {
    let worst = checks
        .iter()
        .map(|c| c.effect)
        .max_by_key(|effect| weight(*effect))
        .unwrap_or(Effect::None);
    if escalate {
        (Status::Blocked, Next::Escalate, false)
    } else if worst == Effect::Block || blocked_by_gate {
        (Status::Failed, Next::Fix, false)
    } else if worst == Effect::Incomplete || interrupted {
        (Status::Incomplete, Next::Resume, false)
    } else if worst == Effect::FailOpen {
        (Status::Incomplete, Next::Proceed, true)
    } else if worst == Effect::Warn {
        (Status::Warned, Next::Proceed, false)
    } else {
        (Status::Passed, Next::Proceed, false)
    }
}

/// The effect of an event that kept verification from finishing (tiers 2
/// and 3): fail closed unless the profile is `fast`.
fn unfinished(profile: Profile) -> Effect {
    match profile {
        Profile::Fast => Effect::FailOpen,
        Profile::Strict | Profile::Auto => Effect::Incomplete,
    }
}

/// One check's status and effect on the verdict, from how it ended, its
/// `on_failure` and `on_missing`, and the profile.
fn judge(profile: Profile, check: &CheckInput) -> Judged {
    let outcome = match &check.run {
        CheckRun::NotRun(reason) => {
            return Judged {
                status: CheckStatus::Skipped,
                effect: Effect::None,
                tier: None,
                reason: Some(reason.describe().to_string()),
                diagnostics: Vec::new(),
            };
        }
        CheckRun::Ran(outcome) => outcome,
    };
    // `strict` turns every warning into a block.
    let on_failure = match (profile, check.on_failure) {
        (Profile::Strict, _) => OnFailure::Block,
        (_, other) => other,
    };
    let failed_effect = match on_failure {
        OnFailure::Warn => (CheckStatus::Warned, Effect::Warn),
        OnFailure::Block | OnFailure::Skip => (CheckStatus::Failed, Effect::Block),
    };

    match &outcome.termination {
        Termination::Missing {
            program,
            unused_venv,
        } => after_a_fail(
            profile,
            check,
            outcome,
            failed_effect,
            missing(profile, check, program, unused_venv.as_ref()),
        ),
        Termination::TimedOut(limit) => {
            let reason = format!(
                "timed out after {}; its process group was killed",
                format_duration(*limit)
            );
            let event = tier_event(
                check,
                outcome,
                CheckStatus::TimedOut,
                unfinished(profile),
                2,
                reason,
                OwnCode::Timeout,
            );
            after_a_fail(profile, check, outcome, failed_effect, event)
        }
        Termination::Signaled(signal) => {
            let reason = format!("crashed: killed by signal {}", signal_name(*signal));
            let event = tier_event(
                check,
                outcome,
                CheckStatus::Crashed,
                unfinished(profile),
                2,
                reason,
                OwnCode::Crash,
            );
            after_a_fail(profile, check, outcome, failed_effect, event)
        }
        Termination::SpawnFailed(message) => {
            let reason = format!("could not be run: {message}");
            let event = tier_event(
                check,
                outcome,
                CheckStatus::Crashed,
                unfinished(profile),
                2,
                reason,
                OwnCode::SpawnFailed,
            );
            after_a_fail(profile, check, outcome, failed_effect, event)
        }
        Termination::Interrupted => {
            // An interrupted run never lets a commit through, whatever the
            // profile: the person pressing Ctrl-C did not get an answer.
            tier_event(
                check,
                outcome,
                CheckStatus::Crashed,
                Effect::Incomplete,
                2,
                "interrupted before it finished".to_string(),
                OwnCode::Interrupted,
            )
        }
        Termination::Exited(code) if check.kind == CheckKind::Verifier => {
            judge_verifier(profile, check, outcome, *code, failed_effect)
        }
        Termination::Exited(0) => exited_zero(profile, check, outcome, failed_effect),
        Termination::Exited(code) => exited_failing(profile, check, outcome, *code, failed_effect),
    }
}

/// Whether `check` found the work wanting: judged `failed` or `warned` (a
/// failure the configuration lets through is a failure still), or it said
/// so before something stopped it (a verifier's `"fail"`, a batch of files
/// that failed before a later one timed out). A handoff's claim that such
/// a check verifies is contradicted, as the verdict and `handoff
/// feedback` read the run: the exit status alone would miss a verifier's
/// `"pass"` that names an error and the errors of a tool that exits 0 on
/// findings (`go vet -json`), and count a verifier that did not finish.
pub fn found_wanting(profile: Profile, check: &CheckInput) -> bool {
    let CheckRun::Ran(outcome) = &check.run else {
        return false;
    };
    let said_fail = outcome.failed_batch.is_some()
        || matches!(&outcome.verifier, Some(VerifierReply::Answer(a)) if !a.pass);
    said_fail
        || matches!(
            judge(profile, check).status,
            CheckStatus::Failed | CheckStatus::Warned
        )
}

/// Why `check` verified nothing in this run (skipped, not installed,
/// timed out, crashed), or `None` when it ran to an end: it passed, or
/// it found the work wanting (`found_wanting`). A handoff's claim on a
/// check that verified nothing is neither confirmed nor contradicted.
pub fn verified_nothing(profile: Profile, check: &CheckInput) -> Option<String> {
    if found_wanting(profile, check) {
        return None;
    }
    let judged = judge(profile, check);
    match judged.status {
        CheckStatus::Passed | CheckStatus::Failed | CheckStatus::Warned => None,
        status => Some(judged.reason.unwrap_or_else(|| status.as_str().to_string())),
    }
}

/// A check that exited `code`, not 0: it failed, as its `on_failure` says.
fn exited_failing(
    profile: Profile,
    check: &CheckInput,
    outcome: &CheckOutcome,
    code: i32,
    failed_effect: (CheckStatus, Effect),
) -> Judged {
    let mut parsed = outcome.diagnostics.clone();
    if !parsed.iter().any(|d| d.severity == Severity::Error) {
        parsed.push(tail_diagnostic(
            check,
            outcome,
            &format!("check `{}` failed (exit {code})", check.name),
        ));
    }
    failed(
        profile,
        check,
        failed_effect,
        format!("exit {code}"),
        parsed,
    )
}

/// A check whose program is not installed (tier 1), as the profile and the
/// check's `on_missing` say. `unused_venv`: the project's virtual
/// environment has it, and the check did not run there.
fn missing(
    profile: Profile,
    check: &CheckInput,
    program: &str,
    unused_venv: Option<&UnusedVenv>,
) -> Judged {
    let (status, effect) = match (profile, check.on_missing) {
        (Profile::Strict, _) | (Profile::Auto, OnMissing::Block) => {
            (CheckStatus::Missing, Effect::Incomplete)
        }
        (Profile::Auto, OnMissing::Warn) => (CheckStatus::Missing, Effect::Warn),
        (Profile::Auto, OnMissing::Skip) | (Profile::Fast, _) => {
            (CheckStatus::Skipped, Effect::None)
        }
    };
    let severity = if effect == Effect::Incomplete {
        Severity::Error
    } else {
        Severity::Warning
    };
    if let Some(unused) = unused_venv {
        let (reason, diagnostic) = not_in_venv(check, program, unused, severity);
        return Judged {
            status,
            effect,
            tier: Some(1),
            reason: Some(reason),
            diagnostics: vec![diagnostic],
        };
    }
    // A program a package manager's script or runner could not find is
    // one of the project's dependencies, which were never installed.
    let installer = match &check.run {
        CheckRun::Ran(outcome) => outcome
            .invocations
            .first()
            .and_then(|i| crate::runner::dependency_installer(&i.argv, program)),
        CheckRun::NotRun(_) => None,
    };
    // poetry and pipenv look in the environment they keep for the
    // project, not on PATH.
    let reason = match installer.and_then(|i| i.split(' ').next()) {
        Some(runner @ ("poetry" | "pipenv")) => format!(
            "`{program}` is not installed (not found in the environment {runner} keeps for the project)"
        ),
        _ => format!("`{program}` is not installed (not found on PATH)"),
    };
    let install = match installer {
        Some(installer) => {
            // Where a program comes in a package of another name, the
            // name to ask the package manager for.
            let package = crate::config::package_of(program);
            let package = package.as_deref().unwrap_or("it");
            format!("install the project's dependencies (`{installer}`), or add {package} to them")
        }
        None => crate::config::install_hint(program),
    };
    // Taking the check out of its phase is the third way, for a tool the
    // project does not mean to use.
    let leave_out = format!("take check `{}` out of its phase's `checks`", check.name);
    // Under strict only installing it helps: `on_missing` is not read
    // there.
    let advice = if profile == Profile::Strict {
        format!("{install}, or {leave_out} (the strict profile blocks on every missing tool)")
    } else if check.location.is_none() {
        // The check is the embedded default's: no file lists it, so its
        // `on_missing` is set where a phase of `phasegate.toml` lists it
        // (a file `init` writes, or one that has no phases yet).
        format!(
            "{install}, or list check `{}` with `on_missing = \"warn\"` (or \"skip\") in a phase of `phasegate.toml` (`phasegate init` writes one where there is none), or leave it out of the phase there",
            check.name
        )
    } else {
        format!(
            "{leave_out} if the project does not use it; else {install}, or set `on_missing` for check `{}` to \"warn\" or \"skip\"",
            check.name
        )
    };
    // The program is named in the command: that is where a user who
    // fixes it rather than installing it edits.
    let at = check.command_location.as_ref().or(check.location.as_ref());
    let diagnostic = missing_tool_finding(check, severity, at, format!("{reason}; {advice}"));
    Judged {
        status,
        effect,
        tier: Some(1),
        reason: Some(reason),
        diagnostics: vec![diagnostic],
    }
}

/// A program not on the check's `PATH` that the project's virtual
/// environment has: said with why the check did not run there, and the
/// way to make it (the tool is installed, so installing it is no advice).
/// The reason, and the finding that says it with what to do.
fn not_in_venv(
    check: &CheckInput,
    program: &str,
    unused: &UnusedVenv,
    severity: Severity,
) -> (String, Diagnostic) {
    let venv = unused.venv.display();
    let bin = unused.venv.join("bin");
    let has = format!(
        "`{program}` is not on PATH, but the project's virtual environment `{venv}` has it (`{}`)",
        bin.join(program).display()
    );
    let activate = format!("`source {}`", bin.join("activate").display());
    let (reason, advice) = match &unused.why {
        Bypass::OtherActive(active) => (
            format!(
                "{has}: the check did not run in it, as another environment is active (`VIRTUAL_ENV` is `{}`)",
                active.display()
            ),
            format!(
                "deactivate that environment (`deactivate`) or activate the project's ({activate}), then run again; or install `{program}` in the active one"
            ),
        ),
        Bypass::ActiveOffPath => (
            format!("{has}: `VIRTUAL_ENV` names it as active, but its `bin` is not on PATH"),
            format!(
                "activate it again ({activate}), which puts `{}` first on PATH, then run again",
                bin.display()
            ),
        ),
        Bypass::CheckEnv(name) => {
            let also = if *name == "PATH" {
                format!(
                    "or put `{}` first on the `PATH` it sets, as an absolute path",
                    bin.display()
                )
            } else {
                format!(
                    "or set `PATH` there too, `{}` first, as an absolute path",
                    bin.display()
                )
            };
            (
                format!("{has}: the check did not run in it, as its own `env` sets `{name}`"),
                format!(
                    "take `{name}` out of check `{}`'s `env` in phasegate.toml, and it runs in `{venv}` as activating it does; {also}",
                    check.name
                ),
            )
        }
    };
    // Fixed in the check's `env` for a check that sets it, else where the
    // program is named.
    let at = match unused.why {
        Bypass::CheckEnv(_) => check.location.as_ref().or(check.command_location.as_ref()),
        _ => check.command_location.as_ref().or(check.location.as_ref()),
    };
    let diagnostic = missing_tool_finding(check, severity, at, format!("{reason}; {advice}"));
    (reason, diagnostic)
}

/// The finding of a check's missing program, at `at` in `phasegate.toml`
/// (where the user edits), saying `message`.
fn missing_tool_finding(
    check: &CheckInput,
    severity: Severity,
    at: Option<&ConfigLocation>,
    message: String,
) -> Diagnostic {
    Diagnostic {
        file: at.map(|l| l.file.clone()),
        line: at.map(|l| l.line),
        column: at.map(|l| l.column),
        ..located(
            check,
            severity,
            Some(OwnCode::MissingTool.as_str()),
            message,
        )
    }
}

/// A check that exited 0: it passed, unless its format reports findings
/// under exit 0 (`go vet -json`) and it reported errors.
fn exited_zero(
    profile: Profile,
    check: &CheckInput,
    outcome: &CheckOutcome,
    failed_effect: (CheckStatus, Effect),
) -> Judged {
    let parsed = outcome.diagnostics.clone();
    let errors = parsed
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if outcome.errors_fail && errors > 0 {
        return failed(
            profile,
            check,
            failed_effect,
            format!(
                "exit 0, but it reported {errors} error(s) in a format whose tool exits 0 on findings"
            ),
            parsed,
        );
    }
    Judged {
        status: CheckStatus::Passed,
        effect: Effect::None,
        tier: None,
        reason: None,
        diagnostics: parsed,
    }
}

/// A check that failed for `reason`, as its `on_failure` says (demoted
/// when every error is pre-existing).
fn failed(
    profile: Profile,
    check: &CheckInput,
    (status, effect): (CheckStatus, Effect),
    reason: String,
    mut diagnostics: Vec<Diagnostic>,
) -> Judged {
    // A check that only warns says so in phasegate's own finding about it
    // (CI formats show an error as one); the tool's findings keep theirs.
    if effect == Effect::Warn {
        for d in &mut diagnostics {
            if d.tool == "phasegate" && d.code.as_deref() == Some(OwnCode::CheckFailed.as_str()) {
                d.severity = Severity::Warning;
            }
        }
    }
    demote_if_pre_existing(
        profile,
        check,
        Judged {
            status,
            effect,
            tier: None,
            reason: Some(reason),
            diagnostics,
        },
    )
}

/// A blocking failure whose every error lies outside the change (the
/// changed-line filter marked them all pre-existing) is the old code's
/// fault, not the change's: it warns instead. Never under `strict`, never
/// when an error could not be placed (the output-tail finding), and never
/// when findings over the check's cap were only counted: the change's own
/// error may be among them.
fn demote_if_pre_existing(profile: Profile, check: &CheckInput, judged: Judged) -> Judged {
    let mut errors = judged
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .peekable();
    let unseen = matches!(&check.run, CheckRun::Ran(outcome) if outcome.dropped_diagnostics > 0);
    let all_old = !unseen && errors.peek().is_some() && errors.all(|d| d.pre_existing);
    if profile == Profile::Strict || judged.effect != Effect::Block || !all_old {
        return judged;
    }
    let filter = match check.filter {
        Filter::Added => "added",
        Filter::DiffContext => "diff_context",
        Filter::File => "file",
        Filter::Nofilter => "nofilter",
    };
    Judged {
        status: CheckStatus::Warned,
        effect: Effect::Warn,
        reason: Some(format!(
            "{}; every error is pre-existing (outside the change, filter = \"{filter}\"), so it warns",
            judged.reason.as_deref().unwrap_or("failed")
        )),
        ..judged
    }
}

/// How much an effect weighs on the verdict: the heaviest of a run's
/// checks decides it (`overall`).
fn weight(effect: Effect) -> u8 {
    match effect {
        Effect::None => 0,
        Effect::Warn => 1,
        Effect::FailOpen => 2,
        Effect::Incomplete => 3,
        Effect::Block => 4,
    }
}

/// A check that did not finish (timed out, killed, unable to start a batch
/// of files, or told by its shell that a tool is missing) beside a failure
/// it reported: a verifier's whole `"fail"` answer, or another batch that
/// exited non-zero. That failure is the tool's word on the
/// work, and what stopped the check cannot take it back. Read as the tier
/// 1 or 2 event alone, the `fast` profile would let through what had
/// already failed. The heavier of the two judgements decides (under
/// `auto`, a failure that only warns still leaves verification
/// unfinished), and it keeps the other's findings: neither the failure nor
/// the timeout is lost.
fn after_a_fail(
    profile: Profile,
    check: &CheckInput,
    outcome: &CheckOutcome,
    failed_effect: (CheckStatus, Effect),
    event: Judged,
) -> Judged {
    let stopped = event.reason.clone().unwrap_or_default();
    let (fail, fail_reason, event_reason) = match (&outcome.verifier, outcome.failed_batch) {
        (Some(VerifierReply::Answer(answer)), _)
            if check.kind == CheckKind::Verifier && !answer.pass =>
        {
            let said = "the verifier answered \"fail\"";
            (
                verifier_fail(profile, check, outcome, answer, failed_effect),
                format!("{said}, then {stopped}"),
                format!("{stopped}, after {said}"),
            )
        }
        // Every batch runs but a timeout's, so the failing batch may
        // have come before the one that did not finish or after it.
        (_, Some(code)) if check.kind != CheckKind::Verifier => {
            let said = format!("a batch of files failed (exit {code})");
            (
                exited_failing(profile, check, outcome, code, failed_effect),
                format!("{said}, and another {stopped}"),
                format!("{stopped}, and {said}"),
            )
        }
        _ => return event,
    };
    heavier(fail, event, &fail_reason, &event_reason)
}

/// The heavier of a verifier's `fail` and of an `event` that kept its
/// review from finishing, with `fail_reason` or `event_reason` as the
/// reason of whichever decides; the other's findings are kept.
fn heavier(fail: Judged, event: Judged, fail_reason: &str, event_reason: &str) -> Judged {
    let (mut heavier, lighter) = if weight(fail.effect) >= weight(event.effect) {
        let mut fail = fail;
        fail.reason = Some(fail_reason.to_string());
        (fail, event)
    } else {
        let mut event = event;
        event.reason = Some(event_reason.to_string());
        (event, fail)
    };
    heavier.diagnostics.extend(lighter.diagnostics);
    heavier
}

/// A verifier's `"fail"`. When another batch of its files answered
/// something that cannot be read (`unread`), that batch's review did not
/// finish: the heavier of the fail and of that tier 3 event decides, as
/// for a fail followed by a timeout (`after_a_fail`).
fn verifier_fail(
    profile: Profile,
    check: &CheckInput,
    outcome: &CheckOutcome,
    answer: &VerifierAnswer,
    failed_effect: (CheckStatus, Effect),
) -> Judged {
    let fail = answered_fail(check, answer.findings.clone(), failed_effect);
    let Some(why) = &answer.unread else {
        return fail;
    };
    let unread = format!("the answer of another batch of files could not be parsed: {why}");
    let event = tier_event(
        check,
        outcome,
        CheckStatus::Crashed,
        unfinished(profile),
        3,
        unread.clone(),
        OwnCode::VerifierMalformed,
    );
    heavier(
        fail,
        event,
        &format!("the verifier answered \"fail\"; {unread}"),
        &format!("{unread}; another batch answered \"fail\""),
    )
}

/// A verifier's `"fail"` with its `findings`, as its `on_failure` says.
fn answered_fail(
    check: &CheckInput,
    mut findings: Vec<Diagnostic>,
    failed_effect: (CheckStatus, Effect),
) -> Judged {
    // phasegate's word on a finding it could not read is placed at
    // the check, as its other findings about a check are.
    for d in &mut findings {
        if d.tool == "phasegate" && d.file.is_none() {
            *d = located(check, d.severity, d.code.as_deref(), d.message.clone());
        }
    }
    if !findings.iter().any(|d| d.severity == Severity::Error) {
        findings.push(located(
            check,
            Severity::Error,
            Some(OwnCode::VerifierFail.as_str()),
            format!("verifier `{}` answered \"fail\"", check.name),
        ));
    }
    // A verifier that only warns says so in phasegate's own
    // findings about it, as any check does (see `failed`); the
    // reviewer's findings keep their severity.
    if failed_effect.1 == Effect::Warn {
        for d in findings.iter_mut().filter(|d| d.tool == "phasegate") {
            d.severity = Severity::Warning;
        }
    }
    Judged {
        status: failed_effect.0,
        effect: failed_effect.1,
        tier: None,
        reason: Some("the verifier answered \"fail\"".to_string()),
        diagnostics: findings,
    }
}

/// A verifier that exited: its JSON answer decides, and an answer that
/// cannot be read is tier 3.
///
/// A `"pass"` that names an error among its findings contradicts itself.
/// It is read as a fail, not as an answer that cannot be read: the error
/// is the reviewer's own word on the work, with its file and line, and it
/// is what whoever retries has to fix. Read as tier 3 it would pass under
/// `fast` and send the next attempt to `resume`, to get the same answer
/// again.
fn judge_verifier(
    profile: Profile,
    check: &CheckInput,
    outcome: &CheckOutcome,
    code: i32,
    failed_effect: (CheckStatus, Effect),
) -> Judged {
    match (&outcome.verifier, code) {
        (Some(VerifierReply::Answer(answer)), _)
            if answer.pass
                && answer
                    .findings
                    .iter()
                    .any(|d| d.severity == Severity::Error) =>
        {
            let errors = answer
                .findings
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count();
            let mut findings = answer.findings.clone();
            findings.push(located(
                check,
                Severity::Error,
                Some(OwnCode::VerifierContradiction.as_str()),
                format!(
                    "verifier `{}` answered \"pass\" but named {errors} error(s) among its findings: the answer is read as a fail; fix what the errors say, or, where the verifier does not mean an error, it gives that finding a lower severity (warning, note)",
                    check.name
                ),
            ));
            let mut judged = answered_fail(check, findings, failed_effect);
            judged.reason = Some(format!(
                "the verifier answered \"pass\" but named {errors} error(s), read as a fail"
            ));
            judged
        }
        (Some(VerifierReply::Answer(answer)), 0) if answer.pass => Judged {
            status: CheckStatus::Passed,
            effect: Effect::None,
            tier: None,
            reason: None,
            diagnostics: answer.findings.clone(),
        },
        (Some(VerifierReply::Answer(answer)), _) if !answer.pass => {
            verifier_fail(profile, check, outcome, answer, failed_effect)
        }
        (Some(VerifierReply::Answer(_)), code) => tier_event(
            check,
            outcome,
            CheckStatus::Crashed,
            unfinished(profile),
            3,
            format!("the verifier answered \"pass\" but exited {code}"),
            OwnCode::VerifierMalformed,
        ),
        (Some(VerifierReply::Malformed(why)), 0) => tier_event(
            check,
            outcome,
            CheckStatus::Crashed,
            unfinished(profile),
            3,
            format!("the verifier's answer could not be parsed: {why}"),
            OwnCode::VerifierMalformed,
        ),
        (_, code) => tier_event(
            check,
            outcome,
            CheckStatus::Crashed,
            unfinished(profile),
            2,
            format!("the verifier failed (exit {code}) without an answer"),
            OwnCode::VerifierError,
        ),
    }
}

fn tier_event(
    check: &CheckInput,
    outcome: &CheckOutcome,
    status: CheckStatus,
    effect: Effect,
    tier: u8,
    reason: String,
    code: OwnCode,
) -> Judged {
    let mut diagnostics = outcome.diagnostics.clone();
    let mut diagnostic =
        tail_diagnostic(check, outcome, &format!("check `{}` {reason}", check.name));
    diagnostic.code = Some(code.to_string());
    if effect != Effect::Incomplete {
        diagnostic.severity = Severity::Warning;
    }
    diagnostics.push(diagnostic);
    Judged {
        status,
        effect,
        tier: Some(tier),
        reason: Some(reason),
        diagnostics,
    }
}

/// A diagnostic located at the check's definition in `phasegate.toml`.
fn located(
    check: &CheckInput,
    severity: Severity,
    code: Option<&str>,
    message: String,
) -> Diagnostic {
    Diagnostic {
        check: check.name.clone(),
        origin: check.origin,
        tool: "phasegate".to_string(),
        file: check.location.as_ref().map(|l| l.file.clone()),
        line: check.location.as_ref().map(|l| l.line),
        column: check.location.as_ref().map(|l| l.column),
        severity,
        code: code.map(str::to_string),
        message,
        ..Diagnostic::default()
    }
}

/// The diagnostic for a failure nothing could parse: the headline and the
/// last lines of output.
fn tail_diagnostic(check: &CheckInput, outcome: &CheckOutcome, headline: &str) -> Diagnostic {
    let tail = outcome.output.tail_lines(TAIL_LINES);
    // The first line stands alone in summaries, so it carries the last
    // line of output, which is usually the error.
    let message = match telling_line(&tail) {
        None => format!("{headline}; it printed nothing"),
        Some(last) => format!(
            "{headline}: {last}\n{OUTPUT_TAIL_HEADING}\n{}",
            tail.join("\n")
        ),
    };
    located(
        check,
        Severity::Error,
        Some(OwnCode::CheckFailed.as_str()),
        message,
    )
}

/// The last line of `tail` that says something of the failure: blank
/// lines, and the lines package managers end every failure with to point
/// at their own log or manual (npm's "A complete log of this run can be
/// found in: PATH", yarn's "info Visit ... for documentation"), are passed
/// over; the last line when there is nothing else.
fn telling_line(tail: &[String]) -> Option<&String> {
    let trailer = |line: &str| {
        let line = line.trim();
        line.is_empty()
            || line.contains("A complete log of this run can be found in")
            || (line.starts_with("npm ERR!") && line.ends_with("-debug-0.log"))
            || (line.starts_with("info Visit https://yarnpkg.com")
                && line.ends_with("for documentation about this command."))
    };
    tail.iter()
        .rev()
        .find(|line| !trailer(line))
        .or_else(|| tail.last())
}

/// The batches of a check the verdict shows, and the words of each: a
/// `{files}` check over 100,000 files would make the verdict megabytes of
/// file names an agent has to read past. The invocation record keeps them.
const MAX_SHOWN_BATCHES: usize = 10;
const MAX_SHOWN_ARGS: usize = 100;

/// `argv` as the verdict shows it (see `MAX_SHOWN_BATCHES`).
fn shown(mut argv: Vec<Vec<String>>) -> Vec<Vec<String>> {
    argv.truncate(MAX_SHOWN_BATCHES);
    for batch in &mut argv {
        batch.truncate(MAX_SHOWN_ARGS);
    }
    argv
}

/// How many words of `argv` the verdict leaves out (see `shown`).
fn omitted(argv: &[Vec<String>]) -> usize {
    argv.iter()
        .enumerate()
        .map(|(n, batch)| {
            if n < MAX_SHOWN_BATCHES {
                batch.len().saturating_sub(MAX_SHOWN_ARGS)
            } else {
                batch.len()
            }
        })
        .sum()
}

fn check_result(check: &CheckInput, judged: &Judged, root: &Path) -> CheckResult {
    let (exit_code, signal, duration_ms, log, argv, dropped, tail) = match &check.run {
        CheckRun::NotRun(_) => (None, None, 0, None, Vec::new(), 0, Vec::new()),
        CheckRun::Ran(outcome) => {
            let (exit_code, signal) = match outcome.termination {
                Termination::Exited(code) => (Some(code), None),
                Termination::Signaled(signal) => (None, Some(signal)),
                _ => (None, None),
            };
            // A program not found is not started, unless it was a shell
            // that then said what it could not find.
            let ran = !matches!(outcome.termination, Termination::Missing { .. })
                || outcome.output.total_bytes > 0;
            let log = ran.then(|| display_path(&outcome.log_path, root));
            let tail = if judged.status == CheckStatus::Passed || !ran {
                Vec::new()
            } else {
                outcome.output.tail_lines(TAIL_LINES)
            };
            (
                exit_code,
                signal,
                u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
                log,
                outcome
                    .invocations
                    .iter()
                    .map(crate::runner::Invocation::display)
                    .collect::<Vec<_>>(),
                outcome.dropped_diagnostics,
                tail,
            )
        }
    };
    CheckResult {
        name: check.name.clone(),
        kind: check.kind,
        status: judged.status,
        on_failure: check.on_failure,
        effect: judged.effect,
        tier: judged.tier,
        exit_code,
        signal,
        duration_ms,
        diagnostics: judged.diagnostics.len(),
        dropped_diagnostics: dropped,
        filter: check.filter,
        pre_existing: judged.diagnostics.iter().filter(|d| d.pre_existing).count(),
        log,
        reason: judged.reason.clone(),
        skip_kind: match &check.run {
            CheckRun::NotRun(reason) => Some(*reason),
            CheckRun::Ran(_) => None,
        },
        argv_omitted: omitted(&argv),
        argv: shown(argv),
        output_tail: tail,
    }
}

/// `path` relative to `root` when it is inside it, else as it is.
fn display_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The summary: errors of checks that block first, then of checks that
/// stop verification, then of the others; passing checks left out. Public
/// for a warning found after the decision, which is summed up again.
pub fn summarize(diagnostics: &[Diagnostic], checks: &[CheckResult], limit: usize) -> Vec<String> {
    let rank = |d: &Diagnostic| {
        if d.check.is_empty() {
            // phasegate's own findings (files modified by the checks).
            return Some(0);
        }
        let rank = checks
            .iter()
            .find(|c| c.name == d.check)
            .map_or(4, |c| match c.effect {
                Effect::Block => 0,
                Effect::Incomplete => 1,
                Effect::Warn | Effect::FailOpen => 2,
                Effect::None => 3,
            });
        (rank < 3).then_some(rank)
    };
    let not_kept = |name: &str| {
        checks
            .iter()
            .find(|c| c.name == name)
            .map_or(0, |c| c.dropped_diagnostics)
    };
    crate::diagnostics::summarize_counted(diagnostics, rank, not_kept, limit)
}

/// `1.2s`, `450ms`, `2m03s`, `10m`.
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        let (m, s) = (secs / 60, secs % 60);
        if s == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{s:02}s")
        }
    }
}

/// `SIGSEGV (11)` for the common signals, the number otherwise.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return signal.to_string(),
    };
    format!("{name} ({signal})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::ExitCode;
    use crate::runner::CapturedOutput;

    const PROFILES: [Profile; 3] = [Profile::Strict, Profile::Auto, Profile::Fast];
    const ON_FAILURE: [OnFailure; 2] = [OnFailure::Block, OnFailure::Warn];
    const ON_MISSING: [OnMissing; 3] = [OnMissing::Block, OnMissing::Warn, OnMissing::Skip];

    fn outcome(termination: Termination, verifier: Option<VerifierReply>) -> CheckOutcome {
        CheckOutcome {
            name: "c".to_string(),
            termination,
            duration: Duration::from_millis(5),
            output: CapturedOutput {
                head: b"some output\n".to_vec(),
                tail: Vec::new(),
                total_bytes: 12,
            },
            log_path: "/repo/.git/phasegate/runs/r/c.log".into(),
            diagnostics: Vec::new(),
            dropped_diagnostics: 0,
            parser_used: None,
            errors_fail: false,
            verifier,
            failed_batch: None,
            invocations: Vec::new(),
            batches: Vec::new(),
        }
    }

    fn input(profile: Profile, check: CheckInput) -> GateInput {
        GateInput {
            phase: "implementation".to_string(),
            profile,
            workflow: None,
            run_id: None,
            checks: vec![check],
            notes: Vec::new(),
            environment: Vec::new(),
            root: "/repo".into(),
            summary_limit: 5,
            selection: None,
            blocking: Vec::new(),
            interrupted: false,
            handoffs: Vec::new(),
        }
    }

    fn check(
        kind: CheckKind,
        on_failure: OnFailure,
        on_missing: OnMissing,
        run: CheckRun,
    ) -> CheckInput {
        CheckInput {
            filter: crate::config::Filter::Nofilter,
            name: "c".to_string(),
            kind,
            origin: Origin::Test,
            on_failure,
            on_missing,
            location: Some(ConfigLocation {
                file: "phasegate.toml".to_string(),
                line: 4,
                column: 12,
            }),
            command_location: None,
            run,
        }
    }

    fn answer(pass: bool) -> VerifierReply {
        VerifierReply::Answer(VerifierAnswer {
            pass,
            findings: Vec::new(),
            unread: None,
        })
    }

    /// Every way a check can end, with whether it is a plain failure and
    /// which tier it is otherwise.
    fn endings() -> Vec<(CheckKind, Termination, Option<VerifierReply>, &'static str)> {
        vec![
            (CheckKind::Code, Termination::Exited(0), None, "pass"),
            (CheckKind::Code, Termination::Exited(1), None, "fail"),
            (CheckKind::Code, Termination::Exited(101), None, "fail"),
            (
                CheckKind::Code,
                Termination::Missing {
                    program: "x".into(),
                    unused_venv: None,
                },
                None,
                "tier1",
            ),
            (
                CheckKind::Code,
                Termination::TimedOut(Duration::from_secs(1)),
                None,
                "tier2",
            ),
            (CheckKind::Code, Termination::Signaled(11), None, "tier2"),
            (
                CheckKind::Code,
                Termination::SpawnFailed("no".into()),
                None,
                "tier2",
            ),
            (
                CheckKind::Code,
                Termination::Interrupted,
                None,
                "interrupted",
            ),
            (
                CheckKind::Verifier,
                Termination::Exited(0),
                Some(answer(true)),
                "pass",
            ),
            (
                CheckKind::Verifier,
                Termination::Exited(0),
                Some(answer(false)),
                "fail",
            ),
            (
                CheckKind::Verifier,
                Termination::Exited(1),
                Some(answer(false)),
                "fail",
            ),
            (
                CheckKind::Verifier,
                Termination::Exited(1),
                Some(answer(true)),
                "tier3",
            ),
            (
                CheckKind::Verifier,
                Termination::Exited(0),
                Some(VerifierReply::Malformed("not JSON".into())),
                "tier3",
            ),
            (
                CheckKind::Verifier,
                Termination::Exited(2),
                Some(VerifierReply::Malformed("empty".into())),
                "tier2",
            ),
        ]
    }

    /// The whole policy table, every combination: the exit code each must
    /// map to, straight from the profiles-and-tiers table of the design.
    #[test]
    fn every_combination_follows_the_tier_table() {
        for profile in PROFILES {
            for on_failure in ON_FAILURE {
                for on_missing in ON_MISSING {
                    for (kind, termination, reply, class) in endings() {
                        let run =
                            CheckRun::Ran(Box::new(outcome(termination.clone(), reply.clone())));
                        let verdict =
                            decide(input(profile, check(kind, on_failure, on_missing, run)));
                        let warn_only = on_failure == OnFailure::Warn && profile != Profile::Strict;
                        let expected = match class {
                            "pass" => ExitCode::Proceed,
                            "fail" if warn_only => ExitCode::Proceed,
                            "fail" => ExitCode::Failed,
                            "tier1" => match (profile, on_missing) {
                                (Profile::Strict, _) | (Profile::Auto, OnMissing::Block) => {
                                    ExitCode::Incomplete
                                }
                                _ => ExitCode::Proceed,
                            },
                            "tier2" | "tier3" if profile == Profile::Fast => ExitCode::Proceed,
                            "tier2" | "tier3" | "interrupted" => ExitCode::Incomplete,
                            other => unreachable!("{other}"),
                        };
                        let context = format!("{profile:?} {on_failure:?} {on_missing:?} {kind:?} {termination:?} {reply:?}");
                        assert_eq!(verdict.exit_code(), expected, "{context}");
                        // Whatever the ending, something explains a check that did not pass.
                        if class != "pass" && verdict.checks[0].effect != Effect::None {
                            assert!(!verdict.diagnostics.is_empty(), "{context}");
                            assert!(!verdict.summary.is_empty(), "{context}");
                        }
                        // Fail-open is always visible.
                        if verdict.fail_open {
                            assert_eq!(profile, Profile::Fast, "{context}");
                            assert!(!verdict.notes.is_empty(), "{context}");
                        }
                    }
                }
            }
        }
    }

    fn finding(severity: Severity) -> Diagnostic {
        Diagnostic {
            check: "c".into(),
            origin: Origin::Runtime,
            tool: "verifier".into(),
            file: Some("a.md".into()),
            line: Some(3),
            severity,
            message: "criterion 2 is not met".into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn a_pass_that_names_an_error_is_a_fail_under_every_profile() {
        let reply = VerifierReply::Answer(VerifierAnswer {
            pass: true,
            findings: vec![finding(Severity::Error)],
            unread: None,
        });
        for profile in PROFILES {
            for on_failure in ON_FAILURE {
                for code in [0, 1] {
                    let run = CheckRun::Ran(Box::new(outcome(
                        Termination::Exited(code),
                        Some(reply.clone()),
                    )));
                    let v = decide(input(
                        profile,
                        check(CheckKind::Verifier, on_failure, OnMissing::Block, run),
                    ));
                    let context = format!("{profile:?} {on_failure:?} exit {code}");
                    let expected = if on_failure == OnFailure::Warn && profile != Profile::Strict {
                        ExitCode::Proceed
                    } else {
                        ExitCode::Failed
                    };
                    assert_eq!(v.exit_code(), expected, "{context}");
                    assert!(!v.fail_open, "{context}");
                    assert_eq!(v.checks[0].tier, None, "{context}");
                    // The reviewer's error stays what it said, where it
                    // said it, and phasegate says why the pass was not one.
                    assert_eq!(v.diagnostics[0], finding(Severity::Error), "{context}");
                    assert!(
                        v.diagnostics[1]
                            .message
                            .contains("answered \"pass\" but named 1 error"),
                        "{context}: {:?}",
                        v.diagnostics
                    );
                }
            }
        }
        // Findings below an error do not contradict a pass.
        let reply = VerifierReply::Answer(VerifierAnswer {
            pass: true,
            findings: vec![finding(Severity::Warning), finding(Severity::Note)],
            unread: None,
        });
        let run = CheckRun::Ran(Box::new(outcome(Termination::Exited(0), Some(reply))));
        let v = decide(input(
            Profile::Strict,
            check(CheckKind::Verifier, OnFailure::Block, OnMissing::Block, run),
        ));
        assert_eq!(v.status, Status::Passed);
    }

    #[test]
    fn a_fail_answered_before_a_timeout_or_a_kill_is_not_let_through() {
        let reply = VerifierReply::Answer(VerifierAnswer {
            pass: false,
            findings: vec![finding(Severity::Error)],
            unread: None,
        });
        for termination in [
            Termination::TimedOut(Duration::from_secs(1)),
            Termination::Signaled(9),
        ] {
            for profile in PROFILES {
                for on_failure in ON_FAILURE {
                    let run =
                        CheckRun::Ran(Box::new(outcome(termination.clone(), Some(reply.clone()))));
                    let v = decide(input(
                        profile,
                        check(CheckKind::Verifier, on_failure, OnMissing::Block, run),
                    ));
                    let context = format!("{termination:?} {profile:?} {on_failure:?}");
                    // The heavier of the fail and of the unfinished run.
                    let expected = match (profile, on_failure) {
                        (Profile::Strict, _) | (_, OnFailure::Block | OnFailure::Skip) => {
                            ExitCode::Failed
                        }
                        (Profile::Auto, OnFailure::Warn) => ExitCode::Incomplete,
                        (Profile::Fast, OnFailure::Warn) => ExitCode::Proceed,
                    };
                    assert_eq!(v.exit_code(), expected, "{context}");
                    // Both are told: the reviewer's finding, and what
                    // stopped it.
                    assert!(
                        v.diagnostics.contains(&finding(Severity::Error)),
                        "{context}"
                    );
                    let stopped = if matches!(termination, Termination::TimedOut(_)) {
                        "timed out"
                    } else {
                        "SIGKILL"
                    };
                    assert!(
                        v.checks[0].reason.as_deref().is_some_and(|r| r.contains(stopped)
                            && r.contains("answered \"fail\"")),
                        "{context}: {:?}",
                        v.checks[0].reason
                    );
                }
            }
            // A pass, or an answer cut short, is no answer the timeout
            // leaves standing: verification did not finish.
            for reply in [answer(true), VerifierReply::Malformed("cut".into())] {
                let run = CheckRun::Ran(Box::new(outcome(termination.clone(), Some(reply))));
                let v = decide(input(
                    Profile::Fast,
                    check(CheckKind::Verifier, OnFailure::Block, OnMissing::Block, run),
                ));
                assert!(v.fail_open, "{termination:?}");
                assert_eq!(v.checks[0].tier, Some(2));
            }
        }
    }

    #[test]
    fn a_failure_is_told_by_its_last_line_that_is_not_a_package_manager_s_trailer() {
        let lines = |text: &str| text.lines().map(str::to_string).collect::<Vec<_>>();
        // npm 10, npm 6 and yarn 1 end every failed script with these.
        for (tail, told) in [
            (
                "npm error code EJSONPARSE\nnpm error JSON.parse Failed to parse JSON data.\nnpm error A complete log of this run can be found in: /root/.npm/_logs/2026-debug-0.log\n",
                "npm error JSON.parse Failed to parse JSON data.",
            ),
            (
                "npm ERR! Test failed.  See above for more details.\n\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/2026-debug-0.log\n",
                "npm ERR! Test failed.  See above for more details.",
            ),
            (
                "error Command failed with exit code 1.\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.\n",
                "error Command failed with exit code 1.",
            ),
            ("error: test failed, to rerun pass `--lib`\n", "error: test failed, to rerun pass `--lib`"),
            ("\n\n", ""),
        ] {
            assert_eq!(
                telling_line(&lines(tail)).map(String::as_str),
                Some(told),
                "{tail:?}"
            );
        }
        assert_eq!(telling_line(&[]), None);
    }

    /// The message of the finding for a check whose `argv` reported
    /// `program` missing, under `profile`.
    fn missing_message(profile: Profile, argv: &[&str], program: &str) -> String {
        let mut ran = outcome(
            Termination::Missing {
                program: program.into(),
                unused_venv: None,
            },
            None,
        );
        ran.invocations = vec![crate::runner::Invocation::new(argv.iter().copied())];
        let run = CheckRun::Ran(Box::new(ran));
        let v = decide(input(
            profile,
            check(CheckKind::Code, OnFailure::Block, OnMissing::Block, run),
        ));
        v.diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_program_a_package_manager_could_not_find_is_a_dependency_to_install() {
        for (argv, program, told) in [
            (
                &["npm", "run", "lint"][..],
                "eslint",
                "install the project's dependencies (`npm install`), or add it to them",
            ),
            (
                &["npx", "--no-install", "tsc"][..],
                "tsc",
                "(`npm install`), or add `typescript` to them",
            ),
            (&["/usr/bin/pnpm", "test"][..], "vitest", "(`pnpm install`)"),
            (
                &["bun", "run", "lint"][..],
                "eslint",
                "(`bun install`), or add it",
            ),
            (
                &["bunx", "--no-install", "tsc", "--noEmit"][..],
                "tsc",
                "(`bun install`), or add `typescript` to them",
            ),
            (&["make"][..], "make", "install it, or set"),
        ] {
            let message = missing_message(Profile::Auto, argv, program);
            assert!(message.contains(told), "{argv:?}: {message:?}");
        }
    }

    #[test]
    fn a_missing_program_of_a_package_named_otherwise_names_the_package() {
        for (program, told) in [
            ("tsc", "install `typescript`"),
            ("make", "install it"),
            (
                "pytest",
                "install `pytest` in the project's virtual environment, which checks run in without activating it (`.venv/bin/pip install pytest`",
            ),
            ("bunx", "install bun, which brings `bunx` with it"),
        ] {
            for profile in PROFILES {
                let message = missing_message(profile, &[program], program);
                assert!(message.contains(told), "{program} {profile:?}: {message:?}");
            }
        }
    }

    #[test]
    fn a_fail_beside_a_batch_that_cannot_be_read_is_the_heavier_of_the_two() {
        let reply = VerifierReply::Answer(VerifierAnswer {
            pass: false,
            findings: vec![finding(Severity::Error)],
            unread: Some("it printed nothing (batch 2 of 2)".into()),
        });
        for termination in [
            Termination::Exited(0),
            Termination::Exited(1),
            Termination::TimedOut(Duration::from_secs(1)),
            Termination::Signaled(9),
            Termination::Missing {
                program: "x".into(),
                unused_venv: None,
            },
        ] {
            for profile in PROFILES {
                for on_failure in ON_FAILURE {
                    for on_missing in ON_MISSING {
                        let run = CheckRun::Ran(Box::new(outcome(
                            termination.clone(),
                            Some(reply.clone()),
                        )));
                        let v = decide(input(
                            profile,
                            check(CheckKind::Verifier, on_failure, on_missing, run),
                        ));
                        let context =
                            format!("{termination:?} {profile:?} {on_failure:?} {on_missing:?}");
                        let expected = match (profile, on_failure) {
                            (Profile::Strict, _) | (_, OnFailure::Block | OnFailure::Skip) => {
                                ExitCode::Failed
                            }
                            // The fail warns, but the batch that cannot
                            // be read leaves the review unfinished.
                            (Profile::Auto, OnFailure::Warn) => ExitCode::Incomplete,
                            (Profile::Fast, OnFailure::Warn) => ExitCode::Proceed,
                        };
                        assert_eq!(v.exit_code(), expected, "{context}");
                        assert!(
                            v.diagnostics.contains(&finding(Severity::Error)),
                            "{context}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_batch_that_failed_before_a_later_one_stopped_is_not_let_through() {
        for termination in [
            Termination::TimedOut(Duration::from_secs(1)),
            Termination::Signaled(11),
            Termination::SpawnFailed("no".into()),
        ] {
            for profile in PROFILES {
                for on_failure in ON_FAILURE {
                    let mut ran = outcome(termination.clone(), None);
                    ran.failed_batch = Some(2);
                    let v = decide(input(
                        profile,
                        check(
                            CheckKind::Code,
                            on_failure,
                            OnMissing::Block,
                            CheckRun::Ran(Box::new(ran)),
                        ),
                    ));
                    let context = format!("{termination:?} {profile:?} {on_failure:?}");
                    let expected = match (profile, on_failure) {
                        (Profile::Strict, _) | (_, OnFailure::Block | OnFailure::Skip) => {
                            ExitCode::Failed
                        }
                        (Profile::Auto, OnFailure::Warn) => ExitCode::Incomplete,
                        (Profile::Fast, OnFailure::Warn) => ExitCode::Proceed,
                    };
                    assert_eq!(v.exit_code(), expected, "{context}");
                    assert!(
                        v.checks[0]
                            .reason
                            .as_deref()
                            .is_some_and(|r| r.contains("a batch of files failed (exit 2)")),
                        "{context}: {:?}",
                        v.checks[0].reason
                    );
                }
            }
        }
    }

    #[test]
    fn an_interrupted_run_never_proceeds_even_when_every_check_passed() {
        for profile in PROFILES {
            let passing = check(
                CheckKind::Code,
                OnFailure::Block,
                OnMissing::Block,
                CheckRun::Ran(Box::new(outcome(Termination::Exited(0), None))),
            );
            let mut gate = input(profile, passing);
            gate.interrupted = true;
            let verdict = decide(gate);
            assert_eq!(verdict.exit_code(), ExitCode::Incomplete, "{profile:?}");
            assert_eq!(verdict.next, Next::Resume);
            assert!(!verdict.fail_open);
            assert!(verdict.notes.iter().any(|n| n.contains("interrupted")));
            // A failure found before the interrupt is still the answer.
            let failing = check(
                CheckKind::Code,
                OnFailure::Block,
                OnMissing::Block,
                CheckRun::Ran(Box::new(outcome(Termination::Exited(1), None))),
            );
            let mut gate = input(profile, failing);
            gate.interrupted = true;
            assert_eq!(decide(gate).exit_code(), ExitCode::Failed, "{profile:?}");
        }
    }

    #[test]
    fn a_failed_blocking_check_never_proceeds_among_others() {
        for profile in PROFILES {
            let failing = check(
                CheckKind::Code,
                OnFailure::Block,
                OnMissing::Block,
                CheckRun::Ran(Box::new(outcome(Termination::Exited(1), None))),
            );
            for (kind, termination, reply, _) in endings() {
                let other = check(
                    kind,
                    OnFailure::Warn,
                    OnMissing::Skip,
                    CheckRun::Ran(Box::new(outcome(termination, reply))),
                );
                let mut gate = input(profile, failing.clone());
                gate.checks.push(CheckInput {
                    filter: crate::config::Filter::Nofilter,
                    name: "other".to_string(),
                    ..other
                });
                let verdict = decide(gate);
                assert_eq!(verdict.exit_code(), ExitCode::Failed, "{profile:?}");
                assert_eq!(verdict.next, Next::Fix);
            }
        }
    }

    #[test]
    fn skipped_checks_and_empty_phases_pass_with_a_note() {
        let skipped = check(
            CheckKind::Code,
            OnFailure::Skip,
            OnMissing::Block,
            CheckRun::NotRun(SkipReason::Disabled),
        );
        let verdict = decide(input(Profile::Strict, skipped));
        assert_eq!(verdict.status, Status::Passed);
        assert_eq!(verdict.checks[0].status, CheckStatus::Skipped);
        assert!(verdict.notes.iter().any(|n| n.contains("no check ran")));
    }

    #[test]
    fn a_check_phasegate_skip_skipped_warns_and_is_named_under_every_profile() {
        for profile in PROFILES {
            let skipped = check(
                CheckKind::Code,
                OnFailure::Block,
                OnMissing::Block,
                CheckRun::NotRun(SkipReason::SkippedByEnv),
            );
            let verdict = decide(input(profile, skipped));
            assert_eq!(verdict.checks[0].status, CheckStatus::Skipped);
            assert!(
                verdict.notes.iter().any(|n| n.starts_with(
                    "no check ran in phase `implementation`: PHASEGATE_SKIP skipped `c`, so nothing was verified"
                )),
                "{:?}",
                verdict.notes
            );
            if profile == Profile::Strict {
                // `strict` turns the warning into a block: nothing
                // unverified goes through, and the note says what to do.
                assert_eq!(verdict.exit_code(), ExitCode::Incomplete);
                assert_eq!(verdict.status, Status::Incomplete);
                assert_eq!(verdict.next, Next::Resume);
                assert!(
                    verdict
                        .notes
                        .iter()
                        .any(|n| n.contains("unset PHASEGATE_SKIP")),
                    "{:?}",
                    verdict.notes
                );
            } else {
                // The escape hatch lets the commit through, and says so.
                assert_eq!(verdict.exit_code(), ExitCode::Proceed, "{profile:?}");
                assert_eq!(verdict.status, Status::Warned, "{profile:?}");
            }
        }
    }

    #[test]
    fn the_summary_puts_errors_of_blocking_checks_first() {
        let mut lint = outcome(Termination::Exited(1), None);
        lint.diagnostics = vec![
            Diagnostic {
                check: "lint".into(),
                origin: Origin::Lint,
                tool: "x".into(),
                file: Some("a.rs".into()),
                line: Some(3),
                column: None,
                severity: Severity::Warning,
                code: Some("W1".into()),
                message: "style".into(),
                ..Diagnostic::default()
            },
            Diagnostic {
                check: "lint".into(),
                origin: Origin::Lint,
                tool: "x".into(),
                file: Some("b.rs".into()),
                line: Some(9),
                column: Some(2),
                severity: Severity::Error,
                code: Some("E1".into()),
                message: "broken\nsecond line".into(),
                ..Diagnostic::default()
            },
        ];
        let mut gate = input(
            Profile::Auto,
            CheckInput {
                filter: crate::config::Filter::Nofilter,
                name: "lint".into(),
                ..check(
                    CheckKind::Code,
                    OnFailure::Block,
                    OnMissing::Block,
                    CheckRun::Ran(Box::new(lint)),
                )
            },
        );
        gate.summary_limit = 1;
        let verdict = decide(gate);
        assert_eq!(verdict.summary, ["b.rs:9 E1 broken (lint)"]);
    }

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(format_duration(Duration::from_millis(450)), "450ms");
        assert_eq!(format_duration(Duration::from_millis(1234)), "1.2s");
        assert_eq!(format_duration(Duration::from_secs(600)), "10m");
        assert_eq!(format_duration(Duration::from_secs(123)), "2m03s");
    }
}
