//! Protection of unstaged changes while checks look at the staged content.
//!
//! Before anything in the work tree changes, every tracked file with
//! unstaged changes is copied whole (bytes, permissions, or its absence) under
//! `.git/phasegate/protect/<id>/`, with a journal, all flushed to disk. The
//! files are then put at their staged content, the checks run, and the
//! copies are written back. A run killed at any point is finished by the
//! next one (or `phasegate restore`) from the journal; the saved copies are
//! deleted only after they were written back.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read, Seek, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Delta, DiffOptions, Repository};
use serde::{Deserialize, Serialize};

use super::filters::{self, Drivers, Place, Way};
use super::index::{INTENT_TO_ADD, MODE_LINK};
use super::UnstagedHint;
use crate::state::{FileLock, Sharing, StateDir};

const MODE_EXEC: u32 = 0o100_755;
const MODE_REGULAR: u32 = 0o100_644;

#[derive(Debug, thiserror::Error)]
pub enum ProtectError {
    #[error("failed to {what}")]
    Git {
        what: String,
        #[source]
        source: git2::Error,
    },
    #[error("failed to {what} `{}`", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file system ran out of space (or the user's quota): said as
    /// such, with what to do, never as a bare OS error.
    #[error("failed to {what} `{}`: its file system is full (no space left on the device, or the disk quota is used up): {then}", path.display())]
    NoSpace {
        what: &'static str,
        path: PathBuf,
        /// What the user does now.
        then: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("failed to {what} through the git filters of `{}` (is the filter's program, such as git-lfs, installed?)", path.display())]
    Filter {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("`{}` is tracked as a file, but a directory stands in its place in the work tree: phasegate cannot put the staged file there without moving what the directory holds. Move the directory away, or stage the change (`git rm --cached`), and run again", path.display())]
    DirectoryInTheWay { path: PathBuf },
    #[error("`{}` is tracked, but {what} stands in place of its directory `{}` in the work tree: phasegate never writes through it. Move it away, or stage the change (`git rm --cached`), and run again", path.display(), parent.display())]
    ParentInTheWay {
        path: PathBuf,
        parent: PathBuf,
        what: &'static str,
    },
    #[error("`{}` is tracked as a file, but {what} stands in its place in the work tree: phasegate never opens one (it could wait on it forever) and cannot set it aside. Move it away, or stage the change (`git rm --cached`), and run again", path.display())]
    SpecialFileInTheWay { path: PathBuf, what: &'static str },
    #[error("`{}` has unstaged changes, but phasegate may neither write it nor replace it in its directory `{}`, which is read-only: it cannot put the staged content there while the checks run. Nothing in the work tree was touched. Make the file or its directory writable (`chmod u+w`), or stash the unstaged changes, and run again", path.display(), dir.display())]
    ReadOnly { path: PathBuf, dir: PathBuf },
    #[error("failed to restore `{}`: a directory stands in its place (made by a check, or by someone after the run was killed), and it could not be moved aside{}. Move or remove the directory `{0}` yourself, then run `phasegate restore`: your unstaged changes wait in the journal until then", path.display(), why_not_moved(.kept.as_deref(), .source.as_ref()))]
    DirectoryLeft {
        path: PathBuf,
        kept: Option<PathBuf>,
        source: Option<io::Error>,
    },
    /// A killed run's saved copies whose journal is missing or damaged:
    /// they were moved aside (`moved`), or left where they are.
    #[error("failed to restore the unstaged changes a killed run set aside: its journal `{}` {why}, so phasegate cannot tell which file each saved copy belongs to. Nothing was deleted: {}", journal.display(), where_unrestored(.kept, .moved.as_ref()))]
    NotRestorable {
        journal: PathBuf,
        why: String,
        kept: PathBuf,
        /// `Err`: why moving the copies aside failed.
        moved: Result<(), String>,
    },
    /// A killed run's journal is readable, but the saved copies of some
    /// files are missing or cut short (deleted or damaged since): the
    /// others were written back, and what is left was moved aside.
    #[error("failed to restore the unstaged changes a killed run set aside for {}: their saved copies in `{}` are missing or cut short (deleted or damaged after the run), so these files hold what the run left, their staged content. {}Nothing was deleted: {}", lost.join(", "), saved.display(), restored_first(.restored.as_deref()), where_unrestored(.kept, .moved.as_ref()))]
    CopiesLost {
        lost: Vec<String>,
        saved: PathBuf,
        /// What was written back before: `Recovered::describe`.
        restored: Option<String>,
        kept: PathBuf,
        /// `Err`: why moving the copies aside failed.
        moved: Result<(), String>,
    },
    #[error("`{}` holds the unstaged changes a killed run set aside in another work tree, `{}`: run `phasegate restore` there, or delete `{0}` if this work tree is a copy of that one", journal.display(), root.display())]
    OtherWorkTree { journal: PathBuf, root: PathBuf },
    #[error("`{}` changed while phasegate was setting the unstaged changes aside (an editor saving it?): it was left as it is, and the files set aside before it are back. Run again", path.display())]
    ChangedWhileSettingAside { path: PathBuf },
    #[error("{holder} is protecting unstaged changes in this repository; wait for it to finish")]
    Busy { holder: String },
    /// git's index lock was left behind while the checks ran (a check
    /// that ran `git add` and was killed, or crashed inside git): what
    /// they staged in files with unstaged changes could not be undone.
    /// The work tree was finished all the same.
    #[error("failed to undo what the checks staged: the index is locked, `{}` was left behind{}. What they staged of {} stays in the index in place of what you had staged{}: phasegate undid none of it, and a commit now would hold their version. Once no git command runs, remove the lock (`rm {}`), put back what you had staged ({}), and run again", lock.display(), left_by(.by.as_deref()), .restage.iter().map(|r| r.path.as_str()).collect::<Vec<_>>().join(", "), also_staged(.others), quoted(lock.as_os_str().as_bytes()), restage_commands(.restage))]
    IndexLocked {
        lock: PathBuf,
        /// The checks that most likely left it, for a person.
        by: Option<String>,
        /// The files whose staging was to be undone, with what they had staged.
        restage: Vec<Restage>,
        /// Other files the checks staged, which phasegate keeps staged.
        others: Vec<String>,
    },
    /// The checks' versions of files with unstaged changes could not be
    /// kept (`source` says why): the unstaged changes win all the same.
    #[error("{source}: the checks' versions of {} could not be kept{}", lost.join(", "), versions_after(*.restored, .kept_in.as_deref()))]
    VersionsLost {
        source: Box<ProtectError>,
        lost: Vec<String>,
        /// Whether the unstaged changes were written over them.
        restored: bool,
        /// Where the versions kept before the failure are.
        kept_in: Option<PathBuf>,
    },
    /// The state directory refused this user (another user's, in a
    /// repository a group shares): `crate::state::io_error` says whose
    /// it is and what to do.
    #[error("{0}")]
    State(io::Error),
    /// A check rewrote the index as a split index, which libgit2 cannot
    /// read, and git could not merge it back into one file (`why`).
    #[error("failed to read the index after the checks: {} rewrote it as a split index (`git update-index --split-index`, or `core.splitIndex` set and then a `git add`), which phasegate cannot read, and merging it back failed ({why}). Turn it off with `git config core.splitIndex false && git update-index --no-split-index`, and keep the check from turning it on, then run again", by.as_deref().unwrap_or("one of the checks"))]
    SplitByChecks {
        /// The checks that ran, for a person.
        by: Option<String>,
        why: String,
    },
    /// A signal arrived while the changes were being saved: nothing of the
    /// work tree was touched, and the copies are gone again.
    #[error("set the unstaged changes aside: phasegate was interrupted")]
    Interrupted,
}

fn why_not_moved(kept: Option<&Path>, source: Option<&io::Error>) -> String {
    match (kept, source) {
        (Some(kept), Some(e)) => format!(" to `{}` ({e})", kept.display()),
        (Some(kept), None) => format!(" to `{}`, where something else is already", kept.display()),
        (None, _) => String::new(),
    }
}

/// A file whose staging by the checks phasegate could not undo, with
/// what the user had staged there before them.
#[derive(Debug, Clone)]
pub struct Restage {
    pub path: String,
    /// Mode, blob and whether it was only intent-to-add; `None`: the path
    /// was not in the index.
    before: Option<(u32, git2::Oid, bool)>,
}

fn left_by(by: Option<&str>) -> String {
    by.map_or_else(
        || " by one of the checks".to_string(),
        |by| format!(", most likely by {by}"),
    )
}

fn also_staged(others: &[String]) -> String {
    if others.is_empty() {
        String::new()
    } else {
        format!(
            " (they also staged {}, which had no unstaged changes and stays staged, as a check's staging always does)",
            others.join(", ")
        )
    }
}

/// `bytes` as one word for `sh`: quoted when anything in it is not plain.
pub(super) fn quoted(bytes: &[u8]) -> String {
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(b);
    let text = String::from_utf8_lossy(bytes);
    if !bytes.is_empty() && bytes.iter().all(plain) {
        text.into_owned()
    } else {
        String::from_utf8_lossy(&crate::runner::shell_quote(bytes)).into_owned()
    }
}

/// The git commands that put back what was staged of each file.
fn restage_commands(restage: &[Restage]) -> String {
    restage
        .iter()
        .map(|r| {
            let path = quoted(r.path.as_bytes());
            match r.before {
                Some((_, _, true)) => {
                    format!("`git rm --cached -q -- {path} && git add --intent-to-add -- {path}`")
                }
                Some((mode, id, false)) => {
                    format!("`git update-index --cacheinfo {mode:o},{id},{path}`")
                }
                None => format!("`git rm --cached -q -- {path}`"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn versions_after(restored: bool, kept_in: Option<&Path>) -> String {
    let others = kept_in
        .map(|dir| format!(" (the others are kept in `{}`)", dir.display()))
        .unwrap_or_default();
    if restored {
        format!(", and are gone: your unstaged changes were written back over them{others}. Run the checks again to get them back")
    } else {
        format!(" and are still in the work tree{others}, until your unstaged changes are written back over them: copy them first if you need them")
    }
}

fn restored_first(restored: Option<&str>) -> String {
    restored
        .map(|line| format!("The others are back (phasegate {line}). "))
        .unwrap_or_default()
}

fn where_unrestored(kept: &Path, moved: Result<&(), &String>) -> String {
    match moved {
        Ok(()) => format!(
            "the saved copies were moved to `{0}`, where `{NOTE}` says how to get your changes back from the `saved` file, and later runs are no longer held up by them. The files that had unstaged changes may hold their staged content until you copy your changes back; then delete `{0}`",
            kept.display()
        ),
        Err(e) => format!(
            "the saved copies are in `{0}` (moving them aside failed: {e}), where `{NOTE}` says how to get your changes back from the `saved` file. Every run stops here until that directory is moved out of `protect/` (to `.git/phasegate/kept/`, say)",
            kept.display()
        ),
    }
}

fn io_error<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> ProtectError + 'a {
    move |source| {
        if is_full(&source) {
            ProtectError::NoSpace {
                what,
                path: path.to_path_buf(),
                then: FREE_SPACE,
                source,
            }
        } else {
            ProtectError::Io {
                what,
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// What to do about a full file system in general.
const FREE_SPACE: &str = "free some space there first";

/// What to do when the file system filled up before anything in the work
/// tree was touched: the copies made so far are gone again.
const FREE_SPACE_UNTOUCHED: &str =
    "nothing in the work tree was touched. Free some space there and run again";

/// Whether `error` says the file system is full (`ENOSPC`), or the user's
/// quota on it is used up (`EDQUOT`).
fn is_full(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

impl ProtectError {
    /// The same error, saying that nothing in the work tree was touched
    /// when it is the file system that is full.
    fn before_touching(self) -> ProtectError {
        match self {
            ProtectError::NoSpace {
                what, path, source, ..
            } => ProtectError::NoSpace {
                what,
                path,
                then: FREE_SPACE_UNTOUCHED,
                source,
            },
            other => other,
        }
    }

    /// The same error, naming the checks that most likely left git's
    /// index lock behind when it is that lock that stopped phasegate.
    #[must_use]
    pub fn left_by(self, checks: String) -> ProtectError {
        match self {
            ProtectError::IndexLocked {
                lock,
                restage,
                others,
                ..
            } => ProtectError::IndexLocked {
                lock,
                by: Some(checks),
                restage,
                others,
            },
            ProtectError::SplitByChecks { why, .. } => ProtectError::SplitByChecks {
                by: Some(checks),
                why,
            },
            other => other,
        }
    }
}

fn git_error(what: &str) -> impl FnOnce(git2::Error) -> ProtectError + '_ {
    move |source| ProtectError::Git {
        what: what.to_string(),
        source,
    }
}

/// One file with unstaged changes, as the journal records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// Bytes, not text: file names need not be UTF-8.
    path: Vec<u8>,
    /// The file holding the copy, or `None` when the file is deleted in
    /// the work tree.
    saved: Option<String>,
    /// Where in `saved` the copy lies (offset, length); the whole file when
    /// absent (journals of earlier versions kept one file per copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    range: Option<(u64, u64)>,
    /// Git's mode of the work-tree file (regular, executable or link).
    mode: u32,
    /// The file's own permission bits (`0o600`, `0o444`…), which git does
    /// not keep; absent in journals of earlier versions, which restore
    /// git's `0o644` or `0o755`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    permissions: Option<u32>,
    /// Only `git add --intent-to-add`ed: its staged content is "nothing".
    intent_to_add: bool,
    /// For a file deleted in the work tree: the deepest of its directories
    /// that existed (`""`, the root), so that the directories checking it
    /// out made are removed again with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    existing_dir: Option<Vec<u8>>,
    /// The file's extended attributes (names and values), POSIX ACLs
    /// among them: a file phasegate writes afresh (put at its staged
    /// content through git, or in place of a check's replacement) gets
    /// them back with its content. Absent in journals of earlier versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    /// The file's stat data as it was copied (not in the journal): a file
    /// that differs when it is about to be put at its staged content was
    /// changed since (an editor's autosave), and is not touched.
    #[serde(skip)]
    copied: Option<FileStat>,
}

impl Entry {
    fn rel(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.path))
    }

    fn shown(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum State {
    /// Copies are being written; the work tree is untouched.
    Saving,
    /// Every copy is on disk; the work tree may hold staged content.
    Saved,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    state: State,
    /// The run's process, for a person reading the journal; whether it
    /// still runs is the lock's to say.
    pid: u32,
    /// The work tree the copies belong to, as bytes (it need not be UTF-8);
    /// absent in journals of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<Vec<u8>>,
    entries: Vec<Entry>,
}

/// A test-only hook: `PHASEGATE_TEST_PAUSE_AT=<step>` makes phasegate stop
/// at that step so a test can kill it there.
pub type Pause<'a> = &'a dyn Fn(&str);

/// What the checks did to the work tree, found with one comparison.
#[derive(Debug, Default)]
pub struct Aftermath {
    /// Tracked files the checks changed (kept, unless they conflicted).
    pub modified: Vec<String>,
    /// Files the checks changed that also had unstaged changes: the checks'
    /// changes were rolled back and the unstaged changes restored.
    pub conflicts: Vec<String>,
    /// Where the checks' versions of the `conflicts` were kept.
    pub kept: Option<PathBuf>,
    /// Whether the checks left a split index, merged back (`unsplit_index`).
    pub unsplit: bool,
    /// The index as it was before the checks, when they staged what
    /// phasegate does not roll back (a file that had no unstaged change,
    /// an untracked one): should they have moved `HEAD` too (`git add -A
    /// && git commit`), the undo puts it back.
    pub index_before: Option<super::IndexBefore>,
}

/// Holds the unstaged changes aside while it lives; `finish` puts them back.
/// Dropped without `finish` (a panic), it puts them back all the same.
pub struct UnstagedGuard {
    root: PathBuf,
    dir: PathBuf,
    entries: Vec<Entry>,
    /// The index as the checks found it, to see whether they staged
    /// anything (`git add` in a formatter).
    index_before: Vec<git2::IndexEntry>,
    /// The second its file was last written in, read just before it.
    index_written: Option<i64>,
    /// The stat data of each protected file as the checks found it (at its
    /// staged content): the same afterwards means the checks left it alone.
    checked_out: Vec<(Vec<u8>, Option<FileStat>)>,
    /// Threads for the work-tree scan after the checks.
    threads: usize,
    /// The saved copies, held open: a check that deletes the state
    /// directory (`rm -rf .git/phasegate`, a `git clean -x`) takes their
    /// names, not their bytes, and the changes still come back.
    pack: Option<fs::File>,
    /// How what it keeps is made (the repository's sharing).
    sharing: Sharing,
    done: bool,
    /// Held until the changes are back; released last (fields drop in order).
    _lock: FileLock,
}

pub(super) fn copy_entry(e: &git2::IndexEntry) -> git2::IndexEntry {
    git2::IndexEntry {
        ctime: e.ctime,
        mtime: e.mtime,
        dev: e.dev,
        ino: e.ino,
        mode: e.mode,
        uid: e.uid,
        gid: e.gid,
        file_size: e.file_size,
        id: e.id,
        flags: e.flags,
        flags_extended: e.flags_extended,
        path: e.path.clone(),
    }
}

fn index_entries(repo: &Repository) -> Result<Vec<git2::IndexEntry>, ProtectError> {
    let index = repo.index().map_err(git_error("read the index"))?;
    Ok(index.iter().collect())
}

fn protect_root(state_dir: &Path) -> PathBuf {
    state_dir.join("protect")
}

fn open(root: &Path) -> Result<Repository, ProtectError> {
    super::open_repository(root).map_err(git_error("open the repository"))
}

/// What changes when anything writes a file: its times, inode, size and
/// mode (`None`: the file is absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileStat {
    modified: (i64, i64),
    changed: (i64, i64),
    ino: u64,
    size: u64,
    mode: u32,
}

impl FileStat {
    pub(super) fn of(path: &Path) -> Option<FileStat> {
        fs::symlink_metadata(path).ok().as_ref().map(FileStat::from)
    }
}

impl From<&fs::Metadata> for FileStat {
    /// The stat data of a link itself, as `symlink_metadata` gives it.
    fn from(meta: &fs::Metadata) -> FileStat {
        use std::os::unix::fs::MetadataExt;
        FileStat {
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            size: meta.size(),
            mode: meta.mode(),
        }
    }
}

/// The file in a protection's directory that holds every saved copy.
const SAVED: &str = "saved";

/// Replaces the journal atomically: a new file, flushed, renamed over.
fn write_journal(dir: &Path, journal: &Journal, sharing: Sharing) -> Result<(), ProtectError> {
    let path = dir.join("journal.json");
    let bytes = serde_json::to_vec_pretty(journal).map_err(|e| ProtectError::Io {
        what: "encode",
        path: path.clone(),
        source: io::Error::other(e),
    })?;
    crate::state::write_atomic(&path, &bytes, sharing).map_err(io_error("replace", &path))
}

/// What a protection's directory says of its journal.
enum JournalRead {
    Found(Journal),
    Missing,
    /// Unreadable as a journal (cut short, garbage, not a file): why.
    Damaged(String),
}

fn read_journal(dir: &Path) -> Result<JournalRead, ProtectError> {
    let path = dir.join("journal.json");
    match fs::symlink_metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(JournalRead::Missing),
        // Never opened unless a plain file: a named pipe would wait forever.
        Ok(meta) if !meta.is_file() => {
            return Ok(JournalRead::Damaged("is not a file".to_string()))
        }
        _ => {}
    }
    let bytes = open_regular(&path)
        .and_then(|mut file| {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map(|_| bytes)
        })
        .map_err(io_error("read", &path))?;
    Ok(match serde_json::from_slice(&bytes) {
        Ok(journal) => JournalRead::Found(journal),
        Err(e) => JournalRead::Damaged(format!("cannot be read ({e})")),
    })
}

/// Opens `path` to read only if it is a regular file, never waiting: a
/// named pipe, socket or device (which a check may leave where a tracked
/// file was) is an error, not an open that blocks until a writer comes.
fn open_regular(path: &Path) -> io::Result<fs::File> {
    regular_only(fs::OpenOptions::new().read(true), path)
}

/// `path` opened with `options`, never waiting (`O_NONBLOCK`) nor
/// following a link at its end, and only if it is a regular file.
fn regular_only(options: &mut fs::OpenOptions, path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = options
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

/// What a special file is, for a person.
fn special_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device file"
    } else {
        "a special file"
    }
}

/// The file in a set-aside protection's directory that says what it holds.
const NOTE: &str = "NOTE.txt";

/// Whether a protection's directory without a journal holds nothing but
/// what a journal being written leaves (`.journal.json.tmp-<pid>`): a run
/// killed before its first journal was written saved nothing. Anything
/// else (a `saved` file above all) may be someone's work.
fn holds_nothing_saved(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|names| {
        names.into_iter().all(|name| {
            name.is_ok_and(|name| {
                name.file_name()
                    .as_bytes()
                    .starts_with(b".journal.json.tmp-")
            })
        })
    })
}

/// Moves a killed run's protection whose journal is missing or damaged
/// (`why`) out of the way, to `kept/<id>-not-restored/` with a note on how
/// to get the changes back: nothing is deleted, and later runs go on. The
/// error says where it went (or why it stayed).
fn set_aside_unrestorable(state_dir: &StateDir, dir: &Path, why: String) -> ProtectError {
    // Its checks may still run, writing to the work tree.
    crate::runner::stop_recorded_groups(&dir.join(GROUPS));
    // Kept for a person to read, not to hold disk space.
    release_reserve(dir);
    let journal = dir.join("journal.json");
    let (kept, moved) = set_aside(state_dir, dir, &unrestorable_note(&why));
    ProtectError::NotRestorable {
        journal,
        why,
        kept,
        moved,
    }
}

/// Moves `dir` to a free name under `kept/` (`<id>-not-restored`), with
/// `note` in it: where it ended up, and whether the move worked.
fn set_aside(state_dir: &StateDir, dir: &Path, note: &str) -> (PathBuf, Result<(), String>) {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let base = state_dir.join("kept");
    // Another member of a shared repository's group may be the one who
    // gets the changes back: theirs to enter, never others'.
    let moved = state_dir
        .sharing
        .create_private_dirs(&base)
        .map_err(|e| format!("failed to create `{}`: {e}", base.display()))
        .and_then(|()| {
            // A free name: an earlier one is never written over.
            let free = (1..=100)
                .map(|n| match n {
                    1 => base.join(format!("{name}-not-restored")),
                    n => base.join(format!("{name}-not-restored-{n}")),
                })
                .find(|p| fs::symlink_metadata(p).is_err())
                .ok_or_else(|| format!("no free name under `{}`", base.display()))?;
            fs::rename(dir, &free)
                .map(|()| free)
                .map_err(|e| e.to_string())
        });
    let (kept, moved) = match moved {
        Ok(kept) => (kept, Ok(())),
        Err(e) => (dir.to_path_buf(), Err(e)),
    };
    let _ = fs::File::create(kept.join(NOTE)).and_then(|mut file| {
        state_dir.sharing.share_file(&file)?;
        io::Write::write_all(&mut file, note.as_bytes())
    });
    (kept, moved)
}

/// Whether the saved copy of `entry` is all there (a file deleted in the
/// work tree has none to miss): its bytes lie within the saved file.
fn copy_intact(dir: &Path, entry: &Entry) -> bool {
    let Some(saved) = &entry.saved else {
        return true;
    };
    fs::symlink_metadata(dir.join(saved)).is_ok_and(|meta| {
        meta.is_file()
            && entry.range.is_none_or(|(offset, len)| {
                offset.checked_add(len).is_some_and(|end| end <= meta.len())
            })
    })
}

/// How to get back what is left of copies that are missing or cut short.
fn lost_copies_note(lost: &[String]) -> String {
    let files = format!("    {}", lost.join("\n    "));
    [
        "phasegate could not write back these unstaged changes.",
        "",
        "A run of phasegate set aside the unstaged changes of tracked files here",
        "and was stopped before it wrote them back. Its journal is readable, but",
        "the saved copies of these files are missing or cut short (deleted or",
        "damaged after the run), so they were not written back:",
        &files,
        "",
        "Those files hold their staged content in the work tree. What is left of",
        "their copies, if anything, is in `saved`. The other files' changes were",
        "written back.",
        "",
        "- `journal.json` lists the files: `path` is a file's name as byte values",
        "  ([97, 46, 116, 120, 116] is `a.txt`), `range` is [offset, length] of its",
        "  bytes in `saved`. One copy comes out with",
        "      tail -c +$((OFFSET + 1)) saved | head -c LENGTH > FILE",
        "",
        "Once you have taken what you need, delete this directory.",
        "",
    ]
    .join("\n")
}

/// How to get changes back from a protection that cannot be restored.
fn unrestorable_note(why: &str) -> String {
    let why = format!("file each saved copy belongs to, {why}. Nothing was deleted. The files");
    [
        "phasegate could not write back these unstaged changes.",
        "",
        "A run of phasegate set aside the unstaged changes of tracked files here",
        "and was stopped before it wrote them back. Its journal, which says which",
        &why,
        "that had unstaged changes may hold their staged content in the work",
        "tree now: compare them with the copies here.",
        "",
        "- `saved` holds the saved copies: each file's bytes, one after the",
        "  other, with nothing between them (for a symbolic link, its target).",
        "  Text files can be read there in an editor.",
        "- `journal.json`, when it is here and readable in part, lists the",
        "  files: `path` is a file's name as byte values ([97, 46, 116, 120, 116]",
        "  is `a.txt`), `range` is [offset, length] of its bytes in `saved`,",
        "  and `saved: null` means the file was deleted. One copy comes out with",
        "      tail -c +$((OFFSET + 1)) saved | head -c LENGTH > FILE",
        "",
        "Once your changes are back in the work tree, delete this directory.",
        "",
    ]
    .join("\n")
}

/// `io_error`, but a permission the state directory denies is said as
/// the state's other files say it: whose the directory is, and how a
/// group shares it.
fn state_error<'a>(
    state_dir: &'a Path,
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> ProtectError + 'a {
    move |source| {
        if source.kind() == io::ErrorKind::PermissionDenied {
            ProtectError::State(crate::state::io_error(state_dir, path, what, &source))
        } else {
            io_error(what, path)(source)
        }
    }
}

/// Takes the lock that makes one run at a time hold unstaged changes
/// aside, without waiting.
fn lock(state_dir: &StateDir) -> Result<FileLock, ProtectError> {
    let base = protect_root(state_dir);
    state_dir
        .sharing
        .create_dirs(&base)
        .map_err(state_error(state_dir, "create", &base))?;
    let path = base.join("lock");
    FileLock::try_acquire(&path, state_dir.sharing, crate::state::Lock::Protect)
        .map_err(state_error(state_dir, "take", &path))?
        .map_err(|holder| ProtectError::Busy {
            holder: holder.to_string(),
        })
}

/// What finishing a killed run did.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The files whose unstaged changes were written back.
    pub restored: Vec<String>,
    /// Of those, the files someone changed after the run was killed: what
    /// they held was copied under `kept_in` before the changes came back.
    pub kept: Vec<String>,
    pub kept_in: Option<PathBuf>,
}

impl Recovered {
    pub fn is_empty(&self) -> bool {
        self.restored.is_empty()
    }

    /// One line for a person: what came back, and where the versions it
    /// replaced are.
    pub fn describe(&self) -> String {
        let mut line = format!(
            "restored the unstaged changes a killed run had set aside: {}",
            self.restored.join(", ")
        );
        if let Some(dir) = &self.kept_in {
            line.push_str(&format!(
                "; {} changed after that run was killed, and the versions they held are kept in {}",
                self.kept.join(", "),
                dir.display()
            ));
        }
        line
    }
}

/// Finishes every protection a killed run left behind: the checks it left
/// running are stopped, and its saved changes are written back. A file
/// changed since the run was killed (an editor, a terminal) is copied under
/// `kept/` first, so nothing anyone wrote is lost. A protection whose run
/// is still alive is left alone and reported as busy. `pause` is called
/// with `recovering` once the first file is back.
pub fn recover(
    root: &Path,
    state_dir: &StateDir,
    pause: Pause<'_>,
) -> Result<Recovered, ProtectError> {
    if !has_journals(state_dir) {
        return Ok(Recovered::default());
    }
    let _lock = lock(state_dir)?;
    recover_locked(root, state_dir, pause)
}

/// Whether unstaged changes wait under `state_dir` for `phasegate restore`:
/// after a failed `UnstagedGuard::finish`, whether its last try at writing
/// them back (as it was dropped) failed too.
pub fn holds_saved_changes(state_dir: &Path) -> bool {
    has_journals(state_dir)
}

/// Where the run `run_id` keeps unstaged changes set aside under the work
/// tree state `state_dir`, when it does (`phasegate restore` in that work
/// tree brings them back). A run stopped before every copy was on disk
/// never touched the work tree: it keeps nothing to bring back. Copies no
/// readable journal describes are kept all the same (a restore moves them
/// under `kept/`).
pub fn saved_changes_of(state_dir: &Path, run_id: &str) -> Option<PathBuf> {
    let dir = protect_root(state_dir).join(run_id);
    if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    match read_journal(&dir) {
        Ok(JournalRead::Found(journal)) => (journal.state == State::Saved).then_some(dir),
        Ok(JournalRead::Missing) if holds_nothing_saved(&dir) => None,
        _ => Some(dir),
    }
}

/// Whether any run left saved changes behind (a directory per run).
fn has_journals(state_dir: &Path) -> bool {
    fs::read_dir(protect_root(state_dir)).is_ok_and(|mut dirs| {
        dirs.any(|d| d.is_ok_and(|d| d.file_type().is_ok_and(|t| t.is_dir())))
    })
}

fn recover_locked(
    root: &Path,
    state_dir: &StateDir,
    pause: Pause<'_>,
) -> Result<Recovered, ProtectError> {
    let base = protect_root(state_dir);
    let Ok(dirs) = fs::read_dir(&base) else {
        return Ok(Recovered::default());
    };
    let mut recovered = Recovered::default();
    for dir in dirs.flatten() {
        if !dir.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let dir = dir.path();
        let journal = match read_journal(&dir)? {
            JournalRead::Found(journal) => journal,
            // Created but no journal yet: nothing was saved or touched.
            JournalRead::Missing if holds_nothing_saved(&dir) => {
                let _ = fs::remove_dir_all(&dir);
                continue;
            }
            // Copies no journal describes are someone's work all the same:
            // kept, never deleted, and out of the way of later runs.
            JournalRead::Missing => {
                return Err(set_aside_unrestorable(
                    state_dir,
                    &dir,
                    "is missing".to_string(),
                ))
            }
            JournalRead::Damaged(why) => return Err(set_aside_unrestorable(state_dir, &dir, why)),
        };
        // The copies of another work tree that still exists are never
        // written here (a journal can only be elsewhere than its work tree's
        // git directory if an earlier version put it in the common one).
        if let Some(theirs) = journal
            .root
            .as_deref()
            .map(|r| Path::new(OsStr::from_bytes(r)))
        {
            if theirs != root && theirs.is_dir() {
                return Err(ProtectError::OtherWorkTree {
                    journal: dir,
                    root: theirs.to_path_buf(),
                });
            }
        }
        // Under the lock, every journal is a run that ended without
        // finishing (its lock went with it); its checks may not have.
        crate::runner::stop_recorded_groups(&dir.join(GROUPS));
        // Its checks stopped, the space held for this is the restore's.
        release_reserve(&dir);
        if journal.state == State::Saved {
            let keep = state_dir
                .join("kept")
                .join(dir.file_name().unwrap_or_default());
            // Copies someone deleted or cut short since: the others come
            // back, and these are said, never retried run after run.
            let (entries, lost): (Vec<Entry>, Vec<Entry>) = journal
                .entries
                .into_iter()
                .partition(|entry| copy_intact(&dir, entry));
            let changed = changed_after_kill(root, &dir, &entries)?;
            if !changed.is_empty() {
                let mut kept = Vec::new();
                keep_versions(
                    root,
                    changed.iter().map(Vec::as_slice),
                    &keep,
                    state_dir.sharing,
                    &mut kept,
                )?;
                if !kept.is_empty() {
                    recovered.kept.extend(kept);
                    recovered.kept_in = Some(keep.clone());
                }
            }
            let recovering = |step: &str| {
                if step == "restoring" {
                    pause("recovering");
                }
            };
            let moved = restore_entries(
                root,
                &dir,
                None,
                &entries,
                Some(&keep),
                state_dir.sharing,
                &recovering,
            )?;
            if !moved.is_empty() {
                recovered.kept.extend(moved);
                recovered.kept_in = Some(keep);
            }
            recovered.restored.extend(entries.iter().map(Entry::shown));
            if !lost.is_empty() {
                let lost: Vec<String> = lost.iter().map(Entry::shown).collect();
                let saved = dir.join(SAVED);
                let (kept, moved) = set_aside(state_dir, &dir, &lost_copies_note(&lost));
                return Err(ProtectError::CopiesLost {
                    lost,
                    saved,
                    restored: (!recovered.is_empty()).then(|| recovered.describe()),
                    kept,
                    moved,
                });
            }
        }
        fs::remove_dir_all(&dir).map_err(io_error("remove", &dir))?;
    }
    Ok(recovered)
}

/// The file where a run records the process groups of the checks it runs
/// while unstaged changes are set aside (see `UnstagedGuard::groups_file`).
const GROUPS: &str = "groups";

/// Of a killed run's protected files, those that hold something the index
/// does not (compared through the filters): a run killed leaves each at its
/// staged content, so anything else was written after, by someone.
/// (A run killed while it wrote the changes back left some of them back
/// already: those hold their saved copy, and nothing is kept of them.)
fn changed_after_kill(
    root: &Path,
    dir: &Path,
    entries: &[Entry],
) -> Result<Vec<Vec<u8>>, ProtectError> {
    // The killed run's checks may have split the index.
    unsplit_index(root)?;
    let repo = open(root)?;
    let mut index = repo.index().map_err(git_error("read the index"))?;
    let paths: Vec<Vec<u8>> = entries.iter().map(|e| e.path.clone()).collect();
    let differ: HashSet<Vec<u8>> = differing(&repo, &mut index, root, Some(&paths))?
        .into_iter()
        .collect();
    Ok(entries
        .iter()
        .filter(|e| differ.contains(&e.path))
        .filter(|e| !holds_saved_copy(root, dir, e))
        .map(|e| e.path.clone())
        .collect())
}

/// Whether the work-tree file of `entry` holds its saved copy, byte for byte.
fn holds_saved_copy(root: &Path, dir: &Path, entry: &Entry) -> bool {
    let Some(saved) = &entry.saved else {
        return false;
    };
    let Ok(mut copy) = open_copy(&dir.join(saved), entry.range) else {
        return false;
    };
    let target = root.join(entry.rel());
    let mut held = Vec::new();
    if entry.mode == MODE_LINK {
        let Ok(link) = fs::read_link(&target) else {
            return false;
        };
        return copy.read_to_end(&mut held).is_ok() && held == link.into_os_string().into_vec();
    }
    let Ok(mut file) = open_regular(&target) else {
        return false;
    };
    // Compared a block at a time: a file may be larger than memory.
    let (mut a, mut b) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let Ok(n) = read_full(&mut copy, &mut a) else {
            return false;
        };
        let Ok(m) = read_full(&mut file, &mut b) else {
            return false;
        };
        if n != m || a[..n] != b[..m] {
            return false;
        }
        if n == 0 {
            return true;
        }
    }
}

/// Reads until `buf` is full or the input ends; the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Makes libgit2 look at the work-tree files of `index` (of `only`, when
/// given) that git was told to pass over: `--assume-unchanged` ones, and
/// `--skip-worktree` ones the work tree holds (a sparse checkout leaves
/// the others out, and so does phasegate). git commits their staged
/// content all the same, so a local change there is an unstaged change
/// like any other: checks that read it would judge what is not committed.
/// In memory only: the index file keeps its flags.
fn look_at_flagged(
    index: &mut git2::Index,
    work_tree: &Path,
    only: Option<&[Vec<u8>]>,
) -> Result<(), ProtectError> {
    let flagged = |e: &git2::IndexEntry| {
        e.flags & super::index::ASSUME_UNCHANGED != 0
            || (e.flags_extended & super::index::SKIP_WORKTREE != 0
                && fs::symlink_metadata(work_tree.join(OsStr::from_bytes(&e.path))).is_ok())
    };
    let entries: Vec<git2::IndexEntry> = match only {
        Some(paths) => paths
            .iter()
            .filter_map(|path| index.get_path(Path::new(OsStr::from_bytes(path)), 0))
            .filter(|e| flagged(e))
            .collect(),
        None => index.iter().filter(|e| flagged(e)).collect(),
    };
    for mut entry in entries {
        entry.flags &= !super::index::ASSUME_UNCHANGED;
        entry.flags_extended &= !super::index::SKIP_WORKTREE;
        index
            .add(&entry)
            .map_err(git_error("compare the files git was told to pass over"))?;
    }
    Ok(())
}

/// The index against the work tree: tracked files only, submodules left
/// alone, and none passed over for a flag (`look_at_flagged`).
fn unstaged_diff<'r>(
    repo: &'r Repository,
    index: &mut git2::Index,
    only: Option<&[Vec<u8>]>,
) -> Result<git2::Diff<'r>, ProtectError> {
    if let Some(work_tree) = repo.workdir() {
        look_at_flagged(index, work_tree, only)?;
    }
    let mut options = DiffOptions::new();
    options
        .include_typechange(true)
        .include_untracked(false)
        .ignore_submodules(true);
    if let Some(paths) = only {
        // Exact paths, not patterns: a name may hold `*`, `[` or a newline.
        options.disable_pathspec_match(true);
        for path in paths {
            options.pathspec(path.clone());
        }
    }
    repo.diff_index_to_workdir(Some(index), Some(&mut options))
        .map_err(git_error("compare the index with the work tree"))
}

/// The files `diff` found modified that git would find unchanged: a filter
/// program libgit2 cannot run (git-lfs, git-crypt), or a conversion from
/// their `working-tree-encoding`, cleans their content into what is staged.
fn unchanged_through_filters(
    repo: &Repository,
    index: &git2::Index,
    root: &Path,
    diff: &git2::Diff<'_>,
) -> Result<HashSet<Vec<u8>>, ProtectError> {
    let failed = |source| ProtectError::Filter {
        what: "compare files with the index",
        path: root.to_path_buf(),
        source,
    };
    let place = Place::of(repo, root);
    let modified: Vec<(&[u8], String)> = diff
        .deltas()
        .filter(|delta| delta.status() == Delta::Modified)
        .filter_map(|delta| {
            let path = delta.new_file().path_bytes()?;
            Some((path, delta.old_file().id().to_string()))
        })
        .collect();
    if modified.is_empty() {
        return Ok(HashSet::new());
    }
    let paths: Vec<&[u8]> = modified.iter().map(|(path, _)| *path).collect();
    let converted = Drivers::of(repo)
        .converted(repo, index, &place, &paths, Way::In)
        .map_err(failed)?;
    let modified: Vec<(Vec<u8>, String)> = modified
        .into_iter()
        .filter(|(path, _)| converted.contains(path))
        .map(|(path, id)| (path.to_vec(), id))
        .collect();
    if modified.is_empty() {
        return Ok(HashSet::new());
    }
    filters::clean_as_staged(&place, &modified).map_err(failed)
}

/// The tracked files whose work-tree state differs from the index, and
/// the intent-to-add files (their staged content is "nothing"). With
/// `only`, just those paths are compared: the others are known unchanged.
fn unstaged_entries(root: &Path, only: Option<&UnstagedHint>) -> Result<Vec<Entry>, ProtectError> {
    let only = only.map(|hint| hint.0.as_slice());
    if only.is_some_and(<[Vec<u8>]>::is_empty) {
        return Ok(Vec::new());
    }
    let repo = open(root)?;
    let mut index = repo.index().map_err(git_error("read the index"))?;
    let diff = unstaged_diff(&repo, &mut index, only)?;
    let same = unchanged_through_filters(&repo, &index, root, &diff)?;
    let mut entries = Vec::new();
    for delta in diff.deltas() {
        if !matches!(
            delta.status(),
            Delta::Modified | Delta::Deleted | Delta::Typechange
        ) {
            continue;
        }
        let Some(path) = delta
            .new_file()
            .path_bytes()
            .or_else(|| delta.old_file().path_bytes())
        else {
            continue;
        };
        if same.contains(path) {
            continue;
        }
        let path = path.to_vec();
        let intent_to_add = index
            .get_path(Path::new(OsStr::from_bytes(&path)), 0)
            .is_some_and(|e| e.flags_extended & INTENT_TO_ADD != 0);
        entries.push(Entry {
            path,
            saved: None,
            range: None,
            mode: 0,
            permissions: None,
            intent_to_add,
            existing_dir: None,
            xattrs: Vec::new(),
            copied: None,
        });
    }
    // Intent-to-add files with no content yet show no difference but still
    // are not part of the commit.
    let listed: HashSet<Vec<u8>> = entries.iter().map(|e| e.path.clone()).collect();
    for entry in index.iter() {
        if entry.flags_extended & INTENT_TO_ADD == 0 {
            continue;
        }
        let path = entry.path.clone();
        if !listed.contains(&path) && root.join(OsStr::from_bytes(&path)).exists() {
            entries.push(Entry {
                path,
                saved: None,
                range: None,
                mode: 0,
                permissions: None,
                intent_to_add: true,
                existing_dir: None,
                xattrs: Vec::new(),
                copied: None,
            });
        }
    }
    Ok(entries)
}

/// Sets the unstaged changes of tracked files aside and puts those files at
/// their staged content. `Ok(None)` when there is nothing to protect.
///
/// `hint`, when given, names the only tracked files that may have unstaged
/// changes (from `staged_selection`); the others are not compared again.
/// The work tree is scanned on `threads` threads after the checks.
pub fn protect(
    root: &Path,
    state_dir: &StateDir,
    id: &str,
    hint: Option<&UnstagedHint>,
    threads: usize,
    pause: Pause<'_>,
) -> Result<Option<UnstagedGuard>, ProtectError> {
    // Without a hint from the selection (a range run), the stat scan makes
    // one, so only the files it names are compared.
    let scanned;
    let hint = match hint {
        Some(hint) => Some(hint),
        None => {
            scanned = scan_hint(root, threads);
            scanned.as_ref()
        }
    };
    // The common case, nothing unstaged and nothing left by a killed run,
    // needs neither the lock nor a single write. Candidates are compared
    // once, under the lock, where no other run can be moving files.
    if !has_journals(state_dir) {
        let nothing = match hint {
            Some(hint) => hint.0.is_empty(),
            None => unstaged_entries(root, None)?.is_empty(),
        };
        if nothing {
            return Ok(None);
        }
    }
    let lock = lock(state_dir)?;
    // A killed run's changes, written back now, make the hint stale.
    // (A run that recovers first itself reports what it kept; this one only
    // meets a journal left by a run killed since.)
    let recovered = recover_locked(root, state_dir, pause)?;
    let entries = unstaged_entries(root, hint.filter(|_| recovered.is_empty()))?;
    if entries.is_empty() {
        return Ok(None);
    }
    let repo = open(root)?;

    let dir = protect_root(state_dir).join(id);
    // The copies may hold what only the user may read (a 0600 file): no one
    // else can look inside, but for the group of a repository shared with
    // `core.sharedRepository`, whose next run may have to bring them back.
    state_dir
        .sharing
        .create_private_dirs(&dir)
        .map_err(|e| io_error("create", &dir)(e).before_touching())?;
    // Until every copy is on disk the work tree is untouched: a failure
    // leaves nothing to recover.
    // Interrupted by then, the run stops with the work tree as it is.
    let saved = save(root, &dir, entries, state_dir.sharing, pause).and_then(|journal| {
        if crate::runner::interrupted() {
            Err(ProtectError::Interrupted)
        } else {
            Ok(journal)
        }
    });
    let journal = match saved {
        Ok(journal) => journal,
        Err(error) => {
            let _ = fs::remove_dir_all(&dir);
            return Err(error.before_touching());
        }
    };

    // The checks' process groups are appended to `groups_file` as they
    // start. Made here, it is the group's like the rest of the protection
    // (the group's next run stops a killed run's checks from it); made by
    // the first append, it would follow the umask alone.
    let groups = dir.join(GROUPS);
    let made = fs::File::create(&groups).and_then(|file| {
        state_dir
            .sharing
            .share_file_within(&file, crate::state::GROUP_ONLY)
    });
    if let Err(e) = made {
        let _ = fs::remove_dir_all(&dir);
        return Err(io_error("create", &groups)(e).before_touching());
    }
    let mut guard = UnstagedGuard {
        root: root.to_path_buf(),
        dir: dir.clone(),
        checked_out: Vec::new(),
        threads,
        pack: fs::File::open(dir.join(SAVED)).ok(),
        sharing: state_dir.sharing,
        entries: journal.entries,
        index_written: fs::metadata(super::index_path(&repo))
            .ok()
            .map(|meta| std::os::unix::fs::MetadataExt::mtime(&meta)),
        index_before: index_entries(&repo)?,
        done: false,
        _lock: lock,
    };
    guard.checkout_staged(&repo, pause)?;
    guard.checked_out = guard
        .entries
        .iter()
        .map(|e| (e.path.clone(), FileStat::of(&root.join(e.rel()))))
        .collect();
    pause("checked-out");
    Ok(Some(guard))
}

/// The tracked files whose stat data says they may differ from the index;
/// `None` when the index is one libgit2 must read.
fn scan_hint(root: &Path, threads: usize) -> Option<UnstagedHint> {
    let repo = open(root).ok()?;
    let own = super::read_own_index(&repo).ok()??;
    Some(UnstagedHint(stat_candidates(&repo, root, &own, threads)))
}

/// The tracked files of `own` whose stat data in the work tree at `root`
/// says they may differ from it, found on `threads` threads.
fn stat_candidates(
    repo: &Repository,
    root: &Path,
    own: &super::index::Index,
    threads: usize,
) -> Vec<Vec<u8>> {
    let scan = super::index::Scan::new(root, own, super::index::StatCheck::of(repo));
    let ((), candidates) = scan.alongside(threads, || ());
    candidates
}

/// The staged blob that can be written over `entry`'s file in place: a
/// regular file staged as one, with the same executable bit, under
/// directories only, that phasegate may write, and the file's only name
/// (writing in place would change what another name of it holds).
fn overwritable(index: &git2::Index, root: &Path, entry: &Entry) -> Option<git2::Oid> {
    let staged = index.get_path(entry.rel(), 0)?;
    let regular = |mode: u32| mode == MODE_REGULAR || mode == MODE_EXEC;
    if !regular(staged.mode) || staged.mode != entry.mode || entry.saved.is_none() {
        return None;
    }
    no_parent_in_the_way(root, &entry.path).ok()?;
    let path = root.join(entry.rel());
    let meta = fs::symlink_metadata(&path).ok()?;
    let writable = rustix::fs::access(&path, rustix::fs::Access::WRITE_OK).is_ok();
    (meta.is_file() && meta.nlink() == 1 && writable).then_some(staged.id)
}

/// Writes blob `id` over the file at `path`, in place. Not truncated
/// first: only a file cut to nothing has ext4 write it out on close.
fn write_over(repo: &Repository, path: &Path, id: git2::Oid) -> Result<(), ProtectError> {
    use rustix::fs::{Mode, OFlags};
    let blob = repo
        .find_blob(id)
        .map_err(git_error("read a staged file"))?;
    let content = blob.content();
    let mut file = rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map(fs::File::from)
    .map_err(io::Error::from)
    .map_err(io_error("put at its staged content", path))?;
    file.write_all(content)
        .and_then(|()| file.set_len(content.len() as u64))
        .map_err(io_error("put at its staged content", path))
}

/// An error when one of `path`'s directories is something else in the
/// work tree (a symbolic link, a file): git sees nothing of `path` beyond
/// it, and writing `path` would go through a link to a file outside the
/// repository or untracked. A directory that is missing is not in the way.
fn no_parent_in_the_way(root: &Path, path: &[u8]) -> Result<(), ProtectError> {
    let Some(slash) = memchr::memrchr(b'/', path) else {
        return Ok(());
    };
    let mut parent = root.to_path_buf();
    for name in path[..slash].split(|&b| b == b'/') {
        parent.push(OsStr::from_bytes(name));
        let what = match fs::symlink_metadata(&parent) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(meta) if meta.file_type().is_symlink() => "a symbolic link",
            Ok(_) => "a file",
            Err(_) => return Ok(()),
        };
        return Err(ProtectError::ParentInTheWay {
            path: root.join(OsStr::from_bytes(path)),
            parent,
            what,
        });
    }
    Ok(())
}

/// The read-only directory that keeps phasegate from putting `entry`'s
/// file (at `path`, `meta` its stat data) at its staged content and back:
/// it can neither write the file itself (not a writable regular file, or
/// one to be removed) nor replace it there. Found before anything is
/// touched, so that the run stops with the work tree as it was, not half
/// way through with a bare "permission denied".
fn read_only_dir(
    root: &Path,
    entry: &Entry,
    path: &Path,
    meta: Option<&fs::Metadata>,
) -> Option<PathBuf> {
    use rustix::fs::{access, Access};
    let in_place = !entry.intent_to_add
        && meta.is_some_and(fs::Metadata::is_file)
        && access(path, Access::WRITE_OK).is_ok();
    if in_place {
        return None;
    }
    let dir = match meta {
        Some(_) => path.parent().unwrap_or(root).to_path_buf(),
        None => root.join(OsStr::from_bytes(&deepest_existing_dir(root, &entry.path))),
    };
    access(&dir, Access::WRITE_OK | Access::EXEC_OK)
        .is_err()
        .then_some(dir)
}

/// Copies every entry's work-tree state into `dir`, with the journal,
/// flushed to disk; the work tree is not touched.
fn save(
    root: &Path,
    dir: &Path,
    entries: Vec<Entry>,
    sharing: Sharing,
    pause: Pause<'_>,
) -> Result<Journal, ProtectError> {
    let mut journal = Journal {
        state: State::Saving,
        pid: std::process::id(),
        root: Some(root.as_os_str().as_bytes().to_vec()),
        entries: Vec::new(),
    };
    write_journal(dir, &journal, sharing)?;
    // Every copy goes into one file, flushed once: a flush per file would
    // cost more than the rest of the protection together.
    let saved = dir.join(SAVED);
    let mut pack = fs::File::create(&saved)
        // The group's to read where the repository is shared, whose next
        // run may have to bring them back; never others'.
        .and_then(|file| {
            sharing
                .share_file_within(&file, crate::state::GROUP_ONLY)
                .map(|()| file)
        })
        .map_err(io_error("create", &saved))?;
    let mut offset = 0u64;
    for (n, mut entry) in entries.into_iter().enumerate() {
        no_parent_in_the_way(root, &entry.path)?;
        let source = root.join(entry.rel());
        let meta = fs::symlink_metadata(&source);
        // A directory or special file there has its own error below.
        let plain = meta
            .as_ref()
            .ok()
            .filter(|m| m.is_file() || m.file_type().is_symlink());
        let absent = meta
            .as_ref()
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound);
        if let Some(dir) = (plain.is_some() || absent)
            .then(|| read_only_dir(root, &entry, &source, plain))
            .flatten()
        {
            return Err(ProtectError::ReadOnly { path: source, dir });
        }
        entry.copied = meta.as_ref().ok().map(FileStat::from);
        // The length of the copy written, streamed: a file may be larger
        // than memory.
        let copied = match meta {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&source).map_err(io_error("read the link", &source))?;
                entry.mode = MODE_LINK;
                let bytes = target.into_os_string().into_vec();
                pack.write_all(&bytes).map_err(io_error("write", &saved))?;
                Some(bytes.len() as u64)
            }
            Ok(meta) if meta.is_dir() => {
                return Err(ProtectError::DirectoryInTheWay { path: source });
            }
            // A named pipe would make the copy wait forever for a writer.
            Ok(meta) if !meta.is_file() => {
                return Err(ProtectError::SpecialFileInTheWay {
                    path: source,
                    what: special_kind(&meta),
                });
            }
            Ok(meta) => {
                entry.permissions = Some(meta.permissions().mode() & 0o7777);
                entry.mode = if meta.permissions().mode() & 0o111 != 0 {
                    MODE_EXEC
                } else {
                    MODE_REGULAR
                };
                let mut file = open_regular(&source).map_err(io_error("read", &source))?;
                entry.xattrs = xattrs_of(&file);
                // A full file system is the copy's to hold, not the file's.
                Some(io::copy(&mut file, &mut pack).map_err(|e| {
                    if is_full(&e) {
                        io_error("write", &saved)(e)
                    } else {
                        io_error("copy", &source)(e)
                    }
                })?)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                entry.existing_dir = Some(deepest_existing_dir(root, &entry.path));
                None
            }
            Err(e) => {
                return Err(ProtectError::Io {
                    what: "read",
                    path: source,
                    source: e,
                })
            }
        };
        if let Some(len) = copied {
            entry.saved = Some(SAVED.to_string());
            entry.range = Some((offset, len));
            offset += len;
        }
        journal.entries.push(entry);
        if n == 0 {
            pause("saving");
        }
        // The rest need not be copied: the work tree will not be touched.
        if crate::runner::interrupted() {
            return Err(ProtectError::Interrupted);
        }
    }
    pack.sync_all().map_err(io_error("flush", &saved))?;
    drop(pack);
    reserve(dir, &journal.entries)?;
    journal.state = State::Saved;
    write_journal(dir, &journal, sharing)?;
    pause("saved");
    Ok(journal)
}

/// The file in a protection's directory that holds, while the checks run,
/// the disk space writing the copies back takes: a check that fills the
/// disk (a runaway log, a build's output) cannot leave the changes with no
/// room to come back. It is deleted just before they are written back.
const RESERVE: &str = "reserve";

/// Holds in `dir` the space writing `entries` back needs: each copy whole,
/// in whole blocks, and a block more for its directory entry (a file
/// staged as deleted is made anew). An error when the file system cannot
/// give it: the work tree is not touched then. A file system that cannot
/// allocate ahead (`fallocate` unsupported) goes without.
fn reserve(dir: &Path, entries: &[Entry]) -> Result<(), ProtectError> {
    use std::os::unix::fs::OpenOptionsExt;
    const BLOCK: u64 = 4096;
    let bytes: u64 = entries
        .iter()
        .map(|e| e.range.map_or(0, |(_, len)| len.div_ceil(BLOCK) * BLOCK) + BLOCK)
        .sum();
    let path = dir.join(RESERVE);
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(io_error("create", &path))?;
    match rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, bytes) {
        Err(e @ (rustix::io::Errno::NOSPC | rustix::io::Errno::DQUOT)) => Err(io_error(
            "hold the space writing the unstaged changes back takes in",
            &path,
        )(e.into())),
        _ => Ok(()),
    }
}

/// Gives back the space `reserve` held, for the copies to be written back.
fn release_reserve(dir: &Path) {
    let _ = fs::remove_file(dir.join(RESERVE));
}

impl UnstagedGuard {
    /// Puts every protected file at its staged content.
    fn checkout_staged(&mut self, repo: &Repository, pause: Pause<'_>) -> Result<(), ProtectError> {
        let mut touched = vec![false; self.entries.len()];
        let result = self.put_at_staged(repo, pause, &mut touched);
        if matches!(result, Err(ProtectError::ChangedWhileSettingAside { .. })) {
            // Only what was touched comes back from the copies: a file
            // changed since its copy keeps its newer content, and so do
            // the files not reached.
            let mut n = 0;
            self.entries.retain(|_| {
                n += 1;
                touched[n - 1]
            });
        }
        result
    }

    /// Whether the file of `self.entries[n]` is as it was when copied;
    /// else the error that stops the protection.
    fn unchanged_since_copied(&self, n: usize) -> Result<(), ProtectError> {
        let entry = &self.entries[n];
        let path = self.root.join(entry.rel());
        if FileStat::of(&path) == entry.copied {
            Ok(())
        } else {
            Err(ProtectError::ChangedWhileSettingAside { path })
        }
    }

    fn put_at_staged(
        &self,
        repo: &Repository,
        pause: Pause<'_>,
        touched: &mut [bool],
    ) -> Result<(), ProtectError> {
        let mut index = repo.index().map_err(git_error("read the index"))?;
        let tracked: Vec<&[u8]> = self
            .entries
            .iter()
            .filter(|e| !e.intent_to_add)
            .map(|e| e.path.as_slice())
            .collect();
        // libgit2 would not write a file flagged skip-worktree.
        let paths: Vec<Vec<u8>> = tracked.iter().map(|p| p.to_vec()).collect();
        look_at_flagged(&mut index, &self.root, Some(&paths))?;
        // Written over in place when git would write the stored bytes as
        // they are: no file is deleted and made again (which costs the file
        // system far more than writing).
        let as_stored =
            !tracked.is_empty() && filters::written_as_stored(repo, &index, &self.root, &tracked);
        let mut builder = CheckoutBuilder::new();
        // Exact paths, not patterns: a name may hold `*`, `[` or a newline.
        builder
            .force()
            .update_index(false)
            .recreate_missing(true)
            .disable_pathspec_match(true);
        let mut in_place = Vec::new();
        let mut through_git = Vec::new();
        for (n, entry) in self.entries.iter().enumerate() {
            let path = self.root.join(entry.rel());
            self.unchanged_since_copied(n)?;
            if entry.intent_to_add {
                // Nothing of it is staged: the commit will not contain it.
                match fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(ProtectError::Io {
                            what: "set aside",
                            path,
                            source: e,
                        })
                    }
                }
            } else if let Some(id) = as_stored
                .then(|| overwritable(&index, &self.root, entry))
                .flatten()
            {
                in_place.push((n, path, id));
                continue;
            } else {
                // libgit2 skips a file whose stat data still matches the
                // index, whatever its content: the copy is saved, so the
                // file goes and is written afresh from the index.
                let _ = fs::remove_file(&path);
                builder.path(entry.rel());
                through_git.push(entry.path.as_slice());
            }
            touched[n] = true;
        }
        // The protected files are gone from the work tree here, or about to
        // be written over: only the saved copies hold them.
        pause("checking-out");
        for (n, path, id) in &in_place {
            self.unchanged_since_copied(*n)?;
            touched[*n] = true;
            write_over(repo, path, *id)?;
        }
        if !through_git.is_empty() {
            repo.checkout_index(Some(&mut index), Some(&mut builder))
                .map_err(git_error("put the files at their staged content"))?;
            super::checkout_left_out(repo, &mut index, &through_git, &self.root, false)
                .map_err(git_error("put the files at their staged content"))?;
            filters::smudge_checked_out(repo, &self.root, &index, &through_git, &self.root)
                .map_err(|source| ProtectError::Filter {
                    what: "put files at their staged content",
                    path: self.root.clone(),
                    source,
                })?;
        }
        Ok(())
    }

    /// The files the checks changed: one comparison of the work tree with
    /// the index after the checks.
    fn changed_by_checks(&self) -> Result<Vec<String>, ProtectError> {
        // A protected file whose stat data is what phasegate left there
        // holds its staged content still.
        let left: std::collections::HashMap<&[u8], Option<FileStat>> = self
            .checked_out
            .iter()
            .map(|(path, stat)| (path.as_slice(), *stat))
            .collect();
        let as_left = |path: &[u8]| {
            left.get(path)
                .is_some_and(|stat| *stat == FileStat::of(&self.root.join(OsStr::from_bytes(path))))
        };
        let changed = changed_since(&self.root, self.threads, None, as_left)?;
        // Intent-to-add files were set aside on purpose.
        let set_aside: HashSet<&[u8]> = self
            .entries
            .iter()
            .filter(|e| e.intent_to_add)
            .map(|e| e.path.as_slice())
            .collect();
        Ok(changed
            .into_iter()
            .filter(|path| !set_aside.contains(path.as_slice()))
            .map(|path| String::from_utf8_lossy(&path).into_owned())
            .collect())
    }

    /// The paths whose index entries the checks changed, added or removed.
    fn staged_by_checks(&self, repo: &Repository) -> Result<Vec<String>, ProtectError> {
        fn key(e: &git2::IndexEntry) -> (&[u8], git2::Oid, u32) {
            (&e.path, e.id, e.mode)
        }
        let after = index_entries(repo)?;
        let before: HashSet<_> = self.index_before.iter().map(key).collect();
        let now: HashSet<_> = after.iter().map(key).collect();
        let mut changed: Vec<String> = before
            .difference(&now)
            .chain(now.difference(&before))
            .map(|(path, _, _)| String::from_utf8_lossy(path).into_owned())
            .collect();
        changed.sort();
        changed.dedup();
        Ok(changed)
    }

    /// Puts the index entries of `paths` back as they were before the checks.
    fn unstage(&self, repo: &Repository, paths: &[String]) -> Result<(), ProtectError> {
        let mut index = repo.index().map_err(git_error("read the index"))?;
        for path in paths {
            match self.index_before.iter().find(|e| e.path == path.as_bytes()) {
                Some(entry) => index.add(&copy_entry(entry)),
                None => index.remove_path(Path::new(path)),
            }
            .map_err(git_error("roll back the checks' change to the index"))?;
        }
        index.write().map_err(git_error("write the index"))
    }

    /// Writes the saved copies back (`restore_entries`), from the copies
    /// held open.
    fn restore(&self, keep: Option<&Path>, pause: Pause<'_>) -> Result<Vec<String>, ProtectError> {
        restore_entries(
            &self.root,
            &self.dir,
            self.pack.as_ref(),
            &self.entries,
            keep,
            self.sharing,
            pause,
        )
    }

    /// Removes the protection's directory once the changes are back; a
    /// check may have removed it already.
    fn remove_dir(&self) -> Result<(), ProtectError> {
        match fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("remove", &self.dir)(e)),
            _ => Ok(()),
        }
    }

    /// The error for an index a check left locked: what was staged of
    /// `paths` before the checks, to be put back by hand.
    fn index_locked(
        &self,
        repo: &Repository,
        paths: &[String],
        others: Vec<String>,
    ) -> ProtectError {
        let mut lock = super::index_path(repo).into_os_string();
        lock.push(".lock");
        let restage = paths
            .iter()
            .map(|path| Restage {
                path: path.clone(),
                before: self
                    .index_before
                    .iter()
                    .find(|e| e.path == path.as_bytes() && e.flags & super::index::STAGE_MASK == 0)
                    .map(|e| (e.mode, e.id, e.flags_extended & INTENT_TO_ADD != 0)),
            })
            .collect();
        ProtectError::IndexLocked {
            lock: PathBuf::from(lock),
            by: None,
            restage,
            others,
        }
    }

    /// Writes the unstaged changes back and reports what the checks changed.
    /// The checks' versions of files whose unstaged changes win are kept
    /// under `keep` first.
    /// Where the checks' process groups are to be recorded while they run
    /// (a line `<pgid> <start time>` each): if phasegate is killed, the run
    /// that finishes its work stops them before writing the changes back.
    pub fn groups_file(&self) -> PathBuf {
        self.dir.join(GROUPS)
    }

    pub fn finish(mut self, pause: Pause<'_>, keep: &Path) -> Result<Aftermath, ProtectError> {
        pause("checks-done");
        let unsplit = unsplit_index(&self.root)?;
        let repo = open(&self.root)?;
        let staged = self.staged_by_checks(&repo)?;
        let mut modified = self.changed_by_checks()?;
        modified.extend(staged.iter().cloned());
        modified.sort();
        modified.dedup();
        let held: HashSet<String> = self.entries.iter().map(Entry::shown).collect();
        let conflicts: Vec<String> = modified
            .iter()
            .filter(|p| held.contains(*p))
            .cloned()
            .collect();
        // A check that staged a file whose unstaged changes phasegate holds
        // would mix its change with the user's: its staging is undone.
        let unstage: Vec<String> = staged
            .iter()
            .filter(|p| held.contains(*p))
            .cloned()
            .collect();
        // An index lock a check left behind keeps the staging as the
        // checks left it; the work tree is finished all the same, and the
        // error says what to undo by hand once the lock is gone.
        let mut locked = None;
        if !unstage.is_empty() {
            match self.unstage(&repo, &unstage) {
                Err(ProtectError::Git { source, .. })
                    if source.code() == git2::ErrorCode::Locked =>
                {
                    let others = staged
                        .iter()
                        .filter(|p| !unstage.contains(p))
                        .cloned()
                        .collect();
                    locked = Some(self.index_locked(&repo, &unstage, others));
                }
                other => other?,
            }
        }
        // Restoring overwrites what the checks (or an editor saving while
        // they ran) wrote to those files: it is kept, so nothing anyone
        // wrote is lost.
        let conflicted: HashSet<&String> = conflicts.iter().collect();
        let held: Vec<&[u8]> = self
            .entries
            .iter()
            .filter(|e| conflicted.contains(&e.shown()))
            .map(|e| e.path.as_slice())
            .collect();
        release_reserve(&self.dir);
        let mut kept_paths = Vec::new();
        if let Err(error) = keep_versions(&self.root, held, keep, self.sharing, &mut kept_paths) {
            // The unstaged changes come back over the versions not kept:
            // the user's work first, and the error says those are gone.
            let lost = conflicts
                .iter()
                .filter(|p| !kept_paths.contains(p))
                .cloned()
                .collect();
            let restored = self.restore(Some(keep), pause).is_ok() && self.remove_dir().is_ok();
            self.done = restored;
            return Err(ProtectError::VersionsLost {
                source: Box::new(error),
                lost,
                restored,
                kept_in: (!kept_paths.is_empty()).then(|| keep.to_path_buf()),
            });
        }
        let mut kept = !kept_paths.is_empty();
        // A directory a check left where a file goes is moved there too.
        kept |= !self.restore(Some(keep), pause)?.is_empty();
        self.remove_dir()?;
        self.done = true;
        if let Some(locked) = locked {
            return Err(locked);
        }
        // What the checks staged of files phasegate did not hold stays
        // staged; the index as it was is kept for the undo of a commit.
        let index_before = (staged.len() > unstage.len())
            .then(|| {
                super::IndexBefore::of_entries(
                    &super::index_path(&repo),
                    std::mem::take(&mut self.index_before),
                    self.index_written,
                )
            })
            .flatten();
        Ok(Aftermath {
            modified,
            conflicts,
            kept: kept.then(|| keep.to_path_buf()),
            unsplit,
            index_before,
        })
    }
}

impl Drop for UnstagedGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // A panic between protect and finish: put the changes back now. If
        // that fails too, the journal stays and the next run finishes it.
        // A directory in a file's way goes where a killed run's would.
        let keep = self
            .dir
            .parent()
            .and_then(Path::parent)
            .zip(self.dir.file_name())
            .map(|(state_dir, id)| state_dir.join("kept").join(id));
        release_reserve(&self.dir);
        if self.restore(keep.as_deref(), &|_| {}).is_ok() {
            let _ = self.remove_dir();
        }
    }
}

/// Merges back into one file an index a check rewrote as a split index
/// (`git update-index --split-index`, or `core.splitIndex` set and then a
/// `git add`): libgit2 cannot read one, and without the index phasegate
/// can neither tell what the checks changed nor undo what they staged.
/// The run found the index whole (a split one stops it before the checks),
/// so this gives the user back the index as they had it, the same entries
/// in one file, and only git itself knows how. `Ok(true)` when it did.
pub fn unsplit_index(root: &Path) -> Result<bool, ProtectError> {
    let repo = open(root)?;
    if !may_be_split(repo.path()) {
        return Ok(false);
    }
    let split = match repo.index() {
        Ok(_) => false,
        Err(e) => e.message().contains("extension: 'link'"),
    };
    if !split {
        return Ok(false);
    }
    let failed = |why: String| ProtectError::SplitByChecks { by: None, why };
    // Turned off for this write only: whether the repository keeps it on
    // is the user's to say (the note says when a check set it).
    let out = super::filters::Place::of(&repo, root)
        .git()
        .args([
            "-c",
            "core.splitIndex=false",
            "update-index",
            "--no-split-index",
        ])
        .output()
        .map_err(|e| failed(format!("`git` could not be run: {e}")))?;
    if !out.status.success() {
        // git's first line says what failed; the rest is general advice.
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(failed(format!(
            "`git update-index --no-split-index` said: {}",
            said.lines().next().unwrap_or_default().trim()
        )));
    }
    // Read again, as every later step will.
    match open(root)?.index() {
        Ok(_) => Ok(true),
        Err(e) => Err(failed(e.message().to_string())),
    }
}

/// Whether an index of the git directory `git_dir` may be split: git keeps
/// the shared part of a split index beside it, in a `sharedindex.<id>`
/// file, so a directory without one holds no split index. One look at a
/// small directory, where reading the index to find out would read all
/// of it.
pub fn may_be_split(git_dir: &Path) -> bool {
    fs::read_dir(git_dir).is_ok_and(|dir| {
        dir.flatten()
            .any(|entry| entry.file_name().as_bytes().starts_with(b"sharedindex."))
    })
}

/// Whether the repository's configuration now asks git to split the index
/// (`core.splitIndex`), as a check may have set it.
pub fn splits_index(root: &Path) -> bool {
    open(root)
        .and_then(|repo| {
            repo.config()
                .and_then(|c| c.get_bool("core.splitIndex"))
                .map_err(git_error("read the configuration"))
        })
        .unwrap_or(false)
}

/// What the checks may leave beside the work tree that a person must hear
/// of: git's index lock (every later `git add` or `git commit` fails until
/// it goes) and stash entries (a check that ran `git stash` holds in one
/// what it stashed, perhaps the user's own work). Taken before the checks
/// from two files, as every run in place takes it: the lock's stat data and
/// the stash's reflog; `left` compares after them, and opens the
/// repository only when the stash changed. `HEAD` is taken too, from its
/// own small files (`HeadTrace`): a check that moved it made the run fail.
pub struct Traces {
    lock: PathBuf,
    lock_before: Option<FileStat>,
    /// `logs/refs/stash` of the common git directory.
    stash_log: PathBuf,
    /// Its bytes before the checks, empty when there is none.
    stash_before: Vec<u8>,
    head: super::head_trace::HeadTrace,
}

/// The stash's entries in its reflog's text, newest first (`stash@{0}`
/// first), each with its message. A line git did not write is skipped.
fn stash_entries(log: &[u8]) -> Vec<(git2::Oid, String)> {
    let mut entries: Vec<(git2::Oid, String)> = log
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            // `<old> <new> <who> <when> <zone>\t<message>`
            let (head, message) = match line.iter().position(|&b| b == b'\t') {
                Some(tab) => (&line[..tab], &line[tab + 1..]),
                None => (line, &[][..]),
            };
            let new = head.split(|&b| b == b' ').nth(1)?;
            let id = git2::Oid::from_str(std::str::from_utf8(new).ok()?).ok()?;
            Some((id, String::from_utf8_lossy(message).into_owned()))
        })
        .collect();
    entries.reverse();
    entries
}

/// The file's bytes, none when it cannot be read (there is no stash).
fn read_or_empty(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_default()
}

impl Traces {
    /// The index lock and stash of the repository whose own git directory
    /// is `git_dir` and common one `common_dir`, now.
    pub fn before(git_dir: &Path, common_dir: &Path) -> Traces {
        let mut lock = super::index_file(git_dir).into_os_string();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        let stash_log = common_dir.join("logs").join("refs").join("stash");
        let head = super::head_trace::HeadTrace::before(git_dir, common_dir);
        // In a repository that keeps its refs as reftable the stash's
        // reflog is no file: it is asked of git, when `HEAD`'s question
        // said there is a stash at all.
        let stash_before = match head.reftable() {
            None => read_or_empty(&stash_log),
            Some(reftable) if reftable.had_stash() => super::refs::stash_log(&reftable.git_dir),
            Some(_) => Vec::new(),
        };
        Traces {
            lock_before: FileStat::of(&lock),
            lock,
            stash_before,
            stash_log,
            head,
        }
    }

    /// What the checks (`by`, for a person) did to `HEAD` of the
    /// repository at `root` (a commit, a reset, a branch switched or
    /// detached), with how to undo it; `None` when it is where it was.
    /// With `staging`, the checks changed what the index stages too, and
    /// the undo puts it back.
    pub fn moved_head(
        &self,
        root: &Path,
        by: &str,
        staging: Option<&super::Staging<'_>>,
    ) -> Option<String> {
        self.head.moved(root, by, staging)
    }

    /// What the checks (`by`, for a person) left changed: an index lock
    /// that is new and entries of the user's they took off the stash (`git
    /// stash pop` with nothing of its own stashed pops the user's), as
    /// notes; stash entries they added, as findings that fail the run,
    /// each with the command that brings it back over the work tree as
    /// phasegate leaves it (`set_aside`: it wrote unstaged changes back
    /// after the checks). A lock is never removed here: a git process a
    /// check left running may hold it.
    pub fn left(&self, root: &Path, by: &str, set_aside: bool) -> Left {
        let mut left = Left::default();
        let lock = FileStat::of(&self.lock);
        if lock.is_some() && lock != self.lock_before {
            let path = quoted(self.lock.as_os_str().as_bytes());
            left.notes.push(format!(
                "{by} left git's index lock `{}` behind: `git add` and `git commit` fail until it is gone. Once no git command runs, remove it (`rm {path}`)",
                self.lock.display()
            ));
        }
        // The reflog is asked of git again only when a ref changed.
        let stash_now = match self.head.reftable() {
            None => read_or_empty(&self.stash_log),
            Some(reftable) if reftable.unchanged() => return left,
            Some(reftable) => super::refs::stash_log(&reftable.git_dir),
        };
        if stash_now == self.stash_before {
            return left;
        }
        let before: HashSet<git2::Oid> = stash_entries(&self.stash_before)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let now = stash_entries(&stash_now);
        let repo = open(root).ok();
        // `git stash pop` refuses to run while the index holds an
        // intent-to-add entry, and phasegate gave those back: the command
        // takes them out first and puts them back last.
        let intended = match (&repo, set_aside) {
            (Some(repo), true) => intent_to_add_paths(repo),
            _ => Vec::new(),
        };
        for (n, (id, message)) in now.iter().enumerate() {
            if before.contains(id) {
                continue;
            }
            let commit = repo.as_ref().and_then(|repo| repo.find_commit(*id).ok());
            left.stashed.push(match (&repo, commit) {
                (Some(repo), Some(commit)) => {
                    let popped = Popped {
                        set_aside,
                        intended: &intended,
                    };
                    stashed(repo, &commit, n, message, by, &popped)
                }
                // Unreadable, and said all the same: never passed.
                _ => format!(
                    "{by} stashed work: it left a stash entry, stash@{{{n}}} ({message}), that phasegate could not read. `git stash show -p --include-untracked stash@{{{n}}}` shows what it holds, and `git stash pop stash@{{{n}}}` brings it back"
                ),
            });
        }
        let kept: HashSet<git2::Oid> = now.iter().map(|(id, _)| *id).collect();
        let mut gone: Vec<git2::Oid> = before.into_iter().filter(|id| !kept.contains(id)).collect();
        gone.sort();
        for id in gone {
            let short = id.to_string();
            left.notes.push(format!(
                "{by} took the stash entry {} off the stash (`git stash pop` or `drop`): its changes were applied to the work tree or dropped. While git keeps it, `git stash apply {id}` brings them back",
                short.get(..10).unwrap_or(&short)
            ));
        }
        left
    }
}

/// The paths the index holds as intent-to-add (`git add -N`), each quoted
/// for a shell.
fn intent_to_add_paths(repo: &Repository) -> Vec<String> {
    repo.index()
        .map(|index| {
            index
                .iter()
                .filter(|e| e.flags_extended & INTENT_TO_ADD != 0)
                .map(|e| quoted(&e.path))
                .collect()
        })
        .unwrap_or_default()
}

/// What the work tree and index hold when a stash entry is to be popped.
struct Popped<'a> {
    /// phasegate wrote unstaged changes back after the checks.
    set_aside: bool,
    /// The intent-to-add paths of the index then, quoted.
    intended: &'a [String],
}

/// What the checks left beside the work tree (`Traces::left`).
#[derive(Debug, Default)]
pub struct Left {
    /// For a person to hear of; the run's outcome stays as it is.
    pub notes: Vec<String>,
    /// One per stash entry the checks made: each took files out of the
    /// work tree or the index, and fails the run.
    pub stashed: Vec<String>,
}

/// At most this many paths are named of each kind a stash entry holds.
const STASHED_NAMED: usize = 10;

/// What the stash entry `commit` (`stash@{n}`, with its reflog `message`)
/// that the checks (`by`) made holds, and the command that brings it back
/// once phasegate has written the unstaged changes back.
///
/// A stash entry is a commit of the work tree whose first parent is
/// `HEAD`, whose second holds the index, and whose third (with `-u` or
/// `-a`) the untracked files. `git stash` then put the index and the
/// tracked files at `HEAD` and deleted those untracked files; phasegate
/// wrote back the files with unstaged changes over that, with their index
/// entries. `git stash pop --index` cannot apply onto them (the index no
/// longer holds what the stash's index patch expects, and the merge would
/// write over a file with unstaged changes), but a plain `pop` can: the
/// stash's version of those files is what their index entries hold again,
/// so it leaves them alone, and brings back the rest and the untracked
/// files. What `pop` puts in the work tree and not the index, the staged
/// content of files without unstaged changes, is staged again from the
/// stash's index commit, which holds the index as the checks found it.
///
/// When phasegate set nothing aside (`set_aside` false: a run in the work
/// tree as it is, or one with no unstaged changes), nothing was written
/// over what `git stash` left: the work tree and the index are at `HEAD`,
/// and `git stash pop --index` brings back the staged changes, the
/// unstaged ones and the untracked files each where they were.
///
/// git refuses to pop while the index holds intent-to-add entries (`git
/// add -N`), which the stash does not keep: the command takes them out of
/// the index first (`git rm --cached`, the files stay) and adds them again
/// last.
fn stashed(
    repo: &Repository,
    commit: &git2::Commit<'_>,
    n: usize,
    message: &str,
    by: &str,
    popped: &Popped<'_>,
) -> String {
    let set_aside = popped.set_aside;
    let tree = |parent: usize| commit.parent(parent).and_then(|p| p.tree()).ok();
    let (base, index, untracked) = (tree(0), tree(1), tree(2));
    let work = commit.tree().ok();
    let changed = |from: Option<&git2::Tree<'_>>, to: Option<&git2::Tree<'_>>| -> Vec<String> {
        repo.diff_tree_to_tree(from, to, None)
            .map(|diff| {
                diff.deltas()
                    .filter_map(|d| {
                        d.new_file()
                            .path_bytes()
                            .or_else(|| d.old_file().path_bytes())
                    })
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut tracked = changed(base.as_ref(), index.as_ref());
    tracked.extend(changed(base.as_ref(), work.as_ref()));
    tracked.sort();
    tracked.dedup();
    // The untracked files: every file of that commit, against nothing.
    let untracked_files = untracked
        .as_ref()
        .map(|tree| changed(None, Some(tree)))
        .unwrap_or_default();
    let named = |paths: &[String]| {
        let mut shown: Vec<String> = paths
            .iter()
            .take(STASHED_NAMED)
            .map(|p| format!("`{p}`"))
            .collect();
        if paths.len() > STASHED_NAMED {
            shown.push(format!("and {} more", paths.len() - STASHED_NAMED));
        }
        shown.join(", ")
    };
    let mut held = Vec::new();
    if !tracked.is_empty() {
        held.push(format!("the changes of {}", named(&tracked)));
    }
    if !untracked_files.is_empty() {
        held.push(format!("the untracked files {}", named(&untracked_files)));
    }
    let held = if held.is_empty() {
        "nothing that differs from HEAD".to_string()
    } else {
        held.join(" and ")
    };
    let shown = if untracked.is_some() {
        format!("`git stash show -p --include-untracked stash@{{{n}}}`")
    } else {
        format!("`git stash show -p stash@{{{n}}}`")
    };
    if !set_aside {
        return format!(
            "{by} stashed work out of the work tree: it left a stash entry, stash@{{{n}}} ({message}), holding {held}; see it with {shown}. Bring it back with `git stash pop --index stash@{{{n}}}`, which puts back what was staged, what was not and the untracked files as they were"
        );
    }
    let intended = popped.intended.join(" ");
    let mut bring_back = if intended.is_empty() {
        String::new()
    } else {
        format!("git rm --cached -q -- {intended} && ")
    };
    bring_back.push_str(&format!("git stash pop stash@{{{n}}}"));
    let staged = match (&base, &index) {
        (Some(base), Some(index)) => base.id() != index.id(),
        _ => false,
    };
    if staged {
        bring_back.push_str(&format!(" && git reset -q {}^2 -- :/", commit.id()));
    }
    if !intended.is_empty() {
        bring_back.push_str(&format!(" && git add -N -- {intended}"));
    }
    format!(
        "{by} stashed work out of the work tree: it left a stash entry, stash@{{{n}}} ({message}), holding {held}; see it with {shown}. Bring it back with `{bring_back}`, which leaves the unstaged changes phasegate gave back as they are{}",
        if staged { " and stages again what was staged" } else { "" }
    )
}

/// The tracked files of `root` whose work-tree state no longer matches the
/// index, and, when `held` holds the index as it was before the checks,
/// the paths they staged or unstaged (`git add` of a generated file):
/// what the checks changed when nothing was set aside.
pub fn changed_in_work_tree(
    root: &Path,
    threads: usize,
    held: Option<super::Held>,
) -> Result<Changed, ProtectError> {
    let (restaged, index_before) = restaged_since(held.as_ref())?;
    let mut changed = changed_since(root, threads, held, |_| false)?;
    changed.extend(restaged);
    Ok(Changed::of(changed, index_before))
}

/// The files the checks changed, and the index as it was before them
/// when they changed what it stages.
pub struct Changed {
    pub files: Vec<String>,
    pub index_before: Option<super::IndexBefore>,
}

impl Changed {
    fn of(mut paths: Vec<Vec<u8>>, index_before: Option<super::IndexBefore>) -> Changed {
        paths.sort();
        paths.dedup();
        Changed {
            files: paths
                .into_iter()
                .map(|path| String::from_utf8_lossy(&path).into_owned())
                .collect(),
            index_before,
        }
    }
}

/// The paths whose staged state differs from the index `held` before the
/// checks, and, when there are any, that index's file as it was.
fn restaged_since(
    held: Option<&super::Held>,
) -> Result<(Vec<Vec<u8>>, Option<super::IndexBefore>), ProtectError> {
    let Some((before, repo)) = held.and_then(super::Held::parts) else {
        return Ok((Vec::new(), None));
    };
    let path = super::index_path(repo);
    let restaged =
        super::index::restaged(before, &path).map_err(io_error("read the index", &path))?;
    let index_before = if restaged.is_empty() {
        None
    } else {
        super::IndexBefore::new(&path, before.file_bytes(), before.written_at())
    };
    Ok((restaged, index_before))
}

/// The tracked files as checks that run in the work tree as it is find
/// them (`--all-files`, `--files`: nothing is set aside, so files may
/// differ from the index already): the index, and what each file that
/// differs from it holds, to tell afterwards which files the checks wrote.
pub struct AsFound {
    /// The index and repository read, when phasegate reads the index
    /// itself (neither split nor sparse).
    held: Option<super::Held>,
    /// The files whose stat data differed from the index (or, in an index
    /// only libgit2 reads, whose content did), with what stood there.
    differed: std::collections::HashMap<Vec<u8>, Option<Content>>,
}

/// What stood at a path: its stat data and the hash of its bytes (of a
/// link's target; none for what is neither a file nor a link, which is
/// never opened: a named pipe would block the read).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Content {
    stat: FileStat,
    id: Option<git2::Oid>,
}

impl Content {
    fn of(path: &Path) -> Option<Content> {
        let meta = fs::symlink_metadata(path).ok()?;
        let id = if meta.file_type().is_symlink() {
            fs::read_link(path).ok().and_then(|target| {
                git2::Oid::hash_object(git2::ObjectType::Blob, target.as_os_str().as_bytes()).ok()
            })
        } else if meta.is_file() {
            git2::Oid::hash_file(git2::ObjectType::Blob, path).ok()
        } else {
            None
        };
        Some(Content {
            stat: FileStat::from(&meta),
            id,
        })
    }

    /// Whether what stands at `path` now is other than `was`: its stat
    /// data is the same, or its bytes (and kind and mode) are.
    fn rewritten(path: &Path, was: Option<&Content>) -> bool {
        let now = FileStat::of(path);
        match (was, now) {
            (None, None) => false,
            (Some(was), Some(now)) if was.stat == now => false,
            (Some(was), Some(now)) => {
                was.stat.mode != now.mode
                    || was.id.is_none()
                    || Content::of(path).is_none_or(|c| c.id != was.id)
            }
            _ => true,
        }
    }
}

impl AsFound {
    /// The tracked files of `root` now: one look at every file's stat data
    /// on `threads` threads (the index read by phasegate), and the bytes of
    /// those that differ from the index, hashed. In a split or sparse index
    /// libgit2 compares every file instead.
    pub fn take(root: &Path, threads: usize) -> Result<AsFound, ProtectError> {
        let held = super::Held::now(root);
        let paths = match held.as_ref().and_then(super::Held::parts) {
            Some((own, repo)) => stat_candidates(repo, root, own, threads),
            None => {
                let repo = open(root)?;
                let mut index = repo.index().map_err(git_error("read the index"))?;
                differing(&repo, &mut index, root, None)?
            }
        };
        let differed = paths
            .into_iter()
            .map(|path| {
                let content = Content::of(&root.join(OsStr::from_bytes(&path)));
                (path, content)
            })
            .collect();
        Ok(AsFound { held, differed })
    }

    /// Whether phasegate read the index itself before the checks: then it
    /// was not split, and a split index after them is the checks' doing.
    pub fn read_the_index(&self) -> bool {
        self.held.is_some()
    }

    /// The tracked files of `root` the checks changed: those that differed
    /// from the index before and were written since (a byte, the mode, or
    /// removed), those that did not and do now, compared through the
    /// repository's filters, and the paths they staged or unstaged.
    /// With them, the index as it was when the checks changed what it
    /// stages.
    pub fn changed(self, root: &Path, threads: usize) -> Result<Changed, ProtectError> {
        let AsFound { held, differed } = self;
        let mut changed: Vec<Vec<u8>> = differed
            .iter()
            .filter(|(path, was)| {
                Content::rewritten(&root.join(OsStr::from_bytes(path)), was.as_ref())
            })
            .map(|(path, _)| path.clone())
            .collect();
        let (restaged, index_before) = restaged_since(held.as_ref())?;
        changed.extend(restaged);
        let known = |path: &[u8]| differed.contains_key(path);
        changed.extend(
            changed_since(root, threads, held, known)?
                .into_iter()
                .filter(|path| !known(path)),
        );
        Ok(Changed::of(changed, index_before))
    }
}

/// The tracked files of `root` whose work-tree state differs from the
/// index, compared through the repository's filters, leaving out those
/// `unchanged` vouches for. One look at every file's stat data, on
/// `threads` threads, names the files whose content is compared (all of
/// them when the index is one libgit2 must read).
fn changed_since(
    root: &Path,
    threads: usize,
    held: Option<super::Held>,
    unchanged: impl Fn(&[u8]) -> bool,
) -> Result<Vec<Vec<u8>>, ProtectError> {
    // The repository and index the selection read, when it hands them on:
    // nothing of phasegate's changed them since.
    let (repo, own) = match held.and_then(super::Held::into_parts) {
        Some((index, repo)) => (repo, Some(index)),
        None => {
            let repo = open(root)?;
            let own = super::read_own_index(&repo).ok().flatten();
            (repo, own)
        }
    };
    let only = own.as_ref().map(|own| {
        stat_candidates(&repo, root, own, threads)
            .into_iter()
            .filter(|path| !unchanged(path))
            .collect::<Vec<_>>()
    });
    if only.as_ref().is_some_and(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let mut index = repo.index().map_err(git_error("read the index"))?;
    differing(&repo, &mut index, root, only.as_deref())
}

/// Of `only` (every tracked file when `None`), those whose state in the
/// work tree of `repo` (at `work_tree`) differs from `index`, compared
/// through the repository's filters.
fn differing(
    repo: &Repository,
    index: &mut git2::Index,
    work_tree: &Path,
    only: Option<&[Vec<u8>]>,
) -> Result<Vec<Vec<u8>>, ProtectError> {
    let diff = unstaged_diff(repo, index, only)?;
    let same = unchanged_through_filters(repo, index, work_tree, &diff)?;
    Ok(diff
        .deltas()
        .filter_map(|delta| delta.new_file().path_bytes())
        .filter(|path| !same.contains(*path))
        .map(<[u8]>::to_vec)
        .collect())
}

/// The files of the temporary checkout in `dir` that no longer hold what
/// was written there: their stat data changed, and their content, compared
/// through the repository's filters, is not what `written` came from.
pub fn changed_in_checkout(
    root: &Path,
    dir: &Path,
    written: &super::Written,
) -> Result<Vec<String>, ProtectError> {
    let candidates: Vec<Vec<u8>> = written
        .files
        .iter()
        .filter(|(path, stat)| FileStat::of(&dir.join(OsStr::from_bytes(path))) != *stat)
        .map(|(path, _)| path.clone())
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let repo = open(root)?;
    repo.set_workdir(dir, false)
        .map_err(git_error("compare the checkout's files"))?;
    let mut index = match written.commit {
        Some(commit) => super::select::index_of(&repo, commit)
            .map_err(git_error("read the files of the commit checked out"))?,
        None => repo.index().map_err(git_error("read the index"))?,
    };
    Ok(differing(&repo, &mut index, dir, Some(&candidates))?
        .into_iter()
        .map(|path| String::from_utf8_lossy(&path).into_owned())
        .collect())
}

/// Moves the work-tree state of `paths` (files or links) under `keep`, at
/// the same relative paths; the paths kept (an absent file has nothing to
/// keep). Moved, not copied: each is written over by its saved copy next,
/// and a copy would take the very space held for that write-back (a check
/// that filled the disk would leave the copy, or the write-back after it,
/// cut short). Copied only where a move cannot go (`keep` on another file
/// system, a directory made read-only).
fn keep_versions<'p>(
    root: &Path,
    paths: impl IntoIterator<Item = &'p [u8]>,
    keep: &Path,
    sharing: Sharing,
    kept: &mut Vec<String>,
) -> Result<(), ProtectError> {
    for path in paths {
        let rel = Path::new(OsStr::from_bytes(path));
        let source = root.join(rel);
        let target = keep.join(rel);
        // Beyond a link or file where a directory was, nothing is the
        // path's (it is what stands there that is kept, by the restore).
        if no_parent_in_the_way(root, path).is_err() {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&source) else {
            continue;
        };
        if !meta.is_file() && !meta.file_type().is_symlink() {
            continue;
        }
        if let Some(parent) = target.parent() {
            // What the checks wrote may be as private as the user's work.
            sharing
                .create_private_dirs(parent)
                .map_err(io_error("create", parent))?;
        }
        // Where it cannot move (another file system, a directory made
        // read-only), it is copied.
        if fs::rename(&source, &target).is_err() {
            if meta.file_type().is_symlink() {
                let link = fs::read_link(&source).map_err(io_error("read the link", &source))?;
                std::os::unix::fs::symlink(&link, &target).map_err(io_error("keep", &target))?;
            } else if let Err(e) = fs::copy(&source, &target) {
                // A copy cut short is no one's version, and holds space
                // the write-back may need.
                let _ = fs::remove_file(&target);
                return Err(io_error("keep", &target)(e));
            }
        }
        kept.push(String::from_utf8_lossy(path).into_owned());
    }
    Ok(())
}

/// A saved copy, to be read from its start: its range of the saved file,
/// or the whole file (journals of earlier versions kept one per copy).
fn open_copy(saved: &Path, range: Option<(u64, u64)>) -> Result<io::Take<fs::File>, ProtectError> {
    let file = fs::File::open(saved).map_err(io_error("read the saved copy", saved))?;
    copy_in(file, saved, range)
}

/// A saved copy in `file` (the saved file at `saved`), to be read from
/// its start.
fn copy_in(
    mut file: fs::File,
    saved: &Path,
    range: Option<(u64, u64)>,
) -> Result<io::Take<fs::File>, ProtectError> {
    let what = "read the saved copy";
    let (offset, len) = match range {
        Some(range) => range,
        None => (0, file.metadata().map_err(io_error(what, saved))?.len()),
    };
    file.seek(io::SeekFrom::Start(offset))
        .map_err(io_error(what, saved))?;
    Ok(file.take(len))
}

/// Of `path`'s directories, the deepest that exists in `root` (`""` for
/// the root itself).
fn deepest_existing_dir(root: &Path, path: &[u8]) -> Vec<u8> {
    let mut dir = path;
    while let Some(slash) = memchr::memrchr(b'/', dir) {
        dir = &dir[..slash];
        if root.join(OsStr::from_bytes(dir)).is_dir() {
            return dir.to_vec();
        }
    }
    Vec::new()
}

/// Removes the directories of `path` below `existing` that are empty: the
/// ones checking the file out made.
fn remove_made_dirs(root: &Path, path: &[u8], existing: &[u8]) {
    let mut dir = path;
    while let Some(slash) = memchr::memrchr(b'/', dir) {
        dir = &dir[..slash];
        if dir.len() <= existing.len() {
            return;
        }
        // Only an empty directory goes; anything in it stops the climb.
        if fs::remove_dir(root.join(OsStr::from_bytes(dir))).is_err() {
            return;
        }
    }
}

/// Writes every saved file back, byte for byte, with its mode (and the
/// time of the write); a file that was deleted in the work tree is deleted
/// again, with the directories checking it out made. Safe to repeat.
///
/// Whatever stands in a file's place is replaced, never opened: a named
/// pipe a check left would make the write wait forever. A directory there
/// (a check's output, say) is moved under `keep`, at the file's path, and
/// so is a file or link standing in place of one of the file's directories;
/// the paths so moved. Without `keep`, or when it cannot move, the error
/// says what to move. The directories made under `keep` follow `sharing`,
/// as every other place that may hold the user's work.
fn restore_entries(
    root: &Path,
    dir: &Path,
    pack: Option<&fs::File>,
    entries: &[Entry],
    keep: Option<&Path>,
    sharing: Sharing,
    pause: Pause<'_>,
) -> Result<Vec<String>, ProtectError> {
    let mut moved = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        // A check put a link (or a file) where a directory was: nothing is
        // written through it. It goes where a directory in a file's place
        // goes; if it cannot, the copies wait in the journal.
        while let Err(error) = no_parent_in_the_way(root, &entry.path) {
            moved.push(move_parent_aside(root, keep, sharing, error)?);
        }
        let target = root.join(entry.rel());
        if fs::symlink_metadata(&target).is_ok_and(|meta| meta.is_dir()) {
            move_directory_aside(&target, keep.map(|keep| keep.join(entry.rel())), sharing)?;
            moved.push(entry.shown());
        }
        match &entry.saved {
            None => {
                match fs::remove_file(&target) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(ProtectError::Io {
                            what: "delete",
                            path: target,
                            source: e,
                        })
                    }
                }
                if let Some(existing) = &entry.existing_dir {
                    remove_made_dirs(root, &entry.path, existing);
                }
            }
            Some(saved) => {
                let saved = dir.join(saved);
                let mut copy = match pack {
                    Some(pack) => pack
                        .try_clone()
                        .map_err(io_error("read the saved copy", &saved))
                        .and_then(|file| copy_in(file, &saved, entry.range))?,
                    None => open_copy(&saved, entry.range)?,
                };
                let len = copy.limit();
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).map_err(io_error("create", parent))?;
                }
                if let Ok(meta) = fs::symlink_metadata(&target) {
                    // A link, or a named pipe, socket or device: replaced.
                    if !meta.is_file() || entry.mode == MODE_LINK {
                        fs::remove_file(&target).map_err(io_error("replace", &target))?;
                    }
                }
                if entry.mode == MODE_LINK {
                    // Bytes, not text: a link's target need not be UTF-8.
                    let mut bytes = Vec::new();
                    copy.read_to_end(&mut bytes)
                        .map_err(io_error("read the saved copy", &saved))?;
                    let link = PathBuf::from(std::ffi::OsString::from_vec(bytes));
                    std::os::unix::fs::symlink(&link, &target)
                        .map_err(io_error("restore the link", &target))?;
                } else {
                    let mut file = match create_regular(&target) {
                        // A read-only file (given its mode back by a restore
                        // that was cut short, or made so by a check) is
                        // replaced instead: only its directory need allow it.
                        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                            fs::remove_file(&target).and_then(|()| create_regular(&target))
                        }
                        opened => opened,
                    }
                    .map_err(io_error("restore", &target))?;
                    // Streamed, as it was saved. Cut short, the journal stays
                    // and the next run writes the file again. What was
                    // written goes: it is neither the staged content nor
                    // the user's, and that next run would take it for a
                    // change someone made after a kill (and keep it, and say
                    // so) where it is a write the disk filling up stopped.
                    let written = match io::copy(&mut copy, &mut file) {
                        Ok(written) => written,
                        Err(e) => {
                            drop(file);
                            let _ = fs::remove_file(&target);
                            return Err(io_error("restore", &target)(e));
                        }
                    };
                    if written != len {
                        return Err(ProtectError::Io {
                            what: "restore",
                            path: target,
                            source: io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                format!("the saved copy `{}` is cut short", saved.display()),
                            ),
                        });
                    }
                    let mode = entry.permissions.unwrap_or(if entry.mode == MODE_EXEC {
                        0o755
                    } else {
                        0o644
                    });
                    file.set_permissions(fs::Permissions::from_mode(mode))
                        .map_err(io_error("set the mode of", &target))?;
                    // As far as this user may set them (a `security.`
                    // label may need privileges): the content is what
                    // must come back, and it has.
                    for (name, value) in &entry.xattrs {
                        let _ = rustix::fs::fsetxattr(
                            &file,
                            OsStr::from_bytes(name),
                            value,
                            rustix::fs::XattrFlags::empty(),
                        );
                    }
                    // The file gets the time of this write, never its old
                    // one: the checks built from its staged content since,
                    // and a build that found it older than their output
                    // (make, cargo) would keep that output for the user's
                    // content. And a check that refreshed the index
                    // meanwhile (`git status`) recorded the stat data of
                    // the staged content, which the old time could match:
                    // git would no longer see the change. A file written
                    // later differs from them, or is racily clean (the
                    // index was written in its second), which git reads
                    // again. The precise clock, not the coarser one the
                    // file system stamps writes with, which can give this
                    // write the very time of a check's last output. Only
                    // the file's owner may set a time: for anyone else the
                    // write's own stamp stays, which is late enough.
                    let _ = file.set_modified(std::time::SystemTime::now());
                }
            }
        }
        if n == 0 {
            pause("restoring");
        }
    }
    Ok(moved)
}

/// The extended attributes of `file` (POSIX ACLs are some), names and
/// values; none where the file system keeps none or cannot list them. One
/// call for a file that has none, the common case.
fn xattrs_of(file: &fs::File) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut list = match rustix::fs::flistxattr_query(file) {
        Ok(0) | Err(_) => return Vec::new(),
        Ok(len) => vec![0u8; len],
    };
    let Ok(len) = rustix::fs::flistxattr(file, &mut list[..]) else {
        return Vec::new();
    };
    list.truncate(len);
    list.split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .filter_map(|name| {
            let name_os = OsStr::from_bytes(name);
            let mut value = vec![0u8; rustix::fs::fgetxattr_query(file, name_os).ok()?];
            let n = rustix::fs::fgetxattr(file, name_os, &mut value[..]).ok()?;
            value.truncate(n);
            Some((name.to_vec(), value))
        })
        .collect()
}

/// Opens `path` to be written from its start, created if absent, never
/// waiting and never through a link: something other than a regular file
/// that took its place since it was looked at is an error.
fn create_regular(path: &Path) -> io::Result<fs::File> {
    let file = regular_only(fs::OpenOptions::new().write(true).create(true), path)?;
    // Truncated only once it is known to be a regular file.
    file.set_len(0)?;
    Ok(file)
}

/// Moves the file or link that stands in place of a directory (`error`
/// says which) under `keep`, at its own path; the path moved, or `error`
/// when it cannot move (never over something under `keep`).
fn move_parent_aside(
    root: &Path,
    keep: Option<&Path>,
    sharing: Sharing,
    error: ProtectError,
) -> Result<String, ProtectError> {
    let ProtectError::ParentInTheWay { parent, .. } = &error else {
        return Err(error);
    };
    let (Some(keep), Ok(rel)) = (keep, parent.strip_prefix(root)) else {
        return Err(error);
    };
    let to = keep.join(rel);
    let moved = to
        .parent()
        .is_some_and(|dir| sharing.create_private_dirs(dir).is_ok())
        && fs::symlink_metadata(&to).is_err()
        && fs::rename(parent, &to).is_ok();
    if moved {
        Ok(rel.to_string_lossy().into_owned())
    } else {
        Err(error)
    }
}

/// Moves the directory at `path`, where a file is to be restored, to `to`
/// (never over something there).
fn move_directory_aside(
    path: &Path,
    to: Option<PathBuf>,
    sharing: Sharing,
) -> Result<(), ProtectError> {
    let left = |kept: Option<PathBuf>, source: Option<io::Error>| ProtectError::DirectoryLeft {
        path: path.to_path_buf(),
        kept,
        source,
    };
    let Some(to) = to else {
        return Err(left(None, None));
    };
    if let Some(parent) = to.parent() {
        // What stood in a file's place may be as private as the user's work.
        sharing
            .create_private_dirs(parent)
            .map_err(|e| left(Some(to.clone()), Some(e)))?;
    }
    if fs::symlink_metadata(&to).is_ok() {
        return Err(left(Some(to), None));
    }
    fs::rename(path, &to).map_err(|e| left(Some(to.clone()), Some(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_counts_as_rewritten_when_its_bytes_mode_or_presence_changed_not_its_times() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("a.txt");
        fs::write(&path, "mine\n").unwrap();
        let was = Content::of(&path);
        assert!(!Content::rewritten(&path, was.as_ref()));
        // The same bytes in a new file (a formatter with nothing to do).
        fs::write(temp.path().join("new"), "mine\n").unwrap();
        fs::rename(temp.path().join("new"), &path).unwrap();
        assert!(!Content::rewritten(&path, was.as_ref()));
        fs::write(&path, "mine, formatted\n").unwrap();
        assert!(Content::rewritten(&path, was.as_ref()));
        fs::write(&path, "mine\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(Content::rewritten(&path, was.as_ref()));
        fs::remove_file(&path).unwrap();
        assert!(Content::rewritten(&path, was.as_ref()));
        assert!(!Content::rewritten(&path, None));
    }

    /// A work tree and its state directory, in a temporary directory.
    fn dirs() -> (tempfile::TempDir, PathBuf, StateDir) {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("work");
        let state = crate::state::umask_dir(&temp.path().join("state"));
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(protect_root(&state)).unwrap();
        (temp, root, state)
    }

    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }

    /// `f`'s answer, or a failure (not a hang) when it takes a minute.
    fn within_a_minute<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || send.send(f()));
        receive
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{what} hangs"))
    }

    fn entry(path: &str, range: (u64, u64)) -> Entry {
        Entry {
            path: path.as_bytes().to_vec(),
            saved: Some(SAVED.to_string()),
            range: Some(range),
            mode: MODE_REGULAR,
            permissions: Some(0o644),
            intent_to_add: false,
            existing_dir: None,
            xattrs: Vec::new(),
            copied: None,
        }
    }

    #[test]
    fn saved_copies_without_a_journal_are_moved_aside_with_a_note_never_deleted() {
        let (_temp, root, state) = dirs();
        let dir = protect_root(&state).join("20260101T000000Z-1");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SAVED), "MY UNSTAGED WORK\n").unwrap();

        let error = recover(&root, &state, &|_| {}).unwrap_err();
        let kept = state.join("kept/20260101T000000Z-1-not-restored");
        let message = error.to_string();
        assert!(
            matches!(error, ProtectError::NotRestorable { .. }),
            "{message}"
        );
        assert!(message.contains("is missing"), "{message}");
        assert!(message.contains(&kept.display().to_string()), "{message}");
        assert_eq!(
            fs::read_to_string(kept.join(SAVED)).unwrap(),
            "MY UNSTAGED WORK\n"
        );
        assert!(fs::read_to_string(kept.join(NOTE))
            .unwrap()
            .contains("tail -c"));
        assert!(!dir.exists());
        // Out of the way: the next run goes on, and the copies stay.
        assert!(recover(&root, &state, &|_| {}).unwrap().is_empty());
        assert!(kept.join(SAVED).exists());
    }

    #[test]
    fn a_damaged_journal_is_moved_aside_with_its_copies_and_said_what_to_do() {
        for damage in [
            &b"{\"state\": \"saved\", \"pid\": 1, \"entries\": [{\"pa"[..],
            b"",
            b"\xff garbage",
        ] {
            let (_temp, root, state) = dirs();
            let dir = protect_root(&state).join("20260101T000000Z-2");
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(SAVED), "work\n").unwrap();
            fs::write(dir.join("journal.json"), damage).unwrap();

            let message = recover(&root, &state, &|_| {}).unwrap_err().to_string();
            let kept = state.join("kept/20260101T000000Z-2-not-restored");
            assert!(message.contains("cannot be read"), "{message}");
            assert!(message.contains("Nothing was deleted"), "{message}");
            assert!(message.contains(&kept.display().to_string()), "{message}");
            assert_eq!(fs::read(kept.join("journal.json")).unwrap(), damage);
            assert_eq!(fs::read_to_string(kept.join(SAVED)).unwrap(), "work\n");
            assert!(recover(&root, &state, &|_| {}).unwrap().is_empty());
        }
    }

    #[test]
    fn a_journal_that_is_not_a_file_is_damaged_and_never_opened() {
        let (_temp, root, state) = dirs();
        let dir = protect_root(&state).join("20260101T000000Z-3");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SAVED), "work\n").unwrap();
        mkfifo(&dir.join("journal.json"));
        let message = within_a_minute("reading a journal that is a named pipe", move || {
            recover(&root, &state, &|_| {}).unwrap_err().to_string()
        });
        assert!(message.contains("is not a file"), "{message}");
    }

    #[test]
    fn a_protection_killed_before_its_first_journal_is_removed() {
        let (_temp, root, state) = dirs();
        let dir = protect_root(&state).join("20260101T000000Z-4");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(".journal.json.tmp-12"), "{").unwrap();
        assert!(recover(&root, &state, &|_| {}).unwrap().is_empty());
        assert!(!dir.exists());
        assert!(!state.join("kept").exists());
    }

    #[test]
    fn a_named_pipe_a_check_left_is_replaced_by_the_saved_file_without_waiting() {
        let (_temp, root, state) = dirs();
        let dir = protect_root(&state).join("20260101T000000Z-5");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SAVED), "user work\n").unwrap();
        mkfifo(&root.join("a.txt"));
        let target = root.join("a.txt");
        let moved = within_a_minute("restoring over a named pipe", move || {
            restore_entries(
                &root,
                &dir,
                None,
                &[entry("a.txt", (0, 10))],
                None,
                Sharing::Umask,
                &|_| {},
            )
            .unwrap()
        });
        assert!(moved.is_empty());
        assert_eq!(fs::read_to_string(target).unwrap(), "user work\n");
    }

    #[test]
    fn a_directory_a_check_left_where_a_file_goes_is_moved_aside() {
        let (_temp, root, state) = dirs();
        let dir = protect_root(&state).join("20260101T000000Z-6");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(SAVED), "user work\n").unwrap();
        fs::create_dir_all(root.join("a.txt")).unwrap();
        fs::write(root.join("a.txt/gen"), "generated\n").unwrap();
        let keep = state.join("dropped");
        let entries = [entry("a.txt", (0, 10))];

        // Nowhere to move it: the error says to move it.
        let message = restore_entries(&root, &dir, None, &entries, None, Sharing::Umask, &|_| {})
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("Move or remove the directory"),
            "{message}"
        );
        assert!(message.contains("phasegate restore"), "{message}");

        let moved = restore_entries(
            &root,
            &dir,
            None,
            &entries,
            Some(&keep),
            Sharing::Umask,
            &|_| {},
        )
        .unwrap();
        assert_eq!(moved, ["a.txt"]);
        assert_eq!(
            fs::read_to_string(root.join("a.txt")).unwrap(),
            "user work\n"
        );
        assert_eq!(
            fs::read_to_string(keep.join("a.txt/gen")).unwrap(),
            "generated\n"
        );
    }

    #[test]
    fn a_named_pipe_at_a_tracked_path_is_a_clear_error_when_saving_not_a_hang() {
        let (_temp, root, state) = dirs();
        let dir = protect_root(&state).join("20260101T000000Z-7");
        fs::create_dir_all(&dir).unwrap();
        mkfifo(&root.join("a.txt"));
        let mut unsaved = entry("a.txt", (0, 0));
        unsaved.saved = None;
        unsaved.range = None;
        let message = within_a_minute("saving a named pipe", move || {
            save(&root, &dir, vec![unsaved], Sharing::Umask, &|_| {})
                .unwrap_err()
                .to_string()
        });
        assert!(
            message.contains("a named pipe (FIFO) stands in its place"),
            "{message}"
        );
        assert!(message.contains("Move it away"), "{message}");
    }

    #[test]
    fn a_file_changed_after_its_copy_was_made_is_never_written_over() {
        // An editor saves `z.txt` while the copies are being made: it
        // keeps what was saved; `a.txt`, already put at its staged content,
        // comes back to its unstaged content.
        let (_temp, root, state) = dirs();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &root)
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["config", "user.email", "t@example.com"]);
        git(&["config", "user.name", "t"]);
        for name in ["a.txt", "z.txt"] {
            fs::write(root.join(name), "committed\n").unwrap();
        }
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        for name in ["a.txt", "z.txt"] {
            fs::write(root.join(name), "staged\n").unwrap();
        }
        git(&["add", "."]);
        for name in ["a.txt", "z.txt"] {
            fs::write(root.join(name), "unstaged\n").unwrap();
        }
        let z = root.join("z.txt");
        let pause = |step: &str| {
            if step == "saved" {
                fs::write(&z, "saved by an editor meanwhile\n").unwrap();
            }
        };
        let Err(error) = protect(&root, &state, "20260101T000000Z-9", None, 1, &pause) else {
            panic!("the protection went on over a changed file")
        };
        assert!(
            matches!(&error, ProtectError::ChangedWhileSettingAside { path } if path == &z),
            "{error}"
        );
        assert_eq!(
            fs::read_to_string(&z).unwrap(),
            "saved by an editor meanwhile\n"
        );
        assert_eq!(
            fs::read_to_string(root.join("a.txt")).unwrap(),
            "unstaged\n"
        );
        assert!(!has_journals(&state), "nothing is left to restore");
    }
}
