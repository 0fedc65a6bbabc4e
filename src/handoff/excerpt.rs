//! Excerpts of a document for people to read. A frontmatter line can be a
//! megabyte long (a log pasted as a `title:`, a whole frontmatter
//! minified onto one line): drawn or quoted whole, it floods a terminal
//! and an agent's context, and hides the one place that is wrong. What is
//! shown is cut around the column an error points at, each cut marked
//! with `…`; the line and column an error reports stay the document's.

use super::validate::Issue;

/// How many characters of a line, or of a value quoted in a message, are
/// shown: a line of a terminal, about.
pub const WIDTH: usize = 100;

/// The mark of a cut.
const CUT: char = '…';

/// `text` cut to `WIDTH` characters around its character `at` (counted
/// from 0), with `…` where it was cut, and where `at` is in the excerpt
/// (in characters). Text no longer than `WIDTH` is returned whole.
pub fn around(text: &str, at: usize) -> (String, usize) {
    let count = text.chars().count();
    if count <= WIDTH {
        return (text.to_string(), at);
    }
    let start = window(count, at);
    let end = start + WIDTH;
    let mut excerpt = String::with_capacity(WIDTH * 4 + 6);
    if start > 0 {
        excerpt.push(CUT);
    }
    excerpt.extend(text.chars().skip(start).take(WIDTH));
    if end < count {
        excerpt.push(CUT);
    }
    (excerpt, at.saturating_sub(start) + usize::from(start > 0))
}

/// Where an excerpt of `WIDTH` characters around character `at` of a text
/// of `count` (more than `WIDTH`) starts: a third before the column, the
/// rest after it, since what follows the column is what the error is
/// about.
fn window(count: usize, at: usize) -> usize {
    at.saturating_sub(WIDTH / 3).min(count - WIDTH)
}

/// `text` cut as `around` cuts it around its start.
pub fn short(text: &str) -> String {
    around(text, 0).0
}

/// The document as it is drawn under its errors: each line longer than
/// `WIDTH` characters cut around the first error on it (around its start
/// when no error is on it), and the errors' `offset` and `len` moved to
/// where they are in what is returned. An error's part that was cut away
/// is drawn at the `…` that stands for it. `line` and `column` are left as
/// they are.
pub fn drawn(text: &str, errors: &mut [Issue]) -> String {
    if !text
        .split('\n')
        .any(|line| line.len() > WIDTH && line.chars().count() > WIDTH)
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len().min(1 << 20));
    // Each line's place in `text`, its place in `out`, and, for a cut one,
    // the byte range of `text` kept and where it starts in `out`.
    let mut lines: Vec<Line> = Vec::new();
    let mut offset = 0;
    for whole in text.split_inclusive('\n') {
        let content = whole.trim_end_matches(['\n', '\r']);
        let ending = &whole[content.len()..];
        let start = offset;
        offset += whole.len();
        let out_start = out.len();
        if content.chars().count() <= WIDTH {
            out.push_str(whole);
            lines.push(Line {
                start,
                end: offset,
                out_start,
                kept: None,
            });
            continue;
        }
        let first = errors
            .iter()
            .map(|e| e.offset)
            .filter(|&at| at >= start && at < start + content.len().max(1))
            .min();
        let column = first.map_or(0, |at| {
            content
                .get(..at - start)
                .map_or(0, |before| before.chars().count())
        });
        let count = content.chars().count();
        let skip = window(count, column);
        let byte_at = |chars: usize| {
            content
                .char_indices()
                .nth(chars)
                .map_or(content.len(), |(at, _)| at)
        };
        let kept_start = byte_at(skip);
        let kept_end = byte_at(skip + WIDTH);
        let lead = skip > 0;
        let mut excerpt = String::with_capacity(kept_end - kept_start + 6);
        if lead {
            excerpt.push(CUT);
        }
        excerpt.push_str(&content[kept_start..kept_end]);
        if skip + WIDTH < count {
            excerpt.push(CUT);
        }
        out.push_str(&excerpt);
        out.push_str(ending);
        lines.push(Line {
            start,
            end: offset,
            out_start,
            kept: Some(Kept {
                from: start + kept_start,
                to: start + kept_end,
                out_from: out_start + if lead { CUT.len_utf8() } else { 0 },
                out_line_end: out_start + excerpt.len(),
            }),
        });
    }
    let moved = |at: usize| -> usize {
        let Some(line) = lines.iter().find(|l| at >= l.start && at < l.end) else {
            return out.len();
        };
        match &line.kept {
            None => line.out_start + (at - line.start),
            Some(kept) if at < kept.from => line.out_start,
            Some(kept) if at <= kept.to => kept.out_from + (at - kept.from),
            // Past the excerpt: its closing `…`, or the line's end.
            Some(kept) => (kept.out_from + (kept.to - kept.from)).min(kept.out_line_end),
        }
    };
    for error in errors.iter_mut() {
        let from = moved(error.offset.min(text.len()));
        let to = moved((error.offset + error.len).min(text.len())).max(from);
        error.offset = from;
        error.len = to - from;
    }
    out
}

/// A line of the document as `drawn` wrote it.
struct Line {
    start: usize,
    end: usize,
    out_start: usize,
    kept: Option<Kept>,
}

/// The part of a cut line that was kept.
struct Kept {
    from: usize,
    to: usize,
    out_from: usize,
    out_line_end: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spanning(offset: usize, len: usize) -> Issue {
        Issue {
            line: 0,
            column: 0,
            field: String::new(),
            message: String::new(),
            offset,
            len,
            contradicted_by: None,
            unverified_by: None,
        }
    }

    #[test]
    fn a_short_text_is_kept_whole() {
        assert_eq!(around("title: x", 3), ("title: x".to_string(), 3));
    }

    #[test]
    fn a_long_text_is_cut_around_the_column_with_a_mark_at_each_cut() {
        let text = format!("{}oops: here{}", "x".repeat(5000), "y".repeat(5000));
        let (excerpt, at) = around(&text, 5000);
        assert_eq!(excerpt.chars().count(), WIDTH + 2);
        assert!(
            excerpt.starts_with('…') && excerpt.ends_with('…'),
            "{excerpt}"
        );
        assert_eq!(
            excerpt.chars().skip(at).take(10).collect::<String>(),
            "oops: here"
        );
        // At the start, no mark before it.
        let (excerpt, at) = around(&text, 0);
        assert!(!excerpt.starts_with('…') && excerpt.ends_with('…'));
        assert_eq!(at, 0);
        // At the end, none after it.
        let (excerpt, _) = around(&text, text.len() - 1);
        assert!(excerpt.starts_with('…') && !excerpt.ends_with('…'));
    }

    #[test]
    fn a_drawn_document_keeps_its_errors_on_the_text_they_point_at() {
        let long = format!(
            "title: {}é oops: here {}",
            "x".repeat(3000),
            "y".repeat(3000)
        );
        let text = format!("---\nid: F1\n{long}\nstage: qa\r\n---\n");
        let at = text.find("oops").unwrap();
        let stage = text.find("stage").unwrap();
        let mut errors = vec![spanning(at, 4), spanning(stage, 5)];
        let drawn = drawn(&text, &mut errors);
        assert!(drawn.len() < 400, "{drawn}");
        assert_eq!(
            &drawn[errors[0].offset..errors[0].offset + errors[0].len],
            "oops"
        );
        assert_eq!(
            &drawn[errors[1].offset..errors[1].offset + errors[1].len],
            "stage"
        );
        assert!(drawn.starts_with("---\nid: F1\n…"), "{drawn}");
        assert!(drawn.ends_with("…\nstage: qa\r\n---\n"), "{drawn}");
        // A document with no long line is drawn as it is.
        let mut none = Vec::new();
        assert_eq!(
            super::drawn("---\nid: F1\n---\n", &mut none),
            "---\nid: F1\n---\n"
        );
    }
}
