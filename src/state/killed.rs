//! Runs that left a directory under `runs/` but neither a verdict nor a
//! record in `state.json`: killed before they got that far (SIGKILL, the
//! machine going down, phasegate itself failing), or still going.
//! `history` shows them and what to do; nothing here changes the state.

use std::fs;
use std::path::{Path, PathBuf};

use super::run_dir::{self, RunState};
use super::RunRecord;

/// Whether a run without a verdict still goes, as its directory's lock
/// says (`run_dir::run_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A live process holds its directory locked.
    Running,
    /// Nothing holds it: the run ended without a verdict.
    Killed,
    /// The lock cannot be read (a file system without flock(2)).
    Unknown,
}

/// The log a check of such a run left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftLog {
    pub check: String,
    pub path: PathBuf,
}

/// What to do about a run without a verdict, once what it set aside is
/// back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// It is still running: its verdict comes when it ends.
    Wait,
    /// Whether it still runs cannot be told.
    Unknown,
    /// `phasegate resume` in this work tree runs its phase's checks again.
    Resume,
    /// No run of this work tree is recorded: `resume` has nothing to take
    /// up, and `phasegate run` checks again.
    Run,
    /// The run recorded after it (this id) is what `resume` takes up: it
    /// asks for nothing more.
    Superseded(String),
    /// It ran in another work tree (its path, when it can be found): its
    /// resume is there.
    OtherWorkTree(Option<PathBuf>),
}

/// Unstaged changes a run set aside and never gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub dir: PathBuf,
    /// The work tree they belong to, when it is not the one asking (its
    /// path, when it can be found): `phasegate restore` runs there.
    pub elsewhere: Option<Option<PathBuf>>,
}

/// A run with a directory and no verdict nor record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrecorded {
    pub run_id: String,
    /// When it started (RFC 3339, UTC), from its id.
    pub started: String,
    pub progress: Progress,
    /// Oldest check name first.
    pub logs: Vec<LeftLog>,
    pub saved: Option<Saved>,
    pub then: Then,
}

/// The runs under `<state_dir>/runs/` with no verdict that the history
/// (`recorded`) does not name either, oldest first, for the work tree
/// `here` (`RepoInfo::work_tree_key`) to read. `common` is the
/// repository's common git directory (none outside a repository), where
/// each work tree keeps what its runs set aside; `saved_of(work tree
/// state, run id)` says where a run keeps it (`git::saved_changes_of`).
pub fn unrecorded_runs(
    state_dir: &Path,
    recorded: &[RunRecord],
    here: &str,
    common: Option<&Path>,
    saved_of: &dyn Fn(&Path, &str) -> Option<PathBuf>,
) -> Vec<Unrecorded> {
    let Ok(entries) = fs::read_dir(state_dir.join("runs")) else {
        return Vec::new();
    };
    let mut dirs: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(super::store::is_run_entry)
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
        .filter(|(id, dir)| {
            !recorded.iter().any(|r| r.run_id == *id) && !dir.join("verdict.json").exists()
        })
        .collect();
    dirs.sort_by_key(|(_, dir)| run_dir::run_order(dir));
    let last_here = recorded.iter().rev().find(|r| r.in_work_tree(here));
    // What `resume` here takes into account, found as it finds it.
    let pending = last_here.map(|last| run_dir::unfinished_since(state_dir, &last.run_id, here));
    dirs.into_iter()
        .map(|(run_id, dir)| {
            let progress = match run_dir::run_state(&dir) {
                RunState::Going => Progress::Running,
                RunState::Ended | RunState::Gone => Progress::Killed,
                RunState::Unknown => Progress::Unknown,
            };
            let key = fs::read(dir.join(run_dir::WORK_TREE_FILE))
                .ok()
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
            let ours = key.as_deref().is_none_or(|key| key == here);
            let then = match (progress, &pending, last_here) {
                (Progress::Running, _, _) => Then::Wait,
                (Progress::Unknown, _, _) => Then::Unknown,
                _ if !ours => Then::OtherWorkTree(
                    common.and_then(|c| work_tree_path(c, key.as_deref().unwrap_or("."))),
                ),
                (_, Some(pending), _) if pending.contains(&run_id) => Then::Resume,
                (_, Some(_), Some(last)) => Then::Superseded(last.run_id.clone()),
                _ => Then::Run,
            };
            let saved = common.and_then(|common| {
                let keys = match &key {
                    Some(key) => vec![key.clone()],
                    None => work_tree_keys(common),
                };
                keys.into_iter().find_map(|key| {
                    let git_dir = if key == "." {
                        common.to_path_buf()
                    } else {
                        common.join(&key)
                    };
                    let dir = saved_of(&git_dir.join("phasegate"), &run_id)?;
                    let elsewhere = (key != here).then(|| work_tree_path(common, &key));
                    Some(Saved { dir, elsewhere })
                })
            });
            Unrecorded {
                started: started_at(&run_id),
                logs: left_logs(&dir),
                run_id,
                progress,
                saved,
                then,
            }
        })
        .collect()
}

/// One line of the history: a recorded run, or one with no record.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    Recorded(&'a RunRecord),
    Unrecorded(&'a Unrecorded),
}

/// The history's runs, newest first, at most `limit`: the recorded ones
/// in the order they were recorded, each run with no record placed
/// among them by when it started.
pub fn newest_first<'a>(
    recorded: &'a [RunRecord],
    unrecorded: &'a [Unrecorded],
    limit: usize,
) -> Vec<Entry<'a>> {
    let order = |id: &str| run_dir::run_order(Path::new(id));
    let mut all = Vec::with_capacity(recorded.len() + unrecorded.len());
    let mut left = unrecorded.iter().peekable();
    for run in recorded {
        while let Some(before) = left.next_if(|u| order(&u.run_id) < order(&run.run_id)) {
            all.push(Entry::Unrecorded(before));
        }
        all.push(Entry::Recorded(run));
    }
    all.extend(left.map(Entry::Unrecorded));
    all.into_iter().rev().take(limit).collect()
}

/// When the run `run_id` started (RFC 3339, UTC), as its id says:
/// `2026-11-22T15:30:00Z` for the run id `20261122T153000Z-42`.
/// An id not of that form (edited by hand) is given back as it is.
pub fn started_at(run_id: &str) -> String {
    started_by_id(run_id)
        .unwrap_or_else(|| run_id.split('-').next().unwrap_or_default().to_string())
}

/// When the run `run_id` started, as `started_at` reads it; `None` for
/// an id not of the form phasegate gives them.
pub fn started_by_id(run_id: &str) -> Option<String> {
    let stamp = run_id.split('-').next().unwrap_or_default();
    let formed = stamp.len() == 16
        && stamp.bytes().enumerate().all(|(i, b)| match i {
            8 => b == b'T',
            15 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    formed.then(|| {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &stamp[..4],
            &stamp[4..6],
            &stamp[6..8],
            &stamp[9..11],
            &stamp[11..13],
            &stamp[13..15]
        )
    })
}

/// The logs in a run's directory, with the checks they belong to: named
/// by their invocation record where the run wrote one (it writes them all
/// once the checks and the restore are done), by the log's file name read
/// back otherwise.
fn left_logs(dir: &Path) -> Vec<LeftLog> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut logs: Vec<LeftLog> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.to_str()?.strip_suffix(".log")?.to_string();
            let record = fs::read(dir.join(format!("{stem}.json")))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
            let check = record
                .as_ref()
                .and_then(|r| r["check"].as_str())
                .map_or_else(|| run_dir::check_of_stem(&stem), str::to_string);
            Some(LeftLog {
                check,
                path: e.path(),
            })
        })
        .collect();
    logs.sort_by(|a, b| a.check.cmp(&b.check));
    logs
}

/// The keys of every work tree of the repository whose common git
/// directory is `common`: the main one and each linked one.
fn work_tree_keys(common: &Path) -> Vec<String> {
    let mut keys = vec![".".to_string()];
    if let Ok(linked) = fs::read_dir(common.join("worktrees")) {
        keys.extend(
            linked
                .filter_map(Result::ok)
                .filter_map(|e| Some(format!("worktrees/{}", e.file_name().to_str()?))),
        );
    }
    keys
}

/// Where the work tree `key` is: a linked one's `gitdir` file names its
/// `.git`; the main one holds the common directory, as `.git`.
fn work_tree_path(common: &Path, key: &str) -> Option<PathBuf> {
    if key == "." {
        return (common.file_name()? == ".git").then(|| common.parent().map(Path::to_path_buf))?;
    }
    let dot_git = fs::read_to_string(common.join(key).join("gitdir")).ok()?;
    Path::new(dot_git.trim_end())
        .parent()
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_started_when_its_id_says() {
        assert_eq!(started_at("20261122T153000Z-42"), "2026-11-22T15:30:00Z");
        assert_eq!(started_at("20261122T153000Z-42-2"), "2026-11-22T15:30:00Z");
        // Edited by hand: as it is, never a slice through a character.
        assert_eq!(started_at("20261122T1é000Z-1"), "20261122T1é000Z");
        assert_eq!(started_at("run-7"), "run");
    }

    #[test]
    fn the_logs_a_killed_run_left_name_their_checks() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("tests.log"), "ok\n").unwrap();
        fs::write(dir.path().join("long.json"), r#"{"check": "a long name"}"#).unwrap();
        fs::write(dir.path().join("long.log"), "ok\n").unwrap();
        fs::write(dir.path().join("_a_2fb.log"), "cut\n").unwrap();
        fs::write(dir.path().join("work-tree"), ".").unwrap();
        let logs = left_logs(dir.path());
        let seen: Vec<&str> = logs.iter().map(|l| l.check.as_str()).collect();
        assert_eq!(seen, ["a long name", "a/b", "tests"]);
    }
}
