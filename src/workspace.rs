//! Finding and validating workspaces.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::Store;

/// Canonicalises `path` and checks that it can be a workspace: it exists, is a directory, and
/// is not `/` or one of `refused` (the CLI passes the home directory; see
/// [`crate::store::StoreOptions::refused_workspaces`]) unless `force`, since snapshotting those
/// by accident would copy a whole disk into the store.
pub fn canonical(path: &Path, force: bool, refused: &[PathBuf]) -> Result<PathBuf> {
    let canon = resolve(path)?;
    if !force
        && (canon == Path::new("/")
            || refused
                .iter()
                .any(|r| r.canonicalize().is_ok_and(|r| r == canon)))
    {
        return Err(Error::DangerousWorkspace(canon));
    }
    Ok(canon)
}

/// [`canonical`] with the store's refused directories, and never the store's own directory or
/// one inside it (`force` or not): a snapshot of it would copy the store into itself, and a
/// restore would replace the store's files. A store inside a workspace is fine (snapshots
/// leave it out).
pub fn for_store(store: &Store, path: &Path, force: bool) -> Result<PathBuf> {
    let canon = canonical(path, force, store.refused_workspaces())?;
    check_not_in_store(store.dir(), &canon)?;
    Ok(canon)
}

/// Fails when the canonical workspace `canon` is the store directory `store_dir` or lies below
/// it (except in the store's own working trees).
pub fn check_not_in_store(store_dir: &Path, canon: &Path) -> Result<()> {
    let Ok(store) = store_dir.canonicalize() else {
        return Ok(());
    };
    // The store's own working trees (an overlay's copy, a run's scratch directory) are
    // snapshotted by the store itself, and hold no file of the store's.
    let own = ["overlays", "scratch"]
        .iter()
        .any(|d| canon.starts_with(store.join(d)));
    if canon.starts_with(&store) && !own {
        return Err(Error::WorkspaceInStore {
            workspace: canon.to_path_buf(),
            store,
        });
    }
    Ok(())
}

/// Canonicalises `path`, checking only that it is an existing directory: for a caller whose
/// snapshot makes the [`canonical`] check with the store's options.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NoWorkspace(path.to_path_buf()),
        _ => Error::io(path, e),
    })?;
    if !meta.is_dir() {
        return Err(Error::NotADirectory(path.to_path_buf()));
    }
    path.canonicalize().map_err(|e| Error::io(path, e))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_refused_directories_need_force() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let refused = [home.clone()];
        let dangerous = |r: Result<PathBuf>| matches!(r, Err(Error::DangerousWorkspace(_)));
        assert!(dangerous(canonical(Path::new("/"), false, &[])));
        assert!(dangerous(canonical(&home, false, &refused)));
        // Reached another way (a `..` through the parent), it is the same directory.
        assert!(dangerous(canonical(&home.join("../home"), false, &refused)));
        assert_eq!(
            canonical(&home, true, &refused).unwrap(),
            home.canonicalize().unwrap()
        );
        // Without the list, the library knows no home directory of its own.
        assert!(canonical(&home, false, &[]).is_ok());
        assert!(canonical(tmp.path(), false, &refused).is_ok());
    }
}
