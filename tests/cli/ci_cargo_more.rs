//! --config-from-ref and cargo: config files named on the command line, cargo's own warnings, and variables a branch could set.

use crate::ci_cargo::{no_warning, BROKEN, MANIFEST, PASSING};
use crate::ci_scripts::finding;
use crate::support::{check, TestRepo};

/// The gate of `main` over what the branch changed since it left `main`.
fn from_main(to: &str) -> Vec<&str> {
    vec![
        "--config-from-ref",
        "main",
        "--from-ref",
        "main",
        "--to-ref",
        to,
    ]
}

/// A gate whose one blocking check is `command` (`extra` more options).
pub(crate) fn gate(command: &str, extra: &str) -> String {
    format!("[commands]\ntests = {command:?}\n\n[phases.implementation]\nchecks = [ {{ name = \"tests\", on_failure = \"block\"{extra} }} ]\n")
}

/// `main` holding a tiny crate whose test passes, gated by `gate`, with
/// `files`; then a branch `feature` (checked out) that breaks the test
/// and writes `changes` over the files. A `.sh` file is executable.
fn crate_branch(gate: &str, files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.config(gate)
        .write("Cargo.toml", MANIFEST)
        .write("src/lib.rs", PASSING)
        .write(".gitignore", "/target\n/Cargo.lock\n");
    for (path, text) in files {
        write(&repo, path, text);
    }
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("src/lib.rs", BROKEN);
    for (path, text) in changes {
        write(&repo, path, text);
    }
    repo.commit_all("feature");
    repo
}

/// Writes `path`, executable when it is a shell script.
fn write(repo: &TestRepo, path: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    repo.write(path, text);
    if std::path::Path::new(path).extension() == Some("sh".as_ref()) {
        let full = repo.path().join(path);
        std::fs::set_permissions(full, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn cargos_warning_about_both_config_files_names_them_from_the_repository() {
    let jobs = "[build]\njobs = 2\n";
    let repo = crate_branch(
        &gate("cargo test --quiet", ""),
        &[(".cargo/config.toml", jobs)],
        &[(".cargo/config", jobs)],
    );
    let said = "both `.cargo/config` and `.cargo/config.toml` exist. Using `.cargo/config`";
    // In the work tree, and in a temporary checkout of `feature` while
    // `main` is checked out: cargo names the files absolutely, from where
    // it ran.
    for (checked_out, to) in [("feature", "HEAD"), ("main", "feature")] {
        repo.git(&["checkout", "-q", checked_out]);
        let (code, v) = repo.verdict(&from_main(to));
        assert_eq!(code, 1, "{v:#}");
        assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
        let summary = v["summary"].to_string();
        assert!(summary.contains(said), "{to}: {v:#}");
        assert!(!summary.contains("/.cargo"), "{to}: {v:#}");
        let warning = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["message"].as_str().unwrap().starts_with("both"))
            .unwrap_or_else(|| panic!("{v:#}"));
        assert_eq!(warning["message"], said, "{to}: {v:#}");
        // Both are the same settings: nothing the gate compares differs.
        no_warning(&v);
        let human = repo.phasegate(&[&["run"][..], &from_main(to)].concat());
        assert_eq!(human.code, 1, "{human:?}");
        assert!(human.stdout.contains(said), "{}", human.stdout);
        assert!(!human.stdout.contains("/.cargo"), "{}", human.stdout);
    }
    // The same warning twice is the same finding: its fingerprint does
    // not hang on the temporary checkout's name.
    let fingerprint = |v: &serde_json::Value| {
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["message"] == said)
            .map(|d| d["fingerprint"].clone())
    };
    let (_, first) = repo.verdict(&from_main("feature"));
    let (_, second) = repo.verdict(&from_main("feature"));
    assert_eq!(fingerprint(&first), fingerprint(&second));
    assert!(fingerprint(&first).is_some(), "{first:#}");
}

/// The variable cargo reads the runner of the host's test binaries from
/// (`CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER`).
fn host_runner_variable() -> String {
    let out = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let host = text
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .unwrap();
    format!(
        "CARGO_TARGET_{}_RUNNER",
        host.to_ascii_uppercase().replace(['-', '.'], "_")
    )
}

/// A runner that runs the test binary as it is.
const RUNNER: &str = "#!/bin/sh\nexec \"$@\"\n";

/// The runner the branch makes of it: every test passes.
const PASSES_ALL: &str = "#!/bin/sh\nexit 0\n";

#[test]
fn a_branchs_local_file_sets_no_variable_of_the_gate_from_the_ref() {
    let variable = host_runner_variable();
    let local = format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", on_failure = \"block\", env = {{ {variable} = \"true\", RUSTFLAGS = \"--cap-lints allow\" }} }} ]\n"
    );
    let repo = crate_branch(
        &gate("cargo test --quiet", ""),
        &[],
        &[("phasegate.local.toml", &local)],
    );
    // Its own gate, the branch's local file sets the runner that passes
    // the broken test.
    let (code, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "HEAD"]);
    assert_eq!(code, 0, "{v:#}");
    // The gate of `main` is `main`'s alone: the test runs, and fails.
    let (code, v) = repo.verdict(&from_main("HEAD"));
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    assert!(!v.to_string().contains("RUSTFLAGS"), "{v:#}");
}

#[test]
fn a_program_the_gates_env_names_in_the_repository_is_compared_as_a_file() {
    let variable = host_runner_variable();
    let env = format!(", env = {{ {variable} = \"./ci/runner.sh\" }}");
    let repo = crate_branch(
        &gate("cargo test --quiet", &env),
        &[("ci/runner.sh", RUNNER)],
        &[("ci/runner.sh", PASSES_ALL)],
    );
    // The variable is `main`'s, but the runner it names is the branch's,
    // which passes the broken test.
    let (code, v) = repo.verdict(&from_main("HEAD"));
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "ci/runner.sh");
    assert!(
        found["message"].as_str().unwrap().contains(
            "check `tests` runs `ci/runner.sh`, which differs from its version in `main`"
        ),
        "{v:#}"
    );
    let (code, v) = repo.verdict(&[&from_main("HEAD")[..], &["--profile", "strict"][..]].concat());
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["status"], "failed", "{v:#}");

    // The same runner as `main`'s: the broken test fails, with no warning.
    let repo = crate_branch(
        &gate("cargo test --quiet", &env),
        &[("ci/runner.sh", RUNNER)],
        &[],
    );
    let (code, v) = repo.verdict(&from_main("HEAD"));
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}

#[test]
fn a_runner_script_an_unchanged_cargo_setting_names_is_compared_as_a_file() {
    let config = "[target.'cfg(all())']\nrunner = [\"ci/runner.sh\"]\n";
    let repo = crate_branch(
        &gate("cargo test --quiet", ""),
        &[(".cargo/config.toml", config), ("ci/runner.sh", RUNNER)],
        &[("ci/runner.sh", PASSES_ALL)],
    );
    let (code, v) = repo.verdict(&from_main("HEAD"));
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let message = finding(&v, "ci/runner.sh")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("runs `ci/runner.sh` (through the cargo setting `target.'cfg(all())'.runner` of `.cargo/config.toml`)"),
        "{message}"
    );
}

#[test]
fn a_config_file_the_command_names_is_compared_at_the_settings_line() {
    let weakened = "[build]\njobs = 2\n\n[target.'cfg(all())']\nrunner = \"true\"\n";
    for command in [
        "cargo --config ci.toml test --quiet",
        "cargo test --config=ci.toml --quiet",
    ] {
        let repo = crate_branch(
            &gate(command, ""),
            &[("ci.toml", "[build]\njobs = 2\n")],
            &[("ci.toml", weakened)],
        );
        // `runner = "true"` passes the broken test, for real.
        let (code, v) = repo.verdict(&from_main("HEAD"));
        assert_eq!(code, 0, "{command}: {v:#}");
        assert_eq!(v["status"], "warned", "{command}: {v:#}");
        let found = finding(&v, "ci.toml");
        assert_eq!(found["line"], 5, "{command}: {v:#}");
        assert!(
            found["message"].as_str().unwrap().contains(
                "the cargo setting `target.'cfg(all())'.runner` of `ci.toml` (named by `--config`)"
            ),
            "{command}: {v:#}"
        );
        let (code, _) =
            repo.verdict(&[&from_main("HEAD")[..], &["--profile", "strict"][..]].concat());
        assert_eq!(code, 1, "{command}");
    }

    // A setting `main` had there and the branch removed warns too; what
    // only changes how fast cargo works does not, nor does a `key=value`,
    // which the gate's own command holds.
    let checked = "[target.'cfg(unix)']\nrunner = \"env\"\n";
    let repo = crate_branch(
        &gate(
            "cargo --config ci.toml --config build.jobs=1 test --quiet",
            "",
        ),
        &[("ci.toml", checked)],
        &[("ci.toml", "[build]\njobs = 1\n")],
    );
    let (code, v) = repo.verdict(&from_main("HEAD"));
    assert_eq!(code, 1, "{v:#}");
    let found = finding(&v, "ci.toml");
    assert!(found["line"].is_null(), "{v:#}");
    let repo = crate_branch(
        &gate(
            "cargo --config ci.toml --config build.jobs=1 test --quiet",
            "",
        ),
        &[("ci.toml", checked)],
        &[("ci.toml", &format!("# kept\n{checked}[build]\njobs = 1\n"))],
    );
    let (code, v) = repo.verdict(&from_main("HEAD"));
    assert_eq!(code, 1, "{v:#}");
    no_warning(&v);
}
