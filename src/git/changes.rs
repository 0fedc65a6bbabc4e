//! The lines a change touched, for the changed-line filter: the staged
//! diff, a branch's diff since its merge base, or what the commits of a
//! push change, read only for the files diagnostics point into.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use git2::DiffOptions;

use super::select::{failed, open, range_diff, staged_diff};
use super::GitError;
use crate::diagnostics::ChangedLines;

/// Which change the run looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeBase {
    Staged,
    Range {
        from: String,
        to: String,
    },
    /// What the commits of a push change on `to`, made on the commits
    /// `published` (see `git::published_parents`): a line counts when it
    /// is new against each of them, so the lines a merge took from
    /// `origin/main` are not the pusher's, and those of a conflict they
    /// resolved are.
    Pushed {
        to: String,
        published: Vec<String>,
    },
}

/// One file's lines in a diff, as sorted inclusive ranges of new-side
/// lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Lines {
    added: Vec<(u32, u32)>,
    hunks: Vec<(u32, u32)>,
}

/// The lines `base` added and the hunks it touched, in the files `paths`
/// (relative to the root). Rename detection is off: a renamed file's lines
/// all count as added, which never marks a finding pre-existing wrongly.
pub fn changed_lines(
    root: &Path,
    base: &ChangeBase,
    paths: &[String],
) -> Result<ChangedLines, GitError> {
    let mut changes = ChangedLines::default();
    if paths.is_empty() {
        return Ok(changes);
    }
    let repo = open(root)?;
    let options = || {
        let mut options = DiffOptions::new();
        options.context_lines(3).disable_pathspec_match(true);
        for path in paths {
            options.pathspec(path);
        }
        options
    };
    let files = match base {
        ChangeBase::Staged => lines_of(&staged_diff(&repo, root, &mut options())?)?,
        ChangeBase::Range { from, to } => lines_of(&range_diff(&repo, from, to, &mut options())?)?,
        ChangeBase::Pushed { to, published } => {
            let mut common: Option<HashMap<String, Lines>> = None;
            for from in published {
                let diff = super::select::tree_diff(&repo, from, to, &mut options())?;
                let files = lines_of(&diff)?;
                common = Some(match common {
                    None => files,
                    Some(kept) => in_both(kept, &files),
                });
            }
            common.unwrap_or_default()
        }
    };
    let mut files: Vec<(String, Lines)> = files.into_iter().collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, lines) in files {
        changes.touch(&path);
        for (start, end) in lines.hunks {
            changes.hunk(&path, start, end);
        }
        for (start, end) in lines.added {
            for line in start..=end {
                changes.added(&path, line);
            }
        }
    }
    Ok(changes)
}

/// The lines each file of `diff` added and the hunks it touched.
fn lines_of(diff: &git2::Diff<'_>) -> Result<HashMap<String, Lines>, GitError> {
    let files: RefCell<HashMap<String, Lines>> = RefCell::new(HashMap::new());
    let path_of = |delta: &git2::DiffDelta<'_>| {
        delta
            .new_file()
            .path()
            .map(|p| p.to_string_lossy().into_owned())
    };
    diff.foreach(
        &mut |delta, _| {
            if let Some(path) = path_of(&delta) {
                files.borrow_mut().entry(path).or_default();
            }
            true
        },
        None,
        Some(&mut |delta, hunk| {
            if let Some(path) = path_of(&delta) {
                let start = hunk.new_start();
                let end = start + hunk.new_lines().saturating_sub(1);
                push_range(
                    &mut files.borrow_mut().entry(path).or_default().hunks,
                    start,
                    end.max(start),
                );
            }
            true
        }),
        Some(&mut |delta, _, line| {
            if line.origin() == '+' {
                if let (Some(path), Some(number)) = (path_of(&delta), line.new_lineno()) {
                    push_range(
                        &mut files.borrow_mut().entry(path).or_default().added,
                        number,
                        number,
                    );
                }
            }
            true
        }),
    )
    .map_err(|e| failed("the changed lines", e))?;
    Ok(files.into_inner())
}

/// Adds `start..=end` to `ranges`, kept sorted and merged (a diff gives
/// its hunks and lines in order).
fn push_range(ranges: &mut Vec<(u32, u32)>, start: u32, end: u32) {
    match ranges.last_mut() {
        Some((first, last)) if *first <= start && start <= last.saturating_add(1) => {
            *last = (*last).max(end);
        }
        _ => ranges.push((start, end)),
    }
    if ranges.windows(2).any(|w| w[0].0 > w[1].0) {
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for &(a, b) in ranges.iter() {
            match merged.last_mut() {
                Some((_, last)) if a <= last.saturating_add(1) => *last = (*last).max(b),
                _ => merged.push((a, b)),
            }
        }
        *ranges = merged;
    }
}

/// The files both changes touched, each with the lines both count.
fn in_both(kept: HashMap<String, Lines>, other: &HashMap<String, Lines>) -> HashMap<String, Lines> {
    kept.into_iter()
        .filter_map(|(path, lines)| {
            let theirs = other.get(&path)?;
            let both = Lines {
                added: overlap(&lines.added, &theirs.added),
                hunks: overlap(&lines.hunks, &theirs.hunks),
            };
            Some((path, both))
        })
        .collect()
}

/// The lines in both `a` and `b`, sorted merged inclusive ranges.
fn overlap(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let start = a[i].0.max(b[j].0);
        let end = a[i].1.min(b[j].1);
        if start <= end {
            out.push((start, end));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_in_both_changes_are_where_their_ranges_overlap() {
        assert_eq!(
            overlap(&[(1, 4), (8, 10), (20, 20)], &[(3, 9), (20, 25)]),
            [(3, 4), (8, 9), (20, 20)]
        );
        assert!(overlap(&[(1, 2)], &[(3, 4)]).is_empty());
        let mut ranges = Vec::new();
        for (a, b) in [(5, 6), (7, 7), (1, 2), (9, 9)] {
            push_range(&mut ranges, a, b);
        }
        assert_eq!(ranges, [(1, 2), (5, 7), (9, 9)]);
    }

    #[test]
    fn after_a_merge_only_the_lines_new_against_every_published_parent_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| crate::git::test_git(root, args);
        let write = |text: &str| std::fs::write(root.join("a.txt"), text).unwrap();
        git(&["init", "-q", "-b", "main"]);
        git(&["config", "user.email", "t@example.com"]);
        git(&["config", "user.name", "t"]);
        let base: String = (1..=12)
            .map(|n| ["line ", &n.to_string(), "\n"].concat())
            .collect();
        write(&base);
        git(&["add", "a.txt"]);
        git(&["commit", "-qm", "base"]);
        git(&["checkout", "-qb", "feature"]);
        write(&base.replace("line 2\n", "feature 2\n"));
        git(&["commit", "-qam", "feature"]);
        git(&["checkout", "-q", "main"]);
        write(&base.replace("line 11\n", "main 11\n"));
        git(&["commit", "-qam", "main"]);
        git(&["checkout", "-q", "feature"]);
        git(&["merge", "-q", "--no-edit", "main"]);
        // The pusher's own line, in the merge.
        let merged = std::fs::read_to_string(root.join("a.txt")).unwrap();
        write(&merged.replace("line 6\n", "mine 6\n"));
        git(&["commit", "-q", "--amend", "--no-edit", "-a"]);
        let id = |spec: &str| {
            String::from_utf8(git(&["rev-parse", spec]))
                .unwrap()
                .trim()
                .to_string()
        };
        let base = ChangeBase::Pushed {
            to: id("HEAD"),
            published: vec![id("HEAD^1"), id("HEAD^2")],
        };
        let changes = changed_lines(root, &base, &["a.txt".to_string()]).unwrap();
        let at = |line: u32| crate::diagnostics::Diagnostic {
            file: Some("a.txt".into()),
            line: Some(line),
            message: "m".into(),
            ..crate::diagnostics::Diagnostic::default()
        };
        let added = crate::config::Filter::Added;
        assert!(!changes.is_pre_existing(&at(6), added));
        for taken in [2, 11] {
            assert!(changes.is_pre_existing(&at(taken), added), "line {taken}");
        }
        // Against its first parent alone, the line `main` brought is new.
        let one = ChangeBase::Range {
            from: id("HEAD^1"),
            to: id("HEAD"),
        };
        let changes = changed_lines(root, &one, &["a.txt".to_string()]).unwrap();
        assert!(!changes.is_pre_existing(&at(11), added));
    }
}
