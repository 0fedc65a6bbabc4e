//! Prettier's `--check`: `[warn] path` for each file it would format
//! otherwise, `[error] path: SyntaxError: message (line:col)` for a file it
//! cannot parse (the code frame under it is passed over), and a closing
//! line that is no file (`[warn] Code style issues found in 2 files. Run
//! Prettier with --write to fix.`).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{caps, group_number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::{ColumnUnit, Severity};

/// A file Prettier would format: a path with an extension, no word of a
/// sentence.
static UNFORMATTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[warn\] (?P<file>[^\s\[][^:]*?\.[A-Za-z0-9]+)$")
        .expect("the prettier warn regex is valid")
});

/// A file Prettier could not parse: `[error] src/a.js: SyntaxError: ...
/// (2:10)`. A code frame line starts with blanks or `>` after `[error] `.
static UNPARSED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[error\] (?P<file>[^\s>][^:]*?): (?P<message>.+?)(?: \((?P<line>\d+):(?P<col>\d+)\))?$",
    )
    .expect("the prettier error regex is valid")
});

#[derive(Debug, Default)]
pub struct Prettier;

impl Grammar for Prettier {
    fn name(&self) -> &'static str {
        "prettier"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"[",
            indented: b"",
            anywhere: b"",
        })
    }

    fn wants(&self, line: &[u8]) -> bool {
        line.starts_with(b"[warn] ") || line.starts_with(b"[error] ")
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some(c) = caps(&UNFORMATTED, line) {
            out.push(
                Found::new(
                    "check",
                    Severity::Warning,
                    super::unformatted("Prettier", "prettier --write"),
                )
                .at(&c["file"], None, None)
                .code(Some("format".to_string()))
                .origin(Origin::Lint)
                .range(at),
            );
        } else if let Some(c) = caps(&UNPARSED, line) {
            out.push(
                Found::new("check", Severity::Error, &c["message"])
                    .at(
                        &c["file"],
                        group_number(&c, "line"),
                        group_number(&c, "col"),
                    )
                    .origin(Origin::Lint)
                    .unit(ColumnUnit::Utf16)
                    .range(at),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_and_code_frames_are_no_files() {
        let mut prettier = Prettier;
        let mut out = Out::default();
        for line in [
            "[warn] Code style issues found in 2 files. Run Prettier with --write to fix.",
            "[warn] Code style issues found in the above file. Run Prettier with --write to fix.",
            "[warn] Ignored unknown option { semi: false }.",
            "[error]   1 | function broken( {",
            "[error] > 2 |   return 1",
            "[error]     |          ^",
            "[warn] src/my file.ts",
            "[error] src/b.css: CssSyntaxError: Unknown word (3:1)",
        ] {
            prettier.line(line, &(0..1), &mut out);
        }
        let found: Vec<_> = out
            .found
            .iter()
            .map(|f| (f.file.as_deref(), f.line, f.column, f.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    Some("src/my file.ts"),
                    None,
                    None,
                    "not formatted as Prettier formats it (`prettier --write` does)"
                ),
                (
                    Some("src/b.css"),
                    Some(3),
                    Some(1),
                    "CssSyntaxError: Unknown word"
                ),
            ]
        );
    }
}
