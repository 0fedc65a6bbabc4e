//! `phasegate history` and `phasegate interventions`: reading (and, for
//! `resolve`, updating) the state under `.git/phasegate/`.

use std::path::PathBuf;

use serde_json::json;

use crate::cli::{Format, HistoryArgs, InterventionsArgs, InterventionsCommand};
use crate::context::Context;
use crate::exit::ExitCode;
use crate::state::{self, Queue, StateLock};

use super::Streams;

/// The state directory of the repository (or directory) phasegate runs in.
pub fn state_dir_for(ctx: &Context) -> PathBuf {
    match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => state::state_dir(Some(&repo.common_dir), &repo.root, &ctx.temp_dir),
        _ => state::state_dir(None, &ctx.cwd, &ctx.temp_dir),
    }
}

/// The recorded runs, oldest first; a state that cannot be read is an
/// error here (nothing is moved: only a run repairs the state).
pub fn read_runs(ctx: &Context) -> Result<Vec<state::RunRecord>, String> {
    let state_dir = state_dir_for(ctx);
    let path = state::state_file(&state_dir);
    match std::fs::read(&path) {
        Ok(bytes) => state::parse(&bytes).map(|s| s.runs).map_err(|e| {
            match state::other_version(&bytes) {
                Some(schema) => format!(
                    "`{}` was written by another version of phasegate (schema `{schema}`; this one reads `{}`): run the phasegate that wrote it",
                    path.display(),
                    state::STATE_SCHEMA
                ),
                None => format!(
                    "`{}` cannot be read: {e}; the next run moves it aside",
                    path.display()
                ),
            }
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(state::io_error(&state_dir, &path, "read", &e).to_string()),
    }
}

pub fn history(ctx: &Context, args: &HistoryArgs, io: &mut Streams<'_>) -> ExitCode {
    let runs = match read_runs(ctx) {
        Ok(runs) => runs,
        Err(message) => {
            let _ = writeln!(io.err, "error: {message}");
            // Under `--format json` an error is a JSON document on stdout too.
            if args.format == Format::Json {
                let _ = writeln!(io.out, "{}", json!({ "error": message }));
            }
            return ExitCode::Incomplete;
        }
    };
    let recent: Vec<&state::RunRecord> = runs.iter().rev().take(args.limit).collect();
    let failing = |r: &state::RunRecord| -> Vec<String> {
        r.checks
            .iter()
            .filter(|c| !matches!(c.status.as_str(), "passed" | "skipped" | "warned"))
            .map(|c| c.name.clone())
            .collect()
    };
    if args.format == Format::Json {
        let shown: Vec<serde_json::Value> = recent
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
        let _ = writeln!(io.out, "{}", json!({ "runs": shown }));
        return ExitCode::Proceed;
    }
    if recent.is_empty() {
        let said = if runs.is_empty() {
            "no run recorded yet".to_string()
        } else {
            format!("{} run(s) recorded; `--limit` shows none", runs.len())
        };
        let _ = writeln!(io.out, "{said}");
    }
    for r in recent {
        let failing = failing(r);
        let tail = if failing.is_empty() {
            String::new()
        } else {
            format!("  failing: {}", failing.join(", "))
        };
        let _ = writeln!(
            io.out,
            "{}  {:<10} {:<15} {:<10}{tail}",
            r.time, r.status, r.phase, r.run_id
        );
    }
    ExitCode::Proceed
}

pub fn interventions(ctx: &Context, args: &InterventionsArgs, io: &mut Streams<'_>) -> ExitCode {
    let state_dir = state_dir_for(ctx);
    let json = args.format == Format::Json;
    // Under `--format json` an error is a JSON document on stdout too.
    let said = |io: &mut Streams<'_>, message: &str, code: ExitCode| {
        let _ = writeln!(io.err, "error: {message}");
        if json {
            let _ = writeln!(io.out, "{}", json!({ "error": message }));
        }
        code
    };
    let fail = |io: &mut Streams<'_>, message: String| said(io, &message, ExitCode::Incomplete);
    match &args.command {
        None | Some(InterventionsCommand::List { .. }) => {
            let all = matches!(
                &args.command,
                Some(InterventionsCommand::List { all: true })
            );
            let queue = match Queue::load(&state_dir) {
                Ok(queue) => queue,
                Err(e) => return fail(io, e.to_string()),
            };
            warn_unreadable(&state_dir, &queue, "the next run moves them", io);
            let mut shown: Vec<&state::Intervention> = queue
                .records
                .iter()
                .filter(|r| all || r.status == "open")
                .collect();
            shown.sort_by_key(|r| (r.status != "open", r.priority));
            if json {
                let _ = writeln!(io.out, "{}", json!({ "interventions": shown }));
                return ExitCode::Proceed;
            }
            if shown.is_empty() {
                let _ = writeln!(io.out, "no open intervention");
            }
            for r in shown {
                let _ = writeln!(
                    io.out,
                    "{}  {:<8} {:<8} {:<18} ×{:<3} {}",
                    r.id,
                    r.status,
                    format!("{:?}", r.priority).to_lowercase(),
                    r.kind,
                    r.occurrences,
                    r.message.lines().next().unwrap_or("")
                );
            }
            ExitCode::Proceed
        }
        Some(InterventionsCommand::Show { id }) => {
            let queue = match Queue::load(&state_dir) {
                Ok(queue) => queue,
                Err(e) => return fail(io, e.to_string()),
            };
            warn_unreadable(&state_dir, &queue, "the next run moves them", io);
            let Some(record) = queue.records.iter().find(|r| r.id == *id) else {
                return said(
                    io,
                    &format!(
                        "no intervention `{id}`; `phasegate interventions list --all` shows them"
                    ),
                    ExitCode::Usage,
                );
            };
            if json {
                let _ = writeln!(io.out, "{}", json!(record));
            } else {
                let _ = io.out.write_all(describe(record).as_bytes());
            }
            ExitCode::Proceed
        }
        Some(InterventionsCommand::Resolve { id, note }) => {
            if note.trim().is_empty() {
                return said(
                    io,
                    &format!("say how `{id}` was resolved: `--note` cannot be empty"),
                    ExitCode::Usage,
                );
            }
            let _lock = match StateLock::acquire(&state_dir, super::record::LOCK_WAIT) {
                Ok(lock) => lock,
                Err(e) => return fail(io, e.to_string()),
            };
            let mut queue = match Queue::load(&state_dir) {
                Ok(queue) => queue,
                Err(e) => return fail(io, e.to_string()),
            };
            let resolution = queue.resolve(id, note, &super::record::now_rfc3339());
            if resolution == state::Resolution::NotFound {
                return said(
                    io,
                    &format!(
                        "no intervention `{id}`; `phasegate interventions list --all` shows them"
                    ),
                    ExitCode::Usage,
                );
            }
            // The lines that could not be read are written back where they
            // were: resolving a record never drops them.
            if let Err(e) = queue.save(&state_dir) {
                return fail(io, e.to_string());
            }
            warn_unreadable(
                &state_dir,
                &queue,
                "kept as they were; the next run moves them",
                io,
            );
            // Resolved again, the record keeps every note, a line each.
            let done = if resolution == state::Resolution::NoteAdded {
                format!("{id} was already resolved: the note was added after its earlier ones")
            } else {
                format!("resolved {id}")
            };
            if json {
                if resolution == state::Resolution::NoteAdded {
                    let _ = writeln!(io.err, "{done}");
                }
                let record = queue.records.iter().find(|r| r.id == *id);
                let _ = writeln!(io.out, "{}", json!(record));
            } else {
                let _ = writeln!(io.out, "{done}");
            }
            ExitCode::Proceed
        }
    }
}

/// Says on standard error which lines of the queue could not be read, and
/// what becomes of them (`fate`).
fn warn_unreadable(state_dir: &std::path::Path, queue: &Queue, fate: &str, io: &mut Streams<'_>) {
    let lines = queue.unreadable();
    if lines.is_empty() {
        return;
    }
    let numbers: Vec<String> = lines.iter().map(|u| u.line.to_string()).collect();
    let _ = writeln!(
        io.err,
        "warning: {} line(s) of `{}` could not be read (line {}: {}): {fate} to `{}`",
        lines.len(),
        state::queue_file(state_dir).display(),
        numbers.join(", "),
        lines[0].reason,
        state::emergency_file(state_dir).display()
    );
}

/// One intervention for people: what, where it came from, its history.
fn describe(record: &crate::state::Intervention) -> String {
    let clean = crate::report::text::line;
    let priority = json!(record.priority);
    let mut text = format!(
        "{} · {} · {} · {}\n  {}\n",
        record.id,
        priority.as_str().unwrap_or_default(),
        clean(&record.kind),
        record.status,
        clean(&record.message)
    );
    let mut field = |name: &str, value: &str| {
        text.push_str(&format!("  {name:<11} {}\n", clean(value)));
    };
    field("phase", &record.phase);
    if let Some(check) = &record.check {
        field("check", check);
    }
    if let Some(session) = &record.session {
        field("session", session);
    }
    field("run", &record.run_id);
    field("occurrences", &record.occurrences.to_string());
    field("created", &record.created_at);
    field("updated", &record.updated_at);
    if let Some(note) = &record.note {
        for line in note.lines() {
            field("note", line);
        }
    }
    text
}
