//! File selection: the staged files, the files changed on a branch since its
//! merge base, or every tracked file. Paths are relative to the repository
//! root; deleted files and submodules are never selected.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode, Repository};

use super::GitError;

pub(super) fn open(root: &Path) -> Result<Repository, GitError> {
    super::open_repository(root).map_err(|source| GitError::Open {
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

/// What a staged run needs to know of the repository, from one read of the
/// index: the staged files, and which tracked files may have unstaged
/// changes.
#[derive(Debug)]
pub struct StagedSelection {
    pub files: Vec<PathBuf>,
    /// The only tracked files that may differ from the index (their stat
    /// data says so); `None` when the index was read by libgit2 and nothing
    /// is known yet.
    pub unstaged: Option<UnstagedHint>,
}

/// The candidates for unstaged changes, as `protect` takes them.
#[derive(Debug, Clone)]
pub struct UnstagedHint(pub(super) Vec<Vec<u8>>);

/// The staged files and the unstaged candidates. The work tree is looked
/// at on `threads` threads while the index is compared with `HEAD`.
pub fn staged_selection(root: &Path, threads: usize) -> Result<StagedSelection, GitError> {
    let repo = open(root)?;
    let Some(index) = super::read_own_index(&repo)? else {
        // A split or sparse index, or another object format: libgit2's way.
        return Ok(StagedSelection {
            files: staged_files(root)?,
            unstaged: None,
        });
    };
    // The work tree is looked at while the index is compared with HEAD;
    // this thread joins the scan when the comparison is done.
    let scan = super::index::Scan::new(root, &index);
    let (files, candidates) = scan.alongside(threads, || staged_in(&repo, &index));
    Ok(StagedSelection {
        files: files?,
        unstaged: Some(UnstagedHint(candidates)),
    })
}

/// The index entries whose content or mode differs from `HEAD`'s, or that
/// `HEAD` does not have: what `git diff --cached --name-only` lists, less
/// deletions and submodules. Intent-to-add entries are not staged content.
/// A directory whose cached tree (the index's cache-tree) is `HEAD`'s has
/// nothing staged: neither its tree nor its entries are read.
fn staged_in(repo: &Repository, index: &super::index::Index) -> Result<Vec<PathBuf>, GitError> {
    let (head, same_dirs) = head_files(repo, &index.trees)?;
    let mut head = head.iter().peekable();
    let unchanged = |path: &[u8]| {
        // The greatest unchanged directory not after `path` is the only
        // one that can hold it.
        let at = same_dirs.partition_point(|dir| dir.as_slice() <= path);
        at > 0 && path.starts_with(&same_dirs[at - 1])
    };
    let mut out = Vec::new();
    // Both lists are sorted by path bytes: one walk compares them.
    for entry in &index.entries {
        if entry.stage != 0 || entry.is_gitlink() || entry.intent_to_add() {
            continue;
        }
        let mut same = false;
        while let Some((path, mode, oid)) = head.peek() {
            match path.as_slice().cmp(&entry.path) {
                std::cmp::Ordering::Less => {
                    head.next();
                }
                std::cmp::Ordering::Equal => {
                    same = *mode == entry.mode && oid.as_bytes() == entry.oid;
                    break;
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        if !same && !unchanged(&entry.path) {
            out.push(PathBuf::from(OsStr::from_bytes(&entry.path)));
        }
    }
    Ok(out)
}

/// The tree of `HEAD`; `None` on an unborn branch (the first commit of a
/// new repository).
fn head_tree(repo: &Repository) -> Result<Option<git2::Tree<'_>>, GitError> {
    match repo.head() {
        Ok(head) => head
            .peel_to_tree()
            .map(Some)
            .map_err(|e| failed("the tree of HEAD", e)),
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(failed("HEAD", e)),
    }
}

/// A file of `HEAD`: its full path, mode and blob (or commit) id.
type HeadFile = (Vec<u8>, u32, git2::Oid);

/// Every non-tree entry of `HEAD`'s tree with its full path, sorted by path
/// bytes as the index is (empty before the first commit), and the
/// directories left out because `trees` (the index's cache-tree) holds
/// `HEAD`'s tree for them, sorted, each with its trailing `/` (the root as
/// the empty path).
fn head_files(
    repo: &Repository,
    trees: &[(Vec<u8>, [u8; 20])],
) -> Result<(Vec<HeadFile>, Vec<Vec<u8>>), GitError> {
    let Some(tree) = head_tree(repo)? else {
        return Ok((Vec::new(), Vec::new()));
    };
    let cached = |dir: &[u8], id: git2::Oid| {
        trees
            .binary_search_by(|(path, _)| path.as_slice().cmp(dir))
            .is_ok_and(|at| trees[at].1 == id.as_bytes())
    };
    let mut same_dirs = Vec::new();
    if cached(b"", tree.id()) {
        same_dirs.push(Vec::new());
        return Ok((Vec::new(), same_dirs));
    }
    let mut out = Vec::new();
    // Recursion by hand: libgit2's walk gives directory names as text and
    // stops at one that is not UTF-8.
    let mut pending = vec![(Vec::new(), tree)];
    while let Some((prefix, tree)) = pending.pop() {
        for entry in &tree {
            let mut path = prefix.clone();
            path.extend_from_slice(entry.name_bytes());
            let mode = u32::try_from(entry.filemode()).unwrap_or(0);
            if entry.kind() == Some(git2::ObjectType::Tree) {
                path.push(b'/');
                if cached(&path, entry.id()) {
                    same_dirs.push(path);
                    continue;
                }
                let subtree = repo
                    .find_tree(entry.id())
                    .map_err(|e| failed("a tree of HEAD", e))?;
                pending.push((path, subtree));
            } else {
                out.push((path, mode, entry.id()));
            }
        }
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    same_dirs.sort_unstable();
    Ok((out, same_dirs))
}

/// The index against `HEAD` (or against nothing before the first commit).
pub(super) fn staged_diff<'r>(
    repo: &'r Repository,
    root: &Path,
    options: &mut DiffOptions,
) -> Result<git2::Diff<'r>, GitError> {
    let head_tree = head_tree(repo)?;
    let index = repo
        .index()
        .map_err(|source| super::repo::index_error(root, source))?;
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
    let mut index = repo
        .index()
        .map_err(|source| super::repo::index_error(root, source))?;
    let mut builder = git2::build::CheckoutBuilder::new();
    builder
        .force()
        .recreate_missing(true)
        .update_index(false)
        .target_dir(dir);
    repo.checkout_index(Some(&mut index), Some(&mut builder))
        .map_err(|e| failed("a snapshot of the index", e))
}
