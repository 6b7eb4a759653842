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

mod check;
pub mod isolate;
mod patch;
mod result;
pub mod signals;
mod spawn;

pub use check::{CheckReport, check};
use patch::capture_patch;
pub use patch::patch_key;
pub use result::*;
use spawn::run_command;
pub(crate) use spawn::{Outcome, run_prepared};

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::budget::snapshot;
use crate::compare::{DiffRequest, Rev, diff};
use crate::contract::{Checker, Contract, OnViolation, revert_paths};
use crate::diff::text::DiffOptions;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::progress::NoProgress;
use crate::restore::{OpInfo, RestoreOptions, restore};
use crate::snapshot::{SnapshotOptions, SnapshotReport};
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};

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

/// Runs a command between two snapshots of the workspace at `root`. `open` opens the store;
/// it is called twice, because the store is closed while the command runs. `events` receives
/// progress as it happens.
pub fn run(
    open: &dyn Fn() -> Result<Store>,
    root: &Path,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<RunResult> {
    let mut prep = Prepared::new(root, opts)?;
    if opts.isolate.is_some() {
        return isolate::run_isolated(open, prep, opts, events);
    }
    let root = prep.root.clone();
    let cwd = match &opts.cwd {
        Some(d) => d.clone(),
        None => root.clone(),
    };
    let message = if opts.message.is_empty() {
        format!(
            "{}{}",
            crate::history::RUN_MESSAGE_PREFIX,
            prep.command.join(" ")
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
                    let cache = crate::scan::StatCache::load(&reader, ws.id())?;
                    crate::scan::watch::Watcher::start(&root, cache.dir_paths())
                }
                None => None,
            }
        };
        let outcome = snapshot(&store, &root, &snap_opts("before"), &NoProgress)?;
        let id = snapshot_event(events, "before", &outcome.report);
        (id, outcome.report.skipped, watcher, outcome.linked_dirs)
    };
    prep.check_interrupted()?;

    // 2. The command, with the store closed.
    let (outcome, duration) = run_command(opts, &cwd, events)?;
    let success = outcome.exit_code == Some(0);

    // 3. After, diff, patch, operation.
    let store = open()?;
    let after_label = AfterLabel::of(success).name();
    let trusted = watcher
        .and_then(|w| w.finish())
        .map(|changes| std::sync::Arc::new(changes.trusted(&linked_dirs)));
    let after_opts = SnapshotOptions {
        trusted_dirs: trusted,
        ..snap_opts(after_label)
    };
    let after_report = snapshot(&store, &root, &after_opts, &NoProgress)?.report;
    let after = snapshot_event(events, after_label, &after_report);
    let report = report_diff(&store, before, after, opts, &prep.checker, events)?;
    // A second signal killed the command's group: the run still happened, as far as it got.
    let kind = if opts.forward_signals && signals::killed() {
        "run (interrupted)"
    } else {
        "run"
    };
    let op = record_run(&store, &root, kind, before, after)?;

    // 4. Rollback or revert.
    let mut reverted = Vec::new();
    let mut restore_done = None;
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
        restore_done = Some(Restored {
            rolled_back: true,
            op: r.op,
        });
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
        reverted = paths;
        restore_done = Some(Restored {
            rolled_back: false,
            op: r.op,
        });
    }
    drop(prep.guard.take());
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
    let skipped = after_report
        .skipped
        .iter()
        .map(|s| SkippedEntry {
            path: s.path.clone(),
            reason: s.reason,
            detail: s.detail.clone(),
            warn: s.worth_warning(&before_skipped),
        })
        .collect();
    Ok(RunResult::finished(
        prep,
        Finished {
            cwd,
            before,
            after,
            outcome,
            duration,
            report,
            on_violation: opts.on_violation,
            op,
            reverted,
            restore: restore_done,
            skipped,
            retention,
            overlay: None,
        },
    ))
}

/// What both kinds of run (in the workspace, or isolated) set up before their first
/// snapshot.
pub(crate) struct Prepared {
    /// When the whole run began.
    pub started: Instant,
    pub checker: Checker,
    /// The workspace's canonical path.
    pub root: PathBuf,
    /// The command line, as text.
    pub command: Vec<String>,
    /// The signal handlers, while they are installed.
    pub guard: Option<signals::Guard>,
}

impl Prepared {
    fn new(root: &Path, opts: &RunOptions) -> Result<Prepared> {
        let started = Instant::now();
        if opts.command.is_empty() {
            return Err(Error::NoCommand);
        }
        let checker = Checker::new(&opts.contract)?;
        let root = crate::workspace::resolve(root)?;
        let command = opts
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let guard = if opts.forward_signals {
            Some(signals::Guard::install()?)
        } else {
            None
        };
        Ok(Prepared {
            started,
            checker,
            root,
            command,
            guard,
        })
    }

    /// A signal that arrived before the command started aborts the run, with nothing run.
    pub fn check_interrupted(&self) -> Result<()> {
        match self.guard.as_ref().and_then(|g| g.interrupted()) {
            Some(sig) => Err(Error::Interrupted(sig)),
            None => Ok(()),
        }
    }
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
