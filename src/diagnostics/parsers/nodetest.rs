//! node's built-in test runner (`node --test`), and TAP. node prints TAP
//! (version 13, a YAML block under each result) when its output is not a
//! terminal, up to Node 22, and its `spec` layout from Node 23 on (or with
//! `--test-reporter=spec`); any other TAP producer's `not ok` lines are
//! read too.
//!
//! A failure is a `not ok` line (one marked `# TODO` is not), or an entry
//! of spec's closing "✖ failing tests:" list (the failures spec printed as
//! they happened come again there, and only there from Node 23 on). It is
//! located at the first stack frame inside the project (the assertion, or
//! the line of the code under test that threw), else at the test's own
//! place. A suite that failed because its tests did is not a failure of
//! its own. A test file that could not run is one failure, placed at the
//! uncaught error node printed before it (on standard error, which TAP
//! carries as comments) when that error's stack names the file.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{caps, number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::{ColumnUnit, Severity};

/// Message lines kept of one failure (a deep-equal diff is longer).
pub(super) const MAX_MESSAGE_LINES: usize = 8;
/// Uncaught errors remembered for the test files they stopped, and
/// failures comments describe, for the results they place.
const MAX_REMEMBERED: usize = 64;
/// Lines kept from under a result with no YAML block.
const MAX_UNDER: usize = 64;
/// What a YAML block keeps: its first keys, and of each value its first
/// bytes (a stack or a diff can be long; the first frames are the ones
/// read).
const MAX_FIELDS: usize = 64;
const MAX_VALUE_BYTES: usize = 16 * 1024;
/// Failures held until the end to be placed by comments; past these they
/// go out as they are.
const MAX_UNPLACED: usize = 1000;

/// A TAP result: `ok 1 - name`, `not ok 2 - name # TODO why`. The number
/// and the dash are optional in TAP; `split_directive` reads the rest.
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<indent> *)(?P<not>not )?ok\b(?: \d+)?(?: -)?(?P<rest>.*)$")
        .expect("the TAP result regex is valid")
});

/// A result's description and whether a `# TODO` excuses its failure
/// (`# SKIP` says it did not run).
fn split_directive(rest: &str) -> (Option<String>, bool) {
    let rest = rest.trim();
    let (name, directive) = match rest.find("# ") {
        Some(i)
            if (i == 0 || rest[..i].ends_with(' '))
                && rest[i + 2..].get(..4).is_some_and(|w| {
                    w.eq_ignore_ascii_case("todo") || w.eq_ignore_ascii_case("skip")
                }) =>
        {
            (rest[..i].trim(), Some(&rest[i + 2..]))
        }
        _ => (rest, None),
    };
    let todo = directive.is_some_and(|d| d[..4].eq_ignore_ascii_case("todo"));
    ((!name.is_empty()).then(|| name.to_string()), todo)
}

/// A V8 stack frame as node prints it: `at fn (file:line:col)` or
/// `at file:line:col`; TAP's YAML leaves the `at ` out. A frame that ends
/// an error's stack may be followed by ` {` and the error's properties.
/// The path may hold parentheses that close (`app/(shop)/cart.test.js`).
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:at )?(?:async )?(?:[^()]*? \()?(?:file://)?(?P<file>(?:[^\s()]|\([^()\s]*\))(?:[^()]|\([^()]*\))*?):(?P<line>\d+):(?P<col>\d+)\)?(?: \{)?$")
        .expect("the node stack frame regex is valid")
});

/// An error's first line: `TypeError: message`, or with node's code as
/// spec prints it: `AssertionError [ERR_ASSERTION]: message`.
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<name>[A-Z][A-Za-z]*(?:Error|Exception)|Error)(?: \[[^\]]*\])?: (?P<message>.+)$",
    )
    .expect("the error line regex is valid")
});

/// spec's place of a failing test: `test at test/x.test.js:5:1`.
static TEST_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test at (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the spec place regex is valid")
});

/// spec's result line: `✖ name (1.05ms)`, `⚠ name (0.1ms) # TODO`.
static SPEC_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<mark>[✖⚠]) (?P<name>.+?) \([\d.]+m?s\)(?P<todo> # TODO.*)?$")
        .expect("the spec result regex is valid")
});

/// A place: file, line, column.
pub(super) type Place = (String, Option<u32>, Option<u32>);

/// A frame line's place, if it is a frame inside the project.
pub(super) fn project_frame(line: &str) -> Option<Place> {
    let c = caps(&FRAME, line)?;
    super::jstest::in_project(&c["file"])
        .then(|| (c["file"].to_string(), number(&c["line"]), number(&c["col"])))
}

/// `file:line:col` as node's `location` gives it.
fn location(text: &str) -> Option<Place> {
    let (rest, col) = text.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    Some((file.to_string(), number(line), number(col)))
}

/// Whether `file` (as a frame names it: absolute, or relative) is the test
/// file `target` (as a result names it: either).
fn same_file(file: &str, target: &str) -> bool {
    file == target
        || file
            .strip_suffix(target)
            .is_some_and(|head| head.ends_with('/') && !target.starts_with('/'))
        || target
            .strip_suffix(file)
            .is_some_and(|head| head.ends_with('/') && !file.starts_with('/'))
}

/// A failure's message from its error's text: the error's name when it
/// says more than an assertion failed, then its lines, blank ones left out.
fn message(name: Option<&str>, text: &str) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(MAX_MESSAGE_LINES)
        .map(str::to_string)
        .collect();
    match (name, lines.first_mut()) {
        (Some(name), Some(first)) if name != "AssertionError" && !first.starts_with(name) => {
            *first = format!("{name}: {first}");
        }
        _ => {}
    }
    folded(lines)
}

/// Message lines as one text. A first line that only announces what
/// follows (`Expected values to be strictly equal:`) takes the next one
/// with it, so that the first line, which a summary shows, says it all.
pub(super) fn folded(mut lines: Vec<String>) -> String {
    if lines.len() > 1 && lines[0].ends_with(':') {
        let second = lines.remove(1);
        lines[0] = format!("{} {second}", lines[0]);
    }
    lines.join("\n")
}

/// An error line as spec prints it, in TAP's words: node's code left out,
/// and an assertion's name too (its message says what failed).
pub(super) fn spec_message_line(line: &str) -> String {
    match caps(&ERROR_LINE, line) {
        Some(c) if &c["name"] == "AssertionError" => c["message"].to_string(),
        Some(c) => format!("{}: {}", &c["name"], &c["message"]),
        None => line.to_string(),
    }
}

/// One result's YAML block, as node writes it: the keys of its first
/// level, each a scalar (quoted or not) or a literal block (`|-`); nested
/// values (`expected`, `actual`) are passed over.
#[derive(Debug, Default)]
struct Yaml {
    /// The indentation of its keys: its first key's.
    indent: usize,
    fields: Vec<(String, String)>,
    /// The literal block being read: its key's index in `fields`.
    block: Option<usize>,
}

impl Yaml {
    fn line(&mut self, line: &str) {
        let indent = line.len() - line.trim_start().len();
        // Its keys are indented as its first is (node: as `---`; tape:
        // two more).
        if self.fields.is_empty() && self.block.is_none() && !line.trim().is_empty() {
            self.indent = indent;
        }
        if let Some(i) = self.block {
            if indent > self.indent || line.trim().is_empty() {
                let text = line.get(self.indent + 2..).unwrap_or("").trim_end();
                let value = &mut self.fields[i].1;
                if value.len() < MAX_VALUE_BYTES {
                    if !value.is_empty() {
                        value.push('\n');
                    }
                    value.push_str(text);
                }
                return;
            }
            self.block = None;
        }
        if indent != self.indent || self.fields.len() >= MAX_FIELDS {
            return;
        }
        let Some((key, value)) = line.trim().split_once(':') else {
            return;
        };
        let value = value.trim();
        if matches!(value, "|" | "|-" | "|+" | ">" | ">-") {
            self.block = Some(self.fields.len());
            self.fields.push((key.to_string(), String::new()));
        } else {
            self.fields.push((key.to_string(), unquote(value)));
        }
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty() && *v != "~")
    }
}

/// The message of lines under a result: from the error line, when one
/// is there, to the stack (mocha prints the message, then the error with
/// its message again).
fn under_message(under: &[String]) -> String {
    let start = under
        .iter()
        .position(|l| ERROR_LINE.is_match(l))
        .unwrap_or(0);
    let lines: Vec<String> = under[start..]
        .iter()
        .take_while(|l| !(l.starts_with("at ") && FRAME.is_match(l)))
        .filter(|l| !l.is_empty())
        .take(MAX_MESSAGE_LINES)
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                spec_message_line(l)
            } else {
                l.clone()
            }
        })
        .collect();
    folded(lines)
}

/// A test's name as node's TAP reporter escaped it, as it is: `\\` is a
/// backslash, `\#` a `#` (which would open a directive), `\n` a line
/// break.
fn tap_unescape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(other @ ('\\' | '#')) => out.push(other),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// A YAML scalar's text: `'it''s'` → `it's`, `"a \"b\""` → `a "b"`.
fn unquote(value: &str) -> String {
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        return out;
    }
    value.to_string()
}

/// A TAP result being read, with its YAML block.
#[derive(Debug)]
struct Point {
    indent: usize,
    failed: bool,
    name: Option<String>,
    yaml: Option<Yaml>,
    /// Lines indented under it that are not YAML (mocha's TAP: the
    /// message, then the error and its stack).
    under: Vec<String>,
    range: Range<u64>,
}

/// An uncaught error and the first frame of its stack inside the project.
#[derive(Debug)]
struct Crash {
    message: String,
    place: Place,
    range: Range<u64>,
    /// It is the reason a test file failed, found as such.
    told: bool,
}

/// A failure as a comment describes it.
#[derive(Debug)]
struct Said {
    test: Option<String>,
    place: Option<Place>,
    todo: bool,
    message: Vec<String>,
}

/// `Test::More`'s place of a failure: `at t/math.t line 7.`
fn perl_place(text: &str) -> Option<Place> {
    let rest = text.strip_prefix("at ")?.strip_suffix('.')?;
    let (file, line) = rest.rsplit_once(" line ")?;
    Some((file.to_string(), number(line), None))
}

/// A spec "failing tests" entry being read.
#[derive(Debug, Default)]
struct SpecEntry {
    place: Option<Place>,
    name: Option<String>,
    todo: bool,
    message: Vec<String>,
    frame: Option<Place>,
    /// The stack has started: message lines are over.
    stack: bool,
    range: Range<u64>,
}

#[derive(Debug, Default)]
pub struct NodeTest {
    /// The TAP result whose YAML block may follow.
    result: Option<Point>,
    /// Inside spec's closing list of failing tests.
    failing_list: bool,
    entry: Option<SpecEntry>,
    /// The uncaught error whose stack is being read, and where it began.
    uncaught: Option<(String, u64)>,
    /// Uncaught errors with a frame inside the project: the reason of the
    /// test file they stopped, else findings of their own (a runner such
    /// as tape stops at the first).
    crashes: Vec<Crash>,
    /// The output is node's test runner's: its YAML fields or spec's list.
    node: bool,
    /// Failures no YAML block placed.
    unplaced: Vec<Found>,
    /// The failure comments are describing, and those described.
    saying: Option<Said>,
    said: Vec<Said>,
}

impl NodeTest {
    /// A test file that could not run, and why: the uncaught error whose
    /// stack names it, else what the runner said.
    fn file_failure(
        &mut self,
        dialect: &'static str,
        file: &str,
        said: &str,
        at: Option<Place>,
        range: &Range<u64>,
    ) -> Found {
        let crash = self
            .crashes
            .iter_mut()
            .rev()
            .find(|crash| same_file(&crash.place.0, file));
        let (text, place) = match crash {
            Some(crash) => {
                crash.told = true;
                (crash.message.clone(), Some(crash.place.clone()))
            }
            None => (format!("the test file failed to run: {said}"), at),
        };
        let mut found = Found::new(dialect, Severity::Error, text)
            .origin(Origin::Test)
            .unit(ColumnUnit::Utf16)
            .range(range);
        if let Some((file, line, column)) = place {
            found = found.at(&file, line, column);
        }
        found
    }

    /// The TAP result read, as a failure if it is one.
    fn close_result(&mut self, out: &mut Out) {
        let Some(mut result) = self.result.take() else {
            return;
        };
        if !result.failed {
            return;
        }
        let yaml = result.yaml.unwrap_or_default();
        let node = yaml.get("failureType").is_some() || yaml.get("location").is_some();
        self.node |= node;
        // node escapes a test's name in TAP (`C:\\dir`, `a \# b`); spec
        // and the test's code name it as it is.
        if node {
            result.name = result.name.as_deref().map(tap_unescape);
        }
        // A suite fails when its tests do: they are the findings.
        if yaml.get("failureType") == Some("subtestsFailed") {
            return;
        }
        let place = yaml.get("location").and_then(location);
        let error = yaml.get("error").unwrap_or("");
        // A test file that exited without its tests: node's own words.
        if yaml.get("exitCode").is_some() && error == "test failed" {
            let file = place
                .as_ref()
                .map(|p| p.0.clone())
                .or_else(|| result.name.clone())
                .unwrap_or_default();
            out.push(self.file_failure("tap", &file, error, place, &result.range));
            return;
        }
        let frame = yaml
            .get("stack")
            .and_then(|stack| stack.lines().find_map(project_frame))
            .or_else(|| yaml.get("at").and_then(project_frame))
            .or_else(|| result.under.iter().find_map(|l| project_frame(l)));
        let mut text = message(yaml.get("name"), error);
        if text.is_empty() {
            text = under_message(&result.under);
        }
        // tape: what was compared, and the values.
        if text.is_empty() {
            text = ["operator", "expected", "actual"]
                .iter()
                .filter_map(|key| Some(format!("{key}: {}", yaml.get(key)?)))
                .collect::<Vec<_>>()
                .join("\n");
        }
        if text.is_empty() {
            text = format!("test `{}` failed", result.name.as_deref().unwrap_or("?"));
        }
        let found = Found::new("tap", Severity::Error, text)
            .test(result.name)
            .origin(Origin::Test)
            .unit(ColumnUnit::Utf16)
            .range(&result.range);
        match frame.or(place) {
            Some((file, line, column)) => out.push(found.at(&file, line, column)),
            // A producer that says where in its own comments (Perl's
            // Test::More), before or after the result: placed at the end.
            None if self.unplaced.len() < MAX_UNPLACED => self.unplaced.push(found),
            None => out.push(found),
        }
    }

    /// The failures no YAML placed, placed by the comments that name
    /// their test, in turn.
    fn place_the_rest(&mut self, out: &mut Out) {
        self.close_said();
        for mut found in std::mem::take(&mut self.unplaced) {
            let said = self
                .said
                .iter()
                .position(|s| s.test.is_some() && s.test == found.test);
            if let Some(said) = said.map(|i| self.said.remove(i)) {
                if let Some((file, line, column)) = said.place {
                    found = found.at(&file, line, column);
                }
                if !said.message.is_empty() {
                    found.message = folded(said.message);
                }
            }
            out.push(found);
        }
    }

    /// The failure a comment is describing, done.
    fn close_said(&mut self) {
        if let Some(said) = self.saying.take() {
            if !said.todo && self.said.len() < MAX_REMEMBERED {
                self.said.push(said);
            }
        }
    }

    /// A comment line: `Test::More`'s account of a failure
    /// (`Failed test 'name'`, `at t/x.t line 7.`, `got:`/`expected:`).
    fn comment(&mut self, text: &str) {
        let trimmed = text.trim();
        if let Some(rest) = trimmed
            .strip_prefix("Failed test")
            .or_else(|| trimmed.strip_prefix("Failed (TODO) test"))
        {
            self.close_said();
            let todo = trimmed.starts_with("Failed (TODO)");
            let rest = rest.trim();
            let (named, place) = match rest.strip_prefix('\'') {
                Some(quoted) => (quoted.rsplit_once('\'').map(|(n, _)| n.to_string()), None),
                None => (None, perl_place(rest)),
            };
            self.saying = Some(Said {
                test: named,
                place,
                todo,
                message: Vec::new(),
            });
            return;
        }
        let Some(said) = &mut self.saying else {
            return;
        };
        if trimmed.starts_with("Looks like you") || trimmed.is_empty() {
            self.close_said();
        } else if let Some(place) = perl_place(trimmed).filter(|_| said.place.is_none()) {
            said.place = Some(place);
        } else if said.message.len() < MAX_MESSAGE_LINES {
            said.message.push(trimmed.to_string());
        }
    }

    /// The spec entry read, as a failure unless it is a `# TODO`.
    fn close_entry(&mut self, out: &mut Out) {
        let Some(entry) = self.entry.take() else {
            return;
        };
        if entry.todo || entry.name.is_none() {
            return;
        }
        let said = folded(entry.message);
        // A test file that could not run: node names it in the place of a
        // test, and says `'test failed'`.
        if said == "'test failed'" {
            let file = entry
                .place
                .as_ref()
                .map(|p| p.0.clone())
                .unwrap_or_default();
            out.push(self.file_failure("spec", &file, "test failed", entry.place, &entry.range));
            return;
        }
        let mut found = Found::new("spec", Severity::Error, said)
            .test(entry.name)
            .origin(Origin::Test)
            .unit(ColumnUnit::Utf16)
            .range(&entry.range);
        if let Some((file, line, column)) = entry.frame.or(entry.place) {
            found = found.at(&file, line, column);
        }
        out.push(found);
    }

    /// A line outside results and lists: an uncaught error and its stack,
    /// remembered for the test file it stopped.
    fn watch_crash(&mut self, line: &str, at: &Range<u64>) {
        if ERROR_LINE.is_match(line) {
            self.uncaught = Some((line.to_string(), at.start));
            return;
        }
        if self.uncaught.is_none() {
            return;
        }
        if let Some(place) = project_frame(line) {
            if let Some((message, start)) = self.uncaught.take() {
                if self.crashes.len() < MAX_REMEMBERED {
                    self.crashes.push(Crash {
                        message,
                        place,
                        range: start..at.end,
                        told: false,
                    });
                }
            }
        }
    }

    /// One line of spec's closing list.
    fn spec_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some(c) = caps(&TEST_AT, line) {
            self.close_entry(out);
            self.entry = Some(SpecEntry {
                place: Some((c["file"].to_string(), number(&c["line"]), number(&c["col"]))),
                range: at.clone(),
                ..SpecEntry::default()
            });
            return;
        }
        let Some(entry) = &mut self.entry else {
            return;
        };
        entry.range.end = at.end;
        if entry.name.is_none() {
            if let Some(c) = caps(&SPEC_RESULT, line) {
                entry.name = Some(c["name"].to_string());
                entry.todo = &c["mark"] == "⚠" || c.name("todo").is_some();
            }
            return;
        }
        let trimmed = line.trim();
        if FRAME.is_match(line) && trimmed.starts_with("at ") {
            entry.stack = true;
            if entry.frame.is_none() {
                entry.frame = project_frame(line);
            }
        } else if !entry.stack && !trimmed.is_empty() && entry.message.len() < MAX_MESSAGE_LINES {
            entry.message.push(spec_message_line(trimmed));
        }
    }
}

impl Grammar for NodeTest {
    /// `node-test` once the output is known to be node's runner, `tap`
    /// for any other producer's TAP (tape, Perl's `prove`).
    fn name(&self) -> &'static str {
        if self.node {
            "node-test"
        } else {
            "tap"
        }
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            // `ok`, `not ok`, `#`, `test at`, an error's name (`Bail out!`
            // among the capitals), `✖`'s first byte.
            first: b"ont#ABCDEFGHIJKLMNOPQRSTUVWXYZ\xe2",
            indented: b"on#-.a\xe2",
            anywhere: b"",
        })
    }

    fn busy(&self) -> bool {
        self.result.is_some() || self.failing_list
    }

    fn wants(&self, line: &[u8]) -> bool {
        if self.busy() {
            return true;
        }
        let rest = super::trimmed(line);
        rest.starts_with(b"ok")
            || rest.starts_with(b"not ok")
            || rest.starts_with(b"#")
            || rest.starts_with(b"Bail out!")
            || rest.starts_with("✖".as_bytes())
            || rest.starts_with(b"at ")
            || (line.first().is_some_and(u8::is_ascii_uppercase)
                && (memchr::memmem::find(line, b"Error").is_some()
                    || memchr::memmem::find(line, b"Exception").is_some()))
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if self.failing_list {
            self.spec_line(line, at, out);
            return;
        }
        if line.trim() == "✖ failing tests:" {
            self.close_result(out);
            self.failing_list = true;
            self.node = true;
            return;
        }
        if let Some(result) = &mut self.result {
            let indent = line.len() - line.trim_start().len();
            match &mut result.yaml {
                None if line.trim() == "---" && indent == result.indent + 2 => {
                    result.yaml = Some(Yaml::default());
                    result.range.end = at.end;
                    return;
                }
                Some(_) if line.trim() == "..." && indent == result.indent + 2 => {
                    result.range.end = at.end;
                    self.close_result(out);
                    return;
                }
                Some(yaml) => {
                    yaml.line(line);
                    result.range.end = at.end;
                    return;
                }
                None if (indent > result.indent || line.is_empty())
                    && result.under.len() < MAX_UNDER =>
                {
                    result.under.push(line.trim().to_string());
                    result.range.end = at.end;
                    return;
                }
                None => self.close_result(out),
            }
        }
        if let Some(c) = caps(&RESULT, line) {
            let (name, todo) = split_directive(&c["rest"]);
            self.result = Some(Point {
                indent: c["indent"].len(),
                failed: c.name("not").is_some() && !todo,
                name,
                yaml: None,
                under: Vec::new(),
                range: at.clone(),
            });
            return;
        }
        if let Some(reason) = line.trim().strip_prefix("Bail out!") {
            let reason = reason.trim();
            let text = if reason.is_empty() {
                "the tests bailed out".to_string()
            } else {
                format!("the tests bailed out: {reason}")
            };
            out.push(
                Found::new("tap", Severity::Error, text)
                    .origin(Origin::Test)
                    .range(at),
            );
            return;
        }
        // What a test printed on standard error: TAP carries it as
        // comments.
        let text = match line.trim_start().strip_prefix('#') {
            Some(comment) => {
                let text = comment.strip_prefix(' ').unwrap_or(comment);
                if text.starts_with("Subtest:") {
                    return;
                }
                self.comment(text);
                text
            }
            None => line,
        };
        self.watch_crash(text, at);
    }

    fn finish(&mut self, out: &mut Out) {
        self.close_result(out);
        self.close_entry(out);
        self.place_the_rest(out);
        for crash in std::mem::take(&mut self.crashes) {
            if !crash.told {
                let (file, line, column) = crash.place;
                out.push(
                    Found::new("crash", Severity::Error, crash.message)
                        .at(&file, line, column)
                        .origin(Origin::Test)
                        .unit(ColumnUnit::Utf16)
                        .range(&crash.range),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the grammar finds in `text`, read line by line.
    fn read(text: &str) -> Vec<Found> {
        let mut grammar = NodeTest::default();
        let mut out = Out::default();
        let mut at = 0u64;
        for line in text.lines() {
            let end = at + line.len() as u64;
            grammar.line(line, &(at..end), &mut out);
            at = end + 1;
        }
        grammar.finish(&mut out);
        out.found
    }

    /// File, line, test and message.
    type Brief<'a> = (Option<&'a str>, Option<u32>, Option<&'a str>, &'a str);

    fn brief(found: &[Found]) -> Vec<Brief<'_>> {
        found
            .iter()
            .map(|f| {
                (
                    f.file.as_deref(),
                    f.line,
                    f.test.as_deref(),
                    f.message.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn a_frame_in_a_route_group_keeps_its_parentheses() {
        // Node.js 20.20.2 on `lib/(core)/sum.test.mjs`: the assertion's
        // frame, not the test's declaration, in TAP and in spec.
        for output in [
            "node-test/node20-group-tap.txt",
            "node-test/node20-group-spec.txt",
        ] {
            let found =
                crate::diagnostics::tests::recorded("node-test", output, Some("/tmp/dx/vtrec"));
            let places: Vec<String> = found
                .diagnostics
                .iter()
                .map(crate::diagnostics::Diagnostic::location)
                .collect();
            assert_eq!(places, ["lib/(core)/sum.test.mjs:9:10"], "{output}");
            assert_eq!(found.diagnostics[0].test.as_deref(), Some("sum adds"));
        }
    }

    #[test]
    fn plain_tap_results_fail_unless_a_directive_excuses_them() {
        let found = read(
            "1..5\nok 1 - passes\nnot ok 2 - breaks\nnot ok 3 # TODO later\nok 4 # SKIP no network\nnot ok broke without a number\nBail out! database down\n",
        );
        assert_eq!(
            brief(&found),
            [
                (None, None, None, "the tests bailed out: database down"),
                (None, None, Some("breaks"), "test `breaks` failed"),
                (
                    None,
                    None,
                    Some("broke without a number"),
                    "test `broke without a number` failed"
                ),
            ]
        );
    }

    #[test]
    fn yaml_scalars_are_read_as_yaml_quotes_them() {
        let found = read(concat!(
            "TAP version 13\n",
            "not ok 1 - quoted\n",
            "  ---\n",
            "  location: '/app/test/it''s.test.js:4:1'\n",
            "  error: \"said \\\"no\\\" \\\\n\"\n",
            "  expected:\n",
            "    nested: 1\n",
            "  ...\n",
        ));
        assert_eq!(
            brief(&found),
            [(
                Some("/app/test/it's.test.js"),
                Some(4),
                Some("quoted"),
                "said \"no\" \\n"
            )]
        );
    }

    #[test]
    fn a_frame_names_a_test_file_relative_or_absolute() {
        assert!(same_file("/app/test/a.test.js", "test/a.test.js"));
        assert!(same_file("test/a.test.js", "/app/test/a.test.js"));
        assert!(same_file("/app/test/a.test.js", "/app/test/a.test.js"));
        assert!(!same_file("/app/test/xa.test.js", "a.test.js"));
        assert!(!same_file("/app/test/a.test.js", "/other/test/a.test.js"));
    }
}
