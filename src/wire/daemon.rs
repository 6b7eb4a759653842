//! The watch daemon as the CLI drives it: what `daemon start/stop` and `watch on/off/list`
//! print with `--json`.

use serde::{Deserialize, Serialize};

use crate::daemon::watchlist::{AutoPolicy, WatchEntry};

pub use crate::daemon::{AutoStatus, DaemonStatus, JournalStatus, WatchStatus};

/// `daemon status --json`: the daemon's own status with `running: true`, or only
/// `running: false` and the store when none runs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum DaemonStatusShown {
    /// A daemon answered.
    Running {
        /// Always true.
        running: bool,
        /// What it answered.
        #[serde(flatten)]
        status: DaemonStatus,
    },
    /// None runs.
    NotRunning {
        /// Always false.
        running: bool,
        /// The store directory.
        store: String,
    },
}

/// A daemon started, or found running (`daemon start --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DaemonStarted {
    /// Whether this command started it (false: one was running already).
    pub started: bool,
    /// Whether a daemon runs now.
    pub running: bool,
    /// Its process id.
    pub pid: Option<u64>,
}

/// A daemon stopped (`daemon stop --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DaemonStopped {
    /// Whether this command stopped one (false: none was running).
    pub stopped: bool,
    /// Whether a daemon runs now (always false).
    pub running: bool,
}

/// When a watched workspace gets automatic snapshots.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchAuto {
    /// The tree must have been quiet this long after a change (ms).
    pub quiet_ms: u64,
    /// Never two automatic snapshots closer than this (ms).
    pub floor_ms: u64,
}

impl From<&AutoPolicy> for WatchAuto {
    fn from(p: &AutoPolicy) -> Self {
        WatchAuto {
            quiet_ms: p.quiet_ms,
            floor_ms: p.floor_ms,
        }
    }
}

/// A workspace added to the watch list (`watch on --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchOn {
    /// The workspace's directory.
    pub workspace: String,
    /// Always true.
    pub watched: bool,
    /// Its automatic snapshots, if on.
    pub auto: Option<WatchAuto>,
    /// Whether a daemon runs (until one does, nothing is watched).
    pub daemon_running: bool,
}

/// A workspace removed from the watch list (`watch off --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchOff {
    /// The workspace's directory.
    pub workspace: String,
    /// Always false.
    pub watched: bool,
    /// Whether it was watched before.
    pub was_watched: bool,
}

/// A watched workspace (`watch list --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Watched {
    /// Its canonical path.
    pub path: String,
    /// Its automatic snapshots, if on.
    pub auto: Option<WatchAuto>,
}

/// The watch list (`watch list --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchList {
    /// The watched workspaces, sorted by path.
    pub workspaces: Vec<Watched>,
    /// Whether a daemon runs.
    pub daemon_running: bool,
}

impl WatchList {
    /// The list's `entries`, with whether a daemon runs.
    pub fn new(entries: &[WatchEntry], daemon_running: bool) -> Self {
        WatchList {
            workspaces: entries
                .iter()
                .map(|w| Watched {
                    path: w.path.clone(),
                    auto: w.auto.as_ref().map(WatchAuto::from),
                })
                .collect(),
            daemon_running,
        }
    }
}
