//! What the tools a check runs read as their configuration: the program a
//! command runs as its tool (through `npx`, `uv run`, `python -m`, ...),
//! and one table of each tool's configuration files and how it finds
//! them. It reads no file itself: `configuration` looks the files up in
//! each version and compares them as it compares scripts.

/// Where a tool looks for a file of its configuration, from the directory
/// it runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lookup {
    /// That directory alone.
    Here,
    /// That directory, else the nearest one above it up to the root that
    /// holds one of the tool's `Nearest` files (a shared file counting
    /// only when it holds the tool's section): the tool reads that one.
    Nearest,
    /// That directory and every one above it up to the root: the tool
    /// reads them all (eslint's cascading `.eslintrc`, cargo's workspace).
    Every,
}

/// How a section of a shared file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// A table of a TOML file, by its keys (`tool.ruff`).
    Toml,
    /// The sections of an INI file (`setup.cfg`, `tox.ini`) of these names;
    /// a name that ends in `*` stands for every section it starts
    /// (`mypy-*`, mypy's settings per module).
    Ini,
    /// A key of a JSON file's top-level object (`jest` of `package.json`).
    Json,
}

/// The part of a shared file a tool reads: only that part is compared,
/// so a version bump elsewhere in `pyproject.toml` changes nothing.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Section {
    pub format: Format,
    pub keys: &'static [&'static str],
    /// How a message names it: `[tool.ruff]`.
    pub shown: &'static str,
}

/// A file of a tool's configuration: its name in a directory, the section
/// the tool reads of it (`None`: all of it), and how the tool finds it.
#[derive(Debug)]
pub(super) struct ConfigFile {
    pub name: &'static str,
    pub section: Option<&'static Section>,
    pub lookup: Lookup,
    /// Whether the tool also reads the file in the directories below the
    /// one it runs in, for the files it checks there (ruff's closest
    /// `ruff.toml` to each file, a workspace member's `clippy.toml`).
    pub below: bool,
}

impl ConfigFile {
    /// The file, read in the directories below too.
    const fn below(self) -> ConfigFile {
        ConfigFile {
            below: true,
            ..self
        }
    }
}

/// A tool and the files it reads as its configuration.
#[derive(Debug)]
pub(super) struct Tool {
    /// How a message names it.
    pub name: &'static str,
    /// The programs (or `python -m` modules) that are this tool.
    pub programs: &'static [&'static str],
    pub files: &'static [ConfigFile],
    /// Options that name the configuration file instead (`eslint -c
    /// FILE`): the tool reads that one, and looks for none.
    pub options: &'static [&'static str],
    /// Whether a file of it names another it builds on (`extends` of a
    /// `tsconfig.json`).
    pub extends: bool,
}

const fn whole(name: &'static str, lookup: Lookup) -> ConfigFile {
    ConfigFile {
        name,
        section: None,
        lookup,
        below: false,
    }
}

const fn part(name: &'static str, section: &'static Section, lookup: Lookup) -> ConfigFile {
    ConfigFile {
        name,
        section: Some(section),
        lookup,
        below: false,
    }
}

const TOOL_RUFF: Section = Section {
    format: Format::Toml,
    keys: &["tool", "ruff"],
    shown: "[tool.ruff]",
};
const TOOL_MYPY: Section = Section {
    format: Format::Toml,
    keys: &["tool", "mypy"],
    shown: "[tool.mypy]",
};
const INI_MYPY: Section = Section {
    format: Format::Ini,
    keys: &["mypy", "mypy-*"],
    shown: "[mypy]",
};
const TOOL_PYRIGHT: Section = Section {
    format: Format::Toml,
    keys: &["tool", "pyright"],
    shown: "[tool.pyright]",
};
const TOOL_BASEDPYRIGHT: Section = Section {
    format: Format::Toml,
    keys: &["tool", "basedpyright"],
    shown: "[tool.basedpyright]",
};
// `[tool.pytest.ini_options]`, and pytest 9's own `[tool.pytest]`, which
// holds it.
const TOOL_PYTEST: Section = Section {
    format: Format::Toml,
    keys: &["tool", "pytest"],
    shown: "[tool.pytest.ini_options]",
};
const TOX_PYTEST: Section = Section {
    format: Format::Ini,
    keys: &["pytest"],
    shown: "[pytest]",
};
const SETUP_PYTEST: Section = Section {
    format: Format::Ini,
    keys: &["tool:pytest"],
    shown: "[tool:pytest]",
};
const PACKAGE_ESLINT: Section = Section {
    format: Format::Json,
    keys: &["eslintConfig"],
    shown: "`eslintConfig`",
};
const PACKAGE_JEST: Section = Section {
    format: Format::Json,
    keys: &["jest"],
    shown: "`jest`",
};
const CARGO_LINTS: Section = Section {
    format: Format::Toml,
    keys: &["lints"],
    shown: "[lints]",
};
const CARGO_WORKSPACE_LINTS: Section = Section {
    format: Format::Toml,
    keys: &["workspace", "lints"],
    shown: "[workspace.lints]",
};

use Lookup::{Every, Here, Nearest};

/// The tools whose configuration a branch may weaken, and what each
/// reads, as its documentation says it looks. A file that names the
/// configuration among several in one directory (ruff's `.ruff.toml`
/// before `ruff.toml`) is not told apart: each is compared. The tools
/// with no file read `below` take one configuration for the whole run
/// (mypy, pyright, pytest's rootdir, tsc, jest, vitest, golangci-lint), or
/// read it only where they run (markdownlint-cli).
pub(super) const TOOLS: &[Tool] = &[
    // tsc looks for `tsconfig.json` from where it runs up.
    Tool {
        name: "tsc",
        programs: &["tsc", "vue-tsc"],
        files: &[whole("tsconfig.json", Nearest)],
        options: &["-p", "--project"],
        extends: true,
    },
    // A flat config is the nearest one: eslint 9 looks from where it
    // runs, eslint 10 (and 9 with `unstable_config_lookup_from_file`)
    // from each linted file's directory, so a nested one decides below
    // it. The older `.eslintrc*` (eslint 8, or `ESLINT_USE_FLAT_CONFIG=
    // false`) cascade by directory, each linted file's on top of its
    // parents'.
    Tool {
        name: "eslint",
        programs: &["eslint"],
        files: &[
            whole("eslint.config.js", Nearest).below(),
            whole("eslint.config.mjs", Nearest).below(),
            whole("eslint.config.cjs", Nearest).below(),
            whole("eslint.config.ts", Nearest).below(),
            whole("eslint.config.mts", Nearest).below(),
            whole("eslint.config.cts", Nearest).below(),
            whole(".eslintrc", Every).below(),
            whole(".eslintrc.js", Every).below(),
            whole(".eslintrc.cjs", Every).below(),
            whole(".eslintrc.yaml", Every).below(),
            whole(".eslintrc.yml", Every).below(),
            whole(".eslintrc.json", Every).below(),
            part("package.json", &PACKAGE_ESLINT, Every).below(),
            whole(".eslintignore", Here),
        ],
        options: &["-c", "--config"],
        extends: false,
    },
    // ruff uses, for each file it checks, the closest file of these to
    // that file (its hierarchical configuration): one below where it runs
    // decides for the files under it, unless `--config` names one.
    Tool {
        name: "ruff",
        programs: &["ruff"],
        files: &[
            whole(".ruff.toml", Nearest).below(),
            whole("ruff.toml", Nearest).below(),
            part("pyproject.toml", &TOOL_RUFF, Nearest).below(),
        ],
        options: &["--config"],
        extends: false,
    },
    Tool {
        name: "mypy",
        programs: &["mypy", "dmypy"],
        files: &[
            whole("mypy.ini", Nearest),
            whole(".mypy.ini", Nearest),
            part("pyproject.toml", &TOOL_MYPY, Nearest),
            part("setup.cfg", &INI_MYPY, Nearest),
        ],
        options: &["--config-file"],
        extends: false,
    },
    Tool {
        name: "pyright",
        programs: &["pyright", "basedpyright"],
        files: &[
            whole("pyrightconfig.json", Nearest),
            part("pyproject.toml", &TOOL_PYRIGHT, Nearest),
            part("pyproject.toml", &TOOL_BASEDPYRIGHT, Nearest),
        ],
        options: &["-p", "--project"],
        extends: false,
    },
    // pytest's rootdir: the first of these, from where it runs up, that
    // holds its section (`pytest.ini` always does).
    Tool {
        name: "pytest",
        programs: &["pytest", "py.test"],
        files: &[
            whole("pytest.ini", Nearest),
            whole(".pytest.ini", Nearest),
            part("pyproject.toml", &TOOL_PYTEST, Nearest),
            part("tox.ini", &TOX_PYTEST, Nearest),
            part("setup.cfg", &SETUP_PYTEST, Nearest),
        ],
        options: &["-c", "--config-file"],
        extends: false,
    },
    Tool {
        name: "jest",
        programs: &["jest"],
        files: &[
            whole("jest.config.js", Nearest),
            whole("jest.config.ts", Nearest),
            whole("jest.config.mjs", Nearest),
            whole("jest.config.cjs", Nearest),
            whole("jest.config.json", Nearest),
            part("package.json", &PACKAGE_JEST, Nearest),
        ],
        options: &["-c", "--config"],
        extends: false,
    },
    // vitest reads the configuration of the project root, where it runs.
    Tool {
        name: "vitest",
        programs: &["vitest"],
        files: &[
            whole("vitest.config.ts", Here),
            whole("vitest.config.js", Here),
            whole("vitest.config.mjs", Here),
            whole("vitest.config.cjs", Here),
            whole("vitest.config.mts", Here),
            whole("vitest.config.cts", Here),
            whole("vite.config.ts", Here),
            whole("vite.config.js", Here),
            whole("vite.config.mjs", Here),
            whole("vite.config.cjs", Here),
            whole("vite.config.mts", Here),
            whole("vite.config.cts", Here),
        ],
        options: &["-c", "--config"],
        extends: false,
    },
    Tool {
        name: "golangci-lint",
        programs: &["golangci-lint"],
        files: &[
            whole(".golangci.yml", Nearest),
            whole(".golangci.yaml", Nearest),
            whole(".golangci.toml", Nearest),
            whole(".golangci.json", Nearest),
        ],
        options: &["-c", "--config"],
        extends: false,
    },
    // markdownlint-cli reads its file where it runs, and `.markdownlintrc`
    // from there up.
    Tool {
        name: "markdownlint",
        programs: &["markdownlint"],
        files: &[
            whole(".markdownlint.jsonc", Here),
            whole(".markdownlint.json", Here),
            whole(".markdownlint.yaml", Here),
            whole(".markdownlint.yml", Here),
            whole(".markdownlintrc", Every),
        ],
        options: &["-c", "--config"],
        extends: false,
    },
    // markdownlint-cli2 reads its files where it runs and in every
    // directory of the files it lints.
    Tool {
        name: "markdownlint-cli2",
        programs: &["markdownlint-cli2"],
        files: &[
            whole(".markdownlint-cli2.jsonc", Here).below(),
            whole(".markdownlint-cli2.yaml", Here).below(),
            whole(".markdownlint-cli2.cjs", Here).below(),
            whole(".markdownlint-cli2.mjs", Here).below(),
            whole(".markdownlint.jsonc", Here).below(),
            whole(".markdownlint.json", Here).below(),
            whole(".markdownlint.yaml", Here).below(),
            whole(".markdownlint.yml", Here).below(),
            whole(".markdownlint.cjs", Here).below(),
            whole(".markdownlint.mjs", Here).below(),
        ],
        options: &["--config"],
        extends: false,
    },
    // clippy looks for its file from the package's directory up; the lint
    // levels of `Cargo.toml` are the package's, or its workspace's for a
    // package whose `[lints]` says `workspace = true`. In a workspace each
    // member is linted from its own directory, below where cargo runs,
    // with its own file and lint levels; a `[workspace.lints]` below where
    // cargo runs is another workspace's, read when `--manifest-path`
    // builds a package of it.
    Tool {
        name: "cargo clippy",
        programs: &["cargo-clippy", "clippy-driver"],
        files: &[
            whole("clippy.toml", Nearest).below(),
            whole(".clippy.toml", Nearest).below(),
            part("Cargo.toml", &CARGO_LINTS, Every).below(),
            part("Cargo.toml", &CARGO_WORKSPACE_LINTS, Every).below(),
        ],
        options: &[],
        extends: false,
    },
    // What compiles the code obeys the lint levels of `Cargo.toml` too
    // (`unsafe_code = "forbid"`, `warnings = "deny"`), each member's own.
    Tool {
        name: "cargo",
        programs: &[],
        files: &[
            part("Cargo.toml", &CARGO_LINTS, Every).below(),
            part("Cargo.toml", &CARGO_WORKSPACE_LINTS, Every).below(),
        ],
        options: &[],
        extends: false,
    },
];

/// The cargo commands that compile the code, and so obey its lint levels.
const CARGO_COMPILING: &[&str] = &[
    "build", "b", "check", "c", "test", "t", "bench", "rustc", "doc", "d", "run", "r", "nextest",
];

/// Options of the runners below that take the next word as their value.
const VALUE_OPTIONS: &[&str] = &[
    "-p",
    "--package",
    "-c",
    "--call",
    "-C",
    "--prefix",
    "--dir",
    "--cwd",
    "--directory",
    "--filter",
    "-F",
    "--with",
    "--python",
    "--project",
    "--workspace",
    "--from",
    "--env-file",
    "--extra",
    "--group",
];

/// The words from the first that is no option (nor an option's value) on.
fn after_options(words: &[String]) -> &[String] {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        if word == "--" {
            return &words[at + 1..];
        }
        if !word.starts_with('-') {
            return &words[at..];
        }
        at += if VALUE_OPTIONS.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    &[]
}

/// The tool the simple command `words` (from its program on) runs, with
/// the words after the tool's name: the program itself, or the one a
/// runner starts (`npx`, `bunx`, `pnpm exec`, `yarn`, `uv run`,
/// `poetry run`, `python -m`), also in turn (`uv run python -m pytest`).
/// `is_script` says whether a package manager's word names a script of
/// its `package.json` (`yarn lint` runs the script, `yarn tsc` the tool).
pub(super) fn tool_of<'w>(
    words: &'w [String],
    is_script: &dyn Fn(&str) -> bool,
) -> Option<(&'static Tool, &'w [String])> {
    let mut words = words;
    // A runner of a runner of a runner is as far as anyone goes.
    for _ in 0..4 {
        let (program, rest) = words.split_first()?;
        let base = program.rsplit('/').next().unwrap_or(program);
        if let Some(tool) = TOOLS.iter().find(|tool| tool.programs.contains(&base)) {
            return Some((tool, rest));
        }
        words = match base {
            "npx" | "bunx" | "pnpx" | "uvx" => after_options(rest),
            "npm" | "pnpm" | "yarn" | "bun" => {
                let rest = after_options(rest);
                let (first, after) = rest.split_first()?;
                match first.as_str() {
                    "exec" | "x" | "dlx" => after_options(after),
                    "run" | "run-script" if base != "npm" => {
                        let after = after_options(after);
                        if is_script(after.first()?) {
                            return None;
                        }
                        after
                    }
                    // npm runs no program named as its subcommand; the
                    // others run the script of that name, else the
                    // program.
                    word if base != "npm" && !super::MANAGER_BUILTINS.contains(&word) => {
                        if is_script(word) {
                            return None;
                        }
                        rest
                    }
                    _ => return None,
                }
            }
            "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "pipx" => {
                let rest = after_options(rest);
                match rest.split_first() {
                    Some((run, after)) if run == "run" => after_options(after),
                    _ => return None,
                }
            }
            "cargo" => {
                let name = super::cargo_subcommand(rest)?;
                let tool = if name == "clippy" {
                    "cargo clippy"
                } else if CARGO_COMPILING.contains(&name) {
                    "cargo"
                } else {
                    return None;
                };
                let after = rest
                    .iter()
                    .position(|word| word == name)
                    .map_or(rest, |at| &rest[at + 1..]);
                return TOOLS
                    .iter()
                    .find(|one| one.name == tool)
                    .map(|one| (one, after));
            }
            python if python.starts_with("python") => {
                let at = rest.iter().position(|word| word == "-m")?;
                // `-m` must come before the script an interpreter runs.
                if rest[..at].iter().any(|word| !word.starts_with('-')) {
                    return None;
                }
                &rest[at + 1..]
            }
            _ => return None,
        };
    }
    None
}

/// The files the words after a tool's name (`args`) name as its
/// configuration, by one of its `options` (`-c FILE`, `--config=FILE`).
pub(super) fn named_files<'w>(tool: &Tool, args: &'w [String]) -> Vec<&'w str> {
    let mut found = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if tool.options.contains(&word.as_str()) {
            found.extend(words.next().map(String::as_str));
        } else if let Some((option, value)) = word.split_once('=') {
            if tool.options.contains(&option) {
                found.push(value);
            }
        }
    }
    found
}

/// Which packages a cargo command builds, as its own options choose them
/// (cargo's package selection): `--workspace` (`--all`) less `--exclude`,
/// the packages `-p`/`--package` names (globs allowed), else the package
/// of the manifest cargo finds (`--manifest-path`'s, or the nearest), or
/// at a workspace's root its `default-members` (with none, its own
/// package, or every member of a virtual manifest). `--no-deps` (clippy's)
/// lints the chosen packages alone, not the members they depend on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(super) struct PackageSelection {
    pub workspace: bool,
    pub packages: Vec<String>,
    pub exclude: Vec<String>,
    pub manifest_path: Option<String>,
    pub no_deps: bool,
}

impl PackageSelection {
    /// The selection the words after a cargo subcommand's name (`args`)
    /// make. clippy takes `--no-deps` after `--` as well.
    pub fn of(args: &[String]) -> PackageSelection {
        let mut selection = PackageSelection::default();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            if word == "--" {
                selection.no_deps |= words.any(|word| word == "--no-deps");
                break;
            }
            let (option, attached) = match word.split_once('=') {
                Some((option, value)) if option.starts_with("--") => (option, Some(value)),
                _ => match word.strip_prefix("-p").filter(|rest| !rest.is_empty()) {
                    Some(value) => ("-p", Some(value)),
                    None => (word.as_str(), None),
                },
            };
            let mut value = || {
                attached
                    .map(str::to_string)
                    .or_else(|| words.next().cloned())
            };
            match option {
                "--workspace" | "--all" => selection.workspace = true,
                "--no-deps" => selection.no_deps = true,
                "-p" | "--package" => selection.packages.extend(value()),
                "--exclude" => selection.exclude.extend(value()),
                "--manifest-path" => selection.manifest_path = value(),
                _ => {}
            }
        }
        selection
    }

    /// Whether a package of this name is among `patterns` (cargo's
    /// package specifications: a name, a glob, `name@version`).
    pub fn names(patterns: &[String], name: &str) -> bool {
        patterns.iter().any(|pattern| {
            let pattern = pattern.split_once('@').map_or(pattern.as_str(), |(n, _)| n);
            if pattern.contains(['*', '?', '[']) {
                globset::Glob::new(pattern).is_ok_and(|glob| glob.compile_matcher().is_match(name))
            } else {
                pattern == name
            }
        })
    }
}

/// Whether eslint given `-c FILE` (`args`, the words after its name) still
/// reads the `.eslintrc*` cascade of the linted files' directories. Its
/// older mode does: `-c` adds a file over the cascade ("overriding
/// .eslintrc.* config options if present", eslint 8's `--help`), unless
/// `--no-eslintrc` is given. A flat config (eslint 9's default, or
/// `ESLINT_USE_FLAT_CONFIG=true` in `flat`) given by `-c` is the only one
/// read; a file of a flat config's name (`eslint.config.js`) given by `-c`
/// is one, as the older mode cannot load it. Where the mode cannot be
/// told, the cascade counts: a change to it is never passed over.
pub(super) fn eslint_cascade(args: &[String], named: &[&str], flat: Option<&str>) -> bool {
    let before_files = args.iter().take_while(|word| *word != "--");
    if before_files.clone().any(|word| word == "--no-eslintrc") {
        return false;
    }
    if flat.is_some_and(|value| value.eq_ignore_ascii_case("true")) {
        return false;
    }
    let flat_name = |name: &&str| {
        let base = name.rsplit('/').next().unwrap_or(name);
        base.starts_with("eslint.config.")
    };
    named.is_empty() || !named.iter().all(flat_name)
}

/// Whether `file` (a name of eslint's table) belongs to its older mode's
/// cascade (`.eslintrc*`, `package.json`'s `eslintConfig`,
/// `.eslintignore`), not to a flat config.
pub(super) fn eslintrc_file(file: &ConfigFile) -> bool {
    !file.name.starts_with("eslint.config.")
}

/// The names of eslint's older mode's configuration files in a
/// directory, in the order it tries them: it reads the first one there
/// (`package.json` only when it holds `eslintConfig`) and no other
/// (`configFilenames` of `@eslint/eslintrc`).
pub(super) const ESLINTRC_NAMES: [&str; 7] = [
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    ".eslintrc.json",
    ".eslintrc",
    "package.json",
];

/// What a file of eslint's older mode says of its cascade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EslintrcRoot {
    /// No configuration: a `package.json` without `eslintConfig`, which
    /// eslint passes over for the next name.
    NoConfig,
    /// `root: true`: eslint reads no file in the directories above.
    Root,
    /// A configuration that lets the cascade go on up.
    NotRoot,
    /// A configuration whose `root` cannot be told without running it.
    Unknown,
}

/// What the file `name` (one of `ESLINTRC_NAMES`) holding `bytes` says of
/// the cascade. eslint reads `.eslintrc.json` and `package.json` as JSON
/// with comments, `.eslintrc.yaml`, `.eslintrc.yml` and the extensionless
/// `.eslintrc` as YAML, and a `root` that is not the boolean `true` lets
/// the cascade go on (its `ConfigArray#isRoot` looks for a boolean). A
/// JavaScript file (`.eslintrc.js`, `.eslintrc.cjs`) is a program that
/// only node can evaluate, and one that does not parse may mean anything:
/// both are `Unknown`, so the files above them still count and a change
/// to them is never passed over.
pub(super) fn eslintrc_root(name: &str, bytes: &[u8]) -> EslintrcRoot {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return EslintrcRoot::Unknown;
    };
    let says = |root: bool| {
        if root {
            EslintrcRoot::Root
        } else {
            EslintrcRoot::NotRoot
        }
    };
    match name {
        ".eslintrc.json" | "package.json" => {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&plain_json(text)) else {
                return EslintrcRoot::Unknown;
            };
            let config = if name == "package.json" {
                match value.get("eslintConfig") {
                    Some(config) => config,
                    None => return EslintrcRoot::NoConfig,
                }
            } else {
                &value
            };
            says(config.get("root") == Some(&serde_json::Value::Bool(true)))
        }
        ".eslintrc.yaml" | ".eslintrc.yml" | ".eslintrc" => {
            use crate::handoff::yaml;
            let text = text.trim_start_matches('\u{feff}');
            let document = crate::handoff::extract::Frontmatter {
                yaml: text,
                offset: 0,
                first_line: 1,
                closing_line: text.lines().count() + 1,
            };
            match yaml::parse(&document) {
                // A key given twice is an error to eslint's YAML reader.
                Ok((_, duplicates)) if !duplicates.is_empty() => EslintrcRoot::Unknown,
                Ok((None, _)) => EslintrcRoot::NotRoot,
                Ok((Some(root), _)) => match &root.value {
                    yaml::Value::Map(_) => says(matches!(
                        root.get("root").map(|node| &node.value),
                        Some(yaml::Value::Bool(true))
                    )),
                    _ => EslintrcRoot::Unknown,
                },
                Err(_) => EslintrcRoot::Unknown,
            }
        }
        _ => EslintrcRoot::Unknown,
    }
}

/// A section as a version of its file holds it, to compare.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum SectionValue {
    Toml(toml::Value),
    Json(serde_json::Value),
    /// The sections' lines, blank lines and comments left out.
    Ini(Vec<(String, Vec<String>)>),
    /// A file that does not parse: its bytes.
    Unreadable(Vec<u8>),
}

/// The section of `bytes` (a file's), with the line that starts it; `None`
/// when the file does not hold it.
pub(super) fn section_of(section: &Section, bytes: &[u8]) -> Option<(SectionValue, Option<u32>)> {
    let unreadable = || Some((SectionValue::Unreadable(bytes.to_vec()), None));
    let Ok(text) = std::str::from_utf8(bytes) else {
        return unreadable();
    };
    let text = text.trim_start_matches('\u{feff}');
    let line_at = |offset: usize| u32::try_from(text[..offset].matches('\n').count() + 1).ok();
    match section.format {
        Format::Toml => {
            let Ok(table) = toml::from_str::<toml::Table>(text) else {
                return unreadable();
            };
            let (first, rest) = section.keys.split_first()?;
            let mut value = table.get(*first)?;
            for key in rest {
                value = value.get(key)?;
            }
            let line = toml::de::DeTable::parse(text)
                .ok()
                .and_then(|doc| super::key_line(doc.get_ref(), text, section.keys));
            Some((SectionValue::Toml(value.clone()), line))
        }
        Format::Json => {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
                return unreadable();
            };
            let key = section.keys.first()?;
            let found = value.get(key)?.clone();
            let quoted = format!("\"{key}\"");
            let line = text.find(&quoted).and_then(line_at);
            Some((SectionValue::Json(found), line))
        }
        Format::Ini => {
            let wanted = |name: &str| {
                section.keys.iter().any(|key| match key.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => name == *key,
                })
            };
            let mut found: Vec<(String, Vec<String>)> = Vec::new();
            let mut first_line = None;
            let mut inside = false;
            for (at, line) in text.lines().enumerate() {
                let line = line.trim();
                if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                    inside = wanted(name.trim());
                    if inside {
                        first_line = first_line.or(u32::try_from(at + 1).ok());
                        found.push((name.trim().to_string(), Vec::new()));
                    }
                } else if inside && !line.is_empty() && !line.starts_with(['#', ';']) {
                    if let Some((_, lines)) = found.last_mut() {
                        lines.push(line.to_string());
                    }
                }
            }
            (!found.is_empty()).then_some((SectionValue::Ini(found), first_line))
        }
    }
}

/// The files a `tsconfig.json`'s `extends` names by a relative path (a
/// string or, since TypeScript 5.0, a list), as written; a package's
/// (`@tsconfig/node20`) is no file of the repository.
pub(super) fn extends_of(bytes: &[u8]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&plain_json(text)) else {
        return Vec::new();
    };
    let names: Vec<&str> = match value.get("extends") {
        Some(serde_json::Value::String(one)) => vec![one],
        Some(serde_json::Value::Array(many)) => {
            many.iter().filter_map(serde_json::Value::as_str).collect()
        }
        _ => Vec::new(),
    };
    names
        .into_iter()
        .filter(|name| name.starts_with("./") || name.starts_with("../"))
        .map(str::to_string)
        .collect()
}

/// JSON with comments and trailing commas (what `tsconfig.json` allows)
/// made plain JSON: comments out, a comma before `}` or `]` out.
fn plain_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.trim_start_matches('\u{feff}').chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => while chars.next_if(|&next| next != '\n').is_some() {},
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for next in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            (']' | '}', _) => {
                let kept = out.trim_end().len();
                if out[..kept].ends_with(',') {
                    out.truncate(kept - 1);
                }
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    fn tool(text: &str, scripts: &[&str]) -> Option<(&'static str, Vec<String>)> {
        let words = words(text);
        let is_script = |name: &str| scripts.contains(&name);
        tool_of(&words, &is_script).map(|(tool, args)| (tool.name, args.to_vec()))
    }

    #[test]
    fn the_tool_a_command_runs_is_found_behind_its_runner() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            ("bunx tsc --noEmit", &[], Some("tsc")),
            ("npx --no-install tsc --noEmit", &[], Some("tsc")),
            ("npx -p typescript tsc", &[], Some("tsc")),
            ("pnpm exec eslint .", &[], Some("eslint")),
            ("npm exec -- jest", &[], Some("jest")),
            ("yarn tsc --noEmit", &[], Some("tsc")),
            // A script of that name is what yarn runs: compared as one.
            ("yarn lint", &["lint"], None),
            ("yarn eslint", &["lint"], Some("eslint")),
            ("npm eslint", &[], None),
            ("bun run vitest", &[], Some("vitest")),
            ("uv run --with ruff ruff check .", &[], Some("ruff")),
            ("poetry run pytest -q", &[], Some("pytest")),
            ("uv run python -m pytest", &[], Some("pytest")),
            ("python3 -m mypy src", &[], Some("mypy")),
            ("python script.py -m mypy", &[], None),
            ("./node_modules/.bin/eslint .", &[], Some("eslint")),
            (
                "cargo clippy --all-targets -- -D warnings",
                &[],
                Some("cargo clippy"),
            ),
            ("cargo +nightly test", &[], Some("cargo")),
            ("cargo fmt --check", &[], None),
            ("golangci-lint run ./...", &[], Some("golangci-lint")),
            ("make lint", &[], None),
        ];
        for (command, scripts, expected) in cases {
            assert_eq!(
                tool(command, scripts).map(|(name, _)| name),
                *expected,
                "{command}"
            );
        }
        assert_eq!(
            tool("npx eslint -c ci.config.js .", &[]).map(|(_, args)| args),
            Some(words("-c ci.config.js ."))
        );
    }

    #[test]
    fn a_configuration_file_named_by_option_is_found_in_either_spelling() {
        let eslint = TOOLS.iter().find(|t| t.name == "eslint").unwrap();
        let args = words("-c a.js --config=b.js . -- -c c.js");
        assert_eq!(named_files(eslint, &args), ["a.js", "b.js"]);
    }

    #[test]
    fn a_cargo_command_chooses_its_packages_by_its_own_options() {
        let of = |text: &str| PackageSelection::of(&words(text));
        assert_eq!(
            of("--all-targets -- -D warnings"),
            PackageSelection::default()
        );
        let chosen = of("-p a --package=b* -pc --exclude x --manifest-path m/Cargo.toml --all");
        assert_eq!(chosen.packages, ["a", "b*", "c"]);
        assert_eq!(chosen.exclude, ["x"]);
        assert_eq!(chosen.manifest_path.as_deref(), Some("m/Cargo.toml"));
        assert!(chosen.workspace && !chosen.no_deps);
        assert!(of("-- --no-deps").no_deps);
        // What follows `--` is clippy's, not cargo's.
        assert!(of("-- -p a").packages.is_empty());
        let names = |patterns: &[&str], name| {
            let patterns: Vec<String> = patterns.iter().map(|p| (*p).to_string()).collect();
            PackageSelection::names(&patterns, name)
        };
        assert!(names(&["b*"], "beta") && names(&["beta@0.1.0"], "beta"));
        assert!(!names(&["b*"], "alpha") && !names(&["bet"], "beta"));
    }

    #[test]
    fn eslint_reads_its_cascade_under_c_unless_told_not_to_or_flat() {
        assert!(eslint_cascade(&words("-c ci.json src"), &["ci.json"], None));
        assert!(!eslint_cascade(
            &words("--no-eslintrc -c ci.json src"),
            &["ci.json"],
            None
        ));
        assert!(!eslint_cascade(
            &words("-c ci.js src"),
            &["ci.js"],
            Some("true")
        ));
        assert!(eslint_cascade(
            &words("-c ci.js src"),
            &["ci.js"],
            Some("false")
        ));
        assert!(!eslint_cascade(
            &words("-c eslint.config.mjs ."),
            &["eslint.config.mjs"],
            None
        ));
    }

    #[test]
    fn an_eslintrc_says_root_only_as_a_boolean_it_can_be_read_as() {
        use EslintrcRoot::{NoConfig, NotRoot, Root, Unknown};
        let cases: &[(&str, &str, EslintrcRoot)] = &[
            (".eslintrc.json", "{ /* web */ \"root\": true, }", Root),
            (".eslintrc.json", "{ \"root\": \"true\" }", NotRoot),
            (".eslintrc.json", "{ \"rules\": {} }", NotRoot),
            (".eslintrc.json", "{ \"root\": tru", Unknown),
            (".eslintrc.yml", "# web\nroot: true\n", Root),
            (".eslintrc.yaml", "root: True\nrules: {}\n", Root),
            (".eslintrc", "root: yes\n", NotRoot),
            (".eslintrc.yml", "", NotRoot),
            (".eslintrc.yml", "root: true\nroot: false\n", Unknown),
            (".eslintrc.yml", "- root\n", Unknown),
            (".eslintrc.yml", "root: [true\n", Unknown),
            (
                "package.json",
                "{ \"eslintConfig\": { \"root\": true } }",
                Root,
            ),
            ("package.json", "{ \"root\": true }", NoConfig),
            ("package.json", "{ \"eslintConfig\": {} }", NotRoot),
            (".eslintrc.js", "module.exports = { root: true };", Unknown),
            (".eslintrc.cjs", "module.exports = { root: true };", Unknown),
        ];
        for (name, text, expected) in cases {
            assert_eq!(
                eslintrc_root(name, text.as_bytes()),
                *expected,
                "{name}: {text}"
            );
        }
        assert_eq!(eslintrc_root(".eslintrc.json", b"\xff"), Unknown);
    }

    #[test]
    fn a_section_is_read_alone_with_the_line_it_starts_on() {
        let pyproject = b"[project]\nname = \"x\"\nversion = \"1.0\"\n\n[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = [\"E\"]\n";
        let (value, line) = section_of(&TOOL_RUFF, pyproject).unwrap();
        assert_eq!(line, Some(5));
        let bumped = String::from_utf8_lossy(pyproject).replace("1.0", "1.1");
        assert_eq!(section_of(&TOOL_RUFF, bumped.as_bytes()).unwrap().0, value);
        let weakened = String::from_utf8_lossy(pyproject).replace("[\"E\"]", "[]");
        assert_ne!(
            section_of(&TOOL_RUFF, weakened.as_bytes()).unwrap().0,
            value
        );
        assert!(section_of(&TOOL_MYPY, pyproject).is_none());

        let setup = b"[metadata]\nname = x\n\n[mypy]\n# strict\nstrict = True\n\n[mypy-vendor.*]\nignore_errors = True\n";
        let (SectionValue::Ini(sections), line) = section_of(&INI_MYPY, setup).unwrap() else {
            panic!("not read as INI");
        };
        assert_eq!(line, Some(4));
        assert_eq!(
            sections,
            [
                ("mypy".to_string(), vec!["strict = True".to_string()]),
                (
                    "mypy-vendor.*".to_string(),
                    vec!["ignore_errors = True".to_string()]
                ),
            ]
        );
        let package = b"{\n  \"name\": \"x\",\n  \"jest\": { \"bail\": true }\n}\n";
        assert_eq!(section_of(&PACKAGE_JEST, package).unwrap().1, Some(3));
        assert!(matches!(
            section_of(&TOOL_RUFF, b"[tool.ruff\n").unwrap().0,
            SectionValue::Unreadable(_)
        ));
    }

    #[test]
    fn a_tsconfig_extends_files_by_relative_paths_in_json_with_comments() {
        let text = b"{\n  // the shared base\n  \"extends\": \"./tsconfig.base.json\",\n  /* strict */ \"compilerOptions\": { \"strict\": true, },\n}\n";
        assert_eq!(extends_of(text), ["./tsconfig.base.json"]);
        let many = b"{ \"extends\": [\"@tsconfig/node20/tsconfig.json\", \"../base.json\"] }";
        assert_eq!(extends_of(many), ["../base.json"]);
        assert!(extends_of(b"{ \"compilerOptions\": {} }").is_empty());
        assert_eq!(
            plain_json("{\"a\": \"//not a comment\", \"b\": [1,],}"),
            "{\"a\": \"//not a comment\", \"b\": [1]}"
        );
    }
}
