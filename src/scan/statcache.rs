//! The stat cache: for every directory of a workspace, the stat of each entry at the last
//! snapshot and the id it had then.
//!
//! A file whose lstat (mtime and ctime in ns, size, inode, mode) equals its cached stat is not
//! read again. That is only safe when the cached stat could not hide a later write: a write in
//! the same timestamp tick as the snapshot that recorded it leaves mtime unchanged. Such entries
//! are *racy* (git's term) and stored with `racy = true`, which makes the next snapshot re-hash
//! them; see [`is_racy`].

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use crate::error::Result;
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

    /// Extracts the stat fields from a raw `struct stat`.
    pub fn from_raw(st: &rustix::fs::Stat) -> Stat {
        // The field types differ between targets (and rustix backends); the values fit.
        #[allow(clippy::unnecessary_cast)]
        Stat {
            mtime_ns: st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64,
            ctime_ns: st.st_ctime as i64 * 1_000_000_000 + st.st_ctime_nsec as i64,
            size: st.st_size as u64,
            ino: st.st_ino as u64,
            mode: st.st_mode as u32,
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

/// Totals of a directory's subtree (everything below it, not itself), kept in its parent's
/// cache entry so that a walk the daemon narrowed can take an untouched subdirectory whole,
/// without reading anything below it.
///
/// A directory entry has no lstat of its own in the cache, so the summary is packed into the
/// entry's stat fields (see [`Subtree::as_stat`]); a cache written before summaries existed
/// has none there, and that directory is simply read (and its summary written) next time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subtree {
    /// Regular files below.
    pub files: u64,
    /// Directories below.
    pub dirs: u64,
    /// Symlinks below.
    pub symlinks: u64,
    /// Every entry below is cached and none is racy, so nothing below needs a look when no
    /// directory below was touched.
    pub settled: bool,
}

/// Marks a directory entry's `mode` as holding a [`Subtree`].
const SUBTREE_FLAG: u32 = 0x8000_0000;

impl Subtree {
    /// The summary packed into a directory entry's stat fields.
    pub fn as_stat(&self) -> Stat {
        Stat {
            mtime_ns: self.files as i64,
            ctime_ns: self.dirs as i64,
            size: 0,
            ino: self.symlinks,
            mode: SUBTREE_FLAG | self.settled as u32,
        }
    }

    /// The summary [`as_stat`](Self::as_stat) packed, if `stat` holds one.
    pub fn from_stat(stat: &Stat) -> Option<Subtree> {
        (stat.mode & SUBTREE_FLAG != 0).then_some(Subtree {
            files: stat.mtime_ns as u64,
            dirs: stat.ctime_ns as u64,
            symlinks: stat.ino,
            settled: stat.mode & 1 != 0,
        })
    }
}

/// One cached entry of a directory, as built by a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEntry {
    /// File name.
    pub name: Vec<u8>,
    /// Kind at the last snapshot.
    pub kind: Kind,
    /// Blob id, or tree id for a directory.
    pub id: Id,
    /// Size as recorded in the tree entry.
    pub size: u64,
    /// The lstat at the last snapshot; for directories, their [`Subtree`] packed by
    /// [`Subtree::as_stat`] (or all zero).
    pub stat: Stat,
    /// Must be re-hashed next time (see `is_racy`).
    pub racy: bool,
}

/// The cache of one directory, as built by a snapshot and encoded for storage.
///
/// The stored form is a fixed layout read in place, without decoding, because a warm snapshot
/// of a large tree reads every directory's cache and decoding 78,000 entries cost 35 ms:
///
/// ```text
/// tree:[u8;32] size:u64 n:u32
/// n x { name_off:u32 name_len:u32 kind:u8 racy:u8 pad:[u8;2] id:[u8;32] size:u64
///       mtime:i64 ctime:i64 ino:u64 mode:u32 }      (80 bytes, sorted by name)
/// names
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirCache {
    /// The directory's tree id at the last snapshot.
    pub tree: Id,
    /// Total bytes below it.
    pub size: u64,
    /// Entries sorted by name.
    pub entries: Vec<CacheEntry>,
}

const HEADER: usize = 44;
const RECORD: usize = 80;

fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::File => 0,
        Kind::Executable => 1,
        Kind::Symlink => 2,
        Kind::Dir => 3,
    }
}

impl DirCache {
    /// Encodes for storage (entries must be sorted by name).
    pub fn encode(&self) -> Vec<u8> {
        let names: usize = self.entries.iter().map(|e| e.name.len()).sum();
        let mut out = Vec::with_capacity(HEADER + RECORD * self.entries.len() + names);
        out.extend_from_slice(&self.tree.0);
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        let mut off = (HEADER + RECORD * self.entries.len()) as u32;
        for e in &self.entries {
            out.extend_from_slice(&off.to_le_bytes());
            out.extend_from_slice(&(e.name.len() as u32).to_le_bytes());
            out.extend_from_slice(&[kind_code(e.kind), e.racy as u8, 0, 0]);
            out.extend_from_slice(&e.id.0);
            out.extend_from_slice(&e.size.to_le_bytes());
            out.extend_from_slice(&e.stat.mtime_ns.to_le_bytes());
            out.extend_from_slice(&e.stat.ctime_ns.to_le_bytes());
            out.extend_from_slice(&e.stat.ino.to_le_bytes());
            out.extend_from_slice(&e.stat.mode.to_le_bytes());
            off += e.name.len() as u32;
        }
        for e in &self.entries {
            out.extend_from_slice(&e.name);
        }
        out
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .unwrap_or(0)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

/// Checks that a stored value is well formed, so that reading it in place cannot go out of
/// bounds or mislead: a damaged value is dropped (that directory is simply re-hashed).
fn well_formed(b: &[u8]) -> bool {
    if b.len() < HEADER {
        return false;
    }
    let n = u32_at(b, 40) as usize;
    let Some(names_start) = n.checked_mul(RECORD).and_then(|r| r.checked_add(HEADER)) else {
        return false;
    };
    if names_start > b.len() {
        return false;
    }
    let mut prev: Option<&[u8]> = None;
    for i in 0..n {
        let r = HEADER + i * RECORD;
        let (off, len) = (u32_at(b, r) as usize, u32_at(b, r + 4) as usize);
        if off < names_start || off.checked_add(len).is_none_or(|end| end > b.len()) || b[r + 8] > 3
        {
            return false;
        }
        let name = &b[off..off + len];
        if prev.is_some_and(|p| p >= name) {
            return false;
        }
        prev = Some(name);
    }
    true
}

/// One directory's cache, read in place.
#[derive(Clone, Copy)]
pub struct DirView<'a> {
    bytes: &'a [u8],
}

/// One entry of a [`DirView`].
#[derive(Clone, Copy)]
pub struct EntryView<'a> {
    bytes: &'a [u8],
    rec: usize,
}

impl<'a> DirView<'a> {
    /// Reads a stored value in place, if it is well formed (a damaged one is never used).
    pub fn parse(bytes: &'a [u8]) -> Option<DirView<'a>> {
        well_formed(bytes).then_some(DirView { bytes })
    }

    /// Every entry's kind and id (blob ids, and tree ids for subdirectories).
    pub fn ids(&self) -> impl Iterator<Item = (Kind, Id)> + '_ {
        (0..self.len()).map(|i| {
            let e = self.entry(i);
            (e.kind(), e.id())
        })
    }

    /// Every entry, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = EntryView<'a>> + '_ {
        (0..self.len()).map(|i| self.entry(i))
    }

    /// The tree id the directory had.
    pub fn tree(&self) -> Id {
        let mut id = [0u8; 32];
        id.copy_from_slice(&self.bytes[..32]);
        Id(id)
    }

    /// Total bytes below it.
    pub fn size(&self) -> u64 {
        u64_at(self.bytes, 32)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        u32_at(self.bytes, 40) as usize
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn entry(&self, i: usize) -> EntryView<'a> {
        EntryView {
            bytes: self.bytes,
            rec: HEADER + i * RECORD,
        }
    }

    /// Finds an entry by name (binary search over the sorted records).
    pub fn get(&self, name: &[u8]) -> Option<EntryView<'a>> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.entry(mid).name().cmp(name) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.entry(mid)),
            }
        }
        None
    }
}

impl<'a> EntryView<'a> {
    /// The file name.
    pub fn name(&self) -> &'a [u8] {
        let (off, len) = (
            u32_at(self.bytes, self.rec) as usize,
            u32_at(self.bytes, self.rec + 4) as usize,
        );
        &self.bytes[off..off + len]
    }

    /// The kind it had.
    pub fn kind(&self) -> Kind {
        match self.bytes[self.rec + 8] {
            0 => Kind::File,
            1 => Kind::Executable,
            2 => Kind::Symlink,
            _ => Kind::Dir,
        }
    }

    /// Whether the cached id can be trusted for a file that now has `stat`: not racy, and the
    /// same stat and kind.
    pub fn vouches_for(&self, stat: &Stat) -> bool {
        !self.racy() && self.stat() == *stat && self.kind() == stat.kind()
    }

    /// A directory's subtree summary, if the cache holds one.
    pub fn subtree(&self) -> Option<Subtree> {
        if self.kind() != Kind::Dir {
            return None;
        }
        let r = self.rec;
        Subtree::from_stat(&Stat {
            mtime_ns: u64_at(self.bytes, r + 52) as i64,
            ctime_ns: u64_at(self.bytes, r + 60) as i64,
            ino: u64_at(self.bytes, r + 68),
            mode: u32_at(self.bytes, r + 76),
            size: 0,
        })
    }

    /// Whether it must be re-hashed.
    pub fn racy(&self) -> bool {
        self.bytes[self.rec + 9] != 0
    }

    /// Its blob or tree id.
    pub fn id(&self) -> Id {
        let mut id = [0u8; 32];
        id.copy_from_slice(&self.bytes[self.rec + 12..self.rec + 44]);
        Id(id)
    }

    /// Its size.
    pub fn size(&self) -> u64 {
        u64_at(self.bytes, self.rec + 44)
    }

    /// The lstat it had.
    pub fn stat(&self) -> Stat {
        let r = self.rec;
        Stat {
            mtime_ns: u64_at(self.bytes, r + 52) as i64,
            ctime_ns: u64_at(self.bytes, r + 60) as i64,
            ino: u64_at(self.bytes, r + 68),
            mode: u32_at(self.bytes, r + 76),
            size: self.size(),
        }
    }
}

/// A workspace's stat cache, or the part of it a walk reads: directories' stored values
/// copied into one buffer, indexed by directory path.
pub struct StatCache {
    arena: Vec<u8>,
    dirs: rustc_hash::FxHashMap<Vec<u8>, (usize, usize)>,
    /// Every stored directory is loaded (see [`StatCache::load`]); false for
    /// [`StatCache::load_narrowed`].
    complete: bool,
    /// Untouched subtrees a narrowed walk takes whole (see [`StatCache::load_narrowed`]).
    opaque: Vec<Opaque>,
}

impl Default for StatCache {
    /// An empty cache: there is nothing stored, so it is complete.
    fn default() -> Self {
        StatCache {
            arena: Vec::new(),
            dirs: Default::default(),
            complete: true,
            opaque: Vec::new(),
        }
    }
}

/// A subtree left unread by a narrowed walk: what its parent's cache says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opaque {
    /// The directory (relative path).
    pub path: Vec<u8>,
    /// Its tree id.
    pub tree: Id,
    /// Total bytes below it.
    pub size: u64,
    /// Its totals.
    pub subtree: Subtree,
}

impl StatCache {
    /// Reads a workspace's cache with one range scan. A damaged value is dropped, never fatal:
    /// the cache is only an accelerator.
    pub fn load(reader: &Reader, ws: u64) -> Result<StatCache> {
        let mut cache = StatCache::default();
        let lo: (u64, &[u8]) = (ws, &[]);
        for item in reader.stat_cache.range(lo..(ws + 1, &[][..]))? {
            let (k, v) = item?;
            let bytes = v.value();
            if well_formed(bytes) {
                let start = cache.arena.len();
                cache.arena.extend_from_slice(bytes);
                cache
                    .dirs
                    .insert(k.value().1.to_vec(), (start, bytes.len()));
            }
        }
        Ok(cache)
    }

    /// Reads only what a walk narrowed by the watch daemon needs, with point reads: the root,
    /// every directory on the way to one that `untrusted` names, and below that what is not
    /// [settled](Subtree::settled). Every other subdirectory of a directory read is an
    /// [`Opaque`] subtree: untouched since the cache was written, with every entry below it
    /// cached and settled, so its parent's entry says all about it. O(what changed), not
    /// O(cached directories).
    pub fn load_narrowed(
        reader: &Reader,
        ws: u64,
        untrusted: &crate::scan::narrow::Untrusted,
    ) -> Result<StatCache> {
        let mut cache = StatCache {
            complete: false,
            ..StatCache::default()
        };
        let mut queue: Vec<Vec<u8>> = vec![Vec::new()];
        let mut kids: Vec<(Vec<u8>, Option<Opaque>)> = Vec::new();
        while let Some(dir) = queue.pop() {
            let Some(v) = reader.stat_cache.get((ws, dir.as_slice()))? else {
                continue;
            };
            let bytes = v.value();
            let Some(view) = DirView::parse(bytes) else {
                // A damaged row would leave everything below it without a cache: read the
                // whole cache instead, which drops only that row.
                return StatCache::load(reader, ws);
            };
            for e in view.entries().filter(|e| e.kind() == Kind::Dir) {
                let path = crate::files::child_path(&dir, e.name());
                let opaque = e
                    .subtree()
                    .filter(|s| s.settled && untrusted.untouched_below(&path))
                    .map(|subtree| Opaque {
                        path: Vec::new(),
                        tree: e.id(),
                        size: e.size(),
                        subtree,
                    });
                kids.push((path, opaque));
            }
            for (path, opaque) in kids.drain(..) {
                match opaque {
                    Some(o) => cache.opaque.push(Opaque { path, ..o }),
                    None => queue.push(path),
                }
            }
            let start = cache.arena.len();
            cache.arena.extend_from_slice(bytes);
            cache.dirs.insert(dir, (start, bytes.len()));
        }
        Ok(cache)
    }

    /// Whether every stored directory is loaded (so one missing here is not stored).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The subtrees a narrowed walk takes whole, without reading them.
    pub fn opaque(&self) -> &[Opaque] {
        &self.opaque
    }

    /// The cache of directory `dir`, if there is one.
    pub fn dir(&self, dir: &[u8]) -> Option<DirView<'_>> {
        self.dirs.get(dir).map(|&(start, len)| DirView {
            bytes: &self.arena[start..start + len],
        })
    }

    /// Every loaded directory path (every cached one when [complete](Self::is_complete)).
    pub fn dir_paths(&self) -> impl Iterator<Item = &[u8]> {
        self.dirs.keys().map(|k| k.as_slice())
    }

    /// The cached entry for `name` in directory `dir`, if its stat is trustworthy and equal.
    pub fn hit(&self, dir: &[u8], name: &[u8], stat: &Stat) -> Option<EntryView<'_>> {
        self.dir(dir)?.get(name).filter(|e| e.vouches_for(stat))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_caches_read_back_in_place_and_damage_is_rejected() {
        let e = |name: &[u8], kind| CacheEntry {
            name: name.to_vec(),
            kind,
            id: Id([name[0]; 32]),
            size: name.len() as u64,
            stat: Stat {
                mtime_ns: 5,
                ctime_ns: 6,
                size: name.len() as u64,
                ino: 7,
                mode: 0o100644,
            },
            racy: name == b"racy",
        };
        let dc = DirCache {
            tree: Id([9; 32]),
            size: 42,
            entries: vec![
                e(b"a", Kind::File),
                e(b"racy", Kind::File),
                e(b"sub", Kind::Dir),
            ],
        };
        let bytes = dc.encode();
        assert!(well_formed(&bytes));
        let view = DirView { bytes: &bytes };
        assert_eq!((view.tree(), view.size(), view.len()), (Id([9; 32]), 42, 3));
        let a = view.get(b"a").unwrap();
        assert_eq!(
            (a.name(), a.kind(), a.id(), a.racy()),
            (&b"a"[..], Kind::File, Id([b'a'; 32]), false)
        );
        assert_eq!(a.stat().ino, 7);
        assert!(view.get(b"racy").unwrap().racy());
        assert_eq!(view.get(b"sub").unwrap().kind(), Kind::Dir);
        assert!(view.get(b"zzz").is_none());
        assert!(!well_formed(&bytes[..bytes.len() - 1]));
        assert!(!well_formed(&bytes[..50]));
        let mut bad = bytes.clone();
        bad[HEADER] = 0; // a name offset pointing into the records
        assert!(!well_formed(&bad));
    }
}
