//! Handoff reports: validation results (miette snippets for people, JSON
//! for programs) and the retry feedback an agent reads.

use std::io::{self, Write};

use miette::{
    LabeledSpan, MietteError, MietteSpanContents, NamedSource, SourceCode, SourceSpan, SpanContents,
};

use crate::handoff::feedback::{Feedback, NoRunOfPhase};
use crate::handoff::HandoffReport;

/// `{"handoffs": [...]}`.
pub fn render_json(reports: &[(HandoffReport, String)], out: &mut dyn Write) -> io::Result<()> {
    let list: Vec<&HandoffReport> = reports.iter().map(|(r, _)| r).collect();
    serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "handoffs": list }))
        .map_err(io::Error::other)?;
    writeln!(out)
}

/// How many errors of one document are drawn on its text.
const MAX_DRAWN: usize = 20;

/// A document as a report names it: its path, id and stage. A document
/// whose frontmatter could not be parsed may have `id:` and `stage:`
/// lines that are fine: nothing of it was read, and the name says so
/// rather than that it has no id. `id_error` says whether an error is
/// about its `id` (a required field is either read or an error).
pub(super) fn document_name(
    path: &str,
    id: Option<&str>,
    stage: Option<&str>,
    id_error: bool,
) -> String {
    let clean = super::text::line;
    if id.is_none() && stage.is_none() && !id_error {
        return format!("{} (frontmatter not parsed)", clean(path));
    }
    format!(
        "{} ({}, {})",
        clean(path),
        clean(id.unwrap_or("no id")),
        clean(stage.unwrap_or("no stage"))
    )
}

/// One line per valid document. An invalid one is drawn with its errors
/// labelled when `terminal` (a person reads it), and its errors past the
/// drawn ones are listed below it; otherwise (a pipe, an editor, a CI log)
/// it is a heading and one `path:line:col error message` line per error,
/// as ruff's concise output and eslint's `unix` format are read. Either
/// way each error is said once. Warnings are one line each.
pub fn render_human(
    reports: &[(HandoffReport, String)],
    out: &mut dyn Write,
    color: bool,
    terminal: bool,
) -> io::Result<()> {
    if reports.is_empty() {
        return writeln!(
            out,
            "no handoff documents to validate: none is tracked under `[handoff] paths` (`git add` a new one, or name it)"
        );
    }
    for (report, text) in reports {
        // A terminal obeys control characters: what is written around the
        // document goes through `clean`, and the document itself, which
        // miette draws, through `drawable`.
        let clean = super::text::line;
        let what = document_name(
            &report.path,
            report.id.as_deref(),
            report.stage.as_deref(),
            report.errors.iter().any(|e| e.field == "id"),
        );
        let listed = if report.valid {
            let escalate = if report.escalate {
                " — out of retries: a person is needed"
            } else {
                ""
            };
            writeln!(out, "✓ {what}{escalate}")?;
            &[][..]
        } else if terminal {
            draw(report, text, &what, out, color);
            report.errors.get(MAX_DRAWN..).unwrap_or_default()
        } else {
            let n = report.errors.len();
            writeln!(
                out,
                "✗ {what}: invalid, {n} error{}",
                if n == 1 { "" } else { "s" }
            )?;
            &report.errors[..]
        };
        for e in listed {
            writeln!(
                out,
                "  {}:{}:{} error {}",
                clean(&report.path),
                e.line,
                e.column,
                clean(&e.message)
            )?;
        }
        for w in &report.warnings {
            writeln!(
                out,
                "  {}:{}:{} warning {}",
                clean(&report.path),
                w.line,
                w.column,
                clean(&w.message)
            )?;
        }
    }
    Ok(())
}

/// An invalid document drawn by miette, its first `MAX_DRAWN` errors
/// labelled on its text.
fn draw(report: &HandoffReport, text: &str, what: &str, out: &mut dyn Write, color: bool) {
    let clean = super::text::line;
    let (drawn, moved) = drawable(text);
    // Drawing thousands of errors (a list pasted over and over) takes
    // seconds and pages: the rest are listed below the drawing.
    let spans: Vec<(usize, usize)> = report
        .errors
        .iter()
        .take(MAX_DRAWN)
        .map(|e| {
            let start = moved(e.offset.min(text.len()));
            let end = moved((e.offset + e.len).min(text.len()));
            (start, end - start)
        })
        .collect();
    let places = spans
        .iter()
        .zip(&report.errors)
        .map(|(&(offset, len), e)| Place {
            offset,
            len,
            line: e.line,
            column: e.column,
        })
        .collect();
    let labels = spans.iter().zip(&report.errors).map(|(&(start, len), e)| {
        LabeledSpan::new(Some(clean(&e.message).into_owned()), start, len)
    });
    let diagnostic = miette::MietteDiagnostic::new(format!("invalid handoff document {what}"))
        .with_labels(labels)
        .with_help(match report.errors.len().saturating_sub(MAX_DRAWN) {
            0 => "fix each labelled line, then run `phasegate handoff validate` again".to_string(),
            more => format!(
                "fix each labelled line, and the {more} more errors listed below, then run `phasegate handoff validate` again"
            ),
        });
    let report_with_source = miette::Report::new(diagnostic).with_source_code(NamedSource::new(
        clean(&report.path),
        Located {
            text: drawn,
            places,
        },
    ));
    super::errors::render_diagnostic(report_with_source.as_ref(), out, color);
}

/// Where an error drawn at `offset` (`len` bytes) of the drawing is in
/// the document: its 1-based `line` and `column`, as the JSON says them.
struct Place {
    offset: usize,
    len: usize,
    line: usize,
    column: usize,
}

/// The drawing of a document, which miette heads with the line and column
/// of the error it draws first. miette counts them in what it is given:
/// in a line cut around its error (`excerpt::drawn`), the column a
/// megabyte in would read as one near the start of the cut, and any
/// column after a character of more than one byte would be counted in
/// bytes. The header says the document's own, as the list below it does.
struct Located {
    text: String,
    places: Vec<Place>,
}

impl SourceCode for Located {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        // Only without lines around it do the contents start at the span,
        // and only then are their line and column the header's.
        if context_lines_before > 0 || context_lines_after > 0 {
            return Ok(inner);
        }
        let Some((line, column)) = self
            .places
            .iter()
            .find(|p| p.offset == span.offset() && p.len == span.len())
            .and_then(|p| Some((p.line.checked_sub(1)?, p.column.checked_sub(1)?)))
        else {
            return Ok(inner);
        };
        Ok(Box::new(MietteSpanContents::new(
            inner.data(),
            *inner.span(),
            line,
            column,
            inner.line_count(),
        )))
    }
}

/// The document as miette may draw it, and where a byte offset of the
/// document lands in it. A control character (an escape sequence that
/// retitles the terminal or clears it, a bell, a backspace that rewrites
/// what came before) and a bidirectional override (text shown backwards)
/// become U+FFFD, as in `snippet`, so one character stands where one
/// stood; line breaks and tabs stay. A carriage return stays only before
/// a line feed, where miette reads the pair as one break.
fn drawable(text: &str) -> (String, impl Fn(usize) -> usize + '_) {
    let hidden = |at: usize, c: char| match c {
        '\n' | '\t' => false,
        '\r' => !text[at + 1..].starts_with('\n'),
        c => super::text::obeyed(c),
    };
    let mut drawn = String::with_capacity(text.len());
    // Where each replaced character was, and how many bytes the
    // replacement added, to move the labels after it.
    let mut shifts: Vec<(usize, usize)> = Vec::new();
    for (at, c) in text.char_indices() {
        if hidden(at, c) {
            drawn.push('\u{fffd}');
            shifts.push((at, '\u{fffd}'.len_utf8() - c.len_utf8()));
        } else {
            drawn.push(c);
        }
    }
    let moved = move |offset: usize| {
        offset
            + shifts
                .iter()
                .take_while(|(at, _)| *at < offset)
                .map(|(_, added)| added)
                .sum::<usize>()
    };
    (drawn, moved)
}

/// What `phasegate handoff stamp` did to the document at `path`, and, when
/// the stamp spent its retry budget, that a person is needed now.
pub fn render_stamp(
    path: &str,
    run_id: &str,
    changed: bool,
    after: &HandoffReport,
    out: &mut dyn Write,
) -> io::Result<()> {
    let path = clean(path);
    if changed {
        writeln!(
            out,
            "stamped `{path}` with the results of run {}",
            clean(run_id)
        )?;
    } else {
        writeln!(out, "`{path}` already says what the last run found")?;
    }
    if after.escalate {
        writeln!(
            out,
            "`{path}` is out of retries ({}): the next run ends `blocked` and a person is needed",
            crate::handoff::retries_used(after.retry_count.unwrap_or(0), after.max_retries)
        )?;
    }
    Ok(())
}

pub fn render_feedback_json(feedback: &Feedback, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, feedback).map_err(io::Error::other)?;
    writeln!(out)
}

/// The "Validation Failed" markdown.
pub fn render_feedback(feedback: &Feedback, out: &mut dyn Write) -> io::Result<()> {
    // The id is the document's text: a line break in it would end the
    // heading and start one of its own making (`## Validation Passed`),
    // and an escape sequence would reach the terminal.
    let id = clean(feedback.id.as_deref().unwrap_or(&feedback.path));
    if let Some(blocked) = &feedback.blocked {
        writeln!(out, "## Blocked: {id}\n")?;
        writeln!(
            out,
            "The handoff says it is blocked: a person is needed, not another attempt. Stop here and hand this to a person.\n"
        )?;
        // A field the document lacks (or gives a value that is none of the
        // allowed) is said to be so, not shown blank: its defect below says
        // what to write.
        let missing = |field: &str| format!("none (see the defect in `{field}` below)");
        let reason = blocked
            .reason
            .clone()
            .unwrap_or_else(|| missing("block_reason"));
        let details = blocked
            .details
            .clone()
            .unwrap_or_else(|| missing("block_details"));
        list_item(out, "Block reason", &reason)?;
        list_item(out, "Block details", &details)?;
        writeln!(out)?;
        if feedback.items.is_empty() {
            return Ok(());
        }
    } else if feedback.items.is_empty() && feedback.valid && !feedback.escalate {
        writeln!(out, "## Validation Passed: {id}\n")?;
        if let Some(none) = &feedback.no_run_of_phase {
            writeln!(
                out,
                "Every required checkpoint passes, as the document says.\n"
            )?;
            return no_run_of_phase(out, none);
        }
        return writeln!(
            out,
            "Every required checkpoint passes; the handoff may proceed."
        );
    }
    writeln!(
        out,
        "## Validation Failed: {id} ({})\n",
        feedback.stage.as_deref().unwrap_or("unknown stage")
    )?;
    let max = i64::from(feedback.max_retries);
    if feedback.blocked.is_none() {
        match feedback.attempt {
            // Saying "attempt 1" of a document whose count nobody can read
            // would send one whose budget may be spent round again.
            None => writeln!(
                out,
                "Retry attempt: unknown (`retry_count` cannot be read; at most {max} retries): fix the defects below, then ask for this feedback again before another attempt\n"
            )?,
            Some(attempt) if feedback.escalate => {
                let used = crate::handoff::retries_used(attempt - 1, feedback.max_retries);
                writeln!(out, "Retries used: {used}\n")?;
            }
            // A document still in progress with its budget spent: there is
            // no attempt beyond the last, and it has not failed yet.
            Some(attempt) if attempt > max => writeln!(
                out,
                "Retries used: {}: none is left; if this attempt fails, hand it to a person\n",
                crate::handoff::retries_used(attempt - 1, feedback.max_retries)
            )?,
            Some(attempt) => {
                writeln!(out, "Retry attempt {attempt} of {max}\n")?;
                // The count is the document's to keep: the agent records
                // the failed run before it tries again.
                if feedback.last_run.is_some() {
                    writeln!(
                        out,
                        "Before the next attempt, `phasegate handoff stamp {}` writes the last run's results into the document: `retry_count`, `last_failure` and the checkpoints its checks verify.\n",
                        feedback.path
                    )?;
                }
            }
        }
    }
    let out_of_retries = feedback.attempt.is_some_and(|attempt| attempt > max);
    if feedback.escalate && feedback.blocked.is_none() && out_of_retries {
        writeln!(
            out,
            "**Escalation:** the retry budget is spent. Stop here and hand this to a person.\n"
        )?;
    }
    if let (Some(reason), Some(run)) = (&feedback.person_needed, &feedback.last_run) {
        writeln!(
            out,
            "**Escalation:** the last run, `{}`, ended `blocked`: {}. Another attempt would go round the same circle: stop here and hand this to a person.\n",
            run.run_id,
            clean(reason.trim_end_matches('.'))
        )?;
    }
    if let Some(none) = &feedback.no_run_of_phase {
        no_run_of_phase(out, none)?;
        writeln!(out)?;
    }
    for item in &feedback.items {
        match item.kind {
            "checkpoint" => writeln!(
                out,
                "### Checkpoint {} (line {})",
                code(&item.name),
                item.line
            )?,
            "claim" | "unverified" => writeln!(
                out,
                "### Claim {} {} by check {} (line {})",
                code(&item.name),
                if item.kind == "claim" {
                    "contradicted"
                } else {
                    "not verified"
                },
                code(item.check.as_deref().unwrap_or("?")),
                item.line
            )?,
            _ => writeln!(
                out,
                "### Defect in {} (line {})",
                code(&item.name),
                item.line
            )?,
        }
        list_item(out, "Status", &item.status)?;
        list_item(out, "Reason", &item.reason)?;
        if let Some(details) = &item.details {
            list_item(out, "Details", details)?;
        }
        if let (Some(check), false) = (&item.check, item.kind == "unverified") {
            let log = item
                .log
                .as_deref()
                .map(|log| format!(" (full output: {})", code(log)))
                .unwrap_or_default();
            if item.errors.is_empty() {
                writeln!(out, "- **`{check}` failed in the last run**{log}")?;
            } else {
                writeln!(out, "- **`{check}` reported in the last run**{log}:")?;
                for error in &item.errors {
                    writeln!(out, "  - {}", code(error))?;
                }
            }
        }
        writeln!(out, "- **What to fix:** {}\n", clean(&item.fix))?;
    }
    if feedback.omitted > 0 {
        writeln!(
            out,
            "### And {} more to fix\n\nNot shown here: fix the ones above first, then ask for this feedback again; `phasegate handoff validate {}` lists every one.",
            feedback.omitted,
            clean(&feedback.path)
        )?;
    }
    Ok(())
}

/// That no run of the document's phase checked its claims: a run of
/// another phase is no evidence, and silence would read as a pass.
fn no_run_of_phase(out: &mut dyn Write, none: &NoRunOfPhase) -> io::Result<()> {
    let phase = code(&none.phase);
    // `phasegate run --phase` of a phase the configuration lacks is a
    // usage error: the advice is to add the phase.
    if none.not_configured {
        return writeln!(
            out,
            "**Unverified:** `phasegate.toml` has no phase {phase}, so no run can check what the checkpoints claim. Add {} with the checks that verify them, or correct the document's `stage`.",
            code(&format!("[phases.{}]", none.phase))
        );
    }
    let newest = match (&none.newest_run, &none.newest_phase) {
        (Some(run), Some(other)) => format!(
            " (the newest run, {}, checked phase {})",
            code(run),
            code(other)
        ),
        (Some(run), None) => format!(" (the newest run, {}, checked no phase)", code(run)),
        _ => String::new(),
    };
    writeln!(
        out,
        "**Unverified:** no run of phase {phase} is recorded{newest}, so no check has confirmed or contradicted what the checkpoints claim. Run `phasegate run --phase {}` before handing off.",
        clean(&none.phase)
    )
}

/// One `- **label:** text` item of the feedback's lists. The text comes
/// from the document (a checkpoint's `message`, `last_failure`), where a
/// YAML block (`|`) spans lines: written as it is, its second line would
/// end the list and its `###` or `- ` lines would read as the feedback's
/// own headings and items. Such text goes into a fenced block inside the
/// item, shown as written and read as nothing else.
fn list_item(out: &mut dyn Write, label: &str, text: &str) -> io::Result<()> {
    let text = text.trim_end();
    if !text.contains(['\n', '\r']) {
        return writeln!(out, "- **{label}:** {}", clean(text));
    }
    // A fence longer than any run of backticks inside cannot be closed by
    // the text (CommonMark, "Fenced code blocks").
    let fence = fence(text, 3);
    writeln!(out, "- **{label}:**\n\n  {fence}text")?;
    for line in text.lines() {
        let line = clean(line.strip_suffix('\r').unwrap_or(line));
        if line.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "  {line}")?;
        }
    }
    writeln!(out, "  {fence}")
}

/// Backticks one more than the longest run of them in `text`, and at
/// least `least`: a Markdown fence the text cannot close.
fn fence(text: &str, least: usize) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(least))
}

/// `text` as a Markdown code span: a tool's message may hold backticks,
/// so the fence is one longer than the longest run of them inside
/// (`CommonMark`, "Code spans"), and control characters are made visible.
fn code(text: &str) -> String {
    let text = clean(text);
    let fence = fence(&text, 1);
    // A span that starts or ends with a backtick needs a space between it
    // and the fence, which CommonMark strips again.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// One line of text for a terminal: control characters made visible.
fn clean(text: &str) -> String {
    super::text::line(text).into_owned()
}
