//! Streaming extraction: the runner feeds each output line as it arrives and
//! collects the diagnostics at the end, so memory stays bounded.

use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::config::{Origin, ParserChoice};

use super::{strip_ansi, Diagnostic, Severity};

/// At most this many diagnostics are kept per check; the rest are counted.
pub const MAX_DIAGNOSTICS_PER_CHECK: usize = 1000;

/// Parser names accepted by `parser = "..."` besides a custom regex.
pub const PARSER_NAMES: &[&str] = &[
    "auto",
    "none",
    "generic",
    "cargo",
    "python",
    "node",
    "shellcheck",
    "go",
];

/// The most of a JSON report (ESLint's `-f json`) kept to parse at the end.
const MAX_JSON_BYTES: usize = 16 * 1024 * 1024;

/// Which line grammar an extractor applies.
#[derive(Debug)]
enum Grammar {
    /// Nothing is parsed; a failure shows its output tail.
    None,
    /// `file:line[:col]: severity: message`.
    Generic,
    /// rustc, cargo build/check/clippy and cargo test, human output.
    Cargo(Box<CargoState>),
    /// ruff (concise and full), flake8, pylint, mypy and pytest.
    Python(Box<PythonState>),
    /// tsc (plain and pretty) and ESLint (stylish and JSON).
    Node(Box<NodeState>),
    /// ShellCheck's default (tty) format; its gcc format is generic.
    Shellcheck(Box<Option<(String, u32)>>),
    /// go build, go vet and go test.
    Go(Box<GoState>),
    /// A user's regex with named groups.
    Custom(Regex),
}

/// What the Go grammar carries between lines.
#[derive(Debug, Default)]
struct GoState {
    /// Test failures whose files are relative to a package directory not
    /// named yet (`FAIL <package>` comes after them).
    pending: Vec<Diagnostic>,
    /// The failing test being read.
    test: Option<String>,
}

/// What the Node grammar carries between lines.
#[derive(Debug, Default)]
struct NodeState {
    /// The file an ESLint stylish block is about.
    file: Option<String>,
    /// ESLint's JSON report, gathered whole (it is one document).
    json: Option<String>,
}

/// What the Python grammar carries between lines.
#[derive(Debug, Default)]
struct PythonState {
    /// pytest's `E   ` lines of the failure being read.
    explanation: Vec<String>,
    /// A ruff (full format) header waiting for its `-->` line.
    pending: Option<(String, String)>,
}

/// A rustc diagnostic header waiting for its `-->` location line, or a
/// test panic waiting for its message line.
#[derive(Debug, Default)]
struct CargoState {
    pending: Option<Diagnostic>,
    panic_pending: Option<Diagnostic>,
}

/// Collects diagnostics from one check's output, line by line.
#[derive(Debug)]
pub struct Extractor {
    check: String,
    origin: Origin,
    tool: String,
    grammar: Grammar,
    root: PathBuf,
    cwd: PathBuf,
    found: Vec<Diagnostic>,
    dropped: usize,
}

static GENERIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?P<severity>fatal error|error|warning|note|info)(?:\[(?P<code>[^\]]+)\])?:\s*(?P<message>.+)$",
    )
    .expect("the generic diagnostic pattern is a valid regex")
});

/// The flag gcc and clang end a warning with (` [-Wint-conversion]`), or
/// ShellCheck's code in its gcc format (` [SC2086]`).
static GCC_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" \[(?P<code>-[Wf][A-Za-z0-9=_+-]+|SC\d+)\]$")
        .expect("the gcc flag pattern is a valid regex")
});

/// `calc/calc.go:6:17: undefined: missing` (go build, go vet).
static GO_POSITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:#][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<message>.+)$")
        .expect("the go pattern is a valid regex")
});

/// An indented `calc_test.go:7: message` inside a failing test's output.
static GO_TEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<file>[^\s:]+\.go):(?P<line>\d+): (?P<message>.+)$")
        .expect("the go test pattern is a valid regex")
});

/// `FAIL\texample.com/shop/calc\t0.002s` or `ok  \t...`.
static GO_PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:FAIL|ok)\s+(?P<package>\S+)\s")
        .expect("the go package pattern is a valid regex")
});

/// The linter golangci-lint names after an issue: ` (errcheck)`.
static GOLANGCI_LINTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" \((?P<code>[a-z][a-z0-9-]*)\)$")
        .expect("the golangci-lint pattern is a valid regex")
});

/// `In scripts/x.sh line 3:` opens a ShellCheck block.
static SHELLCHECK_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^In (?P<file>.+) line (?P<line>\d+):$")
        .expect("the shellcheck pattern is a valid regex")
});

/// `     ^-----^ SC2086 (info): message`: the caret gives the column.
static SHELLCHECK_NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<pad>\s*)\^[-~^]*\s+(?P<code>SC\d+) \((?P<severity>\w+)\): (?P<message>.+)$")
        .expect("the shellcheck note pattern is a valid regex")
});

/// `file:line[:col]: CODE message` (ruff concise, flake8) and
/// `file:line:col: CODE: message (symbol)` (pylint, 0-based columns).
static PY_LINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^:\s][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<code>[A-Z]+\d+)(?P<pylint>:)? (?:\[\*\] )?(?P<message>.+)$")
        .expect("the Python lint pattern is a valid regex")
});

/// ruff's full format: `F401 [*] message`, then ` --> file:line:col`.
static RUFF_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<code>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<message>.+)$")
        .expect("the ruff header pattern is a valid regex")
});

/// pytest's crash site: `tests/test_x.py:10: AssertionError`.
static PYTEST_SITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*\.py):(?P<line>\d+): (?P<error>[A-Za-z_][\w.]*)$")
        .expect("the pytest pattern is a valid regex")
});

/// mypy's trailing error code: `  [assignment]`.
static MYPY_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\s{2}\[(?P<code>[a-z][a-z0-9-]*)\]$")
        .expect("the mypy code pattern is a valid regex")
});

/// `src/a.ts(5,7): error TS2322: message` (tsc --pretty false).
static TSC_PLAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.+)$")
        .expect("the tsc pattern is a valid regex")
});

/// `src/a.ts:5:7 - error TS2322: message` (tsc --pretty, colours removed).
static TSC_PRETTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+) - (?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.+)$")
        .expect("the tsc pretty pattern is a valid regex")
});

/// An ESLint stylish row: `  1:5  error  message  rule-id`.
static ESLINT_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<severity>error|warning)\s+(?P<message>.+?)(?:\s{2,}(?P<rule>[@\w/-]+))?$")
        .expect("the eslint pattern is a valid regex")
});

static RUSTC_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<severity>error|warning)(?:\[(?P<code>[^\]]+)\])?: (?P<message>.+)$")
        .expect("the rustc header pattern is a valid regex")
});

static RUSTC_LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*--> (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the rustc location pattern is a valid regex")
});

static CLIPPY_LINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\[(?:warn|deny)\((?P<lint>clippy::[a-z_]+)\)\]|-D (?P<dlint>clippy::[a-z_]+)")
        .expect("the clippy lint pattern is a valid regex")
});

/// `thread 'name' panicked at src/lib.rs:10:5:` (Rust 1.73 and later).
static PANIC_NEW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*thread '(?P<test>[^']*)' (?:\(\d+\) )?panicked at (?P<file>.+?):(?P<line>\d+):(?P<col>\d+):$")
        .expect("the panic pattern is a valid regex")
});

/// `thread 'name' panicked at 'message', src/lib.rs:10:5` (before 1.73).
static PANIC_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*thread '(?P<test>[^']*)' panicked at '(?P<message>.*)', (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the old panic pattern is a valid regex")
});

/// rustc summary lines that repeat what the diagnostics already say.
fn is_rustc_noise(message: &str) -> bool {
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

impl Extractor {
    /// `program` is the check's `argv[0]`, used by `parser = "auto"`.
    pub fn new(
        check: &str,
        origin: Origin,
        parser: &ParserChoice,
        program: &str,
        root: &Path,
        cwd: &Path,
    ) -> Extractor {
        let base = Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (grammar, tool) = match parser {
            ParserChoice::Regex(regex) => (Grammar::Custom(regex.clone()), base),
            ParserChoice::Named(name) => match name.as_str() {
                "none" => (Grammar::None, base),
                "cargo" => (Grammar::Cargo(Box::default()), "cargo".to_string()),
                "python" => (Grammar::Python(Box::default()), base),
                "node" => (Grammar::Node(Box::default()), base),
                "shellcheck" => (Grammar::Shellcheck(Box::default()), base),
                "go" => (Grammar::Go(Box::default()), base),
                _ => (Grammar::Generic, base),
            },
            ParserChoice::Auto => match base.as_str() {
                "cargo" | "rustc" | "cargo-clippy" | "clippy-driver" => {
                    (Grammar::Cargo(Box::default()), base)
                }
                "ruff" | "flake8" | "pylint" | "mypy" | "pytest" | "py.test" | "python"
                | "python3" => (Grammar::Python(Box::default()), base),
                "tsc" | "eslint" | "vue-tsc" => (Grammar::Node(Box::default()), base),
                "shellcheck" => (Grammar::Shellcheck(Box::default()), base),
                "go" | "golangci-lint" => (Grammar::Go(Box::default()), base),
                "" => (Grammar::Generic, "generic".to_string()),
                _ => (Grammar::Generic, base),
            },
        };
        Extractor {
            check: check.to_string(),
            origin,
            tool,
            grammar,
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
            found: Vec::new(),
            dropped: 0,
        }
    }

    /// Whether `line` could matter to the parser: a cheap look at the bytes
    /// that spares the great majority of a long output any decoding and
    /// regex work. Never says no to a line the parser would use.
    ///
    /// `maybe_coloured` is false when the caller knows the line holds no
    /// escape character (it looked at the whole chunk at once).
    pub fn wants(&self, line: &[u8], maybe_coloured: bool) -> bool {
        if matches!(self.grammar, Grammar::None) {
            return false;
        }
        if maybe_coloured && memchr::memchr(0x1b, line).is_some() {
            // Coloured output: only the real parse can tell.
            return !matches!(self.grammar, Grammar::None);
        }
        match &self.grammar {
            Grammar::None => false,
            Grammar::Custom(_)
            | Grammar::Python(_)
            | Grammar::Node(_)
            | Grammar::Shellcheck(_)
            | Grammar::Go(_) => true,
            Grammar::Generic => memchr::memchr_iter(b':', line)
                .any(|i| line.get(i + 1).is_some_and(u8::is_ascii_digit)),
            Grammar::Cargo(state) => {
                if state.panic_pending.is_some() {
                    return true;
                }
                let start = line
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .unwrap_or(line.len());
                let trimmed = &line[start..];
                trimmed.starts_with(b"error")
                    || trimmed.starts_with(b"{\"reason\":\"compiler-message\"")
                    || trimmed.starts_with(b"warning")
                    || trimmed.starts_with(b"thread '")
                    || trimmed.starts_with(b"-->")
                    || (state.pending.is_some() && trimmed.starts_with(b"= note"))
            }
        }
    }

    /// Feeds one line of output, without its line terminator.
    pub fn line(&mut self, line: &str) {
        let stripped;
        let line = if line.contains('\u{1b}') {
            stripped = strip_ansi(line);
            stripped.as_str()
        } else {
            line
        };
        let line = line.trim_end();
        let mut emitted: Vec<Diagnostic> = Vec::new();
        match &mut self.grammar {
            Grammar::None => {}
            Grammar::Generic => {
                if let Some(c) = GENERIC.captures(line) {
                    let severity = Severity::from_word(c["severity"].trim_start_matches("fatal "));
                    // gcc and clang name the warning flag last: `[-Wunused-variable]`.
                    emitted.push(self.positioned(&c, severity, Some(&GCC_FLAG)));
                }
            }
            Grammar::Custom(regex) => {
                if let Some(c) = regex.captures(line) {
                    let message = c
                        .name("message")
                        .map_or_else(|| line.to_string(), |m| m.as_str().to_string());
                    let severity = c
                        .name("severity")
                        .map_or(Severity::Error, |m| Severity::from_word(m.as_str()));
                    emitted.push(self.make(
                        c.name("file").map(|m| m.as_str()),
                        c.name("line").and_then(|m| m.as_str().parse().ok()),
                        c.name("col").and_then(|m| m.as_str().parse().ok()),
                        severity,
                        c.name("code").map(|m| m.as_str().to_string()),
                        message,
                    ));
                }
            }
            Grammar::Cargo(_) => emitted = self.cargo_line(line),
            Grammar::Python(_) => emitted = self.python_line(line),
            Grammar::Node(_) => emitted = self.node_line(line),
            Grammar::Shellcheck(_) => emitted = self.shellcheck_line(line),
            Grammar::Go(_) => emitted = self.go_line(line),
        }
        for diagnostic in emitted {
            self.push(diagnostic);
        }
    }

    fn go_line(&mut self, line: &str) -> Vec<Diagnostic> {
        let module = self.go_module();
        let Grammar::Go(state) = &mut self.grammar else {
            return Vec::new();
        };
        if let Some(test) = line.strip_prefix("--- FAIL: ") {
            state.test = test.split_whitespace().next().map(str::to_string);
            return Vec::new();
        }
        if let Some(c) = GO_TEST_LINE.captures(line) {
            state.pending.push(Diagnostic {
                check: String::new(),
                origin: Origin::Test,
                tool: String::new(),
                file: Some(c["file"].to_string()),
                line: c["line"].parse().ok(),
                column: None,
                severity: Severity::Error,
                code: state.test.clone(),
                message: c["message"].to_string(),
            });
            return Vec::new();
        }
        if let Some(c) = GO_PACKAGE.captures(line) {
            // The package names the directory its test files are in.
            let package = c["package"].to_string();
            let dir = match &module {
                Some(module) => package
                    .strip_prefix(module.as_str())
                    .map_or_else(String::new, |rest| rest.trim_start_matches('/').to_string()),
                None => String::new(),
            };
            let pending = std::mem::take(&mut state.pending);
            state.test = None;
            return pending
                .into_iter()
                .map(|d| {
                    let file = d.file.as_deref().map(|f| {
                        if dir.is_empty() {
                            f.to_string()
                        } else {
                            format!("{dir}/{f}")
                        }
                    });
                    let made =
                        self.make(file.as_deref(), d.line, None, d.severity, d.code, d.message);
                    Diagnostic {
                        origin: Origin::Test,
                        ..made
                    }
                })
                .collect();
        }
        if line.starts_with("{\"Issues\":") {
            return self.golangci_json(line);
        }
        if let Some(c) = GO_POSITION.captures(line) {
            // golangci-lint ends each issue with its linter: `(errcheck)`.
            let trailer = (self.tool == "golangci-lint").then_some(&*GOLANGCI_LINTER);
            return vec![self.positioned(&c, Severity::Error, trailer)];
        }
        Vec::new()
    }

    /// golangci-lint's JSON report: one line, `{"Issues": [...]}`.
    fn golangci_json(&self, line: &str) -> Vec<Diagnostic> {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            return Vec::new();
        };
        let number = |v: &serde_json::Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
        value["Issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|issue| {
                let severity = match issue["Severity"].as_str() {
                    Some(word) if !word.is_empty() => Severity::from_word(word),
                    _ => Severity::Error,
                };
                self.make(
                    issue["Pos"]["Filename"].as_str(),
                    number(&issue["Pos"]["Line"]),
                    // 0 means golangci-lint does not know the column.
                    number(&issue["Pos"]["Column"]),
                    severity,
                    issue["FromLinter"].as_str().map(str::to_string),
                    issue["Text"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    /// The module path from `go.mod` in the check's directory or the root.
    fn go_module(&self) -> Option<String> {
        [&self.cwd, &self.root].iter().find_map(|dir| {
            let text = std::fs::read_to_string(dir.join("go.mod")).ok()?;
            text.lines()
                .find_map(|l| l.trim().strip_prefix("module "))
                .map(|m| m.trim().trim_matches('"').to_string())
        })
    }

    fn shellcheck_line(&mut self, line: &str) -> Vec<Diagnostic> {
        let Grammar::Shellcheck(at) = &mut self.grammar else {
            return Vec::new();
        };
        if let Some(c) = SHELLCHECK_AT.captures(line) {
            **at = c["line"].parse().ok().map(|l| (c["file"].to_string(), l));
            return Vec::new();
        }
        if let (Some((file, l)), Some(c)) = (at.as_ref(), SHELLCHECK_NOTE.captures(line)) {
            let (file, l) = (file.clone(), *l);
            let column = u32::try_from(c["pad"].chars().count() + 1).ok();
            return vec![self.make(
                Some(&file),
                Some(l),
                column,
                Severity::from_word(&c["severity"]),
                Some(c["code"].to_string()),
                c["message"].to_string(),
            )];
        }
        // The gcc format (`-f gcc`) reads like any compiler.
        if let Some(c) = GENERIC.captures(line) {
            return vec![self.positioned(&c, Severity::from_word(&c["severity"]), Some(&GCC_FLAG))];
        }
        Vec::new()
    }

    fn node_line(&mut self, line: &str) -> Vec<Diagnostic> {
        let Grammar::Node(state) = &mut self.grammar else {
            return Vec::new();
        };
        if let Some(json) = state.json.as_mut() {
            if json.len() + line.len() < MAX_JSON_BYTES {
                json.push_str(line);
                json.push('\n');
            }
            return Vec::new();
        }
        if line.starts_with("[{\"filePath\"") || line == "[]" {
            state.json = Some(format!("{line}\n"));
            return Vec::new();
        }
        for pattern in [&*TSC_PLAIN, &*TSC_PRETTY] {
            if let Some(c) = pattern.captures(line) {
                let severity = Severity::from_word(&c["severity"]);
                return vec![self.make(
                    Some(&c["file"]),
                    c["line"].parse().ok(),
                    c["col"].parse().ok(),
                    severity,
                    Some(c["code"].to_string()),
                    c["message"].to_string(),
                )];
            }
        }
        if let Some(c) = ESLINT_ROW.captures(line) {
            let Some(file) = state.file.clone() else {
                return Vec::new();
            };
            return vec![self.make(
                Some(&file),
                c["line"].parse().ok(),
                c["col"].parse().ok(),
                Severity::from_word(&c["severity"]),
                c.name("rule").map(|m| m.as_str().to_string()),
                c["message"].to_string(),
            )];
        }
        // A stylish block starts with the file's path alone on its line.
        let trimmed = line.trim_end();
        if !trimmed.is_empty() && !line.starts_with(char::is_whitespace) && !trimmed.contains(' ') {
            state.file = Some(trimmed.to_string());
        } else if trimmed.is_empty() || trimmed.starts_with('✖') {
            state.file = None;
        }
        Vec::new()
    }

    /// ESLint's JSON report, read whole at the end.
    fn eslint_json(&self, text: &str) -> Vec<Diagnostic> {
        let Ok(serde_json::Value::Array(files)) = serde_json::from_str::<serde_json::Value>(text)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for file in &files {
            let path = file["filePath"].as_str();
            for m in file["messages"].as_array().into_iter().flatten() {
                let severity = match m["severity"].as_u64() {
                    Some(2) => Severity::Error,
                    Some(1) => Severity::Warning,
                    _ => Severity::Info,
                };
                let number = |key: &str| m[key].as_u64().and_then(|n| u32::try_from(n).ok());
                out.push(self.make(
                    path,
                    number("line"),
                    number("column"),
                    severity,
                    m["ruleId"].as_str().map(str::to_string),
                    m["message"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
        out
    }

    fn python_line(&mut self, line: &str) -> Vec<Diagnostic> {
        let Grammar::Python(state) = &mut self.grammar else {
            return Vec::new();
        };
        // pytest: remember the explanation, report at the crash site.
        if let Some(rest) = line.strip_prefix("E ") {
            if state.explanation.len() < 20 {
                state.explanation.push(rest.trim().to_string());
            }
            return Vec::new();
        }
        if line.starts_with("____") {
            state.explanation.clear();
            return Vec::new();
        }
        if let Some(c) = PYTEST_SITE.captures(line) {
            let message = state
                .explanation
                .first()
                .cloned()
                .unwrap_or_else(|| c["error"].to_string());
            state.explanation.clear();
            let mut d = self.make(
                Some(&c["file"]),
                c["line"].parse().ok(),
                None,
                Severity::Error,
                Some(c["error"].to_string()),
                message,
            );
            d.origin = Origin::Test;
            return vec![d];
        }
        // ruff's full format: the header, then its location.
        if let Some(rest) = line.trim_start().strip_prefix("--> ") {
            let Some((code, message)) = state.pending.take() else {
                return Vec::new();
            };
            let mut parts = rest.rsplitn(3, ':');
            let (col, l, file) = (parts.next(), parts.next(), parts.next());
            if let (Some(file), Some(l), Some(col)) = (file, l, col) {
                return vec![self.make(
                    Some(file),
                    l.parse().ok(),
                    col.parse().ok(),
                    Severity::Error,
                    Some(code),
                    message,
                )];
            }
            return Vec::new();
        }
        if let Some(c) = PY_LINT.captures(line) {
            let code = c["code"].to_string();
            let pylint = c.name("pylint").is_some();
            let severity = if pylint {
                match code.as_bytes().first() {
                    Some(b'E' | b'F') => Severity::Error,
                    Some(b'W') => Severity::Warning,
                    _ => Severity::Info,
                }
            } else if code.starts_with('W') && self.tool == "flake8" {
                Severity::Warning
            } else {
                Severity::Error
            };
            // pylint counts columns from 0.
            let column = c
                .name("col")
                .and_then(|m| m.as_str().parse::<u32>().ok())
                .map(|col| if pylint { col + 1 } else { col });
            return vec![self.make(
                Some(&c["file"]),
                c["line"].parse().ok(),
                column,
                severity,
                Some(code),
                c["message"].to_string(),
            )];
        }
        if let Some(c) = RUFF_HEADER.captures(line) {
            state.pending = Some((c["code"].to_string(), c["message"].to_string()));
            return Vec::new();
        }
        // mypy and the like: `file:line: error: message  [code]`.
        if let Some(c) = GENERIC.captures(line) {
            return vec![self.positioned(
                &c,
                Severity::from_word(&c["severity"]),
                Some(&MYPY_CODE),
            )];
        }
        Vec::new()
    }

    /// One line of `cargo --message-format=json`.
    fn cargo_json(&self, line: &str) -> Vec<Diagnostic> {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            return Vec::new();
        };
        let message = &value["message"];
        let text = message["message"].as_str().unwrap_or("");
        let level = message["level"].as_str().unwrap_or("error");
        if level == "failure-note" || is_rustc_noise(text) {
            return Vec::new();
        }
        let spans = message["spans"].as_array();
        let primary = spans.and_then(|s| {
            s.iter()
                .find(|span| span["is_primary"] == true)
                .or_else(|| s.first())
        });
        let number = |span: &serde_json::Value, key: &str| {
            span[key].as_u64().and_then(|n| u32::try_from(n).ok())
        };
        vec![self.make(
            primary.and_then(|s| s["file_name"].as_str()),
            primary.and_then(|s| number(s, "line_start")),
            primary.and_then(|s| number(s, "column_start")),
            Severity::from_word(level),
            message["code"]["code"].as_str().map(str::to_string),
            text.to_string(),
        )]
    }

    fn cargo_line(&mut self, line: &str) -> Vec<Diagnostic> {
        if line.starts_with("{\"reason\":\"compiler-message\"") {
            return self.cargo_json(line);
        }
        let mut out = Vec::new();
        let Grammar::Cargo(state) = &mut self.grammar else {
            return out;
        };
        if let Some(mut panic) = state.panic_pending.take() {
            if !line.trim().is_empty() {
                panic.message = line.trim().to_string();
            }
            out.push(panic);
            return out;
        }
        if let Some(c) = RUSTC_LOCATION.captures(line) {
            if let Some(mut pending) = state.pending.take() {
                let (file, l, col) = (
                    c["file"].to_string(),
                    c["line"].parse().ok(),
                    c["col"].parse().ok(),
                );
                pending.file = Some(file);
                pending.line = l;
                pending.column = col;
                state.pending = Some(pending);
            }
            return out;
        }
        if let Some(c) = CLIPPY_LINT.captures(line) {
            if let Some(pending) = state.pending.as_mut() {
                let lint_name = c
                    .name("lint")
                    .or_else(|| c.name("dlint"))
                    .map(|m| m.as_str());
                if pending.code.is_none() {
                    pending.code = lint_name.map(str::to_string);
                }
            }
            return out;
        }
        let header = RUSTC_HEADER.captures(line);
        let panic_new = PANIC_NEW.captures(line);
        let panic_old = PANIC_OLD.captures(line);
        if header.is_some() || panic_new.is_some() || panic_old.is_some() {
            if let Some(done) = state.pending.take() {
                out.push(done);
            }
        }
        let raw = |file: &str, line: &str, col: &str| -> (String, Option<u32>, Option<u32>) {
            (file.to_string(), line.parse().ok(), col.parse().ok())
        };
        if let Some(c) = header {
            let message = c["message"].to_string();
            if !is_rustc_noise(&message) {
                let pending = Diagnostic {
                    check: String::new(),
                    origin: self.origin,
                    tool: self.tool.clone(),
                    file: None,
                    line: None,
                    column: None,
                    severity: Severity::from_word(&c["severity"]),
                    code: c.name("code").map(|m| m.as_str().to_string()),
                    message,
                };
                if let Grammar::Cargo(state) = &mut self.grammar {
                    state.pending = Some(pending);
                }
            }
        } else if let Some(c) = panic_new {
            let (file, l, col) = raw(&c["file"], &c["line"], &c["col"]);
            // The message is on the next line; until it comes, say who panicked.
            let d = Diagnostic {
                check: String::new(),
                origin: Origin::Test,
                tool: self.tool.clone(),
                file: Some(file),
                line: l,
                column: col,
                severity: Severity::Error,
                code: None,
                message: format!("test `{}` panicked", &c["test"]),
            };
            if let Grammar::Cargo(state) = &mut self.grammar {
                state.panic_pending = Some(d);
            }
        } else if let Some(c) = panic_old {
            let (file, l, col) = raw(&c["file"], &c["line"], &c["col"]);
            out.push(Diagnostic {
                check: String::new(),
                origin: Origin::Test,
                tool: self.tool.clone(),
                file: Some(file),
                line: l,
                column: col,
                severity: Severity::Error,
                code: None,
                message: c["message"].to_string(),
            });
        }
        out.into_iter()
            .map(|mut d| {
                let file = d.file.take();
                let made = self.make(
                    file.as_deref(),
                    d.line,
                    d.column,
                    d.severity,
                    d.code.take(),
                    std::mem::take(&mut d.message),
                );
                Diagnostic {
                    origin: d.origin,
                    ..made
                }
            })
            .collect()
    }

    /// A diagnostic from a `file:line[:col]` match with a `message` (and
    /// maybe a `code`) group. `trailer` takes out of the message the code
    /// some tools append to it: ` [-Wunused]`, ` [SC2086]`, `  [assignment]`,
    /// ` (errcheck)`.
    fn positioned(
        &self,
        c: &regex::Captures<'_>,
        severity: Severity,
        trailer: Option<&Regex>,
    ) -> Diagnostic {
        let mut message = c["message"].to_string();
        let mut code = c.name("code").map(|m| m.as_str().to_string());
        if let Some(t) = trailer.and_then(|re| re.captures(&c["message"])) {
            if let (Some(whole), Some(found)) = (t.get(0), t.name("code")) {
                code = code.or_else(|| Some(found.as_str().to_string()));
                message.truncate(whole.start());
            }
        }
        self.make(
            Some(&c["file"]),
            c["line"].parse().ok(),
            c.name("col").and_then(|m| m.as_str().parse().ok()),
            severity,
            code,
            message.trim_end().to_string(),
        )
    }

    fn make(
        &self,
        file: Option<&str>,
        line: Option<u32>,
        column: Option<u32>,
        severity: Severity,
        code: Option<String>,
        message: String,
    ) -> Diagnostic {
        Diagnostic {
            check: self.check.clone(),
            origin: self.origin,
            tool: self.tool.clone(),
            file: file.map(|f| relative_to_root(f, &self.cwd, &self.root)),
            line: line.filter(|l| *l > 0),
            column: column.filter(|c| *c > 0),
            severity,
            code,
            message,
        }
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        if self.found.contains(&diagnostic) {
            return;
        }
        if self.found.len() >= MAX_DIAGNOSTICS_PER_CHECK {
            self.dropped += 1;
        } else {
            self.found.push(diagnostic);
        }
    }

    /// The diagnostics found, and how many more were dropped over the cap.
    pub fn finish(mut self) -> (Vec<Diagnostic>, usize) {
        if let Grammar::Go(state) = &mut self.grammar {
            // Test lines no package line claimed: relative to the check.
            let pending = std::mem::take(&mut state.pending);
            for d in pending {
                let made = self.make(
                    d.file.as_deref(),
                    d.line,
                    None,
                    d.severity,
                    d.code,
                    d.message,
                );
                self.push(Diagnostic {
                    origin: Origin::Test,
                    ..made
                });
            }
        }
        if let Grammar::Node(state) = &mut self.grammar {
            if let Some(json) = state.json.take() {
                for diagnostic in self.eslint_json(&json) {
                    self.push(diagnostic);
                }
            }
        }
        let pending = match &mut self.grammar {
            Grammar::Cargo(state) => [state.pending.take(), state.panic_pending.take()],
            _ => [None, None],
        };
        for diagnostic in pending.into_iter().flatten() {
            let file = diagnostic.file.clone();
            let made = self.make(
                file.as_deref(),
                diagnostic.line,
                diagnostic.column,
                diagnostic.severity,
                diagnostic.code,
                diagnostic.message,
            );
            self.push(Diagnostic {
                origin: diagnostic.origin,
                ..made
            });
        }
        (self.found, self.dropped)
    }
}

/// A path as a tool printed it (absolute, `./x`, relative to the check's
/// working directory) → relative to the repository root when inside it.
pub fn relative_to_root(printed: &str, cwd: &Path, root: &Path) -> String {
    let path = Path::new(printed);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let normal = normalize(&absolute);
    match normal.strip_prefix(normalize(root)) {
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => normal.to_string_lossy().into_owned(),
    }
}

/// Removes `.` and resolves `..` lexically, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extract(parser: &ParserChoice, program: &str, text: &str) -> Vec<Diagnostic> {
        let root = Path::new("/repo");
        let mut x = Extractor::new("c", Origin::Build, parser, program, root, root);
        for line in text.lines() {
            // As the runner does: only lines the prefilter wants are parsed.
            if x.wants(line.as_bytes(), true) {
                x.line(line);
            }
        }
        x.finish().0
    }

    #[test]
    fn generic_lines_need_a_severity() {
        let found = extract(
            &ParserChoice::Auto,
            "sh",
            "src/a.c:3:7: error: expected ';'\n./b.py:10: warning: unused\nat x.js:1:2 something\n",
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].file.as_deref(), Some("src/a.c"));
        assert_eq!((found[0].line, found[0].column), (Some(3), Some(7)));
        assert_eq!(found[1].file.as_deref(), Some("b.py"));
        assert_eq!(found[1].severity, Severity::Warning);
        assert_eq!(found[1].column, None);
    }

    #[test]
    fn rustc_headers_take_their_location_line() {
        let text = "error[E0308]: mismatched types\n  --> src/lib.rs:10:5\n   |\nwarning: unused variable: `x`\n --> /repo/src/main.rs:2:9\nerror: aborting due to 1 previous error\n";
        let found = extract(&ParserChoice::Auto, "cargo", text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].code.as_deref(), Some("E0308"));
        assert_eq!(found[0].file.as_deref(), Some("src/lib.rs"));
        assert_eq!(found[1].file.as_deref(), Some("src/main.rs"));
        assert_eq!(found[1].severity, Severity::Warning);
    }

    #[test]
    fn test_panics_in_both_layouts() {
        let text = "thread 'tests::adds' panicked at src/lib.rs:12:9:\nassertion `left == right` failed\nthread 'old' panicked at 'boom', src/old.rs:3:1\n";
        let found = extract(&ParserChoice::Auto, "cargo", text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].message, "assertion `left == right` failed");
        assert_eq!(found[0].origin, Origin::Test);
        assert_eq!(found[1].message, "boom");
        assert_eq!(found[1].line, Some(3));
    }

    #[test]
    fn custom_regexes_and_caps() {
        let re = Regex::new(r"^(?P<file>\S+) line (?P<line>\d+): (?P<message>.*)$").unwrap();
        let text: Vec<String> = (0..1005).map(|i| format!("f.txt line {i}: bad")).collect();
        let root = Path::new("/repo");
        let mut x = Extractor::new("c", Origin::Lint, &ParserChoice::Regex(re), "x", root, root);
        for line in &text {
            x.line(line);
        }
        let (found, dropped) = x.finish();
        assert_eq!(found.len(), MAX_DIAGNOSTICS_PER_CHECK);
        assert_eq!(dropped, 5);
        assert_eq!(found[0].line, None, "line 0 is not a line number");
    }

    fn fixture(name: &str) -> Vec<Diagnostic> {
        recorded("cargo", name, "cargo")
    }

    fn recorded(dir: &str, name: &str, program: &str) -> Vec<Diagnostic> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/diagnostics")
            .join(dir)
            .join(name);
        let text = std::fs::read_to_string(path).unwrap();
        extract(&ParserChoice::Auto, program, &text)
    }

    #[test]
    fn recorded_python_tools() {
        let py = |name: &str, program: &str| brief(&recorded("python", name, program));
        let lint = [
            "pkg/calc.py:1:8 error F401 `os` imported but unused",
            "pkg/calc.py:2:8 error F401 `sys` imported but unused",
            "pkg/calc.py:15:5 error F841 Local variable `l` is assigned to but never used",
        ];
        assert_eq!(py("ruff-concise.txt", "ruff"), lint);
        assert_eq!(py("ruff-full.txt", "ruff"), lint);
        assert_eq!(
            py("mypy.txt", "mypy"),
            ["pkg/calc.py:10:0 error assignment Incompatible types in assignment (expression has type \"int\", variable has type \"str\")"]
        );
        let flake8 = py("flake8.txt", "flake8");
        assert_eq!(flake8.len(), 4);
        assert_eq!(
            flake8[3],
            "pkg/calc.py:15:5 error E741 ambiguous variable name 'l'"
        );
        let pylint = py("pylint.txt", "pylint");
        assert_eq!(pylint.len(), 8, "{pylint:?}");
        assert!(
            pylint.contains(
                &"pkg/calc.py:14:19 warning W0613 Unused argument 'y' (unused-argument)"
                    .to_string()
            ),
            "{pylint:?}"
        );
        assert!(pylint.contains(
            &"pkg/calc.py:1:1 info C0114 Missing module docstring (missing-module-docstring)"
                .to_string()
        ));
        let pytest = recorded("python", "pytest.txt", "pytest");
        assert_eq!(
            brief(&pytest),
            [
                "tests/test_calc.py:10:0 error AssertionError AssertionError: two and two",
                "tests/test_calc.py:14:0 error KeyError KeyError: 'missing'",
            ]
        );
        assert!(pytest.iter().all(|d| d.origin == Origin::Test));
    }

    #[test]
    fn recorded_tsc_and_eslint() {
        let tsc = [
            "src/app.ts:5:7 error TS2322 Type 'number' is not assignable to type 'string'.",
            "src/app.ts:6:30 error TS2322 Type 'string' is not assignable to type 'number'.",
            "src/app.ts:7:5 error TS2345 Argument of type 'string' is not assignable to parameter of type 'number'.",
        ];
        assert_eq!(brief(&recorded("node", "tsc-plain.txt", "tsc")), tsc);
        assert_eq!(brief(&recorded("node", "tsc-pretty.txt", "tsc")), tsc);

        // ESLint prints absolute paths; they become relative to the root.
        let eslint = |name: &str| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/diagnostics/node")
                .join(name);
            let text = std::fs::read_to_string(path).unwrap();
            let root = Path::new("/tmp/tsrec");
            let mut x = Extractor::new(
                "lint",
                Origin::Lint,
                &ParserChoice::Auto,
                "eslint",
                root,
                root,
            );
            for line in text.lines() {
                x.line(line);
            }
            brief(&x.finish().0)
        };
        let stylish = eslint("eslint-stylish.txt");
        assert_eq!(
            stylish,
            [
                "src/util.js:1:1 warning no-var Unexpected var, use let or const instead",
                "src/util.js:1:5 error no-unused-vars 'unused' is assigned a value but never used",
                "src/util.js:2:10 error no-unused-vars 'check' is defined but never used",
                "src/util.js:3:9 error eqeqeq Expected '===' and instead saw '=='",
            ]
        );
        let json = eslint("eslint.json");
        assert_eq!(json.len(), 4, "{json:?}");
        assert_eq!(
            json[1],
            "src/util.js:1:5 error no-unused-vars 'unused' is assigned a value but never used."
        );
    }

    #[test]
    fn recorded_shellcheck_in_both_formats() {
        let expected = [
            "scripts/deploy.sh:3:15 info SC2086 Double quote to prevent globbing and word splitting.",
            "scripts/deploy.sh:4:6 info SC2086 Double quote to prevent globbing and word splitting.",
            "scripts/deploy.sh:4:14 warning SC3014 In POSIX sh, == in place of = is undefined.",
            "scripts/deploy.sh:7:1 warning SC2164 Use 'cd ... || exit' or 'cd ... || return' in case cd fails.",
        ];
        assert_eq!(
            brief(&recorded("shellcheck", "shellcheck-tty.txt", "shellcheck")),
            expected
        );
        // The gcc format says `note` where the default one says `info`.
        let gcc = brief(&recorded("shellcheck", "shellcheck-gcc.txt", "shellcheck"));
        assert_eq!(gcc.len(), 4);
        assert_eq!(gcc[2], expected[2]);
        assert_eq!(gcc[0], expected[0].replace(" info ", " note "));
    }

    #[test]
    fn recorded_go_build_vet_and_test() {
        let go = |name: &str| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/diagnostics/go")
                .join(name);
            let text = std::fs::read_to_string(path).unwrap();
            let root = tempfile::tempdir().unwrap();
            std::fs::write(
                root.path().join("go.mod"),
                "module example.com/shop\n\ngo 1.19\n",
            )
            .unwrap();
            let mut x = Extractor::new(
                "c",
                Origin::Build,
                &ParserChoice::Auto,
                "go",
                root.path(),
                root.path(),
            );
            for line in text.lines() {
                if x.wants(line.as_bytes(), true) {
                    x.line(line);
                }
            }
            x.finish().0
        };
        assert_eq!(
            brief(&go("go-build.txt")),
            ["calc/calc.go:6:17 error - undefined: missing"]
        );
        assert_eq!(
            brief(&go("go-vet.txt")),
            ["calc/vet.go:6:9 error - fmt.Sprintf format %s has arg n of wrong type int"]
        );
        let test = go("go-test.txt");
        assert_eq!(
            brief(&test),
            ["calc/calc_test.go:7:0 error TestAdd Add(2, 2) = 4, want 5"]
        );
        assert_eq!(test[0].origin, Origin::Test);
    }

    /// Written from golangci-lint's documentation (see the fixture's README).
    #[test]
    fn golangci_lint_text_and_json() {
        assert_eq!(
            brief(&recorded("golangci-lint", "text.txt", "golangci-lint")),
            [
                "main.go:12:2 error errcheck Error return value of `f.Close` is not checked",
                "util/strings.go:5:6 error unused func `unused` is unused",
            ]
        );
        assert_eq!(
            brief(&recorded("golangci-lint", "json.txt", "golangci-lint")),
            [
                "main.go:12:2 error errcheck Error return value of `f.Close` is not checked",
                "util/strings.go:3:0 error gofmt File is not `gofmt`-ed with `-s`",
            ]
        );
    }

    #[test]
    fn recorded_gcc_and_gxx() {
        assert_eq!(
            brief(&recorded("gcc", "gcc.txt", "gcc")),
            [
                "main.c:4:17 error - expected ‘;’ before ‘}’ token",
                "main.c:9:27 warning -Wint-conversion passing argument 2 of ‘add’ makes integer from pointer without a cast",
                "main.c:3:20 note - expected ‘int’ but argument is of type ‘char *’",
                "main.c:10:12 error - ‘undefined_name’ undeclared (first use in this function)",
                "main.c:10:12 note - each undeclared identifier is reported only once for each function it appears in",
                "main.c:8:9 warning -Wunused-variable unused variable ‘unused’",
            ]
        );
        let gxx = recorded("gcc", "gxx.txt", "g++");
        assert_eq!(gxx.len(), 5, "{gxx:?}");
        assert_eq!(gxx[0].code.as_deref(), Some("-fpermissive"));
        assert_eq!(
            gxx[0].message,
            "invalid conversion from ‘const char*’ to ‘int’"
        );
    }

    fn brief(found: &[Diagnostic]) -> Vec<String> {
        found
            .iter()
            .map(|d| {
                format!(
                    "{}:{}:{} {} {} {}",
                    d.file.as_deref().unwrap_or("-"),
                    d.line.unwrap_or(0),
                    d.column.unwrap_or(0),
                    d.severity.as_str(),
                    d.code.as_deref().unwrap_or("-"),
                    d.message
                )
            })
            .collect()
    }

    #[test]
    fn recorded_cargo_build() {
        assert_eq!(
            brief(&fixture("build.txt")),
            [
                "src/lib.rs:7:18 error E0308 mismatched types",
                "src/lib.rs:2:9 warning - unused variable: `unused`",
            ]
        );
    }

    #[test]
    fn recorded_cargo_nextest() {
        // nextest indents the test's output; the panic is found all the same.
        let found = fixture("nextest.txt");
        let errors: Vec<String> = brief(&found)
            .into_iter()
            .filter(|d| d.contains(" error "))
            .collect();
        assert_eq!(
            errors,
            ["src/lib.rs:15:9 error - assertion `left == right` failed: two and two"]
        );
    }

    #[test]
    fn recorded_cargo_json() {
        assert_eq!(
            brief(&fixture("build.json")),
            [
                "src/lib.rs:7:18 error E0308 mismatched types",
                // The JSON names the lint the human output only notes.
                "src/lib.rs:2:9 warning unused_variables unused variable: `unused`",
            ]
        );
    }

    #[test]
    fn recorded_cargo_test() {
        let found = fixture("test.txt");
        let errors: Vec<&Diagnostic> = found
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert_eq!(errors.len(), 1, "{found:?}");
        assert_eq!(
            brief(&[errors[0].clone()]),
            ["src/lib.rs:15:9 error - assertion `left == right` failed: two and two"]
        );
        assert_eq!(errors[0].origin, Origin::Test);
    }

    #[test]
    fn recorded_cargo_clippy() {
        assert_eq!(
            brief(&fixture("clippy.txt")),
            [
                "src/lib.rs:2:9 warning - unused variable: `unused`",
                "src/lib.rs:20:5 warning clippy::len_zero length comparison to zero",
            ]
        );
    }

    #[test]
    fn paths_become_relative_to_the_root() {
        let root = Path::new("/repo");
        assert_eq!(
            relative_to_root("./a/../b.rs", &root.join("sub"), root),
            "sub/b.rs"
        );
        assert_eq!(
            relative_to_root("/repo/x.rs", &root.join("sub"), root),
            "x.rs"
        );
        assert_eq!(
            relative_to_root("/elsewhere/x.rs", root, root),
            "/elsewhere/x.rs"
        );
    }
}
