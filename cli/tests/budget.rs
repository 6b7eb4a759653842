//! The disk budget: `[retention] max_store_bytes` after each snapshot and `forget --max-size`
//! evict the oldest unprotected snapshots, keep every protected one, and leave a store that
//! verifies.

use crate::common;

use common::*;
use serde_json::Value;

/// Bytes that do not compress or deduplicate: each snapshot's new data is exactly this much.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn file_bytes(env: &Env) -> u64 {
    json(env, &["stats"])["file_bytes"].as_u64().unwrap()
}

fn exists(env: &Env, id: &str) -> bool {
    env.cmd()
        .args(["show", id])
        .output()
        .unwrap()
        .status
        .success()
}

const NEW: usize = 256 * 1024;

#[test]
fn an_agent_loop_stays_within_the_budget_and_keeps_what_is_protected() {
    let env = Env::new();
    env.write("src/main.rs", b"fn main() {}\n");
    env.write("data.bin", &noise(0, NEW));
    snap(&env, "start");
    let max = file_bytes(&env) + 3 * 1024 * 1024;
    std::fs::write(
        env.store.join("config.toml"),
        format!("[retention]\nmax_store_bytes = {max}\nundo_depth = 2\n"),
    )
    .unwrap();
    let mut tagged = Vec::new();
    let mut overlay_base = None;
    let n = 60;
    for i in 1..=n {
        env.write("data.bin", &noise(i, NEW));
        env.write(
            "src/main.rs",
            format!("fn main() {{ println!(\"{i}\"); }}\n").as_bytes(),
        );
        let id = snap(&env, &format!("step {i}"));
        if i % 15 == 0 {
            env.ok(&["tag", &format!("t{i}"), &id]);
            tagged.push(id.clone());
        }
        if i == 20 {
            let ov = env.ok(&["overlay", "create", "--backend", "copy"]);
            let listed = json(&env, &["overlay", "list"]);
            assert!(!ov.trim().is_empty());
            overlay_base = listed[0]["base"].as_str().map(String::from);
        }
        // Never past the budget by more than one snapshot's new data (and its records).
        let len = file_bytes(&env);
        assert!(
            len <= max + NEW as u64 + 512 * 1024,
            "step {i}: {len} bytes for a budget of {max}"
        );
        for t in &tagged {
            assert!(exists(&env, t), "step {i}: tagged {t} was evicted");
        }
        if let Some(b) = &overlay_base {
            assert!(
                exists(&env, b),
                "step {i}: the overlay's base {b} was evicted"
            );
        }
        if i % 20 == 0 {
            verify_full(&env);
        }
    }
    let log = json(&env, &["log"]);
    let left = log.as_array().unwrap().len();
    assert!(
        left < n as usize / 2,
        "only {left} snapshots: nothing was evicted?"
    );
    verify_full(&env);
    let stats = json(&env, &["stats"]);
    let b = &stats["budget"];
    assert_eq!(b["max_bytes"].as_u64(), Some(max), "{stats}");
    assert!(
        b["protected"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["reason"].as_str().unwrap().contains("tagged 't15'")),
        "{b}"
    );
    assert!(b["next_eviction"].is_object() || b["evictable"] == 0, "{b}");
}

#[test]
fn protected_data_over_the_budget_is_said_once_and_never_fails_a_snapshot() {
    let env = Env::new();
    env.write("data.bin", &noise(1, NEW));
    let first = snap(&env, "one");
    env.ok(&["tag", "keep", &first]);
    std::fs::write(
        env.store.join("config.toml"),
        "[retention]\nmax_store_bytes = 1\nundo_depth = 0\n",
    )
    .unwrap();
    let said = |i: u64| -> String {
        env.write("data.bin", &noise(10 + i, NEW));
        let out = env
            .cmd()
            .args(["snapshot", "-q", "-m", &format!("s{i}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(said(1).contains("protected snapshots alone"));
    assert!(!said(2).contains("protected snapshots alone"));
    assert!(exists(&env, "keep"));
    // Known to be over with nothing to evict: no full collection on every later snapshot.
    let again = json(&env, &["forget", "--max-size", "1"]);
    assert_eq!(again["collections"], 0, "{again}");
    assert_eq!(
        again["evicted"].as_array().map(Vec::len),
        Some(0),
        "{again}"
    );
    // Only the tagged and the latest are left.
    assert_eq!(json(&env, &["log"]).as_array().unwrap().len(), 2);
    verify_full(&env);
}

#[test]
fn forget_max_size_evicts_oldest_first() {
    let env = Env::new();
    let mut ids = Vec::new();
    for i in 0..6 {
        env.write("data.bin", &noise(100 + i, NEW));
        ids.push(snap(&env, &format!("s{i}")));
    }
    let before = file_bytes(&env);
    let max = before - 2 * NEW as u64;
    let v: Value = json(
        &env,
        &[
            "forget",
            "--max-size",
            &max.to_string(),
            "--undo-depth",
            "0",
        ],
    );
    let evicted: Vec<&str> = v["evicted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["short_id"].as_str().unwrap())
        .collect();
    assert!(!evicted.is_empty(), "{v}");
    assert_eq!(evicted[0], ids[0], "{v}");
    // An evicted row is forget's row: the same keys (`reason` is null: nothing protected it).
    let row = &v["evicted"][0];
    let mut keys: Vec<&String> = row.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        ["id", "message", "reason", "short_id", "time", "workspace"],
        "{v}"
    );
    assert!(row["reason"].is_null(), "{v}");
    assert!(v["used_after"].as_u64().unwrap() <= max, "{v}");
    let (_, err) = env.fails(&["forget", "--max-size", "lots"]);
    assert!(err.contains("lots"), "{err}");
    verify_full(&env);
}

/// The budget holds for every snapshot, not only `rewind snapshot`'s: here an agent's loop of
/// `rewind run` (two snapshots a turn) and Claude Code hook calls, none of which enforced it.
#[test]
fn runs_and_hooks_keep_the_store_within_the_budget() {
    let env = Env::new();
    env.write("data.bin", &noise(0, NEW));
    snap(&env, "start");
    let max = file_bytes(&env) + 2 * 1024 * 1024;
    std::fs::write(
        env.store.join("config.toml"),
        format!("[retention]\nmax_store_bytes = {max}\nundo_depth = 1\n"),
    )
    .unwrap();
    let ws = env.ws.to_str().unwrap().to_string();
    for i in 1..=24u64 {
        env.write("data.bin", &noise(i, NEW));
        if i % 2 == 0 {
            env.ok(&["run", "-q", "--", "true"]);
        } else {
            let event = format!(
                r#"{{"session_id":"s","cwd":"{ws}","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{{"file_path":"{ws}/data.bin"}}}}"#
            );
            let mut cmd = env.cmd();
            cmd.args(["hook", "claude"]);
            let out = with_stdin(cmd, event.as_bytes());
            assert!(out.status.success(), "hook call {i}: {out:?}");
        }
        let len = file_bytes(&env);
        assert!(
            len <= max + NEW as u64 + 512 * 1024,
            "turn {i}: {len} bytes for a budget of {max}"
        );
    }
    verify_full(&env);
}

/// A process killed (SIGKILL) anywhere in a snapshot and the eviction it sets off leaves a store
/// that verifies, with every protected snapshot in it: each batch is its own transaction.
#[test]
fn a_kill_during_eviction_loses_nothing_protected() {
    let env = Env::new();
    env.write("data.bin", &noise(0, NEW));
    let kept = snap(&env, "kept");
    env.ok(&["tag", "keep", &kept]);
    for i in 1..=12u64 {
        env.write("data.bin", &noise(i, NEW));
        snap(&env, &format!("filler {i}"));
    }
    std::fs::write(
        env.store.join("config.toml"),
        "[retention]\nmax_store_bytes = 1048576\nundo_depth = 1\n",
    )
    .unwrap();
    for round in 0..8u64 {
        env.write("data.bin", &noise(100 + round, NEW));
        let mut child = env.cmd().args(["snapshot", "-q"]).spawn().unwrap();
        // From the snapshot's start to well into the eviction's batches.
        std::thread::sleep(std::time::Duration::from_millis(5 + round * 15));
        let _ = child.kill();
        let _ = child.wait();
        verify_full(&env);
        assert!(
            exists(&env, &kept),
            "round {round}: the tagged snapshot was lost"
        );
    }
    // A last snapshot left alone evicts what the killed ones did not.
    env.write("data.bin", &noise(999, NEW));
    snap(&env, "last");
    verify_full(&env);
    assert!(exists(&env, &kept));
    let left = json(&env, &["log", "--all"]).as_array().unwrap().len();
    assert!(left < 14, "nothing was evicted: {left} snapshots");
}

/// An agent's day in miniature, through the library (as the daemon, MCP and the server take
/// their snapshots): a thousand snapshots of a changing tree, a tag every hundred. The pages in
/// use never pass the budget by more than one snapshot's new data, no tagged snapshot goes,
/// and the store verifies (fully) along the way.
#[test]
fn a_thousand_snapshots_stay_within_the_budget() {
    let env = Env::new();
    const SMALL: usize = 32 * 1024;
    env.write("src/lib.rs", b"pub fn f() {}\n");
    env.write("data.bin", &noise(0, SMALL));
    let said = |what: &str| eprintln!("store says: {what}");
    let store = rewind::Store::open(
        &env.store,
        rewind::StoreOptions {
            on_warning: Some(std::sync::Arc::new(said)),
            on_notice: Some(std::sync::Arc::new(said)),
            ..rewind::StoreOptions::default()
        },
    )
    .unwrap();
    let opts = rewind::SnapshotOptions::default();
    let take = |store: &rewind::Store| {
        rewind::snapshot(store, &env.ws, &opts, &rewind::progress::NoProgress)
            .expect("snapshot")
            .report
    };
    take(&store);
    let max = rewind::budget::used_bytes(&store).unwrap() + 3 * 1024 * 1024;
    std::fs::write(
        env.store.join("config.toml"),
        format!("[retention]\nmax_store_bytes = {max}\nundo_depth = 3\n"),
    )
    .unwrap();
    let mut tagged = Vec::new();
    for i in 1..=1000u64 {
        env.write("data.bin", &noise(i, SMALL));
        if i % 7 == 0 {
            env.write(
                &format!("src/m{}.rs", i % 50),
                format!("// {i}\n").as_bytes(),
            );
        }
        let r = take(&store);
        let id = r.id.expect("an id");
        if i % 100 == 0 {
            store.set_tag(&format!("t{i}"), &id, false).unwrap();
            tagged.push(id);
        }
        let used = rewind::budget::used_bytes(&store).unwrap();
        assert!(
            used <= max + SMALL as u64 + 256 * 1024,
            "snapshot {i}: {used} bytes in use for a budget of {max} (file {} bytes, {} snapshots)",
            std::fs::metadata(env.store.join("store.redb"))
                .unwrap()
                .len(),
            store.reader().unwrap().all_snapshots().unwrap().len()
        );

        if i % 250 == 0 {
            let v = rewind::verify::verify(&store, true, &rewind::progress::NoProgress).unwrap();
            assert!(v.problems.is_empty(), "snapshot {i}: {:?}", v.problems);
            let all = store.reader().unwrap().all_snapshots().unwrap();
            for t in &tagged {
                assert!(all.contains(t), "snapshot {i}: tagged {t:?} was evicted");
            }
            assert!(
                all.len() < 300,
                "snapshot {i}: {} kept: nothing evicted?",
                all.len()
            );
        }
    }
}

/// The budget's collection reads only what the evicted snapshots did not share, so it must
/// still find everything that anything else reaches, wherever it is: content that comes back
/// after it left (a revert), that another path holds (a copy, a moved directory), chunks that
/// versions of a large file share, a snapshot evicted out of order. Each eviction collects in
/// its own forget's transaction; after each, a full gc finds nothing more to delete (it
/// collected exactly the garbage), and the store verifies with every hash.
#[test]
fn incremental_eviction_collects_exactly_what_nothing_reaches() {
    let env = Env::new();
    let store = rewind::Store::open(&env.store, rewind::StoreOptions::default()).unwrap();
    let big = |seed: u64| {
        // Over the chunking threshold; versions differ in the middle only.
        let mut b = noise(7, 6 << 20);
        b[3 << 20..(3 << 20) + 4096].copy_from_slice(&noise(seed, 4096));
        b
    };
    let mut ids = Vec::new();
    let take = |ids: &mut Vec<rewind::id::Id>| {
        ids.push(env.snap(&store).id.expect("an id"));
    };
    env.write("a.txt", &noise(1, 3000));
    env.write("d/x.txt", &noise(2, 5000));
    env.write("d/deep/y.txt", &noise(3, 700));
    env.write("big.bin", &big(10));
    take(&mut ids); // 0
    env.write("a.txt", &noise(4, 3000));
    std::fs::rename(env.ws.join("d"), env.ws.join("e")).unwrap();
    env.write("big.bin", &big(11));
    take(&mut ids); // 1: d moved to e (the same tree elsewhere), a.txt changed
    env.write("a.txt", &noise(1, 3000));
    env.write("c.txt", &noise(4, 3000));
    take(&mut ids); // 2: a.txt reverted to snapshot 0's, c.txt holds snapshot 1's a.txt
    std::fs::remove_dir_all(env.ws.join("e")).unwrap();
    env.write("z/x.txt", &noise(2, 5000));
    env.write("big.bin", &big(12));
    take(&mut ids); // 3: x.txt only at another path, big.bin's third version
    env.write("only-in-4.txt", &noise(5, 900));
    take(&mut ids); // 4
    env.write("only-in-4.txt", &noise(6, 900));
    take(&mut ids); // 5 (the latest, protected)
    // No garbage before: what the gc finds afterwards is what the eviction left.
    rewind::gc::collect(
        &store,
        &rewind::gc::GcOptions::default(),
        &rewind::progress::NoProgress,
    )
    .unwrap();
    let leftover = |store: &rewind::Store| {
        let r = rewind::gc::collect(
            store,
            &rewind::gc::GcOptions {
                dry_run: true,
                ..rewind::gc::GcOptions::default()
            },
            &rewind::progress::NoProgress,
        )
        .unwrap();
        (r.trees_removed, r.blobs_removed, r.chunks_removed)
    };
    let mut collected = (0, 0, 0);
    // Out of order, one at a time, then two at once.
    for batch in [
        vec![ids[1]],
        vec![ids[0]],
        vec![ids[4]],
        vec![ids[2], ids[3]],
    ] {
        let mut calls = 0;
        rewind::forget::forget_then(
            &store,
            &rewind::forget::ForgetOptions {
                snapshots: batch.clone(),
                undo_depth: 0,
                ..Default::default()
            },
            |txn, _| {
                calls += 1;
                let r = rewind::gc::collect_unreferenced(txn, 0.9, 1)?;
                collected.0 += r.trees_removed;
                collected.1 += r.blobs_removed;
                collected.2 += r.chunks_removed;
                Ok(true)
            },
        )
        .unwrap();
        assert_eq!(calls, batch.len());
        assert_eq!(leftover(&store), (0, 0, 0), "after forgetting {batch:?}");
        let v = rewind::verify::verify(&store, true, &rewind::progress::NoProgress).unwrap();
        assert!(v.problems.is_empty(), "after {batch:?}: {:?}", v.problems);
    }
    // It did collect: snapshot 1's a.txt lives on as c.txt, but big.bin's first two versions'
    // own chunks, only-in-4.txt's first content and the old directories went.
    assert!(collected.0 >= 3, "trees: {collected:?}");
    assert!(collected.1 >= 3, "blobs: {collected:?}");
    assert!(collected.2 >= 2, "chunks: {collected:?}");
    // What is left restores: the workspace put back from the latest after a change.
    env.write("a.txt", b"changed");
    std::fs::remove_file(env.ws.join("big.bin")).unwrap();
    env.ok(&["restore", "--force", &ids[5].hex()]);
    assert_eq!(std::fs::read(env.ws.join("a.txt")).unwrap(), noise(1, 3000));
    assert_eq!(
        std::fs::read(env.ws.join("z/x.txt")).unwrap(),
        noise(2, 5000)
    );
    assert_eq!(std::fs::read(env.ws.join("big.bin")).unwrap(), big(12));
}

/// The budget checked right after a snapshot, in the snapshot's own process, measures the
/// store as it will be once the pages that snapshot's commit replaced are handed back (redb
/// does so only at a later commit): a snapshot past the budget evicts what its excess needs,
/// as many snapshots as `forget --max-size` in a later process evicts from the same store.
#[test]
fn a_snapshot_over_the_budget_evicts_what_a_later_forget_would() {
    let env = Env::new();
    // Enough files that a snapshot's commit rewrites many pages of the store's tables.
    for d in 0..150 {
        for f in 0..40 {
            env.write(&format!("d{d}/f{f}.txt"), format!("{d} {f}\n").as_bytes());
        }
    }
    let config = |store: &std::path::Path, max: u64| {
        std::fs::write(
            store.join("config.toml"),
            format!("[retention]\nmax_store_bytes = {max}\nundo_depth = 1\n"),
        )
        .unwrap()
    };
    // Stored whole (blobs up to 128 KiB share frames, freed only with their last member).
    const EACH: usize = 160 * 1024;
    let mut ids = Vec::new();
    for i in 0..14 {
        env.write("data.bin", &noise(700 + i, EACH));
        env.write(&format!("d{i}/f0.txt"), format!("edit {i}\n").as_bytes());
        ids.push(snap(&env, &format!("s{i}")));
        if i == 0 {
            config(&env.store, 1 << 40);
        }
    }
    // Pages in use as a later process sees them; a budget a little under that.
    let used = json(&env, &["stats"])["budget"]["used_bytes"]
        .as_u64()
        .unwrap();
    let max = used - EACH as u64 / 2;
    let twin = env.tmp.path().join("twin");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&env.store)
        .arg(&twin)
        .status()
        .unwrap();
    assert!(copied.success());
    env.write("data.bin", &noise(800, EACH));

    // The twin: the same snapshot without the budget, then `forget --max-size` apart.
    let on_twin = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
            .arg("--store")
            .arg(&twin)
            .arg("-C")
            .arg(&env.ws)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    on_twin(&["snapshot", "-q"]);
    let max_text = max.to_string();
    let v: Value = serde_json::from_slice(&on_twin(&[
        "--json",
        "forget",
        "--max-size",
        &max_text,
        "--undo-depth",
        "1",
    ]))
    .unwrap();
    let later = v["evicted"].as_array().unwrap().len();

    config(&env.store, max);
    let out = env.cmd().args(["snapshot", "-m", "over"]).output().unwrap();
    assert!(out.status.success());
    let gone = ids.iter().filter(|id| !exists(&env, id)).count();
    assert!(later >= 1, "{v}");
    assert_eq!(
        gone,
        later,
        "evicted in the snapshot's process vs by a later forget --max-size: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!exists(&env, &ids[0]), "the oldest goes first");
    env.ok(&["verify", "--full", "-q"]);
}
