//! Reference counts on real stores: after reverts, copies, moved directories, chunks shared
//! between versions of a large file, artifacts and forgets they equal a full count; a damaged
//! count is reported by verify; a store without counts is counted once when opened writable;
//! collecting what counts fell to zero deletes exactly what nothing reaches.

use std::fs;

use redb::ReadableTable;
use std::path::Path;

use super::refcount::CountCheck;
use super::tables::{BLOB_REFS, META, TREE_REFS};
use super::{Store, StoreOptions};
use crate::forget::{ForgetOptions, forget};
use crate::id::Id;
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;

fn snap(store: &Store, ws: &Path) -> Id {
    store
        .snapshot(ws, &SnapshotOptions::default(), &NoProgress)
        .unwrap()
        .report
        .id
        .unwrap()
}

/// The counts equal a full count of every holder.
fn exact(store: &Store) {
    match store.check_refcounts(10).unwrap() {
        CountCheck::Compared(list, n) => assert_eq!(n, 0, "{list:?}"),
        CountCheck::Stale => panic!("counts stale"),
        CountCheck::Absent => panic!("no counts"),
    }
}

fn write(ws: &Path, rel: &str, data: &[u8]) {
    let p = ws.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, data).unwrap();
}

/// Bytes that do not compress, so a large file is chunked.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn open(dir: &Path) -> Store {
    Store::open(dir, StoreOptions::default()).unwrap()
}

#[test]
fn counts_equal_a_full_count_through_reverts_copies_moves_chunks_and_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    write(ws.path(), "a/one.txt", b"one");
    write(ws.path(), "a/b/two.txt", b"two");
    write(ws.path(), "same1.txt", b"same");
    write(ws.path(), "same2.txt", b"same");
    let big = noise(7, 6 << 20);
    write(ws.path(), "big.bin", &big);
    let first = snap(&store, ws.path());
    exact(&store);
    // An edit, then its revert: the old content comes back.
    write(ws.path(), "a/one.txt", b"one changed");
    snap(&store, ws.path());
    write(ws.path(), "a/one.txt", b"one");
    snap(&store, ws.path());
    exact(&store);
    // A copy of a directory, then the original moved.
    fs::create_dir_all(ws.path().join("c")).unwrap();
    fs::copy(ws.path().join("a/b/two.txt"), ws.path().join("c/two.txt")).unwrap();
    fs::rename(ws.path().join("a/b"), ws.path().join("moved")).unwrap();
    snap(&store, ws.path());
    exact(&store);
    // The large file edited in its middle: the versions share most chunks.
    let mut edited = big.clone();
    edited[3 << 20] ^= 1;
    write(ws.path(), "big.bin", &edited);
    snap(&store, ws.path());
    exact(&store);
    // Artifacts: one naming a blob the trees hold, one replaced, one removed.
    crate::artifact::put(&store, "k1", &mut &b"same"[..], vec![], false).unwrap();
    crate::artifact::put(&store, "k2", &mut &b"x"[..], vec![], false).unwrap();
    crate::artifact::put(&store, "k2", &mut &b"y"[..], vec![], true).unwrap();
    crate::artifact::put(&store, "k3", &mut &big[..], vec![], false).unwrap();
    assert!(crate::store::artifact::remove(&store, "k1").unwrap());
    exact(&store);
    // Forgetting snapshots, then collecting what their counts released.
    forget(
        &store,
        &ForgetOptions {
            snapshots: vec![first],
            ..ForgetOptions::default()
        },
    )
    .unwrap();
    exact(&store);
    let txn = store.begin_write().unwrap();
    crate::gc::collect_unreferenced(&txn, 0.9, 1).unwrap();
    txn.commit().unwrap();
    exact(&store);
    let report = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.unreferenced, 0);
}

#[test]
fn eviction_collects_exactly_what_nothing_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut ids = Vec::new();
    for i in 0..6 {
        write(ws.path(), "keep.txt", b"kept in every snapshot");
        write(
            ws.path(),
            "d/edited.txt",
            format!("version {}", i % 3).as_bytes(),
        );
        write(
            ws.path(),
            &format!("new/{i}.txt"),
            format!("file {i}").as_bytes(),
        );
        if i == 3 {
            fs::remove_dir_all(ws.path().join("new")).unwrap();
        }
        ids.push(snap(&store, ws.path()));
    }
    forget(
        &store,
        &ForgetOptions {
            snapshots: ids[..4].to_vec(),
            ..ForgetOptions::default()
        },
    )
    .unwrap();
    let txn = store.begin_write().unwrap();
    crate::gc::collect_unreferenced(&txn, 0.9, 4).unwrap();
    txn.commit().unwrap();
    exact(&store);
    // What a full gc would still delete: nothing (verify counts what nothing reaches).
    let report = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.unreferenced, 0);
    // And every remaining snapshot restores whole: each of its blobs is there.
    let reader = store.reader().unwrap();
    for id in &ids[4..] {
        let root = reader.snapshot_record(id).unwrap().root;
        assert!(reader.has_tree(&root).unwrap());
    }
}

#[test]
fn a_damaged_count_is_reported_by_verify() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    write(ws.path(), "f.txt", b"content");
    let id = snap(&store, ws.path());
    let root = store.reader().unwrap().snapshot_record(&id).unwrap().root;
    let blob = Id::of(b"content");
    let txn = store.begin_write().unwrap();
    // One too few for the blob, one too many for the root tree.
    txn.open_table(BLOB_REFS).unwrap().remove(blob.0).unwrap();
    let n = txn
        .open_table(TREE_REFS)
        .unwrap()
        .get(root.0)
        .unwrap()
        .unwrap()
        .value();
    txn.open_table(TREE_REFS)
        .unwrap()
        .insert(root.0, n + 1)
        .unwrap();
    txn.commit().unwrap();
    let report = crate::verify::verify(&store, true, &NoProgress).unwrap();
    let counts: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.referrer == "the reference counts")
        .collect();
    assert_eq!(counts.len(), 2, "{:?}", report.problems);
    assert!(
        counts
            .iter()
            .any(|p| p.kind == "blob" && p.id == blob.hex())
    );
    assert!(
        counts
            .iter()
            .any(|p| p.kind == "tree" && p.id == root.hex())
    );
    // A gc counts again: the store is whole.
    let mut store = store;
    crate::gc::gc(&mut store, &crate::gc::GcOptions::default(), &NoProgress).unwrap();
    exact(&store);
}

#[test]
fn a_store_without_counts_is_counted_once_when_opened_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    write(ws.path(), "a/f.txt", b"one");
    write(ws.path(), "g.txt", b"two");
    let first = snap(&store, ws.path());
    write(ws.path(), "a/f.txt", b"three");
    snap(&store, ws.path());
    crate::artifact::put(&store, "k", &mut &b"art"[..], vec![], false).unwrap();
    // The store as a build before counts left it: no feature, no count tables, no stamp.
    let txn = store.begin_write().unwrap();
    for def in [TREE_REFS, BLOB_REFS, super::tables::CHUNK_REFS] {
        txn.delete_table(def).unwrap();
    }
    txn.delete_table(super::tables::UNREFERENCED).unwrap();
    {
        let mut meta = txn.open_table(META).unwrap();
        meta.remove("features").unwrap();
        meta.remove("refs_stamp").unwrap();
        meta.remove("refs_stale").unwrap();
    }
    txn.commit().unwrap();
    drop(store);
    let store = open(dir.path());
    assert_eq!(
        store.format().unwrap().features,
        vec![super::refcount::FEATURE]
    );
    exact(&store);
    // The counts work: forgetting the first snapshot frees its version of a/f.txt.
    forget(
        &store,
        &ForgetOptions {
            snapshots: vec![first],
            ..ForgetOptions::default()
        },
    )
    .unwrap();
    let txn = store.begin_write().unwrap();
    let r = crate::gc::collect_unreferenced(&txn, 0.9, 1).unwrap();
    txn.commit().unwrap();
    assert_eq!(r.blobs_removed, 1);
    assert!(!store.reader().unwrap().has_blob(&Id::of(b"one")).unwrap());
    exact(&store);
}

#[test]
fn a_writer_that_does_not_count_makes_the_counts_stale_and_a_collection_counts_again() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    write(ws.path(), "f.txt", b"content");
    let id = snap(&store, ws.path());
    let rec = store.reader().unwrap().snapshot_record(&id).unwrap();
    // A second record of the same tree, stored as a writer that does not count would.
    let other = crate::store::snapshot::SnapshotRecord {
        message: "uncounted".into(),
        ..rec
    };
    let bytes = other.encode().unwrap();
    let txn = store.begin_write_unchecked().unwrap();
    txn.open_table(super::tables::SNAPSHOTS)
        .unwrap()
        .insert(Id::of(&bytes).0, bytes.as_slice())
        .unwrap();
    txn.commit().unwrap();
    // Its root would be at one reference while two records hold it: the next write
    // transaction sees the tables' lengths moved and marks the counts stale.
    let txn = store.begin_write().unwrap();
    assert!(super::refcount::is_stale(&txn).unwrap());
    txn.commit().unwrap();
    assert!(matches!(
        store.check_refcounts(1).unwrap(),
        CountCheck::Stale
    ));
    // Forgetting the counted snapshot must not free the tree the other record holds.
    let txn = store.begin_write().unwrap();
    super::refcount::remove_snapshot(&txn, &id).unwrap();
    crate::gc::collect_unreferenced(&txn, 0.9, 0).unwrap();
    txn.commit().unwrap();
    assert!(store.reader().unwrap().has_tree(&other.root).unwrap());
    exact(&store);
}
