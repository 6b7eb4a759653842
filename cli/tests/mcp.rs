//! `rewind mcp` through an independent client: the `mcp` package from PyPI over a real stdio
//! session (cli/tests/mcp_client.py), on a real workspace and store. Where the package is
//! missing the test says so and passes, except under CI (env `CI`), where it fails.

use std::fs;
use std::process::{Command, Stdio};

use crate::common::Env;

/// Whether the `mcp` package is importable; under CI its absence fails the test.
fn client_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(
            !ci,
            "the `mcp` Python package is not installed (pip install mcp): CI must run the MCP tests"
        );
        eprintln!(
            "SKIPPED: the `mcp` Python package is not installed (pip install mcp); MCP tests not run"
        );
    }
    ok
}

#[test]
fn a_stdio_session_covers_every_tool() {
    if !client_available() {
        return;
    }
    let env = Env::new();
    fs::write(env.ws.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    fs::write(env.ws.join("gone.txt"), "bye\n").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_rewind"))
        .arg(&env.store)
        .arg(&env.ws)
        // The copy backend: overlays whose files the client edits in a plain directory.
        .env("REWIND_OVERLAY_PROBE", "fail")
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all steps passed"),
        "the MCP client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // The run's command wrote to stdout: that line reached the server's stderr (the client's
    // log) as it was, not the protocol (where the client would have reported a bad message).
    assert!(
        stderr.lines().any(|l| l == "noise on stdout"),
        "stderr:\n{stderr}"
    );

    // The wire type's field names are the CLI's: every key of `log --json`'s row that the
    // wire snapshot carries has the same value.
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SNAPSHOT "))
        .expect("the client printed the first snapshot");
    let wire: serde_json::Value = serde_json::from_str(line).unwrap();
    let log = env.cmd().args(["--json", "log"]).output().unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&log.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == wire["id"])
        .expect("the snapshot is in the log");
    for (k, v) in wire.as_object().unwrap() {
        assert_eq!(
            row.get(k),
            Some(v),
            "field {k}: log --json has {:?}",
            row.get(k)
        );
    }
}

#[test]
fn a_bad_workspace_fails_at_start_without_a_session() {
    let env = Env::new();
    let out = crate::common::rewind_bin()
        .arg("--store")
        .arg(&env.store)
        .arg("-C")
        .arg(env.ws.join("missing"))
        .arg("mcp")
        .stdin(Stdio::null())
        .output()
        .expect("spawn");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on stdout: {:?}", out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("missing"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
