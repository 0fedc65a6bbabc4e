//! Configuration errors as miette diagnostics: each problem points at the
//! exact span of the file it is in, with a label and a `help:` line.

use std::fmt;
use std::sync::Arc;

use miette::{Diagnostic, MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use super::ConfigLocation;

/// One configuration file's name (relative to the root) and text, with
/// where its lines start.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
    lines: Arc<LineIndex>,
}

impl SourceFile {
    pub fn new(name: String, text: String) -> SourceFile {
        let lines = Arc::new(LineIndex::new(&text));
        SourceFile {
            name,
            text: text.into(),
            lines,
        }
    }

    /// 1-based line and column of a byte offset, the column in characters:
    /// a UTF-8 byte order mark at the start of the file and the `\r` of a
    /// CRLF ending are not counted (editors show neither).
    pub fn line_column(&self, offset: usize) -> (u32, u32) {
        let (line, column) = self.lines.position(&self.text, offset);
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }

    /// The file as miette's source of a report.
    pub fn source(&self) -> ConfigSource {
        ConfigSource {
            name: self.name.clone(),
            text: Arc::clone(&self.text),
            lines: Arc::clone(&self.lines),
        }
    }
}

/// A configuration file as the source of a miette report. Its reports' header
/// gives the same line and column as the JSON verdict: miette alone counts the
/// bytes before the span on its line, a UTF-8 byte order mark and the `\r` of
/// a CRLF ending included. Shared, not copied, by every problem in the file.
#[derive(Debug, Clone)]
pub struct ConfigSource {
    name: String,
    text: Arc<str>,
    lines: Arc<LineIndex>,
}

impl ConfigSource {
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl SourceCode for ConfigSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        // miette reads from the start of what it is given to find the lines
        // of a span: it is given only those lines, or a file of many
        // problems takes a pass over the file for each.
        let first = self
            .lines
            .line_of(span.offset())
            .saturating_sub(context_lines_before);
        let last = self
            .lines
            .line_of(span.offset() + span.len())
            .saturating_add(context_lines_after);
        let from = self.lines.start(first).unwrap_or(self.text.len());
        let to = self
            .lines
            .start(last.saturating_add(1))
            .unwrap_or(self.text.len());
        let local = SourceSpan::new(span.offset().saturating_sub(from).into(), span.len());
        let inner = <[u8] as SourceCode>::read_span(
            &self.text.as_bytes()[from..to],
            &local,
            context_lines_before,
            context_lines_after,
        )?;
        let (mut line, mut column) = (inner.line() + first, inner.column());
        // Without lines before it, the contents start at the span: their line
        // and column are those of the span, which the header shows.
        if context_lines_before == 0 {
            let (l, c) = self.lines.position(&self.text, span.offset());
            line = l - 1;
            column = c - 1;
        }
        let contents = MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            SourceSpan::new((inner.span().offset() + from).into(), inner.span().len()),
            line,
            column,
            inner.line_count() + first,
        )
        .with_language("toml");
        Ok(Box::new(contents))
    }
}

/// One problem in one file.
#[derive(Debug, Clone, thiserror::Error, Diagnostic)]
#[error("{message}")]
pub struct Problem {
    pub message: String,
    #[source_code]
    pub source_code: ConfigSource,
    #[label("{label}")]
    pub span: Option<SourceSpan>,
    pub label: String,
    #[help]
    pub help: Option<String>,
    /// Where the span starts, for the JSON verdict.
    pub location: Option<ConfigLocation>,
}

/// A problem as plain data, for the JSON verdict.
#[derive(Debug, Clone)]
pub struct ConfigProblem {
    pub message: String,
    pub help: Option<String>,
    pub location: Option<ConfigLocation>,
}

/// Everything wrong with the configuration.
#[derive(Debug, Clone)]
pub struct ConfigError {
    problems: Vec<Problem>,
    more: More,
}

impl ConfigError {
    pub(crate) fn new(problems: Vec<Problem>) -> ConfigError {
        let more = More {
            count: problems.len().saturating_sub(SHOWN_PROBLEMS),
        };
        ConfigError { problems, more }
    }

    /// One problem with no span: a file that cannot be read, say.
    pub(crate) fn unlocated(file: &str, message: String, help: Option<String>) -> ConfigError {
        ConfigError::new(vec![Problem {
            message,
            source_code: SourceFile::new(file.to_string(), String::new()).source(),
            span: None,
            label: String::new(),
            help,
            location: None,
        }])
    }

    pub fn problems(&self) -> Vec<ConfigProblem> {
        self.problems
            .iter()
            .map(|p| ConfigProblem {
                message: p.message.clone(),
                help: p.help.clone(),
                location: p.location.clone(),
            })
            .collect()
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<&str> = {
            let mut names: Vec<&str> = self.problems.iter().map(|p| p.source_code.name()).collect();
            names.dedup();
            names
        };
        match self.problems.len() {
            1 => write!(f, "invalid configuration in `{}`", files.join("`, `")),
            n => write!(
                f,
                "invalid configuration: {n} problems in `{}`",
                files.join("`, `")
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Diagnostic for ConfigError {
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(
            "fix the problems below; `phasegate init` writes a commented example",
        ))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        let shown = self.problems.iter().take(SHOWN_PROBLEMS);
        let more = (self.problems.len() > SHOWN_PROBLEMS).then_some(&self.more);
        Some(Box::new(
            shown
                .map(|p| p as &dyn Diagnostic)
                .chain(more.map(|m| m as &dyn Diagnostic)),
        ))
    }
}

/// How many problems a person is shown. A generated or mangled file can hold
/// thousands, each drawn with its lines; past the first few screens they
/// only bury the terminal. The JSON verdict still lists every one.
const SHOWN_PROBLEMS: usize = 50;

/// The line that stands for the problems not shown.
#[derive(Debug, Clone, thiserror::Error, Diagnostic)]
#[error("{count} more problems not shown")]
#[diagnostic(help(
    "fix the ones above and run again; `phasegate run --format json` lists every problem"
))]
struct More {
    count: usize,
}

/// Where each line of a text starts, so that the position of many offsets
/// costs a search each, not a pass over the text.
#[derive(Debug)]
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
            .collect();
        LineIndex { starts }
    }

    /// The 0-based line `offset` is on.
    fn line_of(&self, offset: usize) -> usize {
        // The first start is 0: at least one start is at or before it.
        self.starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// Where the 0-based line `line` starts, if the text has it.
    fn start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    /// 1-based line and character column of `offset` in `text`.
    fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.starts[line];
        let mut before = &text[start..offset];
        if start == 0 {
            before = before.strip_prefix('\u{feff}').unwrap_or(before);
        }
        (line + 1, before.chars().filter(|&c| c != '\r').count() + 1)
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_without_a_bom_or_carriage_returns() {
        let at = |text: &str, offset: usize| {
            SourceFile::new("t".to_string(), text.to_string()).line_column(offset)
        };
        let text = "a = 1\n名前 = 2\n";
        assert_eq!(at(text, text.find('=').unwrap()), (1, 3));
        assert_eq!(at(text, text.rfind('=').unwrap()), (2, 4));
        assert_eq!(at(text, text.len()), (3, 1));
        let bom = "\u{feff}[gats]\n";
        assert_eq!(at(bom, bom.find('g').unwrap()), (1, 2));
        assert_eq!(at(bom, 0), (1, 1));
        let crlf = "[gate]\r\nx = 1\r\n";
        assert_eq!(at(crlf, crlf.rfind('\r').unwrap()), (2, 6));
        assert_eq!(at(crlf, crlf.rfind('\n').unwrap()), (2, 6));
        // Inside a character: the character's own column.
        assert_eq!(at("名", 1), (1, 1));
        assert_eq!(at("", 5), (1, 1));
    }

    #[test]
    fn a_report_header_gives_the_character_column() {
        let text = "a = 1\nb = \"名前\" x\nc = 3\nd = 4\n";
        let source = SourceFile::new("f.toml".to_string(), text.to_string()).source();
        let offset = text.find('x').unwrap();
        let span = SourceSpan::new(offset.into(), 1);
        let header = source.read_span(&span, 0, 0).unwrap();
        assert_eq!(
            (header.line(), header.column()),
            (1, 9),
            "not 13, its bytes"
        );
        assert_eq!(header.data(), b"x");
        // With context, the lines around it: what miette reads from the
        // whole text, found without reading the text from its start.
        for (offset, len) in [(0, 0), (0, 1), (offset, 1), (8, 12), (text.len() - 2, 2)] {
            let span = SourceSpan::new(offset.into(), len);
            for (before, after) in [(0, 0), (1, 1), (2, 0), (0, 2), (5, 5)] {
                let ours = source.read_span(&span, before, after).unwrap();
                let whole = text.read_span(&span, before, after).unwrap();
                assert_eq!(ours.data(), whole.data(), "{offset}+{len} {before}/{after}");
                assert_eq!(ours.span(), whole.span(), "{offset}+{len} {before}/{after}");
                if before > 0 {
                    assert_eq!(ours.line(), whole.line(), "{offset}+{len} {before}/{after}");
                }
            }
        }
    }
}
