//! State under .git/phasegate in a repository a group shares.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::support::{output, Run, TestRepo, BIN};

const CONFIG: &str = r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [
  { name = "ok", command = "true" },
  { name = "bad", command = "sh -c 'echo src/a.rs:1:1: error: broken; exit 1'", on_failure = "block" },
]
"#;

const PASSING: &str = r#"[gate]
default_phase = "implementation"

[phases.implementation]
checks = [ { name = "ok", command = "true" } ]
"#;

/// `program args` in `repo` under `umask`, as the user `uid` of the group
/// `gid` when given (setpriv, no other group), with the installed hooks
/// finding the phasegate under test.
pub(crate) fn run_as(
    repo: &TestRepo,
    user: Option<(u32, u32)>,
    umask: &str,
    program: &str,
    args: &[&str],
) -> Run {
    let script = format!("umask {umask} && exec \"$@\"");
    let mut cmd = match user {
        Some((uid, gid)) => {
            let mut cmd = repo.command("setpriv");
            cmd.args([
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_string(),
                "--".to_string(),
                "sh".to_string(),
            ]);
            cmd
        }
        None => repo.command("sh"),
    };
    cmd.args(["-c", &script, "sh", program])
        .args(args)
        .env("PHASEGATE_BIN", BIN);
    output(&cmd.output().unwrap())
}

/// Every file and directory under `dir`, itself included.
pub(crate) fn everything_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < found.len() {
        if found[i].is_dir() && !found[i].is_symlink() {
            for entry in std::fs::read_dir(&found[i]).unwrap() {
                found.push(entry.unwrap().path());
            }
        }
        i += 1;
    }
    found
}

/// The entries under `dir` the group of a shared repository cannot
/// write (a directory: enter, list and write, setgid), with their modes.
fn not_shared(dir: &Path) -> Vec<String> {
    everything_under(dir)
        .into_iter()
        .filter_map(|path| {
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.mode() & 0o7777;
            let wanted = if meta.is_dir() { 0o2070 } else { 0o060 };
            (mode & wanted != wanted).then(|| format!("{:o} {}", mode, path.display()))
        })
        .collect()
}

#[test]
fn what_phasegate_creates_in_a_shared_repository_is_the_group_s_whatever_the_umask() {
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--shared=group"]);
    repo.config(CONFIG)
        .write("src/a.rs", "fn a() {}\n")
        .commit_all("init");
    // Unstaged work, set aside while the checks run, and a staged change.
    repo.write("src/a.rs", "fn a() { unstaged }\n")
        .stage("src/b.rs", "fn b() {}\n");
    let run = run_as(&repo, None, "077", BIN, &["run", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.json()["status"], "failed");
    let state = repo.path().join(".git/phasegate");
    for made in [
        "state.json",
        "state.lock",
        "interventions.jsonl",
        "protect/lock",
        "runs",
    ] {
        assert!(state.join(made).exists(), "{made}");
    }
    assert_eq!(not_shared(&state), Vec::<String>::new());
    assert_eq!(repo.read("src/a.rs"), "fn a() { unstaged }\n");

    // git, under the same umask, agrees: the directory of its new commit
    // object has the mode of the run directories.
    let committed = run_as(
        &repo,
        None,
        "077",
        "git",
        &["commit", "-qm", "b", "--no-verify"],
    );
    assert_eq!(committed.code, 0, "{}", committed.stderr);
    let commit = repo.git(&["rev-parse", "HEAD"]);
    let objects = repo.path().join(".git/objects").join(&commit.trim()[..2]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let runs = state.join("runs");
    // (Its directory may be older than the commit, made under the test's
    // own umask: the group's bits are what git and phasegate agree on.)
    assert_eq!(mode(&objects) & 0o2070, mode(&runs) & 0o2070);
    assert_eq!(mode(&runs), 0o2770);
    assert_eq!(mode(&state.join("state.json")), 0o660);
}

#[test]
fn an_octal_core_shared_repository_is_the_mode_of_every_state_file() {
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--shared=0640"]);
    repo.config(PASSING).stage("a.txt", "a\n");
    let run = run_as(&repo, None, "000", BIN, &["run", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let state = repo.path().join(".git/phasegate");
    for path in everything_under(&state) {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let wanted = if meta.is_dir() { 0o2750 } else { 0o640 };
        assert_eq!(meta.mode() & 0o7777, wanted, "{}", path.display());
    }
}

/// A user id and group id no account of the machine has, for a second
/// member of the group: root is never denied a permission, so only
/// another user shows one denied. `None` (and why) where this test cannot
/// run as another user.
fn second_user() -> Result<(u32, u32), String> {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout == b"0\n");
    if !root {
        return Err("not run as root: cannot run a command as another user".into());
    }
    // The binary under test must be theirs to run, too.
    let setpriv = std::process::Command::new("setpriv")
        .args([
            "--reuid=54321",
            "--regid=54321",
            "--clear-groups",
            BIN,
            "--version",
        ])
        .output()
        .map(|out| out.status)
        .is_ok_and(|status| status.success());
    if !setpriv {
        return Err("`setpriv` cannot run phasegate as another user here".into());
    }
    Ok((54321, 54321))
}

/// A repository shared by the group `gid` that another user can reach:
/// its directories open to them, git told it is safe for them.
fn shared_repo(gid: u32) -> TestRepo {
    let repo = TestRepo::new();
    repo.git(&["init", "-q", "--shared=group"]);
    // Where git reads it (`GIT_CONFIG_GLOBAL`) and where git2 does.
    let global = "[safe]\n\tdirectory = *\n[user]\n\tname = B\n\temail = b@example.com\n";
    repo.global_git_config(global);
    std::fs::write(repo.home().join(".gitconfig"), global).unwrap();
    for dir in [repo.path(), repo.home()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let chgrp = std::process::Command::new("chgrp")
        .args(["-R", &gid.to_string()])
        .arg(repo.path())
        .status()
        .unwrap();
    assert!(chgrp.success());
    // As `git init --shared=group` makes a new repository's (the test's
    // repository was made before): what is made inside is the group's.
    let setgid = std::process::Command::new("find")
        .arg(repo.path().join(".git"))
        .args(["-type", "d", "-exec", "chmod", "g+ws", "{}", "+"])
        .status()
        .unwrap();
    assert!(setgid.success());
    repo
}

/// A repository shared by the group of a second user (`shared_repo`),
/// with `config` set (a key and its value, or none), the hook installed,
/// and a first commit made through it by this user, with the usual umask;
/// and the second user's ids. None (and why, printed) where this test
/// cannot run as another user.
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
fn a_committed_first(config: &[&str]) -> Option<(TestRepo, (u32, u32))> {
    let (uid, gid) = match second_user() {
        Ok(ids) => ids,
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    let repo = shared_repo(gid);
    if let [key, value] = config {
        repo.git(&["config", key, value]);
    }
    repo.config(PASSING).commit_all("init");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    // A, with the usual umask, commits through the hook.
    repo.stage("a.txt", "a\n");
    let a = run_as(&repo, None, "022", "git", &["commit", "-qm", "a"]);
    assert_eq!(a.code, 0, "{}{}", a.stdout, a.stderr);
    Some((repo, (uid, gid)))
}

#[test]
fn a_teammate_commits_after_another_and_is_gated_not_refused() {
    let Some((repo, (uid, gid))) = a_committed_first(&[]) else {
        return;
    };
    // B, of the group, commits next: gated, and the gate passes. (git
    // itself writes `COMMIT_EDITMSG` with the umask alone: A's is left
    // for B to make anew.)
    std::fs::remove_file(repo.path().join(".git/COMMIT_EDITMSG")).unwrap();
    std::fs::write(repo.path().join("b.txt"), "b\n").unwrap();
    let added = run_as(&repo, Some((uid, gid)), "022", "git", &["add", "b.txt"]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let b = run_as(
        &repo,
        Some((uid, gid)),
        "022",
        "git",
        &["commit", "-qm", "b"],
    );
    assert_eq!(b.code, 0, "{}{}", b.stdout, b.stderr);
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]).trim(), "b");
    let verdicts = crate::support::recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), 2, "{verdicts:#?}");
    assert!(
        verdicts.iter().all(|v| v["status"] == "passed"),
        "{verdicts:#?}"
    );
}

#[test]
fn a_teammate_refused_by_state_another_user_made_is_told_how_to_share_it() {
    // Shared by the group's directories, but git not told so: A's state
    // is made with A's umask alone.
    let Some((repo, (uid, gid))) = a_committed_first(&["core.sharedRepository", "umask"]) else {
        return;
    };
    // B runs the gate on A's state: the run passes, unrecorded, and says
    // who can fix that and how, not "make it writable for this user",
    // which B cannot do and A, its owner, can.
    // An unstaged change for the run to protect, under a lock of its own
    // it cannot take either.
    repo.stage("b.txt", "b\n").write("b.txt", "b, unstaged\n");
    let b = run_as(&repo, Some((uid, gid)), "022", BIN, &["run"]);
    assert!(
        b.stderr.contains("was not recorded")
            && b.stderr.contains("belongs to another user (uid 0)")
            && b.stderr
                .contains("git config core.sharedRepository group && chmod -R g+w")
            && !b.stderr.contains("u+w"),
        "{}",
        b.stderr
    );
    // The run's own error too, not a bare "Permission denied"; and the
    // unstaged change is where it was.
    let error = b
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert!(
        error.contains("/protect`: Permission denied")
            && error.contains("belongs to another user (uid 0)"),
        "{}",
        b.stderr
    );
    assert_eq!(b.code, 3, "{}", b.stderr);
    assert_eq!(repo.read("b.txt"), "b, unstaged\n");
}
