//! The newest run's verdict, read back from its JSON, as the handoff
//! commands use it: which checks passed or failed and with which errors,
//! what it saw of each document, and whether it ended needing a person.
//! Pure: the caller reads the verdict file; nothing here prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::stamp::RunResults;
use crate::gate::SkipReason;

/// At most this many of a check's errors are named: the first few are
/// where to start, and the check's log holds the rest.
pub const MAX_ERRORS: usize = 3;

/// A message's first line is cut at this many characters: a compiler's
/// message can fill a screen, and the log has it whole.
const MAX_ERROR_CHARS: usize = 200;

/// Why a configured check of the phase did not run: `--check` named
/// others.
pub const NOT_ASKED: &str = "it was not among the checks the run was asked to run";

/// What the newest run of a document's phase recorded.
///
/// It is the evidence a document's claims are held against however old it
/// is and whether or not it validated the document (one written after the
/// run, or never staged, is judged by it too). Age says nothing about
/// whether the code changed since: a day-old run may still be right and a
/// minute-old one already stale, and only a new run can tell. Counting it
/// fails closed, as phasegate does everywhere, and costs an agent one
/// `phasegate run`, which is what the feedback asks for anyway; ignoring it
/// would let a claim written after a failing run read as proven. A newer
/// run replaces it entirely, including for the checks that newer run did
/// not run (it says nothing of them, as a stamp from it does not). A run
/// of another phase is no evidence at all: its `tests` may be another
/// command, and it was no attempt of the document's stage.
#[derive(Debug, Clone, Default)]
pub struct LastRun {
    pub run_id: String,
    /// `passed`, `warned`, `failed`, `incomplete` or `blocked`.
    pub status: String,
    pub phase: Option<String>,
    /// The workflow it ran under, whose checks of the phase it had.
    pub workflow: Option<String>,
    pub checks: Vec<CheckEvidence>,
    /// The verdict's summary lines, most important first.
    summary: Vec<String>,
    /// The documents it validated: their paths and the `retry_count`
    /// each said then.
    documents: Vec<(String, Option<i64>)>,
    /// Why the run ended `blocked` when none of its documents made it so
    /// (the same errors repeated run after run): a person is needed.
    pub person_needed: Option<String>,
}

/// One check of the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckEvidence {
    pub name: String,
    /// `passed`, `failed`, `warned`, `skipped`, `missing`, `timed_out` or
    /// `crashed`.
    pub status: String,
    /// Its full output, relative to the repository root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Why it was skipped, or what went wrong, as the verdict says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why it was not run, when it was skipped (`skip_kind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip: Option<SkipReason>,
    /// Its first errors, `file:line:column: message`, at most
    /// `MAX_ERRORS`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

impl CheckEvidence {
    /// A check that ran and failed: `warned` is a failure the
    /// configuration lets through, which still contradicts a claim.
    pub fn failed(&self) -> bool {
        matches!(self.status.as_str(), "failed" | "warned")
    }
}

impl LastRun {
    /// Reads a verdict (`phasegate/verdict/v1`); what it lacks is left
    /// empty, since a verdict written by an older phasegate is still the
    /// latest evidence there is.
    pub fn from_verdict(verdict: &Value) -> LastRun {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let diagnostics = list(&verdict["diagnostics"]);
        let checks = list(&verdict["checks"])
            .iter()
            .filter_map(|c| {
                let name = text(&c["name"])?;
                Some(CheckEvidence {
                    errors: top_errors(diagnostics, &name),
                    status: text(&c["status"]).unwrap_or_default(),
                    log: text(&c["log"]),
                    skip: skip_kind(c),
                    reason: text(&c["reason"]),
                    name,
                })
            })
            .collect();
        let handoffs = list(&verdict["handoffs"]);
        let documents = handoffs
            .iter()
            .filter_map(|h| Some((text(&h["path"])?, h["retry_count"].as_i64())))
            .collect();
        let status = text(&verdict["status"]).unwrap_or_default();
        // A run ends blocked for a document (out of retries, or saying it
        // is blocked) or because the same errors kept coming back
        // (`gate::escalate_repeats`, which only blocks a run no document
        // blocked). The second needs a person whatever the documents say.
        let by_a_document = handoffs
            .iter()
            .any(|h| h["escalate"] == true || h["status"] == "blocked");
        let person_needed = (status == "blocked" && !by_a_document).then(|| {
            list(&verdict["notes"])
                .iter()
                .filter_map(Value::as_str)
                .find(|note| note.contains("a person is needed") && !note.starts_with("handoff "))
                .unwrap_or("it ended `blocked`: a person is needed")
                .to_string()
        });
        LastRun {
            run_id: text(&verdict["run_id"]).unwrap_or_else(|| "?".to_string()),
            status,
            phase: text(&verdict["phase"]),
            workflow: text(&verdict["workflow"]),
            checks,
            summary: list(&verdict["summary"]).iter().filter_map(text).collect(),
            documents,
            person_needed,
        }
    }

    /// The check named `name`, if the run had one.
    pub fn check(&self, name: &str) -> Option<&CheckEvidence> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The checks `claims` names that verified nothing in this run, with
    /// why, as a run tells them apart (`Evidence::unverified`): skipped,
    /// not installed, timed out or crashed (the verdict's reason), left
    /// out of a run of named checks (`configured`, the names of the
    /// phase's checks, has it), or no check of the phase at all. A claim
    /// on one is neither confirmed nor contradicted by this run.
    pub fn unverified(
        &self,
        claims: &BTreeMap<String, String>,
        configured: &[String],
    ) -> BTreeMap<String, String> {
        claims
            .values()
            .filter(|check| !check.is_empty())
            .filter_map(|name| {
                let why = match self.check(name) {
                    Some(c) if c.failed() || c.status == "passed" => return None,
                    Some(c) => c.reason.clone().unwrap_or_else(|| c.status.clone()),
                    None if configured.contains(name) => NOT_ASKED.to_string(),
                    None => format!(
                        "phase `{}` has no check `{name}`",
                        self.phase.as_deref().unwrap_or("?")
                    ),
                };
                Some((name.clone(), why))
            })
            .collect()
    }

    /// The names of the checks that ran and failed.
    pub fn failed_checks(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.failed())
            .map(|c| c.name.clone())
            .collect()
    }

    /// Whether the run needs a person for a document of `stage`: repeated
    /// errors are the agent going round in circles in that phase, so they
    /// stop the documents of the run's phase, not those of another stage.
    pub fn person_needed_for(&self, stage: Option<&str>) -> Option<&str> {
        let same_phase = match (stage, self.phase.as_deref()) {
            (Some(stage), Some(phase)) => stage == phase,
            // Without a stage or a phase to compare, the run's word stands.
            _ => true,
        };
        self.person_needed.as_deref().filter(|_| same_phase)
    }

    /// What the run says about the document at `path` (relative to the
    /// repository root), for `handoff stamp`.
    pub fn results_for(&self, path: &str) -> RunResults {
        let checks = self
            .checks
            .iter()
            .filter_map(|c| match c.status.as_str() {
                "passed" => Some((c.name.clone(), true)),
                "failed" | "warned" => Some((c.name.clone(), false)),
                // Skipped, missing, timed out or crashed: verified nothing.
                _ => None,
            })
            .collect();
        RunResults {
            checks,
            // An incomplete run did not finish verifying: the attempt
            // neither passed nor failed.
            failed: matches!(self.status.as_str(), "failed" | "blocked"),
            failure: self.failure(),
            retries_seen: self
                .documents
                .iter()
                .find(|(p, _)| p == path)
                .and_then(|(_, n)| *n),
        }
    }

    /// The line `last_failure` keeps: the run's most important problem
    /// that is not phasegate's finding about a handoff document (their
    /// code is `handoff:<field>`), since stamping rewrites what those say
    /// (a contradicted claim becomes `fail`) and the check's own error is
    /// what the next attempt must fix. A run that failed on documents
    /// alone keeps its first line.
    fn failure(&self) -> Option<String> {
        let about_a_document = |line: &&String| {
            line.split_once(' ')
                .is_some_and(|(_, rest)| rest.starts_with("handoff:"))
        };
        self.summary
            .iter()
            .find(|line| !about_a_document(line))
            .or_else(|| self.summary.first())
            .cloned()
    }
}

/// Why a skipped check of a verdict did not run: its `skip_kind`, or, in
/// a verdict written before there was one, its `reason` in the words
/// phasegate used then.
fn skip_kind(check: &Value) -> Option<SkipReason> {
    if check["status"] != "skipped" {
        return None;
    }
    if let Ok(kind) = SkipReason::deserialize(&check["skip_kind"]) {
        return Some(kind);
    }
    SkipReason::written_before_kinds(check["reason"].as_str()?)
}

/// The items of a JSON array, none when it is not one; borrowed, as a
/// verdict's diagnostics can number thousands.
fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// The first errors of `check` among the verdict's diagnostics: the
/// change's own errors first, then pre-existing ones, then warnings (a
/// check that failed with warnings only), each once.
fn top_errors(diagnostics: &[Value], check: &str) -> Vec<String> {
    let mut found: Vec<(u8, String)> = diagnostics
        .iter()
        .filter(|d| d["check"] == check)
        .map(|d| {
            let rank = match (d["severity"].as_str(), d["pre_existing"] == true) {
                (Some("error"), false) => 0,
                (Some("error"), true) => 1,
                (Some("warning"), _) => 2,
                _ => 3,
            };
            (rank, error_line(d))
        })
        .filter(|(rank, line)| *rank < 3 && !line.is_empty())
        .collect();
    // Stable: within a rank, the order the check printed them in.
    found.sort_by_key(|(rank, _)| *rank);
    let mut errors: Vec<String> = Vec::new();
    for (_, line) in found {
        if !errors.contains(&line) {
            errors.push(line);
        }
        if errors.len() == MAX_ERRORS {
            break;
        }
    }
    errors
}

/// `file:line:column: message`, as far as the place is known, with the
/// message's first line.
fn error_line(d: &Value) -> String {
    let message = d["message"]
        .as_str()
        .and_then(|m| m.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("");
    let message = if message.chars().count() > MAX_ERROR_CHARS {
        let cut: String = message.chars().take(MAX_ERROR_CHARS).collect();
        format!("{cut}…")
    } else {
        message.to_string()
    };
    let mut place = d["file"].as_str().unwrap_or("").to_string();
    if !place.is_empty() {
        for part in [&d["line"], &d["column"]] {
            match part.as_u64() {
                Some(n) => place.push_str(&format!(":{n}")),
                None => break,
            }
        }
    }
    match (place.is_empty(), message.is_empty()) {
        (true, _) => message,
        (false, true) => place,
        (false, false) => format!("{place}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diagnostic(check: &str, file: &str, line: u64, severity: &str, message: &str) -> Value {
        json!({"check": check, "file": file, "line": line, "column": null,
               "severity": severity, "message": message, "pre_existing": false})
    }

    #[test]
    fn a_checks_errors_come_first_once_each_and_a_few_at_most() {
        let verdict = json!({
            "run_id": "r1", "status": "failed", "phase": "implementation",
            "checks": [{"name": "tests", "status": "failed", "log": ".git/phasegate/runs/r1/tests.log"},
                       {"name": "lint", "status": "passed"}],
            "diagnostics": [
                diagnostic("tests", "t.py", 9, "warning", "deprecated"),
                diagnostic("lint", "l.py", 1, "error", "not this check"),
                diagnostic("tests", "t.py", 3, "error", "expected 4, got 5\n  full diff"),
                diagnostic("tests", "t.py", 3, "error", "expected 4, got 5"),
                diagnostic("tests", "u.py", 7, "error", "boom"),
                diagnostic("tests", "v.py", 8, "error", "bang"),
            ],
        });
        let run = LastRun::from_verdict(&verdict);
        let tests = run.check("tests").unwrap();
        assert_eq!(
            tests.errors,
            ["t.py:3: expected 4, got 5", "u.py:7: boom", "v.py:8: bang"]
        );
        assert_eq!(run.failed_checks(), ["tests"]);
        assert!(run.person_needed.is_none());
    }

    /// The kind of skip is read from `skip_kind`, whatever `reason` says;
    /// a verdict written before it existed is read by its reason's words.
    #[test]
    fn a_skip_is_told_by_its_kind_and_old_verdicts_by_their_words() {
        let verdict = json!({
            "checks": [
                {"name": "tests", "status": "skipped", "skip_kind": "skipped_by_env",
                 "reason": "worded in some new way"},
                {"name": "lint", "status": "skipped",
                 "reason": "disabled (on_failure = \"skip\")"},
                {"name": "docs", "status": "skipped", "reason": "something else"},
                {"name": "build", "status": "passed", "skip_kind": "disabled"},
            ],
        });
        let run = LastRun::from_verdict(&verdict);
        let skip = |name: &str| run.check(name).unwrap().skip;
        assert_eq!(skip("tests"), Some(SkipReason::SkippedByEnv));
        assert_eq!(skip("lint"), Some(SkipReason::Disabled));
        assert_eq!(skip("docs"), None);
        assert_eq!(skip("build"), None);
    }

    #[test]
    fn a_run_blocked_by_repeated_errors_needs_a_person_for_its_phase_only() {
        let note = "the same 1 error(s) failed 3 runs in a row: a person is needed. They keep coming back: t.py:3 boom";
        let verdict = json!({
            "run_id": "r3", "status": "blocked", "phase": "implementation",
            "handoffs": [{"path": "handoffs/F1.md", "escalate": false, "status": "in_progress"}],
            "notes": [note],
        });
        let run = LastRun::from_verdict(&verdict);
        assert_eq!(run.person_needed_for(Some("implementation")), Some(note));
        assert_eq!(run.person_needed_for(Some("qa")), None);

        // Blocked by a document out of retries: that document says so
        // itself, and the others are not stopped by it.
        let verdict = json!({
            "status": "blocked", "phase": "implementation",
            "handoffs": [{"path": "handoffs/F1.md", "escalate": true}],
            "notes": ["handoff `handoffs/F1.md` is out of retries (2 of 2): a person is needed"],
        });
        assert_eq!(LastRun::from_verdict(&verdict).person_needed, None);
    }

    #[test]
    fn the_failure_kept_is_the_checks_not_the_documents_own() {
        let verdict = json!({
            "status": "failed",
            "handoffs": [{"path": "handoffs/F1.md", "retry_count": 1}],
            "summary": [
                "handoffs/F1.md:15 handoff:checkpoints.tests_passing claim contradicted by check `tests`",
                "t.py:3 expected 4, got 5 (tests)",
            ],
        });
        let run = LastRun::from_verdict(&verdict);
        let results = run.results_for("handoffs/F1.md");
        assert!(results.failed);
        assert_eq!(
            results.failure.as_deref(),
            Some("t.py:3 expected 4, got 5 (tests)")
        );
        assert_eq!(results.retries_seen, Some(1));
        assert_eq!(run.results_for("handoffs/other.md").retries_seen, None);

        let only_documents = json!({"status": "failed", "summary": ["handoffs/F1.md:7 handoff:handoff_ready wrong"]});
        assert_eq!(
            LastRun::from_verdict(&only_documents)
                .results_for("x")
                .failure
                .as_deref(),
            Some("handoffs/F1.md:7 handoff:handoff_ready wrong")
        );
    }
}
