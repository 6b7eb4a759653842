//! Runs as units of review: every command run in an overlay is recorded with the overlay's
//! state before and after it, so each pending line can be traced to the run that wrote it.
//!
//! A pending file's versions are followed from the base through each run's before and after
//! state to the state now, with the one line diff between consecutive versions: an added
//! line belongs to the run whose step added it, a removed base line to the run whose step
//! removed it. Steps between runs (a reject, an edit made outside any command) belong to no
//! run (number 0). Hunks are then cut at the boundaries between owners
//! ([`crate::hunks::split_owned`]), so two runs' edits on neighbouring lines are separate
//! parts, each taken or rejected on its own.

use serde::{Deserialize, Serialize};

use super::{OverlayRecord, review_with};
use crate::compare::Diff;
use crate::diff::text::split_lines;
use crate::diff::tree::FileChange;
use crate::error::{Error, Result};
use crate::hunks::{self, ReviewHunk};
use crate::id::Id;
use crate::patch::linediff::changed_lines;
use crate::store::tree::Kind;
use crate::store::{Reader, Store};

/// One command that ran in an overlay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlayRun {
    /// Its number in the overlay, from 1.
    pub n: u32,
    /// The overlay's state when it started.
    pub before: Id,
    /// The overlay's state when it finished.
    pub after: Id,
    /// The command line.
    pub command: String,
    /// When it finished, ns since the epoch.
    pub finished_ns: i64,
}

/// The pending changes one run made (or that no run made: `run` 0), for review.
#[derive(Clone, Debug)]
pub struct RunChanges {
    /// The run's number; 0 for changes made outside any run; `None` for parts where several
    /// runs' lines interleave so that no cut separates them (accepted by hunk id only).
    pub run: Option<u32>,
    /// The run as recorded (None for 0 and for interleaved parts).
    pub record: Option<OverlayRun>,
    /// Per file, the run's pending hunks; `hunks` is None for a change without line hunks
    /// (binary, symlink, mode), which belongs to the last run that changed the path.
    pub files: Vec<RunFile>,
}

/// One file's part of a run's changes.
#[derive(Clone, Debug)]
pub struct RunFile {
    /// The path.
    pub path: Vec<u8>,
    /// Its hunks (ids that accept and reject take), None for a change taken whole.
    pub hunks: Option<Vec<ReviewHunk>>,
}

/// Who made each line of a file's change from base to state: `old[i]` the run that removed
/// base line `i`, `new[j]` the run that wrote state line `j` (0: no run).
pub(crate) struct Owners {
    old: Vec<u32>,
    new: Vec<u32>,
}

impl Owners {
    /// The owner of old line `i` (`added` false) or new line `i` (`added` true).
    pub(crate) fn of(&self, added: bool, i: usize) -> u32 {
        let side = if added { &self.new } else { &self.old };
        side.get(i).copied().unwrap_or(0)
    }
}

/// Where a line of the version being followed came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Base line `i`, unchanged so far.
    Base(usize),
    /// Written by the step of this run (0: no run).
    Made(u32),
}

/// The file `path` at snapshot `id`: its bytes (empty when absent or not a file); None when
/// the snapshot cannot be read any more (the step is skipped).
fn content_at(reader: &Reader, id: &Id, path: &[u8]) -> Option<Vec<u8>> {
    let root = reader.snapshot(id).ok()?.root;
    match reader.lookup(&root, path).ok()? {
        Some(e) if matches!(e.kind, Kind::File | Kind::Executable) => reader.read_blob(&e.id).ok(),
        Some(_) | None => Some(Vec::new()),
    }
}

/// Traces the lines of `path`'s change from `old` (the base's) to `new` (the state's) through
/// the overlay's runs. None when the overlay recorded no run.
pub(crate) fn owners(
    reader: &Reader,
    rec: &OverlayRecord,
    path: &[u8],
    old: &[u8],
    new: &[u8],
) -> Option<Owners> {
    if rec.runs.is_empty() {
        return None;
    }
    let base_len = split_lines(old).len();
    let mut cur = old.to_vec();
    let mut origin: Vec<Origin> = (0..base_len).map(Origin::Base).collect();
    let mut removed_by: Vec<Option<u32>> = vec![None; base_len];
    let mut last = 0;
    let mut step = |next: Vec<u8>, label: u32| {
        if next == cur {
            return;
        }
        let a = split_lines(&cur);
        let b = split_lines(&next);
        let Some((ca, cb)) = changed_lines(&a, &b, None) else {
            return;
        };
        let mut now = Vec::with_capacity(b.len());
        let mut i = 0;
        for &changed in &cb {
            if changed {
                now.push(Origin::Made(label));
                continue;
            }
            while i < ca.len() && ca[i] {
                if let Origin::Base(k) = origin[i] {
                    removed_by[k] = Some(label);
                }
                i += 1;
            }
            now.push(origin.get(i).copied().unwrap_or(Origin::Made(label)));
            i += 1;
        }
        for (k, &gone) in ca.iter().enumerate().skip(i) {
            if gone && let Origin::Base(b) = origin[k] {
                removed_by[b] = Some(label);
            }
        }
        origin = now;
        cur = next;
        last = label;
    };
    for run in &rec.runs {
        if let Some(b) = content_at(reader, &run.before, path) {
            step(b, 0);
        }
        if let Some(a) = content_at(reader, &run.after, path) {
            step(a, run.n);
        }
    }
    step(new.to_vec(), 0);
    // A line the final diff pairs differently from the steps (moved, or removed and written
    // again) goes to the last run that touched the file.
    Some(Owners {
        old: removed_by.into_iter().map(|r| r.unwrap_or(last)).collect(),
        new: origin
            .into_iter()
            .map(|o| match o {
                Origin::Made(l) => l,
                Origin::Base(_) => last,
            })
            .collect(),
    })
}

/// The last run that changed `c.path`'s entry (kind or content); 0 when none did.
fn entry_owner(reader: &Reader, rec: &OverlayRecord, c: &FileChange) -> u32 {
    let entry = |id: &Id| {
        let root = reader.snapshot(id).ok()?.root;
        Some(reader.lookup(&root, &c.path).ok()?.map(|e| (e.kind, e.id)))
    };
    rec.runs
        .iter()
        .rev()
        .find(|r| match (entry(&r.before), entry(&r.after)) {
            (Some(b), Some(a)) => a != b,
            _ => false,
        })
        .map_or(0, |r| r.n)
}

/// The overlay's pending changes grouped by the run that made them: runs in order, then the
/// changes of no run, then parts of interleaved runs. Every hunk of a file with lines of
/// several runs is cut by run.
pub fn by_run(store: &Store, rec: &OverlayRecord, d: &Diff) -> Result<Vec<RunChanges>> {
    let undone = super::undone_ops(store, rec)?;
    let reader = store.reader()?;
    let mut groups: Vec<RunChanges> = Vec::new();
    let mut add = |run: Option<u32>, path: &[u8], h: Option<ReviewHunk>| {
        let at = match groups.iter().position(|g| g.run == run) {
            Some(i) => i,
            None => {
                groups.push(RunChanges {
                    run,
                    record: run.and_then(|n| rec.runs.iter().find(|r| r.n == n).cloned()),
                    files: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let files = &mut groups[at].files;
        match (files.last_mut(), h) {
            (Some(f), Some(h)) if f.path == path => {
                if let Some(hs) = f.hunks.as_mut() {
                    hs.push(h);
                }
            }
            (_, h) => files.push(RunFile {
                path: path.to_vec(),
                hunks: h.map(|h| vec![h]),
            }),
        }
    };
    for c in &d.changes {
        match review_with(&reader, rec, c, &undone, &|_| false, true)? {
            Some(hs) => {
                for (h, run) in hs.into_iter().filter(|(h, _)| h.pending) {
                    add(run.or(rec.runs.is_empty().then_some(0)), &c.path, Some(h));
                }
            }
            None => add(Some(entry_owner(&reader, rec, c)), &c.path, None),
        }
    }
    groups.sort_by_key(|g| match g.run {
        Some(0) => (1, 0),
        Some(n) => (0, n),
        None => (2, 0),
    });
    Ok(groups)
}

/// What `--run n` takes of the pending changes `d`: hunk ids, and paths of changes without
/// line hunks taken whole. Fails when the overlay has no run `n`.
pub(crate) fn selection(
    store: &Store,
    rec: &OverlayRecord,
    d: &Diff,
    n: u32,
) -> Result<(Vec<String>, Vec<Vec<u8>>)> {
    if !rec.runs.iter().any(|r| r.n == n) {
        return Err(Error::UnknownRun {
            run: n,
            overlay: rec.id,
            runs: rec.runs.len() as u32,
        });
    }
    let mut ids = Vec::new();
    let mut whole = Vec::new();
    for g in by_run(store, rec, d)?
        .into_iter()
        .filter(|g| g.run == Some(n))
    {
        for f in g.files {
            match f.hunks {
                Some(hs) => ids.extend(hs.into_iter().map(|h| h.id)),
                None => whole.push(f.path),
            }
        }
    }
    Ok((ids, whole))
}

/// The hunk cut by owner that `hunks::refine_owned` makes, for a file with owners.
pub(crate) fn refine(
    path: &[u8],
    hs: Vec<ReviewHunk>,
    owners: Option<&Owners>,
    wanted: &dyn Fn(&str) -> bool,
    by_owner: bool,
) -> Vec<(ReviewHunk, Option<u32>)> {
    match owners {
        Some(o) => hunks::refine_owned(path, hs, &|added, i| o.of(added, i), wanted, by_owner),
        None => hunks::refine(path, hs, wanted)
            .into_iter()
            .map(|h| (h, None))
            .collect(),
    }
}
