//! The operation log: every command that changed a workspace or the store's history, with the
//! snapshots before and after it, so `undo` can take it back.

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::tables::{META, OPLOG};
use crate::error::{Error, Result};
use crate::id::Id;

/// One recorded operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRecord {
    /// Sequence number, store-wide, starting at 1.
    pub id: u64,
    /// When it finished, ns since the epoch.
    pub time_ns: i64,
    /// "snapshot", "restore", "undo", "redo", "revert", "apply", "run", ...
    pub kind: String,
    /// The workspace's canonical path.
    pub workspace: Vec<u8>,
    /// The workspace's state before (None when there was nothing to record).
    pub before: Option<Id>,
    /// The workspace's state after.
    pub after: Option<Id>,
    /// The command line that did it.
    pub command: Vec<String>,
    /// For undo and redo: the operation reversed.
    pub reverses: Option<u64>,
    /// Whether it changed files in the workspace (a snapshot does not).
    pub changed_workspace: bool,
}

impl OpRecord {
    /// An operation finishing now, with the command line of `store`'s handle. It changed the
    /// workspace and reverses nothing, unless the caller says otherwise.
    pub fn new(
        store: &super::Store,
        kind: impl Into<String>,
        workspace: Vec<u8>,
        before: Option<Id>,
        after: Option<Id>,
    ) -> OpRecord {
        OpRecord {
            id: 0,
            time_ns: crate::util::now_ns(),
            kind: kind.into(),
            workspace,
            before,
            after,
            command: store.command().to_vec(),
            reverses: None,
            changed_workspace: true,
        }
    }

    /// Decodes a stored record.
    pub fn decode(bytes: &[u8]) -> Result<OpRecord> {
        postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "operation",
            id: String::new(),
            why: e.to_string(),
        })
    }
}

/// Appends an operation inside an open write transaction; returns its id.
pub fn record(txn: &WriteTransaction, mut op: OpRecord) -> Result<u64> {
    let mut meta = txn.open_table(META)?;
    let next = meta
        .get("next_op_id")?
        .and_then(|v| v.value().try_into().ok().map(u64::from_le_bytes))
        .unwrap_or(1);
    meta.insert("next_op_id", (next + 1).to_le_bytes().as_slice())?;
    op.id = next;
    txn.open_table(OPLOG)?.insert(
        next,
        postcard::to_stdvec(&op).unwrap_or_default().as_slice(),
    )?;
    Ok(next)
}

/// Records `op` in a write transaction of its own; returns its id.
pub fn record_alone(store: &super::Store, op: OpRecord) -> Result<u64> {
    let txn = store.begin_write()?;
    let id = record(&txn, op)?;
    txn.commit()?;
    Ok(id)
}

/// Reads the newest operations first, at most `limit`, optionally for one workspace.
pub fn list(
    table: &impl ReadableTable<u64, &'static [u8]>,
    workspace: Option<&[u8]>,
    limit: usize,
) -> Result<Vec<OpRecord>> {
    let mut out = Vec::new();
    for item in table.iter()?.rev() {
        if out.len() >= limit {
            break;
        }
        let op = OpRecord::decode(item?.1.value())?;
        if workspace.is_none_or(|w| w == op.workspace.as_slice()) {
            out.push(op);
        }
    }
    Ok(out)
}
