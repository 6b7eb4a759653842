//! Verifying a store: every object decodes, every reference resolves, and (with `full`) every
//! blob's, chunk's, tree's and snapshot's content matches its id.
//!
//! Problems are collected, not fatal: each names the object and what refers to it, so a user
//! knows which snapshots a damaged object affects. The walk visits each tree and blob once.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::id::Id;
use crate::progress::Progress;
use crate::store::blob::{BlobRecord, SEGMENT_SIZE, Span};
use crate::store::tree::{Kind, Tree};
use crate::store::{Reader, Store};
use crate::util::{child_path, display};

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
    /// Everything wrong.
    pub problems: Vec<Problem>,
}

/// Checks the store; `full` also re-hashes every object's content.
pub fn verify(store: &Store, full: bool, progress: &dyn Progress) -> Result<VerifyReport> {
    let reader = store.reader()?;
    let segments = reader.segment_lengths()?;
    let mut report = VerifyReport::default();
    let mut problems = Vec::new();
    let mut seen_trees: FxHashSet<Id> = FxHashSet::default();
    // blob id -> the first place that refers to it.
    let mut blobs: FxHashMap<Id, String> = FxHashMap::default();

    let snapshots = reader.all_snapshots()?;
    for sid in &snapshots {
        report.snapshots += 1;
        let referrer = format!("snapshot {}", sid.short());
        let Some(raw) = reader.snapshot_raw(sid)? else {
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
        walk_tree(
            &reader,
            &rec.root,
            b"",
            &referrer,
            full,
            &mut seen_trees,
            &mut blobs,
            &mut problems,
            &mut report,
        )?;
    }
    for (name, id) in reader.tags()? {
        if reader.snapshot_raw(&id)?.is_none() {
            problems.push(Problem {
                kind: "snapshot",
                id: id.hex(),
                what: "missing".into(),
                referrer: format!("tag {name}"),
            });
        }
    }
    for (ws, seq, id) in reader.ws_log_entries()? {
        if reader.snapshot_raw(&id)?.is_none() {
            problems.push(Problem {
                kind: "snapshot",
                id: id.hex(),
                what: "missing".into(),
                referrer: format!("workspace {ws} log entry {seq}"),
            });
        }
    }

    // Blobs: records, spans, chunks; content hashes in full mode (on all cores).
    report.blobs = blobs.len() as u64;
    let total: u64 = if full {
        blobs
            .keys()
            .filter_map(|id| reader.blob_size(id).ok())
            .sum()
    } else {
        0
    };
    progress.start("verify", total);
    let list: Vec<(&Id, &String)> = blobs.iter().collect();
    let results: Vec<(Vec<Problem>, u64, u64)> = list
        .par_iter()
        .map(|(id, referrer)| check_blob(&reader, &segments, id, referrer, full, progress))
        .collect();
    progress.finish();
    for (p, chunks, hashed) in results {
        problems.extend(p);
        report.chunks += chunks;
        report.bytes_hashed += hashed;
    }
    report.problems = problems;
    Ok(report)
}

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
    let Some(raw) = reader.tree_raw(id)? else {
        problems.push(Problem {
            kind: "tree",
            id: id.hex(),
            what: "missing".into(),
            referrer: here,
        });
        return Ok(());
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

fn check_blob(
    reader: &Reader,
    segments: &FxHashMap<u64, usize>,
    id: &Id,
    referrer: &str,
    full: bool,
    progress: &dyn Progress,
) -> (Vec<Problem>, u64, u64) {
    let mut problems: Vec<Problem> = Vec::new();
    let mk = |kind: &'static str, id: &Id, what: String| Problem {
        kind,
        id: id.hex(),
        what,
        referrer: referrer.to_string(),
    };
    let (mut chunks, mut hashed) = (0, 0);
    let record = match reader.blob_record(id) {
        Ok(Some(r)) => r,
        Ok(None) => {
            problems.push(mk("blob", id, "missing".into()));
            return (problems, 0, 0);
        }
        Err(e) => {
            problems.push(mk("blob", id, describe(e)));
            return (problems, 0, 0);
        }
    };
    match &record {
        BlobRecord::Whole { span, .. } => {
            if let Err(why) = span_ok(segments, span) {
                problems.push(mk("blob", id, why));
                return (problems, 0, 0);
            }
        }
        BlobRecord::Chunked { chunks: list, .. } => {
            for c in list {
                chunks += 1;
                match reader.chunk_record(&c.id) {
                    Ok(Some(rec)) => {
                        if let Err(why) = span_ok(segments, &rec.span) {
                            problems.push(mk("chunk", &c.id, why));
                        } else if full {
                            match reader.read_chunk(c) {
                                Ok(bytes) if Id::of(&bytes) == c.id => {}
                                Ok(_) => problems.push(mk(
                                    "chunk",
                                    &c.id,
                                    "content does not match its id".into(),
                                )),
                                Err(e) => problems.push(mk("chunk", &c.id, describe(e))),
                            }
                        }
                    }
                    Ok(None) => problems.push(mk("chunk", &c.id, "missing".into())),
                    Err(e) => problems.push(mk("chunk", &c.id, describe(e))),
                }
            }
            if !problems.is_empty() {
                return (problems, chunks, 0);
            }
        }
    }
    if full {
        // Streamed, so a huge chunked blob never sits in memory whole.
        let mut hasher = blake3::Hasher::new();
        let copied = reader.blob_reader(id).and_then(|mut r| {
            std::io::copy(&mut r, &mut hasher).map_err(|e| Error::Corrupt {
                kind: "blob",
                id: id.hex(),
                why: e.to_string(),
            })
        });
        match copied {
            Ok(n) => {
                hashed = n;
                progress.advance(n);
                if Id::from(hasher.finalize()) != *id {
                    problems.push(mk("blob", id, "content does not match its id".into()));
                }
            }
            Err(e) => problems.push(mk("blob", id, describe(e))),
        }
    }
    (problems, chunks, hashed)
}

fn describe(e: Error) -> String {
    match e {
        Error::Corrupt { why, .. } => why,
        other => other.to_string(),
    }
}
