//! What checks do to the index, its lock and the stash while unstaged changes are set aside.

use crate::git::snapshot;
use crate::support::TestRepo;

/// A repository whose `a.txt` is staged, with an unstaged change on top
/// when `unstaged`, and whose one check `chk` runs `command` in a shell.
fn staged_with(command: &str, unstaged: bool) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"chk\", shell = true, command = {command:?} }} ]\n"
    ));
    repo.write("a.txt", "committed\n").write("b.txt", "b\n");
    repo.commit_all("one");
    repo.stage("a.txt", "staged\n");
    if unstaged {
        repo.write("a.txt", "staged\r\nunstaged \u{0}\n");
    }
    repo
}

/// The verdict's notes, one string.
fn notes(verdict: &serde_json::Value) -> String {
    verdict["notes"].to_string()
}

/// Whether git's index is one file: no split index's `link` extension.
fn index_whole(repo: &TestRepo) -> bool {
    let index = std::fs::read(repo.path().join(".git/index")).unwrap();
    !index.windows(4).any(|w| w == b"link")
}

#[test]
fn a_check_that_splits_the_index_is_named_and_the_index_merged_back() {
    // libgit2 cannot read a split index: a check that made one stopped the
    // run as incomplete with "unsupported mandatory extension: 'link'",
    // naming neither the check nor what to do.
    for (command, config_left) in [
        ("git update-index --split-index", false),
        ("git config core.splitIndex true && git add b.txt", true),
    ] {
        for unstaged in [true, false] {
            let repo = staged_with(command, unstaged);
            let before = snapshot(&repo);
            let (code, v) = repo.verdict(&[]);
            let case = format!("{command}, unstaged: {unstaged}");
            assert_eq!(code, 0, "{case}: {v:#}");
            assert_eq!(snapshot(&repo), before, "{case}");
            assert!(index_whole(&repo), "{case}");
            let notes = notes(&v);
            assert!(
                notes.contains("`chk` rewrote the index as a split index")
                    && notes.contains("git update-index --no-split-index"),
                "{case}: {notes}"
            );
            assert_eq!(
                notes.contains("git config core.splitIndex false"),
                config_left,
                "{case}: {notes}"
            );
        }
    }
}

#[test]
fn a_check_that_splits_the_index_and_stages_a_file_is_still_caught() {
    // With the index merged back, what the check staged is seen.
    for unstaged in [true, false] {
        let repo = staged_with(
            "echo generated >> b.txt && git -c core.splitIndex=true add b.txt",
            unstaged,
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{v:#}");
        assert!(
            v["diagnostics"]
                .to_string()
                .contains("files were modified by `chk`: b.txt"),
            "{v:#}"
        );
        if unstaged {
            assert_eq!(repo.read("a.txt"), "staged\r\nunstaged \u{0}\n");
        }
    }
}

#[test]
fn an_index_lock_a_check_leaves_is_named_in_the_verdict_and_never_removed() {
    // The run passed without a word, and the user's next `git commit`
    // failed with git's "Unable to create index.lock".
    for unstaged in [true, false] {
        let repo = staged_with("touch .git/index.lock", unstaged);
        let before = snapshot(&repo);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{v:#}");
        let lock = repo.path().join(".git/index.lock");
        assert!(lock.exists(), "a lock a live git may hold stays");
        let notes = notes(&v);
        assert!(
            notes.contains(&format!(
                "`chk` left git's index lock `{}` behind",
                lock.display()
            )) && notes.contains(&format!("`rm {}`", lock.display())),
            "{notes}"
        );
        std::fs::remove_file(&lock).unwrap();
        assert_eq!(snapshot(&repo), before);
    }
    // A lock that was there before the checks is not theirs to be named.
    let repo = staged_with("true", true);
    repo.write(".git/index.lock", "");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(!notes(&v).contains("index lock"), "{v:#}");
}

#[test]
fn a_check_that_stashes_leaves_the_unstaged_changes_whole_and_its_stash_named() {
    for (command, left) in [
        ("git stash -q", Some("git stash show -p stash@{0}")),
        (
            "git stash -q --keep-index",
            Some("git stash show -p stash@{0}"),
        ),
        (
            "echo new > untracked.txt && git stash -q -u",
            Some("git stash show -p --include-untracked stash@{0}"),
        ),
        ("git stash -q && git stash pop -q --index", None),
    ] {
        let repo = staged_with(command, true);
        // A stash of the user's own, which no check touches.
        repo.write("b.txt", "users stash\n");
        repo.git(&["stash", "push", "-q", "--", "b.txt"]);
        let theirs = repo.git(&["rev-parse", "stash@{0}"]);
        let (_, v) = repo.verdict(&[]);
        assert_eq!(
            repo.read("a.txt"),
            "staged\r\nunstaged \u{0}\n",
            "{command}"
        );
        assert_eq!(repo.git(&["show", ":a.txt"]), "staged\n", "{command}");
        // A stash entry left is a finding (see `protect_stash`).
        let notes = format!("{} {}", notes(&v), v["diagnostics"]);
        match left {
            Some(shown) => {
                assert!(
                    notes.contains(
                        "`chk` stashed work out of the work tree: it left a stash entry, stash@{0}"
                    ) && notes.contains(shown),
                    "{command}: {notes}"
                );
                assert_eq!(repo.git(&["rev-parse", "stash@{1}"]), theirs, "{command}");
            }
            None => {
                assert!(!notes.contains("stash"), "{command}: {notes}");
                assert_eq!(repo.git(&["rev-parse", "stash@{0}"]), theirs, "{command}");
            }
        }
    }
}

#[test]
fn a_check_that_pops_the_users_own_stash_says_how_to_get_it_back() {
    // `git stash pop` with nothing of its own stashed takes the user's.
    let repo = staged_with("git stash pop -q", true);
    repo.write("b.txt", "users stash\n");
    repo.git(&["stash", "push", "-q", "--", "b.txt"]);
    let theirs = repo.git(&["rev-parse", "stash@{0}"]);
    let (_, v) = repo.verdict(&[]);
    assert_eq!(repo.read("a.txt"), "staged\r\nunstaged \u{0}\n");
    let notes = notes(&v);
    assert!(
        notes.contains(&format!(
            "`chk` took the stash entry {} off the stash",
            &theirs[..10]
        )) && notes.contains(&format!("`git stash apply {}`", theirs.trim())),
        "{notes}"
    );
}

#[test]
fn a_killed_run_whose_check_split_the_index_is_still_restored() {
    // The restore compares the files with the index: a split one stopped
    // it, and every later run, with libgit2's bare error.
    let repo = staged_with("git update-index --split-index", true);
    let before = snapshot(&repo);
    repo.kill_run_at("checks-done", &["run"]);
    assert_eq!(repo.read("a.txt"), "staged\n");
    let restore = repo.phasegate(&["restore"]);
    assert_eq!(restore.code, 0, "{restore:?}");
    assert_eq!(snapshot(&repo), before);
    assert!(index_whole(&repo));
}

#[test]
fn a_split_index_that_cannot_be_merged_back_names_the_check_and_the_way_out() {
    for unstaged in [true, false] {
        let repo = staged_with(
            "git update-index --split-index && touch .git/index.lock",
            unstaged,
        );
        let run = repo.phasegate(&["run"]);
        assert_eq!(run.code, 3, "{run:?}");
        let said = run.stderr.replace('\n', " ");
        for part in [
            "`chk` rewrote it as a split index",
            "Unable to create",
            "git config core.splitIndex false && git update-index --no-split-index",
        ] {
            assert!(said.contains(part), "`{part}` not in {run:?}");
        }
        assert!(!said.contains("Another git process"), "{run:?}");
        if unstaged {
            assert!(said.contains("your unstaged changes are back"), "{run:?}");
            assert_eq!(repo.read("a.txt"), "staged\r\nunstaged \u{0}\n");
        }
    }
}

/// The extended attribute `name` of `path`, if it has one.
fn xattr(path: &std::path::Path, name: &str) -> Option<Vec<u8>> {
    let mut value = vec![0u8; 256];
    let n = rustix::fs::getxattr(path, name, &mut value[..]).ok()?;
    value.truncate(n);
    Some(value)
}

#[test]
fn a_file_written_afresh_gets_its_extended_attributes_back() {
    // A file whose unstaged change is its mode goes through git to its
    // staged content: removed and made again, it lost its extended
    // attributes (POSIX ACLs are some) for good. So did a killed run's
    // restore.
    for killed in [false, true] {
        afresh_keeps_xattrs(killed);
    }
}

fn afresh_keeps_xattrs(killed: bool) {
    let repo = staged_with("true", true);
    let a = repo.path().join("a.txt");
    let mut mode = std::fs::metadata(&a).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(&a, mode).unwrap();
    if rustix::fs::setxattr(&a, "user.origin", b"mine", rustix::fs::XattrFlags::empty()).is_err() {
        // A file system without user extended attributes has nothing to lose.
        return;
    }
    let before = snapshot(&repo);
    if killed {
        repo.kill_run_at("checks-done", &["run"]);
        assert_eq!(xattr(&a, "user.origin"), None, "written afresh");
        assert_eq!(repo.phasegate(&["restore"]).code, 0);
    } else {
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{v:#}");
    }
    assert_eq!(snapshot(&repo), before);
    assert_eq!(
        xattr(&a, "user.origin").as_deref(),
        Some(&b"mine"[..]),
        "killed: {killed}"
    );
}
