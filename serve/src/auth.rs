//! The bearer token: generated once into the store directory (`serve.token`, mode 0600) and
//! required on every request (only a Unix socket may go without it; [`crate::guard`] checks
//! it). It is compared in constant time, so response timing says nothing about how much of a
//! guess was right.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use axum::http::HeaderMap;
use subtle::ConstantTimeEq;

/// The token file's name inside the store directory.
pub const TOKEN_FILE: &str = "serve.token";

/// The token file of the store in `dir`.
pub fn token_path(dir: &Path) -> PathBuf {
    dir.join(TOKEN_FILE)
}

/// Reads the store's token, creating it (32 random bytes, hex; owner-only) when missing.
pub fn load_or_create(dir: &Path) -> std::io::Result<String> {
    let path = token_path(dir);
    match std::fs::read_to_string(&path) {
        Ok(t) if t.trim().len() >= 32 => return Ok(t.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut raw = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut raw)?;
    let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    // Written beside and renamed, created 0600 from the start: never readable by others,
    // never half written.
    let tmp = dir.join(format!(".{TOKEN_FILE}.{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(token.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    Ok(token)
}

/// Whether `given` is the token, in time independent of where they differ.
pub fn matches(token: &[u8], given: &[u8]) -> bool {
    token.len() == given.len() && bool::from(token.ct_eq(given))
}

/// How a request proved it knows the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// `Authorization: Bearer T`.
    Header,
    /// The review page's cookie `rewind_token=T`.
    Cookie,
    /// `?token=T` (only the event stream takes it: see [`crate::guard`]).
    Query,
}

/// The token a request carries: `Authorization: Bearer T`, the review page's cookie
/// `rewind_token=T`, or `?token=T` in `query`.
pub(crate) fn presented(headers: &HeaderMap, query: Option<&str>) -> Option<(String, Via)> {
    if let Some(h) = headers.get(axum::http::header::AUTHORIZATION) {
        let h = h.to_str().ok()?;
        let (scheme, t) = h.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| (t.trim().to_string(), Via::Header));
    }
    for h in headers.get_all(axum::http::header::COOKIE) {
        let Ok(h) = h.to_str() else { continue };
        for c in h.split(';') {
            if let Some(t) = c.trim().strip_prefix("rewind_token=") {
                return Some((t.to_string(), Via::Cookie));
            }
        }
    }
    query_token(query).map(|t| (t.to_string(), Via::Query))
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v)
}

/// Whether the query string carries a token.
pub(crate) fn in_query(query: Option<&str>) -> bool {
    query_token(query).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_created_owner_only_and_kept() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let t = load_or_create(d.path()).unwrap();
        assert_eq!(t.len(), 64);
        let mode = std::fs::metadata(token_path(d.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create(d.path()).unwrap(), t);
        assert!(matches(t.as_bytes(), t.clone().as_bytes()));
        assert!(!matches(t.as_bytes(), &t.as_bytes()[..63]));
        assert!(!matches(t.as_bytes(), b"x"));
    }
}
