//! What a run says of its state when something goes wrong there: one note
//! per cause. A second consequence of a cause already noted extends that
//! note instead of saying the cause again. It decides nothing and prints
//! nothing: the caller puts the notes in the verdict.

/// What a note is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The state directory is not a directory: nothing can be kept there.
    StateDir,
    /// This run's directory could not be made under the state directory.
    RunDir,
    /// The state lock could not be taken.
    Lock,
    /// Old runs could not be pruned.
    Pruning,
    /// A killed run's temporary files could not be removed.
    Temps,
    /// `state.json` could not be read or written.
    History,
    /// The intervention queue could not be read.
    QueueUnreadable,
    /// The intervention queue could not be written.
    QueueUnwritable,
    /// Unreadable lines of the queue could not be moved.
    UnreadableLines,
    /// Interventions went over the queue's limits.
    OverLimits,
    /// `emergency.log` could not be appended to.
    Emergency,
}

/// The notes, in the order their causes were first met.
#[derive(Debug, Default)]
pub struct Notes(Vec<(Cause, String)>);

impl Notes {
    /// Says `text` of `cause`: its note the first time, then one more
    /// consequence of that note.
    pub fn add(&mut self, cause: Cause, text: impl Into<String>) {
        let text = text.into();
        match self.0.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, note)) => {
                note.push_str("; ");
                note.push_str(&text);
            }
            None => self.0.push((cause, text)),
        }
    }

    /// Begins the note of `cause` with `statement`, unless it has one.
    pub fn begin(&mut self, cause: Cause, statement: impl FnOnce() -> String) {
        if !self.has(cause) {
            self.0.push((cause, statement()));
        }
    }

    pub fn has(&self, cause: Cause) -> bool {
        self.0.iter().any(|(c, _)| *c == cause)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The notes as they read now.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(_, note)| note.as_str())
    }

    pub fn into_texts(self) -> impl Iterator<Item = String> {
        self.0.into_iter().map(|(_, note)| note)
    }
}

/// Begins the note of a state directory that is not a directory (a file
/// stands at `state_dir`), when that is so: whatever the run cannot keep
/// there is a consequence of it. Whether it is so. Asked only once
/// something under `state_dir` failed.
pub fn state_dir_unusable(notes: &mut Notes, state_dir: &std::path::Path) -> bool {
    let unusable = std::fs::metadata(state_dir).is_ok_and(|m| !m.is_dir());
    if unusable {
        notes.begin(Cause::StateDir, || {
            format!(
                "phasegate keeps its state in `{}`: it is not a directory; move that file aside (or remove it) and phasegate makes the directory again",
                state_dir.display()
            )
        });
    }
    unusable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consequence_of_a_cause_noted_extends_its_note() {
        let mut notes = Notes::default();
        notes.add(Cause::Lock, "the run was not recorded: held");
        notes.add(Cause::History, "failed to read `state.json`");
        notes.add(
            Cause::Lock,
            "2 intervention(s) were written to `emergency.log`",
        );
        notes.begin(Cause::Lock, || "said again".to_string());
        let texts: Vec<String> = notes.into_texts().collect();
        assert_eq!(
            texts,
            [
                "the run was not recorded: held; 2 intervention(s) were written to `emergency.log`",
                "failed to read `state.json`",
            ]
        );
    }
}
