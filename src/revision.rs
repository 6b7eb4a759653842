//! Revisions: the ways a user can name a snapshot.
//!
//! `@` is the workspace's latest snapshot, `@~N` the Nth before it, a tag names what it points
//! at, and a hex prefix of at least 4 digits names the one snapshot whose id starts with it.

use std::path::Path;

use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Reader;

pub use crate::store::tags::{MIN_PREFIX, validate_tag};

/// Resolves `rev` to a snapshot id. `workspace` is needed for `@` forms.
pub fn resolve(reader: &Reader, rev: &str, workspace: Option<&Path>) -> Result<Id> {
    if let Some(rest) = rev.strip_prefix('@') {
        let back: usize = if rest.is_empty() {
            0
        } else {
            rest.strip_prefix('~')
                .and_then(|n| {
                    if n.is_empty() {
                        Some(1)
                    } else {
                        n.parse().ok()
                    }
                })
                .ok_or_else(|| Error::UnknownRevision(rev.to_string()))?
        };
        let ws_path = workspace.ok_or_else(|| Error::NeedsWorkspace(rev.to_string()))?;
        let ws = reader
            .workspace(ws_path)?
            .ok_or_else(|| Error::NoSnapshots(ws_path.to_path_buf()))?;
        let history = reader.history(ws.id(), back.saturating_add(1))?;
        if history.is_empty() {
            return Err(Error::NoSnapshots(ws_path.to_path_buf()));
        }
        return history
            .get(back)
            .copied()
            .ok_or_else(|| Error::RevisionOutOfRange {
                rev: rev.to_string(),
                available: history.len(),
            });
    }
    if let Some(id) = reader.tag(rev)? {
        return Ok(id);
    }
    if rev.len() >= MIN_PREFIX && rev.chars().all(|c| c.is_ascii_hexdigit()) {
        let lower = rev.to_ascii_lowercase();
        let found = reader.snapshots_with_prefix(&lower, 6)?;
        return match found.as_slice() {
            [] => Err(Error::UnknownRevision(rev.to_string())),
            [one] => Ok(*one),
            many => Err(Error::AmbiguousRevision {
                prefix: rev.to_string(),
                candidates: many.iter().map(|i| i.short()).collect(),
            }),
        };
    }
    Err(Error::UnknownRevision(rev.to_string()))
}
