//! Overlays on real directories, both backends: isolation, diff, accept (with merges,
//! conflicts and partial accepts), reject, undo, the auto fallback and `run --isolate`.

use crate::common;

use std::fs;
use std::process::Command;

use common::{Env, list_disk};
use serde_json::Value;

/// A script touching every kind of change: edit, delete, rename, chmod, mkdir, rm -rf of a
/// directory, a new symlink, a file turned into a directory, an ignored build output.
const SCRIPT: &str = "set -e
sed -i s/two/TWO/ src/lib.txt
rm gone.txt
mv src/old.txt src/renamed.txt
chmod +x tool.sh
mkdir -p brand/new && echo fresh > brand/new/file.txt
rm -rf olddir
ln -s src/lib.txt link
rm swap && mkdir swap && echo inside > swap/x
mkdir -p target && echo built > target/out.o
";

fn seed(env: &Env) {
    env.write(".gitignore", b"target/\n");
    env.write("src/lib.txt", b"one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
    env.write("src/old.txt", b"to be renamed\n");
    env.write("gone.txt", b"to be deleted\n");
    env.write("tool.sh", b"#!/bin/sh\necho hi\n");
    env.write("olddir/a/b.txt", b"deep\n");
    env.write("olddir/c.txt", b"c\n");
    env.write("swap", b"a file that becomes a directory\n");
    env.write("keep.txt", b"untouched\n");
}

fn create(env: &Env, backend: &str) -> String {
    env.ok(&["overlay", "create", "--backend", backend])
        .trim()
        .to_string()
}

fn sh(dir: &std::path::Path, script: &str) {
    let st = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .status()
        .expect("sh");
    assert!(st.success(), "script failed in {}", dir.display());
}

fn json(env: &Env, args: &[&str]) -> Value {
    serde_json::from_str(&env.ok(args)).expect("json")
}

/// Without the ignored build output, which an accept leaves pending.
fn without_target(mut l: common::Listing) -> common::Listing {
    l.retain(|k, _| !k.starts_with(b"target"));
    l
}

#[test]
fn changes_stay_in_the_overlay_until_accepted_and_then_match_a_direct_run() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        env.ok(&["snapshot", "-q"]);
        let before = list_disk(&env.ws);
        // The same script run directly on a copy: what the workspace must become.
        let expected_dir = env.tmp.path().join("expected");
        sh(
            env.tmp.path(),
            &format!("cp -a {} {}", env.ws.display(), expected_dir.display()),
        );
        sh(&expected_dir, SCRIPT);

        let id = create(&env, backend);
        env.ok(&["overlay", "run", &id, "--", "sh", "-c", SCRIPT]);
        assert_eq!(
            list_disk(&env.ws),
            before,
            "{backend}: the workspace is untouched"
        );

        let d = json(&env, &["overlay", "diff", &id, "--json"]);
        let mut got: Vec<(String, String)> = d["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    f["status"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        got.sort();
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        for p in [
            "brand/new/file.txt",
            "gone.txt",
            "link",
            "olddir/a/b.txt",
            "olddir/c.txt",
            "src/lib.txt",
            "src/renamed.txt",
            "swap",
            "swap/x",
            "tool.sh",
        ] {
            assert!(paths.contains(&p), "{backend}: {p} missing from {got:?}");
        }
        assert!(!paths.iter().any(|p| p.starts_with("target")), "{got:?}");
        // The namespace backend sees every write, ignored paths included (reported apart);
        // the copy backend's snapshot of its directory follows the ignore rules, as any
        // snapshot does.
        let ignored = if backend == "namespace" {
            serde_json::json!(["target/out.o"])
        } else {
            serde_json::json!([])
        };
        assert_eq!(d["ignored"], ignored, "{backend}");

        env.ok(&["overlay", "accept", &id]);
        assert_eq!(
            without_target(list_disk(&env.ws)),
            without_target(list_disk(&expected_dir)),
            "{backend}: accepted workspace equals the direct run"
        );
        assert!(!env.path("target").exists(), "ignored output not accepted");
        // Only the ignored change stays pending; accepting it on request.
        let d = json(&env, &["overlay", "diff", &id, "--json"]);
        assert_eq!(d["files"].as_array().unwrap().len(), 0, "{d}");
        env.ok(&["overlay", "accept", &id, "--include-ignored"]);
        if backend == "namespace" {
            assert_eq!(list_disk(&env.ws), list_disk(&expected_dir), "{backend}");
        }

        // Undo takes the accept back; copied build outputs stay (no snapshot holds them).
        env.ok(&["undo"]);
        assert_eq!(env.path("target/out.o").exists(), backend == "namespace");
        assert_eq!(
            without_target(list_disk(&env.ws)),
            without_target(before.clone()),
            "{backend}: undo restores the workspace"
        );
        env.ok(&["overlay", "drop", &id]);
        let listed = json(&env, &["overlay", "list", "--json"]);
        assert_eq!(listed.as_array().unwrap().len(), 0);
    }
}

/// The reference counts stay exact through an overlay's life (its states, accept, drop), with
/// each backend: `verify --full` counts every holder again and compares.
#[test]
fn reference_counts_stay_exact_through_an_overlays_life() {
    for backend in crate::common::backends() {
        let env = Env::new();
        seed(&env);
        env.ok(&["snapshot", "-q"]);
        let id = create(&env, backend);
        env.ok(&["overlay", "run", &id, "--", "sh", "-c", SCRIPT]);
        json(&env, &["overlay", "diff", &id, "--json"]);
        env.ok(&["verify", "--full", "-q"]);
        env.ok(&["overlay", "accept", &id]);
        env.ok(&["verify", "--full", "-q"]);
        env.ok(&["overlay", "drop", &id]);
        env.ok(&["verify", "--full", "-q"]);
        env.ok(&["forget", "--max-size", "1"]);
        env.ok(&["verify", "--full", "-q"]);
    }
}

#[test]
fn accept_merges_onto_a_workspace_that_moved_on_and_leaves_conflicts_untouched() {
    for backend in crate::common::backends() {
        let env = Env::new();
        let lines: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        env.write("merge.txt", lines.as_bytes());
        env.write("clash.txt", b"base\n");
        env.write("other.txt", b"base\n");
        env.ok(&["snapshot", "-q"]);
        let id = create(&env, backend);
        env.ok(&[
            "overlay",
            "run",
            &id,
            "--",
            "sh",
            "-c",
            "sed -i 's/line 2$/overlay 2/' merge.txt; echo overlay > clash.txt; echo overlay > other.txt",
        ]);
        // Meanwhile, in the workspace: another line of merge.txt, and clash.txt.
        let ws_merge = lines.replace("line 11\n", "workspace 11\n");
        env.write("merge.txt", ws_merge.as_bytes());
        env.write("clash.txt", b"workspace\n");

        let out = env
            .cmd()
            .args(["overlay", "accept", &id, "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "a conflict exits 1");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["conflicts"][0]["path"], "clash.txt", "{v}");
        assert_eq!(
            fs::read_to_string(env.path("merge.txt")).unwrap(),
            ws_merge.replace("line 2\n", "overlay 2\n"),
            "{backend}: both sides' edits kept"
        );
        assert_eq!(fs::read(env.path("clash.txt")).unwrap(), b"workspace\n");
        assert_eq!(fs::read(env.path("other.txt")).unwrap(), b"overlay\n");
        // The conflict stays pending; --theirs settles it.
        let d = json(&env, &["overlay", "diff", &id, "--json"]);
        let pending: Vec<&str> = d["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(pending, vec!["clash.txt"], "{backend}");
        env.ok(&["overlay", "accept", &id, "--theirs"]);
        assert_eq!(fs::read(env.path("clash.txt")).unwrap(), b"overlay\n");
    }
}

#[test]
fn partial_accept_reject_and_run_again() {
    for backend in crate::common::backends() {
        let env = Env::new();
        env.write("a.txt", b"a\n");
        env.write("b.txt", b"b\n");
        env.write("dir/c.txt", b"c\n");
        env.ok(&["snapshot", "-q"]);
        let id = create(&env, backend);
        env.ok(&[
            "overlay",
            "run",
            &id,
            "--",
            "sh",
            "-c",
            "echo A > a.txt; echo B > b.txt; echo C > dir/c.txt",
        ]);
        env.ok(&["overlay", "accept", &id, "--", "a.txt"]);
        assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"A\n");
        assert_eq!(fs::read(env.path("b.txt")).unwrap(), b"b\n");
        let names = env.ok(&["overlay", "diff", &id, "--name-status"]);
        assert_eq!(names, "M\tb.txt\nM\tdir/c.txt\n", "{backend}");

        // Reject b.txt: the overlay sees the base again, even after the workspace changed it.
        env.write("b.txt", b"workspace b\n");
        env.ok(&["overlay", "reject", &id, "--", "b.txt"]);
        let seen = env.ok(&["overlay", "run", &id, "--", "cat", "b.txt"]);
        assert_eq!(
            seen, "b\n",
            "{backend}: the overlay shows the base after reject"
        );
        let names = env.ok(&["overlay", "diff", &id, "--name-status"]);
        assert_eq!(names, "M\tdir/c.txt\n", "{backend}");
        // A later command in the overlay works on top of the rejected state.
        env.ok(&[
            "overlay",
            "run",
            &id,
            "--",
            "sh",
            "-c",
            "echo again >> b.txt",
        ]);
        let names = env.ok(&["overlay", "diff", &id, "--name-status"]);
        assert_eq!(names, "M\tb.txt\nM\tdir/c.txt\n", "{backend}");
        // Commands start in the same relative directory.
        let out = env
            .cmd()
            .current_dir(env.path("dir"))
            .args(["overlay", "run", &id, "--", "cat", "c.txt"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "C\n", "{backend}");
        // The command's exit code comes through.
        let (code, _) = env.fails(&["overlay", "run", &id, "--", "sh", "-c", "exit 7"]);
        assert_eq!(code, 7);
    }
}

#[test]
fn auto_falls_back_to_copy_when_namespaces_are_refused() {
    let env = Env::new();
    env.write("f", b"x\n");
    env.ok(&["snapshot", "-q"]);
    let out = env
        .cmd()
        .env("REWIND_OVERLAY_PROBE", "fail")
        .args(["overlay", "create", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backend"], "copy", "{v}");
    assert!(
        v["fallback"]
            .as_str()
            .unwrap()
            .contains("REWIND_OVERLAY_PROBE")
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("using the copy backend"),
        "a one-line notice"
    );
    let out = env
        .cmd()
        .env("REWIND_OVERLAY_PROBE", "fail")
        .args(["overlay", "create", "--backend", "namespace"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--backend copy"));
    // Without the override a machine that allows user namespaces gets the namespace backend.
    if common::user_namespaces() {
        let v = json(&env, &["overlay", "create", "--json"]);
        assert_eq!(v["backend"], "namespace", "{v}");
    }
}

#[test]
fn run_isolate_reports_like_run_and_accepts_on_success() {
    let schema_text = fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        "/schemas/run-result.schema.json"
    ))
    .unwrap();
    let schema: Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for backend in crate::common::backends() {
        let env = Env::new();
        env.write("f.txt", b"one\n");
        env.ok(&["snapshot", "-q"]);
        let run = |accept: &str, script: &str| -> (i32, Value) {
            let out = env
                .cmd()
                .args([
                    "--json",
                    "run",
                    "--isolate",
                    "--backend",
                    backend,
                    "--accept",
                    accept,
                    "--capture-patch",
                    "--",
                    "sh",
                    "-c",
                    script,
                ])
                .output()
                .unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).expect("result json");
            let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{errors:?}\n{v:#}");
            (out.status.code().unwrap(), v)
        };
        // A failing command: nothing accepted, the overlay kept with its changes.
        let (code, v) = run("on-success", "echo two >> f.txt; exit 3");
        assert_eq!(code, 3);
        assert_eq!(v["backend"], format!("overlay-{backend}"));
        assert_eq!(v["diff"]["files_changed"], 1);
        assert_eq!(v["overlay"]["accepted"], false);
        assert_eq!(v["overlay"]["kept"], true);
        assert!(v["patch"].as_str().unwrap().contains("+two"));
        assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"one\n");
        let kept = v["overlay"]["id"].as_u64().unwrap().to_string();
        let listed = json(&env, &["overlay", "list", "--json"]);
        assert_eq!(listed[0]["pending"], 1, "{listed}");
        env.ok(&["overlay", "drop", &kept]);
        // A succeeding one: accepted and dropped; undo takes it back.
        let (code, v) = run("on-success", "echo three >> f.txt");
        assert_eq!(code, 0);
        assert_eq!(v["overlay"]["accepted"], true, "{v}");
        assert_eq!(v["overlay"]["kept"], false);
        assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"one\nthree\n");
        env.ok(&["undo"]);
        assert_eq!(fs::read(env.path("f.txt")).unwrap(), b"one\n");
        // --accept=never keeps the workspace as it was even on success.
        let (_, v) = run("never", "rm f.txt");
        assert_eq!(v["overlay"]["accepted"], false);
        assert!(env.path("f.txt").exists());
    }
}

#[test]
fn undo_takes_a_reject_back_and_redo_repeats_it() {
    for backend in crate::common::backends() {
        let env = Env::new();
        env.write("a.txt", b"a\n");
        env.write("b.txt", b"b\n");
        env.ok(&["snapshot", "-q"]);
        let id = create(&env, backend);
        env.ok(&[
            "overlay",
            "run",
            &id,
            "--",
            "sh",
            "-c",
            "echo A > a.txt; rm b.txt; echo n > n.txt",
        ]);
        let all = "D\tb.txt\nM\ta.txt\nA\tn.txt\n";
        let sorted = |s: String| {
            let mut l: Vec<String> = s.lines().map(str::to_string).collect();
            l.sort();
            l
        };
        assert_eq!(
            sorted(env.ok(&["overlay", "diff", &id, "--name-status"])),
            sorted(all.to_string())
        );
        env.ok(&["overlay", "reject", &id]);
        assert_eq!(env.ok(&["overlay", "diff", &id, "--name-status"]), "");
        assert_eq!(
            env.ok(&["overlay", "run", &id, "--", "cat", "b.txt"]),
            "b\n"
        );
        let ws_before = list_disk(&env.ws);
        env.ok(&["undo"]);
        assert_eq!(
            sorted(env.ok(&["overlay", "diff", &id, "--name-status"])),
            sorted(all.to_string()),
            "{backend}: the rejected changes are back in the overlay"
        );
        assert_eq!(
            list_disk(&env.ws),
            ws_before,
            "undoing a reject leaves the workspace"
        );
        env.ok(&["redo"]);
        assert_eq!(
            env.ok(&["overlay", "diff", &id, "--name-status"]),
            "",
            "{backend}"
        );
    }
}

/// The namespace backend needs no privilege: run it as an ordinary user (nobody, when the
/// tests run as root).
#[test]
fn namespace_overlays_work_unprivileged() {
    if !common::user_namespaces() {
        return;
    }
    let env = Env::new();
    let root = env.tmp.path();
    let ws = root.join("uws");
    let store = root.join("ustore");
    fs::create_dir(&ws).unwrap();
    fs::create_dir(&store).unwrap();
    fs::write(ws.join("f"), b"base\n").unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        for p in [root, &ws, &ws.join("f"), &store] {
            std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(root, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let run = |args: &[&str]| -> String {
        let out = common::rewind_as_nobody()
            .arg("--store")
            .arg(store.join("s"))
            .arg("-C")
            .arg(&ws)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["snapshot", "-q"]);
    let id = run(&["overlay", "create", "--backend", "namespace"]);
    let id = id.trim();
    let inside = run(&[
        "overlay",
        "run",
        id,
        "--",
        "sh",
        "-c",
        "echo changed > f; cat f",
    ]);
    assert_eq!(inside, "changed\n");
    assert_eq!(fs::read(ws.join("f")).unwrap(), b"base\n", "isolated");
    run(&["overlay", "accept", id]);
    assert_eq!(fs::read(ws.join("f")).unwrap(), b"changed\n");
    // overlayfs leaves a mode-000 directory in its work dir: drop still removes everything.
    run(&["overlay", "drop", id]);
    assert!(!store.join("s/overlays").join(id).exists());
}

#[test]
fn copy_backend_brings_selected_ignored_paths_and_shows_its_path() {
    let env = Env::new();
    env.write(".gitignore", b"node_modules/\n*.log\n");
    env.write("src/main.js", b"require('dep')\n");
    env.write("node_modules/dep/index.js", b"module.exports = 1\n");
    env.write("debug.log", b"noise\n");
    env.ok(&["snapshot", "-q"]);
    let plain = create(&env, "copy");
    let (code, _) = env.fails(&[
        "overlay",
        "run",
        &plain,
        "--",
        "cat",
        "node_modules/dep/index.js",
    ]);
    assert_eq!(code, 1, "ignored paths are not copied by default");
    let out = env.ok(&[
        "overlay",
        "create",
        "--backend",
        "copy",
        "--with-ignored",
        "node_modules",
    ]);
    let with = out.trim();
    let seen = env.ok(&[
        "overlay",
        "run",
        with,
        "--",
        "cat",
        "node_modules/dep/index.js",
    ]);
    assert_eq!(seen, "module.exports = 1\n");
    let dir = env.ok(&["overlay", "path", with]);
    assert!(
        std::path::Path::new(dir.trim())
            .join("src/main.js")
            .is_file(),
        "{dir}"
    );
    assert!(!std::path::Path::new(dir.trim()).join("debug.log").exists());
    // A namespace overlay has no directory of its own to show.
    if common::user_namespaces() {
        let ns = create(&env, "namespace");
        let (code, err) = env.fails(&["overlay", "path", &ns]);
        assert_eq!(code, 2);
        assert!(err.contains("overlay shell"), "{err}");
    }
}
