//! What a run says of its handoff documents, each thing once and in its place: a
//! document's errors under it in the report, a contradicted claim's first error not
//! repeated in its fix.

use crate::handoff_feedback::feedback;
use crate::handoff_ids::document;
use crate::support::TestRepo;

/// `tests` fails with one message; `lint` passes.
const FAILING_TESTS: &str = r#"[phases.implementation]
checks = [
  { name = "tests", shell = true, command = "echo 'FAIL: sum expected 3 got 4'; exit 1" },
  { name = "lint", command = "true" },
]
"#;

#[test]
fn a_contradicted_claim_s_fix_does_not_say_its_first_error_again() {
    let repo = TestRepo::new();
    repo.config(FAILING_TESTS);
    repo.stage("handoffs/F001.md", &document("F001"));
    let (code, verdict) = repo.verdict(&[]);
    assert_eq!(code, 1, "{verdict:#}");

    let (code, markdown, json) = feedback(&repo);
    assert_eq!(code, 1, "{markdown}");
    // Listed once, under the claim; the fix points at it.
    assert_eq!(
        markdown.matches("FAIL: sum expected 3 got 4").count(),
        1,
        "{markdown}"
    );
    assert!(
        markdown.contains("make check `tests` pass, starting with the first error it reported; run `phasegate run --check tests`"),
        "{markdown}"
    );
    let items = json["items"].as_array().unwrap();
    let claim = items
        .iter()
        .find(|item| item["status"] == "contradicted")
        .unwrap_or_else(|| panic!("{json:#}"));
    assert!(
        claim["errors"][0]
            .as_str()
            .unwrap()
            .contains("FAIL: sum expected 3 got 4"),
        "{claim:#}"
    );
    assert!(
        !claim["fix"].as_str().unwrap().contains("FAIL:"),
        "{claim:#}"
    );
}

#[test]
fn each_document_s_errors_are_listed_under_it_in_the_report() {
    let repo = TestRepo::new();
    repo.config(FAILING_TESTS);
    // F001 claims the tests pass (contradicted); F002 is ready with a
    // checkpoint that fails, and has a field phasegate does not know.
    repo.stage("handoffs/F001.md", &document("F001"));
    let f002 = document("F002")
        .replace(
            "  - name: code_complete\n    status: pass",
            "  - name: code_complete\n    status: fail",
        )
        .replace("status: in_progress\n", "status: in_progress\nowner: ana\n");
    repo.stage("handoffs/F002.md", &f002);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{}", run.stdout))
    };
    let first = at("handoff handoffs/F001.md");
    let second = at("handoff handoffs/F002.md");
    let contradicted = at("handoffs/F001.md:14:");
    let not_ready = at("`handoff_ready` is true but `code_complete` does not pass");
    let unknown = at("unknown field");
    assert!(
        first < contradicted && contradicted < second,
        "{}",
        run.stdout
    );
    assert!(second < not_ready && second < unknown, "{}", run.stdout);
    // Findings and warnings of a document share one indentation.
    for line in [contradicted, not_ready, unknown] {
        assert!(
            lines[line].starts_with("  handoffs/"),
            "{:?}\n{}",
            lines[line],
            run.stdout
        );
    }
}
