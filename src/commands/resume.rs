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
    let json = args.format == Format::Json;
    // Under `--format json` a resume that cannot start still answers with
    // one verdict on stdout, as `run` does.
    let stop = |io: &mut Streams<'_>, error: crate::gate::VerdictError| {
        let verdict = crate::gate::Verdict::stopped(crate::config::Profile::default(), None, error);
        super::emit_stopped(&verdict, json, ctx, io)
    };
    let runs = match super::state::read_runs(ctx) {
        Ok(runs) => runs,
        Err(message) => return stop(io, super::internal_message(message)),
    };
    let Some(last) = runs.last() else {
        return stop(
            io,
            super::usage_error(
                "no run recorded yet: nothing to resume; `phasegate run` first".to_string(),
            ),
        );
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
        // Its verdict stands: under `--format json`, that is the answer.
        if json {
            let saved = super::state::state_dir_for(ctx)
                .join("runs")
                .join(&last.run_id)
                .join("verdict.json");
            if let Ok(bytes) = std::fs::read(&saved) {
                let _ = io.out.write_all(&bytes);
            }
        }
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
