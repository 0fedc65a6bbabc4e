//! GitLab Code Quality: a JSON array of issues with a description, a check
//! name, a severity (info, minor, major, critical) and a location; each
//! fingerprint unique per occurrence, as GitLab requires.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::json;

use crate::diagnostics::{Fnv, Severity};
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
    let mut seen: HashMap<String, usize> = HashMap::new();
    let issues: Vec<serde_json::Value> = verdict
        .diagnostics
        .iter()
        .map(|d| {
            // The same problem twice (two lines, two files) is two issues:
            // the stable fingerprint plus where and which occurrence.
            let base = format!(
                "{}:{}:{}",
                d.fingerprint(),
                d.file.as_deref().unwrap_or(""),
                d.line.unwrap_or(0)
            );
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            let mut occurrence = Fnv::default();
            occurrence.write(format!("{base}#{n}").as_bytes());
            let fingerprint = format!("{}-{:016x}", d.fingerprint(), occurrence.finish());
            json!({
                "description": super::text::message(d),
                "check_name": rule_id(d),
                "fingerprint": fingerprint,
                "severity": severity(d.severity, d.pre_existing),
                "location": {
                    "path": d.file.as_deref().unwrap_or("phasegate.toml"),
                    "lines": { "begin": d.line.unwrap_or(1) },
                },
            })
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &issues).map_err(io::Error::other)?;
    writeln!(out)
}
