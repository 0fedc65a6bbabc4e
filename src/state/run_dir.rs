//! A run's directory under the state directory: its id, every check's log
//! and invocation record, and the verdict.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::gate::Verdict;
use crate::runner::{CheckOutcome, CheckPlan, Termination};

/// Where one run keeps its files.
#[derive(Debug)]
pub struct RunDir {
    pub id: String,
    pub path: PathBuf,
    /// How the files of the run are made (the repository's sharing).
    pub sharing: super::Sharing,
    /// The directory, held with flock(2) while the run lasts, so that
    /// another run's pruning leaves it alone (`None` on a file system
    /// without flock). The kernel lets go of it however the run ends.
    _alive: Option<fs::File>,
}

impl RunDir {
    /// Creates `<state_dir>/runs/<run-id>/`.
    pub fn create(state_dir: &super::StateDir, now: SystemTime, pid: u32) -> io::Result<RunDir> {
        let runs = state_dir.join("runs");
        let sharing = state_dir.sharing;
        sharing.create_dirs(&runs).map_err(|e| {
            // The raw error ("File exists") names neither the file nor
            // what to do.
            if fs::metadata(&runs).is_ok_and(|m| !m.is_dir()) {
                io::Error::new(
                    e.kind(),
                    format!(
                        "`{}` is not a directory ({e}); phasegate keeps its runs there: move that file aside",
                        runs.display()
                    ),
                )
            } else {
                e
            }
        })?;
        let base = run_id(now, pid);
        // Two runs in the same second from the same pid cannot happen, but a
        // reused pid after a crash can: never reuse a directory.
        for attempt in 0..100u32 {
            let id = if attempt == 0 {
                base.clone()
            } else {
                format!("{base}-{attempt}")
            };
            let path = runs.join(&id);
            match fs::create_dir(&path) {
                Ok(()) => {
                    // Another member of the group prunes it once it is old.
                    sharing.share_dir(&path)?;
                    let alive = match hold(&path) {
                        Ok(alive) => alive,
                        Err(e) => {
                            // Nothing ran in it: no directory is left
                            // behind for a run that never started.
                            let _ = fs::remove_dir(&path);
                            return Err(e);
                        }
                    };
                    return Ok(RunDir {
                        id,
                        path,
                        sharing,
                        _alive: alive,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!(
            "failed to create a new run directory under `{}`",
            runs.display()
        )))
    }

    /// The run's id, when its directory holds anything but the name of
    /// its work tree (a check's log, its invocation record): the directory
    /// is kept for a person to look in. An empty one is removed, with its
    /// lock: a run stopped before its checks started (another run held
    /// the unstaged changes' lock) ran nothing, and no directory is left
    /// behind for `resume` to take for a run killed on its way, nor for
    /// pruning to count among the runs it keeps.
    pub fn keep_if_used(self) -> Option<String> {
        let used = fs::read_dir(&self.path).map_or(true, |entries| {
            entries
                .filter_map(Result::ok)
                .any(|entry| entry.file_name() != WORK_TREE_FILE)
        });
        if used {
            return Some(self.id);
        }
        let _ = fs::remove_file(self.path.join(WORK_TREE_FILE));
        let _ = fs::remove_dir(&self.path);
        None
    }

    /// Says which work tree the run is in (`RepoInfo::work_tree_key`), in
    /// its directory's `work-tree` file: a run killed before its verdict
    /// leaves no record in `state.json`, and `resume` in another work tree
    /// (linked worktrees share the state) must tell it is not its own
    /// (`unfinished_since`). A directory without one may be any work
    /// tree's: one that cannot be written costs at most checks run again.
    /// Written only where another work tree can be, in a repository with
    /// linked worktrees (`<common dir>/worktrees`): every run pays for a
    /// file written, and most repositories have one work tree.
    pub fn mark_work_tree(&self, key: &str) {
        // `<common dir>/phasegate/runs/<run-id>`.
        let common = self.path.ancestors().nth(3);
        if common.is_some_and(|dir| dir.join("worktrees").is_dir()) {
            let _ = create_run_file(&self.path.join(WORK_TREE_FILE), self.sharing)
                .and_then(|mut file| file.write_all(key.as_bytes()));
        }
    }

    /// The log file of a check: its name made safe for a file name.
    pub fn log_path(&self, check: &str) -> PathBuf {
        self.path.join(format!("{}.log", file_stem(check)))
    }

    /// Writes what was run for a check, so a person can replay it: the
    /// record, and beside it a script for each batch that replays it.
    pub fn write_invocation(
        &self,
        plan: &CheckPlan,
        outcome: &CheckOutcome,
        pinned: &[(String, String)],
    ) -> io::Result<()> {
        let stem = file_stem(&plan.name);
        let of = outcome.invocations.len();
        let mut replays = Vec::with_capacity(of);
        for (n, invocation) in outcome.invocations.iter().enumerate() {
            let script = self.path.join(format!("{stem}.batch-{}.sh", n + 1));
            let text = replay_script(&plan.name, n + 1, of, &plan.cwd, pinned, &invocation.argv);
            let mut file = create_run_file(&script, self.sharing)?;
            file.write_all(text.as_bytes())?;
            replays.push(sh_command(&["sh".into(), script.into_os_string()]));
        }
        let record = InvocationRecord {
            check: &plan.name,
            argv: outcome
                .invocations
                .iter()
                .map(crate::runner::Invocation::display)
                .collect(),
            cwd: plan.cwd.to_string_lossy().into_owned(),
            env_set: plan.env.iter().map(|(k, _)| k.clone()).collect(),
            env_pinned: pinned.iter().map(|(k, _)| k.clone()).collect(),
            termination: termination_record(&outcome.termination),
            duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
            parser: match &plan.parser {
                crate::config::ParserChoice::Auto => "auto".to_string(),
                crate::config::ParserChoice::Named(name) => name.clone(),
                crate::config::ParserChoice::Regex(_) => "custom regex".to_string(),
            },
            parser_used: outcome.parser_used,
            output_bytes: outcome.output.total_bytes,
            batches: outcome
                .invocations
                .iter()
                .enumerate()
                .map(|(n, invocation)| {
                    let ended = outcome.batches.get(n);
                    BatchRecord {
                        argv: invocation.display(),
                        command: sh_command(&invocation.argv),
                        replay: replays[n].clone(),
                        termination: ended.map_or_else(
                            || serde_json::json!({"not_run": true}),
                            |b| termination_record(&b.termination),
                        ),
                        duration_ms: ended
                            .map(|b| u64::try_from(b.duration.as_millis()).unwrap_or(u64::MAX)),
                        output_from: ended.and_then(|b| b.output_from),
                        found_no_tests: ended.is_some_and(|b| b.found_no_tests),
                    }
                })
                .collect(),
        };
        let path = self.path.join(format!("{stem}.json"));
        write_json(&path, &record, self.sharing)
    }

    /// Writes the verdict as `verdict.json`.
    pub fn write_verdict(&self, verdict: &Verdict) -> io::Result<()> {
        write_json(&self.path.join("verdict.json"), verdict, self.sharing)
    }
}

#[derive(Serialize)]
struct InvocationRecord<'a> {
    check: &'a str,
    argv: Vec<Vec<String>>,
    /// As text, as `argv` is: serde cannot write a path that is not UTF-8.
    cwd: String,
    /// The names of the variables the check's `env` sets; never the values.
    env_set: Vec<String>,
    /// The names of the variables phasegate pins for every check.
    env_pinned: Vec<String>,
    termination: serde_json::Value,
    duration_ms: u64,
    parser: String,
    /// The parser that read the output, when one found anything.
    parser_used: Option<&'static str>,
    output_bytes: u64,
    /// Each invocation (one per batch of files), in order: `argv` and
    /// `termination` above hold them all together, and a person replays
    /// or judges one batch from here.
    batches: Vec<BatchRecord>,
}

/// One invocation of a check: what it ran and how it ended.
#[derive(Serialize)]
struct BatchRecord {
    /// As text, for people (lossy where a file name is not UTF-8).
    argv: Vec<String>,
    /// The same argv as one `sh` command line that runs exactly those
    /// bytes, a file name that is not UTF-8 included (see `sh_command`).
    command: String,
    /// `sh` and the script beside the record that runs `command` in the
    /// check's working directory, with the variables phasegate pins set
    /// and the ones it removes unset. A batch sized to the argument limit
    /// has a `command` longer than `sh -c` or a terminal takes (one
    /// argument may not exceed 128 KiB), and a script has no such limit.
    replay: String,
    /// `{"not_run": true}` for a batch the check's timeout or an
    /// interrupt kept from starting.
    termination: serde_json::Value,
    duration_ms: Option<u64>,
    /// Where its output starts in the check's log; `null` for a batch not
    /// run, or whose start the log left out where it was cut.
    output_from: Option<u64>,
    /// Its tool found no test among its files while another batch's ran
    /// some: its exit status does not count for the check.
    found_no_tests: bool,
}

/// `argv` as a POSIX `sh` command line a person can paste to run the very
/// same arguments. JSON holds only Unicode text, so a file name that is
/// not UTF-8 would otherwise be recorded with U+FFFD in place of its bytes
/// and name a file that does not exist: each such byte is written as
/// `"$(printf '\351')"`, which `sh` turns back into that byte (a command
/// substitution drops only trailing newlines, and a newline is valid
/// UTF-8, so it is never among them).
fn sh_command(argv: &[std::ffi::OsString]) -> String {
    use std::os::unix::ffi::OsStrExt;
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"%+,-./:=@_".contains(&b);
    let mut line = String::new();
    for (n, arg) in argv.iter().enumerate() {
        if n > 0 {
            line.push(' ');
        }
        let bytes = arg.as_bytes();
        if !bytes.is_empty() && bytes.iter().all(|b| plain(*b)) {
            line.push_str(&String::from_utf8_lossy(bytes));
            continue;
        }
        if bytes.is_empty() {
            line.push_str("''");
        }
        for chunk in bytes.utf8_chunks() {
            if !chunk.valid().is_empty() {
                line.push('\'');
                line.push_str(&chunk.valid().replace('\'', "'\\''"));
                line.push('\'');
            }
            for byte in chunk.invalid() {
                line.push_str(&format!("\"$(printf '\\{byte:03o}')\""));
            }
        }
    }
    line
}

/// The `sh` script that replays batch `n` of `of` of the check `name`:
/// it goes to the check's working directory, sets the variables phasegate
/// pins (their values are phasegate's own, never the user's), unsets the
/// ones it removes, and runs the batch's argv byte for byte. The values of
/// the check's own `env` are never written: the record names them.
fn replay_script(
    name: &str,
    n: usize,
    of: usize,
    cwd: &Path,
    pinned: &[(String, String)],
    argv: &[std::ffi::OsString],
) -> String {
    // A name holding a line break must not end the comment early.
    let shown: String = name
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let mut text = format!(
        "# Replays batch {n} of {of} of the check `{shown}` as phasegate ran it.\n\
         # The variables its `env` sets in phasegate.toml are not written here.\n\
         cd {} || exit\n",
        sh_command(&[cwd.as_os_str().to_os_string()])
    );
    for (key, value) in pinned {
        text.push_str(&format!("export {key}={}\n", sh_command(&[value.into()])));
    }
    let removed: Vec<&str> = crate::runner::REMOVED_ENV
        .iter()
        .chain(crate::runner::GIT_LOCAL_ENV)
        .copied()
        .collect();
    text.push_str(&format!("unset {}\n", removed.join(" ")));
    text.push_str("exec ");
    text.push_str(&sh_command(argv));
    text.push('\n');
    text
}

/// The file in a run's directory naming the work tree it ran in.
pub(super) const WORK_TREE_FILE: &str = "work-tree";

/// Whether the run of `dir` may have been made in the work tree `key`
/// names: one whose directory names another work tree was not.
fn may_be_of(dir: &Path, key: &str) -> bool {
    fs::read(dir.join(WORK_TREE_FILE)).map_or(true, |named| named == key.as_bytes())
}

/// Takes the lock on the new run directory `path`, which says to other
/// runs' pruning that its run is going. A file system without locks is
/// an error that names the directory: other runs could not tell this run
/// from an ended one, and their pruning would remove its logs under it.
/// A run pruning just then holds it a moment (`run_state`), looking: a
/// few tries, then the run goes on without, as before a lock existed.
fn hold(path: &Path) -> io::Result<Option<fs::File>> {
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("failed to lock `{}`: {e}", path.display()),
        )
    };
    let dir = fs::File::open(path).map_err(named)?;
    for _ in 0..20 {
        if super::flock(
            &dir,
            super::Lock::Run,
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        )
        .map_err(named)?
        {
            return Ok(Some(dir));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Ok(None)
}

/// What the lock on a run's directory says of its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunState {
    /// The directory is gone.
    Gone,
    /// The run holds its directory locked: it is still going.
    Going,
    /// Nothing holds the lock: the run ended, however it ended.
    Ended,
    /// The directory cannot be opened, or the file system has no locks.
    Unknown,
}

/// The state of the run that owns `dir`.
pub(super) fn run_state(dir: &Path) -> RunState {
    let handle = match fs::File::open(dir) {
        Ok(handle) => handle,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return RunState::Gone,
        Err(_) => return RunState::Unknown,
    };
    match super::flock(
        &handle,
        super::Lock::Run,
        rustix::fs::FlockOperation::NonBlockingLockShared,
    ) {
        Ok(true) => RunState::Ended,
        Ok(false) => RunState::Going,
        Err(_) => RunState::Unknown,
    }
}

/// The runs that began after the run `after` (or in its second) and
/// ended without a verdict: killed (SIGKILL, the machine going down)
/// before they could write one, or stopped by an internal failure. What
/// they were checking was never judged, and no history records them, so
/// `resume` must not take the run before them for the last word. A run
/// still going holds its directory and is not among them, nor is one of
/// another work tree than `work_tree` (linked worktrees share the state:
/// a run killed in one says nothing of another's files). Oldest first.
pub fn unfinished_since(state_dir: &Path, after: &str, work_tree: &str) -> Vec<String> {
    let Ok(entries) = fs::read_dir(state_dir.join("runs")) else {
        return Vec::new();
    };
    let (since, _, _) = run_order(Path::new(after));
    // When `after` wrote its verdict, its last act: a run whose directory
    // changed later (a log begun) began after it ended.
    let ended = fs::metadata(state_dir.join("runs").join(after).join("verdict.json"))
        .and_then(|m| m.modified())
        .ok();
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(super::store::is_run_entry)
        .filter(|e| e.file_name() != after)
        .map(|e| e.path())
        .filter(|dir| {
            // Within one second, the ids cannot tell which run came
            // first: when the directory last changed can. Where that
            // cannot be told either, the run counts as later, which at
            // worst runs checks again.
            let (second, _, _) = run_order(dir);
            let changed = fs::metadata(dir).and_then(|m| m.modified()).ok();
            second > since
                || (second == since
                    && match (changed, ended) {
                        (Some(changed), Some(ended)) => changed >= ended,
                        _ => true,
                    })
        })
        .filter(|dir| !dir.join("verdict.json").exists() && run_state(dir) != RunState::Going)
        .filter(|dir| may_be_of(dir, work_tree))
        .collect();
    found.sort_by_key(|dir| run_order(dir));
    found
        .iter()
        .filter_map(|dir| dir.file_name()?.to_str().map(str::to_string))
        .collect()
}

fn termination_record(termination: &Termination) -> serde_json::Value {
    match termination {
        Termination::Exited(code) => serde_json::json!({"exited": code}),
        Termination::Signaled(signal) => serde_json::json!({"signal": signal}),
        Termination::TimedOut(limit) => {
            serde_json::json!({"timed_out_after_ms": limit.as_millis()})
        }
        Termination::Missing { program, .. } => serde_json::json!({"missing": program}),
        Termination::SpawnFailed(message) => serde_json::json!({"spawn_failed": message}),
        Termination::Interrupted => serde_json::json!({"interrupted": true}),
    }
}

/// Creates (or empties) the file `path` in a run's directory, shared as
/// the repository's sharing asks.
pub fn create_run_file(path: &Path, sharing: super::Sharing) -> io::Result<fs::File> {
    let file = fs::File::create(path)?;
    sharing.share_file(&file)?;
    Ok(file)
}

fn write_json(path: &Path, value: &impl Serialize, sharing: super::Sharing) -> io::Result<()> {
    let mut file = io::BufWriter::new(create_run_file(path, sharing)?);
    serde_json::to_writer_pretty(&mut file, value).map_err(io::Error::other)?;
    file.write_all(b"\n")?;
    file.flush()
}

/// The longest file stem a check gets; file systems allow 255 bytes.
const MAX_STEM: usize = 96;

/// A check's name as a file name in the run directory, distinct for
/// distinct names (so no two checks share a log: `a/b`, `a_b`, and a
/// name shaped like either's file name) and never the verdict's
/// (`verdict`). A plain name (`[A-Za-z0-9._-]`, not starting with `.` or
/// `_`) is kept as it is. Any other is `_` and the name escaped: `_` as
/// `__`, every other byte outside the plain set as `_` and two hex digits
/// (`a/b` → `_a_2fb`), which reads back to the name alone. An escaped
/// name too long for a file name is cut, and `~` (escaped everywhere
/// else) and a digest of the whole name end it.
fn file_stem(name: &str) -> String {
    let plain_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let plain = !name.is_empty()
        && name.len() <= MAX_STEM
        && name.bytes().all(plain_byte)
        && !name.starts_with(['.', '_'])
        && name != "verdict";
    if plain {
        return name.to_string();
    }
    let mut stem = String::from("_");
    for byte in name.bytes() {
        match byte {
            b'_' => stem.push_str("__"),
            b if plain_byte(b) => stem.push(char::from(b)),
            b => stem.push_str(&format!("_{b:02x}")),
        }
    }
    if stem.len() <= MAX_STEM {
        return stem;
    }
    // Cut where no escape is split, so that what is left still reads (the
    // escaped name is ASCII: any byte is a character's boundary).
    let mut cut = MAX_STEM - 17;
    while escape_split_at(&stem, cut) {
        cut -= 1;
    }
    stem.truncate(cut);
    format!("{stem}~{:016x}", fnv1a(name.as_bytes()))
}

/// The check name `file_stem` made `stem` from, read back; a stem cut
/// short (`~` and a digest) or not of its making is given as it is.
pub(super) fn check_of_stem(stem: &str) -> String {
    let Some(escaped) = stem.strip_prefix('_').filter(|_| !stem.contains('~')) else {
        return stem.to_string();
    };
    let mut bytes = Vec::with_capacity(escaped.len());
    let mut rest = escaped.as_bytes();
    while let Some((&first, after)) = rest.split_first() {
        if first != b'_' {
            bytes.push(first);
            rest = after;
        } else if after.first() == Some(&b'_') {
            bytes.push(b'_');
            rest = &after[1..];
        } else if let Some(byte) = after
            .get(..2)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            bytes.push(byte);
            rest = &after[2..];
        } else {
            return stem.to_string();
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| stem.to_string())
}

/// Whether cutting the escaped `stem` at `at` splits an escape (`__` or
/// `_2f`) in two.
fn escape_split_at(stem: &str, at: usize) -> bool {
    let bytes = stem.as_bytes();
    // Walk the escapes from the start: `_` opens one, never a plain byte.
    let mut i = 1;
    while i < at {
        let width = match bytes.get(i) {
            Some(b'_') if bytes.get(i + 1) == Some(&b'_') => 2,
            Some(b'_') => 3,
            _ => 1,
        };
        if i + width > at {
            return true;
        }
        i += width;
    }
    false
}

/// The 64-bit FNV-1a digest: the same in every build, unlike std's
/// `DefaultHasher`.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = crate::diagnostics::Fnv::default();
    hash.write(bytes);
    hash.finish()
}

/// `20261122T153000Z-12345`: sortable by time, unique per process.
pub fn run_id(now: SystemTime, pid: u32) -> String {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z-{pid}")
}

/// Whether `name` is a run id as `run_id` and `RunDir::create` make them
/// (`20261122T153000Z-12345`, or `-12345-2` for a later attempt): only
/// such directories are phasegate's to prune.
pub fn is_run_id(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((time, rest)) = name.split_once('-') else {
        return false;
    };
    let time = time.as_bytes();
    let stamp = time.len() == 16
        && time[8] == b'T'
        && time[15] == b'Z'
        && time[..8].iter().chain(&time[9..15]).all(u8::is_ascii_digit);
    let numbers = match rest.split_once('-') {
        Some((pid, attempt)) => digits(pid) && digits(attempt),
        None => digits(rest),
    };
    stamp && numbers
}

/// The order of run directories, oldest first: by time, then by process
/// id and attempt as numbers (as text, pid 10000 would sort before 9999
/// within one second). A name of another form sorts by itself.
pub fn run_order(dir: &Path) -> (String, u64, u64) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut parts = name.splitn(3, '-');
    let time = parts.next().unwrap_or_default().to_string();
    let number = |part: Option<&str>| part.and_then(|p| p.parse::<u64>().ok());
    match (number(parts.next()), parts.next()) {
        (Some(pid), None) => (time, pid, 0),
        (Some(pid), Some(attempt)) => match number(Some(attempt)) {
            Some(attempt) => (time, pid, attempt),
            None => (name, 0, 0),
        },
        (None, _) => (name, 0, 0),
    }
}

/// `2026-11-22T21:47:03Z`: now, in UTC, as the state's records write it.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// Seconds since the epoch → UTC calendar date and time, by the
/// calendar the handoff documents' times are read with.
pub fn civil(secs: u64) -> (u64, u64, u64, u64, u64, u64) {
    let rem = secs % 86_400;
    let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Days since 1970 fit an i64 for any `u64` of seconds.
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let (year, month, day) = crate::handoff::time::civil_from_days(days);
    // A date after 1970 has no negative part.
    let part = |n: i64| u64::try_from(n).unwrap_or(0);
    (part(year), part(month), part(day), hour, minute, second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_that_ended_without_a_verdict_after_another_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let make = |id: &str, verdict: bool| {
            fs::create_dir_all(runs.join(id)).unwrap();
            if verdict {
                fs::write(runs.join(id).join("verdict.json"), "{}").unwrap();
            }
        };
        make("20261124T010202Z-7", false);
        make("20261124T010203Z-5", true);
        make("20261124T010204Z-6", false);
        make("20261124T010205Z-8", true);
        make("20261124T010206Z-9", false);
        fs::create_dir_all(runs.join("saved-logs")).unwrap();
        // One still going holds its directory.
        let going = runs.join("20261124T010207Z-10");
        fs::create_dir_all(&going).unwrap();
        let held = fs::File::open(&going).unwrap();
        rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        assert_eq!(
            unfinished_since(dir.path(), "20261124T010203Z-5", "."),
            ["20261124T010204Z-6", "20261124T010206Z-9"]
        );
        assert!(unfinished_since(dir.path(), "20261124T010206Z-9", ".").is_empty());
        assert!(unfinished_since(&dir.path().join("none"), "20261124T010203Z-5", ".").is_empty());
    }
    use std::time::Duration;

    #[test]
    fn run_ids_are_utc_timestamps() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_361_400);
        assert_eq!(run_id(t, 42), "20261122T153000Z-42");
        assert_eq!(run_id(UNIX_EPOCH, 1), "19700101T000000Z-1");
        // Within one second, by pid and attempt as numbers.
        let mut dirs: Vec<PathBuf> = [
            "20261122T153000Z-10000",
            "20261122T153001Z-1",
            "20261122T153000Z-9999-2",
            "20261122T153000Z-9999",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        dirs.sort_by_key(|d| run_order(d));
        assert_eq!(
            dirs,
            [
                "20261122T153000Z-9999",
                "20261122T153000Z-9999-2",
                "20261122T153000Z-10000",
                "20261122T153001Z-1",
            ]
            .map(PathBuf::from)
        );
        // 2024-02-29 is a leap day.
        assert_eq!(civil(1_709_164_800), (2024, 2, 29, 0, 0, 0));
    }

    #[test]
    fn run_ids_are_told_from_other_names() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_361_400);
        assert!(is_run_id(&run_id(t, 42)));
        assert!(is_run_id("20261122T153000Z-42-3"));
        for name in [
            "0-saved-logs",
            "zz-other",
            "20261122T153000Z",
            "20261122T153000Z-",
            "20261122T153000Z-42-",
            "20261122T153000Z-42-3-1",
            "20261122T153000Z-4x",
            "2026112xT153000Z-42",
            "20261122T153000Z-42 copy",
        ] {
            assert!(!is_run_id(name), "{name}");
        }
    }

    #[test]
    fn file_stems_are_distinct_for_distinct_names_and_read_as_them() {
        assert_eq!(file_stem("a/b"), "_a_2fb");
        assert_eq!(file_stem("_a_b"), "___a__b");
        assert_eq!(file_stem("verdict"), "_verdict");
        let long = "y/".repeat(200);
        let mut names: Vec<String> = [
            "a/b", "a_b", "a b", "_a_b", "a__b", "_a_2fb", "a_2fb", "verdict", "_verdict", ".",
            "..", ".x", "_", "__", "", "é", "_c3_a9", "a~b",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        names.push(long.clone());
        names.push(format!("{long}z"));
        names.push("x".repeat(300));
        names.push("x".repeat(301));
        // A name shaped like another's file name gets one of its own.
        let stems: Vec<String> = names.iter().map(|n| file_stem(n)).collect();
        names.extend(stems);
        names.sort();
        names.dedup();
        let stems: std::collections::BTreeSet<String> =
            names.iter().map(|n| file_stem(n)).collect();
        assert_eq!(stems.len(), names.len(), "{stems:#?}");
        for stem in &stems {
            assert!(
                !stem.is_empty() && stem.len() <= MAX_STEM && stem != "verdict",
                "{stem}"
            );
            assert!(
                stem.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-~".contains(&b)),
                "{stem}"
            );
            assert!(!stem.starts_with('.'), "{stem}");
        }
        // A long name is cut where no escape is split.
        let cut = file_stem(&long);
        let (kept, _) = cut.split_once('~').unwrap();
        assert!(kept.starts_with("_y_2fy_2f"), "{cut}");
        assert!(kept.ends_with('y') || kept.ends_with("_2f"), "{cut}");
        // Every stem not cut short reads back to its check's name.
        for name in ["tests", "a/b", "_a_b", "verdict", "é", "a b", "..", ""] {
            assert_eq!(check_of_stem(&file_stem(name)), name);
        }
        assert_eq!(check_of_stem(&cut), cut);
    }

    #[test]
    fn a_recorded_command_line_runs_the_very_bytes_of_its_argv() {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let argv: Vec<std::ffi::OsString> = vec![
            "printf".into(),
            "<%s>".into(),
            "plain/name.md".into(),
            "it's a $(name)".into(),
            "".into(),
            "new\nline\\".into(),
            std::ffi::OsString::from_vec(b"caf\xe9 \xff\xfe'.md".to_vec()),
        ];
        let line = sh_command(&argv);
        assert!(line.starts_with("printf '<%s>' plain/name.md "), "{line}");
        let out = std::process::Command::new("sh")
            .args(["-c", &line])
            .output()
            .unwrap();
        let mut expected = Vec::new();
        for arg in &argv[2..] {
            expected.extend_from_slice(b"<");
            expected.extend_from_slice(arg.as_bytes());
            expected.extend_from_slice(b">");
        }
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(out.stdout, expected, "{line}");
    }

    #[test]
    fn check_names_become_safe_file_names() {
        assert_eq!(file_stem("tests"), "tests");
        assert_eq!(file_stem("lint-js.v2"), "lint-js.v2");
        for name in ["a/b c", "..", "verdict", "", &"x".repeat(300)] {
            let stem = file_stem(name);
            assert!(stem.starts_with('_') && stem.len() < 100, "{name}: {stem}");
            assert!(!stem.contains('/'), "{stem}");
        }
        // No two checks share a file, nor a check the verdict's.
        let names = ["a/b", "a_b", "a b", "verdict", "_verdict"];
        let stems: std::collections::BTreeSet<String> =
            names.iter().map(|n| file_stem(n)).collect();
        assert_eq!(stems.len(), names.len());
        assert!(!stems.contains("verdict"));
    }
}
