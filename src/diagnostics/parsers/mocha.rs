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

/// The line mocha puts between an assertion's message and its diff.
const DIFF: &str = "+ expected - actual";

/// A failure being read.
#[derive(Debug, Default)]
struct Entry {
    /// The last title read: the test's, once the titles end (with `:`).
    test: Option<String>,
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
        let Some(entry) = self.entry.take() else {
            return;
        };
        let mut message = folded(entry.message);
        if message.is_empty() {
            message = format!("test `{}` failed", entry.test.as_deref().unwrap_or("?"));
        }
        let mut found = Found::new("spec", Severity::Error, message)
            .test(entry.test)
            .origin(Origin::Test)
            .unit(ColumnUnit::Utf16)
            .range(&entry.range);
        if let Some((file, line, column)) = entry.frame {
            found = found.at(&file, line, column);
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
            first: b"",
            // `3 failing`, `1) title`, `Exception during run`.
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
        rest.len() < line.len()
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
        if FAILING.is_match(line) {
            self.close(out);
            self.failures = true;
            return;
        }
        if self.failures {
            if let Some(c) = caps(&ENTRY, line) {
                self.close(out);
                let title = &c["title"];
                self.entry = Some(Entry {
                    test: Some(title.trim_end_matches(':').to_string()),
                    titles_done: title.ends_with(':'),
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
            if !trimmed.is_empty() {
                entry.test = Some(trimmed.trim_end_matches(':').to_string());
                entry.titles_done = trimmed.ends_with(':');
            }
            return;
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
