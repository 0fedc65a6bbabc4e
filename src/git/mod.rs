//! Git: repository discovery and file selection.

mod attributes;
mod changes;
mod config_env;
mod filters;
mod head_trace;
mod hooks;
mod includes;
mod index;
mod protect;
mod refs;
mod repo;
mod select;

pub use attributes::{use_attr_env, AttrEnv};
pub use changes::*;
pub use config_env::{use_config_env, ConfigEnv};
pub use head_trace::{IndexBefore, Staging};
pub use hooks::*;
pub use protect::*;
pub use repo::*;
pub use select::*;

use std::ffi::OsString;
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

/// Whether git named an index of its own making for this run: `commit -a`,
/// `-i` and `commit PATH` build one (`index.lock`, `next-index-*.lock`)
/// from the work tree before the hook starts.
pub fn index_is_temporary() -> bool {
    INDEX_FILE
        .get()
        .is_some_and(|path| path.file_name() != Some(std::ffi::OsStr::new("index")))
}

/// The index file of `repo`: `GIT_INDEX_FILE`'s when git named one.
fn index_path(repo: &git2::Repository) -> PathBuf {
    index_file(repo.path())
}

/// The index file of the work tree whose git directory is `git_dir`:
/// `GIT_INDEX_FILE`'s when git named one.
fn index_file(git_dir: &Path) -> PathBuf {
    INDEX_FILE
        .get()
        .cloned()
        .unwrap_or_else(|| git_dir.join("index"))
}

/// The repository git named for this process with `GIT_DIR` (and the work
/// tree with `GIT_WORK_TREE`), set once at the start. git exports them to
/// hooks, and a bare repository with a separate work tree (the "dotfiles"
/// layout: `git --git-dir=~/.cfg --work-tree=~`) is reached no other way.
static NAMED: OnceLock<Named> = OnceLock::new();

/// A repository named by the environment instead of found from a directory.
#[derive(Debug, Clone)]
struct Named {
    git_dir: PathBuf,
    work_tree: Option<PathBuf>,
}

/// Makes every repository opened from now on the one `GIT_DIR` names, with
/// `GIT_WORK_TREE`'s work tree. With only `GIT_WORK_TREE`, the repository
/// is the one found from `cwd`, as git finds it.
pub fn use_named_repository(git_dir: Option<PathBuf>, work_tree: Option<PathBuf>, cwd: &Path) {
    let (git_dir, work_tree) = match (git_dir, work_tree) {
        // Without `GIT_WORK_TREE` or `core.worktree`, git takes the current
        // directory for the top of the work tree (git(1)), as in a hook of
        // a repository whose `.git` is a file: libgit2 would take the git
        // directory's parent.
        (Some(dir), None) => {
            let here = git2::Repository::open(&dir).is_ok_and(|repo| work_tree_unnamed(&repo));
            (dir, here.then(|| cwd.to_path_buf()))
        }
        (Some(dir), tree) => (dir, tree),
        (None, tree @ Some(_)) => match git2::Repository::discover(cwd) {
            Ok(repo) => (repo.path().to_path_buf(), tree),
            Err(_) => return,
        },
        (None, None) => return,
    };
    let _ = NAMED.set(Named { git_dir, work_tree });
}

/// The git directory the environment named, if any.
fn named_git_dir() -> Option<&'static Path> {
    NAMED.get().map(|named| named.git_dir.as_path())
}

/// The repository at `dir`'s work tree: the one the environment named, or
/// the one containing `dir`. `Ok(None)` when there is none. Opened again
/// when the first failure was one git would not have had (see
/// `repo::may_reopen`).
fn locate(dir: &Path) -> Result<Option<git2::Repository>, git2::Error> {
    match locate_once(dir) {
        Err(e) if repo::may_reopen(dir, &e) => locate_once(dir),
        found => found,
    }
}

fn locate_once(dir: &Path) -> Result<Option<git2::Repository>, git2::Error> {
    let Some(named) = NAMED.get() else {
        return match git2::Repository::discover(dir) {
            Ok(repo) => {
                config_env::apply(&repo)?;
                work_tree_of_link(&repo, dir)?;
                name_if_apart(&repo);
                Ok(Some(repo))
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e),
        };
    };
    let repo = git2::Repository::open(&named.git_dir)?;
    if let Some(work_tree) = &named.work_tree {
        repo.set_workdir(work_tree, false)?;
    }
    config_env::apply(&repo)?;
    Ok(Some(repo))
}

/// A repository found through a `.git` that is a file (`gitdir: ...`, as
/// `git init --separate-git-dir` writes) or a link to a git directory
/// elsewhere: its work tree is the directory holding that `.git`, as git
/// has it, unless `core.worktree` says otherwise. libgit2 takes the git
/// directory's parent, where the checks would run and files be set aside.
fn work_tree_of_link(repo: &git2::Repository, dir: &Path) -> Result<(), git2::Error> {
    // The first `.git` up from here is the one git goes by; a directory,
    // as in most repositories, is libgit2's case too.
    let Some((holder, dot_git, is_dir)) = dir.ancestors().find_map(|holder| {
        let dot_git = holder.join(".git");
        let meta = std::fs::symlink_metadata(&dot_git).ok()?;
        Some((holder, dot_git, meta.is_dir()))
    }) else {
        return Ok(());
    };
    if is_dir || !work_tree_unnamed(repo) {
        return Ok(());
    }
    let git_dir = repo::canonical(repo.path());
    let holder = repo::canonical(holder);
    let leads_here = git2::Repository::open(&dot_git)
        .is_ok_and(|found| repo::canonical(found.path()) == git_dir);
    if leads_here && repo.workdir().map(repo::canonical) != Some(holder.clone()) {
        repo.set_workdir(&holder, false)?;
    }
    Ok(())
}

/// Whether `repo` has a work tree that its configuration does not name
/// (`core.worktree`): git then finds it from where it runs.
fn work_tree_unnamed(repo: &git2::Repository) -> bool {
    !repo.is_bare()
        && repo
            .config()
            .is_ok_and(|c| c.get_path("core.worktree").is_err())
}

/// A repository found from inside its git directory, whose work tree
/// (`core.worktree`) has no `.git` leading back to it (a home directory
/// kept in git): from now on it is opened as if `GIT_DIR` and
/// `GIT_WORK_TREE` named it, since its work tree cannot find it, and the
/// checks are given both for the same reason.
fn name_if_apart(repo: &git2::Repository) {
    let Some(work_tree) = repo.workdir() else {
        return;
    };
    if std::fs::symlink_metadata(work_tree.join(".git")).is_err() {
        let _ = NAMED.set(Named {
            git_dir: repo.path().to_path_buf(),
            work_tree: Some(work_tree.to_path_buf()),
        });
    }
}

/// The variables a check running in `tree` needs to reach the repository
/// of `root`: `GIT_DIR` and `GIT_WORK_TREE`, absolute, when the environment
/// named a repository that git cannot find from its work tree (a bare
/// repository with a separate work tree); none otherwise. Checks never
/// inherit git's repository variables (see `runner::GIT_LOCAL_ENV`).
pub fn repository_env_for_checks(root: &Path, tree: &Path) -> Vec<(String, OsString)> {
    let Some(named) = NAMED.get() else {
        return Vec::new();
    };
    let found = git2::Repository::discover(root)
        .ok()
        .map(|repo| repo::canonical(repo.path()));
    if found == Some(repo::canonical(&named.git_dir)) {
        return Vec::new();
    }
    // A temporary checkout has a git directory of its own (its index, a
    // detached `HEAD`, the repository's objects borrowed): named there,
    // a check's `git add` or `git commit` never reaches the user's index
    // or branch.
    let git_dir = if tree == root {
        named.git_dir.clone()
    } else {
        tree.join(".git")
    };
    vec![
        ("GIT_DIR".to_string(), git_dir.into_os_string()),
        ("GIT_WORK_TREE".to_string(), tree.as_os_str().to_os_string()),
    ]
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

/// Opens the repository at `root` with the index git named, if any; again
/// when the first failure was one git would not have had.
fn open_repository(root: &Path) -> Result<git2::Repository, git2::Error> {
    match open_repository_once(root) {
        Err(e) if repo::may_reopen(root, &e) => open_repository_once(root),
        opened => opened,
    }
}

fn open_repository_once(root: &Path) -> Result<git2::Repository, git2::Error> {
    // Objects are read as git reads them, trusting zlib's checksum. By
    // default libgit2 also hashes every object it reads, which is a third
    // of the time it takes to read HEAD's trees.
    static READ_AS_GIT: std::sync::Once = std::sync::Once::new();
    READ_AS_GIT.call_once(|| git2::opts::strict_hash_verification(false));
    let repo = match NAMED.get() {
        Some(named) => {
            let repo = git2::Repository::open(&named.git_dir)?;
            repo.set_workdir(root, false)?;
            repo
        }
        None => git2::Repository::open(root)?,
    };
    config_env::apply(&repo)?;
    if let Some(path) = INDEX_FILE.get() {
        let mut index = git2::Index::open(path)?;
        repo.set_index(&mut index)?;
    }
    Ok(repo)
}

/// Writes those of `paths` (files and links of `index`) that checking
/// `index` out into `dest` (the work tree, or a temporary checkout when
/// `target` is set) left missing. libgit2 compares the index with `HEAD`
/// first and writes nothing for a path whose type differs between them (a
/// link staged in place of a file, or a file in place of a link) when
/// nothing stands there; something standing there it replaces. So an
/// empty file is put in each such place, and those paths checked out again.
fn checkout_left_out(
    repo: &git2::Repository,
    index: &mut git2::Index,
    paths: &[&[u8]],
    dest: &Path,
    target: bool,
) -> Result<(), git2::Error> {
    use std::os::unix::ffi::OsStrExt;
    let mut builder = git2::build::CheckoutBuilder::new();
    builder
        .force()
        .update_index(false)
        .disable_pathspec_match(true);
    if target {
        builder.target_dir(dest);
    }
    let mut any = false;
    for &path in paths {
        let rel = Path::new(std::ffi::OsStr::from_bytes(path));
        let Some(entry) = index.get_path(rel, 0) else {
            continue;
        };
        let kind = entry.mode & index::MODE_TYPE;
        let place = dest.join(rel);
        // An intent-to-add entry stages nothing to write.
        if (kind != index::MODE_FILE && kind != index::MODE_LINK)
            || entry.flags_extended & index::INTENT_TO_ADD != 0
            || std::fs::symlink_metadata(&place).is_ok()
        {
            continue;
        }
        let placed = place
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::File::create(&place));
        if let Err(e) = placed {
            return Err(git2::Error::from_str(&format!(
                "failed to write `{}`: {e}",
                place.display()
            )));
        }
        builder.path(path);
        any = true;
    }
    if any {
        repo.checkout_index(Some(index), Some(&mut builder))?;
    }
    Ok(())
}

/// Runs the real `git` in `dir` for a test, away from the machine's own
/// configuration, and returns what it printed; a failure fails the test.
#[cfg(test)]
fn test_git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let mut git = std::process::Command::new("git");
    git.args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    for key in crate::runner::GIT_LOCAL_ENV {
        git.env_remove(key);
    }
    let out = git.output().unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out.stdout
}
