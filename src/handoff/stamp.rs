//! Writing a run's results back into a handoff document's frontmatter: the
//! checkpoints the run verified, `handoff_ready`, and after a failed run
//! `retry_count` (one more failed attempt, never beyond `max_retries`),
//! `last_failure`, and `status: failed` once the budget is spent. Only
//! those values change; every other byte of the file stays as it was.
//!
//! The retry budget is what makes the loop end: `retry_count` counts the
//! failed attempts, so the stamp after the `max_retries`-th failed run
//! writes `status: failed` with `retry_count: max_retries`, a document the
//! validator accepts and that escalates (DESIGN: "a failed or blocked
//! document whose `retry_count` has reached `max_retries` is still valid
//! but escalates"). The next run that validates it ends `blocked` (exit 4).

use std::collections::BTreeMap;

use super::extract::{body_start, extract, Frontmatter};
use super::validate::{default_checkpoints, Rules, FIELDS, STAGES};
use super::yaml::{parse, Node, Pos, Value};

/// What a run says about a document.
#[derive(Debug, Clone, Default)]
pub struct RunResults {
    /// Check name → whether it passed, for the checks that ran.
    pub checks: BTreeMap<String, bool>,
    /// The run failed (a blocking check, an invalid document) or ended
    /// `blocked`: one more failed attempt. An `incomplete` run is not: it
    /// neither passed nor failed, so the budget is left alone.
    pub failed: bool,
    /// One line on why, for `last_failure`.
    pub failure: Option<String>,
    /// The `retry_count` the run read in this document, when the run
    /// validated it. A failed run counts one more than that, not one more
    /// than the file says now, so stamping the same run twice counts its
    /// failure once.
    pub retries_seen: Option<i64>,
}

/// One replacement of bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// A YAML double-quoted string.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn replace(pos: Pos, text: String) -> Edit {
    Edit {
        start: pos.offset,
        end: pos.offset + pos.len,
        text,
    }
}

/// The edit that sets `key` of the mapping `parent` (which has it) to
/// `new`. A value written as nothing (`key:` or `key: # comment`) gets the
/// new value right after the colon; anything else is replaced in place.
fn set_value(text: &str, parent: &Node, key: &str, new: String) -> Option<Edit> {
    let node = parent.get(key)?;
    let written = text
        .get(node.pos.offset..node.pos.offset + node.pos.len)
        .unwrap_or("");
    let spelled_null = matches!(written, "~" | "null" | "Null" | "NULL");
    if matches!(node.value, Value::Null) && !spelled_null {
        let key = parent.key(key)?;
        let after_key = key.pos.offset + key.pos.len;
        let colon = after_key + text.get(after_key..)?.find(':')? + 1;
        return Some(Edit {
            start: colon,
            end: colon,
            text: format!(" {new}"),
        });
    }
    Some(replace(node.pos, new))
}

/// The edits that stamp `results` into `text`, or why it cannot be stamped
/// (no frontmatter, invalid YAML). `rules` gives the claims, the required
/// checkpoints of each stage and `max_retries`.
pub fn stamp_edits(text: &str, results: &RunResults, rules: &Rules) -> Result<Vec<Edit>, String> {
    let fm = extract(text).map_err(|e| e.message().to_string())?;
    // A frontmatter that runs into the document's text was closed by a
    // `---` rule of the body: its missing fields would go in after the
    // body's text, and the document would stay open.
    if let Some(body) = body_start(fm.yaml, &FIELDS) {
        let line = fm.first_line + fm.yaml[..body].matches('\n').count();
        return Err(format!(
            "the frontmatter is not closed before the document's text on line {line}: add a `---` line above that text, then stamp again"
        ));
    }
    let (root, duplicates) =
        parse(&fm).map_err(|e| format!("line {}: {}", e.pos.line, e.message))?;
    if let Some(d) = duplicates.first() {
        return Err(format!("line {}: {}", d.pos.line, d.message));
    }
    let Some(root) = root.filter(|r| matches!(r.value, Value::Map(_))) else {
        return Err("the frontmatter is not a mapping of fields".to_string());
    };
    let mut edits = Vec::new();
    let mut added = NewFields::like(text, &fm, &root);

    let statuses = stamp_checkpoints(text, &root, results, &rules.claims, &mut edits);
    // handoff_ready follows the required checkpoints.
    let ready = all_required_pass(&root, &statuses, rules);
    match root.get("handoff_ready") {
        Some(Node {
            value: Value::Bool(b),
            ..
        }) if *b == ready => {}
        Some(_) => edits.extend(set_value(text, &root, "handoff_ready", ready.to_string())),
        None => added.push("handoff_ready", &ready.to_string()),
    }
    if results.failed {
        stamp_failure(
            text,
            &root,
            results,
            rules.max_retries,
            &mut edits,
            &mut added,
        )?;
    }
    if let Some(edit) = added.into_edit(text, &fm, &root)? {
        edits.push(edit);
    }
    edits.sort_by_key(|e| e.start);
    // A safety net for layouts the edits cannot follow (complex keys, odd
    // indentation): never write a document that no longer parses.
    let stamped = apply(text, &edits);
    let reparsed = extract(&stamped)
        .ok()
        .and_then(|fm| parse(&fm).ok())
        .is_some_and(|(root, duplicates)| {
            duplicates.is_empty() && root.is_some_and(|r| matches!(r.value, Value::Map(_)))
        });
    if !reparsed {
        return Err(
            "the frontmatter's layout cannot be stamped safely: write one `field: value` per line"
                .to_string(),
        );
    }
    Ok(edits)
}

/// Fields the document lacks, written as new lines just before the
/// frontmatter's closing delimiter: indented like its existing fields,
/// with its own line endings.
struct NewFields {
    indent: String,
    newline: &'static str,
    lines: String,
}

impl NewFields {
    fn like(text: &str, fm: &Frontmatter<'_>, root: &Node) -> NewFields {
        let crlf =
            fm.yaml.contains("\r\n") || text[fm.offset + fm.yaml.len()..].starts_with("---\r\n");
        let indent = match &root.value {
            Value::Map(entries) => entries.first().map_or_else(String::new, |(key, _)| {
                " ".repeat(key.pos.column.saturating_sub(1))
            }),
            _ => String::new(),
        };
        NewFields {
            indent,
            newline: if crlf { "\r\n" } else { "\n" },
            lines: String::new(),
        }
    }

    fn push(&mut self, key: &str, value: &str) {
        let NewFields {
            indent, newline, ..
        } = self;
        self.lines
            .push_str(&format!("{indent}{key}: {value}{newline}"));
    }

    /// The edit that inserts the new fields, if there are any.
    fn into_edit(
        self,
        text: &str,
        fm: &Frontmatter<'_>,
        root: &Node,
    ) -> Result<Option<Edit>, String> {
        if self.lines.is_empty() {
            return Ok(None);
        }
        if text[root.pos.offset..].starts_with('{') {
            return Err(
                "the frontmatter is one `{...}` mapping: write one field per line to stamp it"
                    .to_string(),
            );
        }
        let at = fm.offset + fm.yaml.len();
        let needs_newline = !fm.yaml.is_empty() && !fm.yaml.ends_with('\n');
        let text = if needs_newline {
            format!("{}{}", self.newline, self.lines)
        } else {
            self.lines
        };
        Ok(Some(Edit {
            start: at,
            end: at,
            text,
        }))
    }
}

/// Sets each checkpoint whose claim a check of the run verified to what
/// that check found. Returns every checkpoint's status as it will read.
fn stamp_checkpoints(
    text: &str,
    root: &Node,
    results: &RunResults,
    claims: &BTreeMap<String, String>,
    edits: &mut Vec<Edit>,
) -> BTreeMap<String, String> {
    let mut statuses = BTreeMap::new();
    let Some(Node {
        value: Value::Seq(items),
        ..
    }) = root.get("checkpoints")
    else {
        return statuses;
    };
    for item in items {
        let Some(Node {
            value: Value::Str(name),
            ..
        }) = item.get("name")
        else {
            continue;
        };
        let mut status = match item.get("status") {
            Some(Node {
                value: Value::Str(s),
                ..
            }) => s.clone(),
            _ => String::new(),
        };
        if let Some(passed) = claims.get(name).and_then(|check| results.checks.get(check)) {
            let verified = if *passed { "pass" } else { "fail" };
            if status != verified {
                edits.extend(set_value(text, item, "status", verified.to_string()));
            }
            status = verified.to_string();
        }
        statuses.insert(name.clone(), status);
    }
    statuses
}

/// Whether every checkpoint the document's stage requires (the
/// configured list, or the stage's default) passes, as validation holds
/// `handoff_ready` to: a stage configured to require none is ready,
/// vacuously, and a document without a stage it knows never is.
fn all_required_pass(root: &Node, statuses: &BTreeMap<String, String>, rules: &Rules) -> bool {
    let Some(stage) = text_of(root, "stage").filter(|s| STAGES.contains(s)) else {
        return false;
    };
    let required: Vec<String> = rules.checkpoints.get(stage).cloned().unwrap_or_else(|| {
        default_checkpoints(stage)
            .iter()
            .map(|s| (*s).to_string())
            .collect()
    });
    required
        .iter()
        .all(|r| statuses.get(r).is_some_and(|s| s == "pass"))
}

/// The text value of `key`, if it is text.
fn text_of<'a>(root: &'a Node, key: &str) -> Option<&'a str> {
    match root.get(key) {
        Some(Node {
            value: Value::Str(s),
            ..
        }) => Some(s.as_str()),
        _ => None,
    }
}

/// The document's `retry_count` as written: 0 when absent or empty, an
/// error when it is no whole number.
fn written_retries(root: &Node) -> Result<i64, String> {
    match root.get("retry_count") {
        Some(Node {
            value: Value::Int(n),
            ..
        }) => Ok(*n),
        None
        | Some(Node {
            value: Value::Null, ..
        }) => Ok(0),
        Some(_) => Err("`retry_count` is not a number; fix it before stamping".to_string()),
    }
}

/// A failed run is one more failed attempt: `retry_count` counts it,
/// capped at `max_retries` (the validator's range), and `last_failure`
/// says why. The stamp whose count reaches `max_retries` spends the budget
/// and also writes `status: failed`, which makes the document escalate:
/// the next run that validates it ends `blocked`. Until then the status is
/// left as it is (`in_progress`: the agent is still at it). A document
/// that says `blocked` keeps its status and count: it waits for a person,
/// not for another attempt, and `failed` would hide why.
fn stamp_failure(
    text: &str,
    root: &Node,
    results: &RunResults,
    max_retries: u32,
    edits: &mut Vec<Edit>,
    added: &mut NewFields,
) -> Result<(), String> {
    let written = written_retries(root)?;
    if text_of(root, "status") != Some("blocked") {
        let before = results.retries_seen.unwrap_or(written);
        // A count out of range (negative, or beyond a `max_retries` since
        // lowered) is brought back into it rather than carried on.
        let limit = i64::from(max_retries);
        let count = before.saturating_add(1).clamp(0, limit);
        if written != count || root.get("retry_count").is_none() {
            match root.get("retry_count") {
                Some(_) => edits.extend(set_value(text, root, "retry_count", count.to_string())),
                None => added.push("retry_count", &count.to_string()),
            }
        }
        let spent = count >= limit;
        if spent && text_of(root, "status") != Some("failed") {
            match root.get("status") {
                Some(_) => edits.extend(set_value(text, root, "status", "failed".to_string())),
                None => added.push("status", "failed"),
            }
        }
    }
    let failure = results.failure.as_deref().unwrap_or("the gate failed");
    // A document that already says it (the same run stamped again) is
    // left alone, so that a second stamp changes nothing.
    if text_of(root, "last_failure") != Some(failure) {
        if root.key("last_failure").is_some() {
            edits.extend(set_value(text, root, "last_failure", quote(failure)));
        } else {
            added.push("last_failure", &quote(failure));
        }
    }
    Ok(())
}

/// Applies edits (sorted, not overlapping) to `text`.
pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for edit in edits {
        out.push_str(&text[at..edit.start]);
        out.push_str(&edit.text);
        at = edit.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::validate::{validate, Rules};

    fn claims() -> BTreeMap<String, String> {
        [("tests_passing", "tests"), ("no_lint_errors", "lint")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn rules() -> Rules {
        Rules {
            max_retries: 3,
            claims: claims(),
            ..Rules::default()
        }
    }

    fn results(tests: bool, lint: bool) -> RunResults {
        RunResults {
            checks: [("tests".to_string(), tests), ("lint".to_string(), lint)]
                .into_iter()
                .collect(),
            failed: !(tests && lint),
            failure: (!(tests && lint)).then(|| "tests: 2 failed \"quoted\"".to_string()),
            retries_seen: None,
        }
    }

    #[test]
    fn a_frontmatter_that_runs_into_the_text_is_not_stamped() {
        // No `handoff_ready`, and the closing line forgotten above the
        // body, whose own `---` rule closed what YAML read.
        let doc = DOC.replace("handoff_ready: false\n", "").replacen(
            "---\nBody",
            "\n## Notes\n\nStatus: done\n\n---\nBody",
            1,
        );
        let error = stamp_edits(&doc, &results(false, true), &rules()).unwrap_err();
        assert!(
            error.contains("not closed before the document's text on line 19"),
            "{error}"
        );
    }

    const DOC: &str = "---\nid: F1   # the id\nstage: implementation\ntitle: 'Stamp me'\nstarted_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: false\nretry_count: 0\nlast_failure:\ncheckpoints:\n  - name: tests_written\n    status: pass   # by hand\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: skip\n  - name: no_lint_errors\n    status: fail\n---\nBody\n---\n";

    #[test]
    fn a_passing_run_marks_the_claims_and_readiness() {
        let edits = stamp_edits(DOC, &results(true, true), &rules()).unwrap();
        let out = apply(DOC, &edits);
        assert_eq!(
            out,
            DOC.replace("status: skip", "status: pass")
                .replace("    status: fail", "    status: pass")
                .replace("handoff_ready: false", "handoff_ready: true")
        );
        let report = validate(
            "x.md",
            &out,
            &Rules {
                max_retries: 3,
                claims: claims(),
                ..Rules::default()
            },
        );
        assert!(report.valid, "{:?}", report.errors);
    }

    #[test]
    fn a_failing_run_counts_the_retry_and_says_why() {
        let out = apply(
            DOC,
            &stamp_edits(DOC, &results(false, true), &rules()).unwrap(),
        );
        assert!(out.contains("retry_count: 1\n"), "{out}");
        assert!(
            out.contains("last_failure: \"tests: 2 failed \\\"quoted\\\"\"\n"),
            "{out}"
        );
        assert!(
            out.contains("  - name: tests_passing\n    status: fail\n"),
            "{out}"
        );
        assert!(out.contains("id: F1   # the id\n"));
        assert!(out.ends_with("---\nBody\n---\n"));
    }

    #[test]
    fn missing_fields_are_added_before_the_closing_line_with_the_files_line_ends() {
        let doc = "---\r\nid: F2\r\nstage: qa\r\ncheckpoints: []\r\n---\r\nbody\r\n";
        let out = apply(
            doc,
            &stamp_edits(doc, &results(false, false), &rules()).unwrap(),
        );
        assert_eq!(
            out,
            "---\r\nid: F2\r\nstage: qa\r\ncheckpoints: []\r\nhandoff_ready: false\r\nretry_count: 1\r\nlast_failure: \"tests: 2 failed \\\"quoted\\\"\"\r\n---\r\nbody\r\n"
        );
    }

    #[test]
    fn values_written_as_nothing_or_as_a_comment_get_filled_in() {
        let doc = "---\nid: F3\nstage: implementation\nhandoff_ready: # later\nretry_count: ~\nlast_failure:\ncheckpoints:\n  - name: tests_passing\n    status: # unsure\n---\n";
        let out = apply(
            doc,
            &stamp_edits(doc, &results(false, true), &rules()).unwrap(),
        );
        assert_eq!(
            out,
            "---\nid: F3\nstage: implementation\nhandoff_ready: false # later\nretry_count: 1\nlast_failure: \"tests: 2 failed \\\"quoted\\\"\"\ncheckpoints:\n  - name: tests_passing\n    status: fail # unsure\n---\n"
        );
    }

    fn in_progress(retry_count: &str) -> String {
        DOC.replace("retry_count: 0", &format!("retry_count: {retry_count}"))
            .replace("last_failure:\n", "")
    }

    fn rules_with(max_retries: u32) -> Rules {
        Rules {
            max_retries,
            ..rules()
        }
    }

    /// The loop an agent runs (fail, stamp, retry) ends: every stamped
    /// document is valid, the count never passes `max_retries`, and the
    /// stamp that spends the budget makes the document escalate.
    #[test]
    fn failed_runs_spend_the_budget_and_then_the_document_escalates() {
        for max_retries in [0, 1, 2, 3] {
            let rules = rules_with(max_retries);
            let mut doc = in_progress("0");
            for attempt in 1..=5_i64 {
                doc = apply(
                    &doc,
                    &stamp_edits(&doc, &results(false, true), &rules).unwrap(),
                );
                let report = validate("x.md", &doc, &rules);
                assert!(
                    report.valid,
                    "{max_retries}/{attempt}: {:?}\n{doc}",
                    report.errors
                );
                let count = attempt.min(i64::from(max_retries));
                assert_eq!(report.retry_count, Some(count), "{doc}");
                let spent = count == i64::from(max_retries);
                assert_eq!(report.escalate, spent, "{max_retries}/{attempt}:\n{doc}");
                let status = if spent { "failed" } else { "in_progress" };
                assert_eq!(report.status.as_deref(), Some(status), "{doc}");
            }
        }
    }

    #[test]
    fn the_same_run_stamped_twice_counts_once() {
        let rules = rules_with(3);
        let mut run = results(false, true);
        run.retries_seen = Some(1);
        let doc = in_progress("1");
        let once = apply(&doc, &stamp_edits(&doc, &run, &rules).unwrap());
        assert!(once.contains("retry_count: 2\n"), "{once}");
        assert_eq!(stamp_edits(&once, &run, &rules).unwrap(), []);
    }

    #[test]
    fn a_count_out_of_range_is_brought_back_and_blocked_documents_keep_theirs() {
        let rules = rules_with(2);
        // Written by an older phasegate, which counted on without a limit.
        let doc = in_progress("4");
        let out = apply(
            &doc,
            &stamp_edits(&doc, &results(false, true), &rules).unwrap(),
        );
        assert!(
            out.contains("retry_count: 2\n") && out.contains("status: failed\n"),
            "{out}"
        );
        assert!(validate("x.md", &out, &rules).escalate);

        // A blocked document waits for a person: the stamp records the
        // run but neither counts an attempt nor calls it failed.
        let doc = in_progress("0").replace(
            "status: in_progress",
            "status: blocked\nblock_reason: needs_human_input\nblock_details: which API?",
        );
        let out = apply(
            &doc,
            &stamp_edits(&doc, &results(false, true), &rules_with(1)).unwrap(),
        );
        assert!(
            out.contains("status: blocked\n") && out.contains("retry_count: 0\n"),
            "{out}"
        );
        assert!(out.contains("last_failure: "), "{out}");
    }

    #[test]
    fn a_document_without_a_status_gets_one_when_its_budget_is_spent() {
        let doc = "---\nid: F4\nstage: qa\ncheckpoints: []\n---\n";
        let out = apply(
            doc,
            &stamp_edits(doc, &results(false, true), &rules_with(1)).unwrap(),
        );
        assert_eq!(
            out,
            "---\nid: F4\nstage: qa\ncheckpoints: []\nhandoff_ready: false\nretry_count: 1\nstatus: failed\nlast_failure: \"tests: 2 failed \\\"quoted\\\"\"\n---\n"
        );
    }

    /// Property: whatever the layout (comments, quoting, indentation, line
    /// ends, field order), stamping changes only the stamped values: every
    /// other line of the document is byte for byte the same.
    #[test]
    fn stamping_leaves_every_other_byte_alone() {
        let layouts = [
            ("\n", "  ", ""),
            ("\r\n", "    ", "  # note"),
            ("\n", " ", " # ✓ unicode comment"),
        ];
        let stamped_keys = ["handoff_ready:", "retry_count:", "last_failure:", "status:"];
        for (nl, indent, comment) in layouts {
            for order in 0..3 {
                let mut fields = vec![
                    format!("id: 'F{order}'{comment}"),
                    "stage: implementation".to_string(),
                    format!("title: \"Layout {order}\"{comment}"),
                    "started_at: 2026-11-20T09:00:00+01:00".to_string(),
                    "status: in_progress".to_string(),
                    format!("handoff_ready: false{comment}"),
                    format!("retry_count: {order}"),
                    "extra_field: kept".to_string(),
                ];
                fields.rotate_left(order);
                let mut doc = format!("---{nl}");
                for f in &fields {
                    doc.push_str(f);
                    doc.push_str(nl);
                }
                doc.push_str(&format!("checkpoints:{nl}"));
                for (name, status) in [
                    ("tests_written", "pass"),
                    ("code_complete", "pass"),
                    ("tests_passing", "fail"),
                    ("no_lint_errors", "skip"),
                ] {
                    doc.push_str(&format!(
                        "{indent}- name: {name}{comment}{nl}{indent}  status: {status}{nl}"
                    ));
                }
                doc.push_str(&format!("---{nl}# Body{nl}---{nl}text{nl}"));
                for (tests, lint) in [(true, true), (false, true), (true, false)] {
                    let out = apply(
                        &doc,
                        &stamp_edits(&doc, &results(tests, lint), &rules()).unwrap(),
                    );
                    let before: Vec<&str> = doc.split(nl).collect();
                    let after: Vec<&str> = out.split(nl).collect();
                    let mut a = 0;
                    for line in &before {
                        // Lines stamping added (fields the document lacked)
                        // come before the closing line.
                        while *line == "---"
                            && a < after.len()
                            && stamped_keys.iter().any(|k| after[a].starts_with(k))
                        {
                            a += 1;
                        }
                        let stamped = stamped_keys
                            .iter()
                            .any(|k| line.trim_start().trim_start_matches("- ").starts_with(k));
                        if stamped {
                            // The line's key and everything before the value stay.
                            let key_end = line.find(':').unwrap() + 1;
                            assert_eq!(&after[a][..key_end], &line[..key_end], "{doc}\n=>\n{out}");
                        } else {
                            assert_eq!(
                                after[a], *line,
                                "only stamped values may change:\n{doc}\n=>\n{out}"
                            );
                        }
                        a += 1;
                    }
                    // Anything added comes before the closing line only.
                    assert!(after.len() >= before.len());
                }
            }
        }
    }

    #[test]
    fn a_stage_that_requires_no_checkpoint_is_stamped_ready() {
        // As validation reads `handoff_ready`: every required checkpoint
        // passes when none is required.
        let doc = "---\nid: F5\nstage: qa\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: false\ncheckpoints: []\n---\n";
        let mut rules = rules();
        rules.checkpoints.insert("qa".to_string(), Vec::new());
        let out = apply(
            doc,
            &stamp_edits(doc, &results(true, true), &rules).unwrap(),
        );
        assert!(out.contains("handoff_ready: true\n"), "{out}");
        assert!(validate("x.md", &out, &rules).valid, "{out}");
        // A stage nobody knows requires nothing either, and is never ready.
        let unknown = doc.replace("stage: qa", "stage: qq");
        let out = apply(
            &unknown,
            &stamp_edits(&unknown, &results(true, true), &rules).unwrap(),
        );
        assert!(out.contains("handoff_ready: false\n"), "{out}");
    }
}
