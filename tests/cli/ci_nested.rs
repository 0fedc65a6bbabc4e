//! Tool configuration in directories below a check, under --config-from-ref.

use crate::ci_cargo::FROM_MAIN;
use crate::ci_refs::branch_of;
use crate::ci_scripts::finding;
use crate::ci_toolconfig::{
    lint_gate, stand_in, stand_ins_first, strict, verdict, MANY_ARGUMENTS, PYPROJECT, RUFF_TOML,
};
use crate::support::{check, TestRepo};

/// The files the run's findings on a changed command file name, in the
/// verdict's order.
pub(crate) fn flagged(v: &serde_json::Value) -> Vec<String> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "command-file-changed")
        .map(|d| d["file"].as_str().unwrap().to_string())
        .collect()
}

fn message(v: &serde_json::Value, file: &str) -> String {
    finding(v, file)["message"].as_str().unwrap().to_string()
}

/// What turns every rule off for the files under it.
const ALL_OFF: &str = "[lint]\nignore = [\"ALL\"]\n";

#[test]
fn a_ruff_toml_the_branch_adds_below_the_check_warns_and_strict_fails() {
    // ruff takes, for each file, the closest `ruff.toml` to it: the
    // branch's `pkg/ruff.toml` turns lint off for `pkg/`, and the root's
    // is untouched.
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("ruff.toml", RUFF_TOML),
            ("pkg/mod.py", "import os\n"),
        ],
        &[("pkg/ruff.toml", ALL_OFF)],
    );
    stand_in(&repo, "ruff", "\"ALL\"", "pkg/ruff.toml other/.ruff.toml");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(check(&v, "lint")["effect"], "warn", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(flagged(&v), ["pkg/ruff.toml"], "{v:#}");
    assert_eq!(finding(&v, "pkg/ruff.toml")["severity"], "warning");
    let said = message(&v, "pkg/ruff.toml");
    assert!(
        said.contains(
            "check `lint` runs `ruff`, whose configuration `pkg/ruff.toml` is the branch's own (`main` has none)"
        ),
        "{said}"
    );
    assert!(
        said.contains("merge such a change into `main` on its own first"),
        "{said}"
    );

    // Under strict it fails the run.
    let (code, v) = verdict(&repo, &strict());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["status"], "failed", "{v:#}");
    assert_eq!(finding(&v, "pkg/ruff.toml")["severity"], "error", "{v:#}");
    assert!(
        message(&v, "pkg/ruff.toml")
            .contains("merge the change to `pkg/ruff.toml` on its own first"),
        "{v:#}"
    );

    // Run on the work tree, which the checks read: a file not yet
    // committed, or not even tracked, counts as well.
    repo.write("other/.ruff.toml", ALL_OFF);
    let (code, v) = verdict(&repo, &["--config-from-ref", "main", "--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(flagged(&v), ["other/.ruff.toml", "pkg/ruff.toml"], "{v:#}");
}

#[test]
fn a_stricter_ruff_toml_below_the_check_that_the_branch_deletes_warns() {
    let stricter = "[lint]\nselect = [\"ALL\"]\n";
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("ruff.toml", RUFF_TOML),
            ("pkg/ruff.toml", stricter),
        ],
        &[("pkg/ruff.toml", "")],
    );
    stand_in(&repo, "ruff", "never", "ruff.toml");
    repo.write("status.txt", "ok\n");
    repo.commit_all("fixed");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let said = message(&v, "pkg/ruff.toml");
    assert!(
        said.contains(
            "whose configuration `pkg/ruff.toml` was removed by the branch (`main` has it)"
        ),
        "{said}"
    );
}

#[test]
fn a_pyproject_below_the_check_warns_for_its_ruff_section_not_for_its_version() {
    // Two packages below the check: the branch empties the rule list of
    // one and only bumps the version of the other.
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("a/pyproject.toml", PYPROJECT),
            ("b/pyproject.toml", PYPROJECT),
        ],
        &[
            (
                "a/pyproject.toml",
                &PYPROJECT.replace("[\"E\", \"F\"]", "[]"),
            ),
            ("b/pyproject.toml", &PYPROJECT.replace("1.0.0", "1.1.0")),
        ],
    );
    stand_in(&repo, "ruff", "select = []", "a/pyproject.toml");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(flagged(&v), ["a/pyproject.toml"], "{v:#}");
    assert_eq!(
        finding(&v, "a/pyproject.toml")["line"],
        5,
        "the section's line: {v:#}"
    );
    let said = message(&v, "a/pyproject.toml");
    assert!(
        said.contains(
            "check `lint` runs `ruff`, whose configuration [tool.ruff] of `a/pyproject.toml` differs from its version in `main`"
        ),
        "{said}"
    );
}

#[test]
fn eslint_configurations_below_the_check_warn_for_an_eslint_check() {
    // An `.eslintrc.json` cascades onto the files of its directory
    // (eslint 8); eslint 10 takes each file's nearest `eslint.config.js`.
    let config = "export default [\n  { rules: { \"no-unused-vars\": \"error\" } },\n];\n";
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("eslint .")),
            ("eslint.config.js", config),
            ("web/eslint.config.js", config),
        ],
        &[
            (
                "src/legacy/.eslintrc.json",
                "{ \"rules\": { \"no-unused-vars\": \"off\" } }\n",
            ),
            (
                "web/eslint.config.js",
                &config.replace("\"error\"", "\"off\""),
            ),
        ],
    );
    stand_in(
        &repo,
        "eslint",
        "\"off\"",
        "src/legacy/.eslintrc.json web/eslint.config.js",
    );
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(
        flagged(&v),
        ["src/legacy/.eslintrc.json", "web/eslint.config.js"],
        "{v:#}"
    );
    assert!(
        message(&v, "src/legacy/.eslintrc.json").contains(
            "check `lint` runs `eslint`, whose configuration `src/legacy/.eslintrc.json` is the branch's own (`main` has none)"
        ),
        "{v:#}"
    );
    assert_eq!(finding(&v, "web/eslint.config.js")["line"], 2, "{v:#}");
    let (code, _) = verdict(&repo, &strict());
    assert_eq!(code, 1);
}

#[test]
fn a_markdownlint_file_below_warns_for_markdownlint_cli2_and_not_for_markdownlint() {
    // markdownlint-cli2 reads `.markdownlint.*` in every directory of the
    // files it lints; markdownlint-cli only where it runs.
    let gate = "[phases.implementation]\nchecks = [\n  { name = \"docs2\", command = \"markdownlint-cli2 **/*.md\", on_failure = \"block\" },\n  { name = \"docs1\", command = \"markdownlint .\", on_failure = \"block\" },\n]\n";
    let repo = branch_of(
        &[
            ("phasegate.toml", gate),
            (".markdownlint.yaml", "default: true\n"),
            ("docs/guide.md", "# Guide\n"),
        ],
        &[("docs/.markdownlint.yaml", "default: false\n")],
    );
    let off = "default: false";
    stand_in(&repo, "markdownlint-cli2", off, "docs/.markdownlint.yaml");
    stand_in(&repo, "markdownlint", off, "docs/.markdownlint.yaml");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(flagged(&v), ["docs/.markdownlint.yaml"], "{v:#}");
    assert_eq!(finding(&v, "docs/.markdownlint.yaml")["check"], "docs2");
    assert_eq!(check(&v, "docs1")["effect"], "none", "{v:#}");
}

#[test]
fn a_nested_file_the_branch_left_as_it_forked_or_outside_the_checks_directory_does_not_warn() {
    // The check runs in `app`. `app/lib/ruff.toml` is older than the
    // branch (and `main` changed it since); `other/` is no directory the
    // check reads; `app/pkg/ruff.toml` is the branch's own.
    let gate = "[phases.implementation]\nchecks = [ { name = \"lint\", command = \"ruff check .\", cwd = \"app\", on_failure = \"block\" } ]\n";
    let repo = branch_of(
        &[
            ("phasegate.toml", gate),
            ("app/lib/ruff.toml", RUFF_TOML),
            ("app/kept/ruff.toml", RUFF_TOML),
        ],
        &[("app/pkg/ruff.toml", ALL_OFF), ("other/ruff.toml", ALL_OFF)],
    );
    repo.git(&["checkout", "-q", "main"]);
    repo.write(
        "app/lib/ruff.toml",
        &RUFF_TOML.replace("\"B\"", "\"B\", \"UP\""),
    );
    repo.commit_all("more rules");
    repo.git(&["checkout", "-q", "feature"]);
    stand_in(&repo, "ruff", "\"ALL\"", "pkg/ruff.toml");
    let (code, v) = verdict(&repo, &FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(flagged(&v), ["app/pkg/ruff.toml"], "{v:#}");
}

const WORKSPACE: &str = "[workspace]\nmembers = [\"crates/a\", \"crates/b\"]\nresolver = \"2\"\n";

fn member(name: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n"
    )
}

const ONE: &str = "pub fn one() -> u32 {\n    1\n}\n";

/// Eight arguments: more than clippy's default of seven allows.
const EIGHT_ARGUMENTS: &str = "pub fn sum(a: u32, b: u32, c: u32, d: u32, e: u32, f: u32, g: u32, h: u32) -> u32 {\n    a + b + c + d + e + f + g + h\n}\n";

/// A workspace of the members `crates/a` and `crates/b` on `main`, with
/// `b`'s files in `b_files`, the gate's `lint` running `command`.
fn workspace(command: &str, b_manifest: &str, b_files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(&lint_gate(command))
        .write("Cargo.toml", WORKSPACE)
        .write("crates/a/Cargo.toml", &member("a"))
        .write("crates/a/src/lib.rs", ONE)
        .write("crates/b/Cargo.toml", b_manifest)
        .write("crates/b/src/lib.rs", ONE)
        .write(".gitignore", "/target\n/Cargo.lock\n");
    for (path, text) in b_files {
        repo.write(path, text);
    }
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo
}

#[test]
fn a_member_clippy_toml_and_member_lint_levels_warn_for_cargo_clippy_in_a_workspace() {
    // The real `cargo clippy`: the branch gives `b` a function of eight
    // arguments and a `clippy.toml` of its own that allows ten.
    let repo = workspace(
        "cargo clippy --workspace --quiet -- -D warnings",
        &member("b"),
        &[],
    );
    repo.write("crates/b/src/lib.rs", EIGHT_ARGUMENTS).write(
        "crates/b/clippy.toml",
        "too-many-arguments-threshold = 10\n",
    );
    repo.commit_all("feature");
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(flagged(&v), ["crates/b/clippy.toml"], "{v:#}");
    assert!(
        message(&v, "crates/b/clippy.toml").contains(
            "check `lint` runs `cargo clippy`, whose configuration `crates/b/clippy.toml` is the branch's own (`main` has none)"
        ),
        "{v:#}"
    );
    let (code, v) = repo.verdict(&strict());
    assert_eq!(code, 1, "{v:#}");

    // A member's `[lints]` is its lint levels; the rest of its manifest
    // (its version) is not. `b`'s `clippy.toml`, which `main` holds as
    // the branch does, is not the branch's to answer for.
    let levels = format!(
        "{}\n[lints.clippy]\ntoo_many_arguments = \"deny\"\n",
        member("b")
    );
    let repo = workspace(
        "cargo clippy --workspace --quiet",
        &levels,
        &[("crates/b/clippy.toml", "too-many-arguments-threshold = 3\n")],
    );
    repo.write("crates/b/src/lib.rs", MANY_ARGUMENTS).write(
        "crates/b/Cargo.toml",
        &levels
            .replace("\"deny\"", "\"allow\"")
            .replace("0.1.0", "0.2.0"),
    );
    repo.commit_all("feature");
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    assert_eq!(flagged(&v), ["crates/b/Cargo.toml"], "{v:#}");
    assert_eq!(
        finding(&v, "crates/b/Cargo.toml")["line"],
        8,
        "the `[lints]` table: {v:#}"
    );
    assert!(
        message(&v, "crates/b/Cargo.toml")
            .contains("whose configuration [lints] of `crates/b/Cargo.toml` differs from its version in `main`"),
        "{v:#}"
    );
}

#[test]
fn the_human_report_says_a_changed_configuration_once_under_its_check_and_in_the_summary() {
    // It was said a third time, word for word, as a note.
    let repo = branch_of(
        &[
            ("phasegate.toml", &lint_gate("ruff check .")),
            ("pkg/mod.py", "import os\n"),
        ],
        &[("pkg/ruff.toml", ALL_OFF)],
    );
    stand_in(&repo, "ruff", "\"ALL\"", "pkg/ruff.toml");
    let path = stand_ins_first(&repo);
    let run = repo.phasegate_with(&[&["run"][..], &FROM_MAIN[..]].concat(), &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{run:?}");
    let said = "whose configuration `pkg/ruff.toml` is the branch's own";
    assert_eq!(run.stdout.matches(said).count(), 2, "{}", run.stdout);
    assert!(!run.stdout.contains("note: check `lint`"), "{}", run.stdout);
    let (_, v) = verdict(&repo, &FROM_MAIN);
    assert!(message(&v, "pkg/ruff.toml").contains(said), "{v:#}");
}
