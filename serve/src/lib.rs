//! `rewind serve`: one store over HTTP. A versioned JSON API (`/v1/...`), server-sent events
//! and the review page at `/`. Every handler calls the rewind library (blocking calls on
//! tokio's blocking pool); nothing shells out to the CLI.

#![deny(missing_docs)]

pub mod page;

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Listen {
    /// A TCP address (`127.0.0.1:7878`; port 0 picks a free port).
    Tcp(std::net::SocketAddr),
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
    /// Require the bearer token even on loopback.
    pub require_token: bool,
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    store: rewind::Store,
}

impl AppState {
    /// The shared state over an open store.
    pub fn new(store: rewind::Store) -> AppState {
        AppState {
            inner: Arc::new(Inner { store }),
        }
    }

    /// The open store.
    pub fn store(&self) -> &rewind::Store {
        &self.inner.store
    }
}

/// The whole application: the review page and the API.
pub fn router(state: AppState) -> Router {
    Router::new().merge(page::routes()).with_state(state)
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

/// Runs the server until it is stopped (SIGINT/SIGTERM).
pub async fn serve(opts: ServeOptions) -> Result<(), ServeError> {
    let dir = opts.store_dir.clone();
    let store = tokio::task::spawn_blocking(move || {
        rewind::Store::open(&dir, rewind::StoreOptions::default())
    })
    .await
    .map_err(|e| ServeError::Io {
        what: "opening the store".into(),
        source: std::io::Error::other(e),
    })??;
    let app = router(AppState::new(store));
    match opts.listen {
        Listen::Tcp(addr) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| ServeError::Io {
                    what: format!("listening on {addr}"),
                    source,
                })?;
            axum::serve(l, app).await.map_err(|source| ServeError::Io {
                what: "serving".into(),
                source,
            })
        }
        Listen::Unix(path) => {
            let l = tokio::net::UnixListener::bind(&path).map_err(|source| ServeError::Io {
                what: format!("listening on {}", path.display()),
                source,
            })?;
            axum::serve(l, app).await.map_err(|source| ServeError::Io {
                what: "serving".into(),
                source,
            })
        }
    }
}
