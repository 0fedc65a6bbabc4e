//! Handoff documents: frontmatter extraction, YAML with exact locations,
//! the schema rules, claims against the run's checks, the last run's
//! evidence, stamping and feedback.

pub mod excerpt;
pub mod extract;
pub mod feedback;
pub mod ids;
pub mod last_run;
pub mod read;
pub mod stamp;
pub mod yaml;

pub mod time;

pub mod validate;

#[cfg(test)]
mod tests;

pub use validate::{
    blocked_on, retries_used, unreadable, validate, validate_bytes, validate_document,
    HandoffReport, Issue, Rules,
};
