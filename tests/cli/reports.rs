//! The CI report formats from the command line: `--format`, `--output`,
//! `--report FORMAT=FILE`, the GitHub step summary, and `diagnostics
//! parse` in the same formats.

use crate::support::TestRepo;

const FAILING: &str = "[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"echo 'src/a.c:3:7: error: no semicolon'; exit 1\" } ]\n";

#[test]
fn sarif_on_stdout_is_one_sarif_document() {
    let repo = TestRepo::new();
    repo.config(FAILING);
    let run = repo.phasegate(&["run", "--all-files", "--format", "sarif"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let log = run.json();
    assert_eq!(log["version"], "2.1.0");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "generic/lint");
    assert_eq!(result["level"], "error");
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "src/a.c");
    assert_eq!(location["region"]["startLine"], 3);
    assert_eq!(location["region"]["startColumn"], 7);
    assert_eq!(
        result["partialFingerprints"]["phasegate/v1"]
            .as_str()
            .unwrap()
            .len(),
        16
    );
    assert_eq!(log["runs"][0]["columnKind"], "unicodeCodePoints");
}

#[test]
fn sarif_and_junit_say_which_commits_a_range_run_checked() {
    let repo = TestRepo::new();
    repo.config(FAILING).write("a.txt", "a\n").commit_all("one");
    repo.write("a.txt", "b\n").commit_all("two");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let base = repo.git(&["rev-parse", "HEAD~1"]).trim().to_string();
    let range = [
        "run",
        "--from-ref",
        "HEAD~1",
        "--to-ref",
        "HEAD",
        "--format",
    ];
    let sarif = repo.phasegate(&[&range[..], &["sarif"]].concat());
    assert_eq!(sarif.code, 1, "{}", sarif.stderr);
    let selection = &sarif.json()["runs"][0]["properties"]["selection"];
    assert_eq!(selection["mode"], "range", "{selection:#}");
    assert_eq!(selection["to_commit"], head.as_str());
    assert_eq!(selection["merge_base"], base.as_str());
    let junit = repo.phasegate(&[&range[..], &["junit"]].concat());
    assert_eq!(junit.code, 1, "{}", junit.stderr);
    for property in [
        format!(r#"<property name="selection.to_commit" value="{head}"/>"#),
        r#"<property name="selection.from" value="HEAD~1"/>"#.to_string(),
    ] {
        assert!(junit.stdout.contains(&property), "{}", junit.stdout);
    }
}

#[test]
fn reports_go_to_files_while_people_read_the_terminal() {
    let repo = TestRepo::new();
    repo.config(FAILING);
    let summary = repo.path().join("step-summary.md");
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--format",
            "github",
            "--output",
            "annotations.txt",
            "--report",
            "junit=junit.xml",
            "--report",
            "codequality=gl-code-quality.json",
            "--report",
            "sarif=out.sarif",
        ],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("✗ failed"),
        "the human report: {}",
        run.stdout
    );
    assert!(repo
        .read("annotations.txt")
        .starts_with("::error file=src/a.c,line=3,col=7,"));
    assert!(repo
        .read("junit.xml")
        .contains(r#"<testcase classname="implementation" name="lint""#));
    let quality: serde_json::Value =
        serde_json::from_str(&repo.read("gl-code-quality.json")).unwrap();
    assert_eq!(quality[0]["location"]["path"], "src/a.c");
    assert_eq!(quality[0]["severity"], "critical");
    let sarif: serde_json::Value = serde_json::from_str(&repo.read("out.sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.starts_with("## phasegate: failed"), "{markdown}");
    assert!(
        markdown.contains("| `lint` | ❌ failed | 1 |"),
        "{markdown}"
    );
}

#[test]
fn a_bad_report_request_is_a_usage_error() {
    let repo = TestRepo::new();
    repo.config(FAILING);
    for bad in ["sarif", "xml=out.xml", "=out"] {
        let run = repo.phasegate(&["run", "--report", bad]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
    }
}

#[test]
fn a_saved_log_becomes_any_report() {
    let repo = TestRepo::new();
    let log = format!(
        "{}/fixtures/diagnostics/gcc/gcc.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = repo.phasegate(&["diagnostics", "parse", "--format", "junit", &log]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("<?xml"), "{}", run.stdout);
    let run = repo.phasegate(&["diagnostics", "parse", "--format", "codequality", &log]);
    let issues: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(issues.as_array().unwrap().len(), 6);
    let fingerprints: std::collections::HashSet<&str> = issues
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(fingerprints.len(), 6, "unique per occurrence");
}

#[test]
fn a_run_stopped_by_its_configuration_still_writes_every_ci_report() {
    let repo = TestRepo::new();
    repo.config("[gate]\nprofle = \"auto\"\n");
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--format",
        "junit",
        "--report",
        "sarif=out.sarif",
        "--report",
        "codequality=quality.json",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let doc = roxmltree::Document::parse(&run.stdout).unwrap();
    let error = doc
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .expect("the error as a JUnit error");
    assert!(error.text().unwrap().contains("profle"), "{}", run.stdout);
    assert!(
        run.stderr.contains("did you mean `profile`?"),
        "people still read it"
    );
    let sarif: serde_json::Value = serde_json::from_str(&repo.read("out.sarif")).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    assert!(
        result["ruleId"].as_str().unwrap().contains("config-error"),
        "{result}"
    );
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "phasegate.toml"
    );
    let quality: serde_json::Value = serde_json::from_str(&repo.read("quality.json")).unwrap();
    assert_eq!(quality[0]["location"]["lines"]["begin"], 2);
}

#[test]
fn a_report_that_cannot_be_written_keeps_the_run_from_proceeding() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = repo
        .command(crate::support::BIN)
        .args(["run", "--all-files", "--format", "json"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("failed to write"));
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--format",
        "json",
        "-o",
        "/nonexistent/v.json",
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("/nonexistent/v.json"), "{}", run.stderr);
    // The JSON verdict on stdout agrees with the exit code: what an agent
    // reads must not say "proceed" when phasegate exits 3.
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--format",
        "json",
        "--report",
        "json=/nonexistent/v.json",
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let verdict = run.json();
    assert_eq!(verdict["status"], "incomplete", "{}", run.stdout);
    assert_eq!(verdict["next"], "resume");
    assert!(
        verdict["notes"]
            .to_string()
            .contains("a report asked for could not be written"),
        "{}",
        run.stdout
    );
    // A step summary that cannot be appended to counts as a report.
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--format",
            "json",
            "--report",
            "github=gh.txt",
            "--report",
            "json=verdict.json",
        ],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", "/nonexistent/summary.md"),
        ],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(run.json()["status"], "incomplete", "{}", run.stdout);
    // The report files, written before it, say so too.
    let file: serde_json::Value = serde_json::from_str(&repo.read("verdict.json")).unwrap();
    assert_eq!(file["status"], "incomplete", "{file:#}");
}

#[test]
fn the_github_step_summary_is_written_when_the_configuration_is_broken() {
    let repo = TestRepo::new();
    repo.config("[gate]\nprofle = \"x\"\n");
    let summary = repo.path().join("summary.md");
    let run = repo.phasegate_with(
        &["run", "--format", "github"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", &summary.to_string_lossy()),
        ],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(!text.is_empty());
}

#[test]
fn junit_has_a_case_for_each_failed_pytest_test_even_with_one_name_in_two_files() {
    let repo = TestRepo::new();
    repo.write("tests/test_a.py", &"x = 1\n".repeat(15));
    repo.write("tests/test_b.py", &"x = 1\n".repeat(15));
    repo.write(
        "out.txt",
        "============================= test session starts ==============================
collected 4 items

tests/test_a.py FF                                                       [ 50%]
tests/test_b.py F.                                                       [100%]

=================================== FAILURES ===================================
___________________________________ test_x _____________________________________

    def test_x():
>       assert 1 == 2, \"x in a\"
E       AssertionError: x in a

tests/test_a.py:10: AssertionError
___________________________________ test_y _____________________________________

    def test_y():
>       assert 1 == 4, \"y in a\"
E       AssertionError: y in a

tests/test_a.py:11: AssertionError
___________________________________ test_x _____________________________________

    def test_x():
>       assert 1 == 3, \"x in b\"
E       AssertionError: x in b

tests/test_b.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_x - AssertionError: x in a
FAILED tests/test_a.py::test_y - AssertionError: y in a
FAILED tests/test_b.py::test_x - AssertionError: x in b
========================= 3 failed, 1 passed in 0.03s ==========================
",
    );
    repo.config("[phases.implementation]\nchecks = [ { name = \"tests\", shell = true, command = \"cat out.txt; exit 1\", parser = \"pytest\" } ]\n");
    let run = repo.phasegate(&["run", "--all-files", "--format", "junit"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = roxmltree::Document::parse(&run.stdout).unwrap();
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    // The check, and each of the three failed tests once; a failure is
    // counted in its test's case alone, so the page counts three.
    assert_eq!(suite.attribute("tests"), Some("4"), "{}", run.stdout);
    assert_eq!(suite.attribute("failures"), Some("3"), "{}", run.stdout);
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("classname") == Some("implementation.tests"))
        .filter_map(|n| n.children().find(|c| c.has_tag_name("failure")))
        .filter_map(|f| f.text())
        .collect();
    assert_eq!(texts.len(), 3, "{}", run.stdout);
    for message in ["x in a", "y in a", "x in b"] {
        let holding: Vec<&&str> = texts.iter().filter(|t| t.contains(message)).collect();
        assert_eq!(holding.len(), 1, "{message}: {}", run.stdout);
        assert_eq!(holding[0].lines().count(), 1, "{}", run.stdout);
    }
}

#[test]
fn a_handoff_documents_warnings_are_in_the_human_github_and_sarif_reports() {
    let repo = TestRepo::new();
    repo.write(
        "handoffs/F001.md",
        "---\nid: F001\nstage: implementation\ntitle: t\nstarted_at: 2026-11-20T09:00:00Z\ncompleted_at: null\nstatus: in_progress\nhandoff_ready: true\nretry_count: 0\nreviewr: alice\ncheckpoints:\n  - name: tests_written\n    status: pass\n---\n",
    );
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n[handoff.checkpoints]\nimplementation = [\"tests_written\"]\n");
    repo.commit_all("a handoff document with a misspelt field");
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--format",
        "github",
        "--report",
        "sarif=out.sarif",
        "--report",
        "human=human.txt",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("::warning file=handoffs/F001.md,line=10,col=1,title=phasegate handoff-warning::unknown field `reviewr`"),
        "{}",
        run.stdout
    );
    assert!(
        repo.read("human.txt")
            .contains("handoffs/F001.md:10:1 warning unknown field `reviewr`"),
        "{}",
        repo.read("human.txt")
    );
    let sarif: serde_json::Value = serde_json::from_str(&repo.read("out.sarif")).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{sarif:#}");
    assert_eq!(results[0]["level"], "note");
    assert_eq!(results[0]["message"]["text"], "unknown field `reviewr`");
}
