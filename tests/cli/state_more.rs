//! State across runs: run logs, history, interventions, resume.
