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
    ///
    /// phasegate's finding for a failure no parser understood is told by
    /// the output's last lines it carries, not by its first line: that
    /// line is often the same for every failure (`FAILED`, `npm ERR! Test
    /// failed.`), and three runs failing on three different tests would
    /// look like an agent going round in circles.
    pub fn fingerprint(&self) -> String {
        let message = if self.is_output_tail() {
            normalise_output(&self.message)
        } else {
            normalise_message(&self.message)
        };
        let mut hash = Fnv::default();
        // Each part ends with 0xff, a byte UTF-8 text never holds.
        for part in [
            self.tool.as_str(),
            self.code.as_deref().unwrap_or(""),
            self.file.as_deref().unwrap_or("").trim_start_matches("./"),
            &message,
        ] {
            hash.write(part.as_bytes());
            hash.write(&[0xff]);
        }
        format!("{:016x}", hash.finish())
    }

    /// Whether this is phasegate's finding for output nobody parsed: a
    /// headline, then `OUTPUT_TAIL_HEADING` and the output's last lines.
    pub fn is_output_tail(&self) -> bool {
        self.tool == "phasegate" && self.message.lines().nth(1) == Some(OUTPUT_TAIL_HEADING)
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

/// The line between the headline of phasegate's finding for a failure
/// nobody parsed and the output's last lines it shows.
pub const OUTPUT_TAIL_HEADING: &str = "last lines of output:";

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

/// The first line of a message as `normalise_output_line` reads a line:
/// every number as `#`, hexadecimal words (addresses, hashes, ids) and the
/// names of temporary directories forgotten, runs of spaces collapsed.
/// "expected 3 arguments, found 2" and "expected 4 arguments, found 1" are
/// the same problem, and so are pytest's `assert <app.Conn object at
/// 0x7f8e72e28a50> is None` and the next run's `0x7fabe7a8ed90`, or
/// `cannot open /tmp/tmpk3v_qz/db` and `/tmp/tmpa8pQxw/db` (a test's
/// `tempfile.mkdtemp()`): else an agent stuck on one would never be
/// escalated, each run's error looking new.
fn normalise_message(message: &str) -> String {
    normalise_output_line(message.lines().next().unwrap_or(""))
}

/// The output's last lines of a failure nobody parsed, as a fingerprint
/// reads them: each line with what changes from one run of the same
/// failure to the next normalised away (numbers: timings, process ids,
/// ports; hexadecimal words: addresses, hashes, ids; the names of
/// temporary directories), blank lines dropped, sorted and once each, so
/// that tests reported in another order by a parallel runner are the
/// same failure. What is left (which test, which assertion, which file)
/// tells one failure from another.
fn normalise_output(message: &str) -> String {
    let mut lines: Vec<String> = message
        .lines()
        .filter(|line| *line != OUTPUT_TAIL_HEADING)
        .map(normalise_output_line)
        .filter(|line| !line.is_empty())
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines.join("\n")
}

/// One line of output as `normalise_output` reads it.
fn normalise_output_line(line: &str) -> String {
    let line = forget_temporary_names(line.trim());
    let mut out = String::with_capacity(line.len());
    let mut word = String::new();
    let mut in_space = false;
    for c in line.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            in_space = false;
            continue;
        }
        push_word(&mut out, &mut word);
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
    push_word(&mut out, &mut word);
    out
}

/// Appends `word` to `out`, emptied: `#` for a hexadecimal word (`0x7ffd`,
/// an address; `3f9a0c1`, a hash; a UUID's parts), else the word with each
/// run of digits as `#`.
fn push_word(out: &mut String, word: &mut String) {
    let hex = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_hexdigit());
    let prefixed = word
        .strip_prefix("0x")
        .or_else(|| word.strip_prefix("0X"))
        .is_some_and(hex);
    let bare = word.len() >= 4 && hex(word) && word.bytes().any(|b| b.is_ascii_digit());
    if prefixed || bare {
        out.push('#');
    } else {
        let mut in_number = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !in_number {
                    out.push('#');
                }
                in_number = true;
            } else {
                in_number = false;
                out.push(c);
            }
        }
    }
    word.clear();
}

/// `line` with the name of each directory made inside a temporary
/// directory replaced by `#`: `/tmp/tmpk3v_qz/x.py` and
/// `/tmp/tmpa8pQxw/x.py` are the same file of two runs (Python's
/// `tempfile`, `mktemp`, Rust's `tempfile`, Go's `t.TempDir`, and macOS's
/// `$TMPDIR`, `/var/folders/…/T/`).
fn forget_temporary_names(line: &str) -> String {
    let separator = |c: char| c == '/' || c == '\\';
    let ends_name = |c: char| {
        separator(c)
            || c.is_whitespace()
            || matches!(
                c,
                ':' | '\'' | '"' | '`' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';'
            )
    };
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        // The byte just after the separator that ends a `tmp`, `temp` or
        // `T` directory, if one is in `rest`.
        let found = rest
            .char_indices()
            .filter(|(_, c)| separator(*c))
            .find_map(|(at, _)| {
                let after = &rest[at + 1..];
                let end = after.find(separator)?;
                let name = &after[..end];
                let temporary = name.eq_ignore_ascii_case("tmp")
                    || name.eq_ignore_ascii_case("temp")
                    || name == "T";
                temporary.then_some(at + 1 + end + 1)
            });
        let Some(start) = found else {
            out.push_str(rest);
            return out;
        };
        let end = rest[start..]
            .find(ends_name)
            .map_or(rest.len(), |n| start + n);
        out.push_str(&rest[..start]);
        out.push('#');
        rest = &rest[end..];
    }
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

    /// phasegate's finding for a failure nobody parsed, `tail` its
    /// output's last lines.
    fn unparsed(tail: &[&str]) -> Diagnostic {
        Diagnostic {
            check: "tests".into(),
            tool: "phasegate".into(),
            file: Some("phasegate.toml".into()),
            line: Some(3),
            code: Some("check-failed".into()),
            message: format!(
                "check `tests` failed (exit 1): {}\n{OUTPUT_TAIL_HEADING}\n{}",
                tail.last().unwrap_or(&""),
                tail.join("\n")
            ),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn an_unparsed_failure_is_told_by_its_output_not_its_last_line() {
        let a = unparsed(&["test_add ... broken", "FAILED"]);
        let b = unparsed(&["test_sub ... broken", "FAILED"]);
        assert_ne!(a.fingerprint(), b.fingerprint());
        // Numbers in a test's name are normalised, as in any message, but
        // the name around them is kept.
        let c = unparsed(&["test_case_1_add ... broken", "FAILED"]);
        let d = unparsed(&["test_case_1_sub ... broken", "FAILED"]);
        assert_ne!(c.fingerprint(), d.fingerprint());
    }

    #[test]
    fn an_unparsed_failure_s_volatile_parts_do_not_make_it_another() {
        let one = unparsed(&[
            "workspace /tmp/tmp.kq8ZPwLmNa/build/out.log",
            "worker 4123 crashed at 0x7ffd5a3c10e8 (object 3f9a0c1e)",
            "id 550e8400-e29b-41d4-a716-446655440000",
            "cache C:\\Users\\me\\AppData\\Local\\Temp\\abcXYZ\\x",
            "mac /var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/tmpQwErTy/a.py",
            "suite took 1.52s",
            "FAILED",
        ]);
        // Another run of the same failure, its parallel runner's lines in
        // another order.
        let two = unparsed(&[
            "worker 977 crashed at 0x55d0e4a2b7c0 (object a81c44d2)",
            "workspace /tmp/tmp.ZxYwVuTsRq/build/out.log",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "cache C:\\Users\\me\\AppData\\Local\\Temp\\defUVW\\x",
            "mac /var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/tmpAsDfGh/a.py",
            "suite took 12.07s",
            "FAILED",
        ]);
        assert_eq!(one.fingerprint(), two.fingerprint());
        // What is kept beyond the temporary directory still tells files
        // apart.
        let other = unparsed(&["workspace /tmp/tmp.kq8ZPwLmNa/build/err.log", "FAILED"]);
        let same = unparsed(&["workspace /tmp/tmp.ZxYwVuTsRq/build/out.log", "FAILED"]);
        assert_ne!(other.fingerprint(), same.fingerprint());
    }

    #[test]
    fn a_finding_a_parser_read_keeps_its_first_line_fingerprint() {
        // A tool's own message with a second line is told by its first.
        let a = diagnostic(1, "mismatched types\nexpected `u32`");
        let b = diagnostic(1, "mismatched types\nexpected `i64`");
        assert_eq!(a.fingerprint(), b.fingerprint());
    }
}
