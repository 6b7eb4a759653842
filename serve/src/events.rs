//! `GET /v1/events`: server-sent events, each `data:` line the JSON `rewind events --json`
//! prints (src/events.rs's `Event`), plus `run` progress of runs this server started. Sources:
//! the operation log, tailed by the server itself (so snapshots and operations by anyone reach
//! subscribers whether or not the watch daemon runs), and, when the daemon runs, its file
//! change and watch events.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream;
use rewind::events::Event;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::AppState;
use crate::api::query_all;
use crate::error::{ApiError, ApiResult};

/// Events kept for `replay=true`.
const REPLAY: usize = 256;

/// An event and the workspace it is about.
type Tagged = (String, Value);

/// Where events are published, and the recent ones.
pub struct Hub {
    tx: broadcast::Sender<Tagged>,
    recent: Mutex<VecDeque<Tagged>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            tx: broadcast::channel(1024).0,
            recent: Mutex::new(VecDeque::new()),
        }
    }
}

impl Hub {
    /// Publishes an event about workspace `ws` (its canonical path; empty: store-wide).
    pub fn publish(&self, ws: &str, v: Value) {
        let mut r = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if r.len() == REPLAY {
            r.pop_front();
        }
        r.push_back((ws.to_string(), v.clone()));
        // Published under the lock, so a subscriber's replay and its live part do not overlap.
        let _ = self.tx.send((ws.to_string(), v));
    }

    /// A run's progress event (the object `rewind run --events` prints, with the run's id).
    pub fn publish_run(&self, ws: &str, mut v: Value) {
        if let Some(kind) = v.get("event").cloned() {
            v["run_event"] = kind;
        }
        v["event"] = json!("run");
        v["workspace"] = json!(ws);
        v["time_ns"] = json!(rewind::fs::now_ns());
        self.publish(ws, v);
    }

    fn subscribe(&self, replay: bool) -> (Vec<Tagged>, broadcast::Receiver<Tagged>) {
        let r = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        let past = if replay {
            r.iter().cloned().collect()
        } else {
            Vec::new()
        };
        (past, self.tx.subscribe())
    }
}

/// Tails the operation log, publishing each new record as `Event::from_op` does for the
/// daemon. Runs until the server stops.
pub async fn tail_oplog(st: AppState) {
    let last = {
        let st = st.clone();
        tokio::task::spawn_blocking(move || -> rewind::Result<u64> {
            Ok(st
                .store()
                .reader()?
                .ops(None, 1)?
                .first()
                .map_or(0, |o| o.id))
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
                if ops.last().is_none_or(|o| o.id <= from) || ops.len() < batch {
                    for op in ops.into_iter().rev().filter(|o| o.id > from) {
                        let label = op
                            .after
                            .and_then(|a| reader.snapshot(&a).ok())
                            .and_then(|r| r.meta("label").map(str::to_string));
                        out.push((Event::from_op(&op, label), op.id));
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
                st.events().publish(&ws, json!(e));
            }
        }
    }
}

/// `GET /v1/events?workspace=ID&replay=true`.
pub async fn sse(
    State(st): State<AppState>,
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
            Some(crate::api::text(&w.path))
        }
    };
    let replay = matches!(query_all(q, "replay").pop().as_deref(), Some("true" | "1"));
    let (tx, rx) = mpsc::channel::<Value>(256);
    let (past, mut live) = st.events().subscribe(replay);
    let wanted = move |ws: &str| ws_path.as_deref().is_none_or(|w| w == ws || ws.is_empty());
    let wanted2 = wanted.clone();
    let tx2 = tx.clone();
    tokio::spawn(async move {
        for (ws, v) in past {
            if wanted(&ws) && tx.send(v).await.is_err() {
                return;
            }
        }
        loop {
            match live.recv().await {
                Ok((ws, v)) => {
                    if wanted(&ws) && tx.send(v).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    let v =
                        json!({"event": "lagged", "missed": n, "time_ns": rewind::fs::now_ns()});
                    if tx.send(v).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    relay_daemon(&st, tx2, wanted2);
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let v = rx.recv().await?;
        let kind = v
            .get("event")
            .and_then(Value::as_str)
            .unwrap_or("event")
            .to_string();
        let ev = SseEvent::default().event(kind).data(v.to_string());
        Some((Ok(ev), rx))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// When the watch daemon runs: its file-change and watch events (its snapshot and operation
/// events come from the operation log already).
fn relay_daemon(
    st: &AppState,
    tx: mpsc::Sender<Value>,
    wanted: impl Fn(&str) -> bool + Send + 'static,
) {
    let dir = st.store().dir().to_path_buf();
    std::thread::spawn(move || {
        let Ok(mut client) = rewind::daemon::Client::connect(&dir) else {
            return;
        };
        let req = rewind::daemon::Request::Subscribe {
            workspace: None,
            replay: false,
            follow: true,
        };
        if client.send(&req).is_err() || client.wait_forever().is_err() {
            return;
        }
        while let Ok(Some(v)) = client.read_line() {
            let kind = v.get("event").and_then(Value::as_str).unwrap_or("");
            if matches!(kind, "snapshot" | "operation") {
                continue;
            }
            let ws = v.get("workspace").and_then(Value::as_str).unwrap_or("");
            if wanted(ws) && tx.blocking_send(v).is_err() {
                return;
            }
        }
    });
}
