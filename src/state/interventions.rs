//! The intervention queue, `interventions.jsonl`: every failure, error and
//! incomplete verification becomes a record a person can act on, with
//! backpressure so a looping agent cannot flood it. Nothing is dropped:
//! what the queue will not take goes to `emergency.log`.
//!
//! Backpressure, in this order: a session with 5 open records merges
//! further ones into its record of the same type; an error type with 10
//! open records grows the newest one's occurrence count; past 50 open
//! records, the rest overflow to `emergency.log`.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::lock::write_atomic;

pub const MAX_OPEN: usize = 50;
pub const MAX_PER_SESSION: usize = 5;
pub const MAX_PER_TYPE: usize = 10;

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
    pub session: Option<String>,
    pub run_id: String,
    pub message: String,
    pub occurrences: u32,
    /// `open` or `resolved`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
    pub note: Option<String>,
}

/// A new intervention, before the queue places it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIntervention {
    pub kind: String,
    pub priority: Priority,
    pub check: Option<String>,
    pub message: String,
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
    pub run_id: &'a str,
    pub now: &'a str,
}

#[derive(Debug, Default)]
pub struct Queue {
    pub records: Vec<Intervention>,
}

pub fn queue_file(state_dir: &Path) -> PathBuf {
    state_dir.join("interventions.jsonl")
}

pub fn emergency_file(state_dir: &Path) -> PathBuf {
    state_dir.join("emergency.log")
}

impl Queue {
    /// Reads the queue. A line that cannot be read is kept in
    /// `emergency.log` rather than lost; the rest are read.
    pub fn load(state_dir: &Path) -> io::Result<(Queue, Vec<String>)> {
        let text = match fs::read_to_string(queue_file(state_dir)) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok((Queue::default(), Vec::new()))
            }
            Err(e) => return Err(e),
        };
        let mut queue = Queue::default();
        let mut unreadable = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Intervention>(line) {
                Ok(record) => queue.records.push(record),
                Err(_) => unreadable.push(line.to_string()),
            }
        }
        Ok((queue, unreadable))
    }

    pub fn save(&self, state_dir: &Path) -> io::Result<()> {
        let mut bytes = Vec::new();
        for record in &self.records {
            serde_json::to_writer(&mut bytes, record).map_err(io::Error::other)?;
            bytes.push(b'\n');
        }
        write_atomic(&queue_file(state_dir), &bytes)
    }

    fn open(&self) -> impl Iterator<Item = &Intervention> {
        self.records.iter().filter(|r| r.status == "open")
    }

    fn next_id(&self) -> String {
        let highest = self
            .records
            .iter()
            .filter_map(|r| r.id.strip_prefix("iv-").and_then(|n| n.parse::<u64>().ok()))
            .max()
            .unwrap_or(0);
        format!("iv-{:04}", highest + 1)
    }

    fn bump(&mut self, id: &str, now: &str) -> Placement {
        if let Some(record) = self.records.iter_mut().find(|r| r.id == id) {
            record.occurrences += 1;
            now.clone_into(&mut record.updated_at);
        }
        Placement::Merged(id.to_string())
    }

    /// Places a new intervention under the backpressure rules.
    pub fn add(&mut self, new: NewIntervention, origin: &Origin<'_>) -> Placement {
        let record = Intervention {
            id: String::new(),
            kind: new.kind,
            priority: new.priority,
            phase: origin.phase.to_string(),
            check: new.check,
            session: origin.session.map(str::to_string),
            run_id: origin.run_id.to_string(),
            message: new.message,
            occurrences: 1,
            status: "open".to_string(),
            created_at: origin.now.to_string(),
            updated_at: origin.now.to_string(),
            note: None,
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
                    Some(id) => self.bump(&id, origin.now),
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
                return self.bump(&newest.clone(), origin.now);
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

    /// Marks `id` resolved with a note; false when there is no such record.
    /// Resolved again, the new note follows the earlier ones: none is lost.
    pub fn resolve(&mut self, id: &str, note: &str, now: &str) -> bool {
        match self.records.iter_mut().find(|r| r.id == id) {
            Some(record) => {
                record.status = "resolved".to_string();
                record.note = Some(match record.note.take().filter(|n| !n.is_empty()) {
                    Some(earlier) => format!("{earlier}\n{note}"),
                    None => note.to_string(),
                });
                now.clone_into(&mut record.updated_at);
                true
            }
            None => false,
        }
    }
}

/// Appends lines to `emergency.log`, flushed to disk.
pub fn append_emergency(state_dir: &Path, lines: &[String]) -> io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    fs::create_dir_all(state_dir)?;
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(emergency_file(state_dir))?;
    for line in lines {
        writeln!(file, "{line}")?;
    }
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(kind: &str) -> NewIntervention {
        NewIntervention {
            kind: kind.to_string(),
            priority: Priority::High,
            check: Some("tests".to_string()),
            message: "failed".to_string(),
        }
    }

    fn origin(session: Option<&str>) -> Origin<'_> {
        Origin {
            phase: "implementation",
            session,
            run_id: "r",
            now: "2026-11-22T00:00:00Z",
        }
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
        assert!(q.resolve("iv-0001", "fixed", "later"));
        assert!(q.resolve("iv-0001", "and fixed again", "later still"));
        assert_eq!(q.records[0].note.as_deref(), Some("fixed\nand fixed again"));
        assert!(matches!(
            q.add(new("another"), &origin(None)),
            Placement::Created(_)
        ));
    }
}
