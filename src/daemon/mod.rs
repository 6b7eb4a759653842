//! The watch daemon: one process per store that watches the workspaces that opted in
//! (`rewind watch on`) with inotify, keeps per workspace a journal of the directories touched
//! since a token, takes automatic snapshots once a tree has been quiet, and streams events.
//!
//! Commands that walk ask it first (see `crate::scan::daemon_link`) and `lstat` only the
//! directories it cannot vouch for. Correctness never depends on it: any doubt (no daemon, a
//! restarted one, an overflow, a watch limit, a file system inotify cannot see, a moved
//! workspace) is answered with "walk everything".
//!
//! Why raw inotify rather than the `notify` crate: the journal's guarantees rest on inotify's
//! exact semantics (events queued synchronously by the syscall that made the change, `IN_Q_
//! OVERFLOW`, watch descriptors that follow a renamed directory, `IN_IGNORED`), which `notify`
//! abstracts away behind a cross-platform event model and its own threads; and `run`'s watch
//! (`scan::watch`) already speaks it.
//!
//! Layout: [`watchlist`] (which workspaces, kept in the store directory), `journal` (one
//! workspace's watches and journal), [`auto`] (when to take an automatic snapshot), `server`
//! (the socket, the loop, automatic snapshots), `stream` (events to subscribers).

pub mod auto;
mod journal;
mod server;
mod status;
mod stream;
pub mod watchlist;

use std::path::Path;
use std::time::{Duration, Instant};

pub use crate::scan::daemon_link::{Client, DaemonPaths, Narrowing, Request, WalkNarrowing, paths};
pub use crate::scan::token::Token;
pub use server::run;
pub use status::{Ack, AutoStatus, BadRequest, DaemonStatus, JournalStatus, WatchStatus};

pub use crate::error::DaemonError;

/// Limits and knobs of a daemon (tests force the rare cases through them).
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// Events a workspace's journal holds before it forgets them all, as the kernel's queue
    /// overflows: tokens handed out before are then answered with a full walk.
    pub max_queued_events: usize,
    /// Watches one workspace may use; a workspace with more directories is not watched.
    pub max_watches: usize,
    /// File system types (statfs `f_type`) treated as ones inotify cannot see, besides the
    /// network and FUSE file systems always treated so.
    pub unsupported_fs: Vec<i64>,
    /// How long changed paths are gathered before one `changed` event carries them.
    pub coalesce: Duration,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        DaemonOptions {
            max_queued_events: 1 << 18,
            max_watches: 500_000,
            unsupported_fs: Vec::new(),
            coalesce: Duration::from_millis(100),
        }
    }
}

/// Asks the store's daemon a one-line question (status, stop, reload).
pub fn call(store_dir: &Path, req: &Request) -> crate::Result<serde_json::Value> {
    let mut c =
        Client::connect(store_dir).map_err(|_| DaemonError::NotRunning(store_dir.to_path_buf()))?;
    c.call(req)
        .map_err(|e| DaemonError::Protocol(e.to_string()).into())
}

/// The state of the store's daemon ([`Request::Status`]).
pub fn status(store_dir: &Path) -> crate::Result<DaemonStatus> {
    let v = call(store_dir, &Request::Status)?;
    serde_json::from_value(v).map_err(|e| DaemonError::Protocol(e.to_string()).into())
}

/// Whether a daemon answers for the store.
pub fn is_running(store_dir: &Path) -> bool {
    call(store_dir, &Request::Status).is_ok()
}

/// Waits until a daemon answers (after starting one), or fails naming its log.
pub fn wait_until_up(store_dir: &Path, timeout: Duration) -> crate::Result<serde_json::Value> {
    let mut answer = None;
    wait(store_dir, "start", timeout, || {
        answer = call(store_dir, &Request::Status).ok();
        answer.is_some()
    })?;
    Ok(answer.unwrap_or_default())
}

/// Stops the store's daemon and waits until it is gone (its lock released).
pub fn stop(store_dir: &Path, timeout: Duration) -> crate::Result<serde_json::Value> {
    let answer = call(store_dir, &Request::Stop)?;
    wait(store_dir, "stop", timeout, || !server::lock_held(store_dir))?;
    Ok(answer)
}

fn wait(
    store_dir: &Path,
    what: &'static str,
    timeout: Duration,
    mut done: impl FnMut() -> bool,
) -> crate::Result<()> {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > timeout {
            return Err(DaemonError::Timeout {
                store: store_dir.to_path_buf(),
                what,
                secs: timeout.as_secs(),
                log: paths(store_dir).log,
            }
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Tells a running daemon to re-read the watch list (no daemon: nothing to do).
pub fn reload(store_dir: &Path) {
    let _ = call(store_dir, &Request::Reload);
}
