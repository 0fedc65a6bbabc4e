//! The rules of a handoff document: fields, types, enums, timestamps,
//! status consistency, checkpoints per stage, `handoff_ready`, the retry
//! budget, and claims checked against this run's checks. Every problem
//! points at its line and column in the document.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::suggest;

use super::extract::{extract, Frontmatter};
use super::time::{lacks_zone, out_of_range, parse_period};
use super::yaml::{parse, Node, Pos, Value};

pub const STAGES: [&str; 4] = ["requirements", "architecture", "implementation", "qa"];
pub const STATUSES: [&str; 4] = ["in_progress", "complete", "failed", "blocked"];
pub const CHECKPOINT_STATUSES: [&str; 3] = ["pass", "fail", "skip"];
pub const BLOCK_REASONS: [&str; 3] = ["needs_human_input", "external_dependency", "scope_change"];
/// The fields of the schema.
pub(crate) const FIELDS: [&str; 12] = [
    "id",
    "stage",
    "title",
    "started_at",
    "completed_at",
    "status",
    "handoff_ready",
    "checkpoints",
    "retry_count",
    "last_failure",
    "block_reason",
    "block_details",
];
const CHECKPOINT_FIELDS: [&str; 3] = ["name", "status", "message"];

/// The checkpoints every document of a stage must have.
pub fn default_checkpoints(stage: &str) -> &'static [&'static str] {
    match stage {
        "requirements" => &[
            "requirements_identified",
            "impact_analyzed",
            "acceptance_criteria_defined",
            "no_open_blockers",
        ],
        "architecture" => &[
            "requirements_addressed",
            "design_complete",
            "tasks_defined",
            "tests_planned",
        ],
        "implementation" => &[
            "tests_written",
            "code_complete",
            "tests_passing",
            "no_lint_errors",
        ],
        "qa" => &[
            "criteria_verified",
            "tests_passing",
            "no_critical_bugs",
            "docs_updated",
        ],
        _ => &[],
    }
}

/// What the rules need from the configuration and the run.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub max_retries: u32,
    /// Required checkpoints per stage, where the configuration overrides them.
    pub checkpoints: BTreeMap<String, Vec<String>>,
    /// Checkpoint → the check whose result verifies it.
    pub claims: BTreeMap<String, String>,
    /// The checks that failed in this run (for claims).
    pub failed_checks: Vec<String>,
    /// The phase whose run failed `failed_checks`, when a run did: they
    /// are evidence about the claims of that stage's documents only (a qa
    /// run's `tests` may be another command, and it did not run the
    /// implementation's).
    pub checked_phase: Option<String>,
    /// The checks of this run that verified nothing (skipped, not
    /// installed, timed out, not a check of the phase), with why: a claim
    /// on one is neither confirmed nor contradicted, and the run says so
    /// rather than pass it in silence. Empty outside a run.
    pub unverified: BTreeMap<String, String>,
    /// The phases the configuration has, for advice that names one; `None`
    /// when not known.
    pub phases: Option<Vec<String>>,
    /// The current time, in seconds since the epoch, that timestamps may
    /// not be later than; `None` holds them to no clock. The command that
    /// validates reads the clock once (`time::now`) and passes it here, so
    /// every document of a run is judged against the same instant and the
    /// rules stay a pure function of their input.
    pub now: Option<i64>,
}

/// One problem, located in the document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub message: String,
    #[serde(skip)]
    pub offset: usize,
    #[serde(skip)]
    pub len: usize,
    /// For a claim a check contradicts, that check: feedback names what
    /// it reported, since the fix is in the code, not in the claim.
    #[serde(skip)]
    pub contradicted_by: Option<String>,
    /// For a claim no check of the run verified, the check it names: the
    /// verdict warns rather than passes in silence.
    #[serde(skip)]
    pub unverified_by: Option<String>,
}

/// A checkpoint as the document states it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    pub name: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub line: usize,
    /// Where its `status` value is (for edits and claims).
    #[serde(skip)]
    pub status_pos: Pos,
}

/// The result of validating one document.
#[derive(Debug, Clone, Serialize)]
pub struct HandoffReport {
    pub path: String,
    pub id: Option<String>,
    pub stage: Option<String>,
    pub status: Option<String>,
    pub valid: bool,
    pub escalate: bool,
    pub errors: Vec<Issue>,
    pub warnings: Vec<Issue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<i64>,
    pub max_retries: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<Checkpoint>,
    /// The required checkpoints of the stage, for feedback.
    #[serde(skip)]
    pub required: Vec<String>,
    /// What a blocked document says it waits for, each when given: one
    /// missing is an error of its own, and the other is still what the
    /// document says. The person it waits for reads them in the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_details: Option<String>,
    /// The line of the `stage:` field, when `stage` was read: an error
    /// about the phase it names points there.
    #[serde(skip)]
    pub stage_line: Option<usize>,
    /// Where the `id` value is, when `id` was read: an error about an id
    /// another document shares points there.
    #[serde(skip)]
    pub id_at: Option<Pos>,
}

struct Collector {
    errors: Vec<Issue>,
    warnings: Vec<Issue>,
    /// Required checkpoints whose entry is already an error (a status
    /// that is none of the three, a near miss of the name): whether they
    /// pass is unknown, and `handoff_ready` is not blamed for that too.
    unjudged: Vec<String>,
}

impl Collector {
    fn error(&mut self, pos: Pos, field: &str, message: String) {
        self.errors.push(issue(pos, field, message));
    }
    fn warning(&mut self, pos: Pos, field: &str, message: String) {
        self.warnings.push(issue(pos, field, message));
    }
}

pub(super) fn issue(pos: Pos, field: &str, message: String) -> Issue {
    Issue {
        line: pos.line,
        column: pos.column,
        field: field.to_string(),
        message,
        offset: pos.offset,
        len: pos.len,
        contradicted_by: None,
        unverified_by: None,
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validates a document read as bytes; with its text, for a person to
/// read. A byte that is not UTF-8 is an error where it stands, in the
/// frontmatter (nothing of it can be trusted), and a warning in the body.
pub fn validate_bytes<'a>(
    path: &str,
    bytes: &'a [u8],
    rules: &Rules,
) -> (HandoffReport, std::borrow::Cow<'a, str>) {
    let at = match std::str::from_utf8(bytes) {
        Ok(text) => return (validate(path, text, rules), text.into()),
        Err(e) => e.valid_up_to(),
    };
    // Where the first byte that is not UTF-8 is.
    let before = String::from_utf8_lossy(&bytes[..at]).into_owned();
    let line = before.matches('\n').count() + 1;
    // The column counts characters as an editor shows them: a byte order
    // mark at the start of the file is not one.
    let last = before.rsplit('\n').next().unwrap_or_default();
    let last = if line == 1 {
        last.strip_prefix('\u{feff}').unwrap_or(last)
    } else {
        last
    };
    let column = last.chars().count() + 1;
    let text = String::from_utf8_lossy(bytes);
    let issue = Issue {
        line,
        column,
        field: "document".to_string(),
        message: format!(
            "the document is not valid UTF-8 (line {line}, column {column}): save it as UTF-8"
        ),
        offset: before.len(),
        len: 1,
        contradicted_by: None,
        unverified_by: None,
    };
    let in_body = super::extract::extract(&before).is_ok_and(|fm| fm.closing_line < line);
    if in_body {
        let mut report = validate(path, &text, rules);
        report.warnings.push(issue);
        (report, text)
    } else {
        (refused(path, issue, rules), text)
    }
}

/// Validates a document as `read` read it. Of one longer than
/// `read::MAX_BYTES` only the frontmatter is judged, which must close
/// within what was read: a frontmatter that does not is no handoff's.
pub fn validate_document<'a>(
    path: &str,
    document: &'a super::read::Document,
    rules: &Rules,
) -> (HandoffReport, std::borrow::Cow<'a, str>) {
    if !document.truncated {
        return validate_bytes(path, &document.bytes, rules);
    }
    // Up to the last whole line, so a character cut in two at the bound
    // is not taken for a byte that is not UTF-8.
    let bytes = &document.bytes;
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let read = &bytes[..whole];
    let mib = super::read::MAX_BYTES >> 20;
    if matches!(
        extract(&String::from_utf8_lossy(read)),
        Err(super::extract::ExtractError::Unterminated)
    ) {
        let error = issue(
            OPENING,
            "frontmatter",
            format!(
                "the frontmatter that opens on line 1 does not close within the document's first {mib} MiB, all phasegate reads of it: a handoff's frontmatter is a few fields; add a `---` line after its last field"
            ),
        );
        return (refused(path, error, rules), String::from_utf8_lossy(read));
    }
    let (mut report, text) = validate_bytes(path, read, rules);
    report.warnings.push(issue(
        OPENING,
        "document",
        format!(
            "the document is larger than {mib} MiB: only its frontmatter and first {mib} MiB were read"
        ),
    ));
    (report, text)
}

/// The opening `---` of a frontmatter, where an error about the whole
/// document points.
const OPENING: Pos = Pos {
    line: 1,
    column: 1,
    offset: 0,
    len: 3,
};

/// The report of a document nothing of which can be judged: `error` is
/// its one error.
fn refused(path: &str, error: Issue, rules: &Rules) -> HandoffReport {
    let mut report = validate(path, "", rules);
    report.errors = vec![error];
    report
}

/// The report of a document that could not be read.
pub fn unreadable(path: &str, error: &dyn std::fmt::Display, rules: &Rules) -> HandoffReport {
    let at = Pos { len: 0, ..OPENING };
    let error = issue(
        at,
        "document",
        format!("failed to read the document: {error}"),
    );
    refused(path, error, rules)
}

/// How many of its `max` retries a document with `retry_count` `count`
/// has used, for a person: `2 of 2`. A count beyond the budget (an error
/// of its own) is all of it, and says what the document claims, rather
/// than "5 of 2".
pub fn retries_used(count: i64, max: u32) -> String {
    if count <= i64::from(max) {
        format!("{} of {max}", count.max(0))
    } else {
        format!("{max} of {max}; `retry_count` says {count}, more than `max_retries` allows")
    }
}

/// How many characters of a blocked document's `block_details` a one-line
/// message keeps: the document has them whole.
const BLOCK_DETAILS_SHOWN: usize = 200;

/// What a blocked document says it waits for, to follow "says it is
/// blocked" in a one-line message: ` (needs_human_input: Should an empty
/// list sum to 0?)`, its details on one line, long ones cut; empty when
/// it says neither.
pub fn blocked_on(reason: Option<&str>, details: Option<&str>) -> String {
    let details = details.map(|text| {
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match line.char_indices().nth(BLOCK_DETAILS_SHOWN) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line,
        }
    });
    match (reason, details.as_deref().filter(|d| !d.is_empty())) {
        (Some(reason), Some(details)) => format!(" ({reason}: {details})"),
        (Some(reason), None) => format!(" ({reason})"),
        (None, Some(details)) => format!(" ({details})"),
        (None, None) => String::new(),
    }
}

/// Validates the document `text` found at `path`.
pub fn validate(path: &str, text: &str, rules: &Rules) -> HandoffReport {
    let mut report = HandoffReport {
        path: path.to_string(),
        id: None,
        stage: None,
        status: None,
        valid: false,
        escalate: false,
        errors: Vec::new(),
        warnings: Vec::new(),
        retry_count: None,
        max_retries: rules.max_retries,
        last_failure: None,
        checkpoints: Vec::new(),
        required: Vec::new(),
        block_reason: None,
        block_details: None,
        stage_line: None,
        id_at: None,
    };
    let mut c = Collector {
        errors: Vec::new(),
        warnings: Vec::new(),
        unjudged: Vec::new(),
    };
    let Some((root, closing)) = mapping(text, &mut c) else {
        return finish(report, c);
    };
    let fields = Fields {
        root: &root,
        text,
        closing,
    };
    let id = fields.text(&mut c, "id", true);
    if let Some((id, pos)) = &id {
        super::ids::named_after_another(&mut c.warnings, path, id, *pos);
    }
    report.id_at = id.as_ref().map(|(_, pos)| *pos);
    report.id = id.map(|(v, _)| v);
    let _ = fields.text(&mut c, "title", true);
    let stage = fields.choice(&mut c, "stage", &STAGES, true);
    report.stage = stage.as_ref().map(|(s, _)| s.clone());
    report.stage_line = stage.as_ref().map(|(_, pos)| pos.line);
    let status = fields.choice(&mut c, "status", &STATUSES, true);
    report.status = status.as_ref().map(|(s, _)| s.clone());
    let started = fields.instant(&mut c, "started_at", true);
    let completed = fields.instant(&mut c, "completed_at", false);
    if let Some(now) = rules.now {
        for (name, at) in [("started_at", &started), ("completed_at", &completed)] {
            if let Some((((first, _), (last, _)), pos)) = at {
                // A date alone, or a time without a zone, is read as UTC,
                // but its author may be anywhere: on the far side of the
                // date line it is already tomorrow.
                let zoneless = *last > *first
                    || matches!(root.get(name), Some(Node { value: Value::Str(s), .. }) if lacks_zone(s));
                let earliest = if zoneless {
                    *first - EARLIEST_ZONE_SECS
                } else {
                    *first
                };
                not_in_the_future(&mut c, name, earliest, *pos, now);
            }
        }
    }
    report.last_failure = fields.text(&mut c, "last_failure", false).map(|(v, _)| v);
    let block_reason = fields.choice(&mut c, "block_reason", &BLOCK_REASONS, false);
    let block_details = fields.text(&mut c, "block_details", false);
    report.block_reason = block_reason.as_ref().map(|(reason, _)| reason.clone());
    report.block_details = block_details.as_ref().map(|(details, _)| details.clone());
    let retry_count = fields.retry_count(&mut c, rules.max_retries);
    report.retry_count = retry_count;
    let ready = fields.ready(&mut c);

    if let Some(status) = &status {
        let constrained = Constrained {
            started: started.as_ref(),
            completed: completed.as_ref(),
            block_reason: block_reason.as_ref(),
            block_details: block_details.as_ref(),
        };
        status_consistency(&mut c, &root, status, &constrained);
    }
    checkpoint_rules(&mut c, &fields, rules, &mut report);
    if let Some(ready) = ready {
        ready_matches_checkpoints(&mut c, ready, &report);
    }
    claims_hold(&mut c, rules, &report, stage.as_ref().map(|(_, pos)| *pos));

    let failing = matches!(report.status.as_deref(), Some("failed" | "blocked"));
    report.escalate = failing && retry_count.is_some_and(|n| n >= i64::from(rules.max_retries));
    finish(report, c)
}

/// For two timestamps written in different zones (`09:00:00+01:00` and
/// `07:30:00Z`), both as UTC, which is how they were compared: written as
/// they are, the earlier one can look the later. Empty when the zones
/// agree, or a value has none.
fn in_utc(root: &Node, started: i64, completed: i64) -> String {
    let zone = |name: &str| match root.get(name) {
        Some(Node {
            value: Value::Str(text),
            ..
        }) => super::time::zone_seconds(text),
        _ => None,
    };
    match (zone("started_at"), zone("completed_at")) {
        (Some(a), Some(b)) if a != b => format!(
            " (in UTC, `started_at` is {} and `completed_at` {})",
            super::time::utc_text(started),
            super::time::utc_text(completed)
        ),
        _ => String::new(),
    }
}

/// The frontmatter's mapping of fields, and where a missing field would go
/// (its closing delimiter); without one, the errors say why.
fn mapping(text: &str, c: &mut Collector) -> Option<(Node, Pos)> {
    let start = Pos {
        line: 1,
        column: 1,
        offset: 0,
        len: text.lines().next().map_or(1, |l| l.len().max(1)),
    };
    let mut fm = match extract(text) {
        Ok(fm) => fm,
        Err(super::extract::ExtractError::Unterminated) => {
            c.error(start, "frontmatter", never_closed(text));
            return None;
        }
        Err(e) => {
            // A frontmatter below a title or a blank line is there, only
            // too late: "no frontmatter" would send the author looking for
            // what is missing rather than for what to delete.
            let message = match super::extract::late_start(text, &FIELDS) {
                Some(line) => format!(
                    "the frontmatter must open on line 1, but its `---` is on line {line}: delete {} above it (a title goes below the frontmatter)",
                    if line == 2 {
                        "line 1".to_string()
                    } else {
                        format!("lines 1-{}", line - 1)
                    }
                ),
                None => e.message().to_string(),
            };
            c.error(start, "frontmatter", message);
            return None;
        }
    };
    // A frontmatter that runs into the document's text was not closed
    // where it ends: the fields before the text are judged, and the text
    // is the error, not a source of unknown fields and duplicate keys.
    let whole = fm.yaml;
    let mut body = super::extract::body_start(whole, &FIELDS).map(|at| (at, false));
    let upto = |body: Option<(usize, bool)>| body.map_or(whole, |(at, _)| &whole[..at]);
    let mut parsed = parse(&Frontmatter {
        yaml: upto(body),
        ..fm.clone()
    });
    // Prose right below the last field (no blank line between) is found
    // only when it breaks the YAML, and taken for the document's text
    // only when the fields above it then parse: a mistake among the
    // fields keeps the parser's own error.
    if let Err(e) = &parsed {
        let reported = e.pos.offset.saturating_sub(fm.offset);
        if let Some(at) = super::extract::prose_start(upto(body), reported, &FIELDS) {
            let retried = parse(&Frontmatter {
                yaml: &whole[..at],
                ..fm.clone()
            });
            if retried.is_ok() {
                body = Some((at, true));
                parsed = retried;
            }
        }
    }
    if let Some((at, prose)) = body {
        let at = super::extract::with_headings_above(whole, at);
        let (line, last) = lines_around(whole, at, fm.first_line);
        let shown = whole[at..].lines().next().unwrap_or_default();
        let message = if prose {
            format!(
                "line {line} is text, not a field (`key: value`): the frontmatter that opens on line 1 is probably missing its closing `---` above it: add a `---` line after line {last}, its last field (or, if the line goes on with the value above it, indent it)"
            )
        } else {
            format!(
                "the frontmatter that opens on line 1 is not closed before the document's text on line {line}: add a `---` line after line {last}, its last field"
            )
        };
        c.error(
            Pos {
                line,
                column: 1,
                offset: fm.offset + at,
                len: shown.trim_end().len().max(1),
            },
            "frontmatter",
            message,
        );
        fm.yaml = &whole[..at];
        fm.closing_line = line;
    }
    let closing = Pos {
        line: fm.closing_line,
        column: 1,
        offset: fm.offset + fm.yaml.len(),
        len: 3,
    };
    let root = match parsed {
        Ok((root, duplicates)) => {
            for d in duplicates {
                c.error(d.pos, "frontmatter", d.message);
            }
            root
        }
        Err(e) => {
            c.error(e.pos, "frontmatter", e.message);
            return None;
        }
    };
    let Some(root) = root.filter(|r| matches!(r.value, Value::Map(_))) else {
        c.error(
            start,
            "frontmatter",
            "the frontmatter must be a YAML mapping of fields (`id: ...`, `stage: ...`)"
                .to_string(),
        );
        return None;
    };
    if let Value::Map(entries) = &root.value {
        unknown_fields(c, entries, &FIELDS, None);
    }
    Some((root, closing))
}

/// The error of a frontmatter no `---` or `...` line closes: where its
/// closing line goes, before the document's text when some reads as text,
/// else after the last line.
fn never_closed(text: &str) -> String {
    let after_opening = text.find('\n').map_or(text.len(), |i| i + 1);
    let rest = &text[after_opening..];
    // Prose right below the last field, as where a closed frontmatter
    // runs into it: only when it breaks the YAML and the fields above it
    // parse.
    let read = |yaml| {
        parse(&Frontmatter {
            yaml,
            offset: after_opening,
            first_line: 2,
            closing_line: 2,
        })
    };
    let prose = || {
        let reported = read(rest).err()?.pos.offset.saturating_sub(after_opening);
        super::extract::prose_start(rest, reported, &FIELDS).filter(|&at| read(&rest[..at]).is_ok())
    };
    let last = match super::extract::body_start(rest, &FIELDS).or_else(prose) {
        Some(body) => lines_around(rest, super::extract::with_headings_above(rest, body), 2).1,
        None => {
            1 + rest.lines().count()
                - rest
                    .lines()
                    .rev()
                    .take_while(|l| l.trim().is_empty())
                    .count()
        }
    };
    format!("the frontmatter that opens on line 1 is never closed: add a `---` line after line {last}, its last field")
}

/// The document line of byte `at` of `yaml`, whose first line is line
/// `first_line`, and the last line before it that is not blank.
fn lines_around(yaml: &str, at: usize, first_line: usize) -> (usize, usize) {
    let before = &yaml[..at];
    let line = first_line + before.matches('\n').count();
    let blank_lines = before
        .lines()
        .rev()
        .take_while(|l| l.trim().is_empty())
        .count();
    (line, (line - 1 - blank_lines).max(1))
}

/// A field's value and where it is.
type At<T> = (T, Pos);

/// An instant: seconds and nanoseconds since the epoch.
type Instant = (i64, u32);

/// The first and the last instant a timestamp means (a date alone means
/// its whole day).
type Period = (Instant, Instant);

/// The frontmatter's fields, read with their positions; an error for each
/// one that is missing where required or of the wrong type.
struct Fields<'a> {
    root: &'a Node,
    /// The document, for a value as its author wrote it (`0o7`, not 7).
    text: &'a str,
    /// Where a missing field would go: the closing delimiter.
    closing: Pos,
}

impl Fields<'_> {
    /// A text field; `None` (and an error when `required`) when it is
    /// missing, null, empty or not text.
    fn text(&self, c: &mut Collector, name: &str, required: bool) -> Option<At<String>> {
        match self.root.get(name) {
            None
            | Some(Node {
                value: Value::Null, ..
            }) if required => {
                let pos = self.root.get(name).map_or(self.closing, |n| n.pos);
                c.error(pos, name, format!("`{name}` is required"));
                None
            }
            None
            | Some(Node {
                value: Value::Null, ..
            }) => None,
            Some(Node {
                value: Value::Str(s),
                pos,
            }) if s.trim().is_empty() && required => {
                c.error(*pos, name, format!("`{name}` cannot be empty"));
                None
            }
            Some(Node {
                value: Value::Str(s),
                pos,
            }) => Some((s.clone(), *pos)),
            Some(node) => {
                // `id: 42` or `title: 2026` reads as a number, `title: yes`
                // as text: a scalar that is not text wants quotes.
                let fix = match node.value {
                    Value::Seq(_) | Value::Map(_) => ": write it as one line of text",
                    _ => ": put the value in quotes",
                };
                c.error(
                    node.pos,
                    name,
                    format!("`{name}` must be text, not {}{fix}", node.kind()),
                );
                None
            }
        }
    }

    /// A text field that must be one of `allowed`.
    fn choice(
        &self,
        c: &mut Collector,
        name: &str,
        allowed: &[&str],
        required: bool,
    ) -> Option<At<String>> {
        // `block_reason: [a]` or `stage: 3` is none of the values, which
        // the error lists rather than asking for text of any kind.
        if let Some(node) = self
            .root
            .get(name)
            .filter(|n| !matches!(n.value, Value::Str(_) | Value::Null))
        {
            c.error(
                node.pos,
                name,
                format!(
                    "`{name}` must be one of {}, not {}",
                    quoted(allowed),
                    node.kind()
                ),
            );
            return None;
        }
        let (value, pos) = self.text(c, name, required)?;
        if allowed.contains(&value.as_str()) {
            return Some((value, pos));
        }
        let hint = match suggest(&value, allowed.iter().copied()) {
            Some(near) => format!("; did you mean \"{near}\"?"),
            None => String::new(),
        };
        c.error(
            pos,
            name,
            format!(
                "`{name}` must be one of {}, not \"{}\"{hint}",
                quoted(allowed),
                super::excerpt::short(&value)
            ),
        );
        None
    }

    /// An ISO 8601 timestamp, as the instants it may mean.
    fn instant(&self, c: &mut Collector, name: &str, required: bool) -> Option<At<Period>> {
        let (value, pos) = self.text(c, name, required)?;
        if let Some(at) = parse_period(&value) {
            // The module reads a time without a zone as UTC; an author
            // writing their own clock's time would compare wrongly with a
            // timestamp that has one, and nothing would say why.
            if lacks_zone(&value) {
                c.warning(
                    pos,
                    name,
                    format!(
                        "`{name}` (`{}`) has no time zone, so it is read as UTC: add `Z` when it is UTC, or its offset (`+01:00`) when it is not",
                        value.trim()
                    ),
                );
            }
            return Some((at, pos));
        }
        let message = match out_of_range(&value) {
            Some(reason) => format!(
                "`{name}` (`{}`) is not a real date and time: {reason}",
                value.trim()
            ),
            None if value.trim().is_empty() => format!(
                "`{name}` is empty: write a timestamp like 2026-01-31T14:05:00Z, or remove the field"
            ),
            None => format!(
                "`{name}` is not an ISO 8601 timestamp (`{value}`): write it like 2026-01-31T14:05:00Z"
            ),
        };
        c.error(pos, name, message);
        None
    }

    /// `retry_count`: 0 when absent, an error beyond `max_retries`; `None`
    /// when it is no whole number.
    fn retry_count(&self, c: &mut Collector, max_retries: u32) -> Option<i64> {
        match self.root.get("retry_count") {
            None
            | Some(Node {
                value: Value::Null, ..
            }) => Some(0),
            Some(Node {
                value: Value::Int(n),
                pos,
            }) => {
                if *n < 0 || *n > i64::from(max_retries) {
                    // `0o7` or `0x10` is shown as written: "not 7" would
                    // name a number the document does not contain.
                    let written = written(self.text, *pos);
                    let shown = if written == n.to_string() {
                        n.to_string()
                    } else {
                        format!("`{written}` (which is {n})")
                    };
                    c.error(
                        *pos,
                        "retry_count",
                        format!(
                            "`retry_count` must be between 0 and {max_retries} (`max_retries`), not {shown}"
                        ),
                    );
                }
                Some(*n)
            }
            Some(node) => {
                c.error(
                    node.pos,
                    "retry_count",
                    format!(
                        "`retry_count` must be a whole number from 0 to {max_retries}, not {}",
                        shown_with_fix(node, written(self.text, node.pos), false)
                    ),
                );
                None
            }
        }
    }

    /// `handoff_ready`, required, true or false.
    fn ready(&self, c: &mut Collector) -> Option<At<bool>> {
        match self.root.get("handoff_ready") {
            Some(Node {
                value: Value::Bool(b),
                pos,
            }) => Some((*b, *pos)),
            None
            | Some(Node {
                value: Value::Null, ..
            }) => {
                let pos = self
                    .root
                    .get("handoff_ready")
                    .map_or(self.closing, |n| n.pos);
                c.error(
                    pos,
                    "handoff_ready",
                    "`handoff_ready` is required (true or false)".to_string(),
                );
                None
            }
            Some(node) => {
                c.error(
                    node.pos,
                    "handoff_ready",
                    format!(
                        "`handoff_ready` must be true or false, not {}",
                        shown_with_fix(node, written(self.text, node.pos), true)
                    ),
                );
                None
            }
        }
    }
}

/// How far ahead of the clock a timestamp may be: the author's clock and
/// the one that validates (a CI runner's, another machine's) are rarely
/// the same to the second, and a minute or two of drift is no claim.
pub const CLOCK_SKEW_SECS: i64 = 5 * 60;

/// The farthest ahead of UTC a clock is (UTC+14, Kiribati's Line
/// Islands): the earliest a date alone or a time without a zone can mean.
const EARLIEST_ZONE_SECS: i64 = 14 * 3_600;

/// A timestamp later than `now` records work that has not happened yet:
/// nothing can have verified it, and a `completed_at` in the future would
/// otherwise satisfy every rule about when work completed. `at` is the
/// earliest instant the timestamp can mean, so today's date is never in
/// the future, wherever its author is.
fn not_in_the_future(c: &mut Collector, name: &str, at: i64, pos: Pos, now: i64) {
    let ahead = at.saturating_sub(now);
    if ahead <= CLOCK_SKEW_SECS {
        return;
    }
    let (amount, unit) = if ahead < 3_600 {
        (ahead / 60, "minute")
    } else if ahead < 86_400 {
        (ahead / 3_600, "hour")
    } else {
        (ahead / 86_400, "day")
    };
    let plural = if amount == 1 { "" } else { "s" };
    c.error(
        pos,
        name,
        format!(
            "`{name}` is {amount} {unit}{plural} in the future: a handoff records what has already happened, so write the time it did (and check the time zone: `Z` is UTC)"
        ),
    );
}

/// The text of the value at `pos` as the document has it.
fn written(text: &str, pos: Pos) -> &str {
    text.get(pos.offset..pos.offset + pos.len)
        .unwrap_or_default()
        .trim()
}

/// A scalar of the wrong type as the error names it, with the fix when
/// the author meant a whole number (`want_bool` false) or a boolean:
/// `"2"` and `"true"` are quoted, `yes` and `on` are text in YAML 1.2
/// (YAML 1.1 read them as booleans), `2.0` has a fraction. A number is
/// shown as `written` in the document: `1e23` for a long row of digits
/// would name a value the author never wrote.
fn shown_with_fix(node: &Node, written: &str, want_bool: bool) -> String {
    match &node.value {
        Value::Str(text) => {
            let t = text.trim();
            let fix = if want_bool {
                match (plain_bool(t), yaml11_bool(t)) {
                    (Some(_), _) => format!(": write {t} without quotes"),
                    (None, Some(b)) => format!(": write {b} (YAML 1.2 reads `{t}` as text)"),
                    (None, None) => String::new(),
                }
            } else if t.parse::<i64>().is_ok() {
                format!(": write {t} without quotes")
            } else {
                String::new()
            };
            format!("the text \"{}\"{fix}", super::excerpt::short(text))
        }
        Value::Float(f) if !want_bool && f.is_nan() => format!("{written} (not a number)"),
        Value::Float(f) if !want_bool && f.is_infinite() => format!("{written} (infinity)"),
        Value::Float(f) if !want_bool && f.fract() == 0.0 && f.abs() < 1e15 => {
            format!("{written}: write {f} without a fraction")
        }
        Value::Float(f) if !want_bool && f.fract() == 0.0 => {
            format!("{written}, a number too large to count retries")
        }
        Value::Float(_) if !want_bool => written.to_string(),
        _ => node.kind().to_string(),
    }
}

fn plain_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// The booleans of YAML 1.1 that YAML 1.2 reads as text.
fn yaml11_bool(text: &str) -> Option<bool> {
    match text.to_lowercase().as_str() {
        "yes" | "y" | "on" => Some(true),
        "no" | "n" | "off" => Some(false),
        _ => None,
    }
}

/// The fields a status constrains.
#[derive(Clone, Copy)]
struct Constrained<'a> {
    started: Option<&'a At<Period>>,
    completed: Option<&'a At<Period>>,
    block_reason: Option<&'a At<String>>,
    block_details: Option<&'a At<String>>,
}

/// What a status requires of the other fields: a blocked document says why
/// and what it needs, a complete one when (not before it began), one in
/// progress has not completed.
fn status_consistency(
    c: &mut Collector,
    root: &Node,
    (status, status_pos): &At<String>,
    constrained: &Constrained<'_>,
) {
    let Constrained {
        started,
        completed,
        block_reason,
        block_details,
    } = *constrained;
    match status.as_str() {
        "blocked" => {
            if block_reason.is_none() && !c.errors.iter().any(|e| e.field == "block_reason") {
                c.error(
                    *status_pos,
                    "block_reason",
                    format!(
                        "a blocked document needs `block_reason` ({})",
                        quoted(&BLOCK_REASONS)
                    ),
                );
            }
            let said = block_details
                .as_ref()
                .filter(|(text, _)| !text.trim().is_empty());
            if said.is_none() && !c.errors.iter().any(|e| e.field == "block_details") {
                // An empty text is no more an answer than none.
                let pos = block_details.as_ref().map_or(*status_pos, |(_, pos)| *pos);
                c.error(
                    pos,
                    "block_details",
                    "a blocked document needs `block_details`: say what is needed".to_string(),
                );
            }
        }
        "complete" => match (&completed, &started) {
            (None, _) if !c.errors.iter().any(|e| e.field == "completed_at") => c.error(
                // At `completed_at: null` when it is there, else at the status.
                root.get("completed_at").map_or(*status_pos, |n| n.pos),
                "completed_at",
                "a complete document needs `completed_at`".to_string(),
            ),
            // Before only when it cannot be after: a date alone may be
            // any time of its day.
            (Some(((_, done), pos)), Some(((begun, _), started_pos))) if done < begun => c.error(
                *pos,
                "completed_at",
                format!(
                    "`completed_at` is before `started_at` (line {}){}: correct whichever is wrong",
                    started_pos.line,
                    in_utc(root, begun.0, done.0)
                ),
            ),
            _ => {}
        },
        "in_progress" => {
            if let Some((_, pos)) = &completed {
                c.error(*pos, "completed_at", "a document in progress has no `completed_at`: remove it or set `status: complete`".to_string());
            }
        }
        _ => {}
    }
}

/// The checkpoints: a list of valid entries, each listed once, with every
/// checkpoint the stage requires (those the configuration names, or the
/// defaults), which `report` records.
fn checkpoint_rules(
    c: &mut Collector,
    fields: &Fields<'_>,
    rules: &Rules,
    report: &mut HandoffReport,
) {
    let (root, closing) = (fields.root, fields.closing);
    let required: Vec<String> = match &report.stage {
        Some(stage) => rules.checkpoints.get(stage).cloned().unwrap_or_else(|| {
            default_checkpoints(stage)
                .iter()
                .map(|s| (*s).to_string())
                .collect()
        }),
        None => Vec::new(),
    };
    report.required.clone_from(&required);
    match root.get("checkpoints") {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => {
            let pos = root.get("checkpoints").map_or(closing, |n| n.pos);
            c.error(
                pos,
                "checkpoints",
                "`checkpoints` is required: a list of `{name, status}`".to_string(),
            );
        }
        Some(Node {
            value: Value::Seq(items),
            pos: list_pos,
        }) => {
            // Names listed, valid entries or not: a checkpoint with a bad
            // status is wrong, not missing. `- tests_passing` names one too,
            // in the wrong shape.
            let listed: Vec<(String, Pos)> = items
                .iter()
                .filter_map(|item| match item.get("name").unwrap_or(item) {
                    Node {
                        value: Value::Str(s),
                        pos,
                    } => Some((s.clone(), *pos)),
                    _ => None,
                })
                .collect();
            let key_pos = root.key("checkpoints").map_or(*list_pos, |k| k.pos);
            let mut missing: Vec<&str> = required
                .iter()
                .filter(|r| !listed.iter().any(|(name, _)| name == *r))
                .map(String::as_str)
                .collect();
            // A required checkpoint listed under a near miss of its name
            // (`Tests_Passing`, `tests-passing`, `test_passing`) is wrong
            // where that entry is, not missing from the list as a whole.
            for (name, pos) in &listed {
                if required.contains(name) {
                    continue;
                }
                // A name longer than a line is near a required one by its
                // start only, and is quoted cut (`excerpt::short`).
                let near = if name.chars().count() > super::excerpt::WIDTH {
                    name.chars().take(super::excerpt::WIDTH).collect()
                } else {
                    name.clone()
                };
                let Some(meant) = suggest(near.trim(), missing.iter().copied()) else {
                    continue;
                };
                // A longer name that starts with it is a checkpoint of its
                // own (`tests_passing_e2e`).
                if name.trim().len() > meant.len() + 1 && name.trim().starts_with(&meant) {
                    continue;
                }
                let name = super::excerpt::short(name);
                missing.retain(|m| *m != meant);
                c.unjudged.push(meant.clone());
                c.error(
                    *pos,
                    "checkpoints",
                    format!(
                        "checkpoint `{name}` is not `{meant}`, which stage `{}` requires: names are exact, write `{meant}`",
                        report.stage.as_deref().unwrap_or("?")
                    ),
                );
            }
            // An entry whose name cannot be read (`name: 3`, `name: null`,
            // no `name`) may be any of the required checkpoints no entry
            // names: they are unknown, not missing, and that entry's error
            // names them, so one typo is one error.
            let nameless = items.iter().filter(|item| !has_name(item)).count();
            let unlisted = if nameless > 0 {
                c.unjudged.extend(missing.iter().map(|m| (*m).to_string()));
                Unlisted {
                    stage: report.stage.as_deref(),
                    names: std::mem::take(&mut missing),
                }
            } else {
                Unlisted {
                    stage: None,
                    names: Vec::new(),
                }
            };
            // Each checkpoint's first line, to find one listed twice at once.
            let mut first_lines: std::collections::HashMap<String, usize> =
                std::collections::HashMap::new();
            for item in items {
                let Some(cp) = checkpoint(c, item, fields.text, &unlisted) else {
                    if let Some(Node {
                        value: Value::Str(name),
                        ..
                    }) = item.get("name").or(Some(item))
                    {
                        c.unjudged.push(name.clone());
                    }
                    continue;
                };
                if let Some(&first) = first_lines.get(&cp.name) {
                    let pos = item.get("name").map_or(item.pos, |n| n.pos);
                    c.error(
                        pos,
                        "checkpoints",
                        format!(
                            "checkpoint `{}` is listed twice (first on line {first})",
                            super::excerpt::short(&cp.name)
                        ),
                    );
                    continue;
                }
                first_lines.insert(cp.name.clone(), cp.line);
                report.checkpoints.push(cp);
            }
            if !missing.is_empty() {
                c.error(
                    key_pos,
                    "checkpoints",
                    format!(
                        "stage `{}` requires the checkpoint{} {}",
                        report.stage.as_deref().unwrap_or("?"),
                        if missing.len() == 1 { "" } else { "s" },
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
        Some(node) => c.error(
            node.pos,
            "checkpoints",
            format!("`checkpoints` must be a list, not {}", node.kind()),
        ),
    }
}

/// `handoff_ready` must say what the checkpoints say: true exactly when
/// every required checkpoint passes (a skip is not a pass).
fn ready_matches_checkpoints(c: &mut Collector, (ready, pos): At<bool>, report: &HandoffReport) {
    let required = &report.required;
    let not_passing: Vec<&str> = required
        .iter()
        .filter(|r| {
            !report
                .checkpoints
                .iter()
                .any(|p| &p.name == *r && p.status == "pass")
        })
        .map(String::as_str)
        .collect();
    // A required checkpoint whose entry is an error has that error to fix
    // first: one mistake, one error.
    let blamed: Vec<&str> = not_passing
        .iter()
        .copied()
        .filter(|r| !c.unjudged.iter().any(|u| u == r))
        .collect();
    if ready && !blamed.is_empty() {
        let not_passing = blamed;
        // The reminder that a skip is no pass is for a document that has
        // one: said of a `fail`, it reads as if the checkpoint were skipped.
        let skipped = report
            .checkpoints
            .iter()
            .any(|p| p.status == "skip" && not_passing.contains(&p.name.as_str()));
        c.error(
            pos,
            "handoff_ready",
            format!(
                "`handoff_ready` is true but {} not pass{}: set it to false until every required checkpoint passes",
                not_passing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if not_passing.len() == 1 {
                        " does"
                    } else {
                        " do"
                    },
                if skipped { " (a skip is not a pass)" } else { "" }
            ),
        );
    } else if !ready && not_passing.is_empty() {
        // A stage configured to require no checkpoint
        // (`[handoff.checkpoints] qa = []`) has every required one passing,
        // vacuously: nothing holds its documents back, as an empty `checks`
        // list holds back no run. Left unchecked, `false` would go on
        // saying "not ready" where feedback says the handoff may proceed.
        // A document without a readable stage has no required set to go
        // by; its `stage` error says what to fix.
        let message = match &report.stage {
            None => return,
            Some(stage) if required.is_empty() => format!(
                "`handoff_ready` is false, but stage `{stage}` requires no checkpoint (`[handoff.checkpoints] {stage} = []`), so nothing holds the handoff back: set it to true, or list the checkpoints `{stage}` requires under `[handoff.checkpoints]`"
            ),
            Some(_) => {
                "`handoff_ready` is false although every required checkpoint passes: set it to true"
                    .to_string()
            }
        };
        c.error(pos, "handoff_ready", message);
    }
}

/// A checkpoint that claims what a check of this run verifies
/// (`tests_passing` ↔ `tests`) is contradicted when that check failed; a
/// run of another phase than the document's stage verified none of its
/// claims, which a warning says where the stage is named.
fn claims_hold(c: &mut Collector, rules: &Rules, report: &HandoffReport, stage_pos: Option<Pos>) {
    if let (Some(phase), Some(stage)) = (&rules.checked_phase, &report.stage) {
        if phase != stage {
            let claimed: Vec<String> = report
                .checkpoints
                .iter()
                .filter(|cp| rules.claims.contains_key(&cp.name))
                .map(|cp| format!("`{}`", cp.name))
                .collect();
            if let (false, Some(pos)) = (claimed.is_empty(), stage_pos) {
                c.warning(
                    pos,
                    "stage",
                    format!(
                        "this run checked phase `{phase}`, not `{stage}`: it verified none of the claims ({}); run `phasegate run --phase {stage}` to check them",
                        claimed.join(", ")
                    ),
                );
            }
            return;
        }
    }
    for cp in &report.checkpoints {
        if cp.status != "pass" {
            continue;
        }
        if let Some(check) = rules.claims.get(&cp.name) {
            if let (false, Some(why)) = (
                rules.failed_checks.contains(check),
                rules.unverified.get(check),
            ) {
                let mut unverified = issue(
                    cp.status_pos,
                    &format!("checkpoints.{}", cp.name),
                    format!(
                        "claim not verified: `{}` says pass, but check `{check}` verified nothing in this run ({why}), so nothing confirmed it: make `{check}` run before handing off",
                        cp.name
                    ),
                );
                unverified.unverified_by = Some(check.clone());
                c.warnings.push(unverified);
            }
            if rules.failed_checks.contains(check) {
                let mut contradicted = issue(
                    cp.status_pos,
                    &format!("checkpoints.{}", cp.name),
                    format!("claim contradicted by check `{check}`: `{}` says pass, but `{check}` failed in this run", cp.name),
                );
                contradicted.contradicted_by = Some(check.clone());
                c.errors.push(contradicted);
            }
        }
    }
}

/// A warning for every key not in `known`, with the nearest known one.
/// `field` names where they are (the key itself when `None`).
fn unknown_fields(
    c: &mut Collector,
    entries: &[(super::yaml::Key, Node)],
    known: &[&str],
    field: Option<&str>,
) {
    for (key, _) in entries {
        if known.contains(&key.name.as_str()) {
            continue;
        }
        // A name longer than a line is near a field only by its start
        // (`status_…`): comparing the whole of a megabyte-long one with
        // each field takes a second and finds nothing more.
        let start: String = key.name.chars().take(super::excerpt::WIDTH).collect();
        let hint = match suggest(&start, known.iter().copied()) {
            Some(near) => format!("; did you mean `{near}`?"),
            None => String::new(),
        };
        let what = if field.is_some() {
            "checkpoint field"
        } else {
            "field"
        };
        // Quoted, and named, cut as a value is: whole, a pasted log as a
        // key floods the report and an agent's context.
        let name = super::excerpt::short(&key.name);
        c.warning(
            key.pos,
            field.unwrap_or(&name),
            format!("unknown {what} `{name}`{hint}"),
        );
    }
}

/// Whether a checkpoint entry names a checkpoint: `name:` with text, or
/// the name alone (`- tests_passing`, the wrong shape but a name).
fn has_name(item: &Node) -> bool {
    matches!(
        item.get("name").unwrap_or(item),
        Node { value: Value::Str(s), .. } if !s.trim().is_empty()
    )
}

/// The required checkpoints no entry names, while some entry's name
/// cannot be read: that entry may be one of them.
struct Unlisted<'a> {
    stage: Option<&'a str>,
    names: Vec<&'a str>,
}

impl Unlisted<'_> {
    /// What the error of an entry without a readable name adds: the
    /// required checkpoints it may be.
    fn hint(&self) -> String {
        let Some(first) = self.names.first() else {
            return String::new();
        };
        let names = self
            .names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let (which, it) = if self.names.len() == 1 {
            ("it", format!("`name: {first}`"))
        } else {
            ("one of them", "its name".to_string())
        };
        format!(
            "; stage `{}` requires {names}, which no entry names: if this entry is {which}, write {it}",
            self.stage.unwrap_or("?")
        )
    }
}

fn checkpoint(
    c: &mut Collector,
    item: &Node,
    text: &str,
    unlisted: &Unlisted<'_>,
) -> Option<Checkpoint> {
    let Value::Map(entries) = &item.value else {
        // `- tests_passing` names its checkpoint in the wrong shape.
        let message = match &item.value {
            Value::Str(name) if !name.trim().is_empty() => format!(
                "a checkpoint must be a mapping `{{name, status}}`, not a string: write `- name: {}` with its `status: pass | fail | skip` on the next line",
                super::excerpt::short(name.trim())
            ),
            _ => format!(
                "a checkpoint must be a mapping `{{name, status}}`, not {}{}",
                item.kind(),
                unlisted.hint()
            ),
        };
        c.error(item.pos, "checkpoints", message);
        return None;
    };
    unknown_fields(c, entries, &CHECKPOINT_FIELDS, Some("checkpoints"));
    let name = match item.get("name") {
        Some(Node {
            value: Value::Str(s),
            ..
        }) if !s.trim().is_empty() => s.clone(),
        Some(node) => {
            // `name: 42` or `name: true` reads as a number or a boolean.
            let message = match &node.value {
                Value::Str(_) | Value::Null => {
                    "a checkpoint's `name` is empty: write the checkpoint's name (`name: tests_passing`)"
                        .to_string()
                }
                Value::Seq(_) | Value::Map(_) => format!(
                    "a checkpoint's `name` must be text, not {}: write the name on one line (`name: tests_passing`)",
                    node.kind()
                ),
                _ => format!(
                    "a checkpoint's `name` must be text, not {}: put it in quotes (`name: \"{}\"`)",
                    node.kind(),
                    written(text, node.pos)
                ),
            };
            c.error(node.pos, "checkpoints", message + &unlisted.hint());
            return None;
        }
        None => {
            c.error(
                item.pos,
                "checkpoints",
                format!("a checkpoint needs a `name`{}", unlisted.hint()),
            );
            return None;
        }
    };
    // Named, and quoted, cut as a value is: a pasted log as a name would
    // flood the report and an agent's context.
    let cut = super::excerpt::short(&name);
    let field = format!("checkpoints.{cut}");
    let (status, status_pos) = match item.get("status") {
        Some(Node {
            value: Value::Str(s),
            pos,
        }) if CHECKPOINT_STATUSES.contains(&s.as_str()) => (s.clone(), *pos),
        Some(node) => {
            let shown = match &node.value {
                Value::Str(s) => {
                    let s = super::excerpt::short(s);
                    match suggest(&s, CHECKPOINT_STATUSES.iter().copied()) {
                        Some(near) => format!("\"{s}\"; did you mean \"{near}\"?"),
                        None => format!("\"{s}\""),
                    }
                }
                // `status: yes` or `status: true` reads as a boolean.
                Value::Bool(_) => format!("{}: write pass or fail", node.kind()),
                _ => node.kind().to_string(),
            };
            c.error(
                node.pos,
                &field,
                format!(
                    "checkpoint `{cut}`: `status` must be one of {}, not {shown}",
                    quoted(&CHECKPOINT_STATUSES)
                ),
            );
            return None;
        }
        None => {
            c.error(
                item.pos,
                &field,
                format!(
                    "checkpoint `{cut}` needs a `status` ({})",
                    quoted(&CHECKPOINT_STATUSES)
                ),
            );
            return None;
        }
    };
    let message = match item.get("message") {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => None,
        Some(Node {
            value: Value::Str(s),
            ..
        }) => Some(s.clone()),
        Some(node) => {
            c.error(
                node.pos,
                &field,
                format!(
                    "checkpoint `{cut}`: `message` must be text, not {}",
                    node.kind()
                ),
            );
            None
        }
    };
    Some(Checkpoint {
        name,
        status,
        message,
        line: item.pos.line,
        status_pos,
    })
}

fn finish(mut report: HandoffReport, mut c: Collector) -> HandoffReport {
    c.errors.sort_by_key(|e| (e.line, e.column));
    c.warnings.sort_by_key(|e| (e.line, e.column));
    report.valid = c.errors.is_empty();
    report.errors = c.errors;
    report.warnings = c.warnings;
    report
}
