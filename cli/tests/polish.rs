//! The smaller things a new user met: broken pipes, exit codes that disagree, messages that
//! name the wrong thing, help text, `diff --summary`/`--shortstat`, plurals, `-q`, `--json`
//! everywhere (usage errors included), and `init /`.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::*;
use serde_json::Value;

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
fn artifact_get_into_a_closed_pipe_exits_0() {
    let env = Env::new();
    let big = env.tmp.path().join("big.txt");
    let line = "a line of text in a big artifact\n".repeat(200_000);
    fs::write(&big, &line).unwrap();
    env.ok(&["artifact", "put", "big", big.to_str().unwrap()]);
    let mut child = env
        .cmd()
        .args(["artifact", "get", "big"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert_eq!(first, "a line of text in a big artifact\n");
    } // `head -1` closes the pipe here.
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn overlay_accept_with_markers_exits_like_apply_with_markers() {
    let env = Env::new();
    env.write("clash.txt", b"base\n");
    env.ok(&["snapshot", "-q"]);
    let id = env
        .ok(&["overlay", "create", "--backend", "copy", "-q"])
        .trim()
        .to_string();
    env.ok(&[
        "overlay",
        "run",
        &id,
        "--",
        "sh",
        "-c",
        "echo overlay > clash.txt",
    ]);
    env.write("clash.txt", b"workspace\n");
    let out = env
        .cmd()
        .args(["overlay", "accept", &id, "--conflict=markers"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "conflict markers written exit 1, as `apply --conflict=markers` does: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = fs::read_to_string(env.path("clash.txt")).unwrap();
    assert!(merged.contains("<<<<<<<"), "{merged}");
}

#[test]
fn undo_names_what_is_wrong() {
    let env = Env::new();
    env.write("a.txt", b"1\n");
    let first = env.ok(&["snapshot", "-q"]).trim().to_string();
    env.write("a.txt", b"2\n");
    env.ok(&["snapshot", "-q"]);
    let (code, err) = env.fails(&["undo", "9999"]);
    assert_eq!(code, 2);
    assert!(err.contains("no operation 9999"), "{err}");
    // An operation that exists but is a snapshot: it changed nothing to take back.
    let (_, err) = env.fails(&["undo", "1"]);
    assert!(err.contains("did not change"), "{err}");

    // The snapshots an operation needs are forgotten: say so in words.
    env.ok(&["restore", &first]);
    let ops = json(&env.ok(&["op", "log", "--json"]));
    let restore_op = ops[0]["id"].as_u64().unwrap();
    env.write("a.txt", b"3\n");
    env.ok(&["snapshot", "-q"]);
    env.write("a.txt", b"4\n");
    env.ok(&["snapshot", "-q"]);
    env.ok(&["forget", "--keep-last", "1", "--undo-depth", "0"]);
    let (code, err) = env.fails(&["undo", &restore_op.to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("forgotten"), "{err}");
    assert!(err.contains(&format!("operation {restore_op}")), "{err}");
}

#[test]
fn run_without_double_dash_hints_at_it() {
    let env = Env::new();
    let (code, err) = env.fails(&["run", "python3"]);
    assert_eq!(
        code, 125,
        "run's usage errors are rewind's own failures: {err}"
    );
    assert!(err.contains("rewind run -- python3"), "{err}");
}

#[test]
fn help_shows_each_default_once() {
    let env = Env::new();
    for args in [
        &["show", "--help"][..],
        &["apply", "--help"],
        &["run", "--help"],
    ] {
        let help = env.ok(args);
        for (i, line) in help.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.starts_with("[default:") {
                let prev = help.lines().take(i).filter(|l| !l.trim().is_empty()).last();
                assert!(
                    !prev.is_some_and(|p| p.contains("[default:")),
                    "{args:?}: a default shown twice near: {line}\n{help}"
                );
            }
        }
        assert!(!help.contains("[default: \"\"]"), "{args:?}\n{help}");
    }
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = crate::git::git(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.quotepath=on",
        ])
        .args(args)
        .output()
        .expect("git is needed for this test");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn diff_summary_lists_creates_deletes_like_git_and_shortstat_gives_totals() {
    let env = Env::new();
    git(&env.ws, &["init", "-q"]);
    env.write("keep.txt", b"1\n2\n");
    env.write("gone.txt", b"x\n");
    env.write("run.sh", b"echo\n");
    env.write("dir/old name.txt", b"moved content\n");
    let a = env.ok(&["snapshot", "-q"]).trim().to_string();
    git(&env.ws, &["add", "-A"]);
    git(&env.ws, &["commit", "-qm", "a"]);
    env.write("keep.txt", b"1\nTWO\n");
    fs::remove_file(env.path("gone.txt")).unwrap();
    env.write("new.txt", b"n\n");
    set_exec(&env.path("run.sh"), true);
    fs::rename(env.path("dir/old name.txt"), env.path("dir/new.txt")).unwrap();
    let b = env.ok(&["snapshot", "-q"]).trim().to_string();
    git(&env.ws, &["add", "-A"]);
    git(&env.ws, &["commit", "-qm", "b"]);

    let summary = env.ok(&["diff", &a, &b, "--summary"]);
    assert!(
        summary.contains(" delete mode 100644 gone.txt"),
        "{summary}"
    );
    assert!(summary.contains(" create mode 100644 new.txt"), "{summary}");
    let theirs = git(&env.ws, &["diff", "-M", "--summary", "HEAD~1", "HEAD"]);
    assert_eq!(summary, theirs);

    let short = env.ok(&["diff", &a, &b, "--shortstat"]);
    let theirs = git(&env.ws, &["diff", "-M", "--shortstat", "HEAD~1", "HEAD"]);
    assert_eq!(short, theirs);
    assert_eq!(short.lines().count(), 1);
}

#[test]
fn one_file_is_not_files() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";
    let mut cmd = env.cmd();
    cmd.arg("apply");
    let out = crate::common::with_stdin(cmd, patch.as_bytes());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("applied 1 file") && !text.contains("1 files"),
        "{text}"
    );
}

#[test]
fn gc_quiet_prints_nothing() {
    let env = Env::new();
    env.write("a.txt", b"a\n");
    env.ok(&["snapshot", "-q"]);
    let out = env.ok(&["gc", "-q"]);
    assert_eq!(out, "");
}

#[test]
fn json_everywhere_cat_overlay_run_and_usage_errors() {
    let env = Env::new();
    env.write("a.txt", b"hello\n");
    env.write("bin.dat", &[0u8, 159, 146, 150]);
    env.ok(&["snapshot", "-q"]);
    let v = json(&env.ok(&["cat", "@", "a.txt", "--json"]));
    assert_eq!(v["path"], "a.txt");
    assert_eq!(v["content"], "hello\n");
    assert_eq!(v["encoding"], "utf-8");
    let v = json(&env.ok(&["cat", "@", "bin.dat", "--json"]));
    assert_eq!(v["encoding"], "base64");
    assert_eq!(v["content"], "AJ+Slg==");

    // Errors of overlay run follow --json.
    let out = env
        .cmd()
        .args(["overlay", "run", "nosuch", "--json", "--", "true"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    assert!(v["error"].as_str().unwrap().contains("nosuch"), "{v}");

    // Usage errors, too.
    for args in [&["--json", "bogus"][..], &["log", "--json", "--nonsense"]] {
        let out = env.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v = json(&String::from_utf8_lossy(&out.stdout));
        assert!(v["error"].as_str().is_some(), "{v}");
    }
    // --help and --version are not errors.
    let out = env.cmd().args(["--json", "--version"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn init_of_the_root_is_refused_before_a_store_is_created() {
    let env = Env::new();
    let out = rewind_bin()
        .arg("--store")
        .arg(&env.store)
        .args(["-C", "/", "init"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!env.store.exists(), "a refused init created the store");
    let out = rewind_bin()
        .arg("--store")
        .arg(&env.store)
        .args(["-C", "/", "snapshot"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!env.store.exists(), "a refused snapshot created the store");
}
