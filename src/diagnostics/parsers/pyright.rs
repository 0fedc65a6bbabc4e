//! pyright: its text output (`  /abs/file.py:12:5 - error: message
//! (rule)`, 1-based, under a line naming the file) and `--outputjson`
//! (0-based `range`). Both count columns in UTF-16 units.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b" - "));

use super::{json_number0, number, split_trailer, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

/// `  /abs/src/calc.py:12:5 - error: message (reportX)`.
static ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+) - (?P<severity>error|warning|information): (?P<message>.+)$")
        .expect("the pyright regex is valid")
});

/// The rule pyright names after a message: ` (reportAttributeAccessIssue)`.
static RULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" \((?P<code>report[A-Za-z]+)\)$").expect("the pyright rule regex is valid")
});

#[derive(Debug, Default)]
pub struct Pyright {
    /// An error whose indented continuation lines may follow.
    open: Option<Found>,
}

impl Grammar for Pyright {
    fn name(&self) -> &'static str {
        "pyright"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            anywhere: b"-",
            ..super::Triggers::default()
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy() || NEEDLE.find(line).is_some()
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some(c) = super::caps(&ROW, line) {
            if let Some(done) = self.open.take() {
                out.push(done);
            }
            let (message, rule) = split_trailer(&c["message"], &RULE);
            self.open = Some(
                Found::new("text", Severity::from_word(&c["severity"]), message)
                    .at(&c["file"], number(&c["line"]), number(&c["col"]))
                    .code(rule)
                    .unit(ColumnUnit::Utf16)
                    .range(at),
            );
            return;
        }
        // A multi-line message continues on lines indented deeper (with
        // no-break spaces).
        if let Some(found) = self.open.as_mut() {
            let indent = line.chars().take_while(|c| c.is_whitespace()).count();
            if indent > 2 && !line.trim().is_empty() {
                let (text, rule) = split_trailer(line.trim(), &RULE);
                found.message.push('\n');
                found.message.push_str(&text);
                if found.code.is_none() {
                    found.code = rule;
                }
                found.range.end = at.end;
                return;
            }
        }
        if let Some(done) = self.open.take() {
            out.push(done);
        }
    }

    /// `{"version", "generalDiagnostics": [{"file", "severity", "message",
    /// "range": {"start": {"line", "character"}, "end"}, "rule"}]}`,
    /// positions 0-based.
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        let Some(items) = doc["generalDiagnostics"].as_array() else {
            return;
        };
        if let Some(version) = doc["version"].as_str() {
            out.version = Some(version.to_string());
        }
        for item in items {
            let Some(file) = item["file"].as_str() else {
                continue;
            };
            let start = &item["range"]["start"];
            let end = &item["range"]["end"];
            out.push(
                Found::new(
                    "json",
                    Severity::from_word(item["severity"].as_str().unwrap_or("error")),
                    item["message"].as_str().unwrap_or(""),
                )
                .at(
                    file,
                    json_number0(&start["line"]),
                    json_number0(&start["character"]),
                )
                .ends(json_number0(&end["line"]), json_number0(&end["character"]))
                .code(item["rule"].as_str().map(str::to_string))
                .unit(ColumnUnit::Utf16)
                .range(at),
            );
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some(done) = self.open.take() {
            out.push(done);
        }
    }
}
