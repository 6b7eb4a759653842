//! The two ways an overlay isolates its command, behind one trait: the rest of the overlay
//! code asks the record's backend ([`super::Backend::imp`]) instead of matching on it.
//!
//! * [`Namespace`]: overlayfs in a private user and mount namespace; the overlay's files are
//!   its upper layer, and each state is a snapshot record of its own.
//! * [`Copy`]: a materialized copy of the base snapshot, registered as a workspace of its own.

use std::fs;
use std::path::{Path, PathBuf};

use super::{OverlayRecord, Target, copy, namespace};
use crate::error::{IoContext, Result};
use crate::id::Id;
use crate::progress::Progress;
use crate::store::Store;

/// What differs between the overlay backends.
pub(crate) trait OverlayBackend {
    /// Its name in listings and JSON.
    fn name(&self) -> &'static str;

    /// Lays out a new overlay's directory `dir`; returns how many files were copied.
    fn create(
        &self,
        store: &Store,
        rec: &OverlayRecord,
        dir: &Path,
        workspace: &Path,
        with_ignored: &[String],
        progress: &dyn Progress,
    ) -> Result<u64>;

    /// The overlay's state snapshot (stored) and the ignored paths it wrote.
    fn state(&self, store: &Store, rec: &OverlayRecord) -> Result<(Id, Vec<Vec<u8>>)>;

    /// Whether superseded states are snapshot records this overlay owns (kept for undo, and
    /// removed with it).
    fn owns_states(&self) -> bool;

    /// Readies the overlay for a command; the namespace backend refreshes its pinned layer
    /// and returns the workspace's changed paths at that moment.
    fn begin_run(&self, store: &Store, rec: &OverlayRecord) -> Result<Option<namespace::Pinned>>;

    /// Makes `cmd` run inside the overlay, starting at `rel_cwd` below the workspace.
    fn enter(
        &self,
        cmd: &mut std::process::Command,
        store: &Store,
        rec: &OverlayRecord,
        rel_cwd: &Path,
    ) -> Result<()>;

    /// The directory the overlay's own versions of paths are written below (through
    /// [`crate::files::Beneath`]: the overlay's command may be changing it meanwhile).
    fn writable_root(&self, store: &Store, rec: &OverlayRecord) -> PathBuf;

    /// Sets paths of the overlay to what `targets` say (a reject, or its undo).
    fn set_paths(&self, store: &Store, rec: &OverlayRecord, targets: &[Target]) -> Result<()>;

    /// The directory holding the overlay's files as plain files, if there is one outside the
    /// overlay's own namespace.
    fn files_dir(&self, store: &Store, rec: &OverlayRecord) -> Option<PathBuf>;

    /// Removes what the store holds for the overlay beyond its record (inside `txn`).
    fn forget(
        &self,
        txn: &redb::WriteTransaction,
        store: &Store,
        rec: &OverlayRecord,
    ) -> Result<()>;
}

/// overlayfs in a user and mount namespace.
pub(crate) struct Namespace;

/// A materialized copy.
pub(crate) struct Copy;

impl OverlayBackend for Namespace {
    fn name(&self) -> &'static str {
        "namespace"
    }

    fn create(
        &self,
        _store: &Store,
        _rec: &OverlayRecord,
        dir: &Path,
        _workspace: &Path,
        _with_ignored: &[String],
        _progress: &dyn Progress,
    ) -> Result<u64> {
        for sub in ["upper", "work"] {
            fs::create_dir(dir.join(sub)).at(dir.join(sub))?;
        }
        Ok(0)
    }

    fn state(&self, store: &Store, rec: &OverlayRecord) -> Result<(Id, Vec<Vec<u8>>)> {
        namespace::state(store, rec)
    }

    fn owns_states(&self) -> bool {
        true
    }

    fn begin_run(&self, store: &Store, rec: &OverlayRecord) -> Result<Option<namespace::Pinned>> {
        namespace::refresh_pin(store, rec).map(Some)
    }

    fn enter(
        &self,
        cmd: &mut std::process::Command,
        store: &Store,
        rec: &OverlayRecord,
        rel_cwd: &Path,
    ) -> Result<()> {
        namespace::enter(cmd, store, rec, rel_cwd)
    }

    fn writable_root(&self, store: &Store, rec: &OverlayRecord) -> PathBuf {
        namespace::upper_dir(store, rec)
    }

    fn set_paths(&self, store: &Store, rec: &OverlayRecord, targets: &[Target]) -> Result<()> {
        namespace::set_paths(store, rec, targets)
    }

    fn files_dir(&self, _store: &Store, _rec: &OverlayRecord) -> Option<PathBuf> {
        None
    }

    fn forget(
        &self,
        txn: &redb::WriteTransaction,
        _store: &Store,
        rec: &OverlayRecord,
    ) -> Result<()> {
        for s in rec.states.iter().chain(rec.state.iter()) {
            crate::store::refcount::remove_snapshot(txn, s)?;
        }
        Ok(())
    }
}

impl OverlayBackend for Copy {
    fn name(&self) -> &'static str {
        "copy"
    }

    fn create(
        &self,
        store: &Store,
        rec: &OverlayRecord,
        _dir: &Path,
        workspace: &Path,
        with_ignored: &[String],
        progress: &dyn Progress,
    ) -> Result<u64> {
        copy::materialize(store, rec, workspace, with_ignored, progress)
    }

    fn state(&self, store: &Store, rec: &OverlayRecord) -> Result<(Id, Vec<Vec<u8>>)> {
        Ok((copy::state(store, rec)?, Vec::new()))
    }

    fn owns_states(&self) -> bool {
        false
    }

    fn begin_run(&self, _store: &Store, _rec: &OverlayRecord) -> Result<Option<namespace::Pinned>> {
        Ok(None)
    }

    fn enter(
        &self,
        cmd: &mut std::process::Command,
        store: &Store,
        rec: &OverlayRecord,
        rel_cwd: &Path,
    ) -> Result<()> {
        let dir = copy::tree_dir(store, rec);
        let cwd = dir.join(rel_cwd);
        cmd.current_dir(if cwd.is_dir() { cwd } else { dir });
        Ok(())
    }

    fn writable_root(&self, store: &Store, rec: &OverlayRecord) -> PathBuf {
        copy::tree_dir(store, rec)
    }

    fn set_paths(&self, store: &Store, rec: &OverlayRecord, targets: &[Target]) -> Result<()> {
        copy::set_paths(store, rec, targets)
    }

    fn files_dir(&self, store: &Store, rec: &OverlayRecord) -> Option<PathBuf> {
        Some(copy::tree_dir(store, rec))
    }

    fn forget(
        &self,
        txn: &redb::WriteTransaction,
        store: &Store,
        rec: &OverlayRecord,
    ) -> Result<()> {
        crate::store::unregister_in(txn, &copy::tree_dir(store, rec))
    }
}
