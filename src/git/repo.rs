//! Repository discovery and the tracked-file listing. Reads git; never
//! writes to the work tree or the index.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
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
    /// A repository format libgit2 cannot read (`extensions.*`).
    #[error("the repository at `{path}` {uses}, which phasegate cannot read yet: {remedy}")]
    Format {
        path: PathBuf,
        /// What it uses, with the setting that says so.
        uses: String,
        /// What the user can do.
        remedy: String,
    },
    #[error("git does not trust the repository at `{path}`: it is owned by another user (git's \"dubious ownership\" check); if you trust it, run `{command}`, then run phasegate again")]
    Ownership { path: PathBuf, command: String },
    #[error("`{object}`, a file of commit `{commit}`, is not in this partial clone, and git could not fetch it from `{remote}` ({said}): run again once `{remote}` can be reached, and git fetches what the commit needs")]
    Unfetched {
        commit: String,
        object: String,
        remote: String,
        /// What git said.
        said: String,
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
        GitError::Index { source, .. } => unopened(root, source),
        clear => clear,
    }
}

/// Why libgit2 could not open the repository at (or above) `dir`, said so
/// the user can act on it: a repository git does not trust, or a format
/// phasegate cannot read; else `Open` with libgit2's own words. Only reached
/// once opening failed, so reading the configuration again costs a run
/// nothing.
pub fn unopened(dir: &Path, source: git2::Error) -> GitError {
    if source.code() == git2::ErrorCode::Owner {
        if let Err(Some(command)) = git_trusts(dir) {
            return GitError::Ownership {
                path: owned_path(&source).unwrap_or_else(|| dir.to_path_buf()),
                command,
            };
        }
        let path = owned_path(&source).unwrap_or_else(|| dir.to_path_buf());
        let command = format!(
            "git config --global --add safe.directory {}",
            super::protect::quoted(path.as_os_str().as_bytes())
        );
        return GitError::Ownership { path, command };
    }
    if let Some(format) = Extensions::of(dir).and_then(|found| found.unreadable()) {
        return format;
    }
    GitError::Open {
        path: dir.to_path_buf(),
        source,
    }
}

/// Whether opening the repository at `dir` again may work after it failed
/// with `error`: git trusts it (`safe.directory` in a file libgit2 does not
/// read, as `GIT_CONFIG_GLOBAL` names), or it uses only extensions that
/// change nothing libgit2 reads. libgit2 is told so for the rest of the
/// process.
pub(super) fn may_reopen(dir: &Path, error: &git2::Error) -> bool {
    if error.code() == git2::ErrorCode::Owner {
        if git_trusts(dir).is_ok() {
            crate::runner::trust_repository_owners();
            return true;
        }
        return false;
    }
    if error.class() != git2::ErrorClass::Repository {
        return false;
    }
    let Some(found) = Extensions::of(dir) else {
        return false;
    };
    if found.unreadable().is_some() {
        return false;
    }
    let harmless = found.harmless();
    if harmless.is_empty() {
        return false;
    }
    // From now on refs are resolved through git, never libgit2's stub.
    if found.keeps_reftable() {
        super::refs::seen();
    }
    crate::runner::accept_repository_extensions(&harmless);
    true
}

/// Has git fetch the objects of `commit`'s tree that a partial clone
/// lacks (`git clone --filter=blob:none` leaves out the files of commits
/// never checked out) from its promisor remote, in one fetch, as `git
/// checkout` would. `Ok(false)` when the repository is no partial clone
/// or lacks none of them: the failure was something else.
pub(super) fn fetch_missing(
    root: &Path,
    repo: &git2::Repository,
    commit: git2::Oid,
) -> Result<bool, GitError> {
    let Some(remote) = promisor_remote(repo) else {
        return Ok(false);
    };
    // The repository libgit2 opened, whatever the environment named.
    let place = super::filters::Place::of(repo, root);
    let git = |args: &[&str]| {
        let mut git = place.git();
        git.args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        git
    };
    let unfetched = |object: &str, said: String| GitError::Unfetched {
        commit: commit.to_string(),
        object: object.to_string(),
        remote: remote.clone(),
        said,
    };
    let listed = git(&[
        "rev-list",
        "--objects",
        "--no-walk",
        "--missing=print",
        &commit.to_string(),
    ])
    .stdin(std::process::Stdio::null())
    .output()
    .map_err(|e| unfetched("?", format!("`git rev-list` could not start: {e}")))?;
    let listing = String::from_utf8_lossy(&listed.stdout);
    let missing: Vec<&str> = listing
        .lines()
        .filter_map(|line| line.strip_prefix('?'))
        .collect();
    let Some(first) = missing.first() else {
        return Ok(false);
    };
    // What git runs itself when a command lacks objects of a partial
    // clone (promisor-remote.c): no negotiation, no tags, the ids on
    // standard input.
    let mut fetch = git(&[
        "-c",
        "fetch.negotiationAlgorithm=noop",
        "fetch",
        &remote,
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--filter=blob:none",
        "--stdin",
    ])
    .spawn()
    .map_err(|e| unfetched(first, format!("`git fetch` could not start: {e}")))?;
    if let Some(mut stdin) = fetch.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(format!("{}\n", missing.join("\n")).as_bytes());
    }
    let done = fetch
        .wait_with_output()
        .map_err(|e| unfetched(first, e.to_string()))?;
    if !done.status.success() {
        let said = String::from_utf8_lossy(&done.stderr);
        let said = said
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(unfetched(first, said));
    }
    Ok(true)
}

/// The remote a partial clone fetches what it lacks from: the first with
/// `remote.<name>.promisor`, or the one `extensions.partialClone` names.
fn promisor_remote(repo: &git2::Repository) -> Option<String> {
    let config = repo.config().ok()?;
    let mut entries = config.entries(Some("remote\\..*\\.promisor")).ok()?;
    while let Some(Ok(entry)) = entries.next() {
        let promisor = entry
            .value()
            .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"));
        if let (true, Ok(name)) = (promisor, entry.name()) {
            let remote = name.strip_prefix("remote.")?.strip_suffix(".promisor")?;
            return Some(remote.to_string());
        }
    }
    config.get_string("extensions.partialclone").ok()
}

/// Whether git opens the repository at `dir` with phasegate's environment;
/// when it refuses for its ownership, the command it gives to trust it.
fn git_trusts(dir: &Path) -> Result<(), Option<String>> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|_| None)?;
    if out.status.success() {
        return Ok(());
    }
    // git 2.36 and later: "To add an exception for this directory, call:",
    // then the command, on a line of its own.
    let said = String::from_utf8_lossy(&out.stderr);
    Err(said
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("git config --global --add safe.directory"))
        .map(str::to_string))
}

/// The path libgit2 names in its ownership error
/// ("repository path '/x' is not owned by current user").
fn owned_path(error: &git2::Error) -> Option<PathBuf> {
    let rest = error.message().split_once("path '")?.1;
    let (path, _) = rest.rsplit_once("' is not owned")?;
    Some(PathBuf::from(path))
}

/// The repository format extensions (`extensions.*`) of the repository at
/// or above `dir`, read from its configuration file without libgit2's
/// repository code, which refused it.
struct Extensions {
    /// The repository, as the user knows it: the work tree's top, or the
    /// git directory the environment named.
    path: PathBuf,
    /// The configuration file they are in.
    config: PathBuf,
    /// Name (lower case, without `extensions.`) and value of each.
    entries: Vec<(String, String)>,
}

impl Extensions {
    fn of(dir: &Path) -> Option<Extensions> {
        let (path, git_dir) = match super::named_git_dir() {
            Some(named) => (named.to_path_buf(), named.to_path_buf()),
            None => git_dir_above(dir)?,
        };
        // A linked worktree's git directory names the common one, whose
        // configuration holds the extensions.
        let common = std::fs::read_to_string(git_dir.join("commondir"))
            .map_or_else(|_| git_dir.clone(), |c| git_dir.join(c.trim_end()));
        let config = common.join("config");
        let file = git2::Config::open(&config).ok()?;
        // Format version 0 has no extensions: git and libgit2 pass over
        // the section there.
        if file.get_i32("core.repositoryformatversion").unwrap_or(0) < 1 {
            return None;
        }
        let mut entries = Vec::new();
        let mut found = file.entries(Some("extensions\\..*")).ok()?;
        while let Some(Ok(entry)) = found.next() {
            let (Ok(name), Ok(value)) = (entry.name(), entry.value()) else {
                continue;
            };
            let name = name.trim_start_matches("extensions.").to_ascii_lowercase();
            entries.push((name, value.to_string()));
        }
        Some(Extensions {
            path,
            config,
            entries,
        })
    }

    /// The extensions libgit2 reads by itself.
    fn known(name: &str, value: &str) -> bool {
        match name {
            "noop" | "worktreeconfig" | "preciousobjects" => true,
            "objectformat" => value.eq_ignore_ascii_case("sha1"),
            _ => false,
        }
    }

    /// Extensions libgit2 refuses that change nothing it reads: a partial
    /// clone's (git fetches what is missing when asked), and refs kept as
    /// files, the format libgit2 reads anyway, or as reftable, which
    /// libgit2 cannot read but phasegate then never asks it for
    /// (`refs.rs` asks git).
    fn harmless_one(name: &str, value: &str) -> Option<&'static str> {
        match name {
            "partialclone" => Some("partialclone"),
            "refstorage"
                if value.eq_ignore_ascii_case("files")
                    || value.eq_ignore_ascii_case("reftable") =>
            {
                Some("refstorage")
            }
            _ => None,
        }
    }

    /// Whether the refs are kept in the reftable format.
    fn keeps_reftable(&self) -> bool {
        self.entries
            .iter()
            .any(|(name, value)| name == "refstorage" && value.eq_ignore_ascii_case("reftable"))
    }

    /// The harmless extensions libgit2 must be told to accept.
    fn harmless(&self) -> Vec<&'static str> {
        self.entries
            .iter()
            .filter_map(|(name, value)| Self::harmless_one(name, value))
            .collect()
    }

    /// The first extension that makes the repository unreadable to
    /// phasegate, as the error the user reads.
    fn unreadable(&self) -> Option<GitError> {
        let (name, value) = self.entries.iter().find(|(name, value)| {
            !Self::known(name, value) && Self::harmless_one(name, value).is_none()
        })?;
        let setting = format!(
            "`extensions.{name} = {value}` in `{}`",
            self.config.display()
        );
        let meanwhile = "`git commit --no-verify` commits without the gate, or `phasegate uninstall` removes its hooks";
        let (uses, remedy) = match name.as_str() {
            "objectformat" => (
                format!("names its objects with {value} ({setting}, from `git init --object-format={value}`)"),
                format!("git cannot convert a repository to another object format; until phasegate can read it, {meanwhile}"),
            ),
            _ => (format!("uses the repository extension {setting}"), meanwhile.to_string()),
        };
        Some(GitError::Format {
            path: self.path.clone(),
            uses,
            remedy,
        })
    }
}

/// The top of the work tree at or above `dir` and its git directory: the
/// first `.git` up from `dir`, a directory or a file naming one
/// (`gitdir: …`).
fn git_dir_above(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    dir.ancestors().find_map(|holder| {
        let dot_git = holder.join(".git");
        let meta = std::fs::symlink_metadata(&dot_git).ok()?;
        if meta.is_file() {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let named = text.strip_prefix("gitdir:")?.trim();
            return Some((holder.to_path_buf(), holder.join(named)));
        }
        Some((holder.to_path_buf(), dot_git))
    })
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
        // A reftable repository's `HEAD` file is a stub git never reads.
        if super::refs::reftable_at(&self.common_dir) {
            let known = super::refs::known_at(&self.git_dir, &self.common_dir).ok()?;
            return known.head.branch.filter(|b| b.starts_with("refs/heads/"));
        }
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
            return Err(match (super::named_git_dir(), unopened(dir, source)) {
                (Some(path), GitError::Open { source, .. }) => GitError::NamedRepository {
                    path: path.to_path_buf(),
                    source,
                },
                (_, explained) => explained,
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
    let (paths, _) = index_paths(root, super::index::INTENT_TO_ADD, |_| true)?;
    Ok(paths
        .into_iter()
        .map(|p| PathBuf::from(std::ffi::OsString::from_vec(p)))
        .collect())
}

/// The paths of the tracked files `keep` accepts, relative to the root, in
/// index order; `None` when the index holds no file at all (nothing added
/// yet). Only the paths are looked at, never the work tree: submodules
/// (gitlinks) and files outside a sparse checkout (`skip-worktree`), which
/// this work tree does not hold, are left out.
pub fn tracked_where(
    root: &Path,
    keep: impl FnMut(&[u8]) -> bool,
) -> Result<Option<Vec<Vec<u8>>>, GitError> {
    let (kept, any) = index_paths(root, super::index::SKIP_WORKTREE, keep)?;
    Ok(any.then_some(kept))
}

/// The paths of the index's entries that `keep` accepts, in index order,
/// once each (a conflicted path has an entry per stage), gitlinks and
/// entries with an extended flag of `left_out` left out; and whether the
/// index holds any entry at all.
fn index_paths(
    root: &Path,
    left_out: u16,
    mut keep: impl FnMut(&[u8]) -> bool,
) -> Result<(Vec<Vec<u8>>, bool), GitError> {
    use super::index::{MODE_GITLINK, MODE_TYPE};
    let repo = super::open_repository(root).map_err(|source| open_error(root, source))?;
    let mut kept: Vec<Vec<u8>> = Vec::new();
    // phasegate's own reader where it applies: libgit2 hashes the whole
    // index first.
    let any = if let Some(index) = super::read_own_index(&repo)? {
        for entry in &index.entries {
            let path = index.path(entry);
            // The path first: most entries go no further.
            if !keep(path) {
                continue;
            }
            let fields = index.fields(entry);
            if fields.is_gitlink() || fields.extended & left_out != 0 {
                continue;
            }
            kept.push(path.to_vec());
        }
        !index.entries.is_empty()
    } else {
        let index = repo.index().map_err(|source| index_error(root, source))?;
        for entry in index.iter() {
            if entry.mode & MODE_TYPE == MODE_GITLINK
                || entry.flags_extended & left_out != 0
                || !keep(&entry.path)
            {
                continue;
            }
            kept.push(entry.path);
        }
        !index.is_empty()
    };
    kept.dedup();
    Ok((kept, any))
}
