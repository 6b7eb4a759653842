//! Reading, hashing, compressing and storing the files a snapshot could not vouch for: the
//! cold path, where a first snapshot spends its time.
//!
//! Threads: the rayon pool reads, hashes and compresses; the calling thread alone owns the
//! write transaction. Workers hand their objects over in batches ([`BATCH_BYTES`],
//! [`BATCH_ITEMS`]) on a bounded channel, one hand-off per few dozen small files instead of
//! one per file, and at most [`CHANNEL_BATCHES`] wait, so memory stays bounded whatever the
//! file sizes. A small file costs open, fstat, one read (into the worker's reused buffer),
//! fstat, close. A large file is cut into chunks by one worker, which hashes the stream while
//! the chunks' ids and compression run on the pool [`CHUNK_GROUP`] at a time, so one large file
//! can keep both cores compressing. What redb spills to the store file is handed to the kernel's
//! writeback as it goes ([`WRITEBACK_BYTES`]), so the commit does not write it all at the end.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crossbeam_channel::{Sender, bounded};
use rayon::prelude::*;
use redb::{ReadableTable, WriteTransaction};

use crate::error::{Error, IoContext, Result};
use crate::files::join_rel;
use crate::id::Id;
use crate::progress::Progress;
use crate::scan::statcache::Stat;
use crate::scan::walk::{EntryType, WalkEntry};
use crate::store::blob::{self, ChunkRef, Payload, SegmentWriter};
use crate::store::group;
use crate::store::snapshot::SkipReason;
use crate::store::tables::*;
use crate::store::{Reader, Store};
use claims::Claims;

mod claims;

/// A worker sends its batch once it holds this many encoded bytes...
const BATCH_BYTES: usize = 256 << 10;
/// ...or this many objects.
const BATCH_ITEMS: usize = 64;
/// Batches waiting for the writer: with [`BATCH_BYTES`] (plus one chunk of overshoot each),
/// what is in flight stays under ~20 MiB. Deep enough that the workers rarely wait while the
/// writer is in one of the fsyncs redb makes when it grows the file.
const CHANNEL_BATCHES: usize = 16;
/// Chunks of one large file hashed and compressed on the pool together (~2.5 MiB).
const CHUNK_GROUP: usize = 8;
/// The store file's dirty pages are handed to writeback after this many new bytes.
const WRITEBACK_BYTES: u64 = 8 << 20;
/// Files are read in runs of about this many bytes, each run on one thread (see [`runs`]): a
/// few groups' worth, so groups are cut where they fill, yet enough runs to keep the cores
/// busy to the end.
const RUN_BYTES: u64 = 4 * group::GROUP_BYTES as u64;
/// A worker's read buffer is kept between files up to this size; a larger one is freed.
const KEEP_BUFFER: usize = 1 << 20;
/// A large file's start read to choose its chunk sizes ([`sizes_for`]): the largest chunk and
/// more, so that the first chunk at either size is whole.
const PROBE_BYTES: usize = (blob::CHUNK_MAX as usize) + (64 << 10);

/// An object on its way to the writer.
pub(crate) enum Put {
    /// A whole blob: its uncompressed size and encoded bytes.
    Blob(Id, u64, Payload),
    /// A chunk: its uncompressed length and encoded bytes.
    Chunk(Id, u32, Payload),
    /// The record of a chunked blob (its chunks were sent before it), and the chunk ids it
    /// holds (paged: its pages and the chunks they list).
    Chunked(Id, Vec<u8>, Vec<Id>),
    /// Small blobs compressed together (see the store's `group` module).
    Group(group::Sealed),
}

/// What reading one file gave.
pub(crate) enum Read1 {
    /// Read and (unless dry) stored: its id, size, the stat it had, and whether it kept
    /// changing while read.
    Ok {
        id: Id,
        size: u64,
        stat: Stat,
        unstable: bool,
    },
    /// Not stored, for this reason.
    Skip(SkipReason, String),
    /// The writer went away (it failed): stop.
    Aborted,
}

/// Owns the lazily-begun write transaction and counts what it stored.
pub(crate) struct Sink<'s> {
    store: &'s Store,
    txn: Option<(WriteTransaction, SegmentWriter)>,
    /// The store file, to start the writeback of what redb has written so far (see
    /// [`WRITEBACK_BYTES`]); None until the first kick, or when it cannot be opened.
    writeback: Option<File>,
    /// Stored bytes since the last writeback kick.
    unkicked: u64,
    /// New whole and chunked blobs.
    pub new_blobs: u64,
    /// New chunks.
    pub new_chunks: u64,
    /// Bytes of new objects.
    pub stored_bytes: u64,
}

impl<'s> Sink<'s> {
    /// A writer with no transaction yet: it begins one at the first object.
    pub fn new(store: &'s Store) -> Sink<'s> {
        Sink {
            store,
            txn: None,
            writeback: None,
            unkicked: 0,
            new_blobs: 0,
            new_chunks: 0,
            stored_bytes: 0,
        }
    }

    /// Stores a batch of objects in the (begun if need be) write transaction.
    pub fn put(&mut self, batch: &[Put]) -> Result<()> {
        if self.txn.is_none() {
            let txn = self.store.begin_write()?;
            let next = crate::store::next_segment(&txn, &txn.open_table(SEGMENTS)?)?;
            self.txn = Some((txn, SegmentWriter::new(next)));
        }
        let Some((txn, segw)) = self.txn.as_mut() else {
            unreachable!("just set")
        };
        let (nb, nc, sb) = Self::insert(txn, segw, batch)?;
        self.new_blobs += nb;
        self.new_chunks += nc;
        self.stored_bytes += sb;
        self.unkicked += sb;
        if self.unkicked >= WRITEBACK_BYTES {
            self.unkicked = 0;
            self.kick_writeback();
        }
        Ok(())
    }

    /// Inserts `batch`'s objects; returns the counts of new blobs, new chunks and their bytes.
    fn insert(
        txn: &WriteTransaction,
        segw: &mut SegmentWriter,
        batch: &[Put],
    ) -> Result<(u64, u64, u64)> {
        let mut blobs = txn.open_table(BLOBS)?;
        let mut chunks = txn.open_table(CHUNKS)?;
        let mut segments = txn.open_table(SEGMENTS)?;
        let mut flush = |n: u64, data: &[u8]| -> Result<()> {
            segments.insert(n, data)?;
            Ok(())
        };
        let (mut nb, mut nc, mut sb) = (0, 0, 0);
        for p in batch {
            match p {
                Put::Blob(id, size, payload) => {
                    // Another process may have stored it since our read view was taken.
                    if blobs.get(id.0)?.is_some() {
                        continue;
                    }
                    let span = segw.append(&payload.bytes, &mut flush)?;
                    blobs.insert(
                        id.0,
                        blob::encode_whole(*size, payload.zstd, &span).as_slice(),
                    )?;
                    nb += 1;
                    sb += payload.bytes.len() as u64;
                }
                Put::Chunk(id, len, payload) => {
                    if chunks.get(id.0)?.is_some() {
                        continue;
                    }
                    let span = segw.append(&payload.bytes, &mut flush)?;
                    chunks.insert(
                        id.0,
                        blob::encode_chunk(*len, payload.zstd, &span).as_slice(),
                    )?;
                    nc += 1;
                    sb += payload.bytes.len() as u64;
                }
                Put::Chunked(id, record, held) => {
                    if blobs.insert(id.0, record.as_slice())?.is_none() {
                        crate::store::refcount::Counts::open(txn)?.add_chunks(held)?;
                        nb += 1;
                        sb += record.len() as u64;
                    }
                }
                Put::Group(sealed) => {
                    let mut new = Vec::with_capacity(sealed.members.len());
                    for m in &sealed.members {
                        if blobs.get(m.id.0)?.is_none() {
                            new.push(m);
                        }
                    }
                    if new.is_empty() {
                        continue;
                    }
                    let span = segw.append(&sealed.frame, &mut flush)?;
                    crate::store::refcount::add_group(txn, &span, new.len() as u64)?;
                    for m in new {
                        let record = blob::encode_grouped(m.size, &span, m.skip, false);
                        blobs.insert(m.id.0, record.as_slice())?;
                        nb += 1;
                    }
                    sb += sealed.frame.len() as u64;
                }
            }
        }
        Ok((nb, nc, sb))
    }

    /// Starts the kernel's writeback of the store file's dirty pages (those redb spilled from
    /// its cache), without waiting: the commit's fsync then finds little left to write, instead
    /// of writing the whole snapshot while both cores idle. Only a speed-up, so a failure is
    /// ignored.
    fn kick_writeback(&mut self) {
        if self.writeback.is_none() {
            self.writeback = File::open(self.store.dir().join(crate::store::DB_FILE)).ok();
        }
        if let Some(f) = &self.writeback {
            crate::files::start_writeback(f);
        }
    }

    /// The write transaction, with the segment log's last segment written and its counter
    /// saved.
    pub fn take_txn(&mut self) -> Result<WriteTransaction> {
        let Some((txn, segw)) = self.txn.take() else {
            return self.store.begin_write();
        };
        crate::store::finish_log(&txn, segw, &mut txn.open_table(SEGMENTS)?)?;
        Ok(txn)
    }
}

/// What the workers share while reading.
pub(crate) struct ReadCtx<'a> {
    /// The workspace root the entries' paths are relative to.
    pub root: &'a Path,
    /// The read view deduplication checks against.
    pub reader: &'a Reader,
    /// Ids some worker already decided to store in this snapshot, so identical files are
    /// compressed once.
    claimed: Claims,
    /// The zstd level.
    pub level: i32,
    /// Read and hash only: store nothing.
    pub dry_run: bool,
    /// Told of every byte read.
    pub progress: &'a dyn Progress,
    /// Bytes read in all.
    pub bytes_read: AtomicU64,
}

impl<'a> ReadCtx<'a> {
    /// A context for reading below `root`, nothing claimed or read yet.
    pub fn new(
        root: &'a Path,
        reader: &'a Reader,
        level: i32,
        dry_run: bool,
        progress: &'a dyn Progress,
    ) -> ReadCtx<'a> {
        ReadCtx {
            root,
            reader,
            claimed: Claims::default(),
            level,
            dry_run,
            progress,
            bytes_read: AtomicU64::new(0),
        }
    }

    /// Whether this worker should store `id`: not in the store and not claimed by another.
    fn claim(&self, id: &Id, is_chunk: bool) -> Result<bool> {
        if self.dry_run {
            return Ok(false);
        }
        let stored = if is_chunk {
            self.reader.has_chunk(id)?
        } else {
            self.reader.has_blob(id)?
        };
        if stored {
            return Ok(false);
        }
        Ok(self.claimed.claim(*id))
    }

    fn count(&self, n: usize) {
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        self.progress.advance(n as u64, 0);
    }
}

/// Reads, hashes and (unless dry-run) compresses the files at `to_read` on the rayon pool,
/// while this thread writes what they produce into `sink`. One outcome per index, in order.
pub(crate) fn read_files(
    ctx: &ReadCtx,
    entries: &[WalkEntry],
    to_read: &[usize],
    sink: &mut Sink,
) -> Result<Vec<Read1>> {
    if to_read.is_empty() {
        return Ok(Vec::new());
    }
    let (tx, rx) = bounded::<Vec<Put>>(CHANNEL_BATCHES);
    let runs = runs(entries, to_read);
    // Workers take runs in order from one cursor, so the prefetcher can run ahead of them all.
    let cursor = Cursor::default();
    std::thread::scope(|s| {
        s.spawn(|| prefetch(ctx.root, entries, &runs, &cursor));
        // Stops the prefetcher when this thread leaves the scope, however: a failed spawn of
        // the workers would otherwise leave the scope waiting for it forever.
        let _stop = StopOnDrop(&cursor);
        let worker = s.spawn(|| {
            // And as soon as the workers are done, or one panicked (before the writer loop
            // below ends): the scope would otherwise wait for it instead of reporting the panic.
            let _stop = StopOnDrop(&cursor);
            // Each run gathers into its own batch and group, sent when full and when the run
            // ends. Runs, not rayon's own splits: those can be a few dozen files, and each
            // would end a group early.
            let mut per_run: Vec<(usize, Vec<Read1>)> = (0..rayon::current_num_threads())
                .into_par_iter()
                .flat_map_iter(|_| {
                    let mut mine = Vec::new();
                    loop {
                        let k = cursor.take();
                        let Some(run) = runs.get(k) else { break };
                        let mut batch = Batch::new(&tx, ctx.level);
                        let outcomes = run
                            .iter()
                            .map(|&i| read_one(ctx, &entries[i], &mut batch))
                            .collect::<Vec<_>>();
                        mine.push((k, outcomes));
                    }
                    mine
                })
                .collect();
            drop(tx);
            per_run.sort_unstable_by_key(|(k, _)| *k);
            per_run.into_iter().flat_map(|(_, o)| o).collect::<Vec<_>>()
        });
        let mut failure = None;
        while let Ok(batch) = rx.recv() {
            if let Err(e) = sink.put(&batch) {
                failure = Some(e);
                break;
            }
        }
        // Dropping the receiver makes the workers' sends fail, so they stop early on error.
        drop(rx);
        let outcomes = worker
            .join()
            .map_err(|_| Error::Internal("a snapshot worker thread panicked".into()))?;
        match failure {
            Some(e) => Err(e),
            None => Ok(outcomes),
        }
    })
}

/// The next run to read, shared by the workers, and what wakes the prefetcher when it moves.
///
/// The prefetcher sleeps on a condition variable, not in a polling loop: polling every 200 µs
/// woke it ~5,000 times a second on a cached tree, each wake-up taking a core from a worker,
/// and the snapshot cost ~10% more CPU (the same compression took more cycles).
#[derive(Default)]
struct Cursor {
    next: AtomicUsize,
    done: AtomicBool,
    lock: Mutex<()>,
    moved: Condvar,
}

impl Cursor {
    /// Takes the next run's index (past the end once all are taken).
    fn take(&self) -> usize {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        self.wake();
        k
    }

    /// Ends the prefetch: the workers are done.
    fn stop(&self) {
        self.done.store(true, Ordering::Relaxed);
        self.wake();
    }

    /// Wakes the prefetcher. Under the lock, so a wake between its check and its wait is not
    /// lost.
    fn wake(&self) {
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.moved.notify_one();
    }

    /// The lowest run not yet taken, once it is above `at - ahead` (None once stopped).
    fn wait_for_room(&self, at: usize, ahead: usize) -> Option<usize> {
        let mut held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.done.load(Ordering::Relaxed) {
                return None;
            }
            let taken = self.next.load(Ordering::Relaxed);
            if at < taken + ahead {
                return Some(taken);
            }
            held = self.moved.wait(held).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Stops the prefetch when dropped, unwinding included.
struct StopOnDrop<'a>(&'a Cursor);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Runs the prefetcher keeps ahead of the highest run a worker took: 8 MiB at most.
const PREFETCH_RUNS: usize = 4;

/// Asks the kernel to read the small files of the next runs into the page cache while the
/// workers read the current ones (`posix_fadvise(WILLNEED)` starts the reads and returns).
/// A worker reads one file at a time, so when the tree is not in the page cache the disk
/// sees one request per worker and the cores wait: a cold snapshot of a million files, none
/// cached, took 78 s on two threads and 33 s on eight (`RAYON_NUM_THREADS`), but eight
/// workers cost twice the memory and nothing when the files are cached. The hint costs an
/// open and a close per file on this thread. Large files are left to the kernel's own
/// readahead: one hint would pull all of such a file in at once.
fn prefetch(root: &Path, entries: &[WalkEntry], runs: &[&[usize]], cursor: &Cursor) {
    let mut at = 0;
    while at < runs.len() {
        let Some(taken) = cursor.wait_for_room(at, PREFETCH_RUNS) else {
            return;
        };
        at = at.max(taken);
        let Some(run) = runs.get(at) else { return };
        for &i in *run {
            let e = &entries[i];
            if e.ty != EntryType::File || e.stat.size >= blob::CHUNK_THRESHOLD {
                continue;
            }
            // A hint: a file that cannot be opened is the worker's to report.
            if let Ok(file) = open_entry(&join_rel(root, &e.path)) {
                let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::WillNeed);
            }
        }
        at += 1;
    }
}

/// Cuts `to_read` into runs of consecutive files holding about [`RUN_BYTES`], the units the
/// pool reads in parallel.
fn runs<'a>(entries: &[WalkEntry], to_read: &'a [usize]) -> Vec<&'a [usize]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (n, &i) in to_read.iter().enumerate() {
        bytes += entries[i].stat.size;
        if bytes >= RUN_BYTES {
            out.push(&to_read[start..=n]);
            (start, bytes) = (n + 1, 0);
        }
    }
    if start < to_read.len() {
        out.push(&to_read[start..]);
    }
    out
}

/// Objects on their way to the writer, sent together, and the group this job's small blobs
/// are gathered in (sealed when full and when the job ends).
struct Batch<'t> {
    tx: &'t Sender<Vec<Put>>,
    puts: Vec<Put>,
    bytes: usize,
    group: group::Group,
    level: i32,
    /// A send failed: the writer is gone.
    closed: bool,
}

impl<'t> Batch<'t> {
    fn new(tx: &'t Sender<Vec<Put>>, level: i32) -> Batch<'t> {
        Batch {
            tx,
            puts: Vec::new(),
            bytes: 0,
            group: group::Group::default(),
            level,
            closed: false,
        }
    }

    /// Adds `put`, sending the batch when it is full. False if the writer went away.
    fn push(&mut self, put: Put) -> bool {
        self.bytes += match &put {
            Put::Blob(_, _, p) | Put::Chunk(_, _, p) => p.bytes.len(),
            Put::Chunked(_, r, _) => r.len(),
            Put::Group(g) => g.frame.len(),
        };
        self.puts.push(put);
        if self.bytes >= BATCH_BYTES || self.puts.len() >= BATCH_ITEMS {
            self.send();
        }
        !self.closed
    }

    /// Adds a new small blob to the job's group, sealing and queueing the group when it is
    /// full. False if the writer went away.
    fn join(&mut self, id: Id, data: &[u8]) -> bool {
        if self.group.push(id, data) {
            self.seal();
        }
        !self.closed
    }

    /// Compresses the group as it is and queues it. If zstd cannot (out of memory), its blobs
    /// go out one by one instead: a claimed blob that is never sent would be missing from the
    /// snapshot.
    fn seal(&mut self) {
        match self.group.seal(self.level) {
            Ok(Some(sealed)) => {
                self.push(Put::Group(sealed));
            }
            Ok(None) => {}
            Err(_) => {
                for (id, data) in self.group.drain() {
                    let size = data.len() as u64;
                    self.push(Put::Blob(id, size, blob::encode_payload(&data, self.level)));
                }
            }
        }
    }

    fn send(&mut self) {
        if self.puts.is_empty() || self.closed {
            return;
        }
        self.bytes = 0;
        let puts = std::mem::replace(&mut self.puts, Vec::with_capacity(BATCH_ITEMS));
        self.closed = self.tx.send(puts).is_err();
    }
}

impl Drop for Batch<'_> {
    /// A job's last objects: its group is sealed and every batch is sent before `read_files`
    /// returns.
    fn drop(&mut self) {
        self.seal();
        self.send();
    }
}

fn read_one(ctx: &ReadCtx, entry: &WalkEntry, batch: &mut Batch) -> Read1 {
    let path = join_rel(ctx.root, &entry.path);
    let result = if entry.ty == EntryType::Symlink {
        read_symlink(ctx, &path, batch)
    } else {
        read_file(ctx, &path, batch)
    };
    ctx.progress.advance(0, 1);
    match result {
        Ok(r) => r,
        Err(e) => Read1::Skip(SkipReason::Unreadable, e.to_string()),
    }
}

fn read_symlink(ctx: &ReadCtx, path: &Path, batch: &mut Batch) -> Result<Read1> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Read1::Skip(SkipReason::Vanished, e.to_string()));
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    if !meta.file_type().is_symlink() {
        return Ok(Read1::Skip(
            SkipReason::Vanished,
            "replaced by another kind of file during the snapshot".into(),
        ));
    }
    let target = std::fs::read_link(path).at(path)?;
    let bytes = target.as_os_str().as_bytes();
    let id = Id::of(bytes);
    ctx.bytes_read
        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    if ctx.claim(&id, false)?
        && !batch.push(Put::Blob(
            id,
            bytes.len() as u64,
            blob::encode_payload(bytes, ctx.level),
        ))
    {
        return Ok(Read1::Aborted);
    }
    Ok(Read1::Ok {
        id,
        size: bytes.len() as u64,
        stat: Stat::from_metadata(&meta),
        unstable: false,
    })
}

/// Opens a walked file for reading. O_NOFOLLOW: the entry may have been swapped for a symlink
/// since the walk; O_NONBLOCK: or for a fifo, whose open would block forever.
fn open_entry(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Reads a regular file; if its stat changes while it is read, reads it again (twice at most)
/// and then reports it as unstable.
fn read_file(ctx: &ReadCtx, path: &Path, batch: &mut Batch) -> Result<Read1> {
    let mut last = None;
    for _ in 0..3 {
        let file = match open_entry(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Read1::Skip(
                    SkipReason::Vanished,
                    "deleted during the snapshot".into(),
                ));
            }
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Ok(Read1::Skip(
                    SkipReason::Vanished,
                    "replaced by a symlink during the snapshot".into(),
                ));
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let before = file.metadata().at(path)?;
        if !before.is_file() {
            return Ok(Read1::Skip(
                SkipReason::Vanished,
                "replaced by another kind of file during the snapshot".into(),
            ));
        }
        let stored = if before.len() < blob::CHUNK_THRESHOLD {
            store_small(ctx, path, &file, before.len(), batch)?
        } else {
            store_large(ctx, path, &file, batch)?
        };
        let Some((id, size)) = stored else {
            return Ok(Read1::Aborted);
        };
        let after = file.metadata().at(path)?;
        let (b, a) = (Stat::from_metadata(&before), Stat::from_metadata(&after));
        if a == b && size == a.size {
            return Ok(Read1::Ok {
                id,
                size,
                stat: a,
                unstable: false,
            });
        }
        last = Some((id, size, a));
    }
    match last {
        Some((id, size, stat)) => Ok(Read1::Ok {
            id,
            size,
            stat,
            unstable: true,
        }),
        None => Ok(Read1::Aborted),
    }
}

thread_local! {
    /// Each worker's read buffer, reused from file to file (see [`KEEP_BUFFER`]).
    static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Reads `file`, of `len` bytes when fstat'ed, into `buf` (grown as needed) and returns what
/// it read. One read() when the file is as long as it was: the caller's second fstat catches
/// a change of size or mtime. A file that grew is read to its end.
fn read_small<'b>(file: &File, len: u64, buf: &'b mut Vec<u8>) -> std::io::Result<Cow<'b, [u8]>> {
    let want = len as usize + 1;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut filled = 0;
    let mut reader = file;
    while filled < want {
        match reader.read(&mut buf[filled..want]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if filled == want - 1 {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if filled < want {
        return Ok(Cow::Borrowed(&buf[..filled]));
    }
    // It grew since the fstat: take all of it (the caller reads it again or calls it unstable).
    let mut all = buf[..filled].to_vec();
    reader.read_to_end(&mut all)?;
    Ok(Cow::Owned(all))
}

/// Hashes a small file whole and, where it is new, queues it compressed. None if the writer
/// went away.
fn store_small(
    ctx: &ReadCtx,
    path: &Path,
    file: &File,
    len: u64,
    batch: &mut Batch,
) -> Result<Option<(Id, u64)>> {
    READ_BUF.with(|cell| {
        let mut buf = cell.borrow_mut();
        let data = read_small(file, len, &mut buf).at(path)?;
        ctx.count(data.len());
        let id = Id::of(&data);
        let size = data.len() as u64;
        let sent = if !ctx.claim(&id, false)? {
            true
        } else if group::joins(size) {
            batch.join(id, &data)
        } else {
            batch.push(Put::Blob(id, size, blob::encode_payload(&data, ctx.level)))
        };
        drop(data);
        if buf.len() > KEEP_BUFFER {
            *buf = Vec::new();
        }
        Ok(sent.then_some((id, size)))
    })
}

/// Cuts a large file into chunks with FastCDC while hashing it whole, and queues its new
/// chunks and its record. The chunks' own hashes and compression run on the pool,
/// [`CHUNK_GROUP`] at a time, while this thread reads, cuts and hashes the next group: reading
/// is serial, so without the overlap one core idled through it. None if the writer went away.
fn store_large(
    ctx: &ReadCtx,
    path: &Path,
    file: &File,
    batch: &mut Batch,
) -> Result<Option<(Id, u64)>> {
    let mut hasher = blake3::Hasher::new();
    let mut chunks = Vec::new();
    let mut size = 0u64;
    let mut cuts = blob::chunker_sized(file, sizes_for(ctx, path, file)?);
    let mut group = Vec::new();
    loop {
        // Two groups in flight at most: the one being stored and the one being read.
        let (stored, next) = rayon::join(
            || store_chunks(ctx, &mut group, &mut chunks, batch),
            || -> Result<Vec<Vec<u8>>> {
                let mut next = Vec::with_capacity(CHUNK_GROUP);
                for chunk in cuts.by_ref() {
                    let chunk = chunk.at(path)?;
                    hasher.update(&chunk);
                    size += chunk.len() as u64;
                    ctx.count(chunk.len());
                    next.push(chunk);
                    if next.len() == CHUNK_GROUP {
                        break;
                    }
                }
                Ok(next)
            },
        );
        if !stored? {
            return Ok(None);
        }
        group = next?;
        if group.is_empty() {
            break;
        }
    }
    let id = Id::from(hasher.finalize());
    if !ctx.claim(&id, false)? {
        return Ok(Some((id, size)));
    }
    let mut held: Vec<Id> = chunks.iter().map(|c| c.id).collect();
    let record = if chunks.len() > blob::PAGED_ABOVE {
        let mut refs = Vec::new();
        for (page, bytes) in blob::paged(&chunks) {
            refs.push(page);
            // Pages are raw: chunk ids do not compress.
            let len = bytes.len() as u32;
            let payload = Payload { zstd: false, bytes };
            if ctx.claim(&page.id, true)? && !batch.push(Put::Chunk(page.id, len, payload)) {
                return Ok(None);
            }
        }
        held.extend(refs.iter().map(|p| p.id));
        blob::encode_paged(size, &refs)
    } else {
        blob::encode_chunked(size, &chunks)
    };
    if !batch.push(Put::Chunked(id, record, held)) {
        return Ok(None);
    }
    Ok(Some((id, size)))
}

/// The chunk sizes to cut `file` with: [`blob::CHUNK_SIZES_BEFORE`] when the store holds the
/// first chunk those sizes cut from the file, and more of the chunks they cut from its first
/// [`PROBE_BYTES`] than of those today's sizes cut, i.e. an earlier version of this file was
/// chunked before the chunk sizes changed: cut the same way, it shares its unchanged chunks with that
/// version instead of storing them all again. Today's sizes otherwise. Reads the start with pread (the page cache keeps it for the pass
/// that follows); not counted as read.
fn sizes_for(ctx: &ReadCtx, path: &Path, file: &File) -> Result<blob::ChunkSizes> {
    if ctx.dry_run {
        return Ok(blob::CHUNK_SIZES);
    }
    let mut head = vec![0u8; PROBE_BYTES];
    let mut filled = 0;
    while filled < head.len() {
        match file.read_at(&mut head[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let head = &head[..filled];
    // The chunks `sizes` cuts from `head` that are cut as in the whole file: all of them if
    // `head` is the whole file, else those ending before its end (a cut at `i` looks at byte
    // `i` too; one at the largest size is forced wherever it falls).
    let ended = head.len() < PROBE_BYTES;
    let whole = |sizes| {
        let mut cuts = blob::chunker_sized(head, sizes);
        let mut end = 0;
        std::iter::from_fn(move || {
            let chunk = cuts.next()?.at(path);
            if let Ok(c) = &chunk {
                end += c.len();
                if end >= head.len() && !ended {
                    return None;
                }
            }
            Some(chunk)
        })
    };
    // The common cases, one chunk cut and looked up: the store does not hold the file's start
    // cut the old way (a new file, or one chunked since).
    match whole(blob::CHUNK_SIZES_BEFORE).next().transpose()? {
        Some(before) if ctx.reader.has_chunk(&Id::of(&before))? => {}
        _ => return Ok(blob::CHUNK_SIZES),
    }
    // Rare: the share of whole chunks the store holds decides, so a first chunk both sizes
    // happen to cut alike (or another file's start) does not.
    let share = |sizes| -> Result<f64> {
        let (mut held, mut all) = (0, 0);
        for chunk in whole(sizes) {
            all += 1;
            if ctx.reader.has_chunk(&Id::of(&chunk?))? {
                held += 1;
            }
        }
        Ok(held as f64 / f64::from(all.max(1)))
    };
    if share(blob::CHUNK_SIZES_BEFORE)? > share(blob::CHUNK_SIZES)? {
        return Ok(blob::CHUNK_SIZES_BEFORE);
    }
    Ok(blob::CHUNK_SIZES)
}

/// Hashes and (where new) compresses the chunks in `group` in parallel, appends their refs to
/// `chunks` in file order and queues the new ones; empties `group`. False if the writer went
/// away.
fn store_chunks(
    ctx: &ReadCtx,
    group: &mut Vec<Vec<u8>>,
    chunks: &mut Vec<ChunkRef>,
    batch: &mut Batch,
) -> Result<bool> {
    let done = group
        .par_iter()
        .map(|data| {
            let id = Id::of(data);
            let payload = if ctx.claim(&id, true)? {
                Some(blob::encode_payload(data, ctx.level))
            } else {
                None
            };
            Ok((id, data.len() as u32, payload))
        })
        .collect::<Result<Vec<_>>>()?;
    group.clear();
    for (id, len, payload) in done {
        chunks.push(ChunkRef { id, len });
        if let Some(p) = payload
            && !batch.push(Put::Chunk(id, len, p))
        {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod chunking_tests;

#[cfg(test)]
mod grouping_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(data: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        let r = File::open(f.path()).unwrap();
        (f, r)
    }

    #[test]
    fn read_small_reads_the_file_as_it_is_whatever_its_fstat_said() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut buf = Vec::new();
        // As long as fstat said.
        let (_t, f) = file_with(&data);
        assert_eq!(
            read_small(&f, 10_000, &mut buf).unwrap().as_ref(),
            &data[..]
        );
        // It grew after the fstat: all of it, not the first `len` bytes.
        let (_t, f) = file_with(&data);
        assert_eq!(read_small(&f, 100, &mut buf).unwrap().as_ref(), &data[..]);
        // It shrank: what is there. The reused buffer holds longer earlier content.
        let (_t, f) = file_with(&data[..50]);
        assert_eq!(
            read_small(&f, 10_000, &mut buf).unwrap().as_ref(),
            &data[..50]
        );
        let (_t, f) = file_with(b"");
        assert_eq!(read_small(&f, 0, &mut buf).unwrap().as_ref(), b"");
    }

    /// Many runs, taken by the workers from one cursor while the prefetcher runs ahead: one
    /// outcome per file, in the order asked, each the file's content, and a file that is gone
    /// is the worker's to report, not the prefetcher's.
    #[test]
    fn outcomes_come_back_in_order_across_many_runs() {
        let ws = tempfile::tempdir().unwrap();
        let store_dir = tempfile::tempdir().unwrap();
        let store = Store::open(store_dir.path(), crate::store::StoreOptions::default()).unwrap();
        let mut entries = Vec::new();
        let mut contents = Vec::new();
        // ~12 MiB in 96 files: six runs or more.
        for i in 0..96u32 {
            let name = format!("f{i:03}");
            let data: Vec<u8> = (0..128 * 1024u32)
                .map(|k| (k.wrapping_mul(2_654_435_761).wrapping_add(i * 97) >> 13) as u8)
                .collect();
            std::fs::write(ws.path().join(&name), &data).unwrap();
            let meta = std::fs::symlink_metadata(ws.path().join(&name)).unwrap();
            entries.push(WalkEntry {
                path: name.into_bytes(),
                ty: EntryType::File,
                stat: Stat::from_metadata(&meta),
                cached: None,
                fresh: false,
            });
            contents.push(data);
        }
        std::fs::remove_file(ws.path().join("f050")).unwrap();
        let to_read: Vec<usize> = (0..entries.len()).collect();
        assert!(runs(&entries, &to_read).len() >= 6);
        let reader = store.reader().unwrap();
        let progress = crate::progress::NoProgress;
        let ctx = ReadCtx::new(ws.path(), &reader, 3, false, &progress);
        let mut sink = Sink::new(&store);
        let outcomes = read_files(&ctx, &entries, &to_read, &mut sink).unwrap();
        assert_eq!(outcomes.len(), entries.len());
        for (i, outcome) in outcomes.iter().enumerate() {
            match outcome {
                Read1::Ok { id, size, .. } if i != 50 => {
                    assert_eq!(*id, Id::of(&contents[i]), "file {i}");
                    assert_eq!(*size, contents[i].len() as u64);
                }
                Read1::Skip(SkipReason::Vanished, _) if i == 50 => {}
                _ => panic!("file {i}: unexpected outcome"),
            }
        }
    }
}
