//! Changes between two points: per file, with line counts and hunks, and their totals.

use serde::{Deserialize, Serialize};

use super::PathPair;
use crate::compare::{Diff, Rev};
use crate::diff::{ChangeStatus, DiffOptions, EntryState, FileChange, PatchOptions};
use crate::error::Result;
use crate::hunks::ReviewHunk;
use crate::store::tree::Kind;

/// One side of a change (`diff --json`'s `old` and `new`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
pub struct Side {
    /// file, executable or symlink.
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["file", "executable", "symlink"])))]
    pub kind: String,
    /// git's mode, octal (100644, 100755, 120000).
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["100644", "100755", "120000"])))]
    pub mode: String,
    /// The blob id (hex): its content is in the store.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[0-9a-f]{64}$")))]
    pub id: String,
    /// Bytes.
    pub size: u64,
}

impl From<&EntryState> for Side {
    fn from(e: &EntryState) -> Self {
        let j = e.json();
        Side {
            kind: j.kind.to_string(),
            mode: j.mode,
            id: j.id,
            size: j.size,
        }
    }
}

/// One hunk of a text change, with the id that selects it (restore, revert and an overlay's
/// accept and reject take these ids).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Hunk {
    /// The id: stable for the same change of the same file.
    pub id: String,
    /// First line on the old side (1-based; 0 for an empty side).
    pub old_start: usize,
    /// Lines on the old side.
    pub old_lines: usize,
    /// First line on the new side.
    pub new_start: usize,
    /// Lines on the new side.
    pub new_lines: usize,
    /// The hunk's lines, each starting with ' ', '-' or '+'.
    pub lines: Vec<String>,
    /// In an overlay's review: not yet accepted or rejected.
    pub pending: bool,
}

impl From<ReviewHunk> for Hunk {
    fn from(h: ReviewHunk) -> Self {
        Hunk {
            id: h.id,
            old_start: h.old_start,
            old_lines: h.old_lines,
            new_start: h.new_start,
            new_lines: h.new_lines,
            lines: h.lines,
            pending: h.pending,
        }
    }
}

/// A changed path (`diff --json`'s file, `status --json`'s change).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Change {
    /// The path, and the one it had for a rename.
    #[serde(flatten)]
    pub paths: PathPair,
    /// What happened to it.
    pub status: ChangeStatus,
    /// What it was (None when added).
    pub old: Option<Side>,
    /// What it is (None when deleted).
    pub new: Option<Side>,
    /// Whether either side is binary (no line counts); None when not computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<bool>,
    /// Lines added; None when not computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insertions: Option<u64>,
    /// Lines removed; None when not computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletions: Option<u64>,
    /// The line diff hit its deadline: the counts are those of a whole rewrite (only when
    /// true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff_timed_out: bool,
    /// The line hunks, when asked for and the change has some (not binary, symlinks or
    /// directories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<Hunk>>,
}

impl From<&FileChange> for Change {
    fn from(c: &FileChange) -> Self {
        Change {
            paths: PathPair::new(&c.path, c.old_path.as_deref()),
            status: c.status,
            old: c.old.as_ref().map(Side::from),
            new: c.new.as_ref().map(Side::from),
            binary: None,
            insertions: None,
            deletions: None,
            diff_timed_out: false,
            hunks: None,
        }
    }
}

/// Totals over a diff's files.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Totals {
    /// Paths changed.
    pub files_changed: u64,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
}

/// Gives the hunks of the change at an index of a diff's changes, or None.
pub type HunksFor<'a> = dyn FnMut(usize, &FileChange) -> Result<Option<Vec<ReviewHunk>>> + 'a;

/// The changes between two points (`diff --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Changes {
    /// The old side: a snapshot id, or "live".
    pub old: String,
    /// The new side: a snapshot id, or "live".
    pub new: String,
    /// The changed paths, sorted.
    pub files: Vec<Change>,
    /// Totals.
    pub totals: Totals,
    /// The unified diff (git's format), when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

impl Changes {
    /// The changes of `d` with line counts; `hunks_for` gives each file's hunks (by index in
    /// `d.changes`) or None; with `patch`, the unified diff too (written with those options;
    /// colour is never used here).
    pub fn build(
        d: &Diff,
        old: String,
        new: String,
        opts: &DiffOptions,
        patch: Option<&PatchOptions>,
        hunks_for: &mut HunksFor<'_>,
    ) -> Result<Changes> {
        let stats = d.stats(opts)?;
        let mut files = Vec::with_capacity(d.changes.len());
        let mut totals = Totals {
            files_changed: d.changes.len() as u64,
            ..Totals::default()
        };
        for (i, (c, s)) in d.changes.iter().zip(&stats).enumerate() {
            let mut f = Change::from(c);
            f.binary = Some(s.binary);
            f.insertions = Some(s.insertions);
            f.deletions = Some(s.deletions);
            f.diff_timed_out = s.timed_out;
            f.hunks = hunks_for(i, c)?.map(|h| h.into_iter().map(Hunk::from).collect());
            totals.insertions += s.insertions;
            totals.deletions += s.deletions;
            files.push(f);
        }
        let patch = match patch {
            Some(p) => {
                let mut buf = Vec::new();
                d.write_patch(&mut buf, &PatchOptions { color: false, ..*p })?;
                Some(String::from_utf8_lossy(&buf).into_owned())
            }
            None => None,
        };
        Ok(Changes {
            old,
            new,
            files,
            totals,
            patch,
        })
    }
}

/// A side of a diff as `Changes` names it: a snapshot's id (hex), or "live".
pub fn rev_text(r: Rev) -> String {
    match r {
        Rev::Live => "live".into(),
        Rev::Snapshot(id) => id.hex(),
    }
}

/// The line hunks of one change of `d` (ids that restore and revert take), or None where it
/// has none: a binary file, a symlink, identical content, or a rename (taken whole, by path,
/// as [`crate::hunks::texts`] has it).
pub fn change_hunks(d: &Diff, c: &FileChange) -> Result<Option<Vec<ReviewHunk>>> {
    let text_side =
        |s: Option<EntryState>| s.is_none_or(|e| matches!(e.kind, Kind::File | Kind::Executable));
    if !text_side(c.old) || !text_side(c.new) || c.old_path.is_some() {
        return Ok(None);
    }
    let old = d.content(c, true)?;
    let new = d.content(c, false)?;
    if crate::diff::is_binary(&old) || crate::diff::is_binary(&new) || old == new {
        return Ok(None);
    }
    Ok(Some(crate::hunks::file_hunks(&c.path, &old, &new)))
}
