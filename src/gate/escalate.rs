//! Policy over runs: the same errors failing run after run mean an agent
//! is stuck and a person is needed; and every failure becomes an
//! intervention of a type and priority. Pure: the state is read and
//! written by the caller.

use crate::diagnostics::{Diagnostic, Fnv, Severity};
use crate::state::{Intervention, NewIntervention, Priority, RunRecord};

use super::{CheckResult, CheckStatus, Next, Status, Verdict};

/// Per check, the fingerprints of the errors that made it fail or stop:
/// errors of checks that failed or did not finish, the change's own (not
/// pre-existing), sorted, once each. Checks that have none are left out.
pub fn check_error_sets(verdict: &Verdict) -> Vec<(String, Vec<String>)> {
    verdict
        .checks
        .iter()
        .filter(|c| {
            matches!(
                c.status,
                CheckStatus::Failed
                    | CheckStatus::Missing
                    | CheckStatus::TimedOut
                    | CheckStatus::Crashed
            )
        })
        .filter_map(|c| {
            let mut set: Vec<String> = verdict
                .diagnostics
                .iter()
                .filter(|d| d.check == c.name && d.severity == Severity::Error && !d.pre_existing)
                .map(Diagnostic::fingerprint)
                .collect();
            set.sort();
            set.dedup();
            (!set.is_empty()).then(|| (c.name.clone(), set))
        })
        .collect()
}

/// The fingerprints of every error that made this run fail or stop (the
/// union of `check_error_sets`), sorted, once each.
pub fn error_set(verdict: &Verdict) -> Vec<String> {
    let mut set: Vec<String> = check_error_sets(verdict)
        .into_iter()
        .flat_map(|(_, set)| set)
        .collect();
    set.sort();
    set.dedup();
    set
}

/// The runs among `runs` (oldest first, of this run's phase and work
/// tree) that were attempts: a run on the same input as the run before
/// it (`RunRecord::same_input`) changed nothing, and neither continues
/// nor breaks a streak of the same errors. An agent that commits (the
/// hook fails), then runs the gate again to read the verdict it must act
/// on, has made one attempt, not two. `current` is this run's record: when
/// it too judges what the newest run judged, it stands in that run's
/// place, and ends as that run did.
pub fn attempts<'r>(runs: &[&'r RunRecord], current: &RunRecord) -> Vec<&'r RunRecord> {
    let mut out: Vec<&RunRecord> = Vec::with_capacity(runs.len());
    let mut before: Option<&RunRecord> = None;
    for &run in runs {
        if !before.is_some_and(|earlier| run.same_input(earlier)) {
            out.push(run);
        }
        before = Some(run);
    }
    // The run left last is the newest one's input too (a run on the same
    // input as the one before it is not in `out`).
    if before.is_some_and(|newest| current.same_input(newest)) {
        out.pop();
    }
    out
}

/// The error sets of the earlier attempts among `runs` of the phase
/// (oldest first) that `escalate_repeats` compares this run's with. A run
/// that did not run a check this run failed on (`--check`, a workflow,
/// `PHASEGATE_SKIP`), or was interrupted in one this run ran, says nothing
/// of its errors: it is left out, and neither continues a streak nor
/// breaks it. The others are read on the
/// checks this run ran only, so that a `--check tests` run is compared on
/// `tests` alone.
///
/// One push is one attempt, however many refs it checked in runs of their
/// own (`SelectionRecord::push`; `push` is this run's): the other runs of
/// this run's push are not earlier attempts, and the runs of an earlier
/// push count once, with this run's errors when any of them had them (a
/// branch and a tag on another commit failing alike, pushed twice, is two
/// attempts, not four).
pub fn previous_error_sets(
    verdict: &Verdict,
    runs: &[&RunRecord],
    push: Option<&str>,
) -> Vec<Vec<String>> {
    let ran: Vec<&str> = verdict
        .checks
        .iter()
        .filter(|c| c.status != CheckStatus::Skipped)
        .map(|c| c.name.as_str())
        .collect();
    let failing: Vec<String> = check_error_sets(verdict)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let current = error_set(verdict);
    // Each attempt, where its newest run stands: its push and its runs' sets.
    let mut attempts: Vec<(Option<&str>, Vec<Vec<String>>)> = Vec::new();
    for run in runs {
        let of_push = run.selection.push.as_deref();
        if push.is_some() && of_push == push {
            continue;
        }
        let says = failing.iter().all(|name| {
            run.checks
                .iter()
                .any(|c| c.name == *name && c.status != "skipped")
        });
        // A check cut short by a Ctrl-C (or SIGTERM, SIGHUP) said nothing
        // of its errors either: a person stopping a run, or an agent's
        // harness killing it on a time budget, never starts the count
        // again for an agent still going round in circles.
        let cut_short = run
            .checks
            .iter()
            .any(|c| c.interrupted && ran.contains(&c.name.as_str()));
        if !says || cut_short {
            continue;
        }
        let mut set: Vec<String> = run
            .checks
            .iter()
            .filter(|c| ran.contains(&c.name.as_str()))
            .flat_map(|c| c.fingerprints.iter().cloned())
            .collect();
        set.sort();
        set.dedup();
        let earlier = of_push.and_then(|p| attempts.iter().position(|(q, _)| *q == Some(p)));
        let mut sets = match earlier {
            Some(at) => attempts.remove(at).1,
            None => Vec::new(),
        };
        sets.push(set);
        attempts.push((of_push, sets));
    }
    attempts
        .into_iter()
        .map(
            |(_, mut sets)| match sets.iter().position(|set| *set == current) {
                Some(same) => sets.swap_remove(same),
                None => sets.pop().unwrap_or_default(),
            },
        )
        .collect()
}

/// When this run failed with the same errors as each of the `needed - 1`
/// runs before it in the phase (`previous`, newest last), it ends
/// `blocked` with `next: escalate`, saying how many errors keep coming
/// back and in which checks: the report lists them under those checks
/// and in the summary, and the verdict in its diagnostics and summary, so
/// the note points there rather than saying each a third time. Returns,
/// when it did, what the intervention says: the note with the errors
/// named, since the queue is read without the run's report.
///
/// Only a run that held the work back is escalated: one the `fast`
/// profile let through (a check that printed errors, then timed out)
/// proceeds, as the two before it did, and a row of runs that proceeded
/// never ends `blocked`. Its errors are still recorded, and count for a
/// later run that fails on them.
pub fn escalate_repeats(
    verdict: &mut Verdict,
    previous: &[Vec<String>],
    needed: usize,
) -> Option<String> {
    if needed < 2
        || !matches!(verdict.status, Status::Failed | Status::Incomplete)
        || verdict.next == Next::Proceed
    {
        return None;
    }
    let current = error_set(verdict);
    if current.is_empty() || previous.len() + 1 < needed {
        return None;
    }
    // The streak: this run and the earlier ones with the same errors,
    // newest first.
    let streak = 1 + previous
        .iter()
        .rev()
        .take_while(|set| **set == current)
        .count();
    if streak < needed {
        return None;
    }
    let errors: Vec<String> = verdict
        .diagnostics
        .iter()
        .filter(|d| current.contains(&d.fingerprint()))
        .map(Diagnostic::headline)
        .take(5)
        .collect();
    let checks = check_error_sets(verdict);
    verdict.status = Status::Blocked;
    verdict.next = Next::Escalate;
    // A push's refs are checked in runs of their own, and count once.
    let pushed = verdict
        .selection
        .as_ref()
        .is_some_and(|s| s.pushed_ref.is_some());
    let tries = if pushed {
        "attempts in a row (one `git push` is one, whatever refs it sends)"
    } else {
        "runs in a row"
    };
    let note = format!(
        "the same {} error(s) failed {streak} {tries}: a person is needed. {}",
        current.len(),
        where_they_are(&checks)
    );
    verdict.notes.push(note.clone());
    Some(format!("{note} They are: {}", errors.join("; ")))
}

/// Which checks the errors that keep coming back are in, and where they
/// are listed: `They keep coming back in check `tests`: ...`, with each
/// check's count when there are several.
fn where_they_are(checks: &[(String, Vec<String>)]) -> String {
    match checks {
        [(name, _)] => format!(
            "They keep coming back in check `{name}`: its findings (and the summary) name them."
        ),
        _ => {
            let named: Vec<String> = checks
                .iter()
                .map(|(name, set)| format!("`{name}` ({})", set.len()))
                .collect();
            let list = crate::prose::and_list(&named);
            format!(
                "They keep coming back in checks {list}: their findings (and the summary) name them."
            )
        }
    }
}

/// Whether `check` was cut short by an interrupt (Ctrl-C, SIGTERM,
/// SIGHUP): then its errors are not known, and its run says nothing of
/// them (`previous_error_sets`).
pub fn was_interrupted(verdict: &Verdict, check: &CheckResult) -> bool {
    check.status == CheckStatus::Crashed
        && verdict.diagnostics.iter().any(|d| {
            d.check == check.name
                && d.tool == "phasegate"
                && d.code.as_deref() == Some(crate::diagnostics::OwnCode::Interrupted.as_str())
        })
}

/// The intervention of a run `escalate_repeats` blocked, `note` its
/// message. The errors that keep coming back make it the same error
/// (`NewIntervention::fingerprint`): the next run stuck on them counts one
/// more occurrence on it.
pub fn repeated_intervention(verdict: &Verdict, note: String) -> NewIntervention {
    let mut hash = Fnv::default();
    for fingerprint in error_set(verdict) {
        hash.write(fingerprint.as_bytes());
        hash.write(&[0xff]);
    }
    NewIntervention {
        kind: crate::state::ERRORS_REPEATED.to_string(),
        priority: Priority::High,
        check: None,
        message: note,
        fingerprint: format!("{:016x}", hash.finish()),
    }
}

/// The fingerprint of an intervention that no located error stands
/// behind: its message's, read as a finding's is (its first line, numbers
/// and spacing normalised), so that "timed out after 600s" in one run and
/// the next is the same. Not for a message that names a document, whose
/// name may hold a number (`F001.md` and `F002.md` are two): that is
/// `exact_fingerprint`'s.
fn message_fingerprint(message: &str) -> String {
    Diagnostic {
        tool: "phasegate".to_string(),
        message: message.to_string(),
        ..Diagnostic::default()
    }
    .fingerprint()
}

/// The fingerprint of an intervention told by what it is about, `what`,
/// exactly (a handoff document's path).
pub fn exact_fingerprint(what: &str) -> String {
    let mut hash = Fnv::default();
    hash.write(what.as_bytes());
    format!("{:016x}", hash.finish())
}

/// The interventions a finished run creates: one per failing check (its
/// type and priority from what went wrong), one per invalid handoff, one
/// per handoff that needs a person (out of retries, or `status: blocked`),
/// one when limits were reached, one for an internal failure.
pub fn interventions_for(verdict: &Verdict) -> Vec<NewIntervention> {
    let mut out: Vec<NewIntervention> = verdict
        .checks
        .iter()
        .filter_map(|check| check_intervention(verdict, check))
        .collect();
    for handoff in &verdict.handoffs {
        out.extend(handoff_interventions(handoff));
    }
    if let Some(error) = &verdict.error {
        out.push(match error.kind {
            "config" => config_intervention(error),
            kind => NewIntervention {
                kind: kind.to_string(),
                priority: if kind == "internal" {
                    Priority::Critical
                } else {
                    Priority::High
                },
                check: None,
                fingerprint: message_fingerprint(&error.message),
                message: error.message.clone(),
            },
        });
    }
    out
}

/// The intervention of a configuration that does not load: `high`, as a
/// check that failed, since every commit is refused and nothing verified
/// until someone edits the file; not `critical`, which is phasegate's own
/// failure. Its message names where the first problem is and what it is.
/// The same problems again (the same files and messages, wherever their
/// lines moved, whichever version of the file held them: staged or in
/// the work tree) are the same error: a broken `phasegate.toml` refusing
/// commit after commit is one record whose occurrences grow.
fn config_intervention(error: &super::VerdictError) -> NewIntervention {
    let mut hash = Fnv::default();
    if error.problems.is_empty() {
        hash.write(message_fingerprint(&error.message).as_bytes());
    }
    for problem in &error.problems {
        let said = format!(
            "{}: {}",
            problem.file.as_deref().unwrap_or_default(),
            problem.message
        );
        hash.write(&[0xff]);
        hash.write(message_fingerprint(&said).as_bytes());
    }
    let message = match error.problems.first() {
        None => error.message.clone(),
        Some(first) => {
            let place = match (&first.file, first.line) {
                (Some(file), Some(line)) => format!("{file}:{line}: "),
                (Some(file), None) => format!("{file}: "),
                (None, _) => String::new(),
            };
            let more = match error.problems.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            format!("{}: {place}{}{more}", error.message, first.message)
        }
    };
    NewIntervention {
        kind: "config_error".to_string(),
        priority: Priority::High,
        check: None,
        message,
        fingerprint: format!("{:016x}", hash.finish()),
    }
}

/// What a person should look at in one check's result, if anything: why it
/// did not pass, or diagnostics it printed beyond the limit.
fn check_intervention(verdict: &Verdict, check: &CheckResult) -> Option<NewIntervention> {
    let errors = || {
        verdict
            .diagnostics
            .iter()
            .filter(|d| d.check == check.name && d.severity == Severity::Error)
    };
    let reason = check.reason.clone().unwrap_or_default();
    let (kind, priority) = match check.status {
        CheckStatus::Passed | CheckStatus::Skipped => {
            return (check.dropped_diagnostics > 0).then(|| {
                let message = format!(
                    "check `{}` printed more diagnostics than are kept; {} were only counted",
                    check.name, check.dropped_diagnostics
                );
                NewIntervention {
                    kind: LIMIT_REACHED.to_string(),
                    priority: Priority::Low,
                    check: Some(check.name.clone()),
                    // One per check, however many went uncounted.
                    fingerprint: exact_fingerprint(&check.name),
                    message,
                }
            });
        }
        CheckStatus::Warned if check.pre_existing > 0 => return None,
        CheckStatus::Missing => ("missing_tool", Priority::High),
        CheckStatus::TimedOut => ("timeout", Priority::High),
        // Stopped by a person (Ctrl-C) or a harness (SIGTERM), not broken:
        // nothing for anyone to fix, but nothing was verified either.
        CheckStatus::Crashed if was_interrupted(verdict, check) => ("interrupted", Priority::Low),
        CheckStatus::Crashed if check.tier == Some(3) => ("unparseable_output", Priority::Medium),
        CheckStatus::Crashed if reason.to_lowercase().contains("permission denied") => {
            ("permission_denied", Priority::High)
        }
        CheckStatus::Crashed => ("tool_crashed", Priority::High),
        CheckStatus::Failed | CheckStatus::Warned => {
            if errors().all(|d| {
                d.code.as_deref() == Some(crate::diagnostics::OwnCode::CheckFailed.as_str())
            }) {
                ("unparsed_failure", Priority::Medium)
            } else {
                ("check_failed", Priority::High)
            }
        }
    };
    // The error the message names is the one that tells it again.
    let first = errors().next();
    let detail = first.map_or(reason, Diagnostic::headline);
    let message = format!("check `{}` {}: {detail}", check.name, check.status.as_str());
    Some(NewIntervention {
        kind: kind.to_string(),
        priority,
        check: Some(check.name.clone()),
        fingerprint: first.map_or_else(|| message_fingerprint(&message), Diagnostic::fingerprint),
        message,
    })
}

/// What a person should look at in one handoff document's result: that it
/// is invalid, and that it waits for a person (out of retries, or blocked).
fn handoff_interventions(handoff: &serde_json::Value) -> Vec<NewIntervention> {
    let path = handoff["path"].as_str().unwrap_or("?");
    let mut out = Vec::new();
    if handoff["valid"] == false {
        let message = format!("handoff `{path}` is invalid");
        out.push(NewIntervention {
            kind: "handoff_invalid".to_string(),
            priority: Priority::Medium,
            check: None,
            fingerprint: exact_fingerprint(path),
            message,
        });
    }
    // A document that made the run `blocked` waits for a person: the
    // queue is where one finds it.
    if handoff["escalate"] == true {
        let message = format!(
            "handoff `{path}` is out of retries ({}): a person is needed{}",
            crate::handoff::retries_used(
                handoff["retry_count"].as_i64().unwrap_or(0),
                handoff["max_retries"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0)
            ),
            handoff["last_failure"]
                .as_str()
                .map_or_else(String::new, |f| format!("; last failure: {f}"))
        );
        out.push(NewIntervention {
            kind: "handoff_escalated".to_string(),
            priority: Priority::High,
            check: None,
            fingerprint: exact_fingerprint(path),
            message,
        });
    } else if handoff["status"] == "blocked" {
        let message = format!(
            "handoff `{path}` says it is blocked{}: a person is needed",
            crate::handoff::blocked_on(
                handoff["block_reason"].as_str(),
                handoff["block_details"].as_str()
            )
        );
        out.push(NewIntervention {
            kind: "handoff_blocked".to_string(),
            priority: Priority::High,
            check: None,
            fingerprint: exact_fingerprint(path),
            message,
        });
    }
    out
}

/// The type of the record of a check that printed more diagnostics than
/// are kept: a passing check makes it too, so no pass shows it over.
const LIMIT_REACHED: &str = "limit_reached";

/// Whether `record` is of a check's failure (`check_intervention`): its
/// missing tool, timeout, crash or failure, over once a later run has run
/// that check to its end and seen it pass. Only `check_intervention`
/// names a check in a new record.
fn of_a_check_failure(record: &Intervention) -> bool {
    record.check.is_some() && record.kind != LIMIT_REACHED
}

/// What a finished run shows is over, for the queue to close the open
/// records of (`Queue::close_over`): the checks it ran to their end that
/// passed, and the handoff documents it validated, in its phase and on
/// its branch.
#[derive(Debug)]
pub struct Over<'v> {
    phase: Option<&'v str>,
    /// `None`: no branch (a detached `HEAD`, outside a repository).
    branch: Option<&'v str>,
    passed: Vec<&'v str>,
    handoffs: &'v [serde_json::Value],
}

/// What `verdict`, of a run on `branch` (`None`: on no branch), shows is
/// over. A check passed only when this run ran it: not one skipped (by
/// its `files`, `PHASEGATE_SKIP`, a workflow), left out (`--check`), or
/// carried over by `resume` from the run it resumed, which ran nothing
/// (no command line).
pub fn what_is_over<'v>(verdict: &'v Verdict, branch: Option<&'v str>) -> Over<'v> {
    Over {
        phase: verdict.phase.as_deref(),
        branch,
        passed: verdict
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Passed && !c.argv.is_empty())
            .map(|c| c.name.as_str())
            .collect(),
        handoffs: &verdict.handoffs,
    }
}

impl Over<'_> {
    /// Whether the run shows what `record` reports is over, and how, as
    /// its note says it (check `tests` passed). Only a record of this
    /// run's branch (no branch matching no branch) is: a check failing on
    /// one branch and passing on another is not fixed, and a record whose
    /// branch is not known (an earlier version's, one that took in
    /// another branch's errors) is a person's to close.
    ///
    /// - A check's failure (and its missing tool, timeout, crash) is over
    ///   when a run of the record's phase ran every check the record
    ///   stands for, and each passed.
    /// - `handoff_invalid` is over when the run validated that document
    ///   and found it valid; `handoff_escalated` when it read the
    ///   document and it no longer escalates; `handoff_blocked` when it
    ///   read it and it no longer says `status: blocked`. The document's
    ///   stage, not the run's phase, says what it is.
    /// - Nothing else: a configuration error (the configuration a later
    ///   run loaded may be another ref's, `--config-from-ref`), a streak
    ///   of the same errors, phasegate's own failures.
    pub fn shows_over(&self, record: &Intervention) -> Option<String> {
        if record.branch.as_ref()?.as_deref() != self.branch {
            return None;
        }
        if of_a_check_failure(record) {
            if self.phase != Some(record.phase.as_str()) {
                return None;
            }
            let checks: Vec<&str> = if record.checks.is_empty() {
                record.check.iter().map(String::as_str).collect()
            } else {
                record.checks.iter().map(String::as_str).collect()
            };
            if checks.is_empty() || !checks.iter().all(|name| self.passed.contains(name)) {
                return None;
            }
            let named: Vec<String> = checks.iter().map(|name| format!("`{name}`")).collect();
            let checks = if named.len() == 1 { "check" } else { "checks" };
            return Some(format!(
                "{checks} {} passed",
                crate::prose::and_list(&named)
            ));
        }
        let fingerprint = record.fingerprint.as_deref()?;
        let handoff = self.handoffs.iter().find(|h| {
            h["path"]
                .as_str()
                .is_some_and(|path| exact_fingerprint(path) == fingerprint)
        })?;
        let path = handoff["path"].as_str()?;
        // `status` is null when the frontmatter could not be read: the
        // run then saw nothing of what the document says.
        let status = handoff["status"].as_str();
        match record.kind.as_str() {
            "handoff_invalid" if handoff["valid"] == true => {
                Some(format!("handoff `{path}` is valid"))
            }
            "handoff_escalated" => {
                let status = status?;
                // A failed or blocked document escalates on its retry
                // count: without one read, whether it does is not known.
                let counted =
                    !matches!(status, "failed" | "blocked") || handoff["retry_count"].is_i64();
                (handoff["escalate"] == false && counted).then(|| {
                    format!("handoff `{path}` no longer escalates (its status is `{status}`)")
                })
            }
            "handoff_blocked" => {
                let status = status?;
                (status != "blocked").then(|| {
                    format!("handoff `{path}` is no longer blocked (its status is `{status}`)")
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::attempts;
    use crate::state::RunRecord;

    fn run(id: &str, input: Option<&str>) -> RunRecord {
        RunRecord {
            run_id: id.to_string(),
            ..crate::state::staged_run(input, Some("c1"))
        }
    }

    fn ids(runs: &[&RunRecord]) -> Vec<String> {
        runs.iter().map(|r| r.run_id.clone()).collect()
    }

    #[test]
    fn a_run_on_the_input_of_the_run_before_it_is_no_attempt() {
        let recorded = [
            run("a", Some("1")),
            run("b", Some("1")),
            run("c", Some("2")),
            run("d", Some("1")),
        ];
        let runs: Vec<&RunRecord> = recorded.iter().collect();
        // `b` repeats `a`; `d` follows `c`, on other input, so it counts.
        assert_eq!(ids(&attempts(&runs, &run("e", Some("3")))), ["a", "c", "d"]);
        // This run, on `d`'s input, stands in its place.
        assert_eq!(ids(&attempts(&runs, &run("e", Some("1")))), ["a", "c"]);
        // Runs without a digest (earlier versions, `--all-files`) count.
        let unknown = [run("x", None), run("y", None)];
        let runs: Vec<&RunRecord> = unknown.iter().collect();
        assert_eq!(ids(&attempts(&runs, &run("z", None))), ["x", "y"]);
    }
}
