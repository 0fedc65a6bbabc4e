//! Handoff feedback on unverified claims, ids shared with committed documents, and a push's streak by ref.

use crate::handoff_ids::document;
use crate::support::{git_pushing, pushed_repo, recorded_verdicts, TestRepo};

/// Both claims' checks run and pass, whatever is selected.
const GATE: &str = r#"[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// `handoff feedback` on `handoffs/F001.md`: exit code, markdown, JSON.
pub(crate) fn feedback(repo: &TestRepo) -> (i32, String, serde_json::Value) {
    let markdown = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    let json = repo.phasegate(&[
        "handoff",
        "feedback",
        "--format",
        "json",
        "handoffs/F001.md",
    ]);
    assert_eq!(markdown.code, json.code, "{}", json.stdout);
    (markdown.code, markdown.stdout, json.json())
}

#[test]
fn feedback_on_a_claim_the_last_run_verified_nothing_of_says_what_to_run() {
    let repo = TestRepo::new();
    repo.stage("handoffs/F001.md", &document("F001"));

    // `tests` runs only for Rust files, and only the document is staged:
    // the run warns on `tests_passing`, and so must the feedback.
    repo.config(&GATE.replace(
        "{ name = \"tests\", command = \"true\" }",
        "{ name = \"tests\", command = \"true\", files = [\"**/*.rs\"] }",
    ));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(
        (code, &verdict["status"]),
        (0, &"warned".into()),
        "{verdict}"
    );
    let run_id = verdict["run_id"].as_str().unwrap();
    let (code, markdown, json) = feedback(&repo);
    assert_eq!(code, 1, "{markdown}");
    assert!(
        markdown.starts_with("## Validation Failed: F001 (implementation)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("### Claim `tests_passing` not verified by check `tests` (line 14)"),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!("- **Reason:** claim not verified: `tests_passing` says pass, but check `tests` verified nothing in run `{run_id}` (no selected file matches its `files`), so nothing confirmed it")),
        "{markdown}"
    );
    assert!(
        markdown.contains("`phasegate run --all-files --check tests`"),
        "{markdown}"
    );
    // It did not fail: nothing says it did.
    assert!(!markdown.contains("failed in the last run"), "{markdown}");
    let items = json["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{json}");
    assert_eq!(items[0]["kind"], "unverified");
    assert_eq!(items[0]["name"], "tests_passing");
    assert_eq!(items[0]["check"], "tests");
    assert_eq!(items[0]["line"], 14);

    // Left out by `--check`: run it.
    repo.config(GATE);
    let (code, verdict) = repo.verdict(&["--check", "lint"]);
    assert_eq!(
        (code, &verdict["status"]),
        (0, &"warned".into()),
        "{verdict}"
    );
    let (code, markdown, _) = feedback(&repo);
    assert_eq!(code, 1, "{markdown}");
    assert!(
        markdown.contains("(it was not among the checks the run was asked to run)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("run it: `phasegate run --check tests`"),
        "{markdown}"
    );

    // Skipped by the environment.
    let run = repo.phasegate_with(&["run"], &[("PHASEGATE_SKIP", "tests")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (code, markdown, _) = feedback(&repo);
    assert_eq!(code, 1, "{markdown}");
    assert!(
        markdown.contains("(skipped by PHASEGATE_SKIP)")
            && markdown.contains("without `PHASEGATE_SKIP` naming it"),
        "{markdown}"
    );

    // The phase has no such check.
    repo.config("[phases.implementation]\nchecks = [ { name = \"lint\", command = \"true\" } ]\n");
    assert_eq!(repo.phasegate(&["run"]).code, 0);
    let (code, markdown, _) = feedback(&repo);
    assert_eq!(code, 1, "{markdown}");
    assert!(
        markdown.contains("(phase `implementation` has no check `tests`)")
            && markdown.contains("remove the claim from `[handoff.claims]`"),
        "{markdown}"
    );

    // Once both checks ran and passed, the claims hold.
    repo.config(GATE);
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(
        (code, &verdict["status"]),
        (0, &"passed".into()),
        "{verdict}"
    );
    let (code, markdown, json) = feedback(&repo);
    assert_eq!(code, 0, "{markdown}");
    assert!(
        markdown.starts_with("## Validation Passed: F001"),
        "{markdown}"
    );
    assert!(json["items"].as_array().unwrap().is_empty(), "{json}");
}

/// A check failing with the same compiler error whatever is checked.
const STUCK: &str = "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"echo 'a.c:1:1: error: stuck'; exit 1\" } ]\n";

#[test]
fn a_pushed_branch_s_failures_count_on_that_branch_not_the_one_checked_out() {
    let (repo, _remote) = pushed_repo(STUCK);
    // Two failed attempts on `feature`, made while it is checked out.
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("b");
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{v:#}");
    }
    // The third is its push, from `main`: the same errors a third time
    // on `feature`, which a person must now look at.
    repo.git(&["checkout", "-q", "main"]);
    let pushed = git_pushing(&repo, &["push", "-q", "origin", "feature"]);
    assert_ne!(pushed.code, 0, "{pushed:?}");
    let last = recorded_verdicts(&repo).pop().unwrap();
    assert_eq!(last["selection"]["pushed_ref"], "refs/heads/feature");
    assert_eq!(last["status"], "blocked", "{last:#}");
    assert!(
        last["notes"]
            .to_string()
            .contains("failed 3 attempts in a row"),
        "{:#}",
        last["notes"]
    );

    // Nor does a push of `feature` continue the streak of `main`, which
    // is checked out: `main`'s first failure is no streak.
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "one failure on `main` is no streak: {v:#}");
}

#[test]
fn a_staged_copy_of_a_committed_document_is_stopped_at_its_id() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", &document("F001"));
    repo.write("handoffs/F003.md", &document("F003"));
    repo.commit_all("F001 and F003");

    // `F002.md` started as a copy of the committed `F001.md`, its id left
    // as it was, and is staged alone.
    repo.stage("handoffs/F002.md", &document("F001"));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict}");
    let copy = &verdict["handoffs"][0];
    assert_eq!(copy["path"], "handoffs/F002.md");
    assert_eq!(copy["valid"], false, "{verdict}");
    let error = &copy["errors"][0];
    assert_eq!((&error["field"], &error["line"]), (&"id".into(), &2.into()));
    assert_eq!(
        error["message"],
        "`id: F001` is also the id of `handoffs/F001.md` (line 2), another `implementation` document, already committed: each document needs its own id, or a failure of one is read as the other's; give this new one an id of its own (a copy keeps its original's)"
    );

    // Given its own id, it goes through; editing a committed document
    // compares nothing more.
    repo.stage("handoffs/F002.md", &document("F002"));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict}");
    repo.commit_all("F002");
    repo.stage(
        "handoffs/F003.md",
        &document("F003").replace("Parse", "Read"),
    );
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict}");

    // A document moved to a new name keeps its id: the old name is gone
    // from the index, and with it the clash.
    repo.git(&["mv", "handoffs/F003.md", "handoffs/F003-read.md"]);
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict}");
}

#[test]
fn feedback_on_a_stage_the_configuration_has_no_phase_for_says_to_add_it() {
    let repo = TestRepo::new();
    // Only `implementation` is configured, and a run of it is recorded.
    repo.config(GATE);
    repo.write("a.txt", "a\n");
    repo.commit_all("init");
    assert_eq!(repo.phasegate(&["run", "--all-files"]).code, 0);
    let qa = document("F001")
        .replace("stage: implementation", "stage: qa")
        .replace("tests_written", "criteria_verified")
        .replace("code_complete", "no_critical_bugs")
        .replace("no_lint_errors", "docs_updated");
    repo.write("handoffs/F001.md", &qa);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert!(
        run.stdout.contains("**Unverified:** `phasegate.toml` has no phase `qa`, so no run can check what the checkpoints claim. Add `[phases.qa]` with the checks that verify them, or correct the document's `stage`."),
        "{}",
        run.stdout
    );
    let json = repo
        .phasegate(&[
            "handoff",
            "feedback",
            "--format",
            "json",
            "handoffs/F001.md",
        ])
        .json();
    assert_eq!(json["no_run_of_phase"]["not_configured"], true, "{json:#}");
    // The advice it replaces would end in a usage error.
    assert!(!run.stdout.contains("--phase qa"), "{}", run.stdout);
    assert_eq!(repo.phasegate(&["run", "--phase", "qa"]).code, 2);
}

#[test]
fn validate_names_a_pattern_that_matched_nothing_as_one() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", &document("F001"));
    // Matching nothing, a pattern reaches phasegate as written, and
    // matches nothing there either.
    let run = repo.phasegate(&["handoff", "validate", "handoff/*.md"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: no file matches `handoff/*.md` (no file has that name either): check the pattern (`*` stays within one directory, `**` crosses them), or give no path for every tracked document\n"
    );
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F01.md"]);
    assert_eq!(
        run.stderr,
        "error: no such file: `handoffs/F01.md`; check the path\n"
    );
}
