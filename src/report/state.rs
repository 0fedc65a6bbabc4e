//! `phasegate history`, `phasegate interventions` and `phasegate
//! restore`: the recorded runs, the intervention queue and what a restore
//! brought back, as JSON or for people.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::git::Recovered;
use crate::state::{started_by_id, Entry, Intervention, Progress, RunRecord, Then, Unrecorded};

use unicode_width::UnicodeWidthStr;

use super::text::{line as clean, visible};

/// The checks of a run that did not pass (a skip or a warning is not a
/// failure).
fn failing(run: &RunRecord) -> Vec<&str> {
    run.checks
        .iter()
        .filter(|c| !matches!(c.status.as_str(), "passed" | "skipped" | "warned"))
        .map(|c| c.name.as_str())
        .collect()
}

/// When a recorded run started, as its id says (`started_at`); when it
/// was recorded for an id that says nothing (one edited by hand).
fn started(run: &RunRecord) -> String {
    started_by_id(&run.run_id).unwrap_or_else(|| run.time.clone())
}

/// How a recorded run ended, as `history` names it: the verdict's status,
/// or `config_error` for a run a configuration that does not load
/// stopped before its checks.
fn recorded_status(run: &RunRecord) -> &str {
    match &run.stopped {
        Some(stop) if stop.is_config() => "config_error",
        _ => &run.status,
    }
}

/// `{"runs": [...]}`, newest first as given. `started_at` is when each
/// run started; `time` is kept as earlier versions gave it (when a run
/// was recorded, `recorded_at`; when one with no record started). A run
/// a configuration that does not load stopped has the status
/// `config_error` and an `error`: the file, line and column of its first
/// problem and what it is. A run with no record (killed
/// before its verdict, or still going) has no phase, profile nor
/// selection: it names the logs it left, the unstaged changes it kept set
/// aside, and what to do (`next`, the command to run, and `what_to_do`).
pub fn history_json(runs: &[Entry<'_>], root: &Path, out: &mut dyn Write) -> io::Result<()> {
    let shown: Vec<serde_json::Value> = runs
        .iter()
        .map(|entry| match entry {
            Entry::Recorded(r) => {
                let mut shown = json!({
                    "run_id": r.run_id,
                    "started_at": started(r),
                    "recorded_at": r.time,
                    "time": r.time,
                    // `null` for a run nothing named a phase of.
                    "phase": r.phase,
                    "profile": r.profile,
                    "status": recorded_status(r),
                    "selection": r.selection.mode,
                    "failing": failing(r),
                });
                if let Some(stop) = &r.stopped {
                    shown["error"] = json!({
                        "kind": stop.kind,
                        "message": stop.message,
                        "file": stop.file,
                        "line": stop.line,
                        "column": stop.column,
                        "problem": stop.problem,
                        "problems": stop.problems,
                        "headline": stop.headline(),
                    });
                    shown["what_to_do"] = json!(stopped_what_to_do());
                }
                shown
            }
            Entry::Unrecorded(u) => json!({
                "run_id": u.run_id,
                "started_at": u.started,
                "time": u.started,
                "phase": null,
                "profile": null,
                "status": progress(u),
                "selection": null,
                "failing": [],
                "logs": u.logs.iter().map(|l| json!({
                    "check": l.check,
                    "log": shown_path(&l.path, root),
                })).collect::<Vec<_>>(),
                "saved_changes": u.saved.as_ref().map(|s| shown_path(&s.dir, root)),
                "next": next_command(u),
                "what_to_do": what_to_do(u, root),
            }),
        })
        .collect();
    writeln!(out, "{}", json!({ "runs": shown }))
}

/// A line a run: when it started, how it ended, its phase and id, and
/// what failed; a run its configuration stopped names where and what the
/// problem is; a run killed before its verdict says so on a second line,
/// with what to do. `recorded` is how many runs there are in all. The
/// columns are as wide as what they show (a `config error`, a long phase
/// name), so they line up whatever the runs.
pub fn history_human(
    runs: &[Entry<'_>],
    recorded: usize,
    root: &Path,
    out: &mut dyn Write,
) -> io::Result<()> {
    if runs.is_empty() {
        if recorded == 0 {
            writeln!(out, "no run recorded yet")?;
        } else {
            writeln!(out, "{recorded} run(s) recorded; `--limit` shows none")?;
        }
        return Ok(());
    }
    let rows: Vec<Row> = runs.iter().map(|entry| Row::of(entry, root)).collect();
    let header = Row {
        cells: ["started (UTC)", "status", "phase", "run id"].map(String::from),
        rest: String::new(),
        under: None,
    };
    // The narrowest each column is, for the common runs to keep one look
    // (a status as long as `incomplete`, a phase as `implementation`).
    let mut widths = [20, 10, 15, 10];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(&row.cells) {
            *width = (*width).max(UnicodeWidthStr::width(cell.as_str()));
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        row.write(&widths, out)?;
    }
    Ok(())
}

/// A line of the `history` table: when the run started, how it ended, its
/// phase and its id; what follows them on the line; and the line under
/// it, when there is one.
struct Row {
    cells: [String; 4],
    rest: String,
    under: Option<String>,
}

/// What comes after each column: two spaces after the time and the run
/// id, one between the others.
const GAPS: [&str; 4] = ["  ", " ", " ", "  "];

impl Row {
    fn of(entry: &Entry<'_>, root: &Path) -> Row {
        match entry {
            Entry::Recorded(r) => {
                let stop = r.stopped.as_ref().filter(|stop| stop.is_config());
                let rest = match stop {
                    Some(stop) => clean(&stop.headline()).into_owned(),
                    None => {
                        // A check that did not fail but kept the run from
                        // being verified says how (`lint (missing)`).
                        let failing: Vec<String> = r
                            .checks
                            .iter()
                            .filter(|c| {
                                !matches!(c.status.as_str(), "passed" | "skipped" | "warned")
                            })
                            .map(|c| match c.status.as_str() {
                                "failed" => c.name.clone(),
                                other => format!("{} ({})", c.name, other.replace('_', " ")),
                            })
                            .collect();
                        if failing.is_empty() {
                            String::new()
                        } else {
                            format!("failing: {}", clean(&failing.join(", ")))
                        }
                    }
                };
                let status = if stop.is_some() {
                    "config error"
                } else {
                    &r.status
                };
                Row {
                    cells: [
                        cell(&started(r)),
                        cell(status),
                        cell(r.phase.as_deref().unwrap_or("-")),
                        cell(&r.run_id),
                    ],
                    rest,
                    under: stop.map(|_| stopped_what_to_do().to_string()),
                }
            }
            Entry::Unrecorded(u) => {
                let logs: Vec<String> = u
                    .logs
                    .iter()
                    .map(|l| clean(&l.check).into_owned())
                    .collect();
                let tail = if logs.is_empty() {
                    "no check had started".to_string()
                } else {
                    format!("logs of: {}", logs.join(", "))
                };
                let how = match u.progress {
                    Progress::Running => "still running, no verdict yet",
                    Progress::Killed => "ended without a verdict (killed)",
                    Progress::Unknown => "no verdict; whether it still runs cannot be told",
                };
                Row {
                    cells: [
                        cell(&u.started),
                        progress(u).to_string(),
                        "-".to_string(),
                        cell(&u.run_id),
                    ],
                    rest: format!("{how}; {tail}"),
                    under: Some(clean(&what_to_do(u, root)).into_owned()),
                }
            }
        }
    }

    /// The row, each cell padded to its column's `widths`, and the line
    /// under it; no line ends in the spaces of an empty cell.
    fn write(&self, widths: &[usize; 4], out: &mut dyn Write) -> io::Result<()> {
        let mut line = String::new();
        for ((cell, width), gap) in self.cells.iter().zip(widths).zip(GAPS) {
            line.push_str(cell);
            let shown = UnicodeWidthStr::width(cell.as_str());
            line.push_str(&" ".repeat(width.saturating_sub(shown)));
            line.push_str(gap);
        }
        line.push_str(&self.rest);
        writeln!(out, "{}", line.trim_end())?;
        if let Some(under) = &self.under {
            writeln!(out, "    {under}")?;
        }
        Ok(())
    }
}

/// `text` for a cell of the `history` table: on one line, every control
/// character shown as an escape, a tab too, which would move the columns
/// after it.
fn cell(text: &str) -> String {
    visible(text, &[]).into_owned()
}

/// What to do about a run its configuration stopped: it checked nothing,
/// so there is nothing of it to resume.
fn stopped_what_to_do() -> &'static str {
    "it checked nothing: fix `phasegate.toml` where it says, then commit again or `phasegate run` (`phasegate resume` runs it again once the file loads)"
}

/// How a run with no record stands, as `history` names it.
fn progress(run: &Unrecorded) -> &'static str {
    match run.progress {
        Progress::Running => "running",
        Progress::Killed => "killed",
        Progress::Unknown => "unknown",
    }
}

/// The phasegate command to run now about a run with no record, in this
/// work tree: `restore`, `resume`, `run`, or none.
fn next_command(run: &Unrecorded) -> Option<&'static str> {
    if run.progress == Progress::Running {
        return None;
    }
    if run.saved.as_ref().is_some_and(|s| s.elsewhere.is_none()) {
        return Some("restore");
    }
    match run.then {
        Then::Resume => Some("resume"),
        Then::Run => Some("run"),
        _ => None,
    }
}

/// What to do about a run with no record, in a sentence or two.
fn what_to_do(run: &Unrecorded, root: &Path) -> String {
    let there = |path: &Option<PathBuf>| match path {
        Some(path) => format!("the work tree `{}`", path.display()),
        None => "the work tree it ran in".to_string(),
    };
    let mut said = Vec::new();
    match (&run.saved, run.progress) {
        (Some(saved), Progress::Running) => said.push(format!(
            "it holds unstaged changes set aside (`{}`) and gives them back when it ends",
            shown_path(&saved.dir, root)
        )),
        (Some(saved), _) => said.push(match &saved.elsewhere {
            None => format!(
                "run `phasegate restore` to bring back the unstaged changes it set aside (`{}`)",
                shown_path(&saved.dir, root)
            ),
            Some(path) => format!(
                "run `phasegate restore` in {} to bring back the unstaged changes it set aside (`{}`)",
                there(path),
                shown_path(&saved.dir, root)
            ),
        }),
        (None, _) => {}
    }
    let then = if said.is_empty() { "" } else { "then " };
    said.push(match &run.then {
        Then::Wait => "its verdict comes when it ends; `phasegate history` shows it then".to_string(),
        Then::Unknown => "its directory's lock cannot be read: if no phasegate runs, `phasegate resume` runs its phase's checks again".to_string(),
        Then::Resume => format!("{then}`phasegate resume` runs its phase's checks again (none of its checks is taken as passed)"),
        Then::Run => format!("{then}`phasegate run` checks again (no run of this work tree is recorded for `resume` to take up)"),
        Then::Superseded(later) => format!(
            "{}nothing to resume: run {}, recorded since, is what `phasegate resume` takes up",
            if then.is_empty() { "" } else { "otherwise " },
            clean(later)
        ),
        Then::OtherWorkTree(path) => format!("{then}`phasegate resume` in {} runs its checks again", there(path)),
    });
    said.join("; ")
}

/// `path` as the verdict names logs: relative to the work tree when in it.
fn shown_path(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// `{"interventions": [...]}`.
pub fn interventions_json(shown: &[&Intervention], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", json!({ "interventions": shown }))
}

/// A line an intervention: id, status, priority, type, occurrences and
/// the first line of its message; then, under open ones, the commands
/// that act on them, and under none, how many resolved ones `--all`
/// would show (`hidden`).
pub fn interventions_human(
    shown: &[&Intervention],
    hidden: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    if shown.is_empty() {
        if hidden > 0 {
            writeln!(
                out,
                "no open intervention (`phasegate interventions list --all` shows the {hidden} resolved)"
            )?;
        } else {
            writeln!(out, "no open intervention")?;
        }
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
        // Who closed a resolved one, and how: its newest note.
        if r.status == "resolved" {
            if let Some(note) = r.note.as_deref().and_then(|n| n.lines().last()) {
                writeln!(out, "       note: {}", clean(note))?;
            }
        }
    }
    if let Some(open) = shown.iter().find(|r| r.status == "open") {
        let id = clean(&open.id);
        writeln!(
            out,
            "\none in full, with its run's logs: `phasegate interventions show {id}`\nonce one is dealt with: `phasegate interventions resolve {id} --note \"what was done\"`"
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
/// `logs` is the directory of its newest run, when it is still kept
/// (shown relative to `root` when inside it).
pub fn intervention_human(
    record: &Intervention,
    logs: Option<&Path>,
    root: &Path,
    out: &mut dyn Write,
) -> io::Result<()> {
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
    if record.run_id.is_some() {
        let shown = match logs {
            Some(dir) => format!("{}/", shown_path(dir, root)),
            None => "pruned: only the newest runs keep their logs".to_string(),
        };
        field("logs", &shown)?;
    }
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

/// What `interventions resolve` did (`again`: the record was resolved
/// already, and took one more note), and what the next run makes of it:
/// resolving a record is the person's answer, but a handoff document that
/// escalated keeps escalating until it is edited.
pub fn resolved_human(record: &Intervention, again: bool, out: &mut dyn Write) -> io::Result<()> {
    let id = clean(&record.id);
    if again {
        writeln!(
            out,
            "{id} was already resolved: the note was added after its earlier ones"
        )?;
    } else {
        writeln!(out, "resolved {id}")?;
    }
    let next = match record.kind.as_str() {
        crate::state::ERRORS_REPEATED => {
            "the streak it escalated ends here: the next run judges its errors afresh, and escalates again only if they keep coming back"
        }
        "handoff_escalated" => {
            "the handoff document still decides: the next run escalates again until it is edited (`status: complete` once its checks pass, or a lower `retry_count` to allow more attempts)"
        }
        "handoff_blocked" => {
            "the handoff document still decides: the next run escalates again until its `status` says what comes next (`in_progress`, or `complete` once its checks pass)"
        }
        _ => return Ok(()),
    };
    writeln!(out, "  {next}")
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
    use crate::state::StopRecord;

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
        let root = Path::new("/repo");
        let record = run(
            "qa\u{1b}[2J",
            &[
                ("tests", "failed"),
                ("lint", "warned"),
                ("build", "timed_out"),
            ],
        );
        assert_eq!(
            text(|out| history_human(&[Entry::Recorded(&record)], 1, root, out)),
            "started (UTC)         status     phase           run id\n2026-11-24T01:02:03Z  failed     qa\\x1b[2J       20261124T010203Z-42  failing: tests, build (timed out)\n"
        );
        assert_eq!(
            text(|out| history_human(&[], 0, root, out)),
            "no run recorded yet\n"
        );
        assert_eq!(
            text(|out| history_human(&[], 3, root, out)),
            "3 run(s) recorded; `--limit` shows none\n"
        );
        let json: serde_json::Value = serde_json::from_str(&text(|out| {
            history_json(&[Entry::Recorded(&record)], root, out)
        }))
        .unwrap();
        assert_eq!(json["runs"][0]["failing"], json!(["tests", "build"]));
    }

    #[test]
    fn history_columns_are_as_wide_as_what_they_show() {
        let root = Path::new("/repo");
        let passed = RunRecord {
            status: "passed".to_string(),
            run_id: "20261124T010203Z-7".to_string(),
            ..run("implementation", &[("tests", "passed")])
        };
        let long = run("integration\tand_acceptance", &[("tests", "failed")]);
        let stopped = RunRecord {
            phase: None,
            status: "incomplete".to_string(),
            run_id: "20261124T010203Z-1234567".to_string(),
            stopped: Some(StopRecord {
                kind: "config".to_string(),
                message: "invalid configuration in `phasegate.toml`".to_string(),
                file: Some("phasegate.toml".to_string()),
                line: Some(2),
                column: Some(1),
                problem: Some("unknown key `profle` in [gate]".to_string()),
                problems: 1,
            }),
            ..run("", &[])
        };
        let entries = [&passed, &long, &stopped].map(Entry::Recorded);
        let shown = text(|out| history_human(&entries, 3, root, out));
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines[..4],
            [
                "started (UTC)         status       phase                         run id",
                "2026-11-24T01:02:03Z  passed       implementation                20261124T010203Z-7",
                "2026-11-24T01:02:03Z  failed       integration\\x09and_acceptance 20261124T010203Z-42       failing: tests",
                "2026-11-24T01:02:03Z  config error -                             20261124T010203Z-1234567  phasegate.toml:2:1: unknown key `profle` in [gate]",
            ],
            "{shown}"
        );
        assert!(lines[4].starts_with("    it checked nothing"), "{shown}");
    }

    #[test]
    fn an_intervention_is_a_line_in_the_list_and_a_block_on_its_own() {
        let record = intervention();
        assert_eq!(
            text(|out| interventions_human(&[&record], 0, out)),
            "iv-0001  open     high     check_failed       ×3   check `tests` failed\n\none in full, with its run's logs: `phasegate interventions show iv-0001`\nonce one is dealt with: `phasegate interventions resolve iv-0001 --note \"what was done\"`\n"
        );
        assert_eq!(
            text(|out| interventions_human(&[], 0, out)),
            "no open intervention\n"
        );
        assert_eq!(
            text(|out| interventions_human(&[], 2, out)),
            "no open intervention (`phasegate interventions list --all` shows the 2 resolved)\n"
        );
        let root = Path::new("/repo");
        let logs = Path::new("/repo/.git/phasegate/runs/20261124T010203Z-42");
        assert!(
            text(|out| intervention_human(&record, Some(logs), root, out))
                .contains("\n  logs        .git/phasegate/runs/20261124T010203Z-42/\n")
        );
        assert_eq!(
            text(|out| intervention_human(&record, None, root, out)),
            "iv-0001 · high · check_failed · open\n  check `tests` failed\\x0asecond line\n  phase       implementation\n  check       tests\n  run         20261124T010203Z-42\n  logs        pruned: only the newest runs keep their logs\n  occurrences 3 (the first, and 2 merged into it)\n  created     2026-11-24T01:02:03Z\n  updated     2026-11-24T01:05:00Z\n  note        looked at it\n  note        fixed upstream\n"
        );
        // One that took in another check's failure names both.
        let mut merged = intervention();
        merged.checks = vec!["tests".to_string(), "lint".to_string()];
        let shown = text(|out| intervention_human(&merged, None, Path::new("/repo"), out));
        assert!(shown.contains("\n  checks      tests, lint\n"), "{shown}");
        assert!(!shown.contains("  check   "), "{shown}");
    }
}
