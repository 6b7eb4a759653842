//! Scanning a workspace: the parallel walk with ignore rules, and the per-workspace stat cache
//! that lets a warm snapshot skip reading files whose stat has not changed.

pub mod cache_write;
pub mod daemon_link;
pub mod group;
pub mod narrow;
pub mod statcache;
pub mod token;
pub mod walk;
pub mod watch;

pub use narrow::Untrusted;
pub use statcache::{CacheEntry, DirCache, Opaque, Stat, StatCache, Subtree};
pub use walk::{EntryType, Trust, WalkEntry, WalkOptions, WalkOutput, walk};
