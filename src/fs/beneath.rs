//! Checked paths below a workspace root: every parent a real directory, never a symlink, so a
//! write can never land outside the workspace.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{join_rel, split_parent};
use crate::error::{Error, IoContext, Result};

/// The lstat of `rel` below `root` if every parent is a real directory (a symlinked parent
/// means the entry is not really there: the restore replaces that parent).
pub fn lstat_beneath(root: &Path, rel: &[u8]) -> Option<fs::Metadata> {
    let (parent, _) = split_parent(rel);
    let mut dir = root.to_path_buf();
    if !parent.is_empty() {
        for comp in parent.split(|&b| b == b'/') {
            dir.push(std::ffi::OsStr::from_bytes(comp));
            if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                return None;
            }
        }
    }
    fs::symlink_metadata(join_rel(root, rel)).ok()
}

/// The absolute path of `rel`, after checking that every parent below the root is a real
/// directory (never a symlink), creating missing ones.
pub fn checked_path(root: &Path, rel: &[u8]) -> Result<PathBuf> {
    SafeDirs::new(root).path(rel)
}

/// Checks paths below a root for [`checked_path`], remembering the directories it has already
/// verified or created: a restore of a large tree would otherwise lstat every parent of every
/// file (300,000 calls for the Linux tree). Only valid while nothing else removes directories.
pub struct SafeDirs<'a> {
    root: &'a Path,
    verified: std::sync::Mutex<rustc_hash::FxHashSet<Vec<u8>>>,
}

impl<'a> SafeDirs<'a> {
    /// Checks paths below `root`; nothing verified yet.
    pub fn new(root: &'a Path) -> Self {
        SafeDirs {
            root,
            verified: std::sync::Mutex::new(rustc_hash::FxHashSet::default()),
        }
    }

    /// Records that `rel` is a real directory (one this restore just created).
    pub fn mark(&self, rel: &[u8]) {
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(rel.to_vec());
    }

    /// Makes `rel` a real directory (replacing a file or symlink standing there), its parents
    /// checked, and remembers it as verified.
    pub fn make_dir(&self, rel: &[u8]) -> Result<PathBuf> {
        let p = self.path(rel)?;
        match fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&p).at(&p)?;
                fs::create_dir(&p).at(&p)?;
            }
            Err(_) => fs::create_dir(&p).at(&p)?,
        }
        self.mark(rel);
        Ok(p)
    }

    /// The absolute path of `rel`, its parents checked (or created) as real directories.
    pub fn path(&self, rel: &[u8]) -> Result<PathBuf> {
        if rel.is_empty() || super::RelPath::check(rel).is_err() {
            return Err(Error::Invalid(format!(
                "refusing to restore the unsafe path '{}'",
                super::display(rel)
            )));
        }
        let (parent, _) = split_parent(rel);
        if parent.is_empty()
            || self
                .verified
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(parent)
        {
            return Ok(join_rel(self.root, rel));
        }
        let mut end = 0;
        for comp in parent.split(|&b| b == b'/') {
            end += comp.len();
            let prefix = &parent[..end];
            end += 1;
            if self
                .verified
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(prefix)
            {
                continue;
            }
            let dir = join_rel(self.root, prefix);
            match fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(Error::Invalid(format!(
                        "refusing to write below {}: it is not a directory (a symlink?) in the workspace",
                        dir.display()
                    )));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(&dir) {
                    Ok(()) => {}
                    // Another worker created it meanwhile; check what stands there now.
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                            return Err(Error::Invalid(format!(
                                "refusing to write below {}: not a directory",
                                dir.display()
                            )));
                        }
                    }
                    Err(e) => return Err(Error::io(&dir, e)),
                },
                Err(e) => return Err(Error::io(&dir, e)),
            }
            self.verified
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(prefix.to_vec());
        }
        Ok(join_rel(self.root, rel))
    }
}
