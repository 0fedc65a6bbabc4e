//! Installing beside other hook managers, and the hook script itself.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{output, write_mode, Run, TestRepo, BIN};

/// `script` run by `sh -e` in a mount namespace of its own, where `dir` is
/// a new, empty file system mounted `noexec` (as `/tmp` or `/dev/shm` are on
/// hardened systems), with `$1` naming `dir` and `$2` the phasegate under
/// test. None where no such namespace can be made (no `unshare`, or user
/// namespaces turned off).
#[expect(
    clippy::print_stderr,
    reason = "a test that can not check here says so in its output"
)]
fn with_noexec_dir(repo: &TestRepo, dir: &Path, script: &str) -> Option<Run> {
    std::fs::create_dir_all(dir).unwrap();
    let whole = format!(
        "mount -t tmpfs -o noexec phasegate-test \"$1\" 2>/dev/null || exit 97\necho mounted\n{script}"
    );
    let run = repo
        .command("unshare")
        .args(["--map-root-user", "--mount", "sh", "-ec", &whole, "sh"])
        .arg(dir)
        .arg(BIN)
        .output()
        .ok()
        .map(|out| output(&out))?;
    if !run.stdout.starts_with("mounted\n") {
        eprintln!("no file system mounted noexec can be made here, not checked: {run:?}");
        return None;
    }
    Some(run)
}

#[test]
fn a_hooks_directory_on_a_noexec_file_system_is_refused_and_the_hook_there_stays() {
    let repo = TestRepo::new();
    let dir = repo.home().join("noexec-hooks");
    // git skips a hook it can not execute, with a hint, and commits: an
    // install there would gate nothing.
    let Some(run) = with_noexec_dir(
        &repo,
        &dir,
        r#"printf '#!/bin/sh\necho mine\n' > "$1/pre-commit"
chmod 700 "$1/pre-commit"
git config core.hooksPath "$1"
code=0
"$2" install --hook pre-commit || code=$?
echo "install: $code"
ls -A "$1"
cat "$1/pre-commit"
"#,
    ) else {
        return;
    };
    assert!(run.stdout.contains("install: 2\n"), "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "git can not run a hook from `{}`: its file system is mounted `noexec`",
            dir.display()
        )) && run.stderr.contains("core.hooksPath")
            && run.stderr.contains("run `phasegate install` again"),
        "{run:?}"
    );
    // The hook that was there is not moved aside, and nothing is left
    // beside it.
    assert!(
        run.stdout
            .ends_with("install: 2\npre-commit\n#!/bin/sh\necho mine\n"),
        "{run:?}"
    );
}

#[test]
fn a_tracked_hook_kept_aside_is_not_to_be_committed_over_and_comes_back_as_it_was() {
    let repo = TestRepo::new();
    // husky 5 to 8: the team's hooks are files of the repository, in
    // `.husky`, which `core.hooksPath` names.
    let team = "#!/bin/sh\n. \"$(dirname \"$0\")/_/husky.sh\"\nnpx lint-staged\n";
    write_mode(&repo.path().join(".husky/pre-commit"), team, 0o750);
    repo.commit_all("husky");
    repo.git(&["config", "core.hooksPath", ".husky"]);

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    let hook = repo.path().join(".husky/pre-commit");
    let kept = repo.path().join(".husky/pre-commit.phasegate-chained");
    // Committed as it is, the hook would be phasegate's for everyone, and
    // the team's would be in no commit.
    assert!(
        run.stderr.contains(&format!(
            "the repository's hook is kept as {}, which git does not track. Do not commit {} as it is",
            kept.display(),
            hook.display()
        )) && run
            .stderr
            .contains("add the line `phasegate hook pre-commit` to the repository's hook"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("Commit that only if"), "{run:?}");

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.read(".husky/pre-commit"), team);
    let mode = std::fs::metadata(&hook).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750, "{run:?}");
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "{run:?}");
}

#[test]
fn a_hooks_path_of_one_work_tree_only_does_not_call_the_others_ungated_once_they_are_gated() {
    let repo = TestRepo::new();
    repo.write("a.md", "# a\n").commit_all("first");
    let linked = repo.linked_worktree("own-hooks");
    // `core.hooksPath` in the linked work tree's own configuration: the
    // main work tree runs the shared hooks of `.git/hooks`.
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    repo.git_at(
        &linked,
        &["config", "--worktree", "core.hooksPath", "hooks"],
    );
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        repo.path().join(".git/hooks/pre-commit").exists(),
        "{run:?}"
    );

    let run = repo.phasegate_in(&linked, &["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(linked.join("hooks/pre-commit").exists(), "{run:?}");
    assert!(!run.stderr.contains("not gated"), "{run:?}");
}

/// A `cargo` that says it is 1.90 and, asked to install, copies the
/// phasegate under test where `cargo install` puts it.
fn stub_cargo(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("stub-bin");
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'cargo 1.90.0 (840b83a10 2025-07-30)' ;;\n  install) mkdir -p \"$CARGO_HOME/bin\" && cp '{BIN}' \"$CARGO_HOME/bin/phasegate\" ;;\n  *) exit 1 ;;\nesac\n"
    );
    write_mode(&bin.join("cargo"), &script, 0o755);
    bin
}

/// `sh install.sh` with `PATH` set to `path` and `CARGO_HOME` in the
/// test's home.
fn install_sh(repo: &TestRepo, path: &str) -> Run {
    output(
        &repo
            .command("/bin/sh")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh"))
            .env("PATH", path)
            .env("CARGO_HOME", repo.home().join("cargo"))
            .env_remove("CARGO_INSTALL_ROOT")
            .output()
            .unwrap(),
    )
}

#[test]
fn install_sh_says_when_another_phasegate_comes_first_on_path() {
    let repo = TestRepo::new();
    let stub = stub_cargo(&repo.home());
    let installed = repo.home().join("cargo/bin");
    // An older phasegate installed by hand before the one cargo installs:
    // a shell, and the hooks, would run that one.
    let old = repo.home().join("old-bin");
    write_mode(
        &old.join("phasegate"),
        "#!/bin/sh\necho 'phasegate 0.0.1'\n",
        0o755,
    );
    let path = format!(
        "{}:{}:{}:/usr/bin:/bin",
        stub.display(),
        old.display(),
        installed.display()
    );
    let run = install_sh(&repo, &path);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "the `phasegate` on your PATH is {} (phasegate 0.0.1), not the one just installed",
            old.join("phasegate").display()
        )) && run.stderr.contains(&format!(
            "put {} before {} in your PATH",
            installed.display(),
            old.display()
        )),
        "{run:?}"
    );

    // The directory on PATH written with a slash at its end is the same
    // directory: nothing to add.
    let path = format!("{}:{}/:/usr/bin:/bin", stub.display(), installed.display());
    let run = install_sh(&repo, &path);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("to your PATH"), "{run:?}");
    assert!(!run.stderr.contains("warning"), "{run:?}");

    // Not on PATH at all, it is said.
    let path = format!("{}:/usr/bin:/bin", stub.display());
    let run = install_sh(&repo, &path);
    assert!(
        run.stdout
            .contains(&format!("note: add {} to your PATH", installed.display())),
        "{run:?}"
    );
}
