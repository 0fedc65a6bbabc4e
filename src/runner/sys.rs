//! The operating system's edges: signals to process groups, phasegate's
//! own interrupt flag, the argument-size limit. The only unsafe code in
//! phasegate lives here.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set when phasegate receives SIGINT, SIGTERM or SIGHUP while checks run.
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

/// Whether any process of the group `pgid` still exists (zombies included).
pub fn group_alive(pgid: u32) -> bool {
    signal_group(pgid, 0)
}

/// Routes SIGINT, SIGTERM and SIGHUP to the interrupt flag while the
/// returned guard lives, so a Ctrl-C stops the checks (which run in their own
/// process groups and would not see it) instead of orphaning them.
pub struct InterruptGuard {
    ids: Vec<signal_hook::SigId>,
}

impl InterruptGuard {
    pub fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let ids = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
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
