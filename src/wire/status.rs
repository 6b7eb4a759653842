//! The workspace against its last snapshot (`status --json`), and the paths a scan passed
//! over.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Change, SkipReason, path_bytes, path_text};
use crate::compare::Diff;
use crate::files::RelPath;
use crate::id::Id;

/// A path a scan passed over or warned about (too large, unreadable, a special file...).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Skipped {
    /// The path.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// Why.
    pub reason: SkipReason,
    /// More about it (an error's text).
    pub detail: String,
}

impl From<&crate::store::snapshot::Skipped> for Skipped {
    fn from(s: &crate::store::snapshot::Skipped) -> Self {
        Skipped {
            path: path_text(&s.path),
            path_bytes: path_bytes(&s.path),
            reason: s.reason,
            detail: s.detail.clone(),
        }
    }
}

/// What changed in a workspace since its last snapshot (`status --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Status {
    /// The workspace's directory.
    pub workspace: String,
    /// Its last snapshot (hex), what the changes are against.
    pub base: String,
    /// Whether nothing changed.
    pub clean: bool,
    /// The changed paths (without line counts), sorted.
    pub changes: Vec<Change>,
    /// Paths the scan passed over: neither changes nor unchanged.
    pub skipped: Vec<Skipped>,
}

impl Status {
    /// The changes `d` of workspace `root` from its last snapshot `base` to the live tree,
    /// limited to `paths` (everything when empty).
    pub fn new(root: &Path, base: &Id, d: &Diff, paths: &[RelPath]) -> Self {
        Status {
            workspace: root.display().to_string(),
            base: base.hex(),
            clean: d.changes.is_empty(),
            changes: d.changes.iter().map(Change::from).collect(),
            skipped: d
                .live_skipped(paths)
                .into_iter()
                .map(Skipped::from)
                .collect(),
        }
    }
}
