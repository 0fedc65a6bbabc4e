//! go workspaces chosen by GOWORK, and go module errors with short wordings.

use crate::parsers_go3::{recording, source};
use crate::parsers_go4::real_go;
use crate::parsers_go_more::{findings, located};
use crate::support::TestRepo;

/// A repository whose one check `build` prints the recorded go `output`
/// (under `fixtures/diagnostics/`) and exits 1, as go did, in `cwd`, with
/// `env` (a TOML inline table's entries) as its own environment; absolute
/// paths under `recorded_in`, where go ran, read as the repository's.
pub(crate) fn replaying(
    repo: &TestRepo,
    output: &str,
    recorded_in: Option<&str>,
    cwd: &str,
    env: &str,
) {
    let print = match recorded_in {
        Some(dir) => format!(
            "sed \\\"s#{dir}#$(git rev-parse --show-toplevel)#g\\\" '{}'",
            recording(output)
        ),
        None => format!("cat '{}'", recording(output)),
    };
    repo.config(&format!(
        "[phases.implementation]\nchecks = [ {{ name = \"build\", shell = true, command = \"{print}; exit 1\", parser = \"go\", cwd = \"{cwd}\", env = {{ {env} }} }} ]\n",
    ));
}

/// The `gwabs` recordings' repository: `app` imports
/// `example.com/shop/calc`, which two modules provide: `lib`, whose
/// `calc/sub.go` has a `//go:build` line go cannot parse, and `stale`,
/// whose `sub.go` is fine. The `go.work` at the root lists `app` and
/// `stale`; `ws/go.work` lists `app` and `lib`.
fn two_workspaces(repo: &TestRepo) {
    repo.stage("go.work", &source("gowork/stale-go.work.txt"))
        .stage("ws/go.work", &source("gowork/ws-go.work.txt"))
        .stage("app/go.mod", &source("gowork/app-go.mod.txt"))
        .stage("app/app.go", &source("go/app.go.txt"))
        .stage("lib/go.mod", &source("go/go.mod.txt"))
        .stage("lib/calc/calc.go", &source("go/calc.go.txt"))
        .stage("lib/calc/sub.go", &source("go/sub.go.txt"))
        .stage("stale/go.mod", &source("go/go.mod.txt"))
        .stage("stale/calc/calc.go", &source("go/calc.go.txt"))
        .stage("stale/calc/sub.go", &source("gowork/stale-sub.go.txt"));
}

/// The broken constraint at its line in `module`, and the import in
/// `app` that reaches it as a note.
fn broken_in(module: &str) -> Vec<(String, String)> {
    vec![
        (format!("{module}/calc/sub.go:1"), "error".to_string()),
        ("app/app.go:6".to_string(), "note".to_string()),
    ]
}

/// `GOWORK=/abs/ws/go.work` (go 1.19 and 1.24, text and `-json`): go
/// used `ws/go.work`, not the `go.work` above the check's directory, and
/// the broken file is the one in the module `ws/go.work` lists, whether
/// `GOWORK` is the check's own (`env` in phasegate.toml, which wins over
/// phasegate's environment, as it does for the check) or phasegate's.
/// Without `GOWORK` the root's `go.work` answers, and names the module go
/// did not build.
#[test]
fn gowork_naming_a_file_finds_packages_in_the_modules_it_lists() {
    for output in ["go-gowork-file-build.txt", "go124-gowork-file-test.json"] {
        let output = format!("gowork/{output}");
        // A repository a run: the same errors three runs in a row would
        // escalate.
        for (own, process, expected) in [
            (true, None, "lib"),
            (false, Some("ws/go.work"), "lib"),
            (true, Some("off"), "lib"),
            (false, None, "stale"),
        ] {
            let repo = TestRepo::new();
            two_workspaces(&repo);
            let work = repo.path().join("ws/go.work");
            let work = work.to_str().unwrap();
            let env = if own {
                format!("GOWORK = \"{work}\"")
            } else {
                String::new()
            };
            let process = process.map(|v| if v == "off" { v } else { work });
            replaying(&repo, &output, None, "app", &env);
            let process: Vec<(&str, &str)> = process.map(|v| ("GOWORK", v)).into_iter().collect();
            let (code, v) = repo.verdict_with(&[], &process);
            assert_eq!(code, 1, "{output} {env} {process:?}: {v:#}");
            assert_eq!(
                located(&v),
                broken_in(expected),
                "{output} {env} {process:?}: {v:#}"
            );
        }
    }
}

/// `GOWORK=off` (go 1.19 and 1.24): go used no workspace, and found
/// `example.com/shop` through `app/go.mod`'s `replace ... => ../lib`;
/// the root's `go.work`, which go ignored, does not place it in `stale`.
#[test]
fn gowork_off_ignores_the_go_work_above_and_follows_the_replace() {
    for (env, process, expected) in [
        ("GOWORK = \"off\"", None, "lib"),
        ("", Some("off"), "lib"),
        // The check's own empty GOWORK is go's default, whatever
        // phasegate's environment says.
        ("GOWORK = \"\"", Some("off"), "stale"),
        ("", None, "stale"),
    ] {
        let repo = TestRepo::new();
        two_workspaces(&repo);
        repo.stage("app/go.mod", &source("gowork/off-app-go.mod.txt"));
        replaying(&repo, "gowork/go-gowork-off-build.txt", None, "app", env);
        let process: Vec<(&str, &str)> = process.map(|v| ("GOWORK", v)).into_iter().collect();
        let (code, v) = repo.verdict_with(&[], &process);
        assert_eq!(code, 1, "{env} {process:?}: {v:#}");
        assert_eq!(located(&v), broken_in(expected), "{env} {process:?}: {v:#}");
    }
}

/// A `GOWORK` go cannot use (a relative path, which go refuses; a file
/// that is not there), recorded from go 1.19 and 1.24: an error that
/// says how to set it, not only the output's last line.
#[test]
fn a_gowork_go_cannot_use_says_how_to_set_it() {
    for (output, says) in [
        ("go-gowork-relative-build.txt", "by a relative path"),
        ("go124-gowork-relative-build.txt", "by a relative path"),
        ("go-gowork-missing-build.txt", "ws/nope.work: no such file"),
        (
            "go124-gowork-missing-build.txt",
            "../ws/nope.work: no such file",
        ),
    ] {
        let repo = TestRepo::new();
        two_workspaces(&repo);
        replaying(
            &repo,
            &format!("gowork/{output}"),
            Some("/tmp/rec-gw/gwabs"),
            "app",
            "",
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), 1, "{output}: {v:#}");
        let (place, severity, message) = &found[0];
        assert_eq!((place.as_str(), severity.as_str()), ("-:null", "error"));
        assert!(message.contains(says), "{output}: {message}");
        assert!(
            message.contains("set GOWORK (in the check's `env` in phasegate.toml"),
            "{output}: {message}"
        );
    }
}

/// With a real `go` on the `PATH` (skipped, saying so, where there is
/// none): `GOWORK` naming `ws/go.work`, and `GOWORK=off` with the
/// `replace`, each place the broken file in `lib`, where go found it.
#[test]
fn a_real_go_with_gowork_is_placed() {
    let Some(go) = real_go() else {
        eprintln!("skipped: no `go` on the PATH to run");
        return;
    };
    let check = |repo: &TestRepo, gowork: &str| {
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"build\", command = \"'{}' build ./...\", cwd = \"app\", parser = \"go\", env = {{ GOFLAGS = \"\", GOPROXY = \"off\", GOTOOLCHAIN = \"local\", GOWORK = \"{gowork}\" }} }} ]\n",
            go.display()
        ));
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{gowork}: {v:#}");
        assert_eq!(located(&v), broken_in("lib"), "{gowork}: {v:#}");
    };
    let repo = TestRepo::new();
    two_workspaces(&repo);
    check(&repo, repo.path().join("ws/go.work").to_str().unwrap());
    repo.stage("app/go.mod", &source("gowork/off-app-go.mod.txt"));
    check(&repo, "off");
}

/// `GOPROXY=off` keeps go from fetching a module (go 1.19 and 1.24, with
/// `-mod=mod`, `go mod tidy`, `go mod download`): the error is at the
/// import when go names its place, else at go.mod (at the `require` of a
/// module go names), and names the import or the module, that
/// GOPROXY=off forbids fetching it, and what to do. go's
/// `app/app.go:6:2: module lookup disabled by GOPROXY=off` names no
/// import: the import spec there does.
#[test]
fn a_module_goproxy_off_cannot_fetch_names_the_import_and_what_to_do() {
    for (output, go_mod, place, names) in [
        (
            "go-proxy-build.txt",
            "go.mod.txt",
            "app/app.go:6",
            "the import github.com/google/uuid",
        ),
        (
            "go124-proxy-test.txt",
            "go.mod.txt",
            "app/app.go:6",
            "the import github.com/google/uuid",
        ),
        (
            "go124-proxy-test.json",
            "go.mod.txt",
            "app/app.go:6",
            "the import github.com/google/uuid",
        ),
        (
            "go-proxy-required-build.txt",
            "proxy-go.mod.txt",
            "app/app.go:6",
            "the import github.com/google/uuid",
        ),
        (
            "go124-proxy-required-test.json",
            "proxy-go.mod.txt",
            "app/app.go:6",
            "the import github.com/google/uuid",
        ),
        (
            "go-proxy-tidy.txt",
            "go.mod.txt",
            "go.mod:null",
            "the import github.com/google/uuid",
        ),
        (
            "go124-proxy-tidy.txt",
            "go.mod.txt",
            "go.mod:null",
            "the import github.com/google/uuid",
        ),
        (
            "go-proxy-download.txt",
            "proxy-go.mod.txt",
            "go.mod:5",
            "github.com/google/uuid@v1.6.0",
        ),
    ] {
        let repo = TestRepo::new();
        repo.stage("go.mod", &source(&format!("go/{go_mod}")))
            .stage("calc/calc.go", &source("go/calc.go.txt"))
            .stage("app/app.go", &source("go/missing-app.go.txt"));
        replaying(&repo, &format!("go/{output}"), None, ".", "");
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        let found = findings(&v);
        assert_eq!(found.len(), 1, "{output}: {v:#}");
        let (at, severity, message) = &found[0];
        assert_eq!(
            (at.as_str(), severity.as_str()),
            (place, "error"),
            "{output}"
        );
        for words in [
            names,
            "GOPROXY=off forbids fetching it",
            "vendor it (`go mod vendor`",
            "add it to go.mod and go.sum",
            "allow a proxy (set GOPROXY in the check's `env`",
        ] {
            assert!(message.contains(words), "{output}: {words}: {message}");
        }
    }
}

/// A test that fails in GOPATH mode (`GO111MODULE=off`, go 1.19 and 1.24,
/// text and `-json`): go names its package `_/<absolute directory>`
/// outside any GOPATH, or by its path under a GOPATH's `src`, and the
/// failure is at the test file in that directory, not at a file of its
/// name at the check's directory.
#[test]
fn a_test_failing_in_gopath_mode_is_in_its_package_directory() {
    for (output, dir) in [
        ("go-gopath-test.txt", ""),
        ("go124-gopath-test.json", ""),
        ("go-gopath-in-test.txt", "gopath/src/example.com/shop"),
    ] {
        let repo = TestRepo::new();
        let at = |path: &str| {
            if dir.is_empty() {
                path.to_string()
            } else {
                format!("{dir}/{path}")
            }
        };
        repo.stage(&at("calc/calc.go"), &source("go/calc.go.txt"))
            .stage(&at("calc/calc_test.go"), &source("go/calc_test.go.txt"));
        let cwd = if dir.is_empty() { "." } else { dir };
        replaying(
            &repo,
            &format!("go/{output}"),
            Some("/tmp/rec-gw/gp"),
            cwd,
            "",
        );
        let (code, v) = repo.verdict(&[]);
        assert_eq!(code, 1, "{output}: {v:#}");
        assert_eq!(
            located(&v),
            [(at("calc/calc_test.go:7"), "error".to_string())],
            "{output}: {v:#}"
        );
    }
}
