//! Spawning checks: process groups, timeouts, parallelism and bounded output
//! capture. The runner records what happened; it never decides the verdict.

mod batch;
mod capture;
mod plan;
mod pool;
mod spawn;
mod sys;
mod venv;
mod verifier;
mod wrapper;

pub use batch::{expand_invocations, shell_quote, unquotable_files};
pub use capture::{LOG_LIMIT, TAIL_BYTES};
pub use plan::*;
pub use pool::run_checks;
pub use spawn::{
    dependency_installer, process_named, run_check, GIT_LOCAL_ENV, PINNED_ENV, REMOVED_ENV,
};
pub use sys::{
    accept_repository_extensions, command_line, holds_open, interrupt_caught, interrupted,
    signal_group, stop_recorded_groups, trust_repository_owners, InterruptGuard, SIGKILL,
};
pub use venv::{
    enter as enter_venv, path_with as path_with_venv, project_venv, Bypass, LeftAlone, UnusedVenv,
};
pub use verifier::parse_verifier_answer;
