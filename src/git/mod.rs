//! Git: repository discovery and file selection.

mod changes;
mod hooks;
mod protect;
mod repo;
mod select;

pub use changes::*;
pub use hooks::*;
pub use protect::*;
pub use repo::*;
pub use select::*;
