//! Repositories libgit2 cannot open (sha256) or reads through git (reftable), repositories git does not trust, and partial clones.

use crate::support::TestRepo;

/// A repository made by `git init` with `options`, one commit in it and a
/// change staged.
fn made_with(options: &[&str]) -> TestRepo {
    let repo = TestRepo::plain();
    let mut init = vec!["init", "-q", "-b", "main"];
    init.extend_from_slice(options);
    repo.git(&init);
    repo.git(&["config", "user.email", "test@example.com"]);
    repo.git(&["config", "user.name", "Test"]);
    repo.stage("a.txt", "one\n").commit_all("first");
    repo.stage("a.txt", "two\n");
    repo
}

/// The installed pre-commit hook, if any.
fn hook(repo: &TestRepo) -> std::path::PathBuf {
    repo.path().join(".git/hooks/pre-commit")
}

/// Runs phasegate as a person and as a program, and installs it: each
/// says why once, in words that hold all of `explained` and none of
/// libgit2's raw ones; the run fails closed and the install writes no
/// hook.
fn refused_everywhere(repo: &TestRepo, explained: &[&str]) {
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.stderr.matches("cannot read yet").count(), 1, "{run:?}");
    for words in explained {
        assert!(run.stderr.contains(words), "{words}: {run:?}");
    }
    assert!(!run.stderr.contains("class="), "{run:?}");

    let run = repo.phasegate(&["run", "--format", "json"]);
    assert_eq!(run.code, 3, "{run:?}");
    let verdict = run.json();
    assert_eq!(verdict["status"], "incomplete", "{verdict}");
    let message = verdict["error"]["message"].as_str().unwrap();
    for words in explained {
        assert!(message.contains(words), "{words}: {message}");
    }

    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 2, "{install:?}");
    assert_eq!(
        install.stderr.matches("cannot read yet").count(),
        1,
        "{install:?}"
    );
    for words in explained {
        assert!(install.stderr.contains(words), "{words}: {install:?}");
    }
    assert!(!hook(repo).exists(), "a hook that can only block");
}

#[test]
fn a_reftable_repository_is_gated_like_any_other() {
    let repo = made_with(&["--ref-format=reftable"]);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("cannot read yet"), "{run:?}");
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{install:?}");
    assert!(hook(&repo).exists());
    assert_eq!(repo.read("a.txt"), "two\n");
}

#[test]
fn a_sha256_repository_is_refused_with_how_to_commit_without_the_gate() {
    let repo = made_with(&["--object-format=sha256"]);
    refused_everywhere(
        &repo,
        &[
            "names its objects with sha256",
            "git commit --no-verify",
            "phasegate uninstall",
        ],
    );
}

#[test]
fn an_extension_nobody_reads_is_named_and_the_common_ones_keep_working() {
    let repo = TestRepo::new();
    repo.stage("a.txt", "one\n").commit_all("first");
    repo.stage("a.txt", "two\n");
    repo.git(&["config", "core.repositoryformatversion", "1"]);
    // The worktree configuration of `git sparse-checkout` and `git
    // worktree`, and the marker older gits wrote in a partial clone.
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    repo.git(&["config", "extensions.partialClone", "origin"]);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 0, "{run:?}");

    repo.git(&["config", "extensions.compatObjectFormat", "sha256"]);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("uses the repository extension `extensions.compatobjectformat = sha256`"),
        "{run:?}"
    );
    assert!(run.stderr.contains("git commit --no-verify"), "{run:?}");
}

/// Whether the tests run as root, who can give a repository away.
fn root() -> bool {
    let id = std::process::Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&id.stdout).trim() == "0"
}

#[test]
fn a_repository_of_another_user_is_refused_with_git_s_remedy_until_safe_directory_names_it() {
    if !root() {
        eprintln!("skipped: only root can give a repository to another user");
        return;
    }
    let repo = TestRepo::new();
    repo.stage("a.txt", "one\n").commit_all("first");
    repo.stage("a.txt", "two\n");
    let path = std::fs::canonicalize(repo.path()).unwrap();
    let chown = std::process::Command::new("chown")
        .args(["-R", "nobody"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(chown.success());
    let git = repo.command("git").arg("status").output().unwrap();
    assert!(!git.status.success(), "git trusts it: {git:?}");

    let remedy = format!(
        "git config --global --add safe.directory {}",
        path.display()
    );
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.stderr.matches(&remedy).count(), 1, "{run:?}");
    assert!(run.stderr.contains("owned by another user"), "{run:?}");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 3);
    assert!(
        verdict["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&remedy),
        "{verdict}"
    );
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 2, "{install:?}");
    assert!(install.stderr.contains(&remedy), "{install:?}");

    // The global configuration git reads (`GIT_CONFIG_GLOBAL`, which
    // libgit2 does not) trusts it: phasegate goes by git.
    repo.global_git_config(&format!("[safe]\n\tdirectory = {}\n", path.display()));
    let git = repo.command("git").arg("status").output().unwrap();
    assert!(git.status.success(), "{git:?}");
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{install:?}");
}

/// A partial clone (`--filter=blob:none`) of a repository with a branch
/// `side` whose file `side.txt` the clone never checked out.
fn partial_clone() -> (TestRepo, TestRepo) {
    let origin = TestRepo::new();
    origin.git(&["config", "uploadpack.allowFilter", "true"]);
    origin.stage("a.txt", "one\n").commit_all("first");
    origin.git(&["branch", "base"]);
    origin.git(&["checkout", "-q", "-b", "side"]);
    origin.stage("side.txt", "from side\n").commit_all("side");
    origin.git(&["checkout", "-q", "main"]);

    let clone = TestRepo::plain();
    let url = format!("file://{}", origin.path().display());
    clone.git(&["clone", "-q", "--filter=blob:none", &url, "."]);
    clone.git(&["config", "user.email", "test@example.com"]);
    clone.git(&["config", "user.name", "Test"]);
    let missing = clone.git(&[
        "rev-list",
        "--objects",
        "--no-walk",
        "--missing=print",
        "origin/side",
    ]);
    assert!(missing.contains('?'), "nothing is missing: {missing}");
    (origin, clone)
}

const READ_SIDE: &str = "[phases.implementation]\nchecks = [ { name = \"side\", shell = true, command = \"grep -q 'from side' side.txt\" } ]\n";

#[test]
fn a_range_of_a_partial_clone_is_checked_with_the_files_git_fetches() {
    let (_origin, clone) = partial_clone();
    clone.config(READ_SIDE);
    let (code, verdict) = clone.verdict(&["--from-ref", "origin/base", "--to-ref", "origin/side"]);
    assert_eq!(code, 0, "{verdict}");
    assert_eq!(verdict["checks"][0]["status"], "passed", "{verdict}");
}

#[test]
fn a_range_of_a_partial_clone_whose_remote_is_gone_names_the_missing_file() {
    let (origin, clone) = partial_clone();
    clone.config(READ_SIDE);
    let place = origin.path();
    let gone = place.with_extension("gone");
    std::fs::rename(&place, &gone).unwrap();
    let run = clone.phasegate(&[
        "run",
        "--from-ref",
        "origin/base",
        "--to-ref",
        "origin/side",
    ]);
    std::fs::rename(&gone, &place).unwrap();
    assert_eq!(run.code, 3, "{run:?}");
    let object = clone.git(&["rev-parse", "origin/side:side.txt"]);
    assert!(run.stderr.contains(object.trim()), "{run:?}");
    assert!(run.stderr.contains("not in this partial clone"), "{run:?}");
    assert!(run.stderr.contains("`origin`"), "{run:?}");
}

#[test]
fn a_staged_run_of_a_partial_clone_in_a_snapshot_checks_what_is_staged() {
    let (_origin, clone) = partial_clone();
    clone.config(&format!("[gate]\nisolation = \"snapshot\"\n{READ_SIDE}"));
    clone.git(&["add", "phasegate.toml"]);
    clone.stage("side.txt", "from side, staged\n");
    clone.write("side.txt", "unstaged\n");
    let (code, verdict) = clone.verdict(&[]);
    assert_eq!(code, 0, "{verdict}");
    assert_eq!(clone.read("side.txt"), "unstaged\n");
}
