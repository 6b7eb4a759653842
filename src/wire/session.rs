//! Sessions: what each agent session recorded in a workspace (`log --by-session`).

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text, time_text};
use crate::session::SessionSummary;

/// One session's summary (`log --by-session --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Session {
    /// The session id (the `session` metadata).
    pub session: String,
    /// The agent that recorded it, if named.
    pub agent: Option<String>,
    /// Its first snapshot (hex).
    pub first: String,
    /// That snapshot's time (RFC 3339, UTC).
    pub first_time: String,
    /// Its last snapshot (hex).
    pub last: String,
    /// That snapshot's time.
    pub last_time: String,
    /// Snapshots carrying the session.
    pub snapshots: usize,
    /// How many of them are changes.
    pub changes: usize,
    /// Lines its changes added.
    pub added: u64,
    /// Lines its changes removed.
    pub removed: u64,
    /// Lines of the live files blamed on its snapshots.
    pub present_lines: u64,
    /// Whether its changes are still in the live tree: wholly, partly or reverted.
    pub present: String,
    /// The files its changes touched, sorted.
    pub files: Vec<String>,
    /// The exact bytes of each file (base64; null for UTF-8 names), only when one is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_bytes: Option<Vec<Option<String>>>,
}

impl From<&SessionSummary> for Session {
    fn from(s: &SessionSummary) -> Self {
        let bytes: Vec<Option<String>> = s.files.iter().map(|p| path_bytes(p)).collect();
        Session {
            session: s.session.clone(),
            agent: s.agent.clone(),
            first: s.first.0.hex(),
            first_time: time_text(s.first.1),
            last: s.last.0.hex(),
            last_time: time_text(s.last.1),
            snapshots: s.snapshots,
            changes: s.changes,
            added: s.added,
            removed: s.removed,
            present_lines: s.present_lines,
            present: s.presence.name().to_string(),
            files: s.files.iter().map(|p| path_text(p)).collect(),
            files_bytes: bytes.iter().any(Option::is_some).then_some(bytes),
        }
    }
}
