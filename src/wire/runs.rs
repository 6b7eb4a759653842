//! A workspace's change between two snapshots grouped by the run or agent tool call that made
//! it (`diff A B --by-run`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Hunk, OverlayRunFile, path_text, time_text};
use crate::id::Id;
use crate::review_runs::ByRun;

/// A..B's change, grouped by unit: each group's hunk ids are what `revert A B --run N` takes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RangeRuns {
    /// The older snapshot (hex).
    pub a: String,
    /// The newer snapshot (hex).
    pub b: String,
    /// Every run and tool call between them, oldest first (also those whose changes did not
    /// last to B).
    pub units: Vec<RangeUnit>,
    /// Units in order, then changes made outside any unit (`run` 0), then parts where units'
    /// lines interleave (`run` null: taken back by hunk id only).
    pub runs: Vec<RangeRunChanges>,
}

/// One run or tool call between the two snapshots.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RangeUnit {
    /// Its number in the range, from 1.
    pub run: u32,
    /// The snapshot before it (hex).
    pub before: String,
    /// The snapshot that closed it (hex).
    pub after: String,
    /// That snapshot's short id.
    pub short_id: String,
    /// When it was taken (RFC 3339, UTC).
    pub time: String,
    /// Its message (a run's command line, a hook's event).
    pub message: String,
    /// Its metadata (label, session, turn, tool...).
    pub meta: BTreeMap<String, String>,
}

/// One unit's part of the change.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RangeRunChanges {
    /// The unit's number (from 1); 0: made outside any unit; null: several units interleaved.
    pub run: Option<u32>,
    /// Per file, the unit's hunks.
    pub files: Vec<OverlayRunFile>,
}

impl RangeRuns {
    /// From [`crate::review_runs::by_run`] of `a`..`b`.
    pub fn new(a: &Id, b: &Id, by: ByRun) -> Self {
        RangeRuns {
            a: a.hex(),
            b: b.hex(),
            units: by
                .units
                .iter()
                .map(|u| RangeUnit {
                    run: u.n,
                    before: u.before.hex(),
                    after: u.after.hex(),
                    short_id: u.after.short(),
                    time: time_text(u.record.time_ns()),
                    message: u.record.message().to_string(),
                    meta: u.record.meta_pairs().iter().cloned().collect(),
                })
                .collect(),
            runs: by
                .groups
                .into_iter()
                .map(|g| RangeRunChanges {
                    run: g.run,
                    files: g
                        .files
                        .into_iter()
                        .map(|f| OverlayRunFile {
                            path: path_text(&f.path),
                            hunks: f.hunks.map(|hs| hs.into_iter().map(Hunk::from).collect()),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}
