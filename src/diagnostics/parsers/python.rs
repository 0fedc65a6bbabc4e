//! Python linters and type checkers: ruff (concise, full, grouped, pylint,
//! GitHub and Azure annotations, JSON and JSON lines, and through
//! `ruff_reports` its JUnit, GitLab, rdjson and SARIF reports), flake8,
//! pylint (text, `json` and `json2`; 0-based columns) and mypy (text,
//! `--pretty` and `-O json`); and Python's own tracebacks and syntax
//! errors, as the interpreter prints them for a script that fails.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::generic::compiler_line;
use super::pytest::{Read, Traceback};
use super::{json_number, json_number0, number, split_trailer, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

/// Lines of one message kept (ruff's help, mypy's wrapped text).
const MAX_BODY_LINES: usize = 12;

/// `file:line[:col]: CODE message` (ruff concise, flake8),
/// `file:line:col: CODE: message (symbol)` (pylint, 0-based columns) and
/// ruff's `file:line:col: rule-name: message` (its syntax errors,
/// `invalid-syntax`, and every rule under `--preview`). `[*]`: ruff can
/// fix it. The file may hold a colon not followed by a blank (`a:b.py`,
/// `notes/10:30.py`), as `compiler_line_parts` allows: the shortest file
/// that leaves a whole finding is taken.
static LINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^:\s](?:[^:]|:\S)*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?:(?P<code>[A-Z]+\d+)(?P<pylint>:)?|(?P<name>[a-z][a-z0-9]*(?:-[a-z0-9]+)*):) (?P<fix>\[\*\] )?(?P<message>.+)$")
        .expect("the Python lint regex is valid")
});

/// ruff's full format: `F401 [*] message` (`ASYNC251`, `PLR0913`) or
/// `invalid-syntax: message`, then ` --> file:line:col`.
static RUFF_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?P<code>[A-Z]+\d+)|(?P<name>[a-z][a-z0-9]*(?:-[a-z0-9]+)*):) (?:\[\*\] )?(?P<message>.+)$")
        .expect("the ruff header regex is valid")
});

/// ruff's closing lines: `Found 3 errors.`, `All checks passed!`.
static RUFF_SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:Found \d+ errors?\.|All checks passed!)")
        .expect("the ruff summary regex is valid")
});

/// A line-and-column tool's word where ruff puts a rule's name: mypy's
/// `x.py:3:5: error: ...`, a compiler's `warning:`, rustc's `help:`.
const SEVERITY_WORDS: &[&str] = &["error", "warning", "note", "info", "help", "fatal"];

/// Whether ruff's rule name `name` on `file` is one: not a severity word,
/// about a file ruff reads (Python, a notebook, `pyproject.toml`).
fn ruff_named(name: &str, file: &str) -> bool {
    !SEVERITY_WORDS.contains(&name)
        && std::path::Path::new(file)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "py" | "pyi" | "ipynb" | "toml"))
}

/// Whether a line starts with what may be a ruff rule's name and a colon
/// (`invalid-syntax: ...`): the full format's header under `--preview` or
/// for a syntax error.
fn starts_with_a_rule_name(line: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', line) else {
        return false;
    };
    line.first().is_some_and(u8::is_ascii_lowercase)
        && line[..colon]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && line.get(colon + 1) == Some(&b' ')
}

/// ruff's `--output-format pylint` (and flake8's `--format pylint`):
/// `file:line: [CODE] message`, without a column.
static PYLINT_STYLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^:\s](?:[^:]|:\S)*?):(?P<line>\d+): \[(?P<code>[A-Z]+\d+|[a-z][a-z0-9]*(?:-[a-z0-9]+)*)\] (?P<message>.+)$")
        .expect("the pylint-style regex is valid")
});

/// ruff's `--output-format grouped`: a file's name alone on its line, then
/// its findings indented, `  15:5 F841 message` or `  1:7 invalid-syntax:
/// message`, until an empty line.
static GROUPED_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:](?:[^:]|:\S)*\.(?:py|pyi|ipynb|toml)):$")
        .expect("the grouped file regex is valid")
});
static GROUPED_ITEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?:(?P<code>[A-Z]+\d+)|(?P<name>[a-z][a-z0-9]*(?:-[a-z0-9]+)*):) (?:\[\*\] )?(?P<message>.+)$")
        .expect("the grouped finding regex is valid")
});

/// A GitHub workflow command, ruff's `--output-format github`:
/// `::error title=ruff (F401),file=/abs/a.py,line=1,col=8,endLine=1,endColumn=10::a.py:1:8: F401 message%0A  help: ...`.
/// Properties escape `%`, `\r`, `\n`, `:` and `,`; the message `%`, `\r`
/// and `\n`.
static GITHUB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^::(?P<level>error|warning|notice) (?P<props>[^:]*)::(?P<message>.*)$")
        .expect("the GitHub command regex is valid")
});

/// An Azure Pipelines logging command, ruff's `--output-format azure`:
/// `##vso[task.logissue type=error;sourcepath=/abs/a.py;linenumber=1;columnnumber=8;code=F401;]message`.
static AZURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^##vso\[task\.logissue (?P<props>[^\]]*)\](?P<message>.*)$")
        .expect("the Azure command regex is valid")
});

/// `text` with a CI command's percent escapes undone.
fn unescape_command(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    text.replace("%0A", "\n")
        .replace("%0D", "\r")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%3B", ";")
        .replace("%5D", "]")
        .replace("%AZP25", "%")
        .replace("%25", "%")
}

/// The value of `key` among a CI command's `key=value` properties.
fn property<'a>(props: &'a str, separator: char, key: &str) -> Option<&'a str> {
    props
        .split(separator)
        .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
}

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

/// Whose `file:line:col: CODE message` lines are read. ruff calls every
/// finding an error (`Found 3 errors.`); flake8's pycodestyle and mccabe
/// codes (`W291`, `C901`) are warnings.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Linter {
    /// Neither the command nor the output has said yet.
    #[default]
    Unknown,
    Ruff,
    Flake8,
}

#[derive(Debug, Default)]
pub struct Python {
    open: Open,
    linter: Linter,
    /// While the linter is unknown, its concise findings, until a line says
    /// they are ruff's (`[*]`, a rule's name, `Found 3 errors.`) or the
    /// output ends without saying (flake8's).
    held: Vec<Found>,
    /// A traceback being read, or a syntax error's display, which the
    /// interpreter prints with no header for the script it was asked to
    /// run.
    traceback: Option<Traceback>,
    /// The file whose findings ruff's grouped format is listing.
    group: Option<String>,
    /// ruff's JUnit report being read.
    junit: super::ruff_reports::Junit,
}

/// One finding of ruff's JSON (an item of its array, or one of its JSON
/// lines): `{"code", "message", "filename", "location": {"row",
/// "column"}, "end_location", "fix", "url"}`.
fn ruff_item(item: &serde_json::Value, at: &Range<u64>) -> Option<Found> {
    let code = item["code"].as_str()?;
    let file = item["filename"].as_str()?;
    let mut message = item["message"].as_str().unwrap_or("").to_string();
    if let Some(fix) = item["fix"]["message"].as_str() {
        message.push_str(&format!("\nhelp: {fix}"));
    }
    Some(
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
    )
}

/// mypy's 1-based column as a character's, from the text of its line.
/// mypy before 2, and mypy 2 under `--no-native-parser`, count UTF-8
/// bytes (Python's `ast` offsets). mypy 2's native parser, its default,
/// prints twice the character's column less the byte's after non-ASCII
/// text, as recorded from mypy 2.4.1: 16 for `"a"` in `s = "😀"; x: int =
/// "a"`, the 19th character, its 22nd byte. Its output does not say which
/// parser ran, and on an ASCII line both readings name the same character.
/// So the column is the character either reading names when exactly one
/// fits; when the two name different characters, it is none: a finding on
/// its line rather than one pointing at the wrong word.
fn mypy_column(text: &str, column: u32) -> Option<u32> {
    let wanted = usize::try_from(column).ok()?;
    let mut fits: Option<usize> = None;
    let mut byte = 1usize;
    // Each character's place, and the end of the line's.
    let places = text.chars().map(Some).chain(std::iter::once(None));
    for (i, c) in places.enumerate() {
        let character = i + 1;
        if byte == wanted || (2 * character).checked_sub(byte) == Some(wanted) {
            if fits.is_some_and(|f| f != character) {
                return None;
            }
            fits = Some(character);
        }
        byte += c.map_or(0, char::len_utf8);
    }
    fits.and_then(|c| u32::try_from(c).ok())
}

/// A mypy finding, its column (when it has one) recounted by
/// `mypy_column`, else read as bytes where its line cannot be.
fn mypy_found(found: Found) -> Found {
    let unit = if found.column.is_some() {
        ColumnUnit::Byte
    } else {
        ColumnUnit::Character
    };
    found.tool("mypy").unit(unit).recount(mypy_column)
}

fn pylint_severity(code: &str) -> Severity {
    match code.as_bytes().first() {
        Some(b'E' | b'F') => Severity::Error,
        Some(b'W') => Severity::Warning,
        _ => Severity::Info,
    }
}

/// A concise finding as flake8 means it.
///
/// Its columns are those of the plugin that found it: pycodestyle (`E`,
/// `W`) counts characters in the line's text, while pyflakes (`F`),
/// mccabe (`C901`) and the plugins built on Python's `ast` report a node's
/// `col_offset` plus 1, which counts UTF-8 bytes (`s = "é"; x = y` puts
/// `y` at flake8's column 15, the 14th character).
fn as_flake8(mut found: Found) -> Found {
    let code = found.code.as_deref().unwrap_or("");
    if code.starts_with('W') || code.starts_with('C') {
        found.severity = Severity::Warning;
    }
    if !code.starts_with('E') && !code.starts_with('W') {
        found.unit = ColumnUnit::Byte;
    }
    found
}

impl Python {
    /// The grammar for a known linter's output.
    pub fn for_linter(linter: Linter) -> Python {
        Python {
            linter,
            ..Python::default()
        }
    }

    /// The output is ruff's: what was held is pushed as ruff's.
    fn ruff_says(&mut self, out: &mut Out) {
        if self.linter == Linter::Unknown {
            self.linter = Linter::Ruff;
            for found in self.held.drain(..) {
                out.push(found.tool("ruff"));
            }
        }
    }

    /// A concise finding (`Severity::Error`), as its linter means it.
    fn concise(&mut self, found: Found, out: &mut Out) {
        match self.linter {
            Linter::Ruff => out.push(found.tool("ruff")),
            // Bounded: past the extractor's cap only a count grows.
            Linter::Unknown if self.held.len() < crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK => {
                self.held.push(found);
            }
            Linter::Flake8 | Linter::Unknown => out.push(as_flake8(found)),
        }
    }

    /// A `file:line:col: CODE message` line; false when it is not a
    /// linter's after all (mypy's `x.py:3:5: error: ...`).
    fn lint_line(&mut self, c: &regex::Captures<'_>, at: &Range<u64>, out: &mut Out) -> bool {
        let file = &c["file"];
        let column = c.name("col").and_then(|m| m.as_str().parse::<u32>().ok());
        if let Some(name) = c.name("name") {
            if !ruff_named(name.as_str(), file) {
                return false;
            }
            // Only ruff names its rules.
            self.ruff_says(out);
        }
        let code = c
            .name("code")
            .or(c.name("name"))
            .map(|m| m.as_str().to_string());
        if c.name("pylint").is_some() {
            // pylint counts columns from 0, in the UTF-8 bytes of an
            // `ast` node's `col_offset`; its message ends with the check's
            // symbol, `(unused-import)`, kept as printed.
            let severity = pylint_severity(code.as_deref().unwrap_or(""));
            out.push(
                Found::new("pylint-text", severity, &c["message"])
                    .at(file, number(&c["line"]), column.map(|col| col + 1))
                    .unit(ColumnUnit::Byte)
                    .code(code)
                    .tool("pylint")
                    .range(at),
            );
            return true;
        }
        if c.name("fix").is_some() {
            // Only ruff marks what it can fix.
            self.ruff_says(out);
        }
        let found = Found::new("concise", Severity::Error, &c["message"])
            .at(file, number(&c["line"]), column.filter(|c| *c > 0))
            .code(code)
            .range(at);
        self.concise(found, out);
        true
    }

    /// A line of ruff's grouped format, its pylint format or a CI
    /// command ruff printed; false when it is none of them.
    fn other_format(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        if let Some(file) = self.group.clone() {
            if let Some(c) = super::caps(&GROUPED_ITEM, line) {
                let code = c.name("code").or(c.name("name")).map(|m| m.as_str());
                if code.is_some_and(|code| !SEVERITY_WORDS.contains(&code)) {
                    self.ruff_says(out);
                    out.push(
                        Found::new("ruff-grouped", Severity::Error, &c["message"])
                            .at(&file, number(&c["line"]), number(&c["col"]))
                            .code(code.map(str::to_string))
                            .tool("ruff")
                            .range(at),
                    );
                    return true;
                }
            }
            self.group = None;
        }
        // Cheap looks first: most lines are none of these.
        if !line.ends_with(':')
            && !line.contains(": [")
            && !line.starts_with("::")
            && !line.starts_with("##vso[")
        {
            return false;
        }
        if let Some(c) = super::caps(&GROUPED_FILE, line) {
            self.group = Some(c["file"].to_string());
            return true;
        }
        if let Some(c) = super::caps(&PYLINT_STYLE, line) {
            let code = c["code"].to_string();
            if code.starts_with(|ch: char| ch.is_ascii_lowercase()) {
                if !ruff_named(&code, &c["file"]) {
                    return false;
                }
                self.ruff_says(out);
            }
            let found = Found::new("pylint-style", Severity::Error, &c["message"])
                .at(&c["file"], number(&c["line"]), None)
                .code(Some(code))
                .range(at);
            self.concise(found, out);
            return true;
        }
        if let Some(c) = super::caps(&GITHUB, line) {
            let props = &c["props"];
            let Some(code) = property(props, ',', "title")
                .and_then(|t| t.strip_prefix("ruff ("))
                .and_then(|t| t.strip_suffix(')'))
            else {
                return false;
            };
            let Some(file) = property(props, ',', "file") else {
                return false;
            };
            let number_of = |key: &str| property(props, ',', key).and_then(number);
            // The message repeats the concise line, `a.py:1:8: F401 text`,
            // and may go on with ruff's help.
            let text = unescape_command(&c["message"]);
            let mut lines = text.lines();
            let first = lines.next().unwrap_or("");
            let concise = super::caps(&LINT, first);
            let mut message = concise
                .as_ref()
                .map_or_else(|| first.to_string(), |l| l["message"].to_string());
            // ruff leaves `col` out where the column is past the line's
            // end (`Expected `)`, found newline`); the concise line has it.
            let column = number_of("col").or_else(|| {
                concise
                    .as_ref()
                    .and_then(|l| l.name("col"))
                    .and_then(|m| number(m.as_str()))
            });
            for more in lines.map(str::trim).filter(|l| !l.is_empty()) {
                if message.lines().count() < MAX_BODY_LINES {
                    message.push('\n');
                    message.push_str(more);
                }
            }
            self.ruff_says(out);
            out.push(
                Found::new("ruff-github", Severity::from_word(&c["level"]), message)
                    .at(&unescape_command(file), number_of("line"), column)
                    .ends(number_of("endLine"), number_of("endColumn"))
                    .code(Some(unescape_command(code)))
                    .tool("ruff")
                    .range(at),
            );
            return true;
        }
        if let Some(c) = super::caps(&AZURE, line) {
            let props = &c["props"];
            let file = property(props, ';', "sourcepath").map(unescape_command);
            let code = property(props, ';', "code").map(unescape_command);
            // Azure's commands are every tool's: ruff's name a file it
            // reads and one of its rules.
            let (Some(file), Some(code)) = (file, code) else {
                return false;
            };
            if !ruff_named(&code, &file) {
                return false;
            }
            let severity =
                property(props, ';', "type").map_or(Severity::Error, Severity::from_word);
            self.ruff_says(out);
            out.push(
                Found::new("ruff-azure", severity, unescape_command(&c["message"]))
                    .at(
                        &file,
                        property(props, ';', "linenumber").and_then(number),
                        property(props, ';', "columnnumber").and_then(number),
                    )
                    .code(Some(code))
                    .tool("ruff")
                    .range(at),
            );
            return true;
        }
        false
    }

    fn close(&mut self, out: &mut Out) {
        match std::mem::take(&mut self.open) {
            Open::Ruff(found, true) => {
                self.ruff_says(out);
                out.push(found);
            }
            Open::Mypy(found, _) => out.push(found),
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
                        // A rule's name is ruff's only about a file ruff
                        // reads: rustc's `warning: unused variable` over
                        // ` --> src/lib.rs:2:9` is not.
                        let foreign = found.code.as_deref().is_some_and(|code| {
                            code.starts_with(|ch: char| ch.is_ascii_lowercase())
                                && !ruff_named(code, &c["file"])
                        });
                        if foreign {
                            self.open = Open::Nothing;
                            return false;
                        }
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
            first: b"ABCDEFGHIJKLMNOPQRSTUVWXYZ#<",
            indented: b"F<",
            anywhere: b":",
        })
    }

    fn busy(&self) -> bool {
        !matches!(self.open, Open::Nothing) || self.traceback.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy()
            || line.first().is_some_and(u8::is_ascii_uppercase)
            || super::has_colon_digit(line)
            || starts_with_a_rule_name(line)
            || line.starts_with(b"  File \"")
            || line.starts_with(b"##vso[")
            || line.ends_with(b":")
            || super::trimmed(line).starts_with(b"<")
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some(traceback) = self.traceback.as_mut() {
            match traceback.line(line, at) {
                Read::Took => return,
                Read::Done(found) => {
                    self.traceback = None;
                    out.push((*found).tool("python"));
                    return;
                }
                Read::Left => self.traceback = None,
            }
        }
        // Before a message's continuation: mypy's `--pretty` takes any
        // unindented line after a message for more of it.
        if let Some(traceback) = Traceback::opens(line, at) {
            self.close(out);
            self.traceback = Some(traceback);
            return;
        }
        if self.continues(line, at) {
            return;
        }
        self.close(out);
        if line.trim_start().starts_with('<') {
            // ruff's JUnit report: a tag a line.
            if let Some(found) = self.junit.line(line, at) {
                out.push(found);
            }
            return;
        }
        if self.other_format(line, at, out) {
            return;
        }
        if let Some(c) = super::caps(&LINT, line) {
            if self.lint_line(&c, at, out) {
                return;
            }
        }
        if RUFF_SUMMARY.is_match(line) {
            self.ruff_says(out);
            return;
        }
        if let Some(c) = super::caps(&RUFF_HEADER, line) {
            let code = c.name("code").or(c.name("name")).map(|m| m.as_str());
            if code.is_some_and(|code| !SEVERITY_WORDS.contains(&code)) {
                let found = Found::new("ruff-full", Severity::Error, &c["message"])
                    .code(code.map(str::to_string))
                    .tool("ruff")
                    .range(at);
                self.open = Open::Ruff(found, false);
                return;
            }
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
                self.open = Open::Mypy(mypy_found(found).range(at), 0);
            }
        }
    }

    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        // ruff's reports for CI: SARIF, rdjson, GitLab's code quality.
        if let Some(found) = super::ruff_reports::document(doc, at) {
            for found in found {
                out.push(found);
            }
            return;
        }
        // ruff's JSON lines: one finding an object.
        if doc.is_object() {
            if let Some(found) = ruff_item(doc, at) {
                out.push(found);
                return;
            }
        }
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
            .range(at);
            if let Some(file) = doc["file"].as_str() {
                // Its column counts from 0; -1 means none.
                let column = doc["column"]
                    .as_i64()
                    .filter(|c| *c >= 0)
                    .and_then(|c| u32::try_from(c + 1).ok());
                found = found.at(file, json_number(&doc["line"]), column);
                // mypy 1.11 and later add where the error ends: its last
                // column, counted as the start's is once made 1-based
                // (what `--show-error-end` prints); -1 means none.
                if column.is_some() {
                    found = found.ends(
                        json_number(&doc["end_line"]),
                        json_number(&doc["end_column"]),
                    );
                }
            }
            out.push(mypy_found(found));
            return;
        }
        // pylint json2: `{"messages": [...], "statistics": {...}}`.
        let (items, dialect) = match (doc.as_array(), doc["messages"].as_array()) {
            (Some(items), _) => (items, "json"),
            (None, Some(items)) => (items, "json2"),
            (None, None) => return,
        };
        for item in items {
            if item["code"].is_string() {
                if let Some(found) = ruff_item(item, at) {
                    out.push(found);
                }
            } else if let Some(symbol) = item["symbol"].as_str() {
                // pylint: `{"type", "path", "line", "column" (0-based,
                // in UTF-8 bytes), "endLine", "endColumn", "symbol",
                // "message", "message-id" | "messageId"}`.
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
                        .unit(ColumnUnit::Byte)
                        .code(Some(id.to_string()))
                        .tool("pylint")
                        .range(at),
                );
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.close(out);
        // Nothing said ruff: flake8's, or a tool printing its shape.
        for found in self.held.drain(..) {
            out.push(as_flake8(found));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{places, recorded};
    use crate::diagnostics::{Extracted, Severity};

    /// Place, code, severity and tool of each finding.
    fn read(found: &Extracted) -> Vec<(String, Option<&str>, Severity, &str)> {
        found
            .diagnostics
            .iter()
            .map(|d| (d.location(), d.code.as_deref(), d.severity, d.tool.as_str()))
            .collect()
    }

    #[test]
    fn ruffs_syntax_errors_and_long_rule_codes_are_read_in_every_format() {
        // ruff 0.17.6: `syn.py:1:7: invalid-syntax: ...` and, in the full
        // format, `ASYNC251 ...` over ` --> asy.py:3:5`.
        let expected = [
            ("asy.py:3:5".to_string(), Some("ASYNC251"), None),
            ("syn.py:1:7".to_string(), Some("invalid-syntax"), None),
            ("syn.py:1:8".to_string(), Some("invalid-syntax"), None),
        ];
        for output in [
            "python/ruff-syntax-concise.txt",
            "python/ruff-syntax-full.txt",
            "python/ruff-syntax.json",
        ] {
            let found = recorded("ruff", output, Some("/tmp/rec-diag/ruff"));
            assert_eq!(places(&found), expected, "{output}");
            assert_eq!(
                found.diagnostics[1].message,
                "Expected a parameter or the end of the parameter list",
                "{output}"
            );
        }
    }

    #[test]
    fn ruffs_rule_names_under_preview_are_its_codes() {
        let expected = [
            (
                "a.py:1:1".to_string(),
                Some("missing-copyright-notice"),
                None,
            ),
            (
                "w.py:1:1".to_string(),
                Some("missing-copyright-notice"),
                None,
            ),
            ("w.py:8:13".to_string(), Some("trailing-whitespace"), None),
        ];
        for output in [
            "python/ruff-preview-concise.txt",
            "python/ruff-preview-full.txt",
        ] {
            let found = recorded("python", output, None);
            assert_eq!(places(&found), expected, "{output}");
        }
    }

    #[test]
    fn ruffs_concise_and_full_formats_agree_whoever_reads_them() {
        // `C901` and `W291` are warnings to flake8; ruff calls both errors
        // (`Found 2 errors.`). The concise lines alone do not say whose
        // they are: the closing line does.
        let ruff = |file: &str| {
            vec![
                (format!("{file}:4:5"), Some("C901"), Severity::Error, "ruff"),
                (
                    format!("{file}:8:13"),
                    Some("W291"),
                    Severity::Error,
                    "ruff",
                ),
            ]
        };
        for parser in ["auto", "python", "ruff"] {
            for output in ["python/ruff-warn-concise.txt", "python/ruff-warn-full.txt"] {
                let found = recorded(parser, output, None);
                assert_eq!(read(&found), ruff("w.py"), "{parser} {output}");
            }
        }
    }

    #[test]
    fn flake8s_own_output_keeps_its_warnings() {
        // flake8 7.5.0 on the same file: `w.py:4:1: C901 ...`, no closing
        // line.
        for parser in ["auto", "python", "flake8"] {
            let found = recorded(parser, "python/flake8-warn.txt", None);
            let severities: Vec<Severity> = found.diagnostics.iter().map(|d| d.severity).collect();
            assert_eq!(
                severities,
                [Severity::Warning, Severity::Warning],
                "{parser}"
            );
        }
    }

    #[test]
    fn a_mypy_column_is_the_character_only_one_reading_names() {
        // The lines of fixtures/diagnostics/python/mypy-wide.py.txt, with
        // what mypy 2.4.1 printed for them natively and under
        // `--no-native-parser`.
        let cases = [
            ("s = \"😀\"; x: int = \"a\"", 16, None),
            ("s = \"😀\"; x: int = \"a\"", 22, Some(19)),
            ("t = \"héllo\"; y: int = \"b\"", 22, None),
            ("t = \"héllo\"; y: int = \"b\"", 24, None),
            ("u = \"日本\"; z: int = \"c\"", 16, None),
            ("u = \"日本\"; z: int = \"c\"", 24, Some(20)),
            ("v = 1; w: int = \"d\"", 17, Some(17)),
            // Made up: non-ASCII text only after the column, and a column
            // past the line's end.
            ("x: int = \"a\"  # café", 10, Some(10)),
            ("v = 1", 9, None),
        ];
        for (text, column, expected) in cases {
            assert_eq!(
                super::mypy_column(text, column),
                expected,
                "{text} {column}"
            );
        }
    }

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

    #[test]
    fn pythons_own_syntax_errors_are_read_with_or_without_a_traceback() {
        // `python3 syn.py` (CPython 3.8.18 to 3.13.0) prints `  File
        // "/abs/syn.py", line 1`, the line, a caret and `SyntaxError:
        // invalid syntax`, with no `Traceback` header; `main.py` imports
        // `uni.py` under one. 3.10 and later mark `print "hello"` whole
        // (`^^^^^^^^^^^^^`), 3.9 and 3.8 its second word.
        let invalid = "SyntaxError: invalid syntax";
        // Without the sources, the columns of indented lines are counted
        // from their first character that is not blank (3.13 keeps the
        // tabs it indents with, and they are not counted either).
        for (output, print, tabs, again) in [
            (
                "python/python38-syntax.txt",
                ("pr.py:1:7", None),
                "tabs.py:3:1",
                true,
            ),
            (
                "python/python39-syntax.txt",
                ("pr.py:1:7", None),
                "tabs.py:3:1",
                false,
            ),
            (
                "python/python311-syntax.txt",
                ("pr.py:1:1", Some(14)),
                "tabs.py:3:1",
                false,
            ),
            (
                "python/python313-syntax.txt",
                ("pr.py:1:1", Some(14)),
                "tabs.py:3:1",
                false,
            ),
        ] {
            for parser in ["python", "auto"] {
                let found = recorded(parser, output, Some("/tmp/rec-py6/syntax"));
                let read: Vec<(String, Option<&str>, Option<u32>)> = found
                    .diagnostics
                    .iter()
                    .map(|d| (d.location(), d.code.as_deref(), d.end_column))
                    .collect();
                let syntax = |place: &str, end| (place.to_string(), Some("SyntaxError"), end);
                // 3.8 names the script as it was given, the module it
                // imports in full: the same place, printed twice.
                let mut expected = vec![
                    syntax("syn.py:1:7", None),
                    syntax("uni.py:1:17", None),
                    syntax(print.0, print.1),
                ];
                if again {
                    expected.push(syntax("uni.py:1:17", None));
                }
                expected.extend([syntax("deep.py:3:1", None), syntax(tabs, None)]);
                assert_eq!(read, expected, "{parser} {output}");
                assert_eq!(found.diagnostics[0].message, invalid, "{parser} {output}");
                assert_eq!(found.diagnostics[0].tool, "python", "{parser} {output}");
            }
        }
    }
}
