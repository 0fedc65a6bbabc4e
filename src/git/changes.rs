//! The lines a change touched, for the changed-line filter: the staged
//! diff or a branch's diff since its merge base, read only for the files
//! diagnostics point into.

use std::cell::RefCell;
use std::path::Path;

use git2::DiffOptions;

use super::select::{failed, open, range_diff, staged_diff};
use super::GitError;
use crate::diagnostics::ChangedLines;

/// Which change the run looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeBase {
    Staged,
    Range { from: String, to: String },
}

/// The lines `base` added and the hunks it touched, in the files `paths`
/// (relative to the root). Rename detection is off: a renamed file's lines
/// all count as added, which never marks a finding pre-existing wrongly.
pub fn changed_lines(
    root: &Path,
    base: &ChangeBase,
    paths: &[String],
) -> Result<ChangedLines, GitError> {
    let changes = RefCell::new(ChangedLines::default());
    if paths.is_empty() {
        return Ok(changes.into_inner());
    }
    let repo = open(root)?;
    let mut options = DiffOptions::new();
    options.context_lines(3).disable_pathspec_match(true);
    for path in paths {
        options.pathspec(path);
    }
    let diff = match base {
        ChangeBase::Staged => staged_diff(&repo, root, &mut options)?,
        ChangeBase::Range { from, to } => range_diff(&repo, from, to, &mut options)?,
    };
    let path_of = |delta: &git2::DiffDelta<'_>| {
        delta
            .new_file()
            .path()
            .map(|p| p.to_string_lossy().into_owned())
    };
    diff.foreach(
        &mut |delta, _| {
            if let Some(path) = path_of(&delta) {
                changes.borrow_mut().touch(&path);
            }
            true
        },
        None,
        Some(&mut |delta, hunk| {
            if let Some(path) = path_of(&delta) {
                let start = hunk.new_start();
                let end = start + hunk.new_lines().saturating_sub(1);
                changes.borrow_mut().hunk(&path, start, end);
            }
            true
        }),
        Some(&mut |delta, _, line| {
            if line.origin() == '+' {
                if let (Some(path), Some(number)) = (path_of(&delta), line.new_lineno()) {
                    changes.borrow_mut().added(&path, number);
                }
            }
            true
        }),
    )
    .map_err(|e| failed("the changed lines", e))?;
    Ok(changes.into_inner())
}
