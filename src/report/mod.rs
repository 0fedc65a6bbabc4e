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

use crate::diagnostics::{Diagnostic, Severity};
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
        code: Some(format!("{}-error", error.kind)),
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
                code: Some("handoff-warning".to_string()),
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
