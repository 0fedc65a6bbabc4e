//! Git: repository discovery and file selection.

mod repo;

pub use repo::*;
