//! The one place phasegate reads its environment: working directory,
//! terminal, colour, CI and every `PHASEGATE_*` variable. Everything else
//! takes a `Context`, so tests can set it and nothing reaches for `std::env`.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;

/// What phasegate knows about where and how it runs.
#[derive(Debug, Clone)]
pub struct Context {
    /// The directory phasegate was started in.
    pub cwd: PathBuf,
    /// Standard output is a terminal.
    pub stdout_tty: bool,
    /// Standard error is a terminal (the live progress line goes there).
    pub stderr_tty: bool,
    /// How wide that terminal is: `COLUMNS`, else its own size; `None`
    /// when neither says.
    pub stderr_columns: Option<usize>,
    /// `NO_COLOR` is set to anything non-empty (<https://no-color.org>).
    pub no_color: bool,
    /// `TERM=dumb`.
    pub dumb_terminal: bool,
    /// Running in a CI system (`CI` set, as every major CI sets it).
    pub ci: bool,
    /// `PHASEGATE_PHASE`: the phase when `--phase` is not given.
    pub phase: Option<String>,
    /// `PHASEGATE_PROFILE`: the profile when `--profile` is not given.
    pub profile: Option<String>,
    /// `PHASEGATE_SKIP=check,check`: checks to skip, recorded in the verdict.
    pub skip: Vec<String>,
    /// `PHASEGATE_SESSION`: the agent session, recorded with interventions.
    pub session: Option<String>,
    /// `PHASEGATE_TEST_PANIC=<stage>`: a hidden switch that makes phasegate
    /// panic at a named stage, so the panic path can be tested end to end.
    pub test_panic: Option<String>,
    /// The system's temporary directory (state outside a git repository).
    pub temp_dir: PathBuf,
    /// The number of CPUs, the default for `--jobs`.
    pub cpus: usize,
    /// `PATH`, where checks' programs are looked up.
    pub path: Option<OsString>,
    /// `PHASEGATE_TEST_PAUSE_AT=<step>`: a hidden switch that makes
    /// phasegate stop at a step of the unstaged-change protection, so a test
    /// can kill it there.
    pub pause_at: Option<String>,
    /// The pull or merge request's range (base, head) when CI says so.
    pub ci_range: Option<(String, String)>,
    /// On GitHub's `pull_request_target` event: the commit it checks out by
    /// default (the target branch's, `GITHUB_SHA`) and the pull request's
    /// head commit, when the event's payload names it. A checkout still at
    /// the first holds none of the pull request.
    pub ci_target_checkout: Option<(String, Option<String>)>,
    /// `GITHUB_STEP_SUMMARY`: where the GitHub report appends its summary.
    pub github_step_summary: Option<PathBuf>,
    /// `GIT_INDEX_FILE`: the index git points a hook at during `git commit
    /// -a` or `git commit PATH` (a temporary one holding what will be
    /// committed), absolute.
    pub index_file: Option<PathBuf>,
    /// `GIT_DIR`: the repository git named (exported to hooks, and the only
    /// way to reach a bare repository with a separate work tree), absolute.
    pub git_dir: Option<PathBuf>,
    /// `GIT_WORK_TREE`: the work tree git named with it, absolute.
    pub git_work_tree: Option<PathBuf>,
    /// The configuration git takes from the environment (`GIT_CONFIG_*`,
    /// `git -c`), which libgit2 would not see by itself.
    pub git_config: crate::git::ConfigEnv,
}

/// The range a CI system's pull or merge request covers, as (base, head).
fn ci_range(var: &dyn Fn(&str) -> Option<String>) -> Option<(String, String)> {
    // GitHub Actions: pull_request events name the target branch; the
    // checkout is the merge commit or the head.
    if var("GITHUB_ACTIONS").as_deref() == Some("true") {
        let event = var("GITHUB_EVENT_NAME")?;
        // pull_request_target checks out the target branch unless the
        // workflow checks out the pull request itself (see
        // `ci_target_checkout`).
        if event == "pull_request" || event == "pull_request_target" {
            let base = var("GITHUB_BASE_REF")?;
            return Some((format!("origin/{base}"), "HEAD".to_string()));
        }
        return None;
    }
    // GitLab merge-request pipelines.
    if var("GITLAB_CI").is_some() {
        if let Some(base) = var("CI_MERGE_REQUEST_DIFF_BASE_SHA") {
            return Some((base, "HEAD".to_string()));
        }
        let target = var("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")?;
        return Some((format!("origin/{target}"), "HEAD".to_string()));
    }
    None
}

/// On GitHub's `pull_request_target` event, the commit checked out by
/// default (`GITHUB_SHA`, the target branch's) and the pull request's head
/// commit (`pull_request.head.sha` of the event's payload,
/// `GITHUB_EVENT_PATH`) when it can be read.
fn ci_target_checkout(var: &dyn Fn(&str) -> Option<String>) -> Option<(String, Option<String>)> {
    if var("GITHUB_ACTIONS").as_deref() != Some("true")
        || var("GITHUB_EVENT_NAME").as_deref() != Some("pull_request_target")
    {
        return None;
    }
    Some((
        var("GITHUB_SHA")?,
        var("GITHUB_EVENT_PATH").and_then(|path| pull_request_head(&path)),
    ))
}

/// `pull_request.head.sha` of the GitHub event payload at `path`.
fn pull_request_head(path: &str) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let event: serde_json::Value = serde_json::from_slice(&text).ok()?;
    let sha = event.pointer("/pull_request/head/sha")?.as_str()?;
    (!sha.is_empty()).then(|| sha.to_string())
}

/// `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM` and the
/// settings of `git -c`, as git reads them.
#[expect(
    clippy::disallowed_methods,
    reason = "this is the one place the environment is read"
)]
fn git_config_env(cwd: &std::path::Path) -> crate::git::ConfigEnv {
    let text = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
    // An empty name is kept (git reads no file then); a relative one is
    // relative to where phasegate starts.
    let file = |name: &str| {
        std::env::var_os(name).map(|v| {
            if v.is_empty() {
                PathBuf::new()
            } else {
                cwd.join(v)
            }
        })
    };
    let count: usize = text("GIT_CONFIG_COUNT")
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let pairs = (0..count)
        .map_while(|n| {
            Some((
                text(&format!("GIT_CONFIG_KEY_{n}"))?,
                text(&format!("GIT_CONFIG_VALUE_{n}"))?,
            ))
        })
        .collect();
    crate::git::ConfigEnv {
        global: file("GIT_CONFIG_GLOBAL"),
        system: file("GIT_CONFIG_SYSTEM"),
        no_system: text("GIT_CONFIG_NOSYSTEM").is_some_and(|v| {
            !matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "" | "0" | "false" | "no" | "off"
            )
        }),
        parameters: std::env::var_os("GIT_CONFIG_PARAMETERS").filter(|v| !v.is_empty()),
        pairs,
    }
}

impl Context {
    /// Reads the real process environment.
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the one place the environment is read"
    )]
    pub fn from_env() -> std::io::Result<Context> {
        let var = |name: &str| -> Option<String> {
            std::env::var_os(name)
                .map(|v: OsString| v.to_string_lossy().into_owned())
                .filter(|v| !v.is_empty())
        };
        let cwd = std::env::current_dir()?;
        // git exports relative paths to hooks (`GIT_WORK_TREE=.`): they are
        // relative to the directory phasegate starts in.
        let path_var = |name: &str| -> Option<PathBuf> {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(|v| cwd.join(v).components().collect())
        };
        Ok(Context {
            index_file: path_var("GIT_INDEX_FILE"),
            git_dir: path_var("GIT_DIR"),
            git_work_tree: path_var("GIT_WORK_TREE"),
            git_config: git_config_env(&cwd),
            cwd,
            stdout_tty: std::io::stdout().is_terminal(),
            stderr_tty: std::io::stderr().is_terminal(),
            stderr_columns: var("COLUMNS")
                .and_then(|c| c.trim().parse::<usize>().ok())
                .filter(|c| *c > 0)
                .or_else(|| {
                    rustix::termios::tcgetwinsize(std::io::stderr())
                        .ok()
                        .map(|size| usize::from(size.ws_col))
                        .filter(|c| *c > 0)
                }),
            no_color: var("NO_COLOR").is_some(),
            dumb_terminal: var("TERM").as_deref() == Some("dumb"),
            ci: var("CI").is_some_and(|v| v != "false" && v != "0"),
            phase: var("PHASEGATE_PHASE"),
            profile: var("PHASEGATE_PROFILE"),
            skip: var("PHASEGATE_SKIP")
                .map(|v| {
                    v.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            session: var("PHASEGATE_SESSION"),
            test_panic: var("PHASEGATE_TEST_PANIC"),
            temp_dir: std::env::temp_dir(),
            cpus: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            path: std::env::var_os("PATH"),
            pause_at: var("PHASEGATE_TEST_PAUSE_AT"),
            ci_range: ci_range(&var),
            ci_target_checkout: ci_target_checkout(&var),
            github_step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
        })
    }

    /// Whether output to a stream that is (or is not) a terminal gets colour.
    pub fn color_for(&self, is_tty: bool) -> bool {
        is_tty && !self.no_color && !self.dumb_terminal
    }

    /// Stops here, for good, when the hidden test switch names `step`: a
    /// file `paused` in `state_dir` tells the waiting test where. A signal
    /// phasegate catches at that moment (see `runner::InterruptGuard`) ends
    /// the pause, as it would end the step: the run goes on to what an
    /// interrupt there makes it do. Any other signal ends the process.
    pub fn maybe_pause(&self, step: &str, state_dir: &std::path::Path) {
        if self.pause_at.as_deref() != Some(step) {
            return;
        }
        let _ = std::fs::create_dir_all(state_dir);
        let _ = std::fs::write(state_dir.join("paused"), step);
        while !crate::runner::interrupt_caught() {
            std::thread::park_timeout(std::time::Duration::from_millis(10));
        }
    }

    /// Panics when the hidden test switch names `stage`.
    pub fn maybe_test_panic(&self, stage: &str) {
        assert!(
            self.test_panic.as_deref() != Some(stage),
            "PHASEGATE_TEST_PANIC: forced panic at stage `{stage}`"
        );
    }
}
