//! What removing a named thing (an artifact, a tag) did.

use serde::{Deserialize, Serialize};

/// An artifact removed (`artifact rm --json`, the API's `DELETE`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArtifactRemoved {
    /// Its key.
    pub removed: String,
}

/// A tag deleted (`tag -d NAME --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TagDeleted {
    /// Its name.
    pub deleted: String,
}
