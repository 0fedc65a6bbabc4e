//! Frontmatter extraction: the YAML between a first `---` line and the next
//! `---` or `...` line, with where it sits in the document. The body is
//! never read beyond that line.

/// The frontmatter of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter<'a> {
    /// The YAML text, without the delimiter lines.
    pub yaml: &'a str,
    /// Its byte offset in the document (after the BOM and the first line).
    pub offset: usize,
    /// The document line its first line is (1-based).
    pub first_line: usize,
    /// The document line of the closing delimiter.
    pub closing_line: usize,
}

/// Why a document has no usable frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtractError {
    /// The first line is not `---`.
    Missing,
    /// No `---` or `...` line closes it.
    Unterminated,
}

impl ExtractError {
    pub fn message(&self) -> &'static str {
        match self {
            ExtractError::Missing => {
                "the document has no frontmatter: its first line must be `---`"
            }
            ExtractError::Unterminated => {
                "the frontmatter is not closed: add a `---` line after the last field"
            }
        }
    }
}

/// One line of the document: its text without the line break, and where it
/// starts.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split_inclusive('\n').map(move |raw| {
        let start = offset;
        offset += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

fn is_delimiter(line: &str, closing: bool) -> bool {
    let line = line.trim_end_matches([' ', '\t']);
    line == "---" || (closing && line == "...")
}

/// Finds the frontmatter of `text` (a UTF-8 BOM is allowed before it).
pub fn extract(text: &str) -> Result<Frontmatter<'_>, ExtractError> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = lines(&text[bom..]);
    match lines.next() {
        Some((_, first)) if is_delimiter(first, false) => {}
        _ => return Err(ExtractError::Missing),
    }
    let mut start = None;
    for (number, (offset, line)) in lines.enumerate() {
        let start = *start.get_or_insert(offset);
        if is_delimiter(line, true) {
            return Ok(Frontmatter {
                yaml: &text[bom + start..bom + offset],
                offset: bom + start,
                first_line: 2,
                closing_line: number + 2,
            });
        }
    }
    Err(ExtractError::Unterminated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_between_delimiters() {
        let text = "---\nid: F1\n---\nbody\n---\nmore body\n";
        let fm = extract(text).unwrap();
        assert_eq!(fm.yaml, "id: F1\n");
        assert_eq!((fm.offset, fm.first_line, fm.closing_line), (4, 2, 3));
    }

    #[test]
    fn bom_crlf_and_dots() {
        let text = "\u{feff}---\r\nid: F1\r\nstage: qa\r\n...\r\nbody";
        let fm = extract(text).unwrap();
        assert_eq!(fm.yaml, "id: F1\r\nstage: qa\r\n");
        assert_eq!(fm.offset, 3 + 5);
        assert_eq!(fm.closing_line, 4);
    }

    #[test]
    fn empty_missing_and_unterminated() {
        assert_eq!(extract("---\n---\n").unwrap().yaml, "");
        assert_eq!(extract("# Title\n---\n"), Err(ExtractError::Missing));
        assert_eq!(extract(""), Err(ExtractError::Missing));
        assert_eq!(extract("---\nid: 1\n"), Err(ExtractError::Unterminated));
        assert_eq!(extract("----\nid: 1\n---\n"), Err(ExtractError::Missing));
    }
}
