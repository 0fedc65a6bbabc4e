//! Which `phasegate.toml` a run is judged by: the work tree's, the staged
//! one, a commit's, or `--config-from-ref`'s.

use std::path::{Path, PathBuf};

use crate::config::{self, Config, Profile};
use crate::context::Context;
use crate::gate::{SelectionSummary, VerdictError};

use super::{RunRequest, SelectionRequest, Stop};

/// The configuration of `--config-from-ref spec`, and whether its commit
/// holds a `phasegate.toml` (the embedded defaults otherwise).
pub(in crate::commands) fn config_at_ref(
    root: &Path,
    spec: &str,
) -> Result<(bool, Result<config::Config, config::ConfigError>), crate::git::GitError> {
    let name = format!("{}@{spec}", config::CONFIG_FILE);
    // A link is named as the ref holds it, not as the work tree does.
    let bytes = crate::git::file_at(root, spec, config::CONFIG_FILE).map_err(|e| match e {
        crate::git::GitError::Link { problem, .. } => crate::git::GitError::Link {
            path: name.clone().into(),
            problem,
        },
        e => e,
    })?;
    let held = bytes.is_some();
    let markers = markers_at(root, spec);
    Ok((held, config::load_committed(&markers, &name, bytes)))
}

/// The files that tell a project's language, as the commit `spec` holds
/// them: its defaults are detected there, not in the work tree the branch
/// under test controls. A marker the commit holds as something other than
/// a file (a directory named `go.mod`) is not there, as in a checkout.
pub(in crate::commands) fn markers_at(root: &Path, spec: &str) -> config::RootFiles {
    let names = config::MARKERS.map(Path::new);
    let texts = match crate::git::files_at(root, spec, &names) {
        Ok(texts) => texts,
        // One marker that is not a file spoils the lookup of all: each alone.
        Err(_) => names
            .iter()
            .map(|name| {
                crate::git::files_at(root, spec, &[name])
                    .ok()
                    .and_then(|mut one| one.pop().flatten())
            })
            .collect(),
    };
    let mut texts = texts.into_iter();
    config::RootFiles::from_lookup(|_| texts.next().flatten())
}

/// The configuration as first read, before the files are selected.
pub(super) struct Loaded {
    pub config: Config,
    /// Whether the commit of `--config-from-ref` holds a `phasegate.toml`.
    pub ref_has_config: bool,
    /// The work tree's errors, when the version that counts (staged, or a
    /// range's end) is not known yet: the embedded defaults stand in.
    deferred: Option<config::ConfigError>,
}

/// Reads `phasegate.toml` from the work tree, or from `--config-from-ref`.
/// A staged run is judged by the staged `phasegate.toml`, a range by the
/// one of its end: an error in an uncommitted edit of it waits until the
/// version that counts is known.
pub(super) fn load(
    ctx: &Context,
    args: &RunRequest,
    root: &Path,
    in_repo: bool,
) -> Result<Loaded, Stop> {
    let mut ref_has_config = true;
    let loaded = match &args.config_from_ref {
        None => config::load(root),
        Some(spec) => {
            if !in_repo {
                return Err(Stop::usage(
                    Profile::default(),
                    "--config-from-ref needs a git repository",
                ));
            }
            if let Some(message) = super::select::unnamed_ref("--config-from-ref", spec) {
                return Err(Stop::usage(Profile::default(), message));
            }
            match config_at_ref(root, spec) {
                Ok((held, loaded)) => {
                    ref_has_config = held;
                    loaded
                }
                Err(e) => return Err(Stop::usage(Profile::default(), e.to_string())),
            }
        }
    };
    let from = match &args.config_from_ref {
        Some(spec) => Source::Ref(spec.clone()),
        None => Source::WorkTree,
    };
    let may_be_committed = args.config_from_ref.is_none()
        && in_repo
        && !matches!(
            args.selection,
            SelectionRequest::Files(_) | SelectionRequest::All
        );
    // A configuration that does not load: its errors, under the profile
    // asked for when it is known.
    let failed = |error| Stop::Config(stop_profile(ctx, args), error, from.clone());
    match loaded {
        Ok(config) => Ok(Loaded {
            config,
            ref_has_config,
            deferred: None,
        }),
        Err(error) if may_be_committed => {
            match config::load_committed(
                &config::RootFiles::in_dir(root),
                config::CONFIG_FILE,
                None,
            ) {
                Ok(embedded) => Ok(Loaded {
                    config: embedded,
                    ref_has_config,
                    deferred: Some(error),
                }),
                Err(_) => Err(failed(error)),
            }
        }
        Err(error) => Err(failed(error)),
    }
}

/// The profile a run that stops on its configuration names: the one asked
/// for, when it is known.
fn stop_profile(ctx: &Context, args: &RunRequest) -> Profile {
    match super::asked_profile(ctx, args) {
        Some(Ok(profile)) => profile,
        _ => Profile::default(),
    }
}

impl Loaded {
    /// The configuration the run is judged by, once its files are known: a
    /// staged run by the one it commits, a range by the one of the commit
    /// whose files the checks see. An uncommitted edit of `phasegate.toml`
    /// neither weakens nor breaks it. `unstaged` is the selection's
    /// candidates for unstaged changes; the version used is noted.
    pub fn checked(
        self,
        ctx: &Context,
        args: &RunRequest,
        root: &Path,
        mode: &SelectionSummary,
        unstaged: Option<&crate::git::UnstagedHint>,
        notes: &mut Vec<String>,
    ) -> Result<Config, Stop> {
        let committed = match (&args.config_from_ref, mode.mode, &mode.to) {
            (None, "staged", _) => Some((staged_config(root, unstaged), Source::Staged)),
            (None, "range" | "all", Some(to)) => {
                Some((committed_config(root, to), Source::Checked(to.clone())))
            }
            _ => None,
        };
        match committed {
            Some((Ok(Some(version)), source)) => {
                if version.file_differs {
                    notes.extend(source.used());
                } else {
                    notes.extend(source.detected());
                }
                version
                    .config
                    .map_err(|error| Stop::Config(stop_profile(ctx, args), error, source))
            }
            Some((Err(e), _)) => Err(Stop::internal(self.config.gate.profile, &e)),
            _ => match self.deferred {
                Some(error) => Err(Stop::Config(
                    stop_profile(ctx, args),
                    error,
                    Source::WorkTree,
                )),
                None => Ok(self.config),
            },
        }
    }
}

/// A version of `phasegate.toml` other than the work tree's, loaded, and
/// whether its file differs from the work tree's (or only the files that
/// tell the language do).
struct Version {
    config: Result<Config, config::ConfigError>,
    file_differs: bool,
}

/// The configuration as staged, when `phasegate.toml` is tracked and its
/// work-tree copy differs from the index; `None` otherwise. `unstaged`
/// (the selection's candidates) spares the look when it does not name the
/// file.
fn staged_config(
    root: &Path,
    unstaged: Option<&crate::git::UnstagedHint>,
) -> Result<Option<Version>, crate::git::GitError> {
    if unstaged.is_some_and(|hint| !hint.names(config::CONFIG_FILE.as_bytes())) {
        return Ok(None);
    }
    let Some(Some(staged)) = crate::git::files_staged(root, &[Path::new(config::CONFIG_FILE)])?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    Ok(unless_in_work_tree(root, None, config::CONFIG_FILE, staged))
}

/// `phasegate.toml` as the commit `to` holds it, when it differs from the
/// work tree's, or the commit's files that tell the language do: `None`
/// when both are the same or the commit has none (a configuration never
/// committed is the work tree's to give).
fn committed_config(root: &Path, to: &str) -> Result<Option<Version>, crate::git::GitError> {
    let Some(committed) = crate::git::file_at(root, to, config::CONFIG_FILE)? else {
        return Ok(None);
    };
    let name = format!("{}@{to}", config::CONFIG_FILE);
    let markers = markers_at(root, to);
    Ok(unless_in_work_tree(root, Some(markers), &name, committed))
}

/// `phasegate.toml` as `bytes` (a staged or committed version, shown as
/// `name`) with the local overrides, unless the work tree holds the same
/// and, when `markers` (of the version's tree) are given, the same files
/// that tell the language (without them, the work tree's are the
/// version's).
fn unless_in_work_tree(
    root: &Path,
    markers: Option<config::RootFiles>,
    name: &str,
    bytes: Vec<u8>,
) -> Option<Version> {
    let file_differs =
        std::fs::read(root.join(config::CONFIG_FILE)).map_or(true, |now| now != bytes);
    let same_markers = || {
        markers
            .as_ref()
            .is_none_or(|markers| *markers == config::RootFiles::in_dir(root))
    };
    if !file_differs && same_markers() {
        return None;
    }
    let markers = markers.unwrap_or_else(|| config::RootFiles::in_dir(root));
    Some(Version {
        config: config::load_version(root, &markers, name, bytes),
        file_differs,
    })
}

/// Where a run read `phasegate.toml` from.
#[derive(Clone)]
pub(super) enum Source {
    WorkTree,
    /// The index, because the work tree's version has unstaged changes.
    Staged,
    /// `--config-from-ref`.
    Ref(String),
    /// The commit a range run checks, because the work tree's version
    /// differs from it.
    Checked(String),
}

impl Source {
    /// The note a run that read this version, not the work tree's, carries.
    fn used(&self) -> Option<String> {
        let file = config::CONFIG_FILE;
        match self {
            Source::WorkTree | Source::Ref(_) => None,
            Source::Staged => Some(format!(
                "`{file}` has unstaged changes: the staged version was used"
            )),
            Source::Checked(spec) => Some(format!(
                "`{file}` differs from its version in `{spec}`, the commit checked: that version was used"
            )),
        }
    }

    /// The note of a run whose `phasegate.toml` is the work tree's, but
    /// whose defaults were detected from the files of this version.
    fn detected(&self) -> Option<String> {
        match self {
            Source::Checked(spec) => Some(format!(
                "the files at the root that tell the language (Cargo.toml, go.mod, package.json, pyproject.toml, ...) differ in `{spec}`, the commit checked: the default commands were detected there"
            )),
            _ => None,
        }
    }

    /// What people are told besides the errors, when the file they would
    /// open is not the one read.
    pub fn note(&self) -> Option<String> {
        match self {
            Source::WorkTree => None,
            Source::Staged => Some(format!(
                "this is `{}` as staged; the work tree's version has unstaged changes: `git add` your fix",
                config::CONFIG_FILE
            )),
            Source::Ref(spec) => Some(format!(
                "this is `{}` as `{spec}` holds it (--config-from-ref)",
                config::CONFIG_FILE
            )),
            Source::Checked(spec) => Some(format!(
                "this is `{}` as `{spec}` holds it, the commit checked; the work tree's version differs",
                config::CONFIG_FILE
            )),
        }
    }

    /// The errors placed in the repository's `phasegate.toml` (reports
    /// annotate files of the repository), the message saying which version.
    pub fn locate(&self, error: &mut VerdictError) {
        let Some(note) = self.note() else {
            return;
        };
        if let Source::Ref(spec) | Source::Checked(spec) = self {
            let shown = format!("{}@{spec}", config::CONFIG_FILE);
            for problem in &mut error.problems {
                if problem.file.as_deref() == Some(shown.as_str()) {
                    problem.file = Some(config::CONFIG_FILE.to_string());
                    // An annotation lands on the branch's own
                    // `phasegate.toml`, which may not hold that line at
                    // all: it must say which version is wrong, as only a
                    // change to `spec` fixes it.
                    if let Source::Ref(_) = self {
                        problem.message = format!(
                            "{} (in `{}` as `{spec}` holds it, --config-from-ref)",
                            problem.message,
                            config::CONFIG_FILE
                        );
                    }
                }
            }
        }
        error.message = format!("{} ({note})", error.message);
    }
}

/// A check whose command runs a file of the repository that differs from
/// the version `--config-from-ref` holds: the gate names the command, but
/// what it runs is the branch's, which may have made it `exit 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unvouched {
    pub check: String,
    /// Relative to the repository root.
    pub file: String,
}

/// Programs that run the file named after their options: `bash
/// scripts/test.sh` runs that file as surely as `./scripts/test.sh` does.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "bun", "deno", "ruby", "perl",
    "php", "pwsh",
];

/// The files of the repository the command of `spec` runs, relative to
/// the root: its program when it is named by a path (`./scripts/test.sh`,
/// `scripts/test.sh`), else the script an interpreter is given (`bash
/// scripts/test.sh`). A program found on the `PATH` is no file of the
/// repository, and a path that leaves the repository is none of its.
fn files_run(spec: &config::CheckSpec) -> Vec<PathBuf> {
    let words: Vec<&str> = match &spec.command {
        config::CommandLine::Argv(argv) => argv.iter().map(String::as_str).collect(),
        config::CommandLine::Shell(script) => script.split_whitespace().collect(),
    };
    let Some((program, rest)) = words.split_first() else {
        return Vec::new();
    };
    let mut named = Vec::new();
    if program.contains('/') {
        named.push(*program);
    }
    let base = program.rsplit('/').next().unwrap_or(program);
    if INTERPRETERS.contains(&base) {
        // `sh -c '...'` runs text, not a file: nothing after `-c` is one.
        if let Some(script) = rest
            .iter()
            .take_while(|word| **word != "-c")
            .find(|word| !word.starts_with('-'))
        {
            named.push(script);
        }
    }
    let cwd = spec.cwd.clone().unwrap_or_default();
    named
        .into_iter()
        .filter(|word| !word.contains('{') && !Path::new(word).is_absolute())
        .filter_map(|word| inside_root(&cwd.join(word)))
        .collect()
}

/// `path` (relative to the root) with `.` and `..` worked out, unless it
/// leaves the root.
fn inside_root(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::Normal(name) => out.push(name),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            std::path::Component::RootDir | std::path::Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// The checks among `specs` that run (`planned` is theirs, in order) whose
/// command runs a file of the repository that `--config-from-ref spec`
/// does not hold as the run has it: changed by the branch, or added by
/// it. What runs is `to`'s version (the commit a range or a commit run
/// checks), else the work tree's.
pub(super) fn unvouched(
    root: &Path,
    spec: &str,
    to: Option<&str>,
    specs: &[&config::CheckSpec],
    planned: &[Result<crate::runner::CheckPlan, crate::gate::SkipReason>],
) -> Vec<Unvouched> {
    let mut found = Vec::new();
    for (check, _) in specs.iter().zip(planned).filter(|(_, plan)| plan.is_ok()) {
        for file in files_run(check) {
            let Some(name) = file.to_str() else {
                continue;
            };
            let runs = match to {
                Some(to) => crate::git::file_at(root, to, name).ok().flatten(),
                None => std::fs::read(root.join(&file)).ok(),
            };
            // A file that is not there fails the check by itself.
            let Some(runs) = runs else {
                continue;
            };
            let vouched = crate::git::file_at(root, spec, name).ok().flatten();
            if vouched.as_deref() != Some(runs.as_slice()) {
                found.push(Unvouched {
                    check: check.name.clone(),
                    file: name.to_string(),
                });
            }
        }
    }
    found
}

impl Unvouched {
    /// What the run says of it, naming the ref whose gate it runs under.
    fn message(&self, spec: &str) -> String {
        format!(
            "check `{}` runs `{}`, which differs from its version in `{spec}`: --config-from-ref took the gate's configuration from `{spec}`, but this file is the branch's, and a change to it (an `exit 0`) changes what the check verifies; have it reviewed, or run under `--profile strict` to block such a change",
            self.check, self.file
        )
    }

    /// The finding that fails a run under the strict profile, which turns
    /// every warning into a block.
    pub fn finding(&self, spec: &str) -> crate::diagnostics::Diagnostic {
        crate::diagnostics::Diagnostic {
            check: self.check.clone(),
            origin: config::Origin::Runtime,
            tool: "phasegate".to_string(),
            severity: crate::diagnostics::Severity::Error,
            code: Some("command-file-changed".to_string()),
            file: Some(self.file.clone()),
            message: format!(
                "check `{}` runs `{}`, which differs from its version in `{spec}`: under the strict profile a gate taken from `{spec}` (--config-from-ref) runs only files `{spec}` holds; merge the change to `{}` on its own first, or run under another profile to let it through with a warning",
                self.check, self.file, self.file
            ),
            ..crate::diagnostics::Diagnostic::default()
        }
    }
}

/// Marks the checks that ran a file the branch changed (`unvouched`): each
/// such check warns (its file is named in a warning finding and a note),
/// and a run that passed is `warned`. Under the strict profile they were
/// findings that failed the run already (`Unvouched::finding`).
pub(super) fn warn_unvouched(
    spec: &str,
    profile: Profile,
    unvouched: &[Unvouched],
    verdict: &mut crate::gate::Verdict,
) {
    if profile == Profile::Strict || unvouched.is_empty() {
        return;
    }
    for one in unvouched {
        let Some(check) = verdict.checks.iter_mut().find(|c| c.name == one.check) else {
            continue;
        };
        if check.effect == crate::gate::Effect::None {
            check.effect = crate::gate::Effect::Warn;
        }
        check.diagnostics += 1;
        let message = one.message(spec);
        verdict.diagnostics.push(crate::diagnostics::Diagnostic {
            severity: crate::diagnostics::Severity::Warning,
            message: message.clone(),
            ..one.finding(spec)
        });
        verdict.notes.push(message);
    }
    if verdict.status == crate::gate::Status::Passed {
        verdict.status = crate::gate::Status::Warned;
    }
}
