//! Streaming extraction: the runner feeds each output line as it arrives
//! (with its byte range in the log) and collects the diagnostics at the
//! end, so memory stays bounded whatever the tool prints.
//!
//! The extractor owns what every grammar shares: ANSI stripping, JSON
//! documents gathered across lines, paths made relative to the repository,
//! columns converted to characters, duplicates removed and the cap.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use crate::config::{Origin, ParserChoice};

use super::columns;
use super::parsers::{self, Anchor, Custom, Found, GoModEntry, Grammar, Out};
use super::workspace::{self, Mark, Workspace};
use super::{strip_ansi, ColumnUnit, Diagnostic, ParserId};

/// At most this many diagnostics are kept per check; the rest are counted.
pub const MAX_DIAGNOSTICS_PER_CHECK: usize = 1000;

/// The most of one JSON document (ESLint's `-f json`, pyright's
/// `--outputjson`) gathered before it is read; a bigger one is read as text.
pub const MAX_JSON_BYTES: usize = 16 * 1024 * 1024;
/// The most of one finding's message, as much as a run keeps of one line
/// of a tool's output.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// What extraction gives back.
#[derive(Debug, Default)]
pub struct Extracted {
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics over the cap, counted.
    pub dropped: usize,
    /// The parser that read the output, when one found anything.
    pub parser: Option<&'static str>,
    /// The output came in a format whose tool exits 0 while reporting
    /// errors: its errors fail the check.
    pub errors_fail: bool,
}

/// The code of the finding that a run found no test to run, as pytest's
/// exit status names it (`ExitCode.NO_TESTS_COLLECTED`).
pub const NO_TESTS_COLLECTED: &str = "NO_TESTS_COLLECTED";

impl Extracted {
    /// The check exited 0. A runner says it found no test whatever its
    /// exit status, but exits 0 when the command asks for that
    /// (`bun test --pass-with-no-tests`, `pytest || [ $? -eq 5 ]`): the
    /// run passed as its user wants, and a finding that it failed for want
    /// of tests would be an error on a passed check. Only the exit status
    /// tells, which the parsers never see (`diagnostics parse` keeps the
    /// finding: a saved log has none).
    pub fn exited_zero(&mut self) {
        self.diagnostics
            .retain(|d| d.code.as_deref() != Some(NO_TESTS_COLLECTED));
        if self.diagnostics.is_empty() && self.dropped == 0 {
            self.parser = None;
        }
    }
}

/// One grammar with what it found so far.
#[derive(Debug)]
struct Reader {
    grammar: Box<dyn Grammar>,
    out: Out,
    kept: Vec<Found>,
    dropped: usize,
    seen: HashSet<u64>,
    /// Errors and warnings pushed, repeats included: the contest's tally.
    weight: usize,
}

impl Reader {
    fn new(grammar: Box<dyn Grammar>) -> Reader {
        Reader {
            grammar,
            out: Out::default(),
            kept: Vec::new(),
            dropped: 0,
            seen: HashSet::new(),
            weight: 0,
        }
    }

    /// Moves what the grammar pushed into `kept`, without duplicates and
    /// within the cap.
    fn collect(&mut self) {
        for found in self.out.found.drain(..) {
            if matches!(
                found.severity,
                super::Severity::Error | super::Severity::Warning
            ) {
                self.weight += 1;
            }
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            (
                &found.file,
                found.line,
                found.column,
                found.severity,
                &found.code,
                &found.test,
                &found.message,
            )
                .hash(&mut hasher);
            let hash = hasher.finish();
            if self.seen.contains(&hash) {
                continue;
            }
            // Past the cap only a count grows: memory stays bounded
            // however many distinct findings the output holds.
            if self.kept.len() >= MAX_DIAGNOSTICS_PER_CHECK {
                self.dropped += 1;
            } else {
                self.seen.insert(hash);
                self.kept.push(found);
            }
        }
    }

    /// How much of the output this grammar understood: errors and warnings
    /// placed in a file count, others barely. A line such as `error:
    /// expect(received).toBe(expected)` reads as a compiler's error with no
    /// place; the test runner that printed it places it at its assertion.
    fn score(&self) -> usize {
        self.kept
            .iter()
            .map(|f| match f.severity {
                super::Severity::Error | super::Severity::Warning if f.file.is_some() => 4,
                _ => 1,
            })
            .sum::<usize>()
            + 4 * self.dropped
    }
}

/// Whether a line can open a JSON document, one the extractor gathers:
/// `{`, `[` at its start followed by what JSON allows there.
pub fn opens_json(line: &[u8]) -> bool {
    match line {
        [b'{' | b'['] | [b'{', b'"', ..] | [b'[', b'{' | b']' | b'[' | b'"', ..] => true,
        [b'[' | b'{', b' ', ..] => line.get(2) == Some(&b'"'),
        _ => false,
    }
}

/// A JSON document being gathered line by line.
///
/// What it holds stays a small multiple of `MAX_JSON_BYTES` however the
/// document is cut into lines: besides the text, each line costs one byte
/// (its place in the log follows from the previous line's and its length),
/// where a table of offsets cost 24 bytes a line, 17 times the input for a
/// `[` followed by millions of short lines.
#[derive(Debug, Default)]
struct Document {
    /// The gathered lines, each ended by `\n` (a fed line holds none).
    text: String,
    /// Where the first line starts in the log and the last one ends.
    start: u64,
    end: u64,
    /// How each line lies in the log, to read the lines as text with
    /// their ranges if the document turns out not to be JSON: one byte
    /// below `SPAN_FAR` for a line that follows the previous one and is
    /// at most 127 bytes longer in the log than in the text (colours,
    /// trailing spaces, a `\r`); else `SPAN_FAR` and its start and length
    /// as LEB128 numbers.
    spans: Vec<u8>,
    depth: i64,
    in_string: bool,
    escaped: bool,
}

/// The mark of a line whose range is written out in `Document::spans`.
const SPAN_FAR: u8 = 0x80;

impl Document {
    fn opens(line: &str) -> bool {
        opens_json(line.as_bytes())
    }

    /// Adds a line's text and its place in the log (the part of a line up
    /// to where one document closes and the next opens, see `line`).
    fn record(&mut self, line: &str, at: &Range<u64>) {
        debug_assert!(!line.contains('\n'), "a fed line holds no terminator");
        let expected = if self.spans.is_empty() {
            self.start = at.start;
            at.start
        } else {
            self.end + 1
        };
        let extra = (at.end.checked_sub(at.start))
            .and_then(|n| n.checked_sub(line.len() as u64))
            .and_then(|extra| u8::try_from(extra).ok())
            .filter(|extra| *extra < SPAN_FAR);
        match extra {
            Some(extra) if at.start == expected => self.spans.push(extra),
            _ => {
                self.spans.push(SPAN_FAR);
                push_leb128(&mut self.spans, at.start);
                push_leb128(&mut self.spans, at.end.saturating_sub(at.start));
            }
        }
        self.end = at.end.max(at.start);
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Moves the document's brackets and strings over the whole of `line`:
    /// where a bracket first closed the document in it, if one did (the
    /// end of that bracket; the line may open more after it, `][`).
    /// Whether the document is closed at the end of the line is
    /// `closed()`.
    fn scan(&mut self, line: &str) -> Option<usize> {
        let mut first = None;
        for (i, b) in line.bytes().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth <= 0 && first.is_none() {
                        first = Some(i + 1);
                    }
                }
                _ => {}
            }
        }
        first
    }

    /// Whether the brackets scanned so far close the document.
    fn closed(&self) -> bool {
        self.depth <= 0
    }

    /// Past the bound, the document is read as text: its text, or the
    /// ranges of lines that lie apart in the log or hold far more there.
    fn too_big(&self) -> bool {
        self.text.len() > MAX_JSON_BYTES || self.spans.len() > MAX_JSON_BYTES
    }

    /// The bytes gathered so far: the text and the lines' ranges.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.text.capacity() + self.spans.capacity()
    }

    fn range(&self) -> Range<u64> {
        self.start..self.end
    }

    /// Each gathered line with its range in the log.
    fn lines(&self) -> impl Iterator<Item = (&str, Range<u64>)> + '_ {
        let mut spans = self.spans.iter().copied();
        let mut next = self.start;
        self.text.split_terminator('\n').map(move |text| {
            let at = match spans.next() {
                Some(SPAN_FAR) => {
                    let start = read_leb128(&mut spans);
                    start..start.saturating_add(read_leb128(&mut spans))
                }
                extra => next..next + text.len() as u64 + u64::from(extra.unwrap_or(0)),
            };
            next = at.end + 1;
            (text, at)
        })
    }
}

/// Appends `n` as an unsigned LEB128 number: seven bits a byte, the high
/// bit set on all but the last.
fn push_leb128(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// Reads a number `push_leb128` wrote.
fn read_leb128(bytes: &mut impl Iterator<Item = u8>) -> u64 {
    let mut n = 0u64;
    for (shift, b) in (0..64).step_by(7).zip(bytes) {
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
    }
    n
}

/// Collects diagnostics from one check's output, line by line.
#[derive(Debug)]
pub struct Extractor {
    check: String,
    origin: Origin,
    /// The program's name, the tool of every finding that names no other.
    tool: String,
    /// One reader when the parser is known; several when the output
    /// decides (the best one wins at the end).
    readers: Vec<Reader>,
    /// What the readers' grammars can want, as byte tables (`None`: one
    /// may want any line).
    gate: parsers::Gate,
    /// A grammar is in the middle of a block: every line goes to `wants`.
    busy: bool,
    /// The output decides the parser: the program said nothing.
    detecting: bool,
    /// Lines read, to look at the contest now and then.
    lines: u64,
    document: Option<Document>,
    root: PathBuf,
    cwd: PathBuf,
    /// Where the output was produced, when that was elsewhere: absolute
    /// paths under it are read as under `root`.
    recorded_root: Option<PathBuf>,
    /// The `go.work` the check's go used, as its `GOWORK` says.
    go_work: GoWork,
    /// The parser the check asked for and its command, which a
    /// package's own reader (see `Split`) is given too.
    parser: ParserChoice,
    argv: Vec<String>,
    /// Set once a line looked like a package manager's mark of a
    /// workspace package's run.
    split: Option<Box<Split>>,
    /// This reads one package's lines of a workspace run: it splits no
    /// further.
    nested: bool,
}

/// The most readers of one workspace run's packages, those its prefixes
/// name but the workspace does not list included: past them, such a
/// prefix's lines are read as the check's own.
const MAX_WORKSPACE_PARTS: usize = 256;

/// Whose lines a reader of a workspace run reads.
#[derive(Debug, PartialEq, Eq)]
enum Part {
    /// The package in this directory.
    Package(PathBuf),
    /// A package the output names by this prefix (pnpm's directory,
    /// yarn's name) but the workspace does not list: its lines are read
    /// apart, in the check's directory, as they would be alone.
    Label(String),
}

impl Part {
    fn label(&self) -> Option<&str> {
        match self {
            Part::Label(label) => Some(label),
            Part::Package(_) => None,
        }
    }
}

/// A Node workspace's packages run one after the other or side by side
/// from its root (`npm test --workspaces`, `pnpm -r test`): each
/// package's lines go to a reader of their own, in the package's
/// directory, as if its runner had run alone there. Each runner names
/// files from its package's directory, and one package's jest and
/// another's vitest each get the grammar that reads them.
#[derive(Debug)]
struct Split {
    /// The workspace the check ran in; `None` when there is none, and no
    /// line is a mark.
    workspace: Option<Workspace>,
    /// One reader per package whose lines came.
    parts: Vec<(Part, Extractor)>,
    /// The package npm's or yarn 1's last mark began: the lines with no
    /// prefix are its (`None`: the check's own).
    current: Option<usize>,
    /// The line before was npm's mark, so this one is the command of the
    /// package's script (`> jest`), whatever package it seems to name.
    after_npm: bool,
}

/// Which `go.work` go uses, as `GOWORK` says (`go help environment`),
/// recorded from go 1.19 and 1.24: unset, empty or `auto`, the nearest
/// `go.work` from its directory up; `off`, none; an absolute path, that
/// file whatever its name. go refuses a relative path (`go: invalid
/// GOWORK: not an absolute path`), and stops when the file is missing, so
/// neither has modules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum GoWork {
    #[default]
    Auto,
    Off,
    File(PathBuf),
}

impl GoWork {
    fn from_env(value: Option<&std::ffi::OsStr>) -> GoWork {
        let Some(value) = value.filter(|v| !v.is_empty() && *v != "auto") else {
            return GoWork::Auto;
        };
        let path = Path::new(value);
        if value == "off" || !path.is_absolute() {
            GoWork::Off
        } else {
            GoWork::File(path.to_path_buf())
        }
    }
}

impl Extractor {
    /// `argv` is the check's command, which `parser = "auto"` goes by.
    pub fn new(
        check: &str,
        origin: Origin,
        parser: &ParserChoice,
        argv: &[String],
        root: &Path,
        cwd: &Path,
    ) -> Extractor {
        let program = argv
            .first()
            .and_then(|p| Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (tool, grammars): (String, Vec<Box<dyn Grammar>>) = match parser {
            ParserChoice::Regex(regex) => (program, vec![Box::new(Custom::new(regex.clone()))]),
            ParserChoice::Named(name) => (
                program,
                parsers::by_name_for(name, argv)
                    .into_iter()
                    .collect::<Vec<_>>(),
            ),
            ParserChoice::Auto => match parsers::for_argv(argv) {
                Some((tool, grammar)) => (tool, vec![grammar]),
                None => (program, parsers::candidates()),
            },
        };
        let detecting = grammars.len() > 1;
        Extractor {
            parser: parser.clone(),
            argv: argv.to_vec(),
            split: None,
            nested: false,
            check: check.to_string(),
            origin,
            detecting,
            lines: 0,
            tool,
            gate: parsers::Gate::of(grammars.iter().map(|g| g.triggers())).with_marks(),
            busy: grammars.iter().any(|g| g.busy()),
            readers: grammars.into_iter().map(Reader::new).collect(),
            document: None,
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
            recorded_root: None,
            go_work: GoWork::Auto,
        }
    }

    /// Looks a Go package up in the workspace `GOWORK` (the check's, as
    /// it ran) chooses, not in the `go.work` above the check's directory.
    #[must_use]
    pub fn go_work(mut self, value: Option<&std::ffi::OsStr>) -> Extractor {
        self.go_work = GoWork::from_env(value);
        self
    }

    /// Reads absolute paths under `path` (where a saved log was produced)
    /// as if they were under the repository root.
    #[must_use]
    pub fn recorded_in(mut self, path: &Path) -> Extractor {
        self.recorded_root = Some(path.to_path_buf());
        self
    }

    /// Whether `line` could matter: a cheap look at the bytes that spares
    /// most of a long output any decoding and regex work.
    ///
    /// `maybe_coloured` is false when the caller knows the line holds no
    /// escape character (it looked at the whole chunk at once).
    pub fn wants(&self, line: &[u8], maybe_coloured: bool) -> bool {
        if self.readers.is_empty() {
            return false;
        }
        if self.document.is_some() || (maybe_coloured && memchr::memchr(0x1b, line).is_some()) {
            return true;
        }
        if matches!(line.first(), Some(b'{' | b'[')) {
            return true;
        }
        let mask = self.gate.admits(line);
        if !self.nested {
            let may_mark = || mask & parsers::Gate::MARK != 0 && workspace::may_mark(line);
            let wanted = match self.split.as_deref() {
                // Once a package's lines came, every line may be one of
                // them; before, only its mark matters.
                Some(split) => {
                    split.workspace.is_some()
                        && (split.current.is_some() || !split.parts.is_empty() || may_mark())
                }
                None => may_mark(),
            };
            if wanted {
                return true;
            }
        }
        // `busy` says whether any grammar is in a block: when none is, the
        // triggers alone say which to ask.
        if !self.busy && mask == 0 {
            return false;
        }
        self.readers.iter().enumerate().any(|(n, r)| {
            (parsers::Gate::admitted(mask, n) || (self.busy && r.grammar.busy()))
                && r.grammar.wants(line)
        })
    }

    /// Feeds one line of output, without its terminator; `at` is its byte
    /// range in the check's log.
    pub fn line(&mut self, line: &str, at: Range<u64>) {
        let stripped;
        let line = if line.contains('\u{1b}') {
            stripped = strip_ansi(line);
            stripped.as_str()
        } else {
            line
        };
        let line = line.trim_end();
        // A JSON document the check's own output opened reads on whole.
        if !self.nested && self.document.is_none() && self.route(line, &at) {
            return;
        }
        self.read_line(line, at);
    }

    /// Hands a line of a workspace run to the reader of the package it
    /// comes from: whether it did (or the line was a mark, nobody's).
    fn route(&mut self, line: &str, at: &Range<u64>) -> bool {
        if self.split.is_none() {
            // The workspace is looked for only once a line could mark a
            // package's run: pnpm's prefixed lines follow its `$` line.
            if !workspace::may_mark(line.as_bytes())
                || matches!(Mark::of(line), None | Some(Mark::Dir { opens: false, .. }))
            {
                return false;
            }
            self.split = Some(Box::new(Split {
                workspace: Workspace::find(&self.cwd, &self.root),
                parts: Vec::new(),
                current: None,
                after_npm: false,
            }));
        }
        let Some(split) = self.split.as_deref_mut() else {
            return false;
        };
        let Some(ws) = split.workspace.as_ref() else {
            return false;
        };
        let after_npm = std::mem::take(&mut split.after_npm);
        let known = |label: &str| {
            split
                .parts
                .iter()
                .any(|(part, _)| part.label() == Some(label))
        };
        let room = split.parts.len() < MAX_WORKSPACE_PARTS;
        // The package a mark names, and the package's own text on its
        // line when the mark is a prefix; `None` text: the mark begins
        // the lines that follow. A prefix that names no package of the
        // workspace still keeps its lines apart from the others', read
        // in the check's directory.
        let marked = match Mark::of(line) {
            Some(Mark::Npm { name }) => {
                split.after_npm = true;
                match ws.named(name) {
                    Some(dir) => Some((Part::Package(dir.to_path_buf()), None)),
                    // The run of a package the workspace does not list:
                    // its lines are no listed package's, and are read
                    // as the check's own.
                    None => {
                        split.current = None;
                        return false;
                    }
                }
            }
            Some(Mark::Bare { name }) if !after_npm => ws
                .named(name)
                .map(|dir| (Part::Package(dir.to_path_buf()), None)),
            Some(Mark::Dir { dir, rest, opens }) => {
                let text = (!opens).then_some(rest);
                match ws.at(dir, &self.cwd) {
                    Some(dir) => Some((Part::Package(dir.to_path_buf()), text)),
                    None if known(dir) || (opens && room) => {
                        Some((Part::Label(dir.to_string()), text))
                    }
                    None => None,
                }
            }
            Some(Mark::Named { name, rest }) => match ws.named(name) {
                Some(dir) => Some((Part::Package(dir.to_path_buf()), Some(rest))),
                None if known(name) || room => Some((Part::Label(name.to_string()), Some(rest))),
                None => None,
            },
            _ => None,
        };
        let Some((part, text)) = marked else {
            let Some(current) = split.current else {
                return false;
            };
            if let Some((_, part)) = split.parts.get_mut(current) {
                part.line(line, at.clone());
            }
            return true;
        };
        let index = match &part {
            Part::Package(dir) if *dir == self.cwd => None,
            _ => Some(self.part_index(part)),
        };
        let Some(split) = self.split.as_deref_mut() else {
            return false;
        };
        let Some(text) = text else {
            split.current = index;
            return true;
        };
        // The package's text lies after the prefix in the log.
        let skipped = (line.len() - text.len()) as u64;
        let at = (at.start + skipped).min(at.end)..at.end;
        match index.and_then(|i| split.parts.get_mut(i)) {
            Some((_, part)) => part.line(text, at),
            None => self.read_line(text, at),
        }
        true
    }

    /// The index of the reader of `part`, made on its first line.
    fn part_index(&mut self, part: Part) -> usize {
        let known = self
            .split
            .as_deref()
            .and_then(|split| split.parts.iter().position(|(p, _)| *p == part));
        if let Some(index) = known {
            return index;
        }
        // The root's command (`npm test`) says nothing of what a package
        // runs: its own output decides, unless the check names a parser.
        let (parser, argv) = match &self.parser {
            ParserChoice::Auto => (ParserChoice::Auto, Vec::new()),
            other => (other.clone(), self.argv.clone()),
        };
        let dir = match &part {
            Part::Package(dir) => dir.clone(),
            Part::Label(_) => self.cwd.clone(),
        };
        let mut reader = Extractor::new(&self.check, self.origin, &parser, &argv, &self.root, &dir);
        reader.nested = true;
        reader.recorded_root.clone_from(&self.recorded_root);
        reader.go_work = self.go_work.clone();
        match self.split.as_deref_mut() {
            Some(split) => {
                split.parts.push((part, reader));
                split.parts.len() - 1
            }
            None => 0,
        }
    }

    /// Reads a line of the check's own output (colours removed and
    /// trailing spaces trimmed), as text or as part of a JSON document.
    fn read_line(&mut self, line: &str, at: Range<u64>) {
        let mut line = line;
        let mut at = at;
        loop {
            if self.document.is_none() && !Document::opens(line) {
                self.text_line(line, &at);
                return;
            }
            let document = self.document.get_or_insert_with(Document::default);
            // Where one document closes and another opens on the same
            // line (`][`, `}{`), each is read on its own: a tool that ends
            // its JSON without a newline (ruff's `json`, `sarif`, `gitlab`,
            // `rdjson`) run twice, by `make lint` or once per batch of
            // `{files}`, would otherwise run its reports together into
            // one that is no JSON, and lose every finding of both.
            // One scan of the line: when it is cut, the document closes
            // at the cut, and where the scan went on past it no longer
            // matters.
            let next = document
                .scan(line)
                .filter(|&cut| opens_json(line[cut..].trim_start().as_bytes()));
            let (now, now_at) = match next {
                Some(cut) => (&line[..cut], at.start..(at.start + cut as u64).min(at.end)),
                None => (line, at.clone()),
            };
            document.record(now, &now_at);
            if next.is_some() || document.closed() || document.too_big() {
                if let Some(document) = self.document.take() {
                    self.close_document(&document);
                }
            }
            let Some(cut) = next else {
                return;
            };
            let rest = &line[cut..];
            let trimmed = rest.trim_start();
            let start = (now_at.end + (rest.len() - trimmed.len()) as u64).min(at.end);
            (line, at) = (trimmed, start..at.end);
        }
    }

    fn text_line(&mut self, line: &str, at: &Range<u64>) {
        self.lines += 1;
        if self.readers.len() > 1 && self.lines % 256 == 0 {
            self.settle();
        }
        let mask = self.gate.admits(line.as_bytes());
        let any_busy = self.busy;
        for (n, reader) in self.readers.iter_mut().enumerate() {
            // A grammar in the middle of a block reads on; any other only
            // the lines its triggers let through.
            if (parsers::Gate::admitted(mask, n) || (any_busy && reader.grammar.busy()))
                && reader.grammar.wants(line.as_bytes())
            {
                reader.grammar.line(line, at, &mut reader.out);
                reader.collect();
            }
        }
        self.note_busy();
    }

    /// Whether a grammar is now in the middle of a block (its state
    /// changes only with the lines and documents it is fed).
    fn note_busy(&mut self) {
        self.busy = self.readers.iter().any(|r| r.grammar.busy());
    }

    /// When the output decides and one grammar has clearly won, the others
    /// stop reading: the winner takes everything at the end anyway, and
    /// reading every line ten times costs most of the time. Clearly: 50
    /// errors and warnings and twice any other's, or 500 and the most
    /// (the first listed winning a tie, as at the end).
    fn settle(&mut self) {
        let weights: Vec<usize> = self.readers.iter().map(|r| r.weight).collect();
        let Some((leader, best)) = weights
            .iter()
            .copied()
            .enumerate()
            .max_by_key(|(i, w)| (*w, std::cmp::Reverse(*i)))
        else {
            return;
        };
        let others = weights
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != leader)
            .map(|(_, w)| *w)
            .max()
            .unwrap_or(0);
        if (best >= 50 && best >= others.saturating_mul(2)) || best >= 500 {
            let winner = self.readers.swap_remove(leader);
            self.gate = parsers::Gate::of([winner.grammar.triggers()]).with_marks();
            self.readers = vec![winner];
        }
    }

    /// A gathered document: JSON goes to the grammars whole; anything else
    /// (a `{` that opened plain text) is read line by line after all.
    fn close_document(&mut self, document: &Document) {
        let range = document.range();
        let wanted = self
            .readers
            .iter()
            .any(|r| r.grammar.wants_document(&document.text));
        if !wanted && document.depth == 0 {
            // Whole and of no interest to any grammar.
            return;
        }
        if document.text.len() <= MAX_JSON_BYTES {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&document.text) {
                for reader in &mut self.readers {
                    if reader.grammar.wants_document(&document.text) {
                        reader.grammar.document(&value, &range, &mut reader.out);
                        reader.collect();
                    }
                }
                self.note_busy();
                return;
            }
        }
        for (text, at) in document.lines() {
            self.text_line(text, &at);
        }
    }
    /// Reads `input` to its end, line by line, as a check's output is read,
    /// and collects the diagnostics. Memory stays bounded: one line at a
    /// time.
    ///
    /// # Errors
    ///
    /// When `input` cannot be read.
    pub fn read_all(mut self, input: impl std::io::Read) -> std::io::Result<Extracted> {
        use std::io::BufRead;
        use std::io::Read;
        let mut reader = std::io::BufReader::new(input);
        let mut line = Vec::new();
        let mut offset: u64 = 0;
        loop {
            line.clear();
            // A line is read up to the largest JSON document the
            // extractor gathers (ESLint prints its whole report on one
            // line), and the rest of it skipped: a saved log that is one
            // endless line must not be held in memory whole.
            let n = (&mut reader)
                .take(MAX_JSON_BYTES as u64 + 1)
                .read_until(b'\n', &mut line)?;
            if n == 0 {
                return Ok(self.finish());
            }
            let start = offset;
            offset += n as u64;
            if line.last() == Some(&b'\n') {
                line.pop();
            } else if n > MAX_JSON_BYTES {
                offset += reader.skip_until(b'\n')? as u64;
            }
            let bytes = &line[..];
            let end = start + bytes.len() as u64;
            if let Some(bytes) = super::shown_part(bytes, |part| self.wants(part, true)) {
                self.line(&String::from_utf8_lossy(bytes), start..end);
            }
        }
    }

    /// The diagnostics found, made relative to the repository with their
    /// columns in characters; in a workspace's run, every package's too,
    /// in the order the output gave them.
    pub fn finish(mut self) -> Extracted {
        let parts = self
            .split
            .take()
            .map(|split| split.parts)
            .unwrap_or_default();
        let mut extracted = self.finish_own();
        if parts.is_empty() {
            return extracted;
        }
        for (_, part) in parts {
            let found = part.finish_own();
            extracted.errors_fail |= found.errors_fail;
            extracted.dropped += found.dropped;
            extracted.parser = extracted.parser.or(found.parser);
            extracted.diagnostics.extend(found.diagnostics);
        }
        extracted
            .diagnostics
            .sort_by_key(|d| d.log_range.map_or(u64::MAX, |(start, _)| start));
        let over = extracted
            .diagnostics
            .len()
            .saturating_sub(MAX_DIAGNOSTICS_PER_CHECK);
        extracted.diagnostics.truncate(MAX_DIAGNOSTICS_PER_CHECK);
        extracted.dropped += over;
        extracted
    }

    /// What this reader's own grammars found.
    fn finish_own(mut self) -> Extracted {
        if let Some(document) = self.document.take() {
            self.close_document(&document);
        }
        for reader in &mut self.readers {
            reader.grammar.finish(&mut reader.out);
            reader.collect();
        }
        // When the output decided, the grammar that understood most wins;
        // the first listed wins a tie.
        let best = self
            .readers
            .iter()
            .enumerate()
            .max_by_key(|(i, r)| (r.score(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i);
        let Some(reader) = best.map(|i| self.readers.swap_remove(i)) else {
            return Extracted::default();
        };
        let name = reader.grammar.name();
        // A program that only launched the tool (`make`, `npm test`) is not
        // the tool: the parser that understood the output names it.
        let tool = if self.detecting || self.tool.is_empty() {
            name.to_string()
        } else {
            self.tool.clone()
        };
        let mut lines = columns::SourceLines::new(&self.root);
        let module = go_module(&self.cwd, &self.root);
        // Run in a member of a workspace, cargo and rustc still name files
        // from the workspace's root.
        let tool_base = if name == "cargo" {
            cargo_root(&self.cwd, &self.root)
        } else {
            self.cwd.clone()
        };
        let ancestors = up_to_root(&self.cwd, &self.root);
        // The modules of a `go.work` and the directories its `replace`
        // lines (and its modules') put modules in, read only for a
        // package the module the check runs in does not hold.
        let workspace = std::cell::OnceCell::new();
        // The directories the module's `replace` lines put modules in,
        // read only for a package neither holds (under `GOWORK=off`, say).
        let replacements = std::cell::OnceCell::new();
        let diagnostics: Vec<Diagnostic> = reader
            .kept
            .into_iter()
            .map(|mut found| {
                reader.grammar.relabel(&mut found);
                let anchor = found.anchor.take();
                let go_mod = found.go_mod.take();
                let import_message = found.import_message.take();
                if let Some(site) = found.import_site.take().filter(|_| found.package.is_none()) {
                    let mut bases = vec![tool_base.as_path()];
                    bases.extend(ancestors.iter().copied());
                    found.package =
                        relative_to_root(&site.file, &bases, &self.root).and_then(|file| {
                            lines
                                .line(&file, site.line)
                                .and_then(|text| imported_path(text, site.column))
                        });
                }
                if found.base_name && found.package.is_none() {
                    let top = module.as_ref().map_or(self.cwd.as_path(), |(dir, _)| dir);
                    found.file = found.file.as_deref().and_then(|name| {
                        let word = anchor.as_ref().and_then(|a| a.words.first())?;
                        go_file_named(top, name, word).map(|p| p.to_string_lossy().into_owned())
                    });
                }
                let base = match &found.package {
                    Some(package) => go_package_dir(package, module.as_ref())
                        .or_else(|| {
                            let workspace = workspace
                                .get_or_init(|| go_workspace(&self.cwd, &self.root, &self.go_work));
                            // A module go.work lists, else one it (or a
                            // listed module's go.mod) replaces with a
                            // directory, go.work's first: its `replace`
                            // wins over a module's.
                            workspace
                                .modules
                                .iter()
                                .chain(&workspace.replaced)
                                .find_map(|module| go_package_dir(package, Some(module)))
                        })
                        .or_else(|| {
                            let replaced = replacements.get_or_init(|| {
                                module.as_ref().map(|(dir, _)| go_replacements(dir))
                            });
                            replaced
                                .iter()
                                .flatten()
                                .find_map(|module| go_package_dir(package, Some(module)))
                        })
                        .or_else(|| gopath_package_dir(package, &self.cwd))
                        .unwrap_or_else(|| self.cwd.clone()),
                    None => tool_base.clone(),
                };
                let file = found.file.as_deref().and_then(|f| {
                    let moved = self
                        .recorded_root
                        .as_ref()
                        .and_then(|r| Path::new(f).strip_prefix(r).ok())
                        .map(|rest| self.root.join(rest).to_string_lossy().into_owned());
                    let mut bases = vec![base.as_path()];
                    bases.extend(ancestors.iter().copied());
                    relative_to_root(moved.as_deref().unwrap_or(f), &bases, &self.root)
                });
                // A tool that names the repository's root itself (`./:3:1`)
                // names a directory, not a file: the finding is placed
                // nowhere, as one that names no file, and its line places
                // nothing.
                let names_root = found.file.is_some() && file.is_none();
                let mut d = Diagnostic {
                    check: self.check.clone(),
                    origin: found.origin.unwrap_or(self.origin),
                    tool: found.tool.map_or_else(|| tool.clone(), str::to_string),
                    tool_version: reader.out.version.clone(),
                    parser: Some(ParserId {
                        name,
                        dialect: found.dialect,
                    }),
                    file,
                    line: found.line.filter(|l| *l > 0),
                    column: found.column.filter(|c| *c > 0),
                    end_line: found.end_line.filter(|l| *l > 0),
                    end_column: found.end_column.filter(|c| *c > 0),
                    column_unit: found.unit,
                    tool_column_unit: found.unit,
                    severity: found.severity,
                    code: found.code,
                    test: found.test,
                    message: bounded(self.repository_message(found.message)),
                    log_range: (found.range.end > 0)
                        .then_some((found.range.start, found.range.end)),
                    source_line: None,
                    pre_existing: false,
                };
                if names_root {
                    (d.line, d.column) = (None, None);
                }
                if let Some(entry) = go_mod.filter(|_| d.line.is_none()) {
                    d.line = d
                        .file
                        .as_deref()
                        .and_then(|f| go_mod_line(&mut lines, f, &entry));
                }
                if let Some(anchor) = anchor.filter(|_| d.line.is_none()) {
                    let at = d
                        .file
                        .as_deref()
                        .and_then(|f| anchored_line(&mut lines, f, &anchor));
                    match at {
                        Some(line) => {
                            d.line = Some(line);
                            if let Some(message) = anchor.message {
                                d.message = bounded(message);
                            }
                        }
                        None if anchor.required => d.file = None,
                        None => {}
                    }
                }
                if let (Some(message), Some(file), Some(line)) =
                    (import_message, d.file.as_deref(), d.line)
                {
                    // The column is still the tool's, in bytes.
                    let import = lines
                        .line(file, line)
                        .and_then(|text| imported_path(text, d.column.unwrap_or(1)));
                    if let Some(import) = import {
                        d.message = bounded(message(&import));
                    }
                }
                match (found.recount, d.file.as_deref(), d.line, d.column) {
                    (Some(recount), Some(file), Some(line), Some(column)) => {
                        if let Some(text) = lines.line(file, line) {
                            d.column = recount(text, column);
                            // The end is counted as the start is, on its
                            // own line; one that cannot be counted goes.
                            let end = match (d.end_line, d.end_column) {
                                (Some(end_line), Some(end_column)) => lines
                                    .line(file, end_line)
                                    .and_then(|text| recount(text, end_column)),
                                _ => None,
                            };
                            d.end_column = end;
                            if end.is_none() {
                                d.end_line = None;
                            }
                            d.column_unit = ColumnUnit::Character;
                        }
                    }
                    _ if d.column_unit != ColumnUnit::Character => lines.convert(&mut d),
                    _ => {}
                }
                drop_backward_end(&mut d);
                if let (Some(file), Some(line)) = (d.file.as_deref(), d.line) {
                    d.source_line = lines.text(file, line);
                }
                d
            })
            .collect();
        let found_any = !diagnostics.is_empty();
        Extracted {
            errors_fail: reader.out.errors_fail,
            diagnostics,
            dropped: reader.dropped,
            parser: found_any.then_some(name),
        }
    }
}

impl Extractor {
    /// `message` with the absolute paths it names under the root of the
    /// checkout the check ran in shown relative to it, as its `file` is:
    /// cargo's warning that both `.cargo/config` and `.cargo/config.toml`
    /// exist names them absolutely, and in a temporary checkout that path
    /// is no file a reader can open and changes from run to run (and so
    /// would the finding's fingerprint). A saved log's messages are kept
    /// as they were recorded.
    fn repository_message(&self, message: String) -> String {
        let prefix = format!("{}/", self.root.display());
        if prefix.len() > 1 && message.contains(&prefix) {
            return message.replace(&prefix, "");
        }
        message
    }
}

/// Forgets an end a tool gave that does not follow its start (an end
/// line before the start line, an end without a start line): SARIF
/// (§3.30.7) and GitHub's annotations reject such a region, and a
/// finding is still placed by its start.
fn drop_backward_end(d: &mut Diagnostic) {
    let Some(line) = d.line else {
        d.end_line = None;
        d.end_column = None;
        return;
    };
    let end_line = d.end_line.unwrap_or(line);
    let backward = end_line < line
        || (end_line == line && matches!((d.column, d.end_column), (Some(c), Some(e)) if e < c));
    if backward || (d.column.is_none() && d.end_column.is_some()) {
        d.end_line = None;
        d.end_column = None;
    }
}

/// The most lines of a file searched for an anchor's words.
const MAX_ANCHOR_LINES: u32 = 100_000;

/// The first line of `file` that holds one of the anchor's words, within
/// its key's value when it names one, after the line that holds one of
/// its `after` words when it has one; for a ranked anchor, the first line
/// that holds its first word found.
fn anchored_line(lines: &mut columns::SourceLines, file: &str, anchor: &Anchor) -> Option<u32> {
    if anchor.ranked {
        return anchor.words.iter().find_map(|word| {
            let one = Anchor {
                words: vec![word.clone()],
                key: anchor.key,
                after: anchor.after.clone(),
                ..Anchor::default()
            };
            anchored_line(lines, file, &one)
        });
    }
    let mut start = 1;
    if !anchor.after.is_empty() {
        for n in 1..=MAX_ANCHOR_LINES {
            let Some(text) = lines.line(file, n) else {
                break;
            };
            if anchor.after.iter().any(|w| holds_word(text, w)) {
                start = n;
                break;
            }
        }
    }
    let mut in_value = anchor.key.is_none();
    for n in start..=MAX_ANCHOR_LINES {
        let text = lines.line(file, n)?;
        if let Some(key) = anchor.key {
            if sets_key(text, key) {
                in_value = true;
            } else if in_value && !continues_value(text) {
                in_value = false;
            }
        }
        if in_value && anchor.words.iter().any(|w| holds_word(text, w)) {
            return Some(n);
        }
    }
    None
}

/// The line of `file`, a `go.mod` or a `vendor/modules.txt`, that holds
/// `entry`: its directive followed by its module path, if it names one
/// (`require example.com/dep v1.0.0`, `# example.com/dep v1.0.0`), or
/// that module path's line in a block of the directive (`require (`,
/// one module a line, `)`); a block of another directive is passed
/// over, and so are comments.
fn go_mod_line(lines: &mut columns::SourceLines, file: &str, entry: &GoModEntry) -> Option<u32> {
    let is_module = |word: Option<&str>| match (&entry.module, word) {
        (None, _) => true,
        (Some(module), Some(word)) => word.trim_matches(['"', '`']) == module,
        (Some(_), None) => false,
    };
    let mut block: Option<String> = None;
    for n in 1..=MAX_ANCHOR_LINES {
        let text = lines.line(file, n)?;
        let text = text.split("//").next().unwrap_or(text);
        let mut words = text.split_whitespace();
        let Some(first) = words.next() else {
            continue;
        };
        if let Some(directive) = &block {
            if first == ")" {
                block = None;
            } else if directive == entry.directive && is_module(Some(first)) {
                return Some(n);
            }
            continue;
        }
        let second = words.next();
        let opens = match first.strip_suffix('(') {
            Some(directive) if second.is_none() => Some(directive),
            _ if second == Some("(") && words.next().is_none() => Some(first),
            _ => None,
        };
        if let Some(directive) = opens {
            block = Some(directive.to_string());
        } else if first == entry.directive && is_module(second) {
            return Some(n);
        }
    }
    None
}

/// `key = ...` or `key: ...` (an INI file's, a TOML table's).
fn sets_key(line: &str, key: &str) -> bool {
    line.trim_start()
        .strip_prefix(key)
        .is_some_and(|rest| rest.trim_start().starts_with(['=', ':']))
}

/// A line that goes on with the value above it: indented (an INI file's
/// continuation), blank, or an item or the end of a TOML list.
fn continues_value(line: &str) -> bool {
    line.is_empty() || line.starts_with([' ', '\t', '"', '\'', ']', ','])
}

/// Whether `line` holds `word` not as part of a longer word.
fn holds_word(line: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    !word.is_empty()
        && line.match_indices(word).any(|(i, _)| {
            !line[..i].chars().next_back().is_some_and(part)
                && !line[i + word.len()..].chars().next().is_some_and(part)
        })
}

/// `message` cut to `MAX_MESSAGE_BYTES`, with a mark where it was cut:
/// a tool that prints a finding of megabytes (a whole data dump in one
/// assertion) must not carry them into every report and the history.
fn bounded(mut message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    super::cut_bytes(&mut message, MAX_MESSAGE_BYTES - '…'.len_utf8());
    message.push('…');
    message
}

/// The directories from the check's up to the repository root, nearest
/// first; the check's and the root when the check's is not inside it.
fn up_to_root<'a>(cwd: &'a Path, root: &'a Path) -> Vec<&'a Path> {
    if cwd.starts_with(root) {
        cwd.ancestors()
            .take_while(|d| d.starts_with(root))
            .collect()
    } else {
        vec![cwd, root]
    }
}

/// The Go module the check runs in: the directory of the nearest `go.mod`
/// from the check's directory up to the root, and its module path.
fn go_module(cwd: &Path, root: &Path) -> Option<(PathBuf, String)> {
    up_to_root(cwd, root).into_iter().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("go.mod")).ok()?;
        text.lines()
            .find_map(|l| l.trim().strip_prefix("module "))
            .map(|m| (dir.to_path_buf(), m.trim().trim_matches('"').to_string()))
    })
}

/// The most directory entries looked at for a file go named by its base
/// name alone: the search stops, and names no file, past them.
const MAX_SEARCHED_ENTRIES: usize = 200_000;

/// The one file named `name` among the packages of the Go module at `top`
/// whose text holds `word`, looked for as `go build ./...` walks them: not
/// under `vendor` or `testdata`, a directory whose name starts with `.` or
/// `_`, a symbolic link, or another module (a directory with a `go.mod`).
/// None when there is no such file, or more than one. Only a finding that
/// names a file this way asks, so a run that prints none pays nothing.
fn go_file_named(top: &Path, name: &str, word: &str) -> Option<PathBuf> {
    let mut dirs = vec![top.to_path_buf()];
    let mut found = None;
    let mut seen = 0usize;
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_SEARCHED_ENTRIES {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let entry_name = entry.file_name();
            let entry_name = entry_name.to_string_lossy();
            let path = entry.path();
            if kind.is_dir() {
                let skipped = entry_name.starts_with(['.', '_'])
                    || entry_name == "vendor"
                    || entry_name == "testdata"
                    || path.join("go.mod").exists();
                if !skipped {
                    dirs.push(path);
                }
            } else if kind.is_file()
                && entry_name == name
                && std::fs::read_to_string(&path).is_ok_and(|text| text.contains(word))
            {
                if found.is_some() {
                    return None;
                }
                found = Some(path);
            }
        }
    }
    found
}

/// The directory cargo names files from: the nearest workspace root (a
/// `Cargo.toml` with a `[workspace]` table) from the check's directory up
/// to the repository root, else the nearest package's, else the check's.
fn cargo_root(cwd: &Path, root: &Path) -> PathBuf {
    let dirs = up_to_root(cwd, root);
    let declares_workspace = |dir: &Path| {
        std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|manifest| {
            manifest
                .lines()
                .map(str::trim_start)
                .any(|l| l.starts_with("[workspace]") || l.starts_with("[workspace."))
        })
    };
    dirs.iter()
        .copied()
        .find(|dir| declares_workspace(dir))
        .or_else(|| {
            dirs.iter()
                .copied()
                .find(|dir| dir.join("Cargo.toml").is_file())
        })
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The directory of a Go package (`example.com/shop/calc` → `<module
/// dir>/calc`); the check's directory when the module does not own it.
fn go_package_dir(package: &str, module: Option<&(PathBuf, String)>) -> Option<PathBuf> {
    let (dir, path) = module?;
    match package.strip_prefix(path.as_str()) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            Some(dir.join(rest.trim_start_matches('/')))
        }
        _ => None,
    }
}

/// The modules of the `go.work` go used, and the directories it puts
/// modules in by `replace`.
#[derive(Debug, Default, PartialEq, Eq)]
struct GoWorkspace {
    /// Its `use` lines (alone or in a block, relative to its directory):
    /// each directory and the module path its `go.mod` declares.
    modules: Vec<(PathBuf, String)>,
    /// The modules replaced with a directory, in go's precedence: go.work's
    /// own `replace` lines first (they win over a module's, `go help
    /// work`), then those of each listed module's `go.mod`, which go
    /// applies too in a workspace.
    replaced: Vec<(PathBuf, String)>,
}

/// The workspace of the `go.work` go used: the file `GOWORK` names, else
/// the nearest `go.work` from the check's directory up to the root, as go
/// finds it; none under `GOWORK=off`.
fn go_workspace(cwd: &Path, root: &Path, go_work: &GoWork) -> GoWorkspace {
    let found = match go_work {
        GoWork::Off => None,
        GoWork::File(file) => std::fs::read_to_string(file)
            .ok()
            .and_then(|text| Some((file.parent()?, text))),
        GoWork::Auto => up_to_root(cwd, root)
            .into_iter()
            .find_map(|dir| Some((dir, std::fs::read_to_string(dir.join("go.work")).ok()?))),
    };
    let Some((dir, text)) = found else {
        return GoWorkspace::default();
    };
    let mut replaced = replaced_dirs(&text, dir);
    let modules = directives(&text, "use")
        .map(|entry| entry.trim_matches(['"', '`']))
        .filter(|entry| !entry.is_empty())
        .map(|entry| dir.join(entry))
        .filter_map(|module| {
            let text = std::fs::read_to_string(module.join("go.mod")).ok()?;
            let path = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("module "))?
                .trim()
                .trim_matches('"')
                .to_string();
            replaced.extend(replaced_dirs(&text, &module));
            Some((module, path))
        })
        .collect();
    GoWorkspace { modules, replaced }
}

/// The modules the `go.mod` in `dir` replaces with a directory.
fn go_replacements(dir: &Path) -> Vec<(PathBuf, String)> {
    std::fs::read_to_string(dir.join("go.mod"))
        .map(|text| replaced_dirs(&text, dir))
        .unwrap_or_default()
}

/// The modules the `replace` lines of a `go.mod` or `go.work` file's
/// `text` replace with a directory (`replace example.com/shop => ../lib`,
/// alone or in a block, a version on either side or not): each directory,
/// relative to `dir`, the file's own, and the module path it stands for.
/// A replacement by another module's version is in the module cache, no
/// directory of the repository's.
fn replaced_dirs(text: &str, dir: &Path) -> Vec<(PathBuf, String)> {
    let mut replaced = Vec::new();
    for entry in directives(text, "replace") {
        let Some((old, new)) = entry.split_once("=>") else {
            continue;
        };
        let unquote = |word: &str| word.trim_matches(['"', '`']).to_string();
        let (Some(module), Some(path)) = (
            old.split_whitespace().next().map(unquote),
            new.split_whitespace().next().map(unquote),
        ) else {
            continue;
        };
        // go takes a path as a directory when it starts so
        // (`modfile.IsDirectoryPath`).
        if path.starts_with("./") || path.starts_with("../") || path.starts_with('/') {
            replaced.push((dir.join(path), module));
        }
    }
    replaced
}

/// The entries of the `keyword` directives of a `go.mod` or `go.work`
/// file's `text`, comments left out: `use ./lib` gives `./lib`, and each
/// line of a `use ( … )` block gives its own.
fn directives<'a>(text: &'a str, keyword: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let mut in_block = false;
    text.lines().filter_map(move |line| {
        let line = line.split("//").next().unwrap_or(line).trim();
        if in_block {
            in_block = line != ")";
            return in_block.then_some(line);
        }
        let rest = line
            .strip_prefix(keyword)
            .filter(|rest| rest.starts_with([' ', '\t', '(']))?
            .trim_start();
        in_block = rest == "(";
        (!in_block).then_some(rest)
    })
}

/// The directory of a package go built in GOPATH mode (`GO111MODULE=off`):
/// `_/abs/dir`, go's import path for a directory outside any GOPATH, or
/// `example.com/shop/calc` under the `src` directory of a GOPATH the
/// check's directory is in.
fn gopath_package_dir(package: &str, cwd: &Path) -> Option<PathBuf> {
    if let Some(dir) = package.strip_prefix('_').filter(|d| d.starts_with('/')) {
        return Some(PathBuf::from(dir));
    }
    cwd.ancestors()
        .filter(|dir| dir.file_name().is_some_and(|name| name == "src"))
        .map(|src| src.join(package))
        .find(|dir| dir.is_dir())
}

/// The import path of the import spec at `column` (1-based, in bytes) of
/// a Go source line: the first quoted string from there on
/// (`"example.com/shop/calc"`, or after an alias, `c "..."`).
fn imported_path(text: &str, column: u32) -> Option<String> {
    let from = usize::try_from(column).ok()?.checked_sub(1)?;
    let rest = text.get(from..)?;
    let open = rest.find(['"', '`'])?;
    let quote = rest[open..].chars().next()?;
    let inner = &rest[open + 1..];
    let path = &inner[..inner.find(quote)?];
    (!path.is_empty()).then(|| path.to_string())
}

/// A path as a tool printed it (absolute, `./x`, or relative to one of
/// `bases`: the directory the tool names files from, then the check's and
/// each directory above it up to the root) → relative to the repository
/// root when inside it. A relative path is joined to the first base under
/// which it exists, else to the first base. `None` for the repository's
/// root itself (`./`, `.`): a directory, no file a report or the
/// changed-line filter can name.
pub fn relative_to_root(printed: &str, bases: &[&Path], root: &Path) -> Option<String> {
    let printed = printed.strip_prefix("file://").unwrap_or(printed);
    let path = Path::new(printed);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        // Run in a subdirectory, a tool may still print paths from the
        // repository's root (`sub/x.c`, not `x.c`), or from its
        // workspace's.
        bases
            .iter()
            .map(|base| base.join(path))
            .find(|candidate| candidate.exists())
            .or_else(|| bases.first().map(|base| base.join(path)))
            .unwrap_or_else(|| root.join(path))
    };
    let normal = normalize(&absolute);
    match normal.strip_prefix(normalize(root)) {
        Ok(relative) if relative.as_os_str().is_empty() => None,
        Ok(relative) => Some(relative.to_string_lossy().into_owned()),
        Err(_) => Some(normal.to_string_lossy().into_owned()),
    }
}

/// Removes `.` and resolves `..` lexically, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::tests::extract;
    use crate::diagnostics::Severity;

    fn run(parser: &ParserChoice, argv: &[&str], text: &str) -> Extracted {
        let argv: Vec<String> = argv.iter().map(ToString::to_string).collect();
        let root = Path::new("/repo");
        let x = Extractor::new("c", Origin::Build, parser, &argv, root, &root.join("sub"));
        extract(x, text.as_bytes())
    }

    #[test]
    fn an_import_spec_names_its_package_from_gos_column() {
        // go's place of an import spec (`app/app.go:6:2`), in bytes.
        for (text, column, path) in [
            (
                "\t\"example.com/shop/calc\"",
                2,
                Some("example.com/shop/calc"),
            ),
            (
                "\tc \"example.com/shop/calc\" // calc",
                2,
                Some("example.com/shop/calc"),
            ),
            (
                "import `example.com/shop/calc`",
                8,
                Some("example.com/shop/calc"),
            ),
            ("\t\"fmt\"", 9, None),
            ("\t\"\"", 2, None),
        ] {
            assert_eq!(imported_path(text, column).as_deref(), path, "{text}");
        }
    }

    #[test]
    fn a_workspace_lists_its_modules_by_their_go_mod() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("go.work"),
            "go 1.19\n\nuse ./app // the app\nuse (\n\t./lib\n\t\"./gone\"\n)\nuser ./x\n",
        )
        .unwrap();
        for (module, path) in [
            ("app", "example.com/app"),
            ("lib", "example.com/shop"),
            ("x", "x"),
        ] {
            std::fs::create_dir_all(root.join(module)).unwrap();
            std::fs::write(root.join(module).join("go.mod"), format!("module {path}\n")).unwrap();
        }
        let listed = [
            (root.join("./app"), "example.com/app".to_string()),
            (root.join("./lib"), "example.com/shop".to_string()),
        ];
        assert_eq!(
            go_workspace(&root.join("app"), root, &GoWork::Auto).modules,
            listed
        );
        // `GOWORK` chooses: off, or a file of any name elsewhere, whose
        // `use` lines are relative to its own directory.
        let off = GoWork::from_env(Some("off".as_ref()));
        assert_eq!(
            go_workspace(&root.join("app"), root, &off),
            GoWorkspace::default()
        );
        std::fs::create_dir(root.join("ws")).unwrap();
        std::fs::write(root.join("ws/team.work"), "go 1.19\n\nuse ../x\n").unwrap();
        let file = GoWork::from_env(Some(root.join("ws/team.work").as_os_str()));
        assert_eq!(
            go_workspace(&root.join("app"), root, &file).modules,
            [(root.join("ws/../x"), "x".to_string())]
        );
        // go refuses a relative path and stops at a missing file; empty
        // and `auto` are go's default.
        for (value, expected) in [
            ("ws/team.work", GoWork::Off),
            ("", GoWork::Auto),
            ("auto", GoWork::Auto),
        ] {
            assert_eq!(GoWork::from_env(Some(value.as_ref())), expected, "{value}");
        }
        let missing = GoWork::from_env(Some(root.join("ws/go.work").as_os_str()));
        assert_eq!(
            go_workspace(&root.join("app"), root, &missing),
            GoWorkspace::default()
        );
    }

    #[test]
    fn a_workspace_replaces_modules_before_its_modules_go_mod_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("go.work"),
            "go 1.19\n\nuse ./app\n\nreplace (\n\texample.com/shop v0.0.0 => ./lib\n\texample.com/x => example.com/y v1.0.0\n)\n",
        )
        .unwrap();
        std::fs::create_dir(root.join("app")).unwrap();
        std::fs::write(
            root.join("app/go.mod"),
            "module example.com/app\n\nreplace example.com/shop => ../stale\n",
        )
        .unwrap();
        let workspace = go_workspace(&root.join("app"), root, &GoWork::Auto);
        assert_eq!(
            workspace.replaced,
            [
                (root.join("./lib"), "example.com/shop".to_string()),
                (root.join("app/../stale"), "example.com/shop".to_string()),
            ]
        );
    }

    #[test]
    fn a_go_mod_replaces_modules_with_directories_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("go.mod"),
            "module example.com/app\n\nreplace example.com/shop => ../lib // local\nreplace (\n\t\"example.com/a\" v1.0.0 => ./a\n\texample.com/b => example.com/c v1.2.0\n)\nreplace example.com/d => /abs/d\n",
        )
        .unwrap();
        let d = dir.path();
        assert_eq!(
            go_replacements(d),
            [
                (d.join("../lib"), "example.com/shop".to_string()),
                (d.join("./a"), "example.com/a".to_string()),
                (PathBuf::from("/abs/d"), "example.com/d".to_string()),
            ]
        );
        assert_eq!(
            gopath_package_dir("_/abs/calc", d),
            Some(PathBuf::from("/abs/calc"))
        );
        let src = d.join("gopath/src");
        std::fs::create_dir_all(src.join("example.com/shop/calc")).unwrap();
        assert_eq!(
            gopath_package_dir("example.com/shop/calc", &src.join("example.com/shop")),
            Some(src.join("example.com/shop/calc"))
        );
        assert_eq!(gopath_package_dir("example.com/none", &src), None);
    }

    #[test]
    fn a_go_mod_entry_is_found_in_its_directives_block_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("go.mod"),
            "// go 1.10 was the first\nmodule example.com/go\n\ngo 1.22.0\n\nreplace (\n\texample.com/b => ./b\n)\n\nrequire example.com/a v1.0.0 // indirect\nrequire(\n\t\"example.com/b\" v1.2.0\n\texample.com/bc v1.0.0\n)\n\nreplace example.com/a => ./a\n",
        )
        .unwrap();
        let mut lines = columns::SourceLines::new(dir.path());
        let entry = |directive: &'static str, module: Option<&str>| GoModEntry {
            directive,
            module: module.map(str::to_string),
        };
        for (directive, module, line) in [
            // Not the comment, nor the module path that ends in `go`.
            ("go", None, Some(4)),
            ("require", Some("example.com/a"), Some(10)),
            // In the `require(` block, quoted; not in the `replace` block.
            ("require", Some("example.com/b"), Some(12)),
            ("require", Some("example.com/bc"), Some(13)),
            ("replace", Some("example.com/b"), Some(7)),
            ("replace", Some("example.com/a"), Some(16)),
            ("require", Some("example.com/c"), None),
        ] {
            assert_eq!(
                go_mod_line(&mut lines, "go.mod", &entry(directive, module)),
                line,
                "{directive} {module:?}"
            );
        }
        assert_eq!(
            go_mod_line(&mut lines, "missing/go.mod", &entry("go", None)),
            None
        );
    }

    #[test]
    fn an_anchor_finds_whole_words_within_its_keys_value() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pytest.ini"),
            "[pytest]\n# --x is no option here\nminversion = 7\naddopts =\n    -ra\n    --x-y\n    --x=1\ntestpaths = --x\n",
        )
        .unwrap();
        let mut lines = columns::SourceLines::new(dir.path());
        let anchor = |word: &str| Anchor {
            words: vec![word.to_string()],
            key: Some("addopts"),
            ..Anchor::default()
        };
        // Not in the comment above the key, not inside `--x-y`, and not
        // in the next key's value.
        assert_eq!(
            anchored_line(&mut lines, "pytest.ini", &anchor("--x")),
            Some(7)
        );
        assert_eq!(
            anchored_line(&mut lines, "pytest.ini", &anchor("-ra")),
            Some(5)
        );
        assert_eq!(
            anchored_line(&mut lines, "pytest.ini", &anchor("--y")),
            None
        );
        let anywhere = Anchor {
            key: None,
            ..anchor("--x")
        };
        assert_eq!(anchored_line(&mut lines, "pytest.ini", &anywhere), Some(2));
        assert_eq!(anchored_line(&mut lines, "missing.ini", &anywhere), None);
    }

    #[test]
    fn at_most_a_thousand_are_kept_and_the_rest_counted() {
        let mut text = String::new();
        for i in 1..=1500 {
            text.push_str(&format!("a.c:{i}:1: error: broken {i}\n"));
        }
        let found = run(&ParserChoice::Auto, &["gcc"], &text);
        assert_eq!(found.diagnostics.len(), MAX_DIAGNOSTICS_PER_CHECK);
        assert_eq!(found.dropped, 500);
        // Repeats are one finding, and never count as dropped.
        let found = run(
            &ParserChoice::Auto,
            &["gcc"],
            &"a.c:1:1: error: x\n".repeat(3000),
        );
        assert_eq!((found.diagnostics.len(), found.dropped), (1, 0));
    }

    #[test]
    fn paths_become_relative_to_the_root_from_the_checks_directory() {
        let text = "x.c:1:1: error: a\n./y/z.c:2:1: error: b\n../top.c:3:1: error: c\n/repo/abs.c:4:1: error: d\n/elsewhere/e.c:5:1: error: e\n";
        let found = run(&ParserChoice::Auto, &["gcc"], text);
        let files: Vec<&str> = found
            .diagnostics
            .iter()
            .map(|d| d.file.as_deref().unwrap())
            .collect();
        assert_eq!(
            files,
            ["sub/x.c", "sub/y/z.c", "top.c", "abs.c", "/elsewhere/e.c"]
        );
    }

    #[test]
    fn a_workspace_member_or_a_module_package_names_files_from_its_root() {
        // Real recordings: `cargo test` run in `ws/crates/alpha`, a member
        // of the workspace `ws/`, and `go test ./...` run in
        // `backend/calc`, a package of the module `backend/` (the root's
        // go.mod is another module's).
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diagnostics");
        for (path, fixture) in [
            ("ws/Cargo.toml", "cargo/ws-Cargo.toml.txt"),
            ("ws/crates/alpha/Cargo.toml", "cargo/alpha-Cargo.toml.txt"),
            ("ws/crates/alpha/src/lib.rs", "cargo/alpha-lib.rs.txt"),
            ("go.mod", "go/go.mod.txt"),
            ("backend/go.mod", "go/go.mod.txt"),
            ("backend/calc/calc.go", "go/calc.go.txt"),
            ("backend/calc/inner/inner_test.go", "go/inner_test.go.txt"),
        ] {
            let target = root.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(fixtures.join(fixture), target).unwrap();
        }
        let files = |command: &[&str], cwd: &str, output: &str| {
            let argv: Vec<String> = command.iter().map(ToString::to_string).collect();
            let x = Extractor::new(
                "c",
                Origin::Test,
                &ParserChoice::Auto,
                &argv,
                &root,
                &root.join(cwd),
            );
            let found = extract(x, &std::fs::read(fixtures.join(output)).unwrap());
            found
                .diagnostics
                .iter()
                .map(Diagnostic::location)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            files(
                &["cargo", "test"],
                "ws/crates/alpha",
                "cargo/cargo-test-member.txt"
            ),
            [
                "ws/crates/alpha/src/lib.rs:2:9",
                "ws/crates/alpha/src/lib.rs:10:9"
            ]
        );
        assert_eq!(
            files(
                &["go", "test", "./..."],
                "backend/calc",
                "go/go-test-subdir.txt"
            ),
            ["backend/calc/inner/inner_test.go:6"]
        );
        // Without the manifests, the directory above the check's under
        // which the file exists.
        std::fs::remove_file(root.join("ws/Cargo.toml")).unwrap();
        std::fs::remove_file(root.join("ws/crates/alpha/Cargo.toml")).unwrap();
        assert_eq!(
            files(
                &["cargo", "test"],
                "ws/crates/alpha",
                "cargo/cargo-test-member.txt"
            ),
            [
                "ws/crates/alpha/src/lib.rs:2:9",
                "ws/crates/alpha/src/lib.rs:10:9"
            ]
        );
    }

    #[test]
    fn a_custom_regex_reads_its_named_groups() {
        let regex = regex::Regex::new(
            r"^(?P<severity>\w+) in (?P<file>\S+) at (?P<line>\d+),(?P<col>\d+) \[(?P<code>\w+)\]: (?P<message>.+)$",
        )
        .unwrap();
        let found = run(
            &ParserChoice::Regex(regex),
            &["lint.sh"],
            "warning in src/a.rs at 3,9 [W1]: too long\nnoise\n",
        );
        let d = &found.diagnostics[0];
        assert_eq!(found.diagnostics.len(), 1);
        assert_eq!(d.location(), "sub/src/a.rs:3:9");
        assert_eq!(
            (d.severity, d.code.as_deref()),
            (Severity::Warning, Some("W1"))
        );
        assert_eq!(d.message, "too long");
        assert_eq!(d.log_range, Some((0, 41)));
    }

    #[test]
    fn a_brace_that_opens_no_json_is_read_as_text_after_all() {
        // A test printing a struct: the lines it swallowed while looking
        // like JSON are still read.
        let text = "{\n  field: 1,\nsrc/a.c:1:2: error: after the brace\n";
        let found = run(&ParserChoice::Auto, &["make"], text);
        assert_eq!(found.diagnostics.len(), 1, "{:?}", found.diagnostics);
        assert_eq!(found.diagnostics[0].message, "after the brace");
    }

    #[test]
    fn json_reports_run_together_without_a_newline_are_each_read() {
        // ruff's JSON ends without a newline: two runs of it (`make lint`
        // over two directories, or two batches of `{files}`) meet on one
        // line, `][`. Real recordings of ruff 0.17.6, one after the other.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diagnostics/python");
        let first = std::fs::read(fixtures.join("ruff-ci.json")).unwrap();
        let second = std::fs::read(fixtures.join("ruff-all.json")).unwrap();
        assert!(
            !first.ends_with(b"\n"),
            "the recording ends as ruff ends it"
        );
        let alone = |bytes: &[u8]| {
            let found = run(
                &ParserChoice::Auto,
                &["make", "lint"],
                &String::from_utf8_lossy(bytes),
            );
            found.diagnostics.len()
        };
        let (a, b) = (alone(&first), alone(&second));
        assert!(a > 0 && b > 0);
        for glue in [&b""[..], b"  ", b"\x1b[0m"] {
            let both = [&first[..], glue, &second[..], glue, &first[..]].concat();
            let found = run(
                &ParserChoice::Auto,
                &["make", "lint"],
                &String::from_utf8_lossy(&both),
            );
            assert_eq!(found.diagnostics.len(), a + b, "{glue:?}");
            assert_eq!(found.parser, Some("python"));
        }
        // A JSON line that is one document and then some text is still
        // read as text (`}x`), as before.
        let found = run(
            &ParserChoice::Auto,
            &["make"],
            "{\n  field: 1,\n}x\nsrc/a.c:1:2: error: y\n",
        );
        assert_eq!(found.diagnostics.len(), 1);
    }

    /// Adds a whole line to `document`, as `Extractor::line` does when no
    /// second document opens on it; whether the document closed.
    fn feed(document: &mut Document, line: &str, at: &Range<u64>) -> bool {
        document.record(line, at);
        document.scan(line);
        document.closed()
    }

    #[test]
    fn a_document_of_short_lines_holds_little_more_than_its_text() {
        // `[` then a million empty lines: each line costs a byte besides
        // its text, not a 24-byte table entry.
        let mut document = Document::default();
        let mut offset = 0;
        for line in std::iter::once("[").chain(std::iter::repeat_n("", 1_000_000)) {
            let end = offset + line.len() as u64;
            assert!(!feed(&mut document, line, &(offset..end)));
            offset = end + 1;
        }
        assert_eq!(document.text.len(), 1_000_002);
        assert!(
            document.held() <= 4 * document.text.len(),
            "{} bytes held for {} of text",
            document.held(),
            document.text.len()
        );
        assert_eq!(document.range(), 0..1_000_001);
    }

    #[test]
    fn a_document_read_as_text_gives_each_line_its_range_in_the_log() {
        // As the runner feeds them: colours stripped, trailing spaces and
        // `\r` trimmed, lines past the length limit skipped, and a decoded
        // line longer than its bytes.
        let fed: Vec<(&str, Range<u64>)> = vec![
            ("{", 7..8),
            ("  a: 1,", 9..25),
            ("", 26..27),
            ("src/a.c:1:2: error: x", 28..228),
            ("\u{fffd}b", 400..402),
            ("}x", 403..405),
            ("", 1 << 40..(1 << 40) + 3),
        ];
        let mut document = Document::default();
        for (line, at) in &fed {
            feed(&mut document, line, at);
        }
        let read: Vec<(&str, Range<u64>)> = document.lines().collect();
        assert_eq!(read, fed);
        assert_eq!(document.range(), 7..(1 << 40) + 3);
    }

    #[test]
    fn when_the_program_says_nothing_the_output_decides() {
        let cargo = "error[E0308]: mismatched types\n --> src/lib.rs:7:18\n\n";
        let found = run(&ParserChoice::Auto, &["make", "check"], cargo);
        assert_eq!(found.parser, Some("cargo"));
        assert_eq!(found.diagnostics[0].tool, "cargo");
        assert_eq!(found.diagnostics[0].code.as_deref(), Some("E0308"));
        let tsc =
            "src/a.ts(5,7): error TS2322: Type 'number' is not assignable to type 'string'.\n";
        let found = run(&ParserChoice::Auto, &["npm", "run", "check"], tsc);
        assert_eq!(found.parser, Some("tsc"));
        // A compiler-shaped line is nobody's exception.
        let found = run(&ParserChoice::Auto, &["sh"], "a.c:1: error: broken\n");
        assert_eq!(found.parser, Some("generic"));
        let d = &found.diagnostics[0];
        assert_eq!((d.code.as_deref(), d.test.as_deref()), (None, None));
        // About a Python file, it is mypy's.
        let found = run(
            &ParserChoice::Auto,
            &["sh"],
            "a.py:1: error: broken  [misc]\n",
        );
        assert_eq!(found.parser, Some("python"));
        assert_eq!(found.diagnostics[0].tool, "mypy");
        // `none` reads nothing.
        let found = run(&ParserChoice::Named("none".into()), &["gcc"], cargo);
        assert!(found.diagnostics.is_empty());
    }
}
