//! Handoff reports of cut lines: the document's own line and column, long field names, the duplicate-id wording.

use crate::handoff_ids::document;
use crate::handoff_named::head;
use crate::support::{Run, TestRepo};

/// Both claims' checks run and pass.
const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// `phasegate handoff validate` of `path`, as JSON and for people.
fn validated(repo: &TestRepo, path: &str) -> (serde_json::Value, Run) {
    let json = repo.phasegate(&["handoff", "validate", "--format", "json", path]);
    assert_eq!(json.code, 1, "{}", head(&json.stdout));
    // Drawn at a terminal only.
    let human = crate::report_once::at_terminal(repo, &["handoff", "validate", path]);
    assert_eq!(human.code, 1, "{}", head(&human.stdout));
    (json.json(), human)
}

/// The `line:column` of each of the first report's `key` (errors or
/// warnings).
fn places(json: &serde_json::Value, key: &str) -> Vec<String> {
    json["handoffs"][0][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}:{}", e["line"], e["column"]))
        .collect()
}

/// The `path:line:column` miette heads each drawing with.
fn headers(human: &str) -> Vec<String> {
    human
        .lines()
        .filter_map(|line| {
            let start = line.find("╭─[")? + "╭─[".len();
            Some(line[start..line.rfind(']')?].to_string())
        })
        .collect()
}

#[test]
fn a_cut_line_is_headed_with_the_documents_line_and_column() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let long = "x".repeat(5000);
    // A `: ` inside an unquoted title, 5000 characters into line 4.
    repo.write(
        "handoffs/F001.md",
        &document("F001").replacen(
            "title: Parse the verdict",
            &format!("title: {long} see: below {long}"),
            1,
        ),
    );
    let column = "title: ".len() + long.len() + " see".len() + 1;
    let (json, human) = validated(&repo, "handoffs/F001.md");
    assert_eq!(places(&json, "errors"), [format!("4:{column}")]);
    assert!(human.stdout.contains('…'), "{}", head(&human.stdout));
    assert_eq!(
        headers(&human.stdout),
        [format!("handoffs/F001.md:4:{column}")],
        "{}",
        head(&human.stdout)
    );

    // A minified frontmatter: each drawing is headed where its first
    // error is in the document.
    let title = "z".repeat(3000);
    let line = format!(
        "{{id: F001, title: \"{title}\", stage: implementaton, status: in_progress, handoff_ready: false, checkpoints: [], started_at: 2026-01-20T09:00:00Z}}"
    );
    repo.write("handoffs/F001.md", &format!("---\n{line}\n---\n"));
    let (json, human) = validated(&repo, "handoffs/F001.md");
    let stage = format!("2:{}", line.find("implementaton").unwrap() + 1);
    assert!(places(&json, "errors").contains(&stage), "{json:#}");
    let said = headers(&human.stdout);
    assert!(!said.is_empty(), "{}", head(&human.stdout));
    for header in &said {
        let place = header.strip_prefix("handoffs/F001.md:").unwrap();
        assert!(
            places(&json, "errors").iter().any(|p| p == place),
            "{header} is no error's place: {json:#}"
        );
    }

    // On a line not cut, a character of two bytes before the error
    // counts as one column, as in the JSON.
    repo.write(
        "handoffs/F001.md",
        &document("F001").replacen("title: Parse the verdict", "title: Café see: below", 1),
    );
    let (json, human) = validated(&repo, "handoffs/F001.md");
    let column = "title: Café see".chars().count() + 1;
    assert_eq!(places(&json, "errors"), [format!("4:{column}")]);
    assert_eq!(
        headers(&human.stdout),
        [format!("handoffs/F001.md:4:{column}")],
        "{}",
        human.stdout
    );
}

#[test]
fn a_field_with_a_name_of_a_megabyte_is_named_cut() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // A YAML key of more than 1024 characters must be written explicit
    // (`? key`).
    let name = format!("status_{}", "k".repeat(1 << 20));
    repo.write(
        "handoffs/F001.md",
        &document("F001").replacen("---\n", &format!("---\n? {name}\n: 1\n"), 1),
    );
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F001.md",
    ]);
    assert_eq!(run.code, 0, "{}", head(&run.stdout));
    assert!(run.stdout.len() < 4000, "{}", head(&run.stdout));
    let json = run.json();
    let warnings = json["handoffs"][0]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{json:#}");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("unknown field `status_kkk")
            && message.ends_with("k…`; did you mean `status`?"),
        "{message}"
    );
    assert_eq!(
        (&warnings[0]["line"], &warnings[0]["column"]),
        (&2.into(), &3.into())
    );
    assert!(warnings[0]["field"].as_str().unwrap().ends_with('…'));
    let human = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(human.code, 0, "{}", head(&human.stderr));
    assert!(human.stdout.len() < 4000, "{}", head(&human.stdout));
    assert!(
        human
            .stdout
            .contains("handoffs/F001.md:2:3 warning unknown field `status_kkk"),
        "{}",
        head(&human.stdout)
    );

    // In a checkpoint, and written twice: each message quotes it cut.
    let long = "k".repeat(1 << 20);
    repo.write(
        "handoffs/F001.md",
        &document("F001").replacen(
            "  - name: tests_written\n",
            &format!("  - name: tests_written\n    ? {long}\n    : 1\n"),
            1,
        ),
    );
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F001.md",
    ]);
    assert!(run.stdout.len() < 4000, "{}", head(&run.stdout));
    let json = run.json();
    let warning = json["handoffs"][0]["warnings"][0]["message"]
        .as_str()
        .unwrap();
    assert!(
        warning.starts_with("unknown checkpoint field `kkk"),
        "{warning}"
    );
    assert!(warning.ends_with("k…`"), "{warning}");

    repo.write(
        "handoffs/F001.md",
        &document("F001").replacen("---\n", &format!("---\n? {long}\n: 1\n? {long}\n: 2\n"), 1),
    );
    let (json, human) = validated(&repo, "handoffs/F001.md");
    assert!(human.stdout.len() < 4000, "{}", head(&human.stdout));
    let errors = json["handoffs"][0]["errors"].as_array().unwrap();
    let duplicate = errors
        .iter()
        .filter_map(|e| e["message"].as_str())
        .find(|m| m.starts_with("duplicate key"))
        .unwrap_or_else(|| panic!("{}", head(&json.to_string())));
    assert!(
        duplicate.starts_with("duplicate key `kkk")
            && duplicate.ends_with("k…` (first on line 2): remove one of them"),
        "{}",
        head(duplicate)
    );
}

/// The advice that ends the duplicate-id error on the first document
/// `handoff validate --format json` reports.
fn advice(run: &Run) -> String {
    let json = run.json();
    let message = json["handoffs"][0]["errors"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {json:#}"))
        .to_string();
    let (_, advice) = message
        .split_once("a failure of one is read as the other's; ")
        .unwrap_or_else(|| panic!("{message}"));
    advice.to_string()
}

#[test]
fn the_duplicate_id_error_of_named_files_says_what_was_compared() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", &document("F001"));
    repo.write("handoffs/a.md", &document("F005"));
    repo.write("handoffs/b.md", &document("F005"));
    repo.commit_all("F001 and F005 twice");

    // Named alone, a copy of a committed document: its name says it is
    // the copy, and nothing in it is new.
    repo.write("handoffs/F002.md", &document("F001"));
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F002.md",
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        advice(&run),
        "`handoffs/F001.md` is named after `F001` and this file is not, so this one reads as the copy: give it an id of its own (a copy keeps its original's)"
    );
    // `run --files` compares the same, and says the same.
    let (code, verdict) = repo.verdict(&["--files", "handoffs/F002.md"]);
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(
        verdict["handoffs"][0]["errors"][0]["message"],
        run.json()["handoffs"][0]["errors"][0]["message"]
    );

    // A committed document named alone, whose twin's name says nothing
    // either: either may be the copy.
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "handoffs/b.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let said = advice(&run);
    assert!(!said.contains("new one"), "{said}");
    assert_eq!(
        said,
        "no commit says which came first, nor do the file names: give the copy an id of its own, be it this one or `handoffs/a.md` (a copy keeps its original's)"
    );

    // A staged copy is what the commit adds: that one is new.
    std::fs::remove_file(repo.path().join("handoffs/F002.md")).unwrap();
    repo.stage("handoffs/F003.md", &document("F001"));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict}");
    let message = verdict["handoffs"][0]["errors"][0]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.ends_with("give this new one an id of its own (a copy keeps its original's)"),
        "{message}"
    );
}
