//! The store: one redb database file holding every object and all metadata.
//!
//! The database is opened in redb's `MultiWriter` mode so many rewind processes can share one
//! store: readers never wait, writers take turns. A writer that finds the write lock taken says
//! so through [`StoreOptions::on_wait`] and polls until [`StoreOptions::lock_timeout`].

pub(crate) mod artifact;
pub(crate) mod blob;
pub(crate) mod dense;
pub(crate) mod dict;
pub mod format;
pub(crate) mod group;
pub mod holders;
pub mod oplog;
pub(crate) mod overlap;
pub(crate) mod pending;
pub(crate) mod read;
mod recovered;
pub(crate) mod refcount;
pub(crate) mod regroup;
pub mod snapshot;
pub(crate) mod tables;
pub mod tags;
pub mod tree;

#[cfg(test)]
mod close_tests;
#[cfg(test)]
mod counter_tests;
#[cfg(test)]
mod fit_tests;
#[cfg(test)]
mod format_tests;
#[cfg(test)]
mod refcount_tests;

use std::fs;
use std::io::Read as _;
use std::mem::ManuallyDrop;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redb::{
    ConcurrencyMode, Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, WriteTransaction,
};

use crate::error::{Error, IoContext, Result};
pub use dense::DenseReport;
pub use format::{Format, SCHEMA_VERSION};
pub use read::{BlobReader, ContentTotals, DictUsage, Reader, TableUsage};
pub use regroup::RegroupReport;
use snapshot::{Workspace, WorkspaceRecord};
use tables::*;

/// The database file inside a store directory.
pub const DB_FILE: &str = "store.redb";
/// redb's magic bytes, used to tell "not a database" apart from "a damaged database".
const REDB_MAGIC: &[u8] = b"redb";

/// A callback that tells the user, in a sentence, why a process waits.
pub type Notice = Arc<dyn Fn(&str) + Send + Sync>;

/// How to open a store.
#[derive(Clone)]
pub struct StoreOptions {
    /// Create the store if it does not exist.
    pub create: bool,
    /// How long a writer waits for another process's write transaction.
    pub lock_timeout: Duration,
    /// Called once when a writer has to wait for another process.
    pub on_wait: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Called with a sentence when something else has to wait (an overlay's lock, say) or was
    /// done on the side (the disk budget's evictions): progress-like, a quiet CLI drops it.
    pub on_notice: Option<Notice>,
    /// Called with a sentence the user should read even when quiet: damage worked around,
    /// protected snapshots alone over the disk budget, a budget that could not be applied.
    pub on_warning: Option<Notice>,
    /// The command line recorded in the operation log for what this handle does.
    pub command: Vec<String>,
    /// Who the operation log records as having started what this handle does, when not the
    /// local user (a server names the caller); None for a command run by hand.
    pub actor: Option<String>,
    /// Directories refused as workspaces unless an operation is forced, besides `/` (always
    /// refused): the CLI passes the user's home directory. The library reads no `HOME`.
    pub refused_workspaces: Vec<PathBuf>,
    /// Leave the database without redb's close when the handle drops, for a process that
    /// exits right after (the CLI). redb's close costs four `fdatasync`s (a commit recording
    /// the allocator state, then a header marking the file clean) and persists nothing a
    /// commit had not already made durable: in multi-writer mode every commit is two-phase,
    /// synced, and records the allocator state. Skipped, the file is left exactly as a process
    /// killed after its last commit leaves it, which the next open recovers in one header write
    /// without a repair walk. Nor does it trim the file (the close returns free pages at its
    /// end, such as those of a transaction that failed on a full disk): commands that run
    /// often skip it, the others keep it. The file descriptor and its locks are released when the process
    /// exits, so a process that keeps running (a daemon, a program using the library) leaves
    /// this `false`: each skipped handle would stay open until exit.
    pub skip_close: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            create: true,
            lock_timeout: Duration::from_secs(600),
            on_wait: None,
            on_warning: None,
            on_notice: None,
            command: Vec::new(),
            actor: None,
            refused_workspaces: Vec::new(),
            skip_close: false,
        }
    }
}

/// Why the store file was not compacted (see `gc::GcReport::compact_skipped`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompactSkipped {
    /// The store is open read-only.
    #[error("the store is open read-only")]
    ReadOnly,
    /// Another process holds a transaction open: a reason to try again later.
    #[error("another process is using the store")]
    Busy,
    /// The database refused for another reason.
    #[error("{0}")]
    Failed(String),
}

/// [`Store::fit`] compacts when the file is longer than this many times its disk blocks.
pub const FIT_ABOVE: f64 = 1.1;
/// ... and the difference is at least this many bytes: a store of a few MiB is left alone.
pub const FIT_MIN_GAP: u64 = 1 << 20;

/// A database file's length and the disk blocks it takes (its holes take none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileSize {
    /// Length (`ls -l`).
    pub apparent: u64,
    /// Disk blocks, in bytes (`du`).
    pub allocated: u64,
}

impl FileSize {
    /// The size of the file `meta` describes.
    pub fn of(meta: &fs::Metadata) -> FileSize {
        use std::os::unix::fs::MetadataExt as _;
        FileSize {
            apparent: meta.len(),
            allocated: meta.blocks() * 512,
        }
    }

    /// Whether [`Store::fit`] would compact a file of this size.
    pub fn needs_fit(&self) -> bool {
        let gap = self.apparent.saturating_sub(self.allocated);
        gap >= FIT_MIN_GAP && self.apparent as f64 > FIT_ABOVE * self.allocated as f64
    }
}

/// What [`Store::fit`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fit {
    /// The file before.
    pub before: FileSize,
    /// The file after.
    pub after: FileSize,
    /// Whether it compacted (false when the file was already within bounds).
    pub compacted: bool,
}

/// An open store.
pub struct Store {
    /// Dropped by hand (see `Drop`), so that [`StoreOptions::skip_close`] can leave it unclosed.
    db: ManuallyDrop<Handle>,
    dir: PathBuf,
    opts: StoreOptions,
    /// The database file's length when this handle opened it: a handle that leaves it longer
    /// refits it (see [`Store::fit`]).
    len_at_open: u64,
    /// Dropped after `db` (fields drop in order): the entry naming this process.
    _registration: Option<holders::Registration>,
}

impl Drop for Store {
    fn drop(&mut self) {
        // A handle that saw the file grow (its own commits, or another process's whose refit
        // skipped or has yet to run) refits it before it goes. Not while unwinding
        // (a panic is no moment for more writes); a skipped or failed fit is left for the next
        // handle that grows the file, or for gc.
        if !std::thread::panicking()
            && self.file_len() > self.len_at_open
            && matches!(*self.db, Handle::ReadWrite(_))
            && self.file_size().is_some_and(|f| f.needs_fit())
        {
            // First redb's close, even when the handle would skip it: its last commit takes
            // the lowest free pages and cuts the free ones at the end. The store's transactions
            // allocate the lowest pages too, so that is all a snapshot needs, cold or warm;
            // compacting instead read every page of the file (0.3 s for the Linux tree, 0.45 s
            // at a million files). A file an older rewind grew can have pages at its far end,
            // where only a compaction moves them: then the file is opened again for one.
            // SAFETY: `db` is never used again: this is the store's drop.
            unsafe { ManuallyDrop::drop(&mut self.db) };
            if self.file_size().is_some_and(|f| f.needs_fit()) {
                let file = self.dir.join(DB_FILE);
                if let Ok(mut db) = open_db(&file) {
                    let _ = compact_db(&mut db);
                }
            }
            return;
        }
        if self.opts.skip_close {
            return;
        }
        // SAFETY: `db` is never used again: this is the store's drop.
        unsafe { ManuallyDrop::drop(&mut self.db) };
    }
}

/// The database, opened for writing or (when the file is not writable) for reading only.
enum Handle {
    ReadWrite(Database),
    ReadOnly(ReadOnlyDatabase),
    /// A file this process cannot write, that needed recovery, recovered in memory
    /// (`recovered`): read from, never written through.
    Recovered(Database),
}

impl Handle {
    fn begin_read(&self) -> Result<redb::ReadTransaction> {
        Ok(match self {
            Handle::ReadWrite(db) => db.begin_read()?,
            Handle::ReadOnly(db) => db.begin_read()?,
            Handle::Recovered(db) => db.begin_read()?,
        })
    }
}

impl Store {
    /// Opens (and with `opts.create`, creates) the store in `dir`.
    pub fn open(dir: &Path, opts: StoreOptions) -> Result<Store> {
        let file = dir.join(DB_FILE);
        if !file.exists() {
            if !opts.create {
                return Err(Error::NoStore(dir.to_path_buf()));
            }
            create_store(dir, &file)?;
        }
        check_magic(&file)?;
        let registration = holders::register(dir, &opts.command);
        let db = open_waiting(dir, &file, &opts)?;
        let store = Store {
            db: ManuallyDrop::new(db),
            len_at_open: fs::metadata(&file).map_or(0, |m| m.len()),
            dir: dir.to_path_buf(),
            opts,
            _registration: registration,
        };
        store.open_format(&file)?;
        Ok(store)
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// [`StoreOptions::refused_workspaces`], for [`crate::workspace::canonical`].
    pub fn refused_workspaces(&self) -> &[PathBuf] {
        &self.opts.refused_workspaces
    }

    /// How long a wait for another process may last.
    pub fn lock_timeout(&self) -> Duration {
        self.opts.lock_timeout
    }

    /// Tells the user (through [`StoreOptions::on_notice`]) why this process waits.
    pub fn notice(&self, what: &str) {
        if let Some(f) = &self.opts.on_notice {
            f(what);
        }
    }

    /// Tells the user something they should read even when quiet (see
    /// [`StoreOptions::on_warning`]).
    pub fn warning(&self, what: &str) {
        if let Some(f) = &self.opts.on_warning {
            f(what);
        }
    }

    /// The command line recorded in operations.
    pub fn command(&self) -> &[String] {
        &self.opts.command
    }

    /// Who operations are recorded as started by (see [`StoreOptions::actor`]).
    pub fn actor(&self) -> Option<&str> {
        self.opts.actor.as_deref()
    }

    /// A consistent read view of the store.
    pub fn reader(&self) -> Result<Reader> {
        Reader::new(self.db.begin_read()?)
    }

    /// Begins a write transaction, waiting (and saying so once) while another process writes.
    /// It allocates the lowest free pages (the vendored redb's patch, `vendor/redb/PATCHES.md`),
    /// so a transaction that grows the file leaves its free end free, for the close to cut (see
    /// [`Store::fit`]).
    pub(crate) fn begin_write(&self) -> Result<WriteTransaction> {
        let txn = self.begin_write_unchecked()?;
        // Before this transaction changes anything: did a writer that does not keep the
        // reference counts commit since the last one that did?
        refcount::check_stamp(&txn)?;
        Ok(txn)
    }

    fn begin_write_unchecked(&self) -> Result<WriteTransaction> {
        let Handle::ReadWrite(db) = &*self.db else {
            return Err(Error::ReadOnlyStore {
                path: self.dir.clone(),
                why: "the store file could not be opened for writing".into(),
            });
        };
        match db.try_begin_write_lowest() {
            Ok(txn) => return Ok(txn),
            Err(redb::TransactionError::WouldBlock) => {}
            Err(e) => return Err(e.into()),
        }
        if let Some(notice) = &self.opts.on_wait {
            notice();
        }
        let start = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match db.try_begin_write_lowest() {
                Ok(txn) => return Ok(txn),
                Err(redb::TransactionError::WouldBlock) => {}
                Err(e) => return Err(e.into()),
            }
            if start.elapsed() >= self.opts.lock_timeout {
                return Err(Error::LockTimeout(
                    self.opts.lock_timeout,
                    holders::describe_others(&self.dir),
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Drops the stat cache and starts it empty. The cache is only a shortcut (every row can be
    /// made again by reading the files), so a damaged page in it is no loss: the next snapshot of
    /// each workspace hashes its files again and writes new rows. The deletion walks the
    /// table's branches, checked against their checksums, and frees its pages; a damaged leaf
    /// is freed unread.
    pub(crate) fn rebuild_stat_cache(&self) -> Result<()> {
        let txn = self.begin_write()?;
        txn.delete_table(STAT_CACHE)?;
        txn.open_table(STAT_CACHE)?;
        // The rows held their trees: counted again by the next collection.
        refcount::mark_stale(&txn)?;
        txn.commit()?;
        Ok(())
    }

    /// Bytes of the database file that hold no page in use (free pages a compaction returns).
    pub(crate) fn free_bytes(&self) -> Result<u64> {
        // redb returns the pages a commit released only at a later commit (once no reader can
        // see them): right after a gc that rewrote most of the log, the file looked full and
        // was never compacted (514 MiB file for 230 MiB of pages, measured). Empty commits
        // settle that first.
        for _ in 0..2 {
            self.begin_write()?.commit()?;
        }
        let txn = self.begin_write()?;
        let stats = txn.stats()?;
        txn.abort()?;
        let used = stats.allocated_pages() * stats.page_size() as u64;
        let len = fs::metadata(self.dir.join(DB_FILE))
            .map(|m| m.len())
            .unwrap_or(0);
        Ok(len.saturating_sub(used))
    }

    /// The database file's length and blocks (None when it cannot be read).
    fn file_size(&self) -> Option<FileSize> {
        fs::metadata(self.dir.join(DB_FILE))
            .ok()
            .map(|m| FileSize::of(&m))
    }

    /// The database file's length (0 when it cannot be read).
    fn file_len(&self) -> u64 {
        fs::metadata(self.dir.join(DB_FILE)).map_or(0, |m| m.len())
    }

    /// Brings the database file's length back within [`FIT_ABOVE`] times the disk blocks it
    /// takes, compacting when the gap is larger (and at least [`FIT_MIN_GAP`]); says what it
    /// did. A handle that saw the file grow calls this when it drops.
    ///
    /// Why: below 4 GiB redb grows its file by doubling, and a transaction that allocates with
    /// redb's default policy fills the small blocks at the new end first, so a large one (a
    /// cold snapshot) left the file a hole in the middle with pages after it: `ls -l` showed
    /// 514 MiB for 272 MiB of blocks on the Linux tree, and a copy that does not keep holes pays
    /// the whole length. The store's own transactions allocate the lowest pages
    /// (`begin_write`), so what they grow the close's trim cuts; a file an older
    /// rewind grew needs redb's compaction, which moves the last pages down into the hole: a
    /// few MiB of writes and a handful of synced commits, but redb finds the highest pages by
    /// reading every page of the file, twice (0.31 s of CPU for the Linux tree's 272 MiB
    /// store; `benches/store-fit.sh`). The commits are durable, like any other, so a handle
    /// that skips redb's close afterwards still leaves the file as a kill after a commit would.
    ///
    /// Another process reading or writing the store makes it skip ([`CompactSkipped::Busy`]),
    /// never wait: the next handle that grows the file tries again, and so does `gc`.
    pub fn fit(&mut self) -> std::result::Result<Fit, CompactSkipped> {
        let file = self.dir.join(DB_FILE);
        let meta = fs::metadata(&file).map_err(|e| CompactSkipped::Failed(e.to_string()))?;
        let before = FileSize::of(&meta);
        if !before.needs_fit() {
            return Ok(Fit {
                before,
                after: before,
                compacted: false,
            });
        }
        let compacted = self.compact()?;
        let after = fs::metadata(&file)
            .map(|m| FileSize::of(&m))
            .map_err(|e| CompactSkipped::Failed(e.to_string()))?;
        Ok(Fit {
            before,
            after,
            compacted,
        })
    }

    /// Compacts the database file. `Err` says why it could not run (another process holds a
    /// transaction open); that is not a failure of the store, only a reason to try later.
    pub(crate) fn compact(&mut self) -> std::result::Result<bool, CompactSkipped> {
        compact_db(&mut self.db)
    }

    /// Looks up a workspace by canonical path.
    pub fn workspace(&self, root: &Path) -> Result<Option<Workspace>> {
        self.reader()?.workspace(root)
    }

    /// Registers a workspace (idempotent) and returns it.
    pub fn register_workspace(&self, root: &Path) -> Result<Workspace> {
        if let Some(ws) = self.workspace(root)? {
            return Ok(ws);
        }
        let txn = self.begin_write()?;
        let ws = register_in(&txn, root)?;
        txn.commit()?;
        Ok(Workspace::new(ws))
    }

    /// Points tag `name` at `snapshot`, replacing an existing tag only with `force`.
    pub fn set_tag(&self, name: &str, snapshot: &crate::Id, force: bool) -> Result<()> {
        tags::validate_tag(name)?;
        let txn = self.begin_write()?;
        {
            let snaps = txn.open_table(SNAPSHOTS)?;
            if snaps.get(snapshot.0)?.is_none() {
                return Err(Error::Missing {
                    kind: "snapshot",
                    id: snapshot.hex(),
                });
            }
            let mut refs = txn.open_table(REFS)?;
            if let Some(old) = refs.get(name)?
                && old.value() != snapshot.0
                && !force
            {
                return Err(Error::TagExists {
                    name: name.to_string(),
                    target: crate::Id(old.value()).short(),
                });
            }
            refs.insert(name, snapshot.0)?;
        }
        txn.commit()?;
        Ok(())
    }

    /// Deletes a tag; returns whether it existed.
    pub fn delete_tag(&self, name: &str) -> Result<bool> {
        let txn = self.begin_write()?;
        let existed = txn.open_table(REFS)?.remove(name)?.is_some();
        txn.commit()?;
        Ok(existed)
    }
}

/// Reads a u64 counter from the `meta` table inside a write transaction (`None` when unset).
/// A value that is not 8 bytes is [`Error::Corrupt`]: a counter silently read as 0 would hand
/// out ids (or segment numbers) already in use.
pub(crate) fn counter(txn: &WriteTransaction, name: &str) -> Result<Option<u64>> {
    let meta = txn.open_table(META)?;
    let Some(v) = meta.get(name)? else {
        return Ok(None);
    };
    let bytes: [u8; 8] = v.value().try_into().map_err(|_| Error::Corrupt {
        kind: "meta counter",
        id: name.to_string(),
        why: format!("{} bytes where 8 were expected", v.value().len()),
    })?;
    Ok(Some(u64::from_le_bytes(bytes)))
}

/// Reads a u64 counter from the `meta` table inside a write transaction (0 when unset).
pub(crate) fn read_counter(txn: &WriteTransaction, name: &str) -> Result<u64> {
    Ok(counter(txn, name)?.unwrap_or(0))
}

/// The next free segment of the blob log, checked against the log itself: a counter at or
/// below a live segment (a `next_segment` of 0 when segment 0 exists, say) would let the
/// segment writer overwrite stored objects, so it is [`Error::Corrupt`], never trusted.
pub(crate) fn next_segment(
    txn: &WriteTransaction,
    segments: &impl ReadableTable<u64, &'static [u8]>,
) -> Result<u64> {
    let next = read_counter(txn, "next_segment")?;
    if let Some((last, _)) = segments.last()? {
        let last = last.value();
        if last >= next {
            return Err(Error::Corrupt {
                kind: "meta counter",
                id: "next_segment".into(),
                why: format!("it is {next}, but segment {last} is in use"),
            });
        }
    }
    Ok(next)
}

/// Writes the segment writer's last, partial segment into `segments` and saves the log's
/// `next_segment` counter: how every writer of the log ends.
pub(crate) fn finish_log(
    txn: &WriteTransaction,
    segw: blob::SegmentWriter,
    segments: &mut redb::Table<u64, &'static [u8]>,
) -> Result<()> {
    let next = segw.finish(&mut |n, data| {
        segments.insert(n, data)?;
        Ok(())
    })?;
    write_counter(txn, "next_segment", next)
}

/// Serializes a record for the store; `what` names it in the error.
pub(crate) fn encode<T: serde::Serialize + ?Sized>(
    what: &'static str,
    value: &T,
) -> Result<Vec<u8>> {
    postcard::to_stdvec(value).map_err(|e| Error::Encode {
        what,
        why: e.to_string(),
    })
}

/// Sets a u64 counter in the `meta` table.
pub(crate) fn write_counter(txn: &WriteTransaction, name: &str, value: u64) -> Result<()> {
    txn.open_table(META)?
        .insert(name, value.to_le_bytes().as_slice())?;
    Ok(())
}

/// Registers `root` inside an open write transaction.
pub(crate) fn register_in(txn: &WriteTransaction, root: &Path) -> Result<WorkspaceRecord> {
    use std::os::unix::ffi::OsStrExt;
    let key = root.as_os_str().as_bytes();
    let mut table = txn.open_table(WORKSPACES)?;
    if let Some(v) = table.get(key)? {
        return decode_workspace(v.value());
    }
    let next = counter(txn, "next_workspace_id")?.unwrap_or(1);
    write_counter(txn, "next_workspace_id", next + 1)?;
    let ws = WorkspaceRecord {
        id: next,
        path: key.to_vec(),
        created_ns: crate::files::now_ns(),
        next_seq: 0,
    };
    table.insert(key, encode("workspace record", &ws)?.as_slice())?;
    Ok(ws)
}

/// Forgets a workspace entirely: its record, its history and the snapshots in it, and its
/// stat cache. Used for an overlay's private copy when the overlay is dropped.
pub(crate) fn unregister_in(txn: &WriteTransaction, root: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let key = root.as_os_str().as_bytes();
    let Some(ws) = txn
        .open_table(WORKSPACES)?
        .remove(key)?
        .map(|v| decode_workspace(v.value()))
        .transpose()?
    else {
        return Ok(());
    };
    let mut log = txn.open_table(WS_LOG)?;
    let ids: Vec<(u64, [u8; 32])> = log
        .range((ws.id, 0)..=(ws.id, u64::MAX))?
        .map(|item| item.map(|(k, v)| (k.value().1, v.value())))
        .collect::<std::result::Result<_, _>>()?;
    for (seq, id) in ids {
        log.remove((ws.id, seq))?;
        refcount::remove_snapshot(txn, &crate::Id(id))?;
    }
    let mut cache = txn.open_table(STAT_CACHE)?;
    let mut counts = refcount::Counts::open(txn)?;
    let mut dirs: Vec<Vec<u8>> = Vec::new();
    for item in cache.range((ws.id, &b""[..])..)? {
        let (k, _) = item?;
        let (id, dir) = k.value();
        if id != ws.id {
            break;
        }
        dirs.push(dir.to_vec());
    }
    for d in dirs {
        if let Some(old) = cache.remove((ws.id, d.as_slice()))? {
            counts.row(Some(old.value()), None)?;
        }
    }
    Ok(())
}

pub(crate) fn decode_workspace(bytes: &[u8]) -> Result<WorkspaceRecord> {
    postcard::from_bytes(bytes).map_err(|e| Error::Corrupt {
        kind: "workspace record",
        id: String::new(),
        why: e.to_string(),
    })
}

/// Creates a store so that no process ever sees it half made: the database is initialised
/// under a temporary name, then linked into place (a link never replaces an existing file, so
/// of two processes creating the same store at once, one wins and both use its file).
fn create_store(dir: &Path, file: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| map_open_err(dir, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".store.redb.")
        .tempfile_in(dir)
        .map_err(|e| map_open_err(dir, e))?;
    let tmp_path = tmp.path().to_path_buf();
    {
        let db = Database::builder()
            .set_concurrency_mode(ConcurrencyMode::MultiWriter)
            .create(&tmp_path)?;
        let txn = db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            let now = crate::files::now_ns();
            let store_id = blake3::hash(format!("{now} {}", std::process::id()).as_bytes());
            meta.insert("store_id", store_id.as_bytes().as_slice())?;
            meta.insert("created_ns", now.to_le_bytes().as_slice())?;
        }
        format::init(&txn)?;
        create_tables(&txn)?;
        refcount::upgrade_in(&txn)?;
        txn.commit()?;
    }
    // A store holds copies of private files: it is the owner's alone (tempfile makes 0600).
    fs::set_permissions(&tmp_path, fs::Permissions::from_mode(0o600)).at(&tmp_path)?;
    match fs::hard_link(&tmp_path, file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(map_open_err(file, e)),
    }
}

fn create_tables(txn: &WriteTransaction) -> Result<()> {
    txn.open_table(BLOBS)?;
    txn.open_table(CHUNKS)?;
    txn.open_table(TREES)?;
    txn.open_table(SNAPSHOTS)?;
    txn.open_table(WORKSPACES)?;
    txn.open_table(WS_LOG)?;
    txn.open_table(REFS)?;
    txn.open_table(STAT_CACHE)?;
    txn.open_table(OPLOG)?;
    txn.open_table(SEGMENTS)?;
    txn.open_table(ARTIFACTS)?;
    Ok(())
}

fn check_magic(file: &Path) -> Result<()> {
    let mut head = [0u8; 4];
    let mut f = fs::File::open(file).map_err(|e| map_open_err(file, e))?;
    let n = f.read(&mut head).at(file)?;
    if n == 0 {
        return Err(Error::NotAStore {
            path: file.to_path_buf(),
            why: "the file is empty".into(),
        });
    }
    if n < 4 || head[..] != *REDB_MAGIC {
        return Err(Error::NotAStore {
            path: file.to_path_buf(),
            why: "not a redb database".into(),
        });
    }
    Ok(())
}

fn map_open_err(file: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        Error::ReadOnlyStore {
            path: file.to_path_buf(),
            why: e.to_string(),
        }
    } else {
        Error::io(file, e)
    }
}

/// Opens the database read-write, falling back to read-only when the file or directory is not
/// writable (read commands still work then; writes fail with a clear error).
/// Opens the database, saying so and giving up at the lock timeout when another process's
/// write transaction makes the open wait: redb takes the writer lock while it opens a
/// multi-writer database, blocking, so the open runs on a thread of its own and this one keeps
/// the time. A thread left waiting past the timeout ends with the process (or, in a program
/// using the library, when the lock comes free: it then closes what it opened).
fn open_waiting(dir: &Path, file: &Path, opts: &StoreOptions) -> Result<Handle> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let f = file.to_path_buf();
    std::thread::Builder::new()
        .name("rewind-open".into())
        .spawn(move || {
            let _ = tx.send(open_db(&f));
        })
        .map_err(|e| Error::io(file, e))?;
    // An uncontended open takes milliseconds but never no time at all, so the first 200 ms are
    // not a wait, whatever the timeout: `--lock-timeout 0` means "do not wait for another
    // process", not "fail every open".
    let quick = Duration::from_millis(200);
    let failed = || Error::Internal(format!("opening {} failed", file.display()));
    let mut waited = quick;
    match rx.recv_timeout(quick) {
        Ok(r) => return r,
        Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Err(failed()),
    }
    // A slow open on a loaded machine is not a wait for another process: with no other rewind
    // process holding the store, say nothing for 2 s more (another program may hold it).
    if !holders::others_alive(dir) {
        let grace = Duration::from_secs(2).min(opts.lock_timeout.saturating_sub(waited));
        match rx.recv_timeout(grace) {
            Ok(r) => return r,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => waited += grace,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Err(failed()),
        }
    }
    if let Some(notice) = &opts.on_wait {
        notice();
    }
    match rx.recv_timeout(opts.lock_timeout.saturating_sub(waited)) {
        Ok(r) => r,
        Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(Error::LockTimeout(
            opts.lock_timeout,
            holders::describe_others(dir),
        )),
        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Err(failed()),
    }
}

/// Compacts a database file (see [`Store::fit`]); `Err` says why it could not run.
fn compact_db(handle: &mut Handle) -> std::result::Result<bool, CompactSkipped> {
    let Handle::ReadWrite(db) = handle else {
        return Err(CompactSkipped::ReadOnly);
    };
    // redb's compaction begins by waiting for the write lock; a writer in another process
    // (a snapshot's long transaction) would hold it up for as long as that takes. Asking
    // first turns that into a skip. (A writer that begins between this probe and the
    // compaction's own transaction is still waited for: a short window.)
    match db.try_begin_write() {
        Ok(txn) => txn
            .abort()
            .map_err(|e| CompactSkipped::Failed(e.to_string()))?,
        Err(redb::TransactionError::WouldBlock) => return Err(CompactSkipped::Busy),
        Err(e) => return Err(CompactSkipped::Failed(e.to_string())),
    }
    match db.compact() {
        Ok(done) => Ok(done),
        Err(redb::CompactionError::TransactionInProgress) => Err(CompactSkipped::Busy),
        Err(e) => Err(CompactSkipped::Failed(e.to_string())),
    }
}

fn open_db(file: &Path) -> Result<Handle> {
    let mut builder = Database::builder();
    builder.set_concurrency_mode(ConcurrencyMode::MultiWriter);
    // redb defaults to a 1 GiB cache; a cold snapshot would keep most of what it wrote there.
    // 16 MiB, not more: rewind reads a store mostly once per command (a range scan of the stat
    // cache, each blob of a restore), and a miss is a pread from the page cache, while every
    // page kept is process memory. Against 64 MiB, on the Linux tree: cold snapshot peak RSS
    // 106 -> 66 MiB and its commit ~40 ms shorter (fewer dirty pages left for it to write),
    // restore 109 -> 59 MiB, warm snapshot and status unchanged (0.26 s).
    builder.set_cache_size(16 << 20);
    // redb may panic on a file that was altered behind its back; turn that into an error that
    // names the file instead of a crash.
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.create(file)));
    match attempt {
        Ok(Ok(db)) => Ok(Handle::ReadWrite(db)),
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e))))
            if e.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            let ro = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                builder.open_read_only(file)
            }));
            match ro {
                Ok(Ok(db)) => Ok(Handle::ReadOnly(db)),
                // A file left for recovery (a command that skipped redb's close wrote it
                // last): recovered in memory (see `recovered`).
                Ok(Err(redb::DatabaseError::RepairAborted)) => {
                    open_recovered(file).ok_or_else(|| map_open_err(file, e))
                }
                _ => Err(map_open_err(file, e)),
            }
        }
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e))))
            if !matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ) =>
        {
            Err(Error::NotAStore {
                path: file.to_path_buf(),
                why: format!("damaged: {e}"),
            })
        }
        Ok(Err(redb::DatabaseError::Storage(redb::StorageError::Io(e)))) => {
            Err(map_open_err(file, e))
        }
        Ok(Err(e)) => Err(Error::NotAStore {
            path: file.to_path_buf(),
            why: format!("damaged or unreadable: {e}"),
        }),
        Err(_) => Err(Error::NotAStore {
            path: file.to_path_buf(),
            why: "damaged: the database header does not decode".into(),
        }),
    }
}

/// Opens a file this process cannot write, and that needs recovery, through an overlay that
/// keeps redb's recovery writes in memory. None if that fails too (the caller reports the
/// file as read-only).
fn open_recovered(file: &Path) -> Option<Handle> {
    let backend = recovered::Overlay::new(fs::File::open(file).ok()?).ok()?;
    let mut builder = Database::builder();
    builder.set_cache_size(16 << 20);
    let db = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        builder.create_with_backend(backend)
    }));
    match db {
        Ok(Ok(db)) => Some(Handle::Recovered(db)),
        _ => None,
    }
}

/// The gc epoch as a write transaction sees it; a writer compares it with its read view's
/// [`Reader::gc_epoch`] before committing references it did not store itself.
pub(crate) fn epoch_in(txn: &WriteTransaction) -> Result<u64> {
    read_counter(txn, "gc_epoch")
}

/// Appends snapshot `id` to workspace `ws`'s log (its `@~N` history) inside `txn`.
pub(crate) fn append_log(
    txn: &redb::WriteTransaction,
    mut ws: WorkspaceRecord,
    id: crate::Id,
) -> Result<()> {
    txn.open_table(WS_LOG)?.insert((ws.id, ws.next_seq), id.0)?;
    ws.next_seq += 1;
    txn.open_table(WORKSPACES)?.insert(
        ws.path.as_slice(),
        encode("workspace record", &ws)?.as_slice(),
    )?;
    Ok(())
}
