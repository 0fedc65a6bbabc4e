//! `--config-from-ref`: `[workspace.lints]` inheritance and the eslintrc `root` cascade.

use crate::ci_cargo::FROM_MAIN;
use crate::ci_lookup::flagged;
use crate::ci_refs::branch_of;
use crate::support::{check, write_executable, TestRepo};

/// A gate whose one blocking check `lint` runs `command`, with `extra`
/// (`cwd = "..."`) among its options.
fn gate(command: &str, extra: &str) -> String {
    format!("[phases.implementation]\nchecks = [ {{ name = \"lint\", command = {command:?}, on_failure = \"block\"{extra} }} ]\n")
}

/// The files the `--config-from-ref main` run of the branch checked out
/// flags, with `program` a stand-in that passes first on the `PATH`: what
/// the check runs is not what these tests look at, but which files it is
/// judged by. The verdict warns exactly when a file is flagged.
fn judged(repo: &TestRepo, program: &str) -> Vec<String> {
    write_executable(
        &repo.home().join("bin").join(program),
        "#!/bin/sh\nexit 0\n",
    );
    let path = format!("{}:/usr/bin:/bin", repo.home().join("bin").display());
    let (code, v) = repo.verdict_with(&FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "lint")["status"], "passed", "{v:#}");
    let files = flagged(&v);
    let expected = if files.is_empty() { "passed" } else { "warned" };
    assert_eq!(v["status"], expected, "{v:#}");
    files
}

fn package(name: &str, lints: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{lints}")
}

const INHERITS: &str = "\n[lints]\nworkspace = true\n";

/// A virtual workspace whose lint levels deny what the branch allows.
const WORKSPACE: &str = "[workspace]\nmembers = [\"crates/a\", \"crates/b\"]\nresolver = \"2\"\n\n[workspace.lints.clippy]\ntoo_many_arguments = \"deny\"\n";

#[test]
fn workspace_lints_count_only_for_the_packages_built_that_inherit_them() {
    // Checked with cargo 1.95 and clippy 0.1.95 on this layout (`a`'s
    // `[lints]` says `workspace = true`, `b` has none, the same
    // eight-argument function in each): `cargo clippy -v --workspace`
    // passes `--deny=clippy::too_many_arguments` to `a`'s clippy-driver
    // only, fails on `a` and merely warns on `b`; `cargo clippy -v -p b`
    // passes it to nothing. So a branch that relaxes `[workspace.lints]`
    // weakens `-p a`, `--workspace` and the root's `cargo clippy` (every
    // member of a virtual manifest), and not `-p b` or `cargo clippy` in
    // `crates/b`. `tools/xtask` is a workspace of its own whose package
    // inherits its `[workspace.lints]`: read only when `--manifest-path`
    // builds it.
    let xtask_workspace = "[workspace]\n\n[workspace.lints.rust]\nunsafe_code = \"forbid\"\n";
    let cases: &[(&str, &str, &[&str])] = &[
        ("cargo clippy -p a", "", &["Cargo.toml"]),
        ("cargo clippy --workspace", "", &["Cargo.toml"]),
        ("cargo clippy", "", &["Cargo.toml"]),
        ("cargo build -p a", "", &["Cargo.toml"]),
        ("cargo clippy -p b", "", &[]),
        ("cargo clippy", ", cwd = \"crates/b\"", &[]),
        ("cargo check", ", cwd = \"crates/b\"", &[]),
        (
            "cargo clippy --manifest-path tools/xtask/Cargo.toml",
            "",
            &["tools/xtask/Cargo.toml"],
        ),
    ];
    for (command, extra, expected) in cases {
        let xtask = format!("{}{INHERITS}\n{xtask_workspace}", package("xtask", ""));
        let repo = branch_of(
            &[
                ("phasegate.toml", &gate(command, extra)),
                ("Cargo.toml", WORKSPACE),
                ("crates/a/Cargo.toml", &package("a", INHERITS)),
                ("crates/b/Cargo.toml", &package("b", "")),
                ("tools/xtask/Cargo.toml", &xtask),
            ],
            &[
                ("Cargo.toml", &WORKSPACE.replace("deny", "allow")),
                ("tools/xtask/Cargo.toml", &xtask.replace("forbid", "allow")),
            ],
        );
        assert_eq!(judged(&repo, "cargo"), *expected, "{command} {extra}");
    }
}

#[test]
fn a_package_that_stops_inheriting_workspace_lints_is_flagged_for_its_own_lints() {
    // `b` builds with `[workspace.lints]` on `main` and not on the
    // branch: its own `[lints]` changed, which is what weakens it; the
    // relaxed `[workspace.lints]` counts too, as `main` had `b` take it.
    let repo = branch_of(
        &[
            ("phasegate.toml", &gate("cargo clippy -p b", "")),
            ("Cargo.toml", WORKSPACE),
            ("crates/a/Cargo.toml", &package("a", "")),
            ("crates/b/Cargo.toml", &package("b", INHERITS)),
        ],
        &[
            ("Cargo.toml", &WORKSPACE.replace("deny", "allow")),
            ("crates/b/Cargo.toml", &package("b", "")),
        ],
    );
    assert_eq!(
        judged(&repo, "cargo"),
        ["Cargo.toml", "crates/b/Cargo.toml"]
    );
}

/// A case of the cascade: the files of `web/` on `main`, the one the
/// branch relaxes, and the files flagged.
type Cascade<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a [&'a str]);

/// An eslintrc that turns one rule on, in JSON.
const STRICT_JSON: &str = "{\n  \"rules\": { \"no-unused-vars\": \"error\" }\n}\n";

#[test]
fn an_eslintrc_that_says_root_true_hides_the_ones_above_it() {
    // eslint is not installed here: this follows the documented
    // behaviour of its older mode (eslint 8, "Cascading and Hierarchy":
    // the search for `.eslintrc.*` and `package.json` files goes up from
    // each linted file's directory and stops at the first configuration
    // with `"root": true`; in one directory eslint reads only the first of
    // `.eslintrc.js`, `.eslintrc.cjs`, `.eslintrc.yaml`, `.eslintrc.yml`,
    // `.eslintrc.json`, `.eslintrc` and a `package.json` holding
    // `eslintConfig`). The check lints `web/`; the branch relaxes both
    // the root's `.eslintrc.json` and the rule of `web/`'s own file.
    // Where `web/`'s file stops the cascade, the root's is not read and
    // only `web/`'s is flagged; a JavaScript file, which only node can
    // evaluate, is taken not to stop it, so the root's still counts.
    let yaml_root = "root: true\nrules:\n  no-unused-vars: error\n";
    let json_root = "{\n  // the web app's own lint set\n  \"root\": true,\n  \"rules\": { \"no-unused-vars\": \"error\" }\n}\n";
    let package_root = "{\n  \"name\": \"web\",\n  \"eslintConfig\": {\n    \"root\": true,\n    \"rules\": { \"no-unused-vars\": \"error\" }\n  }\n}\n";
    let js_root =
        "module.exports = {\n  root: true,\n  rules: { \"no-unused-vars\": \"error\" },\n};\n";
    let not_root = "root: false\nrules:\n  no-unused-vars: error\n";
    let cases: &[Cascade<'_>] = &[
        (
            &[("web/.eslintrc.yml", yaml_root)],
            "web/.eslintrc.yml",
            &["web/.eslintrc.yml"],
        ),
        (
            &[("web/.eslintrc.yaml", yaml_root)],
            "web/.eslintrc.yaml",
            &["web/.eslintrc.yaml"],
        ),
        (
            &[("web/.eslintrc", yaml_root)],
            "web/.eslintrc",
            &["web/.eslintrc"],
        ),
        (
            &[("web/.eslintrc.json", json_root)],
            "web/.eslintrc.json",
            &["web/.eslintrc.json"],
        ),
        (
            &[("web/package.json", package_root)],
            "web/package.json",
            &["web/package.json"],
        ),
        // A `package.json` without `eslintConfig` is no configuration:
        // the `.eslintrc.json` beside it decides.
        (
            &[
                ("web/.eslintrc.json", json_root),
                ("web/package.json", "{ \"name\": \"web\" }\n"),
            ],
            "web/.eslintrc.json",
            &["web/.eslintrc.json"],
        ),
        (
            &[("web/.eslintrc.yml", not_root)],
            "web/.eslintrc.yml",
            &[".eslintrc.json", "web/.eslintrc.yml"],
        ),
        (
            &[("web/.eslintrc.js", js_root)],
            "web/.eslintrc.js",
            &[".eslintrc.json", "web/.eslintrc.js"],
        ),
        // `.eslintrc.js` comes first: the `.eslintrc.json` that says
        // `root` beside it is not the one eslint reads.
        (
            &[
                ("web/.eslintrc.js", js_root),
                ("web/.eslintrc.json", json_root),
            ],
            "web/.eslintrc.js",
            &[".eslintrc.json", "web/.eslintrc.js"],
        ),
    ];
    for (files, relaxed, expected) in cases {
        let mut on_main = vec![
            (
                "phasegate.toml".to_string(),
                gate("eslint .", ", cwd = \"web\""),
            ),
            (".eslintrc.json".to_string(), STRICT_JSON.to_string()),
            ("web/app.js".to_string(), "var x = 1;\n".to_string()),
        ];
        on_main.extend(files.iter().map(|(p, t)| (p.to_string(), t.to_string())));
        let before = files.iter().find(|(p, _)| p == relaxed).unwrap().1;
        let on_branch = [
            (
                ".eslintrc.json".to_string(),
                STRICT_JSON.replace("\"error\"", "\"off\""),
            ),
            (relaxed.to_string(), before.replace("error", "off")),
        ];
        let main: Vec<(&str, &str)> = on_main
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let branch: Vec<(&str, &str)> = on_branch
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let repo = branch_of(&main, &branch);
        assert_eq!(judged(&repo, "eslint"), *expected, "{files:?}");
    }
}

#[test]
fn a_root_true_below_where_eslint_runs_hides_nothing_above_it() {
    // Run at the root, eslint lints the root's files too, which read the
    // root's `.eslintrc.json`: `web/`'s `root: true` stops only the
    // cascade of the files under `web/`. The branch that relaxes the root's
    // file is flagged; one that edits a file above a stop where the check
    // runs (`cwd = "web"`) is not, and neither is an unchanged stop.
    let web = "{\n  \"root\": true,\n  \"rules\": { \"no-unused-vars\": \"error\" }\n}\n";
    for (extra, expected) in [("", &[".eslintrc.json"][..]), (", cwd = \"web\"", &[])] {
        let repo = branch_of(
            &[
                ("phasegate.toml", &gate("eslint .", extra)),
                (".eslintrc.json", STRICT_JSON),
                ("web/.eslintrc.json", web),
                ("web/app.js", "var x = 1;\n"),
            ],
            &[(
                ".eslintrc.json",
                &STRICT_JSON.replace("\"error\"", "\"off\""),
            )],
        );
        assert_eq!(judged(&repo, "eslint"), expected, "{extra}");
    }
}
