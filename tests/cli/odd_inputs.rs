//! Integration tests: odd inputs. File names no shell or terminal takes at
//! face value, arguments that are not UTF-8, and checks that find more
//! than a report can keep.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use crate::support::{check, output, TestRepo, BIN};

/// Names that a shell, a terminal or an option parser would read as
/// something other than a name.
const ODD_NAMES: &[&str] = &[
    "a b.txt",
    "tab\tname.txt",
    "new\nline.txt",
    "-rf",
    "--help",
    "st*r?.txt",
    "it's \"quoted\".txt",
    "back\\slash.txt",
    "$(touch PWNED).txt",
    "`touch PWNED`.txt",
    "e\u{301}-\u{202e}-\u{1f600}.txt",
];

#[test]
fn every_odd_name_reaches_files_as_one_argument_once_and_is_never_run() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  \
         { name = \"argv\", command = \"sh -c 'printf \\\"<%s>\\\\n\\\" \\\"$@\\\" >> argv.out' sh {files}\", files = [\"*.txt\", \"-rf\", \"--help\"] },\n  \
         { name = \"shell\", shell = true, command = \"printf '<%s>\\\\n' {files} \\\"{files}\\\" >> shell.out\", files = [\"*.txt\", \"-rf\", \"--help\"] },\n]\n",
    );
    for name in ODD_NAMES {
        repo.stage(name, "x\n");
    }
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(check(&verdict, "argv")["status"], "passed");
    assert_eq!(check(&verdict, "shell")["status"], "passed");
    assert!(!repo.exists("PWNED"), "a name was run as a command");
    let mut expected: Vec<String> = ODD_NAMES
        .iter()
        .map(|n| match n.strip_prefix('-') {
            Some(_) => format!("<./{n}>"),
            None => format!("<{n}>"),
        })
        .collect();
    expected.sort();
    let received = |file: &str| {
        let text = repo.read(file);
        let mut names: Vec<String> = Vec::new();
        // A name with a newline spans two lines of the output.
        for part in text.split_inclusive(">\n") {
            names.push(part.trim_end_matches('\n').to_string());
        }
        names.sort();
        names
    };
    assert_eq!(received("argv.out"), expected);
    // `{files}` twice: each name twice, unquoted and in double quotes.
    let mut twice: Vec<String> = expected.iter().chain(&expected).cloned().collect();
    twice.sort();
    assert_eq!(received("shell.out"), twice);
}

#[test]
fn a_new_error_in_a_file_whose_name_holds_a_colon_is_not_taken_for_an_old_one() {
    // The tool finds an old problem outside the change and a new one on
    // the line just added to `notes/10:30.md`: the new one must be read,
    // or the check passes for one whose every error is pre-existing.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"printf 'old.md:1:1: error: old problem\\\\nnotes/10:30.md:2:1: error: new problem\\\\n'; exit 1\" } ]\n",
    )
    .write("old.md", "old\n")
    .write("notes/10:30.md", "old\n")
    .commit_all("one");
    repo.stage("notes/10:30.md", "old\nnew\n");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(check(&verdict, "lint")["status"], "failed");
    let new = verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["message"] == "new problem")
        .unwrap_or_else(|| panic!("the new problem was not read: {verdict:#}"));
    assert_eq!(new["file"], "notes/10:30.md");
    assert_eq!(new["line"], 2);
    assert_ne!(new["pre_existing"], true);
}

#[test]
fn a_usage_error_beside_an_argument_that_is_not_utf8_is_still_one_json_verdict() {
    let repo = TestRepo::new();
    let name = OsString::from_vec(b"caf\xe9.txt".to_vec());
    let out = repo
        .command(BIN)
        .args(["run", "--format", "json", "--no-such-flag", "--files"])
        .arg(&name)
        .output()
        .unwrap();
    let run = output(&out);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let verdict = run.json();
    assert_eq!(verdict["error"]["kind"], "usage", "{verdict:#}");
}

#[test]
fn the_human_report_counts_the_findings_past_a_checks_limit() {
    // 1,500 findings: the verdict keeps 1,000 and counts the rest; the
    // report must say 1,500, not 1,000, and where the others are.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"i=1; while [ $i -le 1500 ]; do echo \\\"a.c:$i:1: error: bad $i\\\"; i=$((i+1)); done; exit 1\" } ]\n",
    );
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains("1500 diagnostics (1000 kept)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("… and 980 more\n"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("… and 500 more found past the check's limit of 1000 findings"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_finding_of_thousands_of_lines_does_not_bury_the_rest_of_the_human_report() {
    let repo = TestRepo::new();
    let long = format!("first line{}", "\nmore".repeat(5000));
    let answer = serde_json::json!({
        "verdict": "fail",
        "findings": [
            {"file": "a.rs", "line": 1, "severity": "error", "message": long},
            {"file": "b.rs", "line": 2, "severity": "error", "message": "the second finding"},
        ],
    });
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"review\", kind = \"verifier\", command = \"cat answer.json\" } ]\n",
    )
    .write("answer.json", &answer.to_string());
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("the second finding"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("│ … and 4970 more lines (the verdict and the check's log have them)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.lines().count() < 100, "{}", run.stdout);
}
