//! The verdict as people and programs read it: one JSON document whatever
//! happens, a compact human report, no colour off a terminal.

use crate::support::TestRepo;

#[test]
fn a_panic_still_prints_one_json_verdict() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    for stage in ["config", "run", "decide"] {
        let run = repo.phasegate_with(
            &["run", "--format", "json"],
            &[("PHASEGATE_TEST_PANIC", stage)],
        );
        assert_eq!(run.code, 3, "{stage}: {}", run.stderr);
        let v = run.json();
        assert_eq!(v["schema"], "phasegate/verdict/v1");
        assert_eq!(v["status"], "incomplete");
        assert_eq!(v["next"], "resume");
        assert_eq!(v["error"]["kind"], "internal");
        assert!(v["error"]["message"].as_str().unwrap().contains(stage));
    }
    let run = repo.phasegate_with(&["run"], &[("PHASEGATE_TEST_PANIC", "run")]);
    assert_eq!(run.code, 3);
    assert!(run.stderr.contains("internal error"), "{}", run.stderr);

    // Every report asked for is written, and says why.
    let run = repo.phasegate_with(
        &[
            "run",
            "--format",
            "github",
            "--report",
            "json=verdict.json",
            "--report",
            "sarif=gate.sarif",
            "--output",
            "annotations.txt",
        ],
        &[("PHASEGATE_TEST_PANIC", "decide")],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&repo.read("verdict.json")).unwrap();
    assert_eq!(v["error"]["kind"], "internal");
    assert!(repo.read("gate.sarif").contains("phasegate panicked"));
    assert!(repo.read("annotations.txt").contains("::error"));
    let run = repo.phasegate_with(
        &["run", "--format", "sarif"],
        &[("PHASEGATE_TEST_PANIC", "decide")],
    );
    assert_eq!(run.code, 3);
    assert!(run.stdout.contains("phasegate panicked"), "{}", run.stdout);
}

#[test]
fn the_human_report_is_compact_and_uncoloured_off_a_terminal() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "tests", command = "true" },
  { name = "lint", shell = true, command = "echo 'src/a.rs:3:7: error: no semicolon'; exit 1" },
  { name = "docs", command = "false", on_failure = "warn" },
  { name = "fmt", command = "true", on_failure = "skip" },
]
"#,
    );
    // Every file: with no change to compare with, no finding is old.
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 1);
    assert!(!run.stdout.contains('\u{1b}'), "no colour off a terminal");
    insta::assert_snapshot!("human_report", repo.redact(&run.stdout));
}

/// Each finding's line, as the file has it, drawn by miette under the
/// finding with its real line number and a label at the column.
#[test]
fn the_human_report_shows_each_findings_line_under_it() {
    let repo = TestRepo::new();
    repo.stage(
        "src/a.rs",
        "fn main() {\n    let café = 1\n    let x: u32 = \"text\";\n}\n",
    );
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "echo 'src/a.rs:2:17: error: expected `;`'; echo 'src/a.rs:3:18: error: mismatched types'; exit 1" },
]
"#,
    );
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stdout.contains('\u{1b}'), "no colour off a terminal");
    insta::assert_snapshot!(repo.redact(&run.stdout));
}

#[test]
fn outside_a_git_repository_the_gate_still_runs() {
    let dir = TestRepo::plain();
    dir.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let (code, v) = dir.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
}
