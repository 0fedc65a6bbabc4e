//! The JSON verdict: exactly one `phasegate/verdict/v1` document; and the
//! error document of the other commands.

use std::io::{self, Write};

use crate::gate::Verdict;

/// Writes `verdict` as one pretty-printed JSON document and a newline.
pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, verdict).map_err(io::Error::other)?;
    writeln!(out)
}

/// The error of a command other than `run` under `--format json` (which
/// has no verdict to carry it): `{"error": message}`.
pub fn render_error(message: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", serde_json::json!({ "error": message }))
}
