//! A run over the same input as the run before it is no new attempt: an
//! agent that commits, then runs the gate again to read the verdict it
//! must act on, has tried once, and is escalated only after the configured
//! number of real attempts with the same errors.

use crate::support::{output, Run, TestRepo, BIN};

/// A `build` check that fails with the same error whatever is staged,
/// ending with `exit {code}`: another code is another configuration with
/// the same error.
fn gate(repo: &TestRepo, code: u8) {
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"build\", shell = true, command = \"echo 'src/a.c:1:1: error: stuck'; exit {code}\" }} ]\n"
    ));
}

/// A repository with `src/a.c` committed and the gate above beside it
/// (not tracked: the work tree's `phasegate.toml` judges every run).
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.c", "int a;\n");
    repo.commit_all("base");
    gate(&repo, 1);
    repo
}

/// `git commit` through the installed pre-commit hook.
fn commit(repo: &TestRepo) -> Run {
    output(
        &repo
            .command("git")
            .args(["commit", "-qm", "attempt"])
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    )
}

/// `phasegate run --format json` on what is staged: its exit code and
/// status.
fn run(repo: &TestRepo) -> (i32, String) {
    let (code, v) = repo.verdict(&[]);
    (code, v["status"].as_str().unwrap_or_default().to_string())
}

fn failed() -> (i32, String) {
    (1, "failed".to_string())
}

fn blocked() -> (i32, String) {
    (4, "blocked".to_string())
}

#[test]
fn reading_the_verdict_again_after_a_refused_commit_is_not_an_attempt() {
    let repo = project();
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    // First attempt: the hook refuses the commit; the agent reads the
    // verdict it must act on, twice, changing nothing.
    repo.stage("src/a.c", "int a = 1;\n");
    let refused = commit(&repo);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(run(&repo), failed(), "reading the verdict again");
    assert_eq!(run(&repo), failed(), "and once more");
    // Second attempt: a partial fix, the same error.
    repo.stage("src/a.c", "int a = 2;\n");
    let refused = commit(&repo);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(!refused.stderr.contains("blocked"), "{refused:?}");
    assert_eq!(run(&repo), failed(), "two attempts are not three");
    // Third attempt with the same error: now a person is needed, and
    // reading that verdict again says the same.
    repo.stage("src/a.c", "int a = 3;\n");
    let refused = commit(&repo);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("blocked — a person is needed"),
        "{refused:?}"
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 4, "{v:#}");
    assert_eq!(v["next"], "escalate");
    assert!(
        v["notes"].to_string().contains("failed 3 runs in a row"),
        "{v:#}"
    );
    // Every run is in the history all the same.
    let history = repo.phasegate(&["history", "--format", "json"]).json();
    assert_eq!(history["runs"].as_array().unwrap().len(), 7, "{history:#}");
}

#[test]
fn a_changed_staged_file_is_a_new_attempt() {
    let repo = project();
    repo.stage("src/a.c", "int a = 1;\n");
    assert_eq!(run(&repo), failed());
    assert_eq!(run(&repo), failed(), "the same input again");
    repo.stage("src/a.c", "int a = 2;\n");
    assert_eq!(run(&repo), failed(), "the second attempt");
    // A mode is staged content too.
    repo.git(&["update-index", "--chmod=+x", "src/a.c"]);
    assert_eq!(run(&repo), blocked(), "the third attempt");
}

#[test]
fn a_changed_configuration_is_a_new_attempt() {
    let repo = project();
    repo.stage("src/a.c", "int a = 1;\n");
    assert_eq!(run(&repo), failed());
    assert_eq!(run(&repo), failed(), "the same input again");
    // The same staged files, the same error, another check.
    gate(&repo, 2);
    assert_eq!(run(&repo), failed(), "the second attempt");
    gate(&repo, 3);
    assert_eq!(run(&repo), blocked(), "the third attempt");
}

#[test]
fn an_index_git_status_refreshed_is_the_same_input() {
    let repo = project();
    repo.stage("src/a.c", "int a = 1;\n");
    let index = repo.path().join(".git/index");
    let refresh = |seconds: u64| {
        // The file touched, its content the same: only the stat data
        // changes, and `git status` writes it into the index.
        let before = std::fs::read(&index).unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000 + seconds);
        std::fs::File::options()
            .write(true)
            .open(repo.path().join("src/a.c"))
            .unwrap()
            .set_modified(at)
            .unwrap();
        repo.git(&["status", "--porcelain"]);
        assert_ne!(
            std::fs::read(&index).unwrap(),
            before,
            "the index was refreshed"
        );
    };
    assert_eq!(run(&repo), failed());
    refresh(1);
    assert_eq!(run(&repo), failed(), "the same staged content");
    refresh(2);
    assert_eq!(run(&repo), failed(), "still the first attempt");
}
