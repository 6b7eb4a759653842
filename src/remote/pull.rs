//! Pull: bring snapshots (and tags, artifacts) from a remote with only the objects the local
//! store lacks.
//!
//! Every object is checked against its id as it arrives (`super::pack::check`); a chunked
//! blob's id, the hash of its whole content, is checked once its chunks are stored, before
//! anything references it. Blobs and chunks are committed in batches of about
//! [`BATCH_BYTES`]; trees, chunk lists, snapshot records, tags and artifacts in one last
//! transaction, so a pull that fails (a damaged pack, a lost connection) leaves no snapshot
//! pointing at anything missing, only unreferenced objects a local gc removes.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use redb::{ReadableTable, WriteTransaction};

use super::pack::{Entry, ObjKind};
use super::{Location, Remote, RemoteIndex, TransferProgress};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Store;
use crate::store::artifact::Artifact;
use crate::store::blob::{self, BlobRecord, SegmentWriter};
use crate::store::refcount::{self, Counts, Obj};
use crate::store::snapshot::SnapshotRecord;
use crate::store::tables::{ARTIFACTS, BLOBS, CHUNKS, REFS, SEGMENTS, SNAPSHOTS, TREES};
use crate::store::tree::{Kind, Tree};

/// Stored bytes gathered before a commit.
pub const BATCH_BYTES: usize = 64 << 20;

/// What to pull.
#[derive(Clone, Debug, Default)]
pub struct PullOptions {
    /// Snapshots on the remote.
    pub snapshots: Vec<Id>,
    /// Tags to set locally (name, snapshot); a local tag pointing elsewhere is left alone.
    pub tags: Vec<(String, Id)>,
    /// Artifacts to bring; a local artifact of the same key is left alone.
    pub artifacts: Vec<Artifact>,
    /// Workspace logs go to local workspaces of the same path; these map a remote workspace
    /// path (raw bytes) to a local one instead, registered if needed (see `super::logs`).
    pub workspace_map: Vec<(Vec<u8>, std::path::PathBuf)>,
}

/// What a pull did.
#[derive(Clone, Debug, Default)]
pub struct PullReport {
    /// Snapshot records added.
    pub snapshots_received: u64,
    /// Snapshots the store had already.
    pub snapshots_present: u64,
    /// Objects (trees, blobs, chunks) added.
    pub objects: u64,
    /// Bytes downloaded.
    pub bytes_received: u64,
    /// Tags set.
    pub tags_set: Vec<String>,
    /// Tags left alone because the local one points elsewhere.
    pub tags_kept: Vec<(String, Id)>,
    /// Artifacts added.
    pub artifacts_received: u64,
    /// Local workspaces whose log gained snapshots: (path, how many).
    pub logs_appended: Vec<(std::path::PathBuf, u64)>,
    /// Requests made.
    pub requests: u64,
    /// Wall time.
    pub seconds: f64,
}

fn locate(index: &RemoteIndex, remote: &Remote, kind: &'static str, id: &Id) -> Result<Location> {
    index
        .objects
        .get(id)
        .copied()
        .ok_or_else(|| Error::RemoteObjectMissing {
            remote: remote.name.clone(),
            kind,
            id: id.hex(),
        })
}

pub(super) fn by_pack(locs: impl IntoIterator<Item = Location>) -> Vec<(Id, Vec<Entry>)> {
    let mut m: HashMap<Id, Vec<Entry>> = HashMap::new();
    for l in locs {
        m.entry(l.pack).or_default().push(l.entry);
    }
    let mut v: Vec<_> = m.into_iter().collect();
    v.sort_by_key(|(p, _)| *p);
    v
}

/// Brings `opts` from `remote` into `store`.
pub fn pull(
    store: &Store,
    remote: &Remote,
    opts: &PullOptions,
    progress: &dyn TransferProgress,
) -> Result<PullReport> {
    let t0 = Instant::now();
    let requests0 = remote.requests();
    let down0 = remote.bytes().1;
    let mut report = PullReport::default();
    remote.check_format(false)?;
    let epoch = store.reader()?.gc_epoch()?;
    let index = remote.load_index()?;
    let routed = super::logs::route(&super::logs::logs(remote)?, &opts.workspace_map);
    let reader = store.reader()?;

    // 1. Snapshot records, each checked against its id.
    let mut records: Vec<(Id, Vec<u8>, SnapshotRecord)> = Vec::new();
    let mut frontier: Vec<Id> = Vec::new();
    for id in &opts.snapshots {
        if reader.snapshot_raw(id)?.is_some() {
            report.snapshots_present += 1;
            continue;
        }
        let rec = remote.snapshot(id)?.ok_or_else(|| Error::Remote {
            remote: remote.name.clone(),
            why: format!("no snapshot {} on the remote", id.short()),
        })?;
        frontier.push(rec.root);
        records.push((*id, rec.encode()?, rec));
    }

    // 2. Trees, a level at a time; a tree the store has brings its whole subtree with it.
    let mut seen: HashSet<Id> = HashSet::new();
    let mut trees: Vec<(Id, Vec<u8>)> = Vec::new();
    let mut blobs: Vec<Id> = opts.artifacts.iter().map(Artifact::blob).collect();
    while !frontier.is_empty() {
        let mut locs = Vec::new();
        for id in std::mem::take(&mut frontier) {
            if seen.insert(id) && !reader.has_tree(&id)? {
                locs.push(locate(&index, remote, "tree", &id)?);
            }
        }
        remote.fetch_many(by_pack(locs), &mut |e, _, content| {
            let tree = Tree::decode(&e.id, &content)?;
            for te in tree.entries {
                match te.kind {
                    Kind::Dir => frontier.push(te.id),
                    _ => blobs.push(te.id),
                }
            }
            trees.push((e.id, content));
            Ok(())
        })?;
    }

    // 3. Which blobs and chunks are missing; chunk lists first, to learn their chunks.
    let mut whole = Vec::new();
    let mut lists = Vec::new();
    for id in blobs {
        if !seen.insert(id) || reader.has_blob(&id)? {
            continue;
        }
        let loc = locate(&index, remote, "blob", &id)?;
        if loc.entry.kind == ObjKind::ChunkedBlob {
            lists.push(loc);
        } else {
            whole.push(loc);
        }
    }
    let mut chunked: Vec<(Id, Vec<u8>, Vec<blob::ChunkRef>)> = Vec::new();
    remote.fetch_many(by_pack(lists), &mut |e, _, content| {
        if let BlobRecord::Chunked { chunks, .. } = blob::decode_blob(&e.id, &content)? {
            for c in &chunks {
                if seen.insert(c.id) && !reader.has_chunk(&c.id)? {
                    whole.push(locate(&index, remote, "chunk", &c.id)?);
                }
            }
            chunked.push((e.id, content, chunks));
        }
        Ok(())
    })?;
    drop(reader);

    // 4. The data, in batches.
    let total: u64 = whole.iter().map(|l| u64::from(l.entry.len)).sum();
    progress.start("pull", total, whole.len() as u64);
    let mut batch: Vec<(Entry, Vec<u8>)> = Vec::new();
    let mut batch_bytes = 0usize;
    remote.fetch_many(by_pack(whole), &mut |e, stored, _| {
        batch_bytes += stored.len();
        batch.push((*e, stored.to_vec()));
        progress.advance(stored.len() as u64, 1);
        if batch_bytes >= BATCH_BYTES {
            commit_data(store, &mut batch, &mut report)?;
            batch_bytes = 0;
        }
        Ok(())
    })?;
    commit_data(store, &mut batch, &mut report)?;
    progress.finish();

    // 5. A chunked blob's id is the hash of all its chunks: check it before it is referenced.
    check_chunked(store, remote, &chunked)?;

    // 6. Everything that references the data, in one transaction.
    let txn = store.begin_write()?;
    if crate::store::epoch_in(&txn)? != epoch {
        return Err(Error::ConcurrentGc("pull"));
    }
    report.objects += store_holders(&txn, &trees, &chunked)?;
    for (id, raw, _) in &records {
        let root = SnapshotRecord::decode(id, raw)?.root;
        refcount::insert_snapshot(&txn, id, raw, &root)?;
        report.snapshots_received += 1;
    }
    set_tags(&txn, &opts.tags, &mut report)?;
    append_logs(&txn, &routed, &mut report)?;
    {
        let mut a = txn.open_table(ARTIFACTS)?;
        let mut counts = Counts::open(&txn)?;
        for art in &opts.artifacts {
            if a.get(art.key())?.is_none() {
                let bytes = crate::store::encode("artifact record", art.record())?;
                a.insert(art.key(), bytes.as_slice())?;
                counts.add(Obj::Blob, &art.blob())?;
                report.artifacts_received += 1;
            }
        }
    }
    refcount::seal(&txn)?;
    txn.commit()?;
    report.requests = remote.requests() - requests0;
    report.bytes_received = remote.bytes().1 - down0;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// Stores the fetched trees and chunk lists the store lacks in `txn`, counting what each holds
/// (see `store::refcount`); returns how many it stored. A holder another process stored
/// meanwhile is not counted twice.
pub(super) fn store_holders(
    txn: &WriteTransaction,
    trees: &[(Id, Vec<u8>)],
    chunked: &[(Id, Vec<u8>, Vec<blob::ChunkRef>)],
) -> Result<u64> {
    let mut stored = 0;
    let mut counts = Counts::open(txn)?;
    let mut t = txn.open_table(TREES)?;
    for (id, raw) in trees {
        if t.insert(id.0, raw.as_slice())?.is_none() {
            counts.add_tree(&Tree::decode(id, raw)?)?;
            stored += 1;
        }
    }
    let mut b = txn.open_table(BLOBS)?;
    for (id, rec, chunks) in chunked {
        if b.get(id.0)?.is_none() {
            b.insert(id.0, rec.as_slice())?;
            let held: Vec<Id> = chunks.iter().map(|c| c.id).collect();
            counts.add_chunks(&held)?;
            stored += 1;
        }
    }
    Ok(stored)
}

/// Checks each chunked blob's id, the hash of its whole content, against its chunks as the
/// store now holds them.
pub(super) fn check_chunked(
    store: &Store,
    remote: &Remote,
    chunked: &[(Id, Vec<u8>, Vec<blob::ChunkRef>)],
) -> Result<()> {
    let reader = store.reader()?;
    for (id, _, chunks) in chunked {
        let mut h = blake3::Hasher::new();
        for c in chunks {
            h.update(&reader.read_chunk(c)?);
        }
        if Id::from(h.finalize()) != *id {
            return Err(chunks_do_not_add_up(remote, id));
        }
    }
    Ok(())
}

/// A chunked blob on `remote` whose chunks, each intact, are not the blob `id` together.
pub(super) fn chunks_do_not_add_up(remote: &Remote, id: &Id) -> Error {
    Error::Corrupt {
        kind: "blob",
        id: id.hex(),
        why: format!(
            "on remote {}: its chunks do not add up to its id",
            remote.name
        ),
    }
}

fn set_tags(txn: &WriteTransaction, tags: &[(String, Id)], report: &mut PullReport) -> Result<()> {
    let snaps = txn.open_table(SNAPSHOTS)?;
    let mut refs = txn.open_table(REFS)?;
    for (name, id) in tags {
        if crate::revision::validate_tag(name).is_err() || snaps.get(id.0)?.is_none() {
            continue;
        }
        let old = refs.get(name.as_str())?.map(|v| Id(v.value()));
        match old {
            Some(o) if o == *id => {}
            Some(o) => report.tags_kept.push((name.clone(), o)),
            None => {
                refs.insert(name.as_str(), id.0)?;
                report.tags_set.push(name.clone());
            }
        }
    }
    Ok(())
}

/// Appends each routed log's snapshots (those the store has, not yet in the workspace's log)
/// to the local workspace's log, in the log's order.
fn append_logs(
    txn: &WriteTransaction,
    routed: &[(std::path::PathBuf, bool, Vec<Id>)],
    report: &mut PullReport,
) -> Result<()> {
    use crate::store::tables::{WORKSPACES, WS_LOG};
    use std::os::unix::ffi::OsStrExt;
    for (path, register, ids) in routed {
        let found = txn
            .open_table(WORKSPACES)?
            .get(path.as_os_str().as_bytes())?
            .map(|v| crate::store::decode_workspace(v.value()))
            .transpose()?;
        let mut ws = match found {
            Some(ws) => ws,
            None if *register => crate::store::register_in(txn, path)?,
            None => continue,
        };
        let mut have: HashSet<Id> = HashSet::new();
        for item in txn
            .open_table(WS_LOG)?
            .range((ws.id, 0)..=(ws.id, u64::MAX))?
        {
            have.insert(Id(item?.1.value()));
        }
        let mut added = 0;
        for id in ids {
            let known = txn.open_table(SNAPSHOTS)?.get(id.0)?.is_some();
            if known && have.insert(*id) {
                crate::store::append_log(txn, ws.clone(), *id)?;
                ws.next_seq += 1;
                added += 1;
            }
        }
        if added > 0 {
            report.logs_appended.push((path.clone(), added));
        }
    }
    Ok(())
}

/// Writes checked blobs and chunks through the segment log in one transaction.
pub(super) fn commit_data(
    store: &Store,
    batch: &mut Vec<(Entry, Vec<u8>)>,
    report: &mut PullReport,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let txn = store.begin_write()?;
    let next = crate::store::next_segment(&txn, &txn.open_table(SEGMENTS)?)?;
    let mut segw = SegmentWriter::new(next);
    {
        let mut segments = txn.open_table(SEGMENTS)?;
        let mut flush = |n: u64, data: &[u8]| -> Result<()> {
            segments.insert(n, data)?;
            Ok(())
        };
        let mut blobs = txn.open_table(BLOBS)?;
        let mut chunks = txn.open_table(CHUNKS)?;
        for (e, stored) in batch.drain(..) {
            let present = match e.kind {
                ObjKind::Chunk => chunks.get(e.id.0)?.is_some(),
                _ => blobs.get(e.id.0)?.is_some(),
            };
            if present {
                continue;
            }
            let span = segw.append(&stored, &mut flush)?;
            match e.kind {
                ObjKind::Chunk => {
                    let rec = blob::encode_chunk(e.size as u32, e.zstd, &span);
                    chunks.insert(e.id.0, rec.as_slice())?;
                }
                _ => {
                    let rec = blob::encode_whole(e.size, e.zstd, &span);
                    blobs.insert(e.id.0, rec.as_slice())?;
                }
            }
            report.objects += 1;
        }
        let next = segw.finish(&mut flush)?;
        drop(segments);
        crate::store::write_counter(&txn, "next_segment", next)?;
    }
    // Data holds nothing: the counts stay as they are, and the stamp says so.
    refcount::seal(&txn)?;
    txn.commit()?;
    Ok(())
}
