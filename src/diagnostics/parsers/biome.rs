//! Biome's `lint`, `check`, `format` and `ci` in its default layout: a
//! header `src/a.js:3:7 lint/suspicious/noDoubleEquals  FIXABLE  ━━━`
//! (no place for a whole file: `src/a.js format ━━━`), then the message
//! marked `×` (an error), `!` (a warning) or `i` (information), then code
//! frames and advice, which are passed over. The closing `check ━━━` (a
//! command's name, no file) is no finding. Columns count characters.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{caps, group_number, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::Severity;

/// A diagnostic's header. The category is a word (`format`, `parse`) or a
/// rule's path (`lint/style/useConst`); the file may hold spaces.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>\S.*?)(?::(?P<line>\d+):(?P<col>\d+))? (?P<category>[a-z][A-Za-z0-9/]*)(?: +[A-Z]+)* +━+$")
        .expect("the biome header regex is valid")
});

/// Lines between a header and its message (a blank one, in practice).
const MAX_LINES_TO_MESSAGE: usize = 3;

#[derive(Debug, Default)]
pub struct Biome {
    /// A header read, waiting for its message, and the lines seen since.
    open: Option<(Found, usize)>,
}

impl Grammar for Biome {
    fn name(&self) -> &'static str {
        "biome"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            first: b"",
            indented: b"",
            // `━`'s first byte.
            anywhere: b"\xe2",
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy() || line.ends_with("━".as_bytes())
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some((_, seen)) = &mut self.open {
            let trimmed = line.trim_start();
            let marked = [
                ("× ", Severity::Error),
                ("! ", Severity::Warning),
                ("i ", Severity::Info),
            ]
            .into_iter()
            .find_map(|(mark, severity)| Some((trimmed.strip_prefix(mark)?, severity)));
            if let Some((message, severity)) = marked {
                if let Some((mut found, _)) = self.open.take() {
                    found.severity = severity;
                    found.range.end = at.end;
                    if found.code.as_deref() == Some("format")
                        && message.starts_with("Formatter would have printed")
                    {
                        found.message = super::unformatted("Biome", "biome format --write");
                    } else {
                        found.message = message.trim().to_string();
                    }
                    out.push(found);
                }
                return;
            }
            *seen += 1;
            if *seen <= MAX_LINES_TO_MESSAGE && !HEADER.is_match(line) {
                return;
            }
            // A header with no message: said as it is.
            if let Some((found, _)) = self.open.take() {
                out.push(found);
            }
        }
        if let Some(c) = caps(&HEADER, line) {
            let category = &c["category"];
            let found = Found::new("pretty", Severity::Error, category)
                .at(
                    &c["file"],
                    group_number(&c, "line"),
                    group_number(&c, "col"),
                )
                .code(Some(category.to_string()))
                .origin(Origin::Lint)
                .range(at);
            self.open = Some((found, 0));
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some((found, _)) = self.open.take() {
            out.push(found);
        }
    }
}
