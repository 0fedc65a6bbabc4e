//! What `run` is told to look at: odd paths on the command line and from `init`.

use crate::support::{docs_files, said, TestRepo};

/// A `docs` check that receives every selected file, so a test reads what
/// was selected from its argv.
const DOCS_ALL: &str =
    "[phases.implementation]\nchecks = [ { name = \"docs\", command = \"true {files}\", files = [\"*\"] } ]\n";

#[test]
fn a_file_whose_name_starts_with_a_dash_is_refused_with_how_to_name_it() {
    let repo = TestRepo::new();
    repo.config(DOCS_ALL)
        .write("-rf", "x\n")
        .write("a.md", "x\n")
        .commit_all("one");
    // clap reads `-rf` as the options `-r` and `-f`, and its message names
    // only `-r`: the run must say how to give the file.
    let run = repo.phasegate(&["run", "--files", "a.md", "-rf"]);
    assert_eq!(run.code, 2, "{}", said(&run));
    assert!(run.stderr.contains("`--files ./-rf`"), "{}", said(&run));
    let run = repo.phasegate(&["run", "--format", "json", "--files", "-rf"]);
    assert_eq!(run.code, 2, "{}", said(&run));
    let message = run.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("`--files ./-rf`"), "{message}");
    // Given so, it is selected, and reaches the check as a path.
    let (code, verdict) = repo.verdict(&["--files", "./-rf"]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(docs_files(&verdict), ["./-rf"]);
}

#[test]
fn a_file_of_a_repository_named_from_outside_any_is_refused_not_passed() {
    // The current directory is in no repository; the file named is in
    // one whose gate fails it. Checked on the outer directory's defaults
    // (no check at all), it passed.
    let outer = TestRepo::plain();
    let made = outer
        .command("git")
        .args(["init", "-q", "inner"])
        .status()
        .unwrap();
    assert!(made.success());
    outer.write(
        "inner/phasegate.toml",
        "[phases.implementation]\nchecks = [ { name = \"docs\", command = \"false {files}\", files = [\"*.md\"] } ]\n",
    );
    outer.write("inner/f.md", "x\n");
    let run = outer.phasegate(&["run", "--files", "inner/f.md"]);
    assert_eq!(run.code, 2, "{}", said(&run));
    let inner = outer.path().join("inner");
    assert!(
        run.stderr.contains(&format!(
            "is in the git repository at `{}`",
            inner.display()
        )),
        "{}",
        said(&run)
    );
    // Named whole, the repository was left out as "not a file", and the
    // run passed too.
    let run = outer.phasegate(&["run", "--files", "inner"]);
    assert_eq!(run.code, 2, "{}", said(&run));
    assert!(
        run.stderr.contains("is in the git repository at"),
        "{}",
        said(&run)
    );
    // Run there, its own gate decides.
    let run = outer.phasegate_in(&inner, &["run", "--files", "f.md"]);
    assert_eq!(run.code, 1, "{}", said(&run));
}

#[test]
fn init_outside_a_repository_writes_its_file_and_no_gitignore() {
    let dir = TestRepo::plain();
    dir.write("go.mod", "module example.com/x\n");
    let run = dir.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{}", said(&run));
    assert!(dir.exists("phasegate.toml"));
    assert!(
        !dir.exists(".gitignore"),
        "a .gitignore was written where there is no repository"
    );
    assert!(
        run.stdout
            .contains("add `/phasegate.local.toml` to its .gitignore"),
        "{}",
        said(&run)
    );
}

#[test]
fn a_range_from_a_branch_with_no_commit_says_so_not_fetch_it() {
    let repo = TestRepo::new();
    repo.config(DOCS_ALL).stage("a.md", "x\n");
    for spec in ["HEAD", "main", "HEAD~1"] {
        let run = repo.phasegate(&["run", "--from-ref", spec, "--to-ref", "HEAD"]);
        assert_eq!(run.code, 2, "{}", said(&run));
        assert!(
            run.stderr.contains("has no commit yet") && !run.stderr.contains("git fetch"),
            "{spec}: {}",
            said(&run)
        );
    }
    // A name that is not the current branch is still one to check or fetch.
    let run = repo.phasegate(&["run", "--from-ref", "develop", "--to-ref", "HEAD"]);
    assert_eq!(run.code, 2, "{}", said(&run));
    assert!(
        run.stderr.contains("`develop` does not name a commit"),
        "{}",
        said(&run)
    );
}
