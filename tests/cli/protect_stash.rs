//! Protection: checks that stash the user's work, and shared-repository permissions.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::git::snapshot;
use crate::protect_reach::{command_after, finding, run_shell};
use crate::state_shared::{everything_under, run_as};
use crate::support::{git_pushing, recorded_verdicts, rev, TestRepo, BIN};

/// A repository whose one check `chk` runs `command` in a shell, with
/// every kind of work a user has in flight: `a.txt` staged with an
/// unstaged change on top, `d.txt` staged only, `c.txt` changed and not
/// staged, untracked files (one in a directory of its own), and a stash
/// entry of the user's own.
fn work_in_flight(command: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = {command:?} }} ]\n"
    ));
    repo.write("a.txt", "committed\n")
        .write("c.txt", "c\n")
        .write("d.txt", "d\n")
        .write("e.txt", "e\n");
    repo.commit_all("one");
    repo.write("e.txt", "users own stash\n");
    repo.git(&["stash", "push", "-q", "--", "e.txt"]);
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "staged\r\nunstaged \u{0}\n");
    repo.stage("d.txt", "d, staged only\n");
    repo.write("c.txt", "c, unstaged only\n");
    repo.write("untracked.txt", "mine, never added\n");
    repo.write("notes/todo.txt", "mine too\n");
    repo
}

#[test]
fn a_commit_whose_check_stashes_is_refused_and_the_command_given_brings_everything_back() {
    // The commit went through with a note: the staged content of `d.txt`
    // was out of the index and the untracked files out of the work tree,
    // in a stash entry whose `git stash pop` the note gave, and which
    // fails after phasegate writes the unstaged changes back.
    for (command, untracked) in [
        ("git stash -q -u", true),
        ("git stash -q --include-untracked", true),
        ("git stash -q", false),
    ] {
        let repo = work_in_flight(command);
        assert_eq!(repo.phasegate(&["install"]).code, 0);
        let head = rev(&repo, "HEAD");
        let theirs = rev(&repo, "stash@{0}");
        let before = snapshot(&repo);
        let run = git_pushing(&repo, &["commit", "-qm", "two"]);
        assert_ne!(run.code, 0, "{command}: {run:?}");
        assert_eq!(rev(&repo, "HEAD"), head, "{command}: nothing was committed");
        let v = recorded_verdicts(&repo).pop().unwrap();
        assert_eq!(v["status"], "failed", "{command}: {v:#}");
        let message = finding(&v, "stashed").unwrap_or_else(|| panic!("{command}: {v:#}"));
        assert!(
            message.starts_with("`chk` stashed work out of the work tree")
                && message.contains("stash@{0}")
                && message.contains("`a.txt`, `d.txt`"),
            "{command}: {message}"
        );
        assert_eq!(
            message.contains("the untracked files `notes/todo.txt`, `untracked.txt`"),
            untracked,
            "{command}: {message}"
        );
        // Said as a finding, not again as a note.
        assert!(
            !v["notes"].to_string().contains("stash entry"),
            "{command}: {v:#}"
        );
        // The unstaged changes are back before anything is popped.
        assert_eq!(repo.read("a.txt"), "staged\r\nunstaged \u{0}\n");
        assert_eq!(repo.read("c.txt"), "c, unstaged only\n");

        run_shell(&repo, &command_after(&message, "Bring it back with `"));
        assert_eq!(snapshot(&repo), before, "{command}");
        assert_eq!(repo.git(&["stash", "list"]).lines().count(), 1);
        assert_eq!(rev(&repo, "stash@{0}"), theirs, "{command}");
    }
}

#[test]
fn a_check_that_stashes_untracked_files_fails_a_run_at_the_checked_out_commit() {
    // A range ending at the checked-out commit is checked in the work
    // tree with nothing staged: the stash held only the untracked files,
    // the tracked ones were as before, and the run passed.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"chk\", shell = true, command = \"git stash -q -u\" } ]\n",
    );
    repo.write("a.txt", "a\n").commit_all("one");
    repo.write("b.txt", "b\n").commit_all("two");
    repo.write("a.txt", "a, unstaged\n")
        .write("untracked.txt", "mine\n");
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&["--from-ref", "HEAD~1", "--to-ref", "HEAD"]);
    assert_eq!(code, 1, "{v:#}");
    let message = finding(&v, "stashed").unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        message.contains("the untracked files `untracked.txt`"),
        "{message}"
    );
    // Nothing was staged: the command only pops.
    assert_eq!(
        command_after(&message, "Bring it back with `"),
        "git stash pop stash@{0}"
    );
    assert_eq!(repo.read("a.txt"), "a, unstaged\n");
    run_shell(&repo, &command_after(&message, "Bring it back with `"));
    assert_eq!(snapshot(&repo), before);
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn the_groups_file_and_a_directory_kept_from_a_file_s_place_are_the_group_s() {
    // Under `core.sharedRepository=group` and a umask of 077, the file
    // where the checks' process groups are recorded was 0600 and the
    // directories made to keep a directory left where a file goes 0700:
    // another member's run could neither stop the checks of a killed run
    // nor enter what it kept.
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--shared=group"]);
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"chk\", shell = true, command = \"rm sub/f.txt && mkdir -p sub/f.txt/out\" } ]\n",
    );
    repo.write("sub/f.txt", "f\n").commit_all("one");
    repo.write("sub/f.txt", "f, unstaged\n")
        .stage("b.txt", "b\n");

    // Killed once the checks ran: the groups file is there.
    let mut run = repo.command("sh");
    run.args(["-c", "umask 077 && exec \"$@\"", "sh", BIN, "run"]);
    repo.kill_at("checks-done", run);
    let protect = repo.path().join(".git/phasegate/protect");
    let held: Vec<_> = std::fs::read_dir(&protect)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(mode(&held[0].join("groups")), 0o660);

    // The restore finds the check's directory where `sub/f.txt` goes and
    // keeps it under `kept/<run-id>/sub/`.
    let restored = run_as(&repo, None, "077", BIN, &["restore"]);
    assert_eq!(restored.code, 0, "{restored:?}");
    assert_eq!(repo.read("sub/f.txt"), "f, unstaged\n");
    let kept = repo.path().join(".git/phasegate/kept");
    let dirs = made_by_phasegate(&kept);
    assert_eq!(dirs.len(), 3, "kept/, its run's and `sub/`: {dirs:?}");
    for (dir, mode) in &dirs {
        assert_eq!(*mode, 0o2770, "{}", dir.display());
    }
    assert!(dirs[1].0.join("sub/f.txt/out").is_dir(), "{dirs:?}");

    // In a run that finishes, the same directory is kept with the run.
    let run = run_as(&repo, None, "077", BIN, &["run", "--format", "json"]);
    let run_id = run.json()["run_id"].as_str().unwrap().to_string();
    let dropped = repo
        .path()
        .join(".git/phasegate/runs")
        .join(run_id)
        .join("dropped");
    assert!(dropped.join("sub/f.txt/out").is_dir(), "{run:?}");
    let dirs = made_by_phasegate(&dropped);
    assert_eq!(dirs.len(), 2, "dropped/ and `sub/`: {dirs:?}");
    for (dir, mode) in &dirs {
        assert_eq!(*mode, 0o2770, "{}", dir.display());
    }
}

/// The directories under `dir` (itself included) with their modes, but
/// for the check's own directory kept there (`f.txt/`) and what is in it.
fn made_by_phasegate(dir: &Path) -> Vec<(std::path::PathBuf, u32)> {
    everything_under(dir)
        .into_iter()
        .filter(|p| p.is_dir() && !p.components().any(|c| c.as_os_str() == "f.txt"))
        .map(|p| {
            let mode = mode(&p);
            (p, mode)
        })
        .collect()
}
