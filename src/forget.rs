//! Forgetting snapshots: removing snapshot records by a retention policy or by name, so that
//! `rewind gc` can delete what only they referenced.
//!
//! Some snapshots are never forgotten, whatever the policy says, because something still needs
//! them: a tag names it; it is a workspace's latest snapshot (`@`, the parent of the next one,
//! the base of `status`); or it is the before or after state of one of the workspace's latest
//! undoable operations (`undo` restores it). Naming a protected snapshot explicitly is an error
//! that says what protects it; a policy simply keeps it and reports why.
//!
//! The decision and the removal happen in one write transaction, so a snapshot committed by
//! another process meanwhile is either seen (and judged) or not touched.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use redb::{ReadableTable, WriteTransaction};
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Store;
use crate::store::oplog::{self, OpRecord};
use crate::store::snapshot::SnapshotRecord;
use crate::store::tables::*;

/// A `ws_log` key: (workspace id, sequence number).
type LogKey = (u64, u64);

/// What to forget.
#[derive(Clone, Debug, Default)]
pub struct ForgetOptions {
    /// Keep each group's latest N snapshots (of those the policy looks at); with `policy`,
    /// this is its `last` rule.
    pub keep_last: Option<usize>,
    /// Keep the snapshots within this span of their group's latest one; with `policy`, this is
    /// its `within` rule.
    pub keep_within: Option<Duration>,
    /// restic's calendar rules (see [`crate::retention::Policy`]), applied to each group.
    pub policy: crate::retention::Policy,
    /// Group each workspace's snapshots by the values of these metadata keys (a snapshot
    /// without the key is in the group of those without it); empty: a group per workspace.
    pub group_by: Vec<String>,
    /// Forget exactly these snapshots (no policy).
    pub snapshots: Vec<Id>,
    /// Only this workspace (canonical path); None: every workspace.
    pub workspace: Option<Vec<u8>>,
    /// Only snapshots whose `label` meta is one of these (the run retention uses it).
    pub labels: Vec<String>,
    /// How many of a workspace's latest undoable operations keep their snapshots.
    pub undo_depth: usize,
    /// Decide and report, remove nothing.
    pub dry_run: bool,
    /// Thin like a time machine (see [`crate::retention`]): what it keeps is kept.
    pub thin: Option<crate::retention::Thinning>,
    /// "Now" for the age-based policies (default: the clock), so a schedule can be checked.
    pub now_ns: Option<i64>,
}

/// One snapshot forgotten (or kept, with why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// The snapshot.
    pub id: Id,
    /// Its workspace's path.
    pub workspace: Vec<u8>,
    /// When it was taken.
    pub time_ns: i64,
    /// Its message.
    pub message: String,
    /// For kept snapshots: what protects it.
    pub reason: Option<String>,
}

/// What `forget` did.
#[derive(Clone, Debug, Default)]
pub struct ForgetReport {
    /// Whether nothing was removed on purpose.
    pub dry_run: bool,
    /// Forgotten snapshots, oldest first.
    pub forgotten: Vec<Judged>,
    /// Snapshots the policy would have forgotten but something protects.
    pub protected: Vec<Judged>,
    /// Snapshots the policy keeps.
    pub kept: usize,
    /// The operation recorded (None for a dry run or when nothing was forgotten).
    pub op: Option<u64>,
}

/// Forgets snapshots per `opts`.
pub fn forget(store: &Store, opts: &ForgetOptions) -> Result<ForgetReport> {
    forget_then(store, opts, |_, _| Ok(true))
}

/// [`forget`], calling `then` in the same write transaction after each snapshot it removes
/// (oldest first), with the snapshot and its root tree; the rest stay when it says `false`.
/// What the disk budget collects with, one snapshot at a time, so the removals and their
/// collection commit together or not at all.
pub fn forget_then(
    store: &Store,
    opts: &ForgetOptions,
    mut then: impl FnMut(&WriteTransaction, &Judged) -> Result<bool>,
) -> Result<ForgetReport> {
    let mut rules = opts.policy.clone();
    if let Some(n) = opts.keep_last {
        rules.last = Some(crate::retention::Keep::Count(n));
    }
    if let Some(d) = opts.keep_within {
        rules.within = Some(d);
    }
    let policy = !rules.is_empty() || opts.thin.is_some();
    if !policy && opts.snapshots.is_empty() {
        return Err(Error::NothingToForget);
    }
    if policy && !opts.snapshots.is_empty() {
        return Err(Error::ForgetIdsAndPolicy);
    }
    let txn = store.begin_write()?;
    let protections = protections(&txn, opts.undo_depth)?;
    let mut report = ForgetReport {
        dry_run: opts.dry_run,
        ..ForgetReport::default()
    };
    // A snapshot can stand in a history more than once (a restore or undo returned to it), and
    // in another workspace's history (a restore --from-workspace): it is judged once, and
    // forgetting it removes every history entry that names it, so none is left dangling.
    let mut doomed: Vec<Judged> = Vec::new();
    let mut entries_of: FxHashMap<Id, Vec<LogKey>> = FxHashMap::default();
    let mut dangling: Vec<LogKey> = Vec::new();
    {
        let log = txn.open_table(WS_LOG)?;
        let snapshots = txn.open_table(SNAPSHOTS)?;
        let record = |id: &Id| -> Result<SnapshotRecord> {
            let v = snapshots.get(id.0)?.ok_or_else(|| Error::Missing {
                kind: "snapshot",
                id: id.hex(),
            })?;
            SnapshotRecord::decode(id, v.value())
        };
        let judged = |id: Id, r: &SnapshotRecord, reason: Option<String>| Judged {
            id,
            workspace: r.workspace.clone(),
            time_ns: r.time_ns,
            message: r.message.clone(),
            reason,
        };
        // Every history entry, per workspace, oldest first.
        let mut by_ws: BTreeMap<u64, Vec<Id>> = BTreeMap::new();
        for item in log.iter()? {
            let (k, v) = item?;
            let key = k.value();
            let id = Id(v.value());
            // An entry naming a snapshot that is gone (an older version let a restore record
            // one that a forget had just removed): forgotten already, and removed below.
            if snapshots.get(id.0)?.is_none() {
                dangling.push(key);
                continue;
            }
            by_ws.entry(key.0).or_default().push(id);
            entries_of.entry(id).or_default().push(key);
        }
        if !policy {
            let mut refused = Vec::new();
            for want in &opts.snapshots {
                if !entries_of.contains_key(want) {
                    return Err(Error::UnknownRevision(want.hex()));
                }
                if doomed.iter().any(|j| j.id == *want) {
                    continue;
                }
                let r = record(want)?;
                match protections.get(want) {
                    Some(why) => refused.push(format!("{} ({why})", want.short())),
                    None => doomed.push(judged(*want, &r, None)),
                }
            }
            if !refused.is_empty() {
                return Err(Error::ForgetRefused(refused));
            }
        } else {
            let now = opts.now_ns.unwrap_or_else(crate::files::now_ns);
            let mut keep: rustc_hash::FxHashSet<Id> = rustc_hash::FxHashSet::default();
            let mut judged_ids: rustc_hash::FxHashSet<Id> = rustc_hash::FxHashSet::default();
            for history in by_ws.values() {
                // Each snapshot once, at its latest place in the history.
                let mut seen = rustc_hash::FxHashSet::default();
                let mut distinct: Vec<Id> = Vec::new();
                for id in history.iter().rev() {
                    if seen.insert(*id) {
                        distinct.push(*id);
                    }
                }
                distinct.reverse();
                let mut candidates = Vec::new();
                for id in distinct {
                    let r = record(&id)?;
                    if opts.workspace.as_ref().is_some_and(|w| *w != r.workspace) {
                        continue;
                    }
                    let label = r.meta.iter().find(|(k, _)| k == "label").map(|(_, v)| v);
                    if !opts.labels.is_empty() && !label.is_some_and(|l| opts.labels.contains(l)) {
                        continue;
                    }
                    candidates.push((id, r));
                }
                let n = candidates.len();
                let mut ruled = vec![false; n];
                if !rules.is_empty() {
                    let mut groups: BTreeMap<Vec<Option<&String>>, Vec<usize>> = BTreeMap::new();
                    for (i, (_, r)) in candidates.iter().enumerate() {
                        let key = opts
                            .group_by
                            .iter()
                            .map(|k| r.meta.iter().find(|(m, _)| m == k).map(|(_, v)| v))
                            .collect();
                        groups.entry(key).or_default().push(i);
                    }
                    for members in groups.values() {
                        let times: Vec<i64> =
                            members.iter().map(|&i| candidates[i].1.time_ns).collect();
                        let why = rules.judge(&times, now);
                        for (j, &i) in members.iter().enumerate() {
                            ruled[i] = !why[j].is_empty();
                        }
                    }
                }
                let thinned = match &opts.thin {
                    Some(t) => {
                        let times: Vec<i64> = candidates.iter().map(|(_, r)| r.time_ns).collect();
                        t.keep(&times, now)
                    }
                    None => vec![false; n],
                };
                for (i, (id, r)) in candidates.into_iter().enumerate() {
                    let kept = ruled[i] || thinned[i];
                    if !judged_ids.insert(id) && !kept {
                        continue;
                    }
                    if kept {
                        keep.insert(id);
                    } else if let Some(why) = protections.get(&id) {
                        report.protected.push(judged(id, &r, Some(why.clone())));
                    } else {
                        doomed.push(judged(id, &r, None));
                    }
                }
            }
            // Kept by one history, kept.
            doomed.retain(|j| !keep.contains(&j.id));
            report.protected.retain(|j| !keep.contains(&j.id));
            report.kept = keep.len();
        }
    }
    doomed.sort_by_key(|j| j.time_ns);
    if opts.dry_run || (doomed.is_empty() && dangling.is_empty()) {
        report.forgotten = doomed;
        txn.abort()?;
        return Ok(report);
    }
    {
        let mut log = txn.open_table(WS_LOG)?;
        for key in &dangling {
            log.remove(*key)?;
        }
    }
    if doomed.is_empty() {
        crate::store::refcount::seal(&txn)?;
        txn.commit()?;
        return Ok(report);
    }
    let mut removed = 0usize;
    for j in &doomed {
        {
            let mut log = txn.open_table(WS_LOG)?;
            for key in entries_of.get(&j.id).into_iter().flatten() {
                log.remove(*key)?;
            }
        }
        crate::store::refcount::remove_snapshot(&txn, &j.id)?;
        removed += 1;
        if !then(&txn, j)? {
            break;
        }
    }
    doomed.truncate(removed);
    let forgotten = crate::store::read_counter(&txn, "forgotten_since_gc")?;
    crate::store::write_counter(&txn, "forgotten_since_gc", forgotten + doomed.len() as u64)?;
    let workspace = match (&opts.workspace, doomed.first()) {
        (Some(w), _) => w.clone(),
        (None, Some(j)) if doomed.iter().all(|d| d.workspace == j.workspace) => j.workspace.clone(),
        _ => Vec::new(),
    };
    let op = oplog::record(
        &txn,
        OpRecord {
            changed_workspace: false,
            ..OpRecord::new(store, "forget", workspace, None, None)
        },
    )?;
    crate::store::refcount::seal(&txn)?;
    txn.commit()?;
    report.op = Some(op);
    report.forgotten = doomed;
    Ok(report)
}

/// Snapshots that must not be forgotten (with `undo_depth` undoable operations per workspace),
/// with what protects each.
pub fn protected(store: &Store, undo_depth: usize) -> Result<FxHashMap<Id, String>> {
    let txn = store.begin_write()?;
    let p = protections(&txn, undo_depth)?;
    txn.abort()?;
    Ok(p)
}

/// Snapshots that must not be forgotten, with the reason.
fn protections(txn: &WriteTransaction, undo_depth: usize) -> Result<FxHashMap<Id, String>> {
    let mut p: FxHashMap<Id, String> = FxHashMap::default();
    for item in txn.open_table(REFS)?.iter()? {
        let (k, v) = item?;
        p.entry(Id(v.value()))
            .or_insert_with(|| format!("tagged '{}'", k.value()));
    }
    // The latest snapshot of each workspace.
    let mut latest: FxHashMap<u64, Id> = FxHashMap::default();
    for item in txn.open_table(WS_LOG)?.iter()? {
        let (k, v) = item?;
        latest.insert(k.value().0, Id(v.value()));
    }
    for id in latest.into_values() {
        p.entry(id)
            .or_insert_with(|| "its workspace's latest snapshot".into());
    }
    // Overlays' bases and states: accept and diff read them.
    if let Ok(table) = txn.open_table(OVERLAYS) {
        for item in table.iter()? {
            let (k, v) = item?;
            let rec = crate::overlay::OverlayRecord::decode(k.value(), v.value())?;
            for id in std::iter::once(rec.base).chain(rec.state) {
                p.entry(id)
                    .or_insert_with(|| format!("overlay {} uses it", rec.id));
            }
        }
    }
    // The latest undoable operations of each workspace.
    let mut seen: FxHashMap<Vec<u8>, usize> = FxHashMap::default();
    for item in txn.open_table(OPLOG)?.iter()?.rev() {
        let op = OpRecord::decode(item?.1.value())?;
        if !op.changed_workspace {
            continue;
        }
        let n = seen.entry(op.workspace.clone()).or_default();
        if *n >= undo_depth {
            continue;
        }
        *n += 1;
        for id in op.before.iter().chain(op.after.iter()) {
            p.entry(*id).or_insert_with(|| {
                format!("operation {} ({}) can still be undone", op.id, op.kind)
            });
        }
    }
    Ok(p)
}

/// The run retention: forgets a workspace's `rewind run` snapshots beyond the configured count,
/// then collects garbage when enough has been forgotten since the last gc. Returns how many
/// snapshots were forgotten and whether a gc ran.
pub fn after_run(store: &mut Store, root: &Path) -> Result<(usize, bool)> {
    let config = crate::config::Config::load(store.dir())?;
    let r = &config.retention;
    if r.run_keep_last == 0 {
        return Ok((0, false));
    }
    let report = forget(
        store,
        &ForgetOptions {
            keep_last: Some(r.run_keep_last),
            workspace: Some(std::os::unix::ffi::OsStrExt::as_bytes(root.as_os_str()).to_vec()),
            labels: ["before", "after", "after_failure"]
                .map(String::from)
                .to_vec(),
            undo_depth: r.undo_depth,
            ..ForgetOptions::default()
        },
    )?;
    let pending = store.reader()?.counter("forgotten_since_gc")?;
    let collect = r.gc_after_forgotten > 0 && pending >= r.gc_after_forgotten;
    if collect {
        // Only what collection must do: recompressing with the store's dictionary can take a
        // minute on a big store, and a `rewind run` should not pay that; `rewind gc` does it.
        let opts = crate::gc::GcOptions {
            recompress_level: None,
            ..crate::gc::GcOptions::default()
        };
        crate::gc::gc(store, &opts, &crate::progress::NoProgress)?;
    }
    Ok((report.forgotten.len(), collect))
}
