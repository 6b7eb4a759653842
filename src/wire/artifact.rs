//! Artifacts: named blobs in the store (`artifact ls --json`'s rows, what a put stored).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::time_text;
use crate::artifact::PutReport;

/// One artifact (`artifact ls --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Artifact {
    /// Its key.
    pub key: String,
    /// Its content's blob id (hex).
    pub id: String,
    /// Content length in bytes.
    pub size: u64,
    /// When it was put (RFC 3339, UTC).
    pub created: String,
    /// When it was put, nanoseconds since the Unix epoch.
    pub created_ns: i64,
    /// Its metadata (key=value).
    pub meta: BTreeMap<String, String>,
}

impl Artifact {
    /// The artifact `a`.
    pub fn new(a: &crate::Artifact) -> Self {
        Artifact {
            key: a.key().to_string(),
            id: a.blob().hex(),
            size: a.size(),
            created: time_text(a.created_ns()),
            created_ns: a.created_ns(),
            meta: a.meta_pairs().iter().cloned().collect(),
        }
    }
}

/// What putting an artifact stored (`artifact put --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ArtifactStored {
    /// The artifact.
    #[serde(flatten)]
    pub artifact: Artifact,
    /// Whether an artifact under the key was replaced.
    pub replaced: bool,
    /// Encoded bytes added to the store (0 when the content was there already).
    pub stored_bytes: u64,
    /// Chunks new to the store.
    pub new_chunks: u64,
}

impl From<&PutReport> for ArtifactStored {
    fn from(r: &PutReport) -> Self {
        ArtifactStored {
            artifact: Artifact::new(&r.artifact),
            replaced: r.replaced,
            stored_bytes: r.stored_bytes,
            new_chunks: r.new_chunks,
        }
    }
}
