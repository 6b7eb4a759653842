//! Ctrl-C during a long write to the workspace (restore, undo, redo): the first SIGINT or
//! SIGTERM asks the work to stop at the next file boundary, so every file is old or new and no
//! temporary file is left, and the operation is recorded as interrupted (so `undo` can take it
//! back). A second signal stops the process at once, as it would have without the handler.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Installed guards (handlers are process-wide).
static GUARDS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(sig: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Only async-signal-safe calls here: atomics, signal, raise.
    if RECEIVED.swap(sig, Ordering::SeqCst) != 0 {
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// The signal that asked the current work to stop, if one did.
pub fn requested() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Installs the handlers while it lives; restores the previous ones when dropped.
pub struct Guard {
    _handlers: Handlers,
}

impl Guard {
    /// Installs SIGINT and SIGTERM handlers that only set a flag.
    pub fn install() -> Result<Guard> {
        GUARDS.fetch_add(1, Ordering::SeqCst);
        RECEIVED.store(0, Ordering::SeqCst);
        match Handlers::install(&[libc::SIGINT, libc::SIGTERM], on_signal) {
            Ok(h) => Ok(Guard { _handlers: h }),
            Err(e) => {
                GUARDS.fetch_sub(1, Ordering::SeqCst);
                Err(e)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if GUARDS.fetch_sub(1, Ordering::SeqCst) == 1 {
            RECEIVED.store(0, Ordering::SeqCst);
        }
    }
}

/// A signal handler as the kernel calls it with `SA_SIGINFO`. It may only do async-signal-safe
/// work: atomics, `kill`, `signal`, `raise`.
pub(crate) type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// Process-wide handlers for some signals, installed while this lives (the one place rewind
/// calls `sigaction`); the previous dispositions are restored when it is dropped.
pub(crate) struct Handlers {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl Handlers {
    /// Installs `handler` for each of `signals` (`SA_SIGINFO | SA_RESTART`: system calls the
    /// signal interrupts are restarted). On failure, what was installed is restored.
    pub(crate) fn install(signals: &[libc::c_int], handler: Handler) -> Result<Handlers> {
        let mut installed = Handlers { old: Vec::new() };
        for &sig in signals {
            // SAFETY: a zeroed sigaction is a valid value; `handler` does only
            // async-signal-safe work (its type's contract).
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = handler as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &sa, &mut prev) != 0 {
                    // Dropping `installed` restores the ones before.
                    return Err(Error::io(
                        "<signal handler>",
                        std::io::Error::last_os_error(),
                    ));
                }
                installed.old.push((sig, prev));
            }
        }
        Ok(installed)
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        for (sig, prev) in self.old.iter().rev() {
            // SAFETY: restoring the disposition saved by install.
            unsafe {
                libc::sigaction(*sig, prev, std::ptr::null_mut());
            }
        }
    }
}

/// 0 = off; else the Nth file after which a restore interrupts itself.
static TEST_INTERRUPT_AFTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// For tests of an interruption part way: makes the process send itself SIGINT after the Nth
/// file a restore writes (`None` or 0: never). The CLI sets it from
/// `REWIND_TEST_INTERRUPT_AFTER`; a host program has no reason to call it.
pub fn set_test_interrupt_after(n: Option<u64>) {
    TEST_INTERRUPT_AFTER.store(n.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

/// What [`set_test_interrupt_after`] set.
pub(crate) fn test_interrupt_after() -> Option<u64> {
    match TEST_INTERRUPT_AFTER.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        n => Some(n),
    }
}
