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
