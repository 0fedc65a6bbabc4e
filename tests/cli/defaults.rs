//! No configuration: the embedded default for the detected language, and
//! `phasegate init`.

use crate::support::{check, TestRepo};

fn cargo_project(repo: &TestRepo, test_body: &str) {
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    repo.write(
        "src/lib.rs",
        &format!(
            "pub fn add(a: u32, b: u32) -> u32 {{\n    a + b\n}}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn adds() {{\n        {test_body}\n    }}\n}}\n"
        ),
    );
    repo.write(".gitignore", "/target\n");
    repo.git(&["add", "-A"]);
}

#[test]
fn a_small_cargo_project_runs_on_the_embedded_default() {
    let repo = TestRepo::new();
    cargo_project(&repo, "assert_eq!(super::add(2, 2), 4);");
    let (code, v) = repo.verdict(&["--jobs", "1"]);
    assert_eq!(code, 0, "{v:#}");
    for name in ["tests", "lint", "build", "typecheck"] {
        assert_eq!(check(&v, name)["status"], "passed", "{name}: {v:#}");
    }
    assert_eq!(v["phase"], "implementation");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("phasegate's defaults for rust") && notes.contains("`phasegate init`"),
        "the verdict says where the checks come from: {notes}"
    );

    // A failing test fails the gate and is located in the test file.
    cargo_project(&repo, "assert_eq!(super::add(2, 2), 5, \"two and two\");");
    let (code, v) = repo.verdict(&["--check", "tests"]);
    assert_eq!(code, 1, "{v:#}");
    let d = &v["diagnostics"][0];
    assert_eq!(d["file"], "src/lib.rs", "{v:#}");
    assert_eq!(d["line"], 9);
    assert_eq!(d["origin"], "test");
}

#[test]
fn no_known_language_and_no_config_runs_no_check_and_says_so() {
    let repo = TestRepo::new();
    repo.stage("notes.txt", "hello\n");
    let (code, v) = repo.verdict(&[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["checks"].as_array().unwrap().is_empty());
    assert!(v["notes"].to_string().contains("no check ran"));
}

#[test]
fn init_writes_a_config_that_loads_and_refuses_to_overwrite() {
    let repo = TestRepo::new();
    repo.write("go.mod", "module example.com/x\n\ngo 1.22\n");
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = repo.read("phasegate.toml");
    assert!(text.contains("go test ./..."), "{text}");
    assert!(text.contains("golangci-lint run ./..."), "{text}");
    assert!(text.contains("\n# format = \"gofmt -l .\"\n"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with('#')),
        "the file explains itself"
    );
    assert_eq!(repo.read(".gitignore"), "/phasegate.local.toml\n");
    assert!(
        run.stdout
            .contains("added `/phasegate.local.toml` to .gitignore"),
        "{}",
        run.stdout
    );

    let again = repo.phasegate(&["init"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    assert_eq!(repo.read("phasegate.toml"), text);
    let forced = repo.phasegate(&["init", "--force"]);
    assert_eq!(forced.code, 0);
    assert!(!forced.stdout.contains(".gitignore"), "{}", forced.stdout);
    assert_eq!(
        repo.read(".gitignore"),
        "/phasegate.local.toml\n",
        "added once"
    );

    // The file it wrote is valid: a run loads it and runs its checks. What
    // they find depends on whether Go is installed; the file is not at fault.
    let (code, v) = repo.verdict(&["--profile", "fast"]);
    assert_ne!(code, 2, "{v:#}");
    assert!(v["error"].is_null(), "{v:#}");
    assert_eq!(v["checks"].as_array().unwrap().len(), 4, "{v:#}");
}

#[test]
fn node_commands_follow_the_lock_file() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "x", "scripts": {"test": "node -e 0", "lint": "node -e 0"}}"#,
    );
    repo.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0);
    let text = repo.read("phasegate.toml");
    assert!(text.contains("pnpm test"), "{text}");
    assert!(text.contains("pnpm run lint"), "{text}");
    assert!(
        !text.contains("run build"),
        "no build script, no build check: {text}"
    );
}

#[test]
fn node_tests_run_only_when_package_json_has_a_real_test_script() {
    for package in [
        r#"{"name": "x"}"#,
        r#"{"name": "x", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
    ] {
        let repo = TestRepo::new();
        repo.write("package.json", package);
        repo.write("package-lock.json", "{}");
        repo.commit_all("init");
        let (code, v) = repo.verdict(&["--all-files"]);
        assert_eq!(code, 0, "{package}: {v:#}");
        assert!(
            v["checks"].as_array().unwrap().is_empty(),
            "{package}: {v:#}"
        );
        assert_eq!(repo.phasegate(&["init"]).code, 0);
        let text = repo.read("phasegate.toml");
        // Offered as a comment, never a command a check runs.
        assert!(
            !text.contains("\ntests = \"npm test\""),
            "{package}: {text}"
        );
        assert!(
            text.contains("\n# tests = \"npm test\""),
            "{package}: {text}"
        );
    }
}

#[test]
fn a_script_whose_tool_is_not_installed_is_a_missing_tool_not_a_failure() {
    // The project's lint script names eslint, and nothing is installed:
    // `npm run lint` has the script's `sh` say so and exits 127. This
    // machine's npm, run for real.
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "x", "version": "1.0.0", "scripts": {"lint": "eslint ."}}"#,
    );
    repo.write("package-lock.json", "{}");
    repo.commit_all("init");
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    let lint = crate::support::check(&v, "lint");
    assert_eq!(lint["status"], "missing", "{v:#}");
    assert!(
        lint["reason"]
            .to_string()
            .contains("`eslint` is not installed"),
        "{v:#}"
    );
    // Under fast, a missing tool is skipped and said: the run proceeds.
    let (code, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(crate::support::check(&v, "lint")["status"], "skipped");
}

#[test]
fn a_tsconfig_without_package_json_runs_no_package_manager() {
    let repo = TestRepo::new();
    repo.write("tsconfig.json", "{}");
    repo.commit_all("init");
    let (_, v) = repo.verdict(&["--all-files", "--profile", "fast"]);
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["typecheck"], "{v:#}");
    assert_eq!(repo.phasegate(&["init"]).code, 0);
    let text = repo.read("phasegate.toml");
    assert!(text.contains("typecheck = \"tsc --noEmit\""), "{text}");
    for tool in ["npm", "npx", "bun", "pnpm", "yarn"] {
        assert!(
            !text.lines().any(|l| l.contains(&format!("\"{tool} "))),
            "{tool}: {text}"
        );
    }
}

#[test]
fn init_never_writes_through_a_symbolic_link() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("outside.toml");
    let link = repo.path().join("phasegate.toml");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    // A dangling link is there all the same.
    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert!(
        !target.exists(),
        "nothing is created outside the repository"
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());

    // --force replaces the link itself, never what it points to.
    std::fs::write(&target, "mine\n").unwrap();
    let run = repo.phasegate(&["init", "--force"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine\n");
    let written = std::fs::symlink_metadata(&link).unwrap();
    assert!(written.is_file(), "{written:?}");
    assert!(repo.read("phasegate.toml").contains("[gate]"));
}

#[test]
fn init_leaves_a_gitignore_that_is_a_symbolic_link_alone() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("ignore-rules");
    std::fs::write(&target, "*.o\n").unwrap();
    std::os::unix::fs::symlink(&target, repo.path().join(".gitignore")).unwrap();

    let run = repo.phasegate(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "*.o\n",
        "the file the link points to is not changed"
    );
    assert!(
        run.stderr.contains("symbolic link") && run.stderr.contains("/phasegate.local.toml"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("added `/phasegate.local.toml`"),
        "{}",
        run.stdout
    );
}
