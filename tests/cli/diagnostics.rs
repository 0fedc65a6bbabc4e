//! `phasegate diagnostics parse` on recorded tool output.

use crate::support::TestRepo;

fn fixture(path: &str) -> String {
    format!("{}/fixtures/diagnostics/{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn recorded_cargo_output_becomes_located_diagnostics_with_fingerprints() {
    let repo = TestRepo::new();
    let run = repo.phasegate(&[
        "diagnostics",
        "parse",
        "--format",
        "json",
        &fixture("cargo/build.txt"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["dropped"], 0);
    let first = &v["diagnostics"][0];
    assert_eq!(first["file"], "src/lib.rs");
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(7), Some(18))
    );
    assert_eq!(first["code"], "E0308");
    assert_eq!(first["tool"], "cargo");
    assert_eq!(first["fingerprint"].as_str().unwrap().len(), 16);
}

/// `phasegate diagnostics parse ARGS` reading `input` on standard input:
/// its standard output.
fn parse_stdin(repo: &TestRepo, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut all = vec!["diagnostics", "parse"];
    all.extend_from_slice(args);
    repo.phasegate_fed(&all, input).stdout
}

#[test]
fn standard_input_and_the_tools_directory() {
    let repo = TestRepo::new();
    repo.write("pkg/src/a.c", "int main() {}\n");
    let output = parse_stdin(
        &repo,
        &["--cwd", "pkg", "--format", "json"],
        b"src/a.c:1:5: warning: unused\r\nnoise\n./src/a.c:2:1: error: boom\n",
    );
    let v: serde_json::Value = serde_json::from_slice(&output).unwrap();
    let files: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        ["pkg/src/a.c", "pkg/src/a.c"],
        "paths are relative to the repository root"
    );

    let run = repo.phasegate(&["diagnostics", "parse", "--parser", "gneric", "-"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("did you mean `generic`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_directory_or_a_missing_file_as_the_input_is_a_usage_error_that_names_it() {
    let repo = TestRepo::new();
    repo.write("logs/a.log", "");
    let run = repo.phasegate(&["diagnostics", "parse", "logs"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("`logs` is a directory"),
        "{}",
        run.stderr
    );
    let run = repo.phasegate(&["diagnostics", "parse", "nope.log"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`nope.log`"), "{}", run.stderr);
    let run = repo.phasegate(&["diagnostics", "parse", "--cwd", "nowhere", "-"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("`--cwd nowhere` is not a directory"),
        "{}",
        run.stderr
    );
    // Under `--format json`, each error is one JSON document on stdout.
    for (args, says) in [
        (&["logs"][..], "is a directory"),
        (&["nope.log"][..], "`nope.log`"),
        (&["--parser", "gneric", "-"][..], "did you mean `generic`"),
        (&["--cwd", "nowhere", "-"][..], "not a directory"),
    ] {
        let mut all = vec!["diagnostics", "parse", "--format", "json"];
        all.extend_from_slice(args);
        let run = repo.phasegate(&all);
        assert_eq!(run.code, 2, "{args:?}");
        let error = run.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(error.contains(says), "{args:?}: {}", run.stdout);
    }
}

#[test]
fn the_human_form_shows_the_line_of_each_finding() {
    let repo = TestRepo::new();
    repo.write("src/a.c", "int main() {\n\treturn x;\n}\n");
    let output = parse_stdin(
        &repo,
        &["-"],
        b"src/a.c:2:9: error: use of undeclared identifier 'x'\nsrc/a.c:9: warning: no such line\n",
    );
    let text = String::from_utf8(output).unwrap();
    assert_eq!(
        text,
        "src/a.c:2:9 error use of undeclared identifier 'x'\n\
         \x20   ╭─[src/a.c:2:9]\n\
         \x20 2 │     return x;\n\
         \x20   ·            ─\n\
         \x20   ╰────\n\
         src/a.c:9 warning no such line\n"
    );
}

#[test]
fn a_format_that_exits_0_on_findings_fails_on_its_errors() {
    // `go vet -json` exits 0 whatever it finds (recorded with go 1.19).
    let repo = TestRepo::new();
    let vet = fixture("go/go-vet.json");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"vet\", command = \"cat {vet}\", parser = \"go\", origin = \"lint\", filter = \"nofilter\" }} ]\n"
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let vet_check = crate::support::check(&v, "vet");
    assert_eq!(vet_check["status"], "failed");
    assert_eq!(vet_check["exit_code"], 0);
    assert!(
        vet_check["reason"].as_str().unwrap().contains("exit 0"),
        "{vet_check:#}"
    );
    assert_eq!(v["diagnostics"][0]["code"], "printf");
    assert_eq!(v["diagnostics"][0]["dialect"], "vet-json");
}

#[test]
fn a_gofmt_list_fails_the_check_and_an_empty_one_passes() {
    // `gofmt -l` exits 0 when it lists files (recorded with go 1.19.8).
    let repo = TestRepo::new();
    let list = fixture("gofmt/gofmt-l.txt");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"fmt\", command = \"cat {list}\", parser = \"gofmt\", filter = \"nofilter\" }}, {{ name = \"clean\", command = \"true\", parser = \"gofmt\" }} ]\n"
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let fmt = crate::support::check(&v, "fmt");
    assert_eq!(
        (&fmt["status"], &fmt["exit_code"]),
        (&"failed".into(), &0.into())
    );
    assert_eq!(crate::support::check(&v, "clean")["status"], "passed");
    let files: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(files, ["main.go", "pkg/my dir/spaced.go"]);
}

#[test]
fn the_command_that_printed_a_log_picks_its_parser() {
    // tsc's plain output read as `npx tsc` names the tool; the output
    // alone is read by the same grammar, found by content.
    let repo = TestRepo::new();
    let log = fixture("node/tsc-plain.txt");
    let by_command = repo.phasegate(&[
        "diagnostics",
        "parse",
        "--command",
        "npx tsc --pretty false",
        "--format",
        "json",
        &log,
    ]);
    assert_eq!(by_command.code, 0, "{}", by_command.stderr);
    let v = by_command.json();
    assert_eq!(v["diagnostics"][0]["tool"], "tsc");
    assert_eq!(v["diagnostics"][0]["parser"], "tsc");
    let bad = repo.phasegate(&["diagnostics", "parse", "--command", "npx 'tsc", &log]);
    assert_eq!(bad.code, 2);
}

/// `phasegate diagnostics parse --format json ARGS`: each diagnostic's
/// file, line and test.
fn parsed(repo: &TestRepo, args: &[&str]) -> Vec<(String, Option<u64>, Option<String>)> {
    diagnostics_of(repo, args)
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap_or("-").to_string(),
                d["line"].as_u64(),
                d["test"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// The diagnostics `phasegate diagnostics parse --format json ARGS` finds.
fn diagnostics_of(repo: &TestRepo, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["diagnostics", "parse", "--format", "json"];
    all.extend_from_slice(args);
    let run = repo.phasegate(&all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["diagnostics"].as_array().unwrap().clone()
}

#[test]
fn eslint_findings_in_a_path_with_a_space_are_kept() {
    // ESLint 10.15.0 run in /tmp/rec-diag/eslint, outside this repository:
    // its absolute paths stay as printed.
    let repo = TestRepo::new();
    let files: Vec<String> = parsed(&repo, &[&fixture("node/eslint-space.txt")])
        .into_iter()
        .map(|(file, _, _)| file)
        .collect();
    assert_eq!(
        files,
        [
            "/tmp/rec-diag/eslint/src/b.js",
            "/tmp/rec-diag/eslint/src/my dir/a.js",
            "/tmp/rec-diag/eslint/src/my dir/a.js"
        ]
    );
}

#[test]
fn a_panicking_go_test_is_a_diagnostic_next_to_the_other_failures() {
    let repo = TestRepo::new();
    let found = parsed(&repo, &["--parser", "go", &fixture("go/go-panic.txt")]);
    assert!(
        found.contains(&(
            "/tmp/rec-diag/go/test/panicky/p.go".to_string(),
            Some(3),
            Some("TestBoom".to_string())
        )),
        "{found:?}"
    );
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn a_check_in_a_workspace_member_or_a_module_package_gets_real_paths() {
    let repo = TestRepo::new();
    repo.write(
        "ws/Cargo.toml",
        "[workspace]\nmembers = [\"crates/alpha\"]\nresolver = \"2\"\n",
    )
    .write(
        "ws/crates/alpha/Cargo.toml",
        "[package]\nname = \"alpha\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .write("ws/crates/alpha/src/lib.rs", "pub fn f() {}\n")
    .write("backend/go.mod", "module example.com/shop\n\ngo 1.19\n")
    .write("backend/calc/inner/inner_test.go", "package inner\n");
    let cargo = parsed(
        &repo,
        &[
            "--parser",
            "cargo",
            "--cwd",
            "ws/crates/alpha",
            &fixture("cargo/cargo-test-member.txt"),
        ],
    );
    let files: Vec<&str> = cargo.iter().map(|(file, _, _)| file.as_str()).collect();
    assert_eq!(
        files,
        ["ws/crates/alpha/src/lib.rs", "ws/crates/alpha/src/lib.rs"]
    );
    let go = parsed(
        &repo,
        &[
            "--parser",
            "go",
            "--cwd",
            "backend/calc",
            &fixture("go/go-test-subdir.txt"),
        ],
    );
    assert_eq!(
        go,
        [(
            "backend/calc/inner/inner_test.go".to_string(),
            Some(6),
            Some("TestInner".to_string())
        )]
    );
}

#[test]
fn go_frames_built_with_trimpath_are_found_through_go_mod() {
    // `go test -trimpath` (go1.19.8) names frames by module path:
    // `\texample.com/shop/panicky/p.go:3`, `\texample.com/shop/slow/slow_test.go:11 +0x25`.
    let repo = TestRepo::new();
    repo.write("go.mod", "module example.com/shop\n\ngo 1.19\n")
        .write("backend/go.mod", "module example.com/shop\n\ngo 1.19\n");
    let panic = parsed(&repo, &["--parser", "go", &fixture("go/go-trimpath.txt")]);
    assert_eq!(
        panic,
        [
            (
                "calc/calc_test.go".to_string(),
                Some(7),
                Some("TestAdd".to_string())
            ),
            (
                "panicky/p.go".to_string(),
                Some(3),
                Some("TestBoom".to_string())
            ),
        ]
    );
    let timeout = parsed(&repo, &[&fixture("go/go-timeout-trimpath.txt")]);
    assert_eq!(
        timeout,
        [(
            "slow/slow_test.go".to_string(),
            Some(11),
            Some("TestSlow".to_string())
        )]
    );
    // Run in a nested module, the module path is that module's.
    let nested = parsed(
        &repo,
        &[
            "--parser",
            "go",
            "--cwd",
            "backend",
            &fixture("go/go-trimpath.json"),
        ],
    );
    let files: Vec<&str> = nested.iter().map(|(file, _, _)| file.as_str()).collect();
    assert_eq!(files, ["backend/panicky/p.go", "backend/calc/calc_test.go"]);
    // A module path without a dot (`module shop`): `shop/panicky/p.go:3`
    // is the module's, not the standard library's.
    repo.write("plain/go.mod", "module shop\n\ngo 1.19\n");
    let dotless = parsed(
        &repo,
        &[
            "--parser",
            "go",
            "--cwd",
            "plain",
            &fixture("go/go-trimpath-dotless.txt"),
        ],
    );
    assert_eq!(
        dotless,
        [(
            "plain/panicky/p.go".to_string(),
            Some(3),
            Some("TestBoom".to_string())
        )]
    );
}

#[test]
fn a_real_node_test_run_fails_at_the_assertion_and_the_code_that_threw() {
    // node's own test runner, as a project with no test framework runs
    // it: TAP when the output is not a terminal (Node 20, this machine's).
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"node --test\" } ]\n",
    );
    repo.write(
        "src/math.js",
        "function add(a, b) {\n  return a - b;\n}\n\nfunction divide(a, b) {\n  if (b === 0) {\n    throw new TypeError('cannot divide by zero');\n  }\n  return a / b;\n}\n\nmodule.exports = { add, divide };\n",
    );
    repo.write(
        "test/math.test.js",
        "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { add, divide } = require('../src/math.js');\n\ntest('adds', () => {\n  assert.strictEqual(add(2, 2), 4);\n});\n\ntest('divides by zero', () => {\n  divide(1, 0);\n});\n\ntest('todo', { todo: true }, () => {\n  assert.fail('not counted');\n});\n",
    );
    repo.git(&["add", "-A"]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let found: Vec<(String, u64, String, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap_or("?").to_string(),
                d["line"].as_u64().unwrap_or(0),
                d["test"].as_str().unwrap_or("").to_string(),
                d["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "the todo test does not count: {v:#}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1, found[0].2.as_str()),
        ("test/math.test.js", 6, "adds")
    );
    assert_eq!(found[0].3, "Expected values to be strictly equal: 0 !== 4");
    assert_eq!(
        (found[1].0.as_str(), found[1].1, found[1].2.as_str()),
        ("src/math.js", 7, "divides by zero")
    );
    assert_eq!(found[1].3, "TypeError: cannot divide by zero");
    assert_eq!(v["diagnostics"][0]["tool"], "node");
}

/// `phasegate diagnostics parse --format json ARGS`: each diagnostic's
/// place (`file:line:column`, as far as known), test and message.
fn placed(repo: &TestRepo, args: &[&str]) -> Vec<(String, Option<String>, String)> {
    diagnostics_of(repo, args)
        .iter()
        .map(|d| {
            let mut place = d["file"].as_str().unwrap_or("-").to_string();
            for key in ["line", "column"] {
                match d[key].as_u64() {
                    Some(n) => place.push_str(&format!(":{n}")),
                    None => break,
                }
            }
            (
                place,
                d["test"].as_str().map(str::to_string),
                d["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn pytest_collection_errors_are_placed_at_what_stopped_each_module() {
    // pytest 9.2.0 run in /tmp/rec-py6/collect, outside this repository
    // (its absolute paths stay as printed, its relative ones join the
    // root): a syntax error at its caret, never at pytest's or Python's
    // own frames (`/root/.pyenv/.../ast.py:50`).
    let repo = TestRepo::new();
    let found = placed(
        &repo,
        &["--command", "pytest", &fixture("pytest/pytest-collect.txt")],
    );
    let syntax = "SyntaxError: invalid syntax".to_string();
    assert_eq!(found.len(), 8, "{found:?}");
    assert!(found.contains(&(
        "/tmp/rec-py6/collect/src/pkg/broken.py:1:7".to_string(),
        Some("tests/test_imp.py".to_string()),
        syntax.clone()
    )));
    assert!(found.contains(&(
        "/tmp/rec-py6/collect/tests/test_syn.py:1:12".to_string(),
        Some("tests/test_syn.py".to_string()),
        syntax
    )));
    assert!(found.contains(&(
        "src/pkg/boom.py:5".to_string(),
        Some("tests/test_boom.py".to_string()),
        "KeyError: 'host'".to_string()
    )));
    assert!(
        found
            .iter()
            .all(|(place, _, _)| !place.contains("/lib/python") && !place.contains("venv")),
        "{found:?}"
    );
}

#[test]
fn pytest_line_style_failures_keep_their_own_test_ids() {
    // pytest 9.2.0 `--tb=line` on unittest tests: `test_eq`'s assertion
    // is printed at `/root/.pyenv/.../unittest/case.py:866`, so it is
    // placed at its test file, the line unknown; `test_err`'s `KeyError`
    // at its own line.
    let repo = TestRepo::new();
    let found = placed(
        &repo,
        &[
            "--command",
            "pytest --tb=line",
            &fixture("pytest/pytest-unittest-line.txt"),
        ],
    );
    let test = |name: &str| Some(format!("tests/test_ut.py::T::{name}"));
    assert_eq!(
        found[0],
        (
            "tests/test_ut.py".to_string(),
            test("test_eq"),
            "AssertionError: 2 != 3 : one plus one".to_string()
        )
    );
    assert_eq!(
        found[2],
        (
            "/tmp/rec-py6/unit/tests/test_ut.py:11".to_string(),
            test("test_err"),
            "KeyError: 'missing'".to_string()
        )
    );
    assert_eq!(found.len(), 6, "{found:?}");
}

#[test]
fn a_python_syntax_error_without_a_traceback_is_read_by_auto_and_python() {
    // CPython 3.11.7's `python3 syn.py`: `  File "/tmp/rec-py6/syntax/syn.py",
    // line 1`, the line, a caret under its 7th character, the error.
    let repo = TestRepo::new();
    for parser in ["auto", "python"] {
        let found = placed(
            &repo,
            &["--parser", parser, &fixture("python/python311-syntax.txt")],
        );
        assert_eq!(
            found[0],
            (
                "/tmp/rec-py6/syntax/syn.py:1:7".to_string(),
                None,
                "SyntaxError: invalid syntax".to_string()
            ),
            "{parser}"
        );
    }
}

#[test]
fn a_python_script_that_does_not_parse_fails_at_its_syntax_error() {
    // The python3 on PATH, run for real: whatever its version, the error
    // of an unindented first line is at its caret.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"script\", command = \"python3 syn.py\" } ]\n",
    );
    repo.write("syn.py", "def f(:\n    pass\n");
    repo.git(&["add", "-A"]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let d = &v["diagnostics"][0];
    assert_eq!(
        (
            d["file"].as_str(),
            d["line"].as_u64(),
            d["column"].as_u64(),
            d["message"].as_str(),
            d["code"].as_str()
        ),
        (
            Some("syn.py"),
            Some(1),
            Some(7),
            Some("SyntaxError: invalid syntax"),
            Some("SyntaxError")
        ),
        "{v:#}"
    );
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(1), "{v:#}");
}

#[test]
fn a_json_report_on_one_line_longer_than_a_text_line_is_read_in_a_run() {
    // ESLint's recorded `-f json` report, its files repeated until the one
    // line it is passes the 64 KiB a line of text is cut to.
    let recorded = std::fs::read_to_string(fixture("node/eslint.json")).unwrap();
    let files: Vec<serde_json::Value> = serde_json::from_str(&recorded).unwrap();
    let mut many = Vec::new();
    while serde_json::to_string(&many).unwrap().len() < 200 * 1024 {
        many.extend(files.iter().cloned());
    }
    let report = serde_json::to_string(&many).unwrap();
    assert!(!report.contains('\n'));
    // The same findings repeated are one each.
    let recorded_findings: usize = files
        .iter()
        .map(|f| f["messages"].as_array().unwrap().len())
        .sum();

    let repo = TestRepo::new();
    repo.write("eslint.json", &report);
    repo.config("[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"cat eslint.json; exit 1\", parser = \"eslint\" } ]\n");
    let (code, verdict) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{verdict:#}");
    let found = verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["parser"] == "eslint" && d["line"].is_u64())
        .count();
    assert_eq!(found, recorded_findings, "{verdict:#}");
}
