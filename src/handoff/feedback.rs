//! The retry feedback an agent reads before it tries again: one "Validation
//! Failed" section per failed checkpoint or defect, with what to fix, and the
//! attempt it is on. Data here; `report` renders it.

use serde::Serialize;

use super::validate::HandoffReport;

/// One thing to fix.
#[derive(Debug, Clone, Serialize)]
pub struct FeedbackItem {
    /// `checkpoint` or `defect`.
    pub kind: &'static str,
    /// The checkpoint or field.
    pub name: String,
    /// A checkpoint's status; `invalid` for a defect.
    pub status: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    pub fix: String,
    pub line: usize,
}

/// Everything an agent needs before its next attempt.
#[derive(Debug, Clone, Serialize)]
pub struct Feedback {
    pub path: String,
    pub id: Option<String>,
    pub stage: Option<String>,
    pub valid: bool,
    pub escalate: bool,
    /// The attempt the next try will be (`retry_count` + 1).
    pub attempt: i64,
    pub max_retries: u32,
    /// What a blocked document waits for (reason, details): a person, not
    /// another attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<Blocked>,
    pub items: Vec<FeedbackItem>,
}

/// A document that says it is blocked.
#[derive(Debug, Clone, Serialize)]
pub struct Blocked {
    pub reason: String,
    pub details: String,
}

/// What to do about a checkpoint that does not pass.
fn fix_for(checkpoint: &str) -> String {
    match checkpoint {
        "tests_passing" => "run the tests (`phasegate run --check tests`), fix every failure, then set `tests_passing` to pass".to_string(),
        "no_lint_errors" => "run the linter (`phasegate run --check lint`), fix every finding, then set `no_lint_errors` to pass".to_string(),
        "tests_written" => "write tests for the change, then set `tests_written` to pass".to_string(),
        name => format!("finish `{name}` and set its status to pass; a skip does not count"),
    }
}

/// Builds the feedback for a validated document.
pub fn feedback(report: &HandoffReport) -> Feedback {
    let mut items = Vec::new();
    for name in &report.required {
        let stated = report.checkpoints.iter().find(|c| &c.name == name);
        match stated {
            Some(c) if c.status == "pass" => {}
            Some(c) => items.push(FeedbackItem {
                kind: "checkpoint",
                name: name.clone(),
                status: c.status.clone(),
                reason: c
                    .message
                    .clone()
                    .unwrap_or_else(|| format!("`{name}` is {}", c.status)),
                details: report.last_failure.clone().filter(|_| c.status == "fail"),
                fix: fix_for(name),
                line: c.line,
            }),
            None => {}
        }
    }
    for issue in &report.errors {
        items.push(FeedbackItem {
            kind: "defect",
            name: issue.field.clone(),
            status: "invalid".to_string(),
            reason: issue.message.clone(),
            details: None,
            fix: format!(
                "edit line {} of `{}`: {}",
                issue.line, report.path, issue.message
            ),
            line: issue.line,
        });
    }
    // A document that says it is blocked waits for a person, as a run
    // says (`blocked`, next: escalate).
    let blocked = (report.status.as_deref() == Some("blocked")).then(|| {
        let (reason, details) = report.block.clone().unwrap_or_default();
        Blocked { reason, details }
    });
    Feedback {
        path: report.path.clone(),
        id: report.id.clone(),
        stage: report.stage.clone(),
        valid: report.valid,
        escalate: report.escalate || blocked.is_some(),
        blocked,
        attempt: report.retry_count.unwrap_or(0) + 1,
        max_retries: report.max_retries,
        items,
    }
}
