//! What happens in a workspace, as a stream of events: paths changed (coalesced), snapshots
//! taken (by anyone), operations recorded (restore, apply, run, accept...), and the watch's own
//! state. The watch daemon produces them; `rewind events` prints them as JSON lines, and other
//! front ends (`rewind serve`) can forward the same type.
//!
//! The JSON form is one object per event with an `"event"` field naming its kind; fields are
//! only ever added, never renamed, so subscribers can ignore what they do not know.

use serde::{Deserialize, Serialize};

/// One event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Files or directories changed in a watched workspace. Paths are relative to the
    /// workspace, `/`-separated, deduplicated over a short window (about 100 ms); a path that
    /// is not UTF-8 is shown with replacement characters.
    Changed {
        /// The workspace's canonical path.
        workspace: String,
        /// ns since the epoch.
        time_ns: i64,
        /// The changed paths, sorted.
        paths: Vec<String>,
        /// Set when the writes were inside this copy overlay's directory (the paths are
        /// relative to it; `workspace` is the overlay's workspace).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overlay: Option<u64>,
    },
    /// A snapshot was recorded (by any command, or automatically).
    Snapshot {
        /// The workspace's canonical path.
        workspace: String,
        /// ns since the epoch.
        time_ns: i64,
        /// The snapshot id (hex).
        id: String,
        /// Its `label` metadata (`auto`, `before`, `after`...), if any.
        label: Option<String>,
        /// The operation that recorded it.
        op: u64,
        /// The operation's kind (`snapshot`, `pre-run`, `post-run`...).
        kind: String,
    },
    /// An operation other than a plain snapshot was recorded (restore, undo, apply, run,
    /// accept, forget...).
    Operation {
        /// The workspace's canonical path (empty for store-wide operations).
        workspace: String,
        /// ns since the epoch.
        time_ns: i64,
        /// The operation id (as `rewind op` shows it).
        op: u64,
        /// Its kind.
        kind: String,
        /// The workspace's state before (hex id).
        before: Option<String>,
        /// The workspace's state after (hex id).
        after: Option<String>,
    },
    /// The daemon started watching a workspace.
    Watching {
        /// The workspace's canonical path.
        workspace: String,
        /// ns since the epoch.
        time_ns: i64,
        /// Directories watched.
        dirs: usize,
    },
    /// The watch lost track of changes (queue overflow): the next walk is a full one.
    Overflow {
        /// The workspace's canonical path.
        workspace: String,
        /// ns since the epoch.
        time_ns: i64,
    },
    /// The daemon stopped watching a workspace, or cannot: `watch off`, the watch limit, a
    /// file system inotify cannot see, the workspace moved or deleted.
    Unwatched {
        /// The workspace's canonical path.
        workspace: String,
        /// ns since the epoch.
        time_ns: i64,
        /// Why.
        reason: String,
    },
}

impl Event {
    /// The workspace the event is about.
    pub fn workspace(&self) -> &str {
        match self {
            Event::Changed { workspace, .. }
            | Event::Snapshot { workspace, .. }
            | Event::Operation { workspace, .. }
            | Event::Watching { workspace, .. }
            | Event::Overflow { workspace, .. }
            | Event::Unwatched { workspace, .. } => workspace,
        }
    }

    /// The events an operation-log record stands for: a snapshot event for operations that
    /// record a snapshot of the workspace as it is (`label` is that snapshot's), else an
    /// operation event.
    pub fn from_op(op: &crate::store::oplog::Operation, label: Option<String>) -> Event {
        let workspace = String::from_utf8_lossy(op.workspace()).into_owned();
        match (op.kind(), op.after()) {
            ("snapshot" | "pre-run" | "post-run", Some(after)) => Event::Snapshot {
                workspace,
                time_ns: op.time_ns(),
                id: after.hex(),
                label,
                op: op.id(),
                kind: op.kind().to_string(),
            },
            _ => Event::Operation {
                workspace,
                time_ns: op.time_ns(),
                op: op.id(),
                kind: op.kind().to_string(),
                before: op.before().map(|i| i.hex()),
                after: op.after().map(|i| i.hex()),
            },
        }
    }
}

/// What a [`Subscription`] yields: an event, or a change in whether the watch daemon's
/// events reach it (so a gap is never silent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// An event from the daemon.
    Event(Event),
    /// The daemon is up and its events follow from now on.
    DaemonUp,
    /// The daemon went away (stopped, restarted, crashed): events stop until [`Notice::DaemonUp`].
    DaemonDown,
}

/// A subscription to the watch daemon's events of a store, as a blocking iterator that never
/// ends: it waits for a daemon that is not running yet, follows it, and reconnects when it
/// restarts, saying so with [`Notice::DaemonUp`] and [`Notice::DaemonDown`]. Running the
/// daemon is someone else's business (`rewind daemon start`); this only listens.
pub struct Subscription {
    dir: std::path::PathBuf,
    workspace: Option<String>,
    retry: std::time::Duration,
    client: Option<crate::scan::daemon_link::Client>,
}

impl Subscription {
    /// Follows the events of the daemon of the store in `store_dir`, of one workspace (its
    /// canonical path) or of all; `retry` is how often a missing daemon is looked for.
    pub fn follow(
        store_dir: &std::path::Path,
        workspace: Option<&str>,
        retry: std::time::Duration,
    ) -> Subscription {
        Subscription {
            dir: store_dir.to_path_buf(),
            workspace: workspace.map(str::to_string),
            retry,
            client: None,
        }
    }

    fn connect(&self) -> std::io::Result<crate::scan::daemon_link::Client> {
        let mut c = crate::scan::daemon_link::Client::connect(&self.dir)?;
        c.send(&crate::scan::daemon_link::Request::Subscribe {
            workspace: self.workspace.clone(),
            replay: false,
            follow: true,
        })?;
        c.wait_forever()?;
        Ok(c)
    }
}

impl Iterator for Subscription {
    type Item = Notice;

    fn next(&mut self) -> Option<Notice> {
        loop {
            let Some(client) = self.client.as_mut() else {
                match self.connect() {
                    Ok(c) => {
                        self.client = Some(c);
                        return Some(Notice::DaemonUp);
                    }
                    Err(_) => {
                        std::thread::sleep(self.retry);
                        continue;
                    }
                }
            };
            match client.read_line() {
                Ok(Some(v)) => {
                    // A kind this build does not know (a newer daemon) is skipped, not fatal.
                    if let Ok(e) = serde_json::from_value::<Event>(v) {
                        return Some(Notice::Event(e));
                    }
                }
                Ok(None) | Err(_) => {
                    self.client = None;
                    return Some(Notice::DaemonDown);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_form_is_tagged_and_round_trips() {
        let e = Event::Changed {
            workspace: "/w".into(),
            time_ns: 5,
            paths: vec!["a/b".into()],
            overlay: None,
        };
        let j = serde_json::to_value(&e).unwrap();
        assert_eq!(j["event"], "changed");
        assert_eq!(j["paths"][0], "a/b");
        assert_eq!(serde_json::from_value::<Event>(j).unwrap(), e);
    }
}
