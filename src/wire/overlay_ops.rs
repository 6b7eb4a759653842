//! The smaller overlay answers: its files' directory, a drop, a pending hunk split in parts,
//! and a checkpoint of its state.

use serde::{Deserialize, Serialize};

use super::{Hunk, Snapshot, path_bytes, path_text};
use crate::hunks::ReviewHunk;

/// Where an overlay's files are (`overlay path --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayPath {
    /// The overlay.
    pub id: u64,
    /// The directory holding its files, where commands run.
    pub path: String,
}

/// What dropping an overlay did (`overlay drop --json`, the API's `DELETE`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayDropped {
    /// The overlay dropped.
    pub dropped: u64,
}

/// A pending hunk of an overlay cut at the unchanged lines between its runs of changes;
/// accept and reject take each part's id like a hunk's.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlaySplit {
    /// The overlay.
    pub overlay: u64,
    /// The file.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// The hunk split.
    pub hunk: String,
    /// Its parts (the hunk itself when it has one run of changes).
    pub parts: Vec<Hunk>,
}

impl OverlaySplit {
    /// Hunk `hunk` of `path` in overlay `overlay`, cut into `parts`.
    pub fn new(overlay: u64, path: &[u8], hunk: String, parts: Vec<ReviewHunk>) -> Self {
        OverlaySplit {
            overlay,
            path: path_text(path),
            path_bytes: path_bytes(path),
            hunk,
            parts: parts.into_iter().map(Hunk::from).collect(),
        }
    }
}

/// A checkpoint of an overlay's state.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlaySnapshot {
    /// The overlay.
    pub overlay: u64,
    /// The checkpoint; its meta has `overlay` (the overlay's id).
    pub snapshot: Snapshot,
}
