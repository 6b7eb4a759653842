//! History queries over a workspace's snapshots: what `rewind log` lists and filters.
//!
//! A workspace's history is the order its states were reached (the `ws_log` table). A restore
//! or undo that returns to a snapshot taken earlier appends that snapshot again. `log` lists
//! each snapshot once, newest first by the time it was taken (a list that repeats ids and jumps
//! back in time after a restore reads as a corrupt history), and marks a snapshot the workspace
//! *returned to* as `restored`, so a reader can tell a snapshot being taken from a return to
//! it. The returns themselves, with their times, are operations: `rewind op log` lists them.
//!
//! A path query (`log -- PATH`) compares each row with the row before it by looking
//! the path up in both trees (a few tree reads per row, no full diff), and runs a rename-aware
//! diff only where the path appears, to tell a rename (then older rows follow the old name, as
//! `git log --follow` does) from an addition.

use crate::compare::{DiffRequest, Rev, diff};
use crate::diff::ChangeStatus;
use crate::error::Result;
use crate::files::RelPath;
use crate::id::Id;
use crate::store::snapshot::{Snapshot, SnapshotRecord};
use crate::store::tree::{Kind, TreeEntry};
use crate::store::{Reader, Store};

/// What to list.
#[derive(Clone, Debug, Default)]
pub struct LogQuery {
    /// At most this many rows (after filtering).
    pub limit: usize,
    /// Only rows where this path (workspace-relative bytes) changed.
    pub path: Option<RelPath>,
    /// Only snapshots carrying every one of these metadata pairs.
    pub meta: Vec<(String, String)>,
    /// Only snapshots whose `label` metadata is this (run's before/after labels).
    pub label: Option<String>,
    /// Only snapshots taken at or after this time (ns since the epoch).
    pub since_ns: Option<i64>,
    /// Only snapshots taken at or before this time.
    pub until_ns: Option<i64>,
}

/// How the queried path changed in a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathChange {
    /// The path in this snapshot (for a deletion, the path it had).
    pub path: Vec<u8>,
    /// The path before, for a rename.
    pub old_path: Option<Vec<u8>>,
    /// What happened.
    pub status: ChangeStatus,
}

/// One row of the log.
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// The snapshot.
    pub id: Id,
    /// What it records.
    pub record: Snapshot,
    /// The workspace returned to this snapshot after it was taken (a restore or undo).
    pub restored: bool,
    /// With a path query: how the path changed here.
    pub change: Option<PathChange>,
}

/// The workspace `ws`'s history, newest first, filtered by `q`.
pub fn log(store: &Store, reader: &Reader, ws: u64, q: &LogQuery) -> Result<Vec<LogEntry>> {
    Ok(page(store, reader, ws, q, true, false)?.entries)
}

/// A page of the log, as a person reads it: what was listed, and what was not.
#[derive(Clone, Debug, Default)]
pub struct LogPage {
    /// The rows, newest first.
    pub entries: Vec<LogEntry>,
    /// Rows past the limit: the exact count without a path query; with one, 1 means "at least
    /// one" (see `more_exact`), since each row there costs tree lookups.
    pub more: usize,
    /// Whether `more` is the exact count.
    pub more_exact: bool,
    /// Bookkeeping snapshots left out among the rows looked at (see `is_bookkeeping`).
    pub hidden: usize,
}

/// Whether a snapshot was taken by rewind around an action rather than asked for: the safety
/// snapshots before and after a restore, undo, apply, revert or overlay accept, an overlay's
/// base and state, and a run's before snapshot (its after snapshot stands for the run).
pub(crate) fn is_bookkeeping(r: &SnapshotRecord) -> bool {
    r.meta("label").is_some_and(|l| {
        l.starts_with("pre-")
            || l.starts_with("post-")
            || l.starts_with("overlay-")
            || l == RUN_BEFORE_LABEL
    })
}

/// The `label` of the snapshot `run` takes before its command.
pub const RUN_BEFORE_LABEL: &str = "before";

/// [`log`] as a person reads it: without bookkeeping snapshots unless `all` (or `q` asks for a
/// label or metadata, which may name them), with what the limit cut counted.
pub fn log_page(
    store: &Store,
    reader: &Reader,
    ws: u64,
    q: &LogQuery,
    all: bool,
) -> Result<LogPage> {
    let asked = q.label.is_some() || !q.meta.is_empty();
    page(store, reader, ws, q, all || asked, true)
}

/// The rows of `q`, bookkeeping ones only when `all`; past the limit, counts the rest when
/// `count_more`.
fn page(
    store: &Store,
    reader: &Reader,
    ws: u64,
    q: &LogQuery,
    all: bool,
    count_more: bool,
) -> Result<LogPage> {
    // A snapshot the history names more than once was returned to.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut returned = rustc_hash::FxHashSet::default();
    for id in reader.history(ws, usize::MAX)? {
        if !seen.insert(id) {
            returned.insert(id);
        }
    }
    let rows = reader.snapshot_records(ws, usize::MAX)?;
    let mut path = q.path.clone();
    let mut out = LogPage {
        more_exact: true,
        ..LogPage::default()
    };
    for (i, (id, record)) in rows.iter().enumerate() {
        let full = out.entries.len() >= q.limit;
        if full && !count_more {
            break;
        }
        // Counting the rest of a path query would cost tree lookups per row: one is enough.
        if full && path.is_some() && out.more > 0 {
            out.more_exact = false;
            break;
        }
        let change = match path.as_deref() {
            Some(p) => {
                let older = rows.get(i + 1).map(|r| &r.0);
                let Some(change) = path_change(store, reader, record, *id, older, p)? else {
                    continue;
                };
                if let Some(old) = &change.old_path {
                    path = Some(RelPath::trusted(old.clone()));
                }
                Some(change)
            }
            None => None,
        };
        if !matches(record, q) {
            continue;
        }
        if !all && is_bookkeeping(record) {
            if !full {
                out.hidden += 1;
            }
            continue;
        }
        if full {
            out.more += 1;
            continue;
        }
        out.entries.push(LogEntry {
            id: *id,
            record: Snapshot::new(*id, record.clone()),
            restored: returned.contains(id),
            change,
        });
    }
    Ok(out)
}

/// How a run's snapshots' default message starts; the command line follows.
pub const RUN_MESSAGE_PREFIX: &str = "rewind run -- ";

/// Metadata key naming the agent session (Claude Code's `session_id`, Cursor's
/// `conversation_id`, ...) an agent hook's snapshot belongs to.
pub const SESSION_KEY: &str = "session";
/// Metadata key holding the turn number within the session (1 for the first prompt; 0 before
/// the first prompt, for a snapshot at the session's start).
pub const TURN_KEY: &str = "turn";
/// The `label` of the snapshot an agent hook takes when the user submits a prompt: the
/// workspace as the turn found it, before the agent acted on the prompt.
pub const TURN_START_LABEL: &str = "turn-start";

/// The workspace's snapshots carrying the metadata pair `key=value`, each once, newest taken
/// first.
pub fn with_meta(reader: &Reader, ws: u64, key: &str, value: &str) -> Result<Vec<(Id, Snapshot)>> {
    let mut rows = reader.snapshot_records(ws, usize::MAX)?;
    rows.retain(|(_, r)| r.meta(key) == Some(value));
    Ok(rows
        .into_iter()
        .map(|(id, r)| (id, Snapshot::new(id, r)))
        .collect())
}

/// The session of the newest snapshot (by the time it was taken) that an agent hook recorded in
/// the workspace, if any.
pub fn latest_session(reader: &Reader, ws: u64) -> Result<Option<String>> {
    Ok(reader
        .snapshot_records(ws, usize::MAX)?
        .into_iter()
        .find_map(|(_, r)| r.meta(SESSION_KEY).map(str::to_string)))
}

/// The snapshot taken when turn `turn` of `session` started: the one labelled
/// [`TURN_START_LABEL`] with that session and turn. Should a turn number have been recorded
/// twice (a lost turn counter), the newest taken wins.
pub fn turn_start(reader: &Reader, ws: u64, session: &str, turn: u64) -> Result<Id> {
    let rows = with_meta(reader, ws, SESSION_KEY, session)?;
    let want = turn.to_string();
    if let Some((id, _)) = rows.iter().find(|(_, r)| {
        r.meta("label") == Some(TURN_START_LABEL) && r.meta(TURN_KEY) == Some(want.as_str())
    }) {
        return Ok(*id);
    }
    let mut turns: Vec<u64> = rows
        .iter()
        .filter(|(_, r)| r.meta("label") == Some(TURN_START_LABEL))
        .filter_map(|(_, r)| r.meta(TURN_KEY)?.parse().ok())
        .collect();
    turns.sort_unstable();
    turns.dedup();
    Err(crate::error::Error::NoSuchTurn {
        session: session.to_string(),
        turn,
        available: ranges(&turns),
    })
}

/// `1-4, 6` for people; `none` for no turn.
fn ranges(sorted: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn matches(r: &SnapshotRecord, q: &LogQuery) -> bool {
    q.meta
        .iter()
        .all(|(k, v)| r.meta.iter().any(|(rk, rv)| rk == k && rv == v))
        && q.label
            .as_deref()
            .is_none_or(|l| r.meta("label") == Some(l))
        && q.since_ns.is_none_or(|t| r.time_ns >= t)
        && q.until_ns.is_none_or(|t| r.time_ns <= t)
}

/// How `path` changed from the `older` row to this one, if it did.
fn path_change(
    store: &Store,
    reader: &Reader,
    record: &SnapshotRecord,
    id: Id,
    older: Option<&Id>,
    path: &[u8],
) -> Result<Option<PathChange>> {
    let now = reader.lookup(&record.root, path)?;
    let before = match older {
        Some(o) => reader.lookup(&reader.snapshot_record(o)?.root, path)?,
        None => None,
    };
    let same = |a: &TreeEntry, b: &TreeEntry| a.kind == b.kind && a.id == b.id;
    let status = match (&before, &now) {
        (None, None) => return Ok(None),
        (Some(b), Some(n)) if same(b, n) => return Ok(None),
        (None, Some(_)) => ChangeStatus::Added,
        (Some(_), None) => ChangeStatus::Deleted,
        (Some(b), Some(n)) if (b.kind == Kind::Symlink) != (n.kind == Kind::Symlink) => {
            ChangeStatus::TypeChanged
        }
        (Some(b), Some(n)) if b.id == n.id => ChangeStatus::ModeChanged,
        (Some(_), Some(_)) => ChangeStatus::Modified,
    };
    let mut change = PathChange {
        path: path.to_vec(),
        old_path: None,
        status,
    };
    if let (ChangeStatus::Added, Some(older)) = (status, older)
        && let Some(old) = renamed_from(store, *older, id, path)?
    {
        change.status = ChangeStatus::Renamed;
        change.old_path = Some(old);
    }
    Ok(Some(change))
}

/// The path `path` of snapshot `newer` had in snapshot `older`, when a rename-aware diff of
/// the two finds it moved there (one diff, over the changed subtrees only).
pub(crate) fn renamed_from(
    store: &Store,
    older: Id,
    newer: Id,
    path: &[u8],
) -> Result<Option<Vec<u8>>> {
    let d = diff(
        store,
        Rev::Snapshot(older),
        Rev::Snapshot(newer),
        None,
        &DiffRequest {
            renames: true,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )?;
    Ok(d.changes
        .iter()
        .find(|c| c.path == path && c.status == ChangeStatus::Renamed)
        .and_then(|c| c.old_path.clone()))
}
