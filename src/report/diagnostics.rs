//! `phasegate diagnostics parse` output.

use std::io::{self, Write};

use crate::diagnostics::{code_apart, shorten, Diagnostic, MAX_LINE_CHARS};

/// `{"diagnostics": [...], "dropped": N}`.
pub fn render_json(
    diagnostics: &[Diagnostic],
    dropped: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    let document = serde_json::json!({ "diagnostics": diagnostics, "dropped": dropped });
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::other)?;
    writeln!(out)
}

/// `file:line:col severity code message`, one per line, each with its
/// source line drawn by miette below it when the file could be read.
pub fn render_human(
    diagnostics: &[Diagnostic],
    dropped: usize,
    out: &mut dyn Write,
    color: bool,
) -> io::Result<()> {
    for d in diagnostics {
        let file = d.file.as_deref().map(super::text::line);
        let place = match (&file, d.line, d.column) {
            (Some(f), Some(l), Some(c)) => format!("{f}:{l}:{c} "),
            (Some(f), Some(l), None) => format!("{f}:{l} "),
            (Some(f), None, _) => format!("{f} "),
            _ => String::new(),
        };
        let code = code_apart(d)
            .map(|c| format!(" {}", super::text::line(c)))
            .unwrap_or_default();
        writeln!(
            out,
            "{place}{}{code} {}",
            d.severity.as_str(),
            super::text::line(&shorten(&super::text::first_line(d), MAX_LINE_CHARS))
        )?;
        out.write_all(super::snippet::render(d, " ", color).as_bytes())?;
    }
    if dropped > 0 {
        writeln!(out, "… and {dropped} more over the limit")?;
    }
    // Nothing printed would not say whether the output was read at all.
    if diagnostics.is_empty() && dropped == 0 {
        writeln!(
            out,
            "no diagnostics found: no parser recognised a finding in this output (name one with `--parser`)"
        )?;
    }
    Ok(())
}
