//! Open interventions a later run shows are over are resolved by that run.
//!
//! An agent's commits go through the installed pre-commit hook: a check
//! that failed and passes on the next commit of its branch, a handoff
//! document made valid or no longer blocked, close their records, with a
//! note naming the run; a check skipped, or passing on another branch,
//! closes nothing, nor does anything close a streak of the same errors.

use crate::support::{output, recorded_verdicts, Run, TestRepo, BIN};

/// `git commit -qm MESSAGE` through the installed hook, with `env`.
fn commit(repo: &TestRepo, message: &str, env: &[(&str, &str)]) -> Run {
    let mut git = repo.command("git");
    git.args(["commit", "-qm", message])
        .env("PHASEGATE_BIN", BIN);
    for (key, value) in env {
        git.env(key, value);
    }
    output(&git.output().unwrap())
}

/// A repository with the hook installed and `config` committed.
fn gated(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(config);
    repo.write("README.md", "# project\n");
    repo.commit_all("start");
    let installed = repo.phasegate(&["install"]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    repo
}

/// Every record of the queue, resolved ones too.
fn records(repo: &TestRepo) -> Vec<serde_json::Value> {
    let run = repo.phasegate(&["interventions", "list", "--all", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["interventions"].as_array().unwrap().clone()
}

/// The record `id`.
fn record(repo: &TestRepo, id: &str) -> serde_json::Value {
    records(repo)
        .into_iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no record {id}: {:#?}", records(repo)))
}

/// The id of the newest run.
fn newest_run(repo: &TestRepo) -> String {
    let verdicts = recorded_verdicts(repo);
    let newest = verdicts.last().expect("a run was recorded");
    newest["run_id"].as_str().unwrap().to_string()
}

/// The only open record of `kind`.
fn open_of(repo: &TestRepo, kind: &str) -> serde_json::Value {
    let open: Vec<serde_json::Value> = records(repo)
        .into_iter()
        .filter(|r| r["type"] == kind && r["status"] == "open")
        .collect();
    assert_eq!(open.len(), 1, "{kind}: {open:#?}");
    open[0].clone()
}

/// `tests` fails while `state.txt` says `broken`; `docs` checks the
/// Markdown files a commit stages, and fails on one that says `broken`.
const AGENT: &str = r#"[gate]
escalate_after = 100

[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "if grep -qs broken state.txt; then echo 'src/lib.rs:3:5: error: assertion failed: left == right'; exit 1; fi" },
  { name = "docs", files = ["**/*.md"], command = "sh -c 'if grep -q broken \"$@\"; then echo \"$1:1:1: error: broken heading\"; exit 1; fi' docs {files}" },
]
"#;

#[test]
fn a_failing_check_s_record_is_closed_by_the_next_passing_commit() {
    let repo = gated(AGENT);
    repo.stage("state.txt", "broken\n");
    let refused = commit(&repo, "broken", &[]);
    assert_ne!(refused.code, 0, "{refused:?}");
    let failed = open_of(&repo, "check_failed");
    assert_eq!(failed["check"], "tests", "{failed:#}");
    assert_eq!(failed["branch"], "refs/heads/main", "{failed:#}");
    let id = failed["id"].as_str().unwrap().to_string();

    // The agent fixes the test and commits: that run shows it over.
    repo.stage("state.txt", "fixed\n");
    let fixed = commit(&repo, "fixed", &[]);
    assert_eq!(fixed.code, 0, "{fixed:?}");
    let run = newest_run(&repo);
    let closed = record(&repo, &id);
    assert_eq!(closed["status"], "resolved", "{closed:#}");
    assert_eq!(
        closed["note"],
        format!("resolved by run {run}: check `tests` passed"),
        "{closed:#}"
    );
    // The person at `git commit` sees what the run closed.
    let said = format!("{}{}", fixed.stdout, fixed.stderr);
    assert!(
        said.contains(&format!("{id} (check `tests` passed)")),
        "{said}"
    );
    // So does what reads the verdict, in its notes; its interventions
    // are still those that need a person, of which there are none.
    let verdict = recorded_verdicts(&repo).pop().unwrap();
    assert_eq!(
        verdict["interventions"],
        serde_json::json!([]),
        "{verdict:#}"
    );
    assert!(
        verdict["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains(&format!("{id} (check `tests` passed)"))),
        "{verdict:#}"
    );
    let all = repo.phasegate(&["interventions", "list", "--all"]);
    assert!(
        all.stdout.contains(&format!(
            "\n       note: resolved by run {run}: check `tests` passed\n"
        )),
        "{}",
        all.stdout
    );
    let open = repo.phasegate(&["interventions", "list"]);
    assert!(
        open.stdout.contains("no open intervention"),
        "{}",
        open.stdout
    );

    // The failure back later is news: a record of its own.
    repo.stage("state.txt", "broken again\n");
    assert_ne!(commit(&repo, "again", &[]).code, 0);
    let again = open_of(&repo, "check_failed");
    assert_ne!(again["id"], id.as_str(), "{again:#}");
}

#[test]
fn a_check_skipped_or_passing_on_another_branch_leaves_its_record_open() {
    let repo = gated(AGENT);
    repo.stage("guide.md", "# broken\n");
    assert_ne!(commit(&repo, "broken guide", &[]).code, 0);
    let docs = open_of(&repo, "check_failed");
    assert_eq!(docs["check"], "docs", "{docs:#}");
    let id = docs["id"].as_str().unwrap().to_string();

    // No Markdown file staged: `docs` is not run, and says nothing.
    repo.git(&["reset", "-q"]);
    repo.stage("notes.txt", "unrelated\n");
    assert_eq!(commit(&repo, "unrelated", &[]).code, 0);
    assert_eq!(record(&repo, &id)["status"], "open");
    // Skipped by the environment, it says nothing either.
    repo.stage("guide.md", "# fixed\n");
    let skipped = commit(&repo, "guide, unchecked", &[("PHASEGATE_SKIP", "docs")]);
    assert_eq!(skipped.code, 0, "{skipped:?}");
    assert_eq!(record(&repo, &id)["status"], "open");

    // Passing on another branch does not fix it on `main`.
    repo.git(&["checkout", "-qb", "other"]);
    repo.stage("other.md", "# fine\n");
    let other = commit(&repo, "other branch", &[]);
    assert_eq!(other.code, 0, "{other:?}");
    let verdict = recorded_verdicts(&repo).pop().unwrap();
    assert_eq!(
        crate::support::check(&verdict, "docs")["status"],
        "passed",
        "{verdict:#}"
    );
    assert_eq!(record(&repo, &id)["status"], "open");

    // On `main`, the next commit that runs `docs` and passes closes it.
    repo.git(&["checkout", "-q", "main"]);
    repo.stage("guide.md", "# fixed, and checked\n");
    assert_eq!(commit(&repo, "guide", &[]).code, 0);
    let run = newest_run(&repo);
    let closed = record(&repo, &id);
    assert_eq!(closed["status"], "resolved", "{closed:#}");
    assert_eq!(
        closed["note"],
        format!("resolved by run {run}: check `docs` passed")
    );
}

/// A document `id` of the implementation stage, its frontmatter's
/// `status` and more lines given.
fn handoff(id: &str, status_lines: &str) -> String {
    format!(
        "---\nid: {id}\nstage: implementation\ntitle: Parser\nstarted_at: 2026-11-20\n{status_lines}\nhandoff_ready: false\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: fail\n    message: half done\n  - name: tests_passing\n    status: skip\n  - name: no_lint_errors\n    status: skip\n---\n"
    )
}

const PASSING: &str = r#"[phases.implementation]
checks = [ { name = "tests", command = "true" } ]
"#;

#[test]
fn a_handoff_document_s_records_close_once_it_is_valid_and_no_longer_blocked() {
    let repo = gated(PASSING);
    let path = "handoffs/F001.md";
    // Invalid: `status` is none of its values.
    repo.stage(path, &handoff("F001", "status: half_way"));
    assert_ne!(commit(&repo, "invalid", &[]).code, 0);
    let invalid = open_of(&repo, "handoff_invalid");
    let invalid_id = invalid["id"].as_str().unwrap().to_string();

    // Valid, and blocked: the first is over, the document waits for a
    // person now.
    repo.stage(
        path,
        &handoff(
            "F001",
            "status: blocked\nblock_reason: needs_human_input\nblock_details: which format?",
        ),
    );
    let blocked = commit(&repo, "blocked", &[]);
    assert_ne!(blocked.code, 0, "{blocked:?}");
    let verdict = recorded_verdicts(&repo).pop().unwrap();
    assert_eq!(verdict["status"], "blocked", "{verdict:#}");
    let run = newest_run(&repo);
    let closed = record(&repo, &invalid_id);
    assert_eq!(closed["status"], "resolved", "{closed:#}");
    assert_eq!(
        closed["note"],
        format!("resolved by run {run}: handoff `{path}` is valid")
    );
    let blocked_record = open_of(&repo, "handoff_blocked");
    let blocked_id = blocked_record["id"].as_str().unwrap().to_string();

    // A commit that does not touch the document saw nothing of it.
    repo.git(&["reset", "-q"]);
    repo.stage("a.txt", "a\n");
    assert_eq!(commit(&repo, "unrelated", &[]).code, 0);
    assert_eq!(record(&repo, &blocked_id)["status"], "open");

    // The person answered; the agent goes on with the work.
    repo.stage(path, &handoff("F001", "status: in_progress"));
    assert_eq!(commit(&repo, "going on", &[]).code, 0);
    let run = newest_run(&repo);
    let closed = record(&repo, &blocked_id);
    assert_eq!(closed["status"], "resolved", "{closed:#}");
    assert_eq!(
        closed["note"],
        format!("resolved by run {run}: handoff `{path}` is no longer blocked (its status is `in_progress`)")
    );
}

#[test]
fn a_streak_of_the_same_errors_stays_open_for_a_person() {
    let repo = gated(&AGENT.replace("escalate_after = 100", "escalate_after = 2"));
    repo.stage("state.txt", "broken\n");
    assert_eq!(commit(&repo, "one", &[]).code, 1);
    repo.stage("state.txt", "broken, still\n");
    let blocked = commit(&repo, "two", &[]);
    assert_ne!(blocked.code, 0, "{blocked:?}");
    let streak = open_of(&repo, "errors_repeated");
    let failed = open_of(&repo, "check_failed");

    repo.stage("state.txt", "fixed\n");
    assert_eq!(commit(&repo, "fixed", &[]).code, 0);
    assert_eq!(
        record(&repo, failed["id"].as_str().unwrap())["status"],
        "resolved"
    );
    // Resolving a streak is the person's answer to it: no run gives it.
    let streak = record(&repo, streak["id"].as_str().unwrap());
    assert_eq!(streak["status"], "open", "{streak:#}");
    assert_eq!(streak["note"], serde_json::Value::Null, "{streak:#}");
}

/// Four checks failing in four ways while `broken` is staged; `gone`
/// runs a program nobody installed once `gone` is there.
const FIVE_WAYS: &str = r#"[gate]
escalate_after = 100

[phases.implementation]
checks = [
  { name = "lint", shell = true, command = "if [ -f broken ]; then echo 'a.c:1:1: error: lint'; exit 1; fi" },
  { name = "noisy", shell = true, command = "if [ -f broken ]; then echo 'something broke'; exit 1; fi" },
  { name = "crash", shell = true, command = "if [ -f broken ]; then kill -SEGV $$; fi" },
  { name = "gone", shell = true, command = "if [ -f gone ]; then exec no-such-tool-anywhere; fi" },
]
"#;

#[test]
fn a_new_failure_is_queued_once_the_records_of_fixed_ones_are_closed() {
    let repo = gated(FIVE_WAYS);
    let session = [("PHASEGATE_SESSION", "agent-1")];
    // Five records fill the session's slots: three checks, a document.
    repo.stage("broken", "");
    repo.stage(
        "handoffs/F001.md",
        &handoff(
            "F001",
            "status: blocked\nblock_reason: needs_human_input\nblock_details: which format?",
        ),
    );
    repo.stage("handoffs/F002.md", &handoff("F002", "status: half_way"));
    assert_ne!(commit(&repo, "broken", &session).code, 0);
    let open: Vec<String> = records(&repo)
        .iter()
        .filter(|r| r["status"] == "open")
        .map(|r| r["type"].as_str().unwrap().to_string())
        .collect();
    let mut kinds = open.clone();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "check_failed",
            "handoff_blocked",
            "handoff_invalid",
            "tool_crashed",
            "unparsed_failure"
        ],
        "{open:?}"
    );

    // All fixed in one commit: every one of them is over.
    repo.git(&["rm", "-qf", "broken"]);
    repo.stage("handoffs/F001.md", &handoff("F001", "status: in_progress"));
    repo.stage("handoffs/F002.md", &handoff("F002", "status: in_progress"));
    let fixed = commit(&repo, "fixed", &session);
    assert_eq!(fixed.code, 0, "{fixed:?}");
    let still: Vec<serde_json::Value> = records(&repo)
        .into_iter()
        .filter(|r| r["status"] == "open")
        .collect();
    assert!(still.is_empty(), "{still:#?}");

    // A failure of a new kind gets a record, not `emergency.log`.
    repo.stage("gone", "");
    let missing = commit(&repo, "gone", &session);
    assert_ne!(missing.code, 0, "{missing:?}");
    let emergency = repo.path().join(".git/phasegate/emergency.log");
    assert!(
        !emergency.exists(),
        "{}",
        std::fs::read_to_string(&emergency).unwrap_or_default()
    );
    let verdict = recorded_verdicts(&repo).pop().unwrap();
    let created = verdict["interventions"].as_array().unwrap();
    assert_eq!(created.len(), 1, "{verdict:#}");
    let record = record(&repo, created[0].as_str().unwrap());
    assert_eq!(record["check"], "gone", "{record:#}");
    assert_eq!(record["type"], "missing_tool", "{record:#}");
    assert_eq!(record["status"], "open", "{record:#}");
}

#[test]
fn a_record_an_earlier_version_wrote_stays_a_person_s_and_takes_in_no_new_failure() {
    let repo = gated(AGENT);
    repo.stage("state.txt", "broken\n");
    assert_ne!(commit(&repo, "broken", &[]).code, 0);
    // As an earlier version wrote it: no `branch`, so no run can say it
    // is over on its branch.
    let queue = repo.path().join(".git/phasegate/interventions.jsonl");
    let mut earlier = String::new();
    for line in std::fs::read_to_string(&queue).unwrap().lines() {
        let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
        record.as_object_mut().unwrap().remove("branch");
        earlier.push_str(&format!("{record}\n"));
    }
    std::fs::write(&queue, earlier).unwrap();
    let old = open_of(&repo, "check_failed")["id"]
        .as_str()
        .unwrap()
        .to_string();

    // The same failure again: a record of its own, of this branch, which
    // the fixed commit closes; the earlier one waits for a person.
    repo.stage("state.txt", "broken again\n");
    assert_ne!(commit(&repo, "broken again", &[]).code, 0);
    let open: Vec<serde_json::Value> = records(&repo)
        .into_iter()
        .filter(|r| r["type"] == "check_failed" && r["status"] == "open")
        .collect();
    assert_eq!(open.len(), 2, "{open:#?}");
    repo.stage("state.txt", "fixed\n");
    assert_eq!(commit(&repo, "fixed", &[]).code, 0);
    assert_eq!(record(&repo, &old)["status"], "open");
    let new = open.iter().find(|r| r["id"] != old.as_str()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(record(&repo, &new)["status"], "resolved");
}
