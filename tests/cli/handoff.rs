//! Handoff documents from the command line: validate, feedback, and runs
//! whose phase, verdict and claims come from them.

use crate::support::TestRepo;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/fixtures/handoff/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const GATE: &str = r#"[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]

[phases.qa]
checks = [ { name = "qa-tests", command = "true" } ]
"#;

#[test]
fn validate_prints_the_documented_json_and_exits_1_on_an_invalid_document() {
    let repo = TestRepo::new();
    repo.stage("handoffs/good.md", &fixture("valid-complete.md"));
    repo.stage("handoffs/bad.md", &fixture("ready-but-skip.md"));
    let run = repo.phasegate(&["handoff", "validate", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    let list = v["handoffs"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    let bad = list
        .iter()
        .find(|h| h["path"] == "handoffs/bad.md")
        .unwrap();
    assert_eq!(bad["valid"], false);
    assert_eq!(bad["id"], "F011");
    assert_eq!(bad["stage"], "implementation");
    assert_eq!(bad["escalate"], false);
    let error = &bad["errors"][0];
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(7), Some(16))
    );
    assert_eq!(error["field"], "handoff_ready");

    let run = repo.phasegate(&["handoff", "validate", "handoffs/good.md"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run
        .stdout
        .contains("✓ handoffs/good.md (F001, implementation)"));
    let run = repo.phasegate(&["handoff", "validate", "handoffs/bad.md"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("handoffs/bad.md:7:16"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_run_takes_its_phase_from_the_handoff_and_fails_on_an_invalid_one() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.stage("handoffs/F003.md", &fixture("crlf-bom.md"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["phase"], "qa");
    assert_eq!(v["handoffs"][0]["valid"], true);

    repo.stage("handoffs/F011.md", &fixture("ready-but-skip.md"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "the documents disagree on the stage: {v:#}");
    let (code, v) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 1, "{v:#}");
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "handoffs/F011.md")
        .unwrap();
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(7), Some(16))
    );
}

#[test]
fn a_document_out_of_retries_blocks_the_run_for_a_person() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.stage("handoffs/F016.md", &fixture("escalates.md"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["status"], "blocked");
    assert_eq!(v["next"], "escalate");
    assert_eq!(v["handoffs"][0]["escalate"], true);

    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F016.md"]);
    assert_eq!(run.code, 4);
    assert!(
        run.stdout.contains("## Validation Failed: F016"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Retries used: 3 of 3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("### Checkpoint `tests_passing`"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_claim_the_checks_contradict_fails_at_the_checkpoint_line() {
    let repo = TestRepo::new();
    repo.config(&GATE.replace(
        r#"{ name = "tests", command = "true" }"#,
        r#"{ name = "tests", command = "false" }"#,
    ));
    repo.stage("handoffs/F001.md", &fixture("valid-complete.md"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "handoff:checkpoints.tests_passing")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(d["line"], 16);
    assert!(d["message"]
        .as_str()
        .unwrap()
        .contains("claim contradicted by check `tests`"));
}

#[test]
fn feedback_as_json_lists_what_to_fix() {
    let repo = TestRepo::new();
    repo.write("handoffs/F002.md", &fixture("valid-in-progress.md"));
    let run = repo.phasegate(&[
        "handoff",
        "feedback",
        "handoffs/F002.md",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1);
    let v = run.json();
    assert_eq!(v["attempt"], 1);
    let names: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["code_complete", "tests_passing"]);
    assert_eq!(v["items"][0]["reason"], "the parser is half done");
}

#[test]
fn stamp_writes_the_last_runs_results_and_nothing_else() {
    let repo = TestRepo::new();
    repo.config(&GATE.replace(
        r#"{ name = "tests", command = "true" }"#,
        r#"{ name = "tests", command = "false" }"#,
    ));
    let doc = fixture("valid-in-progress.md");
    repo.stage("handoffs/F002.md", &doc);
    let run = repo.phasegate(&["handoff", "stamp", "handoffs/F002.md"]);
    assert_eq!(run.code, 2, "no run yet: {}", run.stderr);
    assert_eq!(repo.verdict(&[]).0, 1);
    let run = repo.phasegate(&["handoff", "stamp", "handoffs/F002.md"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stamped = repo.read("handoffs/F002.md");
    let expected = doc
        .replace("  - name: tests_passing\n    status: skip", "  - name: tests_passing\n    status: fail")
        .replacen(
            "    status: pass\n---\n",
            "    status: pass\nretry_count: 1\nlast_failure: \"phasegate.toml:2 check-failed check `tests` failed (exit 1); it printed nothing (tests)\"\n---\n",
            1,
        );
    assert_eq!(stamped, expected);
}

#[test]
fn the_human_report_lists_the_documents_and_their_problems() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.stage("handoffs/F011.md", &fixture("ready-but-skip.md"));
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(repo.redact(&run.stdout));
}

#[test]
fn claims_add_to_the_defaults_and_a_mistaken_claim_is_a_configuration_error() {
    // A claim of its own keeps the default ones: `tests_passing` is still
    // checked against `tests`.
    let repo = TestRepo::new();
    repo.config(&format!(
        "{}\n[handoff.claims]\ncode_complete = \"lint\"\n",
        GATE.replace(
            r#"{ name = "tests", command = "true" }"#,
            r#"{ name = "tests", command = "false" }"#,
        )
    ));
    repo.stage("handoffs/F001.md", &fixture("valid-complete.md"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v.to_string()
            .contains("claim contradicted by check `tests`"),
        "{v:#}"
    );

    for (claims, said) in [
        ("tests_pasing = \"tests\"", "did you mean `tests_passing`?"),
        ("tests_passing = \"tset\"", "did you mean `tests`?"),
    ] {
        let repo = TestRepo::new();
        repo.config(&format!("{GATE}\n[handoff.claims]\n{claims}\n"));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2, "{claims}: {v:#}");
        assert!(v["error"]["problems"][0]["line"].as_u64().is_some());
        assert!(v.to_string().contains(said), "{claims}: {v:#}");
    }
}

#[test]
fn feedback_agrees_with_the_run_on_blocked_documents_and_contradicted_claims() {
    // A blocked document waits for a person: feedback says so, exit 4.
    let repo = TestRepo::new();
    repo.config(GATE);
    let blocked = fixture("valid-complete.md")
        .replace(
            "status: complete",
            "status: blocked\nblock_reason: needs_human_input\nblock_details: Which auth?",
        )
        .replace("completed_at: 2026-11-21T17:30:00+01:00\n", "");
    repo.write("handoffs/F001.md", &blocked);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("Blocked") && run.stdout.contains("Which auth?"),
        "{}",
        run.stdout
    );

    // The last run found `tests_passing` contradicted: feedback does too.
    let repo = TestRepo::new();
    repo.config(&GATE.replace(
        r#"{ name = "tests", command = "true" }"#,
        r#"{ name = "tests", command = "false" }"#,
    ));
    repo.stage("handoffs/F001.md", &fixture("valid-complete.md"));
    let (code, _) = repo.verdict(&[]);
    assert_eq!(code, 1);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F001.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("claim contradicted by check `tests`"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_byte_that_is_not_utf8_is_placed_and_only_the_frontmatter_must_be_text() {
    let repo = TestRepo::new();
    let body = format!("{}\nbody \u{0}", fixture("valid-complete.md"));
    let mut bytes = body.into_bytes();
    bytes.pop();
    bytes.push(0xe9);
    std::fs::create_dir_all(repo.path().join("handoffs")).unwrap();
    std::fs::write(repo.path().join("handoffs/body.md"), &bytes).unwrap();
    std::fs::write(
        repo.path().join("handoffs/head.md"),
        b"---\nid: F\xe91\n---\n",
    )
    .unwrap();
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/body.md",
        "handoffs/head.md",
    ]);
    let v = run.json();
    let body = &v["handoffs"][0];
    assert_eq!(body["valid"], true, "{v:#}");
    assert!(
        body["warnings"].to_string().contains("not valid UTF-8"),
        "{v:#}"
    );
    let head = &v["handoffs"][1];
    assert_eq!(head["valid"], false);
    assert_eq!(
        (
            head["errors"][0]["line"].as_u64(),
            head["errors"][0]["column"].as_u64()
        ),
        (Some(2), Some(6))
    );

    // A byte order mark is not a column an editor shows.
    std::fs::write(
        repo.path().join("handoffs/bom.md"),
        b"\xef\xbb\xbfid\xe9: x\n---\n",
    )
    .unwrap();
    let v = repo
        .phasegate(&["handoff", "validate", "--format", "json", "handoffs/bom.md"])
        .json();
    let error = &v["handoffs"][0]["errors"][0];
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(1), Some(3)),
        "{v:#}"
    );
}

#[test]
fn a_document_path_that_is_not_there_is_a_usage_error() {
    let repo = TestRepo::new();
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("no such file: `handoffs/F001.md`"),
        "{}",
        run.stderr
    );
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "nope.md"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"].to_string().contains("nope.md"));
    let run = repo.phasegate(&["handoff", "feedback", "nope.md"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no such file"), "{}", run.stderr);
    // With no path, the tracked documents; an untracked one is not among
    // them, and the answer says how to make it one.
    repo.write("handoffs/F002.md", "---\nid: F002\n---\n");
    let run = repo.phasegate(&["handoff", "validate"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("`git add` a new one"), "{}", run.stdout);
}

#[test]
fn a_run_reads_a_staged_document_as_bytes_and_places_what_is_not_utf8() {
    let repo = TestRepo::new();
    repo.config(GATE);
    let text = fixture("valid-complete.md")
        .replace("title: Parse the verdict", "title: Parse the v\u{0}rdict");
    let bytes: Vec<u8> = text
        .bytes()
        .map(|b| if b == 0 { 0xe9 } else { b })
        .collect();
    std::fs::create_dir_all(repo.path().join("handoffs")).unwrap();
    std::fs::write(repo.path().join("handoffs/F001.md"), &bytes).unwrap();
    repo.git(&["add", "handoffs/F001.md"]);

    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let document = &v["handoffs"][0];
    assert_eq!(document["valid"], false, "{v:#}");
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "handoffs/F001.md")
        .unwrap();
    assert!(
        d["message"].as_str().unwrap().contains("not valid UTF-8"),
        "{d:#}"
    );
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(4), Some(19))
    );
}

#[test]
fn feedback_never_tells_a_document_out_of_retries_to_proceed_or_to_try_again() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // Failed with its budget spent, though every checkpoint passes: a
    // person is needed (exit 4), so the markdown must not say "proceed".
    let passing = fixture("escalates.md")
        .replace("handoff_ready: false", "handoff_ready: true")
        .replace(
            "    status: fail\n    message: 2 tests fail",
            "    status: pass",
        );
    repo.write("handoffs/F016.md", &passing);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F016.md"]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(!run.stdout.contains("may proceed"), "{}", run.stdout);
    assert!(
        run.stdout.contains("Retries used: 3 of 3") && run.stdout.contains("Escalation"),
        "{}",
        run.stdout
    );

    // Still in progress with its budget spent: there is no attempt 4 of 3.
    let in_progress = fixture("escalates.md").replace("status: failed", "status: in_progress");
    repo.write("handoffs/F016.md", &in_progress);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F016.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!run.stdout.contains("attempt 4 of 3"), "{}", run.stdout);
    assert!(
        run.stdout.contains("Retries used: 3 of 3"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_empty_paths_list_means_no_handoff_documents() {
    let repo = TestRepo::new();
    repo.config(&format!("{GATE}[handoff]\npaths = []\n"));
    repo.stage("handoffs/F011.md", &fixture("ready-but-skip.md"));
    let (code, v) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 0, "the document is not read as a handoff: {v:#}");
    assert_eq!(v["handoffs"], serde_json::json!([]), "{v:#}");

    // The default globs find it when `paths` is left out.
    repo.config(GATE);
    let (code, v) = repo.verdict(&["--phase", "implementation"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["handoffs"][0]["path"], "handoffs/F011.md");
}

#[test]
fn outside_a_repository_the_documents_must_be_named() {
    let dir = TestRepo::plain();
    dir.write("handoffs/F001.md", "---\nid: F001\nstage: nonsense\n---\n");
    let run = dir.phasegate(&["handoff", "validate"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("not in a git repository, so no handoff document is tracked"),
        "{}",
        run.stderr
    );
    let run = dir.phasegate(&["handoff", "validate", "--format", "json"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"]
        .to_string()
        .contains("name the documents to validate"));
    // Named, it is validated there too.
    let run = dir.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("nonsense"), "{}", run.stdout);
}

#[test]
fn an_index_that_cannot_be_read_is_said_not_taken_for_no_documents() {
    let repo = TestRepo::new();
    repo.write("handoffs/F001.md", "---\nid: F001\n---\n");
    repo.git(&["add", "-A"]);
    std::fs::write(repo.path().join(".git/index"), b"DIRC garbage").unwrap();
    let run = repo.phasegate(&["handoff", "validate"]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("failed to list the tracked files"),
        "{}",
        run.stderr
    );
    let run = repo.phasegate(&["handoff", "validate", "--format", "json"]);
    assert_eq!(run.code, 3);
    assert!(run.json()["error"].is_string(), "{}", run.stdout);
}

#[test]
fn a_timestamp_that_is_not_iso_8601_is_an_error_at_its_value_not_a_crash() {
    let repo = TestRepo::new();
    // `+1€` once made the parser slice inside the `€`; `+-1` was read as
    // an offset of minus one hour.
    repo.stage("handoffs/F019.md", &fixture("bad-timestamp.md"));
    let run = repo.phasegate(&[
        "handoff",
        "validate",
        "--format",
        "json",
        "handoffs/F019.md",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let v = run.json();
    let errors: Vec<_> = v["handoffs"][0]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["line"].as_u64().unwrap(),
                e["column"].as_u64().unwrap(),
                e["field"].as_str().unwrap().to_string(),
                e["message"]
                    .as_str()
                    .unwrap()
                    .contains("is not an ISO 8601 timestamp"),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            (5, 13, "started_at".to_string(), true),
            (6, 15, "completed_at".to_string(), true)
        ],
        "{v:#}"
    );

    // A sign in place of a digit is refused too.
    let doc = fixture("valid-in-progress.md");
    let start = doc.lines().find(|l| l.starts_with("started_at:")).unwrap();
    repo.write(
        "handoffs/F019.md",
        &doc.replace(start, "started_at: 2026-11-20T+9:+0Z"),
    );
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F019.md"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("is not an ISO 8601 timestamp (`2026-11-20T+9:+0Z`)"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_tab_in_the_indentation_is_reported_at_the_tab() {
    let repo = TestRepo::new();
    repo.stage("handoffs/F020.md", &fixture("tab-indented.md"));
    repo.stage(
        "handoffs/F1.md",
        "---\nid: F1\n\tstage: implementation\n---\n",
    );
    let run = repo.phasegate(&["handoff", "validate", "--format", "json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let v = run.json();
    for (path, line) in [("handoffs/F020.md", 11), ("handoffs/F1.md", 3)] {
        let handoff = v["handoffs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["path"] == path)
            .unwrap();
        let error = &handoff["errors"][0];
        assert_eq!(
            (error["line"].as_u64(), error["column"].as_u64()),
            (Some(line), Some(1)),
            "{path}: {v:#}"
        );
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("indent with spaces, not tabs"),
            "{path}: {v:#}"
        );
    }
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F1.md"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("handoffs/F1.md:3:1"), "{}", run.stdout);
}

#[test]
fn a_checkpoint_required_twice_is_a_configuration_error() {
    let repo = TestRepo::new();
    repo.config(&format!(
        "{GATE}\n[handoff.checkpoints]\nimplementation = [\"tests_written\", \"tests_written\"]\n"
    ));
    repo.stage("handoffs/F001.md", &fixture("valid-complete.md"));
    let run = repo.phasegate(&["handoff", "validate"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("checkpoint `tests_written` is listed twice for `implementation`"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("phasegate.toml:8:36"), "{}", run.stderr);
}

#[test]
fn a_directory_named_as_a_document_is_a_usage_error() {
    let repo = TestRepo::new();
    repo.write("handoffs/F001.md", "---\nid: F001\n---\n");
    let run = repo.phasegate(&["handoff", "validate", "handoffs"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("`handoffs` is a directory, not a document"),
        "{}",
        run.stderr
    );
    let run = repo.phasegate(&["handoff", "feedback", "--format", "json", "handoffs"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.json()["error"].to_string().contains("is a directory"));
}

/// The implementation document an agent starts with: every checkpoint
/// claimed, nothing failed yet.
fn claiming_all(id: &str) -> String {
    format!(
        "---\nid: {id}\nstage: implementation\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\nstatus: in_progress\nhandoff_ready: true\nretry_count: 0\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n---\n"
    )
}

/// A frontmatter field's value as written (`retry_count: 2` → `2`).
fn field(doc: &str, name: &str) -> String {
    doc.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no `{name}` in:\n{doc}"))
        .to_string()
}

#[test]
fn the_run_and_stamp_loop_spends_the_retry_budget_and_then_escalates() {
    let repo = TestRepo::new();
    repo.config(
        r#"[gate]
default_phase = "implementation"
max_retries = 2
escalate_after = 100

[phases.implementation]
checks = [ { name = "tests", command = "false" }, { name = "lint", command = "true" } ]
"#,
    );
    repo.write("handoffs/F1.md", &claiming_all("F1"));
    // The runs' exit codes, and the document each stamp leaves: the count
    // of failed attempts, capped at `max_retries`, and `status: failed`
    // from the stamp that spends the budget.
    let expected = [
        (1, "1", "in_progress"),
        (1, "2", "failed"),
        (4, "2", "failed"),
        (4, "2", "failed"),
    ];
    for (i, (code, retries, status)) in expected.into_iter().enumerate() {
        repo.git(&["add", "-A"]);
        let run = repo.phasegate(&["run"]);
        assert_eq!(
            run.code,
            code,
            "run {}: {}{}",
            i + 1,
            run.stdout,
            run.stderr
        );
        let stamp = repo.phasegate(&["handoff", "stamp", "handoffs/F1.md"]);
        assert_eq!(stamp.code, 0, "stamp {}: {}", i + 1, stamp.stderr);
        let doc = repo.read("handoffs/F1.md");
        assert_eq!(
            field(&doc, "retry_count"),
            retries,
            "stamp {}:\n{doc}",
            i + 1
        );
        assert_eq!(field(&doc, "status"), status, "stamp {}:\n{doc}", i + 1);
        assert_eq!(
            (status == "failed"),
            stamp.stdout.contains("out of retries (2 of 2)"),
            "{}",
            stamp.stdout
        );
        let valid = repo.phasegate(&["handoff", "validate", "handoffs/F1.md"]);
        assert_eq!(
            valid.code,
            0,
            "stamp {} wrote an invalid document: {}",
            i + 1,
            valid.stdout
        );
    }
    let (code, v) = repo.verdict(&[]);
    assert_eq!(
        (v["status"].as_str(), v["next"].as_str()),
        (Some("blocked"), Some("escalate"))
    );
    assert_eq!(code, 4);
    let doc = repo.read("handoffs/F1.md");
    assert!(
        field(&doc, "last_failure").contains("check `tests` failed"),
        "the check's failure, not the document's own: {doc}"
    );
    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(feedback.code, 4, "{}", feedback.stdout);
    assert!(
        feedback.stdout.contains("Retries used: 2 of 2")
            && feedback.stdout.contains("hand this to a person"),
        "{}",
        feedback.stdout
    );
}

#[test]
fn stamping_the_same_run_twice_counts_its_failure_once() {
    let repo = TestRepo::new();
    repo.config(&GATE.replace(
        r#"{ name = "tests", command = "true" }"#,
        r#"{ name = "tests", command = "false" }"#,
    ));
    repo.stage("handoffs/F1.md", &claiming_all("F1"));
    assert_eq!(repo.phasegate(&["run"]).code, 1);
    for _ in 0..2 {
        let stamp = repo.phasegate(&["handoff", "stamp", "handoffs/F1.md"]);
        assert_eq!(stamp.code, 0, "{}", stamp.stderr);
    }
    let doc = repo.read("handoffs/F1.md");
    assert_eq!(field(&doc, "retry_count"), "1", "{doc}");
}

/// A `tests` check that fails with one located error.
const FAILING_TESTS: &str = r#"[phases.implementation]
checks = [ { name = "tests", command = "sh -c 'echo \"t.py:3: error: expected 4, got 5\"; exit 1'" }, { name = "lint", command = "true" } ]
"#;

#[test]
fn feedback_on_a_contradicted_claim_says_to_fix_the_checks_errors_not_the_claim() {
    let repo = TestRepo::new();
    repo.config(FAILING_TESTS);
    repo.stage("handoffs/F1.md", &claiming_all("F1"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let run_id = v["run_id"].as_str().unwrap();
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let fix = run
        .stdout
        .lines()
        .find(|l| l.starts_with("- **What to fix:**"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        fix.contains("make check `tests` pass, starting with the first error it reported")
            && fix.contains("set `tests_passing` to fail"),
        "{}",
        run.stdout
    );
    assert!(!fix.contains("edit line"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("failed in run `{run_id}`"))
            && run
                .stdout
                .contains(&format!(".git/phasegate/runs/{run_id}/tests.log")),
        "{}",
        run.stdout
    );

    let run = repo.phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F1.md"]);
    let item = &run.json()["items"][0];
    assert_eq!(item["kind"], "claim", "{}", run.stdout);
    assert_eq!(item["check"], "tests");
    assert_eq!(
        item["errors"],
        serde_json::json!(["t.py:3: expected 4, got 5"])
    );
}

#[test]
fn feedback_holds_a_document_written_after_the_run_to_that_runs_failed_checks() {
    let repo = TestRepo::new();
    repo.config(FAILING_TESTS);
    repo.stage("handoffs/F1.md", &claiming_all("F1"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    // The same claim, written after the run and never staged: the last
    // run is still the latest evidence about `tests`.
    repo.write("handoffs/F2.md", &claiming_all("F2"));
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F2.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!run.stdout.contains("may proceed"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "claim contradicted by check `tests`: `tests_passing` says pass, but `tests` failed in run `{}`",
            v["run_id"].as_str().unwrap()
        )),
        "{}",
        run.stdout
    );
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F2.md"])
        .json();
    assert_eq!(json["last_run"]["run_id"], v["run_id"], "{json:#}");
    assert_eq!(
        json["last_run"]["failed_checks"],
        serde_json::json!(["tests"])
    );
}

#[test]
fn feedback_after_a_run_blocked_by_repeated_errors_says_a_person_is_needed() {
    let repo = TestRepo::new();
    repo.config(FAILING_TESTS);
    repo.stage("handoffs/F1.md", &claiming_all("F1"));
    // `escalate_after` is 3 by default: the third attempt with the same
    // errors needs a person (each stages something new: a run on what the
    // one before judged is no attempt).
    for (attempt, code) in [1, 1, 4].into_iter().enumerate() {
        repo.stage("attempt.txt", &attempt.to_string());
        let (got, v) = repo.verdict(&[]);
        assert_eq!(got, code, "{v:#}");
    }
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(!run.stdout.contains("Retry attempt"), "{}", run.stdout);
    assert!(
        run.stdout.contains("**Escalation:**")
            && run.stdout.contains("failed 3 runs in a row")
            && run.stdout.contains("hand this to a person"),
        "{}",
        run.stdout
    );
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F1.md"])
        .json();
    assert_eq!(json["escalate"], true, "{json:#}");
    assert!(json["person_needed"].is_string(), "{json:#}");
}

#[test]
fn feedback_holds_claims_to_the_run_written_last_whatever_its_id_says() {
    // Run ids order runs by their second, then their process id: process
    // ids wrap around (and clocks go back), so the newest run may have the
    // smallest id.
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"tests\", shell = true, command = \"test ! -e fail\" }, { name = \"lint\", command = \"true\" } ]\n");
    repo.stage("handoffs/F1.md", &claiming_all("F1"));
    let (code, _) = repo.verdict(&[]);
    assert_eq!(code, 0);
    repo.write("fail", "");
    let (code, failing) = repo.verdict(&[]);
    assert_eq!(code, 1, "{failing:#}");
    let runs = repo.path().join(".git/phasegate/runs");
    let id = failing["run_id"].as_str().unwrap();
    std::fs::rename(runs.join(id), runs.join("20000101T000000Z-1")).unwrap();
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("claim contradicted by check `tests`"),
        "{}",
        run.stdout
    );
}
