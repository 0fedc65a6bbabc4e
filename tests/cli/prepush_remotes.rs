//! Pre-push with mirrors, remotes named by URL, and resumed pushes. A real
//! `git push` to real bare repositories, through the installed pre-push
//! hook.

use crate::support::{git_pushing, recorded_verdicts, remote_has, rev, said, TestRepo};

/// A check of the selected Markdown files that fails on any holding
/// `TODO`, naming it.
const SELECTED: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -Hn TODO {files}\" } ]\n";

/// A repository with `phasegate.toml` (`SELECTED`) and `a.md` committed on
/// `main`, pushed to a bare `origin`, with the pre-push hook installed.
fn pushed_repo() -> (TestRepo, TestRepo) {
    crate::support::pushed_repo(SELECTED)
}

/// A new bare repository, added to `repo` as the remote `name`.
fn new_remote(repo: &TestRepo, name: &str) -> TestRepo {
    let remote = TestRepo::bare();
    repo.git(&["remote", "add", name, &remote.path().to_string_lossy()]);
    remote
}

#[test]
fn a_mirror_push_does_not_judge_the_remote_tracking_refs_it_copies() {
    let (repo, _origin) = pushed_repo();
    let mirror = new_remote(&repo, "mirror");
    repo.git(&["push", "-q", "--no-verify", "--mirror", "mirror"]);
    // A colleague's commit reaches `origin`, and `origin/main` here, as a
    // fetch brings it: not this clone's work.
    repo.git(&["checkout", "-q", "--detach"]);
    repo.write("theirs.md", "# theirs TODO\n");
    repo.commit_all("theirs");
    repo.git(&[
        "push",
        "-q",
        "--no-verify",
        "origin",
        "HEAD:refs/heads/main",
    ]);
    repo.git(&["checkout", "-q", "main"]);
    assert_ne!(rev(&repo, "origin/main"), rev(&repo, "main"));

    let pushed = git_pushing(&repo, &["push", "--mirror", "mirror"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(
        said(&pushed).contains("`refs/remotes/origin/main`")
            && said(&pushed).contains("are remote-tracking refs")
            && !said(&pushed).contains("theirs.md"),
        "{pushed:?}"
    );
    assert!(remote_has(&mirror, "refs/remotes/origin/main"));

    // The branches' own new work is still judged.
    repo.write("mine.md", "# mine TODO\n");
    repo.commit_all("mine");
    let refused = git_pushing(&repo, &["push", "--mirror", "mirror"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("mine.md:1:# mine TODO")
            && said(&refused).contains("stopped the push for `refs/heads/main`"),
        "{refused:?}"
    );
}

#[test]
fn a_push_to_a_remote_s_url_spelled_otherwise_is_judged_by_that_remote_s_refs() {
    let (repo, origin) = pushed_repo();
    // `fork` has a colleague's branch, fetched to review: not on `origin`.
    let _fork = new_remote(&repo, "fork");
    repo.git(&["checkout", "-qb", "review"]);
    repo.write("r.md", "# r TODO\n");
    repo.commit_all("review");
    repo.git(&["push", "-q", "--no-verify", "fork", "review"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["branch", "-qD", "review"]);
    repo.git(&["checkout", "-qb", "mine", "fork/review"]);

    let at = origin.path();
    let name = at.file_name().unwrap().to_string_lossy().into_owned();
    let relative = format!("../{name}");
    let with_slash = format!("file://{}/", at.display());
    let dotted = format!("{}/.", at.display());
    for url in [&relative, &with_slash, &dotted] {
        let refused = git_pushing(&repo, &["push", url, "mine"]);
        assert_ne!(
            refused.code, 0,
            "`{url}` is `origin`, which lacks `r.md`: {refused:?}"
        );
        assert!(said(&refused).contains("r.md:1:# r TODO"), "{refused:?}");
        assert!(!remote_has(&origin, "mine"));
    }
}

#[test]
fn resume_after_a_push_refused_for_one_of_two_refs_checks_that_ref_again() {
    let (repo, origin) = pushed_repo();
    repo.git(&["checkout", "-qb", "aaa"]);
    repo.write("x.md", "# x TODO\n");
    repo.commit_all("x");
    repo.git(&["checkout", "-qb", "zzz", "main"]);
    repo.write("y.md", "# y\n");
    repo.commit_all("y");

    // `aaa` fails, `zzz`, checked after it, passes.
    let refused = git_pushing(&repo, &["push", "origin", "aaa", "zzz"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(!remote_has(&origin, "aaa"));
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(
        verdicts.last().unwrap()["selection"]["pushed_ref"],
        "refs/heads/zzz"
    );

    let resumed = repo.phasegate(&["resume"]);
    assert_eq!(
        resumed.code, 1,
        "the push was refused for `aaa`: {resumed:?}"
    );
    assert!(
        said(&resumed).contains("x.md:1:# x TODO") && said(&resumed).contains("refs/heads/aaa"),
        "{resumed:?}"
    );
    // A resume again still finds it, one verdict on stdout. The pushed
    // commit is the same: a run over the same input is no new attempt,
    // so nothing asks for a person yet.
    let json = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(json.code, 1, "{json:?}");
    assert_eq!(json.json()["selection"]["pushed_ref"], "refs/heads/aaa");
}
