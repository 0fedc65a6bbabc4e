//! ShellCheck: the default tty format (`In file line N:`, the source line,
//! a caret under the column), `-f gcc`, `-f json` and `-f json1`.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"SC"));

use super::generic::compiler_line;
use super::{json_number, number, Found, Grammar, Out};
use crate::diagnostics::Severity;

/// `In scripts/x.sh line 3:` opens a block.
static AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^In (?P<file>.+) line (?P<line>\d+):$").expect("the shellcheck regex is valid")
});

/// `     ^-----^ SC2086 (info): message`: the caret gives the column.
static NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<pad>\s*)\^[-~^]*\s+(?P<code>SC\d+) \((?P<severity>\w+)\): (?P<message>.+)$")
        .expect("the shellcheck note regex is valid")
});

#[derive(Debug, Default)]
pub struct Shellcheck {
    /// The block being read: its file and line.
    at: Option<(String, u32)>,
}

impl Grammar for Shellcheck {
    fn name(&self) -> &'static str {
        "shellcheck"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"I",
            indented: b"",
            anywhere: b"S",
        })
    }

    fn wants(&self, line: &[u8]) -> bool {
        line.starts_with(b"In ") || NEEDLE.find(line).is_some()
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some(c) = super::caps(&AT, line) {
            self.at = number(&c["line"]).map(|l| (c["file"].to_string(), l));
            return;
        }
        if let (Some((file, l)), Some(c)) = (self.at.as_ref(), super::caps(&NOTE, line)) {
            let column = u32::try_from(c["pad"].chars().count() + 1).ok();
            out.push(
                Found::new("tty", Severity::from_word(&c["severity"]), &c["message"])
                    .at(file, Some(*l), column)
                    .code(Some(c["code"].to_string()))
                    .range(at),
            );
            return;
        }
        // `-f gcc`: `file:line:col: note: message [SC2086]`.
        if line.ends_with(']') && line.contains("[SC") {
            if let Some(mut found) = compiler_line(line, "gcc") {
                // The gcc format prints ShellCheck's `info` and `style` as
                // `note`.
                if found.severity == Severity::Note {
                    found.severity = Severity::Info;
                }
                out.push(found.range(at));
            }
        }
    }

    /// `-f json` (an array) and `-f json1` (`{"comments": [...]}`).
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        let (items, dialect) = match (doc.as_array(), doc["comments"].as_array()) {
            (Some(items), _) => (items, "json"),
            (None, Some(items)) => (items, "json1"),
            (None, None) => return,
        };
        for item in items {
            let (Some(file), Some(code), Some(level)) = (
                item["file"].as_str(),
                item["code"].as_u64(),
                item["level"].as_str(),
            ) else {
                continue;
            };
            out.push(
                Found::new(
                    dialect,
                    Severity::from_word(level),
                    item["message"].as_str().unwrap_or(""),
                )
                .at(
                    file,
                    json_number(&item["line"]),
                    json_number(&item["column"]),
                )
                .ends(
                    json_number(&item["endLine"]),
                    json_number(&item["endColumn"]),
                )
                .code(Some(format!("SC{code}")))
                .range(at),
            );
        }
    }
}
