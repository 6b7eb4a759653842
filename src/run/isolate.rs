//! `rewind run --isolate`: create an overlay, run the command in it, report the diff with the
//! same result object as `run`, then accept the changes onto the workspace or keep the overlay
//! for inspection.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::carry::ConflictPolicy;
use crate::contract::{OnViolation, revert_paths};
use crate::error::{Error, Result};
use crate::overlay::{AcceptOptions, Backend, BackendChoice, CreateOptions};
use crate::run::{
    AfterLabel, Finished, Prepared, RetentionEntry, RunEvent, RunOptions, RunResult, report_diff,
    run_prepared,
};
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};

/// When an isolated run's changes are accepted onto the workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AcceptWhen {
    /// When the command exits 0 and breaks no contract.
    #[default]
    OnSuccess,
    /// Never: the overlay is kept for `overlay diff`, `accept` or `drop`.
    Never,
    /// Whatever the command's outcome.
    Always,
}

/// How to isolate a run.
#[derive(Clone, Debug, Default)]
pub struct Isolate {
    /// The overlay backend (for an overlay this run creates).
    pub backend: BackendChoice,
    /// When to accept.
    pub accept: AcceptWhen,
    /// Run in this overlay (id or name) instead of a new one: one agent session is one
    /// overlay across many commands. A name not in use yet creates the overlay.
    pub overlay: Option<String>,
    /// With `overlay`: it must exist already (`overlay run ID`).
    pub existing: bool,
    /// Keep the overlay after a full accept (it is always kept when something is left).
    pub keep: bool,
    /// For an overlay this run creates: [`crate::overlay::CreateOptions::namespace_refused`].
    pub namespace_refused: Option<String>,
}

/// The overlay part of an isolated run's result.
#[derive(Clone, Debug)]
pub struct OverlayOutcome {
    /// The overlay's id.
    pub id: u64,
    /// Its backend.
    pub backend: Backend,
    /// Why `auto` fell back to the copy backend.
    pub fallback: Option<String>,
    /// Whether the changes were accepted onto the workspace.
    pub accepted: bool,
    /// Paths that conflicted with changes made in the workspace meanwhile (left pending).
    pub conflicts: Vec<Vec<u8>>,
    /// The accept operation (undo target).
    pub accept_op: Option<u64>,
    /// Whether the overlay still exists (not accepted, or accepted with conflicts).
    pub kept: bool,
}

/// Runs `opts.command` in an overlay of the workspace `prep` resolved.
pub(crate) fn run_isolated(
    open: &dyn Fn() -> Result<Store>,
    mut prep: Prepared,
    opts: &RunOptions,
    events: &mut dyn FnMut(&RunEvent),
) -> Result<RunResult> {
    let iso = opts.isolate.clone().unwrap_or_default();
    let root = prep.root.clone();
    let rel_cwd = match &opts.cwd {
        Some(d) => d
            .canonicalize()
            .ok()
            .and_then(|d| d.strip_prefix(&root).ok().map(Path::to_path_buf))
            .unwrap_or_default(),
        None => PathBuf::new(),
    };

    // 1. The overlay (its base snapshot is the run's "before"), its run lock, the command.
    let (mut rec, fallback, session, cmd) = {
        let store = open()?;
        let t_create = Instant::now();
        let found = match &iso.overlay {
            Some(key) => match crate::overlay::find_record(&store, key) {
                Ok(rec) => Some(rec),
                Err(e) if iso.existing || key.parse::<u64>().is_ok() => return Err(e),
                Err(_) => None,
            },
            None => None,
        };
        let (mut rec, fallback) = match found {
            Some(rec) => {
                if rec.workspace_path() != root {
                    return Err(Error::OverlayOfOtherWorkspace {
                        overlay: rec.id,
                        owner: rec.workspace_path(),
                        workspace: root.to_path_buf(),
                    });
                }
                (rec, None)
            }
            None => {
                let created = crate::overlay::create(
                    &store,
                    &root,
                    &CreateOptions {
                        backend: iso.backend,
                        name: iso.overlay.clone(),
                        namespace_refused: iso.namespace_refused.clone(),
                        ..CreateOptions::default()
                    },
                    &crate::progress::NoProgress,
                )?;
                (created.overlay.rec, created.fallback)
            }
        };
        let session = crate::overlay::begin_run(&store, &mut rec, &prep.command.join(" "))?;
        let before = session.before();
        let before_rec = store.reader()?.snapshot_record(&before)?;
        events(&RunEvent::WorkspaceSnapshotTaken {
            label: "before".into(),
            snapshot: before.hex(),
            files: before_rec.stats.files,
            bytes: before_rec.stats.bytes,
            seconds: t_create.elapsed().as_secs_f64(),
        });
        let cmd = crate::overlay::command(&store, &rec, &opts.command, &rel_cwd)?;
        (rec, fallback, session, cmd)
    };
    let before = session.before();
    prep.check_interrupted()?;

    // 2. The command, with the store closed.
    let (outcome, duration) = run_prepared(cmd, opts, events)?;
    let success = outcome.exit_code == Some(0);

    // 3. The overlay's state, the diff, the contract.
    let store = open()?;
    let t_state = Instant::now();
    let after = crate::overlay::finish_run(&store, &mut rec, session)?;
    let after_label = AfterLabel::of(success).name();
    let state_rec = store.reader()?.snapshot_record(&after)?;
    events(&RunEvent::WorkspaceSnapshotTaken {
        label: after_label.into(),
        snapshot: after.hex(),
        files: state_rec.stats.files,
        bytes: state_rec.stats.bytes,
        seconds: t_state.elapsed().as_secs_f64(),
    });
    let report = report_diff(&store, before, after, opts, &prep.checker, events)?;
    let op = oplog::record_alone(
        &store,
        OpRecord {
            changed_workspace: false,
            ..OpRecord::new(
                &store,
                "run-isolated",
                rec.workspace.clone(),
                Some(before),
                Some(after),
            )
        },
    )?;

    // 4. Revert violations inside the overlay; accept, or keep the overlay.
    let mut reverted = Vec::new();
    if !report.violations.is_empty() && opts.on_violation == OnViolation::Revert {
        let paths = revert_paths(&report.violations);
        crate::overlay::reject(&store, &mut rec, &paths, &[])?;
        reverted = paths;
    }
    let contract_ok = report.violations.is_empty() || !reverted.is_empty();
    let wanted = match iso.accept {
        AcceptWhen::Always => {
            opts.on_violation != OnViolation::Fail || report.violations.is_empty()
        }
        AcceptWhen::Never => false,
        AcceptWhen::OnSuccess => success && contract_ok,
    };
    let mut result_overlay = OverlayOutcome {
        id: rec.id,
        backend: rec.backend,
        fallback,
        accepted: false,
        conflicts: Vec::new(),
        accept_op: None,
        kept: true,
    };
    if wanted {
        let accepted = crate::overlay::accept(
            &store,
            &mut rec,
            &AcceptOptions {
                paths: Vec::new(),
                policy: ConflictPolicy::Skip,
                include_ignored: false,
                hunks: Vec::new(),
                edited: Vec::new(),
                run: None,
            },
        )?;
        result_overlay.accepted = true;
        result_overlay.accept_op = accepted.op;
        result_overlay.conflicts = accepted.conflicts.iter().map(|c| c.path.clone()).collect();
        // Ignored build outputs go with the overlay: `overlay accept --include-ignored` on a
        // kept overlay is the way to take them.
        if accepted.conflicts.is_empty() && !iso.keep {
            crate::overlay::drop_overlay(&store, &rec)?;
            result_overlay.kept = false;
        }
    }
    drop(prep.guard.take());

    let cwd = root.join(&rel_cwd);
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
            restore: None,
            skipped: Vec::new(),
            retention: RetentionEntry::default(),
            overlay: Some(result_overlay),
        },
    ))
}
