//! The store file's length after a snapshot that grew it: redb doubles the file, and
//! the handle that grew it cuts the free end when it drops (`Store::fit`); the store's
//! transactions allocate the lowest pages, so nothing is left at the end. Through the real
//! binary, whose snapshot skips redb's close; and with another process reading the store,
//! which neither stops the cut nor sees its read disturbed.

use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::Stdio;

use crate::common;

use common::*;

/// (length, disk blocks in bytes) of the store file.
fn file_size(env: &Env) -> (u64, u64) {
    let m = std::fs::metadata(env.store.join("store.redb")).unwrap();
    (m.len(), m.blocks() * 512)
}

fn within(size: (u64, u64)) -> bool {
    size.0 as f64 <= 1.1 * size.1 as f64
}

/// 2,400 files in 40 directories, `mib` MiB of incompressible content in all: many small
/// B-tree rows written late in the snapshot's transaction, as a source tree's are.
fn many_files(root: &Path, mib: usize) {
    for d in 0..40u64 {
        for f in 0..60u64 {
            write_file(
                root,
                format!("d{d:02}/file-with-a-long-name-{f:03}.c").as_bytes(),
                &noise(d * 1000 + f, mib * (1 << 20) / 2400),
            );
        }
    }
}

#[test]
fn a_snapshot_that_grew_the_store_leaves_its_file_within_a_tenth_of_its_blocks() {
    let env = Env::new();
    env.ok(&["init"]);
    let empty = file_size(&env);
    many_files(&env.ws, 24);
    snap(&env, "one");
    let after = file_size(&env);
    assert!(
        after.0 >= 4 * empty.0,
        "grown past doublings: {empty:?} -> {after:?}"
    );
    assert!(within(after), "{after:?}");
    verify_full(&env);
    let st = json(&env, &["stats"]);
    assert!(st["sparse_ratio"].as_f64().unwrap() <= 1.1, "{st}");
}

/// Each snapshot after the first changes a few files: redb doubles the file for a few pages
/// (nothing is free after the last refit), and the handle's close cuts the free end again.
/// Every snapshot stays readable, and the file within bounds, each time.
#[test]
fn small_snapshots_after_a_refit_leave_the_file_within_bounds() {
    let env = Env::new();
    many_files(&env.ws, 24);
    snap(&env, "one");
    assert!(within(file_size(&env)), "{:?}", file_size(&env));
    let mut ids = Vec::new();
    for round in 0..4u64 {
        let before = file_size(&env);
        write_file(
            &env.ws,
            format!("d0{round}/edited.c").as_bytes(),
            &noise(round, 50_000),
        );
        ids.push(snap(&env, &format!("edit {round}")));
        let after = file_size(&env);
        assert!(within(after), "round {round}: {before:?} -> {after:?}");
        assert!(
            after.0 < 2 * before.0,
            "round {round}: the doubling stayed: {before:?} -> {after:?}"
        );
    }
    verify_full(&env);
    for (round, id) in ids.iter().enumerate() {
        let out = env
            .cmd()
            .args(["cat", id, &format!("d0{round}/edited.c")])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, noise(round as u64, 50_000));
    }
}

#[test]
fn another_process_reading_the_store_neither_keeps_the_file_long_nor_sees_its_read_disturbed() {
    let env = Env::new();
    let big = noise(7, 3 << 20);
    env.write("big.bin", &big);
    let first = snap(&env, "big");
    // `cat` into a pipe nobody reads: it blocks mid-blob with its read transaction open.
    let mut cat = env
        .cmd()
        .args(["cat", &first, "big.bin"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = cat.stdout.take().unwrap();
    let mut head = vec![0u8; 4096];
    out.read_exact(&mut head).unwrap();

    let other = env.tmp.path().join("other");
    many_files(&other, 24);
    env.ok_in(&other, &["snapshot", "-q"]);
    let after = file_size(&env);
    assert!(within(after), "the reader kept the file long: {after:?}");

    // The reader's view was not touched by the growth and the cut beside it.
    out.read_to_end(&mut head).unwrap();
    assert!(cat.wait().unwrap().success());
    assert!(head == big, "cat read {} bytes, not the blob", head.len());
    verify_full(&env);
    let gc = json(&env, &["gc", "--no-recompress"]);
    assert!(within(file_size(&env)), "{gc} {:?}", file_size(&env));
    verify_full(&env);
}
