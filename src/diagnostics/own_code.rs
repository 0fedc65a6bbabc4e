//! The codes phasegate puts on its own findings (a check that timed out, a
//! check that modified files, an invalid handoff document): the one list
//! of them. Every place that makes such a finding names its code here, and
//! the reports describe each code from this list, so a code cannot be
//! added without the reports knowing it. Holds names only, no wording.

use std::fmt;

/// Defines `OwnCode` with one variant per code, and the list of them all,
/// from one table, so the list cannot miss a variant.
macro_rules! own_codes {
    ($($(#[$doc:meta])* $variant:ident = $code:literal,)*) => {
        /// A code phasegate sets on a finding of its own.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum OwnCode {
            $($(#[$doc])* $variant,)*
        }

        impl OwnCode {
            /// Every code, in the order of the table.
            pub const ALL: &'static [OwnCode] = &[$(OwnCode::$variant,)*];

            /// The code as findings carry it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(OwnCode::$variant => $code,)*
                }
            }
        }
    };
}

own_codes! {
    /// A check failed and nothing in its output could be parsed.
    CheckFailed = "check-failed",
    /// A check's program is not installed.
    MissingTool = "missing-tool",
    /// A check ran past its `timeout`.
    Timeout = "timeout",
    /// A check was killed by a signal.
    Crash = "crash",
    /// A check's program could not be started.
    SpawnFailed = "spawn-failed",
    /// The run was interrupted before a check finished.
    Interrupted = "interrupted",
    /// A verifier answered "fail" with no error of its own.
    VerifierFail = "verifier-fail",
    /// A verifier answered "pass" but named errors.
    VerifierContradiction = "verifier-contradiction",
    /// A verifier's answer could not be parsed.
    VerifierMalformed = "verifier-malformed",
    /// A verifier failed without an answer.
    VerifierError = "verifier-error",
    /// A finding of a verifier's "fail" could not be read.
    VerifierFindingUnreadable = "verifier-finding-unreadable",
    /// A check's log could not be written.
    LogWriteFailed = "log-write-failed",
    /// A check modified files of the work tree or the index.
    FilesModified = "files-modified",
    /// A check moved `HEAD` (committed, reset, switched branch).
    HeadMoved = "head-moved",
    /// A check stashed files of the work tree or the index (`git stash`).
    Stashed = "stashed",
    /// A check runs a file the branch changed, under `--config-from-ref`.
    CommandFileChanged = "command-file-changed",
    /// A handoff document breaks a rule: `handoff:<field>` (see
    /// `OwnCode::handoff`).
    Handoff = "handoff",
    /// A handoff document has a problem that does not fail it.
    HandoffWarning = "handoff-warning",
    /// A check found more than it may keep.
    FindingsNotKept = "findings-not-kept",
    /// `phasegate.toml` could not be used.
    ConfigError = "config-error",
    /// The command line could not be used.
    UsageError = "usage-error",
    /// phasegate failed internally.
    InternalError = "internal-error",
}

impl OwnCode {
    /// `code` as one of phasegate's own, if it is one: the code itself,
    /// or, for a handoff rule, its family before the `:`.
    pub fn of(code: &str) -> Option<OwnCode> {
        let family = match code.split_once(':') {
            Some((family, _)) if family == OwnCode::Handoff.as_str() => family,
            Some(_) => return None,
            None => code,
        };
        OwnCode::ALL.iter().copied().find(|c| c.as_str() == family)
    }

    /// The code of a handoff document's error about `field`.
    pub fn handoff(field: &str) -> String {
        format!("{}:{field}", OwnCode::Handoff.as_str())
    }

    /// The code of a `VerdictError` of `kind` (`config`, `usage`,
    /// `internal`); any other kind is an internal error.
    pub fn of_error(kind: &str) -> OwnCode {
        match kind {
            "config" => OwnCode::ConfigError,
            "usage" => OwnCode::UsageError,
            _ => OwnCode::InternalError,
        }
    }
}

impl fmt::Display for OwnCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::OwnCode;

    #[test]
    fn every_code_reads_back_as_itself_and_a_handoff_rule_as_its_family() {
        for &code in OwnCode::ALL {
            assert_eq!(OwnCode::of(code.as_str()), Some(code));
        }
        assert_eq!(
            OwnCode::of(&OwnCode::handoff("completed_at")),
            Some(OwnCode::Handoff)
        );
        assert_eq!(OwnCode::of("E0308"), None);
        assert_eq!(OwnCode::of("clippy::needless_return"), None);
    }
}
