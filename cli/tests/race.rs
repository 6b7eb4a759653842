//! Writers against a racer: while a restore runs, another thread keeps renaming the
//! workspace's directories away and putting symlinks to an outside directory in their place
//! (what an agent's leftover background job can do). Whatever the restore then does (finish,
//! or refuse), nothing outside the workspace may change and no temporary file may land there.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{Env, write_file};
use rewind::{Id, NoProgress, OpInfo, RestoreOptions, SnapshotOptions, Store};

const TOP: usize = 12;
const SUB: usize = 4;
const FILES: usize = 40;

fn top(k: usize) -> String {
    format!("d{k:02}")
}

/// The tree, every file's content depending on `version`: directly in each top directory and
/// in its subdirectories, so a write lands outside through a swapped top directory whether or
/// not the outside copy has the subdirectories.
fn write_tree(root: &Path, version: u32) {
    for k in 0..TOP {
        for f in 0..FILES {
            let rel = format!("{}/f{f:02}.txt", top(k));
            write_file(
                root,
                rel.as_bytes(),
                format!("{rel} v{version}\n").as_bytes(),
            );
        }
        for s in 0..SUB {
            for f in 0..FILES {
                let rel = format!("{}/s{s}/f{f:02}.txt", top(k));
                write_file(
                    root,
                    rel.as_bytes(),
                    format!("{rel} v{version}\n").as_bytes(),
                );
            }
        }
    }
}

/// Everything below `root`: kind, bytes or link target, inode and mtime (a file replaced by an
/// equal one is a change too).
fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (String, Vec<u8>, u64, i64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).expect("read outside") {
            let p = e.expect("entry").path();
            let m = fs::symlink_metadata(&p).expect("lstat outside");
            let rel = p.strip_prefix(root).expect("below").to_path_buf();
            let (kind, bytes) = if m.file_type().is_symlink() {
                (
                    "symlink",
                    fs::read_link(&p)
                        .expect("readlink")
                        .as_os_str()
                        .as_bytes()
                        .to_vec(),
                )
            } else if m.is_dir() {
                stack.push(p.clone());
                ("dir", Vec::new())
            } else {
                ("file", fs::read(&p).expect("read"))
            };
            out.insert(
                rel,
                (
                    kind.to_string(),
                    bytes,
                    m.ino(),
                    m.mtime_nsec() + m.mtime() * 1_000_000_000,
                ),
            );
        }
    }
    out
}

/// Swaps top directories for symlinks into `outside` and back, over and over, until `stop`.
fn racer(ws: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>, seed: u64) {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut moved: Vec<Option<PathBuf>> = vec![None; TOP];
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let k = (next() % TOP as u64) as usize;
        let name = ws.join(top(k));
        match moved[k].take() {
            None => {
                // A real directory now: move it aside, a symlink out of the workspace in its
                // place.
                if fs::symlink_metadata(&name).is_ok_and(|m| m.is_dir()) {
                    n += 1;
                    let aside = ws.join(format!(".moved-{n}"));
                    if fs::rename(&name, &aside).is_ok() {
                        let _ = std::os::unix::fs::symlink(outside.join(top(k)), &name);
                        moved[k] = Some(aside);
                    }
                }
            }
            Some(aside) => {
                // Put it back, so the writer sees a real directory again for a while.
                if fs::symlink_metadata(&name).is_ok_and(|m| m.file_type().is_symlink()) {
                    let _ = fs::remove_file(&name);
                }
                let _ = fs::rename(&aside, &name);
            }
        }
        std::thread::sleep(Duration::from_micros(200 + next() % 2000));
    }
}

fn snapshot(store: &Store, ws: &Path) -> Id {
    rewind::snapshot(store, ws, &SnapshotOptions::default(), &NoProgress)
        .expect("snapshot")
        .report
        .id
        .expect("an id")
}

fn restore(store: &Store, ws: &Path, target: Id) -> rewind::Result<rewind::RestoreReport> {
    rewind::restore(
        store,
        ws,
        target,
        &RestoreOptions {
            force: true,
            ..RestoreOptions::default()
        },
        &OpInfo::default(),
        &NoProgress,
    )
}

/// Restores between two versions of the tree, `rounds` times, with the racer running.
fn race_restores(prefill: bool, rounds: usize) {
    let env = Env::new();
    let outside = env.tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    // The outside mirror: the directories the symlinks point at, empty or holding copies.
    for k in 0..TOP {
        for s in 0..SUB {
            fs::create_dir_all(outside.join(top(k)).join(format!("s{s}"))).unwrap();
        }
    }
    if prefill {
        write_tree(&outside, 0);
    }
    let store = env.open();
    write_tree(&env.ws, 1);
    let a = snapshot(&store, &env.ws);
    write_tree(&env.ws, 2);
    let b = snapshot(&store, &env.ws);
    let before = fingerprint(&outside);
    let mut finished = 0;
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let racer = {
            let (ws, outside, stop) = (env.ws.clone(), outside.clone(), stop.clone());
            std::thread::spawn(move || racer(ws, outside, stop, round as u64 * 7919 + 17))
        };
        let target = if round % 2 == 0 { a } else { b };
        // Refusing is a right answer; writing outside is not.
        finished += restore(&store, &env.ws, target).is_ok() as usize;
        stop.store(true, Ordering::Relaxed);
        racer.join().unwrap();
        let after = fingerprint(&outside);
        if after != before {
            let changed: Vec<_> = after
                .iter()
                .filter(|(p, v)| before.get(*p) != Some(v))
                .map(|(p, _)| p.display().to_string())
                .take(10)
                .collect();
            panic!(
                "round {round} (prefilled {prefill}): the restore changed {} entries outside the workspace, e.g. {changed:?}",
                after
                    .iter()
                    .filter(|(p, v)| before.get(*p) != Some(v))
                    .count()
            );
        }
    }
    // Left alone, the workspace comes back whole.
    restore(&store, &env.ws, a).expect("a restore without a racer");
    let listing = fingerprint(&env.ws);
    assert!(
        listing
            .keys()
            .all(|p| !p.to_string_lossy().contains(".rewind-tmp-")),
        "a temporary file was left in the workspace"
    );
    let check = tempfile::tempdir().unwrap();
    write_tree(check.path(), 1);
    for (p, v) in fingerprint(check.path()) {
        assert_eq!(listing.get(&p).map(|l| &l.1), Some(&v.1), "{}", p.display());
    }
    eprintln!("{finished} of {rounds} raced restores finished");
}

#[test]
fn a_racer_swapping_directories_for_symlinks_never_gets_a_restore_to_write_outside() {
    race_restores(false, 8);
}

#[test]
fn a_racer_never_gets_outside_copies_overwritten() {
    race_restores(true, 8);
}
