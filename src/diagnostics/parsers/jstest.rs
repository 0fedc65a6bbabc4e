//! JavaScript test runners: jest (default reporter and `--json`), vitest
//! (default reporter and `--reporter=json`, the same report shape) and
//! `bun test`. A failure is located at the first stack frame inside the
//! project (the assertion in the test file, or the line of the code under
//! test that threw); a suite that failed to run is one finding, the root
//! cause of everything else in that file. A JSON report the command asks
//! for and the output lacks fails the check: nothing shows a test ran.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{caps, number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::{strip_ansi, ColumnUnit, Severity};

/// What a failure's header holds (searchers built once: a line is looked
/// at millions of times in a long output).
static FAIL_WORD: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"FAIL"));
static BULLET: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("●".as_bytes()));

/// The most failures of a human report remembered for a JSON report of the
/// same run to match (the extractor keeps no more diagnostics than this).
const MAX_REPORTED: usize = 1000;

/// Message lines kept of one failure (jest's Expected/Received).
const MAX_MESSAGE_LINES: usize = 8;

/// A V8 or `JavaScriptCore` stack frame: `at fn (file:line:col)`,
/// `at file:line:col` (an anonymous function: V8 names a function only
/// with the place in parentheses, so `at my dir/x.js:3:11` is all path),
/// `at async file:line:col`, vitest's `❯ fn file:line:col` or, for an
/// anonymous function, `❯ file:line:col`. A function's name holds no `/`,
/// so in `❯ test/sub dir/x.js:2:38` the words before the space are the
/// path's, not a name; in `❯ my dir/x.js:2:38` they may be either, and
/// `frame_file` decides. The path may hold parentheses that close (a
/// Next.js route group, `app/(shop)/cart.test.ts`), never a lone one.
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:at (?:async )?(?:[^()]*? \()?|❯ (?:[^()]*? \(|(?P<name>[^\s()/\\]+) )?)(?:file://)?(?P<file>(?:[^\s()]|\([^()\s]*\))(?:[^()]|\([^()]*\))*?):(?P<line>\d+):(?P<col>\d+)\)?$")
        .expect("the stack frame regex is valid")
});

/// The file of a frame `FRAME` matched. vitest's `❯ my dir/x.js:2:38`
/// reads as the function `my` in `dir/x.js` or as the anonymous function
/// in `my dir/x.js`: it is the second when the test file being reported
/// on (`known`, from its `FAIL` header) starts with that directory.
fn frame_file(c: &regex::Captures<'_>, known: Option<&str>) -> String {
    let file = &c["file"];
    match c.name("name") {
        Some(name)
            if known.is_some_and(|k| {
                k.strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with(' '))
            }) =>
        {
            format!("{} {file}", name.as_str())
        }
        _ => file.to_string(),
    }
}

/// babel's parse error, which jest shows for a suite it could not
/// transform: `SyntaxError: /abs/src/x.test.js: Unexpected token (6:24)`,
/// the column counted from 0.
static BABEL_SYNTAX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^SyntaxError: (?P<file>[^\s:][^:]*): .*\((?P<line>\d+):(?P<col>\d+)\)$")
        .expect("the babel syntax error regex is valid")
});

/// Node's place of a syntax error it met loading a file, which jest shows
/// under `Details:`: `/abs/src/x.test.js:1`.
static NODE_SYNTAX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*[/\\][^:]*):(?P<line>\d+)$")
        .expect("the node syntax error place regex is valid")
});

/// jest's first line over a suite it could not parse, whose reason is
/// the `SyntaxError` line further down.
const UNEXPECTED_TOKEN: &str = "Jest encountered an unexpected token";

/// The place a syntax error in a suite that failed to run names (`details`:
/// past jest's `Details:` line), from one trimmed line of its message.
fn syntax_site(line: &str, details: bool) -> Option<(String, Option<u32>, Option<u32>)> {
    if let Some(c) = caps(&BABEL_SYNTAX, line) {
        let column = c["col"].parse::<u32>().ok().map(|c| c + 1);
        return Some((c["file"].to_string(), number(&c["line"]), column));
    }
    if details {
        if let Some(c) = caps(&NODE_SYNTAX, line) {
            return Some((c["file"].to_string(), number(&c["line"]), None));
        }
    }
    None
}

/// A failure's message lines: jest's boilerplate over a suite it could not
/// parse gives way to the `SyntaxError` that says why.
fn with_reason(mut message: Vec<String>, syntax: Option<&str>) -> Vec<String> {
    if let (Some(reason), Some(UNEXPECTED_TOKEN)) = (syntax, message.first().map(String::as_str)) {
        message.truncate(1);
        message.push(reason.to_string());
    }
    message
}

/// The place oxc's report of a file vitest could not transform points at:
/// `╭─[ src/x.test.ts:3:19 ]`, under the `[PARSE_ERROR] ...` line that
/// says why, itself under vitest's banner `Error: Transform failed with 1
/// error:`.
static OXC_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^╭─\[\s*(?P<file>\S(?:.*?\S)?):(?P<line>\d+):(?P<col>\d+)\s*\]$")
        .expect("the oxc place regex is valid")
});

/// vitest's banner over an error its transform reported (`Error: ` before
/// it in the human report, not in the JSON one): a summary that says
/// nothing, so the error below it takes its place.
const TRANSFORM_FAILED: &str = "Transform failed with ";

/// The title jest gives the block of `console` calls a suite made
/// (`● Console`), printed when several suites run.
const CONSOLE: &str = "Console";

/// The first line of one call in jest's `● Console` block:
/// `console.log`, `console.warn`, ...
static CONSOLE_CALL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^console\.[a-z]+$").expect("the console call regex is valid"));

/// `FAIL src/x.test.js` (jest, with its time when slow: ` (5.2 s)`) or
/// ` FAIL  src/x.test.js > name` (vitest). A path may hold spaces.
static FAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*FAIL\s+(?P<file>\S(?:.*?\S)?)(?: > (?P<test>.+)| \[ .* \]| \([\d.]+ m?s\))?$")
        .expect("the FAIL regex is valid")
});

/// An error's first line, as bun prints it: `error: expect(...)` or
/// `TypeError: null is not an object`.
static BUN_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:error|[A-Z][A-Za-z]*(?:Error|Exception)): ")
        .expect("the bun error regex is valid")
});

/// bun's test result: `(fail) adds [0.35ms]` or `✗ adds [0.29ms]`.
static BUN_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\((?P<state>pass|fail|skip|todo)\)|(?P<mark>[✓✗»]))\s+(?P<test>.+?)(?: \[[\d.]+m?s\])?$")
        .expect("the bun result regex is valid")
});

/// How jest's `--json` report starts (`{"numFailedTestSuites":`) and
/// vitest's `--reporter=json` one (`{"numTotalTestSuites":`). A line that
/// starts so reaches the grammar as text only when it was no JSON
/// document: one cut short, or too big to be gathered.
const JSON_REPORTS: [(&str, &str); 2] = [
    ("{\"numFailedTestSuites\":", "jest's `--json` report"),
    (
        "{\"numTotalTestSuites\":",
        "vitest's `--reporter=json` report",
    ),
];

/// A TypeScript error ts-jest reports as a suite's failure, in tsc's
/// pretty form (`src/a.test.ts:4:9 - error TS2322: Type 'number' is not
/// assignable to type 'string'.`, ts-jest's default) or its plain one
/// (`src/a.test.ts(4,9): error TS2322: ...`, with `pretty: false`): a type
/// error at its place, with its code, as `tsc` reports it.
fn type_error(line: &str, at: &Range<u64>) -> Option<Found> {
    let c = caps(&super::tsc::PRETTY, line).or_else(|| caps(&super::tsc::PLAIN, line))?;
    Some(
        Found::new(
            "ts-jest",
            Severity::from_word(&c["severity"]),
            &c["message"],
        )
        .at(&c["file"], number(&c["line"]), number(&c["col"]))
        .code(Some(c["code"].to_string()))
        .origin(Origin::Typecheck)
        .unit(ColumnUnit::Utf16)
        .range(at),
    )
}

/// The code of the finding that a JSON report could not be read.
const REPORT_UNREADABLE: &str = "REPORT_UNREADABLE";

/// The finding of a JSON report that could not be read (`report` names
/// it): its failures are unknown, so it fails the check whatever the exit
/// status said.
fn unreadable_report(report: &str, line: &str, at: &Range<u64>) -> Found {
    let why = if line.len() >= crate::diagnostics::MAX_JSON_BYTES {
        format!("{report} is larger than the {} MiB phasegate reads of one document, so the failures it holds were not read; run fewer test files a check (a `files` filter, or the paths on the command line), or drop the JSON option to have the human report read", crate::diagnostics::MAX_JSON_BYTES >> 20)
    } else {
        format!("{report} is cut short: it starts but never closes, so the failures it holds were not read (the runner was stopped while writing it, or its output was cut); run the tests again, or drop the JSON option to have the human report read")
    };
    Found::new("json", Severity::Error, why)
        .code(Some(REPORT_UNREADABLE.to_string()))
        .origin(Origin::Test)
        .range(at)
}

/// The JSON report a check's command asks its runner to print on standard
/// output (`jest --json`, `vitest --reporter=json`), with the runner's
/// name, when it asks for one and nothing sends it elsewhere: an
/// `--outputFile`, or a shell redirection or pipe of standard output.
/// `--listTests` and `--showConfig` print other JSON. A run that asks for
/// the report and prints none (a package script that does not run the
/// runner, `npm test -- --json` over `echo skipped`) shows no test ran.
fn asked_report(words: &[String]) -> Option<(&'static str, &'static str)> {
    let elsewhere = words.iter().any(|w| {
        w.starts_with("--outputFile")
            || w == "--listTests"
            || w == "--showConfig"
            || w == "|"
            || w == "|&"
            // `2>&1` and `>&2` keep the report among what is captured.
            || (w.contains('>') && !w.starts_with("2>") && !w.ends_with(">&2"))
    });
    if elsewhere {
        return None;
    }
    let mut words = words.iter().map(String::as_str).peekable();
    while let Some(word) = words.next() {
        match word {
            "--json" => return Some(("jest", JSON_REPORTS[0].1)),
            "--reporter=json" => return Some(("vitest", JSON_REPORTS[1].1)),
            "--reporter" if words.peek() == Some(&"json") => {
                return Some(("vitest", JSON_REPORTS[1].1));
            }
            _ => {}
        }
    }
    None
}

/// What jest (`Test results written to: out.json`) and vitest (`JSON
/// report written to /abs/out.json`) say when they wrote the JSON report
/// to a file: it is not on standard output.
const WRITTEN_TO_FILE: [&str; 2] = ["Test results written to: ", "JSON report written to "];

/// The finding of a JSON report the command asked `runner` for that the
/// output does not hold: no test is known to have run, so it fails the
/// check whatever the exit status said.
fn missing_report(runner: &str, report: &str) -> Found {
    let message = format!(
        "{report} is missing: the check's command asks for it, but its output holds none (no JSON document with `testResults`), so nothing shows that any test ran; make the command run {runner} with that option (a package script that does not run {runner} passes the option to something else), or drop the option to have the human report read"
    );
    Found::new("json", Severity::Error, message)
        .code(Some(REPORT_UNREADABLE.to_string()))
        .origin(Origin::Test)
}

/// The code of the finding that a run found no test to run, as pytest's
/// exit status names it (`ExitCode.NO_TESTS_COLLECTED`).
const NO_TESTS: &str = crate::diagnostics::NO_TESTS_COLLECTED;

/// jest's and vitest's word that they found no test file:
/// `No tests found, exiting with code 1` (jest),
/// `No test files found, exiting with code 1` (vitest); with
/// `--passWithNoTests` the code is 0 and the run passes.
static NO_TESTS_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^No test(?: file)?s found, exiting with code (?P<code>\d+)$")
        .expect("the no tests found regex is valid")
});

/// The finding of a run that found no test to run, which `runner` fails
/// (exit 1): what it looks for and how to point it at the tests.
fn no_tests(runner: Layout, at: &Range<u64>) -> Found {
    let (dialect, message) = match runner {
        Layout::Vitest => (
            "vitest",
            "no test files were found: vitest found no test file to run and fails such a run (exit 1); name test files `*.test.ts` or `*.spec.ts` (any of `js`, `mjs`, `cjs`, `jsx`, `tsx` too), point the check's command (or `include` in vitest's configuration) at them, or add `--passWithNoTests` to the command if a run without tests may pass",
        ),
        Layout::Bun => (
            "bun",
            "no test files were found: bun test found no test file to run and fails such a run (exit 1); put `.test`, `_test_`, `.spec` or `_spec_` in the test files' names (`app.test.ts`), point the check's command at them, or add `--pass-with-no-tests` to the command if a run without tests may pass",
        ),
        Layout::Jest | Layout::Unknown => (
            "jest",
            "no tests were found: jest found no test file to run and fails such a run (exit 1); name test files `*.test.js` or `*.spec.js` (or put them under `__tests__/`), point the check's command (or `testMatch` and `roots` in jest's configuration) at them, or add `--passWithNoTests` to the command if a run without tests may pass",
        ),
    };
    Found::new(dialect, Severity::Error, message)
        .code(Some(NO_TESTS.to_string()))
        .origin(Origin::Test)
        .range(at)
}

/// Whether a frame is the project's, not a dependency's or the runtime's.
pub(super) fn in_project(file: &str) -> bool {
    !(file.contains("node_modules/")
        || file.starts_with("node:")
        || file.starts_with("internal/")
        || file.starts_with('<'))
}

/// The first in-project frame of a stack, as text lines.
fn first_frame<'a>(
    lines: impl Iterator<Item = &'a str>,
) -> Option<(String, Option<u32>, Option<u32>)> {
    lines
        .filter_map(|l| caps(&FRAME, l))
        .find(|c| in_project(&c["file"]))
        .map(|c| (c["file"].to_string(), number(&c["line"]), number(&c["col"])))
}

/// Which runner's layout is being read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Layout {
    #[default]
    Unknown,
    Jest,
    Vitest,
    Bun,
}

/// A failure being read.
#[derive(Debug, Default)]
struct Failure {
    test: Option<String>,
    file: Option<String>,
    message: Vec<String>,
    frame: Option<(String, Option<u32>, Option<u32>)>,
    /// Where a syntax error that stopped the suite is: before any frame.
    syntax_at: Option<(String, Option<u32>, Option<u32>)>,
    /// Its `SyntaxError: ...` line.
    syntax_line: Option<String>,
    /// jest's `Details:` line was read.
    details: bool,
    /// bun: opened by a `(fail)` line with no error above it; only the
    /// `^ ` lines under it say why.
    bare: bool,
    /// The code frame started: message lines are over.
    in_code: bool,
    /// A `● Console` heading opened this: the block is what the code under
    /// test logged if its first line is a `console.log` call.
    maybe_console: bool,
    /// It is: output, not a finding, so nothing is pushed.
    console: bool,
    /// TypeScript's errors that stopped the suite (ts-jest reports them
    /// as the suite's failure), pushed as they were read: each is a
    /// finding of its own, so the suite's failure is not one more.
    typed: bool,
    start: u64,
    end: u64,
}

#[derive(Debug, Default)]
pub struct JsTest {
    layout: Layout,
    /// The test file being reported on.
    file: Option<String>,
    open: Option<Failure>,
    /// bun: inside `# Unhandled error between tests`.
    unhandled: bool,
    /// The failures the human report gave. `jest --json` prints its human
    /// report too (on stderr, captured with the JSON), so the JSON report
    /// that follows repeats them: a JSON failure matching one of these is
    /// the same finding and is not pushed again.
    reported: Vec<Reported>,
    /// A JSON report was read: a human report after it (of the same run)
    /// repeats it.
    json: bool,
    /// The run's word that it found no test was read: another report of
    /// the same run (human and JSON) says it again.
    no_tests: bool,
    /// bun: the filters it says matched no test file (the first few), and
    /// where it said so, while they are read.
    filters: Option<(Vec<String>, Range<u64>)>,
    /// The runner and the JSON report the check's command asks it to print
    /// on standard output (`asked_report`).
    asked: Option<(&'static str, &'static str)>,
    /// The runner said it wrote its JSON report to a file.
    written: bool,
    /// A JSON report was found that could not be read.
    unreadable: bool,
}

/// What makes a failure of a human report the same as one of a JSON report
/// (which names files by absolute path where the human report names them
/// relative to the project).
#[derive(Debug, PartialEq, Eq)]
struct Reported {
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    test: Option<String>,
}

impl Reported {
    fn of(found: &Found) -> Reported {
        Reported {
            file: found.file.clone(),
            line: found.line,
            column: found.column,
            test: found.test.clone(),
        }
    }

    /// Whether `found`, from a JSON report, is this failure: the same test
    /// at the same place, its path this one or ending in it.
    fn matches(&self, found: &Found) -> bool {
        let same_file = match (&self.file, &found.file) {
            (Some(ours), Some(theirs)) => {
                let ours = ours.trim_start_matches("./");
                theirs == ours
                    || theirs
                        .strip_suffix(ours)
                        .is_some_and(|dir| dir.ends_with('/') || dir.ends_with('\\'))
            }
            (None, None) => true,
            _ => false,
        };
        same_file
            && self.line == found.line
            && self.column == found.column
            && self.test == found.test
    }
}

impl JsTest {
    /// The grammar for a check whose command is `words` (the program's
    /// words, a shell script's): it expects the JSON report the command
    /// asks for.
    pub fn for_command(words: &[String]) -> JsTest {
        JsTest {
            asked: asked_report(words),
            ..JsTest::default()
        }
    }

    fn emit(&mut self, out: &mut Out) {
        let Some(failure) = self.open.take() else {
            return;
        };
        // Console output is never a finding; and a human report read after
        // a JSON report repeats what the JSON held.
        if failure.console || failure.typed || self.json {
            return;
        }
        let dialect = match self.layout {
            Layout::Jest | Layout::Unknown => "jest",
            Layout::Vitest => "vitest",
            Layout::Bun => "bun",
        };
        let mut message = with_reason(failure.message, failure.syntax_line.as_deref()).join("\n");
        if message.is_empty() {
            message = format!(
                "{} failed",
                failure.test.as_deref().unwrap_or("the test file")
            );
        }
        let mut found = Found::new(dialect, Severity::Error, message)
            .test(failure.test)
            .origin(Origin::Test)
            .unit(ColumnUnit::Utf16)
            .range(&(failure.start..failure.end));
        match failure.syntax_at.or(failure.frame) {
            Some((file, line, column)) => found = found.at(&file, line, column),
            None => {
                if let Some(file) = failure.file.or_else(|| self.file.clone()) {
                    found = found.at(&file, None, None);
                    // No frame of the test's own (a timeout's stack is the
                    // runner's): its title finds its declaration.
                    if let Some(test) = &found.test {
                        let anchor = super::declared(test);
                        found = found.anchor(anchor);
                    }
                }
            }
        }
        if self.reported.len() < MAX_REPORTED {
            self.reported.push(Reported::of(&found));
        }
        out.push(found);
    }

    fn open(&mut self, test: Option<String>, file: Option<String>, at: &Range<u64>, out: &mut Out) {
        self.emit(out);
        self.open = Some(Failure {
            test,
            file,
            start: at.start,
            end: at.end,
            ..Failure::default()
        });
    }

    fn jest_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        let trimmed = line.trim();
        if let Some(c) = caps(&NO_TESTS_FOUND, trimmed) {
            self.emit(out);
            if &c["code"] != "0" && !self.no_tests {
                self.no_tests = true;
                let runner = if trimmed.starts_with("No test files") {
                    Layout::Vitest
                } else {
                    Layout::Jest
                };
                out.push(no_tests(runner, at));
            }
            return true;
        }
        if let Some(c) = caps(&FAIL, line) {
            self.emit(out);
            self.file = Some(c["file"].to_string());
            if let Some(test) = c.name("test") {
                // vitest: `FAIL  file > describe > test`.
                self.layout = Layout::Vitest;
                let test = test.as_str().to_string();
                self.open(Some(test), Some(c["file"].to_string()), at, out);
            } else if line.contains(" [ ") {
                self.layout = Layout::Vitest;
                self.open(
                    Some("test file failed to run".to_string()),
                    Some(c["file"].to_string()),
                    at,
                    out,
                );
            } else if self.layout == Layout::Unknown {
                self.layout = Layout::Jest;
            }
            return true;
        }
        if let Some(test) = trimmed.strip_prefix("● ") {
            self.layout = Layout::Jest;
            self.open(Some(test.to_string()), None, at, out);
            if let Some(failure) = self.open.as_mut() {
                failure.maybe_console = test == CONSOLE;
            }
            return true;
        }
        if trimmed.starts_with("PASS ")
            || trimmed.starts_with("Test Suites:")
            || trimmed.starts_with("Test Files ")
            || trimmed.starts_with('⎯')
        {
            self.emit(out);
            return true;
        }
        false
    }

    /// bun's list of filters that matched no test file, read: the run's
    /// finding.
    fn said_no_filter_matched(&mut self, out: &mut Out) {
        let Some((filters, range)) = self.filters.take() else {
            return;
        };
        self.no_tests = true;
        let message = format!(
            "no test file matches the filters {}: bun test ran no test and fails such a run (exit 1); fix the filters in the check's command (bun matches them against the test files' paths), or put `.test`, `_test_`, `.spec` or `_spec_` in the test files' names",
            filters.join(", ")
        );
        out.push(
            Found::new("bun", Severity::Error, message)
                .code(Some(NO_TESTS.to_string()))
                .origin(Origin::Test)
                .range(&range),
        );
    }

    fn bun_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        if let Some(version) = line.strip_prefix("bun test v") {
            self.layout = Layout::Bun;
            out.version = version.split_whitespace().next().map(str::to_string);
            return true;
        }
        if self.layout != Layout::Bun {
            return false;
        }
        if let Some((filters, range)) = &mut self.filters {
            // One filter a line, each after a space.
            if let Some(filter) = line.strip_prefix(' ').map(str::trim) {
                if !filter.is_empty() && filters.len() < MAX_MESSAGE_LINES {
                    filters.push(format!("`{filter}`"));
                }
                range.end = at.end;
                return true;
            }
            self.said_no_filter_matched(out);
        }
        if line == "The following filters did not match any test files:" {
            self.emit(out);
            self.filters = Some((Vec::new(), at.clone()));
            return true;
        }
        if line == "No tests found!" {
            self.emit(out);
            if !self.no_tests {
                self.no_tests = true;
                out.push(no_tests(Layout::Bun, at));
            }
            return true;
        }
        if line.ends_with(':') && !line.starts_with(' ') && !line.contains(": ") {
            self.emit(out);
            self.file = Some(line.trim_end_matches(':').to_string());
            return true;
        }
        if line.starts_with("# Unhandled error") {
            self.unhandled = true;
            self.open(
                Some("unhandled error between tests".to_string()),
                None,
                at,
                out,
            );
            return true;
        }
        if self.unhandled && !line.is_empty() && line.bytes().all(|b| b == b'-') {
            if self.open.as_ref().is_some_and(|f| !f.message.is_empty()) {
                self.unhandled = false;
                self.emit(out);
            }
            return true;
        }
        if let Some(c) = caps(&BUN_RESULT, line) {
            let failed = c.name("state").is_some_and(|s| s.as_str() == "fail")
                || c.name("mark").is_some_and(|m| m.as_str() == "✗");
            // A failure its result line opened ends at the next result.
            if self.open.as_ref().is_some_and(|f| f.bare) {
                self.emit(out);
            }
            if failed {
                if let Some(failure) = self.open.as_mut() {
                    failure.test = Some(c["test"].to_string());
                    failure.end = at.end;
                    self.emit(out);
                } else {
                    // No error above it: a timeout, whose reason bun
                    // prints under it (`^ this test timed out after
                    // 5000ms.`).
                    let file = self.file.clone();
                    self.open(Some(c["test"].to_string()), file, at, out);
                    if let Some(failure) = self.open.as_mut() {
                        failure.bare = true;
                    }
                }
            } else {
                self.open = None;
            }
            return true;
        }
        // `bun run`'s word on the script it ran (`bun run test`): the
        // check's exit status, no failure of a test.
        if line.starts_with("error: script \"") && line.contains("\" exited with code ") {
            self.emit(out);
            return true;
        }
        if BUN_ERROR.is_match(line) && !self.unhandled {
            self.open(None, None, at, out);
        }
        false
    }
}

impl Grammar for JsTest {
    fn name(&self) -> &'static str {
        "jest"
    }

    /// Chosen from the output, the grammar is `jest` whatever printed it:
    /// a finding of bun's or vitest's layout names its runner.
    fn relabel(&self, found: &mut Found) {
        if found.tool.is_none() {
            found.tool = match found.dialect {
                "bun" => Some("bun"),
                "vitest" => Some("vitest"),
                _ => None,
            };
        }
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            // `bun test`, `No tests found` (jest), `No test files
            // found` (vitest), a JSON report read as text, and the word
            // that one went to a file (`Test results written to: `, `JSON
            // report written to `).
            first: b"bN{TJ",
            indented: b"",
            // `FAIL`, and `●`'s first byte.
            anywhere: b"F\xe2",
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some() || self.layout == Layout::Bun
    }

    fn wants(&self, line: &[u8]) -> bool {
        // Outside a failure only headers matter: they hold one of these.
        self.busy()
            || FAIL_WORD.find(line).is_some()
            || BULLET.find(line).is_some()
            || line.starts_with(b"bun test")
            || line.starts_with(b"No test")
            || JSON_REPORTS
                .iter()
                .any(|(start, _)| line.starts_with(start.as_bytes()))
            || (self.asked.is_some()
                && WRITTEN_TO_FILE
                    .iter()
                    .any(|start| line.starts_with(start.as_bytes())))
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some((_, report)) = JSON_REPORTS.iter().find(|(s, _)| line.starts_with(s)) {
            self.emit(out);
            self.unreadable = true;
            out.errors_fail = true;
            out.push(unreadable_report(report, line, at));
            return;
        }
        if self.asked.is_some() && WRITTEN_TO_FILE.iter().any(|w| line.starts_with(w)) {
            self.written = true;
            return;
        }
        if let Some(rest) = line.trim().strip_prefix("RUN  v") {
            self.layout = Layout::Vitest;
            out.version = rest.split_whitespace().next().map(str::to_string);
            return;
        }
        if self.jest_line(line, at, out) || self.bun_line(line, at, out) {
            return;
        }
        let Some(failure) = self.open.as_mut() else {
            return;
        };
        failure.end = at.end;
        let trimmed = line.trim();
        if failure.console {
            return;
        }
        if failure.bare {
            if let Some(reason) = trimmed.strip_prefix("^ ") {
                if failure.message.len() < MAX_MESSAGE_LINES {
                    failure.message.push(reason.to_string());
                }
            }
            return;
        }
        if failure.maybe_console && !trimmed.is_empty() {
            // A failed test may be titled `Console` too: only its first
            // line tells the two apart.
            failure.maybe_console = false;
            failure.console = CONSOLE_CALL.is_match(trimmed);
            if failure.console {
                return;
            }
        }
        if trimmed == "Details:" {
            failure.details = true;
            return;
        }
        if let Some(found) = type_error(trimmed, at) {
            failure.typed = true;
            out.push(found);
            return;
        }
        if failure.syntax_at.is_none() {
            failure.syntax_at = syntax_site(trimmed, failure.details);
        }
        if failure.syntax_line.is_none() && trimmed.starts_with("SyntaxError: ") {
            failure.syntax_line = Some(trimmed.to_string());
        }
        if let Some(c) = caps(&OXC_PLACE, trimmed) {
            // The transform's error names its place before any frame.
            if failure.syntax_at.is_none() {
                failure.syntax_at =
                    Some((c["file"].to_string(), number(&c["line"]), number(&c["col"])));
            }
            failure.in_code = true;
            return;
        }
        if let Some(c) = caps(&FRAME, line) {
            if failure.frame.is_none() && in_project(&c["file"]) {
                let known = failure.file.as_deref().or(self.file.as_deref());
                failure.frame =
                    Some((frame_file(&c, known), number(&c["line"]), number(&c["col"])));
            }
            failure.in_code = true;
            return;
        }
        // A code frame (`> 4 |   expect(...)`, `5 |`, a caret line) ends
        // the message.
        let code_frame = trimmed.starts_with('>')
            || trimmed.starts_with('|')
            || trimmed
                .split_once(" |")
                .is_some_and(|(n, _)| n.trim().parse::<u32>().is_ok())
            || (!trimmed.is_empty() && trimmed.chars().all(|c| c == '^' || c == '~'));
        if code_frame {
            failure.in_code = true;
            return;
        }
        if trimmed.is_empty() || failure.in_code || failure.message.len() >= MAX_MESSAGE_LINES {
            return;
        }
        if failure.message.len() == 1
            && failure
                .message
                .first()
                .and_then(|m| m.strip_prefix("Error: "))
                .is_some_and(|m| m.starts_with(TRANSFORM_FAILED))
        {
            // The error the banner announces is the message.
            failure.message.clear();
        }
        // bun prefixes its own assertion errors with `error: `.
        let text = if self.layout == Layout::Bun {
            trimmed.strip_prefix("error: ").unwrap_or(trimmed)
        } else {
            trimmed
        };
        failure.message.push(text.to_string());
    }

    /// jest's `--json` and vitest's `--reporter=json`: `{"testResults":
    /// [{"name", "status", "message", "assertionResults": [{"fullName",
    /// "status", "failureMessages"}]}]}`.
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        let Some(results) = doc["testResults"].as_array() else {
            return;
        };
        self.json = true;
        let reported = &self.reported;
        // A suite that failed to run is named as the runner's human
        // report names it.
        let (dialect, joiner, suite) = if doc.get("openHandles").is_some() {
            ("jest-json", " › ", "Test suite failed to run")
        } else {
            ("vitest-json", " > ", "test file failed to run")
        };
        // A run that found no test file lists none and failed (vitest's
        // report; jest's says `success: true` even when it exits 1).
        if results.is_empty()
            && doc["success"] == false
            && doc["numTotalTestSuites"].as_u64() == Some(0)
        {
            if !self.no_tests {
                self.no_tests = true;
                let runner = if dialect == "jest-json" {
                    Layout::Jest
                } else {
                    Layout::Vitest
                };
                let mut found = no_tests(runner, at);
                found.dialect = dialect;
                out.push(found);
            }
            return;
        }
        for result in results {
            let Some(file) = result["name"].as_str() else {
                continue;
            };
            let assertions = result["assertionResults"].as_array();
            let failed: Vec<&serde_json::Value> = assertions
                .into_iter()
                .flatten()
                .filter(|a| a["status"] == "failed")
                .collect();
            // A suite that failed on TypeScript's errors (ts-jest): each
            // error is the finding, where the human report put it.
            let mut typed = false;
            if failed.is_empty() && result["status"] == "failed" {
                let text = strip_ansi(result["message"].as_str().unwrap_or(""));
                for found in text.lines().filter_map(|l| type_error(l.trim(), at)) {
                    typed = true;
                    if !reported.iter().any(|r| r.matches(&found)) {
                        out.push(found);
                    }
                }
            }
            let mut push = |test: String, text: &str| {
                let text = strip_ansi(text);
                let frame = first_frame(text.lines());
                // vitest's banner over its transform's error says
                // nothing: the error below it is the message.
                let message: Vec<String> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with("at ") && !l.starts_with('●'))
                    .skip_while(|l| l.starts_with(TRANSFORM_FAILED))
                    .take_while(|l| {
                        !l.starts_with('>') && !l.contains(" |") && !OXC_PLACE.is_match(l)
                    })
                    .take(MAX_MESSAGE_LINES)
                    .map(str::to_string)
                    .collect();
                let mut details = false;
                let mut syntax_at = None;
                for line in text.lines().map(str::trim) {
                    details |= line == "Details:";
                    syntax_at = syntax_site(line, details).or_else(|| {
                        caps(&OXC_PLACE, line)
                            .map(|c| (c["file"].to_string(), number(&c["line"]), number(&c["col"])))
                    });
                    if syntax_at.is_some() {
                        break;
                    }
                }
                let reason = text
                    .lines()
                    .map(str::trim)
                    .find(|l| l.starts_with("SyntaxError: "));
                let message = with_reason(message, reason);
                let frame = syntax_at.or(frame);
                let mut found = Found::new(dialect, Severity::Error, message.join("\n"))
                    .test(Some(test))
                    .origin(Origin::Test)
                    .unit(ColumnUnit::Utf16)
                    .range(at);
                found = match frame {
                    Some((f, line, column)) => found.at(&f, line, column),
                    None => found.at(file, None, None),
                };
                // The human report of the same run gave it already.
                if !reported.iter().any(|r| r.matches(&found)) {
                    out.push(found);
                }
            };
            if failed.is_empty() && result["status"] == "failed" && !typed {
                push(suite.to_string(), result["message"].as_str().unwrap_or(""));
            }
            for assertion in failed {
                let text = assertion["failureMessages"][0].as_str().unwrap_or("");
                // jest prefixes its matcher messages with `Error: `.
                let text = text.strip_prefix("Error: ").unwrap_or(text);
                let name = test_name(assertion, joiner);
                match text.strip_prefix(STACK_TRACE_ERROR) {
                    Some(stack) if stack.is_empty() || stack.starts_with('\n') => {
                        let reason = without_reason(&name, assertion["duration"].as_f64());
                        push(name, &format!("{reason}{stack}"));
                    }
                    _ => push(name, text),
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.emit(out);
        self.said_no_filter_matched(out);
        // A run that found no test says so, and one whose report could
        // not be read has its finding already.
        if let Some((runner, report)) = self.asked {
            if !(self.json || self.written || self.no_tests || self.unreadable) {
                out.errors_fail = true;
                out.push(missing_report(runner, report));
            }
        }
    }
}

/// The message vitest's JSON report gives a failure whose error it lost
/// (a test that timed out), over a stack of its own frames through the
/// test's declaration.
const STACK_TRACE_ERROR: &str = "STACK_TRACE_ERROR";

/// What to say of the test `name` whose failure vitest's JSON report gives
/// no reason for, after `duration` milliseconds.
fn without_reason(name: &str, duration: Option<f64>) -> String {
    let after = duration.map_or_else(String::new, |ms| format!(" after {ms:.0} ms"));
    format!(
        "test `{name}` failed{after} with no reason in vitest's JSON report (`{STACK_TRACE_ERROR}`, which it gives a test that timed out); vitest's default reporter prints the reason"
    )
}

/// A failed assertion's test as the runner's human report names it: its
/// ancestors' titles and its own joined by `joiner` (jest's `math › adds`,
/// vitest's `math > adds`), where `fullName` joins them with a space.
fn test_name(assertion: &serde_json::Value, joiner: &str) -> String {
    let ancestors = assertion["ancestorTitles"].as_array();
    match (ancestors, assertion["title"].as_str()) {
        (Some(ancestors), Some(title)) => ancestors
            .iter()
            .filter_map(serde_json::Value::as_str)
            .chain([title])
            .collect::<Vec<_>>()
            .join(joiner),
        _ => assertion["fullName"].as_str().unwrap_or("").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{places, recorded};

    const RECORDED_IN: Option<&str> = Some("/tmp/rec-diag/vt/project");

    #[test]
    fn a_frame_in_a_route_group_keeps_its_parentheses() {
        // ` ❯ app/(shop)/cart/total.test.ts:5:25` (vitest 4.1.12), with
        // and without colour.
        for output in ["vitest/vitest-group.txt", "vitest/vitest-group-color.txt"] {
            let found = recorded("vitest", output, Some("/tmp/dx/vtrec"));
            assert_eq!(
                places(&found),
                [(
                    "app/(shop)/cart/total.test.ts:5:25".to_string(),
                    None,
                    Some("adds the prices")
                )],
                "{output}"
            );
            assert_eq!(
                found.diagnostics[0].message,
                "AssertionError: expected 6 to be 5 // Object.is equality\n- Expected\n+ Received\n- 5\n+ 6",
                "{output}"
            );
        }
    }

    #[test]
    fn a_vitest_failure_in_a_path_with_a_space_is_located() {
        // ` FAIL  test/sub dir/spaced.test.js > spaced`, then the frame
        // ` ❯ test/sub dir/spaced.test.js:2:38` (vitest 4.1.12).
        let found = recorded("vitest", "vitest/vitest-space.txt", RECORDED_IN);
        assert_eq!(
            places(&found),
            [(
                "test/sub dir/spaced.test.js:2:38".to_string(),
                None,
                Some("spaced")
            )]
        );
        assert!(found.diagnostics[0]
            .message
            .starts_with("AssertionError: expected 'abc' to be 'abd'"));
    }

    #[test]
    fn a_frame_without_a_function_name_keeps_the_whole_path() {
        // `at /tmp/rec-diag/vt/project/test/sub dir/spaced.test.js:2:38`.
        let found = recorded("vitest", "vitest/vitest-space.json", RECORDED_IN);
        assert_eq!(
            places(&found),
            [(
                "test/sub dir/spaced.test.js:2:38".to_string(),
                None,
                Some("spaced")
            )]
        );
    }

    #[test]
    fn a_suite_that_failed_to_run_is_located_at_the_error_jest_shows() {
        // jest 29.7.0 and 30.5.2: babel's `SyntaxError: ...: Unexpected token (3:1)`
        // (a 0-based column), a `TypeError` thrown while a required module
        // loads (its frames), and Node's `SyntaxError` for an ES `import`,
        // placed under `Details:` as `/tmp/rec-parsers/jest/src/badimport.test.js:1`.
        for (output, recorded_in) in [
            ("jest/jest-suite.txt", "/tmp/rec-parsers/jest"),
            ("jest/jest-suite.json", "/tmp/rec-parsers/jest"),
            ("jest30/jest-suite.txt", "/tmp/rec-parsers/jest30"),
        ] {
            let found = recorded("jest", output, Some(recorded_in));
            let mut read: Vec<(String, String, Option<&str>, crate::diagnostics::Severity)> = found
                .diagnostics
                .iter()
                .map(|d| {
                    (
                        d.location(),
                        d.message.clone(),
                        d.test.as_deref(),
                        d.severity,
                    )
                })
                .collect();
            read.sort();
            let suite = Some("Test suite failed to run");
            let error = crate::diagnostics::Severity::Error;
            assert_eq!(
                read,
                [
                    (
                        "src/badimport.test.js:1".to_string(),
                        "Jest encountered an unexpected token\nSyntaxError: Cannot use import statement outside a module".to_string(),
                        suite,
                        error
                    ),
                    (
                        "src/broken.js:3:2".to_string(),
                        format!("Jest encountered an unexpected token\nSyntaxError: {recorded_in}/src/broken.js: Unexpected token (3:1)"),
                        suite,
                        error
                    ),
                    (
                        "src/syntax.test.js:6:25".to_string(),
                        format!("SyntaxError: {recorded_in}/src/syntax.test.js: Unexpected token, expected \",\" (6:24)"),
                        suite,
                        error
                    ),
                    (
                        "src/throws.js:3:40".to_string(),
                        "TypeError: Cannot read properties of undefined (reading 'port')".to_string(),
                        suite,
                        error
                    ),
                ],
                "{output}"
            );
        }
    }

    #[test]
    fn an_anonymous_frame_whose_first_directory_has_a_space_keeps_it() {
        // jest 29.7.0: `at my dir/space.test.js:3:11`, V8's frame of an
        // anonymous callback, its path relative to the project.
        let found = recorded("jest", "jest/jest-space.txt", None);
        assert_eq!(
            places(&found),
            [("my dir/space.test.js:3:11".to_string(), None, Some("maps"))]
        );
    }

    #[test]
    fn a_vitest_frame_whose_first_directory_has_a_space_keeps_it() {
        // vitest 4.1.12: ` FAIL  my dir/space.test.js > maps`, then
        // ` ❯ my dir/space.test.js:5:11`, which could be the function `my`.
        let found = recorded("vitest", "vitest/vitest-space-dir.txt", None);
        assert_eq!(
            places(&found),
            [
                ("my dir/space.test.js:5:11".to_string(), None, Some("maps")),
                (
                    "my dir/space.test.js:10:17".to_string(),
                    None,
                    Some("compares")
                ),
            ]
        );
    }

    #[test]
    fn jests_console_block_is_output_not_a_failure() {
        // jest 30.5.2 over two suites that load a module logging with
        // `console.log`: each suite, failed or passed, shows `● Console`.
        let found = recorded(
            "jest",
            "jest30/jest-console.txt",
            Some("/tmp/s6/js-rec/jest30"),
        );
        assert_eq!(
            places(&found),
            [("logs-fail.test.js:2:40".to_string(), None, Some("adds"))]
        );
    }

    #[test]
    fn a_json_report_with_its_human_report_counts_each_failure_once() {
        // `jest --json` (30.5.2): the human report on stderr, then the JSON
        // on stdout, captured together; the test named as the human report
        // names it.
        let found = recorded(
            "auto",
            "jest30/jest-json-mixed.txt",
            Some("/tmp/s6/js-rec/jest30-json"),
        );
        assert_eq!(
            places(&found),
            [(
                "describe.test.js:1:61".to_string(),
                None,
                Some("math › adds")
            )]
        );
    }

    #[test]
    fn a_json_report_names_a_test_by_its_ancestors_as_the_human_report_does() {
        // vitest 4.1.12: ` FAIL  describe.test.ts > math > adds`; its JSON
        // report's `fullName` is `math adds`.
        for output in ["vitest/vitest-describe.txt", "vitest/vitest-describe.json"] {
            let found = recorded("vitest", output, Some("/tmp/s6/js-rec/vitest"));
            assert_eq!(
                places(&found),
                [(
                    "describe.test.ts:4:19".to_string(),
                    None,
                    Some("math > adds")
                )],
                "{output}"
            );
        }
    }

    #[test]
    fn a_vitest_file_that_fails_to_transform_is_located_at_the_parse_error() {
        // vitest 4.1.12: `Error: Transform failed with 1 error:`, then oxc's
        // `[PARSE_ERROR] ...` and its place `╭─[ syntax.test.ts:3:19 ]`.
        let found = recorded(
            "vitest",
            "vitest/vitest-syntax.txt",
            Some("/tmp/s6/js-rec/vitest"),
        );
        assert_eq!(
            places(&found),
            [(
                "syntax.test.ts:3:19".to_string(),
                None,
                Some("test file failed to run")
            )]
        );
        assert_eq!(
            found.diagnostics[0].message,
            "[PARSE_ERROR] Expected `,` or `)` but found `;`"
        );
    }

    #[test]
    fn the_json_report_a_command_asks_for_is_expected_unless_it_goes_elsewhere() {
        let asked = |command: &str| {
            super::asked_report(&shlex::split(command).unwrap()).map(|(runner, _)| runner)
        };
        for (command, runner) in [
            ("npx jest --json", Some("jest")),
            ("npm test -- --json", Some("jest")),
            ("jest --ci --json 2>&1", Some("jest")),
            ("jest --json || true", Some("jest")),
            ("vitest run --reporter=json", Some("vitest")),
            ("vitest run --reporter json", Some("vitest")),
            ("jest", None),
            ("vitest run", None),
            ("jest --json --outputFile=report.json", None),
            ("vitest run --reporter=json --outputFile.json=r.json", None),
            ("jest --json --listTests", None),
            ("jest --json > report.json", None),
            ("jest --json>report.json", None),
            ("jest --json | tee report.json", None),
        ] {
            assert_eq!(asked(command), runner, "{command}");
        }
    }

    #[test]
    fn a_json_report_asked_for_that_is_empty_or_absent_fails_the_check() {
        use super::super::Grammar;
        // Made up, in the shapes a run gives: no output at all, a JSON
        // document that is no report, and the recorded report of a run.
        let report = std::fs::read_to_string(format!(
            "{}/fixtures/diagnostics/jest30/jest-json-pass.txt",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let json = report.lines().last().unwrap();
        for (document, missing) in [(None, true), (Some("{}"), true), (Some(json), false)] {
            let words = shlex::split("npx jest --json").unwrap();
            let mut grammar = super::JsTest::for_command(&words);
            let mut out = super::Out::default();
            if let Some(text) = document {
                let doc: serde_json::Value = serde_json::from_str(text).unwrap();
                grammar.document(&doc, &(0..1), &mut out);
            }
            grammar.finish(&mut out);
            let codes: Vec<_> = out.found.iter().map(|f| f.code.clone()).collect();
            let expected = if missing {
                vec![Some(super::REPORT_UNREADABLE.to_string())]
            } else {
                Vec::new()
            };
            assert_eq!(codes, expected, "{document:?}");
            assert_eq!(out.errors_fail, missing, "{document:?}");
        }
    }

    /// The first two frames are from the recorded vitest and jest outputs;
    /// the last two are made up, in V8's shapes.
    #[test]
    fn frames_name_their_function_when_they_have_one() {
        let frame = |line: &str| super::caps(&super::FRAME, line).map(|c| c["file"].to_string());
        assert_eq!(
            frame(" ❯ total src/math.js:6:16").as_deref(),
            Some("src/math.js")
        );
        assert_eq!(
            frame("    at Object.toBe (src/math.test.js:4:21)").as_deref(),
            Some("src/math.test.js")
        );
        assert_eq!(
            frame("    at async file:///app/sub dir/x.js:1:2").as_deref(),
            Some("/app/sub dir/x.js")
        );
        assert_eq!(
            frame("    at /app/sub dir/x.js:1:2").as_deref(),
            Some("/app/sub dir/x.js")
        );
        assert_eq!(
            frame("      at my dir/space.test.js:3:11").as_deref(),
            Some("my dir/space.test.js")
        );
    }
}
