//! Checks that commit in a staged run, and reftable repositories.

use crate::protect_commit::{kept_index, partly_staged_committing};
use crate::protect_reach::{command_after, finding, run_shell};
use crate::support::{rev, TestRepo, BIN};

/// A repository with two commits and one check `chk` running `command`
/// in a shell, as a hook finds it: `a.txt` staged in part (its first
/// line, not its second), `b.txt` changed and not staged, `gone.txt`
/// deleted and not staged, `later.txt` added with `--intent-to-add`, and
/// `new.txt` and `dir/deep.txt` untracked.
fn hook_case_with(command: &str) -> TestRepo {
    let repo = partly_staged_committing(command, &[("gone.txt", "gone\n")]);
    std::fs::remove_file(repo.path().join("gone.txt")).unwrap();
    repo.write("later.txt", "later\n");
    repo.git(&["add", "-N", "later.txt"]);
    repo.write("dir/deep.txt", "untracked too\n");
    repo
}

/// Everything a person sees of their work: where `HEAD` is, what is
/// staged, what is not, what is untracked, and the stash.
fn seen(repo: &TestRepo) -> Vec<String> {
    vec![
        rev(repo, "HEAD"),
        repo.git(&["symbolic-ref", "HEAD"]),
        repo.git(&["diff", "--cached"]),
        repo.git(&["diff"]),
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
        repo.git(&["stash", "list"]),
    ]
}

/// The files of the work tree the fixture changed, byte for byte.
fn files(repo: &TestRepo) -> Vec<Option<Vec<u8>>> {
    [
        "a.txt",
        "b.txt",
        "gone.txt",
        "later.txt",
        "new.txt",
        "dir/deep.txt",
    ]
    .iter()
    .map(|path| std::fs::read(repo.path().join(path)).ok())
    .collect()
}

/// Runs `phasegate run` (a staged run, as the hook runs it) on
/// `hook_case_with(command)`, which must fail with a `head-moved` finding
/// whose undo, run as it is written, gives back everything as it was.
/// The finding's message.
fn undone_exactly(command: &str) -> String {
    let repo = hook_case_with(command);
    let (before, bytes) = (seen(&repo), files(&repo));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{command}: {v:#}");
    let message = finding(&v, "head-moved")
        .unwrap_or_else(|| panic!("{command}: no head-moved finding in {v:#}"));
    assert!(
        message.contains("moved branch `main` (HEAD) from "),
        "{command}: {message}"
    );
    // phasegate gave the unstaged changes back before it said so.
    assert_eq!(files(&repo), bytes, "{command}");
    assert_ne!(rev(&repo, "HEAD"), before[0], "{command}");
    run_shell(&repo, &command_after(&message, "Undo it with `"));
    assert_eq!(seen(&repo), before, "{command}: {message}");
    assert_eq!(files(&repo), bytes, "{command}");
    message
}

#[test]
fn a_check_s_add_all_and_commit_is_undone_to_the_staging_as_it_was() {
    // The undo was `git reset --soft` alone: `new.txt` and `dir/deep.txt`,
    // staged by the check's `git add -A`, stayed staged as new files.
    let message = undone_exactly("git add -A && git commit -qm x");
    assert!(
        message.contains("and changed what the index stages")
            && message.contains("puts back the index as it was before the checks"),
        "{message}"
    );
}

#[test]
fn a_check_s_commit_all_is_undone_by_the_reset_alone() {
    // The files with unstaged changes were at their staged content: `git
    // commit -a` committed what was staged, and staged nothing new.
    let message = undone_exactly("git commit -qam x");
    let undo = command_after(&message, "Undo it with `");
    assert!(undo.starts_with("git reset --soft ") && !undo.contains("&&"));
    assert!(message.ends_with("which leaves the index and the work tree as they are"));
}

#[test]
fn a_check_that_stashes_and_commits_is_undone_by_its_two_findings_in_turn() {
    // A plain `git stash && git commit` finds nothing to commit: HEAD
    // stays, the check fails, and the stash finding brings it all back.
    let repo = hook_case_with("git stash && git commit");
    let (before, bytes) = (seen(&repo), files(&repo));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(finding(&v, "head-moved"), None, "{v:#}");
    let stashed = finding(&v, "stashed").unwrap();
    run_shell(&repo, &command_after(&stashed, "Bring it back with `"));
    assert_eq!(seen(&repo), before, "{stashed}");
    assert_eq!(files(&repo), bytes);

    // One that commits all the same moves HEAD too: each finding's
    // command, in the verdict's order, gives everything back.
    let repo = hook_case_with("git stash -u && git commit -q --allow-empty -m x");
    let (before, bytes) = (seen(&repo), files(&repo));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let stashed = finding(&v, "stashed").unwrap();
    let moved = finding(&v, "head-moved").unwrap();
    run_shell(&repo, &command_after(&stashed, "Bring it back with `"));
    run_shell(&repo, &command_after(&moved, "Undo it with `"));
    assert_eq!(seen(&repo), before, "{stashed}\n{moved}");
    assert_eq!(files(&repo), bytes);
}

#[test]
fn the_index_kept_after_a_staged_run_is_the_owner_s_and_goes_with_its_run() {
    let repo = hook_case_with("git add -A && git commit -qm x");
    let (_, v) = repo.verdict(&[]);
    let message = finding(&v, "head-moved").unwrap();
    let kept = kept_index(&repo, &message);
    // Nothing else of its making is left beside it.
    let beside: Vec<_> = std::fs::read_dir(kept.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("index-before-checks"))
        .collect();
    assert_eq!(beside, ["index-before-checks"]);
}

/// A repository made with `git init --ref-format=reftable`, or `None`
/// (said on stderr) when the git on `PATH` cannot make one.
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
fn reftable_repo() -> Option<TestRepo> {
    let repo = TestRepo::plain();
    let made = repo
        .command("git")
        .args(["init", "-q", "-b", "main", "--ref-format=reftable"])
        .output()
        .unwrap();
    if !made.status.success() {
        eprintln!(
            "skipped: this git cannot make a reftable repository: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        );
        return None;
    }
    repo.git(&["config", "user.email", "test@example.com"]);
    repo.git(&["config", "user.name", "Test"]);
    Some(repo)
}

#[test]
fn in_a_reftable_repository_a_check_that_commits_is_caught_and_nothing_is_lost() {
    // HEAD is a fixed stub there, and the branch lives in `reftable/`:
    // git says where HEAD was and is, and the finding names the move.
    let Some(repo) = reftable_repo() else {
        return;
    };
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"chk\", shell = true, command = \"git add -A && git commit -qm x\" } ]\n",
    );
    repo.write("a.txt", "one\ntwo\n").write("b.txt", "b\n");
    repo.commit_all("one");
    let head = rev(&repo, "HEAD");
    repo.stage("a.txt", "ONE\ntwo\n");
    repo.write("a.txt", "ONE\nTWO\n");
    repo.write("b.txt", "b, unstaged only\n");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    let text = verdict.to_string();
    assert!(
        text.contains("moved branch `main` (HEAD) from ") && text.contains(&head[..10]),
        "{verdict:#}"
    );
    assert_eq!(repo.read("a.txt"), "ONE\nTWO\n");
    assert_eq!(repo.read("b.txt"), "b, unstaged only\n");
}

#[test]
fn a_hook_installed_before_the_repository_moved_to_reftable_keeps_gating_it() {
    // `git refs migrate` (git 2.46) converts a repository phasegate gates
    // already: its hook goes on gating it, and the unstaged work stays.
    let Some(probe) = reftable_repo() else {
        return;
    };
    drop(probe);
    let repo = TestRepo::new();
    repo.git(&["config", "core.logAllRefUpdates", "false"]);
    repo.config("[phases.implementation]\nchecks = [ { name = \"chk\", command = \"true\" } ]\n");
    repo.write("a.txt", "one\ntwo\n");
    repo.commit_all("one");
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{install:?}");
    let migrate = repo
        .command("git")
        .args(["refs", "migrate", "--ref-format=reftable"])
        .output()
        .unwrap();
    if !migrate.status.success() {
        eprintln!(
            "skipped: this git cannot convert a repository to reftable: {}",
            String::from_utf8_lossy(&migrate.stderr).trim()
        );
        return;
    }
    repo.stage("a.txt", "ONE\ntwo\n");
    repo.write("a.txt", "ONE\nTWO\n");
    repo.write("new.txt", "untracked\n");
    let commit = repo
        .command("git")
        .args(["commit", "-qm", "gated"])
        .env("PHASEGATE_BIN", BIN)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&commit.stderr);
    assert!(commit.status.success(), "{stderr}");
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]), "gated\n");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "ONE\ntwo\n");
    assert_eq!(repo.read("a.txt"), "ONE\nTWO\n");
    assert_eq!(repo.read("new.txt"), "untracked\n");
}
