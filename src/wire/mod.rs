//! The wire types: what the library's results look like as JSON to a program (the MCP server's
//! structured results today; meant to be the one description behind the CLI's `--json`, the
//! HTTP API and the schemas as they converge). Each is a plain serde struct, built from the
//! library's own types by `From` or a constructor here, so the conversions live in one place
//! and every front end names a field the same way. With the `schema` feature they also derive
//! `schemars::JsonSchema`, so a server can publish their JSON schemas; embedders that do not
//! need schemas do not build schemars.
//!
//! Conventions (those of the CLI's `--json`): ids are full hex strings with a `short_id`
//! beside them where people read them; times are RFC 3339 (`time`) with nanoseconds since the
//! epoch beside them (`time_ns`); paths are workspace-relative strings, lossy for names that
//! are not UTF-8, with `KEY_bytes` (base64 of the exact bytes) beside them only then.

mod apply;
mod artifact;
mod blame;
mod changes;
mod content;
mod contract_check;
#[cfg(feature = "daemon")]
mod daemon;
mod edits;
mod error;
mod events;
mod export;
mod health;
mod hooks;
mod maintain;
mod ops;
mod overlay;
mod overlay_ops;
mod paths;
mod progress;
mod registered;
#[cfg(feature = "remote")]
mod remote;
mod removed;
mod run;
mod run_state;
mod runs;
mod selection;
mod session;
mod snapshot;
mod stats;
mod status;
mod tag;
mod taken;
mod tree;
mod verify;
mod workspace;

pub use apply::{Applied, AppliedFile, AppliedHunk};
pub use artifact::{Artifact, ArtifactStored};
pub use blame::{Blame, BlameLine, BlameSnapshot};
pub use changes::{Change, Changes, Hunk, HunksFor, Side, Totals, change_hunks, rev_text};
pub use content::FileContent;
pub use contract_check::{ContractCheck, ScratchFile};
#[cfg(feature = "daemon")]
pub use daemon::{
    AutoStatus, DaemonStarted, DaemonStatus, DaemonStatusShown, DaemonStopped, JournalStatus,
    WatchAuto, WatchList, WatchOff, WatchOn, WatchStatus, Watched,
};
pub use edits::{EditedFile, PlanEntry, Restore, Revert, Undo, UndoneOp};
pub use error::{ErrorBody, ErrorCode};
pub use events::{DaemonState, ServerEvent, ServerNotice};
pub use export::{Exported, FoundPath, FoundVersion};
pub use health::Health;
pub use hooks::{HookEvent, HooksInstalled, HooksRemoved};
pub use maintain::{BudgetEnforced, Forgotten, GcDone, GcRecompressed, GcRegrouped, GcRepacked};
pub use ops::Op;
pub use overlay::{
    Overlay, OverlayAccept, OverlayConflict, OverlayCreated, OverlayDiff, OverlayReject,
    OverlayRunChanges, OverlayRunFile, OverlayRuns,
};
pub use overlay_ops::{OverlayDropped, OverlayPath, OverlaySnapshot, OverlaySplit};
pub use paths::PathPair;
pub use progress::{Listening, ProgressEvent};
pub use registered::WorkspaceRegistered;
#[cfg(feature = "remote")]
pub use remote::{
    LocalTag, LogAppended, Pulled, Pushed, RemoteAdded, RemoteEntry, RemoteForgotten, RemoteGc,
    RemoteKeyRotated, RemoteMapped, RemoteProblem, RemoteRemoved, RemoteRestored, RemoteTag,
    RemoteVerify,
};
pub use removed::{ArtifactRemoved, TagDeleted};
pub use run::{
    OverlayBackend, RunBackend, RunDiff, RunFile, RunOverlay, RunResult, RunRetention, RunScratch,
    RunSkipped, RunViolation, SkipReason,
};
pub use run_state::{RunStarted, RunState, RunStatus};
pub use runs::{RangeRunChanges, RangeRuns, RangeUnit};
pub use selection::{SelectedChange, SelectedConflict, SelectedFile, SelectionReverted};
pub use session::Session;
pub use snapshot::{
    Checkpoint, LogEntry, PathChange, ScannedSnapshot, Snapshot, SnapshotList, SnapshotShown,
};
pub use stats::{
    Stats, StatsBudget, StatsDictionary, StatsFormat, StatsJudged, StatsTable, StatsWorkspace,
};
pub use status::{Skipped, Status};
pub use tag::Tag;
pub use taken::{SnapshotTaken, Walk};
pub use tree::{LinkedTreeEntry, SnapshotDirectory, Tree, TreeEntry};
pub use verify::{Verify, VerifyProblem};
pub use workspace::Workspace;

/// A path as JSON shows it: lossy UTF-8.
pub fn path_text(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

/// The exact bytes of a path that is not UTF-8 (base64), None for one that is.
pub fn path_bytes(p: &[u8]) -> Option<String> {
    crate::files::path_bytes(p)
}

/// Paths as JSON shows a list of them: lossy UTF-8, and beside them, only when one is not
/// UTF-8, each one's exact bytes (base64; None for those that are UTF-8).
pub fn paths_and_bytes<P: AsRef<[u8]>>(paths: &[P]) -> (Vec<String>, Option<Vec<Option<String>>>) {
    let text = paths.iter().map(|p| path_text(p.as_ref())).collect();
    let bytes: Vec<Option<String>> = paths.iter().map(|p| path_bytes(p.as_ref())).collect();
    (text, bytes.iter().any(Option::is_some).then_some(bytes))
}

/// Nanoseconds since the epoch as RFC 3339, to the second, in UTC.
pub fn time_text(ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0).unsigned_abs());
    humantime::format_rfc3339_seconds(t).to_string()
}
