//! Reports and `diagnostics parse` on awkward input: odd paths, control characters, huge and non-UTF-8 output.

use crate::support::TestRepo;

const PASSING: &str =
    "[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n";

#[test]
fn one_file_named_twice_however_spelt_is_never_overwritten() {
    let repo = TestRepo::new();
    repo.config(PASSING);
    // Spelt two ways on the command line: refused before anything runs.
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--report",
        "sarif=out.sarif",
        "--report",
        "junit=./out.sarif",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`out.sarif` (as `./out.sarif`) is named for two reports (sarif and junit)"),
        "{}",
        run.stderr
    );
    assert!(!repo.exists("out.sarif"));
    // An absolute and a relative path to one file: the first report is
    // kept as it was written, the second is not written over it, and the
    // run does not proceed as if both were there.
    let absolute = repo.path().join("both.xml");
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--report",
        &format!("junit={}", absolute.display()),
        "--report",
        "sarif=both.xml",
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("the sarif report was not written: `"),
        "{}",
        run.stderr
    );
    assert!(
        repo.read("both.xml").starts_with("<?xml"),
        "{}",
        repo.read("both.xml")
    );
}

#[test]
fn a_dash_is_standard_output_never_a_file_named_dash() {
    let repo = TestRepo::new();
    repo.config(PASSING);
    let run = repo.phasegate(&["run", "--all-files", "--report", "sarif=-"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("print it with `--format sarif`"),
        "{}",
        run.stderr
    );
    assert!(!repo.exists("-"));
    let run = repo.phasegate(&["run", "--all-files", "--format", "sarif", "--output", "-"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["version"], "2.1.0");
    assert!(!repo.exists("-"));
}

#[test]
fn a_report_in_a_directory_that_does_not_exist_says_what_to_do() {
    let repo = TestRepo::new();
    repo.config(PASSING);
    let run = repo.phasegate(&["run", "--all-files", "--report", "junit=reports/junit.xml"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("/reports` does not exist: create it first"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_saved_log_with_a_line_of_megabytes_makes_bounded_reports() {
    let repo = TestRepo::new();
    let huge = "x".repeat(3_000_000);
    repo.write("big.log", &format!("src/a.c:3:7: error: {huge}\n"));
    let run = repo.phasegate(&["diagnostics", "parse", "--format", "json", "big.log"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let message = run.json()["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.starts_with("xxx") && message.ends_with('…'));
    assert!(message.len() <= 64 * 1024, "{}", message.len());
    for format in ["sarif", "junit", "github", "codequality"] {
        let run = repo.phasegate(&["diagnostics", "parse", "--format", format, "big.log"]);
        assert_eq!(run.code, 0, "{format}: {}", run.stderr);
        assert!(
            run.stdout.len() < 200_000,
            "{format}: {} bytes",
            run.stdout.len()
        );
    }
    // ESLint prints its whole report on one line: a long one is still read.
    let messages: Vec<String> = (0..800)
        .map(|i| {
            format!(
                r#"{{"ruleId":"semi","severity":2,"message":"Missing semicolon number {i}.","line":{},"column":1}}"#,
                i + 1
            )
        })
        .collect();
    let report = format!(
        r#"[{{"filePath":"{}/src/a.js","messages":[{}],"errorCount":800,"warningCount":0}}]"#,
        repo.path().display(),
        messages.join(",")
    );
    assert!(report.len() > 64 * 1024);
    repo.write("eslint.json", &report);
    let run = repo.phasegate(&[
        "diagnostics",
        "parse",
        "--parser",
        "eslint",
        "--format",
        "json",
        "eslint.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["diagnostics"].as_array().unwrap().len(), 800);
}

#[test]
fn a_junit_failure_shows_its_first_finding_even_when_it_alone_is_over_the_bound() {
    let repo = TestRepo::new();
    // A message just under a run's line bound, under a long path: with
    // its place it is over the failure's bound on its own.
    let long = "x".repeat(65_000);
    let path = format!("src/{}a.c", "deep/".repeat(200));
    repo.write("big.log", &format!("{path}:3:7: error: {long}\n"));
    let run = repo.phasegate(&["diagnostics", "parse", "--format", "junit", "big.log"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let failure = run
        .stdout
        .split("<failure ")
        .nth(1)
        .expect("a failure")
        .to_string();
    let (attributes, text) = failure.split_once('>').unwrap();
    assert!(
        text.starts_with(&format!("{path}:3:7 error xxx")),
        "{}",
        &text[..200.min(text.len())]
    );
    assert!(
        attributes.len() < 2_000,
        "message attribute of {} bytes",
        attributes.len()
    );
}

#[test]
fn an_end_a_tool_puts_before_its_start_is_not_reported() {
    let repo = TestRepo::new();
    repo.write("src/a.js", "a\nb\nc\n");
    let report = format!(
        r#"[{{"filePath":"{}/src/a.js","messages":[{{"ruleId":"semi","severity":2,"message":"backwards","line":3,"column":5,"endLine":1,"endColumn":2}}],"errorCount":1,"warningCount":0}}]"#,
        repo.path().display()
    );
    repo.write("eslint.json", &report);
    let args = ["diagnostics", "parse", "--parser", "eslint", "--format"];
    let github = repo.phasegate(&[&args[..], &["github", "eslint.json"]].concat());
    assert!(
        github
            .stdout
            .starts_with("::error file=src/a.js,line=3,col=5,title="),
        "{}",
        github.stdout
    );
    assert!(!github.stdout.contains("endLine"), "{}", github.stdout);
    let sarif = repo.phasegate(&[&args[..], &["sarif", "eslint.json"]].concat());
    let region =
        &sarif.json()["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 3, "{region}");
    assert!(region.get("endLine").is_none(), "{region}");
    assert!(region.get("endColumn").is_none(), "{region}");
}

#[test]
fn parsing_output_without_findings_says_so_to_people() {
    let repo = TestRepo::new();
    repo.write("clean.log", "Compiling a v0.1.0\nFinished in 0.2s\n");
    let run = repo.phasegate(&["diagnostics", "parse", "clean.log"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("no diagnostics found"),
        "{:?}",
        run.stdout
    );
    // The JSON form stays the one document it is.
    let run = repo.phasegate(&["diagnostics", "parse", "--format", "json", "clean.log"]);
    assert_eq!(run.json()["diagnostics"], serde_json::json!([]));
}

#[test]
fn a_command_line_that_cannot_be_read_still_gives_every_report_asked_for() {
    // A CI step with a typo: the upload step after it must find reports
    // that say why nothing was checked, not empty files.
    let repo = TestRepo::new();
    repo.config(PASSING);
    let run = repo.phasegate(&[
        "run",
        "--all-filez",
        "--format",
        "sarif",
        "--report",
        "junit=out.xml",
        "--report=codequality=cq.json",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--all-filez"), "{}", run.stderr);
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let said = sarif["runs"][0]["results"].to_string();
    assert!(said.contains("--all-filez"), "{sarif:#}");
    let junit = repo.read("out.xml");
    assert!(
        junit.starts_with("<?xml") && junit.contains("--all-filez"),
        "{junit}"
    );
    let cq: serde_json::Value = serde_json::from_str(&repo.read("cq.json")).unwrap();
    assert!(cq.to_string().contains("--all-filez"), "{cq:#}");

    // `--output` takes stdout's place; the human error stays on stderr, once.
    let run = repo.phasegate(&["run", "--bogus", "--format=github", "--output", "gh.txt"]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        repo.read("gh.txt").contains("::error"),
        "{}",
        repo.read("gh.txt")
    );
    assert_eq!(
        run.stderr.matches("unexpected argument '--bogus'").count(),
        1,
        "{}",
        run.stderr
    );

    // Nothing but the human report asked for: clap's message alone.
    let run = repo.phasegate(&["run", "--bogus"]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn diagnostics_parse_that_cannot_read_its_log_still_gives_the_report_asked_for() {
    let repo = TestRepo::new();
    for format in ["sarif", "codequality", "junit", "github"] {
        let run = repo.phasegate(&["diagnostics", "parse", "--format", format, "missing.log"]);
        assert_eq!(run.code, 2, "{format}: {}", run.stderr);
        assert!(run.stderr.contains("missing.log"), "{}", run.stderr);
        assert!(
            run.stdout.contains("failed to read `missing.log`"),
            "{format}: {}",
            run.stdout
        );
    }
    let run = repo.phasegate(&["diagnostics", "parse", "--format", "sarif", "missing.log"]);
    let sarif: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
}
