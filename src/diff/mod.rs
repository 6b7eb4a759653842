//! Rendering of file changes in git's extended unified diff format.
//!
//! The store hands this module a [`Change`] (which paths, kinds and blob ids
//! are involved) plus the raw bytes of each side; everything here is pure
//! code over bytes so that the output can be compared byte for byte with
//! `git diff` (the only intended difference being that the `index` line
//! shows rewind's BLAKE3 ids instead of git's SHA-1 ids, except git's `e69de29` for an
//! empty file, which GNU patch needs to recognise empty files).
//!
//! * [`text`]: line splitting, binary detection and the line diff itself.
//! * [`quote`]: git's `core.quotePath` path quoting.
//! * [`render`]: the patch writer (in-memory and streaming).
//! * [`stat`]: `--stat`, `--numstat` and `--name-status` printers.
//! * [`similar`]: renames by similarity, as git finds them.

pub mod quote;
pub mod render;
pub mod similar;
pub mod stat;
pub mod text;
mod types;

pub use render::{FileStat, PatchOptions, write_patch, write_patch_streamed};
pub use stat::{BinarySizes, StatEntry, Status, write_name_status, write_numstat, write_stat};
pub use text::{DiffOptions, LineDiff, is_binary, line_diff};
pub use types::{Change, EntryKind, Side};

pub mod tree;

pub use tree::{ChangeStatus, EntryState, FileChange, PathFilter, SideJson};
