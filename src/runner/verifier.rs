//! The verifier protocol: exactly one JSON object on standard output,
//! `{"verdict": "pass" | "fail", "findings": [{"file", "line", "severity",
//! "message"}...]}`. Anything else is malformed (a tier 3 event), and so
//! is an object that names a key twice: `{"verdict": "fail", "verdict":
//! "pass"}` says two things, and reading either one would be a guess.

use std::fmt;
use std::path::Path;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::config::Origin;
use crate::diagnostics::{relative_to_root, strip_ansi, Diagnostic, Severity};

use super::{VerifierAnswer, VerifierReply};

/// The largest answer read; a longer one is malformed.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Where a verifier ran: its findings' files are placed relative to the
/// repository root, as parsed tool output is.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub cwd: &'a Path,
    pub root: &'a Path,
}

/// Reads a verifier's standard output.
pub fn parse_verifier_answer(
    stdout: &[u8],
    check: &str,
    origin: Origin,
    place: Place<'_>,
) -> VerifierReply {
    match parse(stdout, check, origin, place) {
        Ok(answer) => VerifierReply::Answer(answer),
        Err(reason) => VerifierReply::Malformed(reason),
    }
}

fn parse(
    stdout: &[u8],
    check: &str,
    origin: Origin,
    place: Place<'_>,
) -> Result<VerifierAnswer, String> {
    if stdout.iter().all(u8::is_ascii_whitespace) {
        return Err("it printed nothing on standard output, where its answer goes (an answer printed on standard error is not read)".to_string());
    }
    let Unambiguous(value) = serde_json::from_slice(stdout).map_err(|e| {
        if e.is_data() {
            format!("the answer is ambiguous ({e})")
        } else {
            not_one_object(stdout, &e)
        }
    })?;
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
    let mut findings = Vec::new();
    let mut unread = Vec::new();
    match object.get("findings") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match finding(item, check, origin, place) {
                    Ok(found) => findings.push(found),
                    Err(e) => unread.push(format!("finding {i}: {e}")),
                }
            }
        }
        Some(other) => unread.push(format!("`findings` must be a list, not {other}")),
    }
    if unread.is_empty() {
        return Ok(VerifierAnswer {
            pass,
            findings,
            unread: None,
        });
    }
    if pass {
        // A pass whose findings cannot be read is no answer to trust: one
        // of them may be what should have failed it.
        return Err(unread.swap_remove(0));
    }
    // A plain "fail" is an answer, whatever its findings: the work failed
    // the review. Read as no answer (tier 3), the `fast` profile would let
    // through what the verifier rejected. Each finding that cannot be
    // read becomes one of phasegate's, saying what is wrong with it.
    findings.extend(unread.into_iter().map(|why| {
        unreadable(
            check,
            origin,
            format!("verifier `{check}` answered \"fail\", but a finding cannot be read: {why}"),
        )
    }));
    Ok(VerifierAnswer {
        pass,
        findings,
        unread: None,
    })
}

/// Folds the reply of one more batch of files into `so_far`, the reply of
/// the batches before it (`None` before the first), keeping at most `cap`
/// findings; returns how many it left out.
///
/// Each batch is reviewed on its own, so the weightier answer decides, as
/// in one batch a `"fail"` outweighs a timeout that follows it: every
/// batch must pass for a pass; an answer that cannot be read (tier 3)
/// outweighs passes, since the files of its batch were not reviewed; and a
/// `"fail"` outweighs an answer that cannot be read, in whichever order
/// they come, and keeps it beside it (`unread`). Read as tier 3 alone, the
/// `fast` profile would let through what a batch plainly rejected.
pub fn merge(so_far: &mut Option<VerifierReply>, next: VerifierReply, cap: usize) -> usize {
    let current = so_far
        .take()
        .unwrap_or(VerifierReply::Answer(VerifierAnswer {
            pass: true,
            findings: Vec::new(),
            unread: None,
        }));
    let (merged, dropped) = match (current, next) {
        (VerifierReply::Answer(mut answer), VerifierReply::Answer(more)) => {
            answer.pass &= more.pass;
            answer.unread = answer.unread.or(more.unread);
            let dropped = add_findings(&mut answer.findings, more.findings, cap);
            (VerifierReply::Answer(answer), dropped)
        }
        (VerifierReply::Answer(mut answer), VerifierReply::Malformed(why)) if !answer.pass => {
            answer.unread.get_or_insert(why);
            (VerifierReply::Answer(answer), 0)
        }
        (VerifierReply::Malformed(why), VerifierReply::Answer(fail)) if !fail.pass => {
            let mut answer = VerifierAnswer {
                pass: false,
                findings: Vec::new(),
                unread: Some(why),
            };
            let dropped = add_findings(&mut answer.findings, fail.findings, cap);
            (VerifierReply::Answer(answer), dropped)
        }
        // The first answer that cannot be read is the one reported.
        (VerifierReply::Malformed(why), _) | (_, VerifierReply::Malformed(why)) => {
            (VerifierReply::Malformed(why), 0)
        }
    };
    *so_far = Some(merged);
    dropped
}

/// Adds `more` to `findings` up to `cap` of them; returns how many it left
/// out.
fn add_findings(findings: &mut Vec<Diagnostic>, more: Vec<Diagnostic>, cap: usize) -> usize {
    let room = cap.saturating_sub(findings.len());
    let dropped = more.len().saturating_sub(room);
    findings.extend(more.into_iter().take(room));
    dropped
}

/// phasegate's own error about the findings of a `"fail"` it could not
/// read, which stands all the same.
fn unreadable(check: &str, origin: Origin, message: String) -> Diagnostic {
    Diagnostic {
        check: check.to_string(),
        origin,
        tool: "phasegate".to_string(),
        severity: Severity::Error,
        code: Some(crate::diagnostics::OwnCode::VerifierFindingUnreadable.to_string()),
        message,
        ..Diagnostic::default()
    }
}

/// Reads an answer longer than `MAX_ANSWER_BYTES` from its first bytes
/// (`prefix`; the rest is in the check's log, not in memory). A `"fail"`
/// named before the cut is the reviewer's word whatever follows, as for a
/// fail whose findings cannot be read: read as no answer (tier 3), the
/// `fast` profile would let through what the verifier rejected at length.
/// Anything else is malformed. `batch` names the batch of files, if any.
pub fn over_limit(prefix: &[u8], batch: &str, check: &str, origin: Origin) -> VerifierReply {
    let too_long = format!("the answer{batch} is longer than {MAX_ANSWER_BYTES} bytes");
    let mut verdict = Head::default();
    // The cut makes it fail at the end; what was read before stays.
    let _ = de::DeserializeSeed::deserialize(
        HeadSeed(&mut verdict),
        &mut serde_json::Deserializer::from_slice(prefix),
    );
    match verdict {
        Head::Once(word) if word == "fail" => VerifierReply::Answer(VerifierAnswer {
            pass: false,
            findings: vec![unreadable(
                check,
                origin,
                format!(
                    "verifier `{check}` answered \"fail\", but {too_long}, so its findings were not read (the whole answer is in the check's log); a verifier keeps its answer under that size"
                ),
            )],
            unread: None,
        }),
        _ => VerifierReply::Malformed(too_long),
    }
}

/// The `verdict` read at the top of an answer cut short.
#[derive(Default)]
enum Head {
    #[default]
    Unread,
    Once(String),
    /// Named twice, or not as a string: no word to act on.
    Unusable,
}

struct HeadSeed<'a>(&'a mut Head);

impl<'de> de::DeserializeSeed<'de> for HeadSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key != "verdict" {
                map.next_value::<de::IgnoredAny>()?;
                continue;
            }
            let value: Value = map.next_value()?;
            *self.0 = match (&*self.0, value) {
                (Head::Unread, Value::String(word)) => Head::Once(word),
                _ => Head::Unusable,
            };
        }
        Ok(())
    }
}

/// What is wrong with standard output that does not parse as JSON, and
/// what to do about it: a verifier that prints its progress or its
/// reasoning on standard output (`Thinking...`, a Markdown fence around
/// the object) is told where that text goes instead.
fn not_one_object(stdout: &[u8], e: &serde_json::Error) -> String {
    const ALONE: &str = "a verifier prints its answer alone on standard output, and anything else on standard error";
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim_start();
    if text.starts_with('{') {
        return format!("standard output is not exactly one JSON object ({e}): {ALONE}");
    }
    let first = text.lines().next().unwrap_or_default();
    let shown: String = strip_ansi(first).chars().take(80).collect();
    format!("standard output does not start with a JSON object but with `{shown}`: {ALONE}")
}

/// A JSON value in which no object names a key twice.
struct Unambiguous(Value);

impl<'de> de::Deserialize<'de> for Unambiguous {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(UnambiguousVisitor)
            .map(Unambiguous)
    }
}

struct UnambiguousVisitor;

impl<'de> Visitor<'de> for UnambiguousVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unambiguous(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key `{key}` appears twice"
                )));
            }
            let Unambiguous(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// One finding, cleaned as parsed tool output is: colour and terminal
/// escapes removed, its file relative to the repository root.
fn finding(
    item: &Value,
    check: &str,
    origin: Origin,
    place: Place<'_>,
) -> Result<Diagnostic, String> {
    let Value::Object(f) = item else {
        return Err("not an object".to_string());
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match f.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(strip_ansi(s))),
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
    let named = text("file")?.filter(|file| !file.is_empty());
    let file = named
        .as_deref()
        .and_then(|file| relative_to_root(file, &[place.cwd, place.root], place.root));
    // The repository's root itself (`./`) is no file: its line places
    // nothing either, as for any tool.
    let placed = named.is_none() || file.is_some();
    Ok(Diagnostic {
        check: check.to_string(),
        origin,
        tool: "verifier".to_string(),
        file,
        line: number("line")?.filter(|_| placed),
        column: number("column")?.filter(|_| placed),
        severity: match text("severity")? {
            None => Severity::Error,
            Some(word) => severity(&word)?,
        },
        code: text("code")?,
        message,
        ..Diagnostic::default()
    })
}

/// A finding's `severity`: the four phasegate reports, and the words
/// reviewers grade findings with. Any other word is no answer phasegate can
/// act on (tier 3): read as an error it could block on a word nobody meant,
/// read as anything less it could pass one.
fn severity(word: &str) -> Result<Severity, String> {
    match word.trim().to_ascii_lowercase().as_str() {
        "error" | "critical" | "blocker" | "fatal" | "major" | "high" => Ok(Severity::Error),
        "warning" | "warn" | "minor" | "medium" => Ok(Severity::Warning),
        "note" | "hint" | "low" => Ok(Severity::Note),
        "info" | "information" => Ok(Severity::Info),
        _ => Err(format!(
            "`severity` must be one of error, warning, note, info (or critical, blocker, fatal, major, high; minor, medium; low), not `{word}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> VerifierReply {
        parse_in("/repo", text)
    }

    fn parse_in(cwd: &str, text: &str) -> VerifierReply {
        let place = Place {
            cwd: Path::new(cwd),
            root: Path::new("/repo"),
        };
        parse_verifier_answer(text.as_bytes(), "review", Origin::Runtime, place)
    }

    fn malformed(text: &str) -> String {
        match parse(text) {
            VerifierReply::Malformed(reason) => reason,
            VerifierReply::Answer(a) => panic!("{text} parsed as {a:?}"),
        }
    }

    #[test]
    fn a_finding_about_the_repository_root_names_no_file_and_no_line() {
        let VerifierReply::Answer(answer) = parse(
            r#"{"verdict": "fail", "findings": [{"file": "./", "line": 3, "column": 2, "message": "no licence"}, {"file": "/repo/src/a.rs", "line": 4, "message": "m"}]}"#,
        ) else {
            panic!("a fail with readable findings is an answer");
        };
        let places: Vec<(Option<&str>, Option<u32>, Option<u32>)> = answer
            .findings
            .iter()
            .map(|d| (d.file.as_deref(), d.line, d.column))
            .collect();
        assert_eq!(
            places,
            [(None, None, None), (Some("src/a.rs"), Some(4), None)]
        );
    }

    #[test]
    fn valid_answers() {
        assert_eq!(
            parse(" {\"verdict\": \"pass\"}\n"),
            VerifierReply::Answer(VerifierAnswer {
                pass: true,
                findings: vec![],
                unread: None,
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
        let prose = malformed("LGTM\n{\"verdict\": \"pass\"}");
        assert!(
            prose.contains("does not start with a JSON object but with `LGTM`"),
            "{prose}"
        );
        assert!(prose.contains("anything else on standard error"), "{prose}");
        assert!(malformed(r#"{"verdict": "pass"} {"verdict": "pass"}"#).contains("not exactly one"));
        assert!(malformed("[1]").contains("not an object"));
        assert!(malformed("{}").contains("no `verdict`"));
        assert!(malformed(r#"{"verdict": "maybe"}"#).contains("\"maybe\""));
        // A pass whose findings cannot be read is no pass.
        assert!(malformed(r#"{"verdict": "pass", "findings": {}}"#).contains("must be a list"));
        assert!(
            malformed(r#"{"verdict": "pass", "findings": [{"line": 1}]}"#).contains("no `message`")
        );
        assert!(
            malformed(r#"{"verdict": "pass", "findings": [{"message": "m", "line": -2}]}"#)
                .contains("positive")
        );
        assert!(
            malformed(r#"{"verdict": "pass", "findings": [{"message": "m", "file": 7}]}"#)
                .contains("`file` must be a string")
        );
        // A severity nobody defined is no answer: neither an error nor a
        // pass can be read into it.
        let reason = malformed(
            r#"{"verdict": "pass", "findings": [{"message": "m", "severity": "bogus"}]}"#,
        );
        assert!(reason.contains("not `bogus`"), "{reason}");
    }

    #[test]
    fn a_fail_whose_findings_cannot_be_read_is_still_a_fail() {
        // What the verifier said is plain; only its findings are not: the
        // readable ones are kept, and each other says what is wrong with it.
        let VerifierReply::Answer(answer) = parse(
            r#"{"verdict": "fail", "findings": [{"file": "a.md", "line": "7", "message": "criterion 2 is not met"}, {"file": "b.md", "line": 2, "message": "no tests"}]}"#,
        ) else {
            panic!("a plain fail must be an answer");
        };
        assert!(!answer.pass);
        let found: Vec<(Option<&str>, &str, &str)> = answer
            .findings
            .iter()
            .map(|d| (d.file.as_deref(), d.tool.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (Some("b.md"), "verifier", "no tests"),
                (
                    None,
                    "phasegate",
                    "verifier `review` answered \"fail\", but a finding cannot be read: finding 0: `line` must be a number, not \"7\""
                ),
            ]
        );
        assert_eq!(answer.findings[1].severity, Severity::Error);
        let VerifierReply::Answer(answer) = parse(r#"{"verdict": "fail", "findings": "see log"}"#)
        else {
            panic!("a plain fail must be an answer");
        };
        assert!(!answer.pass);
        assert!(
            answer.findings[0]
                .message
                .contains("`findings` must be a list"),
            "{:?}",
            answer.findings
        );
    }

    #[test]
    fn reviewers_grades_are_read_as_severities() {
        let severities = |words: &[&str]| -> Vec<Severity> {
            let findings: Vec<String> = words
                .iter()
                .map(|w| format!(r#"{{"message": "m", "severity": "{w}"}}"#))
                .collect();
            let text = format!(
                r#"{{"verdict": "fail", "findings": [{}]}}"#,
                findings.join(",")
            );
            let VerifierReply::Answer(answer) = parse(&text) else {
                panic!("{text} rejected");
            };
            answer.findings.iter().map(|d| d.severity).collect()
        };
        assert_eq!(
            severities(&["ERROR", "critical", "Major", "high", "blocker", "fatal"]),
            [Severity::Error; 6]
        );
        assert_eq!(
            severities(&["warning", "warn", "minor", "medium"]),
            [Severity::Warning; 4]
        );
        assert_eq!(severities(&["note", "hint", "low"]), [Severity::Note; 3]);
        assert_eq!(severities(&[" info ", "information"]), [Severity::Info; 2]);
    }

    #[test]
    fn findings_are_cleaned_and_placed_like_parsed_output() {
        let VerifierReply::Answer(answer) = parse_in(
            "/repo/sub",
            r#"{"verdict": "fail", "findings": [
                {"file": "/repo/src/a.rs", "line": 1, "message": "\u001b[31mred\u001b[0m \u001b]0;title\u0007done"},
                {"file": "./b.rs", "message": "m"},
                {"file": "/elsewhere/c.rs", "message": "m"},
                {"file": "", "message": "m"}
            ]}"#,
        ) else {
            panic!("valid answer rejected");
        };
        let files: Vec<Option<&str>> = answer.findings.iter().map(|d| d.file.as_deref()).collect();
        assert_eq!(
            files,
            [
                Some("src/a.rs"),
                Some("sub/b.rs"),
                Some("/elsewhere/c.rs"),
                None
            ]
        );
        assert_eq!(answer.findings[0].message, "red done");
    }

    #[test]
    fn a_fail_longer_than_the_limit_is_still_a_fail() {
        let findings = vec![r#"{"message": "m"}"#; 40].join(",");
        let long = format!(r#"{{"id": 1, "verdict": "fail", "findings": [{findings}]}}"#);
        let cut = &long.as_bytes()[..long.len() / 2];
        let VerifierReply::Answer(answer) = over_limit(cut, "", "review", Origin::Runtime) else {
            panic!("a fail before the cut is a fail");
        };
        assert!(!answer.pass);
        assert!(
            answer.findings[0]
                .message
                .contains("its findings were not read"),
            "{:?}",
            answer.findings
        );
        // Anything else cut short is no answer.
        for text in [
            r#"{"verdict": "pass", "findings": [{"message": "m"}, "#,
            r#"{"findings": [{"message": "m"}], "verdict": "fa"#,
            r#"{"verdict": "fail", "verdict": "pass", "findings": ["#,
            r#"{"verdict": ["fail"], "findings": ["#,
            r#"Reviewing... {"verdict": "fail", "findings": ["#,
        ] {
            assert_eq!(
                over_limit(
                    text.as_bytes(),
                    " (batch 2 of 3)",
                    "review",
                    Origin::Runtime
                ),
                VerifierReply::Malformed(format!(
                    "the answer (batch 2 of 3) is longer than {MAX_ANSWER_BYTES} bytes"
                )),
                "{text}"
            );
        }
    }

    /// Every order of two batches' replies (a pass, a fail, an answer
    /// that cannot be read), folded as the runner folds them.
    #[test]
    fn the_weightier_answer_of_two_batches_decides_in_either_order() {
        let pass = || parse(r#"{"verdict": "pass"}"#);
        let fail = || parse(r#"{"verdict": "fail", "findings": [{"message": "m"}]}"#);
        let unreadable = || VerifierReply::Malformed("it printed nothing (batch 2 of 2)".into());
        let folded = |replies: [VerifierReply; 2]| {
            let mut so_far = None;
            for reply in replies {
                assert_eq!(merge(&mut so_far, reply, 1000), 0);
            }
            so_far.unwrap()
        };
        let is_fail = |reply: &VerifierReply, unread: bool| {
            matches!(reply, VerifierReply::Answer(a) if !a.pass
                && a.findings.len() == 1
                && a.unread.is_some() == unread)
        };
        assert!(matches!(folded([pass(), pass()]), VerifierReply::Answer(a) if a.pass));
        for two in [[pass(), fail()], [fail(), pass()]] {
            let got = folded(two);
            assert!(is_fail(&got, false), "{got:?}");
        }
        assert!(
            matches!(folded([fail(), fail()]), VerifierReply::Answer(a) if !a.pass && a.findings.len() == 2)
        );
        for two in [[pass(), unreadable()], [unreadable(), pass()]] {
            assert_eq!(folded(two), unreadable());
        }
        // A fail stands beside an answer that cannot be read, which it
        // keeps, in whichever order they come.
        for two in [[fail(), unreadable()], [unreadable(), fail()]] {
            let got = folded(two);
            assert!(is_fail(&got, true), "{got:?}");
            let VerifierReply::Answer(answer) = got else {
                unreachable!()
            };
            assert_eq!(
                answer.unread.as_deref(),
                Some("it printed nothing (batch 2 of 2)")
            );
        }
        // The first answer that cannot be read is the one kept.
        let mut so_far = None;
        merge(&mut so_far, VerifierReply::Malformed("first".into()), 1000);
        merge(&mut so_far, VerifierReply::Malformed("second".into()), 1000);
        merge(&mut so_far, fail(), 1000);
        assert!(
            matches!(&so_far, Some(VerifierReply::Answer(a)) if a.unread.as_deref() == Some("first")),
            "{so_far:?}"
        );
        // The cap holds for a fail that comes after an unreadable answer.
        let mut so_far = Some(VerifierReply::Malformed("x".into()));
        let many = parse(&format!(
            r#"{{"verdict": "fail", "findings": [{}]}}"#,
            [r#"{"message": "m"}"#; 5].join(",")
        ));
        assert_eq!(merge(&mut so_far, many, 3), 2);
    }

    #[test]
    fn a_key_given_twice_is_malformed_at_any_depth() {
        let twice = malformed(r#"{"verdict": "fail", "findings": [], "verdict": "pass"}"#);
        assert!(twice.contains("`verdict` appears twice"), "{twice}");
        assert!(twice.contains("ambiguous"), "{twice}");
        let inner =
            malformed(r#"{"verdict": "fail", "findings": [{"message": "a", "message": "b"}]}"#);
        assert!(inner.contains("`message` appears twice"), "{inner}");
        // The same key in two different objects is fine.
        assert!(matches!(
            parse(r#"{"verdict": "fail", "findings": [{"message": "a"}, {"message": "b"}]}"#),
            VerifierReply::Answer(_)
        ));
    }
}
