//! Handoff documents read from the index and from commits: size, symlinks, placement.

use crate::support::{handoff_errors, TestRepo};

/// A gate whose `tests` check fails, so a run records a failed attempt.
const FAILING: &str = r#"[gate]
max_retries = 3

[phases.implementation]
checks = [ { name = "tests", command = "false" } ]
"#;

/// An implementation document in progress whose `tests_passing` failed.
const IN_PROGRESS: &str = "---\nid: F1\nstage: implementation\nstarted_at: 2026-01-01T10:00:00Z\nstatus: in_progress\nhandoff_ready: false\nretry_count: 0\ncheckpoints:\n  - name: tests_written\n    status: pass\n  - name: code_complete\n    status: pass\n  - name: tests_passing\n    status: fail\n  - name: no_lint_errors\n    status: pass\n---\n# F1\n";

/// `docs/f1.md` holding `text`, and `handoffs/F001.md` a link to it.
fn linked_document(repo: &TestRepo, text: &str) {
    repo.write("docs/f1.md", text);
    std::fs::create_dir_all(repo.path().join("handoffs")).unwrap();
    std::os::unix::fs::symlink("../docs/f1.md", repo.path().join("handoffs/F001.md")).unwrap();
}

#[test]
fn a_linked_document_is_named_as_selected_and_stamped_where_it_leads() {
    let repo = TestRepo::new();
    repo.config(FAILING);
    linked_document(&repo, IN_PROGRESS);
    repo.commit_all("start");

    let validated = repo
        .phasegate(&[
            "handoff",
            "validate",
            "--format",
            "json",
            "handoffs/F001.md",
        ])
        .json();
    assert_eq!(
        validated["handoffs"][0]["path"], "handoffs/F001.md",
        "{validated:#}"
    );
    let (code, verdict) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(verdict["handoffs"][0]["path"], "handoffs/F001.md");

    let stamped = repo.phasegate(&["handoff", "stamp", "handoffs/F001.md"]);
    assert_eq!(stamped.code, 0, "{stamped:?}");
    let link = std::fs::symlink_metadata(repo.path().join("handoffs/F001.md")).unwrap();
    assert!(link.is_symlink(), "the stamp replaced the link with a copy");
    assert!(repo.read("docs/f1.md").contains("retry_count: 1\n"));
    // The run is found under the name it recorded: stamping it again
    // does not count its failure twice.
    let again = repo.phasegate(&["handoff", "stamp", "handoffs/F001.md"]);
    assert_eq!(again.code, 0, "{again:?}");
    let text = repo.read("docs/f1.md");
    assert!(text.contains("retry_count: 1\n"), "{text}");
}

#[test]
fn a_staged_link_is_judged_by_the_staged_text_of_the_file_it_leads_to() {
    let repo = TestRepo::new();
    repo.config(FAILING.replace("false", "true").as_str());
    linked_document(
        &repo,
        &IN_PROGRESS.replace("status: in_progress", "status: nonsense"),
    );
    repo.git(&["add", "-A"]);
    // The work tree's copy is fixed, but not staged: the commit would
    // record the broken one.
    repo.write("docs/f1.md", IN_PROGRESS);
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");
    let handoff = &verdict["handoffs"][0];
    assert_eq!(handoff["path"], "handoffs/F001.md", "{verdict:#}");
    assert!(
        handoff["errors"].to_string().contains("nonsense"),
        "{verdict:#}"
    );
}

#[test]
fn a_handoff_path_prints_as_given_errors_too() {
    let repo = TestRepo::new();
    repo.config(FAILING);
    linked_document(&repo, "no frontmatter\n");
    let errors = handoff_errors(&repo, "handoffs/F001.md");
    assert_eq!(errors.len(), 1, "{errors:?}");
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert!(run.stdout.contains("handoffs/F001.md"), "{}", run.stdout);
    assert!(!run.stdout.contains("docs/f1.md"), "{}", run.stdout);
}

#[test]
fn a_heading_below_the_fields_is_the_text_the_missing_closing_line_goes_above() {
    let repo = TestRepo::new();
    repo.config(FAILING);
    let fields =
        "---\nid: F3\nstage: implementation\nstatus: in_progress\n# Notes\n\nWhat was done.\n";
    repo.write("handoffs/F3.md", fields);
    let errors = handoff_errors(&repo, "handoffs/F3.md");
    assert!(
        errors[0].contains("add a `---` line after line 4, its last field"),
        "{errors:?}"
    );
    // A `---` rule further down closed the frontmatter instead.
    repo.write("handoffs/F3.md", &format!("{fields}\n---\n\nMore.\n"));
    let errors = handoff_errors(&repo, "handoffs/F3.md");
    assert!(
        errors[0].starts_with("5:1 ")
            && errors[0].contains("text on line 5: add a `---` line after line 4"),
        "{errors:?}"
    );
}
