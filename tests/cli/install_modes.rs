//! Install in shared repositories, tracked hook directories and husky projects.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{output, Run, TestRepo, BIN};

/// A check that passes only when `a.txt` says `ok`.
fn gate(repo: &TestRepo) {
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"gate\", shell = true, command = \"grep -q ok a.txt\" } ]\n",
    );
}

/// `git ARGS` in `dir`, with the hook finding the phasegate under test.
fn git_with_hook(repo: &TestRepo, dir: &Path, args: &[&str]) -> Run {
    output(
        &repo
            .command("git")
            .args(args)
            .current_dir(dir)
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    )
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_tracked_hooks_directory_reaches_a_clone_with_autocrlf_as_a_hook_git_can_run() {
    let repo = TestRepo::new();
    gate(&repo);
    repo.write("a.txt", "ok\n");
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(".gitattributes"), "{}", run.stderr);
    assert_eq!(
        repo.read(".githooks/.gitattributes"),
        "/pre-commit text eol=lf\n"
    );
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "gate everyone's commits", "--no-verify"]);

    // A teammate on Windows: Git for Windows sets `core.autocrlf=true`.
    let clone = repo.home().join("clone");
    let origin = repo.path().to_string_lossy().into_owned();
    repo.git(&[
        "-c",
        "core.autocrlf=true",
        "clone",
        "-q",
        &origin,
        &clone.to_string_lossy(),
    ]);
    repo.git_at(&clone, &["config", "core.autocrlf", "true"]);
    repo.git_at(&clone, &["config", "core.hooksPath", ".githooks"]);
    repo.git_at(&clone, &["config", "user.email", "test@example.com"]);
    repo.git_at(&clone, &["config", "user.name", "Test"]);
    let hook = std::fs::read_to_string(clone.join(".githooks/pre-commit")).unwrap();
    assert!(!hook.contains('\r'), "{hook:?}");

    std::fs::write(clone.join("a.txt"), "bad\n").unwrap();
    repo.git_at(&clone, &["add", "a.txt"]);
    let run = git_with_hook(&repo, &clone, &["commit", "-qm", "bad"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!run.stderr.contains("cannot exec"), "{}", run.stderr);
    std::fs::write(clone.join("a.txt"), "ok, again\n").unwrap();
    repo.git_at(&clone, &["add", "a.txt"]);
    let run = git_with_hook(&repo, &clone, &["commit", "-qm", "good"]);
    assert_eq!(run.code, 0, "{run:?}");

    // Uninstalling takes the rule away with the hook.
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!repo.exists(".githooks/.gitattributes"));
}

#[test]
fn a_rule_of_the_repository_that_keeps_line_ends_is_left_alone_and_others_are_kept() {
    let repo = TestRepo::new();
    repo.write(".gitattributes", "*.sh text eol=lf\n.githooks/* -text\n");
    repo.write(".githooks/.gitattributes", "*.bat eol=crlf");
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains(".gitattributes"), "{}", run.stderr);
    assert_eq!(repo.read(".githooks/.gitattributes"), "*.bat eol=crlf");

    // Without it, phasegate's rule goes after the repository's own, the
    // last line as the file had it (without a line end), so that uninstall
    // gives the file back as it was.
    repo.write(".gitattributes", "");
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        repo.read(".githooks/.gitattributes"),
        "*.bat eol=crlf\n/pre-commit text eol=lf"
    );
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(repo.read(".githooks/.gitattributes"), "*.bat eol=crlf");
}

#[test]
fn installing_again_in_a_clone_that_checked_the_hook_out_with_crlf_repairs_it_as_phasegates() {
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let hook = repo.path().join(".githooks/pre-commit");
    let written = std::fs::read_to_string(&hook).unwrap();
    // What a checkout with `core.autocrlf=true` and no rule makes of it.
    std::fs::write(&hook, written.replace('\n', "\r\n")).unwrap();
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("CRLF"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), written);
    assert_eq!(
        file_names(&repo.path().join(".githooks")),
        [".gitattributes", "pre-commit"]
    );
}

#[test]
fn a_hook_changed_by_hand_is_kept_however_many_earlier_ones_are_kept_already() {
    let repo = TestRepo::new();
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let hooks = repo.path().join(".git/hooks");
    let kept = |n: usize| match n {
        0 => hooks.join("pre-commit.phasegate-edited"),
        n => hooks.join(format!("pre-commit.phasegate-edited.{n}")),
    };
    for n in 0..1000 {
        std::fs::write(kept(n), format!("edit {n}\n")).unwrap();
    }
    let hook = hooks.join("pre-commit");
    let edited = std::fs::read_to_string(&hook).unwrap() + "echo mine\n";
    std::fs::write(&hook, &edited).unwrap();
    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for n in 0..1000 {
        assert_eq!(
            std::fs::read_to_string(kept(n)).unwrap(),
            format!("edit {n}\n")
        );
    }
    assert_eq!(std::fs::read_to_string(kept(1000)).unwrap(), edited);
    assert!(
        run.stdout.contains("pre-commit.phasegate-edited.1000"),
        "{}",
        run.stdout
    );
}

/// The hooks directory husky 9's `husky` command (run by the `prepare`
/// script at `npm install`) writes, as its `index.js` does: `core.hooksPath`
/// at `.husky/_`, a stub per hook reading `h` beside it, and a `.gitignore`
/// of `*`. `h` here is a stand-in that runs the project's hook as husky's
/// does (`sh -e .husky/<hook>`).
fn husky_9(repo: &TestRepo) {
    repo.write(
        "package.json",
        "{\"scripts\": {\"prepare\": \"husky\"}, \"devDependencies\": {\"husky\": \"^9.1.7\"}}\n",
    );
    repo.git(&["config", "core.hooksPath", ".husky/_"]);
    repo.write(".husky/_/.gitignore", "*");
    repo.write(
        ".husky/_/h",
        "#!/usr/bin/env sh\ns=$(dirname \"$(dirname \"$0\")\")/$(basename \"$0\")\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n",
    );
    for hook in ["pre-commit", "pre-push"] {
        let stub = repo.path().join(".husky/_").join(hook);
        std::fs::write(&stub, "#!/usr/bin/env sh\n. \"${0%/*}/h\"").unwrap();
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn installing_where_husky_rewrites_the_hooks_says_the_line_that_keeps_the_gate() {
    let repo = TestRepo::new();
    husky_9(&repo);
    repo.write(".husky/pre-commit", "npx lint-staged\n");
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("husky"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("add the line `phasegate hook pre-commit` to "),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(".husky/pre-commit"), "{}", run.stderr);
    // husky writes no stub for pre-merge-commit: phasegate's stays.
    assert!(!run.stderr.contains("pre-merge-commit"), "{}", run.stderr);

    // Once the project's hook runs the gate, husky keeps it.
    repo.write(
        ".husky/pre-commit",
        "npx lint-staged\nphasegate hook pre-commit\n",
    );
    let run = repo.phasegate(&["install"]);
    assert!(!run.stderr.contains("husky"), "{}", run.stderr);
}

#[test]
fn installing_before_husky_first_runs_says_husky_will_turn_the_hook_off() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\"scripts\": {\"prepare\": \"husky\"}, \"devDependencies\": {\"husky\": \"^9.1.7\"}}\n",
    );
    let run = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("core.hooksPath"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("add the line `phasegate hook pre-push \"$@\"` to "),
        "{}",
        run.stderr
    );
    // Without husky, nothing is said.
    repo.write("package.json", "{\"scripts\": {\"prepare\": \"tsc\"}}\n");
    let run = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert!(!run.stderr.contains("husky"), "{}", run.stderr);
}
