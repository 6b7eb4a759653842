//! The store's disk budget: when a snapshot takes the store past `max_store_bytes`, the oldest
//! unprotected snapshots are forgotten and their space collected until it fits again.
//!
//! What is measured is the bytes of pages in use in the database file (what the store would be
//! after a compaction): pages a gc freed are reused by the next snapshots before the file grows,
//! so the file itself stays within the budget plus one snapshot's new data. The check after a
//! snapshot costs one `stat` while the file is within the budget; only past it are the pages
//! counted.
//!
//! Protected snapshots (see [`crate::forget`]: tagged, a workspace's latest, within the undo
//! depth, an overlay's base or state) are never evicted. When they alone exceed the budget,
//! [`enforce`] says so once (a `meta` counter remembers it until the store fits again), and
//! the snapshot that triggered it stands.
//!
//! Eviction costs what it frees: the oldest unprotected snapshots are forgotten one at a time
//! in one transaction, each releasing its root tree's reference count, and what falls to zero
//! is deleted, cascading (`gc::drain`, see the store's reference counts), until the
//! bytes freed cover the excess; the segments that lost bytes are then deleted when dead or
//! repacked when sparse, and the transaction commits once. A process killed at any point
//! leaves the store as it was or with those snapshots forgotten and collected. Only when
//! nothing is left to evict and the store is still over does a full collection run
//! (repacking any segment with a dead byte, and regrouping), once until the store fits again.

use crate::error::Result;
use crate::forget::{ForgetOptions, Judged};
use crate::store::Store;

/// The live fraction below which the budget's gc repacks a segment (gc's own default is 0.5).
const BUDGET_REPACK_BELOW: f64 = 0.9;

/// The `meta` counter set while protected snapshots alone exceed the budget.
const WARNED: &str = "budget_protected_over";

/// What [`enforce`] did.
#[derive(Clone, Debug, Default)]
pub struct BudgetReport {
    /// The budget.
    pub max_bytes: u64,
    /// Bytes in use before and after (or the file's length, when that is within the budget).
    pub used_before: u64,
    /// See `used_before`.
    pub used_after: u64,
    /// Snapshots forgotten, oldest first.
    pub evicted: Vec<Judged>,
    /// How many gcs ran.
    pub collections: usize,
    /// Set the first time protected snapshots alone keep the store over the budget (not again
    /// until it has fit once).
    pub protected_over: bool,
}

/// Where the store stands against its budget (`rewind stats`).
#[derive(Clone, Debug, Default)]
pub struct BudgetStatus {
    /// The budget.
    pub max_bytes: u64,
    /// Bytes of pages in use.
    pub used_bytes: u64,
    /// Protected snapshots with what protects each, oldest first.
    pub protected: Vec<Judged>,
    /// The snapshot the next eviction would forget first.
    pub next_eviction: Option<Judged>,
    /// Unprotected snapshots.
    pub evictable: usize,
}

/// Bytes of pages in use in the database file.
pub fn used_bytes(store: &Store) -> Result<u64> {
    let txn = store.begin_write()?;
    // The allocator's count: `stats()` would also walk every page of every table.
    let bytes = txn.allocated_bytes()?;
    txn.abort()?;
    Ok(bytes)
}

/// Bytes of pages in use, measured against a budget of `max_bytes`: when the count is over,
/// the store is settled and counted again. Pages the last commits replaced count as in use
/// until redb hands them back, at a later commit: right after a snapshot in the same process
/// that is every page its commit rewrote (megabytes on a large tree), and a budget judged on
/// them would forget every unprotected snapshot.
fn used_against(store: &Store, max_bytes: u64) -> Result<u64> {
    let used = used_bytes(store)?;
    if used <= max_bytes {
        return Ok(used);
    }
    settle(store)?;
    used_bytes(store)
}

/// Commits twice with nothing to write, so that redb hands back the pages earlier commits
/// replaced and [`used_bytes`] counts only what is live.
fn settle(store: &Store) -> Result<()> {
    for _ in 0..2 {
        store.begin_write()?.commit()?;
    }
    Ok(())
}

fn file_len(store: &Store) -> u64 {
    std::fs::metadata(store.dir().join(crate::store::DB_FILE)).map_or(0, |m| m.len())
}

/// Every snapshot, oldest first, split into the protected (with why) and the evictable.
fn judge(store: &Store, undo_depth: usize) -> Result<(Vec<Judged>, Vec<Judged>)> {
    let why = crate::forget::protected(store, undo_depth)?;
    let reader = store.reader()?;
    let mut all: Vec<Judged> = Vec::new();
    for id in reader.all_snapshots()? {
        let r = reader.snapshot_record(&id)?;
        all.push(Judged {
            id,
            workspace: r.workspace,
            time_ns: r.time_ns,
            message: r.message,
            reason: why.get(&id).cloned(),
        });
    }
    all.sort_by_key(|j| j.time_ns);
    Ok(all.into_iter().partition(|j| j.reason.is_some()))
}

/// The store against a budget of `max_bytes`.
pub fn status(store: &Store, max_bytes: u64, undo_depth: usize) -> Result<BudgetStatus> {
    let (protected, evictable) = judge(store, undo_depth)?;
    Ok(BudgetStatus {
        max_bytes,
        used_bytes: used_against(store, max_bytes)?,
        next_eviction: evictable.first().cloned(),
        evictable: evictable.len(),
        protected,
    })
}

/// Brings the store within `max_bytes` by forgetting its oldest unprotected snapshots and
/// collecting what they held. Cheap (one `stat`) while the file is within the budget.
pub fn enforce(store: &Store, max_bytes: u64, undo_depth: usize) -> Result<BudgetReport> {
    let mut report = BudgetReport {
        max_bytes,
        ..BudgetReport::default()
    };
    let len = file_len(store);
    if len <= max_bytes {
        // The file's length bounds the pages in use: close enough, and one `stat`.
        report.used_before = len;
        report.used_after = len;
        return fits(store, report);
    }
    report.used_before = used_against(store, max_bytes)?;
    report.used_after = report.used_before;
    if report.used_before <= max_bytes {
        return fits(store, report);
    }
    let (_, evictable) = judge(store, undo_depth)?;
    // Segments keep what is dead in them until they are sparse enough to repack: gc's 0.5
    // would leave a budgeted store up to twice its live data. The budget repacks a segment
    // once a tenth of it is dead (`BUDGET_REPACK_BELOW`).
    if !evictable.is_empty() {
        let total = evictable.len();
        let over = report.used_before - max_bytes;
        let (mut seen, mut freed) = (0usize, 0u64);
        let mut touched = rustc_hash::FxHashSet::default();
        // One transaction: each snapshot (oldest first) is forgotten and what it alone held
        // deleted (the reference counts say what), until the bytes freed cover the excess.
        // Judged before this call: a snapshot an operation protected meanwhile is refused by
        // forget as a whole, and the budget simply stops for now.
        let done = crate::forget::forget_then(
            store,
            &ForgetOptions {
                snapshots: evictable.iter().map(|j| j.id).collect(),
                undo_depth,
                ..ForgetOptions::default()
            },
            |txn, _| {
                seen += 1;
                let drained = crate::gc::drain(txn)?;
                freed += drained.bytes;
                touched.extend(drained.touched);
                if freed < over && seen < total {
                    return Ok(true);
                }
                // The bytes freed are those of the deleted objects (trees, spans, dead frames):
                // a segment they leave dead goes now, a sparse one is repacked, and what stays
                // in a segment less than a tenth dead is the estimate's error.
                let mut gc = crate::gc::GcReport::default();
                crate::gc::finish_unreferenced(txn, BUDGET_REPACK_BELOW, seen, &touched, &mut gc)?;
                Ok(false)
            },
        );
        match done {
            Ok(r) => report.evicted.extend(r.forgotten),
            Err(crate::Error::ForgetRefused(_)) => {}
            Err(e) => return Err(e),
        }
        report.collections += 1;
        // What the pages in use will be once redb hands back the pages this commit released
        // (it does so only at a later commit: measuring now would count them, and waiting
        // for two more commits cost more than the eviction).
        report.used_after = report.used_before.saturating_sub(freed);
    }
    let warned = store.reader()?.counter(WARNED)? != 0;
    if report.used_after > max_bytes && !warned && judge(store, undo_depth)?.1.is_empty() {
        // Nothing left to evict and still over: a full collection, which also repacks any
        // segment with a dead byte and regroups small blobs (a group stays whole while any
        // member lives, so the dead members' bytes come back only when it is made again).
        // Once per stay over the budget: after it the protected snapshots are known to exceed
        // it (`WARNED`), and every later snapshot paying a stop-the-world collection that
        // cannot bring the store within it would make the budget the store's cost.
        let opts = crate::gc::GcOptions {
            recompress_level: Some(crate::gc::RECOMPRESS_LEVEL),
            repack_below: 1.0,
            ..crate::gc::GcOptions::default()
        };
        crate::gc::collect(store, &opts, &crate::progress::NoProgress)?;
        report.collections += 1;
        settle(store)?;
        report.used_after = used_bytes(store)?;
    }
    if report.used_after <= max_bytes {
        return fits(store, report);
    }
    let txn = store.begin_write()?;
    if crate::store::read_counter(&txn, WARNED)? == 0 {
        report.protected_over = true;
        crate::store::write_counter(&txn, WARNED, 1)?;
        txn.commit()?;
    } else {
        txn.abort()?;
    }
    Ok(report)
}

/// Takes a snapshot ([`crate::snapshot::snapshot`]), then keeps the store within the budget
/// its config sets ([`after_snapshot`]): what every caller that records a user's or an
/// agent's work uses (the crate root's `snapshot`, runs, hooks, the daemon, the server), so
/// no path past the budget is left open. One `stat` while the store is within it.
pub fn snapshot(
    store: &Store,
    root: &std::path::Path,
    opts: &crate::snapshot::SnapshotOptions,
    progress: &dyn crate::progress::Progress,
) -> Result<crate::snapshot::SnapshotOutcome> {
    let mut outcome = crate::snapshot::snapshot(store, root, opts, progress)?;
    if !opts.dry_run {
        let t = std::time::Instant::now();
        // Said through the store's notices; never fails the snapshot just taken.
        if after_snapshot(store).is_some() {
            // What the budget cost this snapshot (one `stat` while the store is within it),
            // beside the snapshot's own phases.
            outcome
                .report
                .phases
                .push(("budget", t.elapsed().as_secs_f64()));
        }
    }
    Ok(outcome)
}

/// The budget the store's config sets, applied after a snapshot: `None` without one (or when
/// the config cannot be read: the snapshot that just committed is what matters). Says what it
/// evicted through [`Store::notice`], and once that protected snapshots alone exceed the budget
/// through [`Store::warning`].
pub fn after_snapshot(store: &Store) -> Option<Result<BudgetReport>> {
    let config = crate::config::Config::load(store.dir()).ok()?;
    let r = &config.retention;
    if r.max_store_bytes == 0 {
        return None;
    }
    let report = enforce(store, r.max_store_bytes, r.undo_depth);
    match &report {
        Ok(rep) if rep.protected_over => store.warning(&format!(
            "the store's protected snapshots alone take {} of its {} budget; they are kept (said once)",
            crate::stats::human_bytes(rep.used_after),
            crate::stats::human_bytes(rep.max_bytes)
        )),
        Ok(rep) if !rep.evicted.is_empty() => store.notice(&format!(
            "disk budget {}: forgot the {}, {} -> {}",
            crate::stats::human_bytes(rep.max_bytes),
            match rep.evicted.len() {
                1 => "oldest unprotected snapshot".to_string(),
                n => format!("{n} oldest unprotected snapshots"),
            },
            crate::stats::human_bytes(rep.used_before),
            crate::stats::human_bytes(rep.used_after)
        )),
        Ok(_) => {}
        Err(e) => store.warning(&format!("disk budget not applied: {e}")),
    }
    Some(report)
}

/// The store fits: clears the "protected over" note so that the next time says so again.
fn fits(store: &Store, report: BudgetReport) -> Result<BudgetReport> {
    if store.reader()?.counter(WARNED)? != 0 {
        let txn = store.begin_write()?;
        crate::store::write_counter(&txn, WARNED, 0)?;
        txn.commit()?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budget's status read in the process that just took a snapshot counts what a later
    /// process would: not the pages that snapshot's commit replaced and redb has not yet
    /// handed back.
    #[test]
    fn status_right_after_a_snapshot_counts_what_is_live() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        for d in 0..50 {
            let dir = ws.join(format!("d{d}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..40 {
                std::fs::write(dir.join(format!("f{f}.txt")), format!("{d} {f}\n")).unwrap();
            }
        }
        let store = Store::open(&tmp.path().join("store"), Default::default()).unwrap();
        let opts = crate::snapshot::SnapshotOptions::default();
        let take = || {
            store
                .snapshot(&ws, &opts, &crate::progress::NoProgress)
                .unwrap()
        };
        take();
        for d in 0..50 {
            std::fs::write(ws.join(format!("d{d}/f0.txt")), "edited\n").unwrap();
        }
        take();
        let raw = used_bytes(&store).unwrap();
        let shown = status(&store, 0, 1).unwrap().used_bytes;
        settle(&store).unwrap();
        let live = used_bytes(&store).unwrap();
        assert!(
            live < raw,
            "the snapshot's commit replaced pages: {live} < {raw}"
        );
        assert_eq!(
            shown, live,
            "status counts the live pages (raw count {raw})"
        );
    }
}
