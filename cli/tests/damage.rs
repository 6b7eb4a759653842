//! A damaged store file: bytes flipped and the file cut short in every region of it (the
//! database header, b-tree pages, the segment log's data, the end). Every command that reads it
//! answers or refuses (exit 0, 1 for verify's problems, or 2); none crashes with the database's
//! panic, and neither does the library under the server and the daemon.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::common::{Env, noise, write_file};

/// splitmix64: the damage is seeded, so a failing case names a damage that can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A store of four snapshots of a few hundred small files (segments, trees, several b-tree
/// levels in the tables that matter).
fn populated() -> Env {
    let env = Env::new();
    for round in 0..4u64 {
        for i in 0..60u64 {
            let name = format!("d{}/f{i}.txt", i % 5);
            write_file(&env.ws, name.as_bytes(), &noise(round * 100 + i, 300));
        }
        env.ok(&["snapshot", "-m", &format!("s{round}")]);
    }
    env
}

/// Damaged copies of `clean`, each with a label naming what was done: flips in the header
/// page, at the start and middle of b-tree pages, in data pages, anywhere; truncations.
fn damages(clean: &[u8], seed: u64, per_kind: usize) -> Vec<(String, Vec<u8>)> {
    const PAGE: usize = 4096;
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    let pages = clean.len() / PAGE;
    let tree_pages: Vec<usize> = (0..pages)
        .filter(|p| matches!(clean[p * PAGE], 1 | 2))
        .collect();
    let flip = |label: String, at: usize, len: usize, out: &mut Vec<(String, Vec<u8>)>| {
        let mut data = clean.to_vec();
        let end = (at + len).min(data.len());
        for b in &mut data[at..end] {
            *b ^= 0xff;
        }
        out.push((format!("{label}: {len} bytes flipped at {at}"), data));
    };
    for _ in 0..per_kind {
        let at = rng.below(PAGE - 8);
        flip("header page".into(), at, 1 + rng.below(8), &mut out);
    }
    for n in 0..per_kind {
        let p = tree_pages[(n * tree_pages.len() / per_kind + rng.below(3)) % tree_pages.len()];
        let within = if n % 2 == 0 {
            1 + rng.below(31)
        } else {
            rng.below(PAGE - 8)
        };
        flip(
            format!("b-tree page {p}"),
            p * PAGE + within,
            1 + rng.below(8),
            &mut out,
        );
    }
    let data_pages: Vec<usize> = (1..pages).filter(|p| !tree_pages.contains(p)).collect();
    for _ in 0..per_kind.min(data_pages.len()) {
        let p = data_pages[rng.below(data_pages.len())];
        flip(
            format!("data page {p}"),
            p * PAGE + rng.below(PAGE - 8),
            8,
            &mut out,
        );
    }
    for _ in 0..per_kind {
        let at = rng.below(clean.len() - 8);
        flip("anywhere".into(), at, 1 + rng.below(8), &mut out);
    }
    let mut cuts = vec![
        1,
        512,
        PAGE,
        PAGE + 100,
        clean.len() / 2,
        clean.len() - PAGE,
    ];
    cuts.extend((0..per_kind / 2).map(|_| rng.below(clean.len())));
    for cut in cuts {
        out.push((
            format!("truncated to {cut} bytes"),
            clean[..cut.min(clean.len())].to_vec(),
        ));
    }
    out
}

/// What the server, the daemon and library users do with a store: open it, verify (full),
/// stats, every snapshot's log and restore, a snapshot. Each may fail; none may panic.
fn exercise(env: &Env, restore_into: &std::path::Path) {
    let opts = rewind::StoreOptions::default();
    let Ok(store) = rewind::Store::open(&env.store, opts) else {
        return;
    };
    let _ = rewind::verify::verify(&store, true, &rewind::NoProgress);
    let _ = rewind::verify::verify(&store, false, &rewind::NoProgress);
    let _ = rewind::stats::stats(&store);
    if let Ok(reader) = store.reader() {
        let snapshots = reader.all_snapshots().unwrap_or_default();
        let _ = reader.workspaces();
        let _ = reader.tags();
        for id in snapshots {
            let _ = fs::remove_dir_all(restore_into);
            let _ = fs::create_dir_all(restore_into);
            let _ = rewind::restore(
                &store,
                restore_into,
                id,
                &rewind::RestoreOptions::default(),
                &rewind::OpInfo::default(),
                &rewind::NoProgress,
            );
        }
    }
    let _ = rewind::snapshot(
        &store,
        &env.ws,
        &rewind::SnapshotOptions::default(),
        &rewind::NoProgress,
    );
}

#[test]
fn library_calls_on_a_damaged_store_return_errors() {
    let env = populated();
    let file = env.store.join("store.redb");
    let clean = fs::read(&file).expect("read store");
    let restore_into = env.tmp.path().join("restored");
    let mut panicked = Vec::new();
    // scripts/crash.sh runs many more, seeded anew each run.
    let env_num = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let seed = env_num("REWIND_DAMAGE_SEED", 29);
    let per_kind = env_num("REWIND_DAMAGE_PER_KIND", 12) as usize;
    for (label, data) in damages(&clean, seed, per_kind) {
        fs::write(&file, &data).expect("write store");
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| exercise(&env, &restore_into))) {
            let why = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            panicked.push(format!("{label} (seed {seed}): {why}"));
        }
    }
    assert!(panicked.is_empty(), "panicked:\n{}", panicked.join("\n"));
}

#[test]
fn flipped_pages_never_panic() {
    let env = populated();
    let file = env.store.join("store.redb");
    let clean = std::fs::read(&file).expect("read store");
    // Pages that start like a b-tree page (leaf 1, branch 2): the tables' own pages.
    let pages: Vec<usize> = (0..clean.len() / 4096)
        .filter(|p| matches!(clean[p * 4096], 1 | 2))
        .collect();
    assert!(!pages.is_empty());
    for (n, p) in pages.iter().enumerate().step_by(pages.len().div_ceil(24)) {
        let mut data = clean.clone();
        let at = p * 4096 + 1 + (n % 7);
        for b in &mut data[at..at + 8] {
            *b ^= 0xff;
        }
        std::fs::write(&file, &data).expect("write store");
        for args in [&["verify"][..], &["stats"][..], &["log"][..]] {
            let out = env.cmd().args(args).output().expect("spawn rewind");
            let err = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code();
            assert!(
                matches!(code, Some(0..=2)),
                "{args:?} with page {p} damaged exited {code:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{args:?} page {p}: {err}");
        }
    }
}

/// Four snapshots of workspaces that share nothing, each directory's tree large enough to
/// fill a page of its own; the last one holds a file named `marker`. Returns the env, each
/// snapshot's id and what the workspace held when it was taken.
fn separate_snapshots(marker: &str) -> (Env, Vec<(String, crate::common::Listing)>) {
    let env = Env::new();
    let mut taken = Vec::new();
    for round in 0..4u64 {
        if round > 0 {
            fs::remove_dir_all(&env.ws).expect("empty the workspace");
            fs::create_dir(&env.ws).expect("mkdir ws");
        }
        for i in 0..80u64 {
            let name =
                format!("r{round}-dir/a-rather-long-file-name-of-round-{round}-number-{i}.txt");
            write_file(&env.ws, name.as_bytes(), &noise(round * 1000 + i, 200));
        }
        if round == 3 {
            write_file(&env.ws, format!("r3-dir/{marker}").as_bytes(), b"marked\n");
        }
        let id = crate::common::snap(&env, &format!("s{round}"));
        taken.push((id, crate::common::list_disk(&env.ws)));
    }
    (env, taken)
}

/// Flips bytes in every b-tree leaf page of the store file that holds `needle`, past the
/// page's header (so the page still looks like a leaf). Returns how many pages it damaged.
fn damage_pages_holding(file: &std::path::Path, needle: &[u8]) -> usize {
    let mut data = fs::read(file).expect("read store");
    let mut hit = 0;
    for p in 0..data.len() / 4096 {
        // Not only pages that start like a leaf: a large leaf spans several 4 KiB pages.
        let page = &data[p * 4096..(p + 1) * 4096];
        let Some(at) = page.windows(needle.len()).position(|w| w == needle) else {
            continue;
        };
        // The name's first byte: the page's content, not its layout, so the page still looks
        // like a leaf and only its checksum tells.
        data[p * 4096 + at] ^= 0x20;
        hit += 1;
    }
    fs::write(file, &data).expect("write store");
    hit
}

#[test]
fn damage_is_named_verify_lists_what_is_lost_and_intact_snapshots_restore() {
    let marker = "only-in-the-last-snapshot.txt";
    let (env, taken) = separate_snapshots(marker);
    let file = env.store.join("store.redb");
    assert!(damage_pages_holding(&file, marker.as_bytes()) > 0);

    // verify (and verify --full) report instead of failing: what is lost, per snapshot.
    for full in [false, true] {
        let mut args = vec!["--json", "verify"];
        if full {
            args.push("--full");
        }
        let out = env.cmd().args(&args).output().expect("spawn rewind");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("verify json");
        assert_eq!(v["ok"], false, "{v}");
        let damaged: Vec<String> = v["damaged_snapshots"]
            .as_array()
            .expect("damaged_snapshots")
            .iter()
            .map(|s| s.as_str().unwrap_or_default().to_string())
            .collect();
        let last = &taken[3].0;
        assert!(
            damaged.iter().any(|d| d.starts_with(last.as_str())),
            "the snapshot holding the damaged tree is listed: {v}"
        );
        assert!(
            damaged.len() < taken.len(),
            "some snapshots are intact: {v}"
        );
        let problems = v["problems"].to_string();
        assert!(
            problems.contains("table `trees`"),
            "the table is named: {v}"
        );
    }
    let text = env.cmd().arg("verify").output().expect("spawn rewind");
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(shown.contains("snapshots reach damage"), "{shown}");

    // Restoring a damaged snapshot exits 2 naming the table; the intact ones restore whole.
    let out = env
        .cmd()
        .args(["--json", "verify"])
        .output()
        .expect("spawn rewind");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("verify json");
    let damaged = v["damaged_snapshots"].to_string();
    let mut intact = 0;
    for (n, (id, listing)) in taken.iter().enumerate() {
        let dest = env.tmp.path().join(format!("restore-{n}"));
        fs::create_dir(&dest).expect("mkdir");
        let out = crate::common::rewind_bin()
            .arg("--store")
            .arg(&env.store)
            .arg("-C")
            .arg(&dest)
            .args(["restore", id, "-q"])
            .output()
            .expect("spawn rewind");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        if damaged.contains(id.as_str()) {
            assert_eq!(out.status.code(), Some(2), "restore of damaged {id}: {err}");
            assert!(err.contains("table `trees`"), "{err}");
            assert!(err.contains("rewind verify"), "the hint: {err}");
        } else {
            assert_eq!(out.status.code(), Some(0), "restore of intact {id}: {err}");
            assert_eq!(&crate::common::list_disk(&dest), listing, "snapshot {n}");
            intact += 1;
        }
    }
    assert!(intact > 0);

    // Every other command reading the damaged tree names it too, with exit 2.
    let (code, err) = env.fails(&["ls", &taken[3].0, "r3-dir"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("damaged in table `trees`"), "{err}");
}

#[test]
fn the_server_answers_a_damaged_store_with_a_json_error() {
    let marker = "only-in-the-last-snapshot.txt";
    let (env, taken) = separate_snapshots(marker);
    assert!(damage_pages_holding(&env.store.join("store.redb"), marker.as_bytes()) > 0);
    let server = crate::serve::Server::start(&env, &[]);
    let api = server.api();
    let r = api.raw("GET", "/v1/workspaces", None, &[]);
    let ws = r.json()[0]["id"].as_u64().expect("a workspace");
    // The directory whose tree record lies on the damaged page.
    let tree = format!("/v1/workspaces/{ws}/tree/{}?path=r3-dir", taken[3].0);
    let r = api.raw("GET", &tree, None, &[]);
    let body = String::from_utf8_lossy(&r.body).into_owned();
    assert_eq!(r.status, 500, "{body}");
    assert_eq!(r.code(), "store_damaged", "{body}");
    assert!(body.contains("table `trees`"), "{body}");
    // The server is still there and still answers what it can read.
    let r = api.raw("GET", "/v1/health", None, &[]);
    assert_eq!(r.status, 200);
}

/// The stat cache is only a shortcut: a damaged page in it costs the cache, not the snapshot.
/// A directory's full path is a key of the cache alone (trees name one component each), so the
/// pages holding it are the cache's.
#[test]
fn a_damaged_stat_cache_is_dropped_and_the_snapshot_taken() {
    let env = Env::new();
    let dir = "a-directory-named-at-length/and-a-subdirectory-of-it";
    for i in 0..40u64 {
        write_file(
            &env.ws,
            format!("{dir}/f{i}.txt").as_bytes(),
            &noise(i, 300),
        );
    }
    env.ok(&["snapshot", "-m", "first"]);
    let file = env.store.join("store.redb");
    assert!(damage_pages_holding(&file, dir.as_bytes()) > 0);
    write_file(&env.ws, format!("{dir}/new.txt").as_bytes(), b"new\n");

    let out = env
        .cmd()
        .args(["snapshot", "-m", "after the damage"])
        .output()
        .expect("spawn rewind");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("stat cache was damaged"), "said once: {err}");
    // The damaged pages were freed with the table: the store verifies whole, and the next
    // snapshot uses the new cache without a word.
    env.ok(&["verify", "--full"]);
    write_file(&env.ws, format!("{dir}/newer.txt").as_bytes(), b"newer\n");
    let out = env
        .cmd()
        .args(["snapshot", "-q"])
        .output()
        .expect("spawn rewind");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = crate::common::snap(&env, "last");
    let listed = env.ok(&["ls", &id, dir]);
    assert!(
        listed.contains("newer.txt") && listed.contains("f39.txt"),
        "{listed}"
    );
}
