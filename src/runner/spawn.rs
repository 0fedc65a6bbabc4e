//! Running one check: resolve the program, spawn each invocation in its own
//! process group, pump its output through the capture, enforce the timeout
//! and interrupts by killing the whole group.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::config::CheckKind;
use crate::diagnostics::Extractor;

use super::capture::Capture;
use super::verifier::{parse_verifier_answer, MAX_ANSWER_BYTES};
use super::wrapper::{self, Inside};
use super::{
    sys, BatchOutcome, CapturedOutput, CheckOutcome, CheckPlan, Termination, VerifierReply,
};

/// Variables set for every check so tool output is predictable; the verdict
/// records them.
pub const PINNED_ENV: &[(&str, &str)] = &[
    ("NO_COLOR", "1"),
    ("CARGO_TERM_COLOR", "never"),
    ("PY_COLORS", "0"),
];
/// Variables removed for every check: they would force colour back on.
pub const REMOVED_ENV: &[&str] = &["FORCE_COLOR", "CLICOLOR_FORCE", "MYPY_FORCE_COLOR"];
/// git's repository-local variables (`git rev-parse --local-env-vars`),
/// removed for every check, as git removes them before it works in a
/// submodule. git exports some to hooks (`GIT_DIR`, `GIT_INDEX_FILE`,
/// `GIT_WORK_TREE`), and a test suite that runs `git` in a temporary
/// repository would write into the user's instead: its index, its config,
/// its branch. A check that runs git finds the repository from its
/// directory, as it would in a terminal.
pub const GIT_LOCAL_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// How often a waiting check looks at its deadline and the interrupt flag.
const POLL: Duration = Duration::from_millis(50);
/// How long output may keep flowing after the check's own process exited
/// (a background process it started still holds the pipe).
const LEADER_EXIT_GRACE: Duration = Duration::from_millis(200);
/// Between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the pipe to close once every process was killed.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// How long the pipe may stay open once the check's own processes were
/// stopped before phasegate looks for what else holds it.
const HOLDER_LOOK: Duration = Duration::from_millis(100);
/// Bytes per read from the pipe.
const CHUNK: usize = 64 * 1024;

enum Msg {
    Data(Vec<u8>),
    End(std::io::Result<()>),
    /// A verifier's standard error, kept apart from its answer.
    Stderr(Vec<u8>),
    StderrEnd,
}

/// Why an invocation stopped before its process ended by itself.
#[derive(Clone, PartialEq, Eq)]
enum Stop {
    None,
    TimedOut,
    Interrupted,
    ReadFailed(String),
}

/// Runs every invocation of `plan` and reports how it went.
pub fn run_check(plan: &CheckPlan) -> CheckOutcome {
    let start = Instant::now();
    let mut outcome = CheckOutcome {
        name: plan.name.clone(),
        termination: Termination::Exited(0),
        duration: Duration::ZERO,
        output: CapturedOutput::default(),
        log_path: plan.log_path.clone(),
        diagnostics: Vec::new(),
        dropped_diagnostics: 0,
        parser_used: None,
        errors_fail: false,
        verifier: None,
        failed_batch: None,
        invocations: plan.invocations.clone(),
        batches: Vec::new(),
    };
    let (resolved, log) = match startable(plan) {
        Ok(ready) => ready,
        Err(termination) => {
            outcome.termination = explained(plan, termination);
            return outcome;
        }
    };
    let verifier = plan.kind == CheckKind::Verifier;
    let make = extractor(plan);
    let mut capture = Capture::new(log, plan.log_limit, make);
    if verifier {
        capture.keep_answer(MAX_ANSWER_BYTES);
    }
    let (termination, answers, failed_batch, batches) =
        run_batches(plan, &resolved, start + plan.timeout, &mut capture);
    outcome.failed_batch = failed_batch;
    outcome.batches = batches;

    let mut finished = capture.finish();
    if termination == Termination::Exited(0) {
        finished.extracted.exited_zero();
    }
    // Where each batch's output starts in the log as written, and the
    // log's line on how each ended.
    let of = plan.invocations.len();
    let notes: Vec<String> = outcome
        .batches
        .iter_mut()
        .enumerate()
        .map(|(n, batch)| {
            let at = batch.output_from.unwrap_or_default();
            batch.output_from = finished.log_offset(at);
            let from = match batch.output_from {
                Some(from) => format!("its output from byte {from}"),
                None => format!(
                    "its output from byte {at} of the output, where the log is cut"
                ),
            };
            let forgiven = if batch.found_no_tests {
                "; its tool found no test among its files, and another batch's ran some: its status does not count"
            } else {
                ""
            };
            format!(
                "batch {} of {of} ({from}): {}{forgiven}",
                n + 1,
                ended(&batch.termination)
            )
        })
        .collect();
    finished.close(&notes);
    outcome.output = finished.output;
    outcome.diagnostics = finished.extracted.diagnostics;
    outcome.dropped_diagnostics = finished.extracted.dropped;
    outcome.parser_used = finished.extracted.parser;
    outcome.errors_fail = finished.extracted.errors_fail;
    if let Some(e) = finished.log_error {
        outcome.diagnostics.push(crate::diagnostics::Diagnostic {
            check: plan.name.clone(),
            origin: plan.origin,
            tool: "phasegate".to_string(),
            severity: crate::diagnostics::Severity::Warning,
            code: Some(crate::diagnostics::OwnCode::LogWriteFailed.to_string()),
            message: format!("failed to write the log `{}`: {e}", plan.log_path.display()),
            ..crate::diagnostics::Diagnostic::default()
        });
    }
    // Kept whatever ended the check: a whole "fail" printed before a
    // timeout or a kill is still the reviewer's word (the gate reads it).
    if verifier {
        if let Some((reply, dropped)) = answers.finish() {
            outcome.dropped_diagnostics += dropped;
            outcome.verifier = Some(reply);
        }
    }
    outcome.termination = explained(plan, as_the_shell_says(plan, termination, &outcome.output));
    outcome.duration = start.elapsed();
    outcome
}

/// A program found missing, with the project's virtual environment when
/// that has it and the check did not run in it (another environment is
/// active, or the check's `env` sets `PATH`): the user who sees the tool
/// in `.venv/bin` is told why it was not used. Looked for only here, so a
/// run whose tools are found pays nothing for it.
fn explained(plan: &CheckPlan, termination: Termination) -> Termination {
    match termination {
        Termination::Missing {
            program,
            unused_venv: None,
        } => {
            let unused_venv = super::venv::unused_holding(plan, &program);
            Termination::Missing {
                program,
                unused_venv,
            }
        }
        other => other,
    }
}

/// What the check starts: its program as found on its `PATH`, and its log
/// opened. Otherwise why it cannot start: a program or interpreter that is
/// not installed (tier 1), or a broken check (a spawn failure).
fn startable(plan: &CheckPlan) -> Result<(PathBuf, File), Termination> {
    let Some((program, argv)) = plan
        .invocations
        .first()
        .and_then(|i| Some((i.argv.first()?, i.argv.as_slice())))
    else {
        return Err(Termination::SpawnFailed(
            "the check has no command".to_string(),
        ));
    };
    if let Some(why) = unusable_cwd(&plan.cwd, &plan.root) {
        return Err(Termination::SpawnFailed(why));
    }
    let resolved = locate(program, plan)?;
    if let Some(why) = missing_script(argv, &plan.cwd) {
        return Err(Termination::SpawnFailed(why));
    }
    // The program a wrapper runs (`timeout 60 tool`, `env X=1 tool`) is
    // looked up as the check's own: the wrapper would exit 127 without
    // it, a status that reads as a failure of the code.
    let mut leader = true;
    let mut argv = std::borrow::Cow::Borrowed(argv);
    loop {
        match wrapper::inside(&argv, leader) {
            Inside::Unknown => break,
            Inside::Broken(why) => return Err(Termination::SpawnFailed(why)),
            Inside::Command {
                argv: wrapped,
                in_place,
            } => {
                locate(&wrapped[0], plan)?;
                if let Some(why) = missing_script(&wrapped, &plan.cwd) {
                    return Err(Termination::SpawnFailed(why));
                }
                argv = std::borrow::Cow::Owned(wrapped.into_owned());
                leader &= in_place;
            }
        }
    }
    let log = open_log(&plan.log_path, plan.log_sharing).map_err(|e| {
        Termination::SpawnFailed(format!(
            "failed to create its log `{}`: {e}",
            plan.log_path.display()
        ))
    })?;
    Ok((resolved, log))
}

/// `program` as found on the check's `PATH`, or why it cannot start: it
/// is not installed, or the interpreter its `#!` line names is not (tier
/// 1), or it is a path to something that cannot run (a broken check).
fn locate(program: &std::ffi::OsStr, plan: &CheckPlan) -> Result<PathBuf, Termination> {
    let Ok(resolved) = which::which_in(program, plan.path.as_ref(), &plan.cwd) else {
        return Err(match not_runnable(program, &plan.cwd, &plan.root) {
            // A path to something that is there but cannot be run, or to
            // a script of the project that is not there, is a broken
            // check, not a tool that is not installed.
            Some(why) => Termination::SpawnFailed(why),
            None => Termination::Missing {
                program: program.to_string_lossy().into_owned(),
                unused_venv: None,
            },
        });
    };
    if let Some(line) = shebang(&resolved) {
        if let Some(why) = carriage_return_shebang(&line, program) {
            return Err(Termination::SpawnFailed(why));
        }
        // A script whose interpreter is not installed cannot start: that
        // is the interpreter missing (tier 1), whatever the script is.
        if let Some(interpreter) = missing_interpreter(&line, plan.path.as_ref(), &plan.cwd) {
            return Err(Termination::Missing {
                program: interpreter,
                unused_venv: None,
            });
        }
    }
    Ok(resolved)
}

/// The command a chain of wrappers runs in the end (`tool a` of `nice
/// timeout 60 tool a`), or `argv` itself: its status is that command's.
fn innermost(argv: &[std::ffi::OsString]) -> std::borrow::Cow<'_, [std::ffi::OsString]> {
    let mut argv = std::borrow::Cow::Borrowed(argv);
    while let Inside::Command { argv: wrapped, .. } = wrapper::inside(&argv, false) {
        argv = std::borrow::Cow::Owned(wrapped.into_owned());
    }
    argv
}

/// Why the check cannot run in `cwd`: it is not a directory of the tree
/// the checks run in (`root`, the work tree or a temporary checkout).
/// `phasegate.toml` keeps `cwd` relative and free of `..`, but a symbolic
/// link on the way can still lead elsewhere: a check that ran there would
/// judge files the change does not hold and pass on them. Whether the
/// directory is there is a fact of the tree checked, not of the file (a
/// range's end may add it), so it is looked at here, where the check
/// would start: a check that cannot start is a spawn failure (tier 2).
fn unusable_cwd(cwd: &std::path::Path, root: &std::path::Path) -> Option<String> {
    let shown = cwd.strip_prefix(root).unwrap_or(cwd).display();
    let fix = "fix `cwd` in phasegate.toml";
    let real = match std::fs::canonicalize(cwd) {
        Err(_) if cwd.symlink_metadata().is_ok() => {
            return Some(format!(
                "its working directory `{shown}` is a symbolic link to nothing (`cwd` in phasegate.toml): {fix}, or restore what the link points to"
            ))
        }
        Err(_) => {
            return Some(format!(
                "its working directory `{shown}` does not exist in the tree checked (`cwd` in phasegate.toml): {fix}, or add the directory"
            ))
        }
        Ok(real) => real,
    };
    if !real.is_dir() {
        return Some(format!(
            "its working directory `{shown}` is not a directory (`cwd` in phasegate.toml): {fix}"
        ));
    }
    // The root as the file system names it, for the comparison: it may be
    // reached through a link itself (`/tmp` on macOS).
    let inside = std::fs::canonicalize(root).map_or(true, |root| real.starts_with(root));
    (!inside).then(|| {
        format!(
            "its working directory `{shown}` leads outside the repository, to `{}`, through a symbolic link (`cwd` in phasegate.toml): {fix} to name a directory of the repository",
            real.display()
        )
    })
}

/// How many of a command's words the diagnostics extractor is given: its
/// options (`npm test -- --ci --runInBand … --json`), not the thousands of
/// files `{files}` may add after them.
const EXTRACTOR_WORDS: usize = 64;

/// What makes the diagnostics extractor of each batch of the check's
/// output; its parser may be picked by the command's arguments.
fn extractor(plan: &CheckPlan) -> impl Fn() -> Extractor + 'static {
    let argv: Vec<String> = plan
        .invocations
        .first()
        .map(|i| {
            i.argv
                .iter()
                .take(EXTRACTOR_WORDS)
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let (name, origin, parser) = (plan.name.clone(), plan.origin, plan.parser.clone());
    let (root, cwd) = (plan.root.clone(), plan.cwd.clone());
    let go_work = plan.go_work.clone();
    move || Extractor::new(&name, origin, &parser, &argv, &root, &cwd).go_work(go_work.as_deref())
}

/// Runs the check's invocations (one per batch of files) in turn: how the
/// check ended, a verifier's answers, read as each batch ends, the status
/// of a batch that failed when another did not finish, and how each batch
/// ended.
///
/// Every batch runs, as pre-commit and lefthook run theirs: the files of
/// one batch are no less the change's because another batch's tool
/// crashed or could not start, and a failure they hold must not go
/// unseen behind it. Only what stops the whole check stops the batches
/// after it: the timeout, which is the check's budget for all of them, and
/// an interrupt, which asks phasegate to stop. The check's end is the
/// worst of its batches': what stopped it, else the first crash or spawn
/// failure, else the first non-zero exit, else 0; a non-zero exit of
/// another batch stands beside a crash (`failed_batch`), and the log and
/// the invocation record say how each batch ended.
fn run_batches<'a>(
    plan: &'a CheckPlan,
    resolved: &std::path::Path,
    deadline: Instant,
    capture: &mut Capture,
) -> (Termination, Answers<'a>, Option<i32>, Vec<BatchOutcome>) {
    let verifier = plan.kind == CheckKind::Verifier;
    let mut event: Option<Termination> = None;
    let mut answers = Answers::new(plan);
    let mut ended_batches = Vec::new();
    let batches = plan.invocations.len();
    for (n, invocation) in plan.invocations.iter().enumerate() {
        if sys::interrupted() {
            event = Some(Termination::Interrupted);
            if batches > 1 {
                capture.note(format!("batches {} to {batches} were not run", n + 1));
            }
            break;
        }
        let from = capture.total();
        let started = Instant::now();
        let this = run_invocation(
            plan,
            resolved,
            &invocation.argv[1..],
            verifier,
            deadline,
            capture,
        );
        if let Some(answer) = capture.take_answer() {
            answers.add(answer);
        }
        let no_tests = capture.end_batch(this == Termination::Exited(0));
        // The log says how each batch ended, and where its output starts.
        if batches > 1 {
            capture.note_batch(n);
        }
        ended_batches.push(BatchOutcome {
            termination: this.clone(),
            duration: started.elapsed(),
            output_from: Some(from),
            found_no_tests: no_tests && this != Termination::Exited(0),
        });
        let stops = matches!(this, Termination::TimedOut(_) | Termination::Interrupted);
        match this {
            Termination::Exited(_) => {}
            // What stopped the check is its end, whatever came before.
            other if stops => event = Some(other),
            other => {
                event.get_or_insert(other);
            }
        }
        if stops {
            if n + 1 < batches {
                capture.note(format!("batches {} to {batches} were not run", n + 2));
            }
            break;
        }
    }
    // A batch whose tool found no test among its files fails only when
    // no batch's tool found any: run as one command line, the tool would
    // have run those and never said it.
    let ran_tests = ended_batches
        .iter()
        .any(|b| matches!(b.termination, Termination::Exited(_)) && !b.found_no_tests);
    let mut forgiven = Vec::new();
    for (n, batch) in ended_batches.iter_mut().enumerate() {
        batch.found_no_tests &= ran_tests;
        if batch.found_no_tests {
            forgiven.push(n);
        }
    }
    capture.forgive(&forgiven);
    let first_exit = ended_batches
        .iter()
        .filter(|b| !b.found_no_tests)
        .find_map(|b| match b.termination {
            Termination::Exited(code) if code != 0 => Some(code),
            _ => None,
        })
        .unwrap_or(0);
    match event {
        Some(event) => {
            let failed_batch = (first_exit != 0).then_some(first_exit);
            (event, answers, failed_batch, ended_batches)
        }
        None => (
            Termination::Exited(first_exit),
            answers,
            None,
            ended_batches,
        ),
    }
}

/// How an invocation ended, for a note in the log.
fn ended(termination: &Termination) -> String {
    match termination {
        Termination::Exited(code) => format!("exited {code}"),
        Termination::Signaled(signal) => format!("killed by signal {signal}"),
        Termination::TimedOut(limit) => format!(
            "stopped at the check's timeout ({}s, for all its batches together)",
            limit.as_secs_f64()
        ),
        Termination::Missing { program, .. } => format!("`{program}` was not found"),
        Termination::SpawnFailed(why) => format!("could not run: {why}"),
        Termination::Interrupted => "stopped: phasegate was interrupted".to_string(),
    }
}

/// `sh -c` exits 127 when it cannot find a command (a tool that is not
/// installed, tier 1), as does a wrapper it ran (`timeout 60 tool`), and
/// 128 + N when a command it waited for was killed by signal N (a crash);
/// it says which in its own words, and the check's end is read from them. A package manager that runs the project's
/// scripts through `sh` (`npm run lint`) or looks up its tools
/// (`npx tsc`) says so in its own words too.
fn as_the_shell_says(
    plan: &CheckPlan,
    termination: Termination,
    output: &CapturedOutput,
) -> Termination {
    // A command that succeeded found what it ran: its output is not read
    // again.
    let Termination::Exited(code @ 1..) = termination else {
        return termination;
    };
    let first = plan
        .invocations
        .first()
        .map_or(&[][..], |i| i.argv.as_slice());
    // flock that gave up on its lock never ran the check's command.
    if let Some(why) = wrapper::lock_not_got(
        first,
        code,
        output.tail_lines(1).first().map(String::as_str),
    ) {
        return Termination::SpawnFailed(why);
    }
    // A wrapper (`timeout 600 npm test`) exits with its command's status.
    let argv = &innermost(
        plan.invocations
            .first()
            .map_or(&[][..], |i| i.argv.as_slice()),
    )[..];
    let runner = package_runner(argv);
    let shell = runs_a_shell(argv);
    if runner.is_none()
        && (!shell
            || (code != SHELL_NOT_FOUND
                && !wrapper::not_found_status(code)
                && crash_words(code).is_none()))
    {
        return termination;
    }
    // Head and tail read as one text where nothing was dropped.
    let lines = output.tail_lines(usize::MAX);
    if let Some(program) = runner.and_then(|runner| runner_not_found(runner, argv, code, &lines)) {
        return Termination::Missing {
            program,
            unused_venv: None,
        };
    }
    if !shell {
        return termination;
    }
    if let Some(program) = shell_not_found(code, &lines) {
        Termination::Missing {
            program,
            unused_venv: None,
        }
    } else if let Some(signal) = shell_saw_crash(code, &lines) {
        Termination::Signaled(signal)
    } else {
        termination
    }
}

/// The file name of the program `argv` runs (`npm` of `/usr/bin/npm`).
fn program_name(argv: &[std::ffi::OsString]) -> Option<&str> {
    std::path::Path::new(argv.first()?).file_name()?.to_str()
}

/// The command that installs the project's dependencies (`npm install`,
/// `pipenv install --dev`), when `argv` runs its scripts or tools through
/// a package manager (wrappers read, as for its exit) and what that could
/// not find, `missing`, is not the package manager itself: a dependency
/// that was never installed. pipenv leaves out the development packages,
/// where the tools checks run are, unless asked; poetry installs them.
pub fn dependency_installer(argv: &[std::ffi::OsString], missing: &str) -> Option<&'static str> {
    let runner = package_runner(&innermost(argv)).filter(|runner| *runner != missing)?;
    Some(match runner {
        "npm" | "npx" => "npm install",
        "pnpm" | "pnpx" => "pnpm install",
        "bun" | "bunx" => "bun install",
        "yarn" => "yarn install",
        "poetry" => "poetry install",
        "pipenv" => "pipenv install --dev",
        _ => return None,
    })
}

/// The package manager `argv` runs, when it is one that runs the
/// project's scripts and tools: npm, npx, pnpm, pnpx, yarn, bun or bunx,
/// or Python's poetry or pipenv (`poetry run pytest`).
fn package_runner(argv: &[std::ffi::OsString]) -> Option<&'static str> {
    let name = program_name(argv)?;
    [
        "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "poetry", "pipenv",
    ]
    .into_iter()
    .find(|runner| *runner == name)
}

/// The tool a package manager said it could not find, in its own words
/// in its output `lines` (those of npx, pnpm and yarn among the last ones;
/// after them it prints only its own notes):
/// - a script's `sh` (`sh: 1: eslint: not found`): npm and yarn exit 127,
///   pnpm exits 1 and says `Command failed.` next;
/// - npx, which never installs a package without being asked (`npx
///   canceled due to missing packages`): the tool it was asked to run;
/// - `pnpm exec` (exit 254) and yarn (exit 1): `Command "tsc" not found`;
/// - `bunx --no-install` (exit 1): `Could not find an existing 'tsc'
///   binary to run`; `bun run`'s scripts run in bash where there is one
///   (`/usr/bin/bash: line 1: eslint: command not found`, exit 127);
/// - `poetry run` (exit 1): `Command not found: pytest`; `pipenv run`
///   hands the command to `sh`, whose words it prints (exit 127).
fn runner_not_found(
    runner: &str,
    argv: &[std::ffi::OsString],
    code: i32,
    lines: &[String],
) -> Option<String> {
    static COMMAND: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"Command "([^"]+)" not found"#).expect("a valid pattern")
    });
    static BUNX: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^error: Could not find an existing '([^']+)' binary to run\. Stopping because --no-install was passed\.",
        )
        .expect("a valid pattern")
    });
    let last: Vec<&String> = lines
        .iter()
        .rev()
        .filter(|line| !line.trim().is_empty())
        .take(4)
        .collect();
    // 127 is the shell's own status for a command not found: its words
    // may come before the package manager's notes (npm's update notice).
    if code == SHELL_NOT_FOUND {
        if let Some(program) = shell_not_found(code, lines) {
            return Some(program);
        }
    }
    // pnpm exits 1 for a failing script as for a missing command: its
    // `Command failed.` right after the shell's words tells them apart
    // (a failing test suite ends with its own summary, and `Test failed.`).
    if runner == "pnpm" && code == 1 {
        let found = last.windows(2).find_map(|pair| {
            (pair[0].trim() == "ELIFECYCLE  Command failed.")
                .then(|| shell_line_not_found(pair[1]))
                .flatten()
        });
        if found.is_some() {
            return found;
        }
    }
    match (runner, code) {
        ("npx" | "npm", _)
            if last
                .iter()
                .any(|line| line.contains("npx canceled due to missing packages")) =>
        {
            // `npx tsc`, `npm exec -- tsc`: the first word that is not an
            // option.
            argv.iter()
                .skip(1)
                .map(|arg| arg.to_string_lossy())
                .find(|arg| !arg.starts_with('-') && arg != "exec")
                .map(std::borrow::Cow::into_owned)
        }
        ("pnpm", 254) | ("yarn", 1) => last
            .iter()
            .find_map(|line| COMMAND.captures(line))
            .map(|found| found[1].to_string()),
        ("bunx", 1) => last
            .iter()
            .find_map(|line| BUNX.captures(line))
            .map(|found| found[1].to_string()),
        // Its last line, naming the command it was asked to run: a
        // check that failed does not end on poetry's words about itself.
        ("poetry", 1) => {
            let asked = argv
                .iter()
                .skip(1)
                .map(|arg| arg.to_string_lossy())
                .skip_while(|arg| arg != "run")
                .nth(1)?;
            (last.first()?.trim_end() == format!("Command not found: {asked}"))
                .then(|| asked.into_owned())
        }
        _ => None,
    }
}

/// The signals that mean a process crashed, with the words a shell prints
/// for each (`strsignal`).
const CRASHES: &[(i32, &str)] = &[
    (4, "Illegal instruction"),
    (5, "Trace/breakpoint trap"),
    (6, "Aborted"),
    (7, "Bus error"),
    (8, "Floating point exception"),
    (9, "Killed"),
    (11, "Segmentation fault"),
    (31, "Bad system call"),
];

/// The signal and its words for a shell's exit status `code` (128 + N).
fn crash_words(code: i32) -> Option<(i32, &'static str)> {
    CRASHES
        .iter()
        .find(|(signal, _)| code == 128 + signal)
        .copied()
}

/// The signal that killed a command `sh` ran, when it exited with `code`
/// 128 + that signal and printed its description (in its output `lines`):
/// dash's `Segmentation fault`, bash's `sh: line 1: 123 Segmentation fault
/// (core dumped) ...`.
fn shell_saw_crash(code: i32, lines: &[String]) -> Option<i32> {
    let (signal, words) = crash_words(code)?;
    // dash: the words alone; bash: after the process id, at the start of
    // a line or after its `sh: line N:` prefix.
    let said = |line: &String| {
        let line = line.trim_end();
        let line = line.strip_suffix(" (core dumped)").unwrap_or(line);
        if line == words {
            return true;
        }
        let rest = match line.split_once(": line ") {
            Some((shell, rest)) if shell.ends_with("sh") => {
                rest.split_once(':').map_or("", |(_, rest)| rest)
            }
            _ => line,
        };
        let rest = rest.trim_start();
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && rest[digits..].trim_start().starts_with(words)
    };
    lines.iter().any(said).then_some(signal)
}

/// The status a POSIX shell exits with when a command is not found.
const SHELL_NOT_FOUND: i32 = 127;

/// Whether `argv` runs a script by `sh -c` (`shell = true`).
fn runs_a_shell(argv: &[std::ffi::OsString]) -> bool {
    argv.first().is_some_and(|a| a == "sh") && argv.get(1).is_some_and(|a| a == "-c")
}

/// The command `sh` said it could not find, when it exited with `code`
/// 127, in its own words in its output `lines` (prefixed with the path it
/// was started by): dash's `sh: 1: NAME: not found`, bash's `sh: line 1:
/// NAME: command not found`, busybox's `sh: NAME: not found`. The last
/// such line, as the exit status is the last command's.
fn shell_not_found(code: i32, lines: &[String]) -> Option<String> {
    // A wrapper the script ran (`timeout 60 pytest`) says it in its own
    // words, and exits 127 too (flock, by its version, 69).
    lines.iter().rev().find_map(|line| {
        (code == SHELL_NOT_FOUND)
            .then(|| shell_line_not_found(line))
            .flatten()
            .or_else(|| wrapper::exited_not_found(code, line))
    })
}

/// The command a shell's line says it could not find: dash's `sh: 1:
/// NAME: not found`, bash's `sh: line 1: NAME: command not found`,
/// busybox's `sh: NAME: not found`, each maybe prefixed with the path the
/// shell was started by (`/bin/sh: 1: ...`).
fn shell_line_not_found(line: &str) -> Option<String> {
    static LINE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[^:\s]*/)?(?:ba)?sh: (?:line )?(?:\d+: )?(.+?): (?:command )?not found\s*$",
        )
        .expect("a valid pattern")
    });
    LINE.captures(line).map(|found| found[1].to_string())
}

/// Why a check that hands an interpreter a script of the project cannot
/// run: `sh scripts/lint.sh`, `python3 tools/check.py`, `node
/// scripts/test.js` whose script is not there is a broken check (tier 2,
/// as `./scripts/lint.sh` is), not a failure of the code. Only a script
/// named right after the interpreter is looked at: after an option
/// (`python3 -m pytest`, `node --test`) the next word is no script.
fn missing_script(argv: &[std::ffi::OsString], cwd: &std::path::Path) -> Option<String> {
    const INTERPRETERS: &[&str] = &[
        "sh", "bash", "dash", "zsh", "python", "python3", "node", "ruby", "perl", "bun", "deno",
    ];
    let interpreter = program_name(argv)?;
    if !INTERPRETERS.contains(&interpreter) {
        return None;
    }
    let script = argv.get(1)?;
    let text = script.to_string_lossy();
    // A word without a `/` or a script's extension may be a subcommand
    // (`bun test`, `deno task`).
    let scriptlike = text.contains('/')
        || [
            ".sh", ".bash", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl",
        ]
        .iter()
        .any(|ext| text.ends_with(ext));
    if text.starts_with('-') || !scriptlike || std::path::Path::new(script).is_absolute() {
        return None;
    }
    let path = cwd.join(script);
    (std::fs::symlink_metadata(&path).is_err()).then(|| {
        format!(
            "`{text}` does not exist (looked for `{}`): fix the check's command in phasegate.toml, or add the file",
            path.components().collect::<std::path::PathBuf>().display()
        )
    })
}

/// Why `program`, a path (it holds a `/`), cannot be run as a check: it
/// names something that exists but cannot be run, or a file of the project
/// that is not there. `None` when it is looked up on `PATH`, or is an
/// absolute path outside the project that is not there (a tool not
/// installed).
fn not_runnable(
    program: &std::ffi::OsStr,
    cwd: &std::path::Path,
    root: &std::path::Path,
) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    if !program.as_bytes().contains(&b'/') {
        return None;
    }
    let path = cwd.join(program);
    let shown = program.to_string_lossy();
    let Ok(meta) = std::fs::metadata(&path) else {
        let in_project = !std::path::Path::new(program).is_absolute() || path.starts_with(root);
        return in_project.then(|| {
            format!(
                "`{shown}` does not exist (looked for `{}`): fix the check's command in phasegate.toml, or add the file",
                path.components().collect::<std::path::PathBuf>().display()
            )
        });
    };
    Some(if meta.is_dir() {
        format!("`{shown}` is a directory, not a program")
    } else if meta.permissions().mode() & 0o111 == 0 {
        format!("`{shown}` is not executable: set its executable bit (`chmod +x {shown}`)")
    } else {
        format!("`{shown}` cannot be run")
    })
}

/// The `#!` line of the script at `program`, after the `#!` and up to its
/// newline; `None` for a program that is not a script.
fn shebang(program: &std::path::Path) -> Option<Vec<u8>> {
    let mut head = [0u8; 256];
    let read = File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    line.split(|&b| b == b'\n').next().map(<[u8]>::to_vec)
}

/// The interpreter a script's `#!` `line` names, when it is not there
/// (`#!/usr/bin/python9`), or, for `#!/usr/bin/env NAME`, when NAME is not
/// on the check's `path`; `None` when its interpreter is there.
fn missing_interpreter(
    line: &[u8],
    path: Option<&std::ffi::OsString>,
    cwd: &std::path::Path,
) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let mut words = text.split_whitespace();
    let interpreter = words.next()?;
    let interpreter_path = std::path::Path::new(interpreter);
    if !interpreter_path.exists() {
        return Some(interpreter.to_string());
    }
    if interpreter_path
        .file_name()
        .is_some_and(|name| name == "env")
    {
        // Its options (`-S`) and assignments (`A=1`) come before the name.
        let name = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        if which::which_in(name, path, cwd).is_err() {
            return Some(name.to_string());
        }
    }
    None
}

/// Why a script saved with Windows line endings cannot start: the kernel
/// (or `env`) looks for an interpreter whose name ends in the carriage
/// return (`/bin/sh\r`), and says only "No such file or directory", which
/// names neither the script nor the cause. `line` is its `#!` line.
fn carriage_return_shebang(line: &[u8], shown: &std::ffi::OsStr) -> Option<String> {
    line.ends_with(b"\r").then(|| {
        let shown = shown.to_string_lossy();
        format!(
            "`{shown}` has Windows line endings: its `#!` line ends in a carriage return, so its interpreter cannot be found; save it with LF endings (`sed -i 's/\\r$//' {shown}`, and `*.sh text eol=lf` in `.gitattributes` keeps them)"
        )
    })
}

/// One reply from the answers of a verifier's batches, built as each
/// batch answers: each must be one valid answer; it passes when every
/// batch passed, with all their findings. Only the reply is kept, never a
/// raw answer (up to `MAX_ANSWER_BYTES` each), and no more findings than
/// a check keeps: a verifier run over many batches of files holds no more
/// than one.
struct Answers<'a> {
    plan: &'a CheckPlan,
    /// Batches that answered so far.
    seen: usize,
    reply: Option<VerifierReply>,
    /// Findings past the cap, counted.
    dropped: usize,
}

impl<'a> Answers<'a> {
    fn new(plan: &'a CheckPlan) -> Answers<'a> {
        Answers {
            plan,
            seen: 0,
            reply: None,
            dropped: 0,
        }
    }

    /// Reads one batch's answer (`(over_limit, bytes)`) and folds it into
    /// the reply (see `verifier::merge`).
    fn add(&mut self, (over, answer): (bool, Vec<u8>)) {
        self.seen += 1;
        let batches = self.plan.invocations.len();
        let batch = if batches > 1 {
            format!(" (batch {} of {batches})", self.seen)
        } else {
            String::new()
        };
        let place = super::verifier::Place {
            cwd: &self.plan.cwd,
            root: &self.plan.root,
        };
        let reply = if over {
            super::verifier::over_limit(&answer, &batch, &self.plan.name, self.plan.origin)
        } else {
            match parse_verifier_answer(&answer, &self.plan.name, self.plan.origin, place) {
                VerifierReply::Malformed(reason) => {
                    VerifierReply::Malformed(format!("{reason}{batch}"))
                }
                answer @ VerifierReply::Answer(_) => answer,
            }
        };
        // As many findings as any check keeps; the rest are counted.
        self.dropped += super::verifier::merge(
            &mut self.reply,
            reply,
            crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK,
        );
    }

    /// The reply, and how many findings were left out of it; `None` when
    /// no batch answered.
    fn finish(self) -> Option<(VerifierReply, usize)> {
        let reply = self.reply?;
        let dropped = match reply {
            VerifierReply::Answer(_) => self.dropped,
            VerifierReply::Malformed(_) => 0,
        };
        Some((reply, dropped))
    }
}

fn open_log(path: &std::path::Path, sharing: crate::state::Sharing) -> std::io::Result<File> {
    if let Some(parent) = path.parent() {
        sharing.create_dirs(parent)?;
    }
    // Append mode: nothing already there is overwritten.
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    sharing.share_file(&file)?;
    Ok(file)
}

fn run_invocation(
    plan: &CheckPlan,
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    separate_stderr: bool,
    deadline: Instant,
    capture: &mut Capture,
) -> Termination {
    let tag = sys::Tree::new_tag();
    if let Some(groups) = &plan.groups {
        sys::record_tag(groups, &tag);
    }
    let mut expr = command(plan, program, args, &tag);
    // A verifier's standard error goes through a pipe of its own to the
    // same capture, log and limits as its standard output, and never into
    // its answer.
    let mut stderr_pipe = None;
    expr = if separate_stderr {
        match os_pipe::pipe() {
            Ok((read, write)) => {
                stderr_pipe = Some(read);
                expr.stderr_file(write)
            }
            Err(e) => {
                return Termination::SpawnFailed(format!(
                    "failed to open a pipe for its standard error: {e}"
                ))
            }
        }
    } else {
        expr.stderr_to_stdout()
    };
    // The output pipe is phasegate's own, not duct's `reader()`: its
    // number names it in `/proc`, where what still holds it open is found
    // (see `release_output`).
    let (output, output_end) = match os_pipe::pipe() {
        Ok(pipe) => pipe,
        Err(e) => {
            return Termination::SpawnFailed(format!("failed to open a pipe for its output: {e}"))
        }
    };
    let pipes: Vec<u64> = std::iter::once(&output)
        .chain(stderr_pipe.as_ref())
        .filter_map(sys::pipe_id)
        .collect();
    let handle = match expr.stdout_file(output_end).start() {
        Ok(handle) => handle,
        Err(e) => {
            return Termination::SpawnFailed(format!(
                "failed to start `{}`: {e}",
                program.display()
            ))
        }
    };
    // The expression holds the pipes' write ends: closed here, a pipe
    // ends when the check's processes close theirs.
    drop(expr);
    let Some(pgid) = handle.pids().first().copied() else {
        return Termination::SpawnFailed("the process has no id".to_string());
    };
    // From here, whatever ends the invocation before its processes were
    // dealt with (a reader thread that cannot start, a panic in a parser
    // reading its output) kills everything it started.
    let mut running = Running {
        pgid,
        tree: sys::Tree::new(pgid, tag),
        settled: false,
    };
    if let Some(groups) = &plan.groups {
        sys::record_group(groups, &running.tree);
    }

    let (tx, rx) = mpsc::sync_channel::<Msg>(8);
    let stderr_tx = tx.clone();
    // Read buffers travel back to the pump to be filled again.
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    // Detached on purpose: if a process phasegate cannot stop holds the
    // pipe open, this thread stays blocked and is abandoned, not joined.
    let spawned = std::thread::Builder::new()
        .name(format!("pump-{}", plan.name))
        .spawn(move || pump(output, &tx, &recycle_rx));
    if let Err(e) = spawned {
        return Termination::SpawnFailed(format!("failed to start its output reader: {e}"));
    }

    let mut streams = 1;
    if let Some(pipe) = stderr_pipe {
        // Detached too, for the same reason.
        let spawned = std::thread::Builder::new()
            .name(format!("pump-stderr-{}", plan.name))
            .spawn(move || pump_stderr(pipe, &stderr_tx));
        if let Err(e) = spawned {
            return Termination::SpawnFailed(format!("failed to start its output reader: {e}"));
        }
        streams += 1;
    } else {
        drop(stderr_tx);
    }

    let stop = watch(
        &Output {
            rx: &rx,
            recycle: &recycle_tx,
            pipes: &pipes,
        },
        &handle,
        &running,
        deadline,
        streams,
        capture,
    );
    running.settled = true;
    let status = wait_exit(&handle);
    termination(stop, status, plan.timeout)
}

/// The output of one invocation as it arrives: the messages of its
/// readers, the way their buffers go back, and the pipes it comes
/// through (their ids, see `sys::pipe_id`).
struct Output<'a> {
    rx: &'a Receiver<Msg>,
    recycle: &'a mpsc::Sender<Vec<u8>>,
    pipes: &'a [u64],
}

/// One invocation's processes while phasegate watches them: dropped
/// before they were dealt with (an early return, a panic unwinding), it
/// kills them all, so no check outlives its run because phasegate tripped.
struct Running {
    /// The session and process group its first process leads.
    pgid: u32,
    tree: sys::Tree,
    /// Set once `watch` returned: what was left was stopped there.
    settled: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.settled {
            kill_tree(&self.tree);
        }
    }
}

/// The invocation's command: in the check's directory, with no standard
/// input, in a session of its own, and with the environment phasegate
/// gives every check.
fn command(
    plan: &CheckPlan,
    program: &std::path::Path,
    args: &[std::ffi::OsString],
    tag: &str,
) -> duct::Expression {
    let mut expr = duct::cmd(program, args)
        .dir(&plan.cwd)
        .stdin_null()
        .unchecked()
        .before_spawn(|command| {
            // Its own session and process group, so a timeout or an
            // interrupt can kill everything the check started, grandchildren
            // included, and no terminal to wait on.
            sys::new_session(command);
            Ok(())
        });
    // duct applies the last call first and each earlier one over it, so
    // the calls go from the strongest to the weakest. The tag comes first:
    // a check's `env` cannot take it away.
    expr = expr.env(sys::TAG_VAR, tag);
    for (key, value) in PINNED_ENV {
        expr = expr.env(key, value);
    }
    for key in REMOVED_ENV {
        expr = expr.env_remove(key);
    }
    // Of two entries of the same name, the later wins.
    for (key, value) in plan.env.iter().rev() {
        expr = expr.env(key, value);
    }
    for key in GIT_LOCAL_ENV {
        expr = expr.env_remove(key);
    }
    expr
}

/// How an invocation ended: why it was stopped, else its exit status.
fn termination(
    stop: Stop,
    status: Option<std::process::ExitStatus>,
    timeout: Duration,
) -> Termination {
    match (stop, status) {
        (Stop::TimedOut, _) => Termination::TimedOut(timeout),
        (Stop::Interrupted, _) => Termination::Interrupted,
        (Stop::ReadFailed(e), _) => {
            Termination::SpawnFailed(format!("failed to read its output: {e}"))
        }
        (Stop::None, Some(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => Termination::Exited(code),
            (None, Some(signal)) => Termination::Signaled(signal),
            (None, None) => {
                Termination::SpawnFailed(format!("ended with an unknown status {status}"))
            }
        },
        (Stop::None, None) => {
            Termination::SpawnFailed("its exit status could not be read".to_string())
        }
    }
}

/// Reads the pipe until it closes.
fn pump(mut reader: os_pipe::PipeReader, tx: &mpsc::SyncSender<Msg>, recycled: &Receiver<Vec<u8>>) {
    loop {
        let mut buffer = recycled.try_recv().unwrap_or_default();
        buffer.resize(CHUNK, 0);
        match reader.read(&mut buffer) {
            Ok(0) => {
                let _ = tx.send(Msg::End(Ok(())));
                return;
            }
            Ok(n) => {
                buffer.truncate(n);
                if tx.send(Msg::Data(buffer)).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Msg::End(Err(e)));
                return;
            }
        }
    }
}

/// Reads a verifier's standard error until its pipe closes.
fn pump_stderr(mut pipe: os_pipe::PipeReader, tx: &mpsc::SyncSender<Msg>) {
    let mut buffer = vec![0; CHUNK];
    loop {
        match pipe.read(&mut buffer) {
            Ok(n) if n > 0 => {
                if tx.send(Msg::Stderr(buffer[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            _ => {
                let _ = tx.send(Msg::StderrEnd);
                return;
            }
        }
    }
}

/// Feeds output to the capture until the pipes close and the check's own
/// process exited, enforcing the deadline, the interrupt flag and
/// leftover background processes.
fn watch(
    output: &Output,
    handle: &duct::Handle,
    running: &Running,
    deadline: Instant,
    mut streams: usize,
    capture: &mut Capture,
) -> Stop {
    let (pgid, tree) = (running.pgid, &running.tree);
    let mut leader_exited: Option<Instant> = None;
    // The deadline, the interrupt flag and the leader are looked at every
    // `POLL`, output or not: a check that never stops printing must still
    // time out and be interruptible.
    let mut next_look = Instant::now() + POLL;
    loop {
        let now = Instant::now();
        let wait = POLL
            .min(deadline.saturating_duration_since(now))
            .max(Duration::from_millis(1));
        if streams == 0 {
            // Its output closed, the check's process works on (`exec
            // >&-`), or has just exited.
            let _ = handle.wait_timeout(wait);
        } else {
            match output.rx.recv_timeout(wait) {
                Ok(Msg::Data(bytes)) => {
                    #[cfg(test)]
                    tests::panic_on_mark(&bytes);
                    capture.push(&bytes);
                    let _ = output.recycle.send(bytes);
                    if Instant::now() < next_look {
                        continue;
                    }
                }
                Ok(Msg::Stderr(bytes)) => {
                    capture.push_stderr(&bytes);
                    if Instant::now() < next_look {
                        continue;
                    }
                }
                Ok(Msg::End(Ok(())) | Msg::StderrEnd) => streams -= 1,
                Ok(Msg::End(Err(e))) => {
                    kill_tree(tree);
                    return Stop::ReadFailed(e.to_string());
                }
                Err(RecvTimeoutError::Disconnected) => streams = 0,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        next_look = Instant::now() + POLL;
        if streams == 0 && leader_done(handle) {
            // The pipes closed and the check's process is gone; anything
            // it left running in its session (a background job that
            // closed its output, in its process group or in one of its
            // own, as `timeout` makes) is stopped too. The first process
            // is gone already, so its group alone says nothing of the
            // others.
            if sys::session_alive(pgid) {
                let left = left_in_session(pgid);
                if stop_session(pgid) {
                    capture.note(format!(
                        "the check's process exited, and what it left running in its session ({left}) was stopped"
                    ));
                }
            }
            return Stop::None;
        }
        let stop = if sys::interrupted() {
            Stop::Interrupted
        } else if Instant::now() >= deadline {
            Stop::TimedOut
        } else if streams == 0 {
            continue;
        } else {
            // The leader exited and its group lingers (a background
            // process holding the output open, printing or not): after a
            // grace period, it is stopped.
            if leader_exited.is_none() && leader_done(handle) {
                leader_exited = Some(Instant::now());
            }
            match leader_exited {
                Some(at) if at.elapsed() >= LEADER_EXIT_GRACE => {
                    let left = left_in_session(pgid);
                    if stop_session(pgid) {
                        capture.note(format!(
                            "the check's process exited, and what it left running in its session ({left}) still held its output open {}ms later; it was stopped",
                            LEADER_EXIT_GRACE.as_millis()
                        ));
                    }
                    release_output(output, streams, capture);
                    return Stop::None;
                }
                _ => continue,
            }
        };
        kill_tree(tree);
        release_output(output, streams, capture);
        return stop;
    }
}

/// Takes what is left in the pipes once the check's processes were
/// stopped, until they close. Something that still holds one open then
/// left the check's session and carries no sign of the check (`setsid`
/// under `env -i`); it was started by the check all the same (nothing
/// else has the pipe), is stopped too, and the log says what it was. A
/// pipe still open after that is left to its reader thread, and the log
/// says so: phasegate waits no longer.
fn release_output(output: &Output, streams: usize, capture: &mut Capture) {
    // What was stopped closes its end as it goes: a moment for that.
    let Some(streams) = drain(output.rx, streams, capture, HOLDER_LOOK) else {
        return;
    };
    let holders: Vec<(u32, String)> = output
        .pipes
        .iter()
        .flat_map(|pipe| sys::pipe_holders(*pipe))
        .collect();
    let pids: Vec<u32> = holders.iter().map(|(pid, _)| *pid).collect();
    stop_processes(&pids);
    for (pid, command) in &holders {
        capture.note(format!(
            "{}, which left the check's session, still held its output open; it was stopped",
            process_named(*pid, command)
        ));
    }
    if drain(output.rx, streams, capture, DRAIN_LIMIT).is_some() {
        capture.note(
            "the check's output was still held open by a process phasegate could not find or stop; phasegate stopped reading it".to_string(),
        );
    }
}

/// The processes still running in the session `sid`, named for the log
/// (`` `sleep 600` (pid 4242) ``): a check that leaves one behind under
/// `env -i` carries no sign of it but its session, and the log is where
/// its author learns what to wait for or end.
fn left_in_session(sid: u32) -> String {
    /// Named one by one; the rest are counted.
    const NAMED: usize = 5;
    let left = sys::session_commands(sid);
    if left.is_empty() {
        return "processes".to_string();
    }
    let mut named: Vec<String> = left
        .iter()
        .take(NAMED)
        .map(|(pid, command)| process_named(*pid, command))
        .collect();
    if left.len() > NAMED {
        named.push(format!("{} more", left.len() - NAMED));
    }
    named.join(", ")
}

/// A process as messages name it: its command line, cut for a note
/// (`` `sleep 600` (pid 4242) ``), or its pid alone when the command line
/// cannot be read (a process gone, or another user's).
pub fn process_named(pid: u32, command: &str) -> String {
    if command.is_empty() {
        format!("pid {pid}")
    } else {
        format!("`{}` (pid {pid})", shorten(command))
    }
}

/// A command line cut for a note in the log.
fn shorten(command: &str) -> String {
    const MAX: usize = 120;
    match command.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &command[..at]),
        None => command.to_string(),
    }
}

/// SIGTERM to each of `pids`, a grace period while any still runs, then
/// SIGKILL to those that do.
fn stop_processes(pids: &[u32]) {
    let mut left: Vec<u32> = pids
        .iter()
        .copied()
        .filter(|pid| sys::signal_running(*pid, sys::SIGTERM))
        .collect();
    let until = Instant::now() + KILL_GRACE;
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
        left.retain(|pid| sys::signal_running(*pid, 0));
    }
    for pid in left {
        sys::signal_running(pid, sys::SIGKILL);
    }
}

fn leader_done(handle: &duct::Handle) -> bool {
    matches!(handle.try_wait(), Ok(Some(_)) | Err(_))
}

/// What is left of a check's session once its own process ended by itself
/// (a background job holding the output, a server a test forgot): SIGTERM
/// to the session (its process group, and any group its processes made,
/// as `timeout` does), a grace period, then SIGKILL. A process that left
/// the session on purpose is a daemon meant to outlive the command (a
/// build server: Gradle's, Bazel's, sccache's, which the next check may be
/// using right now) and is left running, as it would be in a terminal,
/// unless it still holds the check's output open (see `release_output`).
/// Whether there was anything to stop.
fn stop_session(pgid: u32) -> bool {
    if !sys::signal_session(pgid, sys::SIGTERM) {
        return false;
    }
    let until = Instant::now() + KILL_GRACE;
    while Instant::now() < until {
        if !sys::session_alive(pgid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    sys::signal_session(pgid, sys::SIGKILL);
    true
}

/// Stops a check that did not end by itself (a timeout, an interrupt, a
/// failure of phasegate's own): SIGTERM to everything it started (its
/// session, and what left it, see `sys::Tree`), a grace period, then
/// SIGKILL, again while processes are still there (one that forks as it
/// dies), for a bounded time.
fn kill_tree(tree: &sys::Tree) {
    if !tree.signal(sys::SIGTERM) {
        return;
    }
    let until = Instant::now() + KILL_GRACE;
    while Instant::now() < until {
        if !tree.alive() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let until = Instant::now() + KILL_GRACE;
    while tree.signal(sys::SIGKILL) && tree.alive() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Takes what is still in the pipes after a kill, until the `streams`
/// still open end, for at most `limit`: how many are still open then, if
/// any.
fn drain(
    rx: &Receiver<Msg>,
    mut streams: usize,
    capture: &mut Capture,
    limit: Duration,
) -> Option<usize> {
    if streams == 0 {
        return None;
    }
    let until = Instant::now() + limit;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Some(streams);
        }
        match rx.recv_timeout(left) {
            Ok(Msg::Data(bytes)) => capture.push(&bytes),
            Ok(Msg::Stderr(bytes)) => capture.push_stderr(&bytes),
            Ok(Msg::End(_) | Msg::StderrEnd) if streams > 1 => streams -= 1,
            Ok(Msg::End(_) | Msg::StderrEnd) | Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => return Some(streams),
        }
    }
}

/// The exit status of the check's own process, waiting briefly after a kill.
fn wait_exit(handle: &duct::Handle) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + KILL_GRACE;
    loop {
        match handle.try_wait() {
            Ok(Some(output)) => return Some(output.status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::config::{Origin, ParserChoice};
    use crate::runner::{run_checks, Invocation, RunEvent};

    #[test]
    fn a_process_is_named_by_its_command_cut_short_or_by_its_pid_alone() {
        assert_eq!(process_named(42, "sleep 600"), "`sleep 600` (pid 42)");
        assert_eq!(process_named(42, ""), "pid 42");
        let long = "x".repeat(200);
        assert_eq!(
            process_named(7, &long),
            format!("`{}…` (pid 7)", "x".repeat(120))
        );
    }

    /// A check that runs `script` with `sh -c` in `dir`, logging there.
    #[expect(
        clippy::disallowed_methods,
        reason = "tests take PATH from their own environment"
    )]
    pub(in crate::runner) fn plan(
        dir: &std::path::Path,
        name: &str,
        script: &str,
        timeout: Duration,
    ) -> CheckPlan {
        CheckPlan {
            name: name.to_string(),
            kind: CheckKind::Custom,
            origin: Origin::Runtime,
            invocations: vec![Invocation {
                argv: vec!["sh".into(), "-c".into(), script.into()],
            }],
            cwd: dir.to_path_buf(),
            env: Vec::new(),
            timeout,
            log_path: dir.join(format!("{name}.log")),
            log_limit: crate::runner::LOG_LIMIT,
            log_sharing: crate::state::Sharing::Umask,
            parser: ParserChoice::Auto,
            root: dir.to_path_buf(),
            path: std::env::var_os("PATH"),
            go_work: None,
            groups: None,
            left_venv: None,
        }
    }

    /// The pid a check's script wrote to `pid` in `dir`.
    fn written_pid(dir: &std::path::Path) -> u32 {
        std::fs::read_to_string(dir.join("pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Output that makes the runner panic as it reads it, as a parser
    /// tripping on output nobody foresaw would (unit tests only).
    const PANIC_MARK: &[u8] = b"phasegate unit test: panic while reading this line";

    pub(super) fn panic_on_mark(bytes: &[u8]) {
        assert!(
            memchr::memmem::find(bytes, PANIC_MARK).is_none(),
            "a parser tripped on its output"
        );
    }

    fn gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, s)| s.trim_start().starts_with('Z')),
        }
    }

    #[test]
    fn exit_codes_and_signals() {
        let dir = tempfile::tempdir().unwrap();
        let p = |script| run_check(&plan(dir.path(), "c", script, Duration::from_secs(30)));
        assert_eq!(p("exit 0").termination, Termination::Exited(0));
        assert_eq!(p("exit 7").termination, Termination::Exited(7));
        assert_eq!(p("kill -SEGV $$").termination, Termination::Signaled(11));
    }

    #[test]
    fn a_missing_program_is_not_spawned() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
        p.invocations[0].argv = vec!["phasegate-no-such-program".into()];
        let outcome = run_check(&p);
        assert_eq!(
            outcome.termination,
            Termination::Missing {
                program: "phasegate-no-such-program".into(),
                unused_venv: None,
            }
        );
        assert!(!p.log_path.exists(), "nothing ran, so nothing was logged");
    }

    #[test]
    fn a_command_the_shell_cannot_find_is_a_missing_tool() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(
            dir.path(),
            "c",
            "echo checking; phasegate-no-such-tool --all",
            Duration::from_secs(30),
        );
        let outcome = run_check(&p);
        assert_eq!(
            outcome.termination,
            Termination::Missing {
                program: "phasegate-no-such-tool".into(),
                unused_venv: None,
            },
            "{:?}",
            outcome.output
        );
        // A script that exits 127 itself, saying nothing of a missing
        // command, failed.
        let p = plan(
            dir.path(),
            "c",
            "echo done; exit 127",
            Duration::from_secs(30),
        );
        assert_eq!(run_check(&p).termination, Termination::Exited(127));
    }

    #[test]
    fn a_crash_inside_a_shell_script_is_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        // dash waits for the command, says how it ended and exits 128 + N.
        let p = plan(
            dir.path(),
            "c",
            "echo start; sh -c 'kill -SEGV $$'; exit $?",
            Duration::from_secs(30),
        );
        let outcome = run_check(&p);
        assert_eq!(
            outcome.termination,
            Termination::Signaled(11),
            "{:?}",
            outcome.output
        );
        // Exiting with the same status, saying nothing of a signal, is a
        // failure.
        let p = plan(
            dir.path(),
            "c",
            "echo done; exit 139",
            Duration::from_secs(30),
        );
        assert_eq!(run_check(&p).termination, Termination::Exited(139));
    }

    #[test]
    fn the_shells_words_for_a_crash() {
        let out = |text: &str| {
            CapturedOutput {
                head: text.as_bytes().to_vec(),
                tail: Vec::new(),
                total_bytes: text.len() as u64,
            }
            .tail_lines(usize::MAX)
        };
        assert_eq!(
            shell_saw_crash(139, &out("x\nSegmentation fault\n")),
            Some(11)
        );
        assert_eq!(
            shell_saw_crash(134, &out("Aborted (core dumped)\n")),
            Some(6)
        );
        assert_eq!(
            shell_saw_crash(
                139,
                &out("bash: line 1:  8683 Segmentation fault      (core dumped) ./crash\n")
            ),
            Some(11)
        );
        assert_eq!(
            shell_saw_crash(139, &out("      8690 Segmentation fault      | ./crash\n")),
            Some(11)
        );
        // The words must match the status.
        assert_eq!(shell_saw_crash(134, &out("Segmentation fault\n")), None);
        assert_eq!(
            shell_saw_crash(139, &out("error: Segmentation fault in parser\n")),
            None
        );
        assert_eq!(shell_saw_crash(1, &out("Segmentation fault\n")), None);
    }

    #[test]
    fn a_script_of_the_project_that_is_not_there_is_a_broken_check() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
        p.invocations[0].argv = vec!["./scripts/run-tests.sh".into()];
        let Termination::SpawnFailed(why) = run_check(&p).termination else {
            panic!("a missing project script is no missing tool");
        };
        assert!(
            why.contains("`./scripts/run-tests.sh` does not exist"),
            "{why}"
        );
        // An absolute path outside the project is a tool not installed.
        p.invocations[0].argv = vec!["/opt/phasegate-no-such-tool/bin/lint".into()];
        assert!(matches!(
            run_check(&p).termination,
            Termination::Missing { .. }
        ));
    }

    #[test]
    fn a_script_handed_to_an_interpreter_that_is_not_there_is_a_broken_check() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/here.sh"), "exit 0\n").unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
        for argv in [
            &["sh", "scripts/missing.sh"][..],
            &["python3", "check.py", "--strict"][..],
            &["node", "scripts/test.js"][..],
        ] {
            p.invocations[0].argv = argv.iter().map(Into::into).collect();
            let Termination::SpawnFailed(why) = run_check(&p).termination else {
                panic!("{argv:?}: a missing script is a broken check");
            };
            assert!(
                why.contains(&format!("`{}` does not exist", argv[1])),
                "{why}"
            );
        }
        // The script is there; or the word after the interpreter is an
        // option or a subcommand, not a script.
        for argv in [
            &["sh", "scripts/here.sh"][..],
            &["sh", "-c", "exit 0"][..],
            &["python3", "-c", "pass"][..],
        ] {
            p.invocations[0].argv = argv.iter().map(Into::into).collect();
            assert_eq!(
                run_check(&p).termination,
                Termination::Exited(0),
                "{argv:?}"
            );
        }
    }

    #[test]
    fn a_script_whose_interpreter_is_not_installed_is_a_missing_tool() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("check.sh");
        std::fs::write(&script, "#!/usr/bin/phasegate-no-python9 -u\nprint(1)\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
        p.invocations[0].argv = vec!["./check.sh".into()];
        assert_eq!(
            run_check(&p).termination,
            Termination::Missing {
                program: "/usr/bin/phasegate-no-python9".into(),
                unused_venv: None,
            }
        );
        // Through env, the name env would look for on PATH.
        std::fs::write(
            &script,
            "#!/usr/bin/env -S phasegate-no-python9 -u\nprint(1)\n",
        )
        .unwrap();
        assert_eq!(
            run_check(&p).termination,
            Termination::Missing {
                program: "phasegate-no-python9".into(),
                unused_venv: None,
            }
        );
        std::fs::write(&script, "#!/usr/bin/env sh\nexit 0\n").unwrap();
        assert_eq!(run_check(&p).termination, Termination::Exited(0));
        // A working directory that is a file says so.
        let mut p = plan(dir.path(), "c", "true", Duration::from_secs(30));
        p.cwd = script;
        let Termination::SpawnFailed(why) = run_check(&p).termination else {
            panic!("a file as working directory must not run");
        };
        assert!(why.contains("is not a directory"), "{why}");
    }

    #[test]
    fn the_shells_own_words_name_the_missing_command() {
        let said = |text: &str| {
            let output = CapturedOutput {
                head: text.as_bytes().to_vec(),
                tail: Vec::new(),
                total_bytes: text.len() as u64,
            };
            shell_not_found(SHELL_NOT_FOUND, &output.tail_lines(usize::MAX))
        };
        assert_eq!(said("sh: 1: ruff: not found\n").as_deref(), Some("ruff"));
        assert_eq!(
            said("sh: line 1: npx eslint: command not found\n").as_deref(),
            Some("npx eslint")
        );
        assert_eq!(
            said("sh: golangci-lint: not found").as_deref(),
            Some("golangci-lint")
        );
        assert_eq!(
            said("/usr/bin/sh: 1: pyright: not found").as_deref(),
            Some("pyright")
        );
        assert_eq!(
            said("sh: 1: a: not found\nsh: 2: b: not found\n").as_deref(),
            Some("b")
        );
        assert_eq!(said("./run.sh: line 3: foo: command not found"), None);
        assert_eq!(said("error: file not found"), None);
    }

    #[test]
    fn package_managers_own_words_name_the_missing_tool() {
        // Their outputs as recorded, stdout and stderr together, in a
        // project with a `package.json` (`"lint": "eslint ."`) and no
        // `node_modules`: npm 11.19.1 on Node 20.20.2, pnpm 9.15.9,
        // yarn 1.22.22, each run with standard input closed.
        let said = |argv: &[&str], code: i32, text: &str| {
            let argv: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            runner_not_found(package_runner(&argv).unwrap(), &argv, code, &lines)
        };
        assert_eq!(
            said(
                &["npm", "run", "lint"],
                127,
                "\n> x@1.0.0 lint\n> eslint .\n\nsh: 1: eslint: not found\n"
            )
            .as_deref(),
            Some("eslint")
        );
        assert_eq!(
            said(
                &["pnpm", "run", "lint"],
                1,
                "\n> x@1.0.0 lint /tmp/p\n> eslint .\n\nsh: 1: eslint: not found\n ELIFECYCLE  Command failed.\n WARN   Local package.json exists, but node_modules missing, did you mean to install?\n"
            )
            .as_deref(),
            Some("eslint")
        );
        assert_eq!(
            said(
                &["yarn", "run", "lint"],
                127,
                "yarn run v1.22.22\n$ eslint .\n/bin/sh: 1: eslint: not found\nerror Command failed with exit code 127.\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.\n"
            )
            .as_deref(),
            Some("eslint")
        );
        assert_eq!(
            said(
                &["npx", "tsc", "--noEmit"],
                1,
                "npm error npx canceled due to missing packages and no YES option: [\"tsc@2.0.4\"]\nnpm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-24T05_18_20_800Z-debug-0.log\n"
            )
            .as_deref(),
            Some("tsc")
        );
        assert_eq!(
            said(
                &["pnpm", "exec", "tsc", "--noEmit"],
                254,
                "undefined\n ERR_PNPM_RECURSIVE_EXEC_FIRST_FAIL  Command \"tsc\" not found\n"
            )
            .as_deref(),
            Some("tsc")
        );
        assert_eq!(
            said(
                &["yarn", "tsc", "--noEmit"],
                1,
                "yarn run v1.22.22\nwarning package.json: No license field\nerror Command \"tsc\" not found.\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.\n"
            )
            .as_deref(),
            Some("tsc")
        );
        // A test suite that failed, whose output once said a command was
        // not there, failed: the words must come last, under the status
        // the package manager exits with when its script's command is
        // missing.
        let failing_suite = "sh: 1: convert: not found\nFAIL test/a.test.js\n  1 failed\nTests: 1 failed, 3 passed\nnpm error Lifecycle script `test` failed with error:\nnpm error code 1\n";
        assert_eq!(said(&["npm", "test"], 1, failing_suite), None);
        assert_eq!(
            said(
                &["pnpm", "test"],
                1,
                "sh: 1: convert: not found\nFAIL test/a.test.js\nTests: 1 failed\n\n ELIFECYCLE  Test failed. See above for more details.\n"
            ),
            None
        );
    }

    #[test]
    fn a_timeout_kills_grandchildren() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(
            dir.path(),
            "c",
            "sleep 300 & echo $! > pid; sleep 300",
            Duration::from_millis(500),
        );
        let outcome = run_check(&p);
        assert_eq!(
            outcome.termination,
            Termination::TimedOut(Duration::from_millis(500))
        );
        let pid = written_pid(dir.path());
        assert!(gone(pid), "grandchild {pid} survived");
    }

    #[test]
    fn a_leftover_background_process_neither_hangs_the_run_nor_survives_it() {
        // Quiet, or printing without end (it holds the pipe busy).
        for script in [
            "sleep 300 & echo $! > pid; echo done",
            "yes & echo $! > pid; exit 0",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let p = plan(dir.path(), "c", script, Duration::from_secs(60));
            let outcome = run_check(&p);
            assert_eq!(outcome.termination, Termination::Exited(0), "{script}");
            assert!(
                outcome.duration < Duration::from_secs(30),
                "{script}: {:?}",
                outcome.duration
            );
            let pid = written_pid(dir.path());
            assert!(gone(pid), "{script}: background process {pid} survived");
        }
    }

    #[test]
    fn a_timeout_kills_what_moved_to_a_process_group_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        // `timeout` puts itself and its command in a new process group.
        let p = plan(
            dir.path(),
            "c",
            "timeout 300 sh -c 'echo $$ > pid; exec sleep 300'",
            Duration::from_millis(500),
        );
        let outcome = run_check(&p);
        assert_eq!(
            outcome.termination,
            Termination::TimedOut(Duration::from_millis(500))
        );
        let pid = written_pid(dir.path());
        assert!(gone(pid), "{pid} survived in a group of its own");
    }

    #[test]
    fn a_panic_while_a_check_runs_stops_everything_it_started() {
        let dir = tempfile::tempdir().unwrap();
        // A background process, and one in a session of its own; the
        // output comes once both are there.
        let script = format!(
            "sleep 300 & echo $! > bg; setsid sh -c 'echo $$ > pid.new; mv pid.new pid; exec sleep 300' & \
             while [ ! -s pid ] || [ ! -s bg ]; do sleep 0.01; done; echo '{}'; sleep 300",
            String::from_utf8_lossy(PANIC_MARK)
        );
        let p = plan(dir.path(), "c", &script, Duration::from_secs(60));
        let outcomes = run_checks(std::slice::from_ref(&p), 1, &mut |_| {});
        assert!(
            matches!(&outcomes[0].termination, Termination::SpawnFailed(why) if why.contains("a parser tripped")),
            "{:?}",
            outcomes[0].termination
        );
        let left: Vec<u32> = ["bg", "pid"]
            .iter()
            .map(|file| {
                let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
                text.trim().parse().unwrap()
            })
            .filter(|pid| !gone(*pid))
            .collect();
        // Killed here when the test fails, so it leaves nothing behind.
        for pid in &left {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        assert!(left.is_empty(), "{left:?} outlived the panic");
    }

    #[test]
    fn a_program_that_is_there_but_cannot_run_is_no_missing_tool() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.sh"), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        for (program, said) in [("./x.sh", "not executable"), ("./d", "a directory")] {
            let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
            p.invocations = vec![Invocation {
                argv: vec![program.into()],
            }];
            let outcome = run_check(&p);
            assert!(
                matches!(&outcome.termination, Termination::SpawnFailed(why) if why.contains(said)),
                "{program}: {:?}",
                outcome.termination
            );
        }
        let mut p = plan(dir.path(), "c", "true", Duration::from_secs(30));
        p.cwd = dir.path().join("nowhere");
        let outcome = run_check(&p);
        assert!(
            matches!(&outcome.termination, Termination::SpawnFailed(why) if why.contains("working directory")),
            "{:?}",
            outcome.termination
        );
    }

    #[test]
    fn a_check_that_closes_its_output_is_waited_for_until_it_exits() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(
            dir.path(),
            "c",
            "echo before; exec >&- 2>&-; sleep 0.3; exit 4",
            Duration::from_secs(30),
        );
        let outcome = run_check(&p);
        assert_eq!(outcome.termination, Termination::Exited(4));
        assert_eq!(outcome.output.tail_lines(5), ["before"]);
    }

    #[test]
    fn a_check_that_never_stops_printing_still_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(dir.path(), "c", "yes", Duration::from_millis(500));
        let outcome = run_check(&p);
        assert_eq!(
            outcome.termination,
            Termination::TimedOut(Duration::from_millis(500))
        );
        assert!(
            outcome.duration < Duration::from_secs(30),
            "{:?}",
            outcome.duration
        );
    }

    #[test]
    fn stdout_and_stderr_interleave_in_order_and_env_and_cwd_apply() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let mut p = plan(
            dir.path(),
            "c",
            "echo 1; echo 2 >&2; echo \"$X\" 3; pwd >&2; echo \"$NO_COLOR\"",
            Duration::from_secs(30),
        );
        p.cwd = dir.path().join("sub");
        p.env = vec![("X".into(), "x".into())];
        let outcome = run_check(&p);
        let log = std::fs::read_to_string(&p.log_path).unwrap();
        let sub = std::fs::canonicalize(dir.path().join("sub")).unwrap();
        assert_eq!(log, format!("1\n2\nx 3\n{}\n1\n", sub.display()));
        assert_eq!(outcome.output.head, log.as_bytes());
    }

    #[test]
    fn a_later_env_entry_wins_and_git_variables_can_be_named_but_not_colour() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(
            dir.path(),
            "c",
            "echo \"$GIT_DIR|$GIT_WORK_TREE|$NO_COLOR|${FORCE_COLOR-unset}\"",
            Duration::from_secs(30),
        );
        p.env = [
            ("GIT_DIR", "first"),
            ("GIT_WORK_TREE", "tree"),
            ("GIT_DIR", "second"),
            ("NO_COLOR", ""),
            ("FORCE_COLOR", "1"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).into()))
        .collect();
        run_check(&p);
        let log = std::fs::read_to_string(&p.log_path).unwrap();
        assert_eq!(log, "second|tree|1|unset\n");
    }

    #[test]
    fn batches_all_run_and_the_first_failure_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
        p.invocations = ["echo a", "exit 3", "echo c; exit 4"]
            .iter()
            .map(|s| Invocation {
                argv: vec!["sh".into(), "-c".into(), (*s).into()],
            })
            .collect();
        let outcome = run_check(&p);
        assert_eq!(outcome.termination, Termination::Exited(3));
        // The output, then how each batch ended and where its output starts.
        assert_eq!(
            std::fs::read_to_string(&p.log_path).unwrap(),
            "a\nc\n\
             [phasegate: batch 1 of 3 (its output from byte 0): exited 0]\n\
             [phasegate: batch 2 of 3 (its output from byte 2): exited 3]\n\
             [phasegate: batch 3 of 3 (its output from byte 2): exited 4]\n"
        );
    }

    #[test]
    fn a_batch_whose_files_hold_no_test_fails_only_when_no_batch_ran_any() {
        // Two batches of real pytest runs: one over a helper module that
        // holds no test (pytest exits 5), one over a test that fails.
        if which::which("pytest").is_err() {
            eprintln!("skipped: pytest is not installed (`pip install pytest`)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("helpers.py"), "VALUE = 1\n").unwrap();
        std::fs::write(
            dir.path().join("test_x.py"),
            "def test_x():\n    assert 1 == 2\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("test_ok.py"), "def test_ok():\n    pass\n").unwrap();
        let pytest = |files: &[&[&str]]| -> Vec<Invocation> {
            files
                .iter()
                .map(|names| {
                    let mut argv = vec!["pytest", "-q", "-p", "no:cacheprovider"];
                    argv.extend_from_slice(names);
                    Invocation::new(argv)
                })
                .collect()
        };
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(60));
        p.invocations = pytest(&[&["helpers.py"], &["test_x.py"]]);
        let outcome = run_check(&p);
        // The failing test is the check's one error, and its status the
        // check's.
        assert_eq!(outcome.termination, Termination::Exited(1));
        let codes: Vec<Option<&str>> = outcome
            .diagnostics
            .iter()
            .map(|d| d.code.as_deref())
            .collect();
        assert!(
            !codes.contains(&Some(crate::diagnostics::NO_TESTS_COLLECTED)),
            "{:?}",
            outcome.diagnostics
        );
        assert!(
            outcome
                .diagnostics
                .iter()
                .any(|d| d.message.contains("assert 1 == 2")),
            "{:?}",
            outcome.diagnostics
        );
        assert_eq!(outcome.batches[0].termination, Termination::Exited(5));
        assert!(outcome.batches[0].found_no_tests);
        let log = std::fs::read_to_string(&p.log_path).unwrap();
        assert!(
            log.contains("exited 5; its tool found no test among its files"),
            "{log}"
        );
        // With the other batch passing, the check passes.
        p.invocations = pytest(&[&["helpers.py"], &["test_ok.py"]]);
        let outcome = run_check(&p);
        assert_eq!(outcome.termination, Termination::Exited(0));
        assert_eq!(outcome.diagnostics, []);
        // With no batch running a test, the check fails for want of one,
        // said once.
        p.invocations = pytest(&[&["helpers.py"], &["helpers.py"]]);
        let outcome = run_check(&p);
        assert_eq!(outcome.termination, Termination::Exited(5));
        assert_eq!(
            outcome
                .diagnostics
                .iter()
                .map(|d| d.code.as_deref())
                .collect::<Vec<_>>(),
            [Some(crate::diagnostics::NO_TESTS_COLLECTED)]
        );
    }

    #[test]
    fn a_batch_that_crashes_does_not_keep_the_next_from_running() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_secs(30));
        p.invocations = ["echo a; kill -SEGV $$", "echo b; exit 4", "echo c; exit 6"]
            .iter()
            .map(|s| Invocation {
                argv: vec!["sh".into(), "-c".into(), (*s).into()],
            })
            .collect();
        let outcome = run_check(&p);
        // The crash is the check's end; the first failure stands beside it.
        assert_eq!(outcome.termination, Termination::Signaled(11));
        assert_eq!(outcome.failed_batch, Some(4));
        let ends: Vec<(Termination, Option<u64>)> = outcome
            .batches
            .iter()
            .map(|b| (b.termination.clone(), b.output_from))
            .collect();
        assert_eq!(
            ends,
            [
                (Termination::Signaled(11), Some(0)),
                (Termination::Exited(4), Some(2)),
                (Termination::Exited(6), Some(4)),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(&p.log_path).unwrap(),
            "a\nb\nc\n\
             [phasegate: batch 1 of 3 (its output from byte 0): killed by signal 11]\n\
             [phasegate: batch 2 of 3 (its output from byte 2): exited 4]\n\
             [phasegate: batch 3 of 3 (its output from byte 4): exited 6]\n"
        );
    }

    #[test]
    fn a_timeout_stops_the_batches_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "c", "", Duration::from_millis(300));
        p.invocations = ["exit 2", "sleep 30", "echo never"]
            .iter()
            .map(|s| Invocation {
                argv: vec!["sh".into(), "-c".into(), (*s).into()],
            })
            .collect();
        let outcome = run_check(&p);
        assert!(
            matches!(outcome.termination, Termination::TimedOut(_)),
            "{:?}",
            outcome.termination
        );
        assert_eq!(outcome.failed_batch, Some(2));
        assert_eq!(outcome.batches.len(), 2);
        let log = std::fs::read_to_string(&p.log_path).unwrap();
        assert!(!log.contains("never"), "{log}");
        assert!(
            log.ends_with("[phasegate: batches 3 to 3 were not run]\n"),
            "{log}"
        );
    }

    #[test]
    fn each_batch_of_a_verifier_answers_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "v", "", Duration::from_secs(30));
        p.kind = CheckKind::Verifier;
        let batches = |answers: &[&str]| -> Vec<Invocation> {
            answers
                .iter()
                .map(|a| Invocation {
                    argv: vec!["sh".into(), "-c".into(), format!("echo '{a}'").into()],
                })
                .collect()
        };
        let pass = r#"{"verdict": "pass", "findings": []}"#;
        let fail = r#"{"verdict": "fail", "findings": [{"message": "m"}]}"#;
        p.invocations = batches(&[pass, pass, pass]);
        let outcome = run_check(&p);
        assert!(
            matches!(&outcome.verifier, Some(VerifierReply::Answer(a)) if a.pass),
            "{:?}",
            outcome.verifier
        );
        p.invocations = batches(&[pass, fail]);
        let outcome = run_check(&p);
        assert!(
            matches!(&outcome.verifier, Some(VerifierReply::Answer(a)) if !a.pass && a.findings.len() == 1),
            "{:?}",
            outcome.verifier
        );
        let many = format!(
            r#"{{"verdict": "fail", "findings": [{}]}}"#,
            vec![r#"{"message": "m"}"#; 1500].join(",")
        );
        p.invocations = batches(&[&many]);
        let outcome = run_check(&p);
        assert!(
            matches!(&outcome.verifier, Some(VerifierReply::Answer(a)) if a.findings.len() == 1000),
            "{:?}",
            outcome.verifier.as_ref().map(|_| ())
        );
        assert_eq!(outcome.dropped_diagnostics, 500);
        p.invocations = batches(&[pass, "nonsense"]);
        let outcome = run_check(&p);
        assert!(
            matches!(&outcome.verifier, Some(VerifierReply::Malformed(m)) if m.contains("batch 2 of 2")),
            "{:?}",
            outcome.verifier
        );
    }

    #[test]
    fn a_verifier_over_many_batches_keeps_its_reply_not_its_answers() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), "v", "", Duration::from_secs(30));
        p.kind = CheckKind::Verifier;
        p.invocations = vec![Invocation { argv: vec![] }; 40];
        let answer = format!(
            r#"{{"verdict": "fail", "findings": [{}]}}"#,
            vec![r#"{"message": "m"}"#; 600].join(",")
        );
        let mut answers = Answers::new(&p);
        for n in 1..=40 {
            answers.add((false, answer.clone().into_bytes()));
            // Never more findings than a check keeps, whatever came in.
            let Some(VerifierReply::Answer(combined)) = &answers.reply else {
                panic!("batch {n}: {:?}", answers.reply);
            };
            assert_eq!(combined.findings.len(), (600 * n).min(1000), "batch {n}");
        }
        let Some((VerifierReply::Answer(reply), dropped)) = answers.finish() else {
            panic!("no reply");
        };
        assert!(!reply.pass);
        assert_eq!((reply.findings.len(), dropped), (1000, 40 * 600 - 1000));
        // The first answer that cannot be read is the one reported; after
        // it, only a fail would count (see `verifier::merge`).
        let mut answers = Answers::new(&p);
        answers.add((false, b"{\"verdict\": \"pass\"}".to_vec()));
        answers.add((true, Vec::new()));
        answers.add((false, b"nonsense".to_vec()));
        assert!(
            matches!(answers.finish(), Some((VerifierReply::Malformed(m), 0)) if m == "the answer (batch 2 of 40) is longer than 1048576 bytes"),
        );
        assert!(Answers::new(&p).finish().is_none());
    }

    #[test]
    fn a_verifier_answer_is_read_from_stdout_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(
            dir.path(),
            "v",
            "echo thinking >&2; echo '{\"verdict\": \"fail\", \"findings\": [{\"message\": \"m\"}]}'",
            Duration::from_secs(30),
        );
        p.kind = CheckKind::Verifier;
        let outcome = run_check(&p);
        let Some(VerifierReply::Answer(answer)) = outcome.verifier else {
            panic!("{:?}", outcome.verifier);
        };
        assert!(!answer.pass);
        // Each line once, in the order printed.
        let tail = outcome.output.tail_lines(10);
        assert_eq!(
            tail.iter().filter(|l| l.contains("thinking")).count(),
            1,
            "{tail:?}"
        );
        assert_eq!(
            tail.iter().filter(|l| l.contains("verdict")).count(),
            1,
            "{tail:?}"
        );
        assert!(std::fs::read_to_string(&p.log_path)
            .unwrap()
            .contains("thinking"));
    }

    #[test]
    fn checks_run_in_parallel_and_come_back_in_plan_order() {
        let dir = tempfile::tempdir().unwrap();
        // Each waits for the other's file: only a parallel run finishes.
        let a = plan(
            dir.path(),
            "a",
            "touch a; while [ ! -e b ]; do sleep 0.01; done",
            Duration::from_secs(20),
        );
        let b = plan(
            dir.path(),
            "b",
            "touch b; while [ ! -e a ]; do sleep 0.01; done; exit 2",
            Duration::from_secs(20),
        );
        let mut events = Vec::new();
        let outcomes = run_checks(&[a, b], 2, &mut |e| events.push(e));
        assert_eq!(outcomes[0].name, "a");
        assert_eq!(outcomes[0].termination, Termination::Exited(0));
        assert_eq!(outcomes[1].termination, Termination::Exited(2));
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, RunEvent::Finished { .. }))
                .count(),
            2
        );
    }
}
