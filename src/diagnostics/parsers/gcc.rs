//! gcc, g++ and clang: the human format (with the source snippet and
//! fix-it lines kept in the message) and gcc's `-fdiagnostics-format=json`.
//! gcc counts display columns, clang counts bytes.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::generic::compiler_line;
use super::{has_colon_digit, json_number, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

/// Snippet lines kept in a message.
const MAX_BODY_LINES: usize = 12;

/// Lines that end a snippet: `main.c: In function 'f':`, `In file
/// included from x.h:3,`, `2 errors generated.`
static CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[^\s:][^:]*: In (?:function|member function|constructor|destructor|instantiation|static member function)|In file included from |\s+from |\d+ (?:warnings?|errors?)(?: and \d+ errors?)? generated\.|compilation terminated\.)")
        .expect("the gcc context regex is valid")
});

#[derive(Debug)]
pub struct Gcc {
    /// `gcc`, or `generic` when the compiler is not known.
    name: &'static str,
    unit: ColumnUnit,
    open: Option<(Found, usize)>,
}

impl Gcc {
    /// gcc (display columns) or clang (bytes).
    pub fn new(unit: ColumnUnit) -> Gcc {
        Gcc {
            name: "gcc",
            unit,
            open: None,
        }
    }

    /// Any tool printing `file:line[:col]: severity: message`: columns
    /// as printed, and only indented lines after it kept as its snippet.
    pub fn generic() -> Gcc {
        Gcc {
            name: "generic",
            unit: ColumnUnit::Character,
            open: None,
        }
    }
}

impl Grammar for Gcc {
    fn name(&self) -> &'static str {
        self.name
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            anywhere: b":",
            ..super::Triggers::default()
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy() || has_colon_digit(line)
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        let dialect = if self.name == "generic" {
            "generic"
        } else {
            "human"
        };
        if let Some(found) = compiler_line(line, dialect) {
            if let Some((done, _)) = self.open.take() {
                out.push(done);
            }
            self.open = Some((found.unit(self.unit).range(at), 0));
            return;
        }
        let Some((found, body)) = self.open.as_mut() else {
            return;
        };
        let foreign = self.name == "generic" && !line.starts_with([' ', '\t']);
        if foreign || line.trim().is_empty() || CONTEXT.is_match(line) {
            if let Some((done, _)) = self.open.take() {
                out.push(done);
            }
            return;
        }
        if *body < MAX_BODY_LINES {
            found.message.push('\n');
            found.message.push_str(line);
            *body += 1;
        }
        found.range.end = at.end;
    }

    /// gcc's `-fdiagnostics-format=json`: one array of diagnostics, each
    /// with `locations` (caret and finish) and `children` (notes).
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        let Some(items) = doc.as_array() else {
            return;
        };
        let looks_like_gcc = items
            .first()
            .is_some_and(|d| d.get("kind").is_some() && d.get("locations").is_some());
        if !looks_like_gcc {
            return;
        }
        let mut stack: Vec<&serde_json::Value> = items.iter().rev().collect();
        while let Some(d) = stack.pop() {
            let kind = d["kind"].as_str().unwrap_or("error");
            let caret = &d["locations"][0]["caret"];
            let finish = &d["locations"][0]["finish"];
            let mut found = Found::new(
                "json",
                Severity::from_word(kind.trim_start_matches("fatal ")),
                d["message"].as_str().unwrap_or(""),
            )
            .code(d["option"].as_str().map(str::to_string))
            .range(at);
            if let Some(file) = caret["file"].as_str() {
                // `byte-column` since gcc 11; `column` (display) before.
                let (column, unit) = match json_number(&caret["byte-column"]) {
                    Some(c) => (Some(c), ColumnUnit::Byte),
                    None => (json_number(&caret["column"]), ColumnUnit::Display),
                };
                let end_column = if unit == ColumnUnit::Byte {
                    json_number(&finish["byte-column"])
                } else {
                    json_number(&finish["column"])
                };
                found = found
                    .at(file, json_number(&caret["line"]), column)
                    .ends(json_number(&finish["line"]), end_column)
                    .unit(unit);
            }
            out.push(found);
            if let Some(children) = d["children"].as_array() {
                stack.extend(children.iter().rev());
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some((done, _)) = self.open.take() {
            out.push(done);
        }
    }
}
