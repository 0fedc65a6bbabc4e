//! What phasegate keeps under `.git/phasegate/` in a repository a group
//! shares, under a restrictive umask; and the pushes people make through
//! the pre-push hook: a branch and a tag at once, one branch to two
//! remotes, a shallow clone whose remote moved on.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::state_shared::{everything_under, run_as};
use crate::support::{
    docs_files, git_pushing, output, recorded_verdicts, remote_has, rev, said, Run, TestRepo, BIN,
};

/// A check that writes over `src/a.rs`, as a formatter would.
const REWRITES: &str = r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ { name = "fmt", command = "sh -c 'echo \"fn a() { formatted }\" > src/a.rs'" } ]
"#;

const PASSING: &str = r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ { name = "ok", command = "true" } ]
"#;

/// A gate that fails on any selected Markdown file holding `TODO`.
const NO_TODO: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -H TODO {files}\" } ]\n";

/// `phasegate args` in `repo` under `umask`.
fn run_under(repo: &TestRepo, umask: &str, args: &[&str]) -> Run {
    run_as(repo, None, umask, BIN, args)
}

/// `phasegate run` under `umask`, killed (SIGKILL) once paused at `step`.
fn kill_run_under(repo: &TestRepo, umask: &str, step: &str) {
    let mut run = repo.command("sh");
    run.args([
        "-c",
        &format!("umask {umask} && exec \"$@\""),
        "sh",
        BIN,
        "run",
    ]);
    repo.kill_at(step, run);
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// The directories under `dir` another member of the group cannot enter,
/// list and write (setgid, so what is made inside stays the group's),
/// with their modes.
fn dirs_not_shared(dir: &Path) -> Vec<String> {
    everything_under(dir)
        .into_iter()
        .filter(|path| path.is_dir() && !path.is_symlink())
        .filter(|path| mode(path) & 0o2070 != 0o2070)
        .map(|path| format!("{:o} {}", mode(&path), path.display()))
        .collect()
}

/// The directories under `dir` others than the owner and the group may
/// read or enter (the files in them keep the modes they had in the work
/// tree: the directories keep them from others).
fn dirs_open_to_others(dir: &Path) -> Vec<String> {
    everything_under(dir)
        .into_iter()
        .filter(|path| path.is_dir() && !path.is_symlink() && mode(path) & 0o007 != 0)
        .map(|path| format!("{:o} {}", mode(&path), path.display()))
        .collect()
}

#[test]
fn the_versions_a_restore_keeps_are_the_group_s_under_a_private_umask() {
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--shared=group"]);
    repo.config(REWRITES)
        .write("src/a.rs", "fn a() {}\n")
        .commit_all("init");
    // The check writes over a file with unstaged changes: those win, and
    // the check's version is kept with the run, under `dropped/src/`.
    repo.write("src/a.rs", "fn a() { unstaged }\n")
        .stage("b.txt", "b\n");
    let run = run_under(&repo, "077", &["run", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(repo.read("src/a.rs"), "fn a() { unstaged }\n");
    let state = repo.path().join(".git/phasegate");
    let run_id = run.json()["run_id"].as_str().unwrap().to_string();
    let dropped = state.join("runs").join(&run_id).join("dropped");
    assert_eq!(
        std::fs::read_to_string(dropped.join("src/a.rs")).unwrap(),
        "fn a() { formatted }\n"
    );

    // A run killed while the changes are aside, a file edited since: the
    // edit is kept under `kept/<run-id>/src/` before the changes come back.
    repo.config(PASSING).stage("phasegate.toml", PASSING);
    kill_run_under(&repo, "077", "checked-out");
    repo.write("src/a.rs", "fn a() { edited after the kill }\n");
    let restored = run_under(&repo, "077", &["restore"]);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert_eq!(repo.read("src/a.rs"), "fn a() { unstaged }\n");
    let kept: Vec<PathBuf> = std::fs::read_dir(state.join("kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        std::fs::read_to_string(kept[0].join("src/a.rs")).unwrap(),
        "fn a() { edited after the kill }\n"
    );

    // Another member of the group prunes the run and reads what was kept:
    // every directory is theirs to enter and write, and none is open to
    // others, as the files in them were the user's work.
    assert_eq!(dirs_not_shared(&state), Vec::<String>::new());
    for private in [
        dropped.as_path(),
        &state.join("kept"),
        &state.join("protect"),
    ] {
        assert_eq!(dirs_open_to_others(private), Vec::<String>::new());
    }
}

#[test]
fn saved_unstaged_changes_are_never_open_to_others_even_when_the_repository_is() {
    let repo = TestRepo::new();
    // `all`: git's own files are readable by everyone; saved changes are
    // not git's, and may hold what no one else should read.
    repo.git(&["init", "-q", "--shared=all"]);
    repo.config(PASSING)
        .write("secret.env", "TOKEN=1\n")
        .commit_all("init");
    repo.write("secret.env", "TOKEN=the real one\n")
        .stage("b.txt", "b\n");
    kill_run_under(&repo, "022", "checked-out");
    let protect = repo.path().join(".git/phasegate/protect");
    let held: Vec<PathBuf> = std::fs::read_dir(&protect)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(held.len(), 1, "{held:?}");
    let saved = held[0].join("saved");
    assert!(
        std::fs::read(&saved)
            .unwrap()
            .windows(8)
            .any(|w| w == b"real one"),
        "the copy is there"
    );
    // The group's, for another member's next run to bring them back;
    // nobody else's to enter or read.
    assert_eq!(mode(&held[0]), 0o2770);
    assert_eq!(mode(&saved), 0o660);
    let restored = run_under(&repo, "022", &["restore"]);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert_eq!(repo.read("secret.env"), "TOKEN=the real one\n");
}

#[test]
fn a_temporary_checkout_under_the_state_directory_leaves_it_to_the_group() {
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--shared=group"]);
    repo.config(&PASSING.replace(
        "default_phase = \"implementation\"",
        "default_phase = \"implementation\"\nisolation = \"snapshot\"",
    ))
    .write("a.txt", "a\n")
    .commit_all("init");
    repo.stage("b.txt", "b\n");
    // No cache directory can be made (a file is where it would go): the
    // checkout goes under `.git/phasegate/snapshots/`.
    std::fs::write(repo.home().join(".cache"), "not a directory\n").unwrap();
    let mut cmd = repo.command("sh");
    cmd.args([
        "-c",
        "umask 077 && exec \"$@\"",
        "sh",
        BIN,
        "run",
        "--format",
        "json",
    ])
    .env_remove("XDG_CACHE_HOME");
    let run = output(&cmd.output().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.json()["notes"]
            .to_string()
            .contains("phasegate/snapshots"),
        "{}",
        run.stdout
    );
    let snapshots = repo.path().join(".git/phasegate/snapshots");
    assert_eq!(mode(&snapshots), 0o2770);
}

/// A repository with `NO_TODO` and `a.md` on `main`, pushed to `origin`,
/// with the pre-push hook installed.
fn pushed_repo() -> (TestRepo, TestRepo) {
    crate::support::pushed_repo(NO_TODO)
}

/// The refs the recorded runs since the first `since` checked, and the
/// files each gave its check.
fn checked_since(repo: &TestRepo, since: usize) -> Vec<(String, Vec<String>)> {
    recorded_verdicts(repo)
        .iter()
        .skip(since)
        .map(|v| {
            (
                v["selection"]["pushed_ref"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                files_given(v),
            )
        })
        .collect()
}

/// The files the check `docs` was given, from its `sh -c` command line,
/// where each is quoted (`'b.md'`).
fn files_given(v: &serde_json::Value) -> Vec<String> {
    let argv = docs_files(v);
    let line = argv.last().map_or("", String::as_str);
    line.split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn a_branch_and_a_tag_pushed_together_are_each_checked_for_their_own_commits() {
    let (repo, remote) = pushed_repo();
    repo.write("b.md", "# b\n").commit_all("b");
    // The tag is on a commit of a branch that is not pushed.
    repo.git(&["checkout", "-qb", "release"]);
    repo.write("c.md", "# c TODO\n").commit_all("c");
    repo.git(&["tag", "v1"]);
    repo.git(&["checkout", "-q", "main"]);

    let refused = git_pushing(&repo, &["push", "origin", "main", "v1"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(said(&refused).contains("c.md:# c TODO"), "{refused:?}");
    assert!(!remote_has(&remote, "refs/tags/v1"));

    repo.git(&["tag", "-d", "v1"]);
    repo.git(&["checkout", "-q", "release"]);
    repo.write("c.md", "# c\n").commit_all("c fixed");
    repo.git(&["tag", "v1"]);
    repo.git(&["checkout", "-q", "main"]);
    let before = recorded_verdicts(&repo).len();
    let pushed = git_pushing(&repo, &["push", "origin", "main", "v1"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert_eq!(rev(&remote, "main"), rev(&repo, "main"));
    assert_eq!(rev(&remote, "v1"), rev(&repo, "v1"));
    let mut checked = checked_since(&repo, before);
    checked.sort();
    assert_eq!(
        checked,
        [
            ("refs/heads/main".to_string(), vec!["b.md".to_string()]),
            (
                "refs/tags/v1".to_string(),
                vec!["b.md".to_string(), "c.md".to_string()]
            ),
        ],
        "{pushed:?}"
    );
}

#[test]
fn a_branch_pushed_to_a_second_remote_is_checked_for_what_that_remote_lacks() {
    let (repo, origin) = pushed_repo();
    let backup = TestRepo::bare();
    repo.git(&["remote", "add", "backup", &backup.path().to_string_lossy()]);
    repo.git(&["push", "-q", "--no-verify", "backup", "main"]);
    repo.write("b.md", "# b\n").commit_all("b");
    repo.write("c.md", "# c\n").commit_all("c");

    let before = recorded_verdicts(&repo).len();
    let first = git_pushing(&repo, &["push", "origin", "main"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert_eq!(rev(&origin, "main"), rev(&repo, "main"));
    // The second remote has none of the two commits origin now has: they
    // are checked again against it, not passed as published.
    let second = git_pushing(&repo, &["push", "backup", "main"]);
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(rev(&backup, "main"), rev(&repo, "main"));
    let both = vec!["b.md".to_string(), "c.md".to_string()];
    assert_eq!(
        checked_since(&repo, before),
        [
            ("refs/heads/main".to_string(), both.clone()),
            ("refs/heads/main".to_string(), both),
        ],
        "{second:?}"
    );

    // A commit that breaks the rule, pushed to origin without the hook,
    // is still refused on its way to the second remote.
    repo.write("d.md", "# d TODO\n").commit_all("d");
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let refused = git_pushing(&repo, &["push", "backup", "main"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(said(&refused).contains("d.md:# d TODO"), "{refused:?}");
    assert_ne!(rev(&backup, "main"), rev(&repo, "main"));
}

#[test]
fn a_shallow_clone_pushing_over_a_remote_commit_it_lacks_is_never_passed_unchecked() {
    let (repo, remote) = pushed_repo();
    repo.write("b.md", "# b\n").commit_all("b");
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let clone = remote.shallow_clone("main", "shallow", &[]);
    let in_clone = |args: &[&str]| {
        let mut cmd = repo.command("git");
        cmd.current_dir(&clone).args(args).env("PHASEGATE_BIN", BIN);
        output(&cmd.output().unwrap())
    };
    in_clone(&["config", "user.email", "c@example.com"]);
    in_clone(&["config", "user.name", "C"]);
    let installed = repo.phasegate_in(&clone, &["install", "--hook", "pre-push"]);
    assert_eq!(installed.code, 0, "{installed:?}");
    // The remote moves on meanwhile: its new tip is not in the clone.
    repo.write("e.md", "# e\n").commit_all("e");
    repo.git(&["push", "-q", "--no-verify", "origin", "main"]);
    let theirs = rev(&remote, "main");

    std::fs::write(clone.join("d.md"), "# d TODO\n").unwrap();
    assert_eq!(in_clone(&["add", "d.md"]).code, 0);
    assert_eq!(in_clone(&["commit", "-qm", "d"]).code, 0);
    let forced = in_clone(&["push", "--force", "origin", "main"]);
    assert_ne!(forced.code, 0, "{forced:?}");
    assert_eq!(rev(&remote, "main"), theirs, "the push was refused");
    assert!(said(&forced).contains("d.md:# d TODO"), "{forced:?}");
}
