//! File selection: the staged files, the files changed on a branch since its
//! merge base, or every tracked file. Paths are relative to the repository
//! root; deleted files and submodules are never selected.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffOptions, FileMode, Repository};

use super::index::{
    Entry, Fields, Index, INTENT_TO_ADD, MODE_FILE, MODE_LINK, MODE_TREE, MODE_TYPE, SKIP_WORKTREE,
};
use super::GitError;

pub(super) fn open(root: &Path) -> Result<Repository, GitError> {
    super::open_repository(root).map_err(|source| super::repo::open_error(root, source))
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
    Ok(diff_paths(diff, Sides::NewOfExisting))
}

/// Which names of a diff's files `diff_paths` takes.
#[derive(Clone, Copy)]
enum Sides {
    /// The new name of each file that still exists: added, copied,
    /// modified, renamed and type-changed.
    NewOfExisting,
    /// Both names of every file, added, changed or deleted.
    Both,
}

/// The paths of a diff's files, as `sides` picks them, sorted and without
/// repeats; submodules are left out.
fn diff_paths(diff: &git2::Diff<'_>, sides: Sides) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let files = match sides {
            Sides::NewOfExisting => {
                if !matches!(
                    delta.status(),
                    Delta::Added
                        | Delta::Copied
                        | Delta::Modified
                        | Delta::Renamed
                        | Delta::Typechange
                ) {
                    continue;
                }
                [None, Some(delta.new_file())]
            }
            Sides::Both => [Some(delta.old_file()), Some(delta.new_file())],
        };
        for file in files.into_iter().flatten() {
            if file.mode() == FileMode::Commit {
                continue;
            }
            if let Some(path) = file.path_bytes() {
                // Bytes, not text: file names need not be UTF-8.
                out.push(PathBuf::from(OsStr::from_bytes(path)));
            }
        }
    }
    out.sort();
    out.dedup();
    out
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

/// A digest of what the index stages, the input a staged run's checks
/// judge: each entry's path, mode, object id, conflict stage and
/// intent-to-add flag, in the index's order. Not its stat data, which git
/// (a `git status`) and phasegate refresh without any change to what is
/// staged. Read with phasegate's own reader, or libgit2's where that one
/// leaves the index to it (a split or sparse index). With the commit
/// `HEAD` is on, which the staged files are told from.
pub fn staged_digest(root: &Path) -> Result<String, GitError> {
    let repo = open(root)?;
    let mut said: Vec<u8> = Vec::new();
    let mut entry = |path: &[u8], mode: u32, oid: &[u8], stage: u8, intent: bool| {
        said.extend_from_slice(path);
        said.push(0);
        said.extend_from_slice(&mode.to_be_bytes());
        said.extend_from_slice(oid);
        said.push(stage);
        said.push(u8::from(intent));
    };
    if let Some(index) = super::read_own_index(&repo)? {
        for e in &index.entries {
            let f = index.fields(e);
            entry(index.path(e), f.mode, &f.oid, f.stage, f.intent_to_add());
        }
    } else {
        let index = repo
            .index()
            .map_err(|source| super::repo::index_error(root, source))?;
        for e in index.iter() {
            let stage = u8::try_from((e.flags & super::index::STAGE_MASK) >> 12).unwrap_or(0);
            let intent = e.flags_extended & INTENT_TO_ADD != 0;
            entry(&e.path, e.mode, e.id.as_bytes(), stage, intent);
        }
    }
    // What is staged is the index against `HEAD`: the files selected, and
    // the errors the change made rather than found, follow from both.
    match repo.head() {
        Ok(head) => match head.target() {
            Some(id) => said.extend_from_slice(id.as_bytes()),
            None => said.push(0),
        },
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => said.push(0),
        Err(e) => return Err(failed("`HEAD`", e)),
    }
    let digest = git2::Oid::hash_object(git2::ObjectType::Blob, &said)
        .map_err(|e| failed("the index", e))?;
    Ok(format!("index:{digest}"))
}

/// The paths the index holds unmerged (a merge, rebase or cherry-pick
/// left a conflict there), as libgit2 reads the index.
fn unmerged_files(root: &Path) -> Result<Vec<PathBuf>, GitError> {
    let repo = open(root)?;
    let index = repo
        .index()
        .map_err(|source| super::repo::index_error(root, source))?;
    let conflicts = index.conflicts().map_err(|e| failed("the index", e))?;
    let mut out = Vec::new();
    for conflict in conflicts {
        let conflict = conflict.map_err(|e| failed("the index", e))?;
        let entry = conflict.our.or(conflict.their).or(conflict.ancestor);
        if let Some(entry) = entry {
            // Bytes, not text: file names need not be UTF-8.
            out.push(PathBuf::from(OsStr::from_bytes(&entry.path)));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Every tracked file the work tree holds, as `tracked_files` lists them,
/// and, apart, the tracked files it lacks: deleted there without the
/// deletion being staged, left out by a sparse checkout, or a directory
/// now. A check given those names would only fail to open them. Only the
/// files whose stat data differs from the index's (looked at on
/// `threads` threads) are looked at again.
pub fn tracked_in_work_tree(
    root: &Path,
    threads: usize,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), GitError> {
    let repo = open(root)?;
    // A split or sparse index, or another object format: libgit2 lists
    // the files, and each is looked at.
    let Some(index) = super::read_own_index(&repo)? else {
        let mut files = super::tracked_files(root)?;
        let absent = take_absent(root, &mut files, |_| true);
        return Ok((files, absent));
    };
    let scan = super::index::Scan::new(root, &index, super::index::StatCheck::of(&repo));
    let ((), mut unsure) = scan.alongside(threads, || ());
    drop(scan);
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in &index.entries {
        let fields = index.fields(entry);
        // As `tracked_files` lists them.
        if fields.is_gitlink() || fields.intent_to_add() {
            continue;
        }
        let path = index.path(entry);
        // The scan passes over what a sparse checkout leaves out.
        if fields.extended & SKIP_WORKTREE != 0 {
            unsure.push(path.to_vec());
        }
        // Conflicted paths have an entry per stage.
        if files
            .last()
            .is_none_or(|last| last.as_os_str().as_bytes() != path)
        {
            files.push(path_of(&index, entry));
        }
    }
    unsure.sort_unstable();
    let absent = take_absent(root, &mut files, |path| {
        unsure.binary_search_by(|c| c.as_slice().cmp(path)).is_ok()
    });
    Ok((files, absent))
}

/// Takes out of `files` those the work tree lacks (or holds a directory
/// in place of), looking only at those `unsure` names; the files taken
/// out.
fn take_absent(
    root: &Path,
    files: &mut Vec<PathBuf>,
    unsure: impl Fn(&[u8]) -> bool,
) -> Vec<PathBuf> {
    take_out(files, |file| {
        unsure(file.as_os_str().as_bytes())
            && !root
                .join(file)
                .symlink_metadata()
                .is_ok_and(|meta| !meta.is_dir())
    })
}

/// Takes the files `out` picks out of `files`, in order; those taken.
fn take_out(files: &mut Vec<PathBuf>, out: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let (taken, kept) = std::mem::take(files).into_iter().partition(|f| out(f));
    *files = kept;
    taken
}

/// What a staged run needs to know of the repository, from one read of the
/// index: the staged files, and which tracked files may have unstaged
/// changes.
#[derive(Debug)]
pub struct StagedSelection {
    pub files: Vec<PathBuf>,
    /// The paths a conflict left unmerged: nothing can be committed until
    /// each is resolved, and what a check would read there is no version
    /// of the file a commit could hold.
    pub unmerged: Vec<PathBuf>,
    /// The only tracked files that may differ from the index (their stat
    /// data says so); `None` when the index was read by libgit2 and nothing
    /// is known yet.
    pub unstaged: Option<UnstagedHint>,
}

/// The candidates for unstaged changes, as `protect` takes them.
#[derive(Debug, Clone)]
pub struct UnstagedHint(pub(super) Vec<Vec<u8>>);

impl UnstagedHint {
    /// Whether `path` may have unstaged changes.
    pub fn names(&self, path: &[u8]) -> bool {
        self.0.iter().any(|p| p == path)
    }
}

/// The staged files and the unstaged candidates. The work tree is looked
/// at on `threads` threads while the index is compared with `HEAD`.
pub fn staged_selection(root: &Path, threads: usize) -> Result<StagedSelection, GitError> {
    staged_selection_held(root, threads).0
}

/// What a staged selection read (the repository and its index), handed
/// back so the caller can let go of it when it suits (freeing a large index
/// costs a fraction of a millisecond that need not be waited for), or use
/// it again to compare the work tree after the checks.
pub struct Held(Option<(Index, Repository)>);

impl Held {
    /// Whether the selection found no candidate for an unstaged change:
    /// then nothing is set aside, and the work tree is compared with this
    /// index after the checks.
    pub fn wanted_after(&self, selection: &Result<StagedSelection, GitError>) -> bool {
        self.0.is_some()
            && matches!(selection, Ok(StagedSelection { unstaged: Some(hint), .. }) if hint.0.is_empty())
    }

    pub(super) fn into_parts(self) -> Option<(Index, Repository)> {
        self.0
    }

    pub(super) fn parts(&self) -> Option<(&Index, &Repository)> {
        self.0.as_ref().map(|(index, repo)| (index, repo))
    }

    /// The index and repository as they are now, for the comparison after
    /// the checks when the selection did not keep them; `None` for an index
    /// only libgit2 reads.
    pub fn now(root: &Path) -> Option<Held> {
        let repo = open(root).ok()?;
        let index = super::read_own_index(&repo).ok()??;
        Some(Held(Some((index, repo))))
    }

    /// Whether the selection kept what it read (see `wanted_after`).
    pub fn kept_by(unstaged: Option<&UnstagedHint>) -> bool {
        unstaged.is_some_and(|hint| hint.0.is_empty())
    }
}

/// `staged_selection`, with what it read still held.
pub fn staged_selection_held(
    root: &Path,
    threads: usize,
) -> (Result<StagedSelection, GitError>, Held) {
    let repo = match open(root) {
        Ok(repo) => repo,
        Err(e) => return (Err(e), Held(None)),
    };
    let index = match super::read_own_index(&repo) {
        Ok(Some(index)) => index,
        // A split or sparse index, or another object format: libgit2's way.
        Ok(None) => {
            let selection = staged_files(root).and_then(|files| {
                Ok(StagedSelection {
                    files,
                    unmerged: unmerged_files(root)?,
                    unstaged: None,
                })
            });
            return (selection, Held(None));
        }
        Err(e) => return (Err(e), Held(None)),
    };
    // The work tree is looked at while the index is compared with HEAD;
    // this thread joins the scan when the comparison is done.
    let check = super::index::StatCheck::of(&repo);
    let scan = super::index::Scan::new(root, &index, check);
    let (files, candidates) = scan.alongside(threads, || staged_in(&repo, &index));
    drop(scan);
    let selection = files.map(|(files, unmerged)| StagedSelection {
        files,
        unmerged,
        unstaged: Some(UnstagedHint(candidates)),
    });
    (selection, Held(Some((index, repo))))
}

/// The index entries whose content or mode differs from `HEAD`'s, or that
/// `HEAD` does not have: what `git diff --cached --name-only` lists, less
/// deletions and submodules. Intent-to-add entries are not staged content.
/// A directory whose cached tree (the index's cache-tree) is `HEAD`'s has
/// nothing staged: neither its tree nor its entries are read (git drops
/// the cached tree of every directory that holds an unmerged path). With
/// the staged files, the unmerged paths.
fn staged_in(repo: &Repository, index: &Index) -> Result<(Vec<PathBuf>, Vec<PathBuf>), GitError> {
    let mut walk = HeadWalk {
        index,
        prefix: Vec::new(),
        staged: Vec::new(),
        unmerged: Vec::new(),
    };
    match head_tree(repo)? {
        None => walk.not_in_head(&index.entries),
        Some(tree) => {
            let odb = repo.odb().map_err(|e| failed("the object database", e))?;
            walk.tree(&odb, tree.id(), &index.entries)?;
        }
    }
    // Every stage of an unmerged path has an entry of its own.
    walk.unmerged.dedup();
    Ok((walk.staged, walk.unmerged))
}

/// One walk of `HEAD`'s trees alongside the index. Both are sorted the same
/// way (git orders a tree's entries as full paths, a directory's name with
/// its `/`), so each tree is read once, compared with the run of index
/// entries under its directory, and no list of `HEAD`'s files is built.
struct HeadWalk<'a> {
    index: &'a Index,
    /// The directory being compared, with its trailing `/` (empty at the
    /// root).
    prefix: Vec<u8>,
    staged: Vec<PathBuf>,
    /// The entries of conflict stages 1 to 3, in the index's order.
    unmerged: Vec<PathBuf>,
}

impl HeadWalk<'_> {
    /// Compares the tree `id` at `self.prefix` with `entries`, the index
    /// entries under that directory.
    fn tree(
        &mut self,
        odb: &git2::Odb<'_>,
        id: git2::Oid,
        mut entries: &[Entry],
    ) -> Result<(), GitError> {
        // Nothing in the index under this directory: its files were
        // deleted, and deletions are not selected.
        if entries.is_empty() || self.cached(id) {
            return Ok(());
        }
        let object = odb.read(id).map_err(|e| failed("a tree of HEAD", e))?;
        if object.kind() != git2::ObjectType::Tree {
            return Err(damaged(id));
        }
        let at = self.prefix.len();
        for item in TreeItems(object.data()) {
            let (mode, name, oid) = item.ok_or_else(|| damaged(id))?;
            let dir = mode == MODE_TREE;
            // Index entries before this one are not in HEAD: added.
            let before = entries
                .iter()
                .take_while(|e| after_prefix(self.index.path(e), at, name, dir).is_lt())
                .count();
            self.not_in_head(&entries[..before]);
            entries = &entries[before..];
            if dir {
                let under = entries
                    .iter()
                    .take_while(|e| after_prefix(self.index.path(e), at, name, true).is_eq())
                    .count();
                self.prefix.extend_from_slice(name);
                self.prefix.push(b'/');
                let subtree = git2::Oid::from_bytes(&oid).map_err(|_| damaged(id))?;
                let result = self.tree(odb, subtree, &entries[..under]);
                self.prefix.truncate(at);
                result?;
                entries = &entries[under..];
            } else {
                // Every stage of a conflicted path has the same name.
                let same = entries
                    .iter()
                    .take_while(|e| after_prefix(self.index.path(e), at, name, false).is_eq())
                    .count();
                for entry in &entries[..same] {
                    let fields = self.index.fields(entry);
                    if fields.stage != 0 {
                        self.unmerged.push(path_of(self.index, entry));
                    } else if staged(&fields)
                        && (fields.mode != canonical(mode) || fields.oid != oid)
                    {
                        self.staged.push(path_of(self.index, entry));
                    }
                }
                entries = &entries[same..];
            }
        }
        self.not_in_head(entries);
        Ok(())
    }

    /// Whether the index's cache-tree holds `id` for this directory.
    fn cached(&self, id: git2::Oid) -> bool {
        let trees = &self.index.trees;
        trees
            .binary_search_by(|(path, _)| path.as_slice().cmp(&self.prefix))
            .is_ok_and(|at| trees[at].1 == id.as_bytes())
    }

    /// Index entries `HEAD` does not have: each is staged content, or
    /// unmerged.
    fn not_in_head(&mut self, entries: &[Entry]) {
        let index = self.index;
        for entry in entries {
            let fields = index.fields(entry);
            if fields.stage != 0 {
                self.unmerged.push(path_of(index, entry));
            } else if staged(&fields) {
                self.staged.push(path_of(index, entry));
            }
        }
    }
}

/// An index entry that can carry staged content: resolved, a file or
/// link (not a submodule), not only intent-to-add.
fn staged(entry: &Fields) -> bool {
    entry.stage == 0 && !entry.is_gitlink() && !entry.intent_to_add()
}

fn path_of(index: &Index, entry: &Entry) -> PathBuf {
    // Bytes, not text: file names need not be UTF-8.
    PathBuf::from(OsStr::from_bytes(index.path(entry)))
}

/// `path` past its first `at` bytes (its directory) against a tree entry
/// `name`, which for a directory is ordered as `name/`. `Equal` for a
/// directory means `path` lies under it.
fn after_prefix(path: &[u8], at: usize, name: &[u8], dir: bool) -> std::cmp::Ordering {
    let rest = path.get(at..).unwrap_or_default();
    if !dir {
        return rest.cmp(name);
    }
    match rest.get(..name.len()).map(|head| head.cmp(name)) {
        Some(std::cmp::Ordering::Equal) => match rest.get(name.len()) {
            Some(b'/') => std::cmp::Ordering::Equal,
            Some(&c) => c.cmp(&b'/'),
            None => std::cmp::Ordering::Less,
        },
        Some(order) => order,
        // Shorter than `name`: ordered by the bytes it has (a proper
        // prefix sorts first).
        None => rest.cmp(name),
    }
}

/// The mode git compares: a regular file is 100644 or 100755 whatever
/// other permission bits an old tree recorded.
fn canonical(mode: u32) -> u32 {
    if mode & MODE_TYPE == MODE_FILE {
        if mode & 0o100 != 0 {
            0o100_755
        } else {
            0o100_644
        }
    } else {
        mode
    }
}

fn damaged(id: git2::Oid) -> GitError {
    failed(
        "a tree of HEAD",
        git2::Error::from_str(&format!("tree {id} is damaged (run `git fsck`)")),
    )
}

/// The entries of a raw tree object: `<octal mode> <name>\0<20-byte id>`,
/// repeated; `None` for a malformed one, after which nothing follows.
struct TreeItems<'a>(&'a [u8]);

/// A tree entry: its mode, name and object id.
type TreeItem<'a> = (u32, &'a [u8], [u8; 20]);

impl<'a> Iterator for TreeItems<'a> {
    type Item = Option<TreeItem<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let Some((item, rest)) = tree_item(self.0) else {
            self.0 = &[];
            return Some(None);
        };
        self.0 = rest;
        Some(Some(item))
    }
}

/// The first entry of a raw tree and what follows it.
fn tree_item(bytes: &[u8]) -> Option<(TreeItem<'_>, &[u8])> {
    let space = memchr::memchr(b' ', bytes)?;
    let mode = bytes[..space].iter().try_fold(0u32, |m, &d| {
        let digit = (b'0'..=b'7').contains(&d).then(|| u32::from(d - b'0'))?;
        m.checked_mul(8)?.checked_add(digit)
    })?;
    let rest = &bytes[space + 1..];
    let nul = memchr::memchr(0, rest)?;
    let oid: [u8; 20] = rest.get(nul + 1..nul + 21)?.try_into().ok()?;
    Some(((mode, &rest[..nul], oid), &rest[nul + 21..]))
}

/// The tree of `HEAD`; `None` on an unborn branch (the first commit of a
/// new repository).
fn head_tree(repo: &Repository) -> Result<Option<git2::Tree<'_>>, GitError> {
    match super::refs::head_commit(repo).map_err(|e| failed("HEAD", e))? {
        Some(id) => repo
            .find_commit(id)
            .and_then(|commit| commit.tree())
            .map(Some)
            .map_err(|e| failed("the tree of HEAD", e)),
        None => Ok(None),
    }
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

/// What `spec` names in `repo`, peeled by `peel` (to a commit, a tree); a
/// clear error that names `spec` when it names nothing of the kind.
fn named<'r, T>(
    repo: &'r Repository,
    spec: &str,
    peel: impl FnOnce(git2::Object<'r>) -> Result<T, git2::Error>,
) -> Result<T, GitError> {
    let object = super::refs::lookup(repo, spec).map_err(|source| GitError::Revision {
        spec: spec.to_string(),
        hint: fetch_hint(repo, spec, &source),
        source,
    })?;
    let kind = kind_of(&object);
    let tag = if object.kind() == Some(git2::ObjectType::Tag) {
        "a tag of "
    } else {
        ""
    };
    peel(object).map_err(|source| GitError::Revision {
        spec: spec.to_string(),
        hint: format!(
            "it names {tag}a {kind}, not a commit: name a branch, a commit, or a tag of a commit"
        ),
        source,
    })
}

/// The fetches that bring more of a shallow clone's history.
const FETCH_MORE: &str =
    "fetch more, e.g. `git fetch --deepen=100`, or all of it with `git fetch --unshallow`";

/// Whether the repository at `root` is a shallow clone (`.git/shallow`):
/// history it lacks may be cut off rather than missing, and a CI job is
/// told the setting that clones all of it.
pub fn is_shallow(root: &Path) -> bool {
    open(root).is_ok_and(|repo| repo.is_shallow())
}

/// What to tell someone whose shallow clone lacks history it needs.
fn deepen() -> String {
    format!("this is a shallow clone, and the history it needs is cut off: {FETCH_MORE}")
}

/// Whether `spec` names the current branch (`HEAD`, `@`, `HEAD~1`, or the
/// branch's own name) and that branch has no commit yet: no fetch brings
/// that, and naming a remote for it would mislead.
fn names_unborn_head(repo: &Repository, spec: &str) -> bool {
    let Ok(super::refs::Head {
        branch: Some(branch),
        commit: None,
    }) = super::refs::head(repo)
    else {
        return false;
    };
    let branch = branch.as_str();
    let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    let base = spec
        .find(['~', '^', '@'])
        .filter(|&at| at > 0)
        .map_or(spec, |at| &spec[..at]);
    spec == "@" || base == "HEAD" || base == short || base == branch
}

/// Whether `spec` names a commit by its place in history (`HEAD~3`,
/// `main^2`, `main@{1}`, `main:path`) or by an abbreviated id: no fetch
/// brings such a name, only the history it is in.
fn names_by_history(spec: &str) -> bool {
    spec.contains(['~', '^', ':'])
        || spec.contains("@{")
        || (spec.len() < 40 && spec.len() >= 4 && spec.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The `git fetch` that would bring `spec`: a remote-tracking name
/// (`origin/main`, `refs/remotes/origin/main`) is fetched as its branch
/// from its remote; anything else from `origin`, or the only remote. A
/// name no fetch can bring asks for more history instead.
fn fetch_hint(repo: &Repository, spec: &str, error: &git2::Error) -> String {
    if error.code() == git2::ErrorCode::Ambiguous {
        return "it is ambiguous here: give more of the commit id, or the full ref name"
            .to_string();
    }
    if names_unborn_head(repo, spec) {
        return "the current branch has no commit yet: commit first, or check what is staged with `phasegate run`".to_string();
    }
    if names_by_history(spec) {
        return if repo.is_shallow() {
            deepen()
        } else {
            "check the name, or fetch the history it is in, e.g. `git fetch origin`".to_string()
        };
    }
    let remotes: Vec<String> = repo
        .remotes()
        .map(|names| {
            names
                .iter()
                .flatten()
                .flatten()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let tracking = spec.strip_prefix("refs/remotes/").unwrap_or(spec);
    for remote in &remotes {
        if let Some(branch) = tracking
            .strip_prefix(remote.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|branch| !branch.is_empty())
        {
            // A clone of one branch (`git clone --depth 1` is one) fetches
            // no other into a remote-tracking ref unless told where.
            let wanted = format!("refs/remotes/{remote}/{branch}");
            let fetched = if fetched_into(repo, remote, branch, &wanted) {
                branch.to_string()
            } else {
                format!("{branch}:{wanted}")
            };
            // A shallow clone (actions/checkout's default, one commit deep)
            // that fetched only the branch still has no merge base with
            // it: the fetch that lifts the depth brings both at once.
            if repo.is_shallow() {
                return format!(
                    "it is missing from this clone, which is shallow: `git fetch --unshallow {remote} {fetched}` brings it with the history its merge base is in (`git fetch {remote} {fetched}` alone leaves the merge base cut off)"
                );
            }
            return format!(
                "it is missing from this clone: `git fetch {remote} {fetched}` brings it"
            );
        }
    }
    let remote = if remotes.iter().any(|r| r == "origin") || remotes.is_empty() {
        "origin"
    } else {
        remotes[0].as_str()
    };
    if remotes.is_empty() {
        // A remote-tracking name says which remote and branch it would be.
        let (remote, branch) = tracking
            .split_once('/')
            .filter(|(r, b)| (*r == "origin" || tracking != spec) && !r.is_empty() && !b.is_empty())
            .unwrap_or((remote, spec));
        return format!(
            "this repository has no remote to fetch it from; check the name, or add the remote and `git fetch {remote} {branch}`"
        );
    }
    // A name is fetched into a ref of that name, so that it answers here
    // (`git fetch origin main` alone updates `origin/main`, not `main`);
    // which kind of ref only the remote knows. A commit id needs no ref.
    let fetch = if is_full_id(spec) {
        format!("it is missing from this clone: `git fetch {remote} {spec}` brings it")
    } else {
        format!("it is missing from this clone: `git fetch {remote} {spec}:{spec}` brings it if it is a branch of `{remote}`, `git fetch {remote} tag {spec}` if it is a tag")
    };
    // A full commit id in a shallow clone is most often a commit beyond its
    // depth (GitLab's merge-request diff base further back than
    // `GIT_DEPTH`): more history brings it as well as a fetch by id, which
    // some servers refuse.
    if repo.is_shallow() && is_full_id(spec) {
        return format!(
            "{fetch}; this is a shallow clone, and the commit may be in the history it cut off: {FETCH_MORE}"
        );
    }
    fetch
}

/// Whether `git fetch remote branch` updates the remote-tracking ref
/// `wanted`: whether one of the remote's configured fetch refspecs maps
/// the branch there (`+refs/heads/*:refs/remotes/origin/*`, which a clone
/// of one branch narrows to that branch).
fn fetched_into(repo: &Repository, remote: &str, branch: &str, wanted: &str) -> bool {
    let Ok(remote) = repo.find_remote(remote) else {
        return false;
    };
    let source = format!("refs/heads/{branch}");
    remote.refspecs().any(|spec| {
        spec.direction() == git2::Direction::Fetch
            && spec.src_matches(&source)
            && spec
                .transform(&source)
                .is_ok_and(|to| to.as_str() == Ok(wanted))
    })
}

/// An object id of zeros: what git (a pre-push hook's input) and CI name
/// as the commit a ref did not have before, or has no longer.
pub fn is_zero_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b == b'0')
}

/// Whether `spec` is a whole commit id (SHA-1 or SHA-256), not a name.
fn is_full_id(spec: &str) -> bool {
    matches!(spec.len(), 40 | 64) && spec.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The text of `path` in the commit `spec`; `Ok(None)` when the commit has
/// no such file.
pub fn file_at(root: &Path, spec: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
    Ok(files_at(root, spec, &[Path::new(path)])?.pop().flatten())
}

/// What a commit holds at a path, a symbolic link not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeEntry {
    File(Vec<u8>),
    /// A symbolic link, and the path it holds.
    Link(Vec<u8>),
    Directory,
    /// Something the commit holds there (the file, or a directory on the
    /// way to it) whose object this clone lacks, as a partial clone
    /// (`--filter=blob:none`) leaves them until git fetches them: git's
    /// reason. Not that the commit has no such file.
    Unfetched(String),
}

/// What the commit `spec` holds at each of `paths`, links not followed
/// (in the path's last part or the directories above it): `None` where it
/// holds nothing, or a submodule; `TreeEntry::Unfetched` where it holds
/// something this clone lacks the object of.
pub fn entries_at(
    root: &Path,
    spec: &str,
    paths: &[&Path],
) -> Result<Vec<Option<TreeEntry>>, GitError> {
    let repo = open(root)?;
    let tree = named(&repo, spec, |object| object.peel_to_commit()?.tree())?;
    Ok(paths
        .iter()
        .map(|path| entry_in(&repo, &tree, path))
        .collect())
}

/// What `tree` holds at `path`, read a directory at a time, so that an
/// object this clone lacks is told from a name the tree does not hold.
fn entry_in(repo: &Repository, tree: &git2::Tree<'_>, path: &Path) -> Option<TreeEntry> {
    let parts: Vec<&OsStr> = path.iter().collect();
    let (last, above) = parts.split_last()?;
    let mut dir = tree.clone();
    for part in above {
        let id = {
            let entry = dir.get_name_bytes(part.as_bytes())?;
            if entry.kind() != Some(git2::ObjectType::Tree) {
                return None;
            }
            entry.id()
        };
        dir = match repo.find_tree(id) {
            Ok(below) => below,
            Err(e) => return Some(TreeEntry::Unfetched(e.message().to_string())),
        };
    }
    let entry = dir.get_name_bytes(last.as_bytes())?;
    let mode = u32::try_from(entry.filemode()).unwrap_or(0);
    match entry.kind() {
        Some(git2::ObjectType::Tree) => Some(TreeEntry::Directory),
        Some(git2::ObjectType::Blob) => Some(match blob_content(repo, entry.id(), path, None) {
            Err(e) => TreeEntry::Unfetched(e.message().to_string()),
            Ok(content) if mode & MODE_TYPE == MODE_LINK => TreeEntry::Link(content),
            Ok(content) => TreeEntry::File(content),
        }),
        _ => None,
    }
}

/// The names in the directory `dir` (relative to the root; empty for the
/// root) of the commit `spec`, each with whether it is a directory: one
/// directory read, none below it. None for a directory the commit does
/// not hold; an error for one this clone lacks (a partial clone).
pub fn names_at(
    root: &Path,
    spec: &str,
    dir: &Path,
) -> Result<Vec<(std::ffi::OsString, bool)>, GitError> {
    let repo = open(root)?;
    let mut tree = named(&repo, spec, |object| object.peel_to_commit()?.tree())?;
    for part in dir {
        let id = match tree.get_name_bytes(part.as_bytes()) {
            Some(entry) if entry.kind() == Some(git2::ObjectType::Tree) => entry.id(),
            _ => return Ok(Vec::new()),
        };
        tree = repo
            .find_tree(id)
            .map_err(|e| failed("a directory of the commit", e))?;
    }
    Ok(tree
        .iter()
        .map(|entry| {
            (
                OsStr::from_bytes(entry.name_bytes()).to_os_string(),
                entry.kind() == Some(git2::ObjectType::Tree),
            )
        })
        .collect())
}

/// The paths (relative to the root, `/`-separated) of the files and
/// symbolic links of the commit `spec` that `keep` accepts, among its
/// root's entries and those of the directories `enter` accepts. The tree
/// is read a directory at a time, only where `enter` leads: what a search
/// a few levels deep needs, never the whole tree of a large repository.
/// Submodules are left out.
pub fn paths_at(
    root: &Path,
    spec: &str,
    mut enter: impl FnMut(&[u8]) -> bool,
    mut keep: impl FnMut(&[u8]) -> bool,
) -> Result<Vec<Vec<u8>>, GitError> {
    let repo = open(root)?;
    let tree = named(&repo, spec, |object| object.peel_to_commit()?.tree())?;
    let mut kept = Vec::new();
    let mut level = vec![(Vec::new(), tree)];
    while !level.is_empty() {
        let mut next = Vec::new();
        for (dir, tree) in level {
            for entry in &tree {
                let mut path = dir.clone();
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(entry.name_bytes());
                match entry.kind() {
                    Some(git2::ObjectType::Tree) if enter(&path) => {
                        let below = repo
                            .find_tree(entry.id())
                            .map_err(|e| failed("a directory of the commit", e))?;
                        next.push((path, below));
                    }
                    Some(git2::ObjectType::Blob) if keep(&path) => kept.push(path),
                    _ => {}
                }
            }
        }
        level = next;
    }
    Ok(kept)
}

/// The content of each of `paths` in the commit `spec`, `None` for a path
/// it does not hold.
pub fn files_at(
    root: &Path,
    spec: &str,
    paths: &[&Path],
) -> Result<Vec<Option<Vec<u8>>>, GitError> {
    contents_at(root, spec, paths, None, false)
        .into_iter()
        .collect()
}

/// One document as a commit or the index holds it: its bytes, or the
/// `GitError::Link` of a symbolic link there that cannot be followed (out
/// of the repository, round in circles, or to no file the commit or the
/// index holds), which is that document's problem, not the run's.
pub type StoredDocument = Result<Vec<u8>, GitError>;

/// Each path's document, `None` for a path the source does not hold; an
/// error only for a failure of the repository itself.
fn documents(
    each: Vec<Result<Option<Vec<u8>>, GitError>>,
) -> Result<Vec<Option<StoredDocument>>, GitError> {
    each.into_iter()
        .map(|read| match read {
            Ok(bytes) => Ok(bytes.map(Ok)),
            Err(link @ GitError::Link { .. }) => Ok(Some(Err(link))),
            Err(e) => Err(e),
        })
        .collect()
}

/// `files_at`, but at most the first `limit + 1` bytes of each file, so a
/// caller can tell a longer one was cut: what sits among the handoff paths
/// may be a log of hundreds of megabytes, and only its beginning is looked
/// at, as when the work tree's copy is read.
pub fn documents_at(
    root: &Path,
    spec: &str,
    paths: &[&Path],
    limit: usize,
) -> Result<Vec<Option<StoredDocument>>, GitError> {
    documents(contents_at(root, spec, paths, Some(limit), true))
}

/// Each path's content in the commit `spec`; `strict`: a link to no file
/// of the commit is an error, not an absent file.
fn contents_at(
    root: &Path,
    spec: &str,
    paths: &[&Path],
    limit: Option<usize>,
    strict: bool,
) -> Vec<Result<Option<Vec<u8>>, GitError>> {
    let repo = match open(root) {
        Ok(repo) => repo,
        Err(e) => return vec![Err(e)],
    };
    // A commit's files: a tag of a tree (or a tree's id) holds files too,
    // but no commit a merge base or a review can be found for.
    let tree = match named(&repo, spec, |object| object.peel_to_commit()?.tree()) {
        Ok(tree) => tree,
        Err(e) => return vec![Err(e)],
    };
    let dangling = strict.then_some("leads to no file the commit holds");
    let lookup = |path: &Path| {
        let Ok(entry) = tree.get_path(path) else {
            return Ok(None);
        };
        let mode = u32::try_from(entry.filemode()).unwrap_or(0);
        if entry.kind() == Some(git2::ObjectType::Tree) && strict {
            return Ok(Some((MODE_TREE, Vec::new())));
        }
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return Err(failed(
                "a file of the commit",
                git2::Error::from_str(&format!("`{}` is not a file", path.display())),
            ));
        }
        let content = blob_content(&repo, entry.id(), path, limit)
            .map_err(|e| failed("a file of the commit", e))?;
        Ok(Some((mode, content)))
    };
    paths
        .iter()
        .map(|path| through_links(path, &lookup, dangling))
        .collect()
}

/// The content of each of `paths` as the index holds it (the content a
/// commit would record), `None` for a path it does not hold.
pub fn files_staged(root: &Path, paths: &[&Path]) -> Result<Vec<Option<Vec<u8>>>, GitError> {
    contents_staged(root, paths, None, false)
        .into_iter()
        .collect()
}

/// `files_staged`, but at most the first `limit + 1` bytes of each file
/// (see `documents_at`).
pub fn documents_staged(
    root: &Path,
    paths: &[&Path],
    limit: usize,
) -> Result<Vec<Option<StoredDocument>>, GitError> {
    documents(contents_staged(root, paths, Some(limit), true))
}

/// Each path's content in the index; `strict` as for `contents_at`.
fn contents_staged(
    root: &Path,
    paths: &[&Path],
    limit: Option<usize>,
    strict: bool,
) -> Vec<Result<Option<Vec<u8>>, GitError>> {
    let repo = match open(root) {
        Ok(repo) => repo,
        Err(e) => return vec![Err(e)],
    };
    let index = match repo.index() {
        Ok(index) => index,
        Err(e) => return vec![Err(failed("the index", e))],
    };
    let dangling = strict.then_some("leads to no file the index holds");
    let lookup = |path: &Path| {
        let Some(entry) = index.get_path(path, 0) else {
            return Ok(None);
        };
        let content =
            blob_content(&repo, entry.id, path, limit).map_err(|e| failed("a staged file", e))?;
        Ok(Some((entry.mode, content)))
    };
    paths
        .iter()
        .map(|path| through_links(path, &lookup, dangling))
        .collect()
}

/// The content of the blob `id` (the file `path`), or its first `limit + 1`
/// bytes when it is longer than `limit`. Its size is read first, from the
/// object's header: reading a long blob whole would hold all of it in
/// memory, twice. A loose object is read as a stream; libgit2 cannot
/// stream one from a pack, which git does (`git cat-file` streams a blob).
fn blob_content(
    repo: &Repository,
    id: git2::Oid,
    path: &Path,
    limit: Option<usize>,
) -> Result<Vec<u8>, git2::Error> {
    use std::io::Read;
    let whole = |repo: &Repository| repo.find_blob(id).map(|blob| blob.content().to_vec());
    let Some(limit) = limit else {
        return whole(repo);
    };
    let odb = repo.odb()?;
    let (size, _) = odb.read_header(id)?;
    if size <= limit {
        return whole(repo);
    }
    let wanted = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    let read = match odb.reader(id) {
        Ok((reader, _, _)) => reader.take(wanted).read_to_end(&mut bytes).map(drop),
        Err(_) => blob_prefix_from_git(repo, id, wanted, &mut bytes),
    };
    read.map_err(|e| {
        git2::Error::from_str(&format!(
            "failed to read the first {limit} bytes of `{}`, a file of {size} bytes: {e}",
            path.display()
        ))
    })?;
    Ok(bytes)
}

/// The first `wanted` bytes of the blob `id`, from `git cat-file`, which
/// streams it; git is stopped once they are read.
fn blob_prefix_from_git(
    repo: &Repository,
    id: git2::Oid,
    wanted: u64,
    bytes: &mut Vec<u8>,
) -> std::io::Result<()> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut git = Command::new("git");
    for key in crate::runner::GIT_LOCAL_ENV {
        git.env_remove(key);
    }
    let mut child = git
        .env("GIT_DIR", repo.path())
        // git streams a blob from a pack only above this size; below it,
        // it reads the blob whole (`core.bigFileThreshold`, 512 MiB).
        .arg("-c")
        .arg(format!("core.bigFileThreshold={wanted}"))
        .args(["cat-file", "blob", &id.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let read = child
        .stdout
        .take()
        .map_or(Ok(0), |out| out.take(wanted).read_to_end(bytes));
    // It may still be writing the rest, which is not wanted.
    let _ = child.kill();
    let status = child.wait()?;
    read?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) < wanted && !status.success() {
        return Err(std::io::Error::other(format!(
            "`git cat-file` failed ({status})"
        )));
    }
    Ok(())
}

/// A file as a commit or the index holds it: its mode and content.
type Stored = (u32, Vec<u8>);

/// The content of `path` as a checkout of the files `lookup` holds (each
/// with its mode) would read it: a symbolic link is followed to the file
/// it names, as reading the work tree's copy does, so a committed or
/// staged `phasegate.toml` that is a link is the configuration it links
/// to, not the link's target path. `None` when there is no such file; an
/// error for a link that leads out of the repository, or round in circles,
/// and, with a `dangling` problem, for one that leads to no file the source
/// holds (a directory, or a file not committed or not staged): a document
/// that does not reach the commit must not pass for one deleted there.
fn through_links(
    path: &Path,
    lookup: &dyn Fn(&Path) -> Result<Option<Stored>, GitError>,
    dangling: Option<&'static str>,
) -> Result<Option<Vec<u8>>, GitError> {
    let mut at = path.to_path_buf();
    // Linux follows at most 40 links in one lookup.
    for _ in 0..40 {
        let followed = at != path;
        let Some((mode, content)) = lookup(&at)? else {
            if let (Some(problem), true) = (dangling, followed) {
                return Err(link_error(path, problem));
            }
            return Ok(None);
        };
        if mode & MODE_TYPE == MODE_TREE {
            // Only a strict lookup finds a directory (see `contents_at`).
            return if followed {
                Err(link_error(path, "leads to a directory"))
            } else {
                Ok(None)
            };
        }
        if mode & MODE_TYPE != MODE_LINK {
            return Ok(Some(content));
        }
        let target = Path::new(OsStr::from_bytes(&content));
        let mut next = at.parent().map(Path::to_path_buf).unwrap_or_default();
        for part in target.components() {
            match part {
                std::path::Component::Normal(name) => next.push(name),
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir if next.pop() => {}
                _ => return Err(link_error(path, "leads out of the repository")),
            }
        }
        at = next;
    }
    Err(link_error(path, "is a loop of symbolic links"))
}

fn link_error(path: &Path, problem: &'static str) -> GitError {
    GitError::Link {
        path: path.to_path_buf(),
        problem,
    }
}
/// A range as it was resolved: the files changed on its end since the
/// merge base, and the commits the names stood for.
#[derive(Debug, Clone)]
pub struct RangeFiles {
    pub files: Vec<PathBuf>,
    /// The full id of the commit `from` named.
    pub from: String,
    /// The full id of the commit `to` named.
    pub to: String,
    /// The full id of their merge base, where the changes are counted from.
    pub merge_base: String,
    /// The names of the range that more than one ref answers to.
    pub ambiguous: Vec<Ambiguity>,
}

/// A short name that more than one ref answers to (a tag and a branch both
/// called `feature`): git warns "refname is ambiguous" and takes the first
/// in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ambiguity {
    /// The name as given.
    pub spec: String,
    /// The full ref name used.
    pub used: String,
    /// The full names of the other refs it could mean.
    pub others: Vec<String>,
}

/// Whether a short `spec` answers to more than one ref, trying them in
/// git's order (gitrevisions(7): `$GIT_DIR/<name>` (`HEAD` and the other
/// pseudo-refs), `refs/<name>`, `refs/tags/<name>`, `refs/heads/<name>`,
/// `refs/remotes/<name>`, `refs/remotes/<name>/HEAD`): the first is the
/// one used.
fn ambiguity(repo: &Repository, spec: &str) -> Option<Ambiguity> {
    if spec.starts_with("refs/") || spec.contains(['~', '^', ':', '@']) {
        return None;
    }
    let found = super::refs::existing(
        repo,
        &[
            spec.to_string(),
            format!("refs/{spec}"),
            format!("refs/tags/{spec}"),
            format!("refs/heads/{spec}"),
            format!("refs/remotes/{spec}"),
            format!("refs/remotes/{spec}/HEAD"),
        ],
    );
    let (used, others) = found.split_first()?;
    (!others.is_empty()).then(|| Ambiguity {
        spec: spec.to_string(),
        used: used.clone(),
        others: others.to_vec(),
    })
}

/// The files changed on `to` since its merge base with `from`, as a merge
/// gate wants them, and what the names were resolved to.
pub fn range_files(root: &Path, from: &str, to: &str) -> Result<RangeFiles, GitError> {
    let repo = open(root)?;
    let mut options = DiffOptions::new();
    options.include_typechange(true);
    let ends = range_ends(&repo, from, to)?;
    let mut diff = diff_of(&repo, &ends, &mut options)?;
    let files = changed_paths(&mut diff)?;
    Ok(RangeFiles {
        files,
        from: ends.from.to_string(),
        to: ends.to.to_string(),
        merge_base: ends.base.to_string(),
        ambiguous: [from, to]
            .iter()
            .filter_map(|spec| ambiguity(&repo, spec))
            .collect(),
    })
}

/// The commits of a range: its two ends and their merge base.
struct RangeEnds {
    from: git2::Oid,
    to: git2::Oid,
    base: git2::Oid,
}

/// The tree of `to` against its merge base with `from`.
pub(super) fn range_diff<'r>(
    repo: &'r Repository,
    from: &str,
    to: &str,
    options: &mut DiffOptions,
) -> Result<git2::Diff<'r>, GitError> {
    let ends = range_ends(repo, from, to)?;
    diff_of(repo, &ends, options)
}

/// The tree of `to` against that of `from` itself (not their merge base).
pub(super) fn tree_diff<'r>(
    repo: &'r Repository,
    from: &str,
    to: &str,
    options: &mut DiffOptions,
) -> Result<git2::Diff<'r>, GitError> {
    let from_tree = named(repo, from, |object| object.peel_to_tree())?;
    let to_tree = named(repo, to, |object| object.peel_to_tree())?;
    repo.diff_tree_to_tree(Some(&from_tree), Some(&to_tree), Some(options))
        .map_err(|e| failed("the changes of the pushed commits", e))
}

/// The paths (relative to the root) where the commit `from` and the commit
/// `to` differ, or for none the work tree (its untracked files included),
/// each by the name either side gives it: a file added, changed or
/// deleted. One diff of the two trees, which passes over every directory
/// both hold alike; submodules are left out.
pub fn paths_differing(
    root: &Path,
    from: &str,
    to: Option<&str>,
) -> Result<Vec<PathBuf>, GitError> {
    let repo = open(root)?;
    let from_tree = named(&repo, from, |object| object.peel_to_commit()?.tree())?;
    let mut options = DiffOptions::new();
    options.include_typechange(true);
    let diff = match to {
        Some(to) => {
            let to_tree = named(&repo, to, |object| object.peel_to_commit()?.tree())?;
            repo.diff_tree_to_tree(Some(&from_tree), Some(&to_tree), Some(&mut options))
        }
        None => {
            options.include_untracked(true).recurse_untracked_dirs(true);
            repo.diff_tree_to_workdir_with_index(Some(&from_tree), Some(&mut options))
        }
    }
    .map_err(|e| failed("the files that differ from the gate's commit", e))?;
    Ok(diff_paths(&diff, Sides::Both))
}

/// The commits `from` and `to` name, and their merge base.
fn range_ends(repo: &Repository, from: &str, to: &str) -> Result<RangeEnds, GitError> {
    let from_commit = named(repo, from, |object| object.peel_to_commit())?;
    let to_commit = named(repo, to, |object| object.peel_to_commit())?;
    let base = repo
        .merge_base(from_commit.id(), to_commit.id())
        .map_err(|source| GitError::MergeBase {
            from: from.to_string(),
            to: to.to_string(),
            hint: if repo.is_shallow() {
                deepen()
            } else {
                "their histories are unrelated: name a commit both have with --from-ref".to_string()
            },
            source,
        })?;
    Ok(RangeEnds {
        from: from_commit.id(),
        to: to_commit.id(),
        base,
    })
}

/// The tree of the range's end against its merge base.
fn diff_of<'r>(
    repo: &'r Repository,
    ends: &RangeEnds,
    options: &mut DiffOptions,
) -> Result<git2::Diff<'r>, GitError> {
    let base_tree = repo
        .find_commit(ends.base)
        .and_then(|c| c.tree())
        .map_err(|e| failed("the merge base", e))?;
    let to_tree = repo
        .find_commit(ends.to)
        .and_then(|c| c.tree())
        .map_err(|e| failed("the tree of the target", e))?;
    repo.diff_tree_to_tree(Some(&base_tree), Some(&to_tree), Some(options))
        .map_err(|e| failed("the changes of the range", e))
}

/// A temporary checkout as it was written: where it came from, and each
/// file's stat data, to tell afterwards what the checks changed in it.
pub struct Written {
    /// The commit checked out, or `None` for the index.
    pub(super) commit: Option<git2::Oid>,
    pub(super) files: Vec<(Vec<u8>, Option<super::protect::FileStat>)>,
}

/// Writes the index's content into `dir` (a temporary checkout), leaving the
/// work tree and the index untouched.
pub fn checkout_index_to(root: &Path, dir: &Path) -> Result<Written, GitError> {
    let repo = open(root)?;
    let mut index = repo
        .index()
        .map_err(|source| super::repo::index_error(root, source))?;
    checkout_to(&repo, root, &mut index, dir, None)
}

/// An index holding the files of `commit`, in memory.
pub(super) fn index_of(repo: &Repository, commit: git2::Oid) -> Result<git2::Index, git2::Error> {
    let tree = repo.find_commit(commit)?.tree()?;
    let mut index = git2::Index::new()?;
    index.read_tree(&tree)?;
    Ok(index)
}

/// The full id of the commit `spec` names.
pub fn commit_id(root: &Path, spec: &str) -> Result<String, GitError> {
    let repo = open(root)?;
    named(&repo, spec, |object| object.peel_to_commit()).map(|commit| commit.id().to_string())
}

/// What the object `oid` is here, as a push names it: `Some("commit")` for
/// a commit or a tag of one, the kind of anything else (a tag of a tree),
/// `None` when this repository does not have it (a commit on a remote that
/// was never fetched).
pub fn object_kind(root: &Path, oid: &str) -> Result<Option<&'static str>, GitError> {
    let repo = open(root)?;
    let Ok(object) = super::refs::lookup(&repo, oid) else {
        return Ok(None);
    };
    if object.peel_to_commit().is_ok() {
        return Ok(Some("commit"));
    }
    Ok(Some(kind_of(&object)))
}

/// Whether the commits `a` and `b` have a common ancestor here: false for
/// unrelated histories (a force push of a new history) and for a shallow
/// clone that cut the one they share; also when either can not be read.
pub fn share_history(root: &Path, a: &str, b: &str) -> bool {
    let Ok(repo) = open(root) else {
        return false;
    };
    let commit = |spec: &str| {
        super::refs::lookup(&repo, spec)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
    };
    match (commit(a), commit(b)) {
        (Ok(a), Ok(b)) => repo.merge_base(a, b).is_ok(),
        _ => false,
    }
}

/// The full id of the merge base of the commits `a` and `b` name: `None`
/// for unrelated histories, a shallow clone that cut the one they share,
/// or a name that can not be read.
pub fn merge_base(root: &Path, a: &str, b: &str) -> Option<String> {
    let repo = open(root).ok()?;
    let commit = |spec: &str| {
        super::refs::lookup(&repo, spec)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
            .ok()
    };
    let base = repo.merge_base(commit(a)?, commit(b)?).ok()?;
    Some(base.to_string())
}

/// What `object` is, in git's word; a tag is named by what it tags.
fn kind_of(object: &git2::Object<'_>) -> &'static str {
    object
        .as_tag()
        .and_then(git2::Tag::target_type)
        .or(object.kind())
        .map_or("object", |kind| kind.str())
}

/// Where a new ref's history leaves what was already published (see
/// `pushed_base`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedBase {
    /// The first parent of the oldest commit no remote-tracking ref
    /// reaches; the pushed commit itself when every commit is there.
    pub from: String,
    /// The remotes whose remote-tracking refs said so when the remote
    /// pushed to has none; empty when that remote's own refs did.
    pub others: Vec<String>,
}

/// Where the history of the commit `spec` leaves what the remote already
/// has, for a new branch being pushed: the first parent of the oldest
/// commit that no remote-tracking ref of `remote` reaches. A push that
/// names a URL goes by the remotes configured with that URL. `spec` itself
/// when every commit is already there.
///
/// A remote with no remote-tracking ref at all (a new mirror or fork, one
/// never fetched, a URL no remote has) can not say what it has: then the
/// other remotes' refs say what was published, and so gated, before. A
/// branch pushed to a new fork from `origin/main` is its own commits, not
/// every file `origin` has had for years; pre-commit, which asks only the
/// remote pushed to (`rev-list --not --remotes=<remote>`), checks every
/// file there. The remote's own refs, when it has some, come first: what
/// another remote has (a colleague's fork, fetched to review) is not on
/// this one, and the push that brings it here is checked.
///
/// `None` when that can not be told: no remote-tracking ref of any remote,
/// the history is all new, a shallow clone cut it, or libgit2 failed; then
/// every file of the commit is checked.
pub fn pushed_base(root: &Path, spec: &str, remote: Option<&str>) -> Option<PushedBase> {
    let repo = open(root).ok()?;
    let commit = super::refs::lookup(&repo, spec)
        .ok()?
        .peel_to_commit()
        .ok()?;
    let mut walk = repo.revwalk().ok()?;
    walk.push(commit.id()).ok()?;
    let (tracking, others) = tracking_refs(&repo, remote)?;
    for id in tracking {
        walk.hide(id).ok()?;
    }
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
        .ok()?;
    let Some(first) = walk.next() else {
        return Some(PushedBase {
            from: commit.id().to_string(),
            others,
        });
    };
    let first = repo.find_commit(first.ok()?).ok()?;
    let parent = first.parent_id(0).ok()?;
    // A shallow clone names parents it does not have.
    repo.find_commit(parent).ok()?;
    Some(PushedBase {
        from: parent.to_string(),
        others,
    })
}

/// The commits the remote-tracking refs of `remote` are at (see
/// `pushed_base`), or, when it has none, those of every remote, with the
/// names of the remotes that had some. `None` when no remote has any, or
/// libgit2 failed.
fn tracking_refs(repo: &Repository, remote: Option<&str>) -> Option<(Vec<git2::Oid>, Vec<String>)> {
    let mut others = Vec::new();
    // Relative URLs are git's, from where the hook runs: the work tree's
    // top (`git help hooks`), or the repository itself when bare.
    let base = repo.workdir().unwrap_or_else(|| repo.path()).to_path_buf();
    let config = repo.config().ok()?.snapshot().ok()?;
    let names = repo.remotes().ok()?;
    let names: Vec<&str> = names
        .iter()
        .filter_map(|name| name.ok().flatten())
        .collect();
    // The remotes a push reaches: the one it names, or those whose
    // URL names the same repository as the one it was given.
    let reached: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| {
            remote.is_some_and(|r: &str| {
                *name == r
                    || ["url", "pushurl"].iter().any(|key| {
                        config
                            .get_str(&format!("remote.{name}.{key}"))
                            .is_ok_and(|url| same_repository(&base, url, r))
                    })
            })
        })
        .collect();
    let under = |name: &str| format!("refs/remotes/{name}/");
    let listed = super::refs::all(repo).ok()?;
    // A remote's name may hold a `/`: `refs/remotes/team/origin/main`
    // is the remote `team/origin`'s, not a branch `origin/main` of the
    // remote `team`, whose refs would otherwise say it has commits it
    // may never have seen.
    let of = |reached: &str| -> Vec<git2::Oid> {
        let prefix = under(reached);
        let others: Vec<String> = names
            .iter()
            .map(|other| under(other))
            .filter(|other| other.len() > prefix.len() && other.starts_with(&prefix))
            .collect();
        listed
            .iter()
            .filter(|r| {
                let name = r.name.as_slice();
                name.starts_with(prefix.as_bytes())
                    && !others.iter().any(|o| name.starts_with(o.as_bytes()))
            })
            .filter_map(|r| {
                let object = repo.find_object(r.id?, None).ok()?;
                object.peel_to_commit().ok().map(|c| c.id())
            })
            .collect()
    };
    let own: Vec<git2::Oid> = reached.iter().flat_map(|r| of(r)).collect();
    let tracking = if own.is_empty() {
        let mut all = Vec::new();
        for name in &names {
            let refs = of(name);
            if !refs.is_empty() {
                others.push((*name).to_string());
                all.extend(refs);
            }
        }
        all
    } else {
        own
    };
    (!tracking.is_empty()).then_some((tracking, others))
}

/// Whether the URLs `a` and `b` name the same repository, as a push may
/// spell it otherwise than the remote's configuration: `git push
/// ../repo.git main` for the `origin` at `/abs/repo.git`, `file://` or a
/// plain path, a trailing `/`, `.git` written or left for git to add.
/// Local paths (relative ones from `base`) are the same when they are the
/// same directory once resolved; other URLs when they are the same but
/// for a trailing `/` or `.git`. Nothing more is guessed (`ssh://host/x`
/// and `host:x` are not taken for one): a remote not matched is judged by
/// every remote's refs, a remote wrongly matched by another's.
fn same_repository(base: &Path, a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (local_repository(base, a), local_repository(base, b)) {
        (Some(a), Some(b)) => a == b,
        (None, None) if !is_local_url(a) && !is_local_url(b) => {
            let trimmed = |url: &str| {
                let url = url.trim_end_matches('/');
                url.strip_suffix(".git")
                    .unwrap_or(url)
                    .trim_end_matches('/')
                    .to_string()
            };
            trimmed(a) == trimmed(b)
        }
        _ => false,
    }
}

/// Whether git takes `url` for a path on this machine: `file://`, or
/// neither `scheme://` nor `host:path` (a `:` before any `/`).
fn is_local_url(url: &str) -> bool {
    if url.starts_with("file://") {
        return true;
    }
    if url.contains("://") {
        return false;
    }
    match url.find(':') {
        Some(colon) => url[..colon].contains('/'),
        None => true,
    }
}

/// The directory of the repository a local `url` names, resolved from
/// `base` as git finds it: the path itself, or with `.git` added; of a
/// work tree, its `.git`. `None` for a URL that is not local, or names no
/// directory here.
fn local_repository(base: &Path, url: &str) -> Option<PathBuf> {
    if !is_local_url(url) {
        return None;
    }
    let path = base.join(url.strip_prefix("file://").unwrap_or(url));
    let mut dotted = path.clone().into_os_string();
    dotted.push(".git");
    let found = [path, PathBuf::from(dotted)]
        .into_iter()
        .filter_map(|path| fs::canonicalize(path).ok())
        .find(|path| path.is_dir())?;
    Some(fs::canonicalize(found.join(".git")).unwrap_or(found))
}

/// Which of the commits `among` (full ids) were published already: in the
/// history of a remote-tracking ref of `remote`, or, when it has none, of
/// any remote (see `pushed_base`), with the names of those remotes. One
/// walk of the history for a whole push, which ends once all are found: a
/// mirror's hundreds of release tags are not each walked down to on their
/// own. `None` when no remote-tracking ref can tell.
pub fn published_among(
    root: &Path,
    remote: Option<&str>,
    among: &[String],
) -> Option<(HashSet<String>, Vec<String>)> {
    let repo = open(root).ok()?;
    let (tracking, others) = tracking_refs(&repo, remote)?;
    let mut walk = repo.revwalk().ok()?;
    for id in tracking {
        walk.push(id).ok()?;
    }
    Some((found_in(walk, among), others))
}

/// The published commits that the commits of `spec` being published for
/// the first time were made on: the parents, outside them, of the commits
/// that no remote-tracking ref of `remote` reaches (see `tracking_refs`),
/// nor `known` (the commit the pushed ref was at on the remote). `git log
/// <spec> --not <these>` lists exactly the commits being published. A
/// merge of `origin/main` into a pushed branch has two: the branch's
/// commit the remote had, and `origin/main`'s; a branch of ordinary
/// commits, one.
///
/// `None` when that can not be told: nothing says what the remote has, a
/// shallow clone cut a parent off, or libgit2 failed.
pub fn published_parents(
    root: &Path,
    spec: &str,
    remote: Option<&str>,
    known: Option<&str>,
) -> Option<Vec<String>> {
    let repo = open(root).ok()?;
    let tip = super::refs::lookup(&repo, spec)
        .ok()?
        .peel_to_commit()
        .ok()?
        .id();
    let mut hidden = tracking_refs(&repo, remote).map_or_else(Vec::new, |(refs, _)| refs);
    hidden.extend(
        known
            .and_then(|id| git2::Oid::from_str(id).ok())
            .filter(|id| repo.find_commit(*id).is_ok()),
    );
    if hidden.is_empty() {
        return None;
    }
    let mut walk = repo.revwalk().ok()?;
    walk.push(tip).ok()?;
    for id in hidden {
        walk.hide(id).ok()?;
    }
    walk.set_sorting(git2::Sort::TOPOLOGICAL).ok()?;
    let new: Vec<git2::Oid> = walk.collect::<Result<_, _>>().ok()?;
    let unpublished: HashSet<git2::Oid> = new.iter().copied().collect();
    let mut parents = Vec::new();
    for id in new {
        for parent in repo.find_commit(id).ok()?.parent_ids() {
            if !unpublished.contains(&parent) && !parents.contains(&parent) {
                // A shallow clone names parents it does not have.
                repo.find_commit(parent).ok()?;
                parents.push(parent);
            }
        }
    }
    Some(parents.iter().map(ToString::to_string).collect())
}

/// The files of the commit `to` whose content differs from that of each
/// of the commits `published`, without submodules, and the full id of
/// `to`: what the commits being published change (see
/// `published_parents`). A file a merge took unchanged from one of them
/// (from `origin/main`, say) was published and gated there; one the merge
/// changed (a conflict resolved by hand) differs from all, and is the
/// pusher's own work.
pub fn pushed_files(
    root: &Path,
    to: &str,
    published: &[String],
) -> Result<(Vec<PathBuf>, String), GitError> {
    let repo = open(root)?;
    let to_commit = named(&repo, to, |object| object.peel_to_commit())?;
    // Compared with nothing, every file is new.
    if published.is_empty() {
        return Ok((commit_files(root, to)?, to_commit.id().to_string()));
    }
    let mut files: Option<Vec<PathBuf>> = None;
    for base in published {
        let mut options = DiffOptions::new();
        options.include_typechange(true);
        let mut diff = tree_diff(&repo, base, to, &mut options)?;
        let changed = changed_paths(&mut diff)?;
        files = Some(match files {
            None => changed,
            // Both sorted.
            Some(mut kept) => {
                kept.retain(|file| changed.binary_search(file).is_ok());
                kept
            }
        });
    }
    Ok((files.unwrap_or_default(), to_commit.id().to_string()))
}

/// Which of the commits `among` (full ids) are in the history of a commit
/// of `tips` without being that commit: an old release's tag below a branch
/// pushed with it. One walk of the history from the tips' parents, which
/// ends once all are found; a commit this repository can not read (a
/// shallow clone's cut) is in no history.
pub fn ancestors_among(root: &Path, tips: &[String], among: &[String]) -> HashSet<String> {
    let Ok(repo) = open(root) else {
        return HashSet::new();
    };
    let Ok(mut walk) = repo.revwalk() else {
        return HashSet::new();
    };
    for tip in tips {
        let Ok(commit) = git2::Oid::from_str(tip).and_then(|id| repo.find_commit(id)) else {
            continue;
        };
        for parent in commit.parent_ids() {
            // A shallow clone names parents it does not have.
            let _ = walk.push(parent);
        }
    }
    found_in(walk, among)
}

/// The commits of `among` (full ids) that `walk` comes to: the walk ends
/// once it has found them all, and is not taken when none is wanted.
fn found_in(walk: git2::Revwalk<'_>, among: &[String]) -> HashSet<String> {
    let wanted: HashSet<git2::Oid> = among
        .iter()
        .filter_map(|id| git2::Oid::from_str(id).ok())
        .collect();
    let mut found = HashSet::new();
    if wanted.is_empty() {
        return found;
    }
    for id in walk.map_while(Result::ok) {
        if wanted.contains(&id) {
            found.insert(id.to_string());
            if found.len() == wanted.len() {
                break;
            }
        }
    }
    found
}

/// Every file of the commit `spec` names, relative to the root, without
/// submodules: what a new branch being pushed holds.
pub fn commit_files(root: &Path, spec: &str) -> Result<Vec<PathBuf>, GitError> {
    let repo = open(root)?;
    let tree = named(&repo, spec, |object| object.peel_to_tree())?;
    let mut files = Vec::new();
    blobs_of(&repo, &tree, &mut Vec::new(), &mut files)
        .map_err(|e| failed("the files of the commit", e))?;
    files.sort();
    Ok(files)
}

/// The paths of `tree`'s files under `prefix`, in bytes: names need not be
/// UTF-8 (libgit2's own walk stops at one that is not).
fn blobs_of(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    prefix: &mut Vec<u8>,
    out: &mut Vec<PathBuf>,
) -> Result<(), git2::Error> {
    for entry in tree {
        let len = prefix.len();
        prefix.extend_from_slice(entry.name_bytes());
        match entry.kind() {
            Some(git2::ObjectType::Blob) => out.push(PathBuf::from(OsStr::from_bytes(prefix))),
            Some(git2::ObjectType::Tree) => {
                let subtree = repo.find_tree(entry.id())?;
                prefix.push(b'/');
                blobs_of(repo, &subtree, prefix, out)?;
            }
            // Submodules are never selected.
            _ => {}
        }
        prefix.truncate(len);
    }
    Ok(())
}

/// Where the checks of a commit (a range's end, a pushed branch) find its
/// files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitView {
    /// It is `HEAD`'s commit and nothing is staged: the work tree holds it
    /// once its unstaged changes are set aside.
    WorkTree,
    /// It is `HEAD`'s commit, but the index holds changes it does not.
    Staged(git2::Oid),
    /// The work tree holds another commit.
    Elsewhere(git2::Oid),
}

/// Where the files of the commit `spec` names are.
pub fn commit_view(root: &Path, spec: &str) -> Result<CommitView, GitError> {
    let repo = open(root)?;
    let commit = named(&repo, spec, |object| object.peel_to_commit())?;
    let head = super::refs::head_commit(&repo).ok().flatten();
    if head != Some(commit.id()) {
        return Ok(CommitView::Elsewhere(commit.id()));
    }
    let tree = commit
        .tree()
        .map_err(|e| failed("the tree of the commit", e))?;
    let index = repo
        .index()
        .map_err(|source| super::repo::index_error(root, source))?;
    let mut options = DiffOptions::new();
    options.ignore_submodules(true);
    let staged = repo
        .diff_tree_to_index(Some(&tree), Some(&index), Some(&mut options))
        .map_err(|e| failed("the index against the commit", e))?;
    Ok(if staged.deltas().len() == 0 {
        CommitView::WorkTree
    } else {
        CommitView::Staged(commit.id())
    })
}

/// Takes out of `files` those a sparse checkout leaves out of the work
/// tree (their index entries are marked skip-worktree), which a check
/// that runs in the work tree can not read; the files taken out.
pub fn take_out_sparse(root: &Path, files: &mut Vec<PathBuf>) -> Result<Vec<PathBuf>, GitError> {
    let repo = open(root)?;
    let index = repo
        .index()
        .map_err(|source| super::repo::index_error(root, source))?;
    let skipped: std::collections::HashSet<Vec<u8>> = index
        .iter()
        .filter(|e| e.flags_extended & super::index::SKIP_WORKTREE != 0)
        .map(|e| e.path)
        .collect();
    if skipped.is_empty() {
        return Ok(Vec::new());
    }
    Ok(take_out(files, |f| {
        skipped.contains(f.as_os_str().as_bytes())
    }))
}

/// Writes the files of `commit` into `dir` (a temporary checkout), leaving
/// the work tree and the index untouched.
pub fn checkout_commit_to(root: &Path, commit: git2::Oid, dir: &Path) -> Result<Written, GitError> {
    let repo = open(root)?;
    let mut index = index_of(&repo, commit).map_err(|e| failed("the commit to check", e))?;
    match checkout_to(&repo, root, &mut index, dir, Some(commit)) {
        // A partial clone lacks the files of commits never checked out.
        Err(GitError::Read { source, .. })
            if source.class() == git2::ErrorClass::Odb
                && source.code() == git2::ErrorCode::NotFound
                && super::repo::fetch_missing(root, &repo, commit)? =>
        {
            checkout_to(&repo, root, &mut index, dir, Some(commit))
        }
        written => written,
    }
}

/// Writes `index`'s files into `dir`, as git would check them out.
fn checkout_to(
    repo: &Repository,
    root: &Path,
    index: &mut git2::Index,
    dir: &Path,
    commit: Option<git2::Oid>,
) -> Result<Written, GitError> {
    let mut builder = git2::build::CheckoutBuilder::new();
    builder
        .force()
        .recreate_missing(true)
        .update_index(false)
        .target_dir(dir);
    if super::refs::reftable(repo) {
        checkout_without_head(repo, index, &mut builder)
    } else {
        repo.checkout_index(Some(index), Some(&mut builder))
    }
    .map_err(|e| failed("a snapshot", e))?;
    let paths: Vec<Vec<u8>> = index.iter().map(|e| e.path).collect();
    let paths: Vec<&[u8]> = paths.iter().map(Vec::as_slice).collect();
    super::checkout_left_out(repo, index, &paths, dir, true)
        .map_err(|e| failed("a snapshot", e))?;
    let refused = super::filters::refused_checkout(repo, root, index, &paths);
    if let Some((path, driver)) = refused.map_err(|source| GitError::Filter {
        path: dir.to_path_buf(),
        source,
    })? {
        return Err(GitError::Filter {
            path: root.join(OsStr::from_bytes(&path)),
            source: std::io::Error::other(format!(
                "smudge filter `{driver}` failed: `filter.{driver}.required` is set and the filter has no `smudge` or `process` command, so git refuses to check the file out; set `filter.{driver}.smudge` (`cat` writes the content as stored) or unset `filter.{driver}.required`"
            )),
        });
    }
    super::filters::smudge_checked_out(repo, root, index, &paths, dir).map_err(|source| {
        GitError::Filter {
            path: root.to_path_buf(),
            source,
        }
    })?;
    // libgit2 writes an intent-to-add entry as an empty file, but nothing
    // of it is staged and the commit will not hold it (in place, it is set
    // aside too).
    for entry in index
        .iter()
        .filter(|e| e.flags_extended & INTENT_TO_ADD != 0)
    {
        let path = dir.join(OsStr::from_bytes(&entry.path));
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(GitError::Write { path, source: e });
            }
            _ => {}
        }
    }
    check_out_submodules(repo, index, dir)?;
    let files = paths
        .iter()
        .map(|path| {
            let stat = super::protect::FileStat::of(&dir.join(OsStr::from_bytes(path)));
            (path.to_vec(), stat)
        })
        .collect();
    link_git_dir(repo, index, dir, commit)?;
    Ok(Written { commit, files })
}

/// libgit2's checkout of `index` as `builder` says, in a repository that
/// keeps its refs as reftable. When the repository's own index is on disk,
/// libgit2 reads `HEAD` for the tree the target directory is assumed to
/// hold, and stops at the stub `HEAD` it finds there (`ref:
/// refs/heads/.invalid`, a name it refuses). The target directory of a
/// temporary checkout is new, so that tree changes nothing written: for
/// the call, the repository's index is an empty one in memory (libgit2
/// then assumes an empty directory and reads no `HEAD`), not reloaded from
/// disk, and the repository's own is put back after. Nothing is written
/// to the repository, its index or its refs.
fn checkout_without_head(
    repo: &Repository,
    index: &mut git2::Index,
    builder: &mut git2::build::CheckoutBuilder<'_>,
) -> Result<(), git2::Error> {
    // The same index as `index` for a checkout of the index.
    let mut own = repo.index()?;
    repo.set_index(&mut git2::Index::new()?)?;
    builder.refresh(false);
    let done = repo.checkout_index(Some(index), Some(builder));
    repo.set_index(&mut own)?;
    done
}

/// Checks out, in the checkout in `dir`, each submodule of `index` that
/// the user's work tree has (initialised, with the commit recorded), at the
/// commit recorded: libgit2 leaves an empty directory, where a check that
/// builds with the submodule's files would fail though the work tree has
/// them. Each is a work tree of the submodule's repository in turn. A
/// submodule the work tree lacks stays empty, as a fresh clone leaves it.
fn check_out_submodules(
    repo: &Repository,
    index: &git2::Index,
    dir: &Path,
) -> Result<(), GitError> {
    let Some(work_tree) = repo.workdir() else {
        return Ok(());
    };
    for entry in index.iter().filter(|e| {
        e.mode & MODE_TYPE == super::index::MODE_GITLINK && e.flags & super::index::STAGE_MASK == 0
    }) {
        let path = Path::new(OsStr::from_bytes(&entry.path));
        // Opened where it is, never searched for upwards: an uninitialised
        // submodule's directory would find the outer repository.
        let Ok(sub) = Repository::open_ext(
            work_tree.join(path),
            git2::RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&OsStr>(),
        ) else {
            continue;
        };
        // Read with the configuration the environment names, as the outer
        // repository is, so that its filters and includes apply there too;
        // failing that, with the files libgit2 finds itself.
        let _ = super::config_env::apply(&sub);
        let (Some(sub_root), Ok(mut sub_index)) = (sub.workdir(), index_of(&sub, entry.id)) else {
            continue;
        };
        let sub_root = sub_root.to_path_buf();
        let target = dir.join(path);
        fs::create_dir_all(&target).map_err(|source| GitError::Write {
            path: target.clone(),
            source,
        })?;
        checkout_to(&sub, &sub_root, &mut sub_index, &target, Some(entry.id))?;
    }
    Ok(())
}

/// Makes the checkout in `dir` a repository of its own that borrows the
/// user's, so that a check running git there finds what is staged, with
/// the history, branches and tags the user has, and whatever it does with
/// git stays in the checkout. Made a linked worktree of the user's
/// repository (a `.git` naming it through `commondir`), the checkout
/// shared its refs, stash and configuration: a hook script's `git stash
/// push --keep-index; …; git stash pop`, with nothing to set aside in the
/// checkout, popped the user's own stash entry into it, lost when the
/// checkout went; `git tag`, `git branch -f`, `git config` and `git gc`
/// wrote the user's repository. Here the checkout's `.git` has:
/// - the user's objects through `objects/info/alternates`, read where they
///   are and never copied; the objects a check writes stay in the checkout
///   and go with it (`git gc` and `git prune` never touch an alternate's);
/// - a copy of the user's refs (`copy_refs`), without the stash;
/// - the user's `shallow` list, so a shallow clone's history ends where it
///   does there, and `info/exclude` and `info/attributes`;
/// - a configuration that includes the user's (`checkout_config`);
/// - its own `HEAD` (the commit checked out, detached) and index (`index`,
///   what was checked out).
fn link_git_dir(
    repo: &Repository,
    index: &git2::Index,
    dir: &Path,
    commit: Option<git2::Oid>,
) -> Result<(), GitError> {
    let git = dir.join(".git");
    let common = repo.commondir();
    for sub in ["objects/info", "objects/pack", "refs", "info"] {
        let path = git.join(sub);
        fs::create_dir_all(&path).map_err(write_error(&path))?;
    }
    write_file(
        &git.join("objects/info/alternates"),
        &alternate(&common.join("objects")),
    )?;
    copy_refs(repo, &git)?;
    for shared in ["shallow", "info/exclude", "info/attributes"] {
        let (from, to) = (common.join(shared), git.join(shared));
        match fs::copy(&from, &to) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !from.exists() => {}
            Err(source) => return Err(GitError::Write { path: to, source }),
            Ok(_) => {}
        }
    }
    let config = git.join("config");
    write_file(&config, &checkout_config(repo, common, dir, &[]))?;
    let head = match commit {
        Some(commit) => format!("{commit}\n").into_bytes(),
        None => match super::refs::head(repo) {
            Ok(super::refs::Head {
                commit: Some(oid), ..
            }) => format!("{oid}\n").into_bytes(),
            // No commit yet: the same unborn branch.
            Ok(
                head @ super::refs::Head {
                    branch: Some(_), ..
                },
            ) => head.as_file(),
            Ok(_) | Err(_) => {
                fs::read(repo.path().join("HEAD")).map_err(write_error(&git.join("HEAD")))?
            }
        },
    };
    write_file(&git.join("HEAD"), &head)?;
    // A file the user's configuration includes only in their repository's
    // place or on its branch (`includeIf "gitdir:~/company/"` for a work
    // identity) is included here as it is: the checkout is elsewhere, on a
    // detached `HEAD`, and a check that runs `git config user.email` must
    // find what it finds in the work tree.
    if super::includes::may_differ(repo) {
        let root = repo.workdir().unwrap_or(dir);
        let real = super::filters::Place::of(repo, root);
        let checkout = super::filters::Place::at(&git, dir);
        let mut lost = super::includes::lost_in(&real, &checkout).map_err(|e| GitError::Write {
            path: config.clone(),
            source: std::io::Error::new(
                e.kind(),
                format!("the files the git configuration includes could not be listed: {e}"),
            ),
        })?;
        // git named a relative one from the user's work tree.
        for include in &mut lost {
            include.path = root.join(&include.path);
        }
        if !lost.is_empty() {
            write_file(&config, &checkout_config(repo, common, dir, &lost))?;
        }
    }
    own_index(index, dir, &git.join("index"))
}

/// The error of writing `path`.
fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> GitError {
    let path = path.to_path_buf();
    move |source| GitError::Write { path, source }
}

/// Writes `bytes` to the file `path`.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), GitError> {
    fs::write(path, bytes).map_err(write_error(path))
}

/// The line of `objects/info/alternates` that names `objects`: the path as
/// it is, which git and libgit2 both read, or, for a path with a newline
/// in it, quoted as git reads a line that starts with `"`.
fn alternate(objects: &Path) -> Vec<u8> {
    let path = objects.as_os_str().as_bytes();
    let mut line = if path.contains(&b'\n') {
        quoted(path)
    } else {
        path.to_vec()
    };
    line.push(b'\n');
    line
}

/// `text` in double quotes, with the escapes git reads in a quoted
/// configuration value and a quoted path alike.
fn quoted(text: &[u8]) -> Vec<u8> {
    let mut out = vec![b'"'];
    for &byte in text {
        match byte {
            b'"' | b'\\' => out.extend([b'\\', byte]),
            b'\n' => out.extend(*b"\\n"),
            b'\t' => out.extend(*b"\\t"),
            _ => out.push(byte),
        }
    }
    out.push(b'"');
    out
}

/// Copies the refs of `repo` into the checkout's git directory `git`: the
/// direct ones as one `packed-refs` file (a few thousand tags are one
/// write, and the user's `packed-refs` and loose refs are read as git
/// reads them), the symbolic ones (`refs/remotes/origin/HEAD`) as the loose
/// files they must be. So `git describe`, `git log origin/main..` and a
/// tag's name work in the checkout as in the user's work tree, and nothing
/// a check does to them reaches the user's. Left out: `refs/stash`, the
/// user's work set aside (a check that pops it would take it away), and
/// the refs git keeps per work tree (`refs/bisect/`, `refs/worktree/`,
/// `refs/rewritten/`), the state of the user's work tree. A ref libgit2
/// cannot read is passed over, as a clone would be without it.
fn copy_refs(repo: &Repository, git: &Path) -> Result<(), GitError> {
    let mut packed: Vec<(Vec<u8>, git2::Oid)> = Vec::new();
    let refs = super::refs::all(repo).map_err(|e| failed("the refs of the repository", e))?;
    for reference in refs {
        let name = reference.name.as_slice();
        if !copied_ref(name) {
            continue;
        }
        if let Some(target) = &reference.symbolic {
            let path = git.join(OsStr::from_bytes(name));
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(write_error(parent))?;
            }
            write_file(&path, &[b"ref: ", target.as_slice(), b"\n"].concat())?;
        } else if let Some(oid) = reference.id {
            packed.push((name.to_vec(), oid));
        }
    }
    // git reads a `packed-refs` that says it is sorted without sorting it
    // again; its order is the names' bytes.
    packed.sort();
    let mut text = b"# pack-refs with: sorted \n".to_vec();
    for (name, oid) in packed {
        text.extend(format!("{oid} ").bytes());
        text.extend(name);
        text.push(b'\n');
    }
    write_file(&git.join("packed-refs"), &text)
}

/// The refs git keeps for each work tree in its own git directory; every
/// other ref is in the common one.
pub(super) const PER_WORK_TREE_REFS: [&str; 3] =
    ["refs/bisect/", "refs/worktree/", "refs/rewritten/"];

/// Whether the checkout gets a copy of the ref `name` (see `copy_refs`).
/// Only a valid name is copied: it is written as a path under `.git`.
fn copied_ref(name: &[u8]) -> bool {
    name.starts_with(b"refs/")
        && name != b"refs/stash"
        && !PER_WORK_TREE_REFS
            .iter()
            .any(|prefix| name.starts_with(prefix.as_bytes()))
        && std::str::from_utf8(name).is_ok_and(git2::Reference::is_valid_name)
}

/// The checkout's configuration: the user's repository's, included, so
/// remotes, identities, filters and aliases apply as they do there, and
/// the files the user's configuration includes only under a condition the
/// checkout does not meet (`lost`: from the global or system configuration
/// before the repository's, which overrides them, from the repository's
/// after); then what must differ here, which comes later and so wins:
/// - the work tree is the checkout, whatever `core.worktree` the user's
///   names (a bare repository's work tree in `$HOME`, a submodule's path
///   relative to its git directory), and it is not bare;
/// - the object format, which git reads only from the repository's own
///   file, never from an included one (and the version that allows it);
/// - no fsmonitor daemon and no automatic `gc` or maintenance: each would
///   start in the background, for a directory that goes when the run ends.
///
/// A `git config` the check runs writes this file, not the user's. The
/// user's `config.worktree` (`extensions.worktreeConfig`) is their work
/// tree's own, sparse checkout included, and is not read here; nor is
/// `extensions.refStorage`, as the checkout keeps its refs in files.
fn checkout_config(
    repo: &Repository,
    common: &Path,
    dir: &Path,
    lost: &[super::includes::Include],
) -> Vec<u8> {
    let format = repo
        .config()
        .and_then(|c| c.get_string("extensions.objectformat"))
        .ok()
        .filter(|format| !format.eq_ignore_ascii_case("sha1"));
    let include = |text: &mut Vec<u8>, path: &Path| {
        text.extend(b"[include]\n\tpath = ");
        text.extend(quoted(path.as_os_str().as_bytes()));
        text.push(b'\n');
    };
    let mut text = Vec::new();
    for before in lost.iter().filter(|lost| lost.before_local) {
        include(&mut text, &before.path);
    }
    include(&mut text, &common.join("config"));
    for after in lost.iter().filter(|lost| !lost.before_local) {
        include(&mut text, &after.path);
    }
    text.extend(b"[core]\n\trepositoryformatversion = ");
    text.extend(if format.is_some() { b"1" } else { b"0" });
    text.extend(b"\n\tbare = false\n\tworktree = ");
    text.extend(quoted(dir.as_os_str().as_bytes()));
    text.extend(b"\n\tfsmonitor = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n");
    if let Some(format) = format {
        text.extend(b"[extensions]\n\tobjectformat = ");
        text.extend(quoted(format.as_bytes()));
        text.push(b'\n');
    }
    text
}

/// Writes the checkout's own index at `path`: the entries of `index`, each
/// with the stat data of the file checked out for it, as `git checkout`
/// records them. The repository's index holds the stat data of the user's
/// files instead, and git trusts a recorded size that differs without
/// reading the file: a file the checkout writes otherwise than the user's
/// copy (`ident` expanded, `eol=crlf`, another encoding) would be
/// "modified" to `git status`, `git diff-files` and `git describe --dirty`
/// in the checkout, though nothing there differs from what is staged.
fn own_index(index: &git2::Index, dir: &Path, path: &Path) -> Result<(), GitError> {
    let mut own = git2::Index::open(path).map_err(|e| failed("a snapshot's index", e))?;
    own.clear().map_err(|e| failed("a snapshot's index", e))?;
    for mut entry in index.iter() {
        let kind = entry.mode & MODE_TYPE;
        let on_disk = (kind == MODE_FILE || kind == MODE_LINK)
            && entry.flags_extended & (INTENT_TO_ADD | SKIP_WORKTREE) == 0
            && entry.flags & super::index::STAGE_MASK == 0;
        let meta = on_disk
            .then(|| fs::symlink_metadata(dir.join(OsStr::from_bytes(&entry.path))).ok())
            .flatten();
        if let Some(meta) = meta {
            record_stat(&mut entry, &meta);
        }
        own.add(&entry)
            .map_err(|e| failed("a snapshot's index", e))?;
    }
    own.write().map_err(|e| failed("a snapshot's index", e))
}

/// Records `meta` in `entry` as git does: each field cut to its low 32 bits.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the index keeps 32 bits of each stat field, as git cuts them"
)]
fn record_stat(entry: &mut git2::IndexEntry, meta: &fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    entry.ctime = git2::IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32);
    entry.mtime = git2::IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32);
    entry.dev = meta.dev() as u32;
    entry.ino = meta.ino() as u32;
    entry.uid = meta.uid();
    entry.gid = meta.gid();
    entry.file_size = meta.size() as u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_s_configuration_names_any_path_as_git_reads_it() {
        // A cache directory is the user's to name: quotes, backslashes,
        // `#` and `;` (which begin a comment unquoted), a newline.
        let dir = tempfile::tempdir().unwrap();
        let odd = Path::new("/home/u/ca\"che\\x #1; y\n\tz");
        let mut text = b"[core]\n\tworktree = ".to_vec();
        text.extend(quoted(odd.as_os_str().as_bytes()));
        text.push(b'\n');
        let file = dir.path().join("config");
        fs::write(&file, text).unwrap();
        let config = git2::Config::open(&file).unwrap();
        assert_eq!(
            config.get_path("core.worktree").unwrap(),
            odd,
            "libgit2 reads it back"
        );
        let git = std::process::Command::new("git")
            .args(["config", "--file"])
            .arg(&file)
            .args(["--get", "core.worktree"])
            .output()
            .unwrap();
        assert_eq!(
            git.stdout,
            [odd.as_os_str().as_bytes(), b"\n"].concat(),
            "git reads it back"
        );
    }

    #[test]
    fn refs_a_checkout_copies_are_valid_ones_other_than_the_stash_and_a_work_tree_s() {
        for name in [
            "refs/heads/main",
            "refs/tags/v1.0",
            "refs/remotes/origin/HEAD",
            "refs/notes/commits",
        ] {
            assert!(copied_ref(name.as_bytes()), "{name}");
        }
        for name in [
            "refs/stash",
            "refs/bisect/bad",
            "refs/worktree/x",
            "refs/rewritten/onto",
            "HEAD",
            "refs/heads/../../x",
            "refs/heads/a\nb",
        ] {
            assert!(!copied_ref(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn index_paths_compare_with_tree_entries_as_full_paths() {
        let names: [&[u8]; 8] = [b"a", b"a-b", b"a.b", b"a0", b"ab", b"", b"b", b"a/"];
        let paths: [&[u8]; 9] = [
            b"a", b"a-b", b"a.b", b"a/x", b"a/x/y", b"a0", b"ab", b"b", b"\xff",
        ];
        for prefix in [&b""[..], b"dir/"] {
            for path in paths {
                let full = [prefix, path].concat();
                for name in names {
                    for dir in [false, true] {
                        let key = [name, if dir { b"/" } else { b"" }].concat();
                        let want = if dir && path.starts_with(&key) {
                            std::cmp::Ordering::Equal
                        } else {
                            path.cmp(key.as_slice())
                        };
                        assert_eq!(
                            after_prefix(&full, prefix.len(), name, dir),
                            want,
                            "{:?} against {:?} (directory: {dir})",
                            String::from_utf8_lossy(&full),
                            String::from_utf8_lossy(name),
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn raw_trees_read_as_libgit2_reads_them_and_damage_stops_the_reading() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let blob = repo.blob(b"content\n").unwrap();
        let empty = repo.treebuilder(None).unwrap().write().unwrap();
        let mut builder = repo.treebuilder(None).unwrap();
        builder.insert("file.txt", blob, 0o100_644).unwrap();
        builder.insert("tool.sh", blob, 0o100_755).unwrap();
        builder.insert("link", blob, 0o120_000).unwrap();
        builder
            .insert("caf\u{e9} with space", blob, 0o100_644)
            .unwrap();
        builder.insert("sub", empty, 0o040_000).unwrap();
        let id = builder.write().unwrap();
        let raw = repo.odb().unwrap().read(id).unwrap().data().to_vec();

        let mine: Vec<(u32, Vec<u8>, [u8; 20])> = TreeItems(&raw)
            .map(|item| {
                let (mode, name, oid) = item.unwrap();
                (mode, name.to_vec(), oid)
            })
            .collect();
        let tree = repo.find_tree(id).unwrap();
        let theirs: Vec<(u32, Vec<u8>, [u8; 20])> = tree
            .iter()
            .map(|e| {
                let mode = u32::try_from(e.filemode()).unwrap();
                (
                    mode,
                    e.name_bytes().to_vec(),
                    e.id().as_bytes().try_into().unwrap(),
                )
            })
            .collect();
        assert_eq!(mine, theirs);

        // Cut anywhere but between entries, the last item is `None` and
        // nothing follows it; never a panic.
        let ends: Vec<usize> = (0..=raw.len())
            .filter(|&end| TreeItems(&raw[..end]).all(|item| item.is_some()))
            .collect();
        assert_eq!(ends.len(), theirs.len() + 1, "whole entries only: {ends:?}");
        for end in 0..raw.len() {
            let items: Vec<_> = TreeItems(&raw[..end]).collect();
            if let Some(at) = items.iter().position(Option::is_none) {
                assert_eq!(at, items.len() - 1);
            }
        }
        let mut bad_mode = raw.clone();
        bad_mode[0] = b'9';
        assert_eq!(TreeItems(&bad_mode).next(), Some(None));
    }

    /// A small deterministic generator (no dependency for a test).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(self.0 >> 33).unwrap() % n
        }
    }

    #[test]
    fn the_staged_selection_is_what_git_lists_on_random_changes() {
        use std::os::unix::fs::PermissionsExt;
        // Names that sort on either side of `/` and of each other.
        const NAMES: [&str; 9] = ["a", "a-b", "a.b", "a0", "a!", "b", "\u{e9}", "x y", "sub"];
        let mut rng = Lcg(0x5eed);
        for round in 0..24 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            let git = |args: &[&str]| crate::git::test_git(root, args);
            let random_path = |rng: &mut Lcg| {
                let depth = rng.below(3);
                let mut parts: Vec<&str> = (0..depth).map(|_| NAMES[rng.below(4)]).collect();
                parts.push(NAMES[rng.below(NAMES.len())]);
                parts.join("/")
            };
            // Writes a file, first clearing whatever stands in its way (a
            // file where a directory must be, or the reverse).
            let put = |path: &str, text: &str| {
                let full = root.join(path);
                let mut at = root.to_path_buf();
                for part in std::path::Path::new(path)
                    .parent()
                    .into_iter()
                    .flat_map(|p| p.iter())
                {
                    at.push(part);
                    if at.is_file() || at.is_symlink() {
                        std::fs::remove_file(&at).unwrap();
                    }
                }
                if full.is_dir() {
                    std::fs::remove_dir_all(&full).unwrap();
                }
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(full, text).unwrap();
            };
            git(&["init", "-q"]);
            git(&["config", "user.email", "t@example.com"]);
            git(&["config", "user.name", "t"]);
            for i in 0..12 {
                put(&random_path(&mut rng), &format!("base {i}\n"));
            }
            git(&["add", "-A"]);
            git(&["commit", "-qm", "base"]);
            if rng.below(2) == 0 {
                git(&["update-index", "--index-version", "4"]);
            }
            let tracked = git(&["ls-files", "-z"]);
            let tracked: Vec<String> = tracked
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8(p.to_vec()).unwrap())
                .collect();
            for _ in 0..6 {
                let path = tracked[rng.below(tracked.len())].clone();
                let full = root.join(&path);
                match rng.below(5) {
                    0 if full.is_file() => std::fs::write(&full, "changed\n").unwrap(),
                    1 if full.is_file() => std::fs::remove_file(&full).unwrap(),
                    2 if full.is_file() => {
                        std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o755))
                            .unwrap();
                    }
                    3 if full.is_file() => {
                        std::fs::remove_file(&full).unwrap();
                        std::os::unix::fs::symlink("target", &full).unwrap();
                    }
                    _ => put(&random_path(&mut rng), "new\n"),
                }
            }
            git(&["add", "-A"]);
            // Not staged content: intent-to-add, and unstaged edits.
            put("planned-later.txt", "later\n");
            git(&["add", "-N", "planned-later.txt"]);

            let listed = git(&[
                "diff",
                "--cached",
                "--name-only",
                "-z",
                "--no-renames",
                "--diff-filter=AMT",
            ]);
            let mut want: Vec<PathBuf> = listed
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(OsStr::from_bytes(p)))
                .collect();
            let mut got = staged_selection(root, 2).unwrap().files;
            got.sort();
            want.sort();
            assert_eq!(got, want, "round {round}");
        }
    }

    #[test]
    fn a_long_document_is_read_only_up_to_the_limit_loose_or_packed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| crate::git::test_git(root, args);
        git(&["init", "-q", "-b", "main"]);
        git(&["config", "user.email", "t@example.com"]);
        git(&["config", "user.name", "t"]);
        let text: Vec<u8> = (0..5000u32).flat_map(u32::to_le_bytes).collect();
        std::fs::write(root.join("F001.md"), &text).unwrap();
        git(&["add", "F001.md"]);
        let path = Path::new("F001.md");
        // Staged, the blob is a loose object, read as a stream.
        let read = |documents: Vec<Option<StoredDocument>>| -> Vec<Option<Vec<u8>>> {
            documents
                .into_iter()
                .map(|d| d.map(Result::unwrap))
                .collect()
        };
        let staged = read(documents_staged(root, &[path], 100).unwrap());
        assert_eq!(staged, [Some(text[..101].to_vec())]);
        git(&["commit", "-qm", "one"]);
        git(&["gc", "-q"]);
        // Committed and packed, git streams it.
        let committed = read(documents_at(root, "HEAD", &[path], 100).unwrap());
        assert_eq!(committed, [Some(text[..101].to_vec())]);
        let short = read(documents_at(root, "HEAD", &[path], text.len()).unwrap());
        assert_eq!(short, [Some(text.clone())]);
        assert_eq!(files_at(root, "HEAD", &[path]).unwrap(), [Some(text)]);
    }

    #[test]
    fn a_remote_s_url_is_matched_however_a_push_spells_it_and_nothing_more_is_guessed() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(base.join("repo.git")).unwrap();
        fs::create_dir_all(base.join("other.git")).unwrap();
        fs::create_dir_all(base.join("clone/.git")).unwrap();
        let here = base.join("clone");
        let abs = format!("{}/repo.git", base.display());
        for spelled in [
            "../repo.git".to_string(),
            "../repo".to_string(),
            format!("{abs}/"),
            format!("file://{abs}"),
            format!("file://{}/repo", base.display()),
            format!("{}/./repo.git", base.display()),
        ] {
            assert!(same_repository(&here, &abs, &spelled), "{spelled}");
        }
        assert!(same_repository(
            &base,
            "clone",
            &format!("{}/clone/.git", base.display())
        ));
        assert!(!same_repository(&here, &abs, "../other.git"));
        assert!(!same_repository(&here, &abs, "../missing.git"));
        // Other URLs: the same but for a trailing `/` or `.git`.
        let url = "https://example.com/team/repo.git";
        assert!(same_repository(
            &here,
            url,
            "https://example.com/team/repo/"
        ));
        assert!(same_repository(
            &here,
            "git@example.com:team/repo",
            "git@example.com:team/repo.git"
        ));
        assert!(!same_repository(
            &here,
            url,
            "https://example.com/team/other.git"
        ));
        assert!(!same_repository(
            &here,
            url,
            "ssh://git@example.com/team/repo.git"
        ));
        assert!(!same_repository(&here, "repo.git", url));
    }
}
