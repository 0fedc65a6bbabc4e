//! Any bytes through frontmatter extraction, validation and stamping: no
//! input may panic, and a stamp must leave a document that still parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use phasegate::handoff::stamp::{apply, stamp_edits, RunResults};
use phasegate::handoff::{validate, Rules};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let rules = Rules {
        max_retries: 3,
        claims: [("tests_passing".to_string(), "tests".to_string())]
            .into_iter()
            .collect(),
        failed_checks: vec!["tests".to_string()],
        ..Rules::default()
    };
    let report = validate("fuzz.md", &text, &rules);
    for issue in &report.errors {
        assert!(issue.line >= 1 && issue.column >= 1);
        assert!(issue.offset <= text.len());
    }
    let results = RunResults {
        checks: [("tests".to_string(), data.len() % 2 == 0)]
            .into_iter()
            .collect(),
        failed: data.len() % 3 == 0,
        failure: Some("fuzzed".to_string()),
        retries_seen: (data.len() % 5 == 0).then_some(2),
    };
    if let Ok(edits) = stamp_edits(&text, &results, &rules) {
        let stamped = apply(&text, &edits);
        let again = validate(
            "fuzz.md",
            &stamped,
            &Rules {
                max_retries: 3,
                ..Rules::default()
            },
        );
        let broken = again.errors.iter().any(|e| {
            e.field == "frontmatter" && e.message.starts_with("the frontmatter is not valid YAML")
        });
        assert!(!broken, "stamping broke the YAML:\n{stamped}");
    }
});
