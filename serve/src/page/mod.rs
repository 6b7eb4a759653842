//! The review page at `/`: the store's workspaces, their snapshots and operation log, a diff
//! between any two points, and an overlay's pending changes with accept and reject per file
//! and per hunk.
//!
//! Every view is rendered here, in Rust, from the library (no client-side templating, no build
//! step); every string a user controls goes through [`html`]'s escaping. The buttons are the
//! only script: `assets/page.js` posts each button's API call (URL and JSON body written into
//! the button by the view) to the JSON API under `/v1` and reloads. Views:
//!
//! | route | what |
//! |---|---|
//! | `/` | the workspaces, with their overlays |
//! | `/w/{id}` | one workspace: overlays, snapshots, the op log, undo and redo, a compare form |
//! | `/w/{id}/diff?from=REV&to=REV` | a diff; `live` names the workspace as it is now |
//! | `/overlay/{id}` | an overlay's pending changes, to accept or reject (id or name) |
//! | `/login` | when the server requires its token: the token, once, into a cookie |

mod diffview;
mod highlight;
mod home;
mod html;
mod login;
mod overlay;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::AppState;

/// The page's routes, merged into the application's router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(home::index))
        .route("/w/{id}", get(home::workspace))
        .route("/w/{id}/diff", get(diffview::page))
        .route("/overlay/{id}", get(overlay::page))
        .route("/assets/page.css", get(css))
        .route("/assets/page.js", get(js))
        .route("/assets/favicon.svg", get(favicon))
        // Browsers ask for /favicon.ico on pages (an error page, say) without the link.
        .route("/favicon.ico", get(favicon))
        .route("/login", get(login::form).post(login::submit))
}

const CSS: &str = include_str!("../../assets/page.css");
const JS: &str = include_str!("../../assets/page.js");
const FAVICON: &str = include_str!("../../assets/favicon.svg");

async fn css() -> Response {
    asset("text/css; charset=utf-8", CSS)
}

async fn js() -> Response {
    asset("text/javascript; charset=utf-8", JS)
}

async fn favicon() -> Response {
    asset("image/svg+xml", FAVICON)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// A view that could not be rendered: shown as a page with the status and the reason.
#[derive(Debug)]
pub(crate) struct PageError {
    status: StatusCode,
    message: String,
}

/// The API's judgement of an error (its status), so a view and the API answer alike.
impl From<crate::error::ApiError> for PageError {
    fn from(e: crate::error::ApiError) -> PageError {
        PageError {
            status: e.status,
            message: e.body.text(),
        }
    }
}

impl From<rewind::Error> for PageError {
    fn from(e: rewind::Error) -> PageError {
        crate::error::ApiError::from(e).into()
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let body = layout(
            "error",
            &[],
            &format!(
                "<h1>{}</h1><pre class=\"errorbox\">{}</pre><p><a href=\"/\">All workspaces</a></p>",
                self.status,
                html::escape(&self.message)
            ),
        );
        (self.status, Html(body)).into_response()
    }
}

/// Renders a view on tokio's blocking pool (the library's calls read the disk and the store).
async fn render<F>(state: AppState, view: F) -> Result<Html<String>, PageError>
where
    F: FnOnce(&rewind::Store) -> Result<String, PageError> + Send + 'static,
{
    tokio::task::spawn_blocking(move || view(state.store()))
        .await
        .map_err(|e| PageError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("the view failed: {e}"),
        })?
        .map(Html)
}

/// One step of the breadcrumb trail: a link (None for the current page) and its label (raw
/// text; escaped here).
struct Crumb {
    href: Option<String>,
    label: String,
}

/// The page around a view: head, the top bar with the breadcrumb trail, the message area the
/// script writes into, and `body` (HTML the view escaped already).
fn layout(title: &str, crumbs: &[Crumb], body: &str) -> String {
    let mut nav = String::from("<a href=\"/\">workspaces</a>");
    for c in crumbs {
        nav.push_str(" / ");
        match &c.href {
            Some(h) => {
                nav.push_str("<a href=\"");
                nav.push_str(&html::escape(h));
                nav.push_str("\">");
                nav.push_str(&html::escape(&c.label));
                nav.push_str("</a>");
            }
            None => nav.push_str(&html::escape(&c.label)),
        }
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · rewind</title><link rel=\"stylesheet\" href=\"/assets/page.css\">\
         <link rel=\"icon\" type=\"image/svg+xml\" href=\"/assets/favicon.svg\">\
         </head><body>\
         <header class=\"top\"><span class=\"brand\">rewind</span><nav>{nav}</nav>\
         <span class=\"status\">keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd>/<kbd>r</kbd> accept/reject, \
         <kbd>A</kbd>/<kbd>R</kbd> whole file, <kbd>u</kbd> undo</span></header>\
         <main><div id=\"message\" role=\"status\"></div>{body}</main>\
         <script src=\"/assets/page.js\"></script></body></html>\n",
        title = html::escape(title),
    )
}

/// The JSON API routes the page's buttons call (the one place the page names them; the table is
/// in serve/openapi.json).
mod api {
    /// Undo the workspace's latest operation.
    pub(super) fn undo(ws: u64) -> String {
        format!("/v1/workspaces/{ws}/undo")
    }

    /// Redo the latest undo.
    pub(super) fn redo(ws: u64) -> String {
        format!("/v1/workspaces/{ws}/redo")
    }

    /// Accept an overlay's changes (body: `paths`, `hunks`).
    pub(super) fn accept(overlay: u64) -> String {
        format!("/v1/overlays/{overlay}/accept")
    }

    /// Reject an overlay's changes (body: `paths`, `hunks`).
    pub(super) fn reject(overlay: u64) -> String {
        format!("/v1/overlays/{overlay}/reject")
    }
}
