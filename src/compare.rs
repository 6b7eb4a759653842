//! Diffs between two snapshots, or a snapshot and the live workspace.
//!
//! The live side is a dry-run snapshot: the same walk, ignore rules and stat cache as a real
//! snapshot, with the trees it computed kept in memory. Its file contents are read from the
//! workspace (a dry run stores no blobs), everything else from the store.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diff::render::{FileStat, PatchOptions, write_patch, write_patch_streamed};
use crate::diff::text::{DiffOptions, is_binary, line_diff};
use crate::diff::tree::{ChangeStatus, EntryState, FileChange, PathFilter, TreeSource, compare};
use crate::diff::{Change, EntryKind, Side};
use crate::error::{Error, IoContext, Result};
use crate::files::RelPath;
use crate::files::join_rel;
use crate::id::Id;
use crate::progress::NoProgress;
use crate::snapshot::{SnapshotOptions, SnapshotReport, snapshot};
use crate::store::tree::{Kind, Tree};
use crate::store::{Reader, Store};

/// Added or deleted files at least this large are streamed into patches, never held whole.
const STREAM_THRESHOLD: u64 = 16 << 20;

/// One side of a diff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rev {
    /// A stored snapshot.
    Snapshot(Id),
    /// The workspace as it is now.
    Live,
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct DiffRequest {
    /// Pair renames: exact ones, and (with `rename_score` under 100) a deleted and an added
    /// file whose contents are that similar, as git's `-M` does.
    pub renames: bool,
    /// The least similarity, in percent, of a rename with edits (git's default 50; 100:
    /// exact renames only). See [`crate::diff::similar`].
    pub rename_score: u8,
    /// Only these paths (and what is below them); empty for everything.
    pub paths: Vec<RelPath>,
}

impl Default for DiffRequest {
    fn default() -> Self {
        DiffRequest {
            renames: true,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        }
    }
}

/// Totals over a diff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Files changed.
    pub files: usize,
    /// Lines added.
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
}

/// A computed diff: its changes, and what is needed to read both sides' contents.
pub struct Diff {
    reader: Reader,
    pending: HashMap<Id, Tree>,
    workspace: Option<PathBuf>,
    old_live: bool,
    new_live: bool,
    /// The changes, sorted by path.
    pub changes: Vec<FileChange>,
    /// The dry-run snapshot of the live side, when there is one.
    pub live: Option<SnapshotReport>,
}

/// Trees from the store, plus those a dry-run snapshot computed and kept in memory.
pub(crate) struct Trees<'a> {
    pub(crate) reader: &'a Reader,
    pub(crate) pending: &'a HashMap<Id, Tree>,
}

impl TreeSource for Trees<'_> {
    fn tree(&self, id: &Id) -> Result<Tree> {
        match self.pending.get(id) {
            Some(t) => Ok(t.clone()),
            None => self.reader.tree(id),
        }
    }
}

/// What the workspace at `root` changed since snapshot `from`, path by path (no rename
/// pairing): a warm status.
pub fn live_changes(store: &Store, from: Id, root: &Path) -> Result<Diff> {
    diff(
        store,
        Rev::Snapshot(from),
        Rev::Live,
        Some(root),
        &DiffRequest {
            renames: false,
            rename_score: crate::diff::similar::DEFAULT_RENAME_SCORE,
            paths: Vec::new(),
        },
    )
}

/// Computes the diff from `a` to `b`. `workspace` is needed when either side is live.
pub fn diff(
    store: &Store,
    a: Rev,
    b: Rev,
    workspace: Option<&Path>,
    req: &DiffRequest,
) -> Result<Diff> {
    let mut pending = HashMap::new();
    let mut live = None;
    let mut roots = [None, None];
    // The live side is scanned with the settings of the snapshot it is compared with, so a
    // snapshot taken with --ignore does not show its ignored files as added.
    let settings_from = [a, b].into_iter().find_map(|r| match r {
        Rev::Snapshot(id) => Some(id),
        Rev::Live => None,
    });
    for (slot, rev) in [a, b].into_iter().enumerate() {
        roots[slot] = Some(match rev {
            Rev::Snapshot(id) => store.reader()?.snapshot_record(&id)?.root,
            Rev::Live => {
                let root = workspace.ok_or(Error::LiveNeedsWorkspace)?;
                let mut opts = SnapshotOptions {
                    dry_run: true,
                    force: true,
                    ..SnapshotOptions::default()
                };
                if let Some(id) = settings_from {
                    let rec = store.reader()?.snapshot_record(&id)?;
                    opts.ignore_globs = rec.scan.ignore_globs;
                    opts.max_file_size = rec.scan.max_file_size;
                }
                let outcome = snapshot(store, root, &opts, &NoProgress)?;
                pending.extend(outcome.pending_trees);
                let root_id = outcome.report.root;
                live = Some(outcome.report);
                root_id
            }
        });
    }
    let reader = store.reader()?;
    let filter = PathFilter::new(&req.paths);
    let changes = compare(
        &Trees {
            reader: &reader,
            pending: &pending,
        },
        roots[0].as_ref(),
        roots[1].as_ref(),
        &filter,
        req.renames,
    )?;
    let workspace = live.as_ref().map(|r| r.workspace.clone());
    let mut d = Diff {
        reader,
        pending,
        workspace,
        old_live: a == Rev::Live,
        new_live: b == Rev::Live,
        changes,
        live,
    };
    if req.renames {
        let mut changes = std::mem::take(&mut d.changes);
        crate::diff::similar::pair_similar(&mut changes, req.rename_score, &|c, old| {
            d.content(c, old)
        })?;
        changes.sort_by(|x, y| x.path.cmp(&y.path));
        d.changes = changes;
    }
    Ok(d)
}

fn entry_kind(k: Kind) -> EntryKind {
    match k {
        Kind::Executable => EntryKind::Executable,
        Kind::Symlink => EntryKind::Symlink,
        _ => EntryKind::File,
    }
}

impl Diff {
    /// What the scan of the live side passed over (too large, unreadable, special files)
    /// under `paths` (everything when empty): not a change a snapshot would record as such,
    /// yet not "no changes" either. Empty when neither side is live.
    pub fn live_skipped(&self, paths: &[RelPath]) -> Vec<&crate::store::snapshot::Skipped> {
        let filter = PathFilter::new(paths);
        self.live
            .iter()
            .flat_map(|l| l.skipped.iter())
            .filter(|s| s.reason.excluded() && !s.path.is_empty() && filter.matches(&s.path))
            .collect()
    }

    /// The trees computed for the live side (not in the store).
    pub fn pending_trees(&self) -> &HashMap<Id, Tree> {
        &self.pending
    }

    /// The reader both sides are read through.
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    fn live_path(&self, rel: &[u8]) -> Result<PathBuf> {
        let root = self.workspace.as_deref().ok_or(Error::LiveNeedsWorkspace)?;
        Ok(join_rel(root, rel))
    }

    /// Reads one side's content of a change (empty when that side does not exist).
    pub fn content(&self, change: &FileChange, old: bool) -> Result<Vec<u8>> {
        let (state, live, path) = if old {
            (change.old, self.old_live, change.old_path())
        } else {
            (change.new, self.new_live, change.path.as_slice())
        };
        let Some(state) = state else {
            return Ok(Vec::new());
        };
        if live && !self.reader.has_blob(&state.id)? {
            let p = self.live_path(path)?;
            return if state.kind == Kind::Symlink {
                Ok(std::fs::read_link(&p)
                    .at(&p)?
                    .as_os_str()
                    .as_bytes()
                    .to_vec())
            } else {
                std::fs::read(&p).at(&p)
            };
        }
        self.reader.read_blob(&state.id)
    }

    fn open(
        &self,
        state: &EntryState,
        live: bool,
        path: &[u8],
    ) -> io::Result<Box<dyn BufRead + '_>> {
        if live && !self.reader.has_blob(&state.id).map_err(io::Error::other)? {
            let p = self.live_path(path).map_err(io::Error::other)?;
            return Ok(Box::new(BufReader::new(std::fs::File::open(p)?)));
        }
        let r = self
            .reader
            .blob_reader(&state.id)
            .map_err(io::Error::other)?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, r)))
    }

    /// A rename's similarity in percent, as its `similarity index` line shows it (100 for an
    /// exact rename and for any other change).
    pub fn similarity(&self, change: &FileChange) -> Result<u8> {
        match (change.status, change.old, change.new) {
            (ChangeStatus::Renamed, Some(o), Some(n)) if o.id != n.id => {
                Ok(crate::diff::similar::similarity(
                    &self.content(change, true)?,
                    &self.content(change, false)?,
                ))
            }
            _ => Ok(100),
        }
    }

    /// Line statistics of one change (binary files have none).
    pub fn stat(&self, change: &FileChange, opts: &DiffOptions) -> Result<FileStat> {
        let old = self.content(change, true)?;
        let new = self.content(change, false)?;
        let binary = is_binary(&old) || is_binary(&new);
        let mut st = FileStat {
            binary,
            old_size: old.len() as u64,
            new_size: new.len() as u64,
            ..FileStat::default()
        };
        let exact = change.old.map(|o| o.id) == change.new.map(|n| n.id);
        if !binary
            && change.status != ChangeStatus::ModeChanged
            && !(change.status == ChangeStatus::Renamed && exact)
        {
            let d = line_diff(&old, &new, opts);
            st.insertions = d.insertions as u64;
            st.deletions = d.deletions as u64;
            st.timed_out = d.timed_out;
        }
        Ok(st)
    }

    /// Line statistics of every change, computed on all cores.
    pub fn stats(&self, opts: &DiffOptions) -> Result<Vec<FileStat>> {
        self.changes
            .par_iter()
            .map(|c| self.stat(c, opts))
            .collect()
    }

    /// Writes the whole patch in git's extended unified format, one file at a time, streaming
    /// large added and deleted files. Returns the totals.
    pub fn write_patch(&self, w: &mut dyn Write, opts: &PatchOptions) -> Result<Totals> {
        let mut totals = Totals::default();
        for c in &self.changes {
            let st = self.write_one(w, c, opts).map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe => {
                    Error::io("<stdout>", source)
                }
                other => other,
            })?;
            totals.files += 1;
            totals.insertions += st.insertions;
            totals.deletions += st.deletions;
        }
        Ok(totals)
    }

    fn write_one(
        &self,
        w: &mut dyn Write,
        c: &FileChange,
        opts: &PatchOptions,
    ) -> Result<FileStat> {
        let old_path = c.old_path();
        fn side<'p>(s: &EntryState, path: &'p [u8]) -> Side<'p> {
            Side {
                path,
                kind: entry_kind(s.kind),
                id: s.id.0,
            }
        }
        let change = match (c.status, &c.old, &c.new) {
            (ChangeStatus::Added, _, Some(n)) => Change::Added {
                new: side(n, &c.path),
            },
            (ChangeStatus::Deleted, Some(o), _) => Change::Deleted {
                old: side(o, old_path),
            },
            (ChangeStatus::Renamed, Some(o), Some(n)) => Change::Renamed {
                old: side(o, old_path),
                new: side(n, &c.path),
                similarity: self.similarity(c)?,
            },
            (_, Some(o), Some(n)) => Change::Modified {
                old: side(o, old_path),
                new: side(n, &c.path),
            },
            _ => return Ok(FileStat::default()),
        };
        let to_err = |e: io::Error| Error::io("<output>", e);
        let streamed = match (&c.old, &c.new) {
            (None, Some(n)) if n.size >= STREAM_THRESHOLD && n.kind != Kind::Symlink => {
                Some((n, self.new_live, c.path.as_slice()))
            }
            (Some(o), None) if o.size >= STREAM_THRESHOLD && o.kind != Kind::Symlink => {
                Some((o, self.old_live, old_path))
            }
            _ => None,
        };
        if let Some((state, live, path)) = streamed {
            let mut open = || self.open(state, live, path);
            return write_patch_streamed(w, &change, &mut open, opts).map_err(to_err);
        }
        let old = self.content(c, true)?;
        let new = self.content(c, false)?;
        write_patch(w, &change, &old, &new, opts).map_err(to_err)
    }
}

impl Store {
    /// The diff from `a` to `b` (see [`diff`]).
    pub fn diff(
        &self,
        a: Rev,
        b: Rev,
        workspace: Option<&Path>,
        req: &DiffRequest,
    ) -> Result<Diff> {
        diff(self, a, b, workspace, req)
    }
}
