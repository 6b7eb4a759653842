//! Crash safety: SIGKILL `snapshot`, `restore`, `apply` and `gc` at random moments. After each
//! kill the store verifies clean (every object decodes and matches its hash), every file of the
//! workspace is entirely its before or its after version (nothing truncated, nothing else), and
//! running the command again reaches the after state.
//!
//! `cargo test` runs a fast variant; `REWIND_CRASH_ITERATIONS=200` (what `scripts/crash.sh`
//! sets, with a release build) runs the full one. `REWIND_CRASH_SEED` replays a run.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

/// A small deterministic generator (xorshift), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn verify_full(env: &Env, what: &str) {
    let out = env
        .cmd()
        .args(["verify", "--full", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "verify after {what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Text content for file `i` in version `v`: big enough that writing takes a moment.
fn text(i: u64, v: u64) -> Vec<u8> {
    let mut s = String::new();
    for line in 0..(40 + i % 60) {
        s.push_str(&format!("file {i} line {line} version {v}\n"));
    }
    s.into_bytes()
}

/// State A: 400 text files in 20 directories and a large binary file.
fn write_a(env: &Env) {
    for i in 0..400 {
        env.write(&format!("d{}/f{i}.txt", i % 20), &text(i, 0));
    }
    env.write("big.bin", &noise(1, 9 << 20));
}

/// State B from A: a third of the files edited, some deleted, some added, the big file edited.
fn write_b(env: &Env) {
    for i in 0..400 {
        match i % 9 {
            0 | 3 | 6 => env.write(&format!("d{}/f{i}.txt", i % 20), &text(i, 1)),
            1 => fs::remove_file(env.path(&format!("d{}/f{i}.txt", i % 20))).unwrap(),
            _ => {}
        }
    }
    for i in 400..440 {
        env.write(&format!("new/n{i}.txt"), &text(i, 1));
    }
    let mut big = noise(1, 9 << 20);
    big[5 << 20..(5 << 20) + 4096].copy_from_slice(&noise(2, 4096));
    env.write("big.bin", &big);
}

/// The workspace's files (directories left out), without rewind's leftover temporary files.
fn files(env: &Env) -> Listing {
    list_disk(&env.ws)
        .into_iter()
        .filter(|(p, (k, _, _))| {
            *k != 'd'
                && !p
                    .rsplit(|&b| b == b'/')
                    .next()
                    .unwrap()
                    .starts_with(b".rewind-tmp-")
        })
        .collect()
}

/// Every path holds exactly its version in `a` or in `b` (absent counts as a version).
fn each_file_old_or_new(got: &Listing, a: &Listing, b: &Listing, what: &str) {
    let mut paths: Vec<&Vec<u8>> = got.keys().chain(a.keys()).chain(b.keys()).collect();
    paths.sort();
    paths.dedup();
    for p in paths {
        let g = got.get(p);
        assert!(
            g == a.get(p) || g == b.get(p),
            "{what}: {} is neither its before nor its after version",
            String::from_utf8_lossy(p)
        );
    }
}

/// Runs `args` and kills it after `delay`; returns whether it finished on its own.
fn run_and_kill(env: &Env, args: &[&str], delay: Duration) -> bool {
    let mut child = env
        .cmd()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    child.wait().unwrap().success()
}

/// How long `args` takes unkilled.
fn timed(env: &Env, args: &[&str]) -> Duration {
    let t = Instant::now();
    env.ok(args);
    t.elapsed()
}

#[test]
fn killed_commands_leave_a_valid_store_and_old_or_new_files() {
    let iterations: u64 = std::env::var("REWIND_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let seed: u64 = std::env::var("REWIND_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd);
    let mut rng = Rng(seed);
    let env = Env::new();
    write_a(&env);
    env.ok(&["snapshot", "-q", "--tag", "A"]);
    let a = files(&env);
    write_b(&env);
    env.ok(&["snapshot", "-q", "--tag", "B"]);
    let b = files(&env);
    let patch = env.tmp.path().join("a-to-b.diff");
    let out = env.cmd().args(["diff", "A", "B"]).output().unwrap();
    fs::write(&patch, &out.stdout).unwrap();
    let patch = patch.to_str().unwrap().to_string();

    // How long each command takes here, so kills land anywhere within it.
    let t_snapshot = {
        env.write("d0/f0.txt", b"touched\n");
        let t = timed(&env, &["snapshot", "-q"]);
        env.ok(&["restore", "B", "-q"]);
        t
    };
    let t_restore = timed(&env, &["restore", "A", "-q"]);
    let t_apply = timed(&env, &["apply", &patch, "-q"]);
    let t_gc = timed(&env, &["gc", "-q"]);
    eprintln!(
        "unkilled: snapshot {t_snapshot:?}, restore {t_restore:?}, apply {t_apply:?}, gc {t_gc:?}; seed {seed}"
    );
    let delay = |rng: &mut Rng, t: Duration| {
        Duration::from_micros(rng.below(t.as_micros() as u64 * 11 / 10 + 1))
    };

    let mut killed: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    let mut resumed = 0u32;
    for i in 0..iterations {
        let kind = ["snapshot", "restore", "apply", "gc"][(i % 4) as usize];
        let what = format!("iteration {i} ({kind}, seed {seed})");
        let finished = match kind {
            "snapshot" => {
                // Some edits so the snapshot stores something; the workspace must not change.
                for _ in 0..30 {
                    let f = rng.below(400);
                    env.write(&format!("d{}/f{f}.txt", f % 20), &text(f, 100 + i));
                }
                let before = files(&env);
                let done = run_and_kill(&env, &["snapshot", "-q"], delay(&mut rng, t_snapshot));
                assert!(
                    files(&env) == before,
                    "{what}: a snapshot changed the workspace"
                );
                verify_full(&env, &what);
                let id = env.ok(&["snapshot", "-q"]);
                assert!(!id.trim().is_empty(), "{what}: snapshot again");
                assert_eq!(env.ok(&["status", "--json"]).matches("\"path\"").count(), 0);
                done
            }
            "restore" => {
                env.ok(&["restore", "B", "-q", "--force"]);
                let done = run_and_kill(&env, &["restore", "A", "-q"], delay(&mut rng, t_restore));
                each_file_old_or_new(&files(&env), &b, &a, &what);
                verify_full(&env, &what);
                env.ok(&["restore", "A", "-q"]);
                assert!(files(&env) == a, "{what}: restore again did not give A");
                done
            }
            "apply" => {
                env.ok(&["restore", "A", "-q", "--force"]);
                let done = run_and_kill(&env, &["apply", &patch, "-q"], delay(&mut rng, t_apply));
                each_file_old_or_new(&files(&env), &a, &b, &what);
                verify_full(&env, &what);
                if files(&env) != b {
                    // Not finished: the same apply finishes it (from its journal, or anew).
                    let again = env.ok(&["apply", &patch, "--json"]);
                    resumed += u32::from(again.contains("\"resumed\": true"));
                }
                assert!(files(&env) == b, "{what}: apply again did not give B");
                done
            }
            _ => {
                // Garbage to collect: a state that is snapshotted, then forgotten.
                for f in 0..25 {
                    env.write(&format!("junk/j{f}"), &noise(i * 100 + f, 20_000));
                }
                let junk = env.ok(&["snapshot", "-q"]).trim().to_string();
                fs::remove_dir_all(env.path("junk")).unwrap();
                env.ok(&["snapshot", "-q"]);
                env.ok(&["forget", &junk]);
                let done = run_and_kill(&env, &["gc", "-q"], delay(&mut rng, t_gc));
                verify_full(&env, &what);
                // Both tagged states are whole.
                let stat = env.ok(&["diff", "A", "B", "--numstat"]);
                assert!(stat.lines().count() > 100, "{what}: diff A B after gc");
                env.ok(&["gc", "-q"]);
                done
            }
        };
        let e = killed.entry(kind).or_default();
        e.0 += 1;
        e.1 += u32::from(!finished);
    }
    // The tagged states read back exactly at the end.
    env.ok(&["restore", "A", "-q", "--force"]);
    assert!(files(&env) == a);
    verify_full(&env, "the end");
    for (kind, (runs, k)) in &killed {
        eprintln!("{kind}: killed {k} of {runs} before they finished");
    }
    eprintln!("{resumed} interrupted applies were finished from their journal");
}
