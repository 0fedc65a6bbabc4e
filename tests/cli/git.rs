//! Git integration: staged runs that never lose unstaged work, ranges, CI.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use crate::support::{check, TestRepo};

/// Every file of the work tree (outside `.git`): bytes, mode, or link.
pub(crate) fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if relative == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    relative,
                    (target.as_os_str().as_encoded_bytes().to_vec(), 0o120_000),
                );
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    relative,
                    (
                        std::fs::read(&path).unwrap(),
                        meta.permissions().mode() & 0o777,
                    ),
                );
            }
        }
    }
    out
}

/// The work tree, the index and both diffs.
pub(crate) type Snapshot = (BTreeMap<String, (Vec<u8>, u32)>, String, String, String);

/// What must survive any run.
pub(crate) fn snapshot(repo: &TestRepo) -> Snapshot {
    (
        tree(&repo.path()),
        repo.git(&["ls-files", "--stage"]),
        repo.git(&["diff", "--binary"]),
        repo.git(&["diff", "--cached", "--binary"]),
    )
}

/// A check that records what it sees of `files` and the files it gets.
const RECORDER: &str = r#"[phases.implementation]
checks = [ { name = "look", shell = true, command = "for f in *.txt; do printf '%s=%s\n' \"$f\" \"$(cat \"$f\")\"; done > ../seen.out" } ]
"#;

/// A repository with one commit and a mix of staged and unstaged changes.
fn partially_staged() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n").write("b.txt", "b1\n");
    repo.commit_all("one");
    repo.stage("a.txt", "a2 staged\n");
    repo.write("a.txt", "a3 unstaged\n");
    repo.write("b.txt", "b2 unstaged only\n");
    repo
}

#[test]
fn a_staged_run_sees_exactly_what_will_be_committed_and_gives_unstaged_work_back() {
    let repo = partially_staged();
    let seen = repo.home().join("seen.out");
    let _ = std::fs::remove_file(&seen);
    repo.config(&RECORDER.replace("../seen.out", &seen.to_string_lossy()));
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "staged");
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap(),
        "a.txt=a2 staged\nb.txt=b1\n"
    );
    assert_eq!(
        snapshot(&repo),
        before,
        "the work tree and index must come back byte for byte"
    );
}

#[test]
fn a_git_directory_whose_work_tree_is_set_by_core_worktree_is_gated_from_inside_it() {
    // The work tree has no `.git` at all (a home directory kept in git,
    // say): git finds the repository from inside its git directory and
    // the work tree from `core.worktree`, and so must phasegate.
    let repo = partially_staged();
    let seen = repo.home().join("seen.out");
    let asked = repo.home().join("asked.out");
    // A check that asks git finds the repository too.
    repo.config(&RECORDER.replace("../seen.out", &seen.to_string_lossy()).replace(
        " } ]",
        &format!(
            " }}, {{ name = \"ask\", shell = true, command = \"git diff --cached --name-only > '{}'\" }} ]",
            asked.display()
        ),
    ));
    let git_dir = repo.home().join("repo.git");
    std::fs::rename(repo.path().join(".git"), &git_dir).unwrap();
    repo.git_at(
        &git_dir,
        &["config", "core.worktree", &repo.path().to_string_lossy()],
    );
    let before = (
        repo.git_at(&git_dir, &["diff", "--binary"]),
        repo.git_at(&git_dir, &["diff", "--cached", "--binary"]),
    );
    for dir in [git_dir.clone(), git_dir.join("refs")] {
        let _ = std::fs::remove_file(&seen);
        let run = repo.phasegate_in(&dir, &["run", "--format", "json"]);
        let v = run.json();
        assert_eq!(run.code, 0, "{v:#}\n{}", run.stderr);
        assert_eq!(v["selection"]["mode"], "staged");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            "a.txt=a2 staged\nb.txt=b1\n",
            "from {}",
            dir.display()
        );
        assert_eq!(std::fs::read_to_string(&asked).unwrap(), "a.txt\n");
        assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
        assert_eq!(repo.read("b.txt"), "b2 unstaged only\n");
        let after = (
            repo.git_at(&git_dir, &["diff", "--binary"]),
            repo.git_at(&git_dir, &["diff", "--cached", "--binary"]),
        );
        assert_eq!(after, before, "the index and unstaged changes come back");
        let log = check(&v, "look")["log"].as_str().unwrap();
        assert!(
            std::path::Path::new(log).starts_with(&git_dir),
            "the run is kept in the git directory: {log}"
        );
    }
}

#[test]
fn staged_files_are_selected_without_deleted_ones_and_with_renames() {
    let repo = TestRepo::new();
    repo.write("old.md", "# old\n")
        .write("gone.md", "# gone\n")
        .write("keep.md", "# keep\n");
    repo.commit_all("one");
    repo.git(&["mv", "old.md", "new.md"]);
    repo.git(&["rm", "-q", "gone.md"]);
    repo.stage("added.md", "# added\n");
    repo.write("untracked.md", "# not staged\n");
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "docs", files = ["*.md"], command = "sh -c 'printf \"%s\\n\" \"$@\" > /dev/stderr' sh {files}" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let argv = check(&v, "docs")["argv"][0].as_array().unwrap().clone();
    let files: Vec<&str> = argv.iter().skip(4).map(|a| a.as_str().unwrap()).collect();
    assert_eq!(files, ["added.md", "new.md"]);
}

#[test]
fn the_first_commit_of_a_new_repository_works() {
    let repo = TestRepo::new();
    repo.stage("a.md", "# a\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"true\" } ]\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "docs")["status"], "passed");
    assert_eq!(v["selection"]["files"], 1);
}

#[test]
fn files_modified_by_a_check_fail_the_run_and_are_kept_with_the_unstaged_changes() {
    let repo = partially_staged();
    repo.stage("c.txt", "c  messy\n");
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "fmt", shell = true, command = "printf 'c tidy\n' > c.txt" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    let message = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("files were modified by `fmt`: c.txt"),
        "{message}"
    );
    assert_eq!(
        repo.read("c.txt"),
        "c tidy\n",
        "the formatter's change is kept"
    );
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
    assert_eq!(repo.read("b.txt"), "b2 unstaged only\n");
}

#[test]
fn a_check_that_changes_a_file_with_unstaged_changes_loses_to_them() {
    let repo = partially_staged();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "fmt", shell = true, command = "printf 'reformatted\n' > a.txt && git add a.txt" } ]
"#,
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        repo.read("a.txt"),
        "a3 unstaged\n",
        "the unstaged change wins"
    );
    assert_eq!(
        repo.git(&["show", ":a.txt"]),
        "a2 staged\n",
        "the check's `git add` is undone"
    );
    assert!(v["notes"].to_string().contains("a.txt"), "{v:#}");
    // What the check wrote is not lost either: it is kept with the run.
    let note = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.contains("their versions are kept in "))
        .unwrap_or_else(|| panic!("{v:#}"));
    let kept = note
        .rsplit("kept in ")
        .next()
        .unwrap()
        .trim_end_matches(')');
    assert_eq!(
        std::fs::read_to_string(Path::new(kept).join("a.txt")).unwrap(),
        "reformatted\n"
    );
}

#[test]
fn intent_to_add_binary_crlf_mode_and_deleted_files_come_back_byte_for_byte() {
    let repo = TestRepo::new();
    repo.write("crlf.txt", "one\r\ntwo\r\n");
    std::fs::write(
        repo.path().join("blob.bin"),
        [0u8, 159, 146, 150, 255, 0, 10],
    )
    .unwrap();
    repo.write("script.sh", "#!/bin/sh\n")
        .write("doomed.txt", "x\n");
    repo.commit_all("one");
    repo.write("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    std::fs::write(repo.path().join("blob.bin"), [1u8, 2, 0, 255]).unwrap();
    std::fs::set_permissions(
        repo.path().join("script.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::remove_file(repo.path().join("doomed.txt")).unwrap();
    // Permissions git does not keep come back too: a private file stays
    // private, a read-only one read-only.
    for (name, mode) in [("private.txt", 0o600), ("read-only.txt", 0o444)] {
        repo.stage(name, "staged\n")
            .write(name, "staged\nunstaged\n");
        std::fs::set_permissions(
            repo.path().join(name),
            std::fs::Permissions::from_mode(mode),
        )
        .unwrap();
    }
    repo.write("planned.txt", "intent to add\n");
    repo.git(&["add", "-N", "planned.txt"]);
    repo.stage("real.txt", "staged\n");
    let seen = repo.home().join("seen-ita.out");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"ls > {} 2>&1; test ! -e planned.txt && test -e doomed.txt\" }} ]\n",
        seen.display()
    ));
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(
        code,
        0,
        "{v:#}\n{}",
        std::fs::read_to_string(&seen).unwrap_or_default()
    );
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn line_endings_and_ident_are_converted_as_git_checks_out() {
    // What git's own checkout writes for the staged content, by every
    // setting that converts it: the checks must read exactly that.
    /// A case: its name, `.gitattributes`, and `git config` settings.
    type Case<'a> = (&'a str, Option<&'a str>, &'a [(&'a str, &'a str)]);
    let cases: [Case; 5] = [
        ("autocrlf", None, &[("core.autocrlf", "true")]),
        ("eol attribute", Some("*.txt eol=crlf\n"), &[]),
        (
            "text=auto and core.eol",
            Some("* text=auto\n"),
            &[("core.eol", "crlf")],
        ),
        ("ident", Some("*.txt ident\n"), &[]),
        ("none", None, &[("core.autocrlf", "input")]),
    ];
    for (case, attributes, settings) in cases {
        let repo = TestRepo::new();
        for (key, value) in settings {
            repo.git(&["config", key, value]);
        }
        if let Some(attributes) = attributes {
            repo.write(".gitattributes", attributes);
        }
        repo.write("f.txt", "$Id$\none\n").write("g.txt", "g\n");
        repo.commit_all("one");
        repo.stage("f.txt", "$Id$\none\nstaged\n");
        let unstaged = "$Id$\none\nstaged\nunstaged\n";
        repo.write("f.txt", unstaged);
        let expected = {
            let out = repo.git(&["checkout-index", "--temp", "--", "f.txt"]);
            let temp = repo.path().join(out.split('\t').next().unwrap());
            let bytes = std::fs::read(&temp).unwrap();
            std::fs::remove_file(temp).unwrap();
            bytes
        };
        let seen = repo.path().join(".git/seen");
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat f.txt > {}\" }} ]\n",
            seen.display()
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{case}: {v:#}");
        assert_eq!(
            String::from_utf8_lossy(&std::fs::read(&seen).unwrap()),
            String::from_utf8_lossy(&expected),
            "{case}"
        );
        if case == "none" {
            assert_eq!(expected, b"$Id$\none\nstaged\n");
        } else {
            assert_ne!(expected, b"$Id$\none\nstaged\n", "{case} converts");
        }
        assert_eq!(repo.read("f.txt"), unstaged, "{case}");
    }
}

#[test]
fn a_file_with_another_name_is_not_written_through_it() {
    let repo = TestRepo::new();
    repo.write("plain.txt", "plain\n")
        .write("linked.txt", "linked\n");
    repo.commit_all("one");
    for name in ["plain.txt", "linked.txt"] {
        repo.stage(name, "staged\n")
            .write(name, "staged\nunstaged\n");
    }
    // A second name of `linked.txt`, outside the repository: writing the
    // staged content over the file would show it there too.
    let outside = repo
        .path()
        .parent()
        .unwrap()
        .join(format!("outside-link-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    std::fs::hard_link(repo.path().join("linked.txt"), &outside).unwrap();
    let seen = repo.path().join(".git/seen");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat plain.txt linked.txt {} > {}\" }} ]\n",
        outside.display(),
        seen.display()
    ));
    let (code, v) = repo.verdict(&[]);
    std::fs::remove_file(&outside).ok();
    assert_eq!(code, 0, "{v:#}");
    let seen = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        seen, "staged\nstaged\nstaged\nunstaged\n",
        "the check sees the staged files; the other name keeps its content"
    );
    assert_eq!(repo.read("plain.txt"), "staged\nunstaged\n");
    assert_eq!(repo.read("linked.txt"), "staged\nunstaged\n");
}

#[test]
fn a_killed_run_is_finished_by_restore_or_the_next_run_at_every_step() {
    for step in [
        "saving",
        "saved",
        "checking-out",
        "checked-out",
        "checks-done",
        "restoring",
    ] {
        // Without attributes the files are written over in place; with
        // one that may convert content, libgit2 checks them out.
        for (recover_with, attributes) in [
            ("restore", None),
            ("run", None),
            ("restore", Some("*.bin -text\n")),
            ("run", Some("*.bin -text\n")),
        ] {
            let repo = TestRepo::new();
            if let Some(attributes) = attributes {
                repo.write(".gitattributes", attributes);
            }
            repo.write("crlf.txt", "one\r\ntwo\r\n")
                .write("move-me.txt", "moving\n")
                .write("rm.txt", "rm\n");
            std::fs::write(repo.path().join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
            repo.commit_all("one");
            repo.git(&["mv", "move-me.txt", "moved.txt"]);
            repo.git(&["rm", "-q", "--cached", "rm.txt"]);
            repo.stage("crlf.txt", "one\r\ntwo\r\nstaged\r\n");
            repo.write("crlf.txt", "one\r\ntwo\r\nstaged\r\nunstaged\r\n");
            std::fs::write(repo.path().join("blob.bin"), [9u8, 0, 9]).unwrap();
            repo.write("moved.txt", "moved and edited\n");
            repo.stage("private.txt", "staged\n")
                .write("private.txt", "staged\nunstaged\n");
            std::fs::set_permissions(
                repo.path().join("private.txt"),
                std::fs::Permissions::from_mode(0o640),
            )
            .unwrap();
            repo.config(
                "[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n",
            );
            let before = snapshot(&repo);

            let mut child = repo
                .command(crate::support::BIN)
                .args(["run", "--format", "json"])
                .env("PHASEGATE_TEST_PAUSE_AT", step)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let marker = repo.path().join(".git/phasegate/paused");
            let started = std::time::Instant::now();
            while std::fs::read_to_string(&marker).ok().as_deref() != Some(step) {
                assert!(
                    started.elapsed().as_secs() < 60,
                    "phasegate never reached `{step}`"
                );
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "phasegate ended before `{step}`"
                );
                std::thread::yield_now();
            }
            if step == "saved" {
                // The copies are the user's alone.
                let mut dirs = 0;
                for kept in std::fs::read_dir(repo.path().join(".git/phasegate/protect")).unwrap() {
                    let meta = kept.unwrap().metadata().unwrap();
                    if meta.is_dir() {
                        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
                        dirs += 1;
                    }
                }
                assert_eq!(dirs, 1);
            }
            child.kill().unwrap();
            child.wait().unwrap();
            std::fs::remove_file(&marker).unwrap();

            let run = match recover_with {
                "restore" => repo.phasegate(&["restore"]),
                _ => repo.phasegate(&["run"]),
            };
            assert_eq!(
                run.code, 0,
                "{step}/{recover_with}: {}{}",
                run.stdout, run.stderr
            );
            let after = snapshot(&repo);
            assert_eq!(
                after.0, before.0,
                "work tree after a kill at `{step}`, recovered by {recover_with}, attributes {attributes:?}"
            );
            assert_eq!(after.1, before.1, "index after a kill at `{step}`");
            assert_eq!(after.2, before.2, "unstaged diff after a kill at `{step}`");
            assert_eq!(after.3, before.3, "staged diff after a kill at `{step}`");
            assert_eq!(
                journals_left(&repo),
                0,
                "the saved copies are removed once written back"
            );
        }
    }
}

#[test]
fn ranges_select_the_branch_changes_since_the_merge_base() {
    let repo = TestRepo::new();
    repo.with_feature_branch();
    repo.git(&["checkout", "-q", "feature"]);
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"echo {files}\" } ]\n");
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "docs")["argv"][0][1], "feature.md");
    assert_eq!(v["selection"]["mode"], "range");

    // GitHub Actions on a pull request picks the range up by itself.
    let main = repo.git(&["rev-parse", "main"]);
    repo.git(&["update-ref", "refs/remotes/origin/main", main.trim()]);
    let (code, v) = repo.verdict_with(
        &[],
        &[
            ("CI", "true"),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_BASE_REF", "main"),
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["from"], "origin/main");
    assert_eq!(check(&v, "docs")["argv"][0][1], "feature.md");

    // So does a GitLab merge-request pipeline.
    let (code, v) = repo.verdict_with(
        &[],
        &[
            ("CI", "true"),
            ("GITLAB_CI", "true"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", main.trim()),
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "range");
    assert_eq!(check(&v, "docs")["argv"][0][1], "feature.md");
    // CI with no request to look at checks every tracked file.
    let (code, v) = repo.verdict_with(&[], &[("CI", "true")]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all");

    let (code, v) = repo.verdict(&["--from-ref", "no-such-branch", "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no-such-branch"));

    // A range that ends elsewhere than the checked-out commit is checked in
    // a checkout of its end: here, `feature` from `main`.
    repo.git(&["checkout", "-q", "main"]);
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"cat {files}; test ! -e main-only.md\" } ]\n");
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        v["notes"]
            .to_string()
            .contains("ran in a checkout of feature"),
        "{v:#}"
    );
    let log = repo.read(check(&v, "docs")["log"].as_str().unwrap());
    assert_eq!(log, "# feature\n");
    assert!(repo.exists("main-only.md"), "the work tree is untouched");
    // A check that rewrites a file of the checkout changes what is checked.
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"echo '# tidied' > feature.md\" } ]\n");
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("files were modified by `docs`: feature.md"),
        "{v:#}"
    );
    let snapshots = repo.snapshots_dir();
    assert!(snapshots
        .read_dir()
        .map_or(true, |mut d| d.next().is_none()));
}

#[test]
fn a_bare_repository_gets_a_clear_error() {
    let repo = TestRepo::bare();
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("bare repository"));
}

/// Starts `phasegate run` paused at `step` (or with a check that hangs) and
/// waits until it is there.
fn start_paused(repo: &TestRepo, step: Option<&str>, ready: &Path) -> std::process::Child {
    let mut command = repo.command(crate::support::BIN);
    command
        .args(["run", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    if let Some(step) = step {
        command.env("PHASEGATE_TEST_PAUSE_AT", step);
    }
    let mut child = command.spawn().unwrap();
    let started = std::time::Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed().as_secs() < 60,
            "phasegate never got ready"
        );
        assert!(child.try_wait().unwrap().is_none(), "phasegate ended early");
        std::thread::yield_now();
    }
    child
}

#[test]
fn two_runs_at_once_do_not_both_touch_the_work_tree() {
    let repo = partially_staged();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let before = snapshot(&repo);
    let mut first = start_paused(
        &repo,
        Some("checked-out"),
        &repo.path().join(".git/phasegate/paused"),
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another phasegate run"),
        "{v:#}"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(repo.phasegate(&["restore"]).code, 0);
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn ctrl_c_and_a_double_ctrl_c_mid_run_give_the_unstaged_changes_back() {
    for presses in [1, 2] {
        let repo = partially_staged();
        repo.config(
            "[phases.implementation]\nchecks = [ { name = \"c\", shell = true, command = \"touch .git/check-started; sleep 300\" } ]\n",
        );
        let before = snapshot(&repo);
        let marker = repo.path().join(".git/check-started");
        let child = {
            let mut command = repo.command(crate::support::BIN);
            command
                .args(["run", "--format", "json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null());
            command.spawn().unwrap()
        };
        let started = std::time::Instant::now();
        while !marker.exists() {
            assert!(started.elapsed().as_secs() < 60, "the check never started");
            std::thread::yield_now();
        }
        for _ in 0..presses {
            let status = std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(3), "{presses} presses");
        assert_eq!(snapshot(&repo), before, "{presses} presses");
    }
}

/// The steps of the protection sequence a run can be paused at, and
/// whether the checks had run by then.
pub(crate) const PROTECT_STEPS: [(&str, bool); 6] = [
    ("saving", false),
    ("saved", false),
    ("checking-out", false),
    ("checked-out", false),
    ("checks-done", true),
    ("restoring", true),
];

/// A repository with a partially staged file, and unstaged changes to a
/// binary file and to a CRLF file (staged in part too), gated by one check
/// that passes.
pub(crate) fn partially_staged_binary_and_crlf() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n")
        .write("crlf.txt", "one\r\ntwo\r\n");
    std::fs::write(repo.path().join("blob.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    repo.commit_all("one");
    repo.stage("a.txt", "a2 staged\n")
        .write("a.txt", "a3 unstaged\n");
    repo.stage("crlf.txt", "one\r\ntwo\r\nstaged\r\n")
        .write("crlf.txt", "one\r\ntwo\r\nstaged\r\nunstaged\r\n");
    std::fs::write(repo.path().join("blob.bin"), [9u8, 0, 9, 255, 10]).unwrap();
    repo
}

/// Sends `SIG<signal>` to the process `pid`, or to its whole process group
/// (as a terminal does on Ctrl-C) when `group`.
pub(crate) fn send_signal(signal: &str, pid: u32, group: bool) {
    let target = if group {
        format!("-{pid}")
    } else {
        pid.to_string()
    };
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), "--", &target])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {target}");
}

/// Whether this process ignores the signal `number` (and so do the
/// processes it starts).
fn ignored_here(number: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .map_or(0, |hex| u64::from_str_radix(hex.trim(), 16).unwrap());
    mask & (1 << (number - 1)) != 0
}

/// Waits for `child` to exit (failing the test, and killing it, after a
/// minute) and returns its output.
pub(crate) fn exited(mut child: std::process::Child, what: &str) -> std::process::Output {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed().as_secs() >= 60 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running a minute after the signal");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// How many runs left saved changes behind (a directory each).
pub(crate) fn journals_left(repo: &TestRepo) -> usize {
    std::fs::read_dir(repo.path().join(".git/phasegate/protect")).map_or(0, |dirs| {
        dirs.filter(|d| d.as_ref().unwrap().file_type().unwrap().is_dir())
            .count()
    })
}

#[test]
fn ctrl_c_sigterm_or_sighup_outside_the_checks_give_the_work_tree_back_before_phasegate_exits() {
    for (step, checked) in PROTECT_STEPS {
        // Ctrl-C reaches phasegate alone, or its whole process group as
        // from a terminal, once or twice; SIGTERM and SIGHUP once.
        for (signal, group, presses) in [
            ("INT", false, 1),
            ("INT", true, 1),
            ("INT", true, 2),
            ("TERM", false, 1),
            ("HUP", false, 1),
        ] {
            let what = format!("SIG{signal} x{presses} at `{step}`");
            let repo = partially_staged_binary_and_crlf();
            let before = snapshot(&repo);
            let marker = repo.path().join(".git/phasegate/paused");
            let child = {
                use std::os::unix::process::CommandExt;
                let mut command = repo.command(crate::support::BIN);
                command
                    .args(["run", "--format", "json"])
                    .env("PHASEGATE_TEST_PAUSE_AT", step)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::null())
                    .process_group(0);
                command.spawn().unwrap()
            };
            let pid = child.id();
            crate::support::wait_for_pause(&marker, step);
            for _ in 0..presses {
                send_signal(signal, pid, group);
            }
            let output = exited(child, &what);

            // Right as phasegate is gone, before any other run.
            assert_eq!(snapshot(&repo), before, "{what}: the work tree and index");
            assert_eq!(
                journals_left(&repo),
                0,
                "{what}: nothing is left to restore"
            );
            // A second Ctrl-C that comes once the work tree is back may end
            // phasegate as Ctrl-C ends any program, before its verdict.
            if presses == 2 && output.status.signal() == Some(2) {
                continue;
            }
            assert_eq!(output.status.code(), Some(3), "{what}");
            let v: serde_json::Value =
                serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(v["status"], "incomplete", "{what}: {v:#}");
            assert_eq!(v["next"], "resume", "{what}: {v:#}");
            // Interrupted before the checks, they never start; after, they
            // keep their answer, but the run still lets nothing through.
            let c = check(&v, "c");
            if checked {
                assert_eq!(c["status"], "passed", "{what}: {v:#}");
            } else {
                assert_eq!(c["status"], "crashed", "{what}: {v:#}");
                assert!(
                    c["reason"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("interrupted"),
                    "{what}: {v:#}"
                );
            }
        }
    }
}

#[test]
fn ctrl_c_while_a_killed_run_is_being_finished_lets_the_restore_finish() {
    for command in ["restore", "run"] {
        let what = format!("Ctrl-C during `phasegate {command}`'s restore");
        let repo = partially_staged_binary_and_crlf();
        let before = snapshot(&repo);
        let marker = repo.path().join(".git/phasegate/paused");
        // A run killed with the unstaged changes aside.
        repo.kill_run_at("checked-out", &["run"]);
        assert_eq!(repo.read("a.txt"), "a2 staged\n");

        // Ctrl-C once the first of its files is back.
        let child = {
            use std::os::unix::process::CommandExt;
            let mut finishing = repo.command(crate::support::BIN);
            finishing
                .arg(command)
                .env("PHASEGATE_TEST_PAUSE_AT", "recovering")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .process_group(0);
            if command == "run" {
                finishing.args(["--format", "json"]);
            }
            finishing.spawn().unwrap()
        };
        crate::support::wait_for_pause(&marker, "recovering");
        send_signal("INT", child.id(), true);
        let output = exited(child, &what);

        assert_eq!(snapshot(&repo), before, "{what}: the work tree and index");
        assert_eq!(journals_left(&repo), 0, "{what}");
        if command == "restore" {
            // Everything asked of it was done.
            assert_eq!(output.status.code(), Some(0), "{what}");
            assert!(
                String::from_utf8_lossy(&output.stderr).contains("interrupted"),
                "{what}"
            );
        } else {
            // No check started after the interrupt.
            assert_eq!(output.status.code(), Some(3), "{what}");
            let v: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(v["status"], "incomplete", "{v:#}");
            assert_eq!(check(&v, "c")["status"], "crashed", "{v:#}");
        }
    }
}

#[test]
fn once_the_work_tree_is_back_signals_end_phasegate_as_they_end_any_program() {
    // Paused while it records the run, after the checks and the restore.
    for args in [&["run", "--format", "json"][..], &["run", "--all-files"]] {
        for signal in ["INT", "TERM"] {
            // A signal this test was started ignoring (a job put in the
            // background by a script ignores SIGINT) reaches phasegate
            // ignored, and stays so.
            if signal == "INT" && ignored_here(2) {
                continue;
            }
            let what = format!("SIG{signal} to {args:?} after the checks");
            let repo = partially_staged_binary_and_crlf();
            let before = snapshot(&repo);
            let marker = repo.path().join(".git/phasegate/paused");
            let child = repo
                .command(crate::support::BIN)
                .args(args)
                .env("PHASEGATE_TEST_PAUSE_AT", "state-rename")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            crate::support::wait_for_pause(&marker, "state-rename");
            send_signal(signal, child.id(), false);
            let output = exited(child, &what);
            let expected = if signal == "INT" { 2 } else { 15 };
            assert_eq!(output.status.signal(), Some(expected), "{what}");
            assert_eq!(snapshot(&repo), before, "{what}");
        }
    }
}

#[test]
fn a_merge_in_progress_keeps_its_state() {
    let repo = TestRepo::new();
    repo.with_feature_branch();
    repo.git(&["merge", "--no-commit", "--no-ff", "-q", "feature"]);
    repo.write("base.md", "unstaged during the merge\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let git_dir = repo.path().join(".git");
    let merge_head = std::fs::read(git_dir.join("MERGE_HEAD")).unwrap();
    let merge_msg = std::fs::read(git_dir.join("MERGE_MSG")).unwrap();
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(snapshot(&repo), before);
    assert_eq!(
        std::fs::read(git_dir.join("MERGE_HEAD")).unwrap(),
        merge_head
    );
    assert_eq!(std::fs::read(git_dir.join("MERGE_MSG")).unwrap(), merge_msg);
}

#[test]
fn submodules_with_recursion_configured_are_left_alone() {
    let outer = TestRepo::new();
    let inner = TestRepo::new();
    inner.write("lib.txt", "inner\n");
    inner.commit_all("inner");
    outer.write("a.txt", "a\n");
    outer.commit_all("outer");
    outer.add_submodule(&inner, "sub");
    outer.git(&["commit", "-qm", "submodule"]);
    outer.git(&["config", "submodule.recurse", "true"]);
    outer.write("sub/lib.txt", "changed inside the submodule\n");
    outer.write("a.txt", "unstaged\n");
    outer.stage("b.txt", "staged\n");
    outer.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let before = snapshot(&outer);
    let (code, v) = outer.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(snapshot(&outer), before);
}

#[test]
fn a_range_is_judged_by_the_configuration_of_the_commit_it_checks() {
    let strict =
        "[phases.implementation]\nchecks = [ { name = \"strict\", command = \"false\" } ]\n";
    let repo = TestRepo::new();
    repo.config(strict)
        .write("a.txt", "a\n")
        .commit_all("the gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("a.txt", "a2\n").commit_all("change");
    let range = ["--from-ref", "main", "--to-ref", "HEAD"];
    // An uncommitted edit that switches the gate off does not judge the
    // commits, whose files the checks see; nor does a broken one stop it.
    for edit in [
        "[phases.implementation]\nchecks = []\n",
        "[gate]\nprofle = 1\n",
    ] {
        repo.config(edit);
        let (code, v) = repo.verdict(&range);
        assert_eq!(code, 1, "{edit}: {v:#}");
        assert_eq!(check(&v, "strict")["status"], "failed", "{v:#}");
        assert!(
            v["notes"]
                .to_string()
                .contains("differs from its version in `HEAD`, the commit checked"),
            "{v:#}"
        );
    }
    // The same holds for every file of a commit, as a new branch pushed.
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "the work tree is judged by its own: {v:#}");
    // An error in the committed version names the commit it is in.
    repo.config("[gate]\nprofle = \"fast\"\n");
    repo.git(&["commit", "-qam", "broken"]);
    repo.config(strict);
    let run = repo.phasegate(&["run", "--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("phasegate.toml@HEAD"), "{}", run.stderr);
    assert!(run.stderr.contains("the commit checked"), "{}", run.stderr);
    // A configuration the commit does not hold is the work tree's to give.
    repo.git(&["rm", "-q", "--cached", "phasegate.toml"]);
    repo.git(&["commit", "-qm", "untrack the gate"]);
    let (code, v) = repo.verdict(&range);
    assert_eq!(code, 1, "{v:#}");
    assert!(!v["notes"].to_string().contains("differs"), "{v:#}");
}

#[test]
fn config_from_ref_reads_the_gate_of_the_target_branch() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"strict\", command = \"false\" } ]\n",
    );
    repo.commit_all("the gate");
    repo.git(&["checkout", "-qb", "weaker"]);
    // The branch tries to switch its own gate off, also in a local file.
    repo.config("[phases.implementation]\nchecks = []\n");
    repo.write("phasegate.local.toml", "[gate]\nprofile = \"fast\"\n");
    repo.git(&["add", "phasegate.toml"]);
    repo.git(&["commit", "-qm", "weaken"]);
    assert_eq!(repo.verdict(&["--all-files"]).0, 0);
    let (code, v) = repo.verdict(&["--all-files", "--config-from-ref", "main"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["profile"], "auto");
    assert_eq!(check(&v, "strict")["status"], "failed");
    // Resumed, the run is judged by the same gate, not the branch's.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 1, "{}{}", resumed.stdout, resumed.stderr);
    let v = resumed.json();
    assert_eq!(check(&v, "strict")["status"], "failed");
    assert_eq!(v["profile"], "auto");
    let (code, v) = repo.verdict(&["--config-from-ref", "nope"]);
    assert_eq!(code, 2, "{v:#}");

    // An invalid gate on the target branch names the commit it came from.
    repo.git(&["checkout", "-q", "main"]);
    repo.config("[gate]\nprofle = \"fast\"\n");
    repo.git(&["commit", "-qam", "broken"]);
    let run = repo.phasegate(&["run", "--config-from-ref", "main"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("phasegate.toml@main"), "{}", run.stderr);
}

#[test]
fn snapshot_isolation_never_touches_the_work_tree() {
    let repo = partially_staged();
    let seen = repo
        .path()
        .parent()
        .unwrap()
        .join(format!("seen-snapshot-{}.out", std::process::id()));
    repo.config(&format!(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat a.txt b.txt > {}; echo scribble > a.txt\" }} ]\n",
        seen.display()
    ));
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    // What the check wrote in the checkout is still a change to what is
    // checked: the run fails, as it would in place.
    assert_eq!(code, 1, "{v:#}");
    let message = v["diagnostics"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("files were modified by `look`: a.txt"),
        "{v:#}"
    );
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "a2 staged\nb1\n");
    assert_eq!(
        snapshot(&repo),
        before,
        "not a byte of the work tree changes"
    );
    // A check that only reads, or writes untracked files, passes; a file
    // written again with the same content is no change.
    repo.config(&format!(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat a.txt b.txt > {}; cp a.txt x && mv x a.txt; echo out > new.log\" }} ]\n",
        seen.display()
    ));
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(snapshot(&repo), before);
    let _ = std::fs::remove_file(seen);
}

#[test]
fn odd_file_names_reach_the_checks_intact_and_their_unstaged_changes_survive() {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    let names: Vec<Vec<u8>> = vec![
        b"with space.txt".to_vec(),
        b"new\nline.txt".to_vec(),
        b"-leading-dash.txt".to_vec(),
        "ünïcödé.txt".as_bytes().to_vec(),
        b"caf\xe9 latin1.txt".to_vec(),
    ];
    let path = |name: &[u8]| repo.path().join(std::ffi::OsStr::from_bytes(name));
    for name in &names {
        std::fs::write(path(name), b"committed\n").unwrap();
    }
    repo.commit_all("odd names");
    for name in &names {
        std::fs::write(path(name), b"staged\n").unwrap();
    }
    repo.git(&["add", "-A"]);
    for name in &names {
        std::fs::write(path(name), b"staged\nunstaged\n").unwrap();
    }
    let out = repo
        .path()
        .parent()
        .unwrap()
        .join(format!("odd-args-{}.out", std::process::id()));
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"args\", files = [\"*.txt\"], command = \"sh -c 'for f; do printf \\\"%s=\\\" \\\"$f\\\"; cat -- \\\"$f\\\"; printf \\\"\\\\\\\\0\\\"; done > {}' sh {{files}}\" }} ]\n",
        out.display()
    ));
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let seen = std::fs::read(&out).unwrap();
    let mut got: Vec<Vec<u8>> = seen
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    got.sort();
    let mut want: Vec<Vec<u8>> = names
        .iter()
        .map(|n| {
            let shown = if n.starts_with(b"-") {
                [b"./".as_slice(), n].concat()
            } else {
                n.clone()
            };
            [shown.as_slice(), b"=staged\n"].concat()
        })
        .collect();
    want.sort();
    assert_eq!(got, want, "every file, exactly once, at its staged content");
    assert_eq!(snapshot(&repo), before);
    let _ = std::fs::remove_file(out);
}

/// The files a `{files}` check received, NUL-separated in `out`, sorted.
fn received(out: &Path) -> Vec<Vec<u8>> {
    let seen = std::fs::read(out).unwrap();
    let mut got: Vec<Vec<u8>> = seen
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| s.strip_prefix(b"./").unwrap_or(s).to_vec())
        .collect();
    got.sort();
    got
}

#[test]
fn the_staged_selection_is_what_git_lists_on_every_index_format() {
    use std::os::unix::ffi::OsStrExt;
    for format in ["2", "3", "4", "split"] {
        let repo = TestRepo::new();
        let file = |name: &[u8]| repo.path().join(std::ffi::OsStr::from_bytes(name));
        for (name, text) in [
            (b"keep.txt".as_slice(), "same\n"),
            (b"edit.txt", "one\n"),
            (b"gone.txt", "gone\n"),
            (b"moving.txt", "moving\n"),
            (b"tool.sh", "#!/bin/sh\n"),
            (b"a/deep/nested.rs", "fn main() {}\n"),
            (b"a.b", "dot\n"),
            (b"a-b", "dash\n"),
            (
                b"a/same.txt",
                "unchanged, next to a staged sibling of its directory\n",
            ),
            (b"with space.txt", "space\n"),
            (b"new\nline.txt", "newline\n"),
            (b"-dash.txt", "dash\n"),
            (b"caf\xe9.txt", "latin1\n"),
            (b"was-file", "a file, then a directory\n"),
            (b"was-dir/inside.txt", "a directory, then a file\n"),
        ] {
            let path = file(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        repo.commit_all("base");
        match format {
            "split" => repo.git(&["update-index", "--split-index"]),
            version => repo.git(&["update-index", "--index-version", version]),
        };
        repo.stage("edit.txt", "two\n");
        repo.git(&["rm", "-q", "gone.txt"]);
        repo.git(&["mv", "moving.txt", "moved.txt"]);
        std::fs::set_permissions(file(b"tool.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        repo.git(&["add", "tool.sh"]);
        repo.stage("a/deep/nested.rs", "fn main() { }\n");
        repo.stage("a/deep/added.rs", "// new\n");
        // Sorts between `a.b` and the directory `a/` (`.` before `/`).
        repo.stage("a.c", "new\n");
        std::fs::write(file(b"new\nline.txt"), "staged\n").unwrap();
        std::fs::write(file(b"caf\xe9.txt"), "staged\n").unwrap();
        std::fs::write(file(b"-dash.txt"), "staged\n").unwrap();
        // Type changes: a file that became a directory, and back.
        std::fs::remove_file(file(b"was-file")).unwrap();
        std::fs::create_dir(file(b"was-file")).unwrap();
        std::fs::write(file(b"was-file/now.txt"), "inside\n").unwrap();
        std::fs::remove_dir_all(file(b"was-dir")).unwrap();
        std::fs::write(file(b"was-dir"), "a file now\n").unwrap();
        repo.git(&["add", "-A"]);
        std::os::unix::fs::symlink("keep.txt", file(b"link")).unwrap();
        repo.git(&["add", "link"]);
        // Not staged: intent-to-add, and unstaged changes of tracked files.
        repo.write("planned.txt", "later\n");
        repo.git(&["add", "-N", "planned.txt"]);
        repo.write("a.b", "dot, unstaged\n");
        repo.write("edit.txt", "two\nthree, unstaged\n");

        let out = repo
            .path()
            .parent()
            .unwrap()
            .join(format!("staged-{format}-{}.out", std::process::id()));
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"args\", files = [\"*\"], command = \"sh -c 'printf \\\"%s\\\\\\\\0\\\" \\\"$@\\\" > {}' sh {{files}}\" }} ]\n",
            out.display()
        ));
        std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
        let listed = repo
            .command("git")
            .args([
                "diff",
                "--cached",
                "--name-only",
                "-z",
                "--no-renames",
                "--diff-filter=AMT",
            ])
            .output()
            .unwrap()
            .stdout;
        let mut want: Vec<Vec<u8>> = listed
            .split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        want.sort();
        assert!(
            want.len() >= 9,
            "{format}: the scenario stages enough: {want:?}"
        );

        let before = snapshot(&repo);
        let (code, v) = repo.verdict(&[]);
        if format == "split" {
            // libgit2 cannot read a split index: a clear error, not a pass.
            assert_eq!(code, 3, "{v:#}");
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("git update-index --no-split-index"),
                "{message}"
            );
            assert_eq!(snapshot(&repo), before);
            continue;
        }
        assert_eq!(code, 0, "{format}: {v:#}");
        assert_eq!(received(&out), want, "index format {format}");
        assert_eq!(snapshot(&repo), before, "index format {format}");
        let _ = std::fs::remove_file(out);
    }
}

#[test]
fn a_same_size_change_with_the_recorded_mtime_is_still_protected() {
    // Same size and the modification time the index recorded: only the
    // change time gives it away.
    let repo = TestRepo::new();
    repo.write("same.txt", "aaaa\n").write("other.txt", "x\n");
    repo.commit_all("base");
    repo.stage("other.txt", "y\n");
    let out = repo
        .path()
        .parent()
        .unwrap()
        .join(format!("racy-{}.out", std::process::id()));
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat same.txt > {}\" }} ]\n",
        out.display()
    ));
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    let recorded = std::fs::metadata(repo.path().join("same.txt"))
        .unwrap()
        .modified()
        .unwrap();
    repo.write("same.txt", "bbbb\n");
    // The file's times as the index recorded them: only the content changed.
    let file = std::fs::File::options()
        .write(true)
        .open(repo.path().join("same.txt"))
        .unwrap();
    file.set_modified(recorded).unwrap();
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "aaaa\n",
        "the check saw the staged content"
    );
    assert_eq!(snapshot(&repo), before);
    let _ = std::fs::remove_file(out);
}

#[test]
fn a_journal_of_the_one_file_per_copy_layout_is_still_recovered() {
    // An earlier phasegate, killed after its checkout, left one file per
    // saved copy and a journal without ranges.
    let repo = TestRepo::new();
    repo.write("a.txt", "committed\n");
    repo.commit_all("one");
    let dir = repo
        .path()
        .join(".git/phasegate/protect/20250101T000000Z-1");
    std::fs::create_dir_all(dir.join("files")).unwrap();
    std::fs::write(dir.join("files/0"), "the user's unstaged work\n").unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let path: Vec<u8> = b"a.txt".to_vec();
    std::fs::write(
        dir.join("journal.json"),
        serde_json::json!({
            "state": "saved",
            "pid": pid,
            "entries": [{"path": path, "saved": "files/0", "mode": 0o100_644, "intent_to_add": false}],
        })
        .to_string(),
    )
    .unwrap();
    let run = repo.phasegate(&["restore"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read("a.txt"), "the user's unstaged work\n");
    assert!(!dir.exists());
}

#[test]
fn a_link_whose_target_is_not_utf8_comes_back_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    std::os::unix::fs::symlink("plain", repo.path().join("link")).unwrap();
    repo.write("a.txt", "one\n");
    repo.commit_all("one");
    repo.stage("a.txt", "two\n");
    std::fs::remove_file(repo.path().join("link")).unwrap();
    std::os::unix::fs::symlink(
        std::ffi::OsStr::from_bytes(b"caf\xe9-target"),
        repo.path().join("link"),
    )
    .unwrap();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", shell = true, command = \"test \\\"$(readlink link)\\\" = plain\" } ]\n");
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "the check saw the committed link: {v:#}");
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn the_index_cache_tree_never_hides_a_staged_change() {
    // git keeps a tree id per directory in the index; where it matches
    // HEAD's nothing is staged there, where it does not, something is.
    let repo = TestRepo::new();
    for dir in ["a", "b", "c/deep"] {
        repo.write(&format!("{dir}/one.txt"), "one\n")
            .write(&format!("{dir}/two.txt"), "two\n");
    }
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    repo.commit_all("one");
    let staged = |repo: &TestRepo| {
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{v:#}");
        v["selection"]["files"].as_u64().unwrap()
    };
    assert_eq!(staged(&repo), 0, "a clean index");
    repo.stage("c/deep/two.txt", "changed\n");
    assert_eq!(staged(&repo), 1);
    repo.git(&["commit", "-qm", "two"]);
    assert_eq!(staged(&repo), 0);
    // The index's trees are the newer commit's; HEAD is the older one.
    repo.git(&["reset", "-q", "--soft", "HEAD~1"]);
    assert_eq!(staged(&repo), 1, "the undone commit's change is staged");
    repo.git(&["write-tree"]);
    assert_eq!(staged(&repo), 1, "with every cached tree valid again");
}

#[test]
fn a_sparse_index_gets_a_clear_error() {
    let repo = TestRepo::new();
    repo.write("a/one.txt", "one\n").write("b/two.txt", "two\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    repo.commit_all("one");
    repo.git(&["sparse-checkout", "init", "--cone", "--sparse-index"]);
    repo.git(&["sparse-checkout", "set", "a"]);
    repo.stage("a/one.txt", "staged\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("--no-sparse-index"), "{message}");
    // A range is read from commits: it still runs, and says what it could
    // not do.
    let (code, v) = repo.verdict(&["--from-ref", "HEAD", "--to-ref", "HEAD"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        v["notes"].to_string().contains("--no-sparse-index"),
        "{v:#}"
    );
}

#[test]
fn a_killed_run_whose_pid_now_belongs_to_another_process_is_still_recovered() {
    let repo = partially_staged();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let before = snapshot(&repo);
    let marker = repo.path().join(".git/phasegate/paused");
    let mut child = start_paused(&repo, Some("checked-out"), &marker);
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(&marker).unwrap();

    // After a reboot, say, the killed run's pid is some other live
    // process's: its lock file and journal name that pid.
    let mut other = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let protect = repo.path().join(".git/phasegate/protect");
    std::fs::write(protect.join("lock"), other.id().to_string()).unwrap();
    let run_dir = std::fs::read_dir(&protect)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("the killed run's saved changes");
    let journal_path = run_dir.join("journal.json");
    let mut journal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&journal_path).unwrap()).unwrap();
    journal["pid"] = other.id().into();
    std::fs::write(&journal_path, serde_json::to_vec(&journal).unwrap()).unwrap();

    let run = repo.phasegate(&["run"]);
    other.kill().unwrap();
    other.wait().unwrap();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("restored the unstaged changes"),
        "{}",
        run.stdout
    );
    assert_eq!(snapshot(&repo), before);
}

#[test]
fn files_under_a_filter_program_are_compared_and_checked_out_as_git_does() {
    // git-lfs and git-crypt install filter programs, which libgit2 cannot
    // run: the checks must see the content git would check out, never what
    // the object store keeps (a pointer, ciphertext).
    let repo = TestRepo::new();
    repo.git(&["config", "filter.rot13.clean", "tr A-Za-z N-ZA-Mn-za-m"]);
    repo.git(&["config", "filter.rot13.smudge", "tr A-Za-z N-ZA-Mn-za-m"]);
    repo.write(".gitattributes", "*.txt filter=rot13\n");
    repo.write("f.txt", "hello\n").write("g.txt", "other\n");
    repo.commit_all("one");
    assert_eq!(repo.git(&["cat-file", "-p", "HEAD:g.txt"]), "bgure\n");
    repo.stage("f.txt", "hello staged\n");
    let seen = repo.path().join(".git/seen");
    for isolation in ["worktree", "snapshot"] {
        repo.write("f.txt", "hello staged, and unstaged\n");
        // Written again with the same content: new stat data, no change.
        std::fs::remove_file(repo.path().join("g.txt")).unwrap();
        repo.write("g.txt", "other\n");
        assert_eq!(repo.git(&["status", "--porcelain", "-uno"]), "MM f.txt\n");
        repo.config(&format!(
            "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat f.txt g.txt > {}; cat g.txt > g.new; mv g.new g.txt\" }} ]\n",
            seen.display()
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{isolation}: {v:#}");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            "hello staged\nother\n",
            "{isolation}"
        );
        assert_eq!(repo.read("f.txt"), "hello staged, and unstaged\n");
        assert_eq!(repo.read("g.txt"), "other\n");
        assert_eq!(repo.git(&["status", "--porcelain", "-uno"]), "MM f.txt\n");
    }

    // A smudge program that fails is an error the run reports, and the
    // unstaged change still comes back.
    repo.git(&["config", "filter.rot13.smudge", "false"]);
    repo.git(&["config", "filter.rot13.required", "true"]);
    repo.config("[phases.implementation]\nchecks = [ { name = \"look\", command = \"true\" } ]\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("git filters"), "{v:#}");
    assert!(message.contains("smudge filter rot13 failed"), "{v:#}");
    assert_eq!(repo.read("f.txt"), "hello staged, and unstaged\n");
    assert_eq!(journals_left(&repo), 0, "nothing is left to restore");
}

#[test]
fn a_directory_in_place_of_a_tracked_file_is_a_clear_error_and_nothing_moves() {
    let repo = TestRepo::new();
    repo.write("a", "a1\n").write("b.txt", "b1\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    repo.commit_all("one");
    repo.stage("a", "a2 staged\n");
    repo.write("b.txt", "b2 unstaged\n");
    std::fs::remove_file(repo.path().join("a")).unwrap();
    repo.write("a/inside.txt", "untracked, in the way\n");
    let before = snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("a directory stands in its place") && message.contains("/a`"),
        "{message}"
    );
    assert_eq!(snapshot(&repo), before);
    assert_eq!(journals_left(&repo), 0, "nothing is left to recover");
}

#[test]
fn nothing_is_ever_written_through_a_link_where_a_directory_was() {
    // git sees nothing of a tracked path beyond a symbolic link; writing it
    // would change a file outside the repository.
    let outside = TestRepo::plain();
    outside.write("x", "outside, untouched\n");
    let staged = || {
        let repo = TestRepo::new();
        repo.write("d/x", "x1\n");
        repo.commit_all("one");
        repo.stage("d/x", "x2 staged\n");
        repo
    };
    let repo = staged();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    std::fs::remove_dir_all(repo.path().join("d")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("d")).unwrap();
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("a symbolic link stands in place of its directory"),
        "{message}"
    );
    assert_eq!(outside.read("x"), "outside, untouched\n");

    // A check that puts the link there itself: the link goes with the
    // run's dropped files, and the unstaged change comes back.
    let repo = staged();
    repo.write("d/x", "x3 unstaged\n");
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, command = \"mv d d.moved && ln -s '{}' d\" }} ]\n",
        outside.path().display()
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outside.read("x"), "outside, untouched\n");
    assert_eq!(repo.read("d/x"), "x3 unstaged\n");
    assert_eq!(repo.git(&["show", ":d/x"]), "x2 staged\n");
    let dropped = repo
        .path()
        .join(".git/phasegate/runs")
        .join(v["run_id"].as_str().unwrap())
        .join("dropped/d");
    assert_eq!(std::fs::read_link(dropped).unwrap(), outside.path());
}

#[test]
fn a_killed_run_in_one_work_tree_is_never_recovered_into_another() {
    // Linked worktrees share the common git directory; the unstaged changes
    // a run set aside belong to its own work tree alone.
    let main = partially_staged();
    main.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let linked = main.linked_worktree("linked-killed");
    std::fs::write(linked.join("a.txt"), "linked's own unstaged work\n").unwrap();
    let before = snapshot(&main);
    let mut child = start_paused(
        &main,
        Some("checked-out"),
        &main.path().join(".git/phasegate/paused"),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(main.read("a.txt"), "a2 staged\n", "killed mid-run");

    let in_linked = main.phasegate_in(&linked, &["run", "--format", "json"]);
    assert_eq!(in_linked.code, 0, "{in_linked:?}");
    assert_eq!(
        std::fs::read_to_string(linked.join("a.txt")).unwrap(),
        "linked's own unstaged work\n"
    );
    assert_eq!(
        main.read("a.txt"),
        "a2 staged\n",
        "still waiting for its own"
    );

    let restored = main.phasegate(&["restore"]);
    assert_eq!(restored.code, 0, "{restored:?}");
    std::fs::remove_file(main.path().join(".git/phasegate/paused")).unwrap();
    assert_eq!(snapshot(&main), before);
    main.git(&["worktree", "remove", "--force", &linked.to_string_lossy()]);
}

#[test]
fn a_copy_of_a_work_tree_never_takes_the_original_s_set_aside_changes() {
    let repo = partially_staged();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let mut child = start_paused(
        &repo,
        Some("checked-out"),
        &repo.path().join(".git/phasegate/paused"),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(repo.path().join(".git/phasegate/paused")).unwrap();
    let copy = TestRepo::plain();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", repo.path().display()))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());

    let (code, v) = copy.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("another work tree") && message.contains(&*repo.path().to_string_lossy()),
        "{message}"
    );
    assert_eq!(copy.read("a.txt"), "a2 staged\n");
    assert_eq!(repo.phasegate(&["restore"]).code, 0);
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
}

#[test]
fn a_check_that_changes_staged_files_fails_the_run_with_nothing_unstaged() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").write("sub/b.txt", "b\n");
    std::fs::write(repo.path().join(".git/info/exclude"), "phasegate.toml\n").unwrap();
    repo.commit_all("one");
    repo.stage("a.txt", "a staged\n");
    let gate = |command: &str| {
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"fmt\", shell = true, command = {command:?} }} ]\n"
        ));
        repo.verdict(&[])
    };
    // Untracked output (a cache directory, a build file) is no change.
    let (code, v) =
        gate("mkdir -p __pycache__ sub/cache && echo x > __pycache__/c && echo y > out.log");
    assert_eq!(code, 0, "{v:#}");

    for (command, changed) in [
        ("printf 'a formatted\\n' > a.txt", "a.txt"),
        (
            "printf 'b\\n' > b.new && mv b.new sub/b.txt && touch sub/b.txt",
            "",
        ),
        (
            "mv sub moved && printf 'b formatted\\n' > moved/b.txt && mv moved sub",
            "sub/b.txt",
        ),
    ] {
        let (code, v) = gate(command);
        if changed.is_empty() {
            assert_eq!(code, 0, "{command}: the same content is no change: {v:#}");
            continue;
        }
        assert_eq!(code, 1, "{command}: {v:#}");
        let message = v["diagnostics"][0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("files were modified by `fmt`: {changed}")),
            "{command}: {v:#}"
        );
        repo.git(&["checkout", "--", changed]);
    }
}

/// A run killed while it holds `partially_staged`'s changes aside (at
/// staged content in the work tree); the repository is left as the kill
/// left it.
fn killed_mid_run(repo: &TestRepo) {
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    let marker = repo.path().join(".git/phasegate/paused");
    let mut child = start_paused(repo, Some("checked-out"), &marker);
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(repo.read("a.txt"), "a2 staged\n");
}

#[test]
fn what_is_written_after_a_killed_run_is_kept_before_its_changes_come_back() {
    for recover_with in ["restore", "run"] {
        let repo = partially_staged();
        killed_mid_run(&repo);
        // The user goes on working on what they see, before anything
        // finishes the killed run.
        repo.write("a.txt", "a2 staged\nnew work\n");
        let run = match recover_with {
            "restore" => repo.phasegate(&["restore"]),
            _ => repo.phasegate(&["run"]),
        };
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        // The unstaged changes are back, as promised...
        assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
        assert_eq!(repo.read("b.txt"), "b2 unstaged only\n");
        // ...and what replaced them is kept, and said where.
        let kept: Vec<_> = std::fs::read_dir(repo.path().join(".git/phasegate/kept"))
            .unwrap()
            .map(|d| d.unwrap().path())
            .collect();
        assert_eq!(kept.len(), 1, "{recover_with}");
        assert_eq!(
            std::fs::read_to_string(kept[0].join("a.txt")).unwrap(),
            "a2 staged\nnew work\n"
        );
        // b.txt still held what the killed run put there: nothing to keep.
        assert!(!kept[0].join("b.txt").exists());
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains(&kept[0].display().to_string()) && said.contains("a.txt"),
            "{recover_with}: {said}"
        );
    }
}

#[test]
fn a_killed_runs_checks_are_stopped_before_its_changes_come_back() {
    let repo = partially_staged();
    let pid_file = repo.home().join("formatter.pid");
    let _ = std::fs::remove_file(&pid_file);
    // A formatter that goes on writing for as long as it lives.
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"fmt\", shell = true, command = \"echo $$ > {}; while :; do echo formatted > a.txt; sleep 0.01; done\" }} ]\n",
        pid_file.display()
    ));
    let mut child = start_paused(&repo, None, &pid_file);
    let formatter: u32 = crate::support::wait_for("the formatter's pid", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    // Killed once its process group is on record (a moment after it starts).
    crate::support::wait_for("the recorded process group", || {
        let protect = repo.path().join(".git/phasegate/protect");
        std::fs::read_dir(protect)
            .ok()?
            .flatten()
            .any(|d| std::fs::metadata(d.path().join("groups")).is_ok_and(|m| m.len() > 0))
            .then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();

    let run = repo.phasegate(&["restore"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(crate::support::process_gone(formatter));
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
    assert_eq!(repo.read("b.txt"), "b2 unstaged only\n");
}

#[test]
fn a_check_that_stages_or_unstages_files_fails_the_run_with_nothing_unstaged() {
    for (script, path) in [
        ("echo unchecked > gen.txt; git add gen.txt", "gen.txt"),
        ("git rm -q --cached old.txt", "old.txt"),
        ("git update-index --chmod=+x a.txt", "a.txt"),
    ] {
        let repo = TestRepo::new();
        repo.write("old.txt", "old\n").commit_all("one");
        repo.stage("a.txt", "a\n");
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, command = {script:?} }} ]\n"
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{script}: {v:#}");
        let said = v["summary"].to_string();
        assert!(
            said.contains("files were modified by") && said.contains(path),
            "{script}: {v:#}"
        );
    }
    // A check that only reads the index (and refreshes it, as `git status`
    // does) changes nothing.
    let repo = TestRepo::new();
    repo.write("old.txt", "old\n").commit_all("one");
    repo.stage("a.txt", "a\n");
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", shell = true, command = \"touch old.txt; git status >/dev/null; git diff --cached --quiet; true\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn a_staged_run_judges_the_staged_configuration_and_handoff_documents() {
    let doc = std::fs::read_to_string(format!(
        "{}/fixtures/handoff/valid-complete.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let broken = doc.replace("status: complete", "status: bogus");
    let gate = |command: &str| {
        format!("[gate]\ndefault_phase = \"implementation\"\n[commands]\ntests = \"true\"\nlint = \"true\"\n[phases.implementation]\nchecks = [ {{ name = \"tests\" }}, {{ name = \"lint\" }}, {{ name = \"c\", command = \"{command}\" }} ]\n[handoff]\npaths = [\"handoffs/**/*.md\"]\n")
    };
    for (staged, unstaged, valid) in [(&broken, &doc, false), (&doc, &broken, true)] {
        let repo = TestRepo::new();
        repo.config(&gate("true")).commit_all("gate");
        repo.stage("handoffs/F1.md", staged);
        repo.write("handoffs/F1.md", unstaged);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(v["handoffs"][0]["valid"], valid, "{v:#}");
        assert_eq!(code, i32::from(!valid), "{v:#}");
        // The unstaged version is back afterwards.
        assert_eq!(repo.read("handoffs/F1.md"), *unstaged);
    }
    for (staged, unstaged, code) in [("false", "true", 1), ("true", "false", 0)] {
        let repo = TestRepo::new();
        repo.write("a.txt", "a\n").commit_all("one");
        repo.stage("phasegate.toml", &gate(staged));
        repo.write("phasegate.toml", &gate(unstaged));
        let (got, v) = repo.verdict(&[]);
        assert_eq!(got, code, "{v:#}");
        assert!(
            v["notes"]
                .to_string()
                .contains("the staged version was used"),
            "{v:#}"
        );
    }
}

#[test]
fn a_check_in_a_snapshot_runs_git_on_what_is_staged_without_touching_the_repository() {
    let repo = partially_staged();
    repo.config(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ { name = \"git\", shell = true, command = \"test \\\"$(git rev-parse --show-toplevel)\\\" = \\\"$(pwd -P)\\\" && git diff --cached --name-only | grep -qx a.txt && git status --porcelain | grep -q '^M  a.txt' && git add -A && git commit -qm inside\" } ]\n",
    );
    let head = repo.git(&["rev-parse", "HEAD"]);
    let index = std::fs::read(repo.path().join(".git/index")).unwrap();
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    // The check's commit moved nothing of the repository's.
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(
        std::fs::read(repo.path().join(".git/index")).unwrap(),
        index
    );
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
}

#[test]
fn restored_files_are_newer_than_before_and_deleted_directories_stay_deleted() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n")
        .write("d/e/f.txt", "f\n")
        .commit_all("one");
    repo.stage("a.txt", "a2 staged\n");
    repo.write("a.txt", "a3 unstaged\n");
    let a = repo.path().join("a.txt");
    let then = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 123_456_789);
    std::fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(then)
        .unwrap();
    // The whole directory deleted in the work tree only.
    std::fs::remove_dir_all(repo.path().join("d")).unwrap();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", shell = true, command = \"test -f d/e/f.txt\" } ]\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(repo.read("a.txt"), "a3 unstaged\n");
    assert!(std::fs::metadata(&a).unwrap().modified().unwrap() > then);
    assert!(!repo.path().join("d").exists());
}

#[test]
fn a_ref_that_is_not_here_gets_the_fetch_that_would_bring_it() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    repo.commit_all("base");
    // With no remote yet, a remote-tracking name still says what to fetch.
    let (code, v) = repo.verdict(&["--from-ref", "origin/main", "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].to_string();
    assert!(message.contains("`git fetch origin main`"), "{message}");
    let (_, v) = repo.verdict(&["--from-ref", "feature/x", "--to-ref", "HEAD"]);
    let message = v["error"]["message"].to_string();
    assert!(
        message.contains("`git fetch origin feature/x`"),
        "{message}"
    );
    repo.git(&["remote", "add", "upstream", "https://example.invalid/r.git"]);
    let (code, v) = repo.verdict(&["--from-ref", "upstream/main", "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].to_string();
    assert!(message.contains("`git fetch upstream main`"), "{message}");
    let (_, v) = repo.verdict(&[
        "--from-ref",
        "refs/remotes/upstream/dev",
        "--to-ref",
        "HEAD",
    ]);
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("`git fetch upstream dev`"),
        "{v:#}"
    );
    let (_, v) = repo.verdict(&["--from-ref", "v9.9", "--to-ref", "HEAD"]);
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("`git fetch upstream tag v9.9`"),
        "{v:#}"
    );
}

#[test]
fn pull_request_target_on_its_own_checkout_refuses_to_run_the_pull_requests_code() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"echo {files}\" } ]\n");
    repo.write("base.md", "# base\n");
    repo.commit_all("base");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("feature.md", "# feature\n");
    repo.commit_all("feature");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let main = repo.git(&["rev-parse", "main"]).trim().to_string();
    repo.git(&["update-ref", "refs/remotes/origin/main", &main]);
    let event = repo.path().join(".git/event.json");
    std::fs::write(
        &event,
        format!(
            r#"{{"action": "opened", "number": 7, "pull_request": {{"head": {{"ref": "feature", "sha": "{head}"}}, "base": {{"ref": "main", "sha": "{main}"}}}}}}"#
        ),
    )
    .unwrap();
    let event = event.to_string_lossy().into_owned();
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request_target"),
        ("GITHUB_BASE_REF", "main"),
        ("GITHUB_HEAD_REF", "feature"),
        ("GITHUB_SHA", main.as_str()),
        ("GITHUB_EVENT_PATH", event.as_str()),
    ];
    // The event's own checkout is the target branch, which holds nothing
    // of the pull request; checking the pull request out would run its code
    // with the event's secrets. Never a silent pass.
    repo.git(&["checkout", "-q", "main"]);
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("pull_request_target"), "{message}");
    assert!(
        message.contains(&format!("--from-ref origin/main --to-ref {head}")),
        "{message}"
    );
    assert!(v["checks"].as_array().unwrap().is_empty(), "{v:#}");
    // A workflow that checks out the pull request's merge commit is
    // checked as checked out.
    repo.git(&["checkout", "-q", "--detach", "main"]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge", "feature"]);
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["to"], "HEAD");
    assert_eq!(check(&v, "docs")["argv"][0][1], "feature.md");
}

#[test]
fn a_shallow_clone_without_the_merge_base_is_told_to_deepen_it() {
    let origin = crate::ci_shallow::diverged();
    // As CI clones: one commit of each branch.
    let clone = origin.shallow_clone("feature", "shallow", &["--no-single-branch"]);
    let verdict = |args: &[&str]| {
        let mut all = vec!["run", "--format", "json"];
        all.extend_from_slice(args);
        let run = origin.phasegate_in(&clone, &all);
        (run.code, run.json())
    };
    let (code, v) = verdict(&["--from-ref", "origin/main", "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("no common ancestor"), "{message}");
    assert!(message.contains("git fetch --deepen="), "{message}");
    // A commit named by its place in history cannot be fetched by that
    // name: the clone needs more history.
    let (code, v) = verdict(&["--from-ref", "HEAD~2", "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("git fetch --deepen="), "{message}");
    assert!(!message.contains("git fetch origin HEAD~2"), "{message}");
    std::fs::remove_dir_all(&clone).unwrap();

    // Unrelated histories in a full clone are no shallow clone's doing.
    origin.git(&["checkout", "-q", "--orphan", "unrelated"]);
    origin.commit_all("unrelated");
    let (code, v) = origin.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("unrelated"), "{message}");
    assert!(!message.contains("shallow"), "{message}");
}

#[test]
fn named_files_that_are_links_are_selected_as_the_links() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"args\", files = [\"*.txt\"], command = \"echo {files}\" } ]\n");
    repo.write("target.txt", "target\n");
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::os::unix::fs::symlink("target.txt", repo.path().join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("out.txt")).unwrap();
    repo.commit_all("links");
    let (code, v) = repo.verdict(&["--files", "link.txt", "out.txt"]);
    assert_eq!(code, 0, "{v:#}");
    let argv = &check(&v, "args")["argv"][0];
    assert_eq!(argv[1], "link.txt", "{v:#}");
    assert_eq!(argv[2], "out.txt", "{v:#}");
}

#[test]
fn a_phasegate_toml_that_is_a_link_is_read_through_it_from_a_ref_and_from_the_index() {
    let repo = TestRepo::new();
    repo.write(
        "conf/gate.toml",
        "[phases.implementation]\nchecks = [ { name = \"strict\", command = \"false\" } ]\n",
    );
    std::os::unix::fs::symlink("conf/gate.toml", repo.path().join("phasegate.toml")).unwrap();
    repo.commit_all("the gate, kept elsewhere");
    assert_eq!(repo.verdict(&["--all-files"]).0, 1);
    let (code, v) = repo.verdict(&["--all-files", "--config-from-ref", "HEAD"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "strict")["status"], "failed");
    // A staged run reads the staged link the same way once its stat data
    // no longer matches the index.
    repo.stage("x.txt", "x\n");
    let touched = repo
        .command("touch")
        .args(["-h", "-d", "2001-01-01", "phasegate.toml"])
        .status()
        .unwrap();
    assert!(touched.success());
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "strict")["status"], "failed");
    // A link out of the repository is not followed.
    std::fs::remove_file(repo.path().join("phasegate.toml")).unwrap();
    std::os::unix::fs::symlink("../outside.toml", repo.path().join("phasegate.toml")).unwrap();
    repo.commit_all("out");
    let (code, v) = repo.verdict(&["--all-files", "--config-from-ref", "HEAD"]);
    assert_eq!(code, 2, "{v:#}");
    // Named as the ref holds it: the work tree's may be a good file.
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("`phasegate.toml@HEAD` is a symbolic link that leads out of the repository"),
        "{v:#}"
    );
}

#[test]
fn a_smudge_program_that_changes_the_length_of_a_file_is_followed_as_git_does() {
    // git-lfs's smudge turns a pointer of some hundred bytes into the whole
    // file; `git cat-file --batch --filters` still heads what it prints with
    // the size of the object as stored.
    let repo = TestRepo::new();
    repo.git(&["config", "filter.secret.clean", "sed s/SECRET/x/"]);
    repo.git(&["config", "filter.secret.smudge", "sed s/x/SECRET/"]);
    repo.write(".gitattributes", "*.txt filter=secret\n");
    repo.write("f.txt", "one SECRET\n")
        .write("g.txt", "two SECRET\n");
    repo.commit_all("one");
    assert_eq!(repo.git(&["cat-file", "-p", "HEAD:f.txt"]), "one x\n");
    repo.stage("f.txt", "one SECRET\nstaged SECRET\n");
    let seen = repo.path().join(".git/seen");
    for isolation in ["worktree", "snapshot"] {
        repo.write("f.txt", "one SECRET\nstaged SECRET\nunstaged\n");
        repo.config(&format!(
            "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat f.txt g.txt > {}\" }} ]\n",
            seen.display()
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{isolation}: {v:#}");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            "one SECRET\nstaged SECRET\ntwo SECRET\n",
            "{isolation}"
        );
        assert_eq!(repo.read("f.txt"), "one SECRET\nstaged SECRET\nunstaged\n");
        assert_eq!(repo.git(&["status", "--porcelain", "-uno"]), "MM f.txt\n");
    }
}

#[test]
fn a_file_kept_in_another_encoding_is_seen_by_the_checks_as_git_checks_it_out() {
    // `working-tree-encoding`: git stores UTF-8 and writes UTF-16 to the
    // work tree; libgit2 knows nothing of it.
    let utf16 =
        |text: &str| -> Vec<u8> { text.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    let repo = TestRepo::new();
    let put = |path: &str, text: &str| std::fs::write(repo.path().join(path), utf16(text)).unwrap();
    repo.write(".gitattributes", "*.txt working-tree-encoding=UTF-16LE\n");
    put("f.txt", "one\n");
    put("h.txt", "h\n");
    // Enough files that a snapshot asks git about all of them at once.
    for i in 0..80 {
        repo.write(&format!("n/{i}.md"), "n\n");
    }
    repo.commit_all("one");
    assert_eq!(repo.git(&["cat-file", "-p", "HEAD:f.txt"]), "one\n");
    put("f.txt", "one\nstaged\n");
    repo.git(&["add", "f.txt"]);
    let seen = repo.path().join(".git/seen");
    for isolation in ["worktree", "snapshot"] {
        put("f.txt", "one\nstaged\nunstaged\n");
        // Touched, not changed: git sees no change once it converts.
        let touched = repo.command("touch").arg("h.txt").status().unwrap();
        assert!(touched.success());
        repo.config(&format!(
            "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat f.txt h.txt > {}\" }} ]\n",
            seen.display()
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{isolation}: {v:#}");
        assert_eq!(
            std::fs::read(&seen).unwrap(),
            [utf16("one\nstaged\n"), utf16("h\n")].concat(),
            "{isolation}"
        );
        assert_eq!(
            std::fs::read(repo.path().join("f.txt")).unwrap(),
            utf16("one\nstaged\nunstaged\n")
        );
        assert_eq!(repo.git(&["status", "--porcelain", "-uno"]), "MM f.txt\n");
    }
}

#[test]
fn an_encoding_set_outside_the_repositorys_own_attributes_is_honoured_too() {
    // git reads attributes from more places than `.gitattributes`:
    // phasegate, which reads them to know whether git must be asked, must
    // miss none of them.
    let utf16 =
        |text: &str| -> Vec<u8> { text.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    let line = "*.txt working-tree-encoding=UTF-16LE\n";
    let sources = [
        "global file under XDG_CONFIG_HOME",
        "global file under HOME",
        "core.attributesFile",
        "info/attributes",
        "a parent directory's .gitattributes",
    ];
    for source in sources {
        let repo = TestRepo::new();
        let home = repo.home();
        let xdg = home.join("xdg");
        let (file, env): (std::path::PathBuf, Vec<(&str, &str)>) = match source {
            "global file under XDG_CONFIG_HOME" => (
                xdg.join("git/attributes"),
                vec![("XDG_CONFIG_HOME", xdg.to_str().unwrap())],
            ),
            "global file under HOME" => (home.join(".config/git/attributes"), vec![]),
            "core.attributesFile" => {
                repo.git(&["config", "core.attributesFile", "~/attrs"]);
                (home.join("attrs"), vec![])
            }
            "info/attributes" => (repo.path().join(".git/info/attributes"), vec![]),
            _ => (repo.path().join("sub/.gitattributes"), vec![]),
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, line).unwrap();
        let git = |args: &[&str]| {
            let out = repo
                .command("git")
                .envs(env.clone())
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{source}: git {args:?}: {out:?}");
        };
        let put = |text: &str| std::fs::write(repo.path().join("sub/f.txt"), utf16(text)).unwrap();
        repo.write("sub/g.md", "g\n");
        put("one\n");
        git(&["add", "-A"]);
        git(&["commit", "-qm", "one"]);
        assert_eq!(
            repo.git(&["cat-file", "-p", "HEAD:sub/f.txt"]),
            "one\n",
            "{source}"
        );
        put("one\nstaged\n");
        git(&["add", "sub/f.txt"]);
        let seen = repo.path().join(".git/seen");
        for isolation in ["worktree", "snapshot"] {
            put("one\nstaged\nunstaged\n");
            repo.config(&format!(
                "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"cat sub/f.txt > {}\" }} ]\n",
                seen.display()
            ));
            let (code, v) = repo.verdict_with(&[], &env);
            assert_eq!(code, 0, "{source}, {isolation}: {v:#}");
            assert_eq!(
                std::fs::read(&seen).unwrap(),
                utf16("one\nstaged\n"),
                "{source}, {isolation}"
            );
            assert_eq!(
                std::fs::read(repo.path().join("sub/f.txt")).unwrap(),
                utf16("one\nstaged\nunstaged\n"),
                "{source}, {isolation}"
            );
        }
    }
}

#[test]
fn a_file_staged_in_place_of_a_link_and_a_link_in_place_of_a_file_are_what_the_checks_see() {
    use std::os::unix::fs::symlink;
    let repo = TestRepo::new();
    let (l, b) = (repo.path().join("l"), repo.path().join("b.txt"));
    repo.write("a.txt", "a\n").write("b.txt", "b\n");
    symlink("a.txt", &l).unwrap();
    repo.commit_all("one");
    // `l` is a link in HEAD and a file in the index, `b.txt` the other way
    // round; the work tree holds something else again for each.
    std::fs::remove_file(&l).unwrap();
    repo.stage("l", "staged file\n");
    std::fs::remove_file(&l).unwrap();
    symlink("b.txt", &l).unwrap();
    std::fs::remove_file(&b).unwrap();
    symlink("a.txt", &b).unwrap();
    repo.git(&["add", "b.txt"]);
    std::fs::remove_file(&b).unwrap();
    repo.write("b.txt", "unstaged file\n");
    assert_eq!(
        repo.git(&["status", "--porcelain", "-uno"]),
        "TT b.txt\nTT l\n"
    );
    let seen = repo.path().join(".git/seen");
    for isolation in ["worktree", "snapshot"] {
        repo.config(&format!(
            "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"{{ test -L l || cat l; readlink b.txt; }} > {}\" }} ]\n",
            seen.display()
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{isolation}: {v:#}");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            "staged file\na.txt\n",
            "{isolation}"
        );
        assert_eq!(std::fs::read_link(&l).unwrap(), Path::new("b.txt"));
        assert_eq!(repo.read("b.txt"), "unstaged file\n");
        assert_eq!(
            repo.git(&["status", "--porcelain", "-uno"]),
            "TT b.txt\nTT l\n"
        );
    }
}

#[test]
fn an_intent_to_add_file_is_left_out_of_a_snapshot_as_it_is_set_aside_in_place() {
    // Nothing of it is staged: the commit will not hold it.
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("one");
    repo.write("new.txt", "not staged\n");
    repo.git(&["add", "--intent-to-add", "new.txt"]);
    repo.stage("a.txt", "b\n");
    for isolation in ["worktree", "snapshot"] {
        repo.config(&format!(
            "[gate]\nisolation = \"{isolation}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = \"test ! -e new.txt\" }} ]\n"
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 0, "{isolation}: {v:#}");
        assert_eq!(repo.read("new.txt"), "not staged\n");
        assert_eq!(
            repo.git(&["status", "--porcelain", "-uno"]),
            "M  a.txt\n A new.txt\n"
        );
    }
}

#[test]
fn a_read_only_file_a_killed_run_had_written_back_does_not_stop_the_others_coming_back() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    repo.write("a.txt", "one\n").write("b.txt", "one\n");
    repo.commit_all("one");
    repo.stage("a.txt", "staged\n");
    repo.write("a.txt", "staged\nunstaged\n")
        .write("b.txt", "one\nunstaged\n");
    let a = repo.path().join("a.txt");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o444)).unwrap();
    // Killed once a.txt was written back, with its read-only mode.
    let marker = repo.path().join(".git/phasegate/paused");
    let mut child = start_paused(&repo, Some("restoring"), &marker);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    assert_eq!(repo.read("b.txt"), "one\n");
    // Root meets file modes too once it may no longer override them.
    let mut restore = if rustix::process::geteuid().is_root() {
        let mut command = repo.command("setpriv");
        command.args(["--bounding-set=-dac_override", "--", crate::support::BIN]);
        command
    } else {
        repo.command(crate::support::BIN)
    };
    let run = crate::support::output(&restore.arg("restore").output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read("a.txt"), "staged\nunstaged\n");
    assert_eq!(repo.read("b.txt"), "one\nunstaged\n");
    let mode = std::fs::metadata(&a).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o444);
}

#[test]
fn a_named_directory_stands_for_its_tracked_files_and_git_s_own_is_left_out() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"args\", files = [\"*.txt\"], command = \"echo {files}\" } ]\n");
    repo.write("src/a.txt", "a\n");
    repo.write("src/deep/b.txt", "b\n");
    repo.write("src/gone.txt", "gone\n");
    repo.write("other/c.txt", "c\n");
    repo.commit_all("files");
    std::fs::remove_file(repo.path().join("src/gone.txt")).unwrap();
    repo.write("src/untracked.txt", "new\n");
    std::fs::create_dir(repo.path().join("empty")).unwrap();

    let (code, v) = repo.verdict(&["--files", "src/", ".git/config", "empty"]);
    assert_eq!(code, 0, "{v:#}");
    let argv: Vec<&str> = check(&v, "args")["argv"][0]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv, ["src/a.txt", "src/deep/b.txt"], "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("`.git/config` is inside git's own directory"),
        "{notes}"
    );
    assert!(notes.contains("`empty` holds no tracked file"), "{notes}");

    // From a subdirectory, `.` is that directory.
    let run = repo.phasegate_in(
        &repo.path().join("src/deep"),
        &["run", "--format", "json", "--files", "."],
    );
    assert_eq!(
        check(&run.json(), "args")["argv"][0][1],
        "src/deep/b.txt",
        "{run:?}"
    );
}

#[test]
fn a_named_file_nobody_has_is_a_usage_error_and_a_deleted_one_is_left_out() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"args\", files = [\"*.txt\"], command = \"echo {files}\" } ]\n");
    repo.write("src/a.txt", "a\n");
    repo.write("old/gone.txt", "gone\n");
    repo.commit_all("files");
    std::fs::remove_dir_all(repo.path().join("old")).unwrap();

    // A typo must not pass a run that checked nothing.
    let (code, v) = repo.verdict(&["--files", "src/typo.txt"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("`src/typo.txt` does not exist"),
        "{v:#}"
    );
    // So must a file named as a directory (it is no deleted file).
    let (code, v) = repo.verdict(&["--files", "src/a.txt/"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(
        v["error"]["message"].to_string().contains("`src/a.txt/`"),
        "{v:#}"
    );
    // A tracked file deleted in the work tree (its directory too), as a
    // list of changed files names it: left out, said, the rest checked.
    let (code, v) = repo.verdict(&["--files", "old/gone.txt", "src/a.txt"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "args")["argv"][0][1], "src/a.txt", "{v:#}");
    assert!(
        v["notes"]
            .to_string()
            .contains("`old/gone.txt` is deleted in the work tree"),
        "{v:#}"
    );
    // Outside a repository too.
    let plain = TestRepo::plain();
    let run = plain.phasegate(&["run", "--format", "json", "--files", "nope.txt"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
}

#[test]
fn restore_names_each_file_on_its_own_line_whatever_its_name_holds() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    let odd = "two\nlines \u{1b}[31m.txt";
    repo.write(odd, "committed\n");
    repo.commit_all("one");
    repo.stage(odd, "staged\n");
    repo.write(odd, "staged\nunstaged\n");
    repo.kill_run_at("checked-out", &["run"]);

    let run = repo.phasegate(&["restore"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read(odd), "staged\nunstaged\n");
    assert_eq!(
        run.stdout,
        "restored the unstaged changes of:\n  two\\x0alines \\x1b[31m.txt\n"
    );
}

#[test]
fn a_range_checked_in_a_sparse_checkout_leaves_out_the_files_it_lacks() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"cat\", files = [\"**/*.txt\"], shell = true, command = \"cat {files} > /dev/null\" } ]\n");
    repo.write("docs/x.txt", "d\n");
    repo.write("src/y.txt", "s\n");
    repo.commit_all("base");
    repo.write("docs/x.txt", "d2\n");
    repo.write("src/y.txt", "s2\n");
    repo.commit_all("change");
    repo.git(&[
        "sparse-checkout",
        "set",
        "--cone",
        "--no-sparse-index",
        "src",
    ]);
    assert!(!repo.exists("docs/x.txt"));
    let (code, v) = repo.verdict(&["--from-ref", "HEAD~1", "--to-ref", "HEAD"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        check(&v, "cat")["argv"][0][2],
        "cat 'src/y.txt' > /dev/null",
        "{v:#}"
    );
    assert!(
        v["notes"]
            .to_string()
            .contains("outside the sparse checkout and were left out"),
        "{v:#}"
    );
}

#[test]
fn sigterm_while_a_smudge_filter_hangs_gives_the_work_tree_back_and_ends_the_filter() {
    // git-lfs waiting on a server: the filter never answers while the
    // files are put at their staged content.
    let repo = TestRepo::new();
    repo.git(&["config", "filter.up.clean", "tr a-z A-Z"]);
    repo.git(&["config", "filter.up.smudge", "tr A-Z a-z"]);
    repo.write(".gitattributes", "*.u filter=up\n");
    repo.config("[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n");
    repo.write("a.u", "base\n");
    repo.commit_all("one");
    repo.stage("a.u", "staged\n");
    repo.write("a.u", "unstaged\n");
    let before = snapshot(&repo);
    let marker = repo.path().join(".git/smudging");
    repo.git(&[
        "config",
        "filter.up.smudge",
        &format!("touch '{}'; sleep 120", marker.display()),
    ]);
    let child = {
        use std::os::unix::process::CommandExt;
        let mut command = repo.command(crate::support::BIN);
        command
            .args(["run", "--format", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        command.spawn().unwrap()
    };
    crate::support::wait_for("the filter to start", || marker.exists().then_some(()));
    let sent = std::time::Instant::now();
    send_signal("TERM", child.id(), false);
    let output = exited(child, "SIGTERM while the filter hangs");
    assert!(
        sent.elapsed().as_secs() < 20,
        "phasegate waited for the filter: {:?}",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    repo.git(&["config", "filter.up.smudge", "tr A-Z a-z"]);
    assert_eq!(snapshot(&repo), before, "the work tree and index");
    assert_eq!(journals_left(&repo), 0);
}
