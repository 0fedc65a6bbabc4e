//! rustc and cargo: `cargo build`/`check`/`clippy` in human output and
//! `--message-format=json`, and test panics from `cargo test` and
//! cargo-nextest in both layouts (before and after Rust 1.73), failed doc
//! tests, and failed build scripts.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::Path;
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

/// Lines of a failed build script's standard error kept in its message:
/// the last ones, where a script says why it gave up.
const MAX_BUILD_SCRIPT_LINES: usize = 20;

/// The lint a note names: `#[warn(unused_variables)]` from the source or by
/// default, or a lint set on the command line, which rustc names with
/// hyphens: `` `-D clippy::needless-return` implied by `-D warnings` ``,
/// `` requested on the command line with `-W unused-variables` ``. Only the
/// lint itself is taken, never the group that implied it (`warnings`).
static LINT_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\[(?:warn|deny|forbid)\((?P<lint>[a-z0-9_]+(?:::[a-z0-9_]+)?)\)\]|`-[DWF] (?P<dlint>[a-z0-9_-]+(?:::[a-z0-9_-]+)?)`(?: implied by|$)")
        .expect("the clippy lint regex is valid")
});

/// A doc test's name as libtest prints it: the file, the item (none for a
/// crate's or module's own docs) and the line its code block starts on,
/// sometimes followed by the block's kind (`src/lib.rs - add (line 3)`,
/// `src/lib.rs - (line 1) - compile fail`).
static DOCTEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>\S.*?\.rs) - .*?\(line (?P<line>\d+)\)(?: - .+)?$")
        .expect("the doc test name regex is valid")
});

/// cargo's header for a failed build script, with the package's directory
/// when it is a path dependency or a member (`bscript v0.1.0 (/abs/dir)`);
/// a registry or git package names its source instead.
static BUILD_SCRIPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^failed to run custom build command for `[^`(]*?(?: \((?P<dir>[^`()]+)\))?`$")
        .expect("the build script header regex is valid")
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
        || message.starts_with("doctest failed, to rerun")
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
    /// A failed build script: cargo's `Caused by:` and the script's own
    /// output, indented, follow.
    BuildScript(BuildScript),
}

/// What a failed build script printed, as far as it is read.
#[derive(Debug)]
struct BuildScript {
    found: Found,
    /// Inside the script's `--- stderr` section (not its `--- stdout`).
    in_stderr: bool,
    /// The last meaningful lines of its standard error.
    tail: VecDeque<String>,
    /// Where the script panicked, when it did: a better place than
    /// `build.rs`.
    panic: Option<(String, Option<u32>, Option<u32>)>,
}

impl BuildScript {
    /// The header `failed to run custom build command for ...`, placed at
    /// the package's `build.rs` when cargo names its directory.
    fn new(mut found: Found, message: &str) -> BuildScript {
        let dir = super::caps(&BUILD_SCRIPT, message)
            .and_then(|c| c.name("dir").map(|m| m.as_str().to_string()))
            // A git dependency names its URL, not a directory.
            .filter(|dir| !dir.contains("://"));
        let mut found = match &dir {
            Some(dir) => {
                let file = Path::new(dir).join("build.rs");
                // The package's directory goes into the place (made
                // relative to the root), not the message: a message that
                // names where the checkout sits would give the same
                // failure another fingerprint on another machine.
                found.message = found.message.replacen(&format!(" ({dir})"), "", 1);
                found.at(&file.to_string_lossy(), None, None)
            }
            None => found,
        };
        found.dialect = "build-script";
        BuildScript {
            found,
            in_stderr: false,
            tail: VecDeque::new(),
            panic: None,
        }
    }

    /// Reads one more line; false when it is not the script's (the block
    /// ended and the line is someone else's).
    fn read(&mut self, line: &str, at: &Range<u64>) -> bool {
        let trimmed = line.trim();
        // cargo indents what follows `Caused by:` by two spaces, the
        // script's output included; its own notes start at the margin.
        let indented = line.starts_with("  ");
        if !indented && !trimmed.is_empty() && !line.starts_with("note: ") && line != "Caused by:" {
            return false;
        }
        self.found.range.end = at.end;
        if trimmed == "--- stderr" || trimmed == "--- stdout" {
            self.in_stderr = trimmed == "--- stderr";
        } else if self.in_stderr
            && !trimmed.is_empty()
            && !trimmed.starts_with("note: run with `RUST_BACKTRACE")
        {
            if let Some(c) = super::caps(&PANIC_NEW, line) {
                self.panic = Some((c["file"].to_string(), number(&c["line"]), number(&c["col"])));
            } else {
                if self.tail.len() == MAX_BUILD_SCRIPT_LINES {
                    self.tail.pop_front();
                }
                self.tail.push_back(trimmed.to_string());
            }
        }
        true
    }

    /// The finding: cargo's header and the script's last words, at the
    /// panic when it panicked.
    fn into_found(self) -> Found {
        let mut found = self.found;
        for line in self.tail {
            found.message.push('\n');
            found.message.push_str(&line);
        }
        match self.panic {
            Some((file, line, column)) => found.at(&file, line, column),
            None => found,
        }
    }
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
            super::unformatted("rustfmt", "cargo fmt"),
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
    /// The doc tests libtest reported failed (`test src/lib.rs - add (line
    /// 3) ... FAILED`), each with whether a panic already placed it.
    doctests: Vec<(String, bool)>,
    /// The doc test whose output is being read (`---- NAME stdout ----`):
    /// its panic names rustdoc's temporary file and the thread `main`.
    doctest: Option<String>,
}

impl Cargo {
    fn close(&mut self, out: &mut Out) {
        match std::mem::take(&mut self.open) {
            Open::Nothing => {}
            Open::Diagnostic(found, _) | Open::Panic(found, _) | Open::Format(found, _) => {
                out.push(found);
            }
            Open::BuildScript(script) => out.push(script.into_found()),
        }
    }

    /// Reads libtest's lines that say which doc test failed and whose output
    /// follows; true when `line` was one.
    fn doctest_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        if let Some(name) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.strip_suffix(" ... FAILED"))
        {
            if DOCTEST.is_match(name) {
                self.doctests.push((name.to_string(), false));
            }
            return true;
        }
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|rest| rest.strip_suffix(" stdout ----"))
        {
            self.doctest = DOCTEST.is_match(name).then(|| name.to_string());
            return true;
        }
        if line.starts_with("test result: ") {
            self.doctest = None;
            // A doc test can fail without a panic (its `main` returned an
            // error, a `should_panic` block did not panic): it is still
            // a failure, placed at its code block.
            for (name, placed) in std::mem::take(&mut self.doctests) {
                if let (false, Some(mut found)) = (placed, doctest_found(&name, at)) {
                    found.message = format!("doc test `{name}` failed");
                    out.push(found);
                }
            }
            return true;
        }
        false
    }
}

/// A finding for the doc test `name`, at the line its code block starts on
/// in the file it names. rustdoc compiles the block elsewhere (edition 2024
/// merges every block into `/tmp/rustdoctestXXXX/doctest_bundle_2024.rs`)
/// and its panic lines there, or, before 2024, lines off by the wrapper it
/// adds, so the block's start is the one place that is always right.
fn doctest_found(name: &str, at: &Range<u64>) -> Option<Found> {
    let c = super::caps(&DOCTEST, name)?;
    Some(
        Found::new(
            "doctest",
            Severity::Error,
            format!("doc test `{name}` panicked"),
        )
        .at(&c["file"], number(&c["line"]), None)
        .test(Some(name.to_string()))
        .origin(Origin::Test)
        .range(at),
    )
}

impl Grammar for Cargo {
    fn name(&self) -> &'static str {
        "cargo"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"ewtD-",
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
            || line.starts_with(b"test ")
            || line.starts_with(b"---- ")
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
                            // Named as without `-D`, so that fingerprints and
                            // SARIF rule ids do not depend on how a lint was
                            // turned on.
                            found.code = c
                                .name("lint")
                                .map(|m| m.as_str().to_string())
                                .or_else(|| c.name("dlint").map(|m| m.as_str().replace('-', "_")));
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
            Open::BuildScript(script) => {
                if script.read(line, at) {
                    return;
                }
                self.close(out);
            }
            Open::Nothing => {}
        }

        if self.doctest_line(line, at, out) {
            return;
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
                self.open = if message.starts_with("failed to run custom build command for ") {
                    Open::BuildScript(BuildScript::new(found, message))
                } else {
                    Open::Diagnostic(found, 0)
                };
            }
        } else if let Some(c) = super::caps(&PANIC_NEW, line) {
            let doctest = self
                .doctest
                .as_deref()
                .and_then(|name| doctest_found(name, at));
            if let Some(found) = doctest {
                if let Some(entry) = self
                    .doctests
                    .iter_mut()
                    .find(|(name, _)| found.test.as_ref() == Some(name))
                {
                    entry.1 = true;
                }
                self.open = Open::Panic(found, 0);
                return;
            }
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

    /// Under `-D warnings` rustc names each lint as given on the command
    /// line, with hyphens; the code is the lint's own name, the one the
    /// plain run and `--message-format=json` give.
    #[test]
    fn a_lint_denied_on_the_command_line_keeps_its_whole_name() {
        let codes = |path: &str| {
            let found =
                crate::diagnostics::tests::recorded("cargo", path, Some("/tmp/s6/rs-rec/dlint"));
            found
                .diagnostics
                .iter()
                .map(|d| d.code.clone())
                .collect::<Vec<_>>()
        };
        let expected = [
            "unused_variables",
            "clippy::needless_return",
            "clippy::ptr_arg",
        ]
        .map(|c| Some(c.to_string()))
        .to_vec();
        assert_eq!(codes("cargo/clippy-deny.txt"), expected);
        assert_eq!(codes("cargo/clippy-warn.txt"), expected);
        assert_eq!(codes("cargo/clippy-deny.json"), expected);
    }

    /// A failed doc test is placed at its code block in the file libtest
    /// names, not in rustdoc's temporary file, and named as libtest names
    /// it, not after the thread `main`; cargo's `doctest failed` trailer is
    /// no finding of its own.
    #[test]
    fn a_failed_doc_test_is_placed_at_its_code_block() {
        for (path, dir) in [
            ("cargo/doctest-2024.txt", "/tmp/s6/rs-rec/doc24"),
            ("cargo/doctest-2021.txt", "/tmp/s6/rs-rec/doc21"),
        ] {
            let found = crate::diagnostics::tests::recorded("cargo", path, Some(dir));
            let places: Vec<_> = found
                .diagnostics
                .iter()
                .map(|d| (d.location(), d.test.as_deref()))
                .collect();
            assert_eq!(
                places,
                [(
                    "src/lib.rs:3".to_string(),
                    Some("src/lib.rs - add (line 3)")
                )],
                "{path}"
            );
        }
    }

    /// A doc test that fails without a panic is still a finding.
    #[test]
    fn a_doc_test_that_fails_without_a_panic_is_still_placed() {
        let mut cargo = Cargo::default();
        let mut out = Out::default();
        for line in [
            "test src/lib.rs - (line 1) ... FAILED",
            "",
            "---- src/lib.rs - (line 1) stdout ----",
            "Test executable failed (exit status: 1).",
            "",
            "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
            "error: doctest failed, to rerun pass `--doc`",
        ] {
            if cargo.wants(line.as_bytes()) {
                cargo.line(line, &(0..1), &mut out);
            }
        }
        cargo.finish(&mut out);
        let found: Vec<_> = out
            .found
            .iter()
            .map(|f| (f.file.as_deref(), f.line, f.test.as_deref()))
            .collect();
        assert_eq!(
            found,
            [(Some("src/lib.rs"), Some(1), Some("src/lib.rs - (line 1)"))]
        );
    }

    /// A failed build script's finding says what the script printed and
    /// points at `build.rs`, or where it panicked; it is no test.
    #[test]
    fn a_failed_build_script_says_why_at_its_build_rs() {
        let found = crate::diagnostics::tests::recorded(
            "cargo",
            "cargo/build-script.txt",
            Some("/tmp/s6/rs-rec/bscript"),
        );
        let [d] = found.diagnostics.as_slice() else {
            panic!("one finding: {:?}", found.diagnostics);
        };
        assert_eq!(d.location(), "build.rs");
        assert!(
            d.message
                .ends_with("\nerror: libfoo not found (set FOO_DIR)"),
            "{}",
            d.message
        );
        let found = crate::diagnostics::tests::recorded(
            "cargo",
            "cargo/build-script-panic.txt",
            Some("/tmp/s6/rs-rec/bpanic"),
        );
        let [d] = found.diagnostics.as_slice() else {
            panic!("one finding: {:?}", found.diagnostics);
        };
        assert_eq!(
            (d.location().as_str(), d.test.as_deref()),
            ("build.rs:3:40", None)
        );
        assert!(
            d.message.ends_with("\nFOO_DIR is set: NotPresent"),
            "{}",
            d.message
        );
    }
}
