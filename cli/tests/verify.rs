//! `rewind verify`: damage is found and named, and snapshots that do not use a damaged object
//! stay fully usable.

use crate::common;

use crate::common::tables::TREES;
use common::*;
use redb::ReadableDatabase;

fn db(env: &Env) -> redb::Database {
    redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(env.store.join("store.redb"))
        .expect("open the store's database")
}

fn verify_json(env: &Env, full: bool) -> (i32, serde_json::Value) {
    let mut args = vec!["verify", "--json"];
    if full {
        args.push("--full");
    }
    let out = env.cmd().args(&args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

#[test]
fn a_clean_store_verifies() {
    let env = Env::new();
    env.write("a.txt", b"hello\n");
    env.write("big.bin", &noise(3, 5 << 20));
    make_symlink(&env.ws, b"ln", b"a.txt");
    env.ok(&["snapshot", "-q"]);
    env.write("a.txt", b"changed\n");
    env.ok(&["snapshot", "-q", "--tag", "t"]);
    let (code, v) = verify_json(&env, true);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["snapshots"], 2);
    assert!(v["chunks"].as_u64().unwrap() >= 5);
    assert!(v["bytes_hashed"].as_u64().unwrap() > 5 << 20);
}

#[test]
fn a_flipped_byte_in_a_segment_is_caught_and_named() {
    let env = Env::new();
    env.write("keep.txt", b"untouched content\n");
    let first = env.ok(&["snapshot", "-q"]).trim().to_string();
    env.write("victim.txt", &noise(9, 3000));
    env.ok(&["snapshot", "-q"]);
    // The second snapshot's new blob is the last bytes written to the log.
    flip_last_segment_byte(&env.store, 10);
    let (code, v) = verify_json(&env, true);
    assert_eq!(code, 1, "{v}");
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v}");
    assert_eq!(problems[0]["kind"], "blob");
    assert!(
        problems[0]["referrer"]
            .as_str()
            .unwrap()
            .ends_with(":victim.txt"),
        "{v}"
    );
    // The damaged blob gives an error, never a panic; everything else still works.
    let (code, err) = env.fails(&["cat", "@", "victim.txt"]);
    assert_eq!(code, 2);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(env.ok(&["cat", "@", "keep.txt"]), "untouched content\n");
    env.ok(&["log"]);
    // Listing the change needs no content; line counts would need the damaged blob.
    assert!(
        env.ok(&["diff", &first, "@", "--name-status"])
            .contains("victim.txt")
    );
    let dest = env.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    env.ok_in(&dest, &["restore", &first, "-q"]);
    assert_eq!(
        std::fs::read(dest.join("keep.txt")).unwrap(),
        b"untouched content\n"
    );
}

#[test]
fn a_missing_tree_is_reported_with_its_snapshot() {
    let env = Env::new();
    env.write("top.txt", b"top\n");
    let first = env.ok(&["snapshot", "-q"]).trim().to_string();
    env.write("sub/inner.txt", b"inner\n");
    env.ok(&["snapshot", "-q"]);
    // Remove the tree of sub/.
    let listing: serde_json::Value = serde_json::from_str(&env.ok(&["ls", "@", "--json"])).unwrap();
    let sub = listing
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "sub")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    {
        let db = db(&env);
        let txn = db.begin_write().unwrap();
        txn.open_table(TREES)
            .unwrap()
            .remove(rewind::Id::from_hex(&sub).unwrap().0)
            .unwrap();
        txn.commit().unwrap();
        let r = db.begin_read().unwrap();
        assert!(
            r.open_table(TREES)
                .unwrap()
                .get(rewind::Id::from_hex(&sub).unwrap().0)
                .unwrap()
                .is_none()
        );
    }
    let (code, v) = verify_json(&env, false);
    assert_eq!(code, 1);
    let p = &v["problems"][0];
    assert_eq!(
        (p["kind"].as_str(), p["what"].as_str()),
        (Some("tree"), Some("missing"))
    );
    assert!(p["referrer"].as_str().unwrap().contains(":sub"), "{v}");
    let (code, err) = env.fails(&["ls", "@", "-r"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing tree"), "{err}");
    // The first snapshot does not use that tree.
    env.ok(&["ls", &first, "-r"]);
    env.ok(&["diff", &first, &first]);
    // gc deletes nothing while a reachable object is damaged: sub's file would otherwise look
    // like garbage, and a repair could still want it.
    let blobs = || {
        rewind::Store::open(&env.store, rewind::StoreOptions::default())
            .unwrap()
            .reader()
            .unwrap()
            .content_totals()
            .unwrap()
            .blobs
    };
    let blobs_before = blobs();
    let (code, err) = env.fails(&["gc"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("nothing was deleted") && err.contains("verify"),
        "{err}"
    );
    let blobs_after = blobs();
    assert_eq!(blobs_before, blobs_after);
}
