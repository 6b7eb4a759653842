//! Taking a snapshot: what `snapshot --json` prints and the API's snapshot route answers.

use serde::{Deserialize, Serialize};

use super::{Skipped, Snapshot};
use crate::error::Result;
use crate::scan::daemon_link::WalkNarrowing;
use crate::snapshot::SnapshotReport;
use crate::store::Store;

/// How the scan used the watch daemon.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "walk", rename_all = "snake_case")]
pub enum Walk {
    /// A full walk: no daemon, or it was not asked.
    Full,
    /// A full walk because the daemon could not vouch for anything.
    DaemonFull {
        /// The daemon's reason.
        reason: String,
    },
    /// Directories the daemon vouched for were not read again.
    Narrowed {
        /// How many directories, entries or subtrees the daemon said may have changed.
        untrusted: usize,
        /// Whether subtrees where nothing changed were not even listed.
        pruned: bool,
    },
}

impl From<&WalkNarrowing> for Walk {
    fn from(w: &WalkNarrowing) -> Self {
        match w {
            WalkNarrowing::Full => Walk::Full,
            WalkNarrowing::DaemonFull { reason } => Walk::DaemonFull {
                reason: reason.clone(),
            },
            WalkNarrowing::Narrowed { untrusted, pruned } => Walk::Narrowed {
                untrusted: *untrusted,
                pruned: *pruned,
            },
        }
    }
}

/// What taking a snapshot did: the snapshot as the log lists it, and the scan's figures.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapshotTaken {
    /// The snapshot (the previous one when the tree was unchanged and none was recorded);
    /// None for a dry run.
    pub snapshot: Option<Snapshot>,
    /// Its id (hex); None for a dry run.
    pub id: Option<String>,
    /// The id's short form.
    pub short_id: Option<String>,
    /// Whether nothing was recorded because only a preview was asked for.
    pub dry_run: bool,
    /// The root tree (hex).
    pub root: String,
    /// The workspace's previous snapshot (hex).
    pub parent: Option<String>,
    /// Whether the tree equals the previous snapshot's.
    pub unchanged: bool,
    /// Whether a snapshot was recorded.
    pub created: bool,
    /// The workspace's directory.
    pub workspace: String,
    /// Regular files and executables in the tree.
    pub files: u64,
    /// Directories in it.
    pub dirs: u64,
    /// Symbolic links in it.
    pub symlinks: u64,
    /// Bytes of content in it.
    pub bytes: u64,
    /// Files whose content was read (the others were vouched for by the stat cache).
    pub files_read: u64,
    /// Bytes read from them.
    pub bytes_read: u64,
    /// Blobs new to the store.
    pub new_blobs: u64,
    /// Chunks new to the store.
    pub new_chunks: u64,
    /// Trees new to the store.
    pub new_trees: u64,
    /// Encoded bytes added to the store.
    pub stored_bytes: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
    /// How the scan used the watch daemon.
    pub walk: Walk,
    /// Paths passed over or warned about.
    pub skipped: Vec<Skipped>,
}

impl SnapshotTaken {
    /// From the report of a snapshot of `store`.
    pub fn new(store: &Store, r: &SnapshotReport) -> Result<Self> {
        let snapshot = match r.id {
            Some(id) => {
                let reader = store.reader()?;
                let rec = reader.snapshot(&id)?;
                let tags: Vec<String> = reader
                    .tags()?
                    .into_iter()
                    .filter(|(_, t)| *t == id)
                    .map(|(name, _)| name)
                    .collect();
                Some(Snapshot::new(&rec, &tags))
            }
            None => None,
        };
        Ok(SnapshotTaken {
            snapshot,
            id: r.id.map(|i| i.hex()),
            short_id: r.id.map(|i| i.short()),
            dry_run: r.id.is_none(),
            root: r.root.hex(),
            parent: r.parent.map(|i| i.hex()),
            unchanged: r.unchanged,
            created: r.created,
            workspace: r.workspace.display().to_string(),
            files: r.stats.files,
            dirs: r.stats.dirs,
            symlinks: r.stats.symlinks,
            bytes: r.stats.bytes,
            files_read: r.files_read,
            bytes_read: r.bytes_read,
            new_blobs: r.new_blobs,
            new_chunks: r.new_chunks,
            new_trees: r.new_trees,
            stored_bytes: r.stored_bytes,
            seconds: r.seconds,
            walk: Walk::from(&r.walk),
            skipped: r.skipped.iter().map(Skipped::from).collect(),
        })
    }
}
