//! What a pre-push run checks after a merge: the commits published for the
//! first time. A real `git merge`, a real `git push` to a real bare
//! repository, through the installed pre-push hook.

use crate::support::{check, git_pushing, recorded_verdicts, remote_has, rev, said, TestRepo};

/// A check of the selected Markdown files that fails on any holding
/// `TODO`, naming it.
const SELECTED: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -Hn TODO {files}\" } ]\n";

/// The command the check `docs` ran (its first batch): the selected
/// files, quoted, after the rule.
fn docs_command(v: &serde_json::Value) -> &str {
    check(v, "docs")["argv"][0][2].as_str().unwrap_or_default()
}

/// `main` with `a.md`, and `feature` with `b.md` on it, both pushed to a
/// bare `origin`; then `main` gains `up.md`, holding a `TODO` today's
/// gate refuses, and is pushed too (before the hook is installed, as in a
/// project that adopts phasegate). `feature` is checked out.
fn published_feature_and_main() -> (TestRepo, TestRepo) {
    let repo = TestRepo::new();
    repo.config(SELECTED);
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("b");
    repo.git(&["push", "-q", "origin", "feature"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("up.md", "# up TODO\n");
    repo.commit_all("upstream");
    repo.git(&["push", "-q", "origin", "main"]);
    repo.git(&["checkout", "-q", "feature"]);
    let installed = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(installed.code, 0, "{installed:?}");
    (repo, remote)
}

#[test]
fn merging_published_main_into_a_pushed_branch_checks_only_the_branch_s_new_work() {
    let (repo, remote) = published_feature_and_main();
    let pushed_before = rev(&repo, "origin/feature");
    repo.write("c.md", "# c\n");
    repo.commit_all("c");
    repo.git(&["merge", "-q", "--no-edit", "main"]);

    let pushed = git_pushing(&repo, &["push", "origin", "feature"]);
    assert_eq!(pushed.code, 0, "`up.md` came from `main`: {pushed:?}");
    assert_eq!(rev(&remote, "feature"), rev(&repo, "feature"));
    assert!(
        said(&pushed).contains("`refs/heads/feature` merges in commits published already"),
        "{pushed:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    let last = verdicts.last().unwrap();
    assert_eq!(docs_command(last), "! grep -Hn TODO 'c.md'", "{last:#}");
    // The verdict says which commits: `git log <to> --not <published>`.
    let selection = &last["selection"];
    assert_eq!(selection["to_commit"], rev(&repo, "feature").as_str());
    let published: Vec<&str> = selection["published"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    assert_eq!(
        published,
        [pushed_before.as_str(), rev(&repo, "main").as_str()],
        "{selection:#}"
    );
    assert!(
        said(&pushed).contains(&format!(
            "files: 1 changed by the commits up to {} that are not in the published {}, {}",
            &rev(&repo, "feature")[..10],
            &pushed_before[..10],
            &rev(&repo, "main")[..10]
        )),
        "{pushed:?}"
    );
}

#[test]
fn a_conflict_resolved_with_a_todo_in_a_merge_of_main_is_still_refused() {
    let (repo, remote) = published_feature_and_main();
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.md", "# a, main's\n");
    repo.commit_all("main's a");
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    repo.git(&["checkout", "-q", "feature"]);
    repo.write("a.md", "# a, feature's\n");
    repo.commit_all("feature's a");
    repo.git(&["push", "-q", "--no-verify", "origin", "feature"]);
    let conflict = repo
        .command("git")
        .args(["merge", "-q", "main"])
        .output()
        .unwrap();
    assert!(!conflict.status.success(), "{conflict:?}");
    repo.write("a.md", "# a, both TODO\n");
    repo.git(&["add", "a.md"]);
    repo.git(&["commit", "-q", "--no-edit"]);

    let refused = git_pushing(&repo, &["push", "origin", "feature"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("a.md:1:# a, both TODO") && !said(&refused).contains("up.md"),
        "the resolution is the pusher's own work; `up.md` is `main`'s: {refused:?}"
    );
    assert_ne!(rev(&remote, "feature"), rev(&repo, "feature"));
}

#[test]
fn a_merge_of_an_unpublished_branch_checks_that_branch_s_files() {
    let (repo, remote) = published_feature_and_main();
    // `topic`, never pushed, starts on the published `main`.
    repo.git(&["checkout", "-qb", "topic", "main"]);
    repo.write("t.md", "# t TODO\n");
    repo.commit_all("topic");
    repo.git(&["checkout", "-q", "feature"]);
    repo.git(&["merge", "-q", "--no-edit", "topic"]);

    let refused = git_pushing(&repo, &["push", "origin", "feature"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("t.md:1:# t TODO") && !said(&refused).contains("up.md:"),
        "{refused:?}"
    );
    assert_ne!(rev(&remote, "feature"), rev(&repo, "feature"));
    // `phasegate resume` checks the same commits again, the same way.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 1, "{v:#}");
    assert_eq!(docs_command(&v), "! grep -Hn TODO 't.md'", "{v:#}");

    // Fixed on `topic` and merged again, the push goes through.
    repo.git(&["checkout", "-q", "topic"]);
    repo.write("t.md", "# t\n");
    repo.commit_all("t, done");
    repo.git(&["checkout", "-q", "feature"]);
    repo.git(&["merge", "-q", "--no-edit", "topic"]);
    let pushed = git_pushing(&repo, &["push", "origin", "feature"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, "feature"));
    assert_eq!(rev(&remote, "feature"), rev(&repo, "feature"));
}

#[test]
fn a_new_branch_that_merged_published_main_is_checked_for_its_own_commits() {
    let (repo, remote) = published_feature_and_main();
    // Started on `main` before `up.md`, then brought up to date by a merge.
    repo.git(&["checkout", "-qb", "fresh", "main~1"]);
    repo.write("f.md", "# f\n");
    repo.commit_all("f");
    repo.git(&["merge", "-q", "--no-edit", "main"]);

    let pushed = git_pushing(&repo, &["push", "origin", "fresh"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, "fresh"));
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(
        docs_command(verdicts.last().unwrap()),
        "! grep -Hn TODO 'f.md'"
    );
}
