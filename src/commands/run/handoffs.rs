//! The handoff documents among the selected files, read as the run checks
//! them.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::gate::SelectionSummary;

/// Where a run reads the selected files' content from.
pub(super) enum Content {
    WorkTree,
    /// The index: what a commit would record.
    Staged,
    /// A commit (a range's end, a pushed commit), and the commit a range's
    /// changes are counted from (its merge base), when there is one.
    At {
        tip: String,
        base: Option<String>,
    },
}

impl Content {
    /// Where the checks see the files the run selected: staged, or at the
    /// commit a range or push checks.
    pub fn of(mode: &SelectionSummary) -> Content {
        match (mode.mode, &mode.to) {
            ("staged", _) => Content::Staged,
            ("range" | "all", Some(to)) => Content::At {
                tip: to.clone(),
                base: (mode.mode == "range")
                    .then(|| mode.merge_base.clone().or_else(|| mode.from_commit.clone()))
                    .flatten(),
            },
            _ => Content::WorkTree,
        }
    }
}

/// A document's bytes (up to `read::MAX_BYTES`), or why they could not
/// be read.
pub(super) type DocumentBytes = Result<crate::handoff::read::Document, String>;

/// The report of one document as `read_handoffs` read it.
pub(super) fn read_handoff(
    path: &str,
    read: &DocumentBytes,
    rules: &crate::handoff::Rules,
) -> crate::handoff::HandoffReport {
    match read {
        Ok(document) => crate::handoff::validate_document(path, document, rules).0,
        Err(e) => crate::handoff::unreadable(path, e, rules),
    }
}

/// The reports of the documents `read_handoffs` read, judged together:
/// two of one stage may not share an id (`handoff::ids`), nor may a new
/// one share a committed one's (`committed`).
pub(super) fn read_all(
    documents: &[(String, DocumentBytes)],
    rules: &crate::handoff::Rules,
    committed: &crate::handoff::ids::Committed,
) -> Vec<crate::handoff::HandoffReport> {
    let mut reports: Vec<_> = documents
        .iter()
        .map(|(path, bytes)| read_handoff(path, bytes, rules))
        .collect();
    crate::handoff::ids::shared_ids(reports.iter_mut());
    crate::handoff::ids::shared_with_committed(reports.iter_mut(), committed);
    reports
}

/// For a run that adds a document, the ids and stages of the documents
/// under `[handoff] paths` beside the selected ones, as the run sees them
/// (the index for a staged run, the work tree for `--files`, the range's
/// tip for a range), each read no further than `ids::HEAD_BYTES`: a copy
/// of a committed document is often selected alone (staged alone, named
/// alone, or the only document a branch changes), and its id would be
/// compared with nothing. A document is added when the commit the change
/// starts from (`HEAD` for a staged run, a range's merge base) does not
/// hold it; every document named with `--files` is. A run that adds none
/// reads nothing more, and only the documents whose first
/// bytes hold a new id are parsed.
pub(super) fn committed(
    root: &Path,
    documents: &[(String, DocumentBytes)],
    config: &Config,
    source: &Content,
) -> Result<crate::handoff::ids::Committed, crate::git::GitError> {
    use crate::handoff::ids::{Committed, Known, HEAD_BYTES};
    let mut committed = Committed::default();
    if documents.is_empty() {
        return Ok(committed);
    }
    let base = match source {
        // Without a commit, everything the index holds is staged, and
        // selected.
        Content::Staged if crate::git::commit_id(root, "HEAD").is_err() => return Ok(committed),
        Content::Staged => Some("HEAD".to_string()),
        // Files named on the command line start from no commit: a copy
        // committed a moment ago on the branch is as much a copy.
        Content::WorkTree => None,
        Content::At { base, .. } => base.clone(),
    };
    let selected: Vec<&Path> = documents.iter().map(|(p, _)| Path::new(p)).collect();
    // With nothing to start from, every selected document is held against
    // the others.
    let added: Vec<bool> = match &base {
        Some(base) => crate::git::documents_at(root, base, &selected, 0)?
            .into_iter()
            .map(|before| before.is_none())
            .collect(),
        None => vec![true; documents.len()],
    };
    let new: Vec<&(String, DocumentBytes)> = documents
        .iter()
        .zip(added)
        .filter(|(_, added)| *added)
        .map(|(document, _)| document)
        .collect();
    // Only a document naming one of the new ids can clash with them.
    let new_known: Vec<Known> = new
        .iter()
        .filter_map(|(path, bytes)| {
            let document = bytes.as_ref().ok()?;
            Known::read(path, &document.bytes, document.truncated)
        })
        .collect();
    let ids: Vec<String> = new_known.iter().map(|known| known.id.clone()).collect();
    committed.new = new.iter().map(|(path, _)| path.clone()).collect();
    committed.by_name = base.is_none();
    if ids.is_empty() {
        return Ok(committed);
    }
    let listed = match source {
        Content::Staged | Content::WorkTree => crate::git::tracked_files(root)?,
        Content::At { tip, .. } => crate::git::commit_files(root, tip)?,
    };
    let others: Vec<PathBuf> = listed
        .into_iter()
        .filter(|f| config.handoff.path_filter.is_match(f) && !selected.contains(&f.as_path()))
        .collect();
    let others: Vec<&Path> = others.iter().map(PathBuf::as_path).collect();
    let stored = |all: Vec<Option<crate::git::StoredDocument>>| -> Vec<Option<Vec<u8>>> {
        all.into_iter().map(|head| head?.ok()).collect()
    };
    let heads: Vec<Option<Vec<u8>>> = match source {
        Content::Staged => stored(crate::git::documents_staged(root, &others, HEAD_BYTES)?),
        Content::At { tip, .. } => {
            stored(crate::git::documents_at(root, tip, &others, HEAD_BYTES)?)
        }
        // Read from the work tree, a document's id may be committed, only
        // staged, or only there: the error on a copy says which.
        Content::WorkTree => {
            committed.known =
                crate::commands::handoff::known_in_work_tree(root, &others, &new_known)?;
            return Ok(committed);
        }
    };
    committed.known = others
        .iter()
        .zip(heads)
        .filter_map(|(path, head)| {
            let bytes = head?;
            let more = bytes.len() > HEAD_BYTES;
            let bytes = &bytes[..bytes.len().min(HEAD_BYTES)];
            if !crate::handoff::ids::mentions_any(bytes, &ids) {
                return None;
            }
            Known::read(&path.to_string_lossy(), bytes, more)
        })
        .collect();
    Ok(committed)
}

/// What a run knows of its checks, for the claims of its documents: the
/// checks it ran, the phase's configured ones, and the run a `resume`
/// continues, whose results stand for the checks it does not run again.
pub(super) struct Evidence<'a> {
    pub phase: &'a str,
    pub profile: crate::config::Profile,
    pub checks: &'a [crate::gate::CheckInput],
    pub configured: &'a [&'a crate::config::CheckSpec],
    pub resumed: Option<&'a crate::state::RunRecord>,
}

impl Evidence<'_> {
    /// The result a resume keeps of a check it does not run again.
    fn carried(&self, name: &str) -> Option<&crate::state::CheckRecord> {
        let previous = self.resumed?;
        if self.checks.iter().any(|c| c.name == name)
            || !self.configured.iter().any(|s| s.name == name)
        {
            return None;
        }
        previous.checks.iter().find(|c| c.name == name)
    }

    /// The checks found wanting: those this run ran, and, in a resume, those
    /// the resumed run failed or warned on and this one keeps. A claim that
    /// one of them contradicted there is contradicted still: nothing ran
    /// since to say otherwise, and a resume that dropped it would let the
    /// document through unchanged.
    pub fn failed_checks(&self) -> Vec<String> {
        let mut failed = super::outcome::failed_checks(self.profile, self.checks);
        if let Some(previous) = self.resumed {
            failed.extend(
                previous
                    .checks
                    .iter()
                    .filter(|c| matches!(c.status.as_str(), "failed" | "warned"))
                    .filter(|c| self.carried(&c.name).is_some())
                    .map(|c| c.name.clone()),
            );
        }
        failed
    }

    /// The checks a handoff claim may name (`[handoff.claims]`) that
    /// verified nothing, with why: skipped (`PHASEGATE_SKIP`, a `files`
    /// filter nothing matched, `on_failure = "skip"`), not installed,
    /// timed out, left out by `--check`, or no check of the phase at all.
    /// A claim on one of them is not contradicted, and not confirmed
    /// either.
    pub fn unverified(
        &self,
        claims: &std::collections::BTreeMap<String, String>,
    ) -> std::collections::BTreeMap<String, String> {
        let phase = self.phase;
        claims
            .values()
            .filter(|check| !check.is_empty())
            .filter_map(|name| {
                let why = if let Some(check) = self.checks.iter().find(|c| &c.name == name) {
                    crate::gate::verified_nothing(self.profile, check)?
                } else if let Some(kept) = self.carried(name) {
                    match kept.status.as_str() {
                        "passed" | "warned" | "failed" => return None,
                        status => format!(
                            "{status} in run {}, whose result this resume keeps",
                            self.resumed.map_or("?", |r| r.run_id.as_str())
                        ),
                    }
                } else if self.configured.iter().any(|s| &s.name == name) {
                    "it was not among the checks this run was asked to run".to_string()
                } else {
                    // A phase without the check: `[handoff.claims]` can
                    // drop the claim where nothing verifies it.
                    format!(
                        "phase `{phase}` has no check `{name}`; without one, remove the claim from `[handoff.claims]`"
                    )
                };
                Some((name.clone(), why))
            })
            .collect()
    }
}

/// The handoff documents among `selection`, read from `source`. A document
/// the source does not hold (deleted there) is left out; one that cannot be
/// read is kept, with the reason.
pub(super) fn read_handoffs(
    root: &Path,
    selection: &[PathBuf],
    config: &Config,
    source: &Content,
) -> Result<Vec<(String, DocumentBytes)>, crate::git::GitError> {
    let wrap = |all: Vec<Option<crate::git::StoredDocument>>| {
        all.into_iter()
            .map(|stored| {
                stored.map(|stored| match stored {
                    Ok(bytes) => Ok(crate::handoff::read::Document::from_bytes(bytes)),
                    Err(link) => Err(unfollowed(&link, source)),
                })
            })
            .collect()
    };
    let paths: Vec<&Path> = selection
        .iter()
        .filter(|f| config.handoff.path_filter.is_match(f))
        .map(PathBuf::as_path)
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let contents: Vec<Option<DocumentBytes>> = match source {
        Content::WorkTree => paths
            .iter()
            .map(|f| match crate::handoff::read::read(&root.join(f)) {
                Ok(document) => Some(Ok(document)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => Some(Err(e.to_string())),
            })
            .collect(),
        Content::Staged => wrap(crate::git::documents_staged(
            root,
            &paths,
            crate::handoff::read::MAX_BYTES,
        )?),
        Content::At { tip, .. } => wrap(crate::git::documents_at(
            root,
            tip,
            &paths,
            crate::handoff::read::MAX_BYTES,
        )?),
    };
    Ok(paths
        .iter()
        .zip(contents)
        .filter_map(|(f, bytes)| Some((f.to_string_lossy().into_owned(), bytes?)))
        .collect())
}

/// Why a document that is a symbolic link in the index or the commit
/// cannot be read there, and what to do: that document is invalid, and
/// the others are judged as usual.
fn unfollowed(error: &crate::git::GitError, source: &Content) -> String {
    let crate::git::GitError::Link { problem, .. } = error else {
        return error.to_string();
    };
    let (held, verb) = match source {
        Content::Staged => ("the index", "stage"),
        _ => ("the commit", "commit"),
    };
    // A link out of the repository or round in circles leads to nothing a
    // commit can hold; a link to a file that was not added may be fixed
    // by adding it.
    let fix = if problem.starts_with("leads to no file") {
        format!("{verb} the file it leads to, or replace the link with the document itself")
    } else {
        format!("replace the link with the document itself and {verb} it")
    };
    format!(
        "it is a symbolic link that {problem}, and a handoff document is read as {held} holds it: {fix}"
    )
}

pub(super) fn handoff_rules(config: &Config) -> crate::handoff::Rules {
    crate::handoff::Rules {
        max_retries: config.gate.max_retries,
        checkpoints: config.handoff.checkpoints.clone(),
        claims: config.handoff.claims.clone(),
        failed_checks: Vec::new(),
        checked_phase: None,
        unverified: std::collections::BTreeMap::new(),
        phases: None,
        now: Some(crate::handoff::time::now()),
    }
}

/// The stage a document names, and where: `path:line`, for an error about
/// the phase it names to point at.
pub(super) struct Stage {
    pub path: String,
    /// The stage, which names the phase.
    pub name: String,
    /// The line of its `stage:` field.
    pub line: Option<usize>,
}

impl Stage {
    /// `path:line`, or the path alone when the line is not known.
    pub fn place(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.path),
            None => self.path.clone(),
        }
    }

    /// A problem located at its `stage:` line, for the reports that
    /// annotate files.
    pub fn problem(&self, message: String, help: &str) -> crate::gate::ErrorProblem {
        crate::gate::ErrorProblem {
            message,
            help: Some(help.to_string()),
            file: Some(self.path.clone()),
            line: self.line.and_then(|line| u32::try_from(line).ok()),
            column: None,
        }
    }
}

/// The stage each document names, from its first reading, to resolve the
/// phase; the documents are validated again once the checks ran, when
/// their claims (`tests_passing`) can be held against the results.
pub(super) fn stages(reports: &[crate::handoff::HandoffReport]) -> Vec<Stage> {
    reports
        .iter()
        .filter_map(|report| {
            Some(Stage {
                path: report.path.clone(),
                name: report.stage.clone()?,
                line: report.stage_line,
            })
        })
        .collect()
}
