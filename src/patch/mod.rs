//! Patch library working on in-memory bytes: parse unified / git patches,
//! apply them with offset and fuzz, reverse them, and merge three versions.
//!
//! # What is our own code and what is borrowed
//!
//! * **Parsing** is our own (`parse`). diffy 0.5's `patch_set` parser was
//!   evaluated first: it splits multi-file git and unified diffs, but it drops
//!   the `index` ids and similarity scores, only knows four file modes (a
//!   patch with any other mode is an error), and reports errors as byte spans
//!   with coarse kinds, so "truncated hunk" and "hunk counts do not match the
//!   header" cannot be told apart or located by line. Its single-file hunk
//!   parser has the same error granularity. Since git's extended headers,
//!   multi-file splitting and raw-byte paths needed our own code anyway, the
//!   hunk bodies are parsed by the same small state machine, and diffy is used
//!   in the tests as an independent oracle for hunk ranges.
//! * **Applying** is our own (`apply`): diffy's applier has no offset
//!   search or fuzz.
//! * **Three-way merge** (`merge`): similar 3.2's `TextMerge` exists and
//!   has git's region rule, but its plain Myers alignment flips git's
//!   verdicts on ambiguous input, so regions are built on our own line diff
//!   (`linediff`: Myers with git's preprocessing and git-like alignment of
//!   changes). It is rewind's only line diff: `diff::text` renders with it
//!   too, so a rendered diff and a merge never disagree on what changed.

mod apply;
pub(crate) mod binary;
pub(crate) mod linediff;
mod merge;
mod parse;
mod quote;
mod reverse;
mod stamp;
mod types;

pub use apply::{Applied, ApplyError, ApplyOptions, FailureReason, HunkReport, apply_hunks};
pub use binary::{BinaryHunk, BinaryKind};
pub use merge::{ConflictRegion, MergeLabels, MergeOutcome, merge3};
pub use parse::ParseError;
pub use types::{
    FilePatch, Hunk, HunkLine, LineKind, PatchFormat, PatchSet, header_range, line_number,
    strip_components,
};

#[cfg(test)]
mod tests;
