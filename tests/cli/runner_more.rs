//! Running checks: timeouts, signals, output, missing tools, environment, working directory, verifiers.
