//! State across runs: run logs, history, interventions, resume.

use std::path::{Path, PathBuf};

use crate::support::{git_pushing, TestRepo};

fn state(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/phasegate")
}

/// `build` fails with whatever `msg.txt` holds, as a compiler line; `ok`
/// passes.
const FAILING_WITH_MESSAGE: &str = "[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"printf 'a.c:1:1: error: %s\\\\n' \\\"$(cat msg.txt)\\\"; exit 1\" }, { name = \"ok\", command = \"true\" } ]\n";

/// The ids a verdict names.
fn ids(verdict: &serde_json::Value) -> Vec<String> {
    verdict["interventions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_string())
        .collect()
}

/// A linked worktree of `repo` on a branch of its own, beside it.
fn linked(repo: &TestRepo, name: &str) -> PathBuf {
    let dir = repo.home().join(format!(
        "{}-{name}",
        repo.path().file_name().unwrap().to_string_lossy()
    ));
    repo.git(&["worktree", "add", "-q", "-b", name, dir.to_str().unwrap()]);
    dir
}

/// `phasegate run --format json --all-files` in `dir`: exit code and verdict.
fn verdict_in(repo: &TestRepo, dir: &Path) -> (i32, serde_json::Value) {
    let run = repo.phasegate_in(dir, &["run", "--format", "json", "--all-files"]);
    (run.code, run.json())
}

#[test]
fn an_id_an_unreadable_line_took_to_emergency_log_is_never_given_out_again() {
    let repo = TestRepo::new();
    repo.config(FAILING_WITH_MESSAGE);
    repo.write("msg.txt", "first");
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(ids(&v), ["iv-0001"]);
    repo.write("msg.txt", "second");
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(ids(&v), ["iv-0002"]);

    // The newest record gets a byte that is not UTF-8 (a hand edit, a tool
    // that wrote the file in Latin-1): its line cannot be read any more.
    let queue = state(&repo).join("interventions.jsonl");
    let bytes = std::fs::read(&queue).unwrap();
    let at = bytes.windows(6).position(|w| w == b"second").unwrap();
    let mut edited = bytes.clone();
    edited[at] = 0xe9;
    std::fs::write(&queue, &edited).unwrap();

    // Still in the file (emergency.log cannot take it: a directory stands
    // there), its id is taken.
    let emergency = state(&repo).join("emergency.log");
    std::fs::create_dir(&emergency).unwrap();
    repo.write("msg.txt", "third");
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(ids(&v), ["iv-0003"], "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("stay where they are"), "{notes}");
    std::fs::remove_dir(&emergency).unwrap();

    // Moved to emergency.log, its id stays given out: the verdict that
    // named it, and the person who read it, mean that record.
    repo.write("msg.txt", "fourth");
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(ids(&v), ["iv-0004"], "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("were moved to"), "{notes}");
    let show = repo.phasegate(&["interventions", "show", "iv-0002"]);
    assert_eq!(show.code, 2, "{}", show.stdout);
    let emergency = std::fs::read(&emergency).unwrap();
    assert!(
        emergency.windows(9).any(|w| w == b"\"iv-0002\""),
        "{}",
        String::from_utf8_lossy(&emergency)
    );
}

#[test]
fn the_highest_id_leaving_the_queue_stays_given_out() {
    let repo = TestRepo::new();
    repo.config(FAILING_WITH_MESSAGE);
    repo.write("msg.txt", "first");
    repo.verdict(&["--all-files"]);
    repo.write("msg.txt", "second");
    repo.verdict(&["--all-files"]);
    // The newest record is cut short, as a write that was killed leaves it.
    let queue = state(&repo).join("interventions.jsonl");
    let text = std::fs::read_to_string(&queue).unwrap();
    let second = text.find("{\"id\":\"iv-0002\"").unwrap();
    std::fs::write(&queue, &text[..second + 40]).unwrap();

    // A run that adds nothing moves the line out, and the id goes with it.
    let (code, v) = repo.verdict(&["--all-files", "--check", "ok"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["notes"].to_string().contains("were moved to"), "{v:#}");
    assert!(!std::fs::read_to_string(&queue).unwrap().contains("iv-0002"));

    repo.write("msg.txt", "third");
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(ids(&v), ["iv-0003"], "{v:#}");
}

#[test]
fn agents_in_two_linked_worktrees_each_escalate_their_own_repeated_errors() {
    let repo = TestRepo::new();
    repo.config(FAILING_WITH_MESSAGE);
    repo.write("msg.txt", "stuck here");
    repo.commit_all("base");
    let side = linked(&repo, "side");
    std::fs::write(side.join("msg.txt"), "stuck there").unwrap();

    // Each fails the same way run after run, their runs taking turns.
    for round in 1..=3 {
        let (main_code, main) = verdict_in(&repo, &repo.path());
        let (side_code, other) = verdict_in(&repo, &side);
        if round < 3 {
            assert_eq!((main_code, side_code), (1, 1), "{main:#}\n{other:#}");
        } else {
            assert_eq!(main_code, 4, "{main:#}");
            assert_eq!(side_code, 4, "{other:#}");
            // Each names its own errors: the note points at them.
            for (v, own) in [(&main, "stuck here"), (&other, "stuck there")] {
                assert!(
                    v["notes"].to_string().contains("failed 3 runs in a row")
                        && v["summary"].to_string().contains(own),
                    "{v:#}"
                );
            }
        }
    }
    repo.git(&["worktree", "remove", "--force", side.to_str().unwrap()]);
}

#[test]
fn resume_in_a_linked_worktree_never_carries_another_work_tree_s_passes() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"tests\", shell = true, command = \"grep -qx ok tests.txt\" }, { name = \"lint\", shell = true, command = \"grep -qx ok lint.txt\" } ]\n",
    );
    repo.write("tests.txt", "ok\n").write("lint.txt", "bad\n");
    repo.commit_all("base");
    let side = linked(&repo, "side");
    std::fs::write(side.join("tests.txt"), "bad\n").unwrap();
    std::fs::write(side.join("lint.txt"), "ok\n").unwrap();

    // The main work tree's tests pass and its lint fails.
    let (code, v) = verdict_in(&repo, &repo.path());
    assert_eq!(code, 1, "{v:#}");

    // The linked one has run nothing: its tests were never checked.
    let resumed = repo.phasegate_in(&side, &["resume", "--format", "json"]);
    assert_eq!(resumed.code, 2, "{}", resumed.stdout);
    let error = resumed.json()["error"]["message"].to_string();
    assert!(error.contains("in this work tree"), "{error}");

    // Its own run fails on its tests; its resume runs them again.
    let (code, _) = verdict_in(&repo, &side);
    assert_eq!(code, 1);
    let resumed = repo.phasegate_in(&side, &["resume", "--format", "json"]);
    assert_eq!(resumed.code, 1, "{}", resumed.stdout);
    let v = resumed.json();
    assert_eq!(crate::support::check(&v, "tests")["status"], "failed");
    // And the main work tree's resume is still of its own run: lint.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 1, "{v:#}");
    assert_eq!(crate::support::check(&v, "lint")["status"], "failed");
    assert_eq!(crate::support::check(&v, "tests")["status"], "passed");
    repo.git(&["worktree", "remove", "--force", side.to_str().unwrap()]);
}

#[test]
fn the_files_of_a_directory_are_kept_for_the_newest_run_alone_and_still_resumed() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nescalate_after = 10\n[phases.implementation]\nchecks = [ { name = \"each\", command = \"false {files}\", files = [\"src/**\"] } ]\n",
    );
    for i in 0..30 {
        repo.write(&format!("src/module_{i}.rs"), "x\n");
    }
    repo.commit_all("base");
    for _ in 0..2 {
        let (code, v) = repo.verdict(&["--files", "src"]);
        assert_eq!(code, 1, "{v:#}");
    }
    let recorded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(state(&repo).join("state.json")).unwrap()).unwrap();
    let kept: Vec<usize> = recorded["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["selection"]["files"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(kept, [0, 30]);

    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 1, "{v:#}");
    assert_eq!(v["selection"]["mode"], "files", "{v:#}");
    assert_eq!(v["selection"]["files"], 30, "{v:#}");
}

#[test]
fn resume_after_a_pass_runs_a_configuration_that_no_longer_loads() {
    let repo = TestRepo::new();
    repo.config("[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n");
    repo.commit_all("base");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    // A check is added, with a key misspelt: no one can say it passed.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" }, { name = \"new\", command = \"false\", on_failur = \"block\" } ]\n",
    );
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_eq!(resumed.code, 2, "{}", resumed.stderr);
    let v = resumed.json();
    assert_eq!(v["error"]["kind"], "config", "{v:#}");
    assert!(
        v["error"]["problems"].to_string().contains("on_failur"),
        "{v:#}"
    );
}

#[test]
fn resume_leaves_out_a_file_of_the_last_run_deleted_since_and_says_so() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"clean\", shell = true, command = \"! grep -l bad {files}\" } ]\n",
    );
    repo.write("good.txt", "good\n").write("new.txt", "bad\n");
    repo.commit_all("base");
    let (code, v) = repo.verdict(&["--files", "good.txt", "new.txt"]);
    assert_eq!(code, 1, "{v:#}");
    // The fix: the file goes.
    repo.git(&["rm", "-q", "new.txt"]);
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 0, "{}\n{v:#}", resumed.stderr);
    assert_eq!(v["selection"]["files"], 1, "{v:#}");
    assert!(
        resumed.stderr.contains("no longer exist") && resumed.stderr.contains("`new.txt`"),
        "{}",
        resumed.stderr
    );
}

/// A repository whose `--files` run of `caf\xe9.txt` (bad) and `good.txt`
/// failed: the repository and the name that is not UTF-8.
fn failed_on_a_name_that_is_not_utf8() -> (TestRepo, &'static std::ffi::OsStr) {
    use std::os::unix::ffi::OsStrExt;
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"clean\", shell = true, command = \"! grep -l bad {files}\" } ]\n",
    );
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(repo.path().join(name), "bad\n").unwrap();
    repo.write("good.txt", "good\n");
    repo.commit_all("base");
    let run = repo
        .command(crate::support::BIN)
        .args(["run".as_ref(), "--files".as_ref(), name])
        .arg("good.txt")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    (repo, name)
}

#[test]
fn resume_never_leaves_out_a_file_whose_name_is_not_utf8() {
    let (repo, _) = failed_on_a_name_that_is_not_utf8();
    // A record of an earlier version keeps the name as text alone, which
    // finds no file: the file is still there and still bad, and resuming
    // must not pass it over.
    let state = repo.path().join(".git/phasegate/state.json");
    let mut recorded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    let mut rewritten = 0;
    for run in recorded["runs"].as_array_mut().unwrap() {
        let selection = run["selection"].as_object_mut().unwrap();
        let Some(serde_json::Value::Array(names)) = selection.remove("files_bytes") else {
            continue;
        };
        for name in names {
            let bytes: Vec<u8> = serde_json::from_value(name).unwrap();
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            selection["files"]
                .as_array_mut()
                .unwrap()
                .push(lossy.into());
            rewritten += 1;
        }
    }
    assert_eq!(rewritten, 1, "{recorded:#}");
    std::fs::write(&state, serde_json::to_vec(&recorded).unwrap()).unwrap();
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    assert_ne!(resumed.code, 0, "{}", resumed.stdout);
    assert!(
        !resumed.stderr.contains("no longer exist"),
        "{}",
        resumed.stderr
    );
}

/// A file made immutable (`chattr +i`), which not even root can remove,
/// until it is dropped (then freed, so the test's directory goes too).
struct Immutable(PathBuf);

impl Immutable {
    /// `None` where the file system or the user cannot make one.
    fn make(path: &Path) -> Option<Immutable> {
        std::fs::write(path, "kept\n").unwrap();
        let made = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .output()
            .is_ok_and(|out| out.status.success());
        made.then(|| Immutable(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .output();
    }
}

/// The run directories under `runs/`, oldest first.
fn run_dirs(repo: &TestRepo) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(state(repo).join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_run_directory_that_cannot_be_removed_never_stops_the_pruning_of_later_ones() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nkeep_runs = 1\n[phases.implementation]\nchecks = [ { name = \"ok\", command = \"true\" } ]\n",
    );
    let (code, first) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{first:#}");
    let stuck_id = first["run_id"].as_str().unwrap().to_string();
    let stuck = state(&repo).join("runs").join(&stuck_id);
    let Some(_pinned) = Immutable::make(&stuck.join("pinned.txt")) else {
        eprintln!("skipped: `chattr +i` is not available here");
        return;
    };
    // The fault is real: the file cannot be removed.
    assert!(std::fs::remove_file(stuck.join("pinned.txt")).is_err());

    let (code, second) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{second:#}");
    let second_id = second["run_id"].as_str().unwrap().to_string();
    let (code, third) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{third:#}");
    let third_id = third["run_id"].as_str().unwrap().to_string();

    // The stuck directory is passed over; the second run's goes.
    let mut expected = vec![stuck_id.clone(), third_id];
    expected.sort();
    assert_eq!(run_dirs(&repo), expected, "{third:#}");
    assert_ne!(second_id, stuck_id);
    let notes = third["notes"].to_string();
    assert!(
        notes.contains("failed to prune old runs") && notes.contains(&stuck_id),
        "{notes}"
    );
}

#[test]
fn an_intervention_is_shown_and_resolved_by_its_number_however_typed() {
    let repo = TestRepo::new();
    repo.config(FAILING_WITH_MESSAGE);
    for message in ["one", "two", "three", "four", "five", "six", "seven"] {
        repo.write("msg.txt", message);
        repo.verdict(&["--all-files"]);
    }
    for typed in ["iv-0007", "iv-7", "7", "IV-0007"] {
        let show = repo.phasegate(&["interventions", "show", typed, "--format", "json"]);
        assert_eq!(show.code, 0, "{typed}: {}", show.stderr);
        assert_eq!(show.json()["id"], "iv-0007", "{typed}: {}", show.stdout);
    }
    let resolved = repo.phasegate(&["interventions", "resolve", "7", "--note", "fixed"]);
    assert_eq!(resolved.code, 0, "{}", resolved.stderr);
    assert!(
        resolved.stdout.contains("resolved iv-0007"),
        "{}",
        resolved.stdout
    );
    let show = repo.phasegate(&["interventions", "show", "iv-7", "--format", "json"]);
    assert_eq!(show.json()["status"], "resolved", "{}", show.stdout);
    let unknown = repo.phasegate(&["interventions", "show", "iv-8"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stdout);
    assert!(
        unknown.stderr.contains("no intervention `iv-8`"),
        "{}",
        unknown.stderr
    );

    // A queue edited by hand holds the number 7 twice: `7` is refused,
    // naming both; the exact ids still work.
    let queue = state(&repo).join("interventions.jsonl");
    let text = std::fs::read_to_string(&queue).unwrap();
    std::fs::write(&queue, text.replace("\"iv-0001\"", "\"iv-7\"")).unwrap();
    let ambiguous = repo.phasegate(&["interventions", "resolve", "7", "--note", "which?"]);
    assert_eq!(ambiguous.code, 2, "{}", ambiguous.stdout);
    assert!(
        ambiguous.stderr.contains("`iv-7`") && ambiguous.stderr.contains("`iv-0007`"),
        "{}",
        ambiguous.stderr
    );
    assert!(!std::fs::read_to_string(&queue).unwrap().contains("which?"));
    let exact = repo.phasegate(&["interventions", "show", "iv-7", "--format", "json"]);
    let message = exact.json()["message"].to_string();
    assert!(message.contains("one"), "{message}");
}

#[test]
fn resume_selects_a_file_whose_name_is_not_utf8_again() {
    let (repo, name) = failed_on_a_name_that_is_not_utf8();

    // Still bad: resumed, it is checked again, and fails again.
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 1, "{}\n{v:#}", resumed.stderr);
    assert_eq!(v["selection"]["files"], 2, "{v:#}");
    // Fixed: the resumed run checks it and passes.
    std::fs::write(repo.path().join(name), "fixed\n").unwrap();
    let resumed = repo.phasegate(&["resume", "--format", "json"]);
    let v = resumed.json();
    assert_eq!(resumed.code, 0, "{}\n{v:#}", resumed.stderr);
    assert_eq!(v["selection"]["files"], 2, "{v:#}");
    assert_eq!(crate::support::check(&v, "clean")["status"], "passed");
}

#[test]
fn one_push_of_refs_on_different_commits_failing_alike_is_one_attempt() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nescalate_after = 3\n[phases.implementation]\nchecks = [ { name = \"build\", shell = true, command = \"printf 'a.c:1:1: error: stuck\\\\n'; exit 1\" } ]\n",
    );
    repo.write("a.txt", "one\n");
    repo.commit_all("one");
    let _remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    assert_eq!(repo.phasegate(&["install", "--hook", "pre-push"]).code, 0);
    // A tag on a new commit beside the branch (below it, the tag would be
    // left to the branch's run), the branch on the next: two runs a push.
    repo.write("a.txt", "two\n");
    repo.commit_all("two");
    repo.git(&["checkout", "-q", "--detach"]);
    repo.write("b.txt", "candidate\n");
    repo.commit_all("candidate");
    repo.git(&["tag", "v1"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "three\n");
    repo.commit_all("three");

    let statuses = || -> Vec<String> {
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(state(&repo).join("state.json")).unwrap())
                .unwrap();
        state["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["status"].as_str().unwrap().to_string())
            .collect()
    };
    // Two attempts, four runs: not yet three attempts in a row.
    for attempt in 1..=2 {
        let push = git_pushing(&repo, &["push", "origin", "main", "v1"]);
        assert_ne!(push.code, 0, "{push:?}");
        assert!(
            !push.stdout.contains("a person is needed"),
            "attempt {attempt}: {push:?}"
        );
    }
    assert_eq!(statuses(), ["failed"; 4]);
    // The third attempt failing alike asks for a person, for both refs.
    let third = git_pushing(&repo, &["push", "origin", "main", "v1"]);
    assert_ne!(third.code, 0, "{third:?}");
    assert!(third.stdout.contains("a person is needed"), "{third:?}");
    assert_eq!(statuses()[4..], ["blocked", "blocked"]);
}
