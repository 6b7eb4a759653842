//! Push: send snapshots, tags and artifacts with only the objects the remote lacks.
//!
//! Order, so that a push killed anywhere leaves a readable remote and the next push completes
//! it: data packs, then tree packs, each pack before its index; then snapshot records; then
//! artifacts and tags. An object counts as on the remote only when an index lists it, so a
//! pack without its index is never relied on (gc removes it), and a snapshot record is only
//! written once every object it reaches is indexed.

use std::borrow::Cow;
use std::collections::HashSet;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::lock::Lock;
use super::pack::{ObjKind, PackBuilder};
use super::{PACK_TARGET, Remote, TransferProgress};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::progress::Phases;
use crate::store::artifact::Artifact;
use crate::store::blob::{self, BlobRecord};
use crate::store::tree::Kind;
use crate::store::{Reader, Store};

/// Stored bytes a push prepares at once on the rayon pool before appending them to its pack:
/// enough to keep every core busy between appends, little beside the packs in memory.
const PREPARE_BYTES: u64 = 8 << 20;

/// What to push.
#[derive(Clone, Debug, Default)]
pub struct PushOptions {
    /// Snapshots, with everything they reach.
    pub snapshots: Vec<Id>,
    /// Tags to set on the remote (name, snapshot); their snapshots must be in `snapshots`.
    pub tags: Vec<(String, Id)>,
    /// Artifacts to send, with their content.
    pub artifacts: Vec<Artifact>,
    /// Move remote tags that point elsewhere (without it they are reported and left alone).
    pub force: bool,
    /// How long to wait while a gc holds the remote.
    pub lock_timeout: Duration,
}

/// What a push did.
#[derive(Clone, Debug, Default)]
pub struct PushReport {
    /// Snapshot records written.
    pub snapshots_sent: u64,
    /// Snapshots the remote had already.
    pub snapshots_present: u64,
    /// Packs uploaded.
    pub packs: u64,
    /// Objects (blobs, chunks, trees) uploaded.
    pub objects: u64,
    /// Objects the remote had already.
    pub objects_present: u64,
    /// Bytes uploaded (packs, indexes, records).
    pub bytes_sent: u64,
    /// Tags set.
    pub tags_sent: Vec<String>,
    /// Tags left alone because the remote's points elsewhere (pass force).
    pub tags_refused: Vec<(String, Id)>,
    /// Tags another push moved while this one was moving them (with force): left as the
    /// other push set them (name, where they point now).
    pub tags_raced: Vec<(String, Id)>,
    /// Artifacts written.
    pub artifacts_sent: u64,
    /// Workspace logs written (merged into the remote's).
    pub logs: u64,
    /// Requests made.
    pub requests: u64,
    /// Wall time.
    pub seconds: f64,
    /// Seconds per phase (plan, data, records).
    pub phases: Vec<(&'static str, f64)>,
}

/// One object to send.
struct Item {
    kind: ObjKind,
    id: Id,
    zstd: bool,
    size: u64,
    span: Option<blob::Span>,
    inline: Option<Vec<u8>>,
    /// Compressed with one of the local store's dictionaries or in a group: a remote has
    /// neither, so the blob is decoded and sent as a plain frame (packs stay readable on their
    /// own, one object at a time).
    reencode: bool,
}

impl Item {
    fn stored_len(&self) -> u64 {
        if self.reencode {
            return self.size;
        }
        self.span
            .map(|s| u64::from(s.len))
            .or(self.inline.as_ref().map(|b| b.len() as u64))
            .unwrap_or(0)
    }
}

/// Collects what the remote lacks, in send order: data first, then trees.
fn plan(
    reader: &Reader,
    roots: &[Id],
    extra_blobs: &[Id],
    have: &HashSet<Id>,
    report: &mut PushReport,
) -> Result<(Vec<Item>, Vec<Item>)> {
    let mut seen: HashSet<Id> = HashSet::new();
    let mut data = Vec::new();
    let mut trees = Vec::new();
    let mut blobs: Vec<Id> = extra_blobs.to_vec();
    let mut stack: Vec<Id> = roots.to_vec();
    // Every tree is walked (local reads are cheap), so a tree that reached the remote without
    // its subtrees (two interleaved pushes) can never leave them missing.
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let tree = reader.tree(&id)?;
        if have.contains(&id) {
            report.objects_present += 1;
        } else {
            let raw = tree.encode()?;
            let payload = blob::encode_payload(&raw, 3);
            trees.push(Item {
                kind: ObjKind::Tree,
                id,
                zstd: payload.zstd,
                size: raw.len() as u64,
                span: None,
                inline: Some(payload.bytes),
                reencode: false,
            });
        }
        for e in &tree.entries {
            match e.kind {
                Kind::Dir => stack.push(e.id),
                _ => blobs.push(e.id),
            }
        }
    }
    for id in blobs {
        if !seen.insert(id) {
            continue;
        }
        if have.contains(&id) {
            report.objects_present += 1;
            continue;
        }
        let rec = reader.blob_record(&id)?.ok_or_else(|| Error::Missing {
            kind: "blob",
            id: id.hex(),
        })?;
        // A remote holds flat chunk lists: a paged one is sent as the list it pages.
        let rec = match rec {
            BlobRecord::Paged { size, pages } => BlobRecord::Chunked {
                size,
                chunks: reader.read_pages(&id, &pages)?,
            },
            other => other,
        };
        match rec {
            BlobRecord::Whole {
                size,
                zstd,
                dict,
                span,
            } => data.push(Item {
                kind: ObjKind::Blob,
                id,
                zstd,
                size,
                span: Some(span),
                inline: None,
                reencode: dict.is_some(),
            }),
            BlobRecord::Grouped { size, span, .. } => data.push(Item {
                kind: ObjKind::Blob,
                id,
                zstd: true,
                size,
                span: Some(span),
                inline: None,
                reencode: true,
            }),
            BlobRecord::Paged { .. } => unreachable!("made flat above"),
            BlobRecord::Chunked { size, chunks } => {
                for c in &chunks {
                    if !seen.insert(c.id) {
                        continue;
                    }
                    if have.contains(&c.id) {
                        report.objects_present += 1;
                        continue;
                    }
                    let cr = reader.chunk_record(&c.id)?.ok_or_else(|| Error::Missing {
                        kind: "chunk",
                        id: c.id.hex(),
                    })?;
                    data.push(Item {
                        kind: ObjKind::Chunk,
                        id: c.id,
                        zstd: cr.zstd,
                        size: u64::from(cr.len),
                        span: Some(cr.span),
                        inline: None,
                        reencode: false,
                    });
                }
                data.push(Item {
                    kind: ObjKind::ChunkedBlob,
                    id,
                    zstd: false,
                    size,
                    span: None,
                    inline: Some(blob::encode_chunked(size, &chunks)),
                    reencode: false,
                });
            }
        }
    }
    Ok((data, trees))
}

/// Sends `opts` to `remote`.
pub fn push(
    store: &Store,
    remote: &Remote,
    opts: &PushOptions,
    progress: &dyn TransferProgress,
    on_wait: &dyn Fn(&str),
) -> Result<PushReport> {
    let t0 = Instant::now();
    let mut phases = Phases::new(t0);
    let requests0 = remote.requests();
    let up0 = remote.bytes().0;
    let mut report = PushReport::default();
    remote.check_format(true)?;
    let lock = Lock::shared(remote, opts.lock_timeout, on_wait)?;
    // Read under the lock: no gc can delete what this listing shows until the lock is gone.
    let on_remote: HashSet<Id> = remote.snapshot_ids()?.into_iter().collect();
    let index = remote.load_index()?;
    let have: HashSet<Id> = index.objects.keys().copied().collect();
    let reader = store.reader()?;

    let mut roots = Vec::new();
    let mut records = Vec::new();
    for id in &opts.snapshots {
        if on_remote.contains(id) {
            report.snapshots_present += 1;
            continue;
        }
        let raw = reader.snapshot_raw(id)?.ok_or_else(|| Error::Missing {
            kind: "snapshot",
            id: id.hex(),
        })?;
        roots.push(reader.snapshot_record(id)?.root);
        records.push((*id, raw));
    }
    let artifact_blobs: Vec<Id> = opts.artifacts.iter().map(Artifact::blob).collect();
    let (data, trees) = plan(&reader, &roots, &artifact_blobs, &have, &mut report)?;
    phases.mark("plan");

    let total: u64 = data.iter().chain(&trees).map(Item::stored_len).sum();
    progress.start("push", total, (data.len() + trees.len()) as u64);
    let mut inflight: std::collections::VecDeque<super::Upload> = Default::default();
    for group in [&data, &trees] {
        let mut pack = remote.pack_builder();
        let mut rest: &[Item] = group;
        while !rest.is_empty() {
            let mut n = 0;
            let mut bytes = 0;
            while n < rest.len() && (n == 0 || bytes < PREPARE_BYTES) {
                bytes += rest[n].stored_len();
                n += 1;
            }
            let (batch, tail) = rest.split_at(n);
            rest = tail;
            // Reading, checking, re-encoding and sealing are most of a push's CPU: on the
            // rayon pool; appended in order, so a pack's bytes do not depend on the schedule.
            let ready: Vec<Result<Ready<'_>>> = batch
                .par_iter()
                .map(|item| prepare(&reader, &pack, item))
                .collect();
            for (item, r) in batch.iter().zip(ready) {
                let r = r?;
                pack.add_sealed(item.kind, item.id, r.zstd, item.size, &r.sealed);
                progress.advance(r.stored_len, 1);
                report.objects += 1;
                if pack.len() >= PACK_TARGET {
                    upload(remote, &mut pack, &mut inflight, &mut report)?;
                    lock.refresh()?;
                }
            }
        }
        if !pack.is_empty() {
            upload(remote, &mut pack, &mut inflight, &mut report)?;
        }
    }
    // Every pack and index is up before any record that reaches them is written.
    while let Some(up) = inflight.pop_front() {
        remote.wait(up)?;
    }
    progress.finish();
    phases.mark("data");
    for (id, raw) in records {
        remote.put(&format!("snapshots/{}", id.hex()), raw)?;
        report.snapshots_sent += 1;
    }
    for a in &opts.artifacts {
        let name = format!("artifacts/{}", super::artifact_object(a.key()));
        let bytes = crate::store::encode("artifact record", a.record())?;
        remote.put(&name, bytes)?;
        report.artifacts_sent += 1;
    }
    for (name, id) in &opts.tags {
        push_tag(remote, name, id, opts.force, &mut report)?;
    }
    // The workspaces' histories, now that every snapshot in them is on the remote.
    let mut on_remote = on_remote;
    on_remote.extend(opts.snapshots.iter().copied());
    report.logs = super::logs::push_logs(remote, &reader, &on_remote)?;
    drop(lock);
    report.requests = remote.requests() - requests0;
    report.bytes_sent = remote.bytes().0 - up0;
    report.seconds = t0.elapsed().as_secs_f64();
    phases.mark("records");
    report.phases = phases.done;
    Ok(report)
}

/// An object's bytes as its pack holds them.
struct Ready<'a> {
    /// Whether the stored bytes (before sealing) are a zstd frame.
    zstd: bool,
    /// Their length (what the progress counts).
    stored_len: u64,
    /// What goes into the pack.
    sealed: Cow<'a, [u8]>,
}

/// Reads `item` from the store, checks it against its id, re-encodes what only the local store
/// can decode and seals it for `pack`'s remote.
fn prepare<'a>(reader: &Reader, pack: &PackBuilder, item: &'a Item) -> Result<Ready<'a>> {
    let mut zstd = item.zstd;
    let stored: Cow<'a, [u8]> = match (&item.inline, &item.span) {
        (Some(b), _) => Cow::Borrowed(b),
        (None, Some(_)) if item.reencode => {
            // read_blob checks the content against its id, as check_local does.
            let payload = blob::encode_payload(&reader.read_blob(&item.id)?, 3);
            zstd = payload.zstd;
            Cow::Owned(payload.bytes)
        }
        (None, Some(span)) => {
            let stored = reader.read_span(item.kind.name(), &item.id, span)?;
            check_local(item, &stored)?;
            Cow::Owned(stored)
        }
        (None, None) => Cow::Borrowed(&[]),
    };
    let stored_len = stored.len() as u64;
    let sealed = pack.seal(item.kind, &item.id, zstd, item.size, stored)?;
    Ok(Ready {
        zstd,
        stored_len,
        sealed,
    })
}

/// Checks a blob or chunk read from the local store against its id before it is sent: a
/// damaged local store must not spread to the remote (every puller would reject it).
fn check_local(item: &Item, stored: &[u8]) -> Result<()> {
    let content = blob::inflate(item.kind.name(), &item.id, item.zstd, item.size, stored)?;
    if Id::of(&content) != item.id {
        return Err(Error::Corrupt {
            kind: item.kind.name(),
            id: item.id.hex(),
            why: "in the local store: its content does not match its id, so it is not pushed"
                .into(),
        });
    }
    Ok(())
}

fn upload(
    remote: &Remote,
    pack: &mut PackBuilder,
    inflight: &mut std::collections::VecDeque<super::Upload>,
    report: &mut PushReport,
) -> Result<()> {
    while inflight.len() >= super::PARALLEL {
        if let Some(up) = inflight.pop_front() {
            remote.wait(up)?;
        }
    }
    let (bytes, index) = pack.take();
    inflight.push_back(remote.upload_pack(bytes, &index)?);
    report.packs += 1;
    Ok(())
}

/// Sets a remote tag: created with put-if-absent, moved only with `force`, and then only
/// from the value this push read (a conditional update on its version): of two forced moves
/// at once, one wins and the other is reported in `tags_raced`, never silently overwritten.
fn push_tag(
    remote: &Remote,
    name: &str,
    id: &Id,
    force: bool,
    report: &mut PushReport,
) -> Result<()> {
    let key = format!("refs/{name}");
    let value = id.hex().into_bytes();
    if remote.put_if_absent(&key, value.clone())? {
        report.tags_sent.push(name.to_string());
        return Ok(());
    }
    let moved = match remote.get_versioned(&key)? {
        // Forgotten since the put-if-absent: created again, or someone else's creation won.
        None => remote.put_if_absent(&key, value)?,
        Some((bytes, version)) => {
            let old = super::parse_tag(remote, name, &bytes)?;
            if old == *id {
                return Ok(());
            }
            if !force {
                report.tags_refused.push((name.to_string(), old));
                return Ok(());
            }
            remote.put_if_version(&key, value, version)?
        }
    };
    if moved {
        report.tags_sent.push(name.to_string());
    } else if let Some(now) = remote.tag(name)? {
        report.tags_raced.push((name.to_string(), now));
    }
    Ok(())
}
