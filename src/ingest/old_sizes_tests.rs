//! Stores made before the chunk sizes changed (issue 17c) keep working.

use super::*;
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;
use crate::store::StoreOptions;

/// Large files chunked before the chunk sizes changed (256 KiB min, 512 KiB average, 1 MiB
/// max), written the way the snapshots of that time wrote them: they read back byte for
/// byte, pass `verify --full`, an identical file dedups against them by its whole-file id,
/// and an edit of it is chunked with today's sizes beside them.
#[test]
fn large_blobs_chunked_with_the_old_sizes_read_back_and_dedup() {
    let mut data = vec![0u8; 12 << 20];
    blake3::Hasher::new()
        .update(b"old chunking")
        .finalize_xof()
        .fill(&mut data);
    let old: Vec<&[u8]> = fastcdc::v2020::FastCDC::new(&data, 256 << 10, 512 << 10, 1 << 20)
        .map(|c| &data[c.offset..c.offset + c.length])
        .collect();
    let new: Vec<Vec<u8>> = blob::chunker(&data[..]).map(|c| c.unwrap()).collect();
    assert_ne!(old.len(), new.len(), "the old sizes cut differently");

    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let id = Id::of(&data);
    let mut refs = Vec::new();
    let mut puts = Vec::new();
    for c in &old {
        let cref = ChunkRef {
            id: Id::of(c),
            len: c.len() as u32,
        };
        refs.push(cref);
        puts.push(Put::Chunk(cref.id, cref.len, blob::encode_payload(c, 3)));
    }
    puts.push(Put::Chunked(
        id,
        blob::encode_chunked(data.len() as u64, &refs),
    ));
    let mut sink = Sink::new(&store);
    sink.put(&puts).unwrap();
    sink.take_txn().unwrap().commit().unwrap();
    assert!(store.reader().unwrap().read_blob(&id).unwrap() == data);

    std::fs::write(ws.path().join("big.bin"), &data).unwrap();
    let opts = SnapshotOptions::default();
    let r = store
        .snapshot(ws.path(), &opts, &NoProgress)
        .unwrap()
        .report;
    // Found by its whole id. Its chunks, cut with today's sizes, were stored before the
    // whole id was known (the file is read once): unreferenced, gc deletes them.
    assert_eq!(r.new_blobs, 0, "found by its whole id");
    // (Where both sizes happen to cut at the same two points, the chunk was stored.)
    assert!(r.new_chunks > 0 && r.new_chunks <= new.len() as u64);
    let reader = store.reader().unwrap();
    let snap = reader.snapshot(&r.id.unwrap()).unwrap();
    assert_eq!(
        reader.lookup(&snap.root, b"big.bin").unwrap().unwrap().id,
        id
    );

    let mut edited = data.clone();
    edited[6 << 20..7 << 20].fill(b'x');
    std::fs::write(ws.path().join("big.bin"), &edited).unwrap();
    let r = store
        .snapshot(ws.path(), &opts, &NoProgress)
        .unwrap()
        .report;
    assert_eq!(r.new_blobs, 1);
    // Only the chunks around the edit are new: the rest were stored by the last snapshot.
    assert!(r.new_chunks <= 8, "{} new chunks", r.new_chunks);
    let reader = store.reader().unwrap();
    let snap = reader.snapshot(&r.id.unwrap()).unwrap();
    let e = reader.lookup(&snap.root, b"big.bin").unwrap().unwrap();
    assert!(reader.read_blob(&e.id).unwrap() == edited);
    assert!(
        reader.read_blob(&id).unwrap() == data,
        "the old blob still reads"
    );
    let v = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(v.chunks, reader.chunk_ids().unwrap().len() as u64);
    assert!(v.bytes_hashed >= (data.len() + edited.len()) as u64);
}
