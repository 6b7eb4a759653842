//! The JSON API under `/v1`: the route table (openapi.json documents it; a test compares the
//! two) and what the handlers share: running blocking library calls off the async threads,
//! finding workspaces, resolving revisions, the JSON shapes.

mod artifacts;
mod diff;
mod edits;
mod overlays;
mod read;
mod run;
pub(crate) mod stream;

use std::path::PathBuf;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodRouter, delete, get, post, put};
use rewind::Workspace;
use rewind::{Id, Rev, Store};

use crate::AppState;
use crate::error::{ApiError, ApiResult};

/// Largest JSON body.
const JSON_LIMIT: usize = 16 << 20;
/// Largest patch (`apply` reads it whole: the library plans every file in memory).
const PATCH_LIMIT: usize = 256 << 20;

/// Every API route: method, path (axum's syntax) and handler. The router is built from this
/// table and the OpenAPI test compares it with serve/openapi.json, so neither can drift.
pub fn table() -> Vec<(&'static str, &'static str, MethodRouter<AppState>)> {
    vec![
        ("GET", "/v1/health", get(read::health)),
        ("GET", "/v1/openapi.json", get(openapi)),
        ("GET", "/v1/workspaces", get(read::workspaces)),
        ("POST", "/v1/workspaces", post(edits::init)),
        ("GET", "/v1/workspaces/{ws}", get(read::workspace_get)),
        ("GET", "/v1/workspaces/{ws}/snapshots", get(read::snapshots)),
        (
            "POST",
            "/v1/workspaces/{ws}/snapshots",
            post(edits::take_snapshot),
        ),
        (
            "GET",
            "/v1/workspaces/{ws}/snapshots/{rev}",
            get(read::show),
        ),
        ("GET", "/v1/workspaces/{ws}/tree/{rev}", get(read::tree)),
        (
            "GET",
            "/v1/workspaces/{ws}/files/{rev}/{*path}",
            get(read::file),
        ),
        ("GET", "/v1/workspaces/{ws}/status", get(diff::status)),
        ("GET", "/v1/workspaces/{ws}/diff", get(diff::diff)),
        ("POST", "/v1/workspaces/{ws}/restore", post(edits::restore)),
        ("POST", "/v1/workspaces/{ws}/revert", post(edits::revert)),
        (
            "POST",
            "/v1/workspaces/{ws}/apply",
            post(edits::apply).layer(DefaultBodyLimit::max(PATCH_LIMIT)),
        ),
        ("POST", "/v1/workspaces/{ws}/undo", post(edits::undo)),
        ("POST", "/v1/workspaces/{ws}/redo", post(edits::redo)),
        ("GET", "/v1/workspaces/{ws}/ops", get(read::ops)),
        ("GET", "/v1/workspaces/{ws}/sessions", get(read::sessions)),
        ("GET", "/v1/workspaces/{ws}/runs", get(read::runs)),
        ("POST", "/v1/workspaces/{ws}/run", post(run::run)),
        (
            "GET",
            "/v1/workspaces/{ws}/overlays",
            get(overlays::list_of_workspace),
        ),
        (
            "POST",
            "/v1/workspaces/{ws}/overlays",
            post(overlays::create),
        ),
        ("GET", "/v1/overlays", get(overlays::list)),
        ("GET", "/v1/overlays/{ov}", get(overlays::show)),
        (
            "DELETE",
            "/v1/overlays/{ov}",
            delete(overlays::drop_overlay),
        ),
        ("GET", "/v1/overlays/{ov}/diff", get(overlays::diff)),
        ("GET", "/v1/overlays/{ov}/runs", get(overlays::runs)),
        ("POST", "/v1/overlays/{ov}/run", post(overlays::run)),
        ("POST", "/v1/overlays/{ov}/accept", post(overlays::accept)),
        ("POST", "/v1/overlays/{ov}/reject", post(overlays::reject)),
        ("POST", "/v1/overlays/{ov}/split", post(overlays::split)),
        (
            "POST",
            "/v1/overlays/{ov}/snapshots",
            post(overlays::snapshot),
        ),
        ("GET", "/v1/artifacts", get(artifacts::list)),
        ("GET", "/v1/artifacts/{*key}", get(artifacts::get)),
        // Streamed to the store: no body limit.
        (
            "PUT",
            "/v1/artifacts/{*key}",
            put(artifacts::put).layer(DefaultBodyLimit::disable()),
        ),
        ("DELETE", "/v1/artifacts/{*key}", delete(artifacts::remove)),
        ("GET", "/v1/runs/{run}", get(run::show)),
        ("GET", "/v1/events", get(crate::events::sse)),
    ]
}

/// The OpenAPI document (serve/openapi.json), as built into the server.
const OPENAPI: &str = include_str!("../../openapi.json");

/// `GET /v1/openapi.json`: the document describing this API, so a client can check what the
/// server it talks to offers.
async fn openapi() -> impl axum::response::IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
}

/// The API's routes, from [`table`], each behind [`crate::guard::route`] (the server's policy
/// and the body's type).
pub fn routes(state: &AppState) -> Router<AppState> {
    table()
        .into_iter()
        .fold(Router::new(), |r, (_, path, handler)| {
            r.route(path, handler)
        })
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::guard::route,
        ))
        .layer(DefaultBodyLimit::max(JSON_LIMIT))
}

/// Runs `f` on tokio's blocking pool (the library does file and database I/O).
pub(crate) async fn blocking<T, F>(st: &AppState, f: F) -> ApiResult<T>
where
    T: Send + 'static,
    F: FnOnce(&AppState) -> ApiResult<T> + Send + 'static,
{
    let st = st.clone();
    tokio::task::spawn_blocking(move || f(&st))
        .await
        .map_err(|e| ApiError::internal(format!("a handler failed: {e}")))?
}

/// The workspace with id `ws`.
pub(crate) fn workspace(store: &Store, ws: u64) -> ApiResult<Workspace> {
    store
        .reader()?
        .workspaces()?
        .into_iter()
        .find(|w| w.id() == ws)
        .ok_or_else(|| ApiError::not_found(format!("no workspace with id {ws}")))
}

/// A workspace's root directory.
pub(crate) fn root_of(w: &Workspace) -> PathBuf {
    w.root()
}

/// A revision of workspace `root` (`@`, `@~2`, a tag, a hex prefix), or `live` when allowed.
pub(crate) fn rev(store: &Store, root: &std::path::Path, text: &str, live: bool) -> ApiResult<Rev> {
    if text == "live" {
        return if live {
            Ok(Rev::Live)
        } else {
            Err(ApiError::bad_request("`live` is not a snapshot here"))
        };
    }
    Ok(Rev::Snapshot(snapshot_id(store, root, text)?))
}

/// A snapshot of workspace `root`, by any revision syntax.
pub(crate) fn snapshot_id(store: &Store, root: &std::path::Path, text: &str) -> ApiResult<Id> {
    Ok(rewind::revision::resolve(
        &store.reader()?,
        text,
        Some(root),
    )?)
}

/// Lossy UTF-8 of a path (JSON strings).
pub(crate) fn text(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

/// The tags of every snapshot, by id.
pub(crate) fn tags_by_id(store: &Store) -> ApiResult<std::collections::HashMap<Id, Vec<String>>> {
    let mut m: std::collections::HashMap<Id, Vec<String>> = std::collections::HashMap::new();
    for (name, id) in store.reader()?.tags()? {
        m.entry(id).or_default().push(name);
    }
    Ok(m)
}

/// Query values that may repeat (`path=a&path=b`): axum's `Query` takes one value per key.
pub(crate) fn query_all(q: Option<&str>, key: &str) -> Vec<String> {
    let Some(q) = q else { return Vec::new() };
    form_urlencoded::parse(q.as_bytes())
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .collect()
}

/// Repeated `meta=KEY=VALUE` query values.
pub(crate) fn query_meta(q: Option<&str>) -> ApiResult<Vec<(String, String)>> {
    query_all(q, "meta")
        .into_iter()
        .map(|m| match m.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => Err(ApiError::bad_request(format!(
                "meta={m}: expected KEY=VALUE"
            ))),
        })
        .collect()
}
