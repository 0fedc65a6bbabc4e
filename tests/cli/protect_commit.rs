//! A check that commits: the user's staging given back.

use std::os::unix::fs::PermissionsExt;

use crate::protect_reach::{command_after, finding, run_shell};
use crate::support::{rev, TestRepo, BIN};

/// A repository with two commits and one check `chk` running `command`
/// in a shell; `a.txt` staged in part (its first line, not its second),
/// `b.txt` changed and not staged, `new.txt` untracked.
fn partly_staged_with(command: &str) -> TestRepo {
    partly_staged_committing(command, &[])
}

/// `partly_staged_with(command)`, whose first commit holds `committed`
/// (`(path, text)`) too.
pub(crate) fn partly_staged_committing(command: &str, committed: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = {command:?} }} ]\n"
    ));
    repo.write("a.txt", "one\ntwo\n").write("b.txt", "b\n");
    for (path, text) in committed {
        repo.write(path, text);
    }
    repo.commit_all("one");
    repo.write("c.txt", "c\n");
    repo.commit_all("two");
    repo.stage("a.txt", "ONE\ntwo\n");
    repo.write("a.txt", "ONE\nTWO \u{0}\r\n");
    repo.write("b.txt", "b, unstaged only\n");
    repo.write("new.txt", "untracked\n");
    repo
}

/// What git says is staged, what is not, and what is untracked: the
/// user's staging, byte for byte.
fn staging(repo: &TestRepo) -> (String, String, String) {
    (
        repo.git(&["diff", "--cached"]),
        repo.git(&["diff"]),
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
    )
}

/// The verdict of `phasegate run --format json ARGS`, which must fail
/// with phasegate's `head-moved` finding: that finding's message.
fn head_moved(repo: &TestRepo, args: &[&str]) -> String {
    let (code, v) = repo.verdict(args);
    assert_eq!(code, 1, "{v:#}");
    finding(&v, "head-moved").unwrap_or_else(|| panic!("no head-moved finding in {v:#}"))
}

/// `head_moved(repo, args)`, whose finding must say the index changed
/// too, then its undo, which must give back `HEAD` and the staging as
/// they were.
fn index_given_back(repo: &TestRepo, args: &[&str]) -> String {
    let head = rev(repo, "HEAD");
    let before = staging(repo);
    let message = head_moved(repo, args);
    assert!(
        message.contains("and changed what the index stages"),
        "{message}"
    );
    run_shell(repo, &command_after(&message, "Undo it with `"));
    assert_eq!(rev(repo, "HEAD"), head);
    assert_eq!(staging(repo), before, "{message}");
    message
}

/// The copy of the index the undo in `message` puts back, after asserting
/// that it is kept with its run in `repo` and that only its owner can
/// read or write it.
pub(crate) fn kept_index(repo: &TestRepo, message: &str) -> std::path::PathBuf {
    let copy = command_after(message, "&& cp ");
    let kept = std::path::PathBuf::from(copy.split(' ').next().unwrap());
    let runs = repo.path().join(".git/phasegate/runs");
    assert!(kept.starts_with(&runs), "{message}");
    let mode = std::fs::metadata(&kept).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", kept.display());
    kept
}

#[test]
fn after_a_check_commits_everything_the_undo_gives_back_the_branch_and_the_staging() {
    // `reset --soft`, all the message gave, left `a.txt` staged whole,
    // `b.txt` staged and, after `git add -A`, `new.txt` tracked.
    for (command, args) in [
        ("git commit -qam x", &["--all-files"][..]),
        ("git add -A && git commit -qm x", &["--files", "a.txt"][..]),
        ("git commit -qam x", &["--files", "b.txt"][..]),
    ] {
        let repo = partly_staged_with(command);
        let head = rev(&repo, "HEAD");
        let before = staging(&repo);
        let message = head_moved(&repo, args);
        assert_ne!(rev(&repo, "HEAD"), head, "{command}");
        assert!(
            message.contains("moved branch `main` (HEAD) from ")
                && message.contains("and changed what the index stages")
                && message.contains("puts back the index as it was before the checks"),
            "{command}: {message}"
        );
        run_shell(&repo, &command_after(&message, "Undo it with `"));
        assert_eq!(rev(&repo, "HEAD"), head, "{command}");
        assert_eq!(
            repo.git(&["symbolic-ref", "HEAD"]).trim(),
            "refs/heads/main"
        );
        assert_eq!(staging(&repo), before, "{command}: {message}");
        assert_eq!(repo.read("a.txt"), "ONE\nTWO \u{0}\r\n", "{command}");
        assert_eq!(repo.read("b.txt"), "b, unstaged only\n", "{command}");
    }
}

#[test]
fn the_kept_index_is_the_owner_s_and_goes_with_its_run() {
    let repo = partly_staged_with("git commit -qam x");
    let message = head_moved(&repo, &["--all-files"]);
    kept_index(&repo, &message);
}

#[test]
fn a_commit_that_staged_nothing_new_keeps_the_undo_as_it_was() {
    // An empty commit leaves the index as it was: `reset --soft` is all
    // it takes, and nothing is kept.
    let repo = partly_staged_with("git commit -q --allow-empty -m x");
    let head = rev(&repo, "HEAD");
    let before = staging(&repo);
    let message = head_moved(&repo, &["--all-files"]);
    let undo = command_after(&message, "Undo it with `");
    assert_eq!(undo, format!("git reset --soft {head}"), "{message}");
    assert!(message.ends_with("which leaves the index and the work tree as they are"));
    run_shell(&repo, &undo);
    assert_eq!(staging(&repo), before);
}

#[test]
fn in_a_staged_run_a_check_s_commit_all_leaves_the_staging_as_it_was() {
    // The unstaged changes are set aside while the checks run: `commit -a`
    // commits what was staged, and `reset --soft` gives everything back.
    let repo = partly_staged_with("git commit -qam x");
    let head = rev(&repo, "HEAD");
    let before = staging(&repo);
    let message = head_moved(&repo, &[]);
    let undo = command_after(&message, "Undo it with `");
    assert_eq!(undo, format!("git reset --soft {head}"), "{message}");
    run_shell(&repo, &undo);
    assert_eq!(rev(&repo, "HEAD"), head);
    assert_eq!(staging(&repo), before);

    // With no unstaged change, nothing is set aside: a check's `git add
    // -A` stages the untracked file, and the undo takes it out again.
    let repo = partly_staged_with("git add -A && git commit -qm x");
    repo.git(&["add", "a.txt", "b.txt"]);
    index_given_back(&repo, &[]);
}

#[test]
fn a_linked_worktree_gets_its_own_index_back() {
    let repo = partly_staged_with("git commit -qam x");
    repo.commit_all("three");
    let linked = repo.linked_worktree("side");
    std::fs::write(linked.join("a.txt"), "ONE\ntwo\n").unwrap();
    repo.git_at(&linked, &["add", "a.txt"]);
    std::fs::write(linked.join("a.txt"), "ONE\nTWO\n").unwrap();
    let main_index = std::fs::read(repo.path().join(".git/index")).unwrap();
    let look = |args: &[&str]| repo.git_at(&linked, args);
    let before = (look(&["diff", "--cached"]), look(&["diff"]));
    let head = look(&["rev-parse", "HEAD"]);
    let run = repo.phasegate_in(&linked, &["run", "--format", "json", "--all-files"]);
    assert_eq!(run.code, 1, "{run:?}");
    let message = finding(&run.json(), "head-moved").unwrap();
    assert!(message.contains("moved branch `side` (HEAD)"), "{message}");
    let undo = command_after(&message, "Undo it with `");
    assert!(undo.contains("/.git/worktrees/side/index"), "{undo}");
    let out = repo
        .command("sh")
        .args(["-c", &undo])
        .current_dir(&linked)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(look(&["rev-parse", "HEAD"]), head);
    assert_eq!((look(&["diff", "--cached"]), look(&["diff"])), before);
    // The main work tree's index was never touched.
    assert_eq!(
        std::fs::read(repo.path().join(".git/index")).unwrap(),
        main_index
    );
}

#[test]
fn a_check_that_splits_the_index_and_commits_gets_the_whole_index_back() {
    // phasegate reads only an index that is one file (it stops on a split
    // one before any check), so the copy it keeps is whole; the index the
    // check split is merged back before the undo is given.
    let repo = partly_staged_with("git update-index --split-index && git commit -qam x");
    index_given_back(&repo, &["--all-files"]);
}

#[test]
fn a_snapshot_run_s_process_groups_file_is_the_owner_s_whatever_the_umask() {
    // Made by its first record under umask 000, anyone could add a
    // line to it, naming processes a later run would stop.
    let repo = TestRepo::new();
    let seen = repo.home().join("groups-mode");
    repo.config(&format!(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = \"stat -c %a .git/groups > {}\" }} ]\n",
        seen.display()
    ));
    repo.stage("a.txt", "a\n");
    repo.git(&["add", "phasegate.toml"]);
    let out = repo
        .command("sh")
        .args(["-c", "umask 000 && exec \"$@\"", "sh", BIN, "run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&seen).unwrap().trim(), "600");
}

#[test]
fn a_file_changed_in_the_second_the_index_was_written_still_shows_changed_after_the_undo() {
    // git compares a file by content when its entry was stat-ed in the
    // instant the index was written or later ("racily clean"). A copy of
    // the index with a time of its own made such a change look undone.
    let repo = partly_staged_with("git commit -qam x");
    let at = "@1700000000";
    let touch = |path: &str| {
        let done = std::process::Command::new("touch")
            .args(["-h", "-d", at])
            .arg(repo.path().join(path))
            .status()
            .unwrap();
        assert!(done.success());
    };
    repo.write("c.txt", "C\n");
    touch("c.txt");
    repo.git(&["add", "c.txt"]);
    // The same size and time as the entry says, another content.
    repo.write("c.txt", "D\n");
    touch("c.txt");
    touch(".git/index");
    let before = repo.git(&["diff-files", "--name-only"]);
    assert!(before.contains("c.txt"), "{before}");
    let message = head_moved(&repo, &["--all-files"]);
    run_shell(&repo, &command_after(&message, "Undo it with `"));
    assert_eq!(
        repo.git(&["diff-files", "--name-only"]),
        before,
        "{message}"
    );
    assert_eq!(repo.read("c.txt"), "D\n");
}

#[test]
fn an_index_copy_that_cannot_be_kept_is_said_with_what_the_undo_leaves_staged() {
    // The run's directory has a directory where the copy goes: the undo
    // said only `git reset --soft`, as if the staging were untouched.
    let repo =
        partly_staged_with(
        "for run in .git/phasegate/runs/*/; do mkdir \"$run/index-before-checks\"; done && git commit -qam x",
    );
    let head = rev(&repo, "HEAD");
    let message = head_moved(&repo, &["--all-files"]);
    for part in [
        "and changed what the index stages",
        "a copy of the index as it was could not be kept: writing `",
        "index-before-checks` failed: ",
        "is staged whole now; `git restore --staged <path>` unstages a file",
    ] {
        assert!(message.contains(part), "`{part}` not in {message}");
    }
    let undo = command_after(&message, "Undo it with `");
    assert!(!undo.contains("cp "), "{undo}");
    run_shell(&repo, &undo);
    assert_eq!(rev(&repo, "HEAD"), head);
}
