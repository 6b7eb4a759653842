//! The run's result: the object `--json` prints and `--result` writes (its layout is
//! `schemas/run-result.schema.json`), and the parts of it built from a diff.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::compare::Diff;
use crate::contract::{OnViolation, Violation};
use crate::diff::SideJson;
use crate::diff::text::DiffOptions;
use crate::error::Result;
use crate::files::{display, path_bytes};
use crate::id::Id;

use super::{DiffReport, EXIT_VIOLATION, Outcome, after_label, isolate, signals};

/// Version of the result object's layout (`schemas/run-result.schema.json`).
pub const RESULT_VERSION: u32 = 1;

/// One changed file in the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileEntry {
    /// The path (the new path for renames), lossy UTF-8.
    pub path: String,
    /// The path's exact bytes in base64 when it is not UTF-8, else null.
    pub path_bytes: Option<String>,
    /// The old path of a rename.
    pub old_path: Option<String>,
    /// The old path's exact bytes in base64 when it is not UTF-8, else null.
    pub old_path_bytes: Option<String>,
    /// added, deleted, modified, mode_changed, type_changed or renamed.
    pub status: &'static str,
    /// The side before (kind, mode, blob id, size); null for an added file.
    pub old: Option<SideJson>,
    /// The side after; null for a deleted file.
    pub new: Option<SideJson>,
    /// Whether either side is binary (then the line counts are 0).
    pub binary: bool,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
}

/// The diff part of the result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
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

/// One violation in the result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ViolationEntry {
    /// The offending path.
    pub path: String,
    /// The path's exact bytes in base64 when it is not UTF-8, else null.
    pub path_bytes: Option<String>,
    /// forbidden, not_allowed or new_file_disallowed.
    pub reason: &'static str,
    /// What happened to it (as in the diff's files).
    pub status: &'static str,
}

/// A path a snapshot passed over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkippedEntry {
    /// The path.
    pub path: String,
    /// The path's exact bytes in base64 when it is not UTF-8, else null.
    pub path_bytes: Option<String>,
    /// too_large, unreadable, vanished, special or changed_while_read.
    pub reason: &'static str,
    /// Detail (an error message).
    pub detail: String,
    /// Whether it is worth a warning: not a special file the before snapshot skipped too.
    pub warn: bool,
}

/// What a run did: the object `--json` prints and `--result` writes. Every key is always
/// present (null when it does not apply), so consumers need no presence checks.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// [`RESULT_VERSION`].
    pub version: u32,
    /// How changes were detected: "hash" (content-addressed snapshots).
    pub backend: &'static str,
    /// The workspace's canonical path.
    pub workspace: String,
    /// Where the command started.
    pub cwd: String,
    /// The command line.
    pub command: Vec<String>,
    /// The before snapshot (64 hex digits).
    pub before: String,
    /// The after (or after_failure) snapshot.
    pub after: String,
    /// The after snapshot's label: "after" or "after_failure".
    pub after_label: &'static str,
    /// The command's exit code (None when a signal killed it).
    pub exit_code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// That signal's name ("SIGTERM").
    pub signal_name: Option<String>,
    /// Why the command could not be started (exit_code is then 126 or 127).
    pub spawn_error: Option<String>,
    /// Exit code 0.
    pub success: bool,
    /// How long the command ran.
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
    pub violations: Vec<ViolationEntry>,
    /// What was done about them: report, revert or fail.
    pub on_violation: &'static str,
    /// Paths put back to the before snapshot because they violated the contract.
    pub reverted: Vec<String>,
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
#[derive(Clone, Debug, Default, Serialize)]
pub struct RetentionEntry {
    /// Older run snapshots of this workspace forgotten.
    pub forgotten: usize,
    /// Whether a gc ran.
    pub gc: bool,
    /// Why the retention could not run (a malformed config.toml, say).
    pub error: Option<String>,
}

/// The run result as printed and written: every field of [`RunResult`] plus the exit rewind
/// ends with and why, so the result file is unambiguous where the exit code is not (123 is both
/// a command's own code and the contract's).
#[derive(Serialize)]
pub struct ReportedResult<'a> {
    /// The result.
    #[serde(flatten)]
    pub result: &'a RunResult,
    /// The code rewind exits with ([`RunResult::exit_code`]).
    pub rewind_exit_code: i32,
    /// Why: [`RunResult::exit_reason`].
    pub exit_reason: &'static str,
}

/// What every run reports, however the command ran (in the workspace, or isolated in an
/// overlay): [`RunResult::finished`] turns it into the result, the one place its common
/// fields are filled in.
pub(crate) struct Finished<'a> {
    /// "hash", "overlay-namespace" or "overlay-copy".
    pub backend: &'static str,
    pub workspace: &'a Path,
    pub cwd: &'a Path,
    pub command: Vec<String>,
    pub before: Id,
    pub after: Id,
    pub outcome: Outcome,
    /// How long the command ran, in seconds.
    pub duration: f64,
    /// When the whole run began.
    pub started: Instant,
    pub report: DiffReport,
    pub on_violation: OnViolation,
    /// The operation recording the run.
    pub op: u64,
}

impl RunResult {
    /// The result of a finished run; what only one kind of run does (a rollback, a revert in
    /// the workspace, retention, the overlay's outcome) starts empty for the caller to set.
    pub(crate) fn finished(f: Finished<'_>) -> RunResult {
        let success = f.outcome.exit_code == Some(0);
        RunResult {
            version: RESULT_VERSION,
            backend: f.backend,
            workspace: f.workspace.display().to_string(),
            cwd: f.cwd.display().to_string(),
            command: f.command,
            before: f.before.hex(),
            after: f.after.hex(),
            after_label: after_label(success),
            exit_code: f.outcome.exit_code,
            signal: f.outcome.signal,
            signal_name: f.outcome.signal.map(signals::name),
            spawn_error: f.outcome.spawn_error,
            success,
            duration_seconds: f.duration,
            total_seconds: f.started.elapsed().as_secs_f64(),
            diff: f.report.summary,
            patch: f.report.patch.0,
            patch_ref: f.report.patch.1,
            patch_bytes: f.report.patch.2,
            violations: violation_entries(&f.report.violations),
            on_violation: f.on_violation.name(),
            reverted: Vec::new(),
            rolled_back: false,
            skipped: Vec::new(),
            op: f.op,
            restore_op: None,
            retention: RetentionEntry::default(),
            overlay: None,
        }
    }

    /// What is printed (`--json`) and written (`--result`).
    pub fn reported(&self) -> ReportedResult<'_> {
        ReportedResult {
            result: self,
            rewind_exit_code: self.exit_code(),
            exit_reason: self.exit_reason(),
        }
    }

    /// Why rewind exits with [`RunResult::exit_code`]: "success" (0), "command" (the command's
    /// own non-zero code), "signal" (128 + N), "spawn_failed" (126/127: it could not start) or
    /// "contract_violation" ([`EXIT_VIOLATION`] under `--on-violation=fail`).
    pub fn exit_reason(&self) -> &'static str {
        if self.signal.is_some() {
            return "signal";
        }
        if self.spawn_error.is_some() {
            return "spawn_failed";
        }
        match self.exit_code {
            Some(c) if c != 0 => "command",
            _ if !self.violations.is_empty() && self.on_violation == "fail" => "contract_violation",
            _ => "success",
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
            _ if !self.violations.is_empty() && self.on_violation == "fail" => EXIT_VIOLATION,
            _ => 0,
        }
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
            path: display(&c.path),
            path_bytes: path_bytes(&c.path),
            old_path: c.old_path.as_deref().map(display),
            old_path_bytes: c.old_path.as_deref().and_then(path_bytes),
            status: c.status.name(),
            old: c.old.map(|e| e.json()),
            new: c.new.map(|e| e.json()),
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

/// The violations as the result shows them.
pub fn violation_entries(v: &[Violation]) -> Vec<ViolationEntry> {
    v.iter()
        .map(|v| ViolationEntry {
            path: display(&v.path),
            path_bytes: path_bytes(&v.path),
            reason: v.reason.name(),
            status: v.status.name(),
        })
        .collect()
}
