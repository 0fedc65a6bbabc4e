//! Shallow CI clones, unnamed CI events, and a gate whose commands the branch changed.

use crate::support::{check, docs_files, rev, TestRepo, DOCS};

/// A clone of `origin` one commit deep on every branch, as CI clones by
/// default (actions/checkout's `fetch-depth: 1`, GitLab's `GIT_DEPTH`),
/// with `feature` checked out: `origin/main` is there, the merge base of
/// the two is not.
fn shallow_checkout(origin: &TestRepo) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let clone = std::fs::canonicalize(dir.path()).unwrap();
    let url = format!("file://{}", origin.path().display());
    let into = clone.join("repo");
    let into = into.to_string_lossy();
    origin.git(&[
        "clone",
        "-q",
        "--depth",
        "1",
        "--no-single-branch",
        "--branch",
        "feature",
        &url,
        &into,
    ]);
    dir
}

/// `main` with three commits, `feature` off its second with three of its
/// own: one commit deep, neither branch reaches the other's.
pub(crate) fn diverged() -> TestRepo {
    let origin = TestRepo::new();
    origin.config(DOCS);
    for n in 1..=3 {
        origin.write(&format!("base{n}.md"), "# base\n");
        origin.commit_all(&format!("base {n}"));
    }
    origin.git(&["checkout", "-qb", "feature", "HEAD~1"]);
    for n in 1..=3 {
        origin.write(&format!("feature{n}.md"), "# feature\n");
        origin.commit_all(&format!("feature {n}"));
    }
    origin
}

#[test]
fn a_pull_request_in_a_shallow_clone_is_told_the_merge_base_is_cut_off_and_the_ci_setting() {
    let origin = diverged();
    let dir = shallow_checkout(&origin);
    let clone = dir.path().join("repo");
    let github = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    let gitlab = [
        ("CI", "true"),
        ("GITLAB_CI", "true"),
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
    ];
    for (env, setting) in [
        (&github[..], "`fetch-depth: 0`"),
        (&gitlab[..], "`GIT_DEPTH: 0`"),
    ] {
        let run = origin.phasegate_in_with(&clone, &["run", "--format", "json"], env);
        let v = run.json();
        assert_eq!(run.code, 2, "{v:#}");
        let message = v["error"]["message"].as_str().unwrap();
        // The ends do share history: it is only not in this clone.
        assert!(
            message.contains("the merge base of `origin/main` and `HEAD` is not in this clone"),
            "{message}"
        );
        assert!(!message.contains("no common ancestor"), "{message}");
        assert!(message.contains("shallow clone"), "{message}");
        assert!(message.contains(setting), "{message}");
        assert!(message.contains("git fetch --unshallow"), "{message}");
    }
    // The fetch it names is enough: the run then checks the request's files.
    origin.git_at(&clone, &["fetch", "-q", "--unshallow", "origin"]);
    let run = origin.phasegate_in_with(&clone, &["run", "--format", "json"], &github);
    let v = run.json();
    assert_eq!(run.code, 0, "{v:#}");
    assert_eq!(
        docs_files(&v),
        ["feature1.md", "feature2.md", "feature3.md"],
        "{v:#}"
    );
}

#[test]
fn a_merge_request_base_beyond_a_shallow_clone_names_the_gitlab_setting() {
    let origin = diverged();
    let base = rev(&origin, "main~1");
    let dir = shallow_checkout(&origin);
    let clone = dir.path().join("repo");
    let run = origin.phasegate_in_with(
        &clone,
        &["run", "--format", "json"],
        &[
            ("CI", "true"),
            ("GITLAB_CI", "true"),
            ("CI_PIPELINE_SOURCE", "merge_request_event"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base.as_str()),
        ],
    );
    let v = run.json();
    assert_eq!(run.code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("GitLab merge request pipeline: "),
        "{message}"
    );
    assert!(
        message.contains(&format!("`{base}` does not name a commit")),
        "{message}"
    );
    assert!(message.contains("`GIT_DEPTH: 0`"), "{message}");
    assert!(!message.contains("fetch-depth"), "{message}");
}

#[test]
fn a_github_event_with_no_range_is_named_in_the_verdict() {
    let repo = TestRepo::new();
    repo.config(DOCS).with_feature_branch();
    for event in ["workflow_dispatch", "schedule", "release"] {
        let (code, v) = repo.verdict_with(
            &[],
            &[
                ("CI", "true"),
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_EVENT_NAME", event),
            ],
        );
        assert_eq!(code, 0, "{v:#}");
        assert_eq!(v["selection"]["mode"], "all", "{v:#}");
        assert_eq!(
            v["selection"]["ci"],
            format!("GitHub {event}").as_str(),
            "{v:#}"
        );
        let notes = v["notes"].to_string();
        assert!(notes.contains(&format!("GitHub {event} event")), "{notes}");
        assert_eq!(docs_files(&v), ["base.md", "main-only.md"], "{v:#}");
    }
}

/// A repository whose `main` gates with `tests = COMMAND`, a script that
/// passes only when `status.txt` says `ok`, and a branch `feature` that
/// breaks `status.txt` and, with `weaken`, rewrites the script to pass.
fn gated_by_a_script(command: &str, weaken: bool) -> TestRepo {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.config(&format!(
        "[commands]\ntests = {command:?}\n\n[phases.implementation]\nchecks = [ {{ name = \"tests\", on_failure = \"block\" }} ]\n"
    ));
    let script = |text: &str| {
        repo.write("scripts/test.sh", text);
        let path = repo.path().join("scripts/test.sh");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script("#!/bin/sh\ngrep -qx ok status.txt\n");
    repo.write("status.txt", "ok\n");
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("status.txt", "broken\n");
    if weaken {
        script("#!/bin/sh\nexit 0\n");
    }
    repo.commit_all("feature");
    repo
}

pub(crate) const FROM_MAIN: [&str; 6] = [
    "--config-from-ref",
    "main",
    "--from-ref",
    "main",
    "--to-ref",
    "HEAD",
];

#[test]
fn a_script_the_branch_rewrote_under_a_gate_from_the_target_branch_is_a_warning_naming_it() {
    for command in ["./scripts/test.sh", "sh scripts/test.sh"] {
        let repo = gated_by_a_script(command, true);
        let (code, v) = repo.verdict(&FROM_MAIN);
        assert_eq!(code, 0, "{command}: {v:#}");
        // The script passed, as the branch made it; the run says whose
        // script that was.
        assert_eq!(check(&v, "tests")["status"], "passed", "{v:#}");
        assert_eq!(check(&v, "tests")["effect"], "warn", "{v:#}");
        assert_eq!(v["status"], "warned", "{command}: {v:#}");
        let found = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["file"] == "scripts/test.sh")
            .unwrap_or_else(|| panic!("{command}: {v:#}"));
        assert_eq!(found["check"], "tests", "{v:#}");
        assert_eq!(found["severity"], "warning", "{v:#}");
        let message = found["message"].as_str().unwrap();
        assert!(
            message.contains("differs from its version in `main`"),
            "{message}"
        );
        // Said in the finding, not again in a note.
        assert!(
            !v["notes"]
                .to_string()
                .contains("differs from its version in `main`"),
            "{v:#}"
        );

        // The strict profile turns the warning into a block.
        let mut strict = FROM_MAIN.to_vec();
        strict.extend(["--profile", "strict"]);
        let (code, v) = repo.verdict(&strict);
        assert_eq!(code, 1, "{command}: {v:#}");
        assert_eq!(v["status"], "failed", "{v:#}");
        assert!(
            v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["file"] == "scripts/test.sh" && d["severity"] == "error"),
            "{v:#}"
        );

        // Without --config-from-ref the branch's own gate is the gate: a
        // change to its script is no news.
        let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
        assert_eq!(code, 0, "{v:#}");
        assert_eq!(v["status"], "passed", "{v:#}");
    }
    // A script the branch left alone is the target's: it judges the
    // branch's change, and fails it, without a word about the script.
    let repo = gated_by_a_script("./scripts/test.sh", false);
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    assert!(!v.to_string().contains("differs from its version"), "{v:#}");
}
