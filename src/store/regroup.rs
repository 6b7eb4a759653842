//! gc's regrouping: small blobs gathered into groups made at gc's denser level (see
//! [`super::group`] for what a group is and why).
//!
//! A snapshot groups what it reads at its fast level, in the order it reads (path order); it
//! cannot regroup what earlier snapshots stored, and forgetting snapshots leaves dead members
//! in groups. gc, inside its write transaction after the sweep and before the repack, rewrites:
//! - every group a snapshot made (tag 0x04), at gc's level;
//! - every group gc made (0x05) that lost members in this gc's sweep, so dead bytes go;
//! - gc's groups holding under a quarter of [`GROUP_BYTES`], merged, when there are two or
//!   more of them or anything else to regroup (a lone one is left alone: no churn);
//! - small blobs stored whole (written before groups existed, pulled from a remote, or
//!   artifacts), including those on a dictionary.
//!
//! Members keep their order (that of the log, hence the snapshots' path order), so neighbours
//! stay together. New frames are appended to the log and the member records pointed at them;
//! the old bytes become dead space that the repack reclaims. A blob whose content does not
//! check out against its id is left where it is, for `verify` to report, and so is every blob
//! of a group frame that does not decode. The transaction commits whole or not at all.

use rayon::prelude::*;
use redb::{ReadableTable, WriteTransaction};
use rustc_hash::{FxHashMap, FxHashSet};

use super::blob::{self, BlobRecord, SegmentWriter, Span};
use super::dict::DICTS;
use super::group::{self, GROUP_BYTES, Group, Sealed};
use super::next_segment;
use super::tables::{BLOBS, SEGMENTS};
use crate::error::Result;
use crate::id::Id;
use crate::progress::Progress;

/// Content regrouped per batch: the batch's groups are compressed in parallel while the next
/// batch is read, and two batches in flight bound the memory.
const BATCH_BYTES: usize = 8 << 20;

/// A group's start in the log: what names it among its members' records.
pub type GroupKey = (u64, u32);

/// The key of the group at `span`.
pub fn key(span: &Span) -> GroupKey {
    (span.segment, span.offset)
}

/// What regrouping did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegroupReport {
    /// Blobs moved into new groups.
    pub blobs: u64,
    /// Groups written.
    pub groups: u64,
    /// The encoded bytes the moved blobs took before (each old group counted once).
    pub bytes_before: u64,
    /// The new groups' bytes.
    pub bytes_after: u64,
}

/// A small blob to regroup, and where it is now.
#[derive(Clone, Copy)]
struct Small {
    id: Id,
    size: u64,
    span: Span,
    /// `Some(skip)` when it is in a group now.
    skip: Option<u32>,
    zstd: bool,
    dict: Option<u32>,
}

impl Small {
    fn order(&self) -> (u64, u32, u32) {
        (self.span.segment, self.span.offset, self.skip.unwrap_or(0))
    }
}

/// Regroups the small blobs described above at `level`. `lost` names the groups that lost
/// members in this gc's sweep.
pub fn regroup(
    txn: &WriteTransaction,
    level: i32,
    lost: &FxHashSet<GroupKey>,
    progress: &dyn Progress,
) -> Result<RegroupReport> {
    let mut report = RegroupReport::default();
    let mut smalls: Vec<Small> = Vec::new();
    // gc's own groups that did not lose members: their live bytes, and their members.
    let mut dense: FxHashMap<GroupKey, (u64, Vec<Small>)> = FxHashMap::default();
    for item in txn.open_table(BLOBS)?.iter()? {
        let (k, v) = item?;
        let id = Id(k.value());
        // A record gc cannot decode is left to `verify`; the mark already read the live ones.
        let Ok(record) = blob::decode_blob(&id, v.value()) else {
            continue;
        };
        match record {
            BlobRecord::Grouped {
                size,
                span,
                skip,
                dense: made_by_gc,
            } => {
                let s = Small {
                    id,
                    size,
                    span,
                    skip: Some(skip),
                    zstd: true,
                    dict: None,
                };
                if made_by_gc && !lost.contains(&key(&span)) {
                    let g = dense.entry(key(&span)).or_default();
                    g.0 += size;
                    g.1.push(s);
                } else {
                    smalls.push(s);
                }
            }
            BlobRecord::Whole {
                size,
                zstd,
                dict,
                span,
            } if group::joins(size) => smalls.push(Small {
                id,
                size,
                span,
                skip: None,
                zstd,
                dict,
            }),
            _ => {}
        }
    }
    let tiny: Vec<Vec<Small>> = dense
        .into_values()
        .filter(|(live, _)| *live < (GROUP_BYTES / 4) as u64)
        .map(|(_, members)| members)
        .collect();
    if tiny.len() >= 2 || !smalls.is_empty() {
        smalls.extend(tiny.into_iter().flatten());
    }
    if smalls.is_empty() {
        return Ok(report);
    }
    smalls.sort_unstable_by_key(Small::order);
    let total: u64 = smalls.iter().map(|s| s.size).sum();
    progress.start("gc: regroup", total, 0);

    let mut segments = txn.open_table(SEGMENTS)?;
    let mut blobs = txn.open_table(BLOBS)?;
    let dicts = txn.open_table(DICTS)?;
    let prepared = super::dict::Dictionaries::default();
    let mut segw = SegmentWriter::new(next_segment(txn, &segments)?);
    let mut counted: FxHashSet<GroupKey> = FxHashSet::default();
    // The group frame read last: members of one group are consecutive in `smalls`.
    let mut last: Option<(GroupKey, Option<Vec<u8>>)> = None;
    let mut rest = smalls.as_slice();
    // The group being filled: carried from batch to batch, so only the very last is partial.
    let mut open = Group::default();
    super::overlap::overlapped(
        &mut (&mut segments, &mut blobs, &mut segw, &mut report),
        |(segments, _, _, report)| {
            if rest.is_empty() && open.is_empty() {
                return Ok(None);
            }
            let mut full: Vec<Group> = Vec::new();
            let mut bytes = 0u64;
            while let Some((s, tail)) = rest.split_first() {
                if bytes >= BATCH_BYTES as u64 {
                    break;
                }
                rest = tail;
                bytes += s.size;
                let content = match s.skip {
                    Some(skip) => {
                        if last.as_ref().is_none_or(|(k, _)| *k != key(&s.span)) {
                            let frame = blob::read_span(&**segments, "blob", &s.id, &s.span)
                                .and_then(|stored| group::decode_frame("blob", &s.id, stored))
                                .ok();
                            last = Some((key(&s.span), frame));
                        }
                        last.as_ref()
                            .and_then(|(_, g)| g.as_deref())
                            .and_then(|g| group::member(g, &s.id, skip, s.size).ok())
                            .map(<[u8]>::to_vec)
                    }
                    None => {
                        let ddict = match s.dict {
                            Some(d) => prepared.get(Some(&dicts), d, &s.id).ok(),
                            None => None,
                        };
                        blob::read_span(&**segments, "blob", &s.id, &s.span)
                            .and_then(|stored| {
                                let dict = ddict.as_deref();
                                blob::inflate_with("blob", &s.id, s.zstd, dict, s.size, stored)
                            })
                            .ok()
                    }
                };
                // One that does not check out stays where it is.
                let Some(content) = content.filter(|c| Id::of(c) == s.id) else {
                    continue;
                };
                if counted.insert(key(&s.span)) {
                    report.bytes_before += u64::from(s.span.len);
                }
                if open.push(s.id, &content) {
                    full.push(std::mem::take(&mut open));
                }
            }
            if rest.is_empty() && !open.is_empty() {
                full.push(std::mem::take(&mut open));
            }
            Ok(Some((full, bytes)))
        },
        |groups| seal_all(groups, level),
        |(segments, blobs, segw, report), sealed, bytes| {
            write(sealed?, segw, segments, blobs, report)?;
            progress.advance(bytes, 0);
            Ok(())
        },
    )?;
    super::finish_log(txn, segw, &mut segments)?;
    progress.finish();
    Ok(report)
}

/// Compresses a batch's groups on rayon's pool.
fn seal_all(groups: Vec<Group>, level: i32) -> Result<Vec<Sealed>> {
    groups
        .into_par_iter()
        .filter_map(|mut g| g.seal(level).transpose())
        .collect()
}

/// Appends sealed groups to the log and points their members' records at them.
fn write(
    done: Vec<Sealed>,
    segw: &mut SegmentWriter,
    segments: &mut redb::Table<u64, &'static [u8]>,
    blobs: &mut redb::Table<[u8; 32], &'static [u8]>,
    report: &mut RegroupReport,
) -> Result<()> {
    for sealed in done {
        let span = segw.append(&sealed.frame, &mut |n, data| {
            segments.insert(n, data)?;
            Ok(())
        })?;
        for m in &sealed.members {
            blobs.insert(
                m.id.0,
                blob::encode_grouped(m.size, &span, m.skip, true).as_slice(),
            )?;
        }
        report.blobs += sealed.members.len() as u64;
        report.groups += 1;
        report.bytes_after += sealed.frame.len() as u64;
    }
    Ok(())
}
