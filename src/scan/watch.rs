//! Watching a workspace while a command runs (inotify), so the snapshot after it need not
//! `lstat` files in directories where nothing happened.
//!
//! `rewind run` takes two snapshots around a command; each walks the tree and `lstat`s every
//! file, which is most of their cost. While the command runs, inotify tells which directories
//! saw any change. The after snapshot still lists every directory (so additions, deletions and
//! ignore rules are handled as always) but, in a directory that is trusted, takes each file's
//! stat from the stat cache the before snapshot just wrote instead of asking the kernel.
//!
//! What makes a directory trusted, and why it is safe:
//! - Its watch was added before the before snapshot walked it, so every change after that walk
//!   raised an event; and no event at all arrived for it. Any write, truncate, chmod, touch,
//!   rename, link or unlink of an entry raises one on its directory (`IN_CLOSE_WRITE` covers
//!   writes through `mmap` made before the file is closed).
//! - Nothing was moved, created or deleted *as a directory* at its path or above it since: a
//!   directory renamed into a watched path keeps its old watch (under its old path), so any
//!   directory event marks the whole subtree at that name untrusted, as does a watched
//!   directory being moved or deleted itself.
//! - It holds no file with other hard links (a write through another name raises the event
//!   on the other directory); the caller passes those directories, found by the before walk.
//! - The event queue did not overflow, and every watch could be added; otherwise nothing is
//!   trusted and the after snapshot is an ordinary one.
//!
//! Racy cache entries (modified within the clock tick of the snapshot) are never trusted this
//! way: they are stat'ed and hashed as always.

use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::inotify;
use rustix::io::Errno;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::files::is_under;
use crate::files::{child_path, join_rel};

/// An inotify instance watching a set of workspace directories.
pub struct Watcher {
    fd: OwnedFd,
    /// Watch descriptor -> the directory it was added for (relative path).
    dirs: FxHashMap<i32, Vec<u8>>,
}

/// What happened while the watcher ran.
#[derive(Debug, Default)]
pub struct Changes {
    watched: FxHashSet<Vec<u8>>,
    dirty: FxHashSet<Vec<u8>>,
    dirty_trees: Vec<Vec<u8>>,
}

pub(crate) const MASK: u32 = libc::IN_MODIFY
    | libc::IN_ATTRIB
    | libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW;

impl Watcher {
    /// Watches `dirs` (relative to `root`, `b""` for the root). None when inotify is not
    /// available or a watch cannot be added for want of watches: then nothing can be trusted.
    /// A directory that no longer exists is simply not watched (and so never trusted).
    pub fn start<'a>(root: &Path, dirs: impl IntoIterator<Item = &'a [u8]>) -> Option<Watcher> {
        let fd =
            inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC).ok()?;
        let mask = inotify::WatchFlags::from_bits_retain(MASK);
        let mut map = FxHashMap::default();
        for d in dirs {
            let wd = match inotify::add_watch(&fd, join_rel(root, d), mask) {
                Ok(wd) => wd,
                Err(Errno::NOENT | Errno::NOTDIR | Errno::ACCESS) => continue,
                Err(_) => return None,
            };
            map.insert(wd, d.to_vec());
        }
        Some(Watcher { fd, dirs: map })
    }

    /// Reads the events that arrived. None when the queue overflowed or could not be read.
    pub fn finish(self) -> Option<Changes> {
        let mut changes = Changes {
            watched: self.dirs.values().cloned().collect(),
            ..Changes::default()
        };
        let mut overflow = false;
        read_events(&self.fd, &mut |wd, mask, name| {
            if mask & libc::IN_Q_OVERFLOW != 0 {
                overflow = true;
            }
            let Some(dir) = self.dirs.get(&wd) else {
                return;
            };
            changes.dirty.insert(dir.clone());
            if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_IGNORED) != 0 {
                changes.dirty_trees.push(dir.clone());
            }
            if mask & libc::IN_ISDIR != 0 && !name.is_empty() {
                changes.dirty_trees.push(child_path(dir, name));
            }
        })
        .ok()?;
        (!overflow).then_some(changes)
    }
}

/// Reads every event queued on the inotify descriptor `fd` (non-blocking) until none is left,
/// calling `each(watch descriptor, mask, name)`; the name is empty for events on the watched
/// directory itself.
pub(crate) fn read_events(
    fd: &OwnedFd,
    each: &mut dyn FnMut(i32, u32, &[u8]),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match rustix::io::read(fd, &mut buf[..]) {
            Ok(0) | Err(Errno::AGAIN) => return Ok(()),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        let mut at = 0usize;
        const HEAD: usize = std::mem::size_of::<libc::inotify_event>();
        while at + HEAD <= n {
            let field =
                |i: usize| u32::from_ne_bytes(buf[at + i..at + i + 4].try_into().unwrap_or([0; 4]));
            let (wd, mask, len) = (field(0) as i32, field(4), field(12) as usize);
            let name_bytes = &buf[(at + HEAD).min(n)..(at + HEAD + len).min(n)];
            let name = &name_bytes[..name_bytes
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(name_bytes.len())];
            at += HEAD + len;
            each(wd, mask, name);
        }
    }
}

impl Changes {
    /// The directories whose entries are known unchanged, leaving out `exclude` (directories
    /// holding files with other hard links).
    pub fn trusted(&self, exclude: &FxHashSet<Vec<u8>>) -> FxHashSet<Vec<u8>> {
        self.watched
            .iter()
            .filter(|d| {
                !self.dirty.contains(*d)
                    && !exclude.contains(*d)
                    && !self.dirty_trees.iter().any(|t| is_under(d, t))
            })
            .cloned()
            .collect()
    }
}
