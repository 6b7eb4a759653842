//! Restore, undo and redo on real directories: exact round trips, ignored files untouched,
//! partial restores, symlink escapes, and a kill -9 in the middle of a restore.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use proptest::prelude::*;

fn snap_id(env: &Env) -> String {
    env.ok(&["snapshot", "-q"]).trim().to_string()
}

#[derive(Debug, Clone)]
enum Mutation {
    Edit(usize, Vec<u8>),
    Delete(usize),
    Add(Vec<u8>, Vec<u8>),
    Chmod(usize),
    ToSymlink(usize),
    ToDir(usize),
    DirToFile(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..50))
            .prop_map(|(i, d)| Mutation::Edit(i, d)),
        any::<usize>().prop_map(Mutation::Delete),
        (
            "[a-z]{1,5}(/[a-z]{1,5})?",
            prop::collection::vec(any::<u8>(), 0..50)
        )
            .prop_map(|(p, d)| Mutation::Add(p.into_bytes(), d)),
        any::<usize>().prop_map(Mutation::Chmod),
        any::<usize>().prop_map(Mutation::ToSymlink),
        any::<usize>().prop_map(Mutation::ToDir),
        any::<usize>().prop_map(Mutation::DirToFile),
    ]
}

fn files_of(l: &Listing, kind: char) -> Vec<Vec<u8>> {
    l.iter()
        .filter(|(_, v)| v.0 == kind)
        .map(|(k, _)| k.clone())
        .collect()
}

fn apply(root: &std::path::Path, m: &Mutation) {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let listing = list_disk(root);
    let files: Vec<Vec<u8>> = files_of(&listing, 'f')
        .into_iter()
        .filter(|p| !p.starts_with(b"ignored") && !p.ends_with(b".log"))
        .collect();
    let dirs: Vec<Vec<u8>> = files_of(&listing, 'd')
        .into_iter()
        .filter(|p| !p.starts_with(b"ignored"))
        .collect();
    let pick = |v: &Vec<Vec<u8>>, i: usize| v.get(i % v.len().max(1)).cloned();
    let p = |rel: &[u8]| root.join(OsStr::from_bytes(rel));
    match m {
        Mutation::Edit(i, d) => {
            if let Some(f) = pick(&files, *i) {
                fs::write(p(&f), d).unwrap();
            }
        }
        Mutation::Delete(i) => {
            if let Some(f) = pick(&files, *i) {
                fs::remove_file(p(&f)).unwrap();
            }
        }
        Mutation::Add(rel, d) => {
            let target = p(rel);
            let blocked = target
                .ancestors()
                .skip(1)
                .take_while(|a| *a != root)
                .any(|a| fs::symlink_metadata(a).is_ok_and(|m| !m.is_dir()));
            if !blocked && fs::symlink_metadata(&target).is_err() {
                write_file(root, rel, d);
            }
        }
        Mutation::Chmod(i) => {
            if let Some(f) = pick(&files, *i) {
                let m = fs::metadata(p(&f)).unwrap().permissions().mode();
                fs::set_permissions(p(&f), fs::Permissions::from_mode(m ^ 0o111)).unwrap();
            }
        }
        Mutation::ToSymlink(i) => {
            if let Some(f) = pick(&files, *i) {
                fs::remove_file(p(&f)).unwrap();
                std::os::unix::fs::symlink("somewhere", p(&f)).unwrap();
            }
        }
        Mutation::ToDir(i) => {
            if let Some(f) = pick(&files, *i) {
                fs::remove_file(p(&f)).unwrap();
                fs::create_dir(p(&f)).unwrap();
                fs::write(p(&f).join("inside"), b"x").unwrap();
            }
        }
        Mutation::DirToFile(i) => {
            if let Some(d) = pick(&dirs, *i) {
                fs::remove_dir_all(p(&d)).unwrap();
                fs::write(p(&d), b"was a dir").unwrap();
            }
        }
    }
}

fn base_tree(env: &Env) {
    env.write(".gitignore", b"ignored/\n*.log\n");
    env.write("a.txt", b"alpha\n");
    env.write("src/main.rs", b"fn main() {}\n");
    env.write("src/lib/mod.rs", b"pub mod x;\n");
    env.write("src/lib/x.rs", b"");
    env.write("bin/run", b"#!/bin/sh\necho hi\n");
    set_exec(&env.path("bin/run"), true);
    make_symlink(&env.ws, b"link", b"a.txt");
    fs::create_dir_all(env.path("empty/dir")).unwrap();
    env.write("ignored/cache", b"keep me");
    env.write("debug.log", b"keep me too");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// snapshot -> random mutations -> restore gives back the snapshot exactly, and ignored
    /// files are untouched.
    #[test]
    fn restore_undoes_any_mutation(muts in prop::collection::vec(mutation(), 1..8)) {
        let env = Env::new();
        base_tree(&env);
        let id = snap_id(&env);
        let before = list_disk(&env.ws);
        for m in &muts {
            apply(&env.ws, m);
        }
        env.write("ignored/new", b"created after");
        env.write("late.log", b"ignored too");
        env.ok(&["restore", &id]);
        let mut after = list_disk(&env.ws);
        prop_assert_eq!(after.remove(b"ignored/new".as_slice()).map(|v| v.1), Some(b"created after".to_vec()));
        prop_assert_eq!(after.remove(b"late.log".as_slice()).map(|v| v.1), Some(b"ignored too".to_vec()));
        prop_assert_eq!(after, before);
        let status: serde_json::Value = serde_json::from_str(&env.ok(&["status", "--json"])).unwrap();
        prop_assert_eq!(&status["clean"], &serde_json::Value::Bool(true));
    }
}

#[test]
fn undo_and_redo_round_trip() {
    let env = Env::new();
    base_tree(&env);
    let first = snap_id(&env);
    let original = list_disk(&env.ws);
    env.write("a.txt", b"edited\n");
    fs::remove_file(env.path("src/main.rs")).unwrap();
    let second = snap_id(&env);
    let edited = list_disk(&env.ws);
    env.ok(&["restore", &first]);
    assert_eq!(list_disk(&env.ws), original);
    env.ok(&["undo"]);
    assert_eq!(
        list_disk(&env.ws),
        edited,
        "undo puts back the state before the restore"
    );
    env.ok(&["redo"]);
    assert_eq!(list_disk(&env.ws), original, "redo takes back the undo");
    env.ok(&["undo"]);
    assert_eq!(list_disk(&env.ws), edited);
    // Nothing older changed the workspace: a further undo has nothing to do.
    let (code, err) = env.fails(&["undo"]);
    assert_eq!(code, 2);
    assert!(err.contains("nothing to undo"), "{err}");
    let ops: serde_json::Value = serde_json::from_str(&env.ok(&["op", "log", "--json"])).unwrap();
    let kinds: Vec<&str> = ops
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"restore")
            && kinds.contains(&"undo")
            && kinds.contains(&"redo")
            && kinds.contains(&"snapshot"),
        "{kinds:?}"
    );
    let _ = second;
}

#[test]
fn undo_refuses_to_overwrite_later_changes() {
    let env = Env::new();
    base_tree(&env);
    let first = snap_id(&env);
    env.write("a.txt", b"v2\n");
    snap_id(&env);
    env.ok(&["restore", &first]);
    env.write("src/main.rs", b"work done after the restore\n");
    let (code, err) = env.fails(&["undo"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("src/main.rs") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        fs::read(env.path("src/main.rs")).unwrap(),
        b"work done after the restore\n",
        "nothing was touched"
    );
    env.ok(&["undo", "--force"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"v2\n");
}

#[test]
fn partial_restore_touches_only_named_paths() {
    let env = Env::new();
    base_tree(&env);
    let id = snap_id(&env);
    env.write("a.txt", b"changed a\n");
    env.write("src/main.rs", b"changed main\n");
    env.write("src/lib/x.rs", b"changed x\n");
    env.write("src/new.rs", b"new\n");
    let plan: serde_json::Value =
        serde_json::from_str(&env.ok(&["restore", &id, "--dry-run", "--json", "--", "src/lib"]))
            .unwrap();
    assert_eq!(plan["plan"].as_array().unwrap().len(), 1);
    assert_eq!(
        fs::read(env.path("src/lib/x.rs")).unwrap(),
        b"changed x\n",
        "dry run changes nothing"
    );
    env.ok(&["restore", &id, "--", "src/lib", "a.txt"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"alpha\n");
    assert_eq!(fs::read(env.path("src/lib/x.rs")).unwrap(), b"");
    assert_eq!(
        fs::read(env.path("src/main.rs")).unwrap(),
        b"changed main\n"
    );
    assert!(env.path("src/new.rs").exists());
    // And it is undoable.
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("a.txt")).unwrap(), b"changed a\n");
    assert_eq!(fs::read(env.path("src/lib/x.rs")).unwrap(), b"changed x\n");
}

#[test]
fn a_symlinked_parent_is_replaced_not_followed() {
    let env = Env::new();
    env.write("dir/file", b"inside\n");
    let id = snap_id(&env);
    let outside = env.tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("file"), b"precious\n").unwrap();
    fs::remove_dir_all(env.path("dir")).unwrap();
    std::os::unix::fs::symlink(&outside, env.path("dir")).unwrap();
    env.ok(&["restore", &id]);
    assert_eq!(
        fs::read(outside.join("file")).unwrap(),
        b"precious\n",
        "nothing written outside"
    );
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
    let m = fs::symlink_metadata(env.path("dir")).unwrap();
    assert!(m.is_dir(), "the symlink was replaced by a real directory");
    assert_eq!(fs::read(env.path("dir/file")).unwrap(), b"inside\n");
}

#[test]
fn a_file_symlink_is_replaced_not_written_through() {
    let env = Env::new();
    env.write("f", b"mine\n");
    let id = snap_id(&env);
    let outside = env.tmp.path().join("victim");
    fs::write(&outside, b"do not touch\n").unwrap();
    fs::remove_file(env.path("f")).unwrap();
    std::os::unix::fs::symlink(&outside, env.path("f")).unwrap();
    env.ok(&["restore", &id]);
    assert_eq!(fs::read(&outside).unwrap(), b"do not touch\n");
    assert!(fs::symlink_metadata(env.path("f")).unwrap().is_file());
    assert_eq!(fs::read(env.path("f")).unwrap(), b"mine\n");
}

#[test]
fn kinds_modes_and_empty_things_come_back() {
    let env = Env::new();
    base_tree(&env);
    env.write("empty-file", b"");
    let id = snap_id(&env);
    let want = list_disk(&env.ws);
    // Restore into a fresh, empty directory (another workspace).
    let dest = env.tmp.path().join("dest");
    fs::create_dir(&dest).unwrap();
    env.ok_in(&dest, &["restore", &id, "-q"]);
    let mut got = list_disk(&dest);
    let mut want = want;
    // Ignored files were never in the snapshot.
    want.retain(|k, _| !k.starts_with(b"ignored") && k != b"debug.log");
    got.retain(|k, _| !k.starts_with(b"ignored"));
    assert_eq!(got, want);
    assert!(
        fs::metadata(dest.join("bin/run"))
            .unwrap()
            .permissions()
            .mode()
            & 0o100
            != 0
    );
}

#[test]
fn kill_9_mid_restore_then_restore_again_is_exact() {
    let env = Env::new();
    for i in 0..400 {
        env.write(
            &format!("d{}/f{i}", i % 20),
            &noise(i, 20_000 + (i as usize % 7) * 1000),
        );
    }
    let id = snap_id(&env);
    let want = list_disk(&env.ws);
    let mut killed_mid_way = 0;
    for round in 0..6u64 {
        // Change everything, then restore and kill it after a short, varying delay.
        for i in 0..400 {
            env.write(
                &format!("d{}/f{i}", i % 20),
                &noise(10_000 + round * 1000 + i, 3000),
            );
        }
        let mut child = env
            .cmd()
            .args(["restore", &id, "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + round * 15));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if !status.success() {
            killed_mid_way += 1;
        }
        // Every file is old or new, never truncated.
        for i in 0..400u64 {
            let data = fs::read(env.path(&format!("d{}/f{i}", i % 20))).unwrap();
            assert!(
                data == noise(i, 20_000 + (i as usize % 7) * 1000)
                    || data == noise(10_000 + round * 1000 + i, 3000),
                "round {round}: f{i} is neither old nor new ({} bytes)",
                data.len()
            );
        }
        env.ok(&["restore", &id, "-q"]);
        assert_eq!(
            list_disk(&env.ws),
            want,
            "round {round}: restoring again completes it, temp files gone"
        );
    }
    eprintln!("{killed_mid_way} of 6 restores were killed before finishing");
}

#[test]
fn restore_of_unknown_revision_changes_nothing() {
    let env = Env::new();
    env.write("f", b"x");
    snap_id(&env);
    env.write("f", b"y");
    let (code, err) = env.fails(&["restore", "deadbeef"]);
    assert_eq!(code, 2);
    assert!(err.contains("deadbeef"), "{err}");
    assert_eq!(fs::read(env.path("f")).unwrap(), b"y");
}

#[test]
fn revert_a_range_keeps_later_work_and_merges() {
    let env = Env::new();
    let base: String = (1..=10).map(|i| format!("{i}\n")).collect();
    env.write("f", base.as_bytes());
    env.write("k", b"keep\n");
    env.write("other", b"untouched by the range\n");
    env.ok(&["snapshot", "-q", "--tag", "start"]);
    env.write("f", base.replace("3\n", "three\n").as_bytes());
    env.write("new", b"added in the range\n");
    env.write("k", b"k2\n");
    env.ok(&["snapshot", "-q", "--tag", "end"]);
    // Work after the range: another line of f, and another file.
    env.write(
        "f",
        base.replace("3\n", "three\n")
            .replace("9\n", "nine\n")
            .as_bytes(),
    );
    env.write("other", b"changed later\n");
    env.ok(&["revert", "start", "end"]);
    assert_eq!(
        fs::read(env.path("f")).unwrap(),
        base.replace("9\n", "nine\n").as_bytes(),
        "merged: the range undone, later edit kept"
    );
    assert_eq!(fs::read(env.path("k")).unwrap(), b"keep\n");
    assert!(!env.path("new").exists());
    assert_eq!(fs::read(env.path("other")).unwrap(), b"changed later\n");
    env.ok(&["undo"]);
    assert!(env.path("new").exists());
    assert_eq!(fs::read(env.path("k")).unwrap(), b"k2\n");
}

#[test]
fn revert_conflicts_change_nothing_and_paths_limit_it() {
    let env = Env::new();
    env.write("f", b"a\nb\nc\n");
    env.write("g", b"1\n");
    env.ok(&["snapshot", "-q", "--tag", "s1"]);
    env.write("f", b"a\nB\nc\n");
    env.write("g", b"2\n");
    env.ok(&["snapshot", "-q", "--tag", "s2"]);
    env.write("f", b"a\nBB\nc\n");
    let before = list_disk(&env.ws);
    let (code, err) = env.fails(&["revert", "s1", "s2"]);
    assert_eq!(code, 1, "a conflict exits 1, as overlay accept's: {err}");
    assert!(err.contains("conflict") && err.contains('f'), "{err}");
    assert_eq!(list_disk(&env.ws), before, "a conflict writes nothing");
    env.ok(&["revert", "s1", "s2", "--", "g"]);
    assert_eq!(fs::read(env.path("g")).unwrap(), b"1\n");
    assert_eq!(fs::read(env.path("f")).unwrap(), b"a\nBB\nc\n");
}

#[test]
fn a_directory_holding_ignored_files_is_kept_not_a_failure() {
    let env = Env::new();
    env.write(".gitignore", b"__pycache__/\n");
    env.write("top.txt", b"top\n");
    let before_pkg = snap_id(&env);
    env.write("pkg/a.py", b"print(1)\n");
    env.write("pkg/__pycache__/a.pyc", b"bytecode");
    snap_id(&env);
    let out: serde_json::Value =
        serde_json::from_str(&env.ok(&["restore", &before_pkg, "--json"])).unwrap();
    assert!(!env.path("pkg/a.py").exists());
    assert_eq!(
        fs::read(env.path("pkg/__pycache__/a.pyc")).unwrap(),
        b"bytecode",
        "ignored files survive"
    );
    assert!(
        out["kept"].as_array().unwrap().iter().any(|k| k == "pkg"),
        "{out}"
    );
    env.ok(&["undo"]);
    assert_eq!(fs::read(env.path("pkg/a.py")).unwrap(), b"print(1)\n");
}

#[test]
fn restore_refuses_to_overwrite_an_ignored_file_no_snapshot_holds() {
    let env = Env::new();
    env.write(".env", b"OLD=1\n");
    let old = snap_id(&env);
    env.write(".gitignore", b".env\n");
    env.write(".env", b"NEW_SECRET=2\n");
    snap_id(&env);
    let (code, err) = env.fails(&["restore", &old]);
    assert_eq!(code, 2);
    assert!(err.contains(".env") && err.contains("--force"), "{err}");
    assert_eq!(fs::read(env.path(".env")).unwrap(), b"NEW_SECRET=2\n");
    env.ok(&["restore", &old, "--force"]);
    assert_eq!(fs::read(env.path(".env")).unwrap(), b"OLD=1\n");
}

#[test]
fn path_arguments_dot_and_hex_like_tags() {
    let env = Env::new();
    env.write("f", b"1\n");
    let id = snap_id(&env);
    env.write("f", b"2\n");
    let out = env
        .cmd()
        .args(["diff", "--exit-code", "--name-status", "--", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "`.` means the whole workspace");
    assert!(String::from_utf8_lossy(&out.stdout).contains("M\tf"));
    let (_, err) = env.fails(&["tag", "deadbeef", &id]);
    assert!(err.contains("hex"), "{err}");
}

#[test]
fn paths_are_relative_to_the_current_directory() {
    let env = Env::new();
    env.write("README", b"top\n");
    env.write("src/main.rs", b"main\n");
    env.write("src/lib.rs", b"lib\n");
    let id = snap_id(&env);
    env.write("README", b"changed\n");
    env.write("src/main.rs", b"changed\n");
    env.write("src/lib.rs", b"changed\n");
    let in_src = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rewind"))
            .arg("--store")
            .arg(&env.store)
            .args(args)
            .current_dir(env.path("src"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // From src/, `main.rs` is src/main.rs and `../README` is README.
    assert_eq!(
        in_src(&["diff", &id, "--name-status", "--", "main.rs", "../README"]),
        "M\tREADME\nM\tsrc/main.rs\n"
    );
    in_src(&["restore", &id, "-q", "--", "main.rs"]);
    assert_eq!(fs::read(env.path("src/main.rs")).unwrap(), b"main\n");
    assert_eq!(fs::read(env.path("src/lib.rs")).unwrap(), b"changed\n");
    let out = Command::new(env!("CARGO_BIN_EXE_rewind"))
        .arg("--store")
        .arg(&env.store)
        .args(["restore", &id, "--", "../../elsewhere"])
        .current_dir(env.path("src"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside the workspace"));
}
