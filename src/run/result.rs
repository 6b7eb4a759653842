//! The run's result as the library reports it: ids, paths as bytes and enums.
//! [`crate::wire::RunResult`] is how it looks as JSON (`--json`, `--result`, the HTTP API;
//! `schemas/run-result.schema.json` is generated from that type).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::compare::Diff;
use crate::contract::{OnViolation, Violation};
use crate::diff::FileChange;
use crate::diff::text::DiffOptions;
use crate::error::Result;
use crate::files::RelPath;
use crate::id::Id;
use crate::store::snapshot::SkipReason;

use super::{DiffReport, EXIT_VIOLATION, Outcome, isolate};

/// Version of the result object's layout (`schemas/run-result.schema.json`).
pub const RESULT_VERSION: u32 = 1;

/// One changed file of a run, with its line statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// The change.
    pub change: FileChange,
    /// Whether either side is binary (then the line counts are 0).
    pub binary: bool,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
}

/// What a run changed, with line statistics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffSummary {
    /// Files changed.
    pub files_changed: usize,
    /// Lines added in all files.
    pub insertions: u64,
    /// Lines removed in all files.
    pub deletions: u64,
    /// Per file, sorted by path.
    pub files: Vec<FileEntry>,
}

/// A path the after snapshot passed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedEntry {
    /// The path (workspace-relative, raw bytes).
    pub path: Vec<u8>,
    /// Why.
    pub reason: SkipReason,
    /// Detail (an error message).
    pub detail: String,
    /// Whether it is worth a warning: not a special file the before snapshot skipped too.
    pub warn: bool,
}

/// The after snapshot's label: which of the two a run's second snapshot is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AfterLabel {
    /// The command exited 0.
    After,
    /// The command failed, was killed or could not start.
    AfterFailure,
}

impl AfterLabel {
    /// The label of a run whose command did (or did not) succeed.
    pub fn of(success: bool) -> AfterLabel {
        if success {
            AfterLabel::After
        } else {
            AfterLabel::AfterFailure
        }
    }

    /// The snapshot's `label` metadata (and the JSON name).
    pub fn name(self) -> &'static str {
        match self {
            AfterLabel::After => "after",
            AfterLabel::AfterFailure => "after_failure",
        }
    }
}

/// Why rewind exits with the code it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExitReason {
    /// 0: the command succeeded (and the contract did not fail the run).
    Success,
    /// The command's own non-zero code.
    Command,
    /// 128 + N: a signal killed the command.
    Signal,
    /// 126 or 127: the command could not start.
    SpawnFailed,
    /// 123: the contract failed under `--on-violation=fail`.
    ContractViolation,
}

/// What a run did. [`crate::wire::RunResult`] is its JSON form.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The workspace's canonical path.
    pub workspace: PathBuf,
    /// Where the command started.
    pub cwd: PathBuf,
    /// The command line.
    pub command: Vec<String>,
    /// The before snapshot (for an isolated run, the overlay's base).
    pub before: Id,
    /// The after snapshot (for an isolated run, the overlay's state).
    pub after: Id,
    /// The command's exit code (None when a signal killed it).
    pub exit_code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Why the command could not be started (exit_code is then 126 or 127).
    pub spawn_error: Option<String>,
    /// How long the command ran, in seconds.
    pub duration_seconds: f64,
    /// How long the whole run took, snapshots included.
    pub total_seconds: f64,
    /// What changed between before and after.
    pub diff: DiffSummary,
    /// The patch, when captured and within the cap.
    pub patch: Option<String>,
    /// The artifact key holding the patch, when captured and above the cap.
    pub patch_ref: Option<String>,
    /// The patch's length in bytes, whenever it was captured.
    pub patch_bytes: Option<u64>,
    /// Contract violations.
    pub violations: Vec<Violation>,
    /// What was done about them.
    pub on_violation: OnViolation,
    /// Paths put back to the before snapshot because they violated the contract.
    pub reverted: Vec<RelPath>,
    /// Whether the whole workspace was restored to the before snapshot.
    pub rolled_back: bool,
    /// Paths the after snapshot passed over.
    pub skipped: Vec<SkippedEntry>,
    /// The operation recording the run (undo target).
    pub op: u64,
    /// The operation of the rollback or revert, if any.
    pub restore_op: Option<u64>,
    /// What the store's run retention did afterwards.
    pub retention: RetentionEntry,
    /// For `run --isolate`: the overlay and whether its changes were accepted.
    pub overlay: Option<isolate::OverlayOutcome>,
}

/// The run retention's outcome (see [`crate::forget::after_run`]). It never fails the run:
/// the command has run and both snapshots are stored, so an error is only reported.
#[derive(Clone, Debug, Default)]
pub struct RetentionEntry {
    /// Older run snapshots of this workspace forgotten.
    pub forgotten: usize,
    /// Whether a gc ran.
    pub gc: bool,
    /// Why the retention could not run (a malformed config.toml, say).
    pub error: Option<String>,
}

/// What every run reports, however the command ran (in the workspace, or isolated in an
/// overlay): [`RunResult::finished`] turns it into the result, the one place a result is
/// put together.
pub(crate) struct Finished {
    pub cwd: PathBuf,
    pub before: Id,
    pub after: Id,
    pub outcome: Outcome,
    /// How long the command ran, in seconds.
    pub duration: f64,
    pub report: DiffReport,
    pub on_violation: OnViolation,
    /// The operation recording the run.
    pub op: u64,
    pub reverted: Vec<RelPath>,
    /// For a run in the workspace: the restore that rolled it back or reverted violations.
    pub restore: Option<Restored>,
    /// For a run in the workspace: its after snapshot's skipped paths.
    pub skipped: Vec<SkippedEntry>,
    pub retention: RetentionEntry,
    pub overlay: Option<isolate::OverlayOutcome>,
}

/// A restore a run made after the command: a rollback of the whole run, or a revert of the
/// paths that broke the contract.
pub(crate) struct Restored {
    /// Whether it was the whole workspace (a rollback).
    pub rolled_back: bool,
    /// Its operation.
    pub op: Option<u64>,
}

impl RunResult {
    /// The result of a finished run of `prep`'s command.
    pub(crate) fn finished(prep: super::Prepared, f: Finished) -> RunResult {
        RunResult {
            workspace: prep.root,
            cwd: f.cwd,
            command: prep.command,
            before: f.before,
            after: f.after,
            exit_code: f.outcome.exit_code,
            signal: f.outcome.signal,
            spawn_error: f.outcome.spawn_error,
            duration_seconds: f.duration,
            total_seconds: prep.started.elapsed().as_secs_f64(),
            diff: f.report.summary,
            patch: f.report.patch.0,
            patch_ref: f.report.patch.1,
            patch_bytes: f.report.patch.2,
            violations: f.report.violations,
            on_violation: f.on_violation,
            reverted: f.reverted,
            rolled_back: f.restore.as_ref().is_some_and(|r| r.rolled_back),
            skipped: f.skipped,
            op: f.op,
            restore_op: f.restore.and_then(|r| r.op),
            retention: f.retention,
            overlay: f.overlay,
        }
    }

    /// Whether the command exited 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The after snapshot's label.
    pub fn after_label(&self) -> AfterLabel {
        AfterLabel::of(self.success())
    }

    /// Why rewind exits with [`RunResult::exit_code`].
    pub fn exit_reason(&self) -> ExitReason {
        if self.signal.is_some() {
            return ExitReason::Signal;
        }
        if self.spawn_error.is_some() {
            return ExitReason::SpawnFailed;
        }
        match self.exit_code {
            Some(c) if c != 0 => ExitReason::Command,
            _ if self.contract_failed() => ExitReason::ContractViolation,
            _ => ExitReason::Success,
        }
    }

    /// The exit code rewind should end with: the command's own (128 + N for a signal, 126 or
    /// 127 when it could not start), else [`EXIT_VIOLATION`] when the contract failed under
    /// `--on-violation=fail`, else 0.
    pub fn exit_code(&self) -> i32 {
        if let Some(sig) = self.signal {
            return 128 + sig;
        }
        match self.exit_code {
            Some(c) if c != 0 => c,
            _ if self.contract_failed() => EXIT_VIOLATION,
            _ => 0,
        }
    }

    fn contract_failed(&self) -> bool {
        !self.violations.is_empty() && self.on_violation == OnViolation::Fail
    }
}

/// Line statistics of every change, as the result shows them.
pub fn summarize(d: &Diff, dopts: &DiffOptions) -> Result<DiffSummary> {
    let stats = d.stats(dopts)?;
    let files: Vec<FileEntry> = d
        .changes
        .iter()
        .zip(&stats)
        .map(|(c, s)| FileEntry {
            change: c.clone(),
            binary: s.binary,
            insertions: s.insertions,
            deletions: s.deletions,
        })
        .collect();
    Ok(DiffSummary {
        files_changed: files.len(),
        insertions: files.iter().map(|f| f.insertions).sum(),
        deletions: files.iter().map(|f| f.deletions).sum(),
        files,
    })
}
