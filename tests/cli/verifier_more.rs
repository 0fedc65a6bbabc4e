//! Verifiers and wrapped commands at the edges of what they answer.

use crate::support::{check, TestRepo};

/// A repository whose one check is the verifier `review.sh`, with extra
/// check options.
fn reviewer(script: &str, options: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("review.sh", script);
    repo.config(&format!(
        r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ {{ name = "review", kind = "verifier", command = "sh review.sh", {options} }} ]
"#
    ));
    repo
}

/// A repository whose one check runs `command`.
fn one_check(command: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ {{ name = "c", command = {command:?} }} ]
"#
    ));
    repo
}

fn messages(verdict: &serde_json::Value) -> Vec<String> {
    verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_pass_that_names_an_error_fails_under_every_profile() {
    // A repository each: the same errors three runs in a row escalate.
    for profile in ["strict", "auto", "fast"] {
        let repo = reviewer(
            r#"echo '{"verdict": "pass", "findings": [{"file": "handoffs/F1.md", "line": 7, "severity": "error", "message": "criterion 2 is not met"}]}'
"#,
            "on_failure = \"block\"",
        );
        let (code, v) = repo.verdict(&["--profile", profile]);
        assert_eq!(code, 1, "{profile}: {v:#}");
        assert_eq!(
            (v["status"].as_str(), v["next"].as_str()),
            (Some("failed"), Some("fix"))
        );
        assert_eq!(v["fail_open"], false);
        // Whoever retries reads the reviewer's error where it put it, and
        // why the pass was not taken.
        let d = &v["diagnostics"][0];
        assert_eq!(
            (
                d["file"].as_str(),
                d["line"].as_u64(),
                d["message"].as_str()
            ),
            (
                Some("handoffs/F1.md"),
                Some(7),
                Some("criterion 2 is not met")
            )
        );
        assert!(
            messages(&v)
                .iter()
                .any(|m| m.contains("answered \"pass\" but named 1 error(s)")),
            "{v:#}"
        );
    }
}

#[test]
fn a_fail_printed_before_a_timeout_or_a_kill_is_not_let_through() {
    let answer = r#"echo '{"verdict": "fail", "findings": [{"file": "a.md", "line": 2, "message": "no tests for criterion 3"}]}'"#;
    for (ending, options, status) in [
        ("sleep 30", "timeout = \"1s\"", "timed out"),
        ("kill -KILL $$", "timeout = \"60s\"", "SIGKILL"),
    ] {
        let repo = reviewer(&format!("{answer}\n{ending}\n"), options);
        let (code, v) = repo.verdict(&["--profile", "fast"]);
        assert_eq!(code, 1, "{ending}: {v:#}");
        assert_eq!(v["status"], "failed", "{ending}");
        assert_eq!(v["fail_open"], false, "{ending}");
        let c = check(&v, "review");
        let reason = c["reason"].as_str().unwrap();
        assert!(
            reason.contains("answered \"fail\"") && reason.contains(status),
            "{reason}"
        );
        assert!(
            messages(&v).contains(&"no tests for criterion 3".to_string()),
            "{v:#}"
        );
    }
}

#[test]
fn a_tool_missing_behind_flock_or_env_split_string_is_not_installed() {
    if !flock_installed() {
        eprintln!("skipped: util-linux `flock` is not installed");
        return;
    }
    for command in [
        "flock .git/test.lock phasegate-no-such-tool --check",
        "flock -w 5 -E 75 .git/test.lock phasegate-no-such-tool",
        "env -S \"phasegate-no-such-tool --check\"",
        "env -S \"X=1 nice phasegate-no-such-tool\" a",
    ] {
        let repo = one_check(command);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 3, "{command}: {v:#}");
        let c = check(&v, "c");
        assert_eq!(
            (c["status"].as_str(), c["tier"].as_u64()),
            (Some("missing"), Some(1)),
            "{command}"
        );
        assert!(
            messages(&v)[0].contains("`phasegate-no-such-tool` is not installed"),
            "{command}: {v:#}"
        );
        // Under `fast` a missing tool is skipped, not a failure of the code.
        let (code, v) = repo.verdict(&["--profile", "fast"]);
        assert_eq!(code, 0, "{command}: {v:#}");
        assert_eq!(check(&v, "c")["status"], "skipped", "{command}");
    }
    // What they run, when it is there, decides as itself.
    for command in [
        "flock .git/test.lock sh -c \"exit 3\"",
        "env -S \"sh -c 'exit 3'\"",
    ] {
        let (code, v) = one_check(command).verdict(&[]);
        assert_eq!(code, 1, "{command}: {v:#}");
        assert_eq!(check(&v, "c")["exit_code"], 3, "{command}");
    }
}

/// Whether util-linux `flock` is there to run.
fn flock_installed() -> bool {
    std::process::Command::new("flock")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

#[test]
fn a_fail_longer_than_the_answer_limit_is_still_a_fail() {
    // About 1.5 MB, over the 1 MB phasegate reads of an answer.
    let repo = reviewer(
        r#"printf '{"verdict": "fail", "findings": ['
yes '{"message": "a criterion the reviewer found unmet, at length"},' | head -n 30000 | tr -d '\n'
printf '{"message": "last"}]}\n'
"#,
        "on_failure = \"block\"",
    );
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["fail_open"], false);
    assert!(
        messages(&v)
            .iter()
            .any(|m| m.contains("answered \"fail\", but the answer is longer than 1048576 bytes")),
        "{v:#}"
    );
}

#[test]
fn an_answer_printed_on_standard_error_is_told_where_it_goes() {
    let repo = reviewer(
        r#"echo '{"verdict": "pass"}' >&2
"#,
        "on_failure = \"block\"",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let reason = check(&v, "review")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("printed nothing on standard output, where its answer goes"),
        "{reason}"
    );
}
