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

// ---------------------------------------------------------------------------------------------
// Parity with `git apply` (git-style patches) and GNU `patch -p1` (traditional ones): the
// same input gives the same tree, or both refuse and nothing changes.

/// A tree to start from: (path, content, exec) files and (path, target) symlinks.
#[derive(Clone, Default)]
struct Tree {
    files: Vec<(&'static str, Vec<u8>, bool)>,
    links: Vec<(&'static str, &'static str)>,
}

impl Tree {
    fn file(mut self, p: &'static str, data: &[u8]) -> Tree {
        self.files.push((p, data.to_vec(), false));
        self
    }
    fn exec(mut self, p: &'static str, data: &[u8]) -> Tree {
        self.files.push((p, data.to_vec(), true));
        self
    }
    fn link(mut self, p: &'static str, target: &'static str) -> Tree {
        self.links.push((p, target));
        self
    }
    fn make(&self, root: &Path) {
        for (p, data, x) in &self.files {
            write_file(root, p.as_bytes(), data);
            set_exec(&root.join(p), *x);
        }
        for (p, t) in &self.links {
            make_symlink(root, p.as_bytes(), t.as_bytes());
        }
    }
}

/// Files and symlinks only (an empty directory a tool leaves behind is not content).
fn entries(root: &Path) -> Listing {
    list_disk(root)
        .into_iter()
        .filter(|(_, (k, _, _))| *k != 'd')
        .collect()
}

/// What the reference tool makes of `tree` with `patch`: `git apply` for a git-style patch,
/// GNU `patch --batch` otherwise. `None` when it refuses (or applies only part).
fn reference(tree: &Tree, patch: &[u8], strip: &str) -> Option<Listing> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("w");
    fs::create_dir(&dir).unwrap();
    tree.make(&dir);
    let pfile = tmp.path().join("p.diff");
    fs::write(&pfile, patch).unwrap();
    let git_style = patch.windows(11).any(|w| w == b"diff --git ");
    let out = if git_style {
        crate::git::git(&dir)
            .args(["apply", "--whitespace=nowarn", strip])
            .arg(&pfile)
            .output()
            .unwrap()
    } else {
        Command::new("patch")
            .current_dir(&dir)
            .args([strip, "--batch", "--no-backup-if-mismatch", "-r"])
            .arg(tmp.path().join("rej"))
            .arg("-i")
            .arg(&pfile)
            .output()
            .unwrap()
    };
    out.status.success().then(|| entries(&dir))
}

/// Applies `patch` with rewind and checks it did what the reference tool does. Returns
/// rewind's stdout and stderr.
fn same_as_reference(tree: &Tree, patch: &[u8], args: &[&str]) -> (String, String) {
    let strip = args
        .iter()
        .find(|a| a.starts_with("-p"))
        .copied()
        .unwrap_or("-p1");
    let want = reference(tree, patch, strip);
    let env = Env::new();
    tree.make(&env.ws);
    let before = entries(&env.ws);
    let out = apply_stdin(&env, patch, args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let got = entries(&env.ws);
    let show = |l: &Listing| {
        l.iter()
            .map(|(p, (k, d, x))| {
                format!(
                    "{k}{} {} {:?}\n",
                    if *x { "x" } else { "" },
                    String::from_utf8_lossy(p),
                    String::from_utf8_lossy(d)
                )
            })
            .collect::<String>()
    };
    let patch_text = String::from_utf8_lossy(patch);
    match want {
        Some(want) => {
            assert!(
                out.status.success(),
                "the reference applies, rewind refuses: {stderr}\n{patch_text}"
            );
            assert_eq!(show(&got), show(&want), "{patch_text}");
        }
        None => {
            assert_eq!(
                out.status.code(),
                Some(2),
                "the reference refuses, rewind applies: {stdout}\n{}\n{patch_text}",
                show(&got)
            );
            assert_eq!(show(&got), show(&before), "a refusal changes nothing");
        }
    }
    // A refusal never leaves an apply pending: the next one runs.
    let out = apply_stdin(
        &env,
        b"--- /dev/null\n+++ b/zz-next\n@@ -0,0 +1 @@\n+x\n",
        &[],
    );
    assert!(
        out.status.success(),
        "the next apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, stderr)
}

#[test]
fn a_no_newline_marker_never_joins_two_lines() {
    let abcd = Tree::default().file("f", b"a\nb\nc\nd\n");
    let marker_mid = b"@@ -1,2 +1,2 @@\n a\n-b\n+B\n\\ No newline at end of file\n";
    // git refuses; GNU patch places it with fuzz 1 and keeps the newline.
    for head in [
        &b"--- a/f\n+++ b/f\n"[..],
        b"diff --git a/f b/f\n--- a/f\n+++ b/f\n",
    ] {
        let (out, _) = same_as_reference(&abcd, &[head, marker_mid].concat(), &[]);
        if !head.starts_with(b"diff") {
            assert!(out.contains("fuzz 1"), "{out}");
        }
    }
    let old = Tree::default().file("f", b"old\n");
    let insert = b"@@ -0,0 +1 @@\n+new\n\\ No newline at end of file\n";
    for head in [
        &b"--- a/f\n+++ b/f\n"[..],
        b"diff --git a/f b/f\n--- a/f\n+++ b/f\n",
    ] {
        same_as_reference(&old, &[head, insert].concat(), &[]);
    }
    // A marker on a line that is not the last of its side is malformed.
    let env = Env::new();
    env.write("f", b"a\nb\nc\n");
    let bad = b"--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+X\n\\ No newline at end of file\n+Y\n b\n";
    let out = apply_stdin(&env, bad, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(fs::read(env.path("f")).unwrap(), b"a\nb\nc\n");
}

#[test]
fn hunks_with_unequal_context_are_pinned_as_gnu_patch_and_git_pin_them() {
    let numbers = Tree::default().file("f", b"1\ntwo\n3\n4\n5\nsix\n7\n8\n");
    let p = b"--- a/f\n+++ b/f\n@@ -2,6 +2,6 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n";
    same_as_reference(&numbers, p, &[]);
    let git = [&b"diff --git a/f b/f\n"[..], p].concat();
    same_as_reference(&numbers, &git, &[]);
    // Leading context only: pinned to the end of the file, not after an earlier "x".
    let xs = Tree::default().file("f", b"x\n1\n2\nx\n3\n4\n5\n6\n");
    let tail = b"--- a/f\n+++ b/f\n@@ -5 +5,2 @@\n x\n+y\n";
    same_as_reference(&xs, tail, &[]);
    let tail_git = [&b"diff --git a/f b/f\n"[..], tail].concat();
    same_as_reference(&xs, &tail_git, &[]);
    // Trailing context only, at the top: pinned to the start.
    let top = Tree::default().file("f", b"q\nx\n1\n2\n");
    same_as_reference(&top, b"--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n+y\n x\n", &[]);
    // --fuzz 0 is git's rule: every context line, and the hunk at line 1 at the start.
    let env = Env::new();
    env.write("f", b"new\n1\n2\n3\n4\n");
    let at_top = b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n";
    let out = apply_stdin(&env, at_top, &["--fuzz", "0"]);
    assert_eq!(out.status.code(), Some(2));
    // With fuzz it applies, and says so, in text and in JSON.
    let out = apply_stdin(&env, at_top, &["--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("offset +1"), "{text}");
    let out = apply_stdin(&env, at_top, &["--check", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"][0]["hunks"][0]["offset"], 1);
}

/// `git diff --binary` between two trees made in a scratch repository.
fn git_patch(a: &Tree, b: &Tree, extra: &[&str]) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path();
    let git = |args: &[&str]| {
        let o = crate::git::git(g).args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    git(&["init", "-q", "."]);
    a.make(g);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "a", "--allow-empty"]);
    for e in fs::read_dir(g).unwrap() {
        let e = e.unwrap();
        if e.file_name() != ".git" {
            let p = e.path();
            if fs::symlink_metadata(&p).unwrap().is_dir() {
                fs::remove_dir_all(&p).unwrap();
            } else {
                fs::remove_file(&p).unwrap();
            }
        }
    }
    b.make(g);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "b", "--allow-empty"]);
    let mut args = vec!["diff", "--binary", "--no-color"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["HEAD~", "HEAD"]);
    git(&args)
}

#[test]
fn file_and_symlink_change_places_both_ways() {
    let file = Tree::default().file("f", b"text\n").file("keep", b"k\n");
    let link = Tree::default().link("f", "keep").file("keep", b"k\n");
    same_as_reference(&file, &git_patch(&file, &link, &[]), &[]);
    same_as_reference(&link, &git_patch(&link, &file, &[]), &[]);
    // foo/baz renamed onto foo (git's t4114): a directory gives way to a file.
    let nested = Tree::default().file("foo/baz", b"content\n");
    let flat = Tree::default().file("foo", b"content\n");
    same_as_reference(&nested, &git_patch(&nested, &flat, &["-M"]), &[]);
    same_as_reference(&flat, &git_patch(&flat, &nested, &["-M"]), &[]);
}

#[test]
fn the_exec_bit_stays_when_the_patch_names_no_mode_change() {
    let tree = Tree::default().exec("run.sh", b"echo a\n");
    let p = b"diff --git a/run.sh b/run.sh\nindex 1111111..2222222 100644\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo a\n+echo b\n";
    same_as_reference(&tree, p, &[]);
}

#[test]
fn one_path_in_several_sections() {
    let tree = Tree::default().file("f", b"1\n2\n3\n");
    // Two concatenated diffs of one file.
    let twice = b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-1\n+one\n 2\n 3\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n one\n 2\n-3\n+three\n";
    same_as_reference(&tree, twice, &[]);
    let twice_git = b"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-1\n+one\n 2\n 3\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n one\n 2\n-3\n+three\n";
    same_as_reference(&tree, twice_git, &[]);
    // Delete, then create the same path.
    let recreate = b"diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-1\n-2\n-3\ndiff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+fresh\n";
    same_as_reference(&tree, recreate, &[]);
    // Rename, then modify the new name.
    let moved = b"diff --git a/f b/g\nsimilarity index 100%\nrename from f\nrename to g\ndiff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n";
    same_as_reference(&tree, moved, &[]);
}

#[test]
fn two_names_swap() {
    let tree = Tree::default()
        .file("file1", b"one\n")
        .file("file2", b"two\n");
    let swap = b"diff --git a/file2 b/file1\nsimilarity index 100%\nrename from file2\nrename to file1\ndiff --git a/file1 b/file2\nsimilarity index 100%\nrename from file1\nrename to file2\n";
    same_as_reference(&tree, swap, &[]);
}

#[test]
fn traditional_patches_patch_the_name_that_exists() {
    let tree = Tree::default().file("old/f.c", b"a\n");
    same_as_reference(
        &tree,
        b"--- a/old/f.c\n+++ b/new/f.c\n@@ -1 +1 @@\n-a\n+b\n",
        &[],
    );
    let orig = Tree::default().file("f", b"a\n");
    same_as_reference(
        &orig,
        b"--- f.orig\t2024-01-01 10:00:00.000000000 +0000\n+++ f\t2024-01-01 10:00:01.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n",
        &["-p0"],
    );
    same_as_reference(&orig, b"--- a/f\n+++ b/f+\n@@ -1 +1 @@\n-a\n+b\n", &[]);
}

#[test]
fn creation_and_deletion_by_timestamp_in_any_zone() {
    let tree = Tree::default().file("gone", b"bye\n");
    let tokyo = b"diff -ruN a/gone b/gone\n--- a/gone\t2024-01-01 19:00:00.000000000 +0900\n+++ b/gone\t1970-01-01 09:00:00.000000000 +0900\n@@ -1 +0,0 @@\n-bye\ndiff -ruN a/new b/new\n--- a/new\t1970-01-01 09:00:00.000000000 +0900\n+++ b/new\t2024-01-01 19:00:00.000000000 +0900\n@@ -0,0 +1 @@\n+hi\n";
    same_as_reference(&tree, tokyo, &[]);
    // Ordinary dates and -0,0 onto a missing file: a creation, as git and GNU patch take it.
    let plain = b"--- a/made\t2024-01-01 10:00:00.000000000 -0800\n+++ b/made\t2024-01-01 10:00:00.000000000 -0800\n@@ -0,0 +1 @@\n+x\n";
    same_as_reference(&tree, plain, &[]);
}

#[test]
fn timestamps_after_spaces_and_colon_zones_are_not_part_of_the_name() {
    let tree = Tree::default().file("f", b"a\n");
    same_as_reference(
        &tree,
        b"--- a/f  2024-01-01 10:00:00.000000000 +0000\n+++ b/f  2024-01-01 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n",
        &[],
    );
    same_as_reference(
        &tree,
        b"--- a/f\t2024-01-01 10:00:00 -08:00\n+++ b/f\t2024-01-01 10:00:00 -08:00\n@@ -1 +1 @@\n-a\n+b\n",
        &[],
    );
}

#[test]
fn malformed_git_headers_are_refused_like_git() {
    let tree = Tree::default().file("f", b"a\n");
    // `---`/`+++` names that contradict the `diff --git` line: git 2.47 takes them as a rename
    // (f => f-blah), rewind refuses a header at odds with itself rather than guess.
    let env = Env::new();
    tree.make(&env.ws);
    let blah = b"diff --git a/f b/f\n--- a/f\n+++ b/f-blah\n@@ -1 +1 @@\n-a\n+b\n";
    let out = apply_stdin(&env, blah, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("contradicts"));
    assert_eq!(fs::read(env.path("f")).unwrap(), b"a\n");
    assert!(!env.path("f-blah").exists());
    for p in [
        &b"diff --git a/f b/g\nnew file mode 100644\ncopy from f\ncopy to g\n"[..],
        b"diff --git a/f b/g\nsimilarity index 100%\nrename from f\n",
        b"diff --git a/f b/f\n--- a/f\n@@ -1 +1 @@\n-a\n+b\n",
    ] {
        same_as_reference(&tree, p, &[]);
    }
}

#[test]
fn headers_git_accepts_are_accepted() {
    let tree = Tree::default().file("f", b"a\n");
    same_as_reference(
        &tree,
        b"diff --git a/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
        &[],
    );
    let svn = Tree::default().file("Makefile", b"a\n");
    same_as_reference(
        &svn,
        b"diff --git a/branches/Makefile\n--- a/branches/Makefile\n+++ b/branches/Makefile\n@@ -1 +1 @@\n-a\n+b\n",
        &["-p2"],
    );
    same_as_reference(
        &tree,
        b"diff --git a/empty b/empty\nnew file mode 100660\n",
        &[],
    );
}

#[test]
fn a_submodule_is_left_alone() {
    let tree = Tree::default().file("f", b"a\n");
    let p = b"diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n";
    let (out, _) = same_as_reference(&tree, p, &[]);
    assert!(out.contains("submodule"), "{out}");
}

#[test]
fn an_applied_creation_says_so_and_an_applied_change_suggests_r() {
    let env = Env::new();
    env.write("f", b"1\n2\n3\n");
    let create = b"--- /dev/null\n+++ b/new\n@@ -0,0 +1 @@\n+made\n";
    assert!(apply_stdin(&env, create, &[]).status.success());
    let out = apply_stdin(&env, create, &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("already applied"));
    let change = b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n";
    assert!(apply_stdin(&env, change, &[]).status.success());
    let out = apply_stdin(&env, change, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("applied already") && err.contains("-R"),
        "{err}"
    );
}

#[test]
fn a_refused_apply_writes_nothing_and_leaves_nothing_pending() {
    let env = Env::new();
    env.write("f", b"x\n");
    let outside = env.tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let evil = format!(
        "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n@@ -0,0 +1 @@\n+{}\n\\ No newline at end of file\ndiff --git a/evil/pwn b/evil/pwn\nnew file mode 100644\n--- /dev/null\n+++ b/evil/pwn\n@@ -0,0 +1 @@\n+owned\n",
        outside.display()
    );
    let nul = b"diff --git a/ln b/ln\nnew file mode 120000\n--- /dev/null\n+++ b/ln\n@@ -0,0 +1 @@\n+a\0b\n\\ No newline at end of file\n";
    let abs = b"--- /tmp/rewind-apply-abs/x\n+++ /tmp/rewind-apply-abs/x\n@@ -0,0 +1 @@\n+x\n";
    let before = entries(&env.ws);
    for p in [evil.as_bytes(), &nul[..], &abs[..]] {
        let out = apply_stdin(&env, p, &[]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(entries(&env.ws), before, "{}", String::from_utf8_lossy(p));
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        let next = apply_stdin(&env, b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y\n", &[]);
        assert!(
            next.status.success(),
            "{}",
            String::from_utf8_lossy(&next.stderr)
        );
        assert!(
            apply_stdin(&env, b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-y\n+x\n", &[])
                .status
                .success()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Round trip: for two trees A and B, `rewind diff A B --binary` applied to A by `rewind apply`
// and by `git apply` gives B exactly.

mod round_trip {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug, PartialEq)]
    enum Node {
        File(Vec<u8>, bool),
        Link(String),
    }

    type Model = BTreeMap<String, Node>;

    const PATHS: &[&str] = &["a", "b.txt", "d/x", "d/y", "d/e/z", "t", "u/v", "bin"];

    fn content() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            1 => Just(Vec::new()),
            4 => (prop::collection::vec(0u8..5, 1..12), any::<bool>()).prop_map(|(ls, cut)| {
                let mut s: Vec<u8> = ls
                    .iter()
                    .flat_map(|&l| format!("line {l}\n").into_bytes())
                    .collect();
                if cut {
                    s.pop();
                }
                s
            }),
            1 => prop::collection::vec(any::<u8>(), 1..64).prop_map(|mut b| {
                b.push(0);
                b
            }),
        ]
    }

    fn node() -> impl Strategy<Value = Node> {
        prop_oneof![
            5 => (content(), prop::bool::weighted(0.2)).prop_map(|(c, x)| Node::File(c, x)),
            1 => prop::sample::select(vec!["a", "target", "../out", "d/x"])
                .prop_map(|t| Node::Link(t.to_string())),
        ]
    }

    fn fits(m: &Model, p: &str) -> bool {
        !m.keys()
            .any(|q| q == p || q.starts_with(&format!("{p}/")) || p.starts_with(&format!("{q}/")))
    }

    #[derive(Clone, Debug)]
    enum Op {
        Set(usize, Node),
        Delete(usize),
        Rename(usize, usize),
        Chmod(usize),
        Edit(usize, Vec<u8>),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => (0..PATHS.len(), node()).prop_map(|(p, n)| Op::Set(p, n)),
            1 => (0..8usize).prop_map(Op::Delete),
            1 => (0..8usize, 0..PATHS.len()).prop_map(|(i, p)| Op::Rename(i, p)),
            1 => (0..8usize).prop_map(Op::Chmod),
            2 => (0..8usize, content()).prop_map(|(i, c)| Op::Edit(i, c)),
        ]
    }

    fn pair() -> impl Strategy<Value = (Model, Model)> {
        (
            prop::collection::vec((0..PATHS.len(), node()), 1..7),
            prop::collection::vec(op(), 1..6),
        )
            .prop_map(|(specs, ops)| {
                let mut a = Model::new();
                for (p, n) in specs {
                    if fits(&a, PATHS[p]) {
                        a.insert(PATHS[p].to_string(), n);
                    }
                }
                let mut b = a.clone();
                for o in ops {
                    let keys: Vec<String> = b.keys().cloned().collect();
                    let pick = |i: usize| (!keys.is_empty()).then(|| keys[i % keys.len()].clone());
                    match o {
                        Op::Set(p, n) => {
                            // Replacing an entry (a type change) or adding one where it fits.
                            let p = PATHS[p].to_string();
                            if b.contains_key(&p) || fits(&b, &p) {
                                b.insert(p, n);
                            }
                        }
                        Op::Delete(i) => {
                            if let Some(k) = pick(i) {
                                b.remove(&k);
                            }
                        }
                        Op::Rename(i, p) => {
                            if let Some(k) = pick(i)
                                && let Some(Node::File(..)) = b.get(&k)
                            {
                                let n = b.remove(&k).unwrap_or(Node::Link("x".into()));
                                if fits(&b, PATHS[p]) {
                                    b.insert(PATHS[p].to_string(), n);
                                } else {
                                    b.insert(k, n);
                                }
                            }
                        }
                        Op::Chmod(i) => {
                            if let Some(k) = pick(i)
                                && let Some(Node::File(_, x)) = b.get_mut(&k)
                            {
                                *x = !*x;
                            }
                        }
                        Op::Edit(i, c) => {
                            if let Some(k) = pick(i)
                                && let Some(Node::File(data, _)) = b.get_mut(&k)
                            {
                                *data = c;
                            }
                        }
                    }
                }
                (a, b)
            })
    }

    fn materialize(root: &Path, m: &Model) {
        for (p, n) in m {
            match n {
                Node::File(data, x) => {
                    write_file(root, p.as_bytes(), data);
                    set_exec(&root.join(p), *x);
                }
                Node::Link(t) => make_symlink(root, p.as_bytes(), t.as_bytes()),
            }
        }
    }

    fn clear(dir: &Path) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if fs::symlink_metadata(&p).unwrap().is_dir() {
                fs::remove_dir_all(&p).unwrap();
            } else {
                fs::remove_file(&p).unwrap();
            }
        }
    }

    fn check(a: &Model, b: &Model) -> Result<(), TestCaseError> {
        let env = Env::new();
        materialize(&env.ws, a);
        let ida = env.ok(&["snapshot", "-q"]).trim().to_string();
        clear(&env.ws);
        materialize(&env.ws, b);
        let idb = env.ok(&["snapshot", "-q"]).trim().to_string();
        let out = env
            .cmd()
            .args(["diff", &ida, &idb, "--binary"])
            .output()
            .unwrap();
        prop_assert!(out.status.code().is_some_and(|c| c <= 1));
        let patch = out.stdout;
        let want = entries(&env.ws);
        if patch.is_empty() {
            return Ok(());
        }
        let pfile = env.tmp.path().join("p.diff");
        fs::write(&pfile, &patch).unwrap();
        let text = String::from_utf8_lossy(&patch).into_owned();
        for tool in ["rewind", "git"] {
            let dir = env.tmp.path().join(tool);
            fs::create_dir(&dir).unwrap();
            materialize(&dir, a);
            let out = if tool == "git" {
                crate::git::git(&dir)
                    .args(["apply", "--whitespace=nowarn"])
                    .arg(&pfile)
                    .output()
                    .unwrap()
            } else {
                rewind_bin()
                    .arg("--store")
                    .arg(&env.store)
                    .arg("-C")
                    .arg(&dir)
                    .arg("apply")
                    .arg(&pfile)
                    .output()
                    .unwrap()
            };
            prop_assert!(
                out.status.success(),
                "{} apply: {}\n{}",
                tool,
                String::from_utf8_lossy(&out.stderr),
                text
            );
            prop_assert_eq!(&entries(&dir), &want, "{} apply\n{}", tool, text);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(32),
            ..ProptestConfig::default()
        })]
        #[test]
        fn rewinds_binary_diff_applies_with_rewind_and_git_to_give_b((a, b) in pair()) {
            check(&a, &b)?;
        }
    }

    #[test]
    fn binary_changes_from_and_to_an_empty_file() {
        let bin = b"\x00\x01binary\x00".to_vec();
        let a: Model = [
            ("a".to_string(), Node::File(Vec::new(), false)),
            ("b.txt".to_string(), Node::File(bin.clone(), false)),
        ]
        .into();
        let b: Model = [
            ("a".to_string(), Node::File(bin, false)),
            ("b.txt".to_string(), Node::File(Vec::new(), false)),
        ]
        .into();
        check(&a, &b).unwrap();
    }
}
