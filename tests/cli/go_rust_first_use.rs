//! A new user's first runs on Go and Rust projects.
//!
//! The default checks of a Rust project each print the compiler's findings,
//! and a Go project's lint needs golangci-lint, which go does not bring.
//! Tools are stood for by scripts on a `PATH` the test controls that print
//! what the real ones printed (`fixtures/diagnostics/cargo`, with the
//! command and version of each recording).

use crate::first_use::Tools;
use crate::support::{check, output, TestRepo, BIN};

/// A recording of `fixtures/diagnostics/cargo`.
fn cargo_fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/diagnostics/cargo")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A `cargo` that prints, for each subcommand, the recording `outputs`
/// names, and exits with its code.
fn cargo_printing(tools: &Tools, outputs: &[(&str, &str, i32)]) {
    let mut body = String::from("case \"$1\" in\n");
    for (subcommand, recording, code) in outputs {
        body.push_str(&format!(
            "  {subcommand})\n    cat <<'EOF'\n{}EOF\n    exit {code};;\n",
            cargo_fixture(recording)
        ));
    }
    body.push_str("esac\nexit 2\n");
    tools.add("cargo", &body);
}

/// A crate as `cargo new --lib` makes one, with `lib` as its `src/lib.rs`,
/// staged.
fn crate_with(lib: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n",
    )
    .write(".gitignore", "/target\n")
    .write("src/lib.rs", &cargo_fixture(lib));
    repo.git(&["add", "-A"]);
    repo
}

/// The report's part above the summary: the checks and their findings.
fn details(report: &str) -> &str {
    report.split("\nsummary\n").next().unwrap()
}

#[test]
fn a_compile_error_every_cargo_check_prints_is_shown_in_full_once() {
    let tools = Tools::new();
    cargo_printing(
        &tools,
        &[
            ("test", "error-test.txt", 101),
            ("clippy", "error-clippy.txt", 101),
            ("build", "build.txt", 101),
            ("check", "error-check.txt", 101),
        ],
    );
    let repo = crate_with("lib.rs.txt");
    let path = tools.path();
    let run = repo.phasegate_with(&["run"], &[("PATH", &path)]);
    assert_eq!(run.code, 1, "{run:?}");
    let details = details(&run.stdout);
    // Under the first check, the error with its line of source.
    assert!(
        details.contains("tests — exit 101\n  src/lib.rs:7:18 error E0308 mismatched types\n"),
        "{details}"
    );
    assert_eq!(
        details.matches("let s: u32 = \"text\";").count(),
        1,
        "{details}"
    );
    // Under the others, one line that says where it is shown.
    for other in ["lint", "build", "typecheck"] {
        assert!(
            details.contains(&format!(
                "{other} — exit 101\n  src/lib.rs:7:18 error E0308 mismatched types (as under `tests` above)\n"
            )),
            "{details}"
        );
    }
    // The verdict keeps every check's findings.
    let (_, verdict) = repo.verdict_with(&[], &[("PATH", &path)]);
    for name in ["tests", "lint", "build", "typecheck"] {
        assert_eq!(check(&verdict, name)["status"], "failed", "{verdict:#}");
        assert!(
            verdict["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["check"] == name && d["code"] == "E0308"),
            "{name}: {verdict:#}"
        );
    }
}

#[test]
fn a_warning_every_cargo_check_prints_is_listed_once_and_said_not_to_block() {
    let tools = Tools::new();
    cargo_printing(
        &tools,
        &[
            ("test", "warned-test.txt", 0),
            ("clippy", "warned-clippy.txt", 0),
            ("build", "warned-build.txt", 0),
            ("check", "warned-check.txt", 0),
        ],
    );
    let repo = crate_with("warned-lib.rs.txt");
    let path = tools.path();
    let run = repo.phasegate_with(&["run"], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = repo.redact(&run.stdout);
    assert!(
        report.contains(
            "\ntests — passed, with 1 finding(s) that do not fail it\n  src/lib.rs:2:9 warning unused_variables unused variable: `unused`\n  full log: .git/phasegate/runs/[RUN]/tests.log\n\nlint, build, typecheck — passed, with only findings shown above, which do not fail them\n\n"
        ),
        "{report}"
    );
    assert!(
        report.ends_with("\n✓ passed — proceed (exit 0)\n"),
        "{report}"
    );
    assert_eq!(report.matches("unused variable").count(), 1, "{report}");
}

#[test]
fn init_for_rust_says_clippy_warnings_do_not_block_and_how_to_make_them() {
    let repo = crate_with("warned-lib.rs.txt");
    let init = repo.phasegate(&["init"]);
    assert_eq!(init.code, 0, "{init:?}");
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains(
            "# `cargo clippy` exits 0 on warnings: the report shows them, and they do\n# not block. To make them block: lint = \"cargo clippy -- -D warnings\"\nlint = \"cargo clippy\"\n"
        ),
        "{text}"
    );
}

/// A Go module with a package, as `go mod init` and a first file make
/// one, staged.
fn go_module() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("go.mod", "module example.com/shop\n\ngo 1.24.4\n")
        .write(
            "calc/calc.go",
            "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
        );
    repo.git(&["add", "-A"]);
    repo
}

/// The message of check `name`'s missing-tool finding.
fn missing_advice(verdict: &serde_json::Value, name: &str) -> String {
    verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["check"] == name && d["code"] == "missing-tool")
        .unwrap_or_else(|| panic!("no missing-tool finding for `{name}`: {verdict:#}"))["message"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_go_module_without_golangci_lint_is_told_every_way_on() {
    // go is installed (its checks pass), golangci-lint is not.
    let tools = Tools::new();
    tools.add("go", "exit 0\n");
    let path = tools.path();
    let repo = go_module();

    // The embedded default: install it, lint with go vet, or write a file.
    let (code, verdict) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 3, "{verdict:#}");
    assert_eq!(check(&verdict, "lint")["status"], "missing", "{verdict:#}");
    let advice = missing_advice(&verdict, "lint");
    assert!(
        advice.starts_with(
            "`golangci-lint` is not installed (not found on PATH); install golangci-lint (https://golangci-lint.run/welcome/install/) or lint with `go vet ./...` instead (it comes with go), or list check `lint` with `on_missing = \"warn\"`"
        ),
        "{advice}"
    );
    assert!(
        advice.ends_with(
            "(`phasegate init` writes one where there is none), or leave it out of the phase there"
        ),
        "{advice}"
    );

    // init says the same, and its file says how to lint with go vet.
    let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stderr.contains(
            "help: install golangci-lint (https://golangci-lint.run/welcome/install/) or lint with `go vet ./...` instead (it comes with go), or add `on_missing = \"warn\"`"
        ),
        "{init:?}"
    );
    let text = repo.read("phasegate.toml");
    let note = "# golangci-lint is installed apart from go\n# (https://golangci-lint.run/welcome/install/); until it is, every run\n# stops on this check. Go's own linter needs nothing: lint = \"go vet ./...\"\nlint = \"golangci-lint run ./...\"\n";
    assert!(text.contains(note), "{text}");

    // The first commit through the hook stops, naming every way on.
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.git(&["add", "-A"]);
    let commit = output(
        &repo
            .command("git")
            .args(["commit", "-qm", "first"])
            .env("PATH", &path)
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    );
    assert_ne!(commit.code, 0, "{commit:?}");
    let said = format!("{}{}", commit.stdout, commit.stderr);
    assert!(
        said.contains(
            "take check `lint` out of its phase's `checks` if the project does not use it; else install golangci-lint (https://golangci-lint.run/welcome/install/) or lint with `go vet ./...` instead (it comes with go), or set `on_missing` for check `lint` to \"warn\" or \"skip\""
        ),
        "{said}"
    );

    // Doing what the file says lets the commit through.
    repo.write(
        "phasegate.toml",
        &text.replace(note, "lint = \"go vet ./...\"\n"),
    );
    repo.git(&["add", "-A"]);
    let (code, verdict) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(check(&verdict, "lint")["argv"][0][0], "go", "{verdict:#}");
}
