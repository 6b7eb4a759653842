//! Overlays: one overlay, its pending changes for review, and what accepting or rejecting did.

use serde::{Deserialize, Serialize};

use super::{Changes, EditedFile, path_text, time_text};
use crate::overlay::{AcceptReport, OverlayRecord, RejectReport};
use crate::store::Store;

/// One overlay (`overlay list --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Overlay {
    /// Its id (what the other overlay calls take).
    pub id: u64,
    /// Its name, if given.
    pub name: Option<String>,
    /// copy or namespace.
    pub backend: String,
    /// The snapshot it started from (hex).
    pub base: String,
    /// Its latest state snapshot (hex).
    pub state: Option<String>,
    /// The workspace it belongs to.
    pub workspace: String,
    /// When it was created (RFC 3339, UTC).
    pub created: String,
    /// Paths changed in it and not yet accepted or rejected (None when it cannot be told now).
    pub pending: Option<usize>,
    /// Whether a command runs in it now.
    pub running: bool,
    /// The directory holding its files, where commands run (None for a namespace overlay).
    pub path: Option<String>,
}

impl Overlay {
    /// The overlay `r` of `store`, with its pending count as of now.
    pub fn new(store: &Store, r: &OverlayRecord) -> Self {
        let (pending, running) = crate::overlay::pending_now(store, r);
        Overlay {
            id: r.id,
            name: r.name.clone(),
            backend: r.backend.name().to_string(),
            base: r.base.hex(),
            state: r.state.map(|s| s.hex()),
            workspace: path_text(&r.workspace),
            created: time_text(r.created_ns),
            pending,
            running,
            path: r
                .backend
                .files_dir(store, r)
                .map(|p| p.display().to_string()),
        }
    }
}

/// An overlay's pending changes, each text change with hunk ids that accept and reject take.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayDiff {
    /// The overlay.
    pub overlay: u64,
    /// The changes from its base (`old`) to its state now (`new`).
    #[serde(flatten)]
    pub changes: Changes,
    /// Ignored outputs it holds (accepted only when asked).
    pub ignored: Vec<String>,
}

/// A conflict an accept left pending.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayConflict {
    /// The path.
    pub path: String,
    /// Why it conflicts.
    pub why: String,
    /// Conflicting regions.
    pub regions: usize,
}

/// What accepting (some of) an overlay's changes did to the workspace.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayAccept {
    /// The overlay.
    pub overlay: u64,
    /// Files written into the workspace.
    pub files: Vec<EditedFile>,
    /// Conflicts left pending in the overlay.
    pub conflicts: Vec<OverlayConflict>,
    /// Ignored outputs passed over.
    pub ignored: Vec<String>,
    /// The workspace's state before (hex).
    pub before: Option<String>,
    /// The workspace's state after (hex).
    pub after: Option<String>,
    /// The operation recorded (undo takes it back).
    pub op: Option<u64>,
}

impl OverlayAccept {
    /// From the accept of overlay `id`.
    pub fn new(id: u64, r: &AcceptReport) -> Self {
        OverlayAccept {
            overlay: id,
            files: r
                .files
                .iter()
                .filter(|f| f.action != "conflict")
                .map(EditedFile::from)
                .collect(),
            conflicts: r
                .conflicts
                .iter()
                .map(|c| OverlayConflict {
                    path: path_text(&c.path),
                    why: c.why.clone(),
                    regions: c.regions,
                })
                .collect(),
            ignored: r.ignored.iter().map(|p| path_text(p)).collect(),
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            op: r.op,
        }
    }
}

/// What rejecting (some of) an overlay's changes did: those paths are back at the base inside
/// the overlay; the workspace is untouched.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayReject {
    /// The overlay.
    pub overlay: u64,
    /// The paths set back.
    pub rejected: Vec<String>,
    /// The operation recorded.
    pub op: Option<u64>,
}

impl OverlayReject {
    /// From the reject of overlay `id`.
    pub fn new(id: u64, r: &RejectReport) -> Self {
        OverlayReject {
            overlay: id,
            rejected: r.paths.iter().map(|p| path_text(p)).collect(),
            op: r.op,
        }
    }
}
