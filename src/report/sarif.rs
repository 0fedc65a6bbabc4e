//! SARIF 2.1.0, as GitHub code scanning ingests it: the tool with its
//! version, one rule per code (with a description and, for tools that
//! document their codes, a help link), every result located (a failure
//! nothing could parse points at its check in `phasegate.toml`), stable
//! `partialFingerprints`, columns declared as code points. Within GitHub's
//! limits: the most important results are kept and the rest counted.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{json, Value};

use crate::diagnostics::{Diagnostic, Severity};
use crate::gate::{CheckResult, CheckStatus, Verdict};

/// GitHub code scanning takes at most 25,000 results per run.
pub const MAX_RESULTS: usize = 25_000;
/// GitHub takes at most 10 MB of gzipped SARIF; JSON like this compresses
/// well over 5 to 1, so an uncompressed 40 MB stays inside it.
const MAX_BYTES: usize = 40 * 1024 * 1024;

/// The rule a diagnostic belongs to: `tool/code`, or `tool/check` when the
/// tool gave no code.
pub fn rule_id(d: &Diagnostic) -> String {
    let tool = tool(d);
    match (&d.code, d.check.is_empty()) {
        (Some(code), _) => format!("{tool}/{code}"),
        (None, false) => format!("{tool}/{}", d.check),
        (None, true) => tool.to_string(),
    }
}

/// Where a tool documents a code, for the ones that have a page per code.
fn help_uri(d: &Diagnostic) -> Option<String> {
    let code = d.code.as_deref()?;
    let tool = d.parser.map_or(d.tool.as_str(), |p| p.name);
    if let Some(lint) = code.strip_prefix("clippy::") {
        return Some(format!(
            "https://rust-lang.github.io/rust-clippy/master/index.html#{lint}"
        ));
    }
    if tool == "cargo" && code.len() == 5 && code.starts_with('E') {
        return Some(format!("https://doc.rust-lang.org/error_codes/{code}.html"));
    }
    if code.starts_with("SC") && code[2..].chars().all(|c| c.is_ascii_digit()) {
        return Some(format!("https://www.shellcheck.net/wiki/{code}"));
    }
    if tool == "eslint" && !code.contains('/') {
        return Some(format!("https://eslint.org/docs/latest/rules/{code}"));
    }
    None
}

/// A path as a URI reference: bytes outside the unreserved set and `/`
/// percent-encoded (spaces, `#`, `%`, non-ASCII).
pub fn encode_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What the rule of `d` is, short and in full. A rule stands for every
/// result under it (phasegate's `check-failed` for every check that
/// failed, `tool/E0308` wherever rustc says it), so it is described from
/// what the rule id holds, never from one result's message: each result
/// carries its own.
fn describe_rule(d: &Diagnostic) -> (String, String) {
    let tool = tool(d);
    if tool == "phasegate" {
        if let Some(own) = d.code.as_deref().and_then(own_rule) {
            return own;
        }
    }
    match (&d.code, d.check.is_empty()) {
        (Some(code), _) => (
            format!("{tool} reports `{code}`"),
            format!(
                "Findings {tool} reports as `{code}`. Each result's message says what it found{}.",
                if help_uri(d).is_some() {
                    "; the help link explains the code"
                } else {
                    ""
                }
            ),
        ),
        (None, false) => (
            format!("{tool} finding in the check `{}`", d.check),
            format!(
                "Findings {tool} reports without a code in the check `{}`. Each result's message says what it found.",
                d.check
            ),
        ),
        (None, true) => (
            format!("{tool} finding"),
            format!("Findings {tool} reports without a code. Each result's message says what it found."),
        ),
    }
}

/// The rules of phasegate's own findings, by code.
fn own_rule(code: &str) -> Option<(String, String)> {
    if let Some(field) = code.strip_prefix("handoff:") {
        return Some((
            format!("Invalid handoff document: `{field}`"),
            format!(
                "A handoff document's frontmatter breaks a rule about `{field}`. The result says which rule, at its line in the document."
            ),
        ));
    }
    let (short, full) = match code {
        "check-failed" => (
            "A check failed",
            "A check exited with a failure status and phasegate found no error in its output to point at. The result is located at the check in phasegate.toml and carries the last lines of its output.",
        ),
        "missing-tool" => (
            "A check's program is not installed",
            "A check's program was not found on PATH, so the check could not run. Install it, or set the check's `on_missing`.",
        ),
        "timeout" => (
            "A check timed out",
            "A check ran longer than its `timeout`; its process group was killed and verification did not finish.",
        ),
        "crash" => (
            "A check crashed",
            "A check was killed by a signal before it finished; verification did not finish.",
        ),
        "spawn-failed" => (
            "A check could not be started",
            "phasegate could not start a check's program; verification did not finish.",
        ),
        "handoff-warning" => (
            "A handoff document has a problem that does not fail it",
            "A handoff document's frontmatter has something phasegate does not act on, such as an unknown field (a misspelt one is ignored). It does not fail the gate.",
        ),
        "interrupted" => (
            "A check was interrupted",
            "The run was interrupted before a check finished; verification did not finish.",
        ),
        "verifier-fail" => (
            "A verifier answered \"fail\"",
            "An external verifier check answered \"fail\" without a finding of its own.",
        ),
        "verifier-malformed" => (
            "A verifier's answer could not be read",
            "An external verifier check did not print one JSON answer phasegate could read; verification did not finish.",
        ),
        "verifier-error" => (
            "A verifier failed",
            "An external verifier check failed before it could answer; verification did not finish.",
        ),
        "files-modified" => (
            "A check modified files",
            "A check changed files it was meant only to check, so what was checked is not what was selected.",
        ),
        "log-write-failed" => (
            "A check's log could not be written",
            "phasegate could not write a check's full output to its log in the run directory.",
        ),
        "config-error" => (
            "Invalid phasegate configuration",
            "phasegate.toml could not be used, so nothing was checked. The result points at the problem.",
        ),
        "usage-error" => (
            "phasegate was invoked wrongly",
            "phasegate's command line could not be used, so nothing was checked.",
        ),
        "internal-error" => (
            "phasegate could not finish",
            "phasegate failed internally before the checks could finish, so the verdict is incomplete.",
        ),
        _ => return None,
    };
    Some((short.to_string(), full.to_string()))
}

/// Who the rule's findings come from, and its code.
fn help_text(d: &Diagnostic) -> String {
    let tool = tool(d);
    match &d.code {
        Some(code) => format!("Reported by {tool} as `{code}`."),
        None if !d.check.is_empty() => {
            format!("Reported by {tool} in the check `{}`.", d.check)
        }
        None => format!("Reported by {tool}."),
    }
}

fn tool(d: &Diagnostic) -> &str {
    if d.tool.is_empty() {
        "phasegate"
    } else {
        &d.tool
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note | Severity::Info => "note",
    }
}

/// Most important first: errors before warnings before notes, the
/// change's own before pre-existing ones, then as found. The indexes of
/// `diagnostics` in that order.
fn by_importance(diagnostics: &[&Diagnostic]) -> Vec<usize> {
    let mut ordered: Vec<usize> = (0..diagnostics.len()).collect();
    ordered.sort_by_key(|&i| (diagnostics[i].severity, diagnostics[i].pre_existing, i));
    ordered
}

/// The result of `d`, occurrence `nth` of its finding. `let_through`: its
/// check held nothing back (see `report::let_through`), so an error is a
/// `warning` result, as GitHub code scanning fails a pull request on an
/// `error` one; the tool's own word stays in `properties.severity`.
fn result(d: &Diagnostic, nth: usize, let_through: bool) -> Value {
    // Every result needs a place: a finding with none is about the gate
    // itself and points at its configuration, at its top: a line or a
    // column of no file says nothing about any line of phasegate.toml.
    let (file, line) = match &d.file {
        Some(file) => (file.as_str(), d.line),
        None => ("phasegate.toml", None),
    };
    // A path outside the repository (a system header) is an absolute
    // `file://` URI; the rest are relative to the source root.
    let artifact = if file.starts_with('/') {
        json!({ "uri": format!("file://{}", encode_uri(file)) })
    } else {
        json!({ "uri": encode_uri(file), "uriBaseId": "%SRCROOT%" })
    };
    let mut region = serde_json::Map::new();
    region.insert("startLine".into(), json!(line.unwrap_or(1)));
    if line.is_some() {
        if let Some(column) = d.column {
            region.insert("startColumn".into(), json!(column));
        }
        if let Some(end) = d.end_line {
            region.insert("endLine".into(), json!(end));
        }
        if let Some(end) = d.end_column {
            region.insert("endColumn".into(), json!(end));
        }
    }
    let mut properties = json!({ "check": d.check, "tool": d.tool, "origin": d.origin });
    if let Some(test) = &d.test {
        properties["test"] = json!(test);
    }
    let severity = match d.severity {
        Severity::Error if let_through => {
            properties["severity"] = json!(d.severity);
            properties["blocking"] = json!(false);
            Severity::Warning
        }
        other => other,
    };
    json!({
        "ruleId": rule_id(d),
        "level": level(severity),
        "message": { "text": super::text::message(d) },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": region,
            }
        }],
        // One id per occurrence: GitHub takes results with one
        // fingerprint for one alert, and would show two alike as one.
        "partialFingerprints": { "phasegate/v1": super::occurrence_id(d, nth) },
        "baselineState": if d.pre_existing { "unchanged" } else { "new" },
        "properties": properties,
    })
}

/// The SARIF log for `verdict`.
pub fn log(verdict: &Verdict) -> Value {
    // The handoff documents' warnings are notes: they decide nothing.
    let warnings = super::handoff_warnings(verdict, Severity::Note);
    let found: Vec<&Diagnostic> = verdict.diagnostics.iter().chain(&warnings).collect();
    let nth = super::occurrences(&found);
    let order = by_importance(&found);
    let mut results = Vec::new();
    let mut size = 0usize;
    for &i in order.iter().take(MAX_RESULTS) {
        let r = result(found[i], nth[i], super::let_through(verdict, found[i]));
        size += r.to_string().len();
        if size > MAX_BYTES {
            break;
        }
        results.push(r);
    }
    let cut = found.len() - results.len();
    let mut rules: BTreeMap<String, Value> = BTreeMap::new();
    for d in order.iter().take(results.len()).map(|&i| found[i]) {
        rules.entry(rule_id(d)).or_insert_with(|| {
            let (short, full) = describe_rule(d);
            let mut rule = json!({
                "id": rule_id(d),
                "shortDescription": { "text": short },
                // GitHub code scanning requires a full description too.
                "fullDescription": { "text": full },
                "help": { "text": help_text(d) },
                "defaultConfiguration": { "level": level(d.severity) },
            });
            if let Some(uri) = help_uri(d) {
                rule["helpUri"] = json!(uri);
            }
            rule
        });
    }
    let mut notifications = Vec::new();
    if cut > 0 {
        notifications.push(json!({
            "level": "warning",
            "message": { "text": format!(
                "{cut} of {} results were cut to stay within GitHub's limits (25,000 results, 10 MB gzipped); the most important are kept",
                found.len()
            ) },
        }));
    }
    // What a check found past its limit was counted, never kept: no
    // result stands for it, so the invocation says how many there were.
    for check in verdict.checks.iter().filter(|c| c.dropped_diagnostics > 0) {
        notifications.push(json!({
            "level": "warning",
            "message": { "text": super::not_kept(check) },
        }));
    }
    if let Some(error) = &verdict.error {
        notifications.push(json!({
            "level": "error",
            "message": { "text": error.message },
        }));
    }
    // A check that could not finish (not installed, timed out, crashed)
    // leaves the analysis unfinished: SARIF 2.1.0 §3.20.14 says
    // `executionSuccessful` is then false, and the notification says why.
    let unfinished: Vec<&CheckResult> = verdict
        .checks
        .iter()
        .filter(|c| {
            matches!(
                c.status,
                CheckStatus::Missing | CheckStatus::TimedOut | CheckStatus::Crashed
            )
        })
        .collect();
    for check in &unfinished {
        notifications.push(json!({
            "level": "error",
            "message": { "text": format!(
                "check `{}` {}: {}",
                check.name,
                check.status.as_str(),
                check.reason.as_deref().unwrap_or("it did not finish")
            ) },
        }));
    }
    let successful = verdict.error.is_none() && unfinished.is_empty();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "phasegate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules.into_values().collect::<Vec<_>>(),
            } },
            "columnKind": "unicodeCodePoints",
            "results": results,
            "invocations": [{
                "executionSuccessful": successful,
                "toolExecutionNotifications": notifications,
            }],
            "properties": properties(verdict, cut),
        }],
    })
}

/// The run's own facts: its phase and status, how many results were cut,
/// how many findings the checks counted past their limit without keeping
/// them, and which files it checked (the range and its commits), as the
/// verdict gives them.
fn properties(verdict: &Verdict, cut: usize) -> Value {
    let mut properties = json!({
        "phase": verdict.phase,
        "status": verdict.status.as_str(),
        "resultsCut": cut,
    });
    let not_kept: usize = verdict.checks.iter().map(|c| c.dropped_diagnostics).sum();
    if not_kept > 0 {
        properties["findingsNotKept"] = json!(not_kept);
    }
    if let Some(selection) = &verdict.selection {
        properties["selection"] = json!(selection);
    }
    properties
}

pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &log(verdict)).map_err(io::Error::other)?;
    writeln!(out)
}
