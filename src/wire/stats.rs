//! What a store holds and what it costs (`stats --json`).

use serde::{Deserialize, Serialize};

use super::{path_text, time_text};
use crate::budget::BudgetStatus;
use crate::forget::Judged;
use crate::stats::StoreStats;

/// The store's format: its schema version and the features it uses.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsFormat {
    /// The schema version.
    pub schema: u32,
    /// The format features in use.
    pub features: Vec<String>,
}

/// One compression dictionary.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsDictionary {
    /// Its id.
    pub id: u32,
    /// Its own size.
    pub bytes: u64,
    /// Blobs compressed with it.
    pub blobs: u64,
    /// Their content's bytes.
    pub content_bytes: u64,
    /// Their encoded bytes.
    pub encoded_bytes: u64,
}

/// One workspace's share.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsWorkspace {
    /// Its directory.
    pub path: String,
    /// Snapshots in its history.
    pub snapshots: u64,
    /// Files in its latest snapshot.
    pub latest_files: u64,
    /// Bytes in its latest snapshot.
    pub latest_bytes: u64,
    /// When its latest snapshot was taken (RFC 3339, UTC).
    pub latest_time: Option<String>,
    /// Bytes of all its snapshots, before dedup.
    pub logical_bytes: u64,
}

/// One table of the store's database.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsTable {
    /// Its name.
    pub table: String,
    /// Entries.
    pub entries: u64,
    /// Bytes of keys and values.
    pub stored_bytes: u64,
    /// Bytes of the tree's own pages.
    pub metadata_bytes: u64,
    /// Bytes lost to fragmentation.
    pub fragmented_bytes: u64,
    /// Pages.
    pub pages: u64,
}

/// A snapshot the size budget judged.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsJudged {
    /// Its id (hex).
    pub id: String,
    /// The id's short form.
    pub short_id: String,
    /// Its workspace's directory.
    pub workspace: String,
    /// When it was taken (RFC 3339, UTC).
    pub time: String,
    /// Its message.
    pub message: String,
    /// Why it is kept, if it is.
    pub reason: Option<String>,
}

impl From<&Judged> for StatsJudged {
    fn from(j: &Judged) -> Self {
        StatsJudged {
            id: j.id.hex(),
            short_id: j.id.short(),
            workspace: path_text(&j.workspace),
            time: time_text(j.time_ns),
            message: j.message.clone(),
            reason: j.reason.clone(),
        }
    }
}

/// The size budget (`max_store_bytes`) and where the store stands against it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsBudget {
    /// The budget.
    pub max_bytes: u64,
    /// Bytes used.
    pub used_bytes: u64,
    /// Snapshots the budget never evicts, and why.
    pub protected: Vec<StatsJudged>,
    /// Snapshots it may evict.
    pub evictable: usize,
    /// The one it evicts next.
    pub next_eviction: Option<StatsJudged>,
}

impl From<&BudgetStatus> for StatsBudget {
    fn from(b: &BudgetStatus) -> Self {
        StatsBudget {
            max_bytes: b.max_bytes,
            used_bytes: b.used_bytes,
            protected: b.protected.iter().map(StatsJudged::from).collect(),
            evictable: b.evictable,
            next_eviction: b.next_eviction.as_ref().map(StatsJudged::from),
        }
    }
}

/// What the store holds (`stats --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stats {
    /// The store's directory.
    pub store: String,
    /// The database file's length.
    pub file_bytes: u64,
    /// Bytes it takes on disk.
    pub disk_bytes: u64,
    /// file_bytes over disk_bytes (above 1: the file has holes).
    pub sparse_ratio: f64,
    /// The format.
    pub format: StatsFormat,
    /// Compression dictionaries.
    pub dictionaries: Vec<StatsDictionary>,
    /// Snapshots.
    pub snapshots: u64,
    /// Trees.
    pub trees: u64,
    /// Blobs.
    pub blobs: u64,
    /// Chunks.
    pub chunks: u64,
    /// Blobs stored in groups.
    pub grouped_blobs: u64,
    /// Groups.
    pub groups: u64,
    /// Bytes of all snapshots and artifacts, before dedup.
    pub logical_bytes: u64,
    /// Distinct content bytes.
    pub content_bytes: u64,
    /// Those bytes as stored.
    pub encoded_bytes: u64,
    /// logical_bytes over content_bytes.
    pub dedup_ratio: f64,
    /// content_bytes over encoded_bytes.
    pub compression_ratio: f64,
    /// Per workspace.
    pub workspaces: Vec<StatsWorkspace>,
    /// Per database table.
    pub tables: Vec<StatsTable>,
    /// The size budget, when one is set.
    pub budget: Option<StatsBudget>,
}

impl Stats {
    /// From the store's figures and its budget's status (None without a budget).
    pub fn new(st: &StoreStats, budget: Option<&BudgetStatus>) -> Self {
        Stats {
            store: st.dir.display().to_string(),
            file_bytes: st.file_bytes,
            disk_bytes: st.disk_bytes,
            sparse_ratio: st.sparse_ratio(),
            format: StatsFormat {
                schema: st.format.schema,
                features: st.format.features.clone(),
            },
            dictionaries: st
                .content
                .dictionaries
                .iter()
                .map(|d| StatsDictionary {
                    id: d.id,
                    bytes: d.dict_bytes,
                    blobs: d.blobs,
                    content_bytes: d.content_bytes,
                    encoded_bytes: d.encoded_bytes,
                })
                .collect(),
            snapshots: st.snapshots,
            trees: st.trees,
            blobs: st.content.blobs,
            chunks: st.content.chunks,
            grouped_blobs: st.content.grouped_blobs,
            groups: st.content.groups,
            logical_bytes: st.logical_bytes,
            content_bytes: st.content.content_bytes,
            encoded_bytes: st.content.encoded_bytes,
            dedup_ratio: st.dedup_ratio(),
            compression_ratio: st.compression_ratio(),
            workspaces: st
                .workspaces
                .iter()
                .map(|w| StatsWorkspace {
                    path: path_text(&w.path),
                    snapshots: w.snapshots,
                    latest_files: w.latest_files,
                    latest_bytes: w.latest_bytes,
                    latest_time: w.latest_ns.map(time_text),
                    logical_bytes: w.logical_bytes,
                })
                .collect(),
            tables: st
                .tables
                .iter()
                .map(|t| StatsTable {
                    table: t.name.to_string(),
                    entries: t.entries,
                    stored_bytes: t.stored_bytes,
                    metadata_bytes: t.metadata_bytes,
                    fragmented_bytes: t.fragmented_bytes,
                    pages: t.pages,
                })
                .collect(),
            budget: budget.map(StatsBudget::from),
        }
    }
}
