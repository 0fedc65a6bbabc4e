//! Installing and uninstalling the hooks, and the hook scripts themselves, in unusual repositories.

use std::path::Path;

use crate::support::{output, write_executable, TestRepo, BIN};

/// The names in `dir`, sorted, without git's `.sample` hooks.
pub(crate) fn hook_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".sample"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_phasegate_hook_changed_by_hand_is_kept_when_installed_again_and_never_chained_to_itself() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    let ours = std::fs::read_to_string(hooks.join("pre-commit")).unwrap();
    // Someone debugging the hook adds a line at the top, and one of their
    // own at the end.
    let edited = ours.replacen("#!/bin/sh\n", "#!/bin/sh\nset -x\n", 1) + "echo mine\n";
    write_executable(&hooks.join("pre-commit"), &edited);

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("already installed"), "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "it is kept as {}",
            hooks.join("pre-commit.phasegate-edited").display()
        )),
        "{run:?}"
    );
    // Chained to itself, the hook would run itself forever.
    assert_eq!(
        hook_files(&hooks),
        ["pre-commit", "pre-commit.phasegate-edited"],
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit.phasegate-edited")).unwrap(),
        edited
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
        ours
    );

    // Uninstalling a changed hook keeps it too, beside the first.
    let changed_again = ours.clone() + "echo changed again\n";
    write_executable(&hooks.join("pre-commit"), &changed_again);
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("removed the pre-commit hook"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit.phasegate-edited.1")).unwrap(),
        changed_again,
        "{run:?}"
    );
    assert!(!hooks.join("pre-commit").exists());

    // The hook as phasegate writes it goes without a copy.
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    assert_eq!(repo.phasegate(&["uninstall"]).code, 0);
    assert_eq!(
        hook_files(&hooks),
        [
            "pre-commit.phasegate-edited",
            "pre-commit.phasegate-edited.1"
        ]
    );
}

#[test]
fn a_hooks_path_where_git_runs_no_hook_is_refused_saying_how_to_reach_one() {
    let repo = TestRepo::new();
    // An empty value: git joins the hook's name to it and looks in `/`.
    repo.git(&["config", "core.hooksPath", ""]);
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("`core.hooksPath` is set to an empty value")
            && run
                .stderr
                .contains("run `git config --unset core.hooksPath`"),
        "{run:?}"
    );
    assert!(!repo.exists("pre-commit"), "{run:?}");

    // `/dev/null`, as set to turn hooks off.
    repo.git(&["config", "core.hooksPath", "/dev/null"]);
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("`/dev/null` is not a directory: `core.hooksPath` names it")
            && run.stderr.contains("git config --unset core.hooksPath"),
        "{run:?}"
    );

    // Set in the global configuration, it is unset there.
    repo.git(&["config", "--unset", "core.hooksPath"]);
    repo.global_git_config("[core]\n\thooksPath = /dev/null\n");
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("git config --global --unset core.hooksPath"),
        "{run:?}"
    );

    // A hooks directory that is a link to a directory not made yet.
    repo.global_git_config("");
    let hooks = repo.path().join(".git/hooks");
    std::fs::remove_dir_all(&hooks).unwrap();
    std::os::unix::fs::symlink("../../shared-hooks", &hooks).unwrap();
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "`{}` is a symbolic link to `../../shared-hooks`, which does not exist",
            hooks.display()
        )),
        "{run:?}"
    );
}

#[test]
fn a_hook_kept_by_an_install_whose_phasegate_hook_was_deleted_comes_back_at_uninstall() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let theirs = "#!/bin/sh\necho theirs >> \"$(git rev-parse --git-dir)/theirs-ran\"\n";
    write_executable(&hooks.join("pre-commit"), theirs);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    // phasegate's hook is deleted by hand: theirs waits under the name that
    // keeps it from running.
    std::fs::remove_file(hooks.join("pre-commit")).unwrap();

    // Installing again says that it runs again.
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("runs first again"), "{run:?}");
    std::fs::remove_file(hooks.join("pre-commit")).unwrap();

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("the hook it replaced is back"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit")).unwrap(),
        theirs
    );
    assert_eq!(hook_files(&hooks), ["pre-commit"]);
    repo.stage("a.txt", "a\n");
    let commit = output(
        &repo
            .command("git")
            .args(["commit", "-qm", "one"])
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    );
    assert_eq!(commit.code, 0, "{commit:?}");
    assert_eq!(repo.read(".git/theirs-ran"), "theirs\n");
}

#[test]
fn uninstalling_from_a_hooks_directory_of_the_global_configuration_says_it_is_shared() {
    let repo = TestRepo::new();
    let global = repo.global_git_config("");
    let shared = global.parent().unwrap().join("shared hooks");
    repo.git(&[
        "config",
        "--file",
        &global.to_string_lossy(),
        "core.hooksPath",
        &shared.to_string_lossy(),
    ]);
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("set in your global git configuration")
            && run.stderr.contains("removed for every repository"),
        "{run:?}"
    );
    assert!(!shared.join("pre-commit").exists());
}

#[test]
fn installing_again_leaves_a_link_to_a_tracked_phasegate_hook_a_link() {
    let repo = TestRepo::new();
    // The team keeps phasegate's hook in the repository...
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    repo.commit_all("team hooks");
    repo.git(&["config", "--unset", "core.hooksPath"]);
    // ...and one of them links to it from the repository's own hooks.
    let link = repo.path().join(".git/hooks/pre-commit");
    std::os::unix::fs::symlink("../../.githooks/pre-commit", &link).unwrap();
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("was already installed:"), "{run:?}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "{run:?}"
    );
}

#[test]
fn a_hook_an_earlier_version_of_phasegate_wrote_is_replaced_as_its_own() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hooks");
    for (hook, fail_closed) in [("pre-commit", "0"), ("pre-push", "1")] {
        let earliest = std::fs::read_to_string(fixtures.join(format!("{hook}.earliest"))).unwrap();
        write_executable(
            &hooks.join(hook),
            &earliest.replace("@FAIL_CLOSED@", fail_closed),
        );
        let mut args = vec!["install", "--hook", hook];
        if fail_closed == "1" {
            args.push("--fail-closed");
        }
        let run = repo.phasegate(&args);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("updated"), "{}", run.stdout);
        assert!(!run.stdout.contains("kept as"), "{}", run.stdout);
        assert!(!std::fs::read_to_string(hooks.join(hook))
            .unwrap()
            .contains("@FAIL_CLOSED@"));
    }
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-push"]);
}

#[test]
fn turning_the_pre_push_hook_fail_closed_speaks_of_pushes() {
    let repo = TestRepo::new();
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    let closed = repo.phasegate(&["install", "--hook", "pre-push", "--fail-closed"]);
    assert!(
        closed.stdout.contains("fail-closed now: pushes stop"),
        "{}",
        closed.stdout
    );
    let opened = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert!(
        opened.stdout.contains("now lets pushes through"),
        "{}",
        opened.stdout
    );
}
