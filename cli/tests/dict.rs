//! gc's zstd dictionary and recompression, end to end: blobs larger than a group's
//! members (small ones are regrouped instead, see groups.rs) written as plain frames read back
//! the same after gc rewrites them with a dictionary, `verify --full` passes at every
//! step, and forgetting snapshots, retraining and collecting never leaves a blob without the
//! dictionary it needs.

use crate::common;

use common::*;
use serde_json::Value;

const WORDS_A: &[&str] = &[
    "device", "driver", "buffer", "queue", "irq", "dma", "spin", "mutex", "page", "inode", "sched",
    "timer", "netdev", "skb", "socket", "probe", "remove", "suspend", "resume", "clk",
];
const WORDS_B: &[&str] = &[
    "request", "response", "session", "cookie", "handler", "router", "template", "model", "schema",
    "field", "query", "cursor", "widget", "layout", "render", "theme", "token", "user",
];

#[test]
fn gc_recompresses_with_a_dictionary_and_every_blob_reads_back() {
    let env = Env::new();
    // 40 files of ~170 KiB: past the size below which gc trains no dictionary.
    mid_source_tree(&env.ws, "kernel", 1, 40, WORDS_A);
    env.write("tiny.txt", b"short enough to stay raw\n");
    env.write("random.bin", &noise(9, 20_000));
    let s1 = snap(&env, "one");
    let before = list_disk(&env.ws);
    // Written by the snapshot as plain frames, as every store before dictionaries.
    assert_eq!(restored(&env, &s1, "r0"), before);
    verify_full(&env);
    let stats0 = json(&env, &["stats"]);

    // A dry run reports what gc would recompress, and writes nothing.
    let dry = json(&env, &["gc", "--dry-run"]);
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(json(&env, &["stats"]), stats0, "a dry run wrote: {dry}");

    let gc = json(&env, &["gc"]);
    let r = &gc["recompressed"];
    assert_eq!(r["dictionary_trained"], 1, "{gc}");
    assert!(r["blobs"].as_u64().unwrap() >= 40, "{gc}");
    let (b, a) = (
        r["bytes_before"].as_u64().unwrap(),
        r["bytes_after"].as_u64().unwrap(),
    );
    assert!(
        a * 20 < b * 19,
        "the dictionary and the denser level should save over 5%: {b} -> {a}"
    );
    assert!(
        gc["log_bytes_after"].as_u64().unwrap() < gc["log_bytes_before"].as_u64().unwrap(),
        "{gc}"
    );
    verify_full(&env);
    assert_eq!(restored(&env, &s1, "r1"), before);
    // `cat` decodes one blob on its own.
    let one = env.ok(&["cat", &s1, "kernel/f00021.c"]);
    assert_eq!(
        one.as_bytes(),
        std::fs::read(env.path("kernel/f00021.c")).unwrap()
    );
    let stats1 = json(&env, &["stats"]);
    assert_ne!(stats0, stats1);
    // `stats` lists the dictionary and what its blobs take against their content.
    assert_eq!(stats0["dictionaries"], serde_json::json!([]), "{stats0}");
    let d = &stats1["dictionaries"][0];
    assert_eq!(d["id"], 1, "{stats1}");
    assert!(d["bytes"].as_u64().unwrap() > 1000, "{stats1}");
    assert_eq!(d["blobs"], r["blobs"], "{stats1} {gc}");
    assert!(
        d["encoded_bytes"].as_u64().unwrap() * 2 < d["content_bytes"].as_u64().unwrap(),
        "{stats1}"
    );
    assert!(stats1["sparse_ratio"].as_f64().unwrap() <= 1.1, "{stats1}");
    let human = env.ok(&["stats"]);
    assert!(human.contains("zstd dictionary 1 ("), "{human}");

    // A second gc has nothing left to rewrite and trains nothing.
    let again = json(&env, &["gc"]);
    assert_eq!(again["recompressed"]["blobs"], 0, "{again}");
    assert_eq!(
        again["recompressed"]["dictionary_trained"],
        Value::Null,
        "{again}"
    );

    // New blobs written after the dictionary join it at the next gc.
    env.write(
        "kernel/f00001.c",
        b"/* rewritten */\nstatic int probe(void) { return 0; }\n",
    );
    mid_source_tree(&env.ws, "more", 2, 3, WORDS_A);
    let s2 = snap(&env, "two");
    let gc2 = json(&env, &["gc"]);
    assert!(gc2["recompressed"]["blobs"].as_u64().unwrap() >= 3, "{gc2}");
    assert_eq!(
        gc2["recompressed"]["dictionary_trained"],
        Value::Null,
        "{gc2}"
    );
    verify_full(&env);
    assert_eq!(restored(&env, &s2, "r2"), list_disk(&env.ws));
    assert_eq!(restored(&env, &s1, "r3"), before);
}

#[test]
fn forgetting_and_retraining_never_strand_a_blob_without_its_dictionary() {
    let env = Env::new();
    mid_source_tree(&env.ws, "a", 3, 40, WORDS_A);
    env.write(
        "shared.c",
        b"int shared(void) { return 42; }\n/* kept by every snapshot */\n",
    );
    let s1 = snap(&env, "a");
    assert_eq!(json(&env, &["gc"])["recompressed"]["dictionary_trained"], 1);
    let tree_a = list_disk(&env.ws);

    // The project changes shape: most small content is now unlike what dictionary 1 learnt.
    std::fs::remove_dir_all(env.path("a")).unwrap();
    mid_source_tree(&env.ws, "b", 4, 40, WORDS_B);
    mid_source_tree(&env.ws, "b2", 5, 50, WORDS_B);
    let s2 = snap(&env, "b");
    let tree_b = list_disk(&env.ws);

    // Retraining moves every live blob off dictionary 1 (s1's blobs included), so it goes.
    let gc = json(&env, &["gc"]);
    assert_eq!(gc["recompressed"]["dictionary_trained"], 2, "{gc}");
    assert_eq!(gc["recompressed"]["dictionaries_removed"], 1, "{gc}");
    verify_full(&env);
    cat_matches(&env, &s1, &tree_a);
    cat_matches(&env, &s2, &tree_b);

    // Forget the older snapshot: the newer one's blobs (on dictionary 2) stay readable.
    env.ok(&["forget", &s1, "-q"]);
    env.ok(&["gc", "-q"]);
    verify_full(&env);
    cat_matches(&env, &s2, &tree_b);

    // The workspace shrinks to one small file and s2 is forgotten: gc deletes every blob
    // that used the dictionary, and with them the dictionary.
    std::fs::remove_dir_all(env.path("b")).unwrap();
    std::fs::remove_dir_all(env.path("b2")).unwrap();
    let s3 = snap(&env, "small");
    env.ok(&["forget", &s2, "-q"]);
    let last = json(&env, &["gc"]);
    verify_full(&env);
    assert_eq!(last["recompressed"]["dictionaries_removed"], 1, "{last}");
    assert_eq!(
        last["recompressed"]["dictionary_trained"],
        Value::Null,
        "{last}"
    );
    let r4 = restored(&env, &s3, "r4");
    assert_eq!(r4.len(), 1, "{:?}", r4.keys().collect::<Vec<_>>());
}

#[test]
fn gc_without_recompression_leaves_encodings_alone() {
    let env = Env::new();
    mid_source_tree(&env.ws, "a", 6, 25, WORDS_A);
    let s1 = snap(&env, "a");
    let gc = json(&env, &["gc", "--no-recompress"]);
    assert_eq!(gc["recompressed"]["blobs"], 0, "{gc}");
    assert_eq!(
        gc["recompressed"]["dictionary_trained"],
        Value::Null,
        "{gc}"
    );
    verify_full(&env);
    assert_eq!(restored(&env, &s1, "r"), list_disk(&env.ws));
}
