//! Checks run in several batches: every batch runs, and each is recorded so it can be replayed.

use std::os::unix::ffi::OsStrExt;

use crate::support::{check, TestRepo};

/// A repository with 1,000 staged files whose long names make a `shell =
/// true` check over `{files}` run in two batches (the script, one
/// argument, must stay under the kernel's 128 KiB limit), checked by
/// `script`; the first batch starts with `docs/0000-...`.
fn two_batches(script: &str) -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..1000 {
        repo.write(&format!("docs/{i:04}-{}.md", "n".repeat(130)), "x\n");
    }
    repo.config(&format!(
        r#"[phases.implementation]
checks = [ {{ name = "docs", shell = true, files = ["*.md"], on_failure = "block", command = "set -- {{files}}; {script}" }} ]
"#
    ));
    repo.git(&["add", "-A"]);
    repo
}

/// The invocation record of the check `name`, beside its log.
fn record(repo: &TestRepo, v: &serde_json::Value, name: &str) -> serde_json::Value {
    let log = check(v, name)["log"].as_str().unwrap().to_string();
    let path = log.strip_suffix(".log").unwrap().to_string() + ".json";
    serde_json::from_str(&repo.read(&path)).unwrap()
}

/// Runs a batch's recorded `command` in the record's `cwd` as a person
/// would, pasted into a shell (here a script file: as one argument of
/// `sh -c`, the command line of a batch near the argument limit would
/// exceed it once quoted).
fn replay(
    repo: &TestRepo,
    record: &serde_json::Value,
    batch: &serde_json::Value,
) -> std::process::Output {
    let script = repo.home().join("replay.sh");
    std::fs::write(&script, batch["command"].as_str().unwrap()).unwrap();
    repo.command("sh")
        .arg(&script)
        .current_dir(record["cwd"].as_str().unwrap())
        .output()
        .unwrap()
}

#[test]
fn a_batch_that_crashes_leaves_the_later_batches_to_run() {
    // The first batch's tool crashes; the files of the second are still
    // checked, and the failure found there is not hidden by the crash,
    // even under `fast`, where a crash alone only warns.
    let repo = two_batches(
        r#"case $1 in docs/0000-*) kill -SEGV $$;; *) echo \"$1:1:1: error: broken\"; exit 5;; esac"#,
    );
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    let docs = check(&v, "docs");
    assert_eq!(docs["argv"].as_array().unwrap().len(), 2, "{docs:#}");
    assert_eq!((code, v["status"].as_str()), (1, Some("failed")), "{v:#}");
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["message"] == "broken"),
        "{v:#}"
    );
    let log = repo.read(docs["log"].as_str().unwrap());
    assert!(
        log.contains("[phasegate: batch 1 of 2 (its output from byte 0): killed by signal 11]"),
        "{log}"
    );
    assert!(log.contains("[phasegate: batch 2 of 2 (its output from byte 0): exited 5]"));
    assert!(!log.contains("not run"), "{log}");
    // The record says which batch crashed.
    let batches = record(&repo, &v, "docs")["batches"].clone();
    assert_eq!(batches[0]["termination"], serde_json::json!({"signal": 11}));
    assert_eq!(batches[1]["termination"], serde_json::json!({"exited": 5}));
}

#[test]
fn the_record_keeps_each_batch_and_a_command_line_that_replays_it() {
    // The first batch fails, the second passes: the check's exit code is
    // the failing one's, and the record holds how each ended and what it
    // ran, to run again by hand.
    let repo = two_batches(
        r#"echo \"$# files from $1\"; case $1 in docs/0000-*) exit 3;; *) exit 0;; esac"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let docs = check(&v, "docs");
    assert_eq!(docs["exit_code"], 3, "{docs:#}");
    let record = record(&repo, &v, "docs");
    let batches = record["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 2, "{record:#}");
    let log = repo.read(docs["log"].as_str().unwrap());
    for (n, (batch, exited)) in batches.iter().zip([3, 0]).enumerate() {
        assert_eq!(batch["argv"], record["argv"][n], "{batch:#}");
        assert_eq!(
            batch["termination"],
            serde_json::json!({ "exited": exited })
        );
        assert!(batch["duration_ms"].is_u64(), "{batch:#}");
        // Where its output starts in the log, as the log's own note says.
        let from = batch["output_from"].as_u64().unwrap();
        assert!(
            log.contains(&format!(
                "[phasegate: batch {} of 2 (its output from byte {from}): exited {exited}]",
                n + 1
            )),
            "{log}"
        );
        // Replayed by hand, it prints what it printed in the run.
        let replay = replay(&repo, &record, batch);
        assert_eq!(replay.status.code(), Some(exited));
        let from = usize::try_from(from).unwrap();
        let printed = String::from_utf8(replay.stdout).unwrap();
        assert_eq!(&log[from..from + printed.len()], printed);
        assert!(printed.contains(" files from docs/"), "{printed}");
    }
}

#[test]
fn a_file_name_that_is_not_utf8_is_recorded_so_it_can_be_replayed() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "docs", command = "cat {files}", files = ["*.md"] } ]
"#,
    );
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9 l'\xff.md");
    std::fs::write(repo.path().join(name), "bonjour\n").unwrap();
    repo.git(&["add", "-A"]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let record = record(&repo, &v, "docs");
    let batch = &record["batches"][0];
    // The readable argv keeps U+FFFD in place of the bytes; the command
    // line names the very file.
    assert_eq!(batch["argv"][1], "caf\u{fffd} l'\u{fffd}.md", "{batch:#}");
    let replay = replay(&repo, &record, batch);
    assert_eq!(
        (replay.status.code(), replay.stdout.as_slice()),
        (Some(0), &b"bonjour\n"[..]),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}
