//! rustc and cargo: `cargo build`/`check`/`clippy` in human output and
//! `--message-format=json`, and test panics from `cargo test` and
//! cargo-nextest in both layouts (before and after Rust 1.73).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{json_number, number, starts_trimmed, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::Severity;

/// Lines of a diagnostic's body (snippet, notes, help) kept in its message.
const MAX_BODY_LINES: usize = 40;

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<severity>error|warning)(?:\[(?P<code>[^\]]+)\])?: (?P<message>.+)$")
        .expect("the rustc header regex is valid")
});

static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*--> (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the rustc location regex is valid")
});

/// The lint a note names: `#[warn(unused_variables)]`, `-D clippy::x`.
static LINT_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\[(?:warn|deny|forbid)\((?P<lint>[a-z_]+(?:::[a-z_]+)?)\)\]|-D (?P<dlint>clippy::[a-z_]+)")
        .expect("the clippy lint regex is valid")
});

/// `thread 'name' panicked at src/lib.rs:10:5:` (Rust 1.73 and later; the
/// thread id in parentheses since 1.91).
static PANIC_NEW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*thread '(?P<test>[^']*)' (?:\(\d+\) )?panicked at (?P<file>.+?):(?P<line>\d+):(?P<col>\d+):$")
        .expect("the panic regex is valid")
});

/// `thread 'name' panicked at 'message', src/lib.rs:10:5` (before 1.73).
static PANIC_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*thread '(?P<test>[^']*)' panicked at '(?P<message>.*)', (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the old panic regex is valid")
});

/// rustc and cargo summary lines that repeat what the diagnostics say.
fn is_noise(message: &str) -> bool {
    message.starts_with("aborting due to")
        || message.starts_with("could not compile")
        || message.starts_with("build failed")
        || message.contains("warnings emitted")
        || message.contains("warning emitted")
        || (message.contains(" generated ") && message.contains(" warning"))
        || message.starts_with("test failed, to rerun")
        || message == "test run failed"
        || message.starts_with("1 target failed")
        || message.ends_with("targets failed:")
}

/// What is being read.
#[derive(Debug, Default)]
enum Open {
    #[default]
    Nothing,
    /// A compiler diagnostic: its header came, its body follows.
    Diagnostic(Found, usize),
    /// A test panic (new layout): its message lines follow.
    Panic(Found, usize),
    /// `cargo fmt --check`'s hunk: placed at its first changed line, past
    /// the context lines it starts with.
    Format(Found, u32),
}

/// `cargo fmt --check` (rustfmt): `Diff in /abs/src/lib.rs:5:`, then the
/// hunk, which starts with up to three lines of context.
static FORMAT_DIFF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Diff in (?P<file>.+):(?P<line>\d+):$").expect("the rustfmt diff regex is valid")
});

/// A `cargo fmt --check` hunk's header, as a finding at the hunk's first
/// line (moved past its context as the hunk is read).
fn format_hunk(line: &str, at: &Range<u64>) -> Option<Found> {
    let c = super::caps(&FORMAT_DIFF, line)?;
    Some(
        Found::new(
            "rustfmt",
            Severity::Error,
            "not formatted as rustfmt formats it (`cargo fmt` does)",
        )
        .at(&c["file"], number(&c["line"]), None)
        .code(Some("rustfmt".to_string()))
        .origin(Origin::Lint)
        .range(at),
    )
}

#[derive(Debug, Default)]
pub struct Cargo {
    open: Open,
}

impl Cargo {
    fn close(&mut self, out: &mut Out) {
        match std::mem::take(&mut self.open) {
            Open::Nothing => {}
            Open::Diagnostic(found, _) | Open::Panic(found, _) | Open::Format(found, _) => {
                out.push(found);
            }
        }
    }
}

impl Grammar for Cargo {
    fn name(&self) -> &'static str {
        "cargo"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"ewtD",
            indented: b"ewt",
            anywhere: b"",
        })
    }

    fn busy(&self) -> bool {
        !matches!(self.open, Open::Nothing)
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy()
            || starts_trimmed(line, b"error")
            || starts_trimmed(line, b"warning")
            || starts_trimmed(line, b"thread '")
            || line.starts_with(b"Diff in ")
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        let trimmed = line.trim();
        match &mut self.open {
            Open::Diagnostic(found, body) => {
                if let Some(c) = super::caps(&LOCATION, line) {
                    if found.file.is_none() {
                        *found = std::mem::take(found).at(
                            &c["file"],
                            number(&c["line"]),
                            number(&c["col"]),
                        );
                        found.range.end = at.end;
                        return;
                    }
                }
                let next = HEADER.is_match(line) || PANIC_NEW.is_match(line);
                if !trimmed.is_empty() && !next {
                    if let Some(c) = super::caps(&LINT_NAME, line) {
                        if found.code.is_none() {
                            found.code = c
                                .name("lint")
                                .or_else(|| c.name("dlint"))
                                .map(|m| m.as_str().to_string());
                        }
                    }
                    if *body < MAX_BODY_LINES {
                        found.message.push('\n');
                        found.message.push_str(line);
                        *body += 1;
                    }
                    found.range.end = at.end;
                    return;
                }
                self.close(out);
                if !next {
                    return;
                }
            }
            Open::Panic(found, body) => {
                let ends = trimmed.is_empty()
                    || trimmed.starts_with("note: run with `RUST_BACKTRACE")
                    || trimmed.starts_with("stack backtrace:")
                    || PANIC_NEW.is_match(line);
                if !ends {
                    if *body == 0 {
                        found.message = trimmed.to_string();
                    } else if *body < MAX_BODY_LINES {
                        found.message.push('\n');
                        found.message.push_str(trimmed);
                    }
                    *body += 1;
                    found.range.end = at.end;
                    return;
                }
                self.close(out);
                if !PANIC_NEW.is_match(line) {
                    return;
                }
            }
            Open::Format(found, context) => {
                if line.starts_with(' ') || line.is_empty() {
                    *context += 1;
                    found.range.end = at.end;
                    return;
                }
                if line.starts_with(['-', '+']) {
                    found.line = found.line.map(|l| l + *context);
                }
                self.close(out);
            }
            Open::Nothing => {}
        }

        if let Some(found) = format_hunk(line, at) {
            self.open = Open::Format(found, 0);
            return;
        }
        if let Some(c) = super::caps(&HEADER, line) {
            let message = &c["message"];
            if !is_noise(message) {
                let found = Found::new("human", Severity::from_word(&c["severity"]), message)
                    .code(c.name("code").map(|m| m.as_str().to_string()))
                    .range(at);
                self.open = Open::Diagnostic(found, 0);
            }
        } else if let Some(c) = super::caps(&PANIC_NEW, line) {
            let found = Found::new(
                "panic",
                Severity::Error,
                format!("test `{}` panicked", &c["test"]),
            )
            .at(&c["file"], number(&c["line"]), number(&c["col"]))
            .test(Some(c["test"].to_string()))
            .origin(Origin::Test)
            .range(at);
            self.open = Open::Panic(found, 0);
        } else if let Some(c) = super::caps(&PANIC_OLD, line) {
            out.push(
                Found::new("panic-old", Severity::Error, &c["message"])
                    .at(&c["file"], number(&c["line"]), number(&c["col"]))
                    .test(Some(c["test"].to_string()))
                    .origin(Origin::Test)
                    .range(at),
            );
        }
    }

    fn wants_document(&self, text: &str) -> bool {
        text.contains("\"compiler-message\"")
    }

    /// `cargo --message-format=json`: one `compiler-message` per line.
    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        if doc["reason"] != "compiler-message" {
            return;
        }
        let message = &doc["message"];
        let text = message["message"].as_str().unwrap_or("");
        let level = message["level"].as_str().unwrap_or("error");
        if level == "failure-note" || is_noise(text) {
            return;
        }
        let mut whole = text.to_string();
        for child in message["children"].as_array().into_iter().flatten() {
            let child_text = child["message"].as_str().unwrap_or("");
            whole.push_str(&format!(
                "\n{}: {child_text}",
                child["level"].as_str().unwrap_or("note")
            ));
            let replacement = child["spans"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|s| s["suggested_replacement"].as_str());
            if let Some(replacement) = replacement {
                whole.push_str(&format!(": `{replacement}`"));
            }
        }
        let spans = message["spans"].as_array();
        let primary = spans.and_then(|s| {
            s.iter()
                .find(|span| span["is_primary"] == true)
                .or_else(|| s.first())
        });
        let mut found = Found::new("json", Severity::from_word(level), whole)
            .code(message["code"]["code"].as_str().map(str::to_string))
            .range(at);
        if let Some(span) = primary {
            if let Some(file) = span["file_name"].as_str() {
                found = found
                    .at(
                        file,
                        json_number(&span["line_start"]),
                        json_number(&span["column_start"]),
                    )
                    .ends(
                        json_number(&span["line_end"]),
                        json_number(&span["column_end"]),
                    );
            }
        }
        out.push(found);
    }

    fn finish(&mut self, out: &mut Out) {
        self.close(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rustc starts a diagnostic at the start of a line; an indented
    /// `error:` is some other tool's (a key of node's TAP YAML).
    #[test]
    fn only_a_header_at_the_start_of_a_line_opens_a_diagnostic() {
        let mut cargo = Cargo::default();
        let mut out = Out::default();
        for line in [
            "  error: |-",
            "    Expected values to be strictly equal:",
            "",
        ] {
            cargo.line(line, &(0..1), &mut out);
        }
        cargo.finish(&mut out);
        assert!(out.found.is_empty(), "{:?}", out.found);
        cargo.line("error[E0308]: mismatched types", &(0..1), &mut out);
        cargo.finish(&mut out);
        assert_eq!(out.found.len(), 1);
    }

    /// Before Rust 1.73 the message came first, on the panic line itself:
    /// `thread 'name' panicked at 'message', file:line:col` (the layout
    /// this machine's toolchain no longer prints, so written here from
    /// the format, not recorded).
    #[test]
    fn the_old_panic_layout_is_read_too() {
        let mut cargo = Cargo::default();
        let mut out = Out::default();
        let at = 0..10;
        for line in [
            "---- tests::adds stdout ----",
            "thread 'tests::adds' panicked at 'assertion failed: `(left == right)`', src/lib.rs:15:9",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        ] {
            if cargo.wants(line.as_bytes()) {
                cargo.line(line, &at, &mut out);
            }
        }
        cargo.finish(&mut out);
        assert_eq!(out.found.len(), 1);
        let found = &out.found[0];
        assert_eq!(found.dialect, "panic-old");
        assert_eq!(
            (found.file.as_deref(), found.line, found.column),
            (Some("src/lib.rs"), Some(15), Some(9))
        );
        assert_eq!(found.test.as_deref(), Some("tests::adds"));
        assert_eq!(found.message, "assertion failed: `(left == right)`");
    }
}
