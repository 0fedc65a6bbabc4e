//! mocha's default reporter (`spec`): the numbered failures it lists after
//! its "N failing" count, each with its suites' and its test's titles, the
//! error and its stack, and an exception that stopped the run before any
//! test ran (a test file that could not be loaded). A failure is located
//! at the first stack frame inside the project: the assertion, or the line
//! of the code under test that threw. (`--reporter tap` is TAP, which the
//! `tap` parser reads.)

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::nodetest::{folded, project_frame, spec_message_line, Place, MAX_MESSAGE_LINES};
use super::{caps, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::{ColumnUnit, Severity};

/// The count over the failures: `  3 failing`.
static FAILING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\d+ failing$").expect("the failing count regex is valid"));

/// A failure's first line: `  1) arithmetic` (its first title).
static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+\d+\) (?P<title>.+)$").expect("the mocha failure regex is valid")
});

/// mocha's word that it found no test file, and exits 1 on:
/// `Error: No test files found: "test"` (the spec it looked for), or
/// without the spec when its directory exists but holds none.
const NO_FILES: &str = "Error: No test files found";

/// How far mocha indents the titles of a failure after its first, plus
/// two spaces for each title before (`  1) suite`, `       test:`).
const TITLE_INDENT: usize = 5;

/// The test file mocha names at the end of a timeout's message: `Error:
/// Timeout of 2000ms exceeded. For async tests and hooks, ensure "done()"
/// is called; if returning a Promise, ensure it resolves.
/// (/p/test/slow.test.js)`.
static NAMED_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\((?P<file>[^()]+\.(?:[cm]?[jt]sx?|coffee))\)$")
        .expect("the mocha named file regex is valid")
});

/// The file a timeout's message names at its end, and the message
/// without it.
fn named_file(message: &str) -> Option<(String, String)> {
    let c = caps(&NAMED_FILE, message)?;
    let whole = c.get(0)?;
    let rest = message[..whole.start()].trim_end().to_string();
    Some((c["file"].to_string(), rest))
}

/// A hook's failure, titled as mocha titles it: `"before each" hook for
/// "adds"`, with the hook's own title when it was given one (`"after all"
/// hook: close the pool for "adds"`), or `in "{root}"` for a root hook
/// that ran for no test.
static HOOK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^"(?P<kind>before all|before each|after all|after each)" hook(?:: (?P<name>.+?))?(?: (?:for|in) "(?P<test>.*)")?$"#)
        .expect("the mocha hook title regex is valid")
});

/// The calls that declare a hook of each kind, in mocha's BDD interface
/// and its TDD one.
fn hook_calls(kind: &str) -> &'static [&'static str] {
    match kind {
        "before all" => &["before", "suiteSetup"],
        "before each" => &["beforeEach", "setup"],
        "after all" => &["after", "suiteTeardown"],
        _ => &["afterEach", "teardown"],
    }
}

/// Where a hook that failed with no frame of its own (a timeout) is
/// declared: its own title quoted when it has one, else the first call
/// of its kind in its suite (the title before the hook's).
fn hook_anchor(hook: &regex::Captures<'_>, path: &[String]) -> super::Anchor {
    let words = match hook.name("name") {
        Some(name) => super::quoted(name.as_str()),
        None => hook_calls(&hook["kind"])
            .iter()
            .map(|call| (*call).to_string())
            .collect(),
    };
    let after = match path.len().checked_sub(2).and_then(|i| path.get(i)) {
        Some(suite) => super::quoted(suite),
        None => Vec::new(),
    };
    super::Anchor {
        words,
        after,
        ..super::Anchor::default()
    }
}

/// The line mocha puts between an assertion's message and its diff.
const DIFF: &str = "+ expected - actual";

/// A failure being read.
#[derive(Debug, Default)]
struct Entry {
    /// The test's name once the titles end: its suites' titles and its
    /// own, joined by ` > ` as vitest joins them (mocha's spec reporter
    /// prints one title a line), so two tests of the same title in
    /// different suites are told apart.
    test: Option<String>,
    /// The titles read, the suites' first.
    path: Vec<String>,
    /// Titles read: the next one is indented `TITLE_INDENT` plus two for
    /// each of them.
    titles: usize,
    titles_done: bool,
    message: Vec<String>,
    frame: Option<Place>,
    /// Past the message: in the diff or the stack.
    message_done: bool,
    range: Range<u64>,
}

#[derive(Debug, Default)]
pub struct Mocha {
    /// Past the "N failing" count.
    failures: bool,
    entry: Option<Entry>,
}

impl Mocha {
    fn close(&mut self, out: &mut Out) {
        let Some(mut entry) = self.entry.take() else {
            return;
        };
        // Output that ended among the titles still names the test.
        if entry.test.is_none() && !entry.path.is_empty() {
            entry.test = Some(entry.path.join(" > "));
        }
        // A timeout's stack is mocha's timers alone; its message names the
        // test's file, absolute, which places the finding instead: the
        // message keeps no path of the machine it ran on.
        let named = entry
            .frame
            .is_none()
            .then(|| entry.message.first().and_then(|m| named_file(m)))
            .flatten();
        if let (Some((_, rest)), Some(first)) = (&named, entry.message.first_mut()) {
            first.clone_from(rest);
        }
        let mut message = folded(entry.message);
        if message.is_empty() {
            message = format!("test `{}` failed", entry.test.as_deref().unwrap_or("?"));
        }
        // A hook's failure is no test's: the message says which hook
        // failed and for which test it ran.
        let hook = entry.path.last().and_then(|t| caps(&HOOK, t));
        if let Some(title) = hook.as_ref().map(|h| h.get(0).map_or("", |m| m.as_str())) {
            message = format!("{title}: {message}");
        }
        let mut found = Found::new("spec", Severity::Error, message)
            .test(entry.test)
            .origin(Origin::Test)
            .unit(ColumnUnit::Utf16)
            .range(&entry.range);
        if let Some((file, line, column)) = entry.frame {
            found = found.at(&file, line, column);
        } else if let Some((file, _)) = named {
            // The test's title finds its line in the file.
            found = found.at(&file, None, None);
            if let Some(hook) = &hook {
                found = found.anchor(hook_anchor(hook, &entry.path));
            } else if let Some(test) = &found.test {
                let anchor = super::declared(test);
                found = found.anchor(anchor);
            }
        }
        out.push(found);
    }
}

impl Grammar for Mocha {
    fn name(&self) -> &'static str {
        "mocha"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            // `3 failing`, `1) title`, `Exception during run`; mocha's
            // `Error: No test files found` at the start of a line.
            first: b"E",
            indented: b"0123456789E",
            anywhere: b"",
        })
    }

    fn busy(&self) -> bool {
        self.entry.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        if self.busy() {
            return true;
        }
        let rest = super::trimmed(line);
        line.starts_with(NO_FILES.as_bytes())
            || rest.len() < line.len()
                && (rest.first().is_some_and(u8::is_ascii_digit)
                    || rest.starts_with(b"Exception during run"))
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        let trimmed = line.trim();
        if let Some(error) = trimmed.strip_prefix("Exception during run: ") {
            self.close(out);
            // Its first line says it (node's "Require stack:" follows).
            self.entry = Some(Entry {
                titles_done: true,
                message_done: true,
                message: vec![spec_message_line(error)],
                range: at.clone(),
                ..Entry::default()
            });
            return;
        }
        if let Some(rest) = trimmed.strip_prefix(NO_FILES) {
            self.close(out);
            let spec = rest.strip_prefix(": ").map(str::trim).unwrap_or_default();
            let looked = if spec.is_empty() {
                String::new()
            } else {
                format!(" (it looked for {spec})")
            };
            out.push(
                Found::new("spec", Severity::Error, format!("no test files were found: mocha found no test file to run{looked} and fails such a run (exit 1); put the tests in `test/` (mocha's default), or point the check's command (or `spec` in mocha's configuration, `.mocharc.*`) at them"))
                    .code(Some(crate::diagnostics::NO_TESTS_COLLECTED.to_string()))
                    .origin(Origin::Test)
                    .range(at),
            );
            return;
        }
        if FAILING.is_match(line) {
            self.close(out);
            self.failures = true;
            return;
        }
        if self.failures {
            if let Some(c) = caps(&ENTRY, line) {
                self.close(out);
                self.entry = Some(Entry {
                    path: vec![c["title"].to_string()],
                    titles: 1,
                    range: at.clone(),
                    ..Entry::default()
                });
                return;
            }
        }
        let Some(entry) = &mut self.entry else {
            return;
        };
        entry.range.end = at.end;
        if !entry.titles_done {
            // Each title on its own line, one step further in; the last
            // ends with the `:` mocha adds, but a suite's title may end
            // with one of its own, so the indentation says where they end.
            let indent = line.len() - line.trim_start().len();
            if !trimmed.is_empty() && indent == TITLE_INDENT + 2 * entry.titles {
                entry.titles += 1;
                if entry.path.len() < MAX_MESSAGE_LINES {
                    entry.path.push(trimmed.to_string());
                }
                return;
            }
            entry.titles_done = true;
            if let Some(last) = entry.path.last_mut() {
                if let Some(title) = last.strip_suffix(':') {
                    *last = title.to_string();
                }
            }
            entry.test = Some(entry.path.join(" > "));
        }
        if trimmed.starts_with("at ") {
            entry.message_done = true;
            if entry.frame.is_none() {
                entry.frame = project_frame(line);
            }
        } else if trimmed == DIFF {
            entry.message_done = true;
        } else if !entry.message_done
            && !trimmed.is_empty()
            && entry.message.len() < MAX_MESSAGE_LINES
        {
            entry.message.push(if entry.message.is_empty() {
                spec_message_line(trimmed)
            } else {
                trimmed.to_string()
            });
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.close(out);
    }
}
