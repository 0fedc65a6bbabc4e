//! The retry feedback an agent reads before it tries again: one "Validation
//! Failed" section per failed checkpoint, contradicted claim or defect,
//! with what to fix, and the attempt it is on. Data here; `report` renders
//! it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::last_run::LastRun;
use super::validate::{HandoffReport, Rules};
use crate::gate::SkipReason;

/// One thing to fix.
#[derive(Debug, Clone, Serialize)]
pub struct FeedbackItem {
    /// `checkpoint` (one that does not pass), `claim` (one that says pass
    /// where the last run's check failed), `unverified` (one that says
    /// pass where the last run's check verified nothing) or `defect`.
    pub kind: &'static str,
    /// The checkpoint or field.
    pub name: String,
    /// A checkpoint's status; `contradicted` for a claim, `unverified` for
    /// a claim nothing confirmed, `invalid` for a defect.
    pub status: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// The check that verifies the checkpoint, when the last run failed
    /// it, or, for an `unverified` claim, the check that did not verify it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// That check's first errors in the last run, `file:line: message`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// That check's full output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    pub fix: String,
    pub line: usize,
}

/// Everything an agent needs before its next attempt.
#[derive(Debug, Clone, Serialize)]
pub struct Feedback {
    pub path: String,
    pub id: Option<String>,
    pub stage: Option<String>,
    pub valid: bool,
    pub escalate: bool,
    /// The attempt the next try will be (`retry_count` + 1); `None` when
    /// the document's `retry_count` cannot be read (broken YAML, a quoted
    /// or negative number): guessing 1 would tell a document whose budget
    /// may be spent to try again.
    pub attempt: Option<i64>,
    pub max_retries: u32,
    /// What a blocked document waits for (reason, details): a person, not
    /// another attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<Blocked>,
    /// The run whose results the feedback holds the claims against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<RunSeen>,
    /// When no run of the document's phase is recorded: its claims were
    /// held against no check, whatever runs of other phases found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_run_of_phase: Option<NoRunOfPhase>,
    /// Why the last run needs a person whatever the document says (the
    /// same errors repeated run after run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person_needed: Option<String>,
    pub items: Vec<FeedbackItem>,
    /// How many more things to fix there are than `items` shows (see
    /// `MAX_ITEMS`).
    #[serde(skip_serializing_if = "crate::gate::is_zero")]
    pub omitted: usize,
}

/// How many things to fix the feedback shows at most. An agent reads all
/// of it before each attempt, and a document with thousands of defects (a
/// checkpoint list pasted over and over) would bury the few that matter
/// under pages of the same one; `phasegate handoff validate` lists them
/// all.
pub const MAX_ITEMS: usize = 20;

/// `items` cut to `MAX_ITEMS`, and how many were left out. The checkpoints
/// and claims stay (a document has a few of each); of the defects, the
/// first of each field comes before a second of any, so a repeated mistake
/// does not hide a different one further down. What is kept stays in its
/// order.
fn capped(items: Vec<FeedbackItem>) -> (Vec<FeedbackItem>, usize) {
    if items.len() <= MAX_ITEMS {
        return (items, 0);
    }
    let mut seen = std::collections::HashSet::new();
    let mut ranked: Vec<(usize, usize)> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let rank = match item.kind {
                "defect" if seen.insert(item.name.as_str()) => 1,
                "defect" => 2,
                _ => 0,
            };
            (rank, index)
        })
        .collect();
    ranked.sort_unstable();
    let mut keep = vec![false; items.len()];
    for &(_, index) in ranked.iter().take(MAX_ITEMS) {
        keep[index] = true;
    }
    let omitted = items.len() - MAX_ITEMS;
    let kept = items
        .into_iter()
        .zip(keep)
        .filter_map(|(item, keep)| keep.then_some(item))
        .collect();
    (kept, omitted)
}

/// A document that says it is blocked: what it gives of its reason and
/// details (one it lacks is a defect among the items).
#[derive(Debug, Clone, Serialize)]
pub struct Blocked {
    pub reason: Option<String>,
    pub details: Option<String>,
}

/// No run of a document's phase to hold its claims against.
#[derive(Debug, Clone, Serialize)]
pub struct NoRunOfPhase {
    /// The document's stage, the phase a run must have checked.
    pub phase: String,
    /// The configuration has no such phase: a run of it is a usage error,
    /// and the advice is to add it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_configured: bool,
    /// The newest run there is, which checked another phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_run: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_phase: Option<String>,
}

/// The run the feedback drew on.
#[derive(Debug, Clone, Serialize)]
pub struct RunSeen {
    pub run_id: String,
    pub status: String,
    /// The checks it ran that failed.
    pub failed_checks: Vec<String>,
}

/// What to do about a checkpoint that does not pass. A checkpoint a check
/// verifies (`claims`, which `[handoff.claims]` may point at a check of the
/// project's own name) is told to run that check: a name the phase does
/// not have would send the agent to a usage error.
fn fix_for(checkpoint: &str, claims: &BTreeMap<String, String>) -> String {
    match (checkpoint, claims.get(checkpoint)) {
        ("tests_passing", Some(check)) => format!("run the tests (`phasegate run --check {check}`), fix every failure, then set `tests_passing` to pass"),
        ("no_lint_errors", Some(check)) => format!("run the linter (`phasegate run --check {check}`), fix every finding, then set `no_lint_errors` to pass"),
        (name, Some(check)) => format!("run check `{check}` (`phasegate run --check {check}`), fix what it reports, then set `{name}` to pass"),
        ("tests_written", None) => "write tests for the change, then set `tests_written` to pass".to_string(),
        (name, None) => format!("finish `{name}` and set its status to pass; a skip does not count"),
    }
}

/// What to do about a claim the last run's `check` contradicts: fix the
/// code until the check passes, and until then let the checkpoint say what
/// is true. Editing the claim alone is no fix: the next run fails the same
/// way.
fn fix_for_claim(
    checkpoint: &str,
    check: &str,
    errors: &[String],
    log: Option<&str>,
    required: bool,
) -> String {
    let start = match (errors.first(), log) {
        // The errors are listed with the item: said again here, the first
        // would be read twice.
        (Some(_), _) => ", starting with the first error it reported".to_string(),
        (None, Some(log)) => format!(" (its output is in `{log}`)"),
        (None, None) => String::new(),
    };
    let ready = if required {
        " and `handoff_ready` to false"
    } else {
        ""
    };
    format!(
        "fix the code, not the claim: make check `{check}` pass{start}; run `phasegate run --check {check}` until it passes, and until then set `{checkpoint}` to fail{ready}"
    )
}

/// What to do about a claim the last run's `check` verified nothing of
/// (`why`, as `LastRun::unverified` says): make the check run, in the way
/// its `skip` (the kind the verdict recorded, when it was skipped) calls
/// for; any other reason gets the general advice, which is still right.
fn fix_for_unverified(
    checkpoint: &str,
    check: &str,
    why: &str,
    skip: Option<SkipReason>,
    in_run: bool,
    phase: &str,
) -> String {
    let run = format!("`phasegate run --check {check}`");
    let how = match skip {
        _ if !in_run && why == super::last_run::NOT_ASKED => {
            format!("run it: {run} (or `phasegate run` for every check)")
        }
        _ if !in_run => format!(
            "add a check `{check}` to phase `{phase}` in `phasegate.toml`, or remove the claim from `[handoff.claims]` if nothing is to verify it"
        ),
        Some(SkipReason::NoMatchingFiles | SkipReason::NoFiles) => format!(
            "it runs only when a selected file matches its `files`: select them (`phasegate run --all-files --check {check}`)"
        ),
        Some(SkipReason::SkippedByEnv) => {
            format!("run it without `PHASEGATE_SKIP` naming it: {run}")
        }
        Some(SkipReason::Disabled) => format!(
            "it is switched off (`on_failure = \"skip\"` in `phasegate.toml`): set its `on_failure` to `block` or `warn`, then {run}"
        ),
        None => format!("fix what kept it from verifying anything ({why}), then {run}"),
    };
    format!(
        "make check `{check}` run and pass before handing off: {how}. Until it has, `{checkpoint}` is a claim nothing confirmed"
    )
}

/// Builds the feedback for a validated document. `rules.claims` maps each
/// checkpoint to the check that verifies it; `last_run` is the newest run
/// of the document's phase, the evidence the claims are held against (the
/// caller validated the document with its failed checks, and
/// `rules.unverified` holds the checks it verified nothing of), and `newest`
/// the newest run of any phase, named when none of the document's phase
/// is recorded.
pub fn feedback(
    report: &HandoffReport,
    rules: &Rules,
    last_run: Option<&LastRun>,
    newest: Option<&LastRun>,
) -> Feedback {
    let claims = &rules.claims;
    // The last run's result for the check a checkpoint claims, when that
    // check failed.
    let failed_check = |name: &str| {
        let check = claims.get(name)?;
        last_run?.check(check).filter(|c| c.failed())
    };
    let mut items = Vec::new();
    for name in &report.required {
        let stated = report.checkpoints.iter().find(|c| &c.name == name);
        match stated {
            Some(c) if c.status == "pass" => {}
            Some(c) => {
                // A checkpoint that says fail is told what its check
                // reported last, so the agent starts where the run stopped.
                let evidence = failed_check(name).filter(|_| c.status == "fail");
                items.push(FeedbackItem {
                    kind: "checkpoint",
                    name: name.clone(),
                    status: c.status.clone(),
                    reason: c
                        .message
                        .clone()
                        .unwrap_or_else(|| format!("`{name}` is {}", c.status)),
                    details: report.last_failure.clone().filter(|_| c.status == "fail"),
                    check: evidence.map(|e| e.name.clone()),
                    errors: evidence.map(|e| e.errors.clone()).unwrap_or_default(),
                    log: evidence.and_then(|e| e.log.clone()),
                    fix: fix_for(name, claims),
                    line: c.line,
                });
            }
            None => {}
        }
    }
    // A claim the last run could not check: the run warned, and an agent
    // reading "passed" here would hand off work no check has seen.
    for issue in &report.warnings {
        let (Some(check), Some(run)) = (&issue.unverified_by, last_run) else {
            continue;
        };
        let Some(why) = rules.unverified.get(check) else {
            continue;
        };
        let name = issue
            .field
            .strip_prefix("checkpoints.")
            .unwrap_or(&issue.field)
            .to_string();
        let phase = run.phase.as_deref().unwrap_or("?");
        items.push(FeedbackItem {
            kind: "unverified",
            fix: fix_for_unverified(
                &name,
                check,
                why,
                run.check(check).and_then(|c| c.skip),
                run.check(check).is_some(),
                phase,
            ),
            reason: format!(
                "claim not verified: `{name}` says pass, but check `{check}` verified nothing in run `{}` ({why}), so nothing confirmed it",
                run.run_id
            ),
            name,
            status: "unverified".to_string(),
            details: None,
            check: Some(check.clone()),
            errors: Vec::new(),
            log: None,
            line: issue.line,
        });
    }
    for issue in &report.errors {
        if let Some(check) = &issue.contradicted_by {
            let name = issue
                .field
                .strip_prefix("checkpoints.")
                .unwrap_or(&issue.field)
                .to_string();
            let evidence = last_run.and_then(|run| run.check(check));
            let errors = evidence.map(|e| e.errors.clone()).unwrap_or_default();
            let log = evidence.and_then(|e| e.log.clone());
            let run = last_run.map_or_else(
                || "this run".to_string(),
                |run| format!("run `{}`", run.run_id),
            );
            items.push(FeedbackItem {
                kind: "claim",
                fix: fix_for_claim(
                    &name,
                    check,
                    &errors,
                    log.as_deref(),
                    report.required.contains(&name),
                ),
                reason: format!(
                    "claim contradicted by check `{check}`: `{name}` says pass, but `{check}` failed in {run}"
                ),
                name,
                status: "contradicted".to_string(),
                details: None,
                check: Some(check.clone()),
                errors,
                log,
                line: issue.line,
            });
            continue;
        }
        items.push(FeedbackItem {
            kind: "defect",
            name: issue.field.clone(),
            status: "invalid".to_string(),
            reason: issue.message.clone(),
            details: None,
            check: None,
            errors: Vec::new(),
            log: None,
            // The reason already says what to change: repeated here, the
            // section would say everything twice.
            fix: format!(
                "edit line {} of `{}` as the reason says",
                issue.line, report.path
            ),
            line: issue.line,
        });
    }
    // A document that says it is blocked waits for a person, as a run
    // says (`blocked`, next: escalate).
    let blocked = (report.status.as_deref() == Some("blocked")).then(|| Blocked {
        reason: report.block_reason.clone(),
        details: report.block_details.clone(),
    });
    let (items, omitted) = capped(items);
    // So does one whose last run ended blocked because the same errors
    // kept coming back: another attempt would go round the same circle.
    let person_needed = last_run
        .and_then(|run| run.person_needed_for(report.stage.as_deref()))
        .map(str::to_string);
    Feedback {
        path: report.path.clone(),
        id: report.id.clone(),
        stage: report.stage.clone(),
        valid: report.valid,
        escalate: report.escalate || blocked.is_some() || person_needed.is_some(),
        blocked,
        last_run: last_run.map(|run| RunSeen {
            run_id: run.run_id.clone(),
            status: run.status.clone(),
            failed_checks: run.failed_checks(),
        }),
        person_needed,
        no_run_of_phase: match (last_run, &report.stage) {
            (None, Some(stage)) => Some(NoRunOfPhase {
                phase: stage.clone(),
                not_configured: rules.phases.as_ref().is_some_and(|p| !p.contains(stage)),
                newest_run: newest.map(|run| run.run_id.clone()),
                newest_phase: newest.and_then(|run| run.phase.clone()),
            }),
            _ => None,
        },
        attempt: report
            .retry_count
            .filter(|n| *n >= 0)
            .map(|n| n.saturating_add(1)),
        max_retries: report.max_retries,
        items,
        omitted,
    }
}

#[cfg(test)]
mod tests {
    use crate::gate::SkipReason;

    /// The advice follows the kind of skip the verdict recorded, not the
    /// words of its reason: a reason worded otherwise gets the same advice.
    #[test]
    fn every_kind_of_skip_gets_its_own_advice_whatever_its_words() {
        for (skip, says) in [
            (SkipReason::Disabled, "switched off"),
            (SkipReason::NoMatchingFiles, "--all-files"),
            (SkipReason::NoFiles, "--all-files"),
            (SkipReason::SkippedByEnv, "without `PHASEGATE_SKIP`"),
        ] {
            let fix = super::fix_for_unverified(
                "tests_passing",
                "tests",
                "worded in some other way",
                Some(skip),
                true,
                "p",
            );
            assert!(fix.contains(says), "{skip:?}: {fix}");
        }
        let fix = super::fix_for_unverified("tests_passing", "tests", "timed out", None, true, "p");
        assert!(
            fix.contains("fix what kept it from verifying anything (timed out)"),
            "{fix}"
        );
    }
}
