//! Spawning checks: process groups, timeouts, parallelism and bounded output
//! capture. The runner records what happened; it never decides the verdict.

mod plan;

pub use plan::*;
