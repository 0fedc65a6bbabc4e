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

use crate::config::suggest;

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

/// How many lines above a late frontmatter `late_start` looks through: a
/// title and a blank line or two, not a document's worth of text.
const LATE_LINES: usize = 10;

/// For a document whose first line is not `---`: the line (1-based) where
/// its frontmatter opens after all, when one of its first lines is `---`
/// and the next line that is not blank starts a field of the schema
/// (`fields`). Written below a title or a blank line, a frontmatter is
/// one a reader finds; a `---` rule in the Markdown is followed by text,
/// not by `id:`.
pub fn late_start(text: &str, fields: &[&str]) -> Option<usize> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = lines(text).take(LATE_LINES + 1).map(|(_, l)| l).collect();
    let open = lines
        .iter()
        .skip(1)
        .position(|line| is_delimiter(line, false))?
        + 1;
    let next = lines[open + 1..].iter().find(|l| !l.trim().is_empty())?;
    starts_field(next, fields).then_some(open + 1)
}

/// Each line of `yaml` with the offset it starts at, its trailing blanks
/// left out.
fn lines_of(yaml: &str) -> Vec<(usize, &str)> {
    lines(yaml)
        .map(|(at, line)| (at, line.trim_end()))
        .collect()
}

/// Whether `text` starts a field of the schema (`fields`), even a
/// mistyped one (`stage qa`).
fn starts_field(text: &str, fields: &[&str]) -> bool {
    let name = text.split([':', ' ', '\t']).next().unwrap_or_default();
    fields.contains(&name)
}

/// Where the Markdown of a document whose frontmatter was never closed
/// starts in `yaml`, what was read as its frontmatter (up to a `---` rule
/// in the body, or the end of the document), as a byte offset: the first
/// line after a blank one that reads as text, not as a field, when no
/// field of the schema (`fields`) follows it. Text is a Markdown heading
/// (`## Summary`, which YAML takes for a comment), a label (`Status:
/// done`, `Next steps: ...`: a capital or a space in the key, which no
/// field has) or a line of prose. YAML reads the labels as unknown fields
/// and the headings as comments, so without this the document would pass
/// with the body's `status: done` taken for a duplicate key at best.
/// A comment or a field of the author's own among the fields is followed
/// by fields of the schema, and is not text.
///
/// A label straight after the last field, with no blank line between, is
/// text too when it names a field the frontmatter already gave in other
/// capitals (`Status: done` below `status: complete`): nobody gives a
/// field twice in two spellings, while a body that starts with such a
/// label is common, and would otherwise pass as one unknown field.
pub fn body_start(yaml: &str, fields: &[&str]) -> Option<usize> {
    let lines = lines_of(yaml);
    let field = |text: &str| starts_field(text, fields);
    let text_like = |text: &str| {
        if text.is_empty() || text.starts_with([' ', '\t', '-']) || field(text) {
            return false;
        }
        let hashes = text.len() - text.trim_start_matches('#').len();
        if hashes > 0 {
            return (1..=6).contains(&hashes) && text[hashes..].starts_with(' ');
        }
        match text.split_once(':') {
            Some((key, _)) => {
                !key.starts_with(['"', '\'', '?', '[', '{', '&', '*', '!'])
                    && (key.starts_with(|c: char| c.is_uppercase()) || key.contains(' '))
            }
            None => true,
        }
    };
    // The name of the field a line gives, when it gives one of the schema.
    let given = |text: &str, name: &str| text.split_once(':').is_some_and(|(key, _)| key == name);
    // A field of the schema given on an earlier line, in other capitals.
    let shadows = |n: usize| {
        let Some((key, _)) = lines[n].1.split_once(':') else {
            return false;
        };
        let lower = key.to_lowercase();
        key != lower
            && text_like(lines[n].1)
            && lines[..n]
                .iter()
                .any(|(_, text)| fields.contains(&lower.as_str()) && given(text, &lower))
    };
    let start = (1..lines.len()).find(|&n| {
        ((lines[n - 1].1.is_empty() && text_like(lines[n].1)) || shadows(n))
            && !lines[n + 1..].iter().any(|(_, text)| field(text))
    })?;
    Some(lines[start].0)
}

/// Where the document's text that starts at byte `at` of `yaml` really
/// starts: at the Markdown headings right above it (`# Notes`, blank
/// lines between allowed), which YAML took for comments among the fields.
/// The closing `---` goes above the heading, not below it, where the
/// heading would be lost in the frontmatter. The first line stays a field.
pub fn with_headings_above(yaml: &str, at: usize) -> usize {
    let heading = |text: &str| {
        let hashes = text.len() - text.trim_start_matches('#').len();
        (1..=6).contains(&hashes) && text[hashes..].starts_with(' ')
    };
    let mut start = at;
    for (offset, text) in lines_of(&yaml[..at]).into_iter().rev() {
        if offset == 0 {
            break;
        }
        if heading(text) {
            start = offset;
        } else if !text.is_empty() {
            break;
        }
    }
    start
}

/// Where a line of prose starts in `yaml`, a frontmatter that does not
/// parse, at or before byte `reported` where the parser gave up: a line
/// right below the fields (`The parser is done.`, no blank line between)
/// that cannot be a field, so the closing `---` was most likely forgotten
/// above it and a `---` further down the document closed the frontmatter
/// instead. A line cannot be a field when it has no `:`, starts at the
/// margin (not an item, a comment, a quote or a bracket), reads as a
/// sentence (three words or more, or ends in `.`, `!` or `?`) and its
/// first words are no field of the schema (`fields`), not even mistyped:
/// `retry count 2` and `staus in_progress` are fields missing their `:`,
/// whose error says so. A line with fields of the schema below it is a
/// mistake among the fields, not the document's text.
pub fn prose_start(yaml: &str, reported: usize, fields: &[&str]) -> Option<usize> {
    let lines = lines_of(yaml);
    let field = |text: &str| starts_field(text, fields);
    // A word that names a field, or nearly: a short word only exactly
    // (`It` is not a mistyped `id`).
    let names_field = |word: &str| {
        let word = word.to_lowercase();
        fields.contains(&word.as_str())
            || (word.chars().count() > 3 && suggest(&word, fields.iter().copied()).is_some())
    };
    let prose = |text: &str| {
        if text.is_empty()
            || text.contains(':')
            || text.starts_with(|c: char| c.is_whitespace() || "-#\"'[]{}&*!?|>%@`,".contains(c))
        {
            return false;
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let sentence = words.len() >= 3 || text.ends_with(['.', '!', '?']);
        let joined = words.iter().take(2).copied().collect::<Vec<_>>().join("_");
        sentence && !names_field(words[0]) && !names_field(&joined)
    };
    let start = (1..lines.len())
        .take_while(|&n| lines[n].0 <= reported)
        .find(|&n| prose(lines[n].1) && !lines[n + 1..].iter().any(|(_, text)| field(text)))?;
    Some(lines[start].0)
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

    #[test]
    fn the_text_a_frontmatter_runs_into_is_found() {
        const FIELDS: [&str; 3] = ["id", "stage", "status"];
        fn at(yaml: &str) -> Option<&str> {
            body_start(yaml, &FIELDS).map(|at| &yaml[at..])
        }
        assert_eq!(
            at("id: F1\n\n## Summary\n\nDone.\n"),
            Some("## Summary\n\nDone.\n")
        );
        assert_eq!(at("id: F1\n\nStatus: done\n"), Some("Status: done\n"));
        assert_eq!(
            at("id: F1\n\nNext steps: ship\n"),
            Some("Next steps: ship\n")
        );
        assert_eq!(at("id: F1\n\nIt works.\n"), Some("It works.\n"));
        // Fields of the schema below it: a comment, or a field of the
        // author's own, among the fields.
        assert_eq!(at("id: F1\n\n# Where\n\nstage: qa\n"), None);
        assert_eq!(at("id: F1\n\n# owner\nstage qa\n"), None);
        assert_eq!(at("id: F1\n\nReviewer: bob\nstatus: complete\n"), None);
        // Straight after the fields, a label that gives a field again in
        // other capitals.
        assert_eq!(
            at("id: F1\nstatus: complete\nStatus: done\nOwner: bob\n"),
            Some("Status: done\nOwner: bob\n")
        );
        assert_eq!(at("stage: qa\nID: F1\n"), None, "no `id` given before");
        assert_eq!(at("id: F1\nstatus: x\nStatus: done\nstage: qa\n"), None);
        // Not after a blank line, a lowercase key, an indented line, an item.
        assert_eq!(at("id: F1\nStatus: done\n"), None);
        assert_eq!(at("id: F1\n\nreviewer: bob\n"), None);
        assert_eq!(at("id: F1\nx: |\n  a\n\n  Said: this\n"), None);
        assert_eq!(at("id: F1\n\n- a\n"), None);
        assert_eq!(at("id: F1\n\n\"Quoted key\": x\n"), None);
    }

    #[test]
    fn prose_below_the_fields_is_told_from_a_field_missing_its_colon() {
        const FIELDS: [&str; 4] = ["id", "stage", "status", "retry_count"];
        fn at(yaml: &str) -> Option<&str> {
            prose_start(yaml, yaml.len(), &FIELDS).map(|at| &yaml[at..])
        }
        assert_eq!(
            at("id: F1\nThe parser is done.\n\nMore.\n"),
            Some("The parser is done.\n\nMore.\n")
        );
        assert_eq!(at("id: F1\nIt works now\n"), Some("It works now\n"));
        assert_eq!(at("id: F1\nDone.\n"), Some("Done.\n"));
        // Fields missing their `:`, mistyped or not.
        assert_eq!(at("id: F1\nretry_count 2\n"), None);
        assert_eq!(at("id: F1\nretry count 2\n"), None);
        assert_eq!(at("id: F1\nstaus in_progress\n"), None);
        assert_eq!(at("id: F1\nStage implementation now\n"), None);
        // Too short to be a sentence, a label, an item, a continuation.
        assert_eq!(at("id: F1\nchecks pass\n"), None);
        assert_eq!(at("id: F1\nNote: done.\n"), None);
        assert_eq!(at("id: F1\n- a b c\n"), None);
        assert_eq!(at("id: F1\n  and more of it.\n"), None);
        // Fields of the schema below it: a mistake among the fields.
        assert_eq!(at("id: F1\nThe parser is done.\nstage: qa\n"), None);
        // Not past where the parser stopped.
        let yaml = "id: F1\nThe parser is done.\n";
        assert_eq!(prose_start(yaml, 3, &FIELDS), None);
    }
}
