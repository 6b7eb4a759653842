//! Read access: one consistent view of the store (a redb read transaction) with its tables open.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};
use rustc_hash::FxHashMap;

use super::blob::{self, BlobRecord, ChunkRef, Span};
use super::snapshot::{Snapshot, SnapshotRecord, Workspace};
use super::tables::*;
use super::tree::{Kind, Tree, TreeEntry};
use crate::error::{Error, Result};
use crate::id::Id;

/// A read view of the store. Cheap to create; every read through one sees the same state.
pub struct Reader {
    blobs: ReadOnlyTable<[u8; 32], &'static [u8]>,
    chunks: ReadOnlyTable<[u8; 32], &'static [u8]>,
    trees: ReadOnlyTable<[u8; 32], &'static [u8]>,
    snapshots: ReadOnlyTable<[u8; 32], &'static [u8]>,
    workspaces: ReadOnlyTable<&'static [u8], &'static [u8]>,
    ws_log: ReadOnlyTable<(u64, u64), [u8; 32]>,
    refs: ReadOnlyTable<&'static str, [u8; 32]>,
    pub(crate) stat_cache: ReadOnlyTable<(u64, &'static [u8]), &'static [u8]>,
    oplog: ReadOnlyTable<u64, &'static [u8]>,
    segments: ReadOnlyTable<u64, &'static [u8]>,
    meta: ReadOnlyTable<&'static str, &'static [u8]>,
    /// None in a store made before artifacts existed (the table is created on first use).
    artifacts: Option<ReadOnlyTable<&'static str, &'static [u8]>>,
    /// None until the first overlay is created.
    overlays: Option<ReadOnlyTable<u64, &'static [u8]>>,
    /// None until a snapshot first records a watch token.
    pub(crate) watch_tokens: Option<ReadOnlyTable<u64, &'static [u8]>>,
    /// None until gc first trains a dictionary.
    dicts: Option<ReadOnlyTable<u32, &'static [u8]>>,
    /// The dictionaries this view has needed, prepared once each.
    dictionaries: super::dict::Dictionaries,
    /// The groups this view decompressed last.
    groups: super::group::GroupCache,
}

impl Reader {
    pub(crate) fn new(txn: ReadTransaction) -> Result<Reader> {
        Ok(Reader {
            blobs: txn.open_table(BLOBS)?,
            chunks: txn.open_table(CHUNKS)?,
            trees: txn.open_table(TREES)?,
            snapshots: txn.open_table(SNAPSHOTS)?,
            workspaces: txn.open_table(WORKSPACES)?,
            ws_log: txn.open_table(WS_LOG)?,
            refs: txn.open_table(REFS)?,
            stat_cache: txn.open_table(STAT_CACHE)?,
            oplog: txn.open_table(OPLOG)?,
            segments: txn.open_table(SEGMENTS)?,
            meta: txn.open_table(META)?,
            artifacts: match txn.open_table(ARTIFACTS) {
                Ok(t) => Some(t),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            },
            overlays: match txn.open_table(OVERLAYS) {
                Ok(t) => Some(t),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            },
            watch_tokens: match txn.open_table(WATCH_TOKENS) {
                Ok(t) => Some(t),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            },
            dicts: match txn.open_table(DICTS) {
                Ok(t) => Some(t),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            },
            dictionaries: Default::default(),
            groups: Default::default(),
        })
    }

    /// Every overlay record as stored: (id, encoded record).
    pub fn overlay_records(&self) -> Result<Vec<(u64, Vec<u8>)>> {
        let Some(t) = &self.overlays else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for item in t.iter()? {
            let (k, v) = item?;
            out.push((k.value(), v.value().to_vec()));
        }
        Ok(out)
    }

    /// One overlay's stored record, if it exists.
    pub fn overlay_record(&self, id: u64) -> Result<Option<Vec<u8>>> {
        let Some(t) = &self.overlays else {
            return Ok(None);
        };
        Ok(t.get(id)?.map(|v| v.value().to_vec()))
    }

    /// Operations, newest first, optionally for one workspace (canonical path bytes).
    pub fn ops(
        &self,
        workspace: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<super::oplog::Operation>> {
        Ok(super::oplog::list(&self.oplog, workspace, limit)?
            .into_iter()
            .map(super::oplog::Operation::new)
            .collect())
    }

    /// Space used by each table: (name, entries, stored bytes, metadata bytes, fragmented
    /// bytes, pages). Where the bytes of a store go.
    pub fn table_stats(&self) -> Result<Vec<TableUsage>> {
        use redb::ReadableTableMetadata;
        fn usage(name: &'static str, t: &impl ReadableTableMetadata) -> Result<TableUsage> {
            let s = t.stats()?;
            Ok(TableUsage {
                name,
                entries: t.len()?,
                stored_bytes: s.stored_bytes(),
                metadata_bytes: s.metadata_bytes(),
                fragmented_bytes: s.fragmented_bytes(),
                pages: s.leaf_pages() + s.branch_pages(),
            })
        }
        Ok(vec![
            usage("segments", &self.segments)?,
            usage("blobs", &self.blobs)?,
            usage("chunks", &self.chunks)?,
            usage("trees", &self.trees)?,
            usage("snapshots", &self.snapshots)?,
            usage("stat_cache", &self.stat_cache)?,
            usage("oplog", &self.oplog)?,
            usage("ws_log", &self.ws_log)?,
            usage("workspaces", &self.workspaces)?,
            usage("refs", &self.refs)?,
        ])
    }

    /// What the content objects hold: distinct content bytes (each blob stored whole, each
    /// chunk once) and the encoded bytes they take in the segment log.
    pub fn content_totals(&self) -> Result<ContentTotals> {
        let mut t = ContentTotals::default();
        let mut by_dict: FxHashMap<u32, DictUsage> = self
            .dictionaries()?
            .into_iter()
            .map(|(id, len)| {
                let usage = DictUsage {
                    id,
                    dict_bytes: len as u64,
                    ..DictUsage::default()
                };
                (id, usage)
            })
            .collect();
        let mut groups: rustc_hash::FxHashSet<(u64, u32)> = Default::default();
        for item in self.blobs.iter()? {
            let (k, v) = item?;
            t.blobs += 1;
            let record = blob::decode_blob(&Id(k.value()), v.value())?;
            if let BlobRecord::Grouped { size, span, .. } = record {
                t.content_bytes += size;
                t.grouped_blobs += 1;
                // Every member names the group's span: its bytes count once.
                if groups.insert((span.segment, span.offset)) {
                    t.groups += 1;
                    t.encoded_bytes += u64::from(span.len);
                }
            } else if let BlobRecord::Whole {
                size, span, dict, ..
            } = record
            {
                t.content_bytes += size;
                t.encoded_bytes += u64::from(span.len);
                if let Some(d) = dict {
                    // A record naming a dictionary that is gone shows with size 0 (and
                    // `verify` reports the blob).
                    let u = by_dict.entry(d).or_insert_with(|| DictUsage {
                        id: d,
                        ..DictUsage::default()
                    });
                    u.blobs += 1;
                    u.content_bytes += size;
                    u.encoded_bytes += u64::from(span.len);
                }
            }
        }
        t.dictionaries = by_dict.into_values().collect();
        t.dictionaries.sort_by_key(|u| u.id);
        for item in self.chunks.iter()? {
            let (k, v) = item?;
            let rec = blob::decode_chunk(&Id(k.value()), v.value())?;
            t.chunks += 1;
            t.content_bytes += u64::from(rec.len);
            t.encoded_bytes += u64::from(rec.span.len);
        }
        Ok(t)
    }

    /// The stored bytes of a tree, not decoded (for `verify`).
    pub fn tree_raw(&self, id: &Id) -> Result<Option<Vec<u8>>> {
        Ok(self.trees.get(id.0)?.map(|v| v.value().to_vec()))
    }

    /// The stored bytes of a snapshot record, not decoded (for `verify`).
    pub fn snapshot_raw(&self, id: &Id) -> Result<Option<Vec<u8>>> {
        Ok(self.snapshots.get(id.0)?.map(|v| v.value().to_vec()))
    }

    /// A blob's record, decoded.
    pub fn blob_record(&self, id: &Id) -> Result<Option<BlobRecord>> {
        match self.blobs.get(id.0)? {
            Some(v) => Ok(Some(blob::decode_blob(id, v.value())?)),
            None => Ok(None),
        }
    }

    /// A chunk's record, decoded.
    pub fn chunk_record(&self, id: &Id) -> Result<Option<blob::ChunkRecord>> {
        match self.chunks.get(id.0)? {
            Some(v) => Ok(Some(blob::decode_chunk(id, v.value())?)),
            None => Ok(None),
        }
    }

    /// The length of every segment, by number.
    pub fn segment_lengths(&self) -> Result<rustc_hash::FxHashMap<u64, usize>> {
        let mut out = rustc_hash::FxHashMap::default();
        for item in self.segments.iter()? {
            let (k, v) = item?;
            out.insert(k.value(), v.value().len());
        }
        Ok(out)
    }

    /// Every workspace's log entries: (workspace id, sequence, snapshot).
    pub fn ws_log_entries(&self) -> Result<Vec<(u64, u64, Id)>> {
        let mut out = Vec::new();
        for item in self.ws_log.iter()? {
            let (k, v) = item?;
            let (ws, seq) = k.value();
            out.push((ws, seq, Id(v.value())));
        }
        Ok(out)
    }

    /// Whether a blob is stored.
    pub fn has_blob(&self, id: &Id) -> Result<bool> {
        Ok(self.blobs.get(id.0)?.is_some())
    }

    /// Whether a chunk is stored.
    pub fn has_chunk(&self, id: &Id) -> Result<bool> {
        Ok(self.chunks.get(id.0)?.is_some())
    }

    /// Whether a tree is stored.
    pub fn has_tree(&self, id: &Id) -> Result<bool> {
        Ok(self.trees.get(id.0)?.is_some())
    }

    /// Reads and decodes a tree.
    pub fn tree(&self, id: &Id) -> Result<Tree> {
        let v = self.trees.get(id.0)?.ok_or_else(|| Error::Missing {
            kind: "tree",
            id: id.hex(),
        })?;
        Tree::decode(id, v.value())
    }

    /// Reads a snapshot.
    pub fn snapshot(&self, id: &Id) -> Result<Snapshot> {
        Ok(Snapshot::new(*id, self.snapshot_record(id)?))
    }

    /// Reads a snapshot's stored record.
    pub(crate) fn snapshot_record(&self, id: &Id) -> Result<SnapshotRecord> {
        let v = self.snapshots.get(id.0)?.ok_or_else(|| Error::Missing {
            kind: "snapshot",
            id: id.hex(),
        })?;
        SnapshotRecord::decode(id, v.value())
    }

    /// The uncompressed size of a blob.
    pub fn blob_size(&self, id: &Id) -> Result<u64> {
        let v = self.blobs.get(id.0)?.ok_or_else(|| Error::Missing {
            kind: "blob",
            id: id.hex(),
        })?;
        Ok(blob::decode_blob(id, v.value())?.size())
    }

    /// Where a blob's bytes start in the segment log: (segment, offset, offset in its group).
    /// Reading many blobs in this order reads each group once (the reader keeps the last few
    /// decompressed); in id order, which is random, every member would decompress its group
    /// again. Chunked and missing blobs sort last.
    pub fn blob_location(&self, id: &Id) -> (u64, u32, u32) {
        let record = self
            .blobs
            .get(id.0)
            .ok()
            .flatten()
            .map(|v| blob::decode_blob(id, v.value()));
        match record {
            Some(Ok(BlobRecord::Whole { span, .. })) => (span.segment, span.offset, 0),
            Some(Ok(BlobRecord::Grouped { span, skip, .. })) => (span.segment, span.offset, skip),
            _ => (u64::MAX, 0, 0),
        }
    }

    /// Reads a whole blob into memory. For large blobs prefer [`Reader::blob_reader`].
    pub fn read_blob(&self, id: &Id) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_blob(id, &mut out)?;
        Ok(out)
    }

    /// Streams a blob's bytes into `out`, one chunk in memory at a time.
    pub fn write_blob(&self, id: &Id, out: &mut dyn io::Write) -> Result<u64> {
        let mut reader = self.blob_reader(id)?;
        io::copy(&mut reader, out).map_err(|e| {
            // A store error carried through io::copy comes out as itself; a write error keeps
            // its kind (a closed pipe is not a failure to the CLI).
            if e.get_ref().is_some_and(|i| i.is::<Error>()) {
                match e.into_inner().map(|i| i.downcast::<Error>()) {
                    Some(Ok(err)) => *err,
                    _ => Error::io("<output>", io::Error::other("write failed")),
                }
            } else {
                Error::io("<output>", e)
            }
        })
    }

    /// A streaming reader over a blob.
    pub fn blob_reader(&self, id: &Id) -> Result<BlobReader<'_>> {
        let v = self.blobs.get(id.0)?.ok_or_else(|| Error::Missing {
            kind: "blob",
            id: id.hex(),
        })?;
        let (current, chunks) = match blob::decode_blob(id, v.value())? {
            BlobRecord::Whole {
                size,
                zstd,
                dict,
                span,
            } => {
                let stored = self.read_span("blob", id, &span)?;
                let ddict = match dict {
                    Some(d) => Some(self.dictionaries.get(self.dicts.as_ref(), d, id)?),
                    None => None,
                };
                let bytes = blob::inflate_with("blob", id, zstd, ddict.as_deref(), size, stored)?;
                (checked(id, bytes)?, Vec::new())
            }
            BlobRecord::Grouped {
                size, span, skip, ..
            } => {
                let group = self.group(id, &span)?;
                let bytes = super::group::member(&group, id, skip, size)?.to_vec();
                (checked(id, bytes)?, Vec::new())
            }
            BlobRecord::Chunked { chunks, .. } => (Vec::new(), chunks),
            BlobRecord::Paged { pages, .. } => (Vec::new(), self.read_pages(id, &pages)?),
        };
        Ok(BlobReader {
            reader: self,
            current,
            pos: 0,
            chunks,
            next: 0,
        })
    }

    /// Streams the content of `chunks` in order: a chunked blob's content before its record is
    /// stored (each chunk is checked against its id as it is read; the whole, against the
    /// blob's id, is the caller's to check).
    #[cfg(feature = "remote")]
    pub(crate) fn chunks_reader(&self, chunks: Vec<ChunkRef>) -> BlobReader<'_> {
        BlobReader {
            reader: self,
            current: Vec::new(),
            pos: 0,
            chunks,
            next: 0,
        }
    }

    /// The chunks of blob `id`, whose chunk list is in `pages`, in order.
    pub fn read_pages(&self, id: &Id, pages: &[ChunkRef]) -> Result<Vec<ChunkRef>> {
        blob::read_pages(id, pages, &self.chunks, &self.segments)
    }

    /// The decompressed group at `span`, which blob `id` is in.
    pub(crate) fn group(&self, id: &Id, span: &Span) -> Result<std::sync::Arc<Vec<u8>>> {
        self.groups.get(span, || {
            super::group::decode_frame("blob", id, self.read_span("blob", id, span)?)
        })
    }

    /// Reads one chunk's bytes.
    pub fn read_chunk(&self, c: &ChunkRef) -> Result<Vec<u8>> {
        let v = self.chunks.get(c.id.0)?.ok_or_else(|| Error::Missing {
            kind: "chunk",
            id: c.id.hex(),
        })?;
        let rec = blob::decode_chunk(&c.id, v.value())?;
        if rec.len != c.len {
            return Err(Error::Corrupt {
                kind: "chunk",
                id: c.id.hex(),
                why: "length differs from its blob record".into(),
            });
        }
        let stored = self.read_span("chunk", &c.id, &rec.span)?;
        let bytes = blob::inflate("chunk", &c.id, rec.zstd, u64::from(rec.len), stored)?;
        if Id::of(&bytes) != c.id {
            return Err(Error::Corrupt {
                kind: "chunk",
                id: c.id.hex(),
                why: "content does not match its id".into(),
            });
        }
        Ok(bytes)
    }

    /// The ids and sizes of the store's dictionaries (for `stats` and `verify`).
    pub fn dictionaries(&self) -> Result<Vec<(u32, usize)>> {
        let Some(t) = &self.dicts else {
            return Ok(Vec::new());
        };
        t.iter()?
            .map(|item| {
                let (k, v) = item?;
                Ok((k.value(), v.value().len()))
            })
            .collect()
    }

    /// Copies the stored bytes at `span` out of the segment log.
    pub(crate) fn read_span(&self, kind: &'static str, id: &Id, span: &Span) -> Result<Vec<u8>> {
        blob::read_span(&self.segments, kind, id, span)
    }

    /// A counter in the `meta` table (0 when unset).
    pub fn counter(&self, name: &str) -> Result<u64> {
        Ok(self
            .meta
            .get(name)?
            .and_then(|v| v.value().try_into().ok().map(u64::from_le_bytes))
            .unwrap_or(0))
    }

    /// The store's random id, made when it was created (None in a store older than it).
    pub fn store_id(&self) -> Result<Option<Id>> {
        Ok(self
            .meta
            .get("store_id")?
            .and_then(|v| <[u8; 32]>::try_from(v.value()).ok())
            .map(Id))
    }

    /// The gc epoch this view saw (see [`crate::gc`]).
    pub fn gc_epoch(&self) -> Result<u64> {
        self.counter("gc_epoch")
    }

    /// Finds the entry at `path` (relative, '/'-separated; empty for the root) below the tree
    /// `root`. The root itself comes back as a directory entry with an empty name.
    pub fn lookup(&self, root: &Id, path: &[u8]) -> Result<Option<TreeEntry>> {
        let mut current = TreeEntry {
            name: Vec::new(),
            kind: Kind::Dir,
            id: *root,
            size: 0,
        };
        for comp in path
            .split(|&b| b == b'/')
            .filter(|c| !c.is_empty() && *c != b".")
        {
            if current.kind != Kind::Dir {
                return Ok(None);
            }
            let tree = self.tree(&current.id)?;
            match tree.get(comp) {
                Some(e) => current = e.clone(),
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// Calls `f(path, entry)` for every entry below the tree `root` in path order, descending
    /// into directories when `recursive`. `prefix` is prepended to the paths.
    pub fn walk_tree(
        &self,
        root: &Id,
        prefix: &[u8],
        recursive: bool,
        f: &mut dyn FnMut(&[u8], &TreeEntry) -> Result<()>,
    ) -> Result<()> {
        let tree = self.tree(root)?;
        for e in &tree.entries {
            let path = crate::files::child_path(prefix, &e.name);
            f(&path, e)?;
            if recursive && e.kind == Kind::Dir {
                self.walk_tree(&e.id, &path, true, f)?;
            }
        }
        Ok(())
    }

    /// Looks up a workspace by canonical path.
    pub fn workspace(&self, root: &Path) -> Result<Option<Workspace>> {
        match self.workspaces.get(root.as_os_str().as_bytes())? {
            Some(v) => Ok(Some(Workspace::new(super::decode_workspace(v.value())?))),
            None => Ok(None),
        }
    }

    /// The workspace at `root`, which must have been snapshotted: else
    /// [`Error::NoSnapshots`], the error every command reading a workspace's history gives.
    pub fn snapshotted_workspace(&self, root: &Path) -> Result<Workspace> {
        self.workspace(root)?
            .ok_or_else(|| crate::Error::NoSnapshots(root.to_path_buf()))
    }

    /// All registered workspaces.
    pub fn workspaces(&self) -> Result<Vec<Workspace>> {
        let mut out = Vec::new();
        for item in self.workspaces.iter()? {
            let (_, v) = item?;
            out.push(Workspace::new(super::decode_workspace(v.value())?));
        }
        Ok(out)
    }

    /// A workspace's snapshots, newest first, at most `limit`. An entry whose snapshot is gone
    /// (left by an older version when a forget raced a restore) counts as forgotten: skipped.
    pub fn history(&self, ws: u64, limit: usize) -> Result<Vec<Id>> {
        let mut out = Vec::new();
        for item in self.ws_log.range((ws, 0)..=(ws, u64::MAX))?.rev() {
            if out.len() >= limit {
                break;
            }
            let id = Id(item?.1.value());
            if self.snapshots.get(id.0)?.is_some() {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// A workspace's snapshots for `log`: each once, newest first by the time it was taken, at
    /// most `limit`. The history itself repeats a snapshot that a restore or undo returned to,
    /// and is in the order states were reached, not taken.
    pub fn snapshot_log(&self, ws: u64, limit: usize) -> Result<Vec<Snapshot>> {
        Ok(self
            .snapshot_records(ws, limit)?
            .into_iter()
            .map(|(id, rec)| Snapshot::new(id, rec))
            .collect())
    }

    /// [`Self::snapshot_log`] as stored records, for the library's own use.
    pub(crate) fn snapshot_records(
        &self,
        ws: u64,
        limit: usize,
    ) -> Result<Vec<(Id, SnapshotRecord)>> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        for id in self.history(ws, usize::MAX)? {
            if seen.insert(id) {
                let rec = self.snapshot_record(&id)?;
                out.push((id, rec));
            }
        }
        out.sort_by_key(|e| std::cmp::Reverse(e.1.time_ns));
        out.truncate(limit);
        Ok(out)
    }

    /// Every blob id stored, in id order (what `stats` counts).
    pub fn blob_ids(&self) -> Result<Vec<Id>> {
        table_keys(&self.blobs)
    }

    /// Every chunk id stored, in id order.
    pub fn chunk_ids(&self) -> Result<Vec<Id>> {
        table_keys(&self.chunks)
    }

    /// Every tree id stored, in id order.
    pub fn tree_ids(&self) -> Result<Vec<Id>> {
        table_keys(&self.trees)
    }

    /// Every snapshot in the store, in id order.
    pub fn all_snapshots(&self) -> Result<Vec<Id>> {
        let mut out = Vec::new();
        for item in self.snapshots.iter()? {
            out.push(Id(item?.0.value()));
        }
        Ok(out)
    }

    /// The snapshot a tag points at.
    pub fn tag(&self, name: &str) -> Result<Option<Id>> {
        Ok(self.refs.get(name)?.map(|v| Id(v.value())))
    }

    /// All tags, sorted by name.
    pub fn tags(&self) -> Result<Vec<(String, Id)>> {
        let mut out = Vec::new();
        for item in self.refs.iter()? {
            let (k, v) = item?;
            out.push((k.value().to_string(), Id(v.value())));
        }
        Ok(out)
    }

    /// Snapshot ids that start with the hex prefix `hex` (at most `limit`).
    pub fn snapshots_with_prefix(&self, hex: &str, limit: usize) -> Result<Vec<Id>> {
        ids_with_prefix(&self.snapshots, hex, limit)
    }

    /// The artifact stored under `key`, if any.
    pub fn artifact(&self, key: &str) -> Result<Option<super::artifact::Artifact>> {
        let Some(table) = &self.artifacts else {
            return Ok(None);
        };
        match table.get(key)? {
            Some(v) => Ok(Some(super::artifact::Artifact::decode(
                key.to_string(),
                v.value(),
            )?)),
            None => Ok(None),
        }
    }

    /// Every artifact, sorted by key.
    pub fn artifacts(&self) -> Result<Vec<super::artifact::Artifact>> {
        let mut out = Vec::new();
        if let Some(table) = &self.artifacts {
            for item in table.iter()? {
                let (k, v) = item?;
                let key = k.value().to_string();
                out.push(super::artifact::Artifact::decode(key, v.value())?);
            }
        }
        Ok(out)
    }

    /// Blob ids that start with the hex prefix `hex` (at most `limit`): how a patch's short
    /// `index` ids are found in the store.
    pub fn blobs_with_prefix(&self, hex: &str, limit: usize) -> Result<Vec<Id>> {
        ids_with_prefix(&self.blobs, hex, limit)
    }
}

/// The keys of an id-keyed table that start with a hex prefix.
fn table_keys(table: &ReadOnlyTable<[u8; 32], &'static [u8]>) -> Result<Vec<Id>> {
    let mut out = Vec::new();
    for item in table.iter()? {
        out.push(Id(item?.0.value()));
    }
    Ok(out)
}

fn ids_with_prefix(
    table: &ReadOnlyTable<[u8; 32], &'static [u8]>,
    hex: &str,
    limit: usize,
) -> Result<Vec<Id>> {
    let nibbles: Option<Vec<u8>> = hex
        .chars()
        .map(|c| c.to_digit(16).map(|d| d as u8))
        .collect();
    let Some(nibbles) = nibbles.filter(|n| !n.is_empty() && n.len() <= 64) else {
        return Ok(Vec::new());
    };
    let mut lo = [0u8; 32];
    let mut hi = [0xffu8; 32];
    for (i, n) in nibbles.iter().enumerate() {
        let byte = i / 2;
        if i % 2 == 0 {
            lo[byte] = n << 4;
            hi[byte] = (n << 4) | 0x0f;
        } else {
            lo[byte] |= n;
            hi[byte] = (hi[byte] & 0xf0) | n;
        }
    }
    let mut out = Vec::new();
    for item in table.range(lo..=hi)? {
        if out.len() >= limit {
            break;
        }
        out.push(Id(item?.0.value()));
    }
    Ok(out)
}

/// Totals over the content objects (see [`Reader::content_totals`]).
#[derive(Clone, Debug, Default)]
pub struct ContentTotals {
    /// Blob records.
    pub blobs: u64,
    /// Chunk records.
    pub chunks: u64,
    /// Distinct content, uncompressed.
    pub content_bytes: u64,
    /// The same, as stored (compressed where that paid).
    pub encoded_bytes: u64,
    /// Blobs stored in groups (see the store's `group` module).
    pub grouped_blobs: u64,
    /// The groups they are in.
    pub groups: u64,
    /// The store's zstd dictionaries (gc's recompression), by id, with the blobs on each.
    pub dictionaries: Vec<DictUsage>,
}

/// One zstd dictionary and the blobs compressed with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DictUsage {
    /// The dictionary's id (blob records name it).
    pub id: u32,
    /// The dictionary's own size.
    pub dict_bytes: u64,
    /// Blobs compressed with it.
    pub blobs: u64,
    /// Their content, uncompressed.
    pub content_bytes: u64,
    /// What they take in the segment log.
    pub encoded_bytes: u64,
}

/// Space used by one table.
#[derive(Clone, Debug)]
pub struct TableUsage {
    /// Table name.
    pub name: &'static str,
    /// Number of entries.
    pub entries: u64,
    /// Bytes of keys and values.
    pub stored_bytes: u64,
    /// Bytes of B-tree structure.
    pub metadata_bytes: u64,
    /// Bytes allocated but unused (page rounding, free space in leaves).
    pub fragmented_bytes: u64,
    /// Pages (4 KiB) allocated to the table.
    pub pages: u64,
}

/// `bytes` if they are blob `id`'s content: never hand out damaged content, a restore would
/// write it.
fn checked(id: &Id, bytes: Vec<u8>) -> Result<Vec<u8>> {
    if Id::of(&bytes) != *id {
        return Err(Error::Corrupt {
            kind: "blob",
            id: id.hex(),
            why: "content does not match its id".into(),
        });
    }
    Ok(bytes)
}

/// Streams a blob's bytes, decompressing one chunk at a time.
pub struct BlobReader<'r> {
    reader: &'r Reader,
    current: Vec<u8>,
    pos: usize,
    chunks: Vec<ChunkRef>,
    next: usize,
}

impl io::Read for BlobReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            let Some(c) = self.chunks.get(self.next) else {
                return Ok(0);
            };
            self.current = self.reader.read_chunk(c).map_err(io::Error::other)?;
            self.pos = 0;
            self.next += 1;
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
