//! After the checks: what the gate decides on for each, the checks that
//! contradict a handoff's claims, the changed-line filter, what `resume`
//! carries over, and the lines of `phasegate.toml` findings point at.

use std::path::Path;

use crate::config::{self, Config, Filter};
use crate::gate::{self, CheckInput, CheckRun, SelectionSummary, Verdict};
use crate::runner;
use crate::state::RunDir;

/// What the gate decides on for each check of the run, in the phase's
/// order: its outcome, or why it did not run. Each check that ran gets its
/// invocation record in `run_dir` (a failure to write one is noted).
pub(super) fn check_inputs(
    config: &Config,
    specs: &[&config::CheckSpec],
    planned: Vec<Result<runner::CheckPlan, gate::SkipReason>>,
    outcomes: Vec<runner::CheckOutcome>,
    run_dir: &RunDir,
    pinned: &[(String, String)],
    notes: &mut Vec<String>,
) -> Vec<CheckInput> {
    let mut outcomes = outcomes.into_iter();
    let mut checks = Vec::with_capacity(specs.len());
    for (spec, planned) in specs.iter().zip(planned) {
        let run = match planned {
            Err(reason) => CheckRun::NotRun(reason),
            Ok(plan) => {
                let Some(outcome) = outcomes.next() else {
                    unreachable!("the runner returns one outcome per plan")
                };
                if let Err(e) = run_dir.write_invocation(&plan, &outcome, pinned) {
                    notes.push(format!(
                        "failed to write the invocation record of `{}`: {e}",
                        plan.name
                    ));
                }
                CheckRun::Ran(Box::new(outcome))
            }
        };
        checks.push(CheckInput {
            name: spec.name.clone(),
            kind: spec.kind,
            origin: spec.origin,
            on_failure: spec.on_failure,
            on_missing: spec.on_missing,
            filter: spec
                .filter
                .or(config.gate.filter)
                .unwrap_or(Filter::default_for(spec.origin)),
            location: spec.location.clone(),
            command_location: spec.command_location.clone(),
            run,
        });
    }
    checks
}

/// The checks that ran and found the work wanting (`gate::found_wanting`):
/// only those contradict a handoff's claim; one that could not finish
/// verified nothing either way.
pub(super) fn failed_checks(profile: config::Profile, checks: &[CheckInput]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| gate::found_wanting(profile, c))
        .map(|c| c.name.clone())
        .collect()
}

/// Applies each check's changed-line filter over the change the run looked
/// at (the staged diff or the range's). With every file or named files
/// there is no change to compare with, and nothing is pre-existing.
pub(super) fn mark_pre_existing(
    root: &Path,
    mode: &SelectionSummary,
    checks: &mut [CheckInput],
) -> Option<String> {
    let base = match (mode.mode, &mode.from, &mode.to) {
        ("staged", ..) => crate::git::ChangeBase::Staged,
        ("range", _, Some(to)) if !mode.published.is_empty() => crate::git::ChangeBase::Pushed {
            to: to.clone(),
            published: mode.published.clone(),
        },
        ("range", Some(from), Some(to)) => crate::git::ChangeBase::Range {
            from: from.clone(),
            to: to.clone(),
        },
        _ => return None,
    };
    let filtered = |c: &CheckInput| c.filter != Filter::Nofilter;
    let mut files: Vec<String> = checks
        .iter()
        .filter(|c| filtered(c))
        .filter_map(|c| match &c.run {
            CheckRun::Ran(outcome) => Some(outcome.diagnostics.iter()),
            CheckRun::NotRun(_) => None,
        })
        .flatten()
        .filter_map(|d| d.file.clone())
        .collect();
    files.sort();
    files.dedup();
    if files.is_empty() {
        return None;
    }
    let mut changes = match crate::git::changed_lines(root, &base, &files) {
        Ok(changes) => changes,
        Err(e) => {
            return Some(format!(
                "the changed-line filter was not applied: failed to read the change: {e}"
            ))
        }
    };
    // A finding in a file the repository does not have (a name a tool
    // garbled, an empty one) is placed nowhere: never demoted.
    for file in &files {
        if file.is_empty() || std::fs::symlink_metadata(root.join(file)).is_err() {
            changes.unplaced(file);
        }
    }
    for check in checks.iter_mut().filter(|c| filtered(c)) {
        if let CheckRun::Ran(outcome) = &mut check.run {
            crate::diagnostics::mark_pre_existing(&mut outcome.diagnostics, check.filter, &changes);
        }
    }
    None
}

/// `resume`: the checks of the resumed run that were not run again join
/// the verdict as they ended there (passed, warned or skipped), in the
/// configuration's order, so it covers the whole phase: a warning carried
/// over still warns. Checks it had that are no longer configured are named.
pub(super) fn carry_over(
    previous: &crate::state::RunRecord,
    specs: &[&config::CheckSpec],
    verdict: &mut Verdict,
) {
    let rerun: Vec<String> = verdict.checks.iter().map(|c| c.name.clone()).collect();
    let mut gone = Vec::new();
    let mut carried_ran = false;
    for record in &previous.checks {
        if rerun.contains(&record.name) {
            continue;
        }
        let Some(spec) = specs.iter().find(|s| s.name == record.name) else {
            gone.push(format!("`{}` ({})", record.name, record.status));
            continue;
        };
        let (status, effect) = match record.status.as_str() {
            "passed" => (gate::CheckStatus::Passed, gate::Effect::None),
            "warned" => (gate::CheckStatus::Warned, gate::Effect::Warn),
            "skipped" => (gate::CheckStatus::Skipped, gate::Effect::None),
            // `resume::to_run_again` runs every other check again.
            _ => continue,
        };
        carried_ran |= status != gate::CheckStatus::Skipped;
        verdict.checks.push(gate::CheckResult {
            name: record.name.clone(),
            kind: spec.kind,
            status,
            on_failure: spec.on_failure,
            effect,
            tier: None,
            exit_code: None,
            signal: None,
            duration_ms: 0,
            diagnostics: 0,
            dropped_diagnostics: 0,
            filter: spec.filter.unwrap_or(Filter::default_for(spec.origin)),
            pre_existing: 0,
            log: None,
            reason: Some(format!(
                "{} in run {} (not run again)",
                record.status, previous.run_id
            )),
            // Why it was skipped then is not recorded.
            skip_kind: None,
            argv: Vec::new(),
            argv_omitted: 0,
            output_tail: Vec::new(),
        });
        if effect == gate::Effect::Warn && verdict.status == gate::Status::Passed {
            verdict.status = gate::Status::Warned;
        }
    }
    let order = |name: &str| specs.iter().position(|s| s.name == name);
    verdict.checks.sort_by_key(|c| order(&c.name));
    if carried_ran {
        // The phase's checks did run, in the resumed run.
        let none_ran = format!(
            "no check ran in phase `{}`",
            previous.phase.as_deref().unwrap_or_default()
        );
        verdict.notes.retain(|n| *n != none_ran);
    }
    let ran = if rerun.is_empty() {
        "no check needed to run again; the handoff documents were validated again".to_string()
    } else {
        format!(
            "ran again {}",
            rerun
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // The profile judges what a failure means: a person reading a
    // resumed verdict must see whether it is the resumed run's.
    let profile = verdict.profile.as_str();
    let under = if previous.profile == profile {
        format!("under its profile `{profile}`")
    } else {
        format!("(profile `{}`) under profile `{profile}`", previous.profile)
    };
    verdict
        .notes
        .push(format!("resumed run {} {under}: {ran}", previous.run_id));
    if !gone.is_empty() {
        verdict.notes.push(format!(
            "run {} had checks that phase `{}` no longer has, not run: {}",
            previous.run_id,
            previous.phase.as_deref().unwrap_or_default(),
            gone.join(", ")
        ));
    }
}

/// Findings placed at a check in `phasegate.toml` (a failure nothing could
/// parse, a missing tool) show that line, as tool findings show theirs.
pub(super) fn show_config_lines(root: &Path, verdict: &mut Verdict) {
    let mut text: Option<Option<String>> = None;
    for d in &mut verdict.diagnostics {
        let (Some(file), Some(line), None) = (d.file.as_deref(), d.line, &d.source_line) else {
            continue;
        };
        if file != config::CONFIG_FILE {
            continue;
        }
        let content = text
            .get_or_insert_with(|| std::fs::read_to_string(root.join(config::CONFIG_FILE)).ok());
        d.source_line = content.as_deref().and_then(|t| {
            t.lines()
                .nth(usize::try_from(line).ok()?.checked_sub(1)?)
                .map(|l| l.chars().take(300).collect())
        });
    }
}
