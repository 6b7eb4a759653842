//! A changed path as JSON shows it, with the path it had before a rename.

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text};

/// A path and, for a rename, the path it had: lossy UTF-8, each with its exact bytes (base64)
/// beside it only when it is not UTF-8. The wire types that name a changed file flatten it
/// (`#[serde(flatten)]`), so the four keys sit in the file's own object.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PathPair {
    /// The path (the new one for a rename).
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// The path it had before, for a rename.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// The old path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path_bytes: Option<String>,
}

impl PathPair {
    /// `path`, renamed from `old_path` when there is one.
    pub fn new(path: &[u8], old_path: Option<&[u8]>) -> Self {
        PathPair {
            path: path_text(path),
            path_bytes: path_bytes(path),
            old_path: old_path.map(path_text),
            old_path_bytes: old_path.and_then(path_bytes),
        }
    }
}
