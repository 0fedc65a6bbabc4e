//! JUnit XML, as GitLab and most CI systems read it: one testsuite per
//! phase, one testcase per check, and one per failed test for test checks
//! whose parser knows the test names; failures carry their diagnostics.
//! A check that only warns passes, its findings in its `system-out`: a
//! failure is one the gate counted. Names are unique, and each failure's text is bounded so the report
//! stays inside GitLab's artifact limits.

use std::collections::HashSet;
use std::io::{self, Write};

use crate::diagnostics::{code_apart, cut_bytes, shorten, Diagnostic, MAX_LINE_CHARS};
use crate::gate::{CheckResult, CheckStatus, Effect, Verdict};

/// Bytes of diagnostics kept in one failure's text.
const MAX_FAILURE_BYTES: usize = 64 * 1024;

/// Escapes text for XML content and attributes, writing the characters
/// XML 1.0 cannot hold as visible escapes (`\x1b`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            // XML 1.0 cannot hold these at all, not even as references:
            // shown as escapes, so a reader sees that something was there.
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            '\u{fffe}' | '\u{ffff}' => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

fn line(d: &Diagnostic) -> String {
    // A line of no file is no place (`:7`).
    let mut out = if d.file.is_some() {
        d.location()
    } else {
        String::new()
    };
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(d.severity.as_str());
    // A code the message begins with (`ModuleNotFoundError: ...`) is said
    // there.
    if let Some(code) = code_apart(d) {
        out.push(' ');
        out.push_str(code);
    }
    if let Some(test) = &d.test {
        out.push_str(&format!(" [{test}]"));
    }
    out.push(' ');
    out.push_str(&super::text::message(d));
    if d.pre_existing {
        out.push_str(" (pre-existing)");
    }
    out
}

fn body(diagnostics: &[&Diagnostic]) -> String {
    let mut out = String::new();
    for (i, d) in diagnostics.iter().enumerate() {
        let mut next = line(d);
        if out.len() + next.len() > MAX_FAILURE_BYTES {
            // The first finding is shown even when it alone is over the
            // bound, cut to it: a failure whose text names none of its
            // findings explains nothing.
            if i > 0 {
                out.push_str(&format!("… and {} more\n", diagnostics.len() - i));
                break;
            }
            cut_bytes(&mut next, MAX_FAILURE_BYTES - 64);
            next.push_str(" … (cut)");
        }
        out.push_str(&next);
        out.push('\n');
    }
    out
}

/// A failure's `message` attribute: the first line of its first finding,
/// as long as a line of the human report; the failure's text has the rest.
fn headline(d: &Diagnostic) -> String {
    shorten(&super::text::first_line(d), MAX_LINE_CHARS).into_owned()
}

struct Case {
    classname: String,
    name: String,
    time: f64,
    /// `failure` or `error` with its message and text; `skipped` with
    /// its message and, when it has one, its output; `system-out` (a
    /// passing case) with its text.
    outcome: Option<(&'static str, String, String)>,
}

fn unique(name: String, seen: &mut HashSet<String>) -> String {
    if seen.insert(name.clone()) {
        return name;
    }
    // Bounded by the names already taken: one of them must be free.
    (2..=seen.len() + 1)
        .map(|n| format!("{name} ({n})"))
        .find(|candidate| seen.insert(candidate.clone()))
        .unwrap_or(name)
}

fn cases(verdict: &Verdict, phase: &str) -> Vec<Case> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for check in &verdict.checks {
        let own: Vec<&Diagnostic> = verdict
            .diagnostics
            .iter()
            .filter(|d| d.check == check.name)
            .collect();
        let reason = check.reason.clone().unwrap_or_default();
        // A test check whose parser named the failed tests: one case each.
        // A test is its file and its name (pytest names `test_x` in two
        // files alike), in the order the tests first come up, wherever
        // their failures lie in the output. A check that only warns does
        // not fail, and neither do its tests: its case's output lists them.
        let mut tests: Vec<(Option<&str>, &str)> = Vec::new();
        if check.effect != Effect::Warn {
            for d in &own {
                if let Some(test) = d.test.as_deref() {
                    let key = (d.file.as_deref(), test);
                    if !tests.contains(&key) {
                        tests.push(key);
                    }
                }
            }
        }
        let mut outcome = if tests.is_empty() || check.status != CheckStatus::Failed {
            outcome(check, &own, &reason)
        } else {
            Some(tested_outcome(check, &own, &reason, tests.len()))
        };
        if check.dropped_diagnostics > 0 {
            outcome = Some(with_not_kept(outcome, check));
        }
        out.push(Case {
            classname: phase.to_string(),
            name: unique(check.name.clone(), &mut seen),
            #[expect(clippy::cast_precision_loss, reason = "seconds for people")]
            time: check.duration_ms as f64 / 1000.0,
            outcome,
        });
        for &(file, test) in &tests {
            let failures: Vec<&Diagnostic> = own
                .iter()
                .copied()
                .filter(|d| d.test.as_deref() == Some(test) && d.file.as_deref() == file)
                .collect();
            let message = headline(failures[0]);
            // The file goes into the name only where the name alone is
            // ambiguous.
            let shared = tests.iter().filter(|(_, t)| *t == test).count() > 1;
            let name = match file {
                Some(file) if shared => format!("{}::{file}::{test}", check.name),
                _ => format!("{}::{test}", check.name),
            };
            out.push(Case {
                classname: format!("{phase}.{}", check.name),
                name: unique(name, &mut seen),
                time: 0.0,
                outcome: Some(("failure", message, body(&failures))),
            });
        }
    }
    // phasegate's own findings (a run that stopped, files a check
    // modified, an invalid handoff): one case, so the failure shows.
    let own: Vec<&Diagnostic> = verdict
        .diagnostics
        .iter()
        .filter(|d| d.check.is_empty())
        .collect();
    if !own.is_empty() {
        let (kind, message) = match &verdict.error {
            Some(error) => ("error", error.message.clone()),
            None => ("failure", headline(own[0])),
        };
        out.push(Case {
            classname: phase.to_string(),
            name: unique("phasegate".to_string(), &mut seen),
            time: 0.0,
            outcome: Some((kind, message, body(&own))),
        });
    }
    out
}

fn outcome(
    check: &CheckResult,
    own: &[&Diagnostic],
    reason: &str,
) -> Option<(&'static str, String, String)> {
    // A check that only warns (on_failure = "warn", or every error
    // pre-existing) lets the gate proceed: a failed case would show GitLab
    // and Jenkins a failure the gate did not count, and a run that passes
    // with red tests. It passes, its output says what it found; if its
    // program is missing it did not run, and is skipped.
    if check.effect == Effect::Warn {
        let headline = format!(
            "{} ({reason}) — it does not block the gate",
            check.status.as_str()
        );
        return Some(match check.status {
            CheckStatus::Missing => ("skipped", headline, String::new()),
            _ => (
                "system-out",
                String::new(),
                format!("{headline}\n{}", body(own)),
            ),
        });
    }
    // A check that could not finish under the fast profile (timed out,
    // crashed) lets the gate proceed too, and exit 0 must not come with a
    // red test page: it was not verified, so it is skipped, its message
    // says why and that the profile let it through, its output what it
    // found.
    if check.effect == Effect::FailOpen {
        return Some((
            "skipped",
            format!(
                "{} ({reason}) — verification did not finish; the fast profile lets it through",
                check.status.as_str()
            ),
            body(own),
        ));
    }
    match check.status {
        CheckStatus::Passed => None,
        CheckStatus::Skipped => Some(("skipped", reason.to_string(), String::new())),
        CheckStatus::Failed | CheckStatus::Warned => Some((
            "failure",
            format!("{} ({reason})", check.status.as_str()),
            body(own),
        )),
        CheckStatus::Missing | CheckStatus::TimedOut | CheckStatus::Crashed => Some((
            "error",
            format!("{} ({reason})", check.status.as_str()),
            body(own),
        )),
    }
}

/// `outcome` with what `check` found past its limit of findings told at
/// the end of its text: a failure that lists a thousand findings must
/// not read as all there were. A passing check tells it in its output.
fn with_not_kept(
    outcome: Option<(&'static str, String, String)>,
    check: &CheckResult,
) -> (&'static str, String, String) {
    let note = super::not_kept(check);
    match outcome {
        None => ("system-out", String::new(), note),
        Some((kind, message, mut text)) => {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&note);
            text.push('\n');
            (kind, message, text)
        }
    }
}

/// The case of a test check that failed through tests that have cases of
/// their own: each failure is counted once, in its test's case, so a CI
/// page shows as many failures as tests failed. The check's case fails
/// only for what no test accounts for (a build error, a crash outside any
/// test); otherwise its output points at its tests.
fn tested_outcome(
    check: &CheckResult,
    own: &[&Diagnostic],
    reason: &str,
    tests: usize,
) -> (&'static str, String, String) {
    let unattributed: Vec<&Diagnostic> = own
        .iter()
        .copied()
        .filter(|d| d.test.is_none() && d.severity == crate::diagnostics::Severity::Error)
        .collect();
    if unattributed.is_empty() {
        return (
            "system-out",
            String::new(),
            format!(
                "{} ({reason}): {tests} failed test(s), each its own case `{}::...`",
                check.status.as_str(),
                check.name
            ),
        );
    }
    (
        "failure",
        format!("{} ({reason})", check.status.as_str()),
        body(&unattributed),
    )
}

pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let phase = verdict
        .phase
        .clone()
        .unwrap_or_else(|| "phasegate".to_string());
    let cases = cases(verdict, &phase);
    let count = |kind: &str| {
        cases
            .iter()
            .filter(|c| c.outcome.as_ref().is_some_and(|o| o.0 == kind))
            .count()
    };
    // From +0: an empty float sum is -0, which prints as "-0.000".
    let time: f64 = cases.iter().map(|c| c.time).fold(0.0, |all, t| all + t);
    let (failures, errors, skipped) = (count("failure"), count("error"), count("skipped"));
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        // The JUnit schema has no `skipped` count on the outer element.
        r#"<testsuites name="phasegate" tests="{}" failures="{failures}" errors="{errors}" time="{time:.3}">"#,
        cases.len()
    )?;
    writeln!(
        out,
        r#"  <testsuite name="{}" tests="{}" failures="{failures}" errors="{errors}" skipped="{skipped}" time="{time:.3}">"#,
        escape(&phase),
        cases.len()
    )?;
    // Which files were checked: the range and its commits, as the
    // verdict's `selection` names them.
    let selection = verdict
        .selection
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(io::Error::other)?;
    if let Some(serde_json::Value::Object(fields)) = selection {
        writeln!(out, "    <properties>")?;
        for (name, value) in fields {
            let value = match value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
            writeln!(
                out,
                r#"      <property name="selection.{}" value="{}"/>"#,
                escape(&name),
                escape(&value)
            )?;
        }
        writeln!(out, "    </properties>")?;
    }
    for case in &cases {
        let open = format!(
            r#"    <testcase classname="{}" name="{}" time="{:.3}""#,
            escape(&case.classname),
            escape(&case.name),
            case.time
        );
        match &case.outcome {
            None => writeln!(out, "{open}/>")?,
            Some(("skipped", message, text)) => {
                writeln!(out, "{open}>")?;
                writeln!(out, r#"      <skipped message="{}"/>"#, escape(message))?;
                if !text.is_empty() {
                    writeln!(out, "      <system-out>{}</system-out>", escape(text))?;
                }
                writeln!(out, "    </testcase>")?;
            }
            Some(("system-out", _, text)) => {
                writeln!(out, "{open}>")?;
                writeln!(out, "      <system-out>{}</system-out>", escape(text))?;
                writeln!(out, "    </testcase>")?;
            }
            Some((kind, message, text)) => {
                writeln!(out, "{open}>")?;
                writeln!(
                    out,
                    r#"      <{kind} message="{}" type="{kind}">{}</{kind}>"#,
                    escape(message),
                    escape(text)
                )?;
                writeln!(out, "    </testcase>")?;
            }
        }
    }
    writeln!(out, "  </testsuite>")?;
    writeln!(out, "</testsuites>")
}
