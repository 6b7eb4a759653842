//! The copy backend: the base snapshot materialized into `overlays/<id>/tree`.
//!
//! Each file is taken from the workspace where the stat cache vouches that it still holds the
//! base's content: reflinked where the file system can (tried once, then settled), else copied
//! with `copy_file_range` (what `std::fs::copy` uses on Linux), so an unchanged tree costs no
//! decompression. Anything else (a file changed since, a base given with `--from`) is written
//! from the store. The overlay's state is an ordinary snapshot of that directory, which gets
//! its own stat cache, so repeated diffs only `lstat`.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use super::OverlayRecord;
use crate::error::{Error, IoContext, Result};
use crate::files::{join_rel, split_parent};
use crate::id::Id;
use crate::progress::{NoProgress, Progress};
use crate::scan::StatCache;
use crate::scan::statcache::Stat;
use crate::scan::walk::NEVER_ENTER;
use crate::snapshot::{SnapshotOptions, snapshot};
use crate::store::Store;
use crate::store::tree::Kind;

/// The overlay's directory tree.
pub fn tree_dir(store: &Store, rec: &OverlayRecord) -> PathBuf {
    rec.dir(store).join("tree")
}

/// Materializes the base into the overlay's tree; returns how many files were written.
pub fn materialize(
    store: &Store,
    rec: &OverlayRecord,
    workspace: &Path,
    with_ignored: &[String],
    progress: &dyn Progress,
) -> Result<u64> {
    let dest = tree_dir(store, rec);
    fs::create_dir(&dest).at(&dest)?;
    let reader = store.reader()?;
    let base = reader.snapshot_record(&rec.base)?;
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    reader.walk_tree(&base.root, b"", true, &mut |path, e| {
        if e.kind == Kind::Dir {
            dirs.push(path.to_vec());
        } else {
            files.push((path.to_vec(), e.kind, e.id, e.size));
        }
        Ok(())
    })?;
    progress.start("copy", files.iter().map(|f| f.3).sum(), files.len() as u64);
    // Pre-order: parents come before their children.
    for d in &dirs {
        let p = join_rel(&dest, d);
        fs::create_dir(&p).at(&p)?;
    }
    let cache = match reader.workspace(workspace)? {
        Some(ws) if ws.id() == base.workspace_id => Some(StatCache::load(&reader, ws.id())?),
        _ => None,
    };
    // Whether reflinks work here: tried on the first file, then settled for all, because a
    // failed reflink costs an open, a create and an unlink before the copy.
    let reflinks = AtomicU8::new(REFLINK_UNKNOWN);
    files
        .par_iter()
        .try_for_each(|(rel, kind, id, size)| -> Result<()> {
            progress.advance(*size, 1);
            let to = join_rel(&dest, rel);
            let from = join_rel(workspace, rel);
            let mode = match *kind {
                Kind::Symlink => None,
                _ => vouched(cache.as_ref(), rel, &from, id),
            };
            let Some(mode) = mode else {
                return crate::restore::write_entry(&reader, &to, *kind, id);
            };
            if reflinks.load(Ordering::Relaxed) != REFLINK_NO {
                if reflink_copy::reflink(&from, &to).is_ok() {
                    reflinks.store(REFLINK_YES, Ordering::Relaxed);
                    // A reflink makes a new file with default permissions: take the source's.
                    fs::set_permissions(&to, fs::Permissions::from_mode(mode & 0o7777)).at(&to)?;
                    return Ok(());
                }
                let _ = reflinks.compare_exchange(
                    REFLINK_UNKNOWN,
                    REFLINK_NO,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                let _ = fs::remove_file(&to);
            }
            // copy_file_range, and the source's permissions.
            fs::copy(&from, &to).at(&to)?;
            Ok(())
        })?;
    progress.finish();
    if !with_ignored.is_empty() {
        copy_ignored(workspace, &dest, with_ignored)?;
    }
    Ok(files.len() as u64)
}

const REFLINK_UNKNOWN: u8 = 0;
const REFLINK_YES: u8 = 1;
const REFLINK_NO: u8 = 2;

/// The workspace file's mode if it still holds blob `id`, by the stat cache's word.
fn vouched(cache: Option<&StatCache>, rel: &[u8], from: &Path, id: &Id) -> Option<u32> {
    let meta = fs::symlink_metadata(from).ok().filter(|m| m.is_file())?;
    let (dir, name) = split_parent(rel);
    cache?
        .dir(dir)
        .and_then(|v| v.get(name))
        .filter(|e| e.id() == *id && e.vouches_for(&Stat::from_metadata(&meta)))
        .map(|_| meta.permissions().mode())
}

/// Copies the workspace's paths that match `globs` (ignored build outputs, dependencies) into
/// the overlay, where the base did not put anything.
fn copy_ignored(workspace: &Path, dest: &Path, globs: &[String]) -> Result<()> {
    let mut b = ignore::gitignore::GitignoreBuilder::new(workspace);
    for g in globs {
        b.add_line(None, g).map_err(|e| Error::BadGlob {
            list: crate::error::GlobList::WithIgnored,
            glob: Some(g.clone()),
            why: e.to_string(),
        })?;
    }
    let matcher = b.build().map_err(|e| Error::BadGlob {
        list: crate::error::GlobList::WithIgnored,
        glob: None,
        why: e.to_string(),
    })?;
    let walk = ignore::WalkBuilder::new(workspace)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|e| !NEVER_ENTER.contains(&e.file_name().as_bytes()))
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| Error::Internal(format!("walking the workspace: {e}")))?;
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(workspace) else {
            continue;
        };
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if !matcher
            .matched_path_or_any_parents(entry.path(), is_dir)
            .is_ignore()
        {
            continue;
        }
        let to = dest.join(rel);
        if fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let ft = entry.file_type();
        if is_dir {
            fs::create_dir_all(&to).at(&to)?;
        } else if ft.is_some_and(|t| t.is_symlink()) {
            let target = fs::read_link(entry.path()).at(entry.path())?;
            std::os::unix::fs::symlink(target, &to).at(&to)?;
        } else if ft.is_some_and(|t| t.is_file()) {
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).at(parent)?;
            }
            reflink_copy::reflink_or_copy(entry.path(), &to).at(&to)?;
        }
    }
    Ok(())
}

/// Snapshots the overlay's tree with the base's scan settings.
pub fn state(store: &Store, rec: &OverlayRecord) -> Result<Id> {
    let base = store.reader()?.snapshot_record(&rec.base)?;
    let opts = SnapshotOptions {
        message: format!("overlay {} state", rec.id),
        meta: vec![
            ("label".into(), "overlay-state".into()),
            ("overlay".into(), rec.id.to_string()),
        ],
        ignore_globs: base.scan.ignore_globs.clone(),
        max_file_size: base.scan.max_file_size,
        force: true,
        op_kind: Some("overlay-state".into()),
        ..SnapshotOptions::default()
    };
    let dir = tree_dir(store, rec);
    // A dry run first (its stat cache makes it a walk of lstats): an unchanged overlay keeps
    // its state, rather than adding a snapshot and an operation per look.
    if let Some(current) = rec.state {
        let probe = SnapshotOptions {
            dry_run: true,
            ..opts.clone()
        };
        let now = snapshot(store, &dir, &probe, &NoProgress)?.report.root;
        if store.reader()?.snapshot_record(&current)?.root == now {
            return Ok(current);
        }
    }
    let outcome = snapshot(store, &dir, &opts, &NoProgress)?;
    Ok(outcome.report.id.unwrap_or(rec.base))
}

/// Sets each path to the given content (None: absent) inside the overlay's tree.
pub fn set_paths(store: &Store, rec: &OverlayRecord, targets: &[super::Target]) -> Result<()> {
    let dirs = crate::files::Beneath::open(&tree_dir(store, rec))?;
    let reader = store.reader()?;
    for (path, want) in targets {
        dirs.remove_tree(path)?;
        if let Some(e) = want {
            crate::restore::write_entry_beneath(&reader, &dirs, path, e.kind, &e.id)?;
        }
    }
    Ok(())
}
