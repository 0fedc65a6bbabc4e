//! Git: repository discovery and file selection.

mod protect;
mod repo;
mod select;

pub use protect::*;
pub use repo::*;
pub use select::*;
