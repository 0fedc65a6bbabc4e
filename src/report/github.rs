//! GitHub Actions workflow commands (`::error file=…,line=…::message`) and
//! the Markdown step summary. GitHub shows at most 10 errors, 10 warnings
//! and 10 notices per step as annotations, so the change's own findings go
//! first, and a last notice says how many more there are.

use std::io::{self, Write};

use crate::diagnostics::{code_apart, Diagnostic, Severity};
use crate::gate::{CheckStatus, Effect, Verdict};

use super::text::visible;

/// Annotations of one kind GitHub shows per step.
const PER_KIND: usize = 10;
/// GitHub takes at most 1 MiB of step summary per step.
pub const MAX_SUMMARY_BYTES: usize = 1024 * 1024;

/// Escapes a command's message: `%`, CR and LF.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: the message's escapes, and `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// `title` as GitHub shows it in one line: each run of control
/// characters (and bidirectional overrides) becomes one space, where
/// `\x1b` spelled out would only be noise in the annotation's heading.
fn readable(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut gap = false;
    for c in title.chars() {
        if super::text::obeyed(c) {
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        out.push(c);
    }
    out
}

/// An error from a check the gate let through is annotated as a warning.
fn annotated(severity: Severity, let_through: bool) -> Severity {
    match severity {
        Severity::Error if let_through => Severity::Warning,
        other => other,
    }
}

fn kind(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note | Severity::Info => "notice",
    }
}

/// The annotation of `d`; `let_through` says its check held nothing back,
/// which an error's annotation then shows as a warning.
fn command(d: &Diagnostic, let_through: bool) -> String {
    let mut properties = Vec::new();
    if let Some(file) = &d.file {
        // The path as it is, for GitHub to find the file: the line
        // breaks and tabs a file name may hold are escaped as the
        // workflow command wants them (or kept), not made visible, which
        // would name another file.
        properties.push(format!(
            "file={}",
            escape_property(&visible(file, &['\n', '\r', '\t']))
        ));
        if let Some(line) = d.line {
            properties.push(format!("line={line}"));
            if let Some(end) = d.end_line {
                properties.push(format!("endLine={end}"));
            }
            if let Some(col) = d.column {
                properties.push(format!("col={col}"));
            }
            if let (Some(end), true) = (d.end_column, d.end_line.is_none_or(|e| e == line)) {
                properties.push(format!("endColumn={end}"));
            }
        }
    }
    let mut title = if d.check.is_empty() {
        "phasegate".to_string()
    } else {
        d.check.clone()
    };
    // GitHub shows the title above the message: a code the message
    // begins with (`ModuleNotFoundError: ...`) is said there.
    if let Some(code) = code_apart(d) {
        title.push_str(&format!(" {code}"));
    }
    if d.pre_existing {
        title.push_str(" (pre-existing)");
    }
    if let_through && d.severity == Severity::Error {
        title.push_str(" (does not block)");
    }
    properties.push(format!("title={}", escape_property(&readable(&title))));
    // Line breaks are escaped as the workflow command wants them, and
    // GitHub shows them as such in the annotation.
    format!(
        "::{} {}::{}",
        kind(annotated(d.severity, let_through)),
        properties.join(","),
        escape_data(&visible(&super::text::message(d), &['\n', '\r', '\t']))
    )
}

pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    // The handoff documents' warnings are annotated too, after the
    // findings of the same severity.
    let warnings = super::handoff_warnings(verdict, Severity::Warning);
    let mut ordered: Vec<(usize, &Diagnostic, bool)> = verdict
        .diagnostics
        .iter()
        .chain(&warnings)
        .enumerate()
        .map(|(i, d)| (i, d, super::let_through(verdict, d)))
        .collect();
    ordered.sort_by_key(|(i, d, through)| (d.pre_existing, annotated(d.severity, *through), *i));
    let mut shown = [0usize; 3];
    let mut hidden = [0usize; 3];
    let slot = |s: Severity| match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Note | Severity::Info => 2,
    };
    for (_, d, through) in ordered {
        let k = slot(annotated(d.severity, through));
        // One notice is kept for the closing count.
        let room = if k == 2 { PER_KIND - 1 } else { PER_KIND };
        if shown[k] < room {
            writeln!(out, "{}", command(d, through))?;
            shown[k] += 1;
        } else {
            hidden[k] += 1;
        }
    }
    // What a check found past its limit was counted, never kept: no
    // report has it, and the notice must not say otherwise.
    let dropped: usize = verdict.checks.iter().map(|c| c.dropped_diagnostics).sum();
    let kept = verdict.diagnostics.len();
    if hidden.iter().any(|n| *n > 0) || dropped > 0 {
        let sarif = if kept > super::sarif::MAX_RESULTS {
            "the SARIF report the 25,000 most important"
        } else {
            "the SARIF report too"
        };
        let rest = if dropped > 0 {
            format!(
                "the verdict has the {kept} kept ({sarif}); {dropped} more were counted but not kept, over their checks' limit of findings (checks[].dropped_diagnostics)"
            )
        } else if kept > super::sarif::MAX_RESULTS {
            format!("the verdict has them all ({sarif})")
        } else {
            "the verdict and the SARIF report have them all".to_string()
        };
        writeln!(
            out,
            "::notice title=phasegate::{}",
            escape_data(&format!(
                "{} more error(s), {} warning(s) and {} note(s) are not annotated (GitHub shows 10 of each per step); {rest}",
                hidden[0], hidden[1], hidden[2]
            ))
        )?;
    }
    // The notes say why a run is blocked (the same errors run after run)
    // or let through (the fast profile failing open): no annotation holds
    // them, and this log is what a person reads of the step. Each is a
    // line of plain text, never a workflow command.
    for note in &verdict.notes {
        writeln!(
            out,
            "phasegate: note: {}",
            visible(&note.replace('\n', " "), &[])
        )?;
    }
    let mut counts = format!("{kept} diagnostic(s)");
    if dropped > 0 {
        counts.push_str(&format!(", {dropped} more not kept"));
    }
    if !warnings.is_empty() {
        counts.push_str(&format!(", {} handoff warning(s)", warnings.len()));
    }
    writeln!(out, "phasegate: {} ({counts})", verdict.status.as_str())
}

/// `text` as a Markdown code span, where nothing is markup: fenced with
/// one backtick more than its longest run of them, padded with a space
/// where it starts or ends with one (the Markdown spec strips one space each
/// side); in a table cell `|` is escaped, the one character GitHub's
/// tables split on even inside a code span.
fn code_span(text: &str, in_table: bool) -> String {
    let text = visible(text, &[]);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.is_empty()
        || text.starts_with('`')
        || text.ends_with('`')
        || (text.starts_with(' ') && text.ends_with(' '))
    {
        " "
    } else {
        ""
    };
    let body = if in_table {
        text.replace('|', "\\|")
    } else {
        text.into_owned()
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// `text` as Markdown that shows it as it is: every ASCII punctuation
/// character that can be markup (`<b>`, `&amp;`, `**`, `|`, a `#` that
/// would start a heading) backslash-escaped, except that spans between
/// pairs of backticks stay code spans, as phasegate writes names.
fn markdown_text(text: &str) -> String {
    let text = visible(text, &[]);
    let parts: Vec<&str> = text.split('`').collect();
    // An odd number of backticks pairs up with nothing: all of it is text.
    let spans = parts.len() % 2 == 1;
    let mut out = String::with_capacity(text.len());
    for (i, part) in parts.iter().enumerate() {
        if spans && i % 2 == 1 {
            out.push_str(&code_span(part, false));
            continue;
        }
        if !spans && i > 0 {
            out.push_str("\\`");
        }
        for c in part.chars() {
            if matches!(
                c,
                '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '!' | '#'
            ) {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// The Markdown step summary, under GitHub's 1 MiB.
pub fn step_summary(verdict: &Verdict) -> String {
    let mut out = format!(
        "## phasegate: {} — phase {}\n\n| check | status | diagnostics |\n|---|---|---|\n",
        verdict.status.as_str(),
        code_span(verdict.phase.as_deref().unwrap_or("-"), false)
    );
    for check in &verdict.checks {
        // A check that did not pass but lets the gate proceed (one that
        // only warns, or one the fast profile lets through when it could
        // not finish) is a warning, as in the human report: a red cross
        // beside a run that passed says the opposite of the verdict.
        let mark = match check.status {
            CheckStatus::Passed => "✅",
            CheckStatus::Skipped => "⏭️",
            CheckStatus::Warned => "⚠️",
            _ if matches!(check.effect, Effect::Warn | Effect::FailOpen) => "⚠️",
            _ => "❌",
        };
        out.push_str(&format!(
            "| {} | {mark} {} | {} |\n",
            code_span(&check.name, true),
            check.status.as_str(),
            check.diagnostics
        ));
    }
    if !verdict.summary.is_empty() {
        out.push_str("\n### Top problems\n\n");
        for line in &verdict.summary {
            out.push_str(&format!("- {}\n", code_span(line, false)));
        }
    }
    for note in &verdict.notes {
        out.push_str(&format!(
            "\n> {}\n",
            markdown_text(&note.replace('\n', " "))
        ));
    }
    if out.len() > MAX_SUMMARY_BYTES {
        crate::diagnostics::cut_bytes(&mut out, MAX_SUMMARY_BYTES - 64);
        out.push_str("\n\n… cut to GitHub's 1 MiB\n");
    }
    out
}
