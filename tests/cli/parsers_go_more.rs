//! Go diagnostics: build constraints, module errors and go test -json build failures.

use crate::support::{check, TestRepo};

/// A recorded output or sample source, `fixtures/diagnostics/go/<name>`.
pub(crate) fn recording(name: &str) -> String {
    format!(
        "{}/fixtures/diagnostics/go/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A sample source's text.
pub(crate) fn source(name: &str) -> String {
    std::fs::read_to_string(recording(name)).unwrap()
}

/// The module the recordings ran in (`example.com/shop`), its package
/// `calc`.
pub(crate) fn shop(repo: &TestRepo) {
    repo.stage("go.mod", &source("go.mod.txt"))
        .stage("calc/calc.go", &source("calc.go.txt"));
}

/// A repository whose check `name` prints the recorded `output` and exits
/// `exit`, as go did, in `cwd` (the root when `None`); absolute paths
/// under `recorded_in`, where go ran, read as the check's directory's.
fn replaying(
    repo: &TestRepo,
    name: &str,
    output: &str,
    exit: i32,
    recorded_in: Option<&str>,
    cwd: Option<&str>,
) {
    let print = match recorded_in {
        Some(dir) => format!("sed \\\"s#{dir}#$PWD#g\\\" '{}'", recording(output)),
        None => format!("cat '{}'", recording(output)),
    };
    let cwd = cwd.map_or_else(String::new, |dir| format!(", cwd = \"{dir}\""));
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"{name}\", shell = true, command = \"{print}; exit {exit}\", parser = \"go\"{cwd} }} ]\n",
    ));
}

/// Each diagnostic's `file:line`, severity and message.
pub(crate) fn findings(v: &serde_json::Value) -> Vec<(String, String, String)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                format!("{}:{}", d["file"].as_str().unwrap_or("-"), d["line"]),
                d["severity"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Each diagnostic's `file:line` and severity.
pub(crate) fn located(v: &serde_json::Value) -> Vec<(String, String)> {
    findings(v)
        .into_iter()
        .map(|(place, severity, _)| (place, severity))
        .collect()
}

/// The message of the one finding of `v`, after asserting that there is
/// one, at `place` (`file:line`) with `severity`; `output` names the
/// recording in a failure.
pub(crate) fn only_finding(
    v: &serde_json::Value,
    output: &str,
    place: &str,
    severity: &str,
) -> String {
    let mut found = findings(v);
    assert_eq!(found.len(), 1, "{output}: {v:#}");
    let (at, said, message) = found.remove(0);
    assert_eq!(
        (at.as_str(), said.as_str()),
        (place, severity),
        "{output}: {v:#}"
    );
    message
}

/// go names a file whose `//go:build` line does not parse by its base name
/// alone (`sub.go: parsing //go:build line: ...`), with the package's
/// `# example.com/shop/calc` header (go 1.24's `go test`, its `-json`
/// events' `ImportPath`) or with nothing (`go build`, `go vet`, go 1.19):
/// the finding is at that line of `calc/sub.go`, not at a `sub.go` of the
/// root, nor at another `sub.go` that has no such line.
#[test]
fn a_build_constraint_go_cannot_parse_is_placed_at_its_line_in_its_package() {
    for output in [
        "go-constraint-build.txt",
        "go124-constraint-test.txt",
        "go124-constraint-test.json",
    ] {
        let repo = TestRepo::new();
        shop(&repo);
        repo.stage("calc/sub.go", &source("sub.go.txt"))
            .stage("tools/sub.go", "package tools\n")
            // Not the module's: go walks neither `vendor` nor `testdata`.
            .stage("calc/testdata/sub.go", &source("sub.go.txt"))
            .stage("vendor/x/sub.go", &source("sub.go.txt"));
        replaying(&repo, "build", output, 1, None, None);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            findings(&v),
            [(
                "calc/sub.go:1".to_string(),
                "error".to_string(),
                "parsing //go:build line: unexpected end of expression".to_string()
            )],
            "{output}: {v:#}"
        );
    }
}

/// Two files of that name with a `//go:build` line: go did not say which
/// one it meant, so neither is named, and the finding keeps the name go
/// printed; the check still fails.
#[test]
fn a_build_constraint_in_a_file_name_two_packages_share_is_not_placed_in_either() {
    let repo = TestRepo::new();
    shop(&repo);
    repo.stage("calc/sub.go", &source("sub.go.txt"))
        .stage("tools/sub.go", "//go:build linux\n\npackage tools\n");
    replaying(&repo, "build", "go-constraint-build.txt", 1, None, None);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        findings(&v),
        [(
            "-:null".to_string(),
            "error".to_string(),
            "sub.go: parsing //go:build line: unexpected end of expression".to_string()
        )],
        "{v:#}"
    );
}

/// `package example.com/shop/tools: build constraints exclude all Go files
/// in /abs/tools`: a finding at the directory, relative to the repository,
/// that says what it means, in text and in go 1.24's `-json` events.
#[test]
fn a_package_whose_files_build_constraints_all_exclude_is_found_at_its_directory() {
    for output in [
        "go-excluded-build.txt",
        "go124-excluded-test.txt",
        "go124-excluded-test.json",
    ] {
        let repo = TestRepo::new();
        shop(&repo);
        repo.stage("tools/gen.go", &source("gen.go.txt"));
        replaying(
            &repo,
            "build",
            output,
            1,
            Some("/tmp/rec-setup/excluded"),
            None,
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let message = only_finding(&v, output, "tools:null", "error");
        assert!(
            message.starts_with(
                "build constraints exclude all Go files of package example.com/shop/tools: none of its .go files is built"
            ),
            "{output}: {message}"
        );
        assert!(
            !message.contains(&*repo.path().to_string_lossy()),
            "{message}"
        );
    }
}

/// `go: warning: "./..." matched no packages`: visible, at the directory
/// the pattern names (the check's `cwd`), and a warning: `go build` exits
/// 0 and the run proceeds; `go test` exits 1, `no packages to test`.
#[test]
fn a_pattern_that_matched_no_packages_is_a_warning_at_its_directory() {
    let repo = TestRepo::new();
    repo.stage("backend/go.mod", &source("go.mod.txt"))
        .stage("backend/calc/calc.go", &source("gen.go.txt"));
    replaying(
        &repo,
        "build",
        "go-no-packages-build.txt",
        0,
        None,
        Some("backend"),
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(check(&v, "build")["status"], "passed", "{v:#}");
    let warning = (
        "backend:null".to_string(),
        "warning".to_string(),
        "\"./...\" matched no packages: go found no Go package there (no .go files, or build constraints exclude every one), and checked nothing".to_string(),
    );
    assert_eq!(findings(&v), std::slice::from_ref(&warning), "{v:#}");

    replaying(
        &repo,
        "tests",
        "go124-no-packages-test.txt",
        1,
        None,
        Some("backend"),
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        findings(&v),
        [
            warning,
            (
                "backend:null".to_string(),
                "error".to_string(),
                "no packages to test: the command's patterns matched no Go package".to_string()
            )
        ],
        "{v:#}"
    );
}

/// go run where no `go.mod` is, by each of the ways go says so: one error
/// that says go found no module and to set the check's `cwd`, not go's
/// last lines.
#[test]
fn no_go_module_says_where_go_looked_and_to_set_the_checks_cwd() {
    for (output, looked) in [
        (
            "go-no-module-build-calc.txt",
            "go found no go.mod in the check's directory or any directory above it up to the one holding .git/config (the repository's root)",
        ),
        (
            "go124-no-gomod-build-calc.txt",
            "go found no go.mod in the check's directory or any directory above it",
        ),
        (
            "go124-no-module-test.txt",
            "go found no module holding the directory the pattern ./... names",
        ),
        (
            "go124-no-module-test.json",
            "go found no module holding the directory the pattern ./... names",
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("backend/go.mod", &source("go.mod.txt"))
            .stage("backend/calc/calc.go", &source("calc.go.txt"));
        replaying(&repo, "tests", output, 1, None, None);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            findings(&v),
            [(
                "-:null".to_string(),
                "error".to_string(),
                format!("no Go module: {looked}; set the check's `cwd` in phasegate.toml to the module's directory, the one that holds its go.mod (or create a module there with `go mod init`)")
            )],
            "{output}: {v:#}"
        );
    }
}

/// go 1.24's `go test -json` prints a package that does not compile as
/// `build-output` events and a `build-fail`: the compiler's error at its
/// file, and nothing more than it.
#[test]
fn a_build_failure_among_go_test_json_events_is_placed_at_its_file() {
    let repo = TestRepo::new();
    shop(&repo);
    repo.stage("calc/calc_test.go", &source("calc_test.go.txt"));
    replaying(&repo, "tests", "go124-test-buildfail.json", 1, None, None);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        findings(&v),
        [(
            "calc/calc.go:6".to_string(),
            "error".to_string(),
            "undefined: missing".to_string()
        )],
        "{v:#}"
    );
}
