//! Golden tests over the recorded tool outputs in `fixtures/diagnostics/`:
//! each directory's `cases.toml` says which command printed each output,
//! and its diagnostics are compared with a snapshot and, where the tool has
//! a machine-readable mode, with what that mode reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Diagnostic, Extracted, Extractor};
use crate::config::{Origin, ParserChoice};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cases {
    recorded_in: Option<PathBuf>,
    #[serde(default)]
    sources: BTreeMap<String, String>,
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    output: String,
    command: String,
    /// Another output of the same run in the tool's other format: both
    /// must locate the same findings.
    same_as: Option<String>,
    /// Why the twin names the tests otherwise (one format holds less),
    /// when it does: then only the places are compared.
    tests_differ: Option<String>,
    parser: Option<String>,
    /// Where this output was recorded, when not where the others were.
    recorded_in: Option<PathBuf>,
    /// The directory the tool ran in, relative to the sources' root, when
    /// not that root (a member of a nested workspace).
    cwd: Option<PathBuf>,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diagnostics")
}

/// Feeds `bytes` the way the runner does: line by line with byte ranges,
/// through the prefilter.
pub fn extract(mut x: Extractor, bytes: &[u8]) -> Extracted {
    let mut start = 0usize;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let line = &bytes[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if x.wants(line, true) {
            x.line(&String::from_utf8_lossy(line), start as u64..end as u64);
        }
        start = end + 1;
    }
    x.finish()
}

fn run_case(dir: &Path, cases: &Cases, case: &Case, root: &Path) -> Extracted {
    let argv = shlex::split(&case.command).expect("a command in cases.toml splits");
    let parser = case
        .parser
        .clone()
        .map_or(ParserChoice::Auto, ParserChoice::Named);
    let cwd = case
        .cwd
        .as_ref()
        .map_or_else(|| root.to_path_buf(), |d| root.join(d));
    let mut x = Extractor::new("c", Origin::Lint, &parser, &argv, root, &cwd);
    if let Some(recorded) = case.recorded_in.as_ref().or(cases.recorded_in.as_ref()) {
        x = x.recorded_in(recorded);
    }
    let bytes = std::fs::read(dir.join(&case.output)).expect("the output is readable");
    extract(x, &bytes)
}

/// The recorded output `fixtures/diagnostics/<path>` read by the parser
/// named `parser` (`auto`: the output decides), as if the tool had run at
/// the root `/repo` (absolute paths under `recorded_in`, where it really
/// ran, read as under `/repo`).
pub fn recorded(parser: &str, path: &str, recorded_in: Option<&str>) -> Extracted {
    let root = Path::new("/repo");
    let choice = match parser {
        "auto" => ParserChoice::Auto,
        name => ParserChoice::Named(name.to_string()),
    };
    let mut x = Extractor::new("c", Origin::Lint, &choice, &[], root, root);
    if let Some(dir) = recorded_in {
        x = x.recorded_in(Path::new(dir));
    }
    let bytes = std::fs::read(fixtures().join(path)).expect("the fixture is readable");
    extract(x, &bytes)
}

/// The recorded output `fixtures/diagnostics/<output>` as `parser = "auto"`
/// reads it from a check running `command` at the root of a repository
/// holding `sources` (its path, the fixture it is copied from), where the
/// columns can be converted.
pub fn recorded_in_repo(command: &str, output: &str, sources: &[(&str, &str)]) -> Extracted {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = std::fs::canonicalize(dir.path()).expect("the temporary directory exists");
    for (path, fixture) in sources {
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().expect("a source path has a parent"))
            .expect("the source's directory is created");
        std::fs::copy(fixtures().join(fixture), target).expect("the source is copied");
    }
    let argv = shlex::split(command).expect("the command splits");
    let x = Extractor::new("c", Origin::Lint, &ParserChoice::Auto, &argv, &root, &root);
    let bytes = std::fs::read(fixtures().join(output)).expect("the fixture is readable");
    extract(x, &bytes)
}

/// Each diagnostic's place, code and test, to compare at a glance.
pub fn places(found: &Extracted) -> Vec<(String, Option<&str>, Option<&str>)> {
    found
        .diagnostics
        .iter()
        .map(|d| (d.location(), d.code.as_deref(), d.test.as_deref()))
        .collect()
}

/// One diagnostic per block, every field that matters.
pub fn render(found: &Extracted) -> String {
    let mut out = String::new();
    for d in &found.diagnostics {
        out.push_str(&brief(d));
        for line in d.message.lines() {
            out.push_str(&format!("\n    | {line}"));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "parser: {:?}, dropped: {}, errors fail: {}\n",
        found.parser, found.dropped, found.errors_fail
    ));
    out
}

fn brief(d: &Diagnostic) -> String {
    let mut line = format!(
        "{} {} {}",
        if d.location().is_empty() {
            "-".to_string()
        } else {
            d.location()
        },
        d.severity.as_str(),
        d.code.as_deref().unwrap_or("-"),
    );
    if let (Some(l), Some(c)) = (d.end_line, d.end_column) {
        line.push_str(&format!(" to {l}:{c}"));
    }
    let parser = d.parser.unwrap_or_default();
    line.push_str(&format!(
        " [{}/{} {:?}",
        parser.name, parser.dialect, d.origin
    ));
    if d.tool_column_unit != d.column_unit || d.column_unit != super::ColumnUnit::Character {
        line.push_str(&format!(
            " columns {:?} from {:?}",
            d.column_unit, d.tool_column_unit
        ));
    }
    line.push_str(&format!(" tool {}", d.tool));
    if let Some(v) = &d.tool_version {
        line.push_str(&format!(" {v}"));
    }
    if let Some(t) = &d.test {
        line.push_str(&format!(" test {t}"));
    }
    if let Some((a, b)) = d.log_range {
        line.push_str(&format!(" log {a}..{b}"));
    }
    line.push(']');
    line
}

/// What two formats of one run must agree on.
/// What twin outputs (a tool's text and its JSON) must agree on: the
/// place (file, line, column), the code, the severity and the test.
type Key = (
    Option<String>,
    Option<u32>,
    Option<u32>,
    Option<String>,
    super::Severity,
    Option<String>,
);

fn key(d: &Diagnostic) -> Key {
    (
        d.file.clone(),
        d.line,
        d.column,
        d.code.clone(),
        d.severity,
        d.test.clone(),
    )
}

#[test]
fn recorded_outputs_match_their_golden_files() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("cases.toml").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 7, "fixture directories: {dirs:?}");
    let mut disagreements = Vec::new();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let cases: Cases =
            toml::from_str(&std::fs::read_to_string(dir.join("cases.toml")).unwrap())
                .unwrap_or_else(|e| panic!("{name}/cases.toml: {e}"));
        let root = tempfile::tempdir().unwrap();
        for (path, source) in &cases.sources {
            let target = root.path().join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(dir.join(source), target).unwrap();
        }
        let root = std::fs::canonicalize(root.path()).unwrap();
        for case in &cases.case {
            let found = run_case(&dir, &cases, case, &root);
            assert!(
                !found.diagnostics.is_empty(),
                "{name}/{}: nothing parsed",
                case.output
            );
            insta::assert_snapshot!(format!("{name}__{}", case.output), render(&found));
            if let Some(other) = &case.same_as {
                let twin = cases
                    .case
                    .iter()
                    .find(|c| &c.output == other)
                    .unwrap_or_else(|| panic!("{name}: no case for {other}"));
                let theirs = run_case(&dir, &cases, twin, &root);
                let keyed = |d: &Diagnostic| {
                    let mut k = key(d);
                    if case.tests_differ.is_some() {
                        k.5 = None;
                    }
                    k
                };
                let mut a: Vec<_> = found.diagnostics.iter().map(keyed).collect();
                let mut b: Vec<_> = theirs.diagnostics.iter().map(keyed).collect();
                a.sort();
                b.sort();
                if a != b {
                    disagreements.push(format!(
                        "{name}: {} and {other} disagree:\n  {a:?}\n  {b:?}",
                        case.output
                    ));
                }
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// Every recorded line, raw and without colour, and lines made to sit on
/// the edges of the grammars' triggers.
fn every_line() -> Vec<Vec<Vec<u8>>> {
    let mut outputs = Vec::new();
    for dir in std::fs::read_dir(fixtures()).unwrap() {
        let dir = dir.unwrap().path();
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "toml" || e == "md") {
                continue;
            }
            let bytes = std::fs::read(&file).unwrap();
            let plain = super::strip_ansi(&String::from_utf8_lossy(&bytes)).into_bytes();
            for text in [bytes, plain] {
                outputs.push(
                    text.split(|b| *b == b'\n')
                        .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
                        .collect(),
                );
            }
        }
    }
    outputs.push(
        [
            &b""[..],
            b"   ",
            b"\x0cerror: form feed first",
            b"\terror[E0308]: tab first",
            b"  12:5  error  indented row  no-undef",
            b"/abs/path/app.js",
            b"C:\\src\\app.ts",
            b"0123456789abcdefghijklmnopqrstuvwxyz",
            "\u{2716} 2 problems".as_bytes(),
            "  \u{25cf} suite \u{203a} test".as_bytes(),
            b"bun test v1.1.0",
            b"ok  \texample.com/m\t0.01s",
            b"--- FAIL: TestX (0.00s)",
            b"E   assert 1 == 2",
            b"In script.sh line 3:",
            b"src/a.ts(1,2): error TS2322: no",
            b"  /x.py:1:2 - error: no",
        ]
        .iter()
        .map(|l| l.to_vec())
        .collect(),
    );
    outputs
}

/// The gate never keeps a line from a grammar that would want it: for
/// every grammar (named, or a candidate when the output decides), over
/// every recorded output, each line the grammar wants while it is not busy
/// holds one of its triggers.
#[test]
fn the_gate_admits_every_line_a_grammar_wants() {
    let outputs = every_line();
    for lines in &outputs {
        let grammars = super::parsers::PARSER_NAMES
            .iter()
            .filter(|n| !matches!(**n, "auto" | "none"))
            .filter_map(|name| super::parsers::by_name(name))
            .chain(super::parsers::candidates());
        for mut grammar in grammars {
            let name = grammar.name();
            if grammar.triggers().is_none() {
                continue;
            }
            let gate = super::parsers::Gate::of([grammar.triggers()]);
            let mut out = super::parsers::Out::default();
            for (i, line) in lines.iter().enumerate() {
                if !grammar.wants(line) {
                    continue;
                }
                assert!(
                    grammar.busy() || super::parsers::Gate::admitted(gate.admits(line), 0),
                    "{name} wants {:?}, which its triggers leave out",
                    String::from_utf8_lossy(line)
                );
                let at = i as u64..i as u64 + 1;
                grammar.line(&String::from_utf8_lossy(line), &at, &mut out);
            }
        }
    }
}
