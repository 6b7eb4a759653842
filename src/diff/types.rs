//! The input model: what changed, described without any content.

/// The kind of a tree entry as far as a diff is concerned.
///
/// Directories never reach the renderer: the store flattens trees into
/// file-level changes first, exactly as git does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular, non-executable file (git mode `100644`).
    File,
    /// A regular file with the executable bit (git mode `100755`).
    Executable,
    /// A symbolic link (git mode `120000`); its content is the target path.
    Symlink,
}

impl EntryKind {
    /// The git mode as written in `new file mode`, `old mode` and `index`
    /// lines (always six octal digits).
    pub fn git_mode(self) -> &'static str {
        match self {
            EntryKind::File => "100644",
            EntryKind::Executable => "100755",
            EntryKind::Symlink => "120000",
        }
    }

    /// Whether going from `self` to `other` changes the file *type* (regular
    /// file versus symlink), which git renders as a deletion plus an addition
    /// rather than as a mode change.
    pub fn is_type_change(self, other: EntryKind) -> bool {
        (self == EntryKind::Symlink) != (other == EntryKind::Symlink)
    }
}

/// One side (old or new) of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side<'a> {
    /// Repository-relative path, raw bytes (not necessarily UTF-8).
    pub path: &'a [u8],
    /// The entry kind, which determines the git mode shown.
    pub kind: EntryKind,
    /// BLAKE3 id of the blob; the `index` line shows its first 12 hex digits.
    pub id: [u8; 32],
}

impl Side<'_> {
    /// The abbreviated id as shown in the `index` line.
    pub fn short_id(&self) -> String {
        short_hex(&self.id)
    }
}

/// First 12 hex digits of an id: longer than git's 7-digit SHA-1 abbreviations (git apply
/// accepts any length), so `rewind apply` can tell its own ids from git's and never looks a
/// SHA-1 prefix up among BLAKE3 ids.
pub(crate) fn short_hex(id: &[u8; 32]) -> String {
    let mut s = String::with_capacity(12);
    for b in &id[..6] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A file-level change between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change<'a> {
    /// The path did not exist before.
    Added {
        /// The new entry.
        new: Side<'a>,
    },
    /// The path no longer exists.
    Deleted {
        /// The removed entry.
        old: Side<'a>,
    },
    /// Same path, content and/or kind changed.
    Modified {
        /// The entry before.
        old: Side<'a>,
        /// The entry after.
        new: Side<'a>,
    },
    /// A path moved, possibly with edits; `similarity` is git's percentage
    /// (100 for an exact rename).
    Renamed {
        /// The entry before, at its old path.
        old: Side<'a>,
        /// The entry after, at its new path.
        new: Side<'a>,
        /// Similarity index in percent, as computed by the rename detector.
        similarity: u8,
    },
}

impl<'a> Change<'a> {
    /// The old side, if any.
    pub fn old(&self) -> Option<&Side<'a>> {
        match self {
            Change::Added { .. } => None,
            Change::Deleted { old }
            | Change::Modified { old, .. }
            | Change::Renamed { old, .. } => Some(old),
        }
    }

    /// The new side, if any.
    pub fn new_side(&self) -> Option<&Side<'a>> {
        match self {
            Change::Deleted { .. } => None,
            Change::Added { new } | Change::Modified { new, .. } | Change::Renamed { new, .. } => {
                Some(new)
            }
        }
    }
}
