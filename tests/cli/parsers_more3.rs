//! Recorded outputs of mocha hooks, quoted test titles and crashed xdist workers, parsed into diagnostics.

use crate::parsers_js::{findings, replaying};

/// A failing mocha hook is no test's failure: its finding says which hook
/// failed and for which test it ran, at the assertion inside the hook, or,
/// when the hook timed out and its stack is Node's timers alone, at the
/// hook's declaration in its own suite (not an earlier suite's hook of the
/// same kind). A test whose quoted title holds escaped quotes and
/// backslashes is found at its declaration when it times out.
#[test]
fn mocha_hooks_are_placed_at_the_hook_and_named_with_their_test() {
    // mocha 11.8.0 (fixtures/diagnostics/mocha, "Failing hooks and a quoted
    // title that times out").
    let repo = replaying(
        "mocha/mocha-hooks.txt",
        "/tmp/rec-q/js/mh",
        5,
        &[("test/hooks.test.js", "mocha/hooks.test.js.txt")],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    let want = [
        (
            "test/hooks.test.js:5",
            "setup > \"before all\" hook for \"never runs\"",
            "\"before all\" hook for \"never runs\": Expected values to be strictly equal:",
        ),
        (
            "test/hooks.test.js:15",
            "each > \"before each\" hook for \"first case\"",
            "\"before each\" hook for \"first case\": Expected values to be strictly deep-equal:",
        ),
        (
            "test/hooks.test.js:24",
            "slow hook > \"before each\" hook for \"waits\"",
            "\"before each\" hook for \"waits\": Error: Timeout of 2000ms exceeded.",
        ),
        (
            "test/hooks.test.js:35",
            "named hook > \"after each\" hook: close the pool for \"uses the pool\"",
            "\"after each\" hook: close the pool for \"uses the pool\": Error: pool still busy",
        ),
        (
            "test/hooks.test.js:44",
            "quoted > waits for \"ready\" \\ forever",
            "Error: Timeout of 2000ms exceeded.",
        ),
    ];
    assert_eq!(found.len(), want.len(), "{found:?}");
    for ((at, _, test, message), (place, name, starts)) in found.iter().zip(want) {
        assert_eq!((at.as_str(), test.as_str()), (place, name), "{message}");
        assert!(message.starts_with(starts), "{place}: {message}");
    }
}

/// Titles with quotes and backslashes (`it('says "hi" \\ ok', ...)`) keep
/// them as the runner printed them, in its default reporter and its JSON
/// report alike, and each failure is at its assertion, its message the
/// assertion's first line (the title inside it too). vitest's JSON report
/// loses a timeout's reason (`STACK_TRACE_ERROR`): the finding says so and
/// names the test rather than repeating vitest's placeholder.
#[test]
fn quoted_titles_keep_their_quotes_and_backslashes_in_either_report() {
    // jest 30.5.2 and vitest 4.1.12 (fixtures/diagnostics/jest30 and
    // vitest, "Titles with quotes and backslashes").
    let titles = [
        "says \"hi\" \\ ok",
        "it's a \\path\\ and 'single'",
        "back`tick and \\n",
        "names \"itself\" \\ here",
        "waits for \"ready\" \\ forever",
    ];
    for (output, recorded_in, fixture, joiner, lines, firsts) in [
        (
            "jest30/jest-quotes.txt",
            "/tmp/rec-q/js/jq",
            "jest30/quotes.test.js.txt",
            " › ",
            [3, 7, 11, 15, 18],
            [
                "expect(received).toBe(expected) // Object.is equality",
                "expect(received).toEqual(expected) // deep equality",
                "expect(received).toBe(expected) // Object.is equality",
                "expect(received).toBe(expected) // Object.is equality",
                "thrown: \"Exceeded timeout of 200 ms for a test.",
            ],
        ),
        (
            "jest30/jest-quotes.json",
            "/tmp/rec-q/js/jq",
            "jest30/quotes.test.js.txt",
            " › ",
            [3, 7, 11, 15, 18],
            [
                "expect(received).toBe(expected) // Object.is equality",
                "expect(received).toEqual(expected) // deep equality",
                "expect(received).toBe(expected) // Object.is equality",
                "expect(received).toBe(expected) // Object.is equality",
                "thrown: \"Exceeded timeout of 200 ms for a test.",
            ],
        ),
        (
            "vitest/vitest-quotes.txt",
            "/tmp/rec-q/js/vq",
            "vitest/quotes.test.js.txt",
            " > ",
            [5, 9, 13, 17, 20],
            [
                "AssertionError: expected 'hi' to be 'hello' // Object.is equality",
                "AssertionError: expected [ 1, 2 ] to deeply equal [ 1, 3 ]",
                "AssertionError: expected 2 to be 3 // Object.is equality",
                "AssertionError: expected 'greets \"world\" > names \"itself\" \\ here' to be 'someone else' // Object.is equality",
                "Error: Test timed out in 200ms.",
            ],
        ),
        (
            "vitest/vitest-quotes.json",
            "/tmp/rec-q/js/vq",
            "vitest/quotes.test.js.txt",
            " > ",
            [5, 9, 13, 17, 20],
            [
                "AssertionError: expected 'hi' to be 'hello' // Object.is equality",
                "AssertionError: expected [ 1, 2 ] to deeply equal [ 1, 3 ]",
                "AssertionError: expected 2 to be 3 // Object.is equality",
                "AssertionError: expected 'greets \"world\" > names \"itself\" \\ here' to be 'someone else' // Object.is equality",
                "test `greets \"world\" > waits for \"ready\" \\ forever` failed after 201 ms with no reason in vitest's JSON report (`STACK_TRACE_ERROR`, which it gives a test that timed out); vitest's default reporter prints the reason",
            ],
        ),
    ] {
        let repo = replaying(output, recorded_in, 1, &[("test/quotes.test.js", fixture)]);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        let got: Vec<(String, String, String)> = found
            .iter()
            .map(|(at, _, test, message)| {
                let first = message.lines().next().unwrap_or_default();
                (at.clone(), test.clone(), first.to_string())
            })
            .collect();
        let want: Vec<(String, String, String)> = titles
            .iter()
            .zip(lines)
            .zip(firsts)
            .map(|((title, line), first)| {
                (
                    format!("test/quotes.test.js:{line}"),
                    format!("greets \"world\"{joiner}{title}"),
                    first.to_string(),
                )
            })
            .collect();
        assert_eq!(got, want, "{output}");
    }
}

/// A test that ends its pytest-xdist worker (`os._exit(1)`) leaves no
/// traceback, only xdist's word that the worker crashed, which the short
/// summary cuts. It is one finding at the test's `def`, naming the test,
/// with xdist's whole line and what to do; the run still fails, whether
/// xdist replaced the worker or was told not to.
#[test]
fn a_test_that_crashed_its_xdist_worker_is_found_at_its_definition() {
    // pytest 9.2.0 with pytest-xdist 3.8.0 (fixtures/diagnostics/pytest,
    // "A pytest-xdist worker that crashes").
    for (output, worker) in [
        ("pytest/pytest-xdist-crash.txt", "gw1"),
        ("pytest/pytest-xdist-restart0.txt", "gw0"),
    ] {
        let repo = replaying(
            output,
            "/tmp/rec-q/py",
            1,
            &[
                ("tests/test_worker.py", "pytest/test_worker.py.txt"),
                ("tests/test_other.py", "pytest/test_other.py.txt"),
            ],
        );
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), 2, "{output}: {found:?}");
        let (at, code, test, message) = &found[0];
        assert_eq!(
            (at.as_str(), code.as_str(), test.as_str()),
            (
                "tests/test_worker.py:8",
                "WorkerCrashed",
                "tests/test_worker.py::test_crashes_the_worker"
            ),
            "{output}"
        );
        assert!(
            message.starts_with(&format!(
                "worker '{worker}' crashed while running 'tests/test_worker.py::test_crashes_the_worker': "
            )) && message.contains("without `-n`"),
            "{output}: {message}"
        );
        let (at, _, test, message) = &found[1];
        assert_eq!(
            (at.as_str(), test.as_str(), message.as_str()),
            (
                "tests/test_other.py:6",
                "tests/test_other.py::test_other_fails",
                "assert (2 * 2) == 5"
            ),
            "{output}"
        );
    }
}
