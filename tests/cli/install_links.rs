//! install and uninstall with hooks that are symbolic links.

use std::path::{Path, PathBuf};

use crate::install_more::hook_files;
use crate::support::{git_pushing, recorded_verdicts, said, TestRepo};

/// What the link at `path` names.
pub(crate) fn link_of(path: &Path) -> PathBuf {
    std::fs::read_link(path).unwrap_or_else(|e| panic!("{} is no link: {e}", path.display()))
}

#[test]
fn a_pre_push_link_to_the_pre_commit_hook_is_kept_by_a_forced_install_and_given_back() {
    let repo = TestRepo::new();
    repo.write("a.md", "# a\n").commit_all("one");
    let _remote = repo.bare_origin();
    let hooks = repo.path().join(".git/hooks");
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    let pre_commit = repo.read(".git/hooks/pre-commit");
    // The commit's checks run at a push too: a link of one's own.
    std::os::unix::fs::symlink("pre-commit", hooks.join("pre-push")).unwrap();

    // Not moved aside as an edited phasegate script: refused, and said why.
    let run = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "`{}` is a symbolic link of your own to phasegate's pre-commit hook (`pre-commit`): it runs the pre-commit gate whenever git runs the pre-push hook",
            hooks.join("pre-push").display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("run the same `phasegate install` again, or run it again with `--force` to keep the link as"),
        "{run:?}"
    );
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-push"]);
    assert_eq!(link_of(&hooks.join("pre-push")), Path::new("pre-commit"));

    // Forced: the link is kept as the chained hook, phasegate's pre-push
    // hook takes its place and gates a real push.
    let run = repo.phasegate(&["install", "--hook", "pre-push", "--force"]);
    assert_eq!(run.code, 0, "{run:?}");
    let kept = hooks.join("pre-push.phasegate-chained");
    assert!(
        run.stdout.contains(&format!(
            "the hook that was there, a link of your own to phasegate's pre-commit hook, is kept as {}, where it does not run",
            kept.display()
        )),
        "{run:?}"
    );
    assert_eq!(
        hook_files(&hooks),
        ["pre-commit", "pre-push", "pre-push.phasegate-chained"]
    );
    assert_eq!(link_of(&kept), Path::new("pre-commit"));
    assert!(repo
        .read(".git/hooks/pre-push")
        .contains("\nhook=pre-push\n"));
    let before = recorded_verdicts(&repo).len();
    let push = git_pushing(&repo, &["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", said(&push));
    assert_eq!(
        recorded_verdicts(&repo).len(),
        before + 1,
        "{}",
        said(&push)
    );
    // The kept link is not run (the push's gate runs once), and is said to
    // be the user's own, not a stray phasegate hook to delete.
    assert!(
        said(&push).contains(&format!(
            "phasegate: note: {} is your own link to a phasegate hook, kept there by `phasegate install --force`: it is not run, as this pre-push hook runs phasegate's gate itself (`phasegate uninstall` puts the link back)",
            kept.strip_prefix(repo.path()).unwrap().display()
        )),
        "{}",
        said(&push)
    );
    assert!(!said(&push).contains("delete it"), "{}", said(&push));

    // uninstall of the pre-push hook gives the link back.
    let run = repo.phasegate(&["uninstall", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "  the hook it replaced is back: {}",
            hooks.join("pre-push").display()
        )),
        "{run:?}"
    );
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-push"]);
    assert_eq!(link_of(&hooks.join("pre-push")), Path::new("pre-commit"));
    assert_eq!(repo.read(".git/hooks/pre-commit"), pre_commit);
}

#[test]
fn a_full_uninstall_says_that_a_link_to_a_removed_hook_now_names_nothing() {
    let repo = TestRepo::new();
    repo.write("a.md", "# a\n").commit_all("one");
    let _remote = repo.bare_origin();
    let hooks = repo.path().join(".git/hooks");
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    std::os::unix::fs::symlink("pre-commit", hooks.join("pre-push")).unwrap();

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    let link = hooks.join("pre-push");
    assert!(
        run.stderr.contains(&format!(
            "note: {} is a symbolic link to pre-commit, the pre-commit hook removed here: it names nothing now, and git skips it without a word, so no hook runs there. It is yours and is left as it is",
            link.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains(&format!("remove it (`rm {}`)", link.display())),
        "{run:?}"
    );
    // The link stays, naming nothing; git runs no hook for it, and says
    // nothing.
    assert_eq!(hook_files(&hooks), ["pre-push"]);
    assert_eq!(link_of(&link), Path::new("pre-commit"));
    let push = git_pushing(&repo, &["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", said(&push));
    assert!(recorded_verdicts(&repo).is_empty(), "{}", said(&push));

    // Installed again, the link runs the gate again.
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    repo.write("b.md", "# b\n").commit_all("two");
    let push = git_pushing(&repo, &["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", said(&push));
    assert_eq!(recorded_verdicts(&repo).len(), 2, "{}", said(&push));
}

#[test]
fn a_link_to_phasegates_hook_in_another_repository_is_never_replaced_nor_removed_as_ours() {
    let (_other, target) = hooked_elsewhere();
    let shared = std::fs::read(&target).unwrap();

    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let link = hooks.join("pre-commit");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    // The script it leads to is the one this install writes: it stays.
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("was already installed"), "{run:?}");
    assert_eq!(link_of(&link), target);
    // A real commit runs the gate, in this repository.
    repo.write("a.md", "# a\n");
    repo.git(&["add", "a.md"]);
    let commit = git_pushing(&repo, &["commit", "-qm", "one"]);
    assert_eq!(commit.code, 0, "{}", said(&commit));
    assert_eq!(recorded_verdicts(&repo).len(), 1, "{}", said(&commit));

    // Another script (fail-closed) would replace the link by a file, and
    // the link would be gone for good: refused.
    let run = repo.phasegate(&["install", "--hook", "pre-commit", "--fail-closed"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "`{}` is a symbolic link of your own to phasegate's pre-commit hook (`{}`): that script is not the one this install writes",
            link.display(),
            target.display()
        )),
        "{run:?}"
    );
    assert_eq!(link_of(&link), target);

    // Forced, the link is kept beside phasegate's own hook, which gates
    // the next commit, and uninstall gives the link back.
    let run = repo.phasegate(&[
        "install",
        "--hook",
        "pre-commit",
        "--fail-closed",
        "--force",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let kept = hooks.join("pre-commit.phasegate-chained");
    assert_eq!(link_of(&kept), target);
    assert!(repo
        .read(".git/hooks/pre-commit")
        .contains("\nfail_closed=1\n"));
    repo.write("b.md", "# b\n");
    repo.git(&["add", "b.md"]);
    let commit = git_pushing(&repo, &["commit", "-qm", "two"]);
    assert_eq!(commit.code, 0, "{}", said(&commit));
    assert_eq!(recorded_verdicts(&repo).len(), 2, "{}", said(&commit));
    let run = repo.phasegate(&["uninstall", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(link_of(&link), target);
    assert!(!kept.exists());

    // Uninstalling again leaves the link, and says it still runs the gate.
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "note: the pre-commit hook {} is a symbolic link of your own to phasegate's hook {}: it is left as it is, and still runs that gate; remove the link (`rm {}`) to stop it",
            link.display(),
            target.display(),
            link.display()
        )),
        "{run:?}"
    );
    assert_eq!(link_of(&link), target);
    // The other repository's hook was never written through the link.
    assert_eq!(std::fs::read(&target).unwrap(), shared);
}

#[test]
fn a_relative_link_into_the_repository_is_walked_through_install_commit_and_uninstall() {
    let repo = TestRepo::new();
    let ran = repo.home().join("ran");
    repo.write(
        "scripts/pre-commit",
        &format!("#!/bin/sh\necho \"$0\" >> '{}'\n", ran.display()),
    );
    std::fs::set_permissions(
        repo.path().join("scripts/pre-commit"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    repo.commit_all("team hook");
    let hooks = repo.path().join(".git/hooks");
    let link = hooks.join("pre-commit");
    std::os::unix::fs::symlink("../../scripts/pre-commit", &link).unwrap();

    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("still runs first"), "{run:?}");
    repo.write("a.md", "# a\n");
    repo.git(&["add", "a.md"]);
    let commit = git_pushing(&repo, &["commit", "-qm", "one"]);
    assert_eq!(commit.code, 0, "{}", said(&commit));
    // The team's hook ran first, as the hook git runs; then the gate.
    assert_eq!(
        std::fs::read_to_string(&ran).unwrap(),
        ".git/hooks/pre-commit\n"
    );
    assert_eq!(recorded_verdicts(&repo).len(), 1, "{}", said(&commit));

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("note:"), "{run:?}");
    assert_eq!(hook_files(&hooks), ["pre-commit"]);
    assert_eq!(link_of(&link), Path::new("../../scripts/pre-commit"));
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// A configuration whose one blocking check fails while a file `stop` is
/// in the work tree.
const STOP_GATE: &str = "[gate]\ndefault_phase = \"implementation\"\n[phases.implementation]\nchecks = [ { name = \"tests\", shell = true, command = \"test ! -e stop\", on_failure = \"block\" } ]\n";

/// A repository with `STOP_GATE` and `a.md` committed on `main`, without
/// hooks.
pub(crate) fn gated_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.config(STOP_GATE).write("a.md", "# a\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "--no-verify", "-m", "one"]);
    repo
}

/// Another repository, with phasegate's pre-commit hook installed, and
/// the path of that hook.
pub(crate) fn hooked_elsewhere() -> (TestRepo, PathBuf) {
    let other = TestRepo::new();
    assert_eq!(
        other.phasegate(&["install", "--hook", "pre-commit"]).code,
        0
    );
    let target = other.path().join(".git/hooks/pre-commit");
    (other, target)
}

/// Writes an executable hook of one's own at `path` that adds the name it
/// was run by (`$0`) to the file `ran`.
fn own_hook(path: &Path, ran: &Path) {
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\necho mine\nbasename \"$0\" >> '{}'\n",
            ran.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// The lines of the file `ran` (none when it is not there), and empties it.
fn taken(ran: &Path) -> Vec<String> {
    let lines = std::fs::read_to_string(ran)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let _ = std::fs::remove_file(ran);
    lines
}

/// A branch `name` off `main` with one commit adding `file`, made without
/// hooks; `main` is checked out again.
pub(crate) fn side_branch(repo: &TestRepo, name: &str, file: &str) {
    repo.git(&["checkout", "-q", "-b", name, "main"]);
    repo.write(file, "side\n");
    repo.git(&["add", file]);
    repo.git(&["commit", "-q", "--no-verify", "-m", name]);
    repo.git(&["checkout", "-q", "main"]);
}

#[test]
fn a_pre_merge_commit_link_to_the_pre_commit_hook_is_left_by_install_and_gates_merge_commits() {
    let repo = gated_repo();
    let hooks = repo.path().join(".git/hooks");
    let ran = repo.home().join("ran");
    own_hook(&hooks.join("pre-commit"), &ran);
    let mine = repo.read(".git/hooks/pre-commit");
    let link = hooks.join("pre-merge-commit");
    // Merge commits run the commit hook: a link of one's own.
    std::os::unix::fs::symlink("pre-commit", &link).unwrap();

    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "the pre-merge-commit hook {} is a link of your own to the pre-commit hook beside it (pre-commit): it is left as it is, and at every merge commit it runs the pre-commit hook, which now runs phasegate's gate after your own hook it keeps ({})\n",
            link.display(),
            hooks.join("pre-commit.phasegate-chained").display()
        )),
        "{run:?}"
    );
    assert!(!run.stderr.contains("error"), "{run:?}");
    assert_eq!(
        hook_files(&hooks),
        [
            "pre-commit",
            "pre-commit.phasegate-chained",
            "pre-merge-commit"
        ]
    );
    assert_eq!(link_of(&link), Path::new("pre-commit"));
    // Installing again changes nothing, and says so again.
    let again = repo.phasegate(&["install"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("is left as it is"), "{again:?}");
    assert_eq!(link_of(&link), Path::new("pre-commit"));

    // A merge commit runs the user's hook, then the gate, once.
    side_branch(&repo, "side", "b.md");
    let merge = git_pushing(&repo, &["merge", "-q", "--no-ff", "--no-edit", "side"]);
    assert_eq!(merge.code, 0, "{}", said(&merge));
    assert!(said(&merge).contains("mine"), "{}", said(&merge));
    assert_eq!(taken(&ran), ["pre-merge-commit"], "{}", said(&merge));
    assert_eq!(recorded_verdicts(&repo).len(), 1, "{}", said(&merge));
    assert_eq!(
        repo.git(&["rev-list", "--count", "--merges", "HEAD"]),
        "1\n"
    );

    // A failing blocking check refuses the merge commit.
    side_branch(&repo, "broken", "stop");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let merge = git_pushing(&repo, &["merge", "-q", "--no-ff", "--no-edit", "broken"]);
    assert_ne!(merge.code, 0, "{}", said(&merge));
    assert_eq!(taken(&ran), ["pre-merge-commit"], "{}", said(&merge));
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), 2, "{}", said(&merge));
    assert_eq!(verdicts[1]["status"], "failed", "{}", said(&merge));
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    repo.git(&["merge", "--abort"]);

    // uninstall leaves the link, which runs the user's hook again, alone.
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("names nothing"), "{run:?}");
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-merge-commit"]);
    assert_eq!(link_of(&link), Path::new("pre-commit"));
    assert_eq!(repo.read(".git/hooks/pre-commit"), mine);
    let merge = git_pushing(&repo, &["merge", "-q", "--no-ff", "--no-edit", "broken"]);
    assert_eq!(merge.code, 0, "{}", said(&merge));
    assert!(said(&merge).contains("mine"), "{}", said(&merge));
    assert_eq!(taken(&ran), ["pre-merge-commit"], "{}", said(&merge));
    assert_eq!(recorded_verdicts(&repo).len(), 2, "{}", said(&merge));
    assert_eq!(
        repo.git(&["rev-list", "--count", "--merges", "HEAD"]),
        "2\n"
    );
}

#[test]
fn an_absolute_pre_merge_commit_link_is_left_whichever_hooks_are_named_and_in_whatever_order() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let ran = repo.home().join("ran");
    own_hook(&hooks.join("pre-commit"), &ran);
    let link = hooks.join("pre-merge-commit");
    let target = hooks.join("pre-commit");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    // The pre-commit hook there is the user's, which runs no gate: the
    // link stays, and the user is told merge commits are not gated.
    let run = repo.phasegate(&["install", "--hook", "pre-merge-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "warning: the pre-merge-commit hook {} is a link of your own to the pre-commit hook beside it ({}), which does not run phasegate's gate: the link is left as it is, so merge commits are not gated; run `phasegate install --hook pre-commit` to gate commits, and merge commits through the link",
            link.display(),
            target.display()
        )),
        "{run:?}"
    );
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-merge-commit"]);
    assert_eq!(link_of(&link), target);

    // Named after the link, the pre-commit hook is still installed first:
    // the link then runs the gate.
    let run = repo.phasegate(&[
        "install",
        "--hook",
        "pre-merge-commit",
        "--hook",
        "pre-commit",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "installed the pre-commit hook: {}\n",
            target.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("which now runs phasegate's gate after your own hook it keeps"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("warning"), "{run:?}");
    assert_eq!(link_of(&link), target);
    repo.write("a.md", "# a\n");
    repo.git(&["add", "a.md"]);
    let commit = git_pushing(&repo, &["commit", "-qm", "one"]);
    assert_eq!(commit.code, 0, "{}", said(&commit));
    assert_eq!(taken(&ran), ["pre-commit"], "{}", said(&commit));
    assert_eq!(recorded_verdicts(&repo).len(), 1, "{}", said(&commit));
}

#[test]
fn a_default_install_that_would_refuse_a_later_hook_writes_none() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let ran = repo.home().join("ran");
    own_hook(&hooks.join("pre-commit"), &ran);
    let mine = repo.read(".git/hooks/pre-commit");
    // A pre-merge-commit hook of one's own, and another kept where
    // phasegate would keep it.
    own_hook(&hooks.join("pre-merge-commit"), &ran);
    std::fs::write(
        hooks.join("pre-merge-commit.phasegate-chained"),
        "#!/bin/sh\n",
    )
    .unwrap();
    let before = hook_files(&hooks);

    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "error: `{}` is a hook phasegate did not write, and `{}` already keeps an earlier one",
            hooks.join("pre-merge-commit").display(),
            hooks.join("pre-merge-commit.phasegate-chained").display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("note: no hook was installed or changed\n"),
        "{run:?}"
    );
    assert_eq!(hook_files(&hooks), before);
    assert_eq!(repo.read(".git/hooks/pre-commit"), mine);

    // A link to phasegate's hook of another repository, refused as well,
    // before the pre-commit hook is written.
    std::fs::remove_file(hooks.join("pre-merge-commit.phasegate-chained")).unwrap();
    std::fs::remove_file(hooks.join("pre-merge-commit")).unwrap();
    let (_other, target) = hooked_elsewhere();
    std::os::unix::fs::symlink(&target, hooks.join("pre-merge-commit")).unwrap();
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(
        run.stderr
            .contains("is a symbolic link of your own to phasegate's pre-commit hook"),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("note: no hook was installed or changed\n"),
        "{run:?}"
    );
    assert_eq!(hook_files(&hooks), ["pre-commit", "pre-merge-commit"]);
    assert_eq!(repo.read(".git/hooks/pre-commit"), mine);
    assert_eq!(link_of(&hooks.join("pre-merge-commit")), target);
}
