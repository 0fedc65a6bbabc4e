//! Pre-push under push.default modes, mirror remotes, odd refs, and an interrupted push resumed.

use crate::support::{git_pushing, recorded_verdicts, remote_has, said};

/// A check of the selected Markdown files that fails on any holding
/// `TODO`; the first time it runs it interrupts phasegate, as a Ctrl-C
/// does (`marker` tells the first time from the others), and waits to be
/// stopped.
fn interrupting_once(marker: &std::path::Path) -> String {
    format!(
        "[phases.implementation]\nchecks = [ {{ name = \"docs\", files = [\"*.md\"], shell = true, command = \"if [ ! -e '{m}' ]; then : > '{m}'; kill -INT $PPID; sleep 30; fi; ! grep -Hn TODO {{files}}\" }} ]\n",
        m = marker.display()
    )
}

#[test]
fn resume_after_a_push_interrupted_on_its_first_ref_checks_the_refs_it_never_reached() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("interrupted");
    let (repo, origin) = crate::support::pushed_repo(&interrupting_once(&marker));
    crate::prepush_state::two_branches(&repo);

    // `aaa` is checked first, and its check is interrupted: `zzz` is
    // never reached.
    let pushed = git_pushing(&repo, &["push", "origin", "aaa", "zzz"]);
    assert_ne!(pushed.code, 0, "{pushed:?}");
    assert!(marker.exists(), "{pushed:?}");
    assert!(!remote_has(&origin, "aaa") && !remote_has(&origin, "zzz"));
    assert!(
        said(&pushed).contains(
            "`refs/heads/zzz` was not checked: interrupted; `phasegate resume` checks it"
        ),
        "{pushed:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    assert_eq!(verdicts.len(), 1, "{pushed:?}");
    assert_eq!(verdicts[0]["selection"]["pushed_ref"], "refs/heads/aaa");

    // The resume checks `aaa` again and `zzz` for the first time: the push
    // would be refused for `zzz`, and the resume says so.
    let resumed = repo.phasegate(&["resume"]);
    assert_eq!(resumed.code, 1, "{resumed:?}");
    assert!(
        said(&resumed).contains("y.md:1:# y TODO")
            && said(&resumed).contains("interrupted before it checked `refs/heads/zzz`"),
        "{resumed:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    let checked: Vec<&str> = verdicts[1..]
        .iter()
        .map(|v| v["selection"]["pushed_ref"].as_str().unwrap())
        .collect();
    assert_eq!(checked, ["refs/heads/aaa", "refs/heads/zzz"]);
    assert!(
        crate::prepush_state::pushes(&repo).is_empty(),
        "the refs not reached are taken up once"
    );

    // Fixed, the push goes through; the next resume takes up the resumed
    // push's runs, `zzz` among them.
    let json = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(json.code, 1, "{json:?}");
    assert_eq!(json.json()["selection"]["pushed_ref"], "refs/heads/zzz");
}

#[test]
fn an_atomic_push_of_a_deletion_and_a_branch_checks_the_branch_once_and_says_the_deletion() {
    let (repo, origin) = crate::support::pushed_repo(
        "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -Hn TODO {files}\" } ]\n",
    );
    repo.git(&["push", "-q", "--no-verify", "origin", "main:refs/heads/old"]);
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("b");

    let refused = git_pushing(&repo, &["push", "--atomic", "origin", ":old", "HEAD"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(remote_has(&origin, "old"), "an atomic push sends nothing");
    assert!(
        said(&refused).contains(
            "`refs/heads/old` is deleted on the remote by this push: nothing is checked for it"
        ) && said(&refused).contains("b.md:1:# b TODO"),
        "{refused:?}"
    );
    let verdicts = recorded_verdicts(&repo);
    let checked: Vec<&str> = verdicts
        .iter()
        .map(|v| v["selection"]["pushed_ref"].as_str().unwrap())
        .collect();
    assert_eq!(checked, ["HEAD:refs/heads/main"], "{refused:?}");
}
