//! Finding and validating workspaces.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::Store;

/// Canonicalises `path` and checks that it can be a workspace: it exists, is a directory, and
/// is not `/` or the home directory itself (unless `force`), since snapshotting those by
/// accident would copy a whole disk into the store.
pub fn canonical(path: &Path, force: bool) -> Result<PathBuf> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NoWorkspace(path.to_path_buf()),
        _ => Error::io(path, e),
    })?;
    if !meta.is_dir() {
        return Err(Error::NotADirectory(path.to_path_buf()));
    }
    let canon = path.canonicalize().map_err(|e| Error::io(path, e))?;
    if !force {
        let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
        if canon == Path::new("/") || home.as_deref() == Some(canon.as_path()) {
            return Err(Error::DangerousWorkspace(canon));
        }
    }
    Ok(canon)
}

/// The workspace a command without `-C` works on: the nearest registered ancestor of `cwd`
/// (`cwd` included), else `cwd` itself.
pub fn discover(store: &Store, cwd: &Path) -> Result<PathBuf> {
    let cwd = cwd.canonicalize().map_err(|e| Error::io(cwd, e))?;
    let reader = store.reader()?;
    for dir in cwd.ancestors() {
        if reader.workspace(dir)?.is_some() {
            return Ok(dir.to_path_buf());
        }
    }
    Ok(cwd)
}
