//! Malformed counters in `meta` are reported as damage, never read as a default.

use super::tables::META;
use super::{Store, StoreOptions};
use crate::error::Error;
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;

fn store_with_one_snapshot() -> (tempfile::TempDir, tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap();
    (dir, ws, store)
}

fn set_meta(store: &Store, name: &str, value: &[u8]) {
    let txn = store.begin_write().unwrap();
    txn.open_table(META).unwrap().insert(name, value).unwrap();
    txn.commit().unwrap();
}

fn assert_corrupt_counter(err: Error, name: &str) {
    match err {
        Error::Corrupt { kind, id, .. } => {
            assert_eq!(kind, "meta counter");
            assert_eq!(id, name);
        }
        other => panic!("expected a damaged {name}, got {other:?}"),
    }
}

#[test]
fn a_next_segment_at_a_live_segment_is_corrupt() {
    let (_dir, ws, store) = store_with_one_snapshot();
    set_meta(&store, "next_segment", &0u64.to_le_bytes());
    std::fs::write(ws.path().join("b.txt"), "two\n").unwrap();
    let err = store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap_err();
    assert_corrupt_counter(err, "next_segment");
}

#[test]
fn a_short_op_counter_is_corrupt() {
    let (_dir, ws, store) = store_with_one_snapshot();
    set_meta(&store, "next_op_id", b"\x01\x02\x03");
    std::fs::write(ws.path().join("b.txt"), "two\n").unwrap();
    let err = store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap_err();
    assert_corrupt_counter(err, "next_op_id");
}

#[test]
fn a_short_workspace_counter_is_corrupt() {
    let (_dir, _ws, store) = store_with_one_snapshot();
    set_meta(&store, "next_workspace_id", b"");
    let other = tempfile::tempdir().unwrap();
    let err = store
        .snapshot(other.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap_err();
    assert_corrupt_counter(err, "next_workspace_id");
}
