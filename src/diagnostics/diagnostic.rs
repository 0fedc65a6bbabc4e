//! The `Diagnostic` model: one located finding from a tool's output.

use serde::Serialize;

use crate::config::Origin;

/// How serious a finding is, in the tool's own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Error,
    Warning,
    Note,
    Info,
}

impl Severity {
    /// Reads a tool's severity word; unknown words are errors, the
    /// conservative reading.
    pub fn from_word(word: &str) -> Severity {
        match word.trim().to_ascii_lowercase().as_str() {
            "warning" | "warn" | "w" => Severity::Warning,
            "note" | "help" | "hint" => Severity::Note,
            "info" | "information" | "i" | "style" | "convention" | "refactor" => Severity::Info,
            _ => Severity::Error,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Info => "info",
        }
    }
}

/// What a column counts. Tools disagree: rustc and Python tools count
/// characters, clang and Go count bytes, tsc and ESLint count UTF-16 code
/// units, gcc counts display columns (a tab to the next multiple of 8, a
/// wide character as 2), ShellCheck's default and `json` formats count
/// characters with a tab to the next multiple of 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ColumnUnit {
    /// Unicode scalar values: what phasegate reports whenever it can.
    #[default]
    Character,
    Byte,
    Utf16,
    Display,
    /// Characters, a tab reaching the next multiple of 8 and a wide
    /// character counting 1 (ShellCheck's parser counts a position so).
    TabStop,
    /// Characters counted from the line's first character that is not a
    /// space, tab or form feed: Python shows a syntax error's line without
    /// its indentation, and its caret under what is left.
    Indented,
}

/// Which parser read a diagnostic, and which of the tool's output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ParserId {
    pub name: &'static str,
    pub dialect: &'static str,
}

/// One finding, located in the repository where possible.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostic {
    /// The check that produced it.
    pub check: String,
    pub origin: Origin,
    /// The tool that printed it (`cargo`, `verifier`, `phasegate`).
    pub tool: String,
    /// The tool's version, when its output says it.
    pub tool_version: Option<String>,
    /// `None` for findings phasegate made itself.
    pub parser: Option<ParserId>,
    /// Relative to the repository root; `None` when the tool named no file.
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based; `None` when the tool printed none.
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    /// What `column` and `end_column` count now.
    pub column_unit: ColumnUnit,
    /// What the tool's columns counted, before phasegate converted them.
    pub tool_column_unit: ColumnUnit,
    pub severity: Severity,
    pub code: Option<String>,
    /// The failed test's name, when a test runner said it.
    pub test: Option<String>,
    /// Whole, with the tool's own `help:` and fix lines.
    pub message: String,
    /// The bytes of the check's log the finding was read from.
    pub log_range: Option<(u64, u64)>,
    /// The text of `line` as the check saw it, for a report to show.
    pub source_line: Option<String>,
    /// Outside the lines the change touched (the changed-line filter).
    pub pre_existing: bool,
}

impl Diagnostic {
    /// A stable identity for "the same problem": the tool, the code, the
    /// file and the message with its numbers and spacing normalised, never
    /// the line, so moved code keeps its fingerprint. 16 hex digits of
    /// FNV-1a, stable across builds and machines.
    pub fn fingerprint(&self) -> String {
        let mut hash = Fnv::default();
        // Each part ends with 0xff, a byte UTF-8 text never holds.
        for part in [
            self.tool.as_str(),
            self.code.as_deref().unwrap_or(""),
            self.file.as_deref().unwrap_or("").trim_start_matches("./"),
            &normalise_message(&self.message),
        ] {
            hash.write(part.as_bytes());
            hash.write(&[0xff]);
        }
        format!("{:016x}", hash.finish())
    }

    /// `file:line:col message-first-line`, the one line a note or an
    /// intervention names it by.
    pub fn headline(&self) -> String {
        format!(
            "{} {}",
            self.location(),
            self.message.lines().next().unwrap_or("")
        )
        .trim()
        .to_string()
    }

    /// `file:line:col`, as far as it is known; empty when nothing is.
    pub fn location(&self) -> String {
        let mut out = self.file.clone().unwrap_or_default();
        if let Some(line) = self.line {
            out.push_str(&format!(":{line}"));
            if let Some(column) = self.column {
                out.push_str(&format!(":{column}"));
            }
        }
        out
    }
}

/// 64-bit FNV-1a: stable across builds and machines, unlike `std`'s
/// hasher, for identities that are stored and compared later.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn finish(self) -> u64 {
        self.0
    }
}

/// The first line of a message with every number replaced by `#` and runs
/// of spaces collapsed: "expected 3 arguments, found 2" and "expected 4
/// arguments, found 1" are the same problem.
fn normalise_message(message: &str) -> String {
    let first = message.lines().next().unwrap_or("");
    let mut out = String::with_capacity(first.len());
    let mut in_number = false;
    let mut in_space = false;
    for c in first.trim().chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
            in_space = false;
            continue;
        }
        in_number = false;
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.push(c);
    }
    out
}

impl Serialize for Diagnostic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shown<'a> {
            check: &'a str,
            origin: Origin,
            tool: &'a str,
            tool_version: Option<&'a str>,
            parser: Option<&'a str>,
            dialect: Option<&'a str>,
            file: Option<&'a str>,
            line: Option<u32>,
            column: Option<u32>,
            end_line: Option<u32>,
            end_column: Option<u32>,
            column_unit: ColumnUnit,
            tool_column_unit: ColumnUnit,
            severity: Severity,
            code: Option<&'a str>,
            test: Option<&'a str>,
            message: &'a str,
            log_range: Option<[u64; 2]>,
            #[serde(skip_serializing_if = "Option::is_none")]
            source_line: Option<&'a str>,
            pre_existing: bool,
            fingerprint: String,
        }
        Shown {
            check: &self.check,
            origin: self.origin,
            tool: &self.tool,
            tool_version: self.tool_version.as_deref(),
            parser: self.parser.map(|p| p.name),
            dialect: self.parser.map(|p| p.dialect),
            file: self.file.as_deref(),
            line: self.line,
            column: self.column,
            end_line: self.end_line,
            end_column: self.end_column,
            column_unit: self.column_unit,
            tool_column_unit: self.tool_column_unit,
            severity: self.severity,
            code: self.code.as_deref(),
            test: self.test.as_deref(),
            message: &self.message,
            log_range: self.log_range.map(|(start, end)| [start, end]),
            source_line: self.source_line.as_deref(),
            pre_existing: self.pre_existing,
            fingerprint: self.fingerprint(),
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(line: u32, message: &str) -> Diagnostic {
        Diagnostic {
            check: "build".into(),
            origin: Origin::Build,
            tool: "cargo".into(),
            file: Some("src/lib.rs".into()),
            line: Some(line),
            column: Some(5),
            code: Some("E0061".into()),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn fingerprints_ignore_lines_and_numbers_but_not_meaning() {
        let a = diagnostic(10, "this function takes 3 arguments but 2 were supplied");
        let moved = diagnostic(
            42,
            "this function takes 4 arguments  but 1 were supplied\nnote: more",
        );
        let other = diagnostic(10, "mismatched types");
        assert_eq!(a.fingerprint(), moved.fingerprint());
        assert_ne!(a.fingerprint(), other.fingerprint());
        assert_eq!(a.fingerprint().len(), 16);
    }
}
