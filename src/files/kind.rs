//! The kinds of entry a workspace holds and a tree records.

use serde::{Deserialize, Serialize};

/// What an entry of a tree is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Kind {
    /// A regular file without the owner's execute bit.
    File,
    /// A regular file with the owner's execute bit (git's 100755).
    Executable,
    /// A symbolic link; its id names a blob holding the link target's bytes.
    Symlink,
    /// A directory; its id names a tree.
    Dir,
}

impl Kind {
    /// The mode git would show for this kind.
    pub fn git_mode(self) -> u32 {
        match self {
            Kind::File => 0o100644,
            Kind::Executable => 0o100755,
            Kind::Symlink => 0o120000,
            Kind::Dir => 0o040000,
        }
    }

    /// A short lowercase name for listings and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Executable => "executable",
            Kind::Symlink => "symlink",
            Kind::Dir => "dir",
        }
    }

    /// True for the kinds whose id names a blob.
    pub fn is_blob(self) -> bool {
        !matches!(self, Kind::Dir)
    }
}
