//! Keeping the store in shape: what `forget`, `forget --budget` and `gc` print with `--json`.

use serde::{Deserialize, Serialize};

use super::StatsJudged;
use crate::budget::BudgetReport;
use crate::forget::ForgetReport;
use crate::gc::GcReport;

/// What `forget` removed or would remove (`forget --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Forgotten {
    /// Whether nothing was removed on purpose.
    pub dry_run: bool,
    /// Snapshots forgotten, oldest first.
    pub forgotten: Vec<StatsJudged>,
    /// Snapshots the policy would have forgotten but something protects (`reason` says what).
    pub protected: Vec<StatsJudged>,
    /// Snapshots the policy keeps.
    pub kept: usize,
    /// The operation recorded (None for a dry run or when nothing was forgotten).
    pub op: Option<u64>,
}

impl From<&ForgetReport> for Forgotten {
    fn from(r: &ForgetReport) -> Self {
        Forgotten {
            dry_run: r.dry_run,
            forgotten: r.forgotten.iter().map(StatsJudged::from).collect(),
            protected: r.protected.iter().map(StatsJudged::from).collect(),
            kept: r.kept,
            op: r.op,
        }
    }
}

/// What enforcing the size budget did (`forget --budget --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BudgetEnforced {
    /// The budget.
    pub max_bytes: u64,
    /// Bytes the store took before.
    pub used_before: u64,
    /// Bytes it takes after.
    pub used_after: u64,
    /// Snapshots forgotten, in the order they were.
    pub evicted: Vec<StatsJudged>,
    /// Collections run.
    pub collections: usize,
    /// Whether protected snapshots alone exceed the budget.
    pub protected_over: bool,
}

impl From<&BudgetReport> for BudgetEnforced {
    fn from(r: &BudgetReport) -> Self {
        BudgetEnforced {
            max_bytes: r.max_bytes,
            used_before: r.used_before,
            used_after: r.used_after,
            evicted: r.evicted.iter().map(StatsJudged::from).collect(),
            collections: r.collections,
            protected_over: r.protected_over,
        }
    }
}

/// Small blobs gathered into groups.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GcRegrouped {
    /// Blobs moved into groups.
    pub blobs: u64,
    /// Groups written.
    pub groups: u64,
    /// Their bytes before.
    pub bytes_before: u64,
    /// And after.
    pub bytes_after: u64,
}

/// Blobs compressed again with a trained dictionary.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GcRecompressed {
    /// The dictionary trained, if one was.
    pub dictionary_trained: Option<u32>,
    /// Dictionaries no blob uses any more, removed.
    pub dictionaries_removed: u64,
    /// Blobs recompressed.
    pub blobs: u64,
    /// Their bytes before.
    pub bytes_before: u64,
    /// And after.
    pub bytes_after: u64,
}

/// A table's bytes before and after it was rewritten.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GcRepacked {
    /// Bytes before.
    pub bytes_before: u64,
    /// Bytes after.
    pub bytes_after: u64,
}

/// What a collection did (`gc --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GcDone {
    /// Whether nothing was removed on purpose.
    pub dry_run: bool,
    /// Snapshots whose objects were kept.
    pub snapshots: u64,
    /// Trees removed.
    pub trees_removed: u64,
    /// Blobs removed.
    pub blobs_removed: u64,
    /// Chunks removed.
    pub chunks_removed: u64,
    /// Their bytes.
    pub bytes_removed: u64,
    /// Segment files removed.
    pub segments_removed: u64,
    /// Objects moved out of sparse segments.
    pub objects_moved: u64,
    /// Their bytes.
    pub bytes_moved: u64,
    /// The operation log's bytes before.
    pub log_bytes_before: u64,
    /// And after.
    pub log_bytes_after: u64,
    /// The database file's bytes before.
    pub file_bytes_before: u64,
    /// And after.
    pub file_bytes_after: u64,
    /// The file's bytes once committed, before compaction.
    pub file_bytes_committed: u64,
    /// Small blobs gathered into groups.
    pub regrouped: GcRegrouped,
    /// Blobs recompressed with a dictionary.
    pub recompressed: GcRecompressed,
    /// The stat cache rewritten, if it was.
    pub stat_cache_repacked: Option<GcRepacked>,
    /// Whether the database file was compacted.
    pub compacted: bool,
    /// Why it was not, if it was not.
    pub compact_skipped: Option<String>,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl From<&GcReport> for GcDone {
    fn from(r: &GcReport) -> Self {
        GcDone {
            dry_run: r.dry_run,
            snapshots: r.snapshots,
            trees_removed: r.trees_removed,
            blobs_removed: r.blobs_removed,
            chunks_removed: r.chunks_removed,
            bytes_removed: r.bytes_removed,
            segments_removed: r.segments_removed,
            objects_moved: r.objects_moved,
            bytes_moved: r.bytes_moved,
            log_bytes_before: r.log_bytes_before,
            log_bytes_after: r.log_bytes_after,
            file_bytes_before: r.file_bytes_before,
            file_bytes_after: r.file_bytes_after,
            file_bytes_committed: r.file_bytes_committed,
            regrouped: GcRegrouped {
                blobs: r.regroup.blobs,
                groups: r.regroup.groups,
                bytes_before: r.regroup.bytes_before,
                bytes_after: r.regroup.bytes_after,
            },
            recompressed: GcRecompressed {
                dictionary_trained: r.dense.trained,
                dictionaries_removed: r.dense.dicts_removed,
                blobs: r.dense.blobs,
                bytes_before: r.dense.bytes_before,
                bytes_after: r.dense.bytes_after,
            },
            stat_cache_repacked: r.stat_cache.as_ref().map(|s| GcRepacked {
                bytes_before: s.bytes_before,
                bytes_after: s.bytes_after,
            }),
            compacted: r.compacted,
            compact_skipped: r.compact_skipped.as_ref().map(ToString::to_string),
            seconds: r.seconds,
        }
    }
}
