//! The daemon's answers to the one-line requests of its protocol (`scan::daemon_link`'s
//! `Request`): its status, the acknowledgement of a reload or stop, a line it could not read.
//! They live with the daemon rather than with the protocol's client because only the daemon
//! and its CLI build or read them; `wire` re-exports the status for `daemon status --json`.

use serde::{Deserialize, Serialize};

use crate::scan::token::Token;

/// The answer to [`Request::Reload`](super::Request::Reload) and [`Request::Stop`](super::Request::Stop).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {
    /// Always true.
    pub ok: bool,
    /// The daemon stops ([`Request::Stop`](super::Request::Stop)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopping: bool,
}

/// The answer to a line that is not a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadRequest {
    /// What was wrong with it.
    pub error: String,
}

/// The answer to [`Request::Status`](super::Request::Status): the daemon and the workspaces it watches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DaemonStatus {
    /// The daemon's process id.
    pub pid: u32,
    /// The store directory it serves.
    pub store: String,
    /// This run of the daemon's random id (hex): its tokens mean nothing to another run.
    pub instance: String,
    /// When it started (nanoseconds since the epoch).
    pub started_ns: i64,
    /// How long it has run, seconds.
    pub uptime_secs: f64,
    /// Its resident memory, where the system tells.
    pub memory_rss_bytes: Option<u64>,
    /// The journal's current token.
    pub token: Token,
    /// Directories watched, over all workspaces.
    pub watches: usize,
    /// Event queue overflows, over all workspaces.
    pub overflows: u64,
    /// Clients following its event stream.
    pub subscribers: usize,
    /// The watched workspaces.
    pub workspaces: Vec<WatchStatus>,
}

/// One watched workspace in a [`DaemonStatus`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchStatus {
    /// Its path as the protocol names it.
    pub workspace: String,
    /// Whether its watch works (false: nothing about it is trusted).
    pub watching: bool,
    /// Why it cannot be watched.
    pub broken: Option<String>,
    /// Directories watched.
    pub watches: usize,
    /// File events seen.
    pub events: u64,
    /// Event queue overflows.
    pub overflows: u64,
    /// What the journal holds since the last token handed out.
    pub journal: JournalStatus,
    /// The overlay whose tree this is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlay: Option<u64>,
    /// Its automatic snapshots, if on.
    pub auto: Option<AutoStatus>,
}

/// A watched workspace's journal in a [`WatchStatus`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JournalStatus {
    /// Directories with events about themselves.
    pub dirty_dirs: usize,
    /// Entries with events.
    pub dirty_entries: usize,
    /// Subtrees nothing below which is trusted.
    pub dirty_trees: usize,
    /// Events held since the last reset.
    pub held_events: usize,
}

/// A watched workspace's automatic snapshots in a [`WatchStatus`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AutoStatus {
    /// The tree must have been quiet this long after a change (ms).
    pub quiet_ms: u64,
    /// Never two automatic snapshots closer than this (ms).
    pub floor_ms: u64,
    /// Snapshots taken.
    pub taken: u64,
    /// Snapshots tried.
    pub attempts: u64,
    /// When the last one was taken (nanoseconds since the epoch).
    pub last_ns: Option<i64>,
    /// When the last attempt started (nanoseconds since the epoch).
    pub last_started_ns: Option<i64>,
    /// Whether one is being taken now.
    pub running: bool,
    /// Whether changes wait for the tree to be quiet.
    pub pending: bool,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
}
