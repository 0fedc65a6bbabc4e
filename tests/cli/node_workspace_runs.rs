//! Test runs across a Node workspace, started from its root.
//!
//! The check is a stand-in for the package manager that prints what the
//! real one printed, recorded on the same monorepo (two packages, `a`
//! with jest and `b` with vitest, both failing; see
//! `fixtures/node/README.md`).

use crate::node_first_use::path_with;
use crate::support::{check, write_executable, TestRepo};

/// The recorded output `fixtures/node/<name>`.
fn recording(name: &str) -> String {
    format!("{}/fixtures/node/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The recorded monorepo: a root `package.json` whose `workspaces` (or a
/// `pnpm-workspace.yaml`) list `packages/*`, and the packages `a` (jest)
/// and `b` (vitest) with their failing tests, at the lines the
/// recordings name; `a` at `a_dir` instead when given.
fn monorepo(pnpm: bool, a_dir: &str) -> TestRepo {
    let repo = TestRepo::new();
    let mut globs = String::from("\"packages/*\"");
    if a_dir != "packages/a" {
        globs.push_str(", \"services/*/*\"");
    }
    if pnpm {
        repo.write(
            "package.json",
            "{ \"name\": \"pmono\", \"private\": true, \"scripts\": { \"test\": \"pnpm -r test\" } }\n",
        );
        repo.write(
            "pnpm-workspace.yaml",
            &format!("packages:\n  - {}\n", globs.replace(", ", "\n  - ")),
        );
    } else {
        repo.write(
            "package.json",
            &format!("{{\n  \"name\": \"mono\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"workspaces\": [{globs}],\n  \"scripts\": {{ \"test\": \"npm test --workspaces\" }}\n}}\n"),
        );
    }
    let a_name = a_dir.rsplit('/').next().unwrap_or(a_dir);
    repo.write(
        &format!("{a_dir}/package.json"),
        &format!("{{ \"name\": \"{a_name}\", \"version\": \"1.0.0\", \"scripts\": {{ \"test\": \"jest\" }} }}\n"),
    );
    repo.write(
        &format!("{a_dir}/sum.js"),
        "module.exports = (a, b) => a + b;\n",
    );
    repo.write(
        &format!("{a_dir}/sum.test.js"),
        "const sum = require(\"./sum\");\n\ntest(\"sums\", () => {\n  expect(sum(1, 2)).toBe(4);\n});\n",
    );
    repo.write(
        "packages/b/package.json",
        "{ \"name\": \"b\", \"version\": \"1.0.0\", \"type\": \"module\", \"scripts\": { \"test\": \"vitest run\" } }\n",
    );
    repo.write("packages/b/mul.js", "export const mul = (a, b) => a * b;\n");
    repo.write(
        "packages/b/mul.test.js",
        "import { expect, test } from \"vitest\";\nimport { mul } from \"./mul.js\";\n\ntest(\"multiplies\", () => {\n  expect(mul(2, 3)).toBe(5);\n});\n",
    );
    repo.commit_all("monorepo");
    repo
}

/// `phasegate run --all-files` with one check running `command` from the
/// root, whose program is a stand-in printing the recording `output` and
/// failing as the real run did: the exit code, the verdict, and each
/// finding as `file:line message's first line`.
fn run(repo: &TestRepo, command: &str, output: &str) -> (i32, serde_json::Value, Vec<String>) {
    let program = command.split(' ').next().unwrap_or(command);
    let bin = repo.home().join("bin");
    write_executable(
        &bin.join(program),
        &format!("#!/bin/sh\ncat '{}'\nexit 1\n", recording(output)),
    );
    repo.config(&format!(
        "[commands]\ntests = \"{command}\"\n\n[phases.implementation]\nchecks = [ {{ name = \"tests\", on_failure = \"block\" }} ]\n"
    ));
    let (code, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path_with(&bin))]);
    let found = verdict["diagnostics"]
        .as_array()
        .unwrap_or_else(|| panic!("{verdict:#}"))
        .iter()
        .map(|d| {
            let first = d["message"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            format!(
                "{}:{} {first}",
                d["file"].as_str().unwrap_or("-"),
                d["line"]
            )
        })
        .collect();
    (code, verdict, found)
}

const A_FAILS: &str =
    "packages/a/sum.test.js:4 expect(received).toBe(expected) // Object.is equality";
const B_FAILS: &str =
    "packages/b/mul.test.js:5 AssertionError: expected 6 to be 5 // Object.is equality";

#[test]
fn npm_test_across_the_workspaces_places_each_packages_failure_in_its_package() {
    let repo = monorepo(false, "packages/a");
    for (command, output) in [
        ("npm test", "workspaces-npm.txt"),
        ("npm run test -ws --if-present", "workspaces-npm-run.txt"),
    ] {
        let (code, verdict, found) = run(&repo, command, output);
        assert_eq!(code, 1, "{verdict:#}");
        assert_eq!(check(&verdict, "tests")["status"], "failed");
        // jest's in `a` and vitest's in `b`, in the order they ran.
        assert_eq!(found, [A_FAILS, B_FAILS], "{command}");
        let tools: Vec<&str> = verdict["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["dialect"].as_str().unwrap_or("-"))
            .collect();
        assert_eq!(tools, ["jest", "vitest"], "{verdict:#}");
    }
}

#[test]
fn pnpm_recursive_runs_keep_every_runners_failures_where_they_are() {
    let repo = monorepo(true, "packages/a");
    // Side by side, each line prefixed with its package's directory:
    // vitest's lines start before jest's and end after them.
    let (code, verdict, found) = run(&repo, "pnpm -r --no-bail test", "workspaces-pnpm.txt");
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(found, [A_FAILS, B_FAILS], "{verdict:#}");
    // Stopped when `a` failed, `b` printed no failure of its own.
    for (command, output) in [
        ("pnpm -r test", "workspaces-pnpm-bail.txt"),
        ("pnpm -r --parallel test", "workspaces-pnpm-parallel.txt"),
    ] {
        let (code, verdict, found) = run(&repo, command, output);
        assert_eq!(code, 1, "{verdict:#}");
        assert_eq!(found, [A_FAILS], "{command}: {verdict:#}");
    }
}

#[test]
fn pnpm_s_shortened_prefix_names_the_one_package_whose_path_ends_so() {
    let repo = monorepo(true, "services/payments-reconciliation/ledger-adapter");
    let (code, verdict, found) = run(&repo, "pnpm -r --no-bail test", "workspaces-pnpm-long.txt");
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(
        found,
        [
            B_FAILS,
            "services/payments-reconciliation/ledger-adapter/sum.test.js:4 expect(received).toBe(expected) // Object.is equality",
        ],
        "{verdict:#}"
    );
}

#[test]
fn yarn_workspaces_are_placed_by_their_names() {
    let repo = monorepo(false, "packages/a");
    // yarn 4 with `-v` prefixes each line with the package's name.
    let (code, verdict, found) = run(
        &repo,
        "yarn workspaces foreach -A --no-private -piv -j unlimited run test",
        "workspaces-yarn4.txt",
    );
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(found, [B_FAILS, A_FAILS], "{verdict:#}");
    // yarn 1 names each package before its run, and stops at the first.
    let (code, verdict, found) = run(&repo, "yarn workspaces run test", "workspaces-yarn1.txt");
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(found, [A_FAILS], "{verdict:#}");
}

#[test]
fn a_failure_no_mark_places_is_still_reported_at_the_root() {
    // yarn 4 without `-v` says nothing of which package a line is from:
    // the failure is kept, named as jest printed it.
    let repo = monorepo(false, "packages/a");
    let (code, verdict, found) = run(
        &repo,
        "yarn workspaces foreach -A --no-private run test",
        "workspaces-yarn4-unprefixed.txt",
    );
    assert_eq!(code, 1, "{verdict:#}");
    assert_eq!(
        found,
        ["sum.test.js:4 expect(received).toBe(expected) // Object.is equality"],
        "{verdict:#}"
    );
    // A package the workspace does not list (`b`'s manifest gone): its
    // failure is read apart from `a`'s, never placed in `a`.
    std::fs::remove_file(repo.path().join("packages/b/package.json")).unwrap();
    let (_, verdict, found) = run(&repo, "npm test", "workspaces-npm.txt");
    assert_eq!(
        found,
        [
            A_FAILS,
            "mul.test.js:5 AssertionError: expected 6 to be 5 // Object.is equality"
        ],
        "{verdict:#}"
    );
    let repo = monorepo(true, "packages/a");
    std::fs::remove_file(repo.path().join("packages/b/package.json")).unwrap();
    let (_, verdict, found) = run(&repo, "pnpm -r --no-bail test", "workspaces-pnpm.txt");
    assert_eq!(
        found,
        [
            A_FAILS,
            "mul.test.js:5 AssertionError: expected 6 to be 5 // Object.is equality"
        ],
        "{verdict:#}"
    );
}

#[test]
fn diagnostics_parse_reads_a_saved_workspace_log_from_the_workspace() {
    let repo = monorepo(true, "packages/a");
    let out = repo.phasegate(&[
        "diagnostics",
        "parse",
        "--format",
        "json",
        &recording("workspaces-pnpm.txt"),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let files: Vec<String> = out.json()["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{}:{}", d["file"].as_str().unwrap_or("-"), d["line"]))
        .collect();
    assert_eq!(
        files,
        ["packages/a/sum.test.js:4", "packages/b/mul.test.js:5"]
    );
}
