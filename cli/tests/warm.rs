//! The warm path without a daemon: the stat cache is joined with the walk's entries a
//! directory at a time after the walk (`scan::group`), unchanged directories keep their stored
//! tree ids, and only encodings of new trees are kept. Whatever changed, a warm snapshot and `status` (a dry run) must equal a cold snapshot
//! of the same tree taken in a fresh store, and the stat cache must match the new tree.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Env, make_symlink, write_file};
use proptest::prelude::*;
use rewind::daemon::WalkNarrowing;
use rewind::{SnapshotOptions, Store};

use crate::daemon::{after_random_edits, cache_matches_tree, full_walk};

fn status(store: &Store, ws: &Path) -> rewind::SnapshotReport {
    rewind::snapshot::dry_run(
        store,
        ws,
        &SnapshotOptions::default(),
        &rewind::progress::NoProgress,
    )
    .expect("status")
    .report
}

/// Status, then a warm snapshot, both checked against a cold snapshot in a fresh store (the
/// `reference` directory is a store that never holds a snapshot of `env.ws`).
fn check_warm(env: &Env, store: &Store, reference: &Path, what: &str) -> rewind::SnapshotReport {
    let cold = full_walk(reference, &env.ws);
    let st = status(store, &env.ws);
    assert_eq!(st.root, cold.root, "status after {what}");
    assert_eq!(st.stats, cold.stats, "status after {what}");
    let warm = env.snap(store);
    assert!(
        matches!(warm.walk, WalkNarrowing::Full),
        "no daemon runs: {:?}",
        warm.walk
    );
    assert_eq!(warm.root, cold.root, "warm snapshot after {what}");
    assert_eq!(warm.stats, cold.stats, "warm snapshot after {what}");
    if let Err(e) = cache_matches_tree(store, &env.ws, warm.root) {
        panic!("stat cache after {what}: {e}");
    }
    warm
}

/// One change to the workspace.
type Step = Box<dyn Fn(&Path)>;

#[test]
fn warm_snapshots_follow_kind_changes_moves_and_ignores() {
    let env = Env::new();
    let reference = env.tmp.path().join("reference");
    env.write("a/b/one.txt", b"one\n");
    env.write("a/b/deep/two.txt", b"two\n");
    env.write("a/three.txt", b"three\n");
    env.write("c/four.txt", b"four\n");
    env.write("c/five.txt", b"five\n");
    write_file(&env.ws, b"n\xffx/caf\xe9", b"latin-1\n");
    make_symlink(&env.ws, b"link", b"a/three.txt");
    let store = env.open();
    check_warm(&env, &store, &reference, "the first snapshot");
    // The same tree again, twice (the first may re-read files written in the snapshot's own
    // clock tick): nothing is read, the tree is unchanged.
    check_warm(&env, &store, &reference, "nothing");
    let again = check_warm(&env, &store, &reference, "nothing, again");
    assert_eq!(again.files_read, 0, "an unchanged tree is not read");
    assert!(again.unchanged);

    let steps: Vec<(&str, Step)> = vec![
        (
            "a directory replaced by a file",
            Box::new(|ws| {
                fs::remove_dir_all(ws.join("a/b")).unwrap();
                fs::write(ws.join("a/b"), b"now a file\n").unwrap();
            }),
        ),
        (
            "a file replaced by a directory",
            Box::new(|ws| {
                fs::remove_file(ws.join("c/four.txt")).unwrap();
                write_file(ws, b"c/four.txt/inner", b"inner\n");
            }),
        ),
        (
            "a symlink replaced by a file and a file by a symlink",
            Box::new(|ws| {
                fs::remove_file(ws.join("link")).unwrap();
                fs::write(ws.join("link"), b"was a link\n").unwrap();
                fs::remove_file(ws.join("c/five.txt")).unwrap();
                make_symlink(ws, b"c/five.txt", b"../link");
            }),
        ),
        (
            "a directory moved under another, with a non-UTF-8 name",
            Box::new(|ws| {
                fs::rename(ws.join("c"), ws.join(OsStr::from_bytes(b"m\xfeoved"))).unwrap();
                fs::rename(ws.join(OsStr::from_bytes(b"n\xffx")), ws.join("a/sub")).unwrap();
            }),
        ),
        (
            "an ignore file naming an existing file and a new ignored one",
            Box::new(|ws| {
                fs::write(ws.join("a/.gitignore"), b"three.txt\n*.log\n").unwrap();
                fs::write(ws.join("a/new.log"), b"ignored\n").unwrap();
                fs::write(ws.join("a/new.txt"), b"kept\n").unwrap();
            }),
        ),
        (
            "an executable bit, an empty directory, a same-size rewrite",
            Box::new(|ws| {
                fs::set_permissions(ws.join("a/b"), fs::Permissions::from_mode(0o755)).unwrap();
                fs::create_dir(ws.join("empty")).unwrap();
                fs::write(ws.join("a/new.txt"), b"KEPT\n").unwrap();
            }),
        ),
        (
            "a whole subtree deleted",
            Box::new(|ws| fs::remove_dir_all(ws.join("a")).unwrap()),
        ),
    ];
    for (what, change) in &steps {
        change(&env.ws);
        let warm = check_warm(&env, &store, &reference, what);
        assert!(!warm.unchanged, "{what} changed the tree");
        check_warm(&env, &store, &reference, &format!("nothing after {what}"));
    }
}

#[test]
fn warm_snapshots_equal_cold_ones_under_random_edits() {
    let env = Env::new();
    let reference = env.tmp.path().join("reference");
    env.write("a/b/one.txt", b"one\n");
    env.write("a/two.txt", b"two\n");
    env.write("c/three.txt", b"three\n");
    let store = env.open();
    env.snap(&store);
    after_random_edits(&env.ws, |edits| {
        let cold = full_walk(&reference, &env.ws);
        let st = status(&store, &env.ws);
        prop_assert_eq!(st.root, cold.root, "status after {:?}", edits);
        let r = env.snap(&store);
        prop_assert!(matches!(r.walk, WalkNarrowing::Full));
        prop_assert_eq!(r.root, cold.root, "after {:?}", edits);
        prop_assert_eq!(r.stats, cold.stats, "after {:?}", edits);
        let cache = cache_matches_tree(&store, &env.ws, r.root);
        prop_assert!(cache.is_ok(), "after {:?}: {:?}", edits, cache);
        Ok(())
    });
}

/// More directories than one range scan of the stat cache takes (the join cuts the groups in
/// parts of 1,024 and joins a wave of parts at a time): directories deleted on either side of
/// the cuts leave stale rows every part must find, and edits in every part must be seen.
#[test]
fn warm_snapshots_of_thousands_of_directories() {
    let env = Env::new();
    let reference = env.tmp.path().join("reference");
    let dirs = 3000;
    for i in 0..dirs {
        env.write(
            &format!("t{}/d{i:04}/f.txt", i % 7),
            format!("{i}\n").as_bytes(),
        );
    }
    let store = env.open();
    check_warm(&env, &store, &reference, "the first snapshot");
    check_warm(&env, &store, &reference, "nothing");
    let again = check_warm(&env, &store, &reference, "nothing, again");
    assert_eq!(again.files_read, 0, "an unchanged tree is not read");
    for i in (0..dirs).step_by(97) {
        fs::remove_dir_all(env.ws.join(format!("t{}/d{i:04}", i % 7))).unwrap();
    }
    for i in (5..dirs).step_by(101) {
        // A new size, so the stat differs even within one clock tick.
        env.write(&format!("t{}/d{i:04}/f.txt", i % 7), b"edited, longer\n");
    }
    for i in (11..dirs).step_by(301) {
        let d = env.ws.join(format!("t{}/d{i:04}", i % 7));
        fs::remove_dir_all(&d).unwrap();
        fs::write(&d, b"a file now\n").unwrap();
    }
    env.write("t3/new/deeper/g.txt", b"new\n");
    let changed = check_warm(
        &env,
        &store,
        &reference,
        "deletions and edits in every part",
    );
    assert!(!changed.unchanged);
    check_warm(&env, &store, &reference, "nothing after the edits");
}
