//! Bounded capture of a check's output: every byte to the log file, the
//! first and last bytes in memory, complete lines to the diagnostics
//! extractor. Memory stays fixed whatever the tool prints.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;

use crate::diagnostics::{Diagnostic, Extracted, Extractor, NO_TESTS_COLLECTED};

use super::CapturedOutput;

/// Bytes kept from the start of the output.
pub const HEAD_BYTES: usize = 64 * 1024;
/// Bytes kept from the end of the output.
pub const TAIL_BYTES: usize = 64 * 1024;
/// Longer lines are cut to this length before parsing, unless they start
/// a JSON document (see `line_limit`).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// How much of a line starting with `start` is parsed: one that opens a
/// JSON document as the extractor reads it may be a whole report on one
/// line (ESLint's `-f json`, jest's `--json`), read up to the extractor's
/// limit for one document; any other line up to `MAX_LINE_BYTES`.
fn line_limit(start: &[u8]) -> usize {
    if crate::diagnostics::opens_json(start) {
        crate::diagnostics::MAX_JSON_BYTES
    } else {
        MAX_LINE_BYTES
    }
}
/// The log keeps this much of the output from its start, then the last
/// `TAIL_BYTES`: a check printing without end (a background `yes`) must not
/// fill the disk before its timeout.
pub const LOG_LIMIT: u64 = 1 << 30;

pub struct Capture {
    log: Option<BufWriter<File>>,
    log_error: Option<io::Error>,
    /// Bytes of output the log takes before it is cut.
    log_limit: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    line: Vec<u8>,
    /// Where the line being gathered starts in the log.
    line_start: u64,
    line_overflow: bool,
    /// The extractor of the batch whose output is coming.
    extractor: Extractor,
    /// Makes the extractor of the next batch: each batch is a run of the
    /// tool of its own, read from its start (see `end_batch`).
    next_extractor: Box<dyn Fn() -> Extractor>,
    /// Whether output came since the last batch ended.
    batch_open: bool,
    /// What the batches that ended found, without duplicates and within
    /// the check's cap.
    found: Extracted,
    seen: std::collections::HashSet<u64>,
    /// The findings that a batch's tool found no test to run, with the
    /// batch (see `forgive`): at most one per batch.
    no_tests: Vec<(usize, Diagnostic)>,
    batches: usize,
    /// Standard output of a verifier, kept whole up to a limit.
    answer: Option<(Vec<u8>, usize)>,
    /// What phasegate has to say about how the check ran (see `note`).
    notes: Vec<Note>,
}

/// A line of phasegate's own for the end of the log.
enum Note {
    Text(String),
    /// The place of the line on how batch N (from 0) ended, written once
    /// the check is over: where its output starts in the log is known
    /// only then, when the log may have been cut.
    Batch(usize),
}

/// Where the log was cut: it holds the output up to `limit`, a note of
/// `note_len` bytes, then the output from `tail_from` to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    limit: u64,
    note_len: u64,
    tail_from: u64,
}

impl Capture {
    /// `extractor` makes the extractor of each batch.
    /// `log_limit` is where the log is cut (`LOG_LIMIT` but in tests).
    pub fn new(log: File, log_limit: u64, extractor: impl Fn() -> Extractor + 'static) -> Capture {
        Capture {
            log: Some(BufWriter::with_capacity(64 * 1024, log)),
            log_error: None,
            log_limit,
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            line: Vec::new(),
            line_start: 0,
            line_overflow: false,
            extractor: extractor(),
            next_extractor: Box::new(extractor),
            batch_open: false,
            found: Extracted::default(),
            seen: std::collections::HashSet::new(),
            no_tests: Vec::new(),
            batches: 0,
            answer: None,
            notes: Vec::new(),
        }
    }

    /// How many bytes of output came so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// A line of phasegate's own for the log, written after the check's
    /// output when it is over, never inside it: the diagnostics' places in
    /// the log are counted in bytes of output.
    pub fn note(&mut self, note: String) {
        self.notes.push(Note::Text(note));
    }

    /// The place of the line on how batch `n` (from 0) ended, among the
    /// other notes: `Finished::close` writes it.
    pub fn note_batch(&mut self, n: usize) {
        self.notes.push(Note::Batch(n));
    }

    /// Also keeps the stream whole, up to `limit` bytes (a verifier's answer).
    pub fn keep_answer(&mut self, limit: usize) {
        self.answer = Some((Vec::new(), limit));
    }

    /// The answer kept so far (`(over_limit, bytes)`), and a fresh one
    /// begun: each batch of a verifier answers on its own.
    pub fn take_answer(&mut self) -> Option<(bool, Vec<u8>)> {
        let (bytes, limit) = self.answer.as_mut()?;
        let bytes = std::mem::take(bytes);
        Some((bytes.len() > *limit, bytes))
    }

    /// Ends the output of a batch (one run of the check's tool): its last
    /// line is its own, and what its extractor found joins the check's.
    /// Whether its tool said it found no test to run: a batch whose files
    /// hold none while another's hold some is no failure of the check (see
    /// `forgive`). A batch that exited 0 (`exited_zero`) ran as its
    /// command asks, and a finding that it had no test would be noise.
    pub fn end_batch(&mut self, exited_zero: bool) -> bool {
        if !self.line.is_empty() {
            self.flush_line(self.total);
        }
        self.line_start = self.total;
        let fresh = (self.next_extractor)();
        let mut extracted = std::mem::replace(&mut self.extractor, fresh).finish();
        if exited_zero {
            extracted.exited_zero();
        }
        let batch = self.batches;
        self.batches += 1;
        self.batch_open = false;
        self.found.dropped += extracted.dropped;
        self.found.errors_fail |= extracted.errors_fail;
        if self.found.parser.is_none() {
            self.found.parser = extracted.parser;
        }
        // A batch with errors of another kind failed on them.
        let other_errors = extracted.diagnostics.iter().any(|d| {
            d.severity == crate::diagnostics::Severity::Error
                && d.code.as_deref() != Some(NO_TESTS_COLLECTED)
        });
        let mut no_tests = false;
        for d in extracted.diagnostics {
            if d.code.as_deref() == Some(NO_TESTS_COLLECTED) && !no_tests {
                no_tests = true;
                self.no_tests.push((batch, d));
            } else {
                self.keep(d);
            }
        }
        no_tests && !other_errors
    }

    /// The batches (from 0) whose finding that they found no test is
    /// dropped: their tool found none among their files, and another
    /// batch's tool ran the tests among its own. Run as one command line,
    /// the tool would have found those and never said it.
    pub fn forgive(&mut self, batches: &[usize]) {
        self.no_tests.retain(|(batch, _)| !batches.contains(batch));
    }

    /// Keeps `d` unless an earlier batch found the same, within the cap.
    fn keep(&mut self, d: Diagnostic) {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (
            &d.file, d.line, d.column, d.severity, &d.code, &d.test, &d.message,
        )
            .hash(&mut hasher);
        let hash = hasher.finish();
        if self.seen.contains(&hash) {
            return;
        }
        if self.found.diagnostics.len() >= crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK {
            self.found.dropped += 1;
        } else {
            self.seen.insert(hash);
            self.found.diagnostics.push(d);
        }
    }

    /// Takes the next chunk of output.
    pub fn push(&mut self, bytes: &[u8]) {
        if let Some((answer, limit)) = self.answer.as_mut() {
            let room = (*limit + 1).saturating_sub(answer.len());
            answer.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        self.push_stderr(bytes);
    }

    /// Takes the next chunk of a verifier's standard error: output like
    /// any other, but no part of its answer.
    pub fn push_stderr(&mut self, bytes: &[u8]) {
        self.batch_open |= !bytes.is_empty();
        let chunk_start = self.total;
        self.total += bytes.len() as u64;
        // Up to the limit; the rest of the output is left out of the log,
        // whose end gets the last bytes when the check is over.
        let room = self.log_limit.saturating_sub(chunk_start);
        let logged = &bytes[..bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        if let Some(log) = self.log.as_mut().filter(|_| !logged.is_empty()) {
            if let Err(e) = log.write_all(logged) {
                // Keep running: the verdict matters more than the copy, and
                // the error is reported with the outcome.
                self.log_error = Some(e);
                self.log = None;
            }
        }
        let mut rest = bytes;
        if self.head.len() < HEAD_BYTES {
            let take = rest.len().min(HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
        }
        if !rest.is_empty() {
            if rest.len() >= TAIL_BYTES {
                self.tail.clear();
                self.tail
                    .extend_from_slice(&rest[rest.len() - TAIL_BYTES..]);
            } else {
                self.tail.extend_from_slice(rest);
                if self.tail.len() > 2 * TAIL_BYTES {
                    let excess = self.tail.len() - TAIL_BYTES;
                    self.tail.drain(..excess);
                }
            }
        }
        self.split_lines(bytes, chunk_start);
    }

    fn split_lines(&mut self, bytes: &[u8], chunk_start: u64) {
        // One look at the whole chunk spares every line its own.
        let coloured = memchr::memchr(0x1b, bytes).is_some();
        let returns = memchr::memchr(b'\r', bytes).is_some();
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', bytes) {
            let piece = &bytes[start..end];
            let end_offset = chunk_start + end as u64;
            if self.line.is_empty() && !self.line_overflow {
                // The common case: a whole line inside one chunk, parsed in
                // place without a copy.
                let at = chunk_start + start as u64..end_offset;
                Self::parse_line(&mut self.extractor, piece, at, coloured, returns);
            } else {
                self.extend_line(piece);
                self.flush_line(end_offset);
            }
            start = end + 1;
            self.line_start = chunk_start + start as u64;
        }
        self.extend_line(&bytes[start..]);
    }

    /// Parses one line; `coloured` and `returns` say whether its chunk
    /// holds an escape character and a carriage return at all.
    fn parse_line(
        extractor: &mut Extractor,
        line: &[u8],
        at: Range<u64>,
        coloured: bool,
        returns: bool,
    ) {
        let cut = |part: &[u8]| -> usize { part.len().min(line_limit(part)) };
        let wanted = |part: &[u8]| extractor.wants(&part[..cut(part)], coloured);
        let shown = if returns {
            crate::diagnostics::shown_part(line, wanted)
        } else {
            wanted(line).then_some(line)
        };
        let Some(line) = shown else {
            return;
        };
        let line = &line[..cut(line)];
        match std::str::from_utf8(line) {
            Ok(text) => extractor.line(text, at),
            Err(_) => extractor.line(&String::from_utf8_lossy(line), at),
        }
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        // Decided by the line's first bytes, which may come in this piece.
        let mut head = [0u8; 3];
        let mut known = 0;
        for (slot, b) in head.iter_mut().zip(self.line.iter().chain(bytes)) {
            *slot = *b;
            known += 1;
        }
        let limit = line_limit(&head[..known]);
        let room = limit.saturating_sub(self.line.len());
        if bytes.len() > room {
            self.line_overflow = true;
        }
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn flush_line(&mut self, end: u64) {
        let at = self.line_start..end;
        Self::parse_line(&mut self.extractor, &self.line, at, true, true);
        self.line.clear();
        self.line_overflow = false;
    }

    /// Ends the output: the log gets the last bytes if it was cut, and
    /// what was kept is returned with the extractor's findings, their
    /// places in the log as it is written (see `Finished::log_range`).
    /// The notes are written by `Finished::close`.
    pub fn finish(mut self) -> Finished {
        if self.batch_open || self.batches == 0 {
            self.end_batch(false);
        }
        for (_, d) in std::mem::take(&mut self.no_tests) {
            self.keep(d);
        }
        // The ring holds up to twice its size between trims: the log and
        // the verdict get the last `TAIL_BYTES`, as documented, whatever
        // size the pipe's reads came in.
        if self.tail.len() > TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
        let mut cut = None;
        if self.total > self.log_limit {
            let left_out = self.total - self.log_limit;
            let tail_len =
                usize::try_from(left_out).map_or(self.tail.len(), |n| n.min(self.tail.len()));
            let tail = &self.tail[self.tail.len() - tail_len..];
            let note = format!(
                "\n[phasegate: the log stops at {} bytes; {} more were printed, of which the last {} follow]\n",
                self.log_limit, left_out, tail_len
            );
            cut = Some(Cut {
                limit: self.log_limit,
                note_len: note.len() as u64,
                tail_from: self.total - tail_len as u64,
            });
            if let Some(log) = self.log.as_mut() {
                if let Err(e) = log
                    .write_all(note.as_bytes())
                    .and_then(|()| log.write_all(tail))
                {
                    self.log_error = Some(e);
                }
            }
        }
        let mut extracted = std::mem::take(&mut self.found);
        if cut.is_some() {
            // The places found in the output, made places in the log: a
            // line the cut left out has none there.
            for d in &mut extracted.diagnostics {
                d.log_range = d
                    .log_range
                    .and_then(|(start, end)| log_range(cut, start, end));
            }
        }
        // On a line of their own, after output that may not end one.
        let line_open = self
            .tail
            .last()
            .or(self.head.last())
            .is_some_and(|b| *b != b'\n');
        let tail = self.tail;
        Finished {
            output: CapturedOutput {
                head: self.head,
                tail,
                total_bytes: self.total,
            },
            extracted,
            log_error: self.log_error,
            log: self.log,
            notes: self.notes,
            line_open,
            cut,
        }
    }
}

/// Where the bytes `start..end` of the output are in the log `cut` left,
/// when it holds them whole.
fn log_range(cut: Option<Cut>, start: u64, end: u64) -> Option<(u64, u64)> {
    let Some(cut) = cut else {
        return Some((start, end));
    };
    if end <= cut.limit {
        Some((start, end))
    } else if start >= cut.tail_from {
        let shift = cut.limit + cut.note_len;
        Some((start - cut.tail_from + shift, end - cut.tail_from + shift))
    } else {
        None
    }
}

pub struct Finished {
    pub output: CapturedOutput,
    pub extracted: Extracted,
    pub log_error: Option<io::Error>,
    /// The log, its notes still to be written (see `close`).
    log: Option<BufWriter<File>>,
    notes: Vec<Note>,
    /// The output does not end its last line.
    line_open: bool,
    cut: Option<Cut>,
}

impl Finished {
    /// Where byte `at` of the output (the start of a batch's output) is in
    /// the log as written; `None` when the cut left it out. A start at the
    /// very end of the output is the end of the log's output.
    pub fn log_offset(&self, at: u64) -> Option<u64> {
        match self.cut {
            Some(cut) if at >= cut.tail_from => Some(at - cut.tail_from + cut.limit + cut.note_len),
            Some(cut) if at >= cut.limit => None,
            _ => Some(at),
        }
    }

    /// Writes phasegate's notes after the output, `batches[n]` the line on
    /// how batch `n` ended, and flushes the log.
    pub fn close(&mut self, batches: &[String]) {
        let Some(mut log) = self.log.take() else {
            return;
        };
        if !self.notes.is_empty() {
            let mut text = String::from(if self.line_open { "\n" } else { "" });
            for note in &self.notes {
                text.push_str("[phasegate: ");
                match note {
                    Note::Text(note) => text.push_str(note),
                    Note::Batch(n) => {
                        text.push_str(batches.get(*n).map_or("", String::as_str));
                    }
                }
                text.push_str("]\n");
            }
            if let Err(e) = log.write_all(text.as_bytes()) {
                self.log_error = Some(e);
            }
        }
        if let Err(e) = log.flush() {
            self.log_error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Origin, ParserChoice};
    use std::path::Path;

    fn extractor(dir: &Path) -> Extractor {
        Extractor::new(
            "c",
            Origin::Lint,
            &ParserChoice::Auto,
            &["sh".to_string()],
            dir,
            dir,
        )
    }

    fn capture(dir: &Path) -> Capture {
        let log = File::create(dir.join("c.log")).unwrap();
        let dir = dir.to_path_buf();
        Capture::new(log, LOG_LIMIT, move || extractor(&dir))
    }

    #[test]
    fn a_log_past_its_limit_keeps_its_start_and_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        c.log_limit = 1000;
        c.push(&[b'a'; 900]);
        c.push(&[b'b'; 200]);
        for _ in 0..100 {
            c.push(&[b'c'; 1000]);
        }
        c.push(b"last words\n");
        let mut done = c.finish();
        done.close(&[]);
        assert!(done.log_error.is_none());
        let log = std::fs::read(dir.path().join("c.log")).unwrap();
        let text = String::from_utf8_lossy(&log);
        assert!(
            text.starts_with(&format!(
                "{}{}\n[phasegate: the log stops at 1000 bytes; 100111 more",
                "a".repeat(900),
                "b".repeat(100)
            )),
            "{}",
            &text[..1100]
        );
        assert!(text.ends_with(
            "cccc last words\n"
                .trim_start_matches("cccc ")
                .to_string()
                .as_str()
        ));
        assert!(log.len() < 1000 + 200 + 2 * TAIL_BYTES);
        // What was parsed and counted is the whole output.
        assert_eq!(done.output.total_bytes, 1100 + 100_000 + 11);
    }

    #[test]
    fn the_log_is_cut_where_the_readme_says() {
        // Tests cut it smaller (`PHASEGATE_TEST_LOG_LIMIT`); a real run
        // keeps what the README promises.
        assert_eq!(LOG_LIMIT, 1 << 30);
        assert_eq!(TAIL_BYTES, 64 * 1024);
        let readme: Vec<&str> = include_str!("../../README.md").split_whitespace().collect();
        assert!(
            readme
                .join(" ")
                .contains("every check's output (its first GiB and its last 64 KiB:"),
            "the README no longer says where the log is cut"
        );
        // And a check planned from a configuration is cut there.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("phasegate.toml"),
            "[phases.implementation]\nchecks = [ { name = \"c\", command = \"true\" } ]\n",
        )
        .unwrap();
        let config = crate::config::load(dir.path()).unwrap();
        let spec = &config.checks_for("implementation", None).unwrap()[0];
        let state = crate::state::umask_dir(&dir.path().join("state"));
        let run_dir =
            crate::state::RunDir::create(&state, std::time::SystemTime::now(), 1).unwrap();
        let plan =
            crate::gate::plan_check(spec, &[], &[], dir.path(), &run_dir, None, None).unwrap();
        assert_eq!(plan.log_limit, LOG_LIMIT);
    }

    #[test]
    fn places_in_a_cut_log_point_at_the_bytes_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        c.log_limit = 1000;
        c.push(b"a.c:1:1: error: before the cut\n");
        c.push(&[b'.'; 2000]);
        c.push(b"\nb.c:2:1: error: cut out\n");
        // Past the head kept in memory, so the log's end has the tail.
        for _ in 0..10_000 {
            c.push(b"filler line\n");
        }
        c.push(b"c.c:3:1: error: after the cut\n");
        let mut done = c.finish();
        assert!(done.log_offset(5).is_some() && done.log_offset(1500).is_none());
        done.close(&[]);
        let log = std::fs::read(dir.path().join("c.log")).unwrap();
        let at: Vec<(&str, Option<String>)> = done
            .extracted
            .diagnostics
            .iter()
            .map(|d| {
                let text = d.log_range.map(|(start, end)| {
                    let range = usize::try_from(start).unwrap()..usize::try_from(end).unwrap();
                    String::from_utf8_lossy(&log[range]).into_owned()
                });
                (d.message.as_str(), text)
            })
            .collect();
        assert_eq!(
            at,
            [
                (
                    "before the cut",
                    Some("a.c:1:1: error: before the cut".into())
                ),
                ("cut out", None),
                (
                    "after the cut",
                    Some("c.c:3:1: error: after the cut".into())
                ),
            ]
        );
    }

    #[test]
    fn a_line_rewritten_with_carriage_returns_is_what_it_ends_as() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        c.push(b"checking 1/2\rd.c:2:1: error: bad\r\n");
        let mut done = c.finish();
        done.close(&[]);
        let d = &done.extracted.diagnostics[0];
        assert_eq!(d.file.as_deref(), Some("d.c"));
        assert_eq!(d.message, "bad");
    }

    #[test]
    fn a_carriage_return_inside_a_diagnostic_does_not_lose_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        c.push(b"a.c:2:1: error: carriage\rreturn\na.c:1:1: error: second\n");
        let mut done = c.finish();
        done.close(&[]);
        let found: Vec<(Option<u32>, &str)> = done
            .extracted
            .diagnostics
            .iter()
            .map(|d| (d.line, d.message.as_str()))
            .collect();
        assert_eq!(found, [(Some(2), "carriage"), (Some(1), "second")]);
    }

    #[test]
    fn memory_is_bounded_and_the_log_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        let chunk = vec![b'x'; 10_000];
        for _ in 0..1000 {
            c.push(&chunk);
        }
        c.push(b"\nthe end\n");
        let mut done = c.finish();
        done.close(&[]);
        assert_eq!(done.output.total_bytes, 10_000_009);
        assert_eq!(done.output.head.len(), HEAD_BYTES);
        assert_eq!(done.output.tail.len(), TAIL_BYTES);
        assert!(done.output.tail.ends_with(b"\nthe end\n"));
        assert!(done.output.truncated());
        assert_eq!(
            std::fs::metadata(dir.path().join("c.log")).unwrap().len(),
            10_000_009
        );
    }

    #[test]
    fn lines_split_across_chunks_and_crlf_are_parsed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        for piece in [
            &b"src/a.c:1:2: err"[..],
            b"or: boom\r\nsrc/b.c:3: warning: w",
            b"\n\xff\xfe\n",
        ] {
            c.push(piece);
        }
        let mut done = c.finish();
        done.close(&[]);
        assert_eq!(
            done.extracted.diagnostics.len(),
            2,
            "{:?}",
            done.extracted.diagnostics
        );
        assert_eq!(done.extracted.diagnostics[0].message, "boom");
        assert_eq!(
            done.extracted.diagnostics[1].file.as_deref(),
            Some("src/b.c")
        );
        assert!(!done.output.truncated());
    }

    #[test]
    fn a_verifier_answer_is_kept_up_to_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = capture(dir.path());
        c.keep_answer(4);
        c.push(b"abc");
        c.push(b"defg");
        let (over, bytes) = c.take_answer().unwrap();
        assert!(over);
        assert_eq!(bytes, b"abcde");
        // The next batch's answer starts afresh.
        c.push(b"xy");
        assert_eq!(c.take_answer(), Some((false, b"xy".to_vec())));
    }
}
