//! After the verdict: the run is recorded in the state (history, repeated
//! errors, interventions, pruning), under the state lock. A state that
//! cannot be read is moved aside and the run is incomplete (closed unless
//! the `fast` profile lets it through), as it is on a
//! file system that cannot give the state lock at all; a state that
//! cannot be written leaves the verdict as it is, says so, and goes to
//! `emergency.log` where possible.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::config::{Config, Profile};
use crate::gate::{self, Next, Status, Verdict};
use crate::state::{
    self, Cause, CheckRecord, Loaded, NewIntervention, Notes, Placement, Priority, Queue,
    RunRecord, SelectionRecord, State, StateLock, Unpruned,
};

/// How long a run waits for another to finish with the state.
pub const LOCK_WAIT: Duration = Duration::from_secs(30);

/// What the history keeps of a run besides its verdict.
pub struct RunFacts<'a> {
    pub session: Option<&'a str>,
    /// The work tree the run is in (`RepoInfo::work_tree_key`).
    pub work_tree: String,
    pub selection: SelectionRecord,
    /// Old run directories being removed meanwhile: waited for first.
    pub pruning: Option<state::Pruning>,
    /// Whether a person reads the verdict's notes in the human report:
    /// the problems met while recording are then said there alone, not
    /// on standard error as well. Machine formats keep them in their
    /// notes, and standard error tells the person watching.
    pub notes_shown: bool,
    /// What the run said of its state already (where its logs went
    /// instead of its directory): what recording meets of the same cause
    /// extends those notes.
    pub notes: Notes,
    /// A digest of what its checks judged (`RunRecord::input`), when it
    /// was worked out: for a run that failed with errors, and only where
    /// it can be told exactly.
    pub input: Option<String>,
}

/// What a run stopped before its settings were resolved was asked for,
/// for `resume` to ask again.
pub struct Asked<'a> {
    /// A profile was named (`--profile`, `PHASEGATE_PROFILE`), not taken
    /// from the configuration.
    pub profile: bool,
    /// `--workflow`.
    pub workflow: Option<&'a str>,
}

/// Records `verdict` and applies what the history says to it.
pub fn record_run(
    state_dir: &state::StateDir,
    config: &Config,
    facts: RunFacts<'_>,
    verdict: &mut Verdict,
    pause: &dyn Fn(&str),
    err: &mut dyn Write,
) {
    record_run_within(state_dir, config, facts, verdict, pause, err, LOCK_WAIT);
}

/// `record_run`, waiting up to `wait` for the state lock.
fn record_run_within(
    state_dir: &state::StateDir,
    config: &Config,
    facts: RunFacts<'_>,
    verdict: &mut Verdict,
    pause: &dyn Fn(&str),
    err: &mut dyn Write,
    wait: Duration,
) {
    let RunFacts {
        session,
        work_tree,
        selection,
        pruning,
        notes_shown,
        mut notes,
        input,
    } = facts;
    let echo = !notes_shown;
    let (pruned, locked) = lock_after_pruning(state_dir, pruning, wait);
    let lock = match locked {
        Ok(lock) => lock,
        Err(e) => {
            // The queue cannot be touched without the lock, but nothing is
            // dropped: the run's interventions go to `emergency.log`. A
            // pruning the same lock stopped is said with it, once.
            let unpruned = matches!(pruned, Some(Unpruned::Unlocked(_)));
            if let Some(Unpruned::Failed(e)) = pruned {
                notes.add(Cause::Pruning, format!("failed to prune old runs: {e}"));
            }
            let mut emergency = Emergency::default();
            unlocked(
                state_dir,
                verdict,
                &e,
                "the run",
                unpruned,
                &mut notes,
                &mut emergency,
            );
            report(state_dir, verdict, err, echo, notes, &emergency);
            return;
        }
    };
    if let Some(e) = pruned {
        notes.add(Cause::Pruning, format!("failed to prune old runs: {e}"));
    }
    remove_killed_temps(state_dir, &mut notes);
    let mut critical: Vec<NewIntervention> = Vec::new();
    let (mut state, theirs, unread) = load_history(state_dir, verdict, &mut critical);
    // Read once: for the streak a person answered, and to queue the run's
    // interventions and close those it shows are over.
    let loaded = Queue::load(state_dir);

    let phase = verdict.phase.clone().unwrap_or_default();
    // An agent going round in circles does so in its own work tree and
    // on its own branch: the runs of another (an agent beside it, or the
    // same work tree switched to other work) neither break its streak nor
    // add to it.
    let branch = selection.branch.clone();
    let of_phase: Vec<&RunRecord> = state
        .runs
        .iter()
        .filter(|r| {
            r.phase.as_deref() == Some(phase.as_str())
                && r.in_work_tree(&work_tree)
                && r.on_branch(branch.as_deref())
        })
        .collect();
    let now = state::now_rfc3339();
    let run_id = verdict.run_id.clone();
    // A run that reaches the history always has its id.
    let mut entry = history_entry(
        config,
        verdict,
        run_id.clone().unwrap_or_default(),
        now.clone(),
        phase.clone(),
        selection,
        work_tree,
    );
    entry.input = input;
    let of_phase = since_answered(
        loaded.as_ref().ok(),
        verdict,
        of_phase,
        config.gate.escalate_after,
    );
    // Running the gate again on what it judged already is no attempt.
    let attempts = gate::attempts(&of_phase, &entry);
    let previous = gate::previous_error_sets(verdict, &attempts, entry.selection.push.as_deref());
    // Going round in circles needs a person: the queue is where one looks.
    if let Some(note) = gate::escalate_repeats(verdict, &previous, config.gate.escalate_after) {
        critical.push(gate::repeated_intervention(verdict, note));
    }
    entry.status = verdict.status.as_str().to_string();

    let mut emergency = Emergency::default();
    let queued = queue_run(
        state_dir,
        loaded,
        critical,
        RunPlace {
            phase: &phase,
            branch: Some(branch.as_deref()),
        },
        session,
        &now,
        verdict,
        &mut notes,
        &mut emergency,
    );

    state.runs.push(entry);
    save_history(state_dir, &mut state, theirs, unread, pause, &mut notes);
    // A run that passed adds nothing to the queue, and closes nothing in
    // one with no open record: nothing to write.
    if let Some((queue, closed)) = &queued {
        if save_queue(state_dir, queue, verdict, &mut notes, &mut emergency) {
            say_closed(closed, verdict);
        }
    }
    drop(lock);
    report(state_dir, verdict, err, echo, notes, &emergency);
}

/// The runs of the phase (oldest first) after the newest one a person
/// answered by resolving its `errors_repeated` intervention
/// (`Queue::answered_runs`): the streak it escalated ends there. Looked
/// for only in a run that failed on errors after enough earlier runs to
/// continue a streak; a queue that could not be read (`None`) cuts
/// nothing (its error is said when the run's interventions are queued).
fn since_answered<'r>(
    queue: Option<&Queue>,
    verdict: &Verdict,
    mut runs: Vec<&'r RunRecord>,
    needed: usize,
) -> Vec<&'r RunRecord> {
    if runs.len() + 1 < needed || gate::error_set(verdict).is_empty() {
        return runs;
    }
    let Some(queue) = queue else {
        return runs;
    };
    let answered = queue.answered_runs();
    match runs
        .iter()
        .rposition(|r| answered.contains(r.run_id.as_str()))
    {
        Some(at) => runs.split_off(at + 1),
        None => runs,
    }
}

/// Removes what a run killed while it wrote the state left behind: the
/// temporary files beside the state files, and beside the files their
/// links lead to. Under the state lock: no writer is at work.
fn remove_killed_temps(state_dir: &state::StateDir, notes: &mut Notes) {
    if let Err(e) = state::remove_stale_temps(
        state_dir,
        &["state.json", "interventions.jsonl", "interventions.last-id"],
    ) {
        notes.add(
            Cause::Temps,
            format!("failed to remove the temporary files of a killed run: {e}"),
        );
    }
}

/// Writes the history back, unless another version of phasegate keeps it
/// (`theirs`), and notes what kept it from being read (`unread`) or
/// written.
fn save_history(
    state_dir: &state::StateDir,
    state: &mut State,
    theirs: bool,
    unread: Option<std::io::Error>,
    pause: &dyn Fn(&str),
    notes: &mut Notes,
) {
    let saved = if theirs {
        Ok(())
    } else {
        state::save(state_dir, state, &|| pause("state-rename"))
    };
    // What stands where `state.json` should be (a directory) can be
    // neither read nor replaced: one cause, said once.
    match (saved, unread) {
        (Ok(()), None) => {}
        (Ok(()), Some(read)) => {
            notes.add(
                Cause::History,
                format!("failed to read `state.json`: {read}"),
            );
        }
        (Err(e), unread) => {
            let unread = match unread {
                Some(read) if read.to_string() == e.to_string() => {
                    ", nor could it be read".to_string()
                }
                Some(read) => format!(", nor could it be read ({read})"),
                None => String::new(),
            };
            let file = state::state_file(state_dir);
            let what_to_do = if file.is_dir() {
                ": move that directory aside"
            } else {
                ""
            };
            notes.add(
                Cause::History,
                format!(
                    "failed to write `state.json` (`{}`){unread}: {e}; this run is not in the history{what_to_do}",
                    file.display()
                ),
            );
        }
    }
}

/// Records a run that stopped on its configuration (exit 2) before any
/// check ran: a line of the history naming the problem (when the run has
/// an id: the caller made its directory, and writes its verdict there),
/// and its `config_error` intervention, which the same broken file met
/// again, commit after commit, grows. Its verdict stands: what kept it
/// from being recorded is a note, said on standard error too (the report
/// of a stopped run shows its error alone). Nothing is pruned: how many
/// runs to keep is the configuration's to say, and the next run that
/// reads one prunes.
pub fn record_config_stop(
    state_dir: &state::StateDir,
    facts: RunFacts<'_>,
    asked: &Asked<'_>,
    verdict: &mut Verdict,
    pause: &dyn Fn(&str),
    err: &mut dyn Write,
) {
    let RunFacts {
        session,
        work_tree,
        selection,
        mut notes,
        ..
    } = facts;
    let mut emergency = Emergency::default();
    let lock = match StateLock::acquire_within(state_dir, Instant::now(), LOCK_WAIT) {
        Ok(lock) => lock,
        Err(e) => {
            unlocked(
                state_dir,
                verdict,
                &e,
                "the run",
                false,
                &mut notes,
                &mut emergency,
            );
            report(state_dir, verdict, err, true, notes, &emergency);
            return;
        }
    };
    remove_killed_temps(state_dir, &mut notes);
    let mut critical: Vec<NewIntervention> = Vec::new();
    let (mut state, theirs, unread) = load_history(state_dir, verdict, &mut critical);
    let now = state::now_rfc3339();
    // What named the phase, when anything did: the configuration that
    // would resolve it otherwise did not load.
    let phase = verdict.phase.clone().filter(|name| !name.is_empty());
    let run_id = verdict.run_id.clone();
    let branch = selection.branch.clone();
    let queued = queue_run(
        state_dir,
        Queue::load(state_dir),
        critical,
        RunPlace {
            phase: phase.as_deref().unwrap_or_default(),
            branch: Some(branch.as_deref()),
        },
        session,
        &now,
        verdict,
        &mut notes,
        &mut emergency,
    );
    if let Some(run_id) = run_id {
        let stopped = verdict.error.as_ref().map(|error| {
            let first = error.problems.first();
            state::StopRecord {
                kind: error.kind.to_string(),
                message: error.message.clone(),
                file: first.and_then(|p| p.file.clone()),
                line: first.and_then(|p| p.line),
                column: first.and_then(|p| p.column),
                problem: first.map(|p| p.message.clone()),
                problems: error.problems.len(),
            }
        });
        state.runs.push(RunRecord {
            run_id,
            time: now,
            phase,
            profile: verdict.profile.as_str().to_string(),
            profile_configured: !asked.profile,
            workflow: asked.workflow.map(str::to_string),
            status: verdict.status.as_str().to_string(),
            selection,
            checks: Vec::new(),
            work_tree: Some(work_tree),
            stopped,
            input: None,
        });
        save_history(state_dir, &mut state, theirs, unread, pause, &mut notes);
    }
    if let Some((queue, closed)) = &queued {
        if save_queue(state_dir, queue, verdict, &mut notes, &mut emergency) {
            say_closed(closed, verdict);
        }
    }
    drop(lock);
    report(state_dir, verdict, err, true, notes, &emergency);
}

/// Where a run was made, for the records it places and closes.
#[derive(Clone, Copy)]
struct RunPlace<'a> {
    phase: &'a str,
    /// `Some(None)`: on no branch (see `state::Origin::branch`).
    #[expect(
        clippy::option_option,
        reason = "as `state::Origin::branch`: no branch is not a branch unknown"
    )]
    branch: Option<Option<&'a str>>,
}

/// Closes in the queue (`loaded`) the open records the run shows are
/// over, then places the interventions of the run: the `critical` ones
/// its recording found, then those of its verdict. The queue to write
/// back, when it changed, with the records closed.
#[expect(
    clippy::too_many_arguments,
    reason = "the run's facts and the two places its troubles go, passed as they are"
)]
fn queue_run(
    state_dir: &state::StateDir,
    loaded: std::io::Result<Queue>,
    critical: Vec<NewIntervention>,
    place: RunPlace<'_>,
    session: Option<&str>,
    now: &str,
    verdict: &mut Verdict,
    notes: &mut Notes,
    emergency: &mut Emergency,
) -> Option<(Queue, Vec<state::Closed>)> {
    let news: Vec<NewIntervention> = critical
        .into_iter()
        .chain(gate::interventions_for(verdict))
        .collect();
    let run_id = verdict.run_id.clone();
    let origin = state::Origin {
        phase: place.phase,
        session,
        run_id: run_id.as_deref(),
        branch: place.branch,
        now,
    };
    queue_interventions(state_dir, loaded, news, &origin, verdict, notes, emergency)
}

/// Says in the verdict which records the run closed, once the queue that
/// holds them closed is written: the person reads it in the report, and
/// `interventions list --all` has each with its note.
fn say_closed(closed: &[state::Closed], verdict: &mut Verdict) {
    const NAMED: usize = 5;
    if closed.is_empty() {
        return;
    }
    let mut named: Vec<String> = closed
        .iter()
        .take(NAMED)
        .map(|c| format!("{} ({})", c.id, c.how))
        .collect();
    if closed.len() > NAMED {
        named.push(format!("and {} more", closed.len() - NAMED));
    }
    let (count, them) = match closed.len() {
        1 => ("an open intervention".to_string(), "it"),
        n => (format!("{n} open interventions"), "them"),
    };
    verdict.notes.push(format!(
        "this run shows {count} over, and resolved {them}: {}; `phasegate interventions list --all` shows {them} with {}",
        named.join(", "),
        if them == "it" { "its note" } else { "their notes" }
    ));
}

/// Closes the open records the run shows are over, then places the run's
/// new interventions in the queue, by its rules (the overflow goes to
/// `emergency.log`): closed first, they leave room under the limits, which
/// count open records. Moves the queue's unreadable lines there; a queue
/// that cannot be read (`loaded`) sends them all there. The verdict says
/// what became of them once `report` has tried to write them. The queue
/// to write back, when it changed, with the records closed.
fn queue_interventions(
    state_dir: &state::StateDir,
    loaded: std::io::Result<Queue>,
    news: Vec<NewIntervention>,
    origin: &state::Origin<'_>,
    verdict: &mut Verdict,
    notes: &mut Notes,
    emergency: &mut Emergency,
) -> Option<(Queue, Vec<state::Closed>)> {
    let mut queue = match loaded {
        Ok(queue) => queue,
        Err(e) => {
            emergency.add_unqueued(&news, origin.now, origin.run_id, Cause::QueueUnreadable);
            notes.add(Cause::QueueUnreadable, e.to_string());
            return None;
        }
    };
    let moved = move_unreadable(
        state_dir,
        &mut queue,
        origin.now,
        origin.run_id,
        verdict,
        notes,
    );
    // Nothing to work out for a queue with no open record, nor for a run
    // whose branch is not known.
    let closed = match origin.branch {
        Some(branch) if queue.has_open() => {
            let over = gate::what_is_over(verdict, branch);
            queue.close_over(|record| over.shows_over(record), origin.run_id, origin.now)
        }
        _ => Vec::new(),
    };
    let added = enqueue(&mut queue, news, origin, verdict, emergency);
    (moved || added || !closed.is_empty()).then_some((queue, closed))
}

/// The history in `state_dir`, whether another version of phasegate
/// keeps it (it is then left as it is), and why it could not be read when
/// no file can be there. A history that is there but cannot be used fails
/// the run closed: repeated failures would never escalate, so a person is
/// told (a critical intervention). One that cannot be there is a problem
/// said, and the verdict stands: the caller says it once with what
/// writing the history did.
fn load_history(
    state_dir: &state::StateDir,
    verdict: &mut Verdict,
    critical: &mut Vec<NewIntervention>,
) -> (State, bool, Option<std::io::Error>) {
    let mut unread = None;
    let mut lost: Option<(&str, String)> = None;
    // A history another version of phasegate keeps is left as it is.
    let mut theirs = false;
    let state = match state::load(state_dir) {
        Ok(Loaded::State(state)) => state,
        Ok(Loaded::OtherVersion { schema }) => {
            theirs = true;
            lost = Some((
                "state_other_version",
                format!(
                    "`state.json` was written by another version of phasegate (schema `{schema}`; this one reads `{}`): it is left as it is and this run is not added to it, so this run is incomplete; run the phasegate that wrote it, or move `{}` aside",
                    state::STATE_SCHEMA,
                    state::state_file(state_dir).display()
                ),
            ));
            State::default()
        }
        Ok(Loaded::Corrupt { moved_to, error }) => {
            lost = Some((
                "state_corrupt",
                format!(
                    "`state.json` could not be read ({error}); it was moved to `{}` and a new history begun, and this run is incomplete",
                    moved_to.display()
                ),
            ));
            State::default()
        }
        // No file can be there (a directory in its place, the state
        // directory a file): nothing was kept to lose; as a state that
        // cannot be written, the verdict stands and this is said.
        Err(e) if !state::state_file(state_dir).is_file() => {
            unread = Some(e);
            State::default()
        }
        Err(e) => {
            lost = Some((
                "state_unreadable",
                format!(
                    "`state.json` could not be read ({e}): fix or remove `{}`; this run is incomplete",
                    state::state_file(state_dir).display()
                ),
            ));
            State::default()
        }
    };
    if let Some((kind, message)) = lost {
        verdict.notes.push(message.clone());
        critical.push(fail_closed(verdict, kind, message));
    }
    (state, theirs, unread)
}

/// Makes a run whose history is lost to it incomplete, as repeated
/// failures would never escalate: closed, unless the `fast` profile lets
/// it through, as it does a check that could not finish, and says so. A
/// person is told by the critical intervention returned, `message` saying
/// why.
fn fail_closed(verdict: &mut Verdict, kind: &str, message: String) -> NewIntervention {
    if matches!(verdict.status, Status::Passed | Status::Warned) {
        verdict.status = Status::Incomplete;
        let open = verdict.profile == Profile::Fast;
        verdict.next = if open { Next::Proceed } else { Next::Resume };
        verdict.fail_open = open;
        if open {
            verdict.notes.push(
                "the run's history is lost to it under the fast profile: verification is incomplete but fails open".to_string(),
            );
        }
    }
    NewIntervention {
        kind: kind.to_string(),
        priority: Priority::Critical,
        check: None,
        // Each state moved aside is news; the same version's, not.
        fingerprint: gate::exact_fingerprint(&message),
        message,
    }
}

/// After the state lock could not be taken (`e`): says once that `what`
/// ("the run", "the failure") was not recorded, with the pruning the same
/// lock stopped (`unpruned`); the run's interventions go to `emergency`,
/// bound for `emergency.log`. A state directory that is not a directory
/// is the cause said, not the lock it stopped. A lock the file system
/// cannot give at all (`ENOLCK` on a network file system mounted without
/// locks) is no wait for another run: no run there is ever recorded, so
/// the run fails closed, as for a history that cannot be read, with a
/// critical intervention of its own.
fn unlocked(
    state_dir: &state::StateDir,
    verdict: &mut Verdict,
    e: &std::io::Error,
    what: &str,
    unpruned: bool,
    notes: &mut Notes,
    emergency: &mut Emergency,
) {
    let now = state::now_rfc3339();
    let run_id = verdict.run_id.clone();
    let unpruned = if unpruned {
        "; old runs were not pruned either"
    } else {
        ""
    };
    let (cause, note, critical) = if e.kind() == std::io::ErrorKind::Unsupported {
        let message = format!(
            "{what} was not recorded, nor will any be until the state lock can be taken: {e}{unpruned}; repeated failures would never escalate, so this run is incomplete"
        );
        let critical = fail_closed(verdict, "state_lock_unsupported", message.clone());
        (Cause::Lock, message, Some(critical))
    } else if state::state_dir_unusable(notes, state_dir) {
        let note = format!("{what} was not recorded{unpruned}");
        (Cause::StateDir, note, None)
    } else {
        let note = format!("{what} was not recorded: {e}{unpruned}");
        (Cause::Lock, note, None)
    };
    notes.add(cause, note);
    let mut news = gate::interventions_for(verdict);
    news.extend(critical);
    emergency.add_unqueued(&news, &now, run_id.as_deref(), cause);
}

/// What the history keeps of this run: its checks' statuses, the
/// fingerprints of their errors (to see them repeat) and of their
/// configuration (for `resume`), and its work tree.
fn history_entry(
    config: &Config,
    verdict: &Verdict,
    run_id: String,
    time: String,
    phase: String,
    selection: SelectionRecord,
    work_tree: String,
) -> RunRecord {
    // Each diagnostic's fingerprint is worked out once for every check.
    let error_sets = gate::check_error_sets(verdict);
    let specs = verdict
        .phase
        .as_deref()
        .and_then(|phase| config.checks_for(phase, verdict.workflow.as_deref()))
        .unwrap_or_default();
    RunRecord {
        run_id,
        time,
        phase: Some(phase),
        profile: verdict.profile.as_str().to_string(),
        // Asked for the profile the configuration gives, the run may as
        // well have taken it from there.
        profile_configured: verdict.profile == config.gate.profile,
        workflow: verdict.workflow.clone(),
        status: verdict.status.as_str().to_string(),
        selection,
        work_tree: Some(work_tree),
        checks: verdict
            .checks
            .iter()
            .map(|c| CheckRecord {
                name: c.name.clone(),
                status: c.status.as_str().to_string(),
                fingerprints: error_sets
                    .iter()
                    .find(|(name, _)| *name == c.name)
                    .map(|(_, set)| set.clone())
                    .unwrap_or_default(),
                config: specs
                    .iter()
                    .find(|s| s.name == c.name)
                    .map(crate::config::CheckSpec::fingerprint),
                interrupted: gate::was_interrupted(verdict, c),
                skipped_by_env: c.skipped_by_env(),
            })
            .collect(),
        stopped: None,
        input: None,
    }
}

/// Records a run that stopped on an internal failure before its checks
/// decided anything: the failure becomes a critical intervention, so a
/// person hears of it even when nobody reads this run's output. The
/// history is left alone (nothing was verified).
pub fn record_stopped(
    state_dir: &state::StateDir,
    verdict: &mut Verdict,
    session: Option<&str>,
    err: &mut dyn Write,
) {
    record_stopped_within(state_dir, verdict, session, err, LOCK_WAIT);
}

/// `record_stopped`, waiting up to `wait` for the state lock.
fn record_stopped_within(
    state_dir: &state::StateDir,
    verdict: &mut Verdict,
    session: Option<&str>,
    err: &mut dyn Write,
    wait: Duration,
) {
    let lock = match StateLock::acquire_within(state_dir, Instant::now(), wait) {
        Ok(lock) => lock,
        Err(e) => {
            let mut emergency = Emergency::default();
            let mut notes = Notes::default();
            unlocked(
                state_dir,
                verdict,
                &e,
                "the failure",
                false,
                &mut notes,
                &mut emergency,
            );
            report(state_dir, verdict, err, true, notes, &emergency);
            return;
        }
    };
    let now = state::now_rfc3339();
    let run_id = verdict.run_id.clone();
    let phase = verdict.phase.clone().unwrap_or_default();
    let news = gate::interventions_for(verdict);
    let mut notes = Notes::default();
    let mut emergency = Emergency::default();
    match Queue::load(state_dir) {
        Ok(mut queue) => {
            // A run stopped before it looked at its branch shows nothing
            // over.
            let origin = state::Origin {
                phase: &phase,
                session,
                run_id: run_id.as_deref(),
                branch: None,
                now: &now,
            };
            enqueue(&mut queue, news, &origin, verdict, &mut emergency);
            let _ = save_queue(state_dir, &queue, verdict, &mut notes, &mut emergency);
        }
        Err(e) => {
            emergency.add_unqueued(&news, &now, run_id.as_deref(), Cause::QueueUnreadable);
            notes.add(Cause::QueueUnreadable, e.to_string());
        }
    }
    drop(lock);
    // The report of a stopped run shows its error alone: standard error
    // is where the problems are read.
    report(state_dir, verdict, err, true, notes, &emergency);
}

/// Writes `queue` back, and says whether it was. When it cannot be
/// written, the records this run created or counted one more occurrence
/// on (those `verdict` names) go to `emergency.log` whole instead: the
/// queue as it was on disk has none of them, and nothing is dropped. The
/// records it closed stay open on disk, for the next run to close.
fn save_queue(
    state_dir: &state::StateDir,
    queue: &Queue,
    verdict: &Verdict,
    notes: &mut Notes,
    emergency: &mut Emergency,
) -> bool {
    let Err(e) = queue.save(state_dir) else {
        return true;
    };
    let lines = verdict
        .interventions
        .iter()
        .filter_map(|id| queue.records.iter().find(|r| r.id == *id))
        .map(|record| serde_json::to_string(record).unwrap_or_default())
        .collect();
    emergency.add(lines, Cause::QueueUnwritable);
    notes.add(Cause::QueueUnwritable, e.to_string());
    false
}

/// Adds `news` to `queue`, naming each record in the verdict; what is over
/// the queue's limits goes to `emergency` whole. Whether the queue changed.
fn enqueue(
    queue: &mut Queue,
    news: Vec<NewIntervention>,
    origin: &state::Origin<'_>,
    verdict: &mut Verdict,
    emergency: &mut Emergency,
) -> bool {
    let mut changed = false;
    let mut overflow = Vec::new();
    for new in news {
        match queue.add(new, origin) {
            Placement::Created(id) | Placement::Merged(id) => {
                changed = true;
                if !verdict.interventions.contains(&id) {
                    verdict.interventions.push(id);
                }
            }
            Placement::Overflow(record) => {
                overflow.push(serde_json::to_string(&record).unwrap_or_default());
            }
        }
    }
    emergency.add(overflow, Cause::OverLimits);
    changed
}

/// Interventions bound for `emergency.log` instead of the queue. The
/// verdict says what became of them only once the write was tried: that
/// they are there, or why they are not, in the note of what sent them.
#[derive(Debug, Default)]
struct Emergency {
    lines: Vec<String>,
    /// How many of `lines` went there, and why, in the order they came.
    batches: Vec<(usize, Cause)>,
}

impl Emergency {
    /// `news`, which the queue could not take for `cause`, as
    /// `emergency.log` keeps them.
    fn add_unqueued(
        &mut self,
        news: &[NewIntervention],
        now: &str,
        run_id: Option<&str>,
        cause: Cause,
    ) {
        let lines = news
            .iter()
            .map(|new| unqueued_line(now, run_id, new))
            .collect();
        self.add(lines, cause);
    }

    fn add(&mut self, lines: Vec<String>, cause: Cause) {
        if !lines.is_empty() {
            self.batches.push((lines.len(), cause));
            self.lines.extend(lines);
        }
    }
}

/// How `emergency.log` keeps an intervention the queue could not take
/// because it could not be read, or its lock could not be taken.
fn unqueued_line(now: &str, run_id: Option<&str>, new: &NewIntervention) -> String {
    format!(
        "{now} {} {:?} {}: {}",
        run_id.map_or_else(never_started, str::to_string),
        new.priority,
        new.kind,
        new.message
    )
}

/// How `emergency.log` names a process whose run has no id: one stopped
/// before its checks started, whose run directory was never made or was
/// removed empty. Its pid is what a person can match with what the
/// process printed; the time begins the line.
fn never_started() -> String {
    format!(
        "pid {} (a run stopped before its checks started)",
        std::process::id()
    )
}

/// The notes go into the verdict (never its status), and on standard
/// error when `echo` (not when the human report shows them: the same line
/// twice); they and the interventions the queue did not take go to
/// `emergency.log` where possible. What became of those interventions
/// extends the note of what sent them there; when `emergency.log` could
/// not take them either, the note of why, and standard error has them.
fn report(
    state_dir: &state::StateDir,
    verdict: &mut Verdict,
    err: &mut dyn Write,
    echo: bool,
    mut notes: Notes,
    emergency: &Emergency,
) {
    let who = verdict
        .run_id
        .as_deref()
        .map_or_else(never_started, |id| format!("run {id}"));
    let now = state::now_rfc3339();
    let mut lines = emergency.lines.clone();
    lines.extend(notes.texts().map(|note| format!("{now} {who}: {note}")));
    let written = state::append_emergency(state_dir, &lines);
    let file = state::emergency_file(state_dir);
    let file = file.display();
    // What kept `emergency.log` from its lines is said once, however
    // many it lost: they are its consequences.
    let lost = written.as_ref().err().map(|e| {
        if state::state_dir_unusable(&mut notes, state_dir) {
            Cause::StateDir
        } else {
            notes.add(Cause::Emergency, e.to_string());
            Cause::Emergency
        }
    });
    for &(n, cause) in &emergency.batches {
        let over = cause == Cause::OverLimits;
        let (cause, said) = match lost {
            None if over => (
                cause,
                format!("{n} intervention(s) over the queue's limits were written to `{file}`"),
            ),
            None => (
                cause,
                format!("{n} intervention(s) were written to `{file}` instead of the queue"),
            ),
            Some(lost) if over => (
                lost,
                format!("{n} intervention(s) over the queue's limits were not kept: they are on standard error only"),
            ),
            Some(lost) => (
                lost,
                format!("{n} intervention(s) the queue could not take were not kept either: they are on standard error only"),
            ),
        };
        notes.add(cause, said);
    }
    for note in notes.into_texts() {
        if echo {
            let _ = writeln!(err, "warning: {note}");
        }
        verdict.notes.push(note);
    }
    if written.is_err() && !emergency.lines.is_empty() {
        let _ = writeln!(err, "warning: what `emergency.log` could not keep:");
        for line in &emergency.lines {
            let _ = writeln!(err, "  {line}");
        }
    }
}

/// Waits for the pruning this run started, then takes the state lock: both
/// within one `wait` from now (the pruning began waiting earlier, so it
/// gives up first). Why the pruning did not finish, and the lock.
fn lock_after_pruning(
    state_dir: &state::StateDir,
    pruning: Option<state::Pruning>,
    wait: Duration,
) -> (Option<Unpruned>, std::io::Result<StateLock>) {
    let since = Instant::now();
    let pruned = pruning.map(state::Pruning::finish).and_then(Result::err);
    (pruned, StateLock::acquire_within(state_dir, since, wait))
}

/// Moves the queue's unreadable lines to `emergency.log`, each once, as it
/// was, with when, which line and why, and says so in the verdict's notes.
/// Under the state lock. Returns whether they were moved: then the caller
/// writes the queue without them. Lines that cannot be written there stay
/// in the queue.
fn move_unreadable(
    state_dir: &state::StateDir,
    queue: &mut Queue,
    now: &str,
    run_id: Option<&str>,
    verdict: &mut Verdict,
    notes: &mut Notes,
) -> bool {
    if queue.unreadable().is_empty() {
        return false;
    }
    let who = run_id.map_or_else(never_started, |id| format!("run {id}"));
    let file = state::queue_file(state_dir);
    let lines: Vec<Vec<u8>> = queue
        .unreadable()
        .iter()
        .map(|u| {
            let mut line = format!(
                "{now} {who}: line {} of `{}` could not be read ({}); moved here as it was: ",
                u.line,
                file.display(),
                u.reason
            )
            .into_bytes();
            line.extend_from_slice(&u.bytes);
            line
        })
        .collect();
    let numbers: Vec<String> = queue
        .unreadable()
        .iter()
        .map(|u| u.line.to_string())
        .collect();
    let which = format!(
        "{} unreadable line(s) of `{}` (line {})",
        numbers.len(),
        file.display(),
        numbers.join(", ")
    );
    match state::append_emergency(state_dir, &lines) {
        Ok(()) => {
            queue.take_unreadable();
            verdict.notes.push(format!(
                "{which} were moved to `{}`",
                state::emergency_file(state_dir).display()
            ));
            true
        }
        Err(e) => {
            notes.add(
                Cause::UnreadableLines,
                format!("{which} stay where they are: {e}"),
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(run_id: &str) -> Verdict {
        let mut verdict = Verdict::stopped(
            Profile::Auto,
            Some("implementation".to_string()),
            gate::VerdictError {
                kind: "internal",
                message: format!("it broke in {run_id}"),
                problems: Vec::new(),
            },
        );
        verdict.run_id = Some(run_id.to_string());
        verdict
    }

    #[test]
    fn a_run_that_cannot_take_the_lock_keeps_its_interventions_in_emergency_log() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = state::StateDir::new(dir.path().to_path_buf(), state::Sharing::Umask);
        let _held = StateLock::acquire(&state_dir, Duration::ZERO).unwrap();
        let config = crate::config::load(dir.path()).unwrap();
        let wait = Duration::from_millis(100);
        let mut verdict = stopped("r1");
        let mut err = Vec::new();
        let facts = RunFacts {
            session: None,
            work_tree: ".".to_string(),
            selection: SelectionRecord::default(),
            pruning: None,
            notes_shown: false,
            notes: Notes::default(),
            input: None,
        };
        record_run_within(
            &state_dir,
            &config,
            facts,
            &mut verdict,
            &|_| {},
            &mut err,
            wait,
        );
        let mut stopped_too = stopped("r2");
        record_stopped_within(&state_dir, &mut stopped_too, None, &mut err, wait);

        let emergency = std::fs::read_to_string(state::emergency_file(&state_dir)).unwrap();
        for (run, verdict) in [("r1", &verdict), ("r2", &stopped_too)] {
            assert!(
                emergency.contains(&format!("{run} Critical internal: it broke in {run}")),
                "{emergency}"
            );
            // The lock, and where the records went for want of it: one
            // note.
            assert_eq!(verdict.notes.len(), 1, "{:#?}", verdict.notes);
            let note = &verdict.notes[0];
            assert!(
                note.contains("not recorded: another phasegate run")
                    && note.contains("; 1 intervention(s) were written to"),
                "{note}"
            );
        }
    }

    #[test]
    fn interventions_a_queue_that_cannot_be_written_would_lose_go_to_emergency_log() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = state::StateDir::new(dir.path().to_path_buf(), state::Sharing::Umask);
        let config = crate::config::load(dir.path()).unwrap();
        // The queue reads, but its new content cannot be written: a
        // directory stands where it is written first.
        let temp = dir
            .path()
            .join(format!(".interventions.jsonl.tmp-{}", std::process::id()));
        std::fs::create_dir_all(&temp).unwrap();
        let mut verdict = stopped("r1");
        let mut err = Vec::new();
        let facts = RunFacts {
            session: None,
            work_tree: ".".to_string(),
            selection: SelectionRecord::default(),
            pruning: None,
            notes_shown: false,
            notes: Notes::default(),
            input: None,
        };
        record_run(&state_dir, &config, facts, &mut verdict, &|_| {}, &mut err);
        let mut stopped_too = stopped("r2");
        record_stopped(&state_dir, &mut stopped_too, None, &mut err);

        let emergency = std::fs::read_to_string(state::emergency_file(&state_dir)).unwrap();
        for (run, verdict) in [("r1", &verdict), ("r2", &stopped_too)] {
            let kept = emergency
                .lines()
                .filter_map(|line| serde_json::from_str::<state::Intervention>(line).ok())
                .find(|record| record.run_id.as_deref() == Some(run))
                .unwrap_or_else(|| panic!("{run}'s record is not in emergency.log:\n{emergency}"));
            assert_eq!(kept.message, format!("it broke in {run}"));
            assert_eq!(verdict.interventions, [kept.id]);
            assert_eq!(verdict.notes.len(), 1, "{:#?}", verdict.notes);
            let note = &verdict.notes[0];
            assert!(
                note.contains("failed to write the intervention queue")
                    && note.contains("; 1 intervention(s) were written to"),
                "{note}"
            );
        }
    }

    #[test]
    fn pruning_and_recording_share_one_wait_for_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = state::StateDir::new(dir.path().to_path_buf(), state::Sharing::Umask);
        let _held = StateLock::acquire(&state_dir, Duration::ZERO).unwrap();
        let wait = Duration::from_millis(1500);
        let started = Instant::now();
        let pruning = state::Pruning::start(&state_dir, None, 1, wait);
        let (pruned, locked) = lock_after_pruning(&state_dir, Some(pruning), wait);
        let waited = started.elapsed();
        assert!(pruned.is_some_and(
            |p| matches!(p, Unpruned::Unlocked(_)) && p.to_string().contains("has held")
        ));
        assert!(locked.is_err());
        // Each waiting its own `wait`, one after the other, took twice it.
        assert!(
            waited < wait * 3 / 2,
            "waited {waited:?} for a wait of {wait:?}"
        );
    }
}
