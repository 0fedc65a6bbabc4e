//! `phasegate resume`: run again only the checks the last run left failed
//! or incomplete, with its phase, profile, workflow and files, and carry
//! its passes into the new verdict.

use std::path::PathBuf;

use crate::cli::{Format, ResumeArgs};
use crate::context::Context;
use crate::exit::ExitCode;

use super::run::{execute, RunRequest, SelectionRequest};
use super::Streams;

pub fn run(ctx: &Context, args: &ResumeArgs, io: &mut Streams<'_>) -> ExitCode {
    let runs = match super::state::read_runs(ctx) {
        Ok(runs) => runs,
        Err(message) => {
            let _ = writeln!(io.err, "error: {message}");
            return ExitCode::Incomplete;
        }
    };
    let Some(last) = runs.last() else {
        let _ = writeln!(
            io.err,
            "error: no run recorded yet: nothing to resume; `phasegate run` first"
        );
        return ExitCode::Usage;
    };
    let again: Vec<String> = last
        .checks
        .iter()
        .filter(|c| {
            // The state file keeps a check's status as people read it
            // ("timed out"); the verdict's spelling is taken too.
            matches!(
                c.status.as_str(),
                "failed" | "missing" | "timed out" | "timed_out" | "crashed"
            )
        })
        .map(|c| c.name.clone())
        .collect();
    if again.is_empty() {
        let _ = writeln!(
            io.err,
            "the last run ({}, {}) left nothing failed or incomplete: nothing to resume",
            last.run_id, last.status
        );
        return ExitCode::Proceed;
    }
    let selection = match last.selection.mode.as_str() {
        "staged" => SelectionRequest::Staged,
        "range" => match (&last.selection.from, &last.selection.to) {
            (Some(from), Some(to)) => SelectionRequest::Range {
                from: from.clone(),
                to: to.clone(),
            },
            _ => SelectionRequest::Default,
        },
        "files" => {
            // Recorded relative to the root; given relative to the cwd.
            let root = crate::git::discover(&ctx.cwd)
                .ok()
                .flatten()
                .map_or_else(|| ctx.cwd.clone(), |r| r.root);
            SelectionRequest::Files(
                last.selection
                    .files
                    .iter()
                    .map(|f| root.join(f))
                    .collect::<Vec<PathBuf>>(),
            )
        }
        "all" => match &last.selection.to {
            // Every file of a pushed commit.
            Some(commit) => SelectionRequest::AllOf(commit.clone()),
            None => SelectionRequest::All,
        },
        _ => SelectionRequest::All,
    };
    let request = RunRequest {
        phase: Some(last.phase.clone()),
        profile: Some(last.profile.clone()),
        workflow: last.workflow.clone(),
        checks: again,
        selection,
        format: if args.format == Format::Json {
            crate::cli::ReportFormat::Json
        } else {
            crate::cli::ReportFormat::Human
        },
        output: None,
        reports: Vec::new(),
        jobs: args.jobs,
        config_from_ref: None,
        resume_of: Some(last.clone()),
    };
    execute(ctx, &request, io)
}
