//! Reverting a change range: undo what happened between snapshots A and B, on top of the
//! current workspace, keeping everything else.
//!
//! Per path that changed in A..B: if the workspace still holds B's version, it is set back to
//! A's; if it already holds A's, nothing is done; if it changed again after B, A's version is
//! merged three ways into it (base B, ours the workspace, theirs A), as `git revert` does. A
//! conflict fails the whole revert (or, when asked, leaves conflict markers). Nothing is written
//! unless every path can be reverted, and the revert is one undoable operation.

use std::path::Path;

use crate::apply::{
    FileOutcome, Planned, fail, read_current, request_key, resume_pending, resumed_outcomes,
    write_with_op,
};
use crate::diff::{DiffRequest, Rev, diff};
use crate::error::Result;
use crate::id::Id;
use crate::patch::{MergeLabels, MergeOutcome, merge3};
use crate::store::Store;
use crate::store::tree::Kind;

/// What a revert did.
#[derive(Clone, Debug, Default)]
pub struct RevertReport {
    /// Per path: what was done ("restore", "delete", "merge", "unchanged").
    pub files: Vec<FileOutcome>,
    /// The snapshot taken before writing.
    pub before: Option<Id>,
    /// The snapshot taken after.
    pub after: Option<Id>,
    /// The operation recorded (None when there was nothing to do or with `check`).
    pub op: Option<u64>,
}

/// Reverts the changes from `a` to `b` in the workspace at `root`, limited to `paths` if any.
pub fn revert(
    store: &Store,
    root: &Path,
    a: Id,
    b: Id,
    paths: &[Vec<u8>],
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    let root = crate::workspace::canonical(root, true)?;
    let flags = [u8::from(markers)];
    let mut parts: Vec<&[u8]> = vec![b"revert", &a.0, &b.0, &flags];
    parts.extend(paths.iter().map(Vec::as_slice));
    let key = request_key(&parts);
    if let Some((pending, done)) = resume_pending(store, &root, "revert", key, check)? {
        return Ok(RevertReport {
            files: resumed_outcomes(&pending),
            before: done.before,
            after: done.after,
            op: Some(done.op),
        });
    }
    let d = diff(
        store,
        Rev::Snapshot(a),
        Rev::Snapshot(b),
        None,
        &DiffRequest {
            renames: false,
            paths: paths.to_vec(),
        },
    )?;
    let reader = d.reader();
    let mut plan = Vec::new();
    for c in &d.changes {
        let path = c.path.clone();
        let a_side = match c.old {
            Some(s) => Some((s.kind, reader.read_blob(&s.id)?)),
            None => None,
        };
        let b_side = match c.new {
            Some(s) => Some((s.kind, reader.read_blob(&s.id)?)),
            None => None,
        };
        let live = read_current(&root, &path)?;
        let mut outcome = FileOutcome {
            path: path.clone(),
            old_path: None,
            action: "restore",
            hunks: Vec::new(),
            merged: false,
            conflicts: 0,
        };
        let same = |x: &Option<(Kind, Vec<u8>)>, y: &Option<(Kind, Vec<u8>)>| x == y;
        if same(&live, &a_side) {
            outcome.action = "unchanged";
            plan.push(Planned {
                outcome,
                write: None,
                remove: Vec::new(),
            });
            continue;
        }
        let (write, remove) = if same(&live, &b_side) {
            match &a_side {
                Some((k, data)) => (Some((path.clone(), *k, data.clone())), Vec::new()),
                None => {
                    outcome.action = "delete";
                    (None, vec![path.clone()])
                }
            }
        } else {
            // Changed again after B: merge A's version into it, with B as the base.
            let (Some((lk, ours)), Some((_, base)), Some((ak, theirs))) = (&live, &b_side, &a_side)
            else {
                return Err(fail(
                    &path,
                    "changed since the second snapshot, and was added or deleted in between: cannot merge the revert",
                ));
            };
            if *lk == Kind::Symlink || *ak == Kind::Symlink {
                return Err(fail(
                    &path,
                    "a symlink changed since the second snapshot: cannot merge the revert",
                ));
            }
            outcome.action = "merge";
            outcome.merged = true;
            let labels = MergeLabels {
                ours: "workspace".into(),
                theirs: "reverted".into(),
            };
            let content = match merge3(base, ours, theirs, labels) {
                MergeOutcome::Clean(c) => c,
                MergeOutcome::Conflict {
                    with_markers,
                    conflicts,
                } => {
                    if !markers {
                        return Err(fail(
                            &path,
                            format!(
                                "changed since the second snapshot and the revert conflicts with it ({} region(s); use --conflict=markers)",
                                conflicts.len()
                            ),
                        ));
                    }
                    outcome.conflicts = conflicts.len();
                    with_markers
                }
            };
            (Some((path.clone(), *lk, content)), Vec::new())
        };
        plan.push(Planned {
            outcome,
            write,
            remove,
        });
    }
    let mut report = RevertReport {
        files: plan.iter().map(|p| p.outcome.clone()).collect(),
        ..RevertReport::default()
    };
    let work: Vec<Planned> = plan
        .into_iter()
        .filter(|p| p.write.is_some() || !p.remove.is_empty())
        .collect();
    if check || work.is_empty() {
        return Ok(report);
    }
    let done = write_with_op(store, &root, "revert", key, &work, false)?;
    report.before = done.before;
    report.after = done.after;
    report.op = Some(done.op);
    Ok(report)
}
