//! Inverting patches: applying the reverse of a patch to its result gives
//! back the original, which lets callers undo a change without storing it.

use super::types::{FilePatch, Hunk, HunkLine, LineKind, PatchSet};

impl PatchSet {
    /// The inverse patch set: each file patch reversed, in the same order.
    pub fn reverse(&self) -> PatchSet {
        PatchSet {
            files: self.files.iter().map(FilePatch::reverse).collect(),
        }
    }
}

impl FilePatch {
    /// The inverse of this file patch: paths, modes and index ids swapped,
    /// creation becomes deletion and vice versa, added and removed lines
    /// swapped. A reversed copy keeps `is_copy` with swapped paths (undoing
    /// it means removing the copy, which the caller decides).
    pub fn reverse(&self) -> FilePatch {
        FilePatch {
            format: self.format,
            old_path: self.new_path.clone(),
            new_path: self.old_path.clone(),
            old_mode: self.new_mode,
            new_mode: self.old_mode,
            is_new: self.is_deleted,
            is_deleted: self.is_new,
            is_rename: self.is_rename,
            is_copy: self.is_copy,
            old_index: self.new_index.clone(),
            new_index: self.old_index.clone(),
            similarity: self.similarity,
            dissimilarity: self.dissimilarity,
            binary: self.binary,
            binary_forward: self.binary_reverse.clone(),
            binary_reverse: self.binary_forward.clone(),
            hunks: self.hunks.iter().map(Hunk::reverse).collect(),
        }
    }
}

impl Hunk {
    /// The inverse hunk: old and new ranges swapped, `+` and `-` swapped.
    pub fn reverse(&self) -> Hunk {
        Hunk {
            old_start: self.new_start,
            old_len: self.new_len,
            new_start: self.old_start,
            new_len: self.old_len,
            section: self.section.clone(),
            lines: self
                .lines
                .iter()
                .map(|l| HunkLine {
                    kind: match l.kind {
                        LineKind::Context => LineKind::Context,
                        LineKind::Removed => LineKind::Added,
                        LineKind::Added => LineKind::Removed,
                    },
                    content: l.content.clone(),
                })
                .collect(),
        }
    }
}
