//! Garbage collection: keep what anything can still reach, delete the rest, repack the segment
//! log where deletions left it sparse, and compact the database file when that pays.
//!
//! Roots are every snapshot record (forgetting a snapshot removes its record, see
//! [`crate::forget`]), every artifact, and every workspace's stat cache: a snapshot reuses the
//! blob and tree ids the cache names without storing them again, so they must stay.
//!
//! Everything happens in one write transaction: redb commits it whole or not at all, so a gc
//! killed at any moment leaves the store as it was, and no other writer can commit between the
//! mark and the sweep.
//!
//! The race that remains is with a writer that decided "this blob is already stored" in its read
//! view *before* the gc and commits a reference to it *after*. Rather than a grace period (which
//! trusts clocks and guesses how long a snapshot may take), each gc bumps the `gc_epoch` counter
//! in `meta`. A writer remembers the epoch of the view it deduplicated against; in its own write
//! transaction (which redb serialises with the gc's) it compares, and only if a gc committed
//! meanwhile does it check that everything it refers to but did not store is still there (a
//! snapshot: every entry of its new trees; a kept tree was kept with everything below it, so a
//! reused subtree costs one lookup). If something is gone the snapshot starts over, and a large
//! artifact put fails with a message to run it again. Nothing a committed snapshot refers to is
//! ever deleted, and a gc that deleted nothing another writer needed costs that writer nothing
//! but the check.

pub use crate::scan::cache_write::Repacked;
use std::time::Instant;

use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::id::Id;
use crate::progress::Progress;
use crate::scan::statcache::DirView;
use crate::store::blob::{self, BlobRecord, SEGMENT_SIZE, SegmentWriter, Span};
use crate::store::regroup::{GroupKey, key as group_key};
use crate::store::snapshot::SnapshotRecord;
use crate::store::tables::*;
use crate::store::tree::{Kind, Tree};
use crate::store::{Store, epoch_in, write_counter};

pub use crate::store::CompactSkipped;

/// How to collect.
#[derive(Clone, Debug)]
pub struct GcOptions {
    /// Compute and report, change nothing.
    pub dry_run: bool,
    /// Segments whose live bytes are below this fraction of their length are rewritten.
    pub repack_below: f64,
    /// Compact the database file afterwards when at least this fraction of it is free.
    pub compact_above: f64,
    /// Regroup small blobs (see the store's `regroup` module) and recompress larger ones with
    /// the store's zstd dictionary (training one when needed, see the store's `dense` module)
    /// at this level; `None` leaves encodings as they are, and the dead members of groups in
    /// place.
    pub recompress_level: Option<i32>,
}

/// The level gc recompresses small blobs at. First gc of a Linux-tree store, with the
/// dictionary (`benches/gc-dense.sh`): level 6 took 16.5 s of CPU for a 230.7 MiB store, 9
/// took 24.6 s for 226.1 MiB (2% smaller for half again the CPU), 12 took 57.5 s for 223.5 MiB
/// and 219 MiB of memory; decoding is as fast at each.
pub const RECOMPRESS_LEVEL: i32 = 6;

impl Default for GcOptions {
    fn default() -> Self {
        GcOptions {
            dry_run: false,
            repack_below: 0.5,
            compact_above: 0.2,
            recompress_level: Some(RECOMPRESS_LEVEL),
        }
    }
}

/// What a gc did (or, with `dry_run`, would do).
#[derive(Clone, Debug, Default)]
pub struct GcReport {
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// Snapshot records kept (the roots).
    pub snapshots: u64,
    /// Trees deleted.
    pub trees_removed: u64,
    /// Blobs deleted.
    pub blobs_removed: u64,
    /// Chunks deleted.
    pub chunks_removed: u64,
    /// Encoded bytes of the deleted blobs and chunks, plus the deleted trees' bytes.
    pub bytes_removed: u64,
    /// Segments deleted (every byte in them dead, or moved by the repack).
    pub segments_removed: u64,
    /// Live objects moved out of sparse segments.
    pub objects_moved: u64,
    /// Their bytes.
    pub bytes_moved: u64,
    /// Bytes of the segment log before and after.
    pub log_bytes_before: u64,
    /// See `log_bytes_before`.
    pub log_bytes_after: u64,
    /// The database file's size before and after (after compaction, if any). A gc can end
    /// with a longer file than it started with: the repack writes the moved objects before
    /// the space they leave is free (see `file_bytes_committed`).
    pub file_bytes_before: u64,
    /// See `file_bytes_before`.
    pub file_bytes_after: u64,
    /// What regrouping small blobs did.
    pub regroup: crate::store::RegroupReport,
    /// What recompression with the store's dictionary did.
    pub dense: crate::store::dense::DenseReport,
    /// The stat cache table, rewritten packed when a third or more of its pages was empty (a
    /// table written before rewind packed it).
    pub stat_cache: Option<Repacked>,
    /// The file's size once the gc committed, before any compaction (with `dry_run`, the
    /// size before).
    pub file_bytes_committed: u64,
    /// Whether a compaction ran and made the file shorter than `file_bytes_committed`.
    pub compacted: bool,
    /// Why compaction was skipped, when it was worth doing but could not run.
    pub compact_skipped: Option<CompactSkipped>,
    /// Wall time.
    pub seconds: f64,
}

/// Collects garbage in `store`, then compacts the file when enough of it is free (see
/// [`collect`] for the collection alone).
pub fn gc(store: &mut Store, opts: &GcOptions, progress: &dyn Progress) -> Result<GcReport> {
    let t0 = Instant::now();
    let mut report = collect(store, opts, progress)?;
    if opts.dry_run {
        return Ok(report);
    }
    let file = store.dir().join(crate::store::DB_FILE);
    let len = report.file_bytes_committed;
    // Compact when enough of the file is free pages, or when it is mostly holes (a snapshot's
    // refit skipped while another process read the store, see `Store::fit`).
    let free = store.free_bytes()?;
    let holes = std::fs::metadata(&file).is_ok_and(|m| crate::store::FileSize::of(&m).needs_fit());
    let mut ran = false;
    if len > 0 && (holes || free as f64 >= opts.compact_above * len as f64 && free >= 1 << 20) {
        match store.compact() {
            Ok(done) => ran = done,
            Err(why) => report.compact_skipped = Some(why),
        }
    }
    report.file_bytes_after = std::fs::metadata(&file).map_or(0, |m| m.len());
    // Reported only when it made the file shorter: a compaction that moved pages without
    // shortening the file did nothing a user would call compacting.
    report.compacted = ran && report.file_bytes_after < len;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// Collects garbage in one transaction, without compacting the file: what a shared store can
/// do (the disk budget, after any snapshot). The pages it frees are reused by the next
/// writes; `file_bytes_after` is the file's length once committed.
pub fn collect(store: &Store, opts: &GcOptions, progress: &dyn Progress) -> Result<GcReport> {
    let t0 = Instant::now();
    let file = store.dir().join(crate::store::DB_FILE);
    let file_len = |f: &std::path::Path| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
    let mut report = GcReport {
        dry_run: opts.dry_run,
        file_bytes_before: file_len(&file),
        ..GcReport::default()
    };
    let txn = store.begin_write()?;
    // A dry run does every step a gc does, in the same transaction, and aborts it: its
    // numbers are the gc's own (regrouping and recompression decide what the repack finds
    // sparse), at the cost of the same work. Only the compaction after the commit is left out.
    let live = mark(&txn, &mut report, progress)?;
    let lost = sweep(&txn, &live, &mut report)?;
    // Before the repack, so the bytes they leave behind are reclaimed in this same gc.
    if let Some(level) = opts.recompress_level {
        report.regroup = crate::store::regroup::regroup(&txn, level, &lost, progress)?;
    }
    report.stat_cache = crate::scan::cache_write::repack(&txn)?;
    report.dense = match opts.recompress_level {
        Some(level) => crate::store::dense::recompress(&txn, level, progress)?,
        None => crate::store::dense::DenseReport {
            dicts_removed: crate::store::dense::drop_unused_dicts(&txn)?,
            ..Default::default()
        },
    };
    repack(&txn, opts.repack_below, &mut report, None)?;
    if opts.dry_run {
        txn.abort()?;
        report.file_bytes_after = report.file_bytes_before;
        report.file_bytes_committed = report.file_bytes_before;
        report.seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    write_counter(&txn, "gc_epoch", epoch_in(&txn)? + 1)?;
    write_counter(&txn, "forgotten_since_gc", 0)?;
    // The sweep deleted holders without counting: count what is left, which also empties
    // the queue of what nothing references (the sweep deleted it).
    crate::store::refcount::rebuild(&txn)?;
    txn.commit()?;
    report.file_bytes_committed = file_len(&file);
    report.file_bytes_after = report.file_bytes_committed;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// Collects, in the caller's write transaction (the forget that removed them), what no holder
/// references any more: the disk budget's collection, which costs what it frees, not what the
/// store holds.
///
/// The reference counts (see the store's `refcount` module) say what that is: the objects
/// whose count fell to zero are deleted, and what they held loses a reference, cascading. If
/// the counts are stale (a writer that does not keep them committed since), everything is
/// counted again first. Only the segments that lost bytes are judged for the repack
/// (`repack_below`), and the records are read once for the spans in them. The stat cache is
/// not repacked, dictionaries are kept and nothing is regrouped or recompressed: what `gc`
/// does.
///
/// The gc epoch moves, as with any gc, so a snapshot that deduplicated against a view from
/// before this commit checks what it reuses.
pub fn collect_unreferenced(
    txn: &WriteTransaction,
    repack_below: f64,
    forgotten: usize,
) -> Result<GcReport> {
    let t0 = Instant::now();
    let mut report = GcReport::default();
    let drained = drain(txn)?;
    report.trees_removed = drained.trees;
    report.blobs_removed = drained.blobs;
    report.chunks_removed = drained.chunks;
    report.bytes_removed = drained.bytes;
    finish_unreferenced(txn, repack_below, forgotten, &drained.touched, &mut report)?;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// After [`drain`]: repacks the `touched` segments, moves the gc epoch, takes `forgotten` off
/// the count of snapshots forgotten since a gc, and seals the counts.
pub(crate) fn finish_unreferenced(
    txn: &WriteTransaction,
    repack_below: f64,
    forgotten: usize,
    touched: &FxHashSet<u64>,
    report: &mut GcReport,
) -> Result<()> {
    // What the collection left dead in each touched segment is known (the segments' dead
    // bytes): a segment all dead goes, a sparse one is repacked (which reads the records for
    // the live objects in it), and the others are not read at all.
    let mut sparse: FxHashSet<u64> = FxHashSet::default();
    {
        let mut segments = txn.open_table(SEGMENTS)?;
        let mut dead = txn.open_table(SEGMENT_DEAD)?;
        for seg in touched {
            let Some(len) = segments.get(*seg)?.map(|v| v.value().len() as u64) else {
                dead.remove(*seg)?;
                continue;
            };
            let gone = dead.get(*seg)?.map_or(0, |v| v.value());
            if gone >= len {
                segments.remove(*seg)?;
                dead.remove(*seg)?;
                report.segments_removed += 1;
                report.log_bytes_before += len;
            } else if ((len - gone) as f64) < repack_below * len as f64 {
                sparse.insert(*seg);
            }
        }
    }
    if !sparse.is_empty() {
        let removed = (report.segments_removed, report.log_bytes_before);
        repack(txn, repack_below, report, Some(&sparse))?;
        report.segments_removed += removed.0;
        report.log_bytes_before += removed.1;
    }
    write_counter(txn, "gc_epoch", epoch_in(txn)? + 1)?;
    let pending = crate::store::read_counter(txn, "forgotten_since_gc")?;
    write_counter(
        txn,
        "forgotten_since_gc",
        pending.saturating_sub(forgotten as u64),
    )?;
    crate::store::refcount::seal(txn)
}

/// Deletes what the reference counts say nothing references (counting again first when they
/// are stale), without repacking.
pub(crate) fn drain(txn: &WriteTransaction) -> Result<crate::store::refcount::Drained> {
    if crate::store::refcount::is_stale(txn)? {
        crate::store::refcount::rebuild(txn)?;
    }
    let mut drained = crate::store::refcount::Drained::default();
    crate::store::refcount::drain(txn, &mut drained)?;
    Ok(drained)
}

/// What the roots reach.
struct Live {
    trees: FxHashSet<Id>,
    blobs: FxHashSet<Id>,
    chunks: FxHashSet<Id>,
}

/// A reachable object gc cannot read: gc refuses to delete anything rather than guess.
fn damaged(kind: &'static str, id: &Id, referrer: &str, why: impl std::fmt::Display) -> Error {
    Error::GcDamaged {
        kind,
        id: id.short(),
        referrer: referrer.to_string(),
        why: why.to_string(),
    }
}

fn mark(txn: &WriteTransaction, report: &mut GcReport, progress: &dyn Progress) -> Result<Live> {
    let mut live = mark_trees(txn, report, Some(progress))?;
    mark_chunks(txn, &mut live)?;
    progress.finish();
    Ok(live)
}

/// The trees the roots reach, and the blob ids they name (chunks not yet: see
/// [`mark_chunks`]). Progress, when given, in tree bytes read (sizing it walks the trees
/// table's pages).
fn mark_trees(
    txn: &WriteTransaction,
    report: &mut GcReport,
    progress: Option<&dyn Progress>,
) -> Result<Live> {
    let trees = txn.open_table(TREES)?;
    // Sized from the tables (their lengths are in their headers): most of what is stored is
    // live, and growing the sets rehashes them.
    let blob_count = txn.open_table(BLOBS)?.len()? as usize;
    let mut live = Live {
        trees: FxHashSet::with_capacity_and_hasher(trees.len()? as usize, Default::default()),
        blobs: FxHashSet::with_capacity_and_hasher(blob_count, Default::default()),
        chunks: FxHashSet::default(),
    };
    let keep_blob = |live: &mut Live, id: Id| {
        live.blobs.insert(id);
    };
    let cache: std::rc::Rc<str> = "a stat cache".into();
    // Roots: snapshot records, and the stat caches' trees (which a snapshot may reuse whole).
    // The stack is depth-first: the snapshots' roots go on top, so everything a snapshot needs
    // is visited (and a missing tree found) before a stat cache visits it as optional.
    let mut stack: Vec<(Id, std::rc::Rc<str>, bool)> = Vec::new();
    for item in txn.open_table(STAT_CACHE)?.iter()? {
        let (_, v) = item?;
        // A damaged cache value is never used by a snapshot, so it keeps nothing.
        let Some(dir) = DirView::parse(v.value()) else {
            continue;
        };
        stack.push((dir.tree(), cache.clone(), false));
        for (kind, id) in dir.ids() {
            if kind == Kind::Dir {
                stack.push((id, cache.clone(), false));
            } else {
                keep_blob(&mut live, id);
            }
        }
    }
    for item in txn.open_table(SNAPSHOTS)?.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        let rec = SnapshotRecord::decode(&id, v.value())
            .map_err(|e| damaged("snapshot", &id, "the snapshots table", e))?;
        report.snapshots += 1;
        stack.push((rec.root, format!("snapshot {}", id.short()).into(), true));
    }
    // Progress in tree bytes read: the mark's cost is reading trees.
    if let Some(p) = progress {
        p.start("gc: mark", trees.stats()?.stored_bytes(), 0);
    }
    while let Some((id, referrer, required)) = stack.pop() {
        if !live.trees.insert(id) {
            continue;
        }
        let Some(raw) = trees.get(id.0)? else {
            if required {
                return Err(damaged("tree", &id, &referrer, "missing"));
            }
            // A stat cache naming a tree that is gone: snapshots re-hash that directory.
            live.trees.remove(&id);
            continue;
        };
        let tree =
            Tree::decode(&id, raw.value()).map_err(|e| damaged("tree", &id, &referrer, e))?;
        if let Some(p) = progress {
            p.advance(raw.value().len() as u64, 0);
        }
        for e in tree.entries {
            if e.kind == Kind::Dir {
                stack.push((e.id, referrer.clone(), required));
            } else {
                keep_blob(&mut live, e.id);
            }
        }
    }
    if let Ok(artifacts) = txn.open_table(ARTIFACTS) {
        for item in artifacts.iter()? {
            let (k, v) = item?;
            let rec = crate::artifact::ArtifactRecord::decode(k.value(), v.value())?;
            keep_blob(&mut live, rec.blob);
        }
    }
    Ok(live)
}

/// Adds the chunks of the live chunked blobs to `live`, and drops from it the blob ids that
/// are not stored (stat-cache ids; a missing blob a snapshot needs is found by verify).
fn mark_chunks(txn: &WriteTransaction, live: &mut Live) -> Result<()> {
    // Chunks of the live chunked blobs. A live blob that is missing is a damaged store (or a
    // stat-cache id: those are re-hashed when missing, so they keep nothing).
    let blobs = txn.open_table(BLOBS)?;
    let (chunk_table, segments) = (txn.open_table(CHUNKS)?, txn.open_table(SEGMENTS)?);
    let mut missing = Vec::new();
    for id in live.blobs.iter() {
        match blobs.get(id.0)? {
            Some(v) => match blob::decode_blob(id, v.value())
                .map_err(|e| damaged("blob", id, "a live tree or artifact", e))?
            {
                BlobRecord::Chunked { chunks, .. } => {
                    live.chunks.extend(chunks.iter().map(|c| c.id));
                }
                // The pages are chunks too, and hold the rest of the list.
                BlobRecord::Paged { pages, .. } => {
                    let chunks = blob::read_pages(id, &pages, &chunk_table, &segments)
                        .map_err(|e| damaged("blob", id, "a live tree or artifact", e))?;
                    live.chunks
                        .extend(pages.iter().chain(&chunks).map(|c| c.id));
                }
                _ => {}
            },
            None => missing.push(*id),
        }
    }
    for id in missing {
        live.blobs.remove(&id);
    }
    Ok(())
}

/// Deletes what the mark did not reach; returns the groups that lost members.
fn sweep(
    txn: &WriteTransaction,
    live: &Live,
    report: &mut GcReport,
) -> Result<FxHashSet<GroupKey>> {
    let (mut n, mut bytes) = (0u64, 0u64);
    txn.open_table(TREES)?.retain(|k, v| {
        let keep = live.trees.contains(&Id(k));
        if !keep {
            n += 1;
            bytes += v.len() as u64;
        }
        keep
    })?;
    report.trees_removed = n;
    report.bytes_removed += bytes;

    let mut n = 0u64;
    let mut dead_spans = 0u64;
    let mut lost = FxHashSet::default();
    txn.open_table(BLOBS)?.retain(|k, v| {
        let keep = live.blobs.contains(&Id(k));
        if !keep {
            n += 1;
            match blob::decode_blob(&Id(k), v) {
                Ok(BlobRecord::Whole { span, .. }) => dead_spans += u64::from(span.len),
                // Its bytes are freed when gc regroups the rest of its group (then counted
                // in the repack's log bytes).
                Ok(BlobRecord::Grouped { span, .. }) => {
                    lost.insert(group_key(&span));
                }
                _ => {}
            }
        }
        keep
    })?;
    report.blobs_removed = n;

    let mut n = 0u64;
    txn.open_table(CHUNKS)?.retain(|k, v| {
        let keep = live.chunks.contains(&Id(k));
        if !keep {
            n += 1;
            if let Ok(rec) = blob::decode_chunk(&Id(k), v) {
                dead_spans += u64::from(rec.span.len);
            }
        }
        keep
    })?;
    report.chunks_removed = n;
    report.bytes_removed += dead_spans;
    Ok(lost)
}

/// A surviving object that lives in the segment log.
#[derive(Clone)]
enum Located {
    Blob {
        size: u64,
        zstd: bool,
        dict: Option<u32>,
        span: Span,
    },
    /// A group frame, with every member whose record names it (moved together).
    Group {
        span: Span,
        members: Vec<(Id, u64, u32, bool)>,
    },
    Chunk {
        len: u32,
        zstd: bool,
        span: Span,
    },
}

impl Located {
    fn span(&self) -> Span {
        match self {
            Located::Blob { span, .. }
            | Located::Group { span, .. }
            | Located::Chunk { span, .. } => *span,
        }
    }
}

/// The segments `span` covers, with the bytes it takes in each.
fn split(span: &Span, lens: &FxHashMap<u64, usize>) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    let mut left = span.len as usize;
    let (mut seg, mut off) = (span.segment, span.offset as usize);
    while left > 0 {
        let len = lens.get(&seg).copied().unwrap_or(SEGMENT_SIZE);
        let n = len.saturating_sub(off).min(left);
        if n == 0 {
            break;
        }
        out.push((seg, n));
        left -= n;
        seg += 1;
        off = 0;
    }
    out
}

/// Deletes segments with no live bytes and rewrites the live objects of sparse ones at the end
/// of the log. Segments are never appended to once written, so rewriting is safe.
///
/// With `only`, just those segments are judged (and read): the records are still all read,
/// for the spans that lie in them, but the log's other segments are not, and the log bytes
/// reported are those of the segments judged and of the ones written. A span whose segment's
/// length is not read is still split right: the writer moves to the next segment only from a
/// full one, so a span goes past a segment only when that segment is `SEGMENT_SIZE` long.
fn repack(
    txn: &WriteTransaction,
    below: f64,
    report: &mut GcReport,
    only: Option<&FxHashSet<u64>>,
) -> Result<()> {
    let mut segments = txn.open_table(SEGMENTS)?;
    let mut lens: FxHashMap<u64, usize> = FxHashMap::default();
    match only {
        None => {
            for item in segments.iter()? {
                let (k, v) = item?;
                lens.insert(k.value(), v.value().len());
            }
        }
        Some(only) => {
            for seg in only {
                if let Some(v) = segments.get(*seg)? {
                    lens.insert(*seg, v.value().len());
                }
            }
        }
    }
    report.log_bytes_before = lens.values().map(|&l| l as u64).sum();
    // Whether a span lies (partly) in a segment being judged.
    let judged = |span: &Span| match only {
        None => true,
        Some(only) => split(span, &lens).iter().any(|(seg, _)| only.contains(seg)),
    };

    let mut objects: Vec<(Id, Located)> = Vec::new();
    let mut groups: FxHashMap<GroupKey, usize> = FxHashMap::default();
    for item in txn.open_table(BLOBS)?.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        match blob::decode_blob(&id, v.value())? {
            BlobRecord::Whole { span, .. } | BlobRecord::Grouped { span, .. } if !judged(&span) => {
            }
            BlobRecord::Whole {
                size,
                zstd,
                dict,
                span,
            } => objects.push((
                id,
                Located::Blob {
                    size,
                    zstd,
                    dict,
                    span,
                },
            )),
            BlobRecord::Grouped {
                size,
                span,
                skip,
                dense,
            } => {
                let at = *groups.entry(group_key(&span)).or_insert_with(|| {
                    objects.push((
                        id,
                        Located::Group {
                            span,
                            members: Vec::new(),
                        },
                    ));
                    objects.len() - 1
                });
                if let Located::Group { members, .. } = &mut objects[at].1 {
                    members.push((id, size, skip, dense));
                }
            }
            BlobRecord::Chunked { .. } | BlobRecord::Paged { .. } => {}
        }
    }
    for item in txn.open_table(CHUNKS)?.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        let rec = blob::decode_chunk(&id, v.value())?;
        if !judged(&rec.span) {
            continue;
        }
        objects.push((
            id,
            Located::Chunk {
                len: rec.len,
                zstd: rec.zstd,
                span: rec.span,
            },
        ));
    }
    let mut used: FxHashMap<u64, usize> = FxHashMap::default();
    for (_, o) in &objects {
        for (seg, n) in split(&o.span(), &lens) {
            *used.entry(seg).or_default() += n;
        }
    }
    let sparse: FxHashSet<u64> = lens
        .iter()
        .filter(|(seg, len)| {
            let u = used.get(seg).copied().unwrap_or(0);
            u > 0 && (u as f64) < below * (**len as f64)
        })
        .map(|(seg, _)| *seg)
        .collect();
    let mut dead: Vec<u64> = lens
        .keys()
        .filter(|seg| !used.contains_key(seg))
        .copied()
        .collect();

    if !sparse.is_empty() {
        let mut next = crate::store::next_segment(txn, &segments)?;
        let mut segw = SegmentWriter::new(next);
        let mut blobs = txn.open_table(BLOBS)?;
        let mut chunks = txn.open_table(CHUNKS)?;
        for (id, o) in &objects {
            let span = o.span();
            if !split(&span, &lens).iter().any(|(s, _)| sparse.contains(s)) {
                continue;
            }
            let kind = if matches!(o, Located::Chunk { .. }) {
                "chunk"
            } else {
                "blob"
            };
            let bytes = blob::read_span(&segments, kind, id, &span)?;
            let new = segw.append(&bytes, &mut |n, data| {
                segments.insert(n, data)?;
                Ok(())
            })?;
            match o {
                Located::Blob {
                    size, zstd, dict, ..
                } => {
                    blobs.insert(
                        id.0,
                        blob::encode_whole_record(*size, *zstd, *dict, &new).as_slice(),
                    )?;
                }
                Located::Group { members, span, .. } => {
                    // The frame's count moves with it.
                    let mut groups = txn.open_table(GROUP_REFS)?;
                    let n = groups.remove(group_key(span))?.map(|v| v.value());
                    if let Some(n) = n {
                        groups.insert(group_key(&new), n)?;
                    }
                    drop(groups);
                    for (member, size, skip, dense) in members {
                        blobs.insert(
                            member.0,
                            blob::encode_grouped(*size, &new, *skip, *dense).as_slice(),
                        )?;
                    }
                }
                Located::Chunk { len, zstd, .. } => {
                    chunks.insert(id.0, blob::encode_chunk(*len, *zstd, &new).as_slice())?;
                }
            }
            report.objects_moved += 1;
            report.bytes_moved += bytes.len() as u64;
        }
        next = segw.finish(&mut |n, data| {
            segments.insert(n, data)?;
            Ok(())
        })?;
        drop((blobs, chunks));
        write_counter(txn, "next_segment", next)?;
        dead.extend(sparse.iter().copied());
    }
    let mut known_dead = txn.open_table(SEGMENT_DEAD)?;
    for seg in &dead {
        segments.remove(*seg)?;
        known_dead.remove(*seg)?;
    }
    drop(known_dead);
    report.segments_removed = dead.len() as u64;
    report.log_bytes_after = match only {
        None => segments
            .iter()?
            .map(|item| item.map(|(_, v)| v.value().len() as u64))
            .sum::<std::result::Result<u64, _>>()?,
        Some(_) => {
            let removed: u64 = dead
                .iter()
                .filter_map(|s| lens.get(s))
                .map(|&l| l as u64)
                .sum();
            report.log_bytes_before - removed + report.bytes_moved
        }
    };
    Ok(())
}
