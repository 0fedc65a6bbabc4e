//! Parallelism: up to `jobs` checks at once on scoped worker threads; the
//! calling thread receives progress events and draws.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use super::spawn::run_check;
use super::sys::InterruptGuard;
use super::{CheckOutcome, CheckPlan, RunEvent};

/// Runs `plans` and returns their outcomes in plan order. `on_event` is
/// called on the calling thread only.
pub fn run_checks(
    plans: &[CheckPlan],
    jobs: usize,
    on_event: &mut dyn FnMut(RunEvent),
) -> Vec<CheckOutcome> {
    if plans.is_empty() {
        return Vec::new();
    }
    let _interrupts = InterruptGuard::install();
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<CheckOutcome>>> =
        plans.iter().map(|_| Mutex::new(None)).collect();
    let (tx, rx) = mpsc::channel::<RunEvent>();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, plans.len()) {
            let tx = tx.clone();
            let (next, results) = (&next, &results);
            scope.spawn(move || loop {
                let index = next.fetch_add(1, Ordering::SeqCst);
                let Some(plan) = plans.get(index) else {
                    return;
                };
                let _ = tx.send(RunEvent::Started {
                    name: plan.name.clone(),
                });
                // A panic while running one check (a parser tripping on
                // output nobody foresaw) ends that check, not the run: the
                // scope would re-raise it once every worker joined, and
                // every other check's outcome would be lost with it.
                let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| run_check(plan)))
                    .unwrap_or_else(|payload| panicked(plan, payload.as_ref()));
                let _ = tx.send(RunEvent::Finished {
                    name: plan.name.clone(),
                    ok: matches!(outcome.termination, super::Termination::Exited(0)),
                    duration: outcome.duration,
                });
                if let Ok(mut slot) = results[index].lock() {
                    *slot = Some(outcome);
                }
            });
        }
        drop(tx);
        for event in rx {
            on_event(event);
        }
    });
    results
        .into_iter()
        .zip(plans)
        .map(|(slot, plan)| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| failed(plan, "its worker thread panicked".to_string()))
        })
        .collect()
}

/// The outcome of a check phasegate itself failed on while running it:
/// it did not finish (tier 2), with what went wrong.
fn panicked(plan: &CheckPlan, payload: &(dyn std::any::Any + Send)) -> CheckOutcome {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "an unknown panic".to_string());
    failed(
        plan,
        format!("phasegate panicked while running it: {message}"),
    )
}

fn failed(plan: &CheckPlan, why: String) -> CheckOutcome {
    CheckOutcome {
        name: plan.name.clone(),
        termination: super::Termination::SpawnFailed(why),
        duration: std::time::Duration::ZERO,
        output: super::CapturedOutput::default(),
        log_path: plan.log_path.clone(),
        diagnostics: Vec::new(),
        dropped_diagnostics: 0,
        parser_used: None,
        errors_fail: false,
        verifier: None,
        failed_batch: None,
        invocations: plan.invocations.clone(),
        batches: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::runner::{Invocation, Termination};

    fn plan(dir: &std::path::Path, name: &str, invocations: Vec<Invocation>) -> CheckPlan {
        CheckPlan {
            invocations,
            ..crate::runner::spawn::tests::plan(dir, name, "true", Duration::from_secs(30))
        }
    }

    #[test]
    fn a_panic_while_running_one_check_ends_that_check_only() {
        let dir = tempfile::tempdir().unwrap();
        // A batch with no program breaks the runner's invariant: running
        // it panics, after the first batch ran.
        let broken = plan(
            dir.path(),
            "broken",
            vec![
                Invocation::new(["/bin/sh", "-c", "true"]),
                Invocation::new(Vec::<String>::new()),
            ],
        );
        let fine = plan(
            dir.path(),
            "fine",
            vec![Invocation::new(["/bin/sh", "-c", "exit 3"])],
        );
        // One worker: the check after the panic still runs on it.
        let mut finished = 0;
        let outcomes = run_checks(&[broken, fine], 1, &mut |event| {
            finished += usize::from(matches!(event, RunEvent::Finished { .. }));
        });
        assert!(
            matches!(&outcomes[0].termination, Termination::SpawnFailed(why) if why.contains("phasegate panicked while running it")),
            "{:?}",
            outcomes[0].termination
        );
        assert_eq!(outcomes[1].termination, Termination::Exited(3));
        assert_eq!(finished, 2);
    }
}
