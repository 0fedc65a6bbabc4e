//! Language detection and the embedded defaults: the standard commands per
//! language, the default phases, and the commented file `init` writes.

use std::path::Path;

use crate::prose::and_list;

/// A Node package manager, detected from the lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageManager {
    Bun,
    Pnpm,
    Yarn,
    Npm,
}

impl PackageManager {
    /// Its commands for the `test`, `lint` and `build` scripts and for the
    /// TypeScript compiler the project installed.
    fn commands(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            PackageManager::Bun => (
                // The project's `test` script, as npm, pnpm and yarn run
                // it: `bun test` is bun's own test runner whatever the
                // script says (a project testing with vitest or jest
                // would have its tests run by another runner).
                "bun run test",
                "bun run lint",
                "bun run build",
                // Without `--no-install`, bunx installs `typescript@latest`
                // into its global cache where the project has none, and
                // runs it: code from the registry run unasked, and a
                // compiler the project never chose passing or failing it.
                "bunx --no-install tsc --noEmit",
            ),
            PackageManager::Pnpm => (
                "pnpm test",
                "pnpm run lint",
                "pnpm run build",
                "pnpm exec tsc --noEmit",
            ),
            PackageManager::Yarn => (
                "yarn test",
                "yarn run lint",
                "yarn run build",
                "yarn tsc --noEmit",
            ),
            PackageManager::Npm => (
                "npm test",
                "npm run lint",
                "npm run build",
                // Without `--no-install` an npx that cannot ask (no
                // terminal, or in CI) installs and runs the unrelated
                // `tsc` package where `typescript` is not installed: a
                // failed check instead of a missing tool, and code from
                // the registry run unasked.
                "npx --no-install tsc --noEmit",
            ),
        }
    }
}

/// What runs a Python project's tools when its environment is not in the
/// project: poetry and pipenv keep it under their own cache directory by
/// default, where neither `PATH` nor the `.venv` lookup of a check finds
/// it. pdm and uv make an in-project `.venv`, which a check runs in as it
/// is (`runner::project_venv`); `uv run` would sync the environment first,
/// installing packages unasked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PythonRunner {
    /// A `poetry.lock`: `poetry run`.
    Poetry,
    /// A `Pipfile` or `Pipfile.lock`: `pipenv run`.
    Pipenv,
}

impl PythonRunner {
    /// The program, as commands name it.
    pub fn program(self) -> &'static str {
        match self {
            PythonRunner::Poetry => "poetry",
            PythonRunner::Pipenv => "pipenv",
        }
    }
}

/// The tools a Python project's default checks run, from what the project
/// says it uses: a tool it configures, where it does not configure the
/// standard one of the same job too, replaces that (mypy for pyright,
/// flake8 for ruff); configuring both or neither keeps the standard one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PythonTools {
    /// `None`: the tools are looked up on `PATH`, after the project's
    /// `.venv` (or `venv`) when it has one.
    pub runner: Option<PythonRunner>,
    /// Lint with flake8 rather than ruff.
    pub flake8: bool,
    /// Typecheck with mypy rather than pyright.
    pub mypy: bool,
}

impl PythonTools {
    /// `command` run through the project's runner: `poetry run pytest`.
    /// The commands are a fixed table, so each is `'static` as the other
    /// languages' are.
    fn through(self, command: PythonCommand) -> &'static str {
        use PythonCommand as C;
        use PythonRunner as R;
        match (self.runner, command) {
            (None, C::Pytest) => "pytest",
            (None, C::Ruff) => "ruff check .",
            (None, C::Flake8) => "flake8",
            (None, C::Pyright) => "pyright",
            (None, C::Mypy) => "mypy .",
            (None, C::RuffFormat) => "ruff format --check .",
            (Some(R::Poetry), C::Pytest) => "poetry run pytest",
            (Some(R::Poetry), C::Ruff) => "poetry run ruff check .",
            (Some(R::Poetry), C::Flake8) => "poetry run flake8",
            (Some(R::Poetry), C::Pyright) => "poetry run pyright",
            (Some(R::Poetry), C::Mypy) => "poetry run mypy .",
            (Some(R::Poetry), C::RuffFormat) => "poetry run ruff format --check .",
            (Some(R::Pipenv), C::Pytest) => "pipenv run pytest",
            (Some(R::Pipenv), C::Ruff) => "pipenv run ruff check .",
            (Some(R::Pipenv), C::Flake8) => "pipenv run flake8",
            (Some(R::Pipenv), C::Pyright) => "pipenv run pyright",
            (Some(R::Pipenv), C::Mypy) => "pipenv run mypy .",
            (Some(R::Pipenv), C::RuffFormat) => "pipenv run ruff format --check .",
        }
    }

    fn commands(self) -> Vec<(&'static str, &'static str)> {
        vec![
            ("tests", self.through(PythonCommand::Pytest)),
            (
                "lint",
                self.through(if self.flake8 {
                    PythonCommand::Flake8
                } else {
                    PythonCommand::Ruff
                }),
            ),
            (
                "typecheck",
                self.through(if self.mypy {
                    PythonCommand::Mypy
                } else {
                    PythonCommand::Pyright
                }),
            ),
        ]
    }
}

/// The commands a Python project's default checks choose from.
#[derive(Debug, Clone, Copy)]
enum PythonCommand {
    Pytest,
    Ruff,
    Flake8,
    Pyright,
    Mypy,
    RuffFormat,
}

/// A project language phasegate knows the standard commands of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Language {
    Rust,
    Go,
    Node {
        /// `None` without a `package.json` (a `tsconfig.json` alone): no
        /// package manager has anything to run then.
        manager: Option<PackageManager>,
        /// `package.json` has a `test` script, and not the placeholder
        /// `npm init` writes (`echo "Error: no test specified" && exit 1`).
        test: bool,
        /// `package.json` has a `lint` script.
        lint: bool,
        /// `package.json` has a `build` script.
        build: bool,
        /// There is a `tsconfig.json`.
        typescript: bool,
    },
    Python(PythonTools),
}

impl Language {
    pub fn name(&self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Node { manager, .. } => match manager {
                Some(PackageManager::Bun) => "node (bun)",
                Some(PackageManager::Pnpm) => "node (pnpm)",
                Some(PackageManager::Yarn) => "node (yarn)",
                Some(PackageManager::Npm) => "node (npm)",
                None => "typescript (no package.json)",
            },
            Language::Python(tools) => match tools.runner {
                None => "python",
                Some(PythonRunner::Poetry) => "python (poetry)",
                Some(PythonRunner::Pipenv) => "python (pipenv)",
            },
        }
    }

    /// A short name, for the names of checks: `go-tests`.
    pub fn slug(&self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Node { .. } => "node",
            Language::Python(_) => "python",
        }
    }

    /// The language's standard formatting check, which `init` offers
    /// commented out (the embedded default runs none: a project may not
    /// format its code).
    pub fn format_check(&self) -> Option<&'static str> {
        match self {
            Language::Rust => Some("cargo fmt --check"),
            Language::Go => Some("gofmt -l ."),
            Language::Python(tools) => Some(tools.through(PythonCommand::RuffFormat)),
            Language::Node { .. } => None,
        }
    }

    /// What a user should know of the standard command `command` of check
    /// `name` before the first commit, as comment lines for `init`'s file.
    pub fn command_note(&self, name: &str, command: &str) -> Option<&'static str> {
        match (self, name, command) {
            // The exit status decides: clippy's warnings exit 0.
            (Language::Rust, "lint", "cargo clippy") => Some(
                "# `cargo clippy` exits 0 on warnings: the report shows them, and they do\n\
                 # not block. To make them block: lint = \"cargo clippy -- -D warnings\"\n",
            ),
            (Language::Go, "lint", "golangci-lint run ./...") => Some(
                "# golangci-lint is installed apart from go\n\
                 # (https://golangci-lint.run/welcome/install/); until it is, every run\n\
                 # stops on this check. Go's own linter needs nothing: lint = \"go vet ./...\"\n",
            ),
            (Language::Python(tools), "tests", _) => match tools.runner {
                Some(PythonRunner::Poetry) => Some(
                    "# poetry.lock: the tools run in the environment poetry keeps for the project\n\
                     # (`poetry run`), activated or not; `poetry install` puts them there.\n\
                     # Where there is none yet, `poetry run` makes an empty one (it installs\n\
                     # nothing) and the check stops as incomplete until `poetry install`.\n",
                ),
                Some(PythonRunner::Pipenv) => Some(
                    "# Pipfile: the tools run in the environment pipenv keeps for the project\n\
                     # (`pipenv run`), activated or not; `pipenv install --dev` puts them there.\n\
                     # Where there is none yet, `pipenv run` makes an empty one (it installs\n\
                     # nothing) and the check stops as incomplete until `pipenv install --dev`.\n",
                ),
                None => None,
            },
            (Language::Python(tools), "lint", _) => Some(if tools.flake8 {
                "# flake8, not ruff: the project configures flake8 (.flake8, [flake8] in\n\
                 # setup.cfg or tox.ini, [tool.flake8] in pyproject.toml) and not ruff.\n"
            } else {
                "# ruff, the default. A project that configures flake8 (.flake8, [flake8]\n\
                 # in setup.cfg or tox.ini) and not ruff (ruff.toml, [tool.ruff]) gets flake8.\n"
            }),
            (Language::Python(tools), "typecheck", _) => Some(if tools.mypy {
                "# mypy, not pyright: the project configures mypy (mypy.ini, .mypy.ini,\n\
                 # [tool.mypy] in pyproject.toml, [mypy] in setup.cfg) and not pyright.\n\
                 # `mypy .` checks the files below the root; without the `.`, mypy checks\n\
                 # those its configuration's `files` names.\n"
            } else {
                "# pyright, the default. A project that configures mypy (mypy.ini, [tool.mypy],\n\
                 # [mypy] in setup.cfg) and not pyright (pyrightconfig.json, [tool.pyright])\n\
                 # gets `mypy .`.\n"
            }),
            _ => None,
        }
    }

    /// The standard commands, in check order: tests, lint, build, typecheck.
    pub fn commands(&self) -> Vec<(&'static str, &'static str)> {
        match self {
            Language::Rust => vec![
                ("tests", "cargo test"),
                ("lint", "cargo clippy"),
                ("build", "cargo build"),
                ("typecheck", "cargo check"),
            ],
            Language::Go => vec![
                ("tests", "go test ./..."),
                ("lint", "golangci-lint run ./..."),
                ("build", "go build ./..."),
                ("typecheck", "go build -o /dev/null ./..."),
            ],
            Language::Python(tools) => tools.commands(),
            Language::Node {
                manager: None,
                typescript,
                ..
            } => {
                // Nothing is installed locally: the compiler on PATH, if any.
                if *typescript {
                    vec![("typecheck", "tsc --noEmit")]
                } else {
                    Vec::new()
                }
            }
            Language::Node {
                manager: Some(manager),
                test,
                lint,
                build,
                typescript,
            } => {
                let (run_test, run_lint, run_build, tsc) = manager.commands();
                // Like lint and build, tests only when there is a script to
                // run: without one, `npm test` fails on every project.
                let mut out = Vec::new();
                if *test {
                    out.push(("tests", run_test));
                }
                if *lint {
                    out.push(("lint", run_lint));
                }
                if *build {
                    out.push(("build", run_build));
                }
                if *typescript {
                    out.push(("typecheck", tsc));
                }
                out
            }
        }
    }
}

impl Language {
    /// For a Node project whose `package.json` has no script phasegate
    /// runs (what `npm init` writes: its `test` script fails on purpose)
    /// and no `tsconfig.json`: the commands its package manager would run
    /// for the scripts, which `init` offers as comments. `None` for any
    /// other project.
    pub fn offered_commands(&self) -> Option<Vec<(&'static str, &'static str)>> {
        match self {
            Language::Node {
                manager: Some(manager),
                ..
            } if self.commands().is_empty() => {
                let (test, lint, build, _) = manager.commands();
                Some(vec![("tests", test), ("lint", lint), ("build", build)])
            }
            _ => None,
        }
    }

    /// For a Node project whose checks run something, but whose
    /// `package.json` has no `test` script (`bun init` writes none): the
    /// tests command `init` offers, commented, and why, so neither the
    /// file nor a run passes over the tests without a word. bun's own
    /// runner needs no script (it fails where there is no test file, so
    /// it is not run unasked); the others run the script once there is
    /// one.
    pub fn untested(&self) -> Option<Untested> {
        match self {
            Language::Node {
                manager: Some(manager),
                test: false,
                ..
            } if !self.commands().is_empty() => Some(match manager {
                PackageManager::Bun => Untested {
                    command: "bun test",
                    how: "bun's own runner, `bun test`, needs none, but fails where there is no test file",
                    comment: "# package.json has no `test` script, so no check runs the tests. bun's own\n\
                              # runner needs none (it fails where there is no test file): to run it,\n\
                              # uncomment this and add { name = \"tests\" } to a phase.\n",
                },
                _ => Untested {
                    command: manager.commands().0,
                    how: "add one; the one `npm init` writes fails on purpose and is not one",
                    comment: "# package.json has no `test` script, so no check runs the tests: add one,\n\
                              # then uncomment this and add { name = \"tests\" } to a phase.\n",
                },
            }),
            _ => None,
        }
    }
}

/// The tests of a project whose checks run none (`Language::untested`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Untested {
    /// The command `init` offers, commented.
    pub command: &'static str,
    /// What to do, after "package.json has no `test` script": one line.
    pub how: &'static str,
    /// The comment over the offered command in `init`'s file.
    pub comment: &'static str,
}

/// What the `test` script `npm init` writes says: it fails on purpose.
const NPM_INIT_TEST: &str = "Error: no test specified";

/// The files at a project's root that tell its language, its package
/// manager and the tools it configures: what detection looks at, wherever
/// it looks.
pub const MARKERS: [&str; 22] = [
    "Cargo.toml",
    "go.mod",
    "package.json",
    "tsconfig.json",
    "bun.lock",
    "bun.lockb",
    "pnpm-lock.yaml",
    "yarn.lock",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "requirements.txt",
    "Pipfile",
    // Where a Python project's tools run, and which it configures.
    "Pipfile.lock",
    "poetry.lock",
    "tox.ini",
    "mypy.ini",
    ".mypy.ini",
    "pyrightconfig.json",
    ".flake8",
    "ruff.toml",
    ".ruff.toml",
];

/// The `MARKERS` whose text detection reads: the scripts of a
/// `package.json`, the tool sections of a Python project's shared
/// configuration files. The others say enough by being there.
const READ_MARKERS: [&str; 4] = ["package.json", "pyproject.toml", "setup.cfg", "tox.ini"];

/// The `MARKERS` a project's root holds, and the text of those of
/// `READ_MARKERS` (the scripts a `package.json` names, the tools a
/// `pyproject.toml` configures): read from the work tree, or from a
/// commit, so a gate read from a ref (`--config-from-ref`) also detects
/// its language there. A branch that adds a `Cargo.toml` to a Python
/// project must not turn its default checks into Rust's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RootFiles {
    present: Vec<&'static str>,
    /// The text of each of `READ_MARKERS` that is there.
    texts: Vec<(&'static str, Vec<u8>)>,
}

impl RootFiles {
    /// The markers at `root` in the file system.
    pub fn in_dir(root: &Path) -> RootFiles {
        RootFiles::from_lookup(|name| {
            let path = root.join(name);
            if !path.is_file() {
                return None;
            }
            // A lock file says enough by being there.
            Some(if READ_MARKERS.contains(&name) {
                std::fs::read(path).unwrap_or_default()
            } else {
                Vec::new()
            })
        })
    }

    /// The markers `lookup` finds: `Some(text)` for a file that is there
    /// (the text matters only for `READ_MARKERS`).
    pub fn from_lookup(mut lookup: impl FnMut(&str) -> Option<Vec<u8>>) -> RootFiles {
        let mut files = RootFiles::default();
        for name in MARKERS {
            if let Some(text) = lookup(name) {
                files.present.push(name);
                if READ_MARKERS.contains(&name) {
                    files.texts.push((name, text));
                }
            }
        }
        files
    }

    fn has(&self, name: &str) -> bool {
        self.present.contains(&name)
    }

    /// The bytes of `name`, one of `READ_MARKERS`, where it is there.
    fn bytes(&self, name: &str) -> Option<&[u8]> {
        self.texts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| text.as_slice())
    }

    /// The text of `name`, one of `READ_MARKERS`, where it is there and
    /// is UTF-8.
    fn text(&self, name: &str) -> Option<&str> {
        self.bytes(name)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
    }

    /// The tools of the `[tool]` table of `pyproject.toml` (`mypy` of
    /// `[tool.mypy]`); none where it cannot be read, as the tools that
    /// read it would find none either.
    fn pyproject_tools(&self) -> Vec<String> {
        self.text("pyproject.toml")
            .and_then(|text| {
                text.trim_start_matches('\u{feff}')
                    .parse::<toml::Table>()
                    .ok()
            })
            .and_then(|table| match table.get("tool") {
                Some(toml::Value::Table(tools)) => Some(tools.keys().cloned().collect()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Whether the INI file `name` (`setup.cfg`, `tox.ini`) has a section
    /// whose name `wanted` accepts.
    fn ini_section(&self, name: &str, wanted: impl Fn(&str) -> bool) -> bool {
        self.text(name).is_some_and(|text| {
            text.lines().any(|line| {
                line.trim()
                    .strip_prefix('[')
                    .and_then(|rest| rest.strip_suffix(']'))
                    .map(str::trim)
                    .is_some_and(&wanted)
            })
        })
    }
}

/// The project's language, from the files at its root: the first of
/// `detect_languages`.
pub fn detect_language(root: &Path) -> Option<Language> {
    detect_languages(root).into_iter().next()
}

/// Every language whose files are at the root of the work tree, as
/// `languages_of` orders them.
pub fn detect_languages(root: &Path) -> Vec<Language> {
    languages_of(&RootFiles::in_dir(root))
}

/// Every language whose files `root` holds, in the order Rust, Go,
/// Node/TypeScript, Python, except that one with nothing to run comes after
/// those with commands: a `package.json` that only lists a formatter beside
/// a `pyproject.toml` must not make a Python project one with no check. The
/// first is the one checked by default; the others are said, so a
/// monorepo's second language is never left unchecked without a word.
pub fn languages_of(root: &RootFiles) -> Vec<Language> {
    let has = |name: &str| root.has(name);
    let mut found = Vec::new();
    if has("Cargo.toml") {
        found.push(Language::Rust);
    }
    if has("go.mod") {
        found.push(Language::Go);
    }
    if has("package.json") || has("tsconfig.json") {
        found.push(detect_node(root));
    }
    if has("pyproject.toml")
        || has("setup.cfg")
        || has("setup.py")
        || has("requirements.txt")
        || has("Pipfile")
    {
        found.push(Language::Python(detect_python(root)));
    }
    // A stable sort: the order above holds among those that run something.
    found.sort_by_key(|language| language.commands().is_empty());
    found
}

/// A Python project's tools: where its environment is (a poetry or pipenv
/// lock file), and the linter and type checker it configures. Each tool
/// reads its configuration from the files named here (mypy: `mypy.ini`,
/// `.mypy.ini`, `pyproject.toml`, `setup.cfg`; flake8: `.flake8`,
/// `setup.cfg`, `tox.ini`, and `pyproject.toml` through the
/// Flake8-pyproject plugin), at the project's root.
fn detect_python(root: &RootFiles) -> PythonTools {
    let has = |name: &str| root.has(name);
    let tools = root.pyproject_tools();
    let in_pyproject = |tool: &str| tools.iter().any(|t| t == tool);
    let mypy = has("mypy.ini")
        || has(".mypy.ini")
        || in_pyproject("mypy")
        // `[mypy-pkg.*]`: per-module options, mypy's configuration too.
        || root.ini_section("setup.cfg", |s| s == "mypy" || s.starts_with("mypy-"));
    let pyright = has("pyrightconfig.json") || in_pyproject("pyright");
    let flake8 = has(".flake8")
        || in_pyproject("flake8")
        || root.ini_section("setup.cfg", |s| s == "flake8")
        || root.ini_section("tox.ini", |s| s == "flake8");
    let ruff = has("ruff.toml") || has(".ruff.toml") || in_pyproject("ruff");
    let runner = if has("poetry.lock") {
        Some(PythonRunner::Poetry)
    } else if has("Pipfile.lock") || has("Pipfile") {
        Some(PythonRunner::Pipenv)
    } else {
        None
    };
    PythonTools {
        runner,
        flake8: flake8 && !ruff,
        mypy: mypy && !pyright,
    }
}

/// A Node or TypeScript project: its package manager from the lock file,
/// and the scripts its `package.json` has.
fn detect_node(root: &RootFiles) -> Language {
    let has = |name: &str| root.has(name);
    let manager = if !has("package.json") {
        None
    } else if has("bun.lock") || has("bun.lockb") {
        Some(PackageManager::Bun)
    } else if has("pnpm-lock.yaml") {
        Some(PackageManager::Pnpm)
    } else if has("yarn.lock") {
        Some(PackageManager::Yarn)
    } else {
        Some(PackageManager::Npm)
    };
    // npm reads a `package.json` that starts with a byte order mark (as
    // some Windows editors save it); serde_json does not.
    let parsed = root
        .text("package.json")
        .and_then(|text| {
            serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}')).ok()
        })
        .filter(serde_json::Value::is_object);
    // A `package.json` that cannot be read says nothing of its scripts,
    // and nothing must not pass: the tests run, and the package manager
    // says what is wrong with the file.
    let unreadable = root.bytes("package.json").is_some() && parsed.is_none();
    let scripts = parsed.and_then(|json| json.get("scripts").cloned());
    let script = |name: &str| {
        scripts
            .as_ref()
            .and_then(|s| s.get(name))
            .and_then(serde_json::Value::as_str)
            .filter(|script| !script.trim().is_empty())
    };
    Language::Node {
        manager,
        test: unreadable || script("test").is_some_and(|s| !s.contains(NPM_INIT_TEST)),
        lint: script("lint").is_some(),
        build: script("build").is_some(),
        typescript: has("tsconfig.json"),
    }
}

/// The languages after the first of `languages` (as `detect_languages`
/// orders them) that have a command to run: a monorepo's code the default
/// checks do not reach.
fn unchecked_languages(languages: &[Language]) -> Vec<&Language> {
    languages
        .iter()
        .skip(1)
        .filter(|l| !l.commands().is_empty())
        .collect()
}

/// The languages `unchecked_languages` finds, named as prose ("go and
/// node"); `None` when there are none.
pub fn unchecked_names(languages: &[Language]) -> Option<String> {
    let names: Vec<&str> = unchecked_languages(languages)
        .into_iter()
        .map(Language::slug)
        .collect();
    (!names.is_empty()).then(|| and_list(&names))
}

/// A project in a directory below the root, where nothing at the root
/// says what the repository is (a monorepo of `backend/` and `frontend/`):
/// the embedded default checks it in its directory, and `init` writes the
/// same checks down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedProject {
    /// Relative to the root, `/`-separated, without a trailing `/`.
    pub dir: String,
    /// Its languages that have a command to run, as `languages_of` orders
    /// them; never empty.
    pub languages: Vec<Language>,
}

/// How deep below the root projects are looked for: `backend/`, and
/// `packages/web/` beneath a directory that is no project itself.
const NESTED_DEPTH: usize = 2;

/// How many directories a walk of the work tree looks into at most, where
/// git tracks nothing yet (or there is no repository): a directory of
/// thousands of directories still starts its run in milliseconds.
const WALKED_DIRS: usize = 512;

/// Directories that hold what tools install or build, code vendored from
/// elsewhere, or test data: never a project of the repository
/// (`node_modules/left-pad/package.json`, `third_party/zlib/setup.py`).
const NOT_PROJECTS: [&str; 14] = [
    "node_modules",
    "target",
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "dist",
    "build",
    "out",
    "venv",
    "env",
    "__pycache__",
    "testdata",
    "fixtures",
];

/// Whether the directory `dir` (below the root, `/`-separated) may hold a
/// project: none of its parts is hidden or one of `NOT_PROJECTS`.
fn may_hold_project(dir: &str) -> bool {
    dir.split('/')
        .all(|part| !part.is_empty() && !part.starts_with('.') && !NOT_PROJECTS.contains(&part))
}

/// The lock files that name a Node project's package manager. A
/// workspace keeps one at its root, for the packages below it.
const LOCKS: [&str; 4] = ["bun.lock", "bun.lockb", "pnpm-lock.yaml", "yarn.lock"];

/// Whether the search for projects below the root looks at the file
/// `path` (relative to the root): one of `MARKERS`, at most `NESTED_DEPTH`
/// directories down, or a lock file at the root (a workspace's, which
/// names the package manager of the packages below it). Asked of every
/// tracked file, so the cheap test (how many `/`) comes first.
pub fn marks_project_below(path: &[u8]) -> bool {
    let depth = memchr::memchr_iter(b'/', path).count();
    if depth > NESTED_DEPTH {
        return false;
    }
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or_default();
    if depth == 0 {
        return LOCKS.iter().any(|lock| lock.as_bytes() == name);
    }
    MARKERS.iter().any(|marker| marker.as_bytes() == name)
}

/// The projects below `root`, for a root with no language of its own.
/// They are found among the files git tracks (the index: what a commit
/// holds, and never what a tool installed or built); where git tracks
/// nothing yet, or `root` is no repository, among the work tree's
/// directories, `WALKED_DIRS` at most.
pub fn projects_below(root: &Path) -> Vec<NestedProject> {
    let paths: Vec<String> = match crate::git::tracked_where(root, marks_project_below) {
        // A name that is not UTF-8 can be neither a check's `cwd` nor
        // its `files` glob.
        Ok(Some(paths)) => paths
            .into_iter()
            .filter_map(|path| String::from_utf8(path).ok())
            .collect(),
        Ok(None) | Err(_) => walked_markers(root),
    };
    projects_among(&paths, |path| std::fs::read(root.join(path)).ok())
}

/// The projects below the root of the commit `spec`, for a root with no
/// language of its own: a gate read from a ref (`--config-from-ref`)
/// checks the projects the ref holds, so a project a branch adds or takes
/// away neither adds nor removes checks of the gate that judges it. Only the
/// directories `NESTED_DEPTH` deep that may hold a project are read, and
/// of the files only those of `READ_MARKERS` found.
pub fn projects_at(root: &Path, spec: &str) -> Result<Vec<NestedProject>, crate::git::GitError> {
    let paths: Vec<String> = crate::git::paths_at(root, spec, looked_into, marks_project_below)?
        .into_iter()
        // As in the index: a name that is not UTF-8 can be neither a
        // check's `cwd` nor its `files` glob.
        .filter_map(|path| String::from_utf8(path).ok())
        .collect();
    let manifests: Vec<&Path> = paths
        .iter()
        .filter(|path| {
            path.rsplit_once('/')
                .is_some_and(|(_, name)| READ_MARKERS.contains(&name))
        })
        .map(Path::new)
        .collect();
    let texts = match crate::git::files_at(root, spec, &manifests) {
        Ok(texts) => texts,
        // One that cannot be read (a link out of the repository) spoils
        // the lookup of all: each alone, and that one unreadable.
        Err(_) => manifests
            .iter()
            .map(|path| {
                crate::git::files_at(root, spec, &[path])
                    .ok()
                    .and_then(|mut one| one.pop().flatten())
            })
            .collect(),
    };
    let read: std::collections::HashMap<&Path, Vec<u8>> = manifests
        .into_iter()
        .zip(texts)
        .filter_map(|(path, text)| Some((path, text?)))
        .collect();
    Ok(projects_among(&paths, |path| {
        read.get(Path::new(path)).cloned()
    }))
}

/// Whether the search for projects below the root looks into the
/// directory `dir` (relative to the root): one that may hold a project,
/// at most `NESTED_DEPTH` deep (`packages/web/`), as are its markers.
fn looked_into(dir: &[u8]) -> bool {
    memchr::memchr_iter(b'/', dir).count() < NESTED_DEPTH
        && std::str::from_utf8(dir).is_ok_and(may_hold_project)
}

/// The `MARKERS` in the work tree's directories `NESTED_DEPTH` deep, as
/// paths relative to `root`: hidden directories, `NOT_PROJECTS` and
/// symbolic links are not looked into.
fn walked_markers(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut budget = WALKED_DIRS;
    let mut level = vec![String::new()];
    for _ in 0..=NESTED_DEPTH {
        let mut next = Vec::new();
        for dir in level {
            if budget == 0 {
                return found;
            }
            budget -= 1;
            let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                // `file_type` does not follow a symbolic link: a link to a
                // directory elsewhere is not the repository's.
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                let path = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                if is_dir {
                    if looked_into(path.as_bytes()) {
                        next.push(path);
                    }
                } else if marks_project_below(path.as_bytes()) {
                    found.push(path);
                }
            }
        }
        next.sort();
        level = next;
    }
    found
}

/// The projects below the root among `paths` (files relative to the root,
/// `/`-separated), in path order: the directories `NESTED_DEPTH` deep
/// whose `MARKERS` name a language with a command to run, except those
/// beneath such a project (a Go module's `testdata/`) and those
/// `may_hold_project` refuses. `read` gives the text of a `package.json`
/// among them (its scripts say what there is to run), or of a Python
/// project's configuration file (`READ_MARKERS`: the tools it uses).
pub fn projects_among(
    paths: &[String],
    mut read: impl FnMut(&str) -> Option<Vec<u8>>,
) -> Vec<NestedProject> {
    let mut dirs: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for path in paths {
        if !marks_project_below(path.as_bytes()) {
            continue;
        }
        match path.rsplit_once('/') {
            Some((dir, name)) => {
                if may_hold_project(dir) {
                    dirs.entry(dir).or_default().push(name);
                }
            }
            // The root's lock files, for the packages below it.
            None => dirs.entry("").or_default().push(path),
        }
    }
    // The lock files in `dir` (the root: "").
    let locks_in = |dir: &str| -> Vec<&str> {
        dirs.get(dir)
            .map(|names| {
                names
                    .iter()
                    .copied()
                    .filter(|n| LOCKS.contains(n))
                    .collect()
            })
            .unwrap_or_default()
    };
    // The lock files a package in `dir` goes by: its own, else those of
    // the nearest directory above it that has one, the root's last, as the
    // package manager finds its workspace's.
    let locks_for = |dir: &str| -> Vec<&str> {
        let mut at = dir;
        loop {
            let locks = locks_in(at);
            if !locks.is_empty() || at.is_empty() {
                return locks;
            }
            at = at.rsplit_once('/').map_or("", |(parent, _)| parent);
        }
    };
    let mut found: Vec<NestedProject> = Vec::new();
    for (&dir, names) in &dirs {
        // The root is no project here: its lock files are for those below.
        if dir.is_empty() {
            continue;
        }
        // A parent sorts before what it holds: its project is known.
        if found.iter().any(|p| {
            dir.strip_prefix(p.dir.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        }) {
            continue;
        }
        let locks = locks_for(dir);
        let markers = RootFiles::from_lookup(|marker| {
            if !names.contains(&marker) && !locks.contains(&marker) {
                return None;
            }
            Some(if READ_MARKERS.contains(&marker) {
                read(&format!("{dir}/{marker}")).unwrap_or_default()
            } else {
                Vec::new()
            })
        });
        let languages: Vec<Language> = languages_of(&markers)
            .into_iter()
            .filter(|l| !l.commands().is_empty())
            .collect();
        if !languages.is_empty() {
            found.push(NestedProject {
                dir: dir.to_string(),
                languages,
            });
        }
    }
    found
}

/// What the default checks are made from: the languages at the root
/// (`detect_languages`), and where there is none, the projects below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detected {
    pub languages: Vec<Language>,
    /// Empty when the root has a language: its checks are the root's.
    pub below: Vec<NestedProject>,
}

/// The languages at `root` and, with none there, the projects below it.
pub fn detect(root: &Path) -> Detected {
    let languages = detect_languages(root);
    // As the embedded default does: a root language with nothing to run
    // (the first, if any runs something) is no project of its own.
    let below = if languages.first().is_none_or(|l| l.commands().is_empty()) {
        projects_below(root)
    } else {
        Vec::new()
    };
    Detected { languages, below }
}

/// The projects of `projects_below` as prose: "go in `backend/` and node
/// in `frontend/`"; `None` when there are none.
pub fn nested_names(projects: &[NestedProject]) -> Option<String> {
    let names: Vec<String> = projects
        .iter()
        .map(|p| {
            let slugs: Vec<&str> = p.languages.iter().map(Language::slug).collect();
            format!("{} in `{}/`", and_list(&slugs), p.dir)
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    (!names.is_empty()).then(|| and_list(&names))
}

/// The check `init` offers, named `check`, for a language's `command`.
fn offered_check(check: &str, command: &str) -> String {
    format!(
        "#   {{ name = {}, command = {} }},\n",
        quoted(check),
        quoted(command)
    )
}

/// A check of a project below the root: what the embedded default runs
/// and `init` writes.
struct NestedCheck {
    /// The project's directory and the command's name, `backend-tests`
    /// (`backend-go-tests` for a second language of one directory): the
    /// directory is what tells two projects of one language apart, and
    /// what a person reading the report knows them by. Unique among the
    /// checks, whatever the case (`web-app/` and `web/app/` would both
    /// be `web-app`: the second is `web-app-2-tests`).
    name: String,
    /// The standard command's name: `tests`.
    standard: &'static str,
    command: &'static str,
    /// The project's directory: where the check runs, and whose files
    /// make it run.
    dir: String,
}

impl NestedCheck {
    /// The check as a TOML inline table.
    fn toml(&self) -> String {
        let origin = match self.standard {
            "tests" => "test",
            other => other,
        };
        format!(
            "{{ name = {}, command = {}, cwd = {}, files = [{}], origin = {}, on_failure = \"block\" }}",
            quoted(&self.name),
            quoted(self.command),
            quoted(&self.dir),
            quoted(&format!("{}/**", glob_escaped(&self.dir))),
            quoted(origin),
        )
    }
}

/// `text` with the characters a glob reads as special escaped, so it
/// matches only itself: a directory named `[draft]` or `!old`.
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') || (i == 0 && c == '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The checks of the projects `nested` finds, in their order.
fn nested_checks(nested: &[NestedProject]) -> Vec<NestedCheck> {
    let mut checks: Vec<NestedCheck> = Vec::new();
    let mut taken = std::collections::BTreeSet::new();
    for project in nested {
        // A check's name holds no control character; its `cwd` keeps the
        // directory's own.
        let base: String = project
            .dir
            .chars()
            .map(|c| match c {
                '/' => '-',
                c if c.is_control() => '_',
                c => c,
            })
            .collect();
        // Check names are told apart whatever their case: one prefix for
        // all of a project's checks, the first its directory's free.
        let mut prefix = base.clone();
        let mut n = 1;
        while project.languages.iter().any(|language| {
            language.commands().iter().any(|(standard, _)| {
                taken.contains(&check_name(&prefix, language, project, standard).to_lowercase())
            })
        }) {
            n += 1;
            prefix = format!("{base}-{n}");
        }
        for language in &project.languages {
            for (standard, command) in language.commands() {
                let name = check_name(&prefix, language, project, standard);
                taken.insert(name.to_lowercase());
                checks.push(NestedCheck {
                    name,
                    standard,
                    command,
                    dir: project.dir.clone(),
                });
            }
        }
    }
    checks
}

/// The name of `project`'s check of `standard` for `language`:
/// `backend-tests`, and for a second language of one directory
/// `backend-go-tests`.
fn check_name(
    prefix: &str,
    language: &Language,
    project: &NestedProject,
    standard: &str,
) -> String {
    if project.languages.first() == Some(language) {
        format!("{prefix}-{standard}")
    } else {
        format!("{prefix}-{}-{standard}", language.slug())
    }
}

/// The four stages' phases for projects below the root: every check of
/// `checks` blocks in `implementation`, their tests in `qa`, as
/// `default_phases` has it for a project at the root. `defined` are more
/// checks by name, whose commands the configuration's `[commands]` give.
fn nested_phases(checks: &[NestedCheck], defined: &[&str], commented: bool) -> String {
    let mut text = String::new();
    for stage in STAGES {
        text.push_str(&format!("[phases.{stage}]\n"));
        let mut listed: Vec<String> = match stage {
            "implementation" => checks.iter().map(NestedCheck::toml).collect(),
            "qa" => checks
                .iter()
                .filter(|c| c.standard == "tests")
                .map(NestedCheck::toml)
                .collect(),
            _ => Vec::new(),
        };
        listed.extend(
            defined
                .iter()
                .filter(|name| stage == "implementation" || (stage == "qa" && **name == "tests"))
                .map(|name| format!("{{ name = {}, on_failure = \"block\" }}", quoted(name))),
        );
        if listed.is_empty() {
            if commented && (stage == "requirements" || stage == "architecture") {
                text.push_str(
                    "# Document phases: their handoffs are validated, no command runs.\n",
                );
            }
            text.push_str("checks = []\n\n");
            continue;
        }
        text.push_str("checks = [\n");
        for check in listed {
            text.push_str(&format!("  {check},\n"));
        }
        text.push_str("]\n\n");
    }
    text
}

/// The stages of work, in order; every default configuration has a phase
/// for each.
pub const STAGES: [&str; 4] = ["requirements", "architecture", "implementation", "qa"];

/// `s` as a TOML basic string: a directory's name may hold what Rust's
/// debug quoting escapes in a way TOML does not read (`\u{200b}`).
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The names of the standard commands, in check order.
pub const STANDARD_CHECKS: [&str; 4] = ["tests", "lint", "build", "typecheck"];

/// The embedded default as TOML, loaded under the files: every standard command
/// of the language blocks in `implementation`, the tests block in `qa`.
/// `defined` are the standard commands the files' `[commands]` name: a
/// project of no known language that writes `tests = "make test"` and no
/// phase means its tests to run, not to be passed over. With no language
/// at the root, the checks of the projects `nested` below it come first,
/// as `init` writes them.
pub fn embedded_toml(
    language: Option<&Language>,
    nested: &[NestedProject],
    defined: &[&str],
) -> String {
    let commands = language.map(Language::commands).unwrap_or_default();
    // No [gate]: its defaults live in the loader, so a file that leaves a
    // value out gets the same default whether or not it exists.
    let mut text = String::from("[commands]\n");
    for (name, command) in &commands {
        text.push_str(&format!("{name} = {}\n", quoted(command)));
    }
    text.push('\n');
    let mut names: Vec<&str> = commands.iter().map(|(n, _)| *n).collect();
    for name in STANDARD_CHECKS {
        if defined.contains(&name) && !names.contains(&name) {
            names.push(name);
        }
    }
    names.sort_by_key(|n| {
        STANDARD_CHECKS
            .iter()
            .position(|s| s == n)
            .unwrap_or(STANDARD_CHECKS.len())
    });
    let nested = if commands.is_empty() {
        nested_checks(nested)
    } else {
        Vec::new()
    };
    if nested.is_empty() {
        text.push_str(&default_phases(&names, false, false));
    } else {
        text.push_str(&nested_phases(&nested, &names, false));
    }
    text
}

/// The four stages' phases, `names` checking in `implementation` and
/// `tests` in `qa`; with `offered`, those checks commented out, for a
/// project of no known language, so that writing a command and
/// uncommenting its check is all it takes.
fn default_phases(names: &[&str], commented: bool, offered: bool) -> String {
    let mut text = String::new();
    for stage in STAGES {
        text.push_str(&format!("[phases.{stage}]\n"));
        let names: Vec<&str> = match stage {
            "implementation" => names.to_vec(),
            "qa" => names.iter().copied().filter(|n| *n == "tests").collect(),
            _ => Vec::new(),
        };
        if names.is_empty() {
            if commented && (stage == "requirements" || stage == "architecture") {
                text.push_str(
                    "# Document phases: their handoffs are validated, no command runs.\n",
                );
            }
            text.push_str("checks = []\n\n");
            continue;
        }
        text.push_str("checks = [\n");
        for name in names {
            text.push_str(&format!(
                "  {}{{ name = {}, on_failure = \"block\" }},\n",
                if offered { "# " } else { "" },
                quoted(name)
            ));
        }
        text.push_str("]\n\n");
    }
    text
}

/// A program that checks `init` writes run and that is not installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingProgram {
    /// The program, as the commands name it: `pyright`.
    pub program: String,
    /// The checks that run it, in the file's order.
    pub checks: Vec<String>,
    /// For a tool a package manager runs from the project's dependencies
    /// (`tsc` of `npx --no-install tsc`): the package manager and the
    /// package that holds the tool (`npm`, `typescript`).
    pub dependency: Option<(&'static str, String)>,
    /// The project's Python virtual environment the check runs in (its
    /// `bin` first on `PATH`, see `runner::project_venv`), relative to
    /// the root, where the program was looked for first.
    pub venv: Option<std::path::PathBuf>,
}

/// The tool a Node package manager runs from the project's own
/// dependencies in a command `init` writes (`tsc` of `npx --no-install
/// tsc --noEmit`, `pnpm exec tsc`, `yarn tsc`, `bunx tsc`), with the
/// package manager and whether that runner also finds the tool on `PATH`
/// (npx does not: it runs only what the project installed, else asks to
/// install a package of that name).
fn dependency_tool(argv: &[String]) -> Option<(&str, &'static str, bool)> {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (manager, path, rest) = match words.as_slice() {
        ["npx", rest @ ..] => ("npm", false, rest),
        ["pnpm", "exec", rest @ ..] => ("pnpm", true, rest),
        ["bunx", rest @ ..] => ("bun", true, rest),
        // `yarn NAME` runs a script of that name first: only the
        // commands `init` writes, never `yarn test` or `yarn run lint`.
        ["yarn", rest @ ..] if rest.first().is_some_and(|w| *w == "tsc") => ("yarn", true, rest),
        _ => return None,
    };
    let tool = rest.iter().find(|word| !word.starts_with('-'))?;
    Some((tool, manager, path))
}

/// Whether the tool `name` is installed in the project at `dir`: in the
/// `node_modules/.bin` of `dir` or of a directory above it (an npm
/// workspace installs its members' tools at its root). Under Yarn's
/// Plug'n'Play there is no `node_modules` to look in, and nothing can be
/// told: the tool counts as installed.
fn installed_in_node_modules(dir: &Path, name: &str) -> bool {
    dir.ancestors().any(|dir| {
        dir.join("node_modules/.bin").join(name).is_file()
            || dir.join(".pnp.cjs").is_file()
            || dir.join(".pnp.js").is_file()
    })
}

/// Whether `program` is a Python tool that the project installs in its
/// virtual environment: those the default Python checks choose from.
pub fn python_tool(program: &str) -> bool {
    matches!(program, "pytest" | "ruff" | "pyright" | "mypy" | "flake8")
}

/// How to install `program` in the project's virtual environment `venv`
/// (relative to `root`): through uv for a project uv manages (a
/// `uv.lock`, so the lock file keeps it), with the environment's own pip
/// where it has one (`uv venv` makes none).
pub fn install_in_venv(root: &Path, venv: &Path, program: &str) -> String {
    let project = venv
        .parent()
        .map_or_else(|| root.to_path_buf(), |p| root.join(p));
    let shown = venv.display();
    if project.join("uv.lock").is_file() {
        format!("install the project's dependencies in `{shown}` (`uv sync`), or add it to them (`uv add --dev {program}`)")
    } else if root.join(venv).join("bin/pip").is_file() {
        format!("install it in `{shown}` (`{shown}/bin/pip install {program}`)")
    } else {
        format!("install it in `{shown}` (`uv pip install --python {shown} {program}`)")
    }
}

/// What to install where the program `program` is missing, when that is
/// not `program` alone: the package that brings it, and where from
/// (`typescript` brings `tsc`, bun brings `bunx`, poetry's installer). The
/// run's missing-tool finding and `init`'s warning both say it.
pub fn package_of(program: &str) -> Option<String> {
    Some(match program {
        "tsc" => "`typescript`".to_string(),
        "golangci-lint" => "golangci-lint (https://golangci-lint.run/welcome/install/)".to_string(),
        // bunx is no package of its own: it comes with bun.
        "bun" | "bunx" => "bun, which brings `bunx` with it (https://bun.sh/docs/installation, or `npm install --global bun`)".to_string(),
        // Each is a tool of its own, best kept apart from any project's
        // environment (their documentation suggests pipx).
        "poetry" => "poetry (https://python-poetry.org/docs/#installation, `pipx install poetry`)"
            .to_string(),
        "pipenv" => "pipenv (https://pipenv.pypa.io/en/latest/installation.html, `pipx install pipenv`)"
            .to_string(),
        _ => return None,
    })
}

/// How to get the missing `program`: install what brings it
/// (`package_of`), a Python tool in the project's virtual environment, or
/// `it`; and where a stand-in that needs nothing
/// installed exists (Go's own linter for golangci-lint), to run that
/// meanwhile.
pub fn install_hint(program: &str) -> String {
    let install = match package_of(program) {
        // A Python tool goes in the project's virtual environment, which
        // checks run in unactivated (`runner::project_venv`), not with a
        // bare `pip`. (Where poetry or pipenv runs it, the run's finding
        // says to install the project's dependencies instead.)
        None if python_tool(program) => format!(
            "install `{program}` in the project's virtual environment, which checks run in without activating it (`.venv/bin/pip install {program}`, or `uv add --dev {program}`){}",
            if program == "pyright" {
                ", or with npm (`npm install --save-dev pyright`)"
            } else {
                ""
            }
        ),
        Some(package) => format!("install {package}"),
        None => "install it".to_string(),
    };
    if program == "golangci-lint" {
        format!("{install} or lint with `go vet ./...` instead (it comes with go)")
    } else {
        install
    }
}

/// The programs of the checks `init` writes for `detected` at `root`
/// that `path` (a `PATH`) does not find, each looked up from the
/// directory its check runs in, as a run looks it up: in the project's
/// virtual environment first, unless one is active (`virtual_env`).
/// Every run would stop on them as incomplete, so `init` says so while
/// the user is setting up.
pub fn missing_programs(
    detected: &Detected,
    root: &Path,
    path: Option<&std::ffi::OsStr>,
    virtual_env: bool,
) -> Vec<MissingProgram> {
    // The checks the phases list, each with the directory it runs in.
    let at_root = detected
        .languages
        .first()
        .filter(|_| detected.below.is_empty());
    let written: Vec<(String, &'static str, std::path::PathBuf)> = match at_root {
        Some(language) => language
            .commands()
            .into_iter()
            .map(|(name, command)| (name.to_string(), command, root.to_path_buf()))
            .collect(),
        None => nested_checks(&detected.below)
            .into_iter()
            .map(|check| (check.name, check.command, root.join(&check.dir)))
            .collect(),
    };
    let mut missing: Vec<MissingProgram> = Vec::new();
    for (check, command, cwd) in written {
        let Some(argv) = shlex::split(command) else {
            continue;
        };
        let Some(program) = argv.first().cloned() else {
            continue;
        };
        if let Some(known) = missing.iter_mut().find(|m| m.program == program) {
            known.checks.push(check);
            continue;
        }
        let venv = if virtual_env {
            None
        } else {
            crate::runner::project_venv(&cwd, root)
        };
        let venv_path = venv
            .as_deref()
            .and_then(|venv| crate::runner::path_with_venv(venv, path));
        let path = venv_path.as_deref().or(path);
        if which::which_in(&program, path, &cwd).is_err() {
            missing.push(MissingProgram {
                program,
                checks: vec![check],
                dependency: None,
                venv: venv.map(|v| v.strip_prefix(root).map(Path::to_path_buf).unwrap_or(v)),
            });
            continue;
        }
        // The package manager is there: the tool it runs must be too. A
        // project whose dependencies were never installed, or that lacks
        // `typescript`, stops every run on it.
        let Some((tool, manager, on_path)) = dependency_tool(&argv) else {
            continue;
        };
        if let Some(known) = missing.iter_mut().find(|m| m.program == tool) {
            known.checks.push(check);
            continue;
        }
        let installed = installed_in_node_modules(&cwd, tool)
            || (on_path && which::which_in(tool, path, &cwd).is_ok());
        if !installed {
            missing.push(MissingProgram {
                program: tool.to_string(),
                checks: vec![check],
                // The TypeScript compiler comes in `typescript`; the
                // package named `tsc` is another thing.
                dependency: Some((
                    manager,
                    if tool == "tsc" { "typescript" } else { tool }.to_string(),
                )),
                venv: None,
            });
        }
    }
    missing
}

/// The Python virtual environments (relative to `root`) that the checks
/// `init` writes for `detected` run in: the root's for a Python project
/// there, else those of the Python projects below it.
pub fn project_venvs(detected: &Detected, root: &Path) -> Vec<std::path::PathBuf> {
    let dirs: Vec<std::path::PathBuf> = if detected.below.is_empty() {
        if matches!(detected.languages.first(), Some(Language::Python(_))) {
            vec![root.to_path_buf()]
        } else {
            Vec::new()
        }
    } else {
        detected
            .below
            .iter()
            .filter(|p| p.languages.iter().any(|l| matches!(l, Language::Python(_))))
            .map(|p| root.join(&p.dir))
            .collect()
    };
    let mut venvs = Vec::new();
    for dir in dirs {
        if let Some(venv) = crate::runner::project_venv(&dir, root) {
            let venv = venv
                .strip_prefix(root)
                .map(Path::to_path_buf)
                .unwrap_or(venv);
            if !venvs.contains(&venv) {
                venvs.push(venv);
            }
        }
    }
    venvs
}

/// The Python projects among those `detected` whose checks run their
/// tools through poetry or pipenv, each with its directory relative to the
/// root (`None` for the root's).
pub fn python_runners(detected: &Detected) -> Vec<(Option<&str>, PythonRunner)> {
    let runner = |language: &Language| match language {
        Language::Python(tools) => tools.runner,
        _ => None,
    };
    if detected.below.is_empty() {
        detected
            .languages
            .first()
            .and_then(runner)
            .map(|r| (None, r))
            .into_iter()
            .collect()
    } else {
        detected
            .below
            .iter()
            .filter_map(|p| {
                p.languages
                    .iter()
                    .find_map(runner)
                    .map(|r| (Some(p.dir.as_str()), r))
            })
            .collect()
    }
}

/// A commented `phasegate.toml` for the project at `root`.
pub fn init_template(detected: &Detected) -> String {
    let languages = &detected.languages;
    let nested = &detected.below;
    // A root whose language has nothing to run, over projects below it
    // (an npm workspace's root): the projects are what the file checks.
    let language = languages.first().filter(|_| nested.is_empty());
    let commands = language.map(Language::commands).unwrap_or_default();
    let mut text = String::new();
    text.push_str("# phasegate configuration; phasegate's README describes every option.\n");
    let written_for = match language {
        Some(language) => format!("a {} project", language.name()),
        None if nested.is_empty() => "a project of no known language".to_string(),
        None => "a repository with no project at its root (a monorepo)".to_string(),
    };
    text.push_str(&format!(
        "# Written by `phasegate init` for {written_for}.\n# Every key is optional unless marked otherwise.\n\n"
    ));
    text.push_str(
        "[gate]\n\
         # strict: everything blocks, warnings too; auto: fail closed (missing tools,\n\
         # timeouts and crashes block); fast: fail open, with a visible warning.\n\
         profile = \"auto\"\n\
         # The phase `phasegate run` checks when neither --phase, PHASEGATE_PHASE nor\n\
         # a handoff document says otherwise.\n\
         default_phase = \"implementation\"\n\
         # How many failed handoff attempts before a person is asked to step in.\n\
         max_retries = 3\n\n",
    );
    text.push_str(
        "# The project's commands. A check without its own `command` takes the\n\
         # command of its name from here. Commands are split like a shell would but\n\
         # run without one; give a check `shell = true` for pipes and redirections.\n\
         [commands]\n",
    );
    // Nothing known to run: the commands and their checks are offered
    // together, as a command that no phase lists is never run.
    let offered = commands.is_empty() && nested.is_empty();
    let node_offered = language.and_then(Language::offered_commands);
    if let Some(node) = &node_offered {
        // A Node project all the same: the header says so, and a run
        // must not pass on it without the file saying why nothing runs.
        text.push_str(
            "# package.json has no `test`, `lint` or `build` script to run (the `test`\n\
             # script `npm init` writes fails on purpose and is not one) and there is\n\
             # no tsconfig.json, so no check runs yet: add the scripts, then uncomment\n\
             # their commands here and their checks in the phases.\n",
        );
        for (name, command) in node {
            text.push_str(&format!("# {name} = {}\n", quoted(command)));
        }
    } else if offered {
        text.push_str(
            "# No project phasegate knows is here, so no check runs yet: write the\n\
             # project's commands here, then uncomment their checks in the phases.\n\
             # tests = \"make test\"\n\
             # lint = \"make lint\"\n",
        );
    }
    for (name, command) in &commands {
        if let Some(note) = language.and_then(|l| l.command_note(name, command)) {
            text.push_str(note);
        }
        text.push_str(&format!("{name} = {}\n", quoted(command)));
    }
    if let Some(untested) = language.and_then(Language::untested) {
        text.push_str(untested.comment);
        text.push_str(&format!("# tests = {}\n", quoted(untested.command)));
    }
    if let Some(format) = language.and_then(Language::format_check) {
        text.push_str(&format!(
            "# A formatting check: uncomment, and add {{ name = \"format\" }} to a phase.\n# format = {}\n",
            quoted(format)
        ));
    }
    text.push('\n');
    // A monorepo: the commands above are the first language's; the others'
    // are offered as checks with their own command, so none is left
    // unchecked without the file saying so.
    for other in unchecked_languages(languages) {
        text.push_str(&format!(
            "# Also here: a {} project. The commands above do not check it;\n\
             # to check it too, add checks with their own `command` to a phase:\n",
            other.name()
        ));
        for (name, command) in other.commands() {
            text.push_str(&offered_check(&format!("{}-{name}", other.slug()), command));
        }
        text.push('\n');
    }
    // Projects in directories below a root that is none: the phases check
    // each of them, every check in its project's directory (`cwd`).
    // They are the checks the embedded default runs without this file.
    let nested_checks = if language.is_none() {
        nested_checks(nested)
    } else {
        Vec::new()
    };
    if !nested_checks.is_empty() {
        text.push_str(&format!(
            "# No project at the root: the phases below check {}, each\n\
             # check with its own `command`, run in its project's directory (`cwd`),\n\
             # named after that directory, and only when a selected file is in that\n\
             # directory (`files`; remove it to run the check on every commit).\n\n",
            nested_names(nested).unwrap_or_default()
        ));
    }
    text.push_str(
        "# Each phase lists its checks. Per check: name (required), command, files\n\
         # (globs, read as in .gitignore; the check runs only when a selected file\n\
         # matches, and `{files}` in its command receives them), timeout (\"90s\",\n\
         # \"10m\" or a number of seconds; default 10m), env, cwd, shell, parser\n\
         # (\"auto\", a parser name, or a regex with named groups `file` and\n\
         # `line`), origin, on_failure (block | warn | skip) and\n\
         # on_missing (block | warn | skip: what a missing tool means under `auto`).\n\
         # `checks = []` runs no check in a phase.\n",
    );
    let names: Vec<&str> = commands.iter().map(|(n, _)| *n).collect();
    if let Some(node) = &node_offered {
        let names: Vec<&str> = node.iter().map(|(n, _)| *n).collect();
        text.push_str(&default_phases(&names, true, true));
    } else if offered {
        text.push_str(&default_phases(&["tests", "lint"], true, true));
    } else if nested_checks.is_empty() {
        text.push_str(&default_phases(&names, true, false));
    } else {
        text.push_str(&nested_phases(&nested_checks, &[], true));
    }
    text.push_str(
        "# A workflow replaces the checks of some phases: `phasegate run --workflow quick`.\n\
         # [workflows.quick.phases.implementation]\n\
         # checks = []\n\n",
    );
    text.push_str(
        "[handoff]\n\
         # Where the handoff documents live (`[]` for none).\n\
         paths = [\"handoffs/**/*.md\"]\n",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn languages_are_detected_from_their_files() {
        assert_eq!(
            detect_language(project(&[("Cargo.toml", "")]).path()),
            Some(Language::Rust)
        );
        assert_eq!(
            detect_language(project(&[("go.mod", "")]).path()),
            Some(Language::Go)
        );
        assert_eq!(
            detect_language(project(&[("pyproject.toml", "")]).path()),
            Some(Language::Python(PythonTools::default()))
        );
        assert_eq!(detect_language(project(&[("README.md", "")]).path()), None);
        let node = project(&[
            (
                "package.json",
                r#"{"scripts": {"test": "x", "build": "y"}}"#,
            ),
            ("yarn.lock", ""),
            ("tsconfig.json", "{}"),
        ]);
        let language = detect_language(node.path()).unwrap();
        assert_eq!(language.name(), "node (yarn)");
        assert_eq!(
            language.commands(),
            [
                ("tests", "yarn test"),
                ("build", "yarn run build"),
                ("typecheck", "yarn tsc --noEmit")
            ]
        );
    }

    #[test]
    fn node_package_managers_follow_the_lock_file() {
        for (lock, test) in [
            ("bun.lock", "bun run test"),
            ("bun.lockb", "bun run test"),
            ("pnpm-lock.yaml", "pnpm test"),
            ("package-lock.json", "npm test"),
        ] {
            let dir = project(&[
                ("package.json", r#"{"scripts": {"test": "vitest run"}}"#),
                (lock, ""),
            ]);
            assert_eq!(
                detect_language(dir.path()).unwrap().commands()[0].1,
                test,
                "{lock}"
            );
        }
    }

    #[test]
    fn node_tests_run_only_when_there_is_a_real_test_script() {
        for package in [
            r#"{"name": "x"}"#,
            r#"{"scripts": {"build": "tsc"}}"#,
            r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            r#"{"scripts": {"test": ""}}"#,
        ] {
            let dir = project(&[("package.json", package), ("package-lock.json", "")]);
            let language = detect_language(dir.path()).unwrap();
            assert!(
                language.commands().iter().all(|(name, _)| *name != "tests"),
                "{package}: {:?}",
                language.commands()
            );
        }
    }

    #[test]
    fn a_package_json_that_cannot_be_read_runs_the_tests_to_say_why() {
        // Read as "no scripts", it ran nothing, and the run passed.
        for package in [
            "not json",
            "{\"scripts\": {\"test\": \"jest\",}}",
            "[1]",
            "\u{feff}{",
        ] {
            let dir = project(&[("package.json", package), ("package-lock.json", "")]);
            let language = detect_language(dir.path()).unwrap();
            assert_eq!(
                language.commands().first(),
                Some(&("tests", "npm test")),
                "{package}"
            );
        }
    }

    #[test]
    fn nested_projects_are_found_two_deep_and_never_in_what_tools_install() {
        let dir = project(&[]);
        for (path, text) in [
            ("api/go.mod", "module x\n"),
            // Beneath a project: its own business (a Go module's testdata).
            ("api/testdata/Cargo.toml", ""),
            (
                "packages/web/package.json",
                r#"{"scripts": {"test": "jest"}}"#,
            ),
            // Nothing to run: no project to name.
            ("packages/types/package.json", r#"{"name": "types"}"#),
            (
                "node_modules/left-pad/package.json",
                r#"{"scripts": {"test": "x"}}"#,
            ),
            (".venv/lib/pyproject.toml", ""),
            ("a/b/c/Cargo.toml", ""),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let found = projects_below(dir.path());
        let dirs: Vec<&str> = found.iter().map(|p| p.dir.as_str()).collect();
        assert_eq!(dirs, ["api", "packages/web"]);
        assert_eq!(
            nested_names(&found).as_deref(),
            Some("go in `api/` and node in `packages/web/`")
        );
    }

    #[test]
    fn tracked_paths_name_projects_two_deep_outside_what_is_vendored_or_hidden() {
        let paths: Vec<String> = [
            "README.md",
            "Cargo.toml.orig",
            "api/Cargo.toml",
            "api/src/lib.rs",
            "api/crates/x/Cargo.toml",
            "services/auth/go.mod",
            "services/auth/deep/er/go.mod",
            "third_party/zlib/setup.py",
            "vendor/x/go.mod",
            ".github/actions/x/package.json",
            "docs/pyproject.toml",
        ]
        .map(String::from)
        .to_vec();
        let found = projects_among(&paths, |_| None);
        let dirs: Vec<&str> = found.iter().map(|p| p.dir.as_str()).collect();
        assert_eq!(dirs, ["api", "docs", "services/auth"]);
    }

    #[test]
    fn a_commits_tree_is_read_only_where_its_markers_can_be() {
        for dir in ["api", "packages", "packages/web"] {
            assert!(looked_into(dir.as_bytes()), "{dir}");
        }
        // Its files would be three deep; what is installed, vendored or
        // hidden holds no project of the repository.
        for dir in ["packages/web/src", "node_modules", "api/vendor", ".github"] {
            assert!(!looked_into(dir.as_bytes()), "{dir}");
        }
        assert!(!looked_into(b"caf\xe9"));
    }

    #[test]
    fn check_names_tell_every_project_apart() {
        let project = |dir: &str, languages: Vec<Language>| NestedProject {
            dir: dir.to_string(),
            languages,
        };
        let checks = nested_checks(&[
            project("Web-app", vec![Language::Python(PythonTools::default())]),
            project(
                "web/app",
                vec![Language::Go, Language::Python(PythonTools::default())],
            ),
        ]);
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Web-app-tests",
                "Web-app-lint",
                "Web-app-typecheck",
                "web-app-2-tests",
                "web-app-2-lint",
                "web-app-2-build",
                "web-app-2-typecheck",
                "web-app-2-python-tests",
                "web-app-2-python-lint",
                "web-app-2-python-typecheck",
            ]
        );
        assert!(checks[3]
            .toml()
            .contains(r#"cwd = "web/app", files = ["web/app/**"]"#));
    }

    #[test]
    fn a_tsconfig_without_package_json_runs_no_package_manager() {
        let language = detect_language(project(&[("tsconfig.json", "{}")]).path()).unwrap();
        assert_eq!(language.commands(), [("typecheck", "tsc --noEmit")]);
        assert_eq!(language.name(), "typescript (no package.json)");
    }
}
