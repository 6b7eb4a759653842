//! Binary changes in patches: rewind writes git's `GIT binary patch` (with `--binary`, and always
//! in captured patches), which `git apply` and `rewind apply` (into another store) both apply;
//! and rewind applies git's own `git diff --binary` output.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::*;

/// A binary file of `n` bytes: noise with NULs, so every tool sees it as binary.
fn bin(seed: u64, n: usize) -> Vec<u8> {
    let mut v = noise(seed, n);
    v[0] = 0;
    v
}

/// Copies a directory tree (files only, which is all these tests make).
fn copy_tree(from: &Path, to: &Path) {
    for (rel, (kind, data, exec)) in list_disk(from) {
        let p = to.join(std::ffi::OsStr::new(std::str::from_utf8(&rel).unwrap()));
        match kind {
            'd' => fs::create_dir_all(&p).unwrap(),
            _ => {
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(&p, &data).unwrap();
                set_exec(&p, exec);
            }
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    crate::git::git(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .output()
        .expect("git")
}

/// The base tree: binaries to edit slightly (a git delta), replace and delete, and a text file.
fn seed(ws: &Path) {
    write_file(ws, b"img/edit.bin", &bin(1, 200_000));
    write_file(ws, b"img/replace.bin", &bin(2, 3000));
    write_file(ws, b"img/gone.bin", &bin(3, 5000));
    write_file(ws, b"notes.txt", b"one\ntwo\n");
}

/// The changes, a binary added beside them.
fn change(ws: &Path) {
    let mut big = bin(1, 200_000);
    big[100_000..100_010].copy_from_slice(b"0123456789");
    big.extend_from_slice(b"tail");
    fs::write(ws.join("img/edit.bin"), big).unwrap();
    fs::write(ws.join("img/replace.bin"), bin(4, 4000)).unwrap();
    fs::remove_file(ws.join("img/gone.bin")).unwrap();
    fs::write(ws.join("img/new.bin"), bin(5, 6000)).unwrap();
    fs::write(ws.join("notes.txt"), b"one\nTWO\n").unwrap();
}

/// A store with snapshots `base` and `changed`; returns (env, copy of base, the changed tree).
fn setup() -> (Env, std::path::PathBuf, Listing) {
    let e = Env::new();
    seed(&e.ws);
    e.ok(&["init"]);
    e.ok(&["snapshot", "--tag", "base"]);
    let base_copy = e.tmp.path().join("base-copy");
    copy_tree(&e.ws, &base_copy);
    change(&e.ws);
    e.ok(&["snapshot", "--tag", "changed"]);
    let expected = list_disk(&e.ws);
    (e, base_copy, expected)
}

#[test]
fn a_binary_patch_from_rewind_applies_with_git_apply_and_rewind_apply_into_a_fresh_store() {
    let (e, base_copy, expected) = setup();
    let patch = e.ok(&["diff", "--binary", "base", "changed"]);
    assert!(patch.contains("GIT binary patch"), "{patch}");
    assert!(
        patch.contains("\ndelta "),
        "a small edit is a delta: {patch}"
    );
    assert!(patch.contains("\nliteral "), "{patch}");
    assert!(!patch.contains("Binary files"), "{patch}");
    let pfile = e.tmp.path().join("bin.patch");
    fs::write(&pfile, &patch).unwrap();

    // git apply, outside any repository.
    let g = e.tmp.path().join("git-side");
    copy_tree(&base_copy, &g);
    let out = git(&g, &["apply", "--check", pfile.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = git(&g, &["apply", pfile.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(list_disk(&g), expected, "git apply gives the changed tree");
    // ... and git apply -R takes it back (the reverse hunks are right too).
    let out = git(&g, &["apply", "-R", pfile.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(list_disk(&g), list_disk(&base_copy));

    // rewind apply with another store, which has never seen the content.
    let other = Env::new();
    copy_tree(&base_copy, &other.ws);
    other.ok(&["init"]);
    other.ok(&["apply", pfile.to_str().unwrap()]);
    assert_eq!(
        list_disk(&other.ws),
        expected,
        "rewind apply in a fresh store"
    );
    other.ok(&["apply", "-R", pfile.to_str().unwrap()]);
    assert_eq!(list_disk(&other.ws), list_disk(&base_copy));

    // A binary patch does not apply to a file with other content: refused, nothing written.
    fs::write(other.ws.join("img/replace.bin"), b"\0something else").unwrap();
    let before = list_disk(&other.ws);
    let (code, err) = other.fails(&["apply", pfile.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("img/replace.bin"), "{err}");
    assert_eq!(list_disk(&other.ws), before, "all files or none");
}

#[test]
fn a_captured_run_patch_carries_binary_changes_that_apply_elsewhere() {
    let e = Env::new();
    write_file(&e.ws, b"data.bin", &bin(7, 10_000));
    e.ok(&["init"]);
    let base_copy = e.tmp.path().join("base-copy");
    copy_tree(&e.ws, &base_copy);
    let out = e.ok(&[
        "run",
        "--json",
        "--capture-patch",
        "--",
        "sh",
        "-c",
        "printf '\\000\\001\\002' >> data.bin; printf '\\000x' > new.bin",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let patch = v["patch"].as_str().unwrap();
    assert!(patch.contains("GIT binary patch"), "{patch}");
    let pfile = e.tmp.path().join("run.patch");
    fs::write(&pfile, patch).unwrap();
    let g = e.tmp.path().join("git-side");
    copy_tree(&base_copy, &g);
    let out = git(&g, &["apply", pfile.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(list_disk(&g), list_disk(&e.ws));
}

#[test]
fn rewind_applies_gits_own_binary_patches() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    fs::create_dir(&repo).unwrap();
    seed(&repo);
    assert!(git(&repo, &["init", "-q"]).status.success());
    assert!(git(&repo, &["add", "-A"]).status.success());
    assert!(git(&repo, &["commit", "-qm", "base"]).status.success());
    let base_copy = tmp.path().join("base-copy");
    copy_tree(&repo, &base_copy);
    fs::remove_dir_all(base_copy.join(".git")).unwrap();
    change(&repo);
    assert!(git(&repo, &["add", "-A"]).status.success());
    let out = git(&repo, &["diff", "--cached", "--binary"]);
    assert!(out.status.success());
    let patch = out.stdout;
    let text = String::from_utf8_lossy(&patch);
    assert!(
        text.contains("delta ") && text.contains("literal "),
        "{text}"
    );

    let e = Env::new();
    copy_tree(&base_copy, &e.ws);
    e.ok(&["init"]);
    let pfile = tmp.path().join("git.patch");
    fs::write(&pfile, &patch).unwrap();
    e.ok(&["apply", pfile.to_str().unwrap()]);
    fs::remove_dir_all(repo.join(".git")).unwrap();
    assert_eq!(list_disk(&e.ws), list_disk(&repo));
}

#[test]
fn gnu_patch_refuses_a_binary_patch_instead_of_leaving_wrong_files() {
    // What the README says of `patch -p1`: it applies the text changes of such a patch and
    // refuses the binary ones with a non-zero exit, rather than exiting 0 with wrong files.
    let (e, base_copy, _) = setup();
    let patch = e.ok(&["diff", "--binary", "base", "changed"]);
    let p = e.tmp.path().join("patch-side");
    copy_tree(&base_copy, &p);
    let out = Command::new("patch")
        .args(["-p1", "--batch", "--silent"])
        .current_dir(&p)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(patch.as_bytes())?;
            c.wait_with_output()
        })
        .expect("patch");
    assert!(
        !out.status.success(),
        "patch -p1 exits non-zero on binary hunks"
    );
    assert_eq!(fs::read(p.join("notes.txt")).unwrap(), b"one\nTWO\n");
    assert_eq!(
        fs::read(p.join("img/edit.bin")).unwrap(),
        fs::read(base_copy.join("img/edit.bin")).unwrap(),
        "binaries are left as they were, not corrupted"
    );
}
