//! The state lock: one phasegate at a time reads and writes `state.json`
//! and the intervention queue. The lock file names its holder's pid; a
//! lock whose holder is gone (killed mid-write) is taken over.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a waiting run looks at the lock again.
const POLL: Duration = Duration::from_millis(25);

/// Held while the state is read and written; released on drop.
#[derive(Debug)]
pub struct StateLock {
    path: PathBuf,
}

/// Whether a process with this pid runs (a lock's holder).
pub fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

impl StateLock {
    /// Takes `<state_dir>/state.lock`, waiting up to `wait` for a live
    /// holder to let go. A holder that no longer runs is taken over.
    pub fn acquire(state_dir: &Path, wait: Duration) -> io::Result<StateLock> {
        fs::create_dir_all(state_dir)?;
        let path = state_dir.join("state.lock");
        let start = Instant::now();
        loop {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    file.write_all(std::process::id().to_string().as_bytes())?;
                    return Ok(StateLock { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let holder = fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok());
                    match holder {
                        Some(pid) if pid != std::process::id() && process_alive(pid) => {
                            if start.elapsed() >= wait {
                                return Err(io::Error::new(
                                    io::ErrorKind::WouldBlock,
                                    format!(
                                        "another phasegate (pid {pid}) has held `{}` for {}s; wait for it, or remove the file if no phasegate runs",
                                        path.display(),
                                        wait.as_secs()
                                    ),
                                ));
                            }
                            std::thread::sleep(POLL);
                        }
                        // Empty (its holder died before writing) or dead: the
                        // files it guards are whole, since every write is a
                        // rename.
                        Some(_) | None => {
                            if holder.is_none() && start.elapsed() < POLL * 4 {
                                // It may be being written right now.
                                std::thread::sleep(POLL);
                                continue;
                            }
                            let _ = fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for StateLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it,
/// flushed to disk, renamed over it, the directory flushed. A reader sees
/// the old file or the new one, never a part; a kill leaves the old one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, &|| {})
}

/// `write_atomic`, calling `before_rename` once the new content is on
/// disk and the old file still in place (where a kill is tested).
pub fn write_atomic_with(path: &Path, bytes: &[u8], before_rename: &dyn Fn()) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        before_rename();
        fs::rename(&temp, path)?;
        fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}
