//! The runner seen from the command line: process groups, timeouts, huge
//! output, `{files}`, `env` and `cwd`.

use crate::support::{check, process_gone, TestRepo};

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "hang", shell = true, timeout = "1s", command = "sleep 300 & echo $! > grandchild.pid; sleep 300" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(check(&v, "hang")["status"], "timed_out");
    let pid: u32 = repo.read("grandchild.pid").trim().parse().unwrap();
    assert!(
        process_gone(pid),
        "the grandchild {pid} survived the timeout"
    );
}

#[test]
fn a_check_that_leaves_a_background_process_does_not_hang_the_run() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "bg", shell = true, timeout = "60s", command = "sleep 300 & echo $! > bg.pid; echo done" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let pid: u32 = repo.read("bg.pid").trim().parse().unwrap();
    assert!(
        process_gone(pid),
        "the background process {pid} was left running"
    );
}

#[test]
fn hundreds_of_megabytes_of_output_complete_and_are_logged_in_full() {
    let repo = TestRepo::new();
    // 200 MB of lines, then a failure: the tail must still explain it.
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "loud", shell = true, command = "yes 'a line of noise' | head -c 200000000; echo 'the real error'; exit 1" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let log = repo.path().join(check(&v, "loud")["log"].as_str().unwrap());
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 200_000_000 + 15);
    let message = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.ends_with("the real error"), "{message}");
}

#[test]
fn non_utf8_output_is_tolerated() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "bytes", shell = true, command = "printf 'caf\\351 \\377\\376 broken\\n'; exit 1" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1);
    let message = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("caf\u{fffd} \u{fffd}\u{fffd} broken"),
        "{message}"
    );
}

#[test]
fn files_are_passed_as_separate_arguments_and_odd_names_survive() {
    let repo = TestRepo::new();
    let names = [
        "plain.md",
        "with space.md",
        "-leading-dash.md",
        "ünïcode.md",
        "quote'd.md",
    ];
    for name in names {
        repo.stage(name, "# doc\n");
    }
    repo.stage("skip.rs", "fn main() {}\n");
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "docs", files = ["*.md"], command = "sh -c 'printf \"<%s>\\n\" \"$@\" > args.txt' sh {files}" } ]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    let args = repo.read("args.txt");
    let mut got: Vec<&str> = args.lines().collect();
    got.sort_unstable();
    let mut want: Vec<String> = names
        .iter()
        .map(|n| {
            if n.starts_with('-') {
                format!("<./{n}>")
            } else {
                format!("<{n}>")
            }
        })
        .collect();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn a_check_whose_files_do_not_match_is_skipped() {
    let repo = TestRepo::new();
    repo.stage("a.rs", "fn main() {}\n");
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "docs", files = ["*.md"], command = "false" },
  { name = "whole", command = "true" },
]
"#,
    );
    let (code, v) = repo.verdict(&["--files", "a.rs"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "docs")["status"], "skipped");
    assert_eq!(check(&v, "whole")["status"], "passed");
}

#[test]
fn a_bang_glob_leaves_files_out_of_a_check() {
    let repo = TestRepo::new();
    repo.stage("a/src/gen.rs", "\n");
    repo.stage("src/lib.rs", "\n");
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "fmt", command = "echo {files}", files = ["*.rs", "!a/**"] },
  { name = "generated", command = "false", files = ["*.rs", "!*.rs"] },
]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "fmt")["argv"][0][1], "src/lib.rs", "{v:#}");
    assert_eq!(check(&v, "fmt")["argv"][0].as_array().unwrap().len(), 2);
    // Everything it took in was left out again: nothing matches.
    assert_eq!(check(&v, "generated")["status"], "skipped", "{v:#}");
}

#[test]
fn env_and_cwd_reach_the_check() {
    let repo = TestRepo::new();
    repo.write("sub/marker", "");
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "c", shell = true, cwd = "sub", env = { GREETING = "hello" }, command = "test -f marker && echo \"$GREETING $NO_COLOR\" > out.txt" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(repo.read("sub/out.txt"), "hello 1\n");
    assert!(v["environment"].to_string().contains("NO_COLOR"));
}

#[test]
fn every_check_leaves_a_log_and_an_invocation_record() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "c", command = "echo hi", env = { SECRET = "hunter2" } } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0);
    let run_id = v["run_id"].as_str().unwrap();
    let run_dir = repo.path().join(".git/phasegate/runs").join(run_id);
    assert_eq!(
        std::fs::read_to_string(run_dir.join("c.log")).unwrap(),
        "hi\n"
    );
    let record = std::fs::read_to_string(run_dir.join("c.json")).unwrap();
    assert!(record.contains("\"echo\""), "{record}");
    assert!(record.contains("SECRET"), "{record}");
    assert!(
        !record.contains("hunter2"),
        "values of variables must never be recorded"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("verdict.json")).unwrap())
            .unwrap();
    assert_eq!(saved["status"], "passed");
}

#[test]
fn an_interrupted_run_kills_its_checks_and_ends_incomplete() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "hang", shell = true, command = "sleep 300 & echo $! > child.pid; sleep 300" } ]
"#,
    );
    let child = repo
        .command(crate::support::BIN)
        .args(["run", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the check is running: it writes its child's pid first.
    let pid_file = repo.path().join("child.pid");
    let started = std::time::Instant::now();
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        assert!(started.elapsed().as_secs() < 30, "the check never started");
        std::thread::yield_now();
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    let verdict: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(verdict["status"], "incomplete");
    assert!(check(&verdict, "hang")["reason"]
        .as_str()
        .unwrap()
        .contains("interrupted"));
    let pid: u32 = repo.read("child.pid").trim().parse().unwrap();
    assert!(
        process_gone(pid),
        "the check's child {pid} survived the interrupt"
    );
}

#[test]
fn a_check_run_from_a_terminal_has_none_to_wait_on() {
    // phasegate started in a terminal (a pseudo-terminal `script` makes):
    // a check that prompts on /dev/tty fails at once, where it used to be
    // stopped by the terminal until its timeout.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"prompt\", shell = true, timeout = \"20s\", command = \"read x < /dev/tty; echo read $?\" } ]\n",
    );
    let command = format!(
        "{} run --all-files --format json > verdict.json",
        crate::support::BIN
    );
    let started = std::time::Instant::now();
    let out = repo
        .command("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{out:?}"
    );
    let v: serde_json::Value = serde_json::from_str(&repo.read("verdict.json")).unwrap();
    assert_eq!(check(&v, "prompt")["status"], "passed", "{v:#}");
    let log = std::fs::read_to_string(
        repo.path()
            .join(check(&v, "prompt")["log"].as_str().unwrap()),
    )
    .unwrap();
    assert!(log.contains("read 1") || log.contains("read 2"), "{log}");
}

#[test]
fn a_check_in_a_subdirectory_is_placed_and_reported_where_it_is() {
    // A tool run in `sub` that prints paths from the root is still placed
    // at the right file, as is one printing them from `sub`.
    let repo = TestRepo::new();
    repo.write("sub/x.c", "int x;\n")
        .write("sub/y.c", "int y;\n");
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", shell = true, cwd = \"sub\", command = \"echo 'sub/x.c:1:1: error: from the root'; echo 'y.c:1:1: error: from here'; exit 1\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let files: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["file"].as_str())
        .collect();
    assert_eq!(files, ["sub/x.c", "sub/y.c"], "{v:#}");

    // A working directory that is not there, or outside the repository.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", cwd = \"nowhere\", command = \"true\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert!(v.to_string().contains("working directory"), "{v:#}");
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", cwd = \"../\", command = \"true\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(v.to_string().contains("inside the repository"), "{v:#}");
}

#[test]
fn a_file_name_is_never_run_as_shell_code_whatever_quotes_surround_files() {
    // `{files}` written inside quotes, as one quotes `"$var"`: each name
    // still arrives as one argument, and none is read as a command.
    let repo = TestRepo::new();
    for name in [
        "$(touch pwned-d).md",
        "`touch pwned-b`.md",
        "a b.md",
        "it's.md",
    ] {
        repo.stage(name, "# doc\n");
    }
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "double", shell = true, files = ["*.md"], command = "printf '<%s>\n' \"{files}\" > double.txt" },
  { name = "single", shell = true, files = ["*.md"], command = "printf '<%s>\n' '{files}' > single.txt" },
  { name = "subst", shell = true, files = ["*.md"], command = "echo \"$(printf '<%s>\n' {files})\" > subst.txt # it's fine" },
]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    let want = "<$(touch pwned-d).md>\n<`touch pwned-b`.md>\n<a b.md>\n<it's.md>\n";
    for out in ["double.txt", "single.txt", "subst.txt"] {
        let text = repo.read(out);
        let mut got: Vec<&str> = text.lines().collect();
        got.sort_unstable();
        let mut sorted: Vec<&str> = want.lines().collect();
        sorted.sort_unstable();
        assert_eq!(got, sorted, "{out}");
    }
    assert!(
        !repo.exists("pwned-d") && !repo.exists("pwned-b"),
        "a file name ran as a command"
    );
}

#[test]
fn a_shell_check_naming_files_twice_stays_under_the_argument_limit() {
    // Each `{files}` gets the whole batch: the script, one argument, must
    // stay under the kernel's limit with the names written twice.
    let repo = TestRepo::new();
    let names: Vec<String> = (0..1500)
        .map(|i| format!("docs/{}-{i:04}.md", "n".repeat(90)))
        .collect();
    for name in &names {
        repo.write(name, "");
    }
    repo.git(&["add", "-A"]);
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "twice", shell = true, files = ["*.md"], command = "printf '%s\n' {files} >> a.txt && printf '%s\n' {files} >> b.txt" } ]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    for out in ["a.txt", "b.txt"] {
        let text = repo.read(out);
        let mut got: Vec<&str> = text.lines().collect();
        got.sort_unstable();
        assert_eq!(got, names, "{out}");
    }
}

#[test]
fn an_env_entry_no_environment_can_hold_is_a_configuration_error() {
    // `A=B = "x"` would reach the check as `A=B=x`, setting `A`; a NUL
    // cannot be passed at all.
    let repo = TestRepo::new();
    for (env, at) in [
        (r#"{ "A=B" = "x" }"#, r#""A=B""#),
        (r#"{ "" = "x" }"#, r#""""#),
        (r#"{ A = "x\u0000y" }"#, r#""x\u0000y""#),
    ] {
        let line = format!("checks = [ {{ name = \"c\", command = \"true\", env = {env} }} ]");
        repo.config(&format!("[phases.implementation]\n{line}\n"));
        let column = line.find(at).unwrap() + 1;
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2, "{env}: {v:#}");
        let problem = &v["error"]["problems"][0];
        assert_eq!(
            (problem["line"].as_u64(), problem["column"].as_u64()),
            (Some(2), Some(column as u64)),
            "{env}: {v:#}"
        );
    }
}

#[test]
fn check_names_wide_or_very_long_keep_the_report_aligned_and_narrow() {
    let repo = TestRepo::new();
    let long = "a-check-name-far-longer-than-any-terminal-line-".repeat(4);
    repo.config(&format!(
        "[phases.implementation]\nchecks = [\n  {{ name = \"ok\", command = \"true\" }},\n  {{ name = \"检查\", command = \"true\" }},\n  {{ name = \"{long}\", command = \"true\" }},\n]\n"
    ));
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    // The terminal column where each line's status starts.
    let status_column = |name: &str| {
        let line = run
            .stdout
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{}", run.stdout));
        let before = &line[..line.find("passed").unwrap()];
        // Two columns for each CJK character, one for anything else.
        before
            .chars()
            .map(|c| if c > '\u{2e80}' { 2 } else { 1 })
            .sum::<usize>()
    };
    assert_eq!(status_column("ok"), status_column("检查"), "{}", run.stdout);
    assert!(status_column("ok") < 60, "{}", run.stdout);
}

#[test]
fn a_verifiers_standard_error_is_captured_like_any_output() {
    // It goes through the same capture as standard output, which counts
    // every byte and keeps the log under its limit; written straight to
    // the log, a verifier printing without end filled the disk until its
    // timeout.
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "v", kind = "verifier", shell = true, command = "head -c 300000 /dev/zero >&2; echo '{\"verdict\": \"pass\", \"findings\": []}'" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let log = repo.path().join(check(&v, "v")["log"].as_str().unwrap());
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(log.with_extension("json")).unwrap())
            .unwrap();
    let answer = r#"{"verdict": "pass", "findings": []}"#.len() as u64 + 1;
    assert_eq!(record["output_bytes"], 300_000 + answer, "{record:#}");
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 300_000 + answer);
}

#[test]
fn a_file_name_in_a_comment_or_an_expansion_no_quote_protects_is_never_run() {
    // A comment after `&` ends at a newline in a name; inside `${...}`
    // and `$((...))` no quoting keeps a name from being read as code.
    let repo = TestRepo::new();
    repo.stage("b\ntouch pwned-comment\n#.x", "x\n");
    repo.stage("a.x", "x\n");
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "comment", shell = true, files = ["*.x"], command = "true&# {files}" } ]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        !repo.exists("pwned-comment"),
        "a file name ran as a command"
    );

    for command in [
        r#"printf '%s\n' \"${LIST:-{files}}\""#,
        "echo $(( {files} ))",
    ] {
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, files = [\"*.x\"], command = \"{command}\" }} ]\n"
        ));
        let run = repo.phasegate(&["run", "--all-files"]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr.contains("where a file name could run as code")
                && run.stderr.contains("phasegate.toml:2:"),
            "{run:?}"
        );
    }
}
