//! Where a temporary checkout goes, and what it links in from the work
//! tree.

use crate::support::{check, TestRepo};

const SNAPSHOT: &str = "[gate]\nisolation = \"snapshot\"\n";

/// A check that writes its physical working directory to `out`, then
/// reads `a.txt`.
fn where_checks_run(repo: &TestRepo, gate: &str, out: &std::path::Path) {
    repo.config(&format!(
        "{gate}[phases.implementation]\nchecks = [ {{ name = \"where\", shell = true, command = \"pwd -P > '{}' && cat a.txt\" }} ]\n",
        out.display()
    ));
}

#[test]
fn a_temporary_checkout_is_made_outside_git_in_the_user_s_cache() {
    // jest leaves out of its file map every path with a `/.git/` in it:
    // in a checkout under `.git`, it found no test, and with
    // `--passWithNoTests` the run passed without running one.
    let repo = TestRepo::new();
    let out = repo.home().join("pwd");
    where_checks_run(&repo, SNAPSHOT, &out);
    repo.stage("a.txt", "staged\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    let pwd = std::fs::read_to_string(&out).unwrap();
    let pwd = std::path::Path::new(pwd.trim_end());
    assert!(
        !pwd.components().any(|c| c.as_os_str() == ".git"),
        "{}",
        pwd.display()
    );
    assert!(
        pwd.starts_with(repo.snapshots_dir()),
        "{} is not under {}",
        pwd.display(),
        repo.snapshots_dir().display()
    );
    assert!(!pwd.exists(), "the checkout is removed when the run ends");
    assert!(repo.snapshots_dir().exists());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(repo.home().join(".cache/phasegate"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o700, "only the user may look inside");
}

#[test]
fn xdg_cache_home_is_where_checkouts_go() {
    let repo = TestRepo::new();
    let out = repo.home().join("pwd");
    let cache = repo.home().join("elsewhere");
    where_checks_run(&repo, SNAPSHOT, &out);
    repo.stage("a.txt", "staged\n");
    let (code, v) = repo.verdict_with(&[], &[("XDG_CACHE_HOME", cache.to_str().unwrap())]);
    assert_eq!(code, 0, "{v:#}");
    let pwd = std::fs::read_to_string(&out).unwrap();
    assert!(
        pwd.starts_with(cache.join("phasegate/snapshots").to_str().unwrap()),
        "{pwd}"
    );
}

#[test]
fn a_cache_that_cannot_be_made_puts_the_checkout_under_git_with_a_note() {
    let repo = TestRepo::new();
    let out = repo.home().join("pwd");
    let blocker = repo.home().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    where_checks_run(&repo, SNAPSHOT, &out);
    repo.stage("a.txt", "staged\n");
    let (code, v) = repo.verdict_with(&[], &[("XDG_CACHE_HOME", blocker.to_str().unwrap())]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        repo.read(check(&v, "where")["log"].as_str().unwrap()),
        "staged\n"
    );
    let pwd = std::fs::read_to_string(&out).unwrap();
    assert!(pwd.contains("/.git/phasegate/snapshots/"), "{pwd}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("could not be made") && notes.contains("jest"),
        "{notes}"
    );
}

#[test]
fn snapshot_links_bring_untracked_directories_of_the_work_tree_into_the_checkout() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "node_modules/\n");
    repo.write("web/index.js", "app\n");
    repo.commit_all("base");
    repo.write("node_modules/dep/index.js", "installed\n");
    repo.write("web/node_modules/dep/index.js", "web dep\n");
    repo.stage("a.txt", "staged\n");
    let config = |links: &str| {
        format!(
            "{SNAPSHOT}{links}[phases.implementation]\nchecks = [ {{ name = \"deps\", shell = true, command = \"cat node_modules/dep/index.js web/node_modules/dep/index.js a.txt\" }} ]\n"
        )
    };
    // Without links the checkout has only what is staged.
    repo.config(&config(""));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");

    repo.config(&config(
        "snapshot_links = [\"node_modules\", \"./web/node_modules\", \"absent\", \"web/index.js\"]\n",
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        repo.read(check(&v, "deps")["log"].as_str().unwrap()),
        "installed\nweb dep\nstaged\n"
    );
    // A tracked path is the checkout's own; a missing one is passed over.
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("`web/index.js` of `snapshot_links` is in the checkout itself"),
        "{notes}"
    );
    assert!(!notes.contains("absent"), "{notes}");
    // The links went with the checkout; what they pointed at stays.
    assert_eq!(repo.read("node_modules/dep/index.js"), "installed\n");
    let left = std::fs::read_dir(repo.snapshots_dir()).unwrap().count();
    assert_eq!(left, 0);
}

#[test]
fn snapshot_links_outside_the_repository_are_configuration_errors() {
    for (value, shown) in [
        ("[\"../up\"]", "\"../up\""),
        ("[\"/abs\"]", "\"/abs\""),
        ("[\".git/hooks\"]", "\".git/hooks\""),
        ("[\"\"]", "\"\""),
        ("[\".\"]", "\".\""),
    ] {
        let repo = TestRepo::new();
        repo.config(&format!(
            "[gate]\nisolation = \"snapshot\"\nsnapshot_links = {value}\n[phases.implementation]\nchecks = []\n"
        ));
        let run = repo.phasegate(&["run"]);
        assert_eq!(run.code, 2, "{value}: {run:?}");
        assert!(
            run.stderr
                .contains("must be a path inside the repository, relative to its root")
                && run.stderr.contains(shown)
                && run.stderr.contains("phasegate.toml:3"),
            "{value}: {}",
            run.stderr
        );
    }
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nsnapshot_links = \"node_modules\"\n[phases.implementation]\nchecks = []\n",
    );
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("a list of strings"), "{}", run.stderr);
}

#[test]
fn a_killed_run_s_checkout_in_the_cache_is_removed_by_the_next_run() {
    let repo = TestRepo::new();
    repo.config(&format!(
        "{SNAPSHOT}[phases.implementation]\nchecks = [ {{ name = \"ok\", command = \"true\" }} ]\n"
    ));
    repo.stage("a.txt", "staged\n");
    // One named by its run's directory, gone; one whose run's directory
    // is elsewhere (a state directory that could not be written), gone
    // too; and one whose run still goes.
    let by_name = repo.snapshots_dir().join("20200101T000000Z-1");
    let by_marker = repo.snapshots_dir().join("20200101T000000Z-2");
    let live = repo.snapshots_dir().join("20200101T000000Z-3");
    for dir in [&by_name, &by_marker, &live] {
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join("a.txt"), "old\n").unwrap();
    }
    std::fs::write(
        by_marker.join(".git/run"),
        repo.home().join("runs/gone").to_str().unwrap(),
    )
    .unwrap();
    let live_run = repo.home().join("runs/live");
    std::fs::create_dir_all(&live_run).unwrap();
    std::fs::write(live.join(".git/run"), live_run.to_str().unwrap()).unwrap();
    let held = std::fs::File::open(&live_run).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();

    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    // Pruning runs beside the checks; a second run has surely waited for it.
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(!by_name.exists(), "a checkout named by a run that is gone");
    assert!(
        !by_marker.exists(),
        "a checkout whose run's directory is gone"
    );
    assert!(live.exists(), "a run that still goes keeps its checkout");
    drop(held);
}

#[test]
fn phasegate_git_index_file_names_the_checkout_s_own_index() {
    // git's temporary index of `git commit -a`, as the hook gets it: the
    // checkout holds what it holds, and a check that asks git what is
    // staged through the variable must be answered about the checkout.
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("base");
    repo.config(&format!(
        "{SNAPSHOT}[phases.implementation]\nchecks = [ {{ name = \"staged\", shell = true, command = \"printf '%s\\\\n' \\\"$PHASEGATE_GIT_INDEX_FILE\\\" && GIT_INDEX_FILE=$PHASEGATE_GIT_INDEX_FILE git diff --cached --name-only\" }} ]\n"
    ));
    repo.stage("b.txt", "new\n");
    let index = std::fs::canonicalize(repo.path().join(".git/index")).unwrap();
    let (code, v) = repo.verdict_with(&[], &[("GIT_INDEX_FILE", index.to_str().unwrap())]);
    assert_eq!(code, 0, "{v:#}");
    let log = repo.read(check(&v, "staged")["log"].as_str().unwrap());
    let mut lines = log.lines();
    let named = lines.next().unwrap();
    assert!(
        std::path::Path::new(named).starts_with(repo.snapshots_dir())
            && named.ends_with("/.git/index"),
        "{log}"
    );
    assert_eq!(lines.collect::<Vec<_>>(), ["b.txt"], "{log}");
}
