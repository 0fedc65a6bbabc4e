//! `state.json`: the history of recent runs with the fingerprints of their
//! errors, which is how the same errors repeating are noticed. Read and
//! written under the state lock, written atomically; a file that cannot be
//! read is moved aside, never deleted.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::lock::write_swapping;
use super::run_dir::RunState;

pub const STATE_SCHEMA: &str = "phasegate/state/v1";
/// Runs remembered in `state.json`.
pub const MAX_HISTORY: usize = 100;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct State {
    pub schema: String,
    pub runs: Vec<RunRecord>,
}

impl Default for State {
    fn default() -> State {
        State {
            schema: STATE_SCHEMA.to_string(),
            runs: Vec::new(),
        }
    }
}

/// One run, as later runs, `history` and `resume` need it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunRecord {
    pub run_id: String,
    /// RFC 3339, UTC.
    pub time: String,
    /// The phase it ran in; none for a run a configuration that does not
    /// load stopped before anything named its phase (neither `--phase`
    /// nor `PHASEGATE_PHASE`). Such a run is kept with an empty name,
    /// which an earlier version, that needs the field to be text, reads
    /// too (it would set aside a `state.json` it cannot read); an empty
    /// name reads as none.
    #[serde(
        default,
        deserialize_with = "named_phase",
        serialize_with = "phase_or_empty"
    )]
    pub phase: Option<String>,
    pub profile: String,
    /// The run took its profile from the configuration (`[gate] profile`)
    /// rather than being asked for one (`--profile`, `PHASEGATE_PROFILE`):
    /// its resume then goes by the configuration as it is now, so a gate
    /// made stricter since is not resumed under the weaker profile. False
    /// in records of earlier versions, whose resume keeps their profile.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile_configured: bool,
    #[serde(default)]
    pub workflow: Option<String>,
    pub status: String,
    pub selection: SelectionRecord,
    pub checks: Vec<CheckRecord>,
    /// The work tree it ran in (`RepoInfo::work_tree_key`): linked
    /// worktrees share the history, and one's runs say nothing of
    /// another's files. Absent in records of earlier versions, which any
    /// work tree may have made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_tree: Option<String>,
    /// What stopped the run before any check ran: a configuration that
    /// does not load (exit 2). Such a run checked nothing, so it has no
    /// checks, neither continues nor breaks a streak of the same errors,
    /// and `resume` has nothing of it to run again. Absent for a run that
    /// got to its checks, and in records of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopRecord>,
    /// A digest of what its checks judged, kept for a run that failed
    /// with errors: the index's entries for a staged run (`index:<id>`),
    /// the range's commits for a range run (`range:<from>..<to>`). A run
    /// on the same input as the run before it, with the same checks, is
    /// not a new attempt (`gate::attempts`). Absent for the other runs
    /// (`--all-files` and `--files` judge the work tree, which has no
    /// cheap exact digest), and in records of earlier versions: those
    /// count as attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
}

/// A phase as `state.json` keeps it: its name, empty for none.
#[expect(
    clippy::ref_option,
    reason = "serde's `serialize_with` hands the field over by reference"
)]
fn phase_or_empty<S: serde::Serializer>(phase: &Option<String>, to: S) -> Result<S::Ok, S::Error> {
    to.serialize_str(phase.as_deref().unwrap_or_default())
}

/// A recorded phase: a name, or none (the empty name, or `null`).
fn named_phase<'de, D: serde::Deserializer<'de>>(from: D) -> Result<Option<String>, D::Error> {
    let phase: Option<String> = Option::deserialize(from)?;
    Ok(phase.filter(|name| !name.is_empty()))
}

/// Why a run stopped before its checks, as `history` shows it: where the
/// first problem is and what it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StopRecord {
    /// The verdict's `error.kind`: `config`.
    pub kind: String,
    /// The verdict's `error.message` (which file, and which version of
    /// it: staged, or a ref's).
    pub message: String,
    /// The first problem: its file, line and column, as the verdict's
    /// `error.problems` place it (none when nothing places it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// What the first problem is (`unknown key `profle` in [gate]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// How many problems the verdict names in all.
    #[serde(default)]
    pub problems: usize,
}

impl StopRecord {
    /// Whether the run stopped on its configuration.
    pub fn is_config(&self) -> bool {
        self.kind == "config"
    }

    /// Where and what the first problem is, on one line:
    /// `phasegate.toml:2:1: unknown key `profle` in [gate] (and 1 more)`;
    /// the error's message when no problem is placed.
    pub fn headline(&self) -> String {
        let place = match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}: "),
            (Some(file), Some(line), None) => format!("{file}:{line}: "),
            (Some(file), None, _) => format!("{file}: "),
            (None, _, _) => String::new(),
        };
        let what = self.problem.as_deref().unwrap_or(&self.message);
        let more = match self.problems.saturating_sub(1) {
            0 => String::new(),
            n => format!(" (and {n} more)"),
        };
        format!("{place}{what}{more}")
    }
}

/// How the run chose its files and what judged them, enough to do both
/// again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct SelectionRecord {
    /// `staged`, `all`, `files` or `range`; `unknown` for a run stopped
    /// before it selected its files whose selection cannot be told
    /// without making it (a CI range whose ends this clone lacks): a
    /// resume selects as a run that names no files does.
    pub mode: String,
    /// The files of a `files` run whose names are UTF-8.
    #[serde(default)]
    pub files: Vec<String>,
    /// The others, as their bytes: a name git and the file system allow
    /// any byte in, written as text with `\u{fffd}` where its bytes were,
    /// would name no file. Apart from `files`, so that a state this field
    /// is not in (an earlier version's) still reads, and an earlier
    /// version still reads this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_bytes: Vec<Vec<u8>>,
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub to: Option<String>,
    /// The ref a pre-push hook checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_ref: Option<String>,
    /// The push it checked that ref of: a pre-push hook runs once per
    /// pushed ref (those of other commits), and the runs of one push are
    /// one attempt, never a streak of their own (`gate::previous_error_sets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<String>,
    /// `--config-from-ref`: the ref whose `phasegate.toml` judged the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_from_ref: Option<String>,
    /// The published commits a pushed ref's commits were compared with
    /// (see `SelectionSummary::published`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<String>,
    /// The checks `--check` asked for (none: every check of the phase).
    /// A resume takes them up again and no others: the checks the run
    /// left out were never its to finish.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// The branch checked out when the run was made (none on a detached
    /// `HEAD`, and in records of earlier versions). Another branch's
    /// failures are other work: they neither start nor continue a streak
    /// of the same errors on this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

impl SelectionRecord {
    /// Keeps `paths` as the run's files, each name whole.
    pub fn set_files(&mut self, paths: &[PathBuf]) {
        use std::os::unix::ffi::OsStrExt;
        self.files.clear();
        self.files_bytes.clear();
        for path in paths {
            match path.to_str() {
                Some(text) => self.files.push(text.to_string()),
                None => self.files_bytes.push(path.as_os_str().as_bytes().to_vec()),
            }
        }
    }

    /// The run's files, each name as it was kept (`set_files`).
    pub fn paths(&self) -> Vec<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        self.files
            .iter()
            .map(PathBuf::from)
            .chain(
                self.files_bytes
                    .iter()
                    .map(|bytes| PathBuf::from(std::ffi::OsStr::from_bytes(bytes))),
            )
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CheckRecord {
    pub name: String,
    pub status: String,
    /// Fingerprints of its errors, sorted.
    #[serde(default)]
    pub fingerprints: Vec<String>,
    /// The check's configuration as it ran (`CheckSpec::fingerprint`);
    /// absent in records of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// A Ctrl-C (or SIGTERM, SIGHUP) cut it short: its errors are not
    /// known, so its run neither continues nor breaks a streak of the same
    /// errors (`gate::previous_error_sets`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `PHASEGATE_SKIP` kept it from running: nothing verified it, so a
    /// resume runs it again rather than carry the skip over as settled
    /// (`CheckResult::skipped_by_env`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped_by_env: bool,
}

impl RunRecord {
    /// Whether this run may have been made in the work tree `key` names
    /// (a record of an earlier version says nothing, so it may).
    pub fn in_work_tree(&self, key: &str) -> bool {
        self.work_tree.as_deref().is_none_or(|mine| mine == key)
    }

    /// Whether this run may have been made on `branch` (`None`: a
    /// detached `HEAD`). A run on a detached `HEAD`, or of an earlier
    /// version, says nothing of its branch, so it may.
    pub fn on_branch(&self, branch: Option<&str>) -> bool {
        match (self.selection.branch.as_deref(), branch) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        }
    }

    /// Whether this run judged what `earlier` judged: the same input
    /// (`input`), selected the same way, under the same profile, with the
    /// same checks run in the same configuration (`CheckRecord::config`).
    /// A run without a digest, or with a check whose configuration is not
    /// known, judged something new.
    pub fn same_input(&self, earlier: &RunRecord) -> bool {
        let ran = |run: &RunRecord| -> Option<Vec<(String, String)>> {
            let mut ran: Vec<(String, String)> = run
                .checks
                .iter()
                .filter(|c| c.status != "skipped")
                .map(|c| Some((c.name.clone(), c.config.clone()?)))
                .collect::<Option<_>>()?;
            ran.sort();
            Some(ran)
        };
        self.input.is_some()
            && self.input == earlier.input
            && self.selection.mode == earlier.selection.mode
            && self.profile == earlier.profile
            && self.workflow == earlier.workflow
            && ran(self).is_some_and(|mine| Some(mine) == ran(earlier))
    }

    /// The fingerprints of every error of the run, sorted, once each.
    pub fn error_set(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .checks
            .iter()
            .flat_map(|c| c.fingerprints.iter().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

impl State {
    /// Forgets the file lists of every run but the newest of each work
    /// tree (and the newest of earlier versions, which kept no work tree):
    /// only those are ever resumed. A `--files` run keeps every file it
    /// selected (a directory's whole content, for `--files src`), and
    /// every run reads and writes `state.json`: kept for each of the
    /// remembered runs, those lists made it grow to a hundred times the
    /// largest, and every run as slow.
    fn forget_old_selections(&mut self) {
        let mut newest: Vec<Option<&str>> = Vec::new();
        let mut forget = Vec::new();
        for (index, run) in self.runs.iter().enumerate().rev() {
            let work_tree = run.work_tree.as_deref();
            if newest.contains(&work_tree) {
                forget.push(index);
            } else {
                newest.push(work_tree);
            }
        }
        for index in forget {
            self.runs[index].selection.files = Vec::new();
            self.runs[index].selection.files_bytes = Vec::new();
        }
    }
}

/// What reading `state.json` found.
#[derive(Debug)]
pub enum Loaded {
    State(State),
    /// It could not be read: moved to `moved_to`, and a fresh state begun.
    Corrupt {
        moved_to: PathBuf,
        error: String,
    },
    /// Another version of phasegate wrote it (`schema`): it is left as it
    /// is, for that version to go on with.
    OtherVersion {
        schema: String,
    },
}

pub fn state_file(state_dir: &Path) -> PathBuf {
    state_dir.join("state.json")
}

/// Reads `state.json` (a missing file is a fresh state).
pub fn load(state_dir: &Path) -> io::Result<Loaded> {
    let path = state_file(state_dir);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Loaded::State(State::default()))
        }
        Err(e) => return Err(e),
    };
    match parse(&bytes) {
        Ok(state) => Ok(Loaded::State(state)),
        Err(error) => {
            if let Some(schema) = other_version(&bytes) {
                return Ok(Loaded::OtherVersion { schema });
            }
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            // A link stays, and what it leads to is moved aside beside
            // itself: the next save writes a new history where it led.
            let real = super::lock::write_target(&path)?;
            let name = real
                .file_name()
                .map_or_else(|| "state.json".into(), |n| n.to_string_lossy());
            let moved_to =
                real.with_file_name(format!("{name}.corrupt-{stamp}-{}", std::process::id()));
            fs::rename(&real, &moved_to)?;
            Ok(Loaded::Corrupt { moved_to, error })
        }
    }
}

/// The schema of a state another version of phasegate wrote
/// (`phasegate/state/v2`), when that is what `bytes` hold.
pub fn other_version(bytes: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Head {
        schema: String,
    }
    let head: Head = serde_json::from_slice(bytes).ok()?;
    (head.schema.starts_with("phasegate/state/") && head.schema != STATE_SCHEMA)
        .then_some(head.schema)
}

/// Reads `state.json`'s content, or says why it cannot be read.
pub fn parse(bytes: &[u8]) -> Result<State, String> {
    let state = serde_json::from_slice::<State>(bytes).map_err(|e| e.to_string())?;
    if state.schema == STATE_SCHEMA {
        Ok(state)
    } else {
        Err(format!("unknown schema `{}`", state.schema))
    }
}

/// Writes `state.json` atomically, keeping the newest `MAX_HISTORY` runs
/// (and the files of the newest of each work tree).
pub fn save(
    state_dir: &super::StateDir,
    state: &mut State,
    before_rename: &dyn Fn(),
) -> io::Result<()> {
    if state.runs.len() > MAX_HISTORY {
        let excess = state.runs.len() - MAX_HISTORY;
        state.runs.drain(..excess);
    }
    state.forget_old_selections();
    let mut bytes = serde_json::to_vec_pretty(state).map_err(io::Error::other)?;
    bytes.push(b'\n');
    write_swapping(
        &state_file(state_dir),
        &bytes,
        state_dir.sharing,
        before_rename,
    )
}

/// The pruning of old run directories, on a thread of its own so that it
/// costs nothing while the checks run. It holds the state lock while it
/// works.
#[derive(Debug)]
pub struct Pruning(std::thread::JoinHandle<Result<usize, Unpruned>>);

/// Why a pruning removed nothing, or not all it should have.
#[derive(Debug)]
pub enum Unpruned {
    /// The state lock could not be taken: nothing was looked at. The run
    /// that waits for the pruning takes that lock next, and usually meets
    /// the same error, which it then says once for both.
    Unlocked(io::Error),
    /// Directories that could not be removed, or read.
    Failed(io::Error),
}

impl std::fmt::Display for Unpruned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unpruned::Unlocked(e) | Unpruned::Failed(e) => e.fmt(f),
        }
    }
}

impl Pruning {
    /// Starts removing the oldest run directories beyond `keep`, and the
    /// temporary checkouts of runs that ended (under the state directory,
    /// and in `snapshots`, the repository's directory of them in the
    /// user's cache), waiting up to `wait` for the state lock.
    pub fn start(
        state_dir: &super::StateDir,
        snapshots: Option<&Path>,
        keep: usize,
        wait: std::time::Duration,
    ) -> Pruning {
        let dir = state_dir.clone();
        let snapshots = snapshots.map(Path::to_path_buf);
        Pruning(std::thread::spawn(move || {
            let _lock = super::StateLock::acquire(&dir, wait).map_err(Unpruned::Unlocked)?;
            prune_runs_with(&dir, snapshots.as_deref(), keep, &|dir| {
                fs::remove_dir_all(dir)
            })
            .map_err(Unpruned::Failed)
        }))
    }

    /// Waits for the pruning to end: the number of directories removed.
    pub fn finish(self) -> Result<usize, Unpruned> {
        self.0.join().unwrap_or_else(|_| {
            Err(Unpruned::Failed(io::Error::other(
                "the pruning thread panicked",
            )))
        })
    }
}

/// Removes the oldest run directories beyond `keep`, except those of runs
/// still going (a long run started before others keeps its logs). Run ids
/// start with their UTC time, so they sort oldest first (`run_order`),
/// and within one second by when their directory last changed.
/// Only directories named by a run id are runs: anything else a person
/// keeps there (`runs/saved-logs`) is neither removed nor counted.
/// A directory that cannot be removed (a file in it made immutable, a
/// file system gone read-only) is passed over, never stopped at: it would
/// stay the oldest, and stopping there would keep every later run from
/// being pruned, for good. The error names each one left.
pub fn prune_runs(state_dir: &Path, keep: usize) -> io::Result<usize> {
    prune_runs_with(state_dir, None, keep, &|dir| fs::remove_dir_all(dir))
}

/// `prune_runs`, removing each directory with `remove`.
fn prune_runs_with(
    state_dir: &Path,
    snapshots: Option<&Path>,
    keep: usize,
    remove: &dyn Fn(&Path) -> io::Result<()>,
) -> io::Result<usize> {
    let runs = state_dir.join("runs");
    let mut dirs: Vec<PathBuf> = match fs::read_dir(&runs) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(is_run_entry)
            .map(|e| e.path())
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    // Within one second, process ids say nothing of which run came first
    // once they wrap around: the directory's last change does.
    dirs.sort_by_cached_key(|d| {
        let (second, pid, attempt) = super::run_dir::run_order(d);
        let changed = fs::metadata(d).and_then(|m| m.modified()).ok();
        (second, changed, pid, attempt)
    });
    let excess = dirs.len().saturating_sub(keep);
    let mut removed = 0;
    let mut left: Vec<(PathBuf, io::Error)> = Vec::new();
    for dir in dirs[..excess]
        .iter()
        .filter(|d| super::run_dir::run_state(d) != RunState::Going)
    {
        match remove(dir) {
            Ok(()) => removed += 1,
            Err(e) => left.push((dir.clone(), e)),
        }
    }
    // The temporary checkout of a run that was killed (a whole work tree)
    // goes too, once its run has surely ended (never where locks cannot
    // tell): in the user's cache, and under the state directory, where
    // one goes that the cache could not take.
    let legacy = state_dir.join("snapshots");
    for dir in snapshots.into_iter().chain([legacy.as_path()]) {
        prune_snapshots(dir, &runs, remove, &mut left);
    }
    // The refs interrupted pushes did not reach, bounded as the runs are.
    super::unreached::prune_unreached(state_dir, keep, || pushes_resumable(state_dir), &mut left);
    if left.is_empty() {
        Ok(removed)
    } else {
        Err(not_removed(&left, removed))
    }
}

/// The pushes `phasegate resume` may still take up: that of the last run
/// of each work tree in the history (a resume starts from its work tree's
/// last run). `None` when the history cannot be read: then nothing is
/// known to be unneeded.
fn pushes_resumable(state_dir: &Path) -> Option<Vec<String>> {
    let bytes = match fs::read(state_file(state_dir)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    let state = parse(&bytes).ok()?;
    let mut last: Vec<(Option<&str>, Option<&str>)> = Vec::new();
    for run in state.runs.iter().rev() {
        let tree = run.work_tree.as_deref();
        if !last.iter().any(|(seen, _)| *seen == tree) {
            last.push((tree, run.selection.push.as_deref()));
        }
    }
    Some(
        last.into_iter()
            .filter_map(|(_, push)| push.map(str::to_string))
            .collect(),
    )
}

/// The error of a pruning that left `left` behind (and removed `removed`
/// others): each directory named, with why, and what to do.
fn not_removed(left: &[(PathBuf, io::Error)], removed: usize) -> io::Error {
    let named: Vec<String> = left
        .iter()
        .take(5)
        .map(|(dir, e)| format!("`{}` ({e})", dir.display()))
        .collect();
    let more = if left.len() > named.len() {
        format!(" and {} more", left.len() - named.len())
    } else {
        String::new()
    };
    let them = if left.len() == 1 { "it" } else { "them" };
    // Denied even to root: a file made immutable (or append-only).
    let hint = if left
        .iter()
        .any(|(_, e)| e.kind() == io::ErrorKind::PermissionDenied)
    {
        " (a file denied to this user; as root, `lsattr -R` shows one made immutable, which `chattr -i` frees)"
    } else {
        ""
    };
    io::Error::new(
        left[0].1.kind(),
        format!(
            "failed to remove {}{more}; {removed} other old run(s) were removed: remove {them} by hand{hint}",
            named.join(", "),
        ),
    )
}

/// Where the checks working in the temporary checkout `dir` record their
/// process groups: beside its git files, where the run that removes the
/// checkout of a killed run finds them.
pub fn snapshot_groups(dir: &Path) -> PathBuf {
    dir.join(".git").join("groups")
}

/// Removes the checkouts in `dir` whose runs ended (their directories
/// under `runs`, or where a checkout's `snapshot_run` names it), after
/// stopping what still works in them; what cannot be removed is added to
/// `left`.
fn prune_snapshots(
    dir: &Path,
    runs: &Path,
    remove: &dyn Fn(&Path) -> io::Result<()>,
    left: &mut Vec<(PathBuf, io::Error)>,
) {
    let Ok(snapshots) = fs::read_dir(dir) else {
        return;
    };
    for snapshot in snapshots.filter_map(Result::ok).filter(is_run_entry) {
        let path = snapshot.path();
        let run = fs::read(snapshot_run(&path))
            .ok()
            .map(|bytes| {
                PathBuf::from(
                    <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes),
                )
            })
            .filter(|run| run.is_absolute())
            .unwrap_or_else(|| runs.join(snapshot.file_name()));
        if matches!(
            super::run_dir::run_state(&run),
            RunState::Gone | RunState::Ended
        ) {
            // Its checks may still run there, orphaned.
            crate::runner::stop_recorded_groups(&snapshot_groups(&path));
            if let Err(e) = remove(&path) {
                left.push((path, e));
            }
        }
    }
}

/// The file in the temporary checkout `dir` that names the directory of
/// the run it belongs to, whose lock says whether that run still goes
/// (the run's directory may be elsewhere than the state directory that
/// prunes, when that one could not be written).
pub fn snapshot_run(dir: &Path) -> PathBuf {
    dir.join(".git").join("run")
}

/// Where the temporary checkouts of the repository whose state directory
/// is `state_dir` (and whose work tree is `root`) go, under the user's
/// cache directory `cache_home`: outside any `.git` directory, whose
/// paths tools pass over (jest's file map leaves out every path with a
/// `/.git/` in it: a checkout there holds no test for it to find). One
/// directory per repository, named after its work tree's directory and
/// told apart from others of that name by a hash of its state
/// directory's path.
pub fn snapshots_dir(cache_home: &Path, state_dir: &Path, root: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = super::run_dir::fnv1a(state_dir.as_os_str().as_bytes());
    cache_home
        .join("phasegate")
        .join("snapshots")
        .join(format!("{name}-{hash:016x}"))
}

/// Whether a directory entry is a run's: a directory itself (never a link
/// to one) named by a run id.
pub(super) fn is_run_entry(entry: &fs::DirEntry) -> bool {
    entry.file_type().is_ok_and(|t| t.is_dir())
        && entry
            .file_name()
            .to_str()
            .is_some_and(super::run_dir::is_run_id)
}

/// A staged run that failed in its check `build` (configured as
/// `config`) on `input`, in the work tree `.`: what the tests of the
/// history and of its streaks compare.
#[cfg(test)]
pub fn staged_run(input: Option<&str>, config: Option<&str>) -> RunRecord {
    RunRecord {
        run_id: String::new(),
        time: String::new(),
        phase: Some("implementation".to_string()),
        profile: "auto".to_string(),
        profile_configured: false,
        workflow: None,
        status: "failed".to_string(),
        selection: SelectionRecord {
            mode: "staged".to_string(),
            ..SelectionRecord::default()
        },
        checks: vec![CheckRecord {
            name: "build".to_string(),
            status: "failed".to_string(),
            fingerprints: vec!["f1".to_string()],
            config: config.map(str::to_string),
            interrupted: false,
            skipped_by_env: false,
        }],
        work_tree: Some(".".to_string()),
        stopped: None,
        input: input.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed run of `--files FILE`, with no check, in `work_tree`.
    fn files_run(work_tree: Option<&str>, file: &str) -> RunRecord {
        RunRecord {
            run_id: file.to_string(),
            selection: SelectionRecord {
                mode: "files".to_string(),
                files: vec![file.to_string()],
                ..SelectionRecord::default()
            },
            checks: Vec::new(),
            work_tree: work_tree.map(str::to_string),
            ..staged_run(None, None)
        }
    }

    #[test]
    fn the_same_input_needs_a_digest_and_the_same_checks() {
        let first = staged_run(Some("index:1"), Some("c1"));
        assert!(staged_run(Some("index:1"), Some("c1")).same_input(&first));
        assert!(!staged_run(Some("index:2"), Some("c1")).same_input(&first));
        assert!(!staged_run(Some("index:1"), Some("c2")).same_input(&first));
        // No digest (an earlier version's record, an `--all-files` run),
        // or a check whose configuration is not known: something new.
        assert!(!staged_run(None, Some("c1")).same_input(&staged_run(None, Some("c1"))));
        assert!(!staged_run(Some("index:1"), None).same_input(&staged_run(Some("index:1"), None)));
        let strict = RunRecord {
            profile: "strict".to_string(),
            ..staged_run(Some("index:1"), Some("c1"))
        };
        assert!(!strict.same_input(&first));
    }

    /// A state written without the digest reads, and one written with it
    /// keeps it.
    #[test]
    fn the_input_is_optional_in_state_json() {
        let run = staged_run(Some("index:1"), Some("c1"));
        let mut text = serde_json::to_value(&run).unwrap();
        assert_eq!(text["input"], "index:1");
        text.as_object_mut().unwrap().remove("input");
        let read: RunRecord = serde_json::from_value(text).unwrap();
        assert_eq!(read.input, None);
        assert!(serde_json::to_value(&read).unwrap().get("input").is_none());
    }

    /// A run no phase was named for is kept with an empty name, which
    /// earlier versions read too, and read back as none, as `null` is.
    #[test]
    fn a_run_of_no_phase_is_kept_without_one() {
        let none = RunRecord {
            phase: None,
            ..files_run(Some("."), "a.rs")
        };
        let kept = serde_json::to_value(&none).unwrap();
        assert_eq!(kept["phase"], "", "{kept:#}");
        let back: RunRecord = serde_json::from_value(kept.clone()).unwrap();
        assert_eq!(back, none);
        for earlier in [serde_json::json!(""), serde_json::Value::Null] {
            let mut old = kept.clone();
            old["phase"] = earlier;
            let read: RunRecord = serde_json::from_value(old).unwrap();
            assert_eq!(read.phase, None);
        }
        let named = serde_json::to_value(files_run(None, "a.rs")).unwrap();
        assert_eq!(named["phase"], "implementation");
    }

    /// `state.json` keeps each check's configuration digest, and a later
    /// phasegate (built by another compiler, perhaps) compares it: it must
    /// come out the same in every build, or `resume` runs every check
    /// again after an upgrade and carries nothing over.
    #[test]
    fn a_check_configuration_digest_is_the_same_in_every_build() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("phasegate.toml"),
            r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [
  { name = "lint", command = "cargo clippy -- -D warnings", files = ["src/**/*.rs"], timeout = "90s", env = { RUST_LOG = "warn" }, on_failure = "warn" },
  { name = "script", command = "./check.sh {files}", shell = true, cwd = "tools", parser = "generic" },
]
"#,
        )
        .unwrap();
        let config = crate::config::load(dir.path()).unwrap();
        let digests: Vec<String> = config
            .checks_for("implementation", None)
            .unwrap()
            .iter()
            .map(crate::config::CheckSpec::fingerprint)
            .collect();
        // The first worked out by hand: FNV-1a 64 over `custom`, `argv`,
        // `5`, each word, `1`, the glob, the timeout in nanoseconds, `1`,
        // `RUST_LOG`, `warn`, `no cwd`, `auto`, `lint`, `warn`, `block`,
        // `no filter`, each followed by the byte 0xff.
        assert_eq!(digests, ["efee151e828d25c4", "a5898d941cea7469"]);
    }

    #[test]
    fn only_the_newest_run_of_each_work_tree_keeps_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = State::default();
        for (work_tree, file) in [
            (None, "old-version"),
            (None, "newest-old-version"),
            (Some("."), "main-1"),
            (Some("worktrees/side"), "side-1"),
            (Some("."), "main-2"),
            (Some("worktrees/side"), "side-2"),
            (Some("."), "main-3"),
        ] {
            state.runs.push(files_run(work_tree, file));
        }
        save(&crate::state::umask_dir(dir.path()), &mut state, &|| {}).unwrap();
        let Loaded::State(read) = load(dir.path()).unwrap() else {
            panic!("state.json does not read back");
        };
        let kept: Vec<(&str, usize)> = read
            .runs
            .iter()
            .map(|r| (r.run_id.as_str(), r.selection.files.len()))
            .collect();
        assert_eq!(
            kept,
            [
                ("old-version", 0),
                ("newest-old-version", 1),
                ("main-1", 0),
                ("side-1", 0),
                ("main-2", 0),
                ("side-2", 1),
                ("main-3", 1),
            ]
        );
        assert_eq!(read.runs[6].selection.files, ["main-3"]);
    }

    #[test]
    fn a_name_that_is_not_utf8_is_kept_whole_and_earlier_states_still_read() {
        use std::os::unix::ffi::OsStrExt;
        /// What an earlier version reads of a selection.
        #[derive(Deserialize)]
        struct Earlier {
            files: Vec<String>,
        }
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"src/caf\xe9.rs"));
        let mut selection = SelectionRecord {
            mode: "files".to_string(),
            ..SelectionRecord::default()
        };
        selection.set_files(&[PathBuf::from("a.rs"), odd.clone()]);
        let text = serde_json::to_string(&selection).unwrap();
        let read: SelectionRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(read.paths(), [PathBuf::from("a.rs"), odd]);
        // An earlier version's record, and what it reads of this one.
        let earlier: SelectionRecord =
            serde_json::from_str(r#"{"mode":"files","files":["a.rs"]}"#).unwrap();
        assert_eq!(earlier.paths(), [PathBuf::from("a.rs")]);
        let theirs: Earlier = serde_json::from_str(&text).unwrap();
        assert_eq!(theirs.files, ["a.rs"]);
    }

    #[test]
    fn only_run_directories_are_pruned_or_counted() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let mine = ["0-saved-logs", "zz-other", "20261122T153000Z-notes"];
        for name in mine {
            fs::create_dir_all(runs.join(name)).unwrap();
            fs::write(runs.join(name).join("keep.txt"), "mine\n").unwrap();
        }
        let ids = [
            "20261122T153000Z-1",
            "20261122T153001Z-1",
            "20261122T153002Z-1",
            "20261122T153003Z-1",
        ];
        for id in ids {
            fs::create_dir_all(runs.join(id)).unwrap();
        }
        // A link named like a run goes nowhere it points.
        let elsewhere = tempfile::tempdir().unwrap();
        fs::write(elsewhere.path().join("keep.txt"), "theirs\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), runs.join("20000101T000000Z-1")).unwrap();
        fs::create_dir_all(dir.path().join("snapshots/saved")).unwrap();

        assert_eq!(prune_runs(dir.path(), 2).unwrap(), 2);
        let mut left: Vec<String> = fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected: Vec<&str> = mine.to_vec();
        expected.extend(&ids[2..]);
        expected.push("20000101T000000Z-1");
        expected.sort_unstable();
        assert_eq!(left, expected);
        for name in mine {
            assert!(runs.join(name).join("keep.txt").exists(), "{name}");
        }
        assert!(elsewhere.path().join("keep.txt").exists());
        assert!(dir.path().join("snapshots/saved").exists());
    }

    #[test]
    fn a_run_directory_that_cannot_be_removed_is_passed_over_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let ids = [
            "20261122T153000Z-1",
            "20261122T153001Z-1",
            "20261122T153002Z-1",
            "20261122T153003Z-1",
            "20261122T153004Z-1",
        ];
        for id in ids {
            fs::create_dir_all(runs.join(id)).unwrap();
        }
        let stuck = runs.join(ids[0]);
        let remove = |d: &Path| {
            if d == stuck {
                Err(io::Error::from(io::ErrorKind::PermissionDenied))
            } else {
                fs::remove_dir_all(d)
            }
        };
        let error = prune_runs_with(dir.path(), None, 2, &remove).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(&format!("`{}`", stuck.display()))
                && message.contains("2 other old run(s) were removed")
                && message.contains("by hand"),
            "{message}"
        );
        let mut left: Vec<String> = fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [ids[0], ids[3], ids[4]]);
        // Again, with a newer run: still passed over, the new excess goes.
        fs::create_dir_all(runs.join("20261122T153005Z-1")).unwrap();
        assert!(prune_runs_with(dir.path(), None, 2, &remove).is_err());
        assert!(!runs.join(ids[3]).exists());
        assert!(stuck.exists());
    }

    #[test]
    fn runs_of_one_second_are_pruned_in_the_order_they_were_written() {
        // Process ids wrap around: the run of pid 5 came after 32000's.
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        for id in ["20261122T153000Z-32000", "20261122T153000Z-5"] {
            fs::create_dir_all(runs.join(id)).unwrap();
            fs::write(runs.join(id).join("verdict.json"), "{}").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(prune_runs(dir.path(), 1).unwrap(), 1);
        assert!(runs.join("20261122T153000Z-5").exists());
        assert!(!runs.join("20261122T153000Z-32000").exists());
    }
}
