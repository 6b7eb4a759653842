//! What a store check found (`verify --json`).

use serde::{Deserialize, Serialize};

use crate::verify::{Problem, VerifyReport};

/// One thing wrong in the store.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VerifyProblem {
    /// snapshot, tree, blob, chunk, tag or log.
    pub kind: String,
    /// The damaged or missing object's id (or name).
    pub id: String,
    /// What is wrong.
    pub what: String,
    /// What refers to it (a snapshot and path, a tag...).
    pub referrer: String,
}

impl From<&Problem> for VerifyProblem {
    fn from(p: &Problem) -> Self {
        VerifyProblem {
            kind: p.kind.to_string(),
            id: p.id.clone(),
            what: p.what.clone(),
            referrer: p.referrer.clone(),
        }
    }
}

/// What `verify` checked and found (`verify --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Verify {
    /// Whether content was hashed too (`--full`).
    pub full: bool,
    /// Whether nothing is wrong.
    pub ok: bool,
    /// Snapshots checked.
    pub snapshots: u64,
    /// Distinct trees checked.
    pub trees: u64,
    /// Distinct blobs checked.
    pub blobs: u64,
    /// Distinct chunks checked.
    pub chunks: u64,
    /// Bytes whose hash was checked (full mode).
    pub bytes_hashed: u64,
    /// Everything wrong.
    pub problems: Vec<VerifyProblem>,
    /// Snapshots that reach a problem (hex): restoring them fails in part.
    pub damaged_snapshots: Vec<String>,
    /// Tables of the store's database whose listing stopped at a damaged page.
    pub damaged_tables: Vec<String>,
    /// Whether the reference counts were compared with a full count (`--full`; not while
    /// they are stale: the next collection counts everything again).
    pub refcounts_checked: bool,
}

impl Verify {
    /// From a check's report (`full` as asked).
    pub fn new(r: &VerifyReport, full: bool) -> Self {
        Verify {
            full,
            ok: r.problems.is_empty(),
            snapshots: r.snapshots,
            trees: r.trees,
            blobs: r.blobs,
            chunks: r.chunks,
            bytes_hashed: r.bytes_hashed,
            problems: r.problems.iter().map(VerifyProblem::from).collect(),
            damaged_snapshots: r.damaged_snapshots.iter().map(|i| i.hex()).collect(),
            damaged_tables: r.damaged_tables.clone(),
            refcounts_checked: r.refcounts_checked,
        }
    }
}
