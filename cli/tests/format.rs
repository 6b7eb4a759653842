//! The store's format version (src/store/format.rs), end to end: a store at schema 1 (every
//! store made before schema 2, grouped and dictionary blobs included) reads back whole, read
//! only as it is and upgraded to 2 by the first writable open, however many processes open it
//! at once; newer schemas and unknown format features are refused, naming them.

use crate::common;

use common::*;
use std::os::unix::fs::PermissionsExt;

const WORDS: &[&str] = &[
    "device", "driver", "buffer", "queue", "irq", "dma", "spin", "mutex", "page", "inode",
];

fn schema(store: &std::path::Path) -> u32 {
    let v = meta(store, "schema").expect("a schema version");
    u32::from_le_bytes(v.try_into().expect("4 bytes"))
}

fn chmod(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A store holding every kind of blob record gc and snapshots write (groups, gc's groups,
/// dictionary frames, chunked and raw blobs), set back to schema 1; its snapshot and the
/// workspace it was taken of.
fn store_at_schema_1(env: &Env) -> (String, Listing) {
    mid_source_tree(&env.ws, "kernel", 1, 40, WORDS);
    source_tree(&env.ws, "src", 2, 300, WORDS);
    env.write("big.bin", &noise(5, 5 << 20));
    env.write("random.bin", &noise(9, 20_000));
    env.write("empty.txt", b"");
    let id = snap(env, "one");
    let gc = json(env, &["gc"]);
    assert_eq!(gc["recompressed"]["dictionary_trained"], 1, "{gc}");
    let st = json(env, &["stats"]);
    assert!(st["groups"].as_u64().unwrap() > 0, "{st}");
    assert_eq!(st["format"]["schema"], 2, "{st}");
    set_meta(&env.store, "schema", &1u32.to_le_bytes());
    // Stores at schema 1 predate the reference counts and list no feature.
    for key in ["features", "refs_stamp", "refs_stale"] {
        remove_meta(&env.store, key);
    }
    (id, list_disk(&env.ws))
}

#[test]
fn a_schema_1_store_reads_whole_read_only_and_is_upgraded_by_a_writable_open() {
    let env = Env::new();
    let (id, listing) = store_at_schema_1(&env);

    // Read only (the file and directory not writable; as another user when the tests run as
    // root, who writes everything): read at schema 1 and left there.
    chmod(env.tmp.path(), 0o755);
    chmod(&env.store, 0o555);
    chmod(&env.store.join("store.redb"), 0o444);
    let nobody = |args: &[&str]| {
        let out = rewind_as_nobody()
            .arg("--store")
            .arg(&env.store)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "rewind {args:?} read-only: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let st: serde_json::Value = serde_json::from_slice(&nobody(&["--json", "stats"])).unwrap();
    assert_eq!(st["format"]["schema"], 1, "{st}");
    assert_eq!(st["format"]["features"], serde_json::json!([]), "{st}");
    let v: serde_json::Value =
        serde_json::from_slice(&nobody(&["--json", "verify", "--full"])).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    let files = listing.iter().filter(|(_, (kind, _, _))| *kind == 'f');
    for (path, (_, content, _)) in files.step_by(5) {
        let p = String::from_utf8_lossy(path);
        assert_eq!(&nobody(&["cat", &id, &p]), content, "{p}");
    }
    assert_eq!(schema(&env.store), 1);

    // Writable again: the first open upgrades it, and everything reads back byte for byte.
    chmod(&env.store, 0o700);
    chmod(&env.store.join("store.redb"), 0o600);
    let human = env.ok(&["stats"]);
    // And counts its references once (the `refcounts` feature).
    assert!(
        human.contains("schema version 2, format features refcounts"),
        "{human}"
    );
    assert_eq!(schema(&env.store), 2);
    verify_full(&env);
    assert_eq!(restored(&env, &id, "back"), listing);
}

#[test]
fn processes_opening_a_schema_1_store_at_once_all_succeed() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    let id = snap(&env, "one");
    set_meta(&env.store, "schema", &1u32.to_le_bytes());
    let children: Vec<_> = (0..4)
        .map(|_| {
            env.cmd()
                .args(["cat", &id, "a.txt"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, b"one\n");
    }
    assert_eq!(schema(&env.store), 2);
}

#[test]
fn a_newer_schema_is_refused_saying_to_upgrade_and_left_as_it_is() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    snap(&env, "one");
    set_meta(&env.store, "schema", &3u32.to_le_bytes());
    for args in [&["log"][..], &["snapshot"], &["stats"]] {
        let (code, err) = env.fails(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.contains("schema version 3")
                && err.contains("written by a newer rewind; upgrade rewind"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(schema(&env.store), 3);
}

#[test]
fn unknown_format_features_are_refused_naming_them() {
    let env = Env::new();
    env.write("a.txt", b"one\n");
    snap(&env, "one");
    set_meta(&env.store, "features", b"long-frames\nsealed-trees");
    for args in [&["log"][..], &["--json", "stats"]] {
        let (code, err) = env.fails(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.contains("(long-frames, sealed-trees)") && err.contains("upgrade rewind"),
            "{args:?}: {err}"
        );
    }
    // Refused at schema 1 too, and not upgraded.
    set_meta(&env.store, "schema", &1u32.to_le_bytes());
    let (code, err) = env.fails(&["log"]);
    assert_eq!(code, 2);
    assert!(err.contains("long-frames"), "{err}");
    assert_eq!(schema(&env.store), 1);
}
