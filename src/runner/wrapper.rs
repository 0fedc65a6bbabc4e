//! Reading the command line of a program that runs another one
//! (`env X=1 tool`, `timeout 60 tool`, `nice -n 5 tool`, ...), so the
//! program it wraps can be looked up before the check starts. Such a
//! wrapper exits 127 when its program is not installed, and that status
//! alone reads as a failure of the code. Each wrapper's options are read
//! as its manual documents them (GNU coreutils, util-linux, GNU time,
//! all of which stop at the first word that is not an option); anything
//! else (an option not listed, one that changes where the program is
//! looked up) leaves the command line unread, to start as written.

use std::ffi::OsString;

/// What a wrapper's command line runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Inside<'a> {
    /// Not a wrapper, or not a command line read with certainty.
    Unknown,
    /// The wrapped program and its arguments; `in_place` when the wrapper
    /// replaces itself with it (it stays the check's first process).
    Command {
        argv: &'a [OsString],
        in_place: bool,
    },
    /// `setsid` that returns at once, before its command ends: what the
    /// command says would never reach the check's result.
    Detached(String),
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
    /// Words between the options and the program (timeout's duration,
    /// chrt's priority, taskset's mask).
    operands: usize,
    /// Whether the wrapper replaces itself with its program (`exec`) rather
    /// than running it as a child.
    in_place: bool,
}

/// The wrappers read, each with the options its manual lists. Options
/// that change where or how the program is found (`env -i`, `-C`, `-S`),
/// or that mean there is no program to run (`ionice -p`, `chrt -p`,
/// `taskset -p`), are left out on purpose: with them the command line is
/// not read.
const WRAPPERS: &[Syntax] = &[
    // env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]
    Syntax {
        name: "env",
        short_flags: "v",
        short_values: "u",
        long_flags: &[
            "debug",
            "list-signal-handling",
            "block-signal",
            "default-signal",
            "ignore-signal",
        ],
        long_values: &["unset"],
        operands: 0,
        in_place: true,
    },
    // timeout [OPTION] DURATION COMMAND [ARG]...
    Syntax {
        name: "timeout",
        short_flags: "v",
        short_values: "ks",
        long_flags: &["preserve-status", "foreground", "verbose"],
        long_values: &["kill-after", "signal"],
        operands: 1,
        in_place: false,
    },
    // nice [OPTION] [COMMAND [ARG]...], and the older `nice -5 COMMAND`.
    Syntax {
        name: "nice",
        short_flags: "",
        short_values: "n",
        long_flags: &[],
        long_values: &["adjustment"],
        operands: 0,
        in_place: true,
    },
    // nohup COMMAND [ARG]...
    Syntax {
        name: "nohup",
        short_flags: "",
        short_values: "",
        long_flags: &[],
        long_values: &[],
        operands: 0,
        in_place: true,
    },
    // stdbuf OPTION... COMMAND
    Syntax {
        name: "stdbuf",
        short_flags: "",
        short_values: "ioe",
        long_flags: &[],
        long_values: &["input", "output", "error"],
        operands: 0,
        in_place: true,
    },
    // ionice [-c class] [-n level] [-t] COMMAND [ARG]...
    Syntax {
        name: "ionice",
        short_flags: "t",
        short_values: "cn",
        long_flags: &["ignore"],
        long_values: &["class", "classdata"],
        operands: 0,
        in_place: true,
    },
    // setsid [options] PROGRAM [ARG]...
    Syntax {
        name: "setsid",
        short_flags: "cfw",
        short_values: "",
        long_flags: &["ctty", "fork", "wait"],
        long_values: &[],
        operands: 0,
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
        operands: 1,
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
        operands: 1,
        in_place: true,
    },
    // GNU time [options] COMMAND [ARG]...
    Syntax {
        name: "time",
        short_flags: "apqvV",
        short_values: "fo",
        long_flags: &["append", "portability", "quiet", "verbose"],
        long_values: &["format", "output"],
        operands: 0,
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
    if rest.is_empty() {
        // Nothing wrapped (`env` alone prints the environment).
        return Inside::Unknown;
    }
    if syntax.name == "setsid" {
        let forks = leader || read.chars.contains('f');
        if forks && !read.chars.contains('w') {
            let why = if leader {
                "a check starts as the leader of a session of its own, where `setsid` forks"
            } else {
                "`--fork` runs its command in a child"
            };
            return Inside::Detached(format!(
                "`setsid` without `--wait` exits 0 at once, before its command ends ({why}), so what the command finds would never reach the check: add `--wait` (`setsid -w ...`), or leave `setsid` out"
            ));
        }
        return Inside::Command {
            argv: rest,
            in_place: !forks,
        };
    }
    Inside::Command {
        argv: rest,
        in_place: syntax.in_place,
    }
}

/// The program a wrapper said it could not find, in its own words (as
/// recorded from coreutils 9.1, util-linux 2.38.1 and GNU time under
/// `LC_ALL=C` and `C.UTF-8`, which quote differently): `timeout: failed to
/// run command ‘NAME’: ...`, `env: ‘NAME’: ...`, `nice: ‘NAME’: ...`,
/// `nohup: failed to run command 'NAME': ...`, `ionice: failed to execute
/// NAME: ...`, `time: cannot run NAME: ...`, each ending in `No such file or
/// directory` and maybe prefixed with the path the wrapper was started by.
/// A name with a `/` is a path, no program to install.
pub fn said_not_found(line: &str) -> Option<String> {
    static LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[^:\s]*/)?(?:env|nice|nohup|stdbuf|timeout|ionice|chrt|taskset|setsid|time): (?:failed to run command |failed to execute |cannot run )?['‘]?([^/'‘’\s]+?)['’]?: No such file or directory\s*$",
        )
        .expect("a valid pattern")
    });
    LINE.captures(line).map(|found| found[1].to_string())
}

/// What reading a wrapper's options found.
struct Read {
    /// Words before the wrapped program.
    skipped: usize,
    /// The options given, each as its short letter.
    chars: String,
}

/// Reads the options, assignments and operands `syntax` allows at the start
/// of `args`; `None` when a word is not one it documents, or one that
/// changes where the program would be looked up.
fn read(syntax: &Syntax, args: &[OsString]) -> Option<Read> {
    let mut chars = String::new();
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
                // The letter of the one long option the decision needs.
                if name == "wait" || name == "fork" {
                    chars.push_str(&name[..1]);
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
    for _ in 0..syntax.operands {
        // An operand must be there, and read as one: chrt's priority and
        // timeout's duration start with a digit, as a mask does
        // (`0x3`, `0-3`).
        let word = args.get(i)?.to_str()?;
        if !word.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return None;
        }
        i += 1;
    }
    Some(Read { skipped: i, chars })
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
            Inside::Detached(_) => Some("detached".to_string()),
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
            "env -S tool",
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
            "time: cannot run nosuch: No such file or directory",
        ] {
            assert_eq!(said_not_found(line).as_deref(), Some("nosuch"), "{line}");
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
    fn setsid_that_returns_at_once_is_told_apart() {
        assert_eq!(wrapped("setsid tool", true).as_deref(), Some("detached"));
        assert_eq!(
            wrapped("setsid -f tool", false).as_deref(),
            Some("detached")
        );
        assert_eq!(wrapped("setsid tool", false).as_deref(), Some("tool"));
        assert_eq!(wrapped("setsid -fw tool", true).as_deref(), Some("tool"));
    }
}
