//! Writes to a workspace: restore (whole, by path, by hunk; or its dry-run preview), undo and
//! redo.

use serde::{Deserialize, Serialize};

use super::{PathPair, path_bytes, path_text, paths_and_bytes};
use crate::apply::FileOutcome;
use crate::diff::{ChangeStatus, FileChange};
use crate::hunks::RevertReport;
use crate::restore::RestoreReport;
use crate::store::oplog::Operation;

/// One path a restore writes or removes (`restore --json`'s plan row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlanEntry {
    /// The path.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// The change from the live tree to the target.
    pub status: ChangeStatus,
    /// file, executable, symlink or dir.
    pub kind: String,
    /// What it does to the live tree: create, overwrite or delete.
    pub action: String,
}

impl From<&FileChange> for PlanEntry {
    fn from(c: &FileChange) -> Self {
        let kind = c.new.or(c.old).map_or("file", |s| s.kind.name());
        let action = match c.status {
            ChangeStatus::Added => "create",
            ChangeStatus::Deleted => "delete",
            _ => "overwrite",
        };
        PlanEntry {
            path: path_text(&c.path),
            path_bytes: path_bytes(&c.path),
            status: c.status,
            kind: kind.to_string(),
            action: action.to_string(),
        }
    }
}

/// A file an edit by hunk changed (`apply`/`revert --json`'s file row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EditedFile {
    /// The path, and the one it had for a rename.
    #[serde(flatten)]
    pub paths: PathPair,
    /// modify, create, delete, rename, copy or mode.
    pub action: String,
    /// Whether a three-way merge was needed.
    pub merged: bool,
    /// Conflict regions left as markers.
    pub conflicts: usize,
}

impl From<&FileOutcome> for EditedFile {
    fn from(f: &FileOutcome) -> Self {
        EditedFile {
            paths: PathPair::new(&f.path, f.old_path.as_deref()),
            action: f.action.to_string(),
            merged: f.merged,
            conflicts: f.conflicts,
        }
    }
}

/// What a restore did, or with `dry_run` would do (`restore --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Restore {
    /// The workspace.
    pub workspace: String,
    /// The snapshot restored from (hex).
    pub target: String,
    /// Whether nothing was changed (a preview).
    pub dry_run: bool,
    /// The snapshot of the live tree taken first (the state undo goes back to).
    pub before: Option<String>,
    /// The workspace's state afterwards.
    pub after: Option<String>,
    /// Every path written or removed (or, for a preview, that would be).
    pub plan: Vec<PlanEntry>,
    /// Of the plan: live files that are (or would be) overwritten.
    pub overwrites: u64,
    /// Of the plan: live paths that are (or would be) deleted.
    pub deletes: u64,
    /// Of the plan: paths that are (or would be) created.
    pub creates: u64,
    /// Files restored by hunk (only for a restore by hunk ids).
    pub edited: Vec<EditedFile>,
    /// Files and symlinks written.
    pub written: u64,
    /// Of `written`, the symlinks.
    pub symlinks_written: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Entries removed.
    pub deleted: u64,
    /// Paths the target never looked at (ignored or skipped then), left alone.
    pub kept: Vec<String>,
    /// The exact bytes of each kept path (base64; null for UTF-8 names), only when one is
    /// not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_bytes: Option<Vec<Option<String>>>,
    /// The operation recorded (what undo takes back).
    pub op: Option<u64>,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl Restore {
    /// From a restore's report (`dry_run` as asked).
    pub fn new(r: &RestoreReport, dry_run: bool) -> Self {
        let plan: Vec<PlanEntry> = r.plan.iter().map(PlanEntry::from).collect();
        let count = |a: &str| plan.iter().filter(|p| p.action == a).count() as u64;
        let (kept, kept_bytes) = paths_and_bytes(&r.kept);
        Restore {
            workspace: r.workspace.display().to_string(),
            target: r.target.hex(),
            dry_run,
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            overwrites: count("overwrite"),
            deletes: count("delete"),
            creates: count("create"),
            plan,
            edited: Vec::new(),
            written: r.written,
            symlinks_written: r.symlinks_written,
            bytes_written: r.bytes_written,
            deleted: r.deleted,
            kept,
            kept_bytes,
            op: r.op,
            seconds: r.seconds,
        }
    }

    /// From a restore by hunk of `workspace` from `target`.
    pub fn from_hunks(workspace: String, target: String, r: &RevertReport) -> Self {
        Restore {
            workspace,
            target,
            dry_run: false,
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            plan: Vec::new(),
            overwrites: 0,
            deletes: 0,
            creates: 0,
            edited: r.files.iter().map(EditedFile::from).collect(),
            written: r.files.len() as u64,
            symlinks_written: 0,
            bytes_written: 0,
            deleted: 0,
            kept: Vec::new(),
            kept_bytes: None,
            op: r.op,
            seconds: 0.0,
        }
    }
}

/// The operation an undo or redo took back.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UndoneOp {
    /// Its id in the operation log.
    pub id: u64,
    /// Its kind (snapshot, restore, run, undo, ...).
    pub kind: String,
}

/// What an undo or redo did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Undo {
    /// Whether this was a redo.
    pub redo: bool,
    /// The operation taken back.
    pub undone: UndoneOp,
    /// The operation recorded for this undo (itself undoable).
    pub op: Option<u64>,
    /// The state before.
    pub before: Option<String>,
    /// The state after.
    pub after: Option<String>,
    /// The paths written or removed.
    pub plan: Vec<PlanEntry>,
    /// Files and symlinks written.
    pub written: u64,
    /// Entries removed.
    pub deleted: u64,
}

impl Undo {
    /// From the operation taken back and the restore that did it.
    pub fn new(target: &Operation, r: &RestoreReport, redo: bool) -> Self {
        Undo {
            redo,
            undone: UndoneOp {
                id: target.id(),
                kind: target.kind().to_string(),
            },
            op: r.op,
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            plan: r.plan.iter().map(PlanEntry::from).collect(),
            written: r.written,
            deleted: r.deleted,
        }
    }
}

/// What a revert did, or with `dry_run` would do (`revert --json`; the `revert` tool): the
/// files written, and the conflicts that stopped it (then nothing was written).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Revert {
    /// Whether nothing was changed (a preview).
    pub dry_run: bool,
    /// Files written (or that would be).
    pub files: Vec<EditedFile>,
    /// Files whose revert conflicts with later edits; when there is one, nothing was written.
    pub conflicts: Vec<super::OverlayConflict>,
    /// The snapshot of the live tree taken first (the state undo goes back to).
    pub before: Option<String>,
    /// The workspace's state afterwards.
    pub after: Option<String>,
    /// The operation recorded (what undo takes back).
    pub op: Option<u64>,
}

impl Revert {
    /// From a revert's report (`dry_run` as asked).
    pub fn new(r: &RevertReport, dry_run: bool) -> Self {
        Revert {
            dry_run,
            files: r.files.iter().map(EditedFile::from).collect(),
            conflicts: r
                .conflicts
                .iter()
                .map(super::OverlayConflict::from)
                .collect(),
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            op: r.op,
        }
    }
}
