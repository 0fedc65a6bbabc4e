//! State under `.git/phasegate/` (the common git directory, so linked
//! worktrees share it): run directories with logs, invocation records and
//! verdicts; `state.json` with the run history; the intervention queue and
//! `emergency.log`; the refs a push never reached (`pushes/`). Everything
//! written here is written atomically, under the state lock but for
//! `pushes/`, whose file has one writer, the hook of its push.

mod interventions;
mod killed;
mod lock;
mod notes;
mod run_dir;
mod shared;
mod store;
mod unreached;

pub use interventions::*;
pub use killed::*;
pub use lock::*;
pub use notes::*;
pub use run_dir::*;
pub use shared::*;
pub use store::*;
pub use unreached::*;

use std::io;
use std::path::{Path, PathBuf};

/// Where the state lives, and how what phasegate creates there is made:
/// the repository's sharing (`core.sharedRepository`), read where the
/// repository was opened (`git::RepoInfo`); the umask alone outside a
/// repository. It reads as the directory's path (`Deref`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    pub path: PathBuf,
    pub sharing: Sharing,
}

impl StateDir {
    /// The state directory `path`, its files made as `sharing` asks.
    pub fn new(path: PathBuf, sharing: Sharing) -> StateDir {
        StateDir { path, sharing }
    }

    /// The directory under the state directory where a part of the state
    /// lives (`protect/`), made the same way.
    #[must_use]
    pub fn under(&self, path: PathBuf) -> StateDir {
        StateDir {
            path,
            sharing: self.sharing,
        }
    }
}

/// A state directory at `path` whose files the umask alone makes, for
/// unit tests.
#[cfg(test)]
pub(crate) fn umask_dir(path: &Path) -> StateDir {
    StateDir::new(path.to_path_buf(), Sharing::Umask)
}

impl std::ops::Deref for StateDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for StateDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// The state directory: `<common git dir>/phasegate`, or a per-directory
/// folder under the system's temporary directory outside a repository,
/// named by the FNV-1a digest of the directory's path: the same in every
/// build of phasegate (std's `DefaultHasher` may change with the
/// compiler, and a new build would then lose the history kept there).
pub fn state_dir(repo: Option<&crate::git::RepoInfo>, root: &Path, temp_dir: &Path) -> StateDir {
    use std::os::unix::ffi::OsStrExt;
    match repo {
        Some(repo) => StateDir::new(repo.common_dir.join("phasegate"), repo.sharing),
        None => StateDir::new(
            temp_dir.join(format!(
                "phasegate-{:016x}",
                run_dir::fnv1a(root.as_os_str().as_bytes())
            )),
            Sharing::Umask,
        ),
    }
}

/// An error about `path` under the state directory `state_dir` that names
/// the file and says what to do: `doing` reads after "failed to" ("write",
/// "lock"). A state directory that is a file, or one this user cannot
/// write, is said as such, since the raw error ("File exists", "Permission
/// denied") names neither.
pub fn io_error(state_dir: &Path, path: &Path, doing: &str, error: &io::Error) -> io::Error {
    let dir = state_dir.display();
    let message = if std::fs::metadata(state_dir).is_ok_and(|m| !m.is_dir()) {
        if path == state_dir {
            format!(
                "failed to {doing} `{dir}`: it is not a directory ({error}); phasegate keeps its state there: move that file aside"
            )
        } else {
            format!(
                "failed to {doing} `{}`: `{dir}` is not a directory ({error}); phasegate keeps its state there: move that file aside",
                path.display()
            )
        }
    } else if error.kind() == io::ErrorKind::PermissionDenied {
        match someone_else_s(path) {
            Some((owner, uid)) => format!(
                "failed to {doing} `{}`: {error}; `{}` belongs to another user (uid {uid}), and phasegate needs to read and write in `{dir}`. In a repository a group shares, its owner can run `git config core.sharedRepository group && chmod -R g+w {dir}`: git keeps its files group-writable then, and so does phasegate. Otherwise run phasegate as that user",
                path.display(),
                owner.display()
            ),
            None => format!(
                "failed to {doing} `{}`: {error}; phasegate needs to read and write in `{dir}`: make it writable for this user (`chmod -R u+w {dir}`) or run phasegate as its owner",
                path.display()
            ),
        }
    } else if error.kind() == io::ErrorKind::ReadOnlyFilesystem {
        format!(
            "failed to {doing} `{}`: {error}; phasegate needs to read and write in `{dir}`, on a file system mounted read-only: run it where the repository is writable",
            path.display()
        )
    } else {
        format!("failed to {doing} `{}`: {error}", path.display())
    };
    io::Error::new(error.kind(), message)
}

/// The nearest of `path` and its directories that exists, and its owner,
/// when that is not this user: a permission another user's file denies is
/// theirs to give (`chmod u+w` would fail for this one).
fn someone_else_s(path: &Path) -> Option<(&Path, u32)> {
    use std::os::unix::fs::MetadataExt;
    let (found, meta) = path
        .ancestors()
        .find_map(|p| std::fs::symlink_metadata(p).ok().map(|m| (p, m)))?;
    let uid = meta.uid();
    (uid != rustix::process::geteuid().as_raw()).then_some((found, uid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_directory_outside_a_repository_is_named_the_same_by_every_build() {
        // FNV-1a 64 of the bytes `/home/ada/notes`.
        let outside = state_dir(None, Path::new("/home/ada/notes"), Path::new("/tmp"));
        assert_eq!(*outside, *Path::new("/tmp/phasegate-13f480cb6d9965c4"));
        assert_eq!(outside.sharing, Sharing::Umask);
        let repo = crate::git::RepoInfo {
            root: PathBuf::from("/r"),
            common_dir: PathBuf::from("/r/.git"),
            git_dir: PathBuf::from("/r/.git"),
            sharing: Sharing::Add(0o660),
        };
        let inside = state_dir(Some(&repo), Path::new("/r"), Path::new("/tmp"));
        assert_eq!(*inside, *Path::new("/r/.git/phasegate"));
        assert_eq!(inside.sharing, Sharing::Add(0o660));
    }
}
