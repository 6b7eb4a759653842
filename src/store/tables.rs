//! The redb tables that make up a store, in one place so the on-disk layout can be read at a
//! glance. Every value that is not a raw byte format of its own (blobs, chunks) is postcard.
//!
//! Invariants:
//! - An id key always equals the BLAKE3 hash of what it names (a blob's bytes, a chunk's bytes,
//!   a tree's encoding, a snapshot record's encoding); `verify --full` checks it.
//! - A blob or chunk record's span lies inside segments that exist and are long enough.
//! - Everything a committed snapshot references (trees, blobs, chunks) was inserted in the same
//!   or an earlier committed transaction.
//! - The stat cache only names blob and tree ids that are in the store.

use redb::TableDefinition;

/// Store-wide facts: schema version, store id, creation time, id counters.
pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// Segment number -> up to [`super::blob::SEGMENT_SIZE`] bytes of the log that holds every
/// blob's and chunk's encoded bytes (see [`super::blob`] for why).
pub const SEGMENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("segments");
/// Blob id -> blob record (see [`super::blob`]).
pub const BLOBS: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("blobs");
/// Chunk id -> encoded chunk (see [`super::blob`]).
pub const CHUNKS: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("chunks");
/// Tree id -> postcard-encoded [`super::tree::Tree`].
pub const TREES: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("trees");
/// Snapshot id -> postcard-encoded [`super::snapshot::SnapshotRecord`].
pub const SNAPSHOTS: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("snapshots");
/// Canonical workspace path (raw bytes) -> postcard-encoded workspace record.
pub const WORKSPACES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("workspaces");
/// (workspace id, sequence number) -> snapshot id: each workspace's history in order.
pub const WS_LOG: TableDefinition<(u64, u64), [u8; 32]> = TableDefinition::new("ws_log");
/// Tag name -> snapshot id.
pub const REFS: TableDefinition<&str, [u8; 32]> = TableDefinition::new("refs");
/// (workspace id, directory path relative to the workspace) -> postcard-encoded directory
/// stat cache. One value per directory so a warm snapshot reads the whole cache with a single
/// range scan and rewrites only directories that changed.
pub const STAT_CACHE: TableDefinition<(u64, &[u8]), &[u8]> = TableDefinition::new("stat_cache");
/// Operation id -> postcard-encoded [`super::oplog::OpRecord`].
pub const OPLOG: TableDefinition<u64, &[u8]> = TableDefinition::new("oplog");
/// Artifact key (validated UTF-8, see [`super::artifact::validate_key`]) -> postcard-encoded
/// [`super::artifact::ArtifactRecord`]. The content is an ordinary blob, so artifacts share
/// deduplication and chunking with workspace files. Stores made before artifacts existed lack
/// this table until the first `artifact put` creates it; readers treat it as empty.
pub const ARTIFACTS: TableDefinition<&str, &[u8]> = TableDefinition::new("artifacts");
/// Canonical workspace path -> postcard-encoded [`super::pending::PendingWrite`]: a multi-file
/// write (apply, revert) that began and has not finished. Created on first use.
pub const PENDING: TableDefinition<&[u8], &[u8]> = TableDefinition::new("pending");
/// Overlay id -> postcard-encoded [`crate::overlay::OverlayRecord`]: an isolated view of a
/// workspace (its files live in the store directory's `overlays/<id>/`). Created on first use;
/// readers treat a missing table as empty.
pub const OVERLAYS: TableDefinition<u64, &[u8]> = TableDefinition::new("overlays");
/// Workspace id -> postcard-encoded [`crate::scan::token::TokenRecord`]: the watch daemon's
/// token the stat cache was written at (see [`crate::scan::token`]). Created on first use;
/// readers treat a missing table as empty.
pub const WATCH_TOKENS: TableDefinition<u64, &[u8]> = TableDefinition::new("watch_tokens");
/// Dictionary id -> a zstd dictionary's bytes, as zstd's trainer made them (see
/// [`super::dict`]). Blob records of kind 0x03 name a row. Created on first use (by gc);
/// readers treat a missing table as empty.
pub const DICTS: TableDefinition<u32, &[u8]> = TableDefinition::new("dicts");
/// Tree id -> how many references to it the store holds: snapshot records (their root),
/// trees (an entry each) and stat cache rows (the row's tree). Absent when none (see
/// [`super::refcount`]).
pub const TREE_REFS: TableDefinition<[u8; 32], u64> = TableDefinition::new("tree_refs");
/// Blob id -> references to it: tree entries and artifact records.
pub const BLOB_REFS: TableDefinition<[u8; 32], u64> = TableDefinition::new("blob_refs");
/// Chunk id -> references to it: chunked blob records (their chunks and, paged, their pages
/// and the chunks the pages list).
pub const CHUNK_REFS: TableDefinition<[u8; 32], u64> = TableDefinition::new("chunk_refs");
/// (kind, id) of an object whose count fell to zero: what the next collection deletes, unless
/// a reference came back since (kind 0 a tree, 1 a blob, 2 a chunk).
pub const UNREFERENCED: TableDefinition<(u8, [u8; 32]), ()> = TableDefinition::new("unreferenced");
/// A group frame's (segment, offset) -> how many blob records name it: at zero the frame's
/// bytes are dead (see [`super::refcount`]).
pub const GROUP_REFS: TableDefinition<(u64, u32), u64> = TableDefinition::new("group_refs");
/// Segment -> bytes in it known to be dead (freed by a collection since the segment was
/// written or last counted): what lets a collection delete a dead segment, or find a sparse
/// one, without reading every record.
pub const SEGMENT_DEAD: TableDefinition<u64, u64> = TableDefinition::new("segment_dead");
