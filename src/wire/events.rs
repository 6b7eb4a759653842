//! The server's event stream (`GET /v1/events`): the store's events (what `rewind events
//! --json` prints) and the server's own (a run's progress, the watch daemon coming and going,
//! events missed).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::events::Event;

/// The data of one server-sent event; its `event` field is the SSE event name.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum ServerEvent {
    /// From the operation log or the watch daemon, as `rewind events --json` prints it.
    Store(Event),
    /// The server's own.
    Server(ServerNotice),
}

impl ServerEvent {
    /// Its kind: the `event` field, and the SSE event name.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerEvent::Store(e) => match e {
                Event::Changed { .. } => "changed",
                Event::Snapshot { .. } => "snapshot",
                Event::Operation { .. } => "operation",
                Event::Watching { .. } => "watching",
                Event::Overflow { .. } => "overflow",
                Event::Unwatched { .. } => "unwatched",
            },
            ServerEvent::Server(n) => match n {
                ServerNotice::Run { .. } => "run",
                ServerNotice::Daemon { .. } => "daemon",
                ServerNotice::Gap { .. } => "gap",
                ServerNotice::Dropped { .. } => "dropped",
            },
        }
    }
}

/// Whether the watch daemon's events reach the stream.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DaemonState {
    /// They start reaching it.
    Up,
    /// They stop reaching it.
    Down,
}

/// An event the server itself makes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ServerNotice {
    /// Progress of a run this server started: `run_event` is what `rewind run --events`
    /// prints as `event` (its other fields beside it), or `run_finished` once the result is
    /// ready.
    Run {
        /// The workspace's directory.
        workspace: String,
        /// Nanoseconds since the epoch.
        time_ns: i64,
        /// The run (`GET /v1/runs/{run}`).
        run: u64,
        /// The run's own event kind.
        run_event: String,
        /// The run event's other fields.
        #[serde(flatten)]
        detail: BTreeMap<String, serde_json::Value>,
    },
    /// The watch daemon's file events start (`up`) or stop (`down`) reaching the stream.
    Daemon {
        /// Up or down.
        state: DaemonState,
        /// Nanoseconds since the epoch.
        time_ns: i64,
    },
    /// Events were missed (the reconnecting client's Last-Event-ID is older than what is
    /// kept, or the stream lagged): re-read state.
    Gap {
        /// How many (None: unknown).
        missed: Option<u64>,
        /// The Last-Event-ID the client gave, if it gave one.
        last_event_id: Option<u64>,
        /// Nanoseconds since the epoch.
        time_ns: i64,
    },
    /// An event could not be sent (it did not serialize) and is lost: re-read state. Not
    /// named `error`: an `EventSource` would hand an SSE event of that name to its `onerror`,
    /// as if the connection had failed.
    Dropped {
        /// The lost event's kind (its `event`).
        dropped_event: String,
        /// Why it could not be sent.
        error: String,
        /// Nanoseconds since the epoch.
        time_ns: i64,
    },
}

impl ServerNotice {
    /// A run's progress event `v` (the object `rewind run --events` prints) for run `run` of
    /// workspace `workspace`, at `time_ns`.
    pub fn run(workspace: &str, run: u64, v: serde_json::Value, time_ns: i64) -> ServerNotice {
        let mut detail: BTreeMap<String, serde_json::Value> = match v {
            serde_json::Value::Object(m) => m.into_iter().collect(),
            _ => BTreeMap::new(),
        };
        let run_event = match detail.remove("event") {
            Some(serde_json::Value::String(s)) => s,
            _ => String::new(),
        };
        for key in ["run", "run_event", "workspace", "time_ns"] {
            detail.remove(key);
        }
        ServerNotice::Run {
            workspace: workspace.to_string(),
            time_ns,
            run,
            run_event,
            detail,
        }
    }

    /// Sent in place of `lost`, which did not serialize (`error`), at `time_ns`.
    pub fn dropped(
        lost: &ServerEvent,
        error: &dyn std::fmt::Display,
        time_ns: i64,
    ) -> ServerNotice {
        ServerNotice::Dropped {
            dropped_event: lost.kind().to_string(),
            error: error.to_string(),
            time_ns,
        }
    }

    /// The last event of run `run` of workspace `workspace`: its result is ready.
    pub fn run_finished(workspace: &str, run: u64, time_ns: i64) -> ServerNotice {
        ServerNotice::Run {
            workspace: workspace.to_string(),
            time_ns,
            run,
            run_event: "run_finished".to_string(),
            detail: BTreeMap::new(),
        }
    }
}
