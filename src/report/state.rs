//! `phasegate history`, `phasegate interventions` and `phasegate
//! restore`: the recorded runs, the intervention queue and what a restore
//! brought back, as JSON or for people.

use std::io::{self, Write};

use serde_json::json;

use crate::git::Recovered;
use crate::state::{Intervention, RunRecord};

use super::text::line as clean;

/// The checks of a run that did not pass (a skip or a warning is not a
/// failure).
fn failing(run: &RunRecord) -> Vec<&str> {
    run.checks
        .iter()
        .filter(|c| !matches!(c.status.as_str(), "passed" | "skipped" | "warned"))
        .map(|c| c.name.as_str())
        .collect()
}

/// `{"runs": [...]}`, newest first as given.
pub fn history_json(runs: &[&RunRecord], out: &mut dyn Write) -> io::Result<()> {
    let shown: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            json!({
                "run_id": r.run_id,
                "time": r.time,
                "phase": r.phase,
                "profile": r.profile,
                "status": r.status,
                "selection": r.selection.mode,
                "failing": failing(r),
            })
        })
        .collect();
    writeln!(out, "{}", json!({ "runs": shown }))
}

/// A line a run: when, how it ended, its phase and id, and what failed.
/// `recorded` is how many runs there are in all.
pub fn history_human(runs: &[&RunRecord], recorded: usize, out: &mut dyn Write) -> io::Result<()> {
    if runs.is_empty() {
        if recorded == 0 {
            writeln!(out, "no run recorded yet")?;
        } else {
            writeln!(out, "{recorded} run(s) recorded; `--limit` shows none")?;
        }
    }
    for r in runs {
        let failing = failing(r);
        let tail = if failing.is_empty() {
            String::new()
        } else {
            format!("  failing: {}", clean(&failing.join(", ")))
        };
        writeln!(
            out,
            "{}  {:<10} {:<15} {:<10}{tail}",
            clean(&r.time),
            clean(&r.status),
            clean(&r.phase),
            clean(&r.run_id)
        )?;
    }
    Ok(())
}

/// `{"interventions": [...]}`.
pub fn interventions_json(shown: &[&Intervention], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", json!({ "interventions": shown }))
}

/// A line an intervention: id, status, priority, type, occurrences and
/// the first line of its message.
pub fn interventions_human(shown: &[&Intervention], out: &mut dyn Write) -> io::Result<()> {
    if shown.is_empty() {
        writeln!(out, "no open intervention")?;
    }
    for r in shown {
        writeln!(
            out,
            "{}  {:<8} {:<8} {:<18} ×{:<3} {}",
            clean(&r.id),
            clean(&r.status),
            priority(r),
            clean(&r.kind),
            r.occurrences,
            clean(r.message.lines().next().unwrap_or(""))
        )?;
    }
    Ok(())
}

fn priority(record: &Intervention) -> String {
    json!(record.priority)
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// One intervention as JSON (`null` for none).
pub fn intervention_json(record: Option<&Intervention>, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", json!(record))
}

/// One intervention for people: what, where it came from, its history.
pub fn intervention_human(record: &Intervention, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{} · {} · {} · {}\n  {}",
        clean(&record.id),
        priority(record),
        clean(&record.kind),
        clean(&record.status),
        clean(&record.message)
    )?;
    let mut field = |name: &str, value: &str| writeln!(out, "  {name:<11} {}", clean(value));
    field("phase", &record.phase)?;
    // A record that took in errors of other checks names them all.
    if record.checks.len() > 1 {
        field("checks", &record.checks.join(", "))?;
    } else if let Some(check) = &record.check {
        field("check", check)?;
    }
    if let Some(session) = &record.session {
        field("session", session)?;
    }
    // An occurrence in a run stopped before its checks started has no
    // run to name: no id, no logs.
    field(
        "run",
        record
            .run_id
            .as_deref()
            .unwrap_or("none: it stopped before its checks started, and kept no logs"),
    )?;
    // The count the JSON's `occurrences` gives, and what it is made of:
    // the errors merged into the record, and the runs they came from.
    let merged = record.occurrences.saturating_sub(1);
    let occurrences = if merged == 0 {
        record.occurrences.to_string()
    } else {
        format!(
            "{} (the first, and {merged} merged into it)",
            record.occurrences
        )
    };
    field("occurrences", &occurrences)?;
    if record.runs.len() > 1 || record.runs_omitted > 0 {
        let earlier = if record.runs_omitted > 0 {
            format!("{} earlier run(s), then ", record.runs_omitted)
        } else {
            String::new()
        };
        field(
            "runs",
            &format!("{earlier}{} (oldest first)", record.runs.join(", ")),
        )?;
    }
    field("created", &record.created_at)?;
    field("updated", &record.updated_at)?;
    if let Some(note) = &record.note {
        for line in note.lines() {
            field("note", line)?;
        }
    }
    Ok(())
}

/// What `phasegate restore` brought back, one file a line (a name holding
/// a newline or an escape shown escaped, not run together or obeyed).
pub fn restored_human(recovered: &Recovered, out: &mut dyn Write) -> io::Result<()> {
    if recovered.is_empty() {
        return writeln!(out, "nothing to restore");
    }
    writeln!(out, "restored the unstaged changes of:")?;
    for path in &recovered.restored {
        writeln!(out, "  {}", clean(path))?;
    }
    if let Some(dir) = &recovered.kept_in {
        writeln!(
            out,
            "these changed after the run was killed; the versions they held are kept in {}:",
            clean(&dir.display().to_string())
        )?;
        for path in &recovered.kept {
            writeln!(out, "  {}", clean(path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(phase: &str, checks: &[(&str, &str)]) -> RunRecord {
        let checks: Vec<_> = checks
            .iter()
            .map(|(name, status)| json!({ "name": name, "status": status }))
            .collect();
        serde_json::from_value(json!({
            "run_id": "20261124T010203Z-42",
            "time": "2026-11-24T01:02:03Z",
            "phase": phase,
            "profile": "auto",
            "status": "failed",
            "selection": { "mode": "staged" },
            "checks": checks,
        }))
        .unwrap()
    }

    fn intervention() -> Intervention {
        serde_json::from_value(json!({
            "id": "iv-0001",
            "type": "check_failed",
            "priority": "high",
            "phase": "implementation",
            "check": "tests",
            "session": null,
            "run_id": "20261124T010203Z-42",
            "message": "check `tests` failed\nsecond line",
            "occurrences": 3,
            "status": "open",
            "created_at": "2026-11-24T01:02:03Z",
            "updated_at": "2026-11-24T01:05:00Z",
            "note": "looked at it\nfixed upstream",
        }))
        .unwrap()
    }

    fn text(render: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        render(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn history_lines_name_what_failed_and_show_control_characters() {
        let record = run(
            "qa\u{1b}[2J",
            &[
                ("tests", "failed"),
                ("lint", "warned"),
                ("build", "timed_out"),
            ],
        );
        assert_eq!(
            text(|out| history_human(&[&record], 1, out)),
            "2026-11-24T01:02:03Z  failed     qa\\x1b[2J       20261124T010203Z-42  failing: tests, build\n"
        );
        assert_eq!(
            text(|out| history_human(&[], 0, out)),
            "no run recorded yet\n"
        );
        assert_eq!(
            text(|out| history_human(&[], 3, out)),
            "3 run(s) recorded; `--limit` shows none\n"
        );
        let json: serde_json::Value =
            serde_json::from_str(&text(|out| history_json(&[&record], out))).unwrap();
        assert_eq!(json["runs"][0]["failing"], json!(["tests", "build"]));
    }

    #[test]
    fn an_intervention_is_a_line_in_the_list_and_a_block_on_its_own() {
        let record = intervention();
        assert_eq!(
            text(|out| interventions_human(&[&record], out)),
            "iv-0001  open     high     check_failed       ×3   check `tests` failed\n"
        );
        assert_eq!(
            text(|out| interventions_human(&[], out)),
            "no open intervention\n"
        );
        assert_eq!(
            text(|out| intervention_human(&record, out)),
            "iv-0001 · high · check_failed · open\n  check `tests` failed\\x0asecond line\n  phase       implementation\n  check       tests\n  run         20261124T010203Z-42\n  occurrences 3 (the first, and 2 merged into it)\n  created     2026-11-24T01:02:03Z\n  updated     2026-11-24T01:05:00Z\n  note        looked at it\n  note        fixed upstream\n"
        );
        // One that took in another check's failure names both.
        let mut merged = intervention();
        merged.checks = vec!["tests".to_string(), "lint".to_string()];
        let shown = text(|out| intervention_human(&merged, out));
        assert!(shown.contains("\n  checks      tests, lint\n"), "{shown}");
        assert!(!shown.contains("  check   "), "{shown}");
    }
}
