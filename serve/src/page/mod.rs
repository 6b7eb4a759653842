//! The review page at `/` (owned by the page work; the API lives beside it in `api/`).

use axum::Router;
use axum::response::Html;
use axum::routing::get;

use crate::AppState;

/// The page's routes, merged into the application's router.
pub fn routes() -> Router<AppState> {
    Router::new().route("/", get(index))
}

async fn index() -> Html<&'static str> {
    Html("<!doctype html><title>rewind</title><p>rewind serve: the review page comes here.</p>")
}
