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
use crate::diff::tree::FileChange;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::owners::{self, Owners};
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

pub use crate::owners::RunFile;

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
    let states = rec
        .runs
        .iter()
        .flat_map(|r| [(r.before, 0), (r.after, r.n)]);
    Some(owners::trace(
        old,
        new,
        owners::versions(reader, path, states),
    ))
}

/// The last run that changed `c.path`'s entry (kind or content); 0 when none did.
fn entry_owner(reader: &Reader, rec: &OverlayRecord, c: &FileChange) -> u32 {
    owners::entry_owner(
        reader,
        &c.path,
        rec.runs.iter().map(|r| (r.before, r.after, r.n)),
    )
}

/// The overlay's pending changes grouped by the run that made them: runs in order, then the
/// changes of no run, then parts of interleaved runs. Every hunk of a file with lines of
/// several runs is cut by run.
pub(crate) fn by_run(store: &Store, rec: &OverlayRecord, d: &Diff) -> Result<Vec<RunChanges>> {
    let undone = super::undone_ops(store, rec)?;
    let reader = store.reader()?;
    let mut by = owners::ByOwner::default();
    for c in &d.changes {
        match review_with(&reader, rec, c, &undone, &|_| false, true)? {
            Some(hs) => {
                for (h, run) in hs.into_iter().filter(|(h, _)| h.pending) {
                    by.add(run.or(rec.runs.is_empty().then_some(0)), &c.path, Some(h));
                }
            }
            None => by.add(Some(entry_owner(&reader, rec, c)), &c.path, None),
        }
    }
    Ok(by
        .groups()
        .into_iter()
        .map(|(run, files)| RunChanges {
            run,
            record: run.and_then(|n| rec.runs.iter().find(|r| r.n == n).cloned()),
            files,
        })
        .collect())
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

pub(crate) use crate::owners::refine;
