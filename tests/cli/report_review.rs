//! The machine-readable reports as CI services read them.

use crate::support::TestRepo;

/// `phasegate run --all-files --format FORMAT ARGS` in `repo`, with its
/// exit code checked.
fn report(repo: &TestRepo, format: &str, args: &[&str], code: i32) -> String {
    let mut all = vec!["run", "--all-files", "--format", format];
    all.extend_from_slice(args);
    let run = repo.phasegate(&all);
    assert_eq!(run.code, code, "{}\n{}", run.stdout, run.stderr);
    run.stdout
}

#[test]
fn a_check_the_fast_profile_lets_through_is_no_junit_error() {
    // A crash under `fast` fails open: the run exits 0, so the test page
    // GitLab and Jenkins draw from the JUnit report must not turn red.
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "boom", shell = true, command = "echo partial output; kill -SEGV $$" },
  { name = "fine", command = "true" },
]
"#,
    );
    let xml = report(&repo, "junit", &["--profile", "fast"], 0);
    assert!(!xml.contains("<error"), "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");
    assert!(
        xml.contains(r#"failures="0" errors="0" skipped="1""#),
        "{xml}"
    );
    // It did not pass either: it is skipped, and says why and what it
    // printed.
    let case = xml
        .split("<testcase ")
        .find(|c| c.contains(r#"name="boom""#))
        .unwrap();
    assert!(case.contains("<skipped message=\"crashed"), "{case}");
    assert!(case.contains("the fast profile lets it through"), "{case}");
    assert!(case.contains("<system-out>"), "{case}");
    assert!(case.contains("partial output"), "{case}");
    // Under the default profile the same crash stops the gate, and is an
    // error.
    let xml = report(&repo, "junit", &[], 3);
    assert!(xml.contains(r#"<error message="crashed"#), "{xml}");
}

#[test]
fn code_quality_names_no_path_outside_the_repository() {
    // A compiler error in a system header: GitLab takes a path relative to
    // the repository, and the finding must still be there.
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "build", shell = true, parser = "gcc", command = "cat output.txt; exit 1" } ]
"#,
    );
    repo.write(
        "output.txt",
        "/usr/include/stdio.h:10:5: error: conflicting types for 'printf'\n\
         ../vendor/lib.c:3:1: warning: unused variable 'x'\n\
         src/a.c:2:1: error: expected ';' before '}' token\n",
    );
    repo.write("src/a.c", "int main() {\n  return 0\n}\n");
    let issues: Vec<serde_json::Value> =
        serde_json::from_str(&report(&repo, "codequality", &[], 1)).unwrap();
    for issue in &issues {
        let path = issue["location"]["path"].as_str().unwrap();
        assert!(
            !path.starts_with('/') && !path.starts_with(".."),
            "{issue:#}"
        );
    }
    let description = |needle: &str| {
        issues
            .iter()
            .find(|i| i["description"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no issue says {needle:?}: {issues:#?}"))
    };
    let header = description("conflicting types");
    assert_eq!(
        header["description"],
        "/usr/include/stdio.h:10: conflicting types for 'printf'"
    );
    assert_eq!(header["location"]["path"], "phasegate.toml");
    let vendored = description("unused variable");
    assert!(
        vendored["description"]
            .as_str()
            .unwrap()
            .ends_with("vendor/lib.c:3: unused variable 'x'"),
        "{vendored:#}"
    );
    let own = description("expected ';'");
    assert_eq!(own["location"]["path"], "src/a.c");
    assert_eq!(own["location"]["lines"]["begin"], 2);
}

#[test]
fn the_summary_names_every_failing_check_within_its_limit() {
    // `build` has eight errors, `link` one failure nothing could parse:
    // five lines of `build` alone would hide that `link` failed too.
    let repo = TestRepo::new();
    let lines = (1..=8)
        .map(|i| format!("echo 'f{i}.c:{i}:1: error: problem {i}';"))
        .collect::<Vec<_>>()
        .join(" ");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [\n  {{ name = \"build\", shell = true, command = \"{lines} exit 1\" }},\n  {{ name = \"link\", shell = true, command = \"echo something went wrong; exit 2\" }},\n]\n"
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let summary: Vec<&str> = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(summary.len(), 5, "{summary:#?}");
    assert_eq!(summary[0], "f1.c:1 problem 1 (build)");
    assert!(
        summary
            .iter()
            .any(|l| l.contains("check `link` failed (exit 2)") && l.ends_with("(link)")),
        "{summary:#?}"
    );
    let human = report(&repo, "human", &[], 1);
    let summary_section = human.split("\nsummary\n").nth(1).unwrap();
    assert!(summary_section.contains("check `link` failed"), "{human}");
}

#[test]
fn a_saved_log_past_the_limit_says_so_in_every_ci_format() {
    // 1,005 errors: the first 1,000 are kept, 5 only counted. No report
    // may pass the 1,000 off as all there were.
    let repo = TestRepo::new();
    let output = (1..=1005)
        .map(|i| format!("src/a.c:{i}:1: error: e{i}"))
        .collect::<Vec<_>>()
        .join("\n");
    repo.write("build.log", &output);
    let parse = |format: &str| {
        let run = repo.phasegate(&[
            "diagnostics",
            "parse",
            "--parser",
            "gcc",
            "--format",
            format,
            "build.log",
        ]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        run.stdout
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&parse("json")).unwrap()["dropped"],
        5
    );
    let sarif: serde_json::Value = serde_json::from_str(&parse("sarif")).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(run["properties"]["findingsNotKept"], 5, "{run:#}");
    let notifications = run["invocations"][0]["toolExecutionNotifications"].to_string();
    assert!(
        notifications.contains("5 more past its limit of 1000 findings"),
        "{notifications}"
    );
    assert!(notifications.contains("build.log"), "{notifications}");
    let github = parse("github");
    assert!(!github.contains("have them all"), "{github}");
    assert!(
        github.contains("5 more were counted but not kept"),
        "{github}"
    );
    let junit = parse("junit");
    assert!(
        junit.contains("5 more past its limit of 1000 findings"),
        "{junit}"
    );
    let issues: Vec<serde_json::Value> = serde_json::from_str(&parse("codequality")).unwrap();
    assert_eq!(issues.len(), 1001);
    assert!(
        issues
            .iter()
            .any(|i| i["check_name"] == "phasegate/findings-not-kept"
                && i["description"].as_str().unwrap().contains("5 more")),
        "{:#}",
        issues[1000]
    );
}

#[test]
fn the_step_summary_marks_a_check_the_fast_profile_lets_through_as_a_warning() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "boom", shell = true, command = "kill -SEGV $$" },
  { name = "broken", shell = true, command = "exit 1" },
]
"#,
    );
    let summary = repo.home().join("step-summary.md");
    let summary_text = summary.to_string_lossy().into_owned();
    let env = [("GITHUB_STEP_SUMMARY", summary_text.as_str())];
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--profile",
            "fast",
            "--format",
            "github",
            "--check",
            "boom",
        ],
        &env,
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.contains("| `boom` | ⚠️ crashed |"), "{markdown}");
    // A check that blocks keeps its cross.
    std::fs::remove_file(&summary).unwrap();
    let run = repo.phasegate_with(
        &[
            "run",
            "--all-files",
            "--format",
            "github",
            "--check",
            "broken",
        ],
        &env,
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.contains("| `broken` | ❌ failed |"), "{markdown}");
}

#[test]
fn an_error_the_gate_lets_through_is_no_failure_on_the_ci_page() {
    // Two checks print the same compiler error and fail: one blocks, one
    // only warns. The run fails on the first; GitHub's annotations and
    // GitLab's Code Quality must show the second as what it is to the
    // gate, a warning, not a red error beside a green step.
    let repo = TestRepo::new();
    repo.write("src/a.c", "int main(void) { return x; }\n");
    repo.write(
        "block.txt",
        "src/a.c:1:25: error: 'x' undeclared (first use in this function)\n",
    );
    repo.write(
        "warn.txt",
        "src/a.c:1:1: error: conflicting types for 'main'\n",
    );
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "build", shell = true, parser = "gcc", command = "cat block.txt; exit 1" },
  { name = "style", shell = true, parser = "gcc", command = "cat warn.txt; exit 1", on_failure = "warn" },
]
"#,
    );
    let annotations = report(&repo, "github", &[], 1);
    let line = |needle: &str| {
        annotations
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no annotation with {needle}:\n{annotations}"))
            .to_string()
    };
    let blocking = line("undeclared");
    assert!(blocking.starts_with("::error "), "{blocking}");
    let warned = line("conflicting types");
    assert!(warned.starts_with("::warning "), "{warned}");
    assert!(warned.contains("title=style (does not block)"), "{warned}");

    let issues: serde_json::Value =
        serde_json::from_str(&report(&repo, "codequality", &[], 1)).unwrap();
    let severity = |needle: &str| {
        issues
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["description"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no issue with {needle}: {issues}"))["severity"]
            .clone()
    };
    assert_eq!(severity("undeclared"), "critical");
    assert_eq!(severity("conflicting types"), "major");

    // GitHub code scanning fails a pull request on an `error` result. (A
    // third run with the same errors would end `blocked`: the history of
    // the two before is removed.)
    std::fs::remove_file(repo.path().join(".git/phasegate/state.json")).unwrap();
    let sarif: serde_json::Value = serde_json::from_str(&report(&repo, "sarif", &[], 1)).unwrap();
    let result = |needle: &str| {
        sarif["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["message"]["text"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no result with {needle}: {sarif}"))
            .clone()
    };
    assert_eq!(result("undeclared")["level"], "error");
    let warned = result("conflicting types");
    assert_eq!(warned["level"], "warning", "{warned}");
    assert_eq!(warned["properties"]["severity"], "error", "{warned}");
    assert_eq!(warned["properties"]["blocking"], false, "{warned}");

    // Under `strict` every warn blocks: both are errors again.
    let annotations = report(&repo, "github", &["--profile", "strict"], 1);
    assert!(
        annotations
            .lines()
            .filter(|l| l.starts_with("::error "))
            .count()
            == 2,
        "{annotations}"
    );
    assert!(!annotations.contains("does not block"), "{annotations}");
}
