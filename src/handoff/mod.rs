//! Handoff documents: frontmatter extraction, YAML with exact locations,
//! the schema rules, claims against the run's checks, the last run's
//! evidence, stamping and feedback.

pub mod extract;
pub mod feedback;
pub mod last_run;
pub mod stamp;
pub mod yaml;

pub mod time;

pub mod validate;

#[cfg(test)]
mod tests;

pub use validate::{unreadable, validate, validate_bytes, HandoffReport, Issue, Rules};
