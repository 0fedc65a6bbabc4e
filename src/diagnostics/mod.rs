//! Turning tool output into `Diagnostic`s: the model, the streaming
//! extractor, one grammar per tool family, column units, the changed-line
//! filter and the root-cause summary.

mod columns;
mod diagnostic;
mod extractor;
mod filter;
mod parsers;
mod summary;
#[cfg(test)]
mod tests;

pub use diagnostic::*;
pub use extractor::*;
pub use filter::*;
pub use parsers::PARSER_NAMES;
pub use summary::*;

/// The part of an output line that is read for diagnostics. A progress
/// display rewrites its line with `\r`, and a terminal shows the text after
/// the last one: that part, unless `wanted` turns it down and an earlier
/// part is wanted (a message that holds a `\r` of its own).
pub fn shown_part(line: &[u8], wanted: impl Fn(&[u8]) -> bool) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut parts = line.rsplit(|&b| b == b'\r');
    let last = parts.next().unwrap_or(line);
    if wanted(last) {
        return last;
    }
    parts.find(|part| wanted(part)).unwrap_or(last)
}

/// Removes ANSI escape sequences (colours, cursor moves) from `text`.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // CSI: parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                // OSC: up to BEL or ESC \.
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' {
                        chars.next_if_eq(&'\\');
                        break;
                    }
                }
            }
            // Character set designations: `ESC ( B`.
            Some('(' | ')' | '*' | '+' | '-' | '.' | '/') => {
                chars.next();
                chars.next();
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}
