//! `gofmt -l`: the files gofmt would format otherwise, one path a line,
//! and a file it cannot parse as `file:line:col: message`. gofmt exits 0
//! when it only lists files, so its findings fail the check: a check of
//! `gofmt -l .` passes only when nothing is listed. Chosen by the command
//! alone (a list of paths says nothing of the tool that printed it).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{caps, number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::Severity;

/// A file gofmt cannot parse: `pkg/x.go:3:14: expected ')', found '{'`.
static PARSE_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>.+?\.go):(?P<line>\d+):(?P<col>\d+): (?P<message>.+)$")
        .expect("the gofmt error regex is valid")
});

#[derive(Debug, Default)]
pub struct Gofmt;

impl Grammar for Gofmt {
    fn name(&self) -> &'static str {
        "gofmt"
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        out.errors_fail = true;
        // Go reads `.go` files only, in that case: a listed file.
        if std::path::Path::new(line)
            .extension()
            .is_some_and(|e| e == "go")
        {
            out.push(
                Found::new(
                    "list",
                    Severity::Error,
                    super::unformatted("gofmt", "gofmt -w"),
                )
                .at(line, None, None)
                .code(Some("gofmt".to_string()))
                .origin(Origin::Lint)
                .range(at),
            );
        } else if let Some(c) = caps(&PARSE_ERROR, line) {
            out.push(
                Found::new("list", Severity::Error, &c["message"])
                    .at(&c["file"], number(&c["line"]), number(&c["col"]))
                    .origin(Origin::Lint)
                    .range(at),
            );
        }
    }
}
