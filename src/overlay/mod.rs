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

mod backend;
mod copy;

mod namespace;
mod runs;

pub use runs::{OverlayRun, RunChanges, RunFile, by_run};

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::apply::{FileOutcome, Planned, request_key, write_with_op};
use crate::carry::{CarryLabels, Conflict, ConflictPolicy, Settle, plan_carry};
use crate::compare::{Diff, DiffRequest, Rev, diff};
use crate::diff::tree::FileChange;
use crate::error::{Error, IoContext, Result};
use crate::fs::RelPath;
use crate::hunks;
use crate::id::Id;
use crate::snapshot::{SnapshotOptions, snapshot};
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};
use crate::store::tables::OVERLAYS;

/// How an overlay isolates its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    /// overlayfs in a private user and mount namespace (Linux).
    Namespace,
    /// A materialized copy of the base snapshot.
    Copy,
}

impl Backend {
    /// Its name in listings and JSON.
    pub fn name(self) -> &'static str {
        self.imp().name()
    }

    /// The directory holding the overlay's files as plain files (the copy backend's tree);
    /// `None` where they are only visible inside the overlay (the namespace backend).
    pub fn files_dir(self, store: &Store, rec: &OverlayRecord) -> Option<PathBuf> {
        self.imp().files_dir(store, rec)
    }

    /// The implementation: the one place the backend is matched.
    pub(crate) fn imp(self) -> &'static dyn backend::OverlayBackend {
        match self {
            Backend::Namespace => &backend::Namespace,
            Backend::Copy => &backend::Copy,
        }
    }
}

/// Which backend `create` should use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The namespace backend where the kernel allows it, else copy (with a notice).
    #[default]
    Auto,
    /// The namespace backend, or an error saying why it is unavailable.
    Namespace,
    /// The copy backend.
    Copy,
}

/// An overlay, as stored in the `overlays` table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlayRecord {
    /// Small integer id, unique in the store.
    pub id: u64,
    /// An optional name (unique among overlays), usable wherever the id is.
    pub name: Option<String>,
    /// The workspace's canonical path, raw bytes.
    pub workspace: Vec<u8>,
    /// The backend.
    pub backend: Backend,
    /// The snapshot the overlay started from.
    pub base: Id,
    /// Creation time, ns since the epoch.
    pub created_ns: i64,
    /// The latest computed state: base plus the overlay's changes.
    pub state: Option<Id>,
    /// Paths already accepted or rejected, with the overlay's content at that moment (None:
    /// a deletion). A change is pending unless its path and content are listed here.
    pub settled: Vec<(Vec<u8>, Option<Id>)>,
    /// Namespace backend: every state snapshot made (deleted with the overlay).
    pub states: Vec<Id>,
    /// Namespace backend: what the overlay wrote at paths the base's ignore rules exclude
    /// (build outputs, dependencies), top-most paths only. They are not part of the state (no
    /// snapshot holds ignored files); accept copies them only with `include_ignored`.
    pub ignored: Vec<Vec<u8>>,
    /// The accept operation that settled each accepted path (paths settled otherwise are not
    /// listed). A settlement whose operation was undone (and not redone) no longer counts:
    /// the change is pending again.
    pub settled_by: Vec<(Vec<u8>, u64)>,
    /// Paths the workspace changed while a command ran in the overlay and that the command
    /// wrote too: the overlay's version may hold the workspace's edit, so accept reports them
    /// as conflicts until taken with `--theirs`/`--ours` or rejected.
    pub raced: Vec<Vec<u8>>,
    /// Single hunks accepted (path, hunk id, the accept operation): the rest of the file
    /// stays pending. Like `settled_by`, an undone operation's hunks are pending again.
    pub settled_hunks: Vec<(Vec<u8>, String, u64)>,
    /// Every command run in the overlay, in order: what `--run` takes and reviews group by.
    pub runs: Vec<OverlayRun>,
}

/// The record as stored before `runs` existed.
#[derive(Deserialize)]
struct OverlayRecordV2 {
    id: u64,
    name: Option<String>,
    workspace: Vec<u8>,
    backend: Backend,
    base: Id,
    created_ns: i64,
    state: Option<Id>,
    settled: Vec<(Vec<u8>, Option<Id>)>,
    states: Vec<Id>,
    ignored: Vec<Vec<u8>>,
    settled_by: Vec<(Vec<u8>, u64)>,
    raced: Vec<Vec<u8>>,
    settled_hunks: Vec<(Vec<u8>, String, u64)>,
}

/// The record as stored before `settled_by` and `raced` existed (postcard is not
/// self-describing: a record is read as the newest layout, else as this one).
#[derive(Deserialize)]
struct OverlayRecordV1 {
    id: u64,
    name: Option<String>,
    workspace: Vec<u8>,
    backend: Backend,
    base: Id,
    created_ns: i64,
    state: Option<Id>,
    settled: Vec<(Vec<u8>, Option<Id>)>,
    states: Vec<Id>,
    ignored: Vec<Vec<u8>>,
}

impl OverlayRecord {
    /// Decodes a stored record.
    pub fn decode(id: u64, bytes: &[u8]) -> Result<OverlayRecord> {
        if let Ok(rec) = postcard::from_bytes::<OverlayRecord>(bytes) {
            return Ok(rec);
        }
        if let Ok(v2) = postcard::from_bytes::<OverlayRecordV2>(bytes) {
            return Ok(OverlayRecord {
                id: v2.id,
                name: v2.name,
                workspace: v2.workspace,
                backend: v2.backend,
                base: v2.base,
                created_ns: v2.created_ns,
                state: v2.state,
                settled: v2.settled,
                states: v2.states,
                ignored: v2.ignored,
                settled_by: v2.settled_by,
                raced: v2.raced,
                settled_hunks: v2.settled_hunks,
                runs: Vec::new(),
            });
        }
        let old: OverlayRecordV1 = postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "overlay",
            id: id.to_string(),
            why: e.to_string(),
        })?;
        Ok(OverlayRecord {
            id: old.id,
            name: old.name,
            workspace: old.workspace,
            backend: old.backend,
            base: old.base,
            created_ns: old.created_ns,
            state: old.state,
            settled: old.settled,
            states: old.states,
            ignored: old.ignored,
            settled_by: Vec::new(),
            raced: Vec::new(),
            settled_hunks: Vec::new(),
            runs: Vec::new(),
        })
    }

    fn encode(&self) -> Result<Vec<u8>> {
        crate::store::encode("overlay record", self)
    }

    /// The workspace path.
    pub fn workspace_path(&self) -> PathBuf {
        PathBuf::from(std::ffi::OsStr::from_bytes(&self.workspace))
    }

    /// The overlay's directory in the store.
    pub fn dir(&self, store: &Store) -> PathBuf {
        overlays_dir(store).join(self.id.to_string())
    }
}

/// The directory holding every overlay's files.
pub fn overlays_dir(store: &Store) -> PathBuf {
    store.dir().join("overlays")
}

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
    pub overlay: OverlayRecord,
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
        if list(store)?.iter().any(|o| o.name.as_deref() == Some(name)) {
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
            store.reader()?.snapshot(&id)?;
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
        created_ns: crate::fs::now_ns(),
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
        overlay: rec,
        fallback,
        files_copied,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.bytes().all(|b| b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "invalid overlay name '{name}': use 1-64 letters, digits, '-', '_' or '.', not only digits"
        )))
    }
}

/// Every overlay, by id.
pub fn list(store: &Store) -> Result<Vec<OverlayRecord>> {
    store
        .reader()?
        .overlay_records()?
        .into_iter()
        .map(|(id, bytes)| OverlayRecord::decode(id, &bytes))
        .collect()
}

/// Finds an overlay by id or name.
pub fn find(store: &Store, key: &str) -> Result<OverlayRecord> {
    let all = list(store)?;
    let found = match key.parse::<u64>() {
        Ok(n) => all.into_iter().find(|o| o.id == n),
        Err(_) => all.into_iter().find(|o| o.name.as_deref() == Some(key)),
    };
    found.ok_or_else(|| Error::NoOverlay(key.to_string()))
}

fn save(store: &Store, rec: &OverlayRecord) -> Result<()> {
    let txn = store.begin_write()?;
    txn.open_table(OVERLAYS)?
        .insert(rec.id, rec.encode()?.as_slice())?;
    txn.commit()?;
    Ok(())
}

/// A held overlay lock (released when dropped).
pub struct OverlayLock {
    _file: fs::File,
}

/// The two locks of an overlay, always taken in this order:
/// - `run.lock`, held while a command runs in the overlay, and by what must not overlap one
///   (accept, reject, the undo of a reject): overlayfs must never see its upper directory
///   mounted twice, nor written from outside while mounted. Waiting for it says so and gives
///   up after the store's lock timeout.
/// - `lock`, held only for short bookkeeping (computing the state, refreshing the namespace
///   backend's pinned layer, accept's write): never across a user command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LockKind {
    Run,
    State,
}

impl LockKind {
    fn file(self) -> &'static str {
        match self {
            LockKind::Run => "run.lock",
            LockKind::State => "lock",
        }
    }
}

fn open_lock_file(store: &Store, rec: &OverlayRecord, kind: LockKind) -> Result<fs::File> {
    let path = rec.dir(store).join(kind.file());
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .at(&path)
}

/// An exclusive lock without waiting (std's `File::try_lock` is `flock(LOCK_EX | LOCK_NB)` on
/// Linux): Ok(false) when another open file description holds it.
fn try_flock(file: &fs::File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(fs::TryLockError::WouldBlock) => Ok(false),
        Err(fs::TryLockError::Error(e)) => Err(e),
    }
}

fn take_lock(store: &Store, rec: &OverlayRecord, kind: LockKind) -> Result<OverlayLock> {
    let file = open_lock_file(store, rec, kind)?;
    let path = rec.dir(store).join(kind.file());
    if try_flock(&file).map_err(|e| Error::io(&path, e))? {
        return Ok(OverlayLock { _file: file });
    }
    let what = match kind {
        LockKind::Run => format!(
            "waiting for the command running in overlay {} to finish ...",
            rec.id
        ),
        LockKind::State => format!(
            "waiting for another rewind process using overlay {} ...",
            rec.id
        ),
    };
    store.notice(&what);
    let timeout = store.lock_timeout();
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(2);
    loop {
        std::thread::sleep(pause);
        if try_flock(&file).map_err(|e| Error::io(&path, e))? {
            return Ok(OverlayLock { _file: file });
        }
        if start.elapsed() >= timeout {
            return Err(Error::OverlayBusy {
                seconds: timeout.as_secs_f64(),
                what: what.to_string(),
            });
        }
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
    }
}

/// Takes the overlay's short lock, then re-reads its record (another process may have
/// changed it since the caller read it).
pub fn lock(store: &Store, rec: &mut OverlayRecord) -> Result<OverlayLock> {
    let held = take_lock(store, rec, LockKind::State)?;
    reload(store, rec)?;
    Ok(held)
}

/// Takes the overlay's run lock (see `LockKind`): what a command in the overlay holds
/// while it runs, and what accept and reject wait for.
pub fn run_lock(store: &Store, rec: &OverlayRecord) -> Result<OverlayLock> {
    take_lock(store, rec, LockKind::Run)
}

/// Whether a command is running in the overlay now. Never waits.
pub fn running(store: &Store, rec: &OverlayRecord) -> bool {
    match open_lock_file(store, rec, LockKind::Run) {
        // Taken and released at once: free means nobody runs.
        Ok(f) => !try_flock(&f).unwrap_or(true),
        Err(_) => false,
    }
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
pub fn state(store: &Store, rec: &mut OverlayRecord) -> Result<Id> {
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

/// A command about to run in an overlay: holds the run lock until [`finish_run`].
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
pub fn begin_run(store: &Store, rec: &mut OverlayRecord, command: &str) -> Result<RunSession> {
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
/// raced (see [`OverlayRecord::raced`]) the paths the overlay changed whose workspace content
/// moved while the command ran. Releases the run lock.
pub fn finish_run(store: &Store, rec: &mut OverlayRecord, session: RunSession) -> Result<Id> {
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
        finished_ns: crate::fs::now_ns(),
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
    /// the workspace only when asked (see [`OverlayRecord::ignored`]).
    pub ignored: Vec<Vec<u8>>,
    /// The state snapshot.
    pub state: Id,
}

/// Computes what the overlay changed that is still pending. Works while a command runs in
/// the overlay (it reads the upper layer as it is at that moment).
pub fn overlay_diff(store: &Store, rec: &mut OverlayRecord, renames: bool) -> Result<OverlayDiff> {
    let _lock = lock(store, rec)?;
    diff_locked(store, rec, renames)
}

/// A checkpoint of an overlay: its state now (base plus its changes, pending or not), kept as
/// a snapshot of its workspace with `message` and `meta` (plus `overlay`: the overlay's id).
/// It is not put in the workspace's log (the workspace never held that tree) and outlives the
/// overlay: restore or diff it by id.
pub fn snapshot_state(
    store: &Store,
    rec: &mut OverlayRecord,
    message: &str,
    meta: &[(String, String)],
) -> Result<Id> {
    use crate::store::snapshot::SnapshotRecord;
    use crate::store::tables::SNAPSHOTS;
    use redb::ReadableTable;
    let state_id = {
        let _lock = lock(store, rec)?;
        state(store, rec)?
    };
    let (state, base) = {
        let reader = store.reader()?;
        (reader.snapshot(&state_id)?, reader.snapshot(&rec.base)?)
    };
    let mut meta = meta.to_vec();
    meta.retain(|(k, _)| k != "overlay");
    meta.push(("overlay".into(), rec.id.to_string()));
    let record = SnapshotRecord {
        workspace: base.workspace,
        workspace_id: base.workspace_id,
        root: state.root,
        time_ns: crate::fs::now_ns(),
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
    txn.open_table(SNAPSHOTS)?.insert(id.0, bytes.as_slice())?;
    txn.commit()?;
    Ok(id)
}

/// What the overlay's last computed state holds that is pending, without computing a new
/// state nor taking a lock: for listings, which must never wait. Ignored outputs are not
/// counted: no diff shows them and no reject takes them out, so a count including them
/// would never reach zero.
pub fn last_known_pending(store: &Store, rec: &OverlayRecord) -> Result<usize> {
    let Some(state_id) = rec.state else {
        return Ok(0);
    };
    let d = pending_between(store, rec, state_id, false)?;
    Ok(d.changes.len())
}

/// The overlay's pending changes for a listing, and whether a command runs in it now. Never
/// waits: while the overlay is busy, the count is the one of its last computed state. None
/// when it could not be computed.
pub fn pending_now(store: &Store, rec: &OverlayRecord) -> (Option<usize>, bool) {
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

fn try_state_lock(store: &Store, rec: &OverlayRecord) -> Option<OverlayLock> {
    let file = open_lock_file(store, rec, LockKind::State).ok()?;
    try_flock(&file)
        .ok()
        .filter(|got| *got)
        .map(|_| OverlayLock { _file: file })
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
pub fn review_hunks(
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

/// How to accept.
#[derive(Clone, Debug)]
pub struct AcceptOptions {
    /// Only these paths (and what is below them); empty for every pending change.
    pub paths: Vec<RelPath>,
    /// What to do with a file changed on both sides that does not merge cleanly.
    pub policy: ConflictPolicy,
    /// Accept changes to ignored paths too.
    pub include_ignored: bool,
    /// Only these hunks (ids from [`review_hunks`]); empty for whole files. The rest of
    /// their files stays pending. With hunks, `paths` are files taken whole besides.
    pub hunks: Vec<String>,
    /// Hunks the user edited (ids from [`review_hunks`]), taken as edited, like `hunks`; an
    /// edited hunk counts as accepted (the user took their version of it).
    pub edited: Vec<hunks::EditedHunk>,
    /// Only what this run made (see [`by_run`]), instead of `paths` and `hunks`: its hunks
    /// (cut from other runs' where they share one) and its changes without line hunks.
    pub run: Option<u32>,
}

/// What an accept did.
#[derive(Clone, Debug, Default)]
pub struct AcceptReport {
    /// Per path: "write", "delete", "merge", "unchanged" (the workspace already had it).
    pub files: Vec<FileOutcome>,
    /// Paths left pending because they conflict.
    pub conflicts: Vec<Conflict>,
    /// Ignored paths left in the overlay (see [`AcceptOptions::include_ignored`]).
    pub ignored: Vec<Vec<u8>>,
    /// Ignored paths copied into the workspace (with `include_ignored`), and how many files.
    pub ignored_copied: Vec<Vec<u8>>,
    /// Files copied for them.
    pub ignored_files: u64,
    /// The workspace snapshots around the write, and the operation (None when nothing was
    /// written).
    pub before: Option<Id>,
    /// The snapshot after.
    pub after: Option<Id>,
    /// The operation.
    pub op: Option<u64>,
}

/// Accepts the overlay's pending changes (or some of them) onto its workspace.
pub fn accept(
    store: &Store,
    rec: &mut OverlayRecord,
    opts: &AcceptOptions,
) -> Result<AcceptReport> {
    let root = crate::workspace::resolve(&rec.workspace_path())?;
    let _run = run_lock(store, rec)?;
    let _lock = lock(store, rec)?;
    let od = diff_locked(store, rec, false)?;
    let by_run;
    let opts = match opts.run {
        Some(n) => {
            let (hunks, whole) = runs::selection(store, rec, &od.diff, n)?;
            if hunks.is_empty() && whole.is_empty() {
                return Ok(AcceptReport::default());
            }
            by_run = AcceptOptions {
                paths: whole.into_iter().map(RelPath::trusted).collect(),
                hunks,
                run: None,
                ..opts.clone()
            };
            &by_run
        }
        None => opts,
    };
    let wanted = |p: &[u8]| {
        opts.paths.is_empty() || opts.paths.iter().any(|q| crate::diff::tree::is_under(p, q))
    };
    let mut report = AcceptReport::default();
    let take: Vec<Vec<u8>> = od
        .diff
        .changes
        .iter()
        .map(|c| c.path.clone())
        .filter(|p| wanted(p))
        .collect();
    let ignored: Vec<Vec<u8>> = od.ignored.iter().filter(|p| wanted(p)).cloned().collect();
    // With hunks, `paths` name files taken whole besides them (what `accept -p` sends for
    // changes without line hunks).
    let (take, partial) = if opts.hunks.is_empty() && opts.edited.is_empty() {
        (take, PartialAccept::default())
    } else {
        let (mut whole, part) = plan_hunks(
            store,
            rec,
            &root,
            &od.diff,
            (&opts.hunks, &opts.edited),
            opts.policy,
        )?;
        if !opts.paths.is_empty() {
            let had: rustc_hash::FxHashSet<Vec<u8>> = whole.iter().cloned().collect();
            whole.extend(take.into_iter().filter(|p| !had.contains(p)));
        }
        (whole, part)
    };
    let new_ids: rustc_hash::FxHashMap<Vec<u8>, Option<Id>> = od
        .diff
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.new.map(|n| n.id)))
        .collect();
    drop(od);
    // Paths the workspace changed while a command wrote them in the overlay: conflicts,
    // unless the user chose a side.
    let raced: rustc_hash::FxHashSet<Vec<u8>> = rec.raced.iter().cloned().collect();
    let (raced_taken, mut take): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        take.into_iter().partition(|p| raced.contains(p));
    let mut raced_conflicts = Vec::new();
    let mut kept_ours = Vec::new();
    match opts.policy {
        ConflictPolicy::Theirs => take.extend(raced_taken),
        ConflictPolicy::Ours => kept_ours = raced_taken,
        _ => {
            raced_conflicts = raced_taken
                .into_iter()
                .map(|path| Conflict {
                    path,
                    why: "the workspace changed it while a command ran in the overlay, which may have read the workspace's version".into(),
                    regions: 0,
                    settle: Some(Settle::ChooseSideOrReject),
                })
                .collect();
        }
    }
    if !take.is_empty() || !partial.hunks.is_empty() || !partial.conflicts.is_empty() {
        let mut partial = partial;
        partial.whole = take.clone();
        carry_onto(
            store,
            rec,
            &root,
            partial,
            &new_ids,
            opts.policy,
            &mut report,
        )?;
    }
    if !kept_ours.is_empty() {
        settle(rec, &kept_ours, &new_ids, None);
    }
    report.conflicts.extend(raced_conflicts);
    let conflicted: rustc_hash::FxHashSet<&[u8]> =
        report.conflicts.iter().map(|c| c.path.as_slice()).collect();
    let resolved: rustc_hash::FxHashSet<&[u8]> = take
        .iter()
        .chain(&kept_ours)
        .map(Vec::as_slice)
        .filter(|p| !conflicted.contains(p))
        .collect();
    if rec.raced.iter().any(|p| resolved.contains(p.as_slice())) || !kept_ours.is_empty() {
        rec.raced.retain(|p| !resolved.contains(p.as_slice()));
        save(store, rec)?;
    }
    // After the tracked changes are written, so that a failed accept copies nothing.
    if opts.include_ignored && !ignored.is_empty() {
        report.ignored_files = namespace::copy_ignored(store, rec, &root, &ignored)?;
        report.ignored_copied = ignored;
    } else {
        report.ignored = ignored;
    }
    Ok(report)
}

/// The tracked part of an accept: carry `take` from the base to the state onto the workspace,
/// as one operation, and remember what was settled.
fn carry_onto(
    store: &Store,
    rec: &mut OverlayRecord,
    root: &Path,
    mut partial: PartialAccept,
    new_ids: &rustc_hash::FxHashMap<Vec<u8>, Option<Id>>,
    policy: ConflictPolicy,
    report: &mut AcceptReport,
) -> Result<()> {
    let take_owned = std::mem::take(&mut partial.whole);
    let take = take_owned.as_slice();
    let state_id = rec.state.unwrap_or(rec.base);
    let mut planned: Vec<Planned> = Vec::new();
    if !take.is_empty() {
        let carried = plan_carry(
            store,
            root,
            rec.base,
            state_id,
            &take
                .iter()
                .cloned()
                .map(RelPath::trusted)
                .collect::<Vec<_>>(),
            policy,
            &CarryLabels {
                ours: "workspace",
                theirs: "overlay",
            },
        )?;
        // The carry's path filter takes prefixes; keep exactly the pending paths.
        let taken: rustc_hash::FxHashSet<&[u8]> = take.iter().map(Vec::as_slice).collect();
        planned = carried
            .planned
            .into_iter()
            .filter(|p| taken.contains(p.outcome.path.as_slice()))
            .collect();
        report.conflicts = carried.conflicts;
    }
    let partly: rustc_hash::FxHashSet<Vec<u8>> =
        partial.hunks.iter().map(|(p, _)| p.clone()).collect();
    planned.extend(partial.planned);
    report.conflicts.extend(partial.conflicts);
    report.files = planned.iter().map(|p| p.outcome.clone()).collect();
    let conflicted: Vec<&[u8]> = report.conflicts.iter().map(|c| c.path.as_slice()).collect();
    let work: Vec<_> = planned
        .into_iter()
        .filter(|p| p.write.is_some() || !p.remove.is_empty())
        .collect();
    if !work.is_empty() {
        let mut parts: Vec<&[u8]> = vec![b"overlay-accept", &state_id.0];
        let id_bytes = rec.id.to_le_bytes();
        parts.push(&id_bytes);
        parts.extend(take.iter().map(Vec::as_slice));
        parts.extend(partial.hunks.iter().map(|(_, h)| h.as_bytes()));
        parts.extend(partial.edit_keys.iter().map(Vec::as_slice));
        let key = request_key(&parts);
        let done = write_with_op(store, root, "accept", key, &work, false)?;
        report.before = done.before;
        report.after = done.after;
        report.op = Some(done.op);
    }
    let conflicted: rustc_hash::FxHashSet<&[u8]> = conflicted.into_iter().collect();
    let written: Vec<Vec<u8>> = work
        .iter()
        .map(|p| p.outcome.path.clone())
        .filter(|p| !partly.contains(p))
        .collect();
    let rest: Vec<Vec<u8>> = take
        .iter()
        .filter(|p| !conflicted.contains(p.as_slice()))
        .cloned()
        .collect();
    settle(rec, &rest, new_ids, None);
    if let Some(op) = report.op {
        // What this operation wrote stops being settled if it is undone.
        settle(rec, &written, new_ids, Some(op));
    }
    let op = report.op.unwrap_or(0);
    rec.settled_hunks.extend(
        partial
            .hunks
            .into_iter()
            .filter(|(p, _)| !conflicted.contains(p.as_slice()))
            .map(|(p, h)| (p, h, op)),
    );
    save(store, rec)
}

/// What an accept takes: whole files, and files merged from a selection of their hunks.
#[derive(Default)]
struct PartialAccept {
    /// Paths accepted whole.
    whole: Vec<Vec<u8>>,
    planned: Vec<Planned>,
    conflicts: Vec<Conflict>,
    /// (path, hunk id) accepted.
    hunks: Vec<(Vec<u8>, String)>,
    /// The edited hunks among them, as bytes: two edits of a hunk are two requests.
    edit_keys: Vec<Vec<u8>>,
}

/// Splits a hunk selection (ids, and hunks the user edited): files whose every pending hunk
/// is selected unedited are accepted whole (returned as paths); the others get the base plus
/// their accepted, selected and edited hunks, merged three ways onto the workspace's file.
fn plan_hunks(
    store: &Store,
    rec: &OverlayRecord,
    root: &Path,
    d: &Diff,
    (ids, edits): (&[String], &[hunks::EditedHunk]),
    policy: ConflictPolicy,
) -> Result<(Vec<Vec<u8>>, PartialAccept)> {
    let undone = undone_ops(store, rec)?;
    let mut unknown: rustc_hash::FxHashSet<&str> = ids
        .iter()
        .map(String::as_str)
        .chain(edits.iter().map(|e| e.id.as_str()))
        .collect();
    let edited = |id: &str| edits.iter().any(|e| e.id == id);
    let mut whole = Vec::new();
    let mut part = PartialAccept::default();
    let reader = store.reader()?;
    for c in &d.changes {
        let wanted = |id: &str| ids.iter().any(|x| x == id) || edited(id);
        let Some(hs) = review_with(&reader, rec, c, &undone, &wanted, false)? else {
            continue;
        };
        let hs: &Vec<hunks::ReviewHunk> = &hs.into_iter().map(|(h, _)| h).collect();
        let chosen: Vec<&hunks::ReviewHunk> =
            hs.iter().filter(|h| h.pending && wanted(&h.id)).collect();
        if chosen.is_empty() {
            continue;
        }
        for h in &chosen {
            unknown.remove(h.id.as_str());
        }
        // Whole only while no hunk of it was accepted alone: a carry from the base would
        // take those again, against a workspace that has them (a conflict where they touch).
        if chosen.len() == hs.len() && !chosen.iter().any(|h| edited(&h.id)) {
            whole.push(c.path.clone());
            continue;
        }
        let Some((old, new)) = hunks::texts(&reader, c)? else {
            continue;
        };
        if rec.raced.contains(&c.path)
            && !matches!(policy, ConflictPolicy::Theirs | ConflictPolicy::Ours)
        {
            part.conflicts.push(Conflict {
                path: c.path.clone(),
                why: "the workspace changed it while a command ran in the overlay".into(),
                regions: 0,
                settle: Some(Settle::ChooseSide),
            });
            continue;
        }
        let settled = |id: &str| hs.iter().any(|h| h.id == id && !h.pending);
        let mine: Vec<hunks::EditedHunk> = edits
            .iter()
            .filter(|e| chosen.iter().any(|h| h.id == e.id))
            .cloned()
            .collect();
        let target = hunks::select_edited(
            &old,
            &new,
            hs,
            &|id| ids.iter().any(|x| x == id) || settled(id),
            &hunks::resolve_edits(hs, &mine)?,
        );
        // The workspace is assumed to hold the hunks accepted already: merging against that
        // (not the base) keeps a hunk right next to an accepted one from conflicting with it.
        let assumed = hunks::select(&old, &new, hs, &settled);
        match hunks::merge_onto(
            root,
            &c.path,
            &assumed,
            &target,
            policy,
            ("workspace", "overlay"),
        )? {
            hunks::Onto::Conflict(x) => {
                part.conflicts.push(x);
                continue;
            }
            hunks::Onto::Same => {}
            hunks::Onto::Write(p) => part.planned.push(p),
        }
        part.hunks
            .extend(chosen.iter().map(|h| (c.path.clone(), h.id.clone())));
        part.edit_keys
            .extend(mine.iter().map(hunks::EditedHunk::key));
    }
    if let Some(id) = unknown.into_iter().next() {
        return Err(Error::UnknownHunk {
            hunk: id.to_string(),
            overlay: rec.id,
        });
    }
    Ok((whole, part))
}

/// Records `paths` as settled with the overlay's content, by operation `op` when an undoable
/// write settled them (the settlement lapses when that operation is undone).
fn settle(
    rec: &mut OverlayRecord,
    paths: &[Vec<u8>],
    new_ids: &rustc_hash::FxHashMap<Vec<u8>, Option<Id>>,
    op: Option<u64>,
) {
    let now: Vec<(Vec<u8>, Option<Id>)> = paths
        .iter()
        .filter_map(|p| new_ids.get(p).map(|id| (p.clone(), *id)))
        .collect();
    let replaced: rustc_hash::FxHashSet<&[u8]> = now.iter().map(|(p, _)| p.as_slice()).collect();
    rec.settled
        .retain(|(q, _)| !replaced.contains(q.as_slice()));
    rec.settled_by
        .retain(|(q, _)| !replaced.contains(q.as_slice()));
    if let Some(op) = op {
        rec.settled_by
            .extend(now.iter().map(|(p, _)| (p.clone(), op)));
    }
    rec.settled.extend(now);
}

/// What a reject did.
#[derive(Clone, Debug, Default)]
pub struct RejectReport {
    /// Paths set back to the base inside the overlay.
    pub paths: Vec<Vec<u8>>,
    /// The operation recorded.
    pub op: Option<u64>,
}

/// Puts the base version of `paths` (all pending changes when empty) back inside the overlay:
/// later commands there see the base. The workspace is not touched.
/// With `hunks`, only those hunks are taken out of their files (the rest stays pending).
pub fn reject(
    store: &Store,
    rec: &mut OverlayRecord,
    paths: &[RelPath],
    hunks: &[String],
) -> Result<RejectReport> {
    reject_selected(store, rec, paths, hunks, None)
}

/// Takes out of the overlay the pending changes run `n` made (see [`by_run`]), leaving the
/// other runs' lines, also where they share a hunk. Fails when the overlay has no run `n`.
pub fn reject_run(store: &Store, rec: &mut OverlayRecord, n: u32) -> Result<RejectReport> {
    reject_selected(store, rec, &[], &[], Some(n))
}

fn reject_selected(
    store: &Store,
    rec: &mut OverlayRecord,
    paths: &[RelPath],
    hunks: &[String],
    run: Option<u32>,
) -> Result<RejectReport> {
    let _run = run_lock(store, rec)?;
    let _lock = lock(store, rec)?;
    let od = diff_locked(store, rec, false)?;
    let mut rewrites: Vec<(Vec<u8>, crate::store::tree::Kind, Vec<u8>)> = Vec::new();
    let mut whole: Option<rustc_hash::FxHashSet<Vec<u8>>> = None;
    let (run_ids, run_whole) = match run {
        Some(n) => runs::selection(store, rec, &od.diff, n)?,
        None => Default::default(),
    };
    if run.is_some() {
        if run_ids.is_empty() && run_whole.is_empty() {
            return Ok(RejectReport::default());
        }
        whole = Some(run_whole.into_iter().collect());
    }
    let hunks = if run.is_some() { &run_ids[..] } else { hunks };
    if !hunks.is_empty() {
        let undone = undone_ops(store, rec)?;
        let reader = store.reader()?;
        let mut unknown: rustc_hash::FxHashSet<&str> = hunks.iter().map(String::as_str).collect();
        let mut files = rustc_hash::FxHashSet::default();
        for c in &od.diff.changes {
            let wanted = |id: &str| hunks.iter().any(|x| x == id);
            let Some(hs) = review_with(&reader, rec, c, &undone, &wanted, false)? else {
                continue;
            };
            let hs: &Vec<crate::hunks::ReviewHunk> = &hs.into_iter().map(|(h, _)| h).collect();
            let picked = hs
                .iter()
                .filter(|h| h.pending && hunks.contains(&h.id))
                .count();
            if picked == 0 {
                continue;
            }
            for h in hs.iter().filter(|h| h.pending) {
                unknown.remove(h.id.as_str());
            }
            if picked == hs.iter().filter(|h| h.pending).count() && hs.iter().all(|h| h.pending) {
                files.insert(c.path.clone());
            } else if let (Some((old, new)), Some(n)) = (hunks::texts(&reader, c)?, c.new) {
                let kept = hunks::select(&old, &new, hs, &|id| !hunks.iter().any(|x| x == id));
                rewrites.push((c.path.clone(), n.kind, kept));
            }
        }
        if let Some(id) = unknown.into_iter().next() {
            return Err(Error::UnknownHunk {
                hunk: id.to_string(),
                overlay: rec.id,
            });
        }
        whole.get_or_insert_default().extend(files);
    }
    let chosen: Vec<FileChange> = od
        .diff
        .changes
        .iter()
        .filter(|c| {
            paths.is_empty()
                || paths
                    .iter()
                    .any(|q| crate::diff::tree::is_under(&c.path, q))
        })
        .filter(|c| whole.as_ref().is_none_or(|w| w.contains(&c.path)))
        .cloned()
        .collect();
    let before = od.state;
    drop(od);
    if chosen.is_empty() && rewrites.is_empty() {
        return Ok(RejectReport::default());
    }
    let targets: Vec<Target> = chosen.iter().map(|c| (c.path.clone(), c.old)).collect();
    set_paths(store, rec, &targets)?;
    if !rewrites.is_empty() {
        // The overlay's own files, which its command may be changing meanwhile: written
        // through descriptors, as a workspace is.
        let dirs = crate::fs::Beneath::open(&rec.backend.imp().writable_root(store, rec))?;
        for (path, kind, bytes) in &rewrites {
            dirs.write(path, *kind, &mut bytes.as_slice())?;
        }
    }
    let gone: rustc_hash::FxHashSet<&[u8]> = chosen.iter().map(|c| c.path.as_slice()).collect();
    if rec.raced.iter().any(|p| gone.contains(p.as_slice())) {
        rec.raced.retain(|p| !gone.contains(p.as_slice()));
        save(store, rec)?;
    }
    let after = state(store, rec)?;
    let op = oplog::record_alone(
        store,
        OpRecord::new(
            store,
            format!("{REJECT_KIND}{}", rec.id),
            rec.workspace.clone(),
            Some(before),
            Some(after),
        ),
    )?;
    Ok(RejectReport {
        paths: chosen
            .into_iter()
            .map(|c| c.path)
            .chain(rewrites.into_iter().map(|(p, _, _)| p))
            .collect(),
        op: Some(op),
    })
}

/// A path and the content it should have (None: absent).
pub type Target = (Vec<u8>, Option<crate::diff::tree::EntryState>);

/// The operation kind of a reject, followed by the overlay's id. `undo` recognises it and
/// puts the overlay back instead of restoring the workspace.
pub const REJECT_KIND: &str = "overlay-reject:";

fn set_paths(store: &Store, rec: &OverlayRecord, targets: &[Target]) -> Result<()> {
    rec.backend.imp().set_paths(store, rec, targets)
}

/// For `undo` and `redo` of a reject: the overlay an operation kind names, if it is a reject.
pub fn rejected_overlay(kind: &str) -> Option<u64> {
    kind.strip_prefix(REJECT_KIND)?.parse().ok()
}

/// Moves an overlay from state `from` (which it must still be in, unless `force`) to state
/// `to`, path by path: the undo (or redo) of a reject.
pub fn move_state(store: &Store, id: u64, from: Id, to: Id, force: bool) -> Result<()> {
    let mut rec = find(store, &id.to_string()).map_err(|_| Error::RejectedOverlayGone(id))?;
    let _run = run_lock(store, &rec)?;
    let _lock = lock(store, &mut rec)?;
    let now = state(store, &mut rec)?;
    let reader = store.reader()?;
    if reader.snapshot(&now)?.root != reader.snapshot(&from)?.root && !force {
        return Err(Error::OverlayChanged(id));
    }
    let d = diff(
        store,
        Rev::Snapshot(now),
        Rev::Snapshot(to),
        None,
        &DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )?;
    let targets: Vec<Target> = d.changes.iter().map(|c| (c.path.clone(), c.new)).collect();
    drop(d);
    drop(reader);
    set_paths(store, &rec, &targets)?;
    state(store, &mut rec)?;
    Ok(())
}

/// Removes an overlay: its directory and its record. The workspace is not touched.
pub fn drop_overlay(store: &Store, rec: &OverlayRecord) -> Result<()> {
    let dir = rec.dir(store);
    if dir.exists() {
        remove_tree(&dir)?;
    }
    let txn = store.begin_write()?;
    txn.open_table(OVERLAYS)?.remove(rec.id)?;
    rec.backend.imp().forget(&txn, store, rec)?;
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
pub fn command(
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
