//! Groups at the library level: stores made before groups (small blobs stored whole, each its
//! own frame) keep reading and gc regroups them; gc's repack moves a group frame with every
//! member that names it.

use super::*;
use crate::gc::{GcOptions, gc};
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;
use crate::store::StoreOptions;
use crate::store::blob::{BlobRecord, Span};

/// Small source-like files, each a little different.
fn files(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            format!(
                "// SPDX-License-Identifier: GPL-2.0\n#include <linux/module.h>\n\
                 static int probe_{i}(struct device *dev)\n{{\n\treturn {};\n}}\n",
                i * 7919 % 1000
            )
            .repeat(1 + i % 5)
            .into_bytes()
        })
        .collect()
}

fn verify_clean(store: &Store) {
    let report = crate::verify::verify(store, true, &NoProgress).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

fn records(store: &Store, ids: &[Id]) -> Vec<BlobRecord> {
    let reader = store.reader().unwrap();
    ids.iter()
        .map(|id| reader.blob_record(id).unwrap().unwrap())
        .collect()
}

/// Small blobs written the way every snapshot before groups wrote them (one frame each, or
/// raw): they read back byte for byte, pass `verify --full`, a snapshot of the same files
/// stores nothing again, and gc moves them into groups at its level, after which they read
/// back the same and a second gc leaves them alone.
#[test]
fn small_blobs_stored_whole_before_groups_read_back_and_gc_regroups_them() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let data = files(300);
    let ids: Vec<Id> = data.iter().map(|d| Id::of(d)).collect();
    let puts: Vec<Put> = data
        .iter()
        .zip(&ids)
        .map(|(d, id)| Put::Blob(*id, d.len() as u64, blob::encode_payload(d, 3)))
        .collect();
    let mut sink = Sink::new(&store);
    sink.put(&puts).unwrap();
    sink.take_txn().unwrap().commit().unwrap();
    assert!(
        records(&store, &ids)
            .iter()
            .all(|r| matches!(r, BlobRecord::Whole { .. }))
    );
    for (i, d) in data.iter().enumerate() {
        std::fs::write(ws.path().join(format!("f{i:03}.c")), d).unwrap();
    }
    let r = store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap()
        .report;
    assert_eq!(r.new_blobs, 0, "found by id, not stored again in a group");
    let reader = store.reader().unwrap();
    for (id, d) in ids.iter().zip(&data) {
        assert_eq!(&reader.read_blob(id).unwrap(), d);
    }
    drop(reader);
    verify_clean(&store);

    let report = gc(&mut store, &GcOptions::default(), &NoProgress).unwrap();
    assert_eq!(report.regroup.blobs, 300, "{report:?}");
    assert!(report.regroup.groups >= 1, "{report:?}");
    assert!(
        report.regroup.bytes_after < report.regroup.bytes_before,
        "{report:?}"
    );
    assert!(
        records(&store, &ids)
            .iter()
            .all(|r| matches!(r, BlobRecord::Grouped { dense: true, .. }))
    );
    let reader = store.reader().unwrap();
    for (id, d) in ids.iter().zip(&data) {
        assert_eq!(&reader.read_blob(id).unwrap(), d);
    }
    drop(reader);
    verify_clean(&store);
    let again = gc(&mut store, &GcOptions::default(), &NoProgress).unwrap();
    assert_eq!(again.regroup.blobs, 0, "{again:?}");
}

/// A repack that rewrites every segment moves each group frame once and points every member's
/// record at the new place; all of them read back and the store verifies.
#[test]
fn the_repack_moves_a_group_frame_with_all_its_members() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let data = files(400);
    for (i, d) in data.iter().enumerate() {
        std::fs::write(ws.path().join(format!("f{i:03}.c")), d).unwrap();
    }
    store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap();
    let ids: Vec<Id> = data.iter().map(|d| Id::of(d)).collect();
    let spans = |store: &Store| -> Vec<(Span, u32)> {
        records(store, &ids)
            .into_iter()
            .map(|r| match r {
                BlobRecord::Grouped { span, skip, .. } => (span, skip),
                other => panic!("not grouped: {other:?}"),
            })
            .collect()
    };
    let before = spans(&store);
    let groups = |s: &[(Span, u32)]| {
        s.iter()
            .map(|(span, _)| (span.segment, span.offset))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    let opts = GcOptions {
        repack_below: 1.01,
        recompress_level: None,
        ..GcOptions::default()
    };
    let report = gc(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(report.regroup.blobs, 0, "{report:?}");
    assert!(report.objects_moved >= groups(&before) as u64, "{report:?}");
    let after = spans(&store);
    assert_eq!(groups(&after), groups(&before));
    for ((old, skip0), (new, skip1)) in before.iter().zip(&after) {
        assert_ne!(old.segment, new.segment, "moved");
        assert_eq!(
            (old.len, skip0),
            (new.len, skip1),
            "same frame, same place in it"
        );
    }
    let reader = store.reader().unwrap();
    for (id, d) in ids.iter().zip(&data) {
        assert_eq!(&reader.read_blob(id).unwrap(), d);
    }
    drop(reader);
    verify_clean(&store);
}
