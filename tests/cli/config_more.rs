//! phasegate.toml and `phasegate init` in the hands of a demanding user.

use crate::support::{check, TestRepo};

/// The argv of the first command check `name` ran (or would have run).
fn program(verdict: &serde_json::Value, name: &str) -> String {
    check(verdict, name)["argv"][0][0]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_package_json_with_nothing_to_run_does_not_hide_a_python_project() {
    // A Python project that keeps a package.json for its formatter: the
    // tests are Python's, and they must run.
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "x", "devDependencies": {"prettier": "3"}}"#,
    );
    repo.write("pyproject.toml", "[project]\nname = \"x\"\n");
    repo.write("test_x.py", "def test_x():\n    assert 1 == 2\n");
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_ne!(
        code, 0,
        "a failing or unrunnable pytest never passes: {v:#}"
    );
    assert_eq!(program(&v, "tests"), "pytest", "{v:#}");
    assert!(
        v["notes"].to_string().contains("defaults for python"),
        "{v:#}"
    );

    assert_eq!(repo.phasegate(&["init"]).code, 0);
    let text = repo.read("phasegate.toml");
    assert!(text.contains("tests = \"pytest\""), "{text}");
}

#[test]
fn a_package_json_with_a_byte_order_mark_still_has_its_scripts() {
    // npm reads it, and its failing test script fails `npm test`.
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "\u{feff}{\"name\": \"x\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"exit 1\"}}",
    );
    repo.write("package-lock.json", "{}");
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_ne!(code, 0, "{v:#}");
    assert_eq!(program(&v, "tests"), "npm", "{v:#}");
}

#[test]
fn a_monorepo_says_which_code_the_defaults_do_not_check() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "[package]\nname = \"x\"\n");
    repo.write("go.mod", "module example.com/x\n\ngo 1.22\n");
    repo.write(
        "package.json",
        r#"{"name": "x", "scripts": {"test": "node -e 0"}}"#,
    );
    repo.commit_all("init");

    // Without a file: Rust's checks run, and the verdict says Go's and
    // Node's do not.
    let (_, v) = repo.verdict(&["--all-files", "--profile", "fast", "--check", "tests"]);
    assert_eq!(program(&v, "tests"), "cargo", "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("defaults for rust, not for the go and node code also here"),
        "{notes}"
    );

    // init says so too, and offers the other languages' checks.
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("the go and node code here is not checked yet"),
        "{}",
        run.stdout
    );
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains("#   { name = \"go-tests\", command = \"go test ./...\" },\n"),
        "{text}"
    );
    assert!(
        text.contains("#   { name = \"node-tests\", command = \"npm test\" },\n"),
        "{text}"
    );

    // Uncommented into a phase, the offered checks load and run.
    let offered: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("#   { name = "))
        .map(|l| format!("  {{ name = {l}"))
        .collect();
    let text = text.replacen(
        "[phases.implementation]\nchecks = [\n",
        &format!(
            "[phases.implementation]\nchecks = [\n{}\n",
            offered.join("\n")
        ),
        1,
    );
    repo.config(&text);
    let (code, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
    assert_ne!(code, 2, "{v:#}");
    assert_eq!(check(&v, "node-tests")["status"], "passed", "{v:#}");
    assert_eq!(program(&v, "go-tests"), "go", "{v:#}");
}

#[test]
fn an_integer_beyond_64_bits_is_invalid_toml_not_the_largest_number() {
    // TOML integers are 64-bit: a larger one is an error, never read as
    // another number the file does not say.
    let repo = TestRepo::new();
    for (text, column) in [
        (
            "[gate]\nmax_retries = 99999999999999999999\n[phases.implementation]\nchecks = []\n",
            15,
        ),
        (
            "[gate]\njobs = 0x7fffffffffffffff1\n[phases.implementation]\nchecks = []\n",
            8,
        ),
    ] {
        repo.config(text);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 2, "{text}: {v:#}");
        let problems = v["error"]["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{v:#}");
        let message = problems[0]["message"].as_str().unwrap();
        let written = text.lines().nth(1).unwrap().split(" = ").nth(1).unwrap();
        assert!(
            message.contains("out of range") && message.contains(written),
            "{v:#}"
        );
        assert!(!message.contains("9223372036854775807"), "{v:#}");
        assert_eq!(
            (problems[0]["line"].as_u64(), problems[0]["column"].as_u64()),
            (Some(2), Some(column)),
            "{v:#}"
        );
    }
    // A timeout of that many seconds is not "longer than a week" of another
    // number either.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\", timeout = 99999999999999999999 } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    assert!(
        v["error"]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`99999999999999999999` is out of range"),
        "{v:#}"
    );
}

#[test]
fn a_value_or_key_in_another_case_or_with_a_suffix_gets_a_suggestion() {
    let repo = TestRepo::new();
    repo.config(
        "[gate]\nprofile = \"AUTO\"\n[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\", timeout_secs = 5, on_failure = \"Warn\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    let helps: Vec<&str> = v["error"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["help"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        helps,
        [
            "did you mean \"auto\"?",
            "did you mean `timeout`?",
            "did you mean \"warn\"?"
        ],
        "{v:#}"
    );
    // The same for the command line.
    repo.config("[phases.implementation]\nchecks = []\n");
    let run = repo.phasegate(&["run", "--format", "json", "--profile", "FAST"]);
    assert_eq!(run.code, 2);
    assert!(
        run.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `fast`?"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_duration_may_have_spaces_between_its_parts() {
    let repo = TestRepo::new();
    for value in ["10 m", "1m 30s", "1h 30m 15s"] {
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"a\", command = \"true\", timeout = \"{value}\" }} ]\n"
        ));
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 0, "{value}: {v:#}");
        assert_eq!(check(&v, "a")["status"], "passed", "{value}: {v:#}");
    }
    // A unit that is none is still named.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\", timeout = \"5 sec\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2, "{v:#}");
    assert!(
        v["error"]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`sec` is not a unit of time"),
        "{v:#}"
    );
}

#[test]
fn a_backslash_in_a_double_quoted_regex_says_how_to_write_it() {
    let repo = TestRepo::new();
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\", parser = \"(?P<file>.+):(?P<line>\\d+)\" } ]\n",
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 2, "{v:#}");
    let problem = &v["error"]["problems"][0];
    assert_eq!(
        (problem["line"].as_u64(), problem["column"].as_u64()),
        (Some(2), Some(77)),
        "{v:#}"
    );
    let help = problem["help"].as_str().unwrap();
    assert!(
        help.contains("single quotes") && help.contains(r"`\\`"),
        "{v:#}"
    );
    // Written as the help says, the same regex loads.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"a\", command = \"true\", parser = '(?P<file>.+):(?P<line>\\d+)' } ]\n",
    );
    assert_eq!(repo.verdict(&[]).0, 0);
}

#[test]
fn thousands_of_problems_show_the_first_fifty_and_the_verdict_lists_them_all() {
    // A generated file with a misspelt key in every check: the terminal gets
    // the first screens and a count, not megabytes of the same drawing.
    let repo = TestRepo::new();
    let checks = (0..60)
        .map(|i| format!("  {{ name = \"c{i}\", command = \"true\", bogus = 1 }},\n"))
        .collect::<Vec<_>>()
        .concat();
    repo.config(&format!("[phases.implementation]\nchecks = [\n{checks}]\n"));
    let run = repo.phasegate(&["run", "--all-files"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("unknown key `bogus`").count(),
        50,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("10 more problems not shown"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--format json"), "{}", run.stderr);

    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 2);
    assert_eq!(v["error"]["problems"].as_array().map(Vec::len), Some(60));
}

#[test]
fn init_warns_when_git_ignores_the_file_it_wrote() {
    // A blanket `*.toml` rule would keep the gate out of every commit, and
    // CI and the team would go on running the defaults.
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.toml\n");
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("git ignores `phasegate.toml`")
            && run.stderr.contains("!/phasegate.toml"),
        "{}",
        run.stderr
    );

    // Tracked, or not ignored: nothing to say.
    repo.git(&["add", "-f", "phasegate.toml"]);
    let run = repo.phasegate(&["init", "--force"]);
    assert!(!run.stderr.contains("ignores"), "{}", run.stderr);
    let plain = TestRepo::new();
    let run = plain.phasegate(&["init"]);
    assert!(!run.stderr.contains("ignores"), "{}", run.stderr);
}

#[test]
fn a_branch_that_adds_another_language_cannot_change_the_defaults_of_the_target_branch() {
    // A Python project with no phasegate.toml, judged by its main branch's
    // gate: a branch that adds a Cargo.toml must not turn its checks into
    // Rust's (whose `cargo test` a two-line crate passes).
    let repo = TestRepo::new();
    repo.write("pyproject.toml", "[project]\nname = \"x\"\n");
    repo.commit_all("python");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    );
    repo.commit_all("rust too");

    let (_, v) = repo.verdict(&["--all-files", "--config-from-ref", "main"]);
    assert_eq!(program(&v, "tests"), "pytest", "{v:#}");
    assert_eq!(program(&v, "lint"), "ruff", "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("defaults for python"), "{notes}");
    assert!(!notes.contains("rust"), "{notes}");

    // Without --config-from-ref, the branch's own files decide.
    let (_, v) = repo.verdict(&["--all-files"]);
    assert_eq!(program(&v, "tests"), "cargo", "{v:#}");
}

#[test]
fn a_target_branch_of_no_known_language_says_so_whatever_the_branch_adds() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "hello\n");
    repo.commit_all("notes");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("go.mod", "module example.com/x\n\ngo 1.22\n");
    repo.commit_all("go");
    let (code, v) = repo.verdict(&["--all-files", "--config-from-ref", "main"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["checks"].as_array().unwrap().is_empty(), "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("`main` has no `phasegate.toml` and no project phasegate knows"),
        "{notes}"
    );
}

#[test]
fn a_range_is_judged_by_the_defaults_of_the_language_its_end_holds() {
    // The work tree is on main (Python); the range's end adds a Cargo.toml
    // and relies on the detected commands: they are Rust's, from the
    // commit checked, and the run says why.
    let repo = TestRepo::new();
    repo.write("pyproject.toml", "[project]\nname = \"x\"\n");
    repo.write(
        "phasegate.toml",
        "[phases.implementation]\nchecks = [ { name = \"lint\" } ]\n",
    );
    repo.commit_all("python");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    );
    repo.commit_all("rust");
    repo.git(&["checkout", "-q", "main"]);

    let (_, v) = repo.verdict(&["--from-ref", "main", "--to-ref", "feature"]);
    assert_eq!(program(&v, "lint"), "cargo", "{v:#}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(
            "differ in `feature`, the commit checked: the default commands were detected there"
        ),
        "{notes}"
    );

    // On the work tree's own commit nothing differs, and nothing is said.
    let (_, v) = repo.verdict(&["--from-ref", "main~0", "--to-ref", "main"]);
    assert_eq!(program(&v, "lint"), "ruff", "{v:#}");
    assert!(!v["notes"].to_string().contains("detected there"), "{v:#}");
}

#[test]
fn a_marker_the_target_branch_holds_as_a_directory_is_no_marker_and_spoils_no_other() {
    let repo = TestRepo::new();
    repo.write("go.mod/README", "not a Go module\n");
    repo.write("pyproject.toml", "[project]\nname = \"x\"\n");
    repo.commit_all("python");
    let (code, v) = repo.verdict(&["--all-files", "--config-from-ref", "HEAD"]);
    assert_ne!(code, 2, "{v:#}");
    assert_eq!(program(&v, "tests"), "pytest", "{v:#}");
}
