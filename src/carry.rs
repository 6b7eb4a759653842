//! Carrying the change between two snapshots onto the live workspace, keeping everything else.
//!
//! This is the engine under `revert` (carry B -> A: the range undone) and `overlay accept`
//! (carry base -> overlay: the overlay's work taken). Per path that differs between `from` and
//! `to`:
//! - the workspace already holds `to`'s version: nothing to do;
//! - the workspace still holds `from`'s version: take `to`'s (a write or a removal);
//! - it changed on both sides: merge three ways (base `from`, ours the workspace, theirs `to`);
//!   the execute bit follows the side that changed it. What cannot be merged (a deletion
//!   against an edit, a symlink, a binary file, conflicting lines) is a conflict, settled by
//!   the [`ConflictPolicy`].
//!
//! Nothing is written here: the caller hands the plan to `crate::apply::write_with_op`, so
//! every path or none is written, as one undoable operation.

use std::path::Path;

use crate::apply::{FileOutcome, Planned, fail, read_current};
use crate::compare::{DiffRequest, Rev, diff};
use crate::error::Result;
use crate::files::RelPath;
use crate::id::Id;
use crate::patch::{MergeLabels, MergeOutcome, merge3};
use crate::store::Store;
use crate::store::tree::Kind;

/// What to do with a path changed on both sides that does not merge cleanly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictPolicy {
    /// Fail the whole operation; nothing is written.
    Fail,
    /// Write git-style conflict markers where lines conflict (other conflicts are skipped).
    Markers,
    /// Leave the workspace's file as it is and report the path as a conflict.
    Skip,
    /// Keep the workspace's version.
    Ours,
    /// Take the carried version.
    Theirs,
}

/// One path that could not be carried cleanly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// Workspace-relative path.
    pub path: Vec<u8>,
    /// Why it conflicts.
    pub why: String,
    /// How many line regions conflict; 0 when the conflict is not about lines (a deletion
    /// against an edit, a symlink, a binary file).
    pub regions: usize,
    /// What settles it, where a choice of the caller does (the CLI names its flags).
    pub settle: Option<Settle>,
}

/// What settles a [`Conflict`], in library terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settle {
    /// Choosing a side: [`ConflictPolicy::Theirs`] or [`ConflictPolicy::Ours`].
    ChooseSide,
    /// Choosing a side, or rejecting the change (`overlay::reject`).
    ChooseSideOrReject,
}

/// A carry's plan: what to write, and what was left out.
pub(crate) struct CarryPlan {
    /// Every path that differs between the two snapshots, with what will be done.
    pub planned: Vec<Planned>,
    /// Paths left as they are because of a conflict (with [`ConflictPolicy::Skip`], or
    /// [`ConflictPolicy::Markers`] where markers cannot express it).
    pub conflicts: Vec<Conflict>,
}

/// Labels for conflict markers.
pub(crate) struct CarryLabels {
    /// What the workspace side is called.
    pub ours: &'static str,
    /// What the carried side is called.
    pub theirs: &'static str,
}

/// Plans carrying the change `from` -> `to` (both stored snapshots) onto the workspace at
/// `root`, limited to `paths` if any. Renames are carried as a deletion and a creation.
pub(crate) fn plan_carry(
    store: &Store,
    root: &Path,
    from: Id,
    to: Id,
    paths: &[RelPath],
    policy: ConflictPolicy,
    labels: &CarryLabels,
) -> Result<CarryPlan> {
    plan_carry_with(store, root, from, to, paths, policy, labels, false)
}

/// [`plan_carry`], following renames when `renames`: a file `from` -> `to` moved is moved in
/// the workspace too, its content merged three ways with what the workspace did to it since
/// (base `from`'s version, ours the workspace's file at the old path, theirs `to`'s).
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_carry_with(
    store: &Store,
    root: &Path,
    from: Id,
    to: Id,
    paths: &[RelPath],
    policy: ConflictPolicy,
    labels: &CarryLabels,
    renames: bool,
) -> Result<CarryPlan> {
    let d = diff(
        store,
        Rev::Snapshot(from),
        Rev::Snapshot(to),
        None,
        &DiffRequest {
            renames,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: paths.to_vec(),
        },
    )?;
    let reader = d.reader();
    let mut planned = Vec::new();
    let mut conflicts = Vec::new();
    for c in &d.changes {
        if let (Some(src), Some(old), Some(new)) = (&c.old_path, c.old, c.new) {
            let base = (old.kind, reader.read_blob(&old.id)?);
            let theirs = (new.kind, reader.read_blob(&new.id)?);
            let rename = plan_rename(root, src, &c.path, base, theirs, policy, labels)?;
            match rename {
                Ok(p) => planned.push(p),
                Err(conflict) => {
                    let (path, why) = conflict;
                    settle(policy_for_shape(policy), &path, why, 0, &mut conflicts)?;
                }
            }
            continue;
        }
        let path = c.path.clone();
        let base = match c.old {
            Some(s) => Some((s.kind, reader.read_blob(&s.id)?)),
            None => None,
        };
        let theirs = match c.new {
            Some(s) => Some((s.kind, reader.read_blob(&s.id)?)),
            None => None,
        };
        let live = read_current(root, &path)?;
        let mut outcome = FileOutcome {
            path: path.clone(),
            old_path: None,
            action: "unchanged",
            hunks: Vec::new(),
            merged: false,
            conflicts: 0,
        };
        let take = |outcome: &mut FileOutcome, side: &Option<(Kind, Vec<u8>)>| match side {
            Some((k, data)) => {
                outcome.action = "write";
                (Some((path.clone(), *k, data.clone())), Vec::new())
            }
            None => {
                outcome.action = "delete";
                (None, vec![path.clone()])
            }
        };
        let (write, remove) = if live == theirs {
            (None, Vec::new())
        } else if live == base {
            take(&mut outcome, &theirs)
        } else {
            match merge_one(&base, &live, &theirs, labels) {
                Ok(Merged::Clean(kind, content)) => {
                    outcome.action = "merge";
                    outcome.merged = true;
                    (Some((path.clone(), kind, content)), Vec::new())
                }
                Ok(Merged::Lines {
                    kind,
                    with_markers,
                    regions,
                }) => match policy {
                    ConflictPolicy::Markers => {
                        outcome.action = "merge";
                        outcome.merged = true;
                        outcome.conflicts = regions;
                        (Some((path.clone(), kind, with_markers)), Vec::new())
                    }
                    _ => {
                        let why = conflict_why(regions);
                        match settle(policy, &path, why, regions, &mut conflicts)? {
                            Some(true) => take(&mut outcome, &theirs),
                            _ => (None, Vec::new()),
                        }
                    }
                },
                Err(why) => {
                    let p = if policy == ConflictPolicy::Markers {
                        ConflictPolicy::Skip
                    } else {
                        policy
                    };
                    match settle(p, &path, why, 0, &mut conflicts)? {
                        Some(true) => take(&mut outcome, &theirs),
                        _ => (None, Vec::new()),
                    }
                }
            }
        };
        if conflicts.last().is_some_and(|k: &Conflict| k.path == path) {
            outcome.action = "conflict";
        }
        planned.push(Planned {
            outcome,
            write,
            remove,
        });
    }
    Ok(CarryPlan { planned, conflicts })
}

/// The policy for a conflict markers cannot express (not about lines): skip instead.
fn policy_for_shape(policy: ConflictPolicy) -> ConflictPolicy {
    if policy == ConflictPolicy::Markers {
        ConflictPolicy::Skip
    } else {
        policy
    }
}

/// A carried rename `src` -> `dst`: the workspace's file at `src` (merged with the carried
/// content change, if any) moves to `dst`. `Err((path, why))` when it cannot be done
/// cleanly: `src` is gone or `dst` is taken by other content.
fn plan_rename(
    root: &Path,
    src: &[u8],
    dst: &[u8],
    base: (Kind, Vec<u8>),
    theirs: (Kind, Vec<u8>),
    policy: ConflictPolicy,
    labels: &CarryLabels,
) -> Result<std::result::Result<Planned, (Vec<u8>, String)>> {
    let live_src = read_current(root, src)?;
    let live_dst = read_current(root, dst)?;
    let mut outcome = FileOutcome {
        path: dst.to_vec(),
        old_path: Some(src.to_vec()),
        action: "unchanged",
        hunks: Vec::new(),
        merged: false,
        conflicts: 0,
    };
    let Some(ours) = live_src else {
        if live_dst.as_ref() == Some(&theirs) {
            // Already moved.
            return Ok(Ok(Planned {
                outcome,
                write: None,
                remove: Vec::new(),
            }));
        }
        return Ok(Err((
            src.to_vec(),
            format!(
                "moved to {} on the other side, but gone from the workspace: cannot follow the rename",
                crate::files::display(dst)
            ),
        )));
    };
    if live_dst.is_some() {
        return Ok(Err((
            dst.to_vec(),
            format!(
                "{} moves here, but the workspace has a file here already",
                crate::files::display(src)
            ),
        )));
    }
    let (kind, content) = if ours == base {
        theirs
    } else {
        match merge_one(&Some(base), &Some(ours), &Some(theirs), labels) {
            Ok(Merged::Clean(kind, content)) => {
                outcome.merged = true;
                (kind, content)
            }
            Ok(Merged::Lines {
                kind,
                with_markers,
                regions,
            }) if policy == ConflictPolicy::Markers => {
                outcome.merged = true;
                outcome.conflicts = regions;
                (kind, with_markers)
            }
            Ok(Merged::Lines { regions, .. }) => {
                return Ok(Err((src.to_vec(), conflict_why(regions))));
            }
            Err(why) => return Ok(Err((src.to_vec(), why))),
        }
    };
    outcome.action = "rename";
    Ok(Ok(Planned {
        outcome,
        write: Some((dst.to_vec(), kind, content)),
        remove: vec![src.to_vec()],
    }))
}

/// Applies the policy to a conflict: `Some(true)` takes the carried side, `Some(false)` keeps
/// the workspace's, `None` records the conflict and keeps the workspace's.
fn settle(
    policy: ConflictPolicy,
    path: &[u8],
    why: String,
    regions: usize,
    conflicts: &mut Vec<Conflict>,
) -> Result<Option<bool>> {
    match policy {
        ConflictPolicy::Fail => Err(fail(path, why)),
        ConflictPolicy::Theirs => Ok(Some(true)),
        ConflictPolicy::Ours => Ok(Some(false)),
        ConflictPolicy::Skip | ConflictPolicy::Markers => {
            conflicts.push(Conflict {
                path: path.to_vec(),
                why,
                regions,
                settle: None,
            });
            Ok(None)
        }
    }
}

enum Merged {
    Clean(Kind, Vec<u8>),
    Lines {
        kind: Kind,
        with_markers: Vec<u8>,
        regions: usize,
    },
}

/// Merges one path changed on both sides; `Err` says why it cannot be merged at all.
fn merge_one(
    base: &Option<(Kind, Vec<u8>)>,
    live: &Option<(Kind, Vec<u8>)>,
    theirs: &Option<(Kind, Vec<u8>)>,
    labels: &CarryLabels,
) -> std::result::Result<Merged, String> {
    let (Some((bk, base)), Some((lk, ours)), Some((tk, theirs))) = (base, live, theirs) else {
        return Err(
            "changed in the workspace, and created or deleted on the other side: cannot merge"
                .into(),
        );
    };
    if [*bk, *lk, *tk].contains(&Kind::Symlink) {
        return Err("a symlink changed on both sides: cannot merge".into());
    }
    if [base, ours, theirs]
        .iter()
        .any(|b| crate::diff::text::is_binary(b))
    {
        return Err("a binary file changed on both sides: cannot merge".into());
    }
    // The execute bit follows whichever side changed it.
    let kind = if tk != bk { *tk } else { *lk };
    match merge3(
        base,
        ours,
        theirs,
        MergeLabels {
            ours: labels.ours.into(),
            theirs: labels.theirs.into(),
        },
    ) {
        MergeOutcome::Clean(c) => Ok(Merged::Clean(kind, c)),
        MergeOutcome::Conflict {
            with_markers,
            conflicts,
        } => Ok(Merged::Lines {
            kind,
            with_markers,
            regions: conflicts.len(),
        }),
    }
}

/// Why a file conflicts: both sides changed it, in `regions` places.
fn conflict_why(regions: usize) -> String {
    let noun = if regions == 1 { "region" } else { "regions" };
    format!("changed on both sides and the changes conflict ({regions} {noun})")
}
