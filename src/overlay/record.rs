//! The overlay record: what the store keeps of an overlay (its base, state, backend, runs and
//! what was accepted), its older layouts, the [`Overlay`] the API hands out in its stead, and
//! finding overlays by id or name.
//!
//! ```
//! fn base(o: &rewind::Overlay) -> rewind::Id {
//!     o.base()
//! }
//! ```
//!
//! ```compile_fail,E0603
//! fn base(o: &rewind::overlay::OverlayRecord) -> rewind::Id {
//!     o.base
//! }
//! ```

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{OverlayRun, backend};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Store;
use crate::store::tables::OVERLAYS;

/// How an overlay isolates its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    /// overlayfs in a private user and mount namespace (Linux).
    Namespace,
    /// A materialized copy of the base snapshot.
    Copy,
}

impl Backend {
    /// Its name in listings and JSON.
    pub fn name(self) -> &'static str {
        self.imp().name()
    }

    /// The directory holding the overlay's files as plain files (the copy backend's tree);
    /// `None` where they are only visible inside the overlay (the namespace backend).
    pub(crate) fn files_dir(self, store: &Store, rec: &OverlayRecord) -> Option<PathBuf> {
        self.imp().files_dir(store, rec)
    }

    /// The implementation: the one place the backend is matched.
    pub(crate) fn imp(self) -> &'static dyn backend::OverlayBackend {
        match self {
            Backend::Namespace => &backend::Namespace,
            Backend::Copy => &backend::Copy,
        }
    }
}

/// Which backend `create` should use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The namespace backend where the kernel allows it, else copy (with a notice).
    #[default]
    Auto,
    /// The namespace backend, or an error saying why it is unavailable.
    Namespace,
    /// The copy backend.
    Copy,
}

/// An overlay, as stored in the `overlays` table: private, so that the encoding can change
/// without breaking an embedder. The API hands out [`Overlay`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OverlayRecord {
    /// Small integer id, unique in the store.
    pub id: u64,
    /// An optional name (unique among overlays), usable wherever the id is.
    pub name: Option<String>,
    /// The workspace's canonical path, raw bytes.
    pub workspace: Vec<u8>,
    /// The backend.
    pub backend: Backend,
    /// The snapshot the overlay started from.
    pub base: Id,
    /// Creation time, ns since the epoch.
    pub created_ns: i64,
    /// The latest computed state: base plus the overlay's changes.
    pub state: Option<Id>,
    /// Paths already accepted or rejected, with the overlay's content at that moment (None:
    /// a deletion). A change is pending unless its path and content are listed here.
    pub settled: Vec<(Vec<u8>, Option<Id>)>,
    /// Namespace backend: every state snapshot made (deleted with the overlay).
    pub states: Vec<Id>,
    /// Namespace backend: what the overlay wrote at paths the base's ignore rules exclude
    /// (build outputs, dependencies), top-most paths only. They are not part of the state (no
    /// snapshot holds ignored files); accept copies them only with `include_ignored`.
    pub ignored: Vec<Vec<u8>>,
    /// The accept operation that settled each accepted path (paths settled otherwise are not
    /// listed). A settlement whose operation was undone (and not redone) no longer counts:
    /// the change is pending again.
    pub settled_by: Vec<(Vec<u8>, u64)>,
    /// Paths the workspace changed while a command ran in the overlay and that the command
    /// wrote too: the overlay's version may hold the workspace's edit, so accept reports them
    /// as conflicts until taken with `--theirs`/`--ours` or rejected.
    pub raced: Vec<Vec<u8>>,
    /// Single hunks accepted (path, hunk id, the accept operation): the rest of the file
    /// stays pending. Like `settled_by`, an undone operation's hunks are pending again.
    pub settled_hunks: Vec<(Vec<u8>, String, u64)>,
    /// Every command run in the overlay, in order: what `--run` takes and reviews group by.
    pub runs: Vec<OverlayRun>,
}

/// The record as stored before `runs` existed.
#[derive(Deserialize)]
pub(super) struct OverlayRecordV2 {
    id: u64,
    name: Option<String>,
    workspace: Vec<u8>,
    backend: Backend,
    base: Id,
    created_ns: i64,
    state: Option<Id>,
    settled: Vec<(Vec<u8>, Option<Id>)>,
    states: Vec<Id>,
    ignored: Vec<Vec<u8>>,
    settled_by: Vec<(Vec<u8>, u64)>,
    raced: Vec<Vec<u8>>,
    settled_hunks: Vec<(Vec<u8>, String, u64)>,
}

/// The record as stored before `settled_by` and `raced` existed (postcard is not
/// self-describing: a record is read as the newest layout, else as this one).
#[derive(Deserialize)]
pub(super) struct OverlayRecordV1 {
    id: u64,
    name: Option<String>,
    workspace: Vec<u8>,
    backend: Backend,
    base: Id,
    created_ns: i64,
    state: Option<Id>,
    settled: Vec<(Vec<u8>, Option<Id>)>,
    states: Vec<Id>,
    ignored: Vec<Vec<u8>>,
}

impl OverlayRecord {
    /// Decodes a stored record.
    pub fn decode(id: u64, bytes: &[u8]) -> Result<OverlayRecord> {
        if let Ok(rec) = postcard::from_bytes::<OverlayRecord>(bytes) {
            return Ok(rec);
        }
        if let Ok(v2) = postcard::from_bytes::<OverlayRecordV2>(bytes) {
            return Ok(OverlayRecord {
                id: v2.id,
                name: v2.name,
                workspace: v2.workspace,
                backend: v2.backend,
                base: v2.base,
                created_ns: v2.created_ns,
                state: v2.state,
                settled: v2.settled,
                states: v2.states,
                ignored: v2.ignored,
                settled_by: v2.settled_by,
                raced: v2.raced,
                settled_hunks: v2.settled_hunks,
                runs: Vec::new(),
            });
        }
        let old: OverlayRecordV1 = postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "overlay",
            id: id.to_string(),
            why: e.to_string(),
        })?;
        Ok(OverlayRecord {
            id: old.id,
            name: old.name,
            workspace: old.workspace,
            backend: old.backend,
            base: old.base,
            created_ns: old.created_ns,
            state: old.state,
            settled: old.settled,
            states: old.states,
            ignored: old.ignored,
            settled_by: Vec::new(),
            raced: Vec::new(),
            settled_hunks: Vec::new(),
            runs: Vec::new(),
        })
    }

    pub(super) fn encode(&self) -> Result<Vec<u8>> {
        crate::store::encode("overlay record", self)
    }

    /// The workspace path.
    pub fn workspace_path(&self) -> PathBuf {
        PathBuf::from(std::ffi::OsStr::from_bytes(&self.workspace))
    }

    /// The overlay's directory in the store.
    pub fn dir(&self, store: &Store) -> PathBuf {
        overlays_dir(store).join(self.id.to_string())
    }
}

/// The directory holding every overlay's files.
pub fn overlays_dir(store: &Store) -> PathBuf {
    store.dir().join("overlays")
}

pub(super) fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.bytes().all(|b| b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::BadOverlayName(name.to_string()))
    }
}

/// An overlay: an isolated view of a workspace, from a base snapshot, where commands run and
/// whose changes are accepted into the workspace or rejected. Found with [`find`] or [`list`];
/// the operations on it are its methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlay {
    pub(crate) rec: OverlayRecord,
}

impl Overlay {
    pub(crate) fn new(rec: OverlayRecord) -> Self {
        Overlay { rec }
    }

    /// Its small integer id, unique in the store.
    pub fn id(&self) -> u64 {
        self.rec.id
    }

    /// Its name, if it was given one (usable wherever the id is).
    pub fn name(&self) -> Option<&str> {
        self.rec.name.as_deref()
    }

    /// The workspace's canonical path, raw bytes.
    pub fn workspace(&self) -> &[u8] {
        &self.rec.workspace
    }

    /// The workspace's canonical path.
    pub fn workspace_path(&self) -> PathBuf {
        self.rec.workspace_path()
    }

    /// How it isolates its commands.
    pub fn backend(&self) -> Backend {
        self.rec.backend
    }

    /// The snapshot it started from.
    pub fn base(&self) -> Id {
        self.rec.base
    }

    /// When it was created, nanoseconds since the Unix epoch.
    pub fn created_ns(&self) -> i64 {
        self.rec.created_ns
    }

    /// Its latest computed state (base plus its changes), if one was computed.
    pub fn state_id(&self) -> Option<Id> {
        self.rec.state
    }

    /// Paths it wrote that the base's ignore rules exclude (top-most paths only): not part of
    /// its state, and accepted only when asked.
    pub fn ignored(&self) -> &[Vec<u8>] {
        &self.rec.ignored
    }

    /// Every command run in it, in order.
    pub fn runs(&self) -> &[OverlayRun] {
        &self.rec.runs
    }

    /// Its directory in the store.
    pub fn dir(&self, store: &Store) -> PathBuf {
        self.rec.dir(store)
    }

    /// The directory holding its files as plain files (the copy backend's tree); `None` where
    /// they are only visible inside the overlay (the namespace backend).
    pub fn files_dir(&self, store: &Store) -> Option<PathBuf> {
        self.rec.backend.files_dir(store, &self.rec)
    }
}

/// Every overlay, by id.
pub fn list(store: &Store) -> Result<Vec<Overlay>> {
    Ok(list_records(store)?.into_iter().map(Overlay::new).collect())
}

/// Finds an overlay by id or name.
pub fn find(store: &Store, key: &str) -> Result<Overlay> {
    find_record(store, key).map(Overlay::new)
}

/// Every overlay's record, by id.
pub(crate) fn list_records(store: &Store) -> Result<Vec<OverlayRecord>> {
    store
        .reader()?
        .overlay_records()?
        .into_iter()
        .map(|(id, bytes)| OverlayRecord::decode(id, &bytes))
        .collect()
}

/// Finds an overlay's record by id or name.
pub(crate) fn find_record(store: &Store, key: &str) -> Result<OverlayRecord> {
    let all = list_records(store)?;
    let found = match key.parse::<u64>() {
        Ok(n) => all.into_iter().find(|o| o.id == n),
        Err(_) => all.into_iter().find(|o| o.name.as_deref() == Some(key)),
    };
    found.ok_or_else(|| Error::NoOverlay(key.to_string()))
}

pub(super) fn save(store: &Store, rec: &OverlayRecord) -> Result<()> {
    let txn = store.begin_write()?;
    txn.open_table(OVERLAYS)?
        .insert(rec.id, rec.encode()?.as_slice())?;
    txn.commit()?;
    Ok(())
}
