//! Handoff documents: one typo gives one error, and every document is judged on its own.

use crate::support::{handoff_errors, TestRepo};

/// A gate with no check: only the handoff documents decide.
const NO_CHECKS: &str = "[phases.implementation]\nchecks = []\n";

/// A ready implementation document whose second checkpoint's name line is
/// `name_line`.
fn ready_with(name_line: &str) -> String {
    format!(
        "---\nid: F1\nstage: implementation\ntitle: t\nstarted_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nhandoff_ready: true\ncheckpoints:\n  - name: tests_written\n    status: pass\n{name_line}\n    status: pass\n  - name: tests_passing\n    status: pass\n  - name: no_lint_errors\n    status: pass\n---\n# F1\n"
    )
}

#[test]
fn a_checkpoint_whose_name_cannot_be_read_is_one_error_that_names_what_it_may_be() {
    let repo = TestRepo::new();
    repo.config(NO_CHECKS);
    for line in [
        "  - name: 3",
        "  - name: [a]",
        "  - name: null",
        "  - name: \"\"",
        "  - status_of: code_complete",
    ] {
        let text = ready_with(line).replace("status_of: code_complete\n    ", "");
        repo.write("handoffs/F1.md", &text);
        let errors = handoff_errors(&repo, "handoffs/F1.md");
        assert_eq!(errors.len(), 1, "{line}: {errors:?}");
        assert!(
            errors[0].starts_with("11:") && errors[0].contains("`name: code_complete`"),
            "{line}: {errors:?}"
        );
    }
    // The checkpoint written as its name alone is there, in the wrong shape.
    repo.write(
        "handoffs/F1.md",
        &ready_with("  - code_complete")
            .replace("code_complete\n    status: pass\n", "code_complete\n"),
    );
    let errors = handoff_errors(&repo, "handoffs/F1.md");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("`- name: code_complete`"), "{errors:?}");
    // With every required checkpoint named, a bad name says only that.
    repo.write(
        "handoffs/F1.md",
        &ready_with("  - name: code_complete\n    status: pass\n  - name: 7"),
    );
    let errors = handoff_errors(&repo, "handoffs/F1.md");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(!errors[0].contains("requires"), "{errors:?}");
}

/// A repository with a valid document and `handoffs/link.md`, a link to
/// `target`, both staged.
fn staged_link(target: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(NO_CHECKS);
    repo.commit_all("start");
    repo.write("handoffs/ok.md", &ready_with("  - name: code_complete"));
    std::fs::create_dir_all(repo.path().join("docs")).unwrap();
    std::os::unix::fs::symlink(target, repo.path().join("handoffs/link.md")).unwrap();
    repo.git(&["add", "handoffs"]);
    repo
}

/// The verdict's report of `path`.
fn handoff<'a>(verdict: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    verdict["handoffs"]
        .as_array()
        .and_then(|all| all.iter().find(|h| h["path"] == path))
        .unwrap_or_else(|| panic!("no report of {path}: {verdict:#}"))
}

#[test]
fn a_staged_link_that_cannot_be_followed_is_that_document_s_error_not_the_run_s() {
    for (target, problem, fix) in [
        (
            "/etc/hostname",
            "leads out of the repository",
            "replace the link with the document itself and stage it",
        ),
        ("link.md", "is a loop of symbolic links", "replace the link"),
        // Not staged, or not there at all: a commit would record a link
        // to nothing, which must not pass for a deleted document.
        (
            "../docs/notes.md",
            "leads to no file the index holds",
            "stage the file it leads to",
        ),
        (
            "../docs",
            "leads to no file the index holds",
            "stage the file",
        ),
    ] {
        let repo = staged_link(target);
        repo.write("docs/notes.md", "# not staged\n");
        let (code, verdict) = repo.verdict(&[]);
        assert_eq!(code, 1, "{target}: {verdict:#}");
        assert_eq!(verdict["status"], "failed", "{target}: {verdict:#}");
        assert_eq!(handoff(&verdict, "handoffs/ok.md")["valid"], true);
        let link = handoff(&verdict, "handoffs/link.md");
        assert_eq!(link["valid"], false, "{target}: {verdict:#}");
        let message = link["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.contains(problem) && message.contains(fix),
            "{target}: {message}"
        );
    }
}

#[test]
fn a_committed_link_to_no_file_of_the_commit_is_that_document_s_error() {
    let repo = staged_link("../docs/notes.md");
    repo.git(&["commit", "-qm", "link"]);
    repo.write("docs/notes.md", &ready_with("  - name: code_complete"));
    let (code, verdict) = repo.verdict(&["--from-ref", "HEAD~1", "--to-ref", "HEAD"]);
    assert_eq!(code, 1, "{verdict:#}");
    let link = handoff(&verdict, "handoffs/link.md");
    let message = link["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("leads to no file the commit holds")
            && message.contains("commit the file it leads to"),
        "{message}"
    );
}

#[test]
fn an_edit_saved_while_stamp_writes_is_kept_and_the_stamp_asks_to_be_run_again() {
    let repo = TestRepo::new();
    repo.config("[gate]\nmax_retries = 3\n\n[phases.implementation]\nchecks = [ { name = \"tests\", command = \"false\" } ]\n");
    let document = ready_with("  - name: code_complete")
        .replace("handoff_ready: true", "handoff_ready: false")
        .replace(
            "tests_passing\n    status: pass",
            "tests_passing\n    status: fail",
        );
    repo.write("handoffs/F1.md", &document);
    repo.commit_all("start");
    let (code, verdict) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{verdict:#}");

    let marker = repo.path().join(".git/phasegate/paused");
    let child = repo
        .command(crate::support::BIN)
        .args(["handoff", "stamp", "handoffs/F1.md"])
        .env("PHASEGATE_TEST_PAUSE_AT", "stamp-write")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::wait_for_pause(&marker, "stamp-write");
    let edited = document.replace("# F1\n", "# F1\n\nNotes saved meanwhile.\n");
    repo.write("handoffs/F1.md", &edited);
    let pid = child.id().to_string();
    let signalled = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(signalled.success());
    let stamped = crate::support::output(&child.wait_with_output().unwrap());
    assert_eq!(stamped.code, 3, "{stamped:?}");
    assert!(
        stamped
            .stderr
            .contains("run `phasegate handoff stamp handoffs/F1.md` again"),
        "{stamped:?}"
    );
    assert_eq!(repo.read("handoffs/F1.md"), edited);
    assert!(!repo.exists("handoffs/F1.phasegate-stamp"));

    let again = repo.phasegate(&["handoff", "stamp", "handoffs/F1.md"]);
    assert_eq!(again.code, 0, "{again:?}");
    let text = repo.read("handoffs/F1.md");
    assert!(
        text.contains("retry_count: 1\n") && text.contains("Notes saved meanwhile."),
        "{text}"
    );
}
