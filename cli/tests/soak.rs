//! Many processes, one store: eight workers (snapshots in three workspaces, `run`, restores,
//! artifact puts, a gc loop, and a worker that makes garbage and forgets it) hammer a store at
//! once. Afterwards every snapshot and artifact a worker was told was stored is there with the
//! content it had, and `verify --full` is clean.
//!
//! `cargo test` runs it for a few seconds; `REWIND_SOAK_SECONDS=60` (what `scripts/soak.sh`
//! sets) for the full minute.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;

fn rewind(store: &Path, ws: &Path) -> Command {
    let mut c = rewind_bin();
    c.arg("--store")
        .arg(store)
        .arg("-C")
        .arg(ws)
        .arg("--lock-timeout")
        .arg("120")
        .stdin(Stdio::null());
    c
}

fn must(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the workers were told was stored.
#[derive(Default)]
struct Stored {
    /// (snapshot id, file, content): `cat` must give it back.
    snapshots: Vec<(String, String, Vec<u8>)>,
    /// (artifact key, content).
    artifacts: Vec<(String, Vec<u8>)>,
}

#[test]
fn eight_processes_share_a_store_and_lose_nothing() {
    let seconds: u64 = std::env::var("REWIND_SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let env = Env::new();
    env.ok(&["init"]);
    // Keep every run's snapshots: the run retention forgets old ones on purpose, and this test
    // checks that nothing is lost by accident.
    fs::write(
        env.store.join("config.toml"),
        "[retention]\nrun_keep_last = 0\n",
    )
    .unwrap();
    let store = env.store.clone();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let stored = Mutex::new(Stored::default());
    let ws = |name: &str| -> PathBuf {
        let p = env.tmp.path().join(name);
        fs::create_dir_all(&p).unwrap();
        p
    };
    let counts = Mutex::new(Vec::new());

    std::thread::scope(|s| {
        // Three snapshot workers.
        for w in 0..3u64 {
            let (store, dir, stored, counts) = (&store, ws(&format!("snap{w}")), &stored, &counts);
            s.spawn(move || {
                let mut n = 0u64;
                for i in 0..40 {
                    write_file(
                        &dir,
                        format!("base/f{i}").as_bytes(),
                        &noise(w * 1000 + i, 4000),
                    );
                }
                while Instant::now() < deadline {
                    let content = noise(w * 1_000_000 + n, 2000 + (n as usize % 7) * 1000);
                    write_file(&dir, b"changing.bin", &content);
                    write_file(
                        &dir,
                        format!("base/f{}", n % 40).as_bytes(),
                        &noise(n, 3000),
                    );
                    let id = must(
                        rewind(store, &dir)
                            .args(["snapshot", "-q"])
                            .output()
                            .unwrap(),
                        "snapshot",
                    );
                    stored.lock().unwrap().snapshots.push((
                        id.trim().to_string(),
                        "changing.bin".into(),
                        content,
                    ));
                    n += 1;
                }
                counts.lock().unwrap().push(("snapshot", n));
            });
        }
        // rewind run.
        {
            let (store, dir, stored, counts) = (&store, ws("run"), &stored, &counts);
            s.spawn(move || {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    let script = format!("printf 'run {n}\\n' > out.txt");
                    let out = must(
                        rewind(store, &dir)
                            .args(["run", "--json", "--", "sh", "-c", &script])
                            .output()
                            .unwrap(),
                        "run",
                    );
                    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                    stored.lock().unwrap().snapshots.push((
                        v["after"].as_str().unwrap().to_string(),
                        "out.txt".into(),
                        format!("run {n}\n").into_bytes(),
                    ));
                    n += 1;
                }
                counts.lock().unwrap().push(("run", n));
            });
        }
        // Restores back and forth between two tagged states.
        {
            let (store, dir, counts) = (&store, ws("restore"), &counts);
            s.spawn(move || {
                for (tag, v) in [("soak-one", 1u64), ("soak-two", 2)] {
                    for i in 0..30 {
                        write_file(&dir, format!("f{i}").as_bytes(), &noise(v * 100 + i, 5000));
                    }
                    must(
                        rewind(store, &dir)
                            .args(["snapshot", "-q", "--tag", tag])
                            .output()
                            .unwrap(),
                        "snapshot",
                    );
                }
                let mut n = 0u64;
                while Instant::now() < deadline {
                    let (tag, v) = if n.is_multiple_of(2) {
                        ("soak-one", 1)
                    } else {
                        ("soak-two", 2)
                    };
                    must(
                        rewind(store, &dir)
                            .args(["restore", tag, "-q"])
                            .output()
                            .unwrap(),
                        "restore",
                    );
                    assert_eq!(fs::read(dir.join("f7")).unwrap(), noise(v * 100 + 7, 5000));
                    n += 1;
                }
                counts.lock().unwrap().push(("restore", n));
            });
        }
        // Artifact puts.
        {
            let (store, dir, stored, counts) = (&store, ws("art"), &stored, &counts);
            s.spawn(move || {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    let content = noise(77_000 + n, 1000 + (n as usize % 5) * 40_000);
                    let file = dir.join("input");
                    fs::write(&file, &content).unwrap();
                    let key = format!("soak/{n}");
                    must(
                        rewind(store, &dir)
                            .args(["artifact", "put", &key])
                            .arg(&file)
                            .output()
                            .unwrap(),
                        "artifact put",
                    );
                    stored.lock().unwrap().artifacts.push((key, content));
                    n += 1;
                }
                counts.lock().unwrap().push(("artifact", n));
            });
        }
        // Garbage: snapshot a state, move on, forget the state.
        {
            let (store, dir, counts) = (&store, ws("junk"), &counts);
            s.spawn(move || {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    write_file(&dir, b"junk.bin", &noise(5_000_000 + n, 30_000));
                    let junk = must(
                        rewind(store, &dir)
                            .args(["snapshot", "-q"])
                            .output()
                            .unwrap(),
                        "snapshot",
                    );
                    write_file(&dir, b"junk.bin", b"small\n");
                    must(
                        rewind(store, &dir)
                            .args(["snapshot", "-q"])
                            .output()
                            .unwrap(),
                        "snapshot",
                    );
                    must(
                        rewind(store, &dir)
                            .args(["forget", junk.trim()])
                            .output()
                            .unwrap(),
                        "forget",
                    );
                    n += 1;
                }
                counts.lock().unwrap().push(("forget", n));
            });
        }
        // gc, over and over.
        {
            let (store, dir, counts) = (&store, ws("gc"), &counts);
            s.spawn(move || {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    must(
                        rewind(store, &dir).args(["gc", "-q"]).output().unwrap(),
                        "gc",
                    );
                    n += 1;
                }
                counts.lock().unwrap().push(("gc", n));
            });
        }
    });
    eprintln!("{seconds} s: {:?}", counts.lock().unwrap());

    // Everything reported as stored is there, with its content.
    let stored = stored.into_inner().unwrap();
    assert!(stored.snapshots.len() >= 6 && !stored.artifacts.is_empty());
    for (id, file, content) in &stored.snapshots {
        let out = env.cmd().args(["cat", id, file]).output().unwrap();
        assert!(
            out.status.success(),
            "snapshot {id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == *content, "snapshot {id}: {file} differs");
    }
    for (key, content) in &stored.artifacts {
        let out = env.cmd().args(["artifact", "get", key]).output().unwrap();
        assert!(out.status.success(), "artifact {key}");
        assert!(out.stdout == *content, "artifact {key} differs");
    }
    env.ok(&["gc", "-q"]);
    let v = env.ok(&["verify", "--full", "--json"]);
    assert!(v.contains("\"ok\": true"), "{v}");
}
