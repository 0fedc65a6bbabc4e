//! The live progress line drawn on a terminal while checks run.

use std::io::Write;

use unicode_width::UnicodeWidthChar;

use crate::runner::RunEvent;

/// The width assumed when the terminal's is not known: the traditional
/// 80 columns.
const DEFAULT_COLUMNS: usize = 80;

/// Redraws one status line on `out` (standard error, a terminal).
pub struct Progress<W: Write> {
    out: W,
    total: usize,
    done: usize,
    running: Vec<String>,
    columns: usize,
}

impl<W: Write> Progress<W> {
    pub fn new(out: W, total: usize) -> Self {
        Progress {
            out,
            total,
            done: 0,
            running: Vec::new(),
            columns: DEFAULT_COLUMNS,
        }
    }

    /// The terminal's width in columns (`COLUMNS`, or the terminal's own
    /// size) when it is known; 80 otherwise.
    #[must_use]
    pub fn with_width(mut self, columns: Option<usize>) -> Self {
        if let Some(columns) = columns.filter(|c| *c > 0) {
            self.columns = columns;
        }
        self
    }

    /// Takes one runner event and redraws the line.
    pub fn event(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Started { name } => self.running.push(name.clone()),
            RunEvent::Finished { name, .. } => {
                self.running.retain(|n| n != name);
                self.done += 1;
            }
        }
        let doing = if self.running.is_empty() {
            "done".to_string()
        } else {
            format!("running {}", self.running.join(", "))
        };
        let line = format!("[{}/{}] {doing}", self.done, self.total);
        // `\r` and "erase line" clear one row: a line as wide as the
        // terminal or wider wraps (or leaves the cursor past the edge), and
        // its first rows stay behind at every redraw.
        let line = fit(&super::text::visible(&line, &[]), self.columns - 1);
        // A progress line that cannot be drawn is not worth failing for.
        let _ = write!(self.out, "\r\u{1b}[2K{line}");
        let _ = self.out.flush();
    }

    /// Erases the line.
    pub fn finish(mut self) {
        let _ = write!(self.out, "\r\u{1b}[2K");
        let _ = self.out.flush();
    }
}

/// `text` cut to at most `columns` terminal columns (a wide character
/// takes two), its last one `…` when anything was cut.
fn fit(text: &str, columns: usize) -> String {
    let width = |c: char| c.width().unwrap_or(0);
    if text.chars().map(width).sum::<usize>() <= columns {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        // One column stays for the `…`.
        if used + width(c) + 1 > columns {
            break;
        }
        used += width(c);
        out.push(c);
    }
    if columns > 0 {
        out.push('…');
    }
    out
}
