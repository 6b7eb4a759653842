//! Helpers shared by the integration tests: real temporary directories, a real store, and the
//! real binary.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use rewind::{SnapshotOptions, Store, StoreOptions};

/// A scratch area with a store directory and a workspace directory.
pub struct Env {
    pub tmp: tempfile::TempDir,
    pub store: PathBuf,
    pub ws: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = tmp.path().join("store");
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).expect("mkdir ws");
        Env { tmp, store, ws }
    }

    pub fn open(&self) -> Store {
        Store::open(&self.store, StoreOptions::default()).expect("open store")
    }

    /// The `rewind` binary with this env's store and workspace.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rewind"));
        c.arg("--store")
            .arg(&self.store)
            .arg("-C")
            .arg(&self.ws)
            .env("NO_COLOR", "1");
        c
    }

    /// Runs the binary on another workspace `dir` with this env's store, asserting success.
    pub fn ok_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = rewind_bin()
            .arg("--store")
            .arg(&self.store)
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .expect("spawn rewind");
        assert!(
            out.status.success(),
            "rewind {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the binary, asserting success, returning stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("spawn rewind");
        assert!(
            out.status.success(),
            "rewind {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the binary expecting failure; returns (exit code, stderr).
    pub fn fails(&self, args: &[&str]) -> (i32, String) {
        let out = self.cmd().args(args).output().expect("spawn rewind");
        assert!(
            !out.status.success(),
            "rewind {args:?} unexpectedly succeeded"
        );
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Snapshots through the library.
    pub fn snap(&self, store: &Store) -> rewind::SnapshotReport {
        rewind::snapshot::snapshot(
            store,
            &self.ws,
            &SnapshotOptions::default(),
            &rewind::progress::NoProgress,
        )
        .expect("snapshot")
        .report
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.ws.join(rel)
    }

    pub fn write(&self, rel: &str, data: &[u8]) {
        write_file(&self.ws, rel.as_bytes(), data);
    }
}

/// Writes a file at a relative (raw bytes) path, creating parents.
pub fn write_file(root: &Path, rel: &[u8], data: &[u8]) {
    let p = root.join(OsStr::from_bytes(rel));
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).expect("mkdir -p");
    }
    fs::write(&p, data).expect("write");
}

pub fn set_exec(p: &Path, exec: bool) {
    fs::set_permissions(
        p,
        fs::Permissions::from_mode(if exec { 0o755 } else { 0o644 }),
    )
    .expect("chmod");
}

pub fn make_symlink(root: &Path, rel: &[u8], target: &[u8]) {
    let p = root.join(OsStr::from_bytes(rel));
    if let Some(parent) = p.parent() {
        fs::create_dir_all(parent).expect("mkdir -p");
    }
    symlink(OsStr::from_bytes(target), &p).expect("symlink");
}

/// Deterministic pseudo-random bytes (BLAKE3 in XOF mode: fast and incompressible).
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    blake3::Hasher::new()
        .update(&seed.to_le_bytes())
        .finalize_xof()
        .fill(&mut out);
    out
}

/// What a tree on disk holds: path -> (kind, content or link target, executable).
pub type Listing = std::collections::BTreeMap<Vec<u8>, (char, Vec<u8>, bool)>;

/// Lists a directory tree from disk (skipping nothing), for comparisons.
pub fn list_disk(root: &Path) -> Listing {
    let mut out = Listing::new();
    fn go(root: &Path, dir: &Path, out: &mut Listing) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry"))
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .expect("prefix")
                .as_os_str()
                .as_bytes()
                .to_vec();
            let m = fs::symlink_metadata(&p).expect("lstat");
            if m.file_type().is_symlink() {
                let t = fs::read_link(&p).expect("readlink");
                out.insert(rel, ('l', t.as_os_str().as_bytes().to_vec(), false));
            } else if m.is_dir() {
                out.insert(rel, ('d', Vec::new(), false));
                go(root, &p, out);
            } else {
                out.insert(
                    rel,
                    (
                        'f',
                        fs::read(&p).expect("read"),
                        m.permissions().mode() & 0o100 != 0,
                    ),
                );
            }
        }
    }
    go(root, root, &mut out);
    out
}

/// The `rewind` binary.
pub fn rewind_bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rewind"));
    c.env("NO_COLOR", "1");
    c
}

/// Runs `cmd` with `input` on its stdin; its stdout and stderr captured.
pub fn with_stdin(mut cmd: Command, input: &[u8]) -> std::process::Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rewind");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait rewind")
}

/// The `rewind` binary run as user nobody when the tests run as root (root reads and writes
/// everything, so permission tests need another user), else as the current user.
pub fn rewind_as_nobody() -> Command {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_rewind"),
        ]);
        c.env("NO_COLOR", "1");
        c
    } else {
        rewind_bin()
    }
}

/// Sets entry `name` of the store's `meta` table directly through redb, as another build of
/// rewind (or damage) would leave it.
pub fn set_meta(store: &Path, name: &str, value: &[u8]) {
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(store.join("store.redb"))
        .expect("open the store's database");
    let txn = db.begin_write().expect("write transaction");
    txn.open_table(tables::META)
        .expect("meta")
        .insert(name, value)
        .expect("insert");
    txn.commit().expect("commit");
}

/// Removes entry `name` from the store's `meta` table, directly through redb (to make a store
/// as an older build left it).
pub fn remove_meta(store: &Path, name: &str) {
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(store.join("store.redb"))
        .expect("open the store's database");
    let txn = db.begin_write().expect("write transaction");
    txn.open_table(tables::META)
        .expect("meta")
        .remove(name)
        .expect("remove");
    txn.commit().expect("commit");
}

/// Entry `name` of the store's `meta` table, read directly through redb: read-only, so that
/// reading changes nothing, unless the file needs the recovery a rewind process that skipped
/// redb's close leaves to the next open (see `StoreOptions::skip_close`).
pub fn meta(store: &Path, name: &str) -> Option<Vec<u8>> {
    use redb::ReadableDatabase;
    let file = store.join("store.redb");
    let mut builder = redb::Database::builder();
    builder.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    let read = |txn: redb::ReadTransaction| {
        let table = txn.open_table(tables::META).expect("meta");
        table.get(name).expect("read").map(|v| v.value().to_vec())
    };
    match builder.open_read_only(&file) {
        Ok(db) => read(db.begin_read().expect("read transaction")),
        Err(redb::DatabaseError::RepairAborted) => {
            let db = builder.create(&file).expect("open the store's database");
            read(db.begin_read().expect("read transaction"))
        }
        Err(e) => panic!("open the store's database: {e}"),
    }
}

/// Flips one bit `back` bytes before the end of the store's segment log (the bytes written
/// last), as disk damage would.
pub fn flip_last_segment_byte(store: &Path, back: usize) {
    use redb::ReadableTable;
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(store.join("store.redb"))
        .expect("open the store's database");
    let txn = db.begin_write().expect("write transaction");
    {
        let mut segs = txn.open_table(tables::SEGMENTS).expect("segments");
        let (last, mut bytes) = {
            let (k, v) = segs.last().expect("read").expect("a segment");
            (k.value(), v.value().to_vec())
        };
        let n = bytes.len();
        bytes[n - back] ^= 0x01;
        segs.insert(last, bytes.as_slice()).expect("write");
    }
    txn.commit().expect("commit");
}

/// Whether tests that need unprivileged user namespaces (the overlay namespace backend, a
/// private tmpfs) run here. The one policy for them: where the kernel forbids user namespaces
/// (a sysctl says so) they are skipped with the reason printed; where it allows them they must
/// work, and under CI (env `CI` set and not empty) a failing probe is a test failure, never a
/// silent skip.
pub fn user_namespaces() -> bool {
    static ANSWER: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let answer = ANSWER.get_or_init(|| {
        if let Some(reason) = kernel_forbids_user_namespaces() {
            return Err(reason);
        }
        let probe = Command::new("unshare").args(["-Urm", "true"]).output();
        match probe {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => {
                let why = format!(
                    "the kernel allows user namespaces but `unshare -Urm true` failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                assert!(!is_ci(), "{why}");
                Err(why)
            }
            Err(e) => {
                let why = format!("`unshare` (util-linux) could not run: {e}");
                assert!(!is_ci(), "{why}");
                Err(why)
            }
        }
    });
    match answer {
        Ok(()) => true,
        Err(reason) => {
            eprintln!("skipped (needs user namespaces): {reason}");
            false
        }
    }
}

/// The overlay backends to test here: both, or only `copy` where [`user_namespaces`] says no.
pub fn backends() -> Vec<&'static str> {
    if user_namespaces() {
        vec!["namespace", "copy"]
    } else {
        vec!["copy"]
    }
}

/// Under CI (env `CI` set and not empty, as .ci/run sets it).
pub fn is_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Why the kernel refuses unprivileged user namespaces, from the sysctls that can say so.
fn kernel_forbids_user_namespaces() -> Option<String> {
    let read = |p: &str| fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Some("user.max_user_namespaces is 0".into());
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Some("kernel.unprivileged_userns_clone is 0".into());
    }
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Some("kernel.apparmor_restrict_unprivileged_userns is 1".into());
    }
    None
}

/// The few store tables tests damage on purpose, declared as src/store/tables.rs declares them
/// (the library keeps its raw table definitions private).
pub mod tables {
    use redb::TableDefinition;

    pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
    pub const SEGMENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("segments");
    pub const TREES: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("trees");
}

/// Writes `files` small source-like files (2-6 KiB each, about 4 KiB on average) under
/// `dir/` in `root`: shared boilerplate, the words of `vocabulary`, and numbers drawn from
/// `seed`, so files resemble each other the way a project's files do (what a zstd dictionary
/// learns) without being copies.
pub fn source_tree(root: &Path, dir: &str, seed: u64, files: usize, vocabulary: &[&str]) {
    // splitmix64: an endless deterministic stream.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut r = std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    });
    for i in 0..files {
        let mut text = format!(
            "// SPDX-License-Identifier: MIT\n// Copyright (c) the authors of {dir}\n\n\
             #include <{dir}/common.h>\n#include <{dir}/{}.h>\n\n",
            vocabulary[i % vocabulary.len()]
        );
        let lines = 40 + (r.next().unwrap() % 80) as usize;
        for _ in 0..lines {
            let v = r.next().unwrap();
            let a = vocabulary[(v % vocabulary.len() as u64) as usize];
            let b = vocabulary[((v >> 8) % vocabulary.len() as u64) as usize];
            text.push_str(&match v % 5 {
                0 => format!("static int {a}_{b}_{}(struct {b} *p)\n{{\n", v % 997),
                1 => format!("\tif (p->{a} > {}) return -EINVAL;\n", (v >> 16) % 4096),
                2 => format!("\t{a}_lock(&p->{b}_lock); /* {} */\n", v >> 40),
                3 => format!(
                    "\treturn {b}_{a}(p, {}, {});\n}}\n\n",
                    (v >> 20) % 64,
                    v % 13
                ),
                _ => format!("#define {}_{} 0x{:x}\n", a.to_uppercase(), i, v >> 32),
            });
        }
        write_file(root, format!("{dir}/f{i:05}.c").as_bytes(), text.as_bytes());
    }
}

/// Writes `files` source-like files of 150-200 KiB under `dir/` in `root`, each 48 of
/// [`source_tree`]'s concatenated: larger than the blobs a store groups, so gc gives them to
/// its zstd dictionary.
pub fn mid_source_tree(root: &Path, dir: &str, seed: u64, files: usize, vocabulary: &[&str]) {
    let parts = format!("{dir}.parts");
    source_tree(root, &parts, seed, files * 48, vocabulary);
    for i in 0..files {
        let mut text = Vec::new();
        for j in 0..48 {
            let part = root.join(&parts).join(format!("f{:05}.c", i * 48 + j));
            text.extend(std::fs::read(part).unwrap());
        }
        write_file(root, format!("{dir}/f{i:05}.c").as_bytes(), &text);
    }
    std::fs::remove_dir_all(root.join(parts)).unwrap();
}

/// Restores `id` into a fresh directory `name` of the env's temp dir and returns what it holds.
/// (That makes `id` the new directory's latest snapshot, which `forget` then refuses: before
/// forgetting, check with [`cat_matches`].)
pub fn restored(env: &Env, id: &str, name: &str) -> Listing {
    let dest = env.tmp.path().join(name);
    std::fs::create_dir(&dest).unwrap();
    env.ok_in(&dest, &["restore", id, "-q"]);
    list_disk(&dest)
}

/// Checks every 7th file of `listing` (the workspace when `id` was taken) against `rewind cat`.
pub fn cat_matches(env: &Env, id: &str, listing: &Listing) {
    let files = listing.iter().filter(|(_, (kind, _, _))| *kind == 'f');
    for (path, (_, content, _)) in files.step_by(7) {
        let p = String::from_utf8_lossy(path);
        let out = env.cmd().args(["cat", id, &p]).output().unwrap();
        assert!(out.status.success(), "cat {p}");
        assert_eq!(&out.stdout, content, "{p}");
    }
}

/// `rewind --json ARGS` in `env`, parsed.
pub fn json(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    serde_json::from_str(&env.ok(&a)).unwrap()
}

/// `rewind verify --full` in `env` finds nothing wrong.
pub fn verify_full(env: &Env) {
    let v = json(env, &["verify", "--full"]);
    assert_eq!(v["ok"], true, "{v}");
}

/// A snapshot an agent hook of `session` would record after an Edit tool call (label `tool`):
/// its id.
pub fn tool_snap(env: &Env, session: &str) -> String {
    let s = format!("session={session}");
    env.ok(&[
        "snapshot",
        "-q",
        "--meta",
        &s,
        "--meta",
        "label=tool",
        "--meta",
        "tool=Edit",
    ])
    .trim()
    .to_string()
}

/// `rewind snapshot -q -m MSG` in `env`: the new snapshot's id.
pub fn snap(env: &Env, msg: &str) -> String {
    env.ok(&["snapshot", "-q", "-m", msg]).trim().to_string()
}
