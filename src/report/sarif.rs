//! SARIF 2.1.0, as GitHub code scanning ingests it: the tool with its
//! version, one rule per code (with a description and, for tools that
//! document their codes, a help link), every result located (a failure
//! nothing could parse points at its check in `phasegate.toml`), stable
//! `partialFingerprints`, columns declared as code points. Within GitHub's
//! limits: the most important results are kept and the rest counted.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{json, Value};

use crate::diagnostics::{Diagnostic, OwnCode, Severity};
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

/// What a rule says: a short and a full description, and help that says
/// what to do about its findings.
struct RuleText {
    short: String,
    full: String,
    help: String,
}

/// What the rule of `d` is. A rule stands for every result under it
/// (phasegate's `check-failed` for every check that failed, `tool/E0308`
/// wherever rustc says it), so it is described from what the rule id
/// holds, never from one result's message: each result carries its own.
fn describe_rule(d: &Diagnostic) -> RuleText {
    let tool = tool(d);
    if tool == "phasegate" {
        if let Some(code) = d.code.as_deref() {
            if let Some(own) = OwnCode::of(code) {
                return own_rule(own, code);
            }
        }
    }
    let (short, full) = match (&d.code, d.check.is_empty()) {
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
    };
    let help = match &d.code {
        Some(code) => format!("Reported by {tool} as `{code}`."),
        None if !d.check.is_empty() => format!("Reported by {tool} in the check `{}`.", d.check),
        None => format!("Reported by {tool}."),
    };
    RuleText { short, full, help }
}

/// The rule of phasegate's own findings of `own`; `code` is the code as
/// the findings carry it (`handoff:<field>` for a handoff rule). A match
/// with no fallback arm: a code added to `OwnCode` does not build until it
/// is described here.
fn own_rule(own: OwnCode, code: &str) -> RuleText {
    let field = code.split_once(':').map_or("", |(_, field)| field);
    let (short, full, help): (String, &str, &str) = match own {
        OwnCode::Handoff => (
            format!("Invalid handoff document: `{field}`"),
            &format!("A handoff document's frontmatter breaks a rule about `{field}`. The result says which rule, at its line in the document."),
            "Correct the field at the line the result points at, as its message says; `phasegate handoff validate PATH` checks the document again, and `phasegate handoff feedback PATH` explains each error.",
        ),
        OwnCode::CheckFailed => (
            "A check failed".into(),
            "A check exited with a failure status and phasegate found no error in its output to point at. The result is located at the check in phasegate.toml and carries the last lines of its output.",
            "Read the end of the check's output in the result (its full log is in the run directory), fix what it reports, and run phasegate again. If the tool's errors should be located, set the check's `parser`.",
        ),
        OwnCode::MissingTool => (
            "A check's program is not installed".into(),
            "A check's program was not found on PATH, so the check could not run.",
            "Install the program the result names, or correct the check's `command`; where a missing program may pass, set the check's `on_missing`.",
        ),
        OwnCode::Timeout => (
            "A check timed out".into(),
            "A check ran longer than its `timeout`; its process group was killed and verification did not finish.",
            "Find out why the check hangs or is slow (its log holds what it printed), or raise the check's `timeout` in phasegate.toml, then run `phasegate resume`.",
        ),
        OwnCode::Crash => (
            "A check crashed".into(),
            "A check was killed by a signal before it finished; verification did not finish.",
            "Read the check's log for why it was killed (memory, a crash of the tool), fix it, and run `phasegate resume`.",
        ),
        OwnCode::SpawnFailed => (
            "A check could not be started".into(),
            "phasegate could not start a check's program; verification did not finish.",
            "Make the check's program executable and its `cwd` a directory that exists, as the result's message says, then run `phasegate resume`.",
        ),
        OwnCode::Interrupted => (
            "A check was interrupted".into(),
            "The run was interrupted before a check finished; verification did not finish.",
            "Run `phasegate resume` to run the checks that did not finish.",
        ),
        OwnCode::VerifierFail => (
            "A verifier answered \"fail\"".into(),
            "An external verifier check answered \"fail\" without a finding of its own.",
            "Read the verifier's log for its reasons, address them, and run phasegate again.",
        ),
        OwnCode::VerifierContradiction => (
            "A verifier answered \"pass\" but named errors".into(),
            "An external verifier check answered \"pass\" and named errors among its findings; the answer is read as a fail.",
            "Fix what the verifier's errors say; where the verifier does not mean an error, it gives that finding a lower severity (warning, note).",
        ),
        OwnCode::VerifierMalformed => (
            "A verifier's answer could not be read".into(),
            "An external verifier check did not print one JSON answer phasegate could read; verification did not finish.",
            "Make the verifier print one JSON object, `{\"verdict\": \"pass\" | \"fail\", \"findings\": [...]}`, and nothing else on standard output, then run `phasegate resume`.",
        ),
        OwnCode::VerifierError => (
            "A verifier failed".into(),
            "An external verifier check failed before it could answer; verification did not finish.",
            "Read the verifier's log for why it failed (an API error, a missing key), fix it, and run `phasegate resume`.",
        ),
        OwnCode::VerifierFindingUnreadable => (
            "A verifier's finding could not be read".into(),
            "An external verifier check answered \"fail\" with a finding phasegate could not read; the fail stands.",
            "Give each finding `file`, `line` (a number), `severity` and `message`, as the result's message says.",
        ),
        OwnCode::LogWriteFailed => (
            "A check's log could not be written".into(),
            "phasegate could not write a check's full output to its log in the run directory.",
            "Free disk space, or make `.git/phasegate/runs` writable, as the result's message says.",
        ),
        OwnCode::FilesModified => (
            "A check modified files".into(),
            "A check changed files it was meant only to check, so what was checked is not what was selected.",
            "Make the check only check (a formatter in its checking mode, not one that rewrites files), and run fixers before you stage; the result names the files.",
        ),
        OwnCode::HeadMoved => (
            "A check moved HEAD".into(),
            "A check committed, reset or switched branch while it ran, so what is committed is not what was checked.",
            "Make the check leave the repository's HEAD alone; look at `git reflog` for what it did, and undo it.",
        ),
        OwnCode::Stashed => (
            "A check stashed work".into(),
            "A check ran `git stash` and left the entry, so staged changes or untracked files were taken out of the work tree while it ran.",
            "Make the check leave the stash alone (or pop what it stashes); bring the work back with the command the result gives.",
        ),
        OwnCode::CommandFileChanged => (
            "A check runs a file the branch changed".into(),
            "Under --config-from-ref a check runs a script or file that this branch changed, so the branch decides what the check verifies.",
            "Have the change to that file reviewed and merged on its own first; under `--profile strict` such a change blocks.",
        ),
        OwnCode::HandoffWarning => (
            "A handoff document has a problem that does not fail it".into(),
            "A handoff document's frontmatter has something phasegate does not act on, such as an unknown field (a misspelt one is ignored). It does not fail the gate.",
            "Correct or remove the field at the line the result points at.",
        ),
        OwnCode::FindingsNotKept => (
            "A check found more than phasegate keeps".into(),
            "A check reported more findings than phasegate keeps for one check; the rest were counted, not kept.",
            "Fix the findings shown, or read them all in the check's log in the run directory.",
        ),
        OwnCode::ConfigError => (
            "Invalid phasegate configuration".into(),
            "phasegate.toml could not be used, so nothing was checked. The result points at the problem.",
            "Correct phasegate.toml at the line the result points at, as its message says.",
        ),
        OwnCode::UsageError => (
            "phasegate was invoked wrongly".into(),
            "phasegate's command line could not be used, so nothing was checked.",
            "Correct the command line as the result's message says; `phasegate run --help` lists the options.",
        ),
        OwnCode::InternalError => (
            "phasegate could not finish".into(),
            "phasegate failed internally before the checks could finish, so the verdict is incomplete.",
            "Read the result's message for what failed (git, a file phasegate could not read or write), fix it, and run phasegate again.",
        ),
    };
    RuleText {
        short,
        full: full.to_string(),
        help: help.to_string(),
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
            let text = describe_rule(d);
            let mut rule = json!({
                "id": rule_id(d),
                "shortDescription": { "text": text.short },
                // GitHub code scanning requires a full description too.
                "fullDescription": { "text": text.full },
                "help": { "text": text.help },
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
            "tool": { "driver": driver(&rules.into_values().collect::<Vec<_>>()) },
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

/// phasegate as the tool of the run: its name, its version (also as
/// SARIF's `semanticVersion`, which is read as Semantic Versioning 2.0),
/// its homepage where the package names one (`homepage`, else
/// `repository`), and the rules of the results.
fn driver(rules: &[Value]) -> Value {
    let version = env!("CARGO_PKG_VERSION");
    let mut driver = json!({
        "name": "phasegate",
        "version": version,
        "semanticVersion": version,
        "rules": rules,
    });
    let homepage = [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|uri| !uri.is_empty());
    if let Some(uri) = homepage {
        driver["informationUri"] = json!(uri);
    }
    driver
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
