//! `Store::fit`: a real snapshot that grows the file past one of redb's doublings leaves it
//! fitted when the handle drops, and the store stays whole. A file that needs redb's compaction
//! (as rewind before its lowest-page allocation left one) is compacted by `fit`, which skips
//! while another handle reads.

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

/// Where the file's last data (not hole) ends.
fn data_end(file: &std::path::Path) -> u64 {
    use rustix::fs::{SeekFrom, seek};
    let f = std::fs::File::open(file).unwrap();
    let (mut end, mut at) = (0, 0);
    while let Ok(data) = seek(&f, SeekFrom::Data(at)) {
        end = seek(&f, SeekFrom::Hole(data)).unwrap();
        at = end;
    }
    end
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
    // ... but only at its end: the store allocates the lowest free pages, so the close's trim
    // fits it and no compaction is needed (redb's default policy left pages far past it).
    let end = data_end(&dir.path().join(DB_FILE));
    assert!(
        end as f64 <= FIT_ABOVE * grown.allocated as f64,
        "data up to {end} in {grown:?}"
    );
    drop(store);
    let fitted = size(dir.path());
    assert!(within(fitted), "{fitted:?}");
    assert!(fitted.apparent < grown.apparent);

    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let report = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.snapshots, 1);
}

/// The store file as redb's default allocation leaves it after a large transaction (rewind's
/// snapshots used it until the store began its transactions with `try_begin_write_lowest`):
/// grown by doublings from a length that is not a power of two pages, with the last pages
/// written in the small blocks at the new end and a hole below them.
fn grow_with_default_allocation(store_dir: &std::path::Path) {
    const SCRATCH: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("fit-test");
    let mut builder = redb::Database::builder();
    builder.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    let db = builder.create(store_dir.join(DB_FILE)).unwrap();
    let txn = db.begin_write().unwrap();
    {
        // Until a growth takes the file past 16 MiB, and a little past that: the next pages go
        // to the new end.
        let len = || std::fs::metadata(store_dir.join(DB_FILE)).unwrap().len();
        let mut t = txn.open_table(SCRATCH).unwrap();
        let mut past = None;
        for k in 0..4000u64 {
            t.insert(k, noise(k, 60_000).as_slice()).unwrap();
            if past.is_none() && len() >= 16 << 20 {
                past = Some(k);
            }
            if past.is_some_and(|p| k >= p + 16) {
                break;
            }
        }
    }
    txn.commit().unwrap();
    // redb's close trims only the free pages at the end: the pages there stay.
    drop(db);
}

#[test]
fn a_file_with_pages_at_its_end_is_compacted_and_a_reader_makes_that_skip() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    tree(ws.path(), 2);
    Store::open(dir.path(), StoreOptions::default())
        .unwrap()
        .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
        .unwrap();
    grow_with_default_allocation(dir.path());
    assert!(size(dir.path()).needs_fit(), "{:?}", size(dir.path()));
    // Another handle (as another process would) holds a read transaction open.
    let other = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mut store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let reading = other.reader().unwrap();
    assert_eq!(store.fit(), Err(super::CompactSkipped::Busy));
    assert!(size(dir.path()).needs_fit());
    drop(reading);
    let fit = store.fit().unwrap();
    assert!(fit.compacted && within(fit.after), "{fit:?}");
    drop(store);
    drop(other);

    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let report = crate::verify::verify(&store, true, &NoProgress).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.snapshots, 1);
}
