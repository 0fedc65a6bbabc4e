//! pytest, in its long (default), short, line and native traceback
//! styles, and unittest (`python -m unittest`), which prints Python's own
//! tracebacks too; and Python's own display of an uncaught exception or of
//! a syntax error. A failure is located at the deepest frame in the
//! project (the assertion in the test file, or the line in the code under
//! test that raised), or at the syntax error that kept a module from
//! loading; its message the `E` lines (a native traceback's exception
//! line), its code the exception type. An error in a fixture's setup or
//! teardown is its test's; a test that only the short summary lists
//! (`--tb=no`, a strict `xfail` that passed) is placed at its file.
//! A run that ran no test (pytest's and unittest's exit 5), a usage error
//! (exit 4) and an internal error (exit 3, placed at the hook that raised
//! it) are findings too: their exit status fails the check, and the
//! output's last line does not say why.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b".py:"));

use super::{number, Anchor, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::{ColumnUnit, Severity};

/// Frames kept of one failure (the innermost ones matter).
const MAX_FRAMES: usize = 256;

/// `E` lines kept in one message.
const MAX_EXPLANATION_LINES: usize = 20;

/// A frame or crash site: `tests/test_x.py:10: AssertionError`,
/// `pkg/calc.py:6: in add`, `tests/test_x.py:14: ` (long style, between
/// frames), `/abs/tests/test_x.py:10: AssertionError: msg` or
/// `/abs/tests/test_x.py:2: assert (1 + 2) == 4` (line style, where pytest
/// shortens a failed `assert`'s `AssertionError: assert ...`), or
/// `/abs/tests/test_x.py:6:   File "/abs/pkg/broken.py", line 1` (line
/// style, where a syntax error's message starts with its display). An
/// exception's name is capitalised (`KeyError`, `mod.CustomError`), which
/// tells it from a compiler's `error:`. `crash` is what pytest prints
/// again in its short summary. A file's name may hold a colon
/// (`tests/test_a:b.py`), never followed by a blank or another colon: that
/// would be a message's (`KeyError: ...`) or a test id's (`::`).
static SITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?P<file>[^\s:](?:[^:]|:[^\s:])*?\.py):(?P<line>\d+):(?: in (?P<function>\S+)| (?P<crash>(?P<error>(?:[a-z_]\w*\.)*[A-Z]\w*)(?:: (?P<message>.+))?|(?P<assert>assert .+)|(?P<display>\s*File "[^"]+", line \d+)))?\s*$"#)
        .expect("the pytest site regex is valid")
});

/// The short summary's `FAILED tests/test_x.py::test_a - assert ...`,
/// `ERROR tests/test_x.py::test_b - ...` (an error in a fixture's setup or
/// teardown) or `ERROR tests/test_x.py` (a module that failed to load);
/// the message is cut to the terminal's width (`...`), or left out when
/// the id fills it. The file may hold a colon, as in `SITE`.
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<kind>FAILED|ERROR) (?P<id>(?P<file>[^\s:](?:[^:]|:[^\s:])*?\.py)(?:::.+?)?)(?: - (?P<message>.*))?$")
        .expect("the pytest summary regex is valid")
});

/// pytest-xdist's word, in place of a traceback, that a test ended the
/// worker process running it (`os._exit`, a signal, a segfault):
/// `worker 'gw1' crashed while running 'tests/test_x.py::test_y'`. The
/// names are Python's `repr`, in double quotes when they hold a `'`.
static WORKER_CRASHED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^worker ['"](?P<worker>[^'"]+)['"] crashed while running ['"](?P<id>(?P<file>[^\s:](?:[^:]|:[^\s:])*?\.py)(?:::.+?)?)['"]$"#)
        .expect("the xdist worker crash regex is valid")
});

/// The most crashed tests remembered, for the short summary's line about
/// each not to be a second finding.
const MAX_CRASHED: usize = 1000;

/// Where the test a node id names is declared: `def test_y` of
/// `tests/test_x.py::TestC::test_y[1]`.
fn test_def(id: &str) -> Anchor {
    let own = id.rsplit("::").next().unwrap_or(id);
    let own = own.split_once('[').map_or(own, |(name, _)| name);
    Anchor {
        words: vec![format!("def {own}")],
        ..Anchor::default()
    }
}

/// What a crashed xdist worker means and what to do.
const WORKER_CRASHED_WHY: &str = "the test ended the worker process running it (`os._exit`, a signal, a crash of native code, running out of memory) and left no traceback; run it alone without `-n` to see how it ends";

/// The worker the short summary's message names when it is xdist's word
/// that the test crashed it, which the summary cuts to the terminal's
/// width: `worker 'gw1' crashed w...` (under `--tb=no`, the only word of
/// it).
fn crashed_worker(message: &str) -> Option<&str> {
    const WORDS: &str = "crashed while running ";
    let rest = message.strip_prefix("worker ")?;
    let quote = rest.chars().next().filter(|q| matches!(q, '\'' | '"'))?;
    let (worker, said) = rest[1..].split_once(quote)?;
    let said = said.strip_prefix(' ')?;
    let said = said.strip_suffix("...").unwrap_or(said);
    (!said.is_empty() && (WORDS.starts_with(said) || said.starts_with(WORDS))).then_some(worker)
}

/// The finding of a test that crashed its xdist worker, from xdist's line
/// that says so (`crash`).
fn worker_crashed(c: &regex::Captures<'_>, crash: &str, at: &Range<u64>) -> Found {
    let message = format!("{crash}: {WORKER_CRASHED_WHY}");
    Found::new("xdist", Severity::Error, message)
        .code(Some("WorkerCrashed".to_string()))
        .test(Some(c["id"].to_string()))
        .origin(Origin::Test)
        .range(at)
        .at(&c["file"], None, None)
        .anchor(test_def(&c["id"]))
}

/// The banner over the short summary.
const SUMMARY_BANNER: &str = " short test summary info ";

/// The sections of an error in a fixture, named `ERROR at setup of test_b`
/// or `ERROR at teardown of test_b`, which the summary lists as `ERROR`.
const FIXTURE_ERRORS: [&str; 2] = ["ERROR at setup of ", "ERROR at teardown of "];

/// `____ test_name ____` or `____ ERROR collecting tests/x.py ____`.
static SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^_{3,} (?P<name>.+?) _{3,}$").expect("the pytest section regex is valid")
});

/// pytest's line over a `conftest.py` that failed to load, which stops the
/// run before any test is collected; its frames and `E` lines follow.
static CONFTEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ImportError while loading conftest '(?P<file>.+)'\.$")
        .expect("the pytest conftest regex is valid")
});

/// A native traceback's frame: `  File "/abs/tests/test_x.py", line 5, in
/// test_add` (the path quoted, so it may hold spaces). Without a function
/// it opens a syntax error's display.
static NATIVE_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^(?P<indent>\s+)File "(?P<file>[^"]+)", line (?P<line>\d+)(?P<function>, in .*)?$"#,
    )
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

/// A unittest header's test and its id in parentheses, which tells it
/// from pytest's `ERROR: file or directory not found: tests`.
static UNITTEST_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:FAIL|ERROR): \S+ \(").expect("the unittest id regex is valid")
});

/// The mark pytest puts before each line of an internal error (exit 3).
const INTERNAL_ERROR: &str = "INTERNALERROR> ";

/// `platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0`.
static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^platform \S+ -- Python \S+, pytest-(?P<version>[\w.]+)")
        .expect("the pytest version regex is valid")
});

/// pytest's word that it could not read its configuration file, before
/// any session header (exit 4): iniconfig's `ERROR: /p/pytest.ini:1:
/// unexpected value continuation` (its line 1-based), tomllib's `ERROR:
/// /p/pyproject.toml: Illegal character '\n' (at line 6, column 14)`, or
/// a file named alone (`'minversion' requires pytest-99`).
static CONFIG_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ERROR: (?P<file>(?:\S*/)?(?:pytest\.ini|\.pytest\.ini|pytest\.toml|\.pytest\.toml|pyproject\.toml|tox\.ini|setup\.cfg))(?::(?P<line>\d+))?: (?P<message>.+?)(?: \(at line (?P<tline>\d+), column (?P<tcolumn>\d+)\))?$")
        .expect("the pytest config error regex is valid")
});

/// pytest's word that a plugin named by `-p` (or `PYTEST_PLUGINS`, or a
/// `conftest.py`'s `pytest_plugins`) is not installed, before any session
/// header (exit 4): `ERROR: Error importing plugin "x": No module named 'x'`.
static PLUGIN_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^ERROR: Error importing plugin "(?P<plugin>[^"]+)": (?P<reason>.+)$"#)
        .expect("the pytest plugin error regex is valid")
});

/// pytest's closing line of counts, with or without its `=` rule:
/// `==== 2 failed, 1 passed in 0.12s ====`, `no tests ran in 0.00s`
/// (`-q`), `==== no tests collected (2 deselected) in 0.00s ====`
/// (`--collect-only`). Only the counts matter here.
static STATS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:=+ )?(?P<parts>no tests (?:ran|collected)(?: \((?P<deselected>\d+) deselected\))?|\d+ [a-z]+(?:, \d+ [a-z]+)*) in \d+(?:\.\d+)?s(?: \([\d:.]+\))?(?: =+)?$")
        .expect("the pytest counts regex is valid")
});

/// What pytest prints for a run whose every test was deselected, or that
/// found none, and exits 5 on (`ExitCode.NO_TESTS_COLLECTED`): a failing
/// exit status whose output says nothing a person reads as an error.
fn nothing_ran(line: &str) -> Option<String> {
    let c = super::caps(&STATS, line)?;
    let parts = &c["parts"];
    let deselected = if parts.starts_with("no tests ") {
        c.name("deselected")
            .map_or(0, |n| n.as_str().parse().unwrap_or(0))
    } else {
        let mut deselected = 0u64;
        for part in parts.split(", ") {
            let (count, word) = part.split_once(' ')?;
            match word {
                "deselected" => deselected += count.parse::<u64>().unwrap_or(0),
                // Warnings are no tests: `1 warning in 0.01s` ran none
                // (or stopped on an internal error, which says so first).
                "warning" | "warnings" => {}
                _ => return None,
            }
        }
        deselected
    };
    Some(if deselected > 0 {
        format!(
            "no tests were selected: all {deselected} tests collected were deselected (by `-k`, `-m` or `--deselect`), and pytest fails a run that runs none (exit 5); widen the selection in the check's command"
        )
    } else {
        "no tests were collected: pytest found no test to run and fails such a run (exit 5); name test files `test_*.py` or `*_test.py` and their functions `test_*`, or point the check's command (or `testpaths` in pytest's configuration) at the directory that holds them".to_string()
    })
}

/// How a line of a syntax error's display was taken.
enum Feed {
    More,
    /// The exception's line closed the display.
    Done,
    /// Not a line of the display: it is over without an exception.
    Broken,
}

/// A syntax error as Python displays it: `  File "/abs/x.py", line 1`
/// (no function), the line without its indentation under four spaces, a
/// caret line under the error (not for every error), then the exception,
/// `SyntaxError: invalid syntax`. pytest shows the same under `E`, every
/// line indented alike.
#[derive(Debug, Clone)]
pub(super) struct SyntaxDisplay {
    file: String,
    line: Option<u32>,
    /// Where the display's lines start: two before `File`.
    base: usize,
    /// The line as shown, without the indentation Python took off.
    snippet: Option<String>,
    /// The blanks before the caret and the number of carets.
    caret: Option<(usize, usize)>,
    /// The exception's name and its whole line, once read.
    exception: Option<(String, String)>,
}

impl SyntaxDisplay {
    /// The display a frame line that names no function opens.
    fn open(c: &regex::Captures<'_>) -> Option<SyntaxDisplay> {
        if c.name("function").is_some() {
            return None;
        }
        Some(SyntaxDisplay {
            file: c["file"].to_string(),
            line: number(&c["line"]),
            base: c["indent"].len().saturating_sub(2),
            snippet: None,
            caret: None,
            exception: None,
        })
    }

    /// Whether lines of the display are still to come.
    fn is_open(&self) -> bool {
        self.exception.is_none()
    }

    fn feed(&mut self, content: &str) -> Feed {
        if !self.is_open() {
            return Feed::Broken;
        }
        // A blank line shown (its trailing blanks were trimmed).
        if content.trim().is_empty() && self.snippet.is_none() {
            self.snippet = Some(String::new());
            return Feed::More;
        }
        let Some(rest) = content.get(self.base..).filter(|_| {
            content.as_bytes()[..self.base]
                .iter()
                .all(u8::is_ascii_whitespace)
        }) else {
            return Feed::Broken;
        };
        if let Some(shown) = rest.strip_prefix("    ") {
            if self.snippet.is_none() {
                self.snippet = Some(shown.to_string());
                return Feed::More;
            }
            let marks = shown.trim_start();
            if self.caret.is_none() && !marks.is_empty() && marks.bytes().all(|b| b == b'^') {
                let before = shown.chars().take_while(|c| c.is_whitespace()).count();
                self.caret = Some((before, marks.len()));
                return Feed::More;
            }
            return Feed::Broken;
        }
        match super::caps(&EXCEPTION, rest) {
            Some(c) => {
                self.exception = Some((c["error"].to_string(), rest.to_string()));
                Feed::Done
            }
            None => Feed::Broken,
        }
    }

    /// The error's column and the one after its last caret (when there
    /// are several), 1-based, in characters; `None` where the output does
    /// not say.
    fn columns(&self) -> (Option<u32>, Option<u32>) {
        let (Some(snippet), Some((before, carets))) = (self.snippet.as_deref(), self.caret) else {
            return (None, None);
        };
        let text = self.exception.as_ref().map_or("", |(_, t)| t.as_str());
        // Before 3.12 an f-string's error shows its expression in
        // parentheses, not the line.
        if text.contains("f-string") && snippet.starts_with('(') {
            return (None, None);
        }
        let Some((start, end)) = caret_span(snippet, before, carets) else {
            return (None, None);
        };
        // Python shows the line without its indentation (the interpreter
        // takes off blanks, the traceback module spaces and form feeds)
        // and its caret under what is left: counted from the first
        // character that is not blank, the column is the same whoever
        // printed it, and the line read from the file says how deep it is
        // indented (`ColumnUnit::Indented`).
        let kept = snippet
            .chars()
            .take_while(|c| matches!(c, ' ' | '\t' | '\x0c'))
            .count();
        let column = start
            .checked_sub(kept)
            .and_then(|c| u32::try_from(c + 1).ok());
        let end = (carets > 1)
            .then(|| {
                end.checked_sub(kept)
                    .and_then(|e| u32::try_from(e + 1).ok())
            })
            .flatten();
        (column, end)
    }

    /// The place this display gives.
    fn place(&self, found: Found) -> Found {
        let (column, end) = self.columns();
        let mut found = found.at(&self.file, self.line, column);
        if column.is_some() {
            found = found.unit(ColumnUnit::Indented);
        }
        match end {
            Some(end) => found.ends(self.line, Some(end)),
            None => found,
        }
    }
}

/// The characters of `snippet` a caret line marks (0-based, the end
/// excluded), from the blanks before its `carets`. Python puts a blank
/// under each character before the error's offset, and that offset counts
/// characters from Python 3.13 on, but bytes of UTF-8 before it wherever
/// the source was compiled as bytes (a script the interpreter runs, a
/// module imported, a test module pytest rewrites): there a caret after an
/// `é` sits one further right, and the output does not say which Python
/// printed it.
fn caret_span(snippet: &str, before: usize, carets: usize) -> Option<(usize, usize)> {
    let as_characters = (before <= snippet.chars().count()).then_some((before, before + carets));
    let characters_in = |bytes: usize| snippet.get(..bytes).map(|s| s.chars().count());
    let as_bytes = characters_in(before).map(|start| {
        let end = characters_in((before + carets).min(snippet.len())).unwrap_or(start + 1);
        (start, end.max(start + 1))
    });
    match (as_characters, as_bytes) {
        (Some(c), Some(b)) if c.0 != b.0 => {
            // An error's caret sits under a character that is not blank
            // (the token it is about); the count that puts it under one
            // is the one the printer used, and characters when both do.
            let blank = |i: usize| snippet.chars().nth(i).is_none_or(char::is_whitespace);
            Some(if blank(c.0) && !blank(b.0) { b } else { c })
        }
        (c, b) => c.or(b),
    }
}

/// How a line of a traceback was taken.
pub(super) enum Read {
    Took,
    /// The exception's line closed the traceback.
    Done(Box<Found>),
    /// The traceback was over before this line, which is not its own.
    Left,
}

/// A Python traceback being read: after `Traceback (most recent call
/// last):`, or from a syntax error's display, which the interpreter prints
/// with no header for the script it was asked to run.
#[derive(Debug)]
pub(super) struct Traceback {
    /// Its frames, outermost first.
    frames: Vec<(String, u32)>,
    /// The last frame, when it opened a syntax error's display.
    syntax: Option<SyntaxDisplay>,
    start: u64,
}

impl Traceback {
    /// The traceback `line` opens: `Traceback (most recent call last):`,
    /// or a syntax error's `  File "/abs/x.py", line 1` as the
    /// interpreter prints it, two spaces in.
    pub(super) fn opens(line: &str, at: &Range<u64>) -> Option<Traceback> {
        let mut traceback = Traceback {
            frames: Vec::new(),
            syntax: None,
            start: at.start,
        };
        if line.starts_with("Traceback (most recent call last):") {
            return Some(traceback);
        }
        if !line.starts_with("  File \"") {
            return None;
        }
        let c = super::caps(&NATIVE_FRAME, line)?;
        if c.name("function").is_some() {
            return None;
        }
        traceback.frame(&c);
        Some(traceback)
    }

    fn frame(&mut self, c: &regex::Captures<'_>) {
        if let Some(l) = number(&c["line"]) {
            if self.frames.len() >= MAX_FRAMES {
                self.frames.remove(0);
            }
            self.frames.push((c["file"].to_string(), l));
        }
        self.syntax = SyntaxDisplay::open(c);
    }

    /// Takes one line of the traceback.
    pub(super) fn line(&mut self, line: &str, at: &Range<u64>) -> Read {
        if let Some(syntax) = self.syntax.as_mut() {
            match syntax.feed(line) {
                Feed::More => return Read::Took,
                Feed::Done => {
                    let (error, text) = syntax.exception.clone().unwrap_or_default();
                    return Read::Done(Box::new(self.close(&text, error, at)));
                }
                Feed::Broken => self.syntax = None,
            }
        }
        if let Some(c) = super::caps(&NATIVE_FRAME, line) {
            self.frame(&c);
            return Read::Took;
        }
        // The source line and the markers under it, indented.
        if line.starts_with(char::is_whitespace) {
            return Read::Took;
        }
        match super::caps(&EXCEPTION, line) {
            Some(c) => Read::Done(Box::new(self.close(line, c["error"].to_string(), at))),
            None => Read::Left,
        }
    }

    /// The finding, at the syntax error when it is in the project, else at
    /// the deepest frame in the project, else at the innermost.
    fn close(&mut self, text: &str, error: String, at: &Range<u64>) -> Found {
        let found = Found::new("native", Severity::Error, text.trim_end())
            .code(Some(error))
            .range(&(self.start..at.end));
        let syntax = self.syntax.take();
        let frame = self.frames.iter().rev().find(|(file, _)| in_project(file));
        match (&syntax, frame) {
            (Some(s), _) if in_project(&s.file) => s.place(found),
            (_, Some((file, line))) => found.at(file, Some(*line), None),
            (Some(s), None) => s.place(found),
            (None, None) => match self.frames.last() {
                Some((file, line)) => found.at(file, Some(*line), None),
                None => found,
            },
        }
    }
}

/// A failure `--tb=line` printed, waiting for the short summary to name
/// its test.
#[derive(Debug)]
struct Unnamed {
    found: Found,
    /// Its crash line's message, which the summary repeats (cut).
    crash: Option<String>,
}

/// A failure read in a section that names its test by the test's own name.
#[derive(Debug)]
struct Named {
    /// The number of its section (a chained exception gives one section
    /// several failures).
    section: usize,
    /// An error in a fixture (`ERROR at setup of test_b`), which the
    /// summary lists as `ERROR`, not `FAILED`.
    fixture: bool,
    found: Found,
}

#[derive(Debug, Default)]
pub struct Pytest {
    /// The test whose failure is being read.
    test: Option<String>,
    /// The module a collection error (`ERROR collecting tests/x.py`) or a
    /// `conftest.py` that failed to load is about: its failure is placed
    /// there when nothing in the project says more, and it needs no name
    /// from the summary.
    module: Option<String>,
    /// Its frames, outermost first.
    frames: Vec<(String, u32)>,
    explanation: Vec<String>,
    /// A syntax error's display among the `E` lines (in `--tb=line`, its
    /// first line is under `E`, the others under four spaces).
    shown: Option<SyntaxDisplay>,
    start: Option<u64>,
    /// Where the last line read ended: a failure the output ends in (a
    /// `conftest.py` that failed to load) ends there.
    end: u64,
    /// `--tb=line`'s failures, which name no test: each waits for the
    /// short summary's `FAILED <test id> - <message>` that repeats its
    /// message.
    unnamed: Vec<Unnamed>,
    /// Failures a section names by the test's own name (`test_a`,
    /// `TestC.test_m[1]`): each waits for the summary's `FAILED <test id>`
    /// (`ERROR <test id>`) to be named in full, as `--tb=line`'s are.
    named: Vec<Named>,
    /// Sections seen so far.
    sections: usize,
    /// Whether the section being read is an error in a fixture.
    fixture: bool,
    /// The modules whose collection errors were read (bounded): the
    /// summary's `ERROR tests/x.py` needs no finding of its own for them.
    collected: Vec<String>,
    /// In the short summary: a test it lists that no section or crash
    /// line showed (`--tb=no`, a strict `xfail` that passed) is found
    /// there.
    in_summary: bool,
    /// A native traceback being read (`Traceback (most recent call
    /// last):` seen, or a syntax error's display).
    native: Option<Traceback>,
    /// In a failure's `--- Captured stderr call ---` (or stdout, log):
    /// what the test printed, where a traceback is one it caught.
    captured: bool,
    /// The run ran no test (pytest's closing `no tests ran`, unittest's
    /// `NO TESTS RAN`): held to the end, where it is the finding unless
    /// something else stopped the run.
    no_tests: Option<Found>,
    /// pytest stopped before its tests for a reason of its own, which it
    /// says (a usage error, an internal error, an interruption): its
    /// closing `no tests ran` is not the reason the check failed.
    stopped: bool,
    /// Reading the traceback of an internal error (`INTERNALERROR> `).
    internal: bool,
    /// pytest's session header was read: an `ERROR: ` line after it is
    /// pytest's, not any tool's.
    session: bool,
    /// argparse's word on the options, while the lines under it are read.
    usage: Option<Usage>,
    /// The tests that crashed their xdist worker, found (bounded): the
    /// short summary lists each again.
    crashed: Vec<String>,
}

/// Where the options argparse turned down came from, when pytest says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// `addopts` in the configuration file.
    Addopts,
    /// The `PYTEST_ADDOPTS` environment variable.
    Environment,
}

/// argparse's word on pytest's options (`pytest: error: unrecognized
/// arguments: --x`), and the lines pytest prints under it: `  config
/// source: via addopts config` (only for an option pytest knows given a
/// bad value), `  inifile: /p/pytest.ini` (or `None`), `  rootdir: /p`.
/// pytest adds `addopts` to every run's command line, so an option
/// nobody wrote in the check's command is in the file it names.
#[derive(Debug)]
struct Usage {
    message: String,
    source: Option<Source>,
    inifile: Option<String>,
    range: Range<u64>,
}

impl Usage {
    /// Takes a line pytest printed under the error; false for any other.
    fn read(&mut self, line: &str, at: &Range<u64>) -> bool {
        let Some((key, value)) = line.strip_prefix("  ").and_then(|l| l.split_once(": ")) else {
            return false;
        };
        match key {
            "config source" => {
                self.source = match value {
                    "via addopts config" => Some(Source::Addopts),
                    "via PYTEST_ADDOPTS" => Some(Source::Environment),
                    _ => None,
                };
            }
            "inifile" => self.inifile = Some(value.to_string()).filter(|v| v != "None"),
            "rootdir" => {}
            _ => return false,
        }
        self.range.end = at.end;
        true
    }

    /// The options the message names: each unrecognized argument that is
    /// an option, or the option whose value was wrong (`argument
    /// -n/--numprocesses: ...`).
    fn options(&self) -> Vec<String> {
        if let Some(rest) = self.message.strip_prefix("unrecognized arguments: ") {
            return rest
                .split_whitespace()
                .filter(|w| w.starts_with('-'))
                .map(str::to_string)
                .collect();
        }
        self.message
            .strip_prefix("argument ")
            .and_then(|rest| rest.split_once(": "))
            .map(|(names, _)| names.split('/').map(str::to_string).collect())
            .unwrap_or_default()
    }

    fn found(self) -> Found {
        let message = &self.message;
        let in_file = |name: &str| {
            format!("pytest's `addopts` in `{name}`: {message}; fix `addopts` there (pytest adds it to the command line of every run)")
        };
        let found = |text: String| {
            Found::new("usage", Severity::Error, text)
                .code(Some("USAGE_ERROR".to_string()))
                .origin(Origin::Test)
                .range(&self.range)
        };
        let options = self.options();
        match (self.source, &self.inifile) {
            (Some(Source::Environment), _) => found(format!(
                "pytest's options from `PYTEST_ADDOPTS`: {message}; fix `PYTEST_ADDOPTS` where the check runs (the check's `env`, or the environment of the gate)"
            )),
            (Some(Source::Addopts), Some(file)) => {
                let name = file.rsplit('/').next().unwrap_or(file);
                found(in_file(name)).at(file, None, None).anchor(Anchor {
                    words: options,
                    key: Some("addopts"),
                    ..Anchor::default()
                })
            }
            // The file's `addopts` is to blame if it holds the option.
            (None, Some(file)) if !options.is_empty() => {
                let name = file.rsplit('/').next().unwrap_or(file);
                found(format!("pytest's command line: {message}; fix the check's command"))
                    .at(file, None, None)
                    .anchor(Anchor {
                        words: options,
                        key: Some("addopts"),
                        message: Some(in_file(name)),
                        required: true,
                        ..Anchor::default()
                    })
            }
            (Some(Source::Addopts), None) => found(in_file("pytest's configuration")),
            _ => found(format!(
                "pytest's command line: {message}; fix the check's command"
            )),
        }
    }
}

/// The finding of a configuration file pytest could not read (placed at
/// the file, and at its line when pytest names one) or of a plugin it
/// could not import, both usage errors (exit 4).
fn config_or_plugin_error(line: &str) -> Option<Found> {
    if let Some(c) = super::caps(&PLUGIN_ERROR, line) {
        let message = format!(
            "pytest could not import the plugin `{}`: {}; install it in the environment the check runs in, or remove it from the check's command (`-p`), `PYTEST_PLUGINS` or the `pytest_plugins` that names it",
            &c["plugin"], &c["reason"]
        );
        return Some(
            Found::new("usage", Severity::Error, message)
                .code(Some("USAGE_ERROR".to_string()))
                .origin(Origin::Test),
        );
    }
    let c = super::caps(&CONFIG_ERROR, line)?;
    let file = &c["file"];
    let name = file.rsplit('/').next().unwrap_or(file);
    let message = format!(
        "pytest could not use its configuration `{name}`: {}; fix the file",
        &c["message"]
    );
    let line = c
        .name("line")
        .or(c.name("tline"))
        .and_then(|m| number(m.as_str()));
    let column = c.name("tcolumn").and_then(|m| number(m.as_str()));
    Some(
        Found::new("usage", Severity::Error, message)
            .code(Some("USAGE_ERROR".to_string()))
            .origin(Origin::Test)
            .at(file, line, column),
    )
}

/// Whether a frame is the project's (not the standard library's or an
/// installed package's).
fn in_project(file: &str) -> bool {
    !(file.contains("site-packages/")
        || file.contains("dist-packages/")
        || file.contains("/lib/python")
        || file.starts_with('<'))
}

/// Whether a crash line's message is the one the short summary repeats:
/// the same, or its start when the summary cut it to the terminal's width.
fn same_message(crash: &str, summary: &str) -> bool {
    let (crash, summary) = (crash.trim(), summary.trim());
    crash == summary
        || summary
            .strip_suffix("...")
            .is_some_and(|cut| crash.starts_with(cut.trim_end()))
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
    /// pytest's (or unittest's) own word on the run, not a test's: it ran
    /// no test, or it stopped on a usage error or an interruption. True
    /// when `line` was that.
    fn pytest_said(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        if self.busy() || self.captured {
            return false;
        }
        if line.starts_with("!!!") {
            // `!!!! Interrupted: 1 error during collection !!!!`,
            // `!!!! KeyboardInterrupt !!!!`.
            self.stopped = true;
            return true;
        }
        if let Some(message) = line
            .strip_prefix("pytest: error: ")
            .or_else(|| line.strip_prefix("python -m pytest: error: "))
        {
            // argparse's word on the options (exit 4): the lines pytest
            // adds under it say where they came from.
            self.stopped = true;
            self.usage = Some(Usage {
                message: message.to_string(),
                source: None,
                inifile: None,
                range: at.clone(),
            });
            return true;
        }
        if let Some(found) = config_or_plugin_error(line) {
            // Printed before the session header, where nothing else says
            // what is wrong: the output is this one line.
            self.stopped = true;
            out.push(found.range(at));
            return true;
        }
        if let Some(message) = line
            .strip_prefix("ERROR: ")
            .filter(|m| !m.starts_with("usage: ") && !UNITTEST_ID.is_match(line))
            .filter(|_| self.session && !self.captured)
        {
            // pytest's `UsageError` (exit 4): `file or directory not found:
            // tests`, a config file that is not there.
            self.stopped = true;
            out.push(
                Found::new("usage", Severity::Error, format!("{message} (pytest's usage error: fix the check's command or pytest's configuration)"))
                    .code(Some("USAGE_ERROR".to_string()))
                    .origin(Origin::Test)
                    .range(at),
            );
            return true;
        }
        let message = if line == "NO TESTS RAN" {
            // unittest, from Python 3.12 on (exit 5).
            Some("no tests were collected: unittest found no test to run and fails such a run (exit 5); name test modules `test*.py` with `unittest.TestCase` classes, or point discovery at them (`python -m unittest discover -s DIR`)".to_string())
        } else if line.starts_with(['=', 'n']) || line.starts_with(|c: char| c.is_ascii_digit()) {
            nothing_ran(line)
        } else {
            None
        };
        let Some(message) = message else {
            return false;
        };
        self.no_tests = Some(
            Found::new("summary", Severity::Error, message)
                .code(Some(crate::diagnostics::NO_TESTS_COLLECTED.to_string()))
                .origin(Origin::Test)
                .range(at),
        );
        // The closing rule ends the run's sections as any rule does.
        false
    }

    /// A line of an open native traceback; false when the traceback is
    /// over and the line is not its own.
    fn native_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        let Some(traceback) = self.native.as_mut() else {
            return false;
        };
        match traceback.line(line, at) {
            Read::Took => true,
            Read::Done(found) => {
                let found = *found;
                self.native = None;
                let crash = found.message.clone();
                let found = match &self.test {
                    Some(_) => found.test(self.test.clone()).origin(Origin::Test),
                    // An exception in a hook of a plugin or a `conftest.py`
                    // stops pytest (exit 3): it is placed at the hook's
                    // line, as any traceback is.
                    None if self.internal => {
                        let message = format!(
                            "pytest stopped with an internal error (exit 3): {}",
                            found.message
                        );
                        Found { message, ..found }.origin(Origin::Test)
                    }
                    // Python's own display, of a script that no test runs.
                    None => found.tool("python"),
                };
                self.keep(found, Some(&crash), out);
                true
            }
            Read::Left => {
                self.native = None;
                false
            }
        }
    }

    /// Holds a failure until the short summary names its test in full;
    /// bounded: past the extractor's cap it goes out as it is. A
    /// collection error is named by its module already.
    fn keep(&mut self, found: Found, crash: Option<&str>, out: &mut Out) {
        let cap = crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK;
        if let Some(module) = &self.module {
            if self.collected.len() < cap && !self.collected.contains(module) {
                self.collected.push(module.clone());
            }
            out.push(found);
        } else if found.test.is_none() && self.unnamed.len() < cap {
            self.unnamed.push(Unnamed {
                found,
                crash: crash.map(str::to_string),
            });
        } else if found.test.is_some() && self.named.len() < cap {
            self.named.push(Named {
                section: self.sections,
                fixture: self.fixture,
                found,
            });
        } else {
            out.push(found);
        }
    }

    /// An `E` line's text after the `E` (or, in `--tb=line`, after the
    /// first of the blanks that continue it), for a syntax error's display.
    fn read_shown(&mut self, content: &str) {
        if let Some(shown) = self.shown.as_mut().filter(|s| s.is_open()) {
            match shown.feed(content) {
                Feed::More | Feed::Done => return,
                Feed::Broken => self.shown = None,
            }
        }
        // Most `E` lines are an assertion's explanation: a look at the
        // text spares them the regex.
        if !content.trim_start().starts_with("File \"") {
            return;
        }
        if let Some(c) = super::caps(&NATIVE_FRAME, content) {
            self.shown = SyntaxDisplay::open(&c);
        }
    }

    fn flush(
        &mut self,
        error: Option<&str>,
        message: Option<&str>,
        crash: Option<&str>,
        at: &Range<u64>,
        out: &mut Out,
    ) {
        let frames = std::mem::take(&mut self.frames);
        let explanation = std::mem::take(&mut self.explanation);
        let shown = self.shown.take().filter(|s| !s.is_open());
        let start = self.start.take();
        // Outside a test's section only `--tb=line`'s crash site, which
        // names the error, a collection error or a syntax error closes a
        // failure.
        let test = self.test.clone();
        if test.is_none() && error.is_none() && self.module.is_none() && shown.is_none() {
            return;
        }
        let headline = shown
            .as_ref()
            .and_then(|s| s.exception.as_ref())
            .map(|(_, text)| text.clone())
            .or_else(|| explanation.first().cloned())
            .or_else(|| message.map(str::to_string))
            .or_else(|| error.map(str::to_string))
            .unwrap_or_else(|| format!("{} failed", test.as_deref().unwrap_or("a test")));
        let mut whole = headline;
        if shown.is_none() {
            for more in explanation.iter().skip(1) {
                whole.push('\n');
                whole.push_str(more);
            }
        }
        let dialect = if test.is_some() || self.module.is_some() {
            "long"
        } else {
            "line"
        };
        let code = shown
            .as_ref()
            .and_then(|s| s.exception.as_ref())
            .map(|(name, _)| name.clone())
            .or_else(|| error.map(str::to_string))
            .or_else(|| {
                explanation
                    .first()
                    .and_then(|e| e.split(':').next())
                    .filter(|e| !e.contains(' '))
                    .map(str::to_string)
            });
        let mut found = Found::new(dialect, Severity::Error, whole)
            .code(code)
            .test(test)
            .origin(Origin::Test)
            .range(&(start.unwrap_or(at.start)..at.end));
        // The syntax error when it is in the project, else the deepest
        // frame in the project, else what there is: the module being
        // collected before a frame outside the project.
        let frame = frames.iter().rev().find(|(file, _)| in_project(file));
        found = match (&shown, frame) {
            (Some(s), _) if in_project(&s.file) => s.place(found),
            (_, Some((file, line))) => found.at(file, Some(*line), None),
            (Some(s), None) if self.module.is_none() => s.place(found),
            (_, None) => match (&self.module, frames.last()) {
                (Some(module), _) => found.at(module, None, None),
                (None, Some((file, line))) => found.at(file, Some(*line), None),
                (None, None) => found,
            },
        };
        self.keep(found, crash, out);
    }

    /// The short summary's `FAILED <test id> - <message>` (`ERROR <test
    /// id>`): the failures of the first section of that kind named by the
    /// id's own part (`TestC::test_m` is `TestC.test_m`), wherever they are
    /// located, or else the first unnamed failure whose crash line's
    /// message the summary repeats, are that test's. One outside the
    /// project (an assertion unittest raised) is placed at the test's
    /// file, its line unknown. False when no failure read was the test's.
    fn name_one(&mut self, line: &SummaryLine<'_>, out: &mut Out) -> bool {
        let SummaryLine {
            id,
            file,
            message,
            error,
        } = *line;
        let at_test = |found: Found| {
            let found = if found.file.as_deref().is_some_and(in_project) {
                found
            } else {
                found.at(file, None, None)
            };
            found.test(Some(id.to_string()))
        };
        let own = id
            .strip_prefix(file)
            .and_then(|rest| rest.strip_prefix("::"))
            .map(|rest| rest.replace("::", "."));
        let section = self
            .named
            .iter()
            .find(|n| own.is_some() && n.fixture == error && n.found.test == own)
            .map(|n| n.section);
        if let Some(section) = section {
            let (theirs, rest) = std::mem::take(&mut self.named)
                .into_iter()
                .partition(|n| n.section == section);
            self.named = rest;
            for named in theirs {
                out.push(at_test(named.found));
            }
            return true;
        }
        // `--tb=line`'s crash lines are failures of the tests themselves.
        if error {
            return false;
        }
        let ours = |u: &Unnamed| {
            u.found.file.as_deref().is_some_and(|f| {
                f == file
                    || f.strip_suffix(file)
                        .is_some_and(|dir| dir.ends_with(['/', '\\']))
            })
        };
        // The message the summary repeats says whose a failure is; its
        // file may not (unittest raises its assertions in the standard
        // library, and `--tb=line` shows no line of the test then), nor
        // its order. Without a message (an id as wide as the terminal),
        // the first failure in the test's file.
        let i = match message {
            Some(message) => self.unnamed.iter().position(|u| {
                u.crash
                    .as_deref()
                    .is_some_and(|crash| same_message(crash, message))
            }),
            None => self.unnamed.iter().position(ours),
        };
        match i {
            Some(i) => {
                let found = self.unnamed.remove(i).found;
                out.push(at_test(found));
                true
            }
            None => false,
        }
    }

    /// A test the short summary lists and nothing before it showed
    /// (`--tb=no`, a strict `xfail` that passed, a module that failed to
    /// load under `--tb=no`): at its file, its line unknown, the summary's
    /// message its message.
    fn summary_only(line: &SummaryLine<'_>, at: &Range<u64>) -> Found {
        let SummaryLine {
            id,
            file,
            message,
            error,
        } = *line;
        let module = !id.contains("::");
        let text = match message {
            Some(message) => message.to_string(),
            None if module => format!("{id} could not be collected"),
            None if error => format!("{id} raised an error"),
            None => format!("{id} failed"),
        };
        // pytest shortens a failed `assert`'s `AssertionError: assert ...`.
        let code = match message {
            Some(m) if m.starts_with("assert ") => Some("AssertionError".to_string()),
            Some(m) => super::caps(&EXCEPTION, m).map(|c| c["error"].to_string()),
            None => None,
        };
        let mut found = Found::new("summary", Severity::Error, text)
            .code(code)
            .test(Some(id.to_string()))
            .origin(Origin::Test)
            .range(at)
            .at(file, None, None);
        if let Some(worker) = message.and_then(crashed_worker) {
            found.message =
                format!("worker `{worker}` crashed while running `{id}`: {WORKER_CRASHED_WHY}");
            found.code = Some("WorkerCrashed".to_string());
        }
        // Placed at the test's `def`, as a traceback would place it.
        if !module {
            found = found.anchor(test_def(id));
        }
        found
    }
}

/// A line of the short summary, read.
#[derive(Clone, Copy)]
struct SummaryLine<'a> {
    id: &'a str,
    file: &'a str,
    message: Option<&'a str>,
    /// `ERROR`, not `FAILED`.
    error: bool,
}

impl Grammar for Pytest {
    fn name(&self) -> &'static str {
        "pytest"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"p_=EFTI-!nN0123456789",
            indented: b"F",
            anywhere: b":",
        })
    }

    fn busy(&self) -> bool {
        self.native.is_some()
            || self.shown.as_ref().is_some_and(SyntaxDisplay::is_open)
            || self.usage.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        if line.first().is_some_and(u8::is_ascii_digit) {
            // Digits are a trigger for `-q`'s closing counts alone
            // (`2 deselected in 0.01s`), without their rule: a line of
            // numbers (a long log has many) is let go at once.
            return self.busy() || line.ends_with(b"s") || NEEDLE.find(line).is_some();
        }
        self.busy()
            || line.starts_with(b"Traceback ")
            || line.starts_with(b"-")
            || line.starts_with(b"FAIL: ")
            || line.starts_with(b"ERROR ")
            || line.starts_with(b"ERROR: ")
            || line.starts_with(b"platform ")
            || line.starts_with(b"___")
            || line.starts_with(b"====")
            || line.starts_with(b"E ")
            || line.starts_with(b"  File \"")
            || line.starts_with(b"ImportError while loading conftest ")
            || line.starts_with(INTERNAL_ERROR.as_bytes())
            || line.starts_with(b"!!!")
            || line.starts_with(b"no tests ")
            || line.starts_with(b"NO TESTS RAN")
            || line.starts_with(b"pytest: error: ")
            || line.starts_with(b"python -m pytest: error: ")
            || NEEDLE.find(line).is_some()
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        self.end = at.end;
        if let Some(usage) = self.usage.as_mut() {
            if usage.read(line, at) {
                return;
            }
            if let Some(usage) = self.usage.take() {
                out.push(usage.found());
            }
        }
        // An internal error's traceback, every line behind this mark, is
        // read as any traceback is: the hook that raised it is placed.
        let line = match line.strip_prefix(INTERNAL_ERROR) {
            Some(rest) => {
                self.stopped = true;
                self.internal = true;
                rest
            }
            None => line,
        };
        if self.pytest_said(line, at, out) {
            return;
        }
        if self.native_line(line, at, out) {
            return;
        }
        // `--tb=line` continues a syntax error's display under blanks.
        if line.starts_with(' ') && self.shown.as_ref().is_some_and(SyntaxDisplay::is_open) {
            self.read_shown(&line[1..]);
            return;
        }
        if !self.captured {
            if let Some(traceback) = Traceback::opens(line, at) {
                self.native = Some(traceback);
                return;
            }
        }
        if line.starts_with("---") && line.contains(" Captured ") {
            self.captured = true;
            return;
        }
        if let Some(c) = super::caps(&UNITTEST_HEADER, line)
            .filter(|_| !line.starts_with("ERROR: ") || UNITTEST_ID.is_match(line))
        {
            self.test = Some(unittest_name(&c));
            self.sections += 1;
            return;
        }
        if let Some(c) = super::caps(&VERSION, line) {
            out.version = Some(c["version"].to_string());
            self.session = true;
            return;
        }
        if let Some(c) = super::caps(&SECTION, line) {
            if !self.frames.is_empty() || !self.explanation.is_empty() {
                self.flush(None, None, None, at, out);
            }
            let name = c["name"].to_string();
            // `_ _ _ _` separates frames inside one failure.
            if !name.starts_with("_ ") {
                self.captured = false;
                self.shown = None;
                // A module that could not be collected is named by its
                // node id, as the summary's `ERROR tests/x.py` names it.
                self.module = name.strip_prefix("ERROR collecting ").map(str::to_string);
                // An error in a fixture is named by its test's own name,
                // as a failure is.
                let fixture = FIXTURE_ERRORS.iter().find_map(|p| name.strip_prefix(p));
                self.fixture = fixture.is_some();
                let own = fixture.map(str::to_string);
                self.test = Some(self.module.clone().or(own).unwrap_or(name));
                self.start = Some(at.start);
                self.sections += 1;
            }
            return;
        }
        if let Some(c) = super::caps(&CONFTEST, line) {
            if !self.frames.is_empty() || !self.explanation.is_empty() {
                self.flush(None, None, None, at, out);
            }
            self.shown = None;
            self.test = None;
            self.module = Some(c["file"].to_string());
            self.start = Some(at.start);
            return;
        }
        if line.starts_with("====") {
            if !self.frames.is_empty() || !self.explanation.is_empty() {
                self.flush(None, None, None, at, out);
            }
            self.test = None;
            self.module = None;
            self.shown = None;
            self.captured = false;
            self.fixture = false;
            self.in_summary = line.contains(SUMMARY_BANNER);
            return;
        }
        if let Some(rest) = line.strip_prefix("E ") {
            self.read_shown(&line[1..]);
            if self.explanation.len() < MAX_EXPLANATION_LINES {
                self.explanation.push(rest.trim().to_string());
            }
            return;
        }
        if let Some(c) = super::caps(&WORKER_CRASHED, line) {
            if self.crashed.len() < MAX_CRASHED {
                self.crashed.push(c["id"].to_string());
            }
            out.push(worker_crashed(&c, line, at));
            return;
        }
        if let Some(c) = super::caps(&SUMMARY, line) {
            if self.crashed.iter().any(|id| id == &c["id"]) {
                return;
            }
            let summary = SummaryLine {
                id: &c["id"],
                file: &c["file"],
                message: c.name("message").map(|m| m.as_str()),
                error: &c["kind"] == "ERROR",
            };
            let read = if summary.id.contains("::") {
                self.name_one(&summary, out)
            } else {
                self.collected.iter().any(|m| m == summary.id)
            };
            if !read && self.in_summary {
                out.push(Self::summary_only(&summary, at));
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
        // A failed `assert`, shortened (line style): an `AssertionError`;
        // a syntax error's display: the error it closed with.
        let shown_error = self
            .shown
            .as_ref()
            .and_then(|s| s.exception.as_ref())
            .map_or("SyntaxError", |(name, _)| name.as_str())
            .to_string();
        let (error, message) = match (c.name("error"), c.name("assert"), c.name("display")) {
            (Some(error), _, _) => (error.as_str(), c.name("message").map(|m| m.as_str())),
            (None, Some(assert), _) => ("AssertionError", Some(assert.as_str())),
            (None, None, Some(display)) => (shown_error.as_str(), Some(display.as_str())),
            (None, None, None) => return,
        };
        if self.test.is_none() {
            // `--tb=line`: one line per failure, no section.
            self.start = Some(at.start);
        }
        let crash = c.name("crash").map(|m| m.as_str());
        self.flush(Some(error), message, crash, at, out);
        if message.is_some() {
            self.test = None;
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some(usage) = self.usage.take() {
            out.push(usage.found());
        }
        if !self.frames.is_empty() || !self.explanation.is_empty() {
            let end = self.end;
            self.flush(None, None, None, &(end..end), out);
        }
        if let Some(found) = self.no_tests.take().filter(|_| !self.stopped) {
            out.push(found);
        }
        // No summary named them (`-rN`, or the output was cut).
        let named = self.named.drain(..).map(|n| n.found);
        let unnamed = self.unnamed.drain(..).map(|u| u.found);
        for found in named.chain(unnamed) {
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

    /// Where `ERROR collecting <module>` puts each module of the recorded
    /// project (`fixtures/diagnostics/pytest`), with its code and message.
    fn collection_errors(
        boom: &str,
        zero: &str,
    ) -> Vec<(String, Option<&'static str>, Option<String>, &'static str)> {
        let error = |place: &str, code, module: &str, message| {
            (
                place.to_string(),
                Some(code),
                Some(format!("tests/{module}")),
                message,
            )
        };
        vec![
            error(boom, "KeyError", "test_boom.py", "KeyError: 'host'"),
            // Indented: counted from the first character that is not blank
            // (the golden file, with the source, has it at 3:9).
            error(
                "src/pkg/deep.py:3:1",
                "SyntaxError",
                "test_deep.py",
                "SyntaxError: invalid syntax",
            ),
            error(
                "src/pkg/broken.py:1:7",
                "SyntaxError",
                "test_imp.py",
                "SyntaxError: invalid syntax",
            ),
            error(
                "tests/test_indent.py:3",
                "IndentationError",
                "test_indent.py",
                "IndentationError: unexpected indent",
            ),
            error(
                "tests/test_missing.py:1",
                "ModuleNotFoundError",
                "test_missing.py",
                "ModuleNotFoundError: No module named 'nosuchmodule'",
            ),
            error(
                "tests/test_syn.py:1:12",
                "SyntaxError",
                "test_syn.py",
                "SyntaxError: invalid syntax",
            ),
            // After `é`: Python 3.11's caret counts its two bytes, 3.13's
            // one character.
            error(
                "tests/test_uni.py:1:17",
                "SyntaxError",
                "test_uni.py",
                "SyntaxError: invalid syntax",
            ),
            error(
                zero,
                "ZeroDivisionError",
                "test_zero.py",
                "ZeroDivisionError: division by zero",
            ),
        ]
    }

    /// Place, code, test and message of each finding, owned.
    fn owned(found: &Extracted) -> Vec<(String, Option<&str>, Option<String>, &str)> {
        read(found)
            .into_iter()
            .map(|(place, code, test, message)| (place, code, test.map(str::to_string), message))
            .collect()
    }

    #[test]
    fn a_module_that_failed_to_collect_is_placed_at_what_stopped_it() {
        // pytest 9.2.0 (CPython 3.11.7 and 3.13.0): a syntax error is shown
        // under `E` as Python shows it (`E     File "/abs/src/pkg/broken.py",
        // line 1`, the line, a caret), below frames in pytest and the
        // standard library (`/root/.pyenv/.../ast.py:50: in parse`); an
        // exception raised while the module ran, below its frames.
        for (output, recorded_in) in [
            ("pytest/pytest-collect.txt", "/tmp/rec-py6/collect"),
            ("pytest/pytest-collect-short.txt", "/tmp/rec-py6/collect"),
            ("pytest/pytest-collect-native.txt", "/tmp/rec-py6/collect"),
            ("pytest/pytest313-collect.txt", "/tmp/rec-py6/collect"),
        ] {
            for parser in ["pytest", "auto"] {
                let found = recorded(parser, output, Some(recorded_in));
                assert_eq!(
                    owned(&found),
                    collection_errors("src/pkg/boom.py:5", "tests/test_zero.py:3"),
                    "{parser} {output}"
                );
            }
        }
    }

    #[test]
    fn a_collection_error_without_frames_is_placed_at_its_module() {
        // `--tb=line` drops the frames of an exception raised while a
        // module ran: `E   KeyError: 'host'` alone under `ERROR collecting
        // tests/test_boom.py`.
        let found = recorded(
            "pytest",
            "pytest/pytest-collect-line.txt",
            Some("/tmp/rec-py6/collect"),
        );
        assert_eq!(
            owned(&found),
            collection_errors("tests/test_boom.py", "tests/test_zero.py")
        );
    }

    #[test]
    fn a_conftest_that_failed_to_load_is_placed_at_its_syntax_error() {
        // `ImportError while loading conftest '/abs/tests/conftest.py'.`,
        // no section and no summary: pytest stops there (exit 4).
        let found = recorded(
            "pytest",
            "pytest/pytest-conftest.txt",
            Some("/tmp/rec-py6/conftest"),
        );
        assert_eq!(
            read(&found),
            [(
                "tests/conftest.py:4:12".to_string(),
                Some("SyntaxError"),
                None,
                "SyntaxError: invalid syntax"
            )]
        );
    }

    #[test]
    fn a_syntax_error_a_test_ran_into_is_placed_at_the_error_in_either_style() {
        // `--continue-on-collection-errors`: `test_late_import` imports the
        // broken module. Long style shows its display under `E` over
        // `tests/test_runtime.py:6: SyntaxError`; line style only the first
        // line under `E`, the others under blanks, then `/abs/tests/
        // test_runtime.py:6:   File "/abs/src/pkg/broken.py", line 1`.
        for (output, dialect) in [
            ("pytest/pytest-collect-continue.txt", "long"),
            ("pytest/pytest-collect-continue-line.txt", "line"),
        ] {
            let found = recorded("pytest", output, Some("/tmp/rec-py6/collect"));
            let runtime: Vec<_> = owned(&found).into_iter().skip(8).collect();
            let test = |name: &str| Some(format!("tests/test_runtime.py::{name}"));
            assert_eq!(
                runtime,
                [
                    (
                        "tests/test_runtime.py:2".to_string(),
                        Some("AssertionError"),
                        test("test_sum"),
                        "assert (1 + 1) == 3"
                    ),
                    (
                        "src/pkg/broken.py:1:7".to_string(),
                        Some("SyntaxError"),
                        test("test_late_import"),
                        "SyntaxError: invalid syntax"
                    ),
                ],
                "{output}"
            );
            let dialects: Vec<&str> = found
                .diagnostics
                .iter()
                .skip(8)
                .filter_map(|d| d.parser.map(|p| p.dialect))
                .collect();
            assert_eq!(dialects, [dialect, dialect], "{output}");
        }
    }

    #[test]
    fn line_style_failures_are_named_by_the_message_the_summary_repeats() {
        // pytest 9.2.0 `--tb=line` on `unittest.TestCase` tests: an
        // assertion unittest raised is printed at its own line in
        // `/root/.pyenv/.../unittest/case.py`, the test's line nowhere; the
        // summary (`FAILED tests/test_ut.py::T::test_eq - AssertionError: 2
        // != 3 : one plus one`, cut to 80 columns with `...`) says whose
        // each is. Two tests fail with the same message, in order.
        let found = recorded(
            "pytest",
            "pytest/pytest-unittest-line.txt",
            Some("/tmp/rec-py6/unit"),
        );
        let test = |name: &str| Some(format!("tests/test_ut.py::{name}"));
        let one_plus_one = "AssertionError: 2 != 3 : one plus one";
        assert_eq!(
            owned(&found),
            [
                (
                    "tests/test_ut.py".to_string(),
                    Some("AssertionError"),
                    test("T::test_eq"),
                    one_plus_one
                ),
                (
                    "tests/test_ut.py".to_string(),
                    Some("AssertionError"),
                    test("T::test_eq_again"),
                    one_plus_one
                ),
                (
                    "tests/test_ut.py:11".to_string(),
                    Some("KeyError"),
                    test("T::test_err"),
                    "KeyError: 'missing'"
                ),
                (
                    "src/pkg/calc.py:2".to_string(),
                    Some("ValueError"),
                    test("T::test_parse"),
                    "ValueError: invalid literal for int() with base 10: 'x'"
                ),
                (
                    "tests/test_ut.py".to_string(),
                    Some("AssertionError"),
                    test("T::test_words"),
                    "AssertionError: 'a few words' != 'a few other words'"
                ),
                (
                    "tests/test_ut.py:24".to_string(),
                    Some("AssertionError"),
                    test("test_plain"),
                    "AssertionError: assert 2 == 3"
                ),
            ]
        );
        // The other styles show the test's own line.
        let long = recorded(
            "pytest",
            "pytest/pytest-unittest.txt",
            Some("/tmp/rec-py6/unit"),
        );
        let lines: Vec<String> = long
            .diagnostics
            .iter()
            .map(crate::diagnostics::Diagnostic::location)
            .collect();
        assert_eq!(
            lines,
            [
                "tests/test_ut.py:8",
                "tests/test_ut.py:20",
                "tests/test_ut.py:11",
                "src/pkg/calc.py:2",
                "tests/test_ut.py:17",
                "tests/test_ut.py:24"
            ]
        );
    }

    #[test]
    fn a_caret_after_a_wide_character_is_read_as_its_printer_counted() {
        // CPython 3.11 put the caret under `*` after `é` counting bytes
        // (17 blanks), 3.13 counting characters (16): both are column 17.
        let snippet = "LABEL = \"é\" + + * 2";
        assert_eq!(super::caret_span(snippet, 17, 1), Some((16, 17)));
        assert_eq!(super::caret_span(snippet, 16, 1), Some((16, 17)));
        assert_eq!(super::caret_span("def f(:", 6, 1), Some((6, 7)));
        assert_eq!(super::caret_span("print \"hello\"", 0, 13), Some((0, 13)));
        assert_eq!(super::caret_span("abc", 9, 1), None);
    }

    #[test]
    fn only_the_short_summary_lists_tests_that_nothing_else_showed() {
        // The summary's lines, as pytest 9.2.0 prints them under `--tb=no`,
        // printed by a test before the summary: a log line, not a failure.
        // In the summary, `test_round` (a strict `xfail` that passed) has
        // no section, and `test_math`'s was read already.
        let logged = "ERROR tests/test_fix.py::test_round - disk full\n";
        let summary = "\
tests/test_fix.py F.F                                                   [100%]

=================================== FAILURES ===================================
__________________________________ test_math ___________________________________

    def test_math():
>       assert 1 + 1 == 3
E       assert (1 + 1) == 3

tests/test_fix.py:28: AssertionError
=========================== short test summary info ============================
FAILED tests/test_fix.py::test_math - assert (1 + 1) == 3
FAILED tests/test_fix.py::test_round - [XPASS(strict)] rounding is fixed
========================= 2 failed, 1 passed in 0.01s ==========================
";
        let root = std::path::Path::new("/repo");
        let read = |text: &str| {
            let x = crate::diagnostics::Extractor::new(
                "c",
                crate::config::Origin::Test,
                &crate::config::ParserChoice::Named("pytest".to_string()),
                &[],
                root,
                root,
            );
            crate::diagnostics::tests::extract(x, text.as_bytes())
        };
        assert_eq!(places(&read(logged)), []);
        assert_eq!(
            places(&read(&format!("{logged}{summary}"))),
            [
                (
                    "tests/test_fix.py:28".to_string(),
                    Some("AssertionError"),
                    Some("tests/test_fix.py::test_math")
                ),
                (
                    "tests/test_fix.py".to_string(),
                    None,
                    Some("tests/test_fix.py::test_round")
                ),
            ]
        );
    }

    #[test]
    fn a_run_that_runs_no_test_says_so_and_what_to_do() {
        // pytest 9.2.0 exits 5 when it runs no test: none found (with or
        // without `-q`, with a warning), or every one deselected by `-k`.
        // unittest (Python 3.12.1) prints `NO TESTS RAN` and exits 5 too.
        for (output, words) in [
            ("pytest/pytest-no-tests.txt", "no tests were collected"),
            ("pytest/pytest-no-tests-q.txt", "no tests were collected"),
            (
                "pytest/pytest-no-tests-warning.txt",
                "no tests were collected",
            ),
            (
                "pytest/pytest-deselected.txt",
                "all 2 tests collected were deselected",
            ),
            (
                "pytest/pytest-deselected-q.txt",
                "all 2 tests collected were deselected",
            ),
            ("pytest/unittest312-no-tests.txt", "unittest found no test"),
        ] {
            for parser in ["pytest", "auto"] {
                let found = recorded(parser, output, None);
                let read = read(&found);
                assert_eq!(read.len(), 1, "{parser} {output}: {read:?}");
                let (place, code, test, message) = &read[0];
                assert_eq!(
                    (place.as_str(), *code, *test),
                    ("", Some("NO_TESTS_COLLECTED"), None),
                    "{parser} {output}"
                );
                assert!(message.contains(words), "{parser} {output}: {message}");
            }
        }
    }

    #[test]
    fn a_plugin_or_configuration_pytest_cannot_use_is_one_finding_at_its_file() {
        // pytest 9.2.0: one `ERROR: ` line before any session header (exit
        // 4), the configuration file absolute, its line 1-based.
        for (output, dir, expected) in [
            (
                "pytest/pytest-plugin.txt",
                "/tmp/rec-pr/plugin",
                (
                    "",
                    "pytest could not import the plugin `nosuchplugin`: No module named 'nosuchplugin'; install it",
                ),
            ),
            (
                "pytest/pytest-ini-broken.txt",
                "/tmp/rec-pr/badini",
                (
                    "pytest.ini:1",
                    "pytest could not use its configuration `pytest.ini`: unexpected value continuation; fix the file",
                ),
            ),
            (
                "pytest/pytest-toml-broken.txt",
                "/tmp/rec-pr/badtoml",
                (
                    "pyproject.toml:6:14",
                    "pytest could not use its configuration `pyproject.toml`: Illegal character '\\n'; fix the file",
                ),
            ),
            (
                "pytest/pytest-minversion.txt",
                "/tmp/rec-pr/minversion",
                (
                    "pytest.ini",
                    "pytest could not use its configuration `pytest.ini`: 'minversion' requires pytest-99",
                ),
            ),
        ] {
            for parser in ["pytest", "auto"] {
                let found = recorded(parser, output, Some(dir));
                let read = read(&found);
                assert_eq!(read.len(), 1, "{parser} {output}: {read:?}");
                let (place, code, _, message) = &read[0];
                assert_eq!(
                    (place.as_str(), *code),
                    (expected.0, Some("USAGE_ERROR")),
                    "{parser} {output}"
                );
                assert!(message.starts_with(expected.1), "{parser} {output}: {message}");
            }
        }
    }

    #[test]
    fn a_run_pytest_stopped_itself_says_why_not_that_no_test_ran() {
        // pytest 9.2.0: a usage error (exit 4) after or without `no tests
        // ran`, and an internal error (exit 3) raised by a `conftest.py`
        // hook, whose closing line counts only a warning.
        for (output, expected) in [
            (
                "pytest/pytest-usage.txt",
                (
                    "",
                    Some("USAGE_ERROR"),
                    "pytest's command line: unrecognized arguments: --badflag",
                ),
            ),
            (
                "pytest/pytest-not-found.txt",
                ("", Some("USAGE_ERROR"), "file or directory not found: tests"),
            ),
            (
                "pytest/pytest-internal.txt",
                (
                    "internal/conftest.py:4",
                    Some("RuntimeError"),
                    "pytest stopped with an internal error (exit 3): RuntimeError: marker plugin broke",
                ),
            ),
        ] {
            for parser in ["pytest", "auto"] {
                let found = recorded(parser, output, Some("/tmp/rec-pr"));
                let read = read(&found);
                assert_eq!(read.len(), 1, "{parser} {output}: {read:?}");
                let (place, code, _, message) = &read[0];
                assert_eq!(
                    (place.as_str(), *code),
                    (expected.0, expected.1),
                    "{parser} {output}"
                );
                assert!(message.starts_with(expected.2), "{parser} {output}: {message}");
            }
        }
    }
}
