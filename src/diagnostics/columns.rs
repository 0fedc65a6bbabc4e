//! Columns converted to characters. Tools count bytes (clang, Go), UTF-16
//! units (tsc, ESLint), display columns (gcc) or characters with tabs
//! expanded (ShellCheck); the same position must read the same whatever
//! printed it, so the source line is read and the column recounted. Where
//! the line cannot be read the tool's column stays, and `column_unit` says
//! what it counts.

use std::path::{Component, Path, PathBuf};

use unicode_width::UnicodeWidthChar;

use super::{ColumnUnit, Diagnostic};

/// Each file's lines, read once per extraction (`None`: unreadable).
type FileCache = std::collections::HashMap<String, Option<Vec<String>>>;

/// gcc's default `-ftabstop`, and ShellCheck's fixed tab stop.
const TAB_STOP: usize = 8;
/// Files bigger than this are not read to convert columns.
const MAX_SOURCE_BYTES: u64 = 8 * 1024 * 1024;
/// At most this many distinct files are read per extraction.
const MAX_FILES: usize = 256;

/// The source files diagnostics point into, read once each.
pub struct SourceLines {
    root: PathBuf,
    cache: FileCache,
}

impl SourceLines {
    pub fn new(root: &Path) -> SourceLines {
        SourceLines {
            root: root.to_path_buf(),
            cache: FileCache::new(),
        }
    }

    /// The text of `file`'s 1-based `line`, at most 300 characters.
    pub fn text(&mut self, file: &str, line: u32) -> Option<String> {
        self.line(file, line).map(|t| t.chars().take(300).collect())
    }

    pub(super) fn line(&mut self, file: &str, line: u32) -> Option<&str> {
        if !self.cache.contains_key(file) {
            if self.cache.len() >= MAX_FILES || !inside(file) {
                return None;
            }
            let path = self.root.join(file);
            let lines = std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_file() && m.len() <= MAX_SOURCE_BYTES)
                .and_then(|_| std::fs::read(&path).ok())
                .map(|bytes| {
                    String::from_utf8_lossy(&bytes)
                        .lines()
                        .map(str::to_string)
                        .collect()
                });
            self.cache.insert(file.to_string(), lines);
        }
        let lines = self.cache.get(file)?.as_ref()?;
        lines
            .get(usize::try_from(line).ok()?.checked_sub(1)?)
            .map(String::as_str)
    }

    /// Recounts `d`'s columns in characters when its source line is known.
    pub fn convert(&mut self, d: &mut Diagnostic) {
        let unit = d.column_unit;
        let (Some(file), Some(line)) = (d.file.clone(), d.line) else {
            return;
        };
        let Some(text) = self.line(&file, line) else {
            return;
        };
        let Some(column) = d.column.and_then(|c| to_characters(text, c, unit)) else {
            return;
        };
        let end = match (d.end_line, d.end_column) {
            (Some(end_line), Some(end_column)) if end_line == line => {
                to_characters(text, end_column, unit)
            }
            (Some(end_line), Some(end_column)) => self
                .line(&file, end_line)
                .and_then(|t| to_characters(t, end_column, unit)),
            _ => None,
        };
        d.column = Some(column);
        if d.end_column.is_some() {
            d.end_column = end;
            if end.is_none() {
                d.end_line = None;
            }
        }
        d.column_unit = ColumnUnit::Character;
    }
}

/// Whether `file` (relative to the repository root, as the extractor
/// makes it when it can) lies inside the repository. Only such files are
/// read: a tool that names another (`/proc/self/environ:1:1`, a key under
/// the home directory) must not carry its text into a verdict that CI
/// publishes; there the tool's column stays, in the tool's unit.
fn inside(file: &str) -> bool {
    let path = Path::new(file);
    !file.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// A 1-based column in `unit` → a 1-based character column, or `None` when
/// it lies past the end of the line (then the text is not what the tool
/// saw).
pub fn to_characters(text: &str, column: u32, unit: ColumnUnit) -> Option<u32> {
    if unit == ColumnUnit::Indented {
        let indentation = text
            .chars()
            .take_while(|c| matches!(c, ' ' | '\t' | '\x0c'))
            .count();
        let column = usize::try_from(column).ok()?.checked_add(indentation)?;
        return (column <= text.chars().count() + 1)
            .then(|| u32::try_from(column).ok())
            .flatten();
    }
    let target = usize::try_from(column).ok()?.checked_sub(1)?;
    let mut counted = 0usize;
    let mut characters = 0usize;
    for c in text.chars() {
        if counted >= target {
            break;
        }
        counted += match unit {
            ColumnUnit::Display | ColumnUnit::TabStop if c == '\t' => TAB_STOP - counted % TAB_STOP,
            // ShellCheck counts any other character as 1, however wide.
            ColumnUnit::Character | ColumnUnit::TabStop | ColumnUnit::Indented => 1,
            ColumnUnit::Byte => c.len_utf8(),
            ColumnUnit::Utf16 => c.len_utf16(),
            ColumnUnit::Display => c.width().unwrap_or(0).max(1),
        };
        characters += 1;
    }
    // One past the last character (the end of the line) is a position;
    // anything beyond is not.
    if counted < target {
        return None;
    }
    u32::try_from(characters + 1).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_lands_on_the_same_character() {
        // `x` is character 9 in each: é is 2 bytes/1 unit, 😀 is 4 bytes,
        // 2 UTF-16 units and 2 display columns, the tab reaches column 9.
        assert_eq!(to_characters("héllo = x", 10, ColumnUnit::Byte), Some(9));
        assert_eq!(to_characters("a 😀 b = x", 11, ColumnUnit::Utf16), Some(10));
        assert_eq!(
            to_characters("a 😀 b = x", 11, ColumnUnit::Display),
            Some(10)
        );
        assert_eq!(to_characters("\tx", 9, ColumnUnit::Display), Some(2));
        assert_eq!(to_characters("ab\tx", 9, ColumnUnit::Display), Some(4));
        // ShellCheck expands tabs but counts a wide character as 1.
        assert_eq!(to_characters("\t\tx", 17, ColumnUnit::TabStop), Some(3));
        assert_eq!(to_characters("ab\tx", 9, ColumnUnit::TabStop), Some(4));
        assert_eq!(to_characters("日本\tx", 9, ColumnUnit::TabStop), Some(4));
        assert_eq!(to_characters("日本 x", 4, ColumnUnit::TabStop), Some(4));
        assert_eq!(to_characters("plain", 3, ColumnUnit::Byte), Some(3));
        // The end of the line is a position; beyond it is not.
        assert_eq!(to_characters("ab", 3, ColumnUnit::Byte), Some(3));
        assert_eq!(to_characters("ab", 9, ColumnUnit::Byte), None);
        // Python's caret under a line it showed without its indentation.
        assert_eq!(
            to_characters("        * 2)", 1, ColumnUnit::Indented),
            Some(9)
        );
        assert_eq!(to_characters("\t\tx = (", 5, ColumnUnit::Indented), Some(7));
        assert_eq!(to_characters("    ab", 9, ColumnUnit::Indented), None);
    }
}
