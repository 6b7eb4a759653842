//! A server's health (`GET /v1/health`).

use serde::{Deserialize, Serialize};

/// That the server answers, which version it is and which store it serves.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Health {
    /// Always true: the server answers.
    pub ok: bool,
    /// Its version.
    pub version: String,
    /// The store's directory.
    pub store: String,
}
