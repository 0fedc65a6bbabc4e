//! Runs in the work tree: stashes, moved HEADs and modified files left by checks.
//!
//! `--all-files`, `--files` and CI's every-file run check the work tree as
//! it is, with nothing set aside: what a check does to the repository
//! there is looked for as in a staged run.

use crate::git::snapshot;
use crate::protect_reach::{command_after, finding, run_shell};
use crate::support::{rev, TestRepo};

/// A repository whose one check `chk` runs `command` in a shell, with
/// work in flight: `a.txt` staged with an unstaged change on top, `d.txt`
/// staged only, `c.txt` changed and not staged, an untracked file, and a
/// stash entry of the user's own; `b.txt` is committed and unchanged.
fn work_in_flight(command: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = {command:?} }} ]\n"
    ));
    repo.write("a.txt", "committed\n")
        .write("b.txt", "b\n")
        .write("c.txt", "c\n")
        .write("d.txt", "d\n")
        .write("e.txt", "e\n");
    repo.commit_all("one");
    repo.write("e.txt", "users own stash\n");
    repo.git(&["stash", "push", "-q", "--", "e.txt"]);
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "staged\nunstaged\n");
    repo.stage("d.txt", "d, staged only\n");
    repo.write("c.txt", "c, unstaged only\n");
    repo.write("untracked.txt", "mine, never added\n");
    repo
}

/// Variables set for a run, by name and value.
type Env = &'static [(&'static str, &'static str)];

/// The selections that check the work tree as it is, each with the
/// environment it runs in.
const AS_IS: [(&[&str], Env); 3] = [
    (&["--all-files"], &[]),
    (&["--files", "a.txt"], &[]),
    // In CI with no pull request's range: every tracked file.
    (&[], &[("CI", "true")]),
];

#[test]
fn a_check_that_stashes_the_work_tree_as_it_is_fails_and_pop_index_brings_it_all_back() {
    // These runs passed: the staged, unstaged and untracked work went
    // into a stash entry nobody was told of.
    for (args, env) in AS_IS {
        for command in ["git stash -q -u", "git stash -q"] {
            let repo = work_in_flight(command);
            let theirs = rev(&repo, "stash@{0}");
            let before = snapshot(&repo);
            let (code, v) = repo.verdict_with(args, env);
            assert_eq!(code, 1, "{args:?} {command}: {v:#}");
            assert_eq!(v["status"], "failed", "{args:?} {command}: {v:#}");
            let message =
                finding(&v, "stashed").unwrap_or_else(|| panic!("{args:?} {command}: {v:#}"));
            assert!(
                message.starts_with("`chk` stashed work out of the work tree")
                    && message.contains("`a.txt`, `c.txt`, `d.txt`"),
                "{args:?} {command}: {message}"
            );
            assert_eq!(
                message.contains("the untracked files `untracked.txt`"),
                command.contains("-u"),
                "{args:?} {command}: {message}"
            );
            // phasegate wrote nothing back: `pop --index` puts the index
            // and the work tree back as they were.
            let undo = command_after(&message, "Bring it back with `");
            assert_eq!(undo, "git stash pop --index stash@{0}", "{message}");
            run_shell(&repo, &undo);
            assert_eq!(snapshot(&repo), before, "{args:?} {command}");
            assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
            assert_eq!(rev(&repo, "stash@{0}"), theirs, "{args:?} {command}");
            assert_eq!(repo.git(&["stash", "list"]).lines().count(), 1);
        }
    }
}

#[test]
fn a_check_that_commits_or_switches_branch_in_the_work_tree_as_it_is_fails() {
    // These runs passed with `main` moved on by a commit of the user's
    // unstaged work, or with another branch checked out.
    for (args, env) in AS_IS {
        for (command, undo_starts) in [
            ("git commit -qam by-the-check", "git reset --soft "),
            (
                "git checkout -qb other",
                "git symbolic-ref HEAD refs/heads/main",
            ),
        ] {
            let repo = work_in_flight(command);
            let head = rev(&repo, "HEAD");
            let before = snapshot(&repo);
            let (code, v) = repo.verdict_with(args, env);
            assert_eq!(code, 1, "{args:?} {command}: {v:#}");
            let message =
                finding(&v, "head-moved").unwrap_or_else(|| panic!("{args:?} {command}: {v:#}"));
            assert!(
                message.starts_with("`chk` changed the repository"),
                "{message}"
            );
            let undo = command_after(&message, "Undo it with `");
            assert!(undo.starts_with(undo_starts), "{message}");
            run_shell(&repo, &undo);
            assert_eq!(rev(&repo, "HEAD"), head, "{args:?} {command}");
            assert_eq!(
                repo.git(&["symbolic-ref", "HEAD"]).trim(),
                "refs/heads/main"
            );
            // The work tree never changed; the index is as the check left
            // it (the commit staged everything it took).
            assert_eq!(snapshot(&repo).0, before.0, "{args:?} {command}");
            assert_eq!(repo.read("c.txt"), "c, unstaged only\n");
        }
    }
}

#[test]
fn a_check_that_modifies_tracked_files_fails_a_run_in_the_work_tree_as_it_is() {
    // A formatter's rewrite passed: in CI the code it fixed was never
    // committed, and nobody looks at the work tree afterwards.
    for (args, env) in AS_IS {
        // `b.txt` was clean, `c.txt` had unstaged changes, `d.txt` was
        // staged: each is rewritten with other bytes.
        let repo = work_in_flight(
            "printf 'b, formatted\\n' > b.txt && printf more >> c.txt && printf 'd, formatted\\n' > d.txt",
        );
        let (code, v) = repo.verdict_with(args, env);
        assert_eq!(code, 1, "{args:?}: {v:#}");
        let message = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["tool"] == "phasegate")
            .unwrap_or_else(|| panic!("{args:?}: {v:#}"))["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            message, "files were modified by `chk`: b.txt, c.txt, d.txt",
            "{args:?}"
        );
        // Nothing of the user's was touched by phasegate.
        assert_eq!(repo.read("c.txt"), "c, unstaged only\nmore");
    }
}

#[test]
fn a_check_that_writes_files_without_changing_them_passes_in_the_work_tree_as_it_is() {
    // Rewriting the same bytes (a formatter with nothing to do), writing
    // untracked build output and staging nothing are no modification, on
    // a file with unstaged changes or without.
    let repo = work_in_flight(
        "cat c.txt > t.tmp && cat t.tmp > c.txt && cp d.txt t.tmp && mv t.tmp d.txt && touch a.txt && mkdir -p target && echo o > target/out",
    );
    for (args, env) in AS_IS {
        let before = snapshot(&repo);
        let (code, v) = repo.verdict_with(args, env);
        assert_eq!(code, 0, "{args:?}: {v:#}");
        assert_eq!(v["status"], "passed", "{args:?}: {v:#}");
        assert_eq!(v["diagnostics"], serde_json::json!([]), "{args:?}: {v:#}");
        assert_eq!(snapshot(&repo).1, before.1, "{args:?}");
    }
}

#[test]
fn a_check_that_stages_in_the_work_tree_as_it_is_fails() {
    // `git add` of a generated or fixed file changes what a commit would
    // hold; the file itself may be unchanged in the work tree.
    let repo = work_in_flight("git add c.txt");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v["diagnostics"]
            .to_string()
            .contains("files were modified by `chk`: c.txt"),
        "{v:#}"
    );
}
