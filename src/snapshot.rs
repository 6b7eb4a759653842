//! Taking a snapshot: walk, hash what the stat cache cannot vouch for, store new blobs, build
//! the Merkle trees bottom-up, and commit everything in one redb write transaction.
//!
//! Threads: the walker's threads lstat entries and compare them with the stat cache; the rayon
//! pool reads, hashes and compresses files that missed; this thread alone owns the write
//! transaction and drains a bounded channel of encoded objects (`crate::ingest`), so memory stays bounded while
//! both cores compress. The write transaction is begun lazily, at the first new object, so a
//! warm snapshot holds the store's write lock only for its final commit.

use std::collections::{HashMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use redb::{ReadableTable, TableHandle as _, WriteTransaction};

use crate::error::{Error, IoContext, Result};
use crate::files::join_rel;
use crate::id::Id;
use crate::ingest::{Read1, ReadCtx, Sink, read_files};
use crate::progress::{Phases, Progress};
use crate::scan::group::Group;
use crate::scan::statcache::{Stat, StatCache};
use crate::scan::walk::{EntryType, Trust, WalkEntry, WalkOptions, walk};
use crate::store::snapshot::{ScanSettings, SkipReason, Skipped, SnapshotRecord, TreeStats};
use crate::store::tables::*;
use crate::store::tree::Tree;
use crate::store::{Reader, Store, register_in};
use trees::{Built, build_trees};
use write::{Output, Writer, Written};

mod trees;
mod write;

/// How to take a snapshot.
#[derive(Clone, Debug)]
pub struct SnapshotOptions {
    /// `-m`.
    pub message: String,
    /// `--meta KEY=VALUE`.
    pub meta: Vec<(String, String)>,
    /// Tags to point at the new snapshot.
    pub tags: Vec<String>,
    /// Extra ignore globs.
    pub ignore_globs: Vec<String>,
    /// Files larger than this are skipped (and listed).
    pub max_file_size: Option<u64>,
    /// Compute everything, store nothing.
    pub dry_run: bool,
    /// Unreadable or vanished files are errors instead of warnings.
    pub strict: bool,
    /// zstd level for new blobs.
    pub level: i32,
    /// Allow `/` and the home directory as workspaces.
    pub force: bool,
    /// The kind of operation recorded in the op log (default "snapshot").
    pub op_kind: Option<String>,
    /// Directories whose files are known unchanged since the stat cache was written (from a
    /// `crate::scan::watch::Watcher`): their files are not stat'ed again.
    pub trusted_dirs: Option<std::sync::Arc<rustc_hash::FxHashSet<Vec<u8>>>>,
    /// Record nothing when the tree equals the workspace's latest snapshot's: the report names
    /// that snapshot (tags move to it) and says `created: false`. For pollers, so an unchanged
    /// tree does not fill the log.
    pub if_changed: bool,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            message: String::new(),
            meta: Vec::new(),
            tags: Vec::new(),
            ignore_globs: Vec::new(),
            max_file_size: None,
            dry_run: false,
            strict: false,
            level: 3,
            force: false,
            op_kind: None,
            trusted_dirs: None,
            if_changed: false,
        }
    }
}

/// What a snapshot did.
#[derive(Clone, Debug, Default)]
pub struct SnapshotReport {
    /// The new snapshot's id (None for a dry run).
    pub id: Option<Id>,
    /// Root tree id.
    pub root: Id,
    /// The workspace's previous snapshot.
    pub parent: Option<Id>,
    /// Whether the tree equals the previous snapshot's.
    pub unchanged: bool,
    /// Whether a snapshot was recorded: false for a dry run, and with `if_changed` for an
    /// unchanged tree (then `id` is the previous snapshot).
    pub created: bool,
    /// The workspace.
    pub workspace: PathBuf,
    /// Totals over the tree.
    pub stats: TreeStats,
    /// Files (and symlinks) whose content was read because the stat cache could not vouch for
    /// them. Zero on a warm snapshot of an unchanged tree.
    pub files_read: u64,
    /// Bytes read from those files.
    pub bytes_read: u64,
    /// Blobs that were not in the store before.
    pub new_blobs: u64,
    /// Chunks that were not in the store before.
    pub new_chunks: u64,
    /// Trees that were not in the store before.
    pub new_trees: u64,
    /// Encoded bytes added to the store (blobs, chunks, trees).
    pub stored_bytes: u64,
    /// Paths passed over or warned about.
    pub skipped: Vec<Skipped>,
    /// Wall time.
    pub seconds: f64,
    /// Seconds per phase (open, daemon, cache, clock, walk, join, read, trees, write, commit;
    /// then budget, when the store has one and the snapshot was taken through
    /// [`crate::budget::snapshot`]), for tuning.
    pub phases: Vec<(&'static str, f64)>,
    /// Whether the watch daemon narrowed the walk (see `crate::scan::daemon_link`).
    pub walk: crate::scan::daemon_link::WalkNarrowing,
}

/// A snapshot's result. For a dry run, `pending_trees` holds the trees that were computed but
/// not stored, so the live tree can be diffed against stored ones.
#[derive(Debug, Default)]
pub struct SnapshotOutcome {
    /// The report.
    pub report: SnapshotReport,
    /// Trees computed by a dry run (empty otherwise).
    pub pending_trees: HashMap<Id, Tree>,
    /// Directories holding files with other hard links (see `crate::scan::watch`).
    pub linked_dirs: rustc_hash::FxHashSet<Vec<u8>>,
    /// Temporary files a killed rewind left in the workspace (see
    /// [`crate::scan::walk::TEMP_PREFIX`]); commands that write into the workspace remove them
    /// with [`remove_stale_temps`].
    pub stale_temps: Vec<Vec<u8>>,
}

/// Removes the temporary files a killed restore, apply or revert left behind, once the command
/// that finds them has snapshotted the workspace. Only regular files and symlinks with rewind's
/// prefix are removed, and never through a symlinked parent.
pub fn remove_stale_temps(root: &Path, temps: &[Vec<u8>]) -> Result<()> {
    if temps.is_empty() {
        return Ok(());
    }
    let dirs = crate::files::Beneath::open(root)?;
    for rel in temps {
        // Gone, below something that is no longer a real directory, or a directory: left.
        if dirs.lstat(rel).is_none() || dirs.is_dir(rel) {
            continue;
        }
        dirs.remove_file(rel)?;
    }
    Ok(())
}

/// Files stored outside a snapshot (an overlay's upper directory): their ids and sizes, in the
/// order given, and the open write transaction that holds their blobs, for the caller to add
/// what refers to them and commit once.
pub(crate) struct StoredFiles {
    /// (blob id, size) per file.
    pub ids: Vec<(Id, u64)>,
    /// The transaction holding the new blobs (and the segment log's tail).
    pub txn: WriteTransaction,
}

/// Reads, hashes and stores the regular files and symlinks at `files` (relative to `root`)
/// with the snapshot's own machinery: both cores, deduplication, chunking, one transaction.
/// A file that cannot be read fails the whole call, naming it.
pub(crate) fn store_files(store: &Store, root: &Path, files: &[Vec<u8>]) -> Result<StoredFiles> {
    let reader = store.reader()?;
    let mut entries = Vec::with_capacity(files.len());
    for rel in files {
        let p = join_rel(root, rel);
        let meta = std::fs::symlink_metadata(&p).at(&p)?;
        let ty = if meta.file_type().is_symlink() {
            EntryType::Symlink
        } else if meta.is_file() {
            EntryType::File
        } else {
            return Err(Error::NotAFile(p.to_path_buf()));
        };
        entries.push(WalkEntry {
            path: rel.clone(),
            ty,
            stat: Stat::from_metadata(&meta),
            cached: None,
            fresh: false,
        });
    }
    let mut sink = Sink::new(store);
    let ctx = ReadCtx::new(
        root,
        &reader,
        SnapshotOptions::default().level,
        false,
        &crate::progress::NoProgress,
    );
    let to_read: Vec<usize> = (0..entries.len()).collect();
    let outcomes = read_files(&ctx, &entries, &to_read, &mut sink)?;
    let mut ids = Vec::with_capacity(outcomes.len());
    for (e, o) in entries.iter().zip(outcomes) {
        match o {
            Read1::Ok { id, size, .. } => ids.push((id, size)),
            Read1::Skip(reason, detail) => {
                return Err(Error::FileNotStored {
                    path: join_rel(root, &e.path),
                    reason: reason.name(),
                    detail,
                });
            }
            Read1::Aborted => return Err(Error::Internal("storing files aborted".into())),
        }
    }
    let txn = sink.take_txn()?;
    // What this call found already stored in its read view must still be there (a gc may have
    // committed since): the same rule as a snapshot's, checked for every id since they are few.
    {
        let blobs = txn.open_table(BLOBS)?;
        for (id, _) in &ids {
            if blobs.get(id.0)?.is_none() {
                return Err(Error::ConcurrentGc("overlay's state"));
            }
        }
    }
    Ok(StoredFiles { ids, txn })
}

/// Takes a snapshot of the workspace at `root`. With `opts.dry_run` this is [`dry_run`].
pub fn snapshot(
    store: &Store,
    root: &Path,
    opts: &SnapshotOptions,
    progress: &dyn Progress,
) -> Result<SnapshotOutcome> {
    if opts.dry_run {
        return dry_run(store, root, opts, progress);
    }
    // A gc that commits while this snapshot deduplicates against its read view may delete what
    // the snapshot counted on; the final transaction notices (see `crate::gc`) and the snapshot
    // starts over. Two gcs in a row during one snapshot are rare; three give up with the error.
    // A damaged page in the stat cache costs the cache, not the snapshot: it is dropped and the
    // snapshot taken again without it (once: damage elsewhere is reported).
    let mut tries = 0;
    let mut cache_rebuilt = false;
    loop {
        match Snapshotter::open(store, root, opts, progress, false).and_then(Snapshotter::take) {
            Err(Error::ConcurrentGc(_)) if tries < 2 => tries += 1,
            Err(e) if !cache_rebuilt && e.is_damaged_table(STAT_CACHE.name()) => {
                store
                    .warning("the stat cache was damaged: dropped; this snapshot reads every file");
                store.rebuild_stat_cache()?;
                cache_rebuilt = true;
            }
            other => return other,
        }
    }
}

/// Computes the snapshot [`snapshot`] would take now and stores nothing: files are read and
/// hashed but not compressed, no transaction is begun, the stat cache is not updated. What
/// `status` and the live diff use; the outcome's `pending_trees` hold the computed trees.
/// `opts.dry_run` is ignored (this is always a dry run).
pub fn dry_run(
    store: &Store,
    root: &Path,
    opts: &SnapshotOptions,
    progress: &dyn Progress,
) -> Result<SnapshotOutcome> {
    // Nothing is written, so a concurrent gc cannot invalidate anything: no retry.
    Snapshotter::open(store, root, opts, progress, true)?.preview()
}

/// One snapshot, as named steps: [`Snapshotter::open`] (read view, stat cache, daemon token),
/// [`scan`](Snapshotter::scan) (the walk, with the stat cache's verdicts),
/// [`read`](Snapshotter::read) (hash and store what the cache could not vouch for),
/// [`build`](Snapshotter::build) (the trees), then either [`commit`](Snapshotter::commit) or,
/// for a dry run, [`preview`](Snapshotter::preview)'s outcome.
struct Snapshotter<'a> {
    store: &'a Store,
    opts: &'a SnapshotOptions,
    progress: &'a dyn Progress,
    /// Compute everything, store nothing.
    dry: bool,
    t0: Instant,
    phases: Phases,
    /// The canonical workspace root and its (device, inode) when the snapshot began.
    root: PathBuf,
    root_identity: (u64, u64),
    reader: Reader,
    /// The gc epoch of the read view (see [`check_still_stored`]).
    epoch: u64,
    cache: StatCache,
    /// The workspace whose stored stat cache [`scan`](Snapshotter::scan) joins with the
    /// walk's entries after the walk, a directory at a time, instead of loading it whole
    /// (see `crate::scan::group`).
    join_stored: Option<u64>,
    daemon: DaemonAnswer,
    /// The workspace's latest snapshot in the read view.
    parent: Option<Id>,
    /// The file system clock before the walk (for racy-clean entries).
    start_ns: i64,
    /// The caller's ignore globs joined with the store's.
    ignore_globs: Vec<String>,
    /// What decides the ignored files, recorded with the daemon token.
    scan_key: (Vec<String>, Option<u64>),
}

/// What the walk found, and how each entry stands after the stat cache.
struct Scanned {
    /// What the walk found. A file or symlink is in the tree when its `cached` is set: by the
    /// stat cache, or (`fresh`) by [`Snapshotter::read`]. No second per-entry vector: at a
    /// million files each byte per entry is a megabyte.
    entries: Vec<WalkEntry>,
    /// The entries grouped by directory, sorted by path, with what the stat cache held.
    groups: Vec<Group>,
    /// Directories the stat cache has and the walk did not find (when it can tell: not
    /// with a narrowed cache).
    stale_dirs: Vec<Vec<u8>>,
    /// Whether the stat cache was read whole (see [`StatCache::is_complete`]).
    cache_complete: bool,
    /// Indexes of the entries to read (emptied by the read).
    to_read: Vec<usize>,
    /// How many there were.
    files_read: u64,
    skipped: Vec<Skipped>,
    linked_dirs: rustc_hash::FxHashSet<Vec<u8>>,
    stale_temps: Vec<Vec<u8>>,
    /// The caller's ignore globs joined with the store's.
    ignore_globs: Vec<String>,
    /// What decides the ignored files, recorded with the daemon token.
    scan_key: (Vec<String>, Option<u64>),
    /// Bytes read by [`Snapshotter::read`].
    bytes_read: u64,
}

impl<'a> Snapshotter<'a> {
    /// Opens the read view and loads what the walk needs: the stat cache, the daemon's
    /// narrowing, the parent and the file system clock. Fails early on a taken tag.
    fn open(
        store: &'a Store,
        root: &Path,
        opts: &'a SnapshotOptions,
        progress: &'a dyn Progress,
        dry: bool,
    ) -> Result<Snapshotter<'a>> {
        let t0 = Instant::now();
        let root = crate::workspace::for_store(store, root, opts.force)?;
        let root_identity = dir_identity(&root)?;
        for tag in &opts.tags {
            crate::revision::validate_tag(tag)?;
        }
        let reader = store.reader()?;
        let epoch = reader.gc_epoch()?;
        let mut phases = Phases::new(t0);
        for tag in &opts.tags {
            if reader.tag(tag)?.is_some() {
                return Err(Error::TagTaken(tag.clone()));
            }
        }
        let ws = reader.workspace(&root)?;
        // The store's rules join the caller's; the record keeps them all, so a restore or a
        // later diff leaves out exactly what this snapshot did.
        let mut ignore_globs = opts.ignore_globs.clone();
        for g in crate::config::IgnoreConfig::load(store.dir())?.globs() {
            if !ignore_globs.contains(&g) {
                ignore_globs.push(g);
            }
        }
        let scan_key = (ignore_globs.clone(), opts.max_file_size);
        phases.mark("open");
        // The watch daemon, when one runs, says what changed since the cache's token; the rest
        // is trusted as `run`'s own watch trusts it (see `scan::daemon_link`).
        let mut daemon = daemon_narrowing(
            store,
            &reader,
            ws.as_ref().map(|w| w.id()),
            &root,
            opts.trusted_dirs.is_none(),
            &ignore_globs,
        )?;
        phases.mark("daemon");
        // Untouched subtrees need not even be listed, nor their cache read, when what decides
        // the ignored files is what it was when the cache was written.
        let prune = daemon.prune && daemon.record.scan.as_ref() == Some(&scan_key);
        if let crate::scan::daemon_link::WalkNarrowing::Narrowed { pruned, .. } = &mut daemon.walk {
            *pruned = prune;
        }
        // A walk that trusts directories needs the cache while it walks; one that does not
        // (no daemon) only compares afterwards, so the cache is read then, a directory at a
        // time, and never held whole (see `scan`).
        let walk_trusts = daemon.trusted.is_some() || opts.trusted_dirs.is_some();
        let mut join_stored = None;
        let cache = match (&ws, &daemon.trusted) {
            (Some(ws), Some(untrusted)) if prune => {
                StatCache::load_narrowed(&reader, ws.id(), untrusted)?
            }
            (Some(ws), _) if !walk_trusts => {
                join_stored = Some(ws.id());
                StatCache::default()
            }
            (Some(ws), _) => StatCache::load(&reader, ws.id())?,
            (None, _) => StatCache::default(),
        };
        phases.mark("cache");
        let parent = match &ws {
            Some(ws) => reader.history(ws.id(), 1)?.first().copied(),
            None => None,
        };
        let start_ns = fs_clock_ns(store.dir(), &root);
        phases.mark("clock");
        Ok(Snapshotter {
            store,
            opts,
            progress,
            dry,
            t0,
            phases,
            root,
            root_identity,
            reader,
            epoch,
            cache,
            join_stored,
            daemon,
            parent,
            start_ns,
            ignore_globs,
            scan_key,
        })
    }

    /// A snapshot that writes: every step, then the commit.
    fn take(mut self) -> Result<SnapshotOutcome> {
        let mut scanned = self.scan()?;
        let mut sink = Sink::new(self.store);
        self.read(&mut scanned, &mut sink)?;
        // The trees and cache rows go into the transaction that holds the new blobs as they
        // are built (see `write`).
        let txn = sink.take_txn()?;
        let ws = register_in(&txn, &self.root)?;
        let (built, written) = {
            let mut out = Output::Write(Box::new(Writer::new(&txn, ws.id)?));
            let built = self.build(&scanned, &mut out)?;
            let written = match out {
                Output::Write(w) => w.finish()?,
                Output::Keep => Written::default(),
            };
            (built, written)
        };
        self.commit(scanned, built, written, txn, sink)
    }

    /// A snapshot that writes nothing: the outcome carries the trees it computed.
    fn preview(mut self) -> Result<SnapshotOutcome> {
        let mut scanned = self.scan()?;
        // Nothing reaches the sink in a dry run (`ReadCtx::claim` claims nothing).
        let mut sink = Sink::new(self.store);
        self.read(&mut scanned, &mut sink)?;
        let built = self.build(&scanned, &mut Output::Keep)?;
        let mut report = self.report(&mut scanned, &built)?;
        // The caller has no use for the walk's entries: they are freed beside it.
        free_beside((
            std::mem::take(&mut scanned.entries),
            std::mem::take(&mut scanned.groups),
        ));
        report.seconds = self.t0.elapsed().as_secs_f64();
        report.phases = self.phases.done;
        let pending_trees = built
            .new_trees()
            .map(|tree| {
                let (id, bytes) = tree?;
                Ok((id, Tree::decode(&id, &bytes)?))
            })
            .collect::<Result<_>>()?;
        Ok(SnapshotOutcome {
            report,
            pending_trees,
            linked_dirs: scanned.linked_dirs,
            stale_temps: scanned.stale_temps,
        })
    }

    /// Walks the workspace (narrowed by the daemon or the caller's trusted directories) and
    /// sorts the entries: resolved by the stat cache, to read, or skipped.
    fn scan(&mut self) -> Result<Scanned> {
        let opts = self.opts;
        let exclude = self
            .store
            .dir()
            .canonicalize()
            .ok()
            .filter(|d| d.starts_with(&self.root));
        let ignore_globs = std::mem::take(&mut self.ignore_globs);
        let scan_key = std::mem::take(&mut self.scan_key);
        let trusted = match &opts.trusted_dirs {
            Some(dirs) => Some(Trust::Only(dirs.clone())),
            None => self.daemon.trusted.take().map(Trust::AllBut),
        };
        let walk_opts = WalkOptions {
            ignore_globs: ignore_globs.clone(),
            exclude,
            threads: 0,
            trusted,
        };
        let cache = match self.join_stored {
            None => &self.cache,
            Some(_) => &StatCache::default(),
        };
        let mut walked = walk(&self.root, &walk_opts, cache)?;
        let mut entries = std::mem::take(&mut walked.entries);
        self.phases.mark("walk");

        let mut skipped: Vec<Skipped> = walked
            .errors
            .into_iter()
            .map(|(path, detail)| Skipped {
                path,
                reason: SkipReason::Unreadable,
                detail,
            })
            .collect();
        let unreadable_dirs: HashSet<&[u8]> = skipped
            .iter()
            .filter(|s| s.reason == SkipReason::Unreadable)
            .map(|s| s.path.as_slice())
            .collect();
        let mut groups = crate::scan::group::group(&entries, &unreadable_dirs);
        drop(unreadable_dirs);
        self.phases.mark("group");
        let stale_dirs = match self.join_stored {
            Some(ws) => {
                crate::scan::group::join_stored(&self.reader, ws, &mut groups, &mut entries)?
            }
            None => crate::scan::group::join_loaded(&self.cache, &mut groups, &entries),
        };
        // The cache's verdicts are in the entries and groups now.
        let cache_complete = self.cache.is_complete();
        self.cache = StatCache::default();
        self.phases.mark("join");
        let mut to_read = Vec::new();
        for (i, e) in entries.iter_mut().enumerate() {
            match e.ty {
                EntryType::Special => skipped.push(Skipped {
                    path: e.path.clone(),
                    reason: SkipReason::Special,
                    detail: "fifo, socket or device".into(),
                }),
                EntryType::File if opts.max_file_size.is_some_and(|m| e.stat.size > m) => {
                    e.cached = None;
                    skipped.push(Skipped {
                        path: e.path.clone(),
                        reason: SkipReason::TooLarge,
                        detail: format!("{} bytes", e.stat.size),
                    })
                }
                EntryType::File | EntryType::Symlink if e.cached.is_none() => to_read.push(i),
                EntryType::File | EntryType::Symlink | EntryType::Dir => {}
            }
        }
        Ok(Scanned {
            entries,
            groups,
            stale_dirs,
            cache_complete,
            files_read: to_read.len() as u64,
            to_read,
            skipped,
            linked_dirs: walked.linked_dirs,
            stale_temps: walked.temps,
            ignore_globs,
            scan_key,
            bytes_read: 0,
        })
    }

    /// Reads, hashes and (unless dry) stores the files the stat cache could not vouch for,
    /// and records what became of each. Fails if the workspace itself vanished meanwhile, or,
    /// when strict, on the first unreadable or vanished file.
    fn read(&mut self, scanned: &mut Scanned, sink: &mut Sink) -> Result<()> {
        let mut to_read = std::mem::take(&mut scanned.to_read);
        // In path order (the parallel walk's order is not): small files are compressed in
        // groups of neighbours as they are read, and neighbours share the most (a directory's
        // files, then the next directory's), and restore, which writes in tree order, then
        // finds each group where it left it (see the store's `group` module).
        to_read.sort_unstable_by(|&a, &b| scanned.entries[a].path.cmp(&scanned.entries[b].path));
        let total: u64 = to_read.iter().map(|&i| scanned.entries[i].stat.size).sum();
        self.progress.start("snapshot", total, to_read.len() as u64);
        let ctx = ReadCtx::new(
            &self.root,
            &self.reader,
            self.opts.level,
            self.dry,
            self.progress,
        );
        // In parts, so that the outcomes (~90 bytes a file) of a million files are not all
        // held at once beside the walk's entries; one context, so its claims (what is already
        // stored or being stored) hold across parts.
        for part in to_read.chunks(READ_PART) {
            let outcomes = read_files(&ctx, &scanned.entries, part, sink)?;
            for (i, outcome) in part.iter().zip(outcomes) {
                let e = &mut scanned.entries[*i];
                match outcome {
                    Read1::Ok {
                        id,
                        size,
                        stat,
                        unstable,
                    } => {
                        e.cached = Some((id, size));
                        e.stat = stat;
                        e.fresh = true;
                        if unstable {
                            scanned.skipped.push(Skipped {
                                path: e.path.clone(),
                                reason: SkipReason::ChangedWhileRead,
                                detail: "kept changing while read; stored as last read".into(),
                            });
                        }
                    }
                    Read1::Skip(reason, detail) => scanned.skipped.push(Skipped {
                        path: e.path.clone(),
                        reason,
                        detail,
                    }),
                    Read1::Aborted => return Err(Error::Internal("snapshot aborted".into())),
                }
            }
        }
        // Files that vanish are skipped one by one, but a workspace that vanished (deleted, or
        // replaced by another directory) would be recorded as emptied: that is no snapshot of
        // it.
        if dir_identity(&self.root).ok() != Some(self.root_identity) {
            return Err(Error::WorkspaceVanished(self.root.clone()));
        }
        self.phases.mark("read");
        self.progress.finish();
        let skipped = &mut scanned.skipped;
        if self.opts.strict
            && let Some(s) = skipped
                .iter()
                .find(|s| matches!(s.reason, SkipReason::Unreadable | SkipReason::Vanished))
        {
            return Err(Error::Strict(format!(
                "{}: {} ({})",
                crate::files::display(&s.path),
                s.reason.name(),
                s.detail
            )));
        }
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        scanned.bytes_read = ctx.bytes_read.load(Ordering::Relaxed);
        Ok(())
    }

    /// Builds the Merkle trees bottom-up from the resolved entries.
    fn build(&mut self, scanned: &Scanned, out: &mut Output) -> Result<Built> {
        let built = build_trees(&scanned.entries, &scanned.groups, self.start_ns, out)?;
        self.phases.mark("trees");
        Ok(built)
    }

    /// The report as the read view sees it (the commit corrects the parent if another process
    /// snapshotted meanwhile). Takes the skipped list from `scanned`.
    fn report(&self, scanned: &mut Scanned, built: &Built) -> Result<SnapshotReport> {
        let mut report = SnapshotReport {
            id: None,
            root: built.root,
            parent: self.parent,
            unchanged: false,
            workspace: self.root.clone(),
            stats: built.stats,
            files_read: scanned.files_read,
            bytes_read: scanned.bytes_read,
            skipped: std::mem::take(&mut scanned.skipped),
            walk: self.daemon.walk.clone(),
            ..Default::default()
        };
        if let Some(p) = self.parent {
            report.unchanged = self.reader.snapshot_record(&p)?.root == built.root;
        }
        Ok(report)
    }

    /// Stores the trees, the snapshot record (unless `if_changed` finds nothing changed), the
    /// tags, the op, the stat cache and the daemon token in one transaction, the one that
    /// already holds the new blobs.
    fn commit(
        mut self,
        mut scanned: Scanned,
        built: Built,
        written: Written,
        txn: WriteTransaction,
        sink: Sink,
    ) -> Result<SnapshotOutcome> {
        let opts = self.opts;
        let mut report = self.report(&mut scanned, &built)?;
        // What the walk found is in the trees now: at a million files it is ~150 MB, which
        // the transaction's pages need more. Freed on a thread of their own (a million frees),
        // which the commit and the caller need not wait for.
        free_beside((
            std::mem::take(&mut scanned.entries),
            std::mem::take(&mut scanned.groups),
        ));
        // A complete cache lists every stored directory: the ones no longer in the tree go
        // (`stale_dirs`). A narrowed one only knows the directories it read: under those, the
        // subdirectories that went away go, with everything below them (`stale_trees`).
        let stale_dirs = std::mem::take(&mut scanned.stale_dirs);
        let record_base = SnapshotRecord {
            workspace: self.root.as_os_str().as_bytes().to_vec(),
            workspace_id: 0,
            root: built.root,
            time_ns: crate::files::now_ns(),
            parent: None,
            message: opts.message.clone(),
            meta: opts.meta.clone(),
            stats: built.stats,
            scan: ScanSettings {
                ignore_globs: scanned.ignore_globs,
                max_file_size: opts.max_file_size,
            },
            skipped: report.skipped.clone(),
        };
        let cache_complete = scanned.cache_complete;
        drop(self.reader);
        report.new_trees += written.new_trees;
        report.stored_bytes += written.stored_bytes;
        let (id, parent) = {
            if crate::store::epoch_in(&txn)? != self.epoch {
                check_still_stored(&txn, built.root, &written.trees)?;
            }
            let ws = register_in(&txn, &self.root)?;
            // Re-read the parent inside the transaction: another process may have snapshotted
            // this workspace since we started.
            let parent = {
                let log = txn.open_table(WS_LOG)?;
                let last = log
                    .range((ws.id, 0)..=(ws.id, u64::MAX))?
                    .next_back()
                    .transpose()?;
                last.map(|(_, v)| Id(v.value()))
            };
            if parent != report.parent {
                // Another process snapshotted this workspace meanwhile: compare with its
                // snapshot.
                report.unchanged = match parent {
                    Some(p) => match txn.open_table(SNAPSHOTS)?.get(p.0)? {
                        Some(v) => SnapshotRecord::decode(&p, v.value())?.root == built.root,
                        None => false,
                    },
                    None => false,
                };
            }
            let reuse = parent.filter(|_| opts.if_changed && report.unchanged);
            let id = match reuse {
                Some(p) => p,
                None => {
                    let record = SnapshotRecord {
                        workspace_id: ws.id,
                        parent,
                        ..record_base
                    };
                    let bytes = record.encode()?;
                    let id = Id::of(&bytes);
                    crate::store::refcount::insert_snapshot(&txn, &id, &bytes, &record.root)?;
                    crate::store::append_log(&txn, ws.clone(), id)?;
                    id
                }
            };
            report.created = reuse.is_none();
            let mut refs = txn.open_table(REFS)?;
            for tag in &opts.tags {
                if refs.insert(tag.as_str(), id.0)?.is_some() {
                    return Err(Error::TagRaced(tag.clone()));
                }
            }
            drop(refs);
            if reuse.is_none() {
                crate::store::oplog::record(
                    &txn,
                    crate::store::oplog::OpRecord {
                        changed_workspace: false,
                        ..crate::store::oplog::OpRecord::new(
                            self.store,
                            opts.op_kind.clone().unwrap_or_else(|| "snapshot".into()),
                            ws.path.clone(),
                            parent,
                            Some(id),
                        )
                    },
                )?;
            }
            // The rebuilt directories' rows are written (`write`); the stale ones go.
            let mut sc = txn.open_table(STAT_CACHE)?;
            let mut counts = crate::store::refcount::Counts::open(&txn)?;
            for dir in &stale_dirs {
                if let Some(old) = sc.remove((ws.id, dir.as_slice()))? {
                    counts.row(Some(old.value()), None)?;
                }
            }
            if !cache_complete {
                for top in &built.stale_trees {
                    remove_cache_tree(&mut sc, &mut counts, ws.id, top)?;
                }
            }
            drop((sc, counts));
            crate::scan::token::record(
                &txn,
                ws.id,
                self.daemon.record.generation,
                self.daemon.token,
                &scanned.linked_dirs,
                scanned.scan_key,
            )?;
            (id, parent)
        };
        self.phases.mark("write");
        crate::store::refcount::seal(&txn)?;
        txn.commit()?;
        self.phases.mark("commit");
        report.phases = self.phases.done;
        report.id = Some(id);
        report.parent = parent;
        report.new_blobs = sink.new_blobs;
        report.new_chunks = sink.new_chunks;
        report.stored_bytes += sink.stored_bytes;
        report.seconds = self.t0.elapsed().as_secs_f64();
        Ok(SnapshotOutcome {
            report,
            pending_trees: HashMap::new(),
            linked_dirs: scanned.linked_dirs,
            stale_temps: scanned.stale_temps,
        })
    }
}

/// What the watch daemon says about the workspace.
struct DaemonAnswer {
    /// What it says changed, with the directories holding hard-linked files added.
    trusted: Option<std::sync::Arc<crate::scan::narrow::Untrusted>>,
    /// The token to record with the cache this snapshot writes.
    token: Option<crate::scan::token::Token>,
    /// The token record as read with the cache.
    record: crate::scan::token::TokenRecord,
    /// No ignore file changed since the cache's token.
    prune: bool,
    /// How the walk is narrowed (for the report).
    walk: crate::scan::daemon_link::WalkNarrowing,
}

fn daemon_narrowing(
    store: &Store,
    reader: &Reader,
    ws: Option<u64>,
    root: &Path,
    ask: bool,
    ignore_globs: &[String],
) -> Result<DaemonAnswer> {
    use crate::scan::daemon_link::{Narrowing, WalkNarrowing, narrow};
    let record = match ws {
        Some(ws) => crate::scan::token::load(reader, ws)?,
        None => Default::default(),
    };
    let mut answer = DaemonAnswer {
        trusted: None,
        token: None,
        prune: false,
        walk: WalkNarrowing::Full,
        record,
    };
    if !ask {
        return Ok(answer);
    }
    match narrow(store.dir(), root, answer.record.token) {
        Narrowing::NoDaemon => {}
        Narrowing::Full { token, reason } => {
            answer.token = token;
            answer.walk = WalkNarrowing::DaemonFull { reason };
        }
        // The daemon watches what its own ignore globs leave in: a directory they leave out
        // and this walk enters was never watched, so nothing it says can be trusted.
        Narrowing::Changed { token, globs, .. }
            if globs.iter().any(|g| !ignore_globs.contains(g)) =>
        {
            answer.token = Some(token);
            answer.walk = WalkNarrowing::DaemonFull {
                reason: "the daemon ignores directories this snapshot reads".into(),
            };
        }
        Narrowing::Changed {
            token,
            mut untrusted,
            prune,
            ..
        } => {
            for d in &answer.record.linked_dirs {
                untrusted.add_dir(d.clone());
            }
            answer.walk = WalkNarrowing::Narrowed {
                untrusted: untrusted.len(),
                pruned: false,
            };
            answer.trusted = Some(std::sync::Arc::new(untrusted));
            answer.token = Some(token);
            answer.prune = prune;
        }
    }
    Ok(answer)
}

/// After a gc committed during this snapshot: checks that everything the trees it wrote refer
/// to is still stored. A tree that gc kept was kept with everything below it, so a reused
/// subtree needs one lookup. Fails with [`Error::ConcurrentGc`] (the snapshot starts over)
/// when gc deleted something this snapshot found in its read view and did not store again.
fn check_still_stored(txn: &redb::WriteTransaction, root: Id, written: &[Id]) -> Result<()> {
    let trees = txn.open_table(TREES)?;
    let blobs = txn.open_table(BLOBS)?;
    if trees.get(root.0)?.is_none() {
        return Err(Error::ConcurrentGc("snapshot"));
    }
    for id in written {
        let tree = match trees.get(id.0)? {
            Some(bytes) => Tree::decode(id, bytes.value())?,
            None => return Err(Error::ConcurrentGc("snapshot")),
        };
        for e in &tree.entries {
            let there = if e.kind == crate::store::tree::Kind::Dir {
                trees.get(e.id.0)?.is_some()
            } else {
                blobs.get(e.id.0)?.is_some()
            };
            if !there {
                return Err(Error::ConcurrentGc("snapshot"));
            }
        }
    }
    Ok(())
}

/// A directory's (device, inode).
fn dir_identity(root: &Path) -> Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    Ok((m.dev(), m.ino()))
}

/// The current time on the workspace's file system clock, when it can be read without writing
/// into the workspace: a probe file in the store directory, if that is on the same file system.
/// Otherwise the system clock minus a margin wide enough for coarse timestamps (2 s, FAT's).
fn fs_clock_ns(store_dir: &Path, root: &Path) -> i64 {
    let same_fs = match (std::fs::metadata(store_dir), std::fs::metadata(root)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev(),
        _ => false,
    };
    if same_fs
        && let Ok(probe) = tempfile::Builder::new()
            .prefix(".clock")
            .tempfile_in(store_dir)
        && let Ok(meta) = probe.as_file().metadata()
    {
        return Stat::from_metadata(&meta).mtime_ns;
    }
    crate::files::now_ns() - 2_000_000_000
}

/// Drops `what` on a thread of its own (here if none can be started), not joined: freeing
/// the walk's entries, one allocation each, is 20-40 ms at a million files, which neither
/// the commit nor the caller need wait for.
fn free_beside<T: Send + 'static>(what: T) {
    // A thread that cannot start drops its closure, and `what` with it, here.
    let _ = std::thread::Builder::new()
        .name("rewind-free".into())
        .spawn(move || drop(what));
}

/// Files read per call of `read_files` (see [`Snapshotter::read`]).
const READ_PART: usize = 32 * 1024;

/// Removes the stat cache of directory `top` and of every directory below it.
fn remove_cache_tree(
    sc: &mut redb::Table<(u64, &'static [u8]), &'static [u8]>,
    counts: &mut crate::store::refcount::Counts<'_>,
    ws: u64,
    top: &[u8],
) -> Result<()> {
    if let Some(old) = sc.remove((ws, top))? {
        counts.row(Some(old.value()), None)?;
    }
    // Below `top`: paths starting with "top/", which sort before "top0" ('0' follows '/').
    let mut lo = top.to_vec();
    lo.push(b'/');
    let mut hi = top.to_vec();
    hi.push(b'0');
    let below: Vec<Vec<u8>> = sc
        .range((ws, lo.as_slice())..(ws, hi.as_slice()))?
        .map(|item| item.map(|(k, _)| k.value().1.to_vec()))
        .collect::<std::result::Result<_, _>>()?;
    for dir in below {
        if let Some(old) = sc.remove((ws, dir.as_slice()))? {
            counts.row(Some(old.value()), None)?;
        }
    }
    Ok(())
}

impl Store {
    /// Takes a snapshot of the workspace at `root` (see [`snapshot`]).
    pub fn snapshot(
        &self,
        root: &Path,
        opts: &SnapshotOptions,
        progress: &dyn Progress,
    ) -> Result<SnapshotOutcome> {
        snapshot(self, root, opts, progress)
    }
}

#[cfg(test)]
mod tests {
    use redb::ReadableTable;

    use super::*;
    use crate::progress::NoProgress;

    /// A warm snapshot of a tree with more directories than one part of the stat cache's join
    /// (its parts run on several threads, each setting its own entries' verdicts) reads exactly
    /// the files that changed, and makes the tree a cold snapshot of the same files makes.
    #[test]
    fn a_warm_snapshot_of_many_directories_reads_what_changed_and_nothing_else() {
        let ws = tempfile::tempdir().unwrap();
        let at = |rel: String| ws.path().join(rel);
        for top in 0..26 {
            for sub in 0..100 {
                let d = at(format!("t{top:02}/s{sub:03}"));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("a.txt"), format!("a {top} {sub}\n")).unwrap();
                std::fs::write(d.join("b.txt"), format!("b {top} {sub}\n")).unwrap();
            }
        }
        // Files written in the tick a snapshot starts are re-read by the next one (racy).
        std::thread::sleep(std::time::Duration::from_millis(50));
        let store_dir = tempfile::tempdir().unwrap();
        let store = Store::open(store_dir.path(), Default::default()).unwrap();
        let opts = SnapshotOptions::default();
        let cold = store
            .snapshot(ws.path(), &opts, &NoProgress)
            .unwrap()
            .report;
        assert_eq!(cold.files_read, 26 * 100 * 2);

        // Edits spread over every part: a changed file every 97 directories, a directory
        // removed, one added, one replaced by a file.
        let mut changed = 0;
        for n in (0..2600).step_by(97) {
            let f = at(format!("t{:02}/s{:03}/a.txt", n / 100, n % 100));
            std::fs::write(f, format!("changed {n}, longer than before\n")).unwrap();
            changed += 1;
        }
        std::fs::remove_dir_all(at("t03/s050".into())).unwrap();
        std::fs::create_dir(at("t25/new".into())).unwrap();
        std::fs::write(at("t25/new/c.txt".into()), "c\n").unwrap();
        std::fs::remove_dir_all(at("t12/s001".into())).unwrap();
        std::fs::write(at("t12/s001".into()), "now a file\n").unwrap();
        changed += 2;
        std::thread::sleep(std::time::Duration::from_millis(50));
        let warm = store
            .snapshot(ws.path(), &opts, &NoProgress)
            .unwrap()
            .report;
        assert_eq!(warm.files_read, changed);

        let fresh_dir = tempfile::tempdir().unwrap();
        let fresh = Store::open(fresh_dir.path(), Default::default()).unwrap();
        let again = fresh
            .snapshot(ws.path(), &opts, &NoProgress)
            .unwrap()
            .report;
        assert_eq!(warm.root, again.root);
        assert_eq!(warm.stats, again.stats);
        // And a third, with nothing changed, reads nothing.
        let still = store
            .snapshot(ws.path(), &opts, &NoProgress)
            .unwrap()
            .report;
        assert_eq!((still.files_read, still.root), (0, warm.root));
    }

    /// The check a commit makes after a concurrent gc finds what that gc deleted under the
    /// trees the snapshot wrote (the trees themselves, or what they name), and passes when all
    /// is there.
    #[test]
    fn the_check_after_a_concurrent_gc_finds_what_it_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("sub")).unwrap();
        std::fs::write(ws.path().join("sub/a.txt"), "one\n").unwrap();
        std::fs::write(ws.path().join("b.txt"), "two\n").unwrap();
        let store = Store::open(dir.path(), Default::default()).unwrap();
        let root = store
            .snapshot(ws.path(), &SnapshotOptions::default(), &NoProgress)
            .unwrap()
            .report
            .root;
        let txn = store.begin_write().unwrap();
        let trees: Vec<Id> = txn
            .open_table(TREES)
            .unwrap()
            .iter()
            .unwrap()
            .map(|item| Id(item.unwrap().0.value()))
            .collect();
        assert_eq!(trees.len(), 2);
        check_still_stored(&txn, root, &trees).unwrap();
        let blob = Id::of(b"one\n");
        txn.open_table(BLOBS).unwrap().remove(blob.0).unwrap();
        assert!(matches!(
            check_still_stored(&txn, root, &trees),
            Err(Error::ConcurrentGc(_))
        ));
        txn.abort().unwrap();
        let txn = store.begin_write().unwrap();
        let sub = trees.iter().copied().find(|&t| t != root).unwrap();
        txn.open_table(TREES).unwrap().remove(sub.0).unwrap();
        assert!(matches!(
            check_still_stored(&txn, root, &[root]),
            Err(Error::ConcurrentGc(_))
        ));
        txn.abort().unwrap();
    }
}
