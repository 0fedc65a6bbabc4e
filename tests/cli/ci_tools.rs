//! Which files clippy and eslint really read, under --config-from-ref:
//! `CLIPPY_CONF_DIR`, the packages a cargo command lints, and eslint's
//! `.eslintrc*` cascade under `-c`.

use crate::ci_cargo::FROM_MAIN;
use crate::ci_lookup::flagged;
use crate::ci_refs::branch_of;
use crate::ci_toolconfig::{stand_in, stand_ins_first};
use crate::support::{check, write_executable, TestRepo};

/// A gate whose one blocking check `lint` runs `command`, with `extra`
/// (`env = {...}`, `cwd = "..."`) among its options.
fn gate(command: &str, extra: &str) -> String {
    format!("[phases.implementation]\nchecks = [ {{ name = \"lint\", command = {command:?}, on_failure = \"block\"{extra} }} ]\n")
}

/// A `cargo` that passes, first on the `PATH` of the runs: what the check
/// runs is not what these tests look at, but which files it is judged by.
fn passing_cargo(repo: &TestRepo) -> String {
    write_executable(&repo.home().join("bin/cargo"), "#!/bin/sh\nexit 0\n");
    format!("{}:/usr/bin:/bin", repo.home().join("bin").display())
}

/// The `--config-from-ref main` run of the branch checked out, with the
/// passing `cargo` and `env` set.
fn judged(repo: &TestRepo, env: &[(&str, &str)]) -> Vec<String> {
    let path = passing_cargo(repo);
    let mut all = vec![("PATH", path.as_str())];
    all.extend_from_slice(env);
    let (code, v) = repo.verdict_with(&FROM_MAIN, &all);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    flagged(&v)
}

const STRICT: &str = "too-many-arguments-threshold = 3\n";
const RELAXED: &str = "too-many-arguments-threshold = 30\n";
const PACKAGE: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

#[test]
fn clippy_conf_dir_makes_its_clippy_toml_the_one_compared() {
    // clippy 0.1.95 with `CLIPPY_CONF_DIR=ci` reads `ci/clippy.toml`, and
    // none of the package's own: weakening the first is flagged, editing
    // the second is not. Set by the check's `env`, or in phasegate's own
    // environment, which the check inherits; the check's wins.
    for (extra, own) in [
        (", env = { CLIPPY_CONF_DIR = \"ci\" }", None),
        ("", Some("ci")),
        (", env = { CLIPPY_CONF_DIR = \"ci\" }", Some("elsewhere")),
    ] {
        let repo = branch_of(
            &[
                ("phasegate.toml", &gate("cargo clippy", extra)),
                ("Cargo.toml", PACKAGE),
                ("clippy.toml", STRICT),
                ("ci/clippy.toml", STRICT),
                ("elsewhere/clippy.toml", STRICT),
            ],
            &[
                ("ci/clippy.toml", RELAXED),
                ("clippy.toml", RELAXED),
                ("elsewhere/clippy.toml", RELAXED),
            ],
        );
        let env: Vec<(&str, &str)> = own
            .map(|dir| ("CLIPPY_CONF_DIR", dir))
            .into_iter()
            .collect();
        assert_eq!(judged(&repo, &env), ["ci/clippy.toml"], "{extra} {own:?}");
    }
}

#[test]
fn a_relative_clippy_conf_dir_is_taken_from_the_workspace_root_and_searched_up() {
    // Checked with cargo 1.95: cargo runs clippy for a member from the
    // workspace's root, so `CLIPPY_CONF_DIR=conf/lint` in `crates/a`
    // names `conf/lint` at the root, not `crates/a/conf/lint`; with no
    // file there, clippy takes the nearest above it, `conf/clippy.toml`.
    let workspace = "[workspace]\nmembers = [\"crates/a\"]\n";
    let repo = branch_of(
        &[
            (
                "phasegate.toml",
                &gate(
                    "cargo clippy",
                    ", cwd = \"crates/a\", env = { CLIPPY_CONF_DIR = \"conf/lint\" }",
                ),
            ),
            ("Cargo.toml", workspace),
            ("crates/a/Cargo.toml", &PACKAGE.replace("app", "a")),
            ("crates/a/clippy.toml", STRICT),
            ("crates/a/conf/lint/clippy.toml", STRICT),
            ("conf/clippy.toml", STRICT),
        ],
        &[
            ("crates/a/clippy.toml", RELAXED),
            ("crates/a/conf/lint/clippy.toml", RELAXED),
            ("conf/clippy.toml", RELAXED),
        ],
    );
    assert_eq!(judged(&repo, &[]), ["conf/clippy.toml"]);
}

/// A workspace whose root is the package `app`, with members `alpha`
/// (which depends on `beta`) and `beta` under `crates/`; `more` is added
/// to its `[workspace]`. Each package has its lint levels and a
/// `clippy.toml`.
fn members_on_main(more: &str) -> Vec<(String, String)> {
    let manifest = |name: &str, deps: &str| {
        format!(
            "{}\n[dependencies]\n{deps}\n[lints.rust]\nunsafe_code = \"forbid\"\n",
            PACKAGE.replace("app", name)
        )
    };
    vec![
        (
            "Cargo.toml".to_string(),
            format!(
                "{}[workspace]\nmembers = [\"crates/*\"]\n{more}",
                manifest("app", "")
            ),
        ),
        ("clippy.toml".to_string(), STRICT.to_string()),
        (
            "crates/alpha/Cargo.toml".to_string(),
            manifest("alpha", "beta = { path = \"../beta\" }\n"),
        ),
        ("crates/alpha/clippy.toml".to_string(), STRICT.to_string()),
        ("crates/beta/Cargo.toml".to_string(), manifest("beta", "")),
        ("crates/beta/clippy.toml".to_string(), STRICT.to_string()),
    ]
}

#[test]
fn the_packages_a_cargo_command_lints_follow_its_own_flags() {
    // As `cargo clippy -v` (cargo 1.95) shows which packages it hands to
    // clippy: at a root that is a package, that package alone; members
    // it depends on too, unless `--no-deps`; `--exclude` leaves out a
    // package only when nothing chosen depends on it. A package cargo
    // compiles without clippy still obeys its `[lints]`.
    let all = [
        "Cargo.toml",
        "clippy.toml",
        "crates/alpha/Cargo.toml",
        "crates/alpha/clippy.toml",
        "crates/beta/Cargo.toml",
        "crates/beta/clippy.toml",
    ];
    let cases: &[(&str, &str, &[&str])] = &[
        ("cargo clippy", "", &all[..2]),
        ("cargo clippy --all-targets -- -D warnings", "", &all[..2]),
        ("cargo clippy --workspace", "", &all),
        ("cargo clippy --all", "", &all),
        (
            "cargo clippy --workspace --exclude alpha",
            "",
            &[all[0], all[1], all[4], all[5]],
        ),
        ("cargo clippy --workspace --exclude beta", "", &all),
        ("cargo clippy -p alpha", "", &all[2..]),
        ("cargo clippy -p alpha --no-deps", "", &all[2..5]),
        ("cargo clippy -p alpha -- --no-deps", "", &all[2..5]),
        ("cargo clippy --package=b*", "", &all[4..]),
        (
            "cargo clippy -p app -p beta",
            "",
            &[all[0], all[1], all[4], all[5]],
        ),
        (
            "cargo clippy --manifest-path crates/beta/Cargo.toml",
            "",
            &all[4..],
        ),
        // The root's `default-members` are what a plain command builds.
        (
            "cargo clippy",
            "default-members = [\"crates/b*\"]\n",
            &all[4..],
        ),
        // The commands that compile obey the `[lints]` of what they build.
        ("cargo build", "", &all[..1]),
        ("cargo check -p alpha", "", &[all[2], all[4]]),
    ];
    for (command, more, expected) in cases {
        let on_main = members_on_main(more);
        let mut files: Vec<(&str, &str)> = on_main
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        let config = gate(command, "");
        files.push(("phasegate.toml", &config));
        let weakened: Vec<(String, String)> = on_main
            .iter()
            .map(|(path, text)| {
                let text = text.replace("forbid", "allow").replace(STRICT, RELAXED);
                (path.clone(), text)
            })
            .collect();
        let changes: Vec<(&str, &str)> = weakened
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        let repo = branch_of(&files, &changes);
        assert_eq!(judged(&repo, &[]), *expected, "{command} {more}");
    }
}

#[test]
fn a_member_run_from_its_own_directory_is_the_package_linted() {
    // cargo run in `crates/beta` builds `beta` alone: neither the root's
    // package nor `alpha` is linted, whatever the branch does to them.
    let on_main = members_on_main("");
    let mut files: Vec<(&str, &str)> = on_main
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let config = gate("cargo clippy", ", cwd = \"crates/beta\"");
    files.push(("phasegate.toml", &config));
    let repo = branch_of(
        &files,
        &[
            ("Cargo.toml", &on_main[0].1.replace("forbid", "allow")),
            ("crates/alpha/clippy.toml", RELAXED),
            ("crates/beta/clippy.toml", RELAXED),
        ],
    );
    assert_eq!(judged(&repo, &[]), ["crates/beta/clippy.toml"]);
}

/// An `.eslintrc.json` that turns every rule on, or (`off`) the one the
/// stand-in looks at off.
const ESLINTRC: &str = "{\n  \"extends\": \"eslint:recommended\"\n}\n";
const ESLINTRC_OFF: &str =
    "{\n  \"extends\": \"eslint:recommended\",\n  \"rules\": { \"all\": \"off\" }\n}\n";

#[test]
fn eslint_with_a_config_file_still_reads_the_eslintrc_cascade_unless_told_not_to() {
    // eslint is not installed here: this follows eslint 8's documented
    // behaviour (`-c, --config: Use this configuration, overriding
    // .eslintrc.* config options if present`; `--no-eslintrc: Disable use
    // of configuration from .eslintrc.*`), and a flat config given by `-c`
    // (eslint 9) is the only one read. The stand-in passes when any file
    // eslint reads turns the rule off, as eslint would.
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "eslint -c ci/eslint.json src",
            "",
            &["ci/eslint.json", "src/legacy/.eslintrc.json"],
        ),
        (
            "eslint --config=ci/eslint.json src",
            "",
            &["ci/eslint.json", "src/legacy/.eslintrc.json"],
        ),
        (
            "eslint --no-eslintrc -c ci/eslint.json src",
            "",
            &["ci/eslint.json"],
        ),
        (
            "eslint -c ci/eslint.json src",
            ", env = { ESLINT_USE_FLAT_CONFIG = \"true\" }",
            &["ci/eslint.json"],
        ),
        ("eslint -c eslint.config.js src", "", &["eslint.config.js"]),
    ];
    for (command, extra, expected) in cases {
        let config = gate(command, extra);
        let repo = branch_of(
            &[
                ("phasegate.toml", &config),
                ("ci/eslint.json", ESLINTRC),
                ("eslint.config.js", "export default [];\n"),
                ("src/legacy/.eslintrc.json", ESLINTRC),
                ("src/legacy/old.js", "var x = 1;\n"),
            ],
            &[
                ("ci/eslint.json", ESLINTRC_OFF),
                (
                    "eslint.config.js",
                    "export default [{ rules: { all: \"off\" } }];\n",
                ),
                ("src/legacy/.eslintrc.json", ESLINTRC_OFF),
            ],
        );
        stand_in(
            &repo,
            "eslint",
            "off",
            "ci/eslint.json eslint.config.js src/legacy/.eslintrc.json",
        );
        let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &stand_ins_first(&repo))]);
        assert_eq!(code, 0, "{command}: {v:#}");
        assert_eq!(flagged(&v), *expected, "{command} {extra}: {v:#}");
    }
}
