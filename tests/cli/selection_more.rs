//! File selection modes, snapshot isolation, `PHASEGATE_SKIP`, the first commit, bare repositories.

use crate::support::{check, TestRepo};

/// The file names a `{files}` check was given, after `sh -c SCRIPT sh`.
fn files_given(v: &serde_json::Value, name: &str) -> Vec<String> {
    check(v, name)["argv"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|argv| argv.as_array().unwrap().iter().skip(4))
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// A check that lists the files it is given and writes `ran.txt` where it
/// runs.
const LISTING: &str = r#"checks = [ { name = "list", files = ["**"], command = "sh -c 'touch ran.txt; printf \"%s\\n\" \"$@\"' sh {files}" } ]"#;

/// A merge of `other` into `main` stopped on a conflict in `a.txt`; `b.txt`
/// merged cleanly and is staged.
fn conflicted(isolation: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&format!(
        "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\n{LISTING}\n"
    ));
    repo.write("a.txt", "base\n").write("b.txt", "base\n");
    repo.commit_all("base");
    repo.git(&["checkout", "-qb", "other"]);
    repo.write("a.txt", "theirs\n").write("b.txt", "theirs\n");
    repo.commit_all("theirs");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "ours\n");
    repo.commit_all("ours");
    let merged = repo
        .command("git")
        .args(["merge", "-q", "other"])
        .output()
        .unwrap();
    assert!(!merged.status.success(), "the merge was meant to conflict");
    assert_eq!(
        repo.git(&["diff", "--name-only", "--diff-filter=U"]),
        "a.txt\n"
    );
    repo
}

#[test]
fn a_staged_run_with_unmerged_paths_says_which_and_how_to_go_on_instead_of_passing() {
    for isolation in ["worktree", "snapshot"] {
        let repo = conflicted(isolation);
        let status = repo.git(&["status", "--porcelain"]);
        let with_markers = repo.read("a.txt");
        let (code, v) = repo.verdict(&[]);
        // git commits nothing while `a.txt` is unmerged: a pass would say
        // otherwise, with the conflict markers checked or not at all.
        assert_eq!(code, 2, "{isolation}: {v:#}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`a.txt` is unmerged") && message.contains("`git add` it"),
            "{isolation}: {message}"
        );
        assert!(!message.contains("b.txt"), "{isolation}: {message}");
        assert!(!repo.exists("ran.txt"), "{isolation}: a check ran");
        // The merge is left as it was.
        assert_eq!(repo.git(&["status", "--porcelain"]), status, "{isolation}");
        assert_eq!(repo.read("a.txt"), with_markers, "{isolation}");
        assert!(repo.path().join(".git/MERGE_HEAD").exists(), "{isolation}");

        // Resolved and staged, the merge is checked.
        repo.stage("a.txt", "both\n");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{isolation}: {v:#}");
        assert_eq!(files_given(&v, "list"), ["a.txt", "b.txt"], "{isolation}");
    }
}

#[test]
fn all_files_leaves_out_tracked_files_the_work_tree_lacks_and_says_so() {
    let repo = TestRepo::new();
    repo.config(&format!("[phases.implementation]\n{LISTING}\n"));
    repo.write(".gitignore", "ignored.txt\n")
        .write("kept.txt", "kept\n")
        .write("deleted.txt", "deleted\n")
        .write("became-a-dir.txt", "file\n")
        .write("sparse/out.txt", "out\n");
    repo.commit_all("base");
    // Deleted without staging it, a directory in a file's place, a file a
    // sparse checkout leaves out; untracked and ignored files are no
    // tracked files.
    std::fs::remove_file(repo.path().join("deleted.txt")).unwrap();
    std::fs::remove_file(repo.path().join("became-a-dir.txt")).unwrap();
    repo.write("became-a-dir.txt/inside", "untracked\n");
    repo.git(&["sparse-checkout", "set", "--no-cone", "/*", "!/sparse/"]);
    assert!(!repo.exists("sparse/out.txt"));
    repo.write("untracked.txt", "untracked\n")
        .write("ignored.txt", "ignored\n");

    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        files_given(&v, "list"),
        [".gitignore", "kept.txt", "phasegate.toml"]
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("3 tracked file(s) are not in the work tree")
            && notes.contains("`became-a-dir.txt`"),
        "{v:#}"
    );
    assert_eq!(v["selection"]["files"], 3, "{v:#}");

    // The default selection in CI with no range is every tracked file too.
    let (code, v) = repo.verdict_with(&[], &[("CI", "true")]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        files_given(&v, "list"),
        [".gitignore", "kept.txt", "phasegate.toml"]
    );
}

#[test]
fn a_named_link_to_a_directory_is_selected_as_the_link_git_tracks() {
    let repo = TestRepo::new();
    repo.config(&format!("[phases.implementation]\n{LISTING}\n"));
    repo.write("src/a.txt", "a\n");
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("src", repo.path().join("alias")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("vendor")).unwrap();
    repo.commit_all("links to directories");
    assert_eq!(
        repo.git(&["ls-files", "alias", "vendor"]),
        "alias\nvendor\n"
    );

    // Each is a file of the repository, as a staged run would select it:
    // not the files of the directory it leads to, and never "outside the
    // repository".
    let (code, v) = repo.verdict(&["--files", "alias", "vendor"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(files_given(&v, "list"), ["alias", "vendor"]);

    // Named as a directory (`alias/`), it is the directory it leads to.
    let (code, v) = repo.verdict(&["--files", "alias/"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(files_given(&v, "list"), ["src/a.txt"]);
}

#[test]
fn the_checks_of_a_killed_snapshot_run_are_stopped_when_its_checkout_is_removed() {
    let repo = TestRepo::new();
    let pid_file = repo.home().join("snapshot-check.pid");
    let _ = std::fs::remove_file(&pid_file);
    repo.config(&format!(
        "[gate]\nisolation = \"snapshot\"\n[phases.implementation]\nchecks = [ {{ name = \"slow\", shell = true, command = \"echo $$ > {}; exec sleep 120\" }} ]\n",
        pid_file.display()
    ));
    repo.write("a.txt", "a\n").commit_all("one");
    repo.stage("a.txt", "a2\n");
    let mut child = repo
        .command(crate::support::BIN)
        .arg("run")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let check: u32 = crate::support::wait_for("the check's pid", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    crate::support::wait_for("the recorded process group", || {
        let snapshots = repo.snapshots_dir();
        std::fs::read_dir(snapshots)
            .ok()?
            .flatten()
            .any(|d| std::fs::metadata(d.path().join(".git/groups")).is_ok_and(|m| m.len() > 0))
            .then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !crate::support::process_gone(check),
        "killing phasegate alone leaves its check"
    );

    // The next run removes the killed run's checkout, and first stops what
    // still works in it.
    repo.stage(
        "phasegate.toml",
        "[gate]\nisolation = \"snapshot\"\n[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n",
    );
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    crate::support::wait_for("the killed run's check to be stopped", || {
        crate::support::process_gone(check).then_some(())
    });
    let left: Vec<_> = std::fs::read_dir(repo.snapshots_dir()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
