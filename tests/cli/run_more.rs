//! `phasegate run` as an agent drives it: phases, handoffs among the files, and what it says when something is off.

use crate::support::TestRepo;

/// Two phases, each with one check that passes.
const TWO_PHASES: &str = r#"[phases.implementation]
checks = [ { name = "a", command = "true" } ]

[phases.qa]
checks = [ { name = "b", command = "true" } ]
"#;

/// A document of `stage`, in progress, with its `stage:` on line 3.
fn document(id: &str, stage: &str) -> String {
    format!(
        "---\nid: {id}\nstage: {stage}\ntitle: A change\nstarted_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nhandoff_ready: false\ncheckpoints: []\n---\n# Notes\n"
    )
}

#[test]
fn a_stage_no_phase_defines_is_refused_at_its_line_with_the_ways_out() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    repo.stage("handoffs/R1.md", &document("R1", "requirements"));

    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    for needed in [
        "`handoffs/R1.md:3` says `stage: requirements`",
        "[phases.requirements]",
        "phasegate.toml",
        "--phase implementation",
    ] {
        assert!(
            run.stderr.contains(needed),
            "no {needed:?} in:\n{}",
            run.stderr
        );
    }

    // The verdict points at the line, and the document is validated all
    // the same: one run tells everything there is to fix.
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    assert_eq!(v["error"]["kind"], "usage", "{v:#}");
    let problem = &v["error"]["problems"][0];
    assert_eq!(problem["file"], "handoffs/R1.md", "{v:#}");
    assert_eq!(problem["line"], 3, "{v:#}");
    assert_eq!(v["handoffs"][0]["path"], "handoffs/R1.md", "{v:#}");
    assert_eq!(v["handoffs"][0]["valid"], false, "{v:#}");

    // Either way out works.
    let (code, v) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 1, "the document is still invalid: {v:#}");
    assert_eq!(v["phase"], "implementation");
    repo.config(&format!(
        "{TWO_PHASES}\n[phases.requirements]\nchecks = []\n"
    ));
    let (code, v) = repo.verdict(&["--files", "handoffs/R1.md"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["phase"], "requirements", "{v:#}");
}

#[test]
fn documents_that_disagree_on_the_stage_are_named_at_their_stage_lines() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    repo.stage("handoffs/A.md", &document("A", "implementation"));
    // Its `stage:` is on line 4.
    repo.stage(
        "handoffs/B.md",
        &document("B", "qa").replacen("id: B\n", "id: B\ntitle: First\n", 1),
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`handoffs/A.md:3` says `stage: implementation`"),
        "{message}"
    );
    assert!(
        message.contains("`handoffs/B.md:4` says `stage: qa`"),
        "{message}"
    );
    assert!(message.contains("--phase"), "{message}");
    let places: Vec<(String, u64)> = v["error"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["file"].as_str().unwrap().to_string(),
                p["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("handoffs/A.md".to_string(), 3),
            ("handoffs/B.md".to_string(), 4)
        ]
    );
}

#[test]
fn a_check_of_another_phase_says_which_phase_has_it() {
    let repo = TestRepo::new();
    repo.config(TWO_PHASES);
    let (code, v) = repo.verdict(&["--check", "b"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("phase `qa`"), "{message}");
    assert!(message.contains("--phase qa --check b"), "{message}");
    assert!(!message.contains("did you mean `a`"), "{message}");
    // A name no phase has still gets the near miss.
    let (code, v) = repo.verdict(&["--check", "aa"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `a`"),
        "{v:#}"
    );
    // And the advice works.
    let (code, v) = repo.verdict(&["--phase", "qa", "--check", "b"]);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_multi_line_message_stays_inside_its_feedback_item() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"true\" }, { name = \"lint\", command = \"true\" } ]\n",
    );
    // YAML blocks whose lines look like Markdown headings and items.
    let doc = "---\nid: F1\nstage: implementation\ntitle: x\nstarted_at: 2026-01-01T10:00:00Z\nstatus: failed\nretry_count: 1\nhandoff_ready: false\nlast_failure: |\n  tests failed:\n  - test_a\n  # not a heading\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: fail\n    message: |\n      two tests fail\n\n      ### see below\n      - a list item\n  - name: no_lint_errors\n    status: pass\n---\n";
    repo.write("handoffs/F1.md", doc);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let md = &run.stdout;
    // Every line at the left margin is the feedback's own: a heading it
    // wrote, one of its items, or its prose; the document's lines are
    // indented into the item they belong to.
    for line in md.lines() {
        assert!(
            ![
                "### see below",
                "- a list item",
                "- test_a",
                "# not a heading"
            ]
            .contains(&line),
            "a line of the document escaped its item: {line:?} in\n{md}"
        );
    }
    assert_eq!(
        md.matches("\n### ").count(),
        1,
        "one checkpoint heading:\n{md}"
    );
    assert!(md.contains("- **Reason:**\n\n  ```text\n  two tests fail\n\n  ### see below\n  - a list item\n  ```\n"), "{md}");
    assert!(
        md.contains(
            "- **Details:**\n\n  ```text\n  tests failed:\n  - test_a\n  # not a heading\n  ```\n"
        ),
        "{md}"
    );
    assert!(md.contains("- **What to fix:**"), "{md}");
}

#[test]
fn phases_that_are_not_a_table_give_that_error_alone() {
    // Which phases exist is unknown then: the default phase and a
    // workflow's phase are not "unknown" on top of it.
    for toml in [
        "phases = []\n",
        "phases = []\n[gate]\ndefault_phase = \"implementation\"\n",
        "phases = \"implementation\"\n[workflows.quick.phases.implementation]\nchecks = []\n",
    ] {
        let repo = TestRepo::new();
        repo.config(toml);
        let run = repo.phasegate(&["run"]);
        assert_eq!(run.code, 2, "{toml}{}", run.stderr);
        assert!(
            run.stderr.contains("must be a table"),
            "{toml}{}",
            run.stderr
        );
        assert!(!run.stderr.contains("phase `"), "{toml}{}", run.stderr);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2);
        assert_eq!(
            v["error"]["problems"].as_array().unwrap().len(),
            1,
            "{toml}{v:#}"
        );
    }
}

#[test]
fn a_check_the_workflow_leaves_out_says_how_to_run_it() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n\n[workflows.quick.phases.implementation]\nchecks = []\n",
    );
    let (code, v) = repo.verdict(&["--workflow", "quick", "--check", "c"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("workflow `quick`"), "{message}");
    assert!(message.contains("without `--workflow quick`"), "{message}");
    assert!(!message.contains("none is defined"), "{message}");
    assert_eq!(repo.verdict(&["--check", "c"]).0, 0);
}

#[test]
fn feedback_names_the_check_a_checkpoint_is_claimed_by() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"unit\", command = \"false\" }, { name = \"clippy\", command = \"true\" } ]\n\n[handoff.claims]\ntests_passing = \"unit\"\nno_lint_errors = \"clippy\"\n",
    );
    let doc = "---\nid: F\nstage: implementation\ntitle: x\nstarted_at: 2026-01-01T10:00:00Z\nstatus: failed\nretry_count: 0\nhandoff_ready: false\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: fail\n  - name: no_lint_errors\n    status: fail\n---\n";
    repo.stage("handoffs/F.md", doc);
    assert_eq!(repo.phasegate(&["run"]).code, 1);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("`phasegate run --check unit`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("`phasegate run --check clippy`"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("--check tests"), "{}", run.stdout);
    assert!(!run.stdout.contains("--check lint"), "{}", run.stdout);
    // The advice runs.
    let (code, v) = repo.verdict(&["--check", "unit"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["checks"].as_array().unwrap().len(), 1, "{v:#}");
}
