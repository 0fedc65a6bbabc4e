//! One grammar per tool family, and the registry that picks one: by the
//! name given in `parser = "..."`, by the check's program and subcommand,
//! or (when neither says) by the output itself.
//!
//! A grammar reads text lines and whole JSON documents and pushes `Found`
//! values; it never touches the disk or the diagnostics' final shape (paths,
//! columns, caps and duplicates are the extractor's business).

mod biome;
mod black;
mod cargo;
mod eslint;
mod gcc;
mod generic;
mod go;
mod gofmt;
mod jstest;
mod mocha;
mod nodetest;
mod prettier;
mod pyright;
mod pytest;
mod python;
mod ruff_reports;
mod shellcheck;
mod tsc;

use std::ops::Range;

use regex::Regex;

use crate::config::Origin;

use super::{ColumnUnit, Severity};

pub use generic::Custom;

/// One finding as a grammar read it: positions as the tool printed them
/// (1-based; a grammar for a 0-based tool adds the 1 itself), paths as
/// printed.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub dialect: &'static str,
    /// The tool, when the grammar knows it better than the program name
    /// (`ruff` under `python -m`, `golangci-lint` under `make lint`).
    pub tool: Option<&'static str>,
    pub origin: Option<Origin>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub unit: ColumnUnit,
    /// `file` is relative to this Go package's directory, which the
    /// extractor finds through `go.mod`.
    pub package: Option<String>,
    /// `file` is a base name the tool printed without its directory, and
    /// no `package` says which (go's `sub.go: parsing //go:build line:
    /// ...`): the extractor looks for the one file of that name in the
    /// check's Go module that holds the anchor's first word.
    pub base_name: bool,
    /// Where a Go file imports the package `file` is in, when the tool
    /// named only that place (go's `app/app.go:6:2: sub.go: parsing
    /// //go:build line: ...`): the extractor reads the import path there.
    pub import_site: Option<ImportSite>,
    /// The entry of `file`, a `go.mod` (or `vendor/modules.txt`), the
    /// finding is about when go named no line of it: the extractor places
    /// it at that entry's line.
    pub go_mod: Option<GoModEntry>,
    /// The message, given the import path of the import spec at the
    /// finding's own place, when the tool named that place and not the
    /// import (go's `app/app.go:6:2: module lookup disabled by
    /// GOPROXY=off`): the extractor reads the path there, and the message
    /// stays as it is when it cannot.
    pub import_message: Option<fn(&str) -> String>,
    pub severity: Severity,
    pub code: Option<String>,
    /// The failed test, for test runners.
    pub test: Option<String>,
    pub message: String,
    pub range: Range<u64>,
    /// What places the finding in `file` when the tool named no line.
    pub anchor: Option<Anchor>,
    /// How the tool's column becomes a character's, given its line's
    /// text, when no one unit says it (`None`: the column is not known
    /// there); `unit` is then what the column counts when the line cannot
    /// be read.
    pub recount: Option<Recount>,
}

/// A place in a Go file, as the tool printed it, where an import spec
/// starts.
#[derive(Debug, Clone, Default)]
pub struct ImportSite {
    pub file: String,
    pub line: u32,
    /// In bytes, 1-based.
    pub column: u32,
}

/// An entry of a `go.mod`: a directive (`go`, `require`, `replace`) and
/// the module path it names, when it names one (`require
/// example.com/dep v1.0.0`, alone or in a `require (` block); `#` and a
/// module path for that module's line of `vendor/modules.txt`.
#[derive(Debug, Clone, Default)]
pub struct GoModEntry {
    pub directive: &'static str,
    pub module: Option<String>,
}

/// A column's recount from its line's text, for a tool whose column no
/// one unit describes.
pub type Recount = fn(&str, u32) -> Option<u32>;

/// Where in its file a finding is when the tool named the file and no
/// line: the first line holding one of `words`, which the extractor finds
/// by reading the file (a grammar never touches the disk). A test runner
/// that names a timed-out test's file but no line is read at the test's
/// declaration, and pytest's bad option at the `addopts` that passes it.
#[derive(Debug, Clone, Default)]
pub struct Anchor {
    /// The words looked for, each whole: not inside a longer word (`--no`
    /// is not found in `--no-such-flag`).
    pub words: Vec<String>,
    /// The key whose value holds the words (`addopts`): the search starts
    /// at the line that sets it and ends with its value (the lines after
    /// it that are indented or continue a list), so a word elsewhere in
    /// the file is not taken for it. `None`: the whole file.
    pub key: Option<&'static str>,
    /// Words of the line the search starts at (a mocha hook's suite, whose
    /// title is quoted where it is declared): the words are looked for
    /// from there on, so another suite's hook of the same kind above it is
    /// not taken for it. Empty, or none of them found: the whole file.
    pub after: Vec<String>,
    /// The finding's message once a word is found: it can then say what
    /// to fix in that file.
    pub message: Option<String>,
    /// The file holds the cause only if it holds a word: else the finding
    /// is not placed in it (pytest names its configuration file whatever
    /// option was wrong, one of the check's command among them).
    pub required: bool,
    /// The words are alternatives, the best first: the first of them
    /// found anywhere in the file places the finding, even below a later
    /// one's line.
    pub ranked: bool,
}

impl Found {
    pub fn new(dialect: &'static str, severity: Severity, message: impl Into<String>) -> Found {
        Found {
            dialect,
            severity,
            message: message.into(),
            ..Found::default()
        }
    }

    pub fn at(mut self, file: &str, line: Option<u32>, column: Option<u32>) -> Found {
        self.file = Some(file.to_string());
        self.line = line;
        self.column = column;
        self
    }

    pub fn ends(mut self, line: Option<u32>, column: Option<u32>) -> Found {
        self.end_line = line;
        self.end_column = column;
        self
    }

    pub fn code(mut self, code: Option<String>) -> Found {
        self.code = code.filter(|c| !c.is_empty());
        self
    }

    pub fn unit(mut self, unit: ColumnUnit) -> Found {
        self.unit = unit;
        self
    }

    pub fn test(mut self, test: Option<String>) -> Found {
        self.test = test.filter(|t| !t.is_empty());
        self
    }

    pub fn tool(mut self, tool: &'static str) -> Found {
        self.tool = Some(tool);
        self
    }

    pub fn origin(mut self, origin: Origin) -> Found {
        self.origin = Some(origin);
        self
    }

    pub fn range(mut self, range: &Range<u64>) -> Found {
        self.range = range.clone();
        self
    }

    pub fn anchor(mut self, anchor: Anchor) -> Found {
        self.anchor = Some(anchor);
        self
    }

    pub fn recount(mut self, recount: Recount) -> Found {
        self.recount = Some(recount);
        self
    }
}

/// The anchor of a test a runner names by its titles and its file only
/// (no frame of the test's own places it: a timeout, a thrown value that
/// is no `Error`): its declaration, the line that holds its own title
/// quoted (`it('adds', ...)`). The runner joins the titles with ` > `
/// (jest with ` › `), which a title may hold itself (`it('a > b')` in
/// `describe('parse')` is `parse > a > b`), so each ending of the joined
/// titles is a candidate, the longest first: `parse > a > b`, `a > b`,
/// then `b`, which is the test's own title only when no longer one is
/// declared in the file.
pub fn declared(test: &str) -> Anchor {
    let mut words = quoted(test);
    for (i, joiner) in test
        .match_indices(" > ")
        .chain(test.match_indices(" › "))
        .collect::<std::collections::BTreeMap<_, _>>()
    {
        for word in quoted(&test[i + joiner.len()..]) {
            if !words.contains(&word) {
                words.push(word);
            }
        }
    }
    Anchor {
        words,
        ranked: true,
        ..Anchor::default()
    }
}

/// `title` as JavaScript source quotes it, in each of its quotes: as
/// printed, and with the backslashes and that quote escaped, as they must
/// be in the source when the title holds them (`it('says \'hi\' \\ ok')`
/// runs the test titled `says 'hi' \ ok`).
pub fn quoted(title: &str) -> Vec<String> {
    let mut words = Vec::new();
    for q in ['\'', '"', '`'] {
        let escaped = title.replace('\\', "\\\\").replace(q, &format!("\\{q}"));
        for text in [title.to_string(), escaped] {
            let word = format!("{q}{text}{q}");
            if !words.contains(&word) {
                words.push(word);
            }
        }
    }
    words
}

/// Where a grammar puts what it found.
#[derive(Debug, Default)]
pub struct Out {
    pub found: Vec<Found>,
    /// The tool's version, when the output names it.
    pub version: Option<String>,
    /// The output is a format whose tool exits 0 while reporting errors
    /// (`go vet -json`): its errors fail the check.
    pub errors_fail: bool,
}

impl Out {
    pub fn push(&mut self, found: Found) {
        self.found.push(found);
    }
}

/// A tool family's reader.
pub trait Grammar: std::fmt::Debug + Send {
    /// The parser's name, as `parser = "..."` gives it.
    fn name(&self) -> &'static str;

    /// A cheap look at a raw line: never says no to a line `line` would use.
    /// Most output is noise, and this spares it decoding and regexes.
    fn wants(&self, _line: &[u8]) -> bool {
        true
    }

    /// The bytes without which `wants` says no while the grammar is not
    /// `busy`; `None` (the default): any line may matter.
    fn triggers(&self) -> Option<Triggers> {
        None
    }

    /// In the middle of a block, where `wants` may take any line whatever
    /// its `triggers`.
    fn busy(&self) -> bool {
        false
    }

    /// One line of text output, ANSI codes removed, without its terminator.
    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out);

    /// A cheap look at a JSON document's text before it is parsed: most
    /// JSON lines (`compiler-artifact`, a test's `run` event) say nothing.
    fn wants_document(&self, _text: &str) -> bool {
        true
    }

    /// One complete JSON document (or one JSON line) from the output.
    fn document(&mut self, _doc: &serde_json::Value, _at: &Range<u64>, _out: &mut Out) {}

    /// The output ended: anything held back is pushed now.
    fn finish(&mut self, _out: &mut Out) {}

    /// The output ended and this grammar's reading won: labels a finding
    /// pushed before the output told what printed it (gcc or clang, known
    /// only from the lines after a compiler-shaped one) with what it told.
    /// Nothing, by default.
    fn relabel(&self, _found: &mut Found) {}
}

/// What a line needs for a grammar that is not `busy` to want it: to be
/// empty, to start with a `first` byte, to be indented with an `indented`
/// byte first after the blanks, or to hold an `anywhere` byte.
#[derive(Debug, Clone, Copy, Default)]
pub struct Triggers {
    pub first: &'static [u8],
    pub indented: &'static [u8],
    pub anywhere: &'static [u8],
}

/// Several grammars' triggers as byte tables, one bit per grammar: one look
/// at a line says which of them can want it, where asking each would cost
/// a dozen searches a line (most of a long output's time), and a line one
/// grammar's trigger lets through is not offered to all the others.
#[derive(Debug, Clone)]
pub struct Gate {
    first: [u64; 256],
    indented: [u64; 256],
    anywhere: [u64; 256],
    /// The grammars with no triggers, and any past the 64th: they may want
    /// any line.
    always: u64,
}

impl Gate {
    /// The gate of grammars with these triggers, the nth grammar's bit
    /// `1 << n`.
    pub fn of(triggers: impl IntoIterator<Item = Option<Triggers>>) -> Gate {
        let mut gate = Gate {
            first: [0; 256],
            indented: [0; 256],
            anywhere: [0; 256],
            always: 0,
        };
        for (n, t) in triggers.into_iter().enumerate() {
            let (Some(t), Some(bit)) = (t, u32::try_from(n).ok().and_then(|n| 1u64.checked_shl(n)))
            else {
                gate.always = u64::MAX;
                continue;
            };
            for (table, bytes) in [
                (&mut gate.first, t.first),
                (&mut gate.indented, t.indented),
                (&mut gate.anywhere, t.anywhere),
            ] {
                for &b in bytes {
                    table[usize::from(b)] |= bit;
                }
            }
        }
        gate
    }

    /// The grammars that can want `line`, as bits (see `admitted`).
    pub fn admits(&self, line: &[u8]) -> u64 {
        let Some(&first) = line.first() else {
            return u64::MAX;
        };
        let mut mask = self.always | self.first[usize::from(first)];
        if first.is_ascii_whitespace() {
            if let Some(&b) = line.iter().find(|b| !b.is_ascii_whitespace()) {
                mask |= self.indented[usize::from(b)];
            }
        }
        for &b in line {
            mask |= self.anywhere[usize::from(b)];
        }
        mask
    }

    /// The bit `admits` sets for a line that may be a package manager's
    /// mark of a workspace package's run (it starts with `>`, or holds a
    /// `$`, see `workspace::may_mark`): the last grammar's bit, which a
    /// gate of fewer than 64 grammars leaves free, so the look costs
    /// nothing more than the triggers'.
    pub const MARK: u64 = 1 << 63;

    /// This gate, also setting `MARK` for the lines it is due.
    #[must_use]
    pub fn with_marks(mut self) -> Gate {
        self.first[usize::from(b'>')] |= Gate::MARK;
        self.anywhere[usize::from(b'$')] |= Gate::MARK;
        self
    }

    /// Whether the nth grammar is among those `mask` admits.
    pub fn admitted(mask: u64, n: usize) -> bool {
        u32::try_from(n)
            .ok()
            .and_then(|n| 1u64.checked_shl(n))
            .is_none_or(|bit| mask & bit != 0)
    }
}

/// Parser names accepted by `parser = "..."` besides a custom regex.
pub const PARSER_NAMES: &[&str] = &[
    "auto",
    "none",
    "generic",
    "cargo",
    "rustc",
    "clippy",
    "nextest",
    "gcc",
    "g++",
    "clang",
    "go",
    "golangci-lint",
    "tsc",
    "eslint",
    "jest",
    "vitest",
    "bun",
    "mocha",
    "node-test",
    "tap",
    "prettier",
    "black",
    "gofmt",
    "biome",
    "pytest",
    "unittest",
    "python",
    "ruff",
    "flake8",
    "pylint",
    "mypy",
    "pyright",
    "shellcheck",
];

/// The grammar a name in `PARSER_NAMES` stands for (`None` for `none`).
pub fn by_name(name: &str) -> Option<Box<dyn Grammar>> {
    Some(match name {
        "none" => return None,
        "cargo" | "rustc" | "clippy" | "nextest" => Box::new(cargo::Cargo::default()),
        "gcc" | "g++" => Box::new(gcc::Gcc::new(ColumnUnit::Display)),
        "clang" => Box::new(gcc::Gcc::new(ColumnUnit::Byte)),
        "go" | "golangci-lint" => Box::new(go::Go::default()),
        "tsc" => Box::new(tsc::Tsc::default()),
        "eslint" => Box::new(eslint::Eslint::default()),
        "jest" | "vitest" | "bun" => Box::new(jstest::JsTest::default()),
        "mocha" => Box::new(mocha::Mocha::default()),
        "node-test" | "tap" => Box::new(nodetest::NodeTest::default()),
        "prettier" => Box::new(prettier::Prettier),
        "black" => Box::new(black::Black::default()),
        "gofmt" => Box::new(gofmt::Gofmt),
        "biome" => Box::new(biome::Biome::default()),
        "pytest" | "unittest" => Box::new(pytest::Pytest::default()),
        "ruff" => Box::new(python::Python::for_linter(python::Linter::Ruff)),
        "flake8" => Box::new(python::Python::for_linter(python::Linter::Flake8)),
        "python" | "pylint" | "mypy" => Box::new(python::Python::default()),
        "pyright" => Box::new(pyright::Pyright::default()),
        "shellcheck" => Box::new(shellcheck::Shellcheck::default()),
        _ => Box::new(gcc::Gcc::generic()),
    })
}

/// The grammar a name in `PARSER_NAMES` stands for, for a check that runs
/// `argv`: the test runners' grammar expects the JSON report the command
/// asks for (`npm test -- --json` with `parser = "jest"`).
pub fn by_name_for(name: &str, argv: &[String]) -> Option<Box<dyn Grammar>> {
    match name {
        "jest" | "vitest" | "bun" => {
            Some(Box::new(jstest::JsTest::for_command(&command_words(argv))))
        }
        _ => by_name(name),
    }
}

/// A check's words as its program sees them: a shell's script (`sh -c
/// "cargo test"`) split into words, else the argv.
fn command_words(argv: &[String]) -> Vec<String> {
    if argv
        .first()
        .is_some_and(|p| matches!(base_name(p).as_str(), "sh" | "bash" | "zsh" | "dash"))
    {
        if let Some(script) = argv
            .iter()
            .position(|w| w == "-c")
            .and_then(|i| argv.get(i + 1))
        {
            return shlex::split(script).unwrap_or_default();
        }
    }
    argv.to_vec()
}

/// A program's file name without its directory (`/usr/bin/sh` → `sh`).
fn base_name(word: &str) -> String {
    std::path::Path::new(word)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Programs that only launch another one: the tool is the next word.
const LAUNCHERS: &[&str] = &[
    "npx", "bunx", "pnpx", "uvx", "pipx", "poetry", "pipenv", "uv", "env",
];

/// The tool a check's argv runs and the grammar `auto` gives it, or `None`
/// when the program says nothing and the output must tell.
pub fn for_argv(argv: &[String]) -> Option<(String, Box<dyn Grammar>)> {
    // `sh -c "cargo test"`: the script's first command.
    let words = command_words(argv);
    // Skip launchers and their `run`/`exec` verbs: `npx tsc`, `uv run pytest`.
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let b = base_name(word);
        if LAUNCHERS.contains(&b.as_str())
            || (i > 0 && matches!(b.as_str(), "run" | "exec" | "--"))
            || (i > 0
                && word.starts_with('-')
                && LAUNCHERS.contains(&base_name(&words[i - 1]).as_str()))
            || word.contains('=') && i == 0
        {
            i += 1;
            continue;
        }
        break;
    }
    let program = base_name(words.get(i)?);
    let rest = &words[i + 1..];
    let sub = rest
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(String::as_str);
    // `python -m pytest`: the module is the tool.
    let program = if program.starts_with("python") {
        match rest
            .iter()
            .position(|w| w == "-m")
            .and_then(|i| rest.get(i + 1))
        {
            Some(module) => module.clone(),
            None => return None,
        }
    } else {
        program
    };
    let grammar: Box<dyn Grammar> = match program.as_str() {
        "cargo" | "rustc" | "cargo-clippy" | "clippy-driver" | "cargo-nextest" => {
            Box::new(cargo::Cargo::default())
        }
        "gcc" | "g++" | "cc" | "c++" => Box::new(gcc::Gcc::new(ColumnUnit::Display)),
        name if name.starts_with("gcc-") || name.starts_with("g++-") => {
            Box::new(gcc::Gcc::new(ColumnUnit::Display))
        }
        name if name.starts_with("clang") => Box::new(gcc::Gcc::new(ColumnUnit::Byte)),
        "go" | "golangci-lint" => Box::new(go::Go::default()),
        "tsc" | "vue-tsc" => Box::new(tsc::Tsc::default()),
        "eslint" => Box::new(eslint::Eslint::default()),
        "jest" | "vitest" => Box::new(jstest::JsTest::for_command(rest)),
        "bun" if sub == Some("test") => Box::new(jstest::JsTest::default()),
        "node" if rest.iter().any(|w| w == "--test") => Box::new(nodetest::NodeTest::default()),
        "tape" | "prove" => Box::new(nodetest::NodeTest::default()),
        "mocha" if reporter_is_tap(rest) => Box::new(nodetest::NodeTest::default()),
        "mocha" => Box::new(mocha::Mocha::default()),
        "prettier" => Box::new(prettier::Prettier),
        "black" => Box::new(black::Black::default()),
        "gofmt" if rest.iter().any(|w| w == "-l") => Box::new(gofmt::Gofmt),
        "biome" => Box::new(biome::Biome::default()),
        "pytest" | "py.test" | "unittest" => Box::new(pytest::Pytest::default()),
        "ruff" => Box::new(python::Python::for_linter(python::Linter::Ruff)),
        "flake8" => Box::new(python::Python::for_linter(python::Linter::Flake8)),
        "pylint" | "mypy" | "dmypy" => Box::new(python::Python::default()),
        "pyright" | "basedpyright" => Box::new(pyright::Pyright::default()),
        "shellcheck" => Box::new(shellcheck::Shellcheck::default()),
        _ => return None,
    };
    Some((program, grammar))
}

/// `--reporter tap`, `-R tap` or `--reporter=tap` among a command's words.
fn reporter_is_tap(words: &[String]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        w == "--reporter=tap"
            || (matches!(w.as_str(), "--reporter" | "-R")
                && words.get(i + 1).is_some_and(|next| next == "tap"))
    })
}

/// Every grammar, in the order that wins a tie when the output decides.
pub fn candidates() -> Vec<Box<dyn Grammar>> {
    vec![
        Box::new(cargo::Cargo::default()),
        Box::new(go::Go::default()),
        Box::new(tsc::Tsc::default()),
        Box::new(eslint::Eslint::default()),
        Box::new(jstest::JsTest::default()),
        Box::new(nodetest::NodeTest::default()),
        Box::new(mocha::Mocha::default()),
        Box::new(prettier::Prettier),
        Box::new(black::Black::default()),
        Box::new(biome::Biome::default()),
        Box::new(pytest::Pytest::default()),
        Box::new(python::Python::default()),
        Box::new(pyright::Pyright::default()),
        Box::new(shellcheck::Shellcheck::default()),
        // gcc's grammar reads every compiler-shaped line; not knowing the
        // compiler, it keeps the columns as printed unless the output shows
        // gcc's or clang's marks.
        Box::new(gcc::Gcc::told_by_output()),
    ]
}

/// `file:line[:col]: severity[code]: message`, the shape compilers share,
/// taken apart.
#[derive(Debug, Clone, Copy)]
pub struct CompilerLine<'a> {
    pub file: &'a str,
    pub line: &'a str,
    pub column: Option<&'a str>,
    /// `error`, `warning`, `note`, `info` (`fatal error` reads as `error`).
    pub severity: &'a str,
    pub code: Option<&'a str>,
    pub message: &'a str,
}

/// Reads a compiler-shaped line by hand: it is the shape most lines of
/// most tools are tried against, and a capturing regex costs ten times
/// more. The file starts with neither a space nor a `:`, and holds no `:`
/// followed by a blank (a message's own `error: `): it may hold other
/// colons (`notes/10:30.md`, `C:\src\a.c`), so each colon is tried as the
/// one that ends it, and a new error in such a file is not lost.
pub fn compiler_line_parts(text: &str) -> Option<CompilerLine<'_>> {
    let first = text.bytes().next()?;
    if first == b':' || first.is_ascii_whitespace() {
        return None;
    }
    for colon in memchr::memchr_iter(b':', text.as_bytes()) {
        if let Some(found) = compiler_line_at(text, colon) {
            return Some(found);
        }
        if text
            .as_bytes()
            .get(colon + 1)
            .is_none_or(u8::is_ascii_whitespace)
        {
            return None;
        }
    }
    None
}

/// `compiler_line_parts` with the file ending at the colon at `colon`.
fn compiler_line_at(text: &str, colon: usize) -> Option<CompilerLine<'_>> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let file = &text[..colon];
    let rest = &text[colon + 1..];
    let n = digits(rest);
    if n == 0 {
        return None;
    }
    let line = &rest[..n];
    let mut rest = rest[n..].strip_prefix(':')?;
    let mut column = None;
    let m = digits(rest);
    if m > 0 {
        if let Some(after) = rest[m..].strip_prefix(':') {
            column = Some(&rest[..m]);
            rest = after;
        }
    }
    let rest = rest.trim_start();
    let word = ["fatal error", "error", "warning", "note", "info"]
        .into_iter()
        .find(|w| rest.starts_with(w))?;
    let mut rest = &rest[word.len()..];
    let mut code = None;
    if let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']')?;
        code = Some(&inner[..close]);
        rest = &inner[close + 1..];
    }
    let message = rest.strip_prefix(':')?.trim_start();
    if message.is_empty() {
        return None;
    }
    Some(CompilerLine {
        file,
        line,
        column,
        severity: word.trim_start_matches("fatal "),
        code,
        message,
    })
}

/// Parses a number a tool printed; 0 and garbage are "unknown".
pub fn number(text: &str) -> Option<u32> {
    text.parse().ok().filter(|n| *n > 0)
}

/// The finding of a file a formatter would change, in one wording for
/// every formatter: what formats it, and the command that would.
pub fn unformatted(formatter: &str, fix: &str) -> String {
    format!("not formatted as {formatter} formats it (`{fix}` does)")
}

/// The number a regex group holds, when the group matched.
pub fn group_number(c: &regex::Captures<'_>, group: &str) -> Option<u32> {
    c.name(group).and_then(|m| number(m.as_str()))
}

/// A JSON number field; 0 and absence are "unknown".
pub fn json_number(value: &serde_json::Value) -> Option<u32> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// A 0-based JSON number made 1-based.
pub fn json_number0(value: &serde_json::Value) -> Option<u32> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .map(|n| n + 1)
}

/// Takes a trailing code out of a message: ` [-Wunused]`, ` [SC2086]`,
/// `  [assignment]`, ` (errcheck)`. Returns the message and the code.
pub fn split_trailer(message: &str, trailer: &Regex) -> (String, Option<String>) {
    // Every trailer closes a bracket; most messages end otherwise.
    if !message.ends_with([']', ')']) {
        return (message.to_string(), None);
    }
    match caps(trailer, message) {
        Some(c) => match (c.get(0), c.name("code")) {
            (Some(whole), Some(code)) => (
                message[..whole.start()].trim_end().to_string(),
                Some(code.as_str().to_string()),
            ),
            _ => (message.to_string(), None),
        },
        None => (message.to_string(), None),
    }
}

/// A byte line without the blanks it starts with.
pub fn trimmed(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    &line[start..]
}

/// Whether a byte line starts, after spaces, with `prefix`.
pub fn starts_trimmed(line: &[u8], prefix: &[u8]) -> bool {
    trimmed(line).starts_with(prefix)
}

/// Whether the line has `:` followed by a digit (`file:12`).
pub fn has_colon_digit(line: &[u8]) -> bool {
    memchr::memchr_iter(b':', line).any(|i| line.get(i + 1).is_some_and(u8::is_ascii_digit))
}

/// `regex.captures(line)`, after the lazy DFA said there is a match: most
/// lines match nothing, and finding that out costs a fraction of a
/// capturing search.
pub fn caps<'h>(regex: &Regex, line: &'h str) -> Option<regex::Captures<'h>> {
    if regex.is_match(line) {
        regex.captures(line)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picked(command: &str) -> Option<(String, &'static str)> {
        let argv = shlex::split(command).unwrap();
        for_argv(&argv).map(|(tool, grammar)| (tool, grammar.name()))
    }

    #[test]
    fn auto_goes_by_the_program_past_launchers_and_shells() {
        let cases = [
            ("cargo clippy --all-targets", Some(("cargo", "cargo"))),
            ("npx tsc --noEmit", Some(("tsc", "tsc"))),
            ("bunx tsc", Some(("tsc", "tsc"))),
            ("bun test", Some(("bun", "jest"))),
            ("npx vitest run", Some(("vitest", "jest"))),
            ("python3 -m pytest -q", Some(("pytest", "pytest"))),
            ("python -m unittest -v", Some(("unittest", "pytest"))),
            ("uv run mypy src", Some(("mypy", "python"))),
            ("pipenv run flake8", Some(("flake8", "python"))),
            (
                "sh -c 'cargo test 2>&1 | tee out'",
                Some(("cargo", "cargo")),
            ),
            ("/usr/bin/clang++-14 -c a.cpp", Some(("clang++-14", "gcc"))),
            ("golangci-lint run ./...", Some(("golangci-lint", "go"))),
            ("pyright", Some(("pyright", "pyright"))),
            // Nothing to go by: the output decides.
            ("make lint", None),
            ("npm test", None),
            ("bun run lint", None),
            ("python3 script.py", None),
        ];
        for (command, expected) in cases {
            let expected = expected.map(|(tool, name)| (tool.to_string(), name));
            assert_eq!(picked(command), expected, "{command}");
        }
    }

    #[test]
    fn compiler_lines_are_taken_apart_like_the_shape_says() {
        let c = compiler_line_parts("src/a.c:3:7: error[E1]: expected ';'").unwrap();
        assert_eq!(
            (c.file, c.line, c.column, c.severity, c.code, c.message),
            (
                "src/a.c",
                "3",
                Some("7"),
                "error",
                Some("E1"),
                "expected ';'"
            )
        );
        let c = compiler_line_parts("x.py:10: fatal error:  boom").unwrap();
        assert_eq!((c.column, c.severity, c.message), (None, "error", "boom"));
        for not in [
            " a.c:1: error: x",
            "a.c:x: error: y",
            "a.c:1: oops: y",
            "a.c:1: error:",
            ":1: error: x",
            // A colon and a blank end a message's word, never a file.
            "E   AssertionError: x.py:10: error: y",
            "note: a.c:1: error: x",
        ] {
            assert!(compiler_line_parts(not).is_none(), "{not}");
        }
    }

    #[test]
    fn a_file_name_may_hold_colons() {
        for (line, file, number) in [
            ("c:d.txt:2:1: error: new", "c:d.txt", "2"),
            ("notes/10:30.md:4: warning: w", "notes/10:30.md", "4"),
            ("a:1:b.c:3:5: error: e", "a:1:b.c", "3"),
        ] {
            let c = compiler_line_parts(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((c.file, c.line), (file, number), "{line}");
        }
    }
}
