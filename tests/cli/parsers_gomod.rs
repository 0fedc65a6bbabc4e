//! go's module errors, placed at go.mod or the importing line.

use crate::parsers_go4::{placed, real_go, running_go};
use crate::parsers_go_more::{findings, recording, source};
use crate::support::{check, TestRepo};

/// A repository whose one check `build` prints the recorded go `output`
/// and exits 1, as go did, in `cwd` (the root when `None`); absolute
/// paths under `recorded_in`, where go ran, read as the directory the
/// module is in here, `module` (the root when empty).
fn replaying(repo: &TestRepo, output: &str, recorded_in: Option<&str>, module: &str, cwd: &str) {
    let print = match recorded_in {
        Some(dir) => {
            let here = if module.is_empty() {
                String::new()
            } else {
                format!("/{module}")
            };
            format!(
                "sed \\\"s#{dir}#$(git rev-parse --show-toplevel){here}#g\\\" '{}'",
                recording(output)
            )
        }
        None => format!("cat '{}'", recording(output)),
    };
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"build\", shell = true, command = \"{print}; exit 1\", parser = \"go\", cwd = \"{cwd}\" }} ]\n",
    ));
}

/// The `missing` recordings' module, in `dir` (`""`: the root): `app/app.go`
/// imports `github.com/google/uuid` on line 6, which `go.mod` (`go_mod`, a
/// sample) may or may not require.
fn importing(repo: &TestRepo, dir: &str, go_mod: &str) {
    let at = |path: &str| {
        if dir.is_empty() {
            path.to_string()
        } else {
            format!("{dir}/{path}")
        }
    };
    repo.stage(&at("go.mod"), &source(go_mod))
        .stage(&at("calc/calc.go"), &source("calc.go.txt"))
        .stage(&at("app/app.go"), &source("missing-app.go.txt"));
}

/// An import no required module provides, or whose module has no
/// `go.sum` entry (go build, vet and test, text and `-json`, go 1.19 and
/// 1.24): an error at the import, relative to the repository's root, that
/// keeps the command go prints under it to fix it.
#[test]
fn an_import_go_cannot_resolve_is_at_the_import_with_gos_command() {
    let cases = [
        (
            "go-missing-build.txt",
            "go.mod.txt",
            "",
            "`go get github.com/google/uuid`",
        ),
        (
            "go124-missing-test.txt",
            "go.mod.txt",
            "",
            "`go get github.com/google/uuid`",
        ),
        (
            "go124-missing-test.json",
            "go.mod.txt",
            "",
            "`go get github.com/google/uuid`",
        ),
        (
            "go-missing-build.txt",
            "go.mod.txt",
            "backend",
            "`go get github.com/google/uuid`",
        ),
        (
            "go-sum-build.txt",
            "sum-go.mod.txt",
            "",
            "; to add: `go get example.com/shop/app`",
        ),
    ];
    for (output, go_mod, dir, says) in cases {
        let repo = TestRepo::new();
        importing(&repo, dir, go_mod);
        replaying(
            &repo,
            output,
            None,
            dir,
            if dir.is_empty() { "." } else { dir },
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let file = if dir.is_empty() {
            "app/app.go:6".to_string()
        } else {
            format!("{dir}/app/app.go:6")
        };
        assert_eq!(
            placed(&v, says),
            [(file, "error".to_string(), true)],
            "{output}: {v:#}"
        );
        assert_eq!(v["diagnostics"][0]["column"], 2, "{output}: {v:#}");
    }
}

/// A recorded output, the sample `go.mod`, where go ran (when its absolute
/// paths matter), the check's directory below the module's, and each
/// finding's place, severity and what its message says.
type ModuleCase = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static [(&'static str, &'static str, &'static str)],
);

/// What go says of the module itself, naming no Go file (a go too old for
/// the `go` line, a `go.mod` line it cannot read, a module's missing
/// `go.sum` entry, `go mod tidy` needed, go 1.19's note after a compile
/// error): an error at the `go.mod` of the module the check runs in
/// (`backend/go.mod` here), at the line go names or at the `go` line or
/// the module's requirement, saying what to do; never only the output's
/// last line.
#[test]
fn what_go_says_of_the_module_is_at_its_go_mod_line() {
    let cases: [ModuleCase; 9] = [
        (
            "go124-newer-build.txt",
            "newer-go.mod.txt",
            None,
            "",
            &[(
                "backend/go.mod:3",
                "error",
                "run the check with Go 1.26 or newer",
            )],
        ),
        (
            "go124-newer-in-build.txt",
            "newer-go.mod.txt",
            None,
            "/calc",
            &[(
                "backend/go.mod:3",
                "error",
                "requires go >= 1.26 (running go 1.24.4",
            )],
        ),
        (
            "go-newer-compile-build.txt",
            "newer22-go.mod.txt",
            None,
            "",
            &[
                ("backend/calc/sum.go:5", "error", "cannot range over n"),
                (
                    "backend/go.mod:3",
                    "note",
                    "run the check with Go 1.22 or newer",
                ),
            ],
        ),
        (
            "go-newer-format-build.txt",
            "newer3-go.mod.txt",
            Some("/tmp/rec-gomod/newer3"),
            "",
            &[
                ("backend/go.mod:3", "error", "invalid go version '1.22.0'"),
                (
                    "backend/go.mod:5",
                    "error",
                    "go.mod was written for a newer Go",
                ),
            ],
        ),
        (
            "go-syntax-build.txt",
            "syntax-go.mod.txt",
            Some("/tmp/rec-gomod/syntax"),
            "",
            &[(
                "backend/go.mod:3",
                "error",
                "go cannot read go.mod: unknown directive: requir",
            )],
        ),
        (
            "go124-syntax-in-build.txt",
            "syntax-go.mod.txt",
            None,
            "/calc",
            &[("backend/go.mod:3", "error", "unknown directive: requir")],
        ),
        (
            "go-sum-dependency-build.txt",
            "sumdep-go.mod.txt",
            None,
            "",
            &[(
                "backend/go.mod:3",
                "error",
                "`go mod download github.com/google/uuid`",
            )],
        ),
        (
            "go124-sum-dependency-build.txt",
            "sumdep-go.mod.txt",
            None,
            "/calc",
            &[(
                "backend/go.mod:3",
                "error",
                "missing go.sum entry for go.mod file",
            )],
        ),
        (
            "go-tidy-build.txt",
            "tidy-go.mod.txt",
            None,
            "/calc",
            &[(
                "backend/go.mod:null",
                "error",
                "to update it: `go mod tidy`",
            )],
        ),
    ];
    for (output, go_mod, recorded_in, below, expected) in cases {
        let repo = TestRepo::new();
        repo.stage("go.mod", "module example.com/root\n\ngo 1.19\n")
            .stage("backend/go.mod", &source(go_mod))
            .stage("backend/calc/calc.go", &source("calc.go.txt"))
            .stage("backend/calc/sum.go", &source("range.go.txt"));
        replaying(
            &repo,
            output,
            recorded_in,
            "backend",
            &format!("backend{below}"),
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), expected.len(), "{output}: {v:#}");
        for ((place, severity, message), (want_place, want_severity, says)) in
            found.iter().zip(expected)
        {
            assert_eq!(
                (place.as_str(), severity.as_str()),
                (*want_place, *want_severity),
                "{output}: {v:#}"
            );
            assert!(message.contains(says), "{output}: {message}");
        }
    }
}

/// `go: inconsistent vendoring`: each module go lists, at its requirement
/// or replacement in `go.mod`, or at its line of `vendor/modules.txt` when
/// that file lists what `go.mod` does not, each saying to run `go mod
/// vendor`; from the module's root and from a package directory below it.
#[test]
fn inconsistent_vendoring_is_at_each_modules_line() {
    let cases: [(&str, &str, &str, &[&str]); 4] = [
        (
            "go-vendor-build.txt",
            "vend-go.mod.txt",
            "/tmp/rec-gomod/vend",
            &["go.mod:7", "go.mod:11"],
        ),
        (
            "go124-vendor-in-build.txt",
            "vend-go.mod.txt",
            "/tmp/rec-gomod/vend",
            &["go.mod:7", "go.mod:11"],
        ),
        (
            "go-vendor-extra-build.txt",
            "vend2-go.mod.txt",
            "/tmp/rec-gomod/vend2",
            &["vendor/modules.txt:1"; 3],
        ),
        (
            "go-vendor-version-build.txt",
            "vend3-go.mod.txt",
            "/tmp/rec-gomod/vend3",
            &["go.mod:5", "vendor/modules.txt:1"],
        ),
    ];
    for (output, go_mod, recorded_in, places) in cases {
        let repo = TestRepo::new();
        repo.stage("go.mod", &source(go_mod))
            .stage("vendor/modules.txt", &source("vend-modules.txt.txt"))
            .stage("app/app.go", &source("missing-app.go.txt"));
        let cwd = if output.contains("-in-") { "app" } else { "." };
        replaying(&repo, output, Some(recorded_in), "", cwd);
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let expected: Vec<(String, String, bool)> = places
            .iter()
            .map(|place| (place.to_string(), "error".to_string(), true))
            .collect();
        assert_eq!(
            placed(&v, "run `go mod vendor`"),
            expected,
            "{output}: {v:#}"
        );
    }
}

/// With a real `go` (only where one is on the `PATH`): an import no
/// module provides, and a `go.mod` line go cannot read, as go prints them
/// on this machine, each at its place, the import's with go's command.
#[test]
fn a_real_go_places_module_errors() {
    let Some(go) = real_go() else {
        return;
    };
    let repo = TestRepo::new();
    importing(&repo, "missing", "go.mod.txt");
    repo.stage("syntax/go.mod", &source("syntax-go.mod.txt"))
        .stage("syntax/calc/calc.go", &source("calc.go.txt"));
    running_go(
        &repo,
        &go,
        "off",
        &[
            ("missing", "build ./...", "missing"),
            ("syntax", "build ./...", "syntax/calc"),
        ],
    );
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    for name in ["missing", "syntax"] {
        assert_eq!(check(&v, name)["status"], "failed", "{name}: {v:#}");
    }
    let mut found: Vec<(String, String, bool)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let message = d["message"].as_str().unwrap();
            (
                d["check"].as_str().unwrap().to_string(),
                format!("{}:{}", d["file"].as_str().unwrap_or("-"), d["line"]),
                message.contains("`go get github.com/google/uuid`")
                    || message.contains("unknown directive: requir"),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (
                "missing".to_string(),
                "missing/app/app.go:6".to_string(),
                true
            ),
            ("syntax".to_string(), "syntax/go.mod:3".to_string(), true),
        ],
        "{v:#}"
    );
}
