//! Applying a patch: what `apply --json` prints and the API's apply route answers.

use serde::{Deserialize, Serialize};

use super::EditedFile;
use crate::apply::{ApplyReport, FileOutcome};

/// Where one hunk of a file's patch went.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppliedHunk {
    /// The hunk's number in the file's patch, from 1.
    pub hunk: usize,
    /// Lines between where the header placed it and where it applied.
    pub offset: isize,
    /// Context lines left out at each end to make it apply.
    pub fuzz: usize,
}

/// A file a patch changed (or, with `check`, would change), and where each hunk went.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AppliedFile {
    /// The file, what was done to it (modify, create, delete, rename, copy, mode;
    /// already-applied, submodule) and its conflicts.
    #[serde(flatten)]
    pub file: EditedFile,
    /// Its hunks in the patch's order.
    pub hunks: Vec<AppliedHunk>,
}

impl From<&FileOutcome> for AppliedFile {
    fn from(f: &FileOutcome) -> Self {
        AppliedFile {
            file: EditedFile::from(f),
            hunks: f
                .hunks
                .iter()
                .map(|h| AppliedHunk {
                    hunk: h.index,
                    offset: h.offset,
                    fuzz: h.fuzz,
                })
                .collect(),
        }
    }
}

/// What applying a patch did, or with `check` would do (all files or none).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Applied {
    /// Whether this was only a check: nothing was written.
    pub check: bool,
    /// Whether the patch was written (not a check).
    pub applied: bool,
    /// Per file.
    pub files: Vec<AppliedFile>,
    /// The snapshot of the live tree taken first (the state undo goes back to); None for a
    /// check.
    pub before: Option<String>,
    /// The workspace's state afterwards.
    pub after: Option<String>,
    /// The operation recorded (what undo takes back).
    pub op: Option<u64>,
    /// Whether this finished an earlier apply of the same patch that was interrupted.
    pub resumed: bool,
}

impl Applied {
    /// From an apply's report (`check` as asked).
    pub fn new(r: &ApplyReport, check: bool) -> Self {
        Applied {
            check,
            applied: !check,
            files: r.files.iter().map(AppliedFile::from).collect(),
            before: r.before.map(|i| i.hex()),
            after: r.after.map(|i| i.hex()),
            op: r.op,
            resumed: r.resumed,
        }
    }
}
