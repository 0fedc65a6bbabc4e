//! From configured checks to runnable plans: which checks run on this
//! selection of files, with which command lines, where.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::config::{CheckSpec, CommandLine, OnFailure};
use crate::runner::{expand_invocations, CheckPlan};
use crate::state::RunDir;

use super::SkipReason;

/// Whether a command passes the selected files (`{files}`).
fn takes_files(command: &CommandLine) -> bool {
    match command {
        CommandLine::Argv(argv) => argv.iter().any(|a| a == "{files}"),
        CommandLine::Shell(script) => script.contains("{files}"),
    }
}

/// The checks `PHASEGATE_SKIP` (`skip`) skips in a run that names the
/// checks it runs (`--check`, `asked`), and a note for each check named by
/// both. A check named on the command line runs: the command line asks for
/// it in so many words, and wins over the environment as `--phase` and
/// `--profile` do. Skipped, it would leave a run that was asked to verify
/// one thing passing on "no check ran"; `PHASEGATE_SKIP` stays the way to
/// let a commit through without a check.
pub fn skips(skip: &[String], asked: &[String]) -> (Vec<String>, Option<String>) {
    let (overridden, kept): (Vec<String>, Vec<String>) =
        skip.iter().cloned().partition(|name| asked.contains(name));
    let note = (!overridden.is_empty()).then(|| {
        let names: Vec<String> = overridden.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "PHASEGATE_SKIP names {}, but `--check` asks for it: it ran (the command line wins)",
            names.join(", ")
        )
    });
    (kept, note)
}

/// Resolves one check for this run, or says why it does not run.
/// `selection` holds paths relative to `root`; `path` and `go_work` are
/// phasegate's own `PATH` and `GOWORK`.
pub fn plan_check(
    spec: &CheckSpec,
    selection: &[PathBuf],
    skip: &[String],
    root: &Path,
    run_dir: &RunDir,
    path: Option<&OsStr>,
    go_work: Option<&OsStr>,
) -> Result<CheckPlan, SkipReason> {
    if spec.on_failure == OnFailure::Skip {
        return Err(SkipReason::Disabled);
    }
    if skip.iter().any(|s| s == &spec.name) {
        return Err(SkipReason::SkippedByEnv);
    }
    let matched: Vec<&PathBuf> = match &spec.file_filter {
        Some(filter) => selection.iter().filter(|f| filter.is_match(f)).collect(),
        None => selection.iter().collect(),
    };
    if spec.file_filter.is_some() && matched.is_empty() {
        return Err(SkipReason::NoMatchingFiles);
    }
    let cwd = match &spec.cwd {
        Some(dir) => root.join(dir),
        None => root.to_path_buf(),
    };
    let invocations = if takes_files(&spec.command) {
        if matched.is_empty() {
            return Err(SkipReason::NoFiles);
        }
        // Paths are relative to the root; a check that runs elsewhere gets
        // absolute ones so they still name the right files.
        let files: Vec<PathBuf> = if cwd == root {
            matched.iter().map(|f| (*f).clone()).collect()
        } else {
            matched.iter().map(|f| root.join(f)).collect()
        };
        expand_invocations(&spec.command, &files)
    } else {
        expand_invocations(&spec.command, &[])
    };
    // The value of `name` the child sees: the check's own `env` wins over
    // phasegate's (`own`), as it does for the child.
    let seen = |name: &str, own: Option<&OsStr>| {
        spec.env
            .get(name)
            .map(Into::into)
            .or_else(|| own.map(OsStr::to_os_string))
    };
    Ok(CheckPlan {
        name: spec.name.clone(),
        kind: spec.kind,
        origin: spec.origin,
        invocations,
        cwd,
        env: spec
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.into()))
            .collect(),
        timeout: spec.timeout,
        log_path: run_dir.log_path(&spec.name),
        log_limit: crate::runner::LOG_LIMIT,
        log_sharing: run_dir.sharing,
        parser: spec.parser.clone(),
        root: root.to_path_buf(),
        path: seen("PATH", path),
        // An empty `GOWORK` of its own included (go's `auto`).
        go_work: seen("GOWORK", go_work),
        groups: None,
        // Set where the check is put in a virtual environment (`runner::enter_venv`).
        left_venv: None,
    })
}
