//! Install and uninstall on symlinked hooks, read-only hook directories, per-worktree hook paths, submodules and husky.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::install_more::hook_files;
use crate::install_shared::run_husky;
use crate::support::{output, wait_for_pause, write_mode, Run, TestRepo, BIN};

/// A block check that appends a line to `runs` (a file outside the
/// repository) and passes: the number of lines is the number of times the
/// gate ran.
fn counting_gate(repo: &TestRepo, runs: &Path) {
    repo.config(&format!(
        "[commands]\ntests = \"sh -c 'echo ran >> {}'\"\n\n[phases.implementation]\nchecks = [{{ name = \"tests\", on_failure = \"block\" }}]\n",
        runs.display()
    ));
}

/// How many times the gate ran (see `counting_gate`).
fn gate_runs(runs: &Path) -> usize {
    std::fs::read_to_string(runs).map_or(0, |text| text.lines().count())
}

/// `git commit` of a new file in `dir`, with a `PATH` of the system's
/// tools and `extra` before them: what it did.
fn commit_in(repo: &TestRepo, dir: &Path, extra: Option<&Path>, file: &str) -> Run {
    std::fs::write(dir.join(file), format!("{file}\n")).unwrap();
    repo.git_at(dir, &["add", "--", file]);
    let path = match extra {
        Some(extra) => format!("{}:/usr/bin:/bin", extra.display()),
        None => "/usr/bin:/bin".to_string(),
    };
    output(
        &repo
            .command("git")
            .args(["commit", "-q", "-m", file])
            .current_dir(dir)
            .env("PATH", path)
            .output()
            .unwrap(),
    )
}

/// The directory of the phasegate under test, to put on `PATH`.
fn bin_dir() -> &'static Path {
    Path::new(BIN).parent().unwrap()
}

#[test]
fn a_hook_that_is_a_link_to_a_tracked_script_is_chained_as_the_link_and_put_back_as_it() {
    let repo = TestRepo::new();
    let runs = repo.home().join("runs");
    counting_gate(&repo, &runs);
    let team = format!(
        "#!/bin/sh\necho team >> {}\n",
        repo.home().join("team").display()
    );
    write_mode(&repo.path().join("scripts/pre-commit"), &team, 0o755);
    repo.commit_all("team hook");
    let hooks = repo.path().join(".git/hooks");
    std::os::unix::fs::symlink("../../scripts/pre-commit", hooks.join("pre-commit")).unwrap();

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("still runs first"), "{run:?}");
    // The tracked script is not written through the link; the link itself
    // is what is kept.
    assert_eq!(repo.read("scripts/pre-commit"), team);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let kept = hooks.join("pre-commit.phasegate-chained");
    assert_eq!(
        std::fs::read_link(&kept).unwrap(),
        Path::new("../../scripts/pre-commit")
    );
    assert!(!std::fs::symlink_metadata(hooks.join("pre-commit"))
        .unwrap()
        .is_symlink());

    // phasegate's hook is a file of `.git/hooks`, no one else's: it runs
    // the phasegate that installed it when none is on PATH (a git GUI).
    let run = commit_in(&repo, &repo.path(), None, "a.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.home().join("team")).unwrap(),
        "team\n"
    );
    assert_eq!(gate_runs(&runs), 1, "{run:?}");

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_link(hooks.join("pre-commit")).unwrap(),
        Path::new("../../scripts/pre-commit")
    );
    assert_eq!(hook_files(&hooks), ["pre-commit"]);
    assert_eq!(repo.read("scripts/pre-commit"), team);
}

#[test]
fn a_hook_that_is_a_link_to_nowhere_is_kept_said_not_to_run_and_put_back() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    std::os::unix::fs::symlink("../../tools/pre-push", hooks.join("pre-push")).unwrap();

    let run = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "is a link to ../../tools/pre-push, which does not exist, so git did not run it"
        ) && !run.stdout.contains("still runs first"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_link(hooks.join("pre-push.phasegate-chained")).unwrap(),
        Path::new("../../tools/pre-push")
    );

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_link(hooks.join("pre-push")).unwrap(),
        Path::new("../../tools/pre-push")
    );
    assert_eq!(hook_files(&hooks), ["pre-push"]);
}

/// `phasegate ARGS` in `repo` as a user whom file permissions bind: as
/// root, without the capabilities that pass over them (`setpriv`). None
/// where that can not be done here.
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
fn phasegate_bound_by_permissions(repo: &TestRepo, args: &[&str]) -> Option<Run> {
    let mut command = if rustix::process::geteuid().is_root() {
        let mut command = repo.command("setpriv");
        command.args(["--bounding-set=-dac_override,-dac_read_search,-fowner", BIN]);
        command
    } else {
        repo.command(BIN)
    };
    let out = command.args(args).output().ok()?;
    let run = output(&out);
    if run.stderr.starts_with("setpriv:") {
        eprintln!("permissions can not be made to bind here, not checked: {run:?}");
        return None;
    }
    Some(run)
}

/// The name, mode and content (or link target) of each entry of `dir`.
fn listing(dir: &Path) -> Vec<(String, u32, String)> {
    hook_files(dir)
        .into_iter()
        .map(|name| {
            let path = dir.join(&name);
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let content = if meta.is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else {
                std::fs::read_to_string(&path).unwrap()
            };
            (name, meta.permissions().mode(), content)
        })
        .collect()
}

#[test]
fn a_hooks_directory_phasegate_can_not_write_is_refused_with_what_to_do_and_left_as_it_was() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    write_mode(&hooks.join("pre-commit"), "#!/bin/sh\necho mine\n", 0o755);
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = listing(&hooks);
    let Some(run) = phasegate_bound_by_permissions(&repo, &["install"]) else {
        std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    };
    let after = listing(&hooks);
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "`{}` is not writable for you: make it writable (`chmod u+w '{}'`",
            hooks.display(),
            hooks.display()
        )) && run.stderr.contains("no hook was changed"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    assert_eq!(after, before);

    // Installed, then the directory made read-only: uninstall is refused
    // the same way, and leaves phasegate's hook and the kept one as they
    // are.
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = listing(&hooks);
    let run = phasegate_bound_by_permissions(&repo, &["uninstall"]).unwrap();
    let after = listing(&hooks);
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("is not writable for you"), "{run:?}");
    assert_eq!(after, before);
}

#[test]
fn a_hooks_path_whose_parent_can_not_be_written_names_that_directory() {
    let repo = TestRepo::new();
    let locked = repo.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    repo.git(&["config", "core.hooksPath", "locked/hooks"]);
    let run = phasegate_bound_by_permissions(&repo, &["install"]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let Some(run) = run else {
        return;
    };
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "failed to create `{}/hooks`: `{}` is not writable for you",
            locked.display(),
            locked.display()
        )),
        "{run:?}"
    );
    assert_eq!(hook_files(&locked), Vec::<String>::new());
}

#[test]
fn a_read_only_hook_of_ones_own_is_chained_and_comes_back_read_only() {
    let repo = TestRepo::new();
    let runs = repo.home().join("runs");
    counting_gate(&repo, &runs);
    let hooks = repo.path().join(".git/hooks");
    let own = format!(
        "#!/bin/sh\necho own >> {}\n",
        repo.home().join("own").display()
    );
    write_mode(&hooks.join("pre-commit"), &own, 0o555);
    let Some(run) = phasegate_bound_by_permissions(&repo, &["install", "--hook", "pre-commit"])
    else {
        return;
    };
    assert_eq!(run.code, 0, "{run:?}");
    let run = commit_in(&repo, &repo.path(), Some(bin_dir()), "a.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.home().join("own")).unwrap(),
        "own\n"
    );
    assert_eq!(gate_runs(&runs), 1);
    let run = phasegate_bound_by_permissions(&repo, &["uninstall"]).unwrap();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        listing(&hooks),
        [("pre-commit".to_string(), 0o100_555, own)]
    );
}

#[test]
fn a_hooks_path_of_one_linked_worktree_is_where_install_there_writes_and_git_runs_it() {
    let repo = TestRepo::new();
    let runs = repo.home().join("runs");
    counting_gate(&repo, &runs);
    repo.commit_all("gate");
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    let linked = repo.linked_worktree("wt");
    let own_hooks = repo.home().join("wt-hooks");
    repo.git_at(
        &linked,
        &[
            "config",
            "--worktree",
            "core.hooksPath",
            &own_hooks.to_string_lossy(),
        ],
    );

    let run = repo.phasegate_in(&linked, &["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "installed the pre-commit hook: {}",
            own_hooks.join("pre-commit").display()
        )),
        "{run:?}"
    );
    assert_eq!(
        hook_files(&repo.path().join(".git/hooks")),
        Vec::<String>::new()
    );

    let run = commit_in(&repo, &linked, Some(bin_dir()), "linked.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(gate_runs(&runs), 1, "{run:?}");
    // The main work tree runs the shared hooks, which are not phasegate's.
    let run = commit_in(&repo, &repo.path(), Some(bin_dir()), "main.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(gate_runs(&runs), 1, "{run:?}");

    // A relative path is taken from the linked work tree's root.
    repo.git_at(
        &linked,
        &["config", "--worktree", "core.hooksPath", ".wt-hooks"],
    );
    let run = repo.phasegate_in(&linked, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(linked.join(".wt-hooks/pre-commit").is_file(), "{run:?}");
    let run = commit_in(&repo, &linked, Some(bin_dir()), "linked2.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(gate_runs(&runs), 2, "{run:?}");
}

#[test]
fn a_submodule_is_gated_where_git_runs_its_hooks_whatever_the_superproject_sets() {
    let inner = TestRepo::new();
    let runs = inner.home().join("runs");
    counting_gate(&inner, &runs);
    inner.commit_all("gate");
    let outer = TestRepo::new();
    outer.add_submodule(&inner, "sub");
    outer.commit_all("submodule");
    // The superproject's hooks are its own: git does not run them for the
    // submodule.
    outer.git(&["config", "core.hooksPath", ".githooks"]);
    let sub = outer.path().join("sub");
    outer.git_at(&sub, &["config", "user.email", "test@example.com"]);
    outer.git_at(&sub, &["config", "user.name", "Test"]);

    let run = outer.phasegate_in(&sub, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(outer.exists(".git/modules/sub/hooks/pre-commit"), "{run:?}");
    assert!(!outer.exists(".githooks"), "{run:?}");
    let run = commit_in(&outer, &sub, Some(bin_dir()), "one.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(gate_runs(&runs), 1, "{run:?}");

    // The submodule's own `core.hooksPath`, relative to its work tree.
    outer.git_at(&sub, &["config", "core.hooksPath", ".hooks"]);
    let run = outer.phasegate_in(&sub, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(sub.join(".hooks/pre-commit").is_file(), "{run:?}");
    let run = commit_in(&outer, &sub, Some(bin_dir()), "two.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(gate_runs(&runs), 2, "{run:?}");
}

#[test]
fn a_husky_hook_that_calls_phasegate_already_gets_no_second_run_from_install() {
    for line in ["phasegate hook pre-commit", "phasegate run"] {
        let repo = TestRepo::new();
        let runs = repo.home().join("runs");
        counting_gate(&repo, &runs);
        repo.write(
            "package.json",
            "{\"scripts\": {\"prepare\": \"husky\"}, \"devDependencies\": {\"husky\": \"^9.1.7\"}}\n",
        );
        repo.write(".husky/pre-commit", &format!("{line}\n"));
        repo.commit_all("husky");
        run_husky(&repo);

        let run = repo.phasegate(&["install"]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            run.stdout.contains(&format!(
                "the pre-commit gate runs already: {} calls phasegate",
                repo.path().join(".husky/pre-commit").display()
            )) && run.stdout.contains("so it is not installed"),
            "{line}: {run:?}"
        );
        assert!(
            !run.stderr.contains("`phasegate hook pre-commit`"),
            "{line}: {run:?}"
        );
        let stub = repo.read(".husky/_/pre-commit");
        assert!(!stub.contains("phasegate"), "{stub}");

        let run = commit_in(&repo, &repo.path(), Some(bin_dir()), "a.txt");
        assert_eq!(run.code, 0, "{line}: {run:?}");
        assert_eq!(gate_runs(&runs), 1, "{line}: {run:?}");
    }
}

#[test]
fn installing_again_once_the_husky_hook_calls_phasegate_takes_the_second_run_out() {
    let repo = TestRepo::new();
    let runs = repo.home().join("runs");
    counting_gate(&repo, &runs);
    repo.write(".husky/pre-commit", "echo lint\n");
    repo.commit_all("husky");
    run_husky(&repo);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    // The project's hook is given the line install's warning names.
    repo.write(
        ".husky/pre-commit",
        "echo lint\nphasegate hook pre-commit\n",
    );
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("it is removed, and the hook it replaced is back"),
        "{run:?}"
    );
    assert_eq!(
        repo.read(".husky/_/pre-commit"),
        "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\""
    );
    let before = gate_runs(&runs);
    let run = commit_in(&repo, &repo.path(), Some(bin_dir()), "b.txt");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(gate_runs(&runs) - before, 1, "{run:?}");
}

#[test]
fn an_install_that_waits_too_long_for_another_ones_lock_says_so_and_changes_nothing() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let own = "#!/bin/sh\necho my own hook\n";
    write_mode(&hooks.join("pre-commit"), own, 0o755);
    // The first install stops holding the lock on the hooks directory.
    let marker = repo.path().join(".git/phasegate/paused");
    let first = repo
        .command(BIN)
        .args(["install", "--hook", "pre-commit"])
        .env("PHASEGATE_TEST_PAUSE_AT", "install-keep")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_pause(&marker, "install-keep");
    let started = std::time::Instant::now();
    let second = repo.phasegate(&["install", "--hook", "pre-commit"]);
    let waited = started.elapsed();
    let uninstall = repo.phasegate(&["uninstall"]);
    let signalled = Command::new("kill")
        .args(["-INT", &first.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let first = output(&first.wait_with_output().unwrap());

    assert_eq!(second.code, 2, "{second:?}");
    assert!(
        second.stderr.contains(&format!(
            "another `phasegate install` or `phasegate uninstall` holds the lock on the hooks directory `{}`",
            hooks.display()
        )) && second.stderr.contains("then run this command again"),
        "{second:?}"
    );
    assert!(waited < std::time::Duration::from_secs(30), "{waited:?}");
    assert_eq!(uninstall.code, 2, "{uninstall:?}");
    assert!(uninstall.stderr.contains("holds the lock"), "{uninstall:?}");
    // The first install went on as if alone.
    assert_eq!(first.code, 0, "{first:?}");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit.phasegate-chained")).unwrap(),
        own
    );
    assert_eq!(
        hook_files(&hooks),
        ["pre-commit", "pre-commit.phasegate-chained"]
    );
}
