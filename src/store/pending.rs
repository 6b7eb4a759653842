//! Writes in progress: the journal that makes a multi-file write (apply, revert) finishable
//! after a crash.
//!
//! Each file is replaced atomically (temporary file, rename), but a patch touches many files,
//! and a process killed between two renames leaves some old and some new. So before the first
//! rename, the whole planned result (every file's new content, every removal) is committed
//! here, keyed by workspace; the record goes in the same transaction as the operation that
//! ends the write. A record found later means a write was interrupted: running the same
//! command again finishes it from the record (renames are idempotent), and `restore` (which
//! sets the workspace to a chosen state) clears it.

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::Store;
use super::tables::PENDING;
use super::tree::Kind;
use crate::error::{Error, Result};
use crate::id::Id;

/// A write that started and has not been recorded as finished.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PendingWrite {
    /// The command: "apply", "revert".
    pub kind: String,
    /// What identifies the request (its input and options): only the same request resumes it.
    pub key: Id,
    /// The snapshot taken just before writing.
    pub before: Option<Id>,
    /// When the write began, ns since the epoch.
    pub started_ns: i64,
    /// Files to write: path, kind, content.
    pub writes: Vec<(Vec<u8>, Kind, Vec<u8>)>,
    /// Paths to remove.
    pub removes: Vec<Vec<u8>>,
}

/// Commits `record` as the workspace `root`'s pending write.
pub fn begin(store: &Store, root: &[u8], record: &PendingWrite) -> Result<()> {
    let bytes = super::encode("pending write", record)?;
    let txn = store.begin_write()?;
    txn.open_table(PENDING)?.insert(root, bytes.as_slice())?;
    txn.commit()?;
    Ok(())
}

/// The workspace's pending write, if any. A record that does not decode is reported, never
/// ignored: it stands for a workspace that may be half-written.
pub fn get(store: &Store, root: &[u8]) -> Result<Option<PendingWrite>> {
    let txn = store.begin_write()?;
    let found = {
        let table = txn.open_table(PENDING)?;
        let v = table.get(root)?;
        match v {
            None => None,
            Some(v) => Some(postcard::from_bytes(v.value()).map_err(|e| Error::Corrupt {
                kind: "pending write",
                id: String::from_utf8_lossy(root).into_owned(),
                why: e.to_string(),
            })?),
        }
    };
    txn.abort()?;
    Ok(found)
}

/// Removes the workspace's pending write inside `txn`.
pub fn clear_in(txn: &WriteTransaction, root: &[u8]) -> Result<()> {
    txn.open_table(PENDING)?.remove(root)?;
    Ok(())
}
