//! In CI, `phasegate run` picks the range to check from the CI system's own
//! variables and event payload, and says which range it checked.

use crate::ci_queue::notes_starting;
use crate::support::{docs_files, rev, TestRepo, DOCS};

const ZEROS: &str = "0000000000000000000000000000000000000000";

/// A commit id this repository has never seen.
const UNKNOWN: &str = "1234567890abcdef1234567890abcdef12345678";

fn notes(v: &serde_json::Value) -> String {
    v["notes"].to_string()
}

/// Writes a GitHub event payload and returns its path.
fn event(repo: &TestRepo, json: &str) -> String {
    let path = repo.path().join(".git/event.json");
    std::fs::write(&path, json).unwrap();
    path.to_string_lossy().into_owned()
}

/// `main` with three commits, one Markdown file each: the push being
/// checked is the last one, on top of `before`.
fn pushed() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.config(DOCS);
    repo.write("base.md", "# base\n");
    repo.commit_all("base");
    repo.write("one.md", "# one\n");
    repo.commit_all("one");
    let before = rev(&repo, "HEAD");
    repo.write("two.md", "# two\n");
    repo.commit_all("two");
    let after = rev(&repo, "HEAD");
    (repo, before, after)
}

/// A feature branch off `main`, and `main` moved on since.
fn branched() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(DOCS).with_feature_branch();
    repo
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

    // How CI picked the range is said too.
    repo.git(&["update-ref", "refs/remotes/origin/main", &main]);
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["ci"], "GitHub pull_request");
    assert_eq!(v["selection"]["merge_base"], base.as_str());
    assert_eq!(docs_files(&v), ["feature.md"]);
    let run = repo.phasegate_with(&["run"], &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "files: 1 changed between origin/main (merge base {}) and HEAD ({}) · GitHub pull_request",
            &base[..10],
            &head[..10]
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn a_github_push_checks_the_pushed_commits_or_every_file_saying_why() {
    let (repo, before, after) = pushed();
    let push = |before: Option<&str>| {
        let before = before.map_or(String::new(), |b| format!(r#""before": "{b}", "#));
        let path = event(
            &repo,
            &format!(
                r#"{{"ref": "refs/heads/main", {before}"after": "{after}", "created": false, "deleted": false, "forced": false}}"#
            ),
        );
        repo.verdict_with(
            &[],
            &[
                ("CI", "true"),
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_EVENT_NAME", "push"),
                ("GITHUB_EVENT_PATH", path.as_str()),
                ("GITHUB_SHA", after.as_str()),
                ("GITHUB_REF", "refs/heads/main"),
            ],
        )
    };
    let (code, v) = push(Some(&before));
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "range");
    assert_eq!(v["selection"]["ci"], "GitHub push");
    assert_eq!(v["selection"]["from_commit"], before.as_str());
    assert_eq!(v["selection"]["to_commit"], after.as_str());
    assert_eq!(v["selection"]["merge_base"], before.as_str());
    assert_eq!(docs_files(&v), ["two.md"]);

    // A new branch has no commit before the push: every file.
    let every = ["base.md", "one.md", "two.md"];
    let (code, v) = push(Some(ZEROS));
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all");
    // The event that chose every file is named, as a range's is.
    assert_eq!(v["selection"]["ci"], "GitHub push");
    assert_eq!(docs_files(&v), every);
    assert!(notes(&v).contains("new branch"), "{v:#}");

    // A commit before the push this clone does not have (a shallow clone,
    // a force push): every file, never nothing.
    let (code, v) = push(Some(UNKNOWN));
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all");
    assert_eq!(v["selection"]["ci"], "GitHub push");
    assert_eq!(docs_files(&v), every);
    assert!(notes(&v).contains(UNKNOWN), "{v:#}");
    assert!(notes(&v).contains("not in this clone"), "{v:#}");

    // One this clone has, with no history in common (a force push of a
    // new history): every file too, not a usage error.
    repo.git(&["checkout", "-q", "--orphan", "old"]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "old history"]);
    let old = rev(&repo, "HEAD");
    repo.git(&["checkout", "-q", "main"]);
    let (code, v) = push(Some(&old));
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all");
    assert_eq!(docs_files(&v), every);
    assert!(notes(&v).contains("shares no history"), "{v:#}");

    let (code, v) = push(None);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all");
    assert!(notes(&v).contains("no `before`"), "{v:#}");
}

#[test]
fn a_github_merge_group_checks_the_queued_changes_and_a_shallow_clone_is_told_to_fetch() {
    let repo = branched();
    // The merge queue's commit: the target branch with the pull request
    // merged in.
    repo.git(&[
        "checkout",
        "-q",
        "-b",
        "gh-readonly-queue/main/pr-7",
        "main",
    ]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "queue", "feature"]);
    let (base, head) = (rev(&repo, "main"), rev(&repo, "HEAD"));
    let path = event(
        &repo,
        &format!(
            r#"{{"action": "checks_requested", "merge_group": {{"head_sha": "{head}", "head_ref": "refs/heads/gh-readonly-queue/main/pr-7", "base_sha": "{base}", "base_ref": "refs/heads/main"}}}}"#
        ),
    );
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "merge_group"),
        ("GITHUB_EVENT_PATH", path.as_str()),
        ("GITHUB_SHA", head.as_str()),
    ];
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "range");
    assert_eq!(v["selection"]["ci"], "GitHub merge_group");
    assert_eq!(v["selection"]["from_commit"], base.as_str());
    assert_eq!(v["selection"]["to_commit"], head.as_str());
    assert_eq!(docs_files(&v), ["feature.md"]);
    // The notes say which range the queue's run checked.
    let said = notes_starting(
        &v,
        "GitHub merge_group: the merge queue's changes are checked",
    );
    assert_eq!(said.len(), 1, "{v:#}");
    assert!(
        said[0].contains(&format!("`merge_group.base_sha` {base}"))
            && said[0].contains(&format!("`merge_group.head_sha` {head}")),
        "{v:#}"
    );
    // People read it in the report too.
    let run = repo.phasegate_with(&["run"], &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("GitHub merge_group: the merge queue's changes are checked"),
        "{run:?}"
    );

    // A clone one commit deep lacks the base: the run stops and says what
    // to fetch, never passes on zero files.
    let clone = repo.shallow_clone("gh-readonly-queue/main/pr-7", "queue", &[]);
    let run = repo.phasegate_in_with(&clone, &["run", "--format", "json"], &env);
    let v = run.json();
    assert_eq!(run.code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("git fetch origin {base}")),
        "{message}"
    );
    assert!(message.contains("git fetch --deepen="), "{message}");
    assert!(v["checks"].as_array().unwrap().is_empty(), "{v:#}");
    std::fs::remove_dir_all(&clone).unwrap();
}

#[test]
fn a_gitlab_push_pipeline_checks_the_pushed_commits_or_every_file_saying_why() {
    let (repo, before, _) = pushed();
    let gitlab = |before: &str| {
        repo.verdict_with(
            &[],
            &[
                ("CI", "true"),
                ("GITLAB_CI", "true"),
                ("CI_PIPELINE_SOURCE", "push"),
                ("CI_COMMIT_BEFORE_SHA", before),
            ],
        )
    };
    let (code, v) = gitlab(&before);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "range");
    assert_eq!(v["selection"]["ci"], "GitLab push");
    assert_eq!(v["selection"]["from_commit"], before.as_str());
    assert_eq!(docs_files(&v), ["two.md"]);

    let (code, v) = gitlab(ZEROS);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all");
    assert_eq!(v["selection"]["ci"], "GitLab pipeline");
    assert_eq!(docs_files(&v), ["base.md", "one.md", "two.md"]);
    assert!(
        notes(&v).contains("CI_COMMIT_BEFORE_SHA is all zeros"),
        "{v:#}"
    );
}

/// A GitLab merge request pipeline's variables, and `extra`.
fn merge_request<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut env = vec![
        ("CI", "true"),
        ("GITLAB_CI", "true"),
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
        ("CI_COMMIT_BEFORE_SHA", ZEROS),
    ];
    env.extend_from_slice(extra);
    env
}

#[test]
fn a_gitlab_merged_results_pipeline_counts_from_the_target_branch_head() {
    let repo = branched();
    let base = rev(&repo, "main~1");
    let target = rev(&repo, "main");
    // A merged results pipeline checks out the merge of the source branch
    // into the target branch's head.
    repo.git(&["checkout", "-q", "--detach", "main"]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "merged result", "feature"]);
    // From the diff base alone, the target branch's own commit since
    // counts as a change of the request.
    let (code, v) = repo.verdict_with(
        &[],
        &merge_request(&[("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base)]),
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["ci"], "GitLab merge request pipeline");
    assert_eq!(docs_files(&v), ["feature.md", "main-only.md"]);
    // The target branch's head, set in merged results pipelines, is exact.
    let (code, v) = repo.verdict_with(
        &[],
        &merge_request(&[
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", &target),
        ]),
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["from"], target.as_str());
    assert_eq!(v["selection"]["merge_base"], target.as_str());
    assert_eq!(v["selection"]["ci"], "GitLab merged results pipeline");
    assert_eq!(docs_files(&v), ["feature.md"]);
    let run = repo.phasegate_with(
        &["run"],
        &merge_request(&[("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", &target)]),
    );
    assert!(
        run.stdout.contains(&format!(
            "files: 1 changed between {} (the merge base) and HEAD",
            &target[..10]
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("· GitLab merged results pipeline"),
        "{}",
        run.stdout
    );
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
    let clone = origin.shallow_clone("feature", "mr", &[]);
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
