//! What install says: relative hook paths per work tree, the line-ends note, husky leftovers.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::install_shared::run_husky;
use crate::support::TestRepo;

pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

/// The names in `dir` that start with `prefix`, sorted.
fn names_of(dir: &Path, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(prefix))
        .collect();
    names.sort();
    names
}

#[test]
fn a_hooks_path_of_one_work_tree_alone_says_which_hooks_each_other_work_tree_runs() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").commit_all("one");
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    let linked = repo.linked_worktree("own-relative");
    let elsewhere = repo.linked_worktree("own-absolute");
    let absolute = repo.home().join("absolute-hooks");
    repo.git_at(
        &linked,
        &["config", "--worktree", "core.hooksPath", ".wt-hooks"],
    );
    repo.git_at(
        &elsewhere,
        &[
            "config",
            "--worktree",
            "core.hooksPath",
            &absolute.to_string_lossy(),
        ],
    );

    let run = repo.phasegate_in(&linked, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(linked.join(".wt-hooks/pre-commit").is_file(), "{run:?}");
    let main = canonical(&repo.path());
    // The main work tree has no core.hooksPath: it runs the shared hooks of
    // the common git directory, not those under its own root.
    assert!(
        run.stderr.contains(
            "note: core.hooksPath (`.wt-hooks`) is set for this work tree alone (`git config --worktree`)"
        ),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "`{}` runs the repository's shared hooks in `{}`, as no core.hooksPath is set for it",
            main.display(),
            main.join(".git/hooks").display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(&format!(
            "`{}` runs those in `{}`, which its own core.hooksPath names",
            canonical(&elsewhere).display(),
            absolute.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("none of them is gated; run `phasegate install` there too"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("under its own root"), "{run:?}");
    // git agrees: the main work tree runs `.git/hooks`.
    assert_eq!(
        repo.git(&["rev-parse", "--git-path", "hooks"]).trim(),
        ".git/hooks"
    );

    // Doing what the note says gates each of them, and the note goes.
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    assert!(repo.exists(".git/hooks/pre-commit"));
    let run = repo.phasegate_in(&elsewhere, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(absolute.join("pre-commit").is_file(), "{run:?}");
    let run = repo.phasegate_in(&linked, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("not gated"), "{run:?}");
    assert!(!run.stderr.contains("is gated"), "{run:?}");
}

#[test]
fn installing_two_hooks_in_a_shared_hooks_directory_says_the_line_ends_note_once() {
    let repo = TestRepo::new();
    repo.write(".githooks/README", "the team's hooks\n");
    repo.commit_all("hooks");
    repo.git(&["config", "core.hooksPath", ".githooks"]);

    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    let file = repo.path().join(".githooks/.gitattributes");
    assert_eq!(
        run.stderr.matches("note: added").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "note: added rules to {} that keep the line ends of the hooks (pre-commit, pre-merge-commit) LF: commit it with the hooks",
            file.display()
        )),
        "{run:?}"
    );
    // Both rules are there, and git reads them.
    assert_eq!(
        repo.read(".githooks/.gitattributes"),
        "/pre-commit text eol=lf\n/pre-merge-commit text eol=lf\n"
    );
    for hook in ["pre-commit", "pre-merge-commit"] {
        let path = format!(".githooks/{hook}");
        assert_eq!(
            repo.git(&["check-attr", "eol", "--", &path]),
            format!("{path}: eol: lf\n")
        );
    }
    // One hook: the note names no list.
    repo.git(&["config", "core.hooksPath", ".other-hooks"]);
    let run = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr.matches("note: added").count(), 1, "{run:?}");
    assert!(
        run.stderr.contains("keeps the hook's line ends LF"),
        "{run:?}"
    );
}

/// A husky 9 project whose own `.husky/pre-commit` does not call the gate
/// yet, after husky's first `npm install`.
fn husky_project(repo: &TestRepo) {
    repo.write(
        "package.json",
        "{\"scripts\": {\"prepare\": \"husky\"}, \"devDependencies\": {\"husky\": \"^9.1.7\"}}\n",
    );
    repo.write(".husky/pre-commit", "echo lint\n");
    repo.commit_all("husky");
    run_husky(repo);
}

#[test]
fn installing_once_the_husky_hook_calls_phasegate_takes_out_the_stale_copy_of_husky_stub() {
    let repo = TestRepo::new();
    husky_project(&repo);
    let dir = repo.path().join(".husky/_");
    let stub = repo.read(".husky/_/pre-commit");
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        names_of(&dir, "pre-commit"),
        ["pre-commit", "pre-commit.phasegate-chained"]
    );
    // `npm install`: husky's stub over phasegate's hook.
    run_husky(&repo);
    repo.write(
        ".husky/pre-commit",
        "echo lint\nphasegate hook pre-commit\n",
    );

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("so it is not installed"), "{run:?}");
    let kept = dir.join("pre-commit.phasegate-chained");
    assert!(
        run.stdout.contains(&format!(
            "the copy of this hook an earlier install kept, {}, was the same as the hook there now: it is removed",
            kept.display()
        )),
        "{run:?}"
    );
    assert_eq!(names_of(&dir, "pre-commit"), ["pre-commit"]);
    assert_eq!(repo.read(".husky/_/pre-commit"), stub);
    // Nothing more to take out the next time.
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("removed"), "{run:?}");
    assert!(!run.stderr.contains("phasegate-chained"), "{run:?}");
}

#[test]
fn a_kept_hook_of_ones_own_that_husky_wrote_over_stays_when_install_finds_the_gate() {
    let repo = TestRepo::new();
    husky_project(&repo);
    let dir = repo.path().join(".husky/_");
    // A hook of one's own in husky's directory, which phasegate keeps and
    // runs first.
    let own = "#!/bin/sh\necho my own check\n";
    std::fs::write(dir.join("pre-commit"), own).unwrap();
    std::fs::set_permissions(
        dir.join("pre-commit"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    let kept = dir.join("pre-commit.phasegate-chained");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), own);
    run_husky(&repo);
    repo.write(
        ".husky/pre-commit",
        "echo lint\nphasegate hook pre-commit\n",
    );

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Not husky's stub: the only copy of that hook stays, byte for byte,
    // and the output says where.
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), own);
    assert_eq!(
        std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777,
        0o750
    );
    assert!(
        run.stderr.contains(&format!(
            "note: {} is the pre-commit hook an earlier install replaced",
            kept.display()
        )) && run
            .stderr
            .contains("it is left where it is, and does not run"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("removed"), "{run:?}");
}
