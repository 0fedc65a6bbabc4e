//! The frontmatter's YAML as a tree that knows where every key and value is
//! in the document (1-based line and column, byte span), duplicate keys
//! included. Built from saphyr-parser's events.

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span};

use super::extract::Frontmatter;

/// A place in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// Byte offset in the document.
    pub offset: usize,
    /// Length in bytes (at least 1 where anything is there).
    pub len: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub pos: Pos,
}

/// A YAML problem at a place in the document.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub pos: Pos,
    pub message: String,
}

impl Node {
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn key(&self, key: &str) -> Option<&Key> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.name == key).map(|(k, _)| k),
            _ => None,
        }
    }
}

/// Maps the parser's character positions to the document's.
struct Locator<'a> {
    fm: &'a Frontmatter<'a>,
    /// Byte offset of each character, when the text is not ASCII.
    chars: Option<Vec<usize>>,
}

impl Locator<'_> {
    fn byte(&self, index: usize) -> usize {
        match &self.chars {
            None => index.min(self.fm.yaml.len()),
            Some(offsets) => offsets.get(index).copied().unwrap_or(self.fm.yaml.len()),
        }
    }

    fn at(&self, marker: &Marker) -> Pos {
        Pos {
            line: self.fm.first_line + marker.line().saturating_sub(1),
            column: marker.col() + 1,
            offset: self.fm.offset + self.byte(marker.index()),
            len: 1,
        }
    }

    fn span(&self, span: &Span) -> Pos {
        let mut pos = self.at(&span.start);
        let end = self.fm.offset + self.byte(span.end.index());
        pos.len = end.saturating_sub(pos.offset).max(1);
        pos
    }
}

/// Parses the frontmatter. Returns the root (None when it is empty) and the
/// duplicate keys found; a syntax error is an `Err`.
pub fn parse(fm: &Frontmatter<'_>) -> Result<(Option<Node>, Vec<YamlError>), YamlError> {
    let locator = Locator {
        fm,
        chars: (!fm.yaml.is_ascii()).then(|| {
            let mut offsets: Vec<usize> = fm.yaml.char_indices().map(|(i, _)| i).collect();
            offsets.push(fm.yaml.len());
            offsets
        }),
    };
    let mut parser = Parser::new_from_str(fm.yaml);
    let mut builder = Builder {
        locator: &locator,
        duplicates: Vec::new(),
    };
    let mut root = None;
    loop {
        let (event, span) = builder.next(&mut parser)?;
        match event {
            Event::StreamEnd => break,
            Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd | Event::Nothing => {}
            other => {
                if root.is_some() {
                    return Err(YamlError {
                        pos: locator.span(&span),
                        message: "the frontmatter holds more than one YAML document".to_string(),
                    });
                }
                root = Some(builder.node(&mut parser, other, span, 0)?);
            }
        }
    }
    Ok((root, builder.duplicates))
}

struct Builder<'a> {
    locator: &'a Locator<'a>,
    duplicates: Vec<YamlError>,
}

impl Builder<'_> {
    fn next<'i>(
        &self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
    ) -> Result<(Event<'i>, Span), YamlError> {
        match parser.next_event() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(e)) => Err(YamlError {
                pos: self.locator.at(e.marker()),
                message: format!("the frontmatter is not valid YAML: {}", e.info()),
            }),
            None => Ok((Event::StreamEnd, Span::default())),
        }
    }

    fn node<'i>(
        &mut self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
        event: Event<'i>,
        span: Span,
        depth: usize,
    ) -> Result<Node, YamlError> {
        let pos = self.locator.span(&span);
        // A handoff nests a few levels; a document nesting thousands would
        // take the stack with it.
        if depth > MAX_DEPTH {
            return Err(YamlError {
                pos,
                message: format!(
                    "the frontmatter nests lists and mappings more than {MAX_DEPTH} levels deep: a handoff needs a few"
                ),
            });
        }
        match event {
            Event::Scalar(text, style, _, tag) => Ok(Node {
                value: match tag.as_deref() {
                    None if style == ScalarStyle::Plain => plain(&text),
                    None => Value::Str(text.into_owned()),
                    Some(tag) => tagged(tag, &text).ok_or_else(|| YamlError {
                        pos,
                        message: format!(
                            "the tag `{}{}` is not supported here (or does not fit `{text}`): write the value without it",
                            tag.handle, tag.suffix
                        ),
                    })?,
                },
                pos,
            }),
            Event::SequenceStart(..) => {
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next(parser)?;
                    if matches!(event, Event::SequenceEnd | Event::StreamEnd) {
                        break;
                    }
                    items.push(self.node(parser, event, span, depth + 1)?);
                }
                Ok(Node {
                    value: Value::Seq(items),
                    pos,
                })
            }
            Event::MappingStart(..) => {
                let mut entries: Vec<(Key, Node)> = Vec::new();
                // Each key's first line, to find a duplicate at once.
                let mut seen: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::new();
                loop {
                    let (event, span) = self.next(parser)?;
                    if matches!(event, Event::MappingEnd | Event::StreamEnd) {
                        break;
                    }
                    let key_node = self.node(parser, event, span, depth + 1)?;
                    let name = match &key_node.value {
                        Value::Str(s) => s.clone(),
                        Value::Null => String::new(),
                        Value::Bool(b) => b.to_string(),
                        Value::Int(i) => i.to_string(),
                        Value::Float(f) => f.to_string(),
                        _ => {
                            return Err(YamlError {
                                pos: key_node.pos,
                                message: "a key must be a plain name, not a list or a mapping".to_string(),
                            })
                        }
                    };
                    let (event, span) = self.next(parser)?;
                    let value = self.node(parser, event, span, depth + 1)?;
                    let key = Key {
                        name,
                        pos: key_node.pos,
                    };
                    if let Some(first) = seen.get(&key.name) {
                        self.duplicates.push(YamlError {
                            pos: key.pos,
                            message: format!(
                                "duplicate key `{}` (first on line {first}): remove one of them",
                                key.name
                            ),
                        });
                        continue;
                    }
                    seen.insert(key.name.clone(), key.pos.line);
                    entries.push((key, value));
                }
                Ok(Node {
                    value: Value::Map(entries),
                    pos,
                })
            }
            Event::Alias(_) => Err(YamlError {
                pos,
                message: "anchors and aliases are not supported in handoff frontmatter: write the value out".to_string(),
            }),
            _ => Err(YamlError {
                pos,
                message: "unexpected YAML structure".to_string(),
            }),
        }
    }
}

/// How deep lists and mappings may nest.
const MAX_DEPTH: usize = 64;

/// A scalar with an explicit core-schema tag (`!!str 2` is text, `!!int 2`
/// a number); `None` for any other tag, or a value its tag does not fit.
fn tagged(tag: &saphyr_parser::Tag, text: &str) -> Option<Value> {
    if !tag.is_yaml_core_schema() {
        return None;
    }
    let value = plain(text);
    match (tag.suffix.as_str(), &value) {
        ("str", _) => Some(Value::Str(text.to_string())),
        ("float", Value::Float(_) | Value::Int(_)) => text.trim().parse().ok().map(Value::Float),
        ("int", Value::Int(_)) | ("bool", Value::Bool(_)) | ("null", Value::Null) => Some(value),
        _ => None,
    }
}

/// A plain scalar typed by the YAML 1.2 core schema (timestamps stay text).
fn plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = text.parse::<i64>() {
            return Value::Int(i);
        }
    }
    if let Some(hex) = text.strip_prefix("0x") {
        if let Ok(i) = i64::from_str_radix(hex, 16) {
            return Value::Int(i);
        }
    }
    if let Some(oct) = text.strip_prefix("0o") {
        if let Ok(i) = i64::from_str_radix(oct, 8) {
            return Value::Int(i);
        }
    }
    let looks_numeric = digits
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if looks_numeric {
        if let Ok(f) = text.parse::<f64>() {
            return Value::Float(f);
        }
    }
    Value::Str(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::extract::extract;

    fn tree(doc: &str) -> (Option<Node>, Vec<YamlError>) {
        parse(&extract(doc).unwrap()).unwrap()
    }

    #[test]
    fn values_are_typed_and_located_in_the_document() {
        let doc = "---\nid: F1\nretry_count: 2\nready: true\nnothing: ~\nquoted: \"2\"\nwhen: 2026-01-02T03:04:05Z\nlist:\n  - name: a\n    status: pass\n---\n";
        let (root, dups) = tree(doc);
        let root = root.unwrap();
        assert!(dups.is_empty());
        assert_eq!(root.get("id").unwrap().value, Value::Str("F1".into()));
        assert_eq!(root.get("retry_count").unwrap().value, Value::Int(2));
        assert_eq!(root.get("ready").unwrap().value, Value::Bool(true));
        assert_eq!(root.get("nothing").unwrap().value, Value::Null);
        assert_eq!(root.get("quoted").unwrap().value, Value::Str("2".into()));
        assert_eq!(
            root.get("when").unwrap().value,
            Value::Str("2026-01-02T03:04:05Z".into())
        );
        let retry = root.key("retry_count").unwrap().pos;
        assert_eq!((retry.line, retry.column), (3, 1));
        let value = root.get("retry_count").unwrap().pos;
        assert_eq!(
            (
                value.line,
                value.column,
                &doc[value.offset..value.offset + value.len]
            ),
            (3, 14, "2")
        );
        let Value::Seq(items) = &root.get("list").unwrap().value else {
            panic!()
        };
        let status = items[0].get("status").unwrap().pos;
        assert_eq!((status.line, status.column), (10, 13));
    }

    #[test]
    fn core_tags_type_their_value_and_other_tags_are_refused() {
        let (root, _) = tree("---\na: !!str 2\nb: !!int 3\nc: !!bool true\nd: !!str true\n---\n");
        let root = root.unwrap();
        assert!(matches!(root.get("a").unwrap().value, Value::Str(ref s) if s == "2"));
        assert!(matches!(root.get("b").unwrap().value, Value::Int(3)));
        assert!(matches!(root.get("c").unwrap().value, Value::Bool(true)));
        assert!(matches!(root.get("d").unwrap().value, Value::Str(ref s) if s == "true"));
        for bad in ["a: !!int two", "a: !custom x", "a: !!binary aGk="] {
            let doc = format!("---\n{bad}\n---\n");
            let error = parse(&extract(&doc).unwrap()).unwrap_err();
            assert!(
                error.message.contains("is not supported here"),
                "{bad}: {error:?}"
            );
            assert_eq!((error.pos.line, error.pos.column), (2, 4), "{bad}");
        }
    }

    #[test]
    fn nesting_thousands_deep_is_an_error_not_a_crash() {
        let doc = format!("---\nid: F1\nx:\n{}1\n---\n", "- ".repeat(100_000));
        let error = parse(&extract(&doc).unwrap()).unwrap_err();
        assert!(error.message.contains("levels deep"), "{error:?}");
    }

    #[test]
    fn duplicate_keys_and_errors_point_at_the_document() {
        let (_, dups) = tree("---\nid: a\nstage: qa\nid: b\n---\n");
        assert_eq!(dups.len(), 1);
        assert_eq!((dups[0].pos.line, dups[0].pos.column), (4, 1));
        assert!(dups[0].message.contains("first on line 2"));
        let error = parse(&extract("---\nid: [unclosed\n---\n").unwrap()).unwrap_err();
        assert!(error.pos.line >= 2, "{error:?}");
    }

    #[test]
    fn non_ascii_text_keeps_byte_offsets_right() {
        let doc = "\u{feff}---\r\ntitle: \"Ünïcödé\"\r\nid: F9\r\n---\r\n";
        let (root, _) = tree(doc);
        let pos = root.unwrap().get("id").unwrap().pos;
        assert_eq!(&doc[pos.offset..pos.offset + pos.len], "F9");
        assert_eq!((pos.line, pos.column), (3, 5));
    }
}
