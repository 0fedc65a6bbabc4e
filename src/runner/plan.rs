//! What the runner is asked to do (`CheckPlan`) and what it reports back
//! (`CheckOutcome`). The runner never decides pass or fail: it records how
//! each process ended, and `gate::decide` turns that into a verdict.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{CheckKind, Origin, ParserChoice};
use crate::diagnostics::Diagnostic;

/// One process to start: a check with a `{files}` list too long for one
/// command line becomes several invocations, and every one must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// `argv[0]` is the program (a name looked up on `PATH`, or a path).
    /// Not `String`: file names need not be UTF-8.
    pub argv: Vec<OsString>,
}

impl Invocation {
    pub fn new<I: IntoIterator<Item = S>, S: Into<OsString>>(argv: I) -> Invocation {
        Invocation {
            argv: argv.into_iter().map(Into::into).collect(),
        }
    }

    /// The arguments as text, for people and JSON (lossy for non-UTF-8).
    pub fn display(&self) -> Vec<String> {
        self.argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }
}

/// A check resolved for this run: commands expanded, paths absolute.
#[derive(Debug, Clone)]
pub struct CheckPlan {
    pub name: String,
    pub kind: CheckKind,
    pub origin: Origin,
    /// At least one. Run in order; a failing batch does not stop the rest.
    pub invocations: Vec<Invocation>,
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// Variables added to phasegate's own environment for the child; a
    /// later one wins over an earlier one of the same name.
    pub env: Vec<(String, std::ffi::OsString)>,
    /// For the whole check, all invocations together.
    pub timeout: Duration,
    /// Where the full, interleaved output is written.
    pub log_path: PathBuf,
    /// The size at which the log is cut (see `LOG_LIMIT`): the output up
    /// to it, then its last bytes.
    pub log_limit: u64,
    /// How the log is made: as the repository's sharing asks of what is
    /// created under its git directory.
    pub log_sharing: crate::state::Sharing,
    pub parser: ParserChoice,
    /// Lines and paths in diagnostics are made relative to this directory.
    pub root: PathBuf,
    /// The `PATH` the child sees, where its program is looked up.
    pub path: Option<std::ffi::OsString>,
    /// The `GOWORK` the child sees (its own `env`'s, else phasegate's):
    /// the `go.work` whose modules the diagnostics look packages up in.
    pub go_work: Option<std::ffi::OsString>,
    /// A file where each process group the check starts is recorded while
    /// it runs, for a later run to stop if phasegate is killed meanwhile
    /// (see `stop_recorded_groups`).
    pub groups: Option<PathBuf>,
    /// Why phasegate left the check's environment as it is rather than
    /// run it in the project's Python virtual environment (see
    /// `enter_venv`), for a missing program to be explained.
    pub left_venv: Option<super::LeftAlone>,
}

/// How a check's process(es) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Termination {
    /// Every invocation exited; the code is the first non-zero one, or 0.
    Exited(i32),
    /// A process was killed by a signal it did not ask for (a crash).
    Signaled(i32),
    /// The check ran past its timeout; its process group was killed.
    TimedOut(Duration),
    /// The program was not found before spawning (tier 1). `unused_venv`:
    /// the project's virtual environment has it, and why the check did
    /// not run in it.
    Missing {
        program: String,
        unused_venv: Option<super::UnusedVenv>,
    },
    /// The process could not be started, or its output not read (tier 2).
    SpawnFailed(String),
    /// phasegate itself was interrupted (SIGINT, SIGTERM, SIGHUP) and killed
    /// the check's process group.
    Interrupted,
}

/// A verifier's answer, read from its standard output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifierReply {
    /// The one JSON object the protocol asks for.
    Answer(VerifierAnswer),
    /// Anything else, with what was wrong with it (tier 3).
    Malformed(String),
}

/// `{"verdict": "pass" | "fail", "findings": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifierAnswer {
    pub pass: bool,
    pub findings: Vec<Diagnostic>,
    /// Why the answer of another batch of files could not be read, when
    /// this one is a fail: the fail stands, and that batch's review did
    /// not finish (see `verifier::merge`).
    pub unread: Option<String>,
}

/// What the runner kept of a check's output: the first and the last bytes,
/// with the total size, so memory stays bounded whatever the tool prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Every byte the check printed, including the ones not kept.
    pub total_bytes: u64,
}

impl CapturedOutput {
    /// Whether bytes between `head` and `tail` were dropped.
    pub fn truncated(&self) -> bool {
        self.total_bytes > (self.head.len() + self.tail.len()) as u64
    }

    /// The last `max_lines` lines of output, decoded lossily, ANSI escapes
    /// removed.
    pub fn tail_lines(&self, max_lines: usize) -> Vec<String> {
        // Head and tail are disjoint: when nothing was dropped between them
        // they read as one text.
        let joined;
        let source: &[u8] = if self.truncated() {
            &self.tail
        } else {
            joined = [self.head.as_slice(), self.tail.as_slice()].concat();
            &joined
        };
        let text = crate::diagnostics::strip_ansi(&String::from_utf8_lossy(source));
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect();
        let start = lines.len().saturating_sub(max_lines);
        lines[start..].iter().map(|l| (*l).to_string()).collect()
    }
}

/// The result of running one plan.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    pub name: String,
    pub termination: Termination,
    pub duration: Duration,
    pub output: CapturedOutput,
    pub log_path: PathBuf,
    /// Diagnostics parsed from the output as it streamed.
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics beyond the per-check cap, counted but not kept.
    pub dropped_diagnostics: usize,
    /// The parser that read the output, when one found anything.
    pub parser_used: Option<&'static str>,
    /// The output's format reports errors under exit 0 (`go vet -json`):
    /// its error diagnostics fail the check.
    pub errors_fail: bool,
    /// For `kind = "verifier"` checks that exited.
    pub verifier: Option<VerifierReply>,
    /// The status of a batch of files that exited non-zero (the first
    /// such), when another did not finish (crashed, could not start, or
    /// the check timed out): `termination` says that end, and this
    /// failure stands beside it.
    pub failed_batch: Option<i32>,
    /// The argv of each invocation, as planned.
    pub invocations: Vec<Invocation>,
    /// How each invocation that was started ended, in order: one per
    /// batch of files, fewer when a timeout or an interrupt stopped the
    /// check before its last batch. `termination` sums them up; these
    /// let a person replay and judge any one batch.
    pub batches: Vec<BatchOutcome>,
}

/// How one invocation of a check (one batch of its files) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOutcome {
    pub termination: Termination,
    pub duration: Duration,
    /// Where its output starts in the check's log as written: how many
    /// bytes the check had printed before it, moved past the note where
    /// the log was cut; `None` when the cut left its start out.
    pub output_from: Option<u64>,
    /// Its tool found no test among its files, and another batch's tool
    /// ran the tests among its own: its exit status does not count, as it
    /// would not have been the tool's with every file on one command line.
    pub found_no_tests: bool,
}

/// Progress reported while checks run, for a live display.
#[derive(Debug, Clone)]
pub enum RunEvent {
    Started {
        name: String,
    },
    Finished {
        name: String,
        ok: bool,
        duration: Duration,
    },
}
