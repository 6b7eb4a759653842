//! Reverting a change range: undo what happened between snapshots A and B, on top of the
//! current workspace, keeping everything else.
//!
//! It carries the change B -> A onto the workspace ([`crate::carry`]): per path that changed
//! in A..B, if the workspace still holds B's version it is set back to A's; if it already holds
//! A's, nothing is done; if it changed again after B, A's version is merged three ways into it
//! (base B, ours the workspace, theirs A), as `git revert` does. A conflict stops the whole
//! revert (or, when asked, leaves conflict markers): [`revert`] fails on the first, and
//! [`revert_report`] lists them all, for a caller that shows them (a dry run answers "would
//! this conflict?"). Nothing is written unless every path can be reverted, and the revert is
//! one undoable operation.

use std::path::Path;

use crate::apply::{Planned, request_key, resume_pending, resumed_outcomes, write_with_op};
use crate::carry::{CarryLabels, ConflictPolicy, plan_carry_with};
use crate::error::Result;
use crate::files::RelPath;
use crate::id::Id;
use crate::store::Store;

pub use crate::hunks::RevertReport;

/// Reverts the changes from `a` to `b` in the workspace at `root`, limited to `paths` if any;
/// a conflict (without `markers`) is an error naming the first conflicting path.
pub fn revert(
    store: &Store,
    root: &Path,
    a: Id,
    b: Id,
    paths: &[RelPath],
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    revert_report(store, root, a, b, paths, markers, check)?.or_conflict()
}

/// [`revert`], with conflicts listed in the report's `conflicts` instead of failing: then
/// nothing is written, and `files` says what the other paths would have had done.
pub fn revert_report(
    store: &Store,
    root: &Path,
    a: Id,
    b: Id,
    paths: &[RelPath],
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    let root = crate::workspace::resolve(root)?;
    let flags = [u8::from(markers)];
    let mut parts: Vec<&[u8]> = vec![b"revert", &a.0, &b.0, &flags];
    parts.extend(paths.iter().map(RelPath::as_bytes));
    let key = request_key(&parts);
    if let Some((pending, done)) = resume_pending(store, &root, "revert", key, check)? {
        return Ok(RevertReport {
            files: resumed_outcomes(&pending),
            before: done.before,
            after: done.after,
            op: Some(done.op),
            conflicts: Vec::new(),
        });
    }
    // Skip, not Fail: every conflict is listed, and a conflict writes nothing either way.
    let policy = if markers {
        ConflictPolicy::Markers
    } else {
        ConflictPolicy::Skip
    };
    let labels = CarryLabels {
        ours: "workspace",
        theirs: "reverted",
    };
    // Renames are followed: a file A..B moved, and edited since, moves back with its edits.
    let carried = plan_carry_with(store, &root, b, a, paths, policy, &labels, true)?;
    let mut plan = carried.planned;
    for p in &mut plan {
        if p.outcome.action == "write" {
            p.outcome.action = "restore";
        }
    }
    let mut report = RevertReport {
        files: plan.iter().map(|p| p.outcome.clone()).collect(),
        conflicts: carried.conflicts,
        ..RevertReport::default()
    };
    let work: Vec<Planned> = plan
        .into_iter()
        .filter(|p| p.write.is_some() || !p.remove.is_empty())
        .collect();
    if check || work.is_empty() || !report.conflicts.is_empty() {
        return Ok(report);
    }
    let done = write_with_op(store, &root, "revert", key, &work, false)?;
    report.before = done.before;
    report.after = done.after;
    report.op = Some(done.op);
    Ok(report)
}

/// Reverts single hunks of the change from `a` to `b` (ids from `rewind diff A B --json
/// --hunks`): per file, B's version without those hunks is merged three ways onto the
/// workspace's file (base B), so later edits are kept. One undoable operation; nothing is
/// written unless every file merges (or `markers`), nor with `check`; a conflict is an error
/// naming the first conflicting file. Hunks of added or deleted files, binary files and
/// renames are reverted by path instead.
pub fn revert_hunks(
    store: &Store,
    root: &Path,
    a: Id,
    b: Id,
    ids: &[String],
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    revert_hunks_report(store, root, a, b, ids, markers, check)?.or_conflict()
}

/// [`revert_hunks`], with conflicts listed in the report instead of failing (see
/// [`revert_report`]).
pub fn revert_hunks_report(
    store: &Store,
    root: &Path,
    a: Id,
    b: Id,
    ids: &[String],
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    let root = crate::workspace::resolve(root)?;
    let d = crate::compare::diff(
        store,
        crate::compare::Rev::Snapshot(a),
        crate::compare::Rev::Snapshot(b),
        None,
        &crate::compare::DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )?;
    let reader = store.reader()?;
    let wanted = |id: &str| ids.iter().any(|x| x == id);
    let all: Vec<_> = crate::hunks::diff_hunks(&reader, &d.changes)?
        .into_iter()
        .zip(&d.changes)
        .map(|(h, c)| h.map(|h| crate::hunks::refine(&c.path, h, &wanted)))
        .collect();
    let modified = |c: &crate::diff::FileChange| c.old.is_some() && c.new.is_some();
    crate::hunks::check_ids(
        ids,
        d.changes
            .iter()
            .zip(&all)
            .filter(|(c, _)| modified(c))
            .flat_map(|(_, h)| h.iter().flatten()),
        crate::error::HunkSet::Between {
            a: a.short(),
            b: b.short(),
        },
    )?;
    let mut files = Vec::new();
    for (c, hs) in d.changes.iter().zip(&all) {
        let Some(hs) = hs.as_ref().filter(|_| modified(c)) else {
            continue;
        };
        if !hs.iter().any(|h| ids.contains(&h.id)) {
            continue;
        }
        let Some((old, new)) = crate::hunks::texts(&reader, c)? else {
            continue;
        };
        let target = crate::hunks::select(&old, &new, hs, &|id| !ids.iter().any(|x| x == id));
        files.push((c.path.clone(), new, target));
    }
    let flags = [u8::from(markers)];
    let mut parts: Vec<&[u8]> = vec![b"revert-hunks", &a.0, &b.0, &flags];
    parts.extend(ids.iter().map(|s| s.as_bytes()));
    let key = request_key(&parts);
    crate::hunks::write_selection(store, &root, "revert", key, files, markers, check)
}
