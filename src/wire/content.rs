//! One file of a snapshot with its content (`cat --json`).

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text};
use crate::files::Kind;
use crate::id::Id;

/// A file, executable or symlink of a snapshot, and its bytes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileContent {
    /// The snapshot (hex).
    pub snapshot: String,
    /// The path.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// file, executable or symlink.
    pub kind: String,
    /// Content length in bytes.
    pub size: u64,
    /// The content's blob id (hex).
    pub id: String,
    /// utf-8 (the content as it is) or base64 (standard, padded: anything else).
    pub encoding: String,
    /// The content (a symlink's: its target).
    pub content: String,
}

impl FileContent {
    /// `path` of snapshot `snapshot`: of `kind` and `size`, with blob `id` holding `bytes`.
    pub fn new(snapshot: &Id, path: &[u8], kind: Kind, size: u64, id: &Id, bytes: Vec<u8>) -> Self {
        use base64::Engine;
        let (encoding, content) = match String::from_utf8(bytes) {
            Ok(text) => ("utf-8", text),
            Err(e) => (
                "base64",
                base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            ),
        };
        FileContent {
            snapshot: snapshot.hex(),
            path: path_text(path),
            path_bytes: path_bytes(path),
            kind: kind.name().to_string(),
            size,
            id: id.hex(),
            encoding: encoding.to_string(),
            content,
        }
    }
}
