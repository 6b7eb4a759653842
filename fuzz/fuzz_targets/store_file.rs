//! Fuzzes a damaged store file: the input says which bytes of a real store.redb to flip and
//! where to cut it short (every region: the database header, b-tree pages, the segment log).
//! Opening it, verifying it (full), listing and restoring its snapshots and taking a snapshot
//! must give a report or an error, never a panic.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rewind::{NoProgress, RestoreOptions, SnapshotOptions, Store, StoreOptions};

/// A scratch directory with a workspace and a store of three snapshots, made once per process;
/// returns it and the pristine store file.
fn pristine() -> &'static (PathBuf, Vec<u8>) {
    static ONCE: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    ONCE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rewind-fuzz-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ws = dir.join("ws");
        std::fs::create_dir_all(&ws).expect("mkdir ws");
        let store_dir = dir.join("store");
        let opts = StoreOptions {
            create: true,
            ..StoreOptions::default()
        };
        let store = Store::open(&store_dir, opts).expect("create store");
        for round in 0..3u32 {
            for i in 0..40u32 {
                let sub = ws.join(format!("d{}", i % 4));
                std::fs::create_dir_all(&sub).expect("mkdir");
                let body: Vec<u8> = (0..300u32)
                    .map(|j| (j.wrapping_mul(31) ^ i ^ round) as u8)
                    .collect();
                std::fs::write(sub.join(format!("f{i}")), body).expect("write");
            }
            rewind::snapshot(&store, &ws, &SnapshotOptions::default(), &NoProgress)
                .expect("snapshot");
        }
        drop(store);
        let bytes = std::fs::read(store_dir.join("store.redb")).expect("read store");
        (dir, bytes)
    })
}

fuzz_target!(|data: &[u8]| {
    let (dir, clean) = pristine();
    let mut bytes = clean.clone();
    // First 4 bytes: where to cut (0: not cut); then (offset u32, xor u8) edits.
    let (cut, edits) = data.split_at(data.len().min(4));
    let mut cut4 = [0u8; 4];
    cut4[..cut.len()].copy_from_slice(cut);
    let cut = u32::from_le_bytes(cut4) as usize;
    for e in edits.chunks_exact(5) {
        let at = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize % bytes.len();
        bytes[at] ^= e[4];
    }
    if cut != 0 && cut % 8 == 0 {
        bytes.truncate(cut / 8 % bytes.len());
    }
    let store_dir = dir.join("store");
    std::fs::write(store_dir.join("store.redb"), &bytes).expect("write store");
    let Ok(store) = Store::open(&store_dir, StoreOptions::default()) else {
        return;
    };
    let _ = rewind::verify::verify(&store, true, &NoProgress);
    let _ = rewind::stats::stats(&store);
    if let Ok(reader) = store.reader() {
        let _ = reader.workspaces();
        let into = dir.join("restored");
        for id in reader.all_snapshots().unwrap_or_default() {
            let _ = std::fs::remove_dir_all(&into);
            let _ = std::fs::create_dir_all(&into);
            let _ = rewind::restore(
                &store,
                &into,
                id,
                &RestoreOptions::default(),
                &rewind::OpInfo::default(),
                &NoProgress,
            );
        }
    }
    let _ = rewind::snapshot(
        &store,
        &dir.join("ws"),
        &SnapshotOptions::default(),
        &NoProgress,
    );
});
