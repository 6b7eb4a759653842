//! Data safety and honest counts, as a new user met them: a restore that would replace another
//! project's files, verify skipping artifacts, status hiding skipped files, apply at ignored
//! paths, and counts that lied (forget --dry-run, log after restore, stats with artifacts).

use crate::common;

use std::fs;

use common::*;

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn run_in(env: &Env, dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    rewind_bin()
        .arg("--store")
        .arg(&env.store)
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("spawn rewind")
}

#[test]
fn restore_refuses_another_workspaces_snapshot_into_an_unregistered_directory() {
    let env = Env::new();
    env.write("proj/main.c", b"int main;\n");
    env.write("README", b"project\n");
    env.ok(&["snapshot", "-q", "--tag", "base"]);
    let other = env.tmp.path().join("other");
    write_file(&other, b"notes.txt", b"my notes\n");
    write_file(&other, b"proj/main.c", b"mine\n");

    for args in [&["restore", "base"][..], &["restore", "base", "--dry-run"]] {
        let out = run_in(&env, &other, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&env.ws.display().to_string()), "{err}");
        assert!(err.contains(&other.display().to_string()), "{err}");
        assert!(err.contains("--from-workspace"), "{err}");
    }
    assert_eq!(fs::read(other.join("notes.txt")).unwrap(), b"my notes\n");
    assert_eq!(fs::read(other.join("proj/main.c")).unwrap(), b"mine\n");

    // Asked explicitly, it happens (and can be undone).
    let out = run_in(&env, &other, &["restore", "base", "--from-workspace"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!other.join("notes.txt").exists());
    assert_eq!(fs::read(other.join("proj/main.c")).unwrap(), b"int main;\n");
    env.ok_in(&other, &["undo"]);
    assert_eq!(fs::read(other.join("notes.txt")).unwrap(), b"my notes\n");
}

#[test]
fn restore_refuses_another_workspaces_snapshot_into_a_registered_one() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q", "--tag", "base"]);
    let other = env.tmp.path().join("other");
    write_file(&other, b".ci/run", b"ci\n");
    env.ok_in(&other, &["snapshot", "-q"]);
    let out = run_in(&env, &other, &["restore", "base", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&env.ws.display().to_string()), "{err}");
    assert!(err.contains(&other.display().to_string()), "{err}");
    // --force is the other explicit way.
    let out = run_in(&env, &other, &["restore", "base", "--dry-run", "--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Into an empty directory nothing can be lost: allowed.
    let empty = env.tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    env.ok_in(&empty, &["restore", "base"]);
    assert_eq!(fs::read(empty.join("a.txt")).unwrap(), b"a\n");
}

#[test]
fn tags_and_show_name_the_tags_workspace() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q", "--tag", "base"]);
    let ws = env.ws.canonicalize().unwrap().display().to_string();
    let out = env.ok(&["tags"]);
    assert!(out.contains("base") && out.contains(&ws), "{out}");
    let v = json(&env.ok(&["tags", "--json"]));
    assert_eq!(v[0]["workspace"], ws.as_str(), "{v}");
    let out = env.ok(&["show", "base"]);
    assert!(out.contains(&format!("workspace {ws}")), "{out}");
}

#[test]
fn an_unmatched_restore_path_is_an_error() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.write("gone.txt", b"g\n");
    env.ok(&["snapshot", "-q"]);
    fs::remove_file(env.path("gone.txt")).unwrap();
    env.write("new.txt", b"n\n");
    let (code, err) = env.fails(&["restore", "@", "--", "nosuch.txt"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("nosuch.txt") && err.contains("did not match"),
        "{err}"
    );
    // Nothing was touched.
    assert!(env.path("new.txt").exists());
    // A path only in the snapshot, or only in the workspace, is a match.
    env.ok(&["restore", "@", "--", "gone.txt", "new.txt"]);
    assert!(env.path("gone.txt").exists());
    assert!(!env.path("new.txt").exists());
}

/// A 200 KiB artifact named "build".
fn put_artifact(env: &Env) {
    let art = env.tmp.path().join("art.bin");
    fs::write(&art, noise(5, 200 << 10)).unwrap();
    env.ok(&["artifact", "put", "build", art.to_str().unwrap()]);
}

#[test]
fn verify_full_checks_artifacts_and_counts_what_stats_counts() {
    let env = Env::new();
    env.write("a.txt", b"hello\n");
    env.ok(&["snapshot", "-q"]);
    put_artifact(&env);
    let stats = json(&env.ok(&["stats", "--json"]));
    let v = json(&env.ok(&["verify", "--full", "--json"]));
    assert_eq!(v["ok"], true, "{v}");
    for k in ["snapshots", "trees", "blobs", "chunks"] {
        assert_eq!(v[k], stats[k], "{k}: verify {v} stats {stats}");
    }
    flip_last_segment_byte(&env.store, 100);
    let out = env
        .cmd()
        .args(["verify", "--full", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    let problems = v["problems"].as_array().unwrap();
    assert!(!problems.is_empty(), "{v}");
    assert!(
        problems
            .iter()
            .any(|p| p["referrer"].as_str().unwrap().contains("artifact build")),
        "{v}"
    );
}

#[test]
fn status_lists_paths_the_snapshot_skipped() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q", "--max-file-size", "1K"]);
    env.write("big.bin", &noise(1, 4096));
    let out = env.ok(&["status"]);
    assert!(out.contains("big.bin"), "{out}");
    assert!(out.contains("skipped"), "{out}");
    let v = json(&env.ok(&["status", "--json"]));
    assert_eq!(v["skipped"][0]["path"], "big.bin", "{v}");
    assert_eq!(v["skipped"][0]["reason"], "too_large", "{v}");
}

#[test]
fn apply_refuses_to_create_a_file_at_an_ignored_path() {
    let env = Env::new();
    env.write(".gitignore", b"target/\n");
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let patch = "diff --git a/target/x b/target/x\nnew file mode 100644\n--- /dev/null\n+++ b/target/x\n@@ -0,0 +1 @@\n+x\n";
    let out = env
        .cmd()
        .arg("apply")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(patch.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("target/x") && err.contains("ignored"), "{err}");
    assert!(!env.path("target/x").exists());
}

#[test]
fn forget_dry_run_lists_each_snapshot_once_and_log_stays_in_time_order() {
    let env = Env::new();
    let mut ids = Vec::new();
    for i in 0..6 {
        env.write("a.txt", format!("{i}\n").as_bytes());
        ids.push(env.ok(&["snapshot", "-q"]).trim().to_string());
    }
    // Back and forth: the log of states now names ids[1] and ids[5] twice.
    env.ok(&["restore", &ids[1]]);
    env.ok(&["undo"]);
    let log = env.ok(&["log"]);
    let listed: Vec<&str> = log
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let mut unique = listed.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), listed.len(), "log repeats ids:\n{log}");
    let v = json(&env.ok(&["log", "--json"]));
    let times: Vec<i64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["time_ns"].as_i64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{v}");

    let v = json(&env.ok(&[
        "forget",
        "--keep-last",
        "2",
        "--dry-run",
        "--undo-depth",
        "0",
        "--json",
    ]));
    let forgotten: Vec<&str> = v["forgotten"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    let mut unique = forgotten.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), forgotten.len(), "{v}");
    // The real forget removes as many as the dry run said, and leaves no log entry dangling.
    let real = json(&env.ok(&["forget", "--keep-last", "2", "--undo-depth", "0", "--json"]));
    assert_eq!(real["forgotten"].as_array().unwrap().len(), forgotten.len());
    let v = json(&env.ok(&["verify", "--json"]));
    assert_eq!(v["ok"], true, "{v}");
    env.ok(&["log"]);
}

#[test]
fn stats_dedup_counts_artifacts() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    put_artifact(&env);
    let v = json(&env.ok(&["stats", "--json"]));
    let dedup = v["dedup_ratio"].as_f64().unwrap();
    assert!(dedup >= 0.99, "{v}");
    let out = env.ok(&["stats"]);
    assert!(!out.contains("dedup 0.0x"), "{out}");
}

#[test]
fn verify_full_names_a_damaged_chunk_once_with_the_file_that_uses_it() {
    let env = Env::new();
    env.write("big.bin", &noise(8, 6 << 20));
    env.ok(&["snapshot", "-q"]);
    flip_last_segment_byte(&env.store, 100);
    let out = env
        .cmd()
        .args(["verify", "--full", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v}");
    assert_eq!(problems[0]["kind"], "chunk", "{v}");
    assert!(
        problems[0]["referrer"]
            .as_str()
            .unwrap()
            .ends_with(":big.bin"),
        "{v}"
    );
}
