//! `rewind check`: the changes between two snapshots against a file contract.

use std::path::Path;

use crate::compare::{DiffRequest, Rev, diff};
use crate::contract::{Checker, Contract, Violation, revert_paths};
use crate::error::Result;
use crate::files::RelPath;
use crate::id::Id;
use crate::progress::NoProgress;
use crate::restore::{OpInfo, RestoreOptions, restore};
use crate::store::Store;

/// What [`check`] found.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The snapshot before.
    pub a: Id,
    /// The snapshot after.
    pub b: Id,
    /// Violations, sorted by path.
    pub violations: Vec<Violation>,
    /// Paths put back to `a` (with `revert`).
    pub reverted: Vec<Vec<u8>>,
    /// The restore operation (with `revert` and violations).
    pub op: Option<u64>,
}

/// Checks the changes from `a` to `b` against a contract; with `revert_in`, puts the violating
/// paths of that workspace back to `a` (one undoable operation).
pub fn check(
    store: &Store,
    a: Id,
    b: Id,
    contract: &Contract,
    revert_in: Option<&Path>,
) -> Result<CheckReport> {
    let checker = Checker::new(contract)?;
    let d = diff(
        store,
        Rev::Snapshot(a),
        Rev::Snapshot(b),
        None,
        &DiffRequest::default(),
    )?;
    let violations = checker.check(&d.changes);
    drop(d);
    let mut report = CheckReport {
        a,
        b,
        violations,
        reverted: Vec::new(),
        op: None,
    };
    if let (Some(root), false) = (revert_in, report.violations.is_empty()) {
        let paths = revert_paths(&report.violations);
        let r = restore(
            store,
            root,
            a,
            &RestoreOptions {
                paths: paths.clone(),
                force: true,
                ..RestoreOptions::default()
            },
            &OpInfo {
                kind: "check-revert".into(),
                reverses: None,
                undoable: true,
            },
            &NoProgress,
        )?;
        report.reverted = paths.into_iter().map(RelPath::into_bytes).collect();
        report.op = r.op;
    }
    Ok(report)
}
