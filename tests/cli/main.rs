//! Integration tests: the real binary in real temporary git repositories.
#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on anything unexpected"
)]

mod support;

mod agent_loop;
mod batches_review;
mod ci;
mod ci_events;
mod ci_gate;
mod ci_more;
mod config_errors;
mod config_more;
mod config_review;
mod counts;
mod defaults;
mod diagnostics;
mod diagnostics_more;
mod filter;
mod first_run;
mod gate_review;
mod git;
mod handoff;
mod handoff_messages;
mod handoff_more;
mod handoff_more2;
mod handoff_review;
mod handoff_rules;
mod handoff_sources;
mod handoff_yaml;
mod hooks;
mod install_edges;
mod install_modes;
mod install_more;
mod install_review;
mod interventions_merge;
mod odd_inputs;
mod parsers_exit;
mod parsers_js;
mod parsers_more;
mod parsers_more2;
mod parsers_review;
mod parsers_units;
mod policy;
mod policy_edges;
mod policy_history;
mod prepush;
mod prepush_merge;
mod prepush_modes;
mod prepush_remotes;
mod prepush_review;
mod prepush_tags;
mod protect_edges;
mod protect_filters;
mod protect_hostile;
mod report_edges;
mod report_review;
mod reports;
mod reports_more;
mod run_more;
mod runner;
mod runner_more;
mod runner_review;
mod runner_tree;
mod select_review;
mod selection_more;
mod snapshot_edges;
mod snapshot_place;
mod snapshot_refs;
mod state;
mod state_more;
mod state_review;
mod state_shared;
mod verdict;
mod verifier_more;
