//! Parsers against real tool output: pytest exit codes, ruff formats, cargo, JS reporters.

use crate::parsers_js::{recording, replaying};
use crate::support::check;

/// The diagnostics of the check `tests`: place, code and message.
fn findings(v: &serde_json::Value) -> Vec<(String, String, String)> {
    crate::parsers_js::findings(v)
        .into_iter()
        .map(|(place, code, _test, message)| (place, code, message))
        .collect()
}

#[test]
fn pytest_finding_no_test_fails_with_what_to_do() {
    // pytest 9.2.0 exits 5 when it collects no test: the check fails, and
    // says why in words, not with pytest's closing rule as the headline.
    let repo = replaying("pytest/pytest-no-tests.txt", "/tmp/rec-pr/none", 5, &[]);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    let (place, code, message) = &found[0];
    assert_eq!((place.as_str(), code.as_str()), ("-", "NO_TESTS_COLLECTED"));
    assert!(
        message.starts_with("no tests were collected") && message.contains("test_*.py"),
        "{message}"
    );
}

#[test]
fn pytest_deselecting_every_test_fails_saying_the_selection_is_empty() {
    let repo = replaying("pytest/pytest-deselected.txt", "/tmp/rec-pr/sel", 5, &[]);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].2.contains("all 2 tests collected were deselected"),
        "{found:?}"
    );
}

#[test]
fn pytest_stopped_by_a_conftest_hook_is_placed_at_the_hook() {
    // pytest 9.2.0 exits 3 (`INTERNALERROR>`) when a hook in `conftest.py`
    // raises: the finding is at the line that raised.
    let repo = replaying("pytest/pytest-internal.txt", "/tmp/rec-pr/internal", 3, &[]);
    repo.write(
        "conftest.py",
        &std::fs::read_to_string(recording("pytest/internal-conftest.py.txt")).unwrap(),
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    let (place, code, message) = &found[0];
    assert_eq!(
        (place.as_str(), code.as_str()),
        ("conftest.py:4", "RuntimeError")
    );
    assert!(message.contains("marker plugin broke"), "{message}");
}

#[test]
fn pytest_usage_error_is_the_finding_not_its_last_line() {
    // The last line pytest prints for an unknown option is `  rootdir:
    // /path`: the finding must be the option it did not know.
    let repo = replaying("pytest/pytest-usage.txt", "/tmp/rec-pr/none", 4, &[]);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].1, "USAGE_ERROR");
    assert!(
        found[0].2.contains("unrecognized arguments: --badflag"),
        "{found:?}"
    );
}
