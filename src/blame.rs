//! Blame: for each line of a file, the snapshot in which the line took its current form.
//!
//! The file's history is walked through the trees of the workspace's snapshots, newest taken
//! first (the order `log` lists them in): each row costs a path lookup (memoized by tree id, so
//! a subtree shared with the previous row is not read again), never a diff of unrelated files.
//! Where the file's content differs from the next newer version, the two versions are compared
//! with the one line diff (`patch::linediff`); lines that version added are blamed on
//! the oldest snapshot of the newer version's unbroken stretch, the others are followed further
//! back. Where the path is absent, a rename is looked for as `log -- PATH` does (one
//! rename-aware diff at that row only) and the old name followed.
//!
//! The live file is blamed by default: lines no snapshot has yet are blamed on no snapshot.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::diff::text::split_lines;
use crate::error::{Error, Result};
use crate::files::RelPath;
use crate::id::Id;
use crate::patch::linediff::changed_lines;
use crate::store::snapshot::Snapshot;
use crate::store::tree::{Kind, TreeEntry};
use crate::store::{Reader, Store};

/// What to blame.
#[derive(Clone, Debug, Default)]
pub struct BlameOptions {
    /// The snapshot whose version of the file is blamed; `None`: the live file.
    pub rev: Option<Id>,
    /// Only lines `first..=last` (1-based); `None`: every line.
    pub lines: Option<(usize, usize)>,
}

/// Where a line took its current form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The snapshot.
    pub snapshot: Id,
    /// The file's path in that snapshot (differs from the blamed path across a rename).
    pub path: Vec<u8>,
    /// The line's number in that snapshot's version of the file (1-based).
    pub line: usize,
}

/// One blamed line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlameLine {
    /// Its number in the blamed file (1-based).
    pub line: usize,
    /// Where it took its current form; `None` for a line of the live file no snapshot has.
    pub origin: Option<Origin>,
    /// The line's bytes, without its newline.
    pub text: Vec<u8>,
}

/// The result of [`blame`].
#[derive(Clone, Debug)]
pub struct Blame {
    /// The blamed path.
    pub path: Vec<u8>,
    /// The blamed snapshot, or `None` for the live file.
    pub rev: Option<Id>,
    /// The lines asked for, in order.
    pub lines: Vec<BlameLine>,
    /// Every snapshot a line is blamed on, with its record, newest taken first.
    pub snapshots: Vec<(Id, Snapshot)>,
}

/// One version of the file being followed back.
struct Version {
    /// Its content's id (the blob id: BLAKE3 of the bytes).
    blob: Id,
    /// Its content.
    bytes: Vec<u8>,
    /// The oldest snapshot of its unbroken stretch so far; `None` while it is only live.
    first: Option<Id>,
    /// Its path.
    path: Vec<u8>,
}

/// Blames `path` in workspace `ws` (whose root is `root`, read for the live file).
pub fn blame(
    store: &Store,
    reader: &Reader,
    ws: u64,
    root: &Path,
    path: &RelPath,
    opts: &BlameOptions,
) -> Result<Blame> {
    let rows = reader.snapshot_records(ws, usize::MAX)?;
    let mut lookup = Lookup::default();
    let (mut cur, start) = match opts.rev {
        Some(rev) => {
            let record = reader.snapshot_record(&rev)?;
            let entry = lookup
                .find(reader, &record.root, path.as_bytes())?
                .filter(|e| e.kind != Kind::Dir)
                .ok_or_else(|| Error::PathNotInSnapshot {
                    path: crate::files::display(path.as_bytes()),
                    snapshot: rev.short(),
                })?;
            // Rows older than the blamed snapshot: from its place in the log, or, for a snapshot
            // of another workspace, by time.
            let start = match rows.iter().position(|(id, _)| *id == rev) {
                Some(i) => i + 1,
                None => rows
                    .iter()
                    .position(|(_, r)| r.time_ns < record.time_ns)
                    .unwrap_or(rows.len()),
            };
            let version = Version {
                blob: entry.id,
                bytes: reader.read_blob(&entry.id)?,
                first: Some(rev),
                path: path.as_bytes().to_vec(),
            };
            (version, start)
        }
        None => {
            let bytes = read_live(root, path)?;
            let version = Version {
                blob: Id::of(&bytes),
                bytes,
                first: None,
                path: path.as_bytes().to_vec(),
            };
            (version, 0)
        }
    };

    let text: Vec<Vec<u8>> = split_lines(&cur.bytes)
        .into_iter()
        .map(|l| l.strip_suffix(b"\n").unwrap_or(l).to_vec())
        .collect();
    let (lo, hi) = match opts.lines {
        Some((a, b)) => {
            if a == 0 || b < a || b > text.len() {
                return Err(Error::LineRange {
                    first: a,
                    last: b,
                    lines: text.len(),
                });
            }
            (a - 1, b)
        }
        None => (0, text.len()),
    };
    let mut origin: Vec<Option<Origin>> = vec![None; hi - lo];
    // Lines still followed: (index into `origin`, line index in the current version).
    let mut pending: Vec<(usize, usize)> = (lo..hi).map(|i| (i - lo, i)).collect();

    let mut i = start;
    while i < rows.len() && !pending.is_empty() {
        let (id, record) = &rows[i];
        let mut entry = lookup.find(reader, &record.root, &cur.path)?;
        if let (true, Some(newer)) = (
            entry.as_ref().is_none_or(|e| e.kind == Kind::Dir),
            cur.first,
        ) {
            // Gone here: moved from elsewhere between this row and the newer one?
            if let Some(old) = crate::history::renamed_from(store, *id, newer, &cur.path)? {
                entry = lookup.find(reader, &record.root, &old)?;
                cur.path = old;
            }
        }
        let Some(entry) = entry.filter(|e| e.kind != Kind::Dir) else {
            break;
        };
        if entry.id != cur.blob {
            let bytes = reader.read_blob(&entry.id)?;
            let older = Version {
                blob: entry.id,
                bytes,
                first: Some(*id),
                path: cur.path.clone(),
            };
            pending = step(&older, &cur, pending, &mut origin);
            cur = older;
        } else {
            cur.first = Some(*id);
        }
        i += 1;
    }
    // What is left took its form in the oldest version reached.
    if let Some(first) = cur.first {
        for (k, line) in pending {
            origin[k] = Some(Origin {
                snapshot: first,
                path: cur.path.clone(),
                line: line + 1,
            });
        }
    }

    let mut blamed: Vec<Id> = origin.iter().flatten().map(|o| o.snapshot).collect();
    blamed.sort_unstable();
    blamed.dedup();
    let mut snapshots = Vec::with_capacity(blamed.len());
    for id in blamed {
        let record = match rows.iter().find(|(r, _)| *r == id) {
            Some((_, r)) => r.clone(),
            None => reader.snapshot_record(&id)?,
        };
        snapshots.push((id, record));
    }
    snapshots.sort_by_key(|s| std::cmp::Reverse(s.1.time_ns));
    let lines = origin
        .into_iter()
        .zip(&text[lo..hi])
        .enumerate()
        .map(|(k, (origin, text))| BlameLine {
            line: lo + k + 1,
            origin,
            text: text.clone(),
        })
        .collect();
    Ok(Blame {
        path: path.as_bytes().to_vec(),
        rev: opts.rev,
        lines,
        snapshots: snapshots
            .into_iter()
            .map(|(id, r)| (id, Snapshot::new(id, r)))
            .collect(),
    })
}

/// Compares `older` with `newer`: the pending lines `newer` added are blamed on `newer.first`
/// (or stay unblamed when that is the live file); the rest come back, renumbered into `older`.
fn step(
    older: &Version,
    newer: &Version,
    pending: Vec<(usize, usize)>,
    origin: &mut [Option<Origin>],
) -> Vec<(usize, usize)> {
    let a = split_lines(&older.bytes);
    let b = split_lines(&newer.bytes);
    let Some((ca, cb)) = changed_lines(&a, &b, None) else {
        return Vec::new();
    };
    // Unchanged lines pair up in order.
    let mut to_older = vec![usize::MAX; b.len()];
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if ca[i] {
            i += 1;
        } else if cb[j] {
            j += 1;
        } else {
            to_older[j] = i;
            i += 1;
            j += 1;
        }
    }
    let mut still = Vec::with_capacity(pending.len());
    for (k, line) in pending {
        match to_older.get(line) {
            Some(&o) if o != usize::MAX => still.push((k, o)),
            _ => {
                origin[k] = newer.first.map(|snapshot| Origin {
                    snapshot,
                    path: newer.path.clone(),
                    line: line + 1,
                })
            }
        }
    }
    still
}

/// The live file's content (a symbolic link's target).
fn read_live(root: &Path, path: &RelPath) -> Result<Vec<u8>> {
    let full = root.join(std::ffi::OsStr::from_bytes(path.as_bytes()));
    let meta = std::fs::symlink_metadata(&full).map_err(|e| Error::io(&full, e))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&full).map_err(|e| Error::io(&full, e))?;
        return Ok(target.as_os_str().as_bytes().to_vec());
    }
    if meta.is_dir() {
        return Err(Error::IsADirectory(crate::files::display(path.as_bytes())));
    }
    std::fs::read(&full).map_err(|e| Error::io(&full, e))
}

/// Path lookups memoized by tree id: consecutive snapshots share most trees, so a row whose
/// directories did not change costs no tree read.
#[derive(Default)]
struct Lookup {
    /// (tree id, remaining path) -> the entry found below it.
    memo: FxHashMap<(Id, Vec<u8>), Option<TreeEntry>>,
}

impl Lookup {
    fn find(&mut self, reader: &Reader, root: &Id, path: &[u8]) -> Result<Option<TreeEntry>> {
        let key = (*root, path.to_vec());
        if let Some(hit) = self.memo.get(&key) {
            return Ok(hit.clone());
        }
        let (first, rest) = match path.iter().position(|&b| b == b'/') {
            Some(p) => (&path[..p], Some(&path[p + 1..])),
            None => (path, None),
        };
        let tree = reader.tree(root)?;
        let found = match (tree.get(first), rest) {
            (None, _) => None,
            (Some(e), None) => Some(e.clone()),
            (Some(e), Some(rest)) if e.kind == Kind::Dir => {
                let id = e.id;
                self.find(reader, &id, rest)?
            }
            (Some(_), Some(_)) => None,
        };
        self.memo.insert(key, found.clone());
        Ok(found)
    }
}

/// What wrote a snapshot, read from its metadata: an agent hook's session, turn and tool, or
/// the command of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Author<'a> {
    /// The agent (`claude`, `cursor`, ...), for a hook's snapshot.
    pub agent: Option<&'a str>,
    /// The agent session.
    pub session: Option<&'a str>,
    /// The turn within the session.
    pub turn: Option<&'a str>,
    /// The tool call that produced it.
    pub tool: Option<&'a str>,
    /// The snapshot's label (`after`, `tool`, `turn-start`, ...).
    pub label: Option<&'a str>,
    /// The command line, for a run's snapshot.
    pub command: Option<&'a str>,
}

/// Reads [`Author`] from a snapshot.
pub fn author(s: &Snapshot) -> Author<'_> {
    let r = s.record();
    let label = r.meta("label");
    let command = match label {
        Some("before" | "after" | "after_failure") => Some(
            r.message
                .strip_prefix(crate::history::RUN_MESSAGE_PREFIX)
                .unwrap_or(&r.message),
        ),
        _ => None,
    };
    Author {
        agent: r.meta("agent"),
        session: r.meta(crate::history::SESSION_KEY),
        turn: r.meta(crate::history::TURN_KEY),
        tool: r.meta("tool"),
        label,
        command,
    }
}
