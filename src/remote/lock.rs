//! Lock files on the remote, restic's way: a push writes a shared lock, a gc an exclusive one,
//! each under a name of its own in `locks/`, then lists `locks/`.
//!
//! Why lock files rather than the local gc's epoch: the local epoch works because a redb
//! commit can re-check it atomically; an object store has no transaction spanning a push's
//! many objects, so a gc cannot tell whether a pack it sees unreferenced is garbage or the
//! first half of a push still uploading. The lock makes that question never arise.
//!
//! Safety rests on list-after-write consistency (S3 has had it since December 2020; a local
//! directory has it): each side writes its own lock *before* listing, so of a push and a gc
//! that start together, the one that lists last sees the other. A push that sees a gc lock
//! removes its own, waits and tries again; a gc that sees any other live lock does the same
//! (both up to a timeout, with a varied back-off so they do not retry in step). A push refreshes its lock while it runs; a lock not refreshed for
//! [`STALE_AFTER`], or one whose holder on this host no longer exists, belongs to a process
//! that died and is ignored (and removed by gc).

use std::cell::Cell;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Remote;
use crate::error::{Error, Result};

/// A lock older than this (not refreshed) is taken to belong to a dead process.
pub const STALE_AFTER: Duration = Duration::from_secs(30 * 60);
/// How often a holder rewrites its lock.
const REFRESH_EVERY: Duration = Duration::from_secs(5 * 60);

/// What a lock file holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LockInfo {
    /// "push" (shared) or "gc" (exclusive).
    pub kind: String,
    /// The holder's host name.
    pub host: String,
    /// The holder's process id.
    pub pid: u32,
    /// When it was written or last refreshed, ns since the epoch.
    pub time_ns: i64,
}

impl LockInfo {
    fn describe(&self) -> String {
        format!(
            "a {} by pid {} on {} (lock written {})",
            self.kind,
            self.pid,
            self.host,
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + Duration::from_nanos(self.time_ns.max(0) as u64)
            )
        )
    }

    /// Whether the holder is gone: on this host, a process that no longer exists (as restic
    /// checks); anywhere, a lock not refreshed for [`STALE_AFTER`].
    fn stale(&self) -> bool {
        if self.host == host() && self.pid != std::process::id() && !alive(self.pid) {
            return true;
        }
        let age = crate::files::now_ns().saturating_sub(self.time_ns);
        age > STALE_AFTER.as_nanos() as i64
    }
}

/// A held lock; removed when dropped.
pub struct Lock<'r> {
    remote: &'r Remote,
    key: String,
    info: LockInfo,
    refreshed: Cell<Instant>,
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn write(remote: &Remote, kind: &str) -> Result<(String, LockInfo)> {
    let info = LockInfo {
        kind: kind.to_string(),
        host: host(),
        pid: std::process::id(),
        time_ns: crate::files::now_ns(),
    };
    let nonce =
        crate::id::Id::of(format!("{} {} {:?}", info.pid, info.time_ns, Instant::now()).as_bytes());
    let key = format!("locks/{kind}-{}", &nonce.hex()[..16]);
    remote.put(&key, serde_json::to_vec(&info).unwrap_or_default())?;
    Ok((key, info))
}

/// Sleeps before trying a lock again: 400-600 ms, varied by the lock's random name so that a
/// push and a gc that back off from each other do not retry in step for ever.
fn backoff(key: &str) {
    let jitter = key
        .bytes()
        .fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(u64::from(b)));
    std::thread::sleep(Duration::from_millis(400 + jitter % 200));
}

/// Every lock but `own`: (key, info). A lock file that does not decode counts as live: it
/// may be a newer rewind's.
fn others(remote: &Remote, own: &str) -> Result<Vec<(String, Option<LockInfo>)>> {
    let mut out = Vec::new();
    for (name, _) in remote.list("locks")? {
        let key = format!("locks/{name}");
        if key == own {
            continue;
        }
        let info = remote
            .get(&key)?
            .and_then(|b| serde_json::from_slice::<LockInfo>(&b).ok());
        out.push((key, info));
    }
    Ok(out)
}

/// How a lock taker sees another process's lock.
enum Seen {
    /// It does not stand in the way.
    Ignore,
    /// Stale: removed once this lock is taken.
    Stale,
    /// It stands in the way; the text says whose it is.
    Blocks(String),
}

impl<'r> Lock<'r> {
    /// Takes a shared lock for a push, waiting up to `timeout` while a gc holds the remote.
    pub fn shared(
        remote: &'r Remote,
        timeout: Duration,
        on_wait: &dyn Fn(&str),
    ) -> Result<Lock<'r>> {
        Self::take(remote, "push", timeout, on_wait, |i| match i {
            Some(i) if i.kind == "push" || i.stale() => Seen::Ignore,
            Some(i) => Seen::Blocks(i.describe()),
            None => Seen::Blocks(String::new()),
        })
    }

    /// Takes the exclusive lock for a gc, waiting up to `timeout` while any other live lock
    /// (a push, another gc) is held; `on_wait` is told once what it waits for. Stale locks are
    /// removed.
    pub fn exclusive(
        remote: &'r Remote,
        timeout: Duration,
        on_wait: &dyn Fn(&str),
    ) -> Result<Lock<'r>> {
        Self::take(remote, "gc", timeout, on_wait, |i| match i {
            Some(i) if i.stale() => Seen::Stale,
            Some(i) => Seen::Blocks(i.describe()),
            None => Seen::Blocks(String::new()),
        })
    }

    /// Writes a lock of `kind`, then looks at the others: when none blocks it, it is held
    /// (the stale ones removed); otherwise it is withdrawn and retried after a backoff until
    /// `timeout`. Writing first and then looking means two takers that race both see each
    /// other, so at most one of them keeps its lock. An unreadable lock blocks (an empty
    /// `Blocks` text is named by its key).
    fn take(
        remote: &'r Remote,
        kind: &str,
        timeout: Duration,
        on_wait: &dyn Fn(&str),
        judge: impl Fn(Option<&LockInfo>) -> Seen,
    ) -> Result<Lock<'r>> {
        let start = Instant::now();
        let mut told = false;
        loop {
            let (key, info) = write(remote, kind)?;
            let mut stale = Vec::new();
            let mut blocker = None;
            // A lock that cannot be read (or fails authentication) stops the command, which
            // takes its own lock away first rather than leave it for others to wait on.
            let seen = match others(remote, &key) {
                Ok(seen) => seen,
                Err(e) => {
                    let _ = remote.delete(&key);
                    return Err(e);
                }
            };
            for (k, i) in seen {
                match judge(i.as_ref()) {
                    Seen::Ignore => {}
                    Seen::Stale => stale.push(k),
                    Seen::Blocks(what) if what.is_empty() => {
                        blocker = blocker.or(Some(format!("an unreadable lock {k}")))
                    }
                    Seen::Blocks(what) => blocker = blocker.or(Some(what)),
                }
            }
            let Some(blocker) = blocker else {
                for k in stale {
                    remote.delete(&k)?;
                }
                return Ok(Lock {
                    remote,
                    key,
                    info,
                    refreshed: Cell::new(Instant::now()),
                });
            };
            remote.delete(&key)?;
            if start.elapsed() >= timeout {
                return Err(Error::RemoteBusy {
                    remote: remote.name.clone(),
                    holder: blocker,
                });
            }
            if !told {
                on_wait(&blocker);
                told = true;
            }
            backoff(&key);
        }
    }

    /// Rewrites the lock when it is due, so a long push is never taken for a dead one.
    pub fn refresh(&self) -> Result<()> {
        if self.refreshed.get().elapsed() < REFRESH_EVERY {
            return Ok(());
        }
        let info = LockInfo {
            time_ns: crate::files::now_ns(),
            ..self.info.clone()
        };
        self.remote
            .put(&self.key, serde_json::to_vec(&info).unwrap_or_default())?;
        self.refreshed.set(Instant::now());
        Ok(())
    }
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        // Best effort: a lock left behind goes stale and is ignored.
        let _ = self.remote.delete(&self.key);
    }
}
