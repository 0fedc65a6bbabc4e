//! JavaScript and TypeScript test reporters as they really print.

use crate::support::{check, TestRepo};

/// A recorded output of `fixtures/diagnostics/<path>`.
pub(crate) fn recording(path: &str) -> String {
    format!("{}/fixtures/diagnostics/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A repository holding `sources` (its path, the fixture it is copied
/// from), whose `tests` check prints the recorded `output` as if the tool
/// had run here (the directory it was recorded in, `recorded_in`, read as
/// the repository) and exits `exit`, as the tool did. The command names no
/// tool: the output decides the parser, as for `npm test`.
pub(crate) fn replaying(
    output: &str,
    recorded_in: &str,
    exit: i32,
    sources: &[(&str, &str)],
) -> TestRepo {
    let repo = TestRepo::new();
    for (path, fixture) in sources {
        repo.write(path, &std::fs::read_to_string(recording(fixture)).unwrap());
    }
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", shell = true, command = \"sed \\\"s#{recorded_in}#$PWD#g\\\" '{}'; exit {exit}\" }} ]\n",
        recording(output)
    ));
    repo
}

/// The diagnostics of the check `tests`: place, code, test and message.
pub(crate) fn findings(v: &serde_json::Value) -> Vec<(String, String, String, String)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["check"] == "tests")
        .map(|d| {
            let place = match (d["file"].as_str(), d["line"].as_u64()) {
                (Some(file), Some(line)) => format!("{file}:{line}"),
                (Some(file), None) => file.to_string(),
                _ => "-".to_string(),
            };
            (
                place,
                d["code"].as_str().unwrap_or("-").to_string(),
                d["test"].as_str().unwrap_or("-").to_string(),
                d["message"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

/// The run of a check that replays `output` fails with one finding, that
/// no tests ran, which names what to do (`advice`), and the summary leads
/// with it rather than with the tool's last lines.
fn fails_saying_no_tests_ran(output: &str, recorded_in: &str, advice: &str) {
    let repo = replaying(output, recorded_in, 1, &[]);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{output}: {v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{output}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{output}: {found:?}");
    let (place, code, _, message) = &found[0];
    assert_eq!(
        (place.as_str(), code.as_str()),
        ("-", "NO_TESTS_COLLECTED"),
        "{output}"
    );
    assert!(
        message.starts_with("no test") && message.contains(advice),
        "{output}: {message}"
    );
    let summary = v["summary"][0].as_str().unwrap_or_default();
    assert!(summary.contains("no test"), "{output}: {summary}");
}

#[test]
fn jest_finding_no_test_file_fails_with_what_to_do() {
    // jest 30.5.2: `No tests found, exiting with code 1`.
    fails_saying_no_tests_ran(
        "jest30/jest-none.txt",
        "/tmp/jsr/jest-empty",
        "--passWithNoTests",
    );
}

#[test]
fn vitest_finding_no_test_file_fails_with_what_to_do() {
    // vitest 4.1.12: `No test files found, exiting with code 1`, and its
    // JSON report of the same: no results, `success: false`.
    for output in ["vitest/vitest-none.txt", "vitest/vitest-none.json"] {
        fails_saying_no_tests_ran(output, "/tmp/jsr/vt-empty", "--passWithNoTests");
    }
}

#[test]
fn bun_finding_no_test_file_fails_with_what_to_do() {
    // bun 1.4.5: `No tests found!`, or the filters it was given that
    // matched no test file.
    fails_saying_no_tests_ran(
        "bun/bun-none.txt",
        "/tmp/jsr/bun-empty",
        "--pass-with-no-tests",
    );
    fails_saying_no_tests_ran(
        "bun/bun-none-filter.txt",
        "/tmp/jsr/bun-empty",
        "filters `nomatch`",
    );
}

#[test]
fn mocha_finding_no_test_file_fails_with_what_to_do() {
    // mocha 11.8.0: `Error: No test files found: "test"`.
    fails_saying_no_tests_ran(
        "mocha/mocha-none.txt",
        "/tmp/jsr/mocha-empty",
        "`spec` in mocha's configuration",
    );
}

#[test]
fn a_mocha_suite_whose_title_ends_with_a_colon_names_the_test() {
    // mocha 11.8.0 over `describe("config:", () => it("reads the port"))`:
    // `1) config:` then `reads the port:`, the colon of the first the
    // suite's own, which stays in the test's name.
    let repo = replaying(
        "mocha/mocha-colon.txt",
        "/tmp/jsr/mocha",
        1,
        &[("test/colon.test.js", "mocha/colon.test.js.txt")],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    let (place, _, test, message) = &found[0];
    assert_eq!(
        (place.as_str(), test.as_str()),
        ("test/colon.test.js:5", "config: > reads the port")
    );
    assert!(
        message.starts_with("Expected values to be strictly equal: 1 !== 2"),
        "{message}"
    );
}

#[test]
fn node_tap_names_a_test_as_its_code_does() {
    // Node.js 20.20.2: `test("reads C:\\dir and a:b")` is `not ok 1 - reads
    // C:\\dir and a:b` in TAP, which escapes the backslash, and `reads
    // C:\dir and a:b` in spec: one test, one name.
    for output in [
        "node-test/node20-deps-tap.txt",
        "node-test/node20-deps-spec.txt",
    ] {
        let repo = replaying(
            output,
            "/tmp/jsr/nt",
            1,
            &[("test/helper.test.js", "node-test/deps-helper.test.js.txt")],
        );
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let places: Vec<(String, String)> = findings(&v)
            .into_iter()
            .map(|(place, _, test, _)| (place, test))
            .collect();
        assert_eq!(
            places,
            [
                (
                    "test/helper.test.js:5".to_string(),
                    "sums through a helper".to_string()
                ),
                (
                    "test/helper.test.js:11".to_string(),
                    "reads C:\\dir and a:b".to_string()
                ),
            ],
            "{output}"
        );
    }
}

#[test]
fn a_failure_raised_inside_a_dependency_is_placed_in_the_test_file() {
    // Each runner over a test that calls `expectSum` of the package
    // `check-helper` (in `node_modules/`), whose `assert.strictEqual`
    // fails: the stack's first frame is the package's, the finding is at
    // the call in the test file.
    for (output, recorded_in, source) in [
        (
            "jest30/jest-deps.txt",
            "/tmp/jsr/jest",
            "jest30/deps-helper.test.js.txt",
        ),
        (
            "jest30/jest-deps.json",
            "/tmp/jsr/jest",
            "jest30/deps-helper.test.js.txt",
        ),
        (
            "vitest/vitest-deps.txt",
            "/tmp/jsr/vt",
            "vitest/deps-helper.test.js.txt",
        ),
        (
            "vitest/vitest-deps.json",
            "/tmp/jsr/vt",
            "vitest/deps-helper.test.js.txt",
        ),
        (
            "bun/bun-deps.txt",
            "/tmp/jsr/bun",
            "bun/deps-helper.test.js.txt",
        ),
        (
            "mocha/mocha-deps.txt",
            "/tmp/jsr/mocha",
            "mocha/deps-helper.test.js.txt",
        ),
        (
            "node-test/node20-deps-tap.txt",
            "/tmp/jsr/nt",
            "node-test/deps-helper.test.js.txt",
        ),
    ] {
        let repo = replaying(output, recorded_in, 1, &[("test/helper.test.js", source)]);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        let helper = found
            .iter()
            // mocha's recording holds the test in `describe("helpers")`.
            .find(|(_, _, test, _)| {
                test == "sums through a helper" || test == "helpers > sums through a helper"
            })
            .unwrap_or_else(|| panic!("{output}: {found:?}"));
        assert!(
            helper.0.starts_with("test/helper.test.js:"),
            "{output}: {helper:?}"
        );
        assert!(
            found
                .iter()
                .all(|(place, ..)| !place.contains("node_modules")),
            "{output}: {found:?}"
        );
    }
}
