//! Finding paths across a workspace's snapshots: which snapshots hold a path matching a glob,
//! and in which snapshot its content changed.
//!
//! Every snapshot's tree is walked, but a subtree already walked at the same path (same tree
//! id) is answered from memory: consecutive snapshots share nearly all their subtrees, so the
//! cost follows what changed, not the number of snapshots times the tree's size.

use globset::{GlobBuilder, GlobMatcher};
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::id::Id;
use crate::store::Reader;
use crate::store::tree::Kind;

/// One stretch of a path's history with the same content: from the first snapshot that held
/// it so to the last one, without a snapshot in between that held something else or nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// What the path was.
    pub kind: Kind,
    /// The blob (or, for a directory, tree) id.
    pub id: Id,
    /// Its size in bytes.
    pub size: u64,
    /// The oldest snapshot of the stretch, and when it was taken (ns since the epoch).
    pub first: (Id, i64),
    /// The newest snapshot of the stretch.
    pub last: (Id, i64),
    /// How many snapshots the stretch spans.
    pub snapshots: usize,
}

/// A path that matched, with its versions oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The workspace-relative path.
    pub path: Vec<u8>,
    /// Its versions, oldest first.
    pub versions: Vec<Version>,
}

/// What `find` looks for.
#[derive(Clone, Debug)]
pub struct FindQuery {
    /// A glob. Without a `/` it is matched against each entry's name at any depth (`*.rs`,
    /// `Cargo.toml`); with one, against the whole workspace-relative path (`src/**/*.rs`).
    pub glob: String,
    /// Also match directories (by default only files and symlinks).
    pub dirs: bool,
}

/// The paths of workspace `ws`'s snapshots that match `q`, sorted by path.
pub fn find(reader: &Reader, ws: u64, q: &FindQuery) -> Result<Vec<Found>> {
    let by_name = !q.glob.contains('/');
    let matcher = GlobBuilder::new(q.glob.trim_start_matches('/'))
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| Error::BadGlob {
            list: crate::error::GlobList::Find,
            glob: Some(q.glob.clone()),
            why: e.to_string(),
        })?
        .compile_matcher();
    let walker = Walker {
        reader,
        matcher,
        by_name,
        dirs: q.dirs,
    };
    // Oldest first, so that versions are built forward in time.
    let mut rows = reader.snapshot_records(ws, usize::MAX)?;
    rows.reverse();
    let mut memo: FxHashMap<(Id, Vec<u8>), std::rc::Rc<Vec<Hit>>> = FxHashMap::default();
    let mut found: FxHashMap<Vec<u8>, Vec<Open>> = FxHashMap::default();
    for (n, (snap, record)) in rows.iter().enumerate() {
        let hits = walker.walk(&record.root, b"", &mut memo)?;
        for h in hits.iter() {
            let versions = found.entry(h.path.clone()).or_default();
            match versions.last_mut() {
                // The same content, and the path was in the snapshot just before this one.
                Some(v) if v.id == h.id && v.kind == h.kind && v.last_row + 1 == n => {
                    v.version.last = (*snap, record.time_ns);
                    v.version.snapshots += 1;
                    v.last_row = n;
                }
                _ => versions.push(Open {
                    version: Version {
                        kind: h.kind,
                        id: h.id,
                        size: h.size,
                        first: (*snap, record.time_ns),
                        last: (*snap, record.time_ns),
                        snapshots: 1,
                    },
                    id: h.id,
                    kind: h.kind,
                    last_row: n,
                }),
            }
        }
    }
    let mut out: Vec<Found> = found
        .into_iter()
        .map(|(path, versions)| Found {
            path,
            versions: versions.into_iter().map(|o| o.version).collect(),
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A version being extended, with the row it was last seen in.
struct Open {
    version: Version,
    id: Id,
    kind: Kind,
    last_row: usize,
}

/// A matching entry of one tree.
#[derive(Clone)]
struct Hit {
    path: Vec<u8>,
    kind: Kind,
    id: Id,
    size: u64,
}

struct Walker<'a> {
    reader: &'a Reader,
    matcher: GlobMatcher,
    by_name: bool,
    dirs: bool,
}

impl Walker<'_> {
    /// The matching entries below tree `id`, found at `prefix`.
    fn walk(
        &self,
        id: &Id,
        prefix: &[u8],
        memo: &mut FxHashMap<(Id, Vec<u8>), std::rc::Rc<Vec<Hit>>>,
    ) -> Result<std::rc::Rc<Vec<Hit>>> {
        let key = (*id, prefix.to_vec());
        if let Some(hits) = memo.get(&key) {
            return Ok(hits.clone());
        }
        let tree = self.reader.tree(id)?;
        let mut hits = Vec::new();
        for e in &tree.entries {
            let path = crate::files::child_path(prefix, &e.name);
            let subject: &[u8] = if self.by_name { &e.name } else { &path };
            let subject = String::from_utf8_lossy(subject);
            if (e.kind != Kind::Dir || self.dirs) && self.matcher.is_match(subject.as_ref()) {
                hits.push(Hit {
                    path: path.clone(),
                    kind: e.kind,
                    id: e.id,
                    size: e.size,
                });
            }
            if e.kind == Kind::Dir {
                let below = self.walk(&e.id, &path, memo)?;
                hits.extend(below.iter().cloned());
            }
        }
        let hits = std::rc::Rc::new(hits);
        memo.insert(key, hits.clone());
        Ok(hits)
    }
}
