//! Glue, one file per subcommand: call the stages in order, hand the result
//! to `report`, return an exit code. Shared helpers for stopping early live
//! here.

pub mod diagnostics;
pub mod handoff;
pub mod hook;
pub mod init;
pub mod install;
pub mod record;
pub mod restore;
pub mod resume;
pub mod run;
pub mod state;

use std::io::Write;

use crate::context::Context;
use crate::exit::ExitCode;
use crate::gate::{ErrorProblem, Verdict, VerdictError};
use crate::report;

/// Where a command writes: standard output and standard error.
pub struct Streams<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

/// Renders a finished verdict and returns its exit code.
pub fn emit(verdict: &Verdict, json: bool, ctx: &Context, io: &mut Streams<'_>) -> ExitCode {
    let written = if json {
        report::json::render(verdict, io.out)
    } else {
        report::human::render(verdict, io.out, ctx.color_for(ctx.stdout_tty))
    };
    finish_write(written, io);
    verdict.exit_code()
}

/// Renders the verdict of a run that stopped before its checks: JSON on
/// stdout, or the error on stderr for people.
pub fn emit_stopped(
    verdict: &Verdict,
    json: bool,
    ctx: &Context,
    io: &mut Streams<'_>,
) -> ExitCode {
    let written = if json {
        report::json::render(verdict, io.out)
    } else {
        report::human::render(verdict, io.err, ctx.color_for(ctx.stderr_tty))
    };
    finish_write(written, io);
    verdict.exit_code()
}

fn finish_write(written: std::io::Result<()>, io: &mut Streams<'_>) {
    match written {
        // A closed pipe (`phasegate run | head`) is a normal way to stop
        // reading, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            let _ = writeln!(io.err, "error: failed to write the report: {e}");
        }
        Ok(()) => {
            let _ = io.out.flush();
        }
    }
}

/// The repository's work tree, or the current directory outside one; a
/// repository that cannot be used is reported and ends the command.
pub fn project_root(ctx: &Context, io: &mut Streams<'_>) -> Result<std::path::PathBuf, ExitCode> {
    match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => Ok(repo.root),
        Ok(None) => Ok(ctx.cwd.clone()),
        Err(e) => {
            let _ = writeln!(io.err, "error: {e}");
            Err(ExitCode::Usage)
        }
    }
}

pub fn usage_error(message: String) -> VerdictError {
    VerdictError {
        kind: "usage",
        message,
        problems: Vec::new(),
    }
}

pub fn internal_message(message: String) -> VerdictError {
    VerdictError {
        kind: "internal",
        message,
        problems: Vec::new(),
    }
}

/// An environment or internal failure, with its chain of causes.
pub fn internal_error(error: &dyn std::error::Error) -> VerdictError {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    internal_message(message)
}

pub fn config_error(error: &crate::config::ConfigError) -> VerdictError {
    VerdictError {
        kind: "config",
        message: error.to_string(),
        problems: error
            .problems()
            .into_iter()
            .map(|p| ErrorProblem {
                message: p.message,
                help: p.help,
                file: p.location.as_ref().map(|l| l.file.clone()),
                line: p.location.as_ref().map(|l| l.line),
                column: p.location.as_ref().map(|l| l.column),
            })
            .collect(),
    }
}
