//! `phasegate diagnostics parse`: a tool's output in, diagnostics out.

use std::io::Read;
use std::path::PathBuf;

use crate::cli::{DiagnosticsCommand, ReportFormat};
use crate::config::{Origin, ParserChoice};
use crate::context::Context;
use crate::diagnostics::{Extracted, Extractor, PARSER_NAMES};
use crate::exit::ExitCode;
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
    let choice = match parser.as_str() {
        "auto" => ParserChoice::Auto,
        name if PARSER_NAMES.contains(&name) => ParserChoice::Named(name.to_string()),
        other => {
            let hint = crate::config::suggest(other, PARSER_NAMES.iter().copied())
                .map_or_else(String::new, |near| format!("; did you mean `{near}`?"));
            let _ = writeln!(
                io.err,
                "error: unknown parser `{other}`{hint}\nhelp: the parsers are {}",
                PARSER_NAMES.join(", ")
            );
            return ExitCode::Usage;
        }
    };
    let tool_dir: PathBuf = cwd
        .as_ref()
        .map_or_else(|| ctx.cwd.clone(), |d| ctx.cwd.join(d));
    let root = match crate::git::discover(&tool_dir) {
        Ok(Some(repo)) => repo.root,
        _ => std::fs::canonicalize(&tool_dir).unwrap_or_else(|_| tool_dir.clone()),
    };
    let tool_dir = std::fs::canonicalize(&tool_dir).unwrap_or(tool_dir);
    let input: Box<dyn Read> = match file.as_deref() {
        None => Box::new(std::io::stdin().lock()),
        Some(path) if path.as_os_str() == "-" => Box::new(std::io::stdin().lock()),
        Some(path) if ctx.cwd.join(path).is_dir() => {
            let _ = writeln!(
                io.err,
                "error: `{}` is a directory: name the file that holds the tool's output, or `-` for standard input",
                path.display()
            );
            return ExitCode::Usage;
        }
        Some(path) => match std::fs::File::open(ctx.cwd.join(path)) {
            Ok(file) => Box::new(file),
            Err(e) => {
                let _ = writeln!(io.err, "error: failed to read `{}`: {e}", path.display());
                return ExitCode::Usage;
            }
        },
    };

    // Without a program to go by, `auto` lets the output decide.
    let argv: Vec<String> = match program.as_deref().map(shlex::split) {
        None => Vec::new(),
        Some(Some(argv)) => argv,
        Some(None) => {
            let _ = writeln!(io.err, "error: `--command` has unbalanced quotes");
            return ExitCode::Usage;
        }
    };
    let extractor = Extractor::new("", Origin::Runtime, &choice, &argv, &root, &tool_dir);
    let Extracted {
        diagnostics,
        dropped,
        ..
    } = match extractor.read_all(input) {
        Ok(extracted) => extracted,
        Err(e) => {
            let _ = match file.as_deref() {
                Some(path) if path.as_os_str() != "-" => {
                    writeln!(io.err, "error: failed to read `{}`: {e}", path.display())
                }
                _ => writeln!(io.err, "error: failed to read standard input: {e}"),
            };
            return ExitCode::Incomplete;
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
            let verdict = crate::gate::Verdict::of_diagnostics(diagnostics);
            super::render_report(&verdict, *other, ctx, false, io.out)
        }
    };
    if let Err(e) = written {
        let _ = writeln!(io.err, "error: failed to write: {e}");
    }
    ExitCode::Proceed
}
