//! Installing and removing phasegate's git hooks. A hook phasegate did not
//! write is never lost: it is kept beside ours and still runs first, and
//! uninstalling puts it back.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The line that marks a hook as phasegate's own.
const MARKER: &str = "# phasegate-hook v1";
const PRE_COMMIT: &str = include_str!("../../hooks/pre-commit");
const PRE_PUSH: &str = include_str!("../../hooks/pre-push");

/// The hooks phasegate can install, in the order an install writes them
/// (a `pre-merge-commit -> pre-commit` link finds phasegate's pre-commit
/// hook there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookKind {
    PreCommit,
    /// Before the commit of a merge that needed no resolution (`git merge`
    /// makes it without running pre-commit): the same gate on what it
    /// records.
    PreMergeCommit,
    PrePush,
}

/// The templates of the scripts earlier versions of phasegate wrote (what
/// `hooks/` held then), as git blob ids: upgrading phasegate and installing
/// again replaces them as phasegate's own. `fixtures/hooks/` has the first
/// of each.
const EARLIER_PRE_COMMIT: [&str; 6] = [
    "cc7a7d567e21bd1ff011db792671a84255fcf545",
    "27d05406281caceda4bb7feabece429fc4766281",
    "bfc3dcac6d020a5abcb1b8db851497d02bd6d690",
    "8c634c55633a610918eeb4cc37562b50d7da77c1",
    "0065deb6b192244b67331e9245239749aac489c1",
    "8ffbb2068650519e51e0b55d4489fda181e53e6d",
];
const EARLIER_PRE_PUSH: [&str; 7] = [
    "1d65b971d29eea6631119c7da84ca8e53abe61d0",
    "4aba38bd4c040808896414aa30e48aa31f538860",
    "8653c4f591178af641766deeba54f0d785485b69",
    "09a864f23ec809918171ef4434dcd44bc5b1123c",
    "275c86deb86533a11df45580d478e7d5b239a3c2",
    "48d77841c9cf88261e5371afb2066f203bb378d4",
    "3baae0a46541421cf2e2db6a8f50b1a366adc9e5",
];

impl HookKind {
    pub const NAMES: [&'static str; 3] = ["pre-commit", "pre-merge-commit", "pre-push"];

    pub fn name(self) -> &'static str {
        match self {
            HookKind::PreCommit => "pre-commit",
            HookKind::PreMergeCommit => "pre-merge-commit",
            HookKind::PrePush => "pre-push",
        }
    }

    pub fn parse(name: &str) -> Option<HookKind> {
        match name {
            "pre-commit" => Some(HookKind::PreCommit),
            "pre-merge-commit" => Some(HookKind::PreMergeCommit),
            "pre-push" => Some(HookKind::PrePush),
            _ => None,
        }
    }

    /// Whether `text` is a script this or an earlier version of
    /// phasegate writes for this hook, as it wrote it: an install replaces
    /// such a hook without keeping it as someone's edit.
    fn written_unchanged(self, text: &str) -> bool {
        // A checkout with `core.autocrlf=true` turns a tracked hook's line
        // ends into CRLF: it is still the script phasegate wrote.
        let template = ["0", "1"]
            .iter()
            .fold(text.replace("\r\n", "\n"), |text, value| {
                text.replacen(
                    &format!("\nfail_closed={value}\n"),
                    "\nfail_closed=@FAIL_CLOSED@\n",
                    1,
                )
            });
        let template = without_installed(&template);
        let (template, current, earlier) = match self {
            HookKind::PreCommit => (template, PRE_COMMIT, &EARLIER_PRE_COMMIT[..]),
            HookKind::PreMergeCommit => (
                template.replacen("\nhook=pre-merge-commit\n", "\nhook=pre-commit\n", 1),
                PRE_COMMIT,
                &EARLIER_PRE_COMMIT[..],
            ),
            HookKind::PrePush => (template, PRE_PUSH, &EARLIER_PRE_PUSH[..]),
        };
        if template == current {
            return true;
        }
        git2::Oid::hash_object(git2::ObjectType::Blob, template.as_bytes())
            .is_ok_and(|id| earlier.contains(&id.to_string().as_str()))
    }

    /// The script for this hook; `installed` is the phasegate it runs
    /// when none is on `PATH` (none: only the one on `PATH`).
    fn script(self, fail_closed: bool, installed: Option<&Path>) -> String {
        let template = match self {
            HookKind::PreCommit => PRE_COMMIT.to_string(),
            // The pre-commit script, under its own name.
            HookKind::PreMergeCommit => {
                PRE_COMMIT.replace("hook=pre-commit", "hook=pre-merge-commit")
            }
            HookKind::PrePush => PRE_PUSH.to_string(),
        };
        template
            .replace("@FAIL_CLOSED@", if fail_closed { "1" } else { "0" })
            .replacen(
                "\ninstalled=@INSTALLED@\n",
                &format!("\ninstalled={}\n", shell_quoted(installed)),
                1,
            )
    }
}

/// `path` as one word of a shell script, single-quoted; empty when there
/// is none, or when it can not be one line of the script (not UTF-8, or
/// holding a newline), which only costs the fallback.
fn shell_quoted(path: Option<&Path>) -> String {
    path.and_then(Path::to_str)
        .filter(|path| !path.contains('\n'))
        .map(|path| format!("'{}'", path.replace('\'', r"'\''")))
        .unwrap_or_default()
}

/// The script `text` with the phasegate it falls back to taken out (put
/// back as the template has it): which one that is depends on the install
/// that wrote it, not on the script.
fn without_installed(text: &str) -> String {
    let Some(start) = text.find("\ninstalled=") else {
        return text.to_string();
    };
    let value = start + "\ninstalled=".len();
    let end = text[value..].find('\n').map_or(text.len(), |n| value + n);
    format!("{}@INSTALLED@{}", &text[..value], &text[end..])
}

#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Replace a hook kept from an earlier install (it is backed up).
    pub force: bool,
    /// When phasegate is missing, the hook stops the commit instead of
    /// letting it through with a warning.
    pub fail_closed: bool,
    /// The phasegate the hook runs when none is on `PATH` (the one
    /// installing it): a git GUI's `PATH` often lacks `~/.cargo/bin`.
    pub installed: Option<PathBuf>,
    /// The same install writes phasegate's pre-commit hook, with these
    /// options, before its pre-merge-commit hook: a `pre-merge-commit ->
    /// pre-commit` link runs that one at merge commits.
    pub pre_commit_too: bool,
}

#[derive(Debug)]
pub enum InstallOutcome {
    Installed {
        path: PathBuf,
        chained: Option<PathBuf>,
        notes: InstallNotes,
    },
    /// Git runs the gate from a hook of the project's already (a line
    /// `phasegate hook pre-commit` or `phasegate run` in it, or in the
    /// project's `.husky/<hook>` that husky's stub runs): phasegate's hook
    /// would run it a second time, so none is installed.
    GatedAlready {
        /// The hook git runs.
        path: PathBuf,
        /// The file that calls phasegate.
        caller: PathBuf,
        /// phasegate's hook was there too, from an earlier install, and
        /// ran the gate a second time: it was taken out as `uninstall`
        /// takes it out.
        removed: Option<UninstallOutcome>,
    },
    /// The `pre-merge-commit` hook is a symbolic link of one's own to the
    /// pre-commit hook beside it (people link it so that merge commits run
    /// their commit hook): it stays as it is, and runs whatever the
    /// pre-commit hook runs, phasegate's gate once when that is
    /// phasegate's hook.
    LinksToPreCommit {
        /// The link.
        path: PathBuf,
        /// What it names, as it names it.
        target: PathBuf,
        /// Whether the pre-commit hook runs phasegate's gate (it is
        /// phasegate's hook, or a hook that calls phasegate).
        gated: bool,
        /// The hook of one's own that phasegate's pre-commit hook keeps,
        /// and runs first.
        keeps: Option<PathBuf>,
    },
    /// Ours was there already; it was rewritten with the current options.
    AlreadyInstalled {
        path: PathBuf,
        /// What the rewrite changed, if anything (`fail_closed` turned on
        /// or off, a newer script).
        changed: Option<String>,
        /// Where the script that was there went, when it was not one
        /// phasegate writes (someone changed it).
        edited: Option<PathBuf>,
        /// The `.gitattributes` given a rule that keeps the hook's line
        /// ends LF in every clone (see `keep_line_ends`).
        line_ends: Option<PathBuf>,
        /// The hook there is a symbolic link to phasegate's hook outside
        /// this repository: it gates this one only while that is there.
        elsewhere: Option<LinkedElsewhere>,
        /// The rewrite turned the pre-commit hook open, and the
        /// `pre-merge-commit` hook is a link to it: merge commits are let
        /// through too when phasegate is missing.
        merge_link: Option<PathBuf>,
    },
}

/// A hook that is a symbolic link to phasegate's hook outside the
/// repository (its git directory, its hooks directory, its work tree):
/// `phasegate uninstall` where that hook is, or deleting it, leaves the
/// link naming nothing, and git then runs no hook and says nothing.
#[derive(Debug)]
pub struct LinkedElsewhere {
    /// The file the link leads to, every link on the way followed.
    pub target: PathBuf,
    /// The repository that file belongs to, if any: its work tree's root,
    /// or its git directory when it has none.
    pub repository: Option<PathBuf>,
}

/// The hooks directory git runs this repository's hooks from, when it is
/// the one another repository runs its own from (`core.hooksPath` naming
/// that repository's `.git/hooks`, or `.git/hooks` a link to it):
/// `phasegate uninstall` there removes this repository's hooks too.
#[derive(Debug)]
pub struct HooksOfAnother {
    /// The hooks directory, resolved.
    pub dir: PathBuf,
    /// The other repository: its work tree's root, or its git directory.
    pub repository: PathBuf,
    /// The `core.hooksPath` setting of this repository that names it, if
    /// that is how it is reached, with the command that unsets it.
    pub unset: Option<String>,
}

/// What else people should know of an install: a kept hook that had to
/// move aside, a hook file that the repository tracks.
#[derive(Debug, Default)]
pub struct InstallNotes {
    /// `--force` moved an earlier kept hook here; it no longer runs.
    pub backed_up: Option<PathBuf>,
    /// The hook is a file of the repository (`core.hooksPath` in the work
    /// tree): installing changed a tracked file.
    pub tracked: Option<PathBuf>,
    /// A hook kept by an earlier install, whose phasegate hook was deleted
    /// by hand since: it runs first again.
    pub revived: Option<PathBuf>,
    /// The `.gitattributes` given a rule that keeps the hook's line ends LF
    /// in every clone (see `keep_line_ends`).
    pub line_ends: Option<PathBuf>,
    /// The hook that was there is a symbolic link to this path, which does
    /// not exist: git did not run it, and the kept link does not run
    /// either until its target is there.
    pub dangling: Option<PathBuf>,
    /// The hook that was there is a symbolic link of one's own to
    /// phasegate's hook of this name (`--force`): it is kept, and does not
    /// run, as phasegate's hook runs no phasegate hook it keeps.
    pub linked_hook: Option<String>,
}

#[derive(Debug)]
pub enum UninstallOutcome {
    Removed {
        path: PathBuf,
        restored: Option<PathBuf>,
        /// Where phasegate's hook went instead of being deleted, when it
        /// was not a script phasegate writes (someone changed it).
        edited: Option<PathBuf>,
    },
    /// phasegate's hook was gone already; the hook it had replaced is back
    /// at `path`.
    RestoredOnly { path: PathBuf },
    NotInstalled {
        /// Where git runs the hook.
        path: PathBuf,
        /// A hook that is not phasegate's is there, and stays as it is.
        theirs: bool,
        /// A hook an earlier install kept, which stays where it is: another
        /// hook took phasegate's place since.
        left: Option<PathBuf>,
        /// A hook an earlier install kept, removed: it was a copy of the
        /// hook there now (husky wrote its stub again over phasegate's
        /// hook), no one's only copy.
        dropped: Option<PathBuf>,
        /// The hook there is a symbolic link of one's own to phasegate's
        /// hook, which it names so: it stays, and still runs that gate.
        links_to: Option<PathBuf>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("failed to open the git repository at `{}`", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    /// A repository phasegate cannot read, or one git does not trust: a
    /// hook installed there could only block.
    #[error(transparent)]
    Unreadable(super::GitError),
    #[error("`{}` is not in a git repository: run `git init` first, or name the repository with GIT_DIR and its work tree with GIT_WORK_TREE", path.display())]
    NotARepository { path: PathBuf },
    #[error("`{}` is a bare repository: hooks need a work tree", path.display())]
    Bare { path: PathBuf },
    #[error("failed to read `core.hooksPath`")]
    Config(#[source] git2::Error),
    #[error("failed to {what} `{}`", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is a hook phasegate did not write, and `{}` already keeps an earlier one; run `phasegate install --force` to back that one up and chain this one", hook.display(), chained.display())]
    ChainOccupied { hook: PathBuf, chained: PathBuf },
    #[error("`{}` is a symbolic link of your own to phasegate's {other} hook (`{}`): {}. phasegate's {kind} hook would take its place (phasegate writes no hook through a link), and it does not run a phasegate hook it keeps. Remove the link and run the same `phasegate install` again, or run it again with `--force` to keep the link as `{}`, where it does not run, until `phasegate uninstall` puts it back", hook.display(), target.display(), linked_why(other, kind), chained.display())]
    LinkedToOurs {
        hook: PathBuf,
        target: PathBuf,
        /// The hook whose script the link leads to.
        other: String,
        kind: &'static str,
        chained: PathBuf,
    },
    #[error("`{}` is a link of your own to the pre-commit hook beside it (`{}`), {why}, so merge commits would not stop when phasegate is not installed, as `--fail-closed` asks: run `phasegate install --hook pre-commit --hook pre-merge-commit --fail-closed` to make the pre-commit hook fail-closed too (the link runs it at merge commits), or remove the link (`rm {}`) and run this install again for phasegate's own pre-merge-commit hook (which does not run your pre-commit hook)", hook.display(), target.display(), hook.display())]
    MergeLinkOpen {
        hook: PathBuf,
        target: PathBuf,
        why: &'static str,
    },
    #[error("`core.hooksPath` is set to an empty value: git then looks for hooks in `/` and runs none of this repository's; run `{unset}` to use the repository's own hooks, or point it at a directory")]
    HooksPathEmpty { unset: String },
    #[error("`{}` is not a directory: {help}, then run `phasegate install` again", dir.display())]
    NotADirectory { dir: PathBuf, help: String },
    #[error("the hooks directory `{}` is a symbolic link to `{}`, which does not exist: create that directory (or remove the link), then run `phasegate install` again", dir.display(), target.display())]
    DanglingLink { dir: PathBuf, target: PathBuf },
    #[error("failed to {what} `{}`: {}", path.display(), not_writable_help(dir, *read_only_fs))]
    NotWritable {
        what: &'static str,
        path: PathBuf,
        dir: PathBuf,
        read_only_fs: bool,
        #[source]
        source: std::io::Error,
    },
    #[error("another `phasegate install` or `phasegate uninstall` holds the lock on the hooks directory `{}` (flock(2) on the directory) and did not let go of it within {} seconds: let it finish, or end it if it hangs (`fuser {}` names the process holding it), then run this command again", dir.display(), LOCK_WAIT.as_secs(), dir.display())]
    Locked { dir: PathBuf },
    /// Said whole here, not as a source: its message is what to do.
    #[error("failed to lock the hooks directory `{}`: {why}; nothing was changed", dir.display())]
    Unlockable { dir: PathBuf, why: std::io::Error },
    #[error("git can not run a hook from `{}`: {why}, so git would skip it and let every commit and push through unchecked; {remedy}, then run `phasegate install` again", dir.display())]
    NotExecutable {
        dir: PathBuf,
        why: &'static str,
        remedy: &'static str,
    },
}

/// What a link of one's own to phasegate's `other` hook does, at the hook
/// `kind`, that keeps an install from replacing it as phasegate's.
fn linked_why(other: &str, kind: &str) -> String {
    if other == kind {
        "that script is not the one this install writes, and rewriting it would change a file that is not in this hooks directory".to_string()
    } else {
        format!("it runs the {other} gate whenever git runs the {kind} hook")
    }
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> HookError + 'a {
    move |source| HookError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// `io` for a change in the hooks directory (creating, moving or removing a
/// hook): a directory or file system that can not be written says so, and
/// what to do, rather than only the error of the system call.
fn write_io<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> HookError + 'a {
    move |source| {
        let read_only_fs = source.kind() == std::io::ErrorKind::ReadOnlyFilesystem;
        if read_only_fs || source.kind() == std::io::ErrorKind::PermissionDenied {
            // The directory refused: the one the entry is made in, or, for a
            // hooks directory made with its parents, the first that exists.
            let dir = path
                .ancestors()
                .skip(1)
                .find(|dir| dir.is_dir())
                .unwrap_or(path)
                .to_path_buf();
            return HookError::NotWritable {
                what,
                path: path.to_path_buf(),
                dir,
                read_only_fs,
                source,
            };
        }
        io(what, path)(source)
    }
}

/// Why the directory `dir` (of the hooks) can not be written, and what to
/// do.
fn not_writable_help(dir: &Path, read_only_fs: bool) -> String {
    if read_only_fs {
        return format!(
            "the file system of `{}` is mounted read-only: remount it read-write, or point `core.hooksPath` at a directory you can write (`git config core.hooksPath DIR`), then run this command again; no hook was changed",
            dir.display()
        );
    }
    let quoted = Some(shell_quoted(Some(dir)))
        .filter(|quoted| !quoted.is_empty())
        .unwrap_or_else(|| dir.display().to_string());
    format!(
        "`{}` is not writable for you: make it writable (`chmod u+w {quoted}`, as its owner), or run phasegate as the user who owns it, then run this command again; no hook was changed",
        dir.display()
    )
}

/// The directory git runs hooks from: `core.hooksPath` (relative to the
/// work tree) or the hooks of the common git directory, which linked
/// worktrees share and submodules have of their own.
pub fn hooks_dir(repo_dir: &Path) -> Result<PathBuf, HookError> {
    hooks_location(repo_dir).map(|location| location.dir)
}

/// Where git runs hooks from, and the `core.hooksPath` setting that says
/// so, if any.
struct HooksLocation {
    dir: PathBuf,
    setting: Option<HooksPathSetting>,
}

/// A `core.hooksPath` setting: its value, and the `git config` options that
/// reach the file it is set in (`--global`, ...).
struct HooksPathSetting {
    value: PathBuf,
    scope: &'static str,
}

impl HooksPathSetting {
    /// The command that takes the setting away.
    fn unset(&self) -> String {
        format!("git config {}--unset core.hooksPath", self.scope)
    }

    /// Whether it is set for one work tree alone (`git config --worktree`).
    fn worktree_only(&self) -> bool {
        self.scope == "--worktree "
    }
}

fn hooks_location(repo_dir: &Path) -> Result<HooksLocation, HookError> {
    match super::locate(repo_dir) {
        Ok(Some(repo)) => location_of(&repo),
        Ok(None) => Err(HookError::NotARepository {
            path: repo_dir.to_path_buf(),
        }),
        Err(source) => Err(match super::repo::unopened(repo_dir, source) {
            super::GitError::Open { path, source } => HookError::Open { path, source },
            explained => HookError::Unreadable(explained),
        }),
    }
}

/// Where git runs the hooks of the work tree `repo` was opened at.
fn location_of(repo: &git2::Repository) -> Result<HooksLocation, HookError> {
    let Some(workdir) = repo.workdir() else {
        return Err(HookError::Bare {
            path: repo.path().to_path_buf(),
        });
    };
    let config = repo.config().map_err(HookError::Config)?;
    let value = match config.get_path("core.hooksPath") {
        Ok(path) => path,
        Err(e) if e.code() == git2::ErrorCode::NotFound => {
            return Ok(HooksLocation {
                dir: repo.commondir().join("hooks"),
                setting: None,
            })
        }
        Err(e) => return Err(HookError::Config(e)),
    };
    let scope = match config.get_entry("core.hooksPath").map(|e| e.level()) {
        Ok(git2::ConfigLevel::Global | git2::ConfigLevel::XDG) => "--global ",
        Ok(git2::ConfigLevel::System | git2::ConfigLevel::ProgramData) => "--system ",
        Ok(git2::ConfigLevel::Worktree) => "--worktree ",
        _ => "",
    };
    let setting = HooksPathSetting { value, scope };
    // git joins the hook's name to the value as it is: an empty one makes
    // it look in `/`, where this repository has no hooks.
    if setting.value.as_os_str().is_empty() {
        return Err(HookError::HooksPathEmpty {
            unset: setting.unset(),
        });
    }
    let dir = if setting.value.is_absolute() {
        setting.value.clone()
    } else {
        workdir.join(&setting.value)
    };
    Ok(HooksLocation {
        dir,
        setting: Some(setting),
    })
}

/// Makes sure the hooks directory is one: created when it does not exist,
/// refused with the way out when it can not hold a hook git runs (a file,
/// `/dev/null` as `core.hooksPath` has it to turn hooks off, a link to
/// nowhere).
fn prepare_dir(location: &HooksLocation) -> Result<(), HookError> {
    let dir = &location.dir;
    if fs::metadata(dir).is_ok_and(|meta| meta.is_dir()) {
        return Ok(());
    }
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return fs::create_dir_all(dir).map_err(write_io("create", dir));
    };
    if meta.file_type().is_symlink() {
        return Err(HookError::DanglingLink {
            dir: dir.clone(),
            target: fs::read_link(dir).unwrap_or_default(),
        });
    }
    let help = match &location.setting {
        Some(setting) => format!(
            "`core.hooksPath` names it (`{}`), so git runs no hook in this repository: to gate commits, run `{}` (or point it at a directory)",
            setting.value.display(),
            setting.unset()
        ),
        None => "git runs no hook in this repository: move it aside".to_string(),
    };
    Err(HookError::NotADirectory {
        dir: dir.clone(),
        help,
    })
}

/// The configuration `core.hooksPath` comes from when it is not this
/// repository's own (`"global"`, `"system"`): hooks installed there run in
/// every repository that shares that configuration.
pub fn shared_hooks_scope(repo_dir: &Path) -> Option<&'static str> {
    let repo = super::locate(repo_dir).ok()??;
    let config = repo.config().ok()?;
    let entry = config.get_entry("core.hooksPath").ok()?;
    match entry.level() {
        git2::ConfigLevel::Global | git2::ConfigLevel::XDG => Some("global"),
        git2::ConfigLevel::System | git2::ConfigLevel::ProgramData => Some("system"),
        _ => None,
    }
}

/// How husky (9 and later) takes a hook of phasegate's away, and the
/// project's own hook that survives it.
#[derive(Debug)]
pub enum HuskyRewrite {
    /// `core.hooksPath` is husky's `.husky/_`, whose stubs husky writes
    /// again at every `npm install` (its `prepare` script): phasegate's hook
    /// there is replaced by husky's.
    Stubs { project_hook: PathBuf },
    /// `package.json` runs husky at `npm install`, which then points
    /// `core.hooksPath` at `.husky/_`: git no longer runs the hooks
    /// directory phasegate's hook is in.
    HooksPath { project_hook: PathBuf },
}

/// Whether husky takes phasegate's hook `kind` away at the next
/// `npm install`. husky 9 points `core.hooksPath` at `.husky/_`, writes a
/// stub for each hook there (reading `h` beside it, which runs the
/// project's `.husky/<hook>`) and ignores the directory: the project's
/// hook is the one place a gate survives.
pub fn husky_rewrite(repo_dir: &Path, kind: HookKind) -> Option<HuskyRewrite> {
    let rewrite = husky_rewrite_of(repo_dir, kind)?;
    let (HuskyRewrite::Stubs { project_hook } | HuskyRewrite::HooksPath { project_hook }) =
        &rewrite;
    // The project's hook runs phasegate already: husky keeps the gate.
    let gated = fs::read_to_string(project_hook).is_ok_and(|text| calls_phasegate(&text));
    (!gated).then_some(rewrite)
}

/// Whether the shell script `text` runs phasegate's gate: a command line
/// (not a comment) with `phasegate hook ...` or `phasegate run ...`,
/// phasegate named by a path or through `npx`/`exec` as well.
fn calls_phasegate(text: &str) -> bool {
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .any(|line| {
            let words: Vec<&str> = line
                .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
                .map(|word| word.trim_matches(|c| c == '"' || c == '\''))
                .filter(|word| !word.is_empty())
                .collect();
            words.windows(2).any(|pair| {
                pair[0].rsplit('/').next() == Some("phasegate") && matches!(pair[1], "hook" | "run")
            })
        })
}

/// The file that runs phasegate's gate already when git runs the hook at
/// `path`, if any: the hook there (or the one phasegate's hook keeps and
/// runs first), or, in husky 9's `.husky/_`, the project's hook that
/// husky's stub there runs. phasegate's own hook beside it would run the
/// gate a second time on every commit.
fn gate_caller(path: &Path) -> Option<PathBuf> {
    let other = if is_ours(path) {
        chained_path(path)
    } else {
        path.to_path_buf()
    };
    // Git (and phasegate's hook) runs only an executable hook, and the hook
    // script skips a phasegate hook kept as someone's own.
    if !can_run(&other) || is_ours(&other) {
        return None;
    }
    if fs::read_to_string(&other).is_ok_and(|text| calls_phasegate(&text)) {
        return Some(other);
    }
    let dir = path.parent()?;
    let husky = dir.file_name().is_some_and(|name| name == "_") && dir.join("h").is_file();
    let project = dir.parent()?.join(path.file_name()?);
    (husky && fs::read_to_string(&project).is_ok_and(|text| calls_phasegate(&text)))
        .then_some(project)
}

fn husky_rewrite_of(repo_dir: &Path, kind: HookKind) -> Option<HuskyRewrite> {
    let location = hooks_location(repo_dir).ok()?;
    if location.dir.file_name().is_some_and(|name| name == "_") && location.dir.join("h").is_file()
    {
        // husky writes a stub for each hook its version knows (9.1.5 added
        // `pre-merge-commit`): a stub of its own for this hook, there or
        // kept by phasegate's install, says that this version writes it.
        let hook = location.dir.join(kind.name());
        let stub = fs::symlink_metadata(chained_path(&hook)).is_ok()
            || (fs::symlink_metadata(&hook).is_ok() && !is_ours(&hook));
        if !stub {
            return None;
        }
        let project_hook = location.dir.parent()?.join(kind.name());
        return Some(HuskyRewrite::Stubs { project_hook });
    }
    if location.setting.is_some() {
        return None;
    }
    let repo = super::locate(repo_dir).ok()??;
    let workdir = repo.workdir()?;
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(workdir.join("package.json")).ok()?).ok()?;
    let prepare = manifest.get("scripts")?.get("prepare")?.as_str()?;
    // `"prepare": "husky"`, or husky among other commands.
    prepare
        .split(|c: char| c.is_whitespace() || matches!(c, '&' | ';' | '|'))
        .any(|word| word == "husky")
        .then(|| HuskyRewrite::HooksPath {
            project_hook: workdir.join(".husky").join(kind.name()),
        })
}

/// Where the work trees of a repository run their hooks, when they do not
/// all share them: a relative `core.hooksPath` (husky's `.husky/_`) is
/// taken from each work tree's own root, and with
/// `extensions.worktreeConfig` a work tree can have a `core.hooksPath` of
/// its own (`git config --worktree`).
#[derive(Debug, Default)]
pub struct UngatedWorktrees {
    /// The `core.hooksPath` of the work tree install ran in: relative, or
    /// absolute and set for that work tree alone.
    pub value: PathBuf,
    /// Whether it is set for that work tree alone (`git config --worktree`).
    pub own: bool,
    /// The other work trees whose hooks lack phasegate's, sorted by root.
    pub worktrees: Vec<UngatedWorktree>,
}

/// A work tree whose hooks do not run phasegate's gate.
#[derive(Debug)]
pub struct UngatedWorktree {
    /// Its root.
    pub root: PathBuf,
    /// The directory git runs its hooks from.
    pub hooks: PathBuf,
    /// Why git runs the hooks there.
    pub source: WorktreeHooks,
}

/// Why a work tree runs the hooks it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorktreeHooks {
    /// A relative `core.hooksPath`, taken from its own root.
    OwnRoot,
    /// No `core.hooksPath` reaches it: the hooks of the common git
    /// directory, which the work trees without one share.
    Shared,
    /// An absolute `core.hooksPath` of its own.
    Elsewhere,
}

/// With a relative `core.hooksPath`, each work tree runs the hooks under
/// its own root, or those its own `core.hooksPath` names, or, when the
/// setting is this work tree's alone, the shared ones; so do the others
/// when this work tree's own setting is an absolute path: the work trees
/// of the repository (the main one and the linked ones) whose hooks lack
/// phasegate's hook `kind`, and where those are. Nothing when the hooks
/// are shared (the default, or an absolute path every work tree has).
pub fn ungated_worktrees(repo_dir: &Path, kind: HookKind) -> UngatedWorktrees {
    let Ok(Some(repo)) = super::locate(repo_dir) else {
        return UngatedWorktrees::default();
    };
    let Some(setting) = location_of(&repo).ok().and_then(|here| here.setting) else {
        return UngatedWorktrees::default();
    };
    // An absolute path is the same for every work tree it reaches: the
    // others differ only when it is this work tree's alone.
    if setting.value.is_absolute() && !setting.worktree_only() {
        return UngatedWorktrees::default();
    }
    let here = repo.workdir().and_then(|w| fs::canonicalize(w).ok());
    // The main work tree, seen from a linked one too, and the linked ones.
    let main = git2::Repository::open(repo.commondir())
        .ok()
        .and_then(|main| main.workdir().map(Path::to_path_buf));
    let linked = repo.worktrees().ok().map_or_else(Vec::new, |names| {
        (0..names.len())
            .filter_map(|i| names.get(i).ok().flatten())
            .filter_map(|name| repo.find_worktree(name).ok())
            .map(|worktree| worktree.path().to_path_buf())
            .collect()
    });
    let mut roots: Vec<PathBuf> = main
        .into_iter()
        .chain(linked)
        .filter_map(|root| fs::canonicalize(root).ok())
        .filter(|root| Some(root) != here.as_ref())
        .collect();
    roots.sort();
    roots.dedup();
    let worktrees = roots
        .into_iter()
        .filter_map(|root| {
            // Each work tree's own hooks: with `extensions.worktreeConfig`,
            // `core.hooksPath` can be set for one work tree only, and the
            // others run the shared hooks.
            let location = git2::Repository::open(&root)
                .ok()
                .filter(|repo| super::config_env::apply(repo).is_ok())
                .and_then(|repo| location_of(&repo).ok());
            let (hooks, source) = match location {
                Some(HooksLocation { dir, setting: None }) => (dir, WorktreeHooks::Shared),
                Some(HooksLocation {
                    dir,
                    setting: Some(theirs),
                }) if theirs.value.is_absolute() => (dir, WorktreeHooks::Elsewhere),
                Some(HooksLocation { dir, .. }) => (dir, WorktreeHooks::OwnRoot),
                None if setting.value.is_absolute() => {
                    (setting.value.clone(), WorktreeHooks::Elsewhere)
                }
                None => (root.join(&setting.value), WorktreeHooks::OwnRoot),
            };
            let hook = hooks.join(kind.name());
            (!is_ours(&hook) && gate_caller(&hook).is_none()).then_some(UngatedWorktree {
                root,
                hooks,
                source,
            })
        })
        .collect();
    UngatedWorktrees {
        own: setting.worktree_only(),
        value: setting.value,
        worktrees,
    }
}

/// Whether the hook at `path` is phasegate's: its marker is on one of the
/// first lines, where it stays when someone adds a line of their own at the
/// top (a `set -x`). Taking such a hook for another's would chain it to
/// itself, and a commit would never end.
fn is_ours(path: &Path) -> bool {
    ours(path).is_some()
}

/// The text of the hook at `path`, when it is phasegate's (`is_ours`).
fn ours(path: &Path) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .filter(|text| text.lines().take(10).any(|l| l.starts_with(MARKER)))
}

/// The first of `name`, `name.1`, `name.2`... beside `path` that does not
/// exist. The search has no bound: a name that exists is someone's kept
/// hook, and a rename onto it would replace it.
fn free_name(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    let mut free = path.with_file_name(&name);
    let mut n = 0_u64;
    while fs::symlink_metadata(&free).is_ok() {
        n += 1;
        let mut numbered = name.clone();
        numbered.push(format!(".{n}"));
        free = path.with_file_name(numbered);
    }
    free
}

/// Whether `path` is a symbolic link (whatever it names, if anything).
fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_symlink())
}

/// The other hook a phasegate script (`text`) that a link of one's own
/// leads to was written for, when it is not `kind` (its `hook=` line names
/// another one): someone's own hook (`pre-push -> pre-commit`, to run the
/// commit's checks at a push too).
fn linked_hook(text: &str, kind: HookKind) -> Option<String> {
    text.lines()
        .take(10)
        .find_map(|line| line.strip_prefix("hook="))
        .filter(|name| *name != kind.name())
        .map(str::to_string)
}

/// The text of phasegate's hook at `path`, when it is a file phasegate
/// wrote there. phasegate writes no symbolic link: one to phasegate's hook
/// (of another name beside it, `pre-push -> pre-commit`; of another
/// repository; tracked in this one) is someone's own, and uninstalling
/// must not take it for phasegate's hook and remove it.
fn ours_here(path: &Path) -> Option<String> {
    if is_link(path) {
        return None;
    }
    ours(path)
}

/// What a symbolic link at `path` names, when it leads to phasegate's hook:
/// a link of someone's own, which runs phasegate's gate.
fn link_to_ours(path: &Path) -> Option<PathBuf> {
    is_link(path)
        .then(|| ours(path))
        .flatten()
        .and_then(|_| fs::read_link(path).ok())
}

/// Moves phasegate's hook at `path` aside when it is not a script phasegate
/// writes (someone changed it, or a newer version of phasegate wrote it):
/// rewriting or removing it must not lose those changes. `text` is what
/// it holds. Where it went.
fn keep_if_edited(path: &Path, text: &str, kind: HookKind) -> Result<Option<PathBuf>, HookError> {
    if kind.written_unchanged(text) {
        return Ok(None);
    }
    let kept = free_name(path, ".phasegate-edited");
    fs::rename(path, &kept).map_err(write_io("keep", path))?;
    Ok(Some(kept))
}

fn chained_path(hook: &Path) -> PathBuf {
    let mut name = hook.file_name().unwrap_or_default().to_os_string();
    name.push(".phasegate-chained");
    hook.with_file_name(name)
}

/// Whether the hooks at `a` and `b` are the same hook: two links to the
/// same place, or two files of the same bytes and mode.
fn same_hook(a: &Path, b: &Path) -> bool {
    let (Ok(meta_a), Ok(meta_b)) = (fs::symlink_metadata(a), fs::symlink_metadata(b)) else {
        return false;
    };
    if meta_a.file_type().is_symlink() || meta_b.file_type().is_symlink() {
        return matches!((fs::read_link(a), fs::read_link(b)), (Ok(x), Ok(y)) if x == y);
    }
    meta_a.is_file()
        && meta_b.is_file()
        && meta_a.permissions().mode() == meta_b.permissions().mode()
        && matches!((fs::read(a), fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

/// Holds the hooks directory `dir` (flock(2) on the directory itself, so
/// that no lock file shows in a directory the repository tracks) while an
/// install or uninstall looks at its hooks and moves them: two at once
/// would each see the hook of one's own still there, and the second would
/// keep phasegate's hook over the kept one, which would be lost. The
/// kernel lets go of it when the process ends, however it ends. A file
/// system without flock(2) locks cannot keep two apart: the command stops
/// before it changes anything, and says so. An install takes a moment:
/// a lock held for `LOCK_WAIT` is one that a stuck or stopped install
/// holds (suspended with Ctrl-Z, say), and waiting on would never end.
fn lock_dir(dir: &Path) -> Result<fs::File, HookError> {
    use crate::state::{flock, Lock};
    use rustix::fs::FlockOperation;
    let unlockable = |why| HookError::Unlockable {
        dir: dir.to_path_buf(),
        why,
    };
    let handle = fs::File::open(dir).map_err(io("open", dir))?;
    if flock(
        &handle,
        Lock::Hooks,
        FlockOperation::NonBlockingLockExclusive,
    )
    .map_err(unlockable)?
    {
        return Ok(handle);
    }
    // flock(2) waits without a bound: it waits on a thread of its own,
    // left waiting when the time is up (the command ends soon after, and
    // the kernel lets go of the lock with it). The lock is the open
    // file's, whichever handle of it took it.
    let waiter = handle.try_clone().map_err(io("open", dir))?;
    let (done, taken) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(flock(&waiter, Lock::Hooks, FlockOperation::LockExclusive));
    });
    match taken.recv_timeout(LOCK_WAIT) {
        Ok(Ok(_)) => Ok(handle),
        Ok(Err(why)) => Err(unlockable(why)),
        Err(_) => Err(HookError::Locked {
            dir: dir.to_path_buf(),
        }),
    }
}

/// How long an install or uninstall waits for another one's lock on the
/// hooks directory.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A hook script written beside its place, flushed and executable, not
/// yet in it: it goes in last, once the hook it replaces was moved aside,
/// so that an install that stops on the way (a full disk, a file system
/// git can not run it from) leaves the hooks as they were. Dropped before
/// that, it is removed.
struct Staged {
    temp: PathBuf,
    path: PathBuf,
}

impl Staged {
    fn write(path: &Path, text: &str) -> Result<Staged, HookError> {
        let temp = path.with_extension("phasegate-tmp");
        let mut file = fs::File::create(&temp).map_err(write_io("create", &temp))?;
        let staged = Staged {
            temp,
            path: path.to_path_buf(),
        };
        file.write_all(text.as_bytes())
            .map_err(io("write", &staged.temp))?;
        file.set_permissions(fs::Permissions::from_mode(0o755))
            .map_err(io("make executable", &staged.temp))?;
        file.sync_all().map_err(io("flush", &staged.temp))?;
        // git skips a hook it can not execute, with only a hint, and lets
        // the commit through: a hook there would gate nothing.
        if !can_run(&staged.temp) {
            return Err(not_executable(path));
        }
        Ok(staged)
    }

    fn put(self) -> Result<(), HookError> {
        fs::rename(&self.temp, &self.path).map_err(write_io("install", &self.path))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Gone already once it was put in place.
        let _ = fs::remove_file(&self.temp);
    }
}

/// Whether git can run the file at `path` as a hook: it asks `access(2)`,
/// which also says no on a file system mounted `noexec`, whatever the
/// file's mode.
fn can_run(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
}

/// Why git could not run the hook at `path`, and what to do.
fn not_executable(path: &Path) -> HookError {
    let dir = path.parent().unwrap_or(path).to_path_buf();
    let noexec = rustix::fs::statvfs(&dir)
        .is_ok_and(|fs| fs.f_flag.contains(rustix::fs::StatVfsMountFlags::NOEXEC));
    let (why, remedy) = if noexec {
        (
            "its file system is mounted `noexec`",
            "mount that file system without `noexec`, or point `core.hooksPath` at a directory on another one (`git config core.hooksPath DIR`)",
        )
    } else {
        (
            "a file written there can not be executed (its file system keeps no permission bits, or forbids running programs)",
            "point `core.hooksPath` at a directory on another file system (`git config core.hooksPath DIR`)",
        )
    };
    HookError::NotExecutable { dir, why, remedy }
}

/// The link at `path`, when it is the `pre-merge-commit` hook (`kind`) and a
/// symbolic link to the pre-commit hook beside it (relative or absolute):
/// what it names, as it names it.
fn merge_link_to_pre_commit(path: &Path, kind: HookKind) -> Option<PathBuf> {
    if kind != HookKind::PreMergeCommit {
        return None;
    }
    let target = fs::read_link(path).ok()?;
    let pre_commit = path.with_file_name(HookKind::PreCommit.name());
    let named = resolved(&path.parent()?.join(&target))?;
    (named == resolved(&pre_commit)?).then_some(target)
}

/// What an install says of a `pre-merge-commit -> pre-commit` link at
/// `path`, left as it is: git runs the pre-commit hook at a merge commit,
/// and phasegate's pre-commit hook there runs the user's hook it keeps,
/// then the gate, once, as phasegate's pre-merge-commit hook would.
fn merge_link_outcome(path: &Path, target: PathBuf) -> InstallOutcome {
    let pre_commit = path.with_file_name(HookKind::PreCommit.name());
    let ours_there = is_ours(&pre_commit) && can_run(&pre_commit);
    let kept = chained_path(&pre_commit);
    InstallOutcome::LinksToPreCommit {
        path: path.to_path_buf(),
        target,
        gated: ours_there || gate_caller(&pre_commit).is_some(),
        keeps: (ours_there && can_run(&kept) && !is_ours(&kept)).then_some(kept),
    }
}

/// Why a `--fail-closed` install of the `pre-merge-commit` hook must not
/// leave the link of one's own at `path` (to the pre-commit hook beside
/// it, as it names it: `target`) in its place: merge commits run what the
/// pre-commit hook runs, and that would let them through when phasegate is
/// missing. A pre-commit hook of one's own that calls phasegate is taken
/// at its word: what it does without phasegate is its own.
fn merge_link_open(path: &Path, target: &Path, options: &InstallOptions) -> Option<HookError> {
    if !options.fail_closed {
        return None;
    }
    let pre_commit = path.with_file_name(HookKind::PreCommit.name());
    let why = match ours(&pre_commit).filter(|_| can_run(&pre_commit)) {
        Some(text) if text.lines().any(|line| line == "fail_closed=1") => return None,
        Some(_) => "which is phasegate's hook installed without `--fail-closed`",
        None if gate_caller(&pre_commit).is_some() => return None,
        None => "which does not run phasegate's gate",
    };
    Some(HookError::MergeLinkOpen {
        hook: path.to_path_buf(),
        target: target.to_path_buf(),
        why,
    })
}

/// The `pre-merge-commit` link to the pre-commit hook at `path` (the
/// pre-commit hook), if there is one.
fn merge_link_to(path: &Path) -> Option<PathBuf> {
    let link = path.with_file_name(HookKind::PreMergeCommit.name());
    merge_link_to_pre_commit(&link, HookKind::PreMergeCommit).map(|_| link)
}

/// Where the hook at `path`, a symbolic link, leads when that is
/// phasegate's hook outside this repository: not in its hooks directory,
/// its git directories or its work tree.
fn linked_elsewhere(repo_dir: &Path, path: &Path) -> Option<LinkedElsewhere> {
    if !is_link(path) || !is_ours(path) {
        return None;
    }
    let target = fs::canonicalize(path).ok()?;
    let repo = super::locate(repo_dir).ok()??;
    let own = [
        path.parent(),
        Some(repo.path()),
        Some(repo.commondir()),
        repo.workdir(),
    ];
    if own
        .into_iter()
        .flatten()
        .filter_map(|dir| fs::canonicalize(dir).ok())
        .any(|dir| target.starts_with(dir))
    {
        return None;
    }
    let repository = target
        .parent()
        .and_then(|dir| other_repository(&repo, dir))
        .map(|other| root_of(&other));
    Some(LinkedElsewhere { target, repository })
}

/// The repository that holds the directory `dir` (in its work tree or its
/// git directory), when it is not `repo`.
fn other_repository(repo: &git2::Repository, dir: &Path) -> Option<git2::Repository> {
    let other = git2::Repository::discover(dir).ok()?;
    let same =
        fs::canonicalize(other.commondir()).ok()? == fs::canonicalize(repo.commondir()).ok()?;
    (!same).then_some(other)
}

/// Where a person finds the repository `repo`: its work tree's root, or
/// its git directory when it has none.
fn root_of(repo: &git2::Repository) -> PathBuf {
    // libgit2 ends both with a `/`: the path as people write it.
    repo.workdir()
        .unwrap_or_else(|| repo.path())
        .components()
        .collect()
}

/// Whether git runs the hooks of the repository at `repo_dir` from the
/// hooks directory of another repository, which runs its own from there
/// too. Only the hooks directory is looked at, and only at install:
/// `phasegate uninstall` in that repository would take this one's gate.
/// A `core.hooksPath` of the global or system configuration is shared on
/// purpose, and said so elsewhere.
pub fn hooks_of_another(repo_dir: &Path) -> Option<HooksOfAnother> {
    let repo = super::locate(repo_dir).ok()??;
    let location = location_of(&repo).ok()?;
    if location
        .setting
        .as_ref()
        .is_some_and(|setting| matches!(setting.scope, "--global " | "--system "))
    {
        return None;
    }
    let dir = fs::canonicalize(&location.dir).ok()?;
    let other = other_repository(&repo, &dir)?;
    super::config_env::apply(&other).ok()?;
    let theirs = fs::canonicalize(location_of(&other).ok()?.dir).ok()?;
    (theirs == dir).then(|| HooksOfAnother {
        repository: root_of(&other),
        unset: location.setting.as_ref().map(HooksPathSetting::unset),
        dir,
    })
}

/// What an install of `kind` at `path` is to write, decided before it
/// writes anything; a refusal is the error.
struct Plan {
    is_tracked: bool,
    shared: bool,
    script: String,
    kept_link: Option<String>,
}

fn plan(
    repo_dir: &Path,
    path: &Path,
    kind: HookKind,
    options: &InstallOptions,
) -> Result<Plan, HookError> {
    let is_tracked = tracked(repo_dir, path);
    let a_link = is_link(path);
    // A link of one's own to phasegate's hook: its script, and the hook it
    // was written for when that is another (`pre-push -> pre-commit`).
    let link_text = a_link.then(|| ours(path)).flatten();
    let linked_other = link_text
        .as_deref()
        .and_then(|text| linked_hook(text, kind));
    // A hook the repository tracks, or can, is everyone's: the path of one
    // person's phasegate has no place in it. A link to someone's hook is
    // moved aside, and phasegate's hook takes the place of the link, not of
    // the file it names.
    let script_for = |replaces_link: bool| {
        let shared = shareable(repo_dir, path, !replaces_link);
        let installed = options.installed.as_deref().filter(|_| !shared);
        (shared, kind.script(options.fail_closed, installed))
    };
    let (mut shared, mut script) =
        script_for(a_link && link_text.is_none() || linked_other.is_some());
    // A link to phasegate's hook of this name, as this install writes it,
    // stays as it is. Any other link to a phasegate hook is someone's own:
    // the gate of another hook at this one, or a script elsewhere (another
    // repository's hook, one the repository tracks) that is never written
    // through. phasegate's hook would take its place and not run it, so it
    // stays unless `--force` says to keep it aside.
    // `--force` gives the repository a hook of its own in place of a link
    // to phasegate's hook elsewhere, which gates it only while that is
    // there.
    let forced_away = options.force
        && linked_other.is_none()
        && link_text.is_some()
        && linked_elsewhere(repo_dir, path).is_some();
    let kept_link = link_text.as_ref().and_then(|text| {
        (linked_other.is_some() || *text != script || !can_run(path) || forced_away).then(|| {
            linked_other
                .clone()
                .unwrap_or_else(|| kind.name().to_string())
        })
    });
    if let Some(other) = &kept_link {
        if !options.force {
            return Err(HookError::LinkedToOurs {
                target: fs::read_link(path).unwrap_or_default(),
                chained: chained_path(path),
                hook: path.to_path_buf(),
                other: other.clone(),
                kind: kind.name(),
            });
        }
        (shared, script) = script_for(true);
    }
    Ok(Plan {
        is_tracked,
        shared,
        script,
        kept_link,
    })
}

/// Whether the hook at `path`, to be kept aside, finds the name that keeps
/// it taken by another hook (`keep`), one an earlier install kept.
fn chain_occupied(path: &Path, keep: &Path) -> bool {
    fs::symlink_metadata(keep).is_ok() && !same_hook(path, keep)
}

/// Whether `install` of `kind` would be refused as the hooks are now
/// (a link of one's own to phasegate's hook, a name to keep a hook under
/// that is taken), found without writing anything: an install of several
/// hooks asks it of each before it writes the first, so that it never
/// stops half-way.
pub fn install_check(
    repo_dir: &Path,
    kind: HookKind,
    options: &InstallOptions,
) -> Result<(), HookError> {
    let location = hooks_location(repo_dir)?;
    // No hooks directory yet: nothing there to refuse; the install itself
    // says what is wrong with a place that can not be one, before it
    // writes any hook.
    if !fs::metadata(&location.dir).is_ok_and(|meta| meta.is_dir()) {
        return Ok(());
    }
    let path = location.dir.join(kind.name());
    if let Some(target) = merge_link_to_pre_commit(&path, kind) {
        // The pre-commit hook this install writes first is the one the
        // link runs: it is looked at once it is there.
        return match merge_link_open(&path, &target, options) {
            Some(refusal) if !options.pre_commit_too => Err(refusal),
            _ => Ok(()),
        };
    }
    if gate_caller(&path).is_some() {
        return Ok(());
    }
    let plan = plan(repo_dir, &path, kind, options)?;
    let replaced = plan.kept_link.is_some() || ours(&path).is_none();
    let keep = chained_path(&path);
    if replaced
        && !options.force
        && fs::symlink_metadata(&path).is_ok()
        && chain_occupied(&path, &keep)
    {
        return Err(HookError::ChainOccupied {
            hook: path,
            chained: keep,
        });
    }
    Ok(())
}

/// Installs the hook `kind` in the repository containing `repo_dir`.
///
/// `pause` is the test-only pause point: it is called at `install-keep`,
/// once the install has decided to keep the hook there, before it does.
pub fn install(
    repo_dir: &Path,
    kind: HookKind,
    options: &InstallOptions,
    pause: &dyn Fn(&str),
) -> Result<InstallOutcome, HookError> {
    let location = hooks_location(repo_dir)?;
    prepare_dir(&location)?;
    let _lock = lock_dir(&location.dir)?;
    let path = location.dir.join(kind.name());
    // `pre-merge-commit -> pre-commit` runs the pre-commit hook at a merge
    // commit: phasegate's, once that is installed, which runs the user's
    // hook it keeps and then the gate. phasegate's pre-merge-commit hook
    // in its place would keep the link aside and run the gate alone (it
    // runs no phasegate hook it keeps): the user's hook would no longer
    // run at merge commits.
    if let Some(target) = merge_link_to_pre_commit(&path, kind) {
        if let Some(refusal) = merge_link_open(&path, &target, options) {
            return Err(refusal);
        }
        return Ok(merge_link_outcome(&path, target));
    }
    if let Some(caller) = gate_caller(&path) {
        // One gate per commit: phasegate's hook there from an earlier
        // install runs it a second time, and goes. When another hook took
        // its place since (husky wrote its stub again over it), the hook
        // that install kept beside it is a stale copy: it goes too, as
        // `uninstall` takes it, and stays when it is not the hook there.
        let removed = if is_ours(&path) || fs::symlink_metadata(chained_path(&path)).is_ok() {
            Some(uninstall_at(&path, kind)?)
        } else {
            None
        };
        // The hook ours kept is back in its place.
        let caller = if caller == chained_path(&path) {
            path.clone()
        } else {
            caller
        };
        return Ok(InstallOutcome::GatedAlready {
            path,
            caller,
            removed,
        });
    }
    let Plan {
        is_tracked,
        shared,
        script,
        kept_link,
    } = plan(repo_dir, &path, kind, options)?;
    if let Some(before) = ours(&path).filter(|_| kept_link.is_none()) {
        if before == script && can_run(&path) {
            // Nothing to change: the file stays untouched, and so does a
            // link someone made to it (a hook the repository tracks).
            return Ok(InstallOutcome::AlreadyInstalled {
                path: path.clone(),
                changed: None,
                edited: None,
                line_ends: keep_line_ends(repo_dir, &path, kind, shared)?,
                elsewhere: linked_elsewhere(repo_dir, &path),
                merge_link: None,
            });
        }
        let was_closed = before.lines().any(|l| l == "fail_closed=1");
        let staged = Staged::write(&path, &script)?;
        let edited = keep_if_edited(&path, &before, kind)?;
        let gated = match kind {
            HookKind::PrePush => "pushes",
            HookKind::PreCommit | HookKind::PreMergeCommit => "commits",
        };
        let changed = match (was_closed, options.fail_closed) {
            _ if before == script => None,
            _ if before.replace("\r\n", "\n") == script => Some(
                "its lines ended in CRLF (a checkout with `core.autocrlf`), which keeps git from running it".to_string(),
            ),
            (true, false) => Some(format!("it was fail-closed and now lets {gated} through when phasegate is not installed (install --fail-closed to keep it closed)")),
            (false, true) => Some(format!("it is fail-closed now: {gated} stop when phasegate is not installed")),
            _ if edited.is_none() && without_installed(&before) == without_installed(&script) => Some(match options.installed.as_deref().filter(|_| !shared) {
                Some(installed) => format!("when no phasegate is on PATH, it runs `{}`", installed.display()),
                None => "it runs only a phasegate on PATH".to_string(),
            }),
            _ if edited.is_none() => Some("its script was updated to this version's".to_string()),
            _ => Some("its script was not the one phasegate writes".to_string()),
        };
        if let Err(e) = staged.put() {
            // The edited script goes back where it was: no hook is lost.
            if let Some(edited) = &edited {
                let _ = fs::rename(edited, &path);
            }
            return Err(e);
        }
        let opened = was_closed && !options.fail_closed && kind == HookKind::PreCommit;
        return Ok(InstallOutcome::AlreadyInstalled {
            line_ends: keep_line_ends(repo_dir, &path, kind, shared)?,
            merge_link: opened.then(|| merge_link_to(&path)).flatten(),
            path,
            changed,
            edited,
            elsewhere: None,
        });
    }
    let mut notes = InstallNotes {
        tracked: is_tracked.then(|| path.clone()),
        linked_hook: kept_link,
        ..InstallNotes::default()
    };
    let mut chained = None;
    let keep = chained_path(&path);
    let staged = Staged::write(&path, &script)?;
    // `symlink_metadata`: a hook that is a symbolic link is moved as a link
    // (rename(2) moves the link, never the file it names), beside where it
    // was, so that a relative target still names the same file.
    if let Ok(meta) = fs::symlink_metadata(&path) {
        pause("install-keep");
        // A kept hook the same as the one there now is a copy of it (husky
        // wrote its stub again over phasegate's hook): nothing is lost
        // when the one there takes its place.
        if chain_occupied(&path, &keep) {
            if !options.force {
                return Err(HookError::ChainOccupied {
                    hook: path,
                    chained: keep,
                });
            }
            // `keep` itself exists: the first free name is a numbered one.
            let backup = free_name(&keep, "");
            fs::rename(&keep, &backup).map_err(write_io("back up", &keep))?;
            notes.backed_up = Some(backup);
        }
        if meta.is_symlink() && fs::metadata(&path).is_err() {
            notes.dangling = Some(fs::read_link(&path).unwrap_or_default());
        }
        // Each step undone when a later one fails: never a kept hook
        // without phasegate's hook running it, nor an earlier kept hook
        // left under its backup name.
        let undo_backup = |notes: &InstallNotes| {
            if let Some(backup) = &notes.backed_up {
                let _ = fs::rename(backup, &keep);
            }
        };
        if let Err(e) = fs::rename(&path, &keep).map_err(write_io("keep", &path)) {
            undo_backup(&notes);
            return Err(e);
        }
        if let Err(e) = staged.put() {
            let _ = fs::rename(&keep, &path);
            undo_backup(&notes);
            return Err(e);
        }
        chained = Some(keep);
    } else {
        if fs::symlink_metadata(&keep).is_ok() {
            // Ours was deleted by hand and the hook it kept stayed: that
            // hook runs again from now on, which is said.
            notes.revived = Some(keep);
        }
        staged.put()?;
    }
    notes.line_ends = keep_line_ends(repo_dir, &path, kind, shared)?;
    Ok(InstallOutcome::Installed {
        path,
        chained,
        notes,
    })
}

/// The `.gitattributes` line that keeps the hook `kind` LF in every clone;
/// it sits in the hooks directory, so that it names nothing else.
fn line_ends_rule(kind: HookKind) -> String {
    format!("/{} text eol=lf", kind.name())
}

/// A hook in the work tree goes to every clone, and a checkout with
/// `core.autocrlf=true` (Git for Windows sets it) ends its lines in CRLF:
/// its `#!` line then names `/bin/sh\r`, which does not exist, and git can
/// make no commit there (`cannot exec`). Unless the repository's attributes
/// already keep the hook's line ends (`eol=lf`, `-text`), a rule in the
/// `.gitattributes` beside it does. `shared`: the hook is in the work tree
/// and not ignored. The file given the rule, if any.
fn keep_line_ends(
    repo_dir: &Path,
    path: &Path,
    kind: HookKind,
    shared: bool,
) -> Result<Option<PathBuf>, HookError> {
    let Some((repo, relative)) = in_work_tree(repo_dir, path).filter(|_| shared) else {
        return Ok(None);
    };
    let attr = |name: &str| {
        git2::AttrValue::from_string(
            repo.get_attr(&relative, name, git2::AttrCheckFlags::FILE_THEN_INDEX)
                .ok()
                .flatten(),
        )
    };
    if attr("eol") == git2::AttrValue::String("lf") || attr("text") == git2::AttrValue::False {
        return Ok(None);
    }
    let Some(dir) = repo.workdir().map(|workdir| workdir.join(&relative)) else {
        return Ok(None);
    };
    let file = dir.with_file_name(".gitattributes");
    let mut text = match fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(io("read", &file)(source)),
    };
    with_rule(&mut text, &line_ends_rule(kind));
    fs::write(&file, text).map_err(io("write", &file))?;
    Ok(Some(file))
}

/// Takes the rule `keep_line_ends` wrote for `kind` out of the
/// `.gitattributes` beside `path`, and the file with it when nothing else
/// is left in it.
fn drop_line_ends(path: &Path, kind: HookKind) -> Result<(), HookError> {
    let file = path.with_file_name(".gitattributes");
    let Ok(text) = fs::read_to_string(&file) else {
        return Ok(());
    };
    let Some(kept) = without_rule(&text, &line_ends_rule(kind)) else {
        return Ok(());
    };
    if kept.is_empty() {
        fs::remove_file(&file).map_err(io("remove", &file))
    } else {
        fs::write(&file, kept).map_err(io("write", &file))
    }
}

/// Adds the line `rule` to the attributes `text`, in the file's own line
/// ends; after a last line without one, the rule is the line left without,
/// so that taking it out (`without_rule`) gives the file back byte for
/// byte.
fn with_rule(text: &mut String, rule: &str) {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    if text.is_empty() || text.ends_with('\n') {
        text.push_str(rule);
        text.push_str(eol);
    } else {
        text.push_str(eol);
        text.push_str(rule);
    }
}

/// `text` without its line `rule`, every other byte as it was (CRLF line
/// ends, a byte order mark, a last line without a line end); `None` when
/// no line is `rule`. A rule on a last line without a line end takes the
/// line end before it along: `keep_line_ends` put it there.
fn without_rule(text: &str, rule: &str) -> Option<String> {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(body) => ("\u{feff}", body),
        None => ("", text),
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut found = false;
    for line in body.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        if found || bare.strip_suffix('\r').unwrap_or(bare) != rule {
            kept.push(line);
            continue;
        }
        found = true;
        if !line.ends_with('\n') {
            if let Some(last) = kept.pop() {
                let ended = last.strip_suffix('\n').unwrap_or(last);
                kept.push(ended.strip_suffix('\r').unwrap_or(ended));
            }
        }
    }
    found.then(|| format!("{bom}{}", kept.concat()))
}

/// Whether `path` is a file the repository at `repo_dir` tracks.
fn tracked(repo_dir: &Path, path: &Path) -> bool {
    in_work_tree(repo_dir, path).is_some_and(|(repo, relative)| {
        repo.index()
            .is_ok_and(|index| index.get_path(&relative, 0).is_some())
    })
}

/// Whether `path`, or the file it links to (`follow`), is a file of the
/// work tree that the repository tracks, or could (`git add` takes it: it
/// is not ignored), so that it is shared with everyone who clones it.
fn shareable(repo_dir: &Path, path: &Path, follow: bool) -> bool {
    let path = if follow {
        fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    tracked(repo_dir, &path)
        || in_work_tree(repo_dir, &path)
            .is_some_and(|(repo, relative)| !repo.is_path_ignored(&relative).unwrap_or(false))
}

/// The repository at `repo_dir`, and `path` relative to its work tree, when
/// `path` is in it.
fn in_work_tree(repo_dir: &Path, path: &Path) -> Option<(git2::Repository, PathBuf)> {
    let repo = super::locate(repo_dir).ok()??;
    let workdir = repo.workdir()?;
    let workdir = fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    let full = path
        .parent()
        .and_then(|dir| fs::canonicalize(dir).ok())
        .zip(path.file_name())
        .map_or_else(|| path.to_path_buf(), |(dir, name)| dir.join(name));
    // The git directory can sit inside the work tree (`.git`), and holds
    // no file of it.
    let git_dirs = [repo.path(), repo.commondir()];
    if git_dirs
        .iter()
        .filter_map(|dir| fs::canonicalize(dir).ok())
        .any(|dir| full.starts_with(dir))
    {
        return None;
    }
    let relative = full.strip_prefix(&workdir).ok()?.to_path_buf();
    Some((repo, relative))
}

/// `path`, whose last part may not exist, with the directory above it
/// resolved: two spellings of one place compare equal.
fn resolved(path: &Path) -> Option<PathBuf> {
    path.parent()
        .and_then(|dir| fs::canonicalize(dir).ok())
        .zip(path.file_name())
        .map(|(dir, name)| dir.join(name))
}

/// A symbolic link in a hooks directory to a hook `uninstall` removed,
/// which names nothing now.
#[derive(Debug)]
pub struct LeftLink {
    /// The link.
    pub link: PathBuf,
    /// What it names, as it names it.
    pub target: PathBuf,
    /// The removed hook it named.
    pub hook: PathBuf,
}

/// The symbolic links beside the hooks `removed` (in their directories)
/// that named one of them and now name nothing (`pre-push -> pre-commit`,
/// made to run the commit's checks at a push too). git skips such a hook
/// without a word: each is someone's own, and stays, but runs nothing.
pub fn links_left_dangling(removed: &[PathBuf]) -> Vec<LeftLink> {
    let mut dirs: Vec<&Path> = removed.iter().filter_map(|path| path.parent()).collect();
    dirs.sort();
    dirs.dedup();
    let mut left = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for link in entries.filter_map(Result::ok).map(|entry| entry.path()) {
            let dangling = is_link(&link) && fs::metadata(&link).is_err();
            let Some(target) = dangling.then(|| fs::read_link(&link).ok()).flatten() else {
                continue;
            };
            let named = resolved(&dir.join(&target));
            let Some(hook) = removed
                .iter()
                .find(|hook| named.is_some() && resolved(hook) == named)
            else {
                continue;
            };
            left.push(LeftLink {
                hook: hook.clone(),
                link,
                target,
            });
        }
    }
    left.sort_by(|a, b| a.link.cmp(&b.link));
    left
}

/// Removes phasegate's hook `kind` and puts back the hook it replaced.
pub fn uninstall(repo_dir: &Path, kind: HookKind) -> Result<UninstallOutcome, HookError> {
    let dir = hooks_dir(repo_dir)?;
    // No hooks directory: nothing was installed, and nothing to lock.
    let _lock = if dir.is_dir() {
        Some(lock_dir(&dir)?)
    } else {
        None
    };
    uninstall_at(&dir.join(kind.name()), kind)
}

/// `uninstall` of the hook at `path`, with the hooks directory locked.
fn uninstall_at(path: &Path, kind: HookKind) -> Result<UninstallOutcome, HookError> {
    let path = path.to_path_buf();
    let keep = chained_path(&path);
    let kept = fs::symlink_metadata(&keep).is_ok();
    // A link to phasegate's hook of another name (`pre-push -> pre-commit`,
    // to run the commit's checks at a push as well) is someone's own hook:
    // taking it for phasegate's would move it where git does not run it.
    let Some(text) = ours_here(&path) else {
        let absent = fs::symlink_metadata(&path).is_err();
        if absent && kept {
            // Ours was deleted by hand; the hook it replaced still waits
            // under the name that keeps it from running.
            fs::rename(&keep, &path).map_err(write_io("restore", &keep))?;
            return Ok(UninstallOutcome::RestoredOnly { path });
        }
        if kept && same_hook(&path, &keep) {
            // The hook there now is the one that was kept (husky wrote its
            // stub again over phasegate's hook): the kept copy is no one's
            // only copy.
            fs::remove_file(&keep).map_err(write_io("remove", &keep))?;
            return Ok(UninstallOutcome::NotInstalled {
                links_to: link_to_ours(&path),
                path,
                theirs: true,
                left: None,
                dropped: Some(keep),
            });
        }
        return Ok(UninstallOutcome::NotInstalled {
            links_to: link_to_ours(&path),
            left: (kept && !absent).then_some(keep),
            dropped: None,
            path,
            theirs: !absent,
        });
    };
    let edited = keep_if_edited(&path, &text, kind)?;
    // The kept hook takes the place of ours in one rename(2) (a link stays
    // the link it was): no moment without either, and a failure leaves
    // both where they were.
    let restored = if kept {
        if let Err(e) = fs::rename(&keep, &path).map_err(write_io("restore", &keep)) {
            if let Some(edited) = &edited {
                let _ = fs::rename(edited, &path);
            }
            return Err(e);
        }
        Some(path.clone())
    } else {
        if edited.is_none() {
            fs::remove_file(&path).map_err(write_io("remove", &path))?;
        }
        None
    };
    drop_line_ends(&path, kind)?;
    Ok(UninstallOutcome::Removed {
        path,
        restored,
        edited,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When this fails, a script in `hooks/` changed: add the id of the
    /// template it replaces (the one written here) to `EARLIER_PRE_COMMIT`
    /// or `EARLIER_PRE_PUSH`, so that hooks written before are still known
    /// as phasegate's, then write the new id here.
    #[test]
    fn every_earlier_script_is_known_as_phasegates() {
        let id = |text: &str| {
            git2::Oid::hash_object(git2::ObjectType::Blob, text.as_bytes())
                .unwrap()
                .to_string()
        };
        assert_eq!(id(PRE_COMMIT), "32b0c9e7e575a50d6a3a7dbd30c3bb1536e4c5ec");
        assert_eq!(id(PRE_PUSH), "e77d52ac430f17ceafe7279f0c6ec09301f93632");
        for kind in [
            HookKind::PreCommit,
            HookKind::PreMergeCommit,
            HookKind::PrePush,
        ] {
            let earliest = match kind {
                HookKind::PrePush => include_str!("../../fixtures/hooks/pre-push.earliest"),
                _ => include_str!("../../fixtures/hooks/pre-commit.earliest"),
            };
            let earliest = earliest.replace("hook=pre-commit", &format!("hook={}", kind.name()));
            for value in ["0", "1"] {
                let written = earliest.replace("@FAIL_CLOSED@", value);
                assert!(kind.written_unchanged(&written), "{}", kind.name());
                assert!(!kind.written_unchanged(&written.replace("exit 0", "exit 1")));
            }
        }
    }

    #[test]
    fn taking_the_line_ends_rule_out_gives_the_attributes_back_byte_for_byte() {
        let rule = line_ends_rule(HookKind::PreCommit);
        for before in [
            "*.sh text eol=lf\r\n*.bat text eol=crlf\r\n",
            "*.sh text eol=lf\r\n*.bat text eol=crlf",
            "*.sh text eol=lf\n*.bat -text",
            "\u{feff}*.sh text eol=lf\r\n",
            "\u{feff}",
            "",
        ] {
            let mut text = before.to_string();
            with_rule(&mut text, &rule);
            assert!(text.contains(&format!("\n{rule}")) || text.starts_with(&rule));
            // CRLF stays CRLF.
            assert_eq!(
                text.matches('\n').count(),
                text.matches("\r\n").count() * usize::from(before.contains('\r'))
                    + text.matches('\n').count() * usize::from(!before.contains('\r')),
                "{text:?}"
            );
            assert_eq!(
                without_rule(&text, &rule).as_deref(),
                Some(before),
                "{text:?}"
            );
        }
        // A rule on the first line, after a byte order mark.
        assert_eq!(
            without_rule(&format!("\u{feff}{rule}\r\n*.sh -text\r\n"), &rule).unwrap(),
            "\u{feff}*.sh -text\r\n"
        );
        assert_eq!(without_rule("*.sh -text\n", &rule), None);
    }

    #[test]
    fn a_script_is_phasegates_whichever_phasegate_it_falls_back_to() {
        let odd = Path::new("/opt/it's here/phasegate");
        for kind in [
            HookKind::PreCommit,
            HookKind::PreMergeCommit,
            HookKind::PrePush,
        ] {
            let script = kind.script(true, Some(odd));
            assert!(
                script.contains("\ninstalled='/opt/it'\\''s here/phasegate'\n"),
                "{script}"
            );
            assert!(kind.written_unchanged(&script));
            assert!(kind.written_unchanged(&kind.script(false, None)));
            assert!(kind.script(false, None).contains("\ninstalled=\n"));
            assert!(!kind.written_unchanged(&script.replace("exit 0", "exit 1")));
        }
        // A path that can not be one line of the script is left out.
        assert_eq!(shell_quoted(Some(Path::new("/a\nb"))), "");
    }

    #[test]
    fn a_script_calls_phasegate_when_a_command_line_runs_its_gate() {
        for text in [
            "phasegate hook pre-commit\n",
            "npx lint-staged && npx phasegate run --profile strict\n",
            "exec \"$HOME/.cargo/bin/phasegate\" hook pre-push \"$@\"\n",
            "if true; then phasegate run; fi\n",
        ] {
            assert!(calls_phasegate(text), "{text}");
        }
        for text in [
            "# phasegate hook pre-commit\n",
            "npx lint-staged\n",
            "echo phasegate: see phasegate-docs\n",
            "phasegate install\n",
        ] {
            assert!(!calls_phasegate(text), "{text}");
        }
    }

    /// A shell function's text in a script, from its first line to the
    /// `}` that ends it.
    fn function<'s>(script: &'s str, name: &str) -> &'s str {
        let start = script
            .find(&format!("\n{name}() {{\n"))
            .unwrap_or_else(|| panic!("no function {name}"));
        let end = start + script[start..].find("\n}\n").unwrap();
        &script[start..end]
    }

    #[test]
    fn both_hook_scripts_read_a_chained_hook_the_same_way() {
        // Each script stands alone (git runs it as it is), so the function
        // is written in both; it must not drift.
        assert_eq!(
            function(PRE_COMMIT, "chained_shell"),
            function(PRE_PUSH, "chained_shell")
        );
        let head = |script: &'static str| script.split_once("chained_shell() {").unwrap().0;
        assert_eq!(
            head(PRE_COMMIT).replace("hook=pre-commit", "hook=?"),
            head(PRE_PUSH).replace("hook=pre-push", "hook=?"),
        );
    }
}
