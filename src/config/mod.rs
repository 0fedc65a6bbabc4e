//! `phasegate.toml`: its schema, loading with exact error spans, the embedded
//! defaults and language detection. Nothing here runs a check or prints.

mod model;

pub use model::*;
