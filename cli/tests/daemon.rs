//! The watch daemon, with real inotify, real files, a real store and the real binary: walks
//! narrowed by the daemon give the same trees as full walks, and every doubt (killed daemon,
//! overflow, watch limit, moved workspace, blind file system) falls back to a full walk.
//! Nothing here sleeps and asserts: every wait is for a condition, with a generous timeout.

use crate::common;

use std::fs;
use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Env, rewind_bin, write_file};
use proptest::prelude::*;
use rewind::daemon::WalkNarrowing;
use rewind::{Id, SnapshotOptions, Store, StoreOptions};
use serde_json::Value;

const PATIENCE: Duration = Duration::from_secs(90);

/// A daemon started for a test, stopped (or killed) when dropped.
struct Daemon {
    store: PathBuf,
}

impl Daemon {
    fn start(env: &Env, extra: &[&str]) -> Daemon {
        let mut args = vec!["daemon", "start"];
        args.extend_from_slice(extra);
        env.ok(&args);
        Daemon {
            store: env.store.clone(),
        }
    }

    fn status(&self) -> Value {
        status_of(&self.store)
    }

    fn pid(&self) -> i32 {
        self.status()["pid"].as_i64().expect("pid") as i32
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let out = rewind_bin()
            .arg("--store")
            .arg(&self.store)
            .args(["daemon", "stop"])
            .output();
        if out.is_err() {
            eprintln!("could not stop the daemon of {}", self.store.display());
        }
    }
}

fn status_of(store: &Path) -> Value {
    let out = rewind_bin()
        .arg("--store")
        .arg(store)
        .args(["daemon", "status", "--json"])
        .output()
        .expect("spawn");
    serde_json::from_slice(&out.stdout).expect("status json")
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A snapshot through the library (which asks the daemon, if one runs).
pub(crate) fn snap(store: &Store, ws: &Path) -> rewind::SnapshotReport {
    rewind::snapshot::snapshot(
        store,
        ws,
        &SnapshotOptions::default(),
        &rewind::progress::NoProgress,
    )
    .expect("snapshot")
    .report
}

/// The root tree a full walk with no stat cache and no daemon gives: a dry run in a store of
/// its own.
fn full_walk_root(reference: &Path, ws: &Path) -> Id {
    full_walk(reference, ws).root
}

/// The report of a full walk with no stat cache and no daemon (see [`full_walk_root`]).
pub(crate) fn full_walk(reference: &Path, ws: &Path) -> rewind::SnapshotReport {
    let store = Store::open(reference, StoreOptions::default()).expect("reference store");
    rewind::snapshot::snapshot(
        &store,
        ws,
        &SnapshotOptions {
            dry_run: true,
            ..SnapshotOptions::default()
        },
        &rewind::progress::NoProgress,
    )
    .expect("reference snapshot")
    .report
}

/// Checks that the workspace's stored stat cache describes the tree `root` exactly: a row per
/// directory of the tree with its tree id, each subdirectory's subtree totals right where
/// they are recorded, and no row for a directory the tree does not have (a narrowed snapshot
/// removes those by prefix). Returns a description of the first mismatch.
pub(crate) fn cache_matches_tree(store: &Store, ws: &Path, root: Id) -> Result<(), String> {
    use rewind::internals::{StatCache, Subtree};
    use rewind::store::tree::Kind;
    let reader = store.reader().expect("reader");
    let canonical = ws.canonicalize().expect("canonical");
    let id = reader
        .workspace(&canonical)
        .expect("ws")
        .expect("registered")
        .id();
    let cache = StatCache::load(&reader, id).expect("cache");
    // Depth first: (path, tree id); totals are summed on the way back up.
    fn visit(
        reader: &rewind::store::Reader,
        cache: &StatCache,
        path: &[u8],
        tree: Id,
        seen: &mut Vec<Vec<u8>>,
    ) -> Result<Subtree, String> {
        let shown = String::from_utf8_lossy(path).into_owned();
        seen.push(path.to_vec());
        let view = cache
            .dir(path)
            .ok_or_else(|| format!("no cache row for {shown:?}"))?;
        if view.tree() != tree {
            return Err(format!("cache row of {shown:?} has another tree id"));
        }
        let mut total = Subtree::default();
        for e in reader.tree(&tree).expect("tree").entries {
            match e.kind {
                Kind::Dir => {
                    let mut child = path.to_vec();
                    if !child.is_empty() {
                        child.push(b'/');
                    }
                    child.extend_from_slice(&e.name);
                    let sub = visit(reader, cache, &child, e.id, seen)?;
                    let recorded = view.get(&e.name).and_then(|c| c.subtree());
                    if recorded.map(|r| (r.files, r.dirs, r.symlinks))
                        != Some((sub.files, sub.dirs, sub.symlinks))
                    {
                        return Err(format!(
                            "subtree of {:?} recorded as {recorded:?}, is {sub:?}",
                            String::from_utf8_lossy(&child)
                        ));
                    }
                    total.dirs += 1 + sub.dirs;
                    total.files += sub.files;
                    total.symlinks += sub.symlinks;
                }
                Kind::Symlink => total.symlinks += 1,
                Kind::File | Kind::Executable => total.files += 1,
            }
        }
        Ok(total)
    }
    let mut seen = Vec::new();
    visit(&reader, &cache, b"", root, &mut seen)?;
    seen.sort();
    let mut rows: Vec<Vec<u8>> = cache.dir_paths().map(<[u8]>::to_vec).collect();
    rows.sort();
    if rows != seen {
        let extra: Vec<String> = rows
            .iter()
            .filter(|r| !seen.contains(r))
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        return Err(format!("stale cache rows: {extra:?}"));
    }
    Ok(())
}

/// A snapshot through the daemon, checked against a full walk.
fn checked(store: &Store, env: &Env, reference: &Path) -> rewind::SnapshotReport {
    let r = snap(store, &env.ws);
    assert_eq!(r.root, full_walk_root(reference, &env.ws), "{:?}", r.walk);
    r
}

fn narrowed(r: &rewind::SnapshotReport) -> bool {
    matches!(r.walk, WalkNarrowing::Narrowed { .. })
}

fn pruned(r: &rewind::SnapshotReport) -> bool {
    matches!(r.walk, WalkNarrowing::Narrowed { pruned: true, .. })
}

fn full_reason(r: &rewind::SnapshotReport) -> String {
    match &r.walk {
        WalkNarrowing::DaemonFull { reason } => reason.clone(),
        other => format!("{other:?}"),
    }
}

/// A daemon watching the env's workspace, with a first snapshot taken (the next is narrowed).
fn watched(env: &Env, extra: &[&str]) -> (Daemon, Store) {
    let d = Daemon::start(env, extra);
    env.ok(&["watch", "on"]);
    let store = env.open();
    snap(&store, &env.ws);
    assert!(narrowed(&snap(&store, &env.ws)));
    (d, store)
}

fn setup() -> (Env, PathBuf) {
    let env = Env::new();
    env.write("a/b/one.txt", b"one\n");
    env.write("a/two.txt", b"two\n");
    env.write("c/three.txt", b"three\n");
    env.ok(&["init"]);
    let reference = env.tmp.path().join("reference");
    (env, reference)
}

/// One random edit of the property test.
#[derive(Clone, Debug)]
pub(crate) enum Edit {
    Write(usize, u8),
    Append(usize),
    RenameOver(usize, usize),
    Delete(usize),
    Mkdir(usize),
    Rmdir(usize),
    Chmod(usize),
    Symlink(usize, usize),
    /// A .gitignore in a directory, naming a file or a directory (or nothing).
    Ignore(usize, usize),
    /// A directory renamed over another path (under a trusted ancestor).
    RenameDir(usize, usize),
    /// A directory's permissions changed (it stays readable).
    ChmodDir(usize),
    Snapshot,
}

const DIRS: [&str; 5] = ["", "d1", "d1/d2", "d3", "d1/d2/d4"];

fn file(i: usize) -> String {
    let d = DIRS[i % DIRS.len()];
    let name = format!("f{}", i / DIRS.len());
    if d.is_empty() {
        name
    } else {
        format!("{d}/{name}")
    }
}

pub(crate) fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..15usize, any::<u8>()).prop_map(|(i, b)| Edit::Write(i, b)),
        (0..15usize).prop_map(Edit::Append),
        (0..15usize, 0..15usize).prop_map(|(a, b)| Edit::RenameOver(a, b)),
        (0..15usize).prop_map(Edit::Delete),
        (0..DIRS.len()).prop_map(Edit::Mkdir),
        (1..DIRS.len()).prop_map(Edit::Rmdir),
        (0..15usize).prop_map(Edit::Chmod),
        (0..15usize, 0..15usize).prop_map(|(a, b)| Edit::Symlink(a, b)),
        (0..DIRS.len(), 0..4usize).prop_map(|(d, k)| Edit::Ignore(d, k)),
        (1..DIRS.len(), 1..DIRS.len()).prop_map(|(a, b)| Edit::RenameDir(a, b)),
        (1..DIRS.len()).prop_map(Edit::ChmodDir),
        Just(Edit::Snapshot),
    ]
}

pub(crate) fn apply(ws: &Path, e: &Edit) {
    let p = |i: usize| ws.join(file(i));
    match e {
        Edit::Write(i, b) => {
            // Paths may be taken by a symlink or a file where a directory was: edits that
            // cannot apply are skipped, as a user's would fail.
            if fs::symlink_metadata(p(*i)).is_ok_and(|m| m.file_type().is_symlink()) {
                let _ = fs::remove_file(p(*i));
            }
            let _ = fs::create_dir_all(p(*i).parent().unwrap());
            let _ = fs::write(p(*i), vec![*b; 1 + *b as usize % 7]);
        }
        Edit::Append(i) => {
            if fs::symlink_metadata(p(*i)).is_ok_and(|m| m.is_file()) {
                use std::io::Write;
                let mut f = fs::OpenOptions::new().append(true).open(p(*i)).unwrap();
                f.write_all(b"+").unwrap();
            }
        }
        Edit::RenameOver(a, b) => {
            if fs::symlink_metadata(p(*a)).is_ok()
                && fs::create_dir_all(p(*b).parent().unwrap()).is_ok()
            {
                let _ = fs::remove_dir_all(p(*b));
                let _ = fs::rename(p(*a), p(*b));
            }
        }
        Edit::Delete(i) => {
            let _ = fs::remove_file(p(*i));
        }
        Edit::Mkdir(d) => {
            let _ = fs::create_dir_all(ws.join(DIRS[*d]));
        }
        Edit::Rmdir(d) => {
            let _ = fs::remove_dir_all(ws.join(DIRS[*d]));
        }
        Edit::Chmod(i) => {
            if let Ok(m) = fs::symlink_metadata(p(*i))
                && m.is_file()
            {
                let mode = m.permissions().mode() ^ 0o100;
                fs::set_permissions(p(*i), fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        Edit::Symlink(a, b) => {
            let _ = fs::remove_file(p(*a));
            if fs::symlink_metadata(p(*a)).is_err()
                && fs::create_dir_all(p(*a).parent().unwrap()).is_ok()
            {
                let _ = std::os::unix::fs::symlink(file(*b), p(*a));
            }
        }
        Edit::Ignore(d, k) => {
            let rules = ["", "f1\n", "d2/\n", "f0\nd4\n"][*k];
            let dir = ws.join(DIRS[*d]);
            if dir.is_dir() {
                let _ = fs::write(dir.join(".gitignore"), rules);
            }
        }
        Edit::RenameDir(a, b) => {
            let (from, to) = (ws.join(DIRS[*a]), ws.join(DIRS[*b]));
            // Not into itself; whatever is at the target goes first, as `mv -T` would.
            if from.is_dir() && !to.starts_with(&from) && !from.starts_with(&to) {
                let _ = fs::remove_dir_all(&to);
                if fs::create_dir_all(to.parent().unwrap()).is_ok() {
                    let _ = fs::rename(&from, &to);
                }
            }
        }
        Edit::ChmodDir(d) => {
            if let Ok(m) = fs::symlink_metadata(ws.join(DIRS[*d]))
                && m.is_dir()
            {
                let mode = if m.permissions().mode() & 0o777 == 0o700 {
                    0o755
                } else {
                    0o700
                };
                fs::set_permissions(ws.join(DIRS[*d]), fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        Edit::Snapshot => {}
    }
}

/// Runs random edit sequences on `ws` (24 cases, 1 to 11 edits each), calling `check` with the
/// sequence at each `Edit::Snapshot` in it and after its last edit: the one proptest loop both
/// the daemon's and the warm path's equivalence tests use.
pub(crate) fn after_random_edits(ws: &Path, check: impl Fn(&[Edit]) -> Result<(), TestCaseError>) {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&proptest::collection::vec(edit(), 1..12), |edits| {
            for e in edits.iter().chain([Edit::Snapshot].iter()) {
                apply(ws, e);
                if matches!(e, Edit::Snapshot) {
                    check(&edits)?;
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn narrowed_snapshots_equal_full_walks_under_random_edits() {
    let (env, reference) = setup();
    let _d = Daemon::start(&env, &[]);
    env.ok(&["watch", "on"]);
    let store = env.open();
    snap(&store, &env.ws);
    let narrowed_count = std::cell::Cell::new(0usize);
    let pruned_count = std::cell::Cell::new(0usize);
    let snapshots = std::cell::Cell::new(0usize);
    after_random_edits(&env.ws, |edits| {
        let r = snap(&store, &env.ws);
        snapshots.set(snapshots.get() + 1);
        narrowed_count.set(narrowed_count.get() + narrowed(&r) as usize);
        pruned_count.set(pruned_count.get() + pruned(&r) as usize);
        let full = full_walk(&reference, &env.ws);
        prop_assert_eq!(r.root, full.root, "after {:?} ({:?})", edits, r.walk);
        prop_assert_eq!(r.stats, full.stats, "after {:?} ({:?})", edits, r.walk);
        let cache = cache_matches_tree(&store, &env.ws, r.root);
        prop_assert!(
            cache.is_ok(),
            "after {:?} ({:?}): {:?}",
            edits,
            r.walk,
            cache
        );
        Ok(())
    });
    // The daemon really narrowed the walks being checked.
    let (n, total) = (narrowed_count.get(), snapshots.get());
    assert!(n * 2 > total, "{n} of {total} snapshots narrowed");
    assert!(pruned_count.get() > 0, "no walk left a subtree unread");
}

#[test]
fn warm_snapshot_with_daemon_reads_and_stats_only_what_changed() {
    let (env, reference) = setup();
    let _d = Daemon::start(&env, &[]);
    env.ok(&["watch", "on"]);
    let first: Value = serde_json::from_str(&env.ok(&["snapshot", "--json"])).unwrap();
    assert_eq!(first["walk"]["walk"], "daemon_full", "{first}");
    let second: Value = serde_json::from_str(&env.ok(&["snapshot", "--json"])).unwrap();
    assert_eq!(second["walk"]["walk"], "narrowed", "{second}");
    assert_eq!(second["walk"]["untrusted"], 0, "nothing changed: {second}");
    env.write("a/b/one.txt", b"changed\n");
    let third: Value = serde_json::from_str(&env.ok(&["snapshot", "--json"])).unwrap();
    assert_eq!(third["walk"]["untrusted"], 1, "a/b is not trusted: {third}");
    assert_eq!(third["files_read"], 1);
    let store = env.open();
    checked(&store, &env, &reference);
    // status and run narrow too, and see what changed.
    env.write("c/new-for-status.txt", b"new\n");
    let status = env.ok(&["status"]);
    assert!(status.contains("c/new-for-status.txt"), "{status}");
    env.ok(&["run", "--", "sh", "-c", "echo run > c/by-run.txt"]);
    let r = checked(&store, &env, &reference);
    assert!(narrowed(&r), "{:?}", r.walk);
}

#[test]
fn changed_ignore_rules_are_never_pruned_over() {
    let (env, reference) = setup();
    let (_d, store) = watched(&env, &[]);
    let r = checked(&store, &env, &reference);
    assert!(pruned(&r), "{:?}", r.walk);
    // A rule in the root now leaves out a directory whose subtree nothing else touched.
    env.write(".gitignore", b"b/\n");
    let r = checked(&store, &env, &reference);
    assert!(!pruned(&r), "{:?}", r.walk);
    assert!(
        !env.ok(&["ls", "-r", "@"]).contains("one.txt"),
        "a/b is left out now"
    );
    let r = checked(&store, &env, &reference);
    assert!(pruned(&r), "{:?}", r.walk);
    // Other globs than the cache was written with: every directory is read.
    let opts = SnapshotOptions {
        ignore_globs: vec!["*.txt".into()],
        ..SnapshotOptions::default()
    };
    let with_globs = |store: &Store| {
        rewind::snapshot::snapshot(store, &env.ws, &opts, &rewind::progress::NoProgress)
            .unwrap()
            .report
    };
    let r = with_globs(&store);
    assert!(!pruned(&r), "{:?}", r.walk);
    let reference_store = Store::open(&reference, StoreOptions::default()).unwrap();
    let full = rewind::snapshot::snapshot(
        &reference_store,
        &env.ws,
        &SnapshotOptions {
            dry_run: true,
            ..opts.clone()
        },
        &rewind::progress::NoProgress,
    )
    .unwrap()
    .report;
    assert_eq!(r.root, full.root);
    assert_eq!(
        r.stats.files, 1,
        "only the .gitignore is left: {:?}",
        r.stats
    );
}

#[test]
fn killed_daemon_and_restart_fall_back_to_full_walks() {
    let (env, reference) = setup();
    let (d, store) = watched(&env, &[]);
    let kill = |pid: i32| {
        // SAFETY: killing the daemon this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        wait_for("the killed daemon to be gone", || {
            // SAFETY: signal 0 only checks the pid.
            let gone = unsafe { libc::kill(pid, 0) } != 0;
            gone || {
                let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                stat.contains(") Z")
            }
        });
    };
    // Killed mid-stream, edits meanwhile, restarted: the old token means nothing to the new
    // daemon, whose journal did not see those edits.
    kill(d.pid());
    env.write("a/b/one.txt", b"edited while no daemon ran\n");
    let d2 = Daemon::start(&env, &[]);
    let r = checked(&store, &env, &reference);
    assert!(full_reason(&r).contains("restarted"), "{:?}", r.walk);
    // Killed again, a snapshot without it: a plain walk, and it clears the token.
    kill(d2.pid());
    env.write("c/three.txt", b"edited with no daemon\n");
    let r = checked(&store, &env, &reference);
    assert_eq!(r.walk, WalkNarrowing::Full, "no daemon: a plain walk");
    let _d3 = Daemon::start(&env, &[]);
    let r = checked(&store, &env, &reference);
    assert!(full_reason(&r).contains("no token"), "{:?}", r.walk);
    env.write("c/new.txt", b"new\n");
    let r = checked(&store, &env, &reference);
    assert!(narrowed(&r), "{:?}", r.walk);
    drop(d);
}

#[test]
fn journal_overflow_falls_back_to_a_full_walk() {
    let (env, reference) = setup();
    let d = Daemon::start(&env, &["--max-queued-events", "8"]);
    env.ok(&["watch", "on"]);
    let store = env.open();
    snap(&store, &env.ws);
    assert!(narrowed(&snap(&store, &env.ws)));
    for i in 0..40 {
        env.write(&format!("a/flood{i}"), b"x");
    }
    let r = checked(&store, &env, &reference);
    assert!(full_reason(&r).contains("overflow"), "{:?}", r.walk);
    let st = d.status();
    assert!(st["overflows"].as_u64().unwrap() >= 1, "{st}");
    // Recovered: the token the full walk recorded is answered again. (Nothing is written in
    // between: the journal may hold up to 8 events of the flood's tail, so a few more could
    // reset it again, which is right but not what this checks.)
    let r = checked(&store, &env, &reference);
    assert!(narrowed(&r), "{:?}", r.walk);
    env.write("c/three.txt", b"after the flood\n");
    checked(&store, &env, &reference);
    let events = env.ok(&["events", "--json"]);
    assert!(events.contains("\"event\":\"overflow\""), "{events}");
}

#[test]
fn watch_limit_and_blind_file_systems_mean_full_walks() {
    let (env, reference) = setup();
    let d = Daemon::start(&env, &["--max-watches", "2"]);
    env.ok(&["watch", "on"]);
    let st = d.status();
    let w = &st["workspaces"][0];
    assert!(
        w["broken"].as_str().unwrap().contains("watch limit"),
        "{st}"
    );
    let store = env.open();
    snap(&store, &env.ws);
    env.write("a/two.txt", b"changed\n");
    let r = checked(&store, &env, &reference);
    assert!(full_reason(&r).contains("watch limit"), "{:?}", r.walk);
    drop(d);

    // A file system inotify cannot see (as a network mount): forced through the test knob with
    // the type of the file system the workspace is on.
    let c = std::ffi::CString::new(env.ws.as_os_str().as_encoded_bytes()).unwrap();
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: statfs fills the struct on success.
    assert_eq!(unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) }, 0);
    // SAFETY: initialised by the successful call.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)]
    let kind = st.f_type as i64;
    let d = Daemon::start(&env, &["--unsupported-fs-type", &format!("{kind:x}")]);
    let st = d.status();
    assert!(
        st["workspaces"][0]["broken"]
            .as_str()
            .unwrap()
            .contains("inotify cannot see"),
        "{st}"
    );
    env.write("c/three.txt", b"changed\n");
    let r = checked(&store, &env, &reference);
    assert!(
        matches!(r.walk, WalkNarrowing::DaemonFull { .. }),
        "{:?}",
        r.walk
    );
}

#[test]
fn moved_or_deleted_workspace_is_never_trusted() {
    let (env, reference) = setup();
    let (d, store) = watched(&env, &[]);
    // Replaced by another tree with the same directory names and the same file sizes.
    let aside = env.tmp.path().join("aside");
    fs::rename(&env.ws, &aside).unwrap();
    write_file(&env.ws, b"a/b/one.txt", b"ONE\n");
    write_file(&env.ws, b"a/two.txt", b"TWO\n");
    write_file(&env.ws, b"c/three.txt", b"THREE\n");
    let r = checked(&store, &env, &reference);
    assert!(!narrowed(&r), "{:?}", r.walk);
    let st = d.status();
    assert!(
        st["workspaces"][0]["broken"]
            .as_str()
            .unwrap()
            .contains("moved"),
        "{st}"
    );
    // `watch on` again re-arms it.
    env.ok(&["watch", "on"]);
    snap(&store, &env.ws);
    env.write("a/two.txt", b"again\n");
    let r = checked(&store, &env, &reference);
    assert!(narrowed(&r), "{:?}", r.walk);
}

#[test]
fn directories_moved_inside_the_workspace_are_rewatched() {
    let (env, reference) = setup();
    let _d = Daemon::start(&env, &[]);
    env.ok(&["watch", "on"]);
    let store = env.open();
    snap(&store, &env.ws);
    fs::rename(env.path("a"), env.path("c/moved")).unwrap();
    checked(&store, &env, &reference);
    // A write in the moved directory, under its new name, is seen.
    env.write("c/moved/b/one.txt", b"written after the move\n");
    let r = checked(&store, &env, &reference);
    assert!(narrowed(&r), "{:?}", r.walk);
    // Hard links: a write through another name raises no event in the first name's directory,
    // and making the link raises none there either.
    snap(&store, &env.ws);
    fs::hard_link(env.path("c/three.txt"), env.path("c/moved/link.txt")).unwrap();
    fs::write(env.path("c/moved/link.txt"), b"written through the link\n").unwrap();
    checked(&store, &env, &reference);
    fs::write(env.path("c/moved/link.txt"), b"and again\n").unwrap();
    checked(&store, &env, &reference);
    assert_eq!(
        fs::read(env.path("c/three.txt")).unwrap(),
        b"and again\n",
        "the link is real"
    );
}

fn auto_status(d: &Daemon) -> Value {
    d.status()["workspaces"][0]["auto"].clone()
}

fn auto_snapshots(env: &Env) -> Vec<Value> {
    let log: Value = serde_json::from_str(&env.ok(&["log", "--json"])).unwrap();
    let list = log
        .as_array()
        .cloned()
        .or_else(|| log["snapshots"].as_array().cloned())
        .unwrap_or_default();
    list.into_iter()
        .filter(|s| s["meta"]["label"] == "auto")
        .collect()
}

#[test]
fn automatic_snapshots_wait_for_quiet_respect_the_floor_and_skip_no_change() {
    let (env, _) = setup();
    let d = Daemon::start(&env, &[]);
    env.ok(&["snapshot"]);
    env.ok(&["watch", "on", "--auto", "200ms", "--floor", "3s"]);
    env.write("a/two.txt", b"first change\n");
    wait_for("the first automatic snapshot", || {
        auto_status(&d)["taken"].as_u64() == Some(1)
    });
    let first_start = auto_status(&d)["last_started_ns"].as_i64().unwrap();
    env.write("a/two.txt", b"second change\n");
    wait_for("the second automatic snapshot", || {
        auto_status(&d)["taken"].as_u64() == Some(2)
    });
    let second_start = auto_status(&d)["last_started_ns"].as_i64().unwrap();
    assert!(
        second_start - first_start >= 2_900_000_000,
        "the 3 s floor keeps them apart: {} ms",
        (second_start - first_start) / 1_000_000
    );
    let autos = auto_snapshots(&env);
    assert_eq!(autos.len(), 2, "{autos:?}");
    // The latest holds the latest content.
    let cat = env.ok(&["cat", "@", "a/two.txt"]);
    assert_eq!(cat, "second change\n");
    // A change that leaves the tree as it was records nothing.
    let attempts = auto_status(&d)["attempts"].as_u64().unwrap();
    env.write("a/two.txt", b"second change\n");
    wait_for("the daemon's try", || {
        auto_status(&d)["attempts"].as_u64() > Some(attempts)
    });
    assert_eq!(auto_snapshots(&env).len(), 2);
    // Undo and restore work on them as on any snapshot.
    let first_id = autos[1]["id"].as_str().unwrap().to_string();
    env.ok(&["restore", &first_id]);
    assert_eq!(fs::read(env.path("a/two.txt")).unwrap(), b"first change\n");
}

#[test]
fn thinning_keeps_one_a_day_and_protected_ones() {
    let (env, _) = setup();
    let store = env.open();
    for i in 0..5 {
        env.write("a/two.txt", format!("v{i}\n").as_bytes());
        rewind::snapshot::snapshot(
            &store,
            &env.ws,
            &SnapshotOptions {
                meta: vec![("label".into(), "auto".into())],
                ..SnapshotOptions::default()
            },
            &rewind::progress::NoProgress,
        )
        .unwrap();
    }
    let day = 24 * 3600 * 1_000_000_000i64;
    let report = rewind::forget::forget(
        &store,
        &rewind::forget::ForgetOptions {
            thin: Some(rewind::retention::Thinning::default()),
            labels: vec!["auto".into()],
            now_ns: Some(rewind::files::now_ns() + 2 * day),
            undo_depth: 0,
            ..Default::default()
        },
    )
    .unwrap();
    // Two days on, the five fall in one day's bucket: the newest stays (it is also the
    // workspace's latest, protected anyway).
    assert_eq!(report.forgotten.len(), 4, "{report:?}");
    let report = rewind::forget::forget(
        &store,
        &rewind::forget::ForgetOptions {
            thin: Some(rewind::retention::Thinning::default()),
            labels: vec!["auto".into()],
            now_ns: Some(rewind::files::now_ns() + 30 * day),
            undo_depth: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(report.forgotten.is_empty());
    assert_eq!(report.protected.len(), 1, "the latest is protected");
}

#[test]
fn events_stream_changes_snapshots_and_operations() {
    let (env, _) = setup();
    env.ok(&["snapshot"]);
    let _d = Daemon::start(&env, &[]);
    env.ok(&["watch", "on"]);
    let mut child = env
        .cmd()
        .args(["events", "--follow", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The subscription is live once the daemon counts it.
    wait_for("the subscriber", || {
        status_of(&env.store)["subscribers"].as_u64() == Some(1)
    });
    env.write("a/b/fresh.txt", b"fresh\n");
    let mut seen: Vec<Value> = Vec::new();
    let mut expect = |want: &dyn Fn(&Value) -> bool, what: &str| {
        let start = Instant::now();
        loop {
            if seen.iter().any(want) {
                return;
            }
            let left = PATIENCE.saturating_sub(start.elapsed());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {what} event; saw {seen:?}"));
            seen.push(serde_json::from_str(&line).unwrap());
        }
    };
    expect(
        &|v| {
            v["event"] == "changed"
                && v["paths"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p == "a/b/fresh.txt"))
        },
        "changed",
    );
    env.ok(&["snapshot", "-m", "by hand"]);
    expect(&|v| v["event"] == "snapshot", "snapshot");
    env.ok(&["restore", "@~1"]);
    expect(
        &|v| v["event"] == "operation" && v["kind"] == "restore",
        "restore operation",
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn one_daemon_per_store_and_status_when_none() {
    let (env, _) = setup();
    let (code, _) = env.fails(&["daemon", "status"]);
    assert_eq!(code, 1);
    let st: Value = serde_json::from_str(&{
        let out = env
            .cmd()
            .args(["daemon", "status", "--json"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    })
    .unwrap();
    assert_eq!(st["running"], false);
    let d = Daemon::start(&env, &[]);
    let again = env.ok(&["daemon", "start"]);
    assert!(again.contains("already running"), "{again}");
    let (code, err) = env.fails(&["daemon", "run"]);
    assert_eq!(code, 2);
    assert!(err.contains("already running"), "{err}");
    // The socket is reachable by its owner only.
    let mode = fs::metadata(env.store.join("daemon"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let st = d.status();
    for key in [
        "pid",
        "memory_rss_bytes",
        "token",
        "overflows",
        "watches",
        "workspaces",
    ] {
        assert!(!st[key].is_null(), "{key} missing: {st}");
    }
    drop(d);
    let (code, err) = env.fails(&["events"]);
    assert_eq!(code, 2);
    assert!(err.contains("no rewind daemon is running"), "{err}");
}

/// `daemon status --json` is the daemon's typed status with `running: true`: every key of
/// the daemon, of each watched workspace, its journal and its automatic snapshots; with no
/// daemon, `running: false` and the store.
#[test]
fn daemon_status_json_has_its_keys() {
    let (env, _) = setup();
    let none = status_of(&env.store);
    let typed: rewind::wire::DaemonStatusShown =
        serde_json::from_value(none.clone()).expect("a DaemonStatusShown");
    assert!(
        matches!(
            typed,
            rewind::wire::DaemonStatusShown::NotRunning { running: false, .. }
        ),
        "{none}"
    );
    assert!(none["store"].is_string(), "{none}");
    let d = Daemon::start(&env, &[]);
    env.ok(&["watch", "on", "--auto", "10s"]);
    wait_for("the workspace watched", || {
        d.status()["workspaces"][0]["watching"] == true
    });
    let st = d.status();
    for key in [
        "running",
        "pid",
        "store",
        "instance",
        "started_ns",
        "uptime_secs",
        "memory_rss_bytes",
        "token",
        "watches",
        "overflows",
        "subscribers",
        "workspaces",
    ] {
        assert!(st.get(key).is_some(), "{key} missing: {st}");
    }
    assert_eq!(st["running"], true, "{st}");
    let w = &st["workspaces"][0];
    for key in [
        "workspace",
        "watching",
        "broken",
        "watches",
        "events",
        "overflows",
        "journal",
        "auto",
    ] {
        assert!(w.get(key).is_some(), "{key} missing: {w}");
    }
    for key in ["dirty_dirs", "dirty_entries", "dirty_trees", "held_events"] {
        assert!(w["journal"][key].is_u64(), "{key} missing: {w}");
    }
    for key in [
        "quiet_ms",
        "floor_ms",
        "taken",
        "attempts",
        "last_ns",
        "last_started_ns",
        "running",
        "pending",
        "last_error",
    ] {
        assert!(w["auto"].get(key).is_some(), "{key} missing: {w}");
    }
    assert_eq!(w["auto"]["quiet_ms"], 10_000, "{w}");
    let typed: rewind::wire::DaemonStatusShown =
        serde_json::from_value(st.clone()).expect("a DaemonStatusShown");
    let rewind::wire::DaemonStatusShown::Running { running, status } = typed else {
        panic!("not running: {st}");
    };
    assert!(running);
    assert_eq!(i64::from(status.pid), i64::from(d.pid()));
    assert_eq!(status.workspaces.len(), 1, "{st}");
}

/// `daemon start/stop` and `watch on/off/list` print their wire objects; `daemon stop` says
/// `running: false` whether it stopped one or found none (it said it only for none).
#[test]
fn daemon_and_watch_json_objects() {
    let env = Env::new();
    let json = |args: &[&str]| -> Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        serde_json::from_str(&env.ok(&a)).expect("json")
    };
    let on = json(&["watch", "on"]);
    assert_eq!(on["watched"], true, "{on}");
    assert_eq!(on["daemon_running"], false, "{on}");
    assert!(on["auto"].is_null(), "{on}");
    let list = json(&["watch", "list"]);
    assert_eq!(
        list["workspaces"].as_array().map(Vec::len),
        Some(1),
        "{list}"
    );
    assert!(list["workspaces"][0]["path"].is_string(), "{list}");
    let d = Daemon::start(&env, &[]);
    let again = json(&["daemon", "start"]);
    assert_eq!(again["started"], false, "{again}");
    assert_eq!(again["pid"].as_i64(), Some(d.pid() as i64), "{again}");
    let stopped = json(&["daemon", "stop"]);
    assert_eq!(
        stopped,
        serde_json::json!({"stopped": true, "running": false})
    );
    let none = json(&["daemon", "stop"]);
    assert_eq!(
        none,
        serde_json::json!({"stopped": false, "running": false})
    );
    let off = json(&["watch", "off"]);
    assert_eq!(off["was_watched"], true, "{off}");
    assert_eq!(off["watched"], false, "{off}");
}
