//! Protection of unstaged changes and snapshot runs at the edges.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::TestRepo;

/// A time long past, in whole seconds, for files whose stat data a test
/// lines up with the index's.
const LONG_AGO: u64 = 1_700_000_000;

fn set_mtime(path: &Path, when: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// A file beside the repository (never in its work tree), removed first.
fn outside(repo: &TestRepo, name: &str) -> PathBuf {
    let path = repo
        .path()
        .parent()
        .unwrap()
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// `same.txt` staged as `AAAA` with `BBBB` unstaged (the same size), last
/// written at `LONG_AGO`; `phasegate.toml` is kept out of `git status`.
fn same_size_change(check: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("same.txt", "aaaa\n").commit_all("base");
    repo.stage("same.txt", "AAAA\n").write("same.txt", "BBBB\n");
    set_mtime(
        &repo.path().join("same.txt"),
        UNIX_EPOCH + Duration::from_secs(LONG_AGO),
    );
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, command = \"{check}\" }} ]\n"
    ));
    repo
}

#[test]
fn an_unstaged_change_stays_visible_to_git_when_a_check_refreshed_the_index() {
    // The check refreshes the index (`git status` does, as a build script's
    // `git describe --dirty` does) while the file holds its staged content,
    // stamped with the second of the user's last edit: a commit made in
    // the second the change was. Given its old time back, the restored
    // change matched the stat data git recorded then, and `git status`,
    // `git diff` and `git add` no longer saw it: one `git checkout` from loss.
    for check_stat in [None, Some("minimal")] {
        let repo = same_size_change(&format!(
            "touch -d @{LONG_AGO} same.txt && git status --porcelain > /dev/null"
        ));
        if let Some(value) = check_stat {
            repo.git(&["config", "core.checkStat", value]);
        }
        let status = repo.git(&["status", "--porcelain"]);
        assert_eq!(status, "MM same.txt\n");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{check_stat:?}: {v:#}");
        assert_eq!(repo.read("same.txt"), "BBBB\n");
        assert_eq!(
            repo.git(&["status", "--porcelain"]),
            status,
            "core.checkStat {check_stat:?}: git must still see the unstaged change"
        );
        assert!(repo.git(&["diff"]).contains("+BBBB"), "{check_stat:?}");
    }
}

#[test]
fn a_restored_file_is_newer_than_what_the_checks_built_from_its_staged_content() {
    // A build (make, cargo) rebuilds what is older than its sources: with
    // its old time back, the user's content looked older than the output
    // the check built from the staged content, which a build kept.
    let repo = same_size_change("cp same.txt $HOME/built.out");
    let built = repo.home().join("built.out");
    let _ = std::fs::remove_file(&built);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(std::fs::read_to_string(&built).unwrap(), "AAAA\n");
    assert_eq!(repo.read("same.txt"), "BBBB\n");
    assert!(
        mtime(&repo.path().join("same.txt")) > mtime(&built),
        "the restored file must be newer than the check's output"
    );
    let _ = std::fs::remove_file(built);
}

#[test]
fn skip_worktree_and_assume_unchanged_files_are_checked_as_staged_and_come_back() {
    // git commits the staged content of these files whatever the work tree
    // holds: checks that read the local version judged what is not
    // committed (a broken file staged, a working one kept beside it).
    let repo = TestRepo::new();
    for name in ["sw.txt", "au.txt", "plain.txt", "gone.txt"] {
        repo.write(name, &format!("{name} committed\n"));
    }
    repo.commit_all("base");
    for name in ["sw.txt", "au.txt", "plain.txt"] {
        repo.stage(name, &format!("{name} staged\n"));
    }
    repo.write("sw.txt", "sw.txt local\n")
        .write("au.txt", "au.txt local, longer\n");
    repo.git(&["update-index", "--skip-worktree", "sw.txt", "gone.txt"]);
    repo.git(&["update-index", "--assume-unchanged", "au.txt"]);
    // Left out of the work tree, as a sparse checkout leaves a file.
    std::fs::remove_file(repo.path().join("gone.txt")).unwrap();
    let seen = outside(&repo, "flagged-seen");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat sw.txt au.txt plain.txt > {}; test ! -e gone.txt\" }} ]\n",
        seen.display()
    ));
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    let flags = repo.git(&["ls-files", "-v"]);
    let status = repo.git(&["status", "--porcelain"]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "sw.txt staged\nau.txt staged\nplain.txt staged\n",
        "the checks see what will be committed"
    );
    assert_eq!(repo.read("sw.txt"), "sw.txt local\n");
    assert_eq!(repo.read("au.txt"), "au.txt local, longer\n");
    assert!(!repo.exists("gone.txt"));
    assert_eq!(repo.git(&["ls-files", "-v"]), flags, "the flags stay");
    assert_eq!(repo.git(&["status", "--porcelain"]), status);
    let _ = std::fs::remove_file(seen);
}

#[test]
fn a_check_in_a_snapshot_of_a_named_repository_never_writes_its_index_or_branch() {
    // The "dotfiles" layout: a bare repository and a work tree apart, named
    // with `GIT_DIR` and `GIT_WORK_TREE`, which the checks get too. In a
    // snapshot they named the user's repository, with its index and
    // branch: a check's `git add` staged a file the user never had, its
    // `git commit` moved the branch.
    let home = TestRepo::plain();
    let store = TestRepo::plain();
    let git_dir = store.path().join("cfg");
    let env = [
        ("GIT_DIR", git_dir.to_string_lossy().into_owned()),
        ("GIT_WORK_TREE", home.path().to_string_lossy().into_owned()),
    ];
    let dot = |args: &[&str]| {
        let mut git = home.command("git");
        git.envs(env.iter().map(|(k, v)| (k, v)))
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args);
        let out = git.output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let init = home
        .command("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&git_dir)
        .status()
        .unwrap();
    assert!(init.success());
    dot(&["config", "user.name", "t"]);
    dot(&["config", "user.email", "t@example.com"]);
    home.write(".vimrc", "one\n").config(
        "[gate]\nisolation = \"snapshot\"\n[phases.implementation]\nchecks = [ { name = \"git\", shell = true, command = \"echo gen > generated.txt && git add generated.txt && git commit -qm from-the-check\" } ]\n",
    );
    dot(&["add", ".vimrc", "phasegate.toml"]);
    dot(&["commit", "-qm", "one"]);
    home.write(".vimrc", "two\n");
    dot(&["add", ".vimrc"]);
    let index = dot(&["ls-files", "--stage"]);
    let branch = dot(&["rev-parse", "main"]);

    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let run = home.phasegate_with(&["run", "--format", "json"], &env);
    let v = run.json();
    assert_eq!(v["selection"]["mode"], "staged", "{v:#}");
    assert_eq!(
        crate::support::check(&v, "git")["status"],
        "passed",
        "{v:#}"
    );
    assert_eq!(
        dot(&["ls-files", "--stage"]),
        index,
        "the index is the user's"
    );
    assert_eq!(dot(&["rev-parse", "main"]), branch, "the branch stays");
    assert!(!home.exists("generated.txt"));
}

#[test]
fn a_file_a_check_leaves_where_a_directory_was_goes_with_the_dropped_files() {
    // The check turns the directory of a file with unstaged changes into a
    // file: the restore stopped there, leaving that file's changes and
    // those of every file after it in the journal, the files at their
    // staged content.
    let repo = TestRepo::new();
    repo.write("d/x.txt", "x\n").write("z.txt", "z\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"gen\", shell = true, command = \"rm -rf d && echo generated > d\" } ]\n");
    repo.commit_all("base");
    repo.stage("d/x.txt", "x staged\n")
        .stage("z.txt", "z staged\n")
        .write("d/x.txt", "x unstaged\n")
        .write("z.txt", "z unstaged\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "files were modified: {v:#}");
    assert_eq!(repo.read("d/x.txt"), "x unstaged\n");
    assert_eq!(repo.read("z.txt"), "z unstaged\n");
    assert_eq!(crate::git::journals_left(&repo), 0, "nothing is left aside");
    let run_id = v["run_id"].as_str().unwrap();
    let dropped = repo
        .path()
        .join(".git/phasegate/runs")
        .join(run_id)
        .join("dropped/d");
    assert_eq!(
        std::fs::read_to_string(dropped).unwrap(),
        "generated\n",
        "the check's file is kept"
    );
}
