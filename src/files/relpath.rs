//! [`RelPath`]: the one place that says what a tree entry name and a workspace-relative path
//! may be. Tree decoding, restore's writer, patch paths and every path an embedder passes in
//! (restore, revert, diff filters, overlay accept) are checked here, so a path that could
//! climb out of the workspace (`..`, absolute) or name nothing (`a//b` stored in a tree) is
//! refused the same way everywhere.
//!
//! ```
//! use rewind::files::RelPath;
//! use rewind::error::BadPath;
//!
//! // What a person types is normalised: `.`, empty components and a trailing `/` drop out.
//! let p = RelPath::normalize(b"./src//main.rs").unwrap();
//! assert_eq!(p.as_bytes(), b"src/main.rs");
//! assert!(RelPath::normalize(b".").unwrap().is_root());
//! // What could leave the workspace never becomes a RelPath.
//! assert_eq!(RelPath::normalize(b"../etc/passwd"), Err(BadPath::DotDot));
//! assert_eq!(RelPath::normalize(b"/etc/passwd"), Err(BadPath::Absolute));
//! // Stored paths are already normal: `new` refuses what `normalize` would rewrite.
//! assert_eq!(RelPath::new(b"src//main.rs".to_vec()), Err(BadPath::EmptyComponent));
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::error::BadPath;
use crate::error::{Error, Result};

/// Checks one tree entry name: not empty, not `.` or `..`, no `/`, no NUL.
pub fn check_name(name: &[u8]) -> Result<(), BadPath> {
    match name {
        b"" => Err(BadPath::Empty),
        b"." => Err(BadPath::Dot),
        b".." => Err(BadPath::DotDot),
        _ => match name.iter().find(|&&b| b == b'/' || b == 0) {
            Some(b'/') => Err(BadPath::Slash),
            Some(_) => Err(BadPath::Nul),
            None => Ok(()),
        },
    }
}

/// A workspace-relative path: raw bytes, `/`-separated, every component a valid tree entry
/// name ([`check_name`]); empty for the workspace root. The form trees, the op log and every
/// report store paths in; it dereferences to those bytes.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    /// The workspace root (the empty path).
    pub fn root() -> RelPath {
        RelPath(Vec::new())
    }

    /// A path that is already in stored form: refuses empty or `.` components as well as
    /// `..`, a leading `/` and NUL. Empty bytes are the root.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<RelPath, BadPath> {
        let bytes = bytes.into();
        Self::check(&bytes)?;
        Ok(RelPath(bytes))
    }

    /// A path the library built from decoded trees or a walk, whose names were checked when
    /// the tree was decoded (or come from the kernel's readdir): no second scan on hot paths.
    pub(crate) fn trusted(bytes: Vec<u8>) -> RelPath {
        debug_assert_eq!(
            Self::check(&bytes),
            Ok(()),
            "{:?}",
            String::from_utf8_lossy(&bytes)
        );
        RelPath(bytes)
    }

    /// A path as a person writes it: `.` and empty components (`./x`, `x/`, `a//b`) are
    /// dropped; `..`, a leading `/` and NUL are refused. `.` alone is the root.
    pub fn normalize(bytes: &[u8]) -> Result<RelPath, BadPath> {
        if bytes.first() == Some(&b'/') {
            return Err(BadPath::Absolute);
        }
        let mut out = Vec::with_capacity(bytes.len());
        for c in bytes.split(|&b| b == b'/') {
            match check_name(c) {
                Ok(()) => {
                    if !out.is_empty() {
                        out.push(b'/');
                    }
                    out.extend_from_slice(c);
                }
                Err(BadPath::Empty | BadPath::Dot) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(RelPath(out))
    }

    /// [`RelPath::normalize`], its refusal as an [`Error::BadPath`] naming the path: for
    /// paths that come from outside (a request, a command line).
    pub fn parse(bytes: &[u8]) -> Result<RelPath> {
        Self::normalize(bytes).map_err(|why| Error::BadPath {
            path: super::display(bytes),
            why,
        })
    }

    /// A relative filesystem path, normalised as [`RelPath::parse`] does.
    pub fn from_path(path: &Path) -> Result<RelPath> {
        use std::os::unix::ffi::OsStrExt;
        Self::parse(path.as_os_str().as_bytes())
    }

    /// The rule [`RelPath::new`] enforces, for hot paths that hold plain bytes (restore's writer
    /// checks every path it writes): empty is the root, else every component a valid name.
    pub fn check(bytes: &[u8]) -> Result<(), BadPath> {
        if bytes.is_empty() {
            return Ok(());
        }
        if bytes[0] == b'/' {
            return Err(BadPath::Absolute);
        }
        for c in bytes.split(|&b| b == b'/') {
            check_name(c).map_err(|e| match e {
                BadPath::Empty => BadPath::EmptyComponent,
                e => e,
            })?;
        }
        Ok(())
    }

    /// The bytes, `/`-separated.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes, `/`-separated.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// Whether this is the workspace root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The names from the root down (none for the root).
    pub fn components(&self) -> impl Iterator<Item = &[u8]> {
        self.0.split(|&b| b == b'/').filter(|c| !c.is_empty())
    }

    /// This path with `name` (checked by [`check_name`]) below it.
    pub fn join(&self, name: &[u8]) -> Result<RelPath, BadPath> {
        check_name(name)?;
        Ok(RelPath(super::child_path(&self.0, name)))
    }

    /// Whether this path equals `prefix` or lies below it (the root is above everything).
    pub fn is_under(&self, prefix: &RelPath) -> bool {
        super::is_under(&self.0, &prefix.0)
    }

    /// Where this path is below `root` on disk (no check of what stands there: see
    /// [`super::Beneath`] before writing).
    pub fn to_path(&self, root: &Path) -> PathBuf {
        super::join_rel(root, &self.0)
    }
}

impl std::ops::Deref for RelPath {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for RelPath {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl From<RelPath> for Vec<u8> {
    fn from(p: RelPath) -> Vec<u8> {
        p.0
    }
}

impl TryFrom<&str> for RelPath {
    type Error = Error;
    /// [`RelPath::parse`].
    fn try_from(s: &str) -> Result<RelPath> {
        RelPath::parse(s.as_bytes())
    }
}

impl std::str::FromStr for RelPath {
    type Err = Error;
    fn from_str(s: &str) -> Result<RelPath> {
        RelPath::parse(s.as_bytes())
    }
}

impl fmt::Display for RelPath {
    /// The path, lossy for non-UTF-8 bytes; the root shows as `.`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str(".")
        } else {
            f.write_str(&String::from_utf8_lossy(&self.0))
        }
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", String::from_utf8_lossy(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(check_name(b"a.txt"), Ok(()));
        assert_eq!(check_name(b"..."), Ok(()));
        assert_eq!(check_name(b""), Err(BadPath::Empty));
        assert_eq!(check_name(b"."), Err(BadPath::Dot));
        assert_eq!(check_name(b".."), Err(BadPath::DotDot));
        assert_eq!(check_name(b"a/b"), Err(BadPath::Slash));
        assert_eq!(check_name(b"a\0b"), Err(BadPath::Nul));
    }

    #[test]
    fn stored_paths_are_strict() {
        assert!(RelPath::new(Vec::new()).unwrap().is_root());
        assert_eq!(RelPath::new(b"a/b".to_vec()).unwrap().as_bytes(), b"a/b");
        for (bad, why) in [
            (&b"/a"[..], BadPath::Absolute),
            (b"a/", BadPath::EmptyComponent),
            (b"a//b", BadPath::EmptyComponent),
            (b"./a", BadPath::Dot),
            (b"a/../b", BadPath::DotDot),
            (b"a/\0", BadPath::Nul),
        ] {
            assert_eq!(RelPath::new(bad.to_vec()), Err(why), "{bad:?}");
        }
    }

    #[test]
    fn typed_paths_are_normalised() {
        for (raw, want) in [
            (&b"./a"[..], &b"a"[..]),
            (b"a/", b"a"),
            (b"a//./b/", b"a/b"),
            (b".", b""),
            (b"", b""),
        ] {
            assert_eq!(RelPath::normalize(raw).unwrap().as_bytes(), want, "{raw:?}");
        }
        assert_eq!(RelPath::normalize(b"a/.."), Err(BadPath::DotDot));
        assert_eq!(RelPath::normalize(b"//a"), Err(BadPath::Absolute));
        let e = RelPath::parse(b"../x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid path '../x': paths with '..' are refused"
        );
    }

    #[test]
    fn join_and_under() {
        let a = RelPath::normalize(b"a").unwrap();
        let ab = a.join(b"b").unwrap();
        assert_eq!(ab.as_bytes(), b"a/b");
        assert!(ab.is_under(&a) && ab.is_under(&RelPath::root()) && !a.is_under(&ab));
        assert_eq!(a.join(b".."), Err(BadPath::DotDot));
        assert_eq!(ab.components().collect::<Vec<_>>(), [&b"a"[..], b"b"]);
        assert_eq!(RelPath::root().to_string(), ".");
    }
}
