//! The operation log: every command that changed a workspace or the store's history, with the
//! snapshots before and after it, so `undo` can take it back.

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::tables::OPLOG;
use crate::error::{Error, Result};
use crate::id::Id;

/// One recorded operation, as stored: private, so that the encoding can change without
/// breaking an embedder. The API hands out [`Operation`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OpRecord {
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
    /// Who started it when not the local user at a terminal: a server names the credential
    /// the request carried and where it came from. None for a command run by hand, and for
    /// every record written before the field existed.
    pub actor: Option<String>,
}

/// The record as stored before `actor` existed (postcard is not self-describing: a record is
/// read as the newest layout, else as this one). A build without `actor` reads a newer record
/// too: postcard ignores the trailing bytes.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct OpRecordV1 {
    id: u64,
    time_ns: i64,
    kind: String,
    workspace: Vec<u8>,
    before: Option<Id>,
    after: Option<Id>,
    command: Vec<String>,
    reverses: Option<u64>,
    changed_workspace: bool,
}

impl OpRecord {
    /// An operation finishing now, with the command line and the actor of `store`'s handle. It
    /// changed the workspace and reverses nothing, unless the caller says otherwise.
    pub fn new(
        store: &super::Store,
        kind: impl Into<String>,
        workspace: Vec<u8>,
        before: Option<Id>,
        after: Option<Id>,
    ) -> OpRecord {
        OpRecord {
            id: 0,
            time_ns: crate::files::now_ns(),
            kind: kind.into(),
            workspace,
            before,
            after,
            command: store.command().to_vec(),
            reverses: None,
            changed_workspace: true,
            actor: store.actor().map(str::to_string),
        }
    }

    /// Decodes a stored record, of this layout or of the one before `actor`.
    pub fn decode(bytes: &[u8]) -> Result<OpRecord> {
        if let Ok(op) = postcard::from_bytes::<OpRecord>(bytes) {
            return Ok(op);
        }
        let old: OpRecordV1 = postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "operation",
            id: String::new(),
            why: e.to_string(),
        })?;
        Ok(OpRecord {
            id: old.id,
            time_ns: old.time_ns,
            kind: old.kind,
            workspace: old.workspace,
            before: old.before,
            after: old.after,
            command: old.command,
            reverses: old.reverses,
            changed_workspace: old.changed_workspace,
            actor: None,
        })
    }
}

/// One recorded operation: a command that changed a workspace or the store's history, with
/// the snapshots before and after it. Read with [`super::Reader::ops`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    rec: OpRecord,
}

impl Operation {
    pub(crate) fn new(rec: OpRecord) -> Self {
        Operation { rec }
    }

    /// Its sequence number, store-wide, from 1.
    pub fn id(&self) -> u64 {
        self.rec.id
    }

    /// When it finished, nanoseconds since the Unix epoch.
    pub fn time_ns(&self) -> i64 {
        self.rec.time_ns
    }

    /// What it was: "snapshot", "restore", "undo", "redo", "revert", "apply", "run", ...
    pub fn kind(&self) -> &str {
        &self.rec.kind
    }

    /// The workspace's canonical path, raw bytes.
    pub fn workspace(&self) -> &[u8] {
        &self.rec.workspace
    }

    /// The workspace's state before (None when there was nothing to record).
    pub fn before(&self) -> Option<Id> {
        self.rec.before
    }

    /// The workspace's state after.
    pub fn after(&self) -> Option<Id> {
        self.rec.after
    }

    /// The command line that did it.
    pub fn command(&self) -> &[String] {
        &self.rec.command
    }

    /// For undo and redo: the operation reversed.
    pub fn reverses(&self) -> Option<u64> {
        self.rec.reverses
    }

    /// Whether it is recorded as changing files in the workspace (what `undo` can take back).
    pub fn changed_workspace(&self) -> bool {
        self.rec.changed_workspace
    }

    /// Who started it when not the local user at a terminal (a server's credential and
    /// origin); None for a command run by hand.
    pub fn actor(&self) -> Option<&str> {
        self.rec.actor.as_deref()
    }
}

/// Appends an operation inside an open write transaction; returns its id.
pub(crate) fn record(txn: &WriteTransaction, mut op: OpRecord) -> Result<u64> {
    let next = super::counter(txn, "next_op_id")?.unwrap_or(1);
    super::write_counter(txn, "next_op_id", next + 1)?;
    op.id = next;
    txn.open_table(OPLOG)?
        .insert(next, super::encode("operation", &op)?.as_slice())?;
    Ok(next)
}

/// Records `op` in a write transaction of its own; returns its id.
pub(crate) fn record_alone(store: &super::Store, op: OpRecord) -> Result<u64> {
    let txn = store.begin_write()?;
    let id = record(&txn, op)?;
    txn.commit()?;
    Ok(id)
}

/// Reads the newest operations first, at most `limit`, optionally for one workspace.
pub(crate) fn list(
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

/// One row of the operation log as people read it (`op log`): one user action, with the
/// bookkeeping rows recorded around it folded in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionRow {
    /// The action's own record.
    pub op: Operation,
    /// Its kind without a target (`overlay-reject`, not `overlay-reject:3`).
    pub kind: String,
    /// What the kind named after a `:` (an overlay id), if anything.
    pub target: Option<String>,
    /// The ids of the bookkeeping rows folded into it: the `pre-KIND` and `post-KIND`
    /// snapshots the same command recorded around the action.
    pub folded: Vec<u64>,
    /// Whether the action changed files in the workspace. The stored flag also marks what
    /// `undo` can take back, so it is set on an overlay reject (and on the undo or redo of
    /// one) although those move only the overlay; this says what happened to the files.
    pub changed_workspace: bool,
}

/// Kinds (without their target) whose operations move only an overlay, never the workspace.
const OVERLAY_ONLY_KINDS: &[&str] = &["overlay-reject"];

/// Splits a stored kind into (kind, target): `overlay-reject:3` -> (`overlay-reject`, `3`).
pub fn split_kind(kind: &str) -> (&str, Option<&str>) {
    match kind.split_once(':') {
        Some((k, t)) => (k, Some(t)),
        None => (kind, None),
    }
}

/// Folds stored rows (newest first) into user actions: a `pre-X`/`post-X` row that changed
/// nothing joins the row of kind X recorded by the same command next to it. A bookkeeping row
/// with no such action (the action failed) stays a row of its own. The stored log is unchanged.
pub fn fold_actions(ops: Vec<Operation>) -> Vec<ActionRow> {
    // Oldest first, so an undo or redo finds the operation it reverses already judged.
    let mut overlay_only = rustc_hash::FxHashSet::default();
    for op in ops.iter().rev() {
        let only = OVERLAY_ONLY_KINDS.contains(&split_kind(op.kind()).0)
            || op.reverses().is_some_and(|r| overlay_only.contains(&r));
        if only {
            overlay_only.insert(op.id());
        }
    }
    let mut rows: Vec<ActionRow> = ops
        .into_iter()
        .map(|op| {
            let (k, t) = split_kind(op.kind());
            ActionRow {
                kind: k.to_string(),
                target: t.map(str::to_string),
                folded: Vec::new(),
                changed_workspace: op.changed_workspace() && !overlay_only.contains(&op.id()),
                op,
            }
        })
        .collect();
    let bookkeeping_of = |r: &ActionRow| -> Option<String> {
        let k = r.kind.as_str();
        let base = k.strip_prefix("pre-").or_else(|| k.strip_prefix("post-"))?;
        (!r.op.changed_workspace()).then(|| base.to_string())
    };
    let mut start = 0;
    while start < rows.len() {
        // The rows one command recorded are adjacent and share the command line.
        let mut end = start + 1;
        while end < rows.len()
            && rows[end].op.command() == rows[start].op.command()
            && rows[end].op.workspace() == rows[start].op.workspace()
        {
            end += 1;
        }
        let mut absorbed = vec![false; end - start];
        for i in start..end {
            let Some(base) = bookkeeping_of(&rows[i]) else {
                continue;
            };
            let action = (start..end)
                .find(|&j| j != i && bookkeeping_of(&rows[j]).is_none() && rows[j].kind == base);
            if let Some(j) = action {
                let id = rows[i].op.id();
                rows[j].folded.push(id);
                absorbed[i - start] = true;
            }
        }
        let group: Vec<ActionRow> = rows.drain(start..end).collect();
        let kept: Vec<ActionRow> = group
            .into_iter()
            .zip(absorbed)
            .filter(|(_, gone)| !gone)
            .map(|(row, _)| row)
            .collect();
        let n = kept.len();
        rows.splice(start..start, kept);
        start += n;
    }
    rows
}

/// The operations of workspace `ws` (canonical path bytes) that are undone now: undone, and
/// that undo not taken back by a redo since.
pub fn undone_ops(
    store: &super::Store,
    ws: &[u8],
) -> crate::error::Result<std::collections::HashSet<u64>> {
    let ops = store.reader()?.ops(Some(ws), usize::MAX)?;
    let mut target_of_undo = std::collections::HashMap::new();
    let mut undone = std::collections::HashSet::new();
    // Oldest first: each undo or redo flips the state of the operation it is about.
    for o in ops.iter().rev() {
        match (o.kind(), o.reverses()) {
            ("undo", Some(target)) => {
                target_of_undo.insert(o.id(), target);
                undone.insert(target);
            }
            ("redo", Some(undo)) => {
                if let Some(target) = target_of_undo.get(&undo) {
                    undone.remove(target);
                }
            }
            _ => {}
        }
    }
    Ok(undone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_both_layouts_are_read_by_both() {
        let old = OpRecordV1 {
            id: 7,
            time_ns: 1,
            kind: "run".into(),
            workspace: b"/w".to_vec(),
            before: None,
            after: Some(Id::default()),
            command: vec!["rewind".into(), "run".into()],
            reverses: Some(3),
            changed_workspace: true,
        };
        let bytes = postcard::to_allocvec(&old).unwrap();
        let read = OpRecord::decode(&bytes).unwrap();
        assert_eq!(
            (read.id, read.kind.as_str(), read.reverses, read.actor),
            (7, "run", Some(3), None)
        );
        assert_eq!(read.command, old.command);
        let new = OpRecord {
            actor: Some("serve token from 127.0.0.1:9".into()),
            ..read
        };
        let bytes = postcard::to_allocvec(&new).unwrap();
        assert_eq!(OpRecord::decode(&bytes).unwrap(), new);
        // What an older build does with a new record: reads the fields it knows.
        let as_old: OpRecordV1 = postcard::from_bytes(&bytes).unwrap();
        assert_eq!((as_old.id, as_old.command), (7, new.command.clone()));
        assert!(OpRecord::decode(b"\x07").is_err(), "damage is still named");
    }
}
