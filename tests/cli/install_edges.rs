//! Installing the hooks as a new user meets them: the hook run by a git
//! that was started with a `PATH` of its own (a GUI, an editor), and
//! `install.sh`.

use crate::support::{output, Run, TestRepo};

/// A `PATH` as a git GUI started from the desktop has it: the system's
/// directories, none where `cargo install` puts phasegate.
const GUI_PATH: &str = "/usr/bin:/bin";

fn gate(repo: &TestRepo, command: &str) {
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"gate\", shell = true, command = {command:?} }} ]\n"
    ));
}

/// `git commit -qm MESSAGE` started with the GUI's `PATH`.
fn commit_from_gui(repo: &TestRepo, message: &str) -> Run {
    output(
        &repo
            .command("git")
            .args(["commit", "-qm", message])
            .env("PATH", GUI_PATH)
            .output()
            .unwrap(),
    )
}

#[test]
fn a_hook_git_runs_without_phasegate_on_path_runs_the_phasegate_that_installed_it() {
    let repo = TestRepo::new();
    assert_eq!(repo.phasegate(&["install"]).code, 0);

    gate(&repo, "exit 1");
    repo.stage("a.txt", "a\n");
    let run = commit_from_gui(&repo, "refused");
    assert_ne!(
        run.code, 0,
        "the failing gate lets the commit through: {run:?}"
    );
    assert!(
        !run.stderr.contains("not on PATH"),
        "the gate did not run: {run:?}"
    );
    assert!(
        run.stderr.contains("phasegate stopped the commit"),
        "{run:?}"
    );

    gate(&repo, "exit 0");
    repo.git(&["add", "-A"]);
    let run = commit_from_gui(&repo, "passes");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.git(&["log", "--format=%s"]), "passes\n");
}

#[test]
fn a_hook_the_repository_tracks_names_nobody_s_phasegate_and_installing_again_changes_nothing() {
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-commit"]).code, 0);
    repo.commit_all("share the hook");
    let shared = repo.read(".githooks/pre-commit");
    assert!(shared.contains("\ninstalled=\n"), "{shared}");

    // A teammate installs too, from a phasegate elsewhere: the tracked file
    // stays as it is.
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("was already installed:"), "{run:?}");
    assert_eq!(repo.read(".githooks/pre-commit"), shared);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// `install.sh` of this checkout.
const INSTALL_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh");

/// A `cargo` that says it is `version` and, asked to install, writes the
/// `--path` it was given to `cargo-path` beside it and copies the phasegate
/// under test where `cargo install` puts it: `install.sh` runs without a
/// build of minutes.
fn stub_cargo(dir: &std::path::Path, version: &str) -> std::path::PathBuf {
    let bin = dir.join("stub-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("cargo-path");
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo '{version}' ;;\n  install)\n    while [ \"$#\" -gt 0 ]; do\n      case $1 in --path) printf '%s\\n' \"$2\" > '{log}'; shift ;; esac\n      shift\n    done\n    mkdir -p \"$CARGO_HOME/bin\" && cp '{exe}' \"$CARGO_HOME/bin/phasegate\" ;;\n  *) exit 1 ;;\nesac\n",
        log = log.display(),
        exe = crate::support::BIN,
    );
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, script).unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    bin
}

/// `sh SCRIPT ARGS` in `cwd` with `PATH` set to `path`, `CARGO_HOME` in
/// the test's home and `env` set.
fn install_sh(
    repo: &TestRepo,
    cwd: &std::path::Path,
    script: &str,
    args: &[&str],
    path: &str,
    env: &[(&str, &std::ffi::OsStr)],
) -> Run {
    let mut sh = repo.command("/bin/sh");
    sh.arg(script)
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .env("CARGO_HOME", repo.home().join("cargo"))
        .env_remove("CARGO_INSTALL_ROOT")
        .env_remove("CDPATH");
    for (key, value) in env {
        sh.env(key, value);
    }
    output(&sh.output().unwrap())
}

#[test]
fn install_sh_without_cargo_or_with_one_too_old_says_what_to_install() {
    let repo = TestRepo::new();
    // A PATH with the tools the script needs, and no cargo (which some
    // systems have in /usr/bin).
    let tools = repo.home().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for tool in ["dirname", "sed"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|dir| std::path::Path::new(dir).join(tool))
            .find(|path| path.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, tools.join(tool)).unwrap();
    }
    let run = install_sh(
        &repo,
        &repo.path(),
        INSTALL_SH,
        &[],
        &tools.to_string_lossy(),
        &[],
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("cargo is not installed or not on PATH")
            && run.stderr.contains("https://rustup.rs"),
        "{run:?}"
    );

    let stub = stub_cargo(&repo.home(), "cargo 1.80.0 (376290515 2024-07-16)");
    let path = format!("{}:{GUI_PATH}", stub.display());
    let run = install_sh(&repo, &repo.path(), INSTALL_SH, &[], &path, &[]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("needs Rust 1.85 or newer, and this is cargo 1.80.0")
            && run.stderr.contains("rustup update"),
        "{run:?}"
    );
    assert!(!repo.home().join("cargo-path").exists(), "{run:?}");
}

#[test]
fn install_sh_run_from_another_directory_builds_its_own_checkout_whatever_cdpath_says() {
    let repo = TestRepo::new();
    gate(&repo, "exit 0");
    repo.commit_all("gated");
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (parent, name) = (checkout.parent().unwrap(), checkout.file_name().unwrap());
    // `cd` looks in CDPATH first for a relative directory, and prints where
    // it went: a directory of the checkout's name there would take its
    // place.
    let decoy = repo.home().join("elsewhere");
    std::fs::create_dir_all(decoy.join(name)).unwrap();
    let stub = stub_cargo(&repo.home(), "cargo 1.95.0 (f2d3ce0bd 2026-03-21)");
    let path = format!("{}:{GUI_PATH}", stub.display());
    let script = std::path::Path::new(name).join("install.sh");
    let run = install_sh(
        &repo,
        parent,
        &script.to_string_lossy(),
        &[&repo.path().to_string_lossy()],
        &path,
        &[("CDPATH", decoy.as_os_str())],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.home().join("cargo-path")).unwrap(),
        format!("{}\n", checkout.display()),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("next: run `phasegate install`"),
        "{run:?}"
    );
    assert!(run.stdout.contains("passed"), "{run:?}");
}
