//! Git: repository discovery and file selection.

mod changes;
mod hooks;
mod index;
mod protect;
mod repo;
mod select;

pub use changes::*;
pub use hooks::*;
pub use protect::*;
pub use repo::*;
pub use select::*;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The index file git named for this process (`GIT_INDEX_FILE`), set once
/// at the start of a run: every repository phasegate opens reads and writes
/// that index instead of `.git/index`, as git's own commands do.
static INDEX_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Makes every repository opened from now on use `path` as its index.
pub fn use_index_file(path: PathBuf) {
    let _ = INDEX_FILE.set(path);
}

/// The index file of `repo`: `GIT_INDEX_FILE`'s when git named one.
fn index_path(repo: &git2::Repository) -> PathBuf {
    INDEX_FILE
        .get()
        .cloned()
        .unwrap_or_else(|| repo.path().join("index"))
}

/// The index of `repo` as phasegate's own reader sees it; `Ok(None)` where
/// libgit2 must read it (another object format, a split or sparse index).
fn read_own_index(repo: &git2::Repository) -> Result<Option<index::Index>, GitError> {
    let sha1 = repo
        .config()
        .and_then(|c| c.get_string("extensions.objectformat"))
        .map_or(true, |format| format.eq_ignore_ascii_case("sha1"));
    if !sha1 {
        return Ok(None);
    }
    let path = index_path(repo);
    index::read(&path).map_err(|source| GitError::IndexFile { path, source })
}

/// Opens the repository at `root` with the index git named, if any.
fn open_repository(root: &Path) -> Result<git2::Repository, git2::Error> {
    // Objects are read as git reads them, trusting zlib's checksum. By
    // default libgit2 also hashes every object it reads, which is a third
    // of the time it takes to read HEAD's trees.
    static READ_AS_GIT: std::sync::Once = std::sync::Once::new();
    READ_AS_GIT.call_once(|| git2::opts::strict_hash_verification(false));
    let repo = git2::Repository::open(root)?;
    if let Some(path) = INDEX_FILE.get() {
        let mut index = git2::Index::open(path)?;
        repo.set_index(&mut index)?;
    }
    Ok(repo)
}

/// Runs the real `git` in `dir` for a test, away from the machine's own
/// configuration, and returns what it printed; a failure fails the test.
#[cfg(test)]
fn test_git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out.stdout
}
