//! Installing into hooks directories shared with a project: husky, tracked hooks, concurrent installs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

use crate::support::{output, wait_for, wait_for_pause, write_executable, TestRepo, BIN};

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A block check that says it ran: a commit it gates is refused, and
/// its output says so.
fn gate(repo: &TestRepo) {
    repo.config(
        "[commands]\ntests = \"sh -c 'echo the gate ran >&2; exit 1'\"\n\n[phases.implementation]\nchecks = [{ name = \"tests\", on_failure = \"block\" }]\n",
    );
}

/// The stub husky 9.1 writes for each hook in `.husky/_` (its `index.js`:
/// `#!/usr/bin/env sh\n. "$(dirname "$0")/h"`, no newline at the end).
const HUSKY_STUB: &str = "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"";

/// What the `husky` command (9.1.5 to 9.1.7, run by the `prepare` script
/// at `npm install`) does to a repository, as its `index.js` does it:
/// `core.hooksPath` at `.husky/_`, a `.gitignore` of `*` there, `h` (its
/// `husky` script, which runs the project's `.husky/<hook>` with `sh -e`),
/// and a stub per hook, written over whatever is there. husky itself is
/// not installed here (no network): this is the layout its source writes.
pub(crate) fn run_husky(repo: &TestRepo) {
    repo.git(&["config", "core.hooksPath", ".husky/_"]);
    let dir = repo.path().join(".husky/_");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".gitignore"), "*").unwrap();
    std::fs::write(
        dir.join("h"),
        "#!/usr/bin/env sh\n[ \"$HUSKY\" = \"2\" ] && set -x\nn=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n\n[ ! -f \"$s\" ] && exit 0\n\ni=\"${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh\"\n[ -f \"$i\" ] && . \"$i\" \"$n\"\n\n[ \"${HUSKY-}\" = \"0\" ] && exit 0\n\nexport PATH=\"node_modules/.bin:$PATH\"\nsh -e \"$s\" \"$@\"\nc=$?\n\n[ $c != 0 ] && echo \"husky - $n script failed (code $c)\"\n[ $c = 127 ] && echo \"husky - command not found in PATH=$PATH\"\nexit $c\n",
    )
    .unwrap();
    for hook in [
        "pre-commit",
        "pre-merge-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-push",
    ] {
        // `writeFileSync` over an existing file keeps its mode.
        let stub = dir.join(hook);
        let existed = stub.exists();
        std::fs::write(&stub, HUSKY_STUB).unwrap();
        if !existed {
            std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

/// `git commit` with the phasegate under test on `PATH`, as a husky hook
/// finds it.
fn commit(repo: &TestRepo, message: &str) -> crate::support::Run {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    output(
        &repo
            .command("git")
            .args(["commit", "-q", "-m", message])
            .env("PATH", path)
            .output()
            .unwrap(),
    )
}

#[test]
fn husky_writing_its_stubs_again_is_said_for_each_hook_it_writes_and_installing_again_works() {
    let repo = TestRepo::new();
    gate(&repo);
    repo.write(
        "package.json",
        "{\"scripts\": {\"prepare\": \"husky\"}, \"devDependencies\": {\"husky\": \"^9.1.7\"}}\n",
    );
    let project_hook = "echo the project hook ran\n";
    repo.write(".husky/pre-commit", project_hook);
    repo.commit_all("husky");
    run_husky(&repo);

    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    // husky 9.1.5 and later write a `pre-merge-commit` stub too, over
    // phasegate's hook.
    for hook in ["pre-commit", "pre-merge-commit"] {
        assert!(
            run.stderr
                .contains(&format!("add the line `phasegate hook {hook}` to ")),
            "{run:?}"
        );
    }
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    let refused = commit(&repo, "gated");
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stderr.contains("the gate ran") && refused.stderr.contains("the project hook ran"),
        "{refused:?}"
    );

    // `npm install`: husky writes its stubs again, over phasegate's hooks.
    run_husky(&repo);
    let run = repo.phasegate(&["install"]);
    assert_eq!(run.code, 0, "{run:?}");
    let dir = repo.path().join(".husky/_");
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-commit.phasegate-chained")).unwrap(),
        HUSKY_STUB
    );
    assert!(
        !names(&dir).iter().any(|name| name.ends_with(".1")),
        "{:?}",
        names(&dir)
    );
    let refused = commit(&repo, "gated again");
    assert!(refused.stderr.contains("the gate ran"), "{refused:?}");

    // husky again, then uninstall: the kept stubs, copies of husky's own,
    // are not left behind, and the project's files are as they were.
    run_husky(&repo);
    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("does not run"), "{run:?}");
    assert!(
        !names(&dir).iter().any(|name| name.contains("phasegate")),
        "{:?}",
        names(&dir)
    );
    assert_eq!(repo.read(".husky/pre-commit"), project_hook);
    assert_eq!(repo.git(&["status", "--porcelain"]), "A  a.txt\n");
}

#[test]
fn two_installs_at_once_keep_the_hook_of_ones_own_once() {
    let repo = TestRepo::new();
    let hooks = repo.path().join(".git/hooks");
    let own = "#!/bin/sh\necho my own hook\n";
    write_executable(&hooks.join("pre-commit"), own);
    let install = || {
        let mut command = repo.command(BIN);
        command
            .args(["install", "--hook", "pre-commit"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    };
    // The first stops once it has decided to keep the hook there, before
    // it moves it.
    let marker = repo.path().join(".git/phasegate/paused");
    let first = install()
        .env("PHASEGATE_TEST_PAUSE_AT", "install-keep")
        .spawn()
        .unwrap();
    wait_for_pause(&marker, "install-keep");
    let mut second = install().spawn().unwrap();
    // The second either finishes, or waits for the first's lock on the
    // hooks directory (a blocked flock(2) is listed with `->` in
    // /proc/locks).
    let pid = second.id().to_string();
    wait_for("the second install to finish or wait", || {
        let waiting = std::fs::read_to_string("/proc/locks").is_ok_and(|locks| {
            locks
                .lines()
                .any(|line| line.contains("->") && line.split_whitespace().any(|word| word == pid))
        });
        (waiting || second.try_wait().unwrap().is_some()).then_some(())
    });
    let signalled = std::process::Command::new("kill")
        .args(["-INT", &first.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let first = output(&first.wait_with_output().unwrap());
    let second = output(&second.wait_with_output().unwrap());
    assert_eq!((first.code, second.code), (0, 0), "{first:?}\n{second:?}");

    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-commit.phasegate-chained")).unwrap(),
        own,
        "{first:?}\n{second:?}"
    );
    assert!(std::fs::read_to_string(hooks.join("pre-commit"))
        .unwrap()
        .contains("# phasegate-hook"));
    let kept: Vec<String> = names(&hooks)
        .into_iter()
        .filter(|name| name.starts_with("pre-commit") && !name.ends_with(".sample"))
        .collect();
    assert_eq!(kept, ["pre-commit", "pre-commit.phasegate-chained"]);
}

#[test]
fn uninstall_gives_back_a_gitattributes_of_crlf_lines_with_a_bom_byte_for_byte() {
    let repo = TestRepo::new();
    // Written on Windows: a byte order mark, CRLF line ends, none after the
    // last line.
    let attributes = "\u{feff}*.md text\r\n*.bat text eol=crlf";
    repo.write(".githooks/.gitattributes", attributes);
    repo.commit_all("team hooks");
    repo.git(&["config", "core.hooksPath", ".githooks"]);

    let run = repo.phasegate(&["install", "--hook", "pre-commit"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("keeps the hook's line ends LF"),
        "{run:?}"
    );
    let added = std::fs::read(repo.path().join(".githooks/.gitattributes")).unwrap();
    assert_eq!(
        added,
        format!("{attributes}\r\n/pre-commit text eol=lf").as_bytes()
    );
    // git reads the rule.
    assert_eq!(
        repo.git(&["check-attr", "eol", "--", ".githooks/pre-commit"]),
        ".githooks/pre-commit: eol: lf\n"
    );

    let run = repo.phasegate(&["uninstall"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read(repo.path().join(".githooks/.gitattributes")).unwrap(),
        attributes.as_bytes()
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// `sh install.sh` of this checkout with a `cargo` that says it is 1.95
/// and, asked to install, writes its arguments one per line to
/// `cargo-args` in the test's home and copies the phasegate under test
/// where `cargo install` puts it: no build of minutes, no network.
fn install_sh_with_stub_cargo(repo: &TestRepo, env: &[(&str, &str)]) -> crate::support::Run {
    let bin = repo.home().join("stub-bin");
    let log = repo.home().join("cargo-args");
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'cargo 1.95.0 (f2d3ce0bd 2026-03-21)' ;;\n  install) printf '%s\\n' \"$@\" > '{log}'; mkdir -p \"$CARGO_HOME/bin\" && cp '{BIN}' \"$CARGO_HOME/bin/phasegate\" ;;\n  *) exit 1 ;;\nesac\n",
        log = log.display(),
    );
    write_executable(&bin.join("cargo"), &script);
    let mut sh = repo.command("/bin/sh");
    sh.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh"))
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("CARGO_HOME", repo.home().join("cargo"))
        .env_remove("CARGO_INSTALL_ROOT")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CDPATH");
    for (key, value) in env {
        sh.env(key, value);
    }
    output(&sh.output().unwrap())
}

#[test]
fn install_sh_builds_in_the_checkouts_target_directory_so_an_unchanged_checkout_is_not_built_again()
{
    let repo = TestRepo::new();
    let run = install_sh_with_stub_cargo(&repo, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let args = std::fs::read_to_string(repo.home().join("cargo-args")).unwrap();
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    assert!(
        args.contains(&format!("\n--target-dir\n{}\n", target.display())),
        "{args}"
    );

    // A target directory of one's own is cargo's to use, and left to it.
    let run = install_sh_with_stub_cargo(&repo, &[("CARGO_TARGET_DIR", "/elsewhere")]);
    assert_eq!(run.code, 0, "{run:?}");
    let args = std::fs::read_to_string(repo.home().join("cargo-args")).unwrap();
    assert!(!args.contains("--target-dir"), "{args}");
}
