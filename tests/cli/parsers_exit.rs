//! What the parsers make of a runner that found no tests, and of its exit status.

use crate::parsers_js::{findings, replaying};
use crate::support::check;

/// A runner says it found no test whatever its exit status; a command that
/// asks for a run without tests to pass exits 0, and the check passes with
/// no finding that says it failed. The same output under the runner's
/// failing status is the finding.
#[test]
fn a_run_allowed_to_find_no_tests_passes_without_an_error() {
    for (output, recorded_in, failing) in [
        // bun 1.4.5 prints the same `No tests found!` with
        // `--pass-with-no-tests`, and exits 0 (fixtures/diagnostics/bun).
        ("bun/bun-none.txt", "/tmp/jsr/bun-empty", 1),
        // pytest 9.2.0's `no tests ran` (exit 5), run as
        // `pytest || [ $? -eq 5 ]` (or with a plugin that makes 5 a 0).
        ("pytest/pytest-no-tests.txt", "/tmp/rec-pr/none", 5),
        ("pytest/pytest-no-tests-q.txt", "/tmp/rec-pr/none", 5),
    ] {
        let repo = replaying(output, recorded_in, 0, &[]);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 0, "{output}: {v:#}");
        assert_eq!(v["status"], "passed", "{output}: {v:#}");
        assert_eq!(check(&v, "tests")["status"], "passed", "{output}");
        assert_eq!(findings(&v), [], "{output}");
        assert_eq!(check(&v, "tests")["diagnostics"], 0, "{output}");

        let repo = replaying(output, recorded_in, failing, &[]);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), 1, "{output}: {found:?}");
        assert_eq!(found[0].1, "NO_TESTS_COLLECTED", "{output}");
    }
}

/// mocha's spec reporter prints a failure's suites' titles and its own one
/// a line; the test is named by all of them, as vitest names it, so two
/// tests of one title in two suites are two names.
#[test]
fn a_mocha_failure_is_named_with_its_suites() {
    // mocha 11.8.0 over `describe("arithmetic")` holding two failing tests
    // and `describe("nested")` with a third (fixtures/diagnostics/mocha).
    let repo = replaying(
        "mocha/mocha.txt",
        "/tmp/jsrec/mocha",
        3,
        &[
            ("src/math.js", "mocha/math.js.txt"),
            ("test/math.test.js", "mocha/math.test.js.txt"),
        ],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let named: Vec<(String, String)> = findings(&v)
        .into_iter()
        .map(|(place, _, test, _)| (place, test))
        .collect();
    assert_eq!(
        named,
        [
            (
                "test/math.test.js:6".to_string(),
                "arithmetic > adds two numbers".to_string()
            ),
            (
                "src/math.js:7".to_string(),
                "arithmetic > divides by zero".to_string()
            ),
            (
                "test/math.test.js:19".to_string(),
                "arithmetic > nested > adds negatives".to_string()
            ),
        ]
    );
}

/// pytest stops before its session header on a plugin it cannot import or
/// a configuration file it cannot read (exit 4), in one `ERROR: ` line:
/// that line is the check's one finding, at the file and line pytest
/// names, and the summary leads with it.
#[test]
fn pytest_that_cannot_start_says_what_to_fix_and_where() {
    for (output, recorded_in, source, place, words) in [
        (
            "pytest/pytest-plugin.txt",
            "/tmp/rec-pr/plugin",
            None,
            "-",
            "could not import the plugin `nosuchplugin`",
        ),
        (
            "pytest/pytest-ini-broken.txt",
            "/tmp/rec-pr/badini",
            Some(("pytest.ini", "pytest/badini-pytest.ini.txt")),
            "pytest.ini:1",
            "could not use its configuration `pytest.ini`: unexpected value continuation",
        ),
        (
            "pytest/pytest-toml-broken.txt",
            "/tmp/rec-pr/badtoml",
            Some(("pyproject.toml", "pytest/badtoml-pyproject.toml.txt")),
            "pyproject.toml:6",
            "could not use its configuration `pyproject.toml`: Illegal character",
        ),
        (
            "pytest/pytest-minversion.txt",
            "/tmp/rec-pr/minversion",
            Some(("pytest.ini", "pytest/minversion-pytest.ini.txt")),
            "pytest.ini",
            "'minversion' requires pytest-99",
        ),
    ] {
        let sources: Vec<(&str, &str)> = source.into_iter().collect();
        let repo = replaying(output, recorded_in, 4, &sources);
        let (v, message) = one_usage_error(&repo, output, place);
        assert!(message.contains(words), "{output}: {message}");
        let summary = v["summary"][0].as_str().unwrap_or_default();
        assert!(summary.contains(words), "{output}: {summary}");
    }
}

/// The run of a replayed pytest that could not start (exit 4): one
/// `USAGE_ERROR` finding, at `place`. The verdict and its message.
pub(crate) fn one_usage_error(
    repo: &crate::support::TestRepo,
    output: &str,
    place: &str,
) -> (serde_json::Value, String) {
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{output}: {v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{output}: {found:?}");
    let (at, code, _, message) = &found[0];
    assert_eq!(
        (at.as_str(), code.as_str()),
        (place, "USAGE_ERROR"),
        "{output}"
    );
    let message = message.clone();
    (v, message)
}
