//! Unstaged changes protected under git's content filters, index flags and a full disk.

use crate::protect_hostile::{in_full, PASSING};
use crate::support::{Run, TestRepo};

/// `protect_hostile::on_small_fs`, with `a.txt` changed again unstaged
/// (`staged`, `unstaged`) beside `big.txt`'s unstaged changes, the script
/// run without `-e`, and `paused`, which waits for a run started with
/// `PHASEGATE_TEST_PAUSE_AT` to reach its pause.
pub(crate) fn on_small_fs(repo: &TestRepo, size: &str, config: &str, script: &str) -> Option<Run> {
    crate::protect_hostile::on_small_fs(
        repo,
        size,
        config,
        &format!(
            r"paused() {{ while [ ! -e .git/phasegate/paused ]; do sleep 0.01; done; rm .git/phasegate/paused; }}
printf 'staged\nunstaged\n' > a.txt
set +e
{script}"
        ),
    )
}

/// A script's start: a run killed (SIGKILL) once its checks are done,
/// with the unstaged changes still set aside for the next to restore.
pub(crate) const KILLED: &str = r#"PHASEGATE_TEST_PAUSE_AT=checks-done "$2" run >/dev/null 2>&1 & pid=$!
paused; kill -9 $pid; wait $pid
"#;

/// What the script prints after a run: whether the unstaged changes are
/// as they were, and what is left under `protect/`.
pub(crate) const AFTER: &str = r#"cmp big.txt "$HOME/big.before" && echo "big.txt kept"
[ "$(cat a.txt)" = "$(printf 'staged\nunstaged')" ] && echo "a.txt kept"
[ "$(git show :a.txt)" = staged ] && echo "staged kept"
echo "left: $(ls .git/phasegate/protect | grep -v '^lock$' | tr '\n' ' ')"
"#;

#[test]
fn a_checks_version_kept_aside_takes_none_of_the_space_held_for_the_unstaged_changes() {
    // A formatter rewrites a file that has unstaged changes, and a build
    // fills the disk: the user's changes win, and the formatter's version
    // is kept whole. Copied, it took the space held for writing the
    // changes back: the copy was cut short, and the run stopped.
    let repo = TestRepo::new();
    let config = r#"[commands]

[phases.implementation]
checks = [{ name = "fill", command = "head -c 600000 /dev/urandom > a.txt; cp a.txt \"$HOME/a.check\"; cat /dev/zero > fill; true", shell = true }]
"#;
    let Some(run) = on_small_fs(
        &repo,
        "2m",
        config,
        &format!(
            "code=0; \"$2\" run || code=$?\necho \"exit $code\"\n[ -s fill ] && echo filled\ncmp .git/phasegate/runs/*/dropped/a.txt \"$HOME/a.check\" && echo \"check's version kept\"\n{AFTER}"
        ),
    ) else {
        return;
    };
    in_full(
        &run.stdout,
        "exit 1\nfilled\ncheck's version kept\nbig.txt kept\na.txt kept\nstaged kept\nleft: \n",
        &run,
    );
    in_full(&run.stdout, "files were modified by `fill`: a.txt", &run);
    assert!(!run.stderr.contains("failed to keep"), "{run:?}");
}

#[test]
fn a_write_back_a_full_disk_cut_short_is_finished_by_restore_not_kept_as_someone_s_change() {
    // A killed run is being finished; the disk fills up after `a.txt` is
    // back, and `big.txt` cannot be written whole. Its half-written bytes
    // were taken by the next restore for a change someone made after the
    // kill: kept aside, and said so.
    let repo = TestRepo::new();
    let script = r#"PHASEGATE_TEST_PAUSE_AT=recovering "$2" restore & pid=$!
paused; fill "$1" 0; kill -INT $pid
code=0; wait $pid || code=$?
echo "first restore $code"
rm "$1/filler"
code=0; "$2" restore || code=$?
echo "second restore $code"
[ -e .git/phasegate/kept ] && echo "kept: $(ls -R .git/phasegate/kept | tr '\n' ' ')"
"#;
    let Some(run) = on_small_fs(&repo, "4m", PASSING, &format!("{KILLED}{script}{AFTER}")) else {
        return;
    };
    in_full(&run.stdout, "first restore 3\n", &run);
    in_full(
        &run.stderr,
        "big.txt`: its file system is full (no space left on the device",
        &run,
    );
    in_full(
        &run.stdout,
        "restored the unstaged changes of:\n  a.txt\n  big.txt\nsecond restore 0\nbig.txt kept\na.txt kept\nstaged kept\nleft: \n",
        &run,
    );
    assert!(!run.stdout.contains("changed after"), "{run:?}");
}

#[test]
fn a_failure_after_the_checks_says_the_unstaged_changes_are_back_when_they_are() {
    // A check stages its change to a file with unstaged changes and leaves
    // git's index lock behind: its staging cannot be undone, the run stops,
    // and the changes are written back all the same. The error sent the
    // user to `phasegate restore`, which had nothing to restore.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"fmt\", shell = true, command = \"echo formatted > a.txt && git add a.txt && touch .git/index.lock\" } ]\n",
    );
    repo.write("a.txt", "committed\n");
    repo.commit_all("one");
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "staged\nunstaged\n");
    let (code, v) = repo.verdict(&[]);
    std::fs::remove_file(repo.path().join(".git/index.lock")).unwrap();
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the index is locked"), "{message}");
    assert!(
        message.ends_with("; your unstaged changes are back in the work tree"),
        "{message}"
    );
    assert!(!message.contains("phasegate restore"), "{message}");
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    let restore = repo.phasegate(&["restore"]);
    assert_eq!(restore.code, 0, "{restore:?}");
    assert!(restore.stdout.contains("nothing to restore"), "{restore:?}");
}
