//! Locks and atomic writes for the files under `.git/phasegate/`.
//!
//! A lock is a file held with flock(2): the kernel lets go of it when its
//! holder exits, however that happens (a kill included), so a lock is never
//! stale and no process id has to be trusted (a pid can be reused). The
//! file names its holder's pid for the messages, and is emptied when the
//! lock is let go. It stays: creating and removing it on every run would
//! cost two file creations a run, and the file system's inode allocation
//! slows down as removed files pile up.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a waiting run looks at the state lock again.
const POLL: Duration = Duration::from_millis(25);

/// A held lock file; let go of on drop.
#[derive(Debug)]
pub struct FileLock {
    /// Held open: closing it lets go of the lock.
    file: fs::File,
}

/// Who holds a lock: "another phasegate run (pid N)", the pid when the
/// holder has written it yet.
#[derive(Debug)]
pub struct Holder(pub Option<u32>);

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(pid) => write!(f, "another phasegate run (pid {pid})"),
            None => write!(f, "another phasegate run"),
        }
    }
}

impl FileLock {
    /// One attempt at the lock `path`, without waiting: the lock, or who
    /// holds it. `which` names the lock for the hidden test switch.
    pub fn try_acquire(
        path: &Path,
        sharing: super::Sharing,
        which: Lock,
    ) -> io::Result<Result<FileLock, Holder>> {
        loop {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            // The caller names the file.
            if !flock(
                &file,
                which,
                rustix::fs::FlockOperation::NonBlockingLockExclusive,
            )? {
                let pid = fs::read_to_string(path)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
                return Ok(Err(Holder(pid)));
            }
            // A lock taken on a file someone removed since (by hand, or an
            // older phasegate as it let go) guards nothing. Only the file
            // that is at `path` now counts.
            let locked = file.metadata()?;
            match fs::symlink_metadata(path) {
                Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            // Every run of every member of a group that shares the
            // repository takes this lock: it is theirs to open for writing.
            sharing.share_file(&file)?;
            // The lock is the flock; the pid only names the holder in
            // others' messages. On a full file system (where `phasegate
            // restore` must still get the changes back) the write fails,
            // and the lock is held all the same, nameless.
            // A pid cut short would name someone else: none, then.
            let named = file
                .set_len(0)
                .and_then(|()| (&file).write_all(std::process::id().to_string().as_bytes()));
            if named.is_err() {
                let _ = file.set_len(0);
            }
            return Ok(Ok(FileLock { file }));
        }
    }
}

/// phasegate's locks, each a flock(2) on a file or directory of its own:
/// what the hidden test switch names (`PHASEGATE_TEST_LOCK_ERROR=ENOLCK:hooks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// `state.lock`: `state.json` and the intervention queue.
    State,
    /// `protect/lock`: unstaged changes set aside.
    Protect,
    /// The hooks directory, while `install` or `uninstall` moves hooks.
    Hooks,
    /// A run's directory, while the run lasts (pruning leaves it alone).
    Run,
    /// `emergency.log`, while it is rotated and appended to.
    Emergency,
}

impl Lock {
    /// The lock the test switch calls `name`.
    pub fn named(name: &str) -> Option<Lock> {
        match name.trim() {
            "state" => Some(Lock::State),
            "protect" => Some(Lock::Protect),
            "hooks" => Some(Lock::Hooks),
            "run" => Some(Lock::Run),
            "emergency" => Some(Lock::Emergency),
            _ => None,
        }
    }
}

/// The error the test switch `PHASEGATE_TEST_LOCK_ERROR` makes flock(2)
/// fail with (see `use_lock_error`), and on which locks.
static INJECTED_ERROR: std::sync::OnceLock<(rustix::io::Errno, Vec<Lock>)> =
    std::sync::OnceLock::new();

/// Makes every attempt at the locks `names` fail with the error `raw` (an
/// errno), as flock(2) would on a file system without locks: set once at
/// start from `Context::test_lock_error`, for tests of what follows. No
/// names: the state and protection locks, which every run takes. A name
/// that is no lock is left out; `None` changes nothing.
pub fn use_lock_error(switch: Option<(i32, Vec<String>)>) {
    if let Some((raw, names)) = switch {
        let locks = if names.is_empty() {
            vec![Lock::State, Lock::Protect]
        } else {
            names.iter().filter_map(|name| Lock::named(name)).collect()
        };
        let _ = INJECTED_ERROR.set((rustix::io::Errno::from_raw_os_error(raw), locks));
    }
}

/// The one flock(2) call of phasegate, which every lock it takes goes
/// through (`which`), with `operation`: `Ok(true)` once taken,
/// `Ok(false)` when another holds it (only without waiting). An error
/// says what the file system did and what to do, for the caller to add
/// the file's name: a file system without locks (`ENOLCK`, a network file
/// system mounted `nolock`) is told apart from one whose call failed
/// (`EIO`). The file is opened before, as always, so an injected error is
/// met where the real one would be.
pub fn flock(
    file: &impl std::os::fd::AsFd,
    which: Lock,
    operation: rustix::fs::FlockOperation,
) -> io::Result<bool> {
    use rustix::io::Errno;
    let injected = INJECTED_ERROR
        .get()
        .filter(|(_, locks)| locks.contains(&which))
        .map(|(errno, _)| *errno);
    let result = loop {
        match injected.map_or_else(|| rustix::fs::flock(file, operation), Err) {
            // A signal while waiting: the wait goes on (an injected EINTR
            // is said, as it would repeat for ever).
            Err(Errno::INTR) if injected.is_none() => {}
            result => break result,
        }
    };
    match result {
        Ok(()) => Ok(true),
        Err(Errno::WOULDBLOCK) => Ok(false),
        Err(e @ (Errno::NOLCK | Errno::OPNOTSUPP)) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "its file system does not support flock(2) locks ({e}); keep the repository on a local file system, or mount it with locking"
            ),
        )),
        // EIO, ENOMEM, ...: the file system failed the call; the error
        // alone would not say which call, nor what to do.
        Err(e) => Err(io::Error::new(
            io::Error::from(e).kind(),
            format!(
                "flock(2) on it failed ({e}); look at the state of its file system (the kernel's log, `dmesg`), then run phasegate again"
            ),
        )),
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Emptied while still held, so no later message names this pid;
        // the lock goes with the handle, after.
        let _ = self.file.set_len(0);
    }
}

/// Held while the state is read and written; one phasegate at a time
/// reads and writes `state.json` and the intervention queue.
#[derive(Debug)]
pub struct StateLock {
    _lock: FileLock,
}

impl StateLock {
    /// Takes `<state_dir>/state.lock`, waiting up to `wait` for the run
    /// that holds it to let go.
    pub fn acquire(state_dir: &super::StateDir, wait: Duration) -> io::Result<StateLock> {
        StateLock::acquire_within(state_dir, Instant::now(), wait)
    }

    /// Takes `<state_dir>/state.lock`, waiting until `wait` after `since`
    /// at most: steps of one run that each need the lock (pruning, then
    /// recording) share one wait instead of adding theirs up.
    pub fn acquire_within(
        state_dir: &super::StateDir,
        since: Instant,
        wait: Duration,
    ) -> io::Result<StateLock> {
        let path = state_dir.join("state.lock");
        state_dir
            .sharing
            .create_dirs(state_dir)
            .map_err(|e| super::io_error(state_dir, state_dir, "create", &e))?;
        let mut looked = false;
        loop {
            match FileLock::try_acquire(&path, state_dir.sharing, Lock::State)
                .map_err(|e| super::io_error(state_dir, &path, "lock", &e))?
            {
                Ok(lock) => return Ok(StateLock { _lock: lock }),
                // Held that long, the lock is looked at once: a holder that
                // is no phasegate run (a check's `flock` on it, a script)
                // writes no state and may never let go, so waiting the
                // whole time for it would only delay the same answer.
                Err(holder) if !looked && since.elapsed() >= wait.min(FOREIGN_WAIT) => {
                    looked = true;
                    let others = foreign_holders(&path, holder.0);
                    if !others.is_empty() {
                        return Err(held_by_others(&path, &others, since.elapsed()));
                    }
                }
                Err(holder) if since.elapsed() >= wait => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        format!(
                            "{holder} has held `{}` for {}s; wait for it to finish",
                            path.display(),
                            wait.as_secs()
                        ),
                    ));
                }
                Err(_) => std::thread::sleep(POLL),
            }
        }
    }
}

/// How long a run waits for a holder of the state lock before it looks at
/// who that is: another phasegate run is waited for, anything else named.
/// The hooks directory's lock gives up after as long.
const FOREIGN_WAIT: Duration = Duration::from_secs(5);

/// The processes other than phasegate runs that hold a flock(2) lock on
/// `path`, with their command lines, as the kernel lists them in
/// `/proc/locks` (`fuser` finds them the same way); `named` is the pid the
/// lock file names, a phasegate run's. Empty when `/proc/locks` cannot
/// tell: the run then waits as for another phasegate run.
fn foreign_holders(path: &Path, named: Option<u32>) -> Vec<(u32, String)> {
    let (Ok(meta), Ok(locks)) = (fs::metadata(path), fs::read_to_string("/proc/locks")) else {
        return Vec::new();
    };
    let own_program = fs::read_link("/proc/self/exe").ok();
    // `/proc/locks` numbers the device as the kernel does inside, which
    // is not always what stat(2) says (overlayfs): a process is taken for
    // a holder when the inode matches and it has the file itself open.
    let has_open = |pid: u32| {
        crate::runner::holds_open(pid, |fd| {
            fs::metadata(fd).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        })
    };
    let mut found: Vec<(u32, String)> = locks
        .lines()
        .filter_map(|line| lock_holder(line, meta.ino()))
        .filter(|pid| Some(*pid) != named && *pid != std::process::id())
        // A phasegate that has not written its pid yet, or could not.
        .filter(|pid| {
            own_program.is_none() || fs::read_link(format!("/proc/{pid}/exe")).ok() != own_program
        })
        .filter(|pid| has_open(*pid))
        .map(|pid| (pid, crate::runner::command_line(pid)))
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// The pid of a line of `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 4242
/// fe:00:1035 0 EOF`) that holds a flock(2) lock on the inode `ino` of
/// some device; a waiter's line (`1: -> FLOCK ...`) holds nothing.
fn lock_holder(line: &str, ino: u64) -> Option<u32> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        [_, "FLOCK", _, _, pid, at, ..]
            if at.rsplit(':').next().and_then(|n| n.parse::<u64>().ok()) == Some(ino) =>
        {
            pid.parse().ok()
        }
        _ => None,
    }
}

/// The error for a state lock that `holders`, no phasegate run, kept for
/// `waited`: who they are, and what to do.
fn held_by_others(path: &Path, holders: &[(u32, String)], waited: Duration) -> io::Error {
    let named: Vec<String> = holders
        .iter()
        .map(|(pid, command)| crate::runner::process_named(*pid, command))
        .collect();
    let pids: Vec<String> = holders.iter().map(|(pid, _)| pid.to_string()).collect();
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!(
            "{} holds `{}` (flock(2)) and is no phasegate run; phasegate waited {}s for it: phasegate keeps this lock while it writes its state, and a check or script must not take it. End it (`kill {}`), then run phasegate again",
            named.join(", "),
            path.display(),
            waited.as_secs(),
            pids.join(" ")
        ),
    )
}

/// How old a temporary file of `write_atomic` may be before it is stale
/// whoever wrote it.
const STALE_TEMP: Duration = Duration::from_secs(10 * 60);

/// Removes the temporary files `write_atomic` left for the files `names`
/// of `dir` when killed between writing and renaming
/// (`.state.json.tmp-<pid>`): those whose writer is gone, or that are
/// older than ten minutes (a pid can be reused). A file of `names` that is
/// a symbolic link was written through, its temporary file beside the
/// file the link leads to (`write_target`): those are looked for there,
/// named after that file, and no other file of that directory is
/// touched. Called under the state lock, which every writer of those
/// files holds, so no write in progress is touched. Returns how many
/// went; an error names the directory it was met in.
pub fn remove_stale_temps(dir: &Path, names: &[&str]) -> io::Result<usize> {
    let in_dir =
        |at: &Path, e: io::Error| io::Error::new(e.kind(), format!("in `{}`: {e}", at.display()));
    let mut removed = remove_stale_temps_in(dir, names).map_err(|e| in_dir(dir, e))?;
    for name in names {
        let path = dir.join(name);
        if !fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        // A link into a directory that does not exist has nothing beside
        // its target: writing through it says so.
        let Ok(target) = write_target(&path) else {
            continue;
        };
        let (Some(beside), Some(target_name)) =
            (target.parent(), target.file_name().and_then(|n| n.to_str()))
        else {
            continue;
        };
        if beside == dir && names.contains(&target_name) {
            continue;
        }
        removed += remove_stale_temps_in(beside, &[target_name]).map_err(|e| in_dir(beside, e))?;
    }
    Ok(removed)
}

/// `remove_stale_temps` in `dir` alone, for the files `names` of it.
fn remove_stale_temps_in(dir: &Path, names: &[&str]) -> io::Result<usize> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix('.'))
            .and_then(|n| n.rsplit_once(".tmp-"))
            .filter(|(of, _)| names.contains(of))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let meta = entry.metadata()?;
        if !meta.is_file() {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= STALE_TEMP);
        let writer_gone = pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists();
        if old || writer_gone {
            match fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(removed)
}

/// `path`'s directory, and the hidden file beside it that an atomic write
/// goes through: `.state.json<suffix>`.
fn hidden_beside<'p>(path: &'p Path, suffix: &str) -> (&'p Path, PathBuf) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, dir.join(format!(".{name}{suffix}")))
}

/// How many symbolic links a state file may lead through, as the kernel
/// allows a path (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Where a write to the state file `path` goes: `path` itself or, when it
/// is a symbolic link, the file the link leads to, as git's lock files
/// follow a link: a user who keeps `state.json` on another disk keeps it
/// there, and a link to nowhere names the file to make. A link whose
/// directory does not exist is an error that names the link, where it
/// leads and what to do: replacing the link would lose it silently.
pub fn write_target(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::read_link(&at) {
            // A relative target is relative to the link's directory.
            Ok(target) => at = at.parent().unwrap_or(Path::new(".")).join(target),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::InvalidInput | io::ErrorKind::NotFound
                ) =>
            {
                let Some(dir) = at.parent().filter(|_| at != path) else {
                    return Ok(at);
                };
                if fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
                    return Ok(at);
                }
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "`{}` is a symbolic link to `{}`, whose directory `{}` does not exist: create that directory (or mount the disk it is on), or remove the link to keep the file where the link is",
                        path.display(),
                        at.display(),
                        dir.display()
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "`{}` is a symbolic link that leads through more than {MAX_LINKS} links (a loop?): make it lead to a file, or remove it",
        path.display()
    )))
}

/// Writes `bytes` to `path` atomically: a temporary file beside it,
/// flushed to disk, renamed over it, the directory flushed. A reader sees
/// the old file or the new one, never a part; a kill leaves the old one.
/// A symbolic link at `path` stays: the file it leads to is written
/// (`write_target`), the temporary file beside that one.
pub fn write_atomic(path: &Path, bytes: &[u8], sharing: super::Sharing) -> io::Result<()> {
    write_atomic_with(path, bytes, sharing, &|| {})
}

/// `write_atomic`, calling `before_rename` once the new content is on
/// disk and the old file still in place (where a kill is tested).
pub fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    sharing: super::Sharing,
    before_rename: &dyn Fn(),
) -> io::Result<()> {
    let target = write_target(path)?;
    let (dir, temp) = hidden_beside(&target, &format!(".tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        // Its mode is the file's once renamed: set before, so no reader
        // ever sees the file with another.
        sharing.share_file(&file)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        before_rename();
        fs::rename(&temp, &target)?;
        fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Writes `bytes` to `path` atomically without creating or removing a
/// file once the first write is done: the new content goes into a spare
/// file kept beside it (`.state.json.spare`), flushed to disk, and the two
/// names are exchanged (`renameat2` with `RENAME_EXCHANGE`), so the spare
/// holds the old content, to be written over next time. A reader sees the
/// old file or the new one, never a part; a kill leaves the old one.
/// Where the file system cannot exchange names, or `path` is not there
/// yet, the spare is renamed over it. Only for files written under the
/// state lock: two writers would share the spare.
///
/// Creating and removing a file a run costs more than the write itself on
/// a file system without a journal, whose inode allocation slows down
/// while recently removed inodes pile up.
pub fn write_swapping(
    path: &Path,
    bytes: &[u8],
    sharing: super::Sharing,
    before_rename: &dyn Fn(),
) -> io::Result<()> {
    use rustix::fs::{renameat_with, Mode, OFlags, RenameFlags, CWD};
    // Something other than a file in its place (a directory, a link) is
    // never exchanged into the spare's name, where the next write would
    // follow it: a link is written through (`write_target`), with no
    // spare left beside the file it leads to; a directory is not
    // replaced, as by a temporary's rename.
    if fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_file()) {
        return write_atomic_with(path, bytes, sharing, before_rename);
    }
    let (dir, spare) = hidden_beside(path, ".spare");
    let opened = rustix::fs::open(
        &spare,
        OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    );
    let Ok(file) = opened else {
        // A spare that is not a file (a link is refused, not followed).
        let _ = fs::remove_file(&spare);
        return write_atomic_with(path, bytes, sharing, before_rename);
    };
    // Written over, then cut to length: the old content's blocks are
    // reused, not freed and allocated again.
    let mut file = fs::File::from(file);
    sharing.share_file(&file)?;
    file.write_all(bytes)?;
    file.set_len(bytes.len() as u64)?;
    file.sync_all()?;
    drop(file);
    before_rename();
    match renameat_with(CWD, &spare, CWD, path, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        // No file to exchange with yet, or a file system (or kernel) that
        // cannot exchange: the spare takes the name, as a temporary would.
        Err(_) => fs::rename(&spare, path)?,
    }
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_swapping_write_reuses_its_spare_and_never_follows_what_is_not_a_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let spare = dir.path().join(".state.json.spare");
        let read = |p: &Path| fs::read_to_string(p).unwrap();
        write_swapping(&path, b"one", crate::state::Sharing::Umask, &|| {}).unwrap();
        assert_eq!(read(&path), "one");
        assert!(!spare.exists(), "the first write renames its spare");
        write_swapping(&path, b"two", crate::state::Sharing::Umask, &|| {}).unwrap();
        assert_eq!((read(&path), read(&spare)), ("two".into(), "one".into()));
        let mut inodes = std::collections::BTreeSet::new();
        for text in ["three", "four", "five"] {
            write_swapping(&path, text.as_bytes(), crate::state::Sharing::Umask, &|| {}).unwrap();
            assert_eq!(read(&path), text);
            inodes.insert(fs::metadata(&path).unwrap().ino());
            inodes.insert(fs::metadata(&spare).unwrap().ino());
        }
        assert_eq!(inodes.len(), 2, "two files take turns, none is created");

        // A link in the spare's place is removed, never written through.
        let outside = dir.path().join("outside");
        fs::write(&outside, "keep").unwrap();
        fs::remove_file(&spare).unwrap();
        std::os::unix::fs::symlink(&outside, &spare).unwrap();
        write_swapping(&path, b"six", crate::state::Sharing::Umask, &|| {}).unwrap();
        assert_eq!((read(&path), read(&outside)), ("six".into(), "keep".into()));
        assert!(!spare.is_symlink());

        // Neither is a directory in the file's place moved aside, nor a
        // link exchanged into the spare's name: the file it leads to is
        // written, and the link stays.
        let taken = dir.path().join("taken.json");
        fs::create_dir(&taken).unwrap();
        assert!(write_swapping(&taken, b"x", crate::state::Sharing::Umask, &|| {}).is_err());
        assert!(taken.is_dir());
        let linked = dir.path().join("linked.json");
        std::os::unix::fs::symlink(&outside, &linked).unwrap();
        write_swapping(&linked, b"new", crate::state::Sharing::Umask, &|| {}).unwrap();
        assert_eq!(
            (read(&linked), read(&outside)),
            ("new".into(), "new".into())
        );
        assert!(linked.is_symlink() && !dir.path().join(".linked.json.spare").exists());
        assert!(!dir.path().join(".outside.spare").exists());
    }

    #[test]
    fn a_held_lock_names_its_holder_and_no_one_once_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let lock = FileLock::try_acquire(&path, crate::state::Sharing::Umask, Lock::State)
            .unwrap()
            .unwrap();
        let Err(holder) =
            FileLock::try_acquire(&path, crate::state::Sharing::Umask, Lock::State).unwrap()
        else {
            panic!("a held lock was taken twice");
        };
        assert_eq!(holder.0, Some(std::process::id()));
        assert_eq!(
            holder.to_string(),
            format!("another phasegate run (pid {})", std::process::id())
        );
        drop(lock);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        assert!(
            FileLock::try_acquire(&path, crate::state::Sharing::Umask, Lock::State)
                .unwrap()
                .is_ok()
        );
    }

    #[test]
    fn a_lock_file_nobody_holds_is_taken_whatever_pid_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        // A killed holder's file, naming a pid that may well run again.
        std::fs::write(&path, "1").unwrap();
        let _lock = FileLock::try_acquire(&path, crate::state::Sharing::Umask, Lock::State)
            .unwrap()
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            std::process::id().to_string()
        );
    }

    #[test]
    fn only_one_holder_at_a_time_while_holders_come_and_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let inside = AtomicUsize::new(0);
        let entered = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        let lock = loop {
                            if let Ok(lock) = FileLock::try_acquire(
                                &path,
                                crate::state::Sharing::Umask,
                                Lock::State,
                            )
                            .unwrap()
                            {
                                break lock;
                            }
                            std::thread::yield_now();
                        };
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        entered.fetch_add(1, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(lock);
                    }
                });
            }
        });
        assert_eq!(entered.load(Ordering::SeqCst), 800);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }
}
