//! Parsers on timeouts, workspaces, addopts and summaries, from real recordings.

use crate::parsers_exit::one_usage_error;
use crate::parsers_js::{findings, replaying};

/// pytest adds `addopts` to every run's command line, and argparse's error
/// names the option but not where it came from; the configuration file
/// pytest names under it holds it. The finding is at the line of that file
/// that passes the option, and says to fix `addopts`; an option the
/// check's command passed is still the command's.
#[test]
fn a_bad_option_in_addopts_is_placed_at_the_configuration_line_that_passes_it() {
    // pytest 9.2.0 (fixtures/diagnostics/pytest, "An option pytest turns down").
    for (output, recorded_in, source, fixture, place) in [
        (
            "pytest/pytest-addopts-ini.txt",
            "/tmp/rec-p3/addopts-ini",
            "pytest.ini",
            "pytest/addopts-pytest.ini.txt",
            "pytest.ini:3",
        ),
        (
            "pytest/pytest-addopts-toml.txt",
            "/tmp/rec-p3/addopts-toml",
            "pyproject.toml",
            "pytest/addopts-pyproject.toml.txt",
            "pyproject.toml:9",
        ),
        // A bad value for an option pytest knows: pytest says it came
        // `via addopts config`.
        (
            "pytest/pytest-addopts-choice.txt",
            "/tmp/rec-p3/addopts-choice",
            "pytest.ini",
            "pytest/addopts-choice-pytest.ini.txt",
            "pytest.ini:4",
        ),
    ] {
        let repo = replaying(
            output,
            recorded_in,
            4,
            &[
                (source, fixture),
                ("test_a.py", "pytest/addopts-test_a.py.txt"),
            ],
        );
        let (_, message) = one_usage_error(&repo, output, place);
        assert!(
            message.contains(&format!("`addopts` in `{source}`"))
                && message.contains("fix `addopts`"),
            "{output}: {message}"
        );
    }

    // The same error for an option of the check's command: the file
    // pytest names does not pass it.
    let repo = replaying(
        "pytest/pytest-cli-flag.txt",
        "/tmp/rec-p3/cli-flag",
        4,
        &[("pytest.ini", "pytest/cli-flag-pytest.ini.txt")],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    let (at, code, _, message) = &found[0];
    assert_eq!((at.as_str(), code.as_str()), ("-", "USAGE_ERROR"));
    assert!(
        message.contains("--no-such-flag") && message.contains("fix the check's command"),
        "{message}"
    );
}

/// A test that times out has no frame of its own: its stack is the
/// runner's timers (mocha), or there is none (bun). The runner names the
/// test's file, and the test's title finds its declaration there; never a
/// place inside `node_modules`, never nowhere.
#[test]
fn a_timed_out_js_test_is_placed_at_its_declaration() {
    // jest 30.5.2, vitest 4.1.12, mocha 12.0.3 and bun 1.4.5 over the same
    // test (fixtures/diagnostics/*, "A test that times out").
    for (output, recorded_in, fixture, place, says) in [
        (
            "jest30/jest-timeout.txt",
            "/tmp/rec-p3/js/jt",
            "jest30/slow.test.js.txt",
            "test/slow.test.js:2",
            "Exceeded timeout of 200 ms",
        ),
        (
            "vitest/vitest-timeout.txt",
            "/tmp/rec-p3/js/vt",
            "vitest/slow.test.js.txt",
            "test/slow.test.js:4",
            "Test timed out in 200ms",
        ),
        (
            "mocha/mocha-timeout.txt",
            "/tmp/rec-p3/js/mt",
            "mocha/slow.test.js.txt",
            "test/slow.test.js:4",
            "Timeout of 200ms exceeded",
        ),
        (
            "bun/bun-timeout.txt",
            "/tmp/rec-p3/js/bt",
            "bun/slow.test.js.txt",
            "test/slow.test.js:4",
            "timed out after 200ms",
        ),
    ] {
        let repo = replaying(output, recorded_in, 1, &[("test/slow.test.js", fixture)]);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), 1, "{output}: {found:?}");
        let (at, _, test, message) = &found[0];
        assert_eq!(at, place, "{output}: {message}");
        assert!(
            test.ends_with("never resolves") && message.contains(says),
            "{output}: {test}: {message}"
        );
    }
}
