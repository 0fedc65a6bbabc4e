//! Configuration: a file means what it says, and its errors are miette
//! reports that point into phasegate.toml, exit 2, and still one JSON verdict
//! under `--format json`.

use crate::support::{check, TestRepo};

#[test]
fn an_unknown_key_points_at_its_span_and_suggests_the_near_miss() {
    let repo = TestRepo::new();
    repo.config(
        r#"[gate]
profle = "strict"

[phases.implementation]
checks = []
"#,
    );
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 2);
    insta::assert_snapshot!("unknown_key", repo.redact(&run.stderr));

    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2);
    assert_eq!(v["status"], "incomplete");
    assert_eq!(v["next"], "fix");
    assert_eq!(v["error"]["kind"], "config");
    let problem = &v["error"]["problems"][0];
    assert_eq!(problem["file"], "phasegate.toml");
    assert_eq!(
        (problem["line"].as_u64(), problem["column"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(
        problem["help"].as_str().unwrap().contains("profile"),
        "{problem:#}"
    );
}

#[test]
fn malformed_toml_wrong_types_and_bad_values_exit_2() {
    let repo = TestRepo::new();
    let cases = [
        ("[gate\nprofile = \"auto\"\n", 1),
        ("[gate]\nmax_retries = \"three\"\n[phases.implementation]\nchecks = []\n", 2),
        ("[gate]\nprofile = \"strickt\"\n[phases.implementation]\nchecks = []\n", 2),
        (
            "[phases.implementation]\nchecks = [ { name = \"tset\" } ]\n",
            2,
        ),
        (
            "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\", timeout = \"soon\" } ]\n",
            2,
        ),
        (
            "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\" }, { name = \"a\", command = \"true\" } ]\n",
            2,
        ),
    ];
    for (text, line) in cases {
        repo.config(text);
        let run = repo.phasegate(&["run"]);
        assert_eq!(run.code, 2, "{text}\n{}", run.stderr);
        assert!(run.stderr.contains("phasegate.toml"), "{}", run.stderr);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2);
        assert_eq!(v["error"]["problems"][0]["line"], line, "{text}\n{v:#}");
    }
}

#[test]
fn a_wrong_env_is_shown_in_the_form_toml_takes() {
    let repo = TestRepo::new();
    let help = |env: &str| {
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"c\", command = \"true\", env = {env} }} ]\n"
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2, "{v:#}");
        let problem = &v["error"]["problems"][0];
        assert_eq!(problem["line"], 2, "{problem:#}");
        problem["help"].as_str().unwrap_or_default().to_string()
    };
    // A shell's or a Dockerfile's form, turned into TOML's.
    assert!(
        help(r#"["RUST_LOG=debug", "MODE=a b"]"#)
            .ends_with(r#"env = { RUST_LOG = "debug", MODE = "a b" }"#),
        "{}",
        help(r#"["RUST_LOG=debug"]"#)
    );
    assert!(help(r#""A=1""#).ends_with(r#"env = { NAME = "value" }"#));
    // A number or a boolean is quoted, under its name as TOML writes it.
    assert_eq!(help("{ RETRIES = 3 }"), r#"quote it: RETRIES = "3""#);
    assert_eq!(
        help(r#"{ "NO COLOR" = true }"#),
        r#"quote it: "NO COLOR" = "true""#
    );
}

#[test]
fn the_local_override_wins_and_its_errors_name_it() {
    let repo = TestRepo::new();
    repo.config("[gate]\nprofile = \"auto\"\n\n[phases.implementation]\nchecks = [ { name = \"c\", command = \"false\", on_failure = \"warn\" } ]\n");
    assert_eq!(repo.verdict(&[]).0, 0);
    repo.write("phasegate.local.toml", "[gate]\nprofile = \"strict\"\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(
        code, 1,
        "strict from the local file turns the warning into a block"
    );
    assert_eq!(v["profile"], "strict");
    // And the verdict says the gate is not the repository's.
    assert!(
        v["notes"]
            .to_string()
            .contains("phasegate.local.toml` overrides"),
        "{v:#}"
    );
    repo.write("phasegate.local.toml", "[gate]\nprofil = \"strict\"\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2);
    assert_eq!(v["error"]["problems"][0]["file"], "phasegate.local.toml");
}

#[test]
fn a_bad_command_line_is_a_usage_error_with_a_json_verdict() {
    let repo = TestRepo::new();
    let run = repo.phasegate(&["run", "--format", "json", "--no-such-flag"]);
    assert_eq!(run.code, 2);
    let v = run.json();
    assert_eq!(v["error"]["kind"], "usage");
    let run = repo.phasegate(&["run", "--profile", "turbo", "--format", "json"]);
    assert_eq!(run.code, 2);
    assert!(run.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("strict, auto, fast"));
    // The message names what is missing, not only that something is.
    let run = repo.phasegate(&["run", "--format", "json", "--from-ref", "A"]);
    assert_eq!(run.code, 2);
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--to-ref"),
        "{}",
        run.stdout
    );
}

#[test]
fn every_command_that_prints_json_answers_a_bad_command_line_in_json() {
    let repo = TestRepo::new();
    // `resume` answers with a verdict, as `run` does.
    let run = repo.phasegate(&["resume", "--bogus", "--format", "json"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["error"]["kind"], "usage", "{}", run.stdout);
    // The others with `{"error": ...}`, naming what was wrong.
    for (args, names) in [
        (&["history", "--bogus", "--format", "json"][..], "--bogus"),
        (&["interventions", "lst", "--format", "json"][..], "lst"),
        (&["interventions", "show", "--format", "json"][..], "<ID>"),
        (
            &["handoff", "validate", "--bogus", "--format", "json"][..],
            "--bogus",
        ),
        (
            &["diagnostics", "parse", "--bogus", "--format", "json"][..],
            "--bogus",
        ),
    ] {
        let run = repo.phasegate(args);
        assert_eq!(run.code, 2, "{args:?}");
        let error = run.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(error.contains(names), "{args:?}: {}", run.stdout);
        // People still read clap's own message.
        assert!(run.stderr.contains("error:"), "{args:?}: {}", run.stderr);
    }
    // Without `--format json`, nothing on stdout.
    let run = repo.phasegate(&["history", "--bogus"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
}

#[test]
fn a_nul_in_a_command_or_a_working_directory_is_a_configuration_error() {
    // TOML writes it `\u0000`; no command line or path can pass it.
    for (toml, line, why) in [
        (
            "[phases.implementation]\nchecks = [ { name = \"c\", command = \"echo a\\u0000b\" } ]\n",
            2,
            "no command line can pass",
        ),
        (
            "[phases.implementation]\nchecks = [ { name = \"c\", shell = true, command = \"echo a\\u0000b\" } ]\n",
            2,
            "no command line can pass",
        ),
        (
            "[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\", cwd = \"a\\u0000b\" } ]\n",
            2,
            "no path can hold",
        ),
        (
            "[commands]\ntests = \"echo a\\u0000b\"\n[phases.implementation]\nchecks = [ { name = \"tests\" } ]\n",
            2,
            "no command line can pass",
        ),
    ] {
        let repo = TestRepo::new();
        repo.config(toml);
        let run = repo.phasegate(&["run", "--all-files", "--format", "json"]);
        assert_eq!(run.code, 2, "{toml}: {}", run.stdout);
        let v = run.json();
        let said = v["error"].to_string();
        assert!(said.contains("NUL character"), "{toml}: {said}");
        assert!(said.contains(why), "{toml}: {said}");
        assert_eq!(v["error"]["problems"][0]["line"], line, "{toml}: {said}");
    }
}

#[test]
fn a_check_that_cannot_work_as_written_is_a_configuration_error() {
    for (check, said) in [
        (
            r#"{ name = "s", command = "true", timeout = "2562047788015215h" }"#,
            "longer than a week",
        ),
        (
            r#"{ name = "nul\u0000x", command = "true" }"#,
            "control characters",
        ),
        (
            r#"{ name = "c", command = "tool --only={files}" }"#,
            "argument of its own",
        ),
        (
            r#"{ name = "c", command = "tool {files} {files}" }"#,
            "argument of its own",
        ),
    ] {
        let repo = TestRepo::new();
        repo.config(&format!("[phases.implementation]\nchecks = [ {check} ]\n"));
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 2, "{check}: {v:#}");
        assert!(v.to_string().contains(said), "{check}: {v:#}");
    }
}

#[test]
fn escalate_after_stays_within_the_runs_the_history_keeps() {
    let repo = TestRepo::new();
    let gate = |n: u32| {
        format!("[gate]\nescalate_after = {n}\n[phases.implementation]\nchecks = [ {{ name = \"c\", command = \"true\" }} ]\n")
    };
    repo.config(&gate(100));
    assert_eq!(repo.verdict(&["--all-files"]).0, 0);
    repo.config(&gate(101));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(v.to_string().contains("at most 100"), "{v:#}");
}

#[test]
fn a_shell_check_gets_its_commands_entry_as_written() {
    let repo = TestRepo::new();
    repo.write("my dir/f.txt", "hi\n");
    repo.config(
        r#"[commands]
tests = "cat 'my dir/f.txt'"

[phases.implementation]
checks = [ { name = "tests", shell = true } ]
"#,
    );
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "the quotes reach the shell: {v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed", "{v:#}");
}

#[test]
fn a_files_pattern_that_names_a_directory_matches_everything_beneath_it() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "slash",     command = "true", files = ["docs/"] },
  { name = "bare",      command = "true", files = ["docs"] },
  { name = "deep",      command = "true", files = ["sub"] },
  { name = "anchored",  command = "true", files = ["docs/sub"] },
  { name = "elsewhere", command = "true", files = ["src/docs"] },
  { name = "rooted",    command = "true", files = ["/sub"] },
]
"#,
    );
    repo.stage("docs/sub/a.md", "x\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    for name in ["slash", "bare", "deep", "anchored"] {
        assert_eq!(check(&v, name)["status"], "passed", "{name}: {v:#}");
    }
    for name in ["elsewhere", "rooted"] {
        assert_eq!(check(&v, name)["status"], "skipped", "{name}: {v:#}");
    }

    // A trailing `/` matches only a directory, without one a file too.
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "directory", command = "true", files = ["notes/"] },
  { name = "any",       command = "true", files = ["notes"] },
]
"#,
    );
    repo.stage("a/notes", "x\n");
    let (code, v) = repo.verdict(&["--files", "a/notes"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "directory")["status"], "skipped", "{v:#}");
    assert_eq!(check(&v, "any")["status"], "passed", "{v:#}");
}

#[test]
fn the_human_report_and_the_verdict_give_one_character_column() {
    let repo = TestRepo::new();
    for (text, line, column) in [
        (
            "[phases.implementation]\nchecks = [ { name = \"日本語\", command = \"true\", on_failure = \"blok\" } ]\n",
            2,
            59,
        ),
        // A byte order mark is not a column.
        ("\u{feff}[gats]\n", 1, 2),
        // Nor is the `\r` of a CRLF ending: the string ends at the line's end.
        ("[gate]\r\nprofile = \"auto\r\n", 2, 16),
    ] {
        repo.config(text);
        let run = repo.phasegate(&["run"]);
        assert_eq!(run.code, 2, "{text:?}\n{}", run.stderr);
        let header = format!("[phasegate.toml:{line}:{column}]");
        assert!(run.stderr.contains(&header), "{text:?}: {header} in\n{}", run.stderr);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2);
        let problem = &v["error"]["problems"][0];
        assert_eq!(
            (problem["line"].as_u64(), problem["column"].as_u64()),
            (Some(line), Some(column)),
            "{text:?}: {v:#}"
        );
    }
}

#[test]
fn a_broken_commands_entry_is_one_error_in_the_users_file() {
    let repo = TestRepo::new();
    repo.config(
        r#"[commands]
tests = "sh -c 'echo unbalanced"

[phases.implementation]
checks = [ { name = "tests", shell = true } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    let problems = v["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v:#}");
    assert_eq!(problems[0]["line"], 2, "{v:#}");
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("a quote is not closed"),
        "{v:#}"
    );
    // A [commands] entry has no `shell` option to set.
    assert!(
        !problems[0]["help"].as_str().unwrap().contains("shell"),
        "{v:#}"
    );

    // Over the embedded default of a Rust project: the mistake is in the
    // file, and nothing is located in a file that does not exist.
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "[package]\n");
    for (text, line) in [("[commands]\nlint = \"\"\n", 2), ("commands = 5\n", 1)] {
        repo.config(text);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2, "{text}: {v:#}");
        let problems = v["error"]["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{text}: {v:#}");
        assert_eq!(problems[0]["file"], "phasegate.toml", "{text}: {v:#}");
        assert_eq!(problems[0]["line"], line, "{text}: {v:#}");
        let run = repo.phasegate(&["run"]);
        assert!(!run.stderr.contains("embedded"), "{text}: {}", run.stderr);
    }
}

#[test]
fn a_timeout_is_a_duration_or_a_positive_number_of_seconds() {
    let repo = TestRepo::new();
    for (value, accepted) in [
        ("5", true),
        ("\"90s\"", true),
        ("0", false),
        ("-5", false),
        ("1.5", false),
    ] {
        let text = format!(
            "[phases.implementation]\nchecks = [ {{ name = \"x\", command = \"true\", timeout = {value} }} ]\n"
        );
        repo.config(&text);
        let (code, v) = repo.verdict(&[]);
        if accepted {
            assert_eq!(code, 0, "{value}: {v:#}");
            continue;
        }
        assert_eq!(code, 2, "{value}: {v:#}");
        let problem = &v["error"]["problems"][0];
        let message = problem["message"].as_str().unwrap();
        assert!(
            message.contains("positive number of seconds") && !message.contains("not an integer"),
            "{value}: {v:#}"
        );
        let column = text.lines().nth(1).unwrap().find(value).unwrap() + 1;
        assert_eq!(problem["column"], column, "{value}: {v:#}");
    }
}

#[test]
fn errors_in_a_workflow_phase_name_its_table() {
    let repo = TestRepo::new();
    for (text, said) in [
        (
            "[workflows.quick.phases.implementation]\nchecks = [ { name = \"x\", command = \"true\", timout = \"1s\" } ]\n",
            "unknown key `timout` in a check of [workflows.quick.phases.implementation]",
        ),
        (
            "[workflows.quick.phases.implementation]\n",
            "[workflows.quick.phases.implementation] has no `checks` list",
        ),
    ] {
        repo.config(&format!("[phases.implementation]\nchecks = []\n{text}"));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2, "{v:#}");
        assert_eq!(v["error"]["problems"][0]["message"], said, "{v:#}");
    }
}

#[test]
fn problems_come_in_file_order() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"x\", command = \"true\", timout = \"1s\", envs = {}, shel = true } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    let keys: Vec<(u64, &str)> = v["error"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["column"].as_u64().unwrap(),
                p["message"].as_str().unwrap().split('`').nth(1).unwrap(),
            )
        })
        .collect();
    assert_eq!(keys, [(44, "timout"), (59, "envs"), (70, "shel")], "{v:#}");
    let run = repo.phasegate(&["run"]);
    let timout = run.stderr.find("`timout`").unwrap();
    let shel = run.stderr.find("`shel`").unwrap();
    assert!(timout < shel, "{}", run.stderr);
}

#[test]
fn a_directory_in_place_of_the_file_is_named_as_one() {
    let repo = TestRepo::new();
    std::fs::create_dir(repo.path().join("phasegate.toml")).unwrap();
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    let problem = &v["error"]["problems"][0];
    assert!(
        problem["message"]
            .as_str()
            .unwrap()
            .contains("is a directory"),
        "{v:#}"
    );
    let help = problem["help"].as_str().unwrap();
    assert!(
        help.contains("directory") && !help.contains("permissions"),
        "{v:#}"
    );
}

#[test]
fn a_committed_or_staged_config_that_is_not_utf8_is_placed_like_the_work_trees() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join("phasegate.toml"),
        b"# caf\xe9\n[phases.implementation]\nchecks = [ { name = \"t\", command = \"true\" } ]\n",
    )
    .unwrap();
    repo.commit_all("a config with a Latin-1 comment");

    for args in [&["--config-from-ref", "HEAD"][..], &[][..]] {
        if args.is_empty() {
            // The index holds the committed bytes; the work-tree copy that
            // differs from them is valid.
            repo.write(
                "phasegate.toml",
                "[phases.implementation]\nchecks = [ { name = \"t\", command = \"true\" } ]\n",
            );
        }
        let (code, v) = repo.verdict(args);
        assert_eq!(code, 2, "{args:?}: {v:#}");
        let problem = &v["error"]["problems"][0];
        assert!(
            problem["message"]
                .as_str()
                .unwrap()
                .contains("not valid UTF-8"),
            "{v:#}"
        );
        assert_eq!(problem["file"], "phasegate.toml", "{v:#}");
        assert_eq!(
            (problem["line"].as_u64(), problem["column"].as_u64()),
            (Some(1), Some(6))
        );
    }
}

#[test]
fn a_link_to_a_missing_file_in_place_of_the_file_is_an_error_not_no_configuration() {
    // Read as "no phasegate.toml", it would run the defaults (here: no
    // project, nothing to check) and pass.
    let repo = TestRepo::new();
    std::os::unix::fs::symlink("shared/gate.toml", repo.path().join("phasegate.toml")).unwrap();
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["problems"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("symbolic link") && message.contains("shared/gate.toml"),
        "{v:#}"
    );
}
