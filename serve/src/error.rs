//! Errors as JSON: `{"code": "...", "error": "..."}` with an HTTP status. `code` is stable (a
//! client branches on it); the sentence is for people. A library error's status and code follow
//! its [`ErrorKind`]; the conditions are the CLI's exit code 2.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rewind::Error;
use rewind::error::ErrorKind;

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
        ApiError::new(status, code, e.full_message())
    }
}

/// The status and code of a library error: the error's kind decides, and a few conditions of
/// the server's own store get a code of their own (a client can say "the store is gone" or "the
/// disk is full" rather than "internal").
fn classify(e: &Error) -> (StatusCode, &'static str) {
    use StatusCode as S;
    match e {
        Error::BadPath { .. } => return (S::BAD_REQUEST, "path_outside"),
        Error::NoStore(_) => return (S::SERVICE_UNAVAILABLE, "no_store"),
        Error::ReadOnlyStore { .. } => return (S::SERVICE_UNAVAILABLE, "read_only_store"),
        Error::DiskFull(_) => return (S::INSUFFICIENT_STORAGE, "disk_full"),
        Error::Remote { .. } => return (S::BAD_GATEWAY, "remote_failed"),
        // The store's file was changed outside rewind: not the request's fault, and not a bug
        // of the server; a client tells it apart to point its user at verify and a remote.
        Error::DamagedPage { .. } | Error::Damaged { .. } => {
            return (S::INTERNAL_SERVER_ERROR, "store_damaged");
        }
        _ => {}
    }
    match e.kind() {
        ErrorKind::NotFound => (S::NOT_FOUND, "not_found"),
        ErrorKind::Invalid => (S::BAD_REQUEST, "bad_request"),
        ErrorKind::Conflict => (S::CONFLICT, "conflict"),
        ErrorKind::Busy => (S::LOCKED, "locked"),
        ErrorKind::Damaged => (S::INTERNAL_SERVER_ERROR, "damaged"),
        ErrorKind::Environment => (S::SERVICE_UNAVAILABLE, "unavailable"),
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

#[cfg(test)]
mod tests {
    use super::classify;
    use axum::http::StatusCode as S;
    use rewind::Error;
    use std::path::PathBuf;

    /// The server's own store conditions get their own status and code, not 500 "internal".
    #[test]
    fn store_conditions_have_their_own_codes() {
        let cases = [
            (
                Error::NoStore(PathBuf::from("/s")),
                S::SERVICE_UNAVAILABLE,
                "no_store",
            ),
            (
                Error::ReadOnlyStore {
                    path: PathBuf::from("/s"),
                    why: "EROFS".into(),
                },
                S::SERVICE_UNAVAILABLE,
                "read_only_store",
            ),
            (
                Error::DiskFull(std::io::Error::from_raw_os_error(28)),
                S::INSUFFICIENT_STORAGE,
                "disk_full",
            ),
            (
                Error::RemoteBusy {
                    remote: "r".into(),
                    holder: "gc on host h".into(),
                },
                S::LOCKED,
                "locked",
            ),
            (
                Error::Remote {
                    remote: "r".into(),
                    why: "connection refused".into(),
                },
                S::BAD_GATEWAY,
                "remote_failed",
            ),
        ];
        for (e, status, code) in cases {
            assert_eq!(classify(&e), (status, code), "{e}");
        }
    }

    /// Every kind has its status: one error of each.
    #[test]
    fn kinds_decide_the_status() {
        let cases = [
            (
                Error::UnknownRevision("zz".into()),
                S::NOT_FOUND,
                "not_found",
            ),
            (Error::NothingToForget, S::BAD_REQUEST, "bad_request"),
            (Error::TagTaken("v1".into()), S::CONFLICT, "conflict"),
            (Error::ConcurrentGc("snapshot"), S::LOCKED, "locked"),
            (
                Error::Corrupt {
                    kind: "tree",
                    id: "ab".into(),
                    why: "bad".into(),
                },
                S::INTERNAL_SERVER_ERROR,
                "damaged",
            ),
            (
                Error::NamespaceUnavailable("no userns".into()),
                S::SERVICE_UNAVAILABLE,
                "unavailable",
            ),
            (
                Error::Internal("a worker panicked".into()),
                S::INTERNAL_SERVER_ERROR,
                "internal",
            ),
        ];
        for (e, status, code) in cases {
            assert_eq!(classify(&e), (status, code), "{e}");
        }
    }

    /// The sentence carries the causes the error's own message does not say.
    #[test]
    fn the_body_keeps_the_cause() {
        let e = Error::Db(redb::Error::Corrupted("page 7".into()));
        let api = super::ApiError::from(e);
        assert_eq!(api.message, "store database error: DB corrupted: page 7");
        assert_eq!(api.code, "damaged");
    }
}
