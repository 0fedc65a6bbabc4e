//! The intervention queue, `interventions.jsonl`: every failure, error and
//! incomplete verification becomes a record a person can act on, with
//! backpressure so a looping agent cannot flood it. Nothing is dropped:
//! what the queue will not take goes to `emergency.log`.
//!
//! The same error again, while its record is open, is one more occurrence
//! of that record, never a record of its own (`Queue::add` says what "the
//! same" is). Then backpressure, in this order: a session with 5 open
//! records merges further ones into its record of the same type; an error
//! type with 10 open records grows the newest one's occurrence count; past
//! 50 open records, the rest overflow to `emergency.log`. A record that
//! takes in one of another check names that check too (`checks`).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::lock::write_atomic;

pub const MAX_OPEN: usize = 50;
pub const MAX_PER_SESSION: usize = 5;
pub const MAX_PER_TYPE: usize = 10;
/// Resolved records the queue keeps, the newest (`Queue::save`).
pub const MAX_RESOLVED: usize = 200;
/// The runs a record names (`Intervention::runs`), the newest: an agent
/// looping for days keeps one line of the queue short.
pub const MAX_RUNS: usize = 20;
/// The type of the record a streak of the same errors escalates to
/// (`gate::repeated_intervention`).
pub const ERRORS_REPEATED: &str = "errors_repeated";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// phasegate's own state or an internal failure.
    Critical,
    /// A check's tool failed, is missing, or a permission was denied.
    High,
    /// Output that could not be parsed (tier 3), an invalid handoff.
    Medium,
    /// A limit was reached.
    Low,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Intervention {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub priority: Priority,
    pub phase: String,
    pub check: Option<String>,
    /// Every check this record stands for, its own `check` first: one of
    /// its type from another check merged into it under backpressure is
    /// named here, since `check` holds one name. Empty for a record of no
    /// check.
    #[serde(default)]
    pub checks: Vec<String>,
    pub session: Option<String>,
    /// The branch its runs were on, when one run can tell that what it
    /// reports is over (`Queue::close_over`): `Some(None)` (JSON `null`)
    /// for runs on no branch (a detached `HEAD`, a run outside a
    /// repository). `None` (absent) when that is not known: a record of
    /// an earlier version, or one that took in an error of another branch
    /// or phase (`Intervention::seen_on`); a person closes those.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "branch_known"
    )]
    pub branch: Option<Option<String>>,
    /// The newest run it occurred in: that run's logs are the ones a
    /// person reads (the oldest run directories are pruned). `None` (JSON
    /// `null`) when that occurrence had no run: a run stopped before its
    /// checks started (another run held the unstaged changes, say) gets
    /// no id and leaves no directory. Earlier versions wrote `""` there,
    /// read as `None`.
    #[serde(default, deserialize_with = "run_named")]
    pub run_id: Option<String>,
    /// The runs it occurred in, oldest first, `run_id` last when it has
    /// one: its first and every one merged into it since; an occurrence
    /// with no run is counted in `occurrences` alone. The newest
    /// `MAX_RUNS` are kept; `runs_omitted` counts the older ones let go.
    /// Empty in records of earlier versions until they take in another
    /// occurrence.
    #[serde(default, deserialize_with = "runs_named")]
    pub runs: Vec<String>,
    /// How many older runs `runs` no longer names.
    #[serde(default, skip_serializing_if = "crate::gate::is_zero")]
    pub runs_omitted: usize,
    pub message: String,
    /// How many times it occurred: once, and once for every error merged
    /// into it (the same error again, or one backpressure merged).
    pub occurrences: u32,
    /// `open` or `resolved`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    pub note: Option<String>,
    /// What tells the same error again (`NewIntervention::fingerprint`);
    /// absent in records of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl Intervention {
    /// Whether `new`, of a run from `origin`, is this record's error again
    /// (see `Queue::add`).
    fn is_same(&self, new: &NewIntervention, origin: &Origin<'_>) -> bool {
        self.kind == new.kind
            && self.check == new.check
            && self.phase == origin.phase
            && self.session.as_deref() == origin.session
            // The same error on another branch is another piece of work,
            // over when that branch's run shows it is. A record whose
            // branch is not known (an earlier version's) takes in no run
            // whose branch is: the new record can be closed by a run.
            && self
                .same_branch(origin)
                .unwrap_or(origin.branch.is_none())
            && match &self.fingerprint {
                Some(fingerprint) => *fingerprint == new.fingerprint,
                None => self.message == new.message,
            }
    }

    /// Counts one more occurrence, in the run `run_id`, which becomes the
    /// newest run it occurred in (`None`: one stopped before it had an
    /// id, which `runs` cannot name).
    fn occurred_in(&mut self, run_id: Option<&str>, now: &str) {
        // A count at its ceiling (a hand edit) stays there.
        self.occurrences = self.occurrences.saturating_add(1);
        now.clone_into(&mut self.updated_at);
        // A record of an earlier version knew its newest run only.
        if self.runs.is_empty() {
            self.runs.extend(self.run_id.clone());
        }
        if let Some(run_id) = run_id {
            if self.runs.last().map(String::as_str) != Some(run_id) {
                self.runs.push(run_id.to_string());
            }
        }
        if self.runs.len() > MAX_RUNS {
            let over = self.runs.len() - MAX_RUNS;
            self.runs.drain(..over);
            self.runs_omitted = self.runs_omitted.saturating_add(over);
        }
        self.run_id = run_id.map(str::to_string);
    }

    /// Takes in an occurrence of a run from `origin`: a record that now
    /// stands for runs on two branches, or of two phases, no longer has
    /// one place a later run could show it over (`Queue::close_over`).
    fn seen_on(&mut self, origin: &Origin<'_>) {
        let one_place = self.phase == origin.phase && self.same_branch(origin) == Some(true);
        if !one_place {
            self.branch = None;
        }
    }

    /// Whether the run `origin` is on this record's branch (no branch
    /// matching no branch); `None` when either branch is not known.
    fn same_branch(&self, origin: &Origin<'_>) -> Option<bool> {
        Some(self.branch.as_ref()?.as_deref() == origin.branch?)
    }

    /// Names `check` among the checks this record stands for.
    fn stands_for(&mut self, check: Option<&str>) {
        if let Some(check) = check {
            if !self.checks.iter().any(|c| c == check) {
                self.checks.push(check.to_string());
            }
        }
    }
}

/// A record's `run_id`: an empty one, as earlier versions wrote for a run
/// with no id, names no run.
fn run_named<'de, D: serde::Deserializer<'de>>(from: D) -> Result<Option<String>, D::Error> {
    let run_id = Option::<String>::deserialize(from)?;
    Ok(run_id.filter(|id| !id.is_empty()))
}

/// A record's `branch` when the field is there: `null` is no branch, as
/// a detached `HEAD` has, not a branch unknown (the field absent).
#[expect(
    clippy::option_option,
    reason = "the three cases of `Intervention::branch`: none, this one, not known"
)]
fn branch_known<'de, D: serde::Deserializer<'de>>(
    from: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(from).map(Some)
}

/// A record's `runs`, without the empty ids earlier versions wrote for
/// runs with no id.
fn runs_named<'de, D: serde::Deserializer<'de>>(from: D) -> Result<Vec<String>, D::Error> {
    let mut runs = Vec::<String>::deserialize(from)?;
    runs.retain(|id| !id.is_empty());
    Ok(runs)
}

/// A new intervention, before the queue places it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIntervention {
    pub kind: String,
    pub priority: Priority,
    pub check: Option<String>,
    pub message: String,
    /// What makes a later intervention the same error: for a check that
    /// failed on an error, that error's `Diagnostic::fingerprint` (its
    /// tool, code, file and message with numbers normalised, never its
    /// line), as `state.json` tells errors repeating; otherwise its
    /// message's, read the same way.
    pub fingerprint: String,
}

/// Where a new intervention went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    Created(String),
    /// Counted as one more occurrence of this record.
    Merged(String),
    /// Over every limit: written to `emergency.log`.
    Overflow(Box<Intervention>),
}

/// The context every record of one run shares.
#[derive(Debug, Clone)]
pub struct Origin<'a> {
    pub phase: &'a str,
    pub session: Option<&'a str>,
    /// `None` for a run stopped before it had an id.
    pub run_id: Option<&'a str>,
    /// The branch the run was on (`Some(None)`: none, on a detached
    /// `HEAD` or outside a repository); `None` when it is not known (a
    /// run stopped before it looked).
    pub branch: Option<Option<&'a str>>,
    pub now: &'a str,
}

#[derive(Debug, Default)]
pub struct Queue {
    pub records: Vec<Intervention>,
    /// Lines that could not be read, kept as they were.
    unreadable: Vec<Unreadable>,
    /// The highest id number given out to a record the queue no longer
    /// holds (`interventions.last-id`): an unreadable line moved to
    /// `emergency.log` takes its id along, and a verdict or a person may
    /// still name it, so no later record gets it.
    retired: u64,
    /// Whether `retired` grew since the queue was read: `save` writes it.
    retired_grew: bool,
}

/// A line of `interventions.jsonl` that is no record (a torn write, bytes
/// that are not UTF-8, hand edits): kept byte for byte, never dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// Its line number in the file, from 1.
    pub line: usize,
    pub bytes: Vec<u8>,
    /// Why it could not be read.
    pub reason: String,
    /// How many records came before it: where it goes back when the queue
    /// is written again.
    after: usize,
}

pub fn queue_file(state_dir: &Path) -> PathBuf {
    state_dir.join("interventions.jsonl")
}

pub fn emergency_file(state_dir: &Path) -> PathBuf {
    state_dir.join("emergency.log")
}

/// Where the highest id of the records that left the queue is kept.
pub fn retired_file(state_dir: &Path) -> PathBuf {
    state_dir.join("interventions.last-id")
}

/// The number of an id `iv-0007`.
fn id_number(id: &str) -> Option<u64> {
    id.strip_prefix("iv-").and_then(|n| n.parse::<u64>().ok())
}

/// The number of the id an unreadable line still shows, when it shows
/// one: the record's id was given out, whatever became of the rest of it.
/// A line of JSON that is no record (a field of the wrong type) has its
/// `id` wherever it is; a line cut short, or with bytes that are not
/// UTF-8, shows it where phasegate writes it, first (`{"id":"iv-0007",`).
fn legible_id(bytes: &[u8]) -> Option<u64> {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) {
        return value.get("id")?.as_str().and_then(id_number);
    }
    let text = String::from_utf8_lossy(bytes);
    let after_key = text.trim_start().strip_prefix('{')?.trim_start();
    let value = after_key
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix("\"iv-")?;
    // Its closing quote says the number was not cut short.
    let end = value.find(|c: char| !c.is_ascii_digit())?;
    if !value[end..].starts_with('"') {
        return None;
    }
    value[..end].parse::<u64>().ok()
}

impl Queue {
    /// Reads the queue. A line that cannot be read (not JSON, not a record,
    /// not UTF-8) is kept aside as it is, and the rest are read; only a
    /// file that cannot be read at all is an error, which names it.
    pub fn load(state_dir: &Path) -> io::Result<Queue> {
        let path = queue_file(state_dir);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Queue::default()),
            Err(e) if e.kind() == io::ErrorKind::IsADirectory || path.is_dir() => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "failed to read the intervention queue `{}`: it is a directory ({e}); move it aside and phasegate begins a new queue",
                        path.display()
                    ),
                ))
            }
            Err(e) => {
                return Err(super::io_error(
                    state_dir,
                    &path,
                    "read the intervention queue",
                    &e,
                ))
            }
        };
        let mut queue = Queue {
            retired: read_retired(state_dir),
            ..Queue::default()
        };
        for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let read = std::str::from_utf8(line)
                .map_err(|e| format!("not UTF-8: {e}"))
                .and_then(|text| {
                    serde_json::from_str::<Intervention>(text).map_err(|e| e.to_string())
                });
            match read {
                Ok(mut record) => {
                    // A record of an earlier version names its check only
                    // in `check`.
                    if record.checks.is_empty() {
                        record.checks.extend(record.check.clone());
                    }
                    queue.records.push(record);
                }
                Err(reason) => queue.unreadable.push(Unreadable {
                    line: index + 1,
                    bytes: line.to_vec(),
                    reason,
                    after: queue.records.len(),
                }),
            }
        }
        Ok(queue)
    }

    /// The lines that could not be read, in file order.
    pub fn unreadable(&self) -> &[Unreadable] {
        &self.unreadable
    }

    /// Takes the unreadable lines out: the queue is written without them,
    /// and remembers the ids they show, which stay given out.
    pub fn take_unreadable(&mut self) -> Vec<Unreadable> {
        let taken = std::mem::take(&mut self.unreadable);
        if let Some(highest) = taken.iter().filter_map(|u| legible_id(&u.bytes)).max() {
            if highest > self.retired {
                self.retired = highest;
                self.retired_grew = true;
            }
        }
        taken
    }

    /// Writes the queue atomically: the records, and each unreadable line
    /// still held back where it was among them. The ids of the lines taken
    /// out are remembered first, so that a kill in between never leaves
    /// them free to be given out again.
    ///
    /// Only the newest `MAX_RESOLVED` resolved records are written (those
    /// resolved last): every failure makes a record, and a queue that kept
    /// them all would grow with every run, and every run and every
    /// `interventions` read it whole. Open records are all kept (the
    /// limits of `add` bound them); the ids of those left out stay given
    /// out (`interventions.last-id`).
    pub fn save(&self, state_dir: &super::StateDir) -> io::Result<()> {
        let left_out = self.resolved_beyond(MAX_RESOLVED);
        let retired = left_out
            .iter()
            .filter_map(|&index| id_number(&self.records[index].id))
            .fold(self.retired, u64::max);
        if self.retired_grew || retired > self.retired {
            let path = retired_file(state_dir);
            write_atomic(
                &path,
                format!("iv-{retired:04}\n").as_bytes(),
                state_dir.sharing,
            )
            .map_err(|e| {
                super::io_error(state_dir, &path, "write the highest intervention id to", &e)
            })?;
        }
        let mut bytes = Vec::new();
        let mut unreadable = self.unreadable.iter().peekable();
        for (index, record) in self.records.iter().enumerate() {
            while let Some(line) = unreadable.next_if(|u| u.after <= index) {
                bytes.extend_from_slice(&line.bytes);
                bytes.push(b'\n');
            }
            if left_out.binary_search(&index).is_ok() {
                continue;
            }
            serde_json::to_writer(&mut bytes, record).map_err(io::Error::other)?;
            bytes.push(b'\n');
        }
        for line in unreadable {
            bytes.extend_from_slice(&line.bytes);
            bytes.push(b'\n');
        }
        let path = queue_file(state_dir);
        write_atomic(&path, &bytes, state_dir.sharing)
            .map_err(|e| super::io_error(state_dir, &path, "write the intervention queue", &e))
    }

    /// The places of the resolved records beyond the newest `keep` (by
    /// when they were last updated, which resolving them was, then by
    /// their place in the queue), sorted.
    fn resolved_beyond(&self, keep: usize) -> Vec<usize> {
        let mut resolved: Vec<usize> = (0..self.records.len())
            .filter(|&i| self.records[i].status == "resolved")
            .collect();
        if resolved.len() <= keep {
            return Vec::new();
        }
        resolved.sort_by(|&a, &b| {
            self.records[a]
                .updated_at
                .cmp(&self.records[b].updated_at)
                .then(a.cmp(&b))
        });
        resolved.truncate(resolved.len() - keep);
        resolved.sort_unstable();
        resolved
    }

    fn open(&self) -> impl Iterator<Item = &Intervention> {
        self.records.iter().filter(|r| r.status == "open")
    }

    /// One more than the highest id ever given out: the records', the
    /// unreadable lines' (still in the file, or moved out since). A queue
    /// edited by hand may hold the highest number there is
    /// (`iv-18446744073709551615`): then the lowest number no record has,
    /// never one in use.
    fn next_id(&self) -> String {
        let used: std::collections::BTreeSet<u64> = self
            .records
            .iter()
            .filter_map(|r| id_number(&r.id))
            .chain(self.unreadable.iter().filter_map(|u| legible_id(&u.bytes)))
            .collect();
        let highest = used.last().copied().unwrap_or(0).max(self.retired);
        let next = highest
            .checked_add(1)
            .or_else(|| (1..=u64::MAX).find(|n| !used.contains(n)))
            .unwrap_or(highest);
        format!("iv-{next:04}")
    }

    /// Counts one more occurrence on the record `id`, of a like error of
    /// `check`, which it stands for from now on.
    fn bump(&mut self, id: &str, check: Option<&str>, origin: &Origin<'_>) -> Placement {
        if let Some(record) = self.records.iter_mut().find(|r| r.id == id) {
            record.occurred_in(origin.run_id, origin.now);
            record.seen_on(origin);
            record.stands_for(check);
        }
        Placement::Merged(id.to_string())
    }

    /// Places a new intervention: on its open record when it is the same
    /// error again, else under the backpressure rules.
    ///
    /// The same error is one of the same type, check, phase and session
    /// whose fingerprint is the record's (`NewIntervention::fingerprint`):
    /// as for `state.json`'s repeated errors, a line that moved or a count
    /// that changed in the message leaves it the same error, another file
    /// or another message does not. The session is part of it: another
    /// agent meeting that error is news of its own. A record of an earlier
    /// version, which has no fingerprint, is the same error only when its
    /// message is word for word the same. The same error grows its
    /// record's occurrences, and the record takes the newest run's id and
    /// message (where the error is now, and the logs still kept), so an
    /// agent failing one test run after run holds one record, and its
    /// session's slots stay free for its other errors. A resolved record
    /// takes nothing in: an error that comes back after a fix is news.
    pub fn add(&mut self, new: NewIntervention, origin: &Origin<'_>) -> Placement {
        if let Some(record) = self
            .records
            .iter_mut()
            .rev()
            .find(|r| r.status == "open" && r.is_same(&new, origin))
        {
            record.occurred_in(origin.run_id, origin.now);
            record.seen_on(origin);
            record.message = new.message;
            record.fingerprint = Some(new.fingerprint);
            return Placement::Merged(record.id.clone());
        }
        let record = Intervention {
            id: String::new(),
            kind: new.kind,
            priority: new.priority,
            phase: origin.phase.to_string(),
            checks: new.check.iter().cloned().collect(),
            check: new.check,
            session: origin.session.map(str::to_string),
            branch: origin.branch.map(|branch| branch.map(str::to_string)),
            run_id: origin.run_id.map(str::to_string),
            runs: origin.run_id.iter().map(|id| (*id).to_string()).collect(),
            runs_omitted: 0,
            message: new.message,
            occurrences: 1,
            status: "open".to_string(),
            created_at: origin.now.to_string(),
            updated_at: origin.now.to_string(),
            note: None,
            fingerprint: Some(new.fingerprint),
        };
        if let Some(session) = origin.session {
            let mine: Vec<&Intervention> = self
                .open()
                .filter(|r| r.session.as_deref() == Some(session))
                .collect();
            if mine.len() >= MAX_PER_SESSION {
                let same = mine
                    .iter()
                    .rev()
                    .find(|r| r.kind == record.kind)
                    .map(|r| r.id.clone());
                return match same {
                    Some(id) => self.bump(&id, record.check.as_deref(), origin),
                    None => Placement::Overflow(Box::new(record)),
                };
            }
        }
        let of_type: Vec<String> = self
            .open()
            .filter(|r| r.kind == record.kind)
            .map(|r| r.id.clone())
            .collect();
        if of_type.len() >= MAX_PER_TYPE {
            if let Some(newest) = of_type.last() {
                return self.bump(&newest.clone(), record.check.as_deref(), origin);
            }
        }
        if self.open().count() >= MAX_OPEN {
            return Placement::Overflow(Box::new(record));
        }
        let id = self.next_id();
        self.records.push(Intervention {
            id: id.clone(),
            ..record
        });
        Placement::Created(id)
    }

    /// The record a person means by `typed`: its id exactly, or its
    /// number however written (`iv-7`, `7`, `IV-0007` for `iv-0007`), as
    /// ids are said aloud and copied from narrow terminals. A queue edited
    /// by hand may hold two ids of one number (`iv-7` and `iv-0007`): the
    /// exact one is meant, and without one neither is guessed.
    pub fn lookup(&self, typed: &str) -> Lookup<'_> {
        if let Some(record) = self.records.iter().find(|r| r.id == typed) {
            return Lookup::Found(record);
        }
        let typed = typed.trim();
        let digits = match typed.get(..3) {
            Some(prefix) if prefix.eq_ignore_ascii_case("iv-") => &typed[3..],
            _ => typed,
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Lookup::NotFound;
        }
        let Ok(number) = digits.parse::<u64>() else {
            return Lookup::NotFound;
        };
        let found: Vec<&Intervention> = self
            .records
            .iter()
            .filter(|r| id_number(&r.id) == Some(number))
            .collect();
        match found.as_slice() {
            [] => Lookup::NotFound,
            [record] => Lookup::Found(record),
            _ => Lookup::Ambiguous(found.iter().map(|r| r.id.clone()).collect()),
        }
    }

    /// The runs of the streaks a person has answered: those named by a
    /// resolved `errors_repeated` record. Resolving it is the person's
    /// answer to "a person is needed", so a run after it counts the same
    /// errors afresh rather than ending `blocked` again at once; while the
    /// record is open, the streak stands.
    pub fn answered_runs(&self) -> std::collections::HashSet<&str> {
        self.records
            .iter()
            .filter(|r| r.kind == ERRORS_REPEATED && r.status == "resolved")
            .flat_map(|r| r.runs.iter().map(String::as_str).chain(r.run_id.as_deref()))
            .collect()
    }

    /// Whether any record is open: a run closes none of an empty queue,
    /// nor works out what it could close.
    pub fn has_open(&self) -> bool {
        self.open().next().is_some()
    }

    /// Resolves the open records that a run (`run_id`) showed are over,
    /// `shows_over` saying of each whether it is and how (check `tests`
    /// passed): the note names that run and says how, and the record
    /// stays in the queue, resolved. A streak of the same errors
    /// (`ERRORS_REPEATED`, whose resolving is the person's answer: see
    /// `answered_runs`) and phasegate's own failures (`critical`) are
    /// left to a person whatever a run shows. The records closed, in
    /// queue order.
    pub fn close_over(
        &mut self,
        shows_over: impl Fn(&Intervention) -> Option<String>,
        run_id: Option<&str>,
        now: &str,
    ) -> Vec<Closed> {
        let by = run_id.map_or_else(|| format!("a run at {now}"), |id| format!("run {id}"));
        let mut closed = Vec::new();
        for record in &mut self.records {
            if record.status != "open"
                || record.kind == ERRORS_REPEATED
                || record.priority == Priority::Critical
            {
                continue;
            }
            let Some(how) = shows_over(record) else {
                continue;
            };
            record.status = "resolved".to_string();
            let note = format!("resolved by {by}: {how}");
            record.note = Some(match record.note.take().filter(|n| !n.is_empty()) {
                Some(earlier) => format!("{earlier}\n{note}"),
                None => note,
            });
            now.clone_into(&mut record.updated_at);
            closed.push(Closed {
                id: record.id.clone(),
                how,
            });
        }
        closed
    }

    /// Marks `id` resolved with a note. Resolved again, the record stays
    /// resolved and the new note follows the earlier ones, a line each:
    /// none is lost.
    pub fn resolve(&mut self, id: &str, note: &str, now: &str) -> Resolution {
        let Some(record) = self.records.iter_mut().find(|r| r.id == id) else {
            return Resolution::NotFound;
        };
        let already = record.status == "resolved";
        record.status = "resolved".to_string();
        record.note = Some(match record.note.take().filter(|n| !n.is_empty()) {
            Some(earlier) => format!("{earlier}\n{note}"),
            None => note.to_string(),
        });
        now.clone_into(&mut record.updated_at);
        if already {
            Resolution::NoteAdded
        } else {
            Resolution::Resolved
        }
    }
}

/// A record a run closed (`Queue::close_over`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub id: String,
    /// How the run showed it over: check `tests` passed.
    pub how: String,
}

/// Which record a typed id names (`Queue::lookup`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// This record.
    Found(&'a Intervention),
    /// No record has it, exactly or by number.
    NotFound,
    /// Several records have its number (a queue edited by hand), none
    /// its exact form: these.
    Ambiguous(Vec<String>),
}

/// The highest id of the records that left the queue, as
/// `interventions.last-id` keeps it; none (0) when it is not there or
/// does not read as an id, since then no id left it that the file kept.
fn read_retired(state_dir: &Path) -> u64 {
    fs::read_to_string(retired_file(state_dir))
        .ok()
        .and_then(|text| id_number(text.trim()))
        .unwrap_or(0)
}

/// What `Queue::resolve` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// An open record is resolved now.
    Resolved,
    /// The record was resolved already: the note was added to its notes.
    NoteAdded,
    /// There is no record of that id.
    NotFound,
}

/// The size past which `emergency.log` is rotated: its content becomes
/// `emergency.log.1` (replacing the generation before), so the two stay
/// near twice this however long runs overflow the queue.
pub const MAX_EMERGENCY_BYTES: u64 = 1024 * 1024;

/// The older generation of `emergency.log`.
pub fn emergency_old_file(state_dir: &Path) -> PathBuf {
    state_dir.join("emergency.log.1")
}

/// Appends lines to `emergency.log`, flushed to disk. A line is bytes: an
/// unreadable queue line moved here is kept as it was.
///
/// A log that reached `MAX_EMERGENCY_BYTES` is first moved to
/// `emergency.log.1`, and the new one begins with a line saying so and
/// what the generation it replaced held, so nothing leaves without a
/// trace. Runs append after the state lock is let go: the file itself
/// is held with flock(2) while it is rotated and written, and a writer
/// that waited for a log rotated meanwhile opens the new one. Where
/// flock(2) is not to be had, the lines are appended and nothing rotated.
pub fn append_emergency<L: AsRef<[u8]>>(
    state_dir: &super::StateDir,
    lines: &[L],
) -> io::Result<()> {
    append_emergency_within(state_dir, lines, MAX_EMERGENCY_BYTES)
}

/// `append_emergency`, rotating past `limit` bytes.
fn append_emergency_within<L: AsRef<[u8]>>(
    state_dir: &super::StateDir,
    lines: &[L],
    limit: u64,
) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if lines.is_empty() {
        return Ok(());
    }
    let path = emergency_file(state_dir);
    let named = |e: io::Error| {
        // A directory in its place: the raw error names no way out.
        if fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            return io::Error::new(
                e.kind(),
                format!(
                    "failed to append to `{}`: it is a directory ({e}); move it aside and phasegate begins a new log",
                    path.display()
                ),
            );
        }
        super::io_error(state_dir, &path, "append to", &e)
    };
    state_dir.sharing.create_dirs(state_dir).map_err(named)?;
    // A link into a directory that does not exist is said as such.
    super::lock::write_target(&path).map_err(named)?;
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend_from_slice(line.as_ref());
        bytes.push(b'\n');
    }
    let mut rotated: Option<Vec<u8>> = None;
    // A few rounds at most: each one follows a rotation by another run.
    for _ in 0..8 {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(named)?;
        state_dir.sharing.share_file(&file).map_err(named)?;
        // Without the lock (a file system without locks), the lines are
        // still kept: this log is where what nothing else takes goes.
        let locked = super::flock(
            &file,
            super::Lock::Emergency,
            rustix::fs::FlockOperation::LockExclusive,
        )
        .unwrap_or(false);
        if locked {
            // Rotated by another run while this one waited: this file is
            // `emergency.log.1` now.
            let current = fs::metadata(&path).map(|m| m.ino()).ok();
            if current != Some(file.metadata().map_err(named)?.ino()) {
                continue;
            }
            let size = file.metadata().map_err(named)?.len();
            if size >= limit && rotated.is_none() {
                // A link stays: the file it leads to is rotated beside
                // itself, as `state.json` and the queue are written there.
                let real = super::lock::write_target(&path).map_err(named)?;
                let old = if real == path {
                    emergency_old_file(state_dir)
                } else {
                    let mut name = real.file_name().unwrap_or_default().to_os_string();
                    name.push(".1");
                    real.with_file_name(name)
                };
                let replaced = fs::metadata(&old).map(|m| m.len()).ok();
                fs::rename(&real, &old).map_err(named)?;
                let held = if real == path {
                    "emergency.log.1".to_string()
                } else {
                    format!("`{}`", old.display())
                };
                let mut trace = format!(
                    "{} emergency.log reached {size} bytes: what it held is in {held}",
                    super::now_rfc3339()
                );
                if let Some(replaced) = replaced {
                    trace.push_str(&format!(
                        ", which replaced the generation before it ({replaced} bytes)"
                    ));
                }
                trace.push('\n');
                rotated = Some(trace.into_bytes());
                continue;
            }
        }
        let mut all = rotated.take().unwrap_or_default();
        all.extend_from_slice(&bytes);
        file.write_all(&all).map_err(named)?;
        return file.sync_all().map_err(named);
    }
    Err(named(io::Error::other(
        "it was rotated again and again by other runs while this one waited",
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error of `kind` no other call makes: never the same error as
    /// another.
    fn new(kind: &str) -> NewIntervention {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        error(kind, "tests", &format!("error {n}"))
    }

    /// An error of `kind` in `check`, told by its fingerprint.
    fn error(kind: &str, check: &str, fingerprint: &str) -> NewIntervention {
        NewIntervention {
            kind: kind.to_string(),
            priority: Priority::High,
            check: Some(check.to_string()),
            message: format!("check `{check}` failed: {fingerprint}"),
            fingerprint: fingerprint.to_string(),
        }
    }

    fn origin(session: Option<&str>) -> Origin<'_> {
        Origin {
            phase: "implementation",
            session,
            run_id: Some("r"),
            branch: Some(Some("refs/heads/main")),
            now: "2026-11-22T00:00:00Z",
        }
    }

    /// Every failure makes a record: a queue that kept the resolved ones
    /// for good would grow with every run, and be read whole by each.
    #[test]
    fn the_queue_keeps_every_open_record_and_the_newest_resolved_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut queue = Queue::default();
        // Resolved in the reverse of their order: the first ones made
        // are the ones resolved last.
        let total = MAX_RESOLVED + 40;
        for _ in 0..total {
            assert!(matches!(
                queue.add(new("check_failed"), &origin(None)),
                Placement::Created(_)
            ));
            let id = queue.records.last().unwrap().id.clone();
            let n = id_number(&id).unwrap();
            let when = format!("2026-11-23T00:{:02}:{:02}Z", (999 - n) / 60, (999 - n) % 60);
            assert_eq!(queue.resolve(&id, "fixed", &when), Resolution::Resolved);
        }
        for _ in 0..3 {
            queue.add(new("check_failed"), &origin(None));
        }
        queue.save(&crate::state::umask_dir(dir.path())).unwrap();
        fs::write(
            queue_file(dir.path()),
            [
                fs::read(queue_file(dir.path())).unwrap(),
                b"{torn\n".to_vec(),
            ]
            .concat(),
        )
        .unwrap();

        let read = Queue::load(dir.path()).unwrap();
        read.save(&crate::state::umask_dir(dir.path())).unwrap();
        let read = Queue::load(dir.path()).unwrap();
        let open: Vec<&str> = read.open().map(|r| r.id.as_str()).collect();
        assert_eq!(open, ["iv-0241", "iv-0242", "iv-0243"]);
        let resolved: Vec<u64> = read
            .records
            .iter()
            .filter(|r| r.status == "resolved")
            .filter_map(|r| id_number(&r.id))
            .collect();
        assert_eq!(resolved, (1..=200).collect::<Vec<u64>>());
        // The unreadable line is still there, and no id is given twice.
        assert_eq!(read.unreadable().len(), 1);
        assert_eq!(read.next_id(), "iv-0244");
        assert_eq!(
            fs::read_to_string(retired_file(dir.path())).unwrap(),
            "iv-0240\n"
        );
    }

    #[test]
    fn emergency_log_is_rotated_past_its_size_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let line = "x".repeat(99);
        for _ in 0..3 {
            append_emergency_within(&crate::state::umask_dir(dir.path()), &[&line], 250).unwrap();
        }
        // 300 bytes: the next line goes to a new log, which says where
        // the old one went.
        append_emergency_within(
            &crate::state::umask_dir(dir.path()),
            &["first of the second"],
            250,
        )
        .unwrap();
        let old = fs::read_to_string(emergency_old_file(dir.path())).unwrap();
        assert_eq!(old, format!("{line}\n{line}\n{line}\n"));
        let new_log = fs::read_to_string(emergency_file(dir.path())).unwrap();
        let lines: Vec<&str> = new_log.lines().collect();
        assert_eq!(lines.len(), 2, "{new_log}");
        assert!(
            lines[0]
                .ends_with("emergency.log reached 300 bytes: what it held is in emergency.log.1"),
            "{new_log}"
        );
        assert_eq!(lines[1], "first of the second");
        // Rotated again, the trace says what the generation replaced held.
        append_emergency_within(
            &crate::state::umask_dir(dir.path()),
            &[&"y".repeat(300)],
            250,
        )
        .unwrap();
        append_emergency_within(&crate::state::umask_dir(dir.path()), &["third"], 250).unwrap();
        let new_log = fs::read_to_string(emergency_file(dir.path())).unwrap();
        assert!(
            new_log.contains("which replaced the generation before it (300 bytes)"),
            "{new_log}"
        );
        assert!(new_log.ends_with("\nthird\n"), "{new_log}");
        let old = fs::read_to_string(emergency_old_file(dir.path())).unwrap();
        assert!(old.contains("first of the second"), "{old}");
    }

    /// The id of the record `typed` names, when it names one.
    fn found<'a>(q: &'a Queue, typed: &str) -> Option<&'a str> {
        match q.lookup(typed) {
            Lookup::Found(record) => Some(record.id.as_str()),
            _ => None,
        }
    }

    #[test]
    fn an_id_is_found_by_its_number_however_written_and_never_guessed() {
        let mut q = Queue::default();
        for kind in ["a", "b", "c", "d", "e", "f", "g"] {
            q.add(new(kind), &origin(None));
        }
        for typed in ["iv-0007", "iv-7", "7", "0007", "IV-0007", "Iv-7", " iv-7 "] {
            assert_eq!(found(&q, typed), Some("iv-0007"), "{typed}");
        }
        for typed in [
            "iv-0008", "8", "iv-", "", "iv-x7", "-7", "+7", "iv--7", "x-7", "é",
        ] {
            assert_eq!(q.lookup(typed), Lookup::NotFound, "{typed}");
        }
        // A queue edited by hand holds one number twice: the exact id is
        // meant, any other form is refused.
        q.records[0].id = "iv-7".to_string();
        assert_eq!(found(&q, "iv-7"), Some("iv-7"));
        assert_eq!(found(&q, "iv-0007"), Some("iv-0007"));
        assert_eq!(
            q.lookup("7"),
            Lookup::Ambiguous(vec!["iv-7".into(), "iv-0007".into()])
        );
    }

    #[test]
    fn a_session_gets_five_records_then_merges_by_type() {
        let mut q = Queue::default();
        for kind in ["a", "b", "c", "d", "e"] {
            assert!(matches!(
                q.add(new(kind), &origin(Some("s1"))),
                Placement::Created(_)
            ));
        }
        assert_eq!(
            q.add(new("c"), &origin(Some("s1"))),
            Placement::Merged("iv-0003".into())
        );
        assert!(matches!(
            q.add(new("f"), &origin(Some("s1"))),
            Placement::Overflow(_)
        ));
        // Another session is not held back by the first.
        assert!(matches!(
            q.add(new("f"), &origin(Some("s2"))),
            Placement::Created(_)
        ));
        assert_eq!(q.records[2].occurrences, 2);
    }

    #[test]
    fn the_same_error_again_is_one_more_occurrence_of_its_open_record() {
        let mut q = Queue::default();
        let at = |run_id: &'static str, session| Origin {
            phase: "implementation",
            session,
            run_id: Some(run_id),
            branch: Some(Some("refs/heads/main")),
            now: run_id,
        };
        // Five runs of one session failing the same test: one record.
        // (The test moves down a line each time.)
        for (line, run) in ["r1", "r2", "r3", "r4", "r5"].into_iter().enumerate() {
            let mut again = error("check_failed", "tests", "f-test");
            again.message = format!("check `tests` failed: a.rs:{} boom", line + 10);
            q.add(again, &at(run, Some("s1")));
        }
        assert_eq!(q.records.len(), 1, "{:#?}", q.records);
        let record = &q.records[0];
        assert_eq!(record.occurrences, 5);
        assert_eq!(record.message, "check `tests` failed: a.rs:14 boom");
        assert_eq!(
            (record.created_at.as_str(), record.run_id.as_deref()),
            ("r1", Some("r5"))
        );
        assert_eq!(record.updated_at, "r5");
        // The session's other errors still get records of their own.
        for kind in ["lint_failed", "timeout", "missing_tool", "tool_crashed"] {
            let placed = q.add(error(kind, "lint", kind), &at("r6", Some("s1")));
            assert!(
                matches!(placed, Placement::Created(_)),
                "{kind}: {placed:?}"
            );
        }
        // Another error, another check, another phase or another session
        // is not the same error.
        for (new, origin) in [
            (error("check_failed", "tests", "f-other"), at("r7", None)),
            (error("check_failed", "build", "f-test"), at("r7", None)),
            (
                error("check_failed", "tests", "f-test"),
                at("r7", Some("s2")),
            ),
            (
                error("check_failed", "tests", "f-test"),
                Origin {
                    phase: "qa",
                    ..at("r7", Some("s2"))
                },
            ),
        ] {
            let placed = q.add(new, &origin);
            assert!(matches!(placed, Placement::Created(_)), "{placed:?}");
        }
        // Without a session, the same error merges all the same.
        assert_eq!(
            q.add(error("check_failed", "tests", "f-other"), &at("r8", None)),
            Placement::Merged("iv-0006".into())
        );
        // A resolved record takes nothing in: the error came back.
        q.resolve("iv-0006", "fixed", "r9");
        assert_eq!(
            q.add(error("check_failed", "tests", "f-other"), &at("r9", None)),
            Placement::Created("iv-0010".into())
        );
    }

    #[test]
    fn a_record_that_takes_in_another_check_s_error_names_that_check() {
        let mut q = Queue::default();
        let s1 = origin(Some("s1"));
        for kind in ["a", "b", "c", "d"] {
            q.add(error(kind, "tests", kind), &s1);
        }
        q.add(error("check_failed", "tests", "t"), &s1);
        // The session is full: `lint`'s failure merges into `tests`'s.
        assert_eq!(
            q.add(error("check_failed", "lint", "l"), &s1),
            Placement::Merged("iv-0005".into())
        );
        assert_eq!(
            q.add(error("check_failed", "lint", "l2"), &s1),
            Placement::Merged("iv-0005".into())
        );
        let record = &q.records[4];
        assert_eq!(record.check.as_deref(), Some("tests"));
        assert_eq!(record.checks, ["tests", "lint"]);
        assert_eq!(record.occurrences, 3);
        // Ten of a type: the eleventh, of another check, is named too.
        let mut q = Queue::default();
        for n in 0..MAX_PER_TYPE {
            q.add(error("timeout", "tests", &n.to_string()), &origin(None));
        }
        q.add(error("timeout", "build", "b"), &origin(None));
        assert_eq!(q.records[MAX_PER_TYPE - 1].checks, ["tests", "build"]);
        // A record of an earlier version names its check in `check` only,
        // and is the same error when its message is, for a run whose
        // branch is not known either (one stopped before it looked).
        let dir = tempfile::tempdir().unwrap();
        let earlier = r#"{"id":"iv-0001","type":"check_failed","priority":"high","phase":"implementation","check":"tests","session":null,"run_id":"r","message":"check `tests` failed: x","occurrences":1,"status":"open","created_at":"t","updated_at":"t","note":null}"#;
        std::fs::write(queue_file(dir.path()), format!("{earlier}\n")).unwrap();
        let mut q = Queue::load(dir.path()).unwrap();
        assert_eq!(q.records[0].checks, ["tests"]);
        let mut again = error("check_failed", "tests", "x");
        again.message = "check `tests` failed: x".to_string();
        let unknown = Origin {
            branch: None,
            ..origin(None)
        };
        assert_eq!(
            q.add(again.clone(), &unknown),
            Placement::Merged("iv-0001".into())
        );
        assert_eq!(q.records[0].fingerprint.as_deref(), Some("x"));
        // A run on a branch makes a record of its own, which a later run
        // of that branch can close; the earlier one is a person's.
        assert_eq!(
            q.add(again, &origin(None)),
            Placement::Created("iv-0002".into())
        );
    }

    #[test]
    fn an_occurrence_of_no_run_names_none_and_empty_ids_read_as_none() {
        let mut q = Queue::default();
        let stopped = Origin {
            run_id: None,
            ..origin(None)
        };
        q.add(error("internal", "tests", "f"), &stopped);
        let record = &q.records[0];
        assert_eq!((record.run_id.as_deref(), record.runs.len()), (None, 0));
        let line = serde_json::to_value(record).unwrap();
        assert_eq!(line["run_id"], serde_json::Value::Null);
        // Again in a run with an id, then in one without: the run with
        // logs stays named, the newest run is none.
        q.add(error("internal", "tests", "f"), &origin(None));
        q.add(error("internal", "tests", "f"), &stopped);
        let record = &q.records[0];
        assert_eq!(record.occurrences, 3);
        assert_eq!(
            (record.run_id.as_deref(), &record.runs[..]),
            (None, &["r".to_string()][..])
        );
        // Earlier versions wrote `""` for such a run.
        let dir = tempfile::tempdir().unwrap();
        let earlier = r#"{"id":"iv-0001","type":"internal","priority":"critical","phase":"","check":null,"session":null,"run_id":"","runs":[""],"message":"m","occurrences":1,"status":"open","created_at":"t","updated_at":"t","note":null}"#;
        std::fs::write(queue_file(dir.path()), format!("{earlier}\n")).unwrap();
        let q = Queue::load(dir.path()).unwrap();
        assert!(q.unreadable().is_empty());
        assert_eq!(
            (q.records[0].run_id.as_deref(), q.records[0].runs.len()),
            (None, 0)
        );
    }

    #[test]
    fn a_record_keeps_its_branch_and_a_run_closes_only_what_it_may() {
        let on = |branch: Option<&'static str>| Origin {
            branch: Some(branch),
            ..origin(None)
        };
        let mut q = Queue::default();
        q.add(
            error("check_failed", "tests", "f"),
            &on(Some("refs/heads/a")),
        );
        // The same error on another branch is a record of its own.
        assert_eq!(
            q.add(
                error("check_failed", "tests", "f"),
                &on(Some("refs/heads/b"))
            ),
            Placement::Created("iv-0002".into())
        );
        q.add(error("timeout", "tests", "t"), &on(None));
        let line = serde_json::to_value(&q.records[2]).unwrap();
        assert_eq!(line["branch"], serde_json::Value::Null);
        let read: Intervention = serde_json::from_value(line).unwrap();
        assert_eq!(read.branch, Some(None));
        // A record of an earlier version has no `branch`: not known.
        let mut earlier = serde_json::to_value(&q.records[0]).unwrap();
        earlier.as_object_mut().unwrap().remove("branch");
        let read: Intervention = serde_json::from_value(earlier).unwrap();
        assert_eq!(read.branch, None);
        // One that takes in an error of another branch has no one branch.
        for kind in ["c", "d", "e", "f"] {
            q.add(
                error(kind, "x", kind),
                &Origin {
                    session: Some("s"),
                    ..on(Some("refs/heads/a"))
                },
            );
        }
        q.add(
            error("g", "x", "g"),
            &Origin {
                session: Some("s"),
                ..on(Some("refs/heads/a"))
            },
        );
        q.add(
            error("g", "y", "g2"),
            &Origin {
                session: Some("s"),
                ..on(Some("refs/heads/b"))
            },
        );
        assert_eq!(q.records.last().unwrap().branch, None);

        // Whatever a run says, a streak and phasegate's own failures stay
        // open.
        let mut q = Queue::default();
        q.add(error(ERRORS_REPEATED, "tests", "r"), &origin(None));
        let mut own = error("internal", "tests", "i");
        own.priority = Priority::Critical;
        q.add(own, &origin(None));
        q.add(error("check_failed", "tests", "f"), &origin(None));
        let closed = q.close_over(|_| Some("it is over".to_string()), Some("r9"), "later");
        assert_eq!(
            closed,
            [Closed {
                id: "iv-0003".into(),
                how: "it is over".into()
            }]
        );
        assert_eq!(
            q.records[2].note.as_deref(),
            Some("resolved by run r9: it is over")
        );
        assert_eq!(q.records[2].updated_at, "later");
        assert!(!q.records[2..].iter().any(|r| r.status == "open"));
        assert_eq!(q.open().count(), 2);
    }

    #[test]
    fn a_type_gets_ten_records_then_counts_and_fifty_is_the_ceiling() {
        let mut q = Queue::default();
        for _ in 0..10 {
            assert!(matches!(
                q.add(new("timeout"), &origin(None)),
                Placement::Created(_)
            ));
        }
        assert_eq!(
            q.add(new("timeout"), &origin(None)),
            Placement::Merged("iv-0010".into())
        );
        for i in 0..40 {
            assert!(matches!(
                q.add(new(&format!("k{i}")), &origin(None)),
                Placement::Created(_)
            ));
        }
        assert!(matches!(
            q.add(new("another"), &origin(None)),
            Placement::Overflow(_)
        ));
        // Resolving one makes room.
        assert_eq!(q.resolve("iv-0001", "fixed", "later"), Resolution::Resolved);
        assert_eq!(
            q.resolve("iv-0001", "and fixed again", "later still"),
            Resolution::NoteAdded
        );
        assert_eq!(q.resolve("iv-9999", "no such", "now"), Resolution::NotFound);
        assert_eq!(q.records[0].note.as_deref(), Some("fixed\nand fixed again"));
        assert!(matches!(
            q.add(new("another"), &origin(None)),
            Placement::Created(_)
        ));
    }

    #[test]
    fn unreadable_lines_are_kept_in_place_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = Queue::default();
        q.add(new("a"), &origin(None));
        q.add(new("b"), &origin(None));
        q.save(&crate::state::umask_dir(dir.path())).unwrap();
        let good = std::fs::read(queue_file(dir.path())).unwrap();
        let lines: Vec<&[u8]> = good.split(|b| *b == b'\n').collect();
        let mut text = Vec::new();
        text.extend_from_slice(b"{\"id\": \"caf\xe9\"}\n");
        text.extend_from_slice(lines[0]);
        text.push(b'\n');
        text.extend_from_slice(b"not json\n");
        text.extend_from_slice(lines[1]);
        text.extend_from_slice(b"\n{\"id\":\"iv-0003\",\"type\":\"che");
        std::fs::write(queue_file(dir.path()), &text).unwrap();

        let mut q = Queue::load(dir.path()).unwrap();
        assert_eq!(q.records.len(), 2);
        let seen: Vec<(usize, bool)> = q
            .unreadable()
            .iter()
            .map(|u| (u.line, u.reason.starts_with("not UTF-8")))
            .collect();
        assert_eq!(seen, [(1, true), (3, false), (5, false)]);
        assert_eq!(q.resolve("iv-0002", "done", "now"), Resolution::Resolved);
        q.save(&crate::state::umask_dir(dir.path())).unwrap();
        let after = std::fs::read(queue_file(dir.path())).unwrap();
        let after: Vec<&[u8]> = after.split(|b| *b == b'\n').collect();
        let before: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
        // Every line but the resolved record's is as it was, in its place.
        assert_eq!(after.len(), before.len() + 1, "a newline ends the file");
        for i in [0, 1, 2, 4] {
            assert_eq!(after[i], before[i], "line {}", i + 1);
        }
        assert!(String::from_utf8_lossy(after[3]).contains("resolved"));

        let moved = q.take_unreadable();
        assert_eq!(moved.len(), 3);
        q.save(&crate::state::umask_dir(dir.path())).unwrap();
        let q = Queue::load(dir.path()).unwrap();
        assert!(q.unreadable().is_empty());
        assert_eq!(q.records.len(), 2);
    }

    #[test]
    fn the_id_an_unreadable_line_shows_is_never_given_out_again() {
        for (line, id) in [
            (
                &b"{\"id\":\"iv-0007\",\"message\":\"caf\xe9\"}"[..],
                Some(7),
            ),
            (b"{\"id\":\"iv-0012\",\"type\":\"che", Some(12)),
            (
                b"{ \"id\" : \"iv-0003\", \"occurrences\": \"many\" }",
                Some(3),
            ),
            (b"{\"occurrences\": \"x\", \"id\": \"iv-0004\"}", Some(4)),
            // Cut inside the id: which id it was cannot be told.
            (b"{\"id\":\"iv-00", None),
            (b"{\"message\":\"see \\\"id\\\":\\\"iv-0099\\\"\"", None),
            (b"not json", None),
        ] {
            assert_eq!(legible_id(line), id, "{}", String::from_utf8_lossy(line));
        }

        let dir = tempfile::tempdir().unwrap();
        let mut text = Vec::new();
        text.extend_from_slice(b"{\"id\":\"iv-0009\",\"message\":\"caf\xe9\"}\n");
        std::fs::write(queue_file(dir.path()), &text).unwrap();
        let mut q = Queue::load(dir.path()).unwrap();
        assert_eq!(
            q.add(new("a"), &origin(None)),
            Placement::Created("iv-0010".into())
        );
        assert_eq!(q.take_unreadable().len(), 1);
        q.save(&crate::state::umask_dir(dir.path())).unwrap();
        assert_eq!(
            std::fs::read_to_string(retired_file(dir.path())).unwrap(),
            "iv-0009\n"
        );
        // Gone from the queue, the record that held the highest id keeps
        // it given out.
        std::fs::write(queue_file(dir.path()), b"").unwrap();
        let mut q = Queue::load(dir.path()).unwrap();
        assert_eq!(
            q.add(new("b"), &origin(None)),
            Placement::Created("iv-0010".into())
        );
    }

    #[test]
    fn the_highest_id_and_count_there_are_neither_panic_nor_repeat() {
        let mut q = Queue::default();
        q.add(new("a"), &origin(None));
        q.records[0].id = format!("iv-{}", u64::MAX);
        let Placement::Created(id) = q.add(new("b"), &origin(None)) else {
            panic!("not created: {q:?}");
        };
        assert_eq!(id, "iv-0001");
        let Placement::Created(id) = q.add(new("c"), &origin(None)) else {
            panic!("not created: {q:?}");
        };
        assert_eq!(id, "iv-0002");

        // Ten of a type: the eleventh counts on the newest, at its ceiling.
        let mut q = Queue::default();
        for _ in 0..MAX_PER_TYPE {
            q.add(new("timeout"), &origin(None));
        }
        q.records[MAX_PER_TYPE - 1].occurrences = u32::MAX;
        let newest = q.records[MAX_PER_TYPE - 1].id.clone();
        assert_eq!(
            q.add(new("timeout"), &origin(None)),
            Placement::Merged(newest)
        );
        assert_eq!(q.records[MAX_PER_TYPE - 1].occurrences, u32::MAX);
    }
}
