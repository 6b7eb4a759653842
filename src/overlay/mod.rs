//! Overlays: isolated, writable views of a workspace whose changes are diffed, then accepted
//! onto the workspace (merged three ways) or rejected, per file.
//!
//! Two backends, both without FUSE:
//! - `namespace`: the command runs in a private user and mount namespace where overlayfs
//!   shows the workspace as the lower layer and `overlays/<id>/upper` in the store as the upper
//!   one. Nothing is copied; the changes are read from the upper directory alone.
//! - `copy`: the base snapshot is materialized into `overlays/<id>/tree` (reflinked or
//!   copied from the workspace where it still matches, else written from the store), and the
//!   changes are a snapshot of that directory compared with the base.
//!
//! Either way an overlay's *state* is a stored snapshot (base plus the overlay's changes), so
//! diffing, accepting and rejecting are tree operations shared by both backends. Accept is
//! [`crate::carry`] from the base to the state, onto the live workspace, as one undoable
//! operation; accepted paths are remembered (with the content accepted) so they stop being
//! pending until the overlay changes them again.

mod accept;
mod backend;
mod copy;
mod lock;

mod namespace;
mod record;
mod reject;
mod runs;

pub use accept::*;
pub use lock::*;
pub use record::*;
pub use reject::*;

pub(crate) use runs::by_run;
pub use runs::{OverlayRun, RunChanges, RunFile};

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::compare::{Diff, DiffRequest, Rev, diff};
use crate::diff::tree::FileChange;
use crate::error::{Error, IoContext, Result};
use crate::files::RelPath;
use crate::hunks;
use crate::id::Id;
use crate::snapshot::{SnapshotOptions, snapshot};
use crate::store::Store;
use crate::store::tables::OVERLAYS;

/// What `create` should do.
#[derive(Clone, Debug, Default)]
pub struct CreateOptions {
    /// Start from this snapshot instead of a fresh one of the live workspace.
    pub from: Option<Id>,
    /// A name for the overlay.
    pub name: Option<String>,
    /// The backend.
    pub backend: BackendChoice,
    /// Copy backend: ignored paths (gitignore-style globs) to copy in as well.
    pub with_ignored: Vec<String>,
    /// Treat the namespace backend as unavailable, for this reason (`auto` falls back to copy
    /// saying it; the CLI sets it from `REWIND_OVERLAY_PROBE=fail`).
    pub namespace_refused: Option<String>,
}

/// What `create` did.
#[derive(Clone, Debug)]
pub struct Created {
    /// The new overlay.
    pub overlay: Overlay,
    /// Why `auto` fell back to the copy backend, if it did.
    pub fallback: Option<String>,
    /// Files materialized (copy backend).
    pub files_copied: u64,
    /// Wall time.
    pub seconds: f64,
}

/// Creates an overlay of the workspace at `root`.
pub fn create(
    store: &Store,
    root: &Path,
    opts: &CreateOptions,
    progress: &dyn crate::progress::Progress,
) -> Result<Created> {
    let t0 = std::time::Instant::now();
    let root = crate::workspace::for_store(store, root, false)?;
    if let Some(name) = &opts.name {
        validate_name(name)?;
        if list_records(store)?
            .iter()
            .any(|o| o.name.as_deref() == Some(name))
        {
            return Err(Error::OverlayExists(name.clone()));
        }
    }
    let (backend, fallback) = match opts.backend {
        BackendChoice::Copy => (Backend::Copy, None),
        BackendChoice::Namespace => {
            match namespace::probe(store, opts.namespace_refused.as_deref()) {
                Ok(()) => (Backend::Namespace, None),
                Err(why) => {
                    return Err(Error::NamespaceUnavailable(why));
                }
            }
        }
        BackendChoice::Auto => match namespace::probe(store, opts.namespace_refused.as_deref()) {
            Ok(()) => (Backend::Namespace, None),
            Err(why) => (Backend::Copy, Some(why)),
        },
    };
    let base = match opts.from {
        Some(id) => {
            store.reader()?.snapshot_record(&id)?;
            id
        }
        None => {
            let outcome = snapshot(
                store,
                &root,
                &SnapshotOptions {
                    message: "overlay base".into(),
                    meta: vec![("label".into(), "overlay-base".into())],
                    op_kind: Some("overlay-base".into()),
                    ..SnapshotOptions::default()
                },
                progress,
            )?;
            outcome.report.id.unwrap_or_default()
        }
    };
    // The id and the record first, so that a crash leaves a listed overlay to drop rather
    // than a directory nobody knows about.
    let txn = store.begin_write()?;
    let id = crate::store::read_counter(&txn, "next_overlay")?.max(1);
    crate::store::write_counter(&txn, "next_overlay", id + 1)?;
    let rec = OverlayRecord {
        id,
        name: opts.name.clone(),
        workspace: root.as_os_str().as_bytes().to_vec(),
        backend,
        base,
        created_ns: crate::files::now_ns(),
        state: None,
        settled: Vec::new(),
        states: Vec::new(),
        ignored: Vec::new(),
        settled_by: Vec::new(),
        raced: Vec::new(),
        settled_hunks: Vec::new(),
        runs: Vec::new(),
    };
    txn.open_table(OVERLAYS)?
        .insert(id, rec.encode()?.as_slice())?;
    txn.commit()?;
    let dir = rec.dir(store);
    let made = (|| -> Result<u64> {
        fs::create_dir_all(&dir).at(&dir)?;
        backend
            .imp()
            .create(store, &rec, &dir, &root, &opts.with_ignored, progress)
    })();
    let files_copied = match made {
        Ok(n) => n,
        Err(e) => {
            let _ = drop_overlay(store, &rec);
            return Err(e);
        }
    };
    Ok(Created {
        overlay: Overlay::new(rec),
        fallback,
        files_copied,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn reload(store: &Store, rec: &mut OverlayRecord) -> Result<()> {
    let bytes = store
        .reader()?
        .overlay_record(rec.id)?
        .ok_or_else(|| Error::OverlayDropped(rec.id))?;
    *rec = OverlayRecord::decode(rec.id, &bytes)?;
    Ok(())
}

/// Computes the overlay's state snapshot (base plus its changes), stores it and returns its id.
/// The caller holds the lock.
pub(crate) fn state(store: &Store, rec: &mut OverlayRecord) -> Result<Id> {
    let (id, ignored) = rec.backend.imp().state(store, rec)?;
    if rec.ignored != ignored {
        rec.ignored = ignored;
        save(store, rec)?;
    }
    if rec.state != Some(id) {
        // Superseded states stay stored until the overlay is dropped: a reject's operation
        // names the state before it, and undoing the reject goes back to it.
        if rec.backend.imp().owns_states() && !rec.states.contains(&id) {
            rec.states.push(id);
        }
        rec.state = Some(id);
        save(store, rec)?;
    }
    Ok(id)
}

/// A command about to run in an overlay: holds the run lock until the run is finished.
pub struct RunSession {
    _run: OverlayLock,
    /// Namespace backend: the workspace's changed paths when the pinned layer was refreshed.
    pinned: Option<namespace::Pinned>,
    /// The overlay's state when the command started.
    before: Id,
    /// The command line, recorded with the run.
    command: String,
}

impl RunSession {
    /// The overlay's state when the command started.
    pub fn before(&self) -> Id {
        self.before
    }
}

/// Gets an overlay ready for a command: takes its run lock (waiting with a notice while
/// another command runs there) and, for the namespace backend, refreshes the pinned layer so
/// the command sees the base snapshot.
pub(crate) fn begin_run(
    store: &Store,
    rec: &mut OverlayRecord,
    command: &str,
) -> Result<RunSession> {
    let run = run_lock(store, rec)?;
    let _lock = lock(store, rec)?;
    let pinned = rec.backend.imp().begin_run(store, rec)?;
    // What changed since the last run (a reject, an edit from outside) is no run's work: the
    // state now, unless nothing was ever computed (a new overlay holds its base).
    let before = match rec.state {
        Some(_) => state(store, rec)?,
        None => rec.base,
    };
    Ok(RunSession {
        _run: run,
        pinned,
        before,
        command: command.to_string(),
    })
}

/// After the command: computes the overlay's state and, for the namespace backend, marks as
/// raced (see `OverlayRecord::raced`) the paths the overlay changed whose workspace content
/// moved while the command ran. Releases the run lock.
pub(crate) fn finish_run(
    store: &Store,
    rec: &mut OverlayRecord,
    session: RunSession,
) -> Result<Id> {
    let _lock = lock(store, rec)?;
    let id = state(store, rec)?;
    if let Some(pinned) = &session.pinned {
        let d = diff(
            store,
            Rev::Snapshot(rec.base),
            Rev::Snapshot(id),
            None,
            &DiffRequest {
                renames: false,
                rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
                paths: Vec::new(),
            },
        )?;
        let root = rec.workspace_path();
        let known: rustc_hash::FxHashSet<Vec<u8>> = rec.raced.iter().cloned().collect();
        let mut raced = Vec::new();
        for c in d.changes.iter().filter(|c| !known.contains(&c.path)) {
            let expected = match pinned.get(&c.path) {
                Some(v) => *v,
                None => c.old.map(|o| (o.kind, o.id)),
            };
            if workspace_entry(&root, &c.path) != Some(expected) {
                raced.push(c.path.clone());
            }
        }
        if !raced.is_empty() {
            rec.raced.extend(raced);
            save(store, rec)?;
        }
    }
    let n = rec.runs.last().map_or(1, |r| r.n + 1);
    rec.runs.push(OverlayRun {
        n,
        before: session.before,
        after: id,
        command: session.command.clone(),
        finished_ns: crate::files::now_ns(),
    });
    save(store, rec)?;
    drop(session);
    Ok(id)
}

/// The kind and content id of a workspace path (Some(None): absent); None when it cannot be
/// read as a file or symlink (a directory now, say).
fn workspace_entry(root: &Path, rel: &[u8]) -> Option<Option<(crate::store::tree::Kind, Id)>> {
    match crate::apply::read_current(root, rel) {
        Ok(v) => Some(v.map(|(kind, bytes)| (kind, Id::of(&bytes)))),
        Err(_) => None,
    }
}

/// The overlay's changes against its base.
pub struct OverlayDiff {
    /// The diff from the base to the state, reduced to pending changes.
    pub diff: Diff,
    /// Ignored paths the overlay wrote (build outputs...): not part of `diff`, and copied into
    /// the workspace only when asked (see [`Overlay::ignored`]).
    pub ignored: Vec<Vec<u8>>,
    /// The state snapshot.
    pub state: Id,
}

/// Computes what the overlay changed that is still pending. Works while a command runs in
/// the overlay (it reads the upper layer as it is at that moment).
pub(crate) fn overlay_diff(
    store: &Store,
    rec: &mut OverlayRecord,
    renames: bool,
) -> Result<OverlayDiff> {
    let _lock = lock(store, rec)?;
    diff_locked(store, rec, renames)
}

/// A checkpoint of an overlay: its state now (base plus its changes, pending or not), kept as
/// a snapshot of its workspace with `message` and `meta` (plus `overlay`: the overlay's id).
/// It is not put in the workspace's log (the workspace never held that tree) and outlives the
/// overlay: restore or diff it by id.
pub(crate) fn snapshot_state(
    store: &Store,
    rec: &mut OverlayRecord,
    message: &str,
    meta: &[(String, String)],
) -> Result<Id> {
    use crate::store::snapshot::SnapshotRecord;
    use redb::ReadableTable;
    let state_id = {
        let _lock = lock(store, rec)?;
        state(store, rec)?
    };
    let (state, base) = {
        let reader = store.reader()?;
        (
            reader.snapshot_record(&state_id)?,
            reader.snapshot_record(&rec.base)?,
        )
    };
    let mut meta = meta.to_vec();
    meta.retain(|(k, _)| k != "overlay");
    meta.push(("overlay".into(), rec.id.to_string()));
    let record = SnapshotRecord {
        workspace: base.workspace,
        workspace_id: base.workspace_id,
        root: state.root,
        time_ns: crate::files::now_ns(),
        parent: Some(rec.base),
        message: message.to_string(),
        meta,
        stats: state.stats,
        scan: base.scan,
        skipped: state.skipped,
    };
    let bytes = record.encode()?;
    let id = Id::of(&bytes);
    let txn = store.begin_write()?;
    // The state's trees and blobs are stored; its record names them, so they stay (gc keeps
    // what any snapshot record names) once the overlay and its states are dropped.
    if txn.open_table(OVERLAYS)?.get(rec.id)?.is_none() {
        return Err(Error::OverlayDropped(rec.id));
    }
    crate::store::refcount::insert_snapshot(&txn, &id, &bytes, &record.root)?;
    crate::store::refcount::seal(&txn)?;
    txn.commit()?;
    Ok(id)
}

/// What the overlay's last computed state holds that is pending, without computing a new
/// state nor taking a lock: for listings, which must never wait. Ignored outputs are not
/// counted: no diff shows them and no reject takes them out, so a count including them
/// would never reach zero.
pub(crate) fn last_known_pending(store: &Store, rec: &OverlayRecord) -> Result<usize> {
    let Some(state_id) = rec.state else {
        return Ok(0);
    };
    let d = pending_between(store, rec, state_id, false)?;
    Ok(d.changes.len())
}

/// The overlay's pending changes for a listing, and whether a command runs in it now. Never
/// waits: while the overlay is busy, the count is the one of its last computed state. None
/// when it could not be computed.
pub(crate) fn pending_now(store: &Store, rec: &OverlayRecord) -> (Option<usize>, bool) {
    let busy = running(store, rec);
    let fresh = (!busy)
        .then(|| try_state_lock(store, rec))
        .flatten()
        .and_then(|held| {
            let mut rec = rec.clone();
            reload(store, &mut rec).ok()?;
            let n = diff_locked(store, &mut rec, false)
                .map(|d| d.diff.changes.len())
                .ok();
            drop(held);
            n
        });
    let pending = fresh.or_else(|| last_known_pending(store, rec).ok());
    (pending, busy)
}

/// [`overlay_diff`] for a caller that holds the lock.
fn diff_locked(store: &Store, rec: &mut OverlayRecord, renames: bool) -> Result<OverlayDiff> {
    let state_id = state(store, rec)?;
    let d = pending_between(store, rec, state_id, renames)?;
    Ok(OverlayDiff {
        diff: d,
        ignored: rec.ignored.clone(),
        state: state_id,
    })
}

/// The diff from the base to `state_id` without what is settled: accepted (by an accept
/// still in effect) or chosen already, with this very content.
fn pending_between(
    store: &Store,
    rec: &OverlayRecord,
    state_id: Id,
    renames: bool,
) -> Result<Diff> {
    let mut d = diff(
        store,
        Rev::Snapshot(rec.base),
        Rev::Snapshot(state_id),
        None,
        &DiffRequest {
            renames,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )?;
    let undone = undone_ops(store, rec)?;
    let void: rustc_hash::FxHashSet<&[u8]> = rec
        .settled_by
        .iter()
        .filter(|(_, op)| undone.contains(op))
        .map(|(p, _)| p.as_slice())
        .collect();
    let settled: rustc_hash::FxHashMap<&[u8], Option<Id>> = rec
        .settled
        .iter()
        .filter(|(p, _)| !void.contains(p.as_slice()))
        .map(|(p, id)| (p.as_slice(), *id))
        .collect();
    let mut kept: Vec<FileChange> = std::mem::take(&mut d.changes)
        .into_iter()
        .filter(|c| settled.get(c.path.as_slice()) != Some(&c.new.map(|n| n.id)))
        .collect();
    // A file whose every hunk was accepted one by one is settled too.
    if !rec.settled_hunks.is_empty() {
        let reader = store.reader()?;
        let mut still = Vec::with_capacity(kept.len());
        for c in kept {
            let done = rec.settled_hunks.iter().any(|(p, _, _)| *p == c.path)
                && review(&reader, rec, &c, &undone)?
                    .is_some_and(|h| !h.is_empty() && h.iter().all(|h| !h.pending));
            if !done {
                still.push(c);
            }
        }
        kept = still;
    }
    d.changes = kept;
    Ok(d)
}

fn undone_ops(store: &Store, rec: &OverlayRecord) -> Result<std::collections::HashSet<u64>> {
    if rec.settled_by.is_empty() && rec.settled_hunks.is_empty() {
        return Ok(Default::default());
    }
    crate::store::oplog::undone_ops(store, &rec.workspace)
}

/// The hunks of a pending change, marked pending or accepted; None when the change has no
/// line hunks (a binary file, a symlink, a change of kind or mode only).
fn review(
    reader: &crate::store::Reader,
    rec: &OverlayRecord,
    c: &FileChange,
    undone: &std::collections::HashSet<u64>,
) -> Result<Option<Vec<hunks::ReviewHunk>>> {
    Ok(review_with(reader, rec, c, undone, &|_| false, false)?
        .map(|hs| hs.into_iter().map(|(h, _)| h).collect()))
}

/// A file's hunks, each with the run that made it (`None`: several, interleaved).
type OwnedHunks = Vec<(hunks::ReviewHunk, Option<u32>)>;

/// [`review`], with each hunk's run (see [`by_run`]): a hunk with a part `wanted` (or, with
/// `by_run`, every hunk of several runs) is shown as its parts.
fn review_with(
    reader: &crate::store::Reader,
    rec: &OverlayRecord,
    c: &FileChange,
    undone: &std::collections::HashSet<u64>,
    wanted: &dyn Fn(&str) -> bool,
    by_run: bool,
) -> Result<Option<OwnedHunks>> {
    let Some((old, new)) = hunks::texts(reader, c)? else {
        return Ok(None);
    };
    let settled = |id: &str| {
        rec.settled_hunks
            .iter()
            .any(|(p, x, op)| *p == c.path && x == id && !undone.contains(op))
    };
    let owners = runs::owners(reader, rec, &c.path, &old, &new);
    // A hunk some of whose parts were accepted is shown as its parts.
    let mut hs = runs::refine(
        &c.path,
        hunks::file_hunks(&c.path, &old, &new),
        owners.as_ref(),
        &|id| settled(id) || wanted(id),
        by_run,
    );
    for (h, _) in &mut hs {
        h.pending = !settled(&h.id);
    }
    Ok(Some(hs))
}

/// Every pending change's hunks (None for a change without line hunks), in the order of
/// `d.changes`: what `overlay diff --json` shows and `--hunk` picks from.
pub(crate) fn review_hunks(
    store: &Store,
    rec: &OverlayRecord,
    d: &Diff,
) -> Result<Vec<Option<Vec<hunks::ReviewHunk>>>> {
    let undone = undone_ops(store, rec)?;
    let reader = store.reader()?;
    d.changes
        .iter()
        .map(|c| review(&reader, rec, c, &undone))
        .collect()
}

impl Overlay {
    /// Computes what the overlay changed that is still pending. Works while a command runs in
    /// the overlay (it reads the upper layer as it is at that moment).
    pub fn diff(&mut self, store: &Store, renames: bool) -> Result<OverlayDiff> {
        overlay_diff(store, &mut self.rec, renames)
    }

    /// Every pending change's hunks (None for a change without line hunks), in the order of
    /// `d.changes` (`d` from [`Overlay::diff`]).
    pub fn review_hunks(
        &self,
        store: &Store,
        d: &Diff,
    ) -> Result<Vec<Option<Vec<hunks::ReviewHunk>>>> {
        review_hunks(store, &self.rec, d)
    }

    /// The pending changes of `d` (from [`Overlay::diff`]) grouped by the run that made them:
    /// runs in order, then the changes of no run, then parts of interleaved runs.
    pub fn by_run(&self, store: &Store, d: &Diff) -> Result<Vec<RunChanges>> {
        by_run(store, &self.rec, d)
    }

    /// Accepts the overlay's pending changes (or some of them) onto its workspace.
    pub fn accept(&mut self, store: &Store, opts: &AcceptOptions) -> Result<AcceptReport> {
        accept(store, &mut self.rec, opts)
    }

    /// Puts the base version of `paths` (all pending changes when empty) back inside the
    /// overlay: later commands there see the base. The workspace is not touched. With `hunks`,
    /// only those hunks are taken out of their files (the rest stays pending).
    pub fn reject(
        &mut self,
        store: &Store,
        paths: &[RelPath],
        hunks: &[String],
    ) -> Result<RejectReport> {
        reject(store, &mut self.rec, paths, hunks)
    }

    /// Takes out of the overlay the pending changes run `n` made (see [`Overlay::by_run`]),
    /// leaving the other runs' lines. Fails when the overlay has no run `n`.
    pub fn reject_run(&mut self, store: &Store, n: u32) -> Result<RejectReport> {
        reject_run(store, &mut self.rec, n)
    }

    /// A checkpoint of the overlay: its state now, kept as a snapshot of its workspace with
    /// `message` and `meta` (plus `overlay`: the overlay's id). It is not put in the
    /// workspace's log and outlives the overlay: restore or diff it by id.
    pub fn snapshot_state(
        &mut self,
        store: &Store,
        message: &str,
        meta: &[(String, String)],
    ) -> Result<Id> {
        snapshot_state(store, &mut self.rec, message, meta)
    }

    /// Its pending changes for a listing, and whether a command runs in it now. Never waits:
    /// while the overlay is busy, the count is the one of its last computed state. None when
    /// it could not be computed.
    pub fn pending_now(&self, store: &Store) -> (Option<usize>, bool) {
        pending_now(store, &self.rec)
    }

    /// Whether a command is running in the overlay now. Never waits.
    pub fn running(&self, store: &Store) -> bool {
        running(store, &self.rec)
    }

    /// Removes the overlay: its directory and its record. The workspace is not touched.
    pub fn drop_overlay(&self, store: &Store) -> Result<()> {
        drop_overlay(store, &self.rec)
    }
}

/// A path and the content it should have (None: absent).
pub type Target = (Vec<u8>, Option<crate::diff::tree::EntryState>);

/// Removes an overlay: its directory and its record. The workspace is not touched.
pub(crate) fn drop_overlay(store: &Store, rec: &OverlayRecord) -> Result<()> {
    let dir = rec.dir(store);
    if dir.exists() {
        remove_tree(&dir)?;
    }
    let txn = store.begin_write()?;
    txn.open_table(OVERLAYS)?.remove(rec.id)?;
    rec.backend.imp().forget(&txn, store, rec)?;
    crate::store::refcount::seal(&txn)?;
    txn.commit()?;
    Ok(())
}

/// Deletes a directory tree that a command may have left read-only (and overlayfs's work
/// directory, which it creates with mode 000).
fn remove_tree(dir: &Path) -> Result<()> {
    if fs::remove_dir_all(dir).is_ok() {
        return Ok(());
    }
    fn open_up(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = fs::symlink_metadata(p)
            && m.is_dir()
        {
            let _ = fs::set_permissions(p, fs::Permissions::from_mode(0o700));
            if let Ok(rd) = fs::read_dir(p) {
                for e in rd.flatten() {
                    open_up(&e.path());
                }
            }
        }
    }
    open_up(dir);
    fs::remove_dir_all(dir).at(dir)
}

/// Builds the command that runs `argv` inside the overlay, starting in `rel_cwd` (relative to
/// the workspace). The caller holds the lock while it runs.
pub(crate) fn command(
    store: &Store,
    rec: &OverlayRecord,
    argv: &[std::ffi::OsString],
    rel_cwd: &Path,
) -> Result<std::process::Command> {
    let Some((prog, args)) = argv.split_first() else {
        return Err(Error::NoCommand);
    };
    let mut cmd = std::process::Command::new(prog);
    cmd.args(args);
    rec.backend.imp().enter(&mut cmd, store, rec, rel_cwd)?;
    cmd.env("REWIND_OVERLAY", rec.id.to_string());
    Ok(cmd)
}
