//! Turning tool output into `Diagnostic`s: the model, the streaming
//! extractor, one grammar per tool family, column units, the changed-line
//! filter and the root-cause summary.

mod columns;
mod diagnostic;
mod extractor;
mod filter;
mod own_code;
mod parsers;
mod summary;
#[cfg(test)]
mod tests;
mod workspace;

pub use diagnostic::*;
pub use extractor::*;
pub use filter::*;
pub use own_code::OwnCode;
pub use parsers::PARSER_NAMES;
pub use summary::*;

/// The part of an output line that is read for diagnostics, if any is
/// `wanted`. A progress display rewrites its line with `\r`, and a terminal
/// shows the text after the last one: that part, unless `wanted` turns it
/// down and an earlier part is wanted (a message that holds a `\r` of its
/// own). `wanted` is asked once for a line without `\r`.
pub fn shown_part(line: &[u8], wanted: impl Fn(&[u8]) -> bool) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if memchr::memchr(b'\r', line).is_none() {
        return wanted(line).then_some(line);
    }
    line.rsplit(|&b| b == b'\r').find(|part| wanted(part))
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
