//! go workspaces and patterns that match nothing.

use std::path::PathBuf;

use crate::parsers_go3::{recording, source};
use crate::parsers_go_more::{findings, located, only_finding, shop};
use crate::support::{check, TestRepo};

/// The `go` on the `PATH` the suite runs with, if any: CI machines have
/// none, and the tests that need a real one pass over it there.
pub(crate) fn real_go() -> Option<PathBuf> {
    let (_, path) = std::env::vars_os().find(|(key, _)| key == "PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("go"))
        .find(|go| go.is_file())
}

/// A repository whose one check `build` prints the recorded go `output`
/// and exits 1, as go did, in `cwd` (the root when `None`); absolute
/// paths under `recorded_in`, where go ran, read as the repository's.
fn replaying(repo: &TestRepo, output: &str, recorded_in: Option<&str>, cwd: Option<&str>) {
    let print = match recorded_in {
        Some(dir) => format!(
            "sed \\\"s#{dir}#$(git rev-parse --show-toplevel)#g\\\" '{}'",
            recording(output)
        ),
        None => format!("cat '{}'", recording(output)),
    };
    let cwd = cwd.map_or_else(String::new, |dir| format!(", cwd = \"{dir}\""));
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"build\", shell = true, command = \"{print}; exit 1\", parser = \"go\"{cwd} }} ]\n",
    ));
}

/// A repository whose checks run the real `go` with these `(name,
/// command, cwd)`, isolated from the machine's go settings: no module
/// proxy, no toolchain download, no `GOFLAGS` (go refuses `-mod=mod` in a
/// workspace), and `GOWORK` as `gowork` says (`""`: the `go.work` go
/// finds above the check's directory; `off`: none).
pub(crate) fn running_go(
    repo: &TestRepo,
    go: &std::path::Path,
    gowork: &str,
    checks: &[(&str, &str, &str)],
) {
    let checks: Vec<String> = checks
        .iter()
        .map(|(name, args, cwd)| {
            format!(
                "{{ name = \"{name}\", command = \"'{}' {args}\", cwd = \"{cwd}\", parser = \"go\", env = {{ GOFLAGS = \"\", GOPROXY = \"off\", GOTOOLCHAIN = \"local\", GOWORK = \"{gowork}\" }} }}",
                go.display()
            )
        })
        .collect();
    repo.config(&format!(
        "[phases.implementation]\nchecks = [\n  {},\n]\n",
        checks.join(",\n  ")
    ));
}

/// The workspace of the `work` recordings: `go.work` lists `backend`
/// (module `example.com/shop`); `tools/gen` is in no module, `other` a
/// module go.work does not list, `backend/tools` a module of its own.
fn workspace(repo: &TestRepo) {
    repo.stage("go.work", "go 1.19\n\nuse ./backend\n")
        .stage("backend/go.mod", &source("go/go.mod.txt"))
        .stage("backend/calc/calc.go", &source("go/calc.go.txt"))
        .stage("tools/gen/gen.go", &source("go/outside-gen.go.txt"))
        .stage("other/go.mod", &source("go/tools-go.mod.txt"))
        .stage("other/gen/gen.go", &source("go/outside-gen.go.txt"))
        .stage("backend/tools/go.mod", &source("go/tools-go.mod.txt"))
        .stage("backend/tools/gen/gen.go", &source("go/outside-gen.go.txt"));
}

/// Each finding's place and severity, and whether its message says
/// `says`.
pub(crate) fn placed(v: &serde_json::Value, says: &str) -> Vec<(String, String, bool)> {
    findings(v)
        .into_iter()
        .map(|(place, severity, message)| (place, severity, message.contains(says)))
        .collect()
}

/// A recorded output, where go ran (when its absolute paths matter), the
/// check's `cwd`, the finding's place and what its message says.
type Replayed = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
    &'static str,
);

/// What go says in a workspace, recorded from go 1.19 and 1.24, is an
/// error at the directory or `go.work` line it is about (relative to the
/// repository, from a check run in a module's directory too), or, where
/// go names none, an error at the check that says what to do; never only
/// the output's last line.
#[test]
fn what_go_says_in_a_workspace_is_placed_or_says_what_to_do() {
    let cases: [Replayed; 17] = [
        (
            "go-outside-build.txt",
            None,
            None,
            "tools/gen:null",
            "outside the modules go.work lists",
        ),
        (
            "go124-outside-test.txt",
            None,
            None,
            "tools/gen:null",
            "go work use <its directory>",
        ),
        (
            "go124-outside-test.json",
            None,
            None,
            "tools/gen:null",
            "outside the modules go.work lists",
        ),
        (
            "go-unlisted-build.txt",
            None,
            None,
            "other/gen:null",
            "add it to go.work with `go work use other`",
        ),
        (
            "go124-unlisted-build.txt",
            None,
            None,
            "other/gen:null",
            "add it to go.work with `go work use other`",
        ),
        (
            "go124-unlisted-test.txt",
            None,
            None,
            "other/gen:null",
            "add it to go.work with `go work use other`",
        ),
        (
            "go-nested-build.txt",
            None,
            None,
            "backend/tools/gen:null",
            "makes it another module",
        ),
        (
            "go-dots-build.txt",
            None,
            None,
            "-:null",
            "set the check's `cwd` in phasegate.toml to a module's directory",
        ),
        (
            "go124-dots-test.txt",
            None,
            None,
            "-:null",
            "name each module's packages",
        ),
        (
            "go124-dots-test.json",
            None,
            None,
            "-:null",
            "name each module's packages",
        ),
        (
            "go124-dup-build.txt",
            None,
            None,
            "-:null",
            "go.work lists two modules with the same module path example.com/shop",
        ),
        (
            "go-syntax-build.txt",
            Some("/tmp/rec-g4/syntax"),
            None,
            "go.work:3",
            "unknown directive: uses",
        ),
        (
            "go124-syntax-build.txt",
            None,
            None,
            "go.work:3",
            "unknown directive: uses",
        ),
        (
            "go124-syntax-in-build.txt",
            None,
            Some("backend"),
            "go.work:3",
            "unknown directive: uses",
        ),
        (
            "go-nogomod-build.txt",
            Some("/tmp/rec-g4/nogomod"),
            None,
            "tools:null",
            "go.work lists this directory as a module",
        ),
        (
            "go124-nogomod-build.txt",
            None,
            None,
            "tools:null",
            "`go mod init`",
        ),
        (
            "go124-nogomod-in-build.txt",
            None,
            Some("backend"),
            "tools:null",
            "take its `use` line out of go.work",
        ),
    ];
    for (output, recorded_in, cwd, place, says) in cases {
        let repo = TestRepo::new();
        workspace(&repo);
        replaying(&repo, &format!("gowork/{output}"), recorded_in, cwd);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            placed(&v, says),
            [(place.to_string(), "error".to_string(), true)],
            "{output}: {v:#}"
        );
    }
}

/// A package pattern naming a directory that does not exist (`stat
/// /abs/x: directory not found`, `pattern ./x/...: lstat ./x/: no such
/// file or directory`): an error at the check, not at a file, saying the
/// pattern matches nothing and to fix the command or the check's `cwd`.
#[test]
fn a_pattern_naming_a_missing_directory_is_an_error_that_says_to_fix_the_command() {
    for (output, recorded_in, names) in [
        (
            "go-no-dir-build.txt",
            Some("/tmp/rec-g4/nodir"),
            "no directory x ",
        ),
        (
            "go124-no-dir-test.txt",
            Some("/tmp/rec-g4/nodir"),
            "no directory x ",
        ),
        (
            "go-no-dir-pattern-build.txt",
            None,
            "the pattern `./x/...` matches nothing",
        ),
        (
            "go124-no-dir-pattern-test.json",
            None,
            "the pattern `./x/...` matches nothing",
        ),
    ] {
        let repo = TestRepo::new();
        shop(&repo);
        replaying(&repo, &format!("go/{output}"), recorded_in, None);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let message = only_finding(&v, output, "-:null", "error");
        assert!(message.contains("matches nothing"), "{output}: {message}");
        assert!(message.contains(names), "{output}: {message}");
        assert!(
            message.contains("fix the pattern in the check's command, or the check's `cwd`"),
            "{output}: {message}"
        );
    }
}

/// The `wimport` workspace: `app` imports `example.com/shop/calc` of the
/// module `lib`, whose `calc/sub.go` has a `//go:build` line go cannot
/// parse; `lib/tools/sub.go` shares its name.
fn importing(repo: &TestRepo) {
    repo.stage("go.work", "go 1.19\n\nuse (\n\t./app\n\t./lib\n)\n")
        .stage("app/go.mod", &source("gowork/app-go.mod.txt"))
        .stage("app/app.go", &source("go/app.go.txt"))
        .stage("lib/go.mod", &source("go/go.mod.txt"))
        .stage("lib/calc/calc.go", &source("go/calc.go.txt"))
        .stage("lib/calc/sub.go", &source("go/sub.go.txt"))
        .stage("lib/tools/sub.go", &source("gowork/tools-sub.go.txt"));
}

/// In text, go names only the importer's place (`app.go:6:2: sub.go:
/// parsing //go:build line: ...`, run in `app/`), and `sub.go` is a name
/// two packages share: the import spec at that place names the package,
/// found in the workspace's module `lib`, so the error is at the broken
/// line, as the `-json` events' package places it.
#[test]
fn a_broken_build_constraint_named_only_through_its_importer_is_at_its_line() {
    for output in [
        "go-imported-in-build.txt",
        "go124-imported-in-test.txt",
        "go124-imported-in-test.json",
    ] {
        let repo = TestRepo::new();
        importing(&repo);
        replaying(&repo, &format!("gowork/{output}"), None, Some("app"));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            located(&v),
            [
                ("lib/calc/sub.go:1".to_string(), "error".to_string()),
                ("app/app.go:6".to_string(), "note".to_string()),
            ],
            "{output}: {v:#}"
        );
    }
}

/// With a real `go` (only where one is on the `PATH`): each of the three
/// cases above, as go prints it on this machine.
#[test]
fn a_real_go_in_a_workspace_is_placed() {
    let Some(go) = real_go() else {
        return;
    };
    let repo = TestRepo::new();
    workspace(&repo);
    running_go(
        &repo,
        &go,
        "",
        &[
            ("outside", "build ./tools/gen", "."),
            ("nested", "build ./backend/tools/gen", "."),
            ("missing", "build ./x/...", "backend"),
        ],
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    for name in ["outside", "nested", "missing"] {
        assert_eq!(check(&v, name)["status"], "failed", "{name}: {v:#}");
    }
    let mut found: Vec<(String, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["check"].as_str().unwrap().to_string(),
                format!("{}:{}", d["file"].as_str().unwrap_or("-"), d["line"]),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("missing".to_string(), "-:null".to_string()),
            ("nested".to_string(), "backend/tools/gen:null".to_string()),
            ("outside".to_string(), "tools/gen:null".to_string()),
        ],
        "{v:#}"
    );

    let repo = TestRepo::new();
    importing(&repo);
    running_go(&repo, &go, "", &[("build", "build ./...", "app")]);
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        located(&v),
        [
            ("lib/calc/sub.go:1".to_string(), "error".to_string()),
            ("app/app.go:6".to_string(), "note".to_string()),
        ],
        "{v:#}"
    );
}
