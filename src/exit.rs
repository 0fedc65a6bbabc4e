//! The process exit codes of phasegate, mapped in one place. Their values are
//! an interface: hooks, CI scripts and agents branch on them.

/// How a phasegate invocation ended, as the process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    /// The commit, merge or handoff may proceed: the gate passed, only warned,
    /// or could not finish under the fail-open `fast` profile.
    Proceed,
    /// A blocking check failed or a handoff document is invalid: fix and retry.
    Failed,
    /// The command line or the configuration is wrong.
    Usage,
    /// Verification could not finish (missing tool, timeout, crash, bad
    /// verifier answer, internal error) and the profile fails closed.
    Incomplete,
    /// A person is needed: the retry budget is spent or a handoff is blocked.
    Escalate,
}

impl ExitCode {
    /// The numeric status handed to the operating system.
    pub fn code(self) -> u8 {
        match self {
            ExitCode::Proceed => 0,
            ExitCode::Failed => 1,
            ExitCode::Usage => 2,
            ExitCode::Incomplete => 3,
            ExitCode::Escalate => 4,
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.code())
    }
}
