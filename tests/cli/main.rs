//! Integration tests: the real binary in real temporary git repositories.

mod support;

mod config_errors;
mod defaults;
mod policy;
mod runner;
mod verdict;
