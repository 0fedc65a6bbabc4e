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
    // A person hears of it: a critical intervention.
    let list = repo
        .phasegate(&["interventions", "list", "--format", "json"])
        .json();
    let panics: Vec<&serde_json::Value> = list["interventions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["message"].to_string().contains("phasegate panicked"))
        .collect();
    assert!(!panics.is_empty(), "{list:#}");
    assert!(
        panics.iter().all(|i| i["priority"] == "critical"),
        "{list:#}"
    );

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
fn a_check_that_passed_with_warnings_shows_them() {
    let repo = TestRepo::new();
    repo.stage("src/a.rs", "fn main() {\n    let x = 1;\n}\n");
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "echo 'src/a.rs:2:9: warning: unused variable: `x`'" },
  { name = "clean", command = "true" },
]
"#,
    );
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("lint — passed, with 1 finding(s) that do not fail it"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("unused variable"), "{}", run.stdout);
    assert!(!run.stdout.contains("clean —"), "{}", run.stdout);
}

#[test]
fn outside_a_git_repository_the_gate_still_runs() {
    let dir = TestRepo::plain();
    dir.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let (code, v) = dir.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_configuration_error_says_which_version_was_read_and_what_was_asked() {
    let repo = TestRepo::new();
    let good = "[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n";
    let bad = "[gate]\nprofle = \"strict\"\n[phases.implementation]\nchecks = []\n";
    repo.config(good).commit_all("good");
    repo.git(&["branch", "base"]);

    // The staged version is broken, the work tree's is fine.
    repo.stage("phasegate.toml", bad);
    repo.write("phasegate.toml", good);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("profle"), "{}", run.stderr);
    assert!(run.stderr.contains("as staged"), "{}", run.stderr);
    let (code, v) = repo.verdict(&["--profile", "strict"]);
    assert_eq!(code, 2);
    assert_eq!(v["profile"], "strict", "the profile asked for: {v:#}");
    assert!(
        v["error"]["message"].to_string().contains("as staged"),
        "{v:#}"
    );

    // With --output the terminal gets the human report: the errors too.
    let run = repo.phasegate(&["run", "--format", "json", "--output", "v.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("profle"), "{}", run.stderr);
    repo.git(&["reset", "-q", "phasegate.toml"]);

    // From another commit, the reports place the error in the repository's
    // phasegate.toml and say which commit.
    repo.config(bad).commit_all("bad");
    repo.config(good);
    let (code, v) = repo.verdict(&["--all-files", "--config-from-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    assert_eq!(v["error"]["problems"][0]["file"], "phasegate.toml", "{v:#}");
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("`HEAD` holds it"),
        "{v:#}"
    );
}

#[test]
fn a_bad_phase_or_profile_names_where_it_came_from() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let (code, v) = repo.verdict_with(&[], &[("PHASEGATE_PROFILE", "strct")]);
    assert_eq!(code, 2);
    let message = v["error"]["message"].to_string();
    assert!(message.contains("PHASEGATE_PROFILE"), "{message}");
    assert!(message.contains("did you mean `strict`"), "{message}");
    let (code, v) = repo.verdict_with(&[], &[("PHASEGATE_PHASE", "qa")]);
    assert_eq!(code, 2);
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("named by PHASEGATE_PHASE"),
        "{v:#}"
    );
}

#[test]
fn every_report_goes_to_its_own_file_and_a_missing_one_is_said() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    // One file for two reports: the second would overwrite the first.
    let run = repo.phasegate(&["run", "--report", "json=r.out", "--report", "sarif=r.out"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`r.out` is named for two reports (json and sarif)"),
        "{}",
        run.stderr
    );
    let run = repo.phasegate(&[
        "run",
        "--format",
        "junit",
        "--output",
        "r.xml",
        "--report",
        "json=r.xml",
    ]);
    assert_eq!(run.code, 2);

    // A bad --report still leaves the --format report saying why.
    let run = repo.phasegate(&["run", "--format", "sarif", "--report", "xml=a.xml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("unknown report format `xml`"),
        "{}",
        run.stdout
    );

    // A report that cannot be written: the terminal does not say "passed".
    let run = repo.phasegate(&["run", "--format", "json", "--output", "no/such/dir/v.json"]);
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(!run.stdout.contains("(exit 0)"), "{}", run.stdout);
    assert!(run.stdout.contains("incomplete"), "{}", run.stdout);
    assert!(run.stderr.contains("no/such/dir/v.json"), "{}", run.stderr);
}

#[test]
fn a_broken_unstaged_edit_of_the_configuration_does_not_stop_a_staged_run() {
    let repo = TestRepo::new();
    let good = "[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n";
    repo.config(good).commit_all("good");
    repo.write("phasegate.toml", "[gate]\nprofile = \"strcit\"\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        v["notes"]
            .to_string()
            .contains("the staged version was used"),
        "{v:#}"
    );
    // Every file of the work tree is judged by the work tree's version.
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(v["error"].to_string().contains("strcit"), "{v:#}");
}

#[test]
fn with_nothing_to_go_by_the_verdict_says_why_nothing_ran() {
    let repo = TestRepo::new();
    repo.stage("notes.txt", "hello\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("there is no `phasegate.toml`"), "{notes}");
    assert!(notes.contains("phasegate init"), "{notes}");
    // The target branch of --config-from-ref has none either.
    repo.commit_all("base");
    let (_, v) = repo.verdict(&["--all-files", "--config-from-ref", "HEAD"]);
    assert!(
        v["notes"]
            .to_string()
            .contains("`HEAD` has no `phasegate.toml`"),
        "{v:#}"
    );
}
