//! The verifier protocol: exactly one JSON object on standard output,
//! `{"verdict": "pass" | "fail", "findings": [{"file", "line", "severity",
//! "message"}...]}`. Anything else is malformed (a tier 3 event).

use serde_json::Value;

use crate::config::Origin;
use crate::diagnostics::{Diagnostic, Severity};

use super::{VerifierAnswer, VerifierReply};

/// The largest answer read; a longer one is malformed.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Reads a verifier's standard output.
pub fn parse_verifier_answer(stdout: &[u8], check: &str, origin: Origin) -> VerifierReply {
    match parse(stdout, check, origin) {
        Ok(answer) => VerifierReply::Answer(answer),
        Err(reason) => VerifierReply::Malformed(reason),
    }
}

fn parse(stdout: &[u8], check: &str, origin: Origin) -> Result<VerifierAnswer, String> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Err("it printed nothing on standard output".to_string());
    }
    let value: Value = serde_json::from_slice(stdout)
        .map_err(|e| format!("standard output is not exactly one JSON object ({e})"))?;
    let Value::Object(object) = value else {
        return Err("the answer is JSON but not an object".to_string());
    };
    let pass = match object.get("verdict") {
        Some(Value::String(v)) if v == "pass" => true,
        Some(Value::String(v)) if v == "fail" => false,
        Some(other) => {
            return Err(format!(
                "`verdict` must be \"pass\" or \"fail\", not {other}"
            ))
        }
        None => return Err("the answer has no `verdict`".to_string()),
    };
    let findings = match object.get("findings") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| finding(item, check, origin).map_err(|e| format!("finding {i}: {e}")))
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("`findings` must be a list, not {other}")),
    };
    Ok(VerifierAnswer { pass, findings })
}

fn finding(item: &Value, check: &str, origin: Origin) -> Result<Diagnostic, String> {
    let Value::Object(f) = item else {
        return Err("not an object".to_string());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match f.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        }
    };
    let number = |key: &str| -> Result<Option<u32>, String> {
        match f.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .map(Some)
                .ok_or_else(|| {
                    format!("`{key}` must be a positive line or column number, not {n}")
                }),
            Some(other) => Err(format!("`{key}` must be a number, not {other}")),
        }
    };
    let message = text("message")?.ok_or("it has no `message`")?;
    Ok(Diagnostic {
        check: check.to_string(),
        origin,
        tool: "verifier".to_string(),
        file: text("file")?,
        line: number("line")?,
        column: number("column")?,
        severity: text("severity")?.map_or(Severity::Error, |s| Severity::from_word(&s)),
        code: text("code")?,
        message,
        ..Diagnostic::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> VerifierReply {
        parse_verifier_answer(text.as_bytes(), "review", Origin::Runtime)
    }

    fn malformed(text: &str) -> String {
        match parse(text) {
            VerifierReply::Malformed(reason) => reason,
            VerifierReply::Answer(a) => panic!("{text} parsed as {a:?}"),
        }
    }

    #[test]
    fn valid_answers() {
        assert_eq!(
            parse(" {\"verdict\": \"pass\"}\n"),
            VerifierReply::Answer(VerifierAnswer {
                pass: true,
                findings: vec![]
            })
        );
        let VerifierReply::Answer(answer) = parse(
            r#"{"verdict": "fail", "findings": [{"file": "a.md", "line": 3, "severity": "warning", "message": "vague"}, {"file": null, "message": "no tests"}]}"#,
        ) else {
            panic!("valid answer rejected");
        };
        assert!(!answer.pass);
        assert_eq!(answer.findings[0].file.as_deref(), Some("a.md"));
        assert_eq!(answer.findings[0].severity, Severity::Warning);
        assert_eq!(answer.findings[1].severity, Severity::Error);
        assert_eq!(answer.findings[1].tool, "verifier");
    }

    #[test]
    fn malformed_answers_say_what_is_wrong() {
        assert!(malformed("").contains("nothing"));
        assert!(malformed("LGTM").contains("not exactly one JSON object"));
        assert!(malformed(r#"{"verdict": "pass"} {"verdict": "pass"}"#).contains("not exactly one"));
        assert!(malformed("[1]").contains("not an object"));
        assert!(malformed("{}").contains("no `verdict`"));
        assert!(malformed(r#"{"verdict": "maybe"}"#).contains("\"maybe\""));
        assert!(malformed(r#"{"verdict": "fail", "findings": {}}"#).contains("must be a list"));
        assert!(
            malformed(r#"{"verdict": "fail", "findings": [{"line": 1}]}"#).contains("no `message`")
        );
        assert!(
            malformed(r#"{"verdict": "fail", "findings": [{"message": "m", "line": -2}]}"#)
                .contains("positive")
        );
        assert!(
            malformed(r#"{"verdict": "fail", "findings": [{"message": "m", "file": 7}]}"#)
                .contains("`file` must be a string")
        );
    }
}
