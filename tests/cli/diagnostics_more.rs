//! Tool output turned into diagnostics, by run and by `diagnostics parse`.

use crate::support::{check, TestRepo};

/// A repository with `a.py` committed, then its line 3 changed and staged.
fn changed_line_3() -> TestRepo {
    let repo = TestRepo::new();
    repo.stage("a.py", "one\ntwo\nthree\nfour\n");
    repo.stage("old.py", "legacy\n");
    repo.git(&["commit", "-qm", "base"]);
    repo.stage("a.py", "one\ntwo\nTHREE\nfour\n");
    repo
}

#[test]
fn a_new_error_past_the_cap_on_findings_still_blocks() {
    // A legacy file with more lint errors than a check keeps, then the
    // change's own error: the kept ones are all old, the new one is only
    // counted, and the check must not be waved through as "pre-existing".
    let repo = changed_line_3();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"lint\", shell = true, command = \"for i in $(seq 1000); do echo \\\"old.py:1: error: old finding $i\\\"; done; echo 'a.py:3: error: new finding'; exit 1\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    let lint = check(&v, "lint");
    assert_eq!(lint["dropped_diagnostics"], 1, "{lint:#}");
    assert_eq!(lint["status"], "failed", "{lint:#}");
    assert_eq!(code, 1);
}

/// `phasegate diagnostics parse --format json ARGS` in `repo`, reading
/// `input` on standard input: the document it prints.
fn parse_stdin(repo: &TestRepo, args: &[&str], input: &str) -> serde_json::Value {
    let mut all = vec!["diagnostics", "parse", "--format", "json"];
    all.extend_from_slice(args);
    let out = repo.phasegate_fed(&all, input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_file_outside_the_repository_is_never_read_into_the_verdict() {
    // A tool may name any file; only the repository's own are shown.
    let repo = TestRepo::new();
    repo.write("src/a.c", "int in_repo;\n");
    let secret = repo.home().join("credentials");
    std::fs::write(&secret, "token = hunter2\n").unwrap();
    let output = format!(
        "{}:1:1: error: bad key\nsrc/a.c:1:5: error: shown\n",
        secret.display()
    );
    let v = parse_stdin(&repo, &[], &output);
    let diagnostics = v["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 2, "{v:#}");
    assert!(!v.to_string().contains("hunter2"), "{v:#}");
    assert_eq!(diagnostics[0]["file"], secret.display().to_string());
    assert_eq!(diagnostics[1]["file"], "src/a.c");
    assert_eq!(diagnostics[1]["source_line"], "int in_repo;");
}

#[test]
fn a_finding_about_the_repository_root_names_no_file() {
    // `./:3:1` names the root directory: no empty path for a report to
    // show or a CI to annotate, and no line of a file that is not one.
    let repo = TestRepo::new();
    let v = parse_stdin(&repo, &[], "./:3:1: error: the module is broken\n");
    let d = &v["diagnostics"][0];
    assert_eq!(d["message"], "the module is broken", "{v:#}");
    assert_eq!(d["file"], serde_json::Value::Null, "{v:#}");
    assert_eq!(d["line"], serde_json::Value::Null, "{v:#}");
}

#[test]
fn ruffs_grouped_and_pylint_formats_locate_its_findings() {
    // `output-format = "grouped"` or `"pylint"` in pyproject.toml changes
    // what `ruff check .` prints, not the command: real recordings of
    // ruff 0.17.6, replayed by a stand-in named `ruff`.
    for format in ["grouped", "pylint"] {
        let repo = replaying("ruff", "check .", &format!("python/ruff-{format}.txt"));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{v:#}");
        assert_eq!(check(&v, "c")["diagnostics"], 8, "{format}: {v:#}");
        let d = &v["diagnostics"][3];
        assert_eq!(
            (&d["file"], &d["line"], &d["code"], &d["tool"]),
            (
                &serde_json::json!("pkg/calc.py"),
                &serde_json::json!(15),
                &serde_json::json!("F841"),
                &serde_json::json!("ruff")
            ),
            "{format}: {v:#}"
        );
    }
}

/// A repository whose check `name` runs `bin/<program> ...`, a stand-in
/// that prints the recorded output `fixtures/diagnostics/<fixture>` and
/// exits 1.
fn replaying(program: &str, args: &str, fixture: &str) -> TestRepo {
    let repo = TestRepo::new();
    let recorded = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/diagnostics")
        .join(fixture);
    repo.write("recorded.txt", &std::fs::read_to_string(recorded).unwrap());
    let stand_in = format!("bin/{program}");
    repo.write(&stand_in, "#!/bin/sh\ncat recorded.txt\nexit 1\n");
    std::fs::set_permissions(
        repo.path().join(&stand_in),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"c\", command = \"{stand_in} {args}\", filter = \"nofilter\" }} ]\n"
    ));
    repo.stage("README.md", "x\n");
    repo
}

#[test]
fn a_test_file_named_with_a_colon_keeps_its_place() {
    // pytest 9.2.0, recorded: `tests/test_c:d.py` raises at line 3 while
    // it is collected, `tests/test_e:f.py::test_ok` fails at line 2.
    let repo = replaying(
        "pytest",
        "-p no:cacheprovider --continue-on-collection-errors tests",
        "pytest/pytest-colon-continue.txt",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let places: Vec<String> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}:{}", d["file"], d["line"]))
        .collect();
    // The syntax error is named as Python printed it, by its absolute
    // path where it was recorded.
    assert!(places[0].ends_with("tests/test_a:b.py\":3"), "{v:#}");
    assert_eq!(
        places[1..],
        ["\"tests/test_c:d.py\":3", "\"tests/test_e:f.py\":2"],
        "{v:#}"
    );
}
