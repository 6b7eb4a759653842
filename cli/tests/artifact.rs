//! `rewind artifact` through the real binary: streamed round trips, dedup, keys, --force.

use crate::common;

use std::fs;
use std::io::Write;
use std::process::Stdio;

use common::{Env, noise};
use serde_json::Value;

/// Writes `len` bytes of pseudo-random data made of repeated 1 MiB blocks (so chunking finds
/// duplicates inside the file too) without holding the file in memory.
fn big_file(path: &std::path::Path, mib: usize) -> blake3::Hash {
    let mut f = std::io::BufWriter::new(fs::File::create(path).unwrap());
    let mut h = blake3::Hasher::new();
    for i in 0..mib {
        let block = noise((i % 48) as u64, 1 << 20);
        h.update(&block);
        f.write_all(&block).unwrap();
    }
    f.flush().unwrap();
    h.finalize()
}

/// Runs `cmd` to its end and returns its standard output and its own peak RSS (KiB), from
/// `wait4` on that child alone: `RUSAGE_CHILDREN` would count every child any test of this
/// process started (a browser, a Python server).
// The child is reaped by `wait4` (which `Child::wait` cannot do while keeping its rusage).
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: std::process::Command) -> (String, i64) {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rewind");
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read stdout");
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "exit status {status}"
    );
    (out, ru.ru_maxrss)
}

#[test]
fn a_large_artifact_round_trips_streamed_and_dedups() {
    let env = Env::new();
    let src = env.tmp.path().join("big.bin");
    let want = big_file(&src, 64);
    let mut put_cmd = env.cmd();
    put_cmd.args([
        "--json",
        "artifact",
        "put",
        "build/big.bin",
        src.to_str().unwrap(),
        "--meta",
        "job=7",
    ]);
    let (put_out, rss) = run_measured(put_cmd);
    let put: Value = serde_json::from_str(&put_out).unwrap();
    assert_eq!(put["size"], 64 << 20);
    assert_eq!(put["id"].as_str().unwrap(), want.to_hex().as_str());
    assert!(put["stored_bytes"].as_u64().unwrap() > 40 << 20);
    // Memory stays bounded: far below the artifact's size (redb's cache is 64 MiB at most).
    assert!(rss < 120 * 1024, "max RSS {rss} KiB");

    // The same content again, from standard input: nothing new is stored.
    let mut child = env
        .cmd()
        .args(["--json", "artifact", "put", "copy", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        let mut f = fs::File::open(&src).unwrap();
        std::io::copy(&mut f, &mut stdin).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again["id"], put["id"]);
    assert_eq!(again["stored_bytes"], 0);
    assert_eq!(again["new_chunks"], 0);

    // get to a file, and to stdout, gives the bytes back.
    let dest = env.tmp.path().join("back.bin");
    env.ok(&[
        "artifact",
        "get",
        "build/big.bin",
        "-o",
        dest.to_str().unwrap(),
    ]);
    let mut h = blake3::Hasher::new();
    h.update_reader(fs::File::open(&dest).unwrap()).unwrap();
    assert_eq!(h.finalize(), want);
    let out = env
        .cmd()
        .args(["artifact", "get", "copy"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(blake3::hash(&out.stdout), want);

    let ls: Value = serde_json::from_str(&env.ok(&["--json", "artifact", "ls"])).unwrap();
    let keys: Vec<&str> = ls
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["build/big.bin", "copy"]);
    assert_eq!(ls[0]["meta"]["job"], "7");
    assert_eq!(ls[0]["size"], 64 << 20);
    assert!(ls[0]["created"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn keys_are_validated_and_replaced_only_with_force() {
    let env = Env::new();
    let f = env.tmp.path().join("a.txt");
    fs::write(&f, b"first\n").unwrap();
    let p = f.to_str().unwrap();
    env.ok(&["artifact", "put", "notes", p]);
    let (code, err) = env.fails(&["artifact", "put", "notes", p]);
    assert_eq!(code, 2);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    fs::write(&f, b"second\n").unwrap();
    env.ok(&["artifact", "put", "notes", p, "--force"]);
    assert_eq!(env.ok(&["artifact", "get", "notes"]), "second\n");

    let long = "k".repeat(256);
    for bad in ["", "a\nb", "tab\there", " lead", long.as_str()] {
        let (code, err) = env.fails(&["artifact", "put", bad, p]);
        assert_eq!(code, 2, "{bad:?}");
        assert!(err.contains("invalid artifact key"), "{bad:?}: {err}");
    }
    let ok = "k".repeat(255);
    env.ok(&["artifact", "put", &ok, p]);

    // Small artifacts dedup too, and an empty one is fine.
    let empty = env.tmp.path().join("empty");
    fs::write(&empty, b"").unwrap();
    env.ok(&["artifact", "put", "empty", empty.to_str().unwrap()]);
    assert_eq!(env.ok(&["artifact", "get", "empty"]), "");

    env.ok(&["artifact", "rm", "notes"]);
    let (code, err) = env.fails(&["artifact", "get", "notes"]);
    assert_eq!(code, 2);
    assert!(err.contains("no artifact 'notes'"), "{err}");
    let (_, err) = env.fails(&["artifact", "rm", "notes"]);
    assert!(err.contains("no artifact"), "{err}");
    let (_, err) = env.fails(&["artifact", "put", "x", "/nonexistent/file"]);
    assert!(err.contains("/nonexistent/file"), "{err}");
}
