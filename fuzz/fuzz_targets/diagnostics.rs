//! Any bytes through the diagnostics extractor, with the parser chosen
//! from the output and with each named parser: no output may panic, and
//! every diagnostic is located within its own output.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use phasegate::config::{Origin, ParserChoice};
use phasegate::diagnostics::{Extractor, PARSER_NAMES};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the parser, the rest is the output.
    let Some((&pick, output)) = data.split_first() else {
        return;
    };
    let parser = match PARSER_NAMES.get(usize::from(pick) % (PARSER_NAMES.len() + 1)) {
        Some(&"auto") | None => ParserChoice::Auto,
        Some(name) => ParserChoice::Named((*name).to_string()),
    };
    let root = Path::new("/nonexistent-fuzz-root");
    let mut x = Extractor::new("fuzz", Origin::Lint, &parser, &[], root, root);
    let mut start = 0usize;
    for line in output.split(|b| *b == b'\n') {
        let end = start + line.len();
        if x.wants(line, true) {
            x.line(&String::from_utf8_lossy(line), start as u64..end as u64);
        }
        start = end + 1;
    }
    let found = x.finish();
    assert!(found.diagnostics.len() <= phasegate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK);
    for d in &found.diagnostics {
        if let Some((a, b)) = d.log_range {
            assert!(a <= b && b <= output.len() as u64, "{a}..{b} of {}", output.len());
        }
        assert!(d.line.is_none_or(|l| l > 0) && d.column.is_none_or(|c| c > 0));
    }
});
