//! A handoff document's `id`: its own, and the one its file name says.
//! A document copied from another (the quickest way to start one) keeps
//! the other's id until someone changes it; two documents of one stage
//! under one id cannot be told apart in a verdict, a history or an
//! intervention, so a person reading "F001 failed" does not know which
//! work failed. This module judges reports and names; it reads no file.

use std::collections::HashMap;
use std::path::Path;

use super::validate::{issue, HandoffReport, Issue};
use super::yaml::Pos;

/// A warning when the document's file name starts with another id of the
/// same series as its own, only its numbers differing (`handoffs/F002.md`
/// saying `id: F001`): most likely a copy that kept its original's id. A
/// name of another shape (`handoffs/parse-the-verdict.md`) or another
/// series (`big2.md` for `id: F9`) says nothing about the id, and a name
/// that starts with the id (`F001-parse.md`) agrees with it. Only a
/// warning: no convention ties file names to ids, and an id may be right
/// and the name wrong.
pub(super) fn named_after_another(warnings: &mut Vec<Issue>, path: &str, id: &str, pos: Pos) {
    let id = id.trim();
    if !id.chars().any(|c| c.is_ascii_digit()) {
        return;
    }
    let Some(stem) = Path::new(path).file_stem().and_then(|s| s.to_str()) else {
        return;
    };
    let Some(named) = leading_id(stem, &shape(id)) else {
        return;
    };
    if named.eq_ignore_ascii_case(id) || !same_series(named, id) {
        return;
    }
    let file = Path::new(path)
        .file_name()
        .map_or_else(|| path.into(), |name| name.to_string_lossy());
    warnings.push(issue(
        pos,
        "id",
        format!(
            "`id: {id}`, but the file is named `{file}`: a document copied from another keeps the other's id; give this one its own (`id: {named}`), or rename the file if the id is right"
        ),
    ));
}

/// The first part of `stem` that ends at a separator (or the end) and has
/// the shape of an id: `F002` of `F002-parse`, `FEAT-002` of `FEAT-002-x`.
fn leading_id<'a>(stem: &'a str, id_shape: &str) -> Option<&'a str> {
    stem.char_indices()
        .filter(|(_, c)| !c.is_alphanumeric())
        .map(|(at, _)| at)
        .chain(std::iter::once(stem.len()))
        .map(|end| &stem[..end])
        .find(|part| shape(part) == id_shape)
}

/// Whether two ids differ only in their numbers (`F001` and `F2`,
/// `feat-1` and `FEAT-002`), letters compared without case.
fn same_series(a: &str, b: &str) -> bool {
    let letters = |id: &str| {
        id.chars()
            .filter(|c| !c.is_ascii_digit())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    letters(a) == letters(b)
}

/// An id's shape: each run of letters is `a`, each run of digits `9`,
/// anything else kept (`FEAT-001` is `a-9`).
fn shape(text: &str) -> String {
    let mut shape = String::new();
    for c in text.chars() {
        let class = if c.is_alphabetic() {
            'a'
        } else if c.is_ascii_digit() {
            '9'
        } else {
            c
        };
        if shape.ends_with(class) && (class == 'a' || class == '9') {
            continue;
        }
        shape.push(class);
    }
    shape
}

/// Documents judged together (one run's, or the ones `handoff validate`
/// names) of one stage that say one `id`: an error on the `id` of each
/// but one, naming that one, so the document to change is the one pointed
/// at. The one kept is the first whose file name is its id (`F001.md`
/// says `id: F001`: the copy is the other), else the first in `reports`,
/// which come in the order of their paths. The same id at different
/// stages is one piece of work moving through them
/// (`F001-requirements.md`, `F001-implementation.md`) and is left alone.
pub fn shared_ids<'a>(reports: impl IntoIterator<Item = &'a mut HandoffReport>) {
    let mut reports: Vec<&mut HandoffReport> = reports.into_iter().collect();
    // Stable: among the documents named after their id, and among the
    // others, the order of their paths.
    reports.sort_by_key(|report| match &report.id {
        Some(id) => !named_for(&report.path, id),
        None => true,
    });
    let mut first: HashMap<(String, String), (String, usize)> = HashMap::new();
    for report in reports {
        let (Some(id), Some(stage), Some(at)) = (&report.id, &report.stage, report.id_at) else {
            continue;
        };
        let key = (id.trim().to_string(), stage.clone());
        let Some((path, line)) = first.get(&key) else {
            first.insert(key, (report.path.clone(), at.line));
            continue;
        };
        // The same document named twice is one document.
        if *path == report.path {
            continue;
        }
        report.errors.push(issue(
            at,
            "id",
            format!(
                "`id: {}` is also the id of `{path}` (line {line}), another `{stage}` document: each document needs its own id, or a failure of one is read as the other's; give this one a new id (a copy keeps its original's)",
                key.0
            ),
        ));
        report.errors.sort_by_key(|e| (e.line, e.column));
        report.valid = false;
    }
}

/// How much of a document outside the selection is read for its `id` and
/// `stage`: a frontmatter's fields fit many times over, and a thousand
/// documents cost a few megabytes at most.
pub const HEAD_BYTES: usize = 16 << 10;

/// A document the run did not select, as far as a new one may clash with
/// it: where it is, its id and stage, and the line of its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub path: String,
    pub id: String,
    pub stage: String,
    pub line: usize,
    /// Where the document says this id and stage.
    pub held: Held,
}

/// Where a document not selected says its id: what the message on a copy
/// of it says of it, since "already committed" sends the author looking
/// through the history for a document that was only staged, or only
/// edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// The commit the change starts from (`HEAD`, a range's commits) says
    /// it.
    Committed,
    /// The index says it, and no commit does yet.
    Staged,
    /// Only the work tree says it: the change that gave the document this
    /// id and stage is not staged.
    WorkTree,
}

impl Held {
    /// Where the document is with its id, as it follows "another
    /// `implementation` document".
    fn said(self) -> &'static str {
        match self {
            Held::Committed => "already committed",
            Held::Staged => "staged but not committed yet",
            Held::WorkTree => "with that id in the work tree only (not staged)",
        }
    }

    /// Where a document read from the work tree as `known` says its id and
    /// stage: in the commit (`committed`, its first bytes there, `None`
    /// when the commit does not hold it), else in the index (`staged`,
    /// likewise), else only in the work tree.
    pub fn of(known: &Known, committed: Option<&[u8]>, staged: Option<&[u8]>) -> Held {
        let says = |head: Option<&[u8]>| {
            head.and_then(|head| {
                let more = head.len() > HEAD_BYTES;
                Known::read(&known.path, &head[..head.len().min(HEAD_BYTES)], more)
            })
            .is_some_and(|there| there.id == known.id && there.stage == known.stage)
        };
        if says(committed) {
            Held::Committed
        } else if says(staged) {
            Held::Staged
        } else {
            Held::WorkTree
        }
    }
}

impl Known {
    /// Reads `id` and `stage` from a document's first bytes (`head`, at
    /// most `HEAD_BYTES`; `more` when the document goes on). `None` when
    /// its frontmatter does not close within them or names neither: such
    /// a document is invalid on its own, and reported when it is selected.
    pub fn read(path: &str, head: &[u8], more: bool) -> Option<Known> {
        let rules = super::Rules::default();
        let report = if more {
            let document = super::read::Document {
                bytes: head.to_vec(),
                truncated: true,
            };
            super::validate_document(path, &document, &rules).0
        } else {
            super::validate_bytes(path, head, &rules).0
        };
        Some(Known {
            path: path.to_string(),
            id: report.id?.trim().to_string(),
            stage: report.stage?,
            line: report.id_at?.line,
            held: Held::Committed,
        })
    }
}

/// Whether a document's first bytes hold any of `ids` at all: one that
/// does not cannot say `id:` with it, and is not worth parsing. Reading a
/// thousand documents' frontmatter as YAML costs a tenth of a second; a
/// search through their bytes, a few milliseconds.
pub fn mentions_any(head: &[u8], ids: &[String]) -> bool {
    ids.iter()
        .any(|id| !id.is_empty() && memchr::memmem::find(head, id.as_bytes()).is_some())
}

/// The documents a run did not select, for its new ones: a commit or a
/// branch that adds a copy of a committed document, its id unchanged,
/// shows the copy alone, and `shared_ids` would find nobody to share it
/// with.
#[derive(Debug, Clone, Default)]
pub struct Committed {
    /// The selected documents the commit adds.
    pub new: Vec<String>,
    /// The others the run's revision holds (the index, the work tree's
    /// tracked files, a range's tip), with an id and a stage.
    pub known: Vec<Known>,
    /// No commit says which document came first (files named on the
    /// command line): as in `shared_ids`, one named after its id is the
    /// original of one that is not, which gets the error when it is
    /// checked.
    pub by_name: bool,
}

/// An error on the `id` of each new document (`committed.new`) whose id
/// and stage a committed one (`committed.known`) has already: the new one
/// is the copy, whatever its name, since the other was there first (with
/// no first, `committed.by_name`, the one whose name is not its id).
pub fn shared_with_committed<'a>(
    reports: impl IntoIterator<Item = &'a mut HandoffReport>,
    committed: &Committed,
) {
    if committed.known.is_empty() {
        return;
    }
    for report in reports {
        if !committed.new.contains(&report.path) {
            continue;
        }
        let (Some(id), Some(stage), Some(at)) = (&report.id, &report.stage, report.id_at) else {
            continue;
        };
        let id = id.trim();
        let Some(other) = committed
            .known
            .iter()
            .find(|k| k.id == id && k.stage == *stage && k.path != report.path)
        else {
            continue;
        };
        let this_named = named_for(&report.path, id);
        let other_named = named_for(&other.path, id);
        if committed.by_name && this_named && !other_named {
            continue;
        }
        // With a commit to start from, this document is the one the change
        // adds. Without one (files named on the command line), neither is
        // new: only a file name may say which is the copy, and when none
        // does, the author knows.
        let fix = if !committed.by_name {
            "give this new one an id of its own".to_string()
        } else if other_named {
            format!(
                "`{}` is named after `{id}` and this file is not, so this one reads as the copy: give it an id of its own",
                other.path
            )
        } else {
            format!(
                "no commit says which came first, nor do the file names: give the copy an id of its own, be it this one or `{}`",
                other.path
            )
        };
        report.errors.push(issue(
            at,
            "id",
            format!(
                "`id: {id}` is also the id of `{}` (line {}), another `{stage}` document, {}: each document needs its own id, or a failure of one is read as the other's; {fix} (a copy keeps its original's)",
                other.path,
                other.line,
                other.held.said()
            ),
        ));
        report.errors.sort_by_key(|e| (e.line, e.column));
        report.valid = false;
    }
}

/// Whether the file name of `path` starts with `id` (`F001.md`,
/// `F001-parse.md`).
fn named_for(path: &str, id: &str) -> bool {
    let id = id.trim();
    Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|stem| leading_id(stem, &shape(id)))
        .is_some_and(|named| named.eq_ignore_ascii_case(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(path: &str, id: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        named_after_another(&mut warnings, path, id, Pos::default());
        warnings.into_iter().map(|w| w.message).collect()
    }

    fn document(id: &str, stage: &str) -> String {
        format!("---\nid: {id}\nstage: {stage}\n---\n")
    }

    fn judged(documents: &[(&str, &str, &str)]) -> Vec<HandoffReport> {
        let mut reports: Vec<HandoffReport> = documents
            .iter()
            .map(|(path, id, stage)| {
                crate::handoff::validate(
                    path,
                    &document(id, stage),
                    &crate::handoff::Rules::default(),
                )
            })
            .collect();
        // Only the id's error is looked at.
        for report in &mut reports {
            report.errors.clear();
            report.valid = true;
        }
        shared_ids(reports.iter_mut());
        reports
    }

    #[test]
    fn a_shared_id_is_an_error_on_the_copy_naming_the_original() {
        let reports = judged(&[
            ("handoffs/F002.md", "F001", "implementation"),
            ("handoffs/F001.md", "F001", "implementation"),
            ("handoffs/F003.md", "F003", "implementation"),
        ]);
        let errors: Vec<(&str, bool, Vec<&str>)> = reports
            .iter()
            .map(|r| {
                let messages = r.errors.iter().map(|e| e.message.as_str()).collect();
                (r.path.as_str(), r.valid, messages)
            })
            .collect();
        assert_eq!(
            errors,
            [
                ("handoffs/F002.md", false, vec!["`id: F001` is also the id of `handoffs/F001.md` (line 2), another `implementation` document: each document needs its own id, or a failure of one is read as the other's; give this one a new id (a copy keeps its original's)"]),
                ("handoffs/F001.md", true, vec![]),
                ("handoffs/F003.md", true, vec![]),
            ]
        );
        assert_eq!(reports[0].errors[0].line, 2);
    }

    #[test]
    fn one_id_at_two_stages_or_one_document_named_twice_is_no_error() {
        let reports = judged(&[
            ("handoffs/F001-requirements.md", "F001", "requirements"),
            ("handoffs/F001-implementation.md", "F001", "implementation"),
            ("handoffs/F001-implementation.md", "F001", "implementation"),
        ]);
        assert!(reports.iter().all(|r| r.errors.is_empty()), "{reports:?}");
    }

    #[test]
    fn a_new_document_with_a_committed_ones_id_is_the_copy() {
        let known = Known::read(
            "handoffs/F001.md",
            document("F001", "implementation").as_bytes(),
            false,
        );
        assert_eq!(
            known,
            Some(Known {
                path: "handoffs/F001.md".into(),
                id: "F001".into(),
                stage: "implementation".into(),
                line: 2,
                held: Held::Committed,
            })
        );
        // A frontmatter that does not close within what was read names
        // nothing.
        assert_eq!(Known::read("handoffs/F9.md", b"---\nid: F9\n", true), None);
        let committed = Committed {
            new: vec!["handoffs/F001.md".into(), "handoffs/F003.md".into()],
            known: known.into_iter().collect(),
            by_name: false,
        };
        let mut reports: Vec<HandoffReport> = [
            ("handoffs/F001.md", "F001", "implementation"),
            ("handoffs/F003.md", "F001", "qa"),
            ("handoffs/F004.md", "F001", "implementation"),
        ]
        .iter()
        .map(|(path, id, stage)| {
            let mut report = crate::handoff::validate(
                path,
                &document(id, stage),
                &crate::handoff::Rules::default(),
            );
            report.errors.clear();
            report
        })
        .collect();
        shared_with_committed(reports.iter_mut(), &committed);
        // The committed document itself, one of another stage, and one
        // already committed are left alone.
        assert!(reports.iter().all(|r| r.errors.is_empty()), "{reports:?}");

        let committed = Committed {
            new: vec!["handoffs/F002.md".into()],
            known: committed.known,
            by_name: false,
        };
        let mut copy = crate::handoff::validate(
            "handoffs/F002.md",
            &document("F001", "implementation"),
            &crate::handoff::Rules::default(),
        );
        copy.errors.clear();
        shared_with_committed(std::iter::once(&mut copy), &committed);
        assert!(!copy.valid);
        assert!(mentions_any(b"id: F001", &["F9".into(), "F001".into()]));
        assert!(!mentions_any(b"id: F001", &["F002".into(), String::new()]));
        assert_eq!(copy.errors.len(), 1);
        assert_eq!(copy.errors[0].line, 2);
        assert!(
            copy.errors[0]
                .message
                .starts_with("`id: F001` is also the id of `handoffs/F001.md` (line 2), another `implementation` document, already committed"),
            "{:?}",
            copy.errors
        );
    }

    /// Files named on the command line have no commit to say which came
    /// first: the one named after its id is the original.
    #[test]
    fn with_no_first_the_document_named_after_its_id_is_the_original() {
        let known = |path: &str| Known {
            path: path.into(),
            id: "F001".into(),
            stage: "implementation".into(),
            line: 2,
            held: Held::Committed,
        };
        let judged = |path: &str, other: &str, by_name: bool| {
            let committed = Committed {
                new: vec![path.into()],
                known: vec![known(other)],
                by_name,
            };
            let mut report = crate::handoff::validate(
                path,
                &document("F001", "implementation"),
                &crate::handoff::Rules::default(),
            );
            report.errors.clear();
            shared_with_committed(std::iter::once(&mut report), &committed);
            report.errors.len()
        };
        assert_eq!(judged("handoffs/F002.md", "handoffs/F001.md", true), 1);
        assert_eq!(judged("handoffs/F001.md", "handoffs/F002.md", true), 0);
        // A commit says the new one came second, whatever its name.
        assert_eq!(judged("handoffs/F001.md", "handoffs/F002.md", false), 1);
        // Two copies with names that say nothing: both are held.
        assert_eq!(judged("handoffs/a.md", "handoffs/b.md", true), 1);
    }

    #[test]
    fn a_file_named_after_another_id_is_a_warning() {
        assert_eq!(
            named("handoffs/F002.md", "F001"),
            ["`id: F001`, but the file is named `F002.md`: a document copied from another keeps the other's id; give this one its own (`id: F002`), or rename the file if the id is right"]
        );
        assert_eq!(named("handoffs/FEAT-002-parse.md", "FEAT-001").len(), 1);
        assert_eq!(named("F2.md", "F001").len(), 1);
        assert_eq!(named("feat-2.md", "FEAT-001").len(), 1);
    }

    #[test]
    fn a_name_that_agrees_or_says_nothing_of_the_id_is_no_warning() {
        for (path, id) in [
            ("handoffs/F001.md", "F001"),
            ("handoffs/f001.md", "F001"),
            ("handoffs/F001-parse.md", "F001"),
            ("handoffs/parse-the-verdict.md", "F001"),
            ("handoffs/2026-01-20-notes.md", "F001"),
            ("handoffs/F002.md", "parser"),
            ("handoffs/README.md", "F001"),
            ("handoffs/big2.md", "F9"),
            ("handoffs/v2.md", "F001"),
            ("handoffs/TASK-2.md", "FEAT-1"),
        ] {
            assert!(named(path, id).is_empty(), "{path} {id}");
        }
    }
}
