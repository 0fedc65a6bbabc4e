//! First use on Node/TypeScript projects: detection, defaults, findings.

use crate::support::{check, write_executable, TestRepo};

/// The `package.json` `npm init -y` writes (npm 11.19.1), with its `test`
/// script that fails on purpose.
const NPM_INIT_PACKAGE: &str = r#"{
  "name": "app",
  "version": "1.0.0",
  "description": "",
  "main": "index.js",
  "scripts": {
    "test": "echo \"Error: no test specified\" && exit 1"
  },
  "keywords": [],
  "author": "",
  "license": "ISC",
  "type": "commonjs"
}
"#;

/// A `PATH` with a directory of the test's own programs first.
pub(crate) fn path_with(dir: &std::path::Path) -> String {
    let inherited = std::env::vars_os()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{}:{inherited}", dir.display())
}

#[test]
fn init_on_a_fresh_npm_project_says_why_no_check_runs_and_offers_its_scripts() {
    let repo = TestRepo::new();
    repo.write("package.json", NPM_INIT_PACKAGE);
    repo.write("package-lock.json", "{}\n");
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    // It was told to try a run that would pass having run nothing.
    assert!(
        !run.stdout.contains("run `phasegate run` to try it"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("no check runs yet: package.json has no `test`, `lint` or `build` script to run (the `test` script `npm init` writes fails on purpose)"),
        "{run:?}"
    );
    let text = repo.read("phasegate.toml");
    assert!(text.contains("for a node (npm) project"), "{text}");
    // Not "no project phasegate knows", nor `make test`: npm's commands.
    assert!(!text.contains("No project phasegate knows"), "{text}");
    assert!(!text.contains("make test"), "{text}");
    for offered in [
        "# tests = \"npm test\"",
        "# lint = \"npm run lint\"",
        "# build = \"npm run build\"",
        "# { name = \"build\", on_failure = \"block\" },",
    ] {
        assert!(text.contains(offered), "{offered}: {text}");
    }
    // Uncommenting what it offers makes a file that loads and runs npm.
    let uncommented = text
        .replace("# tests = ", "tests = ")
        .replace("  # { name = \"tests\"", "  { name = \"tests\"");
    repo.config(&uncommented);
    let (_, verdict) = repo.verdict(&["--all-files", "--check", "tests"]);
    assert_eq!(check(&verdict, "tests")["argv"][0][0], "npm", "{verdict:#}");
}

#[test]
fn init_warns_when_the_typescript_npx_would_run_is_not_installed() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\"name\": \"app\", \"scripts\": {\"test\": \"vitest run\"}}\n",
    );
    repo.write("package-lock.json", "{}\n");
    repo.write(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true}}\n",
    );
    // npm is there (a stand-in: `init` only looks programs up); the
    // project's dependencies were never installed.
    let bin = repo.home().join("bin");
    for program in ["npm", "npx"] {
        write_executable(&bin.join(program), "#!/bin/sh\nexit 0\n");
    }
    let path = path_with(&bin);
    let run = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("warning: `tsc` is not installed (not in node_modules/.bin), and check `typecheck` runs it"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("help: install the project's dependencies (`npm install`), or add `typescript` to them (`npm install --save-dev typescript`)"),
        "{run:?}"
    );
    // Installed, it is found where npx finds it, and nothing is said.
    write_executable(
        &repo.path().join("node_modules/.bin/tsc"),
        "#!/bin/sh\nexit 0\n",
    );
    let run = repo.phasegate_with(&["init", "--force"], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("tsc"), "{run:?}");
}

#[test]
fn a_workspace_root_with_no_script_checks_its_packages_where_they_fail() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\n  \"name\": \"mono\",\n  \"private\": true,\n  \"workspaces\": [\"packages/*\"]\n}\n",
    );
    repo.write("package-lock.json", "{}\n");
    repo.write(
        "packages/core/package.json",
        "{ \"name\": \"@mono/core\", \"version\": \"1.0.0\", \"scripts\": { \"test\": \"jest\" } }\n",
    );
    repo.write(
        "packages/core/sum.test.js",
        "const sum = (a, b) => a + b;\n\ntest(\"sums\", () => {\n  expect(sum(1, 2)).toBe(4);\n});\n",
    );
    repo.write(
        "packages/types/package.json",
        "{ \"name\": \"@mono/types\" }\n",
    );
    repo.commit_all("workspace");
    // npm, as a stand-in that prints what the real one printed there.
    let recording = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/node/workspace-member-jest.txt"
    );
    let bin = repo.home().join("bin");
    write_executable(
        &bin.join("npm"),
        &format!("#!/bin/sh\ncat '{recording}'\nexit 1\n"),
    );
    let path = path_with(&bin);
    // The root's package.json runs nothing: it passed, having run nothing.
    let run = repo.phasegate_with(
        &["run", "--format", "json", "--all-files"],
        &[("PATH", &path)],
    );
    let verdict = run.json();
    assert_eq!(run.code, 1, "{verdict:#}");
    let tests = check(&verdict, "packages-core-tests");
    assert_eq!(tests["status"], "failed", "{verdict:#}");
    let found = &verdict["diagnostics"][0];
    assert_eq!(found["file"], "packages/core/sum.test.js", "{verdict:#}");
    assert_eq!(found["line"], 4, "{verdict:#}");
    assert_eq!(
        found["message"],
        "expect(received).toBe(expected) // Object.is equality\nExpected: 4\nReceived: 3",
        "{verdict:#}"
    );
    // A commit to the root's README runs none of them.
    repo.stage("README.md", "# mono\n");
    let (code, verdict) = repo.verdict_with(&[], &[("PATH", &path)]);
    assert_eq!(code, 0, "{verdict:#}");
    assert_eq!(check(&verdict, "packages-core-tests")["status"], "skipped");
    // And `init` writes those checks down.
    let run = repo.phasegate_with(&["init"], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains(r#"{ name = "packages-core-tests", command = "npm test", cwd = "packages/core", files = ["packages/core/**"]"#),
        "{text}"
    );
    assert!(!text.contains("npm init"), "{text}");
}

/// A package below a workspace root goes by the lock file of the nearest
/// directory above it that has one, the root's last, as its package
/// manager finds its workspace's: a pnpm monorepo's packages run `pnpm`,
/// not `npm`, and a package with a lock file of its own keeps it.
#[test]
fn packages_of_a_workspace_go_by_its_root_s_lock_file() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        "{\n  \"name\": \"mono\",\n  \"private\": true\n}\n",
    );
    repo.write("pnpm-workspace.yaml", "packages:\n  - \"packages/*\"\n");
    repo.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    for package in ["core", "legacy"] {
        repo.write(
            &format!("packages/{package}/package.json"),
            &format!(
                "{{ \"name\": \"@mono/{package}\", \"scripts\": {{ \"test\": \"vitest run\" }} }}\n"
            ),
        );
    }
    repo.write("packages/legacy/yarn.lock", "# yarn lockfile v1\n");
    repo.commit_all("workspace");
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains(
            r#"{ name = "packages-core-tests", command = "pnpm test", cwd = "packages/core""#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"{ name = "packages-legacy-tests", command = "yarn test", cwd = "packages/legacy""#
        ),
        "{text}"
    );
    assert!(!text.contains("\"npm test\""), "{text}");
}

/// Stand-ins for `npm`, `pnpm` and `yarn` in a directory of the test's
/// own, each writing `<directory> <program> <arguments>` to `calls` and
/// passing; and what they wrote, as directories relative to `repo`.
struct Managers {
    dir: tempfile::TempDir,
}

impl Managers {
    fn new() -> Managers {
        let managers = Managers {
            dir: tempfile::tempdir().unwrap(),
        };
        let calls = managers.dir.path().join("calls");
        for program in ["npm", "pnpm", "yarn"] {
            write_executable(
                &managers.dir.path().join(program),
                &format!(
                    "#!/bin/sh\necho \"$(pwd) {program} $*\" >> '{}'\n",
                    calls.display()
                ),
            );
        }
        managers
    }

    fn take(&self, repo: &TestRepo) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.path().join("calls")).unwrap_or_default();
        let root = repo.path().to_string_lossy().into_owned();
        let mut calls: Vec<String> = text
            .lines()
            .map(|line| line.replace(&root, "").trim_start_matches('/').to_string())
            .collect();
        calls.sort();
        calls
    }
}

/// A pnpm workspace root with no script of its own, its lock file at the
/// root, and a package below it with none.
fn write_pnpm_workspace(repo: &TestRepo) {
    repo.write(
        "package.json",
        "{\n  \"name\": \"mono\",\n  \"private\": true\n}\n",
    );
    repo.write("pnpm-workspace.yaml", "packages:\n  - \"packages/*\"\n");
    repo.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    repo.write(
        "packages/core/package.json",
        "{ \"name\": \"@mono/core\", \"scripts\": { \"test\": \"vitest run\" } }\n",
    );
    repo.write("packages/core/index.js", "export const x = 1;\n");
}

/// Where git tracks nothing yet, the projects below the root are found by
/// walking the work tree: the root's lock file is found there too, and a
/// package with none of its own goes by it.
#[test]
fn a_walked_workspace_s_packages_go_by_its_root_s_lock_file() {
    let repo = TestRepo::new();
    write_pnpm_workspace(&repo);
    assert_eq!(repo.git(&["ls-files"]), "", "nothing is tracked");
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = repo.read("phasegate.toml");
    assert!(
        text.contains(
            r#"{ name = "packages-core-tests", command = "pnpm test", cwd = "packages/core""#
        ),
        "{text}"
    );
    assert!(!text.contains("\"npm test\""), "{text}");
}

/// A gate read from a ref (`--config-from-ref`) finds the ref's projects
/// and the ref's lock files: the branch that deletes the root's
/// `pnpm-lock.yaml` and commits an npm one still has its packages run by
/// pnpm, as the target branch says.
#[test]
fn a_refs_workspace_packages_go_by_the_refs_root_lock_file() {
    let managers = Managers::new();
    let repo = TestRepo::new();
    write_pnpm_workspace(&repo);
    repo.commit_all("workspace");
    repo.git(&["checkout", "-qb", "feature"]);
    repo.git(&["rm", "-q", "pnpm-lock.yaml"]);
    repo.write("package-lock.json", "{}\n");
    repo.write("packages/core/index.js", "export const x = 2;\n");
    repo.commit_all("feature");
    let path = managers.dir.path().display().to_string() + ":/usr/bin:/bin";
    let (code, v) = repo.verdict_with(&crate::ci_cargo::FROM_MAIN, &[("PATH", &path)]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        check(&v, "packages-core-tests")["status"],
        "passed",
        "{v:#}"
    );
    assert_eq!(managers.take(&repo), ["packages/core pnpm test"], "{v:#}");
}
