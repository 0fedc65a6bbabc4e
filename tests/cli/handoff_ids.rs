//! Handoff documents judged together in one run: shared ids, stages without a phase, paths that are not documents.

use crate::support::{output, TestRepo, BIN};

/// Both claims' checks run and pass, whatever is selected.
const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// An implementation document whose checkpoints all pass.
pub(crate) fn document(id: &str) -> String {
    format!(
        "---
id: {id}
stage: implementation
title: Parse the verdict
started_at: 2026-01-20T09:00:00Z
status: in_progress
handoff_ready: true
checkpoints:
  - name: tests_written
    status: pass
  - name: code_complete
    status: pass
  - name: tests_passing
    status: pass
  - name: no_lint_errors
    status: pass
---
"
    )
}

/// The `field line: message` of each of a report's `key` (errors or
/// warnings).
fn issues(report: &serde_json::Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|i| {
                    format!(
                        "{} {}: {}",
                        i["field"],
                        i["line"],
                        i["message"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The report of the document at `path` among a verdict's or a
/// validation's `handoffs`.
fn report<'a>(json: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    json["handoffs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == path)
        .unwrap_or_else(|| panic!("no report of {path}: {json}"))
}

#[test]
fn a_copy_that_kept_its_originals_id_stops_the_commit_at_its_id_line() {
    let repo = TestRepo::new();
    repo.config(GATE);
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    // `F002.md` was started as a copy of `F001.md`, and its id left as it
    // was; `F001.md` sorts after it and is still the original.
    repo.stage("handoffs/F001.md", &document("F001"));
    repo.stage("handoffs/F002.md", &document("F001"));

    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(verdict["status"], "failed");
    assert!(issues(report(&verdict, "handoffs/F001.md"), "errors").is_empty());
    let copy = report(&verdict, "handoffs/F002.md");
    assert_eq!(copy["valid"], false);
    assert_eq!(
        issues(copy, "errors"),
        ["\"id\" 2: `id: F001` is also the id of `handoffs/F001.md` (line 2), another `implementation` document: each document needs its own id, or a failure of one is read as the other's; give this one a new id (a copy keeps its original's)"]
    );
    let located = verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "handoff:id")
        .unwrap_or_else(|| panic!("no diagnostic at the id: {verdict}"));
    assert_eq!(located["file"], "handoffs/F002.md");
    assert_eq!(located["line"], 2);

    // The hook refuses the commit, and `handoff validate` says the same.
    let mut git = repo.command("git");
    git.args(["commit", "-qm", "two F001"])
        .env("PHASEGATE_BIN", BIN);
    let refused = output(&git.output().unwrap());
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("is also the id of `handoffs/F001.md`"),
        "{}",
        refused.stderr
    );
    let validated = repo.phasegate(&["handoff", "validate", "--format", "json"]);
    assert_eq!(validated.code, 1, "{}", validated.stdout);
    assert_eq!(
        issues(report(&validated.json(), "handoffs/F002.md"), "errors"),
        issues(copy, "errors")
    );

    // Given its own id, it goes through.
    repo.stage("handoffs/F002.md", &document("F002"));
    let accepted = output(
        &repo
            .command("git")
            .args(["commit", "-qm", "F002"])
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    );
    assert_eq!(accepted.code, 0, "{accepted:?}");
}

#[test]
fn one_id_at_two_stages_is_one_piece_of_work_moving_through_them() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let requirements = document("F001")
        .replace("stage: implementation", "stage: requirements")
        .replace("tests_written", "requirements_identified")
        .replace("code_complete", "impact_analyzed")
        .replace("tests_passing", "acceptance_criteria_defined")
        .replace("no_lint_errors", "no_open_blockers");
    repo.write("handoffs/F001-requirements.md", &requirements);
    repo.write("handoffs/F001-implementation.md", &document("F001"));
    repo.commit_all("F001");
    let run = repo.phasegate(&["handoff", "validate", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    for handoff in run.json()["handoffs"].as_array().unwrap() {
        assert!(issues(handoff, "errors").is_empty(), "{handoff}");
        assert!(issues(handoff, "warnings").is_empty(), "{handoff}");
    }
}

#[test]
fn a_file_named_after_another_id_is_a_warning_the_run_and_validate_agree_on() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.stage("handoffs/F002.md", &document("F001"));
    let warning = "\"id\" 2: `id: F001`, but the file is named `F002.md`: a document copied from another keeps the other's id; give this one its own (`id: F002`), or rename the file if the id is right";

    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict}");
    let judged = report(&verdict, "handoffs/F002.md");
    assert_eq!(judged["valid"], true);
    assert_eq!(issues(judged, "warnings"), [warning]);

    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F002.md",
    ]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        issues(report(&run.json(), "handoffs/F002.md"), "warnings"),
        [warning]
    );

    // A name that starts with the id, or says nothing of it, is no warning.
    for path in ["handoffs/F001-parse.md", "handoffs/parse-the-verdict.md"] {
        repo.write(path, &document("F001"));
        let run = repo.phasegate(&["handoff", "validate", "--format", "json", path]);
        assert!(
            issues(&run.json()["handoffs"][0], "warnings").is_empty(),
            "{path}: {}",
            run.stdout
        );
    }
}

/// The claim warnings of the one document a run judged, and the verdict.
fn claimed(
    repo: &TestRepo,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, serde_json::Value, Vec<String>) {
    let (code, verdict) = repo.verdict_with(args, env);
    let warnings = issues(report(&verdict, "handoffs/F001.md"), "warnings");
    (code, verdict, warnings)
}

#[test]
fn a_claim_whose_check_did_not_run_warns_at_the_checkpoint_instead_of_passing() {
    let repo = TestRepo::new();
    repo.stage("handoffs/F001.md", &document("F001"));
    let unverified = |why: &str| {
        format!("\"checkpoints.tests_passing\" 14: claim not verified: `tests_passing` says pass, but check `tests` verified nothing in this run ({why}), so nothing confirmed it: make `tests` run before handing off")
    };

    // `tests` runs only for Rust files, and only the document is staged.
    repo.config(&GATE.replace(
        "{ name = \"tests\", command = \"true\" }",
        "{ name = \"tests\", command = \"true\", files = [\"**/*.rs\"] }",
    ));
    let (code, verdict, warnings) = claimed(&repo, &[], &[]);
    assert_eq!(code, 0, "{verdict}");
    assert_eq!(verdict["status"], "warned", "{verdict}");
    assert_eq!(
        warnings,
        [unverified("no selected file matches its `files`")]
    );
    assert!(
        verdict["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("`handoffs/F001.md:14`: the claim `tests_passing` is not verified")),
        "{verdict}"
    );

    // Skipped by the environment, or switched off.
    repo.config(GATE);
    let (_, verdict, warnings) = claimed(&repo, &[], &[("PHASEGATE_SKIP", "tests")]);
    assert_eq!(verdict["status"], "warned", "{verdict}");
    assert_eq!(warnings, [unverified("skipped by PHASEGATE_SKIP")]);
    repo.config(&GATE.replace(
        "{ name = \"tests\", command = \"true\" }",
        "{ name = \"tests\", command = \"true\", on_failure = \"skip\" }",
    ));
    let (_, verdict, warnings) = claimed(&repo, &[], &[]);
    assert_eq!(verdict["status"], "warned", "{verdict}");
    assert_eq!(warnings, [unverified("disabled (on_failure = \"skip\")")]);

    // Not installed, under the profile that lets that through.
    repo.config(&GATE.replace(
        "command = \"true\" }, { name = \"lint\"",
        "command = \"phasegate-no-such-tool\" }, { name = \"lint\"",
    ));
    let (code, verdict, warnings) = claimed(&repo, &["--profile", "fast"], &[]);
    assert_eq!(code, 0, "{verdict}");
    assert_eq!(warnings.len(), 1, "{verdict}");
    assert!(
        warnings[0].contains("`phasegate-no-such-tool` is not installed"),
        "{warnings:?}"
    );

    // No such check in the phase at all.
    repo.config("[phases.implementation]\nchecks = [ { name = \"lint\", command = \"true\" } ]\n");
    let (_, verdict, warnings) = claimed(&repo, &[], &[]);
    assert_eq!(verdict["status"], "warned", "{verdict}");
    assert_eq!(
        warnings,
        [unverified(
            "phase `implementation` has no check `tests`; without one, remove the claim from `[handoff.claims]`"
        )]
    );

    // Both checks ran and passed: verified, nothing to say.
    repo.config(GATE);
    let (code, verdict, warnings) = claimed(&repo, &[], &[]);
    assert_eq!(
        (code, &verdict["status"]),
        (0, &serde_json::json!("passed")),
        "{verdict}"
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_resume_keeps_the_claim_a_kept_check_contradicted() {
    let repo = TestRepo::new();
    // `tests` fails, which only warns, so only the claim fails the run.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"false\", on_failure = \"warn\" }, { name = \"lint\", command = \"true\" } ]\n",
    );
    repo.stage("handoffs/F001.md", &document("F001"));
    let contradicted = "\"checkpoints.tests_passing\" 14: claim contradicted by check `tests`: `tests_passing` says pass, but `tests` failed in this run";
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(
        issues(report(&verdict, "handoffs/F001.md"), "errors"),
        [contradicted]
    );

    // Nothing changed: the resume keeps `tests` as it ended, and with it
    // the contradiction.
    let run = repo.phasegate(&["resume", "--format", "json"]);
    let resumed = run.json();
    assert_eq!(run.code, 1, "{resumed}");
    assert_eq!(resumed["status"], "failed");
    assert_eq!(
        issues(report(&resumed, "handoffs/F001.md"), "errors"),
        [contradicted]
    );
}
