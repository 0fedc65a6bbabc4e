//! Renderers: they draw what they are given and decide nothing. The only
//! module that writes to the terminal.

pub mod diagnostics;
pub mod errors;
pub mod handoff;
pub mod human;
pub mod json;
pub mod progress;

#[cfg(test)]
mod tests;
