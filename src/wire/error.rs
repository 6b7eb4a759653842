//! A failure as JSON: what the CLI prints with `--json` and the HTTP API answers, one object.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind};

/// A stable name for what went wrong, finer than the [`ErrorKind`]: what a client branches on.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request or its input is malformed or not allowed.
    BadRequest,
    /// The command line did not parse (the CLI only).
    Usage,
    /// The server's token is missing or wrong.
    Unauthorized,
    /// The request is not allowed from where it came.
    Forbidden,
    /// What was named does not exist.
    NotFound,
    /// A path that could reach outside its workspace.
    PathOutside,
    /// The request conflicts with the current state; nothing was written.
    Conflict,
    /// Another process holds what is needed: the same request later may succeed.
    Locked,
    /// The request's body is too large.
    PayloadTooLarge,
    /// A byte range outside the content.
    RangeNotSatisfiable,
    /// A failure inside rewind itself.
    Internal,
    /// The store's file was changed outside rewind.
    StoreDamaged,
    /// The route does not take this method.
    MethodNotAllowed,
    /// The request's `Host` is not one the server answers.
    HostNotAllowed,
    /// A browser request from another origin.
    CrossOrigin,
    /// The request's content type is not one the route takes.
    UnsupportedMediaType,
    /// The server was started read-only.
    ReadOnly,
    /// The server was started without runs.
    RunsDisabled,
    /// There is no store.
    NoStore,
    /// The store cannot be written.
    ReadOnlyStore,
    /// The disk is full.
    DiskFull,
    /// A remote failed.
    RemoteFailed,
    /// Stored data is damaged.
    Damaged,
    /// The machine refused (I/O, a kernel feature, a network...).
    Unavailable,
}

impl ErrorCode {
    /// The code of a library error: its kind decides, and a few conditions of the store get a
    /// code of their own (a client can say "the store is gone" or "the disk is full" rather
    /// than "internal").
    pub fn of(e: &Error) -> ErrorCode {
        match e {
            Error::BadPath { .. } => return ErrorCode::PathOutside,
            Error::NoStore(_) => return ErrorCode::NoStore,
            Error::ReadOnlyStore { .. } => return ErrorCode::ReadOnlyStore,
            Error::DiskFull(_) => return ErrorCode::DiskFull,
            Error::Remote { .. } => return ErrorCode::RemoteFailed,
            // Not the request's fault, and not a bug: a client tells it apart to point its
            // user at verify and a remote.
            Error::DamagedPage { .. } | Error::Damaged { .. } => return ErrorCode::StoreDamaged,
            _ => {}
        }
        match e.kind() {
            ErrorKind::NotFound => ErrorCode::NotFound,
            ErrorKind::Invalid => ErrorCode::BadRequest,
            ErrorKind::Conflict => ErrorCode::Conflict,
            ErrorKind::Busy => ErrorCode::Locked,
            ErrorKind::Damaged => ErrorCode::Damaged,
            ErrorKind::Environment => ErrorCode::Unavailable,
            ErrorKind::Internal => ErrorCode::Internal,
        }
    }

    /// The kind of a failure that is not a library error (a refused request, a command line).
    pub fn kind(self) -> ErrorKind {
        use ErrorCode as C;
        match self {
            C::BadRequest
            | C::Usage
            | C::Unauthorized
            | C::Forbidden
            | C::PathOutside
            | C::PayloadTooLarge
            | C::RangeNotSatisfiable
            | C::MethodNotAllowed
            | C::HostNotAllowed
            | C::CrossOrigin
            | C::UnsupportedMediaType
            | C::ReadOnly
            | C::RunsDisabled => ErrorKind::Invalid,
            C::NotFound => ErrorKind::NotFound,
            C::Conflict => ErrorKind::Conflict,
            C::Locked => ErrorKind::Busy,
            C::Internal => ErrorKind::Internal,
            C::StoreDamaged | C::Damaged => ErrorKind::Damaged,
            C::NoStore | C::ReadOnlyStore | C::DiskFull | C::RemoteFailed | C::Unavailable => {
                ErrorKind::Environment
            }
        }
    }
}

/// A failure (the `--json` error object of the CLI, the body of the API's error answers).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Error"))]
pub struct ErrorBody {
    /// What went wrong, for people.
    pub error: String,
    /// What went wrong, for programs: stable.
    pub code: ErrorCode,
    /// The broad class of the failure (the CLI's exit codes follow it).
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["not_found", "invalid", "conflict", "busy", "damaged", "environment", "internal"]))
    )]
    pub kind: String,
    /// The lower errors that caused it, outermost first.
    pub causes: Vec<String>,
    /// What to do about it (the CLI's, naming its commands and flags; the API gives none).
    pub hints: Vec<String>,
}

impl ErrorBody {
    /// A failure that is not a library error: `code` and a sentence.
    pub fn new(code: ErrorCode, error: impl Into<String>) -> Self {
        ErrorBody {
            error: error.into(),
            code,
            kind: code.kind().as_str().to_string(),
            causes: Vec::new(),
            hints: Vec::new(),
        }
    }

    /// The sentence and its causes on one line, `: `-separated, for a reader that shows one
    /// string.
    pub fn text(&self) -> String {
        let mut s = self.error.clone();
        for cause in &self.causes {
            s.push_str(": ");
            s.push_str(cause);
        }
        s
    }
}

impl From<&Error> for ErrorBody {
    fn from(e: &Error) -> Self {
        ErrorBody {
            error: e.to_string(),
            code: ErrorCode::of(e),
            kind: e.kind().as_str().to_string(),
            causes: e.causes(),
            hints: Vec::new(),
        }
    }
}
