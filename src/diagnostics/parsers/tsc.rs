//! The TypeScript compiler, plain (`--pretty false`, `file(line,col)`) and
//! pretty (`file:line:col - error`, the default on a terminal). tsc counts
//! columns in UTF-16 units.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b" TS"));

use super::{number, Found, Grammar, Out};
use crate::diagnostics::{ColumnUnit, Severity};

/// More lines of one message kept (tsc elaborates type errors below).
const MAX_BODY_LINES: usize = 12;

/// `src/a.ts(5,7): error TS2322: message`. The file may hold parentheses
/// of its own (a Next.js route group, `app/(shop)/page.tsx`): it ends at
/// the first `(line,col): ` that a severity and a code follow.
pub(super) static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>\S.*?)\((?P<line>\d+),(?P<col>\d+)\): (?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.+)$")
        .expect("the tsc regex is valid")
});

/// `src/a.ts:5:7 - error TS2322: message`.
pub(super) static PRETTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+) - (?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.+)$")
        .expect("the tsc pretty regex is valid")
});

#[derive(Debug, Default)]
pub struct Tsc {
    /// An error whose indented elaboration may follow.
    open: Option<(Found, usize)>,
}

impl Grammar for Tsc {
    fn name(&self) -> &'static str {
        "tsc"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            anywhere: b"T",
            ..super::Triggers::default()
        })
    }

    fn busy(&self) -> bool {
        self.open.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy() || NEEDLE.find(line).is_some()
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if let Some((found, body)) = self.open.as_mut() {
            if line.starts_with("  ") && !line.trim().is_empty() {
                if *body < MAX_BODY_LINES {
                    found.message.push('\n');
                    found.message.push_str(line.trim());
                    *body += 1;
                }
                found.range.end = at.end;
                return;
            }
            if let Some((done, _)) = self.open.take() {
                out.push(done);
            }
        }
        for (pattern, dialect) in [(&*PLAIN, "plain"), (&*PRETTY, "pretty")] {
            if let Some(c) = super::caps(pattern, line) {
                let found = Found::new(dialect, Severity::from_word(&c["severity"]), &c["message"])
                    .at(&c["file"], number(&c["line"]), number(&c["col"]))
                    .code(Some(c["code"].to_string()))
                    .unit(ColumnUnit::Utf16)
                    .range(at);
                // Both formats print a chained message's elaboration
                // indented under its first line; pretty output then leaves
                // a blank line, which ends it before the code frame and the
                // related information (which plain output never prints).
                self.open = Some((found, 0));
                return;
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some((done, _)) = self.open.take() {
            out.push(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{recorded, recorded_in_repo};

    #[test]
    fn a_route_groups_parentheses_are_part_of_the_file() {
        // TypeScript 7.0.2 on a Next.js-style `app/(marketing)/...` and
        // `app/[id]/...`: plain output names the file right before its
        // `(line,col)`, pretty output before `:line:col`.
        let sources = [
            (
                "app/(marketing)/about/page.ts",
                "tsc/groups-about-page.ts.txt",
            ),
            ("app/[id]/page.ts", "tsc/groups-id-page.ts.txt"),
        ];
        for format in ["plain", "pretty"] {
            let found = recorded_in_repo(
                &format!("npx tsc --noEmit --pretty {}", format == "pretty"),
                &format!("tsc/tsc7-groups-{format}.txt"),
                &sources,
            );
            let places: Vec<String> = found
                .diagnostics
                .iter()
                .map(crate::diagnostics::Diagnostic::location)
                .collect();
            assert_eq!(
                places,
                ["app/(marketing)/about/page.ts:2:3", "app/[id]/page.ts:3:14"],
                "{format}"
            );
            assert_eq!(
                found.diagnostics[0].message,
                "Type 'number' is not assignable to type 'string'."
            );
        }
    }

    #[test]
    fn a_pretty_chained_message_keeps_its_chain_as_the_plain_one_does() {
        // TypeScript 7.0.2 and 5.9.3, `--pretty` and `--pretty false` over
        // the same two errors: one chained three lines deep, one with
        // related information (printed in pretty output only).
        for (version, recorded_in) in [("7", "/tmp/s6/js-rec/tsc7"), ("5", "/tmp/s6/js-rec/tsc5")] {
            let read = |format: &str| {
                let path = format!("tsc/tsc{version}-{format}.txt");
                recorded("tsc", &path, Some(recorded_in))
                    .diagnostics
                    .iter()
                    .map(|d| (d.location(), d.message.clone()))
                    .collect::<Vec<_>>()
            };
            let plain = read("plain");
            assert_eq!(plain, read("pretty"), "TypeScript {version}");
            assert_eq!(
                plain.first().map(|(_, m)| m.lines().count()),
                Some(3),
                "TypeScript {version}"
            );
        }
    }
}
