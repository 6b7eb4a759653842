//! Reference counts of trees, blobs and chunks: how many references to each the store's
//! holders make, so that forgetting a snapshot frees what it alone held at the cost of what
//! it frees, without marking what everything else reaches.
//!
//! The holders are exactly what gc's mark starts from or walks through: a snapshot record
//! holds its root tree; a tree holds each entry (a subtree or a blob, once per entry); a
//! chunked blob record holds its chunks (paged: its pages and the chunks they list); an
//! artifact record holds its blob; a stat cache row holds its directory's tree (a row lists
//! exactly that tree's entries, so its blobs and subtrees are held through it). Every stored
//! holder counts, reachable or not: an unreachable one is itself at zero and queued, and
//! freeing it releases what it held.
//!
//! A count is changed in the transaction that writes or removes its holder, so a crash at any
//! point leaves counts that match the store. A count that falls to zero puts the object in
//! `unreferenced`; [`drain`] deletes what is still at zero there and releases what it held,
//! cascading. Nothing at zero is deleted anywhere else.
//!
//! Writers this module cannot see (a build's code paths that store holders without counting
//! them) are caught by a stamp: the lengths of the holders' and objects' tables as the last
//! counted transaction left them. A write transaction that finds other lengths marks the
//! counts stale, and the next collection counts everything again ([`rebuild`]) before it
//! trusts them.

use redb::{ReadableTable, ReadableTableMetadata, Table, WriteTransaction};
use rustc_hash::FxHashMap;

use super::blob::{self, BlobRecord, SEGMENT_SIZE, Span};
use super::tables::*;
use super::tree::{Kind, Tree};
use crate::error::Result;
use crate::id::Id;

/// The format feature a store with counts lists: an older build would write holders without
/// counting them, so it must refuse the store.
pub(crate) const FEATURE: &str = "refcounts";

/// The `meta` key of the stamp (the tables' lengths, see the module doc).
const STAMP: &str = "refs_stamp";
/// The `meta` counter set when the counts cannot be trusted until counted again.
const STALE: &str = "refs_stale";

/// Which kind of object a count is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Obj {
    /// A tree.
    Tree = 0,
    /// A blob.
    Blob = 1,
    /// A chunk (or a page of a chunk list).
    Chunk = 2,
}

impl Obj {
    /// What a tree entry of `kind` names.
    pub(crate) fn of(kind: Kind) -> Obj {
        if kind == Kind::Dir {
            Obj::Tree
        } else {
            Obj::Blob
        }
    }

    fn from_u8(v: u8) -> Option<Obj> {
        match v {
            0 => Some(Obj::Tree),
            1 => Some(Obj::Blob),
            2 => Some(Obj::Chunk),
            _ => None,
        }
    }
}

type CountTable<'t> = Table<'t, [u8; 32], u64>;

/// The count tables, open in a write transaction.
pub(crate) struct Counts<'t> {
    txn: &'t WriteTransaction,
    trees: CountTable<'t>,
    blobs: CountTable<'t>,
    chunks: CountTable<'t>,
    queue: Table<'t, (u8, [u8; 32]), ()>,
}

impl<'t> Counts<'t> {
    /// Opens the count tables in `txn`.
    pub(crate) fn open(txn: &'t WriteTransaction) -> Result<Counts<'t>> {
        Ok(Counts {
            txn,
            trees: txn.open_table(TREE_REFS)?,
            blobs: txn.open_table(BLOB_REFS)?,
            chunks: txn.open_table(CHUNK_REFS)?,
            queue: txn.open_table(UNREFERENCED)?,
        })
    }

    fn table(&mut self, obj: Obj) -> &mut CountTable<'t> {
        match obj {
            Obj::Tree => &mut self.trees,
            Obj::Blob => &mut self.blobs,
            Obj::Chunk => &mut self.chunks,
        }
    }

    /// The count of `id`.
    pub(crate) fn get(&mut self, obj: Obj, id: &Id) -> Result<u64> {
        Ok(self.table(obj).get(id.0)?.map_or(0, |v| v.value()))
    }

    /// One more reference to `id`.
    pub(crate) fn add(&mut self, obj: Obj, id: &Id) -> Result<()> {
        let n = self.get(obj, id)?;
        self.table(obj).insert(id.0, n + 1)?;
        Ok(())
    }

    /// One reference fewer to `id`; at zero it is queued for [`drain`]. A count that is
    /// already zero means a holder was stored uncounted: the counts are marked stale.
    pub(crate) fn sub(&mut self, obj: Obj, id: &Id) -> Result<()> {
        match self.get(obj, id)? {
            0 => mark_stale(self.txn)?,
            1 => {
                self.table(obj).remove(id.0)?;
                self.queue.insert((obj as u8, id.0), ())?;
            }
            n => {
                self.table(obj).insert(id.0, n - 1)?;
            }
        }
        Ok(())
    }

    /// A tree was stored: it holds each of its entries.
    pub(crate) fn add_tree(&mut self, tree: &Tree) -> Result<()> {
        for e in &tree.entries {
            self.add(Obj::of(e.kind), &e.id)?;
        }
        Ok(())
    }

    /// A chunked blob record was stored: it holds `held` (its chunks; paged, its pages and
    /// the chunks they list).
    pub(crate) fn add_chunks(&mut self, held: &[Id]) -> Result<()> {
        for id in held {
            self.add(Obj::Chunk, id)?;
        }
        Ok(())
    }

    /// A stat cache row naming tree `new` replaced one naming `old` (either may be absent).
    pub(crate) fn row(&mut self, old: Option<&[u8]>, new: Option<&[u8]>) -> Result<()> {
        let tree = |row: Option<&[u8]>| row.and_then(row_tree);
        let (old, new) = (tree(old), tree(new));
        if old == new {
            return Ok(());
        }
        if let Some(new) = new {
            self.add(Obj::Tree, &new)?;
        }
        if let Some(old) = old {
            self.sub(Obj::Tree, &old)?;
        }
        Ok(())
    }
}

/// The tree a stat cache row names: its first 32 bytes (the row's layout is the scan's; the
/// store reads only this, the same way wherever a row is counted).
fn row_tree(row: &[u8]) -> Option<Id> {
    Some(Id(row.get(..32)?.try_into().ok()?))
}

/// Inserts snapshot record `bytes` (id `id`, root tree `root`), counting its root when the
/// record is new. Says whether it was.
pub(crate) fn insert_snapshot(
    txn: &WriteTransaction,
    id: &Id,
    bytes: &[u8],
    root: &Id,
) -> Result<bool> {
    let new = txn.open_table(SNAPSHOTS)?.insert(id.0, bytes)?.is_none();
    if new {
        Counts::open(txn)?.add(Obj::Tree, root)?;
    }
    Ok(new)
}

/// Removes snapshot record `id`, releasing its root; returns the record removed.
pub(crate) fn remove_snapshot(
    txn: &WriteTransaction,
    id: &Id,
) -> Result<Option<super::snapshot::SnapshotRecord>> {
    let Some(rec) = txn
        .open_table(SNAPSHOTS)?
        .remove(id.0)?
        .map(|v| super::snapshot::SnapshotRecord::decode(id, v.value()))
        .transpose()?
    else {
        return Ok(None);
    };
    Counts::open(txn)?.sub(Obj::Tree, &rec.root)?;
    Ok(Some(rec))
}

/// The chunk ids a chunked blob record holds (none for other records).
pub(crate) fn held_chunks(
    id: &Id,
    rec: &BlobRecord,
    chunks: &impl ReadableTable<[u8; 32], &'static [u8]>,
    segments: &impl ReadableTable<u64, &'static [u8]>,
) -> Result<Vec<Id>> {
    Ok(match rec {
        BlobRecord::Chunked { chunks: list, .. } => list.iter().map(|c| c.id).collect(),
        BlobRecord::Paged { pages, .. } => {
            let listed = blob::read_pages(id, pages, chunks, segments)?;
            pages.iter().chain(&listed).map(|c| c.id).collect()
        }
        _ => Vec::new(),
    })
}

fn lens(txn: &WriteTransaction) -> Result<[u8; 40]> {
    let mut out = [0u8; 40];
    let lens = [
        txn.open_table(TREES)?.len()?,
        txn.open_table(BLOBS)?.len()?,
        txn.open_table(CHUNKS)?.len()?,
        txn.open_table(SNAPSHOTS)?.len()?,
        txn.open_table(ARTIFACTS)?.len()?,
    ];
    for (i, n) in lens.iter().enumerate() {
        out[i * 8..i * 8 + 8].copy_from_slice(&n.to_le_bytes());
    }
    Ok(out)
}

/// At the start of a write transaction: marks the counts stale when the tables' lengths are
/// not what the last counted transaction left (a writer that does not count committed since).
/// Nothing on a store without counts yet.
pub(crate) fn check_stamp(txn: &WriteTransaction) -> Result<()> {
    let stamp = match txn.open_table(META)?.get(STAMP)? {
        Some(v) => v.value().to_vec(),
        None => return Ok(()),
    };
    if stamp.as_slice() != lens(txn)?.as_slice() {
        mark_stale(txn)?;
    }
    Ok(())
}

/// Before a counted transaction commits: records the tables' lengths it leaves.
pub(crate) fn seal(txn: &WriteTransaction) -> Result<()> {
    let lens = lens(txn)?;
    txn.open_table(META)?.insert(STAMP, lens.as_slice())?;
    Ok(())
}

/// Marks the counts as needing a full count before they are trusted.
pub(crate) fn mark_stale(txn: &WriteTransaction) -> Result<()> {
    super::write_counter(txn, STALE, 1)
}

/// Whether the counts must be counted again before they are trusted.
pub(crate) fn is_stale(txn: &WriteTransaction) -> Result<bool> {
    Ok(super::read_counter(txn, STALE)? != 0)
}

/// Every reference the store's holders make, counted from scratch.
#[derive(Default)]
pub(crate) struct Tally {
    /// Per tree.
    pub trees: FxHashMap<Id, u64>,
    /// Per blob.
    pub blobs: FxHashMap<Id, u64>,
    /// Per chunk.
    pub chunks: FxHashMap<Id, u64>,
    /// Per group frame: the records that name it.
    pub groups: FxHashMap<(u64, u32), u64>,
}

/// Counts every reference the stored holders make (see the module doc). A holder that cannot
/// be decoded is an error: its references are unknown.
pub(crate) fn tally(
    snapshots: &impl ReadableTable<[u8; 32], &'static [u8]>,
    trees: &impl ReadableTable<[u8; 32], &'static [u8]>,
    blobs: &impl ReadableTable<[u8; 32], &'static [u8]>,
    chunks: &impl ReadableTable<[u8; 32], &'static [u8]>,
    segments: &impl ReadableTable<u64, &'static [u8]>,
    artifacts: Option<&impl ReadableTable<&'static str, &'static [u8]>>,
    stat_cache: &impl ReadableTable<(u64, &'static [u8]), &'static [u8]>,
) -> Result<Tally> {
    let mut t = Tally::default();
    let bump = |m: &mut FxHashMap<Id, u64>, id: Id| *m.entry(id).or_default() += 1;
    for item in snapshots.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        let rec = super::snapshot::SnapshotRecord::decode(&id, v.value())?;
        bump(&mut t.trees, rec.root);
    }
    for item in trees.iter()? {
        let (k, v) = item?;
        let tree = Tree::decode(&Id(k.value()), v.value())?;
        for e in tree.entries {
            match Obj::of(e.kind) {
                Obj::Tree => bump(&mut t.trees, e.id),
                _ => bump(&mut t.blobs, e.id),
            }
        }
    }
    for item in blobs.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        let rec = blob::decode_blob(&id, v.value())?;
        if let BlobRecord::Grouped { span, .. } = &rec {
            *t.groups.entry((span.segment, span.offset)).or_default() += 1;
        }
        for c in held_chunks(&id, &rec, chunks, segments)? {
            bump(&mut t.chunks, c);
        }
    }
    if let Some(artifacts) = artifacts {
        for item in artifacts.iter()? {
            let (k, v) = item?;
            let rec = super::artifact::ArtifactRecord::decode(k.value(), v.value())?;
            bump(&mut t.blobs, rec.blob);
        }
    }
    for item in stat_cache.iter()? {
        let (_, v) = item?;
        if let Some(tree) = row_tree(v.value()) {
            bump(&mut t.trees, tree);
        }
    }
    Ok(t)
}

/// Counts everything again and writes the counts, the queue of what nothing references, and
/// the stamp. First drops the stat cache rows whose tree is not stored (or too short to name one):
/// such a row holds nothing, so the blobs it names must not be trusted by a snapshot (their
/// directories are read again).
pub(crate) fn rebuild(txn: &WriteTransaction) -> Result<()> {
    {
        let trees = txn.open_table(TREES)?;
        let mut cache = txn.open_table(STAT_CACHE)?;
        let mut drop_rows: Vec<(u64, Vec<u8>)> = Vec::new();
        for item in cache.iter()? {
            let (k, v) = item?;
            let keep = match row_tree(v.value()) {
                Some(tree) => trees.get(tree.0)?.is_some(),
                None => false,
            };
            if !keep {
                let (ws, dir) = k.value();
                drop_rows.push((ws, dir.to_vec()));
            }
        }
        for (ws, dir) in drop_rows {
            cache.remove((ws, dir.as_slice()))?;
        }
    }
    let t = {
        let artifacts = txn.open_table(ARTIFACTS)?;
        tally(
            &txn.open_table(SNAPSHOTS)?,
            &txn.open_table(TREES)?,
            &txn.open_table(BLOBS)?,
            &txn.open_table(CHUNKS)?,
            &txn.open_table(SEGMENTS)?,
            Some(&artifacts),
            &txn.open_table(STAT_CACHE)?,
        )?
    };
    for def in [TREE_REFS, BLOB_REFS, CHUNK_REFS] {
        txn.delete_table(def)?;
    }
    txn.delete_table(UNREFERENCED)?;
    let mut queue = txn.open_table(UNREFERENCED)?;
    for (def, counts, objects, obj) in [
        (TREE_REFS, &t.trees, TREES, Obj::Tree),
        (BLOB_REFS, &t.blobs, BLOBS, Obj::Blob),
        (CHUNK_REFS, &t.chunks, CHUNKS, Obj::Chunk),
    ] {
        let mut sorted: Vec<(&Id, &u64)> = counts.iter().collect();
        sorted.sort_unstable_by_key(|(id, _)| **id);
        let mut table = txn.open_table(def)?;
        for (id, n) in sorted {
            table.insert(id.0, *n)?;
        }
        for item in txn.open_table(objects)?.iter()? {
            let (k, _) = item?;
            if !counts.contains_key(&Id(k.value())) {
                queue.insert((obj as u8, k.value()), ())?;
            }
        }
    }
    drop(queue);
    txn.delete_table(GROUP_REFS)?;
    {
        let mut sorted: Vec<_> = t.groups.iter().collect();
        sorted.sort_unstable();
        let mut groups = txn.open_table(GROUP_REFS)?;
        for (k, n) in sorted {
            groups.insert(*k, *n)?;
        }
    }
    // What was dead is not known any more: only later frees are counted (a full gc repacks
    // by reading every record).
    txn.delete_table(SEGMENT_DEAD)?;
    txn.open_table(SEGMENT_DEAD)?;
    super::write_counter(txn, STALE, 0)?;
    seal(txn)
}

/// A group frame was written at `span` with `members` records naming it.
pub(crate) fn add_group(txn: &WriteTransaction, span: &Span, members: u64) -> Result<()> {
    let mut groups = txn.open_table(GROUP_REFS)?;
    let key = (span.segment, span.offset);
    let n = groups.get(key)?.map_or(0, |v| v.value());
    groups.insert(key, n + members)?;
    Ok(())
}

/// Adds `span`'s bytes to the dead bytes of the segments it lies in.
fn dead_span(
    dead: &mut Table<'_, u64, u64>,
    span: &Span,
    touched: &mut rustc_hash::FxHashSet<u64>,
) -> Result<()> {
    // A span leaves a segment only when that segment is full.
    let (mut seg, mut off, mut left) = (span.segment, span.offset as usize, span.len as usize);
    while left > 0 {
        let n = SEGMENT_SIZE.saturating_sub(off).min(left);
        if n == 0 {
            break;
        }
        let was = dead.get(seg)?.map_or(0, |v| v.value());
        dead.insert(seg, was + n as u64)?;
        touched.insert(seg);
        left -= n;
        seg += 1;
        off = 0;
    }
    Ok(())
}

/// What [`drain`] deleted.
#[derive(Default, Debug)]
pub(crate) struct Drained {
    /// Trees deleted.
    pub trees: u64,
    /// Blobs deleted.
    pub blobs: u64,
    /// Chunks deleted.
    pub chunks: u64,
    /// Bytes of the deleted trees, and of the deleted blobs' and chunks' own spans (a group
    /// member's bytes are its frame's, freed when the frame is).
    pub bytes: u64,
    /// Segments that lost bytes (for the repack to judge).
    pub touched: rustc_hash::FxHashSet<u64>,
}

/// Deletes every queued object whose count is still zero, releasing what it held (which may
/// queue more, deleted in turn). Its cost is what it deletes. The counts must not be stale.
pub(crate) fn drain(txn: &WriteTransaction, out: &mut Drained) -> Result<()> {
    let mut counts = Counts::open(txn)?;
    let mut trees = txn.open_table(TREES)?;
    let mut blobs = txn.open_table(BLOBS)?;
    let mut chunks = txn.open_table(CHUNKS)?;
    let segments = txn.open_table(SEGMENTS)?;
    let mut groups = txn.open_table(GROUP_REFS)?;
    let mut dead = txn.open_table(SEGMENT_DEAD)?;
    loop {
        let Some((k, _)) = counts.queue.pop_first()? else {
            break;
        };
        let (kind, raw) = k.value();
        drop(k);
        let id = Id(raw);
        let Some(obj) = Obj::from_u8(kind) else {
            continue;
        };
        // Referenced again since it was queued.
        if counts.get(obj, &id)? > 0 {
            continue;
        }
        match obj {
            Obj::Tree => {
                let Some(v) = trees.remove(id.0)? else {
                    continue;
                };
                out.trees += 1;
                out.bytes += v.value().len() as u64;
                // A tree that does not decode goes, and what it named keeps its counts (a
                // leak a full gc finds, never a loss).
                if let Ok(tree) = Tree::decode(&id, v.value()) {
                    drop(v);
                    for e in &tree.entries {
                        counts.sub(Obj::of(e.kind), &e.id)?;
                    }
                }
            }
            Obj::Blob => {
                let Some(v) = blobs.remove(id.0)? else {
                    continue;
                };
                out.blobs += 1;
                let rec = blob::decode_blob(&id, v.value());
                drop(v);
                match rec {
                    Ok(BlobRecord::Whole { span, .. }) => {
                        out.bytes += u64::from(span.len);
                        dead_span(&mut dead, &span, &mut out.touched)?;
                    }
                    // The frame is dead when no record names it any more. Without a count
                    // (a frame counted nowhere) it is kept: a full gc finds it.
                    Ok(BlobRecord::Grouped { span, .. }) => {
                        let key = (span.segment, span.offset);
                        let n = groups.get(key)?.map(|v| v.value());
                        match n {
                            Some(1) => {
                                groups.remove(key)?;
                                out.bytes += u64::from(span.len);
                                dead_span(&mut dead, &span, &mut out.touched)?;
                            }
                            Some(n) if n > 1 => {
                                groups.insert(key, n - 1)?;
                            }
                            _ => {}
                        }
                    }
                    Ok(rec) => {
                        if let Ok(held) = held_chunks(&id, &rec, &chunks, &segments) {
                            for c in held {
                                counts.sub(Obj::Chunk, &c)?;
                            }
                        }
                    }
                    Err(_) => {}
                }
            }
            Obj::Chunk => {
                let Some(v) = chunks.remove(id.0)? else {
                    continue;
                };
                out.chunks += 1;
                if let Ok(rec) = blob::decode_chunk(&id, v.value()) {
                    drop(v);
                    out.bytes += u64::from(rec.span.len);
                    dead_span(&mut dead, &rec.span, &mut out.touched)?;
                }
            }
        }
    }
    Ok(())
}

/// A count that differs from a full count: (kind, id, stored, counted).
pub(crate) type Mismatch = (&'static str, String, u64, u64);

/// Compares the stored counts with `tally`; the mismatches, at most `limit`, and how many
/// there were.
pub(crate) fn compare(
    tally: &Tally,
    stored: [&impl ReadableTable<[u8; 32], u64>; 3],
    limit: usize,
) -> Result<(Vec<Mismatch>, u64)> {
    let mut out = Vec::new();
    let mut n = 0u64;
    let kinds = ["tree", "blob", "chunk"];
    let want = [&tally.trees, &tally.blobs, &tally.chunks];
    for i in 0..3 {
        let mut seen = 0usize;
        for item in stored[i].iter()? {
            let (k, v) = item?;
            let id = Id(k.value());
            let counted = want[i].get(&id).copied().unwrap_or(0);
            if counted != 0 {
                seen += 1;
            }
            if v.value() != counted {
                n += 1;
                if out.len() < limit {
                    out.push((kinds[i], id.hex(), v.value(), counted));
                }
            }
        }
        // Counted references with no stored count.
        if seen < want[i].len() {
            for (id, c) in want[i] {
                if stored[i].get(id.0)?.is_none() {
                    n += 1;
                    if out.len() < limit {
                        out.push((kinds[i], id.hex(), 0, *c));
                    }
                }
            }
        }
    }
    Ok((out, n))
}

/// [`compare`] for the group frames' counts (a count too low would delete a frame a record
/// still names).
pub(crate) fn compare_groups(
    tally: &Tally,
    stored: &impl ReadableTable<(u64, u32), u64>,
    limit: usize,
    out: &mut Vec<Mismatch>,
    n: &mut u64,
) -> Result<()> {
    let name = |(seg, off): (u64, u32)| format!("segment {seg} offset {off}");
    let mut seen = 0usize;
    for item in stored.iter()? {
        let (k, v) = item?;
        let counted = tally.groups.get(&k.value()).copied().unwrap_or(0);
        if counted != 0 {
            seen += 1;
        }
        if v.value() != counted {
            *n += 1;
            if out.len() < limit {
                out.push(("group", name(k.value()), v.value(), counted));
            }
        }
    }
    if seen < tally.groups.len() {
        for (k, c) in &tally.groups {
            if stored.get(*k)?.is_none() {
                *n += 1;
                if out.len() < limit {
                    out.push(("group", name(*k), 0, *c));
                }
            }
        }
    }
    Ok(())
}

/// Brings a store without counts to counts (in `txn`): lists the feature and counts
/// everything. Says whether it did.
pub(crate) fn upgrade_in(txn: &WriteTransaction) -> Result<bool> {
    if !super::format::require_in(txn, FEATURE)? {
        return Ok(false);
    }
    rebuild(txn)?;
    Ok(true)
}

/// What [`Store::check_refcounts`] found.
pub(crate) enum CountCheck {
    /// The store keeps no counts (an older format, opened read-only).
    Absent,
    /// The counts are marked to be counted again (a writer that does not keep them
    /// committed): not damage, and not compared.
    Stale,
    /// Compared with a full count: the mismatches (at most the limit asked) and how many.
    Compared(Vec<Mismatch>, u64),
}

impl super::Store {
    /// Compares the stored reference counts with a full count of every holder, in one read
    /// view.
    pub(crate) fn check_refcounts(&self, limit: usize) -> Result<CountCheck> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let format = super::format::Format::read(&meta, &self.dir.join(super::DB_FILE))?;
        if !format.features.iter().any(|f| f == FEATURE) {
            return Ok(CountCheck::Absent);
        }
        let stale = meta
            .get(STALE)?
            .and_then(|v| v.value().try_into().ok().map(u64::from_le_bytes))
            .unwrap_or(0);
        if stale != 0 {
            return Ok(CountCheck::Stale);
        }
        let artifacts = match txn.open_table(ARTIFACTS) {
            Ok(t) => Some(t),
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(e.into()),
        };
        let t = tally(
            &txn.open_table(SNAPSHOTS)?,
            &txn.open_table(TREES)?,
            &txn.open_table(BLOBS)?,
            &txn.open_table(CHUNKS)?,
            &txn.open_table(SEGMENTS)?,
            artifacts.as_ref(),
            &txn.open_table(STAT_CACHE)?,
        )?;
        let (trees, blobs, chunks) = (
            txn.open_table(TREE_REFS)?,
            txn.open_table(BLOB_REFS)?,
            txn.open_table(CHUNK_REFS)?,
        );
        let (mut list, mut n) = compare(&t, [&trees, &blobs, &chunks], limit)?;
        let groups = txn.open_table(GROUP_REFS)?;
        compare_groups(&t, &groups, limit, &mut list, &mut n)?;
        Ok(CountCheck::Compared(list, n))
    }
}
