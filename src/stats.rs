//! `rewind stats`: where a store's bytes go, how much deduplication and compression save, and
//! what each workspace holds.

use std::path::PathBuf;

use crate::error::Result;
use crate::store::{ContentTotals, Format, Store, TableUsage};

/// One workspace's share.
#[derive(Clone, Debug)]
pub struct WorkspaceStats {
    /// Canonical path.
    pub path: Vec<u8>,
    /// Snapshots in its history.
    pub snapshots: u64,
    /// Files and bytes in its latest snapshot.
    pub latest_files: u64,
    /// See `latest_files`.
    pub latest_bytes: u64,
    /// When its latest snapshot was taken (ns since the epoch).
    pub latest_ns: Option<i64>,
    /// Bytes its snapshots represent together (each counted whole).
    pub logical_bytes: u64,
}

/// The whole store.
#[derive(Clone, Debug)]
pub struct StoreStats {
    /// The store directory.
    pub dir: PathBuf,
    /// The database file's length (`ls -l`), and the disk blocks it takes (`du`): redb's file
    /// has holes, which a store handle closes when it grew the file (see [`Store::fit`]).
    pub file_bytes: u64,
    /// See `file_bytes`.
    pub disk_bytes: u64,
    /// The store's format: schema version and format features (see [`crate::store::format`]).
    pub format: Format,
    /// Snapshot records.
    pub snapshots: u64,
    /// Tree records.
    pub trees: u64,
    /// Content objects.
    pub content: ContentTotals,
    /// Bytes all snapshots and artifacts represent, each distinct snapshot and each artifact
    /// counted whole: what copies would take.
    pub logical_bytes: u64,
    /// Per workspace.
    pub workspaces: Vec<WorkspaceStats>,
    /// Per table.
    pub tables: Vec<TableUsage>,
}

impl StoreStats {
    /// Logical bytes per distinct content byte.
    pub fn dedup_ratio(&self) -> f64 {
        ratio(self.logical_bytes, self.content.content_bytes)
    }

    /// Distinct content bytes per stored byte.
    pub fn compression_ratio(&self) -> f64 {
        ratio(self.content.content_bytes, self.content.encoded_bytes)
    }

    /// The file's length per byte of disk blocks (1.0 when it has no holes).
    pub fn sparse_ratio(&self) -> f64 {
        ratio(self.file_bytes, self.disk_bytes)
    }
}

/// A byte count for people: 1536 -> "1.5 KiB" (the library's notices and the CLI's output).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// Gathers the statistics (one read view; reads every record, never content).
pub fn stats(store: &Store) -> Result<StoreStats> {
    let file = store.dir().join(crate::store::DB_FILE);
    let meta = std::fs::metadata(&file).map_err(|e| crate::Error::io(&file, e))?;
    let reader = store.reader()?;
    let tables = reader.table_stats()?;
    let count = |name: &str| {
        tables
            .iter()
            .find(|t| t.name == name)
            .map_or(0, |t| t.entries)
    };
    let mut workspaces = Vec::new();
    for ws in reader.workspaces()? {
        // A restore or undo puts a snapshot in the history again; it holds its bytes once.
        let mut seen = rustc_hash::FxHashSet::default();
        let history = reader.history(ws.id(), usize::MAX)?;
        let mut w = WorkspaceStats {
            path: ws.path().to_vec(),
            snapshots: 0,
            latest_files: 0,
            latest_bytes: 0,
            latest_ns: None,
            logical_bytes: 0,
        };
        for (i, id) in history.iter().enumerate() {
            if !seen.insert(*id) {
                continue;
            }
            let rec = reader.snapshot_record(id)?;
            w.snapshots += 1;
            w.logical_bytes += rec.stats.bytes;
            if i == 0 {
                w.latest_files = rec.stats.files;
                w.latest_bytes = rec.stats.bytes;
                w.latest_ns = Some(rec.time_ns);
            }
        }
        workspaces.push(w);
    }
    // The same content the blob and chunk totals count: every snapshot and every artifact.
    let mut logical = 0;
    for id in reader.all_snapshots()? {
        logical += reader.snapshot_record(&id)?.stats.bytes;
    }
    for a in reader.artifacts()? {
        logical += a.size();
    }
    Ok(StoreStats {
        dir: store.dir().to_path_buf(),
        file_bytes: meta.len(),
        disk_bytes: std::os::unix::fs::MetadataExt::blocks(&meta) * 512,
        format: store.format()?,
        snapshots: count("snapshots"),
        trees: count("trees"),
        content: reader.content_totals()?,
        logical_bytes: logical,
        workspaces,
        tables,
    })
}
