//! ESLint: the default stylish format (a file's path alone on a line, then
//! its rows) and `-f json`. ESLint counts columns in UTF-16 units.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{json_number, number, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

/// `  1:5  error  message  rule-id`.
static ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<severity>error|warning)\s+(?P<message>.+?)(?:\s{2,}(?P<rule>[@\w/-]+))?$")
        .expect("the eslint row regex is valid")
});

/// A file's path alone: a directory separator or an extension, and no
/// space unless the path is absolute (ESLint prints its files' absolute
/// paths, `/app/src/my dir/a.js`). A long output of other space-less lines
/// (hashes, progress dots) is not read as headers, nor is a sentence.
fn looks_like_a_path(line: &[u8]) -> bool {
    !line.is_empty()
        && (memchr::memchr(b' ', line).is_none() || is_absolute(line))
        && memchr::memchr3(b'/', b'.', b'\\', line).is_some()
}

/// `/…`, `C:\…` or `\\server\…`.
fn is_absolute(line: &[u8]) -> bool {
    let drive = matches!(line, [letter, b':', b'\\' | b'/', ..] if letter.is_ascii_alphabetic());
    line.starts_with(b"/") || line.starts_with(b"\\\\") || drive
}

#[derive(Debug, Default)]
pub struct Eslint {
    /// The file a stylish block is about.
    file: Option<String>,
}

impl Grammar for Eslint {
    fn name(&self) -> &'static str {
        "eslint"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: "✖".as_bytes(),
            indented: b"0123456789",
            anywhere: b"/.\\",
        })
    }

    fn wants(&self, line: &[u8]) -> bool {
        // Rows (`  1:5  error ...`), a file's path alone, the blank line or
        // `✖` summary that ends a block.
        match line.first() {
            None => true,
            Some(b' ' | b'\t') => line
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(u8::is_ascii_digit),
            Some(_) => looks_like_a_path(line) || line.starts_with("✖".as_bytes()),
        }
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some(c) = super::caps(&ROW, line) {
            let Some(file) = self.file.as_deref() else {
                return;
            };
            out.push(
                Found::new(
                    "stylish",
                    Severity::from_word(&c["severity"]),
                    &c["message"],
                )
                .at(file, number(&c["line"]), number(&c["col"]))
                .code(c.name("rule").map(|m| m.as_str().to_string()))
                .unit(ColumnUnit::Utf16)
                .range(at),
            );
            return;
        }
        // A stylish block starts with the file's path alone on its line.
        let trimmed = line.trim_end();
        if !line.starts_with(char::is_whitespace) && looks_like_a_path(trimmed.as_bytes()) {
            self.file = Some(trimmed.to_string());
        } else if trimmed.is_empty() || trimmed.starts_with('✖') {
            self.file = None;
        }
    }

    /// `[{"filePath", "messages": [{"ruleId", "severity", "message",
    /// "line", "column", "endLine", "endColumn"}]}]`.
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        let Some(files) = doc.as_array() else {
            return;
        };
        for file in files {
            let (Some(path), Some(messages)) =
                (file["filePath"].as_str(), file["messages"].as_array())
            else {
                continue;
            };
            for m in messages {
                let severity = match m["severity"].as_u64() {
                    Some(2) => Severity::Error,
                    Some(1) => Severity::Warning,
                    _ => Severity::Info,
                };
                out.push(
                    Found::new("json", severity, m["message"].as_str().unwrap_or(""))
                        .at(path, json_number(&m["line"]), json_number(&m["column"]))
                        .ends(json_number(&m["endLine"]), json_number(&m["endColumn"]))
                        .code(m["ruleId"].as_str().map(str::to_string))
                        .unit(ColumnUnit::Utf16)
                        .range(at),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{places, recorded};

    #[test]
    fn a_path_with_a_space_heads_its_block() {
        // ESLint 10.15.0's stylish format: the second file is
        // `/tmp/rec-diag/eslint/src/my dir/a.js`.
        let found = recorded(
            "eslint",
            "node/eslint-space.txt",
            Some("/tmp/rec-diag/eslint"),
        );
        assert_eq!(
            places(&found),
            [
                ("src/b.js:1:7".to_string(), Some("no-unused-vars"), None),
                ("src/my dir/a.js:1:1".to_string(), Some("no-var"), None),
                (
                    "src/my dir/a.js:1:5".to_string(),
                    Some("no-unused-vars"),
                    None
                ),
            ]
        );
        assert_eq!(
            found.diagnostics[2].message,
            "'spaced' is assigned a value but never used"
        );
    }
}
