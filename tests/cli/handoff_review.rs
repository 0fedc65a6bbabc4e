//! Handoff documents at their edges: unclosed, huge and noisy ones.

use std::io::Read;
use std::process::Stdio;

use crate::support::{TestRepo, BIN};

/// Checks that pass, for handoff documents alone.
pub(crate) const GATE: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "true" }, { name = "lint", command = "true" } ]
"#;

/// The frontmatter of an implementation document whose checkpoints all
/// pass, without its closing line.
const FIELDS: &str = "---
id: F7
stage: implementation
title: Parse the verdict
started_at: 2026-11-20T09:00:00Z
status: in_progress
handoff_ready: true
checkpoints:
  - name: tests_written
    status: pass
  - name: code_complete
    status: pass
  - name: tests_passing
    status: pass
  - name: no_lint_errors
    status: pass
";

/// The errors of the one document `handoff validate --format json` judged.
fn errors(repo: &TestRepo, path: &str) -> (i32, Vec<serde_json::Value>) {
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", path]);
    let json = run.json();
    let errors = json["handoffs"][0]["errors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    (run.code, errors)
}

#[test]
fn a_frontmatter_left_open_is_not_read_into_the_body() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // The closing `---` was forgotten; the body's rule closes what YAML
    // reads, and the body's labels read as fields, its heading as a
    // comment.
    for body in [
        "\nOwner: alice\nNote: see below\n\n---\n\nMore text.\n",
        "\n## Summary\n\nStatus: done\n\n---\n",
        "\n# Summary\nStatus: done\n\n- item one\n- item two\n\n---\n",
    ] {
        repo.write("handoffs/F7.md", &format!("{FIELDS}{body}"));
        let (code, errors) = errors(&repo, "handoffs/F7.md");
        assert_eq!(code, 1, "a document left open passed: {body:?}");
        assert_eq!(errors.len(), 1, "{body:?}: {errors:#?}");
        let message = errors[0]["message"].as_str().unwrap();
        assert_eq!(errors[0]["line"], 18, "{body:?}: {message}");
        assert!(
            message.contains("opens on line 1 is not closed")
                && message.contains("add a `---` line after line 16"),
            "{body:?}: {message}"
        );
    }

    // The fields before the text are still judged, and `run` fails on it.
    let wrong = FIELDS.replace("status: in_progress", "status: finished");
    repo.stage("handoffs/F7.md", &format!("{wrong}\nOwner: alice\n\n---\n"));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    let lines: Vec<&serde_json::Value> = verdict["handoffs"][0]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["line"])
        .collect();
    assert_eq!(lines, [6, 18], "{verdict:#}");

    // A comment among the fields, and a field of the author's own, are
    // not text.
    let own = FIELDS.replace("title:", "\n# Who\n\nreviewer: bob\ntitle:");
    repo.write("handoffs/F7.md", &format!("{own}---\n\n# Notes\n"));
    let (code, errors) = errors(&repo, "handoffs/F7.md");
    assert_eq!((code, errors.len()), (0, 0), "{errors:#?}");
}

#[test]
fn a_frontmatter_never_closed_says_after_which_line_the_closing_line_goes() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write(
        "handoffs/F7.md",
        &format!("{FIELDS}\n# Notes\n\nStatus: done\n"),
    );
    let (code, errors) = errors(&repo, "handoffs/F7.md");
    assert_eq!(code, 1);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("opens on line 1 is never closed")
            && message.contains("add a `---` line after line 16"),
        "{message}"
    );
}

#[test]
fn only_the_first_mebibytes_of_a_huge_document_are_read() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // A frontmatter that goes on for megabytes is no handoff's: it is said
    // so, without reading the whole file.
    let endless = format!("{FIELDS}{}", "note: more\n".repeat(600_000));
    repo.write("handoffs/F7.md", &endless);
    let (code, errors) = errors(&repo, "handoffs/F7.md");
    assert_eq!(code, 1);
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.contains("does not close within the document's first 4 MiB"),
        "{message}"
    );

    // A document with a long body is judged by its frontmatter.
    let long = format!("{FIELDS}---\n{}", "Some text.\n".repeat(600_000));
    repo.stage("handoffs/F7.md", &long);
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", "handoffs/F7.md"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("larger than 4 MiB"), "{}", run.stdout);
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(verdict["handoffs"][0]["valid"], true, "{verdict:#}");
}

/// Runs `phasegate ARGS` in `repo`, killing it if it has not finished in
/// a minute (a read that waits forever), and returns its exit code and
/// stdout.
#[cfg(unix)]
fn finishing(repo: &TestRepo, args: &[&str]) -> (i32, String) {
    let mut child = repo
        .command(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("phasegate {args:?} never finished");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    (status.code().unwrap_or(-1), stdout)
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_among_the_handoffs_is_refused_not_read() {
    let repo = TestRepo::new();
    repo.config(GATE);
    std::fs::create_dir_all(repo.path().join("handoffs")).unwrap();
    let fifo = repo.path().join("handoffs/pipe.md");
    let made = repo.command("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", repo.path().join("handoffs/zero.md")).unwrap();

    for (path, what) in [
        ("handoffs/pipe.md", "a FIFO"),
        ("handoffs/zero.md", "a device"),
    ] {
        let (code, stdout) = finishing(&repo, &["handoff", "validate", "--format", "json", path]);
        assert_eq!(code, 1, "{path}: {stdout}");
        assert!(
            stdout.contains(&format!("it is {what}, which is not a regular file")),
            "{path}: {stdout}"
        );
        let (code, stdout) = finishing(&repo, &["handoff", "feedback", path]);
        assert_eq!(code, 1, "{path}: {stdout}");
    }
    // `run` selects no FIFO; a link to a device is selected, and read as
    // the work tree has it.
    let (code, stdout) = finishing(
        &repo,
        &["run", "--format", "json", "--files", "handoffs/zero.md"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("not a regular file"), "{stdout}");
}

#[test]
fn feedback_on_thousands_of_defects_shows_the_first_of_each() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // The checkpoint list pasted over and over, and a wrong status after
    // it: the one mistake of another kind is shown, the repeats counted.
    let mut doc = FIELDS.replace("status: in_progress\n", "");
    doc.push_str(&"  - name: tests_written\n    status: pass\n".repeat(5_000));
    doc.push_str("status: finished\n---\n");
    repo.write("handoffs/F7.md", &doc);
    let run = repo.phasegate(&["handoff", "feedback", "handoffs/F7.md"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let sections = run.stdout.matches("\n### ").count();
    assert!(sections <= 21, "{sections} sections:\n{}", run.stdout);
    assert!(
        run.stdout.contains("### Defect in `status` (line 10016)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("### And 4981 more to fix"),
        "{}",
        run.stdout
    );
    let json = repo
        .phasegate(&["handoff", "feedback", "--format", "json", "handoffs/F7.md"])
        .json();
    assert_eq!(json["items"].as_array().unwrap().len(), 20, "{json:#}");
    assert_eq!(json["omitted"], 4981, "{json:#}");
    // `validate` lists every one, and at a terminal draws the first and
    // lists the others.
    let (code, errors) = errors(&repo, "handoffs/F7.md");
    assert_eq!((code, errors.len()), (1, 5001));
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F7.md"]);
    assert_eq!(run.stdout.matches(" error checkpoint ").count(), 5000);
    let run = crate::report_once::at_terminal(&repo, &["handoff", "validate", "handoffs/F7.md"]);
    assert!(
        run.stdout.contains("and the 4981 more errors listed below"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.matches("\n  handoffs/F7.md:").count(), 4981);
}
