//! Bad input that the other suites do not cover: a workspace deleted while it is being
//! snapshotted, and a store on a full disk.

use crate::common;

use std::fs;
use std::process::Command;

use common::*;

/// Deletes the workspace when the snapshot starts reading files (after its walk).
struct DeleteOnStart<'a>(&'a std::path::Path);

impl rewind::progress::Progress for DeleteOnStart<'_> {
    fn start(&self, _phase: &str, _bytes: u64, _items: u64) {
        let _ = fs::remove_dir_all(self.0);
    }
}

#[test]
fn a_workspace_deleted_mid_snapshot_stores_nothing_and_says_so() {
    let env = Env::new();
    for i in 0..50 {
        env.write(&format!("d/f{i}"), &noise(i, 2000));
    }
    let store = env.open();
    let first = env.snap(&store);
    for i in 0..50 {
        env.write(&format!("d/f{i}"), &noise(100 + i, 2000));
    }
    let err = rewind::snapshot::snapshot(
        &store,
        &env.ws,
        &rewind::SnapshotOptions::default(),
        &DeleteOnStart(&env.ws),
    )
    .expect_err("the workspace vanished");
    let msg = err.to_string();
    assert!(
        msg.contains("disappeared") && msg.contains("nothing was stored"),
        "{msg}"
    );
    // The store still holds exactly the first snapshot, and it verifies.
    let reader = store.reader().unwrap();
    assert_eq!(reader.all_snapshots().unwrap(), vec![first.id.unwrap()]);
    drop(reader);
    drop(store);
    let v = env.ok(&["verify", "--full", "--json"]);
    assert!(v.contains("\"ok\": true"), "{v}");
}

/// Runs `script` in a private user and mount namespace with a 3 MiB tmpfs at `$MNT`; None
/// where the tests skip what needs user namespaces ([`common::user_namespaces`]).
fn in_small_tmpfs(env: &Env, script: &str) -> Option<String> {
    if !common::user_namespaces() {
        return None;
    }
    let mnt = env.tmp.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let out = Command::new("unshare")
        .args(["-Urm", "sh", "-c"])
        .arg(format!(
            "set -u; mount -t tmpfs -o size=3m tmpfs \"$MNT\" && {script}"
        ))
        .env("MNT", &mnt)
        .env("R", env!("CARGO_BIN_EXE_rewind"))
        .env("WS", &env.ws)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

#[test]
fn a_full_disk_leaves_the_store_valid_and_says_what_to_do() {
    let env = Env::new();
    env.write("small.txt", b"small\n");
    // Incompressible, larger than the file system.
    let big = env.tmp.path().join("big.bin");
    fs::write(&big, noise(9, 6 << 20)).unwrap();
    let script = format!(
        r#"S="$MNT/store"
        "$R" --store "$S" -C "$WS" snapshot -q -m first >/dev/null; echo "first=$?"
        cp "{big}" "$WS/big.bin"
        "$R" --store "$S" -C "$WS" snapshot -q -m second; echo "full=$?"
        "$R" --store "$S" verify --full; echo "verify=$?"
        "$R" --store "$S" -C "$WS" log | wc -l | sed 's/^ */snapshots=/'
        rm "$WS/big.bin"; echo more > "$WS/more.txt"
        "$R" --store "$S" -C "$WS" snapshot -q -m third >/dev/null; echo "after=$?"
        "$R" --store "$S" verify --full >/dev/null; echo "verify2=$?"
        "$R" --store "$S" -C "$WS" restore @~1 -q; echo "restore=$?"
        "#,
        big = big.display()
    );
    let Some(out) = in_small_tmpfs(&env, &script) else {
        return;
    };
    for want in [
        "first=0",
        "full=2",
        "verify=0",
        "snapshots=1",
        "after=0",
        "verify2=0",
        "restore=0",
    ] {
        assert!(out.contains(want), "{want} in:\n{out}");
    }
    assert!(out.contains("disk holding the store is full"), "{out}");
    assert!(out.contains("REWIND_STORE"), "{out}");
    assert!(!out.contains("panicked"), "{out}");
}
