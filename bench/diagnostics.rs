//! Diagnostics parsing throughput and memory: a large log built by
//! repeating every recorded tool output under `fixtures/diagnostics/`,
//! read line by line as the runner reads a check's output. Prints figures;
//! asserts nothing. Targets: at least 100 MB/s with the parser chosen from
//! the output (auto-detection), and peak memory that does not grow with
//! the log's size.

#![expect(clippy::print_stdout, reason = "a benchmark prints its figures")]
#![expect(clippy::cast_precision_loss, reason = "figures for people")]
#![expect(clippy::unwrap_used, reason = "a benchmark fails loudly")]

use std::path::Path;
use std::time::Instant;

use phasegate::config::{Origin, ParserChoice};
use phasegate::diagnostics::Extractor;

/// The recorded outputs of one fixture directory, or of all of them, one
/// after the other.
fn block(only: Option<&str>) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diagnostics");
    let mut paths = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if only.is_some_and(|name| !dir.ends_with(name)) {
            continue;
        }
        for file in std::fs::read_dir(dir).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // Outputs, not the sample sources (`main.c.txt`) or the notes.
            let extension = path.extension().map(|e| e.to_string_lossy().to_lowercase());
            let is_output = match extension.as_deref() {
                Some("txt") => name.matches('.').count() == 1,
                Some("json") => true,
                _ => false,
            };
            if is_output {
                paths.push(path);
            }
        }
    }
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        out.extend(std::fs::read(path).unwrap());
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
    }
    out
}

/// Peak resident memory of this process so far, in KiB.
fn peak_rss_kib() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    #[expect(unsafe_code, reason = "reading this process's resource usage")]
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    usage.ru_maxrss
}

/// Feeds `total` bytes of repeated `block` and returns MB/s and findings.
fn run(block: &[u8], total: usize, argv: &[String]) -> (f64, usize, usize) {
    let root = std::env::temp_dir();
    let mut x = Extractor::new(
        "bench",
        Origin::Lint,
        &ParserChoice::Auto,
        argv,
        &root,
        &root,
    );
    let start = Instant::now();
    let mut fed = 0usize;
    let mut offset = 0u64;
    while fed < total {
        for line in block.split(|b| *b == b'\n') {
            let at = offset..offset + line.len() as u64;
            offset += line.len() as u64 + 1;
            if x.wants(line, true) {
                x.line(&String::from_utf8_lossy(line), at);
            }
        }
        fed += block.len();
    }
    let found = x.finish();
    let seconds = start.elapsed().as_secs_f64();
    (
        fed as f64 / 1e6 / seconds,
        found.diagnostics.len(),
        found.dropped,
    )
}

fn main() {
    let none: Vec<String> = Vec::new();
    // First, while the peak is still this process's start: a JSON document
    // of 16 MiB cut into empty lines (`[`, millions of blank lines, `]`)
    // must cost a small multiple of its size, not a table entry a line.
    let mut document = Vec::with_capacity(16 * 1024 * 1024 + 2);
    document.extend_from_slice(b"[\n");
    document.resize(16 * 1024 * 1024, b'\n');
    document.extend_from_slice(b"]\n");
    let before = peak_rss_kib();
    let (rate, kept, _) = run(&document, document.len(), &none);
    println!(
        "a 16 MiB JSON document of empty lines:\n  auto, from the output            16 MB: {rate:>6.0} MB/s, {kept} kept, peak RSS {} MB (from {} MB with the input held)",
        peak_rss_kib() / 1024,
        before / 1024
    );
    drop(document);
    println!("diagnostics: each tool's recorded outputs repeated into one large log, parser chosen from the output");
    let mut families: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diagnostics"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
    families.sort();
    // A list of paths says nothing of the tool that printed it: gofmt's
    // parser is chosen by its command alone, so it is measured so.
    let gofmt: Vec<String> = ["gofmt", "-l", "."].map(String::from).to_vec();
    for family in &families {
        let block = block(Some(family));
        let (argv, how) = match family.as_str() {
            "gofmt" => (&gofmt, " (parser from the command `gofmt -l .`)"),
            _ => (&none, ""),
        };
        // The best of three: the machine is shared.
        let (rate, kept, dropped) = (0..3)
            .map(|_| run(&block, 50_000_000, argv))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        println!(
            "  {family:<14} 50 MB: {rate:>6.0} MB/s, {kept} kept + {dropped} over the cap{how}"
        );
    }
    let block = block(None);
    println!(
        "every tool's outputs mixed in one log ({} KB block):",
        block.len() / 1000
    );
    let cargo = vec!["cargo".to_string(), "build".to_string()];
    for (label, argv, megabytes) in [
        ("auto, from the output", &none, 50),
        ("auto, from the output", &none, 400),
        ("auto, program `cargo build`", &cargo, 400),
    ] {
        let (rate, kept, dropped) = run(&block, megabytes * 1_000_000, argv);
        println!(
            "  {label:<30} {megabytes:>4} MB: {rate:>6.0} MB/s, {kept} kept + {dropped} over the cap, peak RSS {} MB",
            peak_rss_kib() / 1024
        );
    }
    // Output with nothing to find, the bulk of a long build or test log:
    // a line any grammar's trigger lets through must cost that grammar a
    // look, not all of them (`yes 0123456789abcdefghijklmnopqrstuvwxyz`).
    let plain = "0123456789abcdefghijklmnopqrstuvwxyz\n"
        .repeat(10_000)
        .into_bytes();
    let (rate, kept, _) = (0..3)
        .map(|_| run(&plain, 200_000_000, &none))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    println!("plain output, nothing to find (`yes 0123...xyz`):\n  auto, from the output           200 MB: {rate:>6.0} MB/s, {kept} kept");
}
