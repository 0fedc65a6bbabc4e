//! Reports that say each thing once.
//!
//! The summary, `handoff validate` at a terminal and in a pipe, a missing
//! tool's advice, a passing check's findings and a timed-out check, each
//! read as a person reads them the first time. Tools are stood for by
//! scripts on a `PATH` the test controls; their output is what the real
//! tools print.

use crate::first_use::{python_project, Tools, PYTEST_COLLECTION_ERROR};
use crate::handoff_review::GATE;
use crate::support::{Run, TestRepo, BIN};

/// What `ruff check .` prints for the unused import of that test file.
pub(crate) const RUFF_UNUSED_IMPORT: &str =
    "tests/test_calc.py:1:18: F401 [*] `calc.add` imported but unused
Found 1 error.
[*] 1 fixable with the `--fix` option.
";

/// `pytest`, `ruff` and `pyright` stood in as they answer a Python
/// project whose test imports a module that is not there.
pub(crate) fn failing_python_tools() -> Tools {
    let tools = Tools::new();
    tools
        .prints("pytest", PYTEST_COLLECTION_ERROR, 2)
        .prints("ruff", RUFF_UNUSED_IMPORT, 1)
        .prints("pyright", "0 errors, 0 warnings, 0 informations\n", 0);
    tools
}

/// The human report up to its summary: the check lines and the details.
fn details(stdout: &str) -> &str {
    stdout.split("\nsummary\n").next().unwrap()
}

/// The human report's summary section.
fn summary(stdout: &str) -> &str {
    stdout.split("\nsummary\n").nth(1).unwrap_or_default()
}

#[test]
fn the_summary_leaves_out_a_code_its_message_begins_with() {
    let tools = failing_python_tools();
    let path = tools.path();
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.git(&["add", "-A"]);

    let (code, v) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 1, "{v:#}");
    let lines: Vec<&str> = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines.iter().any(|l| l.starts_with(
            "tests/test_calc.py:1 ModuleNotFoundError: No module named 'calc' (tests"
        )),
        "{lines:#?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("ModuleNotFoundError ModuleNotFoundError")),
        "{lines:#?}"
    );
    // A code the message does not begin with is still said.
    assert!(
        lines.contains(&"tests/test_calc.py:1 F401 `calc.add` imported but unused (lint)"),
        "{lines:#?}"
    );
    // The diagnostic keeps its code: only the line leaves it out.
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "ModuleNotFoundError"),
        "{v:#}"
    );

    // The human report's summary reads as the verdict's, and so does
    // `diagnostics parse`.
    let run = repo.phasegate_with(&["run"], &[("PATH", &path)]);
    assert!(
        summary(&run.stdout)
            .contains("  tests/test_calc.py:1 ModuleNotFoundError: No module named 'calc' (tests"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout
            .contains("ModuleNotFoundError ModuleNotFoundError"),
        "{}",
        run.stdout
    );
    let parsed = repo.phasegate_fed(
        &["diagnostics", "parse", "--parser", "pytest"],
        PYTEST_COLLECTION_ERROR.as_bytes(),
    );
    let parsed = String::from_utf8_lossy(&parsed.stdout);
    assert!(
        parsed.contains("error ModuleNotFoundError: No module named 'calc'"),
        "{parsed}"
    );
    assert!(
        !parsed.contains("ModuleNotFoundError ModuleNotFoundError"),
        "{parsed}"
    );
}

/// A document whose `handoff_ready` says true while a checkpoint is
/// skipped: one error, on line 8.
const NOT_READY: &str = "---
id: F001
stage: implementation
title: Add calc
status: in_progress
started_at: 2026-01-20T09:00:00Z
completed_at: null
handoff_ready: true
checkpoints:
  - name: tests_written
    status: pass
  - name: code_complete
    status: pass
  - name: tests_passing
    status: pass
  - name: no_lint_errors
    status: skip
retry_count: 0
---
Body.
";

/// The error `NOT_READY` has, as its message says it.
const NOT_READY_ERROR: &str =
    "`handoff_ready` is true but `no_lint_errors` does not pass (a skip is not a pass): set it to false until every required checkpoint passes";

/// `phasegate ARGS` with its standard output a terminal (a
/// pseudo-terminal `script` gives it), colour off. Standard error comes
/// in the same stream, and `script` writes each line break as `\r\n`,
/// which is read back as `\n`.
pub(crate) fn at_terminal(repo: &TestRepo, args: &[&str]) -> Run {
    let quoted: Vec<String> = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|arg| format!("'{}'", arg.replace('\'', "'\\''")))
        .collect();
    let out = repo
        .command("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn handoff_validate_says_each_error_once_at_a_terminal_and_in_a_pipe() {
    let repo = TestRepo::new();
    repo.config(GATE);
    repo.write("handoffs/F001.md", NOT_READY);
    let plain = format!("  handoffs/F001.md:8:16 error {NOT_READY_ERROR}\n");

    // Piped (an editor, a CI log, `grep`): a heading and one line per
    // error, as ruff's and eslint's one-line formats; no drawing.
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        format!("✗ handoffs/F001.md (F001, implementation): invalid, 1 error\n{plain}"),
        "{run:?}"
    );

    // At a terminal: the document drawn, the error labelled on its line,
    // and not listed again below.
    let shown = at_terminal(&repo, &["handoff", "validate", "handoffs/F001.md"]);
    assert_eq!(shown.code, 1, "{shown:?}");
    let shown = shown.stdout;
    assert!(
        shown.contains("invalid handoff document handoffs/F001.md (F001, implementation)"),
        "{shown}"
    );
    assert!(shown.contains("╭─[handoffs/F001.md:8:16]"), "{shown}");
    assert!(shown.contains("8 │ handoff_ready: true"), "{shown}");
    assert_eq!(
        shown
            .matches("does not pass (a skip is not a pass)")
            .count(),
        1,
        "{shown}"
    );
    assert!(!shown.contains(plain.trim_end()), "{shown}");

    // The JSON is as documented, whatever the output is.
    let json = repo
        .phasegate(&[
            "handoff",
            "validate",
            "--format",
            "json",
            "handoffs/F001.md",
        ])
        .json();
    let errors = json["handoffs"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{json:#}");
    assert_eq!(errors[0]["message"], NOT_READY_ERROR, "{json:#}");
    assert_eq!(
        (&errors[0]["line"], &errors[0]["column"]),
        (&8.into(), &16.into())
    );
}

#[test]
fn a_frontmatter_that_cannot_be_parsed_is_not_said_to_have_no_id() {
    let repo = TestRepo::new();
    repo.config(GATE);
    // Its `id:` and `stage:` lines are fine; the title breaks the YAML.
    repo.stage(
        "handoffs/F002.md",
        "---\nid: F002\nstage: implementation\ntitle: [unclosed\n---\n",
    );
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F002.md"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .starts_with("✗ handoffs/F002.md (frontmatter not parsed): invalid, 1 error\n"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("no id"), "{run:?}");
    let shown = at_terminal(&repo, &["handoff", "validate", "handoffs/F002.md"]).stdout;
    assert!(
        shown.contains("invalid handoff document handoffs/F002.md (frontmatter not parsed)"),
        "{shown}"
    );
    // The run's report names it the same way.
    let run = repo.phasegate(&["run"]);
    assert!(
        run.stdout
            .contains("  handoff handoffs/F002.md (frontmatter not parsed): invalid\n"),
        "{run:?}"
    );

    // A frontmatter that was read, with no `id`, has none: said so.
    repo.stage(
        "handoffs/F002.md",
        "---\nstage: implementation\ntitle: No id\n---\n",
    );
    let run = repo.phasegate(&["handoff", "validate", "handoffs/F002.md"]);
    assert!(
        run.stdout
            .starts_with("✗ handoffs/F002.md (no id, implementation): invalid"),
        "{run:?}"
    );
}

#[test]
fn a_missing_tool_of_the_embedded_defaults_says_where_on_missing_can_be_set() {
    let tools = Tools::new();
    tools
        .prints("pytest", "1 passed in 0.01s\n", 0)
        .prints("ruff", "All checks passed!\n", 0);
    let path = tools.path();
    let repo = TestRepo::new();
    python_project(&repo, "");
    repo.git(&["add", "-A"]);
    let missing_advice = |v: &serde_json::Value| -> String {
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["check"] == "typecheck" && d["code"] == "missing-tool")
            .unwrap_or_else(|| panic!("no missing-tool finding: {v:#}"))["message"]
            .as_str()
            .unwrap()
            .to_string()
    };

    // No `phasegate.toml`: nowhere to set `on_missing` until init writes one.
    let (code, v) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 3, "{v:#}");
    let advice = missing_advice(&v);
    assert!(
        advice.contains(
            "or list check `typecheck` with `on_missing = \"warn\"` (or \"skip\") in a phase of `phasegate.toml` (`phasegate init` writes one where there is none)"
        ),
        "{advice}"
    );
    assert!(!advice.contains("set `on_missing` for check"), "{advice}");

    // With a file that holds the check, the advice is where it was.
    repo.config(
        "[commands]\ntests = \"pytest\"\nlint = \"ruff check .\"\ntypecheck = \"pyright\"\n\n[phases.implementation]\nchecks = [ { name = \"tests\" }, { name = \"lint\" }, { name = \"typecheck\" } ]\n",
    );
    repo.git(&["add", "-A"]);
    let (code, v) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 3, "{v:#}");
    let advice = missing_advice(&v);
    assert!(
        advice.ends_with(", or set `on_missing` for check `typecheck` to \"warn\" or \"skip\""),
        "{advice}"
    );
    assert!(!advice.contains("phasegate init"), "{advice}");
}

/// `crate dlint`'s `src/lib.rs`, and what `cargo clippy` 1.95 printed for
/// it (exit 0: three warnings).
fn clippy_project(repo: &TestRepo) {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diagnostics/cargo");
    let read = |name: &str| std::fs::read_to_string(fixtures.join(name)).unwrap();
    repo.write("src/lib.rs", &read("dlint-lib.rs.txt"))
        .write("clippy.out", &read("clippy-warn.txt"));
}

#[test]
fn a_passing_checks_findings_are_one_line_each_and_a_failing_ones_in_full() {
    let repo = TestRepo::new();
    clippy_project(&repo);
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "lint", command = "cat clippy.out", parser = "cargo" } ]
"#,
    );
    repo.git(&["add", "-A"]);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = repo.redact(&run.stdout);
    let section = report
        .split("\nlint — passed, with 3 finding(s) that do not fail it\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no section of the passing check:\n{report}"));
    let section = section.split("\n\n").next().unwrap();
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(
        lines,
        [
            "  src/lib.rs:1:13 warning clippy::ptr_arg writing `&Vec` instead of `&[_]` involves a new object where a slice will do",
            "  src/lib.rs:2:9 warning unused_variables unused variable: `unused`",
            "  src/lib.rs:3:5 warning clippy::needless_return unneeded `return` statement",
            "  full log: .git/phasegate/runs/[RUN]/lint.log",
        ],
        "{report}"
    );

    // The same findings failing the check are shown in full, with the
    // lines the tool drew under each.
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "lint", command = "cat clippy.out; exit 1", shell = true, parser = "cargo" } ]
"#,
    );
    repo.git(&["add", "-A"]);
    let run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 1, "{run:?}");
    let full = "  src/lib.rs:2:9 warning unused_variables unused variable: `unused`\n    │   |\n    │ 2 |     let unused = 1;\n";
    assert!(run.stdout.contains(full), "{}", run.stdout);
}

#[test]
fn a_timed_out_check_says_its_limit_once_on_its_line_and_once_below() {
    let repo = TestRepo::new();
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "slow", command = "sleep 10", timeout = "300ms" } ]
"#,
    );
    repo.stage("a.txt", "a\n");
    let run: Run = repo.phasegate(&["run"]);
    assert_eq!(run.code, 3, "{run:?}");
    let details = details(&run.stdout);
    // The check line: its status, then what happened, not the status
    // and the time again.
    let line = details
        .lines()
        .find(|l| l.contains(" slow "))
        .unwrap_or_else(|| panic!("{details}"));
    assert!(
        line.ends_with("timed out   after 300ms; its process group was killed · 1 diagnostic"),
        "{line}"
    );
    // The heading names the status; the finding under it says the rest.
    assert!(details.contains("\nslow — timed out\n"), "{details}");
    assert_eq!(
        details.matches("timed out after 300ms").count(),
        1,
        "{details}"
    );
}
