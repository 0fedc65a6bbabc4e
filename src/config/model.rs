//! The validated configuration: what the rest of phasegate reads. A value of
//! these types only exists after `config::load` checked it, so nothing
//! downstream re-validates names, durations, globs or regexes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use globset::GlobSet;
use regex::Regex;
use serde::Serialize;

/// How strictly failures that are not plain check failures are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Every tier blocks and every `warn` becomes `block`.
    Strict,
    /// Fail closed, with `on_missing` deciding what a missing tool means.
    #[default]
    Auto,
    /// Fail open: missing tools are skipped, timeouts and crashes only warn.
    Fast,
}

impl Profile {
    pub const NAMES: [&'static str; 3] = ["strict", "auto", "fast"];

    pub fn parse(name: &str) -> Option<Profile> {
        match name {
            "strict" => Some(Profile::Strict),
            "auto" => Some(Profile::Auto),
            "fast" => Some(Profile::Fast),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::Auto => "auto",
            Profile::Fast => "fast",
        }
    }
}

/// What a failing check does to the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    #[default]
    Block,
    Warn,
    /// The check is disabled: it does not run.
    Skip,
}

impl OnFailure {
    pub const NAMES: [&'static str; 3] = ["block", "warn", "skip"];

    pub fn parse(name: &str) -> Option<OnFailure> {
        match name {
            "block" => Some(OnFailure::Block),
            "warn" => Some(OnFailure::Warn),
            "skip" => Some(OnFailure::Skip),
            _ => None,
        }
    }
}

/// What a missing executable means under the `auto` profile (tier 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnMissing {
    /// The verdict is `incomplete` and blocks.
    #[default]
    Block,
    /// The check is reported as missing and the verdict only warns.
    Warn,
    /// The check is skipped, noted in the verdict.
    Skip,
}

impl OnMissing {
    pub const NAMES: [&'static str; 3] = ["block", "warn", "skip"];

    pub fn parse(name: &str) -> Option<OnMissing> {
        match name {
            "block" => Some(OnMissing::Block),
            "warn" => Some(OnMissing::Warn),
            "skip" => Some(OnMissing::Skip),
            _ => None,
        }
    }
}

/// Where a diagnostic comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord, Hash, Default)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Test,
    Lint,
    Build,
    Typecheck,
    #[default]
    Runtime,
}

impl Origin {
    pub const NAMES: [&'static str; 5] = ["test", "lint", "build", "typecheck", "runtime"];

    pub fn parse(name: &str) -> Option<Origin> {
        match name {
            "test" => Some(Origin::Test),
            "lint" => Some(Origin::Lint),
            "build" => Some(Origin::Build),
            "typecheck" => Some(Origin::Typecheck),
            "runtime" => Some(Origin::Runtime),
            _ => None,
        }
    }

    /// The origin a check implies by its conventional name.
    pub fn for_check_name(name: &str) -> Origin {
        match name {
            "tests" | "test" => Origin::Test,
            "lint" | "fmt" | "format" | "docs" => Origin::Lint,
            "build" => Origin::Build,
            "typecheck" | "check" => Origin::Typecheck,
            _ => Origin::Runtime,
        }
    }
}

/// How a check's command was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// The command comes from `[commands]` (or the detected default) by name.
    Code,
    /// The check has its own `command`.
    Custom,
    /// An external reviewer that answers with one JSON object.
    Verifier,
}

/// A command line as configured: split into argv, or handed to `sh -c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    /// Split with shell-like quoting rules, run without a shell.
    Argv(Vec<String>),
    /// Run as `sh -c <script>` (`shell = true`).
    Shell(String),
}

/// Which parser turns a check's output into diagnostics.
#[derive(Debug, Clone)]
pub enum ParserChoice {
    /// Chosen from the program name and the output.
    Auto,
    /// A parser by name (`generic`, `none`, a tool family).
    Named(String),
    /// A custom regex with at least the named groups `file` and `line`.
    Regex(Regex),
}

/// A place in a configuration file, for diagnostics that point back at it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigLocation {
    /// The file, relative to the repository root (`phasegate.toml`).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// One configured check, validated.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    pub name: String,
    pub kind: CheckKind,
    pub command: CommandLine,
    /// The globs as written, for display.
    pub files: Vec<String>,
    /// The compiled `files` globs; `None` when the check has no filter.
    pub file_filter: Option<FileFilter>,
    pub timeout: Duration,
    pub env: BTreeMap<String, String>,
    /// Relative to the repository root.
    pub cwd: Option<PathBuf>,
    pub parser: ParserChoice,
    pub origin: Origin,
    pub on_failure: OnFailure,
    pub on_missing: OnMissing,
    /// The changed-line filter, when the check sets one.
    pub filter: Option<Filter>,
    /// Where the check is defined, or `None` for the embedded default.
    pub location: Option<ConfigLocation>,
    /// Where its command is written: its own `command`, or the `[commands]`
    /// entry it takes. `None` for a command of the embedded default (the
    /// detected language's).
    pub command_location: Option<ConfigLocation>,
}

impl CheckSpec {
    /// A digest of everything that decides what the check does and how its
    /// result is read (not its name or place in the file): `resume` carries
    /// a pass over only while this stays the same. It is kept in
    /// `state.json` and compared by later runs, perhaps of a phasegate
    /// built by another compiler: so it is FNV-1a over the configuration's
    /// own words, never std's `DefaultHasher` or a `Debug` rendering,
    /// which Rust does not promise to keep between releases.
    pub fn fingerprint(&self) -> String {
        use std::os::unix::ffi::OsStrExt;
        /// An enum by the word the configuration writes it with (its
        /// serde name): a unit variant always serialises, in quotes.
        fn word<T: Serialize>(value: &T) -> String {
            serde_json::to_string(value)
                .unwrap_or_default()
                .trim_matches('"')
                .to_string()
        }
        let mut hash = crate::diagnostics::Fnv::default();
        // Each part ends with 0xff, a byte UTF-8 text never holds; each
        // list is preceded by its length, so no two configurations run
        // together into the same bytes.
        let mut part = |bytes: &[u8]| {
            hash.write(bytes);
            hash.write(&[0xff]);
        };
        part(word(&self.kind).as_bytes());
        match &self.command {
            CommandLine::Argv(argv) => {
                part(b"argv");
                part(argv.len().to_string().as_bytes());
                for arg in argv {
                    part(arg.as_bytes());
                }
            }
            CommandLine::Shell(script) => {
                part(b"shell");
                part(script.as_bytes());
            }
        }
        part(self.files.len().to_string().as_bytes());
        for glob in &self.files {
            part(glob.as_bytes());
        }
        part(self.timeout.as_nanos().to_string().as_bytes());
        part(self.env.len().to_string().as_bytes());
        for (key, value) in &self.env {
            part(key.as_bytes());
            part(value.as_bytes());
        }
        match &self.cwd {
            Some(cwd) => {
                part(b"cwd");
                part(cwd.as_os_str().as_bytes());
            }
            None => part(b"no cwd"),
        }
        match &self.parser {
            ParserChoice::Auto => part(b"auto"),
            ParserChoice::Named(name) => {
                part(b"named");
                part(name.as_bytes());
            }
            ParserChoice::Regex(regex) => {
                part(b"regex");
                part(regex.as_str().as_bytes());
            }
        }
        part(word(&self.origin).as_bytes());
        part(word(&self.on_failure).as_bytes());
        part(word(&self.on_missing).as_bytes());
        match self.filter {
            Some(filter) => part(word(&filter).as_bytes()),
            None => part(b"no filter"),
        }
        format!("{:016x}", hash.finish())
    }
}

/// A phase: the checks that run in it.
#[derive(Debug, Clone, Default)]
pub struct Phase {
    pub checks: Vec<CheckSpec>,
}

/// A workflow replaces the checks of some phases.
#[derive(Debug, Clone, Default)]
pub struct Workflow {
    pub phases: BTreeMap<String, Phase>,
}

/// How a staged run shows the checks the staged content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// In the work tree: unstaged changes are set aside and put back.
    #[default]
    Worktree,
    /// In a temporary checkout of the index; the work tree is never touched
    /// (but holds no build caches or untracked files).
    Snapshot,
}

impl Isolation {
    pub const NAMES: [&'static str; 2] = ["worktree", "snapshot"];

    pub fn parse(name: &str) -> Option<Isolation> {
        match name {
            "worktree" => Some(Isolation::Worktree),
            "snapshot" => Some(Isolation::Snapshot),
            _ => None,
        }
    }
}

/// Which diagnostics count as the change's own: the rest are marked
/// pre-existing (never dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Filter {
    /// On lines the change added or modified.
    Added,
    /// Inside the diff's hunks, context lines included.
    DiffContext,
    /// In a file the change touched.
    File,
    /// Every diagnostic is the change's.
    Nofilter,
}

impl Filter {
    pub const NAMES: [&'static str; 4] = ["added", "diff_context", "file", "nofilter"];

    pub fn parse(name: &str) -> Option<Filter> {
        match name {
            "added" => Some(Filter::Added),
            "diff_context" => Some(Filter::DiffContext),
            "file" => Some(Filter::File),
            "nofilter" => Some(Filter::Nofilter),
            _ => None,
        }
    }

    /// The default for a check of `origin`: lint findings on lines the
    /// change never touched are not its fault, but a change breaks
    /// builds, types and tests on lines it never touched.
    pub fn default_for(origin: Origin) -> Filter {
        match origin {
            Origin::Lint => Filter::Added,
            _ => Filter::Nofilter,
        }
    }
}

/// `[gate]`.
#[derive(Debug, Clone)]
pub struct GateConfig {
    pub profile: Profile,
    pub default_phase: String,
    pub max_retries: u32,
    /// The workflow used when `--workflow` is not given.
    pub workflow: Option<String>,
    /// Parallel checks; `None` means the number of CPUs.
    pub jobs: Option<usize>,
    pub isolation: Isolation,
    /// Paths of the work tree (untracked: `node_modules`, `.venv`) linked
    /// into a temporary checkout, relative to the repository's root.
    pub snapshot_links: Vec<std::path::PathBuf>,
    /// How many distinct errors the verdict's summary lists.
    pub summary: usize,
    /// The changed-line filter for checks that set none.
    pub filter: Option<Filter>,
    /// Run directories kept under `.git/phasegate/runs/`.
    pub keep_runs: usize,
    /// The same errors failing this many runs in a row escalate.
    pub escalate_after: usize,
}

/// Globs read as .gitignore reads them: the last pattern that matches a
/// path decides, and a pattern written `!glob` leaves out what the ones
/// before it took in.
#[derive(Debug, Clone)]
pub struct FileFilter {
    set: GlobSet,
    /// Per glob of `set`, in order: whether its pattern is a `!` one.
    negated: Vec<bool>,
}

impl FileFilter {
    /// `set`'s globs in the order of their patterns, each with whether it
    /// leaves out.
    pub fn new(set: GlobSet, negated: Vec<bool>) -> FileFilter {
        FileFilter { set, negated }
    }

    /// A filter that matches nothing.
    pub fn empty() -> FileFilter {
        FileFilter::new(GlobSet::empty(), Vec::new())
    }

    pub fn is_match(&self, path: impl AsRef<std::path::Path>) -> bool {
        if !self.negated.contains(&true) {
            return self.set.is_match(path);
        }
        // GlobSet reports the indices of every glob that matches, in
        // order: the last one decides.
        self.set
            .matches(path)
            .last()
            .is_some_and(|&last| !self.negated.get(last).copied().unwrap_or(false))
    }
}

/// `[handoff]`.
#[derive(Debug, Clone)]
pub struct HandoffConfig {
    pub paths: Vec<String>,
    pub path_filter: FileFilter,
    /// Required checkpoints per stage, when overridden.
    pub checkpoints: BTreeMap<String, Vec<String>>,
    /// Checkpoint name → check name whose result verifies it.
    pub claims: BTreeMap<String, String>,
}

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum ConfigOrigin {
    /// `phasegate.toml` (and `phasegate.local.toml` when present).
    File { files: Vec<String> },
    /// No file: the embedded default for the detected language. In a
    /// monorepo, `language` also says which other code is not checked.
    Embedded { language: Option<String> },
}

/// The whole validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub origin: ConfigOrigin,
    pub gate: GateConfig,
    pub commands: BTreeMap<String, CommandLine>,
    pub phases: BTreeMap<String, Phase>,
    pub workflows: BTreeMap<String, Workflow>,
    pub handoff: HandoffConfig,
}

impl Config {
    /// The checks of `phase`, as the given workflow (if any) replaces them.
    /// `None` when the phase does not exist.
    pub fn checks_for(&self, phase: &str, workflow: Option<&str>) -> Option<&[CheckSpec]> {
        if let Some(flow) = workflow.and_then(|w| self.workflows.get(w)) {
            if let Some(p) = flow.phases.get(phase) {
                return Some(&p.checks);
            }
        }
        self.phases.get(phase).map(|p| p.checks.as_slice())
    }
}
