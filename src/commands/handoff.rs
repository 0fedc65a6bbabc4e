//! `phasegate handoff validate` and `phasegate handoff feedback`.

use std::path::{Path, PathBuf};

use crate::cli::{Format, HandoffCommand};
use crate::config;
use crate::context::Context;
use crate::exit::ExitCode;
use crate::handoff::last_run::LastRun;
use crate::handoff::{self, feedback::feedback, HandoffReport, Rules};
use crate::report;

use super::Streams;

pub fn run(ctx: &Context, command: &HandoffCommand, io: &mut Streams<'_>) -> ExitCode {
    // One discovery serves the command: the root, and whether a
    // repository tracks documents to list and compare ids with.
    let (root, in_repo) = match crate::git::discover(&ctx.cwd) {
        Ok(Some(repo)) => (repo.root, true),
        Ok(None) => (ctx.cwd.clone(), false),
        Err(e) => {
            let _ = writeln!(io.err, "error: {e}");
            return ExitCode::Usage;
        }
    };
    let config = match config::load(&root) {
        Ok(config) => config,
        Err(error) => {
            report::errors::render_diagnostic(&error, io.err, ctx.color_for(ctx.stderr_tty));
            return ExitCode::Usage;
        }
    };
    let rules = Rules {
        max_retries: config.gate.max_retries,
        checkpoints: config.handoff.checkpoints.clone(),
        claims: config.handoff.claims.clone(),
        failed_checks: Vec::new(),
        checked_phase: None,
        unverified: std::collections::BTreeMap::new(),
        phases: Some(config.phases.keys().cloned().collect()),
        now: Some(crate::handoff::time::now()),
    };
    match command {
        HandoffCommand::Validate { paths, format } => {
            let at = Place {
                root: &root,
                in_repo,
            };
            validate(ctx, &at, &config, &rules, paths, *format, io)
        }
        HandoffCommand::Stamp { path } => stamp(ctx, &root, &rules, path, io),
        HandoffCommand::Feedback { path, format } => {
            give_feedback(ctx, &root, &config, rules, path, *format, io)
        }
    }
}

/// Where `handoff validate` works: the root, and whether it is a git
/// repository's work tree (as found once, by `run`).
struct Place<'a> {
    root: &'a Path,
    in_repo: bool,
}

/// `phasegate handoff validate`: the documents named, or else those the
/// repository tracks under `[handoff] paths`.
fn validate(
    ctx: &Context,
    at: &Place<'_>,
    config: &config::Config,
    rules: &Rules,
    paths: &[PathBuf],
    format: Format,
    io: &mut Streams<'_>,
) -> ExitCode {
    let root = at.root;
    let named = !paths.is_empty();
    let paths = if paths.is_empty() {
        if !at.in_repo {
            return usage(
                "not in a git repository, so no handoff document is tracked: name the documents to validate (`phasegate handoff validate handoffs/F001.md`)",
                format,
                io,
            );
        }
        match crate::git::tracked_files(root) {
            Ok(files) => files
                .into_iter()
                .filter(|f| config.handoff.path_filter.is_match(f))
                .map(|f| root.join(f))
                .collect(),
            Err(e) => {
                let message = format!("failed to list the tracked files: {e}");
                if format == Format::Json {
                    let _ = crate::report::json::render_error(&message, io.out);
                } else {
                    let _ = writeln!(io.err, "error: {message}");
                }
                return ExitCode::Incomplete;
            }
        }
    } else {
        let paths = match expanded(&ctx.cwd, paths) {
            Ok(paths) => paths,
            Err(message) => return usage(&message, format, io),
        };
        let given: Vec<PathBuf> = paths.iter().map(|p| ctx.cwd.join(p)).collect();
        if let Some(code) = missing(&paths, &given, format, io) {
            return code;
        }
        given
    };
    let mut reports: Vec<(HandoffReport, String)> = paths
        .iter()
        .map(|p| validate_file(p, root, rules))
        .collect();
    // Judged together, as a run judges the documents it selects.
    handoff::ids::shared_ids(reports.iter_mut().map(|(report, _)| report));
    // And against the tracked documents not named, as `run --files` judges
    // them: a copy named alone has nothing else to share its id with.
    if named {
        let all: Vec<&HandoffReport> = reports.iter().map(|(report, _)| report).collect();
        match unnamed_documents(at, config, &all) {
            Ok(committed) => handoff::ids::shared_with_committed(
                reports.iter_mut().map(|(report, _)| report),
                &committed,
            ),
            Err(e) => {
                let message = format!(
                    "failed to read the tracked handoff documents that were not named, to compare their ids: {e}"
                );
                if format == Format::Json {
                    let _ = crate::report::json::render_error(&message, io.out);
                } else {
                    let _ = writeln!(io.err, "error: {message}");
                }
                return ExitCode::Incomplete;
            }
        }
    }
    let written = if format == Format::Json {
        report::handoff::render_json(&reports, io.out)
    } else {
        // A line of a megabyte is drawn cut around its error; the report's
        // lines and columns stay the document's. Only a terminal is drawn
        // on.
        let terminal = ctx.stdout_tty;
        for (report, text) in &mut reports {
            if !report.valid && terminal {
                *text = handoff::excerpt::drawn(text, &mut report.errors);
            }
        }
        report::handoff::render_human(&reports, io.out, ctx.color_for(terminal), terminal)
    };
    if let Err(e) = written {
        let _ = writeln!(io.err, "error: failed to write the report: {e}");
    }
    if reports.iter().any(|(r, _)| !r.valid) {
        ExitCode::Failed
    } else {
        ExitCode::Proceed
    }
}

/// The tracked documents under `[handoff] paths` that `named` leaves out,
/// as far as one of `named` may share its id: those whose first bytes
/// (`ids::HEAD_BYTES`) hold a named document's id and whose frontmatter
/// says it at the same stage. Nothing is listed when no named document
/// has an id and a stage, or outside a git repository, which tracks none.
fn unnamed_documents(
    at: &Place<'_>,
    config: &config::Config,
    named: &[&HandoffReport],
) -> Result<handoff::ids::Committed, crate::git::GitError> {
    let new: Vec<handoff::ids::Known> = named
        .iter()
        .filter_map(|report| {
            Some(handoff::ids::Known {
                path: report.path.clone(),
                id: report.id.as_deref()?.trim().to_string(),
                stage: report.stage.clone()?,
                line: report.id_at?.line,
                held: handoff::ids::Held::WorkTree,
            })
        })
        .collect();
    let mut committed = handoff::ids::Committed {
        new: named.iter().map(|report| report.path.clone()).collect(),
        known: Vec::new(),
        // No commit says which came first.
        by_name: true,
    };
    if new.is_empty() || !at.in_repo {
        return Ok(committed);
    }
    let root = at.root;
    let others: Vec<PathBuf> = crate::git::tracked_files(root)?
        .into_iter()
        .filter(|f| {
            config.handoff.path_filter.is_match(f)
                && !committed.new.iter().any(|named| Path::new(named) == f)
        })
        .collect();
    let others: Vec<&Path> = others.iter().map(PathBuf::as_path).collect();
    committed.known = known_in_work_tree(root, &others, &new)?;
    Ok(committed)
}

/// The documents `others` (tracked, relative to `root`) as the work tree
/// holds them, that one of `new` may have copied: those whose first
/// `ids::HEAD_BYTES` hold the id of one of `new` and whose frontmatter
/// says it at that one's stage; a body is never read. Only for those, rare,
/// are `HEAD` and the index asked where the id comes from
/// (`ids::Held`), for the error to say what is true of the other.
pub(crate) fn known_in_work_tree(
    root: &Path,
    others: &[&Path],
    new: &[handoff::ids::Known],
) -> Result<Vec<handoff::ids::Known>, crate::git::GitError> {
    use handoff::ids::{mentions_any, Held, Known, HEAD_BYTES};
    let ids: Vec<String> = new.iter().map(|known| known.id.clone()).collect();
    let mut known: Vec<Known> = others
        .iter()
        .filter_map(|path| {
            // A tracked document deleted or unreadable in the work tree
            // is no document there.
            let bytes = handoff::read::read_at_most(&root.join(path), HEAD_BYTES).ok()?;
            let more = bytes.len() > HEAD_BYTES;
            let bytes = &bytes[..bytes.len().min(HEAD_BYTES)];
            if !mentions_any(bytes, &ids) {
                return None;
            }
            Known::read(&path.to_string_lossy(), bytes, more)
        })
        .filter(|other| {
            new.iter()
                .any(|new| new.id == other.id && new.stage == other.stage)
        })
        .collect();
    if known.is_empty() {
        return Ok(known);
    }
    let paths: Vec<&Path> = known.iter().map(|k| Path::new(k.path.as_str())).collect();
    let committed = match crate::git::commit_id(root, "HEAD") {
        Ok(_) => crate::git::documents_at(root, "HEAD", &paths, HEAD_BYTES)?,
        // No commit yet: nothing is committed.
        Err(_) => paths.iter().map(|_| None).collect(),
    };
    let staged = crate::git::documents_staged(root, &paths, HEAD_BYTES)?;
    for ((other, committed), staged) in known.iter_mut().zip(committed).zip(staged) {
        let committed = committed.and_then(Result::ok);
        let staged = staged.and_then(Result::ok);
        other.held = Held::of(other, committed.as_deref(), staged.as_deref());
    }
    Ok(known)
}

/// `phasegate handoff feedback`: what an agent reads before it retries.
fn give_feedback(
    ctx: &Context,
    root: &Path,
    config: &config::Config,
    mut rules: Rules,
    path: &Path,
    format: Format,
    io: &mut Streams<'_>,
) -> ExitCode {
    let full = ctx.cwd.join(path);
    if let Some(code) = missing(
        std::slice::from_ref(&path.to_path_buf()),
        std::slice::from_ref(&full),
        format,
        io,
    ) {
        return code;
    }
    // The newest run of the document's phase is the latest evidence there
    // is, whatever its age and whether it validated this document (see
    // `last_run`): its failed checks hold against the document's claims.
    // A run of another phase is no evidence either way: a qa run's `tests`
    // may be another command, and it never ran the implementation's.
    // Read once, validated twice: for its stage, then with the claims of
    // that stage's run.
    let shown = shown_path(&full, root);
    let read = handoff::read::read(&full);
    let validated = |rules: &Rules| match &read {
        Ok(document) => handoff::validate_document(&shown, document, rules).0,
        Err(e) => handoff::unreadable(&shown, e, rules),
    };
    let stage = validated(&rules).stage;
    let runs = newest_runs(ctx, stage.as_deref());
    if let Some(run) = &runs.of_phase {
        rules.failed_checks = run.failed_checks();
        rules.checked_phase.clone_from(&run.phase);
        // A claim on a check that run did not verify (skipped, not
        // installed, left out by `--check`) is no more proven here than it
        // was in the run, which warned: the feedback says what to run.
        let configured: Vec<String> = run
            .phase
            .as_deref()
            .and_then(|phase| config.checks_for(phase, run.workflow.as_deref()))
            .map(|specs| specs.iter().map(|spec| spec.name.clone()).collect())
            .unwrap_or_default();
        rules.unverified = run.unverified(&rules.claims, &configured);
    }
    let report = validated(&rules);
    let data = feedback(
        &report,
        &rules,
        runs.of_phase.as_ref(),
        runs.newest.as_ref(),
    );
    let written = if format == Format::Json {
        report::handoff::render_feedback_json(&data, io.out)
    } else {
        report::handoff::render_feedback(&data, io.out)
    };
    if let Err(e) = written {
        let _ = writeln!(io.err, "error: failed to write the feedback: {e}");
    }
    if data.escalate {
        ExitCode::Escalate
    } else if !data.items.is_empty() || !data.valid {
        ExitCode::Failed
    } else {
        ExitCode::Proceed
    }
}

/// The paths named on the command line, each pattern no file is named
/// after (`'handoffs/*.md'`, quoted, or given by a tool that runs no
/// shell) replaced by the files it matches, in the glob syntax of
/// `[handoff] paths` but taken from the current directory, as a shell
/// would have; a pattern that matches nothing is an error that says so.
fn expanded(cwd: &Path, paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut all = Vec::with_capacity(paths.len());
    for path in paths {
        let text = path.to_string_lossy();
        if !handoff::read::is_pattern(&text) || std::fs::symlink_metadata(cwd.join(path)).is_ok() {
            all.push(path.clone());
            continue;
        }
        let found = handoff::read::expand(cwd, &text)
            .map_err(|e| format!("`{text}` is not a pattern phasegate can read: {e}"))?;
        if found.is_empty() {
            return Err(format!(
                "no file matches `{text}` (no file has that name either): check the pattern (`*` stays within one directory, `**` crosses them), or give no path for every tracked document"
            ));
        }
        all.extend(found);
    }
    Ok(all)
}

/// A usage error when a document named on the command line is not there
/// (a mistyped path is not an invalid document): said on stderr, or as
/// `{"error": ...}` under `--format json`.
fn missing(
    given: &[PathBuf],
    full: &[PathBuf],
    format: Format,
    io: &mut Streams<'_>,
) -> Option<ExitCode> {
    let absent: Vec<String> = given
        .iter()
        .zip(full)
        .filter(|(_, full)| std::fs::symlink_metadata(full).is_err())
        .map(|(given, _)| format!("`{}`", given.display()))
        .collect();
    if !absent.is_empty() {
        // A pattern the shell matched to nothing reaches phasegate as
        // written (or one quoted, never expanded), and reads like a typo.
        let pattern = given
            .iter()
            .zip(full)
            .filter(|(_, full)| std::fs::symlink_metadata(full).is_err())
            .any(|(given, _)| given.to_string_lossy().contains(['*', '?', '[']));
        let help = if pattern {
            "; a pattern is not expanded by phasegate, and the shell found no file matching it (or it was quoted): name the documents, or give no path for every tracked one"
        } else {
            "; check the path"
        };
        let message = format!("no such file: {}{help}", absent.join(", "));
        return Some(usage(&message, format, io));
    }
    // A directory is no document: reading it would report an "error at
    // line 1" of something nobody can edit.
    let directories: Vec<String> = given
        .iter()
        .zip(full)
        .filter(|(_, full)| full.is_dir())
        .map(|(given, _)| format!("`{}`", given.display()))
        .collect();
    if !directories.is_empty() {
        let message = format!(
            "{} {} a directory, not a document: name the documents in it, or give no path for every tracked one",
            directories.join(", "),
            if directories.len() == 1 { "is" } else { "are" }
        );
        return Some(usage(&message, format, io));
    }
    None
}

/// A usage error: said on stderr, or as the JSON document under `--format
/// json`.
fn usage(message: &str, format: Format, io: &mut Streams<'_>) -> ExitCode {
    if format == Format::Json {
        let _ = crate::report::json::render_error(message, io.out);
    } else {
        let _ = writeln!(io.err, "error: {message}");
    }
    ExitCode::Usage
}

/// Reads and validates one document; its path is shown relative to the
/// repository root. An unreadable file is reported as such.
fn validate_file(path: &Path, root: &Path, rules: &Rules) -> (HandoffReport, String) {
    let shown = shown_path(path, root);
    match handoff::read::read(path) {
        Ok(document) => {
            let (report, text) = handoff::validate_document(&shown, &document, rules);
            (report, text.into_owned())
        }
        Err(e) => (handoff::unreadable(&shown, &e, rules), String::new()),
    }
}

/// A document's path as runs record it: relative to the repository root.
/// A symbolic link is named itself, not the file it leads to, as a run
/// selects it: its results are found under that name.
fn shown_path(path: &Path, root: &Path) -> String {
    let resolved = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) if !dir.as_os_str().is_empty() => {
            std::fs::canonicalize(dir).map(|dir| dir.join(name))
        }
        _ => std::fs::canonicalize(path),
    };
    resolved
        .ok()
        .and_then(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// The newest run of a phase, and the newest run of any.
#[derive(Default)]
struct NewestRuns {
    of_phase: Option<LastRun>,
    newest: Option<LastRun>,
}

/// The newest run whose phase is `phase` (of any phase when there is no
/// `phase`: a document whose stage cannot be read has nothing better), and
/// the newest run of all. A verdict that cannot be read is passed over.
fn newest_runs(ctx: &Context, phase: Option<&str>) -> NewestRuns {
    /// A verdict's phase alone: the older runs are only looked at for it.
    #[derive(serde::Deserialize)]
    struct PhaseOnly {
        phase: Option<String>,
    }
    let mut found = NewestRuns::default();
    for verdict in verdicts_newest_first(ctx) {
        let Ok(bytes) = std::fs::read(&verdict) else {
            continue;
        };
        if found.newest.is_some() {
            let matches = serde_json::from_slice::<PhaseOnly>(&bytes)
                .is_ok_and(|v| v.phase.as_deref() == phase);
            if !matches {
                continue;
            }
        }
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let run = LastRun::from_verdict(&value);
        let of_phase = phase.is_none() || run.phase.as_deref() == phase;
        if found.newest.is_none() {
            found.newest = Some(run.clone());
        }
        if of_phase {
            found.of_phase = Some(run);
            break;
        }
    }
    found
}

/// The runs' verdicts, the one written last first. A run's id orders runs
/// by their second and then their process id, which is no order once
/// process ids wrap around within that second.
fn verdicts_newest_first(ctx: &Context) -> Vec<PathBuf> {
    let state = super::state::state_dir_for(ctx);
    let Ok(runs) = std::fs::read_dir(state.join("runs")) else {
        return Vec::new();
    };
    let mut verdicts: Vec<(std::time::SystemTime, PathBuf)> = runs
        .flatten()
        .map(|e| e.path().join("verdict.json"))
        .filter_map(|verdict| {
            let written = std::fs::metadata(&verdict)
                .ok()
                .filter(std::fs::Metadata::is_file)?
                .modified()
                .ok()?;
            Some((written, verdict))
        })
        .collect();
    verdicts.sort_by(|(a, pa), (b, pb)| {
        let order = |p: &PathBuf| p.parent().map(crate::state::run_order);
        b.cmp(a).then_with(|| order(pb).cmp(&order(pa)))
    });
    verdicts.into_iter().map(|(_, verdict)| verdict).collect()
}

/// `phasegate handoff stamp`: the results of the newest run of the
/// document's phase written into its frontmatter (`handoff::stamp`
/// decides what changes).
fn stamp(ctx: &Context, root: &Path, rules: &Rules, path: &Path, io: &mut Streams<'_>) -> ExitCode {
    use crate::handoff::stamp::{apply, stamp_edits};
    let full = ctx.cwd.join(path);
    // Read as validation reads it (a FIFO or a device is refused), and
    // whole: the stamped document is written back entire.
    let read = handoff::read::read(&full).and_then(|document| {
        if document.truncated {
            return Err(std::io::Error::other(format!(
                "it is larger than {} MiB, more than a handoff document holds",
                handoff::read::MAX_BYTES >> 20
            )));
        }
        String::from_utf8(document.bytes).map_err(std::io::Error::other)
    });
    let text = match read {
        Ok(text) => text,
        Err(e) => {
            let _ = writeln!(io.err, "error: failed to read `{}`: {e}", path.display());
            return ExitCode::Usage;
        }
    };
    // The results of the document's own phase: a run of another one did
    // not check what its checkpoints claim, nor was it its attempt.
    let shown = shown_path(&full, root);
    let stage = handoff::validate(&shown, &text, rules).stage;
    let runs = newest_runs(ctx, stage.as_deref());
    let Some(run) = runs.of_phase else {
        let _ = match (&stage, &runs.newest) {
            (Some(stage), Some(newest)) => writeln!(
                io.err,
                "error: there is no run of phase `{stage}` to stamp `{}` from: the newest run, `{}`, checked phase `{}`\nhelp: run `phasegate run --phase {stage}` first",
                path.display(),
                newest.run_id,
                newest.phase.as_deref().unwrap_or("none")
            ),
            (Some(stage), None) => writeln!(
                io.err,
                "error: there is no run to stamp from\nhelp: run `phasegate run --phase {stage}` first"
            ),
            (None, _) => writeln!(
                io.err,
                "error: there is no run to stamp from\nhelp: run `phasegate run` first"
            ),
        };
        return ExitCode::Usage;
    };
    let results = run.results_for(&shown);
    let edits = match stamp_edits(&text, &results, rules) {
        Ok(edits) => edits,
        Err(reason) => {
            let _ = writeln!(io.err, "error: cannot stamp `{}`: {reason}", path.display());
            return ExitCode::Failed;
        }
    };
    let stamped = apply(&text, &edits);
    if !edits.is_empty() {
        // Atomically, keeping the file's permissions. A document that is
        // a symbolic link is written where it leads: renaming over the
        // link would leave the file the link named as it was.
        let target = std::fs::canonicalize(&full).unwrap_or_else(|_| full.clone());
        let temp = target.with_extension("phasegate-stamp");
        let written = std::fs::write(&temp, &stamped).and_then(|()| {
            if let Ok(meta) = std::fs::metadata(&target) {
                std::fs::set_permissions(&temp, meta.permissions())?;
            }
            Ok(())
        });
        if ctx.pause_at.is_some() {
            let _interrupts = crate::runner::InterruptGuard::install();
            ctx.maybe_pause("stamp-write", &super::state::state_dir_for(ctx));
        }
        // An editor may have saved the document since it was read: the
        // stamped copy renamed over it would throw that edit away unseen.
        let unchanged = || {
            handoff::read::read(&target)
                .is_ok_and(|now| !now.truncated && now.bytes == text.as_bytes())
        };
        let written = written.and_then(|()| {
            if !unchanged() {
                return Err(std::io::Error::other(format!(
                    "it changed while it was being stamped (saved by an editor?), so nothing was written: run `phasegate handoff stamp {}` again",
                    path.display()
                )));
            }
            std::fs::rename(&temp, &target)
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            let _ = writeln!(io.err, "error: failed to write `{}`: {e}", path.display());
            return ExitCode::Incomplete;
        }
    }
    let after = handoff::validate(&shown, &stamped, rules);
    let _ = report::handoff::render_stamp(
        &path.display().to_string(),
        &run.run_id,
        !edits.is_empty(),
        &after,
        io.out,
    );
    ExitCode::Proceed
}
