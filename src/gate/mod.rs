//! Policy: outcomes + `on_failure` + profile + failure tiers → `Verdict`.
//! Decides; never runs anything and never prints.

mod decide;
mod escalate;
mod plan;
mod verdict;

pub use decide::*;
pub use escalate::*;
pub use plan::*;
pub use verdict::*;
