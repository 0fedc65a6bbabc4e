//! GitLab Code Quality: a JSON array of issues with a description, a check
//! name, a severity (info, minor, major, critical) and a location; each
//! fingerprint unique per occurrence, as GitLab requires, and the same from
//! run to run while the finding stays.

use std::io::{self, Write};

use serde_json::json;

use crate::diagnostics::{Diagnostic, OwnCode, Severity};
use crate::gate::{CheckResult, Verdict};

/// The code of the issue that counts a check's findings past its limit.
const NOT_KEPT: OwnCode = OwnCode::FindingsNotKept;

use super::sarif::rule_id;

/// An error is critical unless it lies outside the change
/// (`pre_existing`) or its check held nothing back (`let_through`, see
/// `report::let_through`): then it is major.
fn severity(s: Severity, pre_existing: bool, let_through: bool) -> &'static str {
    match (s, pre_existing || let_through) {
        (Severity::Error, false) => "critical",
        (Severity::Error, true) => "major",
        (Severity::Warning, _) => "minor",
        (Severity::Note | Severity::Info, _) => "info",
    }
}

/// The issue that says how many findings `check` counted past its limit
/// without keeping them: GitLab lists issues one by one, and a thousand
/// of them must not read as all there were. It is as severe as the
/// check's worst kept finding, and its fingerprint leaves the count out,
/// so it stays one issue while the check keeps overflowing.
fn not_kept(check: &CheckResult, found: &[&Diagnostic]) -> serde_json::Value {
    let worst = found
        .iter()
        .filter(|d| d.check == check.name)
        .map(|d| (d.severity, d.pre_existing))
        .min()
        .unwrap_or((Severity::Warning, false));
    let id = Diagnostic {
        check: check.name.clone(),
        tool: "phasegate".into(),
        code: Some(NOT_KEPT.to_string()),
        message: format!("check `{}`", check.name),
        ..Diagnostic::default()
    };
    json!({
        "description": super::not_kept(check),
        "check_name": format!("phasegate/{NOT_KEPT}"),
        "fingerprint": id.fingerprint(),
        "severity": severity(worst.0, worst.1, super::held_nothing_back(check)),
        "location": {
            "path": "phasegate.toml",
            "lines": { "begin": 1 },
        },
    })
}

/// Whether `file` lies outside the repository: an absolute path (the
/// diagnostics are relative to the repository root wherever they are
/// inside it), or one that climbs out of it.
fn outside(file: &str) -> bool {
    let path = std::path::Path::new(file);
    path.has_root()
        || path
            .components()
            .next()
            .is_some_and(|c| c == std::path::Component::ParentDir)
}

pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let found: Vec<&Diagnostic> = verdict.diagnostics.iter().collect();
    let nth = super::occurrences(&found);
    let mut issues: Vec<serde_json::Value> = found
        .iter()
        .zip(nth)
        .map(|(d, n)| {
            // A finding with no file is about the gate itself and points
            // at the top of its configuration: its line, if it has one,
            // is no line of phasegate.toml.
            // GitLab takes `location.path` relative to the repository
            // and links it into the merge request: a file outside it (a
            // system header, a dependency in the toolchain's cache, which
            // phasegate keeps absolute) has no page there. Such a finding
            // is kept, its place at the front of its description, and
            // located as the gate's own.
            let (path, line, description) = match &d.file {
                Some(file) if outside(file) => {
                    let place = match d.line {
                        Some(line) => format!("{file}:{line}"),
                        None => file.clone(),
                    };
                    (
                        "phasegate.toml",
                        1,
                        format!("{place}: {}", super::text::message(d)).into(),
                    )
                }
                Some(file) => (file.as_str(), d.line.unwrap_or(1), super::text::message(d)),
                None => ("phasegate.toml", 1, super::text::message(d)),
            };
            json!({
                "description": description,
                "check_name": rule_id(d),
                // GitLab tells new findings from fixed ones by this id
                // alone: one per occurrence, and without the line, which
                // moves whenever a line is added above.
                "fingerprint": super::occurrence_id(d, n),
                "severity": severity(d.severity, d.pre_existing, super::let_through(verdict, d)),
                "location": {
                    "path": path,
                    "lines": { "begin": line },
                },
            })
        })
        .collect();
    issues.extend(
        verdict
            .checks
            .iter()
            .filter(|c| c.dropped_diagnostics > 0)
            .map(|check| not_kept(check, &found)),
    );
    serde_json::to_writer_pretty(&mut *out, &issues).map_err(io::Error::other)?;
    writeln!(out)
}
