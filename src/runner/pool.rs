//! Parallelism: up to `jobs` checks at once on scoped worker threads; the
//! calling thread receives progress events and draws.

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
                let outcome = run_check(plan);
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
                .unwrap_or_else(|| CheckOutcome {
                    name: plan.name.clone(),
                    termination: super::Termination::SpawnFailed(
                        "its worker thread panicked".to_string(),
                    ),
                    duration: std::time::Duration::ZERO,
                    output: super::CapturedOutput::default(),
                    log_path: plan.log_path.clone(),
                    diagnostics: Vec::new(),
                    dropped_diagnostics: 0,
                    parser_used: None,
                    errors_fail: false,
                    verifier: None,
                    invocations: plan.invocations.clone(),
                })
        })
        .collect()
}
