//! Which files a run looks at: staged (begun early, on its own thread),
//! a range, a commit's, every tracked file, or named files.

use std::path::{Path, PathBuf};

use crate::context::{CiSelection, Context};
use crate::gate::{SelectionSummary, VerdictError};

use super::{RunRequest, SelectionRequest};

/// The files a run selected and what it learnt on the way.
pub(super) struct Selected {
    /// Relative to the root.
    pub files: Vec<PathBuf>,
    /// How they were chosen.
    pub summary: SelectionSummary,
    pub notes: Vec<String>,
    /// Those of the notes a reader of the summary alone (a CI page) must
    /// see too: which commit is judged, when it is not the one the event
    /// is about.
    pub said: Vec<String>,
    pub found: Found,
}

/// What a staged selection found on the way, for the protection of
/// unstaged changes; nothing for the other selections.
#[derive(Default)]
pub(super) struct Found {
    /// The only tracked files that may have unstaged changes, found while
    /// the staged files were.
    pub unstaged: Option<crate::git::UnstagedHint>,
    /// What the selection read, for the comparison after the checks.
    pub held: Option<HeldLater>,
}

impl Selected {
    fn new(
        files: Vec<PathBuf>,
        summary: SelectionSummary,
        notes: Vec<String>,
        said: Vec<String>,
    ) -> Selected {
        Selected {
            files,
            summary,
            notes,
            said,
            found: Found::default(),
        }
    }
}

/// A staged selection begun on its own thread. Its answer arrives before
/// the thread lets go of the index and repository it read; it keeps them
/// for the comparison after the checks when nothing will be set aside.
pub(super) struct EarlySelection {
    answer: std::sync::mpsc::Receiver<Result<crate::git::StagedSelection, crate::git::GitError>>,
    thread: std::thread::JoinHandle<Option<crate::git::Held>>,
}

/// The index and repository the early selection read, once its thread is
/// joined.
pub(super) struct HeldLater(std::thread::JoinHandle<Option<crate::git::Held>>);

impl HeldLater {
    pub fn take(self) -> Option<crate::git::Held> {
        self.0.join().ok().flatten()
    }
}

impl EarlySelection {
    pub fn start(root: PathBuf, cpus: usize) -> EarlySelection {
        let (tx, answer) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::spawn(move || {
            let (selection, held) = crate::git::staged_selection_held(&root, cpus);
            let wanted = held.wanted_after(&selection);
            let _ = tx.send(selection);
            // Otherwise freed here, away from the critical path.
            wanted.then_some(held)
        });
        EarlySelection { answer, thread }
    }

    /// The answer, and what the thread keeps; a panic on the thread is
    /// resumed here.
    fn join(
        self,
    ) -> (
        Result<crate::git::StagedSelection, crate::git::GitError>,
        HeldLater,
    ) {
        match self.answer.recv() {
            Ok(answer) => (answer, HeldLater(self.thread)),
            Err(_) => match self.thread.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(_) => unreachable!("the selection thread sends its answer before it ends"),
            },
        }
    }
}

/// What a run says of a name that more than one ref answers to.
fn ambiguity_note(ambiguous: &crate::git::Ambiguity) -> String {
    let others = ambiguous
        .others
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    format!(
        "`{}` is ambiguous: it names `{}` (used, as git does) and {others}; give the full name to choose, e.g. `{}`",
        ambiguous.spec,
        ambiguous.used,
        ambiguous.others.first().unwrap_or(&ambiguous.used)
    )
}

/// How a `pull_request_target` job checks the pull request's head out
/// (the event's own checkout is the target branch).
const CHECKOUT_HEAD: &str =
    "`actions/checkout` with `ref: ${{ github.event.pull_request.head.sha }}`";

/// Why a `pull_request_target` run on the event's own checkout (the target
/// branch) checks nothing, and what to do instead.
fn pull_request_target_refusal(base: &str, head: Option<&str>) -> String {
    let to = head.unwrap_or("<the pull request's head commit>");
    format!(
        "on GitHub's pull_request_target event the checkout is the target branch, which holds nothing of the pull request, and phasegate does not check out the pull request's code where it would run with that event's secrets and write token: run the gate on the `pull_request` event, or, knowing the code runs with those secrets, check the pull request out yourself ({CHECKOUT_HEAD}, keeping `--config-from-ref {base}`), or run `phasegate run --from-ref {base} --to-ref {to}`"
    )
}

/// What a `pull_request_target` run says when the commit it judges, `at`
/// (HEAD), is not the pull request's head commit `head`: which commit is
/// judged, whether it holds the head (the pull request merged into the
/// target branch does), and how to judge the head itself.
fn not_the_head_note(at: &str, head: &str, holds_head: bool) -> String {
    let what = if holds_head {
        "which holds it with other commits (the pull request merged into its target branch, say): the checks judge the code as HEAD holds it"
    } else {
        "and HEAD does not hold it (an older commit of the pull request, or another branch): the checks judge HEAD's code, not the pull request's"
    };
    format!(
        "GitHub pull_request_target: the commit judged is HEAD, {at}, not the pull request's head commit {head} (`pull_request.head.sha`), {what}; to judge the pull request's head, check it out ({CHECKOUT_HEAD})"
    )
}

/// What a run says of a merge queue's range: the queue's own commits.
fn merge_queue_note(ci: &crate::context::CiRange) -> Option<String> {
    (ci.source == "GitHub merge_group").then(|| {
        format!(
            "GitHub merge_group: the merge queue's changes are checked, from `merge_group.base_sha` {} (the target branch the queue built on) to `merge_group.head_sha` {}",
            ci.from, ci.to
        )
    })
}

/// The selected files, relative to `root`, how they were chosen, and notes.
/// A staged selection takes `early`'s result when there is one.
pub(super) fn select_files(
    ctx: &Context,
    args: &RunRequest,
    root: &Path,
    in_repo: bool,
    early: Option<EarlySelection>,
) -> Result<Selected, VerdictError> {
    let selector = Selector {
        ctx,
        args,
        root,
        in_repo,
    };
    let mut notes = Vec::new();
    let mut said = Vec::new();
    let (files, summary) = match &args.selection {
        SelectionRequest::Files(given) => {
            let files = selector.named_files(given, &mut notes)?;
            let s = selector.summary("files", &files, None);
            (files, s)
        }
        SelectionRequest::Range { from, to } => {
            let (files, s) = selector.range(from, to, None, &mut notes)?;
            // Named by hand (not a pushed ref's), a range that adds no
            // commit checks nothing it changed: most often its ends were
            // swapped, and a pass on it would say nothing.
            if args.pushed_ref.is_none() && s.to_commit == s.merge_base {
                notes.push(empty_range_note(from, to, s.from_commit == s.to_commit));
            }
            (files, s)
        }
        SelectionRequest::Pushed { to, published } => {
            let (files, to_commit) =
                crate::git::pushed_files(root, to, published).map_err(git_error)?;
            let s = SelectionSummary {
                // The first is where the pushed ref's own line of commits
                // starts (the remote's commit, for an update): a reader
                // (or an earlier version resuming the run) that knows only
                // ranges sees the branch's, never less than was checked.
                from_commit: published.first().cloned(),
                to_commit: Some(to_commit),
                published: published.clone(),
                ..selector.summary(
                    "range",
                    &files,
                    Some((published.first().map_or("", String::as_str), to)),
                )
            };
            (files, s)
        }
        SelectionRequest::AllOf(commit) => {
            let files = crate::git::commit_files(root, commit).map_err(git_error)?;
            let s = SelectionSummary {
                to: Some(commit.clone()),
                to_commit: crate::git::commit_id(root, commit).ok(),
                ..selector.summary("all", &files, None)
            };
            (files, s)
        }
        SelectionRequest::All => {
            let files = if in_repo {
                selector.tracked_in_work_tree(&mut notes)?
            } else {
                Vec::new()
            };
            let s = selector.summary("all", &files, None);
            (files, s)
        }
        SelectionRequest::Default if !in_repo => (Vec::new(), selector.summary("all", &[], None)),
        SelectionRequest::Default if ctx.ci => selector.in_ci(&mut notes, &mut said)?,
        SelectionRequest::Staged if !in_repo => {
            return Err(crate::commands::usage_error(
                "staged files need a git repository".to_string(),
            ))
        }
        SelectionRequest::Default | SelectionRequest::Staged => {
            let (staged, held) = match early {
                Some(early) => {
                    let (staged, held) = early.join();
                    (staged, Some(held))
                }
                None => (crate::git::staged_selection(root, ctx.cpus), None),
            };
            let staged = staged.map_err(git_error)?;
            // git commits nothing while a path is unmerged, and what a
            // check would read there (conflict markers, or one side) is
            // no version a commit could hold: passing would say a commit
            // is fine that git refuses.
            if !staged.unmerged.is_empty() {
                return Err(crate::commands::usage_error(unmerged_message(
                    &staged.unmerged,
                )));
            }
            let s = selector.summary("staged", &staged.files, None);
            return Ok(Selected {
                files: staged.files,
                summary: s,
                notes,
                said,
                found: Found {
                    unstaged: staged.unstaged,
                    held,
                },
            });
        }
    };
    Ok(Selected::new(files, summary, notes, said))
}

/// What a run says of a ref option (`--config-from-ref`, `--from-ref`,
/// `--to-ref`) that names no branch: empty, or a remote's name with
/// nothing after it (`origin/`), as a CI job writes it from a variable
/// its event does not set. git would only say it names nothing, and a
/// fetch of `origin/` brings nothing either.
pub(super) fn unnamed_ref(option: &str, spec: &str) -> Option<String> {
    let given = if spec.is_empty() {
        format!("`{option}` is empty")
    } else if spec.ends_with('/') {
        format!("`{option} {spec}` names no branch after `{spec}`")
    } else {
        return None;
    };
    Some(format!(
        "{given}, as when the variable it was built from is not set where it runs (`GITHUB_BASE_REF` is set on GitHub's pull_request and pull_request_target events only, `CI_MERGE_REQUEST_TARGET_BRANCH_NAME` in GitLab's merge request pipelines only): name the branch, e.g. `{option} origin/main`, or run the job on those events only"
    ))
}

/// The work tree of the git repository `dir` is in, for a run that is in
/// none; each directory is looked up once.
fn repository_of(dir: &Path, known: &mut Vec<(PathBuf, Option<PathBuf>)>) -> Option<PathBuf> {
    if let Some((_, root)) = known.iter().find(|(seen, _)| seen == dir) {
        return root.clone();
    }
    let root = crate::git::discover(dir)
        .ok()
        .flatten()
        .map(|repo| repo.root);
    known.push((dir.to_path_buf(), root.clone()));
    root
}

/// What a run outside any repository says of `file`, which is in the
/// repository at `repo`: where to run it instead.
fn in_other_repository(file: &Path, repo: &Path, cwd: &Path) -> String {
    format!(
        "`{}` is in the git repository at `{}`, but phasegate runs on the repository of the current directory, and `{}` is in none: run it there, e.g. `cd {} && phasegate run --files ...`, so that repository's gate checks it",
        file.display(),
        repo.display(),
        cwd.display(),
        repo.display()
    )
}

/// What a run says of a range `from`..`to` whose end is its merge base:
/// `to` is `from`'s commit (`same`) or an ancestor of it.
fn empty_range_note(from: &str, to: &str, same: bool) -> String {
    let said = "no file changed on it, so only the checks without `files` ran";
    if same {
        format!("the range holds no commit: `{from}` and `{to}` are the same commit; {said}")
    } else {
        format!(
            "the range holds no commit of its own: `{to}` is an ancestor of `{from}`; {said}. Were its ends swapped? `--from-ref {to} --to-ref {from}` checks what `{from}` added"
        )
    }
}

/// Why a run in CI whose range holds no commit checks every tracked file.
fn empty_ci_range_note(ci: &crate::context::CiRange) -> String {
    format!(
        "{}: the range holds no commit of its own: `{}` is already in `{}` (a pull request closed or merged since, or a push that only moved the branch back), so it changes nothing: every tracked file is selected",
        ci.source, ci.to, ci.from
    )
}

/// What a staged run says of an index with unmerged paths: which, and
/// how to get on.
fn unmerged_message(unmerged: &[PathBuf]) -> String {
    // The first few are enough to find the rest with `git status`.
    const SHOWN: usize = 5;
    let mut named = unmerged
        .iter()
        .take(SHOWN)
        .map(|path| format!("`{}`", path.display()))
        .collect::<Vec<_>>()
        .join(", ");
    if unmerged.len() > SHOWN {
        named.push_str(&format!(" and {} more", unmerged.len() - SHOWN));
    }
    let (what, it) = match unmerged.len() {
        1 => (format!("{named} is unmerged"), "it"),
        n => (format!("{n} paths are unmerged ({named})"), "them"),
    };
    format!(
        "the staged files cannot be checked: {what}: a merge, rebase or cherry-pick stopped on a conflict, and git commits nothing until it is resolved; resolve {it}, `git add` {it} (or `git rm` {it}), then run again (`git status` lists what is unmerged, and how to go on or abort)"
    )
}

/// The setting that gives a CI job the whole history, for the CI whose
/// event `source` names (`GitHub pull_request`): a shallow clone is the
/// default of both (actions/checkout fetches one commit, GitLab
/// `GIT_DEPTH` commits), and a fetch in the job is only the second-best
/// fix, made again on every run.
pub(super) fn full_history_setting(source: &str) -> &'static str {
    if source.starts_with("GitHub") {
        "give `actions/checkout` `fetch-depth: 0` (under its `with:`), which fetches every branch with all its history, or run `git fetch --unshallow origin` before phasegate"
    } else if source.starts_with("GitLab") {
        "set `GIT_DEPTH: 0` in the job's `variables:` in `.gitlab-ci.yml`, which clones all the history, or run `git fetch --unshallow` before phasegate"
    } else {
        "clone with all the history, or run `git fetch --unshallow` before phasegate"
    }
}

/// What a run in CI says when the range CI named cannot be resolved in a
/// shallow clone: that the clone is shallow, what it lacks, and the CI
/// setting that brings it. A merge base beyond the clone's depth is not
/// "no common ancestor": the ends share history this clone cut off.
fn shallow_ci_error(ci: &crate::context::CiRange, e: crate::git::GitError) -> VerdictError {
    let setting = full_history_setting(ci.source);
    let message = match e {
        crate::git::GitError::MergeBase { from, to, .. } => format!(
            "{}: the merge base of `{from}` and `{to}` is not in this clone: it is a shallow clone (`.git/shallow`), and the commit they share is in the history it cut off, so what the range changed cannot be told from what its target changed; {setting}",
            ci.source
        ),
        e @ crate::git::GitError::Revision { .. } => format!(
            "{}: {e}; for every run of the job to have it, {setting}",
            ci.source
        ),
        e => return git_error(e),
    };
    crate::commands::usage_error(message)
}

/// What a run in CI says when a ref of the range CI named is not in a
/// clone that is not shallow (a fork's pull request checked out on its own
/// branch alone, without the target branch): which CI range it is, the
/// ref and fetch git's error names, and the CI setting that fetches every
/// branch on every run.
fn missing_ci_ref_error(ci: &crate::context::CiRange, e: crate::git::GitError) -> VerdictError {
    let setting = if ci.source.starts_with("GitHub") {
        "give `actions/checkout` `fetch-depth: 0` (under its `with:`), which fetches every branch"
    } else if ci.source.starts_with("GitLab") {
        "run that fetch in the job's `script:` before phasegate"
    } else {
        "fetch it before phasegate"
    };
    match e {
        e @ crate::git::GitError::Revision { .. } => crate::commands::usage_error(format!(
            "{}: {e}; for every run of the job to have it, {setting}",
            ci.source
        )),
        e => git_error(e),
    }
}

/// A revision that names nothing, or a range without a merge base, is the
/// caller's to fix; anything else is phasegate's failure.
fn git_error(e: crate::git::GitError) -> VerdictError {
    match e {
        e @ (crate::git::GitError::Revision { .. } | crate::git::GitError::MergeBase { .. }) => {
            crate::commands::usage_error(e.to_string())
        }
        e => crate::commands::internal_error(&e),
    }
}

/// What a selection is made from.
struct Selector<'a> {
    ctx: &'a Context,
    args: &'a RunRequest,
    root: &'a Path,
    in_repo: bool,
}

impl Selector<'_> {
    fn summary(
        &self,
        mode: &'static str,
        files: &[PathBuf],
        range: Option<(&str, &str)>,
    ) -> SelectionSummary {
        SelectionSummary {
            mode,
            files: files.len(),
            from: range.map(|r| r.0.to_string()),
            to: range.map(|r| r.1.to_string()),
            pushed_ref: self.args.pushed_ref.clone(),
            ..SelectionSummary::default()
        }
    }

    /// The files changed on `to` since its merge base with `from`; `ci`
    /// when CI named the range, whose errors then say what to set in it.
    fn range(
        &self,
        from: &str,
        to: &str,
        ci: Option<&crate::context::CiRange>,
        notes: &mut Vec<String>,
    ) -> Result<(Vec<PathBuf>, SelectionSummary), VerdictError> {
        if !self.in_repo {
            return Err(crate::commands::usage_error(
                "--from-ref and --to-ref need a git repository".to_string(),
            ));
        }
        for (option, spec) in [("--from-ref", from), ("--to-ref", to)] {
            if let Some(message) = unnamed_ref(option, spec) {
                return Err(crate::commands::usage_error(message));
            }
        }
        let resolved = crate::git::range_files(self.root, from, to).map_err(|e| match ci {
            Some(ci) if crate::git::is_shallow(self.root) => shallow_ci_error(ci, e),
            Some(ci) => missing_ci_ref_error(ci, e),
            None => git_error(e),
        })?;
        for ambiguous in &resolved.ambiguous {
            notes.push(ambiguity_note(ambiguous));
        }
        let s = SelectionSummary {
            from_commit: Some(resolved.from),
            to_commit: Some(resolved.to),
            merge_base: Some(resolved.merge_base),
            ..self.summary("range", &resolved.files, Some((from, to)))
        };
        Ok((resolved.files, s))
    }

    /// `--files`: each file named, relative to the current directory, and
    /// for a directory the tracked files beneath it. What is not a file,
    /// or is inside git's own directory, is left out (noted); what is
    /// outside the repository is an error.
    fn named_files(
        &self,
        given: &[PathBuf],
        notes: &mut Vec<String>,
    ) -> Result<Vec<PathBuf>, VerdictError> {
        let mut files = Vec::new();
        let mut tracked: Option<Vec<PathBuf>> = None;
        let mut repositories = Vec::new();
        for file in given {
            let absolute: PathBuf = if file.is_absolute() {
                file.clone()
            } else {
                self.ctx.cwd.join(file)
            };
            let meta = match absolute.symlink_metadata() {
                Ok(meta) => meta,
                Err(e) => {
                    // A tracked file deleted in the work tree has nothing to
                    // check (a list of changed files names it); a path nobody
                    // has is a mistake, and passing it over would pass a run
                    // that checked nothing. So is one that can not be looked
                    // at (`file.rs/`, a file named as a directory).
                    if e.kind() != std::io::ErrorKind::NotFound {
                        return Err(crate::commands::usage_error(format!(
                            "`{}` cannot be looked at ({e}): check the path",
                            file.display()
                        )));
                    }
                    if self.is_tracked(&absolute, &mut tracked)? {
                        notes.push(format!(
                            "`{}` is deleted in the work tree; it was left out",
                            file.display()
                        ));
                        continue;
                    }
                    return Err(crate::commands::usage_error(format!(
                        "`{}` does not exist: check the path",
                        file.display()
                    )));
                }
            };
            // Outside a repository the run checks the current directory
            // under its own configuration (or none): a file or directory
            // of a git repository named from there would be checked by
            // neither that repository's gate nor its checks, and pass.
            if !self.in_repo {
                let dir = if meta.is_dir() {
                    Some(absolute.as_path())
                } else {
                    absolute.parent()
                };
                if let Some(repo) = dir.and_then(|dir| repository_of(dir, &mut repositories)) {
                    return Err(crate::commands::usage_error(in_other_repository(
                        file, &repo, self.root,
                    )));
                }
            }
            // A directory stands for the tracked files beneath it, as
            // `git ls-files DIR` lists them. A symbolic link is a file to
            // git, whatever it points at (a directory, a place outside the
            // repository, nothing), and is selected as itself, as a staged
            // run selects it; named with a trailing `/`, it is the
            // directory it leads to, as the system resolves that name.
            let directory = self.in_repo && meta.is_dir();
            let link = meta.is_symlink() && (self.in_repo || absolute.is_file());
            if !directory && !link && !meta.is_file() {
                notes.push(format!(
                    "`{}` is not a file; it was left out",
                    file.display()
                ));
                continue;
            }
            // A directory is resolved whole; for a file, the directories
            // on the way (the repository may be reached through a link),
            // not the file itself: a link the repository tracks is
            // selected as that link, not as the file it points at,
            // wherever that is.
            let resolved = if directory {
                std::fs::canonicalize(&absolute).unwrap_or(absolute)
            } else {
                match (absolute.parent(), absolute.file_name()) {
                    (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                        .map_or_else(|_| absolute.clone(), |dir| dir.join(name)),
                    _ => std::fs::canonicalize(&absolute).unwrap_or(absolute),
                }
            };
            let Ok(relative) = resolved.strip_prefix(self.root) else {
                let place = if self.in_repo {
                    format!("the repository at `{}`", self.root.display())
                } else {
                    format!(
                        "`{}`, the current directory, which the run checks as a project in no git repository",
                        self.root.display()
                    )
                };
                return Err(crate::commands::usage_error(format!(
                    "`{}` is outside {place}: name files inside it, or run phasegate where they are",
                    file.display(),
                )));
            };
            if relative.starts_with(".git") {
                notes.push(format!(
                    "`{}` is inside git's own directory; it was left out",
                    file.display()
                ));
                continue;
            }
            if !directory {
                files.push(relative.to_path_buf());
                continue;
            }
            let beneath: Vec<PathBuf> = self
                .tracked(&mut tracked)?
                .iter()
                .filter(|f| f.starts_with(relative))
                // Deleted in the work tree: nothing to check.
                .filter(|f| self.root.join(f).symlink_metadata().is_ok())
                .cloned()
                .collect();
            if beneath.is_empty() {
                notes.push(format!(
                    "`{}` holds no tracked file; nothing was selected from it",
                    file.display()
                ));
            }
            files.extend(beneath);
        }
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// The tracked files, listed once per selection.
    fn tracked<'t>(
        &self,
        tracked: &'t mut Option<Vec<PathBuf>>,
    ) -> Result<&'t [PathBuf], VerdictError> {
        if tracked.is_none() {
            *tracked = Some(crate::git::tracked_files(self.root).map_err(git_error)?);
        }
        Ok(tracked.as_deref().unwrap_or_default())
    }

    /// Whether `absolute`, which is not in the work tree, is a tracked file.
    fn is_tracked(
        &self,
        absolute: &Path,
        tracked: &mut Option<Vec<PathBuf>>,
    ) -> Result<bool, VerdictError> {
        if !self.in_repo {
            return Ok(false);
        }
        // Its directory may be gone too: the nearest one that is there is
        // resolved (the repository may be reached through a link).
        let mut existing = absolute;
        let mut rest = Vec::new();
        while let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) {
            rest.push(name);
            existing = parent;
            if existing.symlink_metadata().is_ok() {
                break;
            }
        }
        let Ok(mut resolved) = std::fs::canonicalize(existing) else {
            return Ok(false);
        };
        resolved.extend(rest.iter().rev());
        let Ok(relative) = resolved.strip_prefix(self.root) else {
            return Ok(false);
        };
        Ok(self.tracked(tracked)?.iter().any(|f| f == relative))
    }

    /// The default selection in CI: the pull or merge request's range when
    /// one is detected, else every tracked file (noted).
    fn in_ci(
        &self,
        notes: &mut Vec<String>,
        said: &mut Vec<String>,
    ) -> Result<(Vec<PathBuf>, SelectionSummary), VerdictError> {
        // The CI event that chose every file, when one was recognised.
        let mut source = None;
        let why = match &self.ctx.ci_selection {
            Some(CiSelection::Range(ci)) => {
                // pull_request_target's own checkout is the target
                // branch, which holds nothing of the pull request: the
                // range would be empty, and checking the pull request
                // out here would run its code with the event's secrets
                // and write token.
                // Checked out otherwise, the commit judged may still not
                // be the pull request's head (its merge into the target
                // branch, an older commit of it): a reader is told which
                // it is, in the summary too.
                if let Some((checked_out, head)) = &self.ctx.ci_target_checkout {
                    let at = crate::git::commit_id(self.root, &ci.to).ok();
                    if at.as_ref() == Some(checked_out) {
                        return Err(crate::commands::usage_error(pull_request_target_refusal(
                            &ci.from,
                            head.as_deref(),
                        )));
                    }
                    if let (Some(at), Some(head)) = (at, head) {
                        if !at.eq_ignore_ascii_case(head) {
                            let holds_head = crate::git::merge_base(self.root, &at, head)
                                .is_some_and(|base| base.eq_ignore_ascii_case(head));
                            let note = not_the_head_note(&at, head, holds_head);
                            said.push(note.clone());
                            notes.push(note);
                        }
                    }
                }
                // A push's previous commit may be missing here (a
                // shallow clone, a force push): checking every file
                // checks more, never less. A pull request's base that
                // is missing is an error that says what to fetch.
                // So is one that shares no history with the push here
                // (a force push of a new history, a shallow clone that
                // cut what they share). The note says which of these can
                // be true of this clone.
                let missing =
                    ci.push && matches!(crate::git::object_kind(self.root, &ci.from), Ok(None));
                let unrelated =
                    ci.push && !missing && !crate::git::share_history(self.root, &ci.from, &ci.to);
                let shallow = (missing || unrelated) && crate::git::is_shallow(self.root);
                source = Some(ci.source);
                if missing && shallow {
                    format!(
                        "{}: the commit before the push, {}, is not in this clone, a shallow clone (`.git/shallow`): every tracked file is selected; to check only the push's changes, {}",
                        ci.source,
                        ci.from,
                        full_history_setting(ci.source)
                    )
                } else if missing {
                    // A clone with all its history has every commit its
                    // branches hold: one it lacks was left behind by a
                    // push that rewrote the branch, and no fetch brings it.
                    format!(
                        "{}: the commit before the push, {}, is not in this clone, which is not shallow and so holds all the history its branches have: the push rewrote the branch (a force push), and the commit it replaced is on no branch to fetch: every tracked file is selected",
                        ci.source, ci.from
                    )
                } else if unrelated && shallow {
                    format!(
                        "{}: the commit before the push, {}, shares no history with {} in this clone, a shallow clone (`.git/shallow`) that may have cut the commits they share (or the push started a new history): every tracked file is selected; to check only the push's changes, {}",
                        ci.source,
                        ci.from,
                        ci.to,
                        full_history_setting(ci.source)
                    )
                } else if unrelated {
                    format!(
                        "{}: the commit before the push, {}, shares no history with {} (a force push of a new history): every tracked file is selected",
                        ci.source, ci.from, ci.to
                    )
                } else {
                    let (files, mut s) = self.range(&ci.from, &ci.to, Some(ci), notes)?;
                    // A range whose end is its merge base holds no commit
                    // of its own: a pull request closed or merged since
                    // (its checkout is already in the target branch), a
                    // push that moved a branch back. Its changes are none,
                    // and a pass on them would say nothing.
                    if s.to_commit != s.merge_base {
                        s.ci = Some(ci.source.to_string());
                        notes.extend(merge_queue_note(ci));
                        return Ok((files, s));
                    }
                    empty_ci_range_note(ci)
                }
            }
            Some(CiSelection::Everything { source: event, why }) => {
                source = Some(event.as_str());
                why.clone()
            }
            None => "in CI with no pull or merge request range: every tracked file is selected"
                .to_string(),
        };
        notes.push(why);
        let files = self.tracked_in_work_tree(notes)?;
        let mut s = self.summary("all", &files, None);
        s.ci = source.map(str::to_string);
        Ok((files, s))
    }

    /// Every tracked file, checked where it is: those the work tree lacks
    /// (deleted there, or outside a sparse checkout) are left out, as a
    /// check given their names would only fail to open them (noted).
    fn tracked_in_work_tree(&self, notes: &mut Vec<String>) -> Result<Vec<PathBuf>, VerdictError> {
        let (files, absent) =
            crate::git::tracked_in_work_tree(self.root, self.ctx.cpus).map_err(git_error)?;
        if let Some(first) = absent.first() {
            notes.push(format!(
                "{} tracked file(s) are not in the work tree (deleted there, or outside the sparse checkout) and were left out, among them `{}`",
                absent.len(),
                first.display()
            ));
        }
        Ok(files)
    }
}
