//! The JSON verdict: exactly one `phasegate/verdict/v1` document.

use std::io::{self, Write};

use crate::gate::Verdict;

/// Writes `verdict` as one pretty-printed JSON document and a newline.
pub fn render(verdict: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, verdict).map_err(io::Error::other)?;
    writeln!(out)
}
