//! The live progress line drawn on a terminal while checks run.

use std::io::Write;

use crate::runner::RunEvent;

/// Redraws one status line on `out` (standard error, a terminal).
pub struct Progress<W: Write> {
    out: W,
    total: usize,
    done: usize,
    running: Vec<String>,
}

impl<W: Write> Progress<W> {
    pub fn new(out: W, total: usize) -> Self {
        Progress {
            out,
            total,
            done: 0,
            running: Vec::new(),
        }
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
        // A progress line that cannot be drawn is not worth failing for.
        let _ = write!(
            self.out,
            "\r\u{1b}[2K[{}/{}] {doing}",
            self.done, self.total
        );
        let _ = self.out.flush();
    }

    /// Erases the line.
    pub fn finish(mut self) {
        let _ = write!(self.out, "\r\u{1b}[2K");
        let _ = self.out.flush();
    }
}
