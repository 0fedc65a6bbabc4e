//! Python linters and type checkers: ruff (concise, full and JSON), flake8,
//! pylint (text, `json` and `json2`; 0-based columns) and mypy (text,
//! `--pretty` and `-O json`).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::generic::compiler_line;
use super::{json_number, json_number0, number, split_trailer, Found, Grammar, Out};
use crate::diagnostics::Severity;

/// Lines of one message kept (ruff's help, mypy's wrapped text).
const MAX_BODY_LINES: usize = 12;

/// `file:line[:col]: CODE message` (ruff concise, flake8) and
/// `file:line:col: CODE: message (symbol)` (pylint, 0-based columns).
static LINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^:\s][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<code>[A-Z]+\d+)(?P<pylint>:)? (?:\[\*\] )?(?P<message>.+)$")
        .expect("the Python lint regex is valid")
});

/// ruff's full format: `F401 [*] message`, then ` --> file:line:col`.
static RUFF_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<message>.+)$")
        .expect("the ruff header regex is valid")
});

/// mypy's `--pretty` wrap can put the error code alone on a line:
/// `[no-untyped-def]` or ` [no-untyped-def]`.
static MYPY_CODE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s?\[(?P<code>[a-z][a-z0-9-]*)\]$").expect("the mypy code line regex is valid")
});

static RUFF_LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*--> (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the ruff location regex is valid")
});

/// mypy's trailing error code: `  [assignment]`.
static MYPY_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s{2}\[(?P<code>[a-z][a-z0-9-]*)\]$").expect("the mypy code regex is valid")
});

#[derive(Debug, Default)]
enum Open {
    #[default]
    Nothing,
    /// A ruff header waiting for its `-->` line, then its help lines.
    Ruff(Found, bool),
    /// A mypy message whose `--pretty` continuation may follow.
    Mypy(Found, usize),
}

#[derive(Debug, Default)]
pub struct Python {
    open: Open,
}

fn pylint_severity(code: &str) -> Severity {
    match code.as_bytes().first() {
        Some(b'E' | b'F') => Severity::Error,
        Some(b'W') => Severity::Warning,
        _ => Severity::Info,
    }
}

impl Python {
    fn close(&mut self, out: &mut Out) {
        match std::mem::take(&mut self.open) {
            Open::Ruff(found, true) | Open::Mypy(found, _) => out.push(found),
            Open::Ruff(_, false) | Open::Nothing => {}
        }
    }

    /// Lines that continue the open message; false when the line is not one.
    fn continues(&mut self, line: &str, at: &Range<u64>) -> bool {
        match &mut self.open {
            Open::Nothing => false,
            Open::Ruff(found, located) => {
                if !*located {
                    if let Some(c) = super::caps(&RUFF_LOCATION, line) {
                        *found = std::mem::take(found).at(
                            &c["file"],
                            number(&c["line"]),
                            number(&c["col"]),
                        );
                        *located = true;
                        found.range.end = at.end;
                        return true;
                    }
                    return false;
                }
                if line.trim().is_empty() {
                    return false;
                }
                if line.starts_with("help:") && found.message.lines().count() < MAX_BODY_LINES {
                    found.message.push('\n');
                    found.message.push_str(line);
                }
                found.range.end = at.end;
                true
            }
            Open::Mypy(found, body) => {
                // `--pretty` wraps the message onto unindented lines (the
                // code may be alone on the last), then shows the source
                // line and a caret, indented.
                if let Some(c) = super::caps(&MYPY_CODE_LINE, line) {
                    if found.code.is_none() {
                        found.code = Some(c["code"].to_string());
                    }
                    found.range.end = at.end;
                    return true;
                }
                if line.trim().is_empty()
                    || *body >= MAX_BODY_LINES
                    || super::compiler_line_parts(line).is_some()
                    || line.starts_with("Found ")
                    || line.starts_with("Success:")
                {
                    return false;
                }
                *body += 1;
                found.range.end = at.end;
                if !line.starts_with(' ') {
                    let (text, code) = split_trailer(line.trim(), &MYPY_CODE);
                    found.message.push(' ');
                    found.message.push_str(&text);
                    if found.code.is_none() {
                        found.code = code;
                    }
                }
                true
            }
        }
    }
}

impl Grammar for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            indented: b"",
            anywhere: b":",
        })
    }

    fn busy(&self) -> bool {
        !matches!(self.open, Open::Nothing)
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy()
            || line.first().is_some_and(u8::is_ascii_uppercase)
            || super::has_colon_digit(line)
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if self.continues(line, at) {
            return;
        }
        self.close(out);
        if let Some(c) = super::caps(&LINT, line) {
            let code = c["code"].to_string();
            let pylint = c.name("pylint").is_some();
            let column = c.name("col").and_then(|m| m.as_str().parse::<u32>().ok());
            let found = if pylint {
                // pylint counts columns from 0; its message ends with the
                // check's symbol, `(unused-import)`, kept as printed.
                Found::new("pylint-text", pylint_severity(&code), &c["message"])
                    .at(&c["file"], number(&c["line"]), column.map(|col| col + 1))
                    .code(Some(code))
                    .tool("pylint")
            } else {
                let severity = if code.starts_with('W') || code.starts_with('C') {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                Found::new("concise", severity, &c["message"])
                    .at(&c["file"], number(&c["line"]), column.filter(|c| *c > 0))
                    .code(Some(code))
            };
            out.push(found.range(at));
            return;
        }
        if let Some(c) = super::caps(&RUFF_HEADER, line) {
            let found = Found::new("ruff-full", Severity::Error, &c["message"])
                .code(Some(c["code"].to_string()))
                .tool("ruff")
                .range(at);
            self.open = Open::Ruff(found, false);
            return;
        }
        // mypy: `file:line[:col]: error: message  [code]`.
        if let Some(found) = compiler_line(line, "mypy") {
            // Only about Python files: other compiler lines are not mypy's.
            if found
                .file
                .as_deref()
                .and_then(|f| std::path::Path::new(f).extension())
                .is_some_and(|e| e.eq_ignore_ascii_case("py") || e.eq_ignore_ascii_case("pyi"))
            {
                self.open = Open::Mypy(found.tool("mypy").range(at), 0);
            }
        }
    }

    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        // mypy -O json: one object per line.
        if doc.get("file").is_some() && doc.get("severity").is_some() {
            let mut message = doc["message"].as_str().unwrap_or("").to_string();
            if let Some(hint) = doc["hint"].as_str() {
                message.push('\n');
                message.push_str(hint);
            }
            let mut found = Found::new(
                "mypy-json",
                Severity::from_word(doc["severity"].as_str().unwrap_or("error")),
                message,
            )
            .code(doc["code"].as_str().map(str::to_string))
            .tool("mypy")
            .range(at);
            if let Some(file) = doc["file"].as_str() {
                // Its column counts from 0; -1 means none.
                let column = doc["column"]
                    .as_i64()
                    .filter(|c| *c >= 0)
                    .and_then(|c| u32::try_from(c + 1).ok());
                found = found.at(file, json_number(&doc["line"]), column);
            }
            out.push(found);
            return;
        }
        // pylint json2: `{"messages": [...], "statistics": {...}}`.
        let (items, dialect) = match (doc.as_array(), doc["messages"].as_array()) {
            (Some(items), _) => (items, "json"),
            (None, Some(items)) => (items, "json2"),
            (None, None) => return,
        };
        for item in items {
            if let Some(code) = item["code"].as_str() {
                // ruff: `{"code", "message", "filename", "location": {"row",
                // "column"}, "end_location", "fix", "url"}`.
                let Some(file) = item["filename"].as_str() else {
                    continue;
                };
                let mut message = item["message"].as_str().unwrap_or("").to_string();
                if let Some(fix) = item["fix"]["message"].as_str() {
                    message.push_str(&format!("\nhelp: {fix}"));
                }
                out.push(
                    Found::new("ruff-json", Severity::Error, message)
                        .at(
                            file,
                            json_number(&item["location"]["row"]),
                            json_number(&item["location"]["column"]),
                        )
                        .ends(
                            json_number(&item["end_location"]["row"]),
                            json_number(&item["end_location"]["column"]),
                        )
                        .code(Some(code.to_string()))
                        .tool("ruff")
                        .range(at),
                );
            } else if let Some(symbol) = item["symbol"].as_str() {
                // pylint: `{"type", "path", "line", "column" (0-based),
                // "endLine", "endColumn", "symbol", "message",
                // "message-id" | "messageId"}`.
                let id = item["message-id"]
                    .as_str()
                    .or_else(|| item["messageId"].as_str())
                    .unwrap_or("");
                let Some(file) = item["path"].as_str() else {
                    continue;
                };
                let message = format!("{} ({symbol})", item["message"].as_str().unwrap_or(""));
                out.push(
                    Found::new(dialect, pylint_severity(id), message)
                        .at(
                            file,
                            json_number(&item["line"]),
                            json_number0(&item["column"]),
                        )
                        .ends(
                            json_number(&item["endLine"]),
                            json_number0(&item["endColumn"]),
                        )
                        .code(Some(id.to_string()))
                        .tool("pylint")
                        .range(at),
                );
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.close(out);
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::recorded;
    use crate::diagnostics::Severity;

    #[test]
    fn a_mypy_code_wrapped_onto_its_own_line_is_the_code() {
        // mypy 2.4.1 `--pretty` at 80 columns: `[no-untyped-def]` alone.
        let found = recorded("mypy", "python/mypy-pretty-code.txt", None);
        let errors: Vec<_> = found
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| (d.location(), d.code.as_deref(), d.message.as_str()))
            .collect();
        let expected = |line: u32| {
            (
                format!("tests/test_untyped.py:{line}"),
                Some("no-untyped-def"),
                "Function is missing a return type annotation",
            )
        };
        assert_eq!(errors, [expected(1), expected(5)]);
    }
}
