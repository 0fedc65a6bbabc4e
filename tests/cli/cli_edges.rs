//! Command line, handoff and interventions edges: files after `--`, what a
//! resume judges with, `init` in a monorepo, a merged intervention, a
//! long checkpoint name, a GitHub annotation's title.

use crate::support::{check, TestRepo};

/// A check that is given the selected files and ignores them: the verdict
/// records what it was given.
const GIVEN: &str = r#"[phases.implementation]
checks = [ { name = "docs", command = "true {files}", files = ["*"] } ]
"#;

/// The files the check `docs` was given.
fn given(verdict: &serde_json::Value) -> Vec<String> {
    check(verdict, "docs")["argv"][0]
        .as_array()
        .unwrap_or_else(|| panic!("docs did not run: {verdict:#}"))
        .iter()
        .skip(1)
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn files_after_double_dash_are_files_of_files_and_only_of_files() {
    let repo = TestRepo::new();
    repo.config(GIVEN)
        .stage("-rf", "a name git users quote with --\n");
    repo.stage("a.md", "# a\n");

    let (code, verdict) = repo.verdict(&["--files", "--", "-rf"]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(given(&verdict), ["./-rf"]);
    // Files before and after `--` together.
    let (code, verdict) = repo.verdict(&["--files", "a.md", "--", "-rf"]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(given(&verdict), ["./-rf", "a.md"]);
    // The other spelling still works.
    let (code, verdict) = repo.verdict(&["--files", "./-rf"]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(given(&verdict), ["./-rf"]);

    // Without `--files`, nothing takes them: said, with what to write.
    let refused = repo.phasegate(&["run", "--", "-rf"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("`-rf` after `--` names a file, which only `--files` takes: run `phasegate run --files -- -rf`"),
        "{}",
        refused.stderr
    );
    // Under `--format json` the refusal is the one verdict on stdout.
    let refused = repo.phasegate(&["run", "--format", "json", "--all-files", "--", "-rf"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert_eq!(
        refused.json()["error"]["kind"],
        "usage",
        "{}",
        refused.stdout
    );
    // `--files` naming nothing is no selection of nothing.
    let empty = repo.phasegate(&["run", "--files"]);
    assert_eq!(empty.code, 2, "{empty:?}");
    assert!(
        empty.stderr.contains("`--files` names no file"),
        "{}",
        empty.stderr
    );
}

/// `tests` fails and only warns (a block under `strict`); `lint` passes.
const RESUMED: &str = r#"[gate]
profile = "auto"

[commands]
tests = "false"
lint = "true"

[phases.implementation]
checks = [ { name = "tests", on_failure = "warn" }, { name = "lint", on_failure = "block" } ]

[phases.qa]
checks = [ { name = "tests", on_failure = "warn" }, { name = "lint", on_failure = "block" } ]

[workflows.careful.phases.qa]
checks = [ { name = "tests", on_failure = "warn" }, { name = "lint", on_failure = "block" } ]
"#;

#[test]
fn a_resume_judges_with_the_resumed_run_s_profile_and_says_so() {
    let repo = TestRepo::new();
    repo.config(RESUMED).stage("a.md", "# a\n");
    let (code, first) = repo.verdict(&[
        "--all-files",
        "--profile",
        "strict",
        "--phase",
        "qa",
        "--workflow",
        "careful",
        "--check",
        "tests",
    ]);
    assert_eq!(code, 1, "{first:#}");

    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 1, "strict still blocks: {resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["profile"], "strict", "{verdict:#}");
    assert_eq!(verdict["phase"], "qa", "{verdict:#}");
    assert_eq!(verdict["workflow"], "careful", "{verdict:#}");
    let names: Vec<&str> = verdict["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tests"], "only what --check asked: {verdict:#}");
    let notes = verdict["notes"].to_string();
    let said = format!(
        "resumed run {} under its profile `strict`",
        first["run_id"].as_str().unwrap()
    );
    assert!(notes.contains(&said), "{notes}");

    // Told otherwise, it says which it was and which it is now.
    let resumed = repo.phasegate(&["resume", "--format", "json", "--profile", "fast"]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    let verdict = resumed.json();
    assert_eq!(verdict["profile"], "fast", "{verdict:#}");
    assert!(
        verdict["notes"]
            .to_string()
            .contains("(profile `strict`) under profile `fast`"),
        "{verdict:#}"
    );
    // A profile that does not exist is refused, not passed over.
    let bad = repo.phasegate(&["resume", "--profile", "fats"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("unknown profile `fats`"),
        "{}",
        bad.stderr
    );
}

#[test]
fn init_in_a_monorepo_writes_checks_that_run_in_each_project() {
    let repo = TestRepo::new();
    repo.write(
        "backend/Cargo.toml",
        "[package]\nname = \"backend\"\nversion = \"0.1.0\"\n",
    )
    .write("web/package.json", r#"{"scripts": {"test": "jest"}}"#)
    .write("web/package-lock.json", "{}")
    .commit_all("two projects, none at the root");
    let init = repo.phasegate(&["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains(
            "checks for rust in `backend/` and node in `web/`, each run in its directory"
        ),
        "{}",
        init.stdout
    );
    // The gate checks both projects, each in its own directory, whether
    // or not their tools are installed where the suite runs.
    let (_, verdict) = repo.verdict(&["--all-files"]);
    let checks: Vec<(&str, &str)> = verdict["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    let names: Vec<&str> = checks.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "backend-tests",
            "backend-lint",
            "backend-build",
            "backend-typecheck",
            "web-tests"
        ],
        "{verdict:#}"
    );
    let (_, qa) = repo.verdict(&["--all-files", "--phase", "qa"]);
    let names: Vec<&str> = qa["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["backend-tests", "web-tests"], "{qa:#}");
}

/// A session's five slots taken by five types of error, each from a check
/// of its own; `tests` fails of `lint`'s type once `tests-broken` is there.
const FIVE_TYPES: &str = r#"[gate]
escalate_after = 100

[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "echo 'a.c:1:1: error: lint'; exit 1" },
  { name = "gone", command = "no-such-tool-anywhere" },
  { name = "noisy", shell = true, command = "echo 'something broke'; exit 1" },
  { name = "crash", shell = true, command = "kill -SEGV $$" },
  { name = "tests", shell = true, command = "if [ -f tests-broken ]; then echo \"b.c:$(cat tests-broken):1: error: tests\"; exit 1; fi" },
]
"#;

#[test]
fn a_merged_intervention_says_how_many_were_merged_and_from_which_runs() {
    let repo = TestRepo::new();
    repo.config(FIVE_TYPES).stage(
        "handoffs/F1.md",
        "---\nid: F1\nstage: implementation\nstatus: in_progress\n---\n",
    );
    let session = [("PHASEGATE_SESSION", "s1")];
    let (_, first) = repo.verdict_with(&["--all-files"], &session);
    let mut runs = vec![first["run_id"].as_str().unwrap().to_string()];
    // The session is full: `tests`'s failures merge into `lint`'s record,
    // one per run.
    for line in ["1", "2"] {
        repo.write("tests-broken", line);
        let (_, v) = repo.verdict_with(&["--all-files"], &session);
        runs.push(v["run_id"].as_str().unwrap().to_string());
    }
    let listed = repo.phasegate(&["interventions", "list", "--format", "json"]);
    let listed = listed.json();
    let merged = listed["interventions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "lint")
        .unwrap_or_else(|| panic!("{listed:#}"))
        .clone();
    // `lint` failing again in each run, and `tests` twice.
    assert_eq!(merged["occurrences"], 5, "{merged:#}");
    assert_eq!(merged["runs"], serde_json::json!(runs), "{merged:#}");
    // The newest run it occurred in, whose logs a person reads.
    assert_eq!(merged["run_id"], runs[2].as_str(), "{merged:#}");
    let id = merged["id"].as_str().unwrap();

    // People read the same count, and the runs.
    let shown = repo.phasegate(&["interventions", "show", id]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(
        shown
            .stdout
            .contains("occurrences 5 (the first, and 4 merged into it)"),
        "{}",
        shown.stdout
    );
    assert!(
        shown
            .stdout
            .contains(&format!("runs        {} (oldest first)", runs.join(", "))),
        "{}",
        shown.stdout
    );
    let list = repo.phasegate(&["interventions", "list"]);
    let line = list
        .stdout
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("{}", list.stdout));
    assert!(line.contains("×5"), "{line}");
}

#[test]
fn a_long_checkpoint_name_is_cut_in_the_errors_and_the_feedback() {
    let repo = TestRepo::new();
    let long = "x".repeat(5000);
    repo.stage(
        "handoffs/F1.md",
        &format!(
            "---\nid: F1\nstage: implementation\ntitle: t\nstarted_at: 2026-01-01T00:00:00Z\nstatus: failed\nhandoff_ready: false\nretry_count: 1\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: {long}\n    status: bogus\n  - name: {long}\n    status: fail\n  - name: {long}\n    status: fail\n---\n"
        ),
    );
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "handoffs/F1.md"]);
    assert_eq!(run.code, 1, "{run:?}");
    let json = run.json();
    let errors = json["handoffs"][0]["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["line"] == 13),
        "the bad status is reported: {errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e["line"] == 16),
        "the name listed twice is reported: {errors:#?}"
    );
    for error in errors {
        let message = error["message"].as_str().unwrap();
        let field = error["field"].as_str().unwrap();
        assert!(message.chars().count() < 400, "{message}");
        assert!(field.chars().count() < 200, "{field}");
    }
    let said = repo.phasegate(&["handoff", "validate", "handoffs/F1.md"]);
    for line in said.stdout.lines().chain(said.stderr.lines()) {
        assert!(line.chars().count() < 400, "{line}");
    }
    let feedback = repo.phasegate(&["handoff", "feedback", "handoffs/F1.md"]);
    assert!(
        feedback.stdout.contains("Validation Failed"),
        "{feedback:?}"
    );
    assert!(feedback.stdout.contains('…'), "{}", feedback.stdout);
    for line in feedback.stdout.lines() {
        assert!(line.chars().count() < 400, "{line}");
    }
}

#[test]
fn a_github_annotation_title_shows_no_control_characters_spelled_out() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "lint", shell = true, parser = '^(?P<file>[^:]+):(?P<line>\d+): (?P<code>\S+) (?P<message>.*)$', command = "printf 'a.c:1: E\\177X\\002\\003Y boom\\n'; exit 1" } ]
"#,
    )
    .stage("a.c", "int x;\n");
    let run = repo.phasegate(&["run", "--all-files", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    let annotation = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::error file=a.c"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(annotation.contains(",title=lint E X Y::"), "{annotation}");
    assert!(!annotation.contains("\\x"), "{annotation}");
    assert!(!annotation.chars().any(char::is_control), "{annotation}");
}
