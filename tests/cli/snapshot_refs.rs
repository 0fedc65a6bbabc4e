//! snapshot isolation: a check's git commands reach only the checkout's own repository.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{check, TestRepo};

/// A configuration that runs `command` (through the shell) in a snapshot.
fn snapshot_check(command: &str) -> String {
    format!(
        "[gate]\nisolation = \"snapshot\"\n\n[phases.implementation]\nchecks = [ {{ name = \"git\", shell = true, command = {} }} ]\n",
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

/// What a check must never change of the repository of `work_tree`:
/// every ref with what it names, the stash's entries, and the files of its
/// (common) git directory outside phasegate's state and the index (config,
/// `packed-refs`, `HEAD`, loose refs, reflogs, objects, a linked
/// worktree's own directory), each with its bytes.
fn repository_state(repo: &TestRepo, work_tree: &Path) -> BTreeMap<String, Vec<u8>> {
    let git = |args: &[&str]| {
        let mut all = vec!["-C", work_tree.to_str().unwrap()];
        all.extend_from_slice(args);
        repo.git(&all)
    };
    let mut state = BTreeMap::new();
    state.insert(
        "[refs]".to_string(),
        git(&["for-each-ref", "--format=%(refname) %(objectname)"]).into_bytes(),
    );
    state.insert(
        "[stash]".to_string(),
        git(&["stash", "list", "--format=%H %gs"]).into_bytes(),
    );
    let git_dir = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    let git_dir = Path::new(git_dir.trim_end());
    let mut stack = vec![git_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            if name == "phasegate" || name == "index" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(git_dir).unwrap();
                state.insert(
                    relative.to_string_lossy().into_owned(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    state
}

/// Asserts that `after` is `before`, naming what differs.
fn assert_unchanged(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) {
    let differing: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| {
            let show = |state: &BTreeMap<String, Vec<u8>>| {
                state.get(k).map_or("(none)".to_string(), |b| {
                    String::from_utf8_lossy(b).into_owned()
                })
            };
            format!(
                "{k}:\n  before: {:?}\n  after: {:?}",
                show(before),
                show(after)
            )
        })
        .collect();
    assert!(
        differing.is_empty(),
        "the repository changed:\n{}",
        differing.join("\n")
    );
}

/// A repository with a commit, a tag, a stash entry and one staged file.
fn with_a_stash() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.txt", "a1\n").write("b.txt", "b1\n");
    repo.commit_all("one");
    repo.git(&["tag", "-a", "-m", "first", "v1.0"]);
    repo.write("b.txt", "b2 kept in the stash\n");
    repo.git(&["stash", "push", "-q", "-m", "work in progress"]);
    repo
}

#[test]
fn a_check_s_git_stash_pop_in_a_snapshot_leaves_the_user_s_stash_alone() {
    // A legacy hook script turned into a check: set unstaged work aside,
    // test, bring it back. The checkout has no unstaged work, so `push`
    // saved nothing and `pop` took the user's own entry into the checkout,
    // which was then removed: the stash was gone.
    let repo = with_a_stash();
    repo.config(&snapshot_check(
        "git stash push -q --keep-index; cat a.txt; git stash pop -q; git stash list",
    ));
    repo.stage("a.txt", "a2 staged\n");
    let stash = repo.git(&["rev-parse", "refs/stash"]);
    let before = repository_state(&repo, &repo.path());
    let (code, v) = repo.verdict(&[]);
    let log = log_of(&repo, &v, "git");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert!(log.starts_with("a2 staged\n"), "{log}");
    assert_eq!(repo.git(&["rev-parse", "refs/stash"]), stash);
    assert_unchanged(&before, &repository_state(&repo, &repo.path()));
    assert_eq!(repo.read("b.txt"), "b1\n");
}

#[test]
fn git_in_a_snapshot_finds_the_user_s_history_and_writes_only_the_checkout() {
    let repo = with_a_stash();
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    repo.write("c.txt", "c\n").commit_all("two");
    repo.git(&["branch", "other"]);
    repo.git(&["pack-refs", "--all"]);
    repo.git(&["tag", "loose"]);
    repo.config(&snapshot_check(
        "git describe --tags --abbrev=0 HEAD~1 \
         && git log --format=%s origin/main..HEAD \
         && git rev-parse HEAD \
         && git diff --cached --name-only \
         && git status --porcelain --untracked-files=no \
         && git stash list \
         && git tag from-check && git branch -f other HEAD~1 && git branch -q -D main \
         && git update-ref refs/heads/made HEAD && git config x.y z \
         && git commit -qm inside && git stash push -q --include-untracked && git gc -q --prune=now \
         && echo done",
    ));
    repo.stage("a.txt", "a2 staged\n");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let before = repository_state(&repo, &repo.path());
    let (code, v) = repo.verdict(&[]);
    let log = log_of(&repo, &v, "git");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert_eq!(
        log,
        format!("v1.0\ntwo\n{head}a.txt\nM  a.txt\ndone\n"),
        "the checkout holds the user's tags, branches and remote branches, and no stash"
    );
    assert_unchanged(&before, &repository_state(&repo, &repo.path()));
    drop(remote);
}

#[test]
fn from_a_linked_worktree_git_in_a_snapshot_writes_nothing_of_the_repository() {
    let repo = with_a_stash();
    repo.config(&snapshot_check(
        "git describe --tags --abbrev=0; git stash pop -q; git stash list; git tag from-check; \
         git config x.y z; git rev-parse --abbrev-ref HEAD && cat a.txt",
    ));
    repo.commit_all("config");
    let linked = repo.linked_worktree("snapshot-refs-linked");
    std::fs::write(linked.join("a.txt"), "a2 staged\n").unwrap();
    repo.git(&["-C", linked.to_str().unwrap(), "add", "a.txt"]);
    let before = repository_state(&repo, &linked);
    let run = repo.phasegate_in(&linked, &["run", "--format", "json"]);
    let v = run.json();
    let log = std::fs::read_to_string(linked.join(check(&v, "git")["log"].as_str().unwrap()))
        .unwrap_or_default();
    assert_eq!(run.code, 0, "{v:#}\n{log}");
    assert!(log.starts_with("v1.0\n"), "{log}");
    assert!(log.ends_with("HEAD\na2 staged\n"), "{log}");
    assert_unchanged(&before, &repository_state(&repo, &linked));
    repo.git(&["worktree", "remove", "--force", linked.to_str().unwrap()]);
}

#[test]
fn a_snapshot_of_a_shallow_clone_has_the_history_the_clone_has() {
    let origin = TestRepo::new();
    origin.write("a.txt", "1\n").commit_all("one");
    origin.config(&snapshot_check(
        "git log --format=%s && git rev-list --count HEAD",
    ));
    origin.commit_all("two");
    let clone = origin.shallow_clone("main", "snapshot-refs-shallow", &[]);
    std::fs::write(clone.join("a.txt"), "staged\n").unwrap();
    origin.git(&["-C", clone.to_str().unwrap(), "add", "a.txt"]);
    let run = origin.phasegate_in(&clone, &["run", "--format", "json"]);
    let v = run.json();
    let log = std::fs::read_to_string(clone.join(check(&v, "git")["log"].as_str().unwrap()))
        .unwrap_or_default();
    std::fs::remove_dir_all(&clone).unwrap();
    assert_eq!(run.code, 0, "{v:#}\n{log}");
    assert_eq!(log, "two\n1\n");
}

#[test]
fn git_in_a_snapshot_s_submodule_writes_nothing_of_the_submodule_s_repository() {
    let outer = TestRepo::new();
    let inner = TestRepo::new();
    inner.write("lib.txt", "recorded\n");
    inner.commit_all("recorded");
    outer.write("a.txt", "a\n");
    outer.commit_all("outer");
    outer.add_submodule(&inner, "vendor/lib");
    outer.git(&["commit", "-qm", "submodule"]);
    let sub = outer.path().join("vendor/lib");
    let in_sub = |args: &[&str]| {
        let mut all = vec![
            "-C",
            sub.to_str().unwrap(),
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
        ];
        all.extend_from_slice(args);
        outer.git(&all)
    };
    outer.write("vendor/lib/lib.txt", "kept in the stash\n");
    in_sub(&["stash", "push", "-q"]);
    outer.stage("a.txt", "staged\n");
    outer.config(&snapshot_check(
        "cd vendor/lib && test \"$(git rev-parse --show-toplevel)\" = \"$(pwd -P)\" \
         && git status --porcelain && git stash list \
         && git tag from-check && git config x.y z && git branch -q -f main HEAD \
         && git stash pop -q; git gc -q; cat lib.txt",
    ));
    let before = repository_state(&outer, &sub);
    let (code, v) = outer.verdict(&[]);
    let log = log_of(&outer, &v, "git");
    assert_eq!(code, 0, "{v:#}\n{log}");
    assert!(log.ends_with("recorded\n"), "{log}");
    assert_unchanged(&before, &repository_state(&outer, &sub));
    assert_eq!(outer.read("vendor/lib/lib.txt"), "recorded\n");
}

#[test]
fn a_file_git_refuses_to_check_out_stops_a_snapshot_with_its_name() {
    // A filter git requires, with no program to smudge with: `git
    // checkout` stops at the file ("smudge filter upper failed"). The
    // checkout held it as stored, which the user's work tree does not.
    let repo = TestRepo::new();
    repo.git(&["config", "filter.upper.clean", "tr a-z A-Z"]);
    repo.git(&["config", "filter.upper.required", "true"]);
    repo.write(".gitattributes", "*.up filter=upper\n")
        .write("notes.up", "written lower\n")
        .write("a.txt", "a\n");
    repo.config(&snapshot_check("cat notes.up"));
    repo.commit_all("one");
    repo.stage("a.txt", "staged\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 3, "{v:#}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("notes.up")
            && message.contains("smudge filter `upper` failed")
            && message.contains("filter.upper.required"),
        "{v:#}"
    );
}
