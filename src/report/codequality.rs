//! GitLab Code Quality: a JSON array of issues with a description, a check
//! name, a severity (info, minor, major, critical) and a location; each
//! fingerprint unique per occurrence, as GitLab requires, and the same from
//! run to run while the finding stays.

use std::io::{self, Write};

use serde_json::json;

use crate::diagnostics::{Diagnostic, Severity};
use crate::gate::Verdict;

use super::sarif::rule_id;

fn severity(s: Severity, pre_existing: bool) -> &'static str {
    match (s, pre_existing) {
        (Severity::Error, false) => "critical",
        (Severity::Error, true) => "major",
        (Severity::Warning, _) => "minor",
        (Severity::Note | Severity::Info, _) => "info",
    }
}

pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let found: Vec<&Diagnostic> = verdict.diagnostics.iter().collect();
    let nth = super::occurrences(&found);
    let issues: Vec<serde_json::Value> = found
        .iter()
        .zip(nth)
        .map(|(d, n)| {
            // A finding with no file is about the gate itself and points
            // at the top of its configuration: its line, if it has one,
            // is no line of phasegate.toml.
            let (path, line) = match &d.file {
                Some(file) => (file.as_str(), d.line.unwrap_or(1)),
                None => ("phasegate.toml", 1),
            };
            json!({
                "description": super::text::message(d),
                "check_name": rule_id(d),
                // GitLab tells new findings from fixed ones by this id
                // alone: one per occurrence, and without the line, which
                // moves whenever a line is added above.
                "fingerprint": super::occurrence_id(d, n),
                "severity": severity(d.severity, d.pre_existing),
                "location": {
                    "path": path,
                    "lines": { "begin": line },
                },
            })
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &issues).map_err(io::Error::other)?;
    writeln!(out)
}
