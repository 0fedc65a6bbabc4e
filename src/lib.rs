//! phasegate: an objective quality gate for work handed between agents and
//! people. `run` is the whole program; `main.rs` only calls it. Any error or
//! panic below becomes a verdict here, never a silent pass.

pub mod cli;
pub mod commands;
pub mod config;
pub mod context;
pub mod diagnostics;
pub mod exit;
pub mod gate;
pub mod git;
pub mod handoff;
pub mod prose;
pub mod report;
pub mod runner;
pub mod state;

use std::io::Write;
use std::panic::{self, AssertUnwindSafe};

use cli::{Cli, Command, Format};
use commands::Streams;
use exit::ExitCode;

/// Runs one command line to completion and returns its exit code.
pub fn run(cli: &Cli) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    // Buffer standard output so a panic half-way never leaves half a JSON
    // document behind: the report is written at the end, in one piece.
    let mut buffer: Vec<u8> = Vec::new();
    let result = {
        let mut io = Streams {
            out: &mut buffer,
            err: &mut err,
        };
        panic::catch_unwind(AssertUnwindSafe(|| dispatch(cli, &mut io)))
    };
    match result {
        Ok(code) => match write_out(&mut out, &buffer) {
            Ok(()) => code,
            // The report never reached its reader: a run that would
            // proceed does not.
            Err(e) => {
                let _ = writeln!(err, "error: failed to write to standard output: {e}");
                match code {
                    ExitCode::Proceed => ExitCode::Incomplete,
                    code => code,
                }
            }
        },
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            let verdict = gate::Verdict::stopped(
                config::Profile::default(),
                None,
                commands::internal_message(format!("phasegate panicked: {message}")),
            );
            let stopped = match &cli.command {
                Command::Run(args) => panic_reports(args, &verdict, &mut err),
                Command::Resume(args) if args.format == Format::Json => {
                    let mut document = Vec::new();
                    // Serialising a verdict cannot fail: it holds only
                    // strings, numbers and lists.
                    let _ = report::json::render(&verdict, &mut document);
                    Some(document)
                }
                _ => None,
            };
            match stopped {
                Some(document) => {
                    let _ = write_out(&mut out, &document);
                }
                None => {
                    let _ = write_out(&mut out, &buffer);
                }
            }
            let _ = writeln!(
                err,
                "error: phasegate hit an internal error and could not finish: {message}\n\
                 The verdict is `incomplete` (exit 3). This is a bug in phasegate; please report it."
            );
            ExitCode::Incomplete
        }
    }
}

/// After a panic in `run`: every report asked for (`--format`, `--output`,
/// `--report`) says why the run stopped, as for any other stop. What goes
/// to standard output, `None` when the human report already went there
/// (its part written before the panic stands).
fn panic_reports(
    args: &cli::RunArgs,
    verdict: &gate::Verdict,
    err: &mut dyn Write,
) -> Option<Vec<u8>> {
    let human = args.format == cli::ReportFormat::Human && args.output.is_none();
    let mut document = Vec::new();
    let reports = commands::Reports::parse(args.format, args.output.clone(), &args.reports);
    match (reports, context::Context::from_env()) {
        (Ok(reports), Ok(ctx)) => {
            // Recorded as a critical intervention, as any internal failure
            // is; a panic in that too is caught, and the reports still go.
            let recorded = panic::catch_unwind(AssertUnwindSafe(|| {
                let mut recorded = verdict.clone();
                let mut said = Vec::new();
                let dir = commands::state::state_dir_for(&ctx);
                commands::record::record_stopped(
                    &dir,
                    &mut recorded,
                    ctx.session.as_deref(),
                    &mut said,
                );
                (recorded, said)
            }));
            let verdict = match &recorded {
                Ok((recorded, said)) => {
                    let _ = err.write_all(said);
                    recorded
                }
                Err(_) => verdict,
            };
            let mut io = Streams {
                out: &mut document,
                err,
            };
            let _ = commands::emit_stopped_reports(verdict, &reports, &ctx, &mut io);
        }
        _ if args.format == cli::ReportFormat::Json => {
            let _ = report::json::render(verdict, &mut document);
        }
        _ => return None,
    }
    (!human).then_some(document)
}

fn dispatch(cli: &Cli, io: &mut Streams<'_>) -> ExitCode {
    let ctx = match context::Context::from_env() {
        Ok(ctx) => ctx,
        Err(e) => {
            let _ = writeln!(io.err, "error: failed to read the current directory: {e}");
            return ExitCode::Incomplete;
        }
    };
    git::use_config_env(ctx.git_config.clone());
    git::use_attr_env(ctx.git_attributes.clone());
    git::use_named_repository(ctx.git_dir.clone(), ctx.git_work_tree.clone(), &ctx.cwd);
    state::use_lock_error(ctx.test_lock_error.clone());
    match &cli.command {
        Command::Run(args) => commands::run::run(&ctx, args, io),
        Command::Init(args) => commands::init::run(&ctx, args, io),
        Command::Hook(args) => commands::hook::run(&ctx, args, io),
        Command::Install(args) => commands::install::install(&ctx, args, io),
        Command::Uninstall(args) => commands::install::uninstall(&ctx, args, io),
        Command::Restore => commands::restore::run(&ctx, io),
        Command::Handoff(command) => commands::handoff::run(&ctx, command, io),
        Command::Diagnostics(command) => commands::diagnostics::run(&ctx, command, io),
        Command::Resume(args) => commands::resume::run(&ctx, args, io),
        Command::History(args) => commands::state::history(&ctx, args, io),
        Command::Interventions(args) => commands::state::interventions(&ctx, args, io),
    }
}

fn write_out(out: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A closed pipe on stdout is a quiet, normal end.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// A command line clap rejected. Under `--format json` stdout still gets
/// its one JSON document: a verdict for `run` and `resume`, `{"error": ...}`
/// for the other commands that print JSON. `print_error` draws clap's own
/// message on stderr.
pub fn usage_failure(args: &[String], message: &str, print_error: impl FnOnce()) -> ExitCode {
    print_error();
    let hint = dash_file_hint(args, message);
    if let Some(hint) = &hint {
        let _ = writeln!(std::io::stderr().lock(), "help: {hint}");
    }
    let command = args.first().map(String::as_str);
    // clap's message up to its usage line: the error and what it names
    // (`the following required arguments were not provided:` is followed
    // by them, one per line).
    let said: Vec<&str> = message
        .lines()
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let mut said = said.join(" ");
    if let Some(hint) = &hint {
        said = format!("{said}: {hint}");
    }
    let said = said.strip_prefix("error: ").unwrap_or(&said);
    let verdict = || {
        gate::Verdict::stopped(
            config::Profile::default(),
            None,
            commands::usage_error(said.to_string()),
        )
    };
    if command == Some("run") {
        if let Some(document) = usage_reports(args, &verdict()) {
            let _ = write_out(&mut std::io::stdout().lock(), &document);
            return ExitCode::Usage;
        }
    }
    let json_flag = raw_values(args, "--format").iter().any(|f| f == "json");
    if !json_flag {
        return ExitCode::Usage;
    }
    let mut document = Vec::new();
    match command {
        Some("run" | "resume") => {
            let _ = report::json::render(&verdict(), &mut document);
        }
        Some("history" | "interventions" | "handoff" | "diagnostics") => {
            let _ = report::json::render_error(said, &mut document);
        }
        _ => return ExitCode::Usage,
    }
    let _ = write_out(&mut std::io::stdout().lock(), &document);
    ExitCode::Usage
}

/// How to name a file that starts with `-`, when clap took one given to
/// `--files` for an option it does not know (`--files -rf` is refused as
/// `-r`): as a path, `./-rf`, which no option parser reads as an option.
fn dash_file_hint(args: &[String], message: &str) -> Option<String> {
    let rest = message.split("unexpected argument '").nth(1)?;
    let rejected = rest.split('\'').next().filter(|r| r.starts_with('-'))?;
    let words: Vec<&String> = args.iter().take_while(|a| *a != "--").collect();
    let files = words.iter().position(|w| *w == "--files")?;
    let name = words[files + 1..]
        .iter()
        .find(|w| w.starts_with(rejected))?;
    Some(format!(
        "a file whose name starts with `-` is given as a path: `--files ./{name}`"
    ))
}

/// The values a command line clap rejected gives `option`, as
/// `--option VALUE` or `--option=VALUE`, up to a `--` (after which
/// everything is a file name).
fn raw_values(args: &[String], option: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut words = args.iter().take_while(|a| *a != "--");
    while let Some(word) = words.next() {
        if word == option {
            values.extend(words.next().cloned());
        } else if let Some(value) = word
            .strip_prefix(option)
            .and_then(|rest| rest.strip_prefix('='))
        {
            values.push(value.to_string());
        }
    }
    values
}

/// The reports of a `run` command line clap rejected (`verdict` says why),
/// as far as its `--format`, `--output` and `--report` options can be
/// read: the files are written, and stdout's document is returned. `None`
/// when they cannot be read, or ask for nothing but the human report.
fn usage_reports(args: &[String], verdict: &gate::Verdict) -> Option<Vec<u8>> {
    use clap::ValueEnum;
    let format = match raw_values(args, "--format").last() {
        Some(name) => cli::ReportFormat::from_str(name, true).ok()?,
        None => cli::ReportFormat::Human,
    };
    let output = raw_values(args, "--output")
        .pop()
        .map(std::path::PathBuf::from);
    let given = raw_values(args, "--report");
    let reports = commands::Reports::parse(format, output, &given).ok()?;
    if format == cli::ReportFormat::Human && reports.output.is_none() && reports.extra.is_empty() {
        return None;
    }
    let ctx = context::Context::from_env().ok()?;
    let mut document = Vec::new();
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    let mut io = Streams {
        out: &mut document,
        err: &mut err,
    };
    commands::emit_usage_reports(verdict, &reports, &ctx, &mut io);
    Some(document)
}
