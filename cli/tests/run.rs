//! `rewind run` and `rewind check` through the real binary, on real directories and a real
//! store: exact result JSON, rollback, contracts, the patch cap, concurrency and signals.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Env, list_disk, write_file};
use serde_json::{Value, json};

/// The shipped schema, compiled once per test.
fn validator() -> jsonschema::Validator {
    let text = fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        "/schemas/run-result.schema.json"
    ))
    .expect("read schema");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

/// Asserts `v` is a valid run result.
fn assert_valid(v: &Value) {
    let val = validator();
    let errors: Vec<String> = val.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}\n{v:#}");
}

/// Runs `rewind run ARGS -- CMD` writing the result to a file; returns (exit code, result).
fn run(env: &Env, args: &[&str], cmd: &[&str]) -> (i32, Value) {
    let result = env.tmp.path().join(format!(
        "result-{}.json",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let out = env
        .cmd()
        .arg("run")
        .arg("--result")
        .arg(&result)
        .args(args)
        .arg("--")
        .args(cmd)
        .stdin(Stdio::null())
        .output()
        .expect("spawn rewind");
    let text = fs::read_to_string(&result).unwrap_or_else(|e| {
        panic!(
            "no result file ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let v: Value = serde_json::from_str(&text).expect("result is JSON");
    assert!(
        v.get("error").is_none(),
        "rewind failed: {v} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_valid(&v);
    (out.status.code().unwrap_or(-1), v)
}

fn file(path: &str, old_path: Option<&str>, status: &str, ins: u64, del: u64) -> Value {
    json!({"path": path, "path_bytes": null, "old_path": old_path, "old_path_bytes": null,
           "status": status, "binary": false, "insertions": ins, "deletions": del})
}

/// The result's files without the sides (blob ids), which [`file`] leaves out.
fn without_sides(files: &Value) -> Value {
    let mut files = files.clone();
    for f in files.as_array_mut().into_iter().flatten() {
        if let Some(o) = f.as_object_mut() {
            o.remove("old");
            o.remove("new");
        }
    }
    files
}

fn seed(env: &Env) {
    env.write("a.txt", b"one\ntwo\nthree\n");
    env.write("gone.txt", b"bye\n");
    env.write("old/name.txt", b"moving\n");
    env.write("run.sh", b"#!/bin/sh\n");
    env.write("keep.bin", &[0u8, 1, 2, 3, 255]);
}

#[test]
fn a_run_reports_creates_modifies_deletes_renames_and_chmods_exactly() {
    let env = Env::new();
    seed(&env);
    let (code, v) = run(
        &env,
        &["--capture-patch", "-m", "task", "--meta", "task=42"],
        &[
            "sh",
            "-c",
            "printf 'one\\nTWO\\nthree\\nfour\\n' > a.txt && rm gone.txt && mkdir -p new && \
             mv old/name.txt new/name.txt && chmod +x run.sh && echo hi > created.txt",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(v["backend"], "hash");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["success"], true);
    assert_eq!(v["after_label"], "after");
    assert_eq!(v["rolled_back"], false);
    assert_eq!(v["violations"], json!([]));
    assert_eq!(v["skipped"], json!([]));
    let mut d = v["diff"].clone();
    d["files"] = without_sides(&d["files"]);
    assert_eq!(
        d,
        json!({
            "files_changed": 5,
            "insertions": 3,
            "deletions": 2,
            "files": [
                file("a.txt", None, "modified", 2, 1),
                file("created.txt", None, "added", 1, 0),
                file("gone.txt", None, "deleted", 0, 1),
                file("new/name.txt", Some("old/name.txt"), "renamed", 0, 0),
                file("run.sh", None, "mode_changed", 0, 0),
            ],
        })
    );
    // Each file's sides carry the blob ids, so a caller fetches content without another diff.
    let f = &v["diff"]["files"];
    let blob = |data: &[u8]| json!(blake3::hash(data).to_hex().to_string());
    assert_eq!(f[0]["old"]["id"], blob(b"one\ntwo\nthree\n"));
    assert_eq!(f[0]["new"]["id"], blob(b"one\nTWO\nthree\nfour\n"));
    assert_eq!(f[0]["new"]["mode"], "100644");
    assert_eq!(f[1]["old"], Value::Null);
    assert_eq!(f[1]["new"]["id"], blob(b"hi\n"));
    assert_eq!(f[2]["old"]["id"], blob(b"bye\n"));
    assert_eq!(f[2]["new"], Value::Null);
    assert_eq!(f[3]["old"]["id"], f[3]["new"]["id"]);
    assert_eq!(f[4]["new"]["mode"], "100755");
    assert_eq!(f[4]["new"]["kind"], "executable");
    // The inline patch is exactly what `rewind diff` prints for the two snapshots.
    let (before, after) = (
        v["before"].as_str().unwrap().to_string(),
        v["after"].as_str().unwrap().to_string(),
    );
    let patch = env.ok(&["diff", &before, &after]);
    assert_eq!(v["patch"].as_str(), Some(patch.as_str()));
    assert_eq!(v["patch_bytes"], json!(patch.len()));
    assert_eq!(v["patch_ref"], Value::Null);
    // Both snapshots carry the metadata and their labels.
    let show_b: Value = serde_json::from_str(&env.ok(&["show", &before, "--json"])).unwrap();
    let show_a: Value = serde_json::from_str(&env.ok(&["show", &after, "--json"])).unwrap();
    let text = format!("{show_b} {show_a}");
    assert!(text.contains("task") && text.contains("42"), "{text}");
    assert!(show_b.to_string().contains("before") && show_a.to_string().contains("after"));
    // The run is one operation: undo takes all of it back.
    let after_disk = list_disk(&env.ws);
    env.ok(&["undo"]);
    let mut expect = common::Listing::new();
    expect.insert(
        b"a.txt".to_vec(),
        ('f', b"one\ntwo\nthree\n".to_vec(), false),
    );
    expect.insert(b"gone.txt".to_vec(), ('f', b"bye\n".to_vec(), false));
    expect.insert(b"keep.bin".to_vec(), ('f', vec![0u8, 1, 2, 3, 255], false));
    expect.insert(b"old".to_vec(), ('d', Vec::new(), false));
    expect.insert(b"old/name.txt".to_vec(), ('f', b"moving\n".to_vec(), false));
    expect.insert(b"run.sh".to_vec(), ('f', b"#!/bin/sh\n".to_vec(), false));
    assert_eq!(list_disk(&env.ws), expect);
    env.ok(&["redo"]);
    assert_eq!(list_disk(&env.ws), after_disk);
}

#[test]
fn json_goes_to_stdout_after_the_command_and_events_to_stderr() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    let out = env
        .cmd()
        .args([
            "--json",
            "run",
            "--events",
            "--",
            "sh",
            "-c",
            "echo x >> a.txt",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is the result");
    assert_valid(&v);
    assert_eq!(
        without_sides(&v["diff"]["files"]),
        json!([file("a.txt", None, "modified", 1, 0)])
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "workspace_snapshot_taken",
            "command_started",
            "command_finished",
            "workspace_snapshot_taken",
            "workspace_diff_computed"
        ]
    );
    assert_eq!(events[0]["label"], "before");
    assert_eq!(events[0]["snapshot"], v["before"]);
    assert_eq!(events[0]["files"], 1);
    assert_eq!(events[0]["bytes"], 2);
    assert_eq!(events[3]["label"], "after");
    assert_eq!(events[3]["snapshot"], v["after"]);
    assert_eq!(
        events[4],
        json!({"event": "workspace_diff_computed", "files_changed": 1, "insertions": 1,
               "deletions": 0, "has_patch": false})
    );
}

#[test]
fn a_failing_command_is_rolled_back_exactly_and_undo_takes_the_rollback_back() {
    let env = Env::new();
    seed(&env);
    fs::set_permissions(env.path("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let before_disk = list_disk(&env.ws);
    let (code, v) = run(
        &env,
        &["--rollback-on-failure"],
        &[
            "sh",
            "-c",
            "echo broken > a.txt; rm -r old; echo tmp > tmp.txt; chmod -x run.sh; exit 7",
        ],
    );
    assert_eq!(code, 7);
    assert_eq!(v["exit_code"], 7);
    assert_eq!(v["success"], false);
    assert_eq!(v["after_label"], "after_failure");
    assert_eq!(v["rolled_back"], true);
    assert_eq!(v["diff"]["files_changed"], 4);
    assert_eq!(list_disk(&env.ws), before_disk, "rollback restores exactly");
    // The failed state is kept in the after_failure snapshot.
    let after = v["after"].as_str().unwrap();
    assert_eq!(env.ok(&["cat", after, "a.txt"]), "broken\n");
    // undo takes back the rollback (the failed state returns), a second undo the run.
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"broken\n");
    assert!(env.path("tmp.txt").exists() && !env.path("old").exists());
    env.ok(&["undo"]);
    assert_eq!(list_disk(&env.ws), before_disk);
}

#[test]
fn a_command_that_cannot_start_exits_127_and_rewind_errors_exit_125() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    let (code, v) = run(&env, &[], &["/nonexistent/program"]);
    assert_eq!(code, 127);
    assert_eq!(v["exit_code"], 127);
    assert!(
        v["spawn_error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/program")
    );
    // A bad glob is rewind's own failure: 125, and the result file says so.
    let res = env.tmp.path().join("err.json");
    let out = env
        .cmd()
        .args(["run", "--forbid", "a[", "--result"])
        .arg(&res)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let v: Value = serde_json::from_str(&fs::read_to_string(&res).unwrap()).unwrap();
    assert!(v["error"].as_str().unwrap().contains("a["), "{v}");
}

#[test]
fn violations_are_found_reported_reverted_and_failed() {
    let env = Env::new();
    env.write("src/lib.rs", b"fn a() {}\n");
    env.write("secrets/key.pem", b"KEY\n");
    env.write("README.md", b"readme\n");
    let cmd = [
        "sh",
        "-c",
        "echo 'fn b() {}' >> src/lib.rs; echo NEW > secrets/key.pem; echo more >> README.md; \
         echo new > src/new.rs",
    ];
    let contract = [
        "--allow",
        "src/**",
        "--allow",
        "secrets",
        "--forbid",
        "*.pem",
        "--no-new-files",
    ];
    let expected = json!([
        {"path": "README.md", "path_bytes": null, "reason": "not_allowed", "status": "modified"},
        {"path": "secrets/key.pem", "path_bytes": null, "reason": "forbidden", "status": "modified"},
        {"path": "src/new.rs", "path_bytes": null, "reason": "new_file_disallowed", "status": "added"},
    ]);

    // report: listed, nothing touched, exit 0.
    let (code, v) = run(&env, &contract, &cmd);
    assert_eq!(code, 0);
    assert_eq!(v["violations"], expected);
    assert_eq!(v["on_violation"], "report");
    assert_eq!(fs::read(env.path("secrets/key.pem")).unwrap(), b"NEW\n");
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("secrets/key.pem")).unwrap(), b"KEY\n");

    // revert: violating paths back to before, the allowed change kept.
    let mut args = contract.to_vec();
    args.push("--on-violation=revert");
    let (code, v) = run(&env, &args, &cmd);
    assert_eq!(code, 0);
    assert_eq!(v["violations"], expected);
    assert_eq!(
        v["reverted"],
        json!(["README.md", "secrets/key.pem", "src/new.rs"])
    );
    assert_eq!(fs::read(env.path("secrets/key.pem")).unwrap(), b"KEY\n");
    assert_eq!(fs::read(env.path("README.md")).unwrap(), b"readme\n");
    assert!(!env.path("src/new.rs").exists());
    assert_eq!(
        fs::read(env.path("src/lib.rs")).unwrap(),
        b"fn a() {}\nfn b() {}\n"
    );
    env.ok(&["undo"]); // the revert
    assert!(env.path("src/new.rs").exists());
    env.ok(&["undo"]); // the run
    assert!(!env.path("src/new.rs").exists());
    assert_eq!(fs::read(env.path("src/lib.rs")).unwrap(), b"fn a() {}\n");

    // fail, from a contract file: exit 123 although the command succeeded.
    let file = env.tmp.path().join("contract.toml");
    fs::write(
        &file,
        "allow = [\"src/**\", \"secrets\"]\nforbid = [\"*.pem\"]\nno_new_files = true\non_violation = \"fail\"\n",
    )
    .unwrap();
    let (code, v) = run(&env, &["--contract", file.to_str().unwrap()], &cmd);
    assert_eq!(code, 123);
    assert_eq!(v["violations"], expected);
    assert_eq!(v["on_violation"], "fail");
}

#[test]
fn check_lists_violations_and_reverts_them_to_a() {
    let env = Env::new();
    env.write("src/a.rs", b"a\n");
    env.write("Cargo.toml", b"[package]\n");
    env.ok(&["snapshot", "--tag", "A"]);
    env.write("src/a.rs", b"a2\n");
    env.write("Cargo.toml", b"[package]\nname = 'x'\n");
    fs::rename(env.path("src/a.rs"), env.path("moved.rs")).unwrap();
    env.ok(&["snapshot", "--tag", "B"]);
    let out = env
        .cmd()
        .args(["check", "A", "B", "--allow", "src/**"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not_allowed") && text.contains("Cargo.toml"),
        "{text}"
    );
    let out = env
        .cmd()
        .args([
            "--json",
            "check",
            "A",
            "B",
            "--forbid",
            "Cargo.toml",
            "--revert",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["violations"],
        json!([{"path": "Cargo.toml", "path_bytes": null, "reason": "forbidden", "status": "modified"}])
    );
    assert_eq!(v["reverted"], json!(["Cargo.toml"]));
    let typed: rewind::wire::ContractCheck =
        serde_json::from_value(v.clone()).expect("a ContractCheck");
    assert!(!typed.ok && typed.rules && typed.op.is_some(), "{v}");
    assert_eq!(typed.a.len(), 64, "{v}");
    assert_eq!(fs::read(env.path("Cargo.toml")).unwrap(), b"[package]\n");
    assert!(
        env.path("moved.rs").exists(),
        "only violating paths are reverted"
    );
    let ok = env.ok(&["check", "A", "B", "--allow", "**"]);
    assert!(ok.contains("no violations"), "{ok}");
}

#[test]
fn the_patch_cap_switches_to_an_artifact_holding_the_full_patch() {
    let env = Env::new();
    env.write("small.txt", b"x\n");
    let (_, v) = run(
        &env,
        &["--capture-patch", "--max-patch-bytes", "200"],
        &["sh", "-c", "seq 1 2000 > big.txt"],
    );
    assert_eq!(v["patch"], Value::Null);
    let key = v["patch_ref"].as_str().expect("patch_ref").to_string();
    let full = env.ok(&[
        "diff",
        v["before"].as_str().unwrap(),
        v["after"].as_str().unwrap(),
    ]);
    assert_eq!(v["patch_bytes"], json!(full.len()));
    assert!(full.len() > 200);
    assert_eq!(env.ok(&["artifact", "get", &key]), full);
    let ls = env.ok(&["--json", "artifact", "ls"]);
    assert!(
        ls.contains(&key) && ls.contains("\"kind\": \"patch\""),
        "{ls}"
    );
    // Within the cap it is inline.
    let (_, v) = run(
        &env,
        &["--capture-patch", "--max-patch-bytes", "1M"],
        &["sh", "-c", "echo y >> small.txt"],
    );
    assert!(v["patch"].as_str().unwrap().contains("+y"));
    assert_eq!(v["patch_ref"], Value::Null);
}

#[test]
fn eight_runs_at_once_on_one_store_all_succeed_with_right_results() {
    let env = Env::new();
    let shared = env.ws.clone();
    write_file(&shared, b"base.txt", b"base\n");
    env.ok(&["snapshot"]);
    let mut children = Vec::new();
    for i in 0..8 {
        // Even: its own workspace; odd: the shared one.
        let ws = if i % 2 == 0 {
            let d = env.tmp.path().join(format!("ws{i}"));
            fs::create_dir(&d).unwrap();
            write_file(&d, b"mine.txt", format!("{i}\n").as_bytes());
            d
        } else {
            shared.clone()
        };
        let result = env.tmp.path().join(format!("r{i}.json"));
        let name = format!("out{i}.txt");
        let child = Command::new(env!("CARGO_BIN_EXE_rewind"))
            .arg("--store")
            .arg(&env.store)
            .arg("-C")
            .arg(&ws)
            .args(["run", "--capture-patch", "--result"])
            .arg(&result)
            .args(["--", "sh", "-c"])
            .arg(format!("sleep 0.2; seq 1 {} > {name}", i + 1))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        children.push((i, ws, result, name, child));
    }
    let v = validator();
    for (i, ws, result, name, child) in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "run {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_str(&fs::read_to_string(&result).unwrap()).unwrap();
        assert!(v.is_valid(&r), "{r}");
        let files = r["diff"]["files"].as_array().unwrap();
        let mine = files
            .iter()
            .find(|f| f["path"] == name.as_str())
            .unwrap_or_else(|| panic!("run {i} does not list {name}: {r}"));
        assert_eq!(mine["status"], "added");
        assert_eq!(mine["insertions"], json!(i + 1));
        if i % 2 == 0 {
            assert_eq!(
                files.len(),
                1,
                "a private workspace sees only its own change"
            );
        }
        assert!(
            r["patch"]
                .as_str()
                .unwrap()
                .contains(&format!("+++ b/{name}"))
        );
        // The after snapshot holds the file.
        let cat = Command::new(env!("CARGO_BIN_EXE_rewind"))
            .arg("--store")
            .arg(&env.store)
            .arg("-C")
            .arg(&ws)
            .args(["cat", r["after"].as_str().unwrap(), &name])
            .output()
            .unwrap();
        assert_eq!(cat.stdout.len(), fs::read(ws.join(&name)).unwrap().len());
    }
    // Each run's before and after snapshot (`log` alone shows a run as one row).
    assert!(env.ok(&["log", "--all"]).lines().count() >= 9);
}

/// Spawns `rewind run` with an events file; waits until the command has started and `ready`
/// exists in the workspace. Returns the child and the command's pid.
#[allow(clippy::zombie_processes)] // the caller waits for it
fn spawn_run(env: &Env, result: &Path, events: &Path, script: &str) -> (std::process::Child, i32) {
    let child = env
        .cmd()
        .args(["run", "--result"])
        .arg(result)
        .arg("--events-file")
        .arg(events)
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let text = fs::read_to_string(events).unwrap_or_default();
        let pid = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| e["event"] == "command_started")
            .and_then(|e| e["pid"].as_i64());
        if let Some(pid) = pid
            && env.path("ready").exists()
        {
            return (child, pid as i32);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_timeout(child: &mut std::process::Child, secs: u64) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "rewind did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(pid: i32, sig: i32) {
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill {pid} {sig}");
}

#[test]
fn sigterm_to_rewind_reaches_the_command_and_the_after_snapshot_is_taken() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    let (result, events) = (
        env.tmp.path().join("r.json"),
        env.tmp.path().join("e.jsonl"),
    );
    let (mut child, _) = spawn_run(
        &env,
        &result,
        &events,
        "echo changed > a.txt; touch ready; exec sleep 30",
    );
    kill(child.id() as i32, libc::SIGTERM);
    let status = wait_timeout(&mut child, 20);
    assert_eq!(status.code(), Some(128 + 15));
    let v: Value = serde_json::from_str(&fs::read_to_string(&result).unwrap()).unwrap();
    assert_valid(&v);
    assert_eq!(v["signal"], 15);
    assert_eq!(v["signal_name"], "SIGTERM");
    assert_eq!(v["exit_code"], Value::Null);
    assert_eq!(v["after_label"], "after_failure");
    assert_eq!(
        env.ok(&["cat", v["after"].as_str().unwrap(), "a.txt"]),
        "changed\n"
    );

    // SIGINT to the command itself (as Ctrl-C delivers it): the same, with 130.
    fs::remove_file(env.path("ready")).unwrap();
    fs::remove_file(&events).unwrap();
    let (mut child, pid) = spawn_run(
        &env,
        &result,
        &events,
        "echo again > a.txt; touch ready; exec sleep 30",
    );
    kill(pid, libc::SIGINT);
    let status = wait_timeout(&mut child, 20);
    assert_eq!(status.code(), Some(130));
    let v: Value = serde_json::from_str(&fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(v["signal_name"], "SIGINT");
    assert_eq!(
        env.ok(&["cat", v["after"].as_str().unwrap(), "a.txt"]),
        "again\n"
    );
}

#[test]
fn a_second_signal_kills_the_commands_group_and_the_run_is_recorded_as_interrupted() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    let (result, events) = (
        env.tmp.path().join("r.json"),
        env.tmp.path().join("e.jsonl"),
    );
    // The command ignores both signals, so only the second one to rewind ends anything.
    let (mut child, pid) = spawn_run(
        &env,
        &result,
        &events,
        "trap '' INT TERM; echo x > a.txt; touch ready; exec sleep 30",
    );
    kill(child.id() as i32, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "one signal must not stop rewind"
    );
    kill(child.id() as i32, libc::SIGINT);
    let status = wait_timeout(&mut child, 20);
    // The command's group was killed; rewind reports that as the command's end.
    assert_eq!(status.code(), Some(128 + libc::SIGKILL));
    // SAFETY: signal 0 only checks whether the process exists.
    assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the command survived");
    let v: Value = serde_json::from_str(&fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(v["signal_name"], "SIGKILL");
    let ops: Value = serde_json::from_str(&env.ok(&["op", "log", "--json"])).unwrap();
    assert_eq!(ops[0]["kind"], "run (interrupted)", "{ops}");
    // The store is intact, the run undoable.
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"a\n");
    env.ok(&["snapshot"]);
    env.ok(&["status"]);
}

/// The after snapshot of `run` trusts the stat cache in directories where inotify saw nothing
/// (`scan::watch`). Whatever the command does, that snapshot must equal a full one: after each
/// run, `status` (a full walk) finds nothing, and the run's own diff lists the change.
#[test]
fn the_watched_after_snapshot_misses_no_change() {
    let env = Env::new();
    for d in 1..=8 {
        for f in ["a.txt", "b.txt", "c.sh"] {
            env.write(&format!("d{d}/{f}"), format!("{d} {f} aaaa\n").as_bytes());
        }
        env.write(
            &format!("d{d}/sub/deep.txt"),
            format!("deep {d}\n").as_bytes(),
        );
    }
    env.write("d8/x.log", b"a log\n");
    std::os::unix::fs::symlink("a.txt", env.path("d1/link")).unwrap();
    // A file with two names in two directories.
    fs::hard_link(env.path("d4/a.txt"), env.path("d5/h2.txt")).unwrap();
    env.ok(&["snapshot", "-q"]);
    // Let the files' timestamps age past the racy window, so their cache entries are trusted.
    std::thread::sleep(Duration::from_millis(1100));
    env.ok(&["snapshot", "-q"]);

    let cases: &[(&str, &[&str])] = &[
        ("echo more >> d1/a.txt", &["d1/a.txt"]),
        // Same size, mtime put back: only the event says it changed.
        (
            "t=$(stat -c %Y d1/b.txt); printf '1 b.txt AAAA\\n' > d1/b.txt; touch -d @$t d1/b.txt",
            &["d1/b.txt"],
        ),
        ("chmod +x d2/c.sh", &["d2/c.sh"]),
        // Directories swapped: each path now holds the other's unchanged files.
        (
            "mv d2 tmp && mv d3 d2 && mv tmp d3",
            &["d2/a.txt", "d3/a.txt"],
        ),
        // A write through the other name of a hard-linked file.
        ("echo via-link >> d5/h2.txt", &["d4/a.txt", "d5/h2.txt"]),
        (
            "rm -rf d6 && mkdir -p d7/new && echo n > d7/new/f",
            &["d6/a.txt", "d7/new/f"],
        ),
        ("rm d1/link && ln -s b.txt d1/link", &["d1/link"]),
        (
            "echo '*.log' > d8/.gitignore",
            &["d8/.gitignore", "d8/x.log"],
        ),
        ("echo deeper >> d7/sub/deep.txt", &["d7/sub/deep.txt"]),
        ("true", &[]),
    ];
    for (script, expect) in cases {
        let out = env
            .cmd()
            .args(["run", "--json", "--", "sh", "-c", script])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let paths: Vec<&str> = v["diff"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        for p in *expect {
            assert!(paths.contains(p), "{script}: {p} not in {paths:?}");
        }
        let status: Value = serde_json::from_str(&env.ok(&["status", "--json"])).unwrap();
        assert_eq!(
            status["clean"], true,
            "{script}: the after snapshot missed changes: {status}"
        );
        std::thread::sleep(Duration::from_millis(1100));
        env.ok(&["snapshot", "-q"]);
    }
}

/// A path the after snapshot passes over is in `skipped` with its `warn` flag, and the result
/// still matches the shipped schema (the hand-written schema had no `warn` and refused it).
#[test]
fn a_run_that_passes_over_a_fifo_matches_the_schema() {
    let env = Env::new();
    seed(&env);
    let (code, v) = run(&env, &[], &["mkfifo", "pipe"]);
    assert_eq!(code, 0);
    assert_eq!(
        v["skipped"],
        json!([{"path": "pipe", "path_bytes": null, "reason": "special",
                "detail": "fifo, socket or device", "warn": true}])
    );
}

/// The generated schema is as strict as the hand-written one was: a real result passes, and
/// each of these breaks it (an unknown key, a missing one, a value outside an enum, a label
/// that disagrees with `success`, a short id, a patch both inline and stored).
#[test]
fn the_schema_refuses_what_rewind_never_writes() {
    let env = Env::new();
    seed(&env);
    let (_, v) = run(&env, &["--capture-patch"], &["sh", "-c", "echo x >> a.txt"]);
    let val = validator();
    assert!(val.is_valid(&v), "a real result is valid");
    type Break = fn(&mut Value);
    let breaks: [(&str, Break); 9] = [
        ("unknown key", |v| v["surprise"] = json!(1)),
        ("missing key", |v| {
            v.as_object_mut().unwrap().remove("retention");
        }),
        ("unknown backend", |v| v["backend"] = json!("magic")),
        ("unknown file status", |v| {
            v["diff"]["files"][0]["status"] = json!("mode")
        }),
        ("unknown key in a file", |v| {
            v["diff"]["files"][0]["x"] = json!(1)
        }),
        ("label against success", |v| {
            v["after_label"] = json!("after_failure")
        }),
        ("short id", |v| v["before"] = json!("abc")),
        ("patch and patch_ref", |v| v["patch_ref"] = json!("patch/x")),
        ("version 2", |v| v["version"] = json!(2)),
    ];
    for (what, f) in breaks {
        let mut b = v.clone();
        f(&mut b);
        assert!(!val.is_valid(&b), "{what}: accepted {b}");
    }
}
