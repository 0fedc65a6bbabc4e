//! Every code phasegate produces has its SARIF rule; escaping in the GitHub and GitLab reports.

use crate::support::TestRepo;

/// A file name with what each report must escape: a line break, `%`, `:`
/// and `,`.
const ODD_NAME: &str = "odd\n100%: a,b.md";

/// `repo` with `config` and the files `files`, all committed.
fn committed(config: &str, files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(config);
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.commit_all("start");
    repo
}

/// The SARIF log of `phasegate run --all-files` in `repo`, and its exit code.
fn sarif(repo: &TestRepo) -> (i32, serde_json::Value) {
    let run = repo.phasegate(&["run", "--all-files", "--format", "sarif"]);
    (run.code, run.json())
}

#[test]
fn every_rule_of_phasegates_own_findings_says_what_to_do() {
    // Three of phasegate's own findings: a program that is not installed,
    // a check that failed with nothing to parse, and a verifier whose
    // "pass" names an error.
    let repo = committed(
        r#"[phases.implementation]
checks = [
  { name = "absent", command = "phasegate-no-such-program --check" },
  { name = "quiet", shell = true, command = "exit 1" },
  { name = "review", kind = "verifier", shell = true, command = "cat answer.json" },
]
"#,
        &[(
            "answer.json",
            r#"{"verdict": "pass", "findings": [{"file": "answer.json", "line": 1, "severity": "error", "message": "criterion 2 is not met"}]}"#,
        )],
    );
    let (code, log) = sarif(&repo);
    assert_ne!(code, 0, "{log:#}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let mut own: Vec<&str> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["ruleId"].as_str())
        .filter(|id| id.starts_with("phasegate/"))
        .collect();
    own.sort_unstable();
    own.dedup();
    assert_eq!(
        own,
        [
            "phasegate/check-failed",
            "phasegate/missing-tool",
            "phasegate/verifier-contradiction"
        ],
        "{log:#}"
    );
    for id in own {
        let rule = rules.iter().find(|r| r["id"] == id).unwrap();
        let text = |key: &str| rule[key]["text"].as_str().unwrap().to_string();
        // Described as phasegate's own, not as a code nobody described.
        assert!(
            !text("shortDescription").starts_with("phasegate reports"),
            "{rule:#}"
        );
        assert!(!text("fullDescription").starts_with("Findings"), "{rule:#}");
        // The help says what to do, not only who reported it.
        assert!(!text("help").starts_with("Reported by"), "{rule:#}");
    }
}

#[test]
fn the_sarif_driver_carries_its_version_as_semantic_version() {
    let repo = committed(
        "[phases.implementation]\nchecks = [ { name = \"quiet\", shell = true, command = \"exit 1\" } ]\n",
        &[],
    );
    let (_, log) = sarif(&repo);
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "phasegate");
    let version = driver["version"].as_str().unwrap();
    assert_eq!(driver["semanticVersion"], version, "{driver:#}");
    // The package names no homepage or repository: no `informationUri`
    // stands in for one.
    let homepage = [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
        .into_iter()
        .find(|uri| !uri.is_empty());
    assert_eq!(
        driver.get("informationUri").and_then(|u| u.as_str()),
        homepage,
        "{driver:#}"
    );
}

/// A repository whose verifier fails with one finding at line 2 of
/// `ODD_NAME`, a file that exists.
fn odd_finding() -> TestRepo {
    let answer = serde_json::json!({
        "verdict": "fail",
        "findings": [{
            "file": ODD_NAME,
            "line": 2,
            "severity": "error",
            "message": "100% off: a, b\nsecond line",
        }],
    });
    committed(
        r#"[phases.implementation]
checks = [ { name = "review", kind = "verifier", shell = true, command = "cat answer.json" } ]
"#,
        &[
            ("answer.json", &answer.to_string()),
            (ODD_NAME, "one\ntwo\n"),
        ],
    )
}

#[test]
fn a_github_annotation_names_a_file_with_a_line_break_as_it_is() {
    let repo = odd_finding();
    let run = repo.phasegate(&["run", "--all-files", "--format", "github"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let annotation = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no error annotation:\n{}", run.stdout));
    // GitHub's workflow commands: `%`, CR and LF escaped in the message,
    // and `:` and `,` too in a property, which the runner reads back to
    // the file's own name.
    assert!(
        annotation.starts_with("::error file=odd%0A100%25%3A a%2Cb.md,line=2,"),
        "{annotation}"
    );
    assert!(
        annotation.ends_with("::100%25 off: a, b%0Asecond line"),
        "{annotation}"
    );
}

#[test]
fn code_quality_and_sarif_name_a_file_with_a_line_break_as_each_wants() {
    let repo = odd_finding();
    let run = repo.phasegate(&["run", "--all-files", "--format", "codequality"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let issues = run.json();
    // GitLab reads `location.path` as the path relative to the
    // repository: the name itself, in JSON's own escapes.
    let issue = issues
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["location"]["path"] == ODD_NAME)
        .unwrap_or_else(|| panic!("{issues:#}"));
    assert_eq!(issue["location"]["lines"]["begin"], 2, "{issue:#}");
    assert_eq!(issue["description"], "100% off: a, b\nsecond line");
    // SARIF takes a URI reference: the bytes outside its unreserved set
    // percent-encoded, `:` among them, or `odd…:` would read as a scheme.
    let (_, log) = sarif(&repo);
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert!(uris.contains(&"odd%0A100%25%3A%20a%2Cb.md"), "{uris:?}");
}
