//! Where `HEAD` was before the checks, to tell afterwards whether one of
//! them committed, reset, switched branch or detached it.
//!
//! Taken from two small files and one stat, never from the repository:
//! `HEAD` itself, the loose ref file of the branch it names, and
//! `packed-refs` (where a branch with no loose file keeps its commit). The
//! repository is opened only when one of them changed. Nothing here undoes
//! what a check did: the message says how. A repository that keeps its
//! refs as reftable has no such files: there `HEAD` is asked of git (once
//! a run, see `refs`) and the stacks' `tables.list` files stand for them.

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::protect::{copy_entry, quoted, FileStat};

/// The index as the checks found it, held when they changed what it
/// stages. A check's `git commit -a` (or `git add -A && git commit`)
/// stages every change before it commits, and `git reset --soft` keeps
/// that: what was staged in part would be staged whole after the undo,
/// and an untracked file would stay tracked. It is what phasegate read
/// before the checks, so keeping it costs nothing until a check both
/// stages and moves `HEAD`.
#[derive(Debug)]
pub struct IndexBefore {
    /// The index file git uses (a linked worktree's own).
    index: PathBuf,
    kept: Kept,
}

/// What phasegate read of the index before the checks.
#[derive(Debug)]
enum Kept {
    /// Its bytes, when phasegate read the file itself (nothing set aside),
    /// and when the file was last written: the copy keeps that time, so
    /// an entry modified in that instant stays one git compares by
    /// content (git's "racily clean"), where a copy written now would
    /// make it look unchanged.
    Bytes(Vec<u8>, std::time::SystemTime),
    /// Its entries, as libgit2 read them when the unstaged changes were
    /// set aside, and the second (since the epoch) the file was last
    /// written in: an entry changed in that second or later proves nothing
    /// by its stat data (git's "racily clean"), and a copy written now
    /// would make it look unchanged.
    Entries(Vec<git2::IndexEntry>, Option<i64>),
}

impl IndexBefore {
    /// The index file `index`, which held `bytes` before the checks and
    /// was last written at `written`. `None` for an index git made for
    /// one commit (`GIT_INDEX_FILE` of a `git commit -a` or `commit PATH`
    /// hook): git itself replaces it.
    pub(super) fn new(
        index: &Path,
        bytes: &[u8],
        written: std::time::SystemTime,
    ) -> Option<IndexBefore> {
        (!super::index_is_temporary()).then(|| IndexBefore {
            index: index.to_path_buf(),
            kept: Kept::Bytes(bytes.to_vec(), written),
        })
    }

    /// The index file `index`, which held `entries` before the checks and
    /// was last written in the second `written`; `None` as for `new`.
    pub(super) fn of_entries(
        index: &Path,
        entries: Vec<git2::IndexEntry>,
        written: Option<i64>,
    ) -> Option<IndexBefore> {
        (!super::index_is_temporary()).then(|| IndexBefore {
            index: index.to_path_buf(),
            kept: Kept::Entries(entries, written),
        })
    }

    /// Writes the index as it was to `at`, the owner's alone (it names
    /// every tracked path); the command that puts it back, or why it
    /// could not be written.
    fn keep_at(&self, at: &Path) -> Result<String, String> {
        let failed = |e: &dyn std::fmt::Display| format!("writing `{}` failed: {e}", at.display());
        match &self.kept {
            Kept::Bytes(bytes, written) => {
                let kept = fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(at)
                    .and_then(|mut file| {
                        file.write_all(bytes)?;
                        file.set_modified(*written)
                    });
                kept.map_err(|e| failed(&e))?;
            }
            Kept::Entries(entries, written) => {
                write_entries(entries, *written, at).map_err(|e| failed(&e))?;
            }
        }
        // `touch -r`: the index keeps the copy's time (see `Kept`), and
        // its own mode and owner, which `cp -p` would change.
        let (kept, index) = (
            quoted(at.as_os_str().as_bytes()),
            quoted(self.index.as_os_str().as_bytes()),
        );
        Ok(format!("cp {kept} {index} && touch -r {kept} {index}"))
    }
}

/// Writes an index file holding `entries` to `at`, for the owner alone.
/// libgit2 writes it (the format is git's) next to a lock file made with
/// the umask's mode: in a directory only the owner may enter, whose file
/// is then moved to `at`. Entries changed in the second `written` (when
/// the index was last written) or later are marked for git to compare by
/// content, as git marks them when it writes the index itself.
fn write_entries(
    entries: &[git2::IndexEntry],
    written: Option<i64>,
    at: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let mut private = at.as_os_str().to_os_string();
    private.push(".d");
    let private = PathBuf::from(private);
    fs::DirBuilder::new().mode(0o700).create(&private)?;
    let file = private.join("index");
    let made = (|| -> Result<(), Box<dyn std::error::Error>> {
        let mut index = git2::Index::open(&file)?;
        for entry in entries {
            let mut entry = copy_entry(entry);
            if written.is_some_and(|second| i64::from(entry.mtime.seconds()) >= second) {
                entry.file_size = 0;
            }
            index.add(&entry)?;
        }
        index.write()?;
        fs::set_permissions(&file, fs::Permissions::from_mode(0o600))?;
        fs::rename(&file, at)?;
        Ok(())
    })();
    let _ = fs::remove_dir_all(&private);
    made
}

/// The index as it was before checks that changed what it stages, and
/// where to keep a copy of it for the undo (the run's directory).
pub struct Staging<'a> {
    pub before: &'a IndexBefore,
    pub keep_at: PathBuf,
}

/// `HEAD` as the checks found it.
pub(super) struct HeadTrace {
    /// The work tree's own `HEAD` file (a linked worktree has its own).
    head_file: PathBuf,
    /// Its bytes; empty when it could not be read (then nothing is said).
    head: Vec<u8>,
    /// When `HEAD` names a branch: its loose ref file, and that file's
    /// bytes (`None`: absent, the branch is packed or has no commit yet).
    branch: Option<(PathBuf, Option<Vec<u8>>)>,
    /// `packed-refs` of the common git directory, and its stat data.
    packed: PathBuf,
    packed_before: Option<FileStat>,
    /// In a reftable repository, what its refs were before the checks.
    reftable: Option<Reftable>,
}

/// The refs of a reftable repository before the checks, which have no
/// files of their own to compare.
pub(super) struct Reftable {
    /// The work tree's git directory, and the common one.
    pub git_dir: PathBuf,
    common_dir: PathBuf,
    /// The stacks' stamp: the refs changed when it did.
    stamp: super::refs::Stamp,
    /// `HEAD` as git resolved it, and whether a stash existed (`None`: git
    /// could not answer; then `head` is empty).
    known: Option<super::refs::Known>,
}

impl Reftable {
    /// Whether no ref changed since.
    pub fn unchanged(&self) -> bool {
        super::refs::Stamp::of(&self.git_dir, &self.common_dir) == self.stamp
    }

    /// Whether a stash existed: `true` when git could not say.
    pub fn had_stash(&self) -> bool {
        self.known.as_ref().is_none_or(|known| known.stash)
    }
}

/// Where a branch stood before the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Was {
    At(git2::Oid),
    /// It had no commit (an unborn branch, before the first commit).
    Nothing,
    /// Packed, and `packed-refs` was rewritten since: its reflog says.
    Unknown,
}

/// `HEAD` after the checks, as the repository says.
enum Now {
    /// On a branch (full ref name), at a commit or at none.
    Branch(String, Option<git2::Oid>),
    Detached(git2::Oid),
}

impl HeadTrace {
    /// `HEAD` of the work tree whose git directory is `git_dir` (common
    /// directory `common_dir`), now: a read of `HEAD`, of the branch's
    /// loose ref, and a stat of `packed-refs`.
    pub(super) fn before(git_dir: &Path, common_dir: &Path) -> HeadTrace {
        if super::refs::reftable_at(common_dir) {
            let stamp = super::refs::Stamp::of(git_dir, common_dir);
            let known = super::refs::known_at(git_dir, common_dir).ok();
            return HeadTrace {
                head_file: git_dir.join("HEAD"),
                head: known
                    .as_ref()
                    .map(|known| known.head.as_file())
                    .unwrap_or_default(),
                branch: None,
                packed_before: None,
                packed: common_dir.join("packed-refs"),
                reftable: Some(Reftable {
                    git_dir: git_dir.to_path_buf(),
                    common_dir: common_dir.to_path_buf(),
                    stamp,
                    known,
                }),
            };
        }
        let head_file = git_dir.join("HEAD");
        let head = fs::read(&head_file).unwrap_or_default();
        let branch = symbolic(&head).map(|name| {
            let file = ref_file(git_dir, common_dir, name);
            let bytes = fs::read(&file).ok();
            (file, bytes)
        });
        let packed = common_dir.join("packed-refs");
        HeadTrace {
            head_file,
            head,
            branch,
            packed_before: FileStat::of(&packed),
            packed,
            reftable: None,
        }
    }

    /// What the refs of a reftable repository were before the checks;
    /// `None` in one that keeps them as files.
    pub(super) fn reftable(&self) -> Option<&Reftable> {
        self.reftable.as_ref()
    }

    /// Whether `HEAD`'s file, its branch's loose ref or (for a branch
    /// with none) `packed-refs` differ from what they were.
    fn touched(&self) -> bool {
        if let Some(reftable) = &self.reftable {
            return !reftable.unchanged();
        }
        if fs::read(&self.head_file).unwrap_or_default() != self.head {
            return true;
        }
        match &self.branch {
            Some((file, bytes)) => {
                fs::read(file).ok() != *bytes
                    || (bytes.is_none() && FileStat::of(&self.packed) != self.packed_before)
            }
            None => false,
        }
    }

    /// What the checks (`by`, for a person) did to `HEAD` of the
    /// repository at `root`, with the commands that undo it; `None` when
    /// it is where it was.
    /// With `staging` (the checks changed what the index stages too), the
    /// undo puts the index back as well.
    pub(super) fn moved(
        &self,
        root: &Path,
        by: &str,
        staging: Option<&Staging<'_>>,
    ) -> Option<String> {
        if self.head.is_empty() || !self.touched() {
            return None;
        }
        // Kept only now that HEAD moved: the write is for the rare run.
        let put_back = staging.map(|s| s.before.keep_at(&s.keep_at));
        let undo = Undo {
            index: match &put_back {
                None => Index::Untouched,
                Some(Ok(command)) => Index::Kept(command),
                Some(Err(why)) => Index::Unkept(why),
            },
        };
        // Changed, but unreadable now: said all the same, never passed.
        self.resolved(root, by, &undo).unwrap_or_else(|why| {
            Some(format!(
                "{by} changed the repository: it changed HEAD (`{}`) or the branch it names, and phasegate could not read where HEAD points now ({why}). `git status` and `git reflog` show where it is and where it was",
                self.head_file.display()
            ))
        })
    }

    /// `moved`, once one of the files changed: `Err` says why the
    /// repository could not tell where `HEAD` is now.
    fn resolved(&self, root: &Path, by: &str, undo: &Undo<'_>) -> Result<Option<String>, String> {
        let repo = super::open_repository(root).map_err(|e| e.message().to_string())?;
        let head = super::refs::head(&repo).map_err(|e| e.message().to_string())?;
        let now = match head.branch {
            Some(name) => Now::Branch(name, head.commit),
            None => Now::Detached(head.commit.ok_or("HEAD names no commit")?),
        };
        if let Some(name) = symbolic(&self.head) {
            return Ok(self.branch_moved(&repo, name, &now, by, undo));
        }
        let was = oid_in(&self.head).ok_or("HEAD named no commit before the checks")?;
        let moved = match &now {
            Now::Detached(at) if *at == was => return Ok(None),
            Now::Detached(at) => format!(
                "moved the detached HEAD from {} to {}",
                short(was),
                short(*at)
            ),
            Now::Branch(name, at) => format!(
                "put HEAD, detached at {}, on branch `{}`{}",
                short(was),
                branch_name(name),
                at_commit(*at)
            ),
        };
        Ok(Some(format!(
            "{by} changed the repository: it {moved}{}. {}",
            undo.staged(),
            undo.with(&format!("git update-ref --no-deref HEAD {was}"))
        )))
    }

    /// The message for `HEAD` that was on the branch `name` before.
    fn branch_moved(
        &self,
        repo: &git2::Repository,
        name: &str,
        now: &Now,
        by: &str,
        put_back: &Undo<'_>,
    ) -> Option<String> {
        let was = self.was();
        let shown = branch_name(name);
        let mut undo = Vec::new();
        let moved = match now {
            Now::Branch(now_name, at) if now_name == name => match (was, *at) {
                (Was::At(was), Some(at)) if was == at => return None,
                (Was::Nothing, None) => return None,
                (Was::At(was), Some(at)) => {
                    undo.push(format!("git reset --soft {was}"));
                    format!(
                        "moved branch `{shown}` (HEAD) from {} to {}",
                        short(was),
                        short(at)
                    )
                }
                (Was::Nothing, Some(at)) => {
                    undo.push(format!("git update-ref -d {name}"));
                    format!(
                        "made the first commit of branch `{shown}` (HEAD), {}",
                        short(at)
                    )
                }
                (Was::At(was), None) => {
                    undo.push(format!("git update-ref {name} {was}"));
                    format!(
                        "deleted branch `{shown}` (HEAD), which was at {}",
                        short(was)
                    )
                }
                // Packed, with `packed-refs` rewritten since: its reflog
                // still says where it was.
                (Was::Unknown, at) => {
                    let leaving = match put_back.index {
                        Index::Kept(index) => format!(
                            "; then `{index}` puts back the index as it was before the checks (its copy stays with the run until old runs are pruned), leaving the work tree as it is"
                        ),
                        Index::Unkept(why) => format!(", {}", unkept(why)),
                        Index::Untouched => {
                            ", leaving the index and the work tree as they are".to_string()
                        }
                    };
                    return Some(format!(
                        "{by} changed the repository: it moved branch `{shown}` (HEAD){}{}. `git reflog {shown}` shows where it was, and `git reset --soft <that commit>` puts it back{leaving}",
                        at_commit(at).replace(" at ", " to "),
                        put_back.staged(),
                    ));
                }
            },
            other => {
                // Switched away: the branch itself may have moved first.
                let left_at = super::refs::target(repo, name);
                let to = match other {
                    Now::Branch(now_name, at) => {
                        let now_name = branch_name(now_name);
                        format!(
                            "to branch `{now_name}`{} (if it made that branch, `git branch -D {now_name}` deletes it)",
                            at_commit(*at)
                        )
                    }
                    Now::Detached(at) => format!("to a detached HEAD at {}", short(*at)),
                };
                let mut moved = format!("switched HEAD from branch `{shown}` {to}");
                undo.push(format!("git symbolic-ref HEAD {name}"));
                match (was, left_at) {
                    (Was::At(was), Some(at)) if was != at => {
                        moved.push_str(&format!(
                            ", and moved `{shown}` from {} to {}",
                            short(was),
                            short(at)
                        ));
                        undo.push(format!("git update-ref {name} {was}"));
                    }
                    (Was::At(was), None) => {
                        moved.push_str(&format!(
                            ", and deleted `{shown}`, which was at {}",
                            short(was)
                        ));
                        undo.push(format!("git update-ref {name} {was}"));
                    }
                    _ => {}
                }
                moved
            }
        };
        Some(format!(
            "{by} changed the repository: it {moved}{}. {}",
            put_back.staged(),
            put_back.with(&undo.join(" && "))
        ))
    }

    /// Where `HEAD`'s branch stood before the checks: its loose ref's
    /// bytes, else its line in `packed-refs` when that file is as it was.
    fn was(&self) -> Was {
        if let Some(reftable) = &self.reftable {
            return match reftable.known.as_ref().map(|known| known.head.commit) {
                Some(Some(at)) => Was::At(at),
                Some(None) => Was::Nothing,
                None => Was::Unknown,
            };
        }
        let Some((_, loose)) = &self.branch else {
            return Was::Unknown;
        };
        if let Some(bytes) = loose {
            return oid_in(bytes).map_or(Was::Unknown, Was::At);
        }
        if FileStat::of(&self.packed) != self.packed_before {
            return Was::Unknown;
        }
        let Some(name) = symbolic(&self.head) else {
            return Was::Unknown;
        };
        packed_ref(&fs::read(&self.packed).unwrap_or_default(), name).map_or(Was::Nothing, Was::At)
    }
}

/// How the undo a message gives treats the index.
struct Undo<'a> {
    index: Index<'a>,
}

/// What the checks did to what the index stages, and what of it the
/// undo can give back.
enum Index<'a> {
    /// Nothing: the undo moves refs alone.
    Untouched,
    /// They changed it; the command that puts back a copy of it as it was.
    Kept(&'a str),
    /// They changed it, and no copy could be kept: why.
    Unkept(&'a str),
}

/// What an undo that moves refs alone leaves, when the checks changed
/// what the index stages and no copy of it could be kept (`why`).
fn unkept(why: &str) -> String {
    format!(
        "which leaves what the checks staged staged (a copy of the index as it was could not be kept: {why}): what you had staged in part, or left unstaged or untracked, is staged whole now; `git restore --staged <path>` unstages a file, and `git add -p <path>` stages again what you want"
    )
}

impl Undo<'_> {
    /// What the message adds to what the checks did.
    fn staged(&self) -> &'static str {
        match self.index {
            Index::Untouched => "",
            Index::Kept(_) | Index::Unkept(_) => ", and changed what the index stages",
        }
    }

    /// The sentence that gives `commands` (which move refs only), with
    /// the index put back after them when the checks changed it.
    fn with(&self, commands: &str) -> String {
        match self.index {
            Index::Kept(index) => format!(
                "Undo it with `{commands} && {index}`, which puts back the index as it was before the checks (its copy stays with the run until old runs are pruned) and leaves the work tree as it is"
            ),
            Index::Unkept(why) => format!("Undo it with `{commands}`, {}", unkept(why)),
            Index::Untouched => format!(
                "Undo it with `{commands}`, which leaves the index and the work tree as they are"
            ),
        }
    }
}

/// The ref a `HEAD` file's bytes name (`ref: refs/heads/main`), if any.
fn symbolic(head: &[u8]) -> Option<&str> {
    let name = std::str::from_utf8(head.strip_prefix(b"ref: ")?)
        .ok()?
        .trim_end();
    // Only a ref git could have written: nothing reads outside the
    // git directory.
    (name.starts_with("refs/") && !name.split('/').any(|part| part.is_empty() || part == ".."))
        .then_some(name)
}

/// The loose file of the ref `name`: refs of one work tree (`bisect`,
/// `worktree`, `rewritten`) in its own git directory, the others in the
/// common one.
fn ref_file(git_dir: &Path, common_dir: &Path, name: &str) -> PathBuf {
    let own = super::select::PER_WORK_TREE_REFS
        .iter()
        .any(|prefix| name.starts_with(prefix));
    if own { git_dir } else { common_dir }.join(name)
}

/// The object id a ref file (or a detached `HEAD`) holds.
fn oid_in(bytes: &[u8]) -> Option<git2::Oid> {
    let text = std::str::from_utf8(bytes).ok()?.trim_end();
    git2::Oid::from_str(text).ok()
}

/// The commit `packed-refs` (`text`) gives the ref `name`: a line
/// `<oid> <name>`; `^<oid>` lines peel the tag above them.
fn packed_ref(text: &[u8], name: &str) -> Option<git2::Oid> {
    text.split(|&b| b == b'\n').find_map(|line| {
        let (id, rest) = line.split_at(memchr::memchr(b' ', line)?);
        (rest.get(1..)? == name.as_bytes())
            .then(|| oid_in(id))
            .flatten()
    })
}

/// A branch's name without `refs/heads/`.
fn branch_name(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

/// ` at <commit>`, or ` (no commit yet)`.
fn at_commit(at: Option<git2::Oid>) -> String {
    at.map_or_else(
        || " (no commit yet)".to_string(),
        |at| format!(" at {}", short(at)),
    )
}

/// A commit as a person reads it: its first 10 hex digits.
fn short(id: git2::Oid) -> String {
    let full = id.to_string();
    full.get(..10).unwrap_or(&full).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_ref_is_found_by_its_whole_name_and_peeled_lines_are_passed_over() {
        let a = "1".repeat(40);
        let b = "2".repeat(40);
        let text = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{a} refs/heads/main-old\n{b} refs/heads/main\n^{a}\n"
        );
        assert_eq!(
            packed_ref(text.as_bytes(), "refs/heads/main"),
            git2::Oid::from_str(&b).ok()
        );
        assert_eq!(packed_ref(text.as_bytes(), "refs/heads/mai"), None);
    }

    #[test]
    fn only_a_ref_name_git_could_write_is_followed() {
        assert_eq!(symbolic(b"ref: refs/heads/main\n"), Some("refs/heads/main"));
        assert_eq!(symbolic(b"ref: refs/../../etc/passwd\n"), None);
        assert_eq!(symbolic(b"ref: /etc/passwd\n"), None);
        assert_eq!(symbolic(format!("{}\n", "3".repeat(40)).as_bytes()), None);
    }
}
