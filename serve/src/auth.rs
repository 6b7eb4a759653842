//! The bearer token: generated once into the store directory (`serve.token`, mode 0600) and
//! required on every request when the server listens beyond loopback (or when asked). It is
//! compared in constant time, so response timing says nothing about how much of a guess was
//! right.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::error::ApiError;

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
pub fn matches(token: &str, given: &str) -> bool {
    token.len() == given.len() && bool::from(token.as_bytes().ct_eq(given.as_bytes()))
}

/// The token a request carries: `Authorization: Bearer T`, or `?token=T` (EventSource in a
/// browser cannot set headers).
fn presented(req: &Request) -> Option<String> {
    if let Some(h) = req.headers().get(axum::http::header::AUTHORIZATION) {
        let h = h.to_str().ok()?;
        let (scheme, t) = h.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| t.trim().to_string());
    }
    req.uri().query().and_then(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == "token")
            .map(|(_, v)| v.to_string())
    })
}

/// Middleware: refuses a request without the right token (401 `unauthorized`).
pub async fn require(State(token): State<std::sync::Arc<String>>, req: Request, next: Next) -> Response {
    match presented(&req) {
        Some(t) if matches(&token, &t) => next.run(req).await,
        Some(_) => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "wrong token (see serve.token in the store directory)",
        )
        .into_response(),
        None => {
            let mut r = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a token is required: Authorization: Bearer TOKEN (serve.token in the store directory)",
            )
            .into_response();
            r.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
            r
        }
    }
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
        let mode = std::fs::metadata(token_path(d.path())).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create(d.path()).unwrap(), t);
        assert!(matches(&t, &t.clone()));
        assert!(!matches(&t, &t[..63]));
        assert!(!matches(&t, &format!("{}0", &t[..63])) || t.ends_with('0'));
    }
}
