//! Which `phasegate.toml` a run is judged by: the work tree's, the staged
//! one, a commit's, or `--config-from-ref`'s.

use std::path::{Path, PathBuf};

use crate::config::{self, Config, Profile};
use crate::context::Context;
use crate::gate::{SelectionSummary, VerdictError};

use super::{RunRequest, SelectionRequest, Stop};

mod tools;

/// The configuration of `--config-from-ref spec`, and whether its commit
/// holds a `phasegate.toml` (the embedded defaults otherwise: for the
/// language at its root, or with none there, for the projects below it
/// that the commit holds, as the work tree's defaults follow the work
/// tree).
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
    // Read only when the defaults' phases apply and the root has no
    // language; a commit whose tree cannot be read stops the run rather
    // than leave its projects unchecked.
    let mut unread = None;
    let mut below = || {
        config::projects_at(root, spec).unwrap_or_else(|e| {
            unread = Some(e);
            Vec::new()
        })
    };
    let loaded = config::load_committed(&markers, &mut below, &name, bytes);
    match unread {
        Some(e) => Err(e),
        None => Ok((held, loaded)),
    }
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
    /// Whether the work tree's configuration took the projects below the
    /// root (from the index): a range run takes those of its end commit.
    projects_below: bool,
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
    let mut projects_below = false;
    let loaded = match &args.config_from_ref {
        None => config::load_with(root, &config::RootFiles::in_dir(root), &mut || {
            projects_below = true;
            config::projects_below(root)
        }),
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
                Err(e) => return Err(Stop::usage(Profile::default(), ref_error(ctx, root, &e))),
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
            projects_below,
        }),
        Err(error) if may_be_committed => {
            // A stand-in for its profile until the version that counts
            // is read: no projects are looked for.
            match config::load_committed(
                &config::RootFiles::in_dir(root),
                &mut Vec::new,
                config::CONFIG_FILE,
                None,
            ) {
                Ok(embedded) => Ok(Loaded {
                    config: embedded,
                    ref_has_config,
                    deferred: Some(error),
                    projects_below: false,
                }),
                Err(_) => Err(failed(error)),
            }
        }
        Err(error) => Err(failed(error)),
    }
}

/// What a run says when `--config-from-ref` names no commit here: the
/// option, git's reason with the fetch that brings it, and in a CI job
/// whose clone is shallow (a fork's pull request checked out one commit
/// deep), the setting that gives every run of the job the history.
fn ref_error(ctx: &Context, root: &Path, e: &crate::git::GitError) -> String {
    let message = format!("--config-from-ref: {e}");
    let source = match &ctx.ci_selection {
        Some(crate::context::CiSelection::Range(ci)) => ci.source,
        _ => return message,
    };
    if matches!(e, crate::git::GitError::Revision { .. }) && crate::git::is_shallow(root) {
        let setting = super::select::full_history_setting(source);
        return format!("{message}; for every run of the job to have it, {setting}");
    }
    message
}

/// What a run under `--config-from-ref spec` says when `spec` holds no
/// `phasegate.toml`: the gate is then the embedded default for the
/// language `spec`'s own files tell, or for the projects below its root
/// it holds (`config`), never the branch's own
/// `phasegate.toml`, which would let a branch set the gate that judges
/// it. `to` is the commit checked (the work tree's files otherwise).
pub(super) fn ref_without_config(
    root: &Path,
    spec: &str,
    to: Option<&str>,
    config: &Config,
) -> String {
    let file = config::CONFIG_FILE;
    let branch_has = match to {
        Some(to) => crate::git::file_at(root, to, file).is_ok_and(|held| held.is_some()),
        None => root.join(file).exists(),
    };
    let what_to_do = if branch_has {
        format!("the branch's own `{file}` is not read (a branch does not set the gate that judges it): merge it into `{spec}` on its own first to have it apply")
    } else {
        format!("add a `{file}` to `{spec}` to choose the checks")
    };
    match &config.origin {
        // The root's language, or with none there the projects below it:
        // asked again of the ref only here, where it has no file.
        config::ConfigOrigin::Embedded {
            language: Some(language),
        } if config::languages_of(&markers_at(root, spec)).is_empty() => format!("`{spec}` has no `{file}` (--config-from-ref): the checks are phasegate's defaults for the projects below its root that `{spec}` holds, {language}; a project the branch adds is not checked until `{spec}` holds it; {what_to_do}"),
        config::ConfigOrigin::Embedded {
            language: Some(language),
        } => format!("`{spec}` has no `{file}` (--config-from-ref): the checks are phasegate's defaults for {language}, the language of the files `{spec}` holds; {what_to_do}"),
        _ => format!("`{spec}` has no `{file}` and no project phasegate knows (Cargo.toml, go.mod, package.json, pyproject.toml, setup.cfg) at its root or in the directories below it (--config-from-ref), so no check runs; {what_to_do}"),
    }
}

/// What a run under `--config-from-ref spec` says when the range it checks
/// (`mode`) deletes `phasegate.toml`: a deleted file is no file to check,
/// so the report would count no change at all, as if the branch left the
/// gate alone. The gate is `spec`'s, in full; `None` when the range's end
/// still holds the file or its merge base never did.
pub(super) fn deleted_on_branch(
    root: &Path,
    spec: &str,
    mode: &SelectionSummary,
) -> Option<String> {
    let file = config::CONFIG_FILE;
    let (Some(to), Some(to_commit), Some(base)) = (&mode.to, &mode.to_commit, &mode.merge_base)
    else {
        return None;
    };
    let holds = |commit: &str| {
        crate::git::file_at(root, commit, file)
            .ok()
            .map(|held| held.is_some())
    };
    if holds(to_commit)? || !holds(base)? {
        return None;
    }
    Some(format!(
        "`{to}` deletes `{file}`: the branch's deletion does not change the gate, which is `{file}` as `{spec}` holds it (--config-from-ref), every check of it run"
    ))
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
        // A configuration that took the index's projects is read again
        // with the commit's; one that failed is the work tree's to report.
        let projects_below = self.projects_below && self.deferred.is_none();
        let committed = match (&args.config_from_ref, mode.mode, &mode.to) {
            (None, "staged", _) => Some((staged_config(root, unstaged), Source::Staged)),
            (None, "range" | "all", Some(to)) => Some((
                committed_config(root, to, projects_below),
                Source::Checked(to.clone()),
            )),
            _ => None,
        };
        match committed {
            Some((Ok(Some(version)), source)) => {
                match version.differs {
                    Differs::File => notes.extend(source.used()),
                    Differs::Markers => notes.extend(source.detected()),
                    Differs::Projects => {}
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
/// what differs from the work tree's.
struct Version {
    config: Result<Config, config::ConfigError>,
    differs: Differs,
}

/// Why a version other than the work tree's configuration is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Differs {
    /// Its `phasegate.toml` is not the work tree's.
    File,
    /// Only the files that tell the language are not the work tree's.
    Markers,
    /// Only the projects below the root may not be the index's: a range's
    /// end commit may add or remove one.
    Projects,
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
    // The index's projects are the staged ones.
    let mut below = || config::projects_below(root);
    Ok(unless_in_work_tree(
        root,
        None,
        &mut below,
        config::CONFIG_FILE,
        staged,
        None,
    ))
}

/// `phasegate.toml` as the commit `to` holds it, when it differs from the
/// work tree's, or the commit's files that tell the language do, or the
/// work tree's took the projects below the root (`projects_below`), which
/// are the commit's here, not the index's. `None` when all are the same,
/// or the commit has no `phasegate.toml` and no projects are looked for
/// (a configuration never committed is the work tree's to give).
fn committed_config(
    root: &Path,
    to: &str,
    projects_below: bool,
) -> Result<Option<Version>, crate::git::GitError> {
    let committed = crate::git::file_at(root, to, config::CONFIG_FILE)?;
    if committed.is_none() && !projects_below {
        return Ok(None);
    }
    let markers = markers_at(root, to);
    // Read only when the defaults' phases apply and the root has no
    // language; a commit whose tree cannot be read stops the run rather
    // than leave its projects unchecked.
    let mut unread = None;
    let mut below = || {
        config::projects_at(root, to).unwrap_or_else(|e| {
            unread = Some(e);
            Vec::new()
        })
    };
    let version = match committed {
        Some(committed) => {
            let name = format!("{}@{to}", config::CONFIG_FILE);
            let otherwise = projects_below.then_some(Differs::Projects);
            unless_in_work_tree(root, Some(markers), &mut below, &name, committed, otherwise)
        }
        // The work tree's files, over the defaults of the commit's tree.
        None => Some(Version {
            config: config::load_with(root, &markers, &mut below),
            differs: Differs::Projects,
        }),
    };
    match unread {
        Some(e) => Err(e),
        None => Ok(version),
    }
}

/// `phasegate.toml` as `bytes` (a staged or committed version, shown as
/// `name`) with the local overrides, unless the work tree holds the same
/// and, when `markers` (of the version's tree) are given, the same files
/// that tell the language (without them, the work tree's are the
/// version's), or loaded all the same for the reason `otherwise`, when it
/// is given. `below` gives the projects below the root of the version's
/// tree.
fn unless_in_work_tree(
    root: &Path,
    markers: Option<config::RootFiles>,
    below: &mut dyn FnMut() -> Vec<config::NestedProject>,
    name: &str,
    bytes: Vec<u8>,
    otherwise: Option<Differs>,
) -> Option<Version> {
    let file_differs =
        std::fs::read(root.join(config::CONFIG_FILE)).map_or(true, |now| now != bytes);
    let same_markers = || {
        markers
            .as_ref()
            .is_none_or(|markers| *markers == config::RootFiles::in_dir(root))
    };
    let differs = if file_differs {
        Differs::File
    } else if !same_markers() {
        Differs::Markers
    } else {
        otherwise?
    };
    let markers = markers.unwrap_or_else(|| config::RootFiles::in_dir(root));
    Some(Version {
        config: config::load_version(root, &markers, below, name, bytes),
        differs,
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

/// A check whose command runs something of the repository that differs
/// from the version `--config-from-ref` holds: the gate names the
/// command, but what it runs is the branch's, which may have made it
/// `exit 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unvouched {
    pub check: String,
    /// What differs: a file, one `scripts` entry of a `package.json`, a
    /// cargo alias, a cargo or toolchain setting, or a tool's
    /// configuration.
    target: Target,
    /// Where that entry is in the version that runs.
    line: Option<u32>,
    /// What runs it, when the command does not name it itself: a script
    /// it runs calls it.
    via: Option<String>,
    /// How the version that runs differs from `--config-from-ref`'s.
    change: Change,
}

/// How what runs differs from the target branch's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Both have it, not alike.
    Changed,
    /// The target branch has none.
    Added,
    /// The target branch has it; the branch took it out.
    Removed,
}

/// Programs that run the file named after their options: `bash
/// scripts/test.sh` runs that file as surely as `./scripts/test.sh` does;
/// `.` and `source` read it into the shell that runs them.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "bun", "deno", "ruby", "perl",
    "php", "pwsh", ".", "source",
];

/// Words that come before the program of a shell command.
const SHELL_PREFIXES: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "exec", "time", "command",
    "nohup", "env",
];

/// Package managers that run a `scripts` entry of `package.json`, and the
/// files beside it that change how they run one (`.npmrc`'s
/// `script-shell`, `.yarnrc.yml`'s `yarnPath`, `bunfig.toml`'s
/// `[run] shell`).
const PACKAGE_MANAGERS: &[(&str, &[&str])] = &[
    ("npm", &[".npmrc"]),
    ("pnpm", &[".npmrc"]),
    ("yarn", &[".yarnrc.yml", ".yarnrc"]),
    ("bun", &["bunfig.toml"]),
];

/// Subcommands of the package managers that are their own, never a
/// script's name (`bun test` is bun's own test runner).
const MANAGER_BUILTINS: &[&str] = &[
    "install",
    "i",
    "ci",
    "add",
    "remove",
    "rm",
    "uninstall",
    "update",
    "up",
    "upgrade",
    "exec",
    "x",
    "dlx",
    "create",
    "init",
    "publish",
    "pack",
    "audit",
    "outdated",
    "why",
    "list",
    "ls",
    "link",
    "unlink",
    "config",
    "cache",
    "info",
    "version",
    "help",
    "login",
    "logout",
    "workspace",
    "workspaces",
    "dedupe",
    "prune",
    "rebuild",
    "import",
    "store",
    "patch",
];

/// Options of the package managers and `make` that name the directory to
/// work in.
const DIRECTORY_OPTIONS: &[&str] = &["-C", "--prefix", "--dir", "--cwd", "--directory"];

/// What a command runs that the branch could have changed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A file of the repository, relative to the root: a script, or a
    /// Makefile compared whole (and the files it includes, one level).
    File(PathBuf),
    /// One `scripts` entry of a `package.json`.
    Script { manifest: PathBuf, name: String },
    /// A cargo alias, `[alias]` of a cargo configuration file (`config`,
    /// the file that defines it where the command runs), as cargo finds
    /// it from `dir`, where the command runs.
    Alias {
        config: PathBuf,
        dir: PathBuf,
        name: String,
    },
    /// A setting (`key`, as `target.'cfg(unix)'.runner`) of the files of
    /// `kind` that cargo or rustup reads where the command runs (`dir`):
    /// `config` holds it in the version that runs, else in the target's
    /// (a file another includes, maybe).
    Setting {
        kind: SettingFile,
        config: PathBuf,
        dir: PathBuf,
        key: String,
        /// For `SettingFile::Named`, the file the command names, whose
        /// settings and includes are compared.
        named: Option<PathBuf>,
    },
    /// A file (or its `section`) that `tool` reads as its configuration,
    /// which decides what the tool reports: a rule turned off there
    /// passes the check.
    Config {
        tool: &'static str,
        file: PathBuf,
        section: Option<&'static tools::Section>,
        /// The file whose `extends` names it (a `tsconfig.json`'s base).
        extended_by: Option<PathBuf>,
    },
}

/// The files whose settings change what a `cargo` command verifies
/// without changing its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SettingFile {
    /// cargo's configuration, `.cargo/config` (else `.cargo/config.toml`:
    /// cargo reads the first when both are there) in the directory the
    /// command runs in and in each one above it.
    Cargo,
    /// rustup's toolchain file, `rust-toolchain` (else
    /// `rust-toolchain.toml`) in the nearest directory at or above the
    /// one the command runs in that has one.
    Toolchain,
    /// A cargo configuration file the command names itself (`cargo
    /// --config ci.toml test`), read over every `.cargo/config.toml`: its
    /// own settings, compared file to file.
    Named,
}

impl SettingFile {
    /// Its names in one directory, the one read first first (a file
    /// named on the command line has no name of its own: cargo's).
    fn names(self) -> [&'static str; 2] {
        match self {
            SettingFile::Cargo | SettingFile::Named => [".cargo/config", ".cargo/config.toml"],
            SettingFile::Toolchain => ["rust-toolchain", "rust-toolchain.toml"],
        }
    }
}

/// The `[build]` settings of a cargo configuration that change what a
/// command verifies: the compiler itself (`rustc`, `rustdoc`, for the
/// doctests), a program every compilation goes through (the wrappers: one
/// that exits 0 builds nothing and fails nothing), the compiler's flags
/// (`--cap-lints allow` silences `cargo clippy -- -D warnings`, a `--cfg`
/// compiles tests out) and the target (one whose `cfg` leaves the tests
/// out). Every setting of `[target.<triple>]` and `[target.'cfg(..)']`
/// counts too: the `runner` the test binaries run through (`runner =
/// "true"` passes every test), the `linker` that makes them, their flags
/// and the output of build scripts it overrides; and every variable of
/// `[env]`, the environment the compiler, build scripts and tests see,
/// which a test may obey (`INSTA_FORCE_PASS`, `PROPTEST_CASES=0`). The
/// rest (`target-dir`, `jobs`, `[term]`, `[http]`, `[net]`, the
/// registries) change where and how fast, not what is verified.
const CARGO_BUILD_SETTINGS: &[&str] = &[
    "rustc",
    "rustc-wrapper",
    "rustc-workspace-wrapper",
    "rustdoc",
    "rustflags",
    "rustdocflags",
    "target",
];

/// The `[toolchain]` settings of a toolchain file that choose the
/// toolchain: another `channel` (an old one, with lints the gate relies on
/// missing) or a `path` to a directory of the repository, whose `cargo`
/// and `rustc` are whatever the branch put there. Its `components`,
/// `targets` and `profile` only add to what is installed.
const TOOLCHAIN_SETTINGS: &[&str] = &["channel", "path"];

/// One setting that changes what a cargo command verifies, as a file
/// holds it: its key, its value and the line of its key.
#[derive(Debug, Clone, PartialEq)]
struct Setting {
    key: String,
    value: toml::Value,
    line: Option<u32>,
}

/// The settings of a file of `kind` (its bytes) that change what a cargo
/// command verifies. A file that is not TOML holds none, but for the
/// toolchain file of old, one line that names the channel.
fn verifying_settings(kind: SettingFile, bytes: &[u8]) -> Vec<Setting> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        let channel = text.trim();
        return match kind {
            SettingFile::Toolchain if !channel.is_empty() => vec![Setting {
                key: "toolchain.channel".to_string(),
                value: toml::Value::String(channel.to_string()),
                line: Some(1),
            }],
            _ => Vec::new(),
        };
    };
    let mut found: Vec<(Vec<&str>, &toml::Value)> = Vec::new();
    let wanted = |section: &'static str, names: &[&str]| {
        table
            .get(section)
            .and_then(toml::Value::as_table)
            .into_iter()
            .flatten()
            .filter(|(name, _)| names.is_empty() || names.contains(&name.as_str()))
            .map(|(name, value)| (section, name.as_str(), value))
            .collect::<Vec<_>>()
    };
    match kind {
        SettingFile::Cargo | SettingFile::Named => {
            for (section, name, value) in wanted("build", CARGO_BUILD_SETTINGS)
                .into_iter()
                .chain(wanted("env", &[]))
            {
                found.push((vec![section, name], value));
            }
            // Each target's settings one by one, so that the line of each
            // is named.
            for (section, name, value) in wanted("target", &[]) {
                match value.as_table() {
                    Some(settings) => found.extend(
                        settings
                            .iter()
                            .map(|(setting, value)| (vec![section, name, setting.as_str()], value)),
                    ),
                    None => found.push((vec![section, name], value)),
                }
            }
        }
        SettingFile::Toolchain => {
            for (section, name, value) in wanted("toolchain", TOOLCHAIN_SETTINGS) {
                found.push((vec![section, name], value));
            }
        }
    }
    let spans = toml::de::DeTable::parse(text).ok();
    let mut settings: Vec<Setting> = found
        .into_iter()
        .map(|(parts, value)| Setting {
            key: setting_key(&parts),
            value: value.clone(),
            line: spans
                .as_ref()
                .and_then(|doc| key_line(doc.get_ref(), text, &parts)),
        })
        .collect();
    // In the file's order, as a reader finds them.
    settings.sort_by_key(|setting| setting.line.unwrap_or(u32::MAX));
    settings
}

/// A setting's key as TOML writes it: parts joined by dots, a part that is
/// no bare key (`cfg(unix)`) in single quotes.
fn setting_key(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|part| {
            if !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                (*part).to_string()
            } else {
                format!("'{part}'")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The line the key `parts` names is written on in `table`, parsed from
/// `text`: the line of its last part.
pub(super) fn key_line(table: &toml::de::DeTable<'_>, text: &str, parts: &[&str]) -> Option<u32> {
    let at = key_offset(table, parts)?;
    u32::try_from(text[..at].matches('\n').count() + 1).ok()
}

/// Where the key `parts` names is written in a parsed file: the offset of
/// its last part.
fn key_offset(table: &toml::de::DeTable<'_>, parts: &[&str]) -> Option<usize> {
    let (first, rest) = parts.split_first()?;
    let (key, value) = table.iter().find(|(key, _)| key.get_ref() == first)?;
    if rest.is_empty() {
        return Some(key.span().start);
    }
    match value.get_ref() {
        toml::de::DeValue::Table(inner) => key_offset(inner, rest),
        _ => None,
    }
}

/// cargo's own commands (`cargo --list`), which no alias replaces: cargo
/// ignores an alias of one, with a warning. Its short forms (`b`, `t`)
/// and the commands of other programs (`clippy`, `fmt`) an alias does
/// replace.
const CARGO_COMMANDS: &[&str] = &[
    "add",
    "bench",
    "build",
    "check",
    "clean",
    "config",
    "doc",
    "fetch",
    "fix",
    "generate-lockfile",
    "help",
    "info",
    "init",
    "install",
    "locate-project",
    "login",
    "logout",
    "metadata",
    "new",
    "owner",
    "package",
    "pkgid",
    "publish",
    "read-manifest",
    "remove",
    "report",
    "run",
    "rustc",
    "rustdoc",
    "search",
    "test",
    "tree",
    "uninstall",
    "update",
    "vendor",
    "verify-project",
    "version",
    "yank",
];

/// cargo's options that take the next word as their value.
const CARGO_VALUE_OPTIONS: &[&str] = &["--config", "-Z", "--color", "--explain"];

/// The words of the cargo alias `name` in a cargo configuration file
/// (`[alias]`, a string split at white space or a list of words), and
/// the line that defines it.
fn alias_of(config: &[u8], name: &str) -> Option<(Vec<String>, Option<u32>)> {
    let text = std::str::from_utf8(config).ok()?;
    let table: toml::Table = toml::from_str(text).ok()?;
    let words = match table.get("alias")?.get(name)? {
        toml::Value::String(line) => line.split_whitespace().map(str::to_string).collect(),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    // The first line that starts with its key (`name =`, `"name" =`,
    // `alias.name =`): good enough to point a reader at it.
    let line = text.lines().position(|line| {
        let line = line.trim_start();
        let key = line.strip_prefix("alias.").unwrap_or(line);
        key.trim_start_matches(['"', '\''])
            .strip_prefix(name)
            .is_some_and(|rest| {
                rest.trim_start_matches(['"', '\''])
                    .trim_start()
                    .starts_with('=')
            })
    });
    Some((words, line.and_then(|at| u32::try_from(at + 1).ok())))
}

/// The subcommand of a `cargo` command line (its words after `cargo`):
/// the first word that is neither an option, an option's value, nor a
/// toolchain (`+nightly`).
fn cargo_subcommand(rest: &[String]) -> Option<&str> {
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        if CARGO_VALUE_OPTIONS.contains(&word.as_str())
            || DIRECTORY_OPTIONS.contains(&word.as_str())
        {
            words.next();
        } else if !word.starts_with(['-', '+']) {
            return Some(word);
        }
    }
    None
}

/// The files a cargo configuration file (`file`, relative to the root, its
/// `bytes`) includes, relative to the root: its `include` is a list of
/// paths, or of tables with a `path` (and maybe `optional = true`; one
/// that is not there holds no setting either way), each from the
/// directory of the file that names it.
fn cargo_includes(bytes: &[u8], file: &Path) -> Vec<PathBuf> {
    let Some(table) = std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| toml::from_str::<toml::Table>(text).ok())
    else {
        return Vec::new();
    };
    let Some(toml::Value::Array(items)) = table.get("include") else {
        return Vec::new();
    };
    let dir = file.parent().unwrap_or(Path::new(""));
    items
        .iter()
        .filter_map(|item| match item {
            toml::Value::String(path) => Some(path.as_str()),
            toml::Value::Table(one) => one.get("path")?.as_str(),
            _ => None,
        })
        .filter_map(|path| repository_path(dir, path))
        .collect()
}

/// The files a Makefile's text includes (`include`, `-include` and
/// `sinclude` lines), relative to the root: make looks for them from the
/// directory it runs in (`dir`). Names made at run time (`$(wildcard
/// ...)`, a variable) are not followed.
fn makefile_includes(text: &str, dir: &Path) -> Vec<PathBuf> {
    text.lines()
        .filter(|line| !line.starts_with('\t'))
        .filter_map(|line| {
            let line = line.split('#').next().unwrap_or_default();
            let mut words = line.split_whitespace();
            let first = words.next()?;
            ["include", "-include", "sinclude"]
                .contains(&first)
                .then_some(words)
        })
        .flatten()
        .filter_map(|word| repository_path(dir, word))
        .collect()
}

/// The three versions of a file that matter: the one that runs (the
/// commit checked, else the work tree's), `--config-from-ref`'s, and the
/// one at the merge base of the two, where the branch left the target.
/// Each is read once: a `package.json` is asked for by each script of it
/// a command runs, and by what those run in turn.
struct Versions<'a> {
    root: &'a Path,
    spec: &'a str,
    to: Option<&'a str>,
    base: Option<String>,
    read: std::cell::RefCell<Read>,
    /// The paths where the version that runs differs from `spec`'s, once
    /// a tool that reads files below where it runs asks (see `differing`),
    /// or why they could not be found.
    differing: std::cell::OnceCell<Result<Vec<PathBuf>, String>>,
    /// What the check being looked at runs that could not be compared,
    /// for its notes.
    uncompared: std::cell::RefCell<Vec<Uncompared>>,
    /// The reads of a commit's file that found an object this clone
    /// lacks, since the comparison in hand started.
    unfetched: std::cell::RefCell<Vec<Unfetched>>,
    /// The packages cargo builds where a check runs, by that directory
    /// and the command's choice of packages.
    packages: std::cell::RefCell<PackagesFound>,
    /// phasegate's own `CLIPPY_CONF_DIR`, which a check's clippy sees
    /// unless the check sets its own.
    own_clippy_conf_dir: Option<PathBuf>,
    /// What the environment of the check being looked at says of the
    /// configuration its tools read.
    env: std::cell::RefCell<ToolEnv>,
}

/// The packages cargo builds, by where it runs and what it is asked for.
type PackagesFound =
    std::collections::HashMap<(PathBuf, tools::PackageSelection), std::rc::Rc<Option<Packages>>>;

/// What the environment a tool runs with says of the configuration it
/// reads: the check's `env` over phasegate's own, and a shell command's
/// assignments (`CLIPPY_CONF_DIR=ci cargo clippy`) over both.
#[derive(Debug, Clone, Default)]
struct ToolEnv {
    /// `CLIPPY_CONF_DIR`: clippy looks for its file from there up, not
    /// from each package's directory.
    clippy_conf_dir: Option<PathBuf>,
    /// `ESLINT_USE_FLAT_CONFIG`: the mode eslint reads its configuration
    /// in.
    eslint_flat: Option<String>,
}

impl ToolEnv {
    /// The environment with the assignments `words` (`NAME=value`) over it.
    fn with(&self, words: &[String]) -> ToolEnv {
        let mut env = self.clone();
        for (name, value) in words.iter().filter_map(|word| word.split_once('=')) {
            match name {
                "CLIPPY_CONF_DIR" => env.clippy_conf_dir = Some(PathBuf::from(value)),
                "ESLINT_USE_FLAT_CONFIG" => env.eslint_flat = Some(value.to_string()),
                _ => {}
            }
        }
        env
    }
}

/// What a check runs that could not be compared with `--config-from-ref`'s
/// version: said in a note, never passed over in silence.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Uncompared {
    /// Commands after a `cd` phasegate cannot follow, in the check's own
    /// command (`within` none) or in a file it runs.
    Cd {
        within: Option<Target>,
        lost: LostCd,
    },
    /// The configuration files `tool` reads below `dir`, where it runs:
    /// the diff that finds them failed, for `reason`.
    Below {
        tool: &'static str,
        dir: PathBuf,
        reason: String,
    },
    /// A cargo configuration file (`including`) includes `link`, a
    /// symbolic link out of the repository (to `target`), whose settings
    /// no version of the repository holds.
    OutsideInclude {
        including: PathBuf,
        link: PathBuf,
        target: String,
    },
    /// A file of a commit this clone lacks the object of, so what the
    /// check runs could not be compared.
    Unfetched {
        file: Unfetched,
        /// How the note names the commit: the ref given, or what it is.
        commit: String,
    },
}

/// A read of `path` in `commit` that found an object this clone lacks:
/// git's `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unfetched {
    commit: String,
    path: PathBuf,
    reason: String,
}

impl Uncompared {
    /// The note of check `check`, under the gate of `spec`.
    fn note(&self, check: &str, spec: &str) -> String {
        match self {
            Uncompared::Cd { within, lost } => {
                let place = match within {
                    None => format!("line {} of its command", lost.line),
                    Some(target @ Target::File(_)) => {
                        format!("{}, line {}", target.describe(), lost.line)
                    }
                    Some(target) => target.describe(),
                };
                let skipped = lost.skipped.as_deref().unwrap_or_default();
                format!(
                    "check `{check}` runs `{skipped}` after `{}` ({place}), a directory phasegate cannot tell: what it runs there was not compared with its version in `{spec}` (--config-from-ref), so a change the branch made to it is not seen; write the directory as a plain path of the repository (`cd sub`) to have it compared",
                    lost.text
                )
            }
            Uncompared::Below { tool, dir, reason } => {
                let below = if dir.as_os_str().is_empty() {
                    "below the root".to_string()
                } else {
                    format!("below `{}`", dir.display())
                };
                format!(
                    "check `{check}` runs `{tool}`, whose configuration files {below} could not be compared with their versions in `{spec}` (--config-from-ref): {reason}; a change the branch made to them is not seen; in a partial clone, `git ls-tree -r {spec}` has git fetch the trees it lacks"
                )
            }
            Uncompared::OutsideInclude {
                including,
                link,
                target,
            } => format!(
                "check `{check}` runs cargo, whose configuration `{}` includes `{}`, a symbolic link out of the repository (to `{target}`): what it leads to is no file of any commit, so its settings were not compared with `{spec}` (--config-from-ref) and a change to them is not seen; include a file of the repository to have it compared",
                including.display(),
                link.display()
            ),
            Uncompared::Unfetched { file, commit } => {
                let path = file.path.display();
                format!(
                    "check `{check}` runs what reads `{path}`, which {commit} holds but this clone lacks (a partial clone fetches a file only when git reads it; {}): it was not compared, so a change the branch made to it is not seen; `git cat-file -e {}:{path}` has git fetch it",
                    file.reason, file.commit
                )
            }
        }
    }
}

/// What was read, by commit (none for the work tree) and path: what is
/// there, a symbolic link not followed, or none.
type Read = std::collections::HashMap<(Option<String>, PathBuf), Option<crate::git::TreeEntry>>;

/// A path of the repository as a version holds it, its symbolic links
/// followed (in its last part and in the directories above it).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resolved {
    /// Nothing, a directory, or a loop of links: nothing that runs.
    Missing,
    /// A file: the path it is at once the links are followed, and its
    /// bytes. A link retargeted at a copy is another file.
    File { path: PathBuf, bytes: Vec<u8> },
    /// A link (`link`, holding `target`) out of the repository, which is
    /// not followed: what it leads to is no file of the version.
    Outside { link: PathBuf, target: Vec<u8> },
    /// Something the version holds whose object this clone lacks (a
    /// partial clone): neither a file nor nothing, and not compared.
    Unfetched,
}

impl Versions<'_> {
    /// `path` in the commit `spec`, or in the work tree, its links
    /// followed inside the repository. A link out of it is there, with no
    /// bytes of the repository's to read: none.
    fn at(&self, spec: Option<&str>, path: &Path) -> Option<Vec<u8>> {
        match self.resolve(spec, path) {
            Resolved::File { bytes, .. } => Some(bytes),
            Resolved::Outside { .. } => Some(Vec::new()),
            Resolved::Missing | Resolved::Unfetched => None,
        }
    }

    /// What the version `spec` (the work tree for none) holds at `path`,
    /// a link not followed.
    fn entry(&self, spec: Option<&str>, path: &Path) -> Option<crate::git::TreeEntry> {
        use crate::git::TreeEntry;
        let key = (spec.map(str::to_string), path.to_path_buf());
        let known = self.read.borrow().get(&key).cloned();
        if let Some(known) = known {
            self.note_unfetched(spec, path, known.as_ref());
            return known;
        }
        let entry = match spec {
            Some(spec) => crate::git::entries_at(self.root, spec, &[path])
                .ok()
                .and_then(|mut one| one.pop().flatten()),
            None => {
                use std::os::unix::ffi::OsStrExt;
                let full = self.root.join(path);
                match std::fs::symlink_metadata(&full) {
                    Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(&full)
                        .ok()
                        .map(|target| TreeEntry::Link(target.as_os_str().as_bytes().to_vec())),
                    Ok(meta) if meta.is_dir() => Some(TreeEntry::Directory),
                    Ok(_) => std::fs::read(&full).ok().map(TreeEntry::File),
                    Err(_) => None,
                }
            }
        };
        self.read.borrow_mut().insert(key, entry.clone());
        self.note_unfetched(spec, path, entry.as_ref());
        entry
    }

    /// Keeps a read of `path` in the commit `spec` that found an object
    /// this clone lacks, for the comparison that made it to say so.
    fn note_unfetched(
        &self,
        spec: Option<&str>,
        path: &Path,
        entry: Option<&crate::git::TreeEntry>,
    ) {
        let (Some(spec), Some(crate::git::TreeEntry::Unfetched(reason))) = (spec, entry) else {
            return;
        };
        let one = Unfetched {
            commit: spec.to_string(),
            path: path.to_path_buf(),
            reason: reason.clone(),
        };
        let mut all = self.unfetched.borrow_mut();
        if !all.contains(&one) {
            all.push(one);
        }
    }

    /// `path` in the version `spec` (the work tree for none), each link
    /// on the way followed as a checkout would, but never out of the
    /// repository.
    fn resolve(&self, spec: Option<&str>, path: &Path) -> Resolved {
        use crate::git::TreeEntry;
        use std::os::unix::ffi::OsStrExt;
        let Some(mut at) = inside_root(path) else {
            return Resolved::Missing;
        };
        // Linux follows at most 40 links in one lookup.
        'links: for _ in 0..40 {
            let parts: Vec<_> = at.components().collect();
            let mut done = PathBuf::new();
            for (index, part) in parts.iter().enumerate() {
                done.push(part);
                let last = index + 1 == parts.len();
                match self.entry(spec, &done) {
                    Some(TreeEntry::Directory) if !last => {}
                    Some(TreeEntry::File(bytes)) if last => {
                        return Resolved::File { path: done, bytes }
                    }
                    Some(TreeEntry::Unfetched(_)) => return Resolved::Unfetched,
                    Some(TreeEntry::Link(target)) => {
                        let target_path = Path::new(std::ffi::OsStr::from_bytes(&target));
                        let mut next = done.parent().map(Path::to_path_buf).unwrap_or_default();
                        next.push(target_path);
                        for rest in &parts[index + 1..] {
                            next.push(rest);
                        }
                        match (target_path.is_absolute(), inside_root(&next)) {
                            (false, Some(next)) => {
                                at = next;
                                continue 'links;
                            }
                            _ => return Resolved::Outside { link: done, target },
                        }
                    }
                    _ => return Resolved::Missing,
                }
            }
            return Resolved::Missing;
        }
        Resolved::Missing
    }

    fn running(&self, path: &Path) -> Option<Vec<u8>> {
        self.at(self.to, path)
    }

    /// The commits whose versions vouch for what runs (see `vouching`).
    fn vouchers(&self) -> Vec<&str> {
        std::iter::once(self.spec)
            .chain(self.base.as_deref())
            .collect()
    }

    /// The cargo alias `name` as cargo run in `dir` finds it in the
    /// commit `spec` (the work tree's for none): in the nearest directory
    /// at or above `dir` whose `.cargo/config` (else `.cargo/config.toml`:
    /// cargo reads the first when both are there) defines it. The file,
    /// the alias's words and their line.
    fn cargo_alias(
        &self,
        spec: Option<&str>,
        dir: &Path,
        name: &str,
    ) -> Option<(PathBuf, Vec<String>, Option<u32>)> {
        self.nearest(spec, dir, SettingFile::Cargo.names())
            .find_map(|(file, bytes)| {
                alias_of(&bytes, name).map(|(words, line)| (file, words, line))
            })
    }

    /// In `dir` and each directory above it, nearest first, the first of
    /// `names` the commit `spec` (the work tree for none) holds there,
    /// with its bytes: the files cargo and rustup read where a command
    /// runs.
    fn nearest<'s>(
        &'s self,
        spec: Option<&'s str>,
        dir: &'s Path,
        names: [&'static str; 2],
    ) -> impl Iterator<Item = (PathBuf, Vec<u8>)> + 's {
        std::iter::successors(Some(dir), |dir| dir.parent()).filter_map(move |dir| {
            names
                .iter()
                .map(|name| dir.join(name))
                .find_map(|file| self.at(spec, &file).map(|bytes| (file, bytes)))
        })
    }

    /// The files of `kind` that cargo (or rustup) run in `dir` reads in
    /// the commit `spec` (the work tree's for none), nearest first, each
    /// with the settings in it that change what a command verifies.
    /// rustup reads only the nearest toolchain file.
    fn settings(
        &self,
        spec: Option<&str>,
        dir: &Path,
        kind: SettingFile,
    ) -> Vec<(PathBuf, Vec<Setting>)> {
        let read = match kind {
            SettingFile::Cargo | SettingFile::Named => usize::MAX,
            SettingFile::Toolchain => 1,
        };
        self.nearest(spec, dir, kind.names())
            .take(read)
            .flat_map(|(file, bytes)| self.with_includes(spec, kind, file, &bytes))
            .collect()
    }

    /// A file of `kind` (`file`, its `bytes` in the commit `spec`, the
    /// work tree's for none) with its settings, and for a cargo
    /// configuration the files its `include` names, and theirs in turn,
    /// as cargo reads them: in the order they decide, the including file
    /// first (its own settings win), then its includes from the last
    /// (which wins over the ones before it) to the first.
    fn with_includes(
        &self,
        spec: Option<&str>,
        kind: SettingFile,
        file: PathBuf,
        bytes: &[u8],
    ) -> Vec<(PathBuf, Vec<Setting>)> {
        let mut found = Vec::new();
        self.include_into(spec, kind, file, bytes, &mut found);
        found
    }

    fn include_into(
        &self,
        spec: Option<&str>,
        kind: SettingFile,
        file: PathBuf,
        bytes: &[u8],
        found: &mut Vec<(PathBuf, Vec<Setting>)>,
    ) {
        let included = match kind {
            SettingFile::Cargo | SettingFile::Named => cargo_includes(bytes, &file),
            SettingFile::Toolchain => Vec::new(),
        };
        found.push((file, verifying_settings(kind, bytes)));
        for path in included.into_iter().rev() {
            // cargo refuses a file that includes itself, or one that
            // includes it: read once, it adds nothing.
            if found.iter().any(|(seen, _)| *seen == path) {
                continue;
            }
            // cargo reads what a link out of the repository leads to,
            // which no commit holds: its settings are none phasegate can
            // compare, which the check's notes say.
            if let Resolved::Outside { target, .. } = self.resolve(spec, &path) {
                if spec == self.to {
                    self.uncompared(Uncompared::OutsideInclude {
                        including: found
                            .last()
                            .map(|(file, _)| file.clone())
                            .unwrap_or_default(),
                        link: path.clone(),
                        target: String::from_utf8_lossy(&target).into_owned(),
                    });
                }
            }
            if let Some(bytes) = self.at(spec, &path) {
                self.include_into(spec, kind, path, &bytes, found);
            }
        }
    }

    /// Reads `paths` of the commit `spec`, and the directories above
    /// them, at once, for `at` to find: one look into the repository
    /// instead of one per path.
    fn prefetch(&self, spec: &str, paths: &[PathBuf]) {
        let key = |path: &Path| (Some(spec.to_string()), path.to_path_buf());
        let mut missing: Vec<&Path> = Vec::new();
        {
            let read = self.read.borrow();
            for path in paths {
                for above in path.ancestors().filter(|at| !at.as_os_str().is_empty()) {
                    if !read.contains_key(&key(above)) && !missing.contains(&above) {
                        missing.push(above);
                    }
                }
            }
        }
        if missing.is_empty() {
            return;
        }
        if let Ok(entries) = crate::git::entries_at(self.root, spec, &missing) {
            let mut read = self.read.borrow_mut();
            for (path, entry) in missing.iter().zip(entries) {
                read.insert(key(path), entry);
            }
        }
    }

    /// The files (or sections of files) of `tool`'s configuration that
    /// the tool run in `dir` reads in the version `spec` (the work tree
    /// for none), found as the table says it looks for them.
    fn tool_files(
        &self,
        spec: Option<&str>,
        dir: &Path,
        tool: &tools::Tool,
    ) -> Vec<(PathBuf, Option<&'static tools::Section>)> {
        let dirs: Vec<&Path> = std::iter::successors(Some(dir), |dir| dir.parent()).collect();
        if let Some(spec) = spec {
            // Every file it may read, fetched from the commit at once.
            let paths: Vec<PathBuf> = dirs
                .iter()
                .flat_map(|dir| tool.files.iter().map(|file| dir.join(file.name)))
                .collect();
            self.prefetch(spec, &paths);
        }
        let held = |dir: &Path, file: &tools::ConfigFile| {
            let path = dir.join(file.name);
            let there = match file.section {
                None => self.resolve(spec, &path) != Resolved::Missing,
                Some(section) => self
                    .at(spec, &path)
                    .is_some_and(|bytes| tools::section_of(section, &bytes).is_some()),
            };
            there.then_some((path, file.section))
        };
        let mut found = Vec::new();
        for file in tool
            .files
            .iter()
            .filter(|f| f.lookup == tools::Lookup::Here)
        {
            found.extend(held(dir, file));
        }
        for file in tool
            .files
            .iter()
            .filter(|f| f.lookup == tools::Lookup::Every)
        {
            found.extend(dirs.iter().filter_map(|dir| held(dir, file)));
        }
        // The nearest directory that holds any of them holds what it reads.
        for dir in &dirs {
            let nearest: Vec<_> = tool
                .files
                .iter()
                .filter(|f| f.lookup == tools::Lookup::Nearest)
                .filter_map(|file| held(dir, file))
                .collect();
            if !nearest.is_empty() {
                found.extend(nearest);
                break;
            }
        }
        found
    }

    /// The paths where the version that runs differs from `spec`'s, from
    /// one diff of their trees (the work tree's, with its untracked files,
    /// when no commit runs), made once and only when asked: the tools that
    /// read a file in every directory below them (ruff, eslint, a cargo
    /// workspace's members) are given it by the branch only if it is
    /// among these, so no tree is walked for them. A diff that cannot be
    /// made finds none, and says why: the check's notes say so.
    fn differing(&self) -> Result<&[PathBuf], &str> {
        self.differing
            .get_or_init(|| {
                crate::git::paths_differing(self.root, self.spec, self.to).map_err(|e| {
                    // git's own reason (an object missing) says what to fetch.
                    match std::error::Error::source(&e) {
                        Some(source) => format!("{e}: {source}"),
                        None => e.to_string(),
                    }
                })
            })
            .as_deref()
            .map_err(String::as_str)
    }

    /// Notes that `what` could not be compared.
    fn uncompared(&self, what: Uncompared) {
        let mut all = self.uncompared.borrow_mut();
        if !all.contains(&what) {
            all.push(what);
        }
    }

    /// The files of `tool`'s configuration below `dir` (where it runs)
    /// that the version that runs and `spec`'s do not hold alike: the ones
    /// it reads for the files it checks under them. The files in `dir`
    /// and above are `tool_files`'s. For cargo, the packages the command
    /// chooses (`selection`) are looked for wherever they are, in the
    /// directory it runs in and above too: `-p other` lints a package
    /// that is neither.
    fn tool_files_below(
        &self,
        dir: &Path,
        tool: &tools::Tool,
        selection: &tools::PackageSelection,
    ) -> Vec<(PathBuf, Option<&'static tools::Section>)> {
        if !tool.files.iter().any(|file| file.below) {
            return Vec::new();
        }
        match self.differing() {
            Ok(paths) => {
                if !tool.name.starts_with("cargo") {
                    return files_below(tool, dir, paths, false);
                }
                // cargo builds only the packages the command chooses and
                // their path dependencies, and lints only the workspace's
                // members among them with clippy: another crate's lint
                // levels, or a `clippy.toml` no linted package reads, are
                // no part of what the check runs. Where the packages
                // cannot be worked out, every file below `dir` counts.
                let mut found = files_below(tool, Path::new(""), paths, true);
                // The packages are worked out only for a file that differs.
                if found.is_empty() {
                    return found;
                }
                if self.packages(dir, selection).is_none() {
                    found = files_below(tool, dir, paths, false);
                }
                found.retain(|(file, section)| self.cargo_reads(dir, selection, file, *section));
                found
            }
            Err(reason) => {
                self.uncompared(Uncompared::Below {
                    tool: tool.name,
                    dir: dir.to_path_buf(),
                    reason: reason.to_string(),
                });
                Vec::new()
            }
        }
    }

    /// Whether cargo run in `dir` with `selection` reads `file` (a file of
    /// its table, its `section`) for a package it builds: a package's
    /// `[lints]` only when it builds that package, a `[workspace.lints]`
    /// only when a package it builds takes it (see `inherit_lints`), a
    /// `clippy.toml` only when clippy reads it for a package it lints
    /// (see `clippy_reads`). Where the packages cannot be worked out, it
    /// does.
    fn cargo_reads(
        &self,
        dir: &Path,
        selection: &tools::PackageSelection,
        file: &Path,
        section: Option<&tools::Section>,
    ) -> bool {
        let (Some(name), Some(at)) = (file.file_name(), file.parent()) else {
            return true;
        };
        let packages = self.packages(dir, selection);
        let Some(packages) = packages.as_ref() else {
            return true;
        };
        if name == "Cargo.toml" {
            return match section.map(|section| section.keys) {
                Some(["lints"]) => packages.built.iter().any(|built| built == at),
                Some(["workspace", "lints"]) => self.inherit_lints(packages, at),
                _ => true,
            };
        }
        if CLIPPY_FILES.iter().any(|clippy| name == *clippy) {
            return self.clippy_reads(packages, at);
        }
        true
    }

    /// Whether a package cargo builds (of `packages`) takes the
    /// `[workspace.lints]` of the `Cargo.toml` in `root`: cargo applies it
    /// only to a package whose own `[lints]` says `workspace = true` (cargo
    /// 1.95's `cargo clippy -v` passes its levels to that member's
    /// compiler and to no other's), of that workspace: a member of the
    /// workspace the packages were worked out in when `root` is its root;
    /// a package under `root` outside that workspace (a path dependency
    /// it excludes) may be another workspace's, and counts. A package that
    /// takes it in the version that runs or in the target's counts (one the
    /// branch stopped taking it has its own `[lints]` changed, and warns
    /// for that too).
    fn inherit_lints(&self, packages: &Packages, root: &Path) -> bool {
        let takes = |package: &Path| {
            let manifest = package.join("Cargo.toml");
            [self.to, Some(self.spec)].into_iter().any(|spec| {
                self.manifest_at(spec, &manifest).is_some_and(|table| {
                    table
                        .get("lints")
                        .and_then(|lints| lints.get("workspace"))
                        .and_then(toml::Value::as_bool)
                        == Some(true)
                })
            })
        };
        packages.built.iter().any(|package| {
            let of_root = if packages.members.contains(package) {
                packages.root == root
            } else {
                package.starts_with(root)
            };
            of_root && takes(package)
        })
    }

    /// The packages cargo run in `dir` with `selection` builds, as the
    /// version that runs holds them (see `cargo_packages`), worked out
    /// once per directory and selection: only a check whose tool reads
    /// files below it, and only when the branch changed such a file, asks.
    fn packages(
        &self,
        dir: &Path,
        selection: &tools::PackageSelection,
    ) -> std::rc::Rc<Option<Packages>> {
        let key = (dir.to_path_buf(), selection.clone());
        if let Some(known) = self.packages.borrow().get(&key) {
            return std::rc::Rc::clone(known);
        }
        let found = std::rc::Rc::new(self.cargo_packages(dir, selection));
        self.packages
            .borrow_mut()
            .insert(key, std::rc::Rc::clone(&found));
        found
    }

    /// The packages cargo run in `dir` builds, as `cargo metadata` and
    /// `cargo clippy -v` show it. The manifest is the one `--manifest-path`
    /// names, else the nearest `Cargo.toml` at or above `dir`; its
    /// workspace's root is the nearest one at or above it with a
    /// `[workspace]` that counts it among its members (else the package is
    /// its own). The members are the root's own package, its `members`
    /// globs less the paths its `exclude` names unless a member names the
    /// package itself, and every path dependency of a member that lies in
    /// the workspace's directory and is not excluded, of whichever member,
    /// in turn. cargo builds the packages `selection` chooses of them and
    /// their path dependencies (compiled with their `[lints]`), and clippy
    /// lints the members among those (all but the chosen ones with
    /// `--no-deps`): cargo gives clippy only the workspace's members to
    /// compile. `None` where no manifest, or no directory a glob names,
    /// can be read: then every package counts.
    fn cargo_packages(&self, dir: &Path, selection: &tools::PackageSelection) -> Option<Packages> {
        let manifest_dir = match &selection.manifest_path {
            Some(path) => repository_path(dir, path)?.parent()?.to_path_buf(),
            None => dir
                .ancestors()
                .find(|at| self.manifest(&at.join("Cargo.toml")).is_some())?
                .to_path_buf(),
        };
        let own = self.manifest(&manifest_dir.join("Cargo.toml"))?;
        let workspace = manifest_dir.ancestors().find_map(|at| {
            let table = self.manifest(&at.join("Cargo.toml"))?;
            table
                .contains_key("workspace")
                .then(|| (at.to_path_buf(), table))
        });
        let (root, table, members) = match workspace {
            Some((root, table)) => {
                let listed = self.workspace_members(&root, &table)?;
                let (members, _) = self.path_closure(&root, &table, &listed);
                // A package its workspace leaves out is one of its own.
                if manifest_dir == root || members.contains(&manifest_dir) {
                    (root, table, members)
                } else {
                    (manifest_dir.clone(), own, vec![manifest_dir.clone()])
                }
            }
            None => (manifest_dir.clone(), own, vec![manifest_dir.clone()]),
        };
        let name_of = |package: &Path| {
            self.manifest(&package.join("Cargo.toml"))
                .and_then(|manifest| {
                    Some(manifest.get("package")?.get("name")?.as_str()?.to_string())
                })
        };
        let named = |package: &PathBuf, patterns: &[String]| {
            name_of(package).is_some_and(|name| tools::PackageSelection::names(patterns, &name))
        };
        let chosen: Vec<PathBuf> = if selection.workspace {
            members
                .iter()
                .filter(|member| !named(member, &selection.exclude))
                .cloned()
                .collect()
        } else if !selection.packages.is_empty() {
            // A package named by `-p` is one of the workspace's, or one
            // they depend on.
            let (_, built) = self.path_closure(&root, &table, &members);
            built
                .iter()
                .filter(|package| named(package, &selection.packages))
                .cloned()
                .collect()
        } else if manifest_dir == root && table.contains_key("workspace") {
            let listed = table
                .get("workspace")
                .and_then(|w| w.get("default-members"))
                .is_some();
            if listed {
                self.workspace_paths(&root, &table, "default-members")?
            } else if table.contains_key("package") {
                vec![root.clone()]
            } else {
                members.clone()
            }
        } else {
            vec![manifest_dir.clone()]
        };
        let (_, built) = self.path_closure(&root, &table, &chosen);
        let compiled = if selection.no_deps { &chosen } else { &built };
        let linted = compiled
            .iter()
            .filter(|package| members.contains(package))
            .cloned()
            .collect();
        Some(Packages {
            root,
            members,
            linted,
            built,
        })
    }

    /// From the packages `seeds` of the workspace (`table`, at `root`),
    /// the members their path dependencies make, in turn, with the seeds
    /// (a member's path dependency in the workspace's directory that it
    /// does not exclude is a member), and every package cargo compiles for
    /// them: the seeds and their path dependencies, in turn.
    fn path_closure(
        &self,
        root: &Path,
        table: &toml::Table,
        seeds: &[PathBuf],
    ) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let is_workspace = table.contains_key("workspace");
        let excluded = |package: &Path| {
            !is_workspace
                || !package.starts_with(root)
                || workspace_list(table, "exclude")
                    .iter()
                    .any(|path| package.starts_with(root.join(path)))
        };
        let inherited = workspace_path_dependencies(table);
        let mut members = seeds.to_vec();
        let mut built = seeds.to_vec();
        // Each package read once, its path dependencies after it; a
        // member's makes members, a non-member's only what cargo builds.
        let mut queue: std::collections::VecDeque<(PathBuf, bool)> =
            seeds.iter().map(|seed| (seed.clone(), true)).collect();
        while let Some((package, member)) = queue.pop_front() {
            let Some(manifest) = self.manifest(&package.join("Cargo.toml")) else {
                continue;
            };
            let mut deps: Vec<PathBuf> = path_dependencies(&manifest)
                .into_iter()
                .filter_map(|dep| within_root(&package.join(dep)))
                .collect();
            deps.extend(
                inherited_dependencies(&manifest)
                    .iter()
                    .filter_map(|name| inherited.get(name))
                    .filter_map(|dep| within_root(&root.join(dep))),
            );
            for dep in deps {
                let is_member = member && !excluded(&dep);
                if is_member && !members.contains(&dep) {
                    members.push(dep.clone());
                } else if built.contains(&dep) {
                    continue;
                }
                if !built.contains(&dep) {
                    built.push(dep.clone());
                }
                queue.push_back((dep, is_member));
            }
        }
        (members, built)
    }

    /// The `Cargo.toml` at `path`, parsed, as the version that runs holds it.
    fn manifest(&self, path: &Path) -> Option<toml::Table> {
        self.manifest_at(self.to, path)
    }

    /// The `Cargo.toml` at `path`, parsed, as the version `spec` holds it.
    fn manifest_at(&self, spec: Option<&str>, path: &Path) -> Option<toml::Table> {
        self.at(spec, path)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
    }

    /// The directories (relative to the root) of the members the
    /// `[workspace]` of `table`, at `root`, names: its own package, and
    /// its `members` (see `workspace_paths`); `None` when a directory a
    /// glob must look into cannot be read.
    fn workspace_members(&self, root: &Path, table: &toml::Table) -> Option<Vec<PathBuf>> {
        let mut members = Vec::new();
        if table.contains_key("package") {
            members.push(root.to_path_buf());
        }
        for dir in self.workspace_paths(root, table, "members")? {
            if !members.contains(&dir) {
                members.push(dir);
            }
        }
        Some(members)
    }

    /// The directories (relative to the root) the list `key` (`members`,
    /// `default-members`) of the `[workspace]` of `table`, at `root`,
    /// names: its paths, and the directories its globs match that hold a
    /// `Cargo.toml`, less those under an `exclude` path; `None` when a
    /// directory a glob must look into cannot be read.
    fn workspace_paths(&self, root: &Path, table: &toml::Table, key: &str) -> Option<Vec<PathBuf>> {
        let mut paths = Vec::new();
        let excluded = workspace_list(table, "exclude");
        for member in workspace_list(table, key) {
            let plain = !member.contains(['*', '?', '[']);
            let found = if plain {
                vec![root.join(&member)]
            } else {
                self.globbed(root, &member)?
                    .into_iter()
                    .filter(|dir| {
                        let inside = dir.strip_prefix(root).unwrap_or(dir);
                        !excluded.iter().any(|path| inside.starts_with(path))
                    })
                    .collect()
            };
            for dir in found.into_iter().filter_map(|dir| within_root(&dir)) {
                if !paths.contains(&dir) {
                    paths.push(dir);
                }
            }
        }
        Some(paths)
    }

    /// The directories below `root` that the member glob `pattern` matches
    /// and that hold a `Cargo.toml`, in the version that runs. cargo
    /// expands a glob one directory level at a time: `*` stays within one.
    /// Only the directories the glob's parts lead into are read.
    fn globbed(&self, root: &Path, pattern: &str) -> Option<Vec<PathBuf>> {
        let part = |text: &str| {
            globset::GlobBuilder::new(text)
                .literal_separator(true)
                .build()
                .ok()
                .map(|glob| glob.compile_matcher())
        };
        let parts: Vec<_> = pattern.split('/').filter(|p| !p.is_empty()).collect();
        let whole = part(pattern)?;
        let each: Vec<_> = parts.iter().map(|p| part(p)).collect::<Option<_>>()?;
        let deep = parts.contains(&"**");
        let enter = |inside: &Path| {
            let names: Vec<_> = inside.iter().collect();
            deep || (names.len() < parts.len()
                && names
                    .iter()
                    .zip(&each)
                    .all(|(name, glob)| glob.is_match(name)))
        };
        let mut found = Vec::new();
        let mut level = vec![PathBuf::new()];
        while let Some(inside) = level.pop() {
            for (name, is_dir) in self.listing(&root.join(&inside))? {
                let below = inside.join(name);
                if !is_dir {
                    continue;
                }
                if whole.is_match(&below)
                    && self
                        .running(&root.join(&below).join("Cargo.toml"))
                        .is_some()
                {
                    found.push(root.join(&below));
                }
                if enter(&below) {
                    level.push(below);
                }
            }
        }
        found.sort();
        Some(found)
    }

    /// The names in the directory `dir` of the version that runs, each
    /// with whether it is a directory; `None` when it cannot be read.
    fn listing(&self, dir: &Path) -> Option<Vec<(std::ffi::OsString, bool)>> {
        match self.to {
            Some(spec) => crate::git::names_at(self.root, spec, dir).ok(),
            None => {
                let read = match std::fs::read_dir(self.root.join(dir)) {
                    Ok(read) => read,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
                    Err(_) => return None,
                };
                Some(
                    read.filter_map(Result::ok)
                        .filter(|entry| entry.file_name() != ".git")
                        .map(|entry| {
                            let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                            (entry.file_name(), is_dir)
                        })
                        .collect(),
                )
            }
        }
    }

    /// Whether clippy reads the `clippy.toml` (or `.clippy.toml`) of
    /// `config_dir` for a package it lints (of `packages`): clippy looks
    /// from each package's directory up and reads the nearest file
    /// (checked with the installed clippy), so one counts only at or
    /// above a linted package with no nearer file, in the version that
    /// runs or in the target's (whose file the branch may have removed).
    fn clippy_reads(&self, packages: &Packages, config_dir: &Path) -> bool {
        packages
            .linted
            .iter()
            .filter(|member| member.starts_with(config_dir))
            .any(|member| {
                [self.to, Some(self.spec)].into_iter().any(|spec| {
                    let holds = |at: &Path| {
                        CLIPPY_FILES
                            .iter()
                            .any(|name| self.resolve(spec, &at.join(name)) != Resolved::Missing)
                    };
                    holds(config_dir)
                        && !member
                            .ancestors()
                            .take_while(|at| *at != config_dir)
                            .any(holds)
                })
            })
    }

    /// Whether eslint's older mode, run in `dir`, reads `file`, a file of
    /// its cascade (one of `tools::ESLINTRC_NAMES`) at or above `dir`: it
    /// goes up from each linted file's directory and stops at the first
    /// configuration that says `root: true` (eslint 8's "Cascading and
    /// Hierarchy"), so a stop between `dir` and `file`'s directory, which
    /// every file it lints lies under, leaves `file` unread. A file below
    /// `dir` is read for the files of its own directory. Another name
    /// (`.eslintignore`, a flat config) is read as the table says.
    fn eslintrc_reads(&self, dir: &Path, file: &Path) -> bool {
        let (Some(name), Some(at)) = (file.file_name(), file.parent()) else {
            return true;
        };
        if !tools::ESLINTRC_NAMES.iter().any(|one| name == *one) {
            return true;
        }
        !dir.ancestors()
            .take_while(|between| *between != at)
            .any(|between| between.starts_with(at) && self.eslintrc_stops(between))
    }

    /// Whether eslint's older mode stops its cascade in `dir` in the version
    /// that runs: the file it reads there, the first of its names (see
    /// `tools::ESLINTRC_NAMES`), says `root: true`. One whose `root`
    /// cannot be read (JavaScript, a file that does not parse, a link out
    /// of the repository, an object this clone lacks) does not stop it:
    /// the files above still count. A branch that adds the stop, or
    /// removes it, changes that file, which warns on its own.
    fn eslintrc_stops(&self, dir: &Path) -> bool {
        for name in tools::ESLINTRC_NAMES {
            let bytes = match self.resolve(self.to, &dir.join(name)) {
                Resolved::Missing => continue,
                Resolved::File { bytes, .. } => bytes,
                Resolved::Outside { .. } | Resolved::Unfetched => return false,
            };
            match tools::eslintrc_root(name, &bytes) {
                tools::EslintrcRoot::NoConfig => {}
                tools::EslintrcRoot::Root => return true,
                tools::EslintrcRoot::NotRoot | tools::EslintrcRoot::Unknown => return false,
            }
        }
        false
    }

    /// What a version holds of a tool's configuration file (`section`
    /// of it, or all of it, its links followed), to compare.
    fn config_in(&self, spec: Option<&str>, file: &Path, section: Option<&tools::Section>) -> Held {
        match section {
            None => match self.resolve(spec, file) {
                Resolved::Missing => Held::Missing,
                resolved => Held::Whole(resolved),
            },
            Some(section) => self
                .at(spec, file)
                .and_then(|bytes| tools::section_of(section, &bytes))
                .map_or(Held::Missing, |(value, line)| Held::Section(value, line)),
        }
    }

    /// The versions that vouch for a file: the target's, and the one the
    /// branch started from. A file the branch left alone is the target's
    /// even when the target changed it since (a merge request whose target
    /// moved on, a merged results pipeline built on an older target).
    fn vouching(&self, path: &Path) -> Vec<Option<Vec<u8>>> {
        if path.to_str().is_none() {
            return Vec::new();
        }
        let mut found = vec![self.at(Some(self.spec), path)];
        if let Some(base) = &self.base {
            found.push(self.at(Some(base), path));
        }
        found
    }
}

/// The package directories a cargo command builds where a check runs
/// (see `Versions::cargo_packages`): the ones clippy lints (`linted`),
/// and with them in `built` every package it compiles.
#[derive(Debug)]
struct Packages {
    /// The workspace's root (the package's own directory, with none):
    /// where cargo runs the compiler for its members.
    root: PathBuf,
    /// The workspace's members, built or not.
    members: Vec<PathBuf>,
    linted: Vec<PathBuf>,
    built: Vec<PathBuf>,
}

/// The names clippy reads its configuration from, in each directory.
const CLIPPY_FILES: [&str; 2] = ["clippy.toml", ".clippy.toml"];

/// The dependency tables of a `Cargo.toml` (`manifest`, parsed):
/// `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, and
/// those of each `[target.<cfg>]`.
fn dependency_tables(manifest: &toml::Table) -> Vec<&toml::Table> {
    const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Value> = KINDS
        .iter()
        .filter_map(|kind| manifest.get(*kind))
        .collect();
    tables.extend(
        manifest
            .get("target")
            .and_then(toml::Value::as_table)
            .into_iter()
            .flat_map(|targets| targets.values())
            .flat_map(|target| KINDS.iter().filter_map(|kind| target.get(*kind))),
    );
    tables
        .into_iter()
        .filter_map(toml::Value::as_table)
        .collect()
}

/// The paths of the path dependencies a `Cargo.toml` (`manifest`, parsed)
/// names in its dependency tables, relative to its directory.
fn path_dependencies(manifest: &toml::Table) -> Vec<String> {
    dependency_tables(manifest)
        .into_iter()
        .flat_map(|deps| deps.values())
        .filter_map(|dep| dep.get("path")?.as_str().map(str::to_string))
        .collect()
}

/// The names of the dependencies a `Cargo.toml` takes from its workspace
/// (`helper = { workspace = true }`).
fn inherited_dependencies(manifest: &toml::Table) -> Vec<String> {
    dependency_tables(manifest)
        .into_iter()
        .flat_map(|deps| deps.iter())
        .filter(|(_, dep)| dep.get("workspace").and_then(toml::Value::as_bool) == Some(true))
        .map(|(name, _)| name.clone())
        .collect()
}

/// The path dependencies of a workspace's `[workspace.dependencies]`, by
/// name, relative to its root: a member that takes one with `workspace =
/// true` depends on it; one no member takes is not built.
fn workspace_path_dependencies(root: &toml::Table) -> std::collections::HashMap<String, String> {
    root.get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|deps| deps.iter())
        .filter_map(|(name, dep)| Some((name.clone(), dep.get("path")?.as_str()?.to_string())))
        .collect()
}

/// The entries of the list `key` (`members`, `exclude`) of the
/// `[workspace]` of `table`, as paths inside its directory.
fn workspace_list(table: &toml::Table, key: &str) -> Vec<String> {
    table
        .get("workspace")
        .and_then(|w| w.get(key))
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.as_str())
        .filter_map(|entry| within_root(Path::new(entry)))
        .filter_map(|entry| entry.to_str().map(str::to_string))
        .collect()
}

/// Among `paths` (relative to the root), the files of `tool`'s
/// configuration that it reads below `dir`, where it runs: in a directory
/// under `dir` (or `dir` itself, `with_dir`), by a name the tool reads
/// there, each with the section read of it.
fn files_below(
    tool: &tools::Tool,
    dir: &Path,
    paths: &[PathBuf],
    with_dir: bool,
) -> Vec<(PathBuf, Option<&'static tools::Section>)> {
    let mut found = Vec::new();
    for path in paths {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            continue;
        };
        if (parent == dir && !with_dir) || !parent.starts_with(dir) {
            continue;
        }
        for file in tool.files.iter().filter(|file| file.below) {
            if name == file.name {
                found.push((path.clone(), file.section));
            }
        }
    }
    found
}

/// A tool's configuration file, or the section of it the tool reads, as
/// a version holds it.
#[derive(Debug, Clone)]
enum Held {
    Missing,
    Whole(Resolved),
    /// The section, and the line it starts on (which is no part of it).
    Section(tools::SectionValue, Option<u32>),
}

impl PartialEq for Held {
    fn eq(&self, other: &Held) -> bool {
        match (self, other) {
            (Held::Missing, Held::Missing) => true,
            (Held::Whole(one), Held::Whole(other)) => one == other,
            (Held::Section(one, _), Held::Section(other, _)) => one == other,
            _ => false,
        }
    }
}

/// The first line of `runs` that is not as `theirs` has it: where a
/// reader of a changed file starts.
fn first_changed_line(runs: &[u8], theirs: &[u8]) -> Option<u32> {
    let mut theirs_lines = theirs.split(|&b| b == b'\n');
    let lines: Vec<&[u8]> = runs.split(|&b| b == b'\n').collect();
    let at = lines
        .iter()
        .position(|line| theirs_lines.next() != Some(*line))
        .unwrap_or(lines.len().saturating_sub(1));
    // A file cut short differs at its end: its last line.
    let last = lines
        .len()
        .saturating_sub(usize::from(runs.ends_with(b"\n")));
    u32::try_from(at.min(last.saturating_sub(1)) + 1).ok()
}

/// The `scripts` entry `name` of a `package.json`'s text, and its line.
fn script_of(manifest: Option<&[u8]>, name: &str) -> Option<(String, Option<u32>)> {
    let text = std::str::from_utf8(manifest?).ok()?;
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let script = value.get("scripts")?.get(name)?.as_str()?.to_string();
    // The first line that holds the key after `"scripts"` does: good
    // enough to point a reader at it.
    let key = format!("{}:", serde_json::Value::String(name.to_string()));
    let scripts_at = text.find("\"scripts\"").unwrap_or(0);
    let line = text[scripts_at..]
        .lines()
        .position(|line| line.replace(' ', "").contains(&key))
        .and_then(|at| u32::try_from(at + 1 + text[..scripts_at].matches('\n').count()).ok());
    Some((script, line))
}

/// One simple command of shell text, and where it stands: how many
/// parentheses (a subshell, `$(`, a backquote) it is in, and on which
/// line, a line continued with `\` counting as one (`line`), and on which
/// line of the text it starts (`first_line`, from 1).
struct ShellCommand {
    words: Vec<String>,
    depth: usize,
    line: usize,
    first_line: usize,
}

/// The simple commands of shell text, each as its words: split where
/// another command starts (`&&`, `||`, `;`, `|`, `&`, a new line, `$(`,
/// a backquote, a parenthesis), comments left out, quotes taken off. An
/// approximation of the shell's grammar, enough to find what a line runs.
/// What a backquote holds runs in a subshell, as what `$(` does.
fn shell_commands(text: &str) -> Vec<ShellCommand> {
    /// What an open parenthesis or backquote started: a subshell, or a
    /// command substitution inside the word `word` of the command
    /// `words` (begun on `first_line`), which go on after it.
    enum Open {
        Subshell,
        Substitution {
            words: Vec<String>,
            word: String,
            first_line: usize,
            backquote: bool,
        },
    }
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let (mut at, mut first_line) = (0, 1);
    let mut open: Vec<Open> = Vec::new();
    let mut end = |words: &mut Vec<String>, depth: usize, line: usize, first_line: usize| {
        if !words.is_empty() {
            commands.push(ShellCommand {
                words: std::mem::take(words),
                depth,
                line,
                first_line,
            });
        }
    };
    for (index, line) in text.lines().enumerate() {
        if words.is_empty() && word.is_empty() {
            first_line = index + 1;
        }
        for c in line.chars() {
            let closes_backquote = matches!(
                open.last(),
                Some(Open::Substitution {
                    backquote: true,
                    ..
                })
            );
            match c {
                '#' if word.is_empty() => break,
                ';' | '|' | '&' | '(' | ')' | '`' => {
                    let substitution =
                        (c == '(' && word.ends_with('$')) || (c == '`' && !closes_backquote);
                    if substitution {
                        // `$(` or a backquote in a word: the command
                        // around it goes on after it.
                        word.truncate(word.trim_end_matches('$').len());
                        open.push(Open::Substitution {
                            words: std::mem::take(&mut words),
                            word: std::mem::take(&mut word),
                            first_line,
                            backquote: c == '`',
                        });
                        first_line = index + 1;
                        continue;
                    }
                    words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                    end(&mut words, open.len(), at, first_line);
                    first_line = index + 1;
                    match c {
                        '(' => open.push(Open::Subshell),
                        ')' | '`' => match open.pop() {
                            Some(Open::Substitution {
                                words: outer,
                                word: before,
                                first_line: outer_line,
                                ..
                            }) => {
                                // Shown as `$(…)`: a value phasegate
                                // cannot know.
                                words = outer;
                                word = format!("{before}$(…)");
                                first_line = outer_line;
                            }
                            Some(Open::Subshell) | None => {}
                        },
                        _ => {}
                    }
                }
                '\'' | '"' => {}
                c if c.is_whitespace() => {
                    words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                }
                c => word.push(c),
            }
        }
        words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
        // A line that ends in `\` goes on on the next.
        if words.last().is_some_and(|last| last == "\\") {
            words.pop();
            continue;
        }
        end(&mut words, open.len(), at, first_line);
        at += 1;
    }
    end(&mut words, open.len(), at, first_line);
    commands
}

/// Where a shell is, as phasegate follows its `cd`s.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Here {
    /// A directory of the repository, relative to the root.
    At(PathBuf),
    /// Past the `cd` of this index among `Commands::lost`, which phasegate
    /// cannot follow.
    Lost(usize),
}

/// One shell's directory, and the one before its last `cd` (`cd -`).
#[derive(Debug, Clone)]
struct Shell {
    here: Here,
    previous: Option<Here>,
}

/// The simple commands of shell text, each with the directory it runs in
/// (see `commands_in`).
#[derive(Debug, Default)]
struct Commands {
    found: Vec<(Vec<String>, PathBuf)>,
    /// The `cd`s phasegate cannot follow (`cd "$DIR"`), after which a
    /// command that may run a file of the repository was not looked at.
    lost: Vec<LostCd>,
}

/// A `cd` (or `pushd`) to a directory phasegate cannot tell from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LostCd {
    /// The command as its words (quotes taken off).
    text: String,
    /// Its line in the text, from 1.
    line: usize,
    /// The first command after it that may run a file of the repository,
    /// which was not looked at; `None` while there is none.
    skipped: Option<String>,
}

/// The simple commands of shell text run in `dir`, each with the
/// directory it runs in: a `cd` (or `pushd`, `popd`) to a plain path of
/// the repository moves the commands after it in its shell, not out of a
/// subshell (`$(cd sub && pwd)` leaves the shell where it was), nor, with
/// `per_line` (make runs each line of a recipe in a shell of its own),
/// past its line; `cd -` goes back to where the shell was before its last
/// `cd`. After a `cd` to where phasegate cannot tell (`cd "$DIR"`, out of
/// the repository, `cd -` with no `cd` before it), the commands of that
/// shell are not looked at, and the `cd` is in `lost` when one of them
/// may run a file of the repository: a command looked up from the wrong
/// directory would compare the wrong files.
fn commands_in(text: &str, dir: &Path, per_line: bool) -> Commands {
    let start = || Shell {
        here: Here::At(dir.to_path_buf()),
        previous: None,
    };
    // The directory of each shell, the subshells' after the script's.
    let mut shells = vec![start()];
    let mut pushed: Vec<Here> = Vec::new();
    let mut line = 0;
    let mut out = Commands::default();
    for command in shell_commands(text) {
        if per_line && command.line != line {
            shells = vec![start()];
            pushed.clear();
        }
        line = command.line;
        let current = shells.last().cloned().unwrap_or_else(start);
        shells.resize(command.depth + 1, current);
        let Some(shell) = shells.last_mut() else {
            continue;
        };
        let words = from_program(&command.words);
        let lose = |out: &mut Commands| {
            out.lost.push(LostCd {
                text: words.join(" "),
                line: command.first_line,
                skipped: None,
            });
            Here::Lost(out.lost.len() - 1)
        };
        match words.first().map(String::as_str) {
            Some(change @ ("cd" | "pushd")) => {
                let mut operands = words[1..].iter().skip_while(|word| {
                    word.len() > 1 && word.starts_with('-') || word.as_str() == "--"
                });
                let operand = operands.next();
                let next = match (operand.map(String::as_str), &shell.here) {
                    (Some("-"), _) if change == "cd" => {
                        shell.previous.clone().unwrap_or_else(|| lose(&mut out))
                    }
                    (Some(word), Here::At(here)) => {
                        directory_path(here, word).map_or_else(|| lose(&mut out), Here::At)
                    }
                    // From where phasegate cannot tell, no `cd` is known
                    // but `cd -`.
                    (Some(_), Here::Lost(at)) => Here::Lost(*at),
                    // `pushd` alone swaps the two directories on top.
                    (None, _) if change == "pushd" => match pushed.pop() {
                        Some(top) => top,
                        None => shell.here.clone(),
                    },
                    // `cd` alone goes home, out of the repository.
                    _ => lose(&mut out),
                };
                if change == "pushd" {
                    pushed.push(shell.here.clone());
                }
                shell.previous = Some(std::mem::replace(&mut shell.here, next));
            }
            Some("popd") => {
                if let Some(top) = pushed.pop() {
                    shell.previous = Some(std::mem::replace(&mut shell.here, top));
                }
            }
            _ => match &shell.here {
                Here::At(here) => out.found.push((command.words, here.clone())),
                Here::Lost(at) => {
                    if let Some(lost) = out.lost.get_mut(*at) {
                        if lost.skipped.is_none() && may_run_repository_files(words) {
                            lost.skipped = Some(words.join(" "));
                        }
                    }
                }
            },
        }
    }
    out.lost.retain(|lost| lost.skipped.is_some());
    out
}

/// Whether the simple command `words` (from its program on) may run a
/// file of the repository, or a tool that reads one: a program named by
/// a path, an interpreter, a package manager, `cargo`, `make`, or a tool
/// whose configuration is compared. `echo done` runs none.
fn may_run_repository_files(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    program.contains('/')
        || INTERPRETERS.contains(&base)
        || PACKAGE_MANAGERS.iter().any(|(name, _)| *name == base)
        || ["cargo", "make", "gmake"].contains(&base)
        || tools::tool_of(words, &|_| false).is_some()
}

/// The directory of the repository `word` names from `dir`, the root
/// included, unless it is no plain relative path that stays inside it.
fn directory_path(dir: &Path, word: &str) -> Option<PathBuf> {
    if word.contains(['{', '$', '*', '?', '~']) || word == "-" || Path::new(word).is_absolute() {
        return None;
    }
    within_root(&dir.join(word))
}

/// The words of a simple command from its program on: what comes before
/// it (`exec`, `then`, `FOO=1`) left out.
fn from_program(words: &[String]) -> &[String] {
    let assignment = |word: &str| {
        word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let skip = words
        .iter()
        .take_while(|word| SHELL_PREFIXES.contains(&word.as_str()) || assignment(word))
        .count();
    &words[skip..]
}

/// `word` as a path of the repository seen from `dir` (relative to the
/// root), unless it is no plain relative path that stays inside it.
fn repository_path(dir: &Path, word: &str) -> Option<PathBuf> {
    if word.is_empty() || word.contains(['{', '$', '*', '?', '~']) || Path::new(word).is_absolute()
    {
        return None;
    }
    inside_root(&dir.join(word))
}

/// What the simple command `words`, run in `dir` (relative to the root),
/// runs of the repository: its program named by a path, the script an
/// interpreter is given, the `package.json` script a package manager runs
/// (with its `pre` and `post` scripts, and the files that configure the
/// manager), or the Makefile of `make`; and the configuration files of the
/// tool it runs (`tool_configs`). A program found on the `PATH` is no file
/// of the repository.
fn targets_of(words: &[String], dir: &Path, versions: &Versions<'_>) -> Vec<Target> {
    let command = from_program(words);
    let Some((program, rest)) = command.split_first() else {
        return Vec::new();
    };
    // The assignments before the program are its environment.
    let env = versions
        .env
        .borrow()
        .with(&words[..words.len() - command.len()]);
    let mut found = Vec::new();
    if program.contains('/') {
        found.extend(repository_path(dir, program).map(Target::File));
    }
    let base = program.rsplit('/').next().unwrap_or(program);
    // A directory given by option (`npm --prefix web test`, `make -C
    // sub`), and the words that are not options.
    let mut dir = dir.to_path_buf();
    let mut files = Vec::new();
    let mut plain = Vec::new();
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        if let Some((option, value)) = word.split_once('=') {
            if DIRECTORY_OPTIONS.contains(&option) {
                dir = inside_root(&dir.join(value)).unwrap_or_default();
                continue;
            }
        }
        if DIRECTORY_OPTIONS.contains(&word.as_str()) {
            if let Some(value) = words.next() {
                dir = inside_root(&dir.join(value)).unwrap_or_default();
            }
        } else if base == "make" && (word == "-f" || word == "--file" || word == "--makefile") {
            files.extend(words.next().cloned());
        } else if word == "--" || word == "-c" {
            break;
        } else if !word.starts_with('-') {
            plain.push(word.as_str());
        }
    }
    found.extend(tool_configs(command, &dir, &env, versions));
    if let Some((_, configs)) = PACKAGE_MANAGERS.iter().find(|(name, _)| *name == base) {
        if let Some(script) = package_script(base, &plain) {
            if let Some(manifest) = manifest_for(&dir, versions) {
                let at = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
                for name in [
                    format!("pre{script}"),
                    script.to_string(),
                    format!("post{script}"),
                ] {
                    found.push(Target::Script {
                        manifest: manifest.clone(),
                        name,
                    });
                }
                found.extend(configs.iter().map(|config| Target::File(at.join(config))));
                return found;
            }
        }
    }
    if base == "cargo" {
        // What the command verifies also hangs on the settings of the
        // files cargo and rustup read where it runs; a toolchain named on
        // the command line (`cargo +stable test`) is rustup's choice over
        // any toolchain file.
        let toolchain_named = rest.first().is_some_and(|word| word.starts_with('+'));
        found.extend(cargo_settings(&dir, !toolchain_named, versions));
        found.extend(named_config_settings(rest, &dir, versions));
        // An alias of the repository's cargo configuration runs what the
        // branch wrote there (`[alias] clippy = "version"`).
        if let Some(name) = cargo_subcommand(rest).filter(|name| !CARGO_COMMANDS.contains(name)) {
            if let Some((config, _, _)) = versions.cargo_alias(versions.to, &dir, name) {
                found.push(Target::Alias {
                    config,
                    dir: dir.clone(),
                    name: name.to_string(),
                });
            }
        }
        return found;
    }
    if base == "make" || base == "gmake" {
        if files.is_empty() {
            // GNU make's own order (make(1)): the first that is there.
            let names = ["GNUmakefile", "makefile", "Makefile"];
            files.extend(
                names
                    .iter()
                    .map(|name| (*name).to_string())
                    .find(|name| versions.running(&dir.join(name)).is_some()),
            );
        }
        found.extend(
            files
                .iter()
                .filter_map(|file| repository_path(&dir, file))
                .map(Target::File),
        );
    } else if INTERPRETERS.contains(&base) {
        found.extend(
            plain
                .first()
                .and_then(|script| repository_path(&dir, script))
                .map(Target::File),
        );
    }
    found
}

/// The `clippy.toml` (or `.clippy.toml`) clippy reads when
/// `CLIPPY_CONF_DIR` names `conf`, as either version holds it: the
/// nearest from that directory up, for every package it lints. A relative
/// `conf` is taken from where cargo runs the compiler for the workspace's
/// members, its root (as `cargo clippy -v` shows), not from where the
/// check runs; a directory out of the repository holds no file of it.
fn clippy_conf_files(
    conf: &Path,
    dir: &Path,
    selection: &tools::PackageSelection,
    versions: &Versions<'_>,
) -> Vec<(PathBuf, Option<&'static tools::Section>)> {
    let inside = if conf.is_absolute() {
        conf.strip_prefix(versions.root).ok().and_then(within_root)
    } else {
        let packages = versions.packages(dir, selection);
        let from = packages
            .as_ref()
            .as_ref()
            .map_or(dir, |packages| packages.root.as_path());
        within_root(&from.join(conf))
    };
    let Some(conf) = inside else {
        return Vec::new();
    };
    let Some(clippy) = tools::TOOLS.iter().find(|tool| tool.name == "cargo clippy") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for spec in [versions.to, Some(versions.spec)] {
        for (file, section) in versions.tool_files(spec, &conf, clippy) {
            let named = file
                .file_name()
                .is_some_and(|name| CLIPPY_FILES.iter().any(|clippy| name == *clippy));
            if named && !found.contains(&(file.clone(), section)) {
                found.push((file, section));
            }
        }
    }
    found
}

/// The configuration files of the tool the simple command `words` (from
/// its program on) runs in `dir`, as the tool finds them in the version
/// that runs or in `--config-from-ref`'s (a file the branch deleted is
/// one it changed): the files its options name, else those it looks
/// for (from `dir` up, and below it among the files the branch made
/// otherwise than `--config-from-ref`'s, for a tool that reads them
/// there), and the files a `tsconfig.json` extends, one level. None when
/// the command runs no tool of the table.
fn tool_configs(
    words: &[String],
    dir: &Path,
    env: &ToolEnv,
    versions: &Versions<'_>,
) -> Vec<Target> {
    let is_script = |name: &str| {
        manifest_for(dir, versions).is_some_and(|manifest| {
            script_of(versions.running(&manifest).as_deref(), name).is_some()
        })
    };
    let Some((tool, args)) = tools::tool_of(words, &is_script) else {
        return Vec::new();
    };
    let target = |file: PathBuf, section, extended_by| Target::Config {
        tool: tool.name,
        file,
        section,
        extended_by,
    };
    let named = tools::named_files(tool, args);
    let mut found: Vec<Target> = Vec::new();
    let specs = [versions.to, Some(versions.spec)];
    let cargo = tool.name.starts_with("cargo");
    let selection = if cargo {
        tools::PackageSelection::of(args)
    } else {
        tools::PackageSelection::default()
    };
    // eslint's older mode reads its cascade of `.eslintrc*` under the file
    // `-c` names: only those files are looked for then.
    let cascade = tool.name == "eslint"
        && !named.is_empty()
        && tools::eslint_cascade(args, &named, env.eslint_flat.as_deref());
    let looked_for = |file: &Path, section: Option<&tools::Section>| {
        let eslintrc = || {
            file.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| {
                    tool.files
                        .iter()
                        .any(|one| one.name == name && tools::eslintrc_file(one))
                })
        };
        // With `CLIPPY_CONF_DIR` set, clippy reads no file of a package's
        // directory: `clippy_conf_files` are the ones it reads.
        let moved = || {
            env.clippy_conf_dir.is_some()
                && file
                    .file_name()
                    .is_some_and(|name| CLIPPY_FILES.iter().any(|clippy| name == *clippy))
        };
        // A file the branch left as the target has it warns of nothing:
        // the packages, or where eslint's cascade stops, are worked out
        // only for one that differs.
        let unchanged = || {
            versions.config_in(versions.to, file, section)
                == versions.config_in(Some(versions.spec), file, section)
        };
        let reads = || {
            if cargo {
                versions.cargo_reads(dir, &selection, file, section)
            } else {
                versions.eslintrc_reads(dir, file)
            }
        };
        (!cascade || eslintrc())
            && (!(cargo || tool.name == "eslint") || unchanged() || reads())
            && !(tool.name == "cargo clippy" && moved())
    };
    if named.is_empty() || cascade {
        for spec in specs {
            for (file, section) in versions.tool_files(spec, dir, tool) {
                let one = target(file.clone(), section, None);
                if looked_for(&file, section) && !found.contains(&one) {
                    found.push(one);
                }
            }
        }
        for (file, section) in versions.tool_files_below(dir, tool, &selection) {
            let one = target(file.clone(), section, None);
            if looked_for(&file, section) && !found.contains(&one) {
                found.push(one);
            }
        }
    }
    if tool.name == "cargo clippy" {
        if let Some(conf) = &env.clippy_conf_dir {
            found.extend(
                clippy_conf_files(conf, dir, &selection, versions)
                    .into_iter()
                    .map(|(file, section)| target(file, section, None)),
            );
        }
    }
    for name in named {
        let Some(mut file) = repository_path(dir, name) else {
            continue;
        };
        // A directory (`tsc -p web`) holds the file the tool looks for.
        let is_directory = |spec: Option<&str>| {
            matches!(
                versions.entry(spec, &file),
                Some(crate::git::TreeEntry::Directory)
            )
        };
        if specs.into_iter().any(is_directory) {
            if let Some(first) = tool.files.first() {
                file = file.join(first.name);
            }
        }
        found.push(target(file, None, None));
    }
    if tool.extends {
        let mut extended = Vec::new();
        for one in &found {
            let Target::Config { file, .. } = one else {
                continue;
            };
            let at = file.parent().unwrap_or(Path::new(""));
            for spec in specs {
                let Some(bytes) = versions.at(spec, file) else {
                    continue;
                };
                for name in tools::extends_of(&bytes) {
                    let Some(mut base) = repository_path(at, &name) else {
                        continue;
                    };
                    // tsc adds `.json` to a name that lacks it.
                    if base.extension().is_none_or(|e| e != "json")
                        && specs
                            .into_iter()
                            .all(|spec| versions.at(spec, &base).is_none())
                    {
                        base.as_mut_os_string().push(".json");
                    }
                    let new = target(base, None, Some(file.clone()));
                    if !found.contains(&new) && !extended.contains(&new) {
                        extended.push(new);
                    }
                }
            }
        }
        found.extend(extended);
    }
    found
}

/// The settings that change what a cargo command run in `dir` verifies,
/// of its cargo configuration (and its toolchain file, with `toolchain`)
/// as the version that runs or `--config-from-ref`'s holds them: one
/// target each, to be compared in every version.
fn cargo_settings(dir: &Path, toolchain: bool, versions: &Versions<'_>) -> Vec<Target> {
    let kinds: &[SettingFile] = if toolchain {
        &[SettingFile::Cargo, SettingFile::Toolchain]
    } else {
        &[SettingFile::Cargo]
    };
    // Every file each version may read, fetched from each commit at once.
    let mut paths = Vec::new();
    let mut at = Some(dir);
    while let Some(dir) = at {
        for kind in kinds {
            paths.extend(kind.names().iter().map(|name| dir.join(name)));
        }
        at = dir.parent();
    }
    for spec in versions.to.iter().chain(&versions.vouchers()) {
        versions.prefetch(spec, &paths);
    }
    // A file that is a link out of the repository is one cargo reads, but
    // whose settings are no file of the repository's: compared as a link.
    let mut found: Vec<Target> = paths
        .iter()
        .filter(|path| {
            matches!(
                versions.resolve(versions.to, path),
                Resolved::Outside { .. }
            )
        })
        .map(|path| Target::File(path.clone()))
        .collect();
    for &kind in kinds {
        for spec in [versions.to, Some(versions.spec)] {
            for (config, settings) in versions.settings(spec, dir, kind) {
                for setting in settings {
                    let target = Target::Setting {
                        kind,
                        config: config.clone(),
                        dir: dir.to_path_buf(),
                        key: setting.key,
                        named: None,
                    };
                    // Named once, by the file nearest to `dir` that holds
                    // it in the version that runs.
                    let known = found.iter().any(|one| match (one, &target) {
                        (
                            Target::Setting { kind, key, .. },
                            Target::Setting {
                                kind: new_kind,
                                key: new_key,
                                ..
                            },
                        ) => kind == new_kind && key == new_key,
                        _ => false,
                    });
                    if !known {
                        found.push(target);
                    }
                }
            }
        }
    }
    found
}

/// The settings of the cargo configuration files a cargo command line
/// (`rest`, its words after `cargo`, run in `dir`) names with `--config
/// FILE`: cargo reads a value that is a file where it runs as a file of
/// settings, any other as one `key=value` (which the command itself
/// holds, as the gate's configuration does). Each setting it holds in
/// the version that runs or in `--config-from-ref`'s is one target,
/// compared in that file.
fn named_config_settings(rest: &[String], dir: &Path, versions: &Versions<'_>) -> Vec<Target> {
    let mut files = Vec::new();
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        let value = match word.strip_prefix("--config") {
            _ if word == "--" => break,
            Some("") => words.next().map(String::as_str),
            Some(value) => value.strip_prefix('='),
            None => None,
        };
        let Some(file) = value.and_then(|value| repository_path(dir, value)) else {
            continue;
        };
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let mut found: Vec<Target> = Vec::new();
    for file in files {
        for spec in [versions.to, Some(versions.spec)] {
            let Some(bytes) = versions.at(spec, &file) else {
                continue;
            };
            let read = versions.with_includes(spec, SettingFile::Named, file.clone(), &bytes);
            for (config, settings) in read {
                for setting in settings {
                    // Named once per file the command names, by the file
                    // that holds it first.
                    let known = found.iter().any(|one| {
                        matches!(one, Target::Setting { key, named, .. }
                            if *key == setting.key && named.as_ref() == Some(&file))
                    });
                    if !known {
                        found.push(Target::Setting {
                            kind: SettingFile::Named,
                            config: config.clone(),
                            dir: dir.to_path_buf(),
                            key: setting.key,
                            named: Some(file.clone()),
                        });
                    }
                }
            }
        }
    }
    found
}

/// The variables of a check's `env` (and the cargo settings, by the last
/// part of their key) whose value is a program cargo runs: the compiler,
/// rustdoc, a wrapper every compilation goes through, the linker, the
/// runner of the test binaries. A value that is a path of the repository
/// names a file the branch may have rewritten, whatever the value.
fn names_program(variable: &str) -> bool {
    const PROGRAMS: &[&str] = &[
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_RUSTC",
        "CARGO_BUILD_RUSTDOC",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    ];
    PROGRAMS.contains(&variable)
        || (variable.starts_with("CARGO_TARGET_")
            && (variable.ends_with("_RUNNER") || variable.ends_with("_LINKER")))
}

/// The file of the repository the program `value` names (a setting's
/// value, its first word for a `runner` that has arguments), seen from
/// `dir`: only a path names one (`./ci/run.sh`, `tools/wrap`); a bare
/// name is found on the `PATH`.
fn program_file(value: &toml::Value, dir: &Path) -> Option<PathBuf> {
    let program = match value {
        toml::Value::String(text) => text.split_whitespace().next()?,
        toml::Value::Array(words) => words.first()?.as_str()?,
        _ => return None,
    };
    program
        .contains('/')
        .then(|| repository_path(dir, program))
        .flatten()
}

/// The name of the `package.json` script that `manager` runs given the
/// words `plain` (its options left out): `npm test`, `npm run lint`,
/// `pnpm lint`, `yarn build`, `bun run build`.
fn package_script<'w>(manager: &str, plain: &[&'w str]) -> Option<&'w str> {
    let (first, rest) = plain.split_first()?;
    match *first {
        "run" | "run-script" | "rum" | "urn" => rest.first().copied(),
        // `bun test` is bun's own test runner, not the `test` script.
        "test" | "t" | "tst" if manager != "bun" => Some("test"),
        "start" | "stop" | "restart" if manager != "bun" => Some(first),
        word if manager == "npm" || MANAGER_BUILTINS.contains(&word) => None,
        // bun's own test runner and bundler.
        "test" | "build" if manager == "bun" => None,
        // pnpm, yarn and bun run a script named as their subcommand.
        word => Some(word),
    }
}

/// The `package.json` a package manager started in `dir` uses, relative to
/// the root: the nearest one at or above `dir`, as npm finds its project.
fn manifest_for(dir: &Path, versions: &Versions<'_>) -> Option<PathBuf> {
    let mut at = Some(dir);
    while let Some(dir) = at {
        let manifest = dir.join("package.json");
        if versions.running(&manifest).is_some() {
            return Some(manifest);
        }
        at = dir.parent();
    }
    None
}

/// What the text of a target runs in turn, one level down: the commands
/// of a `package.json` script (in its directory), of a shell script, of a
/// Makefile's recipes (in `dir`, where the check runs) and the files it
/// includes, and the command a cargo alias stands for.
fn called_by(target: &Target, dir: &Path, versions: &Versions<'_>) -> Vec<Target> {
    let mut included = Vec::new();
    let mut per_line = false;
    let (text, dir) = match target {
        // What a tool's configuration files pull in (a `tsconfig.json`'s
        // base) is found with them.
        Target::Config { .. } => return Vec::new(),
        Target::Setting {
            kind,
            config,
            dir,
            key,
            ..
        } => {
            let last = key.rsplit('.').next().unwrap_or(key);
            let variable = last.to_ascii_uppercase().replace('-', "_");
            if !(names_program(&variable) || last == "runner" || last == "linker") {
                return Vec::new();
            }
            // cargo finds a program its configuration names by a path
            // from the directory that holds the `.cargo` directory, or
            // where it runs for a file the command line names.
            let (holding, base) = match kind {
                SettingFile::Named => (versions.running(config), dir.clone()),
                _ => (
                    versions.running(config),
                    config
                        .parent()
                        .and_then(Path::parent)
                        .map(Path::to_path_buf)
                        .unwrap_or_default(),
                ),
            };
            let Some(bytes) = holding else {
                return Vec::new();
            };
            return verifying_settings(*kind, &bytes)
                .into_iter()
                .filter(|setting| setting.key == *key)
                .filter_map(|setting| program_file(&setting.value, &base))
                .map(Target::File)
                .collect();
        }
        Target::Alias { dir, name, .. } => {
            let Some((_, words, _)) = versions.cargo_alias(versions.to, dir, name) else {
                return Vec::new();
            };
            // An alias that names itself is cargo's error, not a call.
            if words.first() == Some(name) {
                return Vec::new();
            }
            let command: Vec<String> = std::iter::once("cargo".to_string()).chain(words).collect();
            return targets_of(&command, dir, versions);
        }
        Target::Script { manifest, name } => {
            let running = versions.running(manifest);
            let Some((script, _)) = script_of(running.as_deref(), name) else {
                return Vec::new();
            };
            let at = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
            (script, at)
        }
        Target::File(file) => {
            let Some(bytes) = versions.running(file) else {
                return Vec::new();
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let first = text.lines().next().unwrap_or_default();
            let extension = file
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or_default();
            let shell = ["sh", "bash"].contains(&extension)
                || (first.starts_with("#!")
                    && ["sh", "bash", "dash", "zsh", "ksh"]
                        .iter()
                        .any(|shell| first.split(['/', ' ']).any(|word| word == *shell)));
            let text = if shell {
                text
            } else if name.eq_ignore_ascii_case("makefile") || name == "GNUmakefile" {
                included = makefile_includes(&text, dir);
                per_line = true;
                // A recipe line starts with a tab; `@`, `-` and `+` before
                // its command are make's own. The other lines are left
                // blank, so that a line named is the Makefile's.
                text.lines()
                    .map(|line| {
                        line.strip_prefix('\t')
                            .map_or("", |line| line.trim_start_matches(['@', '-', '+']))
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                return Vec::new();
            };
            (text, dir.to_path_buf())
        }
    };
    let mut found: Vec<Target> = included.into_iter().map(Target::File).collect();
    let commands = commands_in(&text, &dir, per_line);
    for lost in commands.lost {
        versions.uncompared(Uncompared::Cd {
            within: Some(target.clone()),
            lost,
        });
    }
    found.extend(
        commands
            .found
            .iter()
            .flat_map(|(words, dir)| targets_of(words, dir, versions)),
    );
    found
}

/// `path` (relative to the root) with `.` and `..` worked out, unless it
/// leaves the root or is the root itself.
fn inside_root(path: &Path) -> Option<PathBuf> {
    within_root(path).filter(|inside| !inside.as_os_str().is_empty())
}

/// `path` (relative to the root) with `.` and `..` worked out, empty for
/// the root itself, unless it leaves the root.
fn within_root(path: &Path) -> Option<PathBuf> {
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
    Some(out)
}

/// The text a shell runs when `argv` is `sh -c TEXT` (or another shell,
/// its options before `-c` and with it, as `bash -ec`).
fn shell_text(argv: &[String]) -> Option<&str> {
    const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh"];
    let (program, rest) = argv.split_first()?;
    let base = program.rsplit('/').next().unwrap_or(program);
    if !SHELLS.contains(&base) {
        return None;
    }
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        let flags = word.strip_prefix('-').filter(|flags| !flags.is_empty())?;
        if flags.contains('c') && !flags.starts_with('-') {
            return words.next().map(String::as_str);
        }
        // `-o pipefail` takes the next word.
        if flags == "o" {
            words.next();
        }
    }
    None
}

/// What the command of `spec` runs of the repository, and what that runs
/// in turn, one level down (a script the command's script calls by path,
/// a script `npm run` names in another): each with what runs it. Deeper
/// calls are not followed: a gate that must vouch for them names them
/// itself.
fn runs_of(spec: &config::CheckSpec, versions: &Versions<'_>) -> Vec<(Target, Option<Target>)> {
    let dir = spec
        .cwd
        .as_deref()
        .and_then(inside_root)
        .unwrap_or_default();
    // A shell's text (`shell = true`, or `sh -c TEXT`) is followed
    // command by command, through its `cd`s.
    let text = match &spec.command {
        config::CommandLine::Argv(argv) => shell_text(argv),
        config::CommandLine::Shell(script) => Some(script.as_str()),
    };
    let commands = match (text, &spec.command) {
        (Some(text), _) => {
            let commands = commands_in(text, &dir, false);
            for lost in commands.lost {
                versions.uncompared(Uncompared::Cd { within: None, lost });
            }
            commands.found
        }
        (None, config::CommandLine::Argv(argv)) => vec![(argv.clone(), dir.clone())],
        (None, config::CommandLine::Shell(_)) => Vec::new(),
    };
    let mut found: Vec<(Target, Option<Target>)> = Vec::new();
    // A program the check's own `env` names (`RUSTC_WRAPPER =
    // "ci/wrap.sh"`) is the gate's choice, but the file is the branch's.
    for (variable, value) in &spec.env {
        if names_program(variable) {
            let value = toml::Value::String(value.clone());
            found.extend(program_file(&value, &dir).map(|file| (Target::File(file), None)));
        }
    }
    for (words, dir) in &commands {
        for target in targets_of(words, dir, versions) {
            let called = called_by(&target, dir, versions);
            found.push((target.clone(), None));
            found.extend(called.into_iter().map(|one| (one, Some(target.clone()))));
        }
    }
    let mut seen = Vec::new();
    found.retain(|(target, _)| {
        let new = !seen.contains(target);
        seen.push(target.clone());
        new
    });
    found
}

/// The checks among `specs` that run (`planned` is theirs, in order) whose
/// command runs something of the repository that `--config-from-ref spec`
/// does not vouch for: changed by the branch, or added by it. What runs
/// is `to`'s version (the commit a range or a commit run checks), else
/// the work tree's; what the branch left as it found it at its merge base
/// with `spec` is vouched for, even when `spec` has moved on since. What a
/// check runs that could not be compared is said in `notes`.
pub(super) fn unvouched(
    root: &Path,
    spec: &str,
    to: Option<&str>,
    specs: &[&config::CheckSpec],
    planned: &[Result<crate::runner::CheckPlan, crate::gate::SkipReason>],
    clippy_conf_dir: Option<&std::ffi::OsStr>,
    notes: &mut Vec<String>,
) -> Vec<Unvouched> {
    let versions = Versions {
        root,
        spec,
        to,
        base: crate::git::merge_base(root, spec, to.unwrap_or("HEAD")),
        read: std::cell::RefCell::default(),
        differing: std::cell::OnceCell::new(),
        uncompared: std::cell::RefCell::default(),
        packages: std::cell::RefCell::default(),
        unfetched: std::cell::RefCell::default(),
        own_clippy_conf_dir: clippy_conf_dir.map(PathBuf::from),
        env: std::cell::RefCell::default(),
    };
    let mut found = Vec::new();
    for (check, _) in specs.iter().zip(planned).filter(|(_, plan)| plan.is_ok()) {
        // The check's own `env` wins over phasegate's, as it does for
        // the child.
        versions.env.replace(ToolEnv {
            clippy_conf_dir: check
                .env
                .get("CLIPPY_CONF_DIR")
                .map(PathBuf::from)
                .or_else(|| versions.own_clippy_conf_dir.clone()),
            eslint_flat: check.env.get("ESLINT_USE_FLAT_CONFIG").cloned(),
        });
        // A toolchain the check's own environment names is rustup's
        // choice over any toolchain file.
        let toolchain_set = check.env.contains_key("RUSTUP_TOOLCHAIN");
        let runs = runs_of(check, &versions);
        for (target, via) in runs {
            if toolchain_set
                && matches!(
                    target,
                    Target::Setting {
                        kind: SettingFile::Toolchain,
                        ..
                    }
                )
            {
                continue;
            }
            versions.unfetched.take();
            let differs = differing(&target, &versions);
            // What could not be read is neither the branch's nor the
            // target's: a file the clone lacks is not one the target has
            // not. Said, never taken for an added or removed file.
            let unfetched = versions.unfetched.take();
            let running_unread = unfetched
                .iter()
                .any(|one| Some(one.commit.as_str()) == versions.to);
            if !unfetched.is_empty() && (differs.is_some() || running_unread) {
                for file in unfetched {
                    let commit = if file.commit == spec {
                        format!("`{spec}` (--config-from-ref)")
                    } else if Some(file.commit.as_str()) == versions.base.as_deref() {
                        format!("the commit the branch left `{spec}` at (`{}`)", file.commit)
                    } else {
                        format!("`{}`", file.commit)
                    };
                    versions.uncompared(Uncompared::Unfetched { file, commit });
                }
                continue;
            }
            let Some(mut one) = differs else {
                continue;
            };
            one.check.clone_from(&check.name);
            one.via = via.as_ref().map(Target::describe);
            found.push(one);
        }
        notes.extend(
            versions
                .uncompared
                .take()
                .iter()
                .map(|one| one.note(&check.name, spec)),
        );
    }
    found
}

/// `target`, when the version that runs is not one that vouches for it.
/// A file or script that is not there fails the check by itself.
fn differing(target: &Target, versions: &Versions<'_>) -> Option<Unvouched> {
    if let Target::Setting {
        kind,
        dir,
        key,
        named,
        ..
    } = target
    {
        let from = match kind {
            SettingFile::Named => Some(named.as_deref()?),
            _ => None,
        };
        return differing_setting(target, *kind, (dir, from), key, versions);
    }
    if let Target::Config { file, section, .. } = target {
        return differing_config(target, file, *section, versions);
    }
    let file = target.file();
    // A finding names its file as text.
    file.to_str()?;
    let line = match target {
        // A file is compared with the links to it followed: another
        // file, a retargeted link or a link out of the repository (what
        // it runs is no file of the repository to vouch for) differs.
        Target::File(_) => {
            let runs = versions.resolve(versions.to, file);
            if runs == Resolved::Missing
                || versions
                    .vouchers()
                    .iter()
                    .any(|spec| versions.resolve(Some(spec), file) == runs)
            {
                return None;
            }
            None
        }
        Target::Script { name, .. } => {
            let runs = versions.running(file)?;
            let vouching = versions.vouching(file);
            let (text, line) = script_of(Some(&runs), name)?;
            let same = |version: &Option<Vec<u8>>| {
                script_of(version.as_deref(), name).is_some_and(|(theirs, _)| theirs == text)
            };
            if vouching.iter().any(same) {
                return None;
            }
            line
        }
        // Compared by `differing_setting` and `differing_config`, above.
        Target::Setting { .. } | Target::Config { .. } => return None,
        // What counts is the alias cargo finds, in whichever file: moved
        // to another file unchanged, it still runs the same.
        Target::Alias { dir, name, .. } => {
            let (_, words, line) = versions.cargo_alias(versions.to, dir, name)?;
            let same = |spec: &&str| {
                versions
                    .cargo_alias(Some(spec), dir, name)
                    .is_some_and(|(_, theirs, _)| theirs == words)
            };
            if versions.vouchers().iter().any(same) {
                return None;
            }
            line
        }
    };
    Some(Unvouched {
        check: String::new(),
        target: target.clone(),
        line,
        via: None,
        change: Change::Changed,
    })
}

/// A tool's configuration `file` (or its `section`), when the version
/// that runs holds it otherwise than every version that vouches for it:
/// changed, added, or taken out (the tool then runs with its defaults,
/// or another file's). It points at the section's line, or at the first
/// line of the file that is not as the target branch has it.
fn differing_config(
    target: &Target,
    file: &Path,
    section: Option<&tools::Section>,
    versions: &Versions<'_>,
) -> Option<Unvouched> {
    // A finding names its file as text.
    file.to_str()?;
    let runs = versions.config_in(versions.to, file, section);
    if versions
        .vouchers()
        .iter()
        .any(|spec| versions.config_in(Some(spec), file, section) == runs)
    {
        return None;
    }
    let theirs = versions.config_in(Some(versions.spec), file, section);
    let change = match (&runs, &theirs) {
        (Held::Missing, _) => Change::Removed,
        (_, Held::Missing) => Change::Added,
        _ => Change::Changed,
    };
    let line = match (&runs, &theirs) {
        (Held::Section(_, line), _) => *line,
        (
            Held::Whole(Resolved::File { bytes, .. }),
            Held::Whole(Resolved::File { bytes: before, .. }),
        ) => first_changed_line(bytes, before),
        _ => None,
    };
    Some(Unvouched {
        check: String::new(),
        target: target.clone(),
        line,
        via: None,
        change,
    })
}

/// The setting `key` of the files of `kind` cargo run in `dir` reads,
/// when its values there (nearest file first: cargo lets the nearest
/// decide, and joins lists of flags) are not those of a version that
/// vouches for it; for a file the command names (`from`), in that file
/// and the files it includes. Moved to another file unchanged, it
/// verifies the same.
/// A setting the branch removed differs too (a `runner` that ran the tests
/// under a checker), with no line to point at.
fn differing_setting(
    target: &Target,
    kind: SettingFile,
    (dir, from): (&Path, Option<&Path>),
    key: &str,
    versions: &Versions<'_>,
) -> Option<Unvouched> {
    let values = |spec: Option<&str>| {
        let read = match from {
            // A file the command names is that file, wherever it is.
            Some(file) => versions
                .at(spec, file)
                .map(|bytes| versions.with_includes(spec, kind, file.to_path_buf(), &bytes))
                .unwrap_or_default(),
            None => versions.settings(spec, dir, kind),
        };
        read.into_iter()
            .flat_map(|(_, settings)| settings)
            .filter(|setting| setting.key == key)
            .collect::<Vec<_>>()
    };
    let running = values(versions.to);
    let same = |spec: &&str| {
        values(Some(spec))
            .iter()
            .map(|setting| &setting.value)
            .eq(running.iter().map(|setting| &setting.value))
    };
    if versions.vouchers().iter().any(same) {
        return None;
    }
    Some(Unvouched {
        check: String::new(),
        target: target.clone(),
        line: running.first().and_then(|setting| setting.line),
        via: None,
        change: Change::Changed,
    })
}

impl Target {
    /// The file it is in, relative to the repository root.
    fn file(&self) -> &Path {
        match self {
            Target::File(file) | Target::Config { file, .. } => file,
            Target::Script { manifest, .. } => manifest,
            Target::Alias { config, .. } | Target::Setting { config, .. } => config,
        }
    }

    /// How a message names it.
    fn describe(&self) -> String {
        match self {
            Target::File(file) => format!("`{}`", file.display()),
            Target::Script { manifest, name } => {
                format!("the `{name}` script of `{}`", manifest.display())
            }
            Target::Alias { config, name, .. } => {
                format!("the cargo alias `{name}` of `{}`", config.display())
            }
            Target::Setting {
                kind: SettingFile::Cargo,
                config,
                key,
                ..
            } => format!("the cargo setting `{key}` of `{}`", config.display()),
            Target::Setting {
                kind: SettingFile::Named,
                config,
                key,
                ..
            } => format!(
                "the cargo setting `{key}` of `{}` (named by `--config`)",
                config.display()
            ),
            Target::Setting {
                kind: SettingFile::Toolchain,
                config,
                key,
                ..
            } => format!("the toolchain setting `{key}` of `{}`", config.display()),
            Target::Config {
                file,
                section,
                extended_by,
                ..
            } => {
                let what = match section {
                    Some(section) => format!("{} of `{}`", section.shown, file.display()),
                    None => format!("`{}`", file.display()),
                };
                match extended_by {
                    Some(by) => format!("{what} (which `{}` extends)", by.display()),
                    None => what,
                }
            }
        }
    }

    /// A change to it that would make its check pass whatever the code.
    fn weakening(&self) -> &'static str {
        match self {
            Target::File(_) | Target::Script { .. } | Target::Alias { .. } => "an `exit 0`",
            Target::Setting {
                kind: SettingFile::Cargo | SettingFile::Named,
                ..
            } => "a `runner = \"true\"`",
            Target::Setting {
                kind: SettingFile::Toolchain,
                ..
            } => "a toolchain of the branch's own",
            Target::Config { .. } => "a rule or a check turned off",
        }
    }
}

impl Unvouched {
    /// What differs, as a message names it: the file, or the script of it.
    fn what(&self) -> String {
        let what = self.target.describe();
        match &self.via {
            Some(via) => format!("{what} (through {via})"),
            None => what,
        }
    }

    /// What to merge on its own first.
    fn change(&self) -> String {
        format!("the change to {}", self.target.describe())
    }

    /// What the check runs that differs, and how, from `spec`'s version.
    fn head(&self, spec: &str) -> String {
        let Target::Config { tool, .. } = &self.target else {
            return format!(
                "check `{}` runs {}, which differs from its version in `{spec}`",
                self.check,
                self.what()
            );
        };
        let via = self
            .via
            .as_ref()
            .map(|via| format!(" (through {via})"))
            .unwrap_or_default();
        let config = self.target.describe();
        let how = match self.change {
            Change::Changed => format!("{config} differs from its version in `{spec}`"),
            Change::Added => format!("{config} is the branch's own (`{spec}` has none)"),
            Change::Removed => format!("{config} was removed by the branch (`{spec}` has it)"),
        };
        format!(
            "check `{}` runs `{tool}`{via}, whose configuration {how}",
            self.check
        )
    }

    /// What the run says of it, naming the ref whose gate it runs under.
    fn message(&self, spec: &str) -> String {
        let head = self.head(spec);
        let weakening = self.target.weakening();
        if let Target::Config { .. } = self.target {
            return format!(
                "{head}: --config-from-ref took the gate's configuration from `{spec}`, but what the tool reads is the branch's, and a change to it ({weakening}) changes what the check verifies; merge such a change into `{spec}` on its own first, or have it reviewed (`--profile strict` blocks it)"
            );
        }
        format!(
            "{head}: --config-from-ref took the gate's configuration from `{spec}`, but this is the branch's, and a change to it ({weakening}) changes what the check verifies; have it reviewed, or run under `--profile strict` to block such a change"
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
            code: Some(crate::diagnostics::OwnCode::CommandFileChanged.to_string()),
            file: self.target.file().to_str().map(str::to_string),
            line: self.line,
            message: format!(
                "{}: under the strict profile a gate taken from `{spec}` (--config-from-ref) runs only what `{spec}` holds; merge {} on its own first, or run under another profile to let it through with a warning",
                self.head(spec),
                self.change()
            ),
            ..crate::diagnostics::Diagnostic::default()
        }
    }
}

/// Marks the checks that ran something the branch changed (`unvouched`):
/// each such check warns (what it ran is named in a warning finding, not
/// again in a note: a report would say it twice), the summary shows it as
/// it shows every warning, and a run that passed is `warned`. Under the strict profile they were findings that
/// failed the run already (`Unvouched::finding`). `summary_limit` is the
/// configuration's.
pub(super) fn warn_unvouched(
    spec: &str,
    profile: Profile,
    unvouched: &[Unvouched],
    summary_limit: usize,
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
        verdict.diagnostics.push(crate::diagnostics::Diagnostic {
            severity: crate::diagnostics::Severity::Warning,
            message: one.message(spec),
            ..one.finding(spec)
        });
    }
    if verdict.status == crate::gate::Status::Passed {
        verdict.status = crate::gate::Status::Warned;
    }
    // The summary was made before these warnings: made again, it ranks
    // them with the others, by their checks' new effect.
    verdict.summary = crate::gate::summarize(&verdict.diagnostics, &verdict.checks, summary_limit);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        shell_commands(text)
            .into_iter()
            .map(|command| command.words)
            .collect()
    }

    #[test]
    fn shell_text_is_cut_into_the_commands_it_runs() {
        assert_eq!(
            words("set -e # strict\nFOO=1 ./a.sh && bash b.sh | tee x; x=$(./c.sh)\n# ./d.sh\nnpm \\\n run lint"),
            [
                vec!["set", "-e"],
                vec!["FOO=1", "./a.sh"],
                vec!["bash", "b.sh"],
                vec!["tee", "x"],
                vec!["./c.sh"],
                vec!["x=$(…)"],
                vec!["npm", "run", "lint"],
            ]
        );
        let first = &words("then exec ./run.sh")[0];
        assert_eq!(from_program(first), ["./run.sh"]);
    }

    #[test]
    fn the_script_a_package_manager_runs_is_named_as_each_spells_it() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            ("npm", &["test"], Some("test")),
            ("npm", &["t"], Some("test")),
            ("npm", &["run", "lint"], Some("lint")),
            ("npm", &["run-script", "build"], Some("build")),
            ("npm", &["install"], None),
            // npm runs no script named as its subcommand.
            ("npm", &["lint"], None),
            ("pnpm", &["lint"], Some("lint")),
            ("pnpm", &["install"], None),
            ("yarn", &["test"], Some("test")),
            ("yarn", &["build"], Some("build")),
            ("pnpm", &["build"], Some("build")),
            ("bun", &["run", "build"], Some("build")),
            // bun's own test runner and bundler.
            ("bun", &["test"], None),
            ("bun", &["build"], None),
            ("bun", &["dev"], Some("dev")),
        ];
        for (manager, plain, expected) in cases {
            assert_eq!(
                package_script(manager, plain),
                *expected,
                "{manager} {plain:?}"
            );
        }
    }

    #[test]
    fn a_script_is_found_on_its_line_of_package_json() {
        let text = b"{\n  \"name\": \"test\",\n  \"scripts\": {\n    \"lint\": \"eslint .\",\n    \"test\": \"jest\"\n  }\n}\n";
        assert_eq!(
            script_of(Some(text), "test"),
            Some(("jest".to_string(), Some(5)))
        );
        assert_eq!(script_of(Some(text), "build"), None);
        assert_eq!(script_of(Some(b"{ not json"), "test"), None);
    }

    #[test]
    fn a_cd_moves_the_commands_after_it_in_its_shell_only() {
        let dirs = |text: &str, per_line| {
            commands_in(text, Path::new("web"), per_line)
                .found
                .into_iter()
                .map(|(words, dir)| (words[0].clone(), dir.display().to_string()))
                .collect::<Vec<_>>()
        };
        let script = "cd sub && cargo test\n(cd .. && a)\nb\npushd ../x; d; popd; e\ncd -P ../..; f\ncd ..; g\ncd -; h";
        let found = dirs(script, false);
        let expected = [
            ("cargo", "web/sub"),
            ("a", "web"),
            ("b", "web/sub"),
            ("d", "web/x"),
            ("e", "web/sub"),
            ("f", ""),
            ("h", ""),
        ];
        assert_eq!(
            found,
            expected.map(|(word, dir)| (word.to_string(), dir.to_string()))
        );
        // make runs each line of a recipe in a shell of its own.
        assert_eq!(
            dirs("cd sub && a \\\n  && b\nc", true),
            [("a", "web/sub"), ("b", "web/sub"), ("c", "web")]
                .map(|(word, dir)| (word.to_string(), dir.to_string()))
        );
        // `cd -` goes back; a `cd` in a command substitution stays in it.
        assert_eq!(
            dirs(
                "cd a; cd ../b; cd -; x\nD=$(cd c && pwd); y\nE=`cd d`; z",
                false
            ),
            [
                ("x", "web/a"),
                ("pwd", "web/a/c"),
                ("D=$(…)", "web/a"),
                ("y", "web/a"),
                ("E=$(…)", "web/a"),
                ("z", "web/a")
            ]
            .map(|(word, dir)| (word.to_string(), dir.to_string()))
        );
    }

    #[test]
    fn a_cd_phasegate_cannot_follow_hides_what_runs_after_it_and_says_where() {
        let script =
            "cd \"$X\"\necho here\n./test.sh\n(cd ..; ./a.sh)\ncd -\n./b.sh\ncd\ncargo test";
        let commands = commands_in(script, Path::new("web"), false);
        let found: Vec<_> = commands
            .found
            .iter()
            .map(|(words, _)| words.join(" "))
            .collect();
        // `cd -` brings back the directory before the lost one.
        assert_eq!(found, ["./b.sh"]);
        let lost: Vec<_> = commands
            .lost
            .iter()
            .map(|lost| (lost.text.as_str(), lost.line, lost.skipped.as_deref()))
            .collect();
        // `echo` runs nothing of the repository: `./test.sh` is named.
        assert_eq!(
            lost,
            [
                ("cd $X", 1, Some("./test.sh")),
                ("cd", 7, Some("cargo test"))
            ]
        );
        // A lost `cd` after which nothing of the repository runs is no news.
        assert!(commands_in("cd \"$X\" && echo ok", Path::new(""), false)
            .lost
            .is_empty());
        assert_eq!(
            shell_text(&["bash".into(), "-euc".into(), "cd x".into()]),
            Some("cd x")
        );
        assert_eq!(shell_text(&["sh".into(), "script.sh".into()]), None);
        assert_eq!(
            shell_text(&["python3".into(), "-c".into(), "x".into()]),
            None
        );
    }

    #[test]
    fn a_cargo_configuration_includes_files_from_its_own_directory() {
        let text = b"include = [\"ci.toml\", { path = \"../ci/more.toml\", optional = true }, \"../../out.toml\"]\n";
        assert_eq!(
            cargo_includes(text, Path::new(".cargo/config.toml")),
            [
                PathBuf::from(".cargo/ci.toml"),
                PathBuf::from("ci/more.toml")
            ]
        );
        assert!(
            cargo_includes(b"include = \"ci.toml\"\n", Path::new(".cargo/config.toml")).is_empty()
        );
    }

    #[test]
    fn a_makefile_includes_the_files_its_include_lines_name_from_where_make_runs() {
        let text = "include a.mk ../b.mk\n-include  ./c.mk # optional\nsinclude d.mk\n\tinclude not-a-line.mk\ninclude $(wildcard *.mk)\nincluded: x\n";
        assert_eq!(
            makefile_includes(text, Path::new("sub")),
            [
                PathBuf::from("sub/a.mk"),
                PathBuf::from("b.mk"),
                PathBuf::from("sub/c.mk"),
                PathBuf::from("sub/d.mk"),
            ]
        );
    }

    #[test]
    fn a_cargo_alias_is_read_as_cargo_splits_it_with_its_line() {
        let config = b"[build]\njobs = 2\n\n[alias]\nxt = \"run -p xtask --\"\n\"ci-lint\" = [\"clippy\", \"--all\"]\n";
        assert_eq!(
            alias_of(config, "xt"),
            Some((
                vec!["run".into(), "-p".into(), "xtask".into(), "--".into()],
                Some(5)
            ))
        );
        assert_eq!(
            alias_of(config, "ci-lint"),
            Some((vec!["clippy".into(), "--all".into()], Some(6)))
        );
        assert_eq!(alias_of(config, "x"), None);
        assert_eq!(
            alias_of(b"alias.t = \"version\"\n", "t").map(|a| a.1),
            Some(Some(1))
        );
        let words = |text: &str| text.split(' ').map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            cargo_subcommand(&words("+nightly --config a=b -q xt --x")),
            Some("xt")
        );
        assert_eq!(
            cargo_subcommand(&words("-Z unstable-options -C sub lint")),
            Some("lint")
        );
        assert_eq!(cargo_subcommand(&words("--version")), None);
    }

    #[test]
    fn the_settings_that_change_what_cargo_verifies_are_read_with_their_lines() {
        let config = b"[build]\njobs = 4\ntarget-dir = \"out\"\nrustflags = [\"-A\", \"warnings\"]\n\n[term]\ncolor = \"never\"\n\n[env]\nINSTA_FORCE_PASS = \"1\"\n\n[target.'cfg(unix)']\nrunner = \"true\"\n\n[alias]\nt = \"test\"\n";
        let found: Vec<_> = verifying_settings(SettingFile::Cargo, config)
            .into_iter()
            .map(|setting| (setting.key, setting.line))
            .collect();
        assert_eq!(
            found,
            [
                ("build.rustflags".to_string(), Some(4)),
                ("env.INSTA_FORCE_PASS".to_string(), Some(10)),
                ("target.'cfg(unix)'.runner".to_string(), Some(13)),
            ]
        );
        assert!(verifying_settings(SettingFile::Cargo, b"not toml [").is_empty());
        let toolchain = b"[toolchain]\ncomponents = [\"clippy\"]\npath = \"tools/rust\"\n";
        let found = verifying_settings(SettingFile::Toolchain, toolchain);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].key.as_str(), found[0].line),
            ("toolchain.path", Some(3))
        );
        let legacy = verifying_settings(SettingFile::Toolchain, b"nightly-2024-01-01\n");
        assert_eq!(
            legacy[0].value,
            toml::Value::String("nightly-2024-01-01".to_string())
        );
    }

    #[test]
    fn a_file_a_tool_reads_below_where_it_runs_is_found_among_the_paths_that_differ() {
        let tool = |name: &str| tools::TOOLS.iter().find(|t| t.name == name).unwrap();
        let paths: Vec<PathBuf> = [
            "ruff.toml",
            "app/ruff.toml",
            "app/pkg/ruff.toml",
            "app/pkg/pyproject.toml",
            "app/pkg/setup.cfg",
            "application/ruff.toml",
            "other/.ruff.toml",
        ]
        .map(PathBuf::from)
        .to_vec();
        let found = |name: &str, dir: &str| {
            files_below(tool(name), Path::new(dir), &paths, false)
                .into_iter()
                .map(|(file, section)| (file.display().to_string(), section.map(|s| s.shown)))
                .collect::<Vec<_>>()
        };
        // In `app`, its own file is found from `app` up; the ones under it
        // are found here, a shared file by the section ruff reads.
        assert_eq!(
            found("ruff", "app"),
            [
                ("app/pkg/ruff.toml".to_string(), None),
                ("app/pkg/pyproject.toml".to_string(), Some("[tool.ruff]")),
            ]
        );
        assert_eq!(found("ruff", "").len(), 5);
        // mypy takes one configuration for the whole run.
        assert!(found("mypy", "").is_empty());
    }

    #[test]
    fn a_path_that_leaves_the_repository_or_is_not_plain_is_none_of_its_files() {
        assert_eq!(
            repository_path(Path::new("web"), "../scripts/t.sh"),
            Some(PathBuf::from("scripts/t.sh"))
        );
        assert_eq!(repository_path(Path::new(""), "../t.sh"), None);
        assert_eq!(repository_path(Path::new(""), "/bin/sh"), None);
        assert_eq!(repository_path(Path::new(""), "$DIR/t.sh"), None);
    }
}
