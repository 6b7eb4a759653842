//! Helpers shared by the integration tests: generators for small texts and
//! wrappers around the real `git` and GNU `diff` binaries.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;

/// The shared isolated `git` (tests/support/git.rs), with C locale messages.
pub fn git(dir: &Path) -> Command {
    let mut cmd = crate::git::git(dir);
    cmd.env("LC_ALL", "C");
    cmd
}

/// Runs a command that exits 0 or 1 (diff-like) and returns stdout.
pub fn run_diff(cmd: &mut Command) -> Vec<u8> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "{cmd:?} failed: {code:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `diff -u old new` in `dir`.
pub fn gnu_diff(dir: &Path, old: &str, new: &str) -> Vec<u8> {
    run_diff(
        Command::new("diff")
            .current_dir(dir)
            .env("LC_ALL", "C")
            .args(["-u", old, new]),
    )
}

/// `git diff --no-index old new` in `dir`.
pub fn git_diff(dir: &Path, old: &str, new: &str) -> Vec<u8> {
    run_diff(git(dir).args([
        "diff",
        "--no-index",
        "--no-color",
        "--no-ext-diff",
        old,
        new,
    ]))
}

/// `git merge-file -p ours base theirs`: (conflict count, stdout).
pub fn git_merge_file(dir: &Path, base: &[u8], ours: &[u8], theirs: &[u8]) -> (i32, Vec<u8>) {
    std::fs::write(dir.join("base"), base).unwrap();
    std::fs::write(dir.join("ours"), ours).unwrap();
    std::fs::write(dir.join("theirs"), theirs).unwrap();
    let out = git(dir)
        .args(["merge-file", "-p", "ours", "base", "theirs"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!((0..128).contains(&code), "merge-file failed: {code}");
    (code, out.stdout)
}

/// A line from a 4-word alphabet, sometimes with CRLF.
fn line() -> impl Strategy<Value = Vec<u8>> {
    (0u8..4, prop::bool::weighted(0.15)).prop_map(|(w, crlf)| {
        let mut l = vec![b'a' + w];
        l.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        l
    })
}

/// Lines of a small text.
pub fn lines(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(line(), 0..max)
}

/// Joins lines, dropping the final newline if `final_newline` is false.
pub fn join(lines: &[Vec<u8>], final_newline: bool) -> Vec<u8> {
    let mut out: Vec<u8> = lines.concat();
    if !final_newline && out.last() == Some(&b'\n') {
        out.pop();
    }
    out
}

/// One random edit: (position fraction, delete count, inserted lines).
pub type Edit = (u8, usize, Vec<Vec<u8>>);

pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(
        (any::<u8>(), 0usize..3, prop::collection::vec(line(), 0..3)),
        0..4,
    )
}

/// Applies random edits to a line list.
pub fn edit(base: &[Vec<u8>], edits: &[Edit]) -> Vec<Vec<u8>> {
    let mut out = base.to_vec();
    for (at, del, ins) in edits {
        let pos = (*at as usize * (out.len() + 1)) / 256;
        let end = (pos + del).min(out.len());
        out.splice(pos..end, ins.iter().cloned());
    }
    out
}
