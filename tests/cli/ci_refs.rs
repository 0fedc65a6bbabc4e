//! CI ranges and `--config-from-ref` over annotated tags, deleted or missing configuration, missing bases and included files.

use crate::ci_scripts::finding;
use crate::support::{check, rev, TestRepo};

/// A gate whose one blocking check fails unless `status.txt` says `ok`.
const STATUS_GATE: &str = "[phases.implementation]\nchecks = [ { name = \"status\", command = \"grep -qx ok status.txt\", on_failure = \"block\" } ]\n";

/// A configuration that checks nothing: what a branch that wants to pass
/// whatever it holds would write.
const NO_CHECKS: &str = "[phases.implementation]\nchecks = []\n";

/// The gate of `main` over what `feature` changed since it left `main`.
const FROM_MAIN: [&str; 6] = [
    "--config-from-ref",
    "main",
    "--from-ref",
    "main",
    "--to-ref",
    "HEAD",
];

/// `main` holding `files` and `status.txt` saying `ok`, then a branch
/// `feature` (checked out) that breaks `status.txt` and writes `changes`
/// over the files (an empty text deletes the file).
pub(crate) fn branch_of(files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write("status.txt", "ok\n");
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("status.txt", "broken\n");
    for (path, text) in changes {
        if text.is_empty() {
            repo.git(&["rm", "-q", path]);
        } else {
            repo.write(path, text);
        }
    }
    repo.commit_all("feature");
    repo
}

/// The message of the error a verdict stopped on.
fn error_of(v: &serde_json::Value) -> String {
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_annotated_tag_is_peeled_to_its_commit_and_a_tag_of_a_tree_is_refused_by_name() {
    let repo = branch_of(
        &[("phasegate.toml", STATUS_GATE)],
        &[("phasegate.toml", NO_CHECKS)],
    );
    repo.git(&["tag", "-a", "v1", "-m", "release 1", "main"]);
    // The range and the gate both from the tag: its commit's gate fails
    // the branch's broken `status.txt`, whatever the branch's own says.
    let (code, v) = repo.verdict(&[
        "--config-from-ref",
        "v1",
        "--from-ref",
        "v1",
        "--to-ref",
        "HEAD",
    ]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "status")["status"], "failed", "{v:#}");
    assert_eq!(v["selection"]["from_commit"], rev(&repo, "main"), "{v:#}");
    assert_eq!(v["selection"]["merge_base"], rev(&repo, "main"), "{v:#}");

    // A tag of a tree or of a blob holds no commit to take a gate or a
    // range from: each option names it, and says what to give instead.
    let tree = rev(&repo, "main^{tree}");
    let blob = rev(&repo, "main:status.txt");
    repo.git(&["tag", "-a", "tree-tag", "-m", "a tree", &tree]);
    repo.git(&["tag", "-a", "blob-tag", "-m", "a blob", &blob]);
    for (tag, kind) in [("tree-tag", "tree"), ("blob-tag", "blob")] {
        for args in [
            &["--config-from-ref", tag, "--all-files"][..],
            &[
                "--config-from-ref",
                "main",
                "--from-ref",
                tag,
                "--to-ref",
                "HEAD",
            ][..],
        ] {
            let (code, v) = repo.verdict(args);
            assert_eq!(code, 2, "{args:?}: {v:#}");
            let message = error_of(&v);
            assert!(
                message.contains(&format!("`{tag}` does not name a commit")),
                "{args:?}: {message}"
            );
            assert!(
                message.contains(&format!("a tag of a {kind}, not a commit")),
                "{args:?}: {message}"
            );
            assert!(v["checks"].as_array().unwrap().is_empty(), "{v:#}");
        }
    }
    let (_, v) = repo.verdict(&["--config-from-ref", "tree-tag", "--all-files"]);
    assert!(error_of(&v).starts_with("--config-from-ref: "), "{v:#}");
}

#[test]
fn a_branch_that_deletes_phasegate_toml_is_judged_by_the_whole_gate_of_the_ref() {
    let gate = "[gate]\nprofile = \"strict\"\n\n[phases.implementation]\nchecks = [\n  { name = \"status\", command = \"grep -qx ok status.txt\", on_failure = \"block\" },\n  { name = \"docs\", command = \"echo {files}\", files = [\"*.md\"], on_failure = \"warn\" },\n]\n";
    let repo = branch_of(
        &[("phasegate.toml", gate), ("a.md", "# a\n")],
        &[("phasegate.toml", ""), ("a.md", "# a, changed\n")],
    );
    assert!(!repo.exists("phasegate.toml"));
    let github = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    repo.git(&["update-ref", "refs/remotes/origin/main", "main"]);
    // Named by hand, and as CI picks the range.
    for (args, env) in [
        (&FROM_MAIN[..], &[][..]),
        (&["--config-from-ref", "origin/main"][..], &github[..]),
    ] {
        let (code, v) = repo.verdict_with(args, env);
        assert_eq!(code, 1, "{args:?}: {v:#}");
        // Every setting of the ref's file holds, its profile included,
        // and every check of it runs: no embedded default stands in.
        assert_eq!(v["profile"], "strict", "{v:#}");
        let names: Vec<&str> = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["status", "docs"], "{v:#}");
        assert_eq!(check(&v, "status")["status"], "failed", "{v:#}");
        assert_eq!(check(&v, "docs")["status"], "passed", "{v:#}");
        assert!(
            !v["notes"].to_string().contains("phasegate's defaults"),
            "{v:#}"
        );
    }
}

#[test]
fn a_ref_without_phasegate_toml_is_judged_by_its_own_language_defaults_and_says_so() {
    // `main` is a Node project gated by phasegate's defaults (npm's
    // `test` script); the branch breaks what it tests and adds a
    // `phasegate.toml` that checks nothing. This machine's npm, for real.
    let package = "{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\",\n  \"scripts\": { \"test\": \"grep -qx ok status.txt\" }\n}\n";
    let repo = branch_of(
        &[("package.json", package), ("package-lock.json", "{}")],
        &[("phasegate.toml", NO_CHECKS)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    let said = "`main` has no `phasegate.toml` (--config-from-ref): the checks are phasegate's defaults for";
    let note = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with(said))
        .unwrap_or_else(|| panic!("no note on the missing file: {v:#}"));
    assert!(
        note.contains("the branch's own `phasegate.toml` is not read"),
        "{note}"
    );
    // A reader of the summary alone (a CI page) sees it too, after the
    // errors.
    let summary = v["summary"].as_array().unwrap();
    assert_eq!(summary.last().unwrap(), note, "{v:#}");
    assert!(summary.len() > 1, "{v:#}");
    // The human report shows it.
    let run = repo.phasegate(&[&["run"][..], &FROM_MAIN[..]].concat());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(said) || run.stderr.contains(said),
        "{run:?}"
    );

    // With no project phasegate knows either, nothing runs, and the note
    // still says why and that the branch's file was passed over.
    let repo = branch_of(
        &[("README.md", "# x\n")],
        &[("phasegate.toml", STATUS_GATE)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["checks"].as_array().unwrap().is_empty(), "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("`main` has no `phasegate.toml`"), "{v:#}");
    assert!(notes.contains("no check runs"), "{v:#}");
    assert!(
        notes.contains("the branch's own `phasegate.toml` is not read"),
        "{v:#}"
    );
    assert!(
        v["summary"]
            .to_string()
            .contains("`main` has no `phasegate.toml`"),
        "{v:#}"
    );
}

#[test]
fn a_gate_ref_missing_from_a_shallow_clone_names_the_ref_and_the_exact_fetch() {
    let origin = branch_of(&[("phasegate.toml", STATUS_GATE)], &[]);
    origin.git(&["tag", "-a", "v1", "-m", "release 1", "main"]);
    // A fork's pull request checked out one commit deep: only the branch.
    let clone = origin.shallow_clone("feature", "ci-refs-shallow", &["--single-branch"]);
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["run", "--format", "json"];
        all.extend_from_slice(args);
        let run = origin.phasegate_in_with(&clone, &all, env);
        (run.code, run.json())
    };
    let github = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
    ];
    let mut fetch = Vec::new();
    for env in [&[][..], &github[..]] {
        let (code, v) = run(&["--config-from-ref", "origin/main"], env);
        assert_eq!(code, 2, "{v:#}");
        let message = error_of(&v);
        assert!(
            message.starts_with("--config-from-ref: `origin/main` does not name a commit"),
            "{message}"
        );
        assert!(message.contains("missing from this clone"), "{message}");
        // `git clone --depth 1` fetches one branch: the fetch names where
        // the other goes, or no `origin/main` would come of it.
        fetch = first_fetch(&message);
        assert_eq!(
            fetch,
            [
                "fetch",
                "--unshallow",
                "origin",
                "main:refs/remotes/origin/main"
            ],
            "{message}"
        );
        // In CI, the job's own setting that brings it on every run.
        assert_eq!(
            message.contains("`fetch-depth: 0`"),
            !env.is_empty(),
            "{message}"
        );
    }
    // A branch named without its remote is fetched into a ref of its name.
    let (code, v) = run(&["--config-from-ref", "main", "--all-files"], &[]);
    assert_eq!(code, 2, "{v:#}");
    let message = error_of(&v);
    assert!(message.contains("missing from this clone"), "{message}");
    let fetch_main = first_fetch(&message);
    assert_eq!(fetch_main, ["fetch", "origin", "main:main"], "{message}");
    // A tag is fetched as a tag: a branch of its name would be refused.
    let (code, v) = run(&["--config-from-ref", "v1", "--all-files"], &[]);
    assert_eq!(code, 2, "{v:#}");
    let message = error_of(&v);
    let at = message.find("`git fetch origin tag v1`").expect(&message);
    let fetch_tag = first_fetch(&message[at..]);
    assert_eq!(fetch_tag, ["fetch", "origin", "tag", "v1"], "{message}");
    origin.git_at(&clone, &["fetch", "-q", "origin", "tag", "v1"]);
    let (code, v) = run(&["--config-from-ref", "v1", "--all-files"], &[]);
    assert_eq!(code, 1, "{v:#}");
    // The fetches named, as written, are the ones that let the runs go on.
    origin.git_at(
        &clone,
        &fetch.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (code, v) = run(&["--config-from-ref", "origin/main"], &github);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["selection"]["ci"], "GitHub pull_request", "{v:#}");
    assert_eq!(check(&v, "status")["status"], "failed", "{v:#}");
    origin.git_at(
        &clone,
        &fetch_main.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (code, v) = run(&["--config-from-ref", "main", "--all-files"], &[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "status")["status"], "failed", "{v:#}");
    std::fs::remove_dir_all(&clone).unwrap();
}

/// The words after `git` of the first `git fetch` a message names.
fn first_fetch(message: &str) -> Vec<String> {
    let at = message
        .find("`git fetch ")
        .unwrap_or_else(|| panic!("no fetch named: {message}"));
    let command = &message[at + 1..];
    let end = command.find('`').unwrap();
    command[..end]
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// `main` gating with `tests = COMMAND` over `files`.
fn gated_by(command: &str, files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    let config = format!(
        "[commands]\ntests = {command:?}\n\n[phases.implementation]\nchecks = [ {{ name = \"tests\", on_failure = \"block\" }} ]\n"
    );
    let mut all = vec![("phasegate.toml", config.as_str())];
    all.extend_from_slice(files);
    branch_of(&all, changes)
}

#[test]
fn a_file_the_makefile_includes_is_compared_and_a_change_to_it_warns() {
    let makefile = "include mk/common.mk\n-include mk/optional.mk\nsinclude ./mk/local.mk # kept\n\ntest:\n\t$(CHECK)\n";
    let files = [
        ("Makefile", makefile),
        ("mk/common.mk", "CHECK = grep -qx ok status.txt\n"),
        ("mk/optional.mk", "\n"),
        ("mk/local.mk", "\n"),
    ];
    // Each kind of include, rewritten by the branch to check nothing
    // (make reads the last definition of `CHECK`).
    for file in ["mk/common.mk", "mk/optional.mk", "mk/local.mk"] {
        let repo = gated_by("make test", &files, &[(file, "CHECK = true\n")]);
        let (code, v) = repo.verdict(&FROM_MAIN);
        assert_eq!(code, 0, "{file}: {v:#}");
        assert_eq!(v["status"], "warned", "{file}: {v:#}");
        let message = finding(&v, file)["message"].to_string();
        assert!(
            message.contains(&format!("runs `{file}` (through `Makefile`)")),
            "{message}"
        );
        assert!(v["summary"].to_string().contains(file), "{v:#}");
        // Under strict it blocks.
        let (code, _) = repo.verdict(&[&FROM_MAIN[..], &["--profile", "strict"][..]].concat());
        assert_eq!(code, 1, "{file}");
    }
    // An optional include the branch adds where the gate's branch has none.
    let repo = gated_by(
        "make test",
        &files[..3],
        &[("mk/local.mk", "CHECK = true\n")],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    finding(&v, "mk/local.mk");
    // Left alone, they fail the branch's change, with no warning.
    let repo = gated_by("make test", &files, &[]);
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert!(!v.to_string().contains("differs from its version"), "{v:#}");
}

#[test]
fn a_cargo_alias_the_branch_rewrote_warns_at_its_line() {
    // `cargo verify` fails where there is no Cargo.toml; the branch makes
    // the alias `cargo version`, which always passes. This machine's
    // cargo, for real.
    let gate =
        "# the project's own commands\n[alias]\nverify = [\"locate-project\", \"--workspace\"]\n";
    let weak = "# the project's own commands\n[alias]\nverify = \"version\"\n";
    let repo = gated_by(
        "cargo verify",
        &[(".cargo/config.toml", gate)],
        &[(".cargo/config.toml", weak)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, ".cargo/config.toml");
    assert_eq!(found["line"], 3, "{v:#}");
    let message = found["message"].to_string();
    assert!(
        message.contains("runs the cargo alias `verify` of `.cargo/config.toml`"),
        "{message}"
    );
    // cargo reads `.cargo/config` over `.cargo/config.toml`: a branch that
    // adds one redefines the alias there.
    let legacy = "[alias]\nverify = \"version\"\n";
    let repo = gated_by(
        "cargo verify",
        &[(".cargo/config.toml", gate)],
        &[(".cargo/config", legacy)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(finding(&v, ".cargo/config")["line"], 2, "{v:#}");
    // An alias of another alias is compared one level down.
    let chained = "[alias]\nverify = \"strict-verify\"\nstrict-verify = [\"locate-project\", \"--workspace\"]\n";
    let weak_chained = "[alias]\nverify = \"strict-verify\"\nstrict-verify = \"version\"\n";
    let repo = gated_by(
        "cargo verify",
        &[(".cargo/config.toml", chained)],
        &[(".cargo/config.toml", weak_chained)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    let message = finding(&v, ".cargo/config.toml")["message"].to_string();
    assert!(
        message.contains("the cargo alias `strict-verify` of `.cargo/config.toml` (through the cargo alias `verify`"),
        "{message}"
    );
    // Other changes to the file, the alias untouched, do not warn; and
    // cargo's own commands are no alias.
    let repo = gated_by(
        "cargo verify",
        &[(".cargo/config.toml", gate)],
        &[(
            ".cargo/config.toml",
            &format!("{gate}\n[term]\nverbose = true\n"),
        )],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert!(!v.to_string().contains("differs from its version"), "{v:#}");
    let repo = gated_by(
        "cargo version",
        &[(".cargo/config.toml", "[alias]\n")],
        &[(
            ".cargo/config.toml",
            "[alias]\nversion = \"locate-project\"\n",
        )],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "passed", "{v:#}");
}
