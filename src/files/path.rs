//! Workspace-relative paths: raw bytes, '/'-separated, never absolute, the form tree entries
//! and the oplog store them in.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A workspace-relative path (raw bytes, '/'-separated) as a filesystem path under `root`.
pub fn join_rel(root: &Path, rel: &[u8]) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(OsStr::from_bytes(rel))
    }
}

/// Splits a relative path into its parent directory and its last component.
pub fn split_parent(rel: &[u8]) -> (&[u8], &[u8]) {
    match rel.iter().rposition(|&b| b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (&[], rel),
    }
}

/// Joins a parent relative path and a name.
pub fn child_path(parent: &[u8], name: &[u8]) -> Vec<u8> {
    if parent.is_empty() {
        name.to_vec()
    } else {
        let mut p = Vec::with_capacity(parent.len() + 1 + name.len());
        p.extend_from_slice(parent);
        p.push(b'/');
        p.extend_from_slice(name);
        p
    }
}

/// A relative path for display (lossy for non-UTF-8 bytes).
pub fn display(rel: &[u8]) -> String {
    String::from_utf8_lossy(rel).into_owned()
}

/// `path` equals `prefix` or lies below it.
pub fn is_under(path: &[u8], prefix: &[u8]) -> bool {
    prefix.is_empty()
        || path == prefix
        || (path.starts_with(prefix) && path.get(prefix.len()) == Some(&b'/'))
}

/// The exact bytes of a path that is not UTF-8, in base64 (standard alphabet, padded): what
/// JSON output puts in `path_bytes` beside the lossy `path`. `None` for UTF-8 paths, whose
/// `path` is already exact.
pub fn path_bytes(rel: &[u8]) -> Option<String> {
    use base64::Engine;
    std::str::from_utf8(rel)
        .is_err()
        .then(|| base64::engine::general_purpose::STANDARD.encode(rel))
}
