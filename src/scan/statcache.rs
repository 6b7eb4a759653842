//! The stat cache: for every directory of a workspace, the stat of each entry at the last
//! snapshot and the id it had then.
//!
//! A file whose lstat (mtime and ctime in ns, size, inode, mode) equals its cached stat is not
//! read again. That is only safe when the cached stat could not hide a later write: a write in
//! the same timestamp tick as the snapshot that recorded it leaves mtime unchanged. Such entries
//! are *racy* (git's term) and stored with `racy = true`, which makes the next snapshot re-hash
//! them; see [`is_racy`].

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Reader;
use crate::store::tree::Kind;

/// The parts of an lstat that change when a file's content may have changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Stat {
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status change time, ns since the epoch.
    pub ctime_ns: i64,
    /// Size in bytes.
    pub size: u64,
    /// Inode number.
    pub ino: u64,
    /// Full `st_mode` (type and permission bits).
    pub mode: u32,
}

impl Stat {
    /// Extracts the stat fields from metadata.
    pub fn from_metadata(m: &Metadata) -> Stat {
        Stat {
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
            size: m.size(),
            ino: m.ino(),
            mode: m.mode(),
        }
    }

    /// The kind of tree entry a regular file or symlink with this stat becomes.
    pub fn kind(&self) -> Kind {
        match self.mode & libc::S_IFMT {
            libc::S_IFLNK => Kind::Symlink,
            libc::S_IFDIR => Kind::Dir,
            _ if self.mode & 0o100 != 0 => Kind::Executable,
            _ => Kind::File,
        }
    }
}

/// Whether an entry stat-ed at a snapshot that started at `start_ns` (on the file system's
/// clock) must be re-hashed next time: its last change falls in the tick the snapshot started
/// in or later, so a write right after the read could keep the same timestamp.
pub fn is_racy(stat: &Stat, start_ns: i64) -> bool {
    stat.mtime_ns.max(stat.ctime_ns) >= start_ns
}

/// One cached entry of a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// File name.
    pub name: Vec<u8>,
    /// Kind at the last snapshot.
    pub kind: Kind,
    /// Blob id, or tree id for a directory.
    pub id: Id,
    /// Size as recorded in the tree entry.
    pub size: u64,
    /// The lstat at the last snapshot (all zero for directories: their tree id says it all).
    pub stat: Stat,
    /// Must be re-hashed next time (see [`is_racy`]).
    pub racy: bool,
}

/// The cache of one directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirCache {
    /// The directory's tree id at the last snapshot.
    pub tree: Id,
    /// Total bytes below it.
    pub size: u64,
    /// Entries sorted by name.
    pub entries: Vec<CacheEntry>,
}

impl DirCache {
    /// Decodes a stored value.
    pub fn decode(bytes: &[u8]) -> Result<DirCache> {
        postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
            kind: "stat cache entry",
            id: String::new(),
            why: e.to_string(),
        })
    }

    /// Encodes for storage.
    pub fn encode(&self) -> Vec<u8> {
        postcard::to_stdvec(self).unwrap_or_default()
    }

    /// Finds an entry by name.
    pub fn get(&self, name: &[u8]) -> Option<&CacheEntry> {
        self.entries
            .binary_search_by(|e| e.name.as_slice().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }
}

/// A workspace's whole stat cache, keyed by directory path relative to the workspace.
#[derive(Default)]
pub struct StatCache {
    /// Directory path -> its cache.
    pub dirs: HashMap<Vec<u8>, DirCache>,
}

impl StatCache {
    /// Reads a workspace's cache with one range scan. A damaged value is dropped (the
    /// directory is simply re-hashed), never fatal: the cache is only an accelerator.
    pub fn load(reader: &Reader, ws: u64) -> Result<StatCache> {
        let mut dirs = HashMap::new();
        let lo: (u64, &[u8]) = (ws, &[]);
        for item in reader.stat_cache.range(lo..(ws + 1, &[][..]))? {
            let (k, v) = item?;
            if let Ok(dc) = DirCache::decode(v.value()) {
                dirs.insert(k.value().1.to_vec(), dc);
            }
        }
        Ok(StatCache { dirs })
    }

    /// The cached entry for `name` in directory `dir`, if its stat is trustworthy and equal.
    pub fn hit(&self, dir: &[u8], name: &[u8], stat: &Stat) -> Option<&CacheEntry> {
        let e = self.dirs.get(dir)?.get(name)?;
        (!e.racy && e.stat == *stat && e.kind == stat.kind()).then_some(e)
    }
}
