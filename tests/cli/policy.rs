//! `on_failure`, profiles and the three failure tiers, end to end.

use crate::support::{check, TestRepo};

/// One check in the implementation phase, with extra check options.
fn one_check(command: &str, options: &str) -> String {
    format!(
        r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ {{ name = "c", command = {command:?}, {options} }} ]
"#
    )
}

fn status(verdict: &serde_json::Value) -> (&str, &str, &str) {
    (
        verdict["status"].as_str().unwrap(),
        verdict["next"].as_str().unwrap(),
        check(verdict, "c")["status"].as_str().unwrap(),
    )
}

#[test]
fn a_passing_check_passes() {
    let repo = TestRepo::new();
    repo.config(&one_check("true", r#"on_failure = "block""#));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0);
    assert_eq!(status(&v), ("passed", "proceed", "passed"));
    assert_eq!(v["schema"], "phasegate/verdict/v1");
    assert_eq!(check(&v, "c")["exit_code"], 0);
}

#[test]
fn block_warn_and_skip() {
    let repo = TestRepo::new();
    repo.config(&one_check("false", r#"on_failure = "block""#));
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, status(&v)), (1, ("failed", "fix", "failed")));
    // A failure nothing could parse still explains itself.
    assert_eq!(v["diagnostics"][0]["code"], "check-failed");
    assert_eq!(v["diagnostics"][0]["file"], "phasegate.toml");
    assert_eq!(v["diagnostics"][0]["line"], 5);

    repo.config(&one_check("false", r#"on_failure = "warn""#));
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, status(&v)), (0, ("warned", "proceed", "warned")));

    // Strict turns every warning into a block.
    let (code, v) = repo.verdict(&["--profile", "strict"]);
    assert_eq!((code, status(&v)), (1, ("failed", "fix", "failed")));

    // A skipped check does not even run.
    repo.config(&one_check("touch ran", r#"on_failure = "skip""#));
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, status(&v)), (0, ("passed", "proceed", "skipped")));
    assert!(
        !repo.exists("ran"),
        "a check with on_failure = skip must not run"
    );
}

#[test]
fn tier_1_missing_tool_under_every_profile() {
    let repo = TestRepo::new();
    let missing = "phasegate-test-no-such-tool --flag";
    repo.config(&one_check(missing, r#"on_failure = "block""#));

    let (code, v) = repo.verdict(&["--profile", "strict"]);
    assert_eq!((code, status(&v)), (3, ("incomplete", "resume", "missing")));
    assert_eq!(check(&v, "c")["tier"], 1);
    // Strict reads no `on_missing`: the advice does not offer it.
    let advice = v["diagnostics"][0]["message"].to_string();
    assert!(!advice.contains("on_missing"), "{advice}");

    let (code, v) = repo.verdict(&["--profile", "auto"]);
    assert_eq!((code, status(&v)), (3, ("incomplete", "resume", "missing")));
    let advice = v["diagnostics"][0]["message"].to_string();
    assert!(advice.contains("on_missing"), "{advice}");

    let (code, v) = repo.verdict(&["--profile", "fast"]);
    assert_eq!((code, status(&v)), (0, ("passed", "proceed", "skipped")));
    let notes = v["notes"].to_string();
    assert!(notes.contains("phasegate-test-no-such-tool"), "{notes}");

    repo.config(&one_check(missing, r#"on_missing = "warn""#));
    let (code, v) = repo.verdict(&["--profile", "auto"]);
    assert_eq!((code, status(&v)), (0, ("warned", "proceed", "missing")));
    // Strict ignores on_missing.
    let (code, _) = repo.verdict(&["--profile", "strict"]);
    assert_eq!(code, 3);

    repo.config(&one_check(missing, r#"on_missing = "skip""#));
    let (code, v) = repo.verdict(&["--profile", "auto"]);
    assert_eq!((code, status(&v)), (0, ("passed", "proceed", "skipped")));

    // A script whose shell cannot find a command: the same tier.
    repo.config(&one_check(
        &format!("echo linting; {missing}"),
        "shell = true",
    ));
    let (code, v) = repo.verdict(&["--profile", "auto"]);
    assert_eq!((code, status(&v)), (3, ("incomplete", "resume", "missing")));
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`phasegate-test-no-such-tool` is not installed")),
        "{v:#}"
    );
    // It ran: its log and output's end show what the shell said.
    let log = check(&v, "c")["log"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(repo.read(&log).contains("not found"), "{v:#}");
    assert!(
        check(&v, "c")["output_tail"]
            .to_string()
            .contains("not found"),
        "{v:#}"
    );
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    assert_eq!((code, status(&v)), (0, ("passed", "proceed", "skipped")));
}

#[test]
fn a_missing_program_is_located_where_its_command_is_written() {
    let repo = TestRepo::new();
    // A check that takes its command from [commands]: the program is
    // named on line 2, the check on line 6.
    repo.config(
        r#"[commands]
tests = "phasegate-test-no-such-tool --flag"

[phases.implementation]
checks = [
  { name = "tests" },
  { name = "own",
    command = "phasegate-test-no-such-tool" },
]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let at = |check: &str| {
        let d = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["check"] == check && d["code"] == "missing-tool")
            .unwrap_or_else(|| panic!("no missing-tool finding for {check}: {v:#}"));
        (d["file"].clone(), d["line"].clone(), d["column"].clone())
    };
    assert_eq!(at("tests"), ("phasegate.toml".into(), 2.into(), 9.into()));
    // A check's own `command` on a line of its own: that line.
    assert_eq!(at("own"), ("phasegate.toml".into(), 8.into(), 15.into()));
}

#[test]
fn tier_2_timeout_crash_and_spawn_failure_under_every_profile() {
    let repo = TestRepo::new();
    let cases = [
        (one_check("sleep 30", r#"timeout = "1s""#), "timed_out"),
        (one_check("kill -SEGV $$", "shell = true"), "crashed"),
        (one_check("true", r#"cwd = "no/such/dir""#), "crashed"),
    ];
    for (config, expected) in cases {
        repo.config(&config);
        for profile in ["strict", "auto"] {
            let (code, v) = repo.verdict(&["--profile", profile]);
            assert_eq!(
                (code, status(&v)),
                (3, ("incomplete", "resume", expected)),
                "{profile}: {v:#}"
            );
            assert_eq!(check(&v, "c")["tier"], 2);
            assert_eq!(v["fail_open"], false);
        }
        let (code, v) = repo.verdict(&["--profile", "fast"]);
        assert_eq!(
            (code, status(&v)),
            (0, ("incomplete", "proceed", expected)),
            "{v:#}"
        );
        assert_eq!(v["fail_open"], true);
        assert!(v["notes"].to_string().contains("fails open"));
    }
}

fn verifier(script: &str) -> String {
    format!(
        r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ {{ name = "c", kind = "verifier", shell = true, command = {script:?} }} ]
"#
    )
}

#[test]
fn tier_3_malformed_verifier_answers() {
    let repo = TestRepo::new();
    for answer in [
        "echo 'looks good to me'",
        r#"echo '{"verdict": "maybe"}'"#,
        r#"echo '{"verdict": "pass"} trailing'"#,
        // Two verdicts in one answer: neither may be picked.
        r#"echo '{"verdict": "fail", "findings": [], "verdict": "pass"}'"#,
        "true",
    ] {
        repo.config(&verifier(answer));
        for profile in ["strict", "auto"] {
            let (code, v) = repo.verdict(&["--profile", profile]);
            assert_eq!(code, 3, "{answer} under {profile}: {v:#}");
            assert_eq!(v["status"], "incomplete");
            assert_eq!(check(&v, "c")["tier"], 3);
        }
        let (code, v) = repo.verdict(&["--profile", "fast"]);
        assert_eq!(
            (code, v["fail_open"].as_bool()),
            (0, Some(true)),
            "{answer}"
        );
    }
    // A verifier that dies without an answer is an API error: tier 2.
    repo.config(&verifier("echo 'rate limited' >&2; exit 7"));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3);
    assert_eq!(check(&v, "c")["tier"], 2);
}

#[test]
fn verifier_answers_decide_with_located_findings() {
    let repo = TestRepo::new();
    repo.config(&verifier(r#"echo '{"verdict": "pass", "findings": []}'"#));
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, status(&v)), (0, ("passed", "proceed", "passed")));

    repo.config(&verifier(
        r#"echo '{"verdict": "fail", "findings": [{"file": "handoffs/F1.md", "line": 7, "severity": "error", "message": "criterion 2 is not met"}]}'; exit 1"#,
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!((code, status(&v)), (1, ("failed", "fix", "failed")));
    let d = &v["diagnostics"][0];
    assert_eq!(d["file"], "handoffs/F1.md");
    assert_eq!(d["line"], 7);
    assert_eq!(d["tool"], "verifier");
    assert_eq!(d["message"], "criterion 2 is not met");

    // Its files are placed and its messages cleaned as any tool's are.
    repo.config(&verifier(
        r#"printf '{"verdict": "fail", "findings": [{"file": "%s/handoffs/F1.md", "line": 2, "message": "\u001b[31mred\u001b[0m text"}]}' "$PWD""#,
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let d = &v["diagnostics"][0];
    assert_eq!(d["file"], "handoffs/F1.md", "{v:#}");
    assert_eq!(d["message"], "red text");
}

#[test]
fn the_worst_check_decides_and_failures_win_over_incomplete() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "ok", command = "true" },
  { name = "slow", command = "sleep 30", timeout = "1s" },
  { name = "broken", command = "false" },
]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["status"], "failed");
    assert_eq!(check(&v, "slow")["status"], "timed_out");
    // --check runs only the named checks.
    let (code, v) = repo.verdict(&["--check", "ok"]);
    assert_eq!(code, 0);
    assert_eq!(v["checks"].as_array().unwrap().len(), 1);
    let (code, v) = repo.verdict(&["--check", "slw"]);
    assert_eq!(code, 2);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `slow`"),
        "{v:#}"
    );
}

#[test]
fn the_summary_keeps_as_many_errors_as_configured() {
    let repo = TestRepo::new();
    let lines = (1..=8)
        .map(|i| format!("echo 'f{i}.c:{i}:1: error: problem {i}';"))
        .collect::<Vec<_>>()
        .join(" ");
    repo.config(&format!(
        "[gate]\nsummary = 3\n\n[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, command = \"{lines} exit 1\" }} ]\n"
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 8);
    assert_eq!(v["summary"].as_array().unwrap().len(), 3);
    assert_eq!(v["summary"][0], "f1.c:1 problem 1 (c)");
}

#[test]
fn phasegate_skip_skips_checks_and_says_so() {
    let repo = TestRepo::new();
    repo.config(&one_check("false", r#"on_failure = "block""#));
    let (code, v) = repo.verdict_with(&[], &[("PHASEGATE_SKIP", "c")]);
    assert_eq!(code, 0);
    assert_eq!(check(&v, "c")["status"], "skipped");
    assert!(check(&v, "c")["reason"]
        .as_str()
        .unwrap()
        .contains("PHASEGATE_SKIP"));

    // A name of no check skips nothing, and the verdict says so.
    let (code, v) = repo.verdict_with(&[], &[("PHASEGATE_SKIP", "cc")]);
    assert_eq!(code, 1);
    assert!(
        v["notes"]
            .to_string()
            .contains("PHASEGATE_SKIP names no check"),
        "{v:#}"
    );
}

#[test]
fn workflows_replace_a_phase_and_an_empty_list_disables_it() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "c", command = "false" } ]

[workflows.quick.phases.implementation]
checks = []

[workflows.other.phases.implementation]
checks = [ { name = "d", command = "true" } ]
"#,
    );
    assert_eq!(repo.verdict(&[]).0, 1);
    let (code, v) = repo.verdict(&["--workflow", "quick"]);
    assert_eq!(code, 0);
    assert!(v["checks"].as_array().unwrap().is_empty());
    assert_eq!(v["workflow"], "quick");
    let (code, v) = repo.verdict(&["--workflow", "other"]);
    assert_eq!(code, 0);
    assert_eq!(check(&v, "d")["status"], "passed");
    let (code, v) = repo.verdict(&["--workflow", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(v["error"]["kind"], "usage");
}

#[test]
fn the_phase_comes_from_the_flag_then_the_environment_then_the_default() {
    let repo = TestRepo::new();
    repo.config(
        r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ { name = "impl", command = "true" } ]

[phases.qa]
checks = [ { name = "qa", command = "true" } ]
"#,
    );
    assert_eq!(repo.verdict(&[]).1["phase"], "implementation");
    assert_eq!(
        repo.verdict_with(&[], &[("PHASEGATE_PHASE", "qa")]).1["phase"],
        "qa"
    );
    let (_, v) = repo.verdict_with(&["--phase", "implementation"], &[("PHASEGATE_PHASE", "qa")]);
    assert_eq!(v["phase"], "implementation");
    let (code, v) = repo.verdict(&["--phase", "qaa"]);
    assert_eq!(code, 2);
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("did you mean `qa`"));
}
