//! `phasegate run`: select files, resolve the phase, run its checks, decide,
//! record and render. Glue only: every decision lives in `gate`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

mod configuration;
mod handoffs;
mod isolation;
mod outcome;
mod select;

use crate::cli::{ReportFormat, RunArgs};
use crate::config::{self, Config, Profile};
use crate::context::Context;
use crate::diagnostics::OwnCode;
use crate::exit::ExitCode;
use crate::gate::{self, GateInput, SelectionSummary, Status, Verdict, VerdictError};
use crate::report;
use crate::runner;
use crate::state::{self, RunDir};

use super::Streams;
use configuration::Source;
use handoffs::Content;
use select::{EarlySelection, Selected};

pub(super) use configuration::config_at_ref;

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
    /// What the commits of a push change on `to`: the files it holds
    /// otherwise than each of the published commits they were made on
    /// (`git::published_parents`), when a merge brought in more than one.
    Pushed { to: String, published: Vec<String> },
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
    /// The push this run checks one ref of (`hook::push_id`): the runs of
    /// one push are one attempt in the history.
    pub push: Option<String>,
}

impl SelectionRequest {
    /// Whether this selects the staged files (the default does outside CI).
    fn is_staged(&self, ci: bool) -> bool {
        matches!(self, SelectionRequest::Staged)
            || (matches!(self, SelectionRequest::Default) && !ci)
    }
}

impl RunRequest {
    /// The run `phasegate run` asks for; why not, when its arguments do
    /// not make one.
    pub fn from_args(args: &RunArgs) -> Result<RunRequest, String> {
        // `--` ends the options, as in git, and what follows are files of
        // `--files` (a name beginning with `-`); with nothing to take them
        // they would be dropped in silence.
        let files: Vec<PathBuf> = args
            .files
            .iter()
            .flatten()
            .chain(&args.after_dashes)
            .cloned()
            .collect();
        if let Some(first) = args.after_dashes.first().filter(|_| args.files.is_none()) {
            let first = first.display();
            return Err(format!(
                "`{first}` after `--` names a file, which only `--files` takes: run `phasegate run --files -- {first}`, or `--files ./{first}`"
            ));
        }
        if args.files.is_some() && files.is_empty() {
            return Err(
                "`--files` names no file: give at least one (`--files a.rs b.rs`; after `--` for a name beginning with `-`)"
                    .to_string(),
            );
        }
        let selection = if args.files.is_some() {
            SelectionRequest::Files(files)
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
        Ok(RunRequest {
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
            push: None,
        })
    }
}

/// `phasegate run`.
pub fn run(ctx: &Context, args: &RunArgs, io: &mut Streams<'_>) -> ExitCode {
    match RunRequest::from_args(args) {
        Ok(request) => execute(ctx, &request, io),
        Err(message) => refused(ctx, args.format, args.output.clone(), message, io),
    }
}

/// The verdict of a run refused for its arguments (`message`), in the
/// `--format` report, which still says why the run stopped.
fn refused(
    ctx: &Context,
    format: ReportFormat,
    output: Option<PathBuf>,
    message: String,
    io: &mut Streams<'_>,
) -> ExitCode {
    let verdict = Verdict::stopped(Profile::default(), None, super::usage_error(message));
    let alone = super::Reports {
        format,
        output,
        extra: Vec::new(),
    };
    super::emit_stopped_reports(&verdict, &alone, ctx, io)
}

/// Runs the gate and returns the exit code.
pub fn execute(ctx: &Context, args: &RunRequest, io: &mut Streams<'_>) -> ExitCode {
    let reports = match super::Reports::parse(args.format, args.output.clone(), &args.reports) {
        Ok(reports) => reports,
        Err(message) => return refused(ctx, args.format, args.output.clone(), message, io),
    };
    // Once known, where an internal failure that stops the run is recorded,
    // the run's directory once made, and its phase once resolved.
    let mut state_dir = None;
    let mut run_dir = None;
    let mut phase = None;
    let mut repo = None;
    let mut known = Known {
        state: &mut state_dir,
        run: &mut run_dir,
        phase: &mut phase,
        repo: &mut repo,
    };
    match run_gate(ctx, args, &mut known, io) {
        Ok(verdict) => super::emit_reports(&verdict, &reports, ctx, io),
        Err(stop) => {
            let run_id = run_dir.and_then(RunDir::keep_if_used);
            // What names the phase before the configuration is read
            // (`--phase`, then PHASEGATE_PHASE), else the phase resolved.
            let phase = args
                .phase
                .clone()
                .or_else(|| ctx.phase.clone())
                .or(phase)
                .filter(|name| !name.is_empty());
            let at = StoppedAt {
                state_dir: state_dir.as_ref(),
                run_id,
                phase,
                repo: repo.as_ref(),
            };
            stopped(ctx, args, stop, at, &reports, io)
        }
    }
}

/// Why a run ended before its checks were decided on; the verdict it ends
/// with says so.
enum Stop {
    /// An error, under the profile known by then.
    Error(Profile, VerdictError),
    /// A phase, profile or workflow that cannot be resolved (a stage no
    /// phase defines, say): the handoff documents among the files are
    /// still validated and reported, so one run tells an agent everything
    /// it has to fix.
    Phase(Profile, VerdictError, Vec<serde_json::Value>),
    /// A configuration that does not load, read from `Source`: people are
    /// shown its errors in the file too.
    Config(Profile, config::ConfigError, Source),
}

impl Stop {
    fn usage(profile: Profile, message: impl Into<String>) -> Stop {
        Stop::Error(profile, super::usage_error(message.into()))
    }

    fn internal(profile: Profile, error: &dyn std::error::Error) -> Stop {
        Stop::Error(profile, super::internal_error(error))
    }
}

/// What a run had found out when it stopped, filled in as it goes.
struct Known<'a> {
    state: &'a mut Option<state::StateDir>,
    run: &'a mut Option<RunDir>,
    phase: &'a mut Option<String>,
    /// The repository, once a configuration that does not load stopped
    /// the run in one: it is recorded there.
    repo: &'a mut Option<crate::git::RepoInfo>,
}

/// Where a run stopped: its state directory once known; its id, when its
/// directory holds what its checks left (a run stopped before they
/// started has none); its phase once resolved, which the verdict and the
/// intervention recording the stop name.
struct StoppedAt<'a> {
    state_dir: Option<&'a state::StateDir>,
    run_id: Option<String>,
    phase: Option<String>,
    repo: Option<&'a crate::git::RepoInfo>,
}

/// The verdict and reports of a run that stopped; recorded when phasegate
/// itself failed and the state directory is known, or when its
/// configuration does not load in a repository.
fn stopped(
    ctx: &Context,
    args: &RunRequest,
    stop: Stop,
    at: StoppedAt<'_>,
    reports: &super::Reports,
    io: &mut Streams<'_>,
) -> ExitCode {
    let StoppedAt {
        state_dir,
        run_id,
        phase,
        repo,
    } = at;
    let config_stop = matches!(stop, Stop::Config(..));
    let mut handoffs = Vec::new();
    let (profile, error) = match stop {
        Stop::Error(profile, error) => (profile, error),
        Stop::Phase(profile, error, documents) => {
            handoffs = documents;
            (profile, error)
        }
        Stop::Config(profile, error, from) => {
            // People read the errors unless standard output carries the
            // JSON verdict (with `--output`, it carries the human report).
            if args.format != ReportFormat::Json || args.output.is_some() {
                report::errors::render_diagnostic(&error, io.err, ctx.color_for(ctx.stderr_tty));
                if let Some(note) = from.note() {
                    let _ = writeln!(io.err, "note: {note}");
                }
            }
            let mut located = super::config_error(&error);
            from.locate(&mut located);
            (profile, located)
        }
    };
    let mut verdict = Verdict::stopped(profile, phase, error);
    verdict.handoffs = handoffs;
    verdict.run_id = run_id;
    let internal = verdict.error.as_ref().is_some_and(|e| e.kind == "internal");
    if let (true, Some(repo)) = (config_stop, repo) {
        record_config_stop(ctx, args, repo, &mut verdict, io);
    } else if let (true, Some(state_dir)) = (internal, state_dir) {
        super::record::record_stopped(
            state_dir,
            &mut verdict,
            ctx.session.as_deref(),
            &mut *io.err,
        );
    }
    super::emit_stopped_reports(&verdict, reports, ctx, io)
}

/// Records a run that a configuration that does not load stopped, in
/// `repo`: a run directory of its own holding its verdict, a line of the
/// history and an intervention, so that an agent whose commit was refused
/// has something to read afterwards. Nothing here runs for a run whose
/// configuration loads.
fn record_config_stop(
    ctx: &Context,
    args: &RunRequest,
    repo: &crate::git::RepoInfo,
    verdict: &mut Verdict,
    io: &mut Streams<'_>,
) {
    let state_dir = state::state_dir(Some(repo), &repo.root, &ctx.temp_dir);
    let work_tree = repo.work_tree_key();
    let mut notes = state::Notes::default();
    let run_dir = match RunDir::create(&state_dir, SystemTime::now(), std::process::id()) {
        Ok(dir) => {
            dir.mark_work_tree(&work_tree);
            verdict.run_id = Some(dir.id.clone());
            Some(dir)
        }
        Err(e) => {
            let (cause, failed) = run_dir_refused(&mut notes, &state_dir, &e);
            notes.add(cause, format!("{failed}: the run is not in the history"));
            None
        }
    };
    let mut selection = requested_selection(ctx, args, &repo.root);
    selection.branch = streak_branch(args.pushed_ref.as_deref(), repo.branch().as_deref());
    let facts = super::record::RunFacts {
        session: ctx.session.as_deref(),
        work_tree,
        selection,
        pruning: None,
        notes_shown: false,
        notes,
        input: None,
    };
    let asked = super::record::Asked {
        profile: asked_profile(ctx, args).is_some(),
        workflow: args.workflow.as_deref(),
    };
    let pause = |step: &str| ctx.maybe_pause(step, &state_dir);
    super::record::record_config_stop(&state_dir, facts, &asked, verdict, &pause, &mut *io.err);
    if let Some(run_dir) = run_dir {
        if let Err(e) = run_dir.write_verdict(verdict) {
            let _ = writeln!(
                io.err,
                "warning: failed to record the verdict in `{}`: {e}",
                run_dir.path.display()
            );
        }
    }
}

/// What a run stopped by its configuration selected, or would have, as
/// the history keeps it, for `resume` to ask again: the staged files
/// (outside CI, the default), every tracked file, the files named
/// (relative to the root `root`, given relative to the current
/// directory), or a range. In CI the default is what CI names, found as
/// the run finds it, with no configuration (a pull request's range, or
/// every file when that range cannot be used); `unknown` when that
/// cannot be told (a range whose ends this clone lacks, say).
fn requested_selection(ctx: &Context, args: &RunRequest, root: &Path) -> state::SelectionRecord {
    if matches!(args.selection, SelectionRequest::Default) && ctx.ci {
        return match select::select_files(ctx, args, root, true, None) {
            Ok(selected) => selection_record(args, &selected.summary, &selected.files),
            Err(_) => state::SelectionRecord {
                mode: "unknown".to_string(),
                ..requested_record(args)
            },
        };
    }
    let mut record = requested_record(args);
    record.mode = match &args.selection {
        selection if selection.is_staged(ctx.ci) => "staged".to_string(),
        SelectionRequest::Default | SelectionRequest::Staged | SelectionRequest::All => {
            "all".to_string()
        }
        SelectionRequest::Files(files) => {
            let files: Vec<PathBuf> = files
                .iter()
                .map(|f| {
                    let full = ctx.cwd.join(f);
                    full.strip_prefix(root)
                        .map_or(full.clone(), Path::to_path_buf)
                })
                .collect();
            record.set_files(&files);
            "files".to_string()
        }
        SelectionRequest::Range { from, to } => {
            record.from = Some(from.clone());
            record.to = Some(to.clone());
            "range".to_string()
        }
        SelectionRequest::AllOf(commit) => {
            record.to = Some(commit.clone());
            "all".to_string()
        }
        SelectionRequest::Pushed { to, published } => {
            record.to = Some(to.clone());
            record.published.clone_from(published);
            "range".to_string()
        }
    };
    record
}

/// What the history keeps of how a run was asked for besides its files:
/// the ref a pre-push hook checks and its push, `--config-from-ref`, the
/// `--check`s.
fn requested_record(args: &RunRequest) -> state::SelectionRecord {
    state::SelectionRecord {
        pushed_ref: args.pushed_ref.clone(),
        push: args.push.clone(),
        config_from_ref: args.config_from_ref.clone(),
        checks: args.checks.clone(),
        ..state::SelectionRecord::default()
    }
}

/// A run, stage by stage, from its files to its recorded verdict; or why
/// it stopped. `known` gets the state directory once known, the run's
/// directory once made, and the phase once resolved.
fn run_gate(
    ctx: &Context,
    args: &RunRequest,
    known: &mut Known<'_>,
    io: &mut Streams<'_>,
) -> Result<Verdict, Stop> {
    let Start {
        ws,
        config,
        ref_has_config,
        selection,
        mode,
        found,
        mut notes,
        said,
    } = start(ctx, args, known)?;
    let root = &ws.root;

    // The handoff documents among the selected files, as the run checks
    // them (staged, or at the commit checked); their stage names the phase
    // when neither --phase nor PHASEGATE_PHASE does.
    let documents = handoffs::read_handoffs(root, &selection, &config, &Content::of(&mode))
        .map_err(|e| Stop::internal(config.gate.profile, &e))?;
    let committed = handoffs::committed(root, &documents, &config, &Content::of(&mode))
        .map_err(|e| Stop::internal(config.gate.profile, &e))?;
    let mut rules = handoffs::handoff_rules(&config);
    let first_reading = handoffs::read_all(&documents, &rules, &committed);
    let settings =
        resolve(ctx, args, &config, &handoffs::stages(&first_reading)).map_err(|error| {
            let reports = first_reading
                .iter()
                .map(|report| serde_json::to_value(report).unwrap_or_default())
                .collect();
            Stop::Phase(config.gate.profile, error, reports)
        })?;
    *known.phase = Some(settings.phase.clone());
    let snapshots = ctx
        .cache_home
        .as_deref()
        .map(|cache| state::snapshots_dir(cache, &ws.state_dir, root));
    // What the run says of its state: recording it extends these notes.
    let mut state_notes = state::Notes::default();
    let (run_dir, pruning) = create_run_dir(
        ctx,
        &ws.state_dir,
        snapshots.as_deref(),
        &config,
        &mut state_notes,
    )
    .map_err(|error| Stop::Error(settings.profile, error))?;
    let run_dir: &RunDir = known.run.insert(run_dir);
    run_dir.mark_work_tree(&ws.work_tree);

    let phase_specs: Vec<&config::CheckSpec> = config
        .checks_for(&settings.phase, settings.workflow.as_deref())
        .unwrap_or_default()
        .iter()
        .collect();
    // A gate taken from a ref that holds no configuration: what judges
    // the run instead is said in its notes and summary.
    let ref_without_config = args
        .config_from_ref
        .as_deref()
        .filter(|_| !ref_has_config)
        .map(|spec| configuration::ref_without_config(root, spec, mode.to.as_deref(), &config));
    if let Some(spec) = args.config_from_ref.as_deref().filter(|_| ref_has_config) {
        notes.extend(configuration::deleted_on_branch(root, spec, &mode));
    }
    if let Some(note) = &ref_without_config {
        notes.push(note.clone());
    } else if phase_specs.is_empty() {
        // Nothing to run because there is nothing to go by: say why.
        notes.extend(no_configuration(args, root, &config));
    }
    let specs = to_run(args, &phase_specs);
    let dirs = isolation::Dirs {
        root,
        state: &ws.state_dir,
        snapshots: snapshots.as_deref(),
        work_tree_state: &ws.work_tree_state,
        run: run_dir,
    };
    let place = isolation::Place::choose(&dirs, ws.in_repo, &mode, &config, &mut notes)
        .map_err(|error| Stop::Error(settings.profile, error))?;
    // A commit checked in a sparse checkout: the files it leaves out are
    // not there to check.
    let mut selection = selection;
    if place.in_work_tree() && mode.mode != "staged" {
        let absent = crate::git::take_out_sparse(root, &mut selection)
            .map_err(|e| Stop::internal(settings.profile, &e))?;
        if !absent.is_empty() {
            notes.push(format!(
                "{} selected file(s) are outside the sparse checkout and were left out (`git sparse-checkout add` brings their directories in), among them `{}`",
                absent.len(),
                absent[0].display()
            ));
        }
    }
    notes.extend(configuration_notes(
        ctx,
        &config,
        &settings.phase,
        &phase_specs,
        ref_without_config.is_some(),
    ));
    let (skip, asked_for) = gate::skips(&ctx.skip, &args.checks);
    notes.extend(asked_for);
    let (planned, in_venv) = plan_checks(
        ctx,
        root,
        place.check_root(root),
        &specs,
        &selection,
        &skip,
        run_dir,
    );
    notes.extend(in_venv);
    // Under `--config-from-ref`, the checks that run a file the branch
    // changed: the gate is the target's, what it runs is not.
    let unvouched = args.config_from_ref.as_deref().map(|spec| {
        let found = configuration::unvouched(
            root,
            spec,
            mode.to.as_deref(),
            &specs,
            &planned,
            ctx.clippy_conf_dir.as_deref(),
            &mut notes,
        );
        (spec, found)
    });
    let plans: Vec<runner::CheckPlan> = planned
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
    let json = args.format == ReportFormat::Json;
    let progress = (!json && ctx.stderr_tty).then_some(&mut *io.err);
    let ran = isolation::run_checks(ctx, &dirs, place, found, plans, jobs, progress, &mut notes)
        .map_err(|error| Stop::Error(settings.profile, error))?;

    let pinned: Vec<(String, String)> = runner::PINNED_ENV
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let mut checks = outcome::check_inputs(
        &config,
        &specs,
        planned,
        ran.outcomes,
        run_dir,
        &pinned,
        &mut notes,
    );
    if let Some(note) = outcome::mark_pre_existing(root, &mode, &mut checks) {
        notes.push(note);
    }
    let evidence = handoffs::Evidence {
        phase: &settings.phase,
        profile: settings.profile,
        checks: &checks,
        configured: &phase_specs,
        resumed: args.resume_of.as_ref(),
    };
    rules.failed_checks = evidence.failed_checks();
    rules.unverified = evidence.unverified(&config.handoff.claims);
    rules.checked_phase = Some(settings.phase.clone());
    let mut blocking = ran.blocking;
    if let (Some((spec, found)), Profile::Strict) = (&unvouched, settings.profile) {
        blocking.extend(found.iter().map(|one| one.finding(spec)));
    }
    let mut selection_record = selection_record(args, &mode, &selection);
    selection_record.branch = streak_branch(args.pushed_ref.as_deref(), ws.branch.as_deref());
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
        interrupted: ran.interrupted,
        handoffs: handoffs::read_all(&documents, &rules, &committed),
    });
    ctx.maybe_test_panic("decide");
    if let Some((spec, found)) = &unvouched {
        configuration::warn_unvouched(
            spec,
            verdict.profile,
            found,
            config.gate.summary,
            &mut verdict,
        );
    }
    if let Some(previous) = &args.resume_of {
        outcome::carry_over(previous, &phase_specs, &mut verdict);
    }
    // Not a finding, but what a reviewer of the summary alone must know:
    // the gate is not a `phasegate.toml` anyone wrote.
    verdict.summary.extend(ref_without_config);
    verdict.summary.extend(said);
    if args.config_from_ref.is_none() {
        outcome::show_config_lines(root, &mut verdict);
    }
    let facts = super::record::RunFacts {
        session: ctx.session.as_deref(),
        work_tree: ws.work_tree.clone(),
        selection: selection_record,
        pruning: Some(pruning),
        // The human report is on standard output, or beside the file that
        // `--output` writes.
        notes_shown: args.format == ReportFormat::Human || args.output.is_some(),
        notes: state_notes,
        input: judged_input(root, ws.in_repo, &verdict),
    };
    record(
        ctx,
        &ws.state_dir,
        &config,
        facts,
        run_dir,
        &mut verdict,
        io,
    );
    Ok(verdict)
}

/// Where a run works.
struct Workspace {
    /// The repository's work tree, or the current directory outside one.
    root: PathBuf,
    in_repo: bool,
    /// `.git/phasegate/` (shared by linked worktrees).
    state_dir: state::StateDir,
    /// Where unstaged changes are set aside: they belong to this work tree
    /// alone.
    work_tree_state: state::StateDir,
    /// Which work tree this is, as the history keeps it
    /// (`RepoInfo::work_tree_key`; `.` outside a repository).
    work_tree: String,
    /// The branch checked out (`RepoInfo::branch`): a streak of the same
    /// errors is counted on one branch.
    branch: Option<String>,
}

/// What a run starts from: where it works, the files it selected and the
/// configuration that judges them.
struct Start {
    ws: Workspace,
    config: Config,
    /// Whether the commit of `--config-from-ref` holds a `phasegate.toml`.
    ref_has_config: bool,
    /// Relative to the root.
    selection: Vec<PathBuf>,
    mode: SelectionSummary,
    found: select::Found,
    notes: Vec<String>,
    /// Notes the summary carries too (`Selected::said`).
    said: Vec<String>,
}

/// Finds the repository, reads the configuration, finishes a run that was
/// killed and selects the files; `known.state` is set as soon as the state
/// directory is known, for an internal failure to be recorded there, and
/// `known.repo` when a configuration that does not load stops the run.
fn start(ctx: &Context, args: &RunRequest, known: &mut Known<'_>) -> Result<Start, Stop> {
    let repo = match crate::git::discover(&ctx.cwd) {
        Ok(repo) => repo,
        Err(
            e @ (crate::git::GitError::Bare { .. } | crate::git::GitError::NamedRepository { .. }),
        ) => return Err(Stop::usage(Profile::default(), e.to_string())),
        Err(e) => return Err(Stop::internal(Profile::default(), &e)),
    };
    let in_repo = repo.is_some();
    let root = repo
        .as_ref()
        .map_or_else(|| ctx.cwd.clone(), |r| r.root.clone());
    if let Some(index) = &ctx.index_file {
        crate::git::use_index_file(index.clone());
    }
    // A staged selection is most of a run's start (it looks at every
    // tracked file): it begins now, on its own thread, while the
    // configuration is read.
    let mut early = (in_repo && args.selection.is_staged(ctx.ci))
        .then(|| EarlySelection::start(root.clone(), ctx.cpus));
    // A configuration that does not load is recorded in the repository.
    let mut config_stop = |stop: Stop| {
        if matches!(stop, Stop::Config(..)) {
            known.repo.clone_from(&repo);
        }
        stop
    };
    let loaded = configuration::load(ctx, args, &root, in_repo).map_err(&mut config_stop)?;
    let ref_has_config = loaded.ref_has_config;
    ctx.maybe_test_panic("config");

    let state_dir = state::state_dir(repo.as_ref(), &root, &ctx.temp_dir);
    *known.state = Some(state_dir.clone());
    let work_tree_state = repo.as_ref().map_or_else(
        || state_dir.clone(),
        |r| state_dir.under(r.work_tree_state()),
    );
    let work_tree = repo
        .as_ref()
        .map_or_else(|| ".".to_string(), crate::git::RepoInfo::work_tree_key);
    let mut notes = Vec::new();
    if in_repo {
        let profile = loaded.config.gate.profile;
        if let Some(note) = recover_killed(ctx, args, &root, &state_dir, &work_tree_state, profile)?
        {
            // The early selection may have looked at the work tree before
            // those files came back.
            early = None;
            notes.push(note);
        }
    }

    let Selected {
        files: selection,
        summary: mode,
        notes: selection_notes,
        said,
        found,
    } = select::select_files(ctx, args, &root, in_repo, early)
        .map_err(|e| Stop::Error(loaded.config.gate.profile, e))?;
    notes.extend(selection_notes);
    let config = loaded
        .checked(ctx, args, &root, &mode, found.unstaged.as_ref(), &mut notes)
        .map_err(config_stop)?;
    Ok(Start {
        ws: Workspace {
            root,
            in_repo,
            state_dir,
            work_tree_state,
            work_tree,
            branch: repo.as_ref().and_then(crate::git::RepoInfo::branch),
        },
        config,
        ref_has_config,
        selection,
        mode,
        found,
        notes,
        said,
    })
}

/// Records the verdict in the state's history and interventions (which may
/// change it) and a copy in the run's directory.
fn record(
    ctx: &Context,
    state_dir: &state::StateDir,
    config: &Config,
    facts: super::record::RunFacts<'_>,
    run_dir: &RunDir,
    verdict: &mut Verdict,
    io: &mut Streams<'_>,
) {
    let pause = |step: &str| ctx.maybe_pause(step, state_dir);
    super::record::record_run(state_dir, config, facts, verdict, &pause, &mut *io.err);
    if let Err(e) = run_dir.write_verdict(verdict) {
        // The verdict on stdout is still the answer; the record is a copy.
        let _ = writeln!(
            io.err,
            "warning: failed to record the verdict in `{}`: {e}",
            run_dir.path.display()
        );
    }
}

/// The checks of the phase this run runs: those `--check` names (all when
/// none is named); under `resume`, what did not pass, warn or get skipped,
/// and what the configuration added or changed since (the rest is carried
/// over).
fn to_run<'c>(
    args: &RunRequest,
    phase_specs: &[&'c config::CheckSpec],
) -> Vec<&'c config::CheckSpec> {
    let again: Option<Vec<&str>> = args
        .resume_of
        .as_ref()
        .map(|previous| super::resume::to_run_again(previous, phase_specs));
    phase_specs
        .iter()
        .copied()
        .filter(|c| match &again {
            Some(again) => again.contains(&c.name.as_str()),
            None => args.checks.is_empty() || args.checks.contains(&c.name),
        })
        .collect()
}

/// Finishes a run that was killed while it held unstaged changes aside,
/// whatever this run selects: what it says of it, when there was one.
fn recover_killed(
    ctx: &Context,
    args: &RunRequest,
    root: &Path,
    state_dir: &Path,
    work_tree_state: &state::StateDir,
    profile: Profile,
) -> Result<Option<String>, Stop> {
    // A restore under way always finishes; an interrupt during it keeps
    // the checks from starting.
    let _interrupts = runner::InterruptGuard::install();
    let pause = |step: &str| ctx.maybe_pause(step, state_dir);
    let recovered = crate::git::recover(root, work_tree_state, &pause)
        .map_err(|e| Stop::internal(profile, &e))?;
    if recovered.is_empty() {
        return Ok(None);
    }
    // git built a temporary index (`commit -a`, `commit PATH`) from the
    // work tree as the killed run left it, without those changes: this
    // commit would miss them.
    if args.selection.is_staged(ctx.ci) && crate::git::index_is_temporary() {
        let error = super::internal_message(format!(
            "{}; this commit was prepared from the files as the killed run had left them, without those changes: run the commit again",
            recovered.describe()
        ));
        return Err(Stop::Error(profile, error));
    }
    Ok(Some(recovered.describe()))
}

/// This run's directory, and the pruning of old ones while its checks run.
/// A state directory that cannot be written does not decide the verdict:
/// the logs go to the temporary directory instead (noted: with the state
/// directory's note when it is not a directory at all), one per user
/// (another user's would not be writable), only theirs to read, pruned as
/// the state directory is. That directory has a name anyone can know, in a
/// directory anyone can write: one that is not this user's own private
/// directory (a link another user planted, say) is never written in nor
/// pruned; the run's logs then go to a new directory of its own.
fn create_run_dir(
    ctx: &Context,
    state_dir: &state::StateDir,
    snapshots: Option<&Path>,
    config: &Config,
    notes: &mut state::Notes,
) -> Result<(RunDir, state::Pruning), VerdictError> {
    let keep = config.gate.keep_runs;
    let wait = super::record::LOCK_WAIT;
    let e = match RunDir::create(state_dir, SystemTime::now(), std::process::id()) {
        Ok(dir) => return Ok((dir, state::Pruning::start(state_dir, snapshots, keep, wait))),
        Err(e) => e,
    };
    let uid = rustix::process::getuid().as_raw();
    let shared = ctx.temp_dir.join(format!("phasegate-runs-{uid}"));
    let (fallback, refused) = match private_dir(&shared, uid) {
        Ok(()) => (shared.clone(), None),
        Err(why) => match new_private_dir(&ctx.temp_dir, uid) {
            Ok(fresh) => (fresh, Some(why)),
            Err(e2) => {
                return Err(super::internal_message(format!(
                    "failed to create a run directory under `{}` ({e}); `{}` is not safe to keep logs in ({why}), and a new directory beside it could not be made ({e2})",
                    state_dir.display(),
                    shared.display()
                )))
            }
        },
    };
    // This user's own directory: the umask alone says who reads it.
    let fallback = state::StateDir::new(fallback, state::Sharing::Umask);
    match RunDir::create(&fallback, SystemTime::now(), std::process::id()) {
        Ok(dir) => {
            let (cause, failed) = run_dir_refused(notes, state_dir, &e);
            notes.add(cause, match refused {
                None => format!("{failed}: the logs are under `{}`", dir.path.display()),
                Some(why) => format!(
                    "{failed}: `{}` was left alone, as it is not safe to keep logs in ({why}): the logs are under `{}`, a new directory for this run alone; remove `{}` to have the logs kept there again",
                    shared.display(),
                    dir.path.display(),
                    shared.display()
                ),
            });
            Ok((dir, state::Pruning::start(&fallback, snapshots, keep, wait)))
        }
        Err(e2) => Err(super::internal_message(format!(
            "failed to create a run directory under `{}` ({e}) or `{}` ({e2})",
            state_dir.display(),
            fallback.display()
        ))),
    }
}

/// Why no run directory could be made under `state_dir` (`e`), as a note
/// says it: the state directory itself unusable (a file) is the cause, said
/// once, else the directory's own failure.
fn run_dir_refused(
    notes: &mut state::Notes,
    state_dir: &state::StateDir,
    e: &std::io::Error,
) -> (state::Cause, String) {
    if state::state_dir_unusable(notes, state_dir) {
        (
            state::Cause::StateDir,
            "failed to create a run directory there".to_string(),
        )
    } else {
        let failed = format!(
            "failed to create a run directory under `{}` ({e})",
            state_dir.display()
        );
        (state::Cause::RunDir, failed)
    }
}

/// Makes `path` this user's private directory, or says why it is not one
/// and will not be used: a symbolic link (never followed), not a
/// directory, another user's, or one others can write in.
fn private_dir(path: &Path, uid: u32) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("failed to create it: {e}")),
    }
    // mkdir(2) never follows a link in the last place; lstat(2) sees it.
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("failed to inspect it: {e}"))?;
    if meta.file_type().is_symlink() {
        Err("it is a symbolic link".to_string())
    } else if !meta.is_dir() {
        Err("it is not a directory".to_string())
    } else if meta.uid() != uid {
        Err(format!(
            "it belongs to user {}, not to this user ({uid})",
            meta.uid()
        ))
    } else if meta.mode() & 0o022 != 0 {
        Err(format!(
            "others can write in it (mode {:o})",
            meta.mode() & 0o7777
        ))
    } else {
        Ok(())
    }
}

/// A new private directory under `temp_dir`, made by this run (mkdir(2)
/// fails on anything already there, a link included), with a name nobody
/// can have made ready for it.
fn new_private_dir(temp_dir: &Path, uid: u32) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let mut last = String::new();
    for attempt in 0..16u32 {
        let nanos = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = temp_dir.join(format!(
            "phasegate-runs-{uid}-{}-{nanos:09}-{attempt}",
            std::process::id()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return private_dir(&path, uid).map(|()| path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                last = format!("`{}` is there already", path.display());
            }
            Err(e) => return Err(format!("failed to create `{}`: {e}", path.display())),
        }
    }
    Err(last)
}

/// Why a phase has no checks when there is no configuration and no
/// project phasegate knows (a `--config-from-ref` without one says so
/// itself: `configuration::ref_without_config`).
fn no_configuration(args: &RunRequest, root: &Path, config: &Config) -> Option<String> {
    // Defaults found projects (at the root or below it): this phase just
    // has none of their checks.
    if args.config_from_ref.is_some()
        || root.join(config::CONFIG_FILE).exists()
        || matches!(
            &config.origin,
            config::ConfigOrigin::Embedded { language: Some(_) }
        )
        || config::detect_language(root).is_some()
    {
        return None;
    }
    Some(format!(
        "there is no `{}` and no project phasegate knows (Cargo.toml, go.mod, package.json, pyproject.toml, setup.cfg) at the root or in the directories below it: `phasegate init` writes a configuration to start from",
        config::CONFIG_FILE
    ))
}

/// What the verdict says of the configuration as this machine runs it:
/// the embedded defaults, a local override, and `PHASEGATE_SKIP` names
/// that are no check of the phase.
fn configuration_notes(
    ctx: &Context,
    config: &Config,
    phase: &str,
    phase_specs: &[&config::CheckSpec],
    from_ref_without_config: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    // Checks nobody wrote down: the verdict says where they come from and
    // how to change them (a missing tool's advice names `on_missing`);
    // taken from a ref, its own note says so (`ref_without_config`).
    if let (
        config::ConfigOrigin::Embedded {
            language: Some(language),
        },
        false,
    ) = (&config.origin, from_ref_without_config)
    {
        notes.push(format!(
            "no `{}` judged this run: the checks are phasegate's defaults for {language}; `phasegate init` writes them into one, to change them",
            config::CONFIG_FILE
        ));
    }
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
            "PHASEGATE_SKIP names no check of phase `{phase}`: {} (skipped nothing)",
            unknown_skips.join(", ")
        ));
    }
    notes
}

/// Each check's plan in `check_root`, or why it does not run. Checks run
/// without git's repository variables; only a repository they could not
/// find from the work tree is named for them. The index git named (its
/// temporary one, for `git commit -a`; the checkout's own in a temporary
/// checkout) is passed under a name of phasegate's, for a check that asks
/// git about what is staged:
/// `GIT_INDEX_FILE=$PHASEGATE_GIT_INDEX_FILE git diff --cached`. These go
/// first, so a check's own `env` still wins.
///
/// Also the notes of the checks that run in a project's own Python
/// virtual environment, one for each environment.
fn plan_checks(
    ctx: &Context,
    root: &Path,
    check_root: &Path,
    specs: &[&config::CheckSpec],
    selection: &[PathBuf],
    skip: &[String],
    run_dir: &RunDir,
) -> (
    Vec<Result<runner::CheckPlan, gate::SkipReason>>,
    Vec<String>,
) {
    // The checks run in a project's own Python virtual environment, each
    // environment with the checks it serves, for the notes.
    let mut in_venv: Vec<(PathBuf, Vec<String>)> = Vec::new();
    let mut git_env = crate::git::repository_env_for_checks(root, check_root);
    if let Some(index) = &ctx.index_file {
        // A temporary checkout holds what that index holds, in an index of
        // its own: the one that goes with the checkout's files.
        let index = if check_root == root {
            index.clone()
        } else {
            check_root.join(".git").join("index")
        };
        git_env.push((
            "PHASEGATE_GIT_INDEX_FILE".to_string(),
            index.into_os_string(),
        ));
    }
    let planned = specs
        .iter()
        .map(|spec| {
            let mut plan = gate::plan_check(
                spec,
                selection,
                skip,
                check_root,
                run_dir,
                ctx.path.as_deref(),
                ctx.go_work.as_deref(),
            )?;
            // An activated environment is the user's choice; with none,
            // the project's own, as a terminal where it is active would.
            if let Some(venv) = runner::enter_venv(&mut plan, ctx.virtual_env.as_deref()) {
                match in_venv.iter_mut().find(|(v, _)| *v == venv) {
                    Some((_, names)) => names.push(plan.name.clone()),
                    None => in_venv.push((venv, vec![plan.name.clone()])),
                }
            }
            plan.env.splice(0..0, git_env.iter().cloned());
            if let Some(limit) = ctx.test_log_limit {
                plan.log_limit = limit;
            }
            Ok(plan)
        })
        .collect();
    let notes = in_venv.into_iter().map(|(venv, checks)| {
        let shown = venv.strip_prefix(check_root).unwrap_or(&venv);
        let names: Vec<String> = checks.iter().map(|c| format!("`{c}`")).collect();
        format!(
            "{} ran in the project's Python virtual environment `{}`, its `{}` first on PATH as activating it does (none was active)",
            if names.len() == 1 {
                format!("check {}", names[0])
            } else {
                format!("checks {}", names.join(", "))
            },
            shown.display(),
            shown.join("bin").display(),
        )
    });
    (planned, notes.collect())
}

/// How the run chose its files, as the state's history keeps it.
fn selection_record(
    args: &RunRequest,
    mode: &SelectionSummary,
    selection: &[PathBuf],
) -> state::SelectionRecord {
    let mut record = state::SelectionRecord {
        mode: mode.mode.to_string(),
        from: mode.from.clone(),
        to: mode.to.clone(),
        published: mode.published.clone(),
        ..requested_record(args)
    };
    if mode.mode == "files" {
        record.set_files(selection);
    }
    record
}

/// What the run's checks judged, as the history compares it with the run
/// before (`RunRecord::input`). Worked out only for a run that failed
/// with errors, the only kind a streak of the same errors is made of:
/// a run that passes pays nothing for it. None where it cannot be told
/// exactly, and the run then counts as an attempt.
fn judged_input(root: &Path, in_repo: bool, verdict: &Verdict) -> Option<String> {
    if !in_repo
        || !matches!(verdict.status, Status::Failed | Status::Incomplete)
        || gate::error_set(verdict).is_empty()
    {
        return None;
    }
    // A check that changed the index, the work tree or `HEAD` left other
    // input than the one it judged.
    let changed = [OwnCode::FilesModified, OwnCode::HeadMoved, OwnCode::Stashed];
    if verdict.diagnostics.iter().any(|d| {
        d.tool == "phasegate"
            && changed
                .iter()
                .any(|c| d.code.as_deref() == Some(c.as_str()))
    }) {
        return None;
    }
    let selection = verdict.selection.as_ref()?;
    match selection.mode {
        // Protection hides unstaged changes: the checks judge the index.
        "staged" => crate::git::staged_digest(root).ok(),
        "range" => Some(format!(
            "range:{}..{} {}",
            selection.from_commit.as_deref().unwrap_or_default(),
            selection.to_commit.as_deref()?,
            selection.published.join(" ")
        )),
        // `--all-files` and `--files` judge the work tree as it is, which
        // has no digest short of reading every selected file: each such
        // run counts as an attempt.
        _ => None,
    }
}

/// The branch a run's streak of the same errors is counted on: the one
/// checked out, except in a pre-push run of a branch, which checks that
/// branch's commits whatever is checked out (`git push origin feature`
/// from `main`): its failures are `feature`'s, and counted on `main` they
/// would join the streak of another piece of work. A pushed tag, commit
/// or `HEAD` names no branch, and is the checked-out one's work. Of the
/// refs one run checks (`refs/heads/a, refs/tags/v1`), the first branch.
fn streak_branch(pushed_ref: Option<&str>, checked_out: Option<&str>) -> Option<String> {
    pushed_ref
        .into_iter()
        .flat_map(|names| names.split(", "))
        .find(|name| name.starts_with("refs/heads/"))
        .or(checked_out)
        .map(str::to_string)
}

/// The phase, profile and workflow of this run, checked against the config.
struct Settings {
    phase: String,
    profile: Profile,
    workflow: Option<String>,
}

/// The phase (from `--phase`, `PHASEGATE_PHASE`, the handoff documents'
/// `stage`, or the default), the profile and the workflow, each checked
/// against the configuration; an error says what is wrong and what named
/// it.
fn resolve(
    ctx: &Context,
    args: &RunRequest,
    config: &Config,
    stages: &[handoffs::Stage],
) -> Result<Settings, VerdictError> {
    let usage = super::usage_error;
    let profile = match asked_profile(ctx, args) {
        Some(Ok(profile)) => profile,
        Some(Err(message)) => return Err(usage(message)),
        None => config.gate.profile,
    };
    let workflow = args
        .workflow
        .clone()
        .or_else(|| config.gate.workflow.clone());
    if let Some(name) = &workflow {
        if !config.workflows.contains_key(name) {
            return Err(usage(unknown("workflow", name, config.workflows.keys())));
        }
    }
    // The documents' stage, when neither --phase nor PHASEGATE_PHASE names
    // the phase: all of them must say the same.
    let named = args.phase.is_some() || ctx.phase.is_some();
    if let (false, [first, rest @ ..]) = (named, stages) {
        if let Some(other) = rest.iter().find(|s| s.name != first.name) {
            let mut error = usage(format!(
                "the handoff documents disagree on the stage: `{}` says `stage: {}`, `{}` says `stage: {}`; make them agree, or name the phase with `--phase {}` (or PHASEGATE_PHASE)",
                first.place(),
                first.name,
                other.place(),
                other.name,
                first.name
            ));
            let help = "make the documents' stages agree, or name the phase with `--phase`";
            error.problems = [(first, other), (other, first)]
                .iter()
                .map(|(this, that)| {
                    let message = format!(
                        "`stage: {}` disagrees with `stage: {}` of `{}`",
                        this.name,
                        that.name,
                        that.place()
                    );
                    this.problem(message, help)
                })
                .collect();
            return Err(error);
        }
    }
    // The phase, and what named it, for an error that says where to look.
    let (phase, named_by) = if let Some(phase) = &args.phase {
        (phase.clone(), PhaseSource::Flag)
    } else if let Some(phase) = &ctx.phase {
        (phase.clone(), PhaseSource::Environment)
    } else if let Some(first) = stages.first() {
        (first.name.clone(), PhaseSource::Stage(first))
    } else {
        (config.gate.default_phase.clone(), PhaseSource::Default)
    };
    let Some(checks) = config.checks_for(&phase, workflow.as_deref()) else {
        let mut error = usage(undefined_phase(config, &phase, &named_by));
        if let PhaseSource::Stage(stage) = named_by {
            let message = format!(
                "`stage: {phase}` names a phase `{}` does not define",
                config::CONFIG_FILE
            );
            let help = format!(
                "add `[phases.{phase}]` to `{}`, or pass `--phase`",
                config::CONFIG_FILE
            );
            error.problems = vec![stage.problem(message, &help)];
        }
        return Err(error);
    };
    for name in &args.checks {
        if !checks.iter().any(|c| &c.name == name) {
            return Err(usage(unknown_check(
                config,
                &phase,
                workflow.as_deref(),
                args.workflow.is_some(),
                name,
                checks,
            )));
        }
    }
    Ok(Settings {
        phase,
        profile,
        workflow,
    })
}

/// What named a run's phase.
enum PhaseSource<'a> {
    Flag,
    Environment,
    /// The `stage` of a handoff document among the selected files.
    Stage(&'a handoffs::Stage),
    Default,
}

/// The error for a phase the configuration does not define: where the
/// name came from and the ways out.
fn undefined_phase(config: &Config, phase: &str, named_by: &PhaseSource<'_>) -> String {
    let message = unknown("phase", phase, config.phases.keys());
    match named_by {
        PhaseSource::Flag | PhaseSource::Default => message,
        PhaseSource::Environment => format!("{message} (named by PHASEGATE_PHASE)"),
        // A stage is one of the four every document may name: the
        // configuration, not the document, lacks the phase, and the
        // document is not judged by another phase's checks unasked.
        PhaseSource::Stage(stage) => {
            let defined: Vec<String> = config.phases.keys().map(|k| format!("`{k}`")).collect();
            let has = if defined.is_empty() {
                "defines no phase".to_string()
            } else {
                format!("defines only {}", defined.join(", "))
            };
            let instead = if config.phases.contains_key(&config.gate.default_phase) {
                config.gate.default_phase.as_str()
            } else {
                config.phases.keys().next().map_or("PHASE", String::as_str)
            };
            format!(
                "`{}` says `stage: {phase}`, but `{}` {has}: add a `[phases.{phase}]` table to `{}` (`checks = []` when that phase has no checks), or name the phase to check it under with `--phase {instead}` (or PHASEGATE_PHASE)",
                stage.place(),
                config::CONFIG_FILE,
                config::CONFIG_FILE
            )
        }
    }
}

/// The error for a `--check` that is no check of the phase: the phases
/// that do have it, and how to run it there; or that the workflow leaves
/// it out (`chosen_workflow`: named by `--workflow`, not the
/// configuration).
fn unknown_check(
    config: &Config,
    phase: &str,
    workflow: Option<&str>,
    chosen_workflow: bool,
    name: &str,
    checks: &[config::CheckSpec],
) -> String {
    let has = |specs: &[config::CheckSpec]| specs.iter().any(|c| c.name == name);
    let message = format!("check `{name}` is not in phase `{phase}`");
    if let Some(flow) = workflow {
        let base = config
            .phases
            .get(phase)
            .map_or(&[][..], |p| p.checks.as_slice());
        if has(base) {
            let way_out = if chosen_workflow {
                format!("run it without `--workflow {flow}`")
            } else {
                format!(
                    "`workflow` under [gate] in `{}` chooses that workflow; `--workflow` names another",
                    config::CONFIG_FILE
                )
            };
            return format!(
                "{message} under workflow `{flow}`, which replaces that phase's checks and leaves it out: {way_out}"
            );
        }
    }
    let elsewhere: Vec<&String> = config
        .phases
        .keys()
        .filter(|other| other.as_str() != phase)
        .filter(|other| config.checks_for(other, workflow).is_some_and(has))
        .collect();
    match elsewhere.as_slice() {
        [] => unknown(
            &format!("check in phase `{phase}`:"),
            name,
            checks.iter().map(|c| &c.name),
        ),
        [other] => format!(
            "{message} but in phase `{other}`: run it there with `--phase {other} --check {name}`"
        ),
        many => {
            let list: Vec<String> = many.iter().map(|p| format!("`{p}`")).collect();
            format!(
                "{message} but in phases {}: run it in one of them with `--phase {} --check {name}`",
                list.join(", "),
                many[0]
            )
        }
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
