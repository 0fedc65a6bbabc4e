//! `{files}` expansion: the selected files as separate arguments, split into
//! as many invocations as the operating system's argument limit requires.

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
fn cost(arg: &str) -> usize {
    arg.len() + 1 + std::mem::size_of::<usize>()
}

/// A relative path that starts with `-` would read as an option.
fn safe_path(file: &str) -> String {
    if file.starts_with('-') {
        format!("./{file}")
    } else {
        file.to_string()
    }
}

/// Quotes `s` for `sh`, whatever it contains.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The invocations that run `command` over `files`. Without a `{files}`
/// token the command runs once, as it is.
pub fn expand_invocations(command: &CommandLine, files: &[String]) -> Vec<Invocation> {
    expand_with_budget(command, files, budget())
}

fn expand_with_budget(command: &CommandLine, files: &[String], budget: usize) -> Vec<Invocation> {
    let files: Vec<String> = files.iter().map(|f| safe_path(f)).collect();
    match command {
        CommandLine::Argv(argv) => {
            let Some(at) = argv.iter().position(|a| a == "{files}") else {
                return vec![Invocation { argv: argv.clone() }];
            };
            let fixed: usize = argv.iter().map(|a| cost(a)).sum();
            let room = budget.saturating_sub(fixed).max(1);
            batches(&files, room, cost)
                .into_iter()
                .map(|batch| {
                    let mut out = argv[..at].to_vec();
                    out.extend(batch.iter().map(|f| (*f).clone()));
                    out.extend(argv[at + 1..].iter().cloned());
                    Invocation { argv: out }
                })
                .collect()
        }
        CommandLine::Shell(script) => {
            let shell = |script: String| Invocation {
                argv: vec!["sh".to_string(), "-c".to_string(), script],
            };
            if !script.contains("{files}") {
                return vec![shell(script.clone())];
            }
            // The script is one argument, so it must also stay under the
            // single-argument limit.
            let room = budget
                .min(MAX_SINGLE_ARG)
                .saturating_sub(script.len() + 64)
                .max(1);
            batches(&files, room, |f| shell_quote(f).len() + 1)
                .into_iter()
                .map(|batch| {
                    let quoted: Vec<String> = batch.iter().map(|f| shell_quote(f)).collect();
                    shell(script.replace("{files}", &quoted.join(" ")))
                })
                .collect()
        }
    }
}

/// Splits `files` into runs whose total cost stays within `room`; a file
/// that alone exceeds it still gets a batch of its own.
fn batches(files: &[String], room: usize, cost: impl Fn(&str) -> usize) -> Vec<Vec<&String>> {
    let mut out: Vec<Vec<&String>> = Vec::new();
    let mut current: Vec<&String> = Vec::new();
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

    #[test]
    fn no_files_token_runs_once_unchanged() {
        let got = expand_invocations(&argv("cargo test"), &["a".into()]);
        assert_eq!(
            got,
            [Invocation {
                argv: vec!["cargo".into(), "test".into()]
            }]
        );
    }

    #[test]
    fn files_become_separate_arguments_in_batches_that_cover_every_file_once() {
        let files: Vec<String> = (0..5000)
            .map(|i| format!("dir/file with space {i:05}.md"))
            .collect();
        let got = expand_with_budget(&argv("lint --fix {files} --end"), &files, 16 * 1024);
        assert!(got.len() > 1, "a small budget must split");
        let mut seen = Vec::new();
        for inv in &got {
            assert_eq!(&inv.argv[..2], ["lint", "--fix"]);
            assert_eq!(inv.argv.last().unwrap(), "--end");
            let size: usize = inv.argv.iter().map(|a| cost(a)).sum();
            assert!(size <= 16 * 1024, "batch of {size} bytes");
            seen.extend(inv.argv[2..inv.argv.len() - 1].iter().cloned());
        }
        assert_eq!(seen, files);
    }

    #[test]
    fn leading_dashes_cannot_become_options() {
        let got = expand_invocations(&argv("cat {files}"), &["-rf".into(), "a-b".into()]);
        assert_eq!(got[0].argv, ["cat", "./-rf", "a-b"]);
    }

    #[test]
    fn shell_commands_quote_every_name() {
        let names = vec![
            "it's".to_string(),
            "a b".into(),
            "$(rm -rf x)".into(),
            "new\nline".into(),
        ];
        let got = expand_invocations(&CommandLine::Shell("printf '<%s>' {files}".into()), &names);
        assert_eq!(got.len(), 1);
        let out = std::process::Command::new(&got[0].argv[0])
            .args(&got[0].argv[1..])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "<it's><a b><$(rm -rf x)><new\nline>"
        );
    }
}
