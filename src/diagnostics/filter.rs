//! The changed-line filter: diagnostics outside what the change touched
//! are marked pre-existing. Never dropped: a person still sees them, the
//! gate just does not blame the change for them.

use std::collections::HashMap;

use crate::config::Filter;

use super::Diagnostic;

/// What a change touched, per file (relative to the repository root).
#[derive(Debug, Clone, Default)]
pub struct ChangedLines {
    files: HashMap<String, FileChange>,
    /// Files the diagnostics name that the repository does not have: what
    /// is found there is placed nowhere, and never set aside.
    unplaced: std::collections::HashSet<String>,
}

/// One file's changed lines, as inclusive ranges.
#[derive(Debug, Clone, Default)]
struct FileChange {
    added: Vec<(u32, u32)>,
    hunks: Vec<(u32, u32)>,
}

impl ChangedLines {
    /// The change touched `path` (even if it added no line: a deletion).
    pub fn touch(&mut self, path: &str) {
        self.files.entry(path.to_string()).or_default();
    }

    /// A hunk of `path`, new-side lines `start..=end`.
    pub fn hunk(&mut self, path: &str, start: u32, end: u32) {
        self.files
            .entry(path.to_string())
            .or_default()
            .hunks
            .push((start, end.max(start)));
    }

    /// `path`'s new-side line `line` was added or modified.
    pub fn added(&mut self, path: &str, line: u32) {
        let change = self.files.entry(path.to_string()).or_default();
        match change.added.last_mut() {
            Some((_, end)) if *end + 1 == line => *end = line,
            _ => change.added.push((line, line)),
        }
    }

    /// `path` names no file of the repository.
    pub fn unplaced(&mut self, path: &str) {
        self.unplaced.insert(path.to_string());
    }

    /// Whether `d` is outside what `filter` counts as the change.
    pub fn is_pre_existing(&self, d: &Diagnostic, filter: Filter) -> bool {
        // A finding nobody can place is never set aside.
        let Some(file) = d.file.as_deref() else {
            return false;
        };
        if filter == Filter::Nofilter || self.unplaced.contains(file) {
            return false;
        }
        let Some(change) = self.files.get(file) else {
            return true;
        };
        let ranges = match filter {
            Filter::Added => &change.added,
            Filter::DiffContext => &change.hunks,
            Filter::File | Filter::Nofilter => return false,
        };
        let Some(line) = d.line else {
            return false;
        };
        let end = d.end_line.unwrap_or(line).max(line);
        !ranges.iter().any(|(a, b)| line <= *b && end >= *a)
    }
}

/// Marks the diagnostics outside the change; returns how many.
pub fn mark_pre_existing(
    diagnostics: &mut [Diagnostic],
    filter: Filter,
    changes: &ChangedLines,
) -> usize {
    let mut marked = 0;
    for d in diagnostics {
        d.pre_existing = changes.is_pre_existing(d, filter);
        marked += usize::from(d.pre_existing);
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: Option<u32>) -> Diagnostic {
        Diagnostic {
            file: Some(file.into()),
            line,
            message: "m".into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn each_filter_draws_its_own_line() {
        let mut changes = ChangedLines::default();
        changes.hunk("a.py", 7, 16);
        for line in [10, 11, 13] {
            changes.added("a.py", line);
        }
        changes.touch("gone.py");
        let added = at("a.py", Some(11));
        let context = at("a.py", Some(8));
        let far = at("a.py", Some(40));
        let unplaced_line = at("a.py", None);
        let other_file = at("b.py", Some(11));
        let mut nowhere = at("x", Some(1));
        nowhere.file = None;
        let mut spanning = at("a.py", Some(5));
        spanning.end_line = Some(10);

        let pre = |d: &Diagnostic, f: Filter| changes.is_pre_existing(d, f);
        assert!(!pre(&added, Filter::Added));
        assert!(pre(&context, Filter::Added));
        assert!(!pre(&context, Filter::DiffContext));
        assert!(pre(&far, Filter::DiffContext));
        assert!(!pre(&far, Filter::File));
        assert!(pre(&other_file, Filter::File));
        assert!(!pre(&other_file, Filter::Nofilter));
        assert!(!pre(&unplaced_line, Filter::Added));
        assert!(!pre(&nowhere, Filter::Added));
        assert!(!pre(&spanning, Filter::Added));
        assert!(!pre(&at("gone.py", Some(1)), Filter::File));
        assert!(pre(&at("gone.py", Some(1)), Filter::Added));
    }
}
