#!/usr/bin/env python3
"""Measures phasegate against the bare check it runs, side by side in one run.

  python3 bench/gate.py [PATH-TO-PHASEGATE]

Prints figures; asserts nothing. Targets (see README "Performance"):
overhead of `phasegate run` with one check `true` under 5 ms; peak memory
under 50 MB while a check prints 200 MB; wall time within 1.5x of the check
alone when it prints 300 MB.
"""

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = 200


def peak_rss_kib(argv, cwd):
    """Runs argv in a fresh interpreter and returns the peak RSS of the
    largest process it waited for (phasegate itself: the checks it spawns
    are a few MB)."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, *argv], cwd=cwd, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def wall(argv, cwd, rounds, stdout=subprocess.DEVNULL, before=None):
    times = []
    for _ in range(rounds):
        if before:
            before()
        # Start every round with the disk's write-back done.
        os.sync()
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, stdout=stdout, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def interleaved(commands, cwd, rounds):
    """The median wall time of each command, run in turn round by round."""
    times = [[] for _ in commands]
    for _ in range(rounds):
        for argv, out in zip(commands, times):
            out.extend(wall(argv, cwd, 1))
    return [statistics.median(t) for t in times]


REPOS = []


def repo_with(check_command):
    repo = tempfile.mkdtemp(prefix="phasegate-bench-")
    REPOS.append(repo)
    subprocess.run(["git", "init", "-q", repo], check=True)
    with open(os.path.join(repo, "phasegate.toml"), "w") as f:
        f.write(
            "[phases.implementation]\n"
            f"checks = [ {{ name = \"c\", shell = true, command = \"{check_command}\" }} ]\n"
        )
    return repo


def main():
    phasegate = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/phasegate")
    print(f"phasegate: {phasegate}")

    # 1. Overhead: one check `true`, against `true` alone.
    repo = repo_with("true")
    gate = [phasegate, "run", "--format", "json"]
    wall(gate, repo, 10)  # warm the page cache
    # In turn, round by round, so that a change in the machine's state
    # during the measurement weighs on both alike.
    b, g = (t * 1000 for t in interleaved([["true"], gate], repo, ROUNDS))
    print(f"overhead   true alone {b:6.2f} ms | phasegate run {g:6.2f} ms | overhead {g - b:6.2f} ms (median of {ROUNDS}; target < 5 ms)")

    # 2. Peak memory while a check prints 200 MB.
    repo = repo_with("yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000")
    kib = peak_rss_kib(gate, repo)
    print(f"memory     check prints 200 MB: phasegate peak RSS {kib / 1024:6.1f} MB (target < 50 MB)")

    # 3. Wall time on a check that prints 300 MB, against the check alone
    #    with its output read through a pipe (as a terminal or a CI log
    #    would), and alone writing to a file (phasegate keeps the full log).
    command = "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 300000000"
    repo = repo_with(command)
    sink = os.path.join(repo, "alone.out")
    alone = wall(["sh", "-c", f"{command} | cat > /dev/null"], repo, 5)
    to_file = wall(["sh", "-c", f"{command} > {sink}"], repo, 5, before=lambda: os.path.exists(sink) and os.remove(sink))
    # Each run keeps a 300 MB log; remove the previous one, as pruning
    # would, so the disk's write-back of old logs is not what is measured.
    runs = os.path.join(repo, ".git", "phasegate", "runs")
    gated = wall(gate, repo, 5, before=lambda: shutil.rmtree(runs, ignore_errors=True))
    a, f, g = statistics.median(alone), statistics.median(to_file), statistics.median(gated)
    print(
        f"throughput check prints 300 MB: alone through a pipe {a:5.2f} s | alone into a file {f:5.2f} s | "
        f"under phasegate {g:5.2f} s (output parsed, full log kept)\n"
        f"           ratio {g / a:4.2f}x to the pipe, {g / f:4.2f}x to the file (target < 1.5x)"
    )


def big_repo(files, staged, partial):
    """A repository of `files` files, `staged` of them changed and staged,
    the first `partial` of those changed again without staging."""
    repo = tempfile.mkdtemp(prefix="phasegate-bench-")
    REPOS.append(repo)
    run = lambda *args: subprocess.run(["git", *args], cwd=repo, check=True, stdout=subprocess.DEVNULL)
    run("init", "-q")
    run("config", "user.email", "bench@example.com")
    run("config", "user.name", "bench")
    # No automatic gc starting in the background while the commands are
    # timed: the history is packed once, as in a cloned repository.
    run("config", "gc.auto", "0")
    run("config", "maintenance.auto", "false")
    for i in range(files):
        d = os.path.join(repo, f"d{i % 100}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i}.txt"), "w") as f:
            f.write(f"line one of {i}\nline two\n")
    run("add", "-A")
    run("commit", "-qm", "base")
    run("gc", "-q")
    for i in range(staged):
        with open(os.path.join(repo, f"d{i % 100}", f"f{i}.txt"), "a") as f:
            f.write("staged change\n")
    run("add", "-A")
    for i in range(partial):
        with open(os.path.join(repo, f"d{i % 100}", f"f{i}.txt"), "a") as f:
            f.write("unstaged change\n")
    # Files a repository has had for a while, not written this second (git
    # and libgit2 re-read "racily clean" files to be sure).
    past = time.time() - 3600
    for d, _, names in os.walk(repo):
        if "/.git" in d or d.endswith(".git"):
            continue
        for name in names:
            os.utime(os.path.join(d, name), (past, past))
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=repo, stdout=subprocess.DEVNULL)
    with open(os.path.join(repo, ".git", "info", "exclude"), "a") as f:
        f.write("phasegate.toml\n.pre-commit-config.yaml\n")
    with open(os.path.join(repo, "phasegate.toml"), "w") as f:
        f.write('[phases.implementation]\nchecks = [ { name = "c", command = "true" } ]\n')
    # The same check for the hook managers that are installed.
    with open(os.path.join(repo, ".pre-commit-config.yaml"), "w") as f:
        f.write(
            "repos:\n  - repo: local\n    hooks:\n"
            "      - { id: c, name: c, entry: 'true', language: system, pass_filenames: false, always_run: true }\n"
        )
    return repo


# Hook managers measured beside phasegate when they are on PATH
# (`pip install prek pre-commit`): each runs the same `true` check on the
# staged files, hiding unstaged changes its own way.
HOOK_MANAGERS = [("prek", ["prek", "run"]), ("pre-commit", ["pre-commit", "run"])]


def hook_managers(repo, rounds, base, what):
    found = [(name, argv) for name, argv in HOOK_MANAGERS if shutil.which(argv[0])]
    if not found:
        print("           (prek and pre-commit are not installed: `pip install prek pre-commit` to compare)")
        return
    figures = []
    for name, argv in found:
        wall(argv, repo, 2)
        t = statistics.median(wall(argv, repo, rounds))
        figures.append(f"{name} run {t * 1000:6.1f} ms ({t / base:4.2f}x to {what})")
    print("           same repository and check: " + " | ".join(figures))


def staged_runs(phasegate):
    # 4. Selecting the staged files of a large repository.
    large = repo = big_repo(20000, 5000, 0)
    gate = [phasegate, "run", "--format", "json"]
    git = ["git", "diff", "--cached", "--name-only"]
    status = ["git", "status", "--porcelain", "--untracked-files=no"]
    # What protecting unstaged changes must know on top: which tracked
    # files differ from the index, a stat of every one (git's own scan).
    scan = ["git", "diff-files", "--quiet"]
    wall(gate, repo, 3)
    wall(status, repo, 3)
    # Round by round, each command in turn: on a shared machine speed
    # drifts over seconds, and blocks of one command each would compare
    # different moments.
    g, d, s, p = interleaved([git, scan, status, gate], repo, 30)
    print(
        f"staged     20,000 files, 5,000 staged: git diff --cached --name-only {g * 1000:6.1f} ms | "
        f"git diff-files (the work-tree scan alone) {d * 1000:6.1f} ms | "
        f"git status {s * 1000:6.1f} ms | phasegate run {p * 1000:6.1f} ms\n"
        f"           ratio {p / g:4.2f}x to git diff --cached (target < 2x), "
        f"{p / (g + d):4.2f}x to git diff --cached and git diff-files together, {p / s:4.2f}x to git status"
    )
    hook_managers(repo, 20, g, "git diff --cached")

    # 5. The protect-run-restore cycle with 200 partially staged files,
    #    against the classic shell sequence (no fsync there).
    repo = big_repo(2000, 400, 200)
    classic = [
        "sh",
        "-c",
        "git diff --binary > ../classic.patch && git checkout -- . && true && git apply --whitespace=nowarn ../classic.patch",
    ]
    wall(gate, repo, 3)
    # Interleaved too: both sequences wait on the disk, whose speed drifts.
    c, p = interleaved([classic, gate], repo, 30)
    print(
        f"protect    200 partially staged files: classic save/checkout/apply {c * 1000:6.1f} ms | "
        f"phasegate run (fsync included) {p * 1000:6.1f} ms | ratio {p / c:4.2f}x (target <= 1x)"
    )
    hook_managers(repo, 10, c, "classic")

    # 6. The same cycle in the large repository, 50 files partially staged:
    #    what phasegate does per file must not grow with the repository.
    for i in range(50):
        with open(os.path.join(large, f"d{i % 100}", f"f{i}.txt"), "a") as f:
            f.write("unstaged change\n")
    wall(gate, large, 3)
    c, p = interleaved([classic, gate], large, 15)
    print(
        f"protect    20,000 files, 50 partially staged: classic {c * 1000:6.1f} ms | "
        f"phasegate run {p * 1000:6.1f} ms | ratio {p / c:4.2f}x"
    )


if __name__ == "__main__":
    # Stopped by SIGTERM or SIGHUP (a CI timeout, a closed terminal), the
    # benchmark still removes its repositories, several GB of them: the
    # `finally` below runs on the exit this raises, as it does on Ctrl-C.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))
    try:
        main()
        staged_runs(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/phasegate"))
    finally:
        for repo in REPOS:
            shutil.rmtree(repo, ignore_errors=True)
