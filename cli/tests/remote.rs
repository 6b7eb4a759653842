//! Remotes, end to end with the real binary: a `file://` remote, and S3 against moto's server
//! (a real S3-compatible HTTP server from PyPI, installed by .ci/run) started on loopback by
//! these tests. Where moto is missing the S3 tests say so and pass, except under CI (env `CI`
//! set and not empty, as .ci/run's runner sets it), where they fail: CI must test S3.

use crate::common;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{Env, list_disk, make_symlink, noise, rewind_bin, set_exec, write_file};

/// The moto server this test binary shares (one per process: it takes a second or two to
/// start), on a free loopback port.
struct Moto {
    port: u16,
}

fn moto_available() -> bool {
    Command::new("python3")
        .args(["-c", "import moto.server"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The shared moto server, or None (with the reason printed) when moto is not installed and
/// this is not CI.
fn moto() -> Option<&'static Moto> {
    static MOTO: OnceLock<Option<Moto>> = OnceLock::new();
    MOTO.get_or_init(|| {
        if !moto_available() {
            let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
            assert!(
                !ci,
                "moto is not installed (pip install 'moto[server]'): CI must run the S3 tests"
            );
            eprintln!(
                "SKIPPED: moto is not installed (pip install 'moto[server]'); S3 tests not run"
            );
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        // The server is started from a thread that lives as long as the test process, with
        // PR_SET_PDEATHSIG, so it is killed when the tests end (the death signal follows
        // the thread that forked it, not the process).
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut cmd = Command::new("python3");
            cmd.args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let child = cmd.spawn();
            let _ = tx.send(child.is_ok());
            if let Ok(mut c) = child {
                let _ = c.wait();
            }
        });
        assert!(rx.recv().unwrap_or(false), "could not start moto");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "moto did not listen on port {port} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(Moto { port })
    })
    .as_ref()
}

impl Moto {
    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates a bucket (moto takes an unsigned request) and returns its s3:// URL.
    fn bucket(&self, name: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect moto");
        write!(
            s,
            "PUT /{name} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .expect("send");
        let mut reply = String::new();
        s.read_to_string(&mut reply).expect("read reply");
        assert!(
            reply.starts_with("HTTP/1.1 200"),
            "creating bucket {name}: {reply}"
        );
        format!("s3://{name}/team")
    }

    /// The settings the library takes directly.
    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            ("aws_endpoint", self.endpoint()),
            ("aws_allow_http", "true".into()),
            ("aws_access_key_id", "testing".into()),
            ("aws_secret_access_key", "testing".into()),
            ("aws_region", "us-east-1".into()),
        ]
    }

    /// Sets the AWS_* environment on a command, as a user would.
    fn env(&self, c: &mut Command) {
        for (k, v) in self.settings() {
            c.env(k.to_ascii_uppercase(), v);
        }
    }
}

/// A remote for one test: a `file://` directory, or a fresh bucket on moto.
pub(crate) struct Remote {
    pub(crate) url: String,
    moto: Option<&'static Moto>,
    pub(crate) dir: Option<PathBuf>,
}

impl Remote {
    pub(crate) fn file(tmp: &Path) -> Remote {
        let dir = tmp.join("remote");
        Remote {
            url: format!("file://{}", dir.display()),
            moto: None,
            dir: Some(dir),
        }
    }

    pub(crate) fn s3(bucket: &str) -> Option<Remote> {
        let m = moto()?;
        Some(Remote {
            url: m.bucket(bucket),
            moto: Some(m),
            dir: None,
        })
    }

    /// `rewind --store STORE -C WS args...`, with the remote's environment.
    pub(crate) fn cmd(&self, store: &Path, ws: &Path, args: &[&str]) -> Command {
        let mut c = rewind_bin();
        c.arg("--store").arg(store).arg("-C").arg(ws).args(args);
        if let Some(m) = self.moto {
            m.env(&mut c);
        }
        c
    }

    fn run(&self, store: &Path, ws: &Path, args: &[&str]) -> Output {
        self.cmd(store, ws, args).output().expect("spawn rewind")
    }

    fn ok(&self, store: &Path, ws: &Path, args: &[&str]) -> String {
        let out = self.run(store, ws, args);
        assert!(
            out.status.success(),
            "rewind {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, store: &Path, ws: &Path, args: &[&str]) -> serde_json::Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        serde_json::from_str(&self.ok(store, ws, &a)).expect("json")
    }

    pub(crate) fn open(&self) -> rewind::remote::Remote {
        match self.moto {
            Some(m) => {
                let s = m.settings();
                let pairs: Vec<(&str, &str)> = s.iter().map(|(k, v)| (*k, v.as_str())).collect();
                rewind::remote::Remote::open_with("t", &self.url, &pairs).expect("open remote")
            }
            None => rewind::remote::Remote::open("t", &self.url).expect("open remote"),
        }
    }
}

/// The workspace's latest snapshot id (full hex).
pub(crate) fn head(e: &Env) -> String {
    let log: serde_json::Value =
        serde_json::from_str(&e.ok(&["log", "-n", "1", "--json"])).expect("log json");
    log[0]["id"].as_str().expect("id").to_string()
}

/// A workspace with what a round trip must keep: nested dirs, an executable, a symlink, a
/// non-UTF-8 name, an empty file, and a file large enough to be chunked.
pub(crate) fn fill(ws: &Path, seed: u64) {
    write_file(ws, b"README.md", b"# hello\n");
    write_file(ws, b"src/main.rs", b"fn main() {}\n");
    write_file(ws, b"src/deep/er/x.txt", &noise(seed, 3000));
    write_file(ws, b"empty", b"");
    write_file(ws, b"caf\xe9.txt", b"latin-1 name\n");
    write_file(ws, b"run.sh", b"#!/bin/sh\necho hi\n");
    set_exec(&ws.join("run.sh"), true);
    make_symlink(ws, b"link", b"src/main.rs");
    write_file(ws, b"big.bin", &noise(seed + 1, 5 << 20));
}

/// push from A, pull into empty B, restore into an empty directory: the same tree.
fn round_trip(r: &Remote, e: &Env) {
    fill(&e.ws, 1);
    e.ok(&["snapshot", "-q"]);
    e.ok(&["tag", "v1", "@"]);
    e.write("src/main.rs", b"fn main() { println!(); }\n");
    e.ok(&["snapshot", "-q"]);
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    let p = r.json(&e.store, &e.ws, &["push", "--all"]);
    assert_eq!(p["snapshots_sent"], 2, "{p}");
    assert!(
        p["packs"].as_u64().unwrap() >= 2,
        "data and tree packs: {p}"
    );
    // A second push sends no object.
    let again = r.json(&e.store, &e.ws, &["push", "--all"]);
    assert_eq!(again["objects_sent"], 0, "{again}");
    assert_eq!(again["snapshots_present"], 2, "{again}");

    let b_store = e.tmp.path().join("storeB");
    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    // restore --remote with a URL and no local history at all.
    let out = r.ok(&b_store, &dest, &["restore", "--remote", &r.url, "v1"]);
    assert!(out.contains("restored"), "{out}");
    let v1 = e.tmp.path().join("v1");
    std::fs::create_dir(&v1).unwrap();
    e.ok_in(&v1, &["restore", "v1"]);
    assert_eq!(list_disk(&dest), list_disk(&v1));

    let c_store = e.tmp.path().join("storeC");
    r.ok(&c_store, &dest, &["remote", "add", "origin", &r.url]);
    let pulled = r.json(&c_store, &dest, &["pull"]);
    assert_eq!(pulled["snapshots_received"], 2, "{pulled}");
    assert_eq!(pulled["tags_set"], serde_json::json!(["v1"]), "{pulled}");
    let latest = e.tmp.path().join("latest");
    std::fs::create_dir(&latest).unwrap();
    r.ok(&c_store, &latest, &["restore", &head(e)]);
    assert_eq!(list_disk(&latest), list_disk(&e.ws));
    r.ok(&c_store, &latest, &["verify", "--full"]);
    let v = r.json(
        &c_store,
        &latest,
        &["verify", "--remote", "origin", "--full"],
    );
    assert_eq!(v["ok"], true, "{v}");
}

#[test]
fn round_trip_file() {
    let e = Env::new();
    round_trip(&Remote::file(e.tmp.path()), &e);
}

#[test]
fn round_trip_s3() {
    let Some(r) = Remote::s3("roundtrip") else {
        return;
    };
    round_trip(&r, &Env::new());
}

/// What the design relies on from the object store, checked against the store itself:
/// put-if-absent refuses a second writer, and a listing shows every write that returned.
fn guarantees(r: &Remote) {
    let remote = r.open();
    assert!(remote.put_if_absent("probe/once", b"a".to_vec()).unwrap());
    assert!(!remote.put_if_absent("probe/once", b"b".to_vec()).unwrap());
    assert_eq!(remote.get("probe/once").unwrap().unwrap(), b"a");
    for i in 0..20 {
        remote.put(&format!("probe/list/{i:02}"), vec![i]).unwrap();
        let names = remote.list("probe/list").unwrap();
        assert_eq!(names.len(), i as usize + 1, "list after write {i}");
    }
    remote.delete("probe/list/00").unwrap();
    assert_eq!(
        remote.list("probe/list").unwrap().len(),
        19,
        "list after delete"
    );
    assert_eq!(remote.get("probe/missing").unwrap(), None);
}

#[test]
fn object_store_guarantees_file() {
    let t = tempfile::tempdir().unwrap();
    guarantees(&Remote::file(t.path()));
}

#[test]
fn object_store_guarantees_s3() {
    if let Some(r) = Remote::s3("guarantees") {
        guarantees(&r);
    }
}

/// Two stores pushing different snapshots with shared content at once: both land whole.
fn two_pushers(r: &Remote) {
    let a = Env::new();
    let b = Env::new();
    fill(&a.ws, 10);
    fill(&b.ws, 10);
    b.write("only-b.txt", &noise(99, 200_000));
    a.write("only-a.txt", &noise(98, 200_000));
    for e in [&a, &b] {
        e.ok(&["snapshot", "-q"]);
        r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    }
    let ca = r.cmd(&a.store, &a.ws, &["push"]).output();
    let cb = std::thread::scope(|s| {
        let h = s.spawn(|| r.cmd(&b.store, &b.ws, &["push"]).output());
        let oa = ca;
        (oa, h.join().unwrap())
    });
    for o in [cb.0.unwrap(), cb.1.unwrap()] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let c = Env::new();
    r.ok(&c.store, &c.ws, &["remote", "add", "origin", &r.url]);
    let pulled = r.json(&c.store, &c.ws, &["pull"]);
    assert_eq!(pulled["snapshots_received"], 2, "{pulled}");
    let v = r.json(&c.store, &c.ws, &["verify", "--remote", "origin", "--full"]);
    assert_eq!(v["ok"], true, "{v}");
    for e in [&a, &b] {
        let head = head(e);
        let dest = c.tmp.path().join(&head[..12]);
        std::fs::create_dir(&dest).unwrap();
        r.ok(&c.store, &dest, &["restore", &head]);
        assert_eq!(list_disk(&dest), list_disk(&e.ws));
    }
}

#[test]
fn two_pushers_file() {
    let t = tempfile::tempdir().unwrap();
    two_pushers(&Remote::file(t.path()));
}

#[test]
fn two_pushers_s3() {
    if let Some(r) = Remote::s3("twopushers") {
        two_pushers(&r);
    }
}

/// A push killed with SIGKILL at 50 points leaves a remote that verifies and reads; the next
/// push completes it and a fresh store restores every snapshot byte for byte.
#[test]
fn killed_push_then_completed() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    fill(&e.ws, 20);
    // One push that completes first, so the remote exists whatever the kills do: on a loaded
    // machine every push of the first ten rounds can be killed before it writes anything,
    // and `verify --remote` would then rightly say there is no remote yet.
    e.ok(&["snapshot", "-q"]);
    r.ok(&e.store, &e.ws, &["push", "--all", "-q"]);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut kills, mut rounds, mut snaps) = (0u64, 0u64, 1u64);
    // Where a kill lands depends on timing; that it lands mid-push 50 times does not: a push
    // that finished before its kill does not count, and the loop goes on.
    while kills < 50 {
        rounds += 1;
        assert!(rounds <= 400, "only {kills} kills landed in 400 pushes");
        // New content each round, so every push has something to upload.
        e.write(
            &format!("round/{rounds}.bin"),
            &noise(1000 + rounds, 400_000),
        );
        e.ok(&["snapshot", "-q"]);
        snaps += 1;
        let mut child = r
            .cmd(&e.store, &e.ws, &["push", "--all", "-q"])
            .spawn()
            .expect("spawn push");
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(seed % 30_000));
        if child.try_wait().unwrap().is_none() {
            kills += 1;
        }
        // SAFETY: kill on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let _ = child.wait();
        if rounds % 10 == 0 {
            let v = r.json(&e.store, &e.ws, &["verify", "--remote", "origin"]);
            assert_eq!(v["ok"], true, "after round {rounds}: {v}");
        }
    }
    eprintln!("{kills} kills landed mid-push in {rounds} pushes");
    r.ok(&e.store, &e.ws, &["push", "--all", "-q"]);
    let c = Env::new();
    r.ok(&c.store, &c.ws, &["remote", "add", "origin", &r.url]);
    let v = r.json(&c.store, &c.ws, &["verify", "--remote", "origin", "--full"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["snapshots"], snaps, "{v}");
    r.ok(&c.store, &c.ws, &["pull", "-q"]);
    let dest = c.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let head = head(&e);
    r.ok(&c.store, &dest, &["restore", &head]);
    assert_eq!(list_disk(&dest), list_disk(&e.ws));
    // The interrupted pushes' leftovers go with gc.
    let g = r.json(&c.store, &c.ws, &["gc", "--remote", "origin"]);
    assert!(g["packs_deleted"].as_u64().is_some(), "{g}");
    let v = r.json(&c.store, &c.ws, &["verify", "--remote", "origin", "--full"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["orphan_packs"], 0, "{v}");
}

/// A flipped byte in a remote pack: verify --full names it, and restore refuses, writing
/// nothing.
#[test]
fn flipped_byte_found_and_never_restored() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    e.write("a.txt", &noise(5, 100_000));
    e.ok(&["snapshot", "-q"]);
    e.ok(&["tag", "v1", "@"]);
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    r.ok(&e.store, &e.ws, &["push", "v1", "-q"]);
    let packs = r.dir.as_ref().unwrap().join("packs");
    let mut biggest: Option<(u64, PathBuf)> = None;
    for p in std::fs::read_dir(&packs).unwrap() {
        let p = p.unwrap().path();
        let len = std::fs::metadata(&p).unwrap().len();
        if biggest.as_ref().is_none_or(|(l, _)| len > *l) {
            biggest = Some((len, p));
        }
    }
    let (len, pack) = biggest.unwrap();
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[len as usize / 2] ^= 0x20;
    std::fs::write(&pack, bytes).unwrap();

    let out = r.run(&e.store, &e.ws, &["verify", "--remote", "origin", "--full"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let name = pack.file_name().unwrap().to_string_lossy().to_string();
    assert!(text.contains(&name), "verify names the pack: {text}");

    let b_store = e.tmp.path().join("storeB");
    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let out = r.run(&b_store, &dest, &["restore", "--remote", &r.url, "v1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("damaged blob"), "{err}");
    assert_eq!(
        std::fs::read_dir(&dest).unwrap().count(),
        0,
        "nothing restored"
    );
}

/// gc --remote deletes what only a forgotten snapshot reached, keeps the rest readable.
#[test]
fn gc_frees_forgotten_snapshots() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    e.write("keep.txt", &noise(1, 300_000));
    e.write("drop.bin", &noise(2, 3_000_000));
    e.ok(&["snapshot", "-q"]);
    e.ok(&["tag", "old", "@"]);
    r.ok(&e.store, &e.ws, &["push", "old", "-q"]);
    std::fs::remove_file(e.path("drop.bin")).unwrap();
    e.ok(&["snapshot", "-q"]);
    r.ok(&e.store, &e.ws, &["push", "-q"]);
    r.ok(&e.store, &e.ws, &["remote", "forget", "origin", "old"]);
    let g = r.json(&e.store, &e.ws, &["gc", "--remote", "origin"]);
    assert!(g["bytes_freed"].as_u64().unwrap() > 2_900_000, "{g}");
    let v = r.json(&e.store, &e.ws, &["verify", "--remote", "origin", "--full"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["snapshots"], 1, "{v}");
    let b = Env::new();
    r.ok(&b.store, &b.ws, &["remote", "add", "origin", &r.url]);
    r.ok(&b.store, &b.ws, &["pull", "-q"]);
    let head = head(&e);
    let dest = b.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    r.ok(&b.store, &dest, &["restore", &head]);
    assert_eq!(list_disk(&dest), list_disk(&e.ws));
}

/// gc and push at the same time, several rounds: whichever the lock refuses fails cleanly,
/// and every push that succeeded is whole on the remote afterwards.
fn gc_racing_push(r: &Remote) {
    let e = Env::new();
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    fill(&e.ws, 30);
    e.ok(&["snapshot", "-q"]);
    r.ok(&e.store, &e.ws, &["push", "-q"]);
    // (snapshot, round) of every push that got through and is still on the remote.
    let mut pushed: Vec<(String, u64)> = Vec::new();
    for i in 0..6u64 {
        e.write("changing.bin", &noise(500 + i, 1_500_000));
        e.ok(&["snapshot", "-q"]);
        let id = head(&e);
        // Forget the previous snapshot so gc has something to delete while the push runs.
        if let Some((prev, _)) = pushed.pop() {
            r.ok(&e.store, &e.ws, &["remote", "forget", "origin", &prev]);
        }
        let (push, gc) = std::thread::scope(|s| {
            let p = s.spawn(|| r.run(&e.store, &e.ws, &["push", "--lock-timeout", "0"]));
            let g = s.spawn(|| r.run(&e.store, &e.ws, &["gc", "--remote", "origin"]));
            (p.join().unwrap(), g.join().unwrap())
        });
        for o in [&push, &gc] {
            if !o.status.success() {
                let err = String::from_utf8_lossy(&o.stderr);
                // The remote's lock ("is busy"), or, on a loaded machine, the local store's
                // open outlasting --lock-timeout 0 while the other process opens it.
                assert!(
                    err.contains("is busy") || err.contains("waiting for another rewind process"),
                    "only a lock may refuse: {err}"
                );
            }
        }
        if push.status.success() {
            pushed.push((id, i));
        }
    }
    let v = r.json(&e.store, &e.ws, &["verify", "--remote", "origin", "--full"]);
    assert_eq!(v["ok"], true, "{v}");
    // Whatever got through is whole: restored from the remote into an empty store.
    for (id, i) in &pushed {
        let b = Env::new();
        let dest = b.tmp.path().join("dest");
        std::fs::create_dir(&dest).unwrap();
        r.ok(&b.store, &dest, &["restore", "--remote", &r.url, id]);
        assert_eq!(
            std::fs::read(dest.join("changing.bin")).unwrap(),
            noise(500 + i, 1_500_000)
        );
        assert_eq!(
            std::fs::read(dest.join("big.bin")).unwrap(),
            std::fs::read(e.path("big.bin")).unwrap()
        );
    }
    // And the remote takes the latest once nothing races.
    r.ok(&e.store, &e.ws, &["push", "-q"]);
    let b = Env::new();
    let dest = b.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    r.ok(&b.store, &dest, &["restore", "--remote", &r.url, &head(&e)]);
    assert_eq!(list_disk(&dest), list_disk(&e.ws));
}

#[test]
fn gc_racing_push_file() {
    let t = tempfile::tempdir().unwrap();
    gc_racing_push(&Remote::file(t.path()));
}

#[test]
fn gc_racing_push_s3() {
    if let Some(r) = Remote::s3("gcrace") {
        gc_racing_push(&r);
    }
}

#[test]
fn bad_remote_input_is_refused_clearly() {
    let e = Env::new();
    e.write("a", b"a");
    e.ok(&["snapshot", "-q"]);
    let (code, err) = e.fails(&["remote", "add", "origin", "http://example/x"]);
    assert_eq!(code, 2);
    assert!(err.contains("unsupported remote URL"), "{err}");
    let (_, err) = e.fails(&["remote", "add", "-bad", "file:///tmp/x"]);
    assert!(
        err.contains("invalid remote name") || err.contains("unexpected"),
        "{err}"
    );
    let (_, err) = e.fails(&["push"]);
    assert!(err.contains("no remote"), "{err}");
    let url = format!("file://{}", e.tmp.path().join("r").display());
    e.ok(&["remote", "add", "origin", &url]);
    let (_, err) = e.fails(&["remote", "add", "origin", &url]);
    assert!(err.contains("already exists"), "{err}");
    let (_, err) = e.fails(&["pull"]);
    assert!(err.contains("nothing was pushed"), "{err}");
    let ls = e.ok(&["remote", "ls"]);
    assert!(ls.contains("origin") && ls.contains(&url), "{ls}");
    e.ok(&["remote", "rm", "origin"]);
    assert_eq!(e.ok(&["remote", "ls"]), "");
}

/// Artifacts travel with --artifacts, content and key intact (a large one is chunked).
#[test]
fn artifacts_push_and_pull() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    e.write("a.txt", b"a\n");
    e.ok(&["snapshot", "-q"]);
    let big = e.tmp.path().join("build.log");
    std::fs::write(&big, noise(77, 6 << 20)).unwrap();
    e.ok(&["artifact", "put", "run/1 build.log", big.to_str().unwrap()]);
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    let p = r.json(&e.store, &e.ws, &["push", "--artifacts"]);
    assert_eq!(p["artifacts_sent"], 1, "{p}");
    let b = Env::new();
    r.ok(&b.store, &b.ws, &["remote", "add", "origin", &r.url]);
    let pulled = r.json(&b.store, &b.ws, &["pull", "--artifacts"]);
    assert_eq!(pulled["artifacts_received"], 1, "{pulled}");
    let out = b
        .cmd()
        .args(["artifact", "get", "run/1 build.log"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, noise(77, 6 << 20));
}

/// A lock file as a live push on this host would write it (the test process stands in for
/// the holder: it is alive, and not the rewind process that reads the lock).
fn fake_push_lock(dir: &Path) -> PathBuf {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let lock = dir.join("locks").join("push-0123456789abcdef");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(
        &lock,
        format!(
            r#"{{"kind":"push","host":"{}","pid":{},"time_ns":{now}}}"#,
            host.trim(),
            std::process::id()
        ),
    )
    .unwrap();
    lock
}

/// gc waits for a push's lock (saying so) up to --lock-timeout, then refuses; once the push
/// is gone it goes ahead.
#[test]
fn gc_waits_for_a_push_lock() {
    let t = tempfile::tempdir().unwrap();
    let r = Remote::file(t.path());
    let e = Env::new();
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    fill(&e.ws, 40);
    e.ok(&["snapshot", "-q"]);
    r.ok(&e.store, &e.ws, &["push", "-q"]);
    let lock = fake_push_lock(r.dir.as_ref().unwrap());

    let out = r.run(
        &e.store,
        &e.ws,
        &["gc", "--remote", "origin", "--lock-timeout", "1"],
    );
    assert_eq!(out.status.code(), Some(75), "busy: worth retrying");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("waiting for remote origin"), "{err}");
    assert!(
        err.contains("is busy") && err.contains("a push by pid"),
        "{err}"
    );

    // A gc that may wait long enough goes ahead once the push's lock is gone.
    let mut gc = r
        .cmd(
            &e.store,
            &e.ws,
            &["gc", "--remote", "origin", "--lock-timeout", "120"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It waits (and says so) until the lock goes, however slow the machine.
    let mut stderr = gc.stderr.take().unwrap();
    let mut first = [0u8; 64];
    let n = stderr.read(&mut first).unwrap();
    assert!(
        String::from_utf8_lossy(&first[..n]).contains("waiting"),
        "{}",
        String::from_utf8_lossy(&first[..n])
    );
    std::fs::remove_file(&lock).unwrap();
    let status = gc.wait().unwrap();
    assert!(status.success());
    let v = r.json(&e.store, &e.ws, &["verify", "--remote", "origin"]);
    assert_eq!(v["ok"], true, "{v}");
}

/// A forced tag move is a conditional update: a writer holding an old version loses to the
/// one that moved the tag first, on S3 (If-Match against moto) and on file:// alike.
fn tag_moves_are_conditional(r: &Remote) {
    let e = Env::new();
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    e.write("a", b"1");
    e.ok(&["snapshot", "-q"]);
    let first = head(&e);
    e.ok(&["tag", "rel", &first]);
    r.ok(&e.store, &e.ws, &["push", "-q", "--tags"]);
    e.write("a", b"2");
    e.ok(&["snapshot", "-q"]);
    let second = head(&e);
    e.ok(&["tag", "-f", "rel", &second]);
    // Without --force the remote's tag is left alone; with it, it moves.
    let j = r.json(&e.store, &e.ws, &["push", "--tags"]);
    assert_eq!(j["tags_refused"][0]["tag"], "rel", "{j}");
    let j = r.json(&e.store, &e.ws, &["push", "--tags", "--force"]);
    assert_eq!(j["tags_sent"][0], "rel", "{j}");
    assert_eq!(r.open().tag("rel").unwrap().unwrap().hex(), second);

    // Two writers read the same version; the second write is refused, not lost silently.
    let (a, b) = (r.open(), r.open());
    let (_, va) = a.get_versioned("refs/rel").unwrap().unwrap();
    let (_, vb) = b.get_versioned("refs/rel").unwrap().unwrap();
    assert!(
        a.put_if_version("refs/rel", first.clone().into_bytes(), va)
            .unwrap()
    );
    assert!(
        !b.put_if_version("refs/rel", second.clone().into_bytes(), vb)
            .unwrap()
    );
    assert_eq!(r.open().tag("rel").unwrap().unwrap().hex(), first);
    // A version read after the move works.
    let (_, vc) = b.get_versioned("refs/rel").unwrap().unwrap();
    assert!(
        b.put_if_version("refs/rel", second.clone().into_bytes(), vc)
            .unwrap()
    );
    assert_eq!(r.open().tag("rel").unwrap().unwrap().hex(), second);
}

#[test]
fn tag_moves_are_conditional_file() {
    let t = tempfile::tempdir().unwrap();
    tag_moves_are_conditional(&Remote::file(t.path()));
}

#[test]
fn tag_moves_are_conditional_s3() {
    if let Some(r) = Remote::s3("tagcas") {
        tag_moves_are_conditional(&r);
    }
}

/// Workspace logs travel: a pull appends the pushed history to the workspace of the same path
/// in another store, and to a workspace mapped to it (`remote map`) at another path.
#[test]
fn workspace_logs_are_pushed_and_pulled() {
    let t = tempfile::tempdir().unwrap();
    let r = Remote::file(t.path());
    let a = Env::new();
    r.ok(&a.store, &a.ws, &["remote", "add", "origin", &r.url]);
    let mut ids = Vec::new();
    for i in 0..3 {
        a.write("f", format!("v{i}").as_bytes());
        a.ok(&["snapshot", "-q"]);
        ids.push(head(&a));
    }
    let j = r.json(&a.store, &a.ws, &["push", "--all"]);
    assert_eq!(j["logs"], 1, "{j}");
    let log_ids = |store: &Path, ws: &Path| -> Vec<String> {
        let v = r.json(store, ws, &["log"]);
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x["id"].as_str().unwrap().to_string())
            .collect()
    };

    // Store B has the same workspace path registered (its own snapshot of it).
    let b = tempfile::tempdir().unwrap();
    let b_store = b.path().join("store");
    r.ok(&b_store, &a.ws, &["snapshot", "-q"]);
    let own = log_ids(&b_store, &a.ws);
    r.ok(&b_store, &a.ws, &["remote", "add", "origin", &r.url]);
    let j = r.json(&b_store, &a.ws, &["pull"]);
    assert_eq!(j["logs_appended"][0]["snapshots"], 3, "{j}");
    let got = log_ids(&b_store, &a.ws);
    for id in ids.iter().chain(&own) {
        assert!(got.contains(id), "{id} not in {got:?}");
    }
    // A second pull adds nothing twice.
    let j = r.json(&b_store, &a.ws, &["pull"]);
    assert_eq!(j["logs_appended"].as_array().unwrap().len(), 0, "{j}");

    // Store C: another path, mapped to A's workspace.
    let c = Env::new();
    r.ok(&c.store, &c.ws, &["remote", "add", "origin", &r.url]);
    let a_path = std::fs::canonicalize(&a.ws).unwrap();
    r.ok(
        &c.store,
        &c.ws,
        &["remote", "map", "origin", a_path.to_str().unwrap()],
    );
    // Only the first snapshot is pulled: only it joins the log.
    r.ok(&c.store, &c.ws, &["pull", "origin", &ids[0]]);
    assert_eq!(log_ids(&c.store, &c.ws), vec![ids[0].clone()]);
    r.ok(&c.store, &c.ws, &["pull"]);
    let mut got = log_ids(&c.store, &c.ws);
    got.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(got, want);

    // A later push merges: the remote log keeps all four.
    a.write("f", b"v9");
    a.ok(&["snapshot", "-q"]);
    r.ok(&a.store, &a.ws, &["push", "-q"]);
    r.ok(&c.store, &c.ws, &["pull"]);
    assert_eq!(log_ids(&c.store, &c.ws).len(), 4);
}

/// gs:// and az:// are understood; what is missing to reach them is named before any request.
#[test]
fn gcs_and_azure_urls() {
    let e = Env::new();
    e.write("a", b"a");
    e.ok(&["snapshot", "-q"]);
    // Offline: added without reaching them.
    e.ok(&["remote", "add", "g", "gs://bucket/team", "--no-check"]);
    e.ok(&["remote", "add", "z", "az://container/team", "--no-check"]);
    let ls = e.ok(&["remote", "ls"]);
    assert!(
        ls.contains("gs://bucket/team") && ls.contains("az://container/team"),
        "{ls}"
    );
    let (_, err) = e.fails(&["remote", "add", "x", "gs://"]);
    assert!(err.contains("unsupported remote URL"), "{err}");

    // Azure without an account: the error names the setting.
    let out = e
        .cmd()
        .env_remove("AZURE_STORAGE_ACCOUNT_NAME")
        .env_remove("AZURE_STORAGE_ACCOUNT")
        .env_remove("AZURE_STORAGE_USE_EMULATOR")
        .args(["push", "z"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("AZURE_STORAGE_ACCOUNT_NAME"), "{err}");

    // GCS with a service-account file that is not there: named.
    let out = e
        .cmd()
        .env("GOOGLE_SERVICE_ACCOUNT", "/nonexistent/sa.json")
        .args(["push", "g"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/sa.json"), "{err}");
}

/// A damaged local object is refused by push before it reaches the remote.
#[test]
fn push_refuses_a_damaged_local_object() {
    let t = tempfile::tempdir().unwrap();
    let r = Remote::file(t.path());
    let e = Env::new();
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    e.write("data.bin", &noise(77, 20_000));
    e.ok(&["snapshot", "-q"]);
    common::flip_last_segment_byte(&e.store, 10);
    let out = r.run(&e.store, &e.ws, &["push"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("blob"), "{err}");
    // No snapshot reached the remote.
    assert!(r.open().snapshot_ids().unwrap().is_empty());
}

/// Blobs in groups, and blobs gc rewrote with the local store's dictionary, go to the remote
/// as plain frames: a store that pulls them, or a restore straight from the remote, has no
/// dictionary and needs none, and reads each object on its own.
fn dictionary_blobs_travel_plain(r: &Remote, e: &Env) {
    let words = ["alpha", "beta", "gamma", "delta", "queue", "lock"];
    common::source_tree(&e.ws, "src", 11, 300, &words);
    common::mid_source_tree(&e.ws, "big", 12, 30, &words);
    e.ok(&["snapshot", "-q"]);
    e.ok(&["tag", "v1", "@"]);
    let gc: serde_json::Value = serde_json::from_str(&e.ok(&["gc", "--json"])).unwrap();
    assert_eq!(gc["recompressed"]["dictionary_trained"], 1, "{gc}");
    assert!(gc["regrouped"]["blobs"].as_u64().unwrap() >= 300, "{gc}");
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    r.ok(&e.store, &e.ws, &["push", "--all"]);

    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    r.ok(
        &e.tmp.path().join("storeB"),
        &dest,
        &["restore", "--remote", &r.url, "v1"],
    );
    assert_eq!(list_disk(&dest), list_disk(&e.ws));

    let c_store = e.tmp.path().join("storeC");
    let latest = e.tmp.path().join("latest");
    std::fs::create_dir(&latest).unwrap();
    r.ok(&c_store, &latest, &["remote", "add", "origin", &r.url]);
    r.ok(&c_store, &latest, &["pull"]);
    r.ok(&c_store, &latest, &["restore", "v1"]);
    assert_eq!(list_disk(&latest), list_disk(&e.ws));
    r.ok(&c_store, &latest, &["verify", "--full"]);
    let v = r.json(
        &c_store,
        &latest,
        &["verify", "--remote", "origin", "--full"],
    );
    assert_eq!(v["ok"], true, "{v}");
}

#[test]
fn dictionary_blobs_travel_plain_file() {
    let e = Env::new();
    dictionary_blobs_travel_plain(&Remote::file(e.tmp.path()), &e);
}

#[test]
fn dictionary_blobs_travel_plain_s3() {
    let Some(r) = Remote::s3("dictblobs") else {
        return;
    };
    dictionary_blobs_travel_plain(&r, &Env::new());
}

/// Against the real S3 server: a missing bucket is said to be one (never the server's raw
/// XML, never "no such tag"), `remote add` reaches the bucket once (`--no-check` skips it),
/// and a first argument of push or pull that is neither a remote nor a revision is said to be
/// an unknown remote, with the remotes listed.
#[test]
fn remote_errors_say_what_is_wrong_s3() {
    let Some(m) = moto() else {
        return;
    };
    let e = Env::new();
    e.write("a", b"a");
    e.ok(&["snapshot", "-q", "--tag", "v1"]);
    let gone = Remote {
        url: "s3://no-such-bucket/team".into(),
        moto: Some(m),
        dir: None,
    };
    let no_bucket = |err: &str| {
        assert!(
            err.contains("bucket 'no-such-bucket' does not exist") && !err.contains('<'),
            "{err}"
        );
    };
    let out = gone.run(&e.store, &e.ws, &["remote", "add", "gone", &gone.url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    no_bucket(&err);
    assert!(err.contains("--no-check"), "{err}");
    assert_eq!(gone.ok(&e.store, &e.ws, &["remote", "ls"]), "", "not added");
    let added = gone.ok(
        &e.store,
        &e.ws,
        &["remote", "add", "gone", &gone.url, "--no-check"],
    );
    assert!(added.contains("not checked"), "{added}");
    for args in [
        &["push", "gone"][..],
        &["pull", "gone"],
        &["pull", "gone", "v1"],
        &["restore", "--remote", "gone", "v1"],
    ] {
        let out = gone.run(&e.store, &e.ws, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        no_bucket(&err);
    }

    let ok = Remote::s3("reachable").expect("moto runs");
    let added = ok.ok(&e.store, &e.ws, &["remote", "add", "origin", &ok.url]);
    assert!(added.contains("empty"), "{added}");
    for args in [&["push", "nope"][..], &["pull", "nope"]] {
        let out = ok.run(&e.store, &e.ws, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("no remote named 'nope'") && err.contains("gone, origin"),
            "{args:?}: {err}"
        );
    }
    // A revision is still a revision.
    ok.ok(&e.store, &e.ws, &["push", "v1"]);
    let again = ok.ok(&e.store, &e.ws, &["remote", "add", "again", &ok.url]);
    assert!(again.contains("a rewind remote"), "{again}");
}

/// A pull and a restore --remote count the references of what they store (trees, chunk lists,
/// snapshot records, artifacts): `verify --full` right after, with no other write that could
/// have recounted, finds every reference count right.
#[test]
fn pulled_objects_are_reference_counted() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    fill(&e.ws, 21);
    e.ok(&["snapshot", "-q"]);
    e.write("src/main.rs", b"fn main() { println!(); }\n");
    e.ok(&["snapshot", "-q"]);
    let art = e.tmp.path().join("a.log");
    std::fs::write(&art, noise(5, 4000)).unwrap();
    e.ok(&["artifact", "put", "build-log", art.to_str().unwrap()]);
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    r.ok(&e.store, &e.ws, &["push", "--all", "-q"]);

    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let b_store = e.tmp.path().join("storeB");
    r.ok(
        &b_store,
        &dest,
        &["restore", "-q", "--remote", &r.url, &head(&e)],
    );
    let v = r.json(&b_store, &dest, &["verify", "--full"]);
    assert_eq!(v["ok"], true, "after restore --remote: {v}");
    assert_eq!(v["refcounts_checked"], true, "after restore --remote: {v}");

    let c_store = e.tmp.path().join("storeC");
    r.ok(&c_store, &dest, &["remote", "add", "origin", &r.url]);
    let pulled = r.json(&c_store, &dest, &["pull"]);
    assert_eq!(pulled["snapshots_received"], 2, "{pulled}");
    let v = r.json(&c_store, &dest, &["verify", "--full"]);
    assert_eq!(v["ok"], true, "after pull: {v}");
    assert_eq!(v["refcounts_checked"], true, "after pull: {v}");
}

/// The remote commands' `--json` objects (wire types): every key of each, and `remote add`
/// says `encrypted` for a plain remote too (it said it only for an encrypted one).
#[test]
fn remote_json_objects_have_their_keys() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    fill(&e.ws, 3);
    e.ok(&["snapshot", "-q"]);
    e.ok(&["tag", "v1", "@"]);
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
        k.sort();
        k.join(",")
    };
    let added = r.json(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    assert_eq!(
        keys(&added),
        "added,checked,encrypted,holds_remote,url",
        "{added}"
    );
    assert_eq!(added["encrypted"], false, "{added}");
    assert_eq!(added["holds_remote"], false, "{added}");
    let ls = r.json(&e.store, &e.ws, &["remote", "ls"]);
    assert_eq!(keys(&ls[0]), "encrypted,name,url,workspaces", "{ls}");
    let p = r.json(&e.store, &e.ws, &["push", "--all"]);
    assert_eq!(
        keys(&p),
        "artifacts_sent,bytes_sent,logs,objects_present,objects_sent,packs,remote,requests,\
         seconds,snapshots_present,snapshots_sent,tags_raced,tags_refused,tags_sent,url",
        "{p}"
    );
    let b = Env::new();
    r.ok(&b.store, &b.ws, &["remote", "add", "origin", &r.url]);
    let pulled = r.json(&b.store, &b.ws, &["pull"]);
    assert_eq!(
        keys(&pulled),
        "artifacts_received,bytes_received,logs_appended,objects_received,remote,requests,\
         seconds,snapshots_present,snapshots_received,tags_kept,tags_set,url",
        "{pulled}"
    );
    let v = r.json(&e.store, &e.ws, &["verify", "--remote", "origin"]);
    assert_eq!(
        keys(&v),
        "bytes_checked,full,ok,orphan_packs,packs,problems,reachable_objects,remote,snapshots",
        "{v}"
    );
    let g = r.json(&e.store, &e.ws, &["gc", "--remote", "origin"]);
    assert_eq!(
        keys(&g),
        "bytes_freed,orphan_packs_deleted,packs_before,packs_deleted,packs_repacked,remote,\
         requests,seconds,snapshots",
        "{g}"
    );
    let rm = r.json(&e.store, &e.ws, &["remote", "rm", "origin"]);
    assert_eq!(rm, serde_json::json!({"removed": "origin"}));
}

/// `REWIND_TRACE` shows where a push and a restore from a remote spent their time, phase by
/// phase, on stderr (stdout stays the command's output).
#[test]
fn trace_shows_the_phases_of_push_and_restore() {
    let t = tempfile::tempdir().unwrap();
    let r = Remote::file(t.path());
    let e = Env::new();
    fill(&e.ws, 3);
    e.ok(&["snapshot", "-q"]);
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    let traced = |store: &Path, ws: &Path, args: &[&str]| {
        let out = r
            .cmd(store, ws, args)
            .env("REWIND_TRACE", "1")
            .output()
            .expect("spawn rewind");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = traced(&e.store, &e.ws, &["push", "-q"]);
    assert!(err.contains("rewind: phases: plan "), "{err}");
    assert!(
        err.contains(", data ") && err.contains(", records "),
        "{err}"
    );
    let dest = t.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let store2 = t.path().join("store2");
    let err = traced(
        &store2,
        &dest,
        &["restore", "--remote", &r.url, "-q", &head(&e)],
    );
    for phase in [
        "trees", "lists", "data", "chunked", "local", "commit", "place",
    ] {
        assert!(err.contains(&format!("{phase} ")), "{phase}: {err}");
    }
    assert_eq!(list_disk(&dest), list_disk(&e.ws));
}

/// `remote snapshots` lists what a remote holds, newest first, with tags (text and JSON), and
/// `latest` names the newest: what a fresh machine needs to restore without knowing an id.
#[test]
fn remote_snapshots_lists_them_and_latest_is_the_newest() {
    let t = tempfile::tempdir().unwrap();
    let r = Remote::file(t.path());
    let e = Env::new();
    r.ok(&e.store, &e.ws, &["remote", "add", "origin", &r.url]);
    let empty = r.run(&e.store, &e.ws, &["remote", "snapshots", "origin"]);
    assert!(empty.status.success());
    assert!(empty.stdout.is_empty());
    assert!(String::from_utf8_lossy(&empty.stderr).contains("no snapshots on origin"));

    fill(&e.ws, 4);
    e.ok(&["snapshot", "-q", "-m", "first"]);
    let first = head(&e);
    e.ok(&["tag", "v1", "@"]);
    e.write("README.md", b"# second\n");
    e.ok(&["snapshot", "-q"]);
    let second = head(&e);
    r.ok(&e.store, &e.ws, &["push", "--all", "-q"]);

    let v = r.json(&e.store, &e.ws, &["remote", "snapshots", "origin"]);
    let listed: Vec<&str> = v["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        [second.as_str(), first.as_str()],
        "newest first: {v}"
    );
    assert_eq!(v["snapshots"][1]["tags"][0], "v1", "{v}");
    assert_eq!(v["snapshots"][1]["message"], "first", "{v}");
    let text = r.ok(&e.store, &e.ws, &["remote", "snapshots", &r.url]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(&second[..12]), "{text}");
    assert!(!lines[0].ends_with(' '), "no trailing space: {text:?}");
    assert!(
        lines[1].contains("(v1)") && lines[1].ends_with("  first"),
        "{text}"
    );

    let dest = t.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let out = r.ok(
        &t.path().join("store2"),
        &dest,
        &["restore", "--remote", &r.url, "latest"],
    );
    assert!(out.contains(&second[..12]), "{out}");
    assert_eq!(list_disk(&dest), list_disk(&e.ws));
}
