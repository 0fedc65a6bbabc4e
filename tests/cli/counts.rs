//! Integration tests: counts past the limits. A check keeps at most 1,000
//! findings and counts the rest; every report says how many more there
//! were, in its own idiom, so a thousand never reads as all.

use crate::support::{check, TestRepo};

/// The sentence every report carries for the findings past the limit.
const NOT_KEPT: &str = "found 500 more past its limit of 1000 findings";

/// A repository whose `build` check prints 1,500 compiler-shaped errors
/// and fails: 1,000 are kept and 500 counted.
fn overflowing() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"seq 1 1500 | sed 's/.*/a.c:&:1: error: e/'; exit 1\" } ]\n",
    );
    repo.write("a.c", "int x;\n");
    repo.commit_all("one");
    repo
}

fn report(repo: &TestRepo, format: &str) -> String {
    let run = repo.phasegate(&["run", "--all-files", "--format", format]);
    assert_eq!(run.code, 1, "{run:?}");
    run.stdout
}

#[test]
fn the_summary_says_how_many_were_found_past_the_limit() {
    let repo = overflowing();
    let (code, verdict) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{verdict}");
    assert_eq!(check(&verdict, "build")["dropped_diagnostics"], 500);
    let first = verdict["summary"][0].as_str().unwrap();
    assert!(
        first.contains("999 more like it; 500 more found past the check's limit of 1000, not kept"),
        "{first}"
    );
}

#[test]
fn sarif_tells_the_findings_past_the_limit_in_a_notification() {
    let repo = overflowing();
    let log: serde_json::Value = serde_json::from_str(&report(&repo, "sarif")).unwrap();
    let run = &log["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 1000);
    let notifications = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert!(
        notifications.iter().any(|n| n["level"] == "warning"
            && n["message"]["text"]
                .as_str()
                .unwrap()
                .contains(&format!("check `build` {NOT_KEPT}"))),
        "{notifications:?}"
    );
    assert_eq!(run["properties"]["findingsNotKept"], 500);
}

#[test]
fn junit_tells_the_findings_past_the_limit_in_the_checks_failure() {
    let repo = overflowing();
    let xml = report(&repo, "junit");
    let failure = xml
        .split("<failure ")
        .nth(1)
        .and_then(|f| f.split("</failure>").next())
        .unwrap_or_else(|| panic!("no failure:\n{xml}"));
    assert!(failure.contains(NOT_KEPT), "{failure}");
}

#[test]
fn code_quality_has_one_issue_for_the_findings_past_the_limit() {
    let repo = overflowing();
    let issues: serde_json::Value = serde_json::from_str(&report(&repo, "codequality")).unwrap();
    let issues = issues.as_array().unwrap();
    assert_eq!(issues.len(), 1001);
    let told: Vec<&serde_json::Value> = issues
        .iter()
        .filter(|i| i["description"].as_str().unwrap().contains(NOT_KEPT))
        .collect();
    assert_eq!(told.len(), 1, "{:?}", issues.last());
    assert_eq!(told[0]["check_name"], "phasegate/findings-not-kept");
    assert_eq!(told[0]["severity"], "critical");
    // Its fingerprint is its own among the findings'.
    let fingerprint = &told[0]["fingerprint"];
    assert_eq!(
        issues
            .iter()
            .filter(|i| &i["fingerprint"] == fingerprint)
            .count(),
        1
    );
}

#[test]
fn the_verdict_shows_the_first_words_of_a_long_command_line_and_counts_the_rest() {
    // A `{files}` check over a large selection would fill the verdict
    // with file names; the invocation record keeps every one.
    let repo = TestRepo::new();
    for n in 0..250 {
        repo.write(&format!("f{n:03}.txt"), "x\n");
    }
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"each\", command = \"true {files}\" } ]\n",
    );
    repo.commit_all("many files");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    let shown = check(&v, "each")["argv"].as_array().unwrap().clone();
    let words: usize = shown.iter().map(|b| b.as_array().unwrap().len()).sum();
    assert!(
        shown.iter().all(|b| b.as_array().unwrap().len() <= 100),
        "{shown:?}"
    );
    assert_eq!(shown[0][0], "true");
    assert_eq!(shown[0][1], "f000.txt");
    // 250 files and phasegate.toml, after `true`.
    let omitted = usize::try_from(check(&v, "each")["argv_omitted"].as_u64().unwrap()).unwrap();
    assert_eq!(words + omitted, 252, "{v:#}");
    let log = check(&v, "each")["log"].as_str().unwrap();
    let record = repo.path().join(log).with_extension("json");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let recorded: usize = record["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_array().unwrap().len())
        .sum();
    assert_eq!(recorded, 252, "the invocation record has every word");
}
