//! black's `--check`: `would reformat <file>` for each file it would
//! format otherwise, and a file it cannot parse, as black 24 and later say
//! it (`error: cannot parse: <file>:1:11`, a code frame, then the parser's
//! `ParseError: bad input`) or as earlier versions did (`error: cannot
//! format <file>: Cannot parse: 1:11: def broken(:`).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{caps, number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::Severity;

static WOULD_REFORMAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^would reformat (?P<file>.+)$").expect("the black reformat regex is valid")
});

/// black 24 and later: the place on the line, the reason further down.
static CANNOT_PARSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^error: cannot parse: (?P<file>.+):(?P<line>\d+):(?P<col>\d+)$")
        .expect("the black parse error regex is valid")
});

/// Earlier versions, and any file black fails on: the reason on the line,
/// with the place when it could not parse the file.
static CANNOT_FORMAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^error: cannot format (?P<file>.+?): (?P<message>.+)$")
        .expect("the black format error regex is valid")
});

/// `Cannot parse: 1:11: def broken(:`, or `Cannot parse for target
/// version Python 3.13: 1:11: ...`.
static PARSE_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Cannot parse(?: for target version [^:]+)?: (?P<line>\d+):(?P<col>\d+): ")
        .expect("the black parse place regex is valid")
});

/// The reason under a parse error's code frame: `ParseError: bad input`.
static REASON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[A-Z][A-Za-z]*Error): (?P<reason>.+)$")
        .expect("the black reason regex is valid")
});

/// Lines a parse error's reason may come after (its code frame).
const MAX_FRAME_LINES: usize = 4;

#[derive(Debug, Default)]
pub struct Black {
    /// A parse error waiting for its reason, and the lines seen since.
    open: Option<(Found, usize)>,
}

impl Black {
    fn close(&mut self, out: &mut Out) {
        if let Some((found, _)) = self.open.take() {
            out.push(found);
        }
    }
}

impl Grammar for Black {
    fn name(&self) -> &'static str {
        "black"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"we",
            indented: b"",
            anywhere: b"",
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy() || line.starts_with(b"would reformat ") || line.starts_with(b"error: cannot ")
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some((found, seen)) = &mut self.open {
            if let Some(c) = caps(&REASON, line) {
                found.message = format!("cannot parse: {}", &c["reason"]);
                found.range.end = at.end;
                self.close(out);
                return;
            }
            *seen += 1;
            if *seen <= MAX_FRAME_LINES
                && !WOULD_REFORMAT.is_match(line)
                && !line.starts_with("error: ")
            {
                found.range.end = at.end;
                return;
            }
            self.close(out);
        }
        if let Some(c) = caps(&WOULD_REFORMAT, line) {
            out.push(
                Found::new(
                    "check",
                    Severity::Error,
                    super::unformatted("black", "black"),
                )
                .at(&c["file"], None, None)
                .code(Some("black".to_string()))
                .origin(Origin::Lint)
                .range(at),
            );
        } else if let Some(c) = caps(&CANNOT_PARSE, line) {
            let found = Found::new("check", Severity::Error, "cannot parse")
                .at(&c["file"], number(&c["line"]), number(&c["col"]))
                .origin(Origin::Lint)
                .range(at);
            self.open = Some((found, 0));
        } else if let Some(c) = caps(&CANNOT_FORMAT, line) {
            let message = &c["message"];
            let place = caps(&PARSE_PLACE, message);
            out.push(
                Found::new("check", Severity::Error, message)
                    .at(
                        &c["file"],
                        place.as_ref().and_then(|p| number(&p["line"])),
                        place.as_ref().and_then(|p| number(&p["col"])),
                    )
                    .origin(Origin::Lint)
                    .range(at),
            );
        }
    }

    fn finish(&mut self, out: &mut Out) {
        self.close(out);
    }
}
