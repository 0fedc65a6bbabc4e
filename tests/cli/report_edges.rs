//! Reports that stay valid whatever the tools and file names hold.

use std::collections::HashSet;

use crate::support::TestRepo;

/// A repository whose one check, `build`, prints `output.txt` and fails.
fn printing(repo: &TestRepo, output: &str) {
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "build", shell = true, command = "cat output.txt; exit 1" } ]
"#,
    );
    repo.write("output.txt", output);
}

/// A repository whose one check is a verifier that answers `answer`.
fn answering(repo: &TestRepo, answer: &str) {
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "review", kind = "verifier", shell = true, command = "cat answer.json" } ]
"#,
    );
    repo.write("answer.json", answer);
}

/// The Code Quality issues and the SARIF results of one run.
fn code_quality_and_sarif(repo: &TestRepo) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--format",
        "codequality",
        "--report",
        "sarif=phasegate.sarif",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let issues = run.json().as_array().unwrap().clone();
    let sarif: serde_json::Value = serde_json::from_str(&repo.read("phasegate.sarif")).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap().clone();
    (issues, results)
}

/// The ids a report gives its findings, with each finding's line.
fn ids(items: &[serde_json::Value], id: &str, line: &str) -> Vec<(String, u64)> {
    items
        .iter()
        .map(|i| {
            (
                i.pointer(id).unwrap().as_str().unwrap().to_string(),
                i.pointer(line).unwrap().as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_findings_id_is_one_per_occurrence_and_stays_when_lines_move() {
    // Two identical findings in one file (rustc's "mismatched types" twice
    // in one file reads the same), and one elsewhere.
    let repo = TestRepo::new();
    printing(
        &repo,
        "src/a.c:3:1: error: expected ';' before '}' token\n\
         src/a.c:9:1: error: expected ';' before '}' token\n\
         src/b.c:4:2: error: unknown type name 'foo'\n",
    );
    let (issues, results) = code_quality_and_sarif(&repo);
    let quality = ids(&issues, "/fingerprint", "/location/lines/begin");
    let sarif = ids(
        &results,
        "/partialFingerprints/phasegate~1v1",
        "/locations/0/physicalLocation/region/startLine",
    );
    for (name, found) in [("codequality", &quality), ("sarif", &sarif)] {
        assert_eq!(found.len(), 3, "{name}: {found:?}");
        // GitLab and GitHub take findings with one id for one finding.
        let unique: HashSet<&String> = found.iter().map(|(id, _)| id).collect();
        assert_eq!(unique.len(), 3, "{name}: one id per occurrence: {found:?}");
    }

    // Two lines added at the top of both files: every finding moves down,
    // and none is new or fixed, so none may change its id.
    printing(
        &repo,
        "src/a.c:5:1: error: expected ';' before '}' token\n\
         src/a.c:11:1: error: expected ';' before '}' token\n\
         src/b.c:6:2: error: unknown type name 'foo'\n",
    );
    let (issues, results) = code_quality_and_sarif(&repo);
    let moved_quality = ids(&issues, "/fingerprint", "/location/lines/begin");
    let moved_sarif = ids(
        &results,
        "/partialFingerprints/phasegate~1v1",
        "/locations/0/physicalLocation/region/startLine",
    );
    for (name, before, after) in [
        ("codequality", &quality, &moved_quality),
        ("sarif", &sarif, &moved_sarif),
    ] {
        let lines: Vec<u64> = after.iter().map(|(_, line)| *line).collect();
        assert_eq!(lines.len(), 3, "{name}: {after:?}");
        assert!(
            before.iter().all(|(_, line)| !lines.contains(line)),
            "{name}: the findings moved: {before:?} {after:?}"
        );
        let before: HashSet<&String> = before.iter().map(|(id, _)| id).collect();
        let after: HashSet<&String> = after.iter().map(|(id, _)| id).collect();
        assert_eq!(before, after, "{name}: ids changed with the lines");
    }
}

#[test]
fn a_finding_of_no_file_points_at_no_line_of_the_configuration() {
    // A reviewer's finding with a line but no file: line 7 of nothing.
    let repo = TestRepo::new();
    answering(
        &repo,
        r#"{"verdict": "fail", "findings": [
            {"line": 7, "severity": "error", "message": "the plan skips the migration"}
        ]}"#,
    );
    // phasegate.toml has a line 7 only when something is there to mislead.
    let mut config = repo.read("phasegate.toml");
    config.push_str("\n[commands]\n\ntests = \"true\"\n\n# line 7\n");
    repo.config(&config);
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--format",
        "sarif",
        "--report",
        "codequality=quality.json",
        "--report",
        "junit=junit.xml",
    ]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let sarif = run.json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let result = results
        .iter()
        .find(|r| r["message"]["text"] == "the plan skips the migration")
        .unwrap_or_else(|| panic!("{sarif:#}"));
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "phasegate.toml");
    assert_eq!(
        location["region"],
        serde_json::json!({ "startLine": 1 }),
        "the top of the configuration, not its line 7: {location:#}"
    );

    let issues: serde_json::Value = serde_json::from_str(&repo.read("quality.json")).unwrap();
    let issue = issues
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["description"] == "the plan skips the migration")
        .unwrap_or_else(|| panic!("{issues:#}"));
    assert_eq!(
        issue["location"],
        serde_json::json!({ "path": "phasegate.toml", "lines": { "begin": 1 } })
    );

    let xml = repo.read("junit.xml");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap_or_else(|| panic!("{xml}"));
    let text = failure.text().unwrap_or_default();
    assert!(
        text.lines()
            .any(|l| l == "error the plan skips the migration"),
        "a line of no file is no place: {text}"
    );
}

#[test]
fn the_github_log_says_why_a_run_fails_open() {
    // Under the fast profile a missing program is skipped and the run
    // proceeds: the notes that say so must reach the step's log.
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "lint", command = "phasegate-no-such-linter" } ]
"#,
    );
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--profile",
        "fast",
        "--format",
        "github",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let (_, verdict) = repo.verdict(&["--all-files", "--profile", "fast"]);
    let notes = verdict["notes"].as_array().unwrap();
    assert!(!notes.is_empty(), "{verdict:#}");
    for note in notes {
        let line = format!("phasegate: note: {}", note.as_str().unwrap());
        assert!(
            run.stdout.lines().any(|l| l == line),
            "{line:?} is not in the log:\n{}",
            run.stdout
        );
    }
    // Nothing but phasegate's own annotations is a workflow command.
    for line in run.stdout.lines() {
        assert!(
            !line.starts_with("::")
                || line.starts_with("::warning ")
                || line.starts_with("::notice "),
            "{line}"
        );
    }
}

#[test]
fn an_escape_in_the_configuration_is_shown_not_obeyed() {
    // The error is about the very character a terminal would obey: a
    // screen clear and a window title would hide what it points at.
    let repo = TestRepo::new();
    repo.config("[gate]\nprofile = \"a\u{1b}[2Jb\u{1b}]0;pwned\u{7}\"\n");
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        !run.stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{:?}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(r#"profile = "a\x1b[2Jb\x1b]0;pwned\x07""#),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("phasegate.toml:2:13"), "{}", run.stderr);

    // A file with Windows line ends holds nothing to show.
    repo.config("[gate]\r\nprofle = \"auto\"\r\n");
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!run.stderr.contains("\\x0d"), "{}", run.stderr);
    assert!(
        run.stderr.contains("did you mean `profile`"),
        "{}",
        run.stderr
    );
}
