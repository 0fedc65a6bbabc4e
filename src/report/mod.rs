//! Renderers: they draw what they are given and decide nothing. The only
//! module that writes to the terminal.

pub mod codequality;
pub mod diagnostics;
pub mod errors;
pub mod github;
pub mod handoff;
pub mod human;
pub mod json;
pub mod junit;
pub mod progress;
pub mod sarif;
mod snippet;
pub mod state;
pub mod text;

use crate::diagnostics::{Diagnostic, OwnCode, Severity};
use crate::gate::Verdict;

/// A verdict whose run stopped on an error (bad configuration or usage, an
/// internal failure), with that error as findings of phasegate itself, so a
/// CI report shows why nothing was checked: one per located problem (its
/// place in `phasegate.toml`), else one for the whole error. A verdict
/// without an error comes back as it is.
pub fn with_error_findings(verdict: &Verdict) -> std::borrow::Cow<'_, Verdict> {
    let Some(error) = &verdict.error else {
        return std::borrow::Cow::Borrowed(verdict);
    };
    let finding = |message: String, file: Option<String>, line, column| Diagnostic {
        tool: "phasegate".to_string(),
        origin: crate::config::Origin::Runtime,
        severity: Severity::Error,
        code: Some(OwnCode::of_error(error.kind).to_string()),
        message,
        file,
        line,
        column,
        ..Diagnostic::default()
    };
    let mut findings: Vec<Diagnostic> = error
        .problems
        .iter()
        .map(|p| {
            let message = match &p.help {
                Some(help) => format!("{} ({help})", p.message),
                None => p.message.clone(),
            };
            finding(message, p.file.clone(), p.line, p.column)
        })
        .collect();
    if findings.is_empty() {
        findings.push(finding(error.message.clone(), None, None, None));
    }
    let mut shown = verdict.clone();
    shown.diagnostics.extend(findings);
    std::borrow::Cow::Owned(shown)
}

/// Which occurrence of its finding each of `diagnostics` is, 1 for the
/// first: the same finding (the same stable fingerprint: tool, code, file
/// and message) counted in order of its place in the file, then as found.
/// The CI systems that follow a finding from run to run by an id (GitLab's
/// Code Quality `fingerprint`, GitHub's `partialFingerprints`) need one id
/// per occurrence, or two alike merge into one; and an id without the
/// line, or every finding below an added line reads as fixed and found
/// anew. GitHub's own line hashes are counted the same way.
fn occurrences(diagnostics: &[&Diagnostic]) -> Vec<usize> {
    let fingerprints: Vec<String> = diagnostics.iter().map(|d| d.fingerprint()).collect();
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    order.sort_by_key(|&i| {
        (
            fingerprints[i].as_str(),
            diagnostics[i].line,
            diagnostics[i].column,
            i,
        )
    });
    let mut nth = vec![0; diagnostics.len()];
    let mut previous: Option<usize> = None;
    for i in order {
        nth[i] = match previous {
            Some(p) if fingerprints[p] == fingerprints[i] => nth[p] + 1,
            _ => 1,
        };
        previous = Some(i);
    }
    nth
}

/// The id of occurrence `n` of the finding `d` (see `occurrences`): its
/// stable fingerprint for the first, so the id a lone finding always had
/// stays, and `fingerprint:n` for the next ones.
fn occurrence_id(d: &Diagnostic, n: usize) -> String {
    if n <= 1 {
        d.fingerprint()
    } else {
        format!("{}:{n}", d.fingerprint())
    }
}

/// Whether `d` came from a check the gate let through: one that only
/// warned (`on_failure = "warn"`), failed open under `fast`, or passed by
/// its exit status whatever it printed. CI services draw an `error`
/// finding as a failure (a red annotation, a critical issue); one that
/// held nothing back is shown no worse than a warning, so the page agrees
/// with the green run. The finding itself keeps the tool's word.
fn let_through(verdict: &Verdict, d: &Diagnostic) -> bool {
    verdict
        .checks
        .iter()
        .find(|c| c.name == d.check)
        .is_some_and(held_nothing_back)
}

/// Whether `check`'s result let the work through (see `let_through`).
fn held_nothing_back(check: &crate::gate::CheckResult) -> bool {
    use crate::gate::Effect;
    matches!(check.effect, Effect::None | Effect::Warn | Effect::FailOpen)
}

/// The handoff documents' warnings (an unknown field), as findings of
/// phasegate at their place in the document, with `severity`. They are in
/// the verdict's `handoffs`, not among its diagnostics, since they decide
/// nothing; the reports people read show them all the same.
fn handoff_warnings(verdict: &Verdict, severity: Severity) -> Vec<Diagnostic> {
    let number = |v: &serde_json::Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
    let mut out = Vec::new();
    for handoff in &verdict.handoffs {
        let path = handoff.get("path").and_then(serde_json::Value::as_str);
        let warnings = handoff
            .get("warnings")
            .and_then(serde_json::Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for warning in warnings {
            out.push(Diagnostic {
                tool: "phasegate".to_string(),
                origin: crate::config::Origin::Runtime,
                severity,
                code: Some(OwnCode::HandoffWarning.to_string()),
                message: warning
                    .get("message")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                file: path.map(str::to_string),
                line: warning.get("line").and_then(number),
                column: warning.get("column").and_then(number),
                ..Diagnostic::default()
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;

/// What `check` found past its limit of findings, counted but not kept,
/// in one sentence: the reports that list findings one by one (SARIF,
/// JUnit, Code Quality) say it where their readers look.
pub(crate) fn not_kept(check: &crate::gate::CheckResult) -> String {
    use crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK;
    format!(
        "check `{}` found {} more past its limit of {MAX_DIAGNOSTICS_PER_CHECK} findings: counted, not kept (its full log has them{})",
        check.name,
        check.dropped_diagnostics,
        check
            .log
            .as_deref()
            .map_or(String::new(), |log| format!(": {log}"))
    )
}
