//! `StoreOptions::skip_close`: a handle dropped without redb's close leaves the file as a
//! process killed after its last commit would, and everything committed stays there.

use super::{Store, StoreOptions};
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;

fn skipping() -> StoreOptions {
    StoreOptions {
        skip_close: true,
        ..StoreOptions::default()
    }
}

#[test]
fn handles_dropped_without_close_lose_nothing_and_block_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let first = {
        let store = Store::open(dir.path(), skipping()).unwrap();
        let id = store
            .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
            .unwrap()
            .report
            .id
            .unwrap();
        store.set_tag("one", &id, false).unwrap();
        id
        // Dropped unclosed: its file stays open until the test process ends, as in `run`.
    };
    std::fs::write(ws.path().join("a.txt"), "two\n").unwrap();
    let second = {
        let store = Store::open(dir.path(), skipping()).unwrap();
        assert_eq!(store.reader().unwrap().tag("one").unwrap(), Some(first));
        store
            .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
            .unwrap()
            .report
            .id
            .unwrap()
    };
    assert_ne!(first, second);
    // A handle that closes sees both, and the unclosed handles of this process hold no
    // transaction that would keep a compaction (`gc` after `run`) from running.
    let mut store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let reader = store.reader().unwrap();
    assert_eq!(reader.tag("one").unwrap(), Some(first));
    let root = crate::workspace::canonical(ws.path(), false, &[]).unwrap();
    assert_eq!(
        reader.workspace(&root).unwrap().unwrap().record().next_seq,
        2
    );
    drop(reader);
    let compacted = store.compact();
    assert!(compacted.is_ok(), "{compacted:?}");
}
