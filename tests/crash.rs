//! Crash safety, fast variant: SIGKILL `snapshot` and `apply` at varying moments; afterwards
//! the store verifies clean (every object decodes and matches its hash), a later snapshot
//! works, and an apply left every file entirely old or entirely new.

mod common;

use std::fs;
use std::process::Stdio;
use std::time::Duration;

use common::*;

fn verify_full(env: &Env) {
    let out = env
        .cmd()
        .args(["verify", "--full", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "verify after a kill: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn killed_snapshots_leave_a_valid_store() {
    let env = Env::new();
    for i in 0..300u64 {
        env.write(&format!("d{}/f{i}", i % 15), &noise(i, 30_000));
    }
    env.write("big.bin", &noise(999, 12 << 20));
    // The store exists before the first kill (a kill before it is made proves nothing).
    env.ok(&["init"]);
    let mut killed = 0;
    for round in 0..8u64 {
        // New content each round, so each snapshot has real work to do.
        for i in (round * 37..round * 37 + 40).map(|i| i % 300) {
            env.write(
                &format!("d{}/f{i}", i % 15),
                &noise(round * 10_000 + i, 30_000),
            );
        }
        let mut child = env
            .cmd()
            .args(["snapshot", "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(5 + round * 25));
        let _ = child.kill();
        if !child.wait().unwrap().success() {
            killed += 1;
        }
        verify_full(&env);
    }
    let id = env.ok(&["snapshot", "-q"]).trim().to_string();
    verify_full(&env);
    // The last snapshot reads back exactly.
    let listing: serde_json::Value =
        serde_json::from_str(&env.ok(&["ls", &id, "-r", "--json"])).unwrap();
    let files = listing
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "file")
        .count();
    assert_eq!(files, 301);
    eprintln!("{killed} of 8 snapshots were killed before finishing");
}

#[test]
fn killed_applies_leave_every_file_old_or_new() {
    let env = Env::new();
    let n = 200;
    for i in 0..n {
        env.write(&format!("f{i:03}"), format!("old {i}\n").as_bytes());
    }
    let mut patch = Vec::new();
    for i in 0..n {
        patch.extend_from_slice(
            format!("--- a/f{i:03}\n+++ b/f{i:03}\n@@ -1 +1 @@\n-old {i}\n+new {i}\n").as_bytes(),
        );
    }
    env.ok(&["snapshot", "-q"]);
    let patch_file = env.tmp.path().join("p.diff");
    fs::write(&patch_file, &patch).unwrap();
    let mut killed = 0;
    for round in 0..6u64 {
        let mut child = env
            .cmd()
            .args(["apply", patch_file.to_str().unwrap(), "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(10 + round * 20));
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        for i in 0..n {
            let data = fs::read(env.path(&format!("f{i:03}"))).unwrap();
            assert!(
                data == format!("old {i}\n").as_bytes() || data == format!("new {i}\n").as_bytes(),
                "round {round}: f{i:03} is neither old nor new"
            );
        }
        verify_full(&env);
        // Put the old state back for the next round, however far the apply got.
        killed += usize::from(!finished);
        for i in 0..n {
            env.write(&format!("f{i:03}"), format!("old {i}\n").as_bytes());
        }
    }
    eprintln!("{killed} of 6 applies were killed before finishing");
}
