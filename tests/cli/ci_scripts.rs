//! `--config-from-ref` and the scripts a vouched command really runs; CI ranges.

use crate::ci_shallow::FROM_MAIN;
use crate::support::{check, rev, TestRepo};

/// A repository whose `main` gates with `tests = COMMAND` and holds
/// `files` (executable when they end in `.sh`), with `status.txt` saying
/// `ok`; then a branch `feature` that breaks `status.txt` and writes
/// `changes` over the files.
fn gated(command: &str, files: &[(&str, &str)], changes: &[(&str, &str)]) -> TestRepo {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.config(&format!(
        "[commands]\ntests = {command:?}\n\n[phases.implementation]\nchecks = [ {{ name = \"tests\", on_failure = \"block\" }} ]\n"
    ));
    let write = |(path, text): &(&str, &str)| {
        repo.write(path, text);
        if std::path::Path::new(path).extension() == Some("sh".as_ref()) {
            let path = repo.path().join(path);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    };
    files.iter().for_each(write);
    repo.write("status.txt", "ok\n");
    repo.commit_all("gate");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("status.txt", "broken\n");
    changes.iter().for_each(write);
    repo.commit_all("feature");
    repo
}

/// The one warning (or error) finding of phasegate's own on `file`.
pub(crate) fn finding<'v>(v: &'v serde_json::Value, file: &str) -> &'v serde_json::Value {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == file && d["code"] == "command-file-changed")
        .unwrap_or_else(|| panic!("no finding on {file}: {v:#}"))
}

const PACKAGE: &str = r#"{
  "name": "x",
  "version": "1.0.0",
  "scripts": {
    "test": "npm run check",
    "check": "grep -qx ok status.txt",
    "lint": "grep -qx ok status.txt"
  }
}
"#;

#[test]
fn a_package_json_script_the_branch_rewrote_warns_in_the_summary_naming_the_script() {
    // `npm test` runs the branch's `test` script, and that runs `check`:
    // the branch made `check` pass whatever the change. This machine's
    // npm, run for real.
    let weakened = PACKAGE.replace(
        "\"grep -qx ok status.txt\",\n    \"lint\"",
        "\"exit 0\",\n    \"lint\"",
    );
    assert_ne!(weakened, PACKAGE);
    let repo = gated(
        "npm test",
        &[("package.json", PACKAGE), ("package-lock.json", "{}")],
        &[("package.json", &weakened)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "passed", "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let found = finding(&v, "package.json");
    assert_eq!(found["severity"], "warning", "{v:#}");
    assert_eq!(found["line"], 6, "the `check` entry: {v:#}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains("the `check` script of `package.json` (through the `test` script of `package.json`), which differs from its version in `main`"),
        "{message}"
    );
    // The summary, which is what a reader of the verdict reads first,
    // says so too.
    let summary = v["summary"].to_string();
    assert!(
        summary.contains("the `check` script of `package.json`"),
        "{v:#}"
    );
    // So does the human report.
    let human = repo.phasegate(&[
        "run",
        FROM_MAIN[0],
        FROM_MAIN[1],
        FROM_MAIN[2],
        FROM_MAIN[3],
        FROM_MAIN[4],
        FROM_MAIN[5],
    ]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let summary_at = human
        .stdout
        .find("summary")
        .unwrap_or_else(|| panic!("{}", human.stdout));
    assert!(
        human.stdout[summary_at..].contains("`check` script of `package.json`"),
        "{}",
        human.stdout
    );

    // Under strict it fails the run, and says what to merge first.
    let mut strict = FROM_MAIN.to_vec();
    strict.extend(["--profile", "strict"]);
    let (code, v) = repo.verdict(&strict);
    assert_eq!(code, 1, "{v:#}");
    let found = finding(&v, "package.json");
    assert_eq!(found["severity"], "error", "{v:#}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("merge the change to the `check` script of `package.json` on its own first"),
        "{v:#}"
    );

    // A script the branch left alone, in a `package.json` it changed
    // elsewhere, judges the change, and fails it, without a word.
    let other = PACKAGE.replace(
        "\"lint\": \"grep -qx ok status.txt\"",
        "\"lint\": \"exit 0\"",
    );
    let repo = gated(
        "npm test",
        &[("package.json", PACKAGE), ("package-lock.json", "{}")],
        &[("package.json", &other)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    assert!(!v.to_string().contains("differs from its version"), "{v:#}");
}

#[test]
fn npm_run_and_make_run_what_the_branch_holds_and_a_change_to_it_warns() {
    // `npm run lint` runs the `lint` script.
    let weakened = PACKAGE.replace(
        "\"lint\": \"grep -qx ok status.txt\"",
        "\"lint\": \"exit 0\"",
    );
    let repo = gated(
        "npm run lint",
        &[("package.json", PACKAGE), ("package-lock.json", "{}")],
        &[("package.json", &weakened)],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let message = finding(&v, "package.json")["message"].to_string();
    assert!(
        message.contains("runs the `lint` script of `package.json`,"),
        "{message}"
    );

    // `make test` runs the branch's Makefile, compared whole.
    let makefile = "test:\n\tgrep -qx ok status.txt\n";
    let repo = gated(
        "make test",
        &[("Makefile", makefile)],
        &[("Makefile", "test:\n\ttrue\n")],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    finding(&v, "Makefile");
    // Left alone, it fails the branch's change.
    let repo = gated("make test", &[("Makefile", makefile)], &[]);
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 1, "{v:#}");
    assert!(!v.to_string().contains("differs from its version"), "{v:#}");
}

#[test]
fn a_script_the_vouched_script_calls_by_path_is_compared_one_level_down() {
    let test = "#!/bin/sh\nset -e\n./scripts/helper.sh\n";
    let helper = "#!/bin/sh\ngrep -qx ok status.txt\n";
    let repo = gated(
        "./scripts/test.sh",
        &[("scripts/test.sh", test), ("scripts/helper.sh", helper)],
        &[("scripts/helper.sh", "#!/bin/sh\nexit 0\n")],
    );
    let (code, v) = repo.verdict(&FROM_MAIN);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["status"], "warned", "{v:#}");
    let message = finding(&v, "scripts/helper.sh")["message"].to_string();
    assert!(
        message.contains("runs `scripts/helper.sh` (through `scripts/test.sh`)"),
        "{message}"
    );
}

/// `main` gating with `./scripts/test.sh`; a branch `feature` off it that
/// adds `feature.txt` (and, with `weaken`, rewrites the script); then
/// `main` moves on and changes the script itself. The merge of the branch
/// into `main` as it was when the branch forked is checked out, as a
/// GitLab merged results pipeline built before `main` moved checks it
/// out; its target's commit is returned.
fn merged_results_after_the_target_moved(weaken: bool) -> (TestRepo, String) {
    let repo = gated(
        "./scripts/test.sh",
        &[("scripts/test.sh", "#!/bin/sh\ntest -f status.txt\n")],
        &[],
    );
    // `gated` broke `status.txt` on the branch; this test is not about it.
    repo.write("status.txt", "ok\n");
    repo.write("feature.txt", "new\n");
    if weaken {
        repo.write("scripts/test.sh", "#!/bin/sh\nexit 0\n");
    }
    repo.commit_all("feature work");
    let target = rev(&repo, "main");
    repo.git(&["checkout", "-q", "main"]);
    repo.write(
        "scripts/test.sh",
        "#!/bin/sh\ntest -f status.txt\ntest -s status.txt\n",
    );
    repo.commit_all("main hardens its tests");
    repo.git(&["checkout", "-q", "--detach", &target]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "merged result", "feature"]);
    (repo, target)
}

#[test]
fn a_merged_results_pipeline_whose_target_moved_on_does_not_warn_on_a_script_the_branch_left() {
    for weaken in [false, true] {
        let (repo, target) = merged_results_after_the_target_moved(weaken);
        let env = [
            ("CI", "true"),
            ("GITLAB_CI", "true"),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", target.as_str()),
        ];
        let (code, v) = repo.verdict_with(&["--config-from-ref", "main"], &env);
        assert_eq!(
            v["selection"]["ci"], "GitLab merged results pipeline",
            "{v:#}"
        );
        assert_eq!(code, 0, "{v:#}");
        if weaken {
            assert_eq!(v["status"], "warned", "{v:#}");
            finding(&v, "scripts/test.sh");
        } else {
            // `main`'s script is newer, but the branch ran the one it
            // found: nothing of the branch's own runs.
            assert_eq!(v["status"], "passed", "{v:#}");
            assert!(!v.to_string().contains("differs from its version"), "{v:#}");
        }
        // A merge request pipeline checks the branch itself: the same.
        repo.git(&["checkout", "-q", "feature"]);
        let (code, v) = repo.verdict(&FROM_MAIN);
        assert_eq!(code, 0, "{v:#}");
        let expected = if weaken { "warned" } else { "passed" };
        assert_eq!(v["status"], expected, "{v:#}");
    }
}

#[test]
fn a_push_whose_previous_commit_a_full_clone_lacks_is_not_said_to_be_a_shallow_clone() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"echo {files}\" } ]\n");
    repo.write("a.md", "# a\n");
    repo.commit_all("a");
    let after = rev(&repo, "HEAD");
    // A commit this clone never had: the branch was force-pushed over it.
    let before = "1234567890abcdef1234567890abcdef12345678";
    let path = repo.path().join(".git/event.json");
    std::fs::write(
        &path,
        format!(r#"{{"before": "{before}", "after": "{after}"}}"#),
    )
    .unwrap();
    let path = path.to_string_lossy().into_owned();
    let env = [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "push"),
        ("GITHUB_EVENT_PATH", path.as_str()),
    ];
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["selection"]["mode"], "all", "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains(before), "{notes}");
    assert!(notes.contains("not shallow"), "{notes}");
    assert!(notes.contains("force push"), "{notes}");
    assert!(!notes.contains("a shallow clone,"), "{notes}");
    assert!(!notes.contains("fetch more"), "{notes}");

    // With no history in common, the same.
    repo.git(&["checkout", "-q", "--orphan", "old"]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "old history"]);
    let old = rev(&repo, "HEAD");
    repo.git(&["checkout", "-q", "main"]);
    std::fs::write(
        repo.path().join(".git/event.json"),
        format!(r#"{{"before": "{old}", "after": "{after}"}}"#),
    )
    .unwrap();
    let (code, v) = repo.verdict_with(&[], &env);
    assert_eq!(code, 0, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("shares no history"), "{notes}");
    assert!(!notes.contains("shallow"), "{notes}");
}
