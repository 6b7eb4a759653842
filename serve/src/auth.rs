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
pub fn matches(token: &[u8], given: &[u8]) -> bool {
    token.len() == given.len() && bool::from(token.ct_eq(given))
}

/// How a request proved it knows the token.
#[derive(PartialEq, Eq)]
enum Via {
    Header,
    Cookie,
    Query,
}

/// The token a request carries: `Authorization: Bearer T`, the review page's cookie
/// `rewind_token=T`, or `?token=T` (EventSource in a browser cannot set headers).
fn presented(req: &Request) -> Option<(String, Via)> {
    if let Some(h) = req.headers().get(axum::http::header::AUTHORIZATION) {
        let h = h.to_str().ok()?;
        let (scheme, t) = h.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| (t.trim().to_string(), Via::Header));
    }
    for h in req.headers().get_all(axum::http::header::COOKIE) {
        let Ok(h) = h.to_str() else { continue };
        for c in h.split(';') {
            if let Some(t) = c.trim().strip_prefix("rewind_token=") {
                return Some((t.to_string(), Via::Cookie));
            }
        }
    }
    req.uri().query().and_then(|q| {
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == "token")
            .map(|(_, v)| (v.to_string(), Via::Query))
    })
}

/// Routes open without the token: the page's login form and its static assets.
fn open_route(path: &str) -> bool {
    path == "/login" || path.starts_with("/assets/")
}

fn refuse(message: &'static str) -> Response {
    let mut r = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response();
    r.headers_mut().insert(
        axum::http::header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Bearer"),
    );
    r
}

/// Middleware: when the server has a token, refuses a request without it (401
/// `unauthorized`; a page request from a browser is sent to `/login` instead). A write
/// authenticated by the page's cookie must also carry `X-Rewind-Page: 1`, which a cross-site
/// form cannot send.
pub async fn require(State(st): State<crate::AppState>, req: Request, next: Next) -> Response {
    if !st.token_required() || open_route(req.uri().path()) {
        return next.run(req).await;
    }
    let page = !req.uri().path().starts_with("/v1/");
    let wants_html = req
        .headers()
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    match presented(&req) {
        Some((t, via)) if st.token_matches(t.as_bytes()) => {
            let safe = matches!(req.method().as_str(), "GET" | "HEAD");
            if via == Via::Cookie
                && !safe
                && req.headers().get("x-rewind-page").is_none_or(|v| v != "1")
            {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    "a write with the page's cookie needs the header X-Rewind-Page: 1",
                )
                .into_response();
            }
            next.run(req).await
        }
        _ if page && wants_html => axum::response::Redirect::to("/login").into_response(),
        Some(_) => refuse("wrong token (see serve.token in the store directory)"),
        None => refuse(
            "a token is required: Authorization: Bearer TOKEN (serve.token in the store directory)",
        ),
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
