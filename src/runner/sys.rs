//! The operating system's edges: signals to process groups, phasegate's
//! own interrupt flag, new sessions, the argument-size limit. The only
//! unsafe code in phasegate lives here.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set when phasegate receives SIGINT, SIGTERM, SIGHUP or SIGQUIT while an
/// `InterruptGuard` lives.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub const SIGTERM: i32 = libc::SIGTERM;
pub const SIGKILL: i32 = libc::SIGKILL;

/// Sends `signal` to every process in the group `pgid`. Returns `false`
/// when the group has no process left.
pub fn signal_group(pgid: u32, signal: i32) -> bool {
    kill(pgid, true, signal)
}

/// Sends `signal` to the process `pid`, or to the process group `id` when
/// `group`. Never to "every process" (-1), our own group (0) or init (1):
/// an id that would mean one of those signals nothing. Returns whether the
/// signal went to anything.
fn kill(id: u32, group: bool, signal: i32) -> bool {
    let Ok(id) = libc::pid_t::try_from(id) else {
        return false;
    };
    if id <= 1 {
        return false;
    }
    let target = if group { -id } else { id };
    #[expect(unsafe_code, reason = "kill(2) has no safe wrapper in std")]
    // SAFETY: kill takes plain integers and touches no memory of ours; the
    // target is a real process id, or a negative one addressing a real
    // group, never 0 or -1 (checked above).
    let result = unsafe { libc::kill(target, signal) };
    result == 0
}

/// Makes `command`'s process the leader of a new session, and so of a new
/// process group (its pid): a timeout or an interrupt kills the group, and
/// with no controlling terminal a check that opens `/dev/tty` (a password
/// prompt) fails at once instead of being stopped until its timeout.
pub fn new_session(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    #[expect(
        unsafe_code,
        reason = "setsid(2) in the child has no stable safe wrapper in std"
    )]
    // SAFETY: the closure runs in the forked child before exec and calls
    // only setsid(2), which is async-signal-safe, allocates nothing and
    // touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether any process of the group `pgid` still exists, zombies
/// included: a cheap first look, before `session_alive`.
pub fn group_exists(pgid: u32) -> bool {
    signal_group(pgid, 0)
}

/// Sends `signal` to every process of the session `sid` (a check's, whose
/// leader started it): its own process group, and the groups its processes
/// made since (`timeout` makes one). Returns `false` when none is left.
pub fn signal_session(sid: u32, signal: i32) -> bool {
    let mut any = signal_group(sid, signal);
    for pid in other_groups_of_session(sid) {
        any |= kill(pid, false, signal);
    }
    any
}

/// Whether any process of the session `sid` still runs. A zombie (ended,
/// not yet waited for) does not: where pid 1 does not reap the orphans it
/// adopts (a container whose first process is `sleep` or a plain
/// program), a check's ended background process stays one for good, and
/// waiting for it to go cost every such check the whole kill grace.
pub fn session_alive(sid: u32) -> bool {
    session_processes(sid).map_or_else(
        || group_exists(sid),
        |mut all| all.any(|(_, p)| p.running() && p.session == sid),
    )
}

/// The processes of session `sid` outside its leader's process group.
fn other_groups_of_session(sid: u32) -> Vec<u32> {
    session_processes(sid)
        .into_iter()
        .flatten()
        .filter(|(_, p)| p.session == sid && p.group != sid)
        .map(|(pid, _)| pid)
        .collect()
}

/// Every process `/proc` shows, with what its `stat` says; `None` without
/// a readable `/proc`.
fn processes() -> Option<impl Iterator<Item = (u32, ProcStat)>> {
    processes_from(0)
}

/// The processes `/proc` shows whose pid is `floor` or above.
fn processes_from(floor: u32) -> Option<impl Iterator<Item = (u32, ProcStat)>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(move |pid| *pid >= floor)
            .filter_map(|pid| Some((pid, proc_stat(pid)?))),
    )
}

/// Processes that may be of the session `sid`, a superset of its own. Its
/// processes were all made after its leader, whose pid is `sid`, so while
/// the kernel has not given out a pid number below it since (the last one
/// given out is still `sid` or above), none has a lower number: only those
/// at or above `sid` are read. Reading every process's `stat` at the end of
/// every check cost milliseconds, more on a machine that runs thousands.
/// Numbers that went all the way round during one check (tens of
/// thousands of processes where `pid_max` is small) can hide a leftover
/// background job from this look; a timeout's or an interrupt's kill reads
/// every process (`Tree`).
fn session_processes(sid: u32) -> Option<impl Iterator<Item = (u32, ProcStat)>> {
    let number =
        |file: &str| -> Option<u32> { std::fs::read_to_string(file).ok()?.trim().parse().ok() };
    processes_from(session_floor(sid, number("/proc/sys/kernel/ns_last_pid")))
}

/// The lowest pid a process of the session `sid` can have (see
/// `session_processes`), given the last pid the kernel gave out.
fn session_floor(sid: u32, last: Option<u32>) -> u32 {
    match last {
        Some(last) if last >= sid => sid,
        _ => 0,
    }
}

/// What `/proc/<pid>/stat` says of a process.
struct ProcStat {
    /// `R`, `S`, `D`, … ; `Z` for a zombie, `X` for one being reaped.
    state: u8,
    parent: u32,
    group: u32,
    session: u32,
    /// Clock ticks since boot: with the pid, it names one process for as
    /// long as the machine runs.
    start: u64,
}

impl ProcStat {
    fn running(&self) -> bool {
        !matches!(self.state, b'Z' | b'X')
    }
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces and parentheses.
    let after = &stat[memchr::memrchr(b')', &stat)? + 1..];
    let fields: Vec<&[u8]> = after
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty())
        .collect();
    let number =
        |i: usize| -> Option<u64> { std::str::from_utf8(fields.get(i)?).ok()?.parse().ok() };
    // After the name: state (field 3), ppid (4), pgrp (5), session (6), …
    // starttime (22).
    Some(ProcStat {
        state: *fields.first()?.first()?,
        parent: u32::try_from(number(1)?).ok()?,
        group: u32::try_from(number(2)?).ok()?,
        session: u32::try_from(number(3)?).ok()?,
        start: number(19)?,
    })
}

/// The variable every process of a check inherits, set to a tag of its
/// own (`Tree::tag`): a process that left the check's session (`setsid`,
/// a daemon that forked twice and whose parent is gone) still carries it,
/// and is found by it when the check is killed. Jenkins finds what a build
/// left behind the same way (its `BUILD_ID` cookie).
pub const TAG_VAR: &str = "PHASEGATE_CHECK_TAG";

/// Everything one invocation of a check started: the session its first
/// process leads, the processes descended from that session's (by parent
/// process id, wherever they moved), and those that carry its tag in their
/// environment (their parent gone, init adopted them). Nothing else: a
/// process joins none of these by chance, so killing the tree never
/// reaches a process the check did not start.
pub struct Tree {
    /// The session (and process group) id: the first process's pid;
    /// `None` for a recorded tree whose number now names another process.
    sid: Option<u32>,
    /// Empty for a tree recorded before processes were tagged.
    tag: String,
    /// When the first process started (clock ticks since boot): whatever
    /// carries the tag started since, so older processes are not read.
    since: u64,
}

impl Tree {
    /// A tag no other invocation has: phasegate's pid and start time (a
    /// process left by an earlier phasegate that had the same pid has
    /// another), and a count.
    pub fn new_tag() -> String {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let me = std::process::id();
        let start = proc_stat(me).map_or(0, |p| p.start);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        format!("{me}-{start}-{n}")
    }

    /// The tree of the session `sid`, whose processes were given `tag`.
    pub fn new(sid: u32, tag: String) -> Tree {
        let since = proc_stat(sid).map_or(0, |p| p.start);
        Tree {
            sid: Some(sid),
            tag,
            since,
        }
    }

    /// Sends `signal` to every process of the tree. Returns `false` when
    /// none is left.
    pub fn signal(&self, signal: i32) -> bool {
        // The group first, in one call: what it forks meanwhile is in it.
        let mut any = self.sid.is_some_and(|sid| signal_group(sid, signal));
        // The others one by one, each once: a second SIGTERM means "now"
        // to some programs.
        for (pid, _) in self
            .members()
            .into_iter()
            .flatten()
            .filter(|(_, group)| Some(*group) != self.sid)
        {
            any |= kill(pid, false, signal);
        }
        any
    }

    /// Whether any process of the tree still runs (zombies do not count,
    /// as for `session_alive`).
    pub fn alive(&self) -> bool {
        self.members().map_or_else(
            || self.sid.is_some_and(group_exists),
            |members| !members.is_empty(),
        )
    }

    /// The tree's processes that still run (pid and process group),
    /// phasegate's own excluded; `None` without a readable `/proc`.
    fn members(&self) -> Option<Vec<(u32, u32)>> {
        let all: Vec<(u32, ProcStat)> = processes()?.collect();
        let me = std::process::id();
        // Never phasegate itself (every check's first process is its
        // child), nor init.
        let candidate = |pid: u32| pid != me && pid > 1;
        let mut inside: std::collections::HashSet<u32> = all
            .iter()
            .filter(|(pid, p)| {
                candidate(*pid)
                    && (Some(p.session) == self.sid
                        || (p.running() && p.start >= self.since && self.tagged(*pid)))
            })
            .map(|(pid, _)| *pid)
            .collect();
        // Their descendants, down to the last generation.
        loop {
            let before = inside.len();
            for (pid, p) in &all {
                if candidate(*pid) && inside.contains(&p.parent) {
                    inside.insert(*pid);
                }
            }
            if inside.len() == before {
                break;
            }
        }
        Some(
            all.iter()
                .filter(|(pid, p)| inside.contains(pid) && p.running())
                .map(|(pid, p)| (*pid, p.group))
                .collect(),
        )
    }

    /// Whether the environment `pid` started with holds the tree's tag.
    /// Only processes of the same user can be read, as only they can be
    /// signalled.
    fn tagged(&self, pid: u32) -> bool {
        if self.tag.is_empty() {
            return false;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            return false;
        };
        environ.split(|b| *b == 0).any(|entry| {
            entry
                .strip_prefix(TAG_VAR.as_bytes())
                .and_then(|rest| rest.strip_prefix(b"="))
                .is_some_and(|value| value == self.tag.as_bytes())
        })
    }
}

/// Appends the tree's `<pgid> <start time> <tag>` to `file`. Not flushed:
/// a machine that goes down takes the processes with it.
pub fn record_group(file: &std::path::Path, tree: &Tree) {
    if let Some(pgid) = tree.sid {
        append_line(file, &format!("{pgid} {} {}", tree.since, tree.tag), false);
    }
}

/// Appends `- 0 <tag>` to `file` before a check starts: a run killed
/// between the start and `record_group` still has what the check started
/// found, by its tag. The tag names one invocation of one phasegate, so
/// no start time is needed to tell its processes apart.
pub fn record_tag(file: &std::path::Path, tag: &str) {
    append_line(file, &format!("- 0 {tag}"), true);
}

/// Appends `line` to `file`, made first when `create` says so. Not
/// flushed: a machine that goes down takes the processes with it. A
/// check's group is recorded once it started, in the file its tag's line
/// made: gone then, the check removed it (a clean-up of `.git/phasegate`)
/// and is not given it back, which would leave its `rm -rf` a directory
/// that is not empty.
fn append_line(file: &std::path::Path, line: &str, create: bool) {
    use std::io::Write;
    if let Ok(mut out) = std::fs::OpenOptions::new()
        .create(create)
        .append(true)
        .open(file)
    {
        let _ = writeln!(out, "{line}");
    }
}

/// Kills the process trees recorded in `file` by a run that was killed
/// itself (each check's session, and what left it carrying its tag), and
/// waits (a few seconds at most) for them to go, so that nothing they do
/// lands after the work tree is put back. A session whose leader is now
/// another process (its number reused) is left alone; what carries the
/// tag is the check's all the same.
pub fn stop_recorded_groups(file: &std::path::Path) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let trees: Vec<Tree> = text
        .lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let pgid = words.next()?;
            let start: u64 = words.next()?.parse().ok()?;
            let sid = if pgid == "-" {
                // A tag recorded before its check started.
                None
            } else {
                // 0 and 1 would signal phasegate's own group, or all.
                let pgid: u32 = pgid.parse().ok().filter(|pgid| *pgid > 1)?;
                let ours = match proc_stat(pgid) {
                    Some(leader) => leader.start == start && leader.group == pgid,
                    // The leader is gone; what is left of its group is ours.
                    None => true,
                };
                ours.then_some(pgid)
            };
            let tree = Tree {
                sid,
                tag: words.next().unwrap_or_default().to_string(),
                since: start,
            };
            tree.signal(SIGKILL).then_some(tree)
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    // Again while any is left: one may have forked before it died.
    while trees
        .iter()
        .any(|tree| tree.alive() && tree.signal(SIGKILL))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The signals that stop a run: Ctrl-C (SIGINT, sent to the whole
/// foreground process group, git and the hook included), SIGTERM, SIGHUP
/// (the terminal closed) and SIGQUIT.
const STOPPING: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The guards alive, and the actions the outermost one replaced (put back
/// when it goes).
struct Installed {
    depth: usize,
    previous: Vec<(i32, libc::sigaction)>,
}

static INSTALLED: std::sync::Mutex<Installed> = std::sync::Mutex::new(Installed {
    depth: 0,
    previous: Vec::new(),
});

/// The signal handler: sets the flag and nothing else (an atomic store is
/// async-signal-safe). A second signal finds the flag set already: the run
/// goes on putting the work tree back, and a SIGKILL still leaves the
/// journal to the next run.
extern "C" fn on_stopping_signal(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Routes SIGINT, SIGTERM, SIGHUP and SIGQUIT to the interrupt flag while the
/// returned guard lives, so a Ctrl-C stops the checks (which run in their own
/// process groups and would not see it) instead of orphaning them, and
/// never kills phasegate while the work tree holds the staged content:
/// whatever phasegate is doing, it reads the flag and puts the unstaged
/// changes back before it exits.
///
/// Guards nest (a run holds one around the whole time the unstaged changes
/// are aside, the checks one of their own); the outermost one puts back
/// the actions it found when it goes: the default ones as a rule, or
/// "ignored" for a signal phasegate was started ignoring (`nohup`).
pub struct InterruptGuard {
    _private: (),
}

impl InterruptGuard {
    pub fn install() -> InterruptGuard {
        let mut installed = INSTALLED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        installed.depth += 1;
        if installed.depth == 1 {
            installed.previous = STOPPING
                .into_iter()
                .filter_map(|signal| catch(signal).map(|previous| (signal, previous)))
                .collect();
        }
        InterruptGuard { _private: () }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        let mut installed = INSTALLED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        installed.depth = installed.depth.saturating_sub(1);
        if installed.depth == 0 {
            for (signal, previous) in installed.previous.drain(..) {
                set_action(signal, &previous);
            }
        }
    }
}

/// Routes `signal` to the interrupt flag; the action it replaced, or
/// `None` when it cannot be routed (the checks are then orphaned on that
/// signal, but the run is not made worse than without the guard).
fn catch(signal: i32) -> Option<libc::sigaction> {
    #[expect(unsafe_code, reason = "sigaction(2) has no safe wrapper in std")]
    // SAFETY: both structures are plain data, zeroed then filled; the
    // handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, std::ptr::null(), &raw mut previous) != 0 {
            return None;
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction =
            on_stopping_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // Reads and writes under way go on: the run reads the flag.
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&raw mut action.sa_mask);
        (libc::sigaction(signal, &raw const action, std::ptr::null_mut()) == 0).then_some(previous)
    }
}

fn set_action(signal: i32, action: &libc::sigaction) {
    #[expect(unsafe_code, reason = "sigaction(2) has no safe wrapper in std")]
    // SAFETY: `action` is one sigaction(2) itself returned for `signal`.
    unsafe {
        libc::sigaction(signal, std::ptr::from_ref(action), std::ptr::null_mut());
    }
}

/// Whether phasegate was interrupted while a guard lived (the flag is
/// never cleared: a process runs one gate, and a pre-push hook's later
/// ranges are not checked once it was interrupted).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Whether a signal phasegate is catching right now has arrived: the
/// test-only pause ends on it, as the step it stands for would.
pub fn interrupt_caught() -> bool {
    let active = INSTALLED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .depth
        > 0;
    active && interrupted()
}

/// The inode number of the pipe `end` is one end of: it names the pipe
/// in `/proc/<pid>/fd` of every process that holds it (`pipe:[N]`).
pub fn pipe_id(end: &impl std::os::fd::AsFd) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let fd = end.as_fd().try_clone_to_owned().ok()?;
    std::fs::File::from(fd).metadata().ok().map(|m| m.ino())
}

/// The processes other than phasegate that hold the pipe `id` (see
/// `pipe_id`) open, with the command line each runs, as far as `/proc`
/// shows them (those of the same user: only they can be signalled). Every
/// end of a check's output pipe outside phasegate was inherited from the
/// check, so whatever holds one was started by it, wherever it moved.
pub fn pipe_holders(id: u64) -> Vec<(u32, String)> {
    let me = std::process::id();
    let name = std::ffi::OsString::from(format!("pipe:[{id}]"));
    let holds = |pid: u32| {
        holds_open(pid, |fd| {
            std::fs::read_link(fd).is_ok_and(|to| to.as_os_str() == name)
        })
    };
    processes()
        .into_iter()
        .flatten()
        .filter(|(pid, p)| *pid != me && p.running() && holds(*pid))
        .map(|(pid, _)| (pid, command_line(pid)))
        .collect()
}

/// Whether the process `pid` holds open a file `matches` picks, given the
/// path of each of its descriptors under `/proc/<pid>/fd` (a link to what
/// it holds: `read_link` names it, `metadata` follows it). False when
/// `/proc` does not show them (a process of another user, or one gone).
pub fn holds_open(pid: u32, matches: impl Fn(&std::path::Path) -> bool) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .is_ok_and(|fds| fds.flatten().any(|fd| matches(&fd.path())))
}

/// The command line the process `pid` runs, its words joined by spaces,
/// as far as `/proc` shows it (empty for a process of another user, or
/// one gone).
pub fn command_line(pid: u32) -> String {
    let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = line
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    words.join(" ")
}

/// The processes of the session `sid` that still run, with the command
/// line of each, lowest pid first: what a check left behind, named in its
/// log before it is stopped. Read only once something was left.
pub fn session_commands(sid: u32) -> Vec<(u32, String)> {
    let mut found: Vec<(u32, String)> = session_processes(sid)
        .into_iter()
        .flatten()
        .filter(|(_, p)| p.running() && p.session == sid)
        .map(|(pid, _)| (pid, command_line(pid)))
        .collect();
    found.sort_unstable();
    found
}

/// Sends `signal` to the process `pid`; whether it went to a process
/// that still runs (not a zombie).
pub fn signal_running(pid: u32, signal: i32) -> bool {
    proc_stat(pid).is_some_and(|p| p.running()) && kill(pid, false, signal)
}

/// The kernel's limit on the size of a new program's arguments and
/// environment together (`ARG_MAX`), or a conservative guess.
pub fn arg_max() -> usize {
    #[expect(unsafe_code, reason = "sysconf(3) has no safe wrapper in std")]
    // SAFETY: sysconf takes an integer name and returns an integer; it
    // touches no memory of ours.
    let value = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    usize::try_from(value)
        .ok()
        .filter(|v| *v > 0)
        .unwrap_or(128 * 1024)
}

/// Makes libgit2 open repositories owned by another user from now on, as
/// git does once `safe.directory` names them. Called only after git itself
/// opened the repository with the same environment (which libgit2 does not
/// fully read: `GIT_CONFIG_GLOBAL`, `sudo`'s `SUDO_UID`), so phasegate
/// trusts what git trusts and nothing more.
pub fn trust_repository_owners() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[expect(unsafe_code, reason = "git2 marks its global libgit2 options unsafe")]
        // SAFETY: the option is one integer in libgit2's global state; it
        // is set once, when the first repository a command opens fails to
        // open, before phasegate opens repositories on other threads.
        let _ = unsafe { git2::opts::set_verify_owner_validation(false) };
    });
}

/// Makes libgit2 accept the repository format extensions `names` (besides
/// its own) from now on: extensions that change nothing it reads, such as
/// `partialclone`, and `refstorage`, whose reftable refs phasegate then
/// reads through git only (`git::refs`).
pub fn accept_repository_extensions(names: &[&str]) {
    static ACCEPTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut accepted) = ACCEPTED.lock() else {
        return;
    };
    for name in names {
        if !accepted.iter().any(|a| a == name) {
            accepted.push((*name).to_string());
        }
    }
    #[expect(unsafe_code, reason = "git2 marks its global libgit2 options unsafe")]
    // SAFETY: libgit2 copies the list into its global state; it is set
    // under the lock above, when a repository fails to open, before
    // phasegate opens repositories on other threads.
    let _ = unsafe { git2::opts::set_extensions(&accepted) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_looked_for_from_its_leaders_pid_unless_pids_have_wrapped() {
        // None given out below the leader's since.
        assert_eq!(session_floor(5000, Some(5200)), 5000);
        assert_eq!(session_floor(5000, Some(5000)), 5000);
        // The numbers went round: the last given out is below the leader's.
        assert_eq!(session_floor(5000, Some(400)), 0);
        // Nothing known: every process.
        assert_eq!(session_floor(5000, None), 0);
    }
    use std::time::{Duration, Instant};

    /// A child of the test, leader of a session of its own, ended and not
    /// waited for: a zombie, alone in its session.
    fn zombie_session() -> std::process::Child {
        let mut command = std::process::Command::new("true");
        new_session(&mut command);
        let child = command.spawn().unwrap();
        let started = Instant::now();
        while proc_stat(child.id()).is_some_and(|p| p.running()) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "`true` never ended"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child
    }

    #[test]
    fn a_session_of_zombies_is_not_alive_and_its_recorded_group_is_not_waited_for() {
        let mut child = zombie_session();
        let sid = child.id();
        assert!(group_exists(sid), "the zombie is still there");
        assert!(!session_alive(sid));

        let dir = tempfile::tempdir().unwrap();
        let groups = dir.path().join("groups");
        let tag = Tree::new_tag();
        record_tag(&groups, &tag);
        record_group(&groups, &Tree::new(sid, tag));
        assert!(std::fs::read_to_string(&groups)
            .unwrap()
            .lines()
            .any(|line| line.starts_with(&format!("{sid} "))));
        let started = Instant::now();
        stop_recorded_groups(&groups);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "waited {:?} for a zombie to go",
            started.elapsed()
        );
        child.wait().unwrap();
        assert!(!group_exists(sid));
    }

    #[test]
    fn a_group_is_recorded_only_in_the_file_its_tag_made() {
        let dir = tempfile::tempdir().unwrap();
        let groups = dir.path().join("groups");
        record_group(&groups, &Tree::new(std::process::id(), Tree::new_tag()));
        assert!(!groups.exists(), "a removed groups file was made again");
    }

    #[test]
    fn a_tag_recorded_before_its_check_started_finds_what_carries_it() {
        let dir = tempfile::tempdir().unwrap();
        let groups = dir.path().join("groups");
        let tag = Tree::new_tag();
        // Lines no phasegate writes, naming group 0 (the reader's own) or
        // 1 (every process): never signalled.
        std::fs::write(&groups, "0 0 x\n1 0 y\n").unwrap();
        record_tag(&groups, &tag);
        // Started in a session of its own, as a daemon of the check would
        // be, and never recorded by its group.
        let mut command = std::process::Command::new("sleep");
        command.arg("30").env(TAG_VAR, &tag);
        new_session(&mut command);
        let mut child = command.spawn().unwrap();
        stop_recorded_groups(&groups);
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(SIGKILL)
        );
    }

    #[test]
    fn a_session_with_a_running_process_is_alive() {
        let mut command = std::process::Command::new("sleep");
        command.arg("30");
        new_session(&mut command);
        let mut child = command.spawn().unwrap();
        assert!(session_alive(child.id()));
        assert!(signal_session(child.id(), SIGKILL));
        child.wait().unwrap();
        assert!(!session_alive(child.id()));
    }
}
