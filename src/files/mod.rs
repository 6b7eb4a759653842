//! The bottom layer: workspace-relative paths and the file-system operations that must never
//! follow a symlink out of the workspace or leave a half-written file. Everything that writes
//! into a workspace (restore, apply, revert, overlay accept, undo) goes through [`Beneath`]:
//! directory descriptors opened below the root without following a symlink; everything that asks "is this entry really there"
//! uses [`lstat_beneath`]. What a path or a tree entry name may be is said once, by
//! [`RelPath`]. Nothing here knows about the store.

mod atomic;
mod beneath;
mod kind;
mod path;
mod relpath;

pub use atomic::{TEMP_PREFIX, exec_mode, write_atomic};
pub use beneath::{Beneath, DirRemoval, Lstats, lstat_beneath};
pub use kind::Kind;
pub use path::{child_path, display, is_under, join_rel, path_bytes, split_parent};
pub use relpath::{BadPath, RelPath, check_name};

/// Starts the writeback of `file`'s dirty pages and returns without waiting for it
/// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`), so a later fsync has less to wait for. A hint:
/// errors are ignored.
pub fn start_writeback(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call (borrowed from `file`); the call reads no
    // memory of ours.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

/// Now, in nanoseconds since the Unix epoch: the unit of every timestamp rewind records.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}
