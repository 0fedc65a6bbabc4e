//! `phasegate install` / `uninstall` and real `git commit` / `git push`
//! through the installed hooks.

use std::os::unix::fs::PermissionsExt;

use crate::support::{output, TestRepo, BIN};

/// `git ARGS` with the hook finding the phasegate under test.
fn git_with_hook(repo: &TestRepo, args: &[&str]) -> crate::support::Run {
    git_with_hook_env(repo, args, &[])
}

/// `git_with_hook`, with `env` set too.
fn git_with_hook_env(
    repo: &TestRepo,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> crate::support::Run {
    let mut git = repo.command("git");
    git.args(args).env("PHASEGATE_BIN", BIN);
    for (key, value) in env {
        git.env(key, value);
    }
    output(&git.output().unwrap())
}

fn gate(repo: &TestRepo, command: &str) {
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"gate\", shell = true, command = {command:?} }} ]\n"
    ));
}

/// A pre-push hook there before phasegate: it saves the refs git gives it
/// in `.git/chained-refs`.
fn refs_saving_pre_push(repo: &TestRepo) {
    let hook = repo.path().join(".git/hooks/pre-push");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        "#!/bin/sh\ncat > \"$(git rev-parse --git-dir)/chained-refs\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn commits(repo: &TestRepo) -> usize {
    repo.git(&["rev-list", "--all", "--count"])
        .trim()
        .parse()
        .unwrap_or(0)
}

#[test]
fn a_failing_blocking_check_refuses_a_real_commit_and_a_passing_one_lets_it_through() {
    let repo = TestRepo::new();
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let hook = repo.path().join(".git/hooks/pre-commit");
    assert!(std::fs::metadata(&hook).unwrap().permissions().mode() & 0o111 != 0);

    gate(&repo, "echo 'src/a.rs:1:1: error: not today'; exit 1");
    repo.stage("a.txt", "a\n");
    let refused = git_with_hook(&repo, &["commit", "-qm", "refused"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stdout.contains("not today") || refused.stderr.contains("not today"),
        "{refused:?}"
    );
    // The person at `git commit` is told the commit did not happen, and how
    // to go on.
    assert!(
        refused
            .stderr
            .contains("phasegate stopped the commit (the pre-commit hook)"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("then commit again"),
        "{}",
        refused.stderr
    );
    // After what it points to (git shows the hook's output on its stderr).
    assert!(
        refused.stderr.find("✗ failed").unwrap()
            < refused.stderr.find("phasegate stopped the commit").unwrap(),
        "{}",
        refused.stderr
    );
    assert_eq!(commits(&repo), 0);

    gate(&repo, "exit 0");
    let accepted = git_with_hook(&repo, &["commit", "-qm", "accepted"]);
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert_eq!(commits(&repo), 1);
}

#[test]
fn a_commit_holds_the_staged_content_and_unstaged_work_survives_it() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("one");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    gate(&repo, "grep -q staged a.txt");
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "staged\nand more, unstaged\n");
    let run = git_with_hook(&repo, &["commit", "-qm", "two"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "staged\n");
    assert_eq!(repo.read("a.txt"), "staged\nand more, unstaged\n");
}

#[test]
fn commit_all_and_commit_of_named_paths_check_what_git_will_commit() {
    // git hands the hook a temporary index (GIT_INDEX_FILE) for these.
    let repo = TestRepo::new();
    repo.write("a.txt", "good\n").write("b.txt", "good\n");
    gate(&repo, "! grep -q bad a.txt b.txt");
    repo.commit_all("one");
    assert_eq!(repo.phasegate(&["install"]).code, 0);

    repo.write("a.txt", "bad\n");
    let all = git_with_hook(&repo, &["commit", "-qam", "all"]);
    assert_ne!(
        all.code, 0,
        "`git commit -a` of a bad change is refused: {all:?}"
    );
    assert_eq!(commits(&repo), 1);
    assert_eq!(repo.read("a.txt"), "bad\n");

    // `git commit b.txt` commits b.txt alone: a.txt's staged change is not
    // part of it, so the checks see a.txt as committed.
    repo.git(&["add", "a.txt"]);
    repo.write("b.txt", "better\n");
    let named = git_with_hook(&repo, &["commit", "-qm", "b only", "b.txt"]);
    assert_eq!(named.code, 0, "{named:?}");
    assert_eq!(repo.git(&["show", "HEAD:b.txt"]), "better\n");
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "good\n");
    assert_eq!(repo.git(&["show", ":a.txt"]), "bad\n", "still staged");
    assert_eq!(repo.read("a.txt"), "bad\n");
}

#[test]
fn install_is_idempotent_and_keeps_and_restores_a_foreign_hook() {
    let repo = TestRepo::new();
    let hook = repo.path().join(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    let foreign = "#!/bin/sh\necho foreign >> \"$(git rev-parse --git-dir)/foreign-ran\"\n";
    std::fs::write(&hook, foreign).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    assert_eq!(repo.phasegate(&["install"]).code, 0);
    let installed = std::fs::read_to_string(&hook).unwrap();
    let again = repo.phasegate(&["install"]);
    assert_eq!(again.code, 0);
    assert!(
        again.stdout.contains("already installed"),
        "{}",
        again.stdout
    );
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), installed);
    let chained = repo.path().join(".git/hooks/pre-commit.phasegate-chained");
    assert_eq!(
        std::fs::read_to_string(&chained).unwrap(),
        foreign,
        "installing twice never chains our own hook"
    );

    gate(&repo, "exit 0");
    repo.stage("a.txt", "a\n");
    let run = git_with_hook(&repo, &["commit", "-qm", "both hooks"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        repo.read(".git/foreign-ran"),
        "foreign\n",
        "the foreign hook still runs"
    );

    assert_eq!(repo.phasegate(&["uninstall"]).code, 0);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), foreign);
    assert!(std::fs::metadata(&hook).unwrap().permissions().mode() & 0o111 != 0);
    assert!(!chained.exists());
    // Again: nothing is left to remove, and that is said.
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("no phasegate hook is installed"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), foreign);
}

#[test]
fn without_phasegate_on_path_the_hook_fails_open_unless_installed_fail_closed() {
    let repo = TestRepo::new();
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.stage("a.txt", "a\n");
    let run = output(
        &repo
            .command("git")
            .args(["commit", "-qm", "open"])
            .env("PHASEGATE_BIN", "phasegate-not-installed-here")
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("not installed or not on PATH"),
        "{}",
        run.stderr
    );
    // Nor is a PHASEGATE_BIN that is not executable, though dash's
    // `command -v` answers for any path that exists.
    let not_executable = repo.path().join(".git/not-executable");
    std::fs::write(
        &not_executable,
        "#!/bin/sh
exit 0
",
    )
    .unwrap();
    let commit_with_bin = |message: &str| {
        output(
            &repo
                .command("git")
                .args(["commit", "-qm", message])
                .env("PHASEGATE_BIN", &not_executable)
                .output()
                .unwrap(),
        )
    };
    repo.stage("c.txt", "c\n");
    let run = commit_with_bin("open, not executable");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("not executable"), "{}", run.stderr);

    let run = repo.phasegate(&["install", "--fail-closed"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("it is fail-closed now"),
        "{}",
        run.stdout
    );
    // Installing again as it is changes nothing, and says so.
    let run = repo.phasegate(&["install", "--fail-closed"]);
    assert!(
        run.stdout.contains("was already installed:"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("rewritten"), "{}", run.stdout);
    repo.stage("b.txt", "b\n");
    let run = output(
        &repo
            .command("git")
            .args(["commit", "-qm", "closed"])
            .env("PHASEGATE_BIN", "phasegate-not-installed-here")
            .output()
            .unwrap(),
    );
    assert_ne!(run.code, 0);
    let run = commit_with_bin("closed, not executable");
    assert!(
        run.stderr.contains("installed with --fail-closed"),
        "{}",
        run.stderr
    );
    assert_eq!(commits(&repo), 2);
    // A plain install turns it open again: said, never silent.
    let run = repo.phasegate(&["install"]);
    assert!(
        run.stdout
            .contains("it was fail-closed and now lets commits through"),
        "{}",
        run.stdout
    );
}

#[test]
fn hooks_go_where_git_runs_them() {
    // core.hooksPath, relative to the work tree.
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    assert!(repo.exists(".githooks/pre-commit"));

    // A core.hooksPath of the user's global configuration is shared by
    // every repository: install says so.
    // (The file GIT_CONFIG_GLOBAL names, the one git reads.)
    let shared = TestRepo::new();
    let global = shared.global_git_config("");
    let hooks = global.parent().unwrap().join("hooks");
    shared.git(&[
        "config",
        "--file",
        &global.to_string_lossy(),
        "core.hooksPath",
        &hooks.to_string_lossy(),
    ]);
    let run = shared.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("set in your global git configuration"),
        "{run:?}"
    );
    assert!(!shared.exists(".git/hooks/pre-commit"), "{run:?}");
    assert!(!repo.phasegate(&["install"]).stderr.contains("global"));

    // A linked worktree shares the main repository's hooks.
    let main = TestRepo::new();
    main.write("a.txt", "a\n");
    main.commit_all("one");
    let linked = main.linked_worktree("linked");
    let run = main.phasegate_in(&linked, &["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(main.exists(".git/hooks/pre-commit"));
    assert!(!run.stderr.contains("not gated"), "{run:?}");
    main.git(&["worktree", "remove", "--force", &linked.to_string_lossy()]);

    // With a relative core.hooksPath each work tree runs its own hooks:
    // install says which are not gated yet, until none is left.
    main.git(&["config", "core.hooksPath", ".githooks"]);
    let linked = main.linked_worktree("linked-own");
    let run = main.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(main.exists(".githooks/pre-commit"));
    let linked_root = std::fs::canonicalize(&linked).unwrap();
    assert!(
        run.stderr.contains(&format!(
            "`{}` is not gated; run `phasegate install` there too",
            linked_root.display()
        )),
        "{run:?}"
    );
    let run = main.phasegate_in(&linked, &["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(linked.join(".githooks/pre-commit").exists());
    assert!(!run.stderr.contains("not gated"), "{run:?}");
    assert!(!main.phasegate(&["install"]).stderr.contains("not gated"));
    main.git(&["worktree", "remove", "--force", &linked.to_string_lossy()]);
}

#[test]
fn pre_push_of_a_branch_not_checked_out_is_judged_by_that_branchs_gate() {
    let repo = TestRepo::new();
    gate(&repo, "true");
    repo.write("a.txt", "a\n").commit_all("one");
    let remote = repo.bare_origin();
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    assert_eq!(
        git_with_hook(&repo, &["push", "-q", "origin", "main"]).code,
        0
    );
    // The branch's own gate refuses what it adds; CI would judge it by
    // that gate, and so does the push from a checkout of main.
    repo.git(&["checkout", "-qb", "topic"]);
    gate(&repo, "! grep -q TODO a.txt");
    repo.write("a.txt", "a TODO\n").commit_all("todo");
    repo.git(&["checkout", "-q", "main"]);
    let refused = git_with_hook(&repo, &["push", "-q", "origin", "topic"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stdout.contains("differs from its version in"),
        "{refused:?}"
    );
    // Resumed, it is the same push that is checked, and said so.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 1, "{}{}", resumed.stdout, resumed.stderr);
    assert_eq!(
        resumed.json()["selection"]["pushed_ref"],
        "refs/heads/topic"
    );
    let on_remote = remote
        .command("git")
        .args(["rev-parse", "-q", "--verify", "topic"])
        .output()
        .unwrap();
    assert!(!on_remote.status.success(), "topic was not pushed");
}

#[test]
fn pre_push_needs_no_temporary_file_to_share_the_refs() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").commit_all("one");
    let _remote = repo.bare_origin();
    refs_saving_pre_push(&repo);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    gate(&repo, "echo checked > .git/gate-ran");
    // A TMPDIR that does not exist: nothing of the hook needs it.
    let nowhere = repo.path().join("no-such-dir");
    let run = git_with_hook_env(
        &repo,
        &["push", "-q", "origin", "main"],
        &[("TMPDIR", nowhere.as_os_str())],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(repo
        .read(".git/chained-refs")
        .starts_with("refs/heads/main "));
    assert_eq!(repo.read(".git/gate-ran"), "checked\n");
}

#[test]
fn pre_push_checks_the_pushed_range_and_a_chained_hook_reads_the_refs_too() {
    let repo = TestRepo::new();
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let remote = repo.bare_origin();
    refs_saving_pre_push(&repo);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"sh -c 'echo \\\"$@\\\" > .git/pushed-files' sh {files}\" } ]\n",
    );
    let run = git_with_hook(&repo, &["push", "-q", "origin", "main"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(repo
        .read(".git/chained-refs")
        .starts_with("refs/heads/main "));
    assert_eq!(repo.read(".git/pushed-files"), "a.md\n");

    // Pushing a branch that is not checked out checks that branch's
    // commits, not the work tree.
    repo.git(&["checkout", "-qb", "topic"]);
    repo.write("b.md", "# b\n");
    repo.git(&["add", "b.md"]);
    repo.git(&["commit", "-qm", "b"]);
    assert_eq!(
        git_with_hook(&repo, &["push", "-q", "origin", "topic"]).code,
        0
    );
    repo.write("b.md", "# b TODO\n");
    repo.git(&["commit", "-qam", "todo"]);
    repo.git(&["checkout", "-q", "main"]);
    // Its failures print nothing, all alike: three attempts failing so
    // would ask for a person, which is not what this test is about.
    repo.config(
        "[gate]\nescalate_after = 10\n[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -q TODO {files}\" } ]\n",
    );
    let refused = git_with_hook(&repo, &["push", "-q", "origin", "topic"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stdout.contains("ran in a checkout of"),
        "{refused:?}"
    );
    let pushed = remote
        .command("git")
        .args(["show", "topic:b.md"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&pushed.stdout), "# b\n");

    // Every pushed ref is checked, a new branch with the files of the
    // commits the remote does not have: here the second ref, new and not
    // checked out, is bad.
    repo.git(&["checkout", "-qb", "fresh"]);
    repo.write("c.md", "# c TODO\n");
    repo.git(&["add", "c.md"]);
    repo.git(&["commit", "-qm", "c"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.md", "# a, fine\n");
    repo.git(&["commit", "-qam", "a"]);
    let refused = git_with_hook(&repo, &["push", "-q", "origin", "main", "fresh"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert_eq!(
        refused.stdout.matches("phasegate · phase").count(),
        2,
        "one run per ref: {refused:?}"
    );
    assert!(
        refused.stdout.contains("ran in a checkout of"),
        "{refused:?}"
    );
    let fresh = remote
        .command("git")
        .args(["rev-parse", "--verify", "-q", "fresh"])
        .output()
        .unwrap();
    assert!(fresh.stdout.is_empty(), "nothing was pushed");
    // `phasegate resume` checks that same commit again.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 1, "{v:#}");
    assert_eq!(v["selection"]["mode"], "range");
    assert_eq!(
        v["selection"]["to"].as_str().unwrap(),
        repo.git(&["rev-parse", "fresh"]).trim()
    );
    assert!(
        v["notes"].to_string().contains("ran in a checkout of"),
        "{v:#}"
    );
    repo.git(&["checkout", "-q", "fresh"]);
    repo.write("c.md", "# c\n");
    repo.git(&["commit", "-qam", "c, done"]);
    repo.git(&["checkout", "-q", "main"]);
    let accepted = git_with_hook(&repo, &["push", "-q", "origin", "main", "fresh"]);
    assert_eq!(accepted.code, 0, "{accepted:?}");

    // Pushing the checked-out branch checks its commit, not uncommitted
    // work on top of it: unstaged changes are set aside meanwhile, and with
    // staged ones the checks run in a checkout of the commit.
    repo.write("a.md", "# a TODO\n");
    repo.git(&["commit", "-qam", "todo on main"]);
    repo.write("a.md", "# a, fixed but not committed\n");
    let refused = git_with_hook(&repo, &["push", "-q", "origin", "main"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert_eq!(repo.read("a.md"), "# a, fixed but not committed\n");
    repo.git(&["add", "a.md"]);
    let refused = git_with_hook(&repo, &["push", "-q", "origin", "main"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stdout.contains("staged changes"), "{refused:?}");
    assert_eq!(repo.read("a.md"), "# a, fixed but not committed\n");
}

#[test]
fn each_report_of_a_push_of_several_refs_says_which_ref_and_commits_it_checked() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"true\" } ]\n");
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let _remote = repo.bare_origin();
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    let run = git_with_hook(&repo, &["push", "-q", "origin", "main"]);
    assert_eq!(run.code, 0, "{run:?}");
    let old = repo.git(&["rev-parse", "main"]).trim().to_string();
    repo.write("a.md", "# a, again\n");
    repo.commit_all("two");
    let new = repo.git(&["rev-parse", "main"]).trim().to_string();
    repo.git(&["checkout", "-qb", "fresh"]);
    repo.write("c.md", "# c\n");
    repo.commit_all("c");
    let fresh = repo.git(&["rev-parse", "fresh"]).trim().to_string();
    repo.git(&["checkout", "-q", "main"]);

    let run = git_with_hook(&repo, &["push", "-q", "origin", "main", "fresh"]);
    assert_eq!(run.code, 0, "{run:?}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(said.matches("phasegate · phase").count(), 2, "{said}");
    assert!(
        said.contains(&format!(
            "files: 1 changed between {} (the merge base) and {} · pushing refs/heads/main",
            &old[..10],
            &new[..10]
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "files: 2 changed between {} (the merge base) and {} · pushing refs/heads/fresh",
            &old[..10],
            &fresh[..10]
        )),
        "{said}"
    );
}

#[test]
fn force_backs_up_an_earlier_kept_hook_and_never_deletes_one() {
    let repo = TestRepo::new();
    let dir = repo.path().join(".git/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pre-commit"), "#!/bin/sh\necho new foreign\n").unwrap();
    std::fs::write(
        dir.join("pre-commit.phasegate-chained"),
        "#!/bin/sh\necho older\n",
    )
    .unwrap();
    let refused = repo.phasegate(&["install"]);
    assert_eq!(refused.code, 2);
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    let run = repo.phasegate(&["install", "--force"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .contains("pre-commit.phasegate-chained.1: it no longer runs"),
        "{}",
        run.stdout
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit.phasegate-chained.1")).unwrap(),
        "#!/bin/sh\necho older\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit.phasegate-chained")).unwrap(),
        "#!/bin/sh\necho new foreign\n"
    );
}

#[test]
fn a_submodule_gets_its_own_hooks() {
    let inner = TestRepo::new();
    inner.write("lib.txt", "inner\n");
    inner.commit_all("inner");
    let outer = TestRepo::new();
    outer.add_submodule(&inner, "sub");
    let run = output(
        &outer
            .command(BIN)
            .arg("install")
            .current_dir(outer.path().join("sub"))
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(outer.exists(".git/modules/sub/hooks/pre-commit"));
    assert!(!outer.exists(".git/hooks/pre-commit"));
}

#[test]
fn a_check_running_git_in_its_own_repository_never_reaches_the_one_being_committed() {
    // git exports GIT_DIR and GIT_INDEX_FILE to hooks (from a linked
    // worktree, and for `git commit -a`); a test suite that makes a fixture
    // repository with `git init` would otherwise commit into the user's.
    let main = TestRepo::new();
    main.write("a.txt", "one\n");
    main.commit_all("one");
    let linked = main.linked_worktree("linked-env");
    let fixture = main.path().join(".git/fixture-repo");
    let script = format!(
        "mkdir -p '{f}' && cd '{f}' && git init -q && echo x > fixture.txt && git add fixture.txt \
         && git -c user.name=t -c user.email=t@example.com commit -qm fixture \
         && git config core.bare true && git config --get core.bare",
        f = fixture.display()
    );
    // A check that asks git what is staged can still reach git's temporary
    // index, by name.
    let staged = main.path().join(".git/staged-names");
    let config = format!(
        "[phases.implementation]\nchecks = [\n  {{ name = \"suite\", shell = true, command = {script:?} }},\n  {{ name = \"staged\", shell = true, command = \"GIT_INDEX_FILE=$PHASEGATE_GIT_INDEX_FILE git diff --cached --name-only > '{}'\" }},\n]\n",
        staged.display()
    );
    let in_linked = |args: &[&str]| {
        let mut git = main.command("git");
        git.args(args)
            .current_dir(&linked)
            .env("PHASEGATE_BIN", BIN);
        output(&git.output().unwrap())
    };
    std::fs::write(linked.join("phasegate.toml"), &config).unwrap();
    std::fs::write(linked.join("a.txt"), "two\n").unwrap();
    assert_eq!(in_linked(&["add", "phasegate.toml"]).code, 0);
    let install = main.phasegate_in(&linked, &["install"]);
    assert_eq!(install.code, 0, "{install:?}");

    let commit = in_linked(&["commit", "-qam", "two"]);
    assert_eq!(commit.code, 0, "{commit:?}");
    let files = in_linked(&["show", "--name-only", "--format=%s", "HEAD"]);
    assert_eq!(files.stdout, "two\n\na.txt\nphasegate.toml\n");
    assert_eq!(in_linked(&["ls-files"]).stdout, "a.txt\nphasegate.toml\n");
    assert_eq!(
        std::fs::read_to_string(&staged).unwrap(),
        "a.txt\nphasegate.toml\n",
        "`commit -a`'s own index, with a.txt in it"
    );
    assert_eq!(main.git(&["config", "--get", "core.bare"]), "false\n");
    let fixture_log = output(
        &main
            .command("git")
            .args(["log", "--format=%s"])
            .current_dir(&fixture)
            .output()
            .unwrap(),
    );
    assert_eq!(
        fixture_log.stdout, "fixture\n",
        "the check made its own repository"
    );
    main.git(&["worktree", "remove", "--force", &linked.to_string_lossy()]);
}

#[test]
fn a_bare_repository_with_a_separate_work_tree_is_gated_through_git_dir() {
    // The "dotfiles" layout: `git --git-dir=~/.cfg --work-tree=~`, with no
    // `.git` in the work tree. git names both to the hook.
    let home = TestRepo::plain();
    let store = TestRepo::plain();
    let git_dir = store.path().join("cfg");
    let dot = |args: &[&str]| {
        let mut git = home.command("git");
        git.arg(format!("--git-dir={}", git_dir.display()))
            .arg(format!("--work-tree={}", home.path().display()))
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .env("PHASEGATE_BIN", BIN);
        output(&git.output().unwrap())
    };
    assert_eq!(
        home.command("git")
            .args(["init", "-q", "--bare"])
            .arg(&git_dir)
            .status()
            .unwrap()
            .code(),
        Some(0)
    );
    home.write(".vimrc", "one\n");
    home.config(
        "[phases.implementation]\nchecks = [ { name = \"gate\", shell = true, cwd = \"sub\", command = \"git status --porcelain > ../status.out; ! grep -q bad ../.vimrc\" } ]\n",
    );
    home.write("sub/keep", "");
    assert_eq!(
        dot(&["add", ".vimrc", "phasegate.toml", "sub/keep"]).code,
        0
    );
    assert_eq!(dot(&["commit", "-qm", "one"]).code, 0);

    let install = home.phasegate_with(
        &["install"],
        &[
            ("GIT_DIR", &git_dir.to_string_lossy()),
            ("GIT_WORK_TREE", "."),
        ],
    );
    assert_eq!(install.code, 0, "{install:?}");
    assert!(git_dir.join("hooks/pre-commit").exists());
    let astray = home.phasegate_with(&["run"], &[("GIT_DIR", "no-such-repository")]);
    assert_eq!(astray.code, 2, "{astray:?}");
    assert!(
        astray.stderr.contains("GIT_DIR names") && astray.stderr.contains("no-such-repository"),
        "{astray:?}"
    );

    // A bad staged change is refused, though the work tree's is good.
    home.write(".vimrc", "bad\n");
    assert_eq!(dot(&["add", ".vimrc"]).code, 0);
    home.write(".vimrc", "good, unstaged\n");
    let refused = dot(&["commit", "-qm", "bad"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert_eq!(home.read(".vimrc"), "good, unstaged\n");
    // The check's own git saw the repository, with the unstaged change
    // set aside, from its own directory.
    assert_eq!(home.read("status.out"), "M  .vimrc\n?? status.out\n");

    // A good staged change goes through; the unstaged one stays.
    home.write(".vimrc", "good\n");
    assert_eq!(dot(&["add", ".vimrc"]).code, 0);
    home.write(".vimrc", "good\nmore, unstaged\n");
    let accepted = dot(&["commit", "-qm", "good"]);
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert_eq!(dot(&["show", "HEAD:.vimrc"]).stdout, "good\n");
    assert_eq!(home.read(".vimrc"), "good\nmore, unstaged\n");
}

#[test]
fn a_commit_git_prepared_before_a_killed_run_was_finished_is_refused() {
    // A run killed while the unstaged change is aside.
    let (repo, _) = killed_with_a_change_aside();

    // `commit -a` builds its index from the work tree as the kill left it:
    // the hook brings the change back, and refuses that commit.
    let before = commits(&repo);
    let refused = git_with_hook(&repo, &["commit", "-qam", "all"]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("run the commit again"),
        "{}",
        refused.stderr
    );
    assert_eq!(commits(&repo), before);
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
    // Run again, it commits what the user has.
    let again = git_with_hook(&repo, &["commit", "-qam", "all"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(repo.git(&["show", "HEAD:a.txt"]), "a3 unstaged\n");
}

#[test]
fn ctrl_c_at_git_commit_outside_the_checks_gives_the_work_tree_back_before_phasegate_exits() {
    for (step, _) in crate::git::PROTECT_STEPS {
        for presses in [1, 2] {
            let what = format!("{presses} Ctrl-C at `{step}`");
            let repo = crate::git::partially_staged_binary_and_crlf();
            assert_eq!(repo.phasegate(&["install"]).code, 0);
            let before = crate::git::snapshot(&repo);
            let commits_before = commits(&repo);
            let marker = repo.path().join(".git/phasegate/paused");
            // git in a process group of its own, the terminal's foreground
            // group: Ctrl-C reaches git, the hook and phasegate at once.
            let git = {
                use std::os::unix::process::CommandExt;
                let mut command = repo.command("git");
                command
                    .args(["commit", "-qm", "two"])
                    .env("PHASEGATE_BIN", BIN)
                    .env("PHASEGATE_TEST_PAUSE_AT", step)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .process_group(0);
                command.spawn().unwrap()
            };
            let group = git.id();
            crate::support::wait_for_pause(&marker, step);
            // phasegate's own process, as its journal names it: git may be
            // gone before it.
            let journal = std::fs::read_dir(repo.path().join(".git/phasegate/protect"))
                .unwrap()
                .map(|d| d.unwrap().path().join("journal.json"))
                .find(|j| j.exists())
                .unwrap();
            let journal: serde_json::Value =
                serde_json::from_slice(&std::fs::read(journal).unwrap()).unwrap();
            let phasegate = u32::try_from(journal["pid"].as_u64().unwrap()).unwrap();
            for _ in 0..presses {
                crate::git::send_signal("INT", group, true);
            }
            let git = crate::git::exited(git, &what);
            assert!(!git.status.success(), "{what}: the commit must not go on");
            crate::support::wait_for(&format!("{what}: phasegate to exit"), || {
                crate::support::process_gone(phasegate).then_some(())
            });

            assert_eq!(
                crate::git::snapshot(&repo),
                before,
                "{what}: the work tree and index"
            );
            assert_eq!(crate::git::journals_left(&repo), 0, "{what}");
            assert_eq!(commits(&repo), commits_before, "{what}");
        }
    }
}

#[test]
fn ctrl_c_during_a_pushed_refs_checks_checks_no_later_ref() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n").commit_all("one");
    // Each pushed ref checks the work tree, its unstaged change set aside.
    repo.write("a.txt", "a2 unstaged\n");
    let starts = repo.home().join(format!(
        "starts-{}.out",
        repo.path().file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_file(&starts);
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, command = \"echo started >> '{}'; sleep 300\" }} ]\n",
        starts.display()
    ));
    repo.git(&["add", "phasegate.toml"]);
    repo.git(&["commit", "-qm", "gate", "--", "phasegate.toml"]);
    let before = crate::git::snapshot(&repo);
    let head = repo.git(&["rev-parse", "HEAD"]);
    // Another commit: refs that check the same commits are checked once.
    let first = repo.git(&["rev-parse", "HEAD~1"]);
    let zero = "0".repeat(40);
    let refs = format!(
        "refs/heads/main {head} refs/heads/main {zero}\nrefs/heads/other {first} refs/heads/other {zero}\n",
        head = head.trim(),
        first = first.trim()
    );
    let mut child = {
        use std::os::unix::process::CommandExt;
        let mut command = repo.command(BIN);
        command
            .args(["hook", "pre-push", "origin", "/nowhere"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        command.spawn().unwrap()
    };
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(refs.as_bytes()).unwrap();
    }
    crate::support::wait_for("the first ref's check", || starts.exists().then_some(()));
    crate::git::send_signal("INT", child.id(), true);
    let output = crate::git::exited(child, "Ctrl-C during the first ref's check");
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        std::fs::read_to_string(&starts).unwrap(),
        "started\n",
        "the second ref's check must not start"
    );
    // Nor is the second ref's run begun: one run, and a word that it was
    // not checked.
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("`refs/heads/other` was not checked: interrupted"),
        "{said}"
    );
    let runs = std::fs::read_dir(repo.path().join(".git/phasegate/runs"))
        .unwrap()
        .count();
    assert_eq!(runs, 1, "{said}");
    assert_eq!(crate::git::snapshot(&repo), before);
    let _ = std::fs::remove_file(&starts);
}

#[test]
fn configuration_git_takes_from_the_environment_is_phasegate_s_too() {
    // `core.hooksPath` in the file GIT_CONFIG_GLOBAL names: install writes
    // where git will look, and the gate holds.
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").commit_all("one");
    let hooks = repo.home().join(format!(
        "global-hooks-{}",
        repo.path().file_name().unwrap().to_string_lossy()
    ));
    repo.global_git_config(&format!("[core]\n\thooksPath = {}\n", hooks.display()));
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{}", install.stderr);
    assert!(hooks.join("pre-commit").exists(), "{}", install.stdout);
    assert!(!repo.path().join(".git/hooks/pre-commit").exists());
    gate(&repo, "false");
    repo.stage("b.txt", "b\n");
    let before = commits(&repo);
    assert_ne!(git_with_hook(&repo, &["commit", "-qm", "blocked"]).code, 0);
    assert_eq!(commits(&repo), before);
    std::fs::remove_dir_all(&hooks).unwrap();

    // A filter given with `git -c`: the check reads the content the
    // filter gives the work tree, as it would with the filter configured.
    let repo = TestRepo::new();
    repo.write(".gitattributes", "*.sec filter=rot\n");
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", command = \"grep -q secret s.sec\" } ]\n",
    );
    let rot = [
        "-c",
        "filter.rot.clean=tr a-z n-za-m",
        "-c",
        "filter.rot.smudge=tr a-z n-za-m",
    ];
    let git_c = |args: &[&str]| {
        let all: Vec<&str> = rot.iter().chain(args).copied().collect();
        git_with_hook(&repo, &all)
    };
    repo.write("s.sec", "secret one\nx\n");
    assert_eq!(git_c(&["add", "-A"]).code, 0);
    assert_eq!(git_c(&["commit", "-qm", "one", "--no-verify"]).code, 0);
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    // Partially staged: the check reads the staged content, smudged.
    repo.write("s.sec", "secret two\nx\n");
    assert_eq!(git_c(&["add", "s.sec"]).code, 0);
    repo.write("s.sec", "secret two\ny\n");
    let commit = git_c(&["commit", "-qm", "two"]);
    assert_eq!(commit.code, 0, "{}", commit.stderr);
    assert_eq!(repo.read("s.sec"), "secret two\ny\n");
}

#[test]
fn a_merge_git_commits_by_itself_goes_through_the_gate_too() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").commit_all("one");
    repo.git(&["checkout", "-qb", "topic"]);
    repo.write("b.txt", "b\n").commit_all("topic");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("c.txt", "c\n").commit_all("main moves on");
    gate(&repo, "test ! -f b.txt");
    repo.commit_all("gate");
    let install = repo.phasegate(&["install"]);
    assert_eq!(install.code, 0, "{}", install.stderr);
    assert!(
        repo.exists(".git/hooks/pre-merge-commit"),
        "{}",
        install.stdout
    );
    // No conflict: git makes the merge commit without pre-commit.
    let before = commits(&repo);
    let merge = git_with_hook(&repo, &["merge", "-q", "--no-edit", "topic"]);
    assert_ne!(merge.code, 0, "{}", merge.stderr);
    assert_eq!(commits(&repo), before);
    // A merge the gate accepts goes through.
    git_with_hook(&repo, &["merge", "--abort"]);
    gate(&repo, "true");
    repo.commit_all("open the gate");
    let merge = git_with_hook(&repo, &["merge", "-q", "--no-edit", "topic"]);
    assert_eq!(merge.code, 0, "{}", merge.stderr);
    assert_eq!(repo.phasegate(&["uninstall"]).code, 0);
    assert!(!repo.exists(".git/hooks/pre-merge-commit"));
}

#[test]
fn a_kept_hook_that_finds_its_files_by_its_own_name_still_runs() {
    let executable = |repo: &TestRepo, path: &str| {
        let full = repo.path().join(path);
        std::fs::set_permissions(full, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // husky 9: every hook in `.husky/_` reads `h` beside it, which runs the
    // project's hook of the same name, `.husky/$(basename "$0")`.
    let repo = TestRepo::new();
    repo.write(
        ".husky/_/h",
        "n=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n",
    )
    .write(".husky/_/pre-commit", "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n")
    .write(".husky/pre-commit", "echo husky >> .git/ran\ngrep -q ok a.txt\n");
    executable(&repo, ".husky/_/pre-commit");
    repo.git(&["config", "core.hooksPath", ".husky/_"]);
    gate(&repo, "echo gate >> .git/ran");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.stage("a.txt", "not yet\n");
    let refused = git_with_hook(&repo, &["commit", "-qm", "refused"]);
    assert_ne!(
        refused.code, 0,
        "the project's hook refuses it: {refused:?}"
    );
    assert_eq!(repo.read(".git/ran"), "husky\n");
    repo.stage("a.txt", "ok\n");
    let accepted = git_with_hook(&repo, &["commit", "-qm", "accepted"]);
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert_eq!(repo.read(".git/ran"), "husky\nhusky\ngate\n");

    // husky 5 to 8: the project's hook runs itself again, `sh -e "$0"`, from
    // the husky.sh it reads; each hook still runs once.
    let repo = TestRepo::new();
    repo.write(
        ".husky/_/husky.sh",
        "if [ -z \"$husky_skip_init\" ]; then\n  export husky_skip_init=1\n  sh -e \"$0\" \"$@\"\n  exit $?\nfi\n",
    )
    .write(
        ".husky/pre-commit",
        "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\necho husky >> .git/ran\n",
    );
    executable(&repo, ".husky/pre-commit");
    repo.git(&["config", "core.hooksPath", ".husky"]);
    gate(&repo, "echo gate >> .git/ran");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.stage("a.txt", "a\n");
    let run = git_with_hook(&repo, &["commit", "-qm", "one"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read(".git/ran"), "husky\ngate\n");
}

#[test]
fn a_commit_in_a_repository_whose_path_is_not_utf8_keeps_its_invocation_records() {
    use std::os::unix::ffi::OsStrExt;
    let outer = TestRepo::plain();
    let dir = outer.path().join(std::ffi::OsStr::from_bytes(b"lat\xe9in"));
    std::fs::create_dir(&dir).unwrap();
    let git = |args: &[&str]| {
        let mut git = outer.command("git");
        git.args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&dir)
            .env("PHASEGATE_BIN", BIN);
        output(&git.output().unwrap())
    };
    assert_eq!(git(&["init", "-q"]).code, 0);
    std::fs::write(
        dir.join("phasegate.toml"),
        "[phases.implementation]\nchecks = [ { name = \"gate\", command = \"true\" } ]\n",
    )
    .unwrap();
    assert_eq!(git(&["add", "phasegate.toml"]).code, 0);
    assert_eq!(outer.phasegate_in(&dir, &["install"]).code, 0);
    let commit = git(&["commit", "-qm", "one"]);
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(!commit.stderr.contains("failed to write"), "{commit:?}");
    let runs: Vec<_> = std::fs::read_dir(dir.join(".git/phasegate/runs"))
        .unwrap()
        .map(|run| run.unwrap().path().join("gate.json"))
        .collect();
    assert!(
        matches!(runs.as_slice(), [record] if record.exists()),
        "{runs:?}"
    );
}

#[test]
fn installing_over_a_hook_the_repository_tracks_warns() {
    let repo = TestRepo::new();
    repo.write(".githooks/pre-commit", "#!/bin/sh\necho team hook\n")
        .commit_all("team hooks");
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("is a file of this repository"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("uninstall"), "{}", run.stderr);
    // An untracked hooks directory gets no such warning.
    let other = TestRepo::new();
    other.git(&["config", "core.hooksPath", ".githooks"]);
    let run = other.phasegate(&["install", "--hook", "pre-commit"]);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
}

#[test]
fn pre_push_over_a_commit_never_fetched_and_of_a_tag_of_a_tree_is_let_through() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -q TODO {files}\" } ]\n");
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    // Someone else pushes; this clone never fetches it and force-pushes
    // over it.
    let other = TestRepo::new();
    other.git(&["pull", "-q", &remote.path().to_string_lossy(), "main"]);
    other.write("b.md", "# theirs\n");
    other.commit_all("theirs");
    other.git(&["push", "-q", &remote.path().to_string_lossy(), "main"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    repo.write("c.md", "# c\n");
    repo.commit_all("mine");
    let pushed = git_with_hook(&repo, &["push", "-q", "--force", "origin", "main"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(pushed.stderr.contains("never fetched"), "{pushed:?}");
    let head = repo.git(&["rev-parse", "main"]);
    let on_remote = remote
        .command("git")
        .args(["rev-parse", "main"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&on_remote.stdout), head);
    // Every file of the pushed commit is checked then: a bad one stops it.
    other.write("d.md", "# theirs again\n");
    other.commit_all("theirs again");
    other.git(&[
        "push",
        "-q",
        "--force",
        &remote.path().to_string_lossy(),
        "main",
    ]);
    repo.write("a.md", "# a TODO\n");
    repo.commit_all("todo");
    let refused = git_with_hook(&repo, &["push", "-q", "--force", "origin", "main"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stdout.contains("failed"), "{refused:?}");

    // A tag of a tree has no commit to check: it is pushed.
    repo.git(&["tag", "tree-tag", "HEAD^{tree}"]);
    let pushed = git_with_hook(&repo, &["push", "-q", "origin", "tree-tag"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(pushed.stderr.contains("is a tree"), "{pushed:?}");
}

#[test]
fn a_split_index_stops_a_real_commit_with_the_way_to_turn_it_off() {
    // git names its index for the hook (GIT_INDEX_FILE), and opening the
    // repository with it reads it at once.
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    gate(&repo, "true");
    repo.commit_all("one");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.git(&["config", "core.splitIndex", "true"]);
    repo.git(&["update-index", "--split-index"]);
    repo.stage("a.txt", "b\n");
    let run = git_with_hook(&repo, &["commit", "-qm", "two"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("uses a split index")
            && run.stderr.contains("git update-index --no-split-index"),
        "{}",
        run.stderr
    );
    assert_eq!(commits(&repo), 1);
}

#[test]
fn a_new_branch_is_pushed_with_the_files_of_the_commits_the_remote_lacks() {
    let repo = TestRepo::new();
    // An old file breaks today's rule; it is on the remote already.
    repo.write("old.md", "# old TODO\n");
    repo.commit_all("before the rule");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -q TODO {files}\" } ]\n");
    repo.git(&["add", "phasegate.toml"]);
    repo.git(&["commit", "-qm", "the rule"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);

    repo.git(&["checkout", "-qb", "topic"]);
    repo.write("new.md", "# new\n");
    repo.git(&["add", "new.md"]);
    repo.git(&["commit", "-qm", "new"]);
    let pushed = git_with_hook(&repo, &["push", "-q", "origin", "topic"]);
    assert_eq!(
        pushed.code, 0,
        "only what the branch adds is checked: {pushed:?}"
    );

    // What it adds is checked.
    repo.git(&["checkout", "-qb", "bad"]);
    repo.write("bad.md", "# bad TODO\n");
    repo.git(&["add", "bad.md"]);
    repo.git(&["commit", "-qm", "bad"]);
    let refused = git_with_hook(&repo, &["push", "-q", "origin", "bad"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    let on_remote = remote
        .command("git")
        .args(["rev-parse", "--verify", "-q", "bad"])
        .output()
        .unwrap();
    assert!(on_remote.stdout.is_empty(), "nothing was pushed");
}

#[test]
fn a_push_the_remote_shares_no_history_with_checks_every_file_of_the_commit() {
    let repo = TestRepo::new();
    let rule = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -H TODO {files}\" } ]\n";
    repo.config(rule);
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);

    // A new history, force-pushed over the remote's: there is no range,
    // so every file of the commit is checked, the bad one among them.
    repo.git(&["checkout", "-q", "--orphan", "rewrite"]);
    repo.git(&["rm", "-rfq", "."]);
    repo.config(rule);
    repo.write("old.md", "# old TODO\n");
    repo.commit_all("rewritten");
    repo.write("new.md", "# new\n");
    repo.commit_all("more");
    let refused = git_with_hook(&repo, &["push", "-q", "-f", "origin", "rewrite:main"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stderr.contains("shares no history") && refused.stdout.contains("old.md"),
        "{refused:?}"
    );
    repo.write("old.md", "# old\n");
    repo.commit_all("fixed");
    let pushed = git_with_hook(&repo, &["push", "-q", "-f", "origin", "rewrite:main"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");

    // A second remote, empty and never fetched: no remote-tracking ref says
    // what it has, so what `origin` has says where the branch's own
    // commits start; `a.md`, on `origin` already, is not among them.
    let backup = TestRepo::bare();
    repo.git(&["remote", "add", "backup", &backup.path().to_string_lossy()]);
    repo.git(&["checkout", "-qb", "topic", "main"]);
    repo.write("a.md", "# a TODO\n");
    repo.git(&["commit", "-qam", "todo, on origin too"]);
    repo.git(&["push", "-q", "--no-verify", "origin", "topic"]);
    repo.write("b.md", "# b\n");
    repo.commit_all("b");
    let pushed = git_with_hook(&repo, &["push", "-q", "backup", "topic"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(
        pushed
            .stderr
            .contains("`backup` has no remote-tracking refs here")
            && !pushed.stdout.contains("a.md"),
        "{pushed:?}"
    );
    // Pushed to origin's URL, the branch is checked against what origin has.
    let url = remote.path().to_string_lossy().into_owned();
    let pushed = git_with_hook(&repo, &["push", "-q", &url, "topic"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
}

#[test]
fn a_repository_whose_dot_git_is_a_file_or_a_link_is_checked_in_its_own_work_tree() {
    // `git init --separate-git-dir` writes `.git` as a file; some keep it
    // as a link. The work tree is where `.git` is, never the git
    // directory's parent, where a file of the same name is someone else's.
    for layout in ["file", "link"] {
        let repo = TestRepo::new();
        let elsewhere = tempfile::tempdir().unwrap();
        let git_dir = elsewhere.path().join("proj.git");
        std::fs::rename(repo.path().join(".git"), &git_dir).unwrap();
        if layout == "file" {
            repo.write(".git", &format!("gitdir: {}\n", git_dir.display()));
        } else {
            std::os::unix::fs::symlink(&git_dir, repo.path().join(".git")).unwrap();
        }
        let private = elsewhere.path().join("README");
        std::fs::write(&private, "not in any repository\n").unwrap();
        gate(&repo, "pwd > seen-dir.txt; cat README > seen-readme.txt");
        repo.write("README", "one\n");
        repo.git(&["add", "README", "phasegate.toml"]);
        repo.git(&["commit", "-qm", "one"]);
        assert_eq!(repo.phasegate(&["install"]).code, 0, "{layout}");
        repo.stage("README", "staged\n");
        repo.write("README", "unstaged\n");
        let run = git_with_hook(&repo, &["commit", "-qm", "two"]);
        assert_eq!(run.code, 0, "{layout}: {run:?}");
        assert_eq!(
            repo.read("seen-dir.txt").trim(),
            repo.path().to_string_lossy(),
            "{layout}"
        );
        assert_eq!(repo.read("seen-readme.txt"), "staged\n", "{layout}");
        assert_eq!(repo.read("README"), "unstaged\n", "{layout}");
        assert_eq!(
            std::fs::read_to_string(&private).unwrap(),
            "not in any repository\n",
            "{layout}"
        );
        assert!(!elsewhere.path().join("seen-dir.txt").exists(), "{layout}");
    }
}

/// `phasegate ARGS` in `repo`, or a failure (not a hang) when it has not
/// ended within a minute: it is killed then.
fn phasegate_within_a_minute(repo: &TestRepo, args: &[&str]) -> crate::support::Run {
    let mut child = repo
        .command(BIN)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed().as_secs() >= 60 {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("`phasegate {}` hangs", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    output(&child.wait_with_output().unwrap())
}

/// The directory a killed run set its unstaged changes aside in.
fn protect_dir(repo: &TestRepo) -> std::path::PathBuf {
    std::fs::read_dir(repo.path().join(".git/phasegate/protect"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .find(|d| d.is_dir())
        .unwrap()
}

/// A repository whose run was killed while `a.txt`'s unstaged change
/// (`a3 unstaged`) was set aside; the directory holding it.
fn killed_with_a_change_aside() -> (TestRepo, std::path::PathBuf) {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n").commit_all("one");
    gate(&repo, "true");
    repo.commit_all("gate");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.stage("a.txt", "a2 staged\n")
        .write("a.txt", "a3 unstaged\n");
    repo.kill_run_at("checked-out", &["run"]);
    assert_eq!(repo.read("a.txt"), "a2 staged\n");
    let dir = protect_dir(&repo);
    (repo, dir)
}

#[test]
fn saved_changes_whose_journal_is_gone_are_kept_and_said_where_and_later_commits_go_on() {
    let (repo, dir) = killed_with_a_change_aside();
    std::fs::remove_file(dir.join("journal.json")).unwrap();

    let restore = repo.phasegate(&["restore"]);
    assert_eq!(restore.code, 3, "{restore:?}");
    let kept = repo.path().join(format!(
        ".git/phasegate/kept/{}-not-restored",
        dir.file_name().unwrap().to_string_lossy()
    ));
    assert!(
        restore.stderr.contains("is missing") && restore.stderr.contains("Nothing was deleted"),
        "{}",
        restore.stderr
    );
    assert!(
        restore.stderr.contains(&kept.display().to_string()),
        "{}",
        restore.stderr
    );
    assert_eq!(
        std::fs::read_to_string(kept.join("saved")).unwrap(),
        "a3 unstaged\n"
    );
    assert!(std::fs::read_to_string(kept.join("NOTE.txt"))
        .unwrap()
        .contains("saved"));

    // Out of the way now: nothing is held up, and the copies stay.
    let again = repo.phasegate(&["restore"]);
    assert_eq!(again.code, 0, "{again:?}");
    let commit = git_with_hook(&repo, &["commit", "-qm", "two"]);
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(kept.join("saved").exists());
}

#[test]
fn a_damaged_journal_stops_once_saying_where_the_copies_are_and_is_kept() {
    let (repo, dir) = killed_with_a_change_aside();
    let journal = dir.join("journal.json");
    let torn = std::fs::read(&journal).unwrap()[..40].to_vec();
    std::fs::write(&journal, &torn).unwrap();

    let commit = git_with_hook(&repo, &["commit", "-qm", "two"]);
    assert_ne!(commit.code, 0, "{commit:?}");
    assert!(
        commit.stderr.contains("cannot be read") && commit.stderr.contains("Nothing was deleted"),
        "{}",
        commit.stderr
    );
    let kept = repo.path().join(format!(
        ".git/phasegate/kept/{}-not-restored",
        dir.file_name().unwrap().to_string_lossy()
    ));
    assert!(
        commit.stderr.contains(&kept.display().to_string()),
        "{}",
        commit.stderr
    );
    assert_eq!(std::fs::read(kept.join("journal.json")).unwrap(), torn);
    assert_eq!(
        std::fs::read_to_string(kept.join("saved")).unwrap(),
        "a3 unstaged\n"
    );
    // Said once: the next commit goes on.
    let again = git_with_hook(&repo, &["commit", "-qm", "two"]);
    assert_eq!(again.code, 0, "{again:?}");
}

#[test]
fn a_named_pipe_a_check_leaves_where_a_file_was_never_makes_the_restore_wait() {
    let repo = TestRepo::new();
    repo.write("a.txt", "base\n").commit_all("one");
    gate(&repo, "rm a.txt; mkfifo a.txt");
    repo.commit_all("gate");
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "unstaged work\n");

    let run = phasegate_within_a_minute(&repo, &["hook", "pre-commit"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(std::fs::symlink_metadata(repo.path().join("a.txt"))
        .unwrap()
        .is_file());
    assert_eq!(repo.read("a.txt"), "unstaged work\n", "{run:?}");
    assert_eq!(repo.git(&["show", ":a.txt"]), "staged\n");
}

#[test]
fn a_named_pipe_at_a_tracked_path_stops_the_run_at_once_saying_what_to_move() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n")
        .write("b.txt", "b\n")
        .commit_all("one");
    gate(&repo, "true");
    repo.commit_all("gate");
    repo.stage("b.txt", "b staged\n")
        .write("b.txt", "b unstaged\n");
    std::fs::remove_file(repo.path().join("a.txt")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(repo.path().join("a.txt"))
        .status()
        .unwrap();
    assert!(fifo.success());

    let run = phasegate_within_a_minute(&repo, &["hook", "pre-commit"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains("a named pipe") && run.stderr.contains("Move it away"),
        "{}",
        run.stderr
    );
    assert_eq!(repo.read("b.txt"), "b unstaged\n");
}

#[test]
fn a_directory_a_check_leaves_where_a_file_was_goes_to_the_runs_dropped_files() {
    let repo = TestRepo::new();
    repo.write("a.txt", "base\n").commit_all("one");
    gate(&repo, "rm a.txt; mkdir a.txt; echo gen > a.txt/gen");
    repo.commit_all("gate");
    repo.stage("a.txt", "staged\n")
        .write("a.txt", "user work\n");

    let run = repo.phasegate(&["hook", "pre-commit"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert_eq!(repo.read("a.txt"), "user work\n", "{run:?}");
    let dropped = std::fs::read_dir(repo.path().join(".git/phasegate/runs"))
        .unwrap()
        .map(|d| d.unwrap().path().join("dropped/a.txt/gen"))
        .find(|gen| gen.exists())
        .unwrap_or_else(|| panic!("the check's directory is kept: {run:?}"));
    assert_eq!(std::fs::read_to_string(dropped).unwrap(), "gen\n");
    assert_eq!(crate::git::journals_left(&repo), 0);
    let restore = repo.phasegate(&["restore"]);
    assert_eq!(restore.code, 0, "{restore:?}");
}

#[test]
fn saved_copies_deleted_or_cut_short_are_said_once_and_the_others_come_back() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n")
        .write("b.txt", "b1\n")
        .commit_all("one");
    gate(&repo, "true");
    repo.commit_all("gate");
    repo.stage("a.txt", "a2 staged\n")
        .stage("b.txt", "b2 staged\n")
        .write("a.txt", "a3 unstaged\n")
        .write("b.txt", "b3 unstaged\n");
    repo.kill_run_at("checked-out", &["run"]);
    let dir = protect_dir(&repo);
    // `b.txt`'s copy is cut off the end of the saved copies.
    let journal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("journal.json")).unwrap()).unwrap();
    let b = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == serde_json::json!(b"b.txt".to_vec()))
        .unwrap();
    let offset = b["range"][0].as_u64().unwrap();
    let saved = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("saved"))
        .unwrap();
    saved.set_len(offset).unwrap();

    let restore = repo.phasegate(&["restore"]);
    assert_eq!(restore.code, 3, "{restore:?}");
    assert!(
        restore.stderr.contains("b.txt: their saved copies")
            && restore.stderr.contains("missing or cut short")
            && restore.stderr.contains("a.txt"),
        "{}",
        restore.stderr
    );
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
    assert_eq!(repo.read("b.txt"), "b2 staged\n");
    let kept = repo.path().join(format!(
        ".git/phasegate/kept/{}-not-restored",
        dir.file_name().unwrap().to_string_lossy()
    ));
    assert!(std::fs::read_to_string(kept.join("NOTE.txt"))
        .unwrap()
        .contains("    b.txt\n"));
    assert!(kept.join("journal.json").exists());

    // Said once: later runs and commits go on.
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");

    // With the whole file of copies gone, nothing comes back, and no run
    // is held up after the one that says so.
    repo.write("b.txt", "b4 unstaged\n");
    repo.kill_run_at("checked-out", &["run"]);
    let dir = protect_dir(&repo);
    std::fs::remove_file(dir.join("saved")).unwrap();
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains("a.txt, b.txt: their saved copies"),
        "{}",
        run.stderr
    );
    let commit = git_with_hook(&repo, &["commit", "-qm", "two"]);
    assert_eq!(commit.code, 0, "{commit:?}");
}

#[test]
fn a_phasegate_hook_kept_as_the_earlier_hook_is_not_run_and_commits_end() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").commit_all("one");
    gate(&repo, "true");
    repo.commit_all("gate");
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    for hook in ["pre-commit", "pre-push"] {
        let hooks = repo.path().join(".git/hooks");
        if hook == "pre-push" {
            assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
        }
        // Copied where phasegate keeps the hook that was there before it.
        std::fs::copy(
            hooks.join(hook),
            hooks.join(format!("{hook}.phasegate-chained")),
        )
        .unwrap();
    }
    repo.write("a.txt", "b\n");
    repo.git(&["add", "a.txt"]);
    let mut git = repo.command("git");
    git.args(["commit", "-qm", "two"])
        .env("PHASEGATE_BIN", BIN)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = git.spawn().unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed().as_secs() >= 60 {
            child.kill().unwrap();
            panic!("the commit runs its own hook without end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let commit = crate::support::output(&child.wait_with_output().unwrap());
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(
        commit.stderr.contains("is a phasegate hook itself"),
        "{}",
        commit.stderr
    );
    // The pre-push hook's copy is skipped the same way.
    let _origin = repo.bare_origin();
    let push = git_with_hook(&repo, &["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{push:?}");
    assert!(
        push.stderr.contains("is a phasegate hook itself"),
        "{}",
        push.stderr
    );
}
