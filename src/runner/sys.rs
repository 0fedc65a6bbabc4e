//! The operating system's edges: signals to process groups, phasegate's
//! own interrupt flag, new sessions, the argument-size limit. The only
//! unsafe code in phasegate lives here.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set when phasegate receives SIGINT, SIGTERM, SIGHUP or SIGQUIT while
/// checks run.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub const SIGTERM: i32 = libc::SIGTERM;
pub const SIGKILL: i32 = libc::SIGKILL;

/// Sends `signal` to every process in the group `pgid`. Returns `false`
/// when the group has no process left.
pub fn signal_group(pgid: u32, signal: i32) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if pgid <= 1 {
        // Never signal "every process" (-1) or our own group (0).
        return false;
    }
    #[expect(unsafe_code, reason = "kill(2) has no safe wrapper in std")]
    // SAFETY: kill takes plain integers and touches no memory of ours; a
    // negative pid addresses the process group, checked above to be a real
    // group id and not -1 (every process) or 0 (our own group).
    let result = unsafe { libc::kill(-pgid, signal) };
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

/// Whether any process of the group `pgid` still exists (zombies included).
pub fn group_alive(pgid: u32) -> bool {
    signal_group(pgid, 0)
}

/// Sends `signal` to every process of the session `sid` (a check's, whose
/// leader started it): its own process group, and the groups its processes
/// made since (`timeout` makes one). Returns `false` when none is left.
pub fn signal_session(sid: u32, signal: i32) -> bool {
    let mut any = signal_group(sid, signal);
    for pid in other_groups_of_session(sid) {
        any |= signal_process(pid, signal);
    }
    any
}

/// Whether any process of the session `sid` still exists.
pub fn session_alive(sid: u32) -> bool {
    group_alive(sid) || !other_groups_of_session(sid).is_empty()
}

/// The processes of session `sid` outside its leader's process group.
fn other_groups_of_session(sid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            session_and_group(*pid).is_some_and(|(session, group)| session == sid && group != sid)
        })
        .collect()
}

/// A process's session and process group, from `/proc/<pid>/stat`.
fn session_and_group(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[memchr::memrchr(b')', &stat)? + 1..];
    let mut fields = after
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty());
    // state (field 3), ppid, pgrp (5), session (6)
    let group = std::str::from_utf8(fields.nth(2)?).ok()?.parse().ok()?;
    let session = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    Some((session, group))
}

/// Sends `signal` to the process `pid`.
fn signal_process(pid: u32, signal: i32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 1 {
        return false;
    }
    #[expect(unsafe_code, reason = "kill(2) has no safe wrapper in std")]
    // SAFETY: kill takes plain integers and touches no memory of ours; the
    // pid is a real process id, never 0 or -1.
    let result = unsafe { libc::kill(pid, signal) };
    result == 0
}

/// A process's start time, in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`), and its process group: with the pid, they name one
/// process for as long as the machine runs.
fn start_and_group(pid: u32) -> Option<(u64, u32)> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces and parentheses.
    let after = &stat[memchr::memrchr(b')', &stat)? + 1..];
    let fields: Vec<&[u8]> = after
        .split(u8::is_ascii_whitespace)
        .filter(|f| !f.is_empty())
        .collect();
    let number = |i: usize| std::str::from_utf8(fields.get(i)?).ok()?.parse().ok();
    // After the name: state (field 3), ppid, pgrp (5), … starttime (22).
    Some((number(19)?, u32::try_from(number(2)?).ok()?))
}

/// Appends `<pgid> <start time>` to `file`. Not flushed: a machine that
/// goes down takes the processes with it.
pub fn record_group(file: &std::path::Path, pgid: u32) {
    use std::io::Write;
    let Some((start, _)) = start_and_group(pgid) else {
        return;
    };
    if let Ok(mut out) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = writeln!(out, "{pgid} {start}");
    }
}

/// Kills the process groups recorded in `file` by a run that was killed
/// itself, and waits (a few seconds at most) for them to go, so that nothing
/// they do lands after the work tree is put back. A group whose leader is
/// now another process (its number reused) is left alone.
pub fn stop_recorded_groups(file: &std::path::Path) {
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let groups: Vec<u32> = text
        .lines()
        .filter_map(|line| {
            let (pgid, start) = line.split_once(' ')?;
            let (pgid, start): (u32, u64) = (pgid.parse().ok()?, start.parse().ok()?);
            let ours = match start_and_group(pgid) {
                Some((now, group)) => now == start && group == pgid,
                // The leader is gone; what is left of its group is ours.
                None => true,
            };
            (ours && signal_group(pgid, SIGKILL)).then_some(pgid)
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while groups.iter().any(|pgid| group_alive(*pgid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Routes SIGINT, SIGTERM, SIGHUP and SIGQUIT to the interrupt flag while the
/// returned guard lives, so a Ctrl-C stops the checks (which run in their own
/// process groups and would not see it) instead of orphaning them.
pub struct InterruptGuard {
    ids: Vec<signal_hook::SigId>,
}

impl InterruptGuard {
    pub fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let ids = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT]
            .into_iter()
            // A signal that cannot be routed keeps its default action: the
            // checks are then orphaned on that signal, but the run is not
            // made worse than without the guard.
            .filter_map(|signal| signal_hook::flag::register(signal, &INTERRUPTED).ok())
            .collect();
        InterruptGuard { ids }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Whether phasegate was interrupted since the guard was installed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
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
