//! Hooks that would leave a repository ungated in silence.

use std::path::{Path, PathBuf};

use crate::install_links::{gated_repo, hooked_elsewhere, link_of, side_branch};
use crate::support::{
    git_pushing, output, recorded_verdicts, said, write_executable, Run, TestRepo,
};

/// What the hooks directory `dir` holds, entry by entry: a link as what it
/// names, a file as its bytes and whether it is executable.
fn hooks_state(dir: &Path) -> Vec<(String, String)> {
    use std::os::unix::fs::PermissionsExt;
    let mut entries: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.to_string_lossy().ends_with(".sample"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let what = if meta.is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else {
                format!(
                    "{:o} {}",
                    meta.permissions().mode() & 0o777,
                    std::fs::read_to_string(&path).unwrap()
                )
            };
            (name, what)
        })
        .collect();
    entries.sort();
    entries
}

/// `git ARGS` in `repo` as a git GUI runs it when no phasegate is on its
/// `PATH` (nor the one that installed the hook).
fn git_without_phasegate(repo: &TestRepo, args: &[&str]) -> Run {
    output(
        &repo
            .command("git")
            .args(args)
            .env("PHASEGATE_BIN", "phasegate-not-installed-here")
            .output()
            .unwrap(),
    )
}

#[test]
fn fail_closed_merge_commits_through_a_pre_merge_commit_link_stop_a_merge_without_phasegate() {
    let repo = gated_repo();
    let hooks = repo.path().join(".git/hooks");
    let ran = repo.home().join("ran");
    write_executable(
        &hooks.join("pre-commit"),
        &format!("#!/bin/sh\nbasename \"$0\" >> '{}'\n", ran.display()),
    );
    // Merge commits run the commit hook: a link of one's own.
    let link = hooks.join("pre-merge-commit");
    std::os::unix::fs::symlink("pre-commit", &link).unwrap();
    let mine = hooks_state(&hooks);

    // The pre-commit hook the link runs has no gate: fail-closed merge
    // commits can not be had through it, and nothing is changed.
    let run = repo.phasegate(&["install", "--hook", "pre-merge-commit", "--fail-closed"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "error: `{}` is a link of your own to the pre-commit hook beside it (`pre-commit`), which does not run phasegate's gate, so merge commits would not stop when phasegate is not installed, as `--fail-closed` asks",
            link.display()
        )),
        "{run:?}"
    );
    assert_eq!(hooks_state(&hooks), mine);

    // phasegate's pre-commit hook, installed fail-open: refused as well,
    // saying how to have it.
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    let open = hooks_state(&hooks);
    let run = repo.phasegate(&["install", "--hook", "pre-merge-commit", "--fail-closed"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "which is phasegate's hook installed without `--fail-closed`, so merge commits would not stop when phasegate is not installed"
        ),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "run `phasegate install --hook pre-commit --hook pre-merge-commit --fail-closed` to make the pre-commit hook fail-closed too (the link runs it at merge commits), or remove the link (`rm {}`) and run this install again for phasegate's own pre-merge-commit hook",
            link.display()
        )),
        "{run:?}"
    );
    assert_eq!(hooks_state(&hooks), open);

    // As the error says: both fail-closed, the link left as it is; and
    // installing again changes nothing.
    let run = repo.phasegate(&[
        "install",
        "--hook",
        "pre-commit",
        "--hook",
        "pre-merge-commit",
        "--fail-closed",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        repo.read(".git/hooks/pre-commit")
            .contains("\nfail_closed=1\n"),
        "{run:?}"
    );
    assert_eq!(link_of(&link), Path::new("pre-commit"));
    let closed = hooks_state(&hooks);
    let again = repo.phasegate(&["install", "--hook", "pre-merge-commit", "--fail-closed"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("is left as it is"), "{again:?}");
    assert_eq!(hooks_state(&hooks), closed);

    // A real merge commit, with no phasegate to run: refused, after the
    // user's own hook ran.
    side_branch(&repo, "side", "b.md");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let merge = git_without_phasegate(&repo, &["merge", "-q", "--no-ff", "--no-edit", "side"]);
    assert_ne!(merge.code, 0, "{}", said(&merge));
    assert!(
        merge
            .stderr
            .contains("this pre-commit hook was installed with --fail-closed"),
        "{}",
        said(&merge)
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "pre-merge-commit\n");
    repo.git(&["merge", "--abort"]);

    // The pre-commit hook turned open again opens merge commits too:
    // said, not silent.
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "warning: the pre-merge-commit hook {} is a link to the pre-commit hook, so merge commits are let through too when phasegate is not installed; run `phasegate install --fail-closed` to keep both closed",
            link.display()
        )),
        "{run:?}"
    );
    let merge = git_without_phasegate(&repo, &["merge", "-q", "--no-ff", "--no-edit", "side"]);
    assert_eq!(merge.code, 0, "{}", said(&merge));

    // uninstall gives back what was there: the user's hook and the link.
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(hooks_state(&hooks), mine);
}

#[test]
fn a_hook_linked_to_another_repositorys_hook_is_said_to_depend_on_it_and_force_writes_its_own() {
    let (other, target) = hooked_elsewhere();

    let repo = gated_repo();
    let hooks = repo.path().join(".git/hooks");
    let link = hooks.join("pre-commit");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let before = hooks_state(&hooks);

    // The link gates this repository now, but only while the other one
    // keeps its hook: said, every time, with the way out.
    let warning = format!(
        "warning: the pre-commit hook {} is a symbolic link to {}, phasegate's hook of the repository at {}: it gates this repository only while that file is there. `phasegate uninstall` there, or deleting it, ungates this repository without a word, as git runs no hook through a link that names nothing. To give this repository a hook of its own, run the same `phasegate install` again with `--force` (the link is kept beside it, where it does not run, and `phasegate uninstall` puts it back)",
        link.display(),
        target.display(),
        other.path().display()
    );
    for _ in 0..2 {
        let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("was already installed"), "{run:?}");
        assert!(run.stderr.contains(&warning), "{run:?}");
        assert_eq!(hooks_state(&hooks), before);
    }

    // Forced: this repository's own hook, the link kept beside it.
    let run = repo.phasegate(&["install", "--hook", "pre-commit", "--force"]);
    assert_eq!(run.code, 0, "{run:?}");
    let kept = hooks.join("pre-commit.phasegate-chained");
    assert_eq!(link_of(&kept), target);
    assert!(!link.is_symlink());
    assert!(repo
        .read(".git/hooks/pre-commit")
        .contains("\nhook=pre-commit\n"));
    // Installing again changes nothing, and warns of nothing.
    let forced = hooks_state(&hooks);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("warning"), "{run:?}");
    assert_eq!(hooks_state(&hooks), forced);

    // The other repository's uninstall no longer ungates this one: a real
    // commit with a failing blocking check is refused.
    assert_eq!(other.phasegate(&["uninstall"]).code, 0);
    assert!(!target.exists());
    repo.stage("stop", "x\n");
    let commit = git_pushing(&repo, &["commit", "-qm", "stop"]);
    assert_ne!(commit.code, 0, "{}", said(&commit));
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), 1, "{}", said(&commit));
    assert_eq!(verdicts[0]["status"], "failed", "{}", said(&commit));

    // uninstall puts the link back as it was.
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        hooks_state_of_links(&hooks),
        [("pre-commit".to_string(), target)]
    );
}

/// The links in the hooks directory `dir` (which may name nothing) and
/// what they name, and no other entry.
fn hooks_state_of_links(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut links: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.to_string_lossy().ends_with(".sample"))
        .map(|path| {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                link_of(&path),
            )
        })
        .collect();
    links.sort();
    links
}

#[test]
fn core_hooks_path_at_another_repositorys_hooks_is_said_to_be_removed_by_its_uninstall() {
    let other = TestRepo::new();
    let shared = other.path().join(".git/hooks");
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", &shared.to_string_lossy()]);

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "warning: git runs this repository's hooks from {}, the hooks directory of the repository at {} (core.hooksPath names it): `phasegate uninstall` there removes them, and this repository is then ungated without a word. Point core.hooksPath at a directory of this repository's own (`git config --unset core.hooksPath` for its .git/hooks), then run `phasegate install` again",
            shared.display(),
            other.path().display()
        )),
        "{run:?}"
    );
    // As said: the other repository's uninstall takes the hook away.
    let run = other.phasegate(&["uninstall"]);
    assert!(
        run.stdout.contains("removed the pre-commit hook"),
        "{run:?}"
    );

    // A hooks directory that is in no other repository is not spoken of.
    let plain = TestRepo::plain();
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", &plain.path().to_string_lossy()]);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("warning"), "{run:?}");
    let run = TestRepo::new().phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
}
