//! Artifacts: named blobs (patches, logs, build outputs) kept beside the snapshots.
//!
//! An artifact's content is an ordinary blob: stored whole below [`blob::CHUNK_THRESHOLD`],
//! cut by FastCDC above it, with the same chunk sizes as workspace files, so a log that is also
//! a workspace file, or a second upload of the same build output, costs nothing. The `artifacts`
//! table maps a key to the blob id plus size, creation time and metadata.
//!
//! Streaming: content is read from any `io::Read` without knowing its length. The first
//! [`blob::CHUNK_THRESHOLD`] bytes are buffered to decide between whole and chunked; beyond that
//! chunks are hashed, compressed and written in batches of about [`BATCH_BYTES`], each batch in
//! its own short write transaction. So memory stays bounded (a 2 GiB upload holds at most one
//! batch) and the store's write lock is never held while waiting on a slow pipe. A crash
//! mid-upload leaves only unreferenced chunks, which are harmless (the key is written last, in
//! the transaction that also writes the blob record).

use std::io::{self, Read};

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::Store;
use super::blob::{self, ChunkRef, Payload, SegmentWriter};
use super::tables::{ARTIFACTS, BLOBS, CHUNKS, SEGMENTS};
use crate::error::{Error, Result};
use crate::id::Id;

/// Longest key accepted, in bytes: long enough for paths and ids, short enough to list.
pub const MAX_KEY_LEN: usize = 255;

/// Encoded chunk bytes gathered before they are written in one transaction.
pub const BATCH_BYTES: usize = 8 << 20;

/// What the `artifacts` table holds for a key (private like the other records; the API hands
/// out [`Artifact`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ArtifactRecord {
    /// The content's blob id (BLAKE3 of the bytes).
    pub blob: Id,
    /// Content length in bytes.
    pub size: u64,
    /// When it was put, ns since the epoch.
    pub created_ns: i64,
    /// `--meta KEY=VALUE` pairs, in the order given.
    pub meta: Vec<(String, String)>,
}

impl ArtifactRecord {
    /// Decodes a stored record (`key` only names it in the error).
    pub fn decode(key: &str, bytes: &[u8]) -> Result<ArtifactRecord> {
        postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "artifact record",
            id: key.to_string(),
            why: e.to_string(),
        })
    }

    /// The stored encoding.
    pub fn encode(&self) -> Result<Vec<u8>> {
        super::encode("artifact record", self)
    }
}

/// An artifact: its key and what is stored for it (content blob, size, creation time,
/// metadata). Read with [`super::Reader::artifact`] and [`super::Reader::artifacts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    key: String,
    rec: ArtifactRecord,
}

impl Artifact {
    pub(crate) fn new(key: String, rec: ArtifactRecord) -> Self {
        Artifact { key, rec }
    }

    /// Decodes the stored record of `key`.
    pub(crate) fn decode(key: String, bytes: &[u8]) -> Result<Self> {
        let rec = ArtifactRecord::decode(&key, bytes)?;
        Ok(Artifact { key, rec })
    }

    /// The stored record, for the library's own use.
    pub(crate) fn record(&self) -> &ArtifactRecord {
        &self.rec
    }

    /// Its key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The content's blob id (BLAKE3 of the bytes).
    pub fn blob(&self) -> Id {
        self.rec.blob
    }

    /// Content length in bytes.
    pub fn size(&self) -> u64 {
        self.rec.size
    }

    /// When it was put, nanoseconds since the Unix epoch.
    pub fn created_ns(&self) -> i64 {
        self.rec.created_ns
    }

    /// Its metadata, `KEY=VALUE` pairs in the order given.
    pub fn meta_pairs(&self) -> &[(String, String)] {
        &self.rec.meta
    }

    /// Looks up a metadata value.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.rec
            .meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What `put` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PutReport {
    /// The artifact written.
    pub artifact: Artifact,
    /// Whether an existing artifact under the key was replaced.
    pub replaced: bool,
    /// Encoded bytes added to the store (0 when the content was already there).
    pub stored_bytes: u64,
    /// Chunks that were new to the store.
    pub new_chunks: u64,
}

/// Checks an artifact key: non-empty, at most [`MAX_KEY_LEN`] bytes, no control characters
/// (they would corrupt listings and terminals), no leading or trailing whitespace (easy to
/// type by accident, impossible to see).
pub fn validate_key(key: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::InvalidArtifactKey(
            key.escape_debug().to_string(),
            why.into(),
        ))
    };
    if key.is_empty() {
        return bad("it is empty");
    }
    if key.len() > MAX_KEY_LEN {
        return bad(&format!("it is longer than {MAX_KEY_LEN} bytes"));
    }
    if key.chars().any(char::is_control) {
        return bad("it contains a control character");
    }
    if key.trim() != key {
        return bad("it starts or ends with whitespace");
    }
    Ok(())
}

/// Stores the content read from `input` under `key`. An existing key is replaced only with
/// `force`; the check is repeated in the final transaction, so two concurrent puts of one key
/// without `force` cannot both win.
pub fn put(
    store: &Store,
    key: &str,
    input: &mut dyn Read,
    meta: Vec<(String, String)>,
    force: bool,
) -> Result<PutReport> {
    validate_key(key)?;
    if !force && store.reader()?.artifact(key)?.is_some() {
        return Err(Error::ArtifactExists(key.to_string()));
    }
    // Chunks found in the store are not stored again; a gc committing before `finish` could
    // delete them (see `crate::gc`), so `finish` checks the epoch.
    let epoch = store.reader()?.gc_epoch()?;
    let mut w = Writer::new(store, epoch);
    let mut head = Vec::new();
    input
        .take(blob::CHUNK_THRESHOLD)
        .read_to_end(&mut head)
        .map_err(|e| Error::io("<artifact input>", e))?;
    let (id, size) = if (head.len() as u64) < blob::CHUNK_THRESHOLD {
        let id = Id::of(&head);
        let size = head.len() as u64;
        w.whole = Some((id, size, blob::encode_payload(&head, 3)));
        (id, size)
    } else {
        let stream = io::Cursor::new(head).chain(input);
        let mut hasher = blake3::Hasher::new();
        let mut chunks = Vec::new();
        let mut size = 0u64;
        for chunk in blob::chunker(stream) {
            let chunk = chunk.map_err(|e| Error::io("<artifact input>", e))?;
            hasher.update(&chunk);
            size += chunk.len() as u64;
            let cref = ChunkRef {
                id: Id::of(&chunk),
                len: chunk.len() as u32,
            };
            chunks.push(cref);
            w.chunk(cref, &chunk)?;
        }
        let id = Id::from(hasher.finalize());
        w.chunked = Some((id, blob::encode_chunked(size, &chunks)));
        (id, size)
    };
    let record = ArtifactRecord {
        blob: id,
        size,
        created_ns: crate::files::now_ns(),
        meta,
    };
    let replaced = w.finish(key, &record, force)?;
    Ok(PutReport {
        artifact: Artifact::new(key.to_string(), record),
        replaced,
        stored_bytes: w.stored_bytes,
        new_chunks: w.new_chunks,
    })
}

/// Deletes the artifact `key`; returns whether it existed. Its blob stays in the store (it may
/// be shared with snapshots or other artifacts).
pub fn remove(store: &Store, key: &str) -> Result<bool> {
    validate_key(key)?;
    let txn = store.begin_write()?;
    let old = txn
        .open_table(ARTIFACTS)?
        .remove(key)?
        .map(|v| ArtifactRecord::decode(key, v.value()))
        .transpose()?;
    if let Some(old) = &old {
        super::refcount::Counts::open(&txn)?.sub(super::refcount::Obj::Blob, &old.blob)?;
    }
    super::refcount::seal(&txn)?;
    txn.commit()?;
    Ok(old.is_some())
}

/// Gathers encoded chunks and writes them in batches.
struct Writer<'s> {
    store: &'s Store,
    batch: Vec<(ChunkRef, Payload)>,
    batch_bytes: usize,
    /// A small artifact's single blob, written by `finish`.
    whole: Option<(Id, u64, Payload)>,
    /// A large artifact's blob record, written by `finish`.
    chunked: Option<(Id, Vec<u8>)>,
    stored_bytes: u64,
    new_chunks: u64,
    /// The gc epoch when the put started.
    epoch: u64,
}

impl<'s> Writer<'s> {
    fn new(store: &'s Store, epoch: u64) -> Writer<'s> {
        Writer {
            store,
            epoch,
            batch: Vec::new(),
            batch_bytes: 0,
            whole: None,
            chunked: None,
            stored_bytes: 0,
            new_chunks: 0,
        }
    }

    /// Queues a chunk unless the store already has it (checked on a fresh read view, and again
    /// in the write transaction, since another process may store it meanwhile).
    fn chunk(&mut self, c: ChunkRef, data: &[u8]) -> Result<()> {
        if self.store.reader()?.has_chunk(&c.id)? || self.batch.iter().any(|(b, _)| b.id == c.id) {
            return Ok(());
        }
        let payload = blob::encode_payload(data, 3);
        self.batch_bytes += payload.bytes.len();
        self.batch.push((c, payload));
        if self.batch_bytes >= BATCH_BYTES {
            let txn = self.store.begin_write()?;
            self.flush(&txn)?;
            // Chunks no record holds yet: uncounted until the blob record is stored.
            super::refcount::seal(&txn)?;
            txn.commit()?;
        }
        Ok(())
    }

    /// Writes the queued chunks into `txn`, through the segment log.
    fn flush(&mut self, txn: &WriteTransaction) -> Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let whole = self.whole.take();
        if batch.is_empty() && whole.is_none() {
            return Ok(());
        }
        let mut segments = txn.open_table(SEGMENTS)?;
        let next = super::next_segment(txn, &segments)?;
        let mut segw = SegmentWriter::new(next);
        let mut flush = |n: u64, data: &[u8]| -> Result<()> {
            segments.insert(n, data)?;
            Ok(())
        };
        {
            let mut chunks = txn.open_table(CHUNKS)?;
            for (c, payload) in &batch {
                if chunks.get(c.id.0)?.is_some() {
                    continue;
                }
                let span = segw.append(&payload.bytes, &mut flush)?;
                chunks.insert(
                    c.id.0,
                    blob::encode_chunk(c.len, payload.zstd, &span).as_slice(),
                )?;
                self.new_chunks += 1;
                self.stored_bytes += payload.bytes.len() as u64;
            }
        }
        if let Some((id, size, payload)) = whole {
            let mut blobs = txn.open_table(BLOBS)?;
            if blobs.get(id.0)?.is_none() {
                let span = segw.append(&payload.bytes, &mut flush)?;
                blobs.insert(
                    id.0,
                    blob::encode_whole(size, payload.zstd, &span).as_slice(),
                )?;
                self.stored_bytes += payload.bytes.len() as u64;
            }
        }
        let next = segw.finish(&mut flush)?;
        drop(segments);
        super::write_counter(txn, "next_segment", next)?;
        Ok(())
    }

    /// Writes what is left, the blob record and the key, in one transaction. Returns whether
    /// the key was replaced.
    fn finish(&mut self, key: &str, record: &ArtifactRecord, force: bool) -> Result<bool> {
        let txn = self.store.begin_write()?;
        self.flush(&txn)?;
        // A small artifact is stored whole in this transaction; a large one's chunks were
        // committed in batches or found stored, and a gc since may have deleted them.
        if crate::store::epoch_in(&txn)? != self.epoch
            && let Some((id, rec)) = &self.chunked
            && let blob::BlobRecord::Chunked { chunks, .. } = blob::decode_blob(id, rec)?
        {
            let table = txn.open_table(CHUNKS)?;
            for c in chunks {
                if table.get(c.id.0)?.is_none() {
                    return Err(Error::ConcurrentGc("artifact"));
                }
            }
        }
        if let Some((id, rec)) = self.chunked.take() {
            let mut blobs = txn.open_table(BLOBS)?;
            if blobs.get(id.0)?.is_none() {
                blobs.insert(id.0, rec.as_slice())?;
                self.stored_bytes += rec.len() as u64;
                drop(blobs);
                let held = super::refcount::held_chunks(
                    &id,
                    &blob::decode_blob(&id, &rec)?,
                    &txn.open_table(CHUNKS)?,
                    &txn.open_table(SEGMENTS)?,
                )?;
                super::refcount::Counts::open(&txn)?.add_chunks(&held)?;
            }
        }
        let (replaced, old) = {
            let mut table = txn.open_table(ARTIFACTS)?;
            let old = table
                .get(key)?
                .map(|v| ArtifactRecord::decode(key, v.value()))
                .transpose()?;
            if old.is_some() && !force {
                return Err(Error::ArtifactExists(key.to_string()));
            }
            table.insert(key, record.encode()?.as_slice())?;
            (old.is_some(), old)
        };
        {
            let mut counts = super::refcount::Counts::open(&txn)?;
            counts.add(super::refcount::Obj::Blob, &record.blob)?;
            if let Some(old) = old {
                counts.sub(super::refcount::Obj::Blob, &old.blob)?;
            }
        }
        super::refcount::seal(&txn)?;
        txn.commit()?;
        Ok(replaced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_validated() {
        for good in ["patch", "run/42/patch.diff", "a b", "é"] {
            assert!(validate_key(good).is_ok(), "{good}");
        }
        let long = "x".repeat(MAX_KEY_LEN + 1);
        for bad in ["", " a", "a ", "a\nb", "a\u{7f}", long.as_str()] {
            assert!(validate_key(bad).is_err(), "{bad:?}");
        }
    }
}
