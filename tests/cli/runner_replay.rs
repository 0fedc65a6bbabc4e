//! The invocation record: replaying big batches, offsets into a cut log, and batches that found no tests.

use crate::support::{check, TestRepo};

/// The invocation record of the check `name`, beside its log.
fn record(repo: &TestRepo, v: &serde_json::Value, name: &str) -> serde_json::Value {
    let log = check(v, name)["log"].as_str().unwrap().to_string();
    let path = log.strip_suffix(".log").unwrap().to_string() + ".json";
    serde_json::from_str(&repo.read(&path)).unwrap()
}

#[test]
fn a_batch_near_the_argument_limit_replays_from_its_script() {
    // 3,000 staged files with long names: one batch of about 250 KiB of
    // arguments, under the limit for a command line, but a `command`
    // line no `sh -c` can take (one argument stops at 128 KiB).
    let repo = TestRepo::new();
    for i in 0..3000 {
        repo.write(&format!("docs/{i:04}-{}.md", "n".repeat(70)), "x\n");
    }
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "docs", command = "printf '<%s>\n' {files}", files = ["*.md"], env = { TOKEN = "hunter2" } } ]
"#,
    );
    repo.git(&["add", "-A"]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let record = record(&repo, &v, "docs");
    let batches = record["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 1, "{record:#}");
    let batch = &batches[0];
    assert!(
        batch["command"].as_str().unwrap().len() > 128 * 1024,
        "the batch is not big enough to test anything"
    );
    // Replayed as the record says, from anywhere: it runs in the check's
    // directory and prints what it printed in the run.
    let replay = batch["replay"].as_str().unwrap();
    let out = repo
        .command("sh")
        .args(["-c", replay])
        .current_dir(repo.home())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = repo.read(check(&v, "docs")["log"].as_str().unwrap());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), log);
    assert!(log.starts_with("<docs/0000-nnn"), "{}", &log[..100]);
    // The script names the variables the check sets nowhere, and never
    // their values.
    let script = replay.strip_prefix("sh ").unwrap().trim_matches('\'');
    let text = std::fs::read_to_string(script).unwrap();
    assert!(!text.contains("hunter2"), "{}", &text[..500]);
}
