//! `handoff validate` of named paths: ids compared with every tracked document, true wording, long lines cut.

use crate::handoff_ids::document;
use crate::support::TestRepo;

/// Both claims' checks run and pass.
const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// The `line:column message` of each error of the document at `path`
/// among a verdict's or a validation's `handoffs`.
fn errors(json: &serde_json::Value, path: &str) -> Vec<String> {
    let report = json["handoffs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == path)
        .unwrap_or_else(|| panic!("no report of {path}: {json}"));
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}:{} {}",
                e["line"],
                e["column"],
                e["message"].as_str().unwrap()
            )
        })
        .collect()
}

/// What the error on a copy of `original` says of it, up to where the
/// advice starts.
fn shared_with(original: &str, held: &str) -> String {
    format!(
        "2:5 `id: F001` is also the id of `{original}` (line 2), another `implementation` document, {held}: each document needs its own id"
    )
}

/// The start of a long text, for a failure to show.
pub(crate) fn head(text: &str) -> String {
    text.chars().take(2000).collect()
}

fn starts_with(errors: &[String], start: &str) -> bool {
    errors.len() == 1 && errors[0].starts_with(start)
}

#[test]
fn a_named_copy_is_compared_with_the_tracked_documents_not_named() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", &document("F001"));
    repo.write("handoffs/F003.md", &document("F003"));
    repo.commit_all("F001");
    // A copy of F001.md, its id left as it was, named with another
    // document that has its own.
    repo.write("handoffs/F002.md", &document("F001"));
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F002.md",
        "handoffs/F003.md",
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    let copy = errors(&json, "handoffs/F002.md");
    assert!(
        starts_with(&copy, &shared_with("handoffs/F001.md", "already committed")),
        "{copy:?}"
    );
    assert!(errors(&json, "handoffs/F003.md").is_empty());
    // `run --files` says the same of it.
    let (code, verdict) = repo.verdict(&["--files", "handoffs/F002.md"]);
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(errors(&verdict, "handoffs/F002.md"), copy);

    // The original named alone is the original: its name is its id.
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // A document of another stage under the same id is the same work
    // moving on, and one outside `[handoff] paths` is no document.
    repo.write(
        "handoffs/F002.md",
        &document("F001").replace("stage: implementation", "stage: qa"),
    );
    repo.write("notes/F002.md", &document("F001"));
    repo.git(&["add", "notes/F002.md"]);
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F002.md",
    ]);
    assert!(!run.stdout.contains("is also the id of"), "{}", run.stdout);
}

#[test]
fn the_error_on_a_copy_says_whether_the_original_is_committed_staged_or_only_edited() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.commit_all("configured");
    // The original is staged, never committed.
    repo.stage("handoffs/F001.md", &document("F001"));
    repo.write("handoffs/F002.md", &document("F001"));
    let staged = shared_with("handoffs/F001.md", "staged but not committed yet");
    let (code, verdict) = repo.verdict(&["--files", "handoffs/F002.md"]);
    assert_eq!(code, 1, "{verdict}");
    let said = errors(&verdict, "handoffs/F002.md");
    assert!(starts_with(&said, &staged), "{said:?}");
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F002.md",
    ]);
    assert_eq!(errors(&run.json(), "handoffs/F002.md"), said);

    // Committed with another id, and given this one in the work tree
    // only: neither the commit nor the index says it.
    repo.stage("handoffs/F001.md", &document("F009"));
    repo.git(&["commit", "-qm", "F009", "--no-verify"]);
    repo.write("handoffs/F001.md", &document("F001"));
    let edited = shared_with(
        "handoffs/F001.md",
        "with that id in the work tree only (not staged)",
    );
    let (code, verdict) = repo.verdict(&["--files", "handoffs/F002.md"]);
    assert_eq!(code, 1, "{verdict}");
    let said = errors(&verdict, "handoffs/F002.md");
    assert!(starts_with(&said, &edited), "{said:?}");

    // Committed: as it was said before.
    repo.commit_all("F001");
    repo.write("handoffs/F002.md", &document("F001"));
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F002.md",
    ]);
    let said = errors(&run.json(), "handoffs/F002.md");
    assert!(
        starts_with(&said, &shared_with("handoffs/F001.md", "already committed")),
        "{said:?}"
    );
}

/// A document whose `title` line (line 4) is `text`.
fn with_line(text: &str) -> String {
    document("F001").replacen("title: Parse the verdict", text, 1)
}

#[test]
fn a_line_of_a_megabyte_is_shown_cut_around_its_error_and_located_exactly() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let long = "x".repeat(1 << 20);
    // A `: ` inside an unquoted title: the error points at it, a megabyte
    // into line 4.
    repo.write(
        "handoffs/F001.md",
        &with_line(&format!("title: {long} see: below {long}")),
    );
    let column = "title: ".len() + long.len() + " see".len() + 1;

    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F001.md",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json = run.json();
    let said = errors(&json, "handoffs/F001.md");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with(&format!("4:{column} ")),
        "{}",
        head(&said[0])
    );
    assert!(said[0].len() < 1000, "{}", head(&said[0]));

    let run = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 1, "{}", head(&run.stderr));
    assert!(run.stdout.len() < 4000, "{}", head(&run.stdout));
    assert!(
        run.stdout
            .contains(&format!("handoffs/F001.md:4:{column} error ")),
        "{}",
        run.stdout
    );
    // Drawn at a terminal only, cut around its error.
    let run = crate::report_once::at_terminal(&repo, &["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 1, "{}", head(&run.stdout));
    assert!(run.stdout.len() < 4000, "{}", head(&run.stdout));
    assert!(run.stdout.contains("xxx see: below xxx"), "{}", run.stdout);
    assert!(run.stdout.contains('…'), "{}", run.stdout);
    assert!(
        run.stdout
            .contains(&format!("╭─[handoffs/F001.md:4:{column}]")),
        "{}",
        run.stdout
    );

    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert_eq!(feedback.code, 1, "{}", feedback.stderr);
    assert!(feedback.stdout.len() < 4000, "{}", head(&feedback.stdout));
    assert!(
        feedback.stdout.contains("see: below") && feedback.stdout.contains('…'),
        "{}",
        feedback.stdout
    );
}

#[test]
fn a_minified_frontmatter_is_drawn_cut_around_each_error() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let long = "z".repeat(300_000);
    let line = format!(
        "{{id: F001, title: \"{long}\", stage: implementaton, status: in_progress, handoff_ready: false, checkpoints: [], started_at: 2026-01-20T09:00:00Z}}"
    );
    repo.write("handoffs/F001.md", &format!("---\n{line}\n---\n"));
    let column = line.find("implementaton").unwrap() + 1;

    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F001.md",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let said = errors(&run.json(), "handoffs/F001.md");
    assert!(
        said.iter()
            .any(|e| e.starts_with(&format!("2:{column} `stage` must be one of"))),
        "{said:?}"
    );

    // Drawn at a terminal only.
    let run = crate::report_once::at_terminal(&repo, &["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 1, "{}", head(&run.stdout));
    assert!(run.stdout.len() < 4000, "{}", head(&run.stdout));
    assert!(
        run.stdout.contains("\", stage: implementaton, status"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains('…'), "{}", run.stdout);
}
