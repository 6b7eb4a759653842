//! Comparing two Merkle trees: the list of file-level changes between them.
//!
//! Equal subtree ids are skipped without reading them, so the cost follows the number of
//! changes, not the size of the workspace. Exact renames (one deleted path and one added path
//! with the same blob) are paired afterwards.

use std::collections::HashMap;

use crate::error::Result;
use crate::files::{RelPath, child_path};
use crate::id::Id;
use crate::store::tree::{Kind, Tree};

/// Where trees come from: the store, plus trees a dry run computed but did not store.
pub trait TreeSource {
    /// Reads a tree.
    fn tree(&self, id: &Id) -> Result<Tree>;
}

/// One side of a file change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryState {
    /// File, executable or symlink (never a directory: directories expand into their files).
    pub kind: Kind,
    /// Blob id.
    pub id: Id,
    /// Bytes.
    pub size: u64,
}

/// One side of a change as JSON shows it (`diff --json`, `status --json`, the run result): the
/// blob id lets a caller fetch the content (`rewind cat`, the library's reader) without another
/// diff.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SideJson {
    /// file, executable or symlink.
    pub kind: &'static str,
    /// git's mode, six octal digits.
    pub mode: String,
    /// The blob id, 64 hex digits.
    pub id: String,
    /// Bytes.
    pub size: u64,
}

impl EntryState {
    /// The JSON view.
    pub fn json(&self) -> SideJson {
        SideJson {
            kind: self.kind.name(),
            mode: format!("{:06o}", self.kind.git_mode()),
            id: self.id.hex(),
            size: self.size,
        }
    }
}

/// What happened to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    /// New path.
    Added,
    /// Removed path.
    Deleted,
    /// Same path, different content (the mode may have changed too).
    Modified,
    /// Same path and content, only the executable bit changed.
    ModeChanged,
    /// File <-> symlink at the same path.
    TypeChanged,
    /// Moved without changing content (exact rename; the mode may have changed).
    Renamed,
}

impl ChangeStatus {
    /// A stable lowercase name for JSON.
    pub fn name(self) -> &'static str {
        match self {
            ChangeStatus::Added => "added",
            ChangeStatus::Deleted => "deleted",
            ChangeStatus::Modified => "modified",
            ChangeStatus::ModeChanged => "mode_changed",
            ChangeStatus::TypeChanged => "type_changed",
            ChangeStatus::Renamed => "renamed",
        }
    }
}

/// A change to one file (or symlink).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// The path (the new path for renames).
    pub path: Vec<u8>,
    /// The old path, for renames.
    pub old_path: Option<Vec<u8>>,
    /// What it was (None if added).
    pub old: Option<EntryState>,
    /// What it is (None if deleted).
    pub new: Option<EntryState>,
    /// The kind of change.
    pub status: ChangeStatus,
}

impl FileChange {
    /// The path on the old side.
    pub fn old_path(&self) -> &[u8] {
        self.old_path.as_deref().unwrap_or(&self.path)
    }
}

/// Restricts a comparison to some paths (and everything below them).
#[derive(Clone, Debug, Default)]
pub struct PathFilter {
    prefixes: Vec<RelPath>,
}

impl PathFilter {
    /// A filter from paths (already normalised by [`RelPath`]: `.`, `./x`, `x/` and `a//b`
    /// name what they look like); empty means everything.
    pub fn new(paths: &[RelPath]) -> PathFilter {
        PathFilter {
            prefixes: paths.to_vec(),
        }
    }

    /// Whether the filter selects everything.
    pub fn is_all(&self) -> bool {
        self.prefixes.is_empty() || self.prefixes.iter().any(RelPath::is_root)
    }

    /// Whether `path` is selected.
    pub fn matches(&self, path: &[u8]) -> bool {
        self.is_all() || self.prefixes.iter().any(|p| is_under(path, p))
    }

    /// Whether anything at or below directory `dir` can be selected.
    pub fn enters(&self, dir: &[u8]) -> bool {
        self.is_all()
            || self
                .prefixes
                .iter()
                .any(|p| is_under(dir, p) || is_under(p, dir))
    }
}

pub use crate::files::is_under;

/// Like [`compare`], without rename pairing, and also listing directories that exist on one
/// side only (as `Added`/`Deleted` with kind `Dir`): what a restore needs to create empty
/// directories and remove emptied ones.
pub fn compare_with_dirs(
    src: &dyn TreeSource,
    a: Option<&Id>,
    b: Option<&Id>,
    filter: &PathFilter,
) -> Result<Vec<FileChange>> {
    let mut out = Vec::new();
    walk(src, a, b, b"", filter, true, &mut out)?;
    out.sort_by(|x, y| x.path.cmp(&y.path));
    Ok(out)
}

/// Lists the changes from tree `a` to tree `b` (None: an empty tree).
pub fn compare(
    src: &dyn TreeSource,
    a: Option<&Id>,
    b: Option<&Id>,
    filter: &PathFilter,
    renames: bool,
) -> Result<Vec<FileChange>> {
    let mut out = Vec::new();
    walk(src, a, b, b"", filter, false, &mut out)?;
    if renames {
        pair_renames(&mut out);
    }
    out.sort_by(|x, y| x.path.cmp(&y.path));
    Ok(out)
}

fn state(kind: Kind, id: Id, size: u64) -> EntryState {
    EntryState { kind, id, size }
}

fn walk(
    src: &dyn TreeSource,
    a: Option<&Id>,
    b: Option<&Id>,
    prefix: &[u8],
    filter: &PathFilter,
    dirs: bool,
    out: &mut Vec<FileChange>,
) -> Result<()> {
    if a == b || !filter.enters(prefix) {
        return Ok(());
    }
    let ta = match a {
        Some(id) => src.tree(id)?,
        None => Tree::default(),
    };
    let tb = match b {
        Some(id) => src.tree(id)?,
        None => Tree::default(),
    };
    let (mut i, mut j) = (0, 0);
    while i < ta.entries.len() || j < tb.entries.len() {
        let ea = ta.entries.get(i);
        let eb = tb.entries.get(j);
        let order = match (ea, eb) {
            (Some(x), Some(y)) => x.name.cmp(&y.name),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (ea, eb) = match order {
            std::cmp::Ordering::Less => {
                i += 1;
                (ea, None)
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                (None, eb)
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                (ea, eb)
            }
        };
        let name = ea.or(eb).map(|e| e.name.as_slice()).unwrap_or_default();
        let path = child_path(prefix, name);
        let a_dir = ea.filter(|e| e.kind == Kind::Dir).map(|e| &e.id);
        let b_dir = eb.filter(|e| e.kind == Kind::Dir).map(|e| &e.id);
        let a_file = ea.filter(|e| e.kind != Kind::Dir);
        let b_file = eb.filter(|e| e.kind != Kind::Dir);
        if a_dir.is_some() || b_dir.is_some() {
            walk(src, a_dir, b_dir, &path, filter, dirs, out)?;
            if dirs && a_dir.is_some() != b_dir.is_some() && filter.matches(&path) {
                let (e, status) = match (ea, eb) {
                    (Some(x), _) if a_dir.is_some() => (x, ChangeStatus::Deleted),
                    (_, Some(y)) => (y, ChangeStatus::Added),
                    _ => unreachable!("one side is a directory"),
                };
                let st = Some(state(Kind::Dir, e.id, e.size));
                let (old, new) = if status == ChangeStatus::Deleted {
                    (st, None)
                } else {
                    (None, st)
                };
                out.push(FileChange {
                    path: path.clone(),
                    old_path: None,
                    old,
                    new,
                    status,
                });
            }
        }
        if !filter.matches(&path) {
            continue;
        }
        match (a_file, b_file) {
            (Some(x), Some(y)) => {
                if x.id == y.id && x.kind == y.kind {
                    continue;
                }
                let status = if (x.kind == Kind::Symlink) != (y.kind == Kind::Symlink) {
                    ChangeStatus::TypeChanged
                } else if x.id == y.id {
                    ChangeStatus::ModeChanged
                } else {
                    ChangeStatus::Modified
                };
                out.push(FileChange {
                    path,
                    old_path: None,
                    old: Some(state(x.kind, x.id, x.size)),
                    new: Some(state(y.kind, y.id, y.size)),
                    status,
                });
            }
            (Some(x), None) => out.push(FileChange {
                path,
                old_path: None,
                old: Some(state(x.kind, x.id, x.size)),
                new: None,
                status: ChangeStatus::Deleted,
            }),
            (None, Some(y)) => out.push(FileChange {
                path,
                old_path: None,
                old: None,
                new: Some(state(y.kind, y.id, y.size)),
                status: ChangeStatus::Added,
            }),
            (None, None) => {}
        }
    }
    Ok(())
}

/// Pairs deletions and additions of the same blob (and the same file-vs-symlink nature) into
/// renames. Among several candidates, one with the same file name wins, then the first by path.
fn pair_renames(changes: &mut Vec<FileChange>) {
    let key = |s: &EntryState| (s.id, s.kind == Kind::Symlink);
    let mut deleted: HashMap<(Id, bool), Vec<usize>> = HashMap::new();
    for (i, c) in changes.iter().enumerate() {
        if let (ChangeStatus::Deleted, Some(old)) = (c.status, &c.old) {
            deleted.entry(key(old)).or_default().push(i);
        }
    }
    if deleted.is_empty() {
        return;
    }
    let mut consumed = vec![false; changes.len()];
    for i in 0..changes.len() {
        let c = &changes[i];
        let (ChangeStatus::Added, Some(new)) = (c.status, c.new) else {
            continue;
        };
        let Some(cands) = deleted.get_mut(&key(&new)) else {
            continue;
        };
        cands.retain(|&d| !consumed[d]);
        if cands.is_empty() {
            continue;
        }
        let base = crate::files::split_parent(&c.path).1;
        let pick = cands
            .iter()
            .position(|&d| crate::files::split_parent(&changes[d].path).1 == base)
            .unwrap_or(0);
        let d = cands.remove(pick);
        consumed[d] = true;
        let old_path = changes[d].path.clone();
        let old = changes[d].old;
        let c = &mut changes[i];
        c.old_path = Some(old_path);
        c.old = old;
        c.status = ChangeStatus::Renamed;
    }
    let mut idx = 0;
    changes.retain(|_| {
        let keep = !consumed[idx];
        idx += 1;
        keep
    });
}
