//! Protection of unstaged changes against checks that move HEAD, mode-only changes, sparse checkouts and untracked files.

use std::os::unix::fs::PermissionsExt;

use crate::git::snapshot;
use crate::support::{git_pushing, rev, TestRepo};

/// A repository with two commits, `a.txt` staged and changed again on
/// top, `b.txt` changed and not staged, and one check `chk` running
/// `command` in a shell.
fn two_commits_with(command: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = {command:?} }} ]\n"
    ));
    repo.write("a.txt", "committed\n").write("b.txt", "b\n");
    repo.commit_all("one");
    repo.write("two.txt", "two\n");
    repo.commit_all("two");
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "staged\r\nunstaged \u{0}\n");
    repo.write("b.txt", "b, unstaged only\n");
    repo
}

/// The phasegate finding whose code is `code`, as its message.
pub(crate) fn finding(verdict: &serde_json::Value, code: &str) -> Option<String> {
    verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .map(|d| d["message"].as_str().unwrap().to_string())
}

/// The command a message gives in backticks right after `after`.
pub(crate) fn command_after(message: &str, after: &str) -> String {
    let start = message
        .find(after)
        .unwrap_or_else(|| panic!("no `{after}` in: {message}"))
        + after.len();
    let len = message[start..].find('`').unwrap();
    message[start..start + len].to_string()
}

/// Runs `command` in `repo` with `sh`, which must succeed.
pub(crate) fn run_shell(repo: &TestRepo, command: &str) {
    let out = repo.command("sh").args(["-c", command]).output().unwrap();
    assert!(
        out.status.success(),
        "`{command}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_check_that_commits_or_moves_head_fails_the_run_with_what_moved_and_the_undo() {
    // Each passed (exit 0) without a word: the staged content was
    // committed by the check, or HEAD was left on another branch or commit.
    for (command, said) in [
        ("git commit -qam x", "moved branch `main` (HEAD) from "),
        (
            "git commit -q --allow-empty -m x",
            "moved branch `main` (HEAD) from ",
        ),
        (
            "git checkout -qb other",
            "switched HEAD from branch `main` to branch `other` at ",
        ),
        (
            "git reset -q --soft HEAD~1",
            "moved branch `main` (HEAD) from ",
        ),
        (
            "git checkout -q --detach",
            "switched HEAD from branch `main` to a detached HEAD at ",
        ),
    ] {
        let repo = two_commits_with(command);
        let head = rev(&repo, "HEAD");
        let before = snapshot(&repo);
        let index = repo.git(&["ls-files", "--stage"]);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{command}: {v:#}");
        assert_eq!(v["status"], "failed", "{command}");
        let message =
            finding(&v, "head-moved").unwrap_or_else(|| panic!("{command}: no finding in {v:#}"));
        assert!(
            message.starts_with("`chk` changed the repository: it ") && message.contains(said),
            "{command}: {message}"
        );
        if said.starts_with("moved branch") {
            let now = rev(&repo, "HEAD");
            assert!(
                message.contains(&format!("from {} to {}", &head[..10], &now[..10])),
                "{command}: {message}"
            );
        }
        // The unstaged changes and what was staged are there, whatever
        // HEAD says.
        assert_eq!(
            repo.read("a.txt"),
            "staged\r\nunstaged \u{0}\n",
            "{command}"
        );
        assert_eq!(repo.read("b.txt"), "b, unstaged only\n", "{command}");
        assert_eq!(repo.git(&["ls-files", "--stage"]), index, "{command}");
        // What the message says to run puts everything back as it was.
        run_shell(&repo, &command_after(&message, "Undo it with `"));
        assert_eq!(rev(&repo, "HEAD"), head, "{command}");
        assert_eq!(
            repo.git(&["symbolic-ref", "-q", "HEAD"]).trim(),
            "refs/heads/main",
            "{command}"
        );
        assert_eq!(snapshot(&repo), before, "{command}");
    }
}

#[test]
fn a_check_that_commits_on_a_detached_head_is_named_with_the_undo() {
    let repo = two_commits_with("git commit -q --allow-empty -m x");
    repo.git(&["checkout", "-q", "--detach"]);
    let head = rev(&repo, "HEAD");
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let message = finding(&v, "head-moved").unwrap();
    let now = rev(&repo, "HEAD");
    assert!(
        message.contains(&format!(
            "moved the detached HEAD from {} to {}",
            &head[..10],
            &now[..10]
        )),
        "{message}"
    );
    run_shell(&repo, &command_after(&message, "Undo it with `"));
    assert_eq!(rev(&repo, "HEAD"), head);
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn a_check_that_leaves_head_alone_but_writes_refs_passes() {
    // A new branch, a tag, packing the refs: HEAD is where it was.
    let repo = two_commits_with("git branch side && git tag t1 && git pack-refs --all");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(finding(&v, "head-moved"), None);
}

#[test]
fn a_check_that_commits_on_a_packed_branch_or_the_first_commit_is_named() {
    // A branch only in `packed-refs` (after a clone or `git gc`).
    let repo = two_commits_with("git commit -q --allow-empty -m x");
    repo.git(&["pack-refs", "--all"]);
    assert!(!repo.exists(".git/refs/heads/main"));
    let head = rev(&repo, "HEAD");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let message = finding(&v, "head-moved").unwrap();
    assert!(
        message.contains(&format!("from {}", &head[..10])),
        "{message}"
    );
    run_shell(&repo, &command_after(&message, "Undo it with `"));
    assert_eq!(rev(&repo, "HEAD"), head);

    // Before the first commit, the check made it.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"chk\", shell = true, command = \"git commit -qm first\" } ]\n",
    );
    repo.stage("a.txt", "first\n");
    repo.git(&["add", "phasegate.toml"]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let message = finding(&v, "head-moved").unwrap();
    assert!(
        message.contains("made the first commit of branch `main` (HEAD)"),
        "{message}"
    );
    run_shell(&repo, &command_after(&message, "Undo it with `"));
    assert!(repo
        .command("git")
        .args(["rev-parse", "-q", "--verify", "HEAD"])
        .output()
        .unwrap()
        .stdout
        .is_empty());
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "a.txt\nphasegate.toml\n"
    );
}

#[test]
fn a_commit_whose_check_moves_head_is_refused_and_lands_nowhere() {
    // Through the hook, a check's `git checkout -b` made git put the
    // commit on the check's branch; a `git reset --soft` made git fail
    // with "cannot lock ref 'HEAD'", leaving the user's last commit undone.
    for command in ["git checkout -qb other", "git reset -q --soft HEAD~1"] {
        let repo = two_commits_with(command);
        assert_eq!(repo.phasegate(&["install"]).code, 0);
        let head = rev(&repo, "HEAD");
        let before = snapshot(&repo);
        let run = git_pushing(&repo, &["commit", "-qm", "three"]);
        assert_ne!(run.code, 0, "{command}: {run:?}");
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains("`chk` changed the repository"),
            "{command}: {said}"
        );
        assert!(!said.contains("cannot lock ref"), "{command}: {said}");
        // The report may wrap the message: the recorded verdict has it whole.
        let v = crate::support::recorded_verdicts(&repo).pop().unwrap();
        let message = finding(&v, "head-moved").unwrap_or_else(|| panic!("{command}: {v:#}"));
        run_shell(&repo, &command_after(&message, "Undo it with `"));
        assert_eq!(rev(&repo, "HEAD"), head, "{command}");
        assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
        assert_eq!(snapshot(&repo), before, "{command}");
    }
}

#[test]
fn a_mode_only_change_with_core_filemode_false_is_neither_modified_nor_lost() {
    let repo = TestRepo::new();
    let seen = repo.home().join("seen.txt");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = \"cat a.txt b.txt > {}; git status --short >> {}\" }} ]\n",
        seen.display(),
        seen.display()
    ));
    repo.write("a.txt", "a\n")
        .write("b.txt", "b\n")
        .write("plain.sh", "echo plain\n")
        .write("tool.sh", "echo tool\n");
    let exec = repo.path().join("tool.sh");
    std::fs::set_permissions(&exec, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.commit_all("one");
    repo.git(&["config", "core.fileMode", "false"]);
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    // Modes only: +x on a file tracked without it, -x on one tracked with
    // it; real changes beside them, staged and not.
    let plain = repo.path().join("plain.sh");
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exec, std::fs::Permissions::from_mode(0o644)).unwrap();
    repo.stage("a.txt", "a staged\n");
    repo.write("a.txt", "a staged\nand unstaged\n");
    repo.write("b.txt", "b unstaged\n");
    let before = snapshot(&repo);

    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["diagnostics"], serde_json::json!([]), "{v:#}");
    assert_eq!(v["notes"], serde_json::json!([]), "{v:#}");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "a staged\nb\nM  a.txt\n"
    );
    assert_eq!(snapshot(&repo), before);

    let run = git_pushing(&repo, &["commit", "-qm", "two"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "a staged\n");
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode(&plain) & 0o777, 0o755);
    assert_eq!(mode(&exec) & 0o777, 0o644);
    assert_eq!(repo.read("a.txt"), "a staged\nand unstaged\n");
    assert_eq!(repo.read("b.txt"), "b unstaged\n");
    // The modes stay git's as committed: nothing staged them.
    assert_eq!(
        repo.git(&["ls-files", "--stage", "plain.sh", "tool.sh"])
            .lines()
            .map(|l| &l[..6])
            .collect::<Vec<_>>(),
        ["100644", "100755"]
    );
}

/// A repository with `dir/`, `out/` and `deep/x/` committed, then made a
/// sparse checkout of `dir/` (and the files at the top) by `set`, with a
/// staged change in `dir/in.txt`, unstaged changes on top of it and in
/// `top.txt`, and `dir/gone.txt` deleted; the check `look` writes what it
/// finds of the directories and files to the file returned with it.
fn sparse(set: &[&str]) -> (TestRepo, std::path::PathBuf) {
    let repo = TestRepo::new();
    let seen_file = repo.home().join("seen.txt");
    let seen = seen_file.display();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"ls -d out deep dir/gone.txt > {seen} 2>/dev/null; cat dir/in.txt top.txt >> {seen}\" }} ]\n"
    ));
    repo.write("dir/in.txt", "in\n")
        .write("dir/gone.txt", "gone\n")
        .write("out/out.txt", "out\n")
        .write("deep/x/d.txt", "deep\n")
        .write("top.txt", "top\n");
    repo.commit_all("one");
    let mut args = vec!["sparse-checkout", "set"];
    args.extend_from_slice(set);
    repo.git(&args);
    assert!(!repo.exists("out") && !repo.exists("deep"), "{set:?}");
    repo.stage("dir/in.txt", "in staged\n");
    repo.write("dir/in.txt", "in staged\nin unstaged\n");
    repo.write("top.txt", "top unstaged\n");
    std::fs::remove_file(repo.path().join("dir/gone.txt")).unwrap();
    (repo, seen_file)
}

#[test]
fn a_sparse_checkout_keeps_the_files_outside_it_out_and_protects_those_inside() {
    for set in [
        &["--cone", "dir"][..],
        &["--no-cone", "/*", "!/out/", "!/deep/"][..],
    ] {
        let (repo, seen) = sparse(set);
        assert_eq!(repo.phasegate(&["install"]).code, 0);
        let before = snapshot(&repo);
        let flags = repo.git(&["ls-files", "-t"]);
        assert!(flags.contains("S out/out.txt") && flags.contains("S deep/x/d.txt"));

        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{set:?}: {v:#}");
        assert_eq!(v["diagnostics"], serde_json::json!([]), "{set:?}: {v:#}");
        // The checks saw the staged content inside, the deleted file at
        // its staged content, and nothing of what the checkout leaves out.
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            "dir/gone.txt\nin staged\ntop\n",
            "{set:?}"
        );
        assert_eq!(snapshot(&repo), before, "{set:?}");
        assert_eq!(repo.git(&["ls-files", "-t"]), flags, "{set:?}");

        let run = git_pushing(&repo, &["commit", "-qm", "two"]);
        assert_eq!(run.code, 0, "{set:?}: {run:?}");
        assert_eq!(repo.git(&["show", "HEAD:dir/in.txt"]), "in staged\n");
        assert_eq!(repo.git(&["show", "HEAD:out/out.txt"]), "out\n");
        assert!(!repo.exists("out") && !repo.exists("deep"), "{set:?}");
        assert!(!repo.exists("dir/gone.txt"), "{set:?}");
        assert_eq!(repo.read("dir/in.txt"), "in staged\nin unstaged\n");
        assert_eq!(repo.read("top.txt"), "top unstaged\n");
        assert_eq!(repo.git(&["ls-files", "-t"]), flags, "{set:?}");
        assert_eq!(
            repo.git(&["status", "--short"]),
            " D dir/gone.txt\n M dir/in.txt\n M top.txt\n",
            "{set:?}"
        );
    }
}
