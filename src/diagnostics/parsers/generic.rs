//! The compiler-shaped line (`file:line[:col]: severity: message`) every
//! grammar that meets one reads the same way, and custom regexes from
//! `phasegate.toml`. The `generic` parser is gcc's grammar not knowing
//! the compiler.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{compiler_line_parts, number, split_trailer, Found, Grammar, Out};
use crate::diagnostics::Severity;

/// A code some tools append to a compiler-shaped line: ` [-Wunused]`,
/// ` [SC2086]`, `  [assignment]`.
static TRAILING_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s\[(?P<code>-[Wf][A-Za-z0-9=_+-]+|SC\d+|[a-z][a-z0-9-]*)\]$")
        .expect("the trailing-code regex is valid")
});

/// A compiler-shaped line as a `Found`, its trailing code taken out.
pub fn compiler_line(line: &str, dialect: &'static str) -> Option<Found> {
    let c = compiler_line_parts(line)?;
    let (message, trailer) = split_trailer(c.message, &TRAILING_CODE);
    let code = c.code.map(str::to_string).or(trailer);
    Some(
        Found::new(dialect, Severity::from_word(c.severity), message)
            .at(c.file, number(c.line), c.column.and_then(number))
            .code(code),
    )
}

/// A user's regex with named groups `file`, `line` and optionally `col`,
/// `severity`, `code`, `message`.
#[derive(Debug)]
pub struct Custom {
    regex: Regex,
}

impl Custom {
    pub fn new(regex: Regex) -> Custom {
        Custom { regex }
    }
}

impl Grammar for Custom {
    fn name(&self) -> &'static str {
        "custom"
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        let Some(c) = self.regex.captures(line) else {
            return;
        };
        let text = |name: &str| c.name(name).map(|m| m.as_str());
        let severity = text("severity").map_or(Severity::Error, Severity::from_word);
        let mut found = Found::new("regex", severity, text("message").unwrap_or(line))
            .code(text("code").map(str::to_string))
            .range(at);
        if let Some(file) = text("file") {
            found = found.at(
                file,
                text("line").and_then(number),
                text("col").and_then(number),
            );
        }
        out.push(found);
    }
}
