//! `phasegate resume`: run again only the checks the last run left failed
//! or incomplete (and those the configuration added or changed since),
//! with its phase, workflow and files and its profile (unless another is
//! asked for now, or was the configuration's and changed), and carry its passes,
//! warnings and skips into the new verdict. After a run that was killed
//! before its verdict, or over a history that cannot be read, nothing is
//! carried over: what the checks last saw is not known.

use std::path::PathBuf;

use crate::cli::{Format, ResumeArgs};
use crate::config::CheckSpec;
use crate::context::Context;
use crate::exit::ExitCode;
use crate::gate::{Next, Status, Verdict};
use crate::state::{RunRecord, SelectionRecord};

use super::run::{execute, RunRequest, SelectionRequest};
use super::Streams;

pub fn run(ctx: &Context, args: &ResumeArgs, io: &mut Streams<'_>) -> ExitCode {
    let json = args.format == Format::Json;
    // Under `--format json` a resume that cannot start still answers with
    // one verdict on stdout, as `run` does.
    let stop = |io: &mut Streams<'_>, error: crate::gate::VerdictError| {
        let verdict = crate::gate::Verdict::stopped(crate::config::Profile::default(), None, error);
        super::emit_stopped(&verdict, json, ctx, io)
    };
    // Said before anything is read: a resume with nothing left to do
    // would otherwise let a mistyped profile pass unnoticed.
    if let Some(name) = args
        .profile
        .as_deref()
        .filter(|name| crate::config::Profile::parse(name).is_none())
    {
        return stop(
            io,
            super::usage_error(format!(
                "unknown profile `{name}` (from --profile): expected one of strict, auto, fast"
            )),
        );
    }
    let runs = match super::state::read_runs(ctx) {
        Ok(runs) => runs,
        // No run of this version records anything while that history
        // stands, so resuming again and again would go round forever:
        // a person decides which phasegate keeps it.
        Err(unread) if unread.other_version => {
            let mut verdict = Verdict::stopped(
                crate::config::Profile::default(),
                None,
                super::internal_message(unread.message),
            );
            verdict.status = Status::Blocked;
            verdict.next = Next::Escalate;
            return super::emit_stopped(&verdict, json, ctx, io);
        }
        // Refusing would answer `resume` again, and a resume repairs
        // nothing: the agent told to resume would go round forever. What
        // the last run left is unknown, so everything runs, on every
        // file; the run moves the history aside (or says why it cannot)
        // and begins a new one, which the next resume reads.
        Err(unread) => {
            let _ = writeln!(
                io.err,
                "warning: {}; what the last run left cannot be known: every check runs again, on every file",
                unread.message
            );
            let request = RunRequest {
                phase: None,
                profile: args.profile.clone(),
                workflow: None,
                checks: Vec::new(),
                selection: SelectionRequest::All,
                format: report_format(args),
                output: None,
                reports: Vec::new(),
                jobs: args.jobs,
                config_from_ref: None,
                resume_of: None,
                pushed_ref: None,
                push: None,
            };
            return execute(ctx, &request, io);
        }
    };
    // Linked worktrees share the history; what another work tree's run
    // left passed says nothing of this one's files.
    let here = super::state::work_tree_for(ctx);
    let Some(last) = runs.iter().rev().find(|r| r.in_work_tree(&here)) else {
        let message = if runs.is_empty() {
            "no run recorded yet: nothing to resume; `phasegate run` first".to_string()
        } else {
            format!(
                "no run recorded yet in this work tree ({} run(s) were recorded in other work trees of the repository, which share the history): nothing to resume; `phasegate run` first",
                runs.len()
            )
        };
        return stop(io, super::usage_error(message));
    };
    // A pre-push hook checks each pushed ref in a run of its own: the
    // push was refused for any of them, not only for the last one checked.
    if let Some(push) = last.selection.push.as_deref() {
        let of_push: Vec<&RunRecord> = runs
            .iter()
            .filter(|r| r.in_work_tree(&here) && r.selection.push.as_deref() == Some(push))
            .collect();
        // And for the refs it never reached, a Ctrl-C having stopped it
        // before their runs began: they have no run of their own.
        let unreached = unreached_of(ctx, push, &here, io);
        if of_push.len() > 1 || !unreached.is_empty() {
            let push = Push {
                id: push,
                runs: &of_push,
                unreached: &unreached,
            };
            return resume_push(ctx, args, &push, &here, io);
        }
    }
    match again(ctx, args, last, &here, io) {
        Again::Stop(message) => stop(io, super::usage_error(message)),
        Again::Done => nothing_to_resume(ctx, last, json, io),
        Again::Run(request) => execute(ctx, &request, io),
    }
}

/// What a resume of one run does.
enum Again {
    /// Nothing of it can run again, for the reason given.
    Stop(String),
    /// It left nothing failed or incomplete (as carried over).
    Done,
    /// The run that takes it up again.
    Run(Box<RunRequest>),
}

/// What resuming `last`, a run of the work tree `here`, asks for.
fn again(
    ctx: &Context,
    args: &ResumeArgs,
    last: &RunRecord,
    here: &str,
    io: &mut Streams<'_>,
) -> Again {
    if let Some(stop) = last.stopped.as_ref().filter(|s| s.is_config()) {
        return after_config_stop(ctx, args, last, stop, io);
    }
    // A run killed after `last` (SIGKILL, the machine going down) left
    // no verdict and no record: the passes of `last` say nothing of what
    // it was checking since, so nothing is carried over.
    let killed =
        crate::state::unfinished_since(&super::state::state_dir_for(ctx), &last.run_id, here);
    let last = &if killed.is_empty() {
        last.clone()
    } else {
        let _ = writeln!(
            io.err,
            "warning: {} ended without a verdict after run {} (killed before it finished): every check of phase `{}` runs again, none is carried over",
            named_runs(&killed),
            last.run_id,
            last.phase.as_deref().unwrap_or_default()
        );
        RunRecord {
            checks: Vec::new(),
            ..last.clone()
        }
    };
    let config = config_now(ctx, last);
    if let Some(message) = config.as_ref().and_then(|config| phase_gone(config, last)) {
        return Again::Stop(message);
    }
    let (profile, named) = profile_for(ctx, args, last, config.as_ref());
    // Under another profile a warning may block and a skip (a tool fast
    // let go missing) may not be one: only the passes still stand.
    let last = &match named {
        Some((name, by))
            if name != last.profile && crate::config::Profile::parse(&name).is_some() =>
        {
            let _ = writeln!(
                io.err,
                "note: run {} ran under profile `{}`; resumed under `{name}` ({by}): its passes are carried over, its warnings and skips are checked again",
                last.run_id, last.profile
            );
            RunRecord {
                checks: last
                    .checks
                    .iter()
                    .filter(|c| c.status == "passed")
                    .cloned()
                    .collect(),
                ..last.clone()
            }
        }
        _ => last.clone(),
    };
    let unfinished = !killed.is_empty()
        || last.checks.iter().any(|c| !carries(c))
        || reconfigured(config.as_ref(), last);
    // A run that did not pass with no check to blame (an invalid or
    // blocked handoff, a history that could not be read) is run again too:
    // its handoffs are validated again, its passes carried over.
    if !unfinished && matches!(last.status.as_str(), "passed" | "warned") {
        return Again::Done;
    }
    let selection = selection_of(ctx, last, io);
    let request = RunRequest {
        // A run of no phase is resolved again, as it would have been.
        phase: last.phase.clone(),
        profile,
        workflow: last.workflow.clone(),
        // Which checks run again is worked out against the configuration
        // as it is now (`to_run_again`), among those `--check` asked for
        // (kept, so that the next resume stays among them too): one it
        // no longer has cannot be asked for again.
        checks: last
            .selection
            .checks
            .iter()
            .filter(|name| {
                config.as_ref().is_none_or(|config| {
                    config
                        .checks_for(
                            last.phase.as_deref().unwrap_or_default(),
                            last.workflow.as_deref(),
                        )
                        .unwrap_or_default()
                        .iter()
                        .any(|spec| spec.name == **name)
                })
            })
            .cloned()
            .collect(),
        selection,
        format: report_format(args),
        output: None,
        reports: Vec::new(),
        jobs: args.jobs,
        // A gate the branch cannot weaken stays so when resumed.
        config_from_ref: last.selection.config_from_ref.clone(),
        resume_of: Some(last.clone()),
        pushed_ref: last.selection.pushed_ref.clone(),
        // A resume is an attempt of its own, not one more ref of the push.
        push: None,
    };
    Again::Run(Box::new(request))
}

/// What resuming `last` asks for, a run its configuration stopped before
/// any check ran: nothing of it is carried over, as nothing ran. While
/// the configuration still does not load there is nothing to run again,
/// and the answer says where to fix it; once it loads, the run is made
/// again as it was asked (its phase only when one was named, its files,
/// its `--check`s), every check of the phase run.
fn after_config_stop(
    ctx: &Context,
    args: &ResumeArgs,
    last: &RunRecord,
    stop: &crate::state::StopRecord,
    io: &mut Streams<'_>,
) -> Again {
    if config_now(ctx, last).is_none() {
        return Again::Stop(format!(
            "run {} stopped on an invalid configuration and checked nothing, so there is nothing to re-run: {} ({}); fix the file, then run `phasegate resume` again (or `phasegate run`, or commit again)",
            last.run_id,
            stop.headline(),
            stop.message
        ));
    }
    let _ = writeln!(
        io.err,
        "note: run {} stopped on an invalid configuration ({}), which loads now: every check of the phase runs",
        last.run_id,
        stop.headline()
    );
    let profile = args
        .profile
        .clone()
        .or_else(|| (!last.profile_configured).then(|| last.profile.clone()));
    Again::Run(Box::new(RunRequest {
        phase: last.phase.clone(),
        profile,
        workflow: last.workflow.clone(),
        checks: last.selection.checks.clone(),
        selection: selection_of(ctx, last, io),
        format: report_format(args),
        output: None,
        reports: Vec::new(),
        jobs: args.jobs,
        config_from_ref: last.selection.config_from_ref.clone(),
        resume_of: None,
        pushed_ref: last.selection.pushed_ref.clone(),
        push: None,
    }))
}

/// What a push left to resume.
struct Push<'a> {
    /// Its id (`hook::push_id`).
    id: &'a str,
    /// The runs it made, oldest first.
    runs: &'a [&'a RunRecord],
    /// The refs it did not reach (see `state::Unreached`).
    unreached: &'a [SelectionRecord],
}

/// The refs the push `push`, made from the work tree `here`, did not
/// reach; none when it reached them all. A record that cannot be read is
/// said, and the refs it named are known only by pushing again.
fn unreached_of(
    ctx: &Context,
    push: &str,
    here: &str,
    io: &mut Streams<'_>,
) -> Vec<SelectionRecord> {
    match crate::state::unreached(&super::state::state_dir_for(ctx), push) {
        Ok(Some(unreached)) if unreached.work_tree == here => unreached.refs,
        Ok(_) => Vec::new(),
        Err(e) => {
            let _ = writeln!(
                io.err,
                "warning: {e}: the refs the push did not reach are not checked; push again to check them"
            );
            Vec::new()
        }
    }
}

/// Resumes the runs of one push (`push.runs`, oldest first) and checks
/// the refs it did not reach: each run that did not pass runs again, as
/// one attempt of its own (its runs share a push id, so that the next
/// resume takes them up together, and the history counts them once), and
/// each ref not reached is checked as the hook would have. The answer is
/// the gravest; under `--format json` stdout carries one verdict, that
/// run's, and the others are named on stderr.
fn resume_push(
    ctx: &Context,
    args: &ResumeArgs,
    push: &Push<'_>,
    here: &str,
    io: &mut Streams<'_>,
) -> ExitCode {
    let json = args.format == Format::Json;
    let of_push = push.runs;
    let resumed = push.id;
    let unreached = push.unreached;
    let push = super::hook::push_id(std::time::SystemTime::now(), std::process::id());
    let mut requests = Vec::new();
    for run in of_push {
        match again(ctx, args, run, here, io) {
            Again::Stop(message) => {
                let verdict = Verdict::stopped(
                    crate::config::Profile::default(),
                    None,
                    super::usage_error(message),
                );
                return super::emit_stopped(&verdict, json, ctx, io);
            }
            Again::Done => {}
            Again::Run(mut request) => {
                request.push = Some(push.clone());
                requests.push(request);
            }
        }
    }
    let again = requests.len();
    let mut never = Vec::new();
    for record in unreached {
        never.push(record.pushed_ref.clone().unwrap_or_default());
        requests.push(Box::new(RunRequest {
            phase: None,
            profile: args.profile.clone(),
            workflow: None,
            checks: Vec::new(),
            selection: pushed_selection(record),
            format: report_format(args),
            output: None,
            reports: Vec::new(),
            jobs: args.jobs,
            config_from_ref: None,
            resume_of: None,
            pushed_ref: record.pushed_ref.clone(),
            push: Some(push.clone()),
        }));
    }
    if requests.is_empty() {
        let Some(last) = of_push.last() else {
            return ExitCode::Proceed;
        };
        return nothing_to_resume(ctx, last, json, io);
    }
    if again < of_push.len() {
        let _ = writeln!(
            io.err,
            "note: {} of the {} refs the push checked passed: the other {again} run again",
            of_push.len() - again,
            of_push.len(),
        );
    }
    if !never.is_empty() {
        let names: Vec<String> = never.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(
            io.err,
            "note: the push was interrupted before it checked {}: checked now",
            names.join(", ")
        );
    }
    let mut gravest: Option<(ExitCode, Vec<u8>)> = None;
    let mut answers = Vec::new();
    // Interrupted again, the refs not reached this time are kept, as the
    // hook keeps them, for the next resume.
    let mut unreached_now = Vec::new();
    for request in requests {
        let name = request.pushed_ref.clone().unwrap_or_default();
        let (code, out) = if crate::runner::interrupted() {
            super::hook::not_reached(io.out, &name);
            unreached_now.push((request.selection.clone(), request.pushed_ref.clone()));
            answers.push(format!("`{name}` not checked"));
            (ExitCode::Incomplete, Vec::new())
        } else {
            let (code, out) = if json {
                let mut out = Vec::new();
                let code = execute(
                    ctx,
                    &request,
                    &mut Streams {
                        out: &mut out,
                        err: &mut *io.err,
                    },
                );
                (code, out)
            } else {
                (execute(ctx, &request, io), Vec::new())
            };
            answers.push(format!("`{name}` exit {}", code.code()));
            (code, out)
        };
        if gravest.as_ref().is_none_or(|(worst, _)| code > *worst) {
            gravest = Some((code, out));
        }
    }
    super::hook::keep_unreached(ctx, &push, &unreached_now, io);
    // What the resumed push did not reach is now this resume's: checked
    // above, or kept under its push for the next resume.
    if !unreached.is_empty() {
        if let Err(e) = crate::state::forget_unreached(&super::state::state_dir_for(ctx), resumed) {
            let _ = writeln!(io.err, "warning: {e}");
        }
    }
    let (code, out) = gravest.unwrap_or((ExitCode::Proceed, Vec::new()));
    if json {
        let _ = writeln!(
            io.err,
            "note: the refs of the push, resumed: {}; the verdict on stdout is the gravest's",
            answers.join(", ")
        );
        let _ = io.out.write_all(&out);
    }
    code
}

/// The profile a resume of `last` runs under, as the run is asked for it
/// (`None`: `PHASEGATE_PROFILE`, else the configuration's), and its name
/// with what named it, when known: the profile asked for now
/// (`--profile`, then `PHASEGATE_PROFILE`); else the one `last` was asked
/// for; else the configuration's as it is now, which `last` took its own
/// from (a gate made stricter since is resumed stricter). Unknown when the
/// configuration does not load: the run says why.
fn profile_for(
    ctx: &Context,
    args: &ResumeArgs,
    last: &RunRecord,
    config: Option<&crate::config::Config>,
) -> (Option<String>, Option<(String, &'static str)>) {
    if let Some(name) = &args.profile {
        return (
            Some(name.clone()),
            Some((name.clone(), "as `--profile` asks")),
        );
    }
    if let Some(name) = &ctx.profile {
        return (None, Some((name.clone(), "from PHASEGATE_PROFILE")));
    }
    if !last.profile_configured {
        let name = last.profile.clone();
        return (Some(name.clone()), Some((name, "as that run was asked")));
    }
    let named = config.map(|c| (c.gate.profile.as_str().to_string(), "from `[gate] profile`"));
    (None, named)
}

/// The report a resume prints: JSON or the human one.
fn report_format(args: &ResumeArgs) -> crate::cli::ReportFormat {
    if args.format == Format::Json {
        crate::cli::ReportFormat::Json
    } else {
        crate::cli::ReportFormat::Human
    }
}

/// `run A`, `runs A, B`, or the first few of many.
fn named_runs(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    let more = if ids.len() > shown.len() { ", ..." } else { "" };
    let noun = if ids.len() == 1 { "run" } else { "runs" };
    format!("{noun} {}{more}", shown.join(", "))
}

/// Says the last run left nothing to resume; under `--format json` its
/// verdict stands as the answer.
fn nothing_to_resume(
    ctx: &Context,
    last: &RunRecord,
    json: bool,
    io: &mut Streams<'_>,
) -> ExitCode {
    let said = format!(
        "the last run ({}, {}) left nothing failed or incomplete: nothing to resume",
        last.run_id, last.status
    );
    let _ = writeln!(io.err, "{said}");
    // Its verdict stands: under `--format json`, that is the answer.
    if json {
        let saved = super::state::state_dir_for(ctx)
            .join("runs")
            .join(&last.run_id)
            .join("verdict.json");
        let read = std::fs::read(&saved).and_then(|bytes| {
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .map(|_| bytes)
                .map_err(std::io::Error::other)
        });
        match read {
            Ok(bytes) => {
                let _ = io.out.write_all(&bytes);
            }
            Err(e) => {
                let verdict = as_recorded(last, said, &format!("`{}`: {e}", saved.display()));
                return super::emit(&verdict, true, ctx, io);
            }
        }
    }
    ExitCode::Proceed
}

/// The files the last run selected, asked for again. A file of a
/// `--files` run that is gone since (deleted, as a fix may do) is left
/// out, and this is said: named again, it would stop the run as a path
/// given by mistake, which no one gave.
fn selection_of(ctx: &Context, last: &RunRecord, io: &mut Streams<'_>) -> SelectionRequest {
    match last.selection.mode.as_str() {
        "staged" => SelectionRequest::Staged,
        "range" | "all" => pushed_selection(&last.selection),
        // A run stopped before it selected its files, whose selection
        // could not be told: selected again as it was asked, by default.
        "unknown" => SelectionRequest::Default,
        "files" => {
            // Recorded relative to the root; given relative to the cwd.
            let root = crate::git::discover(&ctx.cwd)
                .ok()
                .flatten()
                .map_or_else(|| ctx.cwd.clone(), |r| r.root);
            // A name that was not UTF-8 is kept whole; an earlier version
            // kept it with `\u{fffd}` where its bytes were: not finding
            // that says nothing of the file, which is named again, and the
            // run says it cannot find it.
            let (there, gone): (Vec<PathBuf>, Vec<PathBuf>) = last
                .selection
                .paths()
                .iter()
                .map(|f| root.join(f))
                .partition(|f| {
                    f.to_string_lossy().contains('\u{fffd}')
                        || !matches!(f.symlink_metadata(), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
                });
            if !gone.is_empty() {
                let named: Vec<String> = gone
                    .iter()
                    .take(5)
                    .map(|f| format!("`{}`", f.strip_prefix(&root).unwrap_or(f).display()))
                    .collect();
                let _ = writeln!(
                    io.err,
                    "warning: {} file(s) run {} checked no longer exist and are left out: {}{}",
                    gone.len(),
                    last.run_id,
                    named.join(", "),
                    if gone.len() > named.len() {
                        ", ..."
                    } else {
                        ""
                    }
                );
            }
            SelectionRequest::Files(there)
        }
        _ => SelectionRequest::All,
    }
}

/// The commits a run of `range` or `all` mode selected (a pushed ref's,
/// or `--from-ref`/`--to-ref`), asked for again.
fn pushed_selection(selection: &SelectionRecord) -> SelectionRequest {
    match (selection.mode.as_str(), &selection.from, &selection.to) {
        // A push's commits after a merge, compared with the same
        // published commits.
        ("range", _, Some(to)) if !selection.published.is_empty() => SelectionRequest::Pushed {
            to: to.clone(),
            published: selection.published.clone(),
        },
        ("range", Some(from), Some(to)) => SelectionRequest::Range {
            from: from.clone(),
            to: to.clone(),
        },
        ("range", _, _) => SelectionRequest::Default,
        // Every file of a pushed commit.
        (_, _, Some(commit)) => SelectionRequest::AllOf(commit.clone()),
        _ => SelectionRequest::All,
    }
}

/// Whether a check that ended with `status` (as the state file keeps it)
/// is carried into a resumed run as it was, not run again: a pass, a
/// warning, a skip. Anything else (failed, missing, timed out, crashed, a
/// status of another version) runs again.
pub(super) fn carried(status: &str) -> bool {
    matches!(status, "passed" | "warned" | "skipped")
}

/// Whether a resume carries `check` over as it ended: a pass, a warning,
/// a skip (`carried`), but never a skip `PHASEGATE_SKIP` made, which
/// verified nothing: carried, it would let a resume pass with the check
/// never run and nothing said, whatever the variable says now.
fn carries(check: &crate::state::CheckRecord) -> bool {
    carried(&check.status) && !check.skipped_by_env
}

/// The checks of the phase as configured now (`specs`) that a resume of
/// `previous` runs again: those it did not carry, and those it did not
/// have or ran under another configuration. A check of `previous` that is
/// no longer configured is not among them (it cannot run). A run of the
/// checks `--check` named left the others out on purpose: they are not
/// its to finish, and only those it named can run again.
pub(super) fn to_run_again<'a>(previous: &RunRecord, specs: &[&'a CheckSpec]) -> Vec<&'a str> {
    let asked = &previous.selection.checks;
    specs
        .iter()
        .filter(|spec| asked.is_empty() || asked.contains(&spec.name))
        .filter(|spec| {
            previous
                .checks
                .iter()
                .find(|c| c.name == spec.name)
                .is_none_or(|c| {
                    !carries(c) || c.config.as_deref() != Some(spec.fingerprint().as_str())
                })
        })
        .map(|spec| spec.name.as_str())
        .collect()
}

/// Whether the configuration now has checks in `last`'s phase that it did
/// not run under this configuration (added, or changed since): those run
/// again even after a run that passed. The configuration is the one `last`
/// was judged by (`config_now`). One that does not load (`None`) may have
/// anything changed: the resumed run reports it.
fn reconfigured(config: Option<&crate::config::Config>, last: &RunRecord) -> bool {
    // A configuration that cannot be read cannot say its checks are the
    // ones that passed: the run that follows says what is wrong with it.
    let Some(config) = config else {
        return true;
    };
    let specs: Vec<&CheckSpec> = config
        .checks_for(
            last.phase.as_deref().unwrap_or_default(),
            last.workflow.as_deref(),
        )
        .unwrap_or_default()
        .iter()
        .collect();
    !to_run_again(last, &specs).is_empty()
}

/// The configuration `last` is judged by now: the work tree's, or its
/// `--config-from-ref`'s; none when it cannot be read (the run that
/// follows says why).
fn config_now(ctx: &Context, last: &RunRecord) -> Option<crate::config::Config> {
    let root = match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => repo.root,
        Ok(None) => ctx.cwd.clone(),
        Err(_) => return None,
    };
    let loaded = match &last.selection.config_from_ref {
        None => crate::config::load(&root),
        Some(spec) => super::run::config_at_ref(&root, spec).ok()?.1,
    };
    loaded.ok()
}

/// What to say when the configuration no longer has the phase (or the
/// workflow) `last` ran in: nothing of it can be run again, and "unknown
/// phase" alone would not tell a person who named no phase which run, or
/// what to do.
fn phase_gone(config: &crate::config::Config, last: &RunRecord) -> Option<String> {
    let names = |keys: Vec<&String>| {
        keys.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (what, name, has) = match &last.workflow {
        Some(flow) if !config.workflows.contains_key(flow) => {
            ("workflow", flow, names(config.workflows.keys().collect()))
        }
        _ => match &last.phase {
            Some(phase) if !config.phases.contains_key(phase) => {
                ("phase", phase, names(config.phases.keys().collect()))
            }
            _ => return None,
        },
    };
    let has = if has.is_empty() {
        "none".to_string()
    } else {
        has
    };
    Some(format!(
        "run {} was of {what} `{name}`, which `phasegate.toml` no longer has (it has {has}): nothing of it can be run again; `phasegate run` checks the files in the phase the configuration gives now",
        last.run_id
    ))
}

/// The verdict `state.json` keeps of `last` when its `verdict.json` cannot
/// be read (`why`): its status, phase, profile and checks, said as such.
fn as_recorded(last: &RunRecord, said: String, why: &str) -> Verdict {
    let mut verdict = Verdict::of_diagnostics(Vec::new());
    verdict.status = if last.status == "warned" {
        Status::Warned
    } else {
        Status::Passed
    };
    verdict.next = Next::Proceed;
    verdict.phase.clone_from(&last.phase);
    verdict.profile = crate::config::Profile::parse(&last.profile).unwrap_or_default();
    verdict.workflow.clone_from(&last.workflow);
    verdict.run_id = Some(last.run_id.clone());
    let checks: Vec<String> = last
        .checks
        .iter()
        .map(|c| format!("`{}` {}", c.name, c.status))
        .collect();
    verdict.notes = vec![
        said,
        format!(
            "the verdict of run {} cannot be read ({why}); `state.json` keeps its status and checks: {}",
            last.run_id,
            if checks.is_empty() {
                "none".to_string()
            } else {
                checks.join(", ")
            }
        ),
    ];
    verdict
}
