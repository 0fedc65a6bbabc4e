//! Reading the command line of a program that runs another one
//! (`env X=1 tool`, `timeout 60 tool`, `nice -n 5 tool`, ...), so the
//! program it wraps can be looked up before the check starts. Such a
//! wrapper exits 127 when its program is not installed, and that status
//! alone reads as a failure of the code. Each wrapper's options are read
//! as its manual documents them (GNU coreutils, util-linux, GNU time,
//! all of which stop at the first word that is not an option); anything
//! else (an option not listed, one that changes where the program is
//! looked up) leaves the command line unread, to start as written. flock
//! is also read for the lock it may give up on (`-n`, `-w`): its command
//! then never ran, and its status says nothing of the code.

use std::borrow::Cow;
use std::ffi::OsString;

/// What a wrapper's command line runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Inside<'a> {
    /// Not a wrapper, or not a command line read with certainty.
    Unknown,
    /// The wrapped program and its arguments; `in_place` when the wrapper
    /// replaces itself with it (it stays the check's first process). Owned
    /// where the wrapper makes the words itself (`env -S "tool a"`).
    Command {
        argv: Cow<'a, [OsString]>,
        in_place: bool,
    },
    /// A wrapper whose status could never be its command's: `setsid`
    /// that returns at once, before its command ends, or `flock -E 0`,
    /// which passes without running its command when it does not get its
    /// lock. Why, for a person.
    Broken(String),
}

/// The options of one wrapper.
struct Syntax {
    name: &'static str,
    /// Short options that take no argument.
    short_flags: &'static str,
    /// Short options that take one (`-n5` or `-n 5`).
    short_values: &'static str,
    /// Long options that take no argument, or an optional one after `=`.
    long_flags: &'static [&'static str],
    /// Long options that take one (`--signal=KILL` or `--signal KILL`).
    long_values: &'static [&'static str],
    /// The word between the options and the program (timeout's
    /// duration, chrt's priority, taskset's mask, flock's lock file).
    operand: Option<Operand>,
    /// Whether the wrapper replaces itself with its program (`exec`) rather
    /// than running it as a child.
    in_place: bool,
}

/// What a wrapper's operand must look like to be read as one.
#[derive(Clone, Copy)]
enum Operand {
    /// A duration, a priority or a mask: it starts with a digit (`0x3`,
    /// `0-3`, `1.5m`) or a point.
    Number,
    /// A file: any word.
    File,
}

/// The wrappers read, each with the options its manual lists. Options
/// that change where or how the program is found (`env -i`, `-C`), that
/// hand the command to a shell (`flock -c`), or that mean there is no
/// program to run (`ionice -p`, `chrt -p`, `taskset -p`, `flock -u`), are
/// left out on purpose: with them the command line is not read. `env -S`
/// is read by splitting its string as env does (see `split_string`).
const WRAPPERS: &[Syntax] = &[
    // env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]
    Syntax {
        name: "env",
        short_flags: "v",
        short_values: "uS",
        long_flags: &[
            "debug",
            "list-signal-handling",
            "block-signal",
            "default-signal",
            "ignore-signal",
        ],
        long_values: &["unset", "split-string"],
        operand: None,
        in_place: true,
    },
    // util-linux flock [options] FILE|DIRECTORY COMMAND [ARG]...: it forks,
    // runs the command holding the lock and waits, unless `-F`
    // (`--no-fork`) makes it run the command in its place. The `-c
    // COMMAND` forms hand the command to a shell, and `flock FD` runs none.
    Syntax {
        name: "flock",
        short_flags: "sexnoF",
        short_values: "wE",
        long_flags: &[
            "shared",
            "exclusive",
            "nb",
            "nonblock",
            "close",
            "no-fork",
            "verbose",
        ],
        long_values: &["wait", "timeout", "conflict-exit-code"],
        operand: Some(Operand::File),
        in_place: false,
    },
    // timeout [OPTION] DURATION COMMAND [ARG]...
    Syntax {
        name: "timeout",
        short_flags: "v",
        short_values: "ks",
        long_flags: &["preserve-status", "foreground", "verbose"],
        long_values: &["kill-after", "signal"],
        operand: Some(Operand::Number),
        in_place: false,
    },
    // nice [OPTION] [COMMAND [ARG]...], and the older `nice -5 COMMAND`.
    Syntax {
        name: "nice",
        short_flags: "",
        short_values: "n",
        long_flags: &[],
        long_values: &["adjustment"],
        operand: None,
        in_place: true,
    },
    // nohup COMMAND [ARG]...
    Syntax {
        name: "nohup",
        short_flags: "",
        short_values: "",
        long_flags: &[],
        long_values: &[],
        operand: None,
        in_place: true,
    },
    // stdbuf OPTION... COMMAND
    Syntax {
        name: "stdbuf",
        short_flags: "",
        short_values: "ioe",
        long_flags: &[],
        long_values: &["input", "output", "error"],
        operand: None,
        in_place: true,
    },
    // ionice [-c class] [-n level] [-t] COMMAND [ARG]...
    Syntax {
        name: "ionice",
        short_flags: "t",
        short_values: "cn",
        long_flags: &["ignore"],
        long_values: &["class", "classdata"],
        operand: None,
        in_place: true,
    },
    // setsid [options] PROGRAM [ARG]...
    Syntax {
        name: "setsid",
        short_flags: "cfw",
        short_values: "",
        long_flags: &["ctty", "fork", "wait"],
        long_values: &[],
        operand: None,
        in_place: true,
    },
    // chrt [options] [POLICY] PRIORITY COMMAND [ARG]...; the policy is an
    // option.
    Syntax {
        name: "chrt",
        short_flags: "bdfiorRav",
        short_values: "TPD",
        long_flags: &[
            "batch",
            "deadline",
            "fifo",
            "idle",
            "other",
            "rr",
            "reset-on-fork",
            "all-tasks",
            "verbose",
        ],
        long_values: &["sched-runtime", "sched-period", "sched-deadline"],
        operand: Some(Operand::Number),
        in_place: true,
    },
    // taskset [options] MASK COMMAND [ARG]...; with `-c` the mask is a
    // list of processors.
    Syntax {
        name: "taskset",
        short_flags: "ac",
        short_values: "",
        long_flags: &["all-tasks", "cpu-list"],
        long_values: &[],
        operand: Some(Operand::Number),
        in_place: true,
    },
    // GNU time [options] COMMAND [ARG]...
    Syntax {
        name: "time",
        short_flags: "apqvV",
        short_values: "fo",
        long_flags: &["append", "portability", "quiet", "verbose"],
        long_values: &["format", "output"],
        operand: None,
        in_place: false,
    },
];

/// What `argv` runs when its program is a wrapper. `leader` says whether
/// the process that runs `argv` leads its process group, as a check's
/// first process does: `setsid` forks there and returns at once.
pub fn inside(argv: &[OsString], leader: bool) -> Inside<'_> {
    let Some(name) = argv
        .first()
        .and_then(|program| std::path::Path::new(program).file_name())
        .and_then(|name| name.to_str())
    else {
        return Inside::Unknown;
    };
    let Some(syntax) = WRAPPERS.iter().find(|w| w.name == name) else {
        return Inside::Unknown;
    };
    let Some(read) = read(syntax, &argv[1..]) else {
        return Inside::Unknown;
    };
    let rest = &argv[1 + read.skipped..];
    if let Some(words) = read.split {
        // env goes on reading options and assignments from the words
        // `-S` made, then from the words after its string, as from its
        // own command line.
        let mut again = Vec::with_capacity(1 + words.len() + rest.len());
        again.push(argv[0].clone());
        again.extend(words.into_iter().map(OsString::from));
        again.extend_from_slice(rest);
        return match inside(&again, leader) {
            Inside::Command { argv, in_place } => Inside::Command {
                argv: Cow::Owned(argv.into_owned()),
                in_place,
            },
            Inside::Broken(why) => Inside::Broken(why),
            Inside::Unknown => Inside::Unknown,
        };
    }
    if rest.is_empty() {
        // Nothing wrapped (`env` alone prints the environment).
        return Inside::Unknown;
    }
    if syntax.name == "flock" && (rest[0] == "-c" || rest[0] == "--command") {
        // `flock FILE -c COMMAND`: a command string for the shell.
        return Inside::Unknown;
    }
    if syntax.name == "flock" && gives_up(&read) && conflict_status(&read) == Some(0) {
        return Inside::Broken(
            "`flock -E 0` exits 0 when it does not get its lock (with `-n` or `-w`), so the check would pass without its command ever running: give `-E` another status, or leave it out".to_string(),
        );
    }
    if syntax.name == "setsid" {
        let forks = leader || read.chars.contains('f');
        if forks && !read.chars.contains('w') {
            let why = if leader {
                "a check starts as the leader of a session of its own, where `setsid` forks"
            } else {
                "`--fork` runs its command in a child"
            };
            return Inside::Broken(format!(
                "`setsid` without `--wait` exits 0 at once, before its command ends ({why}), so what the command finds would never reach the check: add `--wait` (`setsid -w ...`), or leave `setsid` out"
            ));
        }
        return Inside::Command {
            argv: Cow::Borrowed(rest),
            in_place: !forks,
        };
    }
    Inside::Command {
        argv: Cow::Borrowed(rest),
        in_place: syntax.in_place || read.chars.contains('F'),
    }
}

/// The wrapper that said it could not find its program, and the program,
/// in its own words (as
/// recorded from coreutils 9.1, util-linux 2.38.1 and GNU time under
/// `LC_ALL=C` and `C.UTF-8`, which quote differently): `timeout: failed to
/// run command ‘NAME’: ...`, `env: ‘NAME’: ...`, `nice: ‘NAME’: ...`,
/// `nohup: failed to run command 'NAME': ...`, `ionice: failed to execute
/// NAME: ...` (flock's words too), `time: cannot run NAME: ...`, each ending in `No such file or
/// directory` and maybe prefixed with the path the wrapper was started by.
/// A name with a `/` is a path, no program to install.
fn said_not_found(line: &str) -> Option<(String, String)> {
    static LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[^:\s]*/)?(env|nice|nohup|stdbuf|timeout|ionice|chrt|taskset|setsid|flock|time): (?:failed to run command |failed to execute |cannot run )?['‘]?([^/'‘’\s]+?)['’]?: No such file or directory\s*$",
        )
        .expect("a valid pattern")
    });
    LINE.captures(line)
        .map(|found| (found[1].to_string(), found[2].to_string()))
}

/// flock's status when it cannot run its command, in util-linux 2.38.1
/// (as recorded): `EX_UNAVAILABLE` of `<sysexits.h>`, which its manual
/// says it uses "for everything". Other versions exit 127, as the other
/// wrappers do.
const FLOCK_UNAVAILABLE: i32 = 69;

/// Whether `code` is a status a wrapper exits with when the program it
/// runs is not installed: 127, or flock's 69.
pub fn not_found_status(code: i32) -> bool {
    code == 127 || code == FLOCK_UNAVAILABLE
}

/// The program a wrapper said in `line` it could not find, when `code` is
/// the status that wrapper exits with for it (see `not_found_status`): a
/// 69 is flock's alone.
pub fn exited_not_found(code: i32, line: &str) -> Option<String> {
    let (wrapper, program) = said_not_found(line)?;
    (code == 127 || (code == FLOCK_UNAVAILABLE && wrapper == "flock")).then_some(program)
}

/// Whether flock was told to give up on a lock it cannot get at once
/// (`-n`) or within a time (`-w`), rather than wait for it.
fn gives_up(read: &Read) -> bool {
    read.given
        .iter()
        .any(|(name, _)| ["n", "nb", "nonblock", "w", "wait", "timeout"].contains(&name.as_str()))
}

/// The status flock was told to exit with when it gives up on its lock
/// (`-E`, `--conflict-exit-code`; the last one given wins), if any.
fn conflict_status(read: &Read) -> Option<i32> {
    read.given
        .iter()
        .rev()
        .find(|(name, _)| name == "E" || name == "conflict-exit-code")
        .and_then(|(_, value)| value.as_deref()?.parse().ok())
}

/// util-linux flock's words when it gives up on its lock, under
/// `--verbose` (as recorded from util-linux 2.38.1): `-n` and `-w`.
/// Without `--verbose` it says nothing.
const LOCK_NOT_GOT: [&str; 2] = ["failed to get lock", "timeout while waiting to get lock"];

/// Why a check's command never ran, when its command line `argv` exited
/// with `code` and the last line of its output is `last`: flock gave up on
/// its lock (`-n`, or `-w` and its time ran out), held by another process.
/// flock then exits 1, or the status `-E` names, so that status alone
/// reads as a failure of the code when the code was never checked. It is
/// told apart where that is certain: flock's own words (`--verbose`),
/// whatever runs it (`shell = true` too), or the status `-E` names for
/// flock on the check's command line. Without either, flock's status 1 is
/// also its command's: it stands as what it is, a failure.
pub fn lock_not_got(argv: &[OsString], code: i32, last: Option<&str>) -> Option<String> {
    let said = last.and_then(|line| {
        let (program, words) = line.trim_end().split_once(": ")?;
        let program = std::path::Path::new(program).file_name()?;
        (program == "flock" && LOCK_NOT_GOT.contains(&words)).then_some(words)
    });
    let lock = flock_in(argv);
    let named = lock
        .as_ref()
        .is_some_and(|lock| lock.conflict == Some(code));
    // flock on the check's own command line exits with its conflict
    // status when it gives up: another status is its command's.
    let said = said.filter(|_| {
        lock.as_ref()
            .is_none_or(|l| l.conflict.unwrap_or(1) == code)
    });
    if !named && said.is_none() {
        return None;
    }
    let file = lock
        .map(|lock| format!(" `{}`", lock.file))
        .unwrap_or_default();
    let how = said.map_or_else(
        || format!("it exited {code}, the status its `-E` names for that"),
        |words| format!("`flock: {words}`"),
    );
    Some(format!(
        "flock did not get its lock{file} ({how}): another process holds it, so the check's command never ran; run again when the lock is free"
    ))
}

/// flock as the check's command line runs it, where it gives up on its
/// lock (`-n`, `-w`): its lock file and the status `-E` names.
struct GivesUp {
    file: String,
    conflict: Option<i32>,
}

/// The flock among the wrappers of `argv` that gives up on its lock, if
/// any.
fn flock_in(argv: &[OsString]) -> Option<GivesUp> {
    let mut argv = Cow::Borrowed(argv);
    loop {
        let is_flock = std::path::Path::new(argv.first()?)
            .file_name()
            .is_some_and(|name| name == "flock");
        if is_flock {
            let syntax = WRAPPERS.iter().find(|w| w.name == "flock")?;
            let read = read(syntax, &argv[1..])?;
            if !gives_up(&read) {
                return None;
            }
            return Some(GivesUp {
                file: argv.get(read.skipped)?.to_string_lossy().into_owned(),
                conflict: conflict_status(&read),
            });
        }
        match inside(&argv, false) {
            Inside::Command { argv: wrapped, .. } => argv = Cow::Owned(wrapped.into_owned()),
            Inside::Unknown | Inside::Broken(_) => return None,
        }
    }
}

/// What reading a wrapper's options found.
struct Read {
    /// Words before the wrapped program.
    skipped: usize,
    /// The options given, each as its short letter.
    chars: String,
    /// The words of env's `-S` string, read on before the words after it
    /// (`skipped` counts up to the string).
    split: Option<Vec<String>>,
    /// Each option given, as written (a short one by its letter, a long
    /// one by its name), with its value.
    given: Vec<(String, Option<String>)>,
}

/// Reads the options, assignments and operands `syntax` allows at the start
/// of `args`; `None` when a word is not one it documents, or one that
/// changes where the program would be looked up.
fn read(syntax: &Syntax, args: &[OsString]) -> Option<Read> {
    let mut chars = String::new();
    let mut given = Vec::new();
    let mut i = 0;
    // Options, up to the first word that is not one.
    while let Some(word) = args.get(i) {
        let word = word.to_str()?;
        i += 1;
        if word == "-" {
            // env's `-` (`-i`), or a program named `-`: neither is read.
            return None;
        }
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if syntax.long_flags.contains(&name) {
                given.push((name.to_string(), value.map(str::to_string)));
                // The letters of the long options the decision needs.
                match name {
                    "wait" | "fork" => chars.push_str(&name[..1]),
                    "no-fork" => chars.push('F'),
                    _ => {}
                }
            } else if syntax.long_values.contains(&name) {
                let value = match value {
                    Some(value) => value,
                    None => {
                        i += 1;
                        args.get(i - 1)?.to_str()?
                    }
                };
                if touches_path(syntax, value) {
                    return None;
                }
                if name == "split-string" {
                    return split_here(value, i, chars);
                }
                given.push((name.to_string(), Some(value.to_string())));
            } else if syntax.name == "nice" && is_number(long) {
                // `nice --5`: an adjustment of -5.
            } else {
                return None;
            }
            continue;
        }
        let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) else {
            // The first word that is not an option.
            i -= 1;
            break;
        };
        if syntax.name == "nice" && is_number(letters.strip_prefix('+').unwrap_or(letters)) {
            // `nice -5`, `nice -+5`: the older form of `-n`.
            continue;
        }
        for (at, letter) in letters.char_indices() {
            if syntax.short_flags.contains(letter) {
                chars.push(letter);
                given.push((letter.to_string(), None));
            } else if syntax.short_values.contains(letter) {
                let attached = &letters[at + letter.len_utf8()..];
                let value = if attached.is_empty() {
                    i += 1;
                    args.get(i - 1)?.to_str()?
                } else {
                    attached
                };
                if touches_path(syntax, value) {
                    return None;
                }
                if syntax.name == "env" && letter == 'S' {
                    return split_here(value, i, chars);
                }
                given.push((letter.to_string(), Some(value.to_string())));
                break;
            } else {
                return None;
            }
        }
    }
    // env's assignments: one of `PATH` changes where the program is found.
    if syntax.name == "env" {
        while let Some(word) = args.get(i).and_then(|w| w.to_str()) {
            let Some((name, _)) = word.split_once('=') else {
                break;
            };
            if name == "PATH" || name.is_empty() {
                return None;
            }
            i += 1;
        }
    }
    if let Some(operand) = syntax.operand {
        // An operand must be there, and read as one: chrt's priority and
        // timeout's duration start with a digit, as a mask does
        // (`0x3`, `0-3`); flock's file is any word.
        let word = args.get(i)?.to_str()?;
        if matches!(operand, Operand::Number)
            && !word.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        {
            return None;
        }
        i += 1;
    }
    Some(Read {
        skipped: i,
        chars,
        split: None,
        given,
    })
}

/// env's `-S STRING`, its string ending before word `i`: its words, to
/// read on from.
fn split_here(text: &str, i: usize, chars: String) -> Option<Read> {
    Some(Read {
        skipped: i,
        chars,
        split: Some(split_string(text)?),
        given: Vec::new(),
    })
}

/// The words `env -S` (`--split-string`) makes of `text`, as coreutils
/// 9.1 documents it (`info env`, "-S/--split-string syntax") and does:
/// spaces, tabs and line breaks separate words; single quotes keep
/// everything but the escapes `\\` and `\'`; double quotes keep spaces;
/// outside single quotes `\f \n \r \t \v \# \$ \" \' \\` are escapes,
/// `\_` is a space (a separator outside quotes) and `\c` ends the string;
/// a `#` that starts a word starts a comment. `None` where a word would
/// come from the environment (`${NAME}`, whose value is not known here)
/// or where env stops with an error (an unknown escape, an unclosed quote).
fn split_string(text: &str) -> Option<Vec<String>> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = Quote::None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quote == Quote::Single {
            match c {
                '\'' => quote = Quote::None,
                '\\' if matches!(chars.peek(), Some('\\' | '\'')) => {
                    word.get_or_insert_with(String::new).extend(chars.next());
                }
                c => word.get_or_insert_with(String::new).push(c),
            }
            continue;
        }
        let outside = quote == Quote::None;
        match c {
            '\'' if outside => {
                quote = Quote::Single;
                word.get_or_insert_with(String::new);
            }
            '"' => {
                quote = if outside { Quote::Double } else { Quote::None };
                word.get_or_insert_with(String::new);
            }
            ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' if outside => {
                words.extend(word.take());
            }
            '#' if outside && word.is_none() => break,
            '$' => return None,
            '\\' => {
                let escaped = match chars.next()? {
                    'c' if outside => break,
                    '_' if outside => {
                        words.extend(word.take());
                        continue;
                    }
                    '_' => ' ',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    c @ ('#' | '$' | '"' | '\'' | '\\') => c,
                    _ => return None,
                };
                word.get_or_insert_with(String::new).push(escaped);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote != Quote::None {
        return None;
    }
    words.extend(word);
    Some(words)
}

/// Whether an option's `value` removes `PATH` (`env -u PATH`): the program
/// would be looked up elsewhere.
fn touches_path(syntax: &Syntax, value: &str) -> bool {
    syntax.name == "env" && value == "PATH"
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(line: &str, leader: bool) -> Option<String> {
        let argv: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        match inside(&argv, leader) {
            Inside::Command { argv, .. } => Some(
                argv.iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Inside::Broken(_) => Some("broken".to_string()),
            Inside::Unknown => None,
        }
    }

    #[test]
    fn each_wrapper_is_read_as_its_manual_documents_it() {
        for (line, program) in [
            ("env X=1 Y=2 tool a", "tool a"),
            ("/usr/bin/env -u HOME -v tool", "tool"),
            ("env --unset=HOME --debug -- tool", "tool"),
            ("env -uHOME tool", "tool"),
            ("timeout 60 tool --x", "tool --x"),
            ("timeout -k 5 -s KILL 1.5m tool", "tool"),
            ("timeout --signal=TERM --preserve-status 10 tool", "tool"),
            ("timeout -sKILL 10 tool", "tool"),
            ("nice -n 5 tool", "tool"),
            ("nice -n5 tool", "tool"),
            ("nice --adjustment=-3 tool", "tool"),
            ("nice -5 tool", "tool"),
            ("nice --5 tool", "tool"),
            ("nice tool", "tool"),
            ("nohup tool", "tool"),
            ("stdbuf -oL -e0 tool", "tool"),
            ("stdbuf --output=L tool", "tool"),
            ("ionice -c 3 tool", "tool"),
            ("ionice -c2 -n7 -t tool", "tool"),
            ("setsid -w tool", "tool"),
            ("setsid --wait --ctty tool", "tool"),
            ("chrt -o 0 tool", "tool"),
            ("chrt --batch 0 tool", "tool"),
            ("taskset -c 0-3 tool", "tool"),
            ("taskset 0x3 tool", "tool"),
            ("time -f %e -o out tool", "tool"),
            ("flock .lock tool a", "tool a"),
            ("flock -n -E 75 /tmp/x.lock tool", "tool"),
            ("flock -w 1.5 -s dir tool", "tool"),
            ("flock --timeout=3 --nb --close -- .lock tool", "tool"),
            ("env -S tool", "tool"),
            ("env -Stool a", "tool a"),
            ("env --split-string=tool a", "tool a"),
            ("env -v -S -uHOME tool", "tool"),
            ("env -S X=1 tool", "tool"),
        ] {
            assert_eq!(wrapped(line, true).as_deref(), Some(program), "{line}");
        }
    }

    #[test]
    fn a_command_line_read_without_certainty_is_left_alone() {
        for line in [
            "cargo test",
            "env",
            "env X=1",
            "env -i tool",
            "env - tool",
            "env -C dir tool",
            "env -S -i tool",
            "env -S PATH=/opt/bin tool",
            "env -S ${HOME}/bin/tool",
            "env -S",
            "env PATH=/opt/bin tool",
            "env -u PATH tool",
            "env --ignore-environment tool",
            "timeout tool",
            "timeout 60",
            "timeout --unknown 60 tool",
            "nice -x tool",
            "ionice -p 1",
            "chrt -p 0 1",
            "chrt -o tool",
            "taskset -p 1",
            "nohup --help",
            "stdbuf -o",
            "flock .lock",
            "flock 9",
            "flock .lock -c tool",
            "flock .lock --command tool",
            "flock -c tool .lock",
            "flock -u .lock tool",
            "flock --fcntl .lock tool",
        ] {
            assert_eq!(wrapped(line, true), None, "{line}");
        }
    }

    #[test]
    fn a_wrappers_own_words_name_the_missing_program() {
        // As recorded (see `said_not_found`).
        for line in [
            "env: 'nosuch': No such file or directory",
            "env: ‘nosuch’: No such file or directory",
            "nice: ‘nosuch’: No such file or directory",
            "nohup: failed to run command 'nosuch': No such file or directory",
            "stdbuf: failed to run command ‘nosuch’: No such file or directory",
            "timeout: failed to run command ‘nosuch’: No such file or directory",
            "/usr/bin/timeout: failed to run command 'nosuch': No such file or directory",
            "ionice: failed to execute nosuch: No such file or directory",
            "chrt: failed to execute nosuch: No such file or directory",
            "taskset: failed to execute nosuch: No such file or directory",
            "setsid: failed to execute nosuch: No such file or directory",
            "flock: failed to execute nosuch: No such file or directory",
            "time: cannot run nosuch: No such file or directory",
        ] {
            assert_eq!(
                said_not_found(line).map(|(_, program)| program).as_deref(),
                Some("nosuch"),
                "{line}"
            );
        }
        for line in [
            "timeout: failed to run command ‘./gone.sh’: No such file or directory",
            "nice: ‘tool’: Permission denied",
            "cat: ‘nosuch’: No such file or directory",
            "error: env: 'x': No such file or directory",
        ] {
            assert_eq!(said_not_found(line), None, "{line}");
        }
    }

    #[test]
    fn flocks_status_for_a_program_it_cannot_run_is_its_own() {
        let line = "flock: failed to execute nosuch: No such file or directory";
        // util-linux 2.38.1 exits 69, later versions 127.
        for code in [69, 127] {
            assert_eq!(exited_not_found(code, line).as_deref(), Some("nosuch"));
        }
        assert_eq!(exited_not_found(1, line), None);
        // 69 is flock's alone.
        let timeout = "timeout: failed to run command ‘nosuch’: No such file or directory";
        assert_eq!(exited_not_found(127, timeout).as_deref(), Some("nosuch"));
        assert_eq!(exited_not_found(69, timeout), None);
        assert!(not_found_status(69) && not_found_status(127) && !not_found_status(1));
    }

    #[test]
    fn a_lock_flock_gave_up_on_is_told_apart_only_where_certain() {
        let argv = |line: &str| -> Vec<OsString> { line.split(' ').map(OsString::from).collect() };
        let got = |line: &str, code: i32, last: Option<&str>| lock_not_got(&argv(line), code, last);
        // Its own words, as util-linux 2.38.1 prints them under --verbose.
        for (line, words) in [
            ("flock -n --verbose .lock tool", "flock: failed to get lock"),
            (
                "flock -w 1 --verbose .lock tool",
                "flock: timeout while waiting to get lock",
            ),
            (
                "nice flock --nb --verbose .lock tool",
                "/usr/bin/flock: failed to get lock",
            ),
        ] {
            let why = got(line, 1, Some(words)).unwrap_or_else(|| panic!("{line}"));
            assert!(
                why.contains("lock `.lock`") && why.contains("never ran"),
                "{why}"
            );
        }
        // The words a shell script's flock printed: its file is not known.
        let why = got("sh -c x", 1, Some("flock: failed to get lock")).unwrap();
        assert!(
            why.starts_with("flock did not get its lock (`flock: failed"),
            "{why}"
        );
        // The status `-E` names.
        for line in [
            "flock -n -E 75 .lock tool",
            "flock --conflict-exit-code=75 -w 5 .lock tool",
            "timeout 60 flock -nE75 .lock tool",
        ] {
            let why = got(line, 75, None).unwrap_or_else(|| panic!("{line}"));
            assert!(why.contains("`-E` names"), "{why}");
            assert_eq!(got(line, 1, None), None, "{line}");
        }
        // flock's status 1 without a word is also its command's: a failure.
        assert_eq!(got("flock -n .lock tool", 1, None), None);
        assert_eq!(got("flock -n .lock tool", 1, Some("FAILED: 3 tests")), None);
        // Its words with another status than flock's own are not its.
        assert_eq!(
            got(
                "flock -n -E 75 .lock tool",
                1,
                Some("flock: failed to get lock")
            ),
            None
        );
        // Without -n or -w, flock waits: it never gives up.
        assert_eq!(got("flock -E 75 .lock tool", 75, None), None);
    }

    #[test]
    fn flock_that_would_pass_without_running_its_command_is_a_broken_check() {
        for line in [
            "flock -n -E 0 .lock tool",
            "flock -w 5 --conflict-exit-code=0 .lock tool",
        ] {
            assert_eq!(wrapped(line, true).as_deref(), Some("broken"), "{line}");
        }
        // Without -n or -w, -E is never used.
        assert_eq!(
            wrapped("flock -E 0 .lock tool", true).as_deref(),
            Some("tool")
        );
    }

    #[test]
    fn flock_runs_its_command_in_a_child_unless_told_not_to_fork() {
        let in_place = |line: &str| {
            let argv: Vec<OsString> = line.split(' ').map(OsString::from).collect();
            match inside(&argv, true) {
                Inside::Command { in_place, .. } => in_place,
                other => panic!("{line}: {other:?}"),
            }
        };
        assert!(!in_place("flock .lock tool"));
        assert!(in_place("flock -F .lock tool"));
        assert!(in_place("flock --no-fork .lock tool"));
    }

    #[test]
    fn env_splits_its_string_as_coreutils_does() {
        // The words coreutils 9.1 made of each string: `env -S "printf
        // <%s>\\n STRING"` printed each between angle brackets.
        for (text, words) in [
            (
                r##"a 'b c' "d e" x\_y 'q\'s' '\n' "\t"#no  #comment x"##,
                &["a", "b c", "d e", "x", "y", "q's", "\\n", "\t#no"][..],
            ),
            ("'' b", &["", "b"]),
            (r#"a'b'"c" #x"#, &["abc"]),
            (r#""a\$b" '\\x'"#, &["a$b", "\\x"]),
            (r#""a\_b""#, &["a b"]),
            (r"a\cb c", &["a"]),
            (r#"\#a \"b"#, &["#a", "\"b"]),
            ("\ta\tb", &["a", "b"]),
        ] {
            let split = split_string(text);
            let split: Option<Vec<&str>> = split
                .as_ref()
                .map(|w| w.iter().map(String::as_str).collect());
            assert_eq!(split.as_deref(), Some(words), "{text}");
        }
        // Where env stops with an error, or would read its environment.
        for text in [
            "printf %s $HOME",
            "printf ${HOME}",
            r"a\qb",
            r#""a\cb""#,
            r"a\",
            r#""ab"#,
            "'ab",
        ] {
            assert_eq!(split_string(text), None, "{text}");
        }
    }

    #[test]
    fn setsid_that_returns_at_once_is_told_apart() {
        assert_eq!(wrapped("setsid tool", true).as_deref(), Some("broken"));
        assert_eq!(wrapped("setsid -f tool", false).as_deref(), Some("broken"));
        assert_eq!(wrapped("setsid tool", false).as_deref(), Some("tool"));
        assert_eq!(wrapped("setsid -fw tool", true).as_deref(), Some("tool"));
    }
}
