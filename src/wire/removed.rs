//! What removing an artifact did.

use serde::{Deserialize, Serialize};

/// An artifact removed (`artifact rm --json`, the API's `DELETE`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArtifactRemoved {
    /// Its key.
    pub removed: String,
}
