//! In CI, `phasegate run` picks the range to check from the CI system's own
//! variables and event payload, and says which range it checked.

use crate::support::{check, TestRepo};

const DOCS: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"echo {files}\" } ]\n";

/// A commit id this repository has never seen.
const UNKNOWN: &str = "1234567890abcdef1234567890abcdef12345678";

fn rev(repo: &TestRepo, spec: &str) -> String {
    repo.git(&["rev-parse", spec]).trim().to_string()
}

/// The Markdown files the `docs` check was given (none when it was
/// skipped for want of any).
fn docs_files(v: &serde_json::Value) -> Vec<String> {
    check(v, "docs")["argv"][0]
        .as_array()
        .map(|argv| {
            argv.iter()
                .skip(1)
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn notes(v: &serde_json::Value) -> String {
    v["notes"].to_string()
}

/// A feature branch off `main`, and `main` moved on since.
fn branched() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(DOCS);
    repo.write("base.md", "# base\n");
    repo.commit_all("base");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("feature.md", "# feature\n");
    repo.commit_all("feature");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("main-only.md", "# main moved on\n");
    repo.commit_all("main");
    repo
}

/// A shallow clone of `origin`'s `branch`, one commit deep, beside it.
fn shallow_clone(origin: &TestRepo, branch: &str, name: &str) -> std::path::PathBuf {
    let clone = origin
        .path()
        .parent()
        .unwrap()
        .join(format!("{name}-{}", std::process::id()));
    let url = format!("file://{}", origin.path().display());
    origin.git(&[
        "clone",
        "-q",
        "--depth",
        "1",
        "--branch",
        branch,
        &url,
        &clone.to_string_lossy(),
    ]);
    clone
}

#[test]
fn a_range_names_its_commits_and_merge_base_in_the_verdict_and_the_report() {
    let repo = branched();
    repo.git(&["checkout", "-q", "feature"]);
    let base = rev(&repo, "main~1");
    let (main, head) = (rev(&repo, "main"), rev(&repo, "HEAD"));
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(code, 0, "{v:#}");
    let selection = &v["selection"];
    assert_eq!(selection["from"], "main");
    assert_eq!(selection["to"], "HEAD");
    assert_eq!(selection["from_commit"], main.as_str());
    assert_eq!(selection["to_commit"], head.as_str());
    assert_eq!(selection["merge_base"], base.as_str());
    assert!(selection.get("ci").is_none(), "{v:#}");
    assert_eq!(v["schema"], "phasegate/verdict/v1");

    let run = repo.phasegate(&["run", "--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(run.code, 0, "{run:?}");
    let line = format!(
        "files: 1 changed between main (merge base {}) and HEAD ({})",
        &base[..10],
        &head[..10]
    );
    let mut lines = run.stdout.lines();
    assert!(lines.next().unwrap().starts_with("phasegate · phase"));
    assert_eq!(lines.next(), Some(line.as_str()), "{}", run.stdout);

    // A staged run has no range to tell of.
    let run = repo.phasegate(&["run"]);
    assert!(!run.stdout.contains("files:"), "{}", run.stdout);
}

#[test]
fn a_shallow_clone_missing_the_merge_request_base_is_told_to_fetch_it_or_deepen() {
    let origin = TestRepo::new();
    origin.config(DOCS);
    origin.write("base.md", "# base\n");
    origin.commit_all("base");
    let base = rev(&origin, "HEAD");
    origin.git(&["checkout", "-qb", "feature"]);
    for n in 1..=3 {
        origin.write(&format!("feature{n}.md"), "# feature\n");
        origin.commit_all(&format!("feature {n}"));
    }
    // GIT_DEPTH=1: the diff base is beyond the clone's depth.
    let clone = shallow_clone(&origin, "feature", "mr");
    let run = origin.phasegate_in_with(
        &clone,
        &["run", "--format", "json"],
        &[
            ("CI", "true"),
            ("GITLAB_CI", "true"),
            ("CI_PIPELINE_SOURCE", "merge_request_event"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base.as_str()),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
        ],
    );
    let v = run.json();
    assert_eq!(run.code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("git fetch origin {base}")),
        "{message}"
    );
    assert!(message.contains("shallow clone"), "{message}");
    assert!(message.contains("git fetch --deepen="), "{message}");
    assert!(message.contains("git fetch --unshallow"), "{message}");
    std::fs::remove_dir_all(&clone).unwrap();

    // In a full clone a missing commit is only fetched.
    let (code, v) = origin.verdict(&["--from-ref", UNKNOWN, "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(!message.contains("deepen"), "{message}");
}

#[test]
fn a_name_that_is_both_a_tag_and_a_branch_is_noted_with_the_way_to_be_explicit() {
    let repo = branched();
    // A tag `feature` on main's first commit, beside the branch `feature`.
    repo.git(&["tag", "feature", "main~1"]);
    let tag = rev(&repo, "refs/tags/feature");
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(code, 0, "{v:#}");
    // git takes the tag, and so does phasegate; the note says so.
    assert_eq!(v["selection"]["to_commit"], tag.as_str());
    assert!(docs_files(&v).is_empty(), "{v:#}");
    let said = notes(&v);
    assert!(said.contains("`feature` is ambiguous"), "{said}");
    assert!(said.contains("`refs/tags/feature` (used"), "{said}");
    assert!(said.contains("`refs/heads/feature`"), "{said}");
    // Named in full, the branch is checked, and nothing is ambiguous.
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "refs/heads/feature"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(docs_files(&v), ["feature.md"]);
    assert!(!notes(&v).contains("ambiguous"), "{v:#}");
    // An unambiguous short name gets no note.
    let (_, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
    assert!(!notes(&v).contains("ambiguous"), "{v:#}");
}
