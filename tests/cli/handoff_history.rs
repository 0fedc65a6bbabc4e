//! Handoff feedback read from the run history, retry counts, ids across all documents.

use crate::handoff_ids::document;
use crate::support::TestRepo;

/// Both claims' checks run and pass, whatever is selected.
const GATE: &str = r#"[gate]
max_retries = 2

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// The one recorded run's verdict file.
fn verdict_file(repo: &TestRepo) -> std::path::PathBuf {
    let runs = repo.path().join(".git/phasegate/runs");
    let mut all: Vec<_> = std::fs::read_dir(runs)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("verdict.json"))
        .collect();
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

/// The verdict at `file`, its check `tests` changed by `edit`.
fn edit_tests_check(file: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut verdict: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let tests = verdict["checks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["name"] == "tests")
        .unwrap();
    edit(tests);
    std::fs::write(file, serde_json::to_vec(&verdict).unwrap()).unwrap();
}

/// The `fix` of the feedback's one `unverified` item.
fn unverified_fix(repo: &TestRepo) -> String {
    let run = repo.phasegate(&[
        "handoff",
        "feedback",
        "--format",
        "json",
        "handoffs/F001.md",
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    let items = json["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{json}");
    assert_eq!(items[0]["kind"], "unverified", "{json}");
    items[0]["fix"].as_str().unwrap().to_string()
}

#[test]
fn feedback_on_a_switched_off_check_follows_the_kind_of_skip_the_run_recorded() {
    let repo = TestRepo::new();
    repo.config(&GATE.replace(
        "{ name = \"tests\", command = \"true\" }",
        "{ name = \"tests\", command = \"true\", on_failure = \"skip\" }",
    ));
    repo.stage("handoffs/F001.md", &document("F001"));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(
        (code, &verdict["status"]),
        (0, &"warned".into()),
        "{verdict}"
    );
    // The verdict says why in a word that tools can rely on.
    let tests = crate::support::check(&verdict, "tests");
    assert_eq!(tests["skip_kind"], "disabled", "{tests}");
    let switched_off = "it is switched off (`on_failure = \"skip\"` in `phasegate.toml`)";
    assert!(unverified_fix(&repo).contains(switched_off));

    // A reason worded otherwise (by another version of phasegate) still
    // gets the advice for its kind.
    let file = verdict_file(&repo);
    edit_tests_check(&file, |tests| {
        tests["reason"] = "turned off in the configuration".into();
    });
    let fix = unverified_fix(&repo);
    assert!(fix.contains(switched_off), "{fix}");

    // A verdict recorded before the kind was: read by its words.
    edit_tests_check(&file, |tests| {
        tests.as_object_mut().unwrap().remove("skip_kind");
        tests["reason"] = "disabled (on_failure = \"skip\")".into();
    });
    let fix = unverified_fix(&repo);
    assert!(fix.contains(switched_off), "{fix}");
}

#[test]
fn a_retry_count_beyond_the_budget_is_all_of_it_not_more() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let text = document("F001")
        .replace("status: in_progress", "status: failed")
        .replace("handoff_ready: true", "handoff_ready: true\nretry_count: 5");
    repo.stage("handoffs/F001.md", &text);

    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert_eq!(feedback.code, 4, "{}", feedback.stdout);
    assert!(
        feedback.stdout.contains(
            "Retries used: 2 of 2; `retry_count` says 5, more than `max_retries` allows\n"
        ),
        "{}",
        feedback.stdout
    );
    assert!(!feedback.stdout.contains("5 of 2"), "{}", feedback.stdout);
    // The count itself is the defect to fix, at its line.
    assert!(
        feedback
            .stdout
            .contains("`retry_count` must be between 0 and 2 (`max_retries`), not 5"),
        "{}",
        feedback.stdout
    );

    // The run blocks on it, and says so in the same terms.
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(
        (code, &verdict["status"]),
        (4, &"blocked".into()),
        "{verdict}"
    );
    let notes = verdict["notes"].to_string();
    assert!(
        notes.contains("handoff `handoffs/F001.md` is out of retries (2 of 2; `retry_count` says 5, more than `max_retries` allows): a person is needed"),
        "{notes}"
    );
    assert!(!notes.contains("5 of 2"), "{notes}");

    // Validation says it is invalid, at the count.
    let validate = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(validate.code, 1, "{}", validate.stdout);
    assert!(
        validate
            .stdout
            .contains("handoffs/F001.md:8:14 error `retry_count` must be between 0 and 2"),
        "{}",
        validate.stdout
    );
}

/// The `id` errors of the document at `path` in a verdict.
fn id_errors(verdict: &serde_json::Value, path: &str) -> Vec<String> {
    verdict["handoffs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == path)
        .unwrap_or_else(|| panic!("no report of {path}: {verdict}"))["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["field"] == "id")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_branch_that_adds_a_copy_with_its_originals_id_fails_its_range_and_files_runs() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", &document("F001"));
    repo.commit_all("the original");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("handoffs/F002.md", &document("F001"));
    repo.commit_all("a copy that kept its id");

    // Only the copy is in the range: it is held against the original at
    // the range's tip.
    let (code, verdict) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(code, 1, "{verdict}");
    let errors = id_errors(&verdict, "handoffs/F002.md");
    assert_eq!(errors.len(), 1, "{verdict}");
    assert!(
        errors[0].starts_with("`id: F001` is also the id of `handoffs/F001.md` (line 2)"),
        "{errors:?}"
    );

    // Named alone, as committed: the copy fails, the original does not.
    let (code, verdict) = repo.verdict(&["--files", "handoffs/F002.md"]);
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(
        id_errors(&verdict, "handoffs/F002.md").len(),
        1,
        "{verdict}"
    );
    let (code, verdict) = repo.verdict(&["--files", "handoffs/F001.md"]);
    assert_eq!(code, 0, "{verdict}");

    // A document the range only edits is not a new copy of anything.
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["checkout", "-q", "-b", "edit"]);
    repo.write(
        "handoffs/F001.md",
        &document("F001").replace("Parse the verdict", "Parse the whole verdict"),
    );
    repo.commit_all("an edit");
    let (code, verdict) = repo.verdict(&["--from-ref", "main", "--to-ref", "edit"]);
    assert_eq!(code, 0, "{verdict}");
}

/// The paths of a validation's reports.
fn validated(repo: &TestRepo, dir: &str, pattern: &str) -> (i32, Vec<String>, String) {
    let run = repo.phasegate_in(
        &repo.path().join(dir),
        &["handoff", "validate", "--format", "json", pattern],
    );
    if run.code == 2 {
        return (run.code, Vec::new(), run.stdout);
    }
    let json = run.json();
    let paths = json["handoffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect();
    (run.code, paths, run.stdout)
}

#[test]
fn a_pattern_the_shell_left_alone_is_expanded_as_handoff_paths_are() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", &document("F001"));
    repo.write("handoffs/my doc é.md", &document("F002"));
    repo.write("handoffs/deep/ü x.md", &document("F003"));
    repo.write("handoffs/notes.txt", "not a document");

    // `*` stays in its directory; names with spaces and accents match.
    let (code, paths, out) = validated(&repo, ".", "handoffs/*.md");
    assert_eq!(code, 0, "{out}");
    assert_eq!(paths, ["handoffs/F001.md", "handoffs/my doc é.md"]);
    // `**` crosses directories.
    let (code, paths, out) = validated(&repo, ".", "handoffs/**/*.md");
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        paths,
        [
            "handoffs/F001.md",
            "handoffs/deep/ü x.md",
            "handoffs/my doc é.md"
        ]
    );
    // From a subdirectory, as the shell would have expanded it there.
    let (code, paths, out) = validated(&repo, "handoffs", "*é.md");
    assert_eq!(code, 0, "{out}");
    assert_eq!(paths, ["handoffs/my doc é.md"]);

    // A file named like a pattern is that file.
    repo.write("handoffs/[draft] F004.md", &document("F004"));
    let (code, paths, out) = validated(&repo, ".", "handoffs/[draft] F004.md");
    assert_eq!(code, 0, "{out}");
    assert_eq!(paths, ["handoffs/[draft] F004.md"]);

    // A pattern that matches nothing says so, as a usage error.
    let (code, _, out) = validated(&repo, ".", "handoff/*.md");
    assert_eq!(code, 2, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .starts_with("no file matches `handoff/*.md` (no file has that name either)"),
        "{json}"
    );
}
