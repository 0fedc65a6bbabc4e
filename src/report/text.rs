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
