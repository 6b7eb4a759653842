//! Workspace logs on the remote (`logs/<key>`), so that `rewind log` on another machine lists
//! the snapshots it pulled.
//!
//! A workspace is known across machines by its path: a log names the store and the canonical
//! workspace path it came from, and `key` is the hash of the two, so each (store, workspace)
//! writes an object of its own and pushes from different machines never contend. A pull
//! appends a log's snapshots (those it has once the pull is done, in the log's order, each
//! once) to the local workspace of the same path when this store has one registered, or to
//! the local workspace mapped to that path in the remote's settings (`rewind remote map`),
//! which a pull registers if needed. Logs keep nothing alive on the remote: an id whose
//! snapshot was forgotten is skipped.
//!
//! A log is merged under a conditional update (read with its version, written only if it is
//! still at that version, or created only if absent), so two pushes from the same store at
//! once both land.

use std::collections::HashSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Remote;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Reader;

/// The version of the log record's encoding.
const LOG_FORMAT: u32 = 1;
/// Attempts at a conditional update before giving up (each loses only to another push).
const ATTEMPTS: usize = 8;

/// One workspace's log on the remote (JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteLog {
    /// Encoding version.
    pub format: u32,
    /// The pushing store's id, hex (empty for a store older than store ids).
    pub store: String,
    /// The workspace's canonical path, for people (lossy where it is not UTF-8).
    pub workspace: String,
    /// The same path's raw bytes, hex: what matching uses.
    pub workspace_hex: String,
    /// Snapshot ids, hex, oldest first, each once.
    pub snapshots: Vec<String>,
}

impl RemoteLog {
    /// The workspace path's raw bytes.
    pub fn path(&self) -> Option<Vec<u8>> {
        super::crypt::unhex(&self.workspace_hex)
    }
}

fn key(store: &str, path: &[u8]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"rewind workspace log\0");
    h.update(store.as_bytes());
    h.update(b"\0");
    h.update(path);
    format!("logs/{}", Id::from(h.finalize()).hex())
}

/// Merges each local workspace's history (the part whose snapshots are in `on_remote`) into
/// its log on the remote. Returns how many logs were written.
pub fn push_logs(remote: &Remote, reader: &Reader, on_remote: &HashSet<Id>) -> Result<u64> {
    let store = reader.store_id()?.map(|i| i.hex()).unwrap_or_default();
    let mut written = 0;
    for ws in reader.workspaces()? {
        let mut seen = HashSet::new();
        let mut ours: Vec<String> = reader
            .history(ws.id(), usize::MAX)?
            .into_iter()
            .rev()
            .filter(|id| on_remote.contains(id) && seen.insert(*id))
            .map(|id| id.hex())
            .collect();
        if ours.is_empty() {
            continue;
        }
        let key = key(&store, ws.path());
        let mut done = false;
        for _ in 0..ATTEMPTS {
            let current = remote.get_versioned(&key)?;
            let theirs: Vec<String> = match &current {
                Some((bytes, _)) => serde_json::from_slice::<RemoteLog>(bytes)
                    .map(|l| l.snapshots)
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            // Ours is the store's own history; what only the remote has (a snapshot this store
            // forgot since) stays, after it.
            let mine: HashSet<&String> = ours.iter().collect();
            let extra: Vec<String> = theirs
                .iter()
                .filter(|t| !mine.contains(t))
                .cloned()
                .collect();
            let mut merged = std::mem::take(&mut ours);
            merged.extend(extra);
            if merged == theirs {
                done = true;
                break;
            }
            let log = RemoteLog {
                format: LOG_FORMAT,
                store: store.clone(),
                workspace: String::from_utf8_lossy(ws.path()).into_owned(),
                workspace_hex: ws.path().iter().map(|b| format!("{b:02x}")).collect(),
                snapshots: merged.clone(),
            };
            let bytes = serde_json::to_vec(&log).unwrap_or_default();
            let ok = match current {
                None => remote.put_if_absent(&key, bytes)?,
                Some((_, version)) => remote.put_if_version(&key, bytes, version)?,
            };
            ours = merged;
            if ok {
                written += 1;
                done = true;
                break;
            }
        }
        if !done {
            return Err(Error::Remote {
                remote: remote.name.clone(),
                why: format!("{key}: changed by other pushes {ATTEMPTS} times in a row"),
            });
        }
    }
    Ok(written)
}

/// Every workspace log on the remote (one that does not decode is skipped: a newer rewind's).
pub fn logs(remote: &Remote) -> Result<Vec<RemoteLog>> {
    let mut out = Vec::new();
    for (name, _) in remote.list("logs")? {
        if let Some(bytes) = remote.get(&format!("logs/{name}"))?
            && let Ok(log) = serde_json::from_slice::<RemoteLog>(&bytes)
            && log.format == LOG_FORMAT
        {
            out.push(log);
        }
    }
    Ok(out)
}

/// Which local workspace each remote log goes to: a mapping's local path for its remote
/// path, else the same path; (local workspace path, snapshot ids oldest first). A log with a
/// path that matches no mapping stays with the same path, and is used only if this store has
/// that workspace (the caller checks).
pub fn route(logs: &[RemoteLog], map: &[(Vec<u8>, PathBuf)]) -> Vec<(PathBuf, bool, Vec<Id>)> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for log in logs {
        let Some(path) = log.path() else { continue };
        let ids: Vec<Id> = log
            .snapshots
            .iter()
            .filter_map(|h| Id::from_hex(h))
            .collect();
        match map.iter().find(|(remote_path, _)| *remote_path == path) {
            Some((_, local)) => out.push((local.clone(), true, ids)),
            None => out.push((
                PathBuf::from(std::ffi::OsStr::from_bytes(&path)),
                false,
                ids,
            )),
        }
    }
    out
}
