//! The namespace backend: overlayfs in a private user and mount namespace.
//!
//! The child process that runs the command unshares a user and a mount namespace (its uid and
//! gid mapped to the caller's own, so files it creates belong to the caller), mounts overlayfs
//! over the workspace's own path with the workspace as the lower layer and the overlay's
//! `upper/` and `work/` directories (in the store) as the upper layer, changes to the
//! caller's relative directory, and executes the command. The mount exists only in that
//! namespace: nothing the command does reaches the workspace, and it sees the workspace at the
//! same absolute path, so build tools with absolute paths keep working.
//!
//! The overlay's changes are exactly the upper directory: regular files and symlinks are the
//! new content (a `chmod` copies the file up), character devices 0:0 are whiteouts
//! (deletions), and directories carrying the `user.overlay.opaque` attribute replace the lower
//! directory instead of merging with it (`userxattr` puts overlayfs's attributes in the
//! `user.` namespace, as an unprivileged mount must). Renaming a lower directory is refused by
//! the kernel (`redirect_dir=nofollow` in a user namespace) and tools fall back to copying, so
//! no redirect ever needs following.

use std::ffi::{CString, OsStr};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use redb::ReadableTable;
use rustc_hash::FxHashMap;

use super::OverlayRecord;
use crate::error::{Error, IoContext, Result};
use crate::files::join_rel;
use crate::id::Id;
use crate::restore::SnapshotIgnores;
use crate::scan::walk::{NEVER_ENTER, TEMP_PREFIX};
use crate::store::Store;
use crate::store::snapshot::{SnapshotRecord, TreeStats};
use crate::store::tables::{OVERLAYS, TREES};
use crate::store::tree::{Kind, Tree, TreeEntry};

/// Whether the namespace backend works here. The answer is kept in the store's overlays
/// directory, so the probe (a namespace and a mount) runs once per store. `refused` (the
/// caller's reason to treat the backend as unavailable: tests of the fallback, machines where
/// the probe itself misbehaves) answers without probing.
pub fn probe(store: &Store, refused: Option<&str>) -> std::result::Result<(), String> {
    if let Some(why) = refused {
        return Err(why.to_string());
    }
    let dir = super::overlays_dir(store);
    let cached = dir.join("namespace-probe");
    if let Ok(text) = fs::read_to_string(&cached) {
        return match text.strip_prefix("ok") {
            Some(_) => Ok(()),
            None => Err(text.trim().to_string()),
        };
    }
    let result = probe_now(&dir);
    let text = match &result {
        Ok(()) => "ok\n".to_string(),
        Err(why) => format!("{why}\n"),
    };
    let _ = fs::write(&cached, text);
    result
}

fn probe_now(dir: &Path) -> std::result::Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("user namespaces and overlayfs are Linux features".into());
    }
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".probe-")
        .tempdir_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let layers = Layers {
        lower: tmp.path().join("lower"),
        upper: tmp.path().join("upper"),
        work: tmp.path().join("work"),
        pin: None,
    };
    for d in [&layers.lower, &layers.upper, &layers.work] {
        fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.args(["-c", ": > probe"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    prepare(&mut cmd, &layers, &layers.lower).map_err(|e| e.to_string())?;
    let status = cmd
        .status()
        .map_err(|e| format!("entering a user and mount namespace with overlayfs failed: {e}"))?;
    let landed = layers.upper.join("probe").exists() && !layers.lower.join("probe").exists();
    let result = if status.success() && landed {
        Ok(())
    } else {
        Err("overlayfs in a user namespace did not isolate a write".into())
    };
    let _ = super::remove_tree(tmp.path());
    result
}

/// The directories of an overlayfs mount; the mount goes over `lower` itself.
struct Layers {
    lower: PathBuf,
    /// The pinned layer (see [`refresh_pin`]), between the upper directory and `lower`.
    pin: Option<PathBuf>,
    upper: PathBuf,
    work: PathBuf,
}

pub(super) fn upper_dir(store: &Store, rec: &OverlayRecord) -> PathBuf {
    rec.dir(store).join("upper")
}

fn pin_dir(store: &Store, rec: &OverlayRecord) -> PathBuf {
    rec.dir(store).join("pin")
}

/// The workspace's content where it differs from the overlay's base (None: absent there),
/// as seen when the pinned layer was refreshed.
pub type Pinned = FxHashMap<Vec<u8>, Option<(Kind, Id)>>;

/// Refreshes the pinned layer, the lower layer between the upper directory and the
/// workspace: the base's version of every path the workspace changed since the base, and a
/// whiteout over every top-most path the workspace added. Through it the command sees the
/// base snapshot, not the live workspace. Costs a warm status of the workspace, plus writes
/// only where the set of changed paths moved since the last refresh. The caller holds the
/// overlay's run lock (nothing has the layer mounted).
pub fn refresh_pin(store: &Store, rec: &OverlayRecord) -> Result<Pinned> {
    let root = rec.workspace_path();
    let d = crate::compare::live_changes(store, rec.base, &root)?;
    let pinned: Pinned = d
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.new.map(|n| (n.kind, n.id))))
        .collect();
    // What the layer holds depends on the changed paths and the base's side only.
    let mut key = blake3::Hasher::new();
    for c in &d.changes {
        key.update(&c.path);
        key.update(&[0, c.new.is_some() as u8]);
        if let Some(o) = c.old {
            key.update(&[o.kind as u8]);
            key.update(&o.id.0);
        }
    }
    let key = key.finalize().to_hex().to_string();
    let dir = pin_dir(store, rec);
    let key_file = rec.dir(store).join("pin.key");
    if dir.is_dir() && fs::read_to_string(&key_file).ok().as_deref() == Some(key.as_str()) {
        return Ok(pinned);
    }
    let fresh = rec.dir(store).join("pin.new");
    if fs::symlink_metadata(&fresh).is_ok() {
        super::remove_tree(&fresh)?;
    }
    fs::create_dir(&fresh).at(&fresh)?;
    let reader = store.reader()?;
    let base_root = reader.snapshot_record(&rec.base)?.root;
    for c in &d.changes {
        if let Some(o) = c.old {
            let p = checked_upper_path(&fresh, &c.path)?;
            crate::restore::write_entry(&reader, &p, o.kind, &o.id)?;
        }
    }
    let mut hidden = rustc_hash::FxHashSet::default();
    for c in d.changes.iter().filter(|c| c.old.is_none()) {
        // The top-most path the base lacks; none when a base file is pinned above it.
        let mut q = Vec::new();
        let mut top = None;
        for comp in c.path.split(|&b| b == b'/') {
            q = crate::files::child_path(&q, comp);
            match reader.lookup(&base_root, &q)? {
                None => {
                    top = Some(q.clone());
                    break;
                }
                Some(e) if e.kind != Kind::Dir => break,
                Some(_) => {}
            }
        }
        if let Some(t) = top
            && hidden.insert(t.clone())
        {
            let p = checked_upper_path(&fresh, &t)?;
            make_whiteout(&p)?;
        }
    }
    if fs::symlink_metadata(&dir).is_ok() {
        super::remove_tree(&dir)?;
    }
    fs::rename(&fresh, &dir).at(&dir)?;
    fs::write(&key_file, key).at(&key_file)?;
    Ok(pinned)
}

/// overlayfs's whiteout: a 0:0 character device, which Linux 5.8 and later let anyone make.
fn make_whiteout(p: &Path) -> Result<()> {
    let cpath = CString::new(p.as_os_str().as_bytes())
        .map_err(|_| Error::NulInPath(p.display().to_string()))?;
    // SAFETY: mknod of a 0:0 character device on a path this process owns.
    if unsafe { libc::mknod(cpath.as_ptr(), libc::S_IFCHR, 0) } != 0 {
        let e = io::Error::last_os_error();
        return Err(Error::WhiteoutUnsupported {
            path: p.to_path_buf(),
            why: e,
        });
    }
    Ok(())
}

/// Makes `cmd` run inside the overlay, starting at `rel_cwd` below the workspace.
pub fn enter(
    cmd: &mut std::process::Command,
    store: &Store,
    rec: &OverlayRecord,
    rel_cwd: &Path,
) -> Result<()> {
    let lower = rec.workspace_path();
    let dir = rec.dir(store);
    if dir.starts_with(&lower) {
        return Err(Error::StoreInsideWorkspace {
            store: store.dir().to_path_buf(),
            workspace: lower,
        });
    }
    let layers = Layers {
        upper: dir.join("upper"),
        work: dir.join("work"),
        pin: Some(dir.join("pin")),
        lower: lower.clone(),
    };
    let cwd = lower.join(rel_cwd);
    prepare(cmd, &layers, if cwd.is_dir() { &cwd } else { &lower })
}

/// Escapes a path for overlayfs's comma-separated, colon-listed options.
fn option_path(p: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in p.as_os_str().as_bytes() {
        if matches!(b, b',' | b':' | b'\\') {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

fn cstring(bytes: Vec<u8>, what: &str) -> Result<CString> {
    CString::new(bytes).map_err(|_| Error::NulInPath(what.to_string()))
}

/// Installs the namespace entry and the mount as the child's last steps before `exec`.
fn prepare(cmd: &mut std::process::Command, layers: &Layers, cwd: &Path) -> Result<()> {
    // Everything the child needs is prepared here: between fork and exec only
    // async-signal-safe calls are allowed, so no allocation happens there.
    // SAFETY: geteuid and getegid cannot fail.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let uid_map = format!("{uid} {uid} 1");
    let gid_map = format!("{gid} {gid} 1");
    let mut opts = b"lowerdir=".to_vec();
    if let Some(pin) = &layers.pin {
        opts.extend(option_path(pin));
        opts.push(b':');
    }
    opts.extend(option_path(&layers.lower));
    opts.extend(b",upperdir=");
    opts.extend(option_path(&layers.upper));
    opts.extend(b",workdir=");
    opts.extend(option_path(&layers.work));
    opts.extend(b",userxattr");
    let opts = cstring(opts, "an overlay path")?;
    let target = cstring(
        layers.lower.as_os_str().as_bytes().to_vec(),
        "the workspace path",
    )?;
    let cwd = cstring(cwd.as_os_str().as_bytes().to_vec(), "the working directory")?;
    let closure = move || -> io::Result<()> {
        // SAFETY: only raw system calls on data prepared before the fork.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
                return Err(io::Error::last_os_error());
            }
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", uid_map.as_bytes())?;
            write_proc(c"/proc/self/gid_map", gid_map.as_bytes())?;
            // Private propagation: the mount below must never reach another namespace.
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            );
            if libc::mount(
                c"overlay".as_ptr(),
                target.as_ptr(),
                c"overlay".as_ptr(),
                0,
                opts.as_ptr().cast(),
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::chdir(cwd.as_ptr()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the closure makes only async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(closure);
    }
    Ok(())
}

/// Writes a small /proc file with raw system calls (safe between fork and exec).
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: the caller is between fork and exec; these are plain system calls.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            let e = io::Error::last_os_error();
            // Kernels before 3.19 have no setgroups file; nothing to deny there.
            if e.raw_os_error() == Some(libc::ENOENT) {
                return Ok(());
            }
            return Err(e);
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(e);
        }
    }
    Ok(())
}

/// What the upper directory holds.
#[derive(Default, Debug)]
struct Upper {
    /// Per directory (relative path), its upper entries by name.
    dirs: FxHashMap<Vec<u8>, Vec<(Vec<u8>, UpperEntry)>>,
    /// Directories that hide the lower one (opaque).
    opaque: rustc_hash::FxHashSet<Vec<u8>>,
    /// Regular files and symlinks, in the order their ids come back from the store.
    files: Vec<Vec<u8>>,
    /// Ignored entries written by the overlay (top-most paths).
    ignored: Vec<Vec<u8>>,
}

#[derive(Debug, Clone, Copy)]
enum UpperEntry {
    /// A regular file or symlink: index into `files`, and its kind.
    Blob(usize, Kind),
    /// A directory.
    Dir,
    /// A whiteout: the lower entry is deleted.
    Whiteout,
}

/// Reads the upper directory. Entries the base's ignore rules exclude (build outputs) are
/// listed apart, top-most only, and neither entered nor stored: they are no part of the state.
fn scan_upper(upper: &Path, ignores: &mut SnapshotIgnores) -> Result<Upper> {
    let mut out = Upper::default();
    let mut stack: Vec<Vec<u8>> = vec![Vec::new()];
    while let Some(rel) = stack.pop() {
        let dir = join_rel(upper, &rel);
        let mut entries = Vec::new();
        for e in fs::read_dir(&dir).at(&dir)? {
            let e = e.at(&dir)?;
            let name = e.file_name().as_bytes().to_vec();
            let meta = e.metadata().at(e.path())?;
            let ft = meta.file_type();
            let child = crate::files::child_path(&rel, &name);
            if ignores.excluded(&child, ft.is_dir()) {
                if ft.is_dir() && !NEVER_ENTER.contains(&name.as_slice()) {
                    ignored_below(&e.path(), child, &mut out.ignored);
                } else if !ft.is_char_device() {
                    out.ignored.push(child);
                }
                continue;
            }
            let entry = if ft.is_dir() {
                if NEVER_ENTER.contains(&name.as_slice()) {
                    continue;
                }
                if is_opaque(&e.path()) {
                    out.opaque.insert(child.clone());
                }
                stack.push(child);
                UpperEntry::Dir
            } else if ft.is_char_device() && meta.rdev() == 0 {
                UpperEntry::Whiteout
            } else if ft.is_file() || ft.is_symlink() {
                if name.starts_with(TEMP_PREFIX.as_bytes()) {
                    continue;
                }
                let kind = if ft.is_symlink() {
                    Kind::Symlink
                } else if meta.permissions().mode() & 0o100 != 0 {
                    Kind::Executable
                } else {
                    Kind::File
                };
                out.files.push(child);
                UpperEntry::Blob(out.files.len() - 1, kind)
            } else {
                // fifos, sockets, devices: not snapshotted anywhere in rewind.
                continue;
            };
            entries.push((name, entry));
        }
        out.dirs.insert(rel, entries);
    }
    Ok(out)
}

/// Files an ignored directory holds in the upper layer (what the overlay wrote there), listed
/// one by one so that a review names `target/debug/app`, not `target`; past
/// [`IGNORED_LISTED`] of them, or when the walk fails, the directory itself (an overlay record
/// holds the list). An empty directory is listed itself.
fn ignored_below(abs: &Path, rel: Vec<u8>, out: &mut Vec<Vec<u8>>) {
    let mut found = Vec::new();
    let mut stack = vec![(abs.to_path_buf(), rel.clone())];
    while let Some((dir, rel_dir)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            out.push(rel);
            return;
        };
        for e in entries {
            let Some((e, ft)) = e.ok().and_then(|e| e.file_type().ok().map(|ft| (e, ft))) else {
                out.push(rel);
                return;
            };
            let child = crate::files::child_path(&rel_dir, e.file_name().as_bytes());
            if ft.is_dir() {
                stack.push((e.path(), child));
            } else if ft.is_file() || ft.is_symlink() {
                found.push(child);
            }
            if found.len() > IGNORED_LISTED {
                out.push(rel);
                return;
            }
        }
    }
    if found.is_empty() {
        out.push(rel);
    } else {
        found.sort();
        out.extend(found);
    }
}

/// Files of one ignored directory listed by name at most (see [`ignored_below`]).
const IGNORED_LISTED: usize = 200;

fn is_opaque(p: &Path) -> bool {
    let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    let mut buf = [0u8; 4];
    // SAFETY: a read of at most 4 bytes into a buffer of 4.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            c"user.overlay.opaque".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n > 0 && buf[0] == b'y'
}

/// Builds the state tree (base edited by the upper directory) and stores it as a snapshot.
/// The state's id and the ignored paths the overlay wrote (see [`super::OverlayRecord::ignored`]).
pub fn state(store: &Store, rec: &OverlayRecord) -> Result<(Id, Vec<Vec<u8>>)> {
    let upper = upper_dir(store, rec);
    let (scanned, base) = {
        let reader = store.reader()?;
        let base = reader.snapshot_record(&rec.base)?;
        let mut ignores = SnapshotIgnores::new(&reader, &base)?;
        (scan_upper(&upper, &mut ignores)?, base)
    };
    let stored = crate::snapshot::store_files(store, &upper, &scanned.files)?;
    let txn = stored.txn;
    let reader = store.reader()?;
    let mut ed = Editor {
        reader: &reader,
        upper: &scanned,
        ids: &stored.ids,
        new_trees: Vec::new(),
        delta: Delta::default(),
    };
    let (root, _) = ed.edit(b"", Some(base.root))?;
    // Unchanged since the last computation: keep that state (dropping the transaction stores
    // nothing; every blob it would hold is stored already).
    if let Some(current) = rec.state
        && reader.snapshot_record(&current)?.root == root
    {
        return Ok((current, scanned.ignored));
    }
    let stats = ed.delta.apply(base.stats);
    {
        let mut trees = txn.open_table(TREES)?;
        let mut counts = crate::store::refcount::Counts::open(&txn)?;
        for (id, bytes) in &ed.new_trees {
            if trees.get(id.0)?.is_none() {
                trees.insert(id.0, bytes.as_slice())?;
                counts.add_tree(&crate::store::tree::Tree::decode(id, bytes)?)?;
            }
        }
    }
    let record = SnapshotRecord {
        workspace: base.workspace.clone(),
        workspace_id: base.workspace_id,
        root,
        time_ns: crate::files::now_ns(),
        parent: Some(rec.base),
        message: format!("overlay {} state", rec.id),
        meta: vec![
            ("label".into(), "overlay-state".into()),
            ("overlay".into(), rec.id.to_string()),
        ],
        stats,
        scan: base.scan.clone(),
        skipped: Vec::new(),
    };
    let bytes = record.encode()?;
    let id = Id::of(&bytes);
    // Reused base subtrees are kept alive by the base snapshot, which forget protects while
    // the overlay exists; the overlay record must still be there (not dropped meanwhile).
    if txn.open_table(OVERLAYS)?.get(rec.id)?.is_none() {
        return Err(Error::OverlayDropped(rec.id));
    }
    crate::store::refcount::insert_snapshot(&txn, &id, &bytes, &record.root)?;
    crate::store::refcount::seal(&txn)?;
    txn.commit()?;
    Ok((id, scanned.ignored))
}

#[derive(Default)]
struct Delta {
    files: i64,
    dirs: i64,
    symlinks: i64,
    bytes: i64,
}

impl Delta {
    fn add(&mut self, e: &TreeEntry, sign: i64, reader: &crate::store::Reader) -> Result<()> {
        match e.kind {
            Kind::File | Kind::Executable => {
                self.files += sign;
                self.bytes += sign * e.size as i64;
            }
            Kind::Symlink => self.symlinks += sign,
            Kind::Dir => {
                self.dirs += sign;
                self.bytes += sign * e.size as i64;
                reader.walk_tree(&e.id, b"", true, &mut |_, sub| {
                    match sub.kind {
                        Kind::File | Kind::Executable => self.files += sign,
                        Kind::Symlink => self.symlinks += sign,
                        Kind::Dir => self.dirs += sign,
                    }
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    fn apply(&self, s: TreeStats) -> TreeStats {
        let f = |v: u64, d: i64| (v as i64 + d).max(0) as u64;
        TreeStats {
            files: f(s.files, self.files),
            dirs: f(s.dirs, self.dirs),
            symlinks: f(s.symlinks, self.symlinks),
            bytes: f(s.bytes, self.bytes),
        }
    }
}

struct Editor<'a> {
    reader: &'a crate::store::Reader,
    upper: &'a Upper,
    ids: &'a [(Id, u64)],
    new_trees: Vec<(Id, Vec<u8>)>,
    delta: Delta,
}

impl Editor<'_> {
    /// The tree of directory `rel`: the base's (unless the upper one is opaque) edited by the
    /// upper entries. Returns its id and total size.
    fn edit(&mut self, rel: &[u8], base: Option<Id>) -> Result<(Id, u64)> {
        let base_tree = match base {
            Some(id) if !self.upper.opaque.contains(rel) => self.reader.tree(&id)?,
            Some(id) => {
                // An opaque directory hides everything the base had there.
                let gone = self.reader.tree(&id)?;
                for e in &gone.entries {
                    self.delta.add(e, -1, self.reader)?;
                }
                Tree::default()
            }
            None => Tree::default(),
        };
        let mut entries: std::collections::BTreeMap<Vec<u8>, TreeEntry> = base_tree
            .entries
            .into_iter()
            .map(|e| (e.name.clone(), e))
            .collect();
        let ups = self.upper.dirs.get(rel).cloned().unwrap_or_default();
        for (name, up) in ups {
            let old = entries.remove(&name);
            let child = crate::files::child_path(rel, &name);
            let new = match up {
                UpperEntry::Whiteout => None,
                UpperEntry::Blob(i, kind) => {
                    let (id, size) = self.ids[i];
                    Some(TreeEntry {
                        name: name.clone(),
                        kind,
                        id,
                        size,
                    })
                }
                UpperEntry::Dir => {
                    let sub_base = old.as_ref().filter(|o| o.kind == Kind::Dir).map(|o| o.id);
                    let (id, size) = self.edit(&child, sub_base)?;
                    Some(TreeEntry {
                        name: name.clone(),
                        kind: Kind::Dir,
                        id,
                        size,
                    })
                }
            };
            // Directory contents were counted by the recursion; count only the entry itself.
            match (&old, &new) {
                (Some(o), Some(n)) if o.kind == Kind::Dir && n.kind == Kind::Dir => {}
                (Some(o), Some(n)) if n.kind == Kind::Dir => {
                    self.delta.add(o, -1, self.reader)?;
                    self.delta.dirs += 1;
                }
                (None, Some(n)) if n.kind == Kind::Dir => self.delta.dirs += 1,
                _ => {
                    if let Some(o) = &old {
                        self.delta.add(o, -1, self.reader)?;
                    }
                    if let Some(n) = &new {
                        self.delta.add(n, 1, self.reader)?;
                    }
                }
            }
            if let Some(n) = new {
                entries.insert(name, n);
            }
        }
        let tree = Tree {
            entries: entries.into_values().collect(),
        };
        let size = tree.entries.iter().map(|e| e.size).sum();
        let (id, bytes) = tree.id_and_bytes()?;
        if !self.reader.has_tree(&id)? {
            self.new_trees.push((id, bytes));
        }
        Ok((id, size))
    }
}

/// Sets each path to the given content (None: absent) in the upper directory, so that the
/// merged view shows exactly that whatever the workspace holds now.
pub fn set_paths(store: &Store, rec: &OverlayRecord, targets: &[super::Target]) -> Result<()> {
    let upper = upper_dir(store, rec);
    let reader = store.reader()?;
    for (path, want) in targets {
        let p = checked_upper_path(&upper, path)?;
        match fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => super::remove_tree(&p)?,
            Ok(_) => fs::remove_file(&p).at(&p)?,
            Err(_) => {}
        }
        match want {
            Some(e) => {
                let mut blob = reader.blob_reader(&e.id)?;
                crate::files::write_atomic(&p, e.kind, &mut blob)?;
            }
            // A whiteout hides whatever the lower layers have there.
            None => make_whiteout(&p)?,
        }
    }
    Ok(())
}

/// `rel` below the upper directory, creating missing parent directories (never following a
/// symlink: the upper directory is written by the overlay's command).
fn checked_upper_path(upper: &Path, rel: &[u8]) -> Result<PathBuf> {
    let (parent, _) = crate::files::split_parent(rel);
    let mut dir = upper.to_path_buf();
    if !parent.is_empty() {
        for comp in parent.split(|&b| b == b'/') {
            dir.push(OsStr::from_bytes(comp));
            match fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(Error::NotADirectoryOnTheWay(dir));
                }
                Err(_) => fs::create_dir(&dir).at(&dir)?,
            }
        }
    }
    Ok(join_rel(upper, rel))
}

/// Copies ignored entries the overlay wrote (build outputs: files, symlinks, whole
/// directories) from the upper directory into the workspace, streaming, never through a
/// symlink in the workspace. No snapshot holds ignored files, so this cannot be undone.
pub fn copy_ignored(
    store: &Store,
    rec: &OverlayRecord,
    root: &Path,
    paths: &[Vec<u8>],
) -> Result<u64> {
    let upper = upper_dir(store, rec);
    let dirs = crate::files::Beneath::open(root)?;
    let mut copied = 0;
    let mut stack: Vec<Vec<u8>> = paths.to_vec();
    while let Some(rel) = stack.pop() {
        let src = join_rel(&upper, &rel);
        let Ok(meta) = fs::symlink_metadata(&src) else {
            continue;
        };
        let ft = meta.file_type();
        if ft.is_dir() {
            dirs.make_dir(&rel)?;
            for e in fs::read_dir(&src).at(&src)? {
                let e = e.at(&src)?;
                stack.push(crate::files::child_path(&rel, e.file_name().as_bytes()));
            }
        } else if ft.is_file() || ft.is_symlink() {
            if dirs.is_dir(&rel) {
                dirs.remove_tree(&rel)?;
            }
            if ft.is_symlink() {
                let target = fs::read_link(&src).at(&src)?;
                let mut bytes = target.as_os_str().as_bytes();
                dirs.write(&rel, Kind::Symlink, &mut bytes)?;
            } else {
                let kind = if meta.permissions().mode() & 0o100 != 0 {
                    Kind::Executable
                } else {
                    Kind::File
                };
                let mut f = fs::File::open(&src).at(&src)?;
                dirs.write(&rel, kind, &mut f)?;
            }
            copied += 1;
        }
    }
    Ok(copied)
}
