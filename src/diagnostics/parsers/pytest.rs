//! pytest, in its long (default), short, line and native traceback
//! styles, and unittest (`python -m unittest`), which prints Python's own
//! tracebacks too. A failure is located at the deepest frame in the
//! project (the assertion in the test file, or the line in the code under
//! test that raised), its message the `E` lines (a native traceback's
//! exception line), its code the exception type.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b".py:"));

use super::{number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::Severity;

/// Frames kept of one failure (the innermost ones matter).
const MAX_FRAMES: usize = 256;

/// `E` lines kept in one message.
const MAX_EXPLANATION_LINES: usize = 20;

/// A frame or crash site: `tests/test_x.py:10: AssertionError`,
/// `pkg/calc.py:6: in add`, `tests/test_x.py:14: ` (long style, between
/// frames), `/abs/tests/test_x.py:10: AssertionError: msg` or
/// `/abs/tests/test_x.py:2: assert (1 + 2) == 4` (line style, where pytest
/// shortens a failed `assert`'s `AssertionError: assert ...`). An
/// exception's name is capitalised (`KeyError`, `mod.CustomError`), which
/// tells it from a compiler's `error:`.
static SITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*\.py):(?P<line>\d+):(?: in (?P<function>\S+)| (?P<error>(?:[a-z_]\w*\.)*[A-Z]\w*)(?:: (?P<message>.+))?| (?P<assert>assert .+))?\s*$")
        .expect("the pytest site regex is valid")
});

/// The short summary's `FAILED tests/test_x.py::test_a - assert ...`.
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^FAILED (?P<id>(?P<file>[^\s:][^:]*\.py)::.+?)(?: - .*)?$")
        .expect("the pytest summary regex is valid")
});

/// `____ test_name ____` or `____ ERROR collecting tests/x.py ____`.
static SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^_{3,} (?P<name>.+?) _{3,}$").expect("the pytest section regex is valid")
});

/// A native traceback's frame: `  File "/abs/tests/test_x.py", line 5, in
/// test_add` (the path quoted, so it may hold spaces).
static NATIVE_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in .*)?$"#)
        .expect("the Python traceback frame regex is valid")
});

/// A traceback's last line, the exception: `AssertionError: 3 != 4`,
/// `mod.CustomError`, `AssertionError` alone.
static EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<error>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::(?: .*)?)?$")
        .expect("the Python exception regex is valid")
});

/// unittest's header over a traceback: `FAIL: test_add
/// (tests.test_unit.ParsingTest.test_add)` or `ERROR: ...`.
static UNITTEST_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:FAIL|ERROR): (?P<name>\S+)(?: \((?P<id>[^)]+)\))?")
        .expect("the unittest header regex is valid")
});

/// `platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0`.
static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^platform \S+ -- Python \S+, pytest-(?P<version>[\w.]+)")
        .expect("the pytest version regex is valid")
});

#[derive(Debug, Default)]
pub struct Pytest {
    /// The test whose failure is being read.
    test: Option<String>,
    /// Its frames, outermost first.
    frames: Vec<(String, u32)>,
    explanation: Vec<String>,
    start: Option<u64>,
    /// `--tb=line`'s failures, which name no test: each waits for the
    /// short summary's `FAILED <test id>` about its file, in order.
    unnamed: Vec<Found>,
    /// Failures a section names by the test's own name (`test_a`,
    /// `TestC.test_m[1]`), with the number of their section (a chained
    /// exception gives one section several): each waits for the summary's
    /// `FAILED <test id>` to be named in full, as `--tb=line`'s are.
    named: Vec<(usize, Found)>,
    /// Sections seen so far.
    sections: usize,
    /// A native traceback being read (`Traceback (most recent call
    /// last):` seen): its frames, outermost first, and where it started.
    native: Option<(Vec<(String, u32)>, u64)>,
    /// In a failure's `--- Captured stderr call ---` (or stdout, log):
    /// what the test printed, where a traceback is one it caught.
    captured: bool,
}

/// Whether a frame is the project's (not the standard library's or an
/// installed package's).
fn in_project(file: &str) -> bool {
    !(file.contains("site-packages/")
        || file.contains("dist-packages/")
        || file.contains("/lib/python")
        || file.starts_with('<'))
}

/// unittest's name for a test: its id, `tests.test_unit.ParsingTest.test_add`
/// (Python before 3.11 leaves the method's name out of the parentheses).
fn unittest_name(c: &regex::Captures<'_>) -> String {
    let name = &c["name"];
    match c.name("id").map(|m| m.as_str()) {
        Some(id) if id.ends_with(&format!(".{name}")) => id.to_string(),
        Some(id) => format!("{id}.{name}"),
        None => name.to_string(),
    }
}

impl Pytest {
    /// A line of an open native traceback; false when the traceback is
    /// over and the line is not its own.
    fn native_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        let Some((frames, start)) = self.native.as_mut() else {
            return false;
        };
        if let Some(c) = super::caps(&NATIVE_FRAME, line) {
            if let Some(l) = number(&c["line"]) {
                if frames.len() >= MAX_FRAMES {
                    frames.remove(0);
                }
                frames.push((c["file"].to_string(), l));
            }
            return true;
        }
        // The source line and the carets under it, indented.
        if line.starts_with(char::is_whitespace) {
            return true;
        }
        let start = *start;
        let frames = std::mem::take(frames);
        self.native = None;
        let Some(c) = super::caps(&EXCEPTION, line) else {
            return false;
        };
        let site = frames
            .iter()
            .rev()
            .find(|(file, _)| in_project(file))
            .or_else(|| frames.last());
        let mut found = Found::new("native", Severity::Error, line.trim_end())
            .code(Some(c["error"].to_string()))
            .test(self.test.clone())
            .origin(Origin::Test)
            .range(&(start..at.end));
        if let Some((file, line)) = site {
            found = found.at(file, Some(*line), None);
        }
        self.keep(found, out);
        true
    }

    /// Holds a failure until the short summary names its test in full;
    /// bounded: past the extractor's cap it goes out as it is.
    fn keep(&mut self, found: Found, out: &mut Out) {
        let cap = crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK;
        if found.test.is_none() && self.unnamed.len() < cap {
            self.unnamed.push(found);
        } else if found.test.is_some() && self.named.len() < cap {
            self.named.push((self.sections, found));
        } else {
            out.push(found);
        }
    }

    fn flush(
        &mut self,
        error: Option<&str>,
        message: Option<&str>,
        at: &Range<u64>,
        out: &mut Out,
    ) {
        let frames = std::mem::take(&mut self.frames);
        let explanation = std::mem::take(&mut self.explanation);
        let start = self.start.take();
        // Outside a test's section only `--tb=line`'s crash site, which
        // names the error, closes a failure.
        let test = self.test.clone();
        if test.is_none() && error.is_none() {
            return;
        }
        let site = frames
            .iter()
            .rev()
            .find(|(file, _)| in_project(file))
            .or_else(|| frames.last());
        let headline = explanation
            .first()
            .cloned()
            .or_else(|| message.map(str::to_string))
            .or_else(|| error.map(str::to_string))
            .unwrap_or_else(|| format!("{} failed", test.as_deref().unwrap_or("a test")));
        let mut whole = headline;
        for more in explanation.iter().skip(1) {
            whole.push('\n');
            whole.push_str(more);
        }
        let dialect = if test.is_some() { "long" } else { "line" };
        let mut found = Found::new(dialect, Severity::Error, whole)
            .code(error.map(str::to_string).or_else(|| {
                explanation
                    .first()
                    .and_then(|e| e.split(':').next())
                    .filter(|e| !e.contains(' '))
                    .map(str::to_string)
            }))
            .test(test)
            .origin(Origin::Test)
            .range(&(start.unwrap_or(at.start)..at.end));
        if let Some((file, line)) = site {
            found = found.at(file, Some(*line), None);
        }
        self.keep(found, out);
    }

    /// The short summary's `FAILED <test id>`: the failures of the first
    /// section named by the id's own part (`TestC::test_m` is
    /// `TestC.test_m`), wherever they are located, or else the first
    /// unnamed failure in its file, are that test's.
    fn name_one(&mut self, id: &str, file: &str, out: &mut Out) {
        let ours = |found: &Found| {
            found.file.as_deref().is_some_and(|f| {
                f == file
                    || f.strip_suffix(file)
                        .is_some_and(|dir| dir.ends_with(['/', '\\']))
            })
        };
        let own = id
            .strip_prefix(file)
            .and_then(|rest| rest.strip_prefix("::"))
            .map(|rest| rest.replace("::", "."));
        let section = self
            .named
            .iter()
            .find(|(_, found)| own.is_some() && found.test == own)
            .map(|(section, _)| *section);
        if let Some(section) = section {
            let (theirs, rest) = std::mem::take(&mut self.named)
                .into_iter()
                .partition(|(s, _)| *s == section);
            self.named = rest;
            for (_, found) in theirs {
                out.push(found.test(Some(id.to_string())));
            }
        } else if let Some(i) = self.unnamed.iter().position(ours) {
            let found = self.unnamed.remove(i);
            out.push(found.test(Some(id.to_string())));
        }
    }
}

impl Grammar for Pytest {
    fn name(&self) -> &'static str {
        "pytest"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"p_=EFT-",
            indented: b"F",
            anywhere: b":",
        })
    }

    fn busy(&self) -> bool {
        self.native.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy()
            || line.starts_with(b"Traceback ")
            || line.starts_with(b"-")
            || line.starts_with(b"FAIL: ")
            || line.starts_with(b"ERROR: ")
            || line.starts_with(b"platform ")
            || line.starts_with(b"___")
            || line.starts_with(b"====")
            || line.starts_with(b"E ")
            || NEEDLE.find(line).is_some()
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if self.native_line(line, at, out) {
            return;
        }
        if line.starts_with("Traceback (most recent call last):") {
            if !self.captured {
                self.native = Some((Vec::new(), at.start));
            }
            return;
        }
        if line.starts_with("---") && line.contains(" Captured ") {
            self.captured = true;
            return;
        }
        if let Some(c) = super::caps(&UNITTEST_HEADER, line) {
            self.test = Some(unittest_name(&c));
            self.sections += 1;
            return;
        }
        if let Some(c) = super::caps(&VERSION, line) {
            out.version = Some(c["version"].to_string());
            return;
        }
        if let Some(c) = super::caps(&SECTION, line) {
            if !self.frames.is_empty() || !self.explanation.is_empty() {
                self.flush(None, None, at, out);
            }
            let name = c["name"].to_string();
            // `_ _ _ _` separates frames inside one failure.
            if !name.starts_with("_ ") {
                self.captured = false;
                self.test = Some(name);
                self.start = Some(at.start);
                self.sections += 1;
            }
            return;
        }
        if line.starts_with("====") {
            if !self.frames.is_empty() || !self.explanation.is_empty() {
                self.flush(None, None, at, out);
            }
            self.test = None;
            self.captured = false;
            return;
        }
        if let Some(rest) = line.strip_prefix("E ") {
            if self.explanation.len() < MAX_EXPLANATION_LINES {
                self.explanation.push(rest.trim().to_string());
            }
            return;
        }
        if let Some(c) = super::caps(&SUMMARY, line) {
            if !self.unnamed.is_empty() || !self.named.is_empty() {
                self.name_one(&c["id"], &c["file"], out);
            }
            return;
        }
        let Some(c) = super::caps(&SITE, line) else {
            return;
        };
        let Some(l) = number(&c["line"]) else {
            return;
        };
        if self.frames.len() >= MAX_FRAMES {
            self.frames.remove(0);
        }
        self.frames.push((c["file"].to_string(), l));
        // A failed `assert`, shortened (line style): an `AssertionError`.
        let (error, message) = match (c.name("error"), c.name("assert")) {
            (Some(error), _) => (error.as_str(), c.name("message").map(|m| m.as_str())),
            (None, Some(assert)) => ("AssertionError", Some(assert.as_str())),
            (None, None) => return,
        };
        if self.test.is_none() {
            // `--tb=line`: one line per failure, no section.
            self.start = Some(at.start);
        }
        self.flush(Some(error), message, at, out);
        if message.is_some() {
            self.test = None;
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if !self.frames.is_empty() {
            let end = self.start.unwrap_or(0);
            self.flush(None, None, &(end..end), out);
        }
        // No summary named them (`-rN`, or the output was cut).
        let named = self.named.drain(..).map(|(_, found)| found);
        for found in named.chain(self.unnamed.drain(..)) {
            out.push(found);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{places, recorded};
    use crate::diagnostics::Extracted;

    /// Place, code, test and message of each finding.
    fn read(found: &Extracted) -> Vec<(String, Option<&str>, Option<&str>, &str)> {
        found
            .diagnostics
            .iter()
            .map(|d| {
                (
                    d.location(),
                    d.code.as_deref(),
                    d.test.as_deref(),
                    d.message.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn native_tracebacks_are_located_at_their_deepest_frame_in_the_project() {
        // pytest 9.2.0 `--tb=native`: pytest's and pluggy's frames in
        // site-packages first, then `File "/tmp/rec-parsers/pyt/...", line
        // 5, in test_add`, and last `AssertionError: assert 3 == 4`; each
        // named as the short summary names it, wherever it is located.
        for parser in ["pytest", "auto"] {
            let found = recorded(
                parser,
                "python/pytest-native.txt",
                Some("/tmp/rec-parsers/pyt"),
            );
            assert_eq!(
                read(&found),
                [
                    (
                        "tests/test_native.py:5".to_string(),
                        Some("AssertionError"),
                        Some("tests/test_native.py::test_add"),
                        "AssertionError: assert 3 == 4"
                    ),
                    (
                        "pkg/parsing.py:6".to_string(),
                        Some("ValueError"),
                        Some("tests/test_native.py::test_parse"),
                        "ValueError: invalid literal for int() with base 10: 'x'"
                    ),
                    (
                        "tests/test_native.py:14".to_string(),
                        Some("AssertionError"),
                        Some("tests/test_native.py::test_message"),
                        "AssertionError: total is off"
                    ),
                ],
                "{parser}"
            );
        }
    }

    #[test]
    fn a_traceback_the_test_printed_is_not_a_failure() {
        // pytest 9.2.0, long style: `test_logged` caught a `ValueError` and
        // printed its traceback (under `--- Captured stderr call ---`), then
        // failed an `assert`. A chained exception is two findings, as
        // pytest shows two crash sites.
        let found = recorded(
            "pytest",
            "python/pytest-captured.txt",
            Some("/tmp/rec-parsers/pyc"),
        );
        assert_eq!(
            places(&found),
            [
                (
                    "tests/test_logged.py:14".to_string(),
                    Some("AssertionError"),
                    Some("tests/test_logged.py::test_logged")
                ),
                (
                    "tests/test_logged.py:20".to_string(),
                    Some("KeyError"),
                    Some("tests/test_logged.py::ChainTest::test_chained")
                ),
                (
                    "tests/test_logged.py:22".to_string(),
                    Some("RuntimeError"),
                    Some("tests/test_logged.py::ChainTest::test_chained")
                ),
            ]
        );
    }

    #[test]
    fn unittests_failures_and_errors_are_located_and_named() {
        // `python -m unittest` (CPython 3.11.7): `ERROR: test_parse
        // (tests.test_unit.ParsingTest.test_parse)`, a traceback, and
        // `FAIL:` for the two assertions.
        for parser in ["unittest", "auto"] {
            let found = recorded(parser, "python/unittest.txt", Some("/tmp/rec-parsers/pyu"));
            assert_eq!(
                read(&found),
                [
                    (
                        "pkg/parsing.py:6".to_string(),
                        Some("ValueError"),
                        Some("tests.test_unit.ParsingTest.test_parse"),
                        "ValueError: invalid literal for int() with base 10: 'x'"
                    ),
                    (
                        "tests/test_unit.py:8".to_string(),
                        Some("AssertionError"),
                        Some("tests.test_unit.ParsingTest.test_add"),
                        "AssertionError: 3 != 4"
                    ),
                    (
                        "tests/test_unit.py:15".to_string(),
                        Some("AssertionError"),
                        Some("tests.test_unit.ParsingTest.test_plain_assert"),
                        "AssertionError: total is off"
                    ),
                ],
                "{parser}"
            );
        }
    }

    #[test]
    fn line_style_failures_end_at_each_crash_line_and_take_the_summarys_names() {
        // pytest 9.2.0 `--tb=line`: `E   assert (1 + 2) == 4`, then
        // `/tmp/rec-diag/pytest/tests/test_x.py:2: assert (1 + 2) == 4`.
        let found = recorded(
            "pytest",
            "python/pytest-line.txt",
            Some("/tmp/rec-diag/pytest"),
        );
        assert_eq!(
            places(&found),
            [
                (
                    "tests/test_x.py:2".to_string(),
                    Some("AssertionError"),
                    Some("tests/test_x.py::test_a")
                ),
                (
                    "tests/test_x.py:5".to_string(),
                    Some("KeyError"),
                    Some("tests/test_x.py::test_b")
                ),
                (
                    "tests/test_x.py:8".to_string(),
                    Some("AssertionError"),
                    Some("tests/test_x.py::test_c")
                ),
            ]
        );
        let messages: Vec<&str> = found
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            messages,
            ["assert (1 + 2) == 4", "KeyError: 'k'", "assert [1] == [2]"]
        );
    }
}
