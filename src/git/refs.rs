//! The one place refs and revisions are resolved. An ordinary repository's
//! are read by libgit2, as before; one that keeps its refs in the reftable
//! format (`git init --ref-format=reftable`, git 3.0's default), which
//! libgit2 cannot read, has them resolved by the real `git`. libgit2 still
//! reads its objects, index and trees, but its refs there are a stub (`HEAD`
//! names `refs/heads/.invalid`): nothing outside this file may ask libgit2
//! for a ref or a revision, or read `HEAD` or a ref file.
//!
//! A repository is known to be reftable only once libgit2 refused to open
//! it for its `extensions.refStorage` (see `repo::may_reopen`): an ordinary
//! run pays one atomic load here and spawns nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use git2::{Oid, Repository};

/// Set once a reftable repository was opened by this process.
static SEEN: AtomicBool = AtomicBool::new(false);

/// Records that a repository keeping its refs as reftable is being opened.
pub(super) fn seen() {
    SEEN.store(true, Ordering::Relaxed);
}

/// Whether the repository whose common git directory is `common_dir`
/// keeps its refs as reftable; one stat, and only once such a repository
/// was opened.
pub(super) fn reftable_at(common_dir: &Path) -> bool {
    SEEN.load(Ordering::Relaxed) && common_dir.join("reftable").is_dir()
}

/// Whether `repo` keeps its refs as reftable.
pub(super) fn reftable(repo: &Repository) -> bool {
    reftable_at(repo.commondir())
}

/// `HEAD` as git resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Head {
    /// The branch it names (`refs/heads/main`); `None` when detached.
    pub branch: Option<String>,
    /// The commit it is at; `None` on an unborn branch.
    pub commit: Option<Oid>,
}

impl Head {
    /// `HEAD`'s file as the files format would hold it: `ref: <branch>`,
    /// or the commit of a detached `HEAD`.
    pub fn as_file(&self) -> Vec<u8> {
        match (&self.branch, self.commit) {
            (Some(branch), _) => format!("ref: {branch}\n").into_bytes(),
            (None, Some(commit)) => format!("{commit}\n").into_bytes(),
            (None, None) => Vec::new(),
        }
    }
}

/// What a reftable repository's refs were when `HEAD` was last asked:
/// the stacks' `tables.list` files of the work tree's git directory and of
/// the common one. git rewrites one whenever a ref changes, so the same
/// bytes mean the same refs (a compaction changes them too, which only
/// costs one more question).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stamp(Vec<u8>, Vec<u8>);

impl Stamp {
    pub fn of(git_dir: &Path, common_dir: &Path) -> Stamp {
        let read = |dir: &Path| std::fs::read(dir.join("reftable/tables.list")).unwrap_or_default();
        let own = if git_dir == common_dir {
            Vec::new()
        } else {
            read(git_dir)
        };
        Stamp(own, read(common_dir))
    }
}

/// `HEAD` and `refs/stash` of a reftable repository, as last asked, with
/// the stamp they were asked under.
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub head: Head,
    /// Whether `refs/stash` exists.
    pub stash: bool,
}

/// The last answer, kept for the run: a staged run asks once for `HEAD`
/// however many steps read it.
static KNOWN: Mutex<Option<(PathBuf, Stamp, Known)>> = Mutex::new(None);

/// `HEAD` (and whether a stash exists) of the reftable repository whose
/// work tree's git directory is `git_dir`; asked of git once while its
/// refs stay as they are.
pub(super) fn known_at(git_dir: &Path, common_dir: &Path) -> Result<Known, git2::Error> {
    let stamp = Stamp::of(git_dir, common_dir);
    // libgit2's path and the one `RepoInfo` keeps differ in their spelling.
    let git_dir = super::repo::canonical(git_dir);
    if let Ok(known) = KNOWN.lock() {
        if let Some((dir, was, known)) = known.as_ref() {
            if *dir == git_dir && *was == stamp {
                return Ok(known.clone());
            }
        }
    }
    let known = ask_head(&git_dir)?;
    if let Ok(mut kept) = KNOWN.lock() {
        *kept = Some((git_dir, stamp, known.clone()));
    }
    Ok(known)
}

/// One `git for-each-ref` for `HEAD` and `refs/stash`; a second question
/// only for an unborn branch (which `for-each-ref` leaves out) or a git
/// older than 2.46 (which lists no `HEAD` there).
fn ask_head(git_dir: &Path) -> Result<Known, git2::Error> {
    let listed = git(
        git_dir,
        &[
            "for-each-ref",
            "--include-root-refs",
            "--format=%(refname)%00%(objectname)%00%(symref)",
            "HEAD",
            "refs/stash",
        ],
    )?;
    let mut head = None;
    let mut stash = false;
    if let Some(out) = &listed {
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let mut fields = line.split(|&b| b == 0);
            let (Some(name), Some(id), Some(symref)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            match name {
                b"HEAD" => {
                    head = Some(Head {
                        branch: (!symref.is_empty())
                            .then(|| String::from_utf8_lossy(symref).into_owned()),
                        commit: oid(id),
                    });
                }
                b"refs/stash" => stash = true,
                _ => {}
            }
        }
    }
    let head = match head {
        Some(head) => head,
        None => {
            // Unborn (or an older git): the branch, then its commit.
            let branch = git(git_dir, &["symbolic-ref", "-q", "HEAD"])?
                .map(|out| String::from_utf8_lossy(&out).trim_end().to_string());
            let commit = match &listed {
                Some(_) => None,
                None => {
                    stash = rev_parse(git_dir, "refs/stash")?.is_some();
                    rev_parse(git_dir, "HEAD^{commit}")?
                }
            };
            Head { branch, commit }
        }
    };
    Ok(Known { head, stash })
}

/// `HEAD` of `repo`: its branch and commit. Through git in a reftable
/// repository.
pub(super) fn head(repo: &Repository) -> Result<Head, git2::Error> {
    if reftable(repo) {
        return known_at(repo.path(), repo.commondir()).map(|known| known.head);
    }
    let reference = repo.find_reference("HEAD")?;
    let branch = reference
        .symbolic_target_bytes()
        .map(|name| String::from_utf8_lossy(name).into_owned());
    Ok(Head {
        branch,
        commit: head_commit(repo)?,
    })
}

/// The commit `HEAD` is at; `None` on an unborn branch (the first commit
/// of a new repository).
pub(super) fn head_commit(repo: &Repository) -> Result<Option<Oid>, git2::Error> {
    if reftable(repo) {
        return known_at(repo.path(), repo.commondir()).map(|known| known.head.commit);
    }
    match repo.head() {
        Ok(head) => head.peel_to_commit().map(|c| Some(c.id())),
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// What the revision `spec` names (`main`, `HEAD~2`, `origin/main`, an
/// id, `v1.0^{tree}`), as `git rev-parse` reads it.
pub(super) fn lookup<'r>(
    repo: &'r Repository,
    spec: &str,
) -> Result<git2::Object<'r>, git2::Error> {
    if !reftable(repo) {
        return repo.revparse_single(spec);
    }
    if spec == "HEAD" || spec == "@" {
        return match head_commit(repo)? {
            Some(id) => repo.find_object(id, None),
            None => Err(git2::Error::new(
                git2::ErrorCode::UnbornBranch,
                git2::ErrorClass::Reference,
                "HEAD has no commit yet",
            )),
        };
    }
    let out = git_output(
        repo.path(),
        &["rev-parse", "--verify", "--end-of-options", spec],
    )?;
    match out.status.success().then(|| oid(&out.stdout)).flatten() {
        Some(id) => repo.find_object(id, None),
        None => {
            let said = String::from_utf8_lossy(&out.stderr);
            let code = if said.contains("ambiguous") {
                git2::ErrorCode::Ambiguous
            } else {
                git2::ErrorCode::NotFound
            };
            Err(git2::Error::new(
                code,
                git2::ErrorClass::Reference,
                format!("git could not resolve `{spec}`: {}", said.trim()),
            ))
        }
    }
}

/// The commit the full ref `name` is at, if it exists.
pub(super) fn target(repo: &Repository, name: &str) -> Option<Oid> {
    if reftable(repo) {
        return rev_parse(repo.path(), &format!("{name}^{{commit}}")).ok()?;
    }
    repo.refname_to_id(name).ok()
}

/// Which of the full ref names `names` exist (`HEAD` and the other root
/// refs included), in their order.
pub(super) fn existing(repo: &Repository, names: &[String]) -> Vec<String> {
    if !reftable(repo) {
        return names
            .iter()
            .filter(|name| repo.find_reference(name).is_ok())
            .cloned()
            .collect();
    }
    let listed = all_by_git(repo.path(), names).unwrap_or_default();
    names
        .iter()
        .filter(|name| listed.iter().any(|r| r.name == name.as_bytes()))
        .cloned()
        .collect()
}

/// A ref, as `all` lists it.
#[derive(Debug, Clone)]
pub(super) struct Listed {
    /// Its full name, in bytes (a name need not be UTF-8).
    pub name: Vec<u8>,
    /// The object it names, a symbolic ref's resolved.
    pub id: Option<Oid>,
    /// The ref a symbolic ref names.
    pub symbolic: Option<Vec<u8>>,
}

/// Every ref under `refs/` of `repo`.
pub(super) fn all(repo: &Repository) -> Result<Vec<Listed>, git2::Error> {
    if reftable(repo) {
        return all_by_git(repo.path(), &[]);
    }
    let mut listed = Vec::new();
    for reference in repo.references()?.flatten() {
        let symbolic = reference.symbolic_target_bytes().map(<[u8]>::to_vec);
        let id = match reference.target() {
            Some(id) => Some(id),
            None => reference.resolve().ok().and_then(|r| r.target()),
        };
        listed.push(Listed {
            name: reference.name_bytes().to_vec(),
            id,
            symbolic,
        });
    }
    Ok(listed)
}

/// The refs `git for-each-ref` lists for `patterns` (every ref under
/// `refs/` when there are none).
fn all_by_git(git_dir: &Path, patterns: &[String]) -> Result<Vec<Listed>, git2::Error> {
    let mut args = vec![
        "for-each-ref".to_string(),
        "--format=%(refname)%00%(objectname)%00%(symref)".to_string(),
    ];
    // Root refs (`HEAD`, `ORIG_HEAD`) are listed only when asked for.
    if patterns.iter().any(|p| !p.starts_with("refs/")) {
        args.push("--include-root-refs".to_string());
    }
    args.extend(patterns.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(out) = git(git_dir, &args)? else {
        return Err(failure("for-each-ref", "it failed"));
    };
    Ok(out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|line| {
            let mut fields = line.split(|&b| b == 0);
            let name = fields.next()?.to_vec();
            let id = oid(fields.next()?);
            let symref = fields.next()?;
            Some(Listed {
                name,
                id,
                symbolic: (!symref.is_empty()).then(|| symref.to_vec()),
            })
        })
        .collect())
}

/// The stash's reflog of the reftable repository whose git directory is
/// `git_dir`, in the text of the files format's `logs/refs/stash` (oldest
/// first, `<old> <new> …\t<message>`); empty when there is no stash.
pub(super) fn stash_log(git_dir: &Path) -> Vec<u8> {
    let Ok(Some(out)) = git(
        git_dir,
        &["reflog", "show", "--format=%H%x09%gs", "refs/stash", "--"],
    ) else {
        return Vec::new();
    };
    let mut text = Vec::new();
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).rev() {
        text.extend_from_slice(b"0 ");
        text.extend_from_slice(line.splitn(2, |&b| b == b'\t').next().unwrap_or_default());
        text.extend_from_slice(b" reftable\t");
        text.extend_from_slice(line.splitn(2, |&b| b == b'\t').nth(1).unwrap_or_default());
        text.push(b'\n');
    }
    text
}

/// `git rev-parse --verify -q` of `spec`: `None` when it names nothing.
fn rev_parse(git_dir: &Path, spec: &str) -> Result<Option<Oid>, git2::Error> {
    Ok(git(
        git_dir,
        &["rev-parse", "--verify", "-q", "--end-of-options", spec],
    )?
    .and_then(|out| oid(&out)))
}

/// The object id a line of git's output holds.
fn oid(text: &[u8]) -> Option<Oid> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| Oid::from_str(t.trim()).ok())
        .filter(|id| !id.is_zero())
}

/// What `git <args>` printed when it succeeded; `None` when it said no.
fn git(git_dir: &Path, args: &[&str]) -> Result<Option<Vec<u8>>, git2::Error> {
    let out = git_output(git_dir, args)?;
    Ok(out.status.success().then_some(out.stdout))
}

/// `git <args>` run on the repository whose git directory is `git_dir`,
/// without a shell, away from the repository variables phasegate was
/// started with (the configuration git was given stays).
fn git_output(git_dir: &Path, args: &[&str]) -> Result<std::process::Output, git2::Error> {
    let mut command = Command::new("git");
    for key in crate::runner::GIT_LOCAL_ENV {
        if !key.starts_with("GIT_CONFIG") {
            command.env_remove(key);
        }
    }
    command
        .args(args)
        .current_dir(git_dir)
        .env("GIT_DIR", git_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| failure(args.first().copied().unwrap_or("git"), &e.to_string()))
}

/// The error of a `git` that could not answer, naming reftable: without
/// it phasegate cannot read this repository's refs.
fn failure(what: &str, why: &str) -> git2::Error {
    git2::Error::new(
        git2::ErrorCode::GenericError,
        git2::ErrorClass::Reference,
        format!(
            "this repository keeps its refs in the reftable format, which phasegate reads through `git`, and `git {what}` failed ({why}): check that `git` (2.45 or later) is on PATH, or convert the repository with `git refs migrate --ref-format=files`"
        ),
    )
}
