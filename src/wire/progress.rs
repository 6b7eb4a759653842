//! Lines a long-running command writes as it goes: `--events` progress on stderr, and the
//! line `serve --json` prints once it listens.

use serde::{Deserialize, Serialize};

/// One `--events` progress line (stderr, one JSON object a line).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProgressEvent {
    /// Always `progress`.
    pub event: String,
    /// The phase (`snapshot`, `restore`, `push`...).
    pub phase: String,
    /// What `items` counts: `files` or `objects`.
    pub unit: String,
    /// Items done.
    pub items: u64,
    /// Items in all, when known (else 0).
    pub total_items: u64,
    /// Bytes done.
    pub bytes: u64,
    /// Bytes in all, when known (else 0).
    pub total_bytes: u64,
    /// Whether the phase ended.
    pub done: bool,
}

/// Where a server listens (`serve --json`'s first line); never the token itself.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Listening {
    /// Its URL (`http://127.0.0.1:7878`, or `unix:PATH`).
    pub listening: String,
    /// The file holding its token, when it requires one.
    pub token_file: Option<String>,
    /// The review page's address, for a server on TCP.
    pub page: Option<String>,
}
