//! File selection: the staged files, the files changed on a branch since its
//! merge base, or every tracked file. Paths are relative to the repository
//! root; deleted files and submodules are never selected.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode, Repository};

use super::GitError;

pub(super) fn open(root: &Path) -> Result<Repository, GitError> {
    Repository::open(root).map_err(|source| GitError::Open {
        path: root.to_path_buf(),
        source,
    })
}

pub(super) fn failed(what: &str, source: git2::Error) -> GitError {
    GitError::Read {
        what: what.to_string(),
        source,
    }
}

/// The new-side paths of a diff that still exist: added, copied, modified,
/// renamed and type-changed files, without submodules.
fn changed_paths(diff: &mut git2::Diff<'_>) -> Result<Vec<PathBuf>, GitError> {
    let mut find = DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))
        .map_err(|e| failed("rename detection", e))?;
    let mut out = Vec::new();
    for delta in diff.deltas() {
        if !matches!(
            delta.status(),
            Delta::Added | Delta::Copied | Delta::Modified | Delta::Renamed | Delta::Typechange
        ) {
            continue;
        }
        let file = delta.new_file();
        if file.mode() == FileMode::Commit {
            continue;
        }
        if let Some(path) = file.path_bytes() {
            // Bytes, not text: file names need not be UTF-8.
            out.push(PathBuf::from(OsStr::from_bytes(path)));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The files staged for the next commit (the index against `HEAD`, or
/// against nothing before the first commit).
pub fn staged_files(root: &Path) -> Result<Vec<PathBuf>, GitError> {
    let repo = open(root)?;
    let mut options = DiffOptions::new();
    options.include_typechange(true);
    let mut diff = staged_diff(&repo, root, &mut options)?;
    changed_paths(&mut diff)
}

/// The index against `HEAD` (or against nothing before the first commit).
pub(super) fn staged_diff<'r>(
    repo: &'r Repository,
    root: &Path,
    options: &mut DiffOptions,
) -> Result<git2::Diff<'r>, GitError> {
    let head_tree = match repo.head() {
        Ok(head) => Some(
            head.peel_to_tree()
                .map_err(|e| failed("the tree of HEAD", e))?,
        ),
        // An unborn branch: the first commit of a new repository.
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            None
        }
        Err(e) => return Err(failed("HEAD", e)),
    };
    let index = repo.index().map_err(|source| GitError::Index {
        path: root.to_path_buf(),
        source,
    })?;
    repo.diff_tree_to_index(head_tree.as_ref(), Some(&index), Some(options))
        .map_err(|e| failed("the staged changes", e))
}

/// The text of `path` in the commit `spec`; `Ok(None)` when the commit has
/// no such file.
pub fn file_at(root: &Path, spec: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
    let repo = open(root)?;
    let tree = repo
        .revparse_single(spec)
        .and_then(|object| object.peel_to_tree())
        .map_err(|source| GitError::Revision {
            spec: spec.to_string(),
            source,
        })?;
    let Ok(entry) = tree.get_path(Path::new(path)) else {
        return Ok(None);
    };
    let blob = entry
        .to_object(&repo)
        .and_then(|object| object.peel_to_blob())
        .map_err(|e| failed("a file of the commit", e))?;
    Ok(Some(blob.content().to_vec()))
}

/// The files changed on `to` since its merge base with `from`, as a merge
/// gate wants them.
pub fn range_files(root: &Path, from: &str, to: &str) -> Result<Vec<PathBuf>, GitError> {
    let repo = open(root)?;
    let mut options = DiffOptions::new();
    options.include_typechange(true);
    let mut diff = range_diff(&repo, from, to, &mut options)?;
    changed_paths(&mut diff)
}

/// The tree of `to` against its merge base with `from`.
pub(super) fn range_diff<'r>(
    repo: &'r Repository,
    from: &str,
    to: &str,
    options: &mut DiffOptions,
) -> Result<git2::Diff<'r>, GitError> {
    let resolve = |spec: &str| -> Result<git2::Commit<'_>, GitError> {
        repo.revparse_single(spec)
            .and_then(|object| object.peel_to_commit())
            .map_err(|source| GitError::Revision {
                spec: spec.to_string(),
                source,
            })
    };
    let from_commit = resolve(from)?;
    let to_commit = resolve(to)?;
    let base = repo
        .merge_base(from_commit.id(), to_commit.id())
        .map_err(|source| GitError::MergeBase {
            from: from.to_string(),
            to: to.to_string(),
            source,
        })?;
    let base_tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map_err(|e| failed("the merge base", e))?;
    let to_tree = to_commit
        .tree()
        .map_err(|e| failed("the tree of the target", e))?;
    repo.diff_tree_to_tree(Some(&base_tree), Some(&to_tree), Some(options))
        .map_err(|e| failed("the changes of the range", e))
}

/// Writes the index's content into `dir` (a temporary checkout), leaving the
/// work tree and the index untouched.
pub fn checkout_index_to(root: &Path, dir: &Path) -> Result<(), GitError> {
    let repo = open(root)?;
    let mut index = repo.index().map_err(|source| GitError::Index {
        path: root.to_path_buf(),
        source,
    })?;
    let mut builder = git2::build::CheckoutBuilder::new();
    builder
        .force()
        .recreate_missing(true)
        .update_index(false)
        .target_dir(dir);
    repo.checkout_index(Some(&mut index), Some(&mut builder))
        .map_err(|e| failed("a snapshot of the index", e))
}
