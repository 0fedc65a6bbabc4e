//! ShellCheck: the default tty format (`In file line N:`, the source line,
//! a caret under the column), `-f gcc`, `-f json` and `-f json1`.
//!
//! ShellCheck counts a position with a tab reaching the next multiple of 8
//! (`shellcheck(1)`: the legacy `json` format's "offsets have a tab stop of
//! 8"); the tty format pads its caret with spaces to that column, under the
//! source line printed with its tabs. `-f gcc` and `-f json1` count a tab
//! as one character.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"SC"));

use super::generic::compiler_line;
use super::{json_number, number, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

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
            // The pad reaches the column with tabs expanded, whatever the
            // source line holds before it.
            let column = u32::try_from(c["pad"].chars().count() + 1).ok();
            out.push(
                Found::new("tty", Severity::from_word(&c["severity"]), &c["message"])
                    .at(file, Some(*l), column)
                    .unit(ColumnUnit::TabStop)
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
        // The legacy `json` counts a tab to the next multiple of 8; `json1`
        // counts it as one character.
        let (items, dialect, unit) = match (doc.as_array(), doc["comments"].as_array()) {
            (Some(items), _) => (items, "json", ColumnUnit::TabStop),
            (None, Some(items)) => (items, "json1", ColumnUnit::Character),
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
                .unit(unit)
                .code(Some(format!("SC{code}")))
                .range(at),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{recorded, recorded_in_repo};
    use crate::diagnostics::{ColumnUnit, Diagnostic, Extracted};

    const OUTPUTS: [&str; 4] = [
        "shellcheck/shellcheck-tabs-tty.txt",
        "shellcheck/shellcheck-tabs-gcc.txt",
        "shellcheck/shellcheck-tabs.json",
        "shellcheck/shellcheck-tabs-json1.json",
    ];

    /// A recorded output read from a check running ShellCheck in a
    /// repository holding the script.
    fn in_repo(output: &str) -> Extracted {
        recorded_in_repo(
            "shellcheck scripts/tabs.sh",
            output,
            &[("scripts/tabs.sh", "shellcheck/tabs.sh.txt")],
        )
    }

    #[test]
    fn every_format_lands_on_the_same_character_past_tabs() {
        // ShellCheck 0.9.0 on a leading TAB (line 2), a TAB in the middle
        // (3), two leading and one in the middle (4), `日本` and a TAB (5),
        // `日本` alone (6). The tty caret and `-f json` count a TAB to the
        // next multiple of 8 (`2:14`, `3:9`, `4:25`, `5:17`, `6:11`);
        // `-f gcc` and `-f json1` count it as one character.
        let expected: Vec<String> = [
            "2:7", "2:7", "3:8", "3:8", "4:10", "4:10", "5:1", "5:11", "5:11", "6:11", "6:11",
        ]
        .iter()
        .map(|p| format!("scripts/tabs.sh:{p}"))
        .collect();
        for output in OUTPUTS {
            let found = in_repo(output);
            let places: Vec<String> = found.diagnostics.iter().map(Diagnostic::location).collect();
            assert_eq!(places, expected, "{output}");
            assert!(
                found
                    .diagnostics
                    .iter()
                    .all(|d| d.column_unit == ColumnUnit::Character),
                "{output}"
            );
        }
        // The JSON formats' ends agree too: `$foo` is characters 7 to 11.
        for output in &OUTPUTS[2..] {
            let d = &in_repo(output).diagnostics[0];
            assert_eq!(
                (d.location(), d.end_column),
                ("scripts/tabs.sh:2:7".to_string(), Some(11)),
                "{output}"
            );
        }
    }

    #[test]
    fn without_the_script_a_column_stays_shellchecks_and_says_so() {
        for (output, column, unit) in [
            (OUTPUTS[0], 14, ColumnUnit::TabStop),
            (OUTPUTS[1], 7, ColumnUnit::Character),
            (OUTPUTS[2], 14, ColumnUnit::TabStop),
            (OUTPUTS[3], 7, ColumnUnit::Character),
        ] {
            let found = recorded("shellcheck", output, None);
            let d = &found.diagnostics[0];
            assert_eq!(
                (d.column, d.column_unit, d.tool_column_unit),
                (Some(column), unit, unit),
                "{output}"
            );
        }
    }
}
