//! Renderers and notes that said a thing twice.
//!
//! The CI formats and a code its message begins with, the note of errors
//! that keep coming back, and the output tail of a check that failed on
//! warnings. Tools are stood for by scripts on a `PATH` the test controls;
//! their output is what the real tools print.

use crate::first_use::{python_project, Tools};
use crate::report_once::failing_python_tools;
use crate::support::TestRepo;

/// A Python project whose test imports a module that is not there, with
/// `pytest`, `ruff` and `pyright` stood in as they answer it.
fn python_project_failing(repo: &TestRepo) -> Tools {
    let tools = failing_python_tools();
    python_project(repo, "");
    repo.git(&["add", "-A"]);
    tools
}

#[test]
fn junit_says_a_code_its_message_begins_with_once() {
    let repo = TestRepo::new();
    let tools = python_project_failing(&repo);
    let run = repo.phasegate_with(&["run", "--format", "junit"], &[("PATH", &tools.path())]);
    assert_eq!(run.code, 1, "{run:?}");
    let xml = &run.stdout;
    assert!(
        xml.contains(
            "tests/test_calc.py:1 error [tests/test_calc.py] ModuleNotFoundError: No module named &apos;calc&apos;"
        ),
        "{xml}"
    );
    assert!(!xml.contains("ModuleNotFoundError ["), "{xml}");
    assert!(
        !xml.contains("ModuleNotFoundError ModuleNotFoundError"),
        "{xml}"
    );
    // A code the message does not begin with is still said.
    assert!(
        xml.contains("tests/test_calc.py:1:18 error F401 `calc.add` imported but unused"),
        "{xml}"
    );
}

#[test]
fn a_github_annotation_s_title_leaves_out_a_code_its_message_begins_with() {
    let repo = TestRepo::new();
    let tools = python_project_failing(&repo);
    let run = repo.phasegate_with(&["run", "--format", "github"], &[("PATH", &tools.path())]);
    assert_eq!(run.code, 1, "{run:?}");
    let collection = run
        .stdout
        .lines()
        .find(|l| l.ends_with("::ModuleNotFoundError: No module named 'calc'"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        collection.starts_with("::error file=tests/test_calc.py,line=1,title=tests::"),
        "{collection}"
    );
    // GitHub shows the title above the message: a code the message does
    // not begin with stays in it.
    assert!(
        run.stdout
            .contains("title=lint F401::`calc.add` imported but unused"),
        "{}",
        run.stdout
    );
    // The verdict keeps the code.
    let (_, v) = repo.verdict_with(&[], &[("PATH", &tools.path())]);
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "ModuleNotFoundError"),
        "{v:#}"
    );
}

/// A check that fails with the same two errors on every run.
fn stuck(repo: &TestRepo) {
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"printf 'a.c:1:1: error: stuck on the first\\\\na.c:2:1: error: stuck on the second\\\\n'; exit 1\" } ]\n",
    );
    repo.commit_all("init");
}

#[test]
fn the_note_of_errors_that_keep_coming_back_names_them_once() {
    let repo = TestRepo::new();
    stuck(&repo);
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{v:#}");
    }
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 4, "{run:?}");
    let out = &run.stdout;
    // Once among the check's findings, once in the summary: not a third
    // time in the note.
    assert_eq!(out.matches("stuck on the first").count(), 2, "{out}");
    assert_eq!(out.matches("stuck on the second").count(), 2, "{out}");
    let note = out
        .lines()
        .find(|l| l.starts_with("note: the same"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        note,
        "note: the same 2 error(s) failed 3 runs in a row: a person is needed. They keep coming back in check `build`: its findings (and the summary) name them."
    );

    // An agent reads the verdict: the note names the check, whose
    // diagnostics and the summary are the errors.
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("failed 4 runs in a row") && notes.contains("in check `build`"),
        "{notes}"
    );
    assert!(
        v["summary"].to_string().contains("stuck on the first"),
        "{v:#}"
    );
    // The queue is read without the run: its record names the errors.
    let queue = repo
        .phasegate(&["interventions", "list", "--format", "json"])
        .json();
    let repeated: Vec<&serde_json::Value> = queue["interventions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "errors_repeated")
        .collect();
    assert_eq!(repeated.len(), 1, "{queue:#}");
    let message = repeated[0]["message"].as_str().unwrap();
    assert!(
        message.contains("a.c:1:1 stuck on the first") && message.contains("stuck on the second"),
        "{message}"
    );
}

#[test]
fn the_note_counts_the_errors_of_each_check_when_several_keep_failing() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"build\", shell = true, command = \"printf 'a.c:1:1: error: stuck\\\\n'; exit 1\" },\n  { name = \"lint\", shell = true, command = \"printf 'b.c:1:1: error: one\\\\nb.c:2:1: error: two\\\\n'; exit 1\" },\n]\n",
    );
    repo.commit_all("init");
    for _ in 0..2 {
        repo.verdict(&["--all-files"]);
    }
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 4, "{v:#}");
    assert!(
        v["notes"].to_string().contains(
            "the same 3 error(s) failed 3 runs in a row: a person is needed. They keep coming back in checks `build` (1) and `lint` (2): their findings (and the summary) name them."
        ),
        "{:#}",
        v["notes"]
    );
}

/// `cargo clippy` on a crate with three warnings, as recorded in
/// `fixtures/diagnostics/cargo/clippy-warn.txt`.
fn clippy_warnings() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/diagnostics/cargo/clippy-warn.txt"
    );
    std::fs::read_to_string(path).unwrap()
}

/// A `lint` check, read with the cargo parser, whose command prints
/// `output` and exits 1: a wrapper that fails on any warning.
fn failing_lint(output: &str) -> (TestRepo, Tools) {
    let tools = Tools::new();
    tools.prints("lint-strict", output, 1);
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"lint\", command = \"lint-strict\", parser = \"cargo\" } ]\n",
    );
    repo.commit_all("init");
    (repo, tools)
}

/// The human report's details of a check, up to the summary.
fn details(stdout: &str) -> &str {
    stdout.split("\nsummary\n").next().unwrap()
}

#[test]
fn a_check_failing_on_warnings_alone_does_not_show_them_again_in_its_output_tail() {
    let (repo, tools) = failing_lint(&clippy_warnings());
    let run = repo.phasegate_with(&["run", "--all-files"], &[("PATH", &tools.path())]);
    assert_eq!(run.code, 1, "{run:?}");
    let shown = details(&run.stdout);
    // Each warning's help is shown once, under the warning.
    assert_eq!(shown.matches("help: remove `return`").count(), 1, "{shown}");
    assert!(!shown.contains("last lines of output:"), "{shown}");
    assert!(
        shown.contains("check `lint` failed (exit 1):     Finished `dev` profile"),
        "{shown}"
    );
    assert!(
        shown.contains("its last lines of output repeat this check's findings"),
        "{shown}"
    );
    // The verdict keeps the tail whole.
    let (_, v) = repo.verdict_with(&["--all-files"], &[("PATH", &tools.path())]);
    assert!(
        v["diagnostics"]
            .to_string()
            .contains("last lines of output:"),
        "{v:#}"
    );
}

#[test]
fn an_output_tail_that_holds_an_error_nobody_parsed_is_shown_under_the_warnings() {
    let output = format!(
        "{}Segmentation fault (core dumped)\nmake: *** [Makefile:3: lint] Error 139\n",
        clippy_warnings()
    );
    let (repo, tools) = failing_lint(&output);
    let run = repo.phasegate_with(&["run", "--all-files"], &[("PATH", &tools.path())]);
    assert_eq!(run.code, 1, "{run:?}");
    let shown = details(&run.stdout);
    assert!(shown.contains("last lines of output:"), "{shown}");
    assert!(
        shown.contains("│ Segmentation fault (core dumped)"),
        "{shown}"
    );
    assert!(!shown.contains("repeat this check's findings"), "{shown}");
}
