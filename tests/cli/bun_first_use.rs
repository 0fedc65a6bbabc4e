//! A new user's first runs on a bun project.
//!
//! What `phasegate run` does with no configuration, what `phasegate init`
//! writes and warns of, and a first commit through the installed hook, on
//! projects as `bun init -y` makes them. bun is stood for by scripts on a
//! `PATH` the test controls that print what bun 1.4.5 (the npm package
//! `bun`) printed, recorded in a project at `/tmp/bunrec/p1` (stack frames
//! name absolute paths, replaced here by the test repository's).

use crate::first_use::Tools;
use crate::support::{check, output, write_executable, Run, TestRepo, BIN};

/// The `package.json` `bun init -y` wrote (bun 1.4.5), with a `lint`
/// script the user added.
const PACKAGE_JSON: &str = r#"{
  "name": "app",
  "module": "index.ts",
  "type": "module",
  "private": true,
  "scripts": {
    "lint": "eslint ."
  },
  "devDependencies": {
    "@types/bun": "latest"
  },
  "peerDependencies": {
    "typescript": "^7"
  }
}
"#;

/// The head of the text lock file bun 1.4.5 writes (`bun.lock`).
const BUN_LOCK: &str =
    "{\n  \"lockfileVersion\": 2,\n  \"configVersion\": 1,\n  \"workspaces\": {}\n}\n";

/// The head of the binary lock file older bun versions write (`bun.lockb`).
const BUN_LOCKB: &str = "#!/usr/bin/env bun\nbun-lockfile-format-v0\n";

/// A bun project with TypeScript, `lock` its lock file.
fn bun_project(lock: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("package.json", PACKAGE_JSON)
        .write(
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        )
        .write("index.ts", "console.log(\"Hello via Bun!\");\n")
        .write(".gitignore", "node_modules\n")
        .write(
            lock,
            if lock == "bun.lockb" {
                BUN_LOCKB
            } else {
                BUN_LOCK
            },
        )
        .commit_all("bun init -y");
    repo
}

/// `bunx tsc --noEmit` (bun 1.4.5) in a project with no `typescript`
/// installed and an empty bun cache: bunx installs `typescript@latest`
/// from the registry into its cache, runs it, and exits 0 (status 0).
const BUNX_FETCHES: &str =
    "Resolving dependencies\nResolved, downloaded and extracted [45]\nSaved lockfile\n";

/// `bunx --no-install tsc --noEmit` (bun 1.4.5) in the same project: it
/// stops, exit 1.
const BUNX_NO_INSTALL: &str =
    "error: Could not find an existing 'tsc' binary to run. Stopping because --no-install was passed.\n";

/// A `bunx` that does what bun 1.4.5's does where `typescript` is not
/// installed: without `--no-install` it notes in `fetched` beside itself
/// that it ran code from the registry.
fn bunx_without_typescript(programs: &Tools) {
    let fetched = programs.file("fetches.txt", BUNX_FETCHES);
    let refused = programs.file("no-install.txt", BUNX_NO_INSTALL);
    let marker = programs.beside("fetched");
    programs.add(
        "bunx",
        &format!(
            "for arg in \"$@\"; do\n  if [ \"$arg\" = --no-install ]; then cat '{refused}'; exit 1; fi\ndone\ntouch '{}'\ncat '{fetched}'\nexit 0\n",
            marker.display()
        ),
    );
    programs.add("bun", "exit 0\n");
}

#[test]
fn the_bun_typecheck_never_lets_bunx_fetch_typescript_from_the_registry() {
    let programs = Tools::new();
    bunx_without_typescript(&programs);
    let path = programs.path();
    let repo = bun_project("bun.lock");
    let (code, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    let typecheck = check(&verdict, "typecheck");
    assert_eq!(
        typecheck["argv"][0],
        serde_json::json!(["bunx", "--no-install", "tsc", "--noEmit"]),
        "{verdict:#}"
    );
    assert!(
        !programs.beside("fetched").exists(),
        "bunx installed a package"
    );
    // Not a pass on a compiler fetched unasked: a missing tool, with what
    // installs it.
    assert_eq!(typecheck["status"], "missing", "{verdict:#}");
    let message = verdict["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["check"] == "typecheck")
        .map(|d| d["message"].as_str().unwrap().to_string())
        .unwrap_or_default();
    assert!(
        message.starts_with("`tsc` is not installed")
            && message.contains(
                "install the project's dependencies (`bun install`), or add `typescript` to them"
            ),
        "{message}"
    );
    assert_eq!(verdict["status"], "incomplete", "{verdict:#}");
    assert_eq!(code, 3);

    // `init` writes the same command, and says so before the first commit.
    let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        repo.read("phasegate.toml")
            .contains("typecheck = \"bunx --no-install tsc --noEmit\"\n"),
        "{}",
        repo.read("phasegate.toml")
    );
    assert!(
        init.stderr.contains("help: install the project's dependencies (`bun install`), or add `typescript` to them (`bun add --dev typescript`)"),
        "{init:?}"
    );
}

#[test]
fn without_bun_the_missing_tool_says_bunx_comes_with_bun() {
    // Nothing of bun on the `PATH`: the lock file alone says bun.
    let programs = Tools::new();
    let path = programs.path();
    for lock in ["bun.lock", "bun.lockb"] {
        let repo = bun_project(lock);
        let run = repo.phasegate_with(&["run", "--all-files"], &[("PATH", &path)]);
        assert_eq!(run.code, 3, "{lock}: {run:?}");
        for said in [
            "`bun` is not installed (not found on PATH); install bun, which brings `bunx` with it (https://bun.sh/docs/installation, or `npm install --global bun`)",
            "`bunx` is not installed (not found on PATH); install bun, which brings `bunx` with it",
            "the checks are phasegate's defaults for node (bun)",
        ] {
            assert!(run.stdout.contains(said), "{lock}: {said}\n{}", run.stdout);
        }
        let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
        assert_eq!(init.code, 0, "{lock}: {init:?}");
        assert!(
            init.stdout.contains("(node (bun))"),
            "{lock}: {}",
            init.stdout
        );
        assert!(
            init.stderr.contains("warning: `bunx` is not installed (not found on PATH), and check `typecheck` runs it")
                && init.stderr.contains("help: install bun, which brings `bunx` with it (https://bun.sh/docs/installation, or `npm install --global bun`), or add `on_missing = \"warn\"`"),
            "{lock}: {init:?}"
        );
    }
}

/// `bun run lint` (bun 1.4.5) where the script's `eslint` is not
/// installed: bun runs scripts in bash, whose words these are; exit 127.
const BUN_RUN_LINT_MISSING: &str = "$ eslint .\n/usr/bin/bash: line 1: eslint: command not found\nerror: script \"lint\" exited with code 127\n";

#[test]
fn a_bun_script_whose_tool_is_not_installed_is_a_dependency_to_install() {
    let programs = Tools::new();
    let printed = programs.file("lint.txt", BUN_RUN_LINT_MISSING);
    programs.add("bun", &format!("cat '{printed}'\nexit 127\n"));
    programs.add("bunx", "exit 0\n");
    let path = programs.path();
    let repo = bun_project("bun.lock");
    let (code, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    let lint = check(&verdict, "lint");
    // Not "script lint exited with code 127", a failure of the code.
    assert_eq!(lint["status"], "missing", "{verdict:#}");
    let summary = verdict["summary"].to_string();
    assert!(
        summary.contains("`eslint` is not installed")
            && summary
                .contains("install the project's dependencies (`bun install`), or add it to them"),
        "{summary}"
    );
    assert_eq!(code, 3, "{verdict:#}");
}

/// `NO_COLOR=1 bun test` (bun 1.4.5), exit 1: `test/sum.test.ts` with a
/// failing `toBe` and an error thrown in `src/sum.ts`, and
/// `test/gone.test.ts`, which imports a module that does not exist.
/// `{ROOT}` stands for the project's directory.
const BUN_TEST: &str = r#"bun test v1.4.5 (a7733435c)

test/sum.test.ts:
1 | import { expect, test } from "bun:test";
2 | import { parse, sum } from "../src/sum";
3 | 
4 | test("adds", () => {
5 |   expect(sum(1, 2)).toBe(4);
                        ^
error: expect(received).toBe(expected)

Expected: 4
Received: 3

      at <anonymous> ({ROOT}/test/sum.test.ts:5:21)
(fail) adds [0.21ms]
2 |   return a + b;
3 | }
4 | 
5 | export function parse(text: string): number {
6 |   if (text === "") {
7 |     throw new Error("empty input");
                                     ^
error: empty input
      at parse ({ROOT}/src/sum.ts:7:34)
      at <anonymous> ({ROOT}/test/sum.test.ts:9:10)
(fail) parses empty [0.07ms]

test/gone.test.ts:

# Unhandled error between tests
-------------------------------
error: Cannot find module '../src/gone' from '{ROOT}/test/gone.test.ts'
-------------------------------


 0 pass
 3 fail
 1 error
 1 expect() calls
Ran 3 tests across 2 files. [12.00ms]
"#;

/// `NO_COLOR=1 bunx --no-install tsc --noEmit` (bun 1.4.5, TypeScript
/// 7.0.2 installed in the project) on the same project, exit 1.
const BUNX_TSC: &str = "src/bad.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.\ntest/gone.test.ts(2,25): error TS2307: Cannot find module '../src/gone' or its corresponding type declarations.\n";

const SUM_TS: &str = r#"export function sum(a: number, b: number): number {
  return a + b;
}

export function parse(text: string): number {
  if (text === "") {
    throw new Error("empty input");
  }
  return Number(text);
}
"#;

const SUM_TEST_TS: &str = r#"import { expect, test } from "bun:test";
import { parse, sum } from "../src/sum";

test("adds", () => {
  expect(sum(1, 2)).toBe(4);
});

test("parses empty", () => {
  expect(parse("")).toBe(0);
});
"#;

const GONE_TEST_TS: &str = r#"import { expect, test } from "bun:test";
import { nothing } from "../src/gone";

test("never runs", () => {
  expect(nothing).toBe(1);
});
"#;

/// `git ARGS` with the installed hook finding the phasegate under test
/// and the stand-in programs.
fn git_through_hook(repo: &TestRepo, args: &[&str], path: &str) -> Run {
    let mut git = repo.command("git");
    git.args(args)
        .env("PHASEGATE_BIN", BIN)
        .env("PATH", format!("{path}:/usr/local/bin"));
    output(&git.output().unwrap())
}

#[test]
fn a_first_commit_on_a_failing_bun_project_is_stopped_at_each_finding() {
    let repo = TestRepo::new();
    let programs = Tools::new();
    let printed = programs.file(
        "test.txt",
        &BUN_TEST.replace("{ROOT}", &repo.path().to_string_lossy()),
    );
    let tsc = programs.file("tsc.txt", BUNX_TSC);
    // `bun run test` runs the `test` script, `bun test`, and says so
    // before and after what it prints (bun 1.4.5).
    programs.add(
        "bun",
        &format!(
            "[ \"$1 $2\" = 'run test' ] || exit 0\necho '$ bun test' >&2\ncat '{printed}'\necho 'error: script \"test\" exited with code 1' >&2\nexit 1\n"
        ),
    );
    programs.add("bunx", &format!("cat '{tsc}'\nexit 1\n"));
    let path = programs.path();
    repo.write(
        "package.json",
        &PACKAGE_JSON.replace("\"lint\": \"eslint .\"", "\"test\": \"bun test\""),
    )
    .write(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true}}\n",
    )
    .write("bun.lock", BUN_LOCK)
    .write(".gitignore", "node_modules\n")
    .write("src/sum.ts", SUM_TS)
    .write("src/bad.ts", "export const n: number = \"one\";\n")
    .write("test/sum.test.ts", SUM_TEST_TS)
    .write("test/gone.test.ts", GONE_TEST_TS);
    // `bun install` put TypeScript in the project (ignored, as bun's
    // `.gitignore` says).
    write_executable(
        &repo.path().join("node_modules/.bin/tsc"),
        "#!/bin/sh\nexit 0\n",
    );
    // The README's first commands: init, install, then commit.
    let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(init.stderr.is_empty(), "nothing is missing: {init:?}");
    let text = repo.read("phasegate.toml");
    for written in [
        "tests = \"bun run test\"\n",
        "typecheck = \"bunx --no-install tsc --noEmit\"\n",
    ] {
        assert!(text.contains(written), "{written}: {text}");
    }
    assert_eq!(repo.phasegate(&["install"]).code, 0);
    repo.git(&["add", "-A"]);
    let commit = git_through_hook(&repo, &["commit", "-qm", "first"], &path);
    assert_ne!(commit.code, 0, "the commit went through: {commit:?}");
    let said = format!("{}{}", commit.stdout, commit.stderr);
    for finding in [
        "test/sum.test.ts:5:21 error [adds] expect(received).toBe(expected)",
        "│ Expected: 4",
        "src/sum.ts:7:34 error [parses empty] empty input",
        "test/gone.test.ts error [unhandled error between tests] Cannot find module '../src/gone' from 'test/gone.test.ts'",
        "src/bad.ts:1:14 error TS2322 Type 'string' is not assignable to type 'number'.",
        "test/gone.test.ts:2:25 error TS2307 Cannot find module '../src/gone'",
        "failed — fix what is listed above and run again (exit 1)",
    ] {
        assert!(said.contains(finding), "{finding}\n{said}");
    }
    assert!(!said.contains(&*repo.path().to_string_lossy()), "{said}");
    assert!(
        repo.git(&["rev-list", "--all"]).is_empty(),
        "a commit was made"
    );
}

#[test]
fn a_project_without_a_test_script_is_told_no_check_runs_its_tests_and_offered_one() {
    // `bun init -y` writes no `test` script: the checks run no tests, and
    // neither the run nor `init` may pass over that without a word.
    let programs = Tools::new();
    bunx_without_typescript(&programs);
    let path = programs.path();
    let repo = bun_project("bun.lock");
    let (_, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    assert!(
        verdict["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != "tests"),
        "{verdict:#}"
    );
    let notes = verdict["notes"].to_string();
    assert!(
        notes.contains("defaults for node (bun), which run no tests: package.json has no `test` script (bun's own runner, `bun test`, needs none, but fails where there is no test file)"),
        "{notes}"
    );

    let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains("no check runs the tests: package.json has no `test` script; bun's own runner, `bun test`, needs none, but fails where there is no test file: `tests = \"bun test\"` is offered, commented, in phasegate.toml"),
        "{init:?}"
    );
    let written = repo.read("phasegate.toml");
    assert!(written.contains("\n# tests = \"bun test\"\n"), "{written}");
    std::fs::remove_file(repo.path().join("phasegate.toml")).unwrap();

    // npm's `test` is the script's: it is offered once there is one.
    repo.write(
        "package.json",
        "{\"name\": \"app\", \"scripts\": {\"lint\": \"eslint .\"}}\n",
    );
    std::fs::remove_file(repo.path().join("bun.lock")).unwrap();
    let (_, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    assert!(
        verdict["notes"].to_string().contains("defaults for node (npm), which run no tests: package.json has no `test` script (add one; the one `npm init` writes fails on purpose and is not one)"),
        "{verdict:#}"
    );
    let init = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        repo.read("phasegate.toml").contains("# package.json has no `test` script, so no check runs the tests: add one,\n# then uncomment this and add { name = \"tests\" } to a phase.\n# tests = \"npm test\"\n"),
        "{}",
        repo.read("phasegate.toml")
    );

    // With one, the tests run and nothing is said.
    repo.write(
        "package.json",
        "{\"name\": \"app\", \"scripts\": {\"test\": \"node --test\"}}\n",
    );
    let (_, verdict) = repo.verdict_with(&["--all-files"], &[("PATH", &path)]);
    assert!(
        !verdict["notes"].to_string().contains("run no tests"),
        "{verdict:#}"
    );
}
