//! Snapshot isolation: checks in a temporary checkout of what is committed.

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

#[test]
fn git_in_a_snapshot_sees_no_change_where_the_checkout_writes_a_file_otherwise_than_the_user_did() {
    let repo = TestRepo::new();
    // Written by hand, as a user writes them: `$Id$` unexpanded, LF line
    // endings. The checkout writes them as git checks them out.
    repo.write(".gitattributes", "*.c ident\n*.bat eol=crlf\n");
    repo.write("version.c", "/* $Id$ */\n");
    repo.write("build.bat", "echo one\necho two\n");
    repo.commit_all("init");
    repo.stage("a.txt", "staged\n");
    repo.config(&snapshot_check(
        "cat version.c; git status --porcelain --untracked-files=no; git diff-files --quiet",
    ));
    let (code, v) = repo.verdict(&[]);
    let log = log_of(&repo, &v, "look");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert!(log.contains("$Id: "), "the checkout expands ident: {log}");
    assert!(
        !log.contains(" M "),
        "nothing but what is staged differs: {log}"
    );
    assert!(log.contains("A  a.txt"), "{log}");
}

#[test]
fn a_snapshot_holds_each_initialised_submodule_at_the_commit_recorded() {
    let outer = TestRepo::new();
    let inner = TestRepo::new();
    inner.write("lib.txt", "recorded\n");
    inner.commit_all("recorded");
    outer.write("a.txt", "a\n");
    outer.commit_all("outer");
    outer.add_submodule(&inner, "vendor/lib");
    outer.git(&["commit", "-qm", "submodule"]);
    let recorded = outer.git(&["rev-parse", "HEAD:vendor/lib"]);
    // The submodule's work tree moves on, and has a change of its own:
    // neither is what the commit records.
    outer.write("vendor/lib/lib.txt", "moved on\n");
    outer.git(&[
        "-C",
        "vendor/lib",
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "-qam",
        "moved on",
    ]);
    outer.write("vendor/lib/lib.txt", "uncommitted\n");
    outer.stage("a.txt", "staged\n");
    outer.config(&snapshot_check(
        "cat vendor/lib/lib.txt && git -C vendor/lib rev-parse HEAD && git -C vendor/lib status --porcelain && echo built > vendor/lib/out.o",
    ));
    let before = crate::git::snapshot(&outer);
    let (code, v) = outer.verdict(&[]);
    let log = log_of(&outer, &v, "look");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert_eq!(log, format!("recorded\n{recorded}"), "{v:#}");
    assert_eq!(crate::git::snapshot(&outer), before);
    assert_eq!(outer.read("vendor/lib/lib.txt"), "uncommitted\n");
}
