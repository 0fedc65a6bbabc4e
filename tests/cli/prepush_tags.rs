//! pre-push with many refs: tags, new remotes, mirrors. A real `git push`
//! to real bare repositories, through the installed pre-push hook.

use crate::support::{git_pushing, recorded_verdicts, remote_has, rev, said, TestRepo};

/// A whole-project check (no `files`: it runs on every run, as `cargo
/// test` does) that fails while any Markdown file at the root holds
/// `TODO`, naming it.
const WHOLE: &str = "[phases.implementation]\nchecks = [ { name = \"notodo\", shell = true, command = \"! grep -Hn TODO *.md\" } ]\n";

/// A check of the selected Markdown files that fails on any holding
/// `TODO`, naming it.
const SELECTED: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -Hn TODO {files}\" } ]\n";

/// A repository with a history of releases under `config`: `v1` (and the
/// annotated `v1-notes`) on a commit whose `a.md` holds a `TODO` (today's
/// gate refuses it), `v2` on the fixed commit `main` is at. The hook is
/// installed afterwards, as it is in a project that adopts phasegate.
fn released(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(config);
    repo.write("a.md", "# a TODO\n");
    repo.commit_all("one");
    repo.git(&["tag", "v1"]);
    repo.git(&["tag", "-a", "v1-notes", "-m", "release one"]);
    repo.write("a.md", "# a\n");
    repo.commit_all("two");
    repo.git(&["tag", "v2"]);
    repo
}

fn install(repo: &TestRepo) {
    let installed = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(installed.code, 0, "{installed:?}");
}

/// A new bare repository, added to `repo` as the remote `name`.
fn new_remote(repo: &TestRepo, name: &str) -> TestRepo {
    let remote = TestRepo::bare();
    repo.git(&["remote", "add", name, &remote.path().to_string_lossy()]);
    remote
}

#[test]
fn tags_pushed_to_a_new_mirror_are_not_checked_when_another_remote_has_their_commits() {
    let repo = released(WHOLE);
    let _origin = new_remote(&repo, "origin");
    repo.git(&["push", "-q", "origin", "main"]);
    install(&repo);
    let mirror = new_remote(&repo, "mirror");

    let pushed = git_pushing(&repo, &["push", "mirror", "--tags"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(
        remote_has(&mirror, "v1") && remote_has(&mirror, "v1-notes") && remote_has(&mirror, "v2")
    );
    assert!(
        said(&pushed)
            .contains("`refs/tags/v1`, `refs/tags/v1-notes`, `refs/tags/v2` add no commit")
            && said(&pushed).contains("not published before (`origin` has them"),
        "the note names the tags and the remote that has them: {pushed:?}"
    );
    assert!(recorded_verdicts(&repo).is_empty(), "nothing ran");

    // A tag on a commit no ref reaches is new work: it is checked.
    repo.git(&["checkout", "-q", "--detach"]);
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("candidate");
    repo.git(&["tag", "v3-rc"]);
    repo.git(&["checkout", "-q", "main"]);
    let refused = git_pushing(&repo, &["push", "mirror", "--tags"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("b.md:1:# b TODO") && said(&refused).contains("refs/tags/v3-rc"),
        "{refused:?}"
    );
    assert!(!remote_has(&mirror, "v3-rc"));
}

#[test]
fn a_mirror_push_to_a_new_remote_leaves_old_tags_to_the_branch_that_holds_them() {
    // No other remote says what was published: the branch is checked
    // whole, and the tags below it are left to it.
    let repo = released(WHOLE);
    install(&repo);
    let mirror = new_remote(&repo, "mirror");

    let pushed = git_pushing(&repo, &["push", "--mirror", "mirror"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&mirror, "v1") && remote_has(&mirror, "main"));
    assert!(
        said(&pushed).contains(
            "`refs/tags/v1`, `refs/tags/v1-notes` are on commits in the history of another ref this push checks"
        ),
        "{pushed:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(
        verdicts.len(),
        1,
        "one run, for `main` and `v2` on its commit"
    );
    let selection = &verdicts[0]["selection"];
    assert_eq!(selection["pushed_ref"], "refs/heads/main, refs/tags/v2");
    assert_eq!(selection["to_commit"], rev(&repo, "main").as_str());

    // The branch itself is still checked, every file of it.
    repo.write("c.md", "# c TODO\n");
    repo.commit_all("three");
    let other = new_remote(&repo, "other");
    let refused = git_pushing(&repo, &["push", "--mirror", "other"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(said(&refused).contains("c.md:1:# c TODO"), "{refused:?}");
    assert!(!remote_has(&other, "main"));
}

#[test]
fn tags_whose_commits_the_remote_has_run_no_checks() {
    let repo = released(WHOLE);
    let origin = new_remote(&repo, "origin");
    repo.git(&["push", "-q", "origin", "main"]);
    install(&repo);

    // `v1`'s commit is in `origin/main`: checking it again would run the
    // whole-project checks on old code, and refuse what shipped long ago.
    let pushed = git_pushing(&repo, &["push", "origin", "--tags"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&origin, "v1") && remote_has(&origin, "v2"));
    assert!(
        said(&pushed).contains("add no commit the remote does not have"),
        "{pushed:?}"
    );
    assert!(recorded_verdicts(&repo).is_empty(), "nothing ran");
}

#[test]
fn a_branch_pushed_to_a_new_fork_is_checked_from_what_origin_has() {
    let repo = TestRepo::new();
    repo.config(SELECTED);
    // `origin` has a file today's gate refuses: not this branch's work.
    repo.write("a.md", "# a TODO\n");
    repo.commit_all("one");
    let _origin = new_remote(&repo, "origin");
    repo.git(&["push", "-q", "origin", "main"]);
    install(&repo);
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("b");

    // A URL no remote has says nothing of what it holds, as a new fork's
    // name does not.
    let by_url = TestRepo::bare();
    let url = format!("file://{}", by_url.path().display());
    let pushed = git_pushing(&repo, &["push", &url, "feature"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&by_url, "feature"));

    let fork = new_remote(&repo, "fork");
    let pushed = git_pushing(&repo, &["push", "fork", "feature"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(
        said(&pushed).contains("`fork` has no remote-tracking refs here")
            && said(&pushed).contains("what `origin` had"),
        "{pushed:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    let selection = &verdicts.last().unwrap()["selection"];
    assert_eq!(selection["from_commit"], rev(&repo, "main").as_str());

    // The branch's own commits are checked.
    repo.git(&["checkout", "-qb", "more"]);
    repo.write("c.md", "# c TODO\n");
    repo.commit_all("c");
    let refused = git_pushing(&repo, &["push", "fork", "more"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("c.md:1:# c TODO") && !said(&refused).contains("a.md:1"),
        "{refused:?}"
    );
    assert!(remote_has(&fork, "feature") && !remote_has(&fork, "more"));
}

#[test]
fn a_rebased_branch_pushed_with_force_with_lease_is_checked_for_its_own_commits() {
    let repo = TestRepo::new();
    repo.config(SELECTED);
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let _origin = new_remote(&repo, "origin");
    repo.git(&["push", "-q", "origin", "main"]);
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("b");
    repo.git(&["push", "-q", "origin", "feature"]);
    // Meanwhile `main` gains a file today's gate refuses: not this
    // branch's work, and published already.
    repo.git(&["checkout", "-q", "main"]);
    repo.write("up.md", "# up TODO\n");
    repo.commit_all("upstream");
    repo.git(&["push", "-q", "origin", "main"]);
    repo.git(&["checkout", "-q", "feature"]);
    repo.git(&["rebase", "-q", "main"]);
    install(&repo);

    let pushed = git_pushing(&repo, &["push", "--force-with-lease", "origin", "feature"]);
    assert_eq!(pushed.code, 0, "only `b.md` is the branch's: {pushed:?}");
    assert!(
        said(&pushed).contains("`refs/heads/feature` rewrites `refs/heads/feature`"),
        "{pushed:?}"
    );
    assert_eq!(rev(&repo, "origin/feature"), rev(&repo, "feature"));

    // What the rewritten branch itself changes is checked.
    repo.write("b.md", "# b TODO\n");
    repo.git(&["commit", "-q", "--amend", "-am", "b"]);
    let refused = git_pushing(&repo, &["push", "--force-with-lease", "origin", "feature"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("b.md:1:# b TODO") && !said(&refused).contains("up.md"),
        "{refused:?}"
    );
}

#[test]
fn a_refused_push_names_the_refs_it_stopped_for_and_how_to_push_anyway() {
    let repo = TestRepo::new();
    repo.config(SELECTED);
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let origin = new_remote(&repo, "origin");
    repo.git(&["push", "-q", "origin", "main"]);
    install(&repo);
    repo.write("b.md", "# b\n");
    repo.commit_all("fine");
    repo.git(&["checkout", "-qb", "topic"]);
    repo.write("c.md", "# c TODO\n");
    repo.commit_all("not yet");

    // `HEAD:refs/heads/review` makes `review`: the report says so, where
    // `HEAD` alone would not.
    let refused = git_pushing(&repo, &["push", "origin", "main", "HEAD:refs/heads/review"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains(
            "phasegate stopped the push for `HEAD:refs/heads/review` (the pre-push hook)"
        ),
        "only the ref that failed is named: {refused:?}"
    );
    assert!(
        said(&refused).contains("`git push --no-verify` skips the gate"),
        "{refused:?}"
    );
    assert!(!remote_has(&origin, "review"));
}
