//! Handoff documents and feedback at the edges of the rules.

use crate::support::TestRepo;

/// `tests` passes in `implementation` and fails in `qa`; both phases lint.
const TWO_PHASES: &str = r#"[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]

[phases.qa]
checks = [ { name = "tests", shell = true, command = "echo 'e2e/login.py:9: error: login page times out'; exit 1" }, { name = "lint", command = "true" } ]
"#;

/// An implementation document whose checkpoints all pass.
fn implementation(id: &str) -> String {
    format!(
        "---\nid: {id}\nstage: implementation\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: true\nretry_count: 0\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n---\n"
    )
}

#[test]
fn feedback_holds_claims_against_the_newest_run_of_the_documents_phase() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    repo.write("handoffs/F1.md", &implementation("F1"));
    let (code, implementation_run) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 0, "{implementation_run:#}");
    // A qa run after it fails its own `tests`: no word on the
    // implementation's claim that its tests pass.
    let (code, qa_run) = repo.verdict(&["--phase", "qa"]);
    assert_eq!(code, 1, "{qa_run:#}");
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains("contradicted") && run.stdout.contains("Validation Passed"),
        "a qa run's failure contradicted an implementation claim:\n{}",
        run.stdout
    );
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F1.md"])
        .json();
    assert_eq!(
        json["last_run"]["run_id"], implementation_run["run_id"],
        "{json:#}"
    );
    assert!(json.get("no_run_of_phase").is_none(), "{json:#}");
}

#[test]
fn feedback_never_lets_another_phases_passing_run_confirm_a_claim() {
    let repo = TestRepo::new();
    // Now the implementation's tests fail, and a later qa run passes.
    repo.config(
        &TWO_PHASES
            .replace("command = \"true\" }, { name = \"lint\", command = \"true\" } ]\n\n[phases.qa]", "command = \"false\" }, { name = \"lint\", command = \"true\" } ]\n\n[phases.qa]")
            .replace("shell = true, command = \"echo 'e2e/login.py:9: error: login page times out'; exit 1\"", "command = \"true\""),
    );
    repo.write("handoffs/F1.md", &implementation("F1"));
    let (code, failing) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 1, "{failing:#}");
    let (code, passing) = repo.verdict(&["--phase", "qa"]);
    assert_eq!(code, 0, "{passing:#}");
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "`tests` failed in run `{}`",
            failing["run_id"].as_str().unwrap()
        )),
        "a qa run's pass hid the implementation's failing tests:\n{}",
        run.stdout
    );
}

#[test]
fn feedback_says_plainly_when_no_run_of_the_documents_phase_exists() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    repo.write("handoffs/F1.md", &implementation("F1"));
    // Before any run at all.
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert!(
        run.stdout
            .contains("no run of phase `implementation` is recorded, so no check has confirmed"),
        "{}",
        run.stdout
    );
    // Only a qa run: it is named, and it decides nothing.
    let (code, qa_run) = repo.verdict(&["--phase", "qa"]);
    assert_eq!(code, 1, "{qa_run:#}");
    let qa_id = qa_run["run_id"].as_str().unwrap();
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "no run of phase `implementation` is recorded (the newest run, `{qa_id}`, checked phase `qa`)"
        )) && run
            .stdout
            .contains("Run `phasegate run --phase implementation` before handing off"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("claim contradicted"), "{}", run.stdout);
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F1.md"])
        .json();
    assert_eq!(
        json["no_run_of_phase"],
        serde_json::json!({"phase": "implementation", "newest_run": qa_id, "newest_phase": "qa"}),
        "{json:#}"
    );
    assert!(json.get("last_run").is_none(), "{json:#}");
}

#[test]
fn stamp_takes_the_results_of_the_documents_phase_only() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    // Its tests not run yet.
    let doc = implementation("F1")
        .replace("handoff_ready: true", "handoff_ready: false")
        .replace(
            "tests_passing\n    status: pass",
            "tests_passing\n    status: skip",
        );
    repo.write("handoffs/F1.md", &doc);
    let (code, qa_run) = repo.verdict(&["--phase", "qa"]);
    assert_eq!(code, 1, "{qa_run:#}");
    // The qa run's failing `tests` is no failed implementation attempt.
    let run = repo.phasegate(&["handoff", "stamp", "handoffs/F1.md"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("no run of phase `implementation`")
            && run
                .stderr
                .contains("help: run `phasegate run --phase implementation` first"),
        "{}",
        run.stderr
    );
    assert_eq!(repo.read("handoffs/F1.md"), doc, "the document was changed");
    // A run of its phase after the qa run is the one stamped.
    let (code, v) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 0, "{v:#}");
    let (code, _) = repo.verdict(&["--phase", "qa"]);
    assert_eq!(code, 1);
    let run = repo.phasegate(&["handoff", "stamp", "handoffs/F1.md"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(v["run_id"].as_str().unwrap()),
        "{}",
        run.stdout
    );
    assert_eq!(repo.read("handoffs/F1.md"), implementation("F1"));
}

#[test]
fn a_stage_configured_to_require_no_checkpoint_is_ready_vacuously() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = []\n\n[handoff.checkpoints]\nimplementation = []\n",
    );
    let doc = |ready: &str| {
        format!("---\nid: F1\nstage: implementation\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: {ready}\ncheckpoints: []\n---\n")
    };
    repo.write("handoffs/F1.md", &doc("false"));
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "handoffs/F1.md"]);
    assert_eq!(
        run.code, 1,
        "`handoff_ready: false` went unchecked:\n{}",
        run.stdout
    );
    let errors = &run.json()["handoffs"][0]["errors"];
    assert_eq!(errors.as_array().unwrap().len(), 1, "{errors:#}");
    assert_eq!(
        (errors[0]["line"].as_u64(), errors[0]["column"].as_u64()),
        (Some(7), Some(16))
    );
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("stage `implementation` requires no checkpoint")
            && message.contains("set it to true"),
        "{message}"
    );
    repo.write("handoffs/F1.md", &doc("true"));
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F1.md"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

#[test]
fn an_unclosed_list_is_reported_at_its_opening_bracket() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = []\n");
    let doc = "---\nid: F1\nstage: implementation\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: false\ncheckpoints: [{name: tests_written, status: pass}\nretry_count: 0\n---\n";
    repo.write("handoffs/F1.md", doc);
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let error = &run.json()["handoffs"][0]["errors"][0];
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(8), Some(14)),
        "{error:#}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("the `[` list that opens here (line 8, column 14) is never closed")
            && message.contains("end it with `]`"),
        "{message}"
    );
    // People see the label on the bracket.
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F1.md"]);
    assert!(
        run.stdout.contains("handoffs/F1.md:8:14 error"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_run_of_another_phase_holds_no_claim_of_a_document_and_says_so() {
    let repo = TestRepo::new();
    // The qa phase's own tests fail and only warn.
    repo.config(&TWO_PHASES.replace("exit 1\" }", "exit 1\", on_failure = \"warn\" }"));
    repo.stage("handoffs/F1.md", &implementation("F1"));
    let (code, v) = repo.verdict(&["--phase", "qa"]);
    let handoff = &v["handoffs"][0];
    assert_eq!(
        handoff["valid"], true,
        "a qa check contradicted an implementation claim: {v:#}"
    );
    assert_eq!(code, 0, "{v:#}");
    let warning = handoff["warnings"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        warning.contains("this run checked phase `qa`, not `implementation`")
            && warning.contains("`tests_passing`, `no_lint_errors`")
            && warning.contains("phasegate run --phase implementation"),
        "{v:#}"
    );
    assert_eq!(handoff["warnings"][0]["line"], 3, "{v:#}");
    // The document's own phase still holds them.
    repo.config(&TWO_PHASES.replace(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"true\" }",
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"false\" }",
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["handoffs"][0]["valid"], false, "{v:#}");
}

#[test]
fn a_documents_id_cannot_forge_feedback_headings_or_drive_the_terminal() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    // A double-quoted id may hold any character as an escape.
    let doc = implementation("F1").replace(
        "id: F1",
        "id: \"F1\\e]0;owned\\a\\n## Validation Passed: F1\"",
    );
    repo.write(
        "handoffs/F1.md",
        &doc.replace("handoff_ready: true", "handoff_ready: false"),
    );
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{7}'),
        "{:?}",
        run.stdout
    );
    let headings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("## "))
        .collect();
    assert_eq!(headings.len(), 1, "{}", run.stdout);
    assert!(
        headings[0].starts_with("## Validation Failed: F1"),
        "{}",
        run.stdout
    );
}
