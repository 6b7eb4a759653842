//! The run result (`run --json`, `--result`, the HTTP API's and the MCP server's runs):
//! `schemas/run-result.schema.json` is generated from [`RunResult`]. Unlike the other wire
//! types, every key is always present (null where it does not apply), so consumers need no
//! presence checks; only what a front end adds (`scratch`, each file's `hunks`) may be absent.

use serde::{Deserialize, Serialize};

use super::{Hunk, Side, path_bytes, path_text};
use crate::contract::{OnViolation, Reason, Violation};
use crate::diff::ChangeStatus;
use crate::overlay::Backend;
use crate::run::isolate::OverlayOutcome;
use crate::run::{AfterLabel, ExitReason, RESULT_VERSION, RetentionEntry, SkippedEntry, signals};
use crate::scratch::ScratchReport;

/// How a run's changes were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum RunBackend {
    /// The command ran in the workspace; content-addressed snapshots found the changes.
    Hash,
    /// `run --isolate` in an overlayfs namespace: `before` is the overlay's base, `after`
    /// its state.
    OverlayNamespace,
    /// `run --isolate` in a copy of the workspace.
    OverlayCopy,
}

/// An overlay's backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum OverlayBackend {
    /// overlayfs in a private user and mount namespace.
    Namespace,
    /// A copy of the base snapshot.
    Copy,
}

impl From<Backend> for OverlayBackend {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Namespace => OverlayBackend::Namespace,
            Backend::Copy => OverlayBackend::Copy,
        }
    }
}

/// Why a snapshot passed over a path: the store's own enum, which snapshot records keep.
pub use crate::store::snapshot::SkipReason;

/// One changed file of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunFile {
    /// The path (the new path for renames), lossy UTF-8.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub path: String,
    /// The path's exact bytes in base64 when it is not UTF-8, else null.
    pub path_bytes: Option<String>,
    /// The old path of a rename.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub old_path: Option<String>,
    /// The old path's exact bytes in base64 when it is not UTF-8, else null.
    pub old_path_bytes: Option<String>,
    /// What happened to it.
    pub status: ChangeStatus,
    /// The side before; null for an added file.
    pub old: Option<Side>,
    /// The side after; null for a deleted file.
    pub new: Option<Side>,
    /// Whether either side is binary (then the line counts are 0).
    pub binary: bool,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
    /// Only through the HTTP API's run routes, when asked (`hunks: true`): the file's line
    /// hunks with the ids accept, reject and revert take (an overlay's pending hunks while it
    /// is kept, else those between before and after); null for a file without line hunks.
    /// Absent otherwise.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub hunks: Option<Option<Vec<Hunk>>>,
}

/// A key that is present, null or not: `Some`, so that `hunks: null` reads back as it was
/// written (absent is `None`, by `default`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl From<&crate::run::FileEntry> for RunFile {
    fn from(f: &crate::run::FileEntry) -> Self {
        let c = &f.change;
        RunFile {
            path: path_text(&c.path),
            path_bytes: path_bytes(&c.path),
            old_path: c.old_path.as_deref().map(path_text),
            old_path_bytes: c.old_path.as_deref().and_then(path_bytes),
            status: c.status,
            old: c.old.as_ref().map(Side::from),
            new: c.new.as_ref().map(Side::from),
            binary: f.binary,
            insertions: f.insertions,
            deletions: f.deletions,
            hunks: None,
        }
    }
}

/// What a run changed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunDiff {
    /// Files changed.
    pub files_changed: u64,
    /// Lines added in all files.
    pub insertions: u64,
    /// Lines removed in all files.
    pub deletions: u64,
    /// Per file, sorted by path.
    pub files: Vec<RunFile>,
}

/// A path that broke the run's contract.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunViolation {
    /// The offending path.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub path: String,
    /// The path's exact bytes in base64 when it is not UTF-8, else null.
    pub path_bytes: Option<String>,
    /// Why it breaks the contract.
    pub reason: Reason,
    /// What happened to it (as in the diff's files).
    pub status: ChangeStatus,
}

impl From<&Violation> for RunViolation {
    fn from(v: &Violation) -> Self {
        RunViolation {
            path: path_text(&v.path),
            path_bytes: path_bytes(&v.path),
            reason: v.reason,
            status: v.status,
        }
    }
}

/// A path the run's after snapshot passed over.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunSkipped {
    /// The path.
    pub path: String,
    /// The path's exact bytes in base64 when it is not UTF-8, else null.
    pub path_bytes: Option<String>,
    /// Why it was passed over.
    pub reason: SkipReason,
    /// Detail (an error message).
    pub detail: String,
    /// Whether it is worth a warning: not a special file the before snapshot skipped too.
    pub warn: bool,
}

impl From<&SkippedEntry> for RunSkipped {
    fn from(s: &SkippedEntry) -> Self {
        RunSkipped {
            path: path_text(&s.path),
            path_bytes: path_bytes(&s.path),
            reason: s.reason,
            detail: s.detail.clone(),
            warn: s.warn,
        }
    }
}

/// The store's run retention, applied after the run (config.toml `[retention]`); it never
/// fails the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunRetention {
    /// Older run snapshots of this workspace forgotten.
    pub forgotten: u64,
    /// Whether a garbage collection ran.
    pub gc: bool,
    /// Why the retention could not run.
    pub error: Option<String>,
}

impl From<&RetentionEntry> for RunRetention {
    fn from(r: &RetentionEntry) -> Self {
        RunRetention {
            forgotten: r.forgotten as u64,
            gc: r.gc,
            error: r.error.clone(),
        }
    }
}

/// `run --isolate`: the overlay and what became of its changes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunOverlay {
    /// The overlay's id.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub id: u64,
    /// Its backend.
    pub backend: OverlayBackend,
    /// Why `--backend auto` fell back to copy.
    pub fallback: Option<String>,
    /// Whether the changes were merged into the workspace.
    pub accepted: bool,
    /// Paths left pending because the workspace changed them too.
    pub conflicts: Vec<String>,
    /// The accept operation (`rewind undo` takes it back).
    pub accept_op: Option<u64>,
    /// Whether the overlay still exists (see `rewind overlay list`).
    pub kept: bool,
}

impl From<&OverlayOutcome> for RunOverlay {
    fn from(o: &OverlayOutcome) -> Self {
        RunOverlay {
            id: o.id,
            backend: o.backend.into(),
            fallback: o.fallback.clone(),
            accepted: o.accepted,
            conflicts: o.conflicts.iter().map(|p| path_text(p)).collect(),
            accept_op: o.accept_op,
            kept: o.kept,
        }
    }
}

/// With `--scratch` only: the scratch directory the command saw (`$REWIND_SCRATCH`, removed
/// now) and the artifact key prefix its files are kept under (`rewind scratch ls/cat RUN`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct RunScratch {
    /// The directory.
    pub dir: String,
    /// The artifact key prefix.
    #[cfg_attr(
        feature = "schema",
        schemars(regex(pattern = r"^scratch/[0-9a-f]{12}/$"))
    )]
    pub prefix: String,
    /// Files kept.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl From<ScratchReport> for RunScratch {
    fn from(s: ScratchReport) -> Self {
        RunScratch {
            dir: s.dir,
            prefix: s.prefix,
            files: s.files as u64,
            bytes: s.bytes,
        }
    }
}

/// The object `rewind run --json` prints on stdout (or `--result FILE` writes) after the
/// command ends (its JSON Schema: schemas/run-result.schema.json). Every key is always present;
/// null where it does not apply.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        deny_unknown_fields,
        extend("allOf" = [
            {
                "if": {"properties": {"success": {"const": true}}},
                "then": {"properties": {"after_label": {"const": "after"}, "exit_code": {"const": 0}}},
                "else": {"properties": {"after_label": {"const": "after_failure"}}}
            },
            {
                "if": {"properties": {"patch_ref": {"type": "string"}}},
                "then": {"properties": {"patch": {"const": null}, "patch_bytes": {"type": "integer"}}}
            },
            {
                "if": {"properties": {"patch": {"type": "string"}}},
                "then": {"properties": {"patch_bytes": {"type": "integer"}}}
            }
        ])
    )
)]
pub struct RunResult {
    /// The layout's version.
    #[cfg_attr(feature = "schema", schemars(extend("const" = 1)))]
    pub version: u32,
    /// How the changes were found.
    pub backend: RunBackend,
    /// The workspace's canonical path.
    pub workspace: String,
    /// Where the command started.
    pub cwd: String,
    /// The command line.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub command: Vec<String>,
    /// The before snapshot (64 hex digits).
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[0-9a-f]{64}$")))]
    pub before: String,
    /// The after snapshot (64 hex digits).
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[0-9a-f]{64}$")))]
    pub after: String,
    /// The after snapshot's label.
    pub after_label: AfterLabel,
    /// The command's exit code; null when a signal killed it; 126/127 when it could not
    /// start.
    pub exit_code: Option<i32>,
    /// The signal that killed it.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub signal: Option<i32>,
    /// That signal's name ("SIGTERM").
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^SIG[A-Z0-9]+$")))]
    pub signal_name: Option<String>,
    /// Why the command could not be started.
    pub spawn_error: Option<String>,
    /// exit_code == 0.
    pub success: bool,
    /// How long the command ran, in seconds.
    #[cfg_attr(feature = "schema", schemars(range(min = 0.0)))]
    pub duration_seconds: f64,
    /// The whole run, snapshots included, in seconds.
    #[cfg_attr(feature = "schema", schemars(range(min = 0.0)))]
    pub total_seconds: f64,
    /// What changed between before and after.
    pub diff: RunDiff,
    /// The patch (git's extended unified format), when captured and within the cap.
    pub patch: Option<String>,
    /// The artifact key holding the patch when it was above the cap (`rewind artifact get
    /// KEY`).
    pub patch_ref: Option<String>,
    /// The patch's length in bytes, whenever it was captured.
    pub patch_bytes: Option<u64>,
    /// Contract violations.
    pub violations: Vec<RunViolation>,
    /// What was done about them.
    pub on_violation: OnViolation,
    /// Paths put back to the before snapshot because they violated the contract.
    pub reverted: Vec<String>,
    /// The workspace was restored to the before snapshot (`--rollback-on-failure`).
    pub rolled_back: bool,
    /// Paths the after snapshot passed over.
    pub skipped: Vec<RunSkipped>,
    /// The operation recording the run; `rewind undo` takes it back.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub op: u64,
    /// The rollback's or revert's operation, recorded after the run's.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub restore_op: Option<u64>,
    /// What the store's run retention did afterwards.
    pub retention: RunRetention,
    /// `run --isolate` only (null otherwise): the overlay and what became of its changes.
    pub overlay: Option<RunOverlay>,
    /// The code rewind exits with.
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 255)))]
    pub rewind_exit_code: i32,
    /// Why rewind exits with rewind_exit_code. The exit code alone is ambiguous (a command
    /// may exit 123 itself); this is not.
    pub exit_reason: ExitReason,
    /// With `--scratch` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scratch: Option<RunScratch>,
}

impl From<&crate::run::RunResult> for RunResult {
    fn from(r: &crate::run::RunResult) -> Self {
        let backend = match &r.overlay {
            None => RunBackend::Hash,
            Some(o) => match o.backend {
                Backend::Namespace => RunBackend::OverlayNamespace,
                Backend::Copy => RunBackend::OverlayCopy,
            },
        };
        RunResult {
            version: RESULT_VERSION,
            backend,
            workspace: r.workspace.display().to_string(),
            cwd: r.cwd.display().to_string(),
            command: r.command.clone(),
            before: r.before.hex(),
            after: r.after.hex(),
            after_label: r.after_label(),
            exit_code: r.exit_code,
            signal: r.signal,
            signal_name: r.signal.map(signals::name),
            spawn_error: r.spawn_error.clone(),
            success: r.success(),
            duration_seconds: r.duration_seconds,
            total_seconds: r.total_seconds,
            diff: RunDiff {
                files_changed: r.diff.files_changed as u64,
                insertions: r.diff.insertions,
                deletions: r.diff.deletions,
                files: r.diff.files.iter().map(RunFile::from).collect(),
            },
            patch: r.patch.clone(),
            patch_ref: r.patch_ref.clone(),
            patch_bytes: r.patch_bytes,
            violations: r.violations.iter().map(RunViolation::from).collect(),
            on_violation: r.on_violation,
            reverted: r.reverted.iter().map(|p| path_text(p)).collect(),
            rolled_back: r.rolled_back,
            skipped: r.skipped.iter().map(RunSkipped::from).collect(),
            op: r.op,
            restore_op: r.restore_op,
            retention: RunRetention::from(&r.retention),
            overlay: r.overlay.as_ref().map(RunOverlay::from),
            rewind_exit_code: r.exit_code(),
            exit_reason: r.exit_reason(),
            scratch: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hunks` has three states on the wire: absent, null (a file without line hunks) and a
    /// list; each reads back as it was written.
    #[test]
    fn a_files_hunks_read_back_absent_null_or_a_list() {
        let file = |hunks| RunFile {
            path: "a".into(),
            path_bytes: None,
            old_path: None,
            old_path_bytes: None,
            status: ChangeStatus::Modified,
            old: None,
            new: None,
            binary: false,
            insertions: 0,
            deletions: 0,
            hunks,
        };
        for f in [file(None), file(Some(None)), file(Some(Some(Vec::new())))] {
            let text = serde_json::to_string(&f).unwrap();
            let back: RunFile = serde_json::from_str(&text).unwrap();
            assert_eq!(back, f, "{text}");
        }
    }
}
