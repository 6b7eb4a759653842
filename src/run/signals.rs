//! Signal handling for the duration of a run (see the module docs of [`crate::run`](mod@crate::run)).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

use crate::error::{Error, Result};
use crate::interrupt::Handlers;

/// The running command's pid (0 when none).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Whether the command leads a process group of its own (signals go to the group).
static GROUP: AtomicBool = AtomicBool::new(false);
/// Whether a second signal killed the command's group.
static KILLED: AtomicBool = AtomicBool::new(false);
/// Signals received since the guard was installed.
static HITS: AtomicU32 = AtomicU32::new(0);
/// The first signal received.
static FIRST: AtomicI32 = AtomicI32::new(0);
/// A signal that arrived while no command ran and should be forwarded once one does.
static PENDING: AtomicI32 = AtomicI32::new(0);
/// One guard at a time per process.
static INSTALLED: AtomicBool = AtomicBool::new(false);

const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Only async-signal-safe calls here: atomics, kill, signal, raise.
    let n = HITS.fetch_add(1, Ordering::SeqCst) + 1;
    let child = CHILD.load(Ordering::SeqCst);
    let target = if GROUP.load(Ordering::SeqCst) {
        -child
    } else {
        child
    };
    if n == 2 && child > 0 {
        // A second signal while the command runs: kill it and all it started; rewind
        // records the run as interrupted.
        KILLED.store(true, Ordering::SeqCst);
        unsafe {
            libc::kill(target, libc::SIGKILL);
        }
        return;
    }
    if n > 1 {
        // Otherwise stop now, as the signal would have without us.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return;
    }
    FIRST.store(sig, Ordering::SeqCst);
    // SIGINT from the terminal already went to the whole foreground process group, the
    // command's included when it shares rewind's group.
    let from_terminal =
        sig == libc::SIGINT && !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    if from_terminal && !GROUP.load(Ordering::SeqCst) {
        return;
    }
    if child > 0 {
        unsafe {
            libc::kill(target, sig);
        }
    } else {
        PENDING.store(sig, Ordering::SeqCst);
    }
}

/// Whether rewind is in the foreground of the terminal on its standard input (then the
/// command shares its process group, so it can read the terminal).
pub fn terminal_foreground() -> bool {
    // SAFETY: plain queries on descriptor 0 and this process.
    unsafe { libc::isatty(0) == 1 && libc::tcgetpgrp(0) == libc::getpgrp() }
}

/// Whether a second signal killed the command's process group.
pub fn killed() -> bool {
    KILLED.load(Ordering::SeqCst)
}

/// Installs the handlers; restores the previous ones when dropped.
pub struct Guard {
    handlers: Option<Handlers>,
}

impl Guard {
    /// Installs the run's handlers for SIGINT and SIGTERM.
    pub fn install() -> Result<Guard> {
        if INSTALLED.swap(true, Ordering::SeqCst) {
            return Err(Error::SignalsTaken);
        }
        HITS.store(0, Ordering::SeqCst);
        FIRST.store(0, Ordering::SeqCst);
        PENDING.store(0, Ordering::SeqCst);
        CHILD.store(0, Ordering::SeqCst);
        GROUP.store(false, Ordering::SeqCst);
        KILLED.store(false, Ordering::SeqCst);
        match Handlers::install(&SIGNALS, on_signal) {
            Ok(h) => Ok(Guard { handlers: Some(h) }),
            Err(e) => {
                INSTALLED.store(false, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// The signal received so far, if any.
    pub fn interrupted(&self) -> Option<&'static str> {
        match FIRST.load(Ordering::SeqCst) {
            0 => None,
            s => Some(if s == libc::SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            }),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // The previous handlers first: no signal reaches ours once the child is forgotten.
        drop(self.handlers.take());
        CHILD.store(0, Ordering::SeqCst);
        INSTALLED.store(false, Ordering::SeqCst);
    }
}

/// Sets the pid signals are forwarded to (to its process group when `group`); forwards one
/// that arrived just before.
pub fn set_child(pid: libc::pid_t, group: bool) {
    GROUP.store(group, Ordering::SeqCst);
    CHILD.store(pid, Ordering::SeqCst);
    if pid > 0 {
        let pending = PENDING.swap(0, Ordering::SeqCst);
        if pending != 0 {
            // SAFETY: pid is our unreaped child (and leads its group when `group`).
            unsafe {
                libc::kill(if group { -pid } else { pid }, pending);
            }
        }
    }
}

/// Waits until the child has exited, leaving it unreaped (its pid stays reserved).
pub fn wait_exited(pid: libc::pid_t) {
    loop {
        // SAFETY: waitid with WNOWAIT only inspects our own child.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// A signal's name, for the result.
pub fn name(sig: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGXCPU, "SIGXCPU"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == sig)
        .map(|(_, s)| s.to_string())
        .unwrap_or_else(|| format!("SIG{sig}"))
}
