//! `GET /v1/events`: server-sent events, each `data:` line the JSON `rewind events --json`
//! prints (src/events.rs's `Event`), plus `run` progress of runs this server started. Sources:
//! the operation log, tailed by the server itself (so snapshots and operations by anyone reach
//! subscribers whether or not the watch daemon runs), and the watch daemon's file change and
//! watch events, followed by one subscription that waits for a daemon to start and reconnects
//! when it restarts (`daemon` events say when its events start and stop reaching the stream).
//!
//! Nothing is lost silently: every event has an SSE id, increasing across server restarts; a
//! client reconnecting with `Last-Event-ID` first gets what it missed from the recent events
//! kept, or a `gap` event when those no longer reach back that far (as when it falls behind).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream;
use rewind::events::{Event, Notice};
use rewind::wire::{DaemonState, ServerEvent, ServerNotice};
use tokio::sync::{broadcast, mpsc};

use crate::AppState;
use crate::api::query_all;
use crate::error::{ApiError, ApiResult};

/// Events kept for `replay=true` and for clients reconnecting with `Last-Event-ID`.
const REPLAY: usize = 1024;

/// An event: its id, the workspace it is about, the event.
type Tagged = (u64, String, ServerEvent);

/// Where events are published, and the recent ones.
pub struct Hub {
    tx: broadcast::Sender<Tagged>,
    /// The next id, and the recent events.
    recent: Mutex<(u64, VecDeque<Tagged>)>,
    /// The first id of this server's life.
    first: u64,
}

impl Default for Hub {
    fn default() -> Self {
        // Ids start at the server's start time in microseconds: a client reconnecting to a
        // restarted server holds an id below every new one, and is told of the gap.
        let first = u64::try_from(rewind::files::now_ns() / 1000)
            .unwrap_or(1)
            .max(1);
        Hub {
            tx: broadcast::channel(1024).0,
            recent: Mutex::new((first, VecDeque::new())),
            first,
        }
    }
}

/// A `gap` event: `missed` events (None: unknown) after `last`.
fn gap(missed: Option<u64>, last: Option<u64>) -> ServerEvent {
    ServerEvent::Server(ServerNotice::Gap {
        missed,
        last_event_id: last,
        time_ns: rewind::files::now_ns(),
    })
}

impl Hub {
    /// Publishes an event about workspace `ws` (its canonical path; empty: store-wide).
    pub fn publish(&self, ws: &str, v: ServerEvent) {
        let mut r = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        let id = r.0;
        r.0 += 1;
        if r.1.len() == REPLAY {
            r.1.pop_front();
        }
        r.1.push_back((id, ws.to_string(), v.clone()));
        // Published under the lock, so a subscriber's replay and its live part do not overlap.
        let _ = self.tx.send((id, ws.to_string(), v));
    }

    /// Run `run`'s progress event `e` (what `rewind run --events` prints).
    pub fn publish_run<E: serde::Serialize>(&self, ws: &str, run: u64, e: &E) {
        // A run event is plain data: should one not serialize, its kind and run still go out.
        let v = serde_json::to_value(e).unwrap_or_default();
        let notice = ServerNotice::run(ws, run, v, rewind::files::now_ns());
        self.publish(ws, ServerEvent::Server(notice));
    }

    /// Run `run` ended: its result is ready.
    pub fn publish_run_finished(&self, ws: &str, run: u64) {
        let notice = ServerNotice::run_finished(ws, run, rewind::files::now_ns());
        self.publish(ws, ServerEvent::Server(notice));
    }

    /// The events to send first (all recent ones with `replay`; those after `last` for a
    /// client reconnecting), a gap event if some are gone, and the live part.
    fn subscribe(
        &self,
        replay: bool,
        last: Option<u64>,
    ) -> (
        Vec<Tagged>,
        Option<ServerEvent>,
        broadcast::Receiver<Tagged>,
    ) {
        let r = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        let (next, kept) = (&r.0, &r.1);
        let oldest = kept.front().map_or(*next, |e| e.0);
        let (past, gap) = match last {
            Some(l) => {
                let past = kept.iter().filter(|e| e.0 > l).cloned().collect();
                let gap = if l + 1 >= oldest {
                    None
                } else if l + 1 >= self.first {
                    Some(gap(Some(oldest - l - 1), Some(l)))
                } else {
                    // An id from before this server started: how much was missed is unknown.
                    Some(gap(None, Some(l)))
                };
                (past, gap)
            }
            None if replay => (kept.iter().cloned().collect(), None),
            None => (Vec::new(), None),
        };
        (past, gap, self.tx.subscribe())
    }
}

/// Tails the operation log, publishing each new record as `Event::from_op` does for the
/// daemon, and follows the watch daemon. Runs until the server stops.
pub async fn tail_oplog(st: AppState) {
    follow_daemon(&st);
    let last = {
        let st = st.clone();
        tokio::task::spawn_blocking(move || -> rewind::Result<u64> {
            Ok(st
                .store()
                .reader()?
                .ops(None, 1)?
                .first()
                .map_or(0, |o| o.id()))
        })
        .await
    };
    let mut last = match last {
        Ok(Ok(n)) => n,
        _ => return,
    };
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let st2 = st.clone();
        let from = last;
        let new = tokio::task::spawn_blocking(move || -> rewind::Result<Vec<(Event, u64)>> {
            let reader = st2.store().reader()?;
            let mut out = Vec::new();
            let mut batch = 64;
            loop {
                let ops = reader.ops(None, batch)?;
                if ops.last().is_none_or(|o| o.id() <= from) || ops.len() < batch {
                    for op in ops.into_iter().rev().filter(|o| o.id() > from) {
                        let label = op
                            .after()
                            .and_then(|a| reader.snapshot(&a).ok())
                            .and_then(|r| r.meta("label").map(str::to_string));
                        out.push((Event::from_op(&op, label), op.id()));
                    }
                    return Ok(out);
                }
                batch *= 4;
            }
        })
        .await;
        if let Ok(Ok(events)) = new {
            for (e, id) in events {
                last = id;
                let ws = e.workspace().to_string();
                st.events().publish(&ws, ServerEvent::Store(e));
            }
        }
    }
}

/// `GET /v1/events?workspace=ID&replay=true`, with `Last-Event-ID` when reconnecting (also
/// taken as the query parameter `last_event_id`, for clients that cannot set headers).
pub async fn sse(
    State(st): State<AppState>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let q = q.as_deref();
    let ws_path = match query_all(q, "workspace").pop() {
        None => None,
        Some(v) => {
            let id: u64 = v
                .parse()
                .map_err(|_| ApiError::bad_request(format!("workspace={v}: a workspace id")))?;
            let st = st.clone();
            let w =
                crate::api::blocking(&st, move |st| crate::api::workspace(st.store(), id)).await?;
            Some(crate::api::text(w.path()))
        }
    };
    let replay = matches!(query_all(q, "replay").pop().as_deref(), Some("true" | "1"));
    let last = match headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| query_all(q, "last_event_id").pop())
    {
        None => None,
        Some(v) => Some(v.trim().parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("Last-Event-ID {v:?}: an event id (a number)"))
        })?),
    };
    let (tx, rx) = mpsc::channel::<(Option<u64>, ServerEvent)>(256);
    let (past, gap_first, mut live) = st.events().subscribe(replay, last);
    let wanted = move |ws: &str| ws_path.as_deref().is_none_or(|w| w == ws || ws.is_empty());
    tokio::spawn(async move {
        if let Some(g) = gap_first
            && tx.send((None, g)).await.is_err()
        {
            return;
        }
        for (id, ws, v) in past {
            if wanted(&ws) && tx.send((Some(id), v)).await.is_err() {
                return;
            }
        }
        loop {
            match live.recv().await {
                Ok((id, ws, v)) => {
                    if wanted(&ws) && tx.send((Some(id), v)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    if tx.send((None, gap(Some(n), None))).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let (id, v) = rx.recv().await?;
        let (kind, data) = sse_data(&v);
        let mut ev = SseEvent::default().event(kind).data(data);
        if let Some(id) = id {
            ev = ev.id(id.to_string());
        }
        Some((Ok(ev), rx))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// The SSE event name and `data:` of `v`. A wire type always serializes; were one not to, a
/// `dropped` notice goes out in its place rather than the event vanishing.
fn sse_data(v: &ServerEvent) -> (&'static str, String) {
    let e = match serde_json::to_string(v) {
        Ok(data) => return (v.kind(), data),
        Err(e) => e,
    };
    let n = ServerEvent::Server(ServerNotice::dropped(v, &e, rewind::files::now_ns()));
    // Two strings and a number: this one cannot fail to serialize.
    (n.kind(), serde_json::to_string(&n).unwrap_or_default())
}

/// Follows the watch daemon for the server's life (one subscription, whoever listens): its
/// file-change and watch events (its snapshot and operation events come from the operation
/// log already), and a `daemon` event when its events start or stop reaching the stream.
fn follow_daemon(st: &AppState) {
    let st = st.clone();
    let dir = st.store().dir().to_path_buf();
    std::thread::spawn(move || {
        let sub = rewind::events::Subscription::follow(&dir, None, Duration::from_millis(250));
        for n in sub {
            match n {
                Notice::Event(e) => {
                    if matches!(e, Event::Snapshot { .. } | Event::Operation { .. }) {
                        continue;
                    }
                    let ws = e.workspace().to_string();
                    st.events().publish(&ws, ServerEvent::Store(e));
                }
                Notice::DaemonUp | Notice::DaemonDown => {
                    let state = if n == Notice::DaemonUp {
                        DaemonState::Up
                    } else {
                        DaemonState::Down
                    };
                    let time_ns = rewind::files::now_ns();
                    st.events().publish(
                        "",
                        ServerEvent::Server(ServerNotice::Daemon { state, time_ns }),
                    );
                }
            }
        }
    });
}
