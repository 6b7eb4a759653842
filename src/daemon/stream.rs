//! The daemon's event stream: the recent events kept for replays, and the subscribers that
//! follow new ones over their connection.

use std::collections::VecDeque;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::events::Event;

/// Events kept for subscribers that ask for a replay.
const RECENT: usize = 1000;

struct Subscriber {
    workspace: Option<String>,
    tx: crossbeam_channel::Sender<Event>,
}

/// Recent events and live subscribers, under one lock so that a subscriber that asks for a
/// replay and then follows misses nothing in between.
#[derive(Default)]
pub(super) struct Hub {
    inner: Mutex<(VecDeque<Event>, Vec<Subscriber>)>,
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, (VecDeque<Event>, Vec<Subscriber>)> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends an event to the subscribers that want it and keeps it for replays.
    pub(super) fn emit(&self, e: Event) {
        let mut inner = self.lock();
        let (kept, subscribers) = &mut *inner;
        // A subscriber that hung up is dropped at the first event it would have received.
        subscribers.retain(|s| {
            s.workspace.as_deref().is_some_and(|w| w != e.workspace())
                || s.tx.send(e.clone()).is_ok()
        });
        kept.push_back(e);
        if kept.len() > RECENT {
            kept.pop_front();
        }
    }

    /// Live subscribers.
    pub(super) fn subscribers(&self) -> usize {
        self.lock().1.len()
    }

    /// Serves a subscription on a connection (`input` is its reading half): the replay if
    /// asked, then, with `follow`, every new event until the client hangs up.
    pub(super) fn serve(
        &self,
        mut out: UnixStream,
        input: UnixStream,
        workspace: Option<&str>,
        replay: bool,
        follow: bool,
    ) {
        let wanted = |e: &Event| workspace.is_none_or(|w| w == e.workspace());
        let (tx, rx) = crossbeam_channel::unbounded();
        let backlog: Vec<Event> = {
            let mut inner = self.lock();
            if follow {
                inner.1.push(Subscriber {
                    workspace: workspace.map(str::to_string),
                    tx,
                });
            }
            if replay {
                inner.0.iter().filter(|e| wanted(e)).cloned().collect()
            } else {
                Vec::new()
            }
        };
        for e in backlog {
            if write_event(&mut out, &e).is_err() {
                return;
            }
        }
        if !follow {
            return;
        }
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(e) => {
                    if write_event(&mut out, &e).is_err() {
                        return;
                    }
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    // The client sends nothing more: a readable socket means it hung up.
                    let mut pfd = libc::pollfd {
                        fd: input.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd, no wait.
                    if unsafe { libc::poll(&mut pfd, 1, 0) } != 0 {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
    }
}

fn write_event(out: &mut UnixStream, e: &Event) -> std::io::Result<()> {
    let mut buf = serde_json::to_vec(e).unwrap_or_default();
    buf.push(b'\n');
    out.write_all(&buf)
}
