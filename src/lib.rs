//! phasegate: an objective quality gate for work handed between agents and
//! people. `run` is the whole program; `main.rs` only calls it.

pub mod config;
pub mod diagnostics;
pub mod exit;
pub mod runner;
