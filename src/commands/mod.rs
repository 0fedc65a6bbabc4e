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
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::cli::ReportFormat;
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
    delivered(verdict, finish_write(written, io))
}

/// The verdict's exit code, unless a report asked for could not be written:
/// then a run that would proceed does not (3), since whoever reads the
/// report has nothing to read.
fn delivered(verdict: &Verdict, written: bool) -> ExitCode {
    match verdict.exit_code() {
        ExitCode::Proceed if !written => ExitCode::Incomplete,
        code => code,
    }
}

/// The reports a run writes: its `--format` (to stdout, or to `--output`
/// with the human report on stdout) and every `--report FORMAT=FILE`.
#[derive(Debug, Clone)]
pub struct Reports {
    pub format: ReportFormat,
    pub output: Option<PathBuf>,
    pub extra: Vec<(ReportFormat, PathBuf)>,
}

impl Reports {
    pub fn parse(
        format: ReportFormat,
        output: Option<PathBuf>,
        given: &[String],
    ) -> Result<Reports, String> {
        let mut extra = Vec::new();
        for spec in given {
            let Some((name, file)) = spec
                .split_once('=')
                .filter(|(n, f)| !n.is_empty() && !f.is_empty())
            else {
                return Err(format!(
                    "`--report {spec}` is not FORMAT=FILE (e.g. `--report sarif=phasegate.sarif`)"
                ));
            };
            let format = ReportFormat::from_str(name, true).map_err(|_| {
                format!("unknown report format `{name}`: expected one of human, json, sarif, junit, github, codequality")
            })?;
            // Standard output carries the `--format` report already: a
            // second document there would make neither readable.
            if file == "-" {
                return Err(format!(
                    "`--report {spec}` names standard output, which carries the `--format` report: give the {name} report a file, or print it with `--format {name}`"
                ));
            }
            extra.push((format, PathBuf::from(file)));
        }
        // `--output -` is standard output, where the report goes anyway.
        let output = output.filter(|p| p.as_os_str() != "-");
        // Two reports in one file: the second would overwrite the first,
        // however the path is spelt (`out.sarif`, `./out.sarif`).
        let mut files: Vec<(PathBuf, &Path, ReportFormat)> = Vec::new();
        for (format, path) in extra
            .iter()
            .map(|(f, p)| (*f, p.as_path()))
            .chain(output.as_deref().map(|p| (format, p)))
        {
            let same = lexical(path);
            if let Some((_, first, earlier)) = files.iter().find(|(p, _, _)| *p == same) {
                return Err(two_reports(first, *earlier, path, format));
            }
            files.push((same, path, format));
        }
        Ok(Reports {
            format,
            output,
            extra,
        })
    }

    /// The file `--output` names, if any: `-` is standard output.
    fn output_file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| p.as_os_str() != "-")
    }
}

/// `path` with `.` and `dir/..` taken out, as the file system resolves
/// it when no symbolic link is in the way.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The error for one file named for two reports.
fn two_reports(first: &Path, earlier: ReportFormat, path: &Path, format: ReportFormat) -> String {
    let spelt = if first == path {
        format!("`{}`", path.display())
    } else {
        format!("`{}` (as `{}`)", first.display(), path.display())
    };
    format!(
        "{spelt} is named for two reports ({} and {}): give each report its own file",
        format_name(earlier),
        format_name(format)
    )
}

/// A report format as the command line names it.
fn format_name(format: ReportFormat) -> String {
    format
        .to_possible_value()
        .map_or_else(|| format!("{format:?}"), |v| v.get_name().to_string())
}

/// Writes one report of `verdict`.
pub fn render_report(
    verdict: &Verdict,
    format: ReportFormat,
    ctx: &Context,
    terminal: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    // The CI formats have no place for a run's error but its findings.
    let shown = || report::with_error_findings(verdict);
    match format {
        ReportFormat::Human => report::human::render(verdict, out, ctx.color_for(terminal)),
        ReportFormat::Json => report::json::render(verdict, out),
        ReportFormat::Sarif => report::sarif::render(&shown(), out),
        ReportFormat::Junit => report::junit::render(&shown(), out),
        ReportFormat::Github => report::github::render(&shown(), out),
        ReportFormat::Codequality => report::codequality::render(&shown(), out),
    }
}

/// Writes the reports that go to files (`--output`, `--report`); a file
/// that cannot be written is said on stderr. Whether all were written.
fn write_report_files(
    verdict: &Verdict,
    reports: &Reports,
    ctx: &Context,
    io: &mut Streams<'_>,
) -> bool {
    let mut all = true;
    let mut to_files: Vec<(ReportFormat, &Path)> = reports
        .extra
        .iter()
        .map(|(f, p)| (*f, p.as_path()))
        .collect();
    if let Some(path) = reports.output_file() {
        to_files.push((reports.format, path));
    }
    // Where each report went: an absolute path and a relative one can
    // name one file, which `Reports::parse` cannot see.
    let mut taken: Vec<(PathBuf, &Path, ReportFormat)> = Vec::new();
    for &(format, given) in &to_files {
        let path = lexical(&ctx.cwd.join(given));
        if let Some((_, first, earlier)) = taken.iter().find(|(p, _, _)| *p == path) {
            all = false;
            let _ = writeln!(
                io.err,
                "error: the {} report was not written: {}",
                format_name(format),
                two_reports(first, *earlier, given, format)
            );
            continue;
        }
        let written = std::fs::File::create(&path).and_then(|file| {
            let mut file = std::io::BufWriter::new(file);
            render_report(verdict, format, ctx, false, &mut file)?;
            file.flush()
        });
        if let Err(e) = written {
            all = false;
            let _ = writeln!(
                io.err,
                "error: failed to write the report `{}`: {e}{}",
                path.display(),
                missing_directory(&path)
            );
        }
        taken.push((path, given, format));
    }
    all
}

/// What to do when a report's directory does not exist: phasegate does
/// not make directories nobody asked for.
fn missing_directory(path: &Path) -> String {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => format!(
            " (the directory `{}` does not exist: create it first, or name a file in an existing directory)",
            dir.display()
        ),
        _ => String::new(),
    }
}

/// Appends the GitHub step summary when a GitHub report was asked for and
/// `GITHUB_STEP_SUMMARY` names its file; whether that went well.
fn append_step_summary(
    verdict: &Verdict,
    reports: &Reports,
    ctx: &Context,
    io: &mut Streams<'_>,
) -> bool {
    let github = reports.format == ReportFormat::Github
        || reports
            .extra
            .iter()
            .any(|(f, _)| *f == ReportFormat::Github);
    let (true, Some(path)) = (github, &ctx.github_step_summary) else {
        return true;
    };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(report::github::step_summary(verdict).as_bytes()));
    if let Err(e) = appended {
        let _ = writeln!(
            io.err,
            "error: failed to append to `GITHUB_STEP_SUMMARY` `{}`: {e}",
            path.display()
        );
        return false;
    }
    true
}

/// Renders a finished verdict in every report asked for and returns its
/// exit code. A report file that cannot be written is said on stderr.
pub fn emit_reports(
    verdict: &Verdict,
    reports: &Reports,
    ctx: &Context,
    io: &mut Streams<'_>,
) -> ExitCode {
    // A report that is missing makes a run that would proceed incomplete
    // (exit 3): every report written says so, not "passed", so that what
    // an agent or a person reads agrees with the exit code. The files go
    // first; the step summary after them says so when one failed, and
    // when the step summary fails, the files are written again saying so.
    let proceeds = verdict.exit_code() == ExitCode::Proceed;
    let mut files = write_report_files(verdict, reports, ctx, io);
    let summary = if proceeds && !files {
        append_step_summary(&missing_report(verdict), reports, ctx, io)
    } else {
        append_step_summary(verdict, reports, ctx, io)
    };
    if proceeds && files && !summary {
        files = write_report_files(&missing_report(verdict), reports, ctx, io);
    }
    let on_stdout = if reports.output_file().is_some() {
        ReportFormat::Human
    } else {
        reports.format
    };
    let missing;
    let shown = if proceeds
        && !(files && summary)
        && matches!(on_stdout, ReportFormat::Human | ReportFormat::Json)
    {
        missing = missing_report(verdict);
        &missing
    } else {
        verdict
    };
    let written = render_report(shown, on_stdout, ctx, ctx.stdout_tty, io.out);
    let stdout = finish_write(written, io);
    delivered(verdict, files && stdout && summary)
}

/// `verdict` as it stands when a report asked for could not be written:
/// incomplete, and why.
fn missing_report(verdict: &Verdict) -> Verdict {
    let mut changed = verdict.clone();
    changed.status = crate::gate::Status::Incomplete;
    changed.next = crate::gate::Next::Resume;
    changed.fail_open = false;
    changed.notes.push(
        "a report asked for could not be written (said on standard error): the run is incomplete"
            .to_string(),
    );
    changed
}

/// Renders the verdict of a run that stopped before its checks in every
/// report asked for: a CI format on stdout and in its files says why the
/// run stopped; JSON goes to stdout, and people read the error on stderr.
pub fn emit_stopped_reports(
    verdict: &Verdict,
    reports: &Reports,
    ctx: &Context,
    io: &mut Streams<'_>,
) -> ExitCode {
    let files = write_report_files(verdict, reports, ctx, io);
    let summary = append_step_summary(verdict, reports, ctx, io);
    let on_stdout = reports.output_file().is_none().then_some(reports.format);
    if let Some(
        format @ (ReportFormat::Sarif
        | ReportFormat::Junit
        | ReportFormat::Github
        | ReportFormat::Codequality),
    ) = on_stdout
    {
        let written = render_report(verdict, format, ctx, false, io.out);
        let stdout = finish_write(written, io);
        return delivered(verdict, files && summary && stdout);
    }
    let code = emit_stopped(verdict, on_stdout == Some(ReportFormat::Json), ctx, io);
    if files && summary {
        code
    } else {
        delivered(verdict, false)
    }
}

/// Renders the verdict of a `run` whose command line could not be read,
/// whose error is on stderr already: every report file asked for, the step
/// summary, and a JSON or CI document on stdout, so an upload step finds
/// a report saying why nothing was checked. Never the human report, which
/// would say the error twice.
pub fn emit_usage_reports(
    verdict: &Verdict,
    reports: &Reports,
    ctx: &Context,
    io: &mut Streams<'_>,
) {
    write_report_files(verdict, reports, ctx, io);
    append_step_summary(verdict, reports, ctx, io);
    if reports.output_file().is_none() && reports.format != ReportFormat::Human {
        let written = render_report(verdict, reports.format, ctx, false, io.out);
        finish_write(written, io);
    }
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
    delivered(verdict, finish_write(written, io))
}

/// Flushes what was written to stdout; whether it all got there. A closed
/// pipe (`phasegate run | head`) is a normal way to stop reading, not an
/// error.
fn finish_write(written: std::io::Result<()>, io: &mut Streams<'_>) -> bool {
    match written.and_then(|()| io.out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(e) => {
            let _ = writeln!(io.err, "error: failed to write the report: {e}");
            false
        }
        Ok(()) => true,
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
