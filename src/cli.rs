//! The command line, as clap definitions only: no behaviour here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// An objective quality gate for work handed between AI agents and people.
#[derive(Debug, Parser)]
#[command(name = "phasegate", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the checks of a phase and print the verdict.
    Run(RunArgs),
    /// Detect the project's language and write a commented `phasegate.toml`.
    Init(InitArgs),
    /// Install phasegate as git hooks (pre-commit and pre-merge-commit by
    /// default).
    Install(InstallArgs),
    /// Remove phasegate's git hooks and put back the hooks they replaced.
    Uninstall(UninstallArgs),
    /// What an installed git hook calls: run the gate for that hook.
    Hook(HookArgs),
    /// Finish a killed run: bring back the unstaged changes it saved.
    Restore,
    /// Validate handoff documents, or tell an agent what to fix.
    #[command(subcommand)]
    Handoff(HandoffCommand),
    /// Turn a tool's output into diagnostics.
    #[command(subcommand)]
    Diagnostics(DiagnosticsCommand),
    /// Run again only what the last run left failed or incomplete (same
    /// phase, profile and files); its passes are carried over.
    Resume(ResumeArgs),
    /// Recent runs: time, verdict, phase, run id, failing checks.
    History(HistoryArgs),
    /// The intervention queue: what needs a person.
    Interventions(InterventionsArgs),
}

/// What `run` and `diagnostics parse` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A compact report for people.
    Human,
    /// JSON: the `phasegate/verdict/v1` verdict for `run`;
    /// `{"diagnostics": …, "dropped": N}` for `diagnostics parse`.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// JUnit XML, for CI test reports.
    Junit,
    /// GitHub Actions annotations (workflow commands).
    Github,
    /// GitLab Code Quality JSON.
    Codequality,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// strict | auto | fast (default: `PHASEGATE_PROFILE`, then the profile
    /// of the run resumed).
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// How many checks run at once (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// How many runs, newest first.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct InterventionsArgs {
    #[command(subcommand)]
    pub command: Option<InterventionsCommand>,
    #[arg(long, value_enum, default_value_t = Format::Human, global = true)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum InterventionsCommand {
    /// The open interventions (the default); `--all` adds the resolved ones.
    List {
        /// Resolved ones too.
        #[arg(long)]
        all: bool,
    },
    /// One intervention, whole.
    Show {
        /// The intervention's id (`iv-0003`), or its number (`3`, `iv-3`).
        id: String,
    },
    /// Mark an intervention resolved, saying how.
    Resolve {
        /// The intervention's id (`iv-0003`), or its number (`3`, `iv-3`).
        id: String,
        /// How it was resolved (kept with the record).
        #[arg(long)]
        note: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum DiagnosticsCommand {
    /// Parse a tool's output (a file, or standard input) into diagnostics.
    Parse {
        /// `auto` (the default: by the command when `--command` names it,
        /// else by the output's content), or a parser name.
        #[arg(long, default_value = "auto")]
        parser: String,
        /// The command that printed the output (`"cargo test"`), which
        /// `auto` goes by as it does for a check.
        #[arg(long, value_name = "COMMAND")]
        command: Option<String>,
        /// The directory the tool ran in: the paths it printed are relative
        /// to it (default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
        /// The output to parse; `-` or nothing for standard input.
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum HandoffCommand {
    /// Validate handoff documents (default: every tracked one under
    /// `[handoff] paths`); exit 1 when any is invalid.
    Validate {
        /// Documents to validate.
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Write the results of the newest run of a document's phase into its
    /// frontmatter (the checkpoints its checks verify, `handoff_ready`,
    /// `retry_count`, `last_failure`), changing nothing else.
    Stamp {
        /// The handoff document.
        path: PathBuf,
    },
    /// The "Validation Failed" feedback an agent reads before it retries.
    Feedback {
        /// The handoff document.
        path: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Which hook: pre-commit, pre-merge-commit or pre-push (repeatable;
    /// default pre-commit and pre-merge-commit).
    #[arg(long = "hook", value_name = "HOOK", value_parser = ["pre-commit", "pre-merge-commit", "pre-push"])]
    pub hooks: Vec<String>,
    /// Back up a hook kept from an earlier install instead of refusing.
    #[arg(long)]
    pub force: bool,
    /// When phasegate is not installed, stop the commit instead of letting
    /// it through with a warning.
    #[arg(long)]
    pub fail_closed: bool,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Which hook (repeatable; default: every one phasegate installs).
    #[arg(long = "hook", value_name = "HOOK", value_parser = ["pre-commit", "pre-merge-commit", "pre-push"])]
    pub hooks: Vec<String>,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The git hook: `pre-commit`, `pre-merge-commit` or `pre-push`.
    pub name: String,
    /// The arguments git passed to the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Output formats of the commands other than `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A compact report for people.
    Human,
    /// One JSON document on stdout, and nothing else: the verdict for
    /// `resume`, `{"handoffs": …}`, `{"runs": …}`, `{"interventions": …}`
    /// or `{"diagnostics": …, "dropped": N}` for the others.
    Json,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The phase whose checks run (default: `PHASEGATE_PHASE`, then the
    /// stage of the selected handoff documents, then `gate.default_phase`).
    #[arg(long, value_name = "PHASE")]
    pub phase: Option<String>,
    /// strict | auto | fast (default: `PHASEGATE_PROFILE`, then `gate.profile`).
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,
    /// A workflow whose phase definitions replace the defaults.
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    /// Run only this check (repeatable).
    #[arg(long = "check", value_name = "NAME")]
    pub checks: Vec<String>,
    /// Select every tracked file (default: the staged files; in CI, the pull
    /// or merge request's changes when they can be detected).
    #[arg(long, conflicts_with_all = ["files", "from_ref"])]
    pub all_files: bool,
    /// Select these files, relative to the current directory.
    /// (None without `--files`; empty when the files follow `--`.)
    #[arg(long, num_args = 0.., value_name = "FILE", conflicts_with = "from_ref")]
    pub files: Option<Vec<PathBuf>>,
    /// With `--files`: more files, named after `--` as git names them, so
    /// a name may begin with `-` (`--files -- -rf`).
    #[arg(last = true, value_name = "FILE")]
    pub after_dashes: Vec<PathBuf>,
    /// Select the files changed on `--to-ref` since its merge base with this.
    #[arg(long, value_name = "REF", requires = "to_ref")]
    pub from_ref: Option<String>,
    /// The end of the range (with `--from-ref`).
    #[arg(long, value_name = "REF", requires = "from_ref")]
    pub to_ref: Option<String>,
    /// Read `phasegate.toml` from this commit instead of the work tree (and
    /// ignore `phasegate.local.toml`), so the branch under test cannot
    /// weaken its own gate.
    #[arg(long, value_name = "REF")]
    pub config_from_ref: Option<String>,
    /// How to print the verdict.
    #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,
    /// Write the `--format` report to FILE; the human report still goes
    /// to the terminal.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a report: `FORMAT=FILE` (repeatable), e.g.
    /// `--report sarif=phasegate.sarif --report junit=junit.xml`.
    #[arg(long = "report", value_name = "FORMAT=FILE")]
    pub reports: Vec<String>,
    /// How many checks run at once (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing `phasegate.toml`.
    #[arg(long)]
    pub force: bool,
}
