//! `phasegate run`: select files, resolve the phase, run its checks, decide,
//! record and render. Glue only: every decision lives in `gate`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::cli::{ReportFormat, RunArgs};
use crate::config::{self, Config, Filter, Profile};
use crate::context::{CiSelection, Context};
use crate::exit::ExitCode;
use crate::gate::{self, CheckInput, CheckRun, GateInput, SelectionSummary, Verdict, VerdictError};
use crate::git::CommitView;
use crate::report;
use crate::runner;
use crate::state::{self, RunDir};

use super::Streams;

/// Which files a run looks at, as asked.
#[derive(Debug, Clone)]
pub enum SelectionRequest {
    /// Staged files (protecting unstaged changes); in CI the pull or merge
    /// request's range when detected, else every tracked file.
    Default,
    /// The staged files, protecting unstaged changes (what a pre-commit
    /// hook checks, in CI too).
    Staged,
    /// Every tracked file.
    All,
    /// These files, relative to the current directory.
    Files(Vec<PathBuf>),
    /// Changed on `to` since its merge base with `from`.
    Range { from: String, to: String },
    /// Every file of this commit (a new branch being pushed).
    AllOf(String),
}

/// A run as `phasegate run` or a git hook asks for it.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub phase: Option<String>,
    pub profile: Option<String>,
    pub workflow: Option<String>,
    pub checks: Vec<String>,
    pub selection: SelectionRequest,
    pub format: ReportFormat,
    /// `--output FILE`: the `format` report goes there, the human one to
    /// the terminal.
    pub output: Option<PathBuf>,
    /// `--report FORMAT=FILE`, as given.
    pub reports: Vec<String>,
    pub jobs: Option<u16>,
    pub config_from_ref: Option<String>,
    /// `phasegate resume`: the run whose passes are carried over.
    pub resume_of: Option<crate::state::RunRecord>,
    /// The ref a pre-push hook checks in this run (it runs once per pushed
    /// ref), for the report to say which.
    pub pushed_ref: Option<String>,
}

impl SelectionRequest {
    /// Whether this selects the staged files (the default does outside CI).
    fn is_staged(&self, ci: bool) -> bool {
        matches!(self, SelectionRequest::Staged)
            || (matches!(self, SelectionRequest::Default) && !ci)
    }
}

impl RunRequest {
    pub fn from_args(args: &RunArgs) -> RunRequest {
        let selection = if !args.files.is_empty() {
            SelectionRequest::Files(args.files.clone())
        } else if args.all_files {
            SelectionRequest::All
        } else if let (Some(from), Some(to)) = (&args.from_ref, &args.to_ref) {
            SelectionRequest::Range {
                from: from.clone(),
                to: to.clone(),
            }
        } else {
            SelectionRequest::Default
        };
        RunRequest {
            phase: args.phase.clone(),
            profile: args.profile.clone(),
            workflow: args.workflow.clone(),
            checks: args.checks.clone(),
            selection,
            format: args.format,
            output: args.output.clone(),
            reports: args.reports.clone(),
            jobs: args.jobs,
            config_from_ref: args.config_from_ref.clone(),
            resume_of: None,
            pushed_ref: None,
        }
    }
}

/// `phasegate run`.
pub fn run(ctx: &Context, args: &RunArgs, io: &mut Streams<'_>) -> ExitCode {
    execute(ctx, &RunRequest::from_args(args), io)
}

/// The configuration of `--config-from-ref spec`, and whether its commit
/// holds a `phasegate.toml` (the embedded defaults otherwise).
pub(super) fn config_at_ref(
    root: &Path,
    spec: &str,
) -> Result<(bool, Result<config::Config, config::ConfigError>), crate::git::GitError> {
    let bytes = crate::git::file_at(root, spec, config::CONFIG_FILE)?;
    let held = bytes.is_some();
    let name = format!("{}@{spec}", config::CONFIG_FILE);
    Ok((held, config::load_committed(root, &name, bytes)))
}

/// Runs the gate and returns the exit code.
pub fn execute(ctx: &Context, args: &RunRequest, io: &mut Streams<'_>) -> ExitCode {
    let json = args.format == ReportFormat::Json;
    let reports = match super::Reports::parse(args.format, args.output.clone(), &args.reports) {
        Ok(reports) => reports,
        Err(message) => {
            // The `--format` report still says why the run stopped.
            let verdict = Verdict::stopped(Profile::default(), None, super::usage_error(message));
            let alone = super::Reports {
                format: args.format,
                output: args.output.clone(),
                extra: Vec::new(),
            };
            return super::emit_stopped_reports(&verdict, &alone, ctx, io);
        }
    };
    // Once known, where an internal failure that stops the run is recorded.
    let known_state: std::cell::OnceCell<PathBuf> = std::cell::OnceCell::new();
    let stop = |io: &mut Streams<'_>, profile: Profile, error: VerdictError| {
        let mut verdict = Verdict::stopped(profile, args.phase.clone(), error);
        let internal = verdict.error.as_ref().is_some_and(|e| e.kind == "internal");
        if let (true, Some(state_dir)) = (internal, known_state.get()) {
            super::record::record_stopped(
                state_dir,
                &mut verdict,
                ctx.session.as_deref(),
                &mut *io.err,
            );
        }
        super::emit_stopped_reports(&verdict, &reports, ctx, io)
    };

    let repo = match crate::git::discover(&ctx.cwd) {
        Ok(repo) => repo,
        Err(
            e @ (crate::git::GitError::Bare { .. } | crate::git::GitError::NamedRepository { .. }),
        ) => {
            return stop(io, Profile::default(), super::usage_error(e.to_string()));
        }
        Err(e) => return stop(io, Profile::default(), super::internal_error(&e)),
    };
    let root = repo
        .as_ref()
        .map_or_else(|| ctx.cwd.clone(), |r| r.root.clone());
    if let Some(index) = &ctx.index_file {
        crate::git::use_index_file(index.clone());
    }
    // A staged selection is most of a run's start (it looks at every
    // tracked file): it begins now, on its own thread, while the
    // configuration is read.
    let mut early = (repo.is_some() && args.selection.is_staged(ctx.ci))
        .then(|| EarlySelection::start(root.clone(), ctx.cpus));

    // Whether the commit of `--config-from-ref` holds a `phasegate.toml`.
    let mut ref_has_config = true;
    let loaded = match &args.config_from_ref {
        None => config::load(&root),
        Some(spec) => {
            if repo.is_none() {
                return stop(
                    io,
                    Profile::default(),
                    super::usage_error("--config-from-ref needs a git repository".to_string()),
                );
            }
            match config_at_ref(&root, spec) {
                Ok((held, loaded)) => {
                    ref_has_config = held;
                    loaded
                }
                Err(e) => return stop(io, Profile::default(), super::usage_error(e.to_string())),
            }
        }
    };
    // A configuration that does not load: its errors for people, and the
    // verdict that says so.
    // The profile the verdict names is the one asked for, when it is known.
    let stop_profile = match asked_profile(ctx, args) {
        Some(Ok(profile)) => profile,
        _ => Profile::default(),
    };
    // People read the errors unless standard output carries the JSON
    // verdict (with `--output`, it carries the human report).
    let json_on_stdout = json && args.output.is_none();
    let config_failed = |io: &mut Streams<'_>, error: &config::ConfigError, from: Source<'_>| {
        if !json_on_stdout {
            report::errors::render_diagnostic(error, io.err, ctx.color_for(ctx.stderr_tty));
            if let Some(note) = from.note() {
                let _ = writeln!(io.err, "note: {note}");
            }
        }
        let mut error = super::config_error(error);
        from.locate(&mut error);
        stop(io, stop_profile, error)
    };
    let from = match &args.config_from_ref {
        Some(spec) => Source::Ref(spec),
        None => Source::WorkTree,
    };
    // A staged run is judged by the staged `phasegate.toml`, a range by the
    // one of its end: an error in an uncommitted edit of it waits until the
    // version that counts is known.
    let may_be_committed = args.config_from_ref.is_none()
        && repo.is_some()
        && !matches!(
            args.selection,
            SelectionRequest::Files(_) | SelectionRequest::All
        );
    let mut deferred = None;
    let config = match loaded {
        Ok(config) => config,
        Err(error) if may_be_committed => {
            match config::load_committed(&root, config::CONFIG_FILE, None) {
                Ok(embedded) => {
                    deferred = Some(error);
                    embedded
                }
                Err(_) => return config_failed(io, &error, from),
            }
        }
        Err(error) => return config_failed(io, &error, from),
    };
    ctx.maybe_test_panic("config");

    let state_dir = state::state_dir(
        repo.as_ref().map(|r| r.common_dir.as_path()),
        &root,
        &ctx.temp_dir,
    );
    let _ = known_state.set(state_dir.clone());
    // Unstaged changes set aside belong to this work tree alone (linked
    // worktrees share `state_dir`).
    let work_tree_state = repo
        .as_ref()
        .map_or_else(|| state_dir.clone(), crate::git::RepoInfo::work_tree_state);
    // A run that was killed while it held unstaged changes aside is
    // finished first, whatever this run selects.
    let mut notes = Vec::new();
    if repo.is_some() {
        // A restore under way always finishes; an interrupt during it
        // keeps the checks from starting.
        let _interrupts = runner::InterruptGuard::install();
        let pause = |step: &str| ctx.maybe_pause(step, &state_dir);
        match crate::git::recover(&root, &work_tree_state, &pause) {
            Ok(recovered) if !recovered.is_empty() => {
                // The early selection may have looked at the work tree
                // before those files came back.
                early = None;
                notes.push(recovered.describe());
                // git built a temporary index (`commit -a`, `commit PATH`)
                // from the work tree as the killed run left it, without
                // those changes: this commit would miss them.
                if args.selection.is_staged(ctx.ci) && crate::git::index_is_temporary() {
                    let error = super::internal_message(format!(
                        "{}; this commit was prepared from the files as the killed run had left them, without those changes: run the commit again",
                        recovered.describe()
                    ));
                    return stop(io, config.gate.profile, error);
                }
            }
            Ok(_) => {}
            Err(e) => return stop(io, config.gate.profile, super::internal_error(&e)),
        }
    }

    let Selected {
        files: selection,
        summary: mode,
        notes: selection_notes,
        unstaged,
        held,
    } = match select_files(ctx, args, &root, repo.is_some(), early) {
        Ok(selection) => selection,
        Err(error) => return stop(io, config.gate.profile, error),
    };
    notes.extend(selection_notes);

    // A staged run is judged by the configuration it commits, a range by
    // the one of the commit whose files the checks see: an uncommitted edit
    // of `phasegate.toml` neither weakens nor breaks it.
    let staged = mode.mode == "staged";
    let committed = match (&args.config_from_ref, mode.mode, &mode.to) {
        (None, "staged", _) => Some((staged_config(&root, unstaged.as_ref()), Source::Staged)),
        (None, "range" | "all", Some(to)) => {
            Some((committed_config(&root, to), Source::Checked(to)))
        }
        _ => None,
    };
    let config = match committed {
        Some((Ok(Some(loaded)), source)) => {
            notes.extend(source.used());
            deferred = None;
            match loaded {
                Ok(config) => config,
                Err(error) => return config_failed(io, &error, source),
            }
        }
        Some((Err(e), _)) => return stop(io, config.gate.profile, super::internal_error(&e)),
        _ => config,
    };
    if let Some(error) = deferred {
        return config_failed(io, &error, from);
    }

    // The handoff documents among the selected files, as the run checks
    // them (staged, or at the commit checked); their stage names the phase
    // when neither --phase nor PHASEGATE_PHASE does.
    let source = match (mode.mode, &mode.to) {
        ("staged", _) => Content::Staged,
        ("range" | "all", Some(to)) => Content::At(to.clone()),
        _ => Content::WorkTree,
    };
    let documents = match read_handoffs(&root, &selection, &config, &source) {
        Ok(documents) => documents,
        Err(e) => return stop(io, config.gate.profile, super::internal_error(&e)),
    };
    let mut rules = handoff_rules(&config);
    // Read once for their stages; validated again once the checks ran, when
    // their claims (`tests_passing`) can be held against the results.
    let doc_stages: Vec<(String, String)> = documents
        .iter()
        .filter_map(|(path, bytes)| {
            let report = read_handoff(path, bytes, &rules);
            report.stage.map(|s| (path.clone(), s))
        })
        .collect();
    let settings = match resolve(ctx, args, &config, &doc_stages) {
        Ok(settings) => settings,
        Err(message) => return stop(io, config.gate.profile, super::usage_error(message)),
    };
    let (run_dir, pruning) = match RunDir::create(&state_dir, SystemTime::now(), std::process::id())
    {
        Ok(dir) => {
            // Old run directories are removed while this run's checks run.
            let pruning =
                state::Pruning::start(&state_dir, config.gate.keep_runs, super::record::LOCK_WAIT);
            (dir, Some(pruning))
        }
        Err(e) => {
            // A state directory that cannot be written does not decide the
            // verdict: the logs go to the temporary directory instead.
            // One per user (another user's would not be writable), only
            // theirs to read, pruned as the state directory is.
            let fallback = ctx.temp_dir.join(format!(
                "phasegate-runs-{}",
                rustix::process::getuid().as_raw()
            ));
            let _ = std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
                .create(&fallback);
            match RunDir::create(&fallback, SystemTime::now(), std::process::id()) {
                Ok(dir) => {
                    notes.push(format!(
                        "failed to create a run directory under `{}` ({e}); the logs are under `{}`",
                        state_dir.display(),
                        dir.path.display()
                    ));
                    let pruning = state::Pruning::start(
                        &fallback,
                        config.gate.keep_runs,
                        super::record::LOCK_WAIT,
                    );
                    (dir, Some(pruning))
                }
                Err(e2) => {
                    return stop(
                        io,
                        settings.profile,
                        super::internal_message(format!(
                            "failed to create a run directory under `{}` ({e}) or `{}` ({e2})",
                            state_dir.display(),
                            fallback.display()
                        )),
                    )
                }
            }
        }
    };

    let phase_specs: Vec<&config::CheckSpec> = config
        .checks_for(&settings.phase, settings.workflow.as_deref())
        .unwrap_or_default()
        .iter()
        .collect();
    // Nothing to run because there is nothing to go by: say why.
    if phase_specs.is_empty() && config::detect_language(&root).is_none() {
        let none_here = match &args.config_from_ref {
            Some(spec) => {
                (!ref_has_config).then(|| format!("`{spec}` has no `{}`", config::CONFIG_FILE))
            }
            None => (!root.join(config::CONFIG_FILE).exists())
                .then(|| format!("there is no `{}`", config::CONFIG_FILE)),
        };
        if let Some(none_here) = none_here {
            notes.push(format!(
                "{none_here} and no project phasegate knows (Cargo.toml, go.mod, package.json, pyproject.toml, setup.cfg) at the root: `phasegate init` writes a configuration to start from"
            ));
        }
    }
    // `resume` runs again what did not pass, warn or get skipped, and what
    // the configuration added or changed since; the rest is carried over.
    let again: Option<Vec<&str>> = args
        .resume_of
        .as_ref()
        .map(|previous| super::resume::to_run_again(previous, &phase_specs));
    let specs: Vec<&config::CheckSpec> = phase_specs
        .iter()
        .copied()
        .filter(|c| match &again {
            Some(again) => again.contains(&c.name.as_str()),
            None => args.checks.is_empty() || args.checks.contains(&c.name),
        })
        .collect();
    // Under `isolation = "snapshot"` a staged run's checks work in a
    // temporary checkout of the index; the work tree is never touched. A
    // range whose end, or a commit whose files, are not the checked-out
    // commit (`git push` of another branch) is checked in a temporary
    // checkout of that commit.
    // The checked-out commit is checked in the work tree, with its
    // unstaged changes set aside as for a staged run: nothing staged, so
    // the files are at the commit's content.
    let mut protect_at_head = false;
    let target = match (mode.mode, &mode.to) {
        ("range" | "all", Some(to)) if repo.is_some() => match crate::git::commit_view(&root, to) {
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
            // The range itself was read from commits; only the work tree's
            // state is unknown.
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
                return stop(io, settings.profile, super::usage_error(e.to_string()))
            }
            Err(e) => return stop(io, settings.profile, super::internal_error(&e)),
        },
        _ => None,
    };
    let snapshot_dir = state_dir.join("snapshots").join(&run_dir.id);
    let snapshot = if let Some((commit, why)) = target {
        let to = mode.to.as_deref().unwrap_or_default();
        let named = if commit.to_string().starts_with(to) {
            format!("{commit:.10}")
        } else {
            format!("{to} ({commit:.10})")
        };
        notes.push(format!("the checks ran in a checkout of {named}: {why}"));
        match Snapshot::create(&root, &snapshot_dir, Some(commit)) {
            Ok(snapshot) => Some(snapshot),
            Err(error) => return stop(io, settings.profile, error),
        }
    } else if staged && config.gate.isolation == config::Isolation::Snapshot {
        match Snapshot::create(&root, &snapshot_dir, None) {
            Ok(snapshot) => Some(snapshot),
            Err(error) => return stop(io, settings.profile, error),
        }
    } else {
        None
    };
    let check_root = snapshot
        .as_ref()
        .map_or(root.as_path(), |s| s.dir.as_path());
    // Checks run without git's repository variables; only a repository
    // they could not find from the work tree is named for them. The index
    // git named (its temporary one, for `git commit -a`) is passed under a
    // name of phasegate's, for a check that asks git about what is staged:
    // `GIT_INDEX_FILE=$PHASEGATE_GIT_INDEX_FILE git diff --cached`. These
    // go first, so a check's own `env` still wins.
    // A local override changes the gate for this machine alone: the
    // verdict says so, for whoever reads it elsewhere.
    if let config::ConfigOrigin::File { files } = &config.origin {
        if files.iter().any(|f| f == config::LOCAL_FILE) {
            notes.push(format!(
                "`{}` overrides `{}` here: this gate is not the one the repository holds",
                config::LOCAL_FILE,
                config::CONFIG_FILE
            ));
        }
    }
    // A name PHASEGATE_SKIP gives that is no check of the phase skips
    // nothing: a typo is said, not passed over.
    let unknown_skips: Vec<String> = ctx
        .skip
        .iter()
        .filter(|name| !phase_specs.iter().any(|spec| &spec.name == *name))
        .map(|name| format!("`{name}`"))
        .collect();
    if !unknown_skips.is_empty() {
        notes.push(format!(
            "PHASEGATE_SKIP names no check of phase `{}`: {} (skipped nothing)",
            settings.phase,
            unknown_skips.join(", ")
        ));
    }
    let mut git_env = crate::git::repository_env_for_checks(&root, check_root);
    if let Some(index) = &ctx.index_file {
        git_env.push((
            "PHASEGATE_GIT_INDEX_FILE".to_string(),
            index.clone().into_os_string(),
        ));
    }
    let planned: Vec<_> = specs
        .iter()
        .map(|spec| {
            let mut plan = gate::plan_check(
                spec,
                &selection,
                &ctx.skip,
                check_root,
                &run_dir,
                ctx.path.as_deref(),
            )?;
            plan.env.splice(0..0, git_env.iter().cloned());
            Ok(plan)
        })
        .collect();
    let mut plans: Vec<runner::CheckPlan> = planned
        .iter()
        .filter_map(|p| p.as_ref().ok().cloned())
        .collect();
    ctx.maybe_test_panic("run");

    let jobs = args
        .jobs
        .map(usize::from)
        .or(config.gate.jobs)
        .unwrap_or(ctx.cpus)
        .max(1);
    // Staged runs check exactly what will be committed: unstaged changes
    // of tracked files are set aside first and come back afterwards.
    let pause = |step: &str| ctx.maybe_pause(step, &state_dir);
    let in_place = (staged || protect_at_head) && snapshot.is_none() && !plans.is_empty();
    // From before the first file is set aside until the last comes back, a
    // Ctrl-C (or SIGTERM, SIGHUP) never kills phasegate: it stops the
    // checks, or keeps them from starting, and the work tree is given back
    // before the run ends as interrupted. A restore under way always
    // finishes.
    let interrupts = in_place.then(runner::InterruptGuard::install);
    // Interrupted while the changes were being saved: the work tree was
    // never touched, and nothing is there to compare after the checks.
    let mut cut_short = false;
    let guard = if in_place {
        match crate::git::protect(
            &root,
            &work_tree_state,
            &run_dir.id,
            unstaged.as_ref(),
            ctx.cpus,
            &pause,
        ) {
            Ok(guard) => guard,
            Err(crate::git::ProtectError::Interrupted) => {
                cut_short = true;
                None
            }
            Err(e) => return stop(io, settings.profile, super::internal_error(&e)),
        }
    } else {
        None
    };
    // In place with nothing set aside, the index as the checks find it, to
    // see afterwards whether they staged anything: the selection's own
    // read, or one now.
    let index_before = (in_place
        && guard.is_none()
        && !cut_short
        && !crate::git::Held::kept_by(unstaged.as_ref()))
    .then(|| crate::git::Held::now(&root))
    .flatten();
    // If phasegate is killed while the changes are aside, the run that puts
    // them back stops these checks first.
    if let Some(guard) = &guard {
        for plan in &mut plans {
            plan.groups = Some(guard.groups_file());
        }
    }
    let outcomes = if !json && ctx.stderr_tty && !plans.is_empty() {
        let mut progress = report::progress::Progress::new(&mut *io.err, plans.len())
            .with_width(ctx.stderr_columns);
        let outcomes = runner::run_checks(&plans, jobs, &mut |event| progress.event(&event));
        progress.finish();
        outcomes
    } else {
        runner::run_checks(&plans, jobs, &mut |_| {})
    };

    // The files the checks changed: what is checked must stay what was
    // selected, one comparison after the checks wherever they ran.
    let mut modified = Vec::new();
    // In a temporary checkout, with what was written there.
    if let Some(snapshot) = &snapshot {
        match crate::git::changed_in_checkout(&root, &snapshot.dir, &snapshot.written) {
            Ok(changed) => modified.extend(changed),
            Err(e) => return stop(io, settings.profile, super::internal_error(&e)),
        }
    }
    // In place with nothing set aside, with the index. (inotify would name
    // the files touched, but tearing its watches down waits for an RCU
    // grace period, longer than the comparison.)
    if in_place && guard.is_none() && !cut_short {
        let before = held.and_then(HeldLater::take).or(index_before);
        match crate::git::changed_in_work_tree(&root, ctx.cpus, before) {
            Ok(changed) => modified.extend(changed),
            Err(e) => return stop(io, settings.profile, super::internal_error(&e)),
        }
    }
    // In place with changes set aside, by the guard that puts them back.
    if let Some(guard) = guard {
        match guard.finish(&pause, &run_dir.path.join("dropped")) {
            Ok(after) => {
                modified.extend(after.modified);
                if !after.conflicts.is_empty() {
                    let kept = after.kept.map_or_else(String::new, |dir| {
                        format!(" (their versions are kept in {})", dir.display())
                    });
                    notes.push(format!(
                        "the checks changed files that also had unstaged changes; their changes were dropped and yours restored: {}{kept}",
                        after.conflicts.join(", ")
                    ));
                }
            }
            Err(e) => {
                let mut error = super::internal_error(&e);
                error.message.push_str(&format!(
                    "; the unstaged changes are kept under {}: run `phasegate restore`",
                    work_tree_state.join("protect").display()
                ));
                return stop(io, settings.profile, error);
            }
        }
    }
    // The work tree is back: signals take their usual course again.
    drop(interrupts);
    let interrupted = runner::interrupted();
    let mut blocking = Vec::new();
    if !modified.is_empty() {
        let by: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
        blocking.push(gate_finding(format!(
            "files were modified by {}: {}",
            describe_checks(&by),
            modified.join(", ")
        )));
    }

    let pinned: Vec<(String, String)> = runner::PINNED_ENV
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let mut outcomes = outcomes.into_iter();
    let mut checks = Vec::with_capacity(specs.len());
    for (spec, planned) in specs.iter().zip(planned) {
        let run = match planned {
            Err(reason) => CheckRun::NotRun(reason),
            Ok(plan) => {
                let Some(outcome) = outcomes.next() else {
                    unreachable!("the runner returns one outcome per plan")
                };
                if let Err(e) = run_dir.write_invocation(&plan, &outcome, &pinned) {
                    notes.push(format!(
                        "failed to write the invocation record of `{}`: {e}",
                        plan.name
                    ));
                }
                CheckRun::Ran(Box::new(outcome))
            }
        };
        checks.push(CheckInput {
            name: spec.name.clone(),
            kind: spec.kind,
            origin: spec.origin,
            on_failure: spec.on_failure,
            on_missing: spec.on_missing,
            filter: spec
                .filter
                .or(config.gate.filter)
                .unwrap_or(Filter::default_for(spec.origin)),
            location: spec.location.clone(),
            run,
        });
    }
    if let Some(note) = mark_pre_existing(&root, &mode, &mut checks) {
        notes.push(note);
    }

    rules.failed_checks = checks
        .iter()
        .filter(|c| match &c.run {
            // Only a check that ran and failed contradicts a claim; one
            // that could not finish verified nothing either way.
            CheckRun::Ran(outcome) => {
                matches!(outcome.termination, runner::Termination::Exited(code) if code != 0)
                    || matches!(&outcome.verifier, Some(runner::VerifierReply::Answer(a)) if !a.pass)
            }
            CheckRun::NotRun(_) => false,
        })
        .map(|c| c.name.clone())
        .collect();
    let selection_record = crate::state::SelectionRecord {
        mode: mode.mode.to_string(),
        files: if mode.mode == "files" {
            selection
                .iter()
                .map(|f| f.to_string_lossy().into_owned())
                .collect()
        } else {
            Vec::new()
        },
        from: mode.from.clone(),
        to: mode.to.clone(),
        pushed_ref: args.pushed_ref.clone(),
        config_from_ref: args.config_from_ref.clone(),
    };
    let mut verdict = gate::decide(GateInput {
        phase: settings.phase,
        profile: settings.profile,
        workflow: settings.workflow,
        run_id: Some(run_dir.id.clone()),
        checks,
        notes,
        environment: pinned,
        root: root.clone(),
        summary_limit: config.gate.summary,
        selection: Some(mode),
        blocking,
        interrupted,
        handoffs: documents
            .iter()
            .map(|(path, bytes)| read_handoff(path, bytes, &rules))
            .collect(),
    });
    ctx.maybe_test_panic("decide");
    if let Some(previous) = &args.resume_of {
        carry_over(previous, &phase_specs, &mut verdict);
    }
    if args.config_from_ref.is_none() {
        show_config_lines(&root, &mut verdict);
    }
    let facts = super::record::RunFacts {
        session: ctx.session.as_deref(),
        selection: selection_record,
        pruning,
    };
    super::record::record_run(
        &state_dir,
        &config,
        facts,
        &mut verdict,
        &pause,
        &mut *io.err,
    );
    if let Err(e) = run_dir.write_verdict(&verdict) {
        // The verdict on stdout is still the answer; the record is a copy.
        let _ = writeln!(
            io.err,
            "warning: failed to record the verdict in `{}`: {e}",
            run_dir.path.display()
        );
    }
    super::emit_reports(&verdict, &reports, ctx, io)
}

/// The phase, profile and workflow of this run, checked against the config.
struct Settings {
    phase: String,
    profile: Profile,
    workflow: Option<String>,
}

/// Where a run reads the selected files' content from.
enum Content {
    WorkTree,
    /// The index: what a commit would record.
    Staged,
    /// A commit (a range's end, a pushed commit).
    At(String),
}

/// A document's bytes, or why they could not be read.
type DocumentBytes = Result<Vec<u8>, String>;

/// The report of one document as `read_handoffs` read it.
fn read_handoff(
    path: &str,
    read: &DocumentBytes,
    rules: &crate::handoff::Rules,
) -> crate::handoff::HandoffReport {
    match read {
        Ok(bytes) => crate::handoff::validate_bytes(path, bytes, rules).0,
        Err(e) => crate::handoff::unreadable(path, e, rules),
    }
}

/// The handoff documents among `selection`, read from `source`. A document
/// the source does not hold (deleted there) is left out; one that cannot be
/// read is kept, with the reason.
fn read_handoffs(
    root: &Path,
    selection: &[PathBuf],
    config: &Config,
    source: &Content,
) -> Result<Vec<(String, DocumentBytes)>, crate::git::GitError> {
    let wrap = |all: Vec<Option<Vec<u8>>>| all.into_iter().map(|b| b.map(Ok)).collect();
    let paths: Vec<&Path> = selection
        .iter()
        .filter(|f| config.handoff.path_filter.is_match(f))
        .map(PathBuf::as_path)
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let contents: Vec<Option<DocumentBytes>> = match source {
        Content::WorkTree => paths
            .iter()
            .map(|f| match std::fs::read(root.join(f)) {
                Ok(bytes) => Some(Ok(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => Some(Err(e.to_string())),
            })
            .collect(),
        Content::Staged => wrap(crate::git::files_staged(root, &paths)?),
        Content::At(spec) => wrap(crate::git::files_at(root, spec, &paths)?),
    };
    Ok(paths
        .iter()
        .zip(contents)
        .filter_map(|(f, bytes)| Some((f.to_string_lossy().into_owned(), bytes?)))
        .collect())
}

/// The configuration as staged, when `phasegate.toml` is tracked and its
/// work-tree copy differs from the index; `None` otherwise. `unstaged`
/// (the selection's candidates) spares the look when it does not name the
/// file.
fn staged_config(
    root: &Path,
    unstaged: Option<&crate::git::UnstagedHint>,
) -> Result<Option<Result<Config, config::ConfigError>>, crate::git::GitError> {
    if unstaged.is_some_and(|hint| !hint.names(config::CONFIG_FILE.as_bytes())) {
        return Ok(None);
    }
    let Some(Some(staged)) = crate::git::files_staged(root, &[Path::new(config::CONFIG_FILE)])?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    Ok(unless_in_work_tree(root, config::CONFIG_FILE, staged))
}

/// `phasegate.toml` as the commit `to` holds it, when it differs from the
/// work tree's: `None` when the two are the same or the commit has none
/// (a configuration never committed is the work tree's to give).
fn committed_config(
    root: &Path,
    to: &str,
) -> Result<Option<Result<Config, config::ConfigError>>, crate::git::GitError> {
    let Some(committed) = crate::git::file_at(root, to, config::CONFIG_FILE)? else {
        return Ok(None);
    };
    let name = format!("{}@{to}", config::CONFIG_FILE);
    Ok(unless_in_work_tree(root, &name, committed))
}

/// `phasegate.toml` as `bytes` (a staged or committed version, shown as
/// `name`) with the local overrides, unless the work tree holds the same.
fn unless_in_work_tree(
    root: &Path,
    name: &str,
    bytes: Vec<u8>,
) -> Option<Result<Config, config::ConfigError>> {
    if std::fs::read(root.join(config::CONFIG_FILE)).is_ok_and(|now| now == bytes) {
        return None;
    }
    Some(config::load_version(root, name, bytes))
}

fn handoff_rules(config: &Config) -> crate::handoff::Rules {
    crate::handoff::Rules {
        max_retries: config.gate.max_retries,
        checkpoints: config.handoff.checkpoints.clone(),
        claims: config.handoff.claims.clone(),
        failed_checks: Vec::new(),
    }
}

fn resolve(
    ctx: &Context,
    args: &RunRequest,
    config: &Config,
    stages: &[(String, String)],
) -> Result<Settings, String> {
    let profile = match asked_profile(ctx, args) {
        Some(Ok(profile)) => profile,
        Some(Err(message)) => return Err(message),
        None => config.gate.profile,
    };
    let workflow = args
        .workflow
        .clone()
        .or_else(|| config.gate.workflow.clone());
    if let Some(name) = &workflow {
        if !config.workflows.contains_key(name) {
            return Err(unknown("workflow", name, config.workflows.keys()));
        }
    }
    let stage = match stages {
        [] => None,
        [(_, first), rest @ ..] => {
            if let Some((path, other)) = rest.iter().find(|(_, s)| s != first) {
                let (first_path, _) = &stages[0];
                if args.phase.is_none() && ctx.phase.is_none() {
                    return Err(format!(
                        "the handoff documents disagree on the stage: `{first_path}` says `{first}`, `{path}` says `{other}`; pass --phase"
                    ));
                }
            }
            Some(first.clone())
        }
    };
    // The phase, and what named it, for an error that says where to look.
    let (phase, named_by) = if let Some(phase) = &args.phase {
        (phase.clone(), None)
    } else if let Some(phase) = &ctx.phase {
        (phase.clone(), Some("PHASEGATE_PHASE".to_string()))
    } else if let Some(stage) = stage {
        let by = format!("the `stage` of `{}`", stages[0].0);
        (stage, Some(by))
    } else {
        (config.gate.default_phase.clone(), None)
    };
    let Some(checks) = config.checks_for(&phase, workflow.as_deref()) else {
        let mut message = unknown("phase", &phase, config.phases.keys());
        if let Some(by) = named_by {
            message = format!("{message} (named by {by})");
        }
        return Err(message);
    };
    for name in &args.checks {
        if !checks.iter().any(|c| &c.name == name) {
            return Err(unknown(
                &format!("check in phase `{phase}`:"),
                name,
                checks.iter().map(|c| &c.name),
            ));
        }
    }
    Ok(Settings {
        phase,
        profile,
        workflow,
    })
}

/// Where a run read `phasegate.toml` from.
#[derive(Clone, Copy)]
enum Source<'a> {
    WorkTree,
    /// The index, because the work tree's version has unstaged changes.
    Staged,
    /// `--config-from-ref`.
    Ref(&'a str),
    /// The commit a range run checks, because the work tree's version
    /// differs from it.
    Checked(&'a str),
}

impl Source<'_> {
    /// The note a run that read this version, not the work tree's, carries.
    fn used(self) -> Option<String> {
        let file = config::CONFIG_FILE;
        match self {
            Source::WorkTree | Source::Ref(_) => None,
            Source::Staged => Some(format!(
                "`{file}` has unstaged changes: the staged version was used"
            )),
            Source::Checked(spec) => Some(format!(
                "`{file}` differs from its version in `{spec}`, the commit checked: that version was used"
            )),
        }
    }

    /// What people are told besides the errors, when the file they would
    /// open is not the one read.
    fn note(self) -> Option<String> {
        match self {
            Source::WorkTree => None,
            Source::Staged => Some(format!(
                "this is `{}` as staged; the work tree's version has unstaged changes: `git add` your fix",
                config::CONFIG_FILE
            )),
            Source::Ref(spec) => Some(format!(
                "this is `{}` as `{spec}` holds it (--config-from-ref)",
                config::CONFIG_FILE
            )),
            Source::Checked(spec) => Some(format!(
                "this is `{}` as `{spec}` holds it, the commit checked; the work tree's version differs",
                config::CONFIG_FILE
            )),
        }
    }

    /// The errors placed in the repository's `phasegate.toml` (reports
    /// annotate files of the repository), the message saying which version.
    fn locate(self, error: &mut VerdictError) {
        let Some(note) = self.note() else {
            return;
        };
        if let Source::Ref(spec) | Source::Checked(spec) = self {
            let shown = format!("{}@{spec}", config::CONFIG_FILE);
            for problem in &mut error.problems {
                if problem.file.as_deref() == Some(shown.as_str()) {
                    problem.file = Some(config::CONFIG_FILE.to_string());
                }
            }
        }
        error.message = format!("{} ({note})", error.message);
    }
}

/// The profile asked for by `--profile` or `PHASEGATE_PROFILE`, if any; an
/// unknown name is an error that says where it came from.
fn asked_profile(ctx: &Context, args: &RunRequest) -> Option<Result<Profile, String>> {
    let (name, by) = match (&args.profile, &ctx.profile) {
        (Some(name), _) => (name, "--profile"),
        (None, Some(name)) => (name, "PHASEGATE_PROFILE"),
        (None, None) => return None,
    };
    Some(Profile::parse(name).ok_or_else(|| {
        let mut message = format!(
            "unknown profile `{name}` (from {by}): expected one of {}",
            Profile::NAMES.join(", ")
        );
        if let Some(near) = config::suggest(name, Profile::NAMES.iter().copied()) {
            message.push_str(&format!("; did you mean `{near}`?"));
        }
        message
    }))
}

fn unknown<'a>(what: &str, name: &str, known: impl Iterator<Item = &'a String>) -> String {
    let known: Vec<&String> = known.collect();
    let mut message = format!("unknown {what} `{name}`");
    if let Some(near) = config::suggest(name, known.iter().map(|s| s.as_str())) {
        message.push_str(&format!(": did you mean `{near}`?"));
    } else if known.is_empty() {
        message.push_str(": none is defined");
    } else {
        let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
        message.push_str(&format!(": expected one of {}", list.join(", ")));
    }
    message
}

/// A temporary checkout of the index or of a commit, removed when dropped.
struct Snapshot {
    dir: PathBuf,
    /// What was written there, to tell what the checks changed.
    written: crate::git::Written,
}

impl Snapshot {
    /// A checkout in `dir` of `commit`, or of the index when `None`.
    fn create(
        root: &Path,
        dir: &Path,
        commit: Option<git2::Oid>,
    ) -> Result<Snapshot, VerdictError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            super::internal_message(format!(
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
                Err(super::internal_error(&e))
            }
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // A snapshot left behind is only disk space; the next run's is new.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Applies each check's changed-line filter over the change the run looked
/// at (the staged diff or the range's). With every file or named files
/// there is no change to compare with, and nothing is pre-existing.
fn mark_pre_existing(
    root: &Path,
    mode: &SelectionSummary,
    checks: &mut [CheckInput],
) -> Option<String> {
    let base = match (mode.mode, &mode.from, &mode.to) {
        ("staged", ..) => crate::git::ChangeBase::Staged,
        ("range", Some(from), Some(to)) => crate::git::ChangeBase::Range {
            from: from.clone(),
            to: to.clone(),
        },
        _ => return None,
    };
    let filtered = |c: &CheckInput| c.filter != Filter::Nofilter;
    let mut files: Vec<String> = checks
        .iter()
        .filter(|c| filtered(c))
        .filter_map(|c| match &c.run {
            CheckRun::Ran(outcome) => Some(outcome.diagnostics.iter()),
            CheckRun::NotRun(_) => None,
        })
        .flatten()
        .filter_map(|d| d.file.clone())
        .collect();
    files.sort();
    files.dedup();
    if files.is_empty() {
        return None;
    }
    let mut changes = match crate::git::changed_lines(root, &base, &files) {
        Ok(changes) => changes,
        Err(e) => {
            return Some(format!(
                "the changed-line filter was not applied: failed to read the change: {e}"
            ))
        }
    };
    // A finding in a file the repository does not have (a name a tool
    // garbled, an empty one) is placed nowhere: never demoted.
    for file in &files {
        if file.is_empty() || std::fs::symlink_metadata(root.join(file)).is_err() {
            changes.unplaced(file);
        }
    }
    for check in checks.iter_mut().filter(|c| filtered(c)) {
        if let CheckRun::Ran(outcome) = &mut check.run {
            crate::diagnostics::mark_pre_existing(&mut outcome.diagnostics, check.filter, &changes);
        }
    }
    None
}

/// `resume`: the checks of the resumed run that were not run again join
/// the verdict as they ended there (passed, warned or skipped), in the
/// configuration's order, so it covers the whole phase: a warning carried
/// over still warns. Checks it had that are no longer configured are named.
fn carry_over(
    previous: &crate::state::RunRecord,
    specs: &[&config::CheckSpec],
    verdict: &mut Verdict,
) {
    let rerun: Vec<String> = verdict.checks.iter().map(|c| c.name.clone()).collect();
    let mut gone = Vec::new();
    let mut carried_ran = false;
    for record in &previous.checks {
        if rerun.contains(&record.name) {
            continue;
        }
        let Some(spec) = specs.iter().find(|s| s.name == record.name) else {
            gone.push(format!("`{}` ({})", record.name, record.status));
            continue;
        };
        let (status, effect) = match record.status.as_str() {
            "passed" => (gate::CheckStatus::Passed, gate::Effect::None),
            "warned" => (gate::CheckStatus::Warned, gate::Effect::Warn),
            "skipped" => (gate::CheckStatus::Skipped, gate::Effect::None),
            // `resume::to_run_again` runs every other check again.
            _ => continue,
        };
        carried_ran |= status != gate::CheckStatus::Skipped;
        verdict.checks.push(gate::CheckResult {
            name: record.name.clone(),
            kind: spec.kind,
            status,
            on_failure: spec.on_failure,
            effect,
            tier: None,
            exit_code: None,
            signal: None,
            duration_ms: 0,
            diagnostics: 0,
            dropped_diagnostics: 0,
            filter: spec.filter.unwrap_or(Filter::default_for(spec.origin)),
            pre_existing: 0,
            log: None,
            reason: Some(format!(
                "{} in run {} (not run again)",
                record.status, previous.run_id
            )),
            argv: Vec::new(),
            output_tail: Vec::new(),
        });
        if effect == gate::Effect::Warn && verdict.status == gate::Status::Passed {
            verdict.status = gate::Status::Warned;
        }
    }
    let order = |name: &str| specs.iter().position(|s| s.name == name);
    verdict.checks.sort_by_key(|c| order(&c.name));
    if carried_ran {
        // The phase's checks did run, in the resumed run.
        let none_ran = format!("no check ran in phase `{}`", previous.phase);
        verdict.notes.retain(|n| *n != none_ran);
    }
    let ran = if rerun.is_empty() {
        "no check needed to run again; the handoff documents were validated again".to_string()
    } else {
        format!(
            "ran again {}",
            rerun
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    verdict
        .notes
        .push(format!("resumed run {}: {ran}", previous.run_id));
    if !gone.is_empty() {
        verdict.notes.push(format!(
            "run {} had checks that phase `{}` no longer has, not run: {}",
            previous.run_id,
            previous.phase,
            gone.join(", ")
        ));
    }
}

/// Findings placed at a check in `phasegate.toml` (a failure nothing could
/// parse, a missing tool) show that line, as tool findings show theirs.
fn show_config_lines(root: &Path, verdict: &mut Verdict) {
    let mut text: Option<Option<String>> = None;
    for d in &mut verdict.diagnostics {
        let (Some(file), Some(line), None) = (d.file.as_deref(), d.line, &d.source_line) else {
            continue;
        };
        if file != config::CONFIG_FILE {
            continue;
        }
        let content = text
            .get_or_insert_with(|| std::fs::read_to_string(root.join(config::CONFIG_FILE)).ok());
        d.source_line = content.as_deref().and_then(|t| {
            t.lines()
                .nth(usize::try_from(line).ok()?.checked_sub(1)?)
                .map(|l| l.chars().take(300).collect())
        });
    }
}

/// A finding of phasegate itself, outside any check.
fn gate_finding(message: String) -> crate::diagnostics::Diagnostic {
    crate::diagnostics::Diagnostic {
        check: String::new(),
        origin: crate::config::Origin::Runtime,
        tool: "phasegate".to_string(),
        severity: crate::diagnostics::Severity::Error,
        code: Some("files-modified".to_string()),
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

/// The files a run selected and what it learnt on the way.
struct Selected {
    /// Relative to the root.
    files: Vec<PathBuf>,
    /// How they were chosen.
    summary: SelectionSummary,
    notes: Vec<String>,
    /// For a staged run: the only tracked files that may have unstaged
    /// changes, found while the staged files were.
    unstaged: Option<crate::git::UnstagedHint>,
    /// For a staged run: what its selection read, for the comparison after
    /// the checks.
    held: Option<HeldLater>,
}

impl Selected {
    fn new(files: Vec<PathBuf>, summary: SelectionSummary, notes: Vec<String>) -> Selected {
        Selected {
            files,
            summary,
            notes,
            unstaged: None,
            held: None,
        }
    }
}

/// A staged selection begun on its own thread. Its answer arrives before
/// the thread lets go of the index and repository it read; it keeps them
/// for the comparison after the checks when nothing will be set aside.
struct EarlySelection {
    answer: std::sync::mpsc::Receiver<Result<crate::git::StagedSelection, crate::git::GitError>>,
    thread: std::thread::JoinHandle<Option<crate::git::Held>>,
}

/// The index and repository the early selection read, once its thread is
/// joined.
struct HeldLater(std::thread::JoinHandle<Option<crate::git::Held>>);

impl HeldLater {
    fn take(self) -> Option<crate::git::Held> {
        self.0.join().ok().flatten()
    }
}

impl EarlySelection {
    fn start(root: PathBuf, cpus: usize) -> EarlySelection {
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

/// Why a `pull_request_target` run on the event's own checkout (the target
/// branch) checks nothing, and what to do instead.
fn pull_request_target_refusal(base: &str, head: Option<&str>) -> String {
    let to = head.unwrap_or("<the pull request's head commit>");
    format!(
        "on GitHub's pull_request_target event the checkout is the target branch, which holds nothing of the pull request, and phasegate does not check out the pull request's code where it would run with that event's secrets and write token: run the gate on the `pull_request` event, or, knowing the code runs with those secrets, check the pull request out yourself (or run `phasegate run --from-ref {base} --to-ref {to}`)"
    )
}

/// The selected files, relative to `root`, how they were chosen, and notes.
/// A staged selection takes `early`'s result when there is one.
fn select_files(
    ctx: &Context,
    args: &RunRequest,
    root: &Path,
    in_repo: bool,
    early: Option<EarlySelection>,
) -> Result<Selected, VerdictError> {
    let mut notes = Vec::new();
    let summary =
        |mode: &'static str, files: &[PathBuf], range: Option<(&str, &str)>| SelectionSummary {
            mode,
            files: files.len(),
            from: range.map(|r| r.0.to_string()),
            to: range.map(|r| r.1.to_string()),
            pushed_ref: args.pushed_ref.clone(),
            ..SelectionSummary::default()
        };
    let git = |e: crate::git::GitError| match e {
        e @ (crate::git::GitError::Revision { .. } | crate::git::GitError::MergeBase { .. }) => {
            super::usage_error(e.to_string())
        }
        e => super::internal_error(&e),
    };
    let range = |from: &str, to: &str, notes: &mut Vec<String>| -> Result<_, VerdictError> {
        if !in_repo {
            return Err(super::usage_error(
                "--from-ref and --to-ref need a git repository".to_string(),
            ));
        }
        let resolved = crate::git::range_files(root, from, to).map_err(git)?;
        for ambiguous in &resolved.ambiguous {
            notes.push(ambiguity_note(ambiguous));
        }
        let s = SelectionSummary {
            from_commit: Some(resolved.from),
            to_commit: Some(resolved.to),
            merge_base: Some(resolved.merge_base),
            ..summary("range", &resolved.files, Some((from, to)))
        };
        Ok((resolved.files, s))
    };
    match &args.selection {
        SelectionRequest::Files(given) => {
            let mut files = Vec::new();
            let mut tracked: Option<Vec<PathBuf>> = None;
            for file in given {
                let absolute: PathBuf = if file.is_absolute() {
                    file.clone()
                } else {
                    ctx.cwd.join(file)
                };
                // A directory stands for the tracked files beneath it, as
                // `git ls-files DIR` lists them.
                let directory = in_repo && absolute.is_dir();
                if !directory && !absolute.is_file() {
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
                let Ok(relative) = resolved.strip_prefix(root) else {
                    return Err(super::usage_error(format!(
                        "`{}` is outside the repository at `{}`",
                        file.display(),
                        root.display()
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
                if tracked.is_none() {
                    tracked = Some(crate::git::tracked_files(root).map_err(git)?);
                }
                let beneath: Vec<PathBuf> = tracked
                    .iter()
                    .flatten()
                    .filter(|f| f.starts_with(relative))
                    // Deleted in the work tree: nothing to check.
                    .filter(|f| root.join(f).symlink_metadata().is_ok())
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
            let s = summary("files", &files, None);
            Ok(Selected::new(files, s, notes))
        }
        SelectionRequest::Range { from, to } => {
            let (files, s) = range(from, to, &mut notes)?;
            Ok(Selected::new(files, s, notes))
        }
        SelectionRequest::AllOf(commit) => {
            let files = crate::git::commit_files(root, commit).map_err(git)?;
            let s = SelectionSummary {
                to: Some(commit.clone()),
                to_commit: crate::git::commit_id(root, commit).ok(),
                ..summary("all", &files, None)
            };
            Ok(Selected::new(files, s, notes))
        }
        SelectionRequest::All => {
            let files = if in_repo {
                crate::git::tracked_files(root).map_err(git)?
            } else {
                Vec::new()
            };
            let s = summary("all", &files, None);
            Ok(Selected::new(files, s, notes))
        }
        SelectionRequest::Default if !in_repo => {
            Ok(Selected::new(Vec::new(), summary("all", &[], None), notes))
        }
        SelectionRequest::Default if ctx.ci => {
            let why = match &ctx.ci_selection {
                Some(CiSelection::Range(ci)) => {
                    // pull_request_target's own checkout is the target
                    // branch, which holds nothing of the pull request: the
                    // range would be empty, and checking the pull request
                    // out here would run its code with the event's secrets
                    // and write token.
                    if let Some((checked_out, head)) = &ctx.ci_target_checkout {
                        if crate::git::commit_id(root, &ci.to).is_ok_and(|at| at == *checked_out) {
                            return Err(super::usage_error(pull_request_target_refusal(
                                &ci.from,
                                head.as_deref(),
                            )));
                        }
                    }
                    // A push's previous commit may be missing here (a
                    // shallow clone, a force push): checking every file
                    // checks more, never less. A pull request's base that
                    // is missing is an error that says what to fetch.
                    let missing =
                        ci.push && matches!(crate::git::object_kind(root, &ci.from), Ok(None));
                    if missing {
                        format!(
                            "{}: the commit before the push, {}, is not in this clone (a shallow clone, or a force push): every tracked file is selected; fetch more history to check only the push's changes",
                            ci.source, ci.from
                        )
                    } else {
                        let (files, mut s) = range(&ci.from, &ci.to, &mut notes)?;
                        s.ci = Some(ci.source.to_string());
                        return Ok(Selected::new(files, s, notes));
                    }
                }
                Some(CiSelection::Everything { why }) => why.clone(),
                None => "in CI with no pull or merge request range: every tracked file is selected"
                    .to_string(),
            };
            let files = crate::git::tracked_files(root).map_err(git)?;
            notes.push(why);
            let s = summary("all", &files, None);
            Ok(Selected::new(files, s, notes))
        }
        SelectionRequest::Staged if !in_repo => Err(super::usage_error(
            "staged files need a git repository".to_string(),
        )),
        SelectionRequest::Default | SelectionRequest::Staged => {
            let (staged, held) = match early {
                Some(early) => {
                    let (staged, held) = early.join();
                    (staged, Some(held))
                }
                None => (crate::git::staged_selection(root, ctx.cpus), None),
            };
            let staged = staged.map_err(git)?;
            let s = summary("staged", &staged.files, None);
            Ok(Selected {
                files: staged.files,
                summary: s,
                notes,
                unstaged: staged.unstaged,
                held,
            })
        }
    }
}
