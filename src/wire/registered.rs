//! Registering a workspace (`init --json`, the API's `POST /v1/workspaces`).

use serde::{Deserialize, Serialize};

use super::Workspace;

/// The workspace a registration names, and whether it was new.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkspaceRegistered {
    /// The workspace.
    #[serde(flatten)]
    pub workspace: Workspace,
    /// Whether this registered it (false: it was registered already).
    pub newly_registered: bool,
    /// The store's directory.
    pub store: String,
}
