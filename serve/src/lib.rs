//! `rewind serve`: one store over HTTP. A versioned JSON API (`/v1/...`, see serve/openapi.json),
//! server-sent events (`/v1/events`) and the review page at `/`. Every handler calls the rewind
//! library (blocking calls on tokio's blocking pool); nothing shells out to the CLI.
//!
//! Listening: loopback TCP or a Unix socket by default, without a token; a non-loopback
//! address requires the bearer token (see [`auth`]) on every request.

#![deny(missing_docs)]

pub mod api;
pub mod auth;
pub mod error;
pub mod events;
pub mod page;
pub mod paths;
pub mod runs;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Listen {
    /// A TCP address (`127.0.0.1:7878`; port 0 picks a free port).
    Tcp(SocketAddr),
    /// A Unix socket path.
    Unix(PathBuf),
}

/// How to run the server.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The store directory.
    pub store_dir: PathBuf,
    /// Where to listen.
    pub listen: Listen,
    /// Require the bearer token even on loopback or a Unix socket.
    pub require_token: bool,
    /// How long a writer waits for another process's write transaction.
    pub lock_timeout: Duration,
}

/// Where the server ended up listening, once it does.
#[derive(Clone, Debug)]
pub struct Bound {
    /// `http://127.0.0.1:PORT`, or the socket path.
    pub url: String,
    /// The token file, when a token is required.
    pub token_file: Option<PathBuf>,
    /// The token, when one is required (for the review page's login link).
    pub token: Option<String>,
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: rewind::Store,
    token: Option<String>,
    runs: runs::Runs,
    events: events::Hub,
}

impl AppState {
    /// The shared state over an open store; with `token`, every request but the login page
    /// and assets must carry it.
    pub fn new(store: rewind::Store, token: Option<String>) -> AppState {
        AppState {
            inner: Arc::new(Inner {
                store,
                token,
                runs: runs::Runs::default(),
                events: events::Hub::default(),
            }),
        }
    }

    /// The open store.
    pub fn store(&self) -> &rewind::Store {
        &self.inner.store
    }

    /// Whether requests need the token.
    pub fn token_required(&self) -> bool {
        self.inner.token.is_some()
    }

    /// Whether `candidate` is the token (constant time); false when there is none.
    pub fn token_matches(&self, candidate: &[u8]) -> bool {
        self.inner
            .token
            .as_deref()
            .is_some_and(|t| auth::matches(t.as_bytes(), candidate))
    }

    /// The runs started through the API.
    pub fn runs(&self) -> &runs::Runs {
        &self.inner.runs
    }

    /// The event hub `/v1/events` subscribers read.
    pub fn events(&self) -> &events::Hub {
        &self.inner.events
    }
}

/// The whole application: the review page and the API, behind the token check (a no-op
/// when the state has no token).
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(page::routes())
        .merge(api::routes())
        .fallback(|| async {
            error::ApiError::not_found(
                "no such route (the API is under /v1; see serve/openapi.json)",
            )
        })
        .layer(axum::middleware::from_fn(error::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require,
        ))
        .with_state(state)
}

/// Errors that stop the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// From the library.
    #[error(transparent)]
    Lib(#[from] rewind::Error),
    /// Binding or serving failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(opts: ServeOptions) -> Result<(), ServeError> {
    serve_with(opts, |_| {}).await
}

/// Runs the server until SIGINT or SIGTERM, calling `ready` once it listens.
pub async fn serve_with(opts: ServeOptions, ready: impl FnOnce(&Bound)) -> Result<(), ServeError> {
    let dir = opts.store_dir.clone();
    let sopts = rewind::StoreOptions {
        create: false,
        lock_timeout: opts.lock_timeout,
        command: vec!["rewind".into(), "serve".into()],
        ..rewind::StoreOptions::default()
    };
    let store = tokio::task::spawn_blocking(move || rewind::Store::open(&dir, sopts))
        .await
        .map_err(|e| io_err("opening the store")(std::io::Error::other(e)))??;
    let need_token =
        opts.require_token || matches!(&opts.listen, Listen::Tcp(a) if !a.ip().is_loopback());
    let (token, token_file) = if need_token {
        let token = auth::load_or_create(&opts.store_dir).map_err(io_err(format!(
            "the token file in {}",
            opts.store_dir.display()
        )))?;
        (Some(token), Some(auth::token_path(&opts.store_dir)))
    } else {
        (None, None)
    };
    let state = AppState::new(store, token.clone());
    let app = router(state.clone());
    tokio::spawn(events::tail_oplog(state));
    let shutdown = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
        }
    };
    match opts.listen {
        Listen::Tcp(addr) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(io_err(format!("listening on {addr}")))?;
            let local = l.local_addr().map_err(io_err("the bound address"))?;
            ready(&Bound {
                url: format!("http://{local}"),
                token_file,
                token,
            });
            // Without TCP_NODELAY a small streamed body (headers, then the bytes in a second
            // write) waits for the client's delayed ACK: ~40 ms per request on kept-alive
            // connections (benches/serve.sh measured 104 req/s for a 727-byte file).
            let l = axum::serve::ListenerExt::tap_io(l, |tcp| {
                // Only latency is at stake; the connection works either way.
                let _ = tcp.set_nodelay(true);
            });
            run_until(axum::serve(l, app).into_future(), shutdown).await
        }
        Listen::Unix(path) => {
            if path.exists() {
                if std::os::unix::net::UnixStream::connect(&path).is_ok() {
                    return Err(io_err(format!("listening on {}", path.display()))(
                        std::io::Error::from(std::io::ErrorKind::AddrInUse),
                    ));
                }
                // A socket left by a server that died: nothing listens on it.
                let _ = std::fs::remove_file(&path);
            }
            let l = tokio::net::UnixListener::bind(&path)
                .map_err(io_err(format!("listening on {}", path.display())))?;
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .map_err(io_err(format!("{}", path.display())))?;
            }
            ready(&Bound {
                url: path.display().to_string(),
                token_file,
                token,
            });
            let r = run_until(axum::serve(l, app).into_future(), shutdown).await;
            let _ = std::fs::remove_file(&path);
            r
        }
    }
}

/// Serves until `shutdown`, then stops: open event streams are cut rather than waited for.
async fn run_until(
    server: impl std::future::Future<Output = std::io::Result<()>>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), ServeError> {
    tokio::select! {
        r = server => r.map_err(io_err("serving")),
        _ = shutdown => Ok(()),
    }
}
