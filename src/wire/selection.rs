//! Taking back every change a metadata selector names (`revert --meta KEY=VALUE --json`).

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text, time_text};
use crate::session::{HunkConflict, SelectionRevert};

/// One change taken back: from `before` to `after`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectedChange {
    /// The state before it (hex).
    pub before: String,
    /// The snapshot carrying the selected metadata, after it (hex).
    pub after: String,
    /// When that snapshot was taken (RFC 3339, UTC).
    pub time: String,
    /// Its message.
    pub message: String,
}

/// A file the revert set back (or, as a preview, would).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectedFile {
    /// restore, delete, create, merge or unchanged.
    pub action: String,
    /// Conflict regions left in it.
    pub conflicts: usize,
    /// The path.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
}

/// A hunk kept as it is because later edits overlap it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectedConflict {
    /// The change's after snapshot (hex).
    pub after: String,
    /// The change's before snapshot (hex).
    pub before: String,
    /// Why.
    pub why: String,
    /// The first line it covers in the file as the revert leaves it (from 1); None for a
    /// whole-file conflict.
    pub line: Option<usize>,
    /// How many lines it covers.
    pub lines: Option<usize>,
    /// What the change wrote there.
    pub changed: String,
    /// What is there now, kept.
    pub live: String,
    /// What taking the change back would have put there.
    pub reverted: String,
    /// The file.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
}

impl From<&HunkConflict> for SelectedConflict {
    fn from(c: &HunkConflict) -> Self {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        SelectedConflict {
            after: c.after.hex(),
            before: c.before.hex(),
            why: c.why.clone(),
            line: c.lines.map(|l| l.0),
            lines: c.lines.map(|l| l.1),
            changed: text(&c.changed),
            live: text(&c.live),
            reverted: text(&c.reverted),
            path: path_text(&c.path),
            path_bytes: path_bytes(&c.path),
        }
    }
}

/// What taking back the selected changes did, or with `dry_run` would do.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectionReverted {
    /// Whether nothing was changed (a preview).
    pub dry_run: bool,
    /// The changes taken back, newest first.
    pub changes: Vec<SelectedChange>,
    /// Per path.
    pub files: Vec<SelectedFile>,
    /// Hunks kept because later edits overlap them.
    pub conflicts: Vec<SelectedConflict>,
    /// The snapshot of the live tree taken first (the state undo goes back to).
    pub before: Option<String>,
    /// The workspace's state afterwards.
    pub after: Option<String>,
    /// The operation recorded (None when nothing was written).
    pub op: Option<u64>,
}

impl SelectionReverted {
    /// From [`crate::session::revert_selected`]'s report (`dry_run` as asked).
    pub fn new(r: &SelectionRevert, dry_run: bool) -> Self {
        SelectionReverted {
            dry_run,
            changes: r
                .changes
                .iter()
                .map(|c| SelectedChange {
                    before: c.before.hex(),
                    after: c.after.hex(),
                    time: time_text(c.record.time_ns()),
                    message: c.record.message().to_string(),
                })
                .collect(),
            files: r
                .files
                .iter()
                .map(|f| SelectedFile {
                    action: f.action.to_string(),
                    conflicts: f.conflicts,
                    path: path_text(&f.path),
                    path_bytes: path_bytes(&f.path),
                })
                .collect(),
            conflicts: r.conflicts.iter().map(SelectedConflict::from).collect(),
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            op: r.op,
        }
    }
}
