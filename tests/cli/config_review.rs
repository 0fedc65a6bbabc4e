//! phasegate.toml as people write it: each rule both ways, local.toml, init.

use crate::support::{check, TestRepo};

/// The one configuration problem of a run refused with exit 2: its
/// message, line and column.
fn refused(repo: &TestRepo) -> (String, u64, u64) {
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{v:#}");
    let problems = v["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v:#}");
    let problem = &problems[0];
    assert_eq!(problem["file"], "phasegate.toml", "{v:#}");
    (
        problem["message"].as_str().unwrap().to_string(),
        problem["line"].as_u64().unwrap(),
        problem["column"].as_u64().unwrap(),
    )
}

#[test]
fn a_local_phase_replaces_that_phase_only_and_the_others_stay() {
    // No phasegate.toml: the defaults' phases. A personal file that runs
    // a quicker check in `implementation` leaves `qa` and the document
    // phases where they were.
    let repo = TestRepo::new();
    repo.write(
        "phasegate.local.toml",
        "[phases.implementation]\nchecks = [ { name = \"quick\", command = \"true\" } ]\n",
    );
    repo.write("a.txt", "a\n");
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "quick")["status"], "passed", "{v:#}");
    for phase in ["qa", "requirements", "architecture"] {
        let (code, v) = repo.verdict(&["--all-files", "--phase", phase]);
        assert_eq!(code, 0, "phase `{phase}` is still there: {v:#}");
        assert_eq!(v["phase"], phase, "{v:#}");
    }

    // The same over a phasegate.toml that defines no phase of its own.
    repo.config("[gate]\nprofile = \"strict\"\n");
    let (code, v) = repo.verdict(&["--all-files", "--phase", "qa"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["profile"], "strict", "{v:#}");
}

#[test]
fn a_standard_command_written_without_phases_runs_in_the_default_phases() {
    // A project of no language phasegate knows: its `[commands]` say how
    // to test it, and the default phases run that, rather than nothing.
    let repo = TestRepo::new();
    repo.config("[commands]\ntests = \"sh -c 'echo broken; exit 1'\"\nbuild = \"true\"\n");
    repo.write("a.txt", "a\n");
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "a failing test command never passes: {v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");
    assert_eq!(check(&v, "build")["status"], "passed", "{v:#}");
    let (code, v) = repo.verdict(&["--all-files", "--phase", "qa"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["checks"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(check(&v, "tests")["status"], "failed", "{v:#}");

    // A file that defines its phases says which checks run.
    repo.config(
        "[commands]\ntests = \"false\"\n[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["checks"].as_array().unwrap().len(), 1, "{v:#}");
}

#[test]
fn an_empty_files_list_is_refused_where_it_is_written() {
    // `files = []` matches no file: the check would be skipped on every
    // run, and its failure never seen.
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"docs\", command = \"false\", files = [] },\n]\n",
    );
    let (message, line, column) = refused(&repo);
    assert!(
        message.contains("`files` of check `docs` is empty"),
        "{message}"
    );
    assert_eq!((line, column), (3, 47));

    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"docs\", command = \"false\", files = [\"*.md\"] },\n]\n",
    );
    repo.write("a.md", "a\n");
    repo.commit_all("docs");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
}

#[test]
fn check_names_that_differ_only_in_case_are_refused() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"Tests\", command = \"true\" },\n  { name = \"tests\", command = \"false\" },\n]\n",
    );
    let (message, line, column) = refused(&repo);
    assert!(
        message.contains("check `tests` differs only in case from check `Tests`"),
        "{message}"
    );
    assert_eq!((line, column), (4, 12));

    // In two phases, the same name is two checks, as it always was.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"Tests\", command = \"true\" } ]\n[phases.qa]\nchecks = [ { name = \"tests\", command = \"true\" } ]\n",
    );
    assert_eq!(repo.verdict(&["--all-files"]).0, 0);
}

#[test]
fn a_parser_regex_without_named_groups_says_what_it_lacks() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"t\", command = \"true\", parser = '^([^:]+):(\\d+): (.*)$' },\n]\n",
    );
    let (message, line, column) = refused(&repo);
    assert!(
        message.contains("is a regex without named groups")
            && message.contains("`file` and `line`"),
        "{message}"
    );
    assert_eq!((line, column), (3, 44));

    // A parser's name mistyped is still one.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"t\", command = \"true\", parser = \"pytset\" } ]\n",
    );
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown parser") && run.stderr.contains("did you mean \"pytest\"?"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_mistyped_command_key_is_the_one_error_shown() {
    // `comand`: the check has no command because of the typo, and the
    // error says that, not "add `lint` under [commands]".
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [\n  { name = \"lint\", comand = \"true\" },\n]\n",
    );
    let (message, line, column) = refused(&repo);
    assert!(message.contains("unknown key `comand`"), "{message}");
    assert_eq!((line, column), (3, 20));
    let run = repo.phasegate(&["run", "--all-files"]);
    assert!(
        run.stderr.contains("did you mean `command`?"),
        "{}",
        run.stderr
    );
}
