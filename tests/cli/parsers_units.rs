//! Diagnostics of compilers, linters and type checkers: columns, paths, colour and multi-line messages.

use crate::parsers_js::recording;
use crate::support::{check, TestRepo};

/// A repository whose `lint` check prints the recorded `output`
/// (`fixtures/diagnostics/<output>`) and exits `exit`, as the tool did,
/// read by the parser `parser`.
fn linting(repo: &TestRepo, output: &str, exit: i32, parser: &str) {
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"lint\", shell = true, command = \"cat '{}'; exit {exit}\", parser = \"{parser}\" }} ]\n",
        recording(output)
    ));
}

/// Each finding's `file:line:column` and code.
fn places(v: &serde_json::Value) -> Vec<(String, String)> {
    crate::parsers_go::places(v)
        .into_iter()
        .map(|(place, code, _)| (place, code))
        .collect()
}

/// A change that adds a file whose name holds a colon, with a lint error
/// in it, to a repository whose other file has an old one: the new error
/// must be read, else only the old one is, and the lint check that should
/// block only warns about a pre-existing finding.
#[test]
fn a_new_error_in_a_file_whose_name_holds_a_colon_blocks() {
    // ruff 0.17.6, flake8 7.5.0, pylint 4.1.4 (fixtures/diagnostics/python,
    // "file names with a colon").
    for (output, exit, parser, expected) in [
        (
            "python/ruff-colon.txt",
            1,
            "ruff",
            vec![("a:b.py:1:8", "F401"), ("sp ace.py:1:8", "F401")],
        ),
        (
            "python/flake8-colon.txt",
            1,
            "flake8",
            vec![("a:b.py:1:1", "F401"), ("sp ace.py:1:1", "F401")],
        ),
        (
            "python/pylint-colon.txt",
            20,
            "pylint",
            vec![
                ("a:b.py:1:1", "C0114"),
                ("a:b.py:1:1", "C0103"),
                ("a:b.py:1:1", "W0611"),
                ("sp ace.py:1:1", "C0114"),
                ("sp ace.py:1:1", "C0103"),
                ("sp ace.py:1:1", "W0611"),
            ],
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("sp ace.py", "import os\n");
        repo.commit_all("base");
        repo.stage("a:b.py", "import os\n");
        linting(&repo, output, exit, parser);
        let (code, v) = repo.verdict(&[]);
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(place, code)| (place.to_string(), code.to_string()))
            .collect();
        // pylint's finds only warnings and conventions, which do not
        // explain its exit status: phasegate adds that the check failed.
        let found: Vec<(String, String)> = places(&v)
            .into_iter()
            .filter(|(_, code)| code != "check-failed")
            .collect();
        assert_eq!(found, expected, "{output}");
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(check(&v, "lint")["status"], "failed", "{output}");
    }
}

/// `s = "é€😀"; x = undefined_name`: every linter names the same
/// character, the 16th, whether it counted characters (ruff,
/// pycodestyle) or UTF-8 bytes (pyflakes, pylint).
#[test]
fn python_linters_columns_after_wide_characters_name_the_same_character() {
    // ruff 0.17.6, flake8 7.5.0, pylint 4.1.4 (fixtures/diagnostics/python,
    // "Columns after wide characters").
    for (output, parser, expected) in [
        ("python/ruff-wide.txt", "ruff", vec![("1:16", "F821")]),
        (
            "python/flake8-wide.txt",
            "flake8",
            // pycodestyle's `;` is the 10th character, as it says.
            vec![("1:10", "E702"), ("1:16", "F821")],
        ),
        (
            "python/pylint-wide.txt",
            "pylint",
            vec![
                ("1:1", "C0114"),
                ("1:1", "C0103"),
                ("1:12", "C0321"),
                ("1:16", "E0602"),
            ],
        ),
        (
            "python/pylint-wide.json",
            "pylint",
            vec![
                ("1:1", "C0114"),
                ("1:1", "C0103"),
                ("1:12", "C0321"),
                ("1:16", "E0602"),
            ],
        ),
    ] {
        let repo = TestRepo::new();
        repo.write(
            "wide.py",
            &std::fs::read_to_string(recording("python/wide.py.txt")).unwrap(),
        );
        let run = repo.phasegate(&[
            "diagnostics",
            "parse",
            "--parser",
            parser,
            "--format",
            "json",
            &recording(output),
        ]);
        let v = run.json();
        let found: Vec<(String, String)> = places(&v)
            .into_iter()
            .map(|(place, code)| (place.trim_start_matches("wide.py:").to_string(), code))
            .collect();
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(place, code)| (place.to_string(), code.to_string()))
            .collect();
        assert_eq!(found, expected, "{output}: {v:#}");
        assert!(
            v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["column_unit"].is_null() || d["column_unit"] == "character"),
            "{output}: {v:#}"
        );
    }
}
