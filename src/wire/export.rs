//! Export and find: what `export -o FILE --json` and `find --json` print.

use serde::{Deserialize, Serialize};

use super::{path_bytes, path_text, time_text};
use crate::export::{ExportReport, Format};
use crate::find::{Found, Version};
use crate::id::Id;

/// A snapshot written as an archive (`export -o FILE --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Exported {
    /// The snapshot (hex).
    pub snapshot: String,
    /// The archive's format (`tar`, `zip`...).
    pub format: String,
    /// Files written.
    pub files: u64,
    /// Symbolic links written.
    pub symlinks: u64,
    /// Directories written.
    pub dirs: u64,
    /// Bytes of content written.
    pub bytes: u64,
}

impl Exported {
    /// The report of exporting snapshot `id` as `format`.
    pub fn new(id: &Id, format: Format, r: &ExportReport) -> Self {
        Exported {
            snapshot: id.hex(),
            format: format.name().to_string(),
            files: r.files,
            symlinks: r.symlinks,
            dirs: r.dirs,
            bytes: r.bytes,
        }
    }
}

/// One content a path had, and the snapshots that held it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FoundVersion {
    /// `file`, `executable`, `symlink` or `dir`.
    pub kind: String,
    /// Its blob or tree (hex).
    pub id: String,
    /// Its size.
    pub size: u64,
    /// The first snapshot that held it (hex).
    pub first: String,
    /// When that was taken (RFC 3339).
    pub first_time: String,
    /// The last snapshot that held it (hex).
    pub last: String,
    /// When that was taken.
    pub last_time: String,
    /// How many snapshots held it.
    pub snapshots: usize,
}

impl From<&Version> for FoundVersion {
    fn from(v: &Version) -> Self {
        FoundVersion {
            kind: v.kind.name().to_string(),
            id: v.id.hex(),
            size: v.size,
            first: v.first.0.hex(),
            first_time: time_text(v.first.1),
            last: v.last.0.hex(),
            last_time: time_text(v.last.1),
            snapshots: v.snapshots,
        }
    }
}

/// A path `find` matched (`find --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FoundPath {
    /// The path.
    pub path: String,
    /// Its exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// Each content it had, oldest first.
    pub versions: Vec<FoundVersion>,
}

impl From<&Found> for FoundPath {
    fn from(f: &Found) -> Self {
        FoundPath {
            path: path_text(&f.path),
            path_bytes: path_bytes(&f.path),
            versions: f.versions.iter().map(FoundVersion::from).collect(),
        }
    }
}
