//! Under --config-from-ref, a branch that rewrites the configuration of a tool a check runs warns.

use crate::ci_cargo::FROM_MAIN;
use crate::ci_refs::branch_of;
use crate::ci_scripts::finding;
use crate::support::{check, write_executable, TestRepo};

/// A gate whose one blocking check `lint` runs `command`.
pub(crate) fn lint_gate(command: &str) -> String {
    format!(
        "[commands]\nlint = {command:?}\n\n[phases.implementation]\nchecks = [ {{ name = \"lint\", on_failure = \"block\" }} ]\n"
    )
}

/// Puts a stand-in for `program` on the `PATH` the runs get (the real
/// tools need not be installed here): it finds nothing when one of
/// `configs` holds `off`, as the tool would with its rules turned off,
/// and otherwise judges `status.txt`, as the tool judges the code.
pub(crate) fn stand_in(repo: &TestRepo, program: &str, off: &str, configs: &str) {
    write_executable(
        &repo.home().join("bin").join(program),
        &format!("#!/bin/sh\nif grep -qsF -- '{off}' {configs}; then exit 0; fi\ngrep -qx ok status.txt\n"),
    );
}

/// `phasegate run --format json ARGS` with the stand-ins first on the `PATH`.
pub(crate) fn verdict(repo: &TestRepo, args: &[&str]) -> (i32, serde_json::Value) {
    repo.verdict_with(args, &[("PATH", &stand_ins_first(repo))])
}

/// The `PATH` of the runs: the stand-ins' directory first.
pub(crate) fn stand_ins_first(repo: &TestRepo) -> String {
    let inherited = std::env::vars_os()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{}:{inherited}", repo.home().join("bin").display())
}

pub(crate) fn strict() -> Vec<&'static str> {
    [&FROM_MAIN[..], &["--profile", "strict"][..]].concat()
}

/// No finding of a tool's configuration, nor of any file it runs.
fn no_warning(v: &serde_json::Value) {
    let text = v.to_string();
    assert!(!text.contains("whose configuration"), "{v:#}");
    assert!(!text.contains("differs from its version"), "{v:#}");
}

pub(crate) const RUFF_TOML: &str = "line-length = 100\n\n[lint]\nselect = [\"E\", \"F\", \"B\"]\n";

#[test]
fn a_ruff_toml_the_branch_weakens_warns_at_the_changed_line_and_strict_fails() {
    let weakened = RUFF_TOML.replace("[\"E\", \"F\", \"B\"]", "[]");
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("ruff.toml", RUFF_TOML),
        ],
        &[("ruff.toml", &weakened)],
    );
    stand_in(&repo, "ruff", "select = []", "ruff.toml");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    // The tool passed the broken code, as the branch configured it; the
    // run says whose configuration that was.
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(check(&v, "lint")["effect"], "warn", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "ruff.toml");
    assert_eq!(found["severity"], "warning", "{v:#}");
    assert_eq!(found["line"], 4, "the first line changed: {v:#}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains(
            "check `lint` runs `ruff`, whose configuration `ruff.toml` differs from its version in `main`"
        ),
        "{message}"
    );
    assert!(
        message.contains("merge such a change into `main` on its own first, or have it reviewed"),
        "{message}"
    );
    assert!(
        v["summary"].to_string().contains("`ruff.toml`"),
        "the summary names it: {v:#}"
    );

    // Under strict it fails the run.
    let (code, v) = verdict(&repo, &strict());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["status"], "failed", "{v:#}");
    let found = finding(&v, "ruff.toml");
    assert_eq!(found["severity"], "error", "{v:#}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("merge the change to `ruff.toml` on its own first"),
        "{v:#}"
    );

    // A branch that deletes it, so that ruff runs on its defaults, warns
    // too, naming the file it took out.
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("ruff.toml", RUFF_TOML),
        ],
        &[("ruff.toml", "")],
    );
    stand_in(&repo, "ruff", "select = []", "ruff.toml");
    let (_, v) = verdict(&repo, &FROM_MAIN);
    let found = finding(&v, "ruff.toml");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("whose configuration `ruff.toml` was removed by the branch (`main` has it)"),
        "{v:#}"
    );
}

const PACKAGE: &str = "{\n  \"name\": \"web\",\n  \"version\": \"1.0.0\"\n}\n";
const TSCONFIG: &str = "{\n  // shared settings\n  \"extends\": \"./tsconfig.base.json\",\n  \"compilerOptions\": {\n    \"noEmit\": true,\n  },\n}\n";
const TSCONFIG_BASE: &str = "{\n  \"compilerOptions\": {\n    \"strict\": true\n  }\n}\n";

/// A bun project with no `phasegate.toml`: its default typecheck is
/// `bunx tsc --noEmit`.
fn bun_project(changes: &[(&str, &str)]) -> TestRepo {
    let repo = branch_of(
        &[
            ("package.json", PACKAGE),
            ("bun.lock", "{}\n"),
            ("tsconfig.json", TSCONFIG),
            ("tsconfig.base.json", TSCONFIG_BASE),
        ],
        changes,
    );
    stand_in(
        &repo,
        "bunx",
        "\"strict\": false",
        "tsconfig.json tsconfig.base.json",
    );
    repo
}

#[test]
fn a_tsconfig_the_branch_weakens_warns_for_the_node_default_typecheck() {
    let weakened = TSCONFIG.replace(
        "\"noEmit\": true,",
        "\"noEmit\": true,\n    \"strict\": false,",
    );
    let repo = bun_project(&[("tsconfig.json", &weakened)]);
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "typecheck")["status"], "passed", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "tsconfig.json");
    assert_eq!(found["line"], 6, "{v:#}");
    assert!(
        found["message"].as_str().unwrap().contains(
            "check `typecheck` runs `tsc`, whose configuration `tsconfig.json` differs from its version in `main`"
        ),
        "{v:#}"
    );
    let (code, v) = verdict(&repo, &strict());
    assert_eq!(code, 1, "{v:#}");

    // The file its `extends` names is the configuration too.
    let weakened = TSCONFIG_BASE.replace("true", "false");
    let repo = bun_project(&[("tsconfig.base.json", &weakened)]);
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "tsconfig.base.json");
    assert_eq!(found["line"], 3, "{v:#}");
    assert!(
        found["message"].as_str().unwrap().contains(
            "whose configuration `tsconfig.base.json` (which `tsconfig.json` extends) differs from its version in `main`"
        ),
        "{v:#}"
    );
}

pub(crate) const PYPROJECT: &str = "[project]\nname = \"app\"\nversion = \"1.0.0\"\n\n[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = [\"E\", \"F\"]\n";

#[test]
fn a_ruff_section_of_pyproject_warns_at_its_line_and_a_version_bump_does_not() {
    let gate = lint_gate("uv run ruff check .");
    // `uv run` runs ruff; the stand-in is the tool uv would run.
    let uv = |repo: &TestRepo| {
        stand_in(repo, "uv", "select = []", "pyproject.toml");
    };
    let weakened = PYPROJECT.replace("[\"E\", \"F\"]", "[]");
    let repo = branch_of(
        &[("phasegate.toml", &gate), ("pyproject.toml", PYPROJECT)],
        &[("pyproject.toml", &weakened)],
    );
    uv(&repo);
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "pyproject.toml");
    assert_eq!(found["line"], 5, "the section's line: {v:#}");
    assert!(
        found["message"].as_str().unwrap().contains(
            "check `lint` runs `ruff`, whose configuration [tool.ruff] of `pyproject.toml` differs from its version in `main`"
        ),
        "{v:#}"
    );
    let (code, _) = verdict(&repo, &strict());
    assert_eq!(code, 1);

    // A branch that only bumps the project's version leaves ruff's
    // section as it was: the broken code fails, without a word on it.
    let bumped = PYPROJECT.replace("1.0.0", "1.1.0");
    let repo = branch_of(
        &[("phasegate.toml", &gate), ("pyproject.toml", PYPROJECT)],
        &[("pyproject.toml", &bumped)],
    );
    uv(&repo);
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "failed", "{v:#}");
    no_warning(&v);
}

#[test]
fn a_configuration_the_branch_left_as_it_forked_does_not_warn() {
    // `main` changed `ruff.toml` after the branch left it; the branch did
    // not touch it. What runs is the merge base's, which `main` vouched
    // for.
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("ruff.toml", RUFF_TOML),
        ],
        &[],
    );
    repo.git(&["checkout", "-q", "main"]);
    repo.write("ruff.toml", &RUFF_TOML.replace("\"B\"", "\"B\", \"UP\""));
    repo.commit_all("more rules");
    repo.git(&["checkout", "-q", "feature"]);
    stand_in(&repo, "ruff", "select = []", "ruff.toml");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "failed", "{v:#}");
    no_warning(&v);

    // Once the branch changes it itself, it is the branch's.
    repo.write("ruff.toml", &RUFF_TOML.replace("\"B\"", "\"B\", \"UP\""));
    repo.commit_all("the same rules as main, by the branch");
    repo.write(
        "ruff.toml",
        &RUFF_TOML.replace("[\"E\", \"F\", \"B\"]", "[]"),
    );
    repo.commit_all("no rules");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(finding(&v, "ruff.toml")["line"], 4, "{v:#}");
}

#[test]
fn an_eslint_configuration_behind_a_package_json_script_warns_through_the_script() {
    // `npm run lint` runs the `lint` script, which runs eslint: this
    // machine's npm, for real, with eslint's stand-in on the PATH.
    let package = "{\n  \"name\": \"web\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\n    \"lint\": \"eslint .\"\n  }\n}\n";
    let config = "export default [\n  { rules: { \"no-unused-vars\": \"error\" } },\n];\n";
    let weakened = config.replace("\"error\"", "\"off\"");
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("npm run lint")),
            ("package.json", package),
            ("package-lock.json", "{}\n"),
            ("eslint.config.js", config),
        ],
        &[("eslint.config.js", &weakened)],
    );
    stand_in(&repo, "eslint", "\"off\"", "eslint.config.js");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "eslint.config.js");
    assert_eq!(found["line"], 2, "{v:#}");
    assert!(
        found["message"].as_str().unwrap().contains(
            "check `lint` runs `eslint` (through the `lint` script of `package.json`), whose configuration `eslint.config.js` differs"
        ),
        "{v:#}"
    );
}

const MANIFEST: &str =
    "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";

/// Four arguments: more than `main`'s clippy allows.
pub(crate) const MANY_ARGUMENTS: &str =
    "pub fn sum(a: u32, b: u32, c: u32, d: u32) -> u32 {\n    a + b + c + d\n}\n";

#[test]
fn a_clippy_toml_the_branch_loosens_warns_for_cargo_clippy() {
    // The real `cargo clippy`: `main` allows three arguments, the branch
    // adds a function of four and raises the threshold so clippy passes.
    let repo = TestRepo::new();
    repo.config(&lint_gate("cargo clippy --quiet -- -D warnings"))
        .write("Cargo.toml", MANIFEST)
        .write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n")
        .write("clippy.toml", "too-many-arguments-threshold = 3\n")
        .write(".gitignore", "/target\n/Cargo.lock\n");
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("src/lib.rs", MANY_ARGUMENTS)
        .write("clippy.toml", "too-many-arguments-threshold = 10\n");
    repo.commit_all("feature");
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "clippy.toml");
    assert_eq!(found["line"], 1, "{v:#}");
    assert!(
        found["message"].as_str().unwrap().contains(
            "check `lint` runs `cargo clippy`, whose configuration `clippy.toml` differs from its version in `main`"
        ),
        "{v:#}"
    );
    let (code, v) = repo.verdict(&strict());
    assert_eq!(code, 1, "{v:#}");

    // The lint levels of `Cargo.toml` are clippy's configuration too; the
    // rest of the manifest is not.
    let repo = TestRepo::new();
    let levels = format!("{MANIFEST}\n[lints.clippy]\ntoo_many_arguments = \"deny\"\n");
    repo.config(&lint_gate("cargo clippy --quiet"))
        .write("Cargo.toml", &levels)
        .write("src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n")
        .write(".gitignore", "/target\n/Cargo.lock\n");
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("src/lib.rs", MANY_ARGUMENTS).write(
        "Cargo.toml",
        &levels
            .replace("\"deny\"", "\"allow\"")
            .replace("0.1.0", "0.2.0"),
    );
    repo.commit_all("feature");
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    let found = finding(&v, "Cargo.toml");
    assert_eq!(found["line"], 8, "the `[lints]` table: {v:#}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("whose configuration [lints] of `Cargo.toml` differs"),
        "{v:#}"
    );
}
