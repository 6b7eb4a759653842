//! `rewind apply` end to end: the fixture corpus (patches made by real git and GNU diff),
//! atomicity, refusals, three-way merges, reverse, and undo.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

fn apply_stdin(env: &Env, patch: &[u8], args: &[&str]) -> std::process::Output {
    let mut child = env
        .cmd()
        .arg("apply")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), patch).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn every_fixture_applies_to_give_its_after_tree() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("fixtures/patches");
    let mut cases: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 15);
    for case in cases {
        let env = Env::new();
        copy_tree(&case.join("before"), &env.ws);
        let patch = case.join("patch.diff");
        let out = env
            .cmd()
            .args(["apply", patch.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            case.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut want = list_disk(&case.join("after"));
        let mut got = list_disk(&env.ws);
        // Mode bits are compared only where the fixture records them (git patches).
        for l in [&mut want, &mut got] {
            for v in l.values_mut() {
                v.2 = v.2
                    && !case.ends_with("gnu-diff-ruN")
                    && !case.ends_with("gnu-diff-ru-only-in");
            }
        }
        assert_eq!(got, want, "{}", case.display());
        // And undo puts the before tree back.
        env.ok(&["undo"]);
        assert_eq!(
            list_disk(&env.ws),
            list_disk(&case.join("before")),
            "undo of {}",
            case.display()
        );
    }
}

#[test]
fn a_patch_whose_last_file_fails_changes_nothing() {
    let env = Env::new();
    env.write("a.txt", b"one\ntwo\nthree\n");
    env.write("b.txt", b"alpha\nbeta\ngamma\n");
    let patch = b"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\
--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n alpha\n-NOT THERE\n+x\n gamma\n";
    let before = list_disk(&env.ws);
    let out = apply_stdin(&env, patch, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("b.txt") && err.contains("hunk #1"), "{err}");
    assert_eq!(list_disk(&env.ws), before, "the earlier file is untouched");
    let no_temp = list_disk(&env.ws)
        .keys()
        .all(|k| !String::from_utf8_lossy(k).contains(".rewind-tmp"));
    assert!(no_temp);
}

#[test]
fn dangerous_and_malformed_patches_are_refused() {
    let env = Env::new();
    env.write("f", b"x\n");
    let outside = env.tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, env.path("link")).unwrap();
    let cases: [(&[u8], &str); 7] = [
        (
            b"--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-x\n+y\n",
            "absolute",
        ),
        (b"--- a/../evil\n+++ b/../evil\n@@ -0,0 +1 @@\n+x\n", ".."),
        (
            b"--- /dev/null\n+++ b/link/new\n@@ -0,0 +1 @@\n+x\n",
            "symlink",
        ),
        (b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-x\n", "hunk"),
        (b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n+z\n", "hunk"),
        (b"this is not a patch\n", "no patch"),
        (b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n", "hunk"),
    ];
    for (patch, what) in cases {
        let out = apply_stdin(&env, patch, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(!err.is_empty(), "{what}");
        assert_eq!(fs::read(env.path("f")).unwrap(), b"x\n");
        assert_eq!(
            fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing written through the symlink"
        );
    }
    // Creating over a file with other content, or deleting a file that differs: refused
    // unless --force.
    let create = b"--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+other\n";
    let out = apply_stdin(&env, create, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    let delete = b"diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-not x\n";
    let out = apply_stdin(&env, delete, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(env.path("f").exists());
    let out = apply_stdin(&env, create, &["--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read(env.path("f")).unwrap(), b"other\n");
}

#[test]
fn check_reverse_and_json_report_offsets() {
    let env = Env::new();
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    env.write("f", text.as_bytes());
    let patch = b"--- a/f\n+++ b/f\n@@ -10,3 +10,3 @@\n line 10\n-line 11\n+LINE 11\n line 12\n";
    // Shift the content down by two lines: the hunk applies at offset +2.
    env.write("f", format!("new a\nnew b\n{text}").as_bytes());
    let out = apply_stdin(&env, patch, &["--check", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"][0]["hunks"][0]["offset"], 2);
    assert!(
        !String::from_utf8_lossy(&fs::read(env.path("f")).unwrap()).contains("LINE 11"),
        "--check changes nothing"
    );
    let out = apply_stdin(&env, patch, &["--json"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&fs::read(env.path("f")).unwrap()).contains("LINE 11"));
    let out = apply_stdin(&env, patch, &["--reverse"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read(env.path("f")).unwrap(),
        format!("new a\nnew b\n{text}").as_bytes()
    );
}

#[test]
fn three_way_merge_with_the_base_from_the_store() {
    let env = Env::new();
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    env.write("f", base.as_bytes());
    let a = env.ok(&["snapshot", "-q"]).trim().to_string();
    // The patch changes line 6; rewind made it, so its index line names the base blob.
    env.write("f", base.replace("line 6\n", "line six\n").as_bytes());
    let b = env.ok(&["snapshot", "-q"]).trim().to_string();
    let patch = env.cmd().args(["diff", &a, &b]).output().unwrap().stdout;
    // Meanwhile the workspace changed lines 5 and 7, the hunk's context: it cannot apply.
    env.write(
        "f",
        base.replace("line 5\n", "line five\n")
            .replace("line 7\n", "line seven\n")
            .as_bytes(),
    );
    let out = apply_stdin(&env, &patch, &["--fuzz", "0"]);
    assert_eq!(out.status.code(), Some(2), "without --3way the hunk fails");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--3way"));
    // Lines 5 and 7 changed on one side, 6 on the other: adjacent changes conflict, as in git.
    let out = apply_stdin(&env, &patch, &["--3way", "--fuzz", "0"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a conflict exits 1, as revert's"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("conflict"));
    let out = apply_stdin(
        &env,
        &patch,
        &["--3way", "--fuzz", "0", "--conflict", "markers"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "conflicts left as markers exit 1"
    );
    let merged = String::from_utf8_lossy(&fs::read(env.path("f")).unwrap()).into_owned();
    assert!(merged.contains("<<<<<<<") && merged.contains(">>>>>>>"));
    env.ok(&["undo"]);
    // A change far away merges cleanly.
    env.write(
        "f",
        base.replace("line 1\n", "line one\n")
            .replace("line 12\n", "line twelve\n")
            .replace("line 8\n", "line eight\n")
            .as_bytes(),
    );
    let out = apply_stdin(&env, &patch, &["--3way", "--fuzz", "0", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8_lossy(&fs::read(env.path("f")).unwrap()).into_owned();
    assert!(
        got.contains("line one")
            && got.contains("line six")
            && got.contains("line eight")
            && got.contains("line twelve"),
        "{got}"
    );
}

#[test]
fn rewinds_own_patches_round_trip_binary_modes_and_symlinks() {
    let env = Env::new();
    env.write("text", b"a\nb\n");
    env.write("bin", &[0u8, 1, 2, 3]);
    env.write("script", b"#!/bin/sh\n");
    let a = env.ok(&["snapshot", "-q"]).trim().to_string();
    let want_a = list_disk(&env.ws);
    env.write("text", b"a\nB\n");
    env.write("bin", &[0u8, 9, 9, 9, 9]);
    set_exec(&env.path("script"), true);
    make_symlink(&env.ws, b"ln", b"text");
    fs::rename(env.path("text"), env.path("moved")).unwrap();
    let b = env.ok(&["snapshot", "-q"]).trim().to_string();
    let want_b = list_disk(&env.ws);
    let patch = env.cmd().args(["diff", &a, &b]).output().unwrap().stdout;
    env.ok(&["restore", &a]);
    assert_eq!(list_disk(&env.ws), want_a);
    let out = apply_stdin(&env, &patch, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        list_disk(&env.ws),
        want_b,
        "binary content comes from the store"
    );
    let out = apply_stdin(&env, &patch, &["-R"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(list_disk(&env.ws), want_a);
}

#[test]
fn patches_into_git_dirs_and_onto_existing_files_are_refused() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.write("b.txt", b"other b\n");
    let hook = b"diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+evil\n";
    let out = apply_stdin(&env, hook, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".git"));
    assert!(!env.path(".git").exists());
    let rename =
        b"diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n";
    let out = apply_stdin(&env, rename, &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read(env.path("b.txt")).unwrap(), b"other b\n");
    assert!(env.path("a.txt").exists());
}

#[test]
fn a_failed_apply_is_not_what_undo_takes_back() {
    let env = Env::new();
    env.write("f", b"v1\n");
    let id1 = env.ok(&["snapshot", "-q"]).trim().to_string();
    env.write("f", b"v2\n");
    env.ok(&["snapshot", "-q"]);
    env.ok(&["restore", &id1]);
    assert_eq!(fs::read(env.path("f")).unwrap(), b"v1\n");
    // A patch that fails changes nothing and leaves nothing to undo.
    let out = apply_stdin(&env, b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-nope\n+x\n", &[]);
    assert_eq!(out.status.code(), Some(2));
    env.ok(&["undo"]);
    assert_eq!(
        fs::read(env.path("f")).unwrap(),
        b"v2\n",
        "undo took back the restore"
    );
}

#[test]
fn an_interrupted_apply_is_finished_by_the_same_apply_and_blocks_others() {
    let env = Env::new();
    env.write("a.txt", b"a1\n");
    env.write("b.txt", b"b1\n");
    let before = env.ok(&["snapshot", "-q"]).trim().to_string();
    let patch = b"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a1\n+a2\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b1\n+b2\n";
    // Stage what a killed apply leaves: its journal, and only the first file written. The
    // journal's key is the request's (patch and options), as `rewind apply` computes it.
    let key = rewind::apply::request_key(&[
        format!("apply {:?}", rewind::apply::ApplyPatchOptions::default()).as_bytes(),
        patch,
    ]);
    let root = fs::canonicalize(&env.ws).unwrap();
    {
        let store = env.open();
        rewind::internals::begin_pending(
            &store,
            root.as_os_str().as_encoded_bytes(),
            &rewind::internals::PendingWrite {
                kind: "apply".into(),
                key,
                before: Some(
                    store
                        .reader()
                        .unwrap()
                        .snapshots_with_prefix(&before, 1)
                        .unwrap()[0],
                ),
                started_ns: 0,
                writes: vec![
                    (
                        b"a.txt".to_vec(),
                        rewind::store::tree::Kind::File,
                        b"a2\n".to_vec(),
                    ),
                    (
                        b"b.txt".to_vec(),
                        rewind::store::tree::Kind::File,
                        b"b2\n".to_vec(),
                    ),
                ],
                removes: Vec::new(),
            },
        )
        .unwrap();
    }
    env.write("a.txt", b"a2\n");

    // Another patch is refused, saying what to do.
    let out = apply_stdin(
        &env,
        b"--- a/c.txt\n+++ b/c.txt\n@@ -0,0 +1 @@\n+c\n",
        &["--json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("interrupted") && err.contains("again") && err.contains(&before),
        "{err}"
    );
    assert!(!env.path("c.txt").exists());
    // The same patch finishes the job.
    let out = apply_stdin(&env, patch, &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"resumed\": true"));
    assert_eq!(fs::read(env.path("b.txt")).unwrap(), b"b2\n");
    // And it is an ordinary operation: undo takes it back.
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"a1\n");
    assert_eq!(fs::read(env.path("b.txt")).unwrap(), b"b1\n");
}
