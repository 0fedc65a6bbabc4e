//! The frontmatter's YAML as a tree that knows where every key and value is
//! in the document (1-based line and column, byte span), duplicate keys
//! included. Built from saphyr-parser's events.

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Span};

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

    /// A syntax error where the document has it. saphyr places an error
    /// at a position its scanner kept, which for most tab errors is not the
    /// tab: the start of the plain scalar the tab's line would have
    /// continued (`F1` of `id: F1` for a tab on the next line), the `|` of
    /// a block scalar, or the text after the tab. A tab error points at the
    /// tab itself when it can be found, with what to do about it; any other
    /// error stays where saphyr put it.
    fn syntax_error(&self, error: &ScanError) -> YamlError {
        let info = error.info();
        let pos = self.at(error.marker());
        let reported = self.byte(error.marker().index());
        if let Some(body) = body_start(self.fm.yaml, reported) {
            return YamlError {
                pos: self.at_byte(body),
                message: "the frontmatter is not closed before the document's text: add a `---` line after the last field, above this line".to_string(),
            };
        }
        // saphyr takes no tab after a key's `:` (YAML 1.2 would), and
        // says a whitespace must follow it: a tab is one, so the message
        // says what the scanner stands on (the tab, or what follows it).
        let tab_at = |at: usize| self.fm.yaml.get(at..).is_some_and(|t| t.starts_with('\t'));
        let tab = [reported, reported.saturating_sub(1)]
            .into_iter()
            .find(|&at| tab_at(at));
        if let (COLON_SPACE, Some(tab)) = (info, tab) {
            return YamlError {
                pos: self.at_byte(tab),
                message: "the frontmatter is not valid YAML: a tab follows the `:`: write a space there instead".to_string(),
            };
        }
        let Some(rule) = TabRule::of(info) else {
            let message = match advice(info, self.fm.yaml, reported) {
                Some(advice) => format!("the frontmatter is not valid YAML: {info}: {advice}"),
                None => format!("the frontmatter is not valid YAML: {info}"),
            };
            return YamlError { pos, message };
        };
        match find_tab(self.fm.yaml, reported, error.marker().col(), rule) {
            Some(tab) => YamlError {
                pos: self.at_byte(tab),
                message: "the frontmatter is not valid YAML: a tab is not allowed here: indent with spaces, not tabs".to_string(),
            },
            None => YamlError {
                pos,
                message: format!(
                    "the frontmatter is not valid YAML: {info}: indent with spaces, not tabs"
                ),
            },
        }
    }

    /// The place of a byte offset in the frontmatter, one byte long.
    fn at_byte(&self, byte: usize) -> Pos {
        let before = self.fm.yaml.get(..byte).unwrap_or(self.fm.yaml);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Pos {
            line: self.fm.first_line + before.matches('\n').count(),
            column: before.get(line_start..).map_or(0, |l| l.chars().count()) + 1,
            offset: self.fm.offset + byte,
            len: 1,
        }
    }
}

/// Where the Markdown of a document whose frontmatter was never closed
/// starts inside what was read as its frontmatter (up to a `---` in the
/// body): the first line at or before byte `reported` (the syntax error)
/// that follows a blank line and reads as text, not YAML: a heading
/// (`# Title` and a blank line, which YAML takes for a comment) or a line
/// with no `:` that is neither indented nor a `- ` item. A frontmatter's own comments and
/// fields never make the error, so they are not mistaken for text.
fn body_start(yaml: &str, reported: usize) -> Option<usize> {
    let mut lines = Vec::new();
    let mut offset = 0;
    for line in yaml.split_inclusive('\n') {
        lines.push((offset, line.trim_end()));
        offset += line.len();
    }
    let blank = |n: usize| lines.get(n).is_none_or(|(_, text)| text.is_empty());
    (1..lines.len())
        .take_while(|&n| lines[n].0 <= reported)
        .find(|&n| {
            let text = lines[n].1;
            let hashes = text.len() - text.trim_start_matches('#').len();
            // A heading stands between blank lines; a comment sits among
            // the fields.
            let heading =
                (1..=6).contains(&hashes) && text[hashes..].starts_with(' ') && blank(n + 1);
            let prose =
                !text.is_empty() && !text.starts_with([' ', '\t', '-', '#']) && !text.contains(':');
            blank(n - 1) && (heading || prose)
        })
        .map(|n| lines[n].0)
}

/// saphyr's error for a `:` with no space after it.
const COLON_SPACE: &str = "':' must be followed by a valid YAML whitespace";

/// What to do about a syntax error saphyr reports as `info` at byte
/// `reported` of `yaml`: its messages name the parser's state ("mapping
/// values are not allowed in this context"), not the mistake an author
/// made, which for a handoff is nearly always one of a few (a colon or a
/// quote inside an unquoted title, an indicator starting a value, a line
/// indented off its mapping). The messages are saphyr-parser 0.3's; one
/// this does not know keeps saphyr's words alone.
fn advice(info: &str, yaml: &str, reported: usize) -> Option<String> {
    const INDENTATION: &str = "check this line's indentation: the keys of one mapping, and the `- ` items of one list, start in the same column (spaces only)";
    let advice = match info {
        "mapping values are not allowed in this context" => {
            // A `: ` after the line's own key is inside its value.
            match colon_in_value(yaml, reported) {
                // A long value is quoted cut around the `: ` reported,
                // which is what the author needs to see.
                Some((key, value, at)) if value.chars().count() > super::excerpt::WIDTH => {
                    let column = value.get(..at).map_or(0, |before| before.chars().count());
                    format!(
                        "a value that holds `: ` must be quoted: put the whole value of `{key}` in double quotes (`{key}: {}`, shown cut), writing a `\\` as `\\\\` and a `\"` as `\\\"` inside them",
                        double_quoted(&super::excerpt::around(value, column).0)
                    )
                }
                Some((key, value, _)) => format!(
                    "a value that holds `: ` must be quoted: write `{key}: {}`",
                    double_quoted(value)
                ),
                None => format!("{INDENTATION}; or quote a value that holds `: `"),
            }
        }
        "while parsing a block mapping, did not find expected key"
        | "while parsing a block collection, did not find expected '-' indicator"
        | "invalid indentation"
        | "mapping keys are not allowed in this context" => INDENTATION.to_string(),
        "block sequence entries are not allowed in this context" => {
            "a `- ` list item starts its own line, indented under its key; a text that starts with `- ` must be quoted".to_string()
        }
        COLON_SPACE => {
            "write a space after the `:`, or quote a value that holds one".to_string()
        }
        "simple key expect ':'" | "could not find expected ':'" => {
            "every field is `key: value`: add the missing `:` here or on the line above, or indent a value that goes on under its key".to_string()
        }
        "while scanning a quoted scalar, found unexpected end of stream"
        | "invalid indentation in quoted scalar"
        | "while scanning a quoted scalar, found unexpected document indicator" => {
            "the quote that opens here is never closed: close it where the value ends".to_string()
        }
        "invalid trailing content after double-quoted scalar" => {
            "a quoted value ends at its closing quote: quote the whole value, and inside it write a `'` as `''` (single quotes) or a `\"` as `\\\"` (double quotes)".to_string()
        }
        "while parsing a quoted scalar, found unknown escape character" => {
            "inside double quotes a `\\` starts an escape: write `\\\\`, or use single quotes".to_string()
        }
        "while parsing a flow sequence, expected ',' or ']'" => {
            "a `[` list goes on to here: separate its items with `,` and end it with `]`, or quote a value that starts with `[`".to_string()
        }
        "while parsing a flow mapping, did not find expected ',' or '}'" => {
            "a `{` mapping goes on to here: separate its fields with `,` and end it with `}`, or quote a value that starts with `{`".to_string()
        }
        "while parsing node, found unknown anchor"
        | "while scanning an anchor or alias, did not find expected alphabetic or numeric character" => {
            "a value that starts with `*` or `&` must be quoted".to_string()
        }
        _ => match info.strip_prefix("unexpected character: `") {
            Some(c) => {
                let c = c.trim_end_matches('\'');
                let shown = if c == "`" {
                    "a backtick".to_string()
                } else {
                    format!("`{c}`")
                };
                format!("a value cannot start with {shown}: put the value in quotes")
            }
            None => return None,
        },
    };
    Some(advice)
}

/// The key and the value of the line holding byte `at` of `yaml`, when
/// `at` is a `:` inside the value (`title: Fix: the parser`); a `- `
/// before the key (a list item's first field) is no part of it.
fn colon_in_value(yaml: &str, at: usize) -> Option<(&str, &str, usize)> {
    let start = yaml.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let end = yaml.get(at..)?.find('\n').map_or(yaml.len(), |i| at + i);
    let line = yaml.get(start..end)?.trim_end_matches(['\r', ' ', '\t']);
    let body = line.trim_start_matches(' ');
    let body = body
        .strip_prefix("- ")
        .unwrap_or(body)
        .trim_start_matches(' ');
    let (key, value) = body.split_once(": ")?;
    // `body` ends `line`, which starts at `start`; the value follows the
    // key and its `: `.
    let value_start = start + line.len() - body.len() + key.len() + 2;
    // A plain value ends where a comment starts.
    let value = value.split(" #").next().unwrap_or(value).trim();
    let key_is_plain = !key.is_empty() && !key.contains([' ', '"', '\'', '#', '{', '[']);
    (key_is_plain && value_start <= at && !value.is_empty()).then(|| (key, value, at - value_start))
}

/// `text` as a YAML double-quoted value.
fn double_quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Where a saphyr tab error's tab is, from the scanner's position. The
/// messages are saphyr-parser 0.3's (`scanner.rs`); a message this does not
/// know is not moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TabRule {
    /// The scanner stands on the tab.
    AtPosition,
    /// The tab is in the indentation of the reported line, before the
    /// position (the scanner skipped the blanks, then found text).
    BeforeOnLine,
    /// The tab starts the line after the reported one (a block scalar's
    /// header is reported).
    NextLineStart,
    /// The tab is in the indentation of a later line, left of the reported
    /// column (the plain scalar that line would continue is reported).
    LaterIndentation,
}

impl TabRule {
    fn of(info: &str) -> Option<TabRule> {
        match info {
            "tab cannot be used as indentation" | "tabs disallowed in this context" => {
                Some(TabRule::AtPosition)
            }
            "tabs disallowed within this context (block indentation)" => {
                Some(TabRule::BeforeOnLine)
            }
            "a block scalar content cannot start with a tab" => Some(TabRule::NextLineStart),
            "while scanning a plain scalar, found a tab" => Some(TabRule::LaterIndentation),
            _ => None,
        }
    }
}

/// The byte offset in `yaml` of the tab a tab error is about; `reported` is
/// the byte offset of the scanner's position and `column` its 0-based column
/// in characters.
fn find_tab(yaml: &str, reported: usize, column: usize, rule: TabRule) -> Option<usize> {
    let rest = yaml.get(reported..)?;
    if rest.starts_with('\t') {
        return Some(reported);
    }
    let line_start = yaml.get(..reported)?.rfind('\n').map_or(0, |i| i + 1);
    match rule {
        TabRule::AtPosition => None,
        TabRule::BeforeOnLine => {
            let line = yaml.get(line_start..reported)?;
            indentation_tab(line).map(|tab| line_start + tab)
        }
        TabRule::NextLineStart => {
            let next = reported + rest.find('\n')? + 1;
            yaml.get(next..)?.starts_with('\t').then_some(next)
        }
        TabRule::LaterIndentation => {
            let next = reported + rest.find('\n')? + 1;
            let mut start = next;
            for line in yaml.get(next..)?.split_inclusive('\n') {
                let text = line.trim_end_matches(['\n', '\r']);
                let content = text.trim_start_matches([' ', '\t']);
                // A line of blanks, or of blanks and a comment, may hold
                // tabs: the scanner skips it.
                if !content.is_empty() && !content.starts_with('#') {
                    // Blanks are ASCII, so the byte index is the column.
                    if let Some(tab) = indentation_tab(text).filter(|&tab| tab < column) {
                        return Some(start + tab);
                    }
                }
                start += line.len();
            }
            None
        }
    }
}

/// The byte index of the first tab among the spaces and tabs that begin
/// `line`.
fn indentation_tab(line: &str) -> Option<usize> {
    line.bytes()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .position(|b| b == b'\t')
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
        open_flows: Vec::new(),
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
    /// Where each `[` list and `{` mapping being read opened, innermost
    /// last: an unclosed one is an error there, not where it runs into.
    open_flows: Vec<Pos>,
}

impl Builder<'_> {
    fn next<'i>(
        &self,
        parser: &mut Parser<'i, saphyr_parser::StrInput<'i>>,
    ) -> Result<(Event<'i>, Span), YamlError> {
        match parser.next_event() {
            Some(Ok(pair)) => Ok(pair),
            Some(Err(e)) => Err(self
                .unclosed_flow(&e)
                .unwrap_or_else(|| self.locator.syntax_error(&e))),
            None => Ok((Event::StreamEnd, Span::default())),
        }
    }

    /// A `[` list or `{` mapping left open: saphyr reports it where the
    /// text runs out of what a flow collection may hold, which is the next
    /// field's line (`stage: qa`, an indentation error there) or the end of
    /// the frontmatter, while the mistake is the bracket that was never
    /// closed. Such an error on a later line than the innermost open
    /// bracket points at that bracket; any other error stays where saphyr
    /// put it (a bad escape inside a list written over several lines is
    /// where it is).
    fn unclosed_flow(&self, error: &ScanError) -> Option<YamlError> {
        const RUNS_OFF: [&str; 4] = [
            "while parsing a flow sequence, expected ',' or ']'",
            "while parsing a flow mapping, did not find expected ',' or '}'",
            "invalid indentation in flow construct",
            "illegal placement of ':' indicator",
        ];
        let open = self.open_flows.last()?;
        let reported = self.locator.at(error.marker());
        if !RUNS_OFF.contains(&error.info()) || reported.line <= open.line {
            return None;
        }
        let (bracket, close, what) = match self
            .locator
            .fm
            .yaml
            .as_bytes()
            .get(open.offset.saturating_sub(self.locator.fm.offset))
        {
            Some(b'{') => ('{', '}', "mapping"),
            _ => ('[', ']', "list"),
        };
        Some(YamlError {
            pos: Pos { len: 1, ..*open },
            message: format!(
                "the frontmatter is not valid YAML: the `{bracket}` {what} that opens here (line {}, column {}) is never closed, so it runs into line {}: end it with `{close}` after its last item, or quote a value that starts with `{bracket}`",
                open.line, open.column, reported.line
            ),
        })
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
                            "the tag `{}` is not supported here (or does not fit `{text}`): write the value without it",
                            written_tag(tag)
                        ),
                    })?,
                },
                pos,
            }),
            Event::SequenceStart(..) => {
                let flow = self.enter(pos);
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next(parser)?;
                    if matches!(event, Event::SequenceEnd | Event::StreamEnd) {
                        break;
                    }
                    items.push(self.node(parser, event, span, depth + 1)?);
                }
                self.leave(flow);
                Ok(Node {
                    value: Value::Seq(items),
                    pos,
                })
            }
            Event::MappingStart(..) => {
                let flow = self.enter(pos);
                let mut entries: Vec<(Key, Node)> = Vec::new();
                // Each key's first line, to find a duplicate at once.
                let mut seen: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::new();
                loop {
                    let (event, span) = self.next(parser)?;
                    if matches!(event, Event::MappingEnd | Event::StreamEnd) {
                        break;
                    }
                    // YAML 1.1's merge key (`<<: {retry_count: 5}`) puts
                    // another mapping's fields into this one; read as a
                    // key named `<<`, those fields would go unjudged, and
                    // the document would pass on what it does not say.
                    if matches!(&event, Event::Scalar(text, ScalarStyle::Plain, _, None) if text == "<<")
                    {
                        return Err(YamlError {
                            pos: self.locator.span(&span),
                            message: "merge keys (`<<`) are not supported in handoff frontmatter: write the fields out".to_string(),
                        });
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
                                super::excerpt::short(&key.name)
                            ),
                        });
                        continue;
                    }
                    seen.insert(key.name.clone(), key.pos.line);
                    entries.push((key, value));
                }
                self.leave(flow);
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

impl Builder<'_> {
    /// Notes a collection that starts at `pos` when it is a flow one (`[`
    /// or `{`); whether it was, for `leave`.
    fn enter(&mut self, pos: Pos) -> bool {
        let at = pos.offset.saturating_sub(self.locator.fm.offset);
        let flow = matches!(self.locator.fm.yaml.as_bytes().get(at), Some(b'[' | b'{'));
        if flow {
            self.open_flows.push(pos);
        }
        flow
    }

    fn leave(&mut self, flow: bool) {
        if flow {
            self.open_flows.pop();
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
        ("float", Value::Float(f)) => Some(Value::Float(*f)),
        ("float", Value::Int(_)) => text.trim().parse().ok().map(Value::Float),
        ("int", Value::Int(_)) | ("bool", Value::Bool(_)) | ("null", Value::Null) => Some(value),
        _ => None,
    }
}

/// A tag as an author writes it: `!!int` rather than the
/// `tag:yaml.org,2002:int` it stands for.
fn written_tag(tag: &saphyr_parser::Tag) -> String {
    if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else {
        format!("{}{}", tag.handle, tag.suffix)
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
    // The core schema's infinities and not-a-number: a number where text
    // is wanted, and no whole number where one is.
    match digits {
        ".inf" | ".Inf" | ".INF" if text.starts_with('-') => {
            return Value::Float(f64::NEG_INFINITY)
        }
        ".inf" | ".Inf" | ".INF" => return Value::Float(f64::INFINITY),
        ".nan" | ".NaN" | ".NAN" if digits.len() == text.len() => return Value::Float(f64::NAN),
        _ => {}
    }
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
    fn infinities_and_not_a_number_are_numbers() {
        let (root, _) = tree("---\na: .inf\nb: -.Inf\nc: .NaN\nd: +.inf\ne: !!float .inf\nf: .infinity\ng: +.nan\n---\n");
        let root = root.unwrap();
        let value = |key: &str| root.get(key).unwrap().value.clone();
        assert_eq!(value("a"), Value::Float(f64::INFINITY));
        assert_eq!(value("b"), Value::Float(f64::NEG_INFINITY));
        assert!(matches!(value("c"), Value::Float(f) if f.is_nan()));
        assert_eq!(value("d"), Value::Float(f64::INFINITY));
        assert_eq!(value("e"), Value::Float(f64::INFINITY));
        assert_eq!(value("f"), Value::Str(".infinity".into()));
        assert_eq!(value("g"), Value::Str("+.nan".into()));
    }

    #[test]
    fn core_tags_type_their_value_and_other_tags_are_refused() {
        let (root, _) = tree("---\na: !!str 2\nb: !!int 3\nc: !!bool true\nd: !!str true\n---\n");
        let root = root.unwrap();
        assert!(matches!(root.get("a").unwrap().value, Value::Str(ref s) if s == "2"));
        assert!(matches!(root.get("b").unwrap().value, Value::Int(3)));
        assert!(matches!(root.get("c").unwrap().value, Value::Bool(true)));
        assert!(matches!(root.get("d").unwrap().value, Value::Str(ref s) if s == "true"));
        for (bad, written) in [
            ("a: !!int two", "`!!int`"),
            ("a: !custom x", "`!custom`"),
            ("a: !!binary aGk=", "`!!binary`"),
            ("a: !!timestamp 2026-11-24", "`!!timestamp`"),
        ] {
            let doc = format!("---\n{bad}\n---\n");
            let error = parse(&extract(&doc).unwrap()).unwrap_err();
            assert!(
                error.message.contains("is not supported here") && error.message.contains(written),
                "{bad}: {error:?}"
            );
            assert_eq!((error.pos.line, error.pos.column), (2, 4), "{bad}");
        }
    }

    #[test]
    fn a_merge_key_is_refused_where_it_stands() {
        for yaml in [
            "id: F1\n<<: {retry_count: 5}\n",
            "id: F1\ncheckpoints:\n  - name: a\n    <<: {status: pass}\n",
        ] {
            let doc = format!("---\n{yaml}---\n");
            let error = parse(&extract(&doc).unwrap()).unwrap_err();
            assert!(error.message.contains("merge keys"), "{yaml:?}: {error:?}");
            assert_eq!(
                &doc[error.pos.offset..error.pos.offset + error.pos.len],
                "<<"
            );
        }
        // A quoted `<<` is a key like any other.
        let (root, _) = tree("---\n\"<<\": x\n---\n");
        assert!(root.unwrap().get("<<").is_some());
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
    fn a_body_read_as_frontmatter_for_a_missing_closing_line_is_said_to_be_so() {
        // The `---` of the body closed what the author never closed.
        for (doc, line) in [
            (
                "---\nid: F1\nstage: qa\n\n# Login\n\nIt works.\n\n---\nmore\n",
                5,
            ),
            ("---\nid: F1\n\nIt works.\nStill text\n---\n", 4),
        ] {
            let error = parse(&extract(doc).unwrap()).unwrap_err();
            assert!(
                error
                    .message
                    .contains("is not closed before the document's text"),
                "{doc:?}: {error:?}"
            );
            assert_eq!((error.pos.line, error.pos.column), (line, 1), "{doc:?}");
        }
        // A comment among the fields, and a mistake in a field, are not text.
        let error =
            parse(&extract("---\nid: F1\n\n# owner\nstage qa\n---\n").unwrap()).unwrap_err();
        assert!(!error.message.contains("document's text"), "{error:?}");
        assert!(parse(&extract("---\nid: F1\n\n# owner\nstage: qa\n---\n").unwrap()).is_ok());
    }

    #[test]
    fn a_tab_error_points_at_the_tab() {
        for (yaml, at) in [
            // saphyr reports these at the plain scalar the line continues.
            ("id: F1\n\tstage: implementation\n", (3, 1)),
            (
                "checkpoints:\n  - name: a\n    status: pass\n\t- name: b\n",
                (5, 1),
            ),
            ("a:\n  b: 1\n  \tc: 2\n", (4, 3)),
            ("a: x\ty\n  z\n\t\n\tb: 2\n", (5, 1)),
            (
                "title: \u{dc}n\u{ef}c\u{f6}d\u{e9} \u{e9}t\u{e9}\n\tid: F1\n",
                (3, 1),
            ),
            // After the tab, on its line.
            ("a:\n\t- 1\n", (3, 1)),
            ("a:\n  b: [1,\n\t2]\n", (4, 1)),
            // At the block scalar's header.
            ("a: |\n\tfoo\n", (3, 1)),
            // On the tab already.
            ("a: \"x\n\ty\"\n", (3, 1)),
            ("? \ta\n: b\n", (2, 3)),
        ] {
            let doc = format!("---\n{yaml}---\n");
            let error = parse(&extract(&doc).unwrap()).unwrap_err();
            assert_eq!(
                (error.pos.line, error.pos.column),
                at,
                "{yaml:?}: {error:?}"
            );
            assert_eq!(
                &doc[error.pos.offset..error.pos.offset + error.pos.len],
                "\t",
                "{yaml:?}"
            );
            assert!(
                error.message.contains("indent with spaces, not tabs"),
                "{yaml:?}: {error:?}"
            );
        }
    }

    #[test]
    fn other_errors_stay_where_saphyr_puts_them() {
        // Not a tab error, with a tab on the next line.
        let error = parse(&extract("---\na: b\n c: d\n\te: f\n---\n").unwrap()).unwrap_err();
        assert_eq!((error.pos.line, error.pos.column), (3, 3), "{error:?}");
        assert!(!error.message.contains("tab"), "{error:?}");
        let error = parse(&extract("---\na: b\tc: d\n---\n").unwrap()).unwrap_err();
        assert_eq!((error.pos.line, error.pos.column), (2, 7), "{error:?}");
        assert!(!error.message.contains("tab"), "{error:?}");
    }

    #[test]
    fn tab_search_keeps_the_position_when_no_tab_fits() {
        // A plain scalar's error with no tab in a later line's indentation
        // (it cannot come from saphyr, but the search must not invent one).
        assert_eq!(
            find_tab("a: x\ty\n  b\n", 3, 3, TabRule::LaterIndentation),
            None
        );
        assert_eq!(
            find_tab("a: x\n   \tb\n", 3, 3, TabRule::LaterIndentation),
            None,
            "a tab right of the scalar's column is not in its indentation"
        );
        assert_eq!(
            find_tab("a: |\n  \tb\n", 3, 3, TabRule::NextLineStart),
            None
        );
        assert_eq!(find_tab("? a\n", 2, 2, TabRule::AtPosition), None);
        assert_eq!(find_tab("  - 1\n", 4, 4, TabRule::BeforeOnLine), None);
        assert_eq!(find_tab("a", 7, 7, TabRule::AtPosition), None);
    }

    #[test]
    fn non_ascii_text_keeps_byte_offsets_right() {
        let doc = "\u{feff}---\r\ntitle: \"Ünïcödé\"\r\nid: F9\r\n---\r\n";
        let (root, _) = tree(doc);
        let pos = root.unwrap().get("id").unwrap().pos;
        assert_eq!(&doc[pos.offset..pos.offset + pos.len], "F9");
        assert_eq!((pos.line, pos.column), (3, 5));
    }

    #[test]
    fn an_unclosed_bracket_is_reported_where_it_opens() {
        for (yaml, at, bracket) in [
            ("id: [unclosed\n", (2, 5), '['),
            ("id: [a, b\nstage: qa\nstatus: x\n", (2, 5), '['),
            ("id: F1\ncheckpoints: [{name: a, status: pass}\nstage: qa\n", (3, 14), '['),
            ("checkpoints: [\n  {name: a, status: pass},\n  {name: b, status: pass}\nstage: qa\n", (2, 14), '['),
            ("id: {a: 1\nstage: qa\n", (2, 5), '{'),
            // The inner list closes; the outer one does not.
            ("id: [a, [b, c]\nstage: qa\n", (2, 5), '['),
            ("title: \"\u{dc}n\u{ef}\"\nid: [a\nstage: qa\n", (3, 5), '['),
        ] {
            let doc = format!("---\n{yaml}---\n");
            let error = parse(&extract(&doc).unwrap()).unwrap_err();
            assert_eq!((error.pos.line, error.pos.column), at, "{yaml:?}: {error:?}");
            assert_eq!(
                doc[error.pos.offset..].chars().next(),
                Some(bracket),
                "{yaml:?}"
            );
            assert!(
                error.message.contains(&format!("line {}, column {}", at.0, at.1))
                    && error.message.contains("is never closed"),
                "{yaml:?}: {error:?}"
            );
        }
        // A list written over several lines with a mistake inside keeps
        // the mistake's place.
        let doc = "---\nid: [\"a\",\n  \"b\\q\"]\n---\n";
        let error = parse(&extract(doc).unwrap()).unwrap_err();
        assert_eq!(error.pos.line, 3, "{error:?}");
        assert!(!error.message.contains("never closed"), "{error:?}");
        // And one that closes is no error.
        let doc = "---\nid: [a,\n  b]\nstage: qa\n---\n";
        assert!(parse(&extract(doc).unwrap()).is_ok());
    }
}
