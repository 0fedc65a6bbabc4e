//! Repositories that keep their refs in the reftable format: gated as
//! files-format ones are, their refs read through git.

use crate::support::{TestRepo, BIN};

/// Whether the git on `PATH` is 2.45 or later, which makes reftable
/// repositories; said on stderr when it is not.
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
fn git_makes_reftable() -> bool {
    let out = std::process::Command::new("git")
        .arg("--version")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let version: Vec<u32> = text
        .trim()
        .trim_start_matches("git version ")
        .split(['.', ' '])
        .take(2)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    let new_enough = version.as_slice() >= [2, 45].as_slice();
    if !new_enough {
        eprintln!(
            "skipped: {} makes no reftable repository (2.45 or later does)",
            text.trim()
        );
    }
    new_enough
}

/// A repository whose refs are `format` (`reftable` or `files`), with
/// git's identity set.
pub(crate) fn repo_with(format: &str) -> TestRepo {
    let repo = TestRepo::plain();
    repo.git(&[
        "init",
        "-q",
        "-b",
        "main",
        &format!("--ref-format={format}"),
    ]);
    repo.git(&["config", "user.email", "test@example.com"]);
    repo.git(&["config", "user.name", "Test"]);
    repo
}

/// A reftable repository, or `None` when this git makes none.
pub(crate) fn reftable() -> Option<TestRepo> {
    git_makes_reftable().then(|| {
        let repo = repo_with("reftable");
        assert!(repo.exists(".git/reftable/tables.list"), "not reftable");
        repo
    })
}

/// A check that passes when `ok.txt` holds `ok`, and one that lists the
/// selected `.txt` files.
const GATED: &str = r#"[phases.implementation]
checks = [
  { name = "ok", shell = true, command = "grep -qx ok ok.txt" },
  { name = "list", command = "printf '%s\n' {files}", files = ["**/*.txt"] },
]
"#;

/// `git commit` through the installed hook.
fn commit(repo: &TestRepo, args: &[&str]) -> std::process::Output {
    repo.command("git")
        .arg("commit")
        .args(args)
        .env("PHASEGATE_BIN", BIN)
        .output()
        .unwrap()
}

/// The `.txt` files a JSON verdict's run selected, sorted, as its `list`
/// check printed them.
fn selected(repo: &TestRepo, verdict: &serde_json::Value) -> Vec<String> {
    let Some(list) = verdict["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "list"))
    else {
        return Vec::new();
    };
    let log = list["log"]
        .as_str()
        .unwrap_or_else(|| panic!("{verdict:#}"));
    let mut files: Vec<String> = repo.read(log).lines().map(str::to_string).collect();
    files.sort();
    files
}

#[test]
fn the_hook_blocks_a_failing_commit_and_lets_a_passing_one_through_from_the_first() {
    let Some(repo) = reftable() else {
        return;
    };
    repo.config(GATED);
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{install:?}");

    // The first commit, with no HEAD yet: a failing check refuses it.
    repo.stage("ok.txt", "not ok\n");
    let refused = commit(&repo, &["-qm", "first"]);
    assert!(!refused.status.success(), "{refused:?}");
    let head = repo
        .command("git")
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .unwrap();
    assert!(!head.status.success(), "{head:?}");

    repo.stage("ok.txt", "ok\n");
    let first = commit(&repo, &["-qm", "first"]);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(repo.git(&["log", "--format=%s"]), "first\n");

    // Against a HEAD that exists now: only what is staged is checked,
    // and a failing one is refused again.
    repo.stage("ok.txt", "broken\n");
    let refused = commit(&repo, &["-qm", "second"]);
    assert!(!refused.status.success(), "{refused:?}");
    assert_eq!(repo.git(&["log", "--format=%s"]), "first\n");
}

#[test]
fn the_staged_selection_is_the_same_as_in_a_files_repository() {
    let Some(reftable) = reftable() else {
        return;
    };
    let files = repo_with("files");
    for repo in [&reftable, &files] {
        repo.config(GATED);
        repo.write("ok.txt", "ok\n")
            .write("b.txt", "b\n")
            .write("c.txt", "c\n");
        repo.commit_all("base");
        repo.stage("b.txt", "b2\n");
        let (code, verdict) = repo.verdict(&[]);
        assert_eq!(code, 0, "{verdict:#}");
        // Every file would look new against the stub `HEAD` libgit2 reads.
        assert_eq!(selected(repo, &verdict), ["b.txt"], "{verdict:#}");
    }
}

#[test]
fn a_partially_staged_file_comes_back_byte_for_byte() {
    let Some(repo) = reftable() else {
        return;
    };
    // The check sees the staged content only.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"staged\", shell = true, command = \"test \\\"$(cat a.txt)\\\" = staged\" } ]\n",
    );
    repo.write("a.txt", "base\n").commit_all("base");
    repo.stage("a.txt", "staged\n");
    let unstaged = "staged\nand more, unstaged \u{e9}\r\n\0tail";
    repo.write("a.txt", unstaged);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read("a.txt"), unstaged);
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "a.txt\n");
}

#[test]
fn a_range_selects_exactly_the_branch_s_files_as_in_a_files_repository() {
    let Some(reftable) = reftable() else {
        return;
    };
    let files = repo_with("files");
    for repo in [&reftable, &files] {
        repo.config(GATED);
        repo.write("ok.txt", "ok\n").write("main.txt", "m\n");
        repo.commit_all("base");
        repo.git(&["checkout", "-qb", "feature"]);
        repo.write("f1.txt", "1\n").write("dir/f2.txt", "2\n");
        repo.commit_all("feature");
        repo.git(&["checkout", "-q", "main"]);
        repo.write("main.txt", "m2\n").commit_all("main moves on");
        repo.git(&["checkout", "-q", "feature"]);
        let (code, verdict) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
        assert_eq!(code, 0, "{verdict:#}");
        assert_eq!(
            selected(repo, &verdict),
            ["dir/f2.txt", "f1.txt"],
            "{verdict:#}"
        );
        // A name nothing answers to is said, never taken for an empty range.
        let run = repo.phasegate(&["run", "--from-ref", "nothere", "--to-ref", "feature"]);
        assert_ne!(run.code, 0, "{run:?}");
        assert!(run.stderr.contains("`nothere`"), "{run:?}");
    }
    // A range whose end is not checked out is checked in a temporary
    // checkout of it, in both formats alike.
    for repo in [&reftable, &files] {
        repo.git(&["checkout", "-q", "main"]);
        let (code, verdict) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
        assert_eq!(code, 0, "{verdict:#}");
        assert_eq!(
            selected(repo, &verdict),
            ["dir/f2.txt", "f1.txt"],
            "{verdict:#}"
        );
    }
}

#[test]
fn the_configuration_is_read_from_a_ref() {
    let Some(repo) = reftable() else {
        return;
    };
    // `main` gates with a check that fails; the branch would weaken it.
    repo.config("[phases.implementation]\nchecks = [ { name = \"gate\", command = \"false\" } ]\n");
    repo.write("a.txt", "a\n").commit_all("base");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.config("[phases.implementation]\nchecks = []\n");
    repo.write("a.txt", "b\n").commit_all("weaken");
    let own = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(own.code, 0, "{own:?}");
    let (code, verdict) = repo.verdict(&["--all-files", "--config-from-ref", "main"]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(verdict["checks"][0]["name"], "gate", "{verdict:#}");
}

#[test]
fn a_commit_on_a_detached_head_is_gated() {
    let Some(repo) = reftable() else {
        return;
    };
    repo.config(GATED);
    repo.write("ok.txt", "ok\n")
        .write("b.txt", "b\n")
        .commit_all("base");
    repo.write("b.txt", "b2\n").commit_all("second");
    repo.git(&["checkout", "-q", "--detach", "HEAD~1"]);
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{install:?}");

    repo.stage("c.txt", "c\n");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict:#}");
    // Against the detached commit, not `main`'s: `b.txt` is not staged.
    assert_eq!(selected(&repo, &verdict), ["c.txt"], "{verdict:#}");
    let done = commit(&repo, &["-qm", "detached"]);
    assert!(done.status.success(), "{done:?}");

    repo.stage("ok.txt", "no\n");
    let refused = commit(&repo, &["-qm", "refused"]);
    assert!(!refused.status.success(), "{refused:?}");
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]), "detached\n");
}

#[test]
fn a_check_that_commits_is_caught_and_the_work_comes_back() {
    let Some(repo) = reftable() else {
        return;
    };
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"chk\", shell = true, command = \"git add -A && git commit -qm x\" } ]\n",
    );
    repo.write("a.txt", "one\n").commit_all("one");
    let before = repo.git(&["rev-parse", "HEAD"]);
    repo.stage("a.txt", "ONE\n");
    repo.write("a.txt", "ONE\nunstaged\n");
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("moved branch `main` (HEAD) from")
            && run.stdout.contains("git reset --soft"),
        "{run:?}"
    );
    assert!(run.stdout.contains(before.trim()), "{run:?}");
    assert_eq!(repo.read("a.txt"), "ONE\nunstaged\n");
}
