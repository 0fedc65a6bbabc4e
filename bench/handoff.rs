//! Handoff validation throughput: 10,000 generated documents validated on
//! one core. Prints figures; asserts nothing. Target: 20,000 documents per
//! second or more.

#![expect(clippy::print_stdout, reason = "a benchmark prints its figures")]
#![expect(clippy::cast_precision_loss, reason = "figures for people")]

use std::hint::black_box;
use std::time::Instant;

use phasegate::handoff::{validate, Rules};

fn document(i: usize) -> String {
    let statuses = ["in_progress", "complete", "failed", "blocked"];
    let status = statuses[i % 4];
    let mut doc = format!(
        "---\nid: F{i:05}\nstage: implementation\ntitle: \"Generated document {i}\"\nstarted_at: 2026-11-{:02}T09:00:00Z\nstatus: {status}\n",
        1 + i % 28
    );
    if status == "complete" {
        doc.push_str("completed_at: 2026-11-29T10:00:00+01:00\n");
    }
    if status == "blocked" {
        doc.push_str("block_reason: needs_human_input\nblock_details: which API to call?\n");
    }
    let all_pass = i % 3 != 0;
    doc.push_str(&format!(
        "handoff_ready: {all_pass}\nretry_count: {}\ncheckpoints:\n",
        i % 3
    ));
    for (n, name) in [
        "tests_written",
        "code_complete",
        "tests_passing",
        "no_lint_errors",
    ]
    .iter()
    .enumerate()
    {
        let status = if all_pass || n != 2 { "pass" } else { "fail" };
        doc.push_str(&format!(
            "  - name: {name}\n    status: {status}\n    message: checked by run {i}\n"
        ));
    }
    doc.push_str(
        "---\n# Body\n\nSome prose about the work, with a rule:\n\n---\n\nand more prose.\n",
    );
    doc
}

fn main() {
    let documents: Vec<String> = (0..10_000).map(document).collect();
    let rules = Rules {
        max_retries: 3,
        ..Rules::default()
    };
    let bytes: usize = documents.iter().map(String::len).sum();
    // One warm-up pass, then the best of three.
    for d in &documents {
        black_box(validate("bench.md", d, &rules));
    }
    let mut best = f64::MAX;
    let mut valid = 0;
    for _ in 0..3 {
        let start = Instant::now();
        valid = documents
            .iter()
            .filter(|d| black_box(validate("bench.md", d, &rules)).valid)
            .count();
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "handoff    validated {} documents ({:.1} MB, {valid} valid) in {:.1} ms: {:.0} documents per second on one core (target >= 20,000)",
        documents.len(),
        bytes as f64 / 1e6,
        best * 1000.0,
        documents.len() as f64 / best
    );
}
