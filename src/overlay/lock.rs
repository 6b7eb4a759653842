//! The overlay's two locks: the state lock (one change of its state at a time) and the run
//! lock (held while a command runs in it), flocks on files in its directory.

use std::fs;

use super::{OverlayRecord, reload};
use crate::error::{Error, IoContext, Result};
use crate::store::Store;

/// A held overlay lock (released when dropped).
pub struct OverlayLock {
    _file: fs::File,
}

/// The two locks of an overlay, always taken in this order:
/// - `run.lock`, held while a command runs in the overlay, and by what must not overlap one
///   (accept, reject, the undo of a reject): overlayfs must never see its upper directory
///   mounted twice, nor written from outside while mounted. Waiting for it says so and gives
///   up after the store's lock timeout.
/// - `lock`, held only for short bookkeeping (computing the state, refreshing the namespace
///   backend's pinned layer, accept's write): never across a user command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LockKind {
    Run,
    State,
}

impl LockKind {
    fn file(self) -> &'static str {
        match self {
            LockKind::Run => "run.lock",
            LockKind::State => "lock",
        }
    }
}

pub(super) fn open_lock_file(
    store: &Store,
    rec: &OverlayRecord,
    kind: LockKind,
) -> Result<fs::File> {
    let path = rec.dir(store).join(kind.file());
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .at(&path)
}

/// An exclusive lock without waiting (std's `File::try_lock` is `flock(LOCK_EX | LOCK_NB)` on
/// Linux): Ok(false) when another open file description holds it.
pub(super) fn try_flock(file: &fs::File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(fs::TryLockError::WouldBlock) => Ok(false),
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

pub(super) fn take_lock(store: &Store, rec: &OverlayRecord, kind: LockKind) -> Result<OverlayLock> {
    let file = open_lock_file(store, rec, kind)?;
    let path = rec.dir(store).join(kind.file());
    if try_flock(&file).map_err(|e| Error::io(&path, e))? {
        return Ok(OverlayLock { _file: file });
    }
    let what = match kind {
        LockKind::Run => format!(
            "waiting for the command running in overlay {} to finish ...",
            rec.id
        ),
        LockKind::State => format!(
            "waiting for another rewind process using overlay {} ...",
            rec.id
        ),
    };
    store.notice(&what);
    let timeout = store.lock_timeout();
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(2);
    loop {
        std::thread::sleep(pause);
        if try_flock(&file).map_err(|e| Error::io(&path, e))? {
            return Ok(OverlayLock { _file: file });
        }
        if start.elapsed() >= timeout {
            return Err(Error::OverlayBusy {
                seconds: timeout.as_secs_f64(),
                what: what.to_string(),
            });
        }
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
    }
}

/// Takes the overlay's short lock, then re-reads its record (another process may have
/// changed it since the caller read it).
pub(crate) fn lock(store: &Store, rec: &mut OverlayRecord) -> Result<OverlayLock> {
    let held = take_lock(store, rec, LockKind::State)?;
    reload(store, rec)?;
    Ok(held)
}

/// Takes the overlay's run lock (see `LockKind`): what a command in the overlay holds
/// while it runs, and what accept and reject wait for.
pub(crate) fn run_lock(store: &Store, rec: &OverlayRecord) -> Result<OverlayLock> {
    take_lock(store, rec, LockKind::Run)
}

/// Whether a command is running in the overlay now. Never waits.
pub(crate) fn running(store: &Store, rec: &OverlayRecord) -> bool {
    match open_lock_file(store, rec, LockKind::Run) {
        // Taken and released at once: free means nobody runs.
        Ok(f) => !try_flock(&f).unwrap_or(true),
        Err(_) => false,
    }
}

pub(super) fn try_state_lock(store: &Store, rec: &OverlayRecord) -> Option<OverlayLock> {
    let file = open_lock_file(store, rec, LockKind::State).ok()?;
    try_flock(&file)
        .ok()
        .filter(|got| *got)
        .map(|_| OverlayLock { _file: file })
}
