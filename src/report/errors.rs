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
    // Nothing sensible remains to be done when stderr is gone.
    let _ = out.write_all(text.as_bytes());
}
