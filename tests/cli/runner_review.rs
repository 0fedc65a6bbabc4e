//! Running checks: batches, escaped processes, shell mode and odd output.

use crate::support::{check, TestRepo};

#[test]
fn a_file_name_in_the_text_of_a_here_document_is_never_run() {
    // In a here-document quotes are plain text: `sh` runs the `$(...)` of
    // a name in an unquoted one, and a name holding the closing line ends
    // a quoted one early, the rest of the name read as commands.
    let repo = TestRepo::new();
    repo.stage("$(touch pwned-subst).x", "x\n");
    repo.stage("a\nEOF\ntouch pwned-line\n.x", "x\n");
    for command in [
        r"cat <<EOF\n{files}\nEOF",
        r"cat <<'EOF'\nchecking: {files}\nEOF",
        r"x=$(cat <<-EOF\n\t{files}\n\tEOF\n); echo $x",
    ] {
        repo.config(&format!(
            "[phases.implementation]\nchecks = [ {{ name = \"c\", shell = true, files = [\"*.x\"], command = \"{command}\" }} ]\n"
        ));
        let run = repo.phasegate(&["run", "--all-files"]);
        assert_eq!(run.code, 2, "{command}: {run:?}");
        assert!(
            run.stderr.contains("inside a here-document")
                && run.stderr.contains("where a file name could run as code")
                && run.stderr.contains("phasegate.toml:2:"),
            "{command}: {run:?}"
        );
        assert!(
            !repo.exists("pwned-subst") && !repo.exists("pwned-line"),
            "{command}: a file name ran as a command"
        );
    }
    // The names given as arguments reach the tool whole.
    repo.config(
        "[phases.implementation]\nchecks = [ { name = \"c\", shell = true, files = [\"*.x\"], command = \"printf '<%s>\\\\n' {files} | cat > list.txt\" } ]\n",
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        repo.read("list.txt"),
        "<$(touch pwned-subst).x>\n<a\nEOF\ntouch pwned-line\n.x>\n"
    );
}

/// Kills, when dropped, the processes whose pids a check wrote to the
/// files given, so a failing test leaves nothing running.
struct Reaper(Vec<std::path::PathBuf>);

impl Reaper {
    /// The pid written to the `n`th file, once it is there.
    fn pid(&self, n: usize) -> u32 {
        crate::support::wait_for("a pid written by the check", || {
            std::fs::read_to_string(&self.0[n])
                .ok()?
                .trim()
                .parse()
                .ok()
        })
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        for file in &self.0 {
            if let Some(pid) = std::fs::read_to_string(file)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok())
            {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Whether `pid` is gone, looking for a few seconds.
fn ends(pid: u32) -> bool {
    let started = std::time::Instant::now();
    while !crate::support::process_gone(pid) {
        if started.elapsed() > std::time::Duration::from_secs(5) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    true
}

#[test]
fn a_process_that_left_the_check_holding_its_output_is_stopped_and_named_in_the_log() {
    // `setsid` in the background, and a daemon forked under `env -i`
    // (no session, no parent, no environment in common with the check):
    // each still holds the check's output, so the check started it, and
    // it does not outlive the run.
    let repo = TestRepo::new();
    let pids = tempfile::tempdir().unwrap();
    let reaper = Reaper(vec![pids.path().join("a"), pids.path().join("b")]);
    repo.config(&format!(
        r#"[phases.implementation]
checks = [
  {{ name = "detached", shell = true, command = "setsid sh -c 'echo $$ > {a}; exec sleep 600' & echo started" }},
  {{ name = "forked", shell = true, timeout = "1s", command = "env -i setsid --fork sh -c 'echo $$ > {b}; exec sleep 600'; sleep 600" }},
]
"#,
        a = reaper.0[0].display(),
        b = reaper.0[1].display()
    ));
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 3, "{v:#}");
    assert_eq!(check(&v, "detached")["status"], "passed", "{v:#}");
    assert_eq!(check(&v, "forked")["status"], "timed_out", "{v:#}");
    for (n, name) in ["detached", "forked"].into_iter().enumerate() {
        let pid = reaper.pid(n);
        assert!(ends(pid), "`{name}` left `sleep 600` ({pid}) running");
        let log = repo.read(check(&v, name)["log"].as_str().unwrap());
        assert!(
            log.contains(&format!(
                "[phasegate: `sleep 600` (pid {pid}), which left the check's session, still held its output open; it was stopped]"
            )),
            "{name}: {log}"
        );
    }
}

#[test]
fn every_batch_of_files_runs_and_the_log_says_how_each_ended() {
    // A script is one argument, at most 128 KiB: 1,000 names of 140 bytes
    // take two batches. The first fails; the second still runs, its
    // findings and its status are kept, and the check's status is the
    // first failure's.
    let repo = TestRepo::new();
    for i in 0..1000 {
        repo.write(&format!("docs/{i:04}-{}.md", "n".repeat(130)), "");
    }
    repo.git(&["add", "-A"]);
    repo.config(
        r#"[phases.implementation]
checks = [ { name = "docs", shell = true, files = ["*.md"], command = "set -- {files}; echo \"$1:1:1: error: first of $#\"; case $1 in docs/0000-*) exit 3;; *) exit 5;; esac" } ]
"#,
    );
    let (code, v) = repo.verdict(&["--all-files"]);
    assert_eq!(code, 1, "{v:#}");
    let docs = check(&v, "docs");
    let batches = docs["argv"].as_array().unwrap().len();
    assert!(batches >= 2, "{docs:#}");
    assert_eq!(docs["exit_code"], 3, "{docs:#}");
    assert_eq!(docs["diagnostics"], batches, "{v:#}");
    let log = repo.read(docs["log"].as_str().unwrap());
    assert!(
        log.contains(&format!(
            "[phasegate: batch 1 of {batches} (its output from byte 0): exited 3]\n"
        )),
        "{log}"
    );
    for n in 2..=batches {
        assert!(
            log.contains(&format!(
                "[phasegate: batch {n} of {batches} (its output from byte "
            )),
            "{log}"
        );
    }
    assert!(log.trim_end().ends_with("): exited 5]"), "{log}");
}
