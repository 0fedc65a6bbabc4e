//! Loading and validation, rule by rule, with the exact place of each error.

use std::path::Path;
use std::time::Duration;

use super::*;

fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn load_text(text: &str) -> Result<Config, ConfigError> {
    let dir = dir_with(&[("phasegate.toml", text)]);
    load(dir.path())
}

/// The problems as `line:column message | help`.
fn problems(text: &str) -> Vec<String> {
    let error = load_text(text).expect_err("the configuration should be rejected");
    error
        .problems()
        .into_iter()
        .map(|p| {
            let l = p.location.unwrap();
            format!(
                "{}:{} {} | {}",
                l.line,
                l.column,
                p.message,
                p.help.unwrap_or_default()
            )
        })
        .collect()
}

const PHASE: &str = "[phases.implementation]\nchecks = []\n";

#[test]
fn a_full_configuration_loads() {
    let config = load_text(
        r#"[gate]
profile = "strict"
default_phase = "qa"
max_retries = 5
jobs = 2

[commands]
tests = "cargo test --workspace"

[phases.implementation]
checks = [
  "tests",
  { name = "docs", command = "markdownlint {files}", files = ["*.md", "docs/**"], on_failure = "warn", timeout = "90s" },
  { name = "review", kind = "verifier", command = "./review.sh", shell = true, on_missing = "skip", origin = "runtime" },
  { name = "custom", command = "lint", parser = "^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$", env = { A = "1" }, cwd = "sub" },
]

[phases.qa]
checks = [ { name = "tests", timeout = 30 } ]

[workflows.quick.phases.implementation]
checks = []

[handoff]
paths = ["docs/handoffs/*.md"]
checkpoints = { qa = ["tests_passing"] }
"#,
    )
    .unwrap();
    assert_eq!(config.gate.profile, Profile::Strict);
    assert_eq!(config.gate.default_phase, "qa");
    assert_eq!((config.gate.max_retries, config.gate.jobs), (5, Some(2)));
    let checks = &config.phases["implementation"].checks;
    assert_eq!(checks[0].kind, CheckKind::Code);
    assert_eq!(
        checks[0].command,
        CommandLine::Argv(vec!["cargo".into(), "test".into(), "--workspace".into()])
    );
    assert_eq!(
        checks[0].location.as_ref().map(|l| (l.line, l.column)),
        Some((12, 3))
    );
    let docs = &checks[1];
    assert_eq!(docs.timeout, Duration::from_secs(90));
    let filter = docs.file_filter.as_ref().unwrap();
    assert!(
        filter.is_match("README.md")
            && filter.is_match("deep/down/x.md")
            && filter.is_match("docs/a/b.txt")
    );
    assert!(!filter.is_match("src/main.rs"));
    assert_eq!(checks[2].kind, CheckKind::Verifier);
    assert_eq!(checks[2].command, CommandLine::Shell("./review.sh".into()));
    assert_eq!(checks[2].on_missing, OnMissing::Skip);
    assert!(matches!(checks[3].parser, ParserChoice::Regex(_)));
    assert_eq!(checks[3].cwd.as_deref(), Some(Path::new("sub")));
    assert_eq!(
        config.phases["qa"].checks[0].timeout,
        Duration::from_secs(30)
    );
    assert_eq!(
        config
            .checks_for("implementation", Some("quick"))
            .map(<[_]>::len),
        Some(0)
    );
    assert!(config.handoff.path_filter.is_match("docs/handoffs/F1.md"));
    assert_eq!(config.handoff.claims["tests_passing"], "tests");
}

#[test]
fn unknown_keys_suggest_the_near_miss() {
    assert_eq!(
        problems(&format!("[gate]\nprofle = \"strict\"\n{PHASE}")),
        ["2:1 unknown key `profle` in [gate] | did you mean `profile`?"]
    );
    assert_eq!(
        problems(&format!("[gaet]\n{PHASE}")),
        ["1:2 unknown key `gaet` in the configuration | did you mean `gate`?"]
    );
    let p = problems("[phases.implementation]\nchecks = [ { name = \"x\", command = \"true\", tiemout = \"1s\" } ]\n");
    assert_eq!(p, ["2:44 unknown key `tiemout` in a check of [phases.implementation] | did you mean `timeout`?"]);
}

#[test]
fn malformed_toml_points_at_the_error() {
    let p = problems("[gate\nprofile = 1\n");
    assert_eq!(p.len(), 1);
    assert!(p[0].starts_with("1:"), "{p:?}");
    assert!(p[0].contains("not valid TOML"), "{p:?}");
}

#[test]
fn types_and_enums_name_what_was_expected() {
    assert_eq!(
        problems(&format!("[gate]\nmax_retries = \"three\"\n{PHASE}")),
        ["2:15 `max_retries` must be a non-negative integer, not a string | "]
    );
    assert_eq!(
        problems(&format!("[gate]\nprofile = \"fsat\"\n{PHASE}")),
        ["2:11 `profile` must be one of \"strict\", \"auto\", \"fast\", not \"fsat\" | did you mean \"fast\"?"]
    );
    assert_eq!(
        problems("[phases.implementation]\nchecks = [ { name = \"x\", command = \"true\", origin = \"linting\" } ]\n"),
        ["2:53 `origin` of check `x` must be one of \"test\", \"lint\", \"build\", \"typecheck\", \"runtime\", not \"linting\" | use one of \"test\", \"lint\", \"build\", \"typecheck\", \"runtime\""]
    );
}

#[test]
fn check_names_are_non_empty_unique_and_have_a_command() {
    let p = problems("[phases.implementation]\nchecks = [\n  { name = \"a\", command = \"true\" },\n  { name = \"a\", command = \"false\" },\n]\n");
    assert_eq!(
        p,
        ["4:12 check `a` is defined twice in [phases.implementation] | the first is on line 3; give each check a unique name"]
    );
    let p = problems("[phases.implementation]\nchecks = [ { name = \"\", command = \"true\" } ]\n");
    assert_eq!(p, ["2:21 a check's name cannot be empty | "]);
    let p = problems(
        "[commands]\ntests = \"make test\"\n[phases.implementation]\nchecks = [ \"tset\" ]\n",
    );
    assert_eq!(
        p,
        ["4:12 check `tset` has no command: no `command` key and no `tset` in [commands] | did you mean `tests`? Or give the check a `command`"]
    );
}

#[test]
fn durations_globs_regexes_and_commands_are_checked() {
    let check = |options: &str| {
        problems(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"x\", command = \"true\", {options} }} ]\n"
        ))
    };
    assert!(check("timeout = \"soon\"")[0].contains("not a valid duration"));
    assert!(check("timeout = 0")[0].contains("must be a duration"));
    assert!(check("files = [\"a[\"]")[0].contains("not a valid glob"));
    assert!(check("parser = \"(?P<file>.*)\"")[0].contains("lacks `line`"));
    assert!(check("parser = \"(?P<file>(.*)\"")[0].contains("not a valid regex"));
    assert!(check("parser = \"gneric\"")[0].contains("did you mean \"generic\""));
    assert!(check("cwd = \"/abs\"")[0].contains("relative"));
    let p = problems(
        "[phases.implementation]\nchecks = [ { name = \"x\", command = \"echo 'open\" } ]\n",
    );
    assert!(p[0].contains("a quote is not closed"), "{p:?}");
}

#[test]
fn phases_need_checks_and_references_must_exist() {
    assert_eq!(
        problems("[phases.implementation]\n"),
        ["1:9 [phases.implementation] has no `checks` list | add `checks = [...]`, or `checks = []` for a phase that runs no check"]
    );
    assert_eq!(
        problems(&format!(
            "[gate]\ndefault_phase = \"implementaton\"\n{PHASE}"
        )),
        ["2:17 unknown phase `implementaton` | did you mean `implementation`?"]
    );
    assert_eq!(
        problems(&format!("{PHASE}[workflows.w.phases.qa]\nchecks = []\n")),
        ["3:21 unknown phase `qa` | defined: `implementation`; or define it under [phases] first"]
    );
    assert!(problems("[phases.qa]\nchecks = []\n")[0]
        .contains("the default phase `implementation` is not defined"));
}

#[test]
fn the_local_file_overrides_the_main_file() {
    let dir = dir_with(&[
        ("phasegate.toml", "[gate]\nprofile = \"auto\"\nmax_retries = 2\n[phases.implementation]\nchecks = [ { name = \"x\", command = \"true\" } ]\n"),
        ("phasegate.local.toml", "[gate]\nprofile = \"fast\"\n"),
    ]);
    let config = load(dir.path()).unwrap();
    assert_eq!(config.gate.profile, Profile::Fast);
    assert_eq!(
        config.gate.max_retries, 2,
        "values the local file does not set are kept"
    );
    assert_eq!(
        config.origin,
        ConfigOrigin::File {
            files: vec!["phasegate.toml".into(), "phasegate.local.toml".into()]
        }
    );

    std::fs::write(
        dir.path().join("phasegate.local.toml"),
        "\n[gate]\nprofile = 3\n",
    )
    .unwrap();
    let error = load(dir.path()).unwrap_err();
    let location = error.problems()[0].location.clone().unwrap();
    assert_eq!(
        (location.file.as_str(), location.line, location.column),
        ("phasegate.local.toml", 3, 11)
    );
}

#[test]
fn without_a_file_the_embedded_default_of_the_language_applies() {
    let dir = dir_with(&[("Cargo.toml", "[package]\n")]);
    let config = load(dir.path()).unwrap();
    assert_eq!(
        config.origin,
        ConfigOrigin::Embedded {
            language: Some("rust".into())
        }
    );
    let names: Vec<&str> = config.phases["implementation"]
        .checks
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["tests", "lint", "build", "typecheck"]);
    assert!(config.phases["implementation"]
        .checks
        .iter()
        .all(|c| c.location.is_none()));
    assert_eq!(config.phases["qa"].checks.len(), 1);
    assert!(config.phases["requirements"].checks.is_empty());

    // A file that only names commands keeps the default phases.
    std::fs::write(
        dir.path().join("phasegate.toml"),
        "[commands]\ntests = \"cargo nextest run\"\n",
    )
    .unwrap();
    let config = load(dir.path()).unwrap();
    assert_eq!(
        config.phases["qa"].checks[0].command,
        CommandLine::Argv(vec!["cargo".into(), "nextest".into(), "run".into()])
    );
}

#[test]
fn init_templates_load_back_for_every_language() {
    for files in [
        vec![("Cargo.toml", "")],
        vec![("go.mod", "")],
        vec![
            (
                "package.json",
                r#"{"scripts": {"lint": "x", "build": "y"}}"#,
            ),
            ("tsconfig.json", "{}"),
            ("bun.lock", ""),
        ],
        vec![("pyproject.toml", "")],
        // A monorepo: the others' checks are comments.
        vec![("Cargo.toml", ""), ("go.mod", ""), ("setup.cfg", "")],
        vec![],
    ] {
        let dir = dir_with(&files);
        let text = init_template(&detect(dir.path()));
        std::fs::write(dir.path().join("phasegate.toml"), &text).unwrap();
        let config =
            load(dir.path()).unwrap_or_else(|e| panic!("{files:?}: {:?}\n{text}", e.problems()));
        assert_eq!(config.gate.default_phase, "implementation");
        let expected = detect_language(dir.path()).map_or(0, |l| l.commands().len());
        assert_eq!(
            config.phases["implementation"].checks.len(),
            expected,
            "{text}"
        );
    }
}

/// Each phase's checks as `name command cwd files origin on_failure`.
fn phase_checks(config: &Config) -> Vec<String> {
    config
        .phases
        .iter()
        .flat_map(|(phase, p)| {
            p.checks.iter().map(move |c| {
                format!(
                    "{phase}: {} {:?} {:?} {:?} {:?} {:?}",
                    c.name, c.command, c.cwd, c.files, c.origin, c.on_failure
                )
            })
        })
        .collect()
}

#[test]
fn a_monorepo_runs_on_the_checks_init_writes() {
    let dir = dir_with(&[
        ("api/Cargo.toml", ""),
        ("web/package.json", r#"{"scripts": {"test": "vitest"}}"#),
        ("web/bun.lock", ""),
        // A directory whose name a glob and TOML would misread.
        ("odd [x]/pyproject.toml", ""),
    ]);
    let embedded = load(dir.path()).unwrap();
    let checks = phase_checks(&embedded);
    assert!(
        checks.contains(
            &r#"implementation: odd [x]-tests Argv(["pytest"]) Some("odd [x]") ["odd \\[x\\]/**"] Test Block"#
                .to_string()
        ),
        "{checks:#?}"
    );
    assert!(
        checks.contains(
            &r#"qa: web-tests Argv(["bun", "run", "test"]) Some("web") ["web/**"] Test Block"#
                .to_string()
        ),
        "{checks:#?}"
    );
    assert_eq!(checks.len(), 4 + 3 + 1 + 3, "{checks:#?}");
    let text = init_template(&detect(dir.path()));
    std::fs::write(dir.path().join("phasegate.toml"), &text).unwrap();
    let written = load(dir.path()).unwrap_or_else(|e| panic!("{:?}\n{text}", e.problems()));
    assert_eq!(phase_checks(&written), checks, "{text}");
    // The glob matches the directory's files, and only them.
    let spec = &written.phases["implementation"]
        .checks
        .iter()
        .find(|c| c.name == "odd [x]-tests")
        .unwrap();
    let filter = spec.file_filter.as_ref().unwrap();
    assert!(filter.is_match(Path::new("odd [x]/app.py")));
    assert!(!filter.is_match(Path::new("odd x/app.py")));
}

#[test]
fn a_rendered_error_shows_the_span() {
    let error = load_text(&format!("[gate]\nprofle = \"strict\"\n{PHASE}")).unwrap_err();
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(80);
    let mut out = String::new();
    let related: Vec<&dyn miette::Diagnostic> =
        miette::Diagnostic::related(&error).unwrap().collect();
    handler.render_report(&mut out, related[0]).unwrap();
    insta::assert_snapshot!(out);
}

#[test]
fn a_shell_check_gets_its_commands_entry_as_written() {
    let config = load_text(
        "[commands]\ntests = \"cat 'my dir/f.txt' | wc  -l\"\n[phases.implementation]\nchecks = [ { name = \"tests\", shell = true } ]\n[phases.qa]\nchecks = [ \"tests\" ]\n",
    )
    .unwrap();
    assert_eq!(
        config.phases["implementation"].checks[0].command,
        CommandLine::Shell("cat 'my dir/f.txt' | wc  -l".into())
    );
    assert_eq!(
        config.phases["qa"].checks[0].command,
        CommandLine::Argv(vec![
            "cat".into(),
            "my dir/f.txt".into(),
            "|".into(),
            "wc".into(),
            "-l".into()
        ])
    );
}

#[test]
fn files_patterns_read_as_gitignore_patterns() {
    let filter = |pattern: &str| {
        let text = format!(
            "[phases.implementation]\nchecks = [ {{ name = \"x\", command = \"true\", files = [{pattern:?}] }} ]\n"
        );
        let config = load_text(&text).unwrap_or_else(|e| panic!("{pattern}: {:?}", e.problems()));
        config.phases["implementation"].checks[0]
            .file_filter
            .clone()
            .unwrap()
    };
    for (pattern, matches, misses) in [
        (
            "docs/",
            &["docs/a.md", "docs/sub/a.md", "x/docs/a.md"][..],
            &["docs", "docs.md", "a/docs"][..],
        ),
        (
            "docs",
            &["docs", "docs/sub/a.md", "x/docs", "x/docs/a.md"],
            &["docs.md", "mydocs/a"],
        ),
        (
            "src/docs",
            &["src/docs", "src/docs/a.md"],
            &["x/src/docs/a.md", "docs/a.md"],
        ),
        ("/docs", &["docs/a.md", "docs"], &["x/docs/a.md"]),
        ("*.md", &["a.md", "x/y/a.md"], &["a.rs"]),
        ("docs/**", &["docs/a/b.txt"], &["x/docs/a"]),
    ] {
        let set = filter(pattern);
        for path in matches {
            assert!(set.is_match(path), "`{pattern}` should match `{path}`");
        }
        for path in misses {
            assert!(!set.is_match(path), "`{pattern}` should not match `{path}`");
        }
    }
    let p = problems("[phases.implementation]\nchecks = [ { name = \"x\", command = \"true\", files = [\"/\"] } ]\n");
    assert!(p[0].contains("names no file"), "{p:?}");
}

#[test]
fn loading_is_linear_in_the_number_of_keys() {
    // 100,000 keys took minutes while each was looked up with a linear
    // search; a few hundred milliseconds with a map.
    let mut text = String::from("[commands]\n");
    for i in 0..100_000 {
        text.push_str(&format!("c{i} = \"echo {i}\"\n"));
    }
    text.push_str(PHASE);
    let dir = dir_with(&[("phasegate.toml", &text), ("phasegate.local.toml", &text)]);
    let started = std::time::Instant::now();
    let config = load(dir.path()).unwrap();
    assert_eq!(config.commands.len(), 100_000);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn problems_come_in_file_order() {
    let p = problems("[phases.implementation]\nchecks = [ { name = \"x\", command = \"true\", timout = \"1s\", envs = {}, shel = true } ]\n");
    let columns: Vec<&str> = p.iter().map(|p| p.split(' ').next().unwrap()).collect();
    assert_eq!(columns, ["2:44", "2:59", "2:70"], "{p:?}");
}

#[test]
fn a_commands_entry_only_the_shell_reads_need_not_split_into_arguments() {
    // A here-document's apostrophe leaves a quote open for an argument
    // splitter; `sh -c` reads it as written.
    let script = "cat <<EOF\nit's done\nEOF\n";
    let text = format!(
        "[commands]\ntests = \"\"\"{script}\"\"\"\nlint = \"echo {{files}}x\"\n[phases.implementation]\nchecks = [ {{ name = \"tests\", shell = true }}, {{ name = \"lint\", shell = true }} ]\n"
    );
    let config = load_text(&text).unwrap();
    let checks = &config.phases["implementation"].checks;
    assert_eq!(checks[0].command, CommandLine::Shell(script.into()));
    assert_eq!(
        checks[1].command,
        CommandLine::Shell("echo {files}x".into())
    );

    // Taken as arguments too, or by no check at all, it is an error.
    let p = problems(&format!("{text}[phases.qa]\nchecks = [ \"tests\" ]\n"));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("2:9 the command `tests` cannot be split"),
        "{p:?}"
    );
    let p = problems("[commands]\nbuild = \"echo 'open\"\n[phases.implementation]\nchecks = []\n");
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("2:9 the command `build` cannot be split"),
        "{p:?}"
    );
}

#[test]
fn a_broken_commands_entry_is_one_error() {
    let p = problems("[commands]\ntests = \"echo 'open\"\n[phases.implementation]\nchecks = [ \"tests\" ]\n[phases.qa]\nchecks = [ { name = \"tests\", shell = true } ]\n");
    assert_eq!(
        p,
        ["2:9 the command `tests` cannot be split into arguments: a quote is not closed or a `\\` ends it | close the quote, or remove the `\\` at the end"]
    );
}

#[test]
fn a_checkpoint_listed_twice_for_a_stage_is_an_error() {
    let p = problems(&format!(
        "{PHASE}[handoff.checkpoints]\nimplementation = [\"a\", \"b\",\n  \"a\"]\nqa = [\"x\", \"x\", \"x\"]\n"
    ));
    assert_eq!(
        p,
        [
            "5:3 checkpoint `a` is listed twice for `implementation` in [handoff.checkpoints] | the first is on line 4; list each checkpoint once",
            "6:12 checkpoint `x` is listed twice for `qa` in [handoff.checkpoints] | the first is on line 6; list each checkpoint once",
            "6:17 checkpoint `x` is listed twice for `qa` in [handoff.checkpoints] | the first is on line 6; list each checkpoint once",
        ]
    );
    // The same checkpoint for two stages is no duplicate.
    let config = load_text(&format!(
        "{PHASE}[handoff.checkpoints]\nimplementation = [\"a\"]\nqa = [\"a\"]\n"
    ))
    .unwrap();
    assert_eq!(config.handoff.checkpoints["qa"], ["a"]);
}

#[test]
fn files_globs_leave_out_with_a_bang_and_the_last_match_decides() {
    let config = load_text(
        "[phases.implementation]\nchecks = [ { name = \"fmt\", command = \"x\", files = [\"*.rs\", \"!gen/**\", \"gen/keep.rs\", \"\\\\!odd.rs\"] } ]\n",
    )
    .unwrap();
    let filter = config.phases["implementation"].checks[0]
        .file_filter
        .clone()
        .unwrap();
    assert!(filter.is_match("src/lib.rs"));
    assert!(!filter.is_match("gen/a.rs"));
    assert!(!filter.is_match("gen/deep/b.rs"));
    assert!(
        filter.is_match("gen/keep.rs"),
        "a later pattern takes it back in"
    );
    assert!(
        filter.is_match("!odd.rs"),
        "`\\!` is a name starting with `!`"
    );
    assert!(!filter.is_match("README.md"));
    // A `!` pattern before any other leaves out of nothing: said.
    assert_eq!(
        problems(
            "[phases.implementation]\nchecks = [ { name = \"fmt\", command = \"x\", files = [\"!vendor/**\"] } ]\n"
        ),
        [
            "2:52 `files` of check `fmt`: `!vendor/**` leaves out files no pattern before it takes in | the last pattern that matches a file decides: put `!vendor/**` after the globs it narrows, e.g. [\"**\", \"!vendor/**\"]"
        ]
    );
    // [handoff] paths read the same way.
    let config = load_text(
        "[phases.implementation]\nchecks = []\n[handoff]\npaths = [\"handoffs/**/*.md\", \"!handoffs/archive/\"]\n",
    )
    .unwrap();
    assert!(config.handoff.path_filter.is_match("handoffs/F1.md"));
    assert!(!config
        .handoff
        .path_filter
        .is_match("handoffs/archive/F0.md"));
}
