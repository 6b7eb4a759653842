//! Tags: names for snapshots (`tags --json`).

use serde::{Deserialize, Serialize};

use super::path_text;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Reader;

/// A tag and the snapshot it names (`tags --json`'s row, `tag --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Tag {
    /// The name.
    pub tag: String,
    /// The snapshot (hex).
    pub snapshot: String,
    /// The snapshot's workspace directory; None when the snapshot is no longer stored.
    pub workspace: Option<String>,
}

impl Tag {
    /// The tag `name` of snapshot `id`, as `reader` sees it.
    pub fn new(reader: &Reader, name: &str, id: &Id) -> Result<Self> {
        let workspace = match reader.snapshot(id) {
            Ok(r) => Some(path_text(r.workspace())),
            Err(Error::Missing { .. }) => None,
            Err(e) => return Err(e),
        };
        Ok(Tag {
            tag: name.to_string(),
            snapshot: id.hex(),
            workspace,
        })
    }

    /// Every tag of the store, by name.
    pub fn list(reader: &Reader) -> Result<Vec<Tag>> {
        reader
            .tags()?
            .iter()
            .map(|(n, id)| Tag::new(reader, n, id))
            .collect()
    }
}
