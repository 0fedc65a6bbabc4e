//! Parsers: mocha, vitest, xdist, jest, ts-jest, mypy and go output that earlier parsing missed.

use crate::parsers_js::{findings, recording, replaying};
use crate::support::{check, TestRepo};

/// The diagnostics of the check `tests`, whole.
fn diagnostics(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["check"] == "tests")
        .collect()
}

#[test]
fn a_mocha_timeout_is_placed_at_its_test_and_its_message_names_no_absolute_path() {
    // mocha 12.0.3 ends a timeout's message with the test file's absolute
    // path: `... ensure it resolves. (/tmp/rec-p3/js/mt/test/slow.test.js)`.
    let repo = replaying(
        "mocha/mocha-timeout.txt",
        "/tmp/rec-p3/js/mt",
        1,
        &[("test/slow.test.js", "mocha/slow.test.js.txt")],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    let (place, _, test, message) = &found[0];
    assert_eq!(
        (place.as_str(), test.as_str()),
        ("test/slow.test.js:4", "slow > never resolves")
    );
    assert!(
        message.starts_with("Error: Timeout of 200ms exceeded.")
            && message.ends_with("ensure it resolves."),
        "{message}"
    );
    let root = repo.path().to_string_lossy().into_owned();
    assert!(
        !message.contains(&root) && !message.contains("(/"),
        "{message}"
    );
}

#[test]
fn a_vitest_title_holding_the_joiner_is_found_at_its_own_declaration() {
    // vitest 4.1.12 joins `describe('parse')` and `test('a > b')` as
    // `parse > a > b`; neither failure has a frame (a thrown string, a
    // rejected object), and a test titled `b` is declared above them.
    let repo = replaying(
        "vitest/vitest-arrow.txt",
        "/tmp/rec-g/vt",
        1,
        &[("test/arrow.test.js", "vitest/arrow.test.js.txt")],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let places: Vec<(String, String)> = findings(&v)
        .into_iter()
        .map(|(place, _, test, _)| (place, test))
        .collect();
    assert_eq!(
        places,
        [
            (
                "test/arrow.test.js:8".to_string(),
                "parse > a > b".to_string()
            ),
            (
                "test/arrow.test.js:12".to_string(),
                "parse > x > y rejects".to_string()
            ),
        ]
    );
}

#[test]
fn a_test_that_crashed_its_xdist_worker_under_tb_no_is_placed_at_its_def() {
    // pytest 9.2.0 with pytest-xdist 3.8.0 and `--tb=no`: the short
    // summary's cut line is all that is said of the crashed test.
    let repo = replaying(
        "pytest/pytest-xdist-tbno.txt",
        "/tmp/rec-g/py",
        1,
        &[
            ("tests/test_worker.py", "pytest/test_worker.py.txt"),
            ("tests/test_other.py", "pytest/test_other.py.txt"),
        ],
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let mut found = findings(&v);
    found.sort();
    assert_eq!(found.len(), 2, "{found:?}");
    let (place, code, test, message) = &found[0];
    assert_eq!(
        (place.as_str(), code.as_str(), test.as_str()),
        (
            "tests/test_other.py:5",
            "AssertionError",
            "tests/test_other.py::test_other_fails"
        )
    );
    assert_eq!(message, "assert (2 * 2) == 5");
    let (place, code, test, message) = &found[1];
    assert_eq!(
        (place.as_str(), code.as_str(), test.as_str()),
        (
            "tests/test_worker.py:8",
            "WorkerCrashed",
            "tests/test_worker.py::test_crashes_the_worker"
        )
    );
    assert!(
        message.starts_with(
            "worker `gw1` crashed while running `tests/test_worker.py::test_crashes_the_worker`: "
        ) && message.contains("without `-n`"),
        "{message}"
    );
}

/// A repository whose `tests` check runs `jest --json` and prints
/// `shown` of the recorded report, exiting `exit`.
fn jest_json_printing(shown: &str, exit: i32) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", shell = true, command = \"{shown} '{}'; exit {exit}\" }} ]\n",
        recording("jest30/jest.json")
    ));
    repo
}

#[test]
fn a_jest_json_report_cut_short_fails_the_check_saying_so_even_at_exit_zero() {
    // jest 30.5.2's report cut after 300 bytes: it opens and never closes.
    let repo = jest_json_printing("head -c 300", 0);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    let found = findings(&v);
    assert_eq!(found.len(), 1, "{found:?}");
    let (place, code, _, message) = &found[0];
    assert_eq!((place.as_str(), code.as_str()), ("-", "REPORT_UNREADABLE"));
    assert!(
        message.starts_with("jest's `--json` report is cut short")
            && message.contains("run the tests again"),
        "{message}"
    );
}

#[test]
fn a_whole_jest_json_report_is_read_as_before() {
    // The same report whole: its failures, and no word of a cut.
    let repo = jest_json_printing("cat", 1);
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = findings(&v);
    assert!(!found.is_empty(), "{v:#}");
    assert!(
        found
            .iter()
            .all(|(_, code, _, _)| code != "REPORT_UNREADABLE"),
        "{found:?}"
    );
}

#[test]
fn ts_jest_type_errors_are_typecheck_findings_at_their_place_with_their_code() {
    // jest 30.5.2 with ts-jest 29.4.15 and TypeScript 6.0.3: the suite
    // fails to run on two type errors, shown in tsc's pretty form (in
    // colour whatever NO_COLOR says), in the human report and, under
    // `--json`, in the report's suite message too.
    let sources = [
        ("src/math.ts", "jest30/tsjest-math.ts.txt"),
        ("src/math.test.ts", "jest30/tsjest-math.test.ts.txt"),
    ];
    for output in ["jest30/jest-tsjest.txt", "jest30/jest-tsjest-json.txt"] {
        let repo = replaying(output, "/tmp/rec-g/tsj", 1, &sources);
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let read: Vec<(String, u64, u64, String, String, String)> = diagnostics(&v)
            .into_iter()
            .map(|d| {
                (
                    d["file"].as_str().unwrap_or("-").to_string(),
                    d["line"].as_u64().unwrap_or(0),
                    d["column"].as_u64().unwrap_or(0),
                    d["code"].as_str().unwrap_or("-").to_string(),
                    d["origin"].as_str().unwrap_or("-").to_string(),
                    d["message"].as_str().unwrap_or("-").to_string(),
                )
            })
            .collect();
        let typed = |line, column, code: &str, message: &str| {
            (
                "src/math.test.ts".to_string(),
                line,
                column,
                code.to_string(),
                "typecheck".to_string(),
                message.to_string(),
            )
        };
        assert_eq!(
            read,
            [
                typed(
                    4,
                    9,
                    "TS2322",
                    "Type 'number' is not assignable to type 'string'."
                ),
                typed(
                    9,
                    17,
                    "TS2345",
                    "Argument of type 'string' is not assignable to parameter of type 'number'."
                ),
            ],
            "{output}"
        );
    }
}

#[test]
fn mypy_json_ends_are_read_and_its_start_kept() {
    // mypy 2.4.1's `-O json --no-native-parser`: `"column": 21,
    // "end_line": 1, "end_column": 24` for the string `"a"`, the 19th to
    // 21st characters of a line that holds `😀` before it.
    let repo = TestRepo::new();
    repo.write(
        "cols.py",
        &std::fs::read_to_string(recording("python/mypy-wide.py.txt")).unwrap(),
    );
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", shell = true, command = \"cat '{}'; exit 1\" }} ]\n",
        recording("python/mypy-wide-bytes.json")
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let found = diagnostics(&v);
    assert_eq!(found.len(), 4, "{v:#}");
    let first = found[0];
    assert_eq!(
        (
            first["file"].as_str(),
            first["line"].as_u64(),
            first["column"].as_u64(),
            first["end_line"].as_u64(),
            first["end_column"].as_u64(),
            first["code"].as_str(),
        ),
        (
            Some("cols.py"),
            Some(1),
            Some(19),
            Some(1),
            Some(21),
            Some("assignment")
        ),
        "{first:#}"
    );
}
