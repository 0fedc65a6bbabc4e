//! Loading: `phasegate.toml`, with `phasegate.local.toml` over it and the
//! embedded default under both, parsed into a spanned tree and validated
//! into a `Config`. Every problem is collected with its exact span.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{GlobBuilder, GlobSetBuilder};
use regex::Regex;

use crate::diagnostics::PARSER_NAMES;

use super::defaults::{
    embedded_toml, languages_of, nested_names, projects_below, unchecked_names, Language,
    NestedProject, RootFiles, STAGES, STANDARD_CHECKS,
};
use super::duration::parse_duration;
use super::error::{ConfigError, Problem, SourceFile};
use super::suggest::suggest;
use super::{
    CheckKind, CheckSpec, CommandLine, Config, ConfigLocation, ConfigOrigin, FileFilter, Filter,
    GateConfig, HandoffConfig, Isolation, OnFailure, OnMissing, Origin, ParserChoice, Phase,
    Profile, Workflow,
};

/// The main configuration file, at the repository root.
pub const CONFIG_FILE: &str = "phasegate.toml";
/// The personal, git-ignored override beside it.
pub const LOCAL_FILE: &str = "phasegate.local.toml";
/// The name the embedded default goes by in messages.
const EMBEDDED: &str = "<embedded default>";

/// The default timeout of a check.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Named groups a custom parser regex may use.
const REGEX_GROUPS: [&str; 6] = ["file", "line", "col", "severity", "code", "message"];

/// A `[commands]` entry that is a string: split into arguments when it can
/// be, and as written, for a check with `shell = true`.
#[derive(Debug, Clone)]
struct Command {
    line: Option<CommandLine>,
    text: String,
    /// Where the entry's value is written.
    at: At,
}

/// `[commands]` as validated.
#[derive(Debug, Default)]
struct Commands {
    valid: BTreeMap<String, Command>,
    /// The names of the entries that are wrong: their own error says so, a
    /// check that takes its command from one has nothing to add.
    broken: BTreeSet<String>,
    /// `[commands]` itself is not a table: none of its entries can be read.
    unreadable: bool,
    /// Why an entry cannot be split into arguments. Only a check that
    /// needs arguments makes that an error (and an entry no check uses):
    /// `sh -c` reads a here-document's apostrophe as it stands.
    unsplit: BTreeMap<String, Vec<Problem>>,
    /// The entries a check without `shell = true` takes.
    as_arguments: BTreeSet<String>,
    /// The entries any check takes.
    used: BTreeSet<String>,
}

/// Where a command line is written: a check's help can point at the check's
/// own `shell` option, a `[commands]` entry has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    InCheck,
    InCommands,
}

/// Where a value is: which source file, which bytes.
#[derive(Debug, Clone)]
struct At {
    file: usize,
    span: Range<usize>,
}

#[derive(Debug, Clone)]
struct Key {
    name: String,
    at: At,
}

#[derive(Debug, Clone)]
enum Val {
    Table(Vec<(Key, Node)>),
    Array(Vec<Node>),
    Str(String),
    Int(i64),
    Float,
    Bool(bool),
    Datetime,
}

#[derive(Debug, Clone)]
struct Node {
    val: Val,
    at: At,
}

impl Node {
    fn kind(&self) -> &'static str {
        match self.val {
            Val::Table(_) => "a table",
            Val::Array(_) => "a list",
            Val::Str(_) => "a string",
            Val::Int(_) => "an integer",
            Val::Float => "a float",
            Val::Bool(_) => "a boolean",
            Val::Datetime => "a date-time",
        }
    }
}

/// The spanned tree of one file. An integer TOML cannot hold (beyond 64
/// bits) makes the file invalid TOML, as the TOML specification says: its
/// place goes to `out_of_range`, never a value the file does not say.
fn convert(
    value: &toml::Spanned<toml::de::DeValue<'_>>,
    file: usize,
    out_of_range: &mut Vec<At>,
) -> Node {
    use toml::de::DeValue;
    let at = At {
        file,
        span: value.span(),
    };
    let val = match value.get_ref() {
        DeValue::String(s) => Val::Str(s.to_string()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Val::Int(n),
            Err(_) => {
                out_of_range.push(at.clone());
                Val::Int(0)
            }
        },
        DeValue::Float(_) => Val::Float,
        DeValue::Boolean(b) => Val::Bool(*b),
        DeValue::Datetime(_) => Val::Datetime,
        DeValue::Array(items) => Val::Array(
            items
                .iter()
                .map(|item| convert(item, file, out_of_range))
                .collect(),
        ),
        DeValue::Table(table) => Val::Table(convert_table(table, file, out_of_range)),
    };
    Node { val, at }
}

fn convert_table(
    table: &toml::de::DeTable<'_>,
    file: usize,
    out_of_range: &mut Vec<At>,
) -> Vec<(Key, Node)> {
    table
        .iter()
        .map(|(key, value)| {
            (
                Key {
                    name: key.get_ref().to_string(),
                    at: At {
                        file,
                        span: key.span(),
                    },
                },
                convert(value, file, out_of_range),
            )
        })
        .collect()
}

/// Lays `over` on `base`: tables merge key by key, anything else replaces.
/// Keys are found through a map: a file of many keys costs one pass.
fn merge(base: &mut Vec<(Key, Node)>, over: Vec<(Key, Node)>) {
    let mut index: HashMap<String, usize> = base
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.name.clone(), i))
        .collect();
    for (key, node) in over {
        match index.get(&key.name) {
            Some(&i) => {
                let existing = &mut base[i].1;
                match (&mut existing.val, node.val) {
                    (Val::Table(inner), Val::Table(overlay)) => merge(inner, overlay),
                    (_, val) => {
                        *existing = Node { val, at: node.at };
                    }
                }
            }
            None => {
                index.insert(key.name.clone(), base.len());
                base.push((key, node));
            }
        }
    }
}

fn get_path<'a>(entries: &'a [(Key, Node)], path: &[&str]) -> Option<&'a Node> {
    let (first, rest) = path.split_first()?;
    let node = get(entries, first)?;
    if rest.is_empty() {
        return Some(node);
    }
    match &node.val {
        Val::Table(inner) => get_path(inner, rest),
        _ => None,
    }
}

fn get<'a>(entries: &'a [(Key, Node)], name: &str) -> Option<&'a Node> {
    entries.iter().find(|(k, _)| k.name == name).map(|(_, n)| n)
}

/// Whether `sh` reads `script` as a script: `sh -n` parses it without
/// running anything. Asked only of a `[commands]` entry an argument
/// splitter cannot read that only `shell = true` checks take (a
/// here-document's apostrophe), so an unclosed quote is still an error
/// before anything runs.
fn shell_parses(script: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-n", "-c", script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Reads a configuration file; `Ok(None)` when it does not exist.
fn read(root: &Path, name: &str) -> Result<Option<SourceFile>, ConfigError> {
    let path = root.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => decode(name, bytes).map(Some),
        // A link whose target is missing is a configuration that cannot
        // be read, not none: checking nothing would pass.
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound && path.symlink_metadata().is_ok() =>
        {
            let target = std::fs::read_link(&path)
                .map(|t| format!(" `{}`", t.display()))
                .unwrap_or_default();
            Err(ConfigError::unlocated(
                name,
                format!("`{name}` is a symbolic link to{target}, which does not exist"),
                Some(format!(
                    "restore the file the link points to, or replace the link with the file `{name}`"
                )),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) if path.is_dir() => Err(ConfigError::unlocated(
            name,
            format!("`{name}` is a directory, not a file"),
            Some(format!(
                "phasegate reads its configuration from a file named `{name}`: rename or move the directory"
            )),
        )),
        Err(e) => Err(ConfigError::unlocated(
            name,
            format!("failed to read `{}`: {e}", path.display()),
            Some("check the file's permissions".to_string()),
        )),
    }
}

/// The file `name` holds `bytes`: UTF-8, or an error at the first byte
/// that is not.
fn decode(name: &str, bytes: Vec<u8>) -> Result<SourceFile, ConfigError> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceFile::new(name.to_string(), text)),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let source = SourceFile::new(name.to_string(), text);
            let (line, column) = source.line_column(offset);
            Err(ConfigError::new(vec![Problem {
                message: format!("`{name}` is not valid UTF-8 (byte {offset})"),
                source_code: source.source(),
                span: Some((offset, 1).into()),
                label: "not UTF-8".to_string(),
                help: Some("save the file as UTF-8".to_string()),
                location: Some(ConfigLocation {
                    file: name.to_string(),
                    line,
                    column,
                }),
            }]))
        }
    }
}

/// Loads the configuration of the repository at `root`.
pub fn load(root: &Path) -> Result<Config, ConfigError> {
    load_with(root, &RootFiles::in_dir(root), &mut || projects_below(root))
}

/// Loads the work tree's `phasegate.toml` and `phasegate.local.toml` over
/// the embedded default for `markers` (the files at the root of the tree
/// checked) or, with no language there, for the projects `below` gives
/// (asked only when the defaults' phases apply): a range run's are those
/// of the commit it checks, not the index's.
pub fn load_with(
    root: &Path,
    markers: &RootFiles,
    below: &mut dyn FnMut() -> Vec<NestedProject>,
) -> Result<Config, ConfigError> {
    let mut files = Vec::new();
    for name in [CONFIG_FILE, LOCAL_FILE] {
        if let Some(file) = read(root, name)? {
            files.push(file);
        }
    }
    load_files(files, &languages_of(markers), below)
}

/// Loads `phasegate.toml` as it is in a commit (`bytes`, or `None` when the
/// commit has none), ignoring the work tree's files: a gate the branch
/// under test cannot weaken. `markers` are the commit's own, so its
/// defaults are those of the language it holds; with none there, `below`
/// gives the projects below its root (asked only when the defaults'
/// phases apply).
pub fn load_committed(
    markers: &RootFiles,
    below: &mut dyn FnMut() -> Vec<NestedProject>,
    name: &str,
    bytes: Option<Vec<u8>>,
) -> Result<Config, ConfigError> {
    let files = bytes.map(|bytes| decode(name, bytes)).transpose()?;
    load_files(files.into_iter().collect(), &languages_of(markers), below)
}

/// Loads `phasegate.toml` as the index or the commit checked holds it
/// (`bytes`, shown as `name`), with the work tree's local overrides: a
/// staged run is judged by the configuration it commits, and a range by
/// the one of its end, not by an uncommitted edit of it. `markers` tell
/// the language of the tree checked; with none there, `below` gives the
/// projects below its root (the index's for a staged run, the commit's
/// for a range), asked only when the defaults' phases apply.
pub fn load_version(
    root: &Path,
    markers: &RootFiles,
    below: &mut dyn FnMut() -> Vec<NestedProject>,
    name: &str,
    bytes: Vec<u8>,
) -> Result<Config, ConfigError> {
    let mut files = vec![decode(name, bytes)?];
    files.extend(read(root, LOCAL_FILE)?);
    load_files(files, &languages_of(markers), below)
}

/// `files` over the embedded default for `languages` (those at the root)
/// or, with none there, for the projects `below` finds under the root:
/// looked for only when the default's phases apply, as the search costs
/// a read of the index.
fn load_files(
    files: Vec<SourceFile>,
    languages: &[Language],
    below: &mut dyn FnMut() -> Vec<NestedProject>,
) -> Result<Config, ConfigError> {
    let language = languages.first();
    let mut sources = vec![SourceFile::new(
        EMBEDDED.to_string(),
        embedded_toml(language, &[], &[]),
    )];
    sources.extend(files);
    let mut trees = parse_sources(&sources)?;
    // The embedded phases apply unless the configuration itself defines
    // its phases: then it says every phase there is. The personal file
    // overrides what it names, phase by phase, as it does any value: a
    // local `[phases.implementation]` leaves `qa` where it was.
    let file_defines_phases = sources
        .iter()
        .zip(&trees)
        .skip(1)
        .any(|(source, tree)| source.name != LOCAL_FILE && get(tree, "phases").is_some());
    let mut nested = Vec::new();
    if !file_defines_phases {
        // A root whose language has nothing to run (an npm workspace's
        // `package.json` with no script of its own) is no project either:
        // the projects below it are checked, not passed over.
        if language.is_none_or(|l| l.commands().is_empty()) {
            nested = below();
        }
        let defined = standard_commands_defined(&trees[1..]);
        let embedded = embedded_toml(language, &nested, &defined);
        if *embedded != *sources[0].text {
            sources[0] = SourceFile::new(EMBEDDED.to_string(), embedded);
            trees[0] = parse_sources(&sources[..1])?
                .into_iter()
                .next()
                .unwrap_or_default();
        }
    }
    let mut trees = trees.into_iter();
    let mut root_table = trees.next().unwrap_or_default();
    if file_defines_phases {
        root_table.retain(|(k, _)| k.name != "phases");
    }
    for tree in trees {
        merge(&mut root_table, tree);
    }
    validate(&root_table, &sources, languages, &nested)
}

/// The standard commands (`tests`, `lint`, ...) the `[commands]` of
/// `trees` name.
fn standard_commands_defined(trees: &[Vec<(Key, Node)>]) -> Vec<&'static str> {
    STANDARD_CHECKS
        .into_iter()
        .filter(|name| {
            trees.iter().any(|tree| match get(tree, "commands") {
                Some(Node {
                    val: Val::Table(entries),
                    ..
                }) => get(entries, name).is_some(),
                _ => false,
            })
        })
        .collect()
}

/// The spanned tree of each of `sources`, or every syntax error they have.
fn parse_sources(sources: &[SourceFile]) -> Result<Vec<Vec<(Key, Node)>>, ConfigError> {
    let mut trees = Vec::new();
    let mut problems = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        match toml::de::DeTable::parse(&source.text) {
            Ok(table) => {
                let mut out_of_range = Vec::new();
                trees.push(convert_table(table.get_ref(), index, &mut out_of_range));
                for at in out_of_range {
                    let written = source.text.get(at.span.clone()).unwrap_or_default();
                    problems.push(problem(
                        sources,
                        &at,
                        format!(
                            "`{}` is not valid TOML: the integer `{written}` is out of range",
                            source.name
                        ),
                        "out of range",
                        Some(format!(
                            "a TOML integer is from {} to {}",
                            i64::MIN,
                            i64::MAX
                        )),
                    ));
                }
            }
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                // A regex or a Windows path in a "basic string": its `\d`
                // is read as an escape. The way out is not in the syntax
                // reference's first lines.
                let help = if e.message().contains("escaped value") {
                    "in a \"double-quoted\" string `\\` starts an escape: write `\\\\` for one, or put the value in 'single quotes', where `\\` is itself ('(?P<line>\\d+)')"
                } else {
                    "see https://toml.io for the syntax"
                };
                problems.push(problem(
                    sources,
                    &At { file: index, span },
                    format!(
                        "`{}` is not valid TOML: {}",
                        source.name,
                        e.message().trim()
                    ),
                    "here",
                    Some(help.to_string()),
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(ConfigError::new(problems));
    }
    Ok(trees)
}

/// What the name of the embedded default's language adds when its checks
/// run no tests: `, which run no tests: ...`, else nothing.
fn untested(language: &Language) -> String {
    language.untested().map_or_else(String::new, |untested| {
        format!(
            ", which run no tests: package.json has no `test` script ({})",
            untested.how
        )
    })
}

/// `root_table`, the merged tree of `sources`, validated.
fn validate(
    root_table: &[(Key, Node)],
    sources: &[SourceFile],
    languages: &[Language],
    nested: &[NestedProject],
) -> Result<Config, ConfigError> {
    let language = languages.first();
    let origin = if sources.len() == 1 {
        ConfigOrigin::Embedded {
            // A monorepo's other code is not checked: the name says so.
            language: match language.filter(|_| nested.is_empty()) {
                Some(first) => Some(match unchecked_names(languages) {
                    None => format!("{}{}", first.name(), untested(first)),
                    Some(others) => format!(
                        "{}{}, not for the {others} code also here",
                        first.name(),
                        untested(first)
                    ),
                }),
                // Projects below the root: which, and how they are run.
                None => nested_names(nested).map(|projects| {
                    format!("{projects}, each project's checks run in its directory when a selected file is in it")
                }),
            },
        }
    } else {
        ConfigOrigin::File {
            files: sources[1..].iter().map(|s| s.name.clone()).collect(),
        }
    };
    let mut v = Validator {
        sources,
        problems: Vec::new(),
    };
    let config = v.config(root_table, origin);
    if v.problems.is_empty() {
        return config.ok_or_else(|| ConfigError::new(Vec::new()));
    }
    // As a reader meets them, file by file: validation walks the keys of a
    // table in name order, not in the order they are written.
    let mut problems = v.problems;
    problems.sort_by_key(|p| {
        (
            sources.iter().position(|s| s.name == p.source_code.name()),
            p.span.map_or(0, |span| span.offset()),
        )
    });
    Err(ConfigError::new(problems))
}

fn problem(
    sources: &[SourceFile],
    at: &At,
    message: String,
    label: &str,
    help: Option<String>,
) -> Problem {
    let source = &sources[at.file];
    let mut start = at.span.start.min(source.text.len());
    let mut len = at.span.end.saturating_sub(at.span.start);
    // A span from the `\n` of a CRLF ending starts at its `\r`: the end of
    // the line as a reader sees it, where miette then draws it.
    if start > 0 && source.text.as_bytes()[start - 1..].starts_with(b"\r\n") {
        start -= 1;
        if len > 0 {
            len += 1;
        }
    }
    let (line, column) = source.line_column(start);
    Problem {
        message,
        source_code: source.source(),
        span: Some((start, len).into()),
        label: label.to_string(),
        help,
        location: Some(ConfigLocation {
            file: source.name.clone(),
            line,
            column,
        }),
    }
}

/// The keys a check's table may have.
const CHECK_KEYS: &[&str] = &[
    "name",
    "command",
    "kind",
    "files",
    "timeout",
    "env",
    "cwd",
    "parser",
    "origin",
    "on_failure",
    "on_missing",
    "shell",
    "filter",
];

/// The table form of a wrong `env` value, from its `NAME=value` strings
/// when it is a list of them (`["A=1"]` gives `{ A = "1" }`), else a
/// placeholder.
fn env_example(node: &Node) -> String {
    let pairs: Option<Vec<String>> = match &node.val {
        Val::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| match &item.val {
                Val::Str(text) => {
                    let (name, value) = text.split_once('=')?;
                    (!name.is_empty()).then(|| format!("{} = {value:?}", toml_key(name)))
                }
                _ => None,
            })
            .collect(),
        _ => None,
    };
    match pairs {
        Some(pairs) => format!("{{ {} }}", pairs.join(", ")),
        None => "{ NAME = \"value\" }".to_string(),
    }
}

/// `name` as a TOML key: bare when TOML allows it, else quoted.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// Whether a check's table has an unknown key that is a near miss of
/// `command`.
fn mistyped_command(entries: &[(Key, Node)]) -> bool {
    entries.iter().any(|(key, _)| {
        !CHECK_KEYS.contains(&key.name.as_str())
            && suggest(&key.name, CHECK_KEYS.iter().copied()).as_deref() == Some("command")
    })
}

/// The keys `[gate]` may have.
const GATE_KEYS: &[&str] = &[
    "profile",
    "default_phase",
    "max_retries",
    "workflow",
    "jobs",
    "isolation",
    "snapshot_links",
    "summary",
    "filter",
    "keep_runs",
    "escalate_after",
];

/// A table as its keys are read. Each reader reports what is wrong with
/// its own value, and any mistake makes the table wrong; the other keys
/// are still read, so one pass shows every mistake.
struct Keys<'e> {
    entries: &'e [(Key, Node)],
    /// Whose keys they are, for the messages: "check `tests`".
    owner: Option<String>,
    ok: bool,
}

impl<'e> Keys<'e> {
    fn new(entries: &'e [(Key, Node)], owner: Option<String>) -> Keys<'e> {
        Keys {
            entries,
            owner,
            ok: true,
        }
    }

    /// `key`'s value as `read` makes it: None when the key is absent, or
    /// when its value is wrong (which `read` has reported).
    fn read<'s, T>(
        &mut self,
        validator: &mut Validator<'s>,
        key: &str,
        read: impl FnOnce(&mut Validator<'s>, &Node, &str) -> Option<T>,
    ) -> Option<T> {
        let node = get(self.entries, key)?;
        let what = match &self.owner {
            Some(owner) => format!("`{key}` of {owner}"),
            None => format!("`{key}`"),
        };
        let value = read(validator, node, &what);
        self.ok &= value.is_some();
        value
    }
}

struct Validator<'s> {
    sources: &'s [SourceFile],
    problems: Vec<Problem>,
}

impl Validator<'_> {
    fn error(&mut self, at: &At, message: String, label: &str, help: Option<String>) {
        self.problems
            .push(problem(self.sources, at, message, label, help));
    }

    fn location(&self, at: &At) -> Option<ConfigLocation> {
        let source = &self.sources[at.file];
        if source.name == EMBEDDED {
            return None;
        }
        let (line, column) = source.line_column(at.span.start);
        Some(ConfigLocation {
            file: source.name.clone(),
            line,
            column,
        })
    }

    /// Reports every key of `entries` not in `allowed`.
    fn known_keys(&mut self, entries: &[(Key, Node)], allowed: &[&str], context: &str) {
        for (key, _) in entries {
            if allowed.contains(&key.name.as_str()) {
                continue;
            }
            let help = match suggest(&key.name, allowed.iter().copied()) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("expected one of {}", backticked(allowed)),
            };
            self.error(
                &key.at,
                format!("unknown key `{}` in {context}", key.name),
                "unknown key",
                Some(help),
            );
        }
    }

    fn table<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [(Key, Node)]> {
        match &node.val {
            Val::Table(entries) => Some(entries),
            _ => {
                self.wrong_type(node, what, "a table");
                None
            }
        }
    }

    fn wrong_type(&mut self, node: &Node, what: &str, expected: &str) {
        self.error(
            &node.at,
            format!("{what} must be {expected}, not {}", node.kind()),
            &format!("expected {expected}"),
            None,
        );
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.val {
            Val::Str(s) => Some(s.clone()),
            _ => {
                self.wrong_type(node, what, "a string");
                None
            }
        }
    }

    fn boolean(&mut self, node: &Node, what: &str) -> Option<bool> {
        match &node.val {
            Val::Bool(b) => Some(*b),
            _ => {
                self.wrong_type(node, what, "a boolean (true or false)");
                None
            }
        }
    }

    fn integer(&mut self, node: &Node, what: &str, min: i64) -> Option<i64> {
        match &node.val {
            Val::Int(i) if *i >= min => Some(*i),
            Val::Int(i) => {
                self.error(
                    &node.at,
                    format!("{what} must be at least {min}, not {i}"),
                    "out of range",
                    None,
                );
                None
            }
            _ => {
                let expected = if min > 0 {
                    "a positive integer"
                } else {
                    "a non-negative integer"
                };
                self.wrong_type(node, what, expected);
                None
            }
        }
    }

    fn strings(&mut self, node: &Node, what: &str) -> Option<Vec<(String, At)>> {
        let Val::Array(items) = &node.val else {
            self.wrong_type(node, what, "a list of strings");
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            out.push((
                self.string(item, &format!("each entry of {what}"))?,
                item.at.clone(),
            ));
        }
        Some(out)
    }

    fn choice<T>(
        &mut self,
        node: &Node,
        what: &str,
        names: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Option<T> {
        let value = self.string(node, what)?;
        if let Some(parsed) = parse(&value) {
            return Some(parsed);
        }
        let help = match suggest(&value, names.iter().copied()) {
            Some(near) => format!("did you mean \"{near}\"?"),
            None => format!("use one of {}", quoted_list(names)),
        };
        self.error(
            &node.at,
            format!(
                "{what} must be one of {}, not \"{value}\"",
                quoted_list(names)
            ),
            "unknown value",
            Some(help),
        );
        None
    }

    /// Whether `text` has no NUL character; one is an error, `why` saying
    /// what cannot carry it ("no command line can pass").
    fn nul_free(&mut self, node: &Node, text: &str, what: &str, why: &str) -> bool {
        if !text.contains('\0') {
            return true;
        }
        self.error(
            &node.at,
            format!("{what} holds a NUL character, which {why}"),
            "NUL character",
            None,
        );
        false
    }

    /// Whether every `{files}` of the shell script `text` can be given its
    /// names quoted; one where no quoting keeps a name from running as code
    /// is an error.
    fn files_quotable(&mut self, at: &At, text: &str, what: &str) -> bool {
        let Some(place) = crate::runner::unquotable_files(text) else {
            return true;
        };
        self.error(
            at,
            format!("{what} has `{{files}}` {place}, where a file name could run as code"),
            "`{files}` here",
            Some(
                "put `{files}` where it stands for arguments (`tool {files}`, `\"{files}\"`), e.g. `set -- {files}` first and `\"${1:-default}\"` after".to_string(),
            ),
        );
        false
    }

    fn command_line(&mut self, node: &Node, what: &str, shell: bool) -> Option<CommandLine> {
        let text = self.string(node, what)?;
        if !self.nul_free(node, &text, what, "no command line can pass") {
            return None;
        }
        if shell {
            if text.trim().is_empty() {
                self.error(&node.at, format!("{what} is empty"), "empty", None);
                return None;
            }
            if !self.files_quotable(&node.at, &text, what) {
                return None;
            }
            return Some(CommandLine::Shell(text));
        }
        self.split_command(node, &text, what, Written::InCheck)
    }

    /// `text`, the string at `node`, split into arguments.
    fn split_command(
        &mut self,
        node: &Node,
        text: &str,
        what: &str,
        written: Written,
    ) -> Option<CommandLine> {
        match shlex::split(text) {
            Some(argv) if !argv.is_empty() => {
                // `{files}` stands for many arguments: it must be one of its
                // own, and only one (a shell command may use it anywhere).
                let whole = argv.iter().filter(|a| *a == "{files}").count();
                let inside = argv.iter().any(|a| a != "{files}" && a.contains("{files}"));
                if inside || whole > 1 {
                    let help = match written {
                        Written::InCheck => "make `{files}` an argument of its own (`tool --check {files}`), or set `shell = true`",
                        Written::InCommands => "make `{files}` an argument of its own (`tool --check {files}`), or set `shell = true` on the checks that take this command",
                    };
                    self.error(
                        &node.at,
                        format!("{what} uses `{{files}}` inside an argument or more than once: it is replaced by the files as separate arguments, once"),
                        "`{files}` here",
                        Some(help.to_string()),
                    );
                    return None;
                }
                Some(CommandLine::Argv(argv))
            }
            Some(_) => {
                self.error(&node.at, format!("{what} is empty"), "empty", None);
                None
            }
            None => {
                // A shell would not take an unclosed quote either; only a
                // check's own command has a `shell` option to hand it over.
                let help = match written {
                    Written::InCheck => {
                        "close the quote, or set `shell = true` to hand the command to `sh -c`"
                    }
                    Written::InCommands => "close the quote, or remove the `\\` at the end",
                };
                self.error(
                    &node.at,
                    format!("{what} cannot be split into arguments: a quote is not closed or a `\\` ends it"),
                    "unbalanced quoting",
                    Some(help.to_string()),
                );
                None
            }
        }
    }

    fn config(&mut self, root: &[(Key, Node)], origin: ConfigOrigin) -> Option<Config> {
        self.known_keys(
            root,
            &["gate", "commands", "phases", "workflows", "handoff"],
            "the configuration",
        );

        let mut commands = self.commands(get(root, "commands"));
        let phase_nodes: Vec<(Key, Node)> = match get(root, "phases") {
            Some(node) => self
                .table(node, "`phases`")
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
            None => Vec::new(),
        };
        let mut phases = BTreeMap::new();
        for (key, node) in &phase_nodes {
            if let Some(phase) =
                self.phase(key, node, &mut commands, &format!("[phases.{}]", key.name))
            {
                phases.insert(key.name.clone(), phase);
            }
        }
        // Existence is checked against every declared phase, valid or not,
        // so one mistake inside a phase does not make it "unknown" elsewhere.
        let declared: BTreeSet<String> = phase_nodes.iter().map(|(k, _)| k.name.clone()).collect();
        // A `phases` that is no table has its own error: which phases exist
        // is unknown then, and "unknown phase" wherever one is named (the
        // default phase, a workflow's) would only be noise after it.
        let phases_table = get(root, "phases").filter(|node| matches!(node.val, Val::Table(_)));
        let known = (phases_table.is_some() || get(root, "phases").is_none()).then_some(&declared);
        let workflows = self.workflows(get(root, "workflows"), known, &mut commands);
        self.unsplit_commands(&mut commands);
        let gate = self.gate(get(root, "gate"), known, &workflows);
        if let (Some(gate), Some(node)) = (&gate, phases_table) {
            if !declared.contains(&gate.default_phase)
                && get_path(root, &["gate", "default_phase"]).is_none()
            {
                self.error(
                    &node.at,
                    format!("the default phase `{}` is not defined", gate.default_phase),
                    "these phases",
                    Some(format!(
                        "define [phases.{}], or set `default_phase` under [gate] to one of the phases",
                        gate.default_phase
                    )),
                );
            }
        }
        // The checks a claim may name; unknown while a phase is broken (its
        // own error says so), and then claims are not checked against it.
        let check_names: Option<BTreeSet<String>> =
            (phases.len() == phase_nodes.len()).then(|| {
                phases
                    .values()
                    .chain(workflows.values().flat_map(|w| w.phases.values()))
                    .flat_map(|p| p.checks.iter().map(|c| c.name.clone()))
                    .collect()
            });
        let handoff = self.handoff(get(root, "handoff"), check_names.as_ref());
        Some(Config {
            origin,
            gate: gate?,
            commands: commands
                .valid
                .into_iter()
                .filter_map(|(k, c)| Some((k, c.line?)))
                .collect(),
            phases,
            workflows,
            handoff: handoff?,
        })
    }

    fn commands(&mut self, node: Option<&Node>) -> Commands {
        let mut out = Commands::default();
        let Some(node) = node else {
            return out;
        };
        let Some(entries) = self.table(node, "`[commands]`") else {
            out.unreadable = true;
            return out;
        };
        for (key, value) in entries {
            let what = format!("the command `{}`", key.name);
            let Some(text) = self.string(value, &what) else {
                out.broken.insert(key.name.clone());
                continue;
            };
            if !self.nul_free(value, &text, &what, "no command line can pass") {
                out.broken.insert(key.name.clone());
                continue;
            }
            let before = self.problems.len();
            let line = self.split_command(value, &text, &what, Written::InCommands);
            if line.is_none() {
                out.unsplit
                    .insert(key.name.clone(), self.problems.split_off(before));
            }
            out.valid.insert(
                key.name.clone(),
                Command {
                    line,
                    text,
                    at: value.at.clone(),
                },
            );
        }
        out
    }

    /// Reports the entries that cannot be split into arguments, unless only
    /// checks with `shell = true` take them and `sh` reads them.
    fn unsplit_commands(&mut self, commands: &mut Commands) {
        for (name, problems) in std::mem::take(&mut commands.unsplit) {
            let shell_only =
                commands.used.contains(&name) && !commands.as_arguments.contains(&name);
            let parses = || {
                commands
                    .valid
                    .get(&name)
                    .is_some_and(|c| shell_parses(&c.text))
            };
            if !shell_only || !parses() {
                self.problems.extend(problems);
            }
        }
    }

    /// `[gate]`; `phases` are the phases declared, `None` when that is
    /// unknown (`phases` is no table).
    fn gate(
        &mut self,
        node: Option<&Node>,
        phases: Option<&BTreeSet<String>>,
        workflows: &BTreeMap<String, Workflow>,
    ) -> Option<GateConfig> {
        let entries = node.and_then(|n| self.table(n, "`[gate]`")).unwrap_or(&[]);
        self.known_keys(entries, GATE_KEYS, "[gate]");
        let mut keys = Keys::new(entries, None);
        let gate = GateConfig {
            profile: keys
                .read(self, "profile", |v, node, what| {
                    v.choice(node, what, &Profile::NAMES, Profile::parse)
                })
                .unwrap_or(Profile::Auto),
            default_phase: keys
                .read(self, "default_phase", |v, node, what| match phases {
                    Some(phases) => {
                        v.defined(node, what, "phase", phases.iter().map(String::as_str))
                    }
                    None => v.string(node, what),
                })
                .unwrap_or_else(|| "implementation".to_string()),
            max_retries: keys
                .read(self, "max_retries", |v, node, what| {
                    v.integer(node, what, 0)
                })
                .map_or(3, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            workflow: keys.read(self, "workflow", |v, node, what| {
                v.defined(node, what, "workflow", workflows.keys().map(String::as_str))
            }),
            jobs: keys.read(self, "jobs", |v, node, what| v.count(node, what, 1)),
            isolation: keys
                .read(self, "isolation", |v, node, what| {
                    v.choice(node, what, &Isolation::NAMES, Isolation::parse)
                })
                .unwrap_or(Isolation::Worktree),
            snapshot_links: keys
                .read(self, "snapshot_links", Validator::snapshot_links)
                .unwrap_or_default(),
            summary: keys
                .read(self, "summary", |v, node, what| v.count(node, what, 1))
                .unwrap_or(5),
            filter: keys.read(self, "filter", |v, node, what| {
                v.choice(node, what, &Filter::NAMES, Filter::parse)
            }),
            keep_runs: keys
                .read(self, "keep_runs", |v, node, what| v.count(node, what, 1))
                .unwrap_or(20),
            escalate_after: keys
                .read(self, "escalate_after", Validator::escalate_after)
                .unwrap_or(3),
        };
        keys.ok.then_some(gate)
    }

    /// A count of at least `min`.
    fn count(&mut self, node: &Node, what: &str, min: i64) -> Option<usize> {
        let n = self.integer(node, what, min)?;
        Some(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// `snapshot_links`: paths inside the repository, relative to its
    /// root, that name no part of git's own (`.git`).
    fn snapshot_links(&mut self, node: &Node, what: &str) -> Option<Vec<std::path::PathBuf>> {
        use std::path::Component;
        let mut links = Vec::new();
        let mut ok = true;
        for (value, at) in self.strings(node, what)? {
            let path = std::path::Path::new(&value);
            let inside = path
                .components()
                .all(|c| matches!(c, Component::CurDir | Component::Normal(_)))
                && path.components().any(|c| matches!(c, Component::Normal(_)))
                && !path.components().any(|c| c.as_os_str() == ".git");
            if inside {
                links.push(path.components().collect());
            } else {
                ok = false;
                self.error(
                    &at,
                    format!("each entry of {what} must be a path inside the repository, relative to its root, not \"{value}\""),
                    "not a path inside the repository",
                    Some("name a directory of the work tree the checkout lacks, such as \"node_modules\" or \"web/node_modules\"".to_string()),
                );
            }
        }
        ok.then_some(links)
    }

    /// `escalate_after`: at least 2, and no more runs than the history
    /// keeps (a count beyond them could never be reached).
    fn escalate_after(&mut self, node: &Node, what: &str) -> Option<usize> {
        let most = crate::state::MAX_HISTORY;
        let n = self.integer(node, what, 2)?;
        match usize::try_from(n) {
            Ok(count) if count <= most => Some(count),
            _ => {
                self.error(
                    &node.at,
                    format!("{what} must be at most {most}, not {n}"),
                    "out of range",
                    Some(format!(
                        "phasegate keeps the last {most} runs: the same errors could never be counted {n} times"
                    )),
                );
                None
            }
        }
    }

    /// The name of a `kind` (phase, workflow) the file defines, among
    /// `defined`.
    fn defined<'a>(
        &mut self,
        node: &Node,
        what: &str,
        kind: &str,
        defined: impl Iterator<Item = &'a str> + Clone,
    ) -> Option<String> {
        let name = self.string(node, what)?;
        if defined.clone().any(|d| d == name) {
            return Some(name);
        }
        self.unknown_name(
            node,
            kind,
            &name,
            defined,
            &format!("define it under [{kind}s]"),
        );
        None
    }

    fn unknown_name<'a>(
        &mut self,
        node: &Node,
        what: &str,
        name: &str,
        known: impl Iterator<Item = &'a str> + Clone,
        otherwise: &str,
    ) {
        let help = match suggest(name, known.clone()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => {
                let list: Vec<&str> = known.collect();
                if list.is_empty() {
                    otherwise.to_string()
                } else {
                    format!("defined: {}; or {otherwise}", backticked(&list))
                }
            }
        };
        self.error(
            &node.at,
            format!("unknown {what} `{name}`"),
            &format!("no such {what}"),
            Some(help),
        );
    }

    fn phase(
        &mut self,
        key: &Key,
        node: &Node,
        commands: &mut Commands,
        context: &str,
    ) -> Option<Phase> {
        let entries = self.table(node, &format!("`{context}`"))?;
        self.known_keys(entries, &["checks"], context);
        let Some(checks) = get(entries, "checks") else {
            self.error(
                &key.at,
                format!("{context} has no `checks` list"),
                "this phase",
                Some(
                    "add `checks = [...]`, or `checks = []` for a phase that runs no check"
                        .to_string(),
                ),
            );
            return None;
        };
        let Val::Array(items) = &checks.val else {
            self.wrong_type(checks, "`checks`", "a list of checks");
            return None;
        };
        let mut specs: Vec<CheckSpec> = Vec::new();
        // By the name in lower case: `Tests` and `tests` read as one check,
        // and their logs (`tests.log`) are one file where names are not
        // case-sensitive (macOS, Windows).
        let mut seen: HashMap<String, (String, At)> = HashMap::new();
        let mut ok = true;
        for item in items {
            let Some((spec, name_at)) = self.check(item, commands, context) else {
                ok = false;
                continue;
            };
            if let Some((first_name, first)) = seen.get(&spec.name.to_lowercase()) {
                let (line, _) = self.sources[first.file].line_column(first.span.start);
                let message = if *first_name == spec.name {
                    format!("check `{}` is defined twice in {context}", spec.name)
                } else {
                    format!(
                        "check `{}` differs only in case from check `{first_name}` in {context}",
                        spec.name
                    )
                };
                self.error(
                    &name_at,
                    message,
                    "second definition",
                    Some(format!(
                        "the first is on line {line}; give each check a unique name"
                    )),
                );
                ok = false;
                continue;
            }
            seen.insert(spec.name.to_lowercase(), (spec.name.clone(), name_at));
            specs.push(spec);
        }
        ok.then_some(Phase { checks: specs })
    }

    fn check(
        &mut self,
        node: &Node,
        commands: &mut Commands,
        context: &str,
    ) -> Option<(CheckSpec, At)> {
        let (entries, name_node) = self.check_shape(node, context)?;
        let name = self.check_name(name_node)?;
        let mut keys = Keys::new(entries, Some(format!("check `{name}`")));

        let shell = keys
            .read(self, "shell", Validator::boolean)
            .unwrap_or(false);
        let kind_value = keys.read(self, "kind", |v, node, what| {
            v.choice(node, what, &["code", "custom", "verifier"], |s| match s {
                "code" => Some(CheckKind::Code),
                "custom" => Some(CheckKind::Custom),
                "verifier" => Some(CheckKind::Verifier),
                _ => None,
            })
        });
        let own_command = keys.read(self, "command", |v, node, what| {
            v.command_line(node, what, shell)
        });
        let command = match own_command {
            Some(command) => Some(command),
            // A check whose own keys are wrong is left out whatever
            // [commands] holds: looking its name up there adds nothing. So
            // is one whose `command` is mistyped (`comand`): its unknown
            // key says so, and "add it under [commands]" would mislead.
            None if keys.ok && !mistyped_command(entries) => {
                Some(self.named_command(&name, name_node, shell, commands)?)
            }
            None => None,
        };
        let has_command = get(entries, "command").is_some();
        let kind = kind_value.unwrap_or(if has_command {
            CheckKind::Custom
        } else {
            CheckKind::Code
        });
        if let (Some(CheckKind::Code), true, Some(kind_node)) =
            (kind_value, has_command, get(entries, "kind"))
        {
            self.error(
                &kind_node.at,
                format!("check `{name}` is of kind \"code\" but has its own `command`"),
                "kind \"code\"",
                Some("a \"code\" check takes its command from [commands]: remove `command`, or the `kind`".to_string()),
            );
            keys.ok = false;
        }

        let (files, file_filter) = match keys.read(self, "files", Validator::globs) {
            Some((files, set)) => (files, Some(set)),
            None => (Vec::new(), None),
        };
        let timeout = keys
            .read(self, "timeout", Validator::timeout)
            .unwrap_or(DEFAULT_TIMEOUT);
        let env = keys
            .read(self, "env", |v, node, what| v.check_env(node, what, &name))
            .unwrap_or_default();
        let cwd = keys.read(self, "cwd", Validator::check_cwd);
        let parser = keys
            .read(self, "parser", Validator::parser)
            .unwrap_or(ParserChoice::Auto);
        let origin = keys
            .read(self, "origin", |v, node, what| {
                v.choice(node, what, &Origin::NAMES, Origin::parse)
            })
            .unwrap_or_else(|| Origin::for_check_name(&name));
        let on_failure = keys
            .read(self, "on_failure", |v, node, what| {
                v.choice(node, what, &OnFailure::NAMES, OnFailure::parse)
            })
            .unwrap_or(OnFailure::Block);
        let on_missing = keys
            .read(self, "on_missing", |v, node, what| {
                v.choice(node, what, &OnMissing::NAMES, OnMissing::parse)
            })
            .unwrap_or(OnMissing::Block);
        let filter = keys.read(self, "filter", |v, node, what| {
            v.choice(node, what, &Filter::NAMES, Filter::parse)
        });
        let command = command?;
        if !keys.ok {
            return None;
        }
        let command_location = match get(entries, "command") {
            Some(node) => self.location(&node.at),
            None => commands
                .valid
                .get(&name)
                .and_then(|entry| self.location(&entry.at)),
        };
        Some((
            CheckSpec {
                location: self.location(&name_node.at),
                command_location,
                name,
                kind,
                command,
                files,
                file_filter,
                timeout,
                env,
                cwd,
                parser,
                origin,
                on_failure,
                on_missing,
                filter,
            },
            name_node.at.clone(),
        ))
    }

    /// A check's keys and the node that names it: a table's entries, or
    /// none for a check written as its bare name (`checks = ["tests"]`).
    fn check_shape<'n>(
        &mut self,
        node: &'n Node,
        context: &str,
    ) -> Option<(&'n [(Key, Node)], &'n Node)> {
        match &node.val {
            Val::Str(_) => Some((&[], node)),
            Val::Table(entries) => {
                self.known_keys(entries, CHECK_KEYS, &format!("a check of {context}"));
                let Some(name_node) = get(entries, "name") else {
                    self.error(
                        &node.at,
                        format!("a check of {context} has no `name`"),
                        "this check",
                        Some("add `name = \"...\"`".to_string()),
                    );
                    return None;
                };
                Some((entries, name_node))
            }
            _ => {
                self.error(
                    &node.at,
                    format!("a check must be a table like {{ name = \"tests\" }} or a check name, not {}", node.kind()),
                    "not a check",
                    None,
                );
                None
            }
        }
    }

    /// A check's name: a string, not blank, printable.
    fn check_name(&mut self, node: &Node) -> Option<String> {
        let name = self.string(node, "a check's `name`")?;
        if name.trim().is_empty() {
            self.error(
                &node.at,
                "a check's name cannot be empty".to_string(),
                "empty name",
                None,
            );
            return None;
        }
        if name.chars().any(char::is_control) {
            self.error(
                &node.at,
                "a check's name cannot hold control characters (a newline, a tab, NUL…)"
                    .to_string(),
                "control character",
                Some("name the check with printable characters".to_string()),
            );
            return None;
        }
        Some(name)
    }

    /// The command of a check without its own: the `[commands]` entry of
    /// its name, as written for a shell, split into arguments otherwise.
    /// None when there is none, or it is wrong (its own error says so).
    fn named_command(
        &mut self,
        name: &str,
        name_node: &Node,
        shell: bool,
        commands: &mut Commands,
    ) -> Option<CommandLine> {
        if let Some(command) = commands.valid.get(name) {
            commands.used.insert(name.to_string());
            // The shell gets the command as the file wrote it: joining the
            // split arguments would lose their quoting.
            if shell {
                let what = format!("the command of `[commands] {name}`, which this check runs with `shell = true`,");
                if !self.files_quotable(&name_node.at, &command.text, &what) {
                    return None;
                }
                return Some(CommandLine::Shell(command.text.clone()));
            }
            commands.as_arguments.insert(name.to_string());
            // If it cannot be split, the entry's own error says so.
            return command.line.clone();
        }
        if !commands.unreadable && !commands.broken.contains(name) {
            let help = match suggest(name, commands.valid.keys().map(String::as_str)) {
                Some(near) => format!("did you mean `{near}`? Or give the check a `command`"),
                None => format!(
                    "add `{name} = \"...\"` under [commands], or give the check a `command`"
                ),
            };
            self.error(
                &name_node.at,
                format!(
                    "check `{name}` has no command: no `command` key and no `{name}` in [commands]"
                ),
                "no command for this check",
                Some(help),
            );
        }
        None
    }

    /// A check's `env` table: each variable a valid name with a string
    /// value. Every wrong one is reported; any makes the whole table wrong.
    fn check_env(
        &mut self,
        node: &Node,
        what: &str,
        check: &str,
    ) -> Option<BTreeMap<String, String>> {
        let Val::Table(vars) = &node.val else {
            // `env = ["A=1"]` is how a shell or a Dockerfile writes it.
            self.error(
                &node.at,
                format!("{what} must be a table, not {}", node.kind()),
                "expected a table",
                Some(format!(
                    "write each variable as a key with a string value: env = {}",
                    env_example(node)
                )),
            );
            return None;
        };
        let mut env = BTreeMap::new();
        let mut ok = true;
        for (key, value) in vars {
            // The environment is `NAME=value` strings ending at a NUL:
            // `A=B` would set `A`, and a NUL cannot be passed.
            if key.name.is_empty() || key.name.contains(['=', '\0']) {
                self.error(
                    &key.at,
                    format!(
                        "{what} names a variable `{}` that cannot exist",
                        key.name.escape_debug()
                    ),
                    "invalid variable name",
                    Some("a variable's name is not empty and holds no `=` or NUL".to_string()),
                );
                ok = false;
                continue;
            }
            let variable = format!("the variable `{}` of check `{check}`", key.name);
            // A number or a boolean: the environment holds text only.
            let written = match value.val {
                Val::Int(n) => Some(n.to_string()),
                Val::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            if let Some(written) = written {
                self.error(
                    &value.at,
                    format!("{variable} must be a string, not {}", value.kind()),
                    "expected a string",
                    Some(format!("quote it: {} = \"{written}\"", toml_key(&key.name))),
                );
                ok = false;
                continue;
            }
            match self.string(value, &variable) {
                Some(v) if self.nul_free(value, &v, &variable, "no environment can hold") => {
                    env.insert(key.name.clone(), v);
                }
                _ => ok = false,
            }
        }
        ok.then_some(env)
    }

    /// A check's `cwd`: a directory relative to the repository root that
    /// stays inside it.
    fn check_cwd(&mut self, node: &Node, what: &str) -> Option<PathBuf> {
        let dir = self.string(node, what)?;
        if !self.nul_free(node, &dir, what, "no path can hold") {
            return None;
        }
        let path = PathBuf::from(dir);
        if path.is_absolute() {
            self.error(
                &node.at,
                format!("{what} must be relative to the repository root"),
                "absolute path",
                Some("an absolute path ties the configuration to one machine".to_string()),
            );
            return None;
        }
        if path
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            self.error(
                &node.at,
                format!("{what} must stay inside the repository"),
                "`..`",
                Some("name a directory of the repository, relative to its root".to_string()),
            );
            return None;
        }
        Some(path)
    }

    fn globs(&mut self, node: &Node, what: &str) -> Option<(Vec<String>, FileFilter)> {
        let patterns = self.strings(node, what)?;
        // No glob matches no file: the check would never run, and the gate
        // would pass it every time. `checks = []` and `on_failure = "skip"`
        // are the ways to turn a check off.
        if patterns.is_empty() {
            self.error(
                &node.at,
                format!("{what} is empty: the check would never run"),
                "no glob",
                Some("list the files it is for, such as [\"*.md\"], or remove `files` to run it on every change".to_string()),
            );
            return None;
        }
        let (filter, ok) = self.compile_globs(&patterns, what);
        ok.then(|| (patterns.into_iter().map(|(p, _)| p).collect(), filter))
    }

    fn compile_globs(&mut self, patterns: &[(String, At)], what: &str) -> (FileFilter, bool) {
        let mut builder = GlobSetBuilder::new();
        let mut negated = Vec::new();
        let mut ok = true;
        let mut taken_in = false;
        for (pattern, at) in patterns {
            // `!` leaves out; `\!` is a name that starts with `!`.
            let (leaves_out, glob) = match pattern.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (
                    false,
                    pattern
                        .strip_prefix("\\!")
                        .map_or(pattern.as_str(), |_| &pattern[1..]),
                ),
            };
            // The last pattern that matches decides, so a `!` one before
            // any other leaves out of nothing: what it meant is said.
            if leaves_out && !taken_in {
                self.error(
                    at,
                    format!("{what}: `{pattern}` leaves out files no pattern before it takes in"),
                    "nothing to leave out",
                    Some(format!(
                        "the last pattern that matches a file decides: put `{pattern}` after the globs it narrows, e.g. [\"**\", \"{pattern}\"]"
                    )),
                );
                ok = false;
                continue;
            }
            taken_in |= !leaves_out;
            let Some(globs) = gitignore_globs(glob) else {
                self.error(
                    at,
                    format!("{what}: `{pattern}` names no file"),
                    "empty pattern",
                    Some("name files with a glob such as `*.md` or `docs/`".to_string()),
                );
                ok = false;
                continue;
            };
            for full in globs {
                match GlobBuilder::new(&full).literal_separator(true).build() {
                    Ok(glob) => {
                        builder.add(glob);
                        negated.push(leaves_out);
                    }
                    Err(e) => {
                        self.error(
                            at,
                            format!("{what}: `{pattern}` is not a valid glob: {}", e.kind()),
                            "invalid glob",
                            Some("globs use `*`, `**`, `?`, `[abc]` and `{a,b}`".to_string()),
                        );
                        ok = false;
                        break;
                    }
                }
            }
        }
        match builder.build() {
            Ok(set) => (FileFilter::new(set, negated), ok),
            Err(_) => (FileFilter::empty(), false),
        }
    }

    fn timeout(&mut self, node: &Node, what: &str) -> Option<Duration> {
        const ACCEPTED: &str =
            "a duration such as \"90s\" or \"10m\", or a positive number of seconds";
        const HELP: &str = "write a duration such as \"90s\", \"10m\" or \"1m30s\", or a number of seconds such as 90";
        let result = match &node.val {
            Val::Int(seconds) if *seconds > 0 => parse_duration(&format!("{seconds}s")),
            Val::Str(text) => parse_duration(text),
            Val::Int(seconds) => {
                self.error(
                    &node.at,
                    format!("{what} must be {ACCEPTED}, not {seconds}"),
                    "not a positive duration",
                    Some(HELP.to_string()),
                );
                return None;
            }
            _ => {
                self.error(
                    &node.at,
                    format!("{what} must be {ACCEPTED}, not {}", node.kind()),
                    "invalid duration",
                    Some(HELP.to_string()),
                );
                return None;
            }
        };
        match result {
            Ok(duration) => Some(duration),
            Err(reason) => {
                self.error(
                    &node.at,
                    format!("{what} is not a valid duration: {reason}"),
                    "invalid duration",
                    Some(HELP.to_string()),
                );
                None
            }
        }
    }

    fn parser(&mut self, node: &Node, what: &str) -> Option<ParserChoice> {
        let text = self.string(node, what)?;
        if text == "auto" {
            return Some(ParserChoice::Auto);
        }
        if PARSER_NAMES.contains(&text.as_str()) {
            return Some(ParserChoice::Named(text));
        }
        if !text.contains("(?P<") && !text.contains("(?<") {
            // A regex with its groups unnamed (`^([^:]+):(\d+)`) is no
            // parser's name: what it lacks is said, not "unknown parser".
            if text.contains(['(', '\\', '^', '$', '[', '*', '+', '?', '|'])
                && Regex::new(&text).is_ok()
            {
                self.error(
                    &node.at,
                    format!("{what} is a regex without named groups: it needs at least `file` and `line`"),
                    "no named groups",
                    Some("name the groups: (?P<file>...) for the path, (?P<line>\\d+) for the line, and optionally `col`, `severity`, `code` and `message`".to_string()),
                );
                return None;
            }
            let help = match suggest(&text, PARSER_NAMES.iter().copied()) {
                Some(near) => format!("did you mean \"{near}\"?"),
                None => format!(
                    "use one of {}, or a regex with named groups such as (?P<file>...) and (?P<line>...)",
                    quoted_list(PARSER_NAMES)
                ),
            };
            self.error(
                &node.at,
                format!("{what}: unknown parser \"{text}\""),
                "unknown parser",
                Some(help),
            );
            return None;
        }
        let regex = match Regex::new(&text) {
            Ok(regex) => regex,
            Err(e) => {
                let reason = e.to_string();
                let last = reason.lines().last().unwrap_or(&reason).trim().to_string();
                self.error(
                    &node.at,
                    format!("{what} is not a valid regex: {last}"),
                    "invalid regex",
                    None,
                );
                return None;
            }
        };
        let names: Vec<&str> = regex.capture_names().flatten().collect();
        for name in &names {
            if !REGEX_GROUPS.contains(name) {
                let help = match suggest(name, REGEX_GROUPS) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => format!("the groups are {}", backticked(&REGEX_GROUPS)),
                };
                self.error(
                    &node.at,
                    format!("{what} has an unknown group `{name}`"),
                    "unknown group",
                    Some(help),
                );
                return None;
            }
        }
        let missing: Vec<&str> = ["file", "line"]
            .into_iter()
            .filter(|g| !names.contains(g))
            .collect();
        if !missing.is_empty() {
            self.error(
                &node.at,
                format!(
                    "{what} needs the named groups `file` and `line`; it lacks {}",
                    backticked(&missing)
                ),
                "missing groups",
                Some("name them with (?P<file>...) and (?P<line>\\d+)".to_string()),
            );
            return None;
        }
        Some(ParserChoice::Regex(regex))
    }

    /// `[workflows]`; `phases` as for `gate`.
    fn workflows(
        &mut self,
        node: Option<&Node>,
        phases: Option<&BTreeSet<String>>,
        commands: &mut Commands,
    ) -> BTreeMap<String, Workflow> {
        let mut out = BTreeMap::new();
        let Some(entries) = node.and_then(|n| self.table(n, "`[workflows]`")) else {
            return out;
        };
        for (key, node) in entries {
            let context = format!("[workflows.{}]", key.name);
            let Some(flow) = self.table(node, &format!("`{context}`")) else {
                continue;
            };
            self.known_keys(flow, &["phases"], &context);
            let mut workflow = Workflow::default();
            if let Some(flow_phases) = get(flow, "phases")
                .and_then(|n| self.table(n, &format!("`[workflows.{}.phases]`", key.name)))
            {
                for (phase_key, phase_node) in flow_phases {
                    if let Some(phases) = phases.filter(|p| !p.contains(&phase_key.name)) {
                        let at_node = Node {
                            val: Val::Str(String::new()),
                            at: phase_key.at.clone(),
                        };
                        self.unknown_name(
                            &at_node,
                            "phase",
                            &phase_key.name,
                            phases.iter().map(String::as_str),
                            "define it under [phases] first",
                        );
                        continue;
                    }
                    let phase_context =
                        format!("[workflows.{}.phases.{}]", key.name, phase_key.name);
                    if let Some(phase) = self.phase(phase_key, phase_node, commands, &phase_context)
                    {
                        workflow.phases.insert(phase_key.name.clone(), phase);
                    }
                }
            }
            out.insert(key.name.clone(), workflow);
        }
        out
    }

    fn handoff(
        &mut self,
        node: Option<&Node>,
        check_names: Option<&BTreeSet<String>>,
    ) -> Option<HandoffConfig> {
        let mut config = HandoffConfig {
            paths: vec!["handoffs/**/*.md".to_string()],
            path_filter: FileFilter::empty(),
            checkpoints: BTreeMap::new(),
            claims: [("tests_passing", "tests"), ("no_lint_errors", "lint")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let entries = node
            .and_then(|n| self.table(n, "`[handoff]`"))
            .unwrap_or(&[]);
        self.known_keys(entries, &["paths", "checkpoints", "claims"], "[handoff]");
        let mut keys = Keys::new(entries, Some("[handoff]".to_string()));
        let paths = keys.read(self, "paths", Validator::strings);
        if let Some(checkpoints) =
            keys.read(self, "checkpoints", |v, node, _| v.stage_checkpoints(node))
        {
            config.checkpoints = checkpoints;
        }
        if let Some(claims) = keys.read(self, "claims", |v, node, _| {
            v.claims(node, &config, check_names)
        }) {
            config.claims = claims;
        }
        let paths = paths.unwrap_or_else(|| {
            let nowhere = At {
                file: 0,
                span: 0..0,
            };
            config
                .paths
                .iter()
                .map(|p| (p.clone(), nowhere.clone()))
                .collect()
        });
        let (set, globs_ok) = self.compile_globs(&paths, "`paths` of [handoff]");
        config.path_filter = set;
        config.paths = paths.into_iter().map(|(p, _)| p).collect();
        (keys.ok && globs_ok).then_some(config)
    }

    /// `[handoff.checkpoints]`: a stage's required checkpoints, in place
    /// of its default ones.
    fn stage_checkpoints(&mut self, node: &Node) -> Option<BTreeMap<String, Vec<String>>> {
        let table = self.table(node, "`[handoff.checkpoints]`")?;
        let mut checkpoints = BTreeMap::new();
        let mut ok = true;
        for (key, value) in table {
            if !STAGES.contains(&key.name.as_str()) {
                let at_node = Node {
                    val: Val::Str(String::new()),
                    at: key.at.clone(),
                };
                self.unknown_name(
                    &at_node,
                    "stage",
                    &key.name,
                    STAGES.iter().copied(),
                    "use a stage name",
                );
                ok = false;
                continue;
            }
            let Some(list) = self.strings(value, &format!("the checkpoints of `{}`", key.name))
            else {
                ok = false;
                continue;
            };
            // A document that lists a checkpoint twice is invalid, so a
            // stage that requires one twice is a mistake too.
            let mut seen: HashMap<&str, &At> = HashMap::new();
            for (name, at) in &list {
                if let Some(first) = seen.get(name.as_str()) {
                    let (line, _) = self.sources[first.file].line_column(first.span.start);
                    self.error(
                        at,
                        format!(
                            "checkpoint `{name}` is listed twice for `{}` in [handoff.checkpoints]",
                            key.name
                        ),
                        "second listing",
                        Some(format!(
                            "the first is on line {line}; list each checkpoint once"
                        )),
                    );
                    ok = false;
                    continue;
                }
                seen.insert(name, at);
            }
            checkpoints.insert(key.name.clone(), list.into_iter().map(|(s, _)| s).collect());
        }
        ok.then_some(checkpoints)
    }

    /// `[handoff.claims]`: checkpoint → the check that verifies it. Entries
    /// add to the default claims or replace them; an empty check name
    /// takes one away.
    fn claims(
        &mut self,
        node: &Node,
        config: &HandoffConfig,
        check_names: Option<&BTreeSet<String>>,
    ) -> Option<BTreeMap<String, String>> {
        let table = self.table(node, "`[handoff.claims]`")?;
        let checkpoints: BTreeSet<&str> = STAGES
            .iter()
            .flat_map(|stage| {
                crate::handoff::validate::default_checkpoints(stage)
                    .iter()
                    .copied()
            })
            .chain(config.checkpoints.values().flatten().map(String::as_str))
            .collect();
        let mut claims = config.claims.clone();
        let mut ok = true;
        for (key, value) in table {
            // A custom checkpoint may be claimed; a near miss of a known
            // one is a typo that would switch a claim off.
            if !checkpoints.contains(key.name.as_str()) {
                if let Some(near) = suggest(&key.name, checkpoints.iter().copied()) {
                    self.error(
                        &key.at,
                        format!("unknown checkpoint `{}` in [handoff.claims]", key.name),
                        "no such checkpoint",
                        Some(format!("did you mean `{near}`?")),
                    );
                    ok = false;
                    continue;
                }
            }
            match self.string(value, &format!("the claim `{}`", key.name)) {
                Some(check) if check.is_empty() => {
                    claims.remove(&key.name);
                }
                Some(check) => {
                    if let Some(names) = check_names.filter(|names| !names.contains(&check)) {
                        self.unknown_name(
                            value,
                            "check",
                            &check,
                            names.iter().map(String::as_str),
                            "name a check of a phase",
                        );
                        ok = false;
                        continue;
                    }
                    claims.insert(key.name.clone(), check);
                }
                None => ok = false,
            }
        }
        ok.then_some(claims)
    }
}

/// The globs a `files` pattern stands for, read as .gitignore reads it:
/// a pattern with a `/` at its start or in its middle is anchored at the
/// repository root, any other matches at any depth; a pattern matches a
/// file of its name and everything beneath a directory of its name, and one
/// that ends with `/` only a directory. `None` for a pattern with no name in
/// it (`""`, `/`).
fn gitignore_globs(pattern: &str) -> Option<Vec<String>> {
    let directory_only = pattern.ends_with('/');
    let name = pattern.trim_end_matches('/');
    let anchored = name.contains('/');
    let name = name.trim_start_matches('/');
    if name.is_empty() {
        return None;
    }
    let base = if anchored {
        name.to_string()
    } else {
        format!("**/{name}")
    };
    let beneath = format!("{base}/**");
    Some(if directory_only {
        vec![beneath]
    } else {
        vec![base, beneath]
    })
}

fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}
