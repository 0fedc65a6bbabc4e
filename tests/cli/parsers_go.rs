//! Go test, vet and build output: odd file names, error counts, and pyright's and mypy's columns.

use crate::support::{check, TestRepo};

/// A recorded output, `fixtures/diagnostics/<path>`.
fn recording(path: &str) -> String {
    format!("{}/fixtures/diagnostics/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A fixture's text.
fn fixture_text(path: &str) -> String {
    std::fs::read_to_string(recording(path)).unwrap()
}

/// A repository whose check `name` (its origin the name's) prints the
/// recorded `output` and exits `exit`, as the tool did, read by `parser`;
/// absolute paths under `recorded_in`, where the tool ran, read as the
/// repository's.
fn replaying(repo: &TestRepo, name: &str, output: &str, exit: i32, parser: &str) {
    replaying_from(repo, name, output, exit, parser, None);
}

fn replaying_from(
    repo: &TestRepo,
    name: &str,
    output: &str,
    exit: i32,
    parser: &str,
    recorded_in: Option<&str>,
) {
    let print = match recorded_in {
        Some(dir) => format!("sed \\\"s#{dir}#$PWD#g\\\" '{}'", recording(output)),
        None => format!("cat '{}'", recording(output)),
    };
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"{name}\", shell = true, command = \"{print}; exit {exit}\", parser = \"{parser}\" }} ]\n",
    ));
}

/// Each diagnostic's `file:line:column`, code and test.
pub(crate) fn places(v: &serde_json::Value) -> Vec<(String, String, String)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                format!(
                    "{}:{}:{}",
                    d["file"].as_str().unwrap_or("-"),
                    d["line"],
                    d["column"]
                ),
                d["code"].as_str().unwrap_or("-").to_string(),
                d["test"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

fn owned(expected: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(a, b, c)| ((*a).to_string(), (*b).to_string(), (*c).to_string()))
        .collect()
}

/// The module the Go recordings ran in: `example.com/shop`.
fn go_module(repo: &TestRepo) {
    repo.write("go.mod", &fixture_text("go/go.mod.txt"));
}

/// `go test` names a failing test's file by its base name, and Go takes
/// one holding a space or a colon: each failure is located in its file,
/// in the text output as in `-json`, not left as a failure nobody placed.
#[test]
fn a_failing_go_test_in_a_file_named_with_a_space_or_a_colon_is_located() {
    // go1.19.8 (fixtures/diagnostics/go, "File names with a space or a colon").
    for output in ["go/go-odd-names-test.txt", "go/go-odd-names-test.json"] {
        let repo = TestRepo::new();
        go_module(&repo);
        repo.stage("calc/a b_test.go", &fixture_text("go/space_test.go.txt"))
            .stage("calc/x:y_test.go", &fixture_text("go/colon_test.go.txt"));
        replaying(&repo, "tests", output, 1, "go");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(
            places(&v),
            owned(&[
                ("calc/a b_test.go:7:null", "-", "TestSpace"),
                ("calc/x:y_test.go:7:null", "-", "TestColon"),
            ]),
            "{output}: {v:#}"
        );
        assert_eq!(code, 1, "{output}");
        assert_eq!(check(&v, "tests")["diagnostics"], 2, "{output}");
    }
}

/// `go build` and `go vet` name such a file by its path: the error in it
/// is read, with its column.
#[test]
fn go_build_and_vet_errors_in_a_file_named_with_a_colon_are_read() {
    for (output, check_name, expected, recorded_in) in [
        (
            "go/go-odd-names-build.txt",
            "build",
            [("calc/a b.go:4:17", "-"), ("calc/x:y.go:4:17", "-")],
            None,
        ),
        (
            "go/go-odd-names-vet.json",
            "build",
            [("calc/a b.go:6:9", "printf"), ("calc/x:y.go:6:9", "printf")],
            Some("/tmp/rec-go5/vnames"),
        ),
    ] {
        let repo = TestRepo::new();
        go_module(&repo);
        repo.stage("calc/a b.go", "package calc\n")
            .stage("calc/x:y.go", "package calc\n");
        replaying_from(&repo, check_name, output, 2, "go", recorded_in);
        let (code, v) = repo.verdict(&[]);
        let found: Vec<(String, String)> = places(&v)
            .into_iter()
            .map(|(place, code, _)| (place, code))
            .collect();
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, c)| ((*p).to_string(), (*c).to_string()))
            .collect();
        assert_eq!(found, expected, "{output}: {v:#}");
        assert_eq!(code, 1, "{output}");
    }
}

/// A vet lint check on a change that adds `calc/x:y.go` with a vet error,
/// to a repository whose `calc/a b.go` has an old one: the new error must
/// be read, else only the old one is, and the check that should block
/// only warns about a pre-existing finding.
#[test]
fn a_new_vet_error_in_a_file_whose_name_holds_a_colon_blocks() {
    let repo = TestRepo::new();
    go_module(&repo);
    let file = |format: &str| {
        format!("package calc\n\nimport \"fmt\"\n\nfunc Label(n int) string {{\n\treturn fmt.Sprintf({format})\n}}\n")
    };
    repo.stage("calc/a b.go", &file("\"%d items\", \"n\""));
    repo.commit_all("base");
    repo.stage("calc/x:y.go", &file("\"%s items\", n"));
    replaying(&repo, "lint", "go/go-odd-names-vet.txt", 2, "go");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "failed");
    let files: Vec<String> = places(&v).into_iter().map(|(place, _, _)| place).collect();
    assert!(files.contains(&"calc/x:y.go:6:9".to_string()), "{v:#}");
}

/// The compiler stops after ten errors and says so at the tenth's place:
/// ten errors, not eleven, and no "too many errors" among them or in the
/// summary.
#[test]
fn go_builds_too_many_errors_line_is_not_an_error_of_its_own() {
    // go1.19.8 (fixtures/diagnostics/go, "... and too many errors").
    let repo = TestRepo::new();
    go_module(&repo);
    repo.stage("calc/calc.go", &fixture_text("go/many.go.txt"));
    replaying(&repo, "build", "go/go-too-many-errors.txt", 2, "go");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1);
    assert_eq!(check(&v, "build")["diagnostics"], 10, "{v:#}");
    let messages: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 10, "{messages:?}");
    assert!(
        messages.iter().all(|m| m.starts_with("undefined: missing")),
        "{messages:?}"
    );
    assert!(
        !v["summary"].to_string().contains("too many errors"),
        "{:#}",
        v["summary"]
    );
}

/// pyright counts UTF-16 units: after `"😀"` its column is one more than
/// the character's, in the text output as in `--outputjson`.
#[test]
fn pyrights_column_after_an_emoji_is_the_characters() {
    // pyright 1.1.414 (fixtures/diagnostics/pyright, "Recorded later").
    for output in ["pyright/pyright-emoji.txt", "pyright/pyright-emoji.json"] {
        let repo = TestRepo::new();
        repo.stage("wide.py", &fixture_text("pyright/emoji.py.txt"));
        replaying_from(
            &repo,
            "typecheck",
            output,
            1,
            "pyright",
            Some("/tmp/rec-py5"),
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}");
        assert_eq!(
            places(&v),
            owned(&[
                ("wide.py:1:14", "reportUndefinedVariable", "-"),
                ("wide.py:2:18", "reportUndefinedVariable", "-"),
            ]),
            "{output}: {v:#}"
        );
    }
}

/// mypy's column after non-ASCII text is its native parser's odd count
/// (mypy 2's default) or bytes (`--no-native-parser`, mypy 1), and its
/// output does not say which: the column names the character where only
/// one reading fits the line, and is none where the two readings name
/// different characters, never a wrong one. On an ASCII line it is kept.
#[test]
fn mypys_column_after_non_ascii_text_is_the_characters_or_none() {
    // mypy 2.4.1 (fixtures/diagnostics/python, "mypy's columns after
    // non-ASCII text"). The expressions are at characters 19, 23, 20, 17.
    for (output, columns) in [
        ("python/mypy-wide.txt", ["null", "null", "null", "17"]),
        ("python/mypy-wide.json", ["null", "null", "null", "17"]),
        ("python/mypy-wide-bytes.txt", ["19", "null", "20", "17"]),
        ("python/mypy-wide-bytes.json", ["19", "null", "20", "17"]),
    ] {
        let repo = TestRepo::new();
        repo.stage("cols.py", &fixture_text("python/mypy-wide.py.txt"));
        replaying(&repo, "typecheck", output, 1, "mypy");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}");
        let expected: Vec<(String, String, String)> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    format!("cols.py:{}:{c}", i + 1),
                    "assignment".to_string(),
                    "-".to_string(),
                )
            })
            .collect();
        assert_eq!(places(&v), expected, "{output}: {v:#}");
    }
}
