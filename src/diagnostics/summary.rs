//! The summary: the top N distinct problems, root cause first, one line
//! each (`file:line code message (check)`). What a person or an agent reads
//! first, so a cascade of consequences must not bury its cause.

use std::borrow::Cow;
use std::collections::HashMap;

use super::{Diagnostic, Severity, MAX_DIAGNOSTICS_PER_CHECK};

/// Codes that name a root cause other errors follow from: something the
/// code needs cannot be found.
const ROOT_CAUSE_CODES: &[&str] = &[
    // rustc: unresolved import, failed to resolve.
    "E0432",
    "E0433",
    "E0463",
    // tsc: cannot find module, has no exported member.
    "TS2307",
    "TS2305",
    // mypy and pyright.
    "import-not-found",
    "import-untyped",
    "import",
    "reportMissingImports",
    "reportMissingModuleSource",
    // pytest's exception types.
    "ModuleNotFoundError",
    "ImportError",
];

/// Message fragments that name a root cause, lowercase.
const ROOT_CAUSE_WORDS: &[&str] = &[
    "test suite failed to run",
    "cannot find module",
    "no module named",
    "unresolved import",
    "could not import",
    "cannot find package",
    "failed to resolve",
    "no such file or directory",
    "failed to load",
    "error collecting",
];

/// Whether other errors likely follow from `d`.
pub fn is_root_cause(d: &Diagnostic) -> bool {
    if d.severity != Severity::Error {
        return false;
    }
    if d.code
        .as_deref()
        .is_some_and(|c| ROOT_CAUSE_CODES.contains(&c))
    {
        return true;
    }
    let first = d.message.lines().next().unwrap_or("").to_lowercase();
    // A suite that could not load says so in the message's first line
    // (pyright, tsc) or in what stands for its test name: jest's `Test
    // suite failed to run`, vitest's `test file failed to run`, pytest's
    // `ERROR collecting`.
    ROOT_CAUSE_WORDS.iter().any(|w| first.contains(w))
        || d.test.as_deref().is_some_and(|t| {
            let t = t.to_lowercase();
            [
                "error collecting",
                "suite failed to run",
                "file failed to run",
            ]
            .iter()
            .any(|w| t.contains(w))
        })
}

/// The most characters of a message's line that a summary entry or a
/// report shows: a tool can print megabytes on one line, and a person
/// reads a few hundred characters. The verdict's diagnostics keep it whole.
pub const MAX_LINE_CHARS: usize = 500;

/// Cuts `text` to at most `max_bytes`, at the character boundary at or
/// before it.
pub fn cut_bytes(text: &mut String, max_bytes: usize) {
    if text.len() <= max_bytes {
        return;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// `text` cut to at most `max_chars` characters, on a character boundary,
/// its last one `…` when anything was cut.
pub fn shorten(text: &str, max_chars: usize) -> Cow<'_, str> {
    if text.chars().nth(max_chars).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    out.push('…');
    Cow::Owned(out)
}

/// The code a line shows before `d`'s message, unless the message begins
/// with it and a `:` (pytest's `ModuleNotFoundError: No module named
/// 'calc'`): said before the message too, it would be read twice.
pub fn code_apart(d: &Diagnostic) -> Option<&str> {
    let code = d.code.as_deref()?;
    let said = d
        .message
        .trim_start()
        .strip_prefix(code)
        .is_some_and(|rest| rest.starts_with(':'));
    (!said).then_some(code)
}

/// One summary entry before it is written out.
struct Entry<'a> {
    d: &'a Diagnostic,
    /// It is a root cause (`is_root_cause`).
    cause: bool,
    /// Consequences collapsed under it.
    follow_on: usize,
    /// The same problem elsewhere.
    repeats: usize,
    /// The other checks that reported this very problem, at this very
    /// place (`cargo test`, `clippy` and `cargo build` all print one
    /// compile error): one line names them all.
    also: Vec<&'a str>,
    /// Findings of its check past the check's limit, counted but not
    /// kept: said on the check's first line, since they may be anything.
    not_kept: usize,
}

/// The top `limit` distinct problems among `diagnostics`.
///
/// `rank` orders checks (lower first; `None` leaves a diagnostic out):
/// errors come before warnings, new problems before pre-existing ones,
/// blocking checks before the others, root causes before their
/// consequences. Errors in the same file and check as a root cause are
/// collapsed under it, repeats of one fingerprint count once, and the
/// same problem at the same place from several checks is one line that
/// names them all.
pub fn summarize(
    diagnostics: &[Diagnostic],
    rank: impl Fn(&Diagnostic) -> Option<usize>,
    limit: usize,
) -> Vec<String> {
    summarize_counted(diagnostics, rank, |_| 0, limit)
}

/// `summarize`, where `not_kept` says how many findings a check counted
/// past its limit without keeping them. A tool that printed a million
/// alike errors must not read as one that printed a thousand: the first
/// line of each such check says how many more there were.
pub fn summarize_counted(
    diagnostics: &[Diagnostic],
    rank: impl Fn(&Diagnostic) -> Option<usize>,
    not_kept: impl Fn(&str) -> usize,
    limit: usize,
) -> Vec<String> {
    // (rank, index, root cause?, diagnostic): whether it is a root cause
    // is read once, not at every comparison.
    let mut ranked: Vec<(usize, usize, bool, &Diagnostic)> = diagnostics
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.severity, Severity::Error | Severity::Warning))
        .filter_map(|(i, d)| rank(d).map(|r| (r, i, is_root_cause(d), d)))
        .collect();
    ranked.sort_by_key(|(r, i, cause, d)| (d.severity, d.pre_existing, *r, !cause, *i));

    // The files (per check) a root cause explains.
    let causes: Vec<(&str, Option<&str>)> = ranked
        .iter()
        .filter(|(_, _, cause, _)| *cause)
        .map(|(.., d)| (d.check.as_str(), d.file.as_deref()))
        .collect();

    let mut entries: Vec<Entry<'_>> = Vec::new();
    let mut by_fingerprint: HashMap<String, usize> = HashMap::new();
    let mut by_place: HashMap<PlaceKey<'_>, usize> = HashMap::new();
    for (_, _, cause, d) in ranked {
        if !cause && d.severity == Severity::Error {
            let explained = causes.iter().position(|(check, file)| {
                *check == d.check && file.is_some() && *file == d.file.as_deref()
            });
            if let Some(at) = explained {
                let (check, file) = causes[at];
                if let Some(entry) = entries
                    .iter_mut()
                    .find(|e| e.cause && e.d.check == check && e.d.file.as_deref() == file)
                {
                    entry.follow_on += 1;
                    continue;
                }
            }
        }
        let place = place_key(d);
        if let Some(&at) = by_place.get(&place) {
            let entry: &mut Entry<'_> = &mut entries[at];
            if entry.d.check != d.check && !entry.also.contains(&d.check.as_str()) {
                entry.also.push(&d.check);
            }
            continue;
        }
        // Two failed tests are two problems, however alike their messages
        // (jest's `expect(received).toBe(expected)` banner).
        let fingerprint = format!(
            "{}\u{0}{}\u{0}{}",
            d.check,
            d.fingerprint(),
            d.test.as_deref().unwrap_or("")
        );
        if let Some(&at) = by_fingerprint.get(&fingerprint) {
            entries[at].repeats += 1;
            by_place.insert(place, at);
            continue;
        }
        by_fingerprint.insert(fingerprint, entries.len());
        by_place.insert(place, entries.len());
        entries.push(Entry {
            d,
            cause,
            follow_on: 0,
            repeats: 0,
            also: Vec::new(),
            not_kept: 0,
        });
    }
    let mut entries = within_limit(entries, limit);
    let mut told: Vec<&str> = Vec::new();
    for entry in &mut entries {
        if !told.contains(&entry.d.check.as_str()) {
            told.push(&entry.d.check);
            entry.not_kept = not_kept(&entry.d.check);
        }
    }
    entries.iter().map(line).collect()
}

/// The `limit` entries the summary keeps, in their order: first one new
/// error of each check that has one, then the most important of the rest.
/// Taken strictly in order, a check with a hundred errors fills every line
/// and a second failing check, its own error ranked after them, is not
/// named at all: whoever reads only the summary fixes the first and runs
/// again to learn of the second.
fn within_limit(entries: Vec<Entry<'_>>, limit: usize) -> Vec<Entry<'_>> {
    let mut keep = vec![false; entries.len()];
    let mut named: Vec<&str> = Vec::new();
    let mut room = limit;
    for (i, entry) in entries.iter().enumerate() {
        if room == 0 {
            break;
        }
        let d = entry.d;
        if d.severity == Severity::Error && !d.pre_existing && !named.contains(&d.check.as_str()) {
            keep[i] = true;
            room -= 1;
            named.push(&d.check);
            named.extend(&entry.also);
        }
    }
    for kept in &mut keep {
        if room == 0 {
            break;
        }
        if !*kept {
            *kept = true;
            room -= 1;
        }
    }
    entries
        .into_iter()
        .zip(keep)
        .filter_map(|(entry, kept)| kept.then_some(entry))
        .collect()
}

/// A problem at its place, whichever check reported it: its file, line,
/// column, code and message's first line (the tool is left out: `cargo
/// clippy` and `cargo test` name themselves differently).
type PlaceKey<'a> = (
    Option<&'a str>,
    Option<u32>,
    Option<u32>,
    Option<&'a str>,
    &'a str,
);

fn place_key(d: &Diagnostic) -> PlaceKey<'_> {
    (
        d.file.as_deref(),
        d.line,
        d.column,
        d.code.as_deref(),
        d.message.lines().next().unwrap_or("").trim(),
    )
}

/// A message's first line that is not blank, with the values an assertion's banner stands
/// for when the lines under it give them: jest's
/// `expect(received).toBe(expected) // Object.is equality` says nothing
/// of what was expected without its `Expected: 4` and `Received: 3`.
fn headline(message: &str) -> Cow<'_, str> {
    // A message can open with an empty line (a test runner's banner): the
    // first line that says something stands for it.
    let mut lines = message.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next().unwrap_or("").trim();
    let values: Vec<String> = lines
        .take(8)
        .map(str::trim)
        .filter(|l| is_value_line(l))
        .take(2)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    if values.is_empty() {
        Cow::Borrowed(first)
    } else {
        Cow::Owned(format!("{first}: {}", values.join("; ")))
    }
}

/// `Expected: 4`, `Received number of calls:    0`: a value an assertion
/// compared, as jest and its kin print it under their banner.
fn is_value_line(line: &str) -> bool {
    let Some((label, value)) = line.split_once(':') else {
        return false;
    };
    (label.starts_with("Expected") || label.starts_with("Received"))
        && label.chars().all(|c| c.is_ascii_alphabetic() || c == ' ')
        && !value.trim().is_empty()
}

/// The summary's line for `d` when it stands alone (no other check
/// reported it, nothing repeats or follows it): `file:line code message
/// (check)`. A report that says several such findings in one line finds
/// theirs by it.
pub fn summary_line(d: &Diagnostic) -> String {
    line(&Entry {
        d,
        cause: is_root_cause(d),
        follow_on: 0,
        repeats: 0,
        also: Vec::new(),
        not_kept: 0,
    })
}

/// `file:line code message (check)`.
fn line(entry: &Entry<'_>) -> String {
    let d = entry.d;
    let mut out = String::new();
    if let Some(file) = &d.file {
        out.push_str(file);
        if let Some(l) = d.line {
            out.push_str(&format!(":{l}"));
        }
        out.push(' ');
    }
    if let Some(code) = code_apart(d) {
        out.push_str(code);
        out.push(' ');
    }
    out.push_str(&shorten(&headline(&d.message), MAX_LINE_CHARS));
    let mut notes = Vec::new();
    if !d.check.is_empty() {
        let mut checks = vec![d.check.as_str()];
        checks.extend(&entry.also);
        notes.push(checks.join(", "));
    }
    // A failed test's message is often its assertion's banner: the test's
    // name says which one failed.
    // (jest's and vitest's `failed to run` stands for a test file, not a
    // test: the file says it.)
    if let Some(test) = d
        .test
        .as_deref()
        .filter(|t| !t.to_lowercase().contains("failed to run"))
    {
        notes.push(format!("test `{}`", shorten(test.trim(), 200)));
    }
    if d.pre_existing {
        notes.push("pre-existing".to_string());
    }
    if entry.repeats > 0 {
        notes.push(format!("{} more like it", entry.repeats));
    }
    if entry.follow_on > 0 {
        notes.push(format!("+{} follow-on errors", entry.follow_on));
    }
    if entry.not_kept > 0 {
        notes.push(format!(
            "{} more found past the check's limit of {MAX_DIAGNOSTICS_PER_CHECK}, not kept",
            entry.not_kept
        ));
    }
    if !notes.is_empty() {
        out.push_str(&format!(" ({})", notes.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(check: &str, file: &str, line: u32, code: &str, message: &str) -> Diagnostic {
        Diagnostic {
            check: check.into(),
            tool: "t".into(),
            file: Some(file.into()),
            line: Some(line),
            code: Some(code.into()),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn an_unresolved_import_comes_first_and_its_consequences_collapse() {
        let mut warning = error("lint", "a.ts", 1, "no-var", "Unexpected var");
        warning.severity = Severity::Warning;
        let diagnostics = vec![
            warning,
            error(
                "typecheck",
                "a.ts",
                9,
                "TS2339",
                "Property 'x' does not exist",
            ),
            error(
                "typecheck",
                "a.ts",
                12,
                "TS2339",
                "Property 'y' does not exist",
            ),
            error(
                "typecheck",
                "a.ts",
                2,
                "TS2307",
                "Cannot find module './gone'",
            ),
            error(
                "typecheck",
                "b.ts",
                4,
                "TS2322",
                "Type 'string' is not assignable",
            ),
            error(
                "typecheck",
                "c.ts",
                4,
                "TS2322",
                "Type 'string' is not assignable",
            ),
        ];
        let lines = summarize(&diagnostics, |_| Some(0), 5);
        assert_eq!(
            lines,
            [
                "a.ts:2 TS2307 Cannot find module './gone' (typecheck; +2 follow-on errors)",
                "b.ts:4 TS2322 Type 'string' is not assignable (typecheck)",
                "c.ts:4 TS2322 Type 'string' is not assignable (typecheck)",
                "a.ts:1 no-var Unexpected var (lint)",
            ]
        );
    }

    #[test]
    fn a_huge_message_makes_a_summary_line_of_bounded_length() {
        // One 3 MB line of output: the summary is what people and agents
        // read first, one line each.
        let huge = "E".repeat(100_000);
        let diagnostics = vec![error("big", "a.c", 1, "X1", &format!("{huge}\nmore"))];
        let lines = summarize(&diagnostics, |_| Some(0), 5);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].chars().count() < 600, "{}", lines[0].len());
        assert!(lines[0].starts_with("a.c:1 X1 EEEE"), "{}", &lines[0][..20]);
        assert!(
            lines[0].ends_with("E… (big)"),
            "{}",
            &lines[0][lines[0].len() - 20..]
        );
        // Cut on a character boundary.
        let wide = "é".repeat(1000);
        let diagnostics = vec![error("big", "a.c", 1, "X1", &wide)];
        let line = &summarize(&diagnostics, |_| Some(0), 5)[0];
        assert!(line.contains("éé…"), "{line}");
    }

    #[test]
    fn repeats_count_once_and_new_problems_come_before_old_ones() {
        let mut old = error("lint", "a.py", 1, "F401", "`os` imported but unused");
        old.pre_existing = true;
        let diagnostics = vec![
            old,
            error("lint", "b.py", 3, "E501", "line too long (90 > 79)"),
            error("lint", "b.py", 7, "E501", "line too long (95 > 79)"),
        ];
        let lines = summarize(&diagnostics, |_| Some(0), 1);
        assert_eq!(
            lines,
            ["b.py:3 E501 line too long (90 > 79) (lint; 1 more like it)"]
        );
        let lines = summarize(
            &diagnostics,
            |d| (d.file.as_deref() != Some("b.py")).then_some(0),
            5,
        );
        assert_eq!(
            lines,
            ["a.py:1 F401 `os` imported but unused (lint; pre-existing)"]
        );
    }

    #[test]
    fn one_problem_several_checks_report_is_one_line_naming_them_all() {
        // One compile error, printed by the tests, lint and build checks.
        let mut diagnostics = Vec::new();
        for check in ["tests", "lint", "build"] {
            let mut d = error(check, "src/lib.rs", 4, "E0425", "cannot find value `x`");
            d.column = Some(5);
            d.tool = if check == "lint" { "clippy" } else { "cargo" }.into();
            diagnostics.push(d);
        }
        let mut other = error("tests", "src/lib.rs", 9, "E0599", "no method named `y`");
        other.column = Some(3);
        diagnostics.push(other);
        let lines = summarize(&diagnostics, |_| Some(0), 5);
        assert_eq!(
            lines,
            [
                "src/lib.rs:4 E0425 cannot find value `x` (tests, lint, build)",
                "src/lib.rs:9 E0599 no method named `y` (tests)",
            ]
        );
    }

    #[test]
    fn a_test_file_that_failed_to_run_comes_before_the_failed_tests() {
        let mut diagnostics: Vec<Diagnostic> = (1..=6)
            .map(|n| {
                let mut d = error("tests", "a.test.js", n, "", &format!("test {n} broke"));
                d.code = None;
                d.test = Some(format!("t{n}"));
                d
            })
            .collect();
        let mut broken = error(
            "tests",
            "broken.test.js",
            3,
            "",
            "SyntaxError: Unexpected token",
        );
        broken.code = None;
        broken.test = Some("Test suite failed to run".into());
        diagnostics.push(broken);
        let lines = summarize(&diagnostics, |_| Some(0), 5);
        assert_eq!(
            lines[0],
            "broken.test.js:3 SyntaxError: Unexpected token (tests)"
        );
    }

    #[test]
    fn findings_past_a_checks_limit_are_told_on_its_first_line() {
        // 1,500 alike errors of which 1,000 were kept: the summary says
        // the 500 more, once, on the check's first line.
        let mut diagnostics: Vec<Diagnostic> = (1..=1000)
            .map(|n| error("lint", "a.c", n, "E1", "e"))
            .collect();
        diagnostics.push(error("lint", "b.c", 1, "E2", "other"));
        diagnostics.push(error("build", "c.c", 1, "E3", "x"));
        let not_kept = |check: &str| if check == "lint" { 500 } else { 0 };
        let lines = summarize_counted(&diagnostics, |_| Some(0), not_kept, 5);
        assert_eq!(
            lines,
            [
                "a.c:1 E1 e (lint; 999 more like it; 500 more found past the check's limit of 1000, not kept)",
                "b.c:1 E2 other (lint)",
                "c.c:1 E3 x (build)",
            ]
        );
    }

    #[test]
    fn a_second_failing_check_gets_a_line_before_the_firsts_later_errors() {
        let mut diagnostics: Vec<Diagnostic> = (1..=8)
            .map(|n| {
                error(
                    "build",
                    &format!("f{n}.c"),
                    n,
                    "E1",
                    &format!("problem {n}"),
                )
            })
            .collect();
        diagnostics.push(error("link", "phasegate.toml", 3, "check-failed", "failed"));
        let mut old = error("lint", "old.c", 1, "W9", "old");
        old.pre_existing = true;
        diagnostics.push(old);
        let lines = summarize(&diagnostics, |_| Some(0), 3);
        assert_eq!(
            lines,
            [
                "f1.c:1 E1 problem 1 (build)",
                "f2.c:2 E1 problem 2 (build)",
                "phasegate.toml:3 check-failed failed (link)",
            ]
        );
        // Fewer lines than failing checks: the first in order.
        let lines = summarize(&diagnostics, |_| Some(0), 1);
        assert_eq!(lines, ["f1.c:1 E1 problem 1 (build)"]);
    }

    #[test]
    fn a_message_that_opens_with_a_blank_line_shows_its_first_words() {
        let diagnostics = vec![error("tests", "t.py", 4, "X", "\n  \nassert 1 == 2\nmore")];
        let lines = summarize(&diagnostics, |_| Some(0), 5);
        assert_eq!(lines, ["t.py:4 X assert 1 == 2 (tests)"]);
    }

    #[test]
    fn two_failed_tests_with_one_message_are_two_lines() {
        let mut diagnostics = Vec::new();
        for (line, test) in [(2, "adds"), (6, "subtracts")] {
            let mut d = error(
                "tests",
                "a.test.js",
                line,
                "",
                "expect(received).toBe(expected) // Object.is equality",
            );
            d.code = None;
            d.test = Some(test.into());
            diagnostics.push(d);
        }
        let lines = summarize(&diagnostics, |_| Some(0), 5);
        assert_eq!(lines.len(), 2, "{lines:?}");
    }

    #[test]
    fn an_assertions_banner_is_followed_by_the_values_it_compared() {
        // jest 30's message for a failed `toBe` (fixtures/diagnostics/jest30)
        // and for a `toHaveBeenCalled` with the spacing jest aligns it by.
        let mut to_be = error(
            "tests",
            "src/math.test.js",
            8,
            "",
            "expect(received).toBe(expected) // Object.is equality\nExpected: 4\nReceived: 3",
        );
        to_be.code = None;
        let mut called = error(
            "tests",
            "src/spy.test.js",
            5,
            "",
            "expect(jest.fn()).toHaveBeenCalled()\n\nExpected number of calls: >= 1\nReceived number of calls:    0",
        );
        called.code = None;
        // A message whose later lines are not values keeps its first line.
        let mut other = error("tests", "src/x.test.js", 1, "", "boom\nat foo (x.js:1)");
        other.code = None;
        let lines = summarize(&[to_be, called, other], |_| Some(0), 5);
        assert_eq!(
            lines,
            [
                "src/math.test.js:8 expect(received).toBe(expected) // Object.is equality: Expected: 4; Received: 3 (tests)",
                "src/spy.test.js:5 expect(jest.fn()).toHaveBeenCalled(): Expected number of calls: >= 1; Received number of calls: 0 (tests)",
                "src/x.test.js:1 boom (tests)",
            ]
        );
    }
}
