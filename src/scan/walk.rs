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

use ignore::gitignore::GitignoreBuilder;
use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use super::narrow::Untrusted;
use super::statcache::{DirView, Stat, StatCache, Subtree};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::tree::Kind;

/// Directory names that are never entered.
pub const NEVER_ENTER: [&[u8]; 3] = [b".git", b".jj", b".hg"];
pub use crate::files::TEMP_PREFIX;
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
    /// `super::watch`): their files take the cached stat instead of an `lstat`. The stat
    /// cache's [opaque](StatCache::opaque) subtrees are not read at all: the caller loads a
    /// cache with some only when nothing that decides what is ignored changed.
    pub trusted: Option<Trust>,
}

/// Which directories a walk trusts (see [`WalkOptions::trusted`]).
#[derive(Clone, Debug)]
pub enum Trust {
    /// These directories, and no others (`run`'s own watch).
    Only(std::sync::Arc<rustc_hash::FxHashSet<Vec<u8>>>),
    /// Every directory but these (the watch daemon's answer).
    AllBut(std::sync::Arc<Untrusted>),
}

impl Trust {
    /// Whether `dir`'s entries are known unchanged (but for those
    /// [`trusts_entry`](Trust::trusts_entry) refuses).
    pub fn trusts(&self, dir: &[u8]) -> bool {
        match self {
            Trust::Only(set) => set.contains(dir),
            Trust::AllBut(untrusted) => untrusted.trusts(dir),
        }
    }

    /// In a trusted directory: whether the entry at `path` is unchanged.
    pub fn trusts_entry(&self, path: &[u8]) -> bool {
        match self {
            Trust::Only(_) => true,
            Trust::AllBut(untrusted) => untrusted.trusts_entry(path),
        }
    }
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
    /// The lstat (files and symlinks). For a directory the walk did not read (an
    /// [opaque](StatCache::opaque) subtree, nothing below it listed), its totals packed by
    /// [`Subtree::as_stat`]; all zero for other directories. (One field for both keeps the
    /// entry small: a walk of a million files holds a million of them.)
    pub stat: Stat,
    /// The id and size from the stat cache when the stat matched (the file need not be read);
    /// for an unread subtree, its tree id and size. A snapshot stores what it read here too,
    /// with [`fresh`](Self::fresh) set.
    pub cached: Option<(Id, u64)>,
    /// `cached` holds what this snapshot read, not what the stat cache vouched for. Always
    /// false from the walk.
    pub fresh: bool,
}

impl WalkEntry {
    /// For a directory the walk did not read: its totals.
    pub fn subtree(&self) -> Option<Subtree> {
        match self.ty {
            EntryType::Dir => Subtree::from_stat(&self.stat),
            _ => None,
        }
    }
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
/// The cache's opaque subtrees are not entered; each is listed as one entry.
pub fn walk(root: &Path, opts: &WalkOptions, cache: &StatCache) -> Result<WalkOutput> {
    let skip: rustc_hash::FxHashSet<Vec<u8>> =
        cache.opaque().iter().map(|o| o.path.clone()).collect();
    let skip = std::sync::Arc::new(skip);
    let skip_in_walk = skip.clone();
    let builder = builder(root, opts, move |rel| !skip_in_walk.contains(rel))?;
    let sink = Mutex::new(WalkOutput::default());
    let mut vb = VisitorBuilder {
        root,
        cache,
        trusted: opts.trusted.as_ref(),
        sink: &sink,
    };
    builder.build_parallel().visit(&mut vb);
    let mut out = sink.into_inner().unwrap_or_else(|p| p.into_inner());
    // Grown by doubling, the list has up to twice the room it needs (21 MB at a million
    // files), held until the snapshot's trees are built. Large blocks are mapped, so giving
    // back the rest moves nothing.
    out.entries.shrink_to_fit();
    if !skip.is_empty() {
        // An opaque subtree is only taken where the walk listed its parent (it always does: a
        // directory the daemon vouches for cannot vanish unnoticed; this keeps the tree whole
        // even so).
        let listed: rustc_hash::FxHashSet<&[u8]> = out
            .entries
            .iter()
            .filter(|e| e.ty == EntryType::Dir)
            .map(|e| e.path.as_slice())
            .chain([&b""[..]])
            .collect();
        let opaque: Vec<WalkEntry> = cache
            .opaque()
            .iter()
            .filter(|o| listed.contains(crate::files::split_parent(&o.path).0))
            .map(|o| WalkEntry {
                path: o.path.clone(),
                ty: EntryType::Dir,
                stat: o.subtree.as_stat(),
                cached: Some((o.tree, o.size)),
                fresh: false,
            })
            .collect();
        out.entries.extend(opaque);
    }
    Ok(out)
}

/// A walker of `root` with rewind's rules (see the module's doc). `enter` further limits the
/// directories entered (given their path relative to `root`): the watch daemon walks only the
/// part of a tree that changed, with the ignore files above it still applied.
pub fn builder(
    root: &Path,
    opts: &WalkOptions,
    enter: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
) -> Result<WalkBuilder> {
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
    // A glob that ends in '/' only ever matches directories, yet as an override it is matched
    // against every file too: with the default globs (node_modules/, target/...) that was 5%
    // of a warm snapshot's CPU at a million files. Those go to a matcher asked only about
    // directories, in `filter_entry`; the walker skips what either rejects, as it would an
    // override (both win over a `.gitignore` that re-includes).
    let (dir_globs, globs): (Vec<&String>, Vec<&String>) =
        opts.ignore_globs.iter().partition(|g| g.ends_with('/'));
    let bad_glob = |glob: Option<&String>, e: ignore::Error| Error::BadGlob {
        list: crate::error::GlobList::Ignore,
        glob: glob.cloned(),
        why: e.to_string(),
    };
    if !globs.is_empty() {
        let mut ob = OverrideBuilder::new(root);
        for g in globs {
            ob.add(&format!("!{g}")).map_err(|e| bad_glob(Some(g), e))?;
        }
        builder.overrides(ob.build().map_err(|e| bad_glob(None, e))?);
    }
    let dir_rules = match dir_globs.is_empty() {
        true => None,
        false => {
            let mut gb = GitignoreBuilder::new(root);
            for g in dir_globs {
                gb.add_line(None, g).map_err(|e| bad_glob(Some(g), e))?;
            }
            Some(gb.build().map_err(|e| bad_glob(None, e))?)
        }
    };
    let exclude = opts.exclude.clone();
    let base = root.to_path_buf();
    builder.filter_entry(move |e| {
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if is_dir && e.depth() > 0 {
            if NEVER_ENTER.contains(&e.file_name().as_bytes()) {
                return false;
            }
            if exclude.as_deref() == Some(e.path()) {
                return false;
            }
            if dir_rules
                .as_ref()
                .is_some_and(|r| r.matched(e.path(), true).is_ignore())
            {
                return false;
            }
            let rel = e.path().strip_prefix(&base).unwrap_or(e.path());
            if !enter(rel.as_os_str().as_bytes()) {
                return false;
            }
        }
        true
    });
    Ok(builder)
}

struct VisitorBuilder<'a> {
    root: &'a Path,
    cache: &'a StatCache,
    trusted: Option<&'a Trust>,
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
            dir_trusted: false,
            dir_fd: None,
        })
    }
}

/// Collects entries into a thread-local buffer, merged into the shared sink on drop, so the
/// walker threads never contend on a lock per entry.
struct Visitor<'a> {
    root: &'a Path,
    cache: &'a StatCache,
    trusted: Option<&'a Trust>,
    sink: &'a Mutex<WalkOutput>,
    out: WalkOutput,
    /// Whether `last_dir` is trusted.
    dir_trusted: bool,
    /// The directory looked up last and its cache: a walker thread gets a directory's entries
    /// one after another, so this saves a hash lookup per file.
    last_dir: Option<(Vec<u8>, Option<DirView<'a>>)>,
    /// That directory, open, for `fstatat`: an lstat by full path walks every component of
    /// it again, which was a fifth of a warm snapshot of the Linux tree.
    dir_fd: Option<std::os::fd::OwnedFd>,
}

/// Entries a walker thread gathers before it moves them to the shared sink. Moving them all
/// at the end instead copied one thread's share into the other's at once: half the walk's
/// entries held twice at its peak (90 MB at a million files).
const FLUSH_ENTRIES: usize = 4096;

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        let out = std::mem::take(&mut self.out);
        sink.entries.extend(out.entries);
        sink.errors.extend(out.errors);
        sink.linked_dirs.extend(out.linked_dirs);
        sink.temps.extend(out.temps);
    }
}

impl Visitor<'_> {
    fn rel<'p>(&self, path: &'p Path) -> &'p [u8] {
        // The walker's paths are the root joined with names, so a byte prefix is enough; a
        // `Path::strip_prefix` (component by component) was 2% of a warm snapshot.
        let (bytes, root) = (
            path.as_os_str().as_bytes(),
            self.root.as_os_str().as_bytes(),
        );
        match bytes.strip_prefix(root) {
            Some(rest) if root.ends_with(b"/") => rest,
            Some(rest) if rest.is_empty() => rest,
            Some(rest) if rest[0] == b'/' => &rest[1..],
            _ => path
                .strip_prefix(self.root)
                .unwrap_or(path)
                .as_os_str()
                .as_bytes(),
        }
    }
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: std::result::Result<DirEntry, ignore::Error>) -> WalkState {
        if self.out.entries.len() >= FLUSH_ENTRIES {
            let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
            sink.entries.append(&mut self.out.entries);
        }
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
                fresh: false,
            });
            return WalkState::Continue;
        }
        let (dir, name) = crate::files::split_parent(&rel);
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
            self.dir_trusted = self.trusted.is_some_and(|t| t.trusts(dir));
        }
        let view = self.last_dir.as_ref().and_then(|(_, v)| *v);
        // In a trusted directory a cached, settled entry of the same type needs no lstat.
        if self.dir_trusted
            && self.trusted.is_some_and(|t| t.trusts_entry(&rel))
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
                fresh: false,
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
            fresh: false,
        });
        WalkState::Continue
    }
}

/// Opens a directory for `fstatat`, never through a symlink.
fn open_dir(dir: &Path) -> Option<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

/// `lstat` of `name` in the open directory `dir`; None on any error (the caller falls back to
/// a path lstat, which reports the error properly).
fn lstat_at(dir: &std::os::fd::OwnedFd, name: &[u8]) -> Option<rustix::fs::Stat> {
    let name = std::ffi::OsStr::from_bytes(name);
    rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()
}

/// The path an error of the walker is about, if it names one.
pub fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths a walk finds, sorted.
    fn walked(root: &Path, opts: &WalkOptions) -> Vec<String> {
        let out = walk(root, opts, &StatCache::default()).unwrap();
        let mut paths: Vec<String> = out
            .entries
            .iter()
            .map(|e| String::from_utf8(e.path.clone()).unwrap())
            .collect();
        paths.sort();
        paths
    }

    /// Globs ending in '/' are matched apart from the others, against directories only: the
    /// walk must find exactly what it finds with every glob an override of ignore's walker,
    /// whatever the `.gitignore` files say (overrides win over their re-includes).
    #[test]
    fn directory_globs_leave_out_what_the_same_overrides_leave_out() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        for (path, body) in [
            ("node_modules/a/index.js", "x"),
            ("src/node_modules/b.js", "x"),
            ("src/node_modules.txt", "x"),
            ("lib/node_modules", "a file of that name"),
            ("target/debug/app", "x"),
            ("sub/target/core.c", "x"),
            ("build/out.o", "x"),
            ("sub/build/keep.o", "x"),
            ("logs/a.log", "x"),
            ("a.log/inner.txt", "x"),
            ("notes.tmp", "x"),
            ("src/main.rs", "x"),
            (".gitignore", "!build/\n*.tmp\n"),
            ("sub/.gitignore", "!target/\n"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        let globs: Vec<String> = ["node_modules/", "/target/", "build/", "*.log", "a.log/"]
            .map(String::from)
            .to_vec();
        let found = walked(
            root,
            &WalkOptions {
                ignore_globs: globs.clone(),
                ..WalkOptions::default()
            },
        );

        // The same globs, every one an override, on ignore's walker with rewind's rules.
        let mut ob = OverrideBuilder::new(root);
        for g in &globs {
            ob.add(&format!("!{g}")).unwrap();
        }
        let mut reference = builder(root, &WalkOptions::default(), |_| true).unwrap();
        reference.overrides(ob.build().unwrap());
        let mut expected: Vec<String> = reference
            .build()
            .filter_map(|e| e.ok())
            .filter(|e| e.depth() > 0)
            .map(|e| {
                let rel = e.path().strip_prefix(root).unwrap();
                rel.to_str().unwrap().to_string()
            })
            .collect();
        expected.sort();
        assert_eq!(found, expected);
        // And the cases this is about, by name.
        for kept in [
            "lib/node_modules",
            "sub/target/core.c",
            "src/node_modules.txt",
        ] {
            assert!(found.iter().any(|p| p == kept), "{kept} missing: {found:?}");
        }
        for gone in [
            "node_modules",
            "src/node_modules",
            "target",
            "build",
            "logs/a.log",
        ] {
            assert!(!found.iter().any(|p| p == gone), "{gone} kept: {found:?}");
        }
    }
}
