//! `phasegate history` and `phasegate interventions`: reading (and, for
//! `resolve`, updating) the state under `.git/phasegate/`.

use std::path::Path;

use crate::cli::{Format, HistoryArgs, InterventionsArgs, InterventionsCommand};
use crate::context::Context;
use crate::exit::ExitCode;
use crate::report;
use crate::state::{self, Queue, StateLock};

use super::Streams;

/// The state directory of the repository (or directory) phasegate runs in.
pub fn state_dir_for(ctx: &Context) -> state::StateDir {
    match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => state::state_dir(Some(&repo), &repo.root, &ctx.temp_dir),
        _ => state::state_dir(None, &ctx.cwd, &ctx.temp_dir),
    }
}

/// Which work tree of the repository phasegate runs in, as the history
/// keeps it (`RepoInfo::work_tree_key`); `.` outside a repository.
pub fn work_tree_for(ctx: &Context) -> String {
    match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => repo.work_tree_key(),
        _ => ".".to_string(),
    }
}

/// Why the history could not be read.
#[derive(Debug)]
pub struct Unread {
    /// What is wrong, naming the file, and what to do.
    pub message: String,
    /// Another version of phasegate keeps it: no run of this one will
    /// ever touch it.
    pub other_version: bool,
}

/// The recorded runs, oldest first; a state that cannot be read is an
/// error here (nothing is moved: only a run repairs the state).
pub fn read_runs(ctx: &Context) -> Result<Vec<state::RunRecord>, Unread> {
    let state_dir = state_dir_for(ctx);
    let path = state::state_file(&state_dir);
    match std::fs::read(&path) {
        Ok(bytes) => state::parse(&bytes).map(|s| s.runs).map_err(|e| {
            match state::other_version(&bytes) {
                Some(schema) => Unread {
                    message: format!(
                        "`{}` was written by another version of phasegate (schema `{schema}`; this one reads `{}`): run the phasegate that wrote it, or move the file aside",
                        path.display(),
                        state::STATE_SCHEMA
                    ),
                    other_version: true,
                },
                None => Unread {
                    message: format!(
                        "`{}` cannot be read: {e}; the next run moves it aside",
                        path.display()
                    ),
                    other_version: false,
                },
            }
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Unread {
            message: state::io_error(&state_dir, &path, "read", &e).to_string(),
            other_version: false,
        }),
    }
}

pub fn history(ctx: &Context, args: &HistoryArgs, io: &mut Streams<'_>) -> ExitCode {
    let json = args.format == Format::Json;
    let runs = match read_runs(ctx) {
        Ok(runs) => runs,
        Err(unread) => return error(io, json, &unread.message, ExitCode::Incomplete),
    };
    // The runs killed before their verdict left only their directories.
    let repo = crate::git::discover(&ctx.cwd).ok().flatten();
    let unrecorded = state::unrecorded_runs(
        &state_dir_for(ctx),
        &runs,
        &work_tree_for(ctx),
        repo.as_ref().map(|r| r.common_dir.as_path()),
        &crate::git::saved_changes_of,
    );
    let root = repo.map_or_else(|| ctx.cwd.clone(), |r| r.root);
    let recent = state::newest_first(&runs, &unrecorded, args.limit);
    let all = runs.len() + unrecorded.len();
    let _ = if json {
        report::state::history_json(&recent, &root, io.out)
    } else {
        report::state::history_human(&recent, all, &root, io.out)
    };
    ExitCode::Proceed
}

/// Says what went wrong, on standard error and, under `--format json`, as
/// a JSON document on standard output too; returns `code`.
fn error(io: &mut Streams<'_>, json: bool, message: &str, code: ExitCode) -> ExitCode {
    let _ = writeln!(io.err, "error: {message}");
    if json {
        let _ = report::json::render_error(message, io.out);
    }
    code
}

pub fn interventions(ctx: &Context, args: &InterventionsArgs, io: &mut Streams<'_>) -> ExitCode {
    let state_dir = state_dir_for(ctx);
    let json = args.format == Format::Json;
    let result = match &args.command {
        None => list(&state_dir, false, json, io),
        Some(InterventionsCommand::List { all }) => list(&state_dir, *all, json, io),
        Some(InterventionsCommand::Show { id }) => show(ctx, &state_dir, id, json, io),
        Some(InterventionsCommand::Resolve { id, note }) => resolve(&state_dir, id, note, json, io),
    };
    match result {
        Ok(()) => ExitCode::Proceed,
        Err((message, code)) => error(io, json, &message, code),
    }
}

/// Why an `interventions` subcommand stopped, and its exit code.
type Stopped = (String, ExitCode);

fn unknown(id: &str) -> Stopped {
    (
        format!("no intervention `{id}`; `phasegate interventions list --all` shows them"),
        ExitCode::Usage,
    )
}

/// The record `typed` names in `queue` (`Queue::lookup`).
fn find<'a>(queue: &'a Queue, typed: &str) -> Result<&'a state::Intervention, Stopped> {
    match queue.lookup(typed) {
        state::Lookup::Found(record) => Ok(record),
        state::Lookup::NotFound => Err(unknown(typed)),
        state::Lookup::Ambiguous(ids) => Err((
            format!(
                "`{typed}` could be any of {}: give the id exactly as `phasegate interventions list --all` shows it",
                ids.iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ExitCode::Usage,
        )),
    }
}

fn unfinished(error: impl std::fmt::Display) -> Stopped {
    (error.to_string(), ExitCode::Incomplete)
}

/// The open interventions (`all`: resolved ones too), open first, then by
/// priority.
fn list(state_dir: &Path, all: bool, json: bool, io: &mut Streams<'_>) -> Result<(), Stopped> {
    let queue = Queue::load(state_dir).map_err(unfinished)?;
    warn_unreadable(state_dir, &queue, "the next run moves them", io);
    let mut shown: Vec<&state::Intervention> = queue
        .records
        .iter()
        .filter(|r| all || r.status == "open")
        .collect();
    shown.sort_by_key(|r| (r.status != "open", r.priority));
    let hidden = queue.records.len() - shown.len();
    let _ = if json {
        report::state::interventions_json(&shown, io.out)
    } else {
        report::state::interventions_human(&shown, hidden, io.out)
    };
    Ok(())
}

fn show(
    ctx: &Context,
    state_dir: &Path,
    id: &str,
    json: bool,
    io: &mut Streams<'_>,
) -> Result<(), Stopped> {
    let queue = Queue::load(state_dir).map_err(unfinished)?;
    warn_unreadable(state_dir, &queue, "the next run moves them", io);
    let record = find(&queue, id)?;
    let _ = if json {
        report::state::intervention_json(Some(record), io.out)
    } else {
        // Where the logs of its newest run are, while they are kept.
        let logs = record
            .run_id
            .as_deref()
            .map(|run| state_dir.join("runs").join(run))
            .filter(|dir| dir.is_dir());
        let root = crate::git::discover(&ctx.cwd)
            .ok()
            .flatten()
            .map_or_else(|| ctx.cwd.clone(), |repo| repo.root);
        report::state::intervention_human(record, logs.as_deref(), &root, io.out)
    };
    Ok(())
}

/// Marks an intervention resolved with a note, under the state lock.
/// Resolved again, the record keeps every note, a line each.
fn resolve(
    state_dir: &state::StateDir,
    id: &str,
    note: &str,
    json: bool,
    io: &mut Streams<'_>,
) -> Result<(), Stopped> {
    if note.trim().is_empty() {
        return Err((
            format!("say how `{id}` was resolved: `--note` cannot be empty"),
            ExitCode::Usage,
        ));
    }
    let _lock = StateLock::acquire(state_dir, super::record::LOCK_WAIT).map_err(unfinished)?;
    let mut queue = Queue::load(state_dir).map_err(unfinished)?;
    let id = find(&queue, id)?.id.clone();
    let id = id.as_str();
    let resolution = queue.resolve(id, note, &crate::state::now_rfc3339());
    if resolution == state::Resolution::NotFound {
        return Err(unknown(id));
    }
    // The lines that could not be read are written back where they were:
    // resolving a record never drops them.
    queue.save(state_dir).map_err(unfinished)?;
    warn_unreadable(
        state_dir,
        &queue,
        "kept as they were; the next run moves them",
        io,
    );
    let again = resolution == state::Resolution::NoteAdded;
    let record = queue.records.iter().find(|r| r.id == id);
    if json {
        // Standard output carries the record alone; what comes next is
        // said on standard error.
        if let Some(record) = record {
            let _ = report::state::resolved_human(record, again, io.err);
        }
        let _ = report::state::intervention_json(record, io.out);
    } else if let Some(record) = record {
        let _ = report::state::resolved_human(record, again, io.out);
    }
    Ok(())
}

/// Says on standard error which lines of the queue could not be read, and
/// what becomes of them (`fate`).
fn warn_unreadable(state_dir: &Path, queue: &Queue, fate: &str, io: &mut Streams<'_>) {
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
