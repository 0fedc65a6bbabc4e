//! Where the checks run and what they changed there: the work tree (with
//! unstaged changes set aside) or a temporary checkout.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::config::{self, Config};
use crate::context::Context;
use crate::diagnostics::OwnCode;
use crate::gate::{SelectionSummary, VerdictError};
use crate::git::CommitView;
use crate::report;
use crate::runner;
use crate::state::RunDir;

use super::select::{Found, HeldLater};

/// Where a run keeps things.
pub(super) struct Dirs<'a> {
    pub root: &'a Path,
    /// The state directory (shared by linked worktrees).
    pub state: &'a crate::state::StateDir,
    /// Where the repository's temporary checkouts go, in the user's cache.
    pub snapshots: Option<&'a Path>,
    /// Where this work tree's unstaged changes are set aside.
    pub work_tree_state: &'a crate::state::StateDir,
    pub run: &'a RunDir,
}

/// Where the checks run.
pub(super) struct Place {
    /// A temporary checkout, when not the work tree.
    snapshot: Option<Snapshot>,
    /// In the work tree, at what is staged or at the commit checked: its
    /// unstaged changes are set aside while the checks run.
    in_work_tree: bool,
    /// In the work tree as it is, nothing set aside: `--all-files`,
    /// `--files`, CI's every tracked file, a range in an index phasegate
    /// cannot compare.
    as_is: bool,
}

impl Place {
    /// Under `isolation = "snapshot"` a staged run's checks work in a
    /// temporary checkout of the index; the work tree is never touched. A
    /// range whose end, or a commit whose files, are not the checked-out
    /// commit (`git push` of another branch) is checked in a temporary
    /// checkout of that commit. The checked-out commit is checked in the
    /// work tree, with its unstaged changes set aside as for a staged run:
    /// nothing staged, so the files are at the commit's content.
    pub fn choose(
        dirs: &Dirs<'_>,
        in_repo: bool,
        mode: &SelectionSummary,
        config: &Config,
        notes: &mut Vec<String>,
    ) -> Result<Place, VerdictError> {
        let root = dirs.root;
        let staged = mode.mode == "staged";
        let mut protect_at_head = false;
        let target = match (mode.mode, &mode.to) {
            ("range" | "all", Some(to)) if in_repo => match crate::git::commit_view(root, to) {
                Ok(CommitView::WorkTree) => {
                    protect_at_head = true;
                    None
                }
                Ok(CommitView::Staged(commit)) => {
                    Some((commit, "the index holds staged changes it does not"))
                }
                Ok(CommitView::Elsewhere(commit)) => {
                    Some((commit, "the work tree holds another commit"))
                }
                // The range itself was read from commits; only the work
                // tree's state is unknown.
                Err(
                    e @ (crate::git::GitError::SparseIndex { .. }
                    | crate::git::GitError::SplitIndex { .. }),
                ) => {
                    notes.push(format!(
                        "{e}; the checks saw the work tree as it is, uncommitted changes included"
                    ));
                    None
                }
                Err(e @ crate::git::GitError::Revision { .. }) => {
                    return Err(crate::commands::usage_error(e.to_string()))
                }
                Err(e) => return Err(crate::commands::internal_error(&e)),
            },
            _ => None,
        };
        let checkout = if let Some((commit, why)) = target {
            let to = mode.to.as_deref().unwrap_or_default();
            let named = if commit.to_string().starts_with(to) {
                format!("{commit:.10}")
            } else {
                format!("{to} ({commit:.10})")
            };
            notes.push(format!("the checks ran in a checkout of {named}: {why}"));
            Some(Some(commit))
        } else if staged && config.gate.isolation == config::Isolation::Snapshot {
            Some(None)
        } else {
            None
        };
        let snapshot = match checkout {
            Some(commit) => {
                let dir = snapshot_dir(dirs, notes);
                let snapshot = Snapshot::create(root, &dir, &dirs.run.path, commit)?;
                snapshot.link(root, &config.gate.snapshot_links, notes);
                Some(snapshot)
            }
            None => None,
        };
        let in_work_tree = (staged || protect_at_head) && snapshot.is_none();
        Ok(Place {
            in_work_tree,
            as_is: in_repo && !in_work_tree && snapshot.is_none(),
            snapshot,
        })
    }

    /// Whether the checks run in the work tree, at what is staged or at
    /// the commit checked.
    pub fn in_work_tree(&self) -> bool {
        self.in_work_tree
    }

    /// The directory the checks run in: `root`, or the checkout.
    pub fn check_root<'a>(&'a self, root: &'a Path) -> &'a Path {
        self.snapshot.as_ref().map_or(root, |s| s.dir.as_path())
    }
}

/// What running the checks gave.
pub(super) struct Ran {
    /// One per plan, in their order.
    pub outcomes: Vec<runner::CheckOutcome>,
    /// phasegate's own findings that block: files the checks modified.
    pub blocking: Vec<crate::diagnostics::Diagnostic>,
    /// Whether a Ctrl-C (or SIGTERM, SIGHUP) cut the run short.
    pub interrupted: bool,
}

/// Runs `plans` in `place`, `jobs` at a time, drawing progress on
/// `progress` when a person watches. In the work tree, unstaged changes
/// (those `found` by the selection) are set aside first and come back
/// afterwards; whatever the place, what is checked must stay what was
/// selected: one comparison after the checks names the files they changed.
#[expect(
    clippy::too_many_arguments,
    reason = "the run's places, what its selection found and how to show progress are each needed here once"
)]
pub(super) fn run_checks(
    ctx: &Context,
    dirs: &Dirs<'_>,
    place: Place,
    found: Found,
    mut plans: Vec<runner::CheckPlan>,
    jobs: usize,
    progress: Option<&mut (dyn Write + '_)>,
    notes: &mut Vec<String>,
) -> Result<Ran, VerdictError> {
    let root = dirs.root;
    let pause = |step: &str| ctx.maybe_pause(step, dirs.state);
    let in_place = place.in_work_tree && !plans.is_empty();
    // From before the first file is set aside until the last comes back, a
    // Ctrl-C (or SIGTERM, SIGHUP) never kills phasegate: it stops the
    // checks, or keeps them from starting, and the work tree is given back
    // before the run ends as interrupted. A restore under way always
    // finishes.
    let interrupts = in_place.then(runner::InterruptGuard::install);
    // Interrupted while the changes were being saved: the work tree was
    // never touched, and nothing is there to compare after the checks.
    let (guard, cut_short) = if in_place {
        set_aside(ctx, dirs, &found, &pause)?
    } else {
        (None, false)
    };
    // In place with nothing set aside, the index as the checks find it, to
    // see afterwards whether they staged anything: the selection's own
    // read, or one now.
    let index_before = (in_place
        && guard.is_none()
        && !cut_short
        && !crate::git::Held::kept_by(found.unstaged.as_ref()))
    .then(|| crate::git::Held::now(root))
    .flatten();
    // If phasegate is killed while the changes are aside, the run that puts
    // them back stops these checks first.
    // So are those of a killed run's temporary checkout, before it goes.
    let groups = match (&guard, &place.snapshot) {
        (Some(guard), _) => Some(guard.groups_file()),
        (None, Some(snapshot)) => Some(snapshot.groups(dirs.state.sharing)?),
        (None, None) => None,
    };
    if let Some(groups) = groups {
        for plan in &mut plans {
            plan.groups = Some(groups.clone());
        }
    }
    // git's index lock and the stash as the checks find them: what they
    // leave there is said after them.
    let git_dir = dirs
        .work_tree_state
        .parent()
        .unwrap_or(dirs.work_tree_state);
    // In a temporary checkout too: its checks reach the same stash. In the
    // work tree as it is, a check that stashes takes the user's work itself.
    let look_after =
        !plans.is_empty() && (place.in_work_tree || place.as_is || place.snapshot.is_some());
    let traces = look_after.then(|| {
        let common_dir = dirs.state.parent().unwrap_or(dirs.state);
        crate::git::Traces::before(git_dir, common_dir)
    });
    // In the work tree as it is, the files as the checks find them: a
    // formatter's rewrite is a change to what was checked, as in a staged
    // run, and in CI nobody looks at the work tree afterwards.
    let as_found = (place.as_is && !plans.is_empty())
        .then(|| match crate::git::AsFound::take(root, ctx.cpus) {
            Ok(found) => Some(found),
            Err(e) => {
                notes.push(format!(
                    "files the checks modify could not be looked for: {e}; `git status` shows what they changed"
                ));
                None
            }
        })
        .flatten();
    let outcomes = execute(ctx, &plans, jobs, progress);
    let by: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
    let by = describe_checks(&by);

    let mut modified = Vec::new();
    // The index as it was, when the checks in the work tree changed what
    // it stages: given back with the undo should they have moved HEAD too.
    let mut staged_before = None;
    // In a temporary checkout, with what was written there.
    if let Some(snapshot) = &place.snapshot {
        let changed = crate::git::changed_in_checkout(root, &snapshot.dir, &snapshot.written)
            .map_err(|e| crate::commands::internal_error(&e))?;
        modified.extend(changed);
    }
    // A checkout has served its purpose: removed before the verdict.
    drop(place);
    // In place with nothing set aside, with the index. (inotify would name
    // the files touched, but tearing its watches down waits for an RCU
    // grace period, longer than the comparison.)
    if in_place && guard.is_none() && !cut_short {
        merge_split_index(root, git_dir, &by, notes)?;
        let before = found.held.and_then(HeldLater::take).or(index_before);
        let changed = crate::git::changed_in_work_tree(root, ctx.cpus, before)
            .map_err(|e| crate::commands::internal_error(&e))?;
        modified.extend(changed.files);
        staged_before = changed.index_before;
    }
    // In the work tree as it is, with the files as the checks found them.
    if let Some(as_found) = as_found {
        // A split index the user had is theirs to keep.
        if as_found.read_the_index() {
            merge_split_index(root, git_dir, &by, notes)?;
        }
        let changed = as_found
            .changed(root, ctx.cpus)
            .map_err(|e| crate::commands::internal_error(&e))?;
        modified.extend(changed.files);
        staged_before = changed.index_before;
    }
    // Whether unstaged changes were written back over what the checks
    // left: a stash they made is brought back differently then.
    let set_aside = guard.is_some();
    // In place with changes set aside, by the guard that puts them back.
    if let Some(guard) = guard {
        let (changed, index_before) = put_back(guard, dirs, &pause, &outcomes, &by, notes)?;
        modified.extend(changed);
        staged_before = index_before;
    }
    // The work tree is back: signals take their usual course again.
    drop(interrupts);
    let mut blocking = Vec::new();
    if let Some(traces) = traces {
        let left = traces.left(root, &by, set_aside);
        notes.extend(left.notes);
        // A check that stashed took files out of the work tree: the
        // finding says what and how to bring them back.
        for stashed in left.stashed {
            blocking.push(gate_finding(OwnCode::Stashed, stashed));
        }
        // What was checked was the commit `HEAD` was on: a check that
        // committed, reset or switched branch changed what is committed.
        // A check that staged what was not (`git commit -a`) and
        // committed: the undo gives the user's staging back too.
        let staging = staged_before.as_ref().map(|before| crate::git::Staging {
            before,
            keep_at: dirs.run.path.join(INDEX_BEFORE),
        });
        if let Some(moved) = traces.moved_head(root, &by, staging.as_ref()) {
            blocking.push(gate_finding(OwnCode::HeadMoved, moved));
        }
    }
    if !modified.is_empty() {
        blocking.push(gate_finding(
            OwnCode::FilesModified,
            format!("files were modified by {by}: {}", modified.join(", ")),
        ));
    }
    Ok(Ran {
        outcomes,
        blocking,
        interrupted: runner::interrupted(),
    })
}

/// The file in the run's directory that keeps the index as it was before
/// checks that staged and moved HEAD, for the undo to copy back.
const INDEX_BEFORE: &str = "index-before-checks";

/// Sets the unstaged changes aside (none may need it): the guard that
/// puts them back, and whether an interrupt cut the saving short (then
/// the work tree was never touched).
fn set_aside(
    ctx: &Context,
    dirs: &Dirs<'_>,
    found: &Found,
    pause: crate::git::Pause<'_>,
) -> Result<(Option<crate::git::UnstagedGuard>, bool), VerdictError> {
    match crate::git::protect(
        dirs.root,
        dirs.work_tree_state,
        &dirs.run.id,
        found.unstaged.as_ref(),
        ctx.cpus,
        pause,
    ) {
        Ok(guard) => Ok((guard, false)),
        Err(crate::git::ProtectError::Interrupted) => Ok((None, true)),
        Err(e) => Err(crate::commands::internal_error(&e)),
    }
}

/// Runs the checks, drawing their progress when a terminal is given.
fn execute(
    ctx: &Context,
    plans: &[runner::CheckPlan],
    jobs: usize,
    progress: Option<&mut (dyn Write + '_)>,
) -> Vec<runner::CheckOutcome> {
    match progress {
        Some(out) if !plans.is_empty() => {
            let mut progress =
                report::progress::Progress::new(out, plans.len()).with_width(ctx.stderr_columns);
            let outcomes = runner::run_checks(plans, jobs, &mut |event| progress.event(&event));
            progress.finish();
            outcomes
        }
        _ => runner::run_checks(plans, jobs, &mut |_| {}),
    }
}

/// Puts the unstaged changes back: the files the checks modified, and the
/// index as it was when they staged what stays staged. Where the checks
/// changed a file that had unstaged changes too, theirs are dropped (kept
/// aside) and a note says so. A failure says whether the changes are back
/// all the same, or saved, and how to get them back.
fn put_back(
    guard: crate::git::UnstagedGuard,
    dirs: &Dirs<'_>,
    pause: crate::git::Pause<'_>,
    outcomes: &[runner::CheckOutcome],
    by: &str,
    notes: &mut Vec<String>,
) -> Result<(Vec<String>, Option<crate::git::IndexBefore>), VerdictError> {
    match guard.finish(pause, &dirs.run.path.join("dropped")) {
        Ok(after) => {
            if after.unsplit {
                notes.push(unsplit_note(dirs.root, by));
            }
            if !after.conflicts.is_empty() {
                let kept = after.kept.map_or_else(String::new, |dir: PathBuf| {
                    format!(" (their versions are kept in {})", dir.display())
                });
                notes.push(format!(
                    "the checks changed files that also had unstaged changes; their changes were dropped and yours restored: {}{kept}",
                    after.conflicts.join(", ")
                ));
            }
            Ok((after.modified, after.index_before))
        }
        Err(e) => {
            let e = match e {
                e @ crate::git::ProtectError::SplitByChecks { .. } => e.left_by(by.to_string()),
                e => e.left_by(lock_suspects(outcomes)),
            };
            let mut error = crate::commands::internal_error(&e);
            // The guard, dropped, wrote the changes back if it could.
            if crate::git::holds_saved_changes(dirs.work_tree_state) {
                error.message.push_str(&format!(
                    "; the unstaged changes are kept under {}: run `phasegate restore`",
                    dirs.work_tree_state.join("protect").display()
                ));
            } else {
                error
                    .message
                    .push_str("; your unstaged changes are back in the work tree");
            }
            Err(error)
        }
    }
}

/// Merges back into one file an index the checks (`by`) left split,
/// which phasegate cannot read, and says so in `notes`. Only a git
/// directory with a shared index can hold a split one.
fn merge_split_index(
    root: &Path,
    git_dir: &Path,
    by: &str,
    notes: &mut Vec<String>,
) -> Result<(), VerdictError> {
    let unsplit = crate::git::may_be_split(git_dir)
        && crate::git::unsplit_index(root)
            .map_err(|e| crate::commands::internal_error(&e.left_by(by.to_string())))?;
    if unsplit {
        notes.push(unsplit_note(root, by));
    }
    Ok(())
}

/// What a person hears of a split index the checks (`by`) left, merged
/// back: and that git splits it again while `core.splitIndex` says so.
fn unsplit_note(root: &Path, by: &str) -> String {
    let mut note = format!(
        "{by} rewrote the index as a split index, which phasegate merged back into one file (`git update-index --no-split-index`)"
    );
    if crate::git::splits_index(root) {
        note.push_str(
            "; `core.splitIndex` is true in the repository's configuration, and git will split it again: turn it off with `git config core.splitIndex false`",
        );
    }
    note
}

/// The checks that most likely left git's index lock behind, for a
/// person: those stopped while they ran (a crash, a timeout, an interrupt:
/// git killed between taking its lock and letting go leaves it), else
/// every check that started.
fn lock_suspects(outcomes: &[runner::CheckOutcome]) -> String {
    use runner::Termination;
    let stopped: Vec<String> = outcomes
        .iter()
        .filter_map(|o| {
            let how = match &o.termination {
                Termination::Signaled(signal) => format!("killed by signal {signal}"),
                Termination::TimedOut(_) => "killed at its timeout".to_string(),
                Termination::Interrupted => "stopped by the interrupt".to_string(),
                _ => return None,
            };
            Some(format!("`{}` ({how})", o.name))
        })
        .collect();
    if !stopped.is_empty() {
        return format!("the check {}", stopped.join(" or "));
    }
    let started: Vec<&str> = outcomes
        .iter()
        .filter(|o| matches!(o.termination, Termination::Exited(_)))
        .map(|o| o.name.as_str())
        .collect();
    match started.as_slice() {
        [one] => format!("the check `{one}`"),
        many => format!(
            "one of the checks {}",
            many.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A temporary checkout of the index or of a commit, removed when dropped.
struct Snapshot {
    dir: PathBuf,
    /// What was written there, to tell what the checks changed.
    written: crate::git::Written,
}

impl Snapshot {
    /// A checkout in `dir` of `commit`, or of the index when `None`, for
    /// the run whose directory is `run`.
    fn create(
        root: &Path,
        dir: &Path,
        run: &Path,
        commit: Option<git2::Oid>,
    ) -> Result<Snapshot, VerdictError> {
        // Named first, so that whatever of it a killed run leaves is
        // removed once that run is over, wherever its directory is.
        let marker = crate::state::snapshot_run(dir);
        let made = marker
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&marker, run.as_os_str().as_bytes()));
        made.map_err(|e| {
            crate::commands::internal_message(format!(
                "failed to create the snapshot `{}`: {e}",
                dir.display()
            ))
        })?;
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let written = match commit {
            Some(commit) => crate::git::checkout_commit_to(root, commit, &dir),
            None => crate::git::checkout_index_to(root, &dir),
        };
        match written {
            Ok(written) => Ok(Snapshot { dir, written }),
            Err(e) => {
                // Half a checkout is only disk space, but it is not left.
                let _ = std::fs::remove_dir_all(&dir);
                Err(crate::commands::internal_error(&e))
            }
        }
    }
}

impl Snapshot {
    /// The file where its checks' process groups are recorded, made now
    /// for the owner alone (and the group of a shared repository, whose
    /// next run stops a killed run's checks), as the protection's is:
    /// made by the first record, it would follow the umask, and a line
    /// anyone could add names processes for that run to kill.
    fn groups(&self, sharing: crate::state::Sharing) -> Result<PathBuf, VerdictError> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = crate::state::snapshot_groups(&self.dir);
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .and_then(|file| sharing.share_file_within(&file, crate::state::GROUP_ONLY))
            .map_err(|e| {
                crate::commands::internal_message(format!(
                    "failed to create `{}`: {e}",
                    path.display()
                ))
            })?;
        Ok(path)
    }

    /// Links each of `links` (paths of the work tree the checkout does not
    /// have: `node_modules`, `.venv`) into the checkout, so its checks find
    /// what they were installed with. A path the checkout holds itself (a
    /// tracked one) is left as checked out, with a note; one the work tree
    /// does not have is passed over.
    fn link(&self, root: &Path, links: &[PathBuf], notes: &mut Vec<String>) {
        for link in links {
            let source = root.join(link);
            let target = self.dir.join(link);
            if std::fs::symlink_metadata(&source).is_err() {
                continue;
            }
            if std::fs::symlink_metadata(&target).is_ok() {
                notes.push(format!(
                    "`{}` of `snapshot_links` is in the checkout itself (it is tracked): the checks saw what is staged there, not a link to the work tree's",
                    link.display()
                ));
                continue;
            }
            let linked = target
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::os::unix::fs::symlink(&source, &target));
            if let Err(e) = linked {
                notes.push(format!(
                    "failed to link `{}` of `snapshot_links` into the checkout: {e}",
                    link.display()
                ));
            }
        }
    }
}

/// The directory for this run's temporary checkout: in the user's cache,
/// or, when that cannot be made, under the state directory, with a note
/// (tools that pass over paths inside `.git`, as jest does, find nothing
/// there).
fn snapshot_dir(dirs: &Dirs<'_>, notes: &mut Vec<String>) -> PathBuf {
    let fallback = dirs.state.join("snapshots");
    // Every member of a shared repository's group makes theirs there, and
    // prunes what a killed run of another left.
    let fallback_made = || {
        let _ = dirs.state.sharing.create_dirs(&fallback);
    };
    let Some(parent) = dirs.snapshots else {
        fallback_made();
        notes.push(format!(
            "the checkout is under `{}`: neither XDG_CACHE_HOME nor HOME names a cache directory; tools that pass over paths inside `.git` (jest) find no files there",
            fallback.display()
        ));
        return fallback.join(&dirs.run.id);
    };
    // Only the user may look inside: the checkout holds the staged files.
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent);
    match made {
        Ok(()) => parent.join(&dirs.run.id),
        Err(e) => {
            notes.push(format!(
                "the checkout is under `{}`: `{}` could not be made ({e}); tools that pass over paths inside `.git` (jest) find no files there",
                fallback.display(),
                parent.display()
            ));
            fallback_made();
            fallback.join(&dirs.run.id)
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // A snapshot left behind is only disk space; the next run's is new.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A finding of phasegate itself, outside any check, with its `code`.
fn gate_finding(code: OwnCode, message: String) -> crate::diagnostics::Diagnostic {
    crate::diagnostics::Diagnostic {
        check: String::new(),
        origin: crate::config::Origin::Runtime,
        tool: "phasegate".to_string(),
        severity: crate::diagnostics::Severity::Error,
        code: Some(code.to_string()),
        message,
        ..crate::diagnostics::Diagnostic::default()
    }
}

fn describe_checks(names: &[&str]) -> String {
    match names {
        [one] => format!("`{one}`"),
        many => format!(
            "the checks ({})",
            many.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
