//! Snapshots: one as a list shows it, and what taking one made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Change, PathPair, Skipped, path_text, time_text};
use crate::compare::{DiffRequest, Rev};
use crate::diff::ChangeStatus;
use crate::error::Result;
use crate::store::Store;
use crate::store::snapshot::Snapshot as Snap;

/// One snapshot (`log --json`'s row, `show --json` without the scan settings).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Snapshot {
    /// Its id (hex).
    pub id: String,
    /// The id's short form, as people type it.
    pub short_id: String,
    /// When it was taken (RFC 3339, UTC).
    pub time: String,
    /// When it was taken, nanoseconds since the Unix epoch.
    pub time_ns: i64,
    /// The workspace's directory (lossy UTF-8).
    pub workspace: String,
    /// The workspace's number in the store (what the API's routes take).
    pub workspace_id: u64,
    /// The workspace's previous snapshot.
    pub parent: Option<String>,
    /// Its root tree (hex).
    pub root: String,
    /// The message ("" when none was given).
    pub message: String,
    /// Its metadata (key=value).
    pub meta: BTreeMap<String, String>,
    /// Tags naming it.
    pub tags: Vec<String>,
    /// Regular files and executables in it.
    pub files: u64,
    /// Directories in it.
    pub dirs: u64,
    /// Symbolic links in it.
    pub symlinks: u64,
    /// Bytes of content in it.
    pub bytes: u64,
}

impl Snapshot {
    /// The snapshot `s`, named by `tags`.
    pub fn new(s: &Snap, tags: &[String]) -> Self {
        let (id, stats) = (s.id(), s.stats());
        Snapshot {
            id: id.hex(),
            short_id: id.short(),
            time: time_text(s.time_ns()),
            time_ns: s.time_ns(),
            workspace: path_text(s.workspace()),
            workspace_id: s.workspace_id(),
            parent: s.parent().map(|p| p.hex()),
            root: s.root().hex(),
            message: s.message().to_string(),
            meta: s.meta_pairs().iter().cloned().collect(),
            tags: tags.to_vec(),
            files: stats.files,
            dirs: stats.dirs,
            symlinks: stats.symlinks,
            bytes: stats.bytes,
        }
    }
}

/// Snapshots, newest first (a list of results is an object on the wire, so it can grow).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapshotList {
    /// The snapshots.
    pub snapshots: Vec<Snapshot>,
}

/// What taking a snapshot made: the snapshot, and what changed since the previous one.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Checkpoint {
    /// The snapshot (the previous one when nothing changed and none was recorded).
    pub snapshot: Snapshot,
    /// Whether a snapshot was recorded.
    pub created: bool,
    /// Whether the tree equals the previous snapshot's.
    pub unchanged: bool,
    /// Paths changed since the previous snapshot (every path for the first one).
    pub files_changed: u64,
    /// Those changes (without line counts), up to a cap; None for the first snapshot.
    pub changes: Option<Vec<Change>>,
    /// Whether `changes` stops short of `files_changed`.
    pub changes_truncated: bool,
    /// Files whose content was read (the others were vouched for by the stat cache).
    pub files_read: u64,
    /// Encoded bytes the snapshot added to the store.
    pub stored_bytes: u64,
    /// Paths passed over or warned about (unreadable, too large, special files), as
    /// `snapshot --json` lists them.
    pub skipped: Vec<super::Skipped>,
    /// Wall time of the snapshot, in seconds.
    pub seconds: f64,
}

/// How the path a log was asked about changed in one snapshot.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PathChange {
    /// The path in this snapshot (for a deletion, the path it had), and the one before for a
    /// rename.
    #[serde(flatten)]
    pub paths: PathPair,
    /// What happened to it.
    pub status: ChangeStatus,
}

impl From<&crate::history::PathChange> for PathChange {
    fn from(c: &crate::history::PathChange) -> Self {
        PathChange {
            paths: PathPair::new(&c.path, c.old_path.as_deref()),
            status: c.status,
        }
    }
}

/// A snapshot with the scan's settings and what it passed over.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScannedSnapshot {
    /// The snapshot.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// The ignore patterns the scan used besides the ignore files.
    pub ignore_globs: Vec<String>,
    /// The largest file the scan stored (None: no limit).
    pub max_file_size: Option<u64>,
    /// Paths it passed over.
    pub skipped: Vec<Skipped>,
}

impl ScannedSnapshot {
    /// The snapshot `s`, named by `tags`.
    pub fn new(s: &Snap, tags: &[String]) -> Self {
        ScannedSnapshot {
            snapshot: Snapshot::new(s, tags),
            ignore_globs: s.scan().ignore_globs.clone(),
            max_file_size: s.scan().max_file_size,
            skipped: s.skipped().iter().map(Skipped::from).collect(),
        }
    }
}

/// A row of the log (`log --json`, the API's snapshot list).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogEntry {
    /// The snapshot.
    #[serde(flatten)]
    pub snapshot: ScannedSnapshot,
    /// Whether a restore of the workspace went back to it.
    pub restored: bool,
    /// With a path asked about: how that path changed in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<PathChange>,
}

impl LogEntry {
    /// The log's row `e`, its snapshot named by `tags`.
    pub fn new(e: &crate::history::LogEntry, tags: &[String]) -> Self {
        LogEntry {
            snapshot: ScannedSnapshot::new(&e.record, tags),
            restored: e.restored,
            change: e.change.as_ref().map(PathChange::from),
        }
    }
}

/// One snapshot and what changed since its parent (`show --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapshotShown {
    /// The snapshot.
    #[serde(flatten)]
    pub snapshot: ScannedSnapshot,
    /// The changes since its parent (without line counts); None for a first snapshot.
    pub changes: Option<Vec<Change>>,
}

impl SnapshotShown {
    /// The snapshot `s` of `store`, named by `tags`.
    pub fn new(store: &Store, s: &Snap, tags: &[String]) -> Result<Self> {
        let changes = match s.parent() {
            Some(parent) => {
                let d = crate::compare::diff(
                    store,
                    Rev::Snapshot(parent),
                    Rev::Snapshot(s.id()),
                    None,
                    &DiffRequest::default(),
                )?;
                Some(d.changes.iter().map(Change::from).collect())
            }
            None => None,
        };
        Ok(SnapshotShown {
            snapshot: ScannedSnapshot::new(s, tags),
            changes,
        })
    }
}
