//! Trees: one directory's listing, the nodes of the Merkle tree that a snapshot's root names.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::Id;

pub use crate::files::Kind;

/// One entry of a tree.
///
/// Names are raw bytes because Unix file names are: a non-UTF-8 name must come back exactly.
/// There are no timestamps, so identical content always encodes to an identical tree id and
/// unchanged subtrees are shared between snapshots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeEntry {
    /// The file name (one path component, never containing '/').
    pub name: Vec<u8>,
    /// What it is.
    pub kind: Kind,
    /// Blob id (files, symlinks) or tree id (directories).
    pub id: Id,
    /// Bytes: the file's size, the link target's length, or the total of all files below a
    /// directory.
    pub size: u64,
}

/// A directory listing, sorted by name bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Tree {
    /// Entries, strictly increasing by `name`.
    pub entries: Vec<TreeEntry>,
}

impl Tree {
    /// Builds a tree from entries in any order.
    pub fn from_unsorted(mut entries: Vec<TreeEntry>) -> Tree {
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Tree { entries }
    }

    /// The canonical encoding; its BLAKE3 hash is the tree's id.
    pub fn encode(&self) -> Result<Vec<u8>> {
        super::encode("tree", self)
    }

    /// Encodes the tree and returns its id and encoding.
    pub fn id_and_bytes(&self) -> Result<(Id, Vec<u8>)> {
        let bytes = self.encode()?;
        Ok((Id::of(&bytes), bytes))
    }

    /// Decodes a stored tree, checking that its entries are well formed.
    pub fn decode(id: &Id, bytes: &[u8]) -> Result<Tree> {
        let tree: Tree = postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "tree",
            id: id.hex(),
            why: e.to_string(),
        })?;
        for pair in tree.entries.windows(2) {
            if pair[0].name >= pair[1].name {
                return Err(Error::Corrupt {
                    kind: "tree",
                    id: id.hex(),
                    why: "entries are not sorted by name".into(),
                });
            }
        }
        if let Some(bad) = tree
            .entries
            .iter()
            .find(|e| crate::files::check_name(&e.name).is_err())
        {
            return Err(Error::Corrupt {
                kind: "tree",
                id: id.hex(),
                why: format!(
                    "invalid entry name {:?}",
                    String::from_utf8_lossy(&bad.name)
                ),
            });
        }
        Ok(tree)
    }

    /// Finds an entry by name.
    pub fn get(&self, name: &[u8]) -> Option<&TreeEntry> {
        self.entries
            .binary_search_by(|e| e.name.as_slice().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }
}
