//! Overlays: one overlay, its pending changes for review, and what accepting or rejecting did.

use serde::{Deserialize, Serialize};

use super::{Changes, EditedFile, Hunk, path_bytes, path_text, paths_and_bytes, time_text};
use crate::diff::{DiffOptions, PatchOptions};
use crate::error::Result;
use crate::overlay::{AcceptReport, RejectReport, RunChanges};
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
    /// The directory of the workspace it belongs to.
    pub workspace: String,
    /// The workspace's number in the store (what the API's routes take); None when the
    /// workspace is no longer registered.
    pub workspace_id: Option<u64>,
    /// When it was created (RFC 3339, UTC).
    pub created: String,
    /// When it was created, nanoseconds since the Unix epoch.
    pub created_ns: i64,
    /// Paths changed in it and not yet accepted or rejected (None when it cannot be told now).
    pub pending: Option<usize>,
    /// Whether a command runs in it now.
    pub running: bool,
    /// The directory holding its files, where commands run (None for a namespace overlay).
    pub path: Option<String>,
    /// Ignored paths it wrote (build outputs): not pending; accept copies them only when
    /// asked.
    pub ignored: Vec<String>,
    /// The exact bytes of each ignored path (base64; null for UTF-8 names), only when one is
    /// not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_bytes: Option<Vec<Option<String>>>,
}

impl Overlay {
    /// The overlay `r` of `store`, with its pending count as of now.
    pub fn new(store: &Store, o: &crate::overlay::Overlay) -> Result<Self> {
        let r = &o.rec;
        let (pending, running) = o.pending_now(store);
        let workspace_id = store
            .reader()?
            .workspace(&r.workspace_path())?
            .map(|w| w.id());
        let (ignored, ignored_bytes) = paths_and_bytes(&r.ignored);
        Ok(Overlay {
            id: r.id,
            name: r.name.clone(),
            backend: r.backend.name().to_string(),
            base: r.base.hex(),
            state: r.state.map(|s| s.hex()),
            workspace: path_text(&r.workspace),
            workspace_id,
            created: time_text(r.created_ns),
            created_ns: r.created_ns,
            pending,
            running,
            path: r
                .backend
                .files_dir(store, r)
                .map(|p| p.display().to_string()),
            ignored,
            ignored_bytes,
        })
    }
}

/// What creating an overlay made: the overlay, and how.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayCreated {
    /// The overlay.
    #[serde(flatten)]
    pub overlay: Overlay,
    /// Why `auto` fell back to the copy backend, if it did.
    pub fallback: Option<String>,
    /// Files copied (copy backend).
    pub files_copied: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl OverlayCreated {
    /// From what [`crate::overlay::create`] made in `store`.
    pub fn new(store: &Store, c: &crate::overlay::Created) -> Result<Self> {
        Ok(OverlayCreated {
            overlay: Overlay::new(store, &c.overlay)?,
            fallback: c.fallback.clone(),
            files_copied: c.files_copied,
            seconds: c.seconds,
        })
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
    /// The exact bytes of each ignored path (base64; null for UTF-8 names), only when one is
    /// not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_bytes: Option<Vec<Option<String>>>,
}

impl OverlayDiff {
    /// The pending changes of overlay `store`'s `rec` (`od` from
    /// [`crate::overlay::Overlay::diff`]), each text change with its review hunks; with
    /// `patch`, the unified diff too.
    pub fn new(
        store: &Store,
        rec: &crate::overlay::Overlay,
        od: &crate::overlay::OverlayDiff,
        opts: &DiffOptions,
        patch: Option<&PatchOptions>,
    ) -> Result<Self> {
        let hunks = rec.review_hunks(store, &od.diff)?;
        let changes = Changes::build(
            &od.diff,
            rec.base().hex(),
            od.state.hex(),
            opts,
            patch,
            &mut |i, _| Ok(hunks.get(i).cloned().flatten()),
        )?;
        let (ignored, ignored_bytes) = paths_and_bytes(&od.ignored);
        Ok(OverlayDiff {
            overlay: rec.id(),
            changes,
            ignored,
            ignored_bytes,
        })
    }
}

/// A conflict an accept left pending.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayConflict {
    /// The path.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// Why it conflicts.
    pub why: String,
    /// Conflicting regions.
    pub regions: usize,
}

impl From<&crate::carry::Conflict> for OverlayConflict {
    fn from(c: &crate::carry::Conflict) -> Self {
        OverlayConflict {
            path: path_text(&c.path),
            path_bytes: path_bytes(&c.path),
            why: c.why.clone(),
            regions: c.regions,
        }
    }
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
    /// Ignored outputs passed over (left in the overlay).
    pub ignored: Vec<String>,
    /// The exact bytes of each of those (base64; null for UTF-8 names), only when one is not
    /// UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_bytes: Option<Vec<Option<String>>>,
    /// Ignored outputs copied into the workspace (when asked).
    pub ignored_copied: Vec<String>,
    /// The exact bytes of each of those, only when one is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_copied_bytes: Option<Vec<Option<String>>>,
    /// Files copied for them.
    pub ignored_files: u64,
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
        let (ignored, ignored_bytes) = paths_and_bytes(&r.ignored);
        let (ignored_copied, ignored_copied_bytes) = paths_and_bytes(&r.ignored_copied);
        OverlayAccept {
            overlay: id,
            files: r
                .files
                .iter()
                .filter(|f| f.action != "conflict")
                .map(EditedFile::from)
                .collect(),
            conflicts: r.conflicts.iter().map(OverlayConflict::from).collect(),
            ignored,
            ignored_bytes,
            ignored_copied,
            ignored_copied_bytes,
            ignored_files: r.ignored_files,
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
    /// The exact bytes of each of those (base64; null for UTF-8 names), only when one is not
    /// UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_bytes: Option<Vec<Option<String>>>,
    /// The operation recorded.
    pub op: Option<u64>,
}

impl OverlayReject {
    /// From the reject of overlay `id`.
    pub fn new(id: u64, r: &RejectReport) -> Self {
        let (rejected, rejected_bytes) = paths_and_bytes(&r.paths);
        OverlayReject {
            overlay: id,
            rejected,
            rejected_bytes,
            op: r.op,
        }
    }
}

/// An overlay's pending changes grouped by the command run that made them
/// (`overlay diff --by-run`): each group's hunk ids are what `--run N` takes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayRuns {
    /// The overlay.
    pub overlay: u64,
    /// Runs in order, then changes made outside any run (`run` 0), then parts where runs'
    /// lines interleave (`run` null: taken by hunk id only).
    pub runs: Vec<OverlayRunChanges>,
}

/// One run's pending changes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayRunChanges {
    /// The run's number (from 1); 0: made outside any run; null: several runs interleaved.
    pub run: Option<u32>,
    /// The command line.
    pub command: Option<String>,
    /// The overlay's state before the run (hex).
    pub before: Option<String>,
    /// Its state after the run (hex).
    pub after: Option<String>,
    /// When the run finished (RFC 3339, UTC).
    pub finished: Option<String>,
    /// Per file, the run's pending hunks.
    pub files: Vec<OverlayRunFile>,
}

/// One file's part of a run's changes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OverlayRunFile {
    /// The path.
    pub path: String,
    /// The hunks; null for a change without line hunks (binary, symlink, mode), taken whole.
    pub hunks: Option<Vec<Hunk>>,
}

impl OverlayRuns {
    /// From [`crate::Overlay::by_run`] of overlay `id`.
    pub fn new(id: u64, groups: Vec<RunChanges>) -> Self {
        OverlayRuns {
            overlay: id,
            runs: groups
                .into_iter()
                .map(|g| OverlayRunChanges {
                    run: g.run,
                    command: g.record.as_ref().map(|r| r.command.clone()),
                    before: g.record.as_ref().map(|r| r.before.hex()),
                    after: g.record.as_ref().map(|r| r.after.hex()),
                    finished: g.record.as_ref().map(|r| time_text(r.finished_ns)),
                    files: g
                        .files
                        .into_iter()
                        .map(|f| OverlayRunFile {
                            path: path_text(&f.path),
                            hunks: f.hunks.map(|hs| hs.into_iter().map(Hunk::from).collect()),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}
