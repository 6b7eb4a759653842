//! What a request must pass before any handler sees it, and who it came from.
//!
//! The API runs commands and writes files as the server's user, and a loopback port is open to
//! more than that user: every local account, and every web page in a browser on the machine.
//! So, in this order:
//!
//! 1. `Host` (TCP only) must name this server: a loopback or the bound address with the
//!    listening port, `localhost:PORT`, or a name allowed by the operator. A page that rebinds
//!    its own DNS name to 127.0.0.1 reaches the port, but its requests carry its name.
//! 2. A request a browser marks as coming from another origin (`Origin`, or `Sec-Fetch-Site`
//!    other than same-origin on anything but a page navigation) is refused: another port of
//!    127.0.0.1 is another origin but the *same site*, so the page's SameSite cookie alone
//!    would not stop it.
//! 3. The token (see [`crate::auth`]), on every route but the login page and its assets. In the
//!    query string (`?token=`) only for `GET /v1/events`: an `EventSource` cannot set headers,
//!    and a write's URL should not hold a secret that logs and histories keep.
//! 4. A write from a browser (it has an `Origin`, or it used the page's cookie) must carry the
//!    page's header `X-Rewind-Page: 1`, which neither a form nor a no-cors `fetch` can send.
//!
//! Then, per API route ([`route`]): the server's policy (read-only, no commands) and the body's
//! declared type. `text/plain`, form and multipart bodies are what a page may send anywhere
//! without asking the server first; no route takes one.

use std::net::{IpAddr, SocketAddr};

use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use tokio::net::{TcpStream, UnixListener};

use crate::AppState;
use crate::auth::{self, Via};
use crate::error::ApiError;
use rewind::wire::ErrorCode;

/// Where a connection to a Unix socket came from (a TCP connection's is its address).
#[derive(Clone, Debug)]
pub struct Peer(pub String);

impl Connected<IncomingStream<'_, UnixListener>> for Peer {
    fn connect_info(s: IncomingStream<'_, UnixListener>) -> Peer {
        match s.io().peer_cred() {
            Ok(c) => Peer(format!("uid {} on the socket", c.uid())),
            Err(_) => Peer("the socket".into()),
        }
    }
}

/// Who sent `req`: the TCP peer's address, or the Unix socket peer's description.
pub fn peer_of(req: &Request) -> String {
    let ext = req.extensions();
    match (
        ext.get::<ConnectInfo<SocketAddr>>(),
        ext.get::<ConnectInfo<Peer>>(),
    ) {
        (Some(a), _) => a.0.to_string(),
        (None, Some(p)) => p.0.0.clone(),
        (None, None) => "an unknown peer".to_string(),
    }
}

/// Sets TCP_NODELAY on an accepted connection (only latency is at stake; the connection works
/// either way).
pub fn nodelay(tcp: &mut TcpStream) {
    let _ = tcp.set_nodelay(true);
}

/// Who made a request, as the operation log records it: the credential and the peer.
#[derive(Clone, Debug)]
pub struct Caller {
    /// `serve token from 127.0.0.1:41234`, `no token, uid 1000 on the socket`, ...
    pub actor: String,
    /// The request line: `POST`, `/v1/workspaces/1/apply`.
    pub method: String,
    /// The request's path.
    pub path: String,
}

impl Caller {
    /// The command line the operation log records for this request: `rewind serve METHOD
    /// PATH`, then `extra` (a run's `--` and command).
    pub fn command(&self, extra: &[String]) -> Vec<String> {
        let mut c = vec![
            "rewind".to_string(),
            "serve".to_string(),
            self.method.clone(),
            self.path.clone(),
        ];
        c.extend_from_slice(extra);
        c
    }
}

/// The actor [`check`] found, kept on the request for [`Caller`].
#[derive(Clone, Debug)]
struct Actor(String);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, ApiError> {
        let actor = parts
            .extensions
            .get::<Actor>()
            .map(|a| a.0.clone())
            .ok_or_else(|| ApiError::internal("a request that did not pass the guard"))?;
        Ok(Caller {
            actor,
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
        })
    }
}

/// The `Host` values a TCP server answers.
#[derive(Clone, Debug)]
pub struct Hosts {
    bound: SocketAddr,
    /// Allowed names, lower case, each with the port it must come with (None: any).
    names: Vec<(String, Option<u16>)>,
}

impl Hosts {
    /// The server bound to `bound`, also answering to `names` (`NAME` or `NAME:PORT`).
    pub fn new(bound: SocketAddr, names: &[String]) -> Hosts {
        let names = names
            .iter()
            .filter_map(|n| split_host(n))
            .map(|(n, p)| (n.trim_end_matches('.').to_ascii_lowercase(), p))
            .collect();
        Hosts { bound, names }
    }

    /// Whether a request with `Host: host` is meant for this server.
    pub fn allows(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if self
            .names
            .iter()
            .any(|(n, p)| *n == name && p.is_none_or(|p| Some(p) == port))
        {
            return true;
        }
        if port.unwrap_or(80) != self.bound.port() {
            return false;
        }
        if name == "localhost" {
            return true;
        }
        // An address, not a name: DNS rebinding cannot put one into a page's requests. Bound
        // to every address, a client may use any of the machine's.
        name.parse::<IpAddr>().is_ok_and(|ip| {
            ip == self.bound.ip() || ip.is_loopback() || self.bound.ip().is_unspecified()
        })
    }
}

/// `name:port`, `[v6]:port`, or either without the port.
fn split_host(h: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = h.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?.parse().ok()?),
        };
        return Some((ip, port));
    }
    match h.rsplit_once(':') {
        Some((n, p)) => Some((n, Some(p.parse().ok()?))),
        None if h.is_empty() => None,
        None => Some((h, None)),
    }
}

fn header(h: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

fn safe(m: &Method) -> bool {
    matches!(*m, Method::GET | Method::HEAD)
}

fn unauthorized(message: String) -> Response {
    let mut r =
        ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message).into_response();
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Bearer"),
    );
    r
}

/// Routes open without the token: the page's login form and its static assets.
fn open_route(path: &str) -> bool {
    path == "/login" || path == "/favicon.ico" || path.starts_with("/assets/")
}

/// Middleware: the checks of the module's description, in its order; a request that passes
/// carries its [`Caller`].
pub async fn check(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let h = req.headers();
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    // HTTP/1.1 puts the host in `Host`; an absolute request URI carries it instead.
    let host = header(h, header::HOST)
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if let Some(hosts) = st.hosts() {
        match &host {
            Some(name) if hosts.allows(name) => {}
            Some(name) => {
                return ApiError::new(
                    StatusCode::MISDIRECTED_REQUEST,
                    ErrorCode::HostNotAllowed,
                    format!(
                        "Host {name:?} does not name this server ({}, localhost:{} or a name \
                         allowed with --allow-host): a web page that points its own name at \
                         this address is refused",
                        hosts.bound,
                        hosts.bound.port()
                    ),
                )
                .into_response();
            }
            None => {
                return ApiError::new(
                    StatusCode::MISDIRECTED_REQUEST,
                    ErrorCode::HostNotAllowed,
                    "a request without a Host header",
                )
                .into_response();
            }
        }
    }

    let origin = header(h, header::ORIGIN).map(str::to_string);
    if let Some(o) = &origin {
        // The page's own origin names the host the request went to (`https://` behind a
        // proxy that ends TLS).
        let named = o
            .strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"));
        let same = matches!((named, &host), (Some(n), Some(h)) if n.eq_ignore_ascii_case(h));
        if !same {
            return cross_origin(&format!("a request from the page at {o}"));
        }
    }
    let site = header(h, "sec-fetch-site");
    let navigation = safe(&method) && header(h, "sec-fetch-mode") == Some("navigate");
    if let Some(site @ ("cross-site" | "same-site")) = site
        && !navigation
    {
        return cross_origin(&format!("a {site} request by a web page"));
    }

    let peer = peer_of(&req);
    let in_query = auth::in_query(req.uri().query());
    let actor = if open_route(&path) {
        format!("unauthenticated, from {peer}")
    } else if !st.token_required() {
        format!("no token, {peer}")
    } else {
        if in_query && !(method == Method::GET && path == "/v1/events") {
            return unauthorized(format!(
                "{method} {path}: a token in the URL is accepted only by GET /v1/events (an \
                 EventSource cannot set headers); send Authorization: Bearer TOKEN"
            ));
        }
        let wants_html = header(h, header::ACCEPT).is_some_and(|v| v.contains("text/html"));
        match auth::presented(req.headers(), req.uri().query()) {
            Some((t, via)) if st.token_matches(t.as_bytes()) => {
                if via == Via::Cookie && !safe(&method) && !page_header(req.headers()) {
                    return page_header_missing();
                }
                match via {
                    Via::Cookie => format!("serve token (review page) from {peer}"),
                    _ => format!("serve token from {peer}"),
                }
            }
            _ if !path.starts_with("/v1/") && wants_html => {
                return axum::response::Redirect::to("/login").into_response();
            }
            Some(_) => {
                return unauthorized("wrong token (see serve.token in the store directory)".into());
            }
            None => {
                return unauthorized(
                    "a token is required: Authorization: Bearer TOKEN (serve.token in the store \
                     directory)"
                        .into(),
                );
            }
        }
    };
    // A browser's write (the login form aside, which sends only the token) must come from the
    // page's script.
    if !safe(&method) && origin.is_some() && path != "/login" && !page_header(req.headers()) {
        return page_header_missing();
    }
    req.extensions_mut().insert(Actor(actor));
    next.run(req).await
}

fn page_header(h: &HeaderMap) -> bool {
    header(h, "x-rewind-page") == Some("1")
}

fn page_header_missing() -> Response {
    ApiError::new(
        StatusCode::FORBIDDEN,
        ErrorCode::Forbidden,
        "a write from a browser needs the review page's header X-Rewind-Page: 1",
    )
    .into_response()
}

fn cross_origin(what: &str) -> Response {
    ApiError::new(
        StatusCode::FORBIDDEN,
        ErrorCode::CrossOrigin,
        format!("{what}: only this server's own page may call it from a browser"),
    )
    .into_response()
}

/// The body types an API route takes (empty: it takes no body).
pub fn body_types(method: &Method, template: &str) -> &'static [&'static str] {
    match (method.as_str(), template) {
        ("POST", "/v1/workspaces/{ws}/apply") => &["text/x-diff", "text/x-patch"],
        ("PUT", "/v1/artifacts/{*key}") => &["application/octet-stream"],
        ("DELETE", _) => &[],
        _ => &["application/json"],
    }
}

/// Whether an API route runs a command.
pub fn runs_command(method: &Method, template: &str) -> bool {
    *method == Method::POST
        && matches!(
            template,
            "/v1/workspaces/{ws}/run" | "/v1/overlays/{ov}/run"
        )
}

/// Route middleware of the API: the server's policy, then the body's declared type, for
/// every request but GET and HEAD.
pub async fn route(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    if safe(&method) {
        return next.run(req).await;
    }
    let template = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    let path = req.uri().path().to_string();
    let policy = st.policy();
    if policy.read_only {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::ReadOnly,
            format!("{method} {path}: this server is read-only (rewind serve --read-only)"),
        )
        .into_response();
    }
    if policy.no_run && runs_command(&method, &template) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::RunsDisabled,
            format!("{method} {path}: this server runs no commands (rewind serve --no-run)"),
        )
        .into_response();
    }
    let wanted = body_types(&method, &template);
    let given = header(req.headers(), header::CONTENT_TYPE).map(|t| {
        t.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    });
    let fits = match &given {
        None => wanted.is_empty(),
        Some(t) => wanted.contains(&t.as_str()),
    };
    if !fits {
        let given = given.as_deref().unwrap_or("none");
        let wanted = match wanted {
            [] => "none".to_string(),
            w => w.join(" or "),
        };
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedMediaType,
            format!(
                "{method} {path}: Content-Type {given}; this route takes {wanted} (text/plain, \
                 form and multipart bodies are what any web page can send, so no route takes \
                 them)"
            ),
        )
        .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_name_this_server_only() {
        let h = Hosts::new("127.0.0.1:7878".parse().unwrap(), &["box.lan".into()]);
        for ok in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST:7878",
            "[::1]:7878",
            "127.0.0.2:7878",
            "box.lan",
            "box.lan:443",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example.com:7878",
            "evil.example.com",
            "127.0.0.1:7879",
            "127.0.0.1",
            "localhost",
            "10.0.0.1:7878",
            "",
            "[::1",
            "localhost.evil:7878",
        ] {
            assert!(!h.allows(bad), "{bad}");
        }
        let any = Hosts::new("0.0.0.0:80".parse().unwrap(), &["proxy:8080".into()]);
        assert!(any.allows("10.0.0.1"));
        assert!(any.allows("proxy:8080"));
        assert!(!any.allows("proxy:8081"));
        assert!(!any.allows("evil.example.com"));
    }
}
