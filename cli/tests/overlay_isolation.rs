//! An overlay shows its base snapshot, always: workspace edits made after `overlay create`
//! never show inside nor in the overlay's diff, two overlays of one base never see each
//! other whatever is accepted or undone, and an undone accept can be accepted again. Both
//! backends (the namespace backend runs unprivileged, as everywhere in tests/overlay.rs).

use crate::common;

use std::fs;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Env, list_disk};
use serde_json::Value;

fn create(env: &Env, backend: &str, name: &str) -> String {
    env.ok(&["overlay", "create", "--backend", backend, "--name", name])
        .trim()
        .to_string()
}

fn json(env: &Env, args: &[&str]) -> Value {
    serde_json::from_str(&env.ok(args)).expect("json")
}

fn pending_paths(env: &Env, id: &str) -> Vec<String> {
    let d = json(env, &["overlay", "diff", id, "--json"]);
    let mut v: Vec<String> = d["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn seed(env: &Env) {
    env.write("mod.txt", b"base\n1\n2\n3\n");
    env.write("gone.txt", b"deleted by the user\n");
    env.write("old/name.txt", b"renamed by the user\n");
    env.write("run.sh", b"#!/bin/sh\n");
    env.write("LICENSE", b"license\n");
    env.write("src/lib.txt", b"one\ntwo\nthree\n");
    env.ok(&["snapshot", "-q"]);
}

/// What the user does in the workspace after the overlay was created.
const USER_EDITS: &str = "set -e
sed -i s/base/user/ mod.txt
rm gone.txt
echo new > new.txt
mkdir -p newdir/deep && echo x > newdir/deep/f
mv old renamed
chmod +x run.sh
echo 'user line' >> LICENSE
";

/// What the command inside the overlay sees of the paths the user changed.
const LOOK: &str = "cat mod.txt gone.txt old/name.txt; \
    test -e new.txt && echo new-visible; test -e newdir && echo newdir-visible; \
    test -e renamed && echo renamed-visible; test -x run.sh && echo run-executable; cat LICENSE";

const BASE_VIEW: &str = "base\n1\n2\n3\ndeleted by the user\nrenamed by the user\nlicense\n";

#[test]
fn workspace_edits_after_create_stay_out_of_the_overlay() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let id = create(&env, backend, "agent");
        common_sh(&env.ws, USER_EDITS);
        let seen = env.ok(&["overlay", "run", &id, "--", "sh", "-c", LOOK]);
        assert_eq!(seen, BASE_VIEW, "{backend}: the overlay shows its base");
        assert!(
            pending_paths(&env, &id).is_empty(),
            "{backend}: the user's edits are not the overlay's"
        );
        // The command edits a file the user also changed, and one the user left alone.
        sh_in(&env, &id, "echo agent >> mod.txt; echo four >> src/lib.txt");
        assert_eq!(
            pending_paths(&env, &id),
            vec!["mod.txt", "src/lib.txt"],
            "{backend}"
        );
        let patch = env.ok(&["overlay", "diff", &id, "--patch"]);
        assert!(patch.contains("+agent"), "{backend}: {patch}");
        assert!(!patch.contains("user"), "{backend}: {patch}");
        // Accepting merges the agent's line after the user's; LICENSE is the user's alone.
        env.ok(&["overlay", "accept", &id]);
        assert_eq!(
            fs::read(env.path("mod.txt")).unwrap(),
            b"user\n1\n2\n3\nagent\n"
        );
        assert_eq!(
            fs::read(env.path("LICENSE")).unwrap(),
            b"license\nuser line\n"
        );
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\ntwo\nthree\nfour\n"
        );
        assert!(env.path("new.txt").exists() && !env.path("gone.txt").exists());
    }
}

#[test]
fn two_overlays_of_one_base_never_see_each_other() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let a = create(&env, backend, "A");
        let b = create(&env, backend, "B");
        env.ok(&[
            "overlay",
            "run",
            &a,
            "--",
            "sed",
            "-i",
            "2s/$/ [A]/",
            "src/lib.txt",
        ]);
        env.ok(&["overlay", "accept", &a]);
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\ntwo [A]\nthree\n"
        );
        sh_in(&env, &b, "echo '// [B]' >> src/lib.txt");
        let patch = env.ok(&["overlay", "diff", &b, "--patch"]);
        assert!(patch.contains("+// [B]"), "{backend}: {patch}");
        assert!(
            !patch.contains("[A]"),
            "{backend}: A's line is not B's change: {patch}"
        );
        env.ok(&["undo"]);
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\ntwo\nthree\n"
        );
        env.ok(&["overlay", "accept", &b]);
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\ntwo\nthree\n// [B]\n",
            "{backend}: A's undone change does not come back with B's"
        );
    }
}

#[test]
fn an_undone_accept_can_be_accepted_again() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let id = create(&env, backend, "again");
        sh_in(&env, &id, "echo agent > mod.txt; rm gone.txt");
        env.ok(&["overlay", "accept", &id]);
        assert!(pending_paths(&env, &id).is_empty());
        env.ok(&["undo"]);
        assert_eq!(fs::read(env.path("mod.txt")).unwrap(), b"base\n1\n2\n3\n");
        let listed = json(&env, &["overlay", "list", "--json"]);
        assert_eq!(listed[0]["pending"], 2, "{backend}: {listed}");
        assert_eq!(pending_paths(&env, &id), vec!["gone.txt", "mod.txt"]);
        env.ok(&["overlay", "accept", &id]);
        assert_eq!(fs::read(env.path("mod.txt")).unwrap(), b"agent\n");
        assert!(!env.path("gone.txt").exists());
        // And a redo of the undo settles them again.
        env.ok(&["undo"]);
        assert_eq!(pending_paths(&env, &id), vec!["gone.txt", "mod.txt"]);
        env.ok(&["redo"]);
        assert_eq!(fs::read(env.path("mod.txt")).unwrap(), b"agent\n");
        assert!(pending_paths(&env, &id).is_empty(), "{backend}");
    }
}

/// A workspace edit made while a command runs in a namespace overlay, to a path the command
/// also writes, is a conflict at accept: the command may have read the workspace's version,
/// so its result is never folded silently into the overlay's change. The copy backend's
/// command never sees the workspace: the same edit is an ordinary three-way merge there.
#[test]
fn a_workspace_edit_during_a_run_to_a_path_the_command_touched_conflicts() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let id = create(&env, backend, "race");
        let (mut child, gate) = run_gated(&env, &id, "", "echo four >> src/lib.txt");
        env.write("src/lib.txt", b"one\nTWO\nthree\n");
        fs::write(&gate, b"").unwrap();
        assert!(child.wait().unwrap().success());
        let out = env
            .cmd()
            .args(["overlay", "accept", &id, "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if backend == "copy" {
            assert_eq!(out.status.code(), Some(0), "{v}");
            assert_eq!(
                fs::read(env.path("src/lib.txt")).unwrap(),
                b"one\nTWO\nthree\nfour\n"
            );
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{backend}: {v}");
        assert_eq!(v["conflicts"][0]["path"], "src/lib.txt", "{v}");
        assert!(
            v["conflicts"][0]["why"].as_str().unwrap().contains("while"),
            "{v}"
        );
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\nTWO\nthree\n",
            "the user's edit is kept, nothing folded in"
        );
        // Taken on purpose, the overlay's version wins.
        env.ok(&["overlay", "accept", &id, "--theirs"]);
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\nTWO\nthree\nfour\n"
        );
    }
}

/// `overlay list` never waits for a running command; accept waits with a message and gives
/// up after --lock-timeout.
#[test]
fn a_running_command_blocks_neither_list_nor_accept_past_the_lock_timeout() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let id = create(&env, backend, "busy");
        let (mut child, gate) = run_gated(&env, &id, "echo agent > mod.txt;", ":");
        let mut list = env.cmd();
        list.args(["overlay", "list", "--json"]);
        let listed: Value = serde_json::from_slice(&output_within(list, 120).stdout).unwrap();
        assert_eq!(listed[0]["running"], true, "{backend}: {listed}");
        let out = env
            .cmd()
            .args(["--lock-timeout", "0.3", "overlay", "accept", &id])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{backend}: {err}");
        assert!(
            err.contains("waiting for the command running in overlay"),
            "{err}"
        );
        assert_eq!(fs::read(env.path("mod.txt")).unwrap(), b"base\n1\n2\n3\n");
        fs::write(&gate, b"").unwrap();
        assert!(child.wait().unwrap().success());
        env.ok(&["overlay", "accept", &id]);
        assert_eq!(fs::read(env.path("mod.txt")).unwrap(), b"agent\n");
    }
}

#[test]
fn run_isolate_revert_rejects_the_forbidden_paths_inside_the_overlay() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let before = list_disk(&env.ws);
        let run = |on_violation: &str| -> (i32, Value) {
            let out = env
                .cmd()
                .args([
                    "--json",
                    "run",
                    "--isolate",
                    "--backend",
                    backend,
                    "--forbid",
                    "src/**",
                    "--on-violation",
                    on_violation,
                    "--",
                    "sh",
                    "-c",
                    "echo core >> src/lib.txt; echo ok > mod.txt",
                ])
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).expect("json");
            (out.status.code().unwrap(), v)
        };
        let (code, v) = run("fail");
        assert_ne!(code, 0, "{v}");
        assert_eq!(v["overlay"]["accepted"], false, "{backend}: {v}");
        assert_eq!(v["overlay"]["kept"], true, "{v}");
        assert_eq!(
            list_disk(&env.ws),
            before,
            "{backend}: fail accepts nothing"
        );
        let kept = v["overlay"]["id"].as_u64().unwrap().to_string();
        env.ok(&["overlay", "drop", &kept]);

        let (code, v) = run("revert");
        assert_eq!(code, 0, "{backend}: {v}");
        assert_eq!(v["reverted"], serde_json::json!(["src/lib.txt"]), "{v}");
        assert_eq!(v["overlay"]["accepted"], true, "{backend}: {v}");
        assert_eq!(fs::read(env.path("mod.txt")).unwrap(), b"ok\n");
        assert_eq!(
            fs::read(env.path("src/lib.txt")).unwrap(),
            b"one\ntwo\nthree\n"
        );
        let listed = json(&env, &["overlay", "list", "--json"]);
        assert!(
            listed.as_array().unwrap().iter().all(|o| o["pending"] == 0),
            "{backend}: the overlay no longer holds the forbidden change: {listed}"
        );
    }
}

/// Runs `sh -c script` inside overlay `id`, asserting success.
fn sh_in(env: &Env, id: &str, script: &str) -> String {
    env.ok(&["overlay", "run", id, "--", "sh", "-c", script])
}

fn common_sh(dir: &std::path::Path, script: &str) {
    let st = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .status()
        .expect("sh");
    assert!(st.success());
}

/// Runs `cmd`, failing (not hanging) if it has not ended after `secs`: a generous bound for
/// a command that must not wait for another.
fn output_within(mut cmd: Command, secs: u64) -> std::process::Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..secs * 100 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    panic!("{cmd:?} still waiting after {secs}s");
}

/// Starts `overlay run ID` of a script that runs `before`, says it started, waits for the
/// returned gate file to exist, then runs `after`; returns once the script has started.
fn run_gated(
    env: &Env,
    id: &str,
    before: &str,
    after: &str,
) -> (std::process::Child, std::path::PathBuf) {
    let gate = env.tmp.path().join("gate");
    let started = env.tmp.path().join("started");
    let script = format!(
        "{before} touch {s}; while [ ! -e {g} ]; do sleep 0.02; done; {after}",
        s = started.display(),
        g = gate.display()
    );
    let child = env
        .cmd()
        .args(["overlay", "run", id, "--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&started);
    (child, gate)
}

/// Waits for a file a command creates (no timing assumption: it only polls).
fn wait_for(p: &std::path::Path) {
    for _ in 0..6000 {
        if p.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut s = String::new();
    let _ = fs::File::open(p).and_then(|mut f| f.read_to_string(&mut s));
    panic!("{} never appeared", p.display());
}

mod property {
    use super::*;
    use proptest::prelude::*;

    const FILES: [&str; 5] = ["a", "b", "d/c", "d/e", "d/sub/f"];

    /// One shell step on the fixed set of paths; every step succeeds whatever exists.
    fn step(op: u8, i: usize, j: usize, v: u8) -> String {
        let (f, g) = (FILES[i], FILES[j]);
        match op % 6 {
            0 => format!("mkdir -p \"$(dirname {f})\" && printf 'v{v}\\n' > {f}"),
            1 => format!("[ -f {f} ] && echo more{v} >> {f} || true"),
            2 => format!("rm -f {f}"),
            3 => format!("[ -f {f} ] && chmod +x {f} || true"),
            4 if i == j => ":".to_string(),
            4 => format!("[ -f {f} ] && mkdir -p \"$(dirname {g})\" && mv {f} {g} || true"),
            _ => "rm -rf d/sub".to_string(),
        }
    }

    fn script(ops: &[(u8, usize, usize, u8)]) -> String {
        let mut s = String::from("set -e\n");
        for &(op, i, j, v) in ops {
            s.push_str(&step(op, i, j, v));
            s.push('\n');
        }
        s
    }

    /// Every file with its mode and content, as seen from `sh` in the current directory.
    const VIEW: &str = "find . \\( -type f -o -type l \\) | LC_ALL=C sort | while read -r f; do \
        printf '%s %s\\n' \"$f\" \"$(stat -c %a \"$f\")\"; cat \"$f\"; done";

    fn changed(before: &common::Listing, after: &common::Listing) -> Vec<String> {
        let files = |l: &common::Listing| -> common::Listing {
            l.iter()
                .filter(|(_, v)| v.0 != 'd')
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let (b, a) = (files(before), files(after));
        let mut out: Vec<String> = b
            .keys()
            .chain(a.keys())
            .filter(|k| b.get(*k) != a.get(*k))
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn op() -> impl Strategy<Value = (u8, usize, usize, u8)> {
        (0u8..6, 0..FILES.len(), 0..FILES.len(), 0u8..4)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Random workspace edits after create and random edits in the overlay: the overlay
        /// shows and diffs exactly what the same overlay script gives on a copy of the base.
        #[test]
        fn the_overlay_is_its_base_plus_its_own_script(
            ws_ops in proptest::collection::vec(op(), 0..8),
            ov_ops in proptest::collection::vec(op(), 1..8),
        ) {
            for backend in crate::common::backends() {
                let env = Env::new();
                env.write("a", b"a\n");
                env.write("d/c", b"c\n");
                env.write("d/sub/f", b"f\n");
                env.ok(&["snapshot", "-q"]);
                let base = list_disk(&env.ws);
                let expected = env.tmp.path().join("expected");
                common_sh(env.tmp.path(), &format!("cp -a {} {}", env.ws.display(), expected.display()));
                let id = create(&env, backend, "prop");
                common_sh(&env.ws, &script(&ws_ops));
                let ov_script = script(&ov_ops);
                env.ok(&["overlay", "run", &id, "--", "sh", "-c", &ov_script]);
                common_sh(&expected, &ov_script);

                let seen = env.ok(&["overlay", "run", &id, "--", "sh", "-c", VIEW]);
                let out = Command::new("sh").args(["-c", VIEW]).current_dir(&expected).output().unwrap();
                prop_assert_eq!(&seen, &String::from_utf8_lossy(&out.stdout).into_owned(), "{} view", backend);

                let d = json(&env, &["overlay", "diff", &id, "--json"]);
                let mut got: Vec<String> = d["files"].as_array().unwrap().iter()
                    .flat_map(|f| [f["path"].as_str(), f["old_path"].as_str()])
                    .flatten()
                    .map(str::to_string)
                    .collect();
                got.sort();
                got.dedup();
                prop_assert_eq!(got, changed(&base, &list_disk(&expected)), "{} diff", backend);
            }
        }
    }
}

/// One agent session, one overlay: `run --isolate --overlay NAME` creates it the first time
/// and reuses it after; `overlay run ID --json` prints the same result as `run`.
#[test]
fn sessions_reuse_a_named_overlay_and_overlay_run_reports_like_run() {
    let schema: Value = serde_json::from_str(
        &fs::read_to_string(concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
            "/schemas/run-result.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        let run = |args: &[&str]| -> Value {
            let mut all = vec!["--json", "run", "--isolate", "--backend", backend];
            all.extend_from_slice(args);
            let v: Value = serde_json::from_str(&env.ok(&all)).unwrap();
            let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{errors:?}\n{v:#}");
            v
        };
        let first = run(&[
            "--overlay",
            "s1",
            "--accept",
            "never",
            "--",
            "sh",
            "-c",
            "echo 1 > one",
        ]);
        let second = run(&[
            "--overlay",
            "s1",
            "--accept",
            "never",
            "--",
            "sh",
            "-c",
            "cat one > two",
        ]);
        assert_eq!(first["overlay"]["id"], second["overlay"]["id"]);
        assert_eq!(second["diff"]["files_changed"], 1, "{second}");
        assert_eq!(second["before"], first["after"], "the session goes on");
        // --keep: accepted, and the overlay stays for the next command.
        let third = run(&["--overlay", "s1", "--keep", "--", "true"]);
        assert_eq!(third["overlay"]["accepted"], true);
        assert_eq!(third["overlay"]["kept"], true);
        assert_eq!(fs::read(env.path("two")).unwrap(), b"1\n");
        let id = third["overlay"]["id"].as_u64().unwrap().to_string();
        let v = json(
            &env,
            &[
                "--json",
                "overlay",
                "run",
                &id,
                "--",
                "sh",
                "-c",
                "echo 3 > three",
            ],
        );
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}\n{v:#}");
        assert_eq!(v["backend"], format!("overlay-{backend}"));
        assert_eq!(v["diff"]["files_changed"], 1);
        assert_eq!(v["overlay"]["accepted"], false);
        assert!(!env.path("three").exists());
        // exec is run under another name, for file tools.
        assert_eq!(
            env.ok(&["overlay", "exec", &id, "--", "cat", "three"]),
            "3\n"
        );
    }
}
