//! Accept: the overlay's changes (all pending, by path, by hunk, by run, or edited hunks) carried
//! onto the live workspace, three ways, as one undoable operation.

use std::path::Path;

use super::{
    OverlayRecord, diff_locked, lock, namespace, review_with, run_lock, runs, save, undone_ops,
};
use crate::apply::{FileOutcome, Planned, request_key, write_with_op};
use crate::carry::{CarryLabels, Conflict, ConflictPolicy, Settle, plan_carry};
use crate::compare::Diff;
use crate::error::{Error, Result};
use crate::files::RelPath;
use crate::hunks;
use crate::id::Id;
use crate::store::Store;

/// How to accept.
#[derive(Clone, Debug)]
pub struct AcceptOptions {
    /// Only these paths (and what is below them); empty for every pending change.
    pub paths: Vec<RelPath>,
    /// What to do with a file changed on both sides that does not merge cleanly.
    pub policy: ConflictPolicy,
    /// Accept changes to ignored paths too.
    pub include_ignored: bool,
    /// Only these hunks (ids from [`Overlay::review_hunks`](super::Overlay::review_hunks)); empty for whole files. The rest of
    /// their files stays pending. With hunks, `paths` are files taken whole besides.
    pub hunks: Vec<String>,
    /// Hunks the user edited (ids from [`Overlay::review_hunks`](super::Overlay::review_hunks)), taken as edited, like `hunks`; an
    /// edited hunk counts as accepted (the user took their version of it).
    pub edited: Vec<hunks::EditedHunk>,
    /// Only what this run made (see [`Overlay::by_run`](super::Overlay::by_run)), instead of `paths` and `hunks`: its hunks
    /// (cut from other runs' where they share one) and its changes without line hunks.
    pub run: Option<u32>,
}

/// What an accept did.
#[derive(Clone, Debug, Default)]
pub struct AcceptReport {
    /// Per path: "write", "delete", "merge", "unchanged" (the workspace already had it).
    pub files: Vec<FileOutcome>,
    /// Paths left pending because they conflict.
    pub conflicts: Vec<Conflict>,
    /// Ignored paths left in the overlay (see [`AcceptOptions::include_ignored`]).
    pub ignored: Vec<Vec<u8>>,
    /// Ignored paths copied into the workspace (with `include_ignored`), and how many files.
    pub ignored_copied: Vec<Vec<u8>>,
    /// Files copied for them.
    pub ignored_files: u64,
    /// The workspace snapshots around the write, and the operation (None when nothing was
    /// written).
    pub before: Option<Id>,
    /// The snapshot after.
    pub after: Option<Id>,
    /// The operation.
    pub op: Option<u64>,
}

/// Accepts the overlay's pending changes (or some of them) onto its workspace.
pub(crate) fn accept(
    store: &Store,
    rec: &mut OverlayRecord,
    opts: &AcceptOptions,
) -> Result<AcceptReport> {
    let root = crate::workspace::resolve(&rec.workspace_path())?;
    let _run = run_lock(store, rec)?;
    let _lock = lock(store, rec)?;
    let od = diff_locked(store, rec, false)?;
    let by_run;
    let opts = match opts.run {
        Some(n) => {
            let (hunks, whole) = runs::selection(store, rec, &od.diff, n)?;
            if hunks.is_empty() && whole.is_empty() {
                return Ok(AcceptReport::default());
            }
            by_run = AcceptOptions {
                paths: whole.into_iter().map(RelPath::trusted).collect(),
                hunks,
                run: None,
                ..opts.clone()
            };
            &by_run
        }
        None => opts,
    };
    let wanted = |p: &[u8]| {
        opts.paths.is_empty() || opts.paths.iter().any(|q| crate::diff::tree::is_under(p, q))
    };
    let mut report = AcceptReport::default();
    let take: Vec<Vec<u8>> = od
        .diff
        .changes
        .iter()
        .map(|c| c.path.clone())
        .filter(|p| wanted(p))
        .collect();
    let ignored: Vec<Vec<u8>> = od.ignored.iter().filter(|p| wanted(p)).cloned().collect();
    // With hunks, `paths` name files taken whole besides them (what `accept -p` sends for
    // changes without line hunks).
    let (take, partial) = if opts.hunks.is_empty() && opts.edited.is_empty() {
        (take, PartialAccept::default())
    } else {
        let (mut whole, part) = plan_hunks(
            store,
            rec,
            &root,
            &od.diff,
            (&opts.hunks, &opts.edited),
            opts.policy,
        )?;
        if !opts.paths.is_empty() {
            let had: rustc_hash::FxHashSet<Vec<u8>> = whole.iter().cloned().collect();
            whole.extend(take.into_iter().filter(|p| !had.contains(p)));
        }
        (whole, part)
    };
    let new_ids: rustc_hash::FxHashMap<Vec<u8>, Option<Id>> = od
        .diff
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.new.map(|n| n.id)))
        .collect();
    drop(od);
    // Paths the workspace changed while a command wrote them in the overlay: conflicts,
    // unless the user chose a side.
    let raced: rustc_hash::FxHashSet<Vec<u8>> = rec.raced.iter().cloned().collect();
    let (raced_taken, mut take): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        take.into_iter().partition(|p| raced.contains(p));
    let mut raced_conflicts = Vec::new();
    let mut kept_ours = Vec::new();
    match opts.policy {
        ConflictPolicy::Theirs => take.extend(raced_taken),
        ConflictPolicy::Ours => kept_ours = raced_taken,
        _ => {
            raced_conflicts = raced_taken
                .into_iter()
                .map(|path| Conflict {
                    path,
                    why: "the workspace changed it while a command ran in the overlay, which may have read the workspace's version".into(),
                    regions: 0,
                    settle: Some(Settle::ChooseSideOrReject),
                })
                .collect();
        }
    }
    if !take.is_empty() || !partial.hunks.is_empty() || !partial.conflicts.is_empty() {
        let mut partial = partial;
        partial.whole = take.clone();
        carry_onto(
            store,
            rec,
            &root,
            partial,
            &new_ids,
            opts.policy,
            &mut report,
        )?;
    }
    if !kept_ours.is_empty() {
        settle(rec, &kept_ours, &new_ids, None);
    }
    report.conflicts.extend(raced_conflicts);
    let conflicted: rustc_hash::FxHashSet<&[u8]> =
        report.conflicts.iter().map(|c| c.path.as_slice()).collect();
    let resolved: rustc_hash::FxHashSet<&[u8]> = take
        .iter()
        .chain(&kept_ours)
        .map(Vec::as_slice)
        .filter(|p| !conflicted.contains(p))
        .collect();
    if rec.raced.iter().any(|p| resolved.contains(p.as_slice())) || !kept_ours.is_empty() {
        rec.raced.retain(|p| !resolved.contains(p.as_slice()));
        save(store, rec)?;
    }
    // After the tracked changes are written, so that a failed accept copies nothing.
    if opts.include_ignored && !ignored.is_empty() {
        report.ignored_files = namespace::copy_ignored(store, rec, &root, &ignored)?;
        report.ignored_copied = ignored;
    } else {
        report.ignored = ignored;
    }
    Ok(report)
}

/// The tracked part of an accept: carry `take` from the base to the state onto the workspace,
/// as one operation, and remember what was settled.
pub(super) fn carry_onto(
    store: &Store,
    rec: &mut OverlayRecord,
    root: &Path,
    mut partial: PartialAccept,
    new_ids: &rustc_hash::FxHashMap<Vec<u8>, Option<Id>>,
    policy: ConflictPolicy,
    report: &mut AcceptReport,
) -> Result<()> {
    let take_owned = std::mem::take(&mut partial.whole);
    let take = take_owned.as_slice();
    let state_id = rec.state.unwrap_or(rec.base);
    let mut planned: Vec<Planned> = Vec::new();
    if !take.is_empty() {
        let carried = plan_carry(
            store,
            root,
            rec.base,
            state_id,
            &take
                .iter()
                .cloned()
                .map(RelPath::trusted)
                .collect::<Vec<_>>(),
            policy,
            &CarryLabels {
                ours: "workspace",
                theirs: "overlay",
            },
        )?;
        // The carry's path filter takes prefixes; keep exactly the pending paths.
        let taken: rustc_hash::FxHashSet<&[u8]> = take.iter().map(Vec::as_slice).collect();
        planned = carried
            .planned
            .into_iter()
            .filter(|p| taken.contains(p.outcome.path.as_slice()))
            .collect();
        report.conflicts = carried.conflicts;
    }
    let partly: rustc_hash::FxHashSet<Vec<u8>> =
        partial.hunks.iter().map(|(p, _)| p.clone()).collect();
    planned.extend(partial.planned);
    report.conflicts.extend(partial.conflicts);
    report.files = planned.iter().map(|p| p.outcome.clone()).collect();
    let conflicted: Vec<&[u8]> = report.conflicts.iter().map(|c| c.path.as_slice()).collect();
    let work: Vec<_> = planned
        .into_iter()
        .filter(|p| p.write.is_some() || !p.remove.is_empty())
        .collect();
    if !work.is_empty() {
        let mut parts: Vec<&[u8]> = vec![b"overlay-accept", &state_id.0];
        let id_bytes = rec.id.to_le_bytes();
        parts.push(&id_bytes);
        parts.extend(take.iter().map(Vec::as_slice));
        parts.extend(partial.hunks.iter().map(|(_, h)| h.as_bytes()));
        parts.extend(partial.edit_keys.iter().map(Vec::as_slice));
        let key = request_key(&parts);
        let done = write_with_op(store, root, "accept", key, &work, false)?;
        report.before = done.before;
        report.after = done.after;
        report.op = Some(done.op);
    }
    let conflicted: rustc_hash::FxHashSet<&[u8]> = conflicted.into_iter().collect();
    let written: Vec<Vec<u8>> = work
        .iter()
        .map(|p| p.outcome.path.clone())
        .filter(|p| !partly.contains(p))
        .collect();
    let rest: Vec<Vec<u8>> = take
        .iter()
        .filter(|p| !conflicted.contains(p.as_slice()))
        .cloned()
        .collect();
    settle(rec, &rest, new_ids, None);
    if let Some(op) = report.op {
        // What this operation wrote stops being settled if it is undone.
        settle(rec, &written, new_ids, Some(op));
    }
    let op = report.op.unwrap_or(0);
    rec.settled_hunks.extend(
        partial
            .hunks
            .into_iter()
            .filter(|(p, _)| !conflicted.contains(p.as_slice()))
            .map(|(p, h)| (p, h, op)),
    );
    save(store, rec)
}

/// What an accept takes: whole files, and files merged from a selection of their hunks.
#[derive(Default)]
pub(super) struct PartialAccept {
    /// Paths accepted whole.
    whole: Vec<Vec<u8>>,
    planned: Vec<Planned>,
    conflicts: Vec<Conflict>,
    /// (path, hunk id) accepted.
    hunks: Vec<(Vec<u8>, String)>,
    /// The edited hunks among them, as bytes: two edits of a hunk are two requests.
    edit_keys: Vec<Vec<u8>>,
}

/// Splits a hunk selection (ids, and hunks the user edited): files whose every pending hunk
/// is selected unedited are accepted whole (returned as paths); the others get the base plus
/// their accepted, selected and edited hunks, merged three ways onto the workspace's file.
pub(super) fn plan_hunks(
    store: &Store,
    rec: &OverlayRecord,
    root: &Path,
    d: &Diff,
    (ids, edits): (&[String], &[hunks::EditedHunk]),
    policy: ConflictPolicy,
) -> Result<(Vec<Vec<u8>>, PartialAccept)> {
    let undone = undone_ops(store, rec)?;
    let mut unknown: rustc_hash::FxHashSet<&str> = ids
        .iter()
        .map(String::as_str)
        .chain(edits.iter().map(|e| e.id.as_str()))
        .collect();
    let edited = |id: &str| edits.iter().any(|e| e.id == id);
    let mut whole = Vec::new();
    let mut part = PartialAccept::default();
    let reader = store.reader()?;
    for c in &d.changes {
        let wanted = |id: &str| ids.iter().any(|x| x == id) || edited(id);
        let Some(hs) = review_with(&reader, rec, c, &undone, &wanted, false)? else {
            continue;
        };
        let hs: &Vec<hunks::ReviewHunk> = &hs.into_iter().map(|(h, _)| h).collect();
        let chosen: Vec<&hunks::ReviewHunk> =
            hs.iter().filter(|h| h.pending && wanted(&h.id)).collect();
        if chosen.is_empty() {
            continue;
        }
        for h in &chosen {
            unknown.remove(h.id.as_str());
        }
        // Whole only while no hunk of it was accepted alone: a carry from the base would
        // take those again, against a workspace that has them (a conflict where they touch).
        if chosen.len() == hs.len() && !chosen.iter().any(|h| edited(&h.id)) {
            whole.push(c.path.clone());
            continue;
        }
        let Some((old, new)) = hunks::texts(&reader, c)? else {
            continue;
        };
        if rec.raced.contains(&c.path)
            && !matches!(policy, ConflictPolicy::Theirs | ConflictPolicy::Ours)
        {
            part.conflicts.push(Conflict {
                path: c.path.clone(),
                why: "the workspace changed it while a command ran in the overlay".into(),
                regions: 0,
                settle: Some(Settle::ChooseSide),
            });
            continue;
        }
        let settled = |id: &str| hs.iter().any(|h| h.id == id && !h.pending);
        let mine: Vec<hunks::EditedHunk> = edits
            .iter()
            .filter(|e| chosen.iter().any(|h| h.id == e.id))
            .cloned()
            .collect();
        let target = hunks::select_edited(
            &old,
            &new,
            hs,
            &|id| ids.iter().any(|x| x == id) || settled(id),
            &hunks::resolve_edits(hs, &mine)?,
        );
        // The workspace is assumed to hold the hunks accepted already: merging against that
        // (not the base) keeps a hunk right next to an accepted one from conflicting with it.
        let assumed = hunks::select(&old, &new, hs, &settled);
        match hunks::merge_onto(
            root,
            &c.path,
            &assumed,
            &target,
            policy,
            ("workspace", "overlay"),
        )? {
            hunks::Onto::Conflict(x) => {
                part.conflicts.push(x);
                continue;
            }
            hunks::Onto::Same => {}
            hunks::Onto::Write(p) => part.planned.push(p),
        }
        part.hunks
            .extend(chosen.iter().map(|h| (c.path.clone(), h.id.clone())));
        part.edit_keys
            .extend(mine.iter().map(hunks::EditedHunk::key));
    }
    if let Some(id) = unknown.into_iter().next() {
        return Err(Error::UnknownHunk {
            hunk: id.to_string(),
            overlay: rec.id,
        });
    }
    Ok((whole, part))
}

/// Records `paths` as settled with the overlay's content, by operation `op` when an undoable
/// write settled them (the settlement lapses when that operation is undone).
pub(super) fn settle(
    rec: &mut OverlayRecord,
    paths: &[Vec<u8>],
    new_ids: &rustc_hash::FxHashMap<Vec<u8>, Option<Id>>,
    op: Option<u64>,
) {
    let now: Vec<(Vec<u8>, Option<Id>)> = paths
        .iter()
        .filter_map(|p| new_ids.get(p).map(|id| (p.clone(), *id)))
        .collect();
    let replaced: rustc_hash::FxHashSet<&[u8]> = now.iter().map(|(p, _)| p.as_slice()).collect();
    rec.settled
        .retain(|(q, _)| !replaced.contains(q.as_slice()));
    rec.settled_by
        .retain(|(q, _)| !replaced.contains(q.as_slice()));
    if let Some(op) = op {
        rec.settled_by
            .extend(now.iter().map(|(p, _)| (p.clone(), op)));
    }
    rec.settled.extend(now);
}
