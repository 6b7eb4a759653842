//! Reject: paths or hunks of the overlay set back to the base inside the overlay (the workspace
//! untouched), and undoing it.

use super::{
    OverlayRecord, Target, diff_locked, find_record, lock, review_with, run_lock, runs, save,
    state, undone_ops,
};
use crate::compare::{DiffRequest, Rev, diff};
use crate::diff::tree::FileChange;
use crate::error::{Error, Result};
use crate::files::RelPath;
use crate::hunks;
use crate::id::Id;
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};

/// What a reject did.
#[derive(Clone, Debug, Default)]
pub struct RejectReport {
    /// Paths set back to the base inside the overlay.
    pub paths: Vec<Vec<u8>>,
    /// The operation recorded.
    pub op: Option<u64>,
}

/// Puts the base version of `paths` (all pending changes when empty) back inside the overlay:
/// later commands there see the base. The workspace is not touched.
/// With `hunks`, only those hunks are taken out of their files (the rest stays pending).
pub(crate) fn reject(
    store: &Store,
    rec: &mut OverlayRecord,
    paths: &[RelPath],
    hunks: &[String],
) -> Result<RejectReport> {
    reject_selected(store, rec, paths, hunks, None)
}

/// Takes out of the overlay the pending changes run `n` made (see [`by_run`](super::by_run)), leaving the
/// other runs' lines, also where they share a hunk. Fails when the overlay has no run `n`.
pub(crate) fn reject_run(store: &Store, rec: &mut OverlayRecord, n: u32) -> Result<RejectReport> {
    reject_selected(store, rec, &[], &[], Some(n))
}

pub(super) fn reject_selected(
    store: &Store,
    rec: &mut OverlayRecord,
    paths: &[RelPath],
    hunks: &[String],
    run: Option<u32>,
) -> Result<RejectReport> {
    let _run = run_lock(store, rec)?;
    let _lock = lock(store, rec)?;
    let od = diff_locked(store, rec, false)?;
    let mut rewrites: Vec<(Vec<u8>, crate::store::tree::Kind, Vec<u8>)> = Vec::new();
    let mut whole: Option<rustc_hash::FxHashSet<Vec<u8>>> = None;
    let (run_ids, run_whole) = match run {
        Some(n) => runs::selection(store, rec, &od.diff, n)?,
        None => Default::default(),
    };
    if run.is_some() {
        if run_ids.is_empty() && run_whole.is_empty() {
            return Ok(RejectReport::default());
        }
        whole = Some(run_whole.into_iter().collect());
    }
    let hunks = if run.is_some() { &run_ids[..] } else { hunks };
    if !hunks.is_empty() {
        let undone = undone_ops(store, rec)?;
        let reader = store.reader()?;
        let mut unknown: rustc_hash::FxHashSet<&str> = hunks.iter().map(String::as_str).collect();
        let mut files = rustc_hash::FxHashSet::default();
        for c in &od.diff.changes {
            let wanted = |id: &str| hunks.iter().any(|x| x == id);
            let Some(hs) = review_with(&reader, rec, c, &undone, &wanted, false)? else {
                continue;
            };
            let hs: &Vec<crate::hunks::ReviewHunk> = &hs.into_iter().map(|(h, _)| h).collect();
            let picked = hs
                .iter()
                .filter(|h| h.pending && hunks.contains(&h.id))
                .count();
            if picked == 0 {
                continue;
            }
            for h in hs.iter().filter(|h| h.pending) {
                unknown.remove(h.id.as_str());
            }
            if picked == hs.iter().filter(|h| h.pending).count() && hs.iter().all(|h| h.pending) {
                files.insert(c.path.clone());
            } else if let (Some((old, new)), Some(n)) = (hunks::texts(&reader, c)?, c.new) {
                let kept = hunks::select(&old, &new, hs, &|id| !hunks.iter().any(|x| x == id));
                rewrites.push((c.path.clone(), n.kind, kept));
            }
        }
        if let Some(id) = unknown.into_iter().next() {
            return Err(Error::UnknownHunk {
                hunk: id.to_string(),
                overlay: rec.id,
            });
        }
        whole.get_or_insert_default().extend(files);
    }
    let chosen: Vec<FileChange> = od
        .diff
        .changes
        .iter()
        .filter(|c| {
            paths.is_empty()
                || paths
                    .iter()
                    .any(|q| crate::diff::tree::is_under(&c.path, q))
        })
        .filter(|c| whole.as_ref().is_none_or(|w| w.contains(&c.path)))
        .cloned()
        .collect();
    let before = od.state;
    drop(od);
    if chosen.is_empty() && rewrites.is_empty() {
        return Ok(RejectReport::default());
    }
    let targets: Vec<Target> = chosen.iter().map(|c| (c.path.clone(), c.old)).collect();
    set_paths(store, rec, &targets)?;
    if !rewrites.is_empty() {
        // The overlay's own files, which its command may be changing meanwhile: written
        // through descriptors, as a workspace is.
        let dirs = crate::files::Beneath::open(&rec.backend.imp().writable_root(store, rec))?;
        for (path, kind, bytes) in &rewrites {
            dirs.write(path, *kind, &mut bytes.as_slice())?;
        }
    }
    let gone: rustc_hash::FxHashSet<&[u8]> = chosen.iter().map(|c| c.path.as_slice()).collect();
    if rec.raced.iter().any(|p| gone.contains(p.as_slice())) {
        rec.raced.retain(|p| !gone.contains(p.as_slice()));
        save(store, rec)?;
    }
    let after = state(store, rec)?;
    let op = oplog::record_alone(
        store,
        OpRecord::new(
            store,
            format!("{REJECT_KIND}{}", rec.id),
            rec.workspace.clone(),
            Some(before),
            Some(after),
        ),
    )?;
    Ok(RejectReport {
        paths: chosen
            .into_iter()
            .map(|c| c.path)
            .chain(rewrites.into_iter().map(|(p, _, _)| p))
            .collect(),
        op: Some(op),
    })
}

/// The operation kind of a reject, followed by the overlay's id. `undo` recognises it and
/// puts the overlay back instead of restoring the workspace.
pub const REJECT_KIND: &str = "overlay-reject:";

pub(super) fn set_paths(store: &Store, rec: &OverlayRecord, targets: &[Target]) -> Result<()> {
    rec.backend.imp().set_paths(store, rec, targets)
}

/// For `undo` and `redo` of a reject: the overlay an operation kind names, if it is a reject.
pub fn rejected_overlay(kind: &str) -> Option<u64> {
    kind.strip_prefix(REJECT_KIND)?.parse().ok()
}

/// Moves an overlay from state `from` (which it must still be in, unless `force`) to state
/// `to`, path by path: the undo (or redo) of a reject.
pub fn move_state(store: &Store, id: u64, from: Id, to: Id, force: bool) -> Result<()> {
    let mut rec =
        find_record(store, &id.to_string()).map_err(|_| Error::RejectedOverlayGone(id))?;
    let _run = run_lock(store, &rec)?;
    let _lock = lock(store, &mut rec)?;
    let now = state(store, &mut rec)?;
    let reader = store.reader()?;
    if reader.snapshot_record(&now)?.root != reader.snapshot_record(&from)?.root && !force {
        return Err(Error::OverlayChanged(id));
    }
    let d = diff(
        store,
        Rev::Snapshot(now),
        Rev::Snapshot(to),
        None,
        &DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )?;
    let targets: Vec<Target> = d.changes.iter().map(|c| (c.path.clone(), c.new)).collect();
    drop(d);
    drop(reader);
    set_paths(store, &rec, &targets)?;
    state(store, &mut rec)?;
    Ok(())
}
