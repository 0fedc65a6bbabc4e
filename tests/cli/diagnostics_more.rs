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
    use std::io::Write;
    let mut child = repo
        .command(crate::support::BIN)
        .args(["diagnostics", "parse", "--format", "json"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
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
