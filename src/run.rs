//! `rewind run`: snapshot, run a command, snapshot again, and report what it changed.
//!
//! The sequence, and why each step is where it is:
//! 1. Snapshot the workspace (meta `label=before`). A signal that arrives before the command
//!    starts aborts here, with nothing run.
//! 2. Close the store and run the command with inherited stdin, stdout, stderr and environment.
//!    The store is not held meanwhile, so other rewind processes (and the command itself, which
//!    may call rewind) are never blocked by a long command, and killing rewind while the
//!    command runs cannot touch the store.
//! 3. Reopen the store and snapshot again (label `after`, or `after_failure` on a non-zero exit
//!    or a signal), diff the two, optionally capture the patch (inline up to a cap, else as an
//!    artifact), and record the run as one operation (kind `run`), so `rewind undo` takes the
//!    whole run back.
//! 4. Check the file contract, and revert violating paths or roll the whole run back when asked.
//!    Each of these is its own operation recorded after the run's, so `rewind undo` first takes
//!    back the rollback (or revert), and a second undo takes back the run.
//!
//! Signals (when [`RunOptions::forward_signals`] is set): rewind survives the first SIGINT or
//! SIGTERM so it can take the after snapshot. When rewind runs in the terminal's foreground,
//! the command stays in rewind's process group (so it can use the terminal), and Ctrl-C already
//! reaches it and everything it started; a signal sent by a process (`kill -INT`, SIGTERM) is
//! forwarded to the command. Otherwise (an agent, a CI job, a pipe) the command leads a process
//! group of its own and signals go to that whole group, so `sh -c '...; sleep 10'` stops at
//! once rather than when its child ends. A second signal kills the command's group (SIGKILL),
//! and rewind takes the after snapshot and records the run as `run (interrupted)`, saying so;
//! a third stops rewind at once. The store is safe either way: every write is a redb
//! transaction that either committed or never happened.

pub mod isolate;

use std::ffi::OsString;
use std::io::{self, Read, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::budget::snapshot;
use crate::compare::{Diff, DiffRequest, Rev, diff};
use crate::contract::{Checker, Contract, OnViolation, Violation, revert_paths};
use crate::diff::text::DiffOptions;
use crate::diff::{PatchOptions, SideJson};
use crate::error::{Error, Result};
use crate::fs::{RelPath, display, path_bytes};
use crate::id::Id;
use crate::progress::NoProgress;
use crate::restore::{OpInfo, RestoreOptions, restore};
use crate::snapshot::{SnapshotOptions, SnapshotReport};
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};

/// Version of the result object's layout (`schemas/run-result.schema.json`).
pub const RESULT_VERSION: u32 = 1;
/// rewind's exit code when the command succeeded but broke the contract under
/// `--on-violation=fail` (when the command failed, its own code is kept).
pub const EXIT_VIOLATION: i32 = 123;
/// Exit code when the command could not be started (as `env` and shells use it).
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// Exit code when the command was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// Where the command starts (None: the workspace root; the library does not look at the
    /// process's current directory, so the CLI passes it).
    pub cwd: Option<PathBuf>,
    /// Message for both snapshots (default: the command line).
    pub message: String,
    /// Metadata for both snapshots (`label` is added by the run).
    pub meta: Vec<(String, String)>,
    /// Put the patch into the result (inline, or as an artifact above the cap).
    pub capture_patch: bool,
    /// Largest patch kept inline, in bytes.
    pub max_patch_bytes: u64,
    /// Restore the before snapshot when the command fails.
    pub rollback_on_failure: bool,
    /// Which paths the command may change.
    pub contract: Contract,
    /// What to do with violations.
    pub on_violation: OnViolation,
    /// Per-file deadline for line diffs.
    pub diff_timeout: Duration,
    /// Install SIGINT/SIGTERM handlers for the duration of the run (process-wide: a program
    /// that manages signals itself leaves this off).
    pub forward_signals: bool,
    /// Run in an overlay instead of the workspace (`run --isolate`).
    pub isolate: Option<isolate::Isolate>,
    /// Do not watch the workspace with inotify while the command runs: the after snapshot
    /// then lstats every file (the CLI sets it from `REWIND_NO_WATCH`, for measurements).
    pub no_watch: bool,
    /// Extra gitignore-style globs both snapshots leave out (`run --ignore`).
    pub ignore_globs: Vec<String>,
    /// A scratch directory the command finds in `REWIND_SCRATCH` (see [`crate::scratch`]).
    pub scratch: Option<PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            command: Vec::new(),
            cwd: None,
            message: String::new(),
            meta: Vec::new(),
            capture_patch: false,
            max_patch_bytes: 1 << 20,
            rollback_on_failure: false,
            contract: Contract::default(),
            on_violation: OnViolation::Report,
            diff_timeout: Duration::from_secs(5),
            forward_signals: false,
            isolate: None,
            no_watch: false,
            ignore_globs: Vec::new(),
            scratch: None,
        }
    }
}

/// Progress events, for `--events`: one JSON object per line.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// A snapshot was committed.
    WorkspaceSnapshotTaken {
        /// "before", "after" or "after_failure".
        label: String,
        /// Its id (hex).
        snapshot: String,
        /// Files in it.
        files: u64,
        /// Bytes in it.
        bytes: u64,
        /// Time it took.
        seconds: f64,
    },
    /// The command was started.
    CommandStarted {
        /// Its process id.
        pid: u32,
    },
    /// The command ended.
    CommandFinished {
        /// Its exit code, if it exited.
        exit_code: Option<i32>,
        /// The signal that killed it, if one did.
        signal: Option<i32>,
        /// How long it ran.
        seconds: f64,
    },
    /// The diff between the two snapshots is known.
    WorkspaceDiffComputed {
        /// Files changed.
        files_changed: usize,
        /// Lines added.
        insertions: u64,
        /// Lines removed.
        deletions: u64,
        /// Whether the result carries a patch (inline or as an artifact).
        has_patch: bool,
    },
}

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

/// Runs a command between two snapshots of the workspace at `root`. `open` opens the store;
/// it is called twice, because the store is closed while the command runs. `events` receives
/// progress as it happens.
pub fn run(
    open: &dyn Fn() -> Result<Store>,
    root: &Path,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<RunResult> {
    let t0 = Instant::now();
    if opts.command.is_empty() {
        return Err(Error::NoCommand);
    }
    if opts.isolate.is_some() {
        return isolate::run_isolated(open, root, opts, events);
    }
    let checker = Checker::new(&opts.contract)?;
    let root = crate::workspace::resolve(root)?;
    let cwd = match &opts.cwd {
        Some(d) => d.clone(),
        None => root.clone(),
    };
    let command: Vec<String> = opts
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let guard = if opts.forward_signals {
        Some(signals::Guard::install()?)
    } else {
        None
    };
    let message = if opts.message.is_empty() {
        format!(
            "{}{}",
            crate::history::RUN_MESSAGE_PREFIX,
            command.join(" ")
        )
    } else {
        opts.message.clone()
    };
    let snap_opts = |label: &str| SnapshotOptions {
        message: message.clone(),
        meta: opts
            .meta
            .iter()
            .filter(|(k, _)| k != "label")
            .cloned()
            .chain([("label".to_string(), label.to_string())])
            .collect(),
        op_kind: Some(if label == "before" {
            "pre-run".into()
        } else {
            "post-run".into()
        }),
        ignore_globs: opts.ignore_globs.clone(),
        ..SnapshotOptions::default()
    };

    // 1. Before. Watch the directories the last snapshot saw before walking them, so that
    // the after snapshot needs no lstat where nothing happened (see `scan::watch`).
    let (before, before_skipped, watcher, linked_dirs) = {
        let store = open()?;
        // The store's daemon, when it watches this workspace, narrows both walks itself.
        let watcher = if opts.no_watch || crate::scan::daemon_link::watches(store.dir(), &root) {
            None
        } else {
            let reader = store.reader()?;
            match reader.workspace(&root)? {
                Some(ws) => {
                    let cache = crate::scan::StatCache::load(&reader, ws.id)?;
                    crate::scan::watch::Watcher::start(&root, cache.dir_paths())
                }
                None => None,
            }
        };
        let outcome = snapshot(&store, &root, &snap_opts("before"), &NoProgress)?;
        let id = snapshot_event(events, "before", &outcome.report);
        (id, outcome.report.skipped, watcher, outcome.linked_dirs)
    };
    if let Some(sig) = guard.as_ref().and_then(|g| g.interrupted()) {
        return Err(Error::Interrupted(sig));
    }

    // 2. The command, with the store closed.
    let (outcome, duration) = run_command(opts, &cwd, events)?;
    let success = outcome.exit_code == Some(0);

    // 3. After, diff, patch, operation.
    let store = open()?;
    let after_label = after_label(success);
    let trusted = watcher
        .and_then(|w| w.finish())
        .map(|changes| std::sync::Arc::new(changes.trusted(&linked_dirs)));
    let after_opts = SnapshotOptions {
        trusted_dirs: trusted,
        ..snap_opts(after_label)
    };
    let after_report = snapshot(&store, &root, &after_opts, &NoProgress)?.report;
    let after = snapshot_event(events, after_label, &after_report);
    let report = report_diff(&store, before, after, opts, &checker, events)?;
    // A second signal killed the command's group: the run still happened, as far as it got.
    let kind = if opts.forward_signals && signals::killed() {
        "run (interrupted)"
    } else {
        "run"
    };
    let op = record_run(&store, &root, kind, before, after)?;

    // 4. Rollback or revert.
    let mut rolled_back = false;
    let mut reverted = Vec::new();
    let mut restore_op = None;
    if !success && opts.rollback_on_failure && !report.summary.files.is_empty() {
        let r = restore(
            &store,
            &root,
            before,
            &RestoreOptions {
                force: true,
                ..RestoreOptions::default()
            },
            &OpInfo {
                kind: "rollback".into(),
                reverses: None,
                undoable: true,
            },
            &NoProgress,
        )?;
        rolled_back = true;
        restore_op = r.op;
    } else if !report.violations.is_empty() && opts.on_violation == OnViolation::Revert {
        let paths = revert_paths(&report.violations);
        let r = restore(
            &store,
            &root,
            before,
            &RestoreOptions {
                paths: paths.clone(),
                force: true,
                ..RestoreOptions::default()
            },
            &OpInfo {
                kind: "run-revert".into(),
                reverses: None,
                undoable: true,
            },
            &NoProgress,
        )?;
        reverted = paths.iter().map(|p| display(p)).collect();
        restore_op = r.op;
    }
    drop(guard);
    let mut store = store;
    let retention = match crate::forget::after_run(&mut store, &root) {
        Ok((forgotten, gc)) => RetentionEntry {
            forgotten,
            gc,
            error: None,
        },
        Err(e) => RetentionEntry {
            error: Some(e.to_string()),
            ..RetentionEntry::default()
        },
    };

    Ok(RunResult {
        reverted,
        rolled_back,
        skipped: after_report
            .skipped
            .iter()
            .map(|s| SkippedEntry {
                path: display(&s.path),
                path_bytes: path_bytes(&s.path),
                reason: s.reason.name(),
                detail: s.detail.clone(),
                warn: s.worth_warning(&before_skipped),
            })
            .collect(),
        restore_op,
        retention,
        ..RunResult::finished(Finished {
            backend: "hash",
            workspace: &root,
            cwd: &cwd,
            command,
            before,
            after,
            outcome,
            duration,
            started: t0,
            report,
            on_violation: opts.on_violation,
            op,
        })
    })
}

/// The after snapshot's label: "after", or "after_failure" when the command failed.
pub(crate) fn after_label(success: bool) -> &'static str {
    if success { "after" } else { "after_failure" }
}

/// What a run reports about its change: line statistics, the patch (when captured), and the
/// contract's violations.
pub(crate) struct DiffReport {
    pub summary: DiffSummary,
    /// (inline patch, artifact key, patch bytes).
    pub patch: (Option<String>, Option<String>, Option<u64>),
    pub violations: Vec<crate::contract::Violation>,
}

/// Diffs `before` and `after`, captures the patch if asked, checks the contract and sends the
/// `workspace_diff_computed` event: the part of a run that `run --isolate` shares.
pub(crate) fn report_diff(
    store: &Store,
    before: Id,
    after: Id,
    opts: &RunOptions,
    checker: &Checker,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<DiffReport> {
    let d = diff(
        store,
        Rev::Snapshot(before),
        Rev::Snapshot(after),
        None,
        &DiffRequest::default(),
    )?;
    let dopts = DiffOptions {
        context: 3,
        timeout: Some(opts.diff_timeout),
    };
    let summary = summarize(&d, &dopts)?;
    let mut patch = (None, None, None);
    if opts.capture_patch {
        patch = capture_patch(store, &d, &dopts, opts.max_patch_bytes, before, after)?;
    }
    events(&RunEvent::WorkspaceDiffComputed {
        files_changed: summary.files_changed,
        insertions: summary.insertions,
        deletions: summary.deletions,
        has_patch: patch.0.is_some() || patch.1.is_some(),
    });
    let violations = checker.check(&d.changes);
    Ok(DiffReport {
        summary,
        patch,
        violations,
    })
}

pub(crate) fn snapshot_event(
    events: &mut dyn FnMut(&RunEvent),
    label: &str,
    r: &SnapshotReport,
) -> Id {
    let id = r.id.unwrap_or_default();
    events(&RunEvent::WorkspaceSnapshotTaken {
        label: label.into(),
        snapshot: id.hex(),
        files: r.stats.files,
        bytes: r.stats.bytes,
        seconds: r.seconds,
    });
    id
}

/// How the command ended.
pub(crate) struct Outcome {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub spawn_error: Option<String>,
}

fn run_command(
    opts: &RunOptions,
    cwd: &Path,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<(Outcome, f64)> {
    let mut cmd = Command::new(&opts.command[0]);
    cmd.args(&opts.command[1..]).current_dir(cwd);
    if let Some(dir) = &opts.scratch {
        cmd.env("REWIND_SCRATCH", dir);
    }
    run_prepared(cmd, opts, events)
}

/// Runs a prepared command (in an overlay, say) with the run's signal handling, timed: returns
/// how it ended and its duration in seconds, and reports the end as `CommandFinished`.
pub(crate) fn run_prepared(
    cmd: Command,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<(Outcome, f64)> {
    let started = Instant::now();
    let outcome = wait_for(cmd, opts, events)?;
    let seconds = started.elapsed().as_secs_f64();
    events(&RunEvent::CommandFinished {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        seconds,
    });
    Ok((outcome, seconds))
}

/// Spawns `cmd` and waits for it, forwarding signals as the run's options say.
fn wait_for(
    mut cmd: Command,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<Outcome> {
    let own_group = opts.forward_signals && !signals::terminal_foreground();
    if own_group {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.kind() == io::ErrorKind::NotFound {
                EXIT_NOT_FOUND
            } else {
                EXIT_CANNOT_EXECUTE
            };
            return Ok(Outcome {
                exit_code: Some(code),
                signal: None,
                spawn_error: Some(format!("{}: {e}", opts.command[0].to_string_lossy())),
            });
        }
    };
    events(&RunEvent::CommandStarted { pid: child.id() });
    let pid = child.id() as libc::pid_t;
    if opts.forward_signals {
        signals::set_child(pid, own_group);
        // Wait without reaping, so the pid cannot be reused while the handler may still send
        // it a signal; then forget it, then reap.
        signals::wait_exited(pid);
        signals::set_child(0, false);
    }
    let status = child
        .wait()
        .map_err(|e| Error::io(opts.command[0].clone(), e))?;
    Ok(Outcome {
        exit_code: status.code(),
        signal: status.signal(),
        spawn_error: None,
    })
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

/// The artifact key a run's patch is stored under.
pub fn patch_key(before: Id, after: Id) -> String {
    format!("patch/{}-{}", before.short(), after.short())
}

/// Writes the patch into memory up to `cap` bytes and spills to a temporary file beyond, so a
/// huge patch is never held whole. Returns (inline patch, artifact key, length).
fn capture_patch(
    store: &Store,
    d: &Diff,
    dopts: &DiffOptions,
    cap: u64,
    before: Id,
    after: Id,
) -> Result<(Option<String>, Option<String>, Option<u64>)> {
    let mut spill = Spill {
        mem: Vec::new(),
        file: None,
        cap,
        len: 0,
    };
    d.write_patch(
        &mut spill,
        &PatchOptions {
            diff: *dopts,
            color: false,
            // A captured patch must apply anywhere, binary changes included.
            binary: true,
        },
    )?;
    let len = spill.len;
    match spill.file {
        None => Ok((
            Some(String::from_utf8_lossy(&spill.mem).into_owned()),
            None,
            Some(len),
        )),
        Some(mut f) => {
            f.flush().map_err(|e| Error::io("<patch spill file>", e))?;
            f.rewind().map_err(|e| Error::io("<patch spill file>", e))?;
            let key = patch_key(before, after);
            let mut r = io::BufReader::with_capacity(1 << 16, f);
            crate::artifact::put(
                store,
                &key,
                &mut r as &mut dyn Read,
                vec![
                    ("kind".into(), "patch".into()),
                    ("before".into(), before.hex()),
                    ("after".into(), after.hex()),
                ],
                true,
            )?;
            Ok((None, Some(key), Some(len)))
        }
    }
}

/// Memory up to a cap, then a temporary file (unlinked at once, gone when dropped).
struct Spill {
    mem: Vec<u8>,
    file: Option<std::fs::File>,
    cap: u64,
    len: u64,
}

impl Write for Spill {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len += buf.len() as u64;
        if let Some(f) = &mut self.file {
            f.write_all(buf)?;
        } else if self.len > self.cap {
            let mut f = tempfile::tempfile()?;
            f.write_all(&self.mem)?;
            f.write_all(buf)?;
            self.mem = Vec::new();
            self.file = Some(f);
        } else {
            self.mem.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// Records the run as one operation (`kind`: "run", or "run (interrupted)") that changed the
/// workspace from `before` to `after`.
fn record_run(store: &Store, root: &Path, kind: &str, before: Id, after: Id) -> Result<u64> {
    oplog::record_alone(
        store,
        OpRecord::new(
            store,
            kind,
            root.as_os_str().as_bytes().to_vec(),
            Some(before),
            Some(after),
        ),
    )
}

/// What [`check`] found.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The snapshot before.
    pub a: Id,
    /// The snapshot after.
    pub b: Id,
    /// Violations, sorted by path.
    pub violations: Vec<Violation>,
    /// Paths put back to `a` (with `revert`).
    pub reverted: Vec<Vec<u8>>,
    /// The restore operation (with `revert` and violations).
    pub op: Option<u64>,
}

/// Checks the changes from `a` to `b` against a contract; with `revert_in`, puts the violating
/// paths of that workspace back to `a` (one undoable operation).
pub fn check(
    store: &Store,
    a: Id,
    b: Id,
    contract: &Contract,
    revert_in: Option<&Path>,
) -> Result<CheckReport> {
    let checker = Checker::new(contract)?;
    let d = diff(
        store,
        Rev::Snapshot(a),
        Rev::Snapshot(b),
        None,
        &DiffRequest::default(),
    )?;
    let violations = checker.check(&d.changes);
    drop(d);
    let mut report = CheckReport {
        a,
        b,
        violations,
        reverted: Vec::new(),
        op: None,
    };
    if let (Some(root), false) = (revert_in, report.violations.is_empty()) {
        let paths = revert_paths(&report.violations);
        let r = restore(
            store,
            root,
            a,
            &RestoreOptions {
                paths: paths.clone(),
                force: true,
                ..RestoreOptions::default()
            },
            &OpInfo {
                kind: "check-revert".into(),
                reverses: None,
                undoable: true,
            },
            &NoProgress,
        )?;
        report.reverted = paths.into_iter().map(RelPath::into_bytes).collect();
        report.op = r.op;
    }
    Ok(report)
}

/// Signal handling for the duration of a run (see the module docs).
pub mod signals {
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

    use crate::error::{Error, Result};

    /// The running command's pid (0 when none).
    static CHILD: AtomicI32 = AtomicI32::new(0);
    /// Whether the command leads a process group of its own (signals go to the group).
    static GROUP: AtomicBool = AtomicBool::new(false);
    /// Whether a second signal killed the command's group.
    static KILLED: AtomicBool = AtomicBool::new(false);
    /// Signals received since the guard was installed.
    static HITS: AtomicU32 = AtomicU32::new(0);
    /// The first signal received.
    static FIRST: AtomicI32 = AtomicI32::new(0);
    /// A signal that arrived while no command ran and should be forwarded once one does.
    static PENDING: AtomicI32 = AtomicI32::new(0);
    /// One guard at a time per process.
    static INSTALLED: AtomicBool = AtomicBool::new(false);

    const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

    extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // Only async-signal-safe calls here: atomics, kill, signal, raise.
        let n = HITS.fetch_add(1, Ordering::SeqCst) + 1;
        let child = CHILD.load(Ordering::SeqCst);
        let target = if GROUP.load(Ordering::SeqCst) {
            -child
        } else {
            child
        };
        if n == 2 && child > 0 {
            // A second signal while the command runs: kill it and all it started; rewind
            // records the run as interrupted.
            KILLED.store(true, Ordering::SeqCst);
            unsafe {
                libc::kill(target, libc::SIGKILL);
            }
            return;
        }
        if n > 1 {
            // Otherwise stop now, as the signal would have without us.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            return;
        }
        FIRST.store(sig, Ordering::SeqCst);
        // SIGINT from the terminal already went to the whole foreground process group, the
        // command's included when it shares rewind's group.
        let from_terminal =
            sig == libc::SIGINT && !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
        if from_terminal && !GROUP.load(Ordering::SeqCst) {
            return;
        }
        if child > 0 {
            unsafe {
                libc::kill(target, sig);
            }
        } else {
            PENDING.store(sig, Ordering::SeqCst);
        }
    }

    /// Whether rewind is in the foreground of the terminal on its standard input (then the
    /// command shares its process group, so it can read the terminal).
    pub fn terminal_foreground() -> bool {
        // SAFETY: plain queries on descriptor 0 and this process.
        unsafe { libc::isatty(0) == 1 && libc::tcgetpgrp(0) == libc::getpgrp() }
    }

    /// Whether a second signal killed the command's process group.
    pub fn killed() -> bool {
        KILLED.load(Ordering::SeqCst)
    }

    /// Installs the handlers; restores the previous ones when dropped.
    pub struct Guard {
        old: Vec<(libc::c_int, libc::sigaction)>,
    }

    impl Guard {
        /// Installs the run's handlers for SIGINT and SIGTERM.
        pub fn install() -> Result<Guard> {
            if INSTALLED.swap(true, Ordering::SeqCst) {
                return Err(Error::Invalid(
                    "another rewind run in this process already handles signals".into(),
                ));
            }
            HITS.store(0, Ordering::SeqCst);
            FIRST.store(0, Ordering::SeqCst);
            PENDING.store(0, Ordering::SeqCst);
            CHILD.store(0, Ordering::SeqCst);
            GROUP.store(false, Ordering::SeqCst);
            KILLED.store(false, Ordering::SeqCst);
            let mut old = Vec::new();
            for sig in SIGNALS {
                // SAFETY: a zeroed sigaction is a valid value; the handler only does
                // async-signal-safe work.
                unsafe {
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = on_signal as *const () as usize;
                    sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                    libc::sigemptyset(&mut sa.sa_mask);
                    let mut prev: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, &sa, &mut prev) != 0 {
                        let e = std::io::Error::last_os_error();
                        drop(Guard { old });
                        return Err(Error::io("<signal handler>", e));
                    }
                    old.push((sig, prev));
                }
            }
            Ok(Guard { old })
        }

        /// The signal received so far, if any.
        pub fn interrupted(&self) -> Option<&'static str> {
            match FIRST.load(Ordering::SeqCst) {
                0 => None,
                s => Some(if s == libc::SIGINT {
                    "SIGINT"
                } else {
                    "SIGTERM"
                }),
            }
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            for (sig, prev) in &self.old {
                // SAFETY: restoring the disposition saved by install.
                unsafe {
                    libc::sigaction(*sig, prev, std::ptr::null_mut());
                }
            }
            CHILD.store(0, Ordering::SeqCst);
            INSTALLED.store(false, Ordering::SeqCst);
        }
    }

    /// Sets the pid signals are forwarded to (to its process group when `group`); forwards one
    /// that arrived just before.
    pub fn set_child(pid: libc::pid_t, group: bool) {
        GROUP.store(group, Ordering::SeqCst);
        CHILD.store(pid, Ordering::SeqCst);
        if pid > 0 {
            let pending = PENDING.swap(0, Ordering::SeqCst);
            if pending != 0 {
                // SAFETY: pid is our unreaped child (and leads its group when `group`).
                unsafe {
                    libc::kill(if group { -pid } else { pid }, pending);
                }
            }
        }
    }

    /// Waits until the child has exited, leaving it unreaped (its pid stays reserved).
    pub fn wait_exited(pid: libc::pid_t) {
        loop {
            // SAFETY: waitid with WNOWAIT only inspects our own child.
            let r = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return;
            }
        }
    }

    /// A signal's name, for the result.
    pub fn name(sig: i32) -> String {
        let known = [
            (libc::SIGHUP, "SIGHUP"),
            (libc::SIGINT, "SIGINT"),
            (libc::SIGQUIT, "SIGQUIT"),
            (libc::SIGILL, "SIGILL"),
            (libc::SIGABRT, "SIGABRT"),
            (libc::SIGBUS, "SIGBUS"),
            (libc::SIGFPE, "SIGFPE"),
            (libc::SIGKILL, "SIGKILL"),
            (libc::SIGSEGV, "SIGSEGV"),
            (libc::SIGPIPE, "SIGPIPE"),
            (libc::SIGALRM, "SIGALRM"),
            (libc::SIGTERM, "SIGTERM"),
            (libc::SIGUSR1, "SIGUSR1"),
            (libc::SIGUSR2, "SIGUSR2"),
            (libc::SIGXCPU, "SIGXCPU"),
        ];
        known
            .iter()
            .find(|(n, _)| *n == sig)
            .map(|(_, s)| s.to_string())
            .unwrap_or_else(|| format!("SIG{sig}"))
    }
}
