//! phasegate as a CI merge gate: range detection per CI event, --config-from-ref, github and codequality output.

use crate::support::{docs_files, rev, TestRepo, DOCS};

/// The repository GitHub holds for pull request 7: `feature` off `main`,
/// `main` moved on since, and the merge commit GitHub makes of them at
/// `refs/pull/7/merge`; and a checkout of it as `actions/checkout` makes
/// by default: one commit deep, detached at that merge commit, with no
/// other branch fetched. The merge commit's id comes last.
fn pull_request_checkout(origin: &TestRepo) -> (tempfile::TempDir, String) {
    origin.config(DOCS).with_feature_branch();
    origin.git(&["checkout", "-q", "--detach", "main"]);
    origin.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge feature into main",
        "feature",
    ]);
    let merge = rev(origin, "HEAD");
    origin.git(&["update-ref", "refs/pull/7/merge", &merge]);
    origin.git(&["checkout", "-q", "main"]);
    let dir = tempfile::tempdir().unwrap();
    let clone = std::fs::canonicalize(dir.path()).unwrap();
    let url = format!("file://{}", origin.path().display());
    origin.git_at(&clone, &["init", "-q"]);
    origin.git_at(&clone, &["remote", "add", "origin", &url]);
    let refspec = format!("+{merge}:refs/remotes/pull/7/merge");
    origin.git_at(
        &clone,
        &["fetch", "-q", "--no-tags", "--depth=1", "origin", &refspec],
    );
    origin.git_at(
        &clone,
        &["checkout", "-q", "--force", "refs/remotes/pull/7/merge"],
    );
    (dir, merge)
}

/// GitHub's variables for a `pull_request` event on `main`.
fn pull_request_env(merge: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CI", "true".to_string()),
        ("GITHUB_ACTIONS", "true".to_string()),
        ("GITHUB_EVENT_NAME", "pull_request".to_string()),
        ("GITHUB_BASE_REF", "main".to_string()),
        ("GITHUB_HEAD_REF", "feature".to_string()),
        ("GITHUB_REF", "refs/pull/7/merge".to_string()),
        ("GITHUB_SHA", merge.to_string()),
    ]
}

#[test]
fn a_pull_request_checked_out_one_commit_deep_is_told_the_one_fetch_that_lets_it_run() {
    let origin = TestRepo::new();
    let (dir, merge) = pull_request_checkout(&origin);
    let clone = std::fs::canonicalize(dir.path()).unwrap();
    let env = pull_request_env(&merge);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--format", "json"];
        all.extend_from_slice(args);
        let run = origin.phasegate_in_with(&clone, &all, &env);
        (run.code, run.json())
    };
    for args in [&[][..], &["--config-from-ref", "origin/main"][..]] {
        let (code, v) = run(args);
        assert_eq!(code, 2, "{args:?}: {v:#}");
        let message = v["error"]["message"].as_str().unwrap();
        // Fetching the branch alone leaves the merge base cut off, and the
        // next run stops again: the hint names the fetch that brings both.
        assert!(
            message.contains("`git fetch --unshallow origin main`"),
            "{message}"
        );
    }
    origin.git_at(&clone, &["fetch", "-q", "--unshallow", "origin", "main"]);
    let (code, v) = run(&["--config-from-ref", "origin/main"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["ci"], "GitHub pull_request");
    assert_eq!(docs_files(&v), ["feature.md"]);
}

#[test]
fn a_ref_built_from_a_variable_the_event_does_not_set_is_said_to_name_no_branch() {
    let repo = TestRepo::new();
    repo.config(DOCS).with_feature_branch();
    repo.git(&["remote", "add", "origin", "https://example.invalid/r.git"]);
    // `origin/$GITHUB_BASE_REF` on a push, where GitHub leaves it empty.
    let push = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "push"),
    ];
    for args in [
        &["--config-from-ref", "origin/"][..],
        &["--config-from-ref", ""][..],
        &["--from-ref", "origin/", "--to-ref", "HEAD"][..],
    ] {
        let (code, v) = repo.verdict_with(args, &push);
        assert_eq!(code, 2, "{args:?}: {v:#}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("GITHUB_BASE_REF"), "{message}");
        assert!(message.contains("origin/main"), "{message}");
        // No fetch brings a branch with no name.
        assert!(!message.contains("git fetch"), "{message}");
    }
}

#[test]
fn an_invalid_configuration_at_the_ref_is_annotated_as_that_version_not_the_branch_s() {
    let repo = TestRepo::new();
    repo.config("[gate]\nprofle = \"fast\"\n")
        .write("a.md", "# a\n")
        .commit_all("a typo on main");
    repo.git(&["branch", "base"]);
    // The branch's own file is valid: the line the annotation lands on
    // is not the one that is wrong.
    repo.config(DOCS).commit_all("the branch's configuration");
    let run = repo.phasegate(&[
        "run",
        "--all-files",
        "--config-from-ref",
        "base",
        "--format",
        "github",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    let annotation = run
        .stdout
        .lines()
        .find(|line| line.starts_with("::error "))
        .unwrap_or_else(|| panic!("{run:?}"));
    assert!(
        annotation.starts_with("::error file=phasegate.toml,line=2,col=1,"),
        "{annotation}"
    );
    assert!(annotation.contains("profle"), "{annotation}");
    assert!(
        annotation.contains("as `base` holds it, --config-from-ref"),
        "{annotation}"
    );
    let (_, v) = repo.verdict(&["--all-files", "--config-from-ref", "base"]);
    assert_eq!(v["error"]["problems"][0]["line"], 2, "{v:#}");
    assert!(
        v["error"]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("as `base` holds it"),
        "{v:#}"
    );
}
