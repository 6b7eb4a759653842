//! Small blobs compressed together in groups, end to end: a snapshot groups its
//! small files, and restore, `cat`, `diff` and `verify --full` read every member back; gc
//! regroups, and forgetting snapshots and collecting never leaves a live blob without its
//! bytes, whatever the history (a proptest).

use crate::common;

use common::*;
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "device", "driver", "buffer", "queue", "irq", "dma", "spin", "mutex", "page", "inode",
];

fn num(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_snapshot_groups_small_files_and_every_reader_gets_them_back() {
    let env = Env::new();
    source_tree(&env.ws, "src", 1, 600, WORDS);
    env.write("empty.txt", b"");
    env.write("one.txt", b"1");
    env.write("data/noise.bin", &noise(3, 40_000));
    // Larger than a group's members: stored on its own.
    env.write("data/large.bin", &noise(4, 300_000));
    let s1 = snap(&env, "one");
    let st = json(&env, &["stats"]);
    // The 600 sources, one.txt and noise.bin (the empty file gains nothing from a group).
    assert_eq!(num(&st["grouped_blobs"]), 602, "{st}");
    let groups = num(&st["groups"]);
    assert!((3..=20).contains(&groups), "{st}");
    let human = env.ok(&["stats"]);
    assert!(
        human.contains(&format!(
            "602 small blobs compressed together in {groups} groups"
        )),
        "{human}"
    );
    verify_full(&env);
    let listing = list_disk(&env.ws);
    assert_eq!(restored(&env, &s1, "r1"), listing);
    for path in [
        "src/f00000.c",
        "src/f00311.c",
        "src/f00599.c",
        "one.txt",
        "empty.txt",
    ] {
        let out = env.cmd().args(["cat", &s1, path]).output().unwrap();
        assert!(out.status.success(), "cat {path}");
        assert_eq!(out.stdout, std::fs::read(env.path(path)).unwrap(), "{path}");
    }

    // A second snapshot groups only what is new; diff reads members of old and new groups.
    env.write("src/f00007.c", b"static int replaced(void) { return 7; }\n");
    env.write("src/new.c", b"int added(void) { return 1; }\n");
    let s2 = snap(&env, "two");
    let after = json(&env, &["stats"]);
    assert_eq!(num(&after["grouped_blobs"]), 604, "{after}");
    assert_eq!(num(&after["groups"]), groups + 1, "{after}");
    let diff = env.ok(&["diff", &s1, &s2]);
    assert!(
        diff.contains("+static int replaced(void) { return 7; }"),
        "{diff}"
    );
    assert!(diff.contains("+int added(void) { return 1; }"), "{diff}");
    assert_eq!(restored(&env, &s1, "r2"), listing);
    assert_eq!(restored(&env, &s2, "r3"), list_disk(&env.ws));
}

#[test]
fn forgetting_and_gc_never_strand_a_member_of_a_group() {
    let env = Env::new();
    source_tree(&env.ws, "src", 2, 600, WORDS);
    let s1 = snap(&env, "one");
    // Two thirds of the files change: s1's groups keep a third of their members alive.
    for i in 0..600 {
        if i % 3 != 0 {
            env.write(&format!("src/f{i:05}.c"), format!("int v{i};\n").as_bytes());
        }
    }
    let s2 = snap(&env, "two");
    let listing = list_disk(&env.ws);
    env.ok(&["forget", &s1, "-q"]);
    let gc = json(&env, &["gc"]);
    // The 200 survivors of s1's groups and s2's 400 new blobs, at gc's level.
    assert_eq!(num(&gc["regrouped"]["blobs"]), 600, "{gc}");
    assert!(num(&gc["blobs_removed"]) >= 400, "{gc}");
    assert!(
        num(&gc["log_bytes_after"]) * 2 < num(&gc["log_bytes_before"]),
        "the dead members' bytes are gone: {gc}"
    );
    verify_full(&env);
    cat_matches(&env, &s2, &listing);

    // Nothing left to do: a second gc rewrites nothing.
    let again = json(&env, &["gc"]);
    assert_eq!(num(&again["regrouped"]["blobs"]), 0, "{again}");
    assert_eq!(
        again["log_bytes_after"], again["log_bytes_before"],
        "{again}"
    );

    // Without recompression, forgotten members stay as dead bytes in their group, and every
    // live member still reads.
    for i in (0..600).step_by(5) {
        env.write(&format!("src/f{i:05}.c"), format!("int w{i};\n").as_bytes());
    }
    let s3 = snap(&env, "three");
    env.ok(&["forget", &s2, "-q"]);
    let plain = json(&env, &["gc", "--no-recompress"]);
    assert_eq!(num(&plain["regrouped"]["blobs"]), 0, "{plain}");
    assert!(num(&plain["blobs_removed"]) >= 100, "{plain}");
    verify_full(&env);
    assert_eq!(restored(&env, &s3, "r2"), list_disk(&env.ws));
    // The next gc that regroups clears them.
    let gc = json(&env, &["gc"]);
    assert!(num(&gc["regrouped"]["blobs"]) > 0, "{gc}");
    verify_full(&env);
    assert_eq!(restored(&env, &s3, "r3"), list_disk(&env.ws));
}

/// A file's content in a generated history: text that compresses (so groups form as in a
/// real tree), from a seed and a length.
fn content(seed: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(format!("line {} of {seed}\n", i * seed % 97).as_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

/// One version of a workspace of up to 24 files: each file absent or (seed, length).
fn version() -> impl Strategy<Value = Vec<Option<(u64, usize)>>> {
    prop::collection::vec(
        prop::option::of((0u64..6, prop_oneof![1usize..200, 200usize..40_000])),
        24,
    )
}

/// Writes `v` into the workspace (deleting the files it lacks) and returns its listing.
fn write_version(env: &Env, v: &[Option<(u64, usize)>]) -> Listing {
    for (i, f) in v.iter().enumerate() {
        let p = env.path(&format!("d{}/f{i}", i % 3));
        match f {
            Some((seed, len)) => env.write(&format!("d{}/f{i}", i % 3), &content(*seed, *len)),
            None => {
                let _ = std::fs::remove_file(p);
            }
        }
    }
    list_disk(&env.ws)
}

fn check_history(
    versions: &[Vec<Option<(u64, usize)>>],
    forget: &[bool],
    recompress: bool,
) -> Result<(), TestCaseError> {
    let env = Env::new();
    let mut kept = Vec::new();
    let mut ids = Vec::new();
    for (n, v) in versions.iter().enumerate() {
        let listing = write_version(&env, v);
        let id = snap(&env, &format!("v{n}"));
        ids.push(id.clone());
        kept.push((id, listing));
    }
    // The latest snapshot is never forgotten (forget refuses it).
    let last = kept.len() - 1;
    let mut gone = Vec::new();
    for (i, f) in forget.iter().enumerate().take(last) {
        if *f {
            gone.push(ids[i].clone());
        }
    }
    for id in &gone {
        env.ok(&["forget", id, "-q"]);
    }
    let gc_args: &[&str] = if recompress {
        &["gc", "-q"]
    } else {
        &["gc", "-q", "--no-recompress"]
    };
    env.ok(gc_args);
    // A second gc over the result (regrouping what the first left) changes nothing readable.
    env.ok(&["gc", "-q"]);
    let v = json(&env, &["verify", "--full"]);
    prop_assert_eq!(&v["ok"], &serde_json::Value::Bool(true), "{}", v);
    for (n, (id, listing)) in kept.iter().enumerate() {
        if gone.contains(id) {
            continue;
        }
        let got = restored(&env, id, &format!("r{n}"));
        prop_assert!(
            &got == listing,
            "snapshot {} (v{}) restores as taken",
            id,
            n
        );
    }
    Ok(())
}

proptest! {
    // 12 cases by default (each runs some twenty commands); PROPTEST_CASES=N for more.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        ..ProptestConfig::default()
    })]
    #[test]
    fn any_history_reads_back_after_forgetting_and_gc(
        versions in prop::collection::vec(version(), 1..5),
        forget in prop::collection::vec(any::<bool>(), 4),
        recompress in any::<bool>(),
    ) {
        check_history(&versions, &forget, recompress)?;
    }
}
