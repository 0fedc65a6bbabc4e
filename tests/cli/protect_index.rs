//! A check that leaves git's index locked or rewritten while unstaged changes are hidden.

use crate::protect_filters::{on_small_fs, AFTER, KILLED};
use crate::protect_hostile::{in_full, PASSING};
use crate::support::{git_pushing, TestRepo};

fn commits(repo: &TestRepo) -> usize {
    repo.git(&["rev-list", "--all", "--count"])
        .trim()
        .parse()
        .unwrap_or(0)
}

/// The first command of `text` quoted in backticks that starts with `start`.
fn quoted_command<'t>(text: &'t str, start: &str) -> &'t str {
    let from = text
        .find(&format!("`{start}"))
        .unwrap_or_else(|| panic!("no `{start}…` in {text}"))
        + 1;
    let len = text[from..].find('`').unwrap();
    &text[from..from + len]
}

#[test]
fn a_check_that_stages_and_leaves_the_index_locked_is_named_with_the_lock_and_how_to_undo_it() {
    // A formatter runs `git add` on a file with unstaged changes and is
    // killed, leaving git's lock: phasegate cannot undo that staging. The
    // error was a bare "the index is locked": neither the lock's file, nor
    // the check, nor that the check's staging stayed, nor what to do.
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [
  { name = "fmt", shell = true, command = "echo formatted > a.txt && git add a.txt && touch .git/index.lock && kill -9 $$" },
  { name = "ok", command = "true" },
]
"#,
    );
    repo.write("a.txt", "committed\n");
    repo.commit_all("one");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "staged\nunstaged\n");
    let staged = repo.git(&["rev-parse", ":a.txt"]);

    let commit = git_pushing(&repo, &["commit", "-qm", "two"]);
    assert_ne!(commit.code, 0, "{commit:?}");
    assert_eq!(commits(&repo), 1, "nothing was committed");
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    let lock = repo.path().join(".git/index.lock");
    let said = commit.stderr.replace('\n', " ");
    for part in [
        format!("`{}` was left behind", lock.display()),
        "most likely by the check `fmt` (killed by signal 9)".to_string(),
        "What they staged of a.txt stays in the index".to_string(),
        "phasegate undid none of it".to_string(),
        format!("`rm {}`", lock.display()),
        format!(
            "git update-index --cacheinfo 100644,{},a.txt",
            staged.trim()
        ),
        "your unstaged changes are back in the work tree".to_string(),
    ] {
        assert!(said.contains(&part), "`{part}` not in {commit:?}");
    }
    assert!(!said.contains("`ok`"), "{commit:?}");
    assert!(!said.contains("phasegate restore"), "{commit:?}");
    assert_eq!(repo.git(&["show", ":a.txt"]), "formatted\n");

    // What it says to do puts back what was staged.
    std::fs::remove_file(&lock).unwrap();
    let restage = quoted_command(&said, "git update-index");
    let args: Vec<&str> = restage.split(' ').skip(1).collect();
    repo.git(&args);
    assert_eq!(repo.git(&["show", ":a.txt"]), "staged\n");
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
}

#[test]
fn restore_takes_its_lock_on_a_full_disk_where_the_holder_s_pid_cannot_be_written() {
    // A killed run's changes wait to be written back, and the disk is
    // full: the space held for the write-back is there, but writing the
    // pid into the emptied lock file needs a block of its own. Taking the
    // lock failed on that, and nothing could bring the changes back until
    // the user freed space.
    let repo = TestRepo::new();
    let script = r#": > .git/phasegate/protect/lock
fill "$1" 0
printf x >> .git/phasegate/probe 2>/dev/null || echo full
code=0; "$2" restore || code=$?
echo "restore $code"
"#;
    let Some(run) = on_small_fs(&repo, "4m", PASSING, &format!("{KILLED}{script}{AFTER}")) else {
        return;
    };
    in_full(
        &run.stdout,
        "full\nrestored the unstaged changes of:\n  a.txt\n  big.txt\nrestore 0\nbig.txt kept\na.txt kept\nstaged kept\nleft: \n",
        &run,
    );
}

#[test]
fn a_checks_version_that_cannot_be_kept_is_said_gone_not_only_that_the_changes_are_back() {
    // A formatter rewrites a file that has unstaged changes; the runs'
    // directory is on another, full file system, so its version cannot be
    // moved there, nor copied. The user's changes come back over it, and
    // the error said only that: not that the formatter's version is gone.
    let repo = TestRepo::new();
    let config = r#"[commands]

[phases.implementation]
checks = [{ name = "fmt", command = "head -c 600000 /dev/urandom > a.txt", shell = true }]
"#;
    let script = r#"mkdir -p .git/phasegate/runs
mount -t tmpfs -o size=256k phasegate-runs .git/phasegate/runs || exit 98
code=0; "$2" run --format json > "$HOME/verdict.json" || code=$?
echo "exit $code"
"#;
    let Some(run) = on_small_fs(&repo, "4m", config, &format!("{script}{AFTER}")) else {
        return;
    };
    in_full(
        &run.stdout,
        "exit 3\nbig.txt kept\na.txt kept\nstaged kept\nleft: \n",
        &run,
    );
    let verdict: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo.home().join("verdict.json")).unwrap()).unwrap();
    let message = verdict["error"]["message"].as_str().unwrap_or_default();
    for part in [
        "dropped/a.txt`: its file system is full",
        "the checks' versions of a.txt could not be kept, and are gone: your unstaged changes were written back over them",
        "Run the checks again to get them back",
    ] {
        assert!(message.contains(part), "`{part}` not in {message}");
    }
}

#[test]
fn a_check_that_deletes_the_state_directory_takes_none_of_the_unstaged_changes() {
    // A clean-up step removes `.git/phasegate/` (where the copies of the
    // unstaged changes wait) while the checks run. The changes were lost,
    // and the error said they were back in the work tree.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"clean\", shell = true, command = \"rm -rf .git/phasegate\" } ]\n",
    );
    repo.write("a.txt", "committed\n");
    repo.commit_all("one");
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "staged\nunstaged\n");
    let run = repo.phasegate(&["run"]);
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n", "{run:?}");
    assert_eq!(repo.git(&["show", ":a.txt"]), "staged\n");
    assert!(!run.stderr.contains("saved copy"), "{run:?}");
    assert_eq!(run.code, 0, "{run:?}");
    let restore = repo.phasegate(&["restore"]);
    assert!(restore.stdout.contains("nothing to restore"), "{restore:?}");
}
