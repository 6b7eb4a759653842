//! Remotes: what `remote add/ls/rm/map/forget/rotate-key`, `push`, `pull` and the `--remote`
//! forms of restore, verify and gc print with `--json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::id::Id;
use crate::remote::Remote;
use crate::remote::config::RemoteConfig;
use crate::remote::gc::{GcReport, VerifyReport};
use crate::remote::pull::PullReport;
use crate::remote::push::PushReport;
use crate::remote::restore::RemoteRestoreReport;

/// A remote added to the store's configuration (`remote add --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteAdded {
    /// Its name.
    pub added: String,
    /// Its URL.
    pub url: String,
    /// Whether it was reached before it was added.
    pub checked: bool,
    /// Whether it held a rewind remote already (None when not checked).
    pub holds_remote: Option<bool>,
    /// Whether it is encrypted.
    pub encrypted: bool,
}

/// A configured remote (`remote ls --json`'s row).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteEntry {
    /// Its name.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// Workspace path on the remote -> local workspace path, for pulled logs.
    pub workspaces: BTreeMap<String, String>,
    /// Whether it is encrypted.
    pub encrypted: bool,
}

impl RemoteEntry {
    /// The remote `name` as configured.
    pub fn new(name: &str, c: &RemoteConfig) -> Self {
        RemoteEntry {
            name: name.to_string(),
            url: c.url.clone(),
            workspaces: c.workspaces.clone(),
            encrypted: c.encrypt,
        }
    }
}

/// A remote removed from the configuration (`remote rm --json`); nothing on it was deleted.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteRemoved {
    /// Its name.
    pub removed: String,
}

/// An encrypted remote's new key (`remote rotate-key --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteKeyRotated {
    /// The remote.
    pub remote: String,
    /// The new key's id.
    pub key: String,
}

/// A remote workspace's log mapped to a local workspace (`remote map --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteMapped {
    /// The remote.
    pub remote: String,
    /// The workspace path on the remote.
    pub remote_workspace: String,
    /// The local workspace its pulled snapshots are logged in.
    pub workspace: String,
}

/// Snapshots forgotten on a remote (`remote forget --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteForgotten {
    /// The remote.
    pub remote: String,
    /// The snapshots forgotten (hex).
    pub forgotten: Vec<String>,
    /// The tags removed with them.
    pub tags_removed: Vec<String>,
}

impl RemoteForgotten {
    /// What forgetting `ids` on `remote` removed.
    pub fn new(remote: &str, ids: &[Id], tags_removed: Vec<String>) -> Self {
        RemoteForgotten {
            remote: remote.to_string(),
            forgotten: ids.iter().map(Id::hex).collect(),
            tags_removed,
        }
    }
}

/// A tag a push did not move: the remote's points elsewhere.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteTag {
    /// The tag.
    pub tag: String,
    /// Where the remote's points (hex).
    pub remote_points_at: String,
}

/// A tag a pull did not move: the local one points elsewhere.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LocalTag {
    /// The tag.
    pub tag: String,
    /// Where the local one points (hex).
    pub local_points_at: String,
}

/// What a push did (`push --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pushed {
    /// The remote's name.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// Snapshot records written.
    pub snapshots_sent: u64,
    /// Snapshots the remote had already.
    pub snapshots_present: u64,
    /// Objects (blobs, chunks, trees) uploaded.
    pub objects_sent: u64,
    /// Objects the remote had already.
    pub objects_present: u64,
    /// Packs uploaded.
    pub packs: u64,
    /// Bytes uploaded.
    pub bytes_sent: u64,
    /// Tags set.
    pub tags_sent: Vec<String>,
    /// Tags left alone because the remote's points elsewhere.
    pub tags_refused: Vec<RemoteTag>,
    /// Tags another push moved while this one was moving them: left as it set them.
    pub tags_raced: Vec<RemoteTag>,
    /// Artifacts written.
    pub artifacts_sent: u64,
    /// Workspace logs written.
    pub logs: u64,
    /// Requests made.
    pub requests: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

fn remote_tags(tags: &[(String, Id)]) -> Vec<RemoteTag> {
    tags.iter()
        .map(|(n, i)| RemoteTag {
            tag: n.clone(),
            remote_points_at: i.hex(),
        })
        .collect()
}

impl Pushed {
    /// The report of a push to `remote`.
    pub fn new(remote: &Remote, r: &PushReport) -> Self {
        Pushed {
            remote: remote.name.clone(),
            url: remote.url.clone(),
            snapshots_sent: r.snapshots_sent,
            snapshots_present: r.snapshots_present,
            objects_sent: r.objects,
            objects_present: r.objects_present,
            packs: r.packs,
            bytes_sent: r.bytes_sent,
            tags_sent: r.tags_sent.clone(),
            tags_refused: remote_tags(&r.tags_refused),
            tags_raced: remote_tags(&r.tags_raced),
            artifacts_sent: r.artifacts_sent,
            logs: r.logs,
            requests: r.requests,
            seconds: r.seconds,
        }
    }
}

/// A local workspace's log that a pull appended to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LogAppended {
    /// The workspace's directory.
    pub workspace: String,
    /// Snapshots added to its log.
    pub snapshots: u64,
}

/// What a pull did (`pull --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Pulled {
    /// The remote's name.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// Snapshot records added.
    pub snapshots_received: u64,
    /// Snapshots the store had already.
    pub snapshots_present: u64,
    /// Objects (trees, blobs, chunks) added.
    pub objects_received: u64,
    /// Bytes downloaded.
    pub bytes_received: u64,
    /// Tags set.
    pub tags_set: Vec<String>,
    /// Tags left alone because the local one points elsewhere.
    pub tags_kept: Vec<LocalTag>,
    /// Artifacts added.
    pub artifacts_received: u64,
    /// Local workspaces whose log gained snapshots.
    pub logs_appended: Vec<LogAppended>,
    /// Requests made.
    pub requests: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl Pulled {
    /// The report of a pull from `remote`.
    pub fn new(remote: &Remote, r: &PullReport) -> Self {
        Pulled {
            remote: remote.name.clone(),
            url: remote.url.clone(),
            snapshots_received: r.snapshots_received,
            snapshots_present: r.snapshots_present,
            objects_received: r.objects,
            bytes_received: r.bytes_received,
            tags_set: r.tags_set.clone(),
            tags_kept: r
                .tags_kept
                .iter()
                .map(|(n, i)| LocalTag {
                    tag: n.clone(),
                    local_points_at: i.hex(),
                })
                .collect(),
            artifacts_received: r.artifacts_received,
            logs_appended: r
                .logs_appended
                .iter()
                .map(|(p, n)| LogAppended {
                    workspace: p.display().to_string(),
                    snapshots: *n,
                })
                .collect(),
            requests: r.requests,
            seconds: r.seconds,
        }
    }
}

/// An empty directory restored from a remote (`restore --remote --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteRestored {
    /// The directory written.
    pub workspace: String,
    /// The snapshot restored (hex).
    pub target: String,
    /// The remote's name.
    pub remote: String,
    /// Files and symlinks written.
    pub written: u64,
    /// Their bytes.
    pub bytes_written: u64,
    /// Objects imported into the store.
    pub objects_received: u64,
    /// Bytes downloaded.
    pub bytes_received: u64,
    /// Requests made.
    pub requests: u64,
    /// The operation recorded (undo empties the directory again).
    pub op: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl RemoteRestored {
    /// The report of a restore of `workspace` from `remote`.
    pub fn new(workspace: &std::path::Path, remote: &Remote, r: &RemoteRestoreReport) -> Self {
        RemoteRestored {
            workspace: workspace.display().to_string(),
            target: r.snapshot.hex(),
            remote: remote.name.clone(),
            written: r.written,
            bytes_written: r.bytes_written,
            objects_received: r.objects,
            bytes_received: r.bytes_received,
            requests: r.requests,
            op: r.op,
            seconds: r.seconds,
        }
    }
}

/// One thing wrong with a remote.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteProblem {
    /// The object or file it is about.
    pub what: String,
    /// What is wrong.
    pub why: String,
}

/// What a remote's check found (`verify --remote --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteVerify {
    /// The remote's name.
    pub remote: String,
    /// Whether pack contents were downloaded and hashed too.
    pub full: bool,
    /// Whether nothing is wrong.
    pub ok: bool,
    /// Snapshots checked.
    pub snapshots: u64,
    /// Packs listed by an index.
    pub packs: u64,
    /// Packs without an index (an interrupted push's; harmless, gc removes them).
    pub orphan_packs: u64,
    /// Objects reached from the snapshots and artifacts.
    pub reachable_objects: u64,
    /// Bytes downloaded and hashed.
    pub bytes_checked: u64,
    /// Everything wrong.
    pub problems: Vec<RemoteProblem>,
}

impl RemoteVerify {
    /// The report of a check of `remote` (`full` as asked).
    pub fn new(remote: &Remote, full: bool, r: &VerifyReport) -> Self {
        RemoteVerify {
            remote: remote.name.clone(),
            full,
            ok: r.problems.is_empty(),
            snapshots: r.snapshots,
            packs: r.packs,
            orphan_packs: r.orphan_packs,
            reachable_objects: r.reachable,
            bytes_checked: r.bytes_checked,
            problems: r
                .problems
                .iter()
                .map(|p| RemoteProblem {
                    what: p.what.clone(),
                    why: p.why.clone(),
                })
                .collect(),
        }
    }
}

/// What a collection on a remote did (`gc --remote --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoteGc {
    /// The remote's name.
    pub remote: String,
    /// Snapshots on the remote.
    pub snapshots: u64,
    /// Packs before.
    pub packs_before: u64,
    /// Packs deleted whole.
    pub packs_deleted: u64,
    /// Packs rewritten without their unreachable objects.
    pub packs_repacked: u64,
    /// Packs without an index deleted.
    pub orphan_packs_deleted: u64,
    /// Bytes the remote holds less.
    pub bytes_freed: u64,
    /// Requests made.
    pub requests: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl RemoteGc {
    /// The report of a collection on `remote`.
    pub fn new(remote: &Remote, r: &GcReport) -> Self {
        RemoteGc {
            remote: remote.name.clone(),
            snapshots: r.snapshots,
            packs_before: r.packs_before,
            packs_deleted: r.packs_deleted,
            packs_repacked: r.packs_repacked,
            orphan_packs_deleted: r.orphans_deleted,
            bytes_freed: r.bytes_freed,
            requests: r.requests,
            seconds: r.seconds,
        }
    }
}
