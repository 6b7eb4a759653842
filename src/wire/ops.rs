//! The operation log (`op log --json`): each action on a workspace, newest first.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{path_text, time_text};
use crate::error::Result;
use crate::store::Store;
use crate::store::oplog::ActionRow;

/// One action of the operation log (`op log --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Op {
    /// Its id (what `undo` takes).
    pub id: u64,
    /// When it ran (RFC 3339, UTC).
    pub time: String,
    /// When it ran, nanoseconds since the Unix epoch.
    pub time_ns: i64,
    /// snapshot, restore, revert, apply, run, undo, redo, overlay-accept, ...
    pub kind: String,
    /// What the kind names (an overlay's id), if anything.
    pub target: Option<String>,
    /// The bookkeeping rows folded into it (the snapshots the same command took around it).
    pub folded: Vec<u64>,
    /// The workspace's directory.
    pub workspace: String,
    /// The workspace's number in the store; None when it is no longer registered.
    pub workspace_id: Option<u64>,
    /// The workspace's state before (hex).
    pub before: Option<String>,
    /// Its state after (hex).
    pub after: Option<String>,
    /// The command line that ran it.
    pub command: Vec<String>,
    /// Who ran it, when not the local user (a server records its caller).
    pub actor: Option<String>,
    /// The operation an undo or redo reverses.
    pub reverses: Option<u64>,
    /// Whether it changed files in the workspace.
    pub changed_workspace: bool,
    /// Whether a later undo took it back (and no redo brought it back).
    pub undone: bool,
}

impl Op {
    /// The rows of `store`'s operation log (from [`crate::store::oplog::fold_actions`], or
    /// raw), with each workspace's number and whether each was undone.
    pub fn list(store: &Store, rows: &[ActionRow]) -> Result<Vec<Op>> {
        let ids: HashMap<Vec<u8>, u64> = store
            .reader()?
            .workspaces()?
            .into_iter()
            .map(|w| (w.path().to_vec(), w.id()))
            .collect();
        let mut undone: HashMap<&[u8], HashSet<u64>> = HashMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let o = &r.op;
            let ws = o.workspace();
            if !undone.contains_key(ws) {
                undone.insert(ws, crate::store::oplog::undone_ops(store, ws)?);
            }
            out.push(Op {
                id: o.id(),
                time: time_text(o.time_ns()),
                time_ns: o.time_ns(),
                kind: r.kind.clone(),
                target: r.target.clone(),
                folded: r.folded.clone(),
                workspace: path_text(ws),
                workspace_id: ids.get(ws).copied(),
                before: o.before().map(|i| i.hex()),
                after: o.after().map(|i| i.hex()),
                command: o.command().to_vec(),
                actor: o.actor().map(str::to_string),
                reverses: o.reverses(),
                changed_workspace: r.changed_workspace,
                undone: undone.get(ws).is_some_and(|u| u.contains(&o.id())),
            });
        }
        Ok(out)
    }
}
