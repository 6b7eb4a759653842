//! `rewind serve`: one store over HTTP. A versioned JSON API (`/v1/...`, see serve/openapi.json),
//! server-sent events (`/v1/events`) and the review page at `/`. Every handler calls the rewind
//! library (blocking calls on tokio's blocking pool); nothing shells out to the CLI.
//!
//! Trust: the API runs commands and writes files as the server's user, so nothing reaches a
//! handler before [`guard`] has checked it. Every request carries the bearer token (see
//! [`auth`]), whatever the address: loopback TCP is open to every local user and, through a
//! browser, to every web page. Only a Unix socket may go without it, its 0600 mode being the
//! guard then. Over TCP the `Host` header must name the server (DNS rebinding), and a request a
//! web page could send without asking (another origin, a form's or `text/plain` body) is
//! refused.

#![deny(missing_docs)]

pub mod access_log;
pub mod api;
pub mod auth;
pub mod error;
pub mod events;
pub mod guard;
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
    /// Serve without the token. Refused unless `listen` is a Unix socket.
    pub no_token: bool,
    /// Host names a request's `Host` may carry besides the listening address (a reverse
    /// proxy's name, say); `NAME` matches any port, `NAME:PORT` that port only.
    pub allow_hosts: Vec<String>,
    /// Refuse every request that would change the store or a workspace.
    pub read_only: bool,
    /// Refuse the requests that run a command.
    pub no_run: bool,
    /// How long a writer waits for another process's write transaction.
    pub lock_timeout: Duration,
    /// Where the access log goes (`-`: stderr); none without.
    pub access_log: Option<PathBuf>,
}

/// Where the server ended up listening, once it does.
#[derive(Clone, Debug)]
pub struct Bound {
    /// `http://127.0.0.1:PORT`, or the socket path.
    pub url: String,
    /// The token file, when a token is required.
    pub token_file: Option<PathBuf>,
    /// The token, when one is required (for the review page's login link, which only a
    /// terminal should show).
    pub token: Option<String>,
}

/// What the server refuses beyond what the token and the guard refuse.
#[derive(Clone, Copy, Debug, Default)]
pub struct Policy {
    /// No request that changes anything.
    pub read_only: bool,
    /// No request that runs a command.
    pub no_run: bool,
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: rewind::Store,
    token: Option<String>,
    hosts: Option<guard::Hosts>,
    policy: Policy,
    lock_timeout: Duration,
    runs: runs::Runs,
    events: events::Hub,
}

impl AppState {
    /// The shared state over an open store. With `token`, every request but the login page
    /// and assets must carry it; with `hosts`, a request's `Host` must be one of them (None:
    /// a Unix socket, which no browser reaches).
    pub fn new(
        store: rewind::Store,
        token: Option<String>,
        hosts: Option<guard::Hosts>,
        policy: Policy,
        lock_timeout: Duration,
    ) -> AppState {
        AppState {
            inner: Arc::new(Inner {
                store,
                token,
                hosts,
                policy,
                lock_timeout,
                runs: runs::Runs::default(),
                events: events::Hub::default(),
            }),
        }
    }

    /// The open store, shared by every request (reads, and writes the operation log does not
    /// record).
    pub fn store(&self) -> &rewind::Store {
        &self.inner.store
    }

    /// A handle of its own for one request's operation, so that the operation log records
    /// who asked (`caller`'s actor) and what (`command`). Blocking: call it off the async
    /// threads.
    pub fn store_for(
        &self,
        caller: &guard::Caller,
        command: Vec<String>,
    ) -> rewind::Result<rewind::Store> {
        rewind::Store::open(self.inner.store.dir(), self.store_options(caller, command))
    }

    /// The options [`AppState::store_for`] opens a handle with.
    pub fn store_options(
        &self,
        caller: &guard::Caller,
        command: Vec<String>,
    ) -> rewind::StoreOptions {
        rewind::StoreOptions {
            create: false,
            lock_timeout: self.inner.lock_timeout,
            command,
            actor: Some(caller.actor.clone()),
            ..rewind::StoreOptions::default()
        }
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

    /// The `Host` values accepted (None: not checked, on a Unix socket).
    pub fn hosts(&self) -> Option<&guard::Hosts> {
        self.inner.hosts.as_ref()
    }

    /// What the server refuses by configuration.
    pub fn policy(&self) -> Policy {
        self.inner.policy
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

/// The whole application: the review page and the API, behind the guard (host, origin,
/// token) and, for the API, each route's own rules (body type, read-only, no-run).
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(page::routes())
        .merge(api::routes(&state))
        .fallback(|| async {
            error::ApiError::not_found(
                "no such route (the API is under /v1; see serve/openapi.json)",
            )
        })
        .layer(axum::middleware::from_fn(error::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check,
        ))
        .with_state(state)
}

/// [`router`] behind the access log, when there is one.
fn app(state: AppState, log: &Option<access_log::Sink>) -> Router {
    let r = router(state);
    match log {
        Some(sink) => {
            let sink = sink.clone();
            r.layer(axum::middleware::from_fn(move |req, next| {
                access_log::log(sink.clone(), req, next)
            }))
        }
        None => r,
    }
}

/// Errors that stop the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// From the library.
    #[error(transparent)]
    Lib(#[from] rewind::Error),
    /// Options that would leave the server open to anyone who can reach it.
    #[error("{0}")]
    Unsafe(String),
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
    if opts.no_token && !matches!(opts.listen, Listen::Unix(_)) {
        return Err(ServeError::Unsafe(
            "serving without the token is allowed only on a Unix socket (--socket): over TCP, \
             every local user and every web page open in a browser could run commands as you"
                .into(),
        ));
    }
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
    let (token, token_file) = if opts.no_token {
        (None, None)
    } else {
        let token = auth::load_or_create(&opts.store_dir).map_err(io_err(format!(
            "the token file in {}",
            opts.store_dir.display()
        )))?;
        (Some(token), Some(auth::token_path(&opts.store_dir)))
    };
    let policy = Policy {
        read_only: opts.read_only,
        no_run: opts.no_run,
    };
    let log = match &opts.access_log {
        Some(path) => Some(
            access_log::open(path).map_err(io_err(format!("the access log {}", path.display())))?,
        ),
        None => None,
    };
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
            let hosts = guard::Hosts::new(local, &opts.allow_hosts);
            let state = AppState::new(store, token.clone(), Some(hosts), policy, opts.lock_timeout);
            let app = app(state.clone(), &log).into_make_service_with_connect_info::<SocketAddr>();
            tokio::spawn(events::tail_oplog(state));
            ready(&Bound {
                url: format!("http://{local}"),
                token_file,
                token,
            });
            // Without TCP_NODELAY a small streamed body (headers, then the bytes in a second
            // write) waits for the client's delayed ACK: ~40 ms per request on kept-alive
            // connections (benches/serve.sh measured 104 req/s for a 727-byte file).
            let l = axum::serve::ListenerExt::tap_io(l, guard::nodelay);
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
            // Created owner-only (the umask at bind), not made so after: without the token the
            // mode is the guard, and a chmod after the bind leaves a moment without it.
            // SAFETY: umask has no memory effects; it is restored at once.
            let old = unsafe { libc::umask(0o177) };
            let bound = tokio::net::UnixListener::bind(&path);
            unsafe { libc::umask(old) };
            let l = bound.map_err(io_err(format!("listening on {}", path.display())))?;
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .map_err(io_err(format!("{}", path.display())))?;
            }
            let state = AppState::new(store, token.clone(), None, policy, opts.lock_timeout);
            let app = app(state.clone(), &log).into_make_service_with_connect_info::<guard::Peer>();
            tokio::spawn(events::tail_oplog(state));
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
