//! Text as the renderers show it: a finding's message, never empty.
//! Decides nothing about what is shown, only how it reads.

use std::borrow::Cow;

use crate::diagnostics::Diagnostic;

/// The message of `d`, or, when the tool gave none (an empty regex group,
/// a verifier finding with `"message": ""`), a sentence that says so: no
/// report may show an empty finding (GitHub code scanning rejects a result
/// without text, and an empty line explains nothing).
pub fn message(d: &Diagnostic) -> Cow<'_, str> {
    if !d.message.trim().is_empty() {
        return Cow::Borrowed(&d.message);
    }
    let who = if d.check.is_empty() {
        let tool = if d.tool.is_empty() {
            "phasegate"
        } else {
            &d.tool
        };
        format!("`{tool}`")
    } else {
        format!("check `{}`", d.check)
    };
    let code = d
        .code
        .as_deref()
        .map_or(String::new(), |c| format!(" (code `{c}`)"));
    Cow::Owned(format!("{who} reported a finding with no message{code}"))
}

/// The first line of `d`'s message that says something (see `message`),
/// trimmed at its end.
pub fn first_line(d: &Diagnostic) -> Cow<'_, str> {
    match message(d) {
        Cow::Borrowed(text) => Cow::Borrowed(
            text.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim_end(),
        ),
        Cow::Owned(text) => Cow::Owned(text),
    }
}

/// `text` with every control character except those in `keep` written as
/// a visible escape (`\x08`, `\x7f`, `\u{9b}`), and the bidirectional
/// overrides too: on a terminal or in a CI log a backspace or a carriage
/// return rewrites what came before it, a bell rings, U+009B starts a
/// terminal command as ESC [ does, and U+202E shows text backwards. The
/// JSON verdict keeps the text as the tool gave it.
pub fn visible<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    let hidden = |c: char| !keep.contains(&c) && obeyed(c);
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !hidden(c) {
            out.push(c);
        } else if c.is_ascii() {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

/// Whether a terminal or a viewer acts on `c` rather than showing it: a
/// control character, or a bidirectional override.
pub fn obeyed(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` for one line of a terminal: control characters visible, a tab
/// kept.
pub fn line(text: &str) -> Cow<'_, str> {
    visible(text, &['\t'])
}
