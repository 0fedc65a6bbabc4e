//! Git: repository discovery and file selection.

mod hooks;
mod protect;
mod repo;
mod select;

pub use hooks::*;
pub use protect::*;
pub use repo::*;
pub use select::*;
