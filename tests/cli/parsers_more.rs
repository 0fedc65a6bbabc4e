//! Tool output formats read the way the tools really print them.

use crate::support::{check, TestRepo};

/// A recorded output of `fixtures/diagnostics/python/`.
fn recording(name: &str) -> String {
    format!(
        "{}/fixtures/diagnostics/python/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A repository with the sources ruff's recordings name staged, each new
/// (so every line is changed), and a lint check that prints `outputs` one
/// after the other as if ruff had run here (the recorded directories read
/// as the repository) and fails as ruff did. The command names no tool:
/// the output decides the parser, as for `make lint`.
fn replaying(outputs: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, source) in [
        ("pkg/__init__.py", None),
        ("pkg/calc.py", Some("calc.py.txt")),
        ("syn.py", Some("syn.py.txt")),
        ("w.py", Some("w.py.txt")),
        ("asy.py", Some("asy.py.txt")),
        ("my mod.py", Some("my-mod.py.txt")),
    ] {
        let text = source.map_or_else(String::new, |s| {
            std::fs::read_to_string(recording(s)).unwrap()
        });
        repo.stage(path, &text);
    }
    let script: Vec<String> = outputs
        .iter()
        .map(|(output, recorded_in)| {
            format!("sed \\\"s#{recorded_in}#$PWD#g\\\" '{}'", recording(output))
        })
        .collect();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"lint\", shell = true, command = \"{}; exit 1\" }} ]\n",
        script.join("; ")
    ));
    repo
}

/// Each diagnostic of the check `lint`: file, line, column, code,
/// severity and tool.
fn findings(v: &serde_json::Value) -> Vec<String> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["check"] == "lint")
        .map(|d| {
            format!(
                "{}:{}:{} {} {} {}",
                d["file"].as_str().unwrap_or("-"),
                d["line"],
                d["column"],
                d["code"].as_str().unwrap_or("-"),
                d["severity"].as_str().unwrap_or("-"),
                d["tool"].as_str().unwrap_or("-"),
            )
        })
        .collect()
}

/// What ruff's `json` format of the same run gives.
const RUFF_CI: [&str; 10] = [
    "my mod.py:1:8 F401 error ruff",
    "my mod.py:5:39 E711 error ruff",
    "pkg/calc.py:1:8 F401 error ruff",
    "pkg/calc.py:2:8 F401 error ruff",
    "pkg/calc.py:15:5 E741 error ruff",
    "pkg/calc.py:15:5 F841 error ruff",
    "syn.py:1:7 invalid-syntax error ruff",
    "syn.py:1:8 invalid-syntax error ruff",
    "w.py:1:8 F401 error ruff",
    "w.py:8:13 W291 error ruff",
];

#[test]
fn ruffs_reports_for_ci_systems_give_the_findings_of_its_json() {
    // `ruff check --output-format sarif .` (for code scanning) and the
    // like, run by a command that does not name ruff.
    for output in [
        "ruff-ci.json",
        "ruff-sarif.json",
        "ruff-gitlab.json",
        "ruff-rdjson.json",
        "ruff-junit.xml",
    ] {
        let repo = replaying(&[(output, "/tmp/rec-ruff-ci")]);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}");
        let mut read = findings(&v);
        read.sort();
        let mut expected = RUFF_CI.to_vec();
        expected.sort_unstable();
        assert_eq!(read, expected, "{output}: {:#}", check(&v, "lint"));
    }
}

#[test]
fn two_runs_of_ruffs_json_on_one_line_are_both_read() {
    // ruff ends its JSON without a newline: run twice (over two
    // directories, or over two batches of files) its reports meet on one
    // line, `][`.
    let repo = replaying(&[
        ("ruff-ci.json", "/tmp/rec-ruff-ci"),
        ("ruff-syntax.json", "/tmp/rec-diag/ruff"),
    ]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1);
    let read = findings(&v);
    for expected in RUFF_CI
        .iter()
        .copied()
        .chain(["asy.py:3:5 ASYNC251 error ruff"])
    {
        assert!(
            read.iter().any(|r| r == expected),
            "{expected} missing from {read:#?}"
        );
    }
}
