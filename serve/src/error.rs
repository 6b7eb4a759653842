//! Errors as JSON: `{"code": "...", "error": "..."}` with an HTTP status. `code` is stable (a
//! client branches on it); the sentence is for people. The conditions are the CLI's exit code 2.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rewind::Error;

/// An API error: a status, a stable code and a sentence.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code (see api docs / openapi.json `Error`).
    pub code: &'static str,
    /// What went wrong, for people.
    pub message: String,
}

/// What handlers return.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error of `status` and `code`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400 `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 400 `path_outside`: a path parameter that could reach outside its workspace.
    pub fn path_outside(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "path_outside", message)
    }

    /// 500 `internal`.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let (status, code) = classify(&e);
        ApiError::new(status, code, e.to_string())
    }
}

/// The status and code of a library error.
fn classify(e: &Error) -> (StatusCode, &'static str) {
    use StatusCode as S;
    match e {
        Error::NoWorkspace(_)
        | Error::UnknownRevision(_)
        | Error::NoSnapshots(_)
        | Error::PathNotInSnapshot { .. }
        | Error::NoOverlay(_)
        | Error::NoArtifact(_)
        | Error::NoOperation { .. }
        | Error::OverlayDropped(_)
        | Error::WorkspaceVanished(_)
        | Error::NoRemote(_) => (S::NOT_FOUND, "not_found"),
        Error::AmbiguousRevision { .. }
        | Error::Invalid(_)
        | Error::PatchParse(_)
        | Error::BadGlob { .. }
        | Error::UnknownHunk { .. }
        | Error::NoSuchHunk { .. }
        | Error::NoCommand
        | Error::InvalidArtifactKey(..)
        | Error::RevisionOutOfRange { .. }
        | Error::UnmatchedPaths { .. }
        | Error::NeedsWorkspace(_)
        | Error::NotADirectory(_)
        | Error::DangerousWorkspace(_)
        | Error::WorkspaceInStore { .. }
        | Error::Strict(_) => (S::BAD_REQUEST, "bad_request"),
        Error::PatchFailed { .. }
        | Error::Conflict { .. }
        | Error::ChangedSince { .. }
        | Error::OverlayChanged(_)
        | Error::OverlayBusy { .. }
        | Error::NothingToUndo { .. }
        | Error::TagExists { .. }
        | Error::TagTaken(_)
        | Error::ArtifactExists(_)
        | Error::OverlayExists(_)
        | Error::WouldOverwriteIgnored { .. }
        | Error::ForeignSnapshot { .. }
        | Error::Contract(_)
        | Error::ConcurrentGc(_)
        | Error::RemoteExists { .. }
        | Error::StateForgotten { .. }
        | Error::RejectedOverlayGone(_) => (S::CONFLICT, "conflict"),
        Error::BadPath { .. } => (S::BAD_REQUEST, "path_outside"),
        Error::LockTimeout(..) => (S::LOCKED, "locked"),
        // The store's file was changed outside rewind: not the request's fault, and not a bug
        // of the server; a client tells it apart to point its user at verify and a remote.
        Error::DamagedPage { .. } | Error::Damaged { .. } | Error::Corrupt { .. } => {
            (S::INTERNAL_SERVER_ERROR, "store_damaged")
        }
        _ => (S::INTERNAL_SERVER_ERROR, "internal"),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "code": self.code, "error": self.message });
        (self.status, Json(body)).into_response()
    }
}

/// A rejected query string or JSON body, as `bad_request` (axum's own rejections are text).
impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> ApiError {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError::new(r.status(), "payload_too_large", r.body_text());
        }
        ApiError::bad_request(r.body_text())
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(r: axum::extract::rejection::QueryRejection) -> ApiError {
        ApiError::bad_request(r.body_text())
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(r: axum::extract::rejection::PathRejection) -> ApiError {
        ApiError::bad_request(r.body_text())
    }
}

/// Middleware: an error response axum made itself (a path that does not parse, a method the
/// route does not take, a body too large) becomes the same JSON as every other error.
pub async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let r = next.run(req).await;
    let status = r.status();
    let is_json = r
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| {
            v.as_bytes().starts_with(b"application/json") || v.as_bytes().starts_with(b"text/html")
        });
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return r;
    }
    let code = match status {
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "bad_request",
        s if s.is_client_error() => "bad_request",
        _ => "internal",
    };
    let (parts, body) = r.into_parts();
    let text = axum::body::to_bytes(body, 64 << 10)
        .await
        .unwrap_or_default();
    let message = match String::from_utf8_lossy(&text).trim() {
        "" => status.canonical_reason().unwrap_or("error").to_string(),
        t => t.to_string(),
    };
    let mut out = ApiError::new(status, code, message).into_response();
    if let Some(allow) = parts.headers.get(axum::http::header::ALLOW) {
        out.headers_mut()
            .insert(axum::http::header::ALLOW, allow.clone());
    }
    out
}
