//! A workspace's runs as units of review: between two snapshots of a workspace, each `rewind
//! run` and each agent tool call a hook recorded is a unit, and the change from one snapshot
//! to the other is grouped by the unit that made each line, so one tool call's edits can be
//! read, and taken back, apart from the others', even where two of them share a hunk.
//!
//! The snapshots of the workspace's log from A to B are the versions followed
//! ([`crate::owners`]): a step that ends in a run's after snapshot or in a tool call's
//! snapshot belongs to that unit (numbered from 1, oldest first); any other step (edits made
//! between runs, a snapshot taken by hand or by the watch daemon) to no unit (0). A hunk
//! holding the lines of several units is cut at the boundaries between them. Taking one unit
//! back ([`revert_run`]) sets its lines back to what they were before it, merged three ways
//! onto the live files, so everything the other units and the user wrote stays.

use std::path::Path;

use crate::apply::{Planned, request_key};
use crate::carry::{CarryLabels, ConflictPolicy, plan_carry_with};
use crate::compare::{DiffRequest, Rev, diff};
use crate::diff::FileChange;
use crate::error::{Error, Result};
use crate::files::RelPath;
use crate::hunks::{self, RevertReport, ReviewHunk};
use crate::id::Id;
use crate::owners::{self, RunFile};
use crate::store::snapshot::Snapshot;
use crate::store::{Reader, Store};

/// Labels of the snapshots that close a unit: a run's after snapshot (its command succeeded
/// or failed) and the snapshot an agent hook takes after a tool call.
const UNIT_LABELS: [&str; 3] = ["after", "after_failure", "tool"];

/// One run or tool call between the two snapshots.
#[derive(Clone, Debug)]
pub struct Unit {
    /// Its number in the range, from 1, oldest first.
    pub n: u32,
    /// The workspace's snapshot before it.
    pub before: Id,
    /// The snapshot that closed it.
    pub after: Id,
    /// That snapshot's record (its label, message and metadata say what ran).
    pub record: Snapshot,
}

/// The changes one unit made (or that no unit made: `run` 0).
#[derive(Clone, Debug)]
pub struct UnitChanges {
    /// The unit's number; 0 for changes made outside any unit; None for parts where several
    /// units' lines interleave so that no cut separates them (taken back by hunk id only).
    pub run: Option<u32>,
    /// The unit (None for 0 and for interleaved parts).
    pub unit: Option<Unit>,
    /// Per file, its hunks; a change without line hunks (an added, deleted or binary file, a
    /// symlink, a mode) is taken whole and belongs to the last unit that changed the path.
    pub files: Vec<RunFile>,
}

/// The change from A to B grouped by unit.
#[derive(Clone, Debug)]
pub struct ByRun {
    /// The units between A and B, oldest first.
    pub units: Vec<Unit>,
    /// Units in order, then the changes of no unit, then interleaved parts; units that left
    /// nothing in the change have no group.
    pub groups: Vec<UnitChanges>,
}

/// The snapshots followed from A to B, each with its owner (0: no unit).
type Steps = Vec<(Id, u32)>;

/// The steps from `a` to `b` along workspace `ws`'s log, each a snapshot with its owner, and
/// the units among them. Fails unless `a` is an older snapshot of the workspace than `b`.
fn steps(reader: &Reader, ws: u64, a: Id, b: Id) -> Result<(Steps, Vec<Unit>)> {
    let rows = reader.snapshot_records(ws, usize::MAX)?;
    let not_a_range = || Error::NotALogRange {
        a: a.short(),
        b: b.short(),
    };
    let ib = rows
        .iter()
        .position(|(id, _)| *id == b)
        .ok_or_else(not_a_range)?;
    let ia = rows
        .iter()
        .position(|(id, _)| *id == a)
        .filter(|&ia| ia > ib)
        .ok_or_else(not_a_range)?;
    let mut steps = Vec::with_capacity(ia - ib);
    let mut units = Vec::new();
    for i in (ib..ia).rev() {
        let (id, r) = &rows[i];
        let owner = if r.meta("label").is_some_and(|l| UNIT_LABELS.contains(&l)) {
            let n = units.len() as u32 + 1;
            units.push(Unit {
                n,
                before: rows[i + 1].0,
                after: *id,
                record: Snapshot::new(*id, r.clone()),
            });
            n
        } else {
            0
        };
        steps.push((*id, owner));
    }
    Ok((steps, units))
}

/// One changed path of A..B, cut for review.
enum Part {
    /// A modified text file: its two sides and its hunks, each with its owner.
    Lines {
        old: Vec<u8>,
        new: Vec<u8>,
        hunks: Vec<(ReviewHunk, Option<u32>)>,
    },
    /// A change taken whole, with the unit that made it.
    Whole(u32),
}

/// Cuts `c` (a change of A..B) by the units of `steps`.
fn part(reader: &Reader, c: &FileChange, steps: &[(Id, u32)], units: &[Unit]) -> Result<Part> {
    let modified = c.old.is_some() && c.new.is_some();
    match hunks::texts(reader, c)?.filter(|_| modified) {
        Some((old, new)) => {
            let versions = owners::versions(reader, &c.path, steps.iter().copied());
            let who = owners::trace(&old, &new, versions);
            let hs = hunks::file_hunks(&c.path, &old, &new);
            let hunks = owners::refine(&c.path, hs, Some(&who), &|_| false, true);
            Ok(Part::Lines { old, new, hunks })
        }
        None => Ok(Part::Whole(owners::entry_owner(
            reader,
            &c.path,
            units.iter().map(|u| (u.before, u.after, u.n)),
        ))),
    }
}

/// Each changed path of A..B with its cut.
type Parts = Vec<(FileChange, Part)>;

/// The change from `a` to `b` as A..B's diff has it, cut by unit.
fn parts(store: &Store, ws: u64, a: Id, b: Id) -> Result<(Vec<Unit>, Parts)> {
    let d = diff(
        store,
        Rev::Snapshot(a),
        Rev::Snapshot(b),
        None,
        &DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )?;
    let reader = store.reader()?;
    let (steps, units) = steps(&reader, ws, a, b)?;
    let mut out = Vec::with_capacity(d.changes.len());
    for c in d.changes {
        let p = part(&reader, &c, &steps, &units)?;
        out.push((c, p));
    }
    Ok((units, out))
}

/// The change from `a` to `b` (snapshots of workspace `ws`, `a` the older) grouped by the run
/// or tool call that made each line.
pub fn by_run(store: &Store, ws: u64, a: Id, b: Id) -> Result<ByRun> {
    let (units, parts) = parts(store, ws, a, b)?;
    let mut by = owners::ByOwner::default();
    for (c, p) in parts {
        match p {
            Part::Lines { hunks, .. } => {
                for (h, run) in hunks {
                    by.add(run, &c.path, Some(h));
                }
            }
            Part::Whole(n) => by.add(Some(n), &c.path, None),
        }
    }
    let groups = by
        .groups()
        .into_iter()
        .map(|(run, files)| UnitChanges {
            run,
            unit: run.and_then(|n| units.iter().find(|u| u.n == n).cloned()),
            files,
        })
        .collect();
    Ok(ByRun { units, groups })
}

/// Takes back what unit `n` of A..B did (see [`by_run`]) in the workspace at `root`: its
/// lines set back to what they were before it, merged three ways onto the live files; the
/// files it added, deleted or changed whole set back by path as `revert` does. Conflicts are
/// listed in the report and then nothing is written (unless `markers`); nothing is written
/// with `check`. One undoable operation.
#[allow(clippy::too_many_arguments)]
pub fn revert_run(
    store: &Store,
    root: &Path,
    ws: u64,
    a: Id,
    b: Id,
    n: u32,
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    let root = crate::workspace::resolve(root)?;
    let (units, parts) = parts(store, ws, a, b)?;
    if !units.iter().any(|u| u.n == n) {
        return Err(Error::UnknownRangeRun {
            run: n,
            a: a.short(),
            b: b.short(),
            runs: units.len() as u32,
        });
    }
    let mut files = Vec::new();
    let mut whole = Vec::new();
    for (c, p) in parts {
        match p {
            Part::Lines { old, new, hunks } => {
                if !hunks.iter().any(|(_, o)| *o == Some(n)) {
                    continue;
                }
                let hs: Vec<ReviewHunk> = hunks.iter().map(|(h, _)| h.clone()).collect();
                let mine = |id: &str| hunks.iter().any(|(h, o)| h.id == id && *o == Some(n));
                let target = hunks::select(&old, &new, &hs, &|id| !mine(id));
                files.push((c.path, new, target));
            }
            Part::Whole(o) if o == n => whole.push(RelPath::parse(&c.path)?),
            Part::Whole(_) => {}
        }
    }
    let (mut work, mut conflicts) = hunks::plan_selection(&root, "revert", files, markers)?;
    if !whole.is_empty() {
        let policy = if markers {
            ConflictPolicy::Markers
        } else {
            ConflictPolicy::Skip
        };
        let labels = CarryLabels {
            ours: "workspace",
            theirs: "reverted",
        };
        let carried = plan_carry_with(store, &root, b, a, &whole, policy, &labels, false)?;
        conflicts.extend(carried.conflicts);
        work.extend(carried.planned.into_iter().filter_map(|mut p: Planned| {
            if p.outcome.action == "write" {
                p.outcome.action = "restore";
            }
            (p.write.is_some() || !p.remove.is_empty()).then_some(p)
        }));
    }
    let flags = [u8::from(markers)];
    let n_bytes = n.to_le_bytes();
    let key = request_key(&[b"revert-run", &a.0, &b.0, &n_bytes, &flags]);
    hunks::write_plan(store, &root, "revert", key, work, conflicts, check)
}
