//! `Store::fit`: a real snapshot that grows the file past one of redb's doublings leaves some
//! pages at the new end; the handle refits the file when it drops, and the store stays whole.

use super::{DB_FILE, FIT_ABOVE, FileSize, Store, StoreOptions};
use crate::progress::NoProgress;
use crate::snapshot::SnapshotOptions;

/// Incompressible bytes (xorshift), so the store grows by about what the files hold.
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

/// Many small files (B-tree leaves written late in the transaction, as a source tree's are)
/// and some content, about `mib` MiB in all.
fn tree(dir: &std::path::Path, mib: usize) {
    for d in 0..40 {
        let sub = dir.join(format!("d{d:02}"));
        std::fs::create_dir(&sub).unwrap();
        for f in 0..60 {
            let len = mib * (1 << 20) / 2400;
            std::fs::write(
                sub.join(format!("file-with-a-long-name-{f:03}.c")),
                noise((d * 1000 + f) as u64, len),
            )
            .unwrap();
        }
    }
}

fn size(store_dir: &std::path::Path) -> FileSize {
    FileSize::of(&std::fs::metadata(store_dir.join(DB_FILE)).unwrap())
}

fn within(s: FileSize) -> bool {
    s.apparent as f64 <= FIT_ABOVE * s.allocated as f64
}

#[test]
fn a_snapshot_that_grew_the_file_leaves_it_fitted_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    tree(ws.path(), 24);
    let before = {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store.register_workspace(ws.path()).unwrap();
        size(dir.path())
    };
    let store = Store::open(
        dir.path(),
        StoreOptions {
            // As the CLI's snapshot runs: the fit must not depend on redb's close.
            skip_close: true,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap();
    let grown = size(dir.path());
    assert!(
        grown.apparent >= 2 * before.apparent,
        "the snapshot grew the file past a doubling: {before:?} -> {grown:?}"
    );
    // What this is about: without the fit, the file is mostly a hole.
    assert!(grown.needs_fit(), "{grown:?}");
    drop(store);
    let fitted = size(dir.path());
    assert!(within(fitted), "{fitted:?}");
    assert!(fitted.apparent < grown.apparent);

    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let report = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.snapshots, 1);
}

#[test]
fn a_reader_on_another_handle_makes_the_fit_skip_and_a_later_fit_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    tree(ws.path(), 24);
    // Another handle (as another process would) holds a read transaction open.
    let other = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mut store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let reading = other.reader().unwrap();
    store
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap();
    assert!(size(dir.path()).needs_fit());
    assert_eq!(store.fit(), Err(super::CompactSkipped::Busy));
    drop(store);
    assert!(size(dir.path()).needs_fit(), "the drop skipped too");
    drop(reading);
    let fit = Store::open(dir.path(), StoreOptions::default())
        .unwrap()
        .fit()
        .unwrap();
    assert!(fit.compacted && within(fit.after), "{fit:?}");
    drop(other);
}
