//! gc's recompression: small blobs rewritten with the store's zstd dictionary at a denser
//! level (see [`super::dict`] for why, and `gc` for when).
//!
//! Runs inside gc's write transaction, after the sweep and before the repack: new frames are
//! appended to the segment log and the blob records pointed at them, so the old bytes become
//! dead space that the repack then reclaims. Nothing is ever rewritten in place, and the
//! transaction commits whole or not at all: a gc killed halfway leaves every blob as it was.
//!
//! A blob is only rewritten when its content checks out against its id, and only kept in the
//! new form when that is smaller (a blob on a dictionary being retired is always moved off it).
//! A blob that does not decode is left alone for `verify` to report.

use rayon::prelude::*;
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};

use super::blob::{self, BlobRecord, SegmentWriter, Span};
use super::dict::{self, DENSE_MAX, DICTS};
use super::tables::{BLOBS, SEGMENTS};
use super::{next_segment, read_counter, write_counter};
use crate::error::Result;
use crate::id::Id;
use crate::progress::Progress;

/// Content bytes recompressed per batch: bounds gc's memory (the batch's content and frames
/// are held at once) while giving rayon enough work.
const BATCH_BYTES: u64 = 8 << 20;

/// What a recompression did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DenseReport {
    /// The dictionary trained by this gc, if it trained one.
    pub trained: Option<u32>,
    /// The dictionaries deleted because no blob uses them any more.
    pub dicts_removed: u64,
    /// Blobs rewritten.
    pub blobs: u64,
    /// Their encoded bytes before.
    pub bytes_before: u64,
    /// And after.
    pub bytes_after: u64,
}

/// A small whole blob as it is stored.
#[derive(Clone, Copy)]
struct Candidate {
    id: Id,
    size: u64,
    zstd: bool,
    dict: Option<u32>,
    span: Span,
}

/// Rewrites small blobs with the current dictionary at `level`, training one first when the
/// store has none or when most small content is not on it.
pub fn recompress(
    txn: &WriteTransaction,
    level: i32,
    progress: &dyn Progress,
) -> Result<DenseReport> {
    let mut report = DenseReport::default();
    let mut candidates: Vec<Candidate> = Vec::new();
    for item in txn.open_table(BLOBS)?.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        // A record gc cannot decode is left to `verify`; the mark already read the live ones.
        if let Ok(BlobRecord::Whole {
            size,
            zstd,
            dict,
            span,
        }) = blob::decode_blob(&id, v.value())
            && size > super::group::MEMBER_MAX
            && size <= DENSE_MAX
        {
            candidates.push(Candidate {
                id,
                size,
                zstd,
                dict,
                span,
            });
        }
    }
    let mut dicts = txn.open_table(DICTS)?;
    let mut current: Option<(u32, Vec<u8>)> =
        dicts.last()?.map(|(k, v)| (k.value(), v.value().to_vec()));
    let on_current = |c: &Candidate, cur: &Option<(u32, Vec<u8>)>| {
        c.dict.is_some() && c.dict == cur.as_ref().map(|(id, _)| *id)
    };
    let small: u64 = candidates.iter().map(|c| c.size).sum();
    let dense: u64 = candidates
        .iter()
        .filter(|c| on_current(c, &current))
        .map(|c| c.size)
        .sum();
    // Retrain when the dictionary no longer describes the store: most small content came
    // after it (a new project, a rewritten tree). Otherwise new blobs just join it.
    if small >= dict::MIN_TRAIN_BYTES && (current.is_none() || small - dense > 2 * dense) {
        let segments = txn.open_table(SEGMENTS)?;
        let samples = sample(&candidates, &segments, &dicts)?;
        let refs: Vec<&[u8]> = samples.iter().map(|s| s.as_slice()).collect();
        if let Some(d) = dict::train(&refs) {
            let id = u32::try_from(read_counter(txn, "next_dict")?.max(1)).unwrap_or(u32::MAX);
            dicts.insert(id, d.as_slice())?;
            write_counter(txn, "next_dict", u64::from(id) + 1)?;
            report.trained = Some(id);
            current = Some((id, d));
        }
    }
    let Some((dict_id, dict_bytes)) = current else {
        return Ok(report);
    };
    let Some(encoder) = dict::Encoder::new(&dict_bytes, level) else {
        return Ok(report);
    };
    candidates.retain(|c| !on_current(c, &Some((dict_id, Vec::new()))));
    let total: u64 = candidates.iter().map(|c| c.size).sum();
    progress.start("gc: recompress", total, 0);

    let mut segments = txn.open_table(SEGMENTS)?;
    let mut blobs = txn.open_table(BLOBS)?;
    let mut segw = SegmentWriter::new(next_segment(txn, &segments)?);
    let prepared = super::dict::Dictionaries::default();
    let mut batches = batches(&candidates).into_iter();
    let encoder = &encoder;
    super::overlap::overlapped(
        &mut (&mut segments, &mut blobs, &mut segw, &mut report),
        |(segments, ..)| {
            let Some(range) = batches.next() else {
                return Ok(None);
            };
            let batch = &candidates[range];
            let mut loaded = Vec::with_capacity(batch.len());
            for c in batch {
                let stored = blob::read_span(&**segments, "blob", &c.id, &c.span)?;
                let ddict = match c.dict {
                    Some(d) => prepared.get(Some(&dicts), d, &c.id).ok(),
                    None => None,
                };
                loaded.push((*c, stored, ddict));
            }
            Ok(Some((loaded, batch.iter().map(|c| c.size).sum())))
        },
        |loaded| recode(encoder, dict_id, loaded),
        |(segments, blobs, segw, report), done, bytes| {
            write(&done, segw, segments, blobs, report)?;
            progress.advance(bytes, 0);
            Ok(())
        },
    )?;
    super::finish_log(txn, segw, &mut segments)?;
    progress.finish();
    drop((blobs, segments, dicts));
    report.dicts_removed = drop_unused_dicts(txn)?;
    Ok(report)
}

/// Deletes the dictionaries no blob record names any more (they can never be needed again);
/// returns how many. gc calls it after its sweep whether or not it recompresses.
pub fn drop_unused_dicts(txn: &WriteTransaction) -> Result<u64> {
    let mut dicts = txn.open_table(DICTS)?;
    if dicts.is_empty()? {
        return Ok(0);
    }
    let blobs = txn.open_table(BLOBS)?;
    let mut used = rustc_hash::FxHashSet::default();
    for item in blobs.iter()? {
        let (k, v) = item?;
        if let Ok(BlobRecord::Whole { dict: Some(d), .. }) =
            blob::decode_blob(&Id(k.value()), v.value())
        {
            used.insert(d);
        }
    }
    let all: Vec<u32> = dicts
        .iter()?
        .map(|item| item.map(|(k, _)| k.value()))
        .collect::<std::result::Result<_, _>>()?;
    let mut removed = 0;
    for d in all {
        if !used.contains(&d) {
            dicts.remove(d)?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Splits `candidates` into runs of about [`BATCH_BYTES`] of content.
fn batches(candidates: &[Candidate]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < candidates.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < candidates.len() && bytes < BATCH_BYTES {
            bytes += candidates[end].size;
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// Decodes, checks and recompresses one batch in parallel; the blobs worth rewriting.
fn recode(
    encoder: &dict::Encoder,
    dict_id: u32,
    loaded: Vec<(
        Candidate,
        Vec<u8>,
        Option<std::sync::Arc<zstd::zstd_safe::DDict<'static>>>,
    )>,
) -> Vec<Rewritten> {
    loaded
        .into_par_iter()
        .map_init(
            || encoder.context(),
            |cctx, (c, stored, ddict)| {
                if c.dict.is_some() && ddict.is_none() {
                    return None;
                }
                let old_len = stored.len();
                let content =
                    blob::inflate_with("blob", &c.id, c.zstd, ddict.as_deref(), c.size, stored)
                        .ok()?;
                if Id::of(&content) != c.id {
                    return None;
                }
                let frame = dict::compress(cctx.as_mut()?, &content)?;
                // Moving off a retired dictionary is a must; otherwise only a gain counts.
                if frame.len() < old_len && frame.len() < content.len() {
                    Some(Rewritten {
                        c,
                        bytes: frame,
                        zstd: true,
                        dict: Some(dict_id),
                    })
                } else if c.dict.is_some() {
                    let p = blob::encode_payload(&content, 3);
                    Some(Rewritten {
                        c,
                        bytes: p.bytes,
                        zstd: p.zstd,
                        dict: None,
                    })
                } else {
                    None
                }
            },
        )
        .flatten()
        .collect()
}

/// Appends a batch's new frames to the log and points their blob records at them.
fn write(
    done: &[Rewritten],
    segw: &mut SegmentWriter,
    segments: &mut redb::Table<u64, &'static [u8]>,
    blobs: &mut redb::Table<[u8; 32], &'static [u8]>,
    report: &mut DenseReport,
) -> Result<()> {
    for r in done {
        let span = segw.append(&r.bytes, &mut |n, data| {
            segments.insert(n, data)?;
            Ok(())
        })?;
        blobs.insert(
            r.c.id.0,
            blob::encode_whole_record(r.c.size, r.zstd, r.dict, &span).as_slice(),
        )?;
        report.blobs += 1;
        report.bytes_before += u64::from(r.c.span.len);
        report.bytes_after += r.bytes.len() as u64;
    }
    Ok(())
}

/// A blob's new encoding.
struct Rewritten {
    c: Candidate,
    bytes: Vec<u8>,
    zstd: bool,
    dict: Option<u32>,
}

/// Training samples: the heads of candidates spread evenly over the id order (ids are
/// hashes, so that is a random sample of the store's small files), about
/// [`dict::SAMPLE_BYTES`] in all.
fn sample(
    candidates: &[Candidate],
    segments: &impl ReadableTable<u64, &'static [u8]>,
    dicts: &impl ReadableTable<u32, &'static [u8]>,
) -> Result<Vec<Vec<u8>>> {
    let total: u64 = candidates
        .iter()
        .map(|c| c.size.min(dict::SAMPLE_CAP as u64))
        .sum();
    let step = (total / dict::SAMPLE_BYTES as u64).max(1) as usize;
    let prepared = super::dict::Dictionaries::default();
    let mut out = Vec::new();
    for c in candidates.iter().step_by(step) {
        let Ok(stored) = blob::read_span(segments, "blob", &c.id, &c.span) else {
            continue;
        };
        let ddict = match c.dict {
            Some(d) => match prepared.get(Some(dicts), d, &c.id) {
                Ok(dd) => Some(dd),
                Err(_) => continue,
            },
            None => None,
        };
        if let Ok(content) =
            blob::inflate_with("blob", &c.id, c.zstd, ddict.as_deref(), c.size, stored)
        {
            // A copy, not a truncate: the whole blob's buffer (up to 4 MiB) would stay
            // allocated behind each sample.
            out.push(content[..content.len().min(dict::SAMPLE_CAP)].to_vec());
        }
    }
    Ok(out)
}
