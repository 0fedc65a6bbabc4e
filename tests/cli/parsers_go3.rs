//! Go and jest output the parsers once left unplaced or silent, recorded from real runs.

use crate::parsers_go_more::{findings, located, only_finding};
use crate::support::{check, write_executable, TestRepo};

/// A recorded output or sample source, `fixtures/diagnostics/<path>`.
pub(crate) fn recording(path: &str) -> String {
    format!("{}/fixtures/diagnostics/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A sample source's text.
pub(crate) fn source(path: &str) -> String {
    std::fs::read_to_string(recording(path)).unwrap()
}

/// A repository whose one check `name` prints the recorded go `output`
/// and exits `exit`, as go did, in `cwd` (the root when `None`).
fn replaying_go(repo: &TestRepo, name: &str, output: &str, exit: i32, cwd: Option<&str>) {
    let cwd = cwd.map_or_else(String::new, |dir| format!(", cwd = \"{dir}\""));
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"{name}\", shell = true, command = \"cat '{}'; exit {exit}\", parser = \"go\"{cwd} }} ]\n",
        recording(&format!("go/{output}"))
    ));
}

/// An executable `program` at the repository's root that prints the
/// recorded `output` and exits `exit`, as the real program did.
fn replayer(repo: &TestRepo, program: &str, output: &str, exit: i32) {
    write_executable(
        &repo.path().join(program),
        &format!("#!/bin/sh\ncat '{}'\nexit {exit}\n", recording(output)),
    );
}

/// A repository whose one check `tests` runs `command` (in a shell), read
/// by `parser`.
fn testing(repo: &TestRepo, command: &str, parser: &str) {
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", shell = true, command = \"{command}\", parser = \"{parser}\" }} ]\n",
    ));
}

/// What every finding of a directory outside the module ends with.
const OUTSIDE_FIX: &str = "set the check's `cwd` in phasegate.toml to the directory of the module that holds it (the one with its go.mod), or fix the pattern in the check's command";

/// go run in the module `backend/` on `../tools/gen` (or `../tools/...`),
/// which no module holds: `directory ../tools/gen outside main module or
/// its selected dependencies` (go 1.19 and 1.24 alike, go 1.24's `go
/// test` under a `# ../tools/gen` header, its `-json` as `build-output`
/// events) is one error at `tools/gen`, relative to the repository, not
/// to the check, that says what to do, not go's last line.
#[test]
fn a_directory_outside_the_module_is_an_error_at_it_that_says_to_set_cwd() {
    for (output, dir, says) in [
        (
            "go-outside-build.txt",
            "tools/gen",
            "outside the Go module the check runs in: a pattern of the check's command names this directory",
        ),
        (
            "go124-outside-test.txt",
            "tools/gen",
            "outside the Go module the check runs in: a pattern of the check's command names this directory",
        ),
        (
            "go124-outside-test.json",
            "tools/gen",
            "outside the Go module the check runs in: a pattern of the check's command names this directory",
        ),
        (
            "go-outside-pattern-build.txt",
            "tools",
            "outside the Go module the check runs in: the pattern `../tools/...` names this directory",
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("backend/go.mod", &source("go/go.mod.txt"))
            .stage("backend/calc/calc.go", &source("go/calc.go.txt"))
            .stage("tools/gen/gen.go", &source("go/outside-gen.go.txt"));
        replaying_go(&repo, "build", output, 1, Some("backend"));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let message = only_finding(&v, output, &format!("{dir}:null"), "error");
        assert!(message.starts_with(says), "{output}: {message}");
        assert!(message.ends_with(OUTSIDE_FIX), "{output}: {message}");
    }
}

/// A directory below the module's that a `go.mod` of its own makes
/// another module: go names it by package path (`main module
/// (example.com/shop) does not contain package
/// example.com/shop/tools/gen`); the finding is at its directory, found
/// through the module's `go.mod`, from a check run in a package
/// directory of the module too.
#[test]
fn a_directory_that_is_another_module_is_an_error_at_it() {
    for (output, cwd) in [
        ("go-nested-build.txt", None),
        ("go124-nested-test.txt", None),
        ("go-nested-build.txt", Some("calc")),
    ] {
        let repo = TestRepo::new();
        repo.stage("go.mod", &source("go/go.mod.txt"))
            .stage("calc/calc.go", &source("go/calc.go.txt"))
            .stage("tools/go.mod", &source("go/tools-go.mod.txt"))
            .stage("tools/gen/gen.go", &source("go/outside-gen.go.txt"));
        replaying_go(&repo, "build", output, 1, cwd);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            findings(&v),
            [(
                "tools/gen:null".to_string(),
                "error".to_string(),
                format!("outside the Go module the check runs in: this directory is below the module example.com/shop's, but a go.mod in it or between them makes it another module, so go has no package example.com/shop/tools/gen; {OUTSIDE_FIX}")
            )],
            "{output} in {cwd:?}: {v:#}"
        );
    }
}

/// The module of the recordings: `calc` with its `sub.go` whose
/// `//go:build` line does not parse, and `app`, which imports `calc`.
fn importing(repo: &TestRepo) {
    repo.stage("go.mod", &source("go/go.mod.txt"))
        .stage("calc/calc.go", &source("go/calc.go.txt"))
        .stage("calc/sub.go", &source("go/sub.go.txt"))
        .stage("app/app.go", &source("go/app.go.txt"))
        .stage("app/app_test.go", &source("go/app_test.go.txt"));
}

/// `go build ./app`, whose import of `calc` reaches the broken file: go
/// prints the import's place first (`app/app.go:6:2: sub.go: parsing
/// //go:build line: ...`). The error is at the broken line of
/// `calc/sub.go`; the import is a note.
#[test]
fn a_broken_build_constraint_reached_through_an_import_is_at_its_line() {
    for output in [
        "go-imported-constraint-build.txt",
        "go124-imported-constraint-test.txt",
        "go124-imported-constraint-test.json",
    ] {
        let repo = TestRepo::new();
        importing(&repo);
        replaying_go(&repo, "build", output, 1, None);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            findings(&v),
            [
                (
                    "calc/sub.go:1".to_string(),
                    "error".to_string(),
                    "parsing //go:build line: unexpected end of expression".to_string()
                ),
                (
                    "app/app.go:6".to_string(),
                    "note".to_string(),
                    "the package imported here cannot be built: sub.go: parsing //go:build line: unexpected end of expression".to_string()
                ),
            ],
            "{output}: {v:#}"
        );
    }
}

/// Another `sub.go` with a `//go:build` line: go 1.24's `-json` events
/// name the broken file's package (`ImportPath`); the text names only the
/// importer's place, whose import spec names the package: placed in both.
#[test]
fn a_broken_build_constraint_in_a_shared_file_name_is_placed_by_the_json_package() {
    for (output, error_at) in [
        ("go124-imported-constraint-test.json", "calc/sub.go:1"),
        ("go124-imported-constraint-test.txt", "calc/sub.go:1"),
        ("go-imported-constraint-build.txt", "calc/sub.go:1"),
    ] {
        let repo = TestRepo::new();
        importing(&repo);
        repo.stage("tools/sub.go", "//go:build linux\n\npackage tools\n");
        replaying_go(&repo, "build", output, 1, None);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            located(&v),
            [
                (error_at.to_string(), "error".to_string()),
                ("app/app.go:6".to_string(), "note".to_string()),
            ],
            "{output}: {v:#}"
        );
    }
}

/// A check declared to print jest's `--json` report (vitest's
/// `--reporter=json`) whose package script runs no test (`npm test --
/// --json` over `echo tests skipped`, exit 0): no report means no proof
/// that a test ran, so the check fails with a `REPORT_UNREADABLE` error
/// that says the report is missing, as a report cut short does.
#[test]
fn a_json_test_report_the_command_asks_for_and_never_prints_fails_the_check() {
    for (output, option, parser, runner) in [
        ("jest30/jest-json-npm-skipped.txt", "--json", "jest", "jest"),
        (
            "jest30/vitest-json-npm-skipped.txt",
            "--reporter=json",
            "vitest",
            "vitest",
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("package.json", "{\"name\": \"shop\", \"private\": true}\n");
        replayer(&repo, "npm", output, 0);
        testing(&repo, &format!("./npm test -- {option}"), parser);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
        let diagnostics = v["diagnostics"].as_array().unwrap();
        assert_eq!(diagnostics.len(), 1, "{output}: {v:#}");
        let d = &diagnostics[0];
        assert_eq!(d["code"], "REPORT_UNREADABLE", "{v:#}");
        assert_eq!(d["severity"], "error", "{v:#}");
        let message = d["message"].as_str().unwrap();
        assert!(
            message.contains("report is missing") && message.contains(&format!("run {runner}")),
            "{message}"
        );
    }
}

/// What the same declaration must not fail: jest's report on standard
/// output (read, a passing run), and one written to a file
/// (`--outputFile`, which jest says on standard error), the check picked
/// by its program (`parser = "auto"`).
#[test]
fn a_json_test_report_printed_or_written_to_a_file_passes() {
    for (output, command) in [
        ("jest30/jest-json-pass.txt", "./jest --json"),
        (
            "jest30/jest-json-outputfile.txt",
            "./jest --json --outputFile=out.json",
        ),
        // Sent elsewhere by the shell: nothing to expect.
        (
            "jest30/jest-json-outputfile.txt",
            "./jest --json > out.json",
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("package.json", "{\"name\": \"shop\", \"private\": true}\n")
            .stage("test/add.test.js", &source("jest30/add.test.js.txt"));
        replayer(&repo, "jest", output, 0);
        testing(&repo, command, "auto");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{command}: {v:#}");
        assert_eq!(check(&v, "tests")["status"], "passed", "{command}: {v:#}");
        assert_eq!(findings(&v), [], "{command}: {v:#}");
    }
}

/// The option that asks for the report is often far into the command,
/// past the words a parser is picked by; run without a shell, the check's
/// own argv must still say it.
#[test]
fn a_json_test_report_asked_for_past_a_commands_first_words_is_expected_too() {
    let repo = TestRepo::new();
    repo.stage("package.json", "{\"name\": \"shop\", \"private\": true}\n");
    replayer(&repo, "npm", "jest30/jest-json-npm-skipped.txt", 0);
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"./npm test -- --ci --runInBand --silent --coverage=false --maxWorkers=2 --json\", parser = \"jest\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let diagnostics = v["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{v:#}");
    assert_eq!(diagnostics[0]["code"], "REPORT_UNREADABLE", "{v:#}");
}
