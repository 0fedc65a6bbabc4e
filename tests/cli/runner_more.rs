//! Running checks: timeouts, signals, output, missing tools, environment, working directory, verifiers.

use crate::support::{check, TestRepo};

/// A configuration with one verifier check `v` running `script` in `sh`.
fn verifier(script: &str) -> String {
    format!(
        "[phases.implementation]\nchecks = [ {{ name = \"v\", kind = \"verifier\", shell = true, command = {script:?} }} ]\n"
    )
}

#[test]
fn a_cwd_that_leads_outside_the_repository_through_a_link_never_runs_there() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    repo.write("sub/keep", "");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("web")).unwrap();
    std::os::unix::fs::symlink("sub", repo.path().join("inner")).unwrap();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"web\", shell = true, cwd = \"web\", command = \"touch ran-here\" } ]\n",
    );
    for profile in ["strict", "auto"] {
        let (code, v) = repo.verdict(&["--all-files", "--profile", profile]);
        assert_eq!(code, 3, "{profile}: {v:#}");
        let web = check(&v, "web");
        assert_eq!(
            (&web["status"], &web["tier"]),
            (&"crashed".into(), &2.into())
        );
        let reason = web["reason"].as_str().unwrap();
        assert!(
            reason.contains("working directory `web` leads outside the repository"),
            "{reason}"
        );
        assert!(reason.contains("fix `cwd` in phasegate.toml"), "{reason}");
        assert_eq!(v["diagnostics"][0]["file"], "phasegate.toml", "{v:#}");
    }
    assert!(
        !outside.path().join("ran-here").exists(),
        "the check ran outside the repository"
    );
    // A link to a directory of the repository is a directory of it.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"inner\", shell = true, cwd = \"inner\", command = \"touch ran-here\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(repo.exists("sub/ran-here"));
}

#[test]
fn a_cwd_the_tree_checked_lacks_is_a_broken_check_that_says_what_to_fix() {
    // The directory is a fact of the tree the checks run in, not of the
    // configuration: the range's end has `web/`, the work tree does not.
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = []\n")
        .commit_all("base");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("web/index.js", "1\n");
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"web\", shell = true, cwd = \"web\", command = \"test -f index.js\" },\n]\n",
    );
    repo.commit_all("web");
    repo.git(&["checkout", "-q", "main"]);
    assert!(!repo.exists("web"));
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "web")["status"], "passed", "{v:#}");

    // Where it is missing, the check cannot start: tier 2, placed at the
    // check in phasegate.toml, saying what to do.
    repo.git(&["checkout", "-q", "feature"]);
    std::fs::remove_dir_all(repo.path().join("web")).unwrap();
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    let web = check(&v, "web");
    assert_eq!(web["tier"], 2, "{v:#}");
    let reason = web["reason"].as_str().unwrap();
    assert!(
        reason.contains("working directory `web` does not exist in the tree checked"),
        "{reason}"
    );
    assert!(
        reason.contains("fix `cwd` in phasegate.toml, or add the directory"),
        "{reason}"
    );
    let d = &v["diagnostics"][0];
    assert_eq!(
        (&d["file"], &d["line"]),
        (&"phasegate.toml".into(), &3.into()),
        "{v:#}"
    );
}

#[test]
fn a_verifier_that_answers_fail_fails_even_when_a_finding_cannot_be_read() {
    // The fast profile fails open on an answer it cannot read, never on a
    // plain "fail". (A repository each: the same failure repeated escalates.)
    for profile in ["strict", "auto", "fast"] {
        let repo = TestRepo::new();
        repo.config(&verifier(
            r#"echo '{"verdict": "fail", "findings": [{"file": "a.md", "line": "7", "message": "criterion 2 is not met"}, {"file": "b.md", "line": 2, "message": "no tests"}]}'"#,
        ));
        let (code, v) = repo.verdict(&["--profile", profile]);
        assert_eq!(code, 1, "{profile}: {v:#}");
        assert_eq!(
            (&v["status"], &v["next"]),
            (&"failed".into(), &"fix".into())
        );
        assert_eq!(v["fail_open"], false, "{v:#}");
        let found: Vec<(String, String)> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["file"].to_string(),
                    d["message"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                ("\"b.md\"".to_string(), "no tests".to_string()),
                (
                    "\"phasegate.toml\"".to_string(),
                    "verifier `v` answered \"fail\", but a finding cannot be read: finding 0: `line` must be a number, not \"7\"".to_string()
                ),
            ],
            "{v:#}"
        );
    }
    // A pass whose findings cannot be read is still no answer (tier 3).
    let repo = TestRepo::new();
    repo.config(&verifier(
        r#"echo '{"verdict": "pass", "findings": [{"line": "7", "message": "m"}]}'"#,
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, &check(&v, "v")["tier"]), (3, &3.into()), "{v:#}");
}

#[test]
fn a_verifier_that_prints_prose_before_its_answer_is_told_where_prose_goes() {
    let repo = TestRepo::new();
    repo.config(&verifier(
        r#"echo 'Thinking...'; echo '{"verdict": "pass", "findings": []}'"#,
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let reason = check(&v, "v")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("does not start with a JSON object but with `Thinking...`"),
        "{reason}"
    );
    assert!(
        reason.contains(
            "prints its answer alone on standard output, and anything else on standard error"
        ),
        "{reason}"
    );
}

#[test]
fn a_verifier_that_only_warns_never_reports_phasegates_word_as_an_error() {
    // CI formats show an error as one (`::error`), whatever the verdict.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"v\", kind = \"verifier\", on_failure = \"warn\", shell = true, command = \"echo '{\\\"verdict\\\": \\\"fail\\\", \\\"findings\\\": [{\\\"message\\\": \\\"vague\\\", \\\"severity\\\": \\\"minor\\\"}]}'\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, &v["status"]), (0, &"warned".into()), "{v:#}");
    let found: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["tool"].as_str().unwrap(), d["severity"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [("verifier", "warning"), ("phasegate", "warning")],
        "{v:#}"
    );
    let github = repo.phasegate(&["run", "--format", "github"]);
    assert!(!github.stdout.contains("::error"), "{}", github.stdout);
    // Under strict the same answer blocks, and says so as an error.
    let (code, v) = repo.verdict(&["--profile", "strict"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["diagnostics"][1]["severity"], "error", "{v:#}");
}

#[test]
fn a_script_saved_with_windows_line_endings_is_named_with_the_cause() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    for (name, shebang) in [("direct.sh", "#!/bin/sh"), ("env.sh", "#!/usr/bin/env sh")] {
        repo.write(name, &format!("{shebang}\r\necho checked\r\n"));
        std::fs::set_permissions(
            repo.path().join(name),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"direct\", command = \"./direct.sh\" },\n  { name = \"env\", command = \"./env.sh\" },\n]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    for (name, script) in [("direct", "./direct.sh"), ("env", "./env.sh")] {
        let c = check(&v, name);
        assert_eq!(c["tier"], 2, "{v:#}");
        let reason = c["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!("`{script}` has Windows line endings")),
            "{reason}"
        );
        assert!(reason.contains("save it with LF endings"), "{reason}");
    }
}

/// A configuration with one check per wrapper, each running `program`.
fn wrapped(program: &str) -> String {
    let mut toml = String::from("[phases.implementation]\nchecks = [\n");
    for (name, wrapper) in WRAPPERS {
        toml.push_str(&format!(
            "  {{ name = \"{name}\", command = \"{wrapper} {program}\" }},\n"
        ));
    }
    toml.push_str("]\n");
    toml
}

/// Common wrappers, as checks write them; each exits 127 when its program
/// is not installed.
const WRAPPERS: &[(&str, &str)] = &[
    ("env", "env RUST_LOG=debug"),
    ("timeout", "timeout -k 5 60"),
    ("nice", "nice -n 5"),
    ("nohup", "nohup"),
    ("stdbuf", "stdbuf -oL -eL"),
    ("ionice", "ionice -c 3"),
    ("chrt", "chrt --other 0"),
    ("taskset", "taskset -c 0"),
    ("setsid", "setsid -w"),
    ("time", "time -f %e"),
    ("nested", "nice env X=1 timeout 60"),
];

#[test]
fn a_tool_missing_behind_a_wrapper_is_a_missing_tool_not_a_failure() {
    let repo = TestRepo::new();
    repo.config(&wrapped("phasegate-no-such-tool --check"));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(v["status"], "incomplete", "{v:#}");
    for (name, _) in WRAPPERS {
        let c = check(&v, name);
        assert_eq!(
            (&c["status"], &c["tier"]),
            (&"missing".into(), &1.into()),
            "{name}: {v:#}"
        );
        let reason = c["reason"].as_str().unwrap();
        assert!(
            reason.contains("`phasegate-no-such-tool` is not installed"),
            "{name}: {reason}"
        );
    }
    // The fast profile skips a tool that is not there, and says so.
    let (code, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
    assert_eq!(code, 0, "{v:#}");
    for (name, _) in WRAPPERS {
        assert_eq!(check(&v, name)["status"], "skipped", "{name}: {v:#}");
    }
    // `on_missing` is read as for a tool started directly.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"t\", on_missing = \"warn\", command = \"timeout 60 phasegate-no-such-tool\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(
        (code, &check(&v, "t")["status"]),
        (0, &"missing".into()),
        "{v:#}"
    );
    assert_eq!(v["status"], "warned", "{v:#}");
}

#[test]
fn a_tool_behind_a_wrapper_that_is_there_runs_and_its_status_counts() {
    let repo = TestRepo::new();
    repo.write("check.sh", "#!/bin/sh\necho ran >> ran.txt\nexit \"$1\"\n");
    std::fs::set_permissions(
        repo.path().join("check.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    repo.config(&wrapped("./check.sh 0"));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(repo.read("ran.txt").lines().count(), WRAPPERS.len());
    repo.config(&wrapped("./check.sh 3"));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    for (name, _) in WRAPPERS {
        assert_eq!(check(&v, name)["status"], "failed", "{name}: {v:#}");
    }
    // A script of the project that is not there is a broken check, as it
    // is without the wrapper.
    repo.config(&wrapped("./gone.sh"));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    for (name, _) in WRAPPERS {
        let c = check(&v, name);
        assert_eq!(c["tier"], 2, "{name}: {v:#}");
        assert!(
            c["reason"]
                .as_str()
                .unwrap()
                .contains("`./gone.sh` does not exist"),
            "{name}: {v:#}"
        );
    }
}

#[test]
fn setsid_that_returns_before_its_command_ends_is_no_silent_pass() {
    // A check starts as the leader of a session of its own, where `setsid`
    // forks and exits 0 at once: the failing command's status was lost.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"detached\", command = \"setsid sh -c 'exit 3'\" },\n  { name = \"fork\", command = \"timeout 60 setsid --fork sh -c 'exit 3'\" },\n  { name = \"waits\", command = \"setsid --wait sh -c 'exit 3'\" },\n]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    for name in ["detached", "fork"] {
        let c = check(&v, name);
        assert_eq!(c["tier"], 2, "{name}: {v:#}");
        let reason = c["reason"].as_str().unwrap();
        assert!(reason.contains("add `--wait`"), "{name}: {reason}");
    }
    assert_eq!(check(&v, "waits")["status"], "failed", "{v:#}");
}

#[test]
fn a_shell_script_whose_wrapper_cannot_find_its_tool_is_a_missing_tool() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"timeout\", shell = true, command = \"echo start; timeout 60 phasegate-no-such-tool\" },\n  { name = \"ionice\", shell = true, command = \"ionice -c 3 phasegate-no-such-tool\" },\n  { name = \"gone\", shell = true, command = \"timeout 60 ./gone.sh\" },\n]\n",
    );
    let (code, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
    assert_eq!(code, 1, "{v:#}");
    for name in ["timeout", "ionice"] {
        let c = check(&v, name);
        assert_eq!(c["status"], "skipped", "{name}: {v:#}");
        let reason = c["reason"].as_str().unwrap();
        assert!(
            reason.contains("`phasegate-no-such-tool` is not installed"),
            "{name}: {reason}"
        );
    }
    // A path that is not there is no tool to install: the script failed.
    assert_eq!(check(&v, "gone")["status"], "failed", "{v:#}");
}
