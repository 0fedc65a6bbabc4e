//! CI merge gate: merge queues, `pull_request_target`, forks, and what `--config-from-ref` compares.

use crate::ci_events::event;
use crate::support::{check, docs_files, rev, TestRepo, DOCS};

/// The environment of a GitHub Actions job on `event`, whose payload is at
/// `path` and whose `GITHUB_SHA` is `sha`.
fn github<'a>(event: &'a str, path: &'a str, sha: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", event),
        ("GITHUB_EVENT_PATH", path),
        ("GITHUB_SHA", sha),
    ]
}

/// The notes of a verdict that start with `start`.
pub(crate) fn notes_starting<'v>(v: &'v serde_json::Value, start: &str) -> Vec<&'v str> {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_str)
        .filter(|note| note.starts_with(start))
        .collect()
}

/// A pull request `feature` (two commits) off `main`, with `origin/main`
/// and the `pull_request_target` payload naming `feature`'s head; `main`
/// is checked out. The payload's path and the head commit.
fn pull_request_target() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.config(DOCS);
    repo.write("base.md", "# base\n");
    repo.commit_all("base");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("first.md", "# first\n");
    repo.commit_all("first");
    repo.write("second.md", "# second\n");
    repo.commit_all("second");
    repo.git(&["checkout", "-q", "main"]);
    let (main, head) = (rev(&repo, "main"), rev(&repo, "feature"));
    repo.git(&["update-ref", "refs/remotes/origin/main", &main]);
    let path = event(
        &repo,
        &format!(
            r#"{{"action": "synchronize", "number": 7, "pull_request": {{"head": {{"ref": "feature", "sha": "{head}"}}, "base": {{"ref": "main", "sha": "{main}"}}}}}}"#
        ),
    );
    (repo, path, head)
}

#[test]
fn pull_request_target_says_which_commit_it_judges_when_head_is_not_the_pull_request_s() {
    let (repo, path, head) = pull_request_target();
    let main = rev(&repo, "main");
    let mut env = github("pull_request_target", &path, &main);
    env.push(("GITHUB_BASE_REF", "main"));
    let note = "GitHub pull_request_target: the commit judged is HEAD";

    // The event's own checkout: refused, with the checkout that brings
    // the head.
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`ref: ${{ github.event.pull_request.head.sha }}`"),
        "{message}"
    );
    assert!(
        message.contains("--config-from-ref origin/main"),
        "{message}"
    );

    // The pull request merged into its target branch: what it brought is
    // checked, and the notes and summary say HEAD is that merge.
    repo.git(&["checkout", "-q", "--detach", "main"]);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #7",
        "feature",
    ]);
    let merge = rev(&repo, "HEAD");
    let (code, v) = repo.verdict_with(&["--config-from-ref", "origin/main"], &env);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(docs_files(&v), ["first.md", "second.md"], "{v:#}");
    let said = notes_starting(&v, note);
    assert_eq!(said.len(), 1, "{v:#}");
    assert!(
        said[0].contains(&format!(
            "HEAD, {merge}, not the pull request's head commit {head}"
        )),
        "{v:#}"
    );
    assert!(said[0].contains("which holds it"), "{v:#}");
    assert!(
        said[0]
            .contains("`actions/checkout` with `ref: ${{ github.event.pull_request.head.sha }}`"),
        "{v:#}"
    );
    assert_eq!(
        v["summary"].as_array().unwrap().last().unwrap(),
        said[0],
        "{v:#}"
    );

    // An older commit of the pull request: its code is not the head's,
    // and the reader is told so, in the report too.
    repo.git(&["checkout", "-q", "--detach", "feature~1"]);
    let older = rev(&repo, "HEAD");
    let (code, v) = repo.verdict_with(&["--config-from-ref", "origin/main"], &env);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(docs_files(&v), ["first.md"], "{v:#}");
    let said = notes_starting(&v, note);
    assert_eq!(said.len(), 1, "{v:#}");
    assert!(said[0].contains(&format!("HEAD, {older}, not")), "{v:#}");
    assert!(said[0].contains("HEAD does not hold it"), "{v:#}");
    assert!(
        v["summary"].to_string().contains("HEAD does not hold it"),
        "{v:#}"
    );
    let run = repo.phasegate_with(&["run", "--config-from-ref", "origin/main"], &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(note), "{run:?}");

    // The head itself: nothing to say.
    repo.git(&["checkout", "-q", "--detach", &head]);
    let (code, v) = repo.verdict_with(&["--config-from-ref", "origin/main"], &env);
    assert_eq!(code, 0, "{v:#}");
    assert!(notes_starting(&v, note).is_empty(), "{v:#}");
    assert!(v["summary"].as_array().unwrap().is_empty(), "{v:#}");
    assert_eq!(check(&v, "docs")["status"], "passed", "{v:#}");
}

#[test]
fn a_fork_s_pull_request_whose_base_branch_is_not_fetched_names_it_and_the_fetch() {
    let origin = TestRepo::new();
    origin.config(DOCS).with_feature_branch();
    // A clone with all the history of the pull request's branch, and no
    // other branch: not shallow, the target branch simply not fetched.
    let dir = tempfile::tempdir().unwrap();
    let clone = std::fs::canonicalize(dir.path()).unwrap().join("fork");
    let url = format!("file://{}", origin.path().display());
    origin.git(&[
        "clone",
        "-q",
        "--single-branch",
        "--branch",
        "feature",
        &url,
        &clone.to_string_lossy(),
    ]);
    assert!(!clone.join(".git/shallow").exists());
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    let run = origin.phasegate_in_with(&clone, &["run", "--format", "json"], &env);
    let v = run.json();
    assert_eq!(run.code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("GitHub pull_request: `origin/main` does not name a commit"),
        "{message}"
    );
    let fetch = "`git fetch origin main:refs/remotes/origin/main`";
    assert!(message.contains(fetch), "{message}");
    assert!(message.contains("`fetch-depth: 0`"), "{message}");
    assert!(!message.contains("shallow"), "{message}");
    assert!(v["checks"].as_array().unwrap().is_empty(), "{v:#}");
    // People see it too.
    let run = origin.phasegate_in_with(&clone, &["run"], &env);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains(fetch), "{run:?}");
    // The fetch, as written, lets the run go on over the pull request's
    // changes alone.
    origin.git_at(
        &clone,
        &["fetch", "-q", "origin", "main:refs/remotes/origin/main"],
    );
    let run = origin.phasegate_in_with(&clone, &["run", "--format", "json"], &env);
    let v = run.json();
    assert_eq!(run.code, 0, "{v:#}");
    assert_eq!(v["selection"]["ci"], "GitHub pull_request", "{v:#}");
    assert_eq!(docs_files(&v), ["feature.md"], "{v:#}");
}

#[test]
fn a_branch_that_deletes_phasegate_toml_is_told_the_gate_of_the_ref_runs_in_full() {
    let gate = "[phases.implementation]\nchecks = [\n  { name = \"status\", command = \"grep -qx ok status.txt\" },\n  { name = \"docs\", command = \"echo {files}\", files = [\"*.md\"] },\n]\n";
    let repo = TestRepo::new();
    repo.config(gate);
    repo.write("status.txt", "ok\n");
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.git(&["rm", "-q", "phasegate.toml"]);
    repo.commit_all("no gate");
    let args = [
        "--config-from-ref",
        "main",
        "--from-ref",
        "main",
        "--to-ref",
        "HEAD",
    ];
    let said = "`HEAD` deletes `phasegate.toml`";
    let (code, v) = repo.verdict(&args);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "status")["status"], "passed", "{v:#}");
    let notes = notes_starting(&v, said);
    assert_eq!(notes.len(), 1, "{v:#}");
    assert!(
        notes[0].contains("`phasegate.toml` as `main` holds it (--config-from-ref)"),
        "{v:#}"
    );
    // The report a person reads says so under its "0 changed".
    let run = repo.phasegate(&[&["run"][..], &args[..]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(said), "{run:?}");
    // A branch that keeps the file is told nothing of the kind.
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["checkout", "-qb", "kept"]);
    repo.write("a.md", "# a\n");
    repo.commit_all("kept");
    let (code, v) = repo.verdict(&args);
    assert_eq!(code, 0, "{v:#}");
    assert!(!v["notes"].to_string().contains("deletes"), "{v:#}");
}
