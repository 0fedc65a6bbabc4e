//! Hooks and protection: per-worktree hook paths, uninstall, stashing checks, shared permissions.

use std::path::Path;

use crate::install_more::hook_files;
use crate::install_notes::canonical;
use crate::support::{write_executable, TestRepo};

#[test]
fn an_absolute_hooks_path_of_one_linked_work_tree_names_the_work_trees_left_ungated() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").commit_all("one");
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    let linked = repo.linked_worktree("own-absolute");
    let absolute = repo.home().join("own-hooks");
    repo.git_at(
        &linked,
        &[
            "config",
            "--worktree",
            "core.hooksPath",
            &absolute.to_string_lossy(),
        ],
    );

    let run = repo.phasegate_in(&linked, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(absolute.join("pre-commit").is_file(), "{run:?}");
    let main = canonical(&repo.path());
    assert!(
        run.stderr.contains(&format!(
            "note: core.hooksPath (`{}`) is set for this work tree alone (`git config --worktree`), so only the work trees it is set for run the hook installed there",
            absolute.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "`{}` runs the repository's shared hooks in `{}`, as no core.hooksPath is set for it; it is not gated; run `phasegate install` there too",
            main.display(),
            main.join(".git/hooks").display()
        )),
        "{run:?}"
    );
    // git agrees: the main work tree runs the shared hooks.
    assert_eq!(
        repo.git(&["rev-parse", "--git-path", "hooks"]).trim(),
        ".git/hooks"
    );

    // Once the main work tree is gated too, nothing is left to say.
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = repo.phasegate_in(&linked, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("not gated"), "{run:?}");
}

#[test]
fn uninstall_says_it_removed_a_kept_copy_of_the_hook_there_now() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let text = "#!/bin/sh\necho own check\n";
    write_executable(&hooks.join("pre-commit"), text);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    // A hook manager writes its hook again over phasegate's.
    write_executable(&hooks.join("pre-commit"), text);
    let kept = hooks.join("pre-commit.phasegate-chained");
    assert_eq!(
        hook_files(&hooks),
        ["pre-commit", "pre-commit.phasegate-chained"]
    );

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "removed {}: the copy of the pre-commit hook an earlier install kept, the same as the hook there now\n  the pre-commit hook phasegate's had replaced is in its place, as it was: {}\n",
            kept.display(),
            hooks.join("pre-commit").display()
        )),
        "{run:?}"
    );
    assert!(!run.stdout.contains("nothing to remove"), "{run:?}");
    assert_eq!(hook_files(&hooks), ["pre-commit"]);
    assert_eq!(repo.read(".git/hooks/pre-commit"), text);
}

#[test]
fn uninstalling_the_pre_push_hook_alone_leaves_the_pre_commit_hook_and_says_what_it_did() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let run = repo.phasegate(&["install", "--hook", "pre-commit", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    let pre_commit = repo.read(".git/hooks/pre-commit");

    // Both installed: only pre-push goes, once, however often it is named.
    let run = repo.phasegate(&["uninstall", "--hook", "pre-push", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "removed the pre-push hook: {}\n",
            hooks.join("pre-push").display()
        )
    );
    assert_eq!(hook_files(&hooks), ["pre-commit"]);
    assert_eq!(repo.read(".git/hooks/pre-commit"), pre_commit);

    // Only pre-commit installed.
    let run = repo.phasegate(&["uninstall", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "no phasegate pre-push hook is installed\n");
    assert_eq!(repo.read(".git/hooks/pre-commit"), pre_commit);

    // The pre-push hook is someone else's.
    let theirs = "#!/bin/sh\necho their push check\n";
    write_executable(&hooks.join("pre-push"), theirs);
    let run = repo.phasegate(&["uninstall", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "no phasegate pre-push hook is installed: the pre-push hook there, {}, is not phasegate's, and stays as it is\n",
            hooks.join("pre-push").display()
        )
    );
    assert_eq!(repo.read(".git/hooks/pre-push"), theirs);
    assert_eq!(repo.read(".git/hooks/pre-commit"), pre_commit);
}

#[test]
fn a_pre_push_hook_linked_to_phasegates_pre_commit_hook_is_left_by_a_pre_push_uninstall() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    // The commit's checks run at a push too: a link of one's own.
    std::os::unix::fs::symlink("pre-commit", hooks.join("pre-push")).unwrap();

    let run = repo.phasegate(&["uninstall", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("is not phasegate's, and stays as it is"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("removed"), "{run:?}");
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-push"]);
    assert_eq!(
        std::fs::read_link(hooks.join("pre-push")).unwrap(),
        Path::new("pre-commit")
    );
}
