//! Renderers: they draw what they are given and decide nothing. The only
//! module that writes to the terminal.

pub mod codequality;
pub mod diagnostics;
pub mod errors;
pub mod github;
pub mod handoff;
pub mod human;
pub mod json;
pub mod junit;
pub mod progress;
pub mod sarif;
mod snippet;

#[cfg(test)]
mod tests;
