//! Snapshot isolation: smudge filters, conditional includes and line ends in the temporary checkout.

use std::path::Path;

use crate::support::{check, TestRepo};

/// A configuration that runs `command` (through the shell) in a snapshot.
fn snapshot_check(command: &str) -> String {
    format!(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ {{ name = \"look\", shell = true, command = {} }} ]\n",
        toml_string(command)
    )
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The log of the check `name` in the verdict `v`.
fn log_of(repo: &TestRepo, v: &serde_json::Value, name: &str) -> String {
    repo.read(check(v, name)["log"].as_str().unwrap())
}

/// Installs in `repo` a filter driver `lfs` that works as git-lfs does: the
/// clean program stores the content in `store` and stages a pointer, the
/// smudge program reads the pointer and writes the content back from the
/// store, failing while `store/offline` exists (a server that cannot be
/// reached).
fn stand_in_lfs(repo: &TestRepo, store: &Path) {
    std::fs::create_dir_all(store).unwrap();
    let script = repo.home().join("lfs.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nstore='{}'\nif [ \"$1\" = clean ]; then\n  tmp=\"$store/incoming.$$\"\n  cat > \"$tmp\"\n  oid=$(cksum < \"$tmp\" | tr ' ' -)\n  mv \"$tmp\" \"$store/$oid\"\n  printf 'version lfs-stand-in\\noid %s\\n' \"$oid\"\nelse\n  read -r version\n  read -r _ oid\n  [ -f \"$store/offline\" ] && {{ echo \"object $oid not found: the server cannot be reached\" >&2; exit 2; }}\n  cat \"$store/$oid\"\nfi\n",
            store.display()
        ),
    )
    .unwrap();
    let program = format!("sh {}", script.display());
    repo.git(&["config", "filter.lfs.clean", &format!("{program} clean")]);
    repo.git(&["config", "filter.lfs.smudge", &format!("{program} smudge")]);
}

#[test]
fn a_snapshot_holds_a_filtered_file_as_smudged_and_a_smudge_that_fails_stops_the_run_naming_it() {
    let repo = TestRepo::new();
    let store = repo.home().join("lfs-store");
    stand_in_lfs(&repo, &store);
    repo.write(".gitattributes", "*.bin filter=lfs\n")
        .write("model.bin", "the real weights\n")
        .write("a.txt", "a\n");
    repo.commit_all("one");
    let stored = repo.git(&["cat-file", "-p", "HEAD:model.bin"]);
    assert!(stored.starts_with("version lfs-stand-in\n"), "{stored}");
    repo.stage("a.txt", "staged\n");
    repo.config(&snapshot_check("cat model.bin"));
    let (code, v) = repo.verdict(&[]);
    let log = log_of(&repo, &v, "look");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert_eq!(
        log, "the real weights\n",
        "what the work tree has, not the pointer"
    );

    // The store cannot be reached: git checkout would write the pointer
    // (with an error nobody reads in a hook); the checks must not judge it.
    std::fs::write(store.join("offline"), "").unwrap();
    repo.stage("a.txt", "staged again\n");
    let before = crate::git::snapshot(&repo);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(v["status"], "incomplete", "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`model.bin`") && message.contains("smudge filter `lfs`"),
        "names the file and the filter: {message}"
    );
    assert!(
        message.contains("not found"),
        "with the filter's own words: {message}"
    );
    assert!(
        v["checks"]
            .as_array()
            .is_none_or(|checks| checks.iter().all(|c| c["status"] != "passed")),
        "no check judged the pointer: {v:#}"
    );
    assert_eq!(crate::git::snapshot(&repo), before);
    assert_eq!(repo.read("model.bin"), "the real weights\n");
}

#[test]
fn git_in_a_snapshot_reads_the_files_the_user_s_configuration_includes_for_the_repository() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit_all("one");
    // The identity comes from a file the global configuration includes for
    // repositories under a directory, as many set a work identity.
    repo.git(&["config", "--unset", "user.email"]);
    let real = std::fs::canonicalize(repo.path()).unwrap();
    let home = repo.home();
    std::fs::write(
        home.join("work.inc"),
        "[user]\n\temail = work@example.com\n[x]\n\tboth = global\n\tplace = gitdir\n",
    )
    .unwrap();
    std::fs::write(home.join("main.inc"), "[x]\n\tbranch = main\n").unwrap();
    std::fs::write(home.join("elsewhere.inc"), "[x]\n\telsewhere = yes\n").unwrap();
    repo.global_git_config(&format!(
        "[includeIf \"gitdir:{}/\"]\n\tpath = {}\n[includeIf \"onbranch:main\"]\n\tpath = main.inc\n[includeIf \"gitdir:/no/such/place/\"]\n\tpath = {}\n",
        real.display(),
        home.join("work.inc").display(),
        home.join("elsewhere.inc").display(),
    ));
    // The repository's own settings override the global ones, and its own
    // conditional include (relative to `.git/`) applies on its branch.
    repo.git(&["config", "x.both", "local"]);
    repo.write(".git/local.inc", "[x]\n\tlocal = on-main\n");
    repo.git(&["config", "includeIf.onbranch:main.path", "local.inc"]);
    let keys = "for k in user.email x.both x.place x.branch x.local x.elsewhere; do printf '%s=%s\\n' $k \"$(git config $k)\"; done";
    let in_work_tree = repo.command("sh").args(["-c", keys]).output().unwrap();
    let in_work_tree = String::from_utf8(in_work_tree.stdout).unwrap();
    assert_eq!(
        in_work_tree,
        "user.email=work@example.com\nx.both=local\nx.place=gitdir\nx.branch=main\nx.local=on-main\nx.elsewhere=\n"
    );
    repo.stage("a.txt", "staged\n");
    repo.config(&snapshot_check(&format!(
        "{keys}; git var GIT_COMMITTER_IDENT"
    )));
    let (code, v) = repo.verdict(&[]);
    let log = log_of(&repo, &v, "look");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert!(
        log.starts_with(&in_work_tree),
        "the same configuration as in the work tree:\n{log}"
    );
    assert!(log.contains("<work@example.com>"), "{log}");
}

#[test]
fn a_snapshot_writes_the_line_ends_a_checkout_writes() {
    // `core.autocrlf` from the global configuration, and the attributes
    // that choose line ends per file: each file as `git checkout-index`
    // writes it, a file stored with CRLF and a binary file included.
    let repo = TestRepo::new();
    repo.write(
        ".gitattributes",
        "*.crlf text=auto eol=crlf\n*.lf text eol=lf\n*.bin binary\n",
    )
    .write("plain.txt", "a\nb\n")
    .write("stored.txt", "c\r\nd\n")
    .write("auto.crlf", "e\nf\n")
    .write("kept.lf", "g\nh\n")
    .write("data.bin", "i\0\nj\n");
    repo.commit_all("one");
    repo.global_git_config("[core]\n\tautocrlf = true\n");
    repo.stage("a.txt", "k\n");
    let files = [
        "plain.txt",
        "stored.txt",
        "auto.crlf",
        "kept.lf",
        "data.bin",
        "a.txt",
    ];
    // One line per file: its name and its bytes, as `od` shows them.
    let dump = format!(
        "for f in {}; do printf '%s:' $f; od -An -c $f | tr -s ' \\n' ' '; echo; done",
        files.join(" ")
    );
    repo.config(&snapshot_check(&dump));
    repo.git(&["add", "phasegate.toml"]);
    let by_git = tempfile::tempdir().unwrap();
    repo.git(&[
        "checkout-index",
        "-a",
        &format!("--prefix={}/", by_git.path().display()),
    ]);
    let expected = repo
        .command("sh")
        .args(["-c", &format!("cd '{}' && {dump}", by_git.path().display())])
        .output()
        .unwrap();
    let expected = String::from_utf8(expected.stdout).unwrap();
    assert!(
        expected.contains(r"auto.crlf: e \r \n f \r \n"),
        "{expected}"
    );
    let (code, v) = repo.verdict(&[]);
    let log = log_of(&repo, &v, "look");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert_eq!(log, expected);
}
