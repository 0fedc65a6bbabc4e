//! The `Diagnostic` model: one located finding from a tool's output.

use serde::Serialize;

use crate::config::Origin;

/// How serious a finding is, in the tool's own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
    Info,
}

impl Severity {
    /// Reads a tool's severity word; unknown words are errors, the
    /// conservative reading.
    pub fn from_word(word: &str) -> Severity {
        match word.trim().to_ascii_lowercase().as_str() {
            "warning" | "warn" | "w" => Severity::Warning,
            "note" | "help" | "hint" => Severity::Note,
            "info" | "information" | "i" => Severity::Info,
            _ => Severity::Error,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Info => "info",
        }
    }
}

/// One finding, located in the repository where possible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The check that produced it.
    pub check: String,
    pub origin: Origin,
    /// The tool that printed it (`cargo`, `verifier`, `phasegate`).
    pub tool: String,
    /// Relative to the repository root; `None` when the tool named no file.
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based; `None` when the tool printed none.
    pub column: Option<u32>,
    pub severity: Severity,
    pub code: Option<String>,
    pub message: String,
}
