//! Not part of the API: the on-disk decoders and encoders, the scan and the pending-write
//! journal, reachable from outside the crate only for the fuzz target, the decoder property
//! tests, crash-simulation tests and `examples/walkbench.rs`. Anything here may change or go
//! away in any release; an embedder uses the crate root and the public modules.

pub use crate::remote::pack::{Entry as PackEntry, Index as PackIndex, ObjKind};
pub use crate::scan::statcache::{DirView, EntryView};
pub use crate::scan::{
    CacheEntry, DirCache, EntryType, Opaque, Stat, StatCache, Subtree, Trust, Untrusted, WalkEntry,
    WalkOptions, WalkOutput, walk,
};
pub use crate::store::blob::{
    BlobRecord, ChunkRecord, ChunkRef, Span, decode_blob, decode_chunk, encode_chunk,
    encode_chunked, encode_whole,
};
pub use crate::store::pending::{PendingWrite, begin as begin_pending};

use crate::error::Result;
use crate::id::Id;
use crate::store::snapshot::{Snapshot, SnapshotRecord};

/// Decodes a stored snapshot record as the snapshot `id`.
pub fn decode_snapshot(id: &Id, bytes: &[u8]) -> Result<Snapshot> {
    Ok(Snapshot::new(*id, SnapshotRecord::decode(id, bytes)?))
}

/// Decodes a stored overlay record (any of its layouts) as the overlay `id`.
pub fn decode_overlay(id: u64, bytes: &[u8]) -> Result<crate::overlay::Overlay> {
    crate::overlay::OverlayRecord::decode(id, bytes).map(crate::overlay::Overlay::new)
}

/// Decodes a stored operation record (of its current layout or the one before `actor`).
pub fn decode_op(bytes: &[u8]) -> Result<crate::store::oplog::Operation> {
    crate::store::oplog::OpRecord::decode(bytes).map(crate::store::oplog::Operation::new)
}

/// A snapshot's stored encoding (its hash is the snapshot id).
pub fn encode_snapshot(s: &Snapshot) -> Result<Vec<u8>> {
    s.record().encode()
}

/// Decodes a stored artifact record (from the store or a remote) as the artifact `key`.
pub fn decode_artifact(key: &str, bytes: &[u8]) -> Result<crate::Artifact> {
    crate::Artifact::decode(key.to_string(), bytes)
}

/// An artifact's stored encoding.
pub fn encode_artifact(a: &crate::Artifact) -> Result<Vec<u8>> {
    a.record().encode()
}
