//! The changed-line filter: findings outside what the change touched are
//! marked pre-existing, and a blocking check whose every error is old
//! warns instead of blocking.

use crate::support::{check, TestRepo};

/// A repository with `a.py` committed, then line 3 changed and staged.
fn changed_line_3() -> TestRepo {
    let repo = TestRepo::new();
    repo.stage(
        "a.py",
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
    );
    repo.stage("b.py", "untouched\n");
    repo.git(&["commit", "-qm", "base"]);
    repo.stage(
        "a.py",
        "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
    );
    repo
}

/// A check printing compiler-style findings at the given places, then
/// failing.
fn reporting(name: &str, places: &[&str], extra: &str) -> String {
    let lines: Vec<String> = places
        .iter()
        .map(|p| format!("{p}: error: broken here\\n"))
        .collect();
    let lines = lines.concat();
    format!(
        "[phases.implementation]\nchecks = [ {{ name = \"{name}\", shell = true, command = \"printf '{lines}'; exit 1\" {extra} }} ]\n"
    )
}

fn pre_existing(v: &serde_json::Value) -> Vec<(String, bool)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                format!("{}:{}", d["file"].as_str().unwrap_or("-"), d["line"]),
                d["pre_existing"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_lint_check_failing_only_on_old_lines_warns() {
    let repo = changed_line_3();
    repo.config(&reporting("lint", &["a.py:1", "b.py:1"], ""));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned");
    let lint = check(&v, "lint");
    assert_eq!(lint["status"], "warned");
    assert_eq!(lint["filter"], "added");
    assert_eq!(lint["pre_existing"], 2);
    assert!(
        lint["reason"].as_str().unwrap().contains("pre-existing"),
        "{lint:#}"
    );
    assert_eq!(
        pre_existing(&v),
        [("a.py:1".to_string(), true), ("b.py:1".to_string(), true)]
    );
    let human = repo.phasegate(&["run"]);
    assert_eq!(human.code, 0);
    assert!(
        human
            .stdout
            .contains("a.py:1 error broken here (pre-existing)"),
        "{}",
        human.stdout
    );
}

#[test]
fn one_error_on_a_changed_line_keeps_the_block() {
    let repo = changed_line_3();
    repo.config(&reporting("lint", &["a.py:1", "a.py:3"], ""));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "failed");
    assert_eq!(
        pre_existing(&v),
        [("a.py:1".to_string(), true), ("a.py:3".to_string(), false)]
    );
    // The change's own error leads the summary.
    assert!(
        v["summary"][0].as_str().unwrap().starts_with("a.py:3"),
        "{v:#}"
    );
}

#[test]
fn tests_and_builds_are_not_filtered_unless_asked() {
    let repo = changed_line_3();
    repo.config(&reporting("tests", &["a.py:1"], ""));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["filter"], "nofilter");
    assert_eq!(pre_existing(&v), [("a.py:1".to_string(), false)]);

    // diff_context reaches the 3 lines of context around the change.
    repo.config(&reporting(
        "tests",
        &["a.py:6", "a.py:7"],
        ", filter = \"diff_context\"",
    ));
    let (_, v) = repo.verdict(&[]);
    assert_eq!(
        pre_existing(&v),
        [("a.py:6".to_string(), false), ("a.py:7".to_string(), true)]
    );

    // `file` takes any line of a changed file; the global setting applies
    // to checks that set none.
    let config = reporting("tests", &["a.py:9", "b.py:1"], "");
    repo.config(&format!("[gate]\nfilter = \"file\"\n{config}"));
    let (_, v) = repo.verdict(&[]);
    assert_eq!(
        pre_existing(&v),
        [("a.py:9".to_string(), false), ("b.py:1".to_string(), true)]
    );
}

#[test]
fn a_failure_nobody_can_place_is_never_demoted() {
    let repo = changed_line_3();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"echo 'something broke'; exit 1\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "failed");

    // Nor is a finding in a file the repository does not have.
    repo.config(&reporting("lint", &["zzz.py:1"], ""));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(pre_existing(&v), [("zzz.py:1".to_string(), false)]);

    // A progress display that rewrites its line leaves the finding whole:
    // at the changed line, in the changed file.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"printf 'checking 1/2\\\\ra.py:3:1: error: bad\\\\n'; exit 1\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(pre_existing(&v), [("a.py:3".to_string(), false)]);
}

#[test]
fn strict_never_demotes_and_all_files_has_no_change_to_compare() {
    let repo = changed_line_3();
    repo.config(&reporting("lint", &["a.py:1"], ""));
    let (code, _) = repo.verdict(&["--profile", "strict"]);
    assert_eq!(code, 1);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(pre_existing(&v), [("a.py:1".to_string(), false)]);
}

#[test]
fn a_branch_range_is_its_own_change() {
    let repo = changed_line_3();
    repo.git(&["commit", "-qm", "change line 3"]);
    repo.config(&reporting("lint", &["a.py:3", "a.py:8"], ""));
    let (code, v) = repo.verdict(&["--from-ref", "HEAD~1", "--to-ref", "HEAD"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        pre_existing(&v),
        [("a.py:3".to_string(), false), ("a.py:8".to_string(), true)]
    );
}
