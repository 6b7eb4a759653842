//! Path parameters: every path a request names is checked here before the library sees it.
//! A workspace-relative path must be relative, `/`-separated, without `.`, `..` or empty
//! components, NUL or backslash; axum has already percent-decoded it, so `%2e%2e` arrives as
//! `..` and is refused like it. On the live tree, a symlink on the way is refused too
//! (rewind's `lstat_beneath`/`checked_path`, which never follow one).

use std::path::{Path, PathBuf};

use rewind::files::RelPath;

use crate::error::{ApiError, ApiResult};

/// A workspace-relative path from a request, as the library's checked [`RelPath`].
pub fn rel_path(p: &str) -> ApiResult<RelPath> {
    let p = p.strip_suffix('/').unwrap_or(p);
    if p.is_empty() {
        return Err(ApiError::path_outside("an empty path"));
    }
    if p.starts_with('/') {
        return Err(ApiError::path_outside(format!(
            "{p}: an absolute path (paths are relative to the workspace)"
        )));
    }
    if p.contains('\0') || p.contains('\\') {
        return Err(ApiError::path_outside(format!(
            "{}: NUL or backslash in a path",
            p.escape_default()
        )));
    }
    for part in p.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(ApiError::path_outside(format!(
                "{p}: `.`, `..` and empty components are refused"
            )));
        }
    }
    RelPath::new(p.as_bytes()).map_err(|e| ApiError::path_outside(format!("{p}: {e}")))
}

/// Several paths (repeated `path=` or a JSON list); an empty list means "everything".
pub fn rel_paths(ps: &[String]) -> ApiResult<Vec<RelPath>> {
    ps.iter().map(|p| rel_path(p)).collect()
}

/// A path given by its exact bytes in base64 (`path_bytes`, `paths_bytes`): the form the JSON
/// output gives a name that is not UTF-8 in, so a client can name every path the CLI can. The
/// same checks as [`rel_path`].
pub fn rel_path_bytes(b64: &str) -> ApiResult<RelPath> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| ApiError::bad_request(format!("path_bytes {b64}: not base64 ({e})")))?;
    let shown = String::from_utf8_lossy(&bytes).into_owned();
    if bytes.contains(&b'\\') || bytes.contains(&0) {
        return Err(ApiError::path_outside(format!(
            "{}: NUL or backslash in a path",
            shown.escape_default()
        )));
    }
    if bytes.starts_with(b"/") {
        return Err(ApiError::path_outside(format!(
            "{shown}: an absolute path (paths are relative to the workspace)"
        )));
    }
    let trimmed = bytes.strip_suffix(b"/").unwrap_or(&bytes);
    if trimmed.is_empty()
        || trimmed
            .split(|&b| b == b'/')
            .any(|c| c.is_empty() || c == b"." || c == b"..")
    {
        return Err(ApiError::path_outside(format!(
            "{shown}: `.`, `..` and empty components are refused"
        )));
    }
    RelPath::new(trimmed.to_vec()).map_err(|e| ApiError::path_outside(format!("{shown}: {e}")))
}

/// The paths a request names: `text` (UTF-8 names) and `b64` (exact bytes, base64) together.
pub fn named_paths(text: &[String], b64: &[String]) -> ApiResult<Vec<RelPath>> {
    let mut out = rel_paths(text)?;
    for p in b64 {
        out.push(rel_path_bytes(p)?);
    }
    Ok(out)
}

/// The live file at `rel` in `root`, which must be a regular file reached through real
/// directories only (not a symlink itself either). The caller opens it with `O_NOFOLLOW`.
pub fn live_file(root: &Path, rel: &[u8]) -> ApiResult<PathBuf> {
    let shown = String::from_utf8_lossy(rel).into_owned();
    let full = rewind::files::join_rel(root, rel);
    match rewind::files::lstat_beneath(root, rel) {
        Some(m) if m.file_type().is_symlink() => Err(ApiError::path_outside(format!(
            "{shown}: a symlink (not followed)"
        ))),
        Some(m) if m.is_file() => Ok(full),
        Some(_) => Err(ApiError::bad_request(format!("{shown}: not a file"))),
        // Not there below real directories: through a symlinked parent, or not at all.
        None if std::fs::metadata(&full).is_ok() => Err(ApiError::path_outside(format!(
            "{shown}: reached through a symlink"
        ))),
        None => Err(ApiError::not_found(format!(
            "{shown}: no such file in the workspace"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_could_climb_out() {
        for bad in [
            "",
            "/etc/passwd",
            "..",
            "../x",
            "a/../../x",
            "a/./b",
            "a//b",
            "a\\..\\b",
            "a\0b",
            ".",
        ] {
            assert!(rel_path(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(rel_path("a/b.txt").unwrap().as_bytes(), b"a/b.txt");
        assert_eq!(rel_path("dir/").unwrap().as_bytes(), b"dir");
        assert_eq!(rel_path("..a/b..").unwrap().as_bytes(), b"..a/b..");
    }
}
