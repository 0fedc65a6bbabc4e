//! Integration tests: prepush. A real `git push` to a real bare repository,
//! through the installed pre-push hook.

use crate::support::{git_pushing, recorded_verdicts, remote_has, rev, said, TestRepo};

/// A gate that fails on any selected Markdown file holding `TODO`, naming
/// it.
const NO_TODO: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -H TODO {files}\" } ]\n";

/// A repository with `phasegate.toml` (`NO_TODO`) and `a.md` committed on
/// `main`, pushed to a bare `origin`, with the pre-push hook installed.
fn pushed_repo() -> (TestRepo, TestRepo) {
    crate::support::pushed_repo(NO_TODO)
}

#[test]
fn an_orphan_branch_is_judged_by_its_own_files_and_gate() {
    let (repo, remote) = pushed_repo();
    // The work tree's gate would fail anything; the orphan's own passes
    // what it holds, unless one of its files breaks its rule.
    repo.git(&["checkout", "-q", "--orphan", "site"]);
    repo.git(&["rm", "-rfq", "."]);
    repo.config(NO_TODO);
    repo.write("index.md", "# site TODO\n");
    repo.commit_all("site");
    repo.write("more.md", "# more\n");
    repo.commit_all("more");
    repo.git(&["checkout", "-q", "main"]);
    repo.config("[phases.implementation]\nchecks = [ { name = \"worktree\", shell = true, command = \"false\" } ]\n");

    let refused = git_pushing(&repo, &["push", "-q", "origin", "site"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("index.md:# site TODO") && !said(&refused).contains("worktree"),
        "every file of the orphan, by its gate: {refused:?}"
    );
    assert!(!remote_has(&remote, "site"));

    repo.git(&["checkout", "-q", "site"]);
    // The work tree's uncommitted gate came along: it is not committed.
    repo.write("index.md", "# site\n");
    repo.git(&["commit", "-qm", "fixed", "index.md"]);
    repo.git(&["checkout", "-q", "main"]);
    let pushed = git_pushing(&repo, &["push", "-q", "origin", "site"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, "site"));
}

#[test]
fn a_remote_named_with_a_slash_is_not_described_by_another_remotes_refs() {
    let (repo, _origin) = pushed_repo();
    // `team/origin` has `topic` whole; `team` has `main` only, nothing of
    // it. `refs/remotes/team/origin/topic` is `team/origin`'s, not a
    // branch `origin/topic` of `team`.
    let team_origin = TestRepo::bare();
    let team = TestRepo::bare();
    repo.git(&[
        "remote",
        "add",
        "team/origin",
        &team_origin.path().to_string_lossy(),
    ]);
    repo.git(&["remote", "add", "team", &team.path().to_string_lossy()]);
    repo.git(&["push", "-q", "--no-verify", "team", "main"]);
    repo.git(&["checkout", "-qb", "topic"]);
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("b");
    repo.git(&["push", "-q", "--no-verify", "team/origin", "topic"]);
    assert!(!repo
        .git(&["show-ref", "refs/remotes/team/origin/topic"])
        .is_empty());

    let refused = git_pushing(&repo, &["push", "-q", "team", "topic"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(said(&refused).contains("b.md:# b TODO"), "{refused:?}");
    assert!(!remote_has(&team, "topic"));

    // The remote `team/origin` itself still describes what it has.
    repo.write("c.md", "# c\n");
    repo.commit_all("c");
    let pushed = git_pushing(&repo, &["push", "-q", "team/origin", "topic"]);
    assert_eq!(pushed.code, 0, "only what `team/origin` lacks: {pushed:?}");
}

#[test]
fn an_annotated_tag_is_named_by_its_commit() {
    let (repo, remote) = pushed_repo();
    repo.write("b.md", "# b\n");
    repo.commit_all("b");
    repo.git(&["tag", "-a", "v1", "-m", "release one"]);
    let tag = rev(&repo, "v1");
    let commit = rev(&repo, "v1^{commit}");
    assert_ne!(tag, commit);

    let pushed = git_pushing(&repo, &["push", "origin", "v1"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, "v1"));
    assert!(
        !said(&pushed).contains(&tag[..10]) && said(&pushed).contains(&commit[..10]),
        "the report names the commit checked, not the tag object: {pushed:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    let selection = &verdicts.last().unwrap()["selection"];
    assert_eq!(selection["to"], commit.as_str(), "{selection:#}");
    assert_eq!(selection["to_commit"], commit.as_str(), "{selection:#}");
    assert_eq!(selection["pushed_ref"], "refs/tags/v1", "{selection:#}");
}

#[test]
fn escalation_after_repeated_failing_pushes_counts_attempts_not_runs() {
    let (repo, _remote) = pushed_repo();
    // A tag on a new commit beside the branch (below it, the tag would
    // be left to the branch's run) and the branch on the next, both
    // failing alike: two runs a push.
    repo.write("a.md", "# a TODO\n");
    repo.commit_all("two");
    repo.git(&["checkout", "-q", "--detach"]);
    repo.write("c.md", "# c\n");
    repo.commit_all("candidate");
    repo.git(&["tag", "v1"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("three");
    let mut last = None;
    for _ in 0..3 {
        last = Some(git_pushing(&repo, &["push", "origin", "main", "v1"]));
    }
    let third = last.unwrap();
    assert_ne!(third.code, 0, "{third:?}");
    assert!(said(&third).contains("a person is needed"), "{third:?}");
    // Six runs, three pushes: the note does not say "3 runs".
    assert!(
        !said(&third).contains("3 runs in a row") && said(&third).contains("3 attempts in a row"),
        "{third:?}"
    );
}

#[test]
fn a_push_that_deletes_a_branch_checks_nothing_for_it() {
    let (repo, remote) = pushed_repo();
    // On the remote, a branch whose files break the rule.
    repo.git(&["checkout", "-qb", "old"]);
    repo.write("old.md", "# old TODO\n");
    repo.commit_all("old");
    repo.git(&["push", "-q", "--no-verify", "origin", "old"]);
    repo.git(&["checkout", "-q", "main"]);
    assert!(remote_has(&remote, "old"));
    let runs_before = recorded_verdicts(&repo).len();

    let deleted = git_pushing(&repo, &["push", "-q", "origin", ":old"]);
    assert_eq!(deleted.code, 0, "{deleted:?}");
    assert!(!remote_has(&remote, "old"));
    assert_eq!(recorded_verdicts(&repo).len(), runs_before, "nothing ran");

    // A deletion beside an update: only the update is checked.
    repo.git(&["push", "-q", "--no-verify", "origin", "old"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("b");
    let pushed = git_pushing(&repo, &["push", "origin", "main", ":old"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(!remote_has(&remote, "old"));
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), runs_before + 1, "{pushed:?}");
    assert_eq!(
        verdicts.last().unwrap()["selection"]["pushed_ref"],
        "refs/heads/main"
    );
}
