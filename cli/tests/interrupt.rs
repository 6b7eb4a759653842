//! Waits, signals and interruptions: a writer that waits says so once (naming who it waits
//! for) and gives up at --lock-timeout; an interrupted restore says how to finish or go back
//! and can be undone; `rewind run` signals its command's process group.

use crate::common;

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Waits for a child at most `limit`, killing it (and failing) after that: a hang must fail the
/// test, not the whole suite.
fn wait_bounded(mut child: Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_writer_waiting_for_the_store_says_who_it_waits_for_once_and_honours_the_timeout() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    // Another rewind process with the store open (it waits for its standard input).
    let mut holder = env
        .cmd()
        .args(["artifact", "put", "held", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let procs = env.store.join("procs");
    let prefix = format!("{}-", holder.id());
    let start = Instant::now();
    while !std::fs::read_dir(&procs)
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        })
        .unwrap_or(false)
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "holder never registered"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A write transaction held open, as a long snapshot holds one.
    let db = redb::Database::builder()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(env.store.join("store.redb"))
        .expect("open the database");
    let txn = db.begin_write().unwrap();

    let art = env.tmp.path().join("x.txt");
    std::fs::write(&art, b"x\n").unwrap();
    let waiter = env
        .cmd()
        .args(["--lock-timeout", "1", "artifact", "put", "x"])
        .arg(&art)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(waiter, Duration::from_secs(60));
    drop(txn);
    holder.stdin.take().unwrap().write_all(b"held\n").unwrap();
    holder.wait().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "busy: {err}");
    assert_eq!(
        err.matches("rewind: waiting for another rewind process")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains(&format!("pid {}", holder.id())), "{err}");
    assert!(err.contains("artifact put held"), "{err}");
    assert!(err.contains("timed out"), "{err}");
}

/// `--lock-timeout 0` refuses to wait for another process; it does not make an uncontended
/// open fail (the open itself takes a few milliseconds).
#[test]
fn a_zero_lock_timeout_still_opens_a_store_nobody_holds() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    for _ in 0..5 {
        env.ok(&["--lock-timeout", "0", "snapshot", "-q"]);
        env.ok(&["--lock-timeout", "0", "log"]);
    }
}

#[test]
fn an_interrupted_restore_says_how_to_finish_and_undo_takes_it_back() {
    let env = Env::new();
    for i in 0..3000 {
        env.write(
            &format!("d{}/f{i}.txt", i % 30),
            format!("old {i}\n").as_bytes(),
        );
    }
    let old = env.ok(&["snapshot", "-q"]).trim().to_string();
    for i in 0..3000 {
        env.write(
            &format!("d{}/f{i}.txt", i % 30),
            format!("new {i}\n").repeat(50).as_bytes(),
        );
    }
    env.write("extra.txt", b"only in the new state\n");
    env.ok(&["snapshot", "-q"]);
    // The restore stops at its first file: what a Ctrl-C does part way.
    let out = env
        .cmd()
        .args(["restore", &old])
        .env("REWIND_TEST_INTERRUPT_AFTER", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(err.contains(&format!("rewind restore {old}")), "{err}");
    assert!(err.contains("rewind undo"), "{err}");
    // No temporary file is left behind.
    let leftovers: Vec<_> = list_disk(&env.ws)
        .into_keys()
        .filter(|k| String::from_utf8_lossy(k).contains(".rewind-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Undo puts back the state before the restore.
    env.ok(&["undo"]);
    assert_eq!(
        std::fs::read(env.path("d1/f1.txt")).unwrap(),
        "new 1\n".repeat(50).as_bytes()
    );
    assert!(env.path("extra.txt").exists());
    let status = env.ok(&["status"]);
    assert!(status.contains("no changes"), "{status}");
}

/// Starts `rewind run` on a shell script (`prefix`, then a long sleep before writing
/// late.txt) and waits until the script runs; returns the child and rewind's pid.
fn start_run(env: &Env, prefix: &str) -> (Child, i32) {
    let marker = env.tmp.path().join("started");
    let _ = std::fs::remove_file(&marker);
    let script = format!(
        "{prefix}touch {}; sleep 30; echo after > late.txt",
        marker.display()
    );
    // Not the test's standard input: in the foreground of a terminal the command shares
    // rewind's process group (so it can read the terminal) and the terminal, not rewind,
    // signals the group; this test is about rewind forwarding the signal.
    let child = env
        .cmd()
        .args(["run", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let start = Instant::now();
    while !marker.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the script never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, pid)
}

#[test]
fn run_signals_the_commands_process_group_and_a_second_signal_kills_it() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    // The grandchild (sleep) must get the SIGINT too: without it the run takes 30 s.
    let (child, pid) = start_run(&env, "");
    // SAFETY: signalling a child this test spawned.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(20));
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!env.path("late.txt").exists());

    // A command that ignores SIGINT: the second signal kills its group, the run is recorded as
    // interrupted, and rewind says so.
    let (child, pid) = start_run(&env, "trap '' INT; ");
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(300));
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = wait_bounded(child, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    // Nothing of the group survives to write late.txt.
    std::thread::sleep(Duration::from_millis(200));
    assert!(!env.path("late.txt").exists());
    let ops = env.ok(&["op", "log", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ops).unwrap();
    assert!(
        v.as_array().unwrap().iter().any(|o| o["kind"]
            .as_str()
            .unwrap_or("")
            .starts_with("run (interrupted")),
        "{v}"
    );
}

#[test]
fn run_events_keeps_stderr_json_lines_only() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let result = env.tmp.path().join("result.json");
    let out = env
        .cmd()
        .args(["run", "--events", "--result"])
        .arg(&result)
        .args(["--", "sh", "-c", "echo b > b.txt"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for line in err.lines() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not a JSON line: {line:?}\n{err}"
        );
    }
    assert!(result.exists());
}
