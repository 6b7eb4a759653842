//! The daemon process: the socket, the poll loop over the workspaces' inotify descriptors, the
//! automatic snapshots, and the event stream.
//!
//! Threads: the main thread polls the listening socket, the store directory and every
//! workspace's inotify descriptor, drains events into the journals, gathers `changed` events and
//! starts automatic snapshots. Each connection gets a thread; a query drains its workspace's
//! queue itself before answering (under the state lock), so an answer never misses a change
//! that finished before it was asked. An automatic snapshot runs on a thread of its own and asks
//! this daemon, over the socket, like any other snapshot.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::auto::AutoState;
use super::journal::{Journal, Notice};
use super::status::{Ack, AutoStatus, BadRequest, DaemonStatus, WatchStatus};
use super::stream::Hub;
use super::watchlist::{AutoPolicy, WatchList, make_private_dir};
use super::{DaemonError, DaemonOptions};
use crate::error::{Error, IoContext, Result};
use crate::events::Event;
use crate::files::now_ns;
use crate::scan::daemon_link::{Request, paths};
use crate::scan::token::Token;
use crate::store::{Store, StoreOptions};

/// The longest the loop sleeps: how soon it notices `stop`.
const TICK: Duration = Duration::from_millis(200);

/// A watched workspace with its automatic-snapshot state.
struct Watched {
    journal: Journal,
    auto: Option<AutoPolicy>,
    auto_state: AutoState,
    last_auto_ns: Option<i64>,
    last_auto_started_ns: Option<i64>,
    auto_taken: u64,
    auto_attempts: u64,
    last_auto_error: Option<String>,
}

struct State {
    instance: u64,
    seq: u64,
    watched: Vec<Watched>,
    last_op: u64,
    /// The copy overlays of watched workspaces whose directories are watched with them.
    overlays: Vec<OverlayTree>,
    /// When the overlays were last listed.
    overlays_checked: Instant,
}

/// A copy overlay's directory, watched because its workspace is: writes there are `changed`
/// events of the workspace that name the overlay.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OverlayTree {
    /// The directory (the journal's name).
    dir: String,
    /// The overlay's workspace.
    workspace: String,
    /// The overlay's id.
    id: u64,
}

/// How often the overlays are listed again without a commit to the store: a copy overlay's
/// directory is filled after its record is committed.
const OVERLAY_CHECK: Duration = Duration::from_secs(1);

struct Shared {
    state: Mutex<State>,
    /// The store, for listing overlays when the watch list is re-read.
    store: Arc<Store>,
    events: Hub,
    stop: AtomicBool,
    opts: DaemonOptions,
    store_dir: PathBuf,
    started_ns: i64,
    log: Arc<dyn Fn(&str) + Send + Sync>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether some process holds the store's daemon lock (a daemon runs or is exiting).
pub(super) fn lock_held(store_dir: &Path) -> bool {
    let Ok(f) = std::fs::File::open(paths(store_dir).lock) else {
        return false;
    };
    f.try_lock_shared().is_err()
}

/// Runs the daemon for the store in `store_dir` in this process until a `stop` request.
/// `log` receives one line per noteworthy thing (start, errors of automatic snapshots...).
pub fn run(
    store_dir: &Path,
    opts: DaemonOptions,
    log: Arc<dyn Fn(&str) + Send + Sync>,
) -> Result<()> {
    let p = paths(store_dir);
    if !store_dir.join(crate::store::DB_FILE).exists() {
        return Err(Error::NoStore(store_dir.to_path_buf()));
    }
    make_private_dir(&p.dir)?;
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&p.lock)
        .at(&p.lock)?;
    // Held until this process exits (flock, released with the descriptor).
    if lock_file.try_lock().is_err() {
        return Err(DaemonError::AlreadyRunning(store_dir.to_path_buf()).into());
    }
    if p.socket.as_os_str().len() >= 108 {
        return Err(DaemonError::SocketPathTooLong(p.socket.clone()).into());
    }
    // A socket left by a daemon that was killed: the lock says nobody serves it.
    match std::fs::remove_file(&p.socket) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&p.socket, e)),
    }
    let listener = UnixListener::bind(&p.socket).at(&p.socket)?;
    listener.set_nonblocking(true).at(&p.socket)?;
    let store = Arc::new(Store::open(
        store_dir,
        StoreOptions {
            create: false,
            command: vec!["rewind".into(), "daemon".into(), "(automatic)".into()],
            ..StoreOptions::default()
        },
    )?);
    let last_op = store
        .reader()?
        .ops(None, 1)?
        .first()
        .map(|o| o.id())
        .unwrap_or(0);
    let instance = {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one((std::process::id(), now_ns()))
    };
    let shared = Arc::new(Shared {
        store: store.clone(),
        state: Mutex::new(State {
            instance,
            seq: 1,
            watched: Vec::new(),
            last_op,
            overlays: Vec::new(),
            overlays_checked: Instant::now(),
        }),
        events: Hub::default(),
        stop: AtomicBool::new(false),
        opts,
        store_dir: store_dir.to_path_buf(),
        started_ns: now_ns(),
        log,
    });
    let store_watch = watch_store_dir(store_dir);
    shared.reload();
    (shared.log)(&format!(
        "rewind daemon {} started for {} (pid {})",
        env!("CARGO_PKG_VERSION"),
        store_dir.display(),
        std::process::id()
    ));

    while !shared.stop.load(Ordering::Relaxed) {
        let mut fds = vec![libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        if let Some(w) = &store_watch {
            fds.push(libc::pollfd {
                fd: w.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let timeout = {
            let st = lock(&shared.state);
            for w in &st.watched {
                if let Some(fd) = w.journal.fd() {
                    fds.push(libc::pollfd {
                        fd,
                        events: libc::POLLIN,
                        revents: 0,
                    });
                }
            }
            shared.next_wakeup(&st)
        };
        // SAFETY: `fds` is a valid array of pollfd of the length passed.
        unsafe {
            libc::poll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                timeout.as_millis() as i32,
            )
        };
        if fds[0].revents != 0 {
            accept_all(&shared, &listener);
        }
        if let Some(w) = &store_watch
            && fds[1].revents != 0
        {
            let mut reload = false;
            let mut ops = false;
            let _ = crate::scan::watch::read_events(w, &mut |_, _, name| {
                if name == b"watch.json" {
                    reload = true;
                } else if name.starts_with(crate::store::DB_FILE.as_bytes()) {
                    ops = true;
                }
            });
            if reload {
                shared.reload();
            }
            if ops {
                shared.emit_ops(&store);
                shared.check_overlays();
            }
        }
        if lock(&shared.state).overlays_checked.elapsed() >= OVERLAY_CHECK {
            shared.check_overlays();
        }
        shared.tick(&store);
    }
    let _ = std::fs::remove_file(&p.socket);
    (shared.log)("rewind daemon stopped");
    drop(lock_file);
    Ok(())
}

/// Watches the store directory (operations committed) and the daemon directory (the watch
/// list replaced) with one inotify descriptor.
fn watch_store_dir(store_dir: &Path) -> Option<OwnedFd> {
    use rustix::fs::inotify;
    let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC).ok()?;
    for (dir, mask) in [
        (
            store_dir.to_path_buf(),
            libc::IN_MODIFY | libc::IN_CLOSE_WRITE,
        ),
        (
            paths(store_dir).dir,
            libc::IN_MOVED_TO | libc::IN_CLOSE_WRITE,
        ),
    ] {
        // A directory that cannot be watched only costs the daemon its wake-ups from it.
        let _ = inotify::add_watch(&fd, &dir, inotify::WatchFlags::from_bits_retain(mask));
    }
    Some(fd)
}

fn accept_all(shared: &Arc<Shared>, listener: &UnixListener) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let conn = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name("rewind-daemon-conn".into())
                    .spawn(move || serve(&conn, stream));
                if let Err(e) = spawned {
                    (shared.log)(&format!("cannot start a connection thread: {e}"));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

/// Serves one connection until the client hangs up.
fn serve(shared: &Arc<Shared>, stream: UnixStream) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut out = stream;
    let mut lines = BufReader::new(read_half);
    let mut line = String::new();
    loop {
        line.clear();
        match lines.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let req: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                if write_json(
                    &mut out,
                    &BadRequest {
                        error: format!("bad request: {e}"),
                    },
                )
                .is_err()
                {
                    return;
                }
                continue;
            }
        };
        let written = match req {
            Request::Changes { workspace, since } => {
                let (answer, bytes) = shared.query(&workspace, since);
                let mut buf = serde_json::to_vec(&answer).unwrap_or_default();
                buf.push(b'\n');
                buf.extend_from_slice(&bytes);
                out.write_all(&buf)
            }
            Request::Status => write_json(&mut out, &shared.status()),
            Request::Reload => {
                shared.reload();
                write_json(
                    &mut out,
                    &Ack {
                        ok: true,
                        stopping: false,
                    },
                )
            }
            Request::Stop => {
                shared.stop.store(true, Ordering::Relaxed);
                write_json(
                    &mut out,
                    &Ack {
                        ok: true,
                        stopping: true,
                    },
                )
            }
            Request::Subscribe {
                workspace,
                replay,
                follow,
            } => {
                shared.events.serve(
                    out,
                    lines.into_inner(),
                    workspace.as_deref(),
                    replay,
                    follow,
                );
                return;
            }
        };
        if written.is_err() {
            return;
        }
    }
}

fn write_json<T: serde::Serialize>(out: &mut UnixStream, v: &T) -> std::io::Result<()> {
    let mut buf = serde_json::to_vec(v).unwrap_or_default();
    buf.push(b'\n');
    out.write_all(&buf)
}

impl Shared {
    /// Sends an event to the subscribers that want it and keeps it for replays.
    fn emit(&self, e: Event) {
        self.events.emit(e);
    }

    fn emit_notices(&self, w: &Journal, notices: Vec<Notice>) {
        for n in notices {
            let workspace = w.name.clone();
            let time_ns = now_ns();
            self.emit(match n {
                Notice::Overflow => Event::Overflow { workspace, time_ns },
                Notice::Broken(reason) => {
                    (self.log)(&format!("not watching {workspace}: {reason}"));
                    Event::Unwatched {
                        workspace,
                        time_ns,
                        reason,
                    }
                }
            });
        }
    }

    /// Events for the operations committed since the last look.
    fn emit_ops(&self, store: &Store) {
        let last = lock(&self.state).last_op;
        let Ok(reader) = store.reader() else { return };
        let Ok(mut ops) = reader.ops(None, 1000) else {
            return;
        };
        ops.retain(|o| o.id() > last);
        ops.reverse();
        for op in &ops {
            let label = op
                .after()
                .and_then(|id| reader.snapshot_record(&id).ok())
                .and_then(|r| {
                    r.meta
                        .iter()
                        .find(|(k, _)| k == "label")
                        .map(|(_, v)| v.clone())
                });
            self.emit(Event::from_op(op, label));
        }
        if let Some(op) = ops.last() {
            let mut st = lock(&self.state);
            st.last_op = st.last_op.max(op.id());
        }
    }

    /// The copy overlays of the workspaces in `list` whose directory exists.
    fn overlay_trees(&self, store: &Store, list: &WatchList) -> Vec<OverlayTree> {
        let Ok(all) = crate::overlay::list_records(store) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for rec in all {
            if rec.backend != crate::overlay::Backend::Copy {
                continue;
            }
            let workspace = String::from_utf8_lossy(&rec.workspace).into_owned();
            if !list.workspaces.iter().any(|w| w.path == workspace) {
                continue;
            }
            let Some(dir) = rec.backend.files_dir(store, &rec) else {
                continue;
            };
            let Some(text) = dir.to_str() else { continue };
            if dir.is_dir() {
                out.push(OverlayTree {
                    dir: text.to_string(),
                    workspace,
                    id: rec.id,
                });
            }
        }
        out
    }

    /// Re-reads the watch list when the copy overlays to watch changed (one was created,
    /// filled or dropped).
    fn check_overlays(&self) {
        lock(&self.state).overlays_checked = Instant::now();
        let Ok(list) = WatchList::load(&self.store_dir) else {
            return;
        };
        let now = self.overlay_trees(&self.store, &list);
        if lock(&self.state).overlays != now {
            self.reload();
        }
    }

    /// Re-reads the watch list: starts, stops and re-arms watches (of the listed workspaces
    /// and of their copy overlays' directories).
    fn reload(&self) {
        let mut list = match WatchList::load(&self.store_dir) {
            Ok(l) => l,
            Err(e) => {
                (self.log)(&format!("keeping the current watches: {e}"));
                return;
            }
        };
        let overlays = self.overlay_trees(&self.store, &list);
        for o in &overlays {
            list.workspaces.push(super::watchlist::WatchEntry {
                path: o.dir.clone(),
                auto: None,
            });
        }
        let mut st = lock(&self.state);
        let old_overlays = std::mem::replace(&mut st.overlays, overlays.clone());
        st.overlays_checked = Instant::now();
        let is_overlay = |name: &str| overlays.iter().chain(&old_overlays).any(|o| o.dir == name);
        let seq = st.seq;
        let old = std::mem::take(&mut st.watched);
        let mut kept: Vec<Watched> = Vec::new();
        let mut old_by_name: rustc_hash::FxHashMap<String, Watched> = old
            .into_iter()
            .map(|w| (w.journal.name.clone(), w))
            .collect();
        for entry in &list.workspaces {
            match old_by_name.remove(&entry.path) {
                // A broken watch is re-armed by `watch on` (the workspace may be back).
                Some(mut w) if w.journal.broken.is_none() => {
                    w.auto = entry.auto;
                    kept.push(w);
                }
                _ => {
                    let journal =
                        Journal::open(Path::new(&entry.path), &self.store_dir, seq, &self.opts);
                    let event = match &journal.broken {
                        None => Event::Watching {
                            workspace: entry.path.clone(),
                            time_ns: now_ns(),
                            dirs: journal.watches(),
                        },
                        Some(reason) => {
                            (self.log)(&format!("not watching {}: {reason}", entry.path));
                            Event::Unwatched {
                                workspace: entry.path.clone(),
                                time_ns: now_ns(),
                                reason: reason.clone(),
                            }
                        }
                    };
                    if !is_overlay(&entry.path) {
                        self.emit(event);
                    }
                    kept.push(Watched {
                        journal,
                        auto: entry.auto,
                        auto_state: AutoState::default(),
                        last_auto_ns: None,
                        last_auto_started_ns: None,
                        auto_taken: 0,
                        auto_attempts: 0,
                        last_auto_error: None,
                    });
                }
            }
        }
        for (name, _) in old_by_name {
            if is_overlay(&name) {
                continue;
            }
            self.emit(Event::Unwatched {
                workspace: name,
                time_ns: now_ns(),
                reason: "watch turned off".into(),
            });
        }
        st.watched = kept;
    }

    /// Answers a walk's question about `workspace`.
    fn query(
        &self,
        workspace: &str,
        since: Option<Token>,
    ) -> (crate::scan::daemon_link::QueryAnswer, Vec<u8>) {
        let mut st = lock(&self.state);
        let (instance, seq) = (st.instance, st.seq);
        let Some(w) = st.watched.iter_mut().find(|w| w.journal.name == workspace) else {
            return (
                crate::scan::daemon_link::QueryAnswer {
                    token: None,
                    full: Some("the workspace is not watched".into()),
                    ..Default::default()
                },
                Vec::new(),
            );
        };
        let notices = w.journal.drain(seq, &self.opts);
        self.emit_notices(&w.journal, notices);
        let answer = w.journal.query(since, Token { instance, seq });
        st.seq += 1;
        answer
    }

    /// One pass of the loop: drain every queue, send `changed` events, start automatic
    /// snapshots that are due.
    fn tick(self: &Arc<Self>, store: &Arc<Store>) {
        let now = Instant::now();
        let mut st = lock(&self.state);
        let seq = st.seq;
        let mut due = Vec::new();
        let overlays = st.overlays.clone();
        for w in st.watched.iter_mut() {
            let notices = w.journal.drain(seq, &self.opts);
            self.emit_notices(&w.journal, notices);
            if std::mem::take(&mut w.journal.touched) {
                w.auto_state.changed(now);
            }
            if w.journal
                .changed_since
                .is_some_and(|t| now >= t + self.opts.coalesce)
            {
                let paths = w.journal.take_changed();
                let overlay = overlays.iter().find(|o| o.dir == w.journal.name);
                self.emit(Event::Changed {
                    workspace: overlay
                        .map_or_else(|| w.journal.name.clone(), |o| o.workspace.clone()),
                    time_ns: now_ns(),
                    paths,
                    overlay: overlay.map(|o| o.id),
                });
            }
            if let Some(policy) = &w.auto
                && w.journal.broken.is_none()
                && w.auto_state.due(policy).is_some_and(|t| t <= now)
            {
                w.auto_state.start(now);
                w.last_auto_started_ns = Some(now_ns());
                due.push(w.journal.root.clone());
            }
        }
        drop(st);
        for root in due {
            let (shared, store) = (self.clone(), store.clone());
            let spawned = std::thread::Builder::new()
                .name("rewind-daemon-auto".into())
                .spawn(move || shared.auto_snapshot(&store, &root, now));
            if let Err(e) = spawned {
                (self.log)(&format!("cannot start an automatic snapshot: {e}"));
            }
        }
    }

    /// How long the loop may sleep.
    fn next_wakeup(&self, st: &State) -> Duration {
        let now = Instant::now();
        let mut at = now + TICK;
        for w in &st.watched {
            if let Some(t) = w.journal.changed_since {
                at = at.min(t + self.opts.coalesce);
            }
            if let Some(p) = &w.auto
                && let Some(t) = w.auto_state.due(p)
            {
                at = at.min(t);
            }
        }
        at.saturating_duration_since(now)
            .max(Duration::from_millis(1))
    }

    fn auto_snapshot(&self, store: &Store, root: &Path, started: Instant) {
        let opts = crate::snapshot::SnapshotOptions {
            message: "automatic snapshot".into(),
            meta: vec![("label".into(), "auto".into())],
            if_changed: true,
            ..Default::default()
        };
        let result = crate::budget::snapshot(store, root, &opts, &crate::progress::NoProgress);
        let mut error = None;
        let mut created = false;
        match &result {
            Ok(out) => {
                created = out.report.created;
                if created && let Err(e) = thin(store, root) {
                    (self.log)(&format!(
                        "thinning automatic snapshots of {}: {e}",
                        root.display()
                    ));
                }
            }
            Err(e) => {
                (self.log)(&format!("automatic snapshot of {}: {e}", root.display()));
                error = Some(e.to_string());
            }
        }
        let mut st = lock(&self.state);
        if let Some(w) = st.watched.iter_mut().find(|w| w.journal.root == root) {
            w.auto_state.finish(result.is_ok(), started);
            w.auto_attempts += 1;
            if created {
                w.auto_taken += 1;
                w.last_auto_ns = Some(now_ns());
            }
            w.last_auto_error = error;
        }
    }

    fn status(&self) -> DaemonStatus {
        let st = lock(&self.state);
        let subscribers = self.events.subscribers();
        let workspaces: Vec<WatchStatus> = st
            .watched
            .iter()
            .map(|w| {
                let mut v = w.journal.status();
                v.overlay = st
                    .overlays
                    .iter()
                    .find(|o| o.dir == w.journal.name)
                    .map(|o| o.id);
                v.auto = w.auto.as_ref().map(|p| AutoStatus {
                    quiet_ms: p.quiet_ms,
                    floor_ms: p.floor_ms,
                    taken: w.auto_taken,
                    attempts: w.auto_attempts,
                    last_ns: w.last_auto_ns,
                    last_started_ns: w.last_auto_started_ns,
                    running: w.auto_state.running,
                    pending: w.auto_state.pending_since.is_some(),
                    last_error: w.last_auto_error.clone(),
                });
                v
            })
            .collect();
        DaemonStatus {
            pid: std::process::id(),
            store: self.store_dir.display().to_string(),
            instance: format!("{:016x}", st.instance),
            started_ns: self.started_ns,
            uptime_secs: (now_ns() - self.started_ns) as f64 / 1e9,
            memory_rss_bytes: rss_bytes(),
            token: Token {
                instance: st.instance,
                seq: st.seq,
            },
            watches: st
                .watched
                .iter()
                .map(|w| w.journal.watches())
                .sum::<usize>(),
            overflows: st.watched.iter().map(|w| w.journal.overflows).sum::<u64>(),
            subscribers,
            workspaces,
        }
    }
}

/// Thins the workspace's automatic snapshots per the store's retention.
fn thin(store: &Store, root: &Path) -> Result<()> {
    let config = crate::config::Config::load(store.dir())?;
    crate::forget::forget(
        store,
        &crate::forget::ForgetOptions {
            thin: Some(config.retention.auto_thinning()),
            workspace: Some(root.as_os_str().as_bytes().to_vec()),
            labels: vec!["auto".into()],
            undo_depth: config.retention.undo_depth,
            ..Default::default()
        },
    )?;
    Ok(())
}

/// This process's resident memory, from /proc.
fn rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
