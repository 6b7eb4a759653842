//! Workspaces: the directories a store keeps history for.

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text};
use crate::error::Result;
use crate::store::Store;
use crate::store::snapshot::Workspace as Registered;

/// One workspace (the API's workspace object).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Workspace {
    /// Its number in the store (what the API's routes take).
    pub id: u64,
    /// Its directory.
    pub path: String,
    /// The directory's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// When it was registered, nanoseconds since the Unix epoch.
    pub created_ns: i64,
    /// Snapshots in its history.
    pub snapshots: usize,
    /// Its latest snapshot (hex).
    pub head: Option<String>,
}

impl Workspace {
    /// The workspace `w` of `store`, with its history's length and head.
    pub fn new(store: &Store, w: &Registered) -> Result<Self> {
        let history = store.reader()?.history(w.id(), usize::MAX)?;
        Ok(Workspace {
            id: w.id(),
            path: path_text(w.path()),
            path_bytes: path_bytes(w.path()),
            created_ns: w.created_ns(),
            snapshots: history.len(),
            head: history.first().map(|i| i.hex()),
        })
    }
}
