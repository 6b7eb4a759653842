//! The watch daemon's token a workspace's stat cache was written at.
//!
//! A snapshot that asked the daemon before walking got a token: every change the daemon has not
//! reported under it happened after that moment. The snapshot records the token beside the stat
//! cache it writes, in the same transaction, so the next command asks the daemon "which
//! directories were touched since this token" and trusts the rest (see [`super::watch`] for
//! what trusting means, and `crate::daemon` for the daemon).
//!
//! Two rules keep this safe when snapshots race or a snapshot does not know about the daemon:
//! - A token is only recorded when the cache the snapshot loaded is still the stored one
//!   (`generation` unchanged): the stat cache is rewritten per directory, so a cache another
//!   process wrote meanwhile may hold entries older than this snapshot's token.
//! - Every snapshot that writes the cache bumps `generation`; one without a token of its own
//!   (no daemon) clears the token, since its cache entries have no daemon ordering.
//!
//! The record also keeps the directories holding files with other hard links: a write through
//! another name raises no event on them, so they are never trusted; a trusted directory is not
//! `lstat`ed, so its links could not be counted again.

use redb::{ReadableTable, WriteTransaction};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::store::Reader;
use crate::store::tables::WATCH_TOKENS;

/// A point in a daemon's journal: changes after it are reported to whoever holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Token {
    /// The daemon process's random id: a token from another run of the daemon means nothing.
    pub instance: u64,
    /// The journal's sequence number when the token was handed out.
    pub seq: u64,
}

/// What is stored per workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// Bumped by every snapshot that writes the stat cache.
    pub generation: u64,
    /// The daemon token the cache was written at, if the snapshot had one.
    pub token: Option<Token>,
    /// Directories holding files with other hard links at that snapshot.
    pub linked_dirs: Vec<Vec<u8>>,
    /// The ignore globs and size limit the cache was written with: a walk with other ones
    /// must read every directory (see `WalkOptions::prune`).
    pub scan: Option<(Vec<String>, Option<u64>)>,
}

/// The workspace's record (the default when none was written).
pub fn load(reader: &Reader, ws: u64) -> Result<TokenRecord> {
    let Some(table) = &reader.watch_tokens else {
        return Ok(TokenRecord::default());
    };
    match table.get(ws)? {
        // A damaged record only costs a full walk: it is never trusted.
        Some(v) => Ok(postcard::from_bytes(v.value()).unwrap_or_default()),
        None => Ok(TokenRecord::default()),
    }
}

/// Records, in the snapshot's transaction, the token its stat cache was written at. `loaded`
/// is the generation the snapshot read with its cache; `token` is None without a daemon.
pub fn record(
    txn: &WriteTransaction,
    ws: u64,
    loaded: u64,
    token: Option<Token>,
    linked_dirs: &FxHashSet<Vec<u8>>,
    scan: (Vec<String>, Option<u64>),
) -> Result<()> {
    let mut table = txn.open_table(WATCH_TOKENS)?;
    let current: TokenRecord = match table.get(ws)? {
        Some(v) => postcard::from_bytes(v.value()).unwrap_or_default(),
        None => TokenRecord::default(),
    };
    let mut linked: Vec<Vec<u8>> = linked_dirs.iter().cloned().collect();
    linked.sort();
    let next = TokenRecord {
        generation: current.generation + 1,
        token: token.filter(|_| current.generation == loaded),
        linked_dirs: linked,
        scan: Some(scan),
    };
    let bytes = crate::store::encode("watch token record", &next)?;
    table.insert(ws, bytes.as_slice())?;
    Ok(())
}
