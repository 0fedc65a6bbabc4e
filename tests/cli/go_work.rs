//! go: go.work replace, vendor and module lookup messages, and GOWORK for diagnostics parse.

use crate::parsers_go3::{recording, source};
use crate::parsers_go4::real_go;
use crate::parsers_go_more::{findings, located};
use crate::parsers_gowork::replaying;
use crate::support::TestRepo;

/// The `gwrep` recordings' repository: `go.work` lists `app` and replaces
/// `example.com/shop` with `lib`; `app/go.mod` replaces it with `stale`.
/// Both hold the package `calc` and its `calc_test.go`.
fn replaced_workspace(repo: &TestRepo) {
    repo.stage("go.work", &source("gowork/replace-go.work.txt"))
        .stage("app/go.mod", &source("gowork/stale-app-go.mod.txt"))
        .stage("app/app.go", &source("go/app.go.txt"));
    for module in ["lib", "stale"] {
        repo.stage(&format!("{module}/go.mod"), &source("go/go.mod.txt"))
            .stage(&format!("{module}/calc/calc.go"), &source("go/calc.go.txt"));
    }
    repo.stage("lib/calc/calc_test.go", &source("go/calc_test.go.txt"))
        .stage(
            "stale/calc/calc_test.go",
            &source("gowork/stale-calc_test.go.txt"),
        );
}

/// A test failing in a package of a module go.work's `replace` puts in a
/// directory (go 1.19 and 1.24, text and `-json`), run from another
/// module of the workspace: go names the test's file relative to its
/// package's directory, and that directory is the one go.work's `replace`
/// names, which wins over the `replace` of the module the check runs in.
/// Under `GOWORK=off` go reads no go.work, and the module's own
/// `replace` is the one go follows.
#[test]
fn a_go_work_replace_places_a_package_in_the_directory_it_names() {
    for output in [
        "go-workreplace-test.txt",
        "go-workreplace-test.json",
        "go124-workreplace-test.json",
    ] {
        for (env, expected) in [
            ("", "lib/calc/calc_test.go:7"),
            ("GOWORK = \"off\"", "stale/calc/calc_test.go:7"),
        ] {
            let repo = TestRepo::new();
            replaced_workspace(&repo);
            replaying(&repo, &format!("gowork/{output}"), None, "app", env);
            let (code, v) = repo.verdict(&[]);
            assert_eq!(code, 1, "{output} {env}: {v:#}");
            assert_eq!(
                located(&v),
                [(expected.to_string(), "error".to_string())],
                "{output} {env}: {v:#}"
            );
        }
    }
}

/// With a real `go` on the `PATH` (skipped, saying so, where there is
/// none): the failing test go.work's `replace` runs is placed in `lib`.
#[test]
fn a_real_go_test_of_a_package_go_work_replaces_is_placed() {
    let Some(go) = real_go() else {
        eprintln!("skipped: no `go` on the PATH to run");
        return;
    };
    let repo = TestRepo::new();
    replaced_workspace(&repo);
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"tests\", command = \"'{}' test example.com/shop/calc\", cwd = \"app\", parser = \"go\", env = {{ GOFLAGS = \"\", GOPROXY = \"off\", GOTOOLCHAIN = \"local\", GOWORK = \"\" }} }} ]\n",
        go.display()
    ));
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        located(&v),
        [("lib/calc/calc_test.go:7".to_string(), "error".to_string())],
        "{v:#}"
    );
}

/// An import vendor/ lacks (go 1.19 names it `"."` and gives the
/// directory it looked in on the next line; go 1.24 names it), whether
/// go.mod requires its module or not: an error at the import that names
/// it, says it is missing from vendor/, and what to do.
#[test]
fn an_import_vendor_lacks_is_named_with_what_to_do() {
    for (output, scenario, go_mod, modules) in [
        ("go-vendor-missing-build.txt", "vmiss", "go.mod.txt", ""),
        ("go124-vendor-missing-build.txt", "vmiss", "go.mod.txt", ""),
        (
            "go-vendor-gone-build.txt",
            "vgone",
            "proxy-go.mod.txt",
            "vgone-modules.txt.txt",
        ),
        (
            "go124-vendor-gone-build.txt",
            "vgone",
            "proxy-go.mod.txt",
            "vgone-modules.txt.txt",
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("go.mod", &source(&format!("go/{go_mod}")))
            .stage("calc/calc.go", &source("go/calc.go.txt"))
            .stage("app/app.go", &source("go/missing-app.go.txt"));
        if !modules.is_empty() {
            repo.stage("vendor/modules.txt", &source(&format!("go/{modules}")));
        }
        let recorded_in = format!("/tmp/rec-gwr/{scenario}");
        replaying(&repo, &format!("go/{output}"), Some(&recorded_in), ".", "");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), 1, "{output}: {v:#}");
        let (at, severity, message) = &found[0];
        assert_eq!(
            (at.as_str(), severity.as_str()),
            ("app/app.go:6", "error"),
            "{output}"
        );
        for words in [
            "the import github.com/google/uuid is missing from vendor/",
            "run `go mod vendor`",
            "commit vendor/",
        ] {
            assert!(message.contains(words), "{output}: {words}: {message}");
        }
    }
}

/// go 1.19's `cannot find package "." in:` read from a saved log where
/// the importing file is not there to name the import: the directory go
/// looked in stands for it, relative to the repository.
#[test]
fn an_import_vendor_lacks_is_named_by_its_directory_without_the_source() {
    let repo = TestRepo::new();
    let log = std::fs::read_to_string(recording("go/go-vendor-missing-build.txt"))
        .unwrap()
        .replace("/tmp/rec-gwr/vmiss", &repo.path().to_string_lossy());
    repo.write("build.log", &log);
    let run = repo.phasegate(&[
        "diagnostics",
        "parse",
        "--parser",
        "go",
        "--format",
        "json",
        "build.log",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    let diagnostics = v["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{v:#}");
    let message = diagnostics[0]["message"].as_str().unwrap();
    for words in [
        "missing from vendor/: go looked for it in vendor/github.com/google/uuid",
        "run `go mod vendor`",
    ] {
        assert!(message.contains(words), "{words}: {message}");
    }
}

/// `go list -m` under `GOPROXY=off` (go 1.19 and 1.24): each run of
/// lookups go names no module of is one error at go.mod that says go did
/// not name it, where to look and what to do; a module go names by its
/// version is at its `require`; a version query (`@latest`) says it is a
/// query only a proxy answers. Never a raw line placed nowhere.
#[test]
fn go_list_m_lookups_goproxy_off_forbids_say_what_was_looked_up() {
    let unnamed = "go's output does not say which module";
    for (output, expected) in [
        (
            "go-proxy-list-module.txt",
            vec![("go.mod:null", unnamed)],
        ),
        (
            "go-proxy-list-update.txt",
            vec![
                ("go.mod:null", unnamed),
                (
                    "go.mod:5",
                    "github.com/google/uuid@v1.6.0: module lookup disabled by GOPROXY=off: go.mod requires this module",
                ),
            ],
        ),
        (
            "go-proxy-list-all.txt",
            vec![
                ("go.mod:null", unnamed),
                ("go.mod:5", "`go mod download github.com/google/uuid`"),
            ],
        ),
        (
            "go124-proxy-list-all.txt",
            vec![
                ("go.mod:null", unnamed),
                ("go.mod:5", "`go mod download github.com/google/uuid`"),
            ],
        ),
        (
            "go-proxy-list-latest.txt",
            vec![(
                "go.mod:5",
                "go looked up the version `latest` of github.com/google/uuid, a query",
            )],
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("go.mod", &source("go/proxy-go.mod.txt"))
            .stage("calc/calc.go", &source("go/calc.go.txt"))
            .stage("app/app.go", &source("go/missing-app.go.txt"));
        replaying(&repo, &format!("go/{output}"), None, ".", "");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), expected.len(), "{output}: {v:#}");
        for ((at, severity, message), (place, says)) in found.iter().zip(&expected) {
            assert_eq!(
                (at.as_str(), severity.as_str()),
                (*place, "error"),
                "{output}: {v:#}"
            );
            assert!(message.contains(says), "{output}: {says}: {message}");
            if *says == unnamed {
                assert!(
                    message.contains("allow a proxy (set GOPROXY in the check's `env`"),
                    "{output}: {message}"
                );
            }
        }
    }
}

/// The `gwabs` recordings' repository (as `parsers_gowork` describes it):
/// `app` imports `example.com/shop/calc`, which `lib` (its `calc/sub.go`
/// has a `//go:build` line go cannot parse) and `stale` both provide; the
/// root's `go.work` lists `app` and `stale`, `ws/go.work` `app` and `lib`.
fn two_workspaces(repo: &TestRepo) {
    repo.stage("go.work", &source("gowork/stale-go.work.txt"))
        .stage("ws/go.work", &source("gowork/ws-go.work.txt"))
        .stage("app/go.mod", &source("gowork/app-go.mod.txt"))
        .stage("app/app.go", &source("go/app.go.txt"));
    for module in ["lib", "stale"] {
        repo.stage(&format!("{module}/go.mod"), &source("go/go.mod.txt"))
            .stage(&format!("{module}/calc/calc.go"), &source("go/calc.go.txt"));
    }
    repo.stage("lib/calc/sub.go", &source("go/sub.go.txt"))
        .stage("stale/calc/sub.go", &source("gowork/stale-sub.go.txt"));
}

/// `phasegate diagnostics parse` of a saved go log takes the `go.work`
/// from `GOWORK` in the environment it runs in, as a run does for its
/// checks: `GOWORK=<abs>/ws/go.work` places the broken file in `lib`, the
/// module that file lists; with `GOWORK` empty (go's default) the
/// `go.work` above `--cwd` answers (`stale`), and `GOWORK=off` follows
/// `app/go.mod`'s `replace`.
#[test]
fn diagnostics_parse_honours_gowork_from_its_environment() {
    let repo = TestRepo::new();
    two_workspaces(&repo);
    let ws = repo.path().join("ws/go.work");
    let ws = ws.to_str().unwrap();
    let log = recording("gowork/go-gowork-file-build.txt");
    let parse = |gowork: &str| {
        let run = repo.phasegate_with(
            &[
                "diagnostics",
                "parse",
                "--parser",
                "go",
                "--cwd",
                "app",
                "--format",
                "json",
                &log,
            ],
            &[("GOWORK", gowork)],
        );
        assert_eq!(run.code, 0, "{gowork}: {}", run.stderr);
        let v = run.json();
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{}:{}", d["file"].as_str().unwrap_or("-"), d["line"]))
            .collect::<Vec<_>>()
    };
    assert_eq!(parse(ws), ["lib/calc/sub.go:1", "app/app.go:6"]);
    assert_eq!(parse(""), ["stale/calc/sub.go:1", "app/app.go:6"]);
    repo.stage("app/go.mod", &source("gowork/off-app-go.mod.txt"));
    assert_eq!(parse("off"), ["lib/calc/sub.go:1", "app/app.go:6"]);
}
