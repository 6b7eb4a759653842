//! Encrypted remotes, end to end with the real binary against moto's S3 server (and a
//! `file://` directory where a test edits the stored files): a round trip with the right key;
//! a wrong key, a truncated, swapped or flipped object refused with a clear message and
//! nothing restored; no plaintext name, content or id anywhere in the bucket (checked against
//! an unencrypted remote of the same data, where they are found); a password change.

use crate::common;
use crate::remote::{Remote, fill, head};

use std::path::Path;
use std::process::{Command, Output};

use common::{Env, list_disk, noise, write_file};

const PW: &str = "correct horse battery staple";

/// A file name and contents no compressor hides (no repetition), and a tag name.
const SECRET_NAME: &[u8] = b"quarterly-acquisition-plan-7f3q.txt";
const SECRET_TAG: &str = "release-codename-bluefin";

fn secret_content() -> Vec<u8> {
    let mut c = b"PLAINTEXT-CANARY-Zq8vW2 merger terms: 41.7 per share; ".to_vec();
    c.extend_from_slice(&noise(77, 2000));
    c
}

/// A command against `r` with `password` in the environment (none when None).
fn cmd(r: &Remote, store: &Path, ws: &Path, password: Option<&str>, args: &[&str]) -> Command {
    let mut c = r.cmd(store, ws, args);
    c.env_remove("REWIND_REMOTE_PASSWORD");
    c.env_remove("REWIND_REMOTE_PASSWORD_FILE");
    if let Some(pw) = password {
        c.env("REWIND_REMOTE_PASSWORD", pw);
    }
    c
}

fn run(r: &Remote, store: &Path, ws: &Path, password: Option<&str>, args: &[&str]) -> Output {
    cmd(r, store, ws, password, args)
        .output()
        .expect("spawn rewind")
}

fn ok(r: &Remote, store: &Path, ws: &Path, password: Option<&str>, args: &[&str]) -> String {
    let out = run(r, store, ws, password, args);
    assert!(
        out.status.success(),
        "rewind {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(r: &Remote, store: &Path, ws: &Path, pw: Option<&str>, args: &[&str]) -> serde_json::Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    serde_json::from_str(&ok(r, store, ws, pw, &a)).expect("json")
}

/// Fails with exit status 1 or more, and returns stderr.
fn refused(r: &Remote, store: &Path, ws: &Path, pw: Option<&str>, args: &[&str]) -> String {
    let out = run(r, store, ws, pw, args);
    assert!(
        !out.status.success(),
        "rewind {args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every object in the bucket as stored (read through the S3 API without a key): name, bytes.
fn raw_objects(r: &Remote) -> Vec<(String, Vec<u8>)> {
    let remote = r.open();
    let mut out = Vec::new();
    out.push((
        "rewind-remote".to_string(),
        remote.get("rewind-remote").unwrap().unwrap_or_default(),
    ));
    for dir in [
        "packs",
        "index",
        "snapshots",
        "refs",
        "artifacts",
        "logs",
        "locks",
        "keys",
    ] {
        for (name, _) in remote.list(dir).unwrap() {
            let key = format!("{dir}/{name}");
            let bytes = remote.get(&key).unwrap().expect("listed object");
            out.push((key, bytes));
        }
    }
    out
}

/// The strings of `needles` found in any object's name or bytes.
fn found(objects: &[(String, Vec<u8>)], needles: &[Vec<u8>]) -> Vec<String> {
    let mut hits = Vec::new();
    for needle in needles {
        let n = String::from_utf8_lossy(needle).into_owned();
        for (name, bytes) in objects {
            if name
                .as_bytes()
                .windows(needle.len())
                .any(|w| w == needle.as_slice())
                || bytes.windows(needle.len()).any(|w| w == needle.as_slice())
            {
                hits.push(format!("{n} in {name}"));
            }
        }
    }
    hits
}

/// A workspace with the secrets, two snapshots, the secret tag on the first.
fn secrets(e: &Env) {
    fill(&e.ws, 3);
    write_file(&e.ws, SECRET_NAME, &secret_content());
    e.ok(&["snapshot", "-q"]);
    e.ok(&["tag", SECRET_TAG, "@"]);
    e.write("src/main.rs", b"fn main() { println!(\"second\"); }\n");
    e.ok(&["snapshot", "-q"]);
}

/// What must not be seen in an encrypted bucket: the file name, its content, the tag, the
/// workspace's path, and the ids (the content's BLAKE3, the snapshot's), which would say
/// which files equal known ones.
fn needles(e: &Env) -> Vec<Vec<u8>> {
    let blob = blake3::hash(&secret_content()).to_hex().to_string();
    vec![
        SECRET_NAME.to_vec(),
        b"PLAINTEXT-CANARY-Zq8vW2".to_vec(),
        SECRET_TAG.as_bytes().to_vec(),
        e.ws.to_string_lossy().as_bytes().to_vec(),
        blob.as_bytes().to_vec(),
        blake3::hash(&secret_content()).as_bytes().to_vec(),
        head(e).into_bytes(),
    ]
}

fn encrypted_round_trip(r: &Remote, plain: &Remote, e: &Env) {
    secrets(e);
    let add = ok(
        r,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "origin", &r.url, "--encrypt"],
    );
    assert!(add.contains("encrypted, new key"), "{add}");
    let p = json(r, &e.store, &e.ws, Some(PW), &["push", "--all"]);
    assert_eq!(p["snapshots_sent"], 2, "{p}");
    let again = json(r, &e.store, &e.ws, Some(PW), &["push", "--all"]);
    assert_eq!(
        again["objects_sent"], 0,
        "a second push finds it all: {again}"
    );

    // Nothing readable in the bucket; the same data pushed unencrypted shows every needle, so
    // this check sees them when they are there.
    let needles = needles(e);
    let objects = raw_objects(r);
    assert!(objects.len() > 6, "{} objects", objects.len());
    let hits = found(&objects, &needles);
    assert!(
        hits.is_empty(),
        "plaintext in the encrypted bucket: {hits:?}"
    );
    ok(
        plain,
        &e.store,
        &e.ws,
        None,
        &["remote", "add", "plain", &plain.url],
    );
    ok(plain, &e.store, &e.ws, None, &["push", "plain", "--all"]);
    let plain_hits = found(&raw_objects(plain), &needles);
    for n in [&needles[0], &needles[1], &needles[2], &needles[6]] {
        let n = String::from_utf8_lossy(n);
        assert!(
            plain_hits.iter().any(|h| h.starts_with(&*n)),
            "the unencrypted bucket shows {n}: {plain_hits:?}"
        );
    }

    // restore --remote by URL into an empty directory, on a machine with no history.
    let b_store = e.tmp.path().join("storeB");
    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let out = ok(
        r,
        &b_store,
        &dest,
        Some(PW),
        &["restore", "--remote", &r.url, SECRET_TAG],
    );
    assert!(out.contains("restored"), "{out}");
    let v1 = e.tmp.path().join("v1");
    std::fs::create_dir(&v1).unwrap();
    e.ok_in(&v1, &["restore", SECRET_TAG]);
    assert_eq!(list_disk(&dest), list_disk(&v1));

    // pull into a third store: both snapshots and the tag, verified.
    let c_store = e.tmp.path().join("storeC");
    let c_ws = e.tmp.path().join("c");
    std::fs::create_dir(&c_ws).unwrap();
    ok(
        r,
        &c_store,
        &c_ws,
        Some(PW),
        &["remote", "add", "origin", &r.url, "--encrypt"],
    );
    let pulled = json(r, &c_store, &c_ws, Some(PW), &["pull"]);
    assert_eq!(pulled["snapshots_received"], 2, "{pulled}");
    assert_eq!(
        pulled["tags_set"],
        serde_json::json!([SECRET_TAG]),
        "{pulled}"
    );
    let latest = e.tmp.path().join("latest");
    std::fs::create_dir(&latest).unwrap();
    ok(r, &c_store, &latest, None, &["restore", &head(e)]);
    assert_eq!(list_disk(&latest), list_disk(&e.ws));
    let v = json(
        r,
        &c_store,
        &latest,
        Some(PW),
        &["verify", "--remote", "origin", "--full"],
    );
    assert_eq!(v["ok"], true, "{v}");

    // A second machine sharing the key deduplicates: its push of the same tree sends nothing.
    let d_store = e.tmp.path().join("storeD");
    let d_ws = e.tmp.path().join("d");
    std::fs::create_dir(&d_ws).unwrap();
    e.ok_in(&d_ws, &["restore", &head(e)]);
    let snap = rewind_in(&d_store, &d_ws, &["snapshot", "-q"]);
    assert!(snap.status.success());
    ok(
        r,
        &d_store,
        &d_ws,
        Some(PW),
        &["remote", "add", "origin", &r.url, "--encrypt"],
    );
    let d = json(r, &d_store, &d_ws, Some(PW), &["push"]);
    assert_eq!(d["objects_sent"], 0, "same key, same names: {d}");
}

fn rewind_in(store: &Path, ws: &Path, args: &[&str]) -> Output {
    common::rewind_bin()
        .arg("--store")
        .arg(store)
        .arg("-C")
        .arg(ws)
        .args(args)
        .output()
        .expect("spawn rewind")
}

#[test]
fn encrypted_round_trip_s3() {
    let (Some(r), Some(plain)) = (Remote::s3("crypt-rt"), Remote::s3("crypt-rt-plain")) else {
        return;
    };
    encrypted_round_trip(&r, &plain, &Env::new());
}

#[test]
fn encrypted_round_trip_file() {
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    let plain = Remote::file(&e.tmp.path().join("p"));
    encrypted_round_trip(&r, &plain, &e);
}

/// The local store holds no snapshot (nothing half-pulled), if it exists at all.
fn store_is_empty(store: &Path) {
    if !store.exists() {
        return;
    }
    let s = rewind::Store::open(store, rewind::StoreOptions::default()).expect("open store");
    let all = s.reader().unwrap().all_snapshots().unwrap();
    assert!(all.is_empty(), "the store holds {} snapshots", all.len());
}

/// A wrong key, no key, a truncated object, two swapped objects and a flipped byte: each
/// refused with what is wrong, nothing restored or pulled.
fn damage_refused(r: &Remote, e: &Env) {
    secrets(e);
    ok(
        r,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "origin", &r.url, "--encrypt"],
    );
    ok(r, &e.store, &e.ws, Some(PW), &["push", "--all", "-q"]);
    let b_store = e.tmp.path().join("storeB");
    let b_ws = e.tmp.path().join("b");
    std::fs::create_dir(&b_ws).unwrap();
    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();

    let err = refused(
        r,
        &b_store,
        &dest,
        Some("wrong"),
        &["restore", "--remote", &r.url, SECRET_TAG],
    );
    assert!(err.contains("does not open its key"), "{err}");
    assert!(err.contains("REWIND_REMOTE_PASSWORD"), "hint: {err}");
    let err = refused(
        r,
        &b_store,
        &dest,
        None,
        &["restore", "--remote", &r.url, SECRET_TAG],
    );
    assert!(err.contains("is encrypted"), "{err}");
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 0);
    store_is_empty(&b_store);

    // Raw access: names as stored, bytes as stored.
    let raw = r.open();
    let snaps = raw.list("snapshots").unwrap();
    assert_eq!(snaps.len(), 2);
    let (a, b) = (
        format!("snapshots/{}", snaps[0].0),
        format!("snapshots/{}", snaps[1].0),
    );
    let a_bytes = raw.get(&a).unwrap().unwrap();
    let b_bytes = raw.get(&b).unwrap().unwrap();

    // Swapped: each record under the other's name.
    raw.put(&a, b_bytes.clone()).unwrap();
    raw.put(&b, a_bytes.clone()).unwrap();
    let err = refused(r, &b_store, &b_ws, Some(PW), &["pull", &r.url]);
    assert!(err.contains("fails authentication"), "swapped: {err}");
    store_is_empty(&b_store);

    // Truncated.
    raw.put(&a, a_bytes[..a_bytes.len() - 7].to_vec()).unwrap();
    raw.put(&b, b_bytes.clone()).unwrap();
    let err = refused(r, &b_store, &b_ws, Some(PW), &["pull", &r.url]);
    assert!(err.contains("fails authentication"), "truncated: {err}");
    store_is_empty(&b_store);
    raw.put(&a, a_bytes).unwrap();

    // A flipped byte in the largest pack: restore --remote refuses, the directory stays empty.
    let packs = raw.list("packs").unwrap();
    let (pack, _) = packs.iter().max_by_key(|(_, len)| *len).unwrap();
    let key = format!("packs/{pack}");
    let mut bytes = raw.get(&key).unwrap().unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    raw.put(&key, bytes).unwrap();
    let err = refused(
        r,
        &b_store,
        &dest,
        Some(PW),
        &["restore", "--remote", &r.url, SECRET_TAG],
    );
    assert!(err.contains("fails authentication"), "flipped: {err}");
    assert_eq!(
        std::fs::read_dir(&dest).unwrap().count(),
        0,
        "nothing restored"
    );
    let v = run(
        r,
        &e.store,
        &e.ws,
        Some(PW),
        &["verify", "--remote", "origin", "--full"],
    );
    assert_eq!(v.status.code(), Some(1), "verify finds it");

    // Two indexes swapped: verify names them, pull refuses.
    let idx = raw.list("index").unwrap();
    assert!(idx.len() >= 2, "data and tree packs: {idx:?}");
    let (a, b) = (format!("index/{}", idx[0].0), format!("index/{}", idx[1].0));
    let (a_bytes, b_bytes) = (raw.get(&a).unwrap().unwrap(), raw.get(&b).unwrap().unwrap());
    raw.put(&a, b_bytes).unwrap();
    raw.put(&b, a_bytes).unwrap();
    let v = run(
        r,
        &e.store,
        &e.ws,
        Some(PW),
        &["verify", "--remote", "origin"],
    );
    assert_eq!(v.status.code(), Some(1), "verify finds it");
    let text = String::from_utf8_lossy(&v.stdout);
    assert!(text.contains("fails authentication"), "{text}");
    let err = refused(r, &b_store, &b_ws, Some(PW), &["pull", &r.url]);
    assert!(
        err.contains("fails authentication"),
        "swapped indexes: {err}"
    );
    store_is_empty(&b_store);
}

#[test]
fn damage_refused_s3() {
    let Some(r) = Remote::s3("crypt-damage") else {
        return;
    };
    damage_refused(&r, &Env::new());
}

/// `remote passwd`: the new password opens it, the old one no longer does, no data moved;
/// a key file works the same way.
#[test]
fn passwd_changes_the_key_not_the_data_s3() {
    let Some(r) = Remote::s3("crypt-passwd") else {
        return;
    };
    let e = Env::new();
    secrets(&e);
    ok(
        &r,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "origin", &r.url, "--encrypt"],
    );
    ok(&r, &e.store, &e.ws, Some(PW), &["push", "--all", "-q"]);
    let packs_before = r.open().list("packs").unwrap();

    let out = cmd(
        &r,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "passwd", "origin"],
    )
    .env("REWIND_REMOTE_NEW_PASSWORD", "new secret")
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        r.open().list("packs").unwrap(),
        packs_before,
        "no data re-uploaded"
    );
    assert_eq!(
        r.open().list("keys").unwrap().len(),
        1,
        "the old key object is gone"
    );

    let b_store = e.tmp.path().join("storeB");
    let b_ws = e.tmp.path().join("b");
    std::fs::create_dir(&b_ws).unwrap();
    let err = refused(&r, &b_store, &b_ws, Some(PW), &["pull", &r.url]);
    assert!(err.contains("does not open its key"), "{err}");
    let pulled = json(&r, &b_store, &b_ws, Some("new secret"), &["pull", &r.url]);
    assert_eq!(pulled["snapshots_received"], 2, "{pulled}");

    // To a key file, kept in remotes.toml: no password needed afterwards.
    let key = e.tmp.path().join("key");
    std::fs::write(&key, noise(9, 32)).unwrap();
    let out = cmd(
        &r,
        &e.store,
        &e.ws,
        Some("new secret"),
        &["remote", "passwd", "origin", "--new-key-file"],
    )
    .arg(&key)
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&r, &e.store, &e.ws, None, &["verify", "--remote", "origin"]);
    assert_eq!(v["ok"], true, "{v}");
    let err = refused(&r, &b_store, &b_ws, Some("new secret"), &["pull", &r.url]);
    assert!(err.contains("does not open its key"), "{err}");
}

/// An unencrypted bucket cannot be added with --encrypt (its data would stay in the clear),
/// and an encrypted one read as plain says it is encrypted.
#[test]
fn plain_and_encrypted_do_not_mix() {
    let e = Env::new();
    let plain = Remote::file(e.tmp.path());
    fill(&e.ws, 4);
    e.ok(&["snapshot", "-q"]);
    ok(
        &plain,
        &e.store,
        &e.ws,
        None,
        &["remote", "add", "p", &plain.url],
    );
    ok(&plain, &e.store, &e.ws, None, &["push", "p", "-q"]);
    let err = refused(
        &plain,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "q", &plain.url, "--encrypt"],
    );
    assert!(err.contains("holds an unencrypted remote"), "{err}");

    let enc = Remote::file(&e.tmp.path().join("enc"));
    ok(
        &enc,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "x", &enc.url, "--encrypt"],
    );
    ok(&enc, &e.store, &e.ws, Some(PW), &["push", "x", "-q"]);
    let err = refused(
        &enc,
        &e.store,
        &e.ws,
        None,
        &["remote", "add", "y", &enc.url],
    );
    assert!(err.contains("is encrypted"), "{err}");
    assert!(err.contains("--encrypt"), "{err}");
    // Added without checking, it is refused at the first use.
    ok(
        &enc,
        &e.store,
        &e.ws,
        None,
        &["remote", "add", "y", &enc.url, "--no-check"],
    );
    let err = refused(&enc, &e.store, &e.ws, None, &["push", "y"]);
    assert!(err.contains("is encrypted"), "{err}");
    // With a password at hand the message is the same: the configuration, not a missing
    // password, is what is wrong, and the hint says how to add it again.
    let err = refused(&enc, &e.store, &e.ws, Some(PW), &["push", "y"]);
    assert!(err.contains("opened as an unencrypted remote"), "{err}");
    assert!(!err.contains("no password"), "{err}");
    assert!(err.contains("`rewind remote rm y`"), "{err}");
    assert!(!err.contains("REWIND_REMOTE_PASSWORD"), "{err}");
    // No password for a remote added as encrypted: said so, with where to give one.
    let err = refused(&enc, &e.store, &e.ws, None, &["push", "x"]);
    assert!(err.contains("no password or key file was given"), "{err}");
    assert!(err.contains("REWIND_REMOTE_PASSWORD"), "{err}");
    assert!(!err.contains("remote add"), "{err}");
    // A key change without the new password names the new one, not the current one.
    let err = refused(&enc, &e.store, &e.ws, Some(PW), &["remote", "passwd", "x"]);
    assert!(
        err.contains("no new password or key file was given"),
        "{err}"
    );
    assert!(err.contains("REWIND_REMOTE_NEW_PASSWORD"), "{err}");
    // The encrypted marker is format 2: a rewind reading only format 1 refuses it.
    let marker = std::fs::read_to_string(enc.dir.as_ref().unwrap().join("rewind-remote")).unwrap();
    assert!(marker.contains("\"format\": 2"), "{marker}");
}

/// `bytes` with one byte in the middle flipped.
fn flipped(mut bytes: Vec<u8>) -> Vec<u8> {
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    bytes
}

/// A tag or a lock that fails authentication (a flipped byte, or another valid object's bytes
/// under its name) stops every command that reads it, naming it: nothing skips it and goes on
/// (a skipped tag would pull or restore without it; a skipped lock would let a push run beside
/// a gc it cannot see). A push or gc refused that way takes its own lock away again.
#[test]
fn a_forged_tag_or_lock_stops_the_command_s3() {
    let Some(r) = Remote::s3("crypt-forged-refs") else {
        return;
    };
    let e = Env::new();
    secrets(&e);
    e.ok(&["tag", "second", "@"]);
    ok(
        &r,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "origin", &r.url, "--encrypt"],
    );
    ok(&r, &e.store, &e.ws, Some(PW), &["push", "--all", "-q"]);
    let raw = r.open();
    let refs = raw.list("refs").unwrap();
    assert_eq!(refs.len(), 2, "both tags pushed: {refs:?}");
    let (a, b) = (format!("refs/{}", refs[0].0), format!("refs/{}", refs[1].0));
    let (a_bytes, b_bytes) = (raw.get(&a).unwrap().unwrap(), raw.get(&b).unwrap().unwrap());
    let packs = raw.list("packs").unwrap();
    let b_store = e.tmp.path().join("storeB");
    let b_ws = e.tmp.path().join("b");
    std::fs::create_dir(&b_ws).unwrap();
    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let names_a_tag = |err: &str| {
        err.contains("fails authentication")
            && (err.contains(&format!("refs/{SECRET_TAG}")) || err.contains("refs/second"))
    };

    for (what, a_new, b_new) in [
        (
            "flipped",
            flipped(a_bytes.clone()),
            flipped(b_bytes.clone()),
        ),
        ("swapped", b_bytes.clone(), a_bytes.clone()),
    ] {
        raw.put(&a, a_new).unwrap();
        raw.put(&b, b_new).unwrap();
        let err = refused(&r, &b_store, &b_ws, Some(PW), &["pull", &r.url]);
        assert!(names_a_tag(&err), "{what} tag, pull: {err}");
        store_is_empty(&b_store);
        for tag in [SECRET_TAG, "second"] {
            let err = refused(
                &r,
                &b_store,
                &dest,
                Some(PW),
                &["restore", "--remote", &r.url, tag],
            );
            assert!(names_a_tag(&err), "{what} tag, restore {tag}: {err}");
            assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 0);
        }
        // A push compares the remote's tags with its own before moving any.
        let err = refused(&r, &e.store, &e.ws, Some(PW), &["push", "--all", "-q"]);
        assert!(names_a_tag(&err), "{what} tag, push: {err}");
        let out = run(
            &r,
            &e.store,
            &e.ws,
            Some(PW),
            &["verify", "--remote", "origin"],
        );
        let text = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
        assert!(
            !out.status.success() && names_a_tag(&text),
            "{what} tag, verify --remote: {text}"
        );
        // (gc --remote reads no tag: it keeps what the snapshot records reach, and a tag keeps
        // nothing by itself.)
    }
    raw.put(&a, a_bytes.clone()).unwrap();
    raw.put(&b, b_bytes.clone()).unwrap();

    // A lock written with the key (a dead holder: as it is, it stands in nobody's way).
    let mut keyed = r.open();
    keyed
        .unlock(&rewind::remote::Secret::Password(PW.into()))
        .unwrap();
    let info = serde_json::json!({"kind": "push", "host": "elsewhere", "pid": 1, "time_ns": 0});
    keyed
        .put("locks/push-0123456789abcdef", info.to_string().into_bytes())
        .unwrap();
    ok(&r, &e.store, &e.ws, Some(PW), &["push", "--all", "-q"]);
    let locks = raw.list("locks").unwrap();
    assert_eq!(locks.len(), 1, "{locks:?}");
    let lock = format!("locks/{}", locks[0].0);
    let lock_bytes = raw.get(&lock).unwrap().unwrap();
    for (what, forged) in [
        ("flipped", flipped(lock_bytes.clone())),
        ("a tag's bytes", a_bytes.clone()),
    ] {
        raw.put(&lock, forged).unwrap();
        for args in [
            &["push", "--all", "-q"][..],
            &["gc", "--remote", "origin"][..],
        ] {
            let err = refused(&r, &e.store, &e.ws, Some(PW), args);
            assert!(
                err.contains("fails authentication") && err.contains("locks/push-0123456789abcdef"),
                "{what} lock, {args:?}: {err}"
            );
        }
        assert_eq!(
            raw.list("packs").unwrap(),
            packs,
            "{what}: gc deleted nothing"
        );
        assert_eq!(
            raw.list("locks").unwrap().len(),
            1,
            "{what}: the refused command took its own lock away"
        );
    }
    raw.put(&lock, lock_bytes).unwrap();
    ok(
        &r,
        &e.store,
        &e.ws,
        Some(PW),
        &["gc", "--remote", "origin", "-q"],
    );
    assert!(
        raw.list("locks").unwrap().is_empty(),
        "gc removed the dead lock"
    );
}

/// A remote sealed with XChaCha20-Poly1305 by an earlier rewind (fixtures/remote-xchacha.md)
/// still restores, takes a push in its own suite (its marker unchanged) and restores that; a
/// new remote seals with AES-256-GCM; a marker naming a cipher this build does not know is
/// refused by name.
#[test]
fn remotes_keep_their_suite() {
    const FIXTURE_PW: &str = "fixture-password";
    const FIXTURE_SNAP: &str = "ee2fc48444af98a48634a04e356e69ce3b8ef4dec4696a31e379a0ca1ebf94f2";
    let e = Env::new();
    let r = Remote::file(e.tmp.path());
    let dir = r.dir.clone().unwrap();
    let fixture = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/remote-xchacha"
    ));
    let cp = Command::new("cp")
        .arg("-r")
        .arg(fixture)
        .arg(&dir)
        .status()
        .unwrap();
    assert!(cp.success());
    let marker = || std::fs::read_to_string(dir.join("rewind-remote")).unwrap();
    assert!(marker().contains("\"xchacha20poly1305\""), "{}", marker());

    let dest = e.tmp.path().join("dest");
    std::fs::create_dir(&dest).unwrap();
    let store2 = e.tmp.path().join("store2");
    ok(
        &r,
        &store2,
        &dest,
        Some(FIXTURE_PW),
        &["restore", "-q", "--remote", &r.url, FIXTURE_SNAP],
    );
    assert_eq!(
        std::fs::read(dest.join("a.txt")).unwrap(),
        b"hello from an old remote\n"
    );
    assert_eq!(
        std::fs::read(dest.join("dir/b.txt")).unwrap(),
        b"second file\n"
    );
    assert_eq!(
        blake3::hash(&std::fs::read(dest.join("big.txt")).unwrap())
            .to_hex()
            .as_str(),
        "ebe8e1aec1d777c9fb7fab136f41123c6755c51d083e11f9ed4a2bab608eddb9"
    );

    // A push from this machine is sealed as the remote's other objects are.
    secrets(&e);
    ok(
        &r,
        &e.store,
        &e.ws,
        Some(FIXTURE_PW),
        &["remote", "add", "old", &r.url, "--encrypt"],
    );
    ok(
        &r,
        &e.store,
        &e.ws,
        Some(FIXTURE_PW),
        &["push", "old", "-q"],
    );
    assert!(marker().contains("\"xchacha20poly1305\""), "{}", marker());
    let snap = json(&r, &e.store, &e.ws, None, &["log", "-n", "1"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let dest2 = e.tmp.path().join("dest2");
    std::fs::create_dir(&dest2).unwrap();
    ok(
        &r,
        &e.tmp.path().join("store3"),
        &dest2,
        Some(FIXTURE_PW),
        &["restore", "-q", "--remote", &r.url, &snap],
    );
    assert_eq!(
        std::fs::read(dest2.join(std::str::from_utf8(SECRET_NAME).unwrap())).unwrap(),
        secret_content()
    );
    // Another password opens nothing, as with any encrypted remote.
    let err = refused(&r, &e.store, &e.ws, Some(PW), &["pull", "old"]);
    assert!(err.contains("key"), "{err}");

    // A new remote names AES-256-GCM.
    let fresh = Remote::file(&e.tmp.path().join("fresh"));
    ok(
        &fresh,
        &e.store,
        &e.ws,
        Some(PW),
        &["remote", "add", "new", &fresh.url, "--encrypt"],
    );
    let path = fresh.dir.as_ref().unwrap().join("rewind-remote");
    let m = std::fs::read_to_string(&path).unwrap();
    assert!(m.contains("\"aes256gcm-blake3-subkeys\""), "{m}");

    // An unknown suite is named, not guessed at.
    std::fs::write(&path, m.replace("aes256gcm-blake3-subkeys", "rot13")).unwrap();
    let err = refused(&fresh, &e.store, &e.ws, Some(PW), &["push", "new"]);
    assert!(err.contains("'rot13'"), "{err}");
    assert!(err.contains("does not know"), "{err}");
}
