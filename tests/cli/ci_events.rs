//! CI events and shallow clones: the range a run in CI picks up by itself.

use crate::support::{docs_files, rev, TestRepo, DOCS};

/// A clone of `origin` with all its history, as `actions/checkout` makes
/// with `fetch-depth: 0` (every branch as `origin/*`), detached at `at`.
fn full_checkout(origin: &TestRepo, at: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let clone = std::fs::canonicalize(dir.path()).unwrap();
    let url = format!("file://{}", origin.path().display());
    origin.git_at(&clone, &["init", "-q"]);
    origin.git_at(&clone, &["remote", "add", "origin", &url]);
    origin.git_at(&clone, &["fetch", "-q", "origin"]);
    origin.git_at(&clone, &["checkout", "-q", "--detach", at]);
    dir
}

/// Writes a GitHub event payload beside the repository and returns its
/// path.
pub(crate) fn event(repo: &TestRepo, json: &str) -> String {
    let path = repo.home().join("event.json");
    std::fs::write(&path, json).unwrap();
    path.to_string_lossy().into_owned()
}

/// A pull request's `closed` event runs on the merge commit already in
/// the target branch: `origin/main..HEAD` holds no commit, and a pass over
/// no file would say nothing of what the pull request brought.
#[test]
fn a_closed_pull_request_whose_merge_is_already_in_the_target_branch_checks_every_file() {
    let origin = TestRepo::new();
    origin.config(DOCS).with_feature_branch();
    origin.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #7",
        "feature",
    ]);
    let merge = rev(&origin, "HEAD");
    origin.write("later.md", "# main moved on again\n");
    origin.commit_all("later");
    let dir = full_checkout(&origin, &merge);
    let clone = std::fs::canonicalize(dir.path()).unwrap();
    let payload = event(
        &origin,
        r#"{"action": "closed", "number": 7, "pull_request": {"merged": true, "base": {"ref": "main"}, "head": {"ref": "feature"}}}"#,
    );
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
        ("GITHUB_EVENT_PATH", payload.as_str()),
        ("GITHUB_SHA", merge.as_str()),
    ];
    let run = origin.phasegate_in_with(&clone, &["run", "--format", "json"], &env);
    let v = run.json();
    assert_eq!(run.code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all", "{v:#}");
    assert_eq!(v["selection"]["ci"], "GitHub pull_request", "{v:#}");
    assert_eq!(
        docs_files(&v),
        ["base.md", "feature.md", "main-only.md"],
        "{v:#}"
    );
    let notes = v["notes"].to_string();
    assert!(notes.contains("holds no commit of its own"), "{notes}");
    assert!(notes.contains("every tracked file is selected"), "{notes}");
}
