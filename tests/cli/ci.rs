//! In CI, `phasegate run` picks the range to check from the CI system's own
//! variables and event payload, and says which range it checked.

use crate::support::TestRepo;

const DOCS: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"echo {files}\" } ]\n";

/// A commit id this repository has never seen.
const UNKNOWN: &str = "1234567890abcdef1234567890abcdef12345678";

fn rev(repo: &TestRepo, spec: &str) -> String {
    repo.git(&["rev-parse", spec]).trim().to_string()
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
