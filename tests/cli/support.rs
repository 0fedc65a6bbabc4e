//! A real temporary git repository and the real `phasegate` binary, isolated
//! from the user's git configuration and environment.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::Regex;

pub const BIN: &str = env!("CARGO_BIN_EXE_phasegate");

pub struct TestRepo {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

/// What one phasegate invocation did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The stdout as the one JSON document it must be.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let repo = TestRepo {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo.git(&["config", "user.name", "Test"]);
        repo
    }

    /// A directory that is not a git repository.
    pub fn plain() -> TestRepo {
        TestRepo {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// A clone of this repository's `branch`, one commit deep as CI
    /// clones, beside it; `extra` are more `git clone` options.
    pub fn shallow_clone(&self, branch: &str, name: &str, extra: &[&str]) -> PathBuf {
        // In the test's `HOME`, which goes with the test.
        let clone = self.home.path().join(name);
        let url = format!("file://{}", self.path().display());
        let clone_text = clone.to_string_lossy().into_owned();
        let mut args = vec!["clone", "-q", "--depth", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--branch", branch, &url, &clone_text]);
        self.git(&args);
        clone
    }

    /// A bare repository, for a remote to push to.
    pub fn bare() -> TestRepo {
        let repo = TestRepo::plain();
        let made = repo
            .command("git")
            .args(["init", "-q", "--bare", "."])
            .status()
            .unwrap();
        assert!(made.success());
        repo
    }

    /// A bare repository, added to this one as its remote `origin`.
    pub fn bare_origin(&self) -> TestRepo {
        let remote = TestRepo::bare();
        self.git(&["remote", "add", "origin", &remote.path().to_string_lossy()]);
        remote
    }

    pub fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn config(&self, toml: &str) -> &Self {
        self.write("phasegate.toml", toml)
    }

    pub fn write(&self, path: &str, content: &str) -> &Self {
        let full = self.dir.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(full, content).unwrap();
        self
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(path)).unwrap()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.dir.path().join(path).exists()
    }

    /// Writes a file and stages it.
    pub fn stage(&self, path: &str, content: &str) -> &Self {
        self.write(path, content);
        self.git(&["add", "--", path]);
        self
    }

    /// Stages every change and commits it.
    pub fn commit_all(&self, message: &str) -> &Self {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-qm", message]);
        self
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = self.command("git").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A linked worktree of this repository on a new branch `name`, in
    /// the test's `HOME`: removed with it however the test ends, and no
    /// other test's (two tests of one process once shared a name beside
    /// the repository).
    pub fn linked_worktree(&self, name: &str) -> PathBuf {
        let linked = self.home.path().join("worktrees").join(name);
        self.git(&["worktree", "add", "-q", &linked.to_string_lossy()]);
        linked
    }

    /// `git ARGS` in `dir` (a linked worktree, a git directory), with the
    /// test's isolated environment; its stdout.
    pub fn git_at(&self, dir: &std::path::Path, args: &[&str]) -> String {
        let out = self
            .command("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Adds `inner` as a submodule at `at`, from its local path (which
    /// git allows only when asked); the caller commits it.
    pub fn add_submodule(&self, inner: &TestRepo, at: &str) -> &Self {
        self.git(&[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &inner.path().to_string_lossy(),
            at,
        ]);
        self
    }

    /// Commits `base.md` on `main`, then a branch `feature` off it with
    /// `feature.md`, then moves `main` on with `main-only.md`; `main` is
    /// checked out at the end.
    pub fn with_feature_branch(&self) -> &Self {
        self.write("base.md", "# base\n");
        self.commit_all("base");
        self.git(&["checkout", "-qb", "feature"]);
        self.write("feature.md", "# feature\n");
        self.commit_all("feature");
        self.git(&["checkout", "-q", "main"]);
        self.write("main-only.md", "# main moved on\n");
        self.commit_all("main")
    }

    /// The test's temporary directory (`TMPDIR`), in its `HOME`: anyone
    /// may write there, as in the system's (a test runs phasegate as
    /// another user too).
    pub fn temp(&self) -> PathBuf {
        let temp = self.home.path().join("tmp");
        if !temp.is_dir() {
            std::fs::create_dir_all(&temp).unwrap();
            std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o1777)).unwrap();
        }
        temp
    }

    /// The test's `HOME`.
    pub fn home(&self) -> PathBuf {
        self.home.path().to_path_buf()
    }

    /// Where this repository's temporary checkouts go: in the test's
    /// `HOME`'s cache directory.
    pub fn snapshots_dir(&self) -> PathBuf {
        let git = std::fs::canonicalize(self.dir.path().join(".git")).unwrap();
        let root = std::fs::canonicalize(self.dir.path()).unwrap();
        phasegate::state::snapshots_dir(
            &self.home.path().join(".cache"),
            &git.join("phasegate"),
            &root,
        )
    }

    /// Writes the test's global git configuration (`GIT_CONFIG_GLOBAL`,
    /// outside `HOME`, so only a reader of that variable finds it).
    pub fn global_git_config(&self, text: &str) -> std::path::PathBuf {
        let path = self.home.path().join("gitconfig");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A command with the test's isolated environment, in the repository.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.dir.path())
            .env("HOME", self.home.path())
            // What phasegate and the checks keep in the temporary
            // directory (a run's state outside a repository) goes with
            // the test too.
            .env("TMPDIR", self.temp())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.path().join("gitconfig"))
            .env_remove("NO_COLOR")
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITLAB_CI");
        // Nor does the CI the suite runs in say what a test's run selects.
        for (key, _) in std::env::vars_os() {
            let name = key.to_string_lossy();
            if name.starts_with("PHASEGATE_")
                || name.starts_with("GITHUB_")
                || name.starts_with("CI_")
            {
                cmd.env_remove(key);
            }
        }
        // Run from a git hook, the suite must still reach its own
        // repositories, never the one being committed.
        for key in phasegate::runner::GIT_LOCAL_ENV {
            cmd.env_remove(key);
        }
        cmd
    }

    pub fn phasegate(&self, args: &[&str]) -> Run {
        self.phasegate_with(args, &[])
    }

    /// phasegate run with `input` on its standard input, its output as it
    /// came (bytes a test may need whole).
    pub fn phasegate_fed(&self, args: &[&str], input: &[u8]) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .command(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }

    /// phasegate started in `dir` (a linked worktree, say), with this
    /// repository's isolated environment.
    pub fn phasegate_in(&self, dir: &std::path::Path, args: &[&str]) -> Run {
        output(
            &self
                .command(BIN)
                .args(args)
                .current_dir(dir)
                .output()
                .unwrap(),
        )
    }

    /// `phasegate_in`, with `env` set.
    pub fn phasegate_in_with(
        &self,
        dir: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Run {
        let mut cmd = self.command(BIN);
        cmd.args(args).current_dir(dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        output(&cmd.output().unwrap())
    }

    pub fn phasegate_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(BIN);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        output(&cmd.output().unwrap())
    }

    /// `phasegate run --format json ARGS` → exit code and verdict.
    pub fn verdict(&self, args: &[&str]) -> (i32, serde_json::Value) {
        self.verdict_with(args, &[])
    }

    pub fn verdict_with(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, serde_json::Value) {
        let mut all = vec!["run", "--format", "json"];
        all.extend_from_slice(args);
        let run = self.phasegate_with(&all, env);
        let json = run.json();
        (run.code, json)
    }

    /// Removes what changes from one run to the next: the temporary path,
    /// durations and run ids.
    pub fn redact(&self, text: &str) -> String {
        let text = text.replace(&self.path().to_string_lossy().into_owned(), "[REPO]");
        let text = text.replace(&self.dir.path().to_string_lossy().into_owned(), "[REPO]");
        let run_id = Regex::new(r"\d{8}T\d{6}Z-\d+(-\d+)?").unwrap();
        let text = run_id.replace_all(&text, "[RUN]");
        let duration = Regex::new(r"\b\d+(\.\d+)?(ms|s)\b").unwrap();
        duration.replace_all(&text, "[DUR]").into_owned()
    }

    /// Runs `phasegate ARGS` paused at `step` (`PHASEGATE_TEST_PAUSE_AT`)
    /// and kills it there with SIGKILL, as a crash would.
    pub fn kill_run_at(&self, step: &str, args: &[&str]) {
        let mut phasegate = self.command(BIN);
        phasegate.args(args);
        self.kill_at(step, phasegate);
    }

    /// Runs `command` (a phasegate, or what `exec`s one) paused at `step`
    /// and kills it there with SIGKILL, as a crash would.
    pub fn kill_at(&self, step: &str, mut command: std::process::Command) {
        let marker = self.path().join(".git/phasegate/paused");
        let mut child = command
            .env("PHASEGATE_TEST_PAUSE_AT", step)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&format!("the pause at `{step}`"), || {
            assert!(child.try_wait().unwrap().is_none(), "phasegate ended early");
            marker.exists().then_some(())
        });
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_file(&marker).unwrap();
    }
}

/// What `probe` finds, asked every 10 ms; the test fails when it has found
/// nothing after a minute, saying it was waiting for `what`.
pub fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let started = std::time::Instant::now();
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(started.elapsed().as_secs() < 60, "still waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Waits until phasegate, started with `PHASEGATE_TEST_PAUSE_AT=step`,
/// has written `step` to `marker`: it is paused there.
pub fn wait_for_pause(marker: &std::path::Path, step: &str) {
    wait_for(&format!("the pause at `{step}`"), || {
        (std::fs::read_to_string(marker).ok().as_deref() == Some(step)).then_some(())
    });
}

pub fn output(out: &Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The check named `name` in a verdict.
pub fn check<'a>(verdict: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    verdict["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check `{name}` in {verdict:#}"))
}

/// Whether the process `pid` is gone (or a zombie nobody reaped yet).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// A repository with `config` as its `phasegate.toml` and `a.md`
/// committed on `main`, pushed to a bare `origin` (the second), with the
/// pre-push hook installed.
pub fn pushed_repo(config: &str) -> (TestRepo, TestRepo) {
    let repo = TestRepo::new();
    repo.config(config);
    repo.write("a.md", "# a\n");
    repo.commit_all("one");
    let remote = repo.bare_origin();
    repo.git(&["push", "-q", "origin", "main"]);
    let installed = repo.phasegate(&["install", "--hook", "pre-push"]);
    assert_eq!(installed.code, 0, "{installed:?}");
    (repo, remote)
}

/// The errors `handoff validate --format json` reports for the one
/// document at `path`, each as `line:column message`.
pub fn handoff_errors(repo: &TestRepo, path: &str) -> Vec<String> {
    let run = repo.phasegate(&["handoff", "validate", "--format", "json", path]);
    let json = run.json();
    json["handoffs"][0]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{json:#}"))
        .iter()
        .map(|e| {
            format!(
                "{}:{} {}",
                e["line"],
                e["column"],
                e["message"].as_str().unwrap()
            )
        })
        .collect()
}

/// `git ARGS` in `repo` (names need not be UTF-8), with the hooks it has
/// installed finding the phasegate under test: what it did.
pub fn git_pushing<S: AsRef<std::ffi::OsStr>>(repo: &TestRepo, args: &[S]) -> Run {
    output(
        &repo
            .command("git")
            .args(args)
            .env("PHASEGATE_BIN", BIN)
            .output()
            .unwrap(),
    )
}

/// All a push printed, the hook's reports among it (git shows a hook's
/// standard output on its own standard error).
pub fn said(run: &Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

/// The full id of the commit `spec` names in `repo`.
pub fn rev(repo: &TestRepo, spec: &str) -> String {
    repo.git(&["rev-parse", spec]).trim().to_string()
}

/// The files the first batch of the check `docs` was given, after its
/// program (none when it was skipped for want of any).
/// One check, `docs`, that runs on the Markdown files selected and echoes
/// them (see `docs_files`).
pub const DOCS: &str = "[phases.implementation]\nchecks = [ { name = \"docs\", files = [\"*.md\"], command = \"echo {files}\" } ]\n";

pub fn docs_files(v: &serde_json::Value) -> Vec<String> {
    check(v, "docs")["argv"][0]
        .as_array()
        .map(|argv| {
            argv.iter()
                .skip(1)
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the repository `remote` has the ref `name`.
pub fn remote_has(remote: &TestRepo, name: impl AsRef<std::ffi::OsStr>) -> bool {
    remote
        .command("git")
        .args([
            std::ffi::OsStr::new("rev-parse"),
            "--verify".as_ref(),
            "-q".as_ref(),
        ])
        .arg(name)
        .output()
        .unwrap()
        .status
        .success()
}

/// The verdicts of the runs recorded in `repo`, oldest first.
pub fn recorded_verdicts(repo: &TestRepo) -> Vec<serde_json::Value> {
    let runs = repo.path().join(".git/phasegate/runs");
    // None before the first run.
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = entries.map(|entry| entry.unwrap().path()).collect();
    // By their ids' time, then in the order they were written: two runs
    // in one second are told apart by their process ids, which the system
    // hands out again from the bottom once they reach its limit.
    dirs.sort_by_cached_key(|dir| {
        let order = phasegate::state::run_order(dir);
        let written = std::fs::metadata(dir.join("verdict.json"))
            .and_then(|m| m.modified())
            .ok();
        (order.0.clone(), written, order)
    });
    dirs.iter()
        .map(|dir| {
            serde_json::from_slice(&std::fs::read(dir.join("verdict.json")).unwrap()).unwrap()
        })
        .collect()
}

/// Writes `text` to `path`, its directories made, with permissions `mode`.
pub fn write_mode(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Writes `text` to `path`, its directories made, as an executable file.
pub fn write_executable(path: &Path, text: &str) {
    write_mode(path, text, 0o755);
}
