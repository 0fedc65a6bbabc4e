//! The one place phasegate reads its environment: working directory,
//! terminal, colour, CI and every `PHASEGATE_*` variable. Everything else
//! takes a `Context`, so tests can set it and nothing reaches for `std::env`.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;

use crate::git::is_zero_id;

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
    /// The user's cache directory (`XDG_CACHE_HOME`, else `~/.cache`),
    /// where temporary checkouts go; `None` when neither names an absolute
    /// directory.
    pub cache_home: Option<PathBuf>,
    /// The number of CPUs, the default for `--jobs`.
    pub cpus: usize,
    /// `PATH`, where checks' programs are looked up.
    pub path: Option<OsString>,
    /// `GOWORK`, which chooses the `go.work` a check's go uses (`off`:
    /// none; an absolute path: that file; unset, empty or `auto`: the one
    /// go finds above its directory), so the diagnostics find the
    /// workspace's packages where go found them. go reads it from the
    /// environment only (`go env -w GOWORK` is refused).
    pub go_work: Option<OsString>,
    /// `VIRTUAL_ENV`: a Python virtual environment is activated, so the
    /// project's own is not put first on checks' `PATH` in its place.
    pub virtual_env: Option<OsString>,
    /// `CLIPPY_CONF_DIR`, where a check's clippy looks for its
    /// `clippy.toml` (unless the check sets its own), so
    /// `--config-from-ref` compares the file clippy reads.
    pub clippy_conf_dir: Option<OsString>,
    /// This phasegate's own executable, which an installed hook runs when
    /// no phasegate is on the `PATH` git gives it.
    pub exe: Option<PathBuf>,
    /// `PHASEGATE_TEST_PAUSE_AT=<step>`: a hidden switch that makes
    /// phasegate stop at a step of the unstaged-change protection, so a test
    /// can kill it there.
    pub pause_at: Option<String>,
    /// `PHASEGATE_TEST_LOG_LIMIT=<bytes>`: a hidden switch that cuts each
    /// check's log at that size instead of `runner::LOG_LIMIT`, so a test
    /// can see the cut without printing a gigabyte. Not a number: unset.
    pub test_log_limit: Option<u64>,
    /// `PHASEGATE_TEST_LOCK_ERROR=<errno>[:<lock>,...]` (`ENOLCK`,
    /// `EOPNOTSUPP`, `EIO`, or its number; the locks `state`, `protect`,
    /// `hooks`, `run`, `emergency`): a hidden switch that makes taking those
    /// of phasegate's locks (without a list, `state.lock` and
    /// `protect/lock`) fail with that error, as flock(2) on a file system
    /// without locks would, so their handling can be tested end to end.
    /// Any other error name: unset.
    pub test_lock_error: Option<(i32, Vec<String>)>,
    /// What CI says a run with no selection of its own checks: a pull or
    /// merge request's range, a push's or a merge queue's, or every tracked
    /// file and why; `None` when no CI event is recognised.
    pub ci_selection: Option<CiSelection>,
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
    /// Where git finds attribute files (`HOME`, `XDG_CONFIG_HOME`,
    /// `GIT_ATTR_SOURCE`, `PATH`), so phasegate can read them itself.
    pub git_attributes: crate::git::AttrEnv,
}

/// What a CI system says a run checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CiSelection {
    /// The changes of a range.
    Range(CiRange),
    /// The event has no range to check (a new branch, a scheduled
    /// pipeline): every tracked file, for the reason given. `source` names
    /// the event as a range's does (`GitHub push`), for the verdict's
    /// `selection.ci`; an event phasegate has no range for is named as
    /// GitHub names it (`GitHub workflow_dispatch`), so it is owned.
    Everything { source: String, why: String },
}

/// A range CI names, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiRange {
    pub from: String,
    pub to: String,
    /// How CI picked it, for the report: `GitHub pull_request`.
    pub source: &'static str,
    /// The range of a push, whose `from` (the branch's commit before the
    /// push) a shallow clone or a force push may not have: every tracked
    /// file is checked then, with a note, where a missing pull request base
    /// is an error.
    pub push: bool,
}

fn range(from: String, to: String, source: &'static str, push: bool) -> CiSelection {
    CiSelection::Range(CiRange {
        from,
        to,
        source,
        push,
    })
}

fn everything(source: impl Into<String>, why: String) -> CiSelection {
    CiSelection::Everything {
        source: source.into(),
        why,
    }
}

/// The text at `pointer` in a GitHub event payload, when it is a string
/// that is not empty.
fn field(payload: &serde_json::Value, pointer: &str) -> Option<String> {
    payload
        .pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// What the CI system's event says to check.
fn ci_selection(var: &dyn Fn(&str) -> Option<String>) -> Option<CiSelection> {
    if var("GITHUB_ACTIONS").as_deref() == Some("true") {
        return github_selection(var);
    }
    if var("GITLAB_CI").is_some() {
        return gitlab_selection(var);
    }
    None
}

/// GitHub Actions, by `GITHUB_EVENT_NAME`; the payload is the JSON file at
/// `GITHUB_EVENT_PATH` (docs.github.com, "Events that trigger workflows"
/// and "Webhook events and payloads").
fn github_selection(var: &dyn Fn(&str) -> Option<String>) -> Option<CiSelection> {
    let event = var("GITHUB_EVENT_NAME")?;
    let payload = || var("GITHUB_EVENT_PATH").and_then(|path| event_payload(&path));
    Some(match event.as_str() {
        // pull_request checks out the merge commit (or the head);
        // pull_request_target checks out the target branch unless the
        // workflow checks out the pull request itself (see
        // `ci_target_checkout`). Both name the target branch.
        "pull_request" | "pull_request_target" => {
            let source = if event == "pull_request" {
                "GitHub pull_request"
            } else {
                "GitHub pull_request_target"
            };
            // A step that clears the variable (a container, `env -i`)
            // still has the payload, which names the target branch too.
            let base = var("GITHUB_BASE_REF")
                .filter(|base| !base.is_empty())
                .or_else(|| payload().and_then(|p| field(&p, "/pull_request/base/ref")));
            let Some(base) = base else {
                return Some(everything(source, format!(
                    "{source} event with no target branch (neither GITHUB_BASE_REF nor the payload's `pull_request.base.ref` names one): every tracked file is selected"
                )));
            };
            range(format!("origin/{base}"), "HEAD".to_string(), source, false)
        }
        // The branch's commit before the push and after it.
        "push" => {
            let Some(payload) = payload() else {
                return Some(everything(
                    "GitHub push",
                    "GitHub push event whose payload (GITHUB_EVENT_PATH) could not be read: every tracked file is selected".to_string(),
                ));
            };
            let before = field(&payload, "/before");
            match before {
                None => everything(
                    "GitHub push",
                    "GitHub push event with no `before` commit: every tracked file is selected"
                        .to_string(),
                ),
                Some(before) if is_zero_id(&before) => everything(
                    "GitHub push",
                    "GitHub push of a new branch or tag (`before` is all zeros): every tracked file is selected".to_string(),
                ),
                Some(before) => match field(&payload, "/after") {
                    Some(after) if is_zero_id(&after) => everything(
                        "GitHub push",
                        "GitHub push that deletes a branch or tag (`after` is all zeros): every tracked file is selected".to_string(),
                    ),
                    // `after` is `GITHUB_SHA`, the commit checked out.
                    after => range(
                        before,
                        after.unwrap_or_else(|| "HEAD".to_string()),
                        "GitHub push",
                        true,
                    ),
                },
            }
        }
        // The merge queue's group: its commit and the target branch's
        // commit it was built on.
        "merge_group" => {
            let ends = payload().and_then(|payload| {
                Some((
                    field(&payload, "/merge_group/base_sha")?,
                    field(&payload, "/merge_group/head_sha")?,
                ))
            });
            match ends {
                Some((base, head)) => range(base, head, "GitHub merge_group", false),
                None => everything(
                    "GitHub merge_group",
                    "GitHub merge_group event whose payload (GITHUB_EVENT_PATH) names no `merge_group.base_sha` and `merge_group.head_sha`: every tracked file is selected".to_string(),
                ),
            }
        }
        // Any other event (`workflow_dispatch`, `schedule`, `release`,
        // `pull_request_review`, ...) names no range: every file is
        // checked, and the verdict says which event chose that, as for
        // the events above, rather than leave `selection.ci` empty as if
        // no CI event had been seen.
        other => {
            let source = format!("GitHub {other}");
            let why = format!(
                "{source} event names no range to check (only pull_request, pull_request_target, push and merge_group do): every tracked file is selected"
            );
            everything(source, why)
        }
    })
}

/// GitLab CI, by its predefined variables (docs.gitlab.com, "Predefined
/// CI/CD variables reference").
fn gitlab_selection(var: &dyn Fn(&str) -> Option<String>) -> Option<CiSelection> {
    // Merged results pipelines check the merge of the source into the
    // target branch's head, `CI_MERGE_REQUEST_TARGET_BRANCH_SHA` (set in
    // those pipelines only): the changes are exactly the request's.
    if let Some(target) = var("CI_MERGE_REQUEST_TARGET_BRANCH_SHA") {
        return Some(range(
            target,
            "HEAD".to_string(),
            "GitLab merged results pipeline",
            false,
        ));
    }
    // Merge request pipelines check the source branch: from the base of
    // the request's diff, else from the target branch.
    if let Some(base) = var("CI_MERGE_REQUEST_DIFF_BASE_SHA") {
        return Some(range(
            base,
            "HEAD".to_string(),
            "GitLab merge request pipeline",
            false,
        ));
    }
    if let Some(target) = var("CI_MERGE_REQUEST_TARGET_BRANCH_NAME") {
        return Some(range(
            format!("origin/{target}"),
            "HEAD".to_string(),
            "GitLab merge request pipeline",
            false,
        ));
    }
    // Branch and tag pipelines: the branch's commit before the push. It is
    // all zeros for a new branch or tag, and in scheduled and manually run
    // pipelines.
    let before = var("CI_COMMIT_BEFORE_SHA")?;
    Some(if is_zero_id(&before) {
        everything(
            "GitLab pipeline",
            "GitLab pipeline with no previous commit (CI_COMMIT_BEFORE_SHA is all zeros: a new branch or tag, a scheduled or manual pipeline): every tracked file is selected".to_string(),
        )
    } else {
        range(before, "HEAD".to_string(), "GitLab push", true)
    })
}

/// The GitHub event payload at `path`.
fn event_payload(path: &str) -> Option<serde_json::Value> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
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
    field(&event_payload(path)?, "/pull_request/head/sha")
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
        let path = std::env::var_os("PATH");
        Ok(Context {
            index_file: path_var("GIT_INDEX_FILE"),
            git_dir: path_var("GIT_DIR"),
            git_work_tree: path_var("GIT_WORK_TREE"),
            git_config: git_config_env(&cwd),
            git_attributes: crate::git::AttrEnv {
                home: std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from),
                xdg_config_home: std::env::var_os("XDG_CONFIG_HOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from),
                attr_source: std::env::var_os("GIT_ATTR_SOURCE").is_some(),
                path: path.clone(),
                cwd: cwd.clone(),
            },
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
            // Two sessions whose names differ only in bytes that are not
            // UTF-8 stay two: those bytes are kept, escaped.
            session: std::env::var_os("PHASEGATE_SESSION")
                .filter(|v| !v.is_empty())
                .map(|v| escaped(&v)),
            test_panic: var("PHASEGATE_TEST_PANIC"),
            temp_dir: std::env::temp_dir(),
            cache_home: cache_home(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")),
            cpus: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            path,
            go_work: std::env::var_os("GOWORK"),
            virtual_env: std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()),
            clippy_conf_dir: std::env::var_os("CLIPPY_CONF_DIR"),
            exe: std::env::current_exe().ok(),
            pause_at: var("PHASEGATE_TEST_PAUSE_AT"),
            test_log_limit: var("PHASEGATE_TEST_LOG_LIMIT").and_then(|v| v.trim().parse().ok()),
            test_lock_error: var("PHASEGATE_TEST_LOCK_ERROR").and_then(|v| lock_error(&v)),
            ci_selection: ci_selection(&var),
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

/// What `PHASEGATE_TEST_LOCK_ERROR` asks: an error number (`errno`), and
/// the locks after a `:`, comma-separated (none: the default ones).
fn lock_error(value: &str) -> Option<(i32, Vec<String>)> {
    let (error, locks) = value.split_once(':').unwrap_or((value, ""));
    let locks = locks
        .split(',')
        .map(str::trim)
        .filter(|lock| !lock.is_empty())
        .map(str::to_string)
        .collect();
    errno(error).map(|errno| (errno, locks))
}

/// The error number `PHASEGATE_TEST_LOCK_ERROR` names: one of the errors
/// flock(2) fails with besides contention, by name, or any by number.
fn errno(name: &str) -> Option<i32> {
    use rustix::io::Errno;
    let errno = match name.trim() {
        "ENOLCK" => Errno::NOLCK,
        "EOPNOTSUPP" => Errno::OPNOTSUPP,
        "EIO" => Errno::IO,
        "EINTR" => Errno::INTR,
        "ENOMEM" => Errno::NOMEM,
        "EWOULDBLOCK" | "EAGAIN" => Errno::WOULDBLOCK,
        number => return number.parse().ok().filter(|n| *n > 0),
    };
    Some(errno.raw_os_error())
}

/// The user's cache directory as the XDG base directory specification
/// says: `XDG_CACHE_HOME` when it is absolute (a relative one is to be
/// ignored), else `$HOME/.cache`.
fn cache_home(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let absolute = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    xdg.and_then(absolute)
        .or_else(|| home.and_then(absolute).map(|home| home.join(".cache")))
}

/// `value` as text: its UTF-8 as it is, any other byte as `\xNN`.
fn escaped(value: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    escaped_bytes(value.as_bytes())
}

/// `bytes` as text: its UTF-8 as it is, any other byte as `\xNN`, so a
/// name git or the environment allows any byte in is still shown whole.
pub(crate) fn escaped_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cache_home_is_an_absolute_xdg_cache_home_else_home_s_cache() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            super::cache_home(os("/c"), os("/h")),
            Some(std::path::PathBuf::from("/c"))
        );
        assert_eq!(
            super::cache_home(os("rel"), os("/h")),
            Some(std::path::PathBuf::from("/h/.cache"))
        );
        assert_eq!(
            super::cache_home(os(""), os("/h")),
            Some("/h/.cache".into())
        );
        assert_eq!(super::cache_home(None, os("")), None);
        assert_eq!(super::cache_home(None, os("h")), None);
    }

    use super::*;

    fn detect(vars: &[(&str, &str)]) -> Option<CiSelection> {
        let var = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        };
        ci_selection(&var)
    }

    fn ends(selection: Option<CiSelection>) -> Option<(String, String, &'static str, bool)> {
        match selection? {
            CiSelection::Range(r) => Some((r.from, r.to, r.source, r.push)),
            CiSelection::Everything { .. } => None,
        }
    }

    #[test]
    fn a_pull_request_without_its_base_variable_reads_the_payload_or_says_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("event.json");
        let event = path.to_string_lossy().into_owned();
        let github = |payload: &str| {
            std::fs::write(&path, payload).unwrap();
            detect(&[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_EVENT_NAME", "pull_request"),
                ("GITHUB_EVENT_PATH", &event),
            ])
        };
        assert_eq!(
            ends(github(r#"{"pull_request": {"base": {"ref": "develop"}}}"#)),
            Some((
                "origin/develop".to_string(),
                "HEAD".to_string(),
                "GitHub pull_request",
                false
            ))
        );
        assert!(matches!(
            github("{}"),
            Some(CiSelection::Everything { why, .. }) if why.contains("GITHUB_BASE_REF")
        ));
    }

    #[test]
    fn github_events_name_their_range_from_the_payload() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("event.json");
        let event = path.to_string_lossy().into_owned();
        let github = |name: &'static str, payload: &str| {
            std::fs::write(&path, payload).unwrap();
            detect(&[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_EVENT_NAME", name),
                ("GITHUB_EVENT_PATH", &event),
                ("GITHUB_BASE_REF", "main"),
            ])
        };
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        assert_eq!(
            ends(github(
                "push",
                &format!(r#"{{"before": "{a}", "after": "{b}"}}"#)
            )),
            Some((a.clone(), b.clone(), "GitHub push", true))
        );
        // A push that deletes a branch has no commit after it to check.
        let zeros = "0".repeat(40);
        assert!(matches!(
            github("push", &format!(r#"{{"before": "{a}", "after": "{zeros}"}}"#)),
            Some(CiSelection::Everything { why, .. }) if why.contains("deletes")
        ));
        assert_eq!(
            ends(github("push", &format!(r#"{{"before": "{a}"}}"#))),
            Some((a.clone(), "HEAD".to_string(), "GitHub push", true))
        );
        assert!(matches!(
            github("push", &format!(r#"{{"before": "{zeros}", "after": "{b}"}}"#)),
            Some(CiSelection::Everything { why, .. }) if why.contains("all zeros")
        ));
        assert!(matches!(
            github("push", "not json"),
            Some(CiSelection::Everything { .. })
        ));
        assert_eq!(
            ends(github(
                "merge_group",
                &format!(r#"{{"merge_group": {{"base_sha": "{a}", "head_sha": "{b}"}}}}"#)
            )),
            Some((a.clone(), b.clone(), "GitHub merge_group", false))
        );
        assert!(matches!(
            github(
                "merge_group",
                &format!(r#"{{"merge_group": {{"base_sha": "{a}"}}}}"#)
            ),
            Some(CiSelection::Everything { .. })
        ));
        assert_eq!(
            ends(github("pull_request", "{}")),
            Some((
                "origin/main".to_string(),
                "HEAD".to_string(),
                "GitHub pull_request",
                false
            ))
        );
        // An event with no range checks every file, and names itself for
        // the verdict's `selection.ci`: a run by hand or on a schedule is
        // still told apart from a run outside any recognised CI event.
        for name in [
            "workflow_dispatch",
            "schedule",
            "pull_request_review",
            "release",
        ] {
            assert!(
                matches!(
                    github(name, "{}"),
                    Some(CiSelection::Everything { source, why })
                        if source == format!("GitHub {name}") && why.contains(name)
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn gitlab_prefers_the_exact_target_head_then_the_diff_base_then_the_branch() {
        let all = [
            ("GITLAB_CI", "true"),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", "t"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "d"),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
            ("CI_COMMIT_BEFORE_SHA", "b"),
        ];
        let from = |n: usize| {
            let mut vars = vec![all[0]];
            vars.extend_from_slice(&all[n..]);
            ends(detect(&vars)).map(|(from, _, source, _)| (from, source))
        };
        assert_eq!(
            from(1),
            Some(("t".to_string(), "GitLab merged results pipeline"))
        );
        assert_eq!(
            from(2),
            Some(("d".to_string(), "GitLab merge request pipeline"))
        );
        assert_eq!(
            from(3),
            Some(("origin/main".to_string(), "GitLab merge request pipeline"))
        );
        assert_eq!(from(4), Some(("b".to_string(), "GitLab push")));
        assert_eq!(from(5), None);
        let zeros = "0".repeat(40);
        assert!(matches!(
            detect(&[("GITLAB_CI", "true"), ("CI_COMMIT_BEFORE_SHA", &zeros)]),
            Some(CiSelection::Everything { .. })
        ));
    }

    #[test]
    fn the_lock_error_switch_takes_a_name_or_a_number() {
        assert_eq!(
            errno("ENOLCK"),
            Some(rustix::io::Errno::NOLCK.raw_os_error())
        );
        assert_eq!(errno(" EIO "), Some(rustix::io::Errno::IO.raw_os_error()));
        assert_eq!(errno("95"), Some(95));
        assert_eq!(errno("ENOSUCH"), None);
        assert_eq!(errno("0"), None);
        assert_eq!(
            lock_error("ENOLCK:hooks, run"),
            Some((
                rustix::io::Errno::NOLCK.raw_os_error(),
                vec!["hooks".to_string(), "run".to_string()]
            ))
        );
        assert_eq!(lock_error("EIO"), Some((5, Vec::new())));
        assert_eq!(lock_error("ENOSUCH:hooks"), None);
    }

    #[test]
    fn a_name_that_is_not_utf8_keeps_its_bytes_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let a = super::escaped(std::ffi::OsStr::from_bytes(b"agent-\xff"));
        let b = super::escaped(std::ffi::OsStr::from_bytes(b"agent-\xfe"));
        assert_eq!(a, "agent-\\xff");
        assert_ne!(a, b);
        assert_eq!(super::escaped(std::ffi::OsStr::new("sé")), "sé");
    }
}
