//! The source line under a diagnostic, drawn by miette: the line with its
//! real number, the file and `line:col` in the frame's header, and a label
//! at the column. Draws what it is given; decides nothing.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents, ThemeStyles,
};

use crate::diagnostics::{Diagnostic, Severity};

/// Wider lines are cut here: the producers keep 300 characters already,
/// and miette never wraps a source line.
const MAX_CHARS: usize = 300;

/// The frame is drawn at a fixed width, whatever the terminal, so the
/// output is the same everywhere.
const WIDTH: usize = 100;

/// One line of a file as miette's source: miette reads it as a whole file
/// of one line, told that this line is number `line_index + 1`.
#[derive(Debug)]
struct OneLine {
    file: String,
    /// The line and its newline: miette draws a point at the end of a line
    /// only when the line goes on past it.
    text: String,
    /// 0-based, as miette counts.
    line_index: usize,
    /// 0-based characters: the diagnostic's own column, which the header
    /// shows even when it lies past the end of the line.
    column_index: usize,
}

impl SourceCode for OneLine {
    fn read_span<'a>(
        &'a self,
        _span: &SourceSpan,
        _context_lines_before: usize,
        _context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        // Every span phasegate labels lies inside the line, and the line is
        // the whole context.
        Ok(Box::new(MietteSpanContents::new_named(
            self.file.clone(),
            self.text.as_bytes(),
            SourceSpan::from((0, self.text.len())),
            self.line_index,
            self.column_index,
            1,
        )))
    }
}

/// The miette diagnostic that carries the line and its label. Its message
/// is empty: phasegate's own headline says it above the snippet.
#[derive(Debug)]
struct Snippet {
    source: OneLine,
    label: LabeledSpan,
}

impl fmt::Display for Snippet {
    fn fmt(&self, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

impl std::error::Error for Snippet {}

impl miette::Diagnostic for Snippet {
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(self.label.clone())))
    }
}

/// The source line of `d` with a label at its column, each line of the
/// drawing starting with `indent`. Empty when there is nothing to point
/// at: no file, line or source line, an empty line, or a message
/// that already shows the line (rustc's does).
pub fn render(d: &Diagnostic, indent: &str, color: bool) -> String {
    let Some(snippet) = snippet(d) else {
        return String::new();
    };
    let handler = GraphicalReportHandler::new_themed(theme(d.severity, color))
        .with_width(WIDTH)
        .with_urls(false)
        .with_links(false)
        .without_cause_chain()
        .with_context_lines(0)
        .without_syntax_highlighting()
        .tab_width(4);
    let mut drawn = String::new();
    if handler.render_report(&mut drawn, &snippet).is_err() {
        return String::new();
    }
    // miette draws the (empty) message first; the frame starts at its
    // top-left corner, the first line that begins with it.
    let corner = GraphicalTheme::unicode().characters.ltop;
    let mut out = String::new();
    for line in drawn
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(corner))
        .take_while(|l| !l.trim().is_empty())
    {
        out.push_str(indent);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn snippet(d: &Diagnostic) -> Option<Snippet> {
    let file = d.file.as_deref()?;
    let line = d.line.filter(|l| *l > 0)?;
    let source = d.source_line.as_deref()?;
    let shown_already = !source.trim().is_empty() && d.message.contains(source.trim());
    if source.is_empty() || shown_already {
        return None;
    }
    // A control character would move or garble the drawing (miette reads
    // ESC as the start of a colour), and a bidirectional override would
    // show the line in another order than the compiler reads it (the
    // "Trojan Source" trick); one replacement character each keeps the
    // character columns where they were.
    let text: String = source
        .chars()
        .take(MAX_CHARS)
        .map(|c| {
            if super::text::obeyed(c) && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    let byte_at = |chars: usize| {
        text.char_indices()
            .nth(chars)
            .map_or(text.len(), |(at, _)| at)
    };
    let (index, start, end) = match d.column.filter(|c| *c > 0) {
        // No column (a failed test's line, say): the whole line is marked.
        None => {
            let start = text.len() - text.trim_start().len();
            (0, start, text.trim_end().len().max(start))
        }
        Some(column) => {
            // Columns count characters from 1; miette's offsets are bytes.
            let index = zero_based(column);
            let start = byte_at(index);
            // `end_column` points just past the span, as in SARIF and
            // rustc; a span that ends on another line, or before it
            // starts, is drawn as one character.
            let end = match d.end_column {
                Some(end) if end > column && d.end_line.is_none_or(|l| l == line) => {
                    byte_at(zero_based(end))
                }
                _ => text[start..]
                    .chars()
                    .next()
                    .map_or(start, |c| start + c.len_utf8()),
            };
            (index, start, end)
        }
    };
    // Past the end of the line the label has no width and miette draws
    // an arrow just after the last character.
    let label = LabeledSpan::new(None, start, end - start);
    Some(Snippet {
        source: OneLine {
            file: super::text::line(file).into_owned(),
            text: text + "\n",
            line_index: zero_based(line),
            column_index: index,
        },
        label,
    })
}

/// A 1-based line or column as miette's 0-based index. (It cannot fail
/// where `usize` holds a `u32`; elsewhere 0 is safer than an overflow.)
fn zero_based(n: u32) -> usize {
    usize::try_from(n.saturating_sub(1)).unwrap_or(0)
}

/// Colour only when asked; then the label takes the severity's colour, as
/// phasegate's headline does.
fn theme(severity: Severity, color: bool) -> GraphicalTheme {
    if !color {
        return GraphicalTheme::unicode_nocolor();
    }
    let mut theme = GraphicalTheme::unicode();
    let styles = ThemeStyles::ansi();
    let style = match severity {
        Severity::Error => styles.error,
        Severity::Warning => styles.warning,
        Severity::Note | Severity::Info => styles.advice,
    };
    theme.styles.highlights = vec![style];
    theme
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bidirectional_override_in_the_source_line_is_never_drawn() {
        let d = Diagnostic {
            check: "lint".into(),
            file: Some("a.rs".into()),
            line: Some(1),
            column: Some(20),
            message: "trojan".into(),
            source_line: Some("let a = \"\u{202e} safe \u{2066}\";\tx".into()),
            ..Diagnostic::default()
        };
        let drawn = render(&d, "", false);
        assert!(
            drawn.contains("let a = \"\u{fffd} safe \u{fffd}\";"),
            "{drawn}"
        );
        assert!(
            !drawn
                .chars()
                .any(|c| c != '\t' && c != '\n' && super::super::text::obeyed(c)),
            "{drawn}"
        );
    }
}
