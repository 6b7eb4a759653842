//! Per-hunk review: a file change cut into the hunks of its unified diff (3 lines of
//! context, as `git diff` cuts them), each with a stable id, and the content that results
//! from taking only some of them.
//!
//! A hunk's id is a hash of the path, the hunk's position in the old file and its lines, so it
//! stays the same across `overlay diff` calls while the overlay leaves that region alone, and
//! two equal hunks at different places never share an id.

use std::path::Path;

use serde::Serialize;

use crate::apply::{FileOutcome, Planned};
use crate::carry::{Conflict, ConflictPolicy};
use crate::diff::FileChange;
use crate::diff::text::{DiffOptions, LineKind, line_diff};
use crate::error::Result;
use crate::patch::{MergeLabels, MergeOutcome, merge3};
use crate::store::Reader;
use crate::store::tree::Kind;

mod edit;
pub use edit::EditedHunk;
pub(crate) use edit::resolve as resolve_edits;

/// One hunk of a file's change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReviewHunk {
    /// Stable id: 12 hex digits.
    pub id: String,
    /// First old line (1-based; 0 when the hunk covers no old line).
    pub old_start: usize,
    /// Old lines covered (context and removed).
    pub old_lines: usize,
    /// First new line (1-based; 0 when it covers no new line).
    pub new_start: usize,
    /// New lines covered (context and added).
    pub new_lines: usize,
    /// The lines, each prefixed with ' ', '-' or '+' (line ending kept, lossy UTF-8).
    pub lines: Vec<String>,
    /// Whether it is still pending (not accepted already).
    pub pending: bool,
    /// The old range [`select`] swaps, 0-based half-open. For a whole hunk the lines it
    /// covers; for a part of a split hunk only the lines it owns, so that parts never overlap.
    #[serde(skip)]
    old_range: (usize, usize),
    /// The new range [`select`] swaps, as `old_range`.
    #[serde(skip)]
    new_range: (usize, usize),
    /// The lines as bytes, each with its mark: what [`split`] cuts and ids hash.
    #[serde(skip)]
    raw: Vec<(u8, Vec<u8>)>,
}

/// Builds a hunk of `path` from its lines (mark, text) starting at 0-based `old_at`/`new_at`,
/// swapping `old_range`/`new_range`. The id hashes the path, the old position and the lines:
/// the same change cut the same way gets the same id, whether it came from a diff or a split.
fn make(
    path: &[u8],
    (old_at, new_at): (usize, usize),
    raw: Vec<(u8, Vec<u8>)>,
    old_range: (usize, usize),
    new_range: (usize, usize),
) -> ReviewHunk {
    let mut key = blake3::Hasher::new();
    key.update(path);
    key.update(&[0]);
    key.update(&(old_at as u64).to_le_bytes());
    let mut lines = Vec::with_capacity(raw.len());
    for (mark, text) in &raw {
        key.update(&[*mark]);
        key.update(text);
        lines.push(format!(
            "{}{}",
            *mark as char,
            String::from_utf8_lossy(text)
        ));
    }
    let old_len = raw.iter().filter(|(m, _)| *m != b'+').count();
    let new_len = raw.iter().filter(|(m, _)| *m != b'-').count();
    let start = crate::patch::line_number;
    ReviewHunk {
        id: key.finalize().to_hex()[..12].to_string(),
        old_start: start(old_at, old_len),
        old_lines: old_len,
        new_start: start(new_at, new_len),
        new_lines: new_len,
        lines,
        pending: true,
        old_range,
        new_range,
        raw,
    }
}

/// The hunks turning `old` into `new` for `path`.
pub fn file_hunks(path: &[u8], old: &[u8], new: &[u8]) -> Vec<ReviewHunk> {
    let d = line_diff(
        old,
        new,
        &DiffOptions {
            context: CONTEXT,
            timeout: None,
        },
    );
    d.hunks
        .iter()
        .map(|h| {
            let raw = h
                .lines
                .iter()
                .map(|&(tag, i)| match tag {
                    LineKind::Context => (b' ', d.old_lines[i].to_vec()),
                    LineKind::Removed => (b'-', d.old_lines[i].to_vec()),
                    LineKind::Added => (b'+', d.new_lines[i].to_vec()),
                })
                .collect();
            let (old, new) = (h.old_range(), h.new_range());
            make(
                path,
                (old.start, new.start),
                raw,
                (old.start, old.end),
                (new.start, new.end),
            )
        })
        .collect()
}

/// Lines of context around a change, as `git diff` gives.
const CONTEXT: usize = 3;

/// Cuts a hunk of `path` at the unchanged lines between its runs of changes, like `s` in
/// `git add -p`: one part per run. A part is shown as the diff of that change alone would
/// show it: up to three lines of context either side, taken from the file with the other
/// parts not applied (a neighbouring run shows as its old lines), so its id is the id its
/// change gets on its own and a part accepted stays accepted when its neighbour is rejected.
/// For [`select`] a part owns only its run and the context before it (the last one the
/// context after it too), so taking every part equals taking the hunk. A hunk with a single
/// run comes back alone.
pub fn split(path: &[u8], h: &ReviewHunk) -> Vec<ReviewHunk> {
    let changed = |i: usize| h.raw[i].0 != b' ';
    // Runs of changed lines, as [start, end) indices into the hunk's lines.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for i in 0..h.raw.len() {
        match runs.last_mut() {
            Some(r) if changed(i) && r.1 == i => r.1 = i + 1,
            _ if changed(i) => runs.push((i, i + 1)),
            _ => {}
        }
    }
    if runs.len() < 2 {
        return vec![h.clone()];
    }
    split_units(path, h, &h.raw, &runs)
}

/// Who made a hunk's changed lines: `owner(false, i)` for old line `i` (0-based) it removes,
/// `owner(true, j)` for new line `j` it adds.
pub type LineOwner<'a> = dyn Fn(bool, usize) -> u32 + 'a;

/// Cuts a hunk at the boundaries between the owners of its changed lines (the runs of an
/// overlay that made them), also where two owners' changes touch with no unchanged line
/// between: each part is one owner's change, shown and selected as [`split`]'s parts are.
/// Returns each part with its owner; `None` for a part whose owners' lines interleave so that
/// no cut separates them. A hunk with one owner comes back alone.
pub fn split_owned(
    path: &[u8],
    h: &ReviewHunk,
    owner: &LineOwner<'_>,
) -> Vec<(ReviewHunk, Option<u32>)> {
    // Each line's owner (changed lines only), from its old or new line number.
    let mut owners: Vec<Option<u32>> = Vec::with_capacity(h.raw.len());
    let (mut o, mut n) = (h.old_range.0, h.new_range.0);
    for (mark, _) in &h.raw {
        owners.push(match mark {
            b'-' => Some(owner(false, o)),
            b'+' => Some(owner(true, n)),
            _ => None,
        });
        o += usize::from(*mark != b'+');
        n += usize::from(*mark != b'-');
    }
    let distinct = {
        let mut v: Vec<u32> = owners.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    if distinct.len() < 2 {
        return vec![(h.clone(), distinct.first().copied())];
    }
    // Per block of changed lines: its lines regrouped owner by owner (each owner's removals,
    // then its additions), when the removals and the additions each meet the owners in one
    // consistent order; else the block stays one unit of no single owner.
    let mut raw: Vec<(u8, Vec<u8>)> = Vec::with_capacity(h.raw.len());
    let mut units: Vec<(usize, usize)> = Vec::new();
    let mut unit_owner: Vec<Option<u32>> = Vec::new();
    let mut i = 0;
    while i < h.raw.len() {
        if h.raw[i].0 == b' ' {
            raw.push(h.raw[i].clone());
            i += 1;
            continue;
        }
        let start = i;
        while i < h.raw.len() && h.raw[i].0 != b' ' {
            i += 1;
        }
        let block = start..i;
        let order = |mark: u8| -> Vec<u32> {
            let mut seq: Vec<u32> = Vec::new();
            for k in block.clone() {
                if h.raw[k].0 == mark
                    && let Some(w) = owners[k]
                    && seq.last() != Some(&w)
                {
                    seq.push(w);
                }
            }
            seq
        };
        match merge_orders(&order(b'-'), &order(b'+')) {
            Some(seq) => {
                for w in seq {
                    let at = raw.len();
                    for mark in [b'-', b'+'] {
                        raw.extend(
                            block
                                .clone()
                                .filter(|&k| h.raw[k].0 == mark && owners[k] == Some(w))
                                .map(|k| h.raw[k].clone()),
                        );
                    }
                    units.push((at, raw.len()));
                    unit_owner.push(Some(w));
                }
            }
            None => {
                let at = raw.len();
                raw.extend(block.clone().map(|k| h.raw[k].clone()));
                units.push((at, raw.len()));
                unit_owner.push(None);
            }
        }
    }
    if units.len() < 2 {
        return vec![(h.clone(), unit_owner.first().copied().flatten())];
    }
    split_units(path, h, &raw, &units)
        .into_iter()
        .zip(unit_owner)
        .collect()
}

/// One order meeting every owner of `a` and of `b` in their orders, each owner once; `None`
/// when an owner comes back after another one, or the two orders disagree.
fn merge_orders(a: &[u32], b: &[u32]) -> Option<Vec<u32>> {
    let once = |s: &[u32]| {
        let mut v = s.to_vec();
        v.sort_unstable();
        v.windows(2).all(|w| w[0] != w[1])
    };
    if !once(a) || !once(b) {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                out.push(*x);
                i += 1;
                j += 1;
            }
            (Some(x), _) if !b[j..].contains(x) => {
                out.push(*x);
                i += 1;
            }
            (_, Some(y)) if !a[i..].contains(y) => {
                out.push(*y);
                j += 1;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The parts of hunk `h` whose lines, in the order `raw` gives them (the hunk's lines, changed
/// lines possibly regrouped within a block), hold the changes `units` ([start, end) indices
/// into `raw`, in order). See [`split`].
fn split_units(
    path: &[u8],
    h: &ReviewHunk,
    raw: &[(u8, Vec<u8>)],
    runs: &[(usize, usize)],
) -> Vec<ReviewHunk> {
    // Old and new line numbers at each index (and one past the end).
    let mut at = Vec::with_capacity(raw.len() + 1);
    let (mut o, mut n) = (h.old_range.0, h.new_range.0);
    for (mark, _) in raw {
        at.push((o, n));
        o += usize::from(*mark != b'+');
        n += usize::from(*mark != b'-');
    }
    at.push((o, n));
    let last = runs.len() - 1;
    runs.iter()
        .enumerate()
        .map(|(k, &(start, end))| {
            // The hunk's lines with only run k applied, each with its old line number.
            let mut alone: Vec<(u8, &[u8], usize)> = Vec::with_capacity(raw.len());
            let (mut from, mut to) = (0, 0);
            for (i, (mark, text)) in raw.iter().enumerate() {
                if i == start {
                    from = alone.len();
                }
                let mine = (start..end).contains(&i);
                match *mark {
                    b'+' if !mine => {}
                    b'-' if !mine => alone.push((b' ', text, at[i].0)),
                    m => alone.push((m, text, at[i].0)),
                }
                if i + 1 == end {
                    to = alone.len();
                }
            }
            let show = &alone[from.saturating_sub(CONTEXT)..(to + CONTEXT).min(alone.len())];
            let old_at = show.first().map_or(at[start].0, |l| l.2);
            let own = (
                if k == 0 { 0 } else { runs[k - 1].1 },
                if k == last { raw.len() } else { end },
            );
            make(
                path,
                (old_at, old_at - h.old_range.0 + h.new_range.0),
                show.iter().map(|(m, t, _)| (*m, t.to_vec())).collect(),
                (at[own.0].0, at[own.1].0),
                (at[own.0].1, at[own.1].1),
            )
        })
        .collect()
}

/// `hs` with every hunk that has a part `wanted` accepts replaced by its parts ([`split`]),
/// which inherit its `pending`: how ids of parts (from `s` in `-p`) are resolved against the
/// whole hunks a diff gives. Parts cannot be split again, so this is idempotent.
pub fn refine(path: &[u8], hs: Vec<ReviewHunk>, wanted: &dyn Fn(&str) -> bool) -> Vec<ReviewHunk> {
    let mut out = Vec::with_capacity(hs.len());
    for h in hs {
        let parts = split(path, &h);
        if parts.len() > 1 && parts.iter().any(|p| wanted(&p.id)) {
            out.extend(parts.into_iter().map(|p| ReviewHunk {
                pending: h.pending,
                ..p
            }));
        } else {
            out.push(h);
        }
    }
    out
}

/// [`refine`] knowing who made each changed line: a hunk of several owners is cut by owner
/// ([`split_owned`]) when `by_owner` asks it or a part of that cut is `wanted`, else as
/// [`refine`] cuts it. Each hunk comes with its owner (`None`: several).
pub fn refine_owned(
    path: &[u8],
    hs: Vec<ReviewHunk>,
    owner: &LineOwner<'_>,
    wanted: &dyn Fn(&str) -> bool,
    by_owner: bool,
) -> Vec<(ReviewHunk, Option<u32>)> {
    let mut out = Vec::with_capacity(hs.len());
    for h in hs {
        let owned = split_owned(path, &h, owner);
        if owned.len() > 1 && (by_owner || owned.iter().any(|(p, _)| wanted(&p.id))) {
            out.extend(owned.into_iter().map(|(p, w)| {
                (
                    ReviewHunk {
                        pending: h.pending,
                        ..p
                    },
                    w,
                )
            }));
            continue;
        }
        let w = if owned.len() == 1 { owned[0].1 } else { None };
        for p in refine(path, vec![h], wanted) {
            out.push((p, w));
        }
    }
    out
}

/// The content that takes from `new` exactly the hunks whose ids `take` accepts, and keeps
/// `old` everywhere else. `hunks` must be [`file_hunks`] of the same `old` and `new` (some of
/// them possibly replaced by their parts, [`refine`]).
pub fn select(
    old: &[u8],
    new: &[u8],
    hunks: &[ReviewHunk],
    take: &dyn Fn(&str) -> bool,
) -> Vec<u8> {
    select_edited(old, new, hunks, take, &rustc_hash::FxHashMap::default())
}

/// [`select`], with the hunks that `edits` edited ([`edit::resolve`]) taken as edited.
pub(crate) fn select_edited(
    old: &[u8],
    new: &[u8],
    hunks: &[ReviewHunk],
    take: &dyn Fn(&str) -> bool,
    edits: &rustc_hash::FxHashMap<String, edit::Replacement>,
) -> Vec<u8> {
    let old_l: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    let new_l: Vec<&[u8]> = new.split_inclusive(|&b| b == b'\n').collect();
    let mut out = Vec::with_capacity(old.len().max(new.len()));
    let mut at = 0;
    for h in hunks {
        for l in &old_l[at..h.old_range.0] {
            out.extend_from_slice(l);
        }
        if let Some(r) = edits.get(&h.id) {
            // Checked by `resolve` to lie within the hunk's own lines.
            for l in &old_l[h.old_range.0..r.from] {
                out.extend_from_slice(l);
            }
            out.extend_from_slice(&r.bytes);
            for l in &old_l[r.to..h.old_range.1] {
                out.extend_from_slice(l);
            }
        } else {
            let side = if take(&h.id) {
                &new_l[h.new_range.0..h.new_range.1]
            } else {
                &old_l[h.old_range.0..h.old_range.1]
            };
            for l in side {
                out.extend_from_slice(l);
            }
        }
        at = h.old_range.1;
    }
    for l in &old_l[at.min(old_l.len())..] {
        out.extend_from_slice(l);
    }
    out
}

/// Both sides of a stored change as text, where it has line hunks (a missing side is empty):
/// None for a symlink, a binary file, a rename or a change of mode only.
pub fn texts(reader: &Reader, c: &FileChange) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let is_file = |e: &Option<crate::diff::EntryState>| {
        e.is_none_or(|e| matches!(e.kind, Kind::File | Kind::Executable))
    };
    if !is_file(&c.old) || !is_file(&c.new) || c.old_path.is_some() {
        return Ok(None);
    }
    let read = |e: &Option<crate::diff::EntryState>| match e {
        Some(e) => reader.read_blob(&e.id),
        None => Ok(Vec::new()),
    };
    let (old, new) = (read(&c.old)?, read(&c.new)?);
    if crate::diff::is_binary(&old) || crate::diff::is_binary(&new) || old == new {
        return Ok(None);
    }
    Ok(Some((old, new)))
}

/// The hunks of every change of a diff between two stored snapshots (None for a change
/// without line hunks), in the diff's order.
pub fn diff_hunks(reader: &Reader, changes: &[FileChange]) -> Result<Vec<Option<Vec<ReviewHunk>>>> {
    changes
        .iter()
        .map(|c| Ok(texts(reader, c)?.map(|(o, n)| file_hunks(&c.path, &o, &n))))
        .collect()
}

/// What writing a selection onto the workspace's file comes to.
pub(crate) enum Onto {
    /// A write to plan.
    Write(Planned),
    /// The workspace's file is that already.
    Same,
    /// It could not be merged (or the file is gone).
    Conflict(Conflict),
}

/// Plans `target` (the file `assumed` with some hunks changed) onto the workspace's `path`:
/// merged three ways (base `assumed`, ours the workspace's file, theirs `target`), so that a
/// workspace that moved on keeps its own edits. `labels` name the two sides in markers.
pub(crate) fn merge_onto(
    root: &Path,
    path: &[u8],
    assumed: &[u8],
    target: &[u8],
    policy: ConflictPolicy,
    labels: (&str, &str),
) -> Result<Onto> {
    let conflict = |why: &str, regions: usize| {
        Onto::Conflict(Conflict {
            path: path.to_vec(),
            why: why.into(),
            regions,
            settle: None,
        })
    };
    let Some((kind, ours)) = crate::apply::read_current(root, path)? else {
        return Ok(conflict("deleted in the workspace; take the whole file", 0));
    };
    let merge_labels = MergeLabels {
        ours: labels.0.into(),
        theirs: labels.1.into(),
    };
    let (bytes, regions) = match merge3(assumed, &ours, target, merge_labels) {
        MergeOutcome::Clean(b) => (b, 0),
        MergeOutcome::Conflict {
            with_markers,
            conflicts,
        } => match policy {
            ConflictPolicy::Markers => (with_markers, conflicts.len()),
            ConflictPolicy::Theirs => (target.to_vec(), 0),
            ConflictPolicy::Ours => (ours.clone(), 0),
            _ => {
                return Ok(conflict(
                    "changed on both sides and the changes conflict",
                    conflicts.len(),
                ));
            }
        },
    };
    if bytes == ours {
        return Ok(Onto::Same);
    }
    Ok(Onto::Write(Planned {
        outcome: FileOutcome {
            path: path.to_vec(),
            old_path: None,
            action: "modify",
            hunks: Vec::new(),
            merged: ours != assumed,
            conflicts: regions,
        },
        write: Some((path.to_vec(), kind, bytes)),
        remove: Vec::new(),
    }))
}

/// What a revert (or a hunk selection written to the workspace) did.
#[derive(Clone, Debug, Default)]
pub struct RevertReport {
    /// Per path: what was done ("restore", "delete", "merge", "unchanged").
    pub files: Vec<FileOutcome>,
    /// The snapshot taken before writing.
    pub before: Option<crate::id::Id>,
    /// The snapshot taken after.
    pub after: Option<crate::id::Id>,
    /// The operation recorded (None when there was nothing to do or with `check`).
    pub op: Option<u64>,
    /// The paths that conflict; when there is one, nothing was written (the
    /// `crate::revert::revert_report` forms list them here, the others fail on the first).
    pub conflicts: Vec<Conflict>,
}

impl RevertReport {
    /// The report, or the first conflict as the error a caller that cannot list them returns.
    pub fn or_conflict(self) -> Result<RevertReport> {
        match self.conflicts.first() {
            Some(c) => Err(crate::apply::fail(&c.path, c.why.clone())),
            None => Ok(self),
        }
    }
}

/// A hunk selection applied to the workspace: per file, `(path, assumed, target)` where
/// `assumed` is the content the selection was made against and `target` that content with the
/// chosen hunks changed; each is merged three ways onto the workspace's file and all are
/// written as one undoable operation of `kind`. Nothing is written when a file conflicts
/// (unless `markers`: the report lists every conflict), nor with `check`.
pub(crate) fn write_selection(
    store: &crate::store::Store,
    root: &Path,
    kind: &str,
    key: crate::id::Id,
    files: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    markers: bool,
    check: bool,
) -> Result<RevertReport> {
    let (work, conflicts) = plan_selection(root, kind, files, markers)?;
    write_plan(store, root, kind, key, work, conflicts, check)
}

/// The plan of [`write_selection`]: the writes, and the files that conflict (with `markers`,
/// those markers cannot express).
pub(crate) fn plan_selection(
    root: &Path,
    kind: &str,
    files: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    markers: bool,
) -> Result<(Vec<Planned>, Vec<Conflict>)> {
    let policy = if markers {
        ConflictPolicy::Markers
    } else {
        ConflictPolicy::Fail
    };
    let mut work = Vec::new();
    let mut conflicts = Vec::new();
    for (path, assumed, target) in files {
        match merge_onto(root, &path, &assumed, &target, policy, ("workspace", kind))? {
            Onto::Conflict(c) => conflicts.push(c),
            Onto::Same => {}
            Onto::Write(p) => work.push(p),
        }
    }
    Ok((work, conflicts))
}

/// Writes a plan as one undoable operation of `kind`, unless something conflicts or `check`.
pub(crate) fn write_plan(
    store: &crate::store::Store,
    root: &Path,
    kind: &str,
    key: crate::id::Id,
    work: Vec<Planned>,
    conflicts: Vec<Conflict>,
    check: bool,
) -> Result<RevertReport> {
    let mut report = RevertReport {
        files: work.iter().map(|p| p.outcome.clone()).collect(),
        conflicts,
        ..Default::default()
    };
    if check || work.is_empty() || !report.conflicts.is_empty() {
        return Ok(report);
    }
    let done = crate::apply::write_with_op(store, root, kind, key, &work, false)?;
    report.before = done.before;
    report.after = done.after;
    report.op = Some(done.op);
    Ok(report)
}

/// Fails naming the first id of `wanted` that no hunk in `hunks` has.
pub(crate) fn check_ids<'a>(
    wanted: &[String],
    hunks: impl Iterator<Item = &'a ReviewHunk>,
    among: crate::error::HunkSet,
) -> Result<()> {
    let known: rustc_hash::FxHashSet<&str> = hunks.map(|h| h.id.as_str()).collect();
    match wanted.iter().find(|w| !known.contains(w.as_str())) {
        Some(id) => Err(crate::error::Error::NoSuchHunk {
            hunk: id.clone(),
            among,
        }),
        None => Ok(()),
    }
}

/// The workspace's modified text files against snapshot `rev` (below `paths`, if any), each
/// with the hunks a restore of it would apply (old side: the file on disk now). What
/// `restore -p` asks about; other changes (added, deleted, binary files) are restored by path.
pub fn restore_review(
    store: &crate::store::Store,
    root: &Path,
    rev: crate::id::Id,
    paths: &[crate::files::RelPath],
) -> Result<Vec<(Vec<u8>, Vec<ReviewHunk>)>> {
    let d = crate::compare::diff(
        store,
        crate::compare::Rev::Live,
        crate::compare::Rev::Snapshot(rev),
        Some(root),
        &crate::compare::DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: paths.to_vec(),
        },
    )?;
    let reader = store.reader()?;
    let mut out = Vec::new();
    for c in &d.changes {
        let (Some(o), Some(n)) = (c.old, c.new) else {
            continue;
        };
        if !matches!(o.kind, Kind::File | Kind::Executable)
            || !matches!(n.kind, Kind::File | Kind::Executable)
        {
            continue;
        }
        let Some((_, old)) = crate::apply::read_current(root, &c.path)? else {
            continue;
        };
        let new = reader.read_blob(&n.id)?;
        if crate::diff::is_binary(&old) || crate::diff::is_binary(&new) || old == new {
            continue;
        }
        out.push((c.path.clone(), file_hunks(&c.path, &old, &new)));
    }
    Ok(out)
}

/// Restores single hunks from snapshot `rev` into the workspace (ids from
/// [`restore_review`]), and `edits` of such hunks as edited, as one undoable operation.
/// Nothing is written when a hunk or an edit no longer applies to the file on disk.
pub fn restore_hunks(
    store: &crate::store::Store,
    root: &Path,
    rev: crate::id::Id,
    ids: &[String],
    edits: &[EditedHunk],
) -> Result<RevertReport> {
    let root = crate::workspace::resolve(root)?;
    let wanted = |id: &str| ids.iter().any(|x| x == id) || edits.iter().any(|e| e.id == id);
    let review: Vec<_> = restore_review(store, &root, rev, &[])?
        .into_iter()
        .map(|(p, hs)| {
            let hs = refine(&p, hs, &wanted);
            (p, hs)
        })
        .collect();
    check_ids(
        ids,
        review.iter().flat_map(|(_, h)| h.iter()),
        crate::error::HunkSet::LiveAgainst,
    )?;
    edit::check_edits(
        edits,
        review.iter().flat_map(|(_, h)| h.iter()),
        crate::error::HunkSet::LiveAgainst,
    )?;
    let reader = store.reader()?;
    let rev_root = reader.snapshot_record(&rev)?.root;
    let mut files = Vec::new();
    for (path, hs) in &review {
        if !hs.iter().any(|h| wanted(&h.id)) {
            continue;
        }
        let Some((_, old)) = crate::apply::read_current(&root, path)? else {
            continue;
        };
        let Some(e) = reader.lookup(&rev_root, path)? else {
            continue;
        };
        let new = reader.read_blob(&e.id)?;
        let edited = edit::resolve(hs, edits)?;
        let target = select_edited(&old, &new, hs, &|id| ids.iter().any(|x| x == id), &edited);
        files.push((path.clone(), old, target));
    }
    let mut parts: Vec<&[u8]> = vec![b"restore-hunks", &rev.0];
    parts.extend(ids.iter().map(|s| s.as_bytes()));
    let keys: Vec<Vec<u8>> = edits.iter().map(EditedHunk::key).collect();
    parts.extend(keys.iter().map(Vec::as_slice));
    let key = crate::apply::request_key(&parts);
    write_selection(store, &root, "restore", key, files, false, false)?.or_conflict()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize, f: &dyn Fn(usize) -> String) -> Vec<u8> {
        (1..=n).map(f).collect::<String>().into_bytes()
    }

    #[test]
    fn taking_every_hunk_gives_new_and_none_gives_old() {
        let old = text(40, &|i| format!("line {i}\n"));
        let new = text(40, &|i| match i {
            3 => "changed 3\n".into(),
            20 => "changed 20\nadded\n".into(),
            38 => String::new(),
            _ => format!("line {i}\n"),
        });
        let hunks = file_hunks(b"f", &old, &new);
        assert_eq!(hunks.len(), 3);
        assert_eq!(select(&old, &new, &hunks, &|_| true), new);
        assert_eq!(select(&old, &new, &hunks, &|_| false), old);
        // One at a time, in any order, adds up to the whole.
        let mid = select(&old, &new, &hunks, &|id| id == hunks[1].id);
        assert!(String::from_utf8_lossy(&mid).contains("changed 20\nadded\n"));
        assert!(String::from_utf8_lossy(&mid).contains("line 3\n"));
        let ids: Vec<String> = hunks.iter().map(|h| h.id.clone()).collect();
        assert_eq!(
            file_hunks(b"f", &old, &new)
                .iter()
                .map(|h| h.id.clone())
                .collect::<Vec<_>>(),
            ids,
            "ids are stable"
        );
        assert_ne!(
            file_hunks(b"g", &old, &new)[0].id,
            ids[0],
            "the path is part of the id"
        );
    }

    #[test]
    fn split_cuts_at_context_and_its_parts_add_up_to_the_hunk() {
        let old = text(30, &|i| format!("line {i}\n"));
        let edit = |pairs: &[(usize, &str)]| {
            text(30, &|i| match pairs.iter().find(|(n, _)| *n == i) {
                Some((_, s)) => s.to_string(),
                None => format!("line {i}\n"),
            })
        };
        // Three runs (a change, an insertion, a deletion) two and four lines apart: one hunk.
        let new = edit(&[(10, "TEN\n"), (13, "line 13\nadded\n"), (18, "")]);
        let hunks = file_hunks(b"f", &old, &new);
        assert_eq!(hunks.len(), 1);
        let parts = split(b"f", &hunks[0]);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].lines[3], "-line 10\n");
        assert_eq!(parts[0].lines.last().unwrap(), " line 13\n");
        assert_eq!((parts[1].old_start, parts[1].old_lines), (11, 6));
        assert_eq!((parts[1].new_start, parts[1].new_lines), (11, 7));
        assert_eq!(
            parts[2].lines[0], " line 15\n",
            "up to three lines of context"
        );
        assert!(
            parts.iter().all(|p| split(b"f", p) == vec![p.clone()]),
            "parts do not split"
        );
        assert_eq!(split(b"f", &parts[1]), vec![parts[1].clone()]);
        // Every part taken is the whole hunk; none is nothing; each alone is its change alone.
        assert_eq!(select(&old, &new, &parts, &|_| true), new);
        assert_eq!(select(&old, &new, &parts, &|_| false), old);
        let alone = [
            edit(&[(10, "TEN\n")]),
            edit(&[(13, "line 13\nadded\n")]),
            edit(&[(18, "")]),
        ];
        for (p, want) in parts.iter().zip(&alone) {
            assert_eq!(&select(&old, &new, &parts, &|id| id == p.id), want);
            // A part's id is the id the same change gets on its own, so a part accepted
            // stays accepted when its neighbours are rejected.
            let own = file_hunks(b"f", &old, want);
            assert_eq!(own.len(), 1);
            let shown = |h: &ReviewHunk| (h.id.clone(), h.old_start, h.lines.clone());
            assert_eq!(shown(&own[0]), shown(p));
        }
        // Runs one line apart: a part shows its neighbour's old lines as context, as the
        // diff of its change alone does, and has that diff's id.
        let close = edit(&[(10, "TEN\n"), (12, "TWELVE\n")]);
        let near = split(b"f", &file_hunks(b"f", &old, &close)[0]);
        assert_eq!(near.len(), 2);
        assert!(
            near[1].lines.contains(&" line 10\n".to_string()),
            "{:?}",
            near[1]
        );
        for (p, want) in near
            .iter()
            .zip([edit(&[(10, "TEN\n")]), edit(&[(12, "TWELVE\n")])])
        {
            assert_eq!(p.id, file_hunks(b"f", &old, &want)[0].id);
            assert_eq!(select(&old, &close, &near, &|id| id == p.id), want);
        }
        // refine resolves a part's id against the whole hunk, keeping `pending`.
        let mut done = hunks[0].clone();
        done.pending = false;
        assert_eq!(
            refine(b"f", vec![done.clone()], &|_| false),
            vec![done.clone()]
        );
        let r = refine(b"f", vec![done], &|id| id == parts[2].id);
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|p| !p.pending));
        assert_eq!(
            refine(b"f", r.clone(), &|id| id == parts[2].id),
            r,
            "idempotent"
        );
        // One run: nothing to split.
        let one = file_hunks(b"f", &old, &edit(&[(10, "TEN\n"), (11, "ELEVEN\n")]));
        assert_eq!(split(b"f", &one[0]), one);
    }

    #[test]
    fn split_owned_cuts_between_owners_even_on_adjacent_lines() {
        let old = text(30, &|i| format!("line {i}\n"));
        let edit = |pairs: &[(usize, &str)]| {
            text(30, &|i| match pairs.iter().find(|(n, _)| *n == i) {
                Some((_, s)) => s.to_string(),
                None => format!("line {i}\n"),
            })
        };
        // Lines 10 and 11 changed by owners 1 and 2: one block, no unchanged line between.
        let new = edit(&[(10, "TEN\n"), (11, "ELEVEN\n")]);
        let hs = file_hunks(b"f", &old, &new);
        assert_eq!(hs.len(), 1);
        assert_eq!(split(b"f", &hs[0]).len(), 1, "split alone cannot cut it");
        let owner = |_added: bool, i: usize| if i == 9 { 1 } else { 2 };
        let parts = split_owned(b"f", &hs[0], &owner);
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].1, parts[1].1), (Some(1), Some(2)));
        let ps: Vec<ReviewHunk> = parts.iter().map(|(p, _)| p.clone()).collect();
        for (p, want) in ps
            .iter()
            .zip([edit(&[(10, "TEN\n")]), edit(&[(11, "ELEVEN\n")])])
        {
            assert_eq!(select(&old, &new, &ps, &|id| id == p.id), want);
            assert_eq!(
                p.id,
                file_hunks(b"f", &old, &want)[0].id,
                "the change's own id"
            );
        }
        assert_eq!(select(&old, &new, &ps, &|_| true), new);
        // One owner: the hunk comes back whole, with that owner.
        let one = split_owned(b"f", &hs[0], &|_, _| 7);
        assert_eq!(one, vec![(hs[0].clone(), Some(7))]);
        // Owners whose removals and additions meet in opposite orders cannot be cut.
        let crossed = |added: bool, i: usize| match (added, i) {
            (false, 9) | (true, 10) => 1,
            _ => 2,
        };
        let mixed = split_owned(b"f", &hs[0], &crossed);
        assert_eq!(mixed, vec![(hs[0].clone(), None)]);
    }

    #[test]
    fn a_file_without_a_final_newline_keeps_it_that_way() {
        let old = b"a\nb\nc".to_vec();
        let new = b"a\nB\nc".to_vec();
        let hunks = file_hunks(b"f", &old, &new);
        assert_eq!(select(&old, &new, &hunks, &|_| true), new);
        assert_eq!(select(&old, &new, &hunks, &|_| false), old);
    }
}
