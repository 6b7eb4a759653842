//! Large files' chunking: `blob::chunker` cuts any input into chunks within the sizes that
//! concatenate back to it, and stores made before the chunk sizes changed keep
//! working.

use super::*;
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;
use crate::store::StoreOptions;
use proptest::prelude::*;

/// Large files chunked before the chunk sizes changed (256 KiB min, 512 KiB average, 1 MiB
/// max), written the way the snapshots of that time wrote them: they read back byte for
/// byte, pass `verify --full`, an identical file stores nothing, and an edit of it keeps
/// being cut with the old sizes, so it stores only the chunks around the edit.
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
        refs.iter().map(|c| c.id).collect(),
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
    // Found by its whole id, and cut with the sizes its stored chunks were cut with, so no
    // chunk is stored again either.
    assert_eq!((r.new_blobs, r.new_chunks), (0, 0), "found by its whole id");
    let reader = store.reader().unwrap();
    let snap = reader.snapshot_record(&r.id.unwrap()).unwrap();
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
    // Only the chunks around the edit are new (cut with the old sizes, as the file was): the
    // rest are the old blob's.
    assert!(r.new_chunks <= 5, "{} new chunks", r.new_chunks);
    assert!(r.stored_bytes <= 5 << 20, "{} bytes stored", r.stored_bytes);
    let reader = store.reader().unwrap();
    let snap = reader.snapshot_record(&r.id.unwrap()).unwrap();
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

/// Random bytes with runs of one byte (where no content-defined cut is found and the maximum
/// cuts), `len` long.
fn content(seed: u64, len: usize, runs: &[(usize, usize)]) -> Vec<u8> {
    let mut data = vec![0u8; len];
    blake3::Hasher::new()
        .update(&seed.to_le_bytes())
        .finalize_xof()
        .fill(&mut data);
    for &(at, n) in runs {
        let at = at % len.max(1);
        let end = (at + n).min(len);
        data[at..end].fill(7);
    }
    data
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_chunker_cuts_any_input_into_chunks_within_the_sizes(
        seed in any::<u64>(),
        len in prop_oneof![0usize..200_000, 0usize..(3 << 20)],
        runs in proptest::collection::vec((any::<usize>(), 0usize..(2 << 20)), 0..3),
    ) {
        let data = content(seed, len, &runs);
        let chunks: Vec<Vec<u8>> = blob::chunker(&data[..]).map(|c| c.unwrap()).collect();
        prop_assert_eq!(chunks.concat(), data.clone());
        for (i, c) in chunks.iter().enumerate() {
            prop_assert!(!c.is_empty());
            prop_assert!(c.len() <= blob::CHUNK_MAX as usize);
            if i + 1 < chunks.len() {
                prop_assert!(c.len() >= blob::CHUNK_MIN as usize, "chunk {} of {}", i, c.len());
            }
        }
    }
}

#[test]
fn the_same_bytes_after_a_prefix_cut_the_same_way_once_back_in_step() {
    let data = content(3, 8 << 20, &[]);
    let mut shifted = content(4, 5000, &[]);
    shifted.extend_from_slice(&data);
    let ids = |d: &[u8]| -> Vec<Id> { blob::chunker(d).map(|c| Id::of(&c.unwrap())).collect() };
    let (a, b) = (ids(&data), ids(&shifted));
    let shared = b.iter().filter(|id| a.contains(id)).count();
    // Seeded, so always the same: all but the first one or two chunks are shared.
    assert!(
        shared + 3 >= a.len(),
        "{shared} of {} chunks shared",
        a.len()
    );
}

/// Stores `data` cut into chunks of `piece` bytes as one blob whose chunk list is in pages, the
/// way a snapshot of a file of more than `blob::PAGED_ABOVE` chunks does; returns its id.
fn store_paged(store: &Store, data: &[u8], piece: usize) -> Id {
    let mut puts = Vec::new();
    let mut refs = Vec::new();
    for c in data.chunks(piece) {
        let r = ChunkRef {
            id: Id::of(c),
            len: c.len() as u32,
        };
        refs.push(r);
        puts.push(Put::Chunk(r.id, r.len, blob::encode_payload(c, 3)));
    }
    let mut pages = Vec::new();
    for (p, bytes) in blob::paged(&refs) {
        pages.push(p);
        let len = bytes.len() as u32;
        puts.push(Put::Chunk(p.id, len, Payload { zstd: false, bytes }));
    }
    assert!(pages.len() > 2, "{} pages", pages.len());
    let id = Id::of(data);
    puts.push(Put::Chunked(
        id,
        blob::encode_paged(data.len() as u64, &pages),
        refs.iter().chain(&pages).map(|c| c.id).collect(),
    ));
    let mut sink = Sink::new(store);
    sink.put(&puts).unwrap();
    sink.take_txn().unwrap().commit().unwrap();
    id
}

/// A chunk list in pages reads back byte for byte, verifies (pages included), keeps its pages
/// and chunks through a gc while something reaches it, and gc deletes them all once nothing
/// does.
#[test]
fn a_paged_chunk_list_reads_back_verifies_and_is_collected_through_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    // 6,000 chunks of 100 bytes: several pages of ~1,024.
    let data = content(9, 600_000, &[]);
    let id = store_paged(&store, &data, 100);
    assert!(store.reader().unwrap().read_blob(&id).unwrap() == data);
    // A snapshot of the same file finds it by its id.
    std::fs::write(ws.path().join("big.bin"), &data).unwrap();
    let opts = SnapshotOptions::default();
    let r = store
        .snapshot(ws.path(), &opts, &NoProgress)
        .unwrap()
        .report;
    assert_eq!((r.new_blobs, r.new_chunks), (0, 0));
    let v = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(v.unreferenced, 0, "the pages count as referenced");
    let chunks = store.reader().unwrap().chunk_ids().unwrap().len();
    let g = crate::gc::gc(&mut store, &Default::default(), &NoProgress).unwrap();
    assert_eq!(g.chunks_removed, 0, "{g:?}");
    assert!(store.reader().unwrap().read_blob(&id).unwrap() == data);

    // Nothing reaches it any more: the blob, its pages and its chunks go.
    std::fs::write(ws.path().join("big.bin"), b"small now").unwrap();
    store.snapshot(ws.path(), &opts, &NoProgress).unwrap();
    let forget = crate::forget::ForgetOptions {
        snapshots: vec![r.id.unwrap()],
        undo_depth: 0,
        ..Default::default()
    };
    let f = crate::forget::forget(&store, &forget).unwrap();
    assert_eq!(f.forgotten.len(), 1, "{f:?}");
    let g = crate::gc::gc(&mut store, &Default::default(), &NoProgress).unwrap();
    assert_eq!(g.chunks_removed as usize, chunks, "{g:?}");
    assert!(store.reader().unwrap().blob_record(&id).unwrap().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Pages partition the list within their sizes, and are content-defined: replacing a few
    /// chunks in the middle leaves every page away from the change as it was.
    #[test]
    fn pages_partition_a_chunk_list_and_an_edit_changes_only_the_pages_it_touches(
        seed in any::<u64>(),
        n in 0usize..20_000,
        at in any::<usize>(),
        new in 1usize..8,
        gone in 0usize..8,
    ) {
        let id = |i: u64| Id::of(&[seed.to_le_bytes(), i.to_le_bytes()].concat());
        let refs: Vec<ChunkRef> = (0..n as u64).map(|i| ChunkRef { id: id(i), len: 1 }).collect();
        let pages = blob::pages(&refs);
        prop_assert_eq!(pages.concat(), refs.clone());
        for (i, p) in pages.iter().enumerate() {
            prop_assert!(p.len() <= 4000);
            prop_assert!(i + 1 == pages.len() || p.len() >= 256);
        }
        if n < 4 * 4000 {
            return Ok(());
        }
        let at = at % (n - 8);
        let mut edited = refs[..at].to_vec();
        edited.extend((0..new as u64).map(|i| ChunkRef { id: id(1 << 40 | i), len: 1 }));
        edited.extend_from_slice(&refs[at + gone..]);
        let key = |p: &[ChunkRef]| blob::encode_page(p);
        let before: std::collections::HashSet<Vec<u8>> = pages.iter().map(|p| key(p)).collect();
        let changed = blob::pages(&edited).iter().filter(|p| !before.contains(&key(p))).count();
        prop_assert!(changed <= 3, "{} pages changed", changed);
    }
}
