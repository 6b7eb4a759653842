//! Listings of a snapshot's tree (`ls --json`'s rows, the API's tree route).

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text};
use crate::files::Kind;
use crate::id::Id;

/// One entry of a snapshot's tree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TreeEntry {
    /// Its name in its directory.
    pub name: String,
    /// Its workspace-relative path.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// file, executable, symlink or dir.
    pub kind: String,
    /// Content length in bytes (0 for a directory).
    pub size: u64,
    /// Its content's id: a blob, or a tree for a directory (hex).
    pub id: String,
    /// Where a symlink points (lossy UTF-8); only for symlinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl TreeEntry {
    /// The entry at `path` (its last component the name) of `kind`, `size` and `id`.
    pub fn new(path: &[u8], kind: Kind, size: u64, id: &Id) -> Self {
        let name = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
        TreeEntry {
            name: path_text(name),
            path: path_text(path),
            path_bytes: path_bytes(path),
            kind: kind.name().to_string(),
            size,
            id: id.hex(),
            target: None,
        }
    }
}

/// A directory of a snapshot.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tree {
    /// The snapshot (hex).
    pub rev: String,
    /// The directory ("" for the root).
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// Its entries, sorted by name.
    pub entries: Vec<TreeEntry>,
}

/// A tree entry with the address that reads it (the MCP server's resource URI).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LinkedTreeEntry {
    /// The entry.
    #[serde(flatten)]
    pub entry: TreeEntry,
    /// Where to read it.
    pub uri: String,
}

/// A directory of a snapshot with the snapshot itself (the MCP server's snapshot and
/// directory resources).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapshotDirectory {
    /// The snapshot.
    pub snapshot: super::Snapshot,
    /// The directory ("" for the root).
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// Its entries, sorted by name.
    pub entries: Vec<LinkedTreeEntry>,
}
