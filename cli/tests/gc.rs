//! `forget` and `gc` end to end: retention policies and what protects a snapshot, mark and sweep
//! with a verified store afterwards, the segment repack, the run retention, and the gc epoch
//! that keeps a snapshot racing a gc from referring to deleted blobs.

use crate::common;

use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;
use serde_json::Value;

fn history(env: &Env) -> Vec<String> {
    json(env, &["log"])
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["short_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn policies_keep_what_they_say_and_protections_hold() {
    let env = Env::new();
    let mut ids = Vec::new();
    for i in 0..6 {
        env.write("f.txt", format!("version {i}\n").as_bytes());
        ids.push(snap(&env, &format!("s{i}")));
    }
    env.ok(&["tag", "keep-me", &ids[1]]);

    // A dry run decides and changes nothing.
    let dry = json(&env, &["forget", "--keep-last", "2", "--dry-run"]);
    assert_eq!(dry["forgotten"].as_array().unwrap().len(), 3, "{dry}");
    assert_eq!(dry["protected"][0]["short_id"], ids[1].as_str());
    assert!(
        dry["protected"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("keep-me")
    );
    assert_eq!(history(&env).len(), 6);

    let done = json(&env, &["forget", "--keep-last", "2"]);
    assert_eq!(done["forgotten"].as_array().unwrap().len(), 3);
    let left = history(&env);
    assert_eq!(left, vec![ids[5].clone(), ids[4].clone(), ids[1].clone()]);

    // Explicit ids: a tag or the latest snapshot is refused, nothing is forgotten.
    let (code, err) = env.fails(&["forget", "keep-me"]);
    assert_eq!(code, 2);
    assert!(err.contains("tag -d keep-me"), "{err}");
    let (_, err) = env.fails(&["forget", &ids[5], &ids[4]]);
    assert!(err.contains("latest snapshot"), "{err}");
    assert_eq!(history(&env).len(), 3);
    env.ok(&["forget", &ids[4]]);
    assert_eq!(history(&env), vec![ids[5].clone(), ids[1].clone()]);
    // Bad input names what was wrong.
    let (_, err) = env.fails(&["forget"]);
    assert!(err.contains("--keep-last"), "{err}");
    let (_, err) = env.fails(&["forget", "--keep-within", "soon"]);
    assert!(err.contains("soon"), "{err}");

    // keep-within keeps young snapshots.
    env.write("f.txt", b"young\n");
    snap(&env, "young");
    let v = json(&env, &["forget", "--keep-within", "1h", "--dry-run"]);
    assert_eq!(v["forgotten"].as_array().unwrap().len(), 0, "{v}");
    verify_full(&env);
}

#[test]
fn calendar_rules_and_group_by_a_metadata_key() {
    let env = Env::new();
    let mut by_session: Vec<(String, &str)> = Vec::new();
    for (i, session) in ["a", "b", "a", "b", "a", "c"].into_iter().enumerate() {
        env.write("f.txt", format!("version {i}\n").as_bytes());
        let out = env.ok(&[
            "snapshot",
            "-q",
            "-m",
            &format!("s{i}"),
            "--meta",
            &format!("session={session}"),
        ]);
        by_session.push((out.trim().to_string(), session));
    }
    let forgotten = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["forget", "--undo-depth", "0", "--dry-run"];
        all.extend_from_slice(args);
        let v = json(&env, &all);
        v["forgotten"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["short_id"].as_str().unwrap().to_string())
            .collect()
    };
    // All taken today: a daily rule keeps the newest of the workspace.
    let ids: Vec<String> = by_session.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(forgotten(&["--keep-daily", "1"]), ids[..5].to_vec());
    // Per session: the newest of each (s3 for b, s4 for a, s5 for c).
    let grouped = forgotten(&["--keep-daily", "1", "--group-by", "session"]);
    assert_eq!(
        grouped,
        vec![ids[0].clone(), ids[1].clone(), ids[2].clone()]
    );
    let grouped = forgotten(&["--keep-last", "2", "--group-by", "session"]);
    assert_eq!(grouped, vec![ids[0].clone()]);
    // 'unlimited' keeps every week's newest, and, counts being left, the oldest too.
    assert_eq!(
        forgotten(&["--keep-weekly", "unlimited"]),
        ids[1..5].to_vec()
    );
    let (code, err) = env.fails(&["forget", "--keep-daily", "many"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("many"), "{err}");
    // A count of 0 is no rule (as in restic): nothing to forget, nothing forgotten.
    let (_, err) = env.fails(&["forget", "--keep-monthly", "0"]);
    assert!(err.contains("nothing to forget"), "{err}");
    assert_eq!(history(&env).len(), 6);
}

#[test]
fn undoable_operations_keep_their_snapshots() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    let first = snap(&env, "one");
    env.write("a.txt", b"two\n");
    snap(&env, "two");
    env.ok(&["restore", &first, "-q"]);
    env.write("a.txt", b"three\n");
    snap(&env, "three");
    // The restore's before (the "two" state, snapshotted by the restore) and after must stay.
    let v = json(&env, &["forget", "--keep-last", "1", "--undo-depth", "5"]);
    let reasons: Vec<&str> = v["protected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("can still be undone")),
        "{v}"
    );
    env.ok(&["gc"]);
    verify_full(&env);
    // Undo still works: it takes the restore back (a.txt was "two" before it), keeping the
    // later edit only if forced.
    env.ok(&["undo", "--force"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"two\n");
}

#[test]
fn gc_frees_what_nothing_reaches_and_keeps_the_rest_readable() {
    let env = Env::new();
    // Many small files share segments; later versions replace most of them.
    for i in 0..120u64 {
        env.write(&format!("d/f{i}"), &noise(i, 3000));
    }
    env.write("big.bin", &noise(7, 6 << 20));
    let old = snap(&env, "old");
    for i in 0..120u64 {
        if i % 10 != 0 {
            env.write(&format!("d/f{i}"), &noise(1000 + i, 3000));
        }
    }
    fs::remove_file(env.path("big.bin")).unwrap();
    let new = snap(&env, "new");
    let art = env.tmp.path().join("art.bin");
    fs::write(&art, noise(55, 200_000)).unwrap();
    env.ok(&["artifact", "put", "logs/a", art.to_str().unwrap()]);
    let listing_new = list_disk(&env.ws);

    let dry = json(&env, &["gc", "--dry-run"]);
    assert_eq!(dry["blobs_removed"], 0, "nothing is garbage yet: {dry}");
    env.ok(&["forget", &old]);
    let dry = json(&env, &["gc", "--dry-run"]);
    assert!(dry["blobs_removed"].as_u64().unwrap() >= 108, "{dry}");
    let before = json(&env, &["stats"]);
    let g = json(&env, &["gc"]);
    assert_eq!(g["blobs_removed"], dry["blobs_removed"]);
    assert!(g["chunks_removed"].as_u64().unwrap() >= 6, "{g}");
    // The live small files leave their sparse old groups for a new one (regrouped); what
    // else lives in sparse segments is moved by the repack.
    assert!(
        g["regrouped"]["blobs"].as_u64().unwrap() >= 12,
        "live members regrouped: {g}"
    );
    assert!(
        g["log_bytes_after"].as_u64().unwrap() < g["log_bytes_before"].as_u64().unwrap() / 2,
        "{g}"
    );
    assert!(
        g["file_bytes_after"].as_u64().unwrap() <= before["file_bytes"].as_u64().unwrap(),
        "{g}"
    );
    // A second gc finds nothing.
    let again = json(&env, &["gc"]);
    assert_eq!(again["blobs_removed"], 0);
    assert_eq!(again["objects_moved"], 0);
    verify_full(&env);

    // What is kept reads back byte for byte: restore the kept snapshot into a fresh directory.
    fs::remove_dir_all(&env.ws).unwrap();
    fs::create_dir(&env.ws).unwrap();
    env.ok(&["restore", &new, "--force", "-q"]);
    assert_eq!(list_disk(&env.ws), listing_new);
    let out = env.tmp.path().join("art.out");
    env.ok(&["artifact", "get", "logs/a", "-o", out.to_str().unwrap()]);
    assert_eq!(fs::read(out).unwrap(), fs::read(&art).unwrap());
    // The stat cache's ids were kept: a warm snapshot after gc is still whole.
    let s = snap(&env, "after gc");
    verify_full(&env);
    let tree: Value = serde_json::from_str(&env.ok(&["ls", &s, "-r", "--json"])).unwrap();
    assert_eq!(tree.as_array().unwrap().len(), 120 + 1, "120 files and d/");
}

#[test]
fn run_retention_forgets_old_run_snapshots_and_collects() {
    let env = Env::new();
    env.ok(&["init"]);
    fs::write(
        env.store.join("config.toml"),
        "[retention]\nrun_keep_last = 4\nundo_depth = 1\ngc_after_forgotten = 3\n",
    )
    .unwrap();
    env.write("keep.txt", b"plain snapshot\n");
    let plain = snap(&env, "plain");
    let mut last = Value::Null;
    for i in 0..6 {
        let script = format!("echo run {i} > out.txt");
        last =
            serde_json::from_str(&env.ok(&["run", "--json", "--", "sh", "-c", &script])).unwrap();
    }
    let log = json(&env, &["log"]);
    let labels: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["meta"]["label"].as_str().unwrap_or("none"))
        .collect();
    // 4 run snapshots kept (plus whatever the latest undoable run protects), the plain one
    // untouched.
    assert!(labels.len() <= 6, "{labels:?}");
    assert!(
        log.as_array()
            .unwrap()
            .iter()
            .any(|s| s["short_id"] == plain.as_str())
    );
    assert!(last["retention"]["error"].is_null(), "{last}");
    let ran_gc = json(&env, &["op", "log", "-n", "100"]);
    assert!(
        ran_gc.to_string().contains("forget"),
        "the retention records forget operations"
    );
    verify_full(&env);

    // A malformed config never fails a run: the retention reports it.
    fs::write(env.store.join("config.toml"), "[retention]\nrun_keep = 1\n").unwrap();
    let r: Value = serde_json::from_str(&env.ok(&["run", "--json", "--", "true"])).unwrap();
    assert!(
        r["retention"]["error"]
            .as_str()
            .unwrap()
            .contains("run_keep"),
        "{r}"
    );
}

/// Runs `rewind gc` in another process the first time the snapshot starts reading files:
/// after the snapshot's read view decided which blobs the store already has.
struct GcOnStart<'a> {
    env: &'a Env,
    done: AtomicBool,
}

impl rewind::progress::Progress for GcOnStart<'_> {
    fn start(&self, _phase: &str, _bytes: u64, _items: u64) {
        if !self.done.swap(true, Ordering::SeqCst) {
            self.env.ok(&["gc", "-q"]);
        }
    }
}

#[test]
fn a_snapshot_racing_a_gc_never_refers_to_deleted_blobs() {
    let env = Env::new();
    // The store has a blob that nothing reaches any more: taken once, then forgotten.
    env.write("shared.txt", &noise(3, 5000));
    env.write("other.txt", b"x\n");
    let first = snap(&env, "first");
    fs::remove_file(env.path("shared.txt")).unwrap();
    snap(&env, "second");
    env.ok(&["forget", &first]);

    // Another workspace holds the same content. Its snapshot finds the blob in its read view
    // and does not store it; the gc then deletes it; the snapshot must notice and start over.
    let ws2 = env.tmp.path().join("ws2");
    write_file(&ws2, b"shared.txt", &noise(3, 5000));
    let store = env.open();
    let progress = GcOnStart {
        env: &env,
        done: AtomicBool::new(false),
    };
    let report =
        rewind::snapshot::snapshot(&store, &ws2, &rewind::SnapshotOptions::default(), &progress)
            .expect("snapshot retried after the concurrent gc");
    assert!(progress.done.load(Ordering::SeqCst));
    assert_eq!(report.report.new_blobs, 1, "stored again on the second try");
    drop(store);
    verify_full(&env);
    let id = report.report.id.unwrap().hex();
    let out = env.cmd().args(["cat", &id, "shared.txt"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, noise(3, 5000));
}

#[test]
fn stats_show_dedup_compression_and_workspaces() {
    let env = Env::new();
    // Compressible text, snapshotted three times with one file changing.
    for i in 0..20 {
        env.write(
            &format!("f{i}.txt"),
            "the same line again\n".repeat(500).as_bytes(),
        );
    }
    for v in 0..3 {
        env.write("changing.txt", format!("version {v}\n").as_bytes());
        snap(&env, &format!("v{v}"));
    }
    let s = json(&env, &["stats"]);
    assert_eq!(s["snapshots"], 3);
    // Identical files are stored once and each snapshot repeats them: dedup well above 3x.
    assert!(s["dedup_ratio"].as_f64().unwrap() > 3.0, "{s}");
    assert!(s["compression_ratio"].as_f64().unwrap() > 10.0, "{s}");
    let ws = &s["workspaces"][0];
    assert_eq!(ws["snapshots"], 3);
    assert_eq!(ws["latest_files"], 21);
    assert!(
        s["logical_bytes"].as_u64().unwrap() > 3 * 20 * 10_000,
        "{s}"
    );
    let human = env.ok(&["stats"]);
    assert!(
        human.contains("dedup") && human.contains("compression"),
        "{human}"
    );
}

/// `gc --dry-run` does what the gc does and reports the same numbers (regrouping included),
/// and a gc reports a compaction only when the file got shorter.
#[test]
fn gc_dry_run_predicts_the_gc_exactly() {
    let env = Env::new();
    for i in 0..200u64 {
        env.write(&format!("d/f{i}"), &noise(i, 2500));
    }
    env.write("big.bin", &noise(7, 3 << 20));
    let old = snap(&env, "old");
    for i in 0..200u64 {
        if i % 7 != 0 {
            env.write(&format!("d/f{i}"), &noise(5000 + i, 2500));
        }
    }
    fs::remove_file(env.path("big.bin")).unwrap();
    snap(&env, "new");
    env.ok(&["forget", &old]);
    let dry = json(&env, &["gc", "--dry-run"]);
    let text = env.ok(&["gc", "--dry-run"]);
    let g = json(&env, &["gc"]);
    assert_eq!(dry["dry_run"], true);
    for key in [
        "snapshots",
        "trees_removed",
        "blobs_removed",
        "chunks_removed",
        "bytes_removed",
        "segments_removed",
        "objects_moved",
        "bytes_moved",
        "log_bytes_before",
        "log_bytes_after",
        "regrouped",
        "recompressed",
        "stat_cache_repacked",
    ] {
        assert_eq!(dry[key], g[key], "{key}: dry run {dry}\ngc {g}");
    }
    assert!(g["regrouped"]["blobs"].as_u64().unwrap() > 0, "{g}");
    assert!(
        text.contains("would regroup"),
        "the dry run mentions regrouping: {text}"
    );
    if g["compacted"] == true {
        assert!(
            g["file_bytes_after"].as_u64() < g["file_bytes_committed"].as_u64(),
            "{g}"
        );
    }
    verify_full(&env);
}
