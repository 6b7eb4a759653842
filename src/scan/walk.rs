//! The parallel walk: ripgrep's `ignore` walker with rewind's rules.
//!
//! Rules, and why:
//! - `.gitignore` files are honoured outside git repositories too (`require_git(false)`): a
//!   project that ignores `target/` wants that whether or not it is a git checkout.
//! - `.ignore` and `.rewindignore` add to them; `--ignore` globs add more.
//! - Only the workspace's own ignore files count (no parent directories, no global git
//!   excludes): a snapshot must mean the same thing on every machine.
//! - `.git`, `.jj` and `.hg` directories are never entered: they are other tools' stores.
//! - Symlinks are never followed; each entry gets exactly one lstat, reused by everything after.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use super::statcache::{DirView, Stat, StatCache};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::tree::Kind;

/// Directory names that are never entered.
pub const NEVER_ENTER: [&[u8]; 3] = [b".git", b".jj", b".hg"];
/// The prefix of rewind's own temporary files (a file is written beside its target, then
/// renamed over it). A process killed in between leaves one behind; snapshots never take them,
/// and the walk lists them so that the next command writing into the workspace removes them.
pub const TEMP_PREFIX: &str = ".rewind-tmp-";
/// The per-workspace ignore file rewind reads besides .gitignore and .ignore.
pub const IGNORE_FILE: &str = ".rewindignore";

/// What the walk needs to know.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Extra gitignore-style globs to ignore.
    pub ignore_globs: Vec<String>,
    /// A directory to leave out entirely (the store, when it lives inside the workspace).
    pub exclude: Option<PathBuf>,
    /// Walker threads (0: one per core).
    pub threads: usize,
    /// Directories whose entries are known unchanged since the stat cache was written (see
    /// [`super::watch`]): their files take the cached stat instead of an `lstat`.
    pub trusted: Option<std::sync::Arc<rustc_hash::FxHashSet<Vec<u8>>>>,
}

/// The type of a walked entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryType {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A directory.
    Dir,
    /// A fifo, socket or device: skipped with a warning.
    Special,
}

/// One entry found by the walk.
#[derive(Clone, Debug)]
pub struct WalkEntry {
    /// Path relative to the workspace root, '/'-separated raw bytes.
    pub path: Vec<u8>,
    /// Its type.
    pub ty: EntryType,
    /// The lstat (files and symlinks only).
    pub stat: Stat,
    /// The id and size from the stat cache when the stat matched (the file need not be read).
    pub cached: Option<(Id, u64)>,
}

/// The walk's result.
#[derive(Default)]
pub struct WalkOutput {
    /// All entries below the root (not the root itself), in no particular order.
    pub entries: Vec<WalkEntry>,
    /// Paths (relative) that could not be read, with the error.
    pub errors: Vec<(Vec<u8>, String)>,
    /// Directories holding a file with other hard links (a change through another name is
    /// not seen by watching this directory).
    pub linked_dirs: rustc_hash::FxHashSet<Vec<u8>>,
    /// rewind's own temporary files ([`TEMP_PREFIX`]) left by a killed process: never part of a
    /// snapshot.
    pub temps: Vec<Vec<u8>>,
}

/// Walks `root` in parallel, comparing each file's lstat with `cache` in the walker's threads.
pub fn walk(root: &Path, opts: &WalkOptions, cache: &StatCache) -> Result<WalkOutput> {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .follow_links(false)
        .same_file_system(false)
        .threads(opts.threads);
    builder.add_custom_ignore_filename(IGNORE_FILE);
    if !opts.ignore_globs.is_empty() {
        let mut ob = OverrideBuilder::new(root);
        for g in &opts.ignore_globs {
            ob.add(&format!("!{g}")).map_err(|e| Error::BadGlob {
                list: crate::error::GlobList::Ignore,
                glob: Some(g.clone()),
                why: e.to_string(),
            })?;
        }
        builder.overrides(ob.build().map_err(|e| Error::BadGlob {
            list: crate::error::GlobList::Ignore,
            glob: None,
            why: e.to_string(),
        })?);
    }
    let exclude = opts.exclude.clone();
    builder.filter_entry(move |e| {
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if is_dir && e.depth() > 0 {
            if NEVER_ENTER.contains(&e.file_name().as_bytes()) {
                return false;
            }
            if exclude.as_deref() == Some(e.path()) {
                return false;
            }
        }
        true
    });

    let sink = Mutex::new(WalkOutput::default());
    let mut vb = VisitorBuilder {
        root,
        cache,
        trusted: opts.trusted.as_deref(),
        sink: &sink,
    };
    builder.build_parallel().visit(&mut vb);
    let out = sink.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(out)
}

struct VisitorBuilder<'a> {
    root: &'a Path,
    cache: &'a StatCache,
    trusted: Option<&'a rustc_hash::FxHashSet<Vec<u8>>>,
    sink: &'a Mutex<WalkOutput>,
}

impl<'s> ParallelVisitorBuilder<'s> for VisitorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            cache: self.cache,
            trusted: self.trusted,
            sink: self.sink,
            out: WalkOutput::default(),
            last_dir: None,
            dir_fd: None,
        })
    }
}

/// Collects entries into a thread-local buffer, merged into the shared sink on drop, so the
/// walker threads never contend on a lock per entry.
struct Visitor<'a> {
    root: &'a Path,
    cache: &'a StatCache,
    trusted: Option<&'a rustc_hash::FxHashSet<Vec<u8>>>,
    sink: &'a Mutex<WalkOutput>,
    out: WalkOutput,
    /// The directory looked up last and its cache: a walker thread gets a directory's entries
    /// one after another, so this saves a hash lookup per file.
    last_dir: Option<(Vec<u8>, Option<DirView<'a>>)>,
    /// That directory, open, for `fstatat`: an lstat by full path walks every component of
    /// it again, which was a fifth of a warm snapshot of the Linux tree.
    dir_fd: Option<std::os::fd::OwnedFd>,
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        let out = std::mem::take(&mut self.out);
        if sink.entries.is_empty() {
            sink.entries = out.entries;
        } else {
            sink.entries.extend(out.entries);
        }
        sink.errors.extend(out.errors);
        sink.linked_dirs.extend(out.linked_dirs);
        sink.temps.extend(out.temps);
    }
}

impl Visitor<'_> {
    fn rel<'p>(&self, path: &'p Path) -> &'p [u8] {
        path.strip_prefix(self.root)
            .unwrap_or(path)
            .as_os_str()
            .as_bytes()
    }
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: std::result::Result<DirEntry, ignore::Error>) -> WalkState {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                let path = error_path(&err)
                    .map(|p| self.rel(p).to_vec())
                    .unwrap_or_default();
                self.out.errors.push((path, err.to_string()));
                return WalkState::Continue;
            }
        };
        if entry.depth() == 0 {
            return WalkState::Continue;
        }
        let rel = self.rel(entry.path()).to_vec();
        let Some(ft) = entry.file_type() else {
            return WalkState::Continue;
        };
        if ft.is_dir() {
            self.out.entries.push(WalkEntry {
                path: rel,
                ty: EntryType::Dir,
                stat: Stat::default(),
                cached: None,
            });
            return WalkState::Continue;
        }
        let (dir, name) = crate::util::split_parent(&rel);
        if name.starts_with(TEMP_PREFIX.as_bytes()) {
            self.out.temps.push(rel);
            return WalkState::Continue;
        }
        if self
            .last_dir
            .as_ref()
            .is_none_or(|(d, _)| d.as_slice() != dir)
        {
            self.last_dir = Some((dir.to_vec(), self.cache.dir(dir)));
            self.dir_fd = entry.path().parent().and_then(open_dir);
        }
        let view = self.last_dir.as_ref().and_then(|(_, v)| *v);
        // In a trusted directory a cached, settled entry of the same type needs no lstat.
        if self.trusted.is_some_and(|t| t.contains(dir))
            && let Some(e) = view.and_then(|v| v.get(name))
            && !e.racy()
            && match e.kind() {
                Kind::File | Kind::Executable => ft.is_file(),
                Kind::Symlink => ft.is_symlink(),
                Kind::Dir => false,
            }
        {
            let ty = if ft.is_file() {
                EntryType::File
            } else {
                EntryType::Symlink
            };
            self.out.entries.push(WalkEntry {
                path: rel,
                ty,
                stat: e.stat(),
                cached: Some((e.id(), e.size())),
            });
            return WalkState::Continue;
        }
        // The one lstat of this entry (the walker does not follow links), relative to the open
        // directory where there is one.
        let raw = self.dir_fd.as_ref().and_then(|fd| lstat_at(fd, name));
        // st_nlink is u64 here but u32 on other targets.
        #[allow(clippy::useless_conversion)]
        let (stat, nlink) = match raw {
            Some(st) => (Stat::from_raw(&st), u64::from(st.st_nlink)),
            None => match entry.metadata() {
                Ok(m) => (
                    Stat::from_metadata(&m),
                    std::os::unix::fs::MetadataExt::nlink(&m),
                ),
                Err(err) => {
                    self.out.errors.push((rel, err.to_string()));
                    return WalkState::Continue;
                }
            },
        };
        let ty = if ft.is_file() {
            EntryType::File
        } else if ft.is_symlink() {
            EntryType::Symlink
        } else {
            EntryType::Special
        };
        if ty == EntryType::File && nlink > 1 {
            self.out.linked_dirs.insert(dir.to_vec());
        }
        let cached = match ty {
            EntryType::File | EntryType::Symlink => view
                .and_then(|v| v.get(name))
                .filter(|e| e.vouches_for(&stat))
                .map(|e| (e.id(), e.size())),
            _ => None,
        };
        self.out.entries.push(WalkEntry {
            path: rel,
            ty,
            stat,
            cached,
        });
        WalkState::Continue
    }
}

/// Opens a directory for `fstatat`, never through a symlink.
fn open_dir(dir: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: open with a valid C string; the descriptor is owned from here on.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    // SAFETY: a descriptor open() just returned, owned by nobody else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// `lstat` of `name` in the open directory `dir`; None on any error (the caller falls back to
/// a path lstat, which reports the error properly).
fn lstat_at(dir: &std::os::fd::OwnedFd, name: &[u8]) -> Option<libc::stat> {
    use std::os::fd::AsRawFd;
    let c = std::ffi::CString::new(name).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstatat fills `st` on success, which is the only case it is read.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    // SAFETY: rc == 0 means the kernel wrote the whole struct.
    (rc == 0).then(|| unsafe { st.assume_init() })
}

fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}
