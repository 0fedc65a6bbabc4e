//! The pre-push hook: what each pushed ref checks, and what the user is told.

use crate::support::{git_pushing, output, recorded_verdicts, remote_has, rev, said, TestRepo};

/// A check of the selected Markdown files that fails on any holding
/// `TODO`, naming it.
const SELECTED: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], shell = true, command = \"! grep -Hn TODO {files}\" } ]\n";

/// A repository with `phasegate.toml` (`SELECTED`) and `a.md` committed on
/// `main`, pushed to a bare `origin`, with the pre-push hook installed.
fn pushed_repo() -> (TestRepo, TestRepo) {
    crate::support::pushed_repo(SELECTED)
}

#[test]
fn a_line_of_the_pushed_refs_git_did_not_write_stops_the_push_naming_it() {
    let (repo, _remote) = pushed_repo();
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("two");
    let (main, old) = (rev(&repo, "main"), rev(&repo, "main~1"));
    // What a hook manager that mangles the input passes on: the real
    // line, then one cut short. Skipped, that ref would go out unchecked.
    let input = format!("refs/heads/main {main} refs/heads/main {old}\nrefs/heads/topic {main}\n");
    let run = output(&repo.phasegate_fed(
        &["hook", "pre-push", "origin", "/nowhere"],
        input.as_bytes(),
    ));
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("line 2 of the pushed refs")
            && run.stderr.contains(&format!("`refs/heads/topic {main}`")),
        "the line, by its number and text: {run:?}"
    );
    assert!(run.stdout.contains("phasegate stopped the push"), "{run:?}");
    assert!(recorded_verdicts(&repo).is_empty(), "nothing ran: {run:?}");
}

#[test]
fn a_refused_tag_is_told_to_move_the_tag_onto_the_fixed_commit() {
    let (repo, remote) = pushed_repo();
    repo.git(&["checkout", "-q", "--detach"]);
    repo.write("b.md", "# b TODO\n");
    repo.commit_all("candidate");
    repo.git(&["tag", "-a", "v1", "-m", "release one"]);

    let refused = git_pushing(&repo, &["push", "origin", "v1"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        said(&refused).contains("phasegate stopped the push for `refs/tags/v1`")
            && said(&refused).contains("`git tag -f v1`"),
        "pushed again as it is, the tag fails again: {refused:?}"
    );
    assert!(!remote_has(&remote, "v1"));

    // Done as told, the push goes through.
    repo.write("b.md", "# b\n");
    repo.commit_all("fixed");
    repo.git(&["tag", "-f", "-a", "v1", "-m", "release one"]);
    let pushed = git_pushing(&repo, &["push", "origin", "v1"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert!(remote_has(&remote, "v1"));
}
