//! Go: `go build`, `go vet` (text and `-json`, which exits 0 while
//! reporting), `go test` (text and `-json`, test files named relative to
//! their package; a panic located at its goroutine's first frame in the
//! project; a timeout at each test it found running, a subtest named by
//! the running tests Go 1.21+ lists; frames of a `-trimpath` build, named
//! by module path, resolved through `go.mod`; a build failure's compiler
//! lines, which Go 1.24+ prints as `build-output` events under `-json`;
//! what go says before compiling: a `//go:build` line it cannot parse,
//! also behind an import, a package its build constraints exclude, a
//! pattern that matched nothing, no module, a directory outside the
//! module; and of the module: an import no module provides with go's
//! `go get`, a missing `go.sum` entry, `go mod tidy` needed, a go older
//! than the `go` line, a `go.mod` line it cannot read, inconsistent
//! vendoring, at `go.mod`'s lines; an import vendor/ lacks; a module
//! lookup `GOPROXY=off` forbids), and golangci-lint (v1 and v2: text,
//! tab and JSON). Go counts columns in bytes.

use std::ops::Range;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

/// What the prefilter looks for in a line, built once.
static NEEDLE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b".go:"));

use super::{json_number, number, split_trailer, starts_trimmed, Found, Grammar, Out};
use crate::config::Origin;
use crate::diagnostics::{ColumnUnit, Severity};

/// `calc/calc.go:6:17: undefined: missing` (go build, go vet, golangci-lint).
/// Go takes any file name ending in `.go`, a space or a colon in it too
/// (`calc/a b.go`, `calc/x:y.go`): the file is the shortest that ends in
/// `.go` before a line number, and holds no colon followed by a blank,
/// which ends a message's head.
static POSITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s:#](?:[^:]|:\S)*?\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<message>.+)$",
    )
    .expect("the go position regex is valid")
});

/// golangci-lint's tab format: `main.go:12:2  errcheck  message`.
static TAB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:#](?:[^:]|:\S)*?\.go):(?P<line>\d+)(?::(?P<col>\d+))?\s{2,}(?P<linter>[a-z][a-z0-9-]*)\s{2,}(?P<message>.+)$")
        .expect("the golangci-lint tab regex is valid")
});

/// An indented `calc_test.go:7: message` inside a failing test's output.
/// The testing package names the file by its base name, whatever it
/// holds (`a b_test.go`, `x:y_test.go`), so no `/`; and, as above, no
/// colon followed by a blank (`got: x.go:3: ...` is a message's text).
static TEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<file>[^\s:/](?:[^:/]|:[^\s/])*?\.go):(?P<line>\d+): (?P<message>.+)$")
        .expect("the go test regex is valid")
});

/// A file go/build rejects before anything is compiled, named by its base
/// name and no line: `sub.go: parsing //go:build line: unexpected end of
/// expression` (go/build's `"%s: parsing //go:build line: %v"`) or
/// `sub.go: multiple //go:build comments`. A `// +build` line that does
/// not parse is ignored by go, never an error. The name holds no colon
/// followed by a blank: `app.go:6:2: sub.go: parsing ...` is an import's
/// place (an importer in the check's own directory), then the file.
static CONSTRAINT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s/:](?:[^/:]|:[^\s/])*?\.go): (?P<message>parsing //go:build line: .+|multiple //go:build comments)$",
    )
    .expect("the go build constraint regex is valid")
});

/// `package example.com/shop/tools: build constraints exclude all Go files
/// in /abs/tools`: a package named on the command line none of whose
/// files is built here.
static EXCLUDED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^package (?P<package>\S+): build constraints exclude all Go files in (?P<dir>.+)$")
        .expect("the go excluded package regex is valid")
});

/// `go: warning: "./..." matched no packages`.
static UNMATCHED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^go: warning: "(?P<pattern>[^"]*)" matched no packages$"#)
        .expect("the go unmatched pattern regex is valid")
});

/// `no packages to test` (or `vet`): why go exits 1 after that warning.
static NO_PACKAGES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^no packages to (?P<verb>[a-z]+)$").expect("the go no packages regex is valid")
});

/// go found no module to work in: run outside any (`go: go.mod file not
/// found in current directory or any parent directory; see 'go help
/// modules'`), up to a repository's root (`go: cannot find main module, but
/// found .git/config in /abs/repo`), or given a pattern no module holds
/// (`pattern ./...: directory prefix . does not contain main module or its
/// selected dependencies`).
static NO_MODULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:go: go\.mod file not found in current directory or any parent directory",
        r"|go: cannot find main module, but found (?P<found>\S+) in ",
        r"|pattern (?P<pattern>\S+): directory prefix (?P<prefix>\S+) does not contain ",
        r"(?:main module or its|(?P<work>modules listed in go\.work or their)) selected dependencies$)",
    ))
    .expect("the go no module regex is valid")
});

/// A directory a pattern names that go's main module does not hold, as go
/// names it from the check's directory: `directory ../tools/gen outside
/// main module or its selected dependencies` (a path outside the module's
/// tree; in a workspace, `outside modules listed in go.work or their
/// selected dependencies`), or by its package path, `main module
/// (example.com/shop) does not contain package example.com/shop/tools/gen`
/// (a directory below the module's that a `go.mod` of its own makes
/// another module).
static OUTSIDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:directory (?P<dir>.+) outside (?:main module or its|(?P<work>modules listed in go\.work or their)) selected dependencies",
        r"|main module \((?P<module>[^()\s]+)\) does not contain package (?P<package>\S+))$",
    ))
    .expect("the go outside module regex is valid")
});

/// A directory in a module that `go.work` does not list: `directory
/// other/gen is contained in a module that is not one of the workspace
/// modules listed in go.work. You can add the module to the workspace
/// using go work use other` (go 1.19; go 1.24 ends the line with `using:`
/// and prints the command on the next, indented with a tab). go 1.19
/// puts `pattern ./backend/...: ` first for a `/...` pattern.
static UNLISTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:pattern \S+: )?directory (?P<dir>.+) is contained in a module that is not one of the workspace modules listed in go\.work\. ",
        r"You can add the module to the workspace using(?::| (?P<command>go work use .+))$",
    ))
    .expect("the go unlisted module regex is valid")
});

/// A `go.work` line go cannot read, named from the check's directory (go
/// 1.24, under `go: errors parsing go.work:`: `go.work:3: unknown
/// directive: uses`, `../go.work:3: ...`) or absolutely (go 1.19:
/// `reading go.work: /abs/go.work:3: unknown directive: uses`).
static WORK_SYNTAX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:reading go\.work: )?(?P<file>(?:.*/)?go\.work):(?P<line>\d+): (?P<message>.+)$",
    )
    .expect("the go.work syntax regex is valid")
});

/// A directory `go.work` lists (`use`) with no `go.mod`, or none at all:
/// `go: cannot load module tools listed in go.work file: open
/// tools/go.mod: no such file or directory` (go 1.24, from the check's
/// directory), `go: open /abs/tools/go.mod: no such file or directory`
/// (go 1.19).
static WORK_NO_GOMOD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^go: (?:cannot load module \S.* listed in go\.work file: )?",
        r"open (?P<dir>\S.*)/go\.mod: no such file or directory$",
    ))
    .expect("the go.work missing go.mod regex is valid")
});

/// `go: module example.com/shop appears multiple times in workspace`: two
/// directories `go.work` lists declare one module path (go 1.24; go 1.19
/// says a directory is in an unlisted module instead).
static WORK_TWICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^go: module (?P<module>\S+) appears multiple times in workspace$")
        .expect("the go.work duplicate module regex is valid")
});

/// `GOWORK` naming its file by a relative path, which go refuses: `go:
/// invalid GOWORK: not an absolute path` (go 1.24), `the path provided to
/// GOWORK must be an absolute path` (go 1.19).
static WORK_RELATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:go: invalid GOWORK: not an absolute path|the path provided to GOWORK must be an absolute path)$")
        .expect("the go relative GOWORK regex is valid")
});

/// The file `GOWORK` names cannot be read: `go: reading go.work: open
/// ../ws/go.work: no such file or directory` (go 1.24, named from go's
/// directory), `reading go.work: open /abs/ws/go.work: ...` (go 1.19),
/// `read /abs/ws: is a directory`.
static WORK_UNREADABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:go: )?reading go\.work: (?:open|read) (?P<file>\S.*): (?P<why>[^:]+)$")
        .expect("the go unreadable go.work regex is valid")
});

/// What to do about a `GOWORK` go cannot use, said in every such finding.
const GOWORK_FIX: &str = "set GOWORK (in the check's `env` in phasegate.toml, which wins, or in the environment phasegate runs in) to the absolute path of a go.work file, to `off` to use no workspace, or leave it unset for the go.work above the check's directory";

/// A package pattern naming a directory that does not exist: `stat
/// /abs/x: directory not found` (`./x`, named absolutely), `pattern
/// ./x/...: lstat ./x/: no such file or directory` (`./x/...`).
static NO_DIRECTORY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:stat (?P<dir>\S.*): directory not found",
        r"|pattern (?P<pattern>\S+): lstat (?P<lstat>\S.*): no such file or directory)$",
    ))
    .expect("the go missing directory regex is valid")
});

/// A module's error go names by the module and its version, not by a
/// file: `go: github.com/google/uuid@v1.6.0: missing go.sum entry; to add
/// it:` (go 1.19; go 1.24 says `missing go.sum entry for go.mod file`),
/// its fix on the next line.
static MODULE_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^go: (?P<module>[^@\s:]+)@(?P<version>[^:\s]+): (?P<message>.+)$")
        .expect("the go module error regex is valid")
});

/// go (1.21 and later) older than a `go` line asks:
/// `go: go.mod requires go >= 1.26 (running go 1.24.4; GOTOOLCHAIN=local)`,
/// the file named from go's directory (`../go.mod`), or a required module
/// by its version (`go: example.com/dep@v1.0.0 requires go >= 1.26 (...)`).
static TOO_NEW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^go: (?P<what>\S+) requires go >= (?P<need>\S+) \((?P<running>running go [^;)]+)(?:; (?P<toolchain>[^)]+))?\)$")
        .expect("the go version regex is valid")
});

/// go 1.19's word, after a compile error, that the module's `go` line
/// names a newer Go: `note: module requires Go 1.22`.
static NOTE_REQUIRES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^note: module requires Go (?P<need>\S+)$")
        .expect("the go module version note regex is valid")
});

/// A `go.mod` line go cannot read, under `go: errors parsing go.mod:`:
/// `go.mod:3: unknown directive: requir` (go 1.24, named from go's
/// directory: `../go.mod:3:`), `/abs/go.mod:3: ...` (go 1.19).
static MOD_SYNTAX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:go: )?(?P<file>(?:.*/)?go\.mod):(?P<line>\d+): (?P<message>.+)$")
        .expect("the go.mod syntax regex is valid")
});

/// `go: inconsistent vendoring in /abs/module:`, the module's directory,
/// then a line a module, indented with a tab.
static VENDORING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^go: inconsistent vendoring in (?P<dir>.+):$")
        .expect("the go vendoring regex is valid")
});

/// A module `vendor/modules.txt` and `go.mod` disagree on:
/// `\texample.com/other@v0.1.0: is explicitly required in go.mod, but not
/// marked as explicit in vendor/modules.txt`, `\texample.com/other: is
/// replaced in go.mod, but ...`, `\texample.com/dep@v0.0.0: is marked as
/// explicit in vendor/modules.txt, but not explicitly required in go.mod`.
static VENDORED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\t(?P<module>[^@\s:]+)(?:@[^:\s]+)?: (?P<message>is .+)$")
        .expect("the go vendored module regex is valid")
});

/// go's words when it needs a module it may not fetch: `GOPROXY=off`
/// with `-mod=mod`, or a module the module cache does not hold.
const PROXY_OFF: &str = "module lookup disabled by GOPROXY=off";

/// An import no module go may fetch provides: `cannot find module
/// providing package github.com/google/uuid: module lookup disabled by
/// GOPROXY=off` (at the import, `-mod=mod`), and under `go mod tidy` the
/// same after the importing package's `imports` line, indented with a tab
/// (`\tgithub.com/google/uuid: cannot find module ...`).
static PROXY_OFF_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\t\S+: )?cannot find module providing package (?P<import>\S+): module lookup disabled by GOPROXY=off$")
        .expect("the go GOPROXY=off import regex is valid")
});

/// What to do when GOPROXY=off keeps go from fetching a module, said in
/// every such finding.
const PROXY_OFF_FIX: &str = "vendor it (`go mod vendor` where it can be fetched, then commit vendor/ and build with `-mod=vendor`), add it to go.mod and go.sum where a proxy is reachable (`go get`, then commit both, with the module cache filled by `go mod download`), or allow a proxy (set GOPROXY in the check's `env` in phasegate.toml)";

/// The message of a `GOPROXY=off` finding about `import`, the import path
/// go could not fetch the module of (go names it, or the import spec at
/// the place go names holds it).
fn proxy_off(import: &str) -> String {
    format!("{PROXY_OFF}: go needs the module that provides the import {import}, which neither the module cache nor vendor/ holds, and GOPROXY=off forbids fetching it; {PROXY_OFF_FIX}")
}

/// What go (1.19 and later) says when it could not look a module up and
/// does not name it: `go list -m all`, `go list -m <module>`, `-u`,
/// `-versions` print it once per lookup.
const PROXY_OFF_BARE: &str = "go: module lookup disabled by GOPROXY=off";

/// The finding of `count` lookups go made in a row without naming the
/// module, at `go.mod`.
fn unnamed_lookups(count: usize, at: &Range<u64>) -> Found {
    let times = if count > 1 {
        format!(" (it said so {count} times, once for each lookup)")
    } else {
        String::new()
    };
    let message = format!("{PROXY_OFF}: go had to look a module up (its version information, or under `go list -m -u` and `-versions` its newer versions), which neither the module cache nor vendor/ holds, and GOPROXY=off forbids fetching it; go's output does not say which module{times}: one the check's command names, or, for `all`, one go.mod requires (`go mod download` names each one the module cache lacks); fill the module cache where a proxy is reachable (`go mod download`), or allow a proxy (set GOPROXY in the check's `env` in phasegate.toml), which `go list -m -u` and `-versions` always ask");
    Found::new("module", Severity::Error, message)
        .at("go.mod", None, None)
        .range(at)
}

/// Whether `version`, as go prints it after a module path, is a version
/// (`v1.6.0`, a pseudo-version `v0.0.0-20240101000000-abcdef123456`), not
/// a query a command asked for (`latest`, `upgrade`, `patch`, `v1`, a
/// branch).
fn is_version(version: &str) -> bool {
    version.strip_prefix('v').is_some_and(|rest| {
        let parts: Vec<&str> = rest.splitn(3, '.').collect();
        parts.len() == 3
            && parts[..2]
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            && parts[2].starts_with(|c: char| c.is_ascii_digit())
    })
}

/// go 1.19's words, at the import, for a package vendor/ lacks under
/// `-mod=vendor` (go's default when go.mod's `go` line is 1.14 or later
/// and there is a vendor/ directory): `app/app.go:6:2: cannot find package
/// "." in:`, then the directory it looked in, indented with a tab
/// (`\t/abs/vendor/github.com/google/uuid`). GOPATH mode's `cannot find
/// package "x" in any of:` names its package already.
static VENDOR_MISSING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^cannot find package "[^"]*" in:$"#)
        .expect("the go missing vendored package regex is valid")
});

/// go 1.24's words for the same: `cannot find module providing package
/// github.com/google/uuid: import lookup disabled by -mod=vendor`.
static VENDOR_LOOKUP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^cannot find module providing package (?P<import>\S+): import lookup disabled by -mod=vendor$")
        .expect("the go vendor lookup regex is valid")
});

/// Why go looked in vendor/ and what to do, said in every finding of an
/// import vendor/ lacks.
const VENDOR_MISSING_WHY: &str = "go builds from vendor/ (under `-mod=vendor`, its default when go.mod's `go` line is 1.14 or later and a vendor/ directory exists) and looks nowhere else";

/// The message of a finding about `import`, a package vendor/ lacks.
fn vendor_missing(import: &str) -> String {
    format!("the import {import} is missing from vendor/: {VENDOR_MISSING_WHY}, and vendor/ has no {import} (not vendored yet, or its files left out of the commit, by a .gitignore say); run `go mod vendor` (after `go get {import}` where go.mod does not require its module yet) and commit vendor/ with go.mod and go.sum, or build without vendor/ (`-mod=mod` or `-mod=readonly` in the check's command or its GOFLAGS)")
}

/// The message of a package vendor/ lacks when the import spec at go's
/// place cannot be read: by the directory go looked in, as it printed it.
fn vendor_missing_dir(dir: &str) -> String {
    format!("an imported package is missing from vendor/: go looked for it in {dir}; {VENDOR_MISSING_WHY}; run `go mod vendor` (after `go get` of the import where go.mod does not require its module yet) and commit vendor/ with go.mod and go.sum, or build without vendor/ (`-mod=mod` or `-mod=readonly` in the check's command or its GOFLAGS)")
}

/// What to do about inconsistent vendoring, said in every such finding.
const VENDOR_FIX: &str = "to sync the vendor directory run `go mod vendor` and commit it (or, to build without it, give go `-mod=mod` or `-mod=readonly`)";

/// What to do about a directory outside the main module, said in every
/// such finding.
const OUTSIDE_FIX: &str = "set the check's `cwd` in phasegate.toml to the directory of the module that holds it (the one with its go.mod), or fix the pattern in the check's command";

/// What to do about a directory outside the modules `go.work` lists.
const WORK_OUTSIDE_FIX: &str = "add the module that holds it to go.work with `go work use <its directory>` (after `go mod init` there if it has no go.mod), or fix the pattern in the check's command";

/// What to do when go found no module, said in every such finding.
const SET_CWD: &str = "set the check's `cwd` in phasegate.toml to the module's directory, the one that holds its go.mod (or create a module there with `go mod init`)";

/// `FAIL\texample.com/shop/calc\t0.002s` or `ok  \t...`.
static PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:FAIL|ok)\s+(?P<package>\S+)\s").expect("the go package regex is valid")
});

/// A goroutine's stack frame: `\t/abs/calc/calc.go:6 +0x1d`.
static FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\t(?P<file>\S.*\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$")
        .expect("the go frame regex is valid")
});

/// The linter golangci-lint names after an issue: ` (errcheck)`.
static LINTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" \((?P<code>[a-z][a-z0-9-]*)\)$").expect("the golangci-lint regex is valid")
});

/// v2's closing count: `2 issues:`.
static ISSUES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+ issues?:$").expect("the golangci-lint summary regex is valid")
});

#[derive(Debug, Default)]
pub struct Go {
    /// Test failures waiting for the `FAIL <package>` line that says
    /// which directory their files are in.
    pending: Vec<Found>,
    /// The failing tests being read, outermost first: a subtest's
    /// `--- FAIL: TestSub/case_one` is indented four columns more than its
    /// parent's, and so are its lines.
    tests: Vec<String>,
    /// A test's panic being read, up to its package's `FAIL` line.
    panic: Option<Panic>,
    /// The line just read was a `--- FAIL:` header: a panic now is that
    /// test's (one later, a timeout's, is no test's in particular).
    after_header: bool,
    /// The package of the last `# example.com/shop/calc` header, up to its
    /// `FAIL` line: go 1.24's `go test` names a package it could not set up
    /// so, and the file a setup error names is in its directory.
    header: Option<String>,
    /// The directory of the last pattern go warned matched no packages,
    /// when it names one.
    unmatched: Option<String>,
    /// A directory in a module `go.work` does not list, and where go said
    /// so, while go 1.24's next line may give the `go work use` command.
    awaiting_use: Option<(String, Range<u64>)>,
    /// A finding whose message ends as go's do before the command that
    /// fixes it, which go prints on the next line, indented with a tab
    /// (`...; to add it:`, then `\tgo get github.com/google/uuid`).
    awaiting_fix: Option<Found>,
    /// The module directory of an inconsistent vendoring go is listing
    /// the modules of, and whether it listed one.
    vendoring: Option<(String, bool, Range<u64>)>,
    /// An import vendor/ lacks, while go's next line may name the
    /// directory it looked in.
    awaiting_dir: Option<Found>,
    /// Lookups in a row go could not make and did not name the module
    /// of (`go: module lookup disabled by GOPROXY=off`), and where.
    lookups: Option<(usize, Range<u64>)>,
}

/// The package a `# ...` header or a `build-output` event's `ImportPath`
/// names: `example.com/shop/calc` for `example.com/shop/calc
/// [example.com/shop/calc.test]`; none for a pattern (`./...`).
fn header_package(text: &str) -> Option<String> {
    let package = text.split(' ').next().unwrap_or(text);
    (!package.is_empty() && !package.starts_with('.')).then(|| package.to_string())
}

/// The directory a relative pattern names, as go takes it from the
/// check's directory: `.` for `./...`, `backend/calc` for
/// `./backend/calc/...`; none for an import path (`example.com/...`).
fn pattern_dir(pattern: &str) -> Option<String> {
    if !(pattern == "." || pattern.starts_with("./") || pattern.starts_with("../")) {
        return None;
    }
    let dir = match pattern.strip_suffix("/...") {
        Some(dir) => dir,
        // `./cmd/x...`: names beginning so, no one directory.
        None if pattern.contains("...") => return None,
        None => pattern,
    };
    Some(dir.to_string())
}

/// The finding of a file whose build constraint go cannot parse
/// (`CONSTRAINT` matched `text`), in `package` when go says which: at the
/// file's `//go:build` line, with go's words; a file without one is not
/// the file go meant, and the finding keeps the name go printed.
fn constraint(
    c: &regex::Captures<'_>,
    text: &str,
    package: Option<String>,
    at: &Range<u64>,
) -> Found {
    let anchor = super::Anchor {
        words: vec!["//go:build".to_string()],
        message: Some(c["message"].to_string()),
        required: true,
        ..super::Anchor::default()
    };
    Found {
        base_name: package.is_none(),
        package,
        ..setup(Severity::Error, text, Some(&c["file"]), at).anchor(anchor)
    }
}

/// A finding of how go was set up to run (the module, the workspace, the
/// patterns), not of the code: at the directory or file `place` names,
/// where there is one.
fn setup(
    severity: Severity,
    message: impl Into<String>,
    place: Option<&str>,
    at: &Range<u64>,
) -> Found {
    let found = Found::new("setup", severity, message).range(at);
    match place {
        Some(place) => found.at(place, None, None),
        None => found,
    }
}

/// The finding at `dir`, a directory outside the module the check runs
/// in (outside the modules `go.work` lists, in a `workspace`), which
/// `named_by` says what names.
fn outside_directory(dir: &str, named_by: &str, workspace: bool, at: &Range<u64>) -> Found {
    let message = if workspace {
        format!(
            "outside the modules go.work lists: {named_by}, and in a workspace go builds, tests and vets only the packages of the modules go.work's `use` lines name; {WORK_OUTSIDE_FIX}"
        )
    } else {
        format!(
            "outside the Go module the check runs in: {named_by}, and go builds, tests and vets only the packages of the module whose go.mod is in the check's directory or above it; {OUTSIDE_FIX}"
        )
    };
    setup(Severity::Error, message, Some(dir), at)
}

/// The finding of a directory `OUTSIDE` matched, at that directory: as go
/// printed it, relative to the check's directory, or as the package
/// directory of the module's path that go names.
fn outside_module(c: &regex::Captures<'_>, at: &Range<u64>) -> Found {
    if let Some(dir) = c.name("dir") {
        return outside_directory(
            dir.as_str(),
            "a pattern of the check's command names this directory",
            c.name("work").is_some(),
            at,
        );
    }
    let (module, package) = (&c["module"], &c["package"]);
    let message = format!(
        "outside the Go module the check runs in: this directory is below the module {module}'s, but a go.mod in it or between them makes it another module, so go has no package {package}; {OUTSIDE_FIX}"
    );
    // The package's directory, found through the module's go.mod.
    Found {
        package: Some(package.to_string()),
        ..setup(Severity::Error, message, Some("."), at)
    }
}

/// The finding at `dir`, a directory in a module `go.work` does not list,
/// with the `go work use` command go gave, when it gave one.
fn unlisted_module(dir: &str, command: Option<&str>, at: &Range<u64>) -> Found {
    let add = command.map_or_else(
        || "`go work use <the module's directory>`".to_string(),
        |command| format!("`{command}`"),
    );
    let message = format!(
        "in a module go.work does not list: this directory's module is not among go.work's `use` lines, so go does not build, test or vet its packages in this workspace; add it to go.work with {add}, or fix the pattern in the check's command"
    );
    setup(Severity::Error, message, Some(dir), at)
}

/// Whether go prints the command that fixes what `message` says on the
/// next line (`...; to add it:`, `...; to add:`, `...; to update it:`).
fn fix_follows(message: &str) -> bool {
    message.ends_with("; to add it:")
        || message.ends_with("; to add:")
        || message.ends_with("; to update it:")
}

/// A finding in `file`, a `go.mod` as go named it (from its directory) or,
/// named `go.mod` where go named none, the one go found from the check's
/// directory up; at the line of `directive` (and of `module`'s entry).
fn in_go_mod(
    file: &str,
    directive: &'static str,
    module: Option<&str>,
    severity: Severity,
    message: String,
    at: &Range<u64>,
) -> Found {
    Found {
        go_mod: Some(super::GoModEntry {
            directive,
            module: module.map(str::to_string),
        }),
        ..Found::new("module", severity, message)
            .at(file, None, None)
            .range(at)
    }
}

/// The finding of a `go.mod` line go cannot read (`MOD_SYNTAX` matched),
/// at that line; a `go` line or a directive only a newer go reads says
/// so.
fn mod_syntax(c: &regex::Captures<'_>, at: &Range<u64>) -> Found {
    let what = &c["message"];
    let newer = what
        .strip_prefix("invalid go version '")
        .and_then(|rest| rest.split('\'').next())
        .is_some_and(|version| version.split('.').count() == 3)
        || what == "unknown directive: toolchain"
        || what == "unknown directive: godebug";
    let mut message = format!("go cannot read go.mod: {what}");
    if newer {
        message.push_str("; go.mod was written for a newer Go than the one that ran the check (Go 1.21 and later write a `go` line such as `go 1.22.0`, and `toolchain` and `godebug` lines, which older go cannot read): run the check with the Go version go.mod's `go` line names, or newer");
    }
    Found::new("module", Severity::Error, message)
        .at(&c["file"], number(&c["line"]), None)
        .range(at)
}

/// The finding of a go older than a `go` line asks (`TOO_NEW` matched):
/// at the `go` line of the `go.mod` (or `go.work`) go names, or at the
/// requirement of the module go names by its version.
fn too_new(c: &regex::Captures<'_>, at: &Range<u64>) -> Found {
    let (what, need, running) = (&c["what"], &c["need"], &c["running"]);
    let toolchain = c
        .name("toolchain")
        .map_or_else(String::new, |t| format!("; {}", t.as_str()));
    let fetch = if toolchain.contains("GOTOOLCHAIN=local") {
        " (GOTOOLCHAIN=local keeps go from fetching a newer toolchain itself)"
    } else {
        ""
    };
    if what.ends_with("go.mod") || what.ends_with("go.work") {
        let message = format!(
            "{what} requires go >= {need} ({running}{toolchain}): the go that ran the check is older than the file's `go` line asks; run the check with Go {need} or newer{fetch}"
        );
        return in_go_mod(what, "go", None, Severity::Error, message, at);
    }
    let module = what.split('@').next().unwrap_or(what);
    let message = format!(
        "{what} requires go >= {need} ({running}{toolchain}): a module go.mod requires needs a newer go than the one that ran the check; run the check with Go {need} or newer{fetch}, or require a version of {module} that an older Go builds"
    );
    in_go_mod(
        "go.mod",
        "require",
        Some(module),
        Severity::Error,
        message,
        at,
    )
}

/// The finding of a module `vendor/modules.txt` and `go.mod` disagree on
/// (`VENDORED` matched), in the module at `dir`: at its line of
/// `vendor/modules.txt` when that file lists what `go.mod` does not, else
/// at its `require` (or `replace`) in `go.mod`.
fn vendored(dir: &str, c: &regex::Captures<'_>, line: &str, at: &Range<u64>) -> Found {
    let said = &c["message"];
    let (file, directive) = if said.starts_with("is marked as") {
        ("vendor/modules.txt", "#")
    } else if said.starts_with("is replaced") {
        ("go.mod", "replace")
    } else {
        ("go.mod", "require")
    };
    let message = format!("inconsistent vendoring: {}; {VENDOR_FIX}", line.trim());
    in_go_mod(
        &format!("{dir}/{file}"),
        directive,
        Some(&c["module"]),
        Severity::Error,
        message,
        at,
    )
}

/// The finding of an inconsistent vendoring in the module at `dir` when go
/// listed no module of it: at its `go.mod`.
fn vendoring(dir: &str, at: &Range<u64>) -> Found {
    let message =
        format!("inconsistent vendoring: vendor/modules.txt does not match go.mod; {VENDOR_FIX}");
    Found::new("module", Severity::Error, message)
        .at(&format!("{dir}/go.mod"), None, None)
        .range(at)
}

/// A panic: its first line, then the goroutine's stack, innermost call
/// first (`example.com/shop/calc.Div(...)`, then `\t/abs/calc/calc.go:6`).
#[derive(Debug)]
struct Panic {
    found: Found,
    /// The function of the frame whose file line comes next.
    function: Option<String>,
    stack: Stack,
    /// `panic: test timed out after 1s`: the panicking goroutine is the
    /// alarm's, and the tests that ran too long are in the others.
    timeout: bool,
    /// A timeout's goroutine's last frame read: its function, file, line.
    last: Option<(Option<String>, String, u32)>,
    /// Whether that goroutine's innermost call is `testing.(*T).Run`: a
    /// test waiting for its subtest, which is the one running (`None`
    /// before its first call is read).
    waiting: Option<bool>,
    /// A timeout's findings, one per test found running, at its frame.
    running: Vec<Found>,
    /// The tests Go 1.21+ lists under a timeout's first line as running
    /// (`\trunning tests:`, then `\t\tTestSlow/inner (1s)`).
    listed: Vec<String>,
}

impl Panic {
    /// What the panic reports: a timeout's running tests when it found
    /// any, else the panic at its first frame in the project.
    fn into_found(self) -> Vec<Found> {
        if self.running.is_empty() {
            vec![self.found]
        } else {
            self.running
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// Before `goroutine 6 [running]:`.
    Before,
    /// In the panicking goroutine's frames.
    In,
    /// Past them: other goroutines' stacks are not the panic's.
    After,
}

/// Where a line is indented to, a tab counting as four columns (Go before
/// 1.14 indented a test's lines with one).
fn indent(line: &str) -> usize {
    line.bytes()
        .take_while(u8::is_ascii_whitespace)
        .map(|b| if b == b'\t' { 4 } else { 1 })
        .sum()
}

/// The package of a stack frame's function: `testing` for
/// `testing.tRunner.func1.2({...})`, `example.com/shop/calc` for
/// `example.com/shop/calc.(*T).Div(...)`; none for the builtin `panic(...)`.
fn frame_package(function: &str) -> Option<&str> {
    let function = function.strip_prefix("created by ").unwrap_or(function);
    let head = function.split(['(', '[']).next().unwrap_or(function);
    let name = head.rfind('/').map_or(0, |i| i + 1);
    let dot = head[name..].find('.')?;
    Some(&head[..name + dot])
}

/// Whether a frame is the project's: not the standard library's (a package
/// path without a dot, its file under `GOROOT/src/<package>/`, or named
/// `<package>/file.go` by a `-trimpath` build), not a dependency's (the
/// module cache, `vendor/`, a `-trimpath` build's `module@version/`), not
/// the runtime's `panic`, not the generated `_testmain.go`.
fn in_project(function: Option<&str>, file: &str) -> bool {
    if file.contains("/pkg/mod/")
        || file.contains("/vendor/")
        || file == "_testmain.go"
        || (!file.starts_with('/') && file.contains('@'))
    {
        return false;
    }
    match function.and_then(frame_package) {
        None => false,
        Some(package) => {
            package.contains('.')
                || !standard(package)
                || !(file.contains(&format!("/src/{package}/"))
                    || file.starts_with(&format!("{package}/")))
        }
    }
}

/// The first elements of the standard library's package paths (and of the
/// Go toolchain's own, `cmd`, and `vendor` inside GOROOT). A package path
/// without a dot outside them is a module's own, `module shop` here: under
/// `-trimpath` its frames look like the standard library's otherwise.
const STANDARD: &[&str] = &[
    "archive",
    "bufio",
    "builtin",
    "bytes",
    "cmd",
    "cmp",
    "compress",
    "container",
    "context",
    "crypto",
    "database",
    "debug",
    "embed",
    "encoding",
    "errors",
    "expvar",
    "flag",
    "fmt",
    "go",
    "hash",
    "html",
    "image",
    "index",
    "internal",
    "io",
    "iter",
    "log",
    "maps",
    "math",
    "mime",
    "net",
    "os",
    "path",
    "plugin",
    "reflect",
    "regexp",
    "runtime",
    "slices",
    "sort",
    "strconv",
    "strings",
    "structs",
    "sync",
    "syscall",
    "testing",
    "text",
    "time",
    "unicode",
    "unique",
    "unsafe",
    "vendor",
    "weak",
];

/// Whether `package` is the standard library's by its first element.
fn standard(package: &str) -> bool {
    let first = package.split('/').next().unwrap_or(package);
    STANDARD.contains(&first)
}

/// A frame's file as a finding's place: an absolute path as printed; a
/// `-trimpath` build's `example.com/shop/calc/calc.go` as the file
/// `calc.go` of the package `example.com/shop/calc`, which the extractor
/// finds through `go.mod`.
fn frame_place(found: Found, file: &str, line: Option<u32>) -> Found {
    match file.rsplit_once('/') {
        Some((package, base)) if !file.starts_with('/') && !package.is_empty() => Found {
            package: Some(package.to_string()),
            ..found.at(base, line, None)
        },
        _ => found.at(file, line, None),
    }
}

/// The test a stack frame's function is: `TestSlow` for
/// `example.com/shop/slow.TestSlow(0xc000098680?)` and for its closure
/// `example.com/shop/slow.TestSlow.func1()`.
fn frame_test(function: &str) -> Option<String> {
    let head = function.split('(').next().unwrap_or(function);
    let name = &head[head.rfind('/').map_or(0, |i| i + 1)..];
    let test = name.split('.').nth(1)?;
    test.starts_with("Test").then(|| test.to_string())
}

/// The subtest a timeout's goroutine runs, by the tests Go 1.21+ lists as
/// running: a frame of a closure, `example.com/shop/slowsub.TestSlow.func1`,
/// runs a subtest of `TestSlow`; it is the one listed under `TestSlow/`
/// with no subtest of its own listed (a parent waits in `t.Run` for its
/// subtest), when there is exactly one such (parallel subtests' closures
/// cannot be told apart).
fn listed_subtest(function: &str, listed: &[String]) -> Option<String> {
    let test = frame_test(function)?;
    let head = function.split('(').next().unwrap_or(function);
    let name = &head[head.rfind('/').map_or(0, |i| i + 1)..];
    if name.split('.').count() <= 2 {
        // The test function itself, not a closure of it.
        return None;
    }
    let under = |parent: &str, child: &str| {
        child
            .strip_prefix(parent)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    let mut leaves = listed
        .iter()
        .filter(|n| under(&test, n) && !listed.iter().any(|m| under(n, m)));
    let leaf = leaves.next()?;
    leaves.next().is_none().then(|| leaf.clone())
}

/// A compiler's, go vet's or golangci-lint's located line:
/// `calc/calc.go:6:17: undefined: missing`, as printed or as a
/// `build-output` event of `go test -json` (Go 1.24+) carries it.
fn compiler_line(line: &str, at: &Range<u64>, out: &mut Out) {
    // go vet (1.19) prints a package's type errors as `vet: file:line:col: message`.
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    if ISSUES.is_match(line) {
        // v2's closing count, not an issue.
        return;
    }
    if line.ends_with(": too many errors") {
        // The compiler stops after ten errors and says so at the last
        // one's place (`calc/calc.go:13:6: too many errors`): not an
        // error of its own, the ten before it are the findings.
        return;
    }
    if let Some(c) = super::caps(&TAB, line) {
        out.push(
            Found::new("golangci-tab", Severity::Error, &c["message"])
                .at(
                    &c["file"],
                    number(&c["line"]),
                    super::group_number(&c, "col"),
                )
                .code(Some(c["linter"].to_string()))
                .tool("golangci-lint")
                .unit(ColumnUnit::Byte)
                .range(at),
        );
        return;
    }
    if let Some(c) = super::caps(&POSITION, line) {
        let (message, linter) = split_trailer(&c["message"], &LINTER);
        let mut found = Found::new("text", Severity::Error, message)
            .at(
                &c["file"],
                number(&c["line"]),
                super::group_number(&c, "col"),
            )
            .unit(ColumnUnit::Byte)
            .range(at);
        if linter.is_some() {
            found = found.code(linter).tool("golangci-lint");
            found.dialect = "golangci-text";
        } else if found.message == PROXY_OFF {
            // go names the import's place alone: the import spec there
            // names what it could not fetch.
            found.message = format!("{PROXY_OFF}: go needs the module that provides the package imported here, which neither the module cache nor vendor/ holds, and GOPROXY=off forbids fetching it; {PROXY_OFF_FIX}");
            found.import_message = Some(proxy_off);
        } else if let Some(c) = super::caps(&PROXY_OFF_IMPORT, &found.message) {
            found.message = proxy_off(&c["import"]);
        } else if let Some(c) = super::caps(&VENDOR_LOOKUP, &found.message) {
            found.message = vendor_missing(&c["import"]);
            found.dialect = "vendor";
        } else if VENDOR_MISSING.is_match(&found.message) {
            // go 1.19 names the import `"."`; the directory it looked in
            // comes on the next line, and the import spec at its place
            // names the import.
            found.message = vendor_missing_dir("vendor/");
            found.import_message = Some(vendor_missing);
            found.dialect = "vendor";
        }
        out.push(found);
    }
}

impl Go {
    /// A line go prints when it cannot set a package up, before anything
    /// is compiled: a `# package` header, a file whose build constraint
    /// does not parse, a package none of whose files is built, a pattern
    /// that matched nothing, no module. `package`: the package a `go test
    /// -json` event says the line is about. Whether the line was one.
    fn setup_line(
        &mut self,
        line: &str,
        package: Option<String>,
        at: &Range<u64>,
        out: &mut Out,
    ) -> bool {
        if self.lookup_line(line, at, out) {
            return true;
        }
        if let Some((dir, from)) = self.awaiting_use.take() {
            let command = line
                .strip_prefix('\t')
                .filter(|command| command.starts_with("go work use "));
            let end = if command.is_some() { at.end } else { from.end };
            out.push(unlisted_module(&dir, command, &(from.start..end)));
            if command.is_some() {
                return true;
            }
        }
        if let Some((dir, listed, from)) = self.vendoring.take() {
            if line.is_empty() || line.starts_with('\t') {
                // A module's line, or go's advice below them.
                let listed = match super::caps(&VENDORED, line) {
                    Some(c) => {
                        out.push(vendored(&dir, &c, line, at));
                        true
                    }
                    None => listed,
                };
                self.vendoring = Some((dir, listed, from));
                return true;
            }
            if !listed {
                out.push(vendoring(&dir, &from));
            }
        }
        if let Some(header) = line.strip_prefix("# ") {
            self.header = header_package(header);
            return true;
        }
        if let Some(found) = Self::module_line(line, at) {
            if fix_follows(&found.message) {
                self.awaiting_fix = Some(found);
            } else {
                out.push(found);
            }
            return true;
        }
        if let Some(c) = super::caps(&VENDORING, line) {
            self.vendoring = Some((c["dir"].to_string(), false, at.clone()));
            return true;
        }
        if line.starts_with("go: errors parsing ") && line.ends_with("go.mod:") {
            // Its lines follow, each with its place.
            return true;
        }
        if let Some(c) = super::caps(&CONSTRAINT, line) {
            let package = package.or_else(|| self.header.clone());
            out.push(constraint(&c, line, package, at));
            return true;
        }
        if memchr::memmem::find(line.as_bytes(), b"//go:build").is_some() {
            // A package reached through an import: go prints the import's
            // place before the file's name (`app/app.go:6:2: sub.go:
            // parsing //go:build line: ...`). The broken file is the
            // finding; the import, a note. The `# example.com/shop/app`
            // header names the importer, not the broken file's package,
            // which only a `-json` event's `ImportPath` gives.
            if let Some(p) = super::caps(&POSITION, line) {
                if let Some(c) = super::caps(&CONSTRAINT, &p["message"]) {
                    let mut found = constraint(&c, &p["message"], package, at);
                    if found.package.is_none() {
                        // The text names the importer only: the package is
                        // the path its import spec there holds.
                        if let Some(line) = number(&p["line"]) {
                            found.import_site = Some(super::ImportSite {
                                file: p["file"].to_string(),
                                line,
                                column: super::group_number(&p, "col").unwrap_or(1),
                            });
                        }
                    }
                    out.push(found);
                    out.push(
                        Found::new(
                            "setup",
                            Severity::Note,
                            format!(
                                "the package imported here cannot be built: {}: {}",
                                &c["file"], &c["message"]
                            ),
                        )
                        .at(
                            &p["file"],
                            number(&p["line"]),
                            super::group_number(&p, "col"),
                        )
                        .unit(ColumnUnit::Byte)
                        .range(at),
                    );
                    return true;
                }
            }
        }
        if let Some(c) = super::caps(&EXCLUDED, line) {
            let message = format!(
                "build constraints exclude all Go files of package {}: none of its .go files is built for this GOOS, GOARCH and these build tags (each has a //go:build line or a _GOOS or _GOARCH file name that rules it out); fix the constraints, or leave the directory out of the command's patterns",
                &c["package"]
            );
            out.push(setup(Severity::Error, message, Some(&c["dir"]), at));
            return true;
        }
        if let Some(c) = super::caps(&UNMATCHED, line) {
            let pattern = &c["pattern"];
            let dir = pattern_dir(pattern);
            let message = format!(
                "\"{pattern}\" matched no packages: go found no Go package there (no .go files, or build constraints exclude every one), and checked nothing"
            );
            out.push(setup(Severity::Warning, message, dir.as_deref(), at));
            self.unmatched = dir;
            return true;
        }
        if let Some(c) = super::caps(&NO_PACKAGES, line) {
            let message = format!(
                "no packages to {}: the command's patterns matched no Go package",
                &c["verb"]
            );
            out.push(setup(
                Severity::Error,
                message,
                self.unmatched.as_deref(),
                at,
            ));
            return true;
        }
        if let Some(c) = super::caps(&OUTSIDE, line) {
            out.push(outside_module(&c, at));
            return true;
        }
        if let Some(c) = super::caps(&UNLISTED, line) {
            match c.name("command") {
                Some(command) => out.push(unlisted_module(&c["dir"], Some(command.as_str()), at)),
                None => self.awaiting_use = Some((c["dir"].to_string(), at.clone())),
            }
            return true;
        }
        if line == "go: errors parsing go.work:" {
            // Its lines follow, each with its place.
            return true;
        }
        if let Some(c) = super::caps(&WORK_SYNTAX, line) {
            let message = format!("go cannot read go.work: {}", &c["message"]);
            out.push(
                Found::new("setup", Severity::Error, message)
                    .at(&c["file"], number(&c["line"]), None)
                    .range(at),
            );
            return true;
        }
        if WORK_RELATIVE.is_match(line) {
            let message = format!(
                "GOWORK names its go.work by a relative path, which go refuses: {GOWORK_FIX}"
            );
            out.push(setup(Severity::Error, message, None, at));
            return true;
        }
        if let Some(c) = super::caps(&WORK_UNREADABLE, line) {
            let message = format!(
                "go cannot read the go.work file GOWORK names, {}: {}; {GOWORK_FIX}",
                &c["file"], &c["why"]
            );
            out.push(setup(Severity::Error, message, None, at));
            return true;
        }
        if let Some(c) = super::caps(&WORK_NO_GOMOD, line) {
            let message = "go.work lists this directory as a module (a `use` line), and go found no go.mod in it, or no directory: create the module there with `go mod init`, or take its `use` line out of go.work";
            out.push(setup(Severity::Error, message, Some(&c["dir"]), at));
            return true;
        }
        if let Some(c) = super::caps(&WORK_TWICE, line) {
            let message = format!(
                "go.work lists two modules with the same module path {}: the go.mod in each directory its `use` lines name must declare a path of its own; change the `module` line of one, or take one of the directories out of go.work",
                &c["module"]
            );
            out.push(setup(Severity::Error, message, None, at));
            return true;
        }
        if let Some(c) = super::caps(&NO_DIRECTORY, line) {
            let what = match (c.name("pattern"), c.name("lstat")) {
                (Some(pattern), Some(dir)) => format!(
                    "the pattern `{}` matches nothing: there is no directory {}",
                    pattern.as_str(),
                    dir.as_str()
                ),
                _ => format!(
                    "a package pattern of the check's command matches nothing: there is no directory {}",
                    &c["dir"]
                ),
            };
            let message = format!(
                "{what} where the check runs; fix the pattern in the check's command, or the check's `cwd` in phasegate.toml if it runs in the wrong directory"
            );
            out.push(setup(Severity::Error, message, None, at));
            return true;
        }
        if let Some(c) = super::caps(&NO_MODULE, line) {
            if let (Some(pattern), Some(prefix)) = (c.name("pattern"), c.name("prefix")) {
                // A prefix other than the check's own directory: a
                // directory that is not in the module, if there is one.
                let workspace = c.name("work").is_some();
                if prefix.as_str() != "." {
                    let named_by =
                        format!("the pattern `{}` names this directory", pattern.as_str());
                    out.push(outside_directory(prefix.as_str(), &named_by, workspace, at));
                    return true;
                }
                if workspace {
                    // go matches a workspace's `./...` only within one
                    // module, never across them from go.work's directory.
                    let message = format!(
                        "the pattern `{}` names the check's directory, which is in none of the modules go.work lists: in a workspace go matches such a pattern only inside one module, not across them; set the check's `cwd` in phasegate.toml to a module's directory, or name each module's packages in the check's command (`./backend/...`)",
                        pattern.as_str()
                    );
                    out.push(setup(Severity::Error, message, None, at));
                    return true;
                }
            }
            let looked = if let Some(pattern) = c.name("pattern") {
                format!(
                    "go found no module holding the directory the pattern {} names",
                    pattern.as_str()
                )
            } else if let Some(found) = c.name("found") {
                format!(
                    "go found no go.mod in the check's directory or any directory above it up to the one holding {} (the repository's root)",
                    found.as_str()
                )
            } else {
                "go found no go.mod in the check's directory or any directory above it".to_string()
            };
            out.push(setup(
                Severity::Error,
                format!("no Go module: {looked}; {SET_CWD}"),
                None,
                at,
            ));
            return true;
        }
        false
    }

    /// A line of go about the module, its `go.mod` and `go.sum`, that names
    /// no Go file: its finding, at `go.mod`.
    fn module_line(line: &str, at: &Range<u64>) -> Option<Found> {
        if let Some(c) = super::caps(&TOO_NEW, line) {
            return Some(too_new(&c, at));
        }
        if let Some(c) = super::caps(&MOD_SYNTAX, line) {
            return Some(mod_syntax(&c, at));
        }
        if let Some(c) = super::caps(&PROXY_OFF_IMPORT, line) {
            // go names the importing package, on the line before, and
            // no file: the module's go.mod.
            return Some(
                Found::new("module", Severity::Error, proxy_off(&c["import"]))
                    .at("go.mod", None, None)
                    .range(at),
            );
        }
        if let Some(c) = super::caps(&MODULE_ERROR, line) {
            let (module, version) = (&c["module"], &c["version"]);
            let message = if &c["message"] == PROXY_OFF && !is_version(version) {
                format!("{module}@{version}: {PROXY_OFF}: go looked up the version `{version}` of {module}, a query the check's command asked for (`go list -m`, `go get` or `go install` with `@{version}`), which only a module proxy or the module's origin can answer, and GOPROXY=off forbids asking; ask for a version instead (`{module}@v1.2.3`, one the module cache holds, such as the one go.mod requires), or allow a proxy (set GOPROXY in the check's `env` in phasegate.toml)")
            } else if &c["message"] == PROXY_OFF {
                format!("{module}@{version}: {PROXY_OFF}: go.mod requires this module, which neither the module cache nor vendor/ holds, and GOPROXY=off forbids fetching it; {PROXY_OFF_FIX}")
            } else {
                format!("{module}@{version}: {}", &c["message"])
            };
            return Some(in_go_mod(
                "go.mod",
                "require",
                Some(&c["module"]),
                Severity::Error,
                message,
                at,
            ));
        }
        if line == "go: updates to go.mod needed; to update it:" {
            let message = "updates to go.mod needed: it lacks or misstates requirements the build needs, and go does not change it under -mod=readonly, its default; to update it:";
            return Some(
                Found::new("module", Severity::Error, message)
                    .at("go.mod", None, None)
                    .range(at),
            );
        }
        if let Some(c) = super::caps(&NOTE_REQUIRES, line) {
            let need = &c["need"];
            let message = format!(
                "module requires Go {need}: go.mod's `go` line names a newer Go than the one that ran the check, and the errors above may come from what Go {need} added; run the check with Go {need} or newer"
            );
            return Some(in_go_mod("go.mod", "go", None, Severity::Note, message, at));
        }
        None
    }

    /// The command go prints under a message that ends before it (`\tgo
    /// get github.com/google/uuid`), put at the end of that message, which
    /// then goes out; whether `line` was that command.
    fn fix_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        let Some(mut found) = self.awaiting_fix.take() else {
            return false;
        };
        let command = line.strip_prefix('\t').filter(|c| c.starts_with("go "));
        if let Some(command) = command {
            found.message = format!(
                "{} `{command}` (then commit what it changes in go.mod and go.sum)",
                found.message
            );
            found.range.end = at.end;
        }
        out.push(found);
        command.is_some()
    }

    /// A located line just read (`app/app.go:6:2: no required module
    /// provides package ...; to add it:`) whose fix comes next waits for it.
    fn await_fix(&mut self, before: usize, out: &mut Out) {
        if out.found.len() <= before {
            return;
        }
        if out.found.last().is_some_and(|f| fix_follows(&f.message)) {
            self.awaiting_fix = out.found.pop();
        } else if out
            .found
            .last()
            .is_some_and(|f| f.dialect == "vendor" && f.import_message.is_some())
        {
            self.awaiting_dir = out.found.pop();
        }
    }

    /// The directory go looked in for an import vendor/ lacks
    /// (`\t/abs/vendor/github.com/google/uuid`), put in that finding,
    /// which then goes out; whether `line` was that directory.
    fn dir_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        let Some(mut found) = self.awaiting_dir.take() else {
            return false;
        };
        let dir = line.strip_prefix('\t').filter(|d| !d.trim().is_empty());
        if let Some(dir) = dir {
            found.message = vendor_missing_dir(dir.trim());
            found.range.end = at.end;
        }
        out.push(found);
        dir.is_some()
    }

    /// A line that says go could not look a module up and names none:
    /// counted with those right before it into one finding, which goes
    /// out at the first other line; whether `line` was one.
    fn lookup_line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) -> bool {
        if line == PROXY_OFF_BARE {
            let (count, from) = self.lookups.take().unwrap_or((0, at.clone()));
            self.lookups = Some((count + 1, from.start..at.end));
            return true;
        }
        if let Some((count, from)) = self.lookups.take() {
            out.push(unnamed_lookups(count, &from));
        }
        false
    }

    /// A test's output line: a `--- FAIL:` header or a located message.
    /// `json`: the package and the test `go test -json` says the line is
    /// from.
    fn test_output(
        &mut self,
        line: &str,
        at: &Range<u64>,
        json: Option<(&str, Option<&str>)>,
        out: &mut Out,
    ) {
        let depth = indent(line) / 4;
        if let Some(test) = line.trim_start().strip_prefix("--- FAIL: ") {
            self.tests.truncate(depth);
            if let Some(name) = test.split_whitespace().next() {
                self.tests.push(name.to_string());
            }
            self.after_header = true;
            return;
        }
        let Some(c) = super::caps(&TEST_LINE, line) else {
            return;
        };
        let test = match json {
            Some((_, test)) => test.map(str::to_string),
            // A test's lines are indented one level more than its header.
            None => self
                .tests
                .get(depth.saturating_sub(1))
                .or(self.tests.last())
                .cloned(),
        };
        let found = Found::new(
            if json.is_some() { "test-json" } else { "test" },
            Severity::Error,
            &c["message"],
        )
        .at(&c["file"], number(&c["line"]), None)
        .test(test)
        .origin(Origin::Test)
        .range(at);
        match json {
            Some((package, _)) => out.push(Found {
                package: Some(package.to_string()),
                ..found
            }),
            None => self.hold(found),
        }
    }

    /// Keeps a text finding until its package's `FAIL` line. Bounded: the
    /// extractor keeps no more than its cap anyway.
    fn hold(&mut self, found: Found) {
        if self.pending.len() < crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK {
            self.pending.push(found);
        }
    }

    /// `panic: runtime error: index out of range [5] with length 1
    /// [recovered]` starts a panic; its message is the first line, without
    /// the testing package's ` [recovered]`.
    fn open_panic(&mut self, line: &str, test: Option<String>, json: bool, at: &Range<u64>) {
        let message = match line.find(" [recovered") {
            Some(i) if line.ends_with(']') => &line[..i],
            _ => line,
        };
        let found = Found::new(
            if json { "panic-json" } else { "panic" },
            Severity::Error,
            message,
        )
        .test(test)
        .origin(Origin::Test)
        .range(at);
        self.panic = Some(Panic {
            found,
            function: None,
            stack: Stack::Before,
            timeout: message.starts_with("panic: test timed out after "),
            last: None,
            waiting: None,
            running: Vec::new(),
            listed: Vec::new(),
        });
    }

    /// A line of a timeout's stacks: each goroutine that runs a test of
    /// the project (its frame just above `testing.tRunner`) and is not
    /// waiting for a subtest gives a finding there.
    fn timeout_line(panic: &mut Panic, line: &str, at: &Range<u64>) {
        if line.is_empty() || line.starts_with("goroutine ") {
            panic.last = None;
            panic.function = None;
            panic.waiting = None;
            return;
        }
        if let Some(c) = super::caps(&FRAME, line) {
            if let Some(l) = number(&c["line"]) {
                panic.last = Some((panic.function.take(), c["file"].to_string(), l));
            }
            return;
        }
        if let Some(entry) = line.strip_prefix("\t\t") {
            if let Some((test, _duration)) = entry.rsplit_once(" (") {
                if panic.listed.len() < crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK {
                    panic.listed.push(test.to_string());
                }
            }
            return;
        }
        if line.starts_with(char::is_whitespace) {
            return;
        }
        let waiting = *panic
            .waiting
            .get_or_insert_with(|| line.starts_with("testing.(*T).Run("));
        if line.starts_with("testing.tRunner(") && !waiting {
            if let Some((function, file, l)) = panic.last.take() {
                if in_project(function.as_deref(), &file)
                    && panic.running.len() < crate::diagnostics::MAX_DIAGNOSTICS_PER_CHECK
                {
                    // The running list (Go 1.21+), or else `go test -json`,
                    // names the subtest (`TestSlow/inner`) where the
                    // frame's function is only its parent's closure
                    // (`TestSlow.func1`).
                    let listed = function
                        .as_deref()
                        .and_then(|f| listed_subtest(f, &panic.listed));
                    let named = panic.found.test.clone();
                    let test = listed.or_else(|| match function.as_deref().and_then(frame_test) {
                        Some(test)
                            if !named.as_deref().is_some_and(|n| {
                                n == test || n.starts_with(&format!("{test}/"))
                            }) =>
                        {
                            Some(test)
                        }
                        _ => named,
                    });
                    let mut found = frame_place(panic.found.clone(), &file, Some(l)).test(test);
                    found.range.end = at.end;
                    panic.running.push(found);
                }
            }
        }
        panic.function = Some(line.to_string());
    }

    /// A line of an open panic: the stack is read for its first frame in
    /// the project.
    fn panic_line(&mut self, line: &str, at: &Range<u64>) {
        let Some(panic) = self.panic.as_mut() else {
            return;
        };
        if panic.timeout {
            Self::timeout_line(panic, line, at);
            return;
        }
        match panic.stack {
            Stack::Before => {
                if line.starts_with("goroutine ") {
                    panic.stack = Stack::In;
                }
            }
            Stack::In => {
                if line.is_empty() || line.starts_with("goroutine ") {
                    panic.stack = Stack::After;
                } else if let Some(c) = super::caps(&FRAME, line) {
                    if panic.found.file.is_none()
                        && in_project(panic.function.as_deref(), &c["file"])
                    {
                        panic.found = frame_place(
                            std::mem::take(&mut panic.found),
                            &c["file"],
                            number(&c["line"]),
                        );
                        panic.found.range.end = at.end;
                    }
                    panic.function = None;
                } else if !line.starts_with(char::is_whitespace) {
                    panic.function = Some(line.to_string());
                }
            }
            Stack::After => {}
        }
    }
}

impl Grammar for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn triggers(&self) -> Option<super::Triggers> {
        Some(super::Triggers {
            // `# example.com/shop/calc`, `no packages to test`,
            // `directory ... outside main module ...`, `main module (...)
            // does not contain package ...`, `the path provided to GOWORK
            // must be ...`.
            first: b"-Fo#ndmt",
            indented: b"",
            anywhere: b":",
        })
    }

    fn busy(&self) -> bool {
        self.panic.is_some()
            || self.awaiting_use.is_some()
            || self.awaiting_fix.is_some()
            || self.vendoring.is_some()
            || self.awaiting_dir.is_some()
            || self.lookups.is_some()
    }

    fn wants(&self, line: &[u8]) -> bool {
        self.busy()
            || NEEDLE.find(line).is_some()
            || starts_trimmed(line, b"--- FAIL")
            || line.starts_with(b"FAIL")
            || line.starts_with(b"ok ")
            || line.starts_with(b"panic: ")
            || line.starts_with(b"# ")
            || line.starts_with(b"go: ")
            || line.starts_with(b"no packages to ")
            || line.starts_with(b"directory ")
            || line.starts_with(b"main module (")
            || line.starts_with(b"stat ")
            || memchr::memmem::find(line, b"go.work").is_some()
            || memchr::memmem::find(line, b"go.mod:").is_some()
            || memchr::memmem::find(line, b"GOPROXY=off").is_some()
            || memchr::memmem::find(line, b"GOWORK").is_some()
            || line.starts_with(b"note: module requires Go ")
            || ((line.starts_with(b"package ") || line.starts_with(b"pattern "))
                && memchr::memchr(b':', line).is_some())
    }

    fn line(&mut self, line: &str, at: &Range<u64>, out: &mut Out) {
        if self.fix_line(line, at, out) || self.dir_line(line, at, out) {
            return;
        }
        let after_header = std::mem::take(&mut self.after_header);
        let package = super::caps(&PACKAGE, line);
        if self.panic.is_some() {
            if package.is_none() {
                self.panic_line(line, at);
                return;
            }
            if let Some(panic) = self.panic.take() {
                for found in panic.into_found() {
                    self.hold(found);
                }
            }
        }
        if let Some(c) = package {
            let package = c["package"].to_string();
            for found in self.pending.drain(..) {
                // A `-trimpath` frame names its own package.
                let package = found.package.clone().unwrap_or_else(|| package.clone());
                out.push(Found {
                    package: Some(package),
                    ..found
                });
            }
            self.tests.clear();
            self.header = None;
            return;
        }
        if self.setup_line(line, None, at, out) {
            return;
        }
        if line.starts_with("panic: ") {
            let test = self.tests.last().filter(|_| after_header).cloned();
            self.open_panic(line, test, false, at);
            return;
        }
        if starts_trimmed(line.as_bytes(), b"--- FAIL: ") || TEST_LINE.is_match(line) {
            self.test_output(line, at, None, out);
            return;
        }
        let before = out.found.len();
        compiler_line(line, at, out);
        self.await_fix(before, out);
    }

    fn wants_document(&self, text: &str) -> bool {
        // go test -json: only output events carry findings.
        !text.starts_with("{\"Time\"") || text.contains("\"Action\":\"output\"")
    }

    fn document(&mut self, doc: &serde_json::Value, at: &Range<u64>, out: &mut Out) {
        // go test -json: one event per line; the output events carry text.
        if let Some(action) = doc["Action"].as_str() {
            // Go 1.24+ prints a package's build failure as events too, the
            // compiler's lines as they were (`calc/calc.go:6:17: ...`).
            if action == "build-output" {
                if let Some(text) = doc["Output"].as_str() {
                    let text = text.trim_end();
                    if self.fix_line(text, at, out) || self.dir_line(text, at, out) {
                        return;
                    }
                    let package = doc["ImportPath"].as_str().and_then(header_package);
                    if !self.setup_line(text, package, at, out) {
                        let before = out.found.len();
                        compiler_line(text, at, out);
                        self.await_fix(before, out);
                    }
                }
                return;
            }
            if action == "output" {
                if let (Some(text), Some(package)) =
                    (doc["Output"].as_str(), doc["Package"].as_str())
                {
                    let text = text.trim_end();
                    let test_name = doc["Test"].as_str();
                    if self.panic.is_some() {
                        if !PACKAGE.is_match(text) {
                            self.panic_line(text, at);
                            return;
                        }
                        if let Some(panic) = self.panic.take() {
                            for found in panic.into_found() {
                                let package =
                                    found.package.clone().unwrap_or_else(|| package.to_string());
                                out.push(Found {
                                    package: Some(package),
                                    ..found
                                });
                            }
                        }
                    }
                    if text.starts_with("panic: ") {
                        self.open_panic(text, test_name.map(str::to_string), true, at);
                        return;
                    }
                    self.test_output(text, at, Some((package, test_name)), out);
                }
            }
            return;
        }
        // golangci-lint: `{"Issues": [...], "Report": {...}}`.
        if let Some(issues) = doc["Issues"].as_array() {
            for issue in issues {
                let severity = match issue["Severity"].as_str() {
                    Some(word) if !word.is_empty() => Severity::from_word(word),
                    _ => Severity::Error,
                };
                let pos = &issue["Pos"];
                let mut found = Found::new(
                    "golangci-json",
                    severity,
                    issue["Text"].as_str().unwrap_or(""),
                )
                .code(issue["FromLinter"].as_str().map(str::to_string))
                .tool("golangci-lint")
                .unit(ColumnUnit::Byte)
                .range(at);
                if let Some(file) = pos["Filename"].as_str() {
                    // A `Column` of 0 means golangci-lint does not know it.
                    found = found.at(file, json_number(&pos["Line"]), json_number(&pos["Column"]));
                }
                out.push(found);
            }
            return;
        }
        // go vet -json: `{"<package>": {"<analyzer>": [{"posn", "message"}]}}`.
        // It exits 0 whatever it finds, so its findings fail the check.
        let Some(packages) = doc.as_object() else {
            return;
        };
        for analyzers in packages.values() {
            let Some(analyzers) = analyzers.as_object() else {
                continue;
            };
            for (analyzer, findings) in analyzers {
                for finding in findings.as_array().into_iter().flatten() {
                    let (Some(posn), Some(message)) =
                        (finding["posn"].as_str(), finding["message"].as_str())
                    else {
                        continue;
                    };
                    out.errors_fail = true;
                    let mut parts = posn.rsplitn(3, ':');
                    let (col, line, file) = (parts.next(), parts.next(), parts.next());
                    let mut found = Found::new("vet-json", Severity::Error, message)
                        .code(Some(analyzer.clone()))
                        .unit(ColumnUnit::Byte)
                        .range(at);
                    if let (Some(file), Some(line), Some(col)) = (file, line, col) {
                        found = found.at(file, number(line), number(col));
                    }
                    out.push(found);
                }
            }
        }
    }

    fn finish(&mut self, out: &mut Out) {
        if let Some((dir, from)) = self.awaiting_use.take() {
            out.push(unlisted_module(&dir, None, &from));
        }
        if let Some(found) = self.awaiting_fix.take() {
            out.push(found);
        }
        if let Some(found) = self.awaiting_dir.take() {
            out.push(found);
        }
        if let Some((count, from)) = self.lookups.take() {
            out.push(unnamed_lookups(count, &from));
        }
        if let Some((dir, false, from)) = self.vendoring.take() {
            out.push(vendoring(&dir, &from));
        }
        // A panic no package line ended (`go run`, a test binary).
        if let Some(panic) = self.panic.take() {
            for found in panic.into_found() {
                self.hold(found);
            }
        }
        // Test lines no package line claimed: relative to the check.
        for found in self.pending.drain(..) {
            out.push(found);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::tests::{places, recorded};

    const PANIC_RECORDED_IN: Option<&str> = Some("/tmp/rec-diag/go/test");

    #[test]
    fn a_panicking_test_is_located_at_its_first_frame_in_the_project() {
        // go1.19.8: `panic: ... [recovered]`, then the goroutine's stack,
        // the testing and runtime frames first, then
        // `\t/tmp/rec-diag/go/test/panicky/p.go:3`.
        for output in ["go/go-panic.txt", "go/go-panic.json"] {
            let found = recorded("go", output, PANIC_RECORDED_IN);
            let panic = found
                .diagnostics
                .iter()
                .find(|d| d.test.as_deref() == Some("TestBoom"))
                .unwrap_or_else(|| panic!("{output}: no panic in {:?}", places(&found)));
            assert_eq!(panic.location(), "panicky/p.go:3", "{output}");
            assert_eq!(
                panic.message, "panic: runtime error: index out of range [5] with length 1",
                "{output}"
            );
            // The other package's failure is still there.
            assert_eq!(found.diagnostics.len(), 2, "{output}: {:?}", places(&found));
        }
    }

    #[test]
    fn frames_of_the_standard_library_and_dependencies_are_not_the_projects() {
        let cases = [
            (
                "testing.tRunner.func1.2({0x518a00, 0xc00001a0a8})",
                "/usr/lib/go-1.19/src/testing/testing.go",
                false,
            ),
            (
                "panic({0x518a00, 0xc00001a0a8})",
                "/usr/lib/go-1.19/src/runtime/panic.go",
                false,
            ),
            (
                "created by testing.(*T).Run",
                "/usr/lib/go-1.19/src/testing/testing.go",
                false,
            ),
            (
                "example.com/shop/panicky.Boom(...)",
                "/tmp/rec-diag/go/test/panicky/p.go",
                true,
            ),
            // Made up, in the same shapes: a dependency in the module
            // cache, and a dotless main package.
            (
                "github.com/x/y.(*T).M(...)",
                "/root/go/pkg/mod/github.com/x/y@v1.0.0/y.go",
                false,
            ),
            ("main.main()", "/app/main.go", true),
            // From the recorded `-trimpath` outputs: the standard
            // library's frames named by package, the module's by module
            // path, and the generated test main.
            (
                "testing.tRunner(0xc000096680, 0x52f2e8)",
                "testing/testing.go",
                false,
            ),
            ("panic({0x518a00, 0xc0000cc000})", "runtime/panic.go", false),
            (
                "example.com/shop/panicky.Boom(...)",
                "example.com/shop/panicky/p.go",
                true,
            ),
            ("main.main()", "_testmain.go", false),
            // Made up, in the same shape: a dependency under `-trimpath`.
            (
                "github.com/x/y.(*T).M(...)",
                "github.com/x/y@v1.0.0/y.go",
                false,
            ),
        ];
        for (function, file, expected) in cases {
            assert_eq!(
                super::in_project(Some(function), file),
                expected,
                "{function} {file}"
            );
        }
    }

    #[test]
    fn a_timeout_is_located_at_the_test_that_was_running() {
        // go1.19.8 `-timeout 1s`: `panic: test timed out after 1s` in the
        // alarm's goroutine; `TestSlow` sleeps in another, its frame
        // `\t/tmp/rec-parsers/go/timeout/slow/slow_test.go:11 +0x25` just
        // above `testing.tRunner`.
        for output in ["go/go-timeout.txt", "go/go-timeout.json"] {
            let found = recorded("go", output, Some("/tmp/rec-parsers/go/timeout"));
            assert_eq!(
                places(&found),
                [("slow/slow_test.go:11".to_string(), None, Some("TestSlow"))],
                "{output}"
            );
            assert_eq!(
                found.diagnostics[0].message, "panic: test timed out after 1s",
                "{output}"
            );
        }
    }

    #[test]
    fn a_timeout_in_a_subtest_is_the_subtests_not_its_waiting_parents() {
        // go1.19.8: `TestSlow` waits in `testing.(*T).Run` (its goroutine's
        // innermost call) at `slow_test.go:9` for its subtest, which sleeps
        // at `slow_test.go:10` in `example.com/shop/slowsub.TestSlow.func1`.
        for (output, test) in [
            ("go/go-timeout-sub.txt", "TestSlow"),
            ("go/go-timeout-sub.json", "TestSlow/inner"),
        ] {
            let found = recorded("go", output, Some("/tmp/rec-parsers/go/subtimeout"));
            assert_eq!(
                places(&found),
                [("slowsub/slow_test.go:10".to_string(), None, Some(test))],
                "{output}"
            );
        }
    }

    #[test]
    fn a_timeout_in_a_subtest_is_named_by_the_running_tests_go_lists() {
        // go1.23.5 and go1.24.4 list the tests running at the timeout
        // under its first line (`\t\tTestSlow (1s)`, `\t\tTestSlow/inner
        // (1s)`): the goroutine under `slowsub.TestSlow.func1` runs
        // `TestSlow/inner`, in the text output as in the JSON.
        for version in ["go123", "go124"] {
            for format in ["txt", "json"] {
                let output = format!("go/{version}-timeout-sub.{format}");
                let recorded_in = format!("/tmp/rec-{version}/subtimeout");
                let found = recorded("go", &output, Some(&recorded_in));
                assert_eq!(
                    places(&found),
                    [(
                        "slowsub/slow_test.go:10".to_string(),
                        None,
                        Some("TestSlow/inner")
                    )],
                    "{output}"
                );
            }
        }
    }

    #[test]
    fn a_closure_names_a_listed_subtest_only_when_one_is_listed() {
        let listed = |names: &[&str]| names.iter().map(ToString::to_string).collect::<Vec<_>>();
        let closure = "example.com/shop/slowsub.TestSlow.func1(0xc00009a820?)";
        // As recorded: the parent and its one subtest.
        assert_eq!(
            super::listed_subtest(closure, &listed(&["TestSlow", "TestSlow/inner"])),
            Some("TestSlow/inner".to_string())
        );
        // Made up, in the same shapes: two parallel subtests' closures
        // cannot be told apart; a test function is not a closure; nothing
        // listed (go 1.19).
        assert_eq!(
            super::listed_subtest(closure, &listed(&["TestSlow", "TestSlow/a", "TestSlow/b"])),
            None
        );
        assert_eq!(
            super::listed_subtest(
                "example.com/shop/slow.TestSlow(0xc000098820?)",
                &listed(&["TestSlow", "TestSlow/inner"])
            ),
            None
        );
        assert_eq!(super::listed_subtest(closure, &[]), None);
        // A subtest of a subtest: the innermost one listed.
        assert_eq!(
            super::listed_subtest(
                "example.com/shop/slowsub.TestSlow.func1.1()",
                &listed(&["TestSlow", "TestSlow/a", "TestSlow/a/b", "TestSlowly"])
            ),
            Some("TestSlow/a/b".to_string())
        );
    }

    #[test]
    fn a_failed_subtest_is_named_in_full_as_the_json_names_it() {
        for output in ["go/go-subtest.txt", "go/go-subtest.json"] {
            let found = recorded("go", output, None);
            assert_eq!(
                places(&found),
                [("sub_test.go:8".to_string(), None, Some("TestSub/case_one"))],
                "{output}"
            );
        }
    }

    #[test]
    fn go_vets_type_errors_are_read() {
        // go1.19.8: `vet: sub/u.go:4:2: unused declared but not used`.
        let found = recorded("go", "go/go-vet-typecheck.txt", None);
        assert_eq!(places(&found), [("sub/u.go:4:2".to_string(), None, None)]);
        assert_eq!(found.diagnostics[0].message, "unused declared but not used");
    }
    #[test]
    fn a_build_failure_in_go_test_json_events_is_located() {
        // go1.24.4 `go test -json` prints the compiler's lines of a package
        // that does not compile as `build-output` events; go1.23.5 prints
        // them as plain text among the events.
        for output in [
            "go/go124-test-buildfail.json",
            "go/go123-test-buildfail.json",
        ] {
            let found = recorded("go", output, None);
            assert_eq!(
                places(&found),
                [("calc/calc.go:6:17".to_string(), None, None)],
                "{output}"
            );
            assert_eq!(
                found.diagnostics[0].message, "undefined: missing",
                "{output}"
            );
        }
    }

    #[test]
    fn a_relative_pattern_names_its_directory_and_an_import_path_none() {
        for (pattern, dir) in [
            ("./...", Some(".")),
            (".", Some(".")),
            ("./backend/calc/...", Some("./backend/calc")),
            ("../shared/...", Some("../shared")),
            ("./cmd/x...", None),
            ("example.com/shop/...", None),
            ("all", None),
        ] {
            assert_eq!(super::pattern_dir(pattern).as_deref(), dir, "{pattern}");
        }
    }

    #[test]
    fn a_version_is_told_from_a_query() {
        for (version, expected) in [
            ("v1.6.0", true),
            ("v0.0.0-20240101000000-abcdef123456", true),
            ("v2.0.0+incompatible", true),
            ("latest", false),
            ("upgrade", false),
            ("v1", false),
            ("v1.2", false),
            ("main", false),
        ] {
            assert_eq!(super::is_version(version), expected, "{version}");
        }
    }

    #[test]
    fn a_header_names_its_package_and_a_pattern_none() {
        for (header, package) in [
            ("example.com/shop/calc", Some("example.com/shop/calc")),
            (
                "example.com/shop/calc [example.com/shop/calc.test]",
                Some("example.com/shop/calc"),
            ),
            ("./...", None),
            ("", None),
        ] {
            assert_eq!(
                super::header_package(header).as_deref(),
                package,
                "{header}"
            );
        }
    }
}
