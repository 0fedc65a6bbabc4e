//! `--config-from-ref` and the cargo configuration a branch changes: runners, wrappers, flags and toolchains.

use crate::ci_scripts::finding;
use crate::support::{check, TestRepo};

/// The gate of `main` over what `feature` changed since it left `main`.
pub(crate) const FROM_MAIN: [&str; 6] = [
    "--config-from-ref",
    "main",
    "--from-ref",
    "main",
    "--to-ref",
    "HEAD",
];

/// A gate whose one blocking check is `cargo test`.
const CARGO_GATE: &str = "[commands]\ntests = \"cargo test --quiet\"\n\n[phases.implementation]\nchecks = [ { name = \"tests\", on_failure = \"block\" } ]\n";

pub(crate) const MANIFEST: &str =
    "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";

pub(crate) const PASSING: &str =
    "pub fn two() -> u32 {\n    2\n}\n\n#[test]\nfn two_is_two() {\n    assert_eq!(two(), 2);\n}\n";

/// What the branch makes of the crate: a function its test now fails.
pub(crate) const BROKEN: &str =
    "pub fn two() -> u32 {\n    3\n}\n\n#[test]\nfn two_is_two() {\n    assert_eq!(two(), 2);\n}\n";

/// `main` holding a tiny crate whose test passes, gated by `cargo test`,
/// with `files`; then a branch `feature` (checked out) that breaks the
/// test and writes `changes` over the files.
fn crate_branch(files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(CARGO_GATE)
        .write("Cargo.toml", MANIFEST)
        .write("src/lib.rs", PASSING)
        .write(".gitignore", "/target\n/Cargo.lock\n");
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("src/lib.rs", BROKEN);
    for (path, text) in changes {
        repo.write(path, text);
    }
    repo.commit_all("feature");
    repo
}

pub(crate) fn no_warning(v: &serde_json::Value) {
    assert!(!v.to_string().contains("differs from its version"), "{v:#}");
}

#[test]
fn a_runner_the_branch_sets_in_cargo_config_warns_at_its_line() {
    // cargo runs the test binaries through the runner: `true` passes the
    // broken test, for real.
    let config = "[build]\njobs = 2\n\n[target.'cfg(all())']\nrunner = \"true\"\n";
    let repo = crate_branch(&[], &[(".cargo/config.toml", config)]);
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, ".cargo/config.toml");
    assert_eq!(found["line"], 5, "{v:#}");
    assert_eq!(found["severity"], "warning", "{v:#}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains(
            "check `tests` runs the cargo setting `target.'cfg(all())'.runner` of `.cargo/config.toml`, which differs from its version in `main`"
        ),
        "{message}"
    );
    assert!(v["summary"].to_string().contains("runner"), "{v:#}");
    // Under strict it blocks.
    let (code, v) = repo.verdict(&[&FROM_MAIN[..], &["--profile", "strict"][..]].concat());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["status"], "failed", "{v:#}");

    // In `.cargo/config`, which cargo reads over `.cargo/config.toml`, and
    // as a triple's runner.
    let triple = "[target.x86_64-unknown-linux-gnu]\nrunner = \"true\"\n[target.aarch64-unknown-linux-gnu]\nrunner = \"true\"\n";
    let repo = crate_branch(
        &[(".cargo/config.toml", "[build]\njobs = 2\n")],
        &[(".cargo/config", triple)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(v["status"], "warned", "{v:#}");
    assert_eq!(code, 0, "{v:#}");
    let found = finding(&v, ".cargo/config");
    assert_eq!(found["line"], 2, "{v:#}");
}

#[test]
fn wrappers_flags_and_env_the_branch_changes_warn_and_unrelated_settings_do_not() {
    let cases = [
        (
            "[build]\nrustc-wrapper = \"env\"\n",
            "`build.rustc-wrapper`",
            2,
        ),
        (
            "[build]\ntarget-dir = \"out\"\nrustc-workspace-wrapper = \"env\"\n",
            "`build.rustc-workspace-wrapper`",
            3,
        ),
        (
            "[build]\nrustflags = [\"--cap-lints\", \"allow\"]\n",
            "`build.rustflags`",
            2,
        ),
        (
            "[env]\nTINY_SKIP = { value = \"1\", force = true }\n",
            "`env.TINY_SKIP`",
            2,
        ),
    ];
    for (config, key, line) in cases {
        let repo = crate_branch(&[], &[(".cargo/config.toml", config)]);
        let (code, v) = repo.verdict(&FROM_MAIN);
        // The test still fails (`env` runs the compiler as it is, and
        // nothing reads the variable), but the change warns.
        assert_eq!(code, 1, "{key}: {v:#}");
        let found = finding(&v, ".cargo/config.toml");
        assert_eq!(found["line"], line, "{key}: {v:#}");
        assert!(
            found["message"].as_str().unwrap().contains(key),
            "{key}: {v:#}"
        );
    }

    // `term.color`, `build.target-dir` and `build.jobs` change how cargo
    // prints and where it builds, not what the test verifies: the broken
    // test fails the run, with no warning.
    let gate = "[target.'cfg(unix)']\nrunner = \"env\"\n\n[term]\ncolor = \"auto\"\n";
    let changed = "[target.'cfg(unix)']\nrunner = \"env\"\n\n[term]\ncolor = \"never\"\n\n[build]\ntarget-dir = \"target/other\"\njobs = 1\n";
    let repo = crate_branch(
        &[(".cargo/config.toml", gate)],
        &[(".cargo/config.toml", changed)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    no_warning(&v);

    // The same setting, moved to the legacy file unchanged, verifies the
    // same.
    let runner = "[target.'cfg(unix)']\nrunner = \"env\"\n";
    let repo = crate_branch(
        &[(".cargo/config.toml", runner)],
        &[(".cargo/config", runner)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}

#[test]
fn a_runner_the_branch_removes_warns_on_the_file_that_held_it() {
    // `main` runs its tests under a checker (here `env`, which runs them
    // as they are); the branch drops it.
    let gate = "[target.'cfg(unix)']\nrunner = \"env\"\n";
    let repo = crate_branch(
        &[(".cargo/config.toml", gate)],
        &[(".cargo/config.toml", "[term]\ncolor = \"never\"\n")],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    let found = finding(&v, ".cargo/config.toml");
    assert!(found["line"].is_null(), "{v:#}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("`target.'cfg(unix)'.runner`"),
        "{v:#}"
    );
}

#[test]
fn a_toolchain_file_the_branch_changes_warns_unless_the_check_names_its_toolchain() {
    // The test runs with rustup's toolchain set in its environment, which
    // rustup prefers to any toolchain file: the run itself is as before.
    let toolchain = "[toolchain]\nchannel = \"stable\"\ncomponents = [\"clippy\"]\n";
    let moved =
        "# pinned\n[toolchain]\ncomponents = [\"clippy\", \"rustfmt\"]\nchannel = \"1.70.0\"\n";
    let repo = crate_branch(
        &[("rust-toolchain.toml", toolchain)],
        &[("rust-toolchain.toml", moved)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    let found = finding(&v, "rust-toolchain.toml");
    assert_eq!(found["line"], 4, "{v:#}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("the toolchain setting `toolchain.channel` of `rust-toolchain.toml`"),
        "{v:#}"
    );
    // The legacy file, one line, read over `rust-toolchain.toml`.
    let repo = crate_branch(
        &[("rust-toolchain.toml", toolchain)],
        &[("rust-toolchain", "1.70.0\n")],
    );
    let (_, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(finding(&v, "rust-toolchain")["line"], 1, "{v:#}");
    // Only the components changed: the same toolchain.
    let repo = crate_branch(
        &[("rust-toolchain.toml", toolchain)],
        &[(
            "rust-toolchain.toml",
            "[toolchain]\nchannel = \"stable\"\ncomponents = [\"clippy\", \"rustfmt\"]\n",
        )],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
    // A command that names its toolchain (`cargo +stable`) is not swayed
    // by the file.
    let pinned = CARGO_GATE.replace("cargo test", "cargo +stable test");
    let repo = crate_branch(
        &[
            ("phasegate.toml", &pinned),
            ("rust-toolchain.toml", toolchain),
        ],
        &[("rust-toolchain.toml", moved)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}
