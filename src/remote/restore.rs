//! `restore --remote` into an empty directory, straight from the fetched packs.
//!
//! A pull followed by a local restore decompresses every blob twice (once to check it, once
//! to write it) and writes it through the store before reading it back. Here each whole blob
//! is written to its files as soon as it is checked, on the rayon pool while the next ranges
//! download, and its stored bytes go to a thread that imports them into the store (so the
//! store ends with the snapshot, as after a pull, and `status`, `diff` and `undo` work).
//! Chunked blobs are written from their chunks once those are imported, hashed as they are
//! written (one pass over their data); blobs the store already had, from the store.
//!
//! Nothing is half-restored: files are written into a temporary directory inside the target
//! (named with the scan's temporary prefix, so no snapshot takes it and a killed restore's
//! leftover is recognised), and moved into place only once every object has been checked and
//! the import has committed. A damaged object fails the restore with the directory as empty
//! as it was.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::pack::{Entry, ObjKind};
use super::pull::{PullReport, commit_data, store_holders};
use super::{Location, Remote, TransferProgress};
use crate::error::{Error, IoContext, Result};
use crate::files::Beneath;
use crate::id::Id;
use crate::progress::Phases;
use crate::store::Store;
use crate::store::blob::{self, BlobRecord};
use crate::store::oplog::{self, OpRecord};
use crate::store::refcount;
use crate::store::tree::{Kind, Tree};

/// Hand-overs the import thread may lag behind the download by (it bounds memory: this many
/// times [`HANDOVER_BYTES`], and a little more).
const IMPORT_QUEUE: usize = 64;

/// Stored bytes handed to the import thread at once.
const HANDOVER_BYTES: usize = 1 << 20;

/// What a restore from a remote did.
#[derive(Clone, Debug, Default)]
pub struct RemoteRestoreReport {
    /// The snapshot restored.
    pub snapshot: Id,
    /// Files and symlinks written.
    pub written: u64,
    /// Their bytes.
    pub bytes_written: u64,
    /// Objects (trees, blobs, chunks) imported into the store.
    pub objects: u64,
    /// Bytes downloaded.
    pub bytes_received: u64,
    /// Requests made.
    pub requests: u64,
    /// The operation recorded (`rewind undo` empties the directory again).
    pub op: u64,
    /// Wall time.
    pub seconds: f64,
    /// Seconds per phase (trees, lists, data, chunked, local, commit, place).
    pub phases: Vec<(&'static str, f64)>,
}

/// One file or symlink to write: its path below the root, kind and blob.
struct File {
    path: Vec<u8>,
    kind: Kind,
    id: Id,
    size: u64,
}

/// Whether `root` holds nothing at all (the only case this module handles).
pub fn is_empty_dir(root: &Path) -> Result<bool> {
    Ok(std::fs::read_dir(root).at(root)?.next().is_none())
}

/// Restores snapshot `id` of `remote` into `root`, an empty directory, importing into `store`
/// what it lacks; records the restore as an operation on the workspace `root`.
pub fn restore_empty(
    store: &Store,
    remote: &Remote,
    id: Id,
    root: &Path,
    progress: &dyn TransferProgress,
) -> Result<RemoteRestoreReport> {
    let t0 = Instant::now();
    let mut phases = Phases::new(t0);
    let requests0 = remote.requests();
    let down0 = remote.bytes().1;
    let root = crate::workspace::for_store(store, root, false)?;
    if !is_empty_dir(&root)? {
        return Err(Error::RestoreTargetNotEmpty(root.to_path_buf()));
    }
    remote.check_format(false)?;
    let epoch = store.reader()?.gc_epoch()?;
    let index = remote.load_index()?;
    let reader = store.reader()?;
    let have_snapshot = reader.snapshot_raw(&id)?.is_some();
    let record = match reader.snapshot_raw(&id)? {
        Some(_) => reader.snapshot_record(&id)?,
        None => remote.snapshot(&id)?.ok_or_else(|| Error::Remote {
            remote: remote.name.clone(),
            why: format!("no snapshot {} on the remote", id.short()),
        })?,
    };
    let locate = |kind: &'static str, id: &Id| -> Result<Location> {
        index.objects.get(id).copied().ok_or_else(|| Error::Remote {
            remote: remote.name.clone(),
            why: format!("{kind} {} is in no pack on the remote", id.hex()),
        })
    };

    // 1. Trees, a level at a time, with the paths they sit at.
    let mut dirs: Vec<Vec<u8>> = Vec::new();
    let mut files: Vec<File> = Vec::new();
    let mut new_trees: Vec<(Id, Vec<u8>)> = Vec::new();
    let mut level: Vec<(Id, Vec<u8>)> = vec![(record.root, Vec::new())];
    while !level.is_empty() {
        let mut at: HashMap<Id, Vec<Vec<u8>>> = HashMap::new();
        let mut fetch = Vec::new();
        let mut got: Vec<(Id, Tree)> = Vec::new();
        for (tid, path) in std::mem::take(&mut level) {
            let first = !at.contains_key(&tid);
            at.entry(tid).or_default().push(path);
            if !first {
                continue;
            }
            if reader.has_tree(&tid)? {
                got.push((tid, reader.tree(&tid)?));
            } else {
                fetch.push(locate("tree", &tid)?);
            }
        }
        remote.fetch_many(super::pull::by_pack(fetch), &mut |e, _, content| {
            got.push((e.id, Tree::decode(&e.id, &content)?));
            new_trees.push((e.id, content));
            Ok(())
        })?;
        for (tid, tree) in got {
            for parent in &at[&tid] {
                for te in &tree.entries {
                    let mut path = parent.clone();
                    if !path.is_empty() {
                        path.push(b'/');
                    }
                    path.extend_from_slice(&te.name);
                    match te.kind {
                        Kind::Dir => {
                            dirs.push(path.clone());
                            level.push((te.id, path));
                        }
                        kind => files.push(File {
                            path,
                            kind,
                            id: te.id,
                            size: te.size,
                        }),
                    }
                }
            }
        }
    }

    phases.mark("trees");

    // 2. Which blobs come from the remote whole, which are chunked (their lists first).
    let mut by_blob: rustc_hash::FxHashMap<Id, Vec<usize>> = Default::default();
    for (i, f) in files.iter().enumerate() {
        by_blob.entry(f.id).or_default().push(i);
    }
    let mut whole = Vec::new();
    let mut lists = Vec::new();
    let mut later: Vec<Id> = Vec::new(); // blobs the store has: written from it
    for bid in by_blob.keys() {
        if reader.has_blob(bid)? {
            later.push(*bid);
            continue;
        }
        let loc = locate("blob", bid)?;
        if loc.entry.kind == ObjKind::ChunkedBlob {
            lists.push(loc);
        } else {
            whole.push(loc);
        }
    }
    let mut seen_chunks = std::collections::HashSet::new();
    let mut chunked: Vec<(Id, Vec<u8>, Vec<blob::ChunkRef>)> = Vec::new();
    remote.fetch_many(super::pull::by_pack(lists), &mut |e, _, content| {
        if let BlobRecord::Chunked { chunks, .. } = blob::decode_blob(&e.id, &content)? {
            for c in &chunks {
                if seen_chunks.insert(c.id) && !reader.has_chunk(&c.id)? {
                    whole.push(locate("chunk", &c.id)?);
                }
            }
            chunked.push((e.id, content, chunks));
        }
        Ok(())
    })?;
    drop(reader);
    phases.mark("lists");

    // 3. A private directory inside the target, with the tree's directories.
    let staging = tempfile::Builder::new()
        .prefix(crate::scan::walk::TEMP_PREFIX)
        .tempdir_in(&root)
        .at(&root)?;
    let base = staging.path().to_path_buf();
    // Written through descriptors: a process in the target directory cannot redirect a write
    // by swapping a directory of the staging tree for a symlink.
    let stage = Beneath::open(&base)?;
    for d in &dirs {
        stage.make_dir(d)?;
    }

    // 4. The data: files written as their blobs are checked, stored bytes imported meanwhile.
    let total: u64 = whole.iter().map(|l| u64::from(l.entry.len)).sum();
    progress.start("restore", total, whole.len() as u64);
    let written = AtomicU64::new(0);
    let bytes_written = AtomicU64::new(0);
    let mut import = PullReport::default();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(Entry, Vec<u8>)>>(IMPORT_QUEUE);
    let fetched = std::thread::scope(|s| {
        let importer = s.spawn(|| -> Result<PullReport> {
            let mut report = PullReport::default();
            let mut batch = Vec::new();
            let mut batch_bytes = 0;
            for handed in rx {
                for (e, stored) in handed {
                    batch_bytes += stored.len();
                    batch.push((e, stored));
                }
                if batch_bytes >= super::pull::BATCH_BYTES {
                    commit_data(store, &mut batch, &mut report)?;
                    batch_bytes = 0;
                }
            }
            commit_data(store, &mut batch, &mut report)?;
            Ok(report)
        });
        let write_files = |e: &Entry, _: &[u8], content: Vec<u8>| -> Result<()> {
            if e.kind != ObjKind::Blob {
                return Ok(());
            }
            for &i in by_blob.get(&e.id).map(Vec::as_slice).unwrap_or_default() {
                let f = &files[i];
                stage.create_new(&f.path, f.kind, &content)?;
                written.fetch_add(1, Ordering::Relaxed);
                bytes_written.fetch_add(f.size, Ordering::Relaxed);
            }
            Ok(())
        };
        // Handed over a few at a time: one message (and at most one wake-up of the importer)
        // per HANDOVER_BYTES rather than per object.
        let mut handing = Vec::new();
        let mut handing_bytes = 0;
        let sent = remote.fetch_many_with(
            super::pull::by_pack(whole),
            &write_files,
            &mut |e, stored, ()| {
                progress.advance(stored.len() as u64, 1);
                handing_bytes += stored.len();
                handing.push((*e, stored.into_owned()));
                if handing_bytes >= HANDOVER_BYTES {
                    handing_bytes = 0;
                    // A closed channel means the importer failed: its error is the one reported.
                    let _ = tx.send(std::mem::take(&mut handing));
                }
                Ok(())
            },
        );
        let _ = tx.send(handing);
        drop(tx);
        let imported = importer.join().unwrap_or_else(|_| {
            Err(Error::Remote {
                remote: remote.name.clone(),
                why: "the import thread panicked".into(),
            })
        });
        sent.and(imported)
    });
    progress.finish();
    import.objects += fetched?.objects;
    phases.mark("data");

    // 5. Chunked blobs, written from their chunks (each checked as the import stored it) and
    // hashed as they are written: their id is the hash of the whole, checked before anything
    // refers to them. One pass over their data, on the rayon pool.
    let reader = store.reader()?;
    chunked
        .par_iter()
        .try_for_each(|(bid, _, chunks)| -> Result<()> {
            for &i in &by_blob[bid] {
                let f = &files[i];
                let mut content = Hashing::new(reader.chunks_reader(chunks.clone()));
                stage.write(&f.path, f.kind, &mut content)?;
                if content.id() != *bid {
                    return Err(super::pull::chunks_do_not_add_up(remote, bid));
                }
                written.fetch_add(1, Ordering::Relaxed);
                bytes_written.fetch_add(f.size, Ordering::Relaxed);
            }
            Ok(())
        })?;
    phases.mark("chunked");

    // 6. Blobs the store had, from the store.
    later
        .par_iter()
        .flat_map(|bid| by_blob[bid].par_iter())
        .try_for_each(|&i| -> Result<()> {
            let f = &files[i];
            crate::restore::write_entry_beneath(&reader, &stage, &f.path, f.kind, &f.id)?;
            written.fetch_add(1, Ordering::Relaxed);
            bytes_written.fetch_add(f.size, Ordering::Relaxed);
            Ok(())
        })?;
    drop(reader);
    phases.mark("local");

    // 7. Trees, chunk lists and the snapshot record, in one transaction.
    let txn = store.begin_write()?;
    if crate::store::epoch_in(&txn)? != epoch {
        return Err(Error::ConcurrentGc("remote restore"));
    }
    import.objects += store_holders(&txn, &new_trees, &chunked)?;
    if !have_snapshot {
        refcount::insert_snapshot(&txn, &id, &record.encode()?, &record.root)?;
    }
    refcount::seal(&txn)?;
    txn.commit()?;
    phases.mark("commit");

    // 8. Into place, then recorded as the workspace's state.
    move_into(&stage, &root)?;
    drop(staging);
    let txn = store.begin_write()?;
    let ws = crate::store::register_in(&txn, &root)?;
    crate::store::append_log(&txn, ws, id)?;
    let root_bytes = root.as_os_str().as_bytes().to_vec();
    let op = oplog::record(
        &txn,
        OpRecord::new(store, "restore", root_bytes, None, Some(id)),
    )?;
    txn.commit()?;
    phases.mark("place");
    Ok(RemoteRestoreReport {
        snapshot: id,
        written: written.into_inner(),
        bytes_written: bytes_written.into_inner(),
        objects: import.objects,
        bytes_received: remote.bytes().1 - down0,
        requests: remote.requests() - requests0,
        op,
        seconds: t0.elapsed().as_secs_f64(),
        phases: phases.done,
    })
}

/// Moves each entry of the staging tree into `to` (which must not have gained one of the same
/// name: the rename refuses to replace anything).
fn move_into(stage: &Beneath, to: &Path) -> Result<()> {
    let target = Beneath::open(to)?;
    let from = stage.root();
    for item in std::fs::read_dir(from).at(from)? {
        let item = item.at(from)?;
        let name = item.file_name();
        let name = name.as_bytes();
        stage.move_to(name, &target, name).map_err(|e| match e {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
                Error::AppearedWhileRestoring {
                    path: to.join(std::ffi::OsStr::from_bytes(name)),
                    into: to.to_path_buf(),
                }
            }
            other => other,
        })?;
    }
    Ok(())
}

/// Hashes what it reads: a chunked blob's content checked as it is written.
struct Hashing<R> {
    inner: R,
    hasher: blake3::Hasher,
}

impl<R: std::io::Read> Hashing<R> {
    fn new(inner: R) -> Hashing<R> {
        Hashing {
            inner,
            hasher: blake3::Hasher::new(),
        }
    }

    /// The id of what was read.
    fn id(&self) -> Id {
        Id::from(self.hasher.finalize())
    }
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::pack::{Index, PackBuilder};
    use crate::remote::push::{PushOptions, push};
    use crate::remote::{NoTransferProgress, Remote};

    /// A chunk list whose chunks are each intact but together are not the blob it names (two
    /// swapped): the restore refuses it, naming the blob, and leaves the directory empty.
    #[test]
    fn a_chunk_list_that_does_not_add_up_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let mut big = vec![0u8; 6 << 20];
        blake3::Hasher::new()
            .update(b"noise")
            .finalize_xof()
            .fill(&mut big);
        std::fs::write(ws.join("big.bin"), &big).unwrap();
        std::fs::write(ws.join("small.txt"), b"small\n").unwrap();
        let store = Store::open(&tmp.path().join("store"), Default::default()).unwrap();
        let opts = crate::snapshot::SnapshotOptions::default();
        let snap = store
            .snapshot(&ws, &opts, &crate::progress::NoProgress)
            .unwrap()
            .report
            .id
            .unwrap();
        let dir = tmp.path().join("remote");
        std::fs::create_dir(&dir).unwrap();
        let url = format!("file://{}", dir.display());
        let remote = Remote::open("r", &url).unwrap();
        let push_opts = PushOptions {
            snapshots: vec![snap],
            ..PushOptions::default()
        };
        push(&store, &remote, &push_opts, &NoTransferProgress, &|_| {}).unwrap();

        // Every pack rewritten as it was, but for the chunk list: its first two chunks swapped.
        let mut forged = 0;
        for item in std::fs::read_dir(dir.join("index")).unwrap() {
            let path = item.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let pack_id = Id::from_hex(&name).unwrap();
            let index = Index::decode(&pack_id, &std::fs::read(&path).unwrap()).unwrap();
            let pack_path = dir.join("packs").join(&name);
            let bytes = std::fs::read(&pack_path).unwrap();
            let mut b = PackBuilder::new(None);
            for e in &index.entries {
                let stored = &bytes[e.offset as usize..][..e.len as usize];
                let stored = match blob::decode_blob(&e.id, stored) {
                    Ok(BlobRecord::Chunked { size, mut chunks })
                        if e.kind == ObjKind::ChunkedBlob =>
                    {
                        assert!(chunks.len() > 1, "the file is chunked in several");
                        chunks.swap(0, 1);
                        forged += 1;
                        blob::encode_chunked(size, &chunks)
                    }
                    _ => stored.to_vec(),
                };
                b.add(e.kind, e.id, e.zstd, e.size, &stored).unwrap();
            }
            let (new_bytes, new_index) = b.take();
            std::fs::remove_file(&path).unwrap();
            std::fs::remove_file(&pack_path).unwrap();
            let new_name = new_index.pack.hex();
            std::fs::write(dir.join("packs").join(&new_name), new_bytes).unwrap();
            std::fs::write(
                dir.join("index").join(&new_name),
                new_index.encode().unwrap(),
            )
            .unwrap();
        }
        assert_eq!(forged, 1);

        let store2 = Store::open(&tmp.path().join("store2"), Default::default()).unwrap();
        let dest = tmp.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        let remote = Remote::open("r", &url).unwrap();
        let err = restore_empty(&store2, &remote, snap, &dest, &NoTransferProgress).unwrap_err();
        assert!(err.to_string().contains("do not add up to its id"), "{err}");
        assert_eq!(
            std::fs::read_dir(&dest).unwrap().count(),
            0,
            "nothing restored"
        );
    }
}
