//! `phasegate diagnostics parse`: a tool's output in, diagnostics out.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cli::{DiagnosticsCommand, ReportFormat};
use crate::config::{CheckKind, Filter, OnFailure, Origin, ParserChoice};
use crate::context::Context;
use crate::diagnostics::{Extracted, Extractor, PARSER_NAMES};
use crate::exit::ExitCode;
use crate::gate::{CheckResult, CheckStatus, Effect};
use crate::report;

use super::Streams;

pub fn run(ctx: &Context, command: &DiagnosticsCommand, io: &mut Streams<'_>) -> ExitCode {
    let DiagnosticsCommand::Parse {
        parser,
        command: program,
        cwd,
        format,
        file,
    } = command;
    // Under `--format json` an error is still one JSON document on stdout,
    // and a CI format still one report, the error its finding: an upload
    // step after it finds why there is nothing, not an empty file.
    let fail = |io: &mut Streams<'_>, code: ExitCode, message: String| {
        match format {
            ReportFormat::Json => {
                let _ = report::json::render_error(&message, io.out);
            }
            ReportFormat::Human => {
                let _ = writeln!(io.err, "error: {message}");
            }
            other => {
                let _ = writeln!(io.err, "error: {message}");
                let error = if code == ExitCode::Usage {
                    super::usage_error(message)
                } else {
                    super::internal_message(message)
                };
                let verdict =
                    crate::gate::Verdict::stopped(crate::config::Profile::default(), None, error);
                let _ = super::render_report(&verdict, *other, ctx, false, io.out);
            }
        }
        code
    };
    let choice = match parser_choice(parser) {
        Ok(choice) => choice,
        Err(message) => return fail(io, ExitCode::Usage, message),
    };
    let tool_dir: PathBuf = cwd
        .as_ref()
        .map_or_else(|| ctx.cwd.clone(), |d| ctx.cwd.join(d));
    if !tool_dir.is_dir() {
        let message = format!(
            "`--cwd {}` is not a directory: name the directory the tool ran in",
            cwd.as_deref().unwrap_or(&tool_dir).display()
        );
        return fail(io, ExitCode::Usage, message);
    }
    let root = match crate::git::discover(&tool_dir) {
        Ok(Some(repo)) => repo.root,
        _ => std::fs::canonicalize(&tool_dir).unwrap_or_else(|_| tool_dir.clone()),
    };
    let tool_dir = std::fs::canonicalize(&tool_dir).unwrap_or(tool_dir);
    let input = match open_input(ctx, file.as_deref()) {
        Ok(input) => input,
        Err(message) => return fail(io, ExitCode::Usage, message),
    };
    // Without a program to go by, `auto` lets the output decide.
    let argv: Vec<String> = match program.as_deref().map(shlex::split) {
        None => Vec::new(),
        Some(Some(argv)) => argv,
        Some(None) => {
            let message = "`--command` has unbalanced quotes".to_string();
            return fail(io, ExitCode::Usage, message);
        }
    };
    // A saved log does not say which `go.work` its go used: phasegate's
    // own `GOWORK` stands for it, as it does for the checks a run starts.
    let extractor = Extractor::new("", Origin::Runtime, &choice, &argv, &root, &tool_dir)
        .go_work(ctx.go_work.as_deref());
    let Extracted {
        diagnostics,
        dropped,
        ..
    } = match extractor.read_all(input) {
        Ok(extracted) => extracted,
        Err(e) => {
            let message = match file.as_deref() {
                Some(path) if path.as_os_str() != "-" => {
                    format!("failed to read `{}`: {e}", path.display())
                }
                _ => format!("failed to read standard input: {e}"),
            };
            return fail(io, ExitCode::Incomplete, message);
        }
    };
    // Its own JSON (`{"diagnostics", "dropped"}`) and human forms; the
    // CI formats render the diagnostics as a run's would.
    let written = match format {
        ReportFormat::Json => report::diagnostics::render_json(&diagnostics, dropped, io.out),
        ReportFormat::Human => report::diagnostics::render_human(
            &diagnostics,
            dropped,
            io.out,
            ctx.color_for(ctx.stdout_tty),
        ),
        other => {
            let kept = diagnostics.len();
            let mut verdict = crate::gate::Verdict::of_diagnostics(diagnostics);
            if dropped > 0 {
                verdict
                    .checks
                    .push(over_the_limit(kept, dropped, file.as_deref()));
            }
            super::render_report(&verdict, *other, ctx, false, io.out)
        }
    };
    if let Err(e) = written {
        let _ = writeln!(io.err, "error: failed to write: {e}");
    }
    ExitCode::Proceed
}

/// The reading of the output, as the check the CI formats count a
/// check's findings past its limit by (`dropped_diagnostics`): without it
/// a SARIF, JUnit, Code Quality or GitHub report of a saved log that held
/// more than the limit would list the first thousand findings as if they
/// were all. The log that has the rest is the file read, when one was.
fn over_the_limit(kept: usize, dropped: usize, file: Option<&Path>) -> CheckResult {
    CheckResult {
        name: "diagnostics parse".to_string(),
        kind: CheckKind::Custom,
        status: CheckStatus::Passed,
        on_failure: OnFailure::default(),
        effect: Effect::None,
        tier: None,
        exit_code: None,
        signal: None,
        duration_ms: 0,
        diagnostics: kept,
        dropped_diagnostics: dropped,
        filter: Filter::Nofilter,
        pre_existing: 0,
        log: file
            .filter(|path| path.as_os_str() != "-")
            .map(|path| path.display().to_string()),
        reason: None,
        skip_kind: None,
        argv: Vec::new(),
        argv_omitted: 0,
        output_tail: Vec::new(),
    }
}

/// `--parser`: `auto` or a parser's name; an unknown one is an error that
/// suggests the near miss and lists the parsers.
fn parser_choice(parser: &str) -> Result<ParserChoice, String> {
    match parser {
        "auto" => Ok(ParserChoice::Auto),
        name if PARSER_NAMES.contains(&name) => Ok(ParserChoice::Named(name.to_string())),
        other => {
            let hint = crate::config::suggest(other, PARSER_NAMES.iter().copied())
                .map_or_else(String::new, |near| format!("; did you mean `{near}`?"));
            Err(format!(
                "unknown parser `{other}`{hint} (the parsers are {})",
                PARSER_NAMES.join(", ")
            ))
        }
    }
}

/// The output to read: the file named, or standard input for none or `-`.
fn open_input(ctx: &Context, file: Option<&Path>) -> Result<Box<dyn Read>, String> {
    match file {
        None => Ok(Box::new(std::io::stdin().lock())),
        Some(path) if path.as_os_str() == "-" => Ok(Box::new(std::io::stdin().lock())),
        Some(path) if ctx.cwd.join(path).is_dir() => Err(format!(
            "`{}` is a directory: name the file that holds the tool's output, or `-` for standard input",
            path.display()
        )),
        Some(path) => std::fs::File::open(ctx.cwd.join(path))
            .map(|file| Box::new(file) as Box<dyn Read>)
            .map_err(|e| format!("failed to read `{}`: {e}", path.display())),
    }
}
