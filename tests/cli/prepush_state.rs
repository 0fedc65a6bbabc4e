//! Pre-push runs interrupted, pruned and pushed in odd shapes; shared state directories.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

use crate::support::{
    pushed_repo, recorded_verdicts, remote_has, said, wait_for_pause, TestRepo, BIN,
};

/// A check of the selected Markdown files that fails on any holding `TODO`.
const DOCS: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -Hn TODO {files}\" } ]\n";

/// Two branches to push: `aaa`, clean, checked first, and `zzz`, whose
/// `y.md` holds a `TODO`.
pub(crate) fn two_branches(repo: &TestRepo) {
    repo.git(&["checkout", "-qb", "aaa"]);
    repo.write("x.md", "# x\n");
    repo.commit_all("x");
    repo.git(&["checkout", "-qb", "zzz", "main"]);
    repo.write("y.md", "# y TODO\n");
    repo.commit_all("y");
}

/// `git push origin aaa zzz`, stopped by a Ctrl-C (SIGINT to the whole
/// process group, git and its hook alike, as a terminal sends it) once
/// the run of `aaa` is over and before `zzz` is checked.
fn push_interrupted_between_refs(repo: &TestRepo) {
    let marker = repo.path().join(".git/phasegate/paused");
    let mut push = repo
        .command("git")
        .args(["push", "origin", "aaa", "zzz"])
        .env("PHASEGATE_BIN", BIN)
        .env("PHASEGATE_TEST_PAUSE_AT", "push-next-ref")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    wait_for_pause(&marker, "push-next-ref");
    let group = rustix::process::Pid::from_raw(i32::try_from(push.id()).unwrap()).unwrap();
    rustix::process::kill_process_group(group, rustix::process::Signal::INT).unwrap();
    assert!(!push.wait().unwrap().success());
    std::fs::remove_file(&marker).unwrap();
    // The hook may outlive git by a moment: its record is what is asked.
    crate::support::wait_for("the hook to end", || {
        (!recorded_verdicts(repo).is_empty()
            && pushes(repo).iter().any(|name| !name.starts_with('.')))
        .then_some(())
    });
}

/// The names of the files in `.git/phasegate/pushes/`, sorted.
pub(crate) fn pushes(repo: &TestRepo) -> Vec<String> {
    names_in(&repo.path().join(".git/phasegate/pushes"))
}

/// The names in `dir`, sorted; none where `dir` does not exist.
pub(crate) fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_ctrl_c_between_two_refs_of_a_push_keeps_the_ref_not_reached_for_resume() {
    let (repo, origin) = pushed_repo(DOCS);
    two_branches(&repo);
    push_interrupted_between_refs(&repo);
    assert!(!remote_has(&origin, "aaa") && !remote_has(&origin, "zzz"));
    // `aaa` passed before the interrupt; `zzz` was never checked. The
    // resume checks it, and would refuse the push for it.
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0]["status"], "passed");
    assert_eq!(pushes(&repo).len(), 1, "{:?}", pushes(&repo));
    let resumed = repo.phasegate(&["resume"]);
    assert_eq!(resumed.code, 1, "{resumed:?}");
    assert!(
        said(&resumed).contains("y.md:1:# y TODO")
            && said(&resumed).contains("interrupted before it checked `refs/heads/zzz`"),
        "{resumed:?}"
    );
}

#[test]
fn old_records_of_interrupted_pushes_are_pruned_but_not_the_one_a_resume_needs() {
    let (repo, _origin) = pushed_repo(&format!("[gate]\nkeep_runs = 1\n\n{DOCS}"));
    // A repository a group shares: what phasegate makes there is the
    // group's to write too, `pushes/` included.
    repo.git(&["config", "core.sharedRepository", "group"]);
    two_branches(&repo);
    push_interrupted_between_refs(&repo);
    let needed = pushes(&repo);
    assert_eq!(needed.len(), 1);
    let dir = repo.path().join(".git/phasegate/pushes");
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o070, 0o070, "{mode:o}");
    // Records of pushes nobody resumed (newer than the one the last run
    // made, so that age alone would take that one first), and what a
    // writer killed mid-write left.
    let later = [
        "29991231T000000Z-1.000000001",
        "29991231T000000Z-2.000000001",
        "29991231T000000Z-3.000000001",
    ];
    for push in later {
        std::fs::write(dir.join(format!("{push}.json")), "{}").unwrap();
    }
    let torn = ".29991231T000000Z-4.000000001.json.tmp-999999999";
    std::fs::write(dir.join(torn), "{").unwrap();
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(dir.join(torn))
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();
    // One being written this moment, by a push running beside this one.
    let writing = ".29991231T000000Z-5.000000001.json.tmp-999999998";
    std::fs::write(dir.join(writing), "{").unwrap();
    // Any run prunes: the newest record is kept (`keep_runs = 1`), and
    // the one of the push the history ends with, which a resume reads.
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 1, "{run:?}");
    let mut left = vec![
        needed[0].clone(),
        format!("{}.json", later[2]),
        writing.to_string(),
    ];
    left.sort();
    assert_eq!(pushes(&repo), left);
}
