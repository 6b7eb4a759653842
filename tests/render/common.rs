//! Shared helpers: real git repositories in temp dirs, no mocks.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use rewind::diff::EntryKind;

/// One tree entry for a scratch repository.
#[derive(Clone, Debug)]
pub struct Entry {
    pub path: Vec<u8>,
    pub kind: EntryKind,
    pub content: Vec<u8>,
}

pub fn e(path: &[u8], kind: EntryKind, content: &[u8]) -> Entry {
    Entry {
        path: path.to_vec(),
        kind,
        content: content.to_vec(),
    }
}

/// A deterministic stand-in for the BLAKE3 id: distinct contents get
/// distinct ids, which is all the renderer relies on.
pub fn fake_id(content: &[u8]) -> [u8; 32] {
    let mut id = [0u8; 32];
    for (i, chunk) in id.chunks_mut(8).enumerate() {
        let mut h = DefaultHasher::new();
        (i, content).hash(&mut h);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    id
}

/// `git` with a clean, deterministic configuration (the shared helper, tests/support/git.rs).
pub use crate::git::git;

pub fn run(c: &mut Command) -> Vec<u8> {
    let out = c.output().expect("spawn");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{c:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn write_entry(root: &Path, en: &Entry) {
    let p = root.join(OsStr::from_bytes(&en.path));
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    match en.kind {
        EntryKind::Symlink => {
            std::os::unix::fs::symlink(OsStr::from_bytes(&en.content), &p).unwrap()
        }
        _ => {
            std::fs::write(&p, &en.content).unwrap();
            use std::os::unix::fs::PermissionsExt;
            let mode = if en.kind == EntryKind::Executable {
                0o755
            } else {
                0o644
            };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
}

/// Commits `before`, stages `after` and returns `git diff --cached <args>`.
pub fn git_diff(before: &[Entry], after: &[Entry], args: &[&str]) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    run(git(&root).args(["init", "-q", "."]));
    for en in before {
        write_entry(&root, en);
    }
    run(git(&root).args(["add", "-A"]));
    run(git(&root).args(["commit", "-q", "--allow-empty", "-m", "1"]));
    for en in before {
        let p = root.join(OsStr::from_bytes(&en.path));
        std::fs::remove_file(p).unwrap();
    }
    for en in after {
        write_entry(&root, en);
    }
    run(git(&root).args(["add", "-A"]));
    run(git(&root).args(["diff", "--cached"]).args(args))
}

/// Replaces the hashes of `index` lines (git's SHA-1 or our ids) by `H`,
/// keeping the all-zero id visible, so outputs compare line by line.
pub fn mask_index(patch: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(patch)
        .split_inclusive('\n')
        .map(|l| {
            let (pre, rest) = match l.find("index ") {
                Some(p) if p <= 4 && !l.contains("similarity") => l.split_at(p + 6),
                _ => return l.to_string(),
            };
            let mut parts = rest.splitn(2, ' ');
            let ids = parts.next().unwrap_or("");
            let tail = parts.next().map(|t| format!(" {t}")).unwrap_or_default();
            let masked: Vec<&str> = ids
                .trim_end_matches('\n')
                .split("..")
                .map(|h| {
                    if h.trim_start_matches('0').is_empty() {
                        "Z"
                    } else {
                        "H"
                    }
                })
                .collect();
            let nl = if tail.is_empty() && l.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            format!("{pre}{}{tail}{nl}", masked.join(".."))
        })
        .collect()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn path_of(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}
