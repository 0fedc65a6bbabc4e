//! Temporary checkouts (snapshot isolation, ranges, pushes) in reftable repositories.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::reftable::{reftable, repo_with};
use crate::support::{git_pushing, remote_has, said, write_executable, TestRepo};

/// Every file under `dir`, `.git` left out, with its bytes and mode.
fn files_under(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|name| name == ".git") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(base, &path, out);
            } else {
                let name = path.strip_prefix(base).unwrap().to_string_lossy();
                let bytes = std::fs::read(&path).unwrap();
                out.insert(name.into_owned(), (bytes, meta.permissions().mode()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// What a run may not change in the user's repository: the work tree's
/// files, byte for byte and with their modes, the index file's bytes,
/// `HEAD`'s stub and the reftable stack's list of tables, and every ref.
#[derive(Debug, PartialEq)]
struct UserState {
    work_tree: BTreeMap<String, (Vec<u8>, u32)>,
    index: Vec<u8>,
    head_file: Vec<u8>,
    tables: Vec<u8>,
    refs: String,
}

fn user_state(repo: &TestRepo) -> UserState {
    let git = repo.path().join(".git");
    UserState {
        work_tree: files_under(&repo.path()),
        index: std::fs::read(git.join("index")).unwrap(),
        head_file: std::fs::read(git.join("HEAD")).unwrap(),
        tables: std::fs::read(git.join("reftable/tables.list")).unwrap_or_default(),
        refs: repo.git(&["for-each-ref", "--include-root-refs"]),
    }
}

/// The log of the check `name` of a verdict.
fn log_of(repo: &TestRepo, verdict: &serde_json::Value, name: &str) -> String {
    let check = crate::support::check(verdict, name);
    let log = check["log"]
        .as_str()
        .unwrap_or_else(|| panic!("{verdict:#}"));
    repo.read(log)
}

/// A check, in a temporary checkout, that prints where it runs, the
/// subject of the commit git finds at `HEAD` there, and the checkout's
/// `state.txt`, and fails unless that file is `want`; with
/// `isolation = "snapshot"` when `snapshot`.
fn state_check(want: &str, snapshot: bool) -> String {
    let gate = if snapshot {
        "[gate]\nisolation = \"snapshot\"\n\n"
    } else {
        ""
    };
    format!(
        "{gate}[phases.implementation]\nchecks = [ {{ name = \"state\", shell = true, command = \"printf 'at %s\\\\n' \\\"$PWD\\\"; git log -1 --format='head %s'; cat state.txt; test ! -e untracked.txt; test \\\"$(cat state.txt)\\\" = {want}\" }} ]\n"
    )
}

#[test]
fn a_snapshot_checks_the_staged_content_and_leaves_index_and_work_tree_as_they_were() {
    let Some(repo) = reftable() else {
        return;
    };
    repo.config(&state_check("staged", true));
    repo.write("state.txt", "base\n").commit_all("base");
    repo.stage("state.txt", "staged\n");
    // Partially staged: the rest is unstaged, with bytes a text-minded
    // copy would spoil.
    repo.write("state.txt", "staged\nand more, unstaged \u{e9}\r\n\0tail");
    repo.write("untracked.txt", "not in any commit\n");
    let before = user_state(&repo);

    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 0, "{verdict:#}");
    let log = log_of(&repo, &verdict, "state");
    // In a checkout of the index, away from the work tree.
    let at = log.lines().next().unwrap_or_default();
    assert!(
        at.starts_with("at ") && at != format!("at {}", repo.path().display()),
        "{log}"
    );
    assert!(log.contains("\nhead base\nstaged\n"), "{log}");
    assert_eq!(user_state(&repo), before);
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "state.txt\n"
    );

    // What is staged is what the check judges: a failing one is refused.
    repo.stage("state.txt", "broken\n");
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    assert!(
        log_of(&repo, &verdict, "state").contains("\nbroken\n"),
        "{verdict:#}"
    );
}

#[test]
fn a_range_whose_end_is_not_checked_out_checks_that_end_s_files() {
    let Some(repo) = reftable() else {
        return;
    };
    repo.config(&state_check("feature", false));
    repo.write("state.txt", "main\n").commit_all("base");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("state.txt", "feature\n")
        .write("dir/new.txt", "new\n")
        .commit_all("feature");
    repo.git(&["checkout", "-q", "main"]);
    // Work of the user's own on `main`, staged and not.
    repo.stage("state.txt", "main, staged\n");
    repo.write("state.txt", "main, staged\nand unstaged\n");
    repo.write("untracked.txt", "mine\n");
    let before = user_state(&repo);

    let (code, verdict) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(code, 0, "{verdict:#}");
    let log = log_of(&repo, &verdict, "state");
    assert!(log.contains("\nhead feature\nfeature\n"), "{log}");
    assert!(
        !log.contains(&format!("at {}\n", repo.path().display())),
        "{log}"
    );
    assert_eq!(user_state(&repo), before);

    // The other way round, `main`'s committed files, not the work tree's.
    let (code, verdict) = repo.verdict(&["--from-ref", "feature", "--to-ref", "main"]);
    assert_eq!(code, 1, "{verdict:#}");
    assert!(
        log_of(&repo, &verdict, "state").contains("\nmain\n"),
        "{verdict:#}"
    );
    assert_eq!(user_state(&repo), before);
}

#[test]
fn a_push_of_a_branch_that_is_not_checked_out_is_checked_at_its_own_files() {
    let Some(repo) = reftable() else {
        return;
    };
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -H TODO {files}\" } ]\n");
    repo.write("a.md", "# a\n").commit_all("one");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    let installed = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(installed.code, 0, "{installed:?}");

    repo.git(&["checkout", "-qb", "topic"]);
    repo.write("t.md", "# topic TODO\n").commit_all("topic");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.md", "# a, unstaged TODO\n");
    let before = user_state(&repo);

    let refused = git_pushing(&repo, &["push", "-q", "origin", "topic"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(said(&refused).contains("t.md:# topic TODO"), "{refused:?}");
    assert!(!said(&refused).contains("unstaged"), "{refused:?}");
    assert!(!remote_has(&remote, "topic"));
    assert_eq!(user_state(&repo), before);

    // Fixed on the branch, which is not checked out again: pushed.
    repo.git(&["checkout", "-q", "topic"]);
    repo.write("t.md", "# topic\n");
    repo.git(&["commit", "-qm", "fixed", "t.md"]);
    repo.git(&["checkout", "-q", "main"]);
    let before = user_state(&repo);
    let pushed = git_pushing(&repo, &["push", "-q", "origin", "topic"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, "topic"));
    // The push itself adds `origin/topic`; nothing else changed.
    let after = user_state(&repo);
    assert_eq!(after.work_tree, before.work_tree);
    assert_eq!(after.index, before.index);
    assert_eq!(after.head_file, before.head_file);
}

/// The files a run's check copied out of its checkout, with their modes.
type Copied = BTreeMap<String, (Vec<u8>, u32)>;

/// In `repo`: a `.gitattributes` that checks `*.txt` out with CRLF line
/// ends, and `crlf.txt` and an executable `run.sh`, checked in a snapshot
/// of the index (staged), then committed on `feature` and checked as the
/// end of a range while `main` is checked out. A check copies both files
/// out of each checkout, as they were written there.
fn eol_and_mode_checkouts(repo: &TestRepo) -> (Copied, Copied) {
    let out = repo.home().join("copied");
    let copy = format!(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ {{ name = \"copy\", shell = true, command = \"mkdir -p \\\"$OUT\\\" && cp -p crlf.txt run.sh \\\"$OUT\\\"/\", env = {{ OUT = \"{}\" }} }} ]\n",
        out.display()
    );
    repo.config(&copy);
    repo.write(".gitattributes", "*.txt text eol=crlf\n");
    repo.commit_all("base");
    repo.write("crlf.txt", "one\ntwo\n");
    write_executable(&repo.path().join("run.sh"), "#!/bin/sh\necho run\n");
    repo.git(&["add", "crlf.txt", "run.sh"]);
    let mut copied = Vec::new();
    for args in [&[][..], &["--from-ref", "main", "--to-ref", "feature"][..]] {
        if !args.is_empty() {
            repo.git(&["checkout", "-qb", "feature"]);
            repo.git(&["commit", "-qm", "feature"]);
            repo.git(&["checkout", "-q", "main"]);
            assert!(!repo.exists("crlf.txt"));
        }
        let (code, verdict) = repo.verdict(args);
        assert_eq!(code, 0, "{verdict:#}");
        copied.push(files_under(&out));
        std::fs::remove_dir_all(&out).unwrap();
    }
    let range = copied.pop().unwrap();
    let staged = copied.pop().unwrap();
    (staged, range)
}

#[test]
fn line_ends_and_the_executable_bit_are_checked_out_as_in_a_files_repository() {
    let Some(reftable) = reftable() else {
        return;
    };
    let files = repo_with("files");
    let in_reftable = eol_and_mode_checkouts(&reftable);
    let in_files = eol_and_mode_checkouts(&files);
    assert_eq!(in_reftable, in_files);
    for copied in [&in_reftable.0, &in_reftable.1] {
        let (crlf, _) = &copied["crlf.txt"];
        assert_eq!(crlf, b"one\r\ntwo\r\n", "{copied:?}");
        let (script, mode) = &copied["run.sh"];
        assert_eq!(script, b"#!/bin/sh\necho run\n", "{copied:?}");
        assert_eq!(mode & 0o111, 0o111, "{copied:?}");
    }
}
