//! CI ranges, the gate read from a ref, and the pre-push hook.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::support::{git_pushing, remote_has, TestRepo};

/// A repository whose gate fails on any `*.md` file saying TODO, pushed
/// to its bare `origin`, with the pre-push hook installed.
fn pushed_with_todo_rule() -> (TestRepo, TestRepo) {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -H TODO {files}\" } ]\n");
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    (repo, remote)
}

#[test]
fn a_pushed_branch_whose_name_is_not_utf8_is_checked_and_named() {
    let (repo, remote) = pushed_with_todo_rule();
    // git allows any byte but a few in a ref's name.
    let name = OsStr::from_bytes(b"caf\xe9");
    let git = |args: &[&OsStr]| {
        let out = repo.command("git").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    git(&[OsStr::new("checkout"), OsStr::new("-qb"), name]);
    repo.write("bad.md", "# bad TODO\n");
    repo.commit_all("bad");
    git(&[OsStr::new("checkout"), OsStr::new("-q"), OsStr::new("main")]);

    let refused = git_pushing(&repo, &[OsStr::new("push"), OsStr::new("origin"), name]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stdout.contains("bad.md") && refused.stdout.contains("refs/heads/caf\\xe9"),
        "{refused:?}"
    );
    assert!(!remote_has(&remote, name), "nothing was pushed");

    // Fixed, it goes through.
    git(&[OsStr::new("checkout"), OsStr::new("-q"), name]);
    repo.write("bad.md", "# fine\n");
    repo.commit_all("fixed");
    let pushed = git_pushing(&repo, &[OsStr::new("push"), OsStr::new("origin"), name]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, name));
}

#[test]
fn pushing_notes_runs_no_check_of_the_project_on_them() {
    let (repo, remote) = pushed_with_todo_rule();
    // A check of the whole project, which the notes' own commit (a tree of
    // files named by commit ids) would fail.
    repo.config("[phases.implementation]\nchecks = [ { name = \"project\", shell = true, command = \"test -f a.md\" } ]\n");
    repo.commit_all("whole-project check");
    let main = git_pushing(
        &repo,
        &[OsStr::new("push"), OsStr::new("origin"), OsStr::new("main")],
    );
    assert_eq!(main.code, 0, "{main:?}");
    repo.git(&["notes", "add", "-m", "reviewed", "HEAD"]);

    let pushed = git_pushing(
        &repo,
        &[
            OsStr::new("push"),
            OsStr::new("origin"),
            OsStr::new("refs/notes/commits"),
        ],
    );
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(
        pushed.stderr.contains("`refs/notes/commits` holds notes"),
        "{pushed:?}"
    );
    assert!(remote_has(&remote, OsStr::new("refs/notes/commits")));
}

#[test]
fn a_branch_and_its_tags_pushed_at_once_are_checked_once_and_do_not_escalate() {
    let (repo, remote) = pushed_with_todo_rule();
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("bad");
    repo.git(&["tag", "v1"]);
    repo.git(&["tag", "-a", "v1-rc", "-m", "rc"]);
    let args = ["push", "origin", "main", "v1", "v1-rc"].map(OsStr::new);
    let refused = git_pushing(&repo, &args);
    // One failed attempt, not three in a row: no person is asked for.
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        !refused.stdout.contains("a person is needed"),
        "{refused:?}"
    );
    assert_eq!(
        refused.stdout.matches("✗ failed").count(),
        1,
        "{}",
        refused.stdout
    );
    assert!(
        refused
            .stdout
            .contains("pushing refs/heads/main, refs/tags/v1, refs/tags/v1-rc"),
        "{}",
        refused.stdout
    );
    assert!(!remote_has(&remote, OsStr::new("refs/tags/v1")));

    repo.write("b.md", "# b\n");
    repo.commit_all("fixed");
    repo.git(&["tag", "-f", "v1"]);
    repo.git(&["tag", "-f", "-a", "v1-rc", "-m", "rc"]);
    let pushed = git_pushing(&repo, &args);
    assert_eq!(pushed.code, 0, "{pushed:?}");
}

#[test]
fn a_range_that_holds_no_commit_says_so_and_how_to_swap_its_ends() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -H TODO {files}\" } ]\n");
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("bad");
    let notes = |v: &serde_json::Value| v["notes"].to_string();

    // Swapped: the bad commit is never looked at, and the pass says why.
    let (code, swapped) = repo.verdict(&["--from-ref", "HEAD", "--to-ref", "HEAD~1"]);
    assert_eq!(code, 0, "{swapped:#}");
    assert!(
        notes(&swapped).contains("`HEAD~1` is an ancestor of `HEAD`")
            && notes(&swapped).contains("`--from-ref HEAD~1 --to-ref HEAD`"),
        "{swapped:#}"
    );
    let (code, same) = repo.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(code, 0, "{same:#}");
    assert!(
        notes(&same).contains("`main` and `HEAD` are the same commit"),
        "{same:#}"
    );
    // The right way round, the range is checked, with no such note.
    let (code, right) = repo.verdict(&["--from-ref", "HEAD~1", "--to-ref", "HEAD"]);
    assert_eq!(code, 1, "{right:#}");
    assert!(!notes(&right).contains("holds no commit"), "{right:#}");
}
