//! The workspaces that opted in to watching (`rewind watch on|off`), kept in the store
//! directory as `daemon/watch.json` so that the daemon finds them when it starts. Written
//! whole to a temporary file and renamed, so a reader never sees half of it.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::DaemonError;
use crate::error::{IoContext, Result};
use crate::scan::daemon_link::paths;

/// When to take automatic snapshots of a workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoPolicy {
    /// The tree must have been quiet this long after a change (ms).
    pub quiet_ms: u64,
    /// Never two automatic snapshots closer than this (ms).
    pub floor_ms: u64,
}

/// One watched workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchEntry {
    /// Canonical path.
    pub path: String,
    /// Automatic snapshots, if on.
    pub auto: Option<AutoPolicy>,
}

/// The whole list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchList {
    /// Watched workspaces, sorted by path.
    pub workspaces: Vec<WatchEntry>,
}

impl WatchList {
    /// Reads the store's list (empty when there is none).
    pub fn load(store_dir: &Path) -> Result<WatchList> {
        let path = paths(store_dir).watchlist;
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                DaemonError::BadWatchList {
                    path,
                    why: e.to_string(),
                }
                .into()
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(WatchList::default()),
            Err(e) => Err(crate::Error::io(path, e)),
        }
    }

    /// Writes the list (atomically).
    pub fn save(&self, store_dir: &Path) -> Result<()> {
        let p = paths(store_dir);
        make_private_dir(&p.dir)?;
        let tmp = p.dir.join(format!(".watch.json.{}", std::process::id()));
        let bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        std::fs::write(&tmp, bytes).at(&tmp)?;
        std::fs::rename(&tmp, &p.watchlist).at(&p.watchlist)
    }

    /// Watches `root` (replacing its policy). Refuses a path that is not UTF-8.
    pub fn set(&mut self, root: &Path, auto: Option<AutoPolicy>) -> Result<()> {
        let path = root
            .to_str()
            .ok_or_else(|| DaemonError::NonUtf8Path(root.to_path_buf()))?
            .to_string();
        self.workspaces.retain(|w| w.path != path);
        self.workspaces.push(WatchEntry { path, auto });
        self.workspaces.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(())
    }

    /// Stops watching `root`; whether it was watched.
    pub fn remove(&mut self, root: &Path) -> bool {
        let before = self.workspaces.len();
        self.workspaces
            .retain(|w| Some(w.path.as_str()) != root.to_str());
        before != self.workspaces.len()
    }
}

/// Creates `dir` owner-only (or makes it so): the daemon's socket inside it is then reachable
/// by its owner alone, whatever the umask.
pub fn make_private_dir(dir: &PathBuf) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(crate::Error::io(dir, e)),
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).at(dir)
}
