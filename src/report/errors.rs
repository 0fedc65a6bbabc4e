//! Configuration and usage errors drawn with miette: the offending span of
//! the file, a label and a `help:` line.

use std::io::Write;

/// Draws `diagnostic` on `out`; colour only when asked. A diagnostic that
/// gathers several (`related`) is drawn as each of them in turn.
pub fn render_diagnostic(diagnostic: &dyn miette::Diagnostic, out: &mut dyn Write, color: bool) {
    if let Some(related) = diagnostic.related() {
        let related: Vec<&dyn miette::Diagnostic> = related.collect();
        if !related.is_empty() {
            for one in related {
                render_one(one, out, color);
            }
            return;
        }
    }
    render_one(diagnostic, out, color);
}

fn render_one(diagnostic: &dyn miette::Diagnostic, out: &mut dyn Write, color: bool) {
    let plain = draw(diagnostic, false);
    // The line an error is about can hold what a terminal obeys (an
    // escape in `phasegate.toml` or a handoff document, the very thing
    // the error may be about): it clears the screen, hides the rest of
    // the line or sets the window's title, and the person never sees
    // the character the error points at. It is shown as an escape
    // (`\x1b`) instead, and the drawing goes without colour, whose own
    // escapes could not be told from the file's.
    let hidden = plain
        .chars()
        .any(|c| !matches!(c, '\n' | '\t') && super::text::obeyed(c));
    let text = if hidden {
        super::text::visible(&plain, &['\n', '\t']).into_owned()
    } else if color {
        draw(diagnostic, true)
    } else {
        plain
    };
    // Nothing sensible remains to be done when stderr is gone.
    let _ = out.write_all(text.as_bytes());
}

/// `diagnostic` as miette draws it, in colour or not.
fn draw(diagnostic: &dyn miette::Diagnostic, color: bool) -> String {
    let theme = if color {
        miette::GraphicalTheme::unicode()
    } else {
        miette::GraphicalTheme::unicode_nocolor()
    };
    let handler = miette::GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut text = String::new();
    if handler.render_report(&mut text, diagnostic).is_err() {
        text = format!("error: {diagnostic}\n");
    }
    text
}
