//! Errors as JSON: [`rewind::wire::ErrorBody`] (`{"error", "code", "kind", "causes",
//! "hints"}`, the object the CLI prints with `--json`) with an HTTP status. `code` is stable (a
//! client branches on it); the sentence is for people. A library error's status follows its
//! code; the conditions are the CLI's exit code 2.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rewind::Error;
use rewind::wire::{ErrorBody, ErrorCode};

/// An API error: a status and the body.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What is answered.
    pub body: ErrorBody,
}

/// What handlers return.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error of `status` and `code`.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: ErrorBody::new(code, message),
        }
    }

    /// 400 `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, message)
    }

    /// 400 `path_outside`: a path parameter that could reach outside its workspace.
    pub fn path_outside(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::PathOutside, message)
    }

    /// 500 `internal`.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            message,
        )
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let body = ErrorBody::from(&e);
        ApiError {
            status: status_of(body.code),
            body,
        }
    }
}

/// The HTTP status of a library error's code.
fn status_of(code: ErrorCode) -> StatusCode {
    use ErrorCode as C;
    use StatusCode as S;
    match code {
        C::NotFound => S::NOT_FOUND,
        C::Conflict => S::CONFLICT,
        C::Locked => S::LOCKED,
        C::NoStore | C::ReadOnlyStore | C::Unavailable => S::SERVICE_UNAVAILABLE,
        C::DiskFull => S::INSUFFICIENT_STORAGE,
        C::RemoteFailed => S::BAD_GATEWAY,
        C::Internal | C::StoreDamaged | C::Damaged => S::INTERNAL_SERVER_ERROR,
        C::PayloadTooLarge => S::PAYLOAD_TOO_LARGE,
        C::RangeNotSatisfiable => S::RANGE_NOT_SATISFIABLE,
        C::MethodNotAllowed => S::METHOD_NOT_ALLOWED,
        C::UnsupportedMediaType => S::UNSUPPORTED_MEDIA_TYPE,
        C::Unauthorized => S::UNAUTHORIZED,
        C::HostNotAllowed => S::MISDIRECTED_REQUEST,
        C::Forbidden | C::CrossOrigin | C::ReadOnly | C::RunsDisabled => S::FORBIDDEN,
        C::BadRequest | C::Usage | C::PathOutside => S::BAD_REQUEST,
    }
}

/// A library error's status and code (its name in JSON).
#[cfg(test)]
fn classify(e: &Error) -> (StatusCode, String) {
    let body = ErrorBody::from(e);
    let code = serde_json::to_value(body.code).unwrap_or_default();
    (
        status_of(body.code),
        code.as_str().unwrap_or_default().to_string(),
    )
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A rejected query string or JSON body, as `bad_request` (axum's own rejections are text).
impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(r: axum::extract::rejection::JsonRejection) -> ApiError {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return ApiError::new(r.status(), ErrorCode::PayloadTooLarge, r.body_text());
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
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::BadRequest,
        s if s.is_client_error() => ErrorCode::BadRequest,
        _ => ErrorCode::Internal,
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
            let (got_status, got_code) = classify(&e);
            assert_eq!((got_status, got_code.as_str()), (status, code), "{e}");
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
            let (got_status, got_code) = classify(&e);
            assert_eq!((got_status, got_code.as_str()), (status, code), "{e}");
        }
    }

    /// The sentence carries the causes the error's own message does not say.
    #[test]
    fn the_body_keeps_the_cause() {
        let e = Error::Db(redb::Error::Corrupted("page 7".into()));
        let api = super::ApiError::from(e);
        assert_eq!(
            api.body.text(),
            "store database error: DB corrupted: page 7"
        );
        assert_eq!(api.body.code, rewind::wire::ErrorCode::Damaged);
    }
}
