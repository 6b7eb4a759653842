//! Guards around the store's own consistency: the store directory is never a workspace, a
//! restore never records a snapshot that a `forget` removed while it ran (and a history entry
//! naming a snapshot that is gone, left by an older version, breaks no command), a killed
//! daemon does not stop the next one from starting.

use crate::common;

use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{Env, rewind_bin};
use rewind::forget::{ForgetOptions, forget};
use rewind::{Id, NoProgress, OpInfo, Progress, RestoreOptions, SnapshotOptions, Store};

fn snapshot(store: &Store, ws: &std::path::Path) -> Id {
    rewind::snapshot(store, ws, &SnapshotOptions::default(), &NoProgress)
        .expect("snapshot")
        .report
        .id
        .expect("an id")
}

#[test]
fn the_store_directory_and_what_is_inside_it_are_never_workspaces() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "--tag", "first"]);
    let store = env.store.to_str().unwrap();
    let ops = |env: &Env| env.ok(&["op", "log"]);
    let before = ops(&env);
    for dir in [
        env.store.clone(),
        env.store.join("daemon"),
        env.store.join("."),
    ] {
        fs::create_dir_all(&dir).unwrap();
        for args in [
            &["snapshot", "--tag", "self"][..],
            &["restore", "--force", "first"][..],
        ] {
            let out = rewind_bin()
                .args(["--store", store, "-C"])
                .arg(&dir)
                .args(args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "{args:?} in {}: {err}",
                dir.display()
            );
            assert!(err.contains("inside the store"), "{args:?}: {err}");
        }
    }
    // Reached through a symlink, it is the same directory.
    let link = env.tmp.path().join("store-link");
    std::os::unix::fs::symlink(&env.store, &link).unwrap();
    let out = rewind_bin()
        .args(["--store", store, "-C"])
        .arg(&link)
        .args(["snapshot"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(ops(&env), before, "nothing was recorded");
    assert!(env.ok(&["verify"]).contains("no problems"));
    // A store inside a workspace is fine: the workspace's snapshots leave it out.
    let inner = Env::new();
    inner.write("b.txt", b"b\n");
    let inner_store = inner.ws.join(".store");
    let run = |args: &[&str]| {
        let out = rewind_bin()
            .arg("--store")
            .arg(&inner_store)
            .arg("-C")
            .arg(&inner.ws)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["snapshot"]);
    run(&["snapshot"]);
    assert!(run(&["ls", "@"]).contains("b.txt"));
    assert!(!run(&["ls", "@"]).contains(".store"));
}

/// Forgets `target` when the restore starts writing: what a `forget` in another process can do
/// between the restore's choice of its target and its record.
struct ForgetOnWrite<'a> {
    store: &'a Store,
    target: Id,
    done: AtomicBool,
}

impl Progress for ForgetOnWrite<'_> {
    fn start(&self, phase: &str, _bytes: u64, _items: u64) {
        if phase == "restore" && !self.done.swap(true, Ordering::SeqCst) {
            let r = forget(
                self.store,
                &ForgetOptions {
                    snapshots: vec![self.target],
                    ..ForgetOptions::default()
                },
            )
            .expect("forget");
            assert_eq!(r.forgotten.len(), 1);
        }
    }
}

#[test]
fn a_target_forgotten_while_a_restore_runs_is_never_recorded() {
    let env = Env::new();
    let store = env.open();
    env.write("f.txt", b"one\n");
    let a = snapshot(&store, &env.ws);
    env.write("f.txt", b"two\n");
    snapshot(&store, &env.ws);
    let progress = ForgetOnWrite {
        store: &store,
        target: a,
        done: AtomicBool::new(false),
    };
    let report = rewind::restore(
        &store,
        &env.ws,
        a,
        &RestoreOptions::default(),
        &OpInfo::default(),
        &progress,
    )
    .expect("restore");
    assert!(progress.done.load(Ordering::SeqCst));
    assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"one\n");
    let after = report.after.expect("an after state");
    assert_ne!(after, a, "the forgotten target is not recorded");
    drop(store);
    // Every later command works, and the state recorded is the restored one.
    assert!(env.ok(&["verify"]).contains("no problems"));
    env.ok(&["log"]);
    assert_eq!(env.ok(&["cat", "@", "f.txt"]), "one\n");
    env.ok(&["forget", "--keep-last", "1"]);
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"two\n");
}

#[test]
fn a_history_entry_naming_a_forgotten_snapshot_breaks_no_command() {
    let env = Env::new();
    let store = env.open();
    env.write("f.txt", b"one\n");
    let a = snapshot(&store, &env.ws);
    env.write("f.txt", b"two\n");
    snapshot(&store, &env.ws);
    let ws = store
        .reader()
        .unwrap()
        .workspace(&env.ws.canonicalize().unwrap())
        .unwrap()
        .expect("registered");
    forget(
        &store,
        &ForgetOptions {
            snapshots: vec![a],
            ..ForgetOptions::default()
        },
    )
    .expect("forget");
    drop(store);
    // What an older version left when a forget raced a restore: the latest entry names it.
    {
        const WS_LOG: redb::TableDefinition<(u64, u64), [u8; 32]> =
            redb::TableDefinition::new("ws_log");
        let db = redb::Database::builder()
            .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
            .create(env.store.join("store.redb"))
            .expect("open the store's database");
        let txn = db.begin_write().unwrap();
        {
            use redb::ReadableTable;
            let mut log = txn.open_table(WS_LOG).unwrap();
            let last = log
                .range((ws.id(), 0)..=(ws.id(), u64::MAX))
                .unwrap()
                .next_back()
                .map_or(0, |e| e.unwrap().0.value().1);
            log.insert((ws.id(), last + 100), a.0).unwrap();
        }
        txn.commit().unwrap();
    }
    let log = env.ok(&["log"]);
    assert!(!log.contains(&a.short()), "{log}");
    assert_eq!(env.ok(&["cat", "@", "f.txt"]), "two\n");
    env.write("f.txt", b"three\n");
    env.ok(&["snapshot"]);
    env.ok(&["restore", "@~1"]);
    assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"two\n");
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"three\n");
    env.ok(&["forget", "--keep-last", "1"]);
    // The forget removed the dangling entry: nothing left to report.
    assert!(env.ok(&["verify"]).contains("no problems"));
}

#[test]
fn a_killed_daemon_does_not_stop_the_next_start() {
    let env = Env::new();
    env.write("f.txt", b"x\n");
    env.ok(&["snapshot"]);
    let status = |env: &Env| -> serde_json::Value {
        let out = env
            .cmd()
            .args(["daemon", "status", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_default()
    };
    env.ok(&["daemon", "start"]);
    let pid = status(&env)["pid"].as_i64().expect("a pid") as i32;
    // SAFETY: killing the daemon this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let gone = std::time::Instant::now();
    // SAFETY: signal 0 only asks whether the pid exists.
    while unsafe { libc::kill(pid, 0) } == 0
        && !fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z")
    {
        assert!(gone.elapsed().as_secs() < 60, "the killed daemon stays");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = env.ok(&["daemon", "start"]);
    assert!(out.contains("started"), "{out}");
    let again = status(&env)["pid"].as_i64().expect("a pid") as i32;
    assert_ne!(again, pid);
    env.ok(&["daemon", "stop"]);
}
