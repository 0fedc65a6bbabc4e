//! Repository discovery and the tracked-file listing. Reads git; never
//! writes to the work tree or the index.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Failures reading the repository.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("failed to open the git repository at `{path}`")]
    Open {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("`{path}` is a bare repository: phasegate needs a work tree to run checks in")]
    Bare { path: PathBuf },
    #[error(
        "GIT_DIR names `{path}`, which is not a git repository: point GIT_DIR at one, or unset it"
    )]
    NamedRepository {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to read the git index of `{path}`")]
    Index {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("the repository at `{path}` uses a split index, which phasegate cannot read: turn it off with `git config core.splitIndex false && git update-index --no-split-index`")]
    SplitIndex { path: PathBuf },
    #[error("the repository at `{path}` uses a sparse index, which phasegate cannot read: turn it off with `git sparse-checkout init --no-sparse-index`")]
    SparseIndex { path: PathBuf },
    #[error("failed to read the git index `{path}`")]
    IndexFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to put the files of `{path}` through their git filters (is the filter's program, such as git-lfs, installed?)")]
    Filter {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to write `{path}`")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{path}` is a symbolic link that {problem}: phasegate reads committed and staged files through links inside the repository only")]
    Link {
        path: PathBuf,
        problem: &'static str,
    },
    #[error("failed to read {what} from git")]
    Read {
        what: String,
        #[source]
        source: git2::Error,
    },
    #[error("`{spec}` does not name a commit ({hint})")]
    Revision {
        spec: String,
        /// What to do: the `git fetch` that would bring it, or what else
        /// is wrong with the name.
        hint: String,
        #[source]
        source: git2::Error,
    },
    #[error("`{from}` and `{to}` have no common ancestor ({hint})")]
    MergeBase {
        from: String,
        to: String,
        /// Why: a shallow clone's cut history (and how to deepen it), or
        /// unrelated histories.
        hint: String,
        #[source]
        source: git2::Error,
    },
}

/// libgit2's failure to read the index, with what to do about the cases
/// users meet: a split index (`core.splitIndex`) or a sparse one
/// (`index.sparse`).
pub(super) fn index_error(root: &Path, source: git2::Error) -> GitError {
    let path = root.to_path_buf();
    if source.message().contains("extension: 'link'") {
        GitError::SplitIndex { path }
    } else if source.message().contains("extension: 'sdir'") {
        GitError::SparseIndex { path }
    } else {
        GitError::Index { path, source }
    }
}

/// libgit2's failure to open the repository at `root`. With the index git
/// named for a hook (`GIT_INDEX_FILE`) opening reads the index too, and a
/// split or sparse one is said as `index_error` says it.
pub(super) fn open_error(root: &Path, source: git2::Error) -> GitError {
    match index_error(root, source) {
        GitError::Index { path, source } => GitError::Open { path, source },
        clear => clear,
    }
}

/// A discovered repository with a work tree.
#[derive(Debug, Clone)]
pub struct RepoInfo {
    /// The top of the work tree.
    pub root: PathBuf,
    /// The common git directory (shared by linked worktrees): state lives
    /// under `<common_dir>/phasegate/`.
    pub common_dir: PathBuf,
    /// This work tree's own git directory (a linked worktree's is under the
    /// common one; the main work tree's is the common one).
    pub git_dir: PathBuf,
    /// What `core.sharedRepository` asks of the files phasegate creates
    /// under the git directory, read with the repository's other facts.
    pub sharing: crate::state::Sharing,
}

impl RepoInfo {
    /// Where what belongs to this work tree alone is kept: the unstaged
    /// changes a run set aside, which only this work tree may get back.
    pub fn work_tree_state(&self) -> PathBuf {
        self.git_dir.join("phasegate")
    }

    /// The branch checked out in this work tree (`refs/heads/main`), born
    /// or not; `None` on a detached `HEAD` or when it cannot be read. Read
    /// from its `HEAD` file as git writes it (`ref: refs/heads/main`): a
    /// run asks once, and opening the repository for one line would cost
    /// more than the line.
    pub fn branch(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let target = head.strip_prefix("ref: ")?.trim_end();
        target
            .starts_with("refs/heads/")
            .then(|| target.to_string())
    }

    /// Which work tree of the repository this is, as the history keeps
    /// it: its own git directory relative to the common one, `.` for the
    /// main work tree, `worktrees/<name>` for a linked one; so it stays
    /// the same when the repository is moved.
    pub fn work_tree_key(&self) -> String {
        match self.git_dir.strip_prefix(&self.common_dir) {
            Ok(rest) if rest.as_os_str().is_empty() => ".".to_string(),
            Ok(rest) => rest.to_string_lossy().into_owned(),
            Err(_) => self.git_dir.to_string_lossy().into_owned(),
        }
    }
}

/// Finds the repository containing `dir`; `Ok(None)` outside any repository.
pub fn discover(dir: &Path) -> Result<Option<RepoInfo>, GitError> {
    let repo = match super::locate(dir) {
        Ok(Some(repo)) => repo,
        Ok(None) => return Ok(None),
        Err(source) => {
            return Err(match super::named_git_dir() {
                Some(path) => GitError::NamedRepository {
                    path: path.to_path_buf(),
                    source,
                },
                None => GitError::Open {
                    path: dir.to_path_buf(),
                    source,
                },
            })
        }
    };
    let Some(workdir) = repo.workdir() else {
        return Err(GitError::Bare {
            path: repo.path().to_path_buf(),
        });
    };
    let root = canonical(workdir);
    // The configuration libgit2 read to open the repository (with what
    // the environment adds, `config_env`): asking it costs no file read.
    let sharing = match repo.config() {
        Ok(config) => crate::state::Sharing::of_config(&config),
        Err(_) => crate::state::Sharing::Umask,
    };
    Ok(Some(RepoInfo {
        root,
        common_dir: canonical(repo.commondir()),
        git_dir: canonical(repo.path()),
        sharing,
    }))
}

pub(super) fn canonical(path: &Path) -> PathBuf {
    // Canonical paths keep `strip_prefix` honest when the repository is
    // reached through a symbolic link (macOS `/tmp`, for one).
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether git leaves the untracked file `path` (relative to the root) out
/// of `git add .` and commits: an ignore rule matches it and it is not
/// tracked. A tracked file stays in commits whatever the rules say.
pub fn ignores(root: &Path, path: &Path) -> Result<bool, GitError> {
    let repo = super::open_repository(root).map_err(|source| open_error(root, source))?;
    let status = repo
        .status_file(path)
        .map_err(|source| index_error(root, source))?;
    Ok(status.contains(git2::Status::IGNORED))
}

/// Every file in the index, relative to the root, in index order (what
/// `git ls-files` lists). Submodules (gitlinks) and intent-to-add entries
/// are left out; the work tree is not looked at, which keeps this fast on
/// large repositories.
pub fn tracked_files(root: &Path) -> Result<Vec<PathBuf>, GitError> {
    let repo = super::open_repository(root).map_err(|source| open_error(root, source))?;
    // phasegate's own reader where it applies: libgit2 hashes the whole
    // index first.
    if let Some(index) = super::read_own_index(&repo)? {
        let mut paths: Vec<&[u8]> = index
            .entries
            .iter()
            .filter(|e| {
                let fields = index.fields(e);
                !fields.is_gitlink() && !fields.intent_to_add()
            })
            .map(|e| index.path(e))
            .collect();
        // Conflicted paths have an entry per stage.
        paths.dedup();
        return Ok(paths
            .into_iter()
            .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p)))
            .collect());
    }
    let index = repo.index().map_err(|source| index_error(root, source))?;
    let mut files = Vec::with_capacity(index.len());
    for entry in index.iter() {
        if entry.mode & super::index::MODE_TYPE == super::index::MODE_GITLINK {
            continue;
        }
        if entry.flags_extended & super::index::INTENT_TO_ADD != 0 {
            continue;
        }
        files.push(PathBuf::from(std::ffi::OsStr::from_bytes(&entry.path)));
    }
    files.dedup();
    Ok(files)
}
