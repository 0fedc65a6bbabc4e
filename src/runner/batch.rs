//! `{files}` expansion: the selected files as separate arguments, split into
//! as many invocations as the operating system's argument limit requires.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::config::CommandLine;

use super::{sys, Invocation};

/// Linux refuses any single argument longer than this (`MAX_ARG_STRLEN`).
const MAX_SINGLE_ARG: usize = 128 * 1024;

/// What a command line may take for its arguments: half of `ARG_MAX` (the
/// environment shares the limit), at most 1 MiB, at least 32 KiB.
fn budget() -> usize {
    (sys::arg_max() / 2).clamp(32 * 1024, 1024 * 1024)
}

/// The cost of one argument: its bytes, the NUL and the pointer to it.
fn cost(arg: &[u8]) -> usize {
    arg.len() + 1 + std::mem::size_of::<usize>()
}

/// A relative path that starts with `-` would read as an option.
fn safe_path(file: &Path) -> OsString {
    if file.as_os_str().as_bytes().starts_with(b"-") {
        Path::new(".").join(file).into_os_string()
    } else {
        file.as_os_str().to_os_string()
    }
}

/// Quotes `s` for `sh`, whatever bytes it holds.
pub fn shell_quote(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'\'');
    for &b in s {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// The invocations that run `command` over `files`. Without a `{files}`
/// token the command runs once, as it is.
pub fn expand_invocations(command: &CommandLine, files: &[PathBuf]) -> Vec<Invocation> {
    expand_with_budget(command, files, budget())
}

fn expand_with_budget(command: &CommandLine, files: &[PathBuf], budget: usize) -> Vec<Invocation> {
    let files: Vec<OsString> = files.iter().map(|f| safe_path(f)).collect();
    match command {
        CommandLine::Argv(argv) => {
            let Some(at) = argv.iter().position(|a| a == "{files}") else {
                return vec![Invocation::new(argv)];
            };
            let fixed: usize = argv.iter().map(|a| cost(a.as_bytes())).sum();
            let room = budget.saturating_sub(fixed).max(1);
            batches(&files, room, |f| cost(f.as_bytes()))
                .into_iter()
                .map(|batch| {
                    let mut out: Vec<OsString> = argv[..at].iter().map(OsString::from).collect();
                    out.extend(batch.iter().map(|f| (*f).clone()));
                    out.extend(argv[at + 1..].iter().map(OsString::from));
                    Invocation { argv: out }
                })
                .collect()
        }
        CommandLine::Shell(script) => {
            let shell = |script: Vec<u8>| Invocation {
                argv: vec!["sh".into(), "-c".into(), OsString::from_vec(script)],
            };
            let tokens = files_tokens(script);
            if tokens.is_empty() {
                return vec![shell(script.clone().into_bytes())];
            }
            // Names no quoting can make safe are handed to the script as
            // its arguments instead, which it never reads as code.
            let as_arguments = tokens.iter().any(|(_, q)| q.unquotable());
            // The script is one argument, so it must also stay under the
            // single-argument limit, with the names written once for each
            // `{files}` (and the quotes closed around them), and once more
            // as arguments.
            let room = (budget
                .min(MAX_SINGLE_ARG)
                .saturating_sub(script.len() + 2 * tokens.len() + 64)
                / (tokens.len() + usize::from(as_arguments)))
            .max(1);
            batches(&files, room, |f| shell_quote(f.as_bytes()).len() + 1)
                .into_iter()
                .map(|batch| {
                    let mut quoted = Vec::new();
                    for (i, f) in batch.iter().enumerate() {
                        if i > 0 {
                            quoted.push(b' ');
                        }
                        quoted.extend(shell_quote(f.as_bytes()));
                    }
                    let mut bytes = Vec::new();
                    let mut from = 0;
                    for &(at, quote) in &tokens {
                        bytes.extend_from_slice(&script.as_bytes()[from..at]);
                        // Inside quotes, the quote is closed around the
                        // names: a name quoted for `sh` within `"..."` would
                        // have its `$(...)` run.
                        let close: &[u8] = match quote {
                            Quote::None | Quote::Unquotable | Quote::HereDocument => b"",
                            Quote::Single => b"'",
                            Quote::Double => b"\"",
                        };
                        bytes.extend_from_slice(close);
                        if quote.unquotable() {
                            bytes.extend_from_slice(b"\"$@\"");
                        } else {
                            bytes.extend_from_slice(&quoted);
                        }
                        bytes.extend_from_slice(close);
                        from = at + FILES_TOKEN.len();
                    }
                    bytes.extend_from_slice(&script.as_bytes()[from..]);
                    let mut invocation = shell(bytes);
                    if as_arguments {
                        invocation.argv.push("sh".into());
                        invocation.argv.extend(batch.iter().map(|f| (*f).clone()));
                    }
                    invocation
                })
                .collect()
        }
    }
}

const FILES_TOKEN: &str = "{files}";

/// The quotes around a `{files}` in a shell script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
    /// Where no quotes can keep a name from being code (see
    /// `files_tokens`).
    Unquotable,
    /// In the text of a here-document, where quotes are plain characters:
    /// `sh` still runs the `$(...)` of an unquoted one, and a name holding
    /// a line with the closing word ends any one early, the rest of the
    /// name read as commands.
    HereDocument,
}

impl Quote {
    /// Whether a name there can only be passed as an argument (`"$@"`).
    fn unquotable(self) -> bool {
        matches!(self, Quote::Unquotable | Quote::HereDocument)
    }
}

/// Where each `{files}` of `script` is, and inside which quotes, read as
/// `sh` reads quotes: a backslash escapes outside single quotes, and a
/// command substitution (`$(...)`, backquotes) starts unquoted again, even
/// inside double quotes. A `{files}` inside a parameter expansion
/// (`${VAR:-{files}}`) or an arithmetic one (`$(( ))`, `(( ))`) is
/// `Quote::Unquotable`: no quoting keeps a name there from being read as
/// code by every shell. One in the text of a here-document (`<<EOF`) is
/// `Quote::HereDocument`, and the quotes in that text quote nothing.
fn files_tokens(script: &str) -> Vec<(usize, Quote)> {
    /// What the scanner is inside of.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum In {
        /// Unquoted text; in a `$(...)`, with its open parentheses.
        Plain(Option<usize>),
        Double,
        Backquote,
        /// A parameter expansion, `${...}`, with its open braces.
        Param(usize),
        /// An arithmetic expansion or command, with its open parentheses.
        Arith(usize),
    }
    impl In {
        /// The brackets that nest inside it, and how many are open: a
        /// command substitution and arithmetic count parentheses, a
        /// parameter expansion braces.
        fn nesting(self) -> Option<(u8, u8, usize)> {
            match self {
                In::Plain(Some(depth)) | In::Arith(depth) => Some((b'(', b')', depth)),
                In::Param(depth) => Some((b'{', b'}', depth)),
                In::Plain(None) | In::Double | In::Backquote => None,
            }
        }

        /// The same, with `depth` brackets open.
        fn at_depth(self, depth: usize) -> In {
            match self {
                In::Plain(_) => In::Plain(Some(depth)),
                In::Param(_) => In::Param(depth),
                In::Arith(_) => In::Arith(depth),
                other => other,
            }
        }
    }
    /// Bytes after which a word starts: a `#` there opens a comment.
    const WORD_BREAKS: &[u8] = b";&|()<>";
    let bytes = script.as_bytes();
    let mut stack = vec![In::Plain(None)];
    let mut found = Vec::new();
    // The closing words of the here-documents opened on the current line,
    // whose text starts on the next one.
    let mut here_documents: Vec<HereDocument> = Vec::new();
    let mut i = 0;
    // Where the last command could start: `((` there is arithmetic.
    let at_command_start = |i: usize| {
        bytes[..i]
            .iter()
            .rev()
            .find(|b| !b.is_ascii_whitespace() || **b == b'\n')
            .is_none_or(|b| b"\n;&|(".contains(b))
    };
    while i < bytes.len() {
        let top = *stack.last().unwrap_or(&In::Plain(None));
        if bytes[i..].starts_with(FILES_TOKEN.as_bytes()) {
            let unquotable = stack
                .iter()
                .any(|s| matches!(s, In::Param(_) | In::Arith(_)));
            let quote = match top {
                _ if unquotable => Quote::Unquotable,
                In::Double => Quote::Double,
                _ => Quote::None,
            };
            found.push((i, quote));
            i += FILES_TOKEN.len();
            continue;
        }
        let next = |n: usize| bytes.get(i + n).copied();
        match (top, bytes[i]) {
            (_, b'\\') => i += 1,
            (In::Plain(_) | In::Backquote, b'\'') => {
                let end = memchr::memchr(b'\'', &bytes[i + 1..]).map_or(bytes.len(), |n| i + 1 + n);
                let mut at = i + 1;
                while let Some(n) = memchr::memmem::find(&bytes[at..end], FILES_TOKEN.as_bytes()) {
                    found.push((at + n, Quote::Single));
                    at += n + FILES_TOKEN.len();
                }
                i = end;
            }
            (In::Plain(_) | In::Backquote | In::Param(_), b'"') => stack.push(In::Double),
            (In::Double, b'"') | (In::Backquote, b'`') => {
                stack.pop();
            }
            (_, b'`') => stack.push(In::Backquote),
            // A comment, where a word would start: its quotes quote nothing.
            (In::Plain(_) | In::Backquote, b'#')
                if i == 0
                    || bytes[i - 1].is_ascii_whitespace()
                    || WORD_BREAKS.contains(&bytes[i - 1]) =>
            {
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            }
            (_, b'$') if next(1) == Some(b'(') && next(2) == Some(b'(') => {
                stack.push(In::Arith(2));
                i += 2;
            }
            (_, b'$') if next(1) == Some(b'(') => {
                stack.push(In::Plain(Some(1)));
                i += 1;
            }
            (_, b'$') if next(1) == Some(b'{') => {
                stack.push(In::Param(1));
                i += 1;
            }
            (In::Plain(_), b'(') if next(1) == Some(b'(') && at_command_start(i) => {
                stack.push(In::Arith(2));
                i += 1;
            }
            // A here-string (`<<<`, bash) is a word like any other.
            (In::Plain(_) | In::Backquote, b'<')
                if next(1) == Some(b'<') && next(2) == Some(b'<') =>
            {
                i += 2;
            }
            (In::Plain(_) | In::Backquote, b'<') if next(1) == Some(b'<') => {
                let (document, end) = HereDocument::opened(bytes, i + 2);
                here_documents.extend(document);
                i = end;
                continue;
            }
            (In::Plain(_) | In::Backquote, b'\n') if !here_documents.is_empty() => {
                // The texts follow one another, each up to its closing line.
                let mut at = i + 1;
                for document in here_documents.drain(..) {
                    let end = document.text_end(bytes, at);
                    let mut from = at;
                    while let Some(n) =
                        memchr::memmem::find(&bytes[from..end], FILES_TOKEN.as_bytes())
                    {
                        found.push((from + n, Quote::HereDocument));
                        from += n + FILES_TOKEN.len();
                    }
                    at = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |n| end + n + 1);
                }
                i = at;
                continue;
            }
            (_, byte) => {
                if let Some((open, close, depth)) = top.nesting() {
                    if byte == open {
                        stack.pop();
                        stack.push(top.at_depth(depth + 1));
                    } else if byte == close {
                        stack.pop();
                        if depth > 1 {
                            stack.push(top.at_depth(depth - 1));
                        }
                    }
                }
            }
        }
        i += 1;
    }
    found
}

/// A here-document whose text is still to come: `<<WORD` or `<<-WORD`.
struct HereDocument {
    /// The closing word, its quotes removed (`<<'EOF'` closes with `EOF`).
    word: Vec<u8>,
    /// `<<-`: the closing line may be indented with tabs.
    tabs: bool,
}

impl HereDocument {
    /// The here-document whose operator ends at `at` (just after `<<`),
    /// and where its word ends; `None` when no word follows (a syntax
    /// error `sh` reports itself).
    fn opened(bytes: &[u8], mut at: usize) -> (Option<HereDocument>, usize) {
        let tabs = bytes.get(at) == Some(&b'-');
        at += usize::from(tabs);
        while matches!(bytes.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        let mut word = Vec::new();
        let mut quote = None;
        while let Some(&b) = bytes.get(at) {
            match (quote, b) {
                (None, b'\'' | b'"') => quote = Some(b),
                (Some(q), _) if b == q => quote = None,
                (None, b'\\') => {
                    at += 1;
                    word.extend(bytes.get(at));
                }
                (None, _) if b.is_ascii_whitespace() || b";&|()<>".contains(&b) => break,
                _ => word.push(b),
            }
            at += 1;
        }
        (
            (!word.is_empty()).then_some(HereDocument { word, tabs }),
            at,
        )
    }

    /// Where the text starting at `from` ends: at its closing line, or at
    /// the end of the script when none closes it.
    fn text_end(&self, bytes: &[u8], from: usize) -> usize {
        let mut line = from;
        while line < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[line..]).map_or(bytes.len(), |n| line + n);
            let mut text = &bytes[line..end];
            if self.tabs {
                while let [b'\t', rest @ ..] = text {
                    text = rest;
                }
            }
            if text == self.word.as_slice() {
                return line;
            }
            line = end + 1;
        }
        bytes.len()
    }
}

/// Where a `{files}` of the shell script `script` sits that no quoting
/// can make safe (inside `${...}`, an arithmetic expansion or a
/// here-document), said for a person; `None` when there is none. The
/// configuration refuses such a script; were one run, its names would
/// reach it as the script's arguments (`"$@"`), never as its text.
pub fn unquotable_files(script: &str) -> Option<&'static str> {
    let tokens = files_tokens(script);
    if tokens.iter().any(|(_, q)| *q == Quote::HereDocument) {
        return Some(
            "inside a here-document (`<<EOF`: `printf '%s\\n' {files} | tool` gives a tool the names one per line)",
        );
    }
    tokens
        .iter()
        .any(|(_, q)| *q == Quote::Unquotable)
        .then_some(
            "inside a parameter expansion (`${...}`) or an arithmetic one (`$((...))`, `((...))`)",
        )
}

/// Splits `files` into runs whose total cost stays within `room`; a file
/// that alone exceeds it still gets a batch of its own.
fn batches(
    files: &[OsString],
    room: usize,
    cost: impl Fn(&OsString) -> usize,
) -> Vec<Vec<&OsString>> {
    let mut out: Vec<Vec<&OsString>> = Vec::new();
    let mut current: Vec<&OsString> = Vec::new();
    let mut used = 0;
    for file in files {
        let c = cost(file);
        if !current.is_empty() && used + c > room {
            out.push(std::mem::take(&mut current));
            used = 0;
        }
        used += c;
        current.push(file);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> CommandLine {
        CommandLine::Argv(s.split(' ').map(str::to_string).collect())
    }

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn no_files_token_runs_once_unchanged() {
        let got = expand_invocations(&argv("cargo test"), &paths(&["a"]));
        assert_eq!(got, [Invocation::new(["cargo", "test"])]);
    }

    #[test]
    fn files_become_separate_arguments_in_batches_that_cover_every_file_once() {
        let files: Vec<PathBuf> = (0..5000)
            .map(|i| PathBuf::from(format!("dir/file with space {i:05}.md")))
            .collect();
        let got = expand_with_budget(&argv("lint --fix {files} --end"), &files, 16 * 1024);
        assert!(got.len() > 1, "a small budget must split");
        let mut seen = Vec::new();
        for inv in &got {
            assert_eq!(&inv.argv[..2], ["lint", "--fix"]);
            assert_eq!(inv.argv.last().unwrap(), "--end");
            let size: usize = inv.argv.iter().map(|a| cost(a.as_bytes())).sum();
            assert!(size <= 16 * 1024, "batch of {size} bytes");
            seen.extend(inv.argv[2..inv.argv.len() - 1].iter().map(PathBuf::from));
        }
        assert_eq!(seen, files);
    }

    #[test]
    fn leading_dashes_cannot_become_options() {
        let got = expand_invocations(&argv("cat {files}"), &paths(&["-rf", "a-b"]));
        assert_eq!(got[0].argv, ["cat", "./-rf", "a-b"]);
    }

    #[test]
    fn the_quotes_around_each_files_token_are_found() {
        let quotes = |script: &str| -> Vec<Quote> {
            files_tokens(script).into_iter().map(|(_, q)| q).collect()
        };
        assert_eq!(
            quotes(r#"a {files} "{files}" '{files}' \"{files}"#),
            [Quote::None, Quote::Double, Quote::Single, Quote::None]
        );
        assert_eq!(
            quotes(r#""$(x "{files}" {files})" "`y {files}`" "$((1)){files}""#),
            [Quote::Double, Quote::None, Quote::None, Quote::Double]
        );
        assert_eq!(quotes("# it's\nx {files} # '{files}"), [Quote::None]);
        // A comment starts after an operator as after a blank; `$#` and
        // `${#x}` are no comments.
        for script in ["true&# {files}", "a|#{files}", "(#{files}\n)", "a;#{files}"] {
            assert_eq!(quotes(script), [], "{script}");
        }
        assert_eq!(quotes("echo $# ${#x} {files}"), [Quote::None]);
        // Inside a parameter or arithmetic expansion, no quoting is safe.
        for script in [
            r#""${LIST:-{files}}""#,
            "${LIST:-{files}}",
            r#"${A:-"{files}"}"#,
            "echo $(( {files} ))",
            "(( {files} ))",
            "a && (({files}))",
        ] {
            assert_eq!(quotes(script), [Quote::Unquotable], "{script}");
            assert!(unquotable_files(script).is_some(), "{script}");
        }
        // A subshell and a command substitution are not arithmetic.
        assert_eq!(
            quotes("( {files} ) $( ({files}) ) ${A} {files} $((1)) {files}"),
            [Quote::None; 4]
        );
        assert_eq!(unquotable_files("lint {files}"), None);
    }

    #[test]
    fn a_files_token_in_the_text_of_a_here_document_is_unquotable() {
        let quotes = |script: &str| -> Vec<Quote> {
            files_tokens(script).into_iter().map(|(_, q)| q).collect()
        };
        let here = Quote::HereDocument;
        for script in [
            "cat <<EOF\nhello {files}\nEOF",
            "cat << 'EOF'\n{files}\nEOF\n",
            "cat <<\"E O\"\n{files}\nE O\n",
            "cat <<\\EOF >out\n{files}\nEOF",
            "cat <<-EOF\n\t{files}\n\t\tEOF\n",
            "x=$(cat <<EOF\n{files}\nEOF\n)",
            // Not closed: the rest of the script is its text.
            "cat <<EOF\n{files}\n EOF",
        ] {
            assert_eq!(quotes(script), [here], "{script:?}");
            assert!(unquotable_files(script).is_some_and(|p| p.contains("here-document")));
        }
        // Two opened on one line follow one another; the quotes in their
        // text quote nothing, and the script goes on after them.
        assert_eq!(
            quotes("a <<A; b <<-'B' {files}\nit's {files}\nA\n\"{files}\nB\nc {files} '{files}'"),
            [Quote::None, here, here, Quote::None, Quote::Single]
        );
        // A shift and a here-string open none.
        assert_eq!(
            quotes("echo $((1 << 2)) {files}\ncat <<< {files}\n{files}"),
            [Quote::None; 3]
        );
        let script = CommandLine::Shell("cat <<EOF\n{files}\nEOF".to_string());
        let got = expand_invocations(&script, &paths(&["$(touch x)\nEOF\ntouch y"]));
        assert_eq!(
            got,
            [Invocation::new([
                "sh",
                "-c",
                "cat <<EOF\n\"$@\"\nEOF",
                "sh",
                "$(touch x)\nEOF\ntouch y",
            ])]
        );
    }

    #[test]
    fn names_no_quoting_makes_safe_reach_the_script_as_its_arguments() {
        let script = CommandLine::Shell(r#"printf '%s\n' "${LIST:-{files}}" {files}"#.to_string());
        let got = expand_invocations(&script, &paths(&["$(touch x)", "b"]));
        assert_eq!(
            got,
            [Invocation::new([
                "sh",
                "-c",
                r#"printf '%s\n' "${LIST:-"$@"}" '$(touch x)' 'b'"#,
                "sh",
                "$(touch x)",
                "b",
            ])]
        );
    }

    #[test]
    fn shell_commands_quote_every_name_even_non_utf8_ones() {
        let mut names = paths(&["it's", "a b", "$(rm -rf x)", "new\nline"]);
        names.push(PathBuf::from(OsString::from_vec(b"caf\xe9".to_vec())));
        let got = expand_invocations(&CommandLine::Shell("printf '<%s>' {files}".into()), &names);
        assert_eq!(got.len(), 1);
        let out = std::process::Command::new(&got[0].argv[0])
            .args(&got[0].argv[1..])
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"<it's><a b><$(rm -rf x)><new\nline><caf\xe9>");
    }
}
