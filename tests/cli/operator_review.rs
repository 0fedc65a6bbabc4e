//! The person called in when phasegate escalates: interventions, history, resume.
//!
//! An agent commits through the installed hook until phasegate asks for a
//! person; the person reads the queue, acts, resolves, and the work goes
//! on.

use crate::support::{Run, TestRepo};

/// `tests` always fails on the same assertion; two runs in a row with it
/// escalate.
const STUCK: &str = r#"[gate]
escalate_after = 2

[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "echo 'src/lib.rs:7:5: error: assertion failed: left == right'; exit 1" },
]

[handoff]
paths = ["handoffs/**/*.md"]
"#;

/// A repository with `config` committed and phasegate installed as its
/// pre-commit hook.
fn hooked(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(config);
    repo.commit_all("start");
    let installed = repo.phasegate(&["install"]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    repo
}

/// The agent's attempt: stages `path` with `content` and commits through
/// the hook; the verdict of the run the hook made (`history`'s newest).
fn attempt(repo: &TestRepo, path: &str, content: &str) -> serde_json::Value {
    repo.write(path, content);
    repo.git(&["add", path]);
    let commit = repo
        .command("git")
        .args(["commit", "-qm", "attempt"])
        .output()
        .unwrap();
    let newest = repo.phasegate(&["history", "--limit", "1", "--format", "json"]);
    assert_eq!(newest.code, 0, "{}", newest.stderr);
    let run = newest.json()["runs"][0].clone();
    assert_eq!(
        commit.status.success(),
        matches!(run["status"].as_str(), Some("passed" | "warned")),
        "{run:#}\n{}",
        String::from_utf8_lossy(&commit.stderr)
    );
    run
}

fn queue(repo: &TestRepo, all: bool) -> Vec<serde_json::Value> {
    let mut args = vec!["interventions", "list", "--format", "json"];
    if all {
        args.push("--all");
    }
    let listed = repo.phasegate(&args);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    listed.json()["interventions"].as_array().unwrap().clone()
}

fn of_type(records: &[serde_json::Value], kind: &str) -> Vec<serde_json::Value> {
    records
        .iter()
        .filter(|r| r["type"] == kind)
        .cloned()
        .collect()
}

fn resolve(repo: &TestRepo, id: &str, note: &str) -> Run {
    let resolved = repo.phasegate(&["interventions", "resolve", id, "--note", note]);
    assert_eq!(resolved.code, 0, "{}", resolved.stderr);
    resolved
}

#[test]
fn resolving_a_repeated_errors_escalation_lets_the_next_commit_be_judged_afresh() {
    let repo = hooked(STUCK);
    assert_eq!(attempt(&repo, "notes.txt", "1")["status"], "failed");
    assert_eq!(attempt(&repo, "notes.txt", "2")["status"], "blocked");
    let escalations = of_type(&queue(&repo, false), "errors_repeated");
    assert_eq!(escalations.len(), 1, "{escalations:#?}");
    let id = escalations[0]["id"].as_str().unwrap().to_string();

    // Until the person has acted, the escalation stands.
    assert_eq!(attempt(&repo, "notes.txt", "3")["status"], "blocked");

    let resolved = resolve(&repo, &id, "the fixture was wrong; told the agent");
    assert!(
        resolved.stdout.starts_with(&format!("resolved {id}\n")),
        "{}",
        resolved.stdout
    );
    assert!(
        resolved
            .stdout
            .contains("the next run judges its errors afresh"),
        "{}",
        resolved.stdout
    );

    // The next commit with the same error is a plain failure, the agent's
    // to fix; the streak starts again, and a second one escalates anew.
    assert_eq!(attempt(&repo, "notes.txt", "4")["status"], "failed");
    assert_eq!(attempt(&repo, "notes.txt", "5")["status"], "blocked");
    let all = of_type(&queue(&repo, true), "errors_repeated");
    assert_eq!(all.len(), 2, "{all:#?}");
    let old = all.iter().find(|r| r["id"] == id.as_str()).unwrap();
    assert_eq!(old["status"], "resolved", "{old:#}");
    assert_eq!(old["note"], "the fixture was wrong; told the agent");
    let new = all.iter().find(|r| r["id"] != id.as_str()).unwrap();
    assert_eq!(new["status"], "open", "{new:#}");
}

const HANDOFF_OUT_OF_RETRIES: &str = "---
id: F001
stage: implementation
title: Add the parser
started_at: 2026-01-01T00:00:00Z
completed_at: null
status: failed
handoff_ready: false
checkpoints:
  - {name: tests_written, status: pass}
  - {name: code_complete, status: pass}
  - {name: tests_passing, status: fail}
  - {name: no_lint_errors, status: fail}
retry_count: 3
last_failure: tests fail
---
";

#[test]
fn resolving_a_handoff_escalation_says_the_document_still_decides() {
    let repo = hooked(
        "[gate]\nmax_retries = 3\n\n[phases.implementation]\nchecks = [ { name = \"tests\", command = \"true\" } ]\n\n[handoff]\npaths = [\"handoffs/**/*.md\"]\n",
    );
    let run = attempt(&repo, "handoffs/F001.md", HANDOFF_OUT_OF_RETRIES);
    assert_eq!(run["status"], "blocked", "{run:#}");
    let escalated = of_type(&queue(&repo, false), "handoff_escalated");
    assert_eq!(escalated.len(), 1, "{escalated:#?}");
    let id = escalated[0]["id"].as_str().unwrap();

    let resolved = resolve(&repo, id, "two more attempts");
    assert!(
        resolved
            .stdout
            .contains("the handoff document still decides")
            && resolved.stdout.contains("retry_count"),
        "{}",
        resolved.stdout
    );
    // Under `--format json` standard output is the record alone, and
    // what comes next goes to standard error.
    let again = repo.phasegate(&[
        "interventions",
        "resolve",
        id,
        "--note",
        "lowered retry_count",
        "--format",
        "json",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.json()["status"], "resolved");
    assert!(
        again.stderr.contains("the handoff document still decides"),
        "{}",
        again.stderr
    );

    // As it said: resolved, the document escalates again; edited, it
    // does not.
    let run = attempt(
        &repo,
        "handoffs/F001.md",
        &HANDOFF_OUT_OF_RETRIES.replace("title: Add", "title: Write"),
    );
    assert_eq!(run["status"], "blocked", "{run:#}");
    let lowered = HANDOFF_OUT_OF_RETRIES.replace("retry_count: 3", "retry_count: 1");
    let run = attempt(&repo, "handoffs/F001.md", &lowered);
    assert_eq!(run["status"], "passed", "{run:#}");
}

#[test]
fn the_list_says_how_to_act_and_show_names_the_logs_of_the_run() {
    let repo = hooked(STUCK);
    let run = attempt(&repo, "notes.txt", "1");
    assert_eq!(run["status"], "failed", "{run:#}");
    let run_id = run["run_id"].as_str().unwrap();
    let id = queue(&repo, false)[0]["id"].as_str().unwrap().to_string();

    let listed = repo.phasegate(&["interventions"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert!(
        listed
            .stdout
            .contains(&format!("`phasegate interventions show {id}`"))
            && listed.stdout.contains(&format!(
                "`phasegate interventions resolve {id} --note \"what was done\"`"
            )),
        "{}",
        listed.stdout
    );

    // The log the verdict named is where `show` says.
    let shown = repo.phasegate(&["interventions", "show", &id]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let logs = format!(".git/phasegate/runs/{run_id}/");
    assert!(
        shown.stdout.contains(&format!("\n  logs        {logs}\n")),
        "{}",
        shown.stdout
    );
    assert!(repo
        .read(&format!("{logs}tests.log"))
        .contains("assertion failed"));

    // Once every one is resolved, the list says where they went.
    resolve(&repo, &id, "fixed the assertion");
    let listed = repo.phasegate(&["interventions"]);
    assert_eq!(
        listed.stdout,
        "no open intervention (`phasegate interventions list --all` shows the 1 resolved)\n"
    );
    let all = repo.phasegate(&["interventions", "list", "--all"]);
    assert!(
        all.stdout.starts_with(&format!("{id}  resolved ")),
        "{}",
        all.stdout
    );
    // A run pruned since keeps no logs, and `show` says so.
    std::fs::remove_dir_all(repo.path().join(&logs)).unwrap();
    let shown = repo.phasegate(&["interventions", "show", &id]);
    assert!(
        shown
            .stdout
            .contains("\n  logs        pruned: only the newest runs keep their logs\n"),
        "{}",
        shown.stdout
    );
}

#[test]
fn a_blocked_document_s_question_reaches_the_person_it_waits_for() {
    let repo = hooked(
        "[phases.implementation]\nchecks = [ { name = \"tests\", command = \"true\" } ]\n\n[handoff]\npaths = [\"handoffs/**/*.md\"]\n",
    );
    let question = "Should an empty list sum to 0\n  or raise? The spec says both.";
    let document = HANDOFF_OUT_OF_RETRIES
        .replace("status: failed", "status: blocked")
        .replace("retry_count: 3", "retry_count: 1")
        .replace(
            "last_failure: tests fail\n",
            &format!("block_reason: needs_human_input\nblock_details: \"{question}\"\n"),
        );
    repo.stage("handoffs/F001.md", &document);
    let said = "(needs_human_input: Should an empty list sum to 0 or raise? The spec says both.)";

    // The verdict carries what the document says, whole.
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(
        (code, &verdict["status"]),
        (4, &"blocked".into()),
        "{verdict:#}"
    );
    let handoff = &verdict["handoffs"][0];
    assert_eq!(handoff["block_reason"], "needs_human_input", "{handoff:#}");
    assert_eq!(
        handoff["block_details"], "Should an empty list sum to 0 or raise? The spec says both.",
        "{handoff:#}"
    );

    // The report and the queue say it on one line, and the report sends
    // the person to the queue.
    let run = repo.phasegate(&["run"]);
    let report = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 4, "{report}");
    assert!(
        report.contains(&format!(
            "handoff `handoffs/F001.md` says it is blocked {said}: a person is needed"
        )),
        "{report}"
    );
    assert!(
        report.contains("✗ blocked — a person is needed: `phasegate interventions` says what for"),
        "{report}"
    );
    let blocked = of_type(&queue(&repo, false), "handoff_blocked");
    assert_eq!(
        blocked[0]["message"],
        format!("handoff `handoffs/F001.md` says it is blocked {said}: a person is needed"),
        "{blocked:#?}"
    );
}
