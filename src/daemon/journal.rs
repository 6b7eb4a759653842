//! One watched workspace: its inotify watches and the journal of what they saw.
//!
//! Every event is stamped with the daemon's current sequence number; a query hands out the
//! current number as a token and then moves it on, so "dirty since token T" is "stamped after
//! T". inotify queues an event in the very syscall that made the change, and a query reads the
//! queue to the end before answering: a change that finished before the query is in the
//! journal under a stamp no later than the token it hands out.
//!
//! A directory is vouched for since T (the conditions of [`crate::scan::watch`], carried over):
//! its watch was added at or before T (so the walk that wrote the cache after T was watched);
//! no event on it after T; no directory event at its path or above it after T (a directory
//! renamed or created there, a watched directory moved or deleted); no overflow since T. An
//! event that names an entry (nearly all do) leaves the directory's other entries vouched for:
//! every change to an entry raises an event naming it on its directory's watch. The
//! caller leaves out directories holding hard-linked files, and a new name made for a file that
//! has another (a hard link made inside the workspace) resets the journal, since `link()`
//! raises no event in the first name's directory. A link made from *outside* the workspace to
//! a file inside it, then written through, is not seen (as with watchman and git's
//! fsmonitor). Anything else means a full walk:
//! a token from another daemon run, a journal reset, a watch limit, a file system inotify
//! cannot see, the workspace moved, replaced or deleted.

use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rustc_hash::FxHashMap;
use rustix::fs::inotify;
use rustix::io::Errno;

use super::DaemonOptions;
use super::status::{JournalStatus, WatchStatus};
use crate::diff::tree::is_under;
use crate::files::{child_path, join_rel};
use crate::scan::daemon_link::QueryAnswer;
use crate::scan::token::Token;
use crate::scan::walk::{IGNORE_FILE, WalkOptions};
use crate::scan::watch::{MASK, read_events};

/// File system magic numbers (statfs `f_type`) whose changes inotify does not see when they
/// are made elsewhere: network file systems and FUSE.
const BLIND_FS: [(i64, &str); 9] = [
    (0x6969, "nfs"),
    (0x517B, "smb"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb2"),
    (0x6573_5546, "fuse"),
    (0x0102_1997, "9p"),
    (0x00C3_6400, "ceph"),
    (0x5346_414F, "afs"),
    (0x0BD0_0BD0, "lustre"),
];

/// What draining the queue found that the daemon reports.
#[derive(Debug, PartialEq, Eq)]
pub enum Notice {
    /// The journal was reset (kernel queue overflow or too many events held).
    Overflow,
    /// The workspace can no longer be watched.
    Broken(String),
}

/// A workspace's watches and journal.
pub struct Journal {
    /// The workspace (canonical).
    pub root: PathBuf,
    /// Its path as the protocol names it.
    pub name: String,
    identity: (u64, u64),
    fd: Option<OwnedFd>,
    /// Watch descriptor -> directory (relative).
    wds: FxHashMap<i32, Vec<u8>>,
    /// Directory -> (watch descriptor, stamp when the watch was added).
    watched: FxHashMap<Vec<u8>, (i32, u64)>,
    /// Directory -> stamp of its latest event about itself (no entry named).
    dirty: FxHashMap<Vec<u8>, u64>,
    /// Entry (relative path) -> stamp of its latest event.
    names: FxHashMap<Vec<u8>, u64>,
    /// Subtree -> stamp of its latest directory event.
    trees: FxHashMap<Vec<u8>, u64>,
    /// Directories a snapshot would enter that are not watched (a mount inotify cannot see,
    /// one that could not be read or watched): never trusted, named in every answer.
    unwatched: rustc_hash::FxHashSet<Vec<u8>>,
    /// Tokens before this stamp are answered with a full walk.
    reset_at: u64,
    /// Stamp of the latest event on an ignore file (what snapshots leave out may have changed).
    ignore_changed: u64,
    /// Events held since the last reset.
    held: usize,
    walk_opts: WalkOptions,
    /// Why the workspace cannot be watched (then nothing is trusted).
    pub broken: Option<String>,
    /// Journal resets so far.
    pub overflows: u64,
    /// Events read so far.
    pub events: u64,
    /// Paths changed since the last `changed` event, and since when.
    pub changed: BTreeSet<Vec<u8>>,
    /// When the first of `changed` arrived.
    pub changed_since: Option<Instant>,
    /// Set when any event arrived since the caller last looked (for automatic snapshots).
    pub touched: bool,
}

impl Journal {
    /// Starts watching `root` (canonical) at stamp `seq`. Never fails: a workspace that cannot
    /// be watched is kept with `broken` saying why, so queries answer "full walk".
    pub fn open(root: &Path, store_dir: &Path, seq: u64, opts: &DaemonOptions) -> Journal {
        let mut j = Journal {
            root: root.to_path_buf(),
            name: root.to_string_lossy().into_owned(),
            identity: (0, 0),
            fd: None,
            wds: FxHashMap::default(),
            watched: FxHashMap::default(),
            dirty: FxHashMap::default(),
            names: FxHashMap::default(),
            trees: FxHashMap::default(),
            unwatched: Default::default(),
            reset_at: seq,
            ignore_changed: 0,
            held: 0,
            walk_opts: WalkOptions::default(),
            broken: None,
            overflows: 0,
            events: 0,
            changed: BTreeSet::new(),
            changed_since: None,
            touched: false,
        };
        if let Err(why) = j.setup(store_dir, seq, opts) {
            j.set_broken(why);
        }
        j
    }

    fn setup(&mut self, store_dir: &Path, seq: u64, opts: &DaemonOptions) -> Result<(), String> {
        let meta = std::fs::metadata(&self.root)
            .map_err(|e| format!("cannot watch {}: {e}", self.root.display()))?;
        self.identity = (meta.dev(), meta.ino());
        if let Some(kind) = blind_fs(&self.root, opts) {
            return Err(format!(
                "{} is on a file system inotify cannot see ({kind})",
                self.root.display()
            ));
        }
        let globs = crate::config::IgnoreConfig::load(store_dir)
            .map(|c| c.globs())
            .map_err(|e| e.to_string())?;
        self.walk_opts = WalkOptions {
            ignore_globs: globs,
            exclude: store_dir
                .canonicalize()
                .ok()
                .filter(|d| d.starts_with(&self.root)),
            threads: 1,
            trusted: None,
        };
        let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)
            .map_err(|e| format!("inotify unavailable: {}", std::io::Error::from(e)))?;
        self.fd = Some(fd);
        self.rescan(b"", seq, opts)
    }

    fn set_broken(&mut self, why: String) {
        self.broken = Some(why);
        self.fd = None;
        self.wds.clear();
        self.watched.clear();
        self.dirty.clear();
        self.names.clear();
        self.trees.clear();
        self.unwatched.clear();
    }

    /// The inotify descriptor to poll (None when broken).
    pub fn fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(|f| f.as_raw_fd())
    }

    /// Directories watched.
    pub fn watches(&self) -> usize {
        self.watched.len()
    }

    /// Watches every directory at or below `sub` that a snapshot would enter (ignore files
    /// above it still apply), stamping new watches with `seq`.
    fn rescan(&mut self, sub: &[u8], seq: u64, opts: &DaemonOptions) -> Result<(), String> {
        let target = sub.to_vec();
        let builder =
            crate::scan::walk::builder(&self.root, &self.walk_opts, move |rel: &[u8]| {
                is_under(rel, &target) || is_under(&target, rel)
            })
            .map_err(|e| e.to_string())?;
        let root_dev = self.identity.0;
        self.unwatched.retain(|d| !is_under(d, sub));
        for entry in builder.build() {
            let entry = match entry {
                Ok(e) => e,
                // What is below a directory that could not be listed is not watched: a
                // walk that can list it must not trust it.
                Err(err) => match crate::scan::walk::error_path(&err) {
                    Some(p) => {
                        let rel = p.strip_prefix(&self.root).unwrap_or(p);
                        self.unwatched.insert(rel.as_os_str().as_bytes().to_vec());
                        continue;
                    }
                    None => return Err(format!("watching {}: {err}", self.root.display())),
                },
            };
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(&self.root)
                .unwrap_or(entry.path())
                .as_os_str()
                .as_bytes()
                .to_vec();
            if !is_under(&rel, sub) {
                continue;
            }
            // A mount inside the workspace on a file system inotify cannot see is simply not
            // watched, so nothing in it is ever trusted.
            if entry.metadata().is_ok_and(|m| m.dev() != root_dev)
                && blind_fs(entry.path(), opts).is_some()
            {
                self.unwatched.insert(rel);
                continue;
            }
            self.add_watch(rel, seq, opts)?;
        }
        Ok(())
    }

    fn add_watch(&mut self, rel: Vec<u8>, seq: u64, opts: &DaemonOptions) -> Result<(), String> {
        let Some(fd) = &self.fd else { return Ok(()) };
        if self.watched.len() >= opts.max_watches && !self.watched.contains_key(&rel) {
            return Err(format!(
                "watch limit reached ({} directories)",
                opts.max_watches
            ));
        }
        let path = join_rel(&self.root, &rel);
        let wd = match inotify::add_watch(fd, &path, inotify::WatchFlags::from_bits_retain(MASK)) {
            Ok(wd) => wd,
            Err(Errno::NOENT | Errno::NOTDIR | Errno::ACCESS) => {
                self.unwatched.insert(rel);
                return Ok(());
            }
            Err(Errno::NOSPC) => {
                return Err(
                    "watch limit reached (fs.inotify.max_user_watches: raise it with sysctl)"
                        .into(),
                );
            }
            Err(e) => {
                return Err(format!(
                    "inotify_add_watch {}: {}",
                    path.display(),
                    std::io::Error::from(e)
                ));
            }
        };
        // The same directory under a new name (it was renamed): the old name is no longer it.
        if let Some(old) = self.wds.insert(wd, rel.clone())
            && old != rel
            && self.watched.get(&old).is_some_and(|(w, _)| *w == wd)
        {
            self.watched.remove(&old);
        }
        match self.watched.get(&rel) {
            // Watched all along: keep the older stamp.
            Some((w, _)) if *w == wd => {}
            _ => {
                self.watched.insert(rel, (wd, seq));
            }
        }
        Ok(())
    }

    /// Forgets the watches at or below `sub` (a directory deleted or moved away).
    fn drop_watches(&mut self, sub: &[u8]) {
        let gone: Vec<(Vec<u8>, i32)> = self
            .watched
            .iter()
            .filter(|(d, _)| is_under(d, sub))
            .map(|(d, (wd, _))| (d.clone(), *wd))
            .collect();
        for (d, wd) in gone {
            self.watched.remove(&d);
            self.wds.remove(&wd);
            if let Some(fd) = &self.fd {
                // A stale wd (the kernel dropped the watch already) is refused: nothing to do.
                let _ = inotify::remove_watch(fd, wd);
            }
        }
    }

    fn reset(&mut self, seq: u64) {
        self.reset_at = seq;
        self.dirty.clear();
        self.names.clear();
        self.trees.clear();
        self.held = 0;
        self.overflows += 1;
    }

    /// Reads every queued event, stamping it with `seq`.
    pub fn drain(&mut self, seq: u64, opts: &DaemonOptions) -> Vec<Notice> {
        let mut notices = Vec::new();
        let Some(fd) = self.fd.take() else {
            return notices;
        };
        let mut raw: Vec<(i32, u32, Vec<u8>)> = Vec::new();
        let read = read_events(&fd, &mut |wd, mask, name| {
            raw.push((wd, mask, name.to_vec()))
        });
        self.fd = Some(fd);
        if let Err(e) = read {
            self.set_broken(format!("reading inotify events: {e}"));
            notices.push(Notice::Broken(self.broken.clone().unwrap_or_default()));
            return notices;
        }
        let mut rescans: Vec<Vec<u8>> = Vec::new();
        let mut kernel_overflow = false;
        let mut link_made = false;
        let now = Instant::now();
        for (wd, mask, name) in raw {
            if mask & libc::IN_Q_OVERFLOW != 0 {
                kernel_overflow = true;
                continue;
            }
            let Some(dir) = self.wds.get(&wd).cloned() else {
                continue;
            };
            self.events += 1;
            self.held += 1;
            self.touched = true;
            self.changed_since.get_or_insert(now);
            if mask & libc::IN_IGNORED != 0 {
                self.wds.remove(&wd);
                if self.watched.get(&dir).is_some_and(|(w, _)| *w == wd) {
                    self.watched.remove(&dir);
                }
                self.trees.insert(dir.clone(), seq);
                if dir.is_empty() {
                    self.set_broken("the workspace was moved or deleted".into());
                    notices.push(Notice::Broken(self.broken.clone().unwrap_or_default()));
                    return notices;
                }
                continue;
            }
            if name.is_empty() {
                // The directory itself (its mode, or it went away): none of it is vouched for.
                self.dirty.insert(dir.clone(), seq);
            }
            if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
                self.trees.insert(dir.clone(), seq);
                if dir.is_empty() {
                    self.set_broken("the workspace was moved or deleted".into());
                    notices.push(Notice::Broken(self.broken.clone().unwrap_or_default()));
                    return notices;
                }
            }
            if name.is_empty() {
                continue;
            }
            let child = child_path(&dir, &name);
            // inotify names the entry of every change in a directory: the others are unchanged.
            self.names.insert(child.clone(), seq);
            self.changed.insert(child.clone());
            if mask & libc::IN_ISDIR != 0 {
                self.trees.insert(child.clone(), seq);
                if mask & (libc::IN_DELETE | libc::IN_MOVED_FROM) != 0 {
                    self.drop_watches(&child);
                }
                if mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0 {
                    rescans.push(child);
                }
            } else if mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0
                && std::fs::symlink_metadata(join_rel(&self.root, &child))
                    .is_ok_and(|m| m.is_file() && m.nlink() > 1)
            {
                // A new name for a file that has another: `link()` raises no event in the
                // other name's directory, which may be trusted and may now be written through
                // this name. Nothing before this is vouched for.
                link_made = true;
            } else if [b".gitignore".as_slice(), b".ignore", IGNORE_FILE.as_bytes()]
                .contains(&name.as_slice())
            {
                // Directories below may have become part of snapshots: watch them.
                rescans.push(dir.clone());
            }
            if [b".gitignore".as_slice(), b".ignore", IGNORE_FILE.as_bytes()]
                .contains(&name.as_slice())
            {
                self.ignore_changed = seq;
            }
        }
        if kernel_overflow {
            // Directory creations may have been lost with the queue: watch the whole tree again.
            self.reset(seq);
            notices.push(Notice::Overflow);
            rescans = vec![Vec::new()];
        } else if link_made {
            self.reset(seq);
        } else if self.held > opts.max_queued_events {
            self.reset(seq);
            notices.push(Notice::Overflow);
        }
        rescans.sort();
        rescans.dedup();
        for sub in rescans {
            if let Err(why) = self.rescan(&sub, seq, opts) {
                self.set_broken(why);
                notices.push(Notice::Broken(self.broken.clone().unwrap_or_default()));
                break;
            }
        }
        notices
    }

    /// Answers a query (after [`Journal::drain`]): the token to hand out is `token`; `since`
    /// is the caller's. Returns the answer and its list of what changed since `since`: the
    /// directories with an event about themselves or a watch added after it, the entries an
    /// event named after it, the subtrees with a directory event after it, and the directories
    /// not watched. O(watches), with no allocation per watch.
    pub fn query(&mut self, since: Option<Token>, token: Token) -> (QueryAnswer, Vec<u8>) {
        let full = |token: Option<Token>, why: &str| {
            (
                QueryAnswer {
                    token,
                    full: Some(why.to_string()),
                    ..QueryAnswer::default()
                },
                Vec::new(),
            )
        };
        if self.broken.is_none() {
            let now = std::fs::metadata(&self.root).map(|m| (m.dev(), m.ino()));
            if now.ok() != Some(self.identity) {
                self.set_broken("the workspace was moved, replaced or deleted".into());
            }
        }
        if let Some(why) = &self.broken {
            return full(None, why);
        }
        let Some(since) = since else {
            return full(Some(token), "no token recorded with the stat cache");
        };
        if since.instance != token.instance {
            return full(
                Some(token),
                "the daemon restarted since the stat cache's token",
            );
        }
        if since.seq < self.reset_at || since.seq > token.seq {
            return full(
                Some(token),
                "the journal overflowed since the stat cache's token",
            );
        }
        let after = |s: &u64| *s > since.seq;
        let dirs = self
            .dirty
            .iter()
            .filter(|(_, s)| after(s))
            .map(|(d, _)| d.as_slice())
            .chain(
                self.watched
                    .iter()
                    .filter(|(_, (_, added))| after(added))
                    .map(|(d, _)| d.as_slice()),
            );
        let names = self
            .names
            .iter()
            .filter(|(_, s)| after(s))
            .map(|(d, _)| d.as_slice());
        let trees = self
            .trees
            .iter()
            .filter(|(_, s)| after(s))
            .map(|(d, _)| d.as_slice())
            .chain(self.unwatched.iter().map(Vec::as_slice));
        let bytes = crate::scan::daemon_link::encode_changed(dirs, names, trees);
        (
            QueryAnswer {
                token: Some(token),
                full: None,
                changed_len: bytes.len(),
                prune: self.ignore_changed <= since.seq,
                globs: self.walk_opts.ignore_globs.clone(),
            },
            bytes,
        )
    }

    /// Takes the changed paths gathered so far, as the `changed` event shows them.
    pub fn take_changed(&mut self) -> Vec<String> {
        self.changed_since = None;
        let paths = std::mem::take(&mut self.changed);
        // A flood is summarised by directory, so an event stays a readable size.
        const MAX: usize = 1000;
        let list: BTreeSet<Vec<u8>> = if paths.len() > MAX {
            paths
                .into_iter()
                .map(|p| crate::files::split_parent(&p).0.to_vec())
                .collect()
        } else {
            paths
        };
        list.iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    }

    /// The workspace's part of `daemon status --json` (its overlay and automatic snapshots
    /// are the server's to fill in).
    pub fn status(&self) -> WatchStatus {
        WatchStatus {
            workspace: self.name.clone(),
            watching: self.broken.is_none(),
            broken: self.broken.clone(),
            watches: self.watched.len(),
            events: self.events,
            overflows: self.overflows,
            journal: JournalStatus {
                dirty_dirs: self.dirty.len(),
                dirty_entries: self.names.len(),
                dirty_trees: self.trees.len(),
                held_events: self.held,
            },
            overlay: None,
            auto: None,
        }
    }
}

/// The name of the file system at `path` if inotify cannot see changes made on it elsewhere.
fn blind_fs(path: &Path, opts: &DaemonOptions) -> Option<String> {
    let st = rustix::fs::statfs(path).ok()?;
    // f_type is i64 here but narrower on other targets.
    #[allow(clippy::unnecessary_cast)]
    let kind = st.f_type as i64;
    if opts.unsupported_fs.contains(&kind) {
        return Some(format!("type {kind:#x}"));
    }
    BLIND_FS
        .iter()
        .find(|(m, _)| *m == kind)
        .map(|(_, n)| n.to_string())
}
