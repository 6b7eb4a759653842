//! Checking two snapshots against a contract (`check --json`), and the files a run kept in its
//! scratch directory (`scratch ls --json`'s rows).

use serde::{Deserialize, Serialize};

use super::{RunViolation, path_text};
use crate::artifact::Artifact;
use crate::id::Id;
use crate::run::CheckReport;

/// What checking the change between two snapshots against a contract found.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContractCheck {
    /// The snapshot before (hex).
    pub a: String,
    /// The snapshot after (hex).
    pub b: String,
    /// Whether nothing broke the contract.
    pub ok: bool,
    /// Whether the contract had any rule (without one, nothing can break it).
    pub rules: bool,
    /// The paths that broke it, sorted by path.
    pub violations: Vec<RunViolation>,
    /// The paths put back as they were in `a` (lossy UTF-8).
    pub reverted: Vec<String>,
    /// The restore operation that put them back, if any.
    pub op: Option<u64>,
}

impl ContractCheck {
    /// The check `r`; `rules` says whether its contract had any.
    pub fn new(r: &CheckReport, rules: bool) -> Self {
        ContractCheck {
            a: r.a.hex(),
            b: r.b.hex(),
            ok: r.violations.is_empty(),
            rules,
            violations: r.violations.iter().map(RunViolation::from).collect(),
            reverted: r.reverted.iter().map(|p| path_text(p)).collect(),
            op: r.op,
        }
    }
}

/// A file a run kept from its scratch directory.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScratchFile {
    /// Its path inside the scratch directory.
    pub path: String,
    /// Its length in bytes.
    pub size: u64,
    /// Its content's blob id (hex).
    pub id: String,
    /// The artifact key it is kept under.
    pub key: String,
}

impl ScratchFile {
    /// The file `path` of run `run`'s scratch directory, kept as `r`.
    pub fn new(run: &Id, path: &str, r: &Artifact) -> Self {
        ScratchFile {
            path: path.to_string(),
            size: r.size(),
            id: r.blob().hex(),
            key: format!("{}{path}", crate::scratch::prefix(run)),
        }
    }
}
