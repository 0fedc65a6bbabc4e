//! ruff's report formats for CI systems: `--output-format` `junit`,
//! `gitlab` (GitLab's code quality), `rdjson` (reviewdog's) and `sarif`.
//! Each carries the findings of ruff's `json` format under another
//! schema, and each is read into the same findings.
//!
//! Only ruff's reports are taken: SARIF's and rdjson's say which tool wrote
//! them, GitLab's and JUnit's by the shape of ruff's codes and names. Other
//! tools fill these schemas otherwise (their own columns, severities, a
//! JUnit suite per test class rather than per file), so a report of theirs
//! is not read as if ruff had written it.

use std::ops::Range;

use serde_json::Value;

use super::{json_number, Found};
use crate::diagnostics::Severity;

/// Whether `code` is a ruff rule's code (`F401`, `ASYNC251`) or name
/// (`invalid-syntax`, every rule under `--preview`).
fn ruff_code(code: &str) -> bool {
    let letters = code.bytes().take_while(u8::is_ascii_uppercase).count();
    let coded = letters > 0
        && code.len() > letters
        && code.bytes().skip(letters).all(|b| b.is_ascii_digit());
    let named = code.starts_with(|c: char| c.is_ascii_lowercase())
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    coded || named
}

/// Whether `file` is one ruff reads: Python, a stub, a notebook, or
/// `pyproject.toml`.
fn ruff_file(file: &str) -> bool {
    std::path::Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "py" | "pyi" | "ipynb" | "toml"))
}

/// The findings of a JSON report ruff wrote in one of its CI formats;
/// `None` when `doc` is no such report.
pub fn document(doc: &Value, at: &Range<u64>) -> Option<Vec<Found>> {
    if let Some(runs) = doc["runs"].as_array() {
        return sarif(runs, at);
    }
    if doc["source"]["name"] == "ruff" {
        return doc["diagnostics"].as_array().map(|items| rdjson(items, at));
    }
    gitlab(doc.as_array()?, at)
}

/// `runs[].results[]` of ruff's SARIF 2.1.0 (§3.27): `ruleId`, `level`,
/// `message.text`, and the first location's `artifactLocation.uri` (a
/// `file://` URI, its spaces and other bytes percent-encoded) and
/// `region`.
fn sarif(runs: &[Value], at: &Range<u64>) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let mut ruffs = false;
    for run in runs {
        if run["tool"]["driver"]["name"] != "ruff" {
            continue;
        }
        ruffs = true;
        for result in run["results"].as_array().into_iter().flatten() {
            let location = &result["locations"][0]["physicalLocation"];
            let Some(uri) = location["artifactLocation"]["uri"].as_str() else {
                continue;
            };
            let region = &location["region"];
            let mut message = result["message"]["text"].as_str().unwrap_or("").to_string();
            // As in ruff's JSON: what its fix would do.
            if let Some(fix) = result["fixes"][0]["description"]["text"].as_str() {
                message.push_str("\nhelp: ");
                message.push_str(fix);
            }
            // SARIF's default level is `warning` (§3.27.10), but ruff
            // writes one for every result.
            let severity = result["level"]
                .as_str()
                .map_or(Severity::Warning, sarif_level);
            found.push(
                Found::new("ruff-sarif", severity, message)
                    .at(
                        &file_of_uri(uri),
                        json_number(&region["startLine"]),
                        json_number(&region["startColumn"]),
                    )
                    .ends(
                        json_number(&region["endLine"]),
                        json_number(&region["endColumn"]),
                    )
                    .code(result["ruleId"].as_str().map(str::to_string))
                    .tool("ruff")
                    .range(at),
            );
        }
    }
    ruffs.then_some(found)
}

/// A SARIF `level` (§3.27.10) as a severity.
fn sarif_level(level: &str) -> Severity {
    match level {
        "warning" => Severity::Warning,
        "note" => Severity::Note,
        "none" => Severity::Info,
        _ => Severity::Error,
    }
}

/// The path a SARIF artifact URI names: `file:///abs/my%20mod.py` →
/// `/abs/my mod.py` (RFC 8089; the percent escapes of RFC 3986 §2.1
/// undone).
fn file_of_uri(uri: &str) -> String {
    let path = uri
        .strip_prefix("file://localhost")
        .or_else(|| uri.strip_prefix("file://"))
        .unwrap_or(uri);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let value = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `diagnostics` of ruff's rdjson: `{"message", "code": {"value",
/// "url"}, "location": {"path", "range": {"start": {"line", "column"},
/// "end"}}, "suggestions"}`.
fn rdjson(items: &[Value], at: &Range<u64>) -> Vec<Found> {
    items
        .iter()
        .filter_map(|item| {
            let location = &item["location"];
            let file = location["path"].as_str()?;
            let range = &location["range"];
            // ruff labels its whole rdjson report `"severity": "WARNING"`
            // whatever the rules, where every other format of the same run
            // calls each finding an error (`Found 3 errors.`, its JSON's
            // `"severity": "error"`, SARIF's `"level": "error"`): a finding
            // is read alike in every format, by its own severity when it
            // has one.
            let severity = item["severity"]
                .as_str()
                .map_or(Severity::Error, Severity::from_word);
            Some(
                Found::new(
                    "ruff-rdjson",
                    severity,
                    item["message"].as_str().unwrap_or(""),
                )
                .at(
                    file,
                    json_number(&range["start"]["line"]),
                    json_number(&range["start"]["column"]),
                )
                .ends(
                    json_number(&range["end"]["line"]),
                    json_number(&range["end"]["column"]),
                )
                .code(item["code"]["value"].as_str().map(str::to_string))
                .tool("ruff")
                .range(at),
            )
        })
        .collect()
}

/// ruff's GitLab code quality report: `[{"check_name": "F401",
/// "description": "F401: message", "severity": "major", "fingerprint",
/// "location": {"path", "positions": {"begin": {"line", "column"},
/// "end"}}}]`, its paths relative to where ruff ran. `None` unless every
/// item is ruff's: its code, its `CODE: ` before the message, a file ruff
/// reads.
fn gitlab(items: &[Value], at: &Range<u64>) -> Option<Vec<Found>> {
    if items.is_empty() {
        return None;
    }
    items
        .iter()
        .map(|item| {
            let code = item["check_name"].as_str().filter(|c| ruff_code(c))?;
            let message = item["description"]
                .as_str()?
                .strip_prefix(code)?
                .strip_prefix(": ")?;
            let location = &item["location"];
            let file = location["path"].as_str().filter(|f| ruff_file(f))?;
            let positions = &location["positions"];
            // ruff calls every finding `major`, its word for what its
            // other formats call an error.
            let severity = match item["severity"].as_str() {
                Some("info") => Severity::Info,
                Some("minor") => Severity::Warning,
                _ => Severity::Error,
            };
            Some(
                Found::new("ruff-gitlab", severity, message)
                    .at(
                        file,
                        json_number(&positions["begin"]["line"]),
                        json_number(&positions["begin"]["column"]),
                    )
                    .ends(
                        json_number(&positions["end"]["line"]),
                        json_number(&positions["end"]["column"]),
                    )
                    .code(Some(code.to_string()))
                    .tool("ruff")
                    .range(at),
            )
        })
        .collect()
}

/// ruff's JUnit XML, a line at a time: a `<testsuite name="/abs/a.py">`
/// per file, a `<testcase name="org.ruff.F401" line="1" column="8">` per
/// finding, its `<property name="severity" value="error"/>` and its
/// `<failure message="...">`.
#[derive(Debug, Default)]
pub struct Junit {
    /// The file of the suite being read.
    file: Option<String>,
    /// The finding whose `<failure>` is awaited.
    case: Option<Found>,
}

impl Junit {
    /// Reads one line (trimmed); a finding when the line completes one.
    pub fn line(&mut self, line: &str, at: &Range<u64>) -> Option<Found> {
        let line = line.trim_start();
        if line.starts_with("<testsuite ") {
            self.file = attribute(line, "name");
            self.case = None;
        } else if line.starts_with("</testsuite>") {
            self.file = None;
            self.case = None;
        } else if line.starts_with("<testcase ") {
            self.case = None;
            let code = attribute(line, "name")?;
            let code = code.strip_prefix("org.ruff.").filter(|c| ruff_code(c))?;
            let file = self.file.as_deref()?;
            let number = |name| attribute(line, name).and_then(|n| super::number(&n));
            self.case = Some(
                Found::new("ruff-junit", Severity::Error, "")
                    .at(file, number("line"), number("column"))
                    .code(Some(code.to_string()))
                    .tool("ruff")
                    .range(at),
            );
        } else if line.starts_with("<property ") {
            let case = self.case.as_mut()?;
            if attribute(line, "name").as_deref() == Some("severity") {
                if let Some(word) = attribute(line, "value") {
                    case.severity = Severity::from_word(&word);
                }
            }
        } else if line.starts_with("<failure ") {
            let mut case = self.case.take()?;
            case.message = attribute(line, "message").unwrap_or_default();
            case.range.end = at.end;
            return Some(case);
        }
        None
    }
}

/// The value of the attribute `name` of the XML tag on `line`, its
/// entities undone.
fn attribute(line: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = line.find(&key)? + key.len();
    let len = line[start..].find('"')?;
    Some(unescape_xml(&line[start..start + len]))
}

/// XML's five predefined entities and its character references undone.
fn unescape_xml(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest.find(';').filter(|s| *s <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_uri_names_its_path_with_the_escapes_undone() {
        assert_eq!(file_of_uri("file:///tmp/r/my%20mod.py"), "/tmp/r/my mod.py");
        assert_eq!(file_of_uri("file:///t/%C3%A9.py"), "/t/é.py");
        // A stray `%` stays as it is.
        assert_eq!(file_of_uri("file:///t/100%.py"), "/t/100%.py");
        assert_eq!(file_of_uri("pkg/a.py"), "pkg/a.py");
    }

    #[test]
    fn xml_entities_are_undone() {
        assert_eq!(
            unescape_xml("a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#x27; & e"),
            "a <b> & \"c\" 'd' & e"
        );
    }

    #[test]
    fn only_ruffs_codes_and_files_make_a_gitlab_report_ruffs() {
        let item = |code: &str, description: &str, path: &str| {
            serde_json::json!([{
                "check_name": code,
                "description": description,
                "severity": "major",
                "location": {"path": path, "positions": {"begin": {"line": 1, "column": 2}}},
            }])
        };
        let read = |doc: Value| document(&doc, &(0..1)).map(|f| f.len());
        assert_eq!(read(item("F401", "F401: unused", "a.py")), Some(1));
        assert_eq!(
            read(item("invalid-syntax", "invalid-syntax: oops", "a.py")),
            Some(1)
        );
        // ESLint's, through a GitLab formatter: not ruff's.
        assert_eq!(read(item("no-undef", "'x' is not defined.", "a.js")), None);
        assert_eq!(read(item("F401", "F401: unused", "a.js")), None);
        assert_eq!(read(serde_json::json!([])), None);
    }
}
