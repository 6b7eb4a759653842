//! An agent's hook settings: what `hook install --json` and `hook uninstall --json` print.

use serde::{Deserialize, Serialize};

/// What installing touched for one hook event.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HookEvent {
    /// The agent's event name.
    pub event: String,
    /// `added`, `updated` or `unchanged`.
    pub status: String,
}

/// rewind's hooks installed in an agent's settings (`hook install --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HooksInstalled {
    /// The agent.
    pub agent: String,
    /// Its settings file.
    pub file: String,
    /// The command each hook runs.
    pub command: String,
    /// Whether the file was written.
    pub changed: bool,
    /// Each event, and what was done to it.
    pub events: Vec<HookEvent>,
}

/// rewind's hooks removed from an agent's settings (`hook uninstall --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HooksRemoved {
    /// The agent.
    pub agent: String,
    /// Its settings file.
    pub file: String,
    /// Whether the file was changed.
    pub changed: bool,
    /// Hooks removed.
    pub removed: usize,
    /// Whether the file was deleted (it held nothing but rewind's hooks).
    pub deleted_file: bool,
}
