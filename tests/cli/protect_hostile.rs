//! Unstaged changes set aside on a file system that fills up: before they
//! are saved, while they are saved, and while the checks run.

use crate::support::{output, Run, TestRepo, BIN};

/// `script` run by `sh -e` in a mount namespace of its own, where `dir` is
/// a new, empty file system of `size` (a tmpfs, as `mount -o size=` takes
/// it), with `$1` naming `dir` and `$2` the phasegate under test. The
/// script starts in `$1/r`, a repository whose `a.txt` is committed, then
/// staged with a change, and whose `big.txt` (committed small) has about
/// 400 KB of unstaged changes, a copy of which is in `$HOME/big.before`.
/// `fill N` fills the file system up to its last N KiB. None where no such
/// namespace can be made (no `unshare`, or user namespaces turned off).
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
pub(crate) fn on_small_fs(repo: &TestRepo, size: &str, config: &str, script: &str) -> Option<Run> {
    let dir = repo.home().join("small-fs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(repo.home().join("phasegate.toml"), config).unwrap();
    let whole = format!(
        r#"mount -t tmpfs -o size={size} phasegate-test "$1" 2>/dev/null || exit 97
echo mounted
fill() {{ avail=$(df -k --output=avail "$1" | tail -n 1); head -c $(( (avail - $2) * 1024 )) /dev/zero > "$1/filler" || true; }}
git init -q -b main "$1/r"
cd "$1/r"
git config user.email test@example.com
git config user.name Test
cp "$HOME/phasegate.toml" phasegate.toml
echo committed > a.txt
echo small > big.txt
git add -A
git commit -qm one
echo staged > a.txt
git add a.txt
head -c 300000 /dev/urandom | base64 > big.txt
cp big.txt "$HOME/big.before"
{script}"#
    );
    let run = repo
        .command("unshare")
        .args(["--map-root-user", "--mount", "sh", "-ec", &whole, "sh"])
        .arg(&dir)
        .arg(BIN)
        .output()
        .ok()
        .map(|out| output(&out))?;
    if !run.stdout.starts_with("mounted\n") {
        eprintln!("no small file system can be mounted here, not checked: {run:?}");
        return None;
    }
    Some(run)
}

pub(crate) const PASSING: &str = r#"[commands]

[phases.implementation]
checks = [{ name = "ok", command = "true" }]
"#;

/// What the script prints after a run: its exit code, whether the
/// unstaged changes and the staged file are as they were, and what is
/// left under `protect/`.
const AFTER: &str = r#"echo "exit $code"
cmp big.txt "$HOME/big.before" && echo "unstaged kept"
[ "$(git show :a.txt)" = staged ] && [ "$(cat a.txt)" = staged ] && echo "staged kept"
echo "left: $(ls .git/phasegate/protect | grep -v '^lock$' | tr '\n' ' ')"
"#;

pub(crate) fn in_full(whole: &str, part: &str, run: &Run) {
    assert!(whole.contains(part), "`{part}` not in {run:?}");
}

#[test]
fn a_disk_too_full_to_save_the_unstaged_changes_says_so_and_touches_nothing() {
    let repo = TestRepo::new();
    let Some(run) = on_small_fs(
        &repo,
        "2m",
        PASSING,
        &format!("fill \"$1\" 100\ncode=0; \"$2\" run || code=$?\n{AFTER}"),
    ) else {
        return;
    };
    in_full(
        &run.stdout,
        "exit 3\nunstaged kept\nstaged kept\nleft: \n",
        &run,
    );
    // The copy could not be written: that is what is said, not that the
    // user's file could not be read.
    in_full(&run.stderr, "failed to write `", &run);
    in_full(&run.stderr, "/.git/phasegate/protect/", &run);
    in_full(&run.stderr, "its file system is full", &run);
    in_full(
        &run.stderr,
        "nothing in the work tree was touched. Free some space there and run again",
        &run,
    );
    assert!(!run.stderr.contains("big.txt"), "{run:?}");
}

#[test]
fn a_disk_with_no_room_to_write_the_changes_back_is_refused_before_touching_anything() {
    let repo = TestRepo::new();
    // Room for the copy (about 400 KB), not for the copy and the space
    // writing it back may take once a check has filled the disk.
    let Some(run) = on_small_fs(
        &repo,
        "2m",
        PASSING,
        &format!("fill \"$1\" 640\ncode=0; \"$2\" run || code=$?\n{AFTER}"),
    ) else {
        return;
    };
    in_full(
        &run.stdout,
        "exit 3\nunstaged kept\nstaged kept\nleft: \n",
        &run,
    );
    in_full(
        &run.stderr,
        "failed to hold the space writing the unstaged changes back takes in `",
        &run,
    );
    in_full(&run.stderr, "nothing in the work tree was touched", &run);
}

#[test]
fn a_check_that_fills_the_disk_still_gets_the_unstaged_changes_written_back_whole() {
    let repo = TestRepo::new();
    let config = r#"[commands]

[phases.implementation]
checks = [{ name = "fill", command = "cat /dev/zero > fill; true", shell = true }]
"#;
    let Some(run) = on_small_fs(
        &repo,
        "2m",
        config,
        &format!("code=0; \"$2\" run || code=$?\n[ -s fill ] && echo filled\n{AFTER}"),
    ) else {
        return;
    };
    in_full(&run.stdout, "filled\n", &run);
    in_full(&run.stdout, "unstaged kept\nstaged kept\nleft: \n", &run);
    assert!(!run.stderr.contains("phasegate restore"), "{run:?}");
}

/// `args` of phasegate run in `repo` as a user who is not root (root may
/// write anything, read-only or not): as uid 1000 through `setpriv` when
/// the suite runs as root, after handing it the repository. None where
/// that cannot be done.
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
fn as_a_user(repo: &TestRepo, args: &[&str]) -> Option<Run> {
    if !rustix::process::geteuid().is_root() {
        return Some(repo.phasegate(args));
    }
    // git refuses a repository someone else owns unless told it is safe.
    repo.global_git_config("[safe]\n\tdirectory = *\n");
    for dir in [repo.path(), repo.home()] {
        let owned = std::process::Command::new("chown")
            .args(["-R", "1000:1000"])
            .arg(&dir)
            .status();
        if !owned.is_ok_and(|s| s.success()) {
            eprintln!("cannot hand the repository to another user, not checked");
            return None;
        }
    }
    let run = repo
        .command("setpriv")
        .args(["--reuid", "1000", "--regid", "1000", "--clear-groups", BIN])
        .args(args)
        .output()
        .ok()
        .map(|out| output(&out));
    if run.is_none() {
        eprintln!("no `setpriv` to run phasegate as another user, not checked");
    }
    run
}

#[test]
fn a_read_only_file_in_a_read_only_directory_stops_the_run_before_anything_is_touched() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.config(PASSING);
    repo.write("docs/a.txt", "committed\n");
    repo.write("b.txt", "committed\n");
    repo.commit_all("one");
    repo.stage("docs/a.txt", "staged\n");
    repo.stage("b.txt", "staged\n");
    repo.write("docs/a.txt", "staged\nunstaged\n");
    repo.write("b.txt", "staged\nunstaged\n");
    let mode = |path: &str, mode: u32| {
        std::fs::set_permissions(
            repo.path().join(path),
            std::fs::Permissions::from_mode(mode),
        )
        .unwrap();
    };
    mode("docs/a.txt", 0o444);
    mode("b.txt", 0o444);
    mode("docs", 0o555);
    let Some(run) = as_a_user(&repo, &["run"]) else {
        mode("docs", 0o755);
        return;
    };
    mode("docs", 0o755);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "`{}` has unstaged changes, but phasegate may neither write it nor replace it in its directory `{}`, which is read-only",
            repo.path().join("docs/a.txt").display(),
            repo.path().join("docs").display()
        )) && run.stderr.contains("Nothing in the work tree was touched")
            && run.stderr.contains("chmod u+w"),
        "{run:?}"
    );
    // b.txt, read-only in a directory phasegate may write, was never
    // put at its staged content either.
    assert_eq!(repo.read("docs/a.txt"), "staged\nunstaged\n");
    assert_eq!(repo.read("b.txt"), "staged\nunstaged\n");
    assert!(!run.stderr.contains("Permission denied"), "{run:?}");
}
