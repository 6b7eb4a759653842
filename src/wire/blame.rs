//! Who wrote each line of a file (`blame --json`).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{Snapshot, path_bytes, path_text};
use crate::blame::author;
use crate::id::Id;

/// A snapshot a line is blamed on: the snapshot, and who or what wrote it (from its
/// metadata: an agent's session, turn and tool call, or a run's command line).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BlameSnapshot {
    /// The snapshot.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// Its label (`after`, `tool`, `turn-start`, ...).
    pub label: Option<String>,
    /// The agent (`claude`, `cursor`, ...), for a hook's snapshot.
    pub agent: Option<String>,
    /// The agent's session.
    pub session: Option<String>,
    /// The turn within the session.
    pub turn: Option<String>,
    /// The tool call that produced it.
    pub tool: Option<String>,
    /// The command line, for a run's snapshot.
    pub command: Option<String>,
}

/// One blamed line.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BlameLine {
    /// Its number in the blamed file (from 1).
    pub line: usize,
    /// The snapshot where it took its current form (hex); None for a line of the live file
    /// no snapshot has.
    pub snapshot: Option<String>,
    /// Its number in that snapshot's version of the file.
    pub original_line: Option<usize>,
    /// The line (lossy UTF-8), without its newline.
    pub text: String,
    /// The file's path in that snapshot, only when it differs (a rename).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_path: Option<String>,
    /// That path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_path_bytes: Option<String>,
}

/// Who wrote each line of a file (`blame --json`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Blame {
    /// The file.
    pub path: String,
    /// The path's exact bytes (base64), only when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<String>,
    /// The snapshot blamed (hex); None for the live file.
    pub snapshot: Option<String>,
    /// The lines asked for, in order.
    pub lines: Vec<BlameLine>,
    /// Every snapshot a line is blamed on, by id (hex).
    pub snapshots: BTreeMap<String, BlameSnapshot>,
}

impl Blame {
    /// From a blame's result, each snapshot named by its tags in `tags`.
    pub fn new(b: &crate::blame::Blame, tags: &HashMap<Id, Vec<String>>) -> Self {
        let lines = b
            .lines
            .iter()
            .map(|l| {
                let renamed = l.origin.as_ref().filter(|o| o.path != b.path);
                BlameLine {
                    line: l.line,
                    snapshot: l.origin.as_ref().map(|o| o.snapshot.hex()),
                    original_line: l.origin.as_ref().map(|o| o.line),
                    text: String::from_utf8_lossy(&l.text).into_owned(),
                    original_path: renamed.map(|o| path_text(&o.path)),
                    original_path_bytes: renamed.and_then(|o| path_bytes(&o.path)),
                }
            })
            .collect();
        let snapshots = b
            .snapshots
            .iter()
            .map(|(id, r)| {
                let a = author(r);
                let own = |s: Option<&str>| s.map(str::to_string);
                let snap = BlameSnapshot {
                    snapshot: Snapshot::new(r, tags.get(id).map_or(&[], Vec::as_slice)),
                    label: own(a.label),
                    agent: own(a.agent),
                    session: own(a.session),
                    turn: own(a.turn),
                    tool: own(a.tool),
                    command: own(a.command),
                };
                (id.hex(), snap)
            })
            .collect();
        Blame {
            path: path_text(&b.path),
            path_bytes: path_bytes(&b.path),
            snapshot: b.rev.map(|r| r.hex()),
            lines,
            snapshots,
        }
    }
}
