//! Undo and redo on top of the operation log.
//!
//! `undo` takes back the latest operation that changed the workspace and has not been undone,
//! by restoring the snapshot taken before it; `redo` takes back the latest undo. Both refuse to
//! overwrite changes made since the operation (listing them) unless forced.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::restore::{OpInfo, RestoreOptions, RestoreReport, restore};
use crate::store::Store;
use crate::store::oplog::{OpRecord, Operation};

/// Which operation `undo` (or `redo`) would take back.
pub fn pick(store: &Store, root: &Path, redo: bool, op: Option<u64>) -> Result<Operation> {
    let ws = root.as_os_str().as_bytes();
    let ops = store.reader()?.ops(Some(ws), usize::MAX)?;
    if let Some(id) = op {
        return match ops.into_iter().find(|o| o.id() == id) {
            Some(o) if o.changed_workspace() => Ok(o),
            Some(o) => Err(Error::OpChangedNothing {
                op: id,
                kind: o.kind().to_string(),
                workspace: root.to_path_buf(),
            }),
            None => Err(Error::NoOperation {
                op: id,
                workspace: root.to_path_buf(),
            }),
        };
    }
    // Walk newest first: an undo hides the op it reversed; a redo hides the undo it reversed.
    let mut hidden: HashSet<u64> = HashSet::new();
    for o in ops.iter().filter(|o| o.changed_workspace()) {
        if hidden.contains(&o.id()) {
            if let Some(r) = o.reverses() {
                // A hidden undo no longer hides its target; a hidden redo's undo stays hidden.
                if o.kind() == "redo" {
                    hidden.insert(r);
                }
            }
            continue;
        }
        let is_undo = o.kind() == "undo";
        let is_redo = o.kind() == "redo";
        if redo {
            if is_undo {
                return Ok(o.clone());
            }
            if !is_redo {
                break;
            }
        } else if !is_undo && !is_redo {
            return Ok(o.clone());
        }
        if let Some(r) = o.reverses() {
            hidden.insert(r);
        }
    }
    Err(Error::NothingToUndo { redo })
}

pub use crate::store::oplog::undone_ops;

/// Undoes (or with `redo`, redoes) an operation.
pub fn undo(
    store: &Store,
    root: &Path,
    redo: bool,
    op: Option<u64>,
    force: bool,
    progress: &dyn Progress,
) -> Result<(Operation, RestoreReport)> {
    let root = crate::workspace::resolve(root)?;
    let target_op = pick(store, &root, redo, op)?;
    if let Some(report) = undo_overlay_reject(store, &root, &target_op, redo, force)? {
        return Ok((target_op, report));
    }
    let before = target_op
        .before()
        .ok_or(Error::OpWithoutState(target_op.id()))?;
    // The states it names may have been forgotten since: say that, not "snapshot <hash> is
    // missing".
    let reader = store.reader()?;
    for (which, id) in [("before", Some(before)), ("after", target_op.after())] {
        if let Some(id) = id
            && reader.snapshot_raw(&id)?.is_none()
        {
            return Err(Error::StateForgotten {
                action: if redo { "redo" } else { "undo" },
                op: target_op.id(),
                kind: target_op.kind().to_string(),
                which,
                snapshot: id.short(),
            });
        }
    }
    drop(reader);
    if let (Some(after), false) = (target_op.after(), force) {
        let d = crate::compare::live_changes(store, after, &root)?;
        // Paths the after snapshot passed over (vanished, unreadable, special) were kept by the
        // operation; their state now is no later change.
        let passed_over: Vec<Vec<u8>> = store
            .reader()?
            .snapshot_record(&after)?
            .skipped
            .into_iter()
            .filter(|s| s.reason.excluded() && !s.path.is_empty())
            .map(|s| s.path)
            .collect();
        let changed: Vec<_> = d
            .changes
            .iter()
            .filter(|c| {
                !passed_over
                    .iter()
                    .any(|p| crate::diff::tree::is_under(&c.path, p))
            })
            .collect();
        if !changed.is_empty() {
            let paths: Vec<String> = changed
                .iter()
                .map(|c| crate::files::display(&c.path))
                .collect();
            return Err(Error::ChangedSince {
                action: if redo { "redo" } else { "undo" },
                op: target_op.id(),
                paths,
            });
        }
    }
    let info = OpInfo {
        kind: if redo { "redo".into() } else { "undo".into() },
        reverses: Some(target_op.id()),
        undoable: true,
    };
    let report = restore(
        store,
        &root,
        before,
        &RestoreOptions {
            force: true,
            from_workspace: true,
            ..RestoreOptions::default()
        },
        &info,
        progress,
    )?;
    Ok((target_op, report))
}

/// Undo of an overlay's reject (or redo of that undo): the overlay, not the workspace, goes
/// back to the state before (or after) the reject. `None` when `op` is about something else.
fn undo_overlay_reject(
    store: &Store,
    root: &Path,
    op: &Operation,
    redo: bool,
    force: bool,
) -> Result<Option<RestoreReport>> {
    let reject_kind = if redo {
        // A redo takes back an undo: of a reject, if the operation it reversed was one.
        let Some(reversed) = op.reverses() else {
            return Ok(None);
        };
        let ws = root.as_os_str().as_bytes();
        match store
            .reader()?
            .ops(Some(ws), usize::MAX)?
            .into_iter()
            .find(|o| o.id() == reversed)
        {
            Some(o) => o.kind().to_string(),
            None => return Ok(None),
        }
    } else {
        op.kind().to_string()
    };
    let Some(overlay) = crate::overlay::rejected_overlay(&reject_kind) else {
        return Ok(None);
    };
    let (Some(from), Some(to)) = (op.after(), op.before()) else {
        return Err(Error::OpWithoutState(op.id()));
    };
    crate::overlay::move_state(store, overlay, from, to, force)?;
    let recorded = crate::store::oplog::record_alone(
        store,
        OpRecord {
            reverses: Some(op.id()),
            ..OpRecord::new(
                store,
                if redo { "redo" } else { "undo" },
                op.workspace().to_vec(),
                Some(from),
                Some(to),
            )
        },
    )?;
    Ok(Some(RestoreReport {
        workspace: root.to_path_buf(),
        target: to,
        before: Some(from),
        after: Some(to),
        op: Some(recorded),
        ..RestoreReport::default()
    }))
}
