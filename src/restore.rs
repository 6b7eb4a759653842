//! Restoring a workspace (or some of its paths) to a snapshot.
//!
//! The plan is the difference between the live workspace and the target, computed on stored
//! trees: the live state is first snapshotted (so every restore can be undone), then compared
//! with the target. Only differing paths are touched. Rules:
//! - A path is deleted only if the target snapshot looked for it and did not find it: paths the
//!   target's ignore rules exclude, or that it skipped (too large, unreadable), are kept.
//! - Every file is written to a temporary file in its directory and renamed into place, so a
//!   crash leaves each file old or new, never truncated; running the restore again completes it.
//! - Nothing is written through a symlink or outside the workspace: every write goes through
//!   directory descriptors opened below the root without following a symlink
//!   ([`crate::files::Beneath`]), so another process swapping a directory for a symlink meanwhile
//!   cannot redirect it; a symlink standing where the target has a directory is replaced.

use std::collections::HashMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;

use crate::compare::Trees;
use crate::diff::tree::{ChangeStatus, FileChange, PathFilter, compare_with_dirs};
use crate::error::{Error, IoContext, Result};
use crate::files::RelPath;
use crate::files::{Beneath, DirRemoval, Lstats, lstat_beneath, split_parent, write_atomic};
use crate::id::Id;
use crate::progress::{NoProgress, Progress};
use crate::scan::walk::IGNORE_FILE;
use crate::snapshot::{SnapshotOptions, snapshot};
use crate::store::oplog::{self, OpRecord};
use crate::store::snapshot::SnapshotRecord;
use crate::store::tree::Kind;
use crate::store::{Reader, Store};

/// How to restore.
#[derive(Clone, Debug, Default)]
pub struct RestoreOptions {
    /// Only these paths (and what is below them); empty for the whole workspace.
    pub paths: Vec<RelPath>,
    /// Compute and return the plan, change nothing.
    pub dry_run: bool,
    /// Allow `/` or the home directory as the workspace.
    pub force: bool,
    /// Allow a snapshot of another workspace to replace this one's files.
    pub from_workspace: bool,
}

/// What a restore did (or, for a dry run, would do).
#[derive(Clone, Debug, Default)]
pub struct RestoreReport {
    /// The workspace.
    pub workspace: PathBuf,
    /// The snapshot restored.
    pub target: Id,
    /// The snapshot of the live state taken first (None for a dry run).
    pub before: Option<Id>,
    /// The workspace's state afterwards (the target itself for a whole-workspace restore).
    pub after: Option<Id>,
    /// The changes, from the live state to the target, directories included.
    pub plan: Vec<FileChange>,
    /// Paths the target did not look for (ignored or skipped then), left alone.
    pub kept: Vec<Vec<u8>>,
    /// Files and symlinks written.
    pub written: u64,
    /// Of `written`, the symlinks.
    pub symlinks_written: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Entries removed.
    pub deleted: u64,
    /// The operation recorded.
    pub op: Option<u64>,
    /// Wall time.
    pub seconds: f64,
}

/// How an operation that restores should be recorded.
#[derive(Clone, Debug)]
pub struct OpInfo {
    /// The kind ("restore", "undo", "redo", ...).
    pub kind: String,
    /// The operation it reverses, for undo and redo.
    pub reverses: Option<u64>,
    /// Whether `undo` may pick it. False for the rollback of a failed apply, which only puts
    /// back the state before an operation that never happened.
    pub undoable: bool,
}

impl Default for OpInfo {
    fn default() -> Self {
        OpInfo {
            kind: "restore".into(),
            reverses: None,
            undoable: true,
        }
    }
}

/// Restores the workspace at `root` to snapshot `target`.
pub fn restore(
    store: &Store,
    root: &Path,
    target: Id,
    opts: &RestoreOptions,
    op: &OpInfo,
    progress: &dyn Progress,
) -> Result<RestoreReport> {
    let t0 = Instant::now();
    let root = crate::workspace::for_store(store, root, opts.force)?;
    let target_rec = store.reader()?.snapshot_record(&target)?;
    check_origin(store, &root, target, &target_rec, opts)?;
    check_paths(&store.reader()?, &root, &target_rec, &opts.paths)?;

    // 1. The live state, snapshotted with the target's scan settings.
    let safety = snapshot(
        store,
        &root,
        &side_snapshot(&target_rec, target, op, "before", "pre", opts.dry_run),
        &NoProgress,
    )?;
    let reader = store.reader()?;

    // 2. The plan.
    let (plan, kept) = plan_restore(&reader, &safety, &target_rec, &opts.paths)?;
    let mut report = RestoreReport {
        workspace: root.clone(),
        target,
        before: safety.report.id,
        plan,
        kept,
        ..RestoreReport::default()
    };
    let unsaved = unsaved_paths(&root, &report.plan);
    if !unsaved.is_empty() && !opts.force {
        return Err(Error::WouldOverwriteIgnored { paths: unsaved });
    }
    if opts.dry_run {
        report.seconds = t0.elapsed().as_secs_f64();
        return Ok(report);
    }
    // What a killed restore left behind; the live state is safely recorded by now.
    crate::snapshot::remove_stale_temps(&root, &safety.stale_temps)?;

    // 3. Carry it out. If it fails part way, the operation is still recorded (with no after
    // state) so that `undo` puts back the state before it.
    let done = match execute(&reader, &root, &report.plan, progress) {
        Ok(done) => done,
        Err(e) => return Err(record_failure(store, &root, target, report.before, op, e)),
    };
    report.written = done.written;
    report.symlinks_written = done.symlinks;
    report.bytes_written = done.bytes;
    report.deleted = done.deleted;
    report.kept.extend(done.kept);
    drop(reader);

    // 4. Record the after state and the operation.
    let after = if opts.paths.is_empty() {
        target
    } else {
        let after = snapshot(
            store,
            &root,
            &side_snapshot(&target_rec, target, op, "after", "post", false),
            &NoProgress,
        )?;
        after.report.id.unwrap_or(target)
    };
    // The target may have been forgotten while the files were written (a `forget` in another
    // process): the history must not name a snapshot that is gone, so the state the workspace
    // is now in is recorded as a snapshot of its own.
    let mut after = after;
    let mut tries = 0;
    let recorded = loop {
        if let Some(id) = record_restore(store, &root, opts, op, report.before, after)? {
            break id;
        }
        tries += 1;
        if tries > 3 {
            return Err(Error::Missing {
                kind: "snapshot",
                id: after.hex(),
            });
        }
        let now = snapshot(
            store,
            &root,
            &side_snapshot(&target_rec, target, op, "after", "post", false),
            &NoProgress,
        )?;
        after = now.report.id.unwrap_or(after);
    };
    report.after = Some(after);
    report.op = Some(recorded);
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// The options of the snapshot a restore takes before (`when` "before", `label` "pre") or,
/// for a partial restore, after it: with the target's scan settings.
fn side_snapshot(
    target_rec: &SnapshotRecord,
    target: Id,
    op: &OpInfo,
    when: &str,
    label: &str,
    dry_run: bool,
) -> SnapshotOptions {
    let preposition = if when == "before" { "to" } else { "of" };
    SnapshotOptions {
        message: format!("{when} {} {preposition} {}", op.kind, target.short()),
        meta: vec![("label".into(), format!("{label}-{}", op.kind))],
        ignore_globs: target_rec.scan.ignore_globs.clone(),
        max_file_size: target_rec.scan.max_file_size,
        dry_run,
        force: true,
        op_kind: Some(format!("{label}-{}", op.kind)),
        ..SnapshotOptions::default()
    }
}

/// The changes from the live state (`safety`) to the target, limited to `paths`; and the
/// paths kept because the target's ignore rules exclude them (with the directories holding
/// them), which the restore leaves alone.
fn plan_restore(
    reader: &Reader,
    safety: &crate::snapshot::SnapshotOutcome,
    target_rec: &SnapshotRecord,
    paths: &[RelPath],
) -> Result<(Vec<FileChange>, Vec<Vec<u8>>)> {
    let filter = PathFilter::new(paths);
    let trees = Trees {
        reader,
        pending: &safety.pending_trees,
    };
    let mut plan = compare_with_dirs(
        &trees,
        Some(&safety.report.root),
        Some(&target_rec.root),
        &filter,
    )?;
    let mut kept = Vec::new();
    let mut ignores = SnapshotIgnores::new(reader, target_rec)?;
    let mut keep_prefixes: Vec<Vec<u8>> = Vec::new();
    plan.retain(|c| {
        if c.status != ChangeStatus::Deleted {
            return true;
        }
        let is_dir = c.old.is_some_and(|o| o.kind == Kind::Dir);
        if keep_prefixes
            .iter()
            .any(|p| crate::diff::tree::is_under(&c.path, p))
            || ignores.excluded(&c.path, is_dir)
        {
            kept.push(c.path.clone());
            if is_dir {
                keep_prefixes.push(c.path.clone());
            }
            return false;
        }
        true
    });
    // A directory holding a kept path is kept too.
    plan.retain(|c| {
        let dir_with_kept = c.status == ChangeStatus::Deleted
            && c.old.is_some_and(|o| o.kind == Kind::Dir)
            && kept.iter().any(|k| crate::diff::tree::is_under(k, &c.path));
        !dir_with_kept
    });
    Ok((plan, kept))
}

/// The paths the plan adds where the workspace holds something its snapshot did not look at
/// (an ignored file): overwriting one would lose it for good, since no snapshot has it.
/// Entries the plan deletes first were in the live snapshot; anything else standing where the
/// plan adds is not.
fn unsaved_paths(root: &Path, plan: &[FileChange]) -> Vec<String> {
    let replaced: rustc_hash::FxHashSet<&[u8]> = plan
        .iter()
        .filter(|c| c.status == ChangeStatus::Deleted)
        .map(|c| c.path.as_slice())
        .collect();
    let disk = Lstats::new(root);
    plan.iter()
        .filter(|c| c.status == ChangeStatus::Added && !replaced.contains(c.path.as_slice()))
        .filter(|c| match disk.get(&c.path) {
            Some(m) => !(m.is_dir() && c.new.is_some_and(|n| n.kind == Kind::Dir)),
            None => false,
        })
        .map(|c| crate::files::display(&c.path))
        .collect()
}

/// Records a restore that failed part way (with no after state, so that `undo` puts back the
/// state before it) and returns its error, naming the operation where it was interrupted.
fn record_failure(
    store: &Store,
    root: &Path,
    target: Id,
    before: Option<Id>,
    op: &OpInfo,
    mut e: Error,
) -> Error {
    let state = match &mut e {
        Error::RestoreInterrupted {
            kind,
            target: t,
            before: b,
            ..
        } => {
            *kind = op.kind.clone();
            *t = target.short();
            *b = before.map(|b| b.short());
            "interrupted"
        }
        _ => "failed",
    };
    let failed = OpRecord::new(
        store,
        format!("{} ({state})", op.kind),
        root.as_os_str().as_bytes().to_vec(),
        before,
        None,
    );
    match oplog::record_alone(
        store,
        OpRecord {
            reverses: op.reverses,
            changed_workspace: op.undoable,
            ..failed
        },
    ) {
        Ok(_) => e,
        Err(record) => record,
    }
}

/// Records the finished restore: settles an interrupted apply or revert it completes, moves
/// the workspace's history to `after` (a whole restore), and logs the operation. `None`, with
/// nothing recorded, when `after` is no longer in the store (forgotten meanwhile): checked
/// under the write lock, so no history entry can name a snapshot that is gone.
fn record_restore(
    store: &Store,
    root: &Path,
    opts: &RestoreOptions,
    op: &OpInfo,
    before: Option<Id>,
    after: Id,
) -> Result<Option<u64>> {
    let root_bytes = root.as_os_str().as_bytes();
    // An interrupted apply or revert is settled once every path it was writing has been set to
    // a chosen state.
    let settles = match crate::store::pending::get(store, root_bytes)? {
        None => false,
        Some(p) => {
            opts.paths.is_empty()
                || p.writes
                    .iter()
                    .map(|w| &w.0)
                    .chain(p.removes.iter())
                    .all(|w| opts.paths.iter().any(|q| crate::diff::tree::is_under(w, q)))
        }
    };
    let txn = store.begin_write()?;
    if redb::ReadableTable::get(&txn.open_table(crate::store::tables::SNAPSHOTS)?, after.0)?
        .is_none()
    {
        txn.abort()?;
        return Ok(None);
    }
    if settles {
        crate::store::pending::clear_in(&txn, root_bytes)?;
    }
    if opts.paths.is_empty() {
        // The workspace's latest snapshot is now the target.
        let ws = crate::store::register_in(&txn, root)?;
        crate::store::append_log(&txn, ws, after)?;
    }
    let id = oplog::record(
        &txn,
        OpRecord {
            reverses: op.reverses,
            changed_workspace: op.undoable,
            ..OpRecord::new(
                store,
                op.kind.clone(),
                root_bytes.to_vec(),
                before,
                Some(after),
            )
        },
    )?;
    txn.commit()?;
    Ok(Some(id))
}

/// Refuses a snapshot of another workspace unless asked explicitly: tags are store-wide, so
/// `rewind restore base` in the wrong directory would otherwise replace it with another
/// project. An empty directory has nothing to lose and may receive any snapshot.
fn check_origin(
    store: &Store,
    root: &Path,
    target: Id,
    rec: &SnapshotRecord,
    opts: &RestoreOptions,
) -> Result<()> {
    if opts.from_workspace || opts.force || rec.workspace == root.as_os_str().as_bytes() {
        return Ok(());
    }
    let empty = fs::read_dir(root).at(root)?.next().is_none();
    if empty {
        return Ok(());
    }
    let here = if store.reader()?.workspace(root)?.is_some() {
        format!("workspace {}", root.display())
    } else {
        format!(
            "{}, which is not a rewind workspace and is not empty",
            root.display()
        )
    };
    Err(Error::ForeignSnapshot {
        snapshot: target.short(),
        owner: crate::files::display(&rec.workspace),
        here,
    })
}

/// Git's pathspec rule: every path given must name something in the target or in the
/// workspace, so a typo is an error instead of a restore that silently does nothing.
fn check_paths(
    reader: &Reader,
    root: &Path,
    rec: &SnapshotRecord,
    paths: &[RelPath],
) -> Result<()> {
    let mut unmatched = Vec::new();
    for p in paths {
        if p.is_empty() {
            continue;
        }
        if reader.lookup(&rec.root, p)?.is_none() && lstat_beneath(root, p).is_none() {
            unmatched.push(crate::files::display(p));
        }
    }
    if unmatched.is_empty() {
        return Ok(());
    }
    Err(Error::UnmatchedPaths { paths: unmatched })
}

/// The target snapshot's view of what it did not look for: its ignore files (read from its own
/// trees), its `--ignore` globs, and the paths it skipped.
pub(crate) struct SnapshotIgnores<'a> {
    reader: &'a Reader,
    root: Id,
    globs: Option<Gitignore>,
    skipped: Vec<Vec<u8>>,
    per_dir: HashMap<Vec<u8>, Option<Gitignore>>,
}

impl<'a> SnapshotIgnores<'a> {
    pub(crate) fn new(reader: &'a Reader, rec: &SnapshotRecord) -> Result<Self> {
        let globs = if rec.scan.ignore_globs.is_empty() {
            None
        } else {
            let mut b = GitignoreBuilder::new("/");
            for g in &rec.scan.ignore_globs {
                b.add_line(None, g).map_err(|e| Error::BadGlob {
                    list: crate::error::GlobList::Recorded,
                    glob: Some(g.clone()),
                    why: e.to_string(),
                })?;
            }
            b.build().ok()
        };
        // A walk error without a path (recorded with an empty one) must not exclude everything.
        let skipped = rec
            .skipped
            .iter()
            .filter(|s| s.reason.excluded() && !s.path.is_empty())
            .map(|s| s.path.clone())
            .collect();
        Ok(SnapshotIgnores {
            reader,
            root: rec.root,
            globs,
            skipped,
            per_dir: HashMap::new(),
        })
    }

    /// The matcher built from the ignore files a directory of the snapshot holds.
    fn dir_matcher(&mut self, dir: &[u8]) -> Option<Gitignore> {
        if let Some(m) = self.per_dir.get(dir) {
            return m.clone();
        }
        let mut matcher = None;
        if let Ok(Some(entry)) = self.reader.lookup(&self.root, dir)
            && entry.kind == Kind::Dir
            && let Ok(tree) = self.reader.tree(&entry.id)
        {
            let base = PathBuf::from("/").join(std::ffi::OsStr::from_bytes(dir));
            let mut b = GitignoreBuilder::new(&base);
            let mut any = false;
            for name in [&b".gitignore"[..], b".ignore", IGNORE_FILE.as_bytes()] {
                if let Some(e) = tree.get(name)
                    && e.kind.is_blob()
                    && let Ok(bytes) = self.reader.read_blob(&e.id)
                {
                    for line in String::from_utf8_lossy(&bytes).lines() {
                        let _ = b.add_line(None, line);
                        any = true;
                    }
                }
            }
            if any {
                matcher = b.build().ok();
            }
        }
        self.per_dir.insert(dir.to_vec(), matcher.clone());
        matcher
    }

    /// Whether the snapshot would not have looked at `path`.
    pub(crate) fn excluded(&mut self, path: &[u8], is_dir: bool) -> bool {
        if self
            .skipped
            .iter()
            .any(|s| crate::diff::tree::is_under(path, s))
        {
            return true;
        }
        let abs = PathBuf::from("/").join(std::ffi::OsStr::from_bytes(path));
        if let Some(g) = &self.globs
            && g.matched_path_or_any_parents(&abs, is_dir).is_ignore()
        {
            return true;
        }
        // Deeper ignore files take precedence, as in git: check from the nearest directory up,
        // for the path and each of its ancestors.
        let mut target: &[u8] = path;
        let mut target_is_dir = is_dir;
        loop {
            let (parent, _) = split_parent(target);
            let mut dir = parent;
            loop {
                if let Some(m) = self.dir_matcher(dir) {
                    let abs = PathBuf::from("/").join(std::ffi::OsStr::from_bytes(target));
                    match m.matched(&abs, target_is_dir) {
                        Match::Ignore(_) => return true,
                        Match::Whitelist(_) => break,
                        Match::None => {}
                    }
                }
                if dir.is_empty() {
                    break;
                }
                dir = split_parent(dir).0;
            }
            if parent.is_empty() {
                return false;
            }
            target = parent;
            target_is_dir = true;
        }
    }
}

#[derive(Default)]
struct Done {
    written: u64,
    symlinks: u64,
    bytes: u64,
    deleted: u64,
    /// Directories left in place because they still hold files no snapshot looked at.
    kept: Vec<Vec<u8>>,
}

/// Carries out a plan: deletions (deepest first), directories (parents first), then files and
/// symlinks in parallel, each through a temporary file renamed into place.
fn execute(
    reader: &Reader,
    root: &Path,
    plan: &[FileChange],
    progress: &dyn Progress,
) -> Result<Done> {
    let mut done = Done::default();
    let dirs = Beneath::open(root)?;
    // Deletions of files and symlinks, and of what stands where another kind must go.
    for c in plan {
        let replaces_kind = match (c.old, c.new) {
            (Some(o), Some(n)) => (o.kind == Kind::Dir) != (n.kind == Kind::Dir),
            _ => false,
        };
        if ((c.status == ChangeStatus::Deleted && c.old.is_some_and(|o| o.kind != Kind::Dir))
            || replaces_kind)
            && dirs.remove_file(&c.path)?
        {
            done.deleted += 1;
        }
    }
    let mut dirs_gone: Vec<&FileChange> = plan
        .iter()
        .filter(|c| c.status == ChangeStatus::Deleted && c.old.is_some_and(|o| o.kind == Kind::Dir))
        .collect();
    dirs_gone.sort_by(|a, b| b.path.cmp(&a.path));
    for c in dirs_gone {
        match dirs.remove_dir(&c.path)? {
            DirRemoval::Removed => done.deleted += 1,
            DirRemoval::Missing => {}
            // It still holds ignored files (build outputs, a nested .git): keep it, as git does.
            DirRemoval::NotEmpty => done.kept.push(c.path.clone()),
        }
    }
    for c in plan
        .iter()
        .filter(|c| c.status == ChangeStatus::Added && c.new.is_some_and(|n| n.kind == Kind::Dir))
    {
        dirs.make_dir(&c.path)?;
    }
    let files: Vec<&FileChange> = plan
        .iter()
        .filter(|c| c.new.is_some_and(|n| n.kind != Kind::Dir))
        .collect();
    let total: u64 = files.iter().filter_map(|c| c.new.map(|n| n.size)).sum();
    progress.start("restore", total, files.len() as u64);
    let written = AtomicU64::new(0);
    let bytes = AtomicU64::new(0);
    let interrupt_after = crate::interrupt::test_interrupt_after();
    let stopped = || Error::RestoreInterrupted {
        kind: String::new(),
        target: String::new(),
        before: None,
        written: written.load(Ordering::Relaxed),
        total: files.len() as u64,
    };
    let result = files.par_iter().try_for_each(|c| -> Result<()> {
        // Between files: what is written stays written, the rest is untouched.
        if crate::interrupt::requested().is_some() {
            return Err(stopped());
        }
        let Some(new) = c.new else { return Ok(()) };
        if c.status == ChangeStatus::ModeChanged {
            dirs.set_exec(&c.path, new.kind == Kind::Executable)?;
        } else {
            write_entry_beneath(reader, &dirs, &c.path, new.kind, &new.id)?;
            bytes.fetch_add(new.size, Ordering::Relaxed);
        }
        let n = written.fetch_add(1, Ordering::Relaxed) + 1;
        if interrupt_after == Some(n) {
            // SAFETY: raise has no preconditions; the handler only sets a flag.
            unsafe { libc::raise(libc::SIGINT) };
        }
        progress.advance(new.size, 1);
        Ok(())
    });
    progress.finish();
    if let Err(e) = result {
        // Report the count once every worker has stopped.
        return Err(match e {
            Error::RestoreInterrupted { .. } => stopped(),
            other => other,
        });
    }
    done.written = written.into_inner();
    done.bytes = bytes.into_inner();
    done.symlinks = files
        .iter()
        .filter(|c| {
            c.status != ChangeStatus::ModeChanged && c.new.is_some_and(|n| n.kind == Kind::Symlink)
        })
        .count() as u64;
    Ok(done)
}

/// Writes a stored blob as a file or symlink at `p`, a path in a directory of the store's own
/// (a workspace is written with [`write_entry_beneath`]).
pub(crate) fn write_entry(reader: &Reader, p: &Path, kind: Kind, id: &Id) -> Result<()> {
    let mut blob = reader.blob_reader(id)?;
    write_atomic(p, kind, &mut blob)
}

/// Writes a stored blob as a file or symlink at `rel` below `dirs`' root.
pub(crate) fn write_entry_beneath(
    reader: &Reader,
    dirs: &Beneath,
    rel: &[u8],
    kind: Kind,
    id: &Id,
) -> Result<()> {
    let mut blob = reader.blob_reader(id)?;
    dirs.write(rel, kind, &mut blob)
}
