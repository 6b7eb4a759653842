//! Renames by similarity (git's `-M`, 50% by default): a file moved and edited is one rename
//! in diff (the same name-status, numstat and headers as git, a patch `git apply` and
//! `patch -p1` take), followed by `log -- PATH` and blame, and taken back by revert onto a
//! workspace that moved on. `-M<n>%`, `--find-renames=<n>` and `--no-renames` as git reads them.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{Env, json};
use crate::git::git;

fn text(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// A workspace with two snapshots: `old.txt` (30 lines) and `keep.txt`, then `old.txt` moved
/// to `dir/new.txt` with line 5 changed; returns the two snapshot ids.
fn moved_and_edited(env: &Env) -> (String, String) {
    env.write("old.txt", text(30).as_bytes());
    env.write("keep.txt", b"kept\n");
    env.ok(&["init"]);
    let a = env.ok(&["snapshot", "-q"]).trim().to_string();
    fs::remove_file(env.path("old.txt")).unwrap();
    env.write(
        "dir/new.txt",
        text(30).replace("line 5\n", "FIVE\n").as_bytes(),
    );
    let b = env.ok(&["snapshot", "-q"]).trim().to_string();
    (a, b)
}

/// The same two trees as commits of a git repository.
fn git_twin(env: &Env) -> std::path::PathBuf {
    let g = env.tmp.path().join("git");
    fs::create_dir_all(&g).unwrap();
    let run = |args: &[&str]| {
        let o = git(&g).args(args).output().expect("git");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    run(&["init", "-q"]);
    fs::write(g.join("old.txt"), text(30)).unwrap();
    fs::write(g.join("keep.txt"), "kept\n").unwrap();
    run(&["add", "-A"]);
    run(&["commit", "-qm", "a"]);
    fs::remove_file(g.join("old.txt")).unwrap();
    fs::create_dir_all(g.join("dir")).unwrap();
    fs::write(
        g.join("dir/new.txt"),
        text(30).replace("line 5\n", "FIVE\n"),
    )
    .unwrap();
    run(&["add", "-A"]);
    run(&["commit", "-qm", "b"]);
    g
}

fn git_diff(g: &Path, args: &[&str]) -> String {
    let o = git(g)
        .args(["diff", "--no-color", "--no-ext-diff"])
        .args(args)
        .args(["HEAD~", "HEAD"])
        .output()
        .expect("git diff");
    String::from_utf8(o.stdout).unwrap()
}

/// A patch's lines without `index` lines (rewind's ids are BLAKE3, git's SHA-1).
fn no_index(p: &str) -> Vec<&str> {
    p.lines().filter(|l| !l.starts_with("index ")).collect()
}

#[test]
fn diff_pairs_a_moved_and_edited_file_as_git_does() {
    let env = Env::new();
    let (a, b) = moved_and_edited(&env);
    let g = git_twin(&env);
    for (ours, theirs) in [
        (vec!["--name-status"], vec!["--name-status"]),
        (vec!["--numstat"], vec!["--numstat"]),
        (vec!["--stat"], vec!["--stat"]),
        (vec![], vec![]),
        (
            vec!["-M97%", "--name-status"],
            vec!["-M97%", "--name-status"],
        ),
        (
            vec!["--find-renames=90%", "--name-status"],
            vec!["--find-renames=90%", "--name-status"],
        ),
        (vec!["-M9", "--name-status"], vec!["-M9", "--name-status"]),
        (
            vec!["--no-renames", "--name-status"],
            vec!["--no-renames", "--name-status"],
        ),
    ] {
        let mut args = vec!["diff", a.as_str(), b.as_str()];
        args.extend(&ours);
        let got = env.ok(&args);
        let want = git_diff(&g, &theirs);
        assert_eq!(no_index(&got), no_index(&want), "{ours:?}");
    }
    let names = env.ok(&["diff", &a, &b, "--name-status"]);
    assert_eq!(names, "R096\told.txt\tdir/new.txt\n");
    let patch = env.ok(&["diff", &a, &b]);
    assert!(patch.contains("similarity index 96%\nrename from old.txt\nrename to dir/new.txt\n"));

    // git apply and GNU patch both take it: a copy of A becomes B.
    let pfile = env.tmp.path().join("p.diff");
    fs::write(&pfile, &patch).unwrap();
    let check = |dir: &Path, who: &str| {
        assert!(!dir.join("old.txt").exists(), "{who}: the old name is gone");
        assert_eq!(
            fs::read_to_string(dir.join("dir/new.txt")).unwrap(),
            text(30).replace("line 5\n", "FIVE\n"),
            "{who}"
        );
        assert_eq!(fs::read_to_string(dir.join("keep.txt")).unwrap(), "kept\n");
    };
    for who in ["git apply", "patch -p1"] {
        let dir = env.tmp.path().join(who.replace(' ', "-"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("old.txt"), text(30)).unwrap();
        fs::write(dir.join("keep.txt"), "kept\n").unwrap();
        let mut cmd = if who == "git apply" {
            let mut c = git(&dir);
            c.arg("apply").arg(&pfile);
            c
        } else {
            let mut c = Command::new("patch");
            c.current_dir(&dir)
                .args(["-p1", "--batch", "--quiet", "-i"])
                .arg(&pfile);
            c
        };
        let o = cmd.stdin(Stdio::null()).output().expect(who);
        assert!(
            o.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        check(&dir, who);
    }

    // A bad threshold is a usage error naming it.
    let (code, err) = env.fails(&["diff", "-M=abc", &a, &b]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("'abc'"), "{err}");
}

#[test]
fn log_and_blame_follow_a_rename_with_edits() {
    let env = Env::new();
    let (a, b) = moved_and_edited(&env);
    let log = json(&env, &["log", "--", "dir/new.txt"]);
    let rows = log.as_array().expect("rows");
    assert_eq!(rows.len(), 2, "followed back to old.txt: {log}");
    assert_eq!(rows[0]["change"]["status"], "renamed", "{log}");
    assert_eq!(rows[0]["change"]["old_path"], "old.txt", "{log}");
    let blame = json(&env, &["blame", "dir/new.txt"]);
    let lines = blame["lines"].as_array().expect("lines");
    let snap = |i: usize| lines[i]["snapshot"].as_str().unwrap_or("").to_string();
    assert!(
        snap(0).starts_with(&a[..12]),
        "line 1 predates the move: {}",
        lines[0]
    );
    assert!(
        snap(4).starts_with(&b[..12]),
        "line 5 was changed with it: {}",
        lines[4]
    );
}

#[test]
fn revert_takes_back_a_rename_with_edits_and_keeps_later_work() {
    let env = Env::new();
    let (a, b) = moved_and_edited(&env);
    // Later work on the moved file, not snapshotted.
    let later = text(30)
        .replace("line 5\n", "FIVE\n")
        .replace("line 20\n", "TWENTY\n");
    env.write("dir/new.txt", later.as_bytes());
    env.ok(&["revert", &a, &b]);
    assert!(!env.path("dir/new.txt").exists());
    assert_eq!(
        fs::read_to_string(env.path("old.txt")).unwrap(),
        text(30).replace("line 20\n", "TWENTY\n"),
        "moved back, its edit undone, the later edit kept"
    );
}
