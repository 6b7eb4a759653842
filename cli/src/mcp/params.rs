//! The tools' arguments, as clients send them (each with its JSON schema, from schemars).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// `checkpoint`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointParams {
    /// What this checkpoint is (shown in list_checkpoints).
    pub message: Option<String>,
    /// Key=value metadata to record with it (a session id, a turn number, a tool name...);
    /// list_checkpoints filters on it.
    pub metadata: BTreeMap<String, String>,
    /// Tags to point at it.
    pub tags: Vec<String>,
    /// Record nothing when the tree equals the previous snapshot's (the answer then names the
    /// previous snapshot, with `created: false`).
    pub if_changed: bool,
}

/// `list_checkpoints`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ListParams {
    /// At most this many, newest first (default 20).
    pub limit: Option<usize>,
    /// Only those with all of these metadata values.
    pub metadata: BTreeMap<String, String>,
    /// Only the one this tag names.
    pub tag: Option<String>,
    /// Only those taken since: an RFC 3339 time (2026-11-24T06:00:00Z) or a duration ago
    /// (30m, 2h, 3d).
    pub since: Option<String>,
    /// Only those where this path changed.
    pub path: Option<String>,
}

/// `stat` or `patch`.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Paths with line counts.
    #[default]
    Stat,
    /// Also each file's hunks (with the ids restore takes) and the unified diff.
    Patch,
}

/// `changes`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ChangesParams {
    /// The old side: a revision (`@` the latest snapshot, `@~2`, a tag, an id prefix) or `live`
    /// (default `@`).
    pub from: Option<String>,
    /// The new side (default `live`, the working tree now).
    pub to: Option<String>,
    /// Only these paths (and what is below them), relative to the workspace.
    pub paths: Vec<String>,
    /// `stat` (default) or `patch`.
    pub format: Format,
    /// Lines of context around each hunk (default 3).
    pub context: Option<usize>,
}

/// `restore`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RestoreParams {
    /// The snapshot to restore from (default `@`, the latest).
    pub rev: Option<String>,
    /// Only these paths (and what is below them); empty: the whole workspace.
    pub paths: Vec<String>,
    /// Only these hunks: ids from `changes` with `from` = `live` and `to` = the snapshot, in
    /// `patch` format.
    pub hunks: Vec<String>,
    /// Change nothing: list what would be overwritten, deleted or created.
    pub dry_run: bool,
}

/// `undo`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct UndoParams {
    /// The operation to take back (default: the latest that changed the workspace).
    pub op: Option<u64>,
    /// Go ahead even when the workspace changed since that operation (those changes are in a
    /// snapshot first, so still recoverable).
    pub force: bool,
}

/// `redo`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RedoParams {
    /// Go ahead even when the workspace changed since the undo.
    pub force: bool,
}

/// `run`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunParams {
    /// The program and its arguments (no shell: `["sh", "-c", "..."]` for one). Its output goes
    /// to the server's stderr; its stdin is empty.
    pub command: Vec<String>,
    /// Message for both snapshots (default: the command line).
    pub message: Option<String>,
    /// Metadata for both snapshots.
    pub metadata: BTreeMap<String, String>,
    /// Restore the before snapshot when the command fails.
    pub rollback_on_failure: bool,
    /// Put the unified diff of what it changed into the result.
    pub capture_patch: bool,
    /// Run it in a new overlay, accepted into the workspace only when it succeeds.
    pub isolate: bool,
}

/// An overlay: its id or its name.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OverlayKey {
    /// Its id.
    Id(u64),
    /// Its id or name, as text.
    Name(String),
}

impl OverlayKey {
    /// As `overlay::find` takes it.
    pub fn text(&self) -> String {
        match self {
            OverlayKey::Id(n) => n.to_string(),
            OverlayKey::Name(s) => s.clone(),
        }
    }
}

/// Which overlay backend.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// A namespace overlay where the system allows it, else a copy.
    #[default]
    Auto,
    /// A copy of the workspace (reflinked where the file system can).
    Copy,
    /// A mount namespace over the workspace.
    Namespace,
}

/// `overlay_create`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct OverlayCreateParams {
    /// A name to find it by.
    pub name: Option<String>,
    /// Start from this snapshot (default: a snapshot of the workspace now).
    pub rev: Option<String>,
    /// `auto` (default), `copy` or `namespace`.
    pub backend: Backend,
}

/// `overlay_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayDiffParams {
    /// The overlay (id or name).
    pub overlay: OverlayKey,
    /// Include the unified diff text.
    #[serde(default)]
    pub patch: bool,
}

/// What an accept does where the workspace changed too.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Leave conflicting files pending (default).
    #[default]
    Skip,
    /// Write conflict markers.
    Markers,
    /// Keep the workspace's side.
    Ours,
    /// Take the overlay's side.
    Theirs,
    /// Accept nothing when anything conflicts.
    Fail,
}

/// `overlay_accept`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayAcceptParams {
    /// The overlay (id or name).
    pub overlay: OverlayKey,
    /// Only these paths (empty, with no hunks: everything pending).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Only these hunks (ids from overlay_diff).
    #[serde(default)]
    pub hunks: Vec<String>,
    /// Only what this run made (numbers from overlay_runs), instead of paths and hunks.
    #[serde(default)]
    pub run: Option<u32>,
    /// Where the workspace changed too: `skip` (default), `markers`, `ours`, `theirs`, `fail`.
    #[serde(default)]
    pub policy: Policy,
    /// Also copy the ignored outputs it made (build products...).
    #[serde(default)]
    pub include_ignored: bool,
}

/// `overlay_reject`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayRejectParams {
    /// The overlay (id or name).
    pub overlay: OverlayKey,
    /// These paths (empty, with no hunks: everything pending).
    #[serde(default)]
    pub paths: Vec<String>,
    /// These hunks (ids from overlay_diff).
    #[serde(default)]
    pub hunks: Vec<String>,
    /// Only what this run made (numbers from overlay_runs), instead of paths and hunks.
    #[serde(default)]
    pub run: Option<u32>,
}

/// `overlay_runs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverlayRunsParams {
    /// The overlay (id or name).
    pub overlay: OverlayKey,
}

/// `changes_by_run`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ByRunParams {
    /// The older snapshot (a revision: `@~3`, a tag, an id prefix).
    pub from: String,
    /// The newer snapshot (default `@`, the latest).
    pub to: Option<String>,
}

/// `revert`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RevertParams {
    /// The snapshot before the change to take back.
    pub from: String,
    /// The snapshot after it (default `@`, the latest).
    pub to: Option<String>,
    /// Only what run or tool call N of from..to did (numbers from `changes_by_run`).
    pub run: Option<u32>,
    /// Only these hunks (ids from `changes_by_run`, or from `changes` from..to in patch
    /// format).
    pub hunks: Vec<String>,
    /// Only these paths.
    pub paths: Vec<String>,
    /// Change nothing: report what would be written and what would conflict.
    pub dry_run: bool,
}
