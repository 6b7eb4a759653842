//! Verifying a store: every object decodes, every reference resolves, and (with `full`) every
//! blob's, chunk's, tree's and snapshot's content matches its id.
//!
//! The roots are everything gc keeps: snapshots, artifacts, overlays and the stat caches
//! (whose blob and tree ids a snapshot reuses without reading them). The walk from the roots
//! finds what is missing and who refers to each object; then every record in the trees, blobs
//! and chunks tables is checked, reached or not, so the counts are the ones `stats` shows.
//! Problems are collected, not fatal: each names the object and what refers to it, so a user
//! knows which snapshots a damaged object affects. Each object is checked once.

use rayon::prelude::*;
use redb::ReadableTable;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::files::{child_path, display};
use crate::id::Id;
use crate::progress::Progress;
use crate::store::blob::{BlobRecord, SEGMENT_SIZE, Span};
use crate::store::tree::{Kind, Tree};
use crate::store::{Reader, Store};

/// A damaged page of the store's database file is reported as a problem of what was being read
/// (a `table` problem when a whole listing stopped at it), and verify goes on with the rest: it
/// reports what it can still read, and which snapshots reach something it cannot.
///
/// One thing wrong with the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// "snapshot", "tree", "blob", "chunk", "tag", "log".
    pub kind: &'static str,
    /// The damaged or missing object's id (or name).
    pub id: String,
    /// What is wrong.
    pub what: String,
    /// What refers to it (a snapshot and path, a tag ...).
    pub referrer: String,
}

/// What `verify` checked and found.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Snapshots checked.
    pub snapshots: u64,
    /// Distinct trees checked.
    pub trees: u64,
    /// Distinct blobs checked.
    pub blobs: u64,
    /// Distinct chunks checked.
    pub chunks: u64,
    /// Bytes whose hash was checked (full mode).
    pub bytes_hashed: u64,
    /// Artifacts checked.
    pub artifacts: u64,
    /// Of the trees, blobs and chunks: those nothing reaches (the next gc deletes them).
    pub unreferenced: u64,
    /// Everything wrong.
    pub problems: Vec<Problem>,
    /// Snapshots that reach a problem (their record, a tree or a file they hold): restoring
    /// them fails in part. Empty when there are no problems.
    pub damaged_snapshots: Vec<Id>,
    /// Tables of the store's database whose listing stopped at a damaged page, so what they
    /// hold past it was not checked.
    pub damaged_tables: Vec<String>,
    /// Whether the reference counts were compared with a full count (full mode only): not
    /// when the store has none yet, nor when they are stale (a writer that did not count
    /// committed since; the next collection counts everything again).
    pub refcounts_checked: bool,
}

/// `r`, or on damage in the store's file nothing, with a problem naming the table that could
/// not be listed; other errors stay errors.
fn listed<T: Default>(problems: &mut Vec<Problem>, table: &str, r: Result<T>) -> Result<T> {
    match r {
        Ok(v) => Ok(v),
        Err(e) if e.is_damaged_store() => {
            problems.push(Problem {
                kind: "table",
                id: table.to_string(),
                what: format!("cannot be listed: {e}"),
                referrer: "the store's database file".into(),
            });
            Ok(T::default())
        }
        Err(e) => Err(e),
    }
}

/// What a lookup found: the record, nothing, or a damaged page (already reported).
enum Found<T> {
    Record(T),
    Missing,
    Unreadable,
}

impl<T> Found<T> {
    fn record(self) -> Option<T> {
        match self {
            Found::Record(v) => Some(v),
            _ => None,
        }
    }
}

/// `r`, or on damage in the store's file `Unreadable` with a problem about `kind` `id`.
fn readable<T>(
    problems: &mut Vec<Problem>,
    kind: &'static str,
    id: &Id,
    referrer: &str,
    r: Result<Option<T>>,
) -> Result<Found<T>> {
    match r {
        Ok(Some(v)) => Ok(Found::Record(v)),
        Ok(None) => Ok(Found::Missing),
        Err(e) if e.is_damaged_store() => {
            problems.push(Problem {
                kind,
                id: id.hex(),
                what: format!("unreadable: {e}"),
                referrer: referrer.to_string(),
            });
            Ok(Found::Unreadable)
        }
        Err(e) => Err(e),
    }
}

/// Checks the store; `full` also re-hashes every object's content.
pub fn verify(store: &Store, full: bool, progress: &dyn Progress) -> Result<VerifyReport> {
    let reader = store.reader()?;
    let mut report = VerifyReport::default();
    let mut problems = Vec::new();
    let segments = listed(&mut problems, "segments", reader.segment_lengths())?;
    let mut seen_trees: FxHashSet<Id> = FxHashSet::default();
    // blob id -> the first place that refers to it.
    let mut blobs: FxHashMap<Id, String> = FxHashMap::default();

    // Trees to walk from, snapshots first so that a blob is named by a snapshot path when one
    // has it.
    let mut roots: Vec<(Id, String)> = Vec::new();
    let snapshots = listed(&mut problems, "snapshots", reader.all_snapshots())?;
    // Each readable snapshot and its root tree, for the damaged-snapshot pass at the end.
    let mut snapshot_roots: Vec<(Id, Id)> = Vec::new();
    for sid in &snapshots {
        report.snapshots += 1;
        let referrer = format!("snapshot {}", sid.short());
        let raw = reader.snapshot_raw(sid);
        let Some(raw) = readable(&mut problems, "snapshot", sid, "snapshots table", raw)?.record()
        else {
            continue;
        };
        if full && Id::of(&raw) != *sid {
            problems.push(Problem {
                kind: "snapshot",
                id: sid.hex(),
                what: "content does not match its id".into(),
                referrer: "snapshots table".into(),
            });
        }
        let rec = match crate::store::snapshot::SnapshotRecord::decode(sid, &raw) {
            Ok(r) => r,
            Err(e) => {
                problems.push(Problem {
                    kind: "snapshot",
                    id: sid.hex(),
                    what: e.to_string(),
                    referrer: "snapshots table".into(),
                });
                continue;
            }
        };
        snapshot_roots.push((*sid, rec.root));
        roots.push((rec.root, referrer));
    }
    for (name, id) in listed(&mut problems, "refs", reader.tags())? {
        let raw = reader.snapshot_raw(&id);
        let found = readable(&mut problems, "snapshot", &id, &format!("tag {name}"), raw)?;
        if matches!(found, Found::Missing) {
            problems.push(Problem {
                kind: "snapshot",
                id: id.hex(),
                what: "missing".into(),
                referrer: format!("tag {name}"),
            });
        }
    }
    for (ws, seq, id) in listed(&mut problems, "ws_log", reader.ws_log_entries())? {
        let here = format!("workspace {ws} log entry {seq}");
        let found = readable(
            &mut problems,
            "snapshot",
            &id,
            &here,
            reader.snapshot_raw(&id),
        )?;
        if matches!(found, Found::Missing) {
            problems.push(Problem {
                kind: "snapshot",
                id: id.hex(),
                what: "missing".into(),
                referrer: format!("workspace {ws} log entry {seq}"),
            });
        }
    }
    for (oid, raw) in listed(&mut problems, "overlays", reader.overlay_records())? {
        let referrer = format!("overlay {oid}");
        match crate::overlay::OverlayRecord::decode(oid, &raw) {
            Ok(rec) => {
                for id in std::iter::once(rec.base)
                    .chain(rec.state)
                    .chain(rec.states.iter().copied())
                {
                    let raw = reader.snapshot_raw(&id);
                    let found = readable(&mut problems, "snapshot", &id, &referrer, raw)?;
                    if matches!(found, Found::Missing) {
                        problems.push(Problem {
                            kind: "snapshot",
                            id: id.hex(),
                            what: "missing".into(),
                            referrer: referrer.clone(),
                        });
                    }
                }
            }
            Err(e) => problems.push(Problem {
                kind: "overlay",
                id: oid.to_string(),
                what: e.to_string(),
                referrer: "overlays table".into(),
            }),
        }
    }
    // Stat caches: an id they name that is gone is re-hashed by the next snapshot (no problem),
    // but one that is present is reused unread, so it must be sound.
    let mut cached_blobs = Vec::new();
    let stat_caches = (|| -> Result<()> {
        for item in reader.stat_cache.iter()? {
            let (k, v) = item?;
            let Some(dir) = crate::scan::statcache::DirView::parse(v.value()) else {
                continue;
            };
            let referrer = format!("the stat cache of workspace {}", k.value().0);
            for (kind, id) in std::iter::once((Kind::Dir, dir.tree())).chain(dir.ids()) {
                if kind == Kind::Dir {
                    if reader.has_tree(&id)? {
                        roots.push((id, referrer.clone()));
                    }
                } else if reader.has_blob(&id)? {
                    cached_blobs.push((id, referrer.clone()));
                }
            }
        }
        Ok(())
    })();
    listed(&mut problems, "stat_cache", stat_caches)?;
    for (id, referrer) in &roots {
        walk_tree(
            &reader,
            id,
            b"",
            referrer,
            full,
            &mut seen_trees,
            &mut blobs,
            &mut problems,
            &mut report,
        )?;
    }
    for a in listed(&mut problems, "artifacts", reader.artifacts())? {
        report.artifacts += 1;
        blobs
            .entry(a.blob())
            .or_insert_with(|| format!("artifact {}", a.key()));
    }
    for (id, referrer) in cached_blobs {
        blobs.entry(id).or_insert(referrer);
    }
    // Trees nothing reaches: still checked, so every stored tree is.
    for id in listed(&mut problems, "trees", reader.tree_ids())? {
        if seen_trees.contains(&id) {
            continue;
        }
        report.unreferenced += 1;
        report.trees += 1;
        let raw = reader.tree_raw(&id);
        let Some(raw) = readable(&mut problems, "tree", &id, UNREFERENCED, raw)?.record() else {
            continue;
        };
        let what = if full && Id::of(&raw) != id {
            Some("content does not match its id".to_string())
        } else {
            Tree::decode(&id, &raw).err().map(|e| e.to_string())
        };
        if let Some(what) = what {
            problems.push(Problem {
                kind: "tree",
                id: id.hex(),
                what,
                referrer: UNREFERENCED.into(),
            });
        }
    }
    let reached_blobs = blobs.len() as u64;
    for id in listed(&mut problems, "blobs", reader.blob_ids())? {
        blobs.entry(id).or_insert_with(|| UNREFERENCED.into());
    }
    report.unreferenced += blobs.len() as u64 - reached_blobs;

    // Blobs: records, spans, that their chunks exist; content hashes in full mode (on all
    // cores). Then every chunk record on its own.
    report.blobs = blobs.len() as u64;
    let chunk_ids = listed(&mut problems, "chunks", reader.chunk_ids())?;
    let total: u64 = if full {
        let blob_bytes: u64 = blobs
            .keys()
            .filter_map(|id| reader.blob_size(id).ok())
            .sum();
        blob_bytes
    } else {
        0
    };
    progress.start("verify", total, (blobs.len() + chunk_ids.len()) as u64);
    let checks = Checks {
        reader: &reader,
        segments: &segments,
        full,
        progress,
    };
    // In the log's order, so that each group is decompressed once (see `blob_location`).
    let mut list: Vec<(&Id, &String)> = blobs.iter().collect();
    if full {
        list.sort_by_cached_key(|(id, _)| reader.blob_location(id));
    }
    let results: Vec<BlobCheck> = list
        .par_iter()
        .map(|(id, referrer)| {
            let r = checks.blob(id, referrer);
            progress.advance(0, 1);
            r
        })
        .collect();
    let mut chunk_referrer: FxHashMap<Id, &str> = FxHashMap::default();
    for (r, (_, referrer)) in results.iter().zip(&list) {
        for c in &r.chunks {
            chunk_referrer.entry(*c).or_insert(referrer.as_str());
        }
    }
    for r in &results {
        report.bytes_hashed += r.hashed;
    }
    problems.extend(results.into_iter().flat_map(|r| r.problems));
    report.chunks = chunk_ids.len() as u64;
    report.unreferenced += chunk_ids
        .iter()
        .filter(|c| !chunk_referrer.contains_key(c))
        .count() as u64;
    let chunk_results: Vec<(Option<Problem>, u64)> = chunk_ids
        .par_iter()
        .map(|id| {
            // A chunk a blob lists was hashed when the blob was read whole (every chunk read
            // is checked); only the others need reading here.
            let r = match chunk_referrer.get(id) {
                Some(referrer) => checks.chunk(id, referrer, false),
                None => checks.chunk(id, UNREFERENCED, checks.full),
            };
            progress.advance(0, 1);
            r
        })
        .collect();
    progress.finish();
    for (p, hashed) in chunk_results {
        problems.extend(p);
        report.bytes_hashed += hashed;
    }
    if full {
        report.refcounts_checked = check_counts(store, &mut problems);
    }
    if !problems.is_empty() {
        report.damaged_snapshots = damaged_snapshots(&reader, &snapshot_roots, &problems);
    }
    report.damaged_tables = problems
        .iter()
        .filter(|p| p.kind == "table")
        .map(|p| p.id.clone())
        .collect();
    report.problems = problems;
    Ok(report)
}

/// Compares the reference counts with a full count of every holder: a count too low would let
/// a collection delete what something still reaches, so a mismatch is damage. Says whether
/// the counts were compared.
fn check_counts(store: &Store, problems: &mut Vec<Problem>) -> bool {
    use crate::store::refcount::CountCheck;
    const SHOWN: usize = 20;
    match store.check_refcounts(SHOWN) {
        Ok(CountCheck::Absent | CountCheck::Stale) => false,
        Ok(CountCheck::Compared(list, n)) => {
            for (kind, id, stored, counted) in &list {
                problems.push(Problem {
                    kind,
                    id: id.clone(),
                    what: format!(
                        "reference count {stored}, but the store holds {counted} references to it"
                    ),
                    referrer: "the reference counts".into(),
                });
            }
            if n > list.len() as u64 {
                problems.push(Problem {
                    kind: "refcount",
                    id: "refcounts".into(),
                    what: format!("{} more reference counts are wrong", n - list.len() as u64),
                    referrer: "the reference counts".into(),
                });
            }
            true
        }
        Err(e) => {
            problems.push(Problem {
                kind: "refcount",
                id: "refcounts".into(),
                what: format!("the reference counts could not be checked: {e}"),
                referrer: "the reference counts".into(),
            });
            false
        }
    }
}

/// The snapshots that reach a problem: their record is damaged, or a tree or file under them
/// is damaged or missing (each distinct tree is read once more, only when there are problems).
fn damaged_snapshots(reader: &Reader, snapshots: &[(Id, Id)], problems: &[Problem]) -> Vec<Id> {
    let bad: FxHashSet<&str> = problems.iter().map(|p| p.id.as_str()).collect();
    let mut memo: FxHashMap<Id, bool> = FxHashMap::default();
    let mut out = Vec::new();
    for (sid, root) in snapshots {
        let by_referrer = format!("snapshot {}", sid.short());
        let named = problems.iter().any(|p| {
            p.referrer
                .strip_prefix(&by_referrer)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':']))
        });
        if named
            || bad.contains(sid.hex().as_str())
            || tree_damaged(reader, root, &bad, &mut memo, 0)
        {
            out.push(*sid);
        }
    }
    out
}

/// Whether the tree `id` or anything under it is unreadable or named by a problem.
fn tree_damaged(
    reader: &Reader,
    id: &Id,
    bad: &FxHashSet<&str>,
    memo: &mut FxHashMap<Id, bool>,
    depth: usize,
) -> bool {
    if let Some(&known) = memo.get(id) {
        return known;
    }
    // A tree that names itself below itself can only be damage; the depth bound keeps a
    // crafted store from exhausting the stack.
    let damaged = depth > 1024
        || bad.contains(id.hex().as_str())
        || match reader.tree(id) {
            Err(_) => true,
            Ok(tree) => tree.entries.iter().any(|e| {
                if e.kind == Kind::Dir {
                    tree_damaged(reader, &e.id, bad, memo, depth + 1)
                } else {
                    bad.contains(e.id.hex().as_str())
                }
            }),
        };
    memo.insert(*id, damaged);
    damaged
}

/// The referrer of an object nothing reaches.
const UNREFERENCED: &str = "nothing (the next gc deletes it)";

#[allow(clippy::too_many_arguments)]
fn walk_tree(
    reader: &Reader,
    id: &Id,
    path: &[u8],
    referrer: &str,
    full: bool,
    seen: &mut FxHashSet<Id>,
    blobs: &mut FxHashMap<Id, String>,
    problems: &mut Vec<Problem>,
    report: &mut VerifyReport,
) -> Result<()> {
    if !seen.insert(*id) {
        return Ok(());
    }
    report.trees += 1;
    let here = if path.is_empty() {
        format!("{referrer} (root)")
    } else {
        format!("{referrer}:{}", display(path))
    };
    let raw = match readable(problems, "tree", id, &here, reader.tree_raw(id))? {
        Found::Record(raw) => raw,
        Found::Unreadable => return Ok(()),
        Found::Missing => {
            problems.push(Problem {
                kind: "tree",
                id: id.hex(),
                what: "missing".into(),
                referrer: here,
            });
            return Ok(());
        }
    };
    if full && Id::of(&raw) != *id {
        problems.push(Problem {
            kind: "tree",
            id: id.hex(),
            what: "content does not match its id".into(),
            referrer: here.clone(),
        });
    }
    let tree = match Tree::decode(id, &raw) {
        Ok(t) => t,
        Err(e) => {
            problems.push(Problem {
                kind: "tree",
                id: id.hex(),
                what: e.to_string(),
                referrer: here,
            });
            return Ok(());
        }
    };
    for e in &tree.entries {
        let p = child_path(path, &e.name);
        if e.kind == Kind::Dir {
            walk_tree(
                reader, &e.id, &p, referrer, full, seen, blobs, problems, report,
            )?;
        } else {
            blobs
                .entry(e.id)
                .or_insert_with(|| format!("{referrer}:{}", display(&p)));
        }
    }
    Ok(())
}

fn span_ok(segments: &FxHashMap<u64, usize>, span: &Span) -> Result<(), String> {
    let mut left = span.len as usize;
    let (mut seg, mut off) = (span.segment, span.offset as usize);
    if off >= SEGMENT_SIZE && left > 0 {
        return Err(format!("offset {off} is beyond a segment"));
    }
    while left > 0 {
        let Some(&len) = segments.get(&seg) else {
            return Err(format!("segment {seg} is missing"));
        };
        if len <= off {
            return Err(format!("segment {seg} is shorter than its records say"));
        }
        left -= (len - off).min(left);
        seg += 1;
        off = 0;
    }
    Ok(())
}

/// What checking one blob found: problems, the chunks it lists, bytes hashed.
struct BlobCheck {
    problems: Vec<Problem>,
    chunks: Vec<Id>,
    hashed: u64,
}

/// What checking a blob or chunk needs: the read view, segment lengths, the mode, progress.
struct Checks<'a> {
    reader: &'a Reader,
    segments: &'a FxHashMap<u64, usize>,
    full: bool,
    progress: &'a dyn Progress,
}

impl Checks<'_> {
    /// Checks one blob: its record, its span or that its chunks exist, and in full mode its
    /// content hash (reading a chunked blob checks each chunk's hash too).
    fn blob(&self, id: &Id, referrer: &str) -> BlobCheck {
        let mut out = BlobCheck {
            problems: Vec::new(),
            chunks: Vec::new(),
            hashed: 0,
        };
        let mk = |kind: &'static str, id: &Id, what: String| Problem {
            kind,
            id: id.hex(),
            what,
            referrer: referrer.to_string(),
        };
        let record = match self.reader.blob_record(id) {
            Ok(Some(r)) => r,
            Ok(None) => {
                out.problems.push(mk("blob", id, "missing".into()));
                return out;
            }
            Err(e) => {
                out.problems.push(mk("blob", id, describe(e)));
                return out;
            }
        };
        match &record {
            BlobRecord::Whole { span, .. } | BlobRecord::Grouped { span, .. } => {
                if let Err(why) = span_ok(self.segments, span) {
                    out.problems.push(mk("blob", id, why));
                    return out;
                }
            }
            BlobRecord::Chunked { .. } | BlobRecord::Paged { .. } => {
                let list = match &record {
                    BlobRecord::Paged { pages, .. } => {
                        // The pages are chunks (checked in the chunk pass); reading them here
                        // checks their hashes and what they cover.
                        out.chunks.extend(pages.iter().map(|p| p.id));
                        match self.reader.read_pages(id, pages) {
                            Ok(list) => list,
                            Err(e) => {
                                out.problems.push(mk("blob", id, describe(e)));
                                return out;
                            }
                        }
                    }
                    BlobRecord::Chunked { chunks, .. } => chunks.clone(),
                    _ => Vec::new(),
                };
                // Each chunk's span and hash are checked once, in the chunk pass.
                for c in &list {
                    out.chunks.push(c.id);
                    match self.reader.has_chunk(&c.id) {
                        Ok(true) => {}
                        Ok(false) => out.problems.push(mk("chunk", &c.id, "missing".into())),
                        Err(e) => out.problems.push(mk("chunk", &c.id, describe(e))),
                    }
                }
                if !out.problems.is_empty() {
                    return out;
                }
            }
        }
        if self.full {
            // Streamed, so a huge chunked blob never sits in memory whole.
            let mut hasher = blake3::Hasher::new();
            // Store errors come out as themselves (a damaged chunk names the chunk).
            let copied = self.reader.write_blob(id, &mut hasher);
            match copied {
                Ok(n) => {
                    out.hashed = n;
                    self.progress.advance(n, 0);
                    if Id::from(hasher.finalize()) != *id {
                        out.problems
                            .push(mk("blob", id, "content does not match its id".into()));
                    }
                }
                // A damaged chunk is named as itself (the blob's other problems follow from it).
                Err(Error::Corrupt {
                    kind: "chunk",
                    id: chunk,
                    why,
                }) => out.problems.push(Problem {
                    kind: "chunk",
                    id: chunk,
                    what: why,
                    referrer: referrer.to_string(),
                }),
                Err(e) => out.problems.push(mk("blob", id, describe(e))),
            }
        }
        out
    }

    /// Checks one chunk record: its span, and with `hash` its content hash.
    fn chunk(&self, id: &Id, referrer: &str, hash: bool) -> (Option<Problem>, u64) {
        let mk = |what: String| Problem {
            kind: "chunk",
            id: id.hex(),
            what,
            referrer: referrer.to_string(),
        };
        let rec = match self.reader.chunk_record(id) {
            Ok(Some(r)) => r,
            Ok(None) => return (Some(mk("missing".into())), 0),
            Err(e) => return (Some(mk(describe(e))), 0),
        };
        if let Err(why) = span_ok(self.segments, &rec.span) {
            return (Some(mk(why)), 0);
        }
        if !hash {
            return (None, 0);
        }
        let len = u64::from(rec.len);
        match self.reader.read_chunk(&crate::store::blob::ChunkRef {
            id: *id,
            len: rec.len,
        }) {
            Ok(_) => (None, len),
            Err(e) => (Some(mk(describe(e))), len),
        }
    }
}

fn describe(e: Error) -> String {
    match e {
        Error::Corrupt { why, .. } => why,
        other => other.to_string(),
    }
}
