//! Snapshot records: a root tree plus everything needed to interpret it later.
//!
//! The records as stored are private to the crate, so that their encoding can change: an
//! embedder reads [`Snapshot`] and [`Workspace`], which wrap them.
//!
//! ```
//! fn shown(s: &rewind::Snapshot) -> (rewind::Id, &str) {
//!     (s.root(), s.message())
//! }
//! ```
//!
//! ```compile_fail,E0603
//! fn shown(s: &rewind::store::snapshot::SnapshotRecord) -> &str {
//!     &s.message
//! }
//! ```
//!
//! ```compile_fail,E0603
//! fn path(w: &rewind::store::snapshot::WorkspaceRecord) -> &[u8] {
//!     &w.path
//! }
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::Id;

/// Why a snapshot passed over a path.
//
// One enum for the store and the JSON (`wire::SkipReason` is this one): snapshot records keep
// it so that a restore deletes only what the snapshot looked for and did not find. postcard
// encodes a variant by its index, not its name, so the serde names below are the JSON's alone
// (`--json`, the API, `schemas/`) and leave the records' bytes, and so snapshot ids, as they
// were; a new variant goes at the end, and none is ever reordered or removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Larger than the largest file the snapshot stores (its scan settings' `max_file_size`).
    TooLarge,
    /// It could not be read (permissions, an I/O error).
    Unreadable,
    /// It disappeared between the walk and the read.
    Vanished,
    /// A fifo, socket or device.
    Special,
    /// It kept changing while it was read (stored as last read).
    ChangedWhileRead,
}

impl SkipReason {
    /// A stable lowercase name for output: the JSON's.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too_large",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Vanished => "vanished",
            SkipReason::Special => "special",
            SkipReason::ChangedWhileRead => "changed_while_read",
        }
    }

    /// Whether the path is absent from the snapshot's tree (as opposed to stored with a warning).
    pub fn excluded(self) -> bool {
        !matches!(self, SkipReason::ChangedWhileRead)
    }
}

/// A path that the snapshot passed over or warned about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Path relative to the workspace root, raw bytes.
    pub path: Vec<u8>,
    /// Why.
    pub reason: SkipReason,
    /// Extra detail (an error message).
    pub detail: String,
}

impl Skipped {
    /// Whether this is news next to `before`, what the workspace's previous snapshot passed
    /// over: a special file (a fifo, a socket) it skipped too was warned about then, and
    /// saying so on every snapshot, status and run buries the warnings that matter.
    pub fn worth_warning(&self, before: &[Skipped]) -> bool {
        self.reason != SkipReason::Special
            || !before
                .iter()
                .any(|b| b.reason == self.reason && b.path == self.path)
    }
}

/// The scan settings a snapshot was taken with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ScanSettings {
    /// `--ignore` globs, in order.
    pub ignore_globs: Vec<String>,
    /// `--max-file-size`, if any.
    pub max_file_size: Option<u64>,
}

/// Totals over a snapshot's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TreeStats {
    /// Regular files (executables included).
    pub files: u64,
    /// Directories below the root.
    pub dirs: u64,
    /// Symbolic links.
    pub symlinks: u64,
    /// Bytes in regular files.
    pub bytes: u64,
}

/// What a snapshot id names, as stored: private, so that the encoding can change without
/// breaking an embedder. The API hands out [`Snapshot`]. Immutable: tags live in the refs
/// table, not here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SnapshotRecord {
    /// The workspace's canonical path, raw bytes.
    pub workspace: Vec<u8>,
    /// The workspace's id in this store.
    pub workspace_id: u64,
    /// Root tree id.
    pub root: Id,
    /// Creation time, nanoseconds since the Unix epoch.
    pub time_ns: i64,
    /// The previous snapshot of the same workspace, if any.
    pub parent: Option<Id>,
    /// `-m`.
    pub message: String,
    /// `--meta KEY=VALUE` pairs, in the order given.
    pub meta: Vec<(String, String)>,
    /// Totals.
    pub stats: TreeStats,
    /// How the tree was scanned.
    pub scan: ScanSettings,
    /// Paths passed over or warned about.
    pub skipped: Vec<Skipped>,
}

impl SnapshotRecord {
    /// The canonical encoding; its hash is the snapshot id.
    pub fn encode(&self) -> Result<Vec<u8>> {
        super::encode("snapshot record", self)
    }

    /// Decodes a stored record.
    pub fn decode(id: &Id, bytes: &[u8]) -> Result<Self> {
        postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "snapshot",
            id: id.hex(),
            why: e.to_string(),
        })
    }

    /// Looks up a metadata value.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A snapshot: its id and what it records (root tree, time, workspace, message, metadata,
/// totals, scan settings, the paths it passed over). Read with [`super::Reader::snapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    id: Id,
    rec: SnapshotRecord,
}

impl Snapshot {
    pub(crate) fn new(id: Id, rec: SnapshotRecord) -> Self {
        Snapshot { id, rec }
    }

    /// The stored record, for the library's own use.
    pub(crate) fn record(&self) -> &SnapshotRecord {
        &self.rec
    }

    /// The snapshot's id (the hash of its stored record).
    pub fn id(&self) -> Id {
        self.id
    }

    /// The workspace's canonical path, raw bytes.
    pub fn workspace(&self) -> &[u8] {
        &self.rec.workspace
    }

    /// The workspace's canonical path.
    pub fn workspace_path(&self) -> std::path::PathBuf {
        use std::os::unix::ffi::OsStrExt;
        std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&self.rec.workspace))
    }

    /// The workspace's id in this store.
    pub fn workspace_id(&self) -> u64 {
        self.rec.workspace_id
    }

    /// The root tree's id.
    pub fn root(&self) -> Id {
        self.rec.root
    }

    /// When it was taken, nanoseconds since the Unix epoch.
    pub fn time_ns(&self) -> i64 {
        self.rec.time_ns
    }

    /// The previous snapshot of the same workspace, if any.
    pub fn parent(&self) -> Option<Id> {
        self.rec.parent
    }

    /// The message it was taken with (empty if none).
    pub fn message(&self) -> &str {
        &self.rec.message
    }

    /// Its metadata, `KEY=VALUE` pairs in the order given.
    pub fn meta_pairs(&self) -> &[(String, String)] {
        &self.rec.meta
    }

    /// Looks up a metadata value.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.rec.meta(key)
    }

    /// Totals over its tree.
    pub fn stats(&self) -> TreeStats {
        self.rec.stats
    }

    /// How the tree was scanned.
    pub fn scan(&self) -> &ScanSettings {
        &self.rec.scan
    }

    /// Paths passed over or warned about.
    pub fn skipped(&self) -> &[Skipped] {
        &self.rec.skipped
    }
}

/// A workspace registered in the store, as stored (private like [`SnapshotRecord`]; the API
/// hands out [`Workspace`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WorkspaceRecord {
    /// Small integer id, used in the log and stat cache keys.
    pub id: u64,
    /// Canonical path, raw bytes.
    pub path: Vec<u8>,
    /// Registration time, ns since the epoch.
    pub created_ns: i64,
    /// Sequence number the next snapshot gets in the workspace log.
    pub next_seq: u64,
}

/// A workspace registered in the store: a directory it keeps history for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    rec: WorkspaceRecord,
}

impl Workspace {
    pub(crate) fn new(rec: WorkspaceRecord) -> Self {
        Workspace { rec }
    }

    #[cfg(test)]
    pub(crate) fn record(&self) -> &WorkspaceRecord {
        &self.rec
    }

    /// Its small integer id in this store (what the log and the API's routes use).
    pub fn id(&self) -> u64 {
        self.rec.id
    }

    /// Its canonical path, raw bytes.
    pub fn path(&self) -> &[u8] {
        &self.rec.path
    }

    /// Its canonical path.
    pub fn root(&self) -> std::path::PathBuf {
        use std::os::unix::ffi::OsStrExt;
        std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&self.rec.path))
    }

    /// When it was registered, nanoseconds since the Unix epoch.
    pub fn created_ns(&self) -> i64 {
        self.rec.created_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> SnapshotRecord {
        let reasons = [
            SkipReason::TooLarge,
            SkipReason::Unreadable,
            SkipReason::Vanished,
            SkipReason::Special,
            SkipReason::ChangedWhileRead,
        ];
        SnapshotRecord {
            workspace: b"/w".to_vec(),
            workspace_id: 1,
            root: Id([7; 32]),
            time_ns: 2,
            parent: None,
            message: "m".into(),
            meta: vec![],
            stats: TreeStats::default(),
            scan: ScanSettings::default(),
            skipped: reasons
                .iter()
                .enumerate()
                .map(|(i, &reason)| Skipped {
                    path: vec![b'a' + i as u8],
                    reason,
                    detail: String::new(),
                })
                .collect(),
        }
    }

    /// A snapshot record with a path skipped for every reason, as builds before the reason's
    /// serde names were snake_case (the wire's) encoded it. postcard writes a variant's index,
    /// not its name: the bytes, and so the snapshot id (their hash), must not change.
    const OLD: [u8; 68] = [
        2, 47, 119, 1, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        7, 7, 7, 7, 7, 7, 7, 4, 0, 1, 109, 0, 0, 0, 0, 0, 0, 0, 5, 1, 97, 0, 0, 1, 98, 1, 0, 1, 99,
        2, 0, 1, 100, 3, 0, 1, 101, 4, 0,
    ];

    #[test]
    fn a_skip_reasons_name_is_its_json() {
        for s in record().skipped {
            let json = serde_json::to_value(s.reason).unwrap();
            assert_eq!(json, s.reason.name(), "{:?}", s.reason);
            assert_eq!(
                serde_json::from_value::<SkipReason>(json).unwrap(),
                s.reason
            );
        }
    }

    #[test]
    fn skip_reasons_encode_as_they_always_did() {
        let id = Id::of(&OLD);
        assert_eq!(SnapshotRecord::decode(&id, &OLD).unwrap(), record());
        assert_eq!(record().encode().unwrap(), OLD);
    }
}
