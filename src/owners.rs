//! Who wrote each line of a change: a file's change from one state to another, traced
//! through the versions in between (an overlay's runs, a workspace's snapshots), so each
//! changed line can be given to the step that made it.
//!
//! Each step is a version of the file with an owner (a run's number; 0 for a step of no run).
//! Consecutive versions are compared with the one line diff: an added line belongs to the
//! owner of the step that added it, a removed line of the first version to the owner of the
//! step that removed it. The hunks of the whole change are then cut at the boundaries between
//! owners ([`crate::hunks::refine_owned`]), so two runs' edits on neighbouring lines can be
//! taken or taken back apart.

use crate::diff::text::split_lines;
use crate::hunks::{self, ReviewHunk};
use crate::id::Id;
use crate::patch::linediff::changed_lines;
use crate::store::Reader;
use crate::store::tree::Kind;

/// Who made each line of a file's change from `old` to `new`: the owner that removed each
/// old line, and the owner that wrote each new line (0: no run).
pub struct Owners {
    old: Vec<u32>,
    new: Vec<u32>,
}

impl Owners {
    /// The owner of old line `i` (`added` false) or new line `i` (`added` true), 0-based.
    pub fn of(&self, added: bool, i: usize) -> u32 {
        let side = if added { &self.new } else { &self.old };
        side.get(i).copied().unwrap_or(0)
    }
}

/// Where a line of the version being followed came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Line `i` of the first version, unchanged so far.
    Base(usize),
    /// Written by the step of this owner.
    Made(u32),
}

/// Traces the lines of the change from `old` to `new` through `steps` (each a version of the
/// file and the owner of the step that produced it; None: unknown, skipped), then to `new`
/// itself (owner 0). A line the final diff pairs differently from the steps (moved, or removed
/// and written again) goes to the last owner that changed the file.
pub fn trace(
    old: &[u8],
    new: &[u8],
    steps: impl IntoIterator<Item = (Option<Vec<u8>>, u32)>,
) -> Owners {
    let base_len = split_lines(old).len();
    let mut cur = old.to_vec();
    let mut origin: Vec<Origin> = (0..base_len).map(Origin::Base).collect();
    let mut removed_by: Vec<Option<u32>> = vec![None; base_len];
    let mut last = 0;
    let mut step = |next: Vec<u8>, label: u32| {
        if next == cur {
            return;
        }
        let a = split_lines(&cur);
        let b = split_lines(&next);
        let Some((ca, cb)) = changed_lines(&a, &b, None) else {
            return;
        };
        let mut now = Vec::with_capacity(b.len());
        let mut i = 0;
        for &changed in &cb {
            if changed {
                now.push(Origin::Made(label));
                continue;
            }
            while i < ca.len() && ca[i] {
                if let Origin::Base(k) = origin[i] {
                    removed_by[k] = Some(label);
                }
                i += 1;
            }
            now.push(origin.get(i).copied().unwrap_or(Origin::Made(label)));
            i += 1;
        }
        for (k, &gone) in ca.iter().enumerate().skip(i) {
            if gone && let Origin::Base(b) = origin[k] {
                removed_by[b] = Some(label);
            }
        }
        origin = now;
        cur = next;
        last = label;
    };
    for (version, owner) in steps {
        if let Some(v) = version {
            step(v, owner);
        }
    }
    step(new.to_vec(), 0);
    Owners {
        old: removed_by.into_iter().map(|r| r.unwrap_or(last)).collect(),
        new: origin
            .into_iter()
            .map(|o| match o {
                Origin::Made(l) => l,
                Origin::Base(_) => last,
            })
            .collect(),
    }
}

/// The entry `path` has in snapshot `id`: its kind and object id; `Some(None)` when the
/// snapshot has no such path; None when the snapshot cannot be read any more.
pub(crate) fn entry_at(reader: &Reader, id: &Id, path: &[u8]) -> Option<Option<(Kind, Id)>> {
    let root = reader.snapshot_record(id).ok()?.root;
    Some(reader.lookup(&root, path).ok()?.map(|e| (e.kind, e.id)))
}

/// The last of `units` (each its state before and after, and its owner) that changed
/// `path`'s entry (kind or content); 0 when none did.
pub(crate) fn entry_owner(
    reader: &Reader,
    path: &[u8],
    units: impl DoubleEndedIterator<Item = (Id, Id, u32)>,
) -> u32 {
    units
        .rev()
        .find(|(before, after, _)| {
            match (
                entry_at(reader, before, path),
                entry_at(reader, after, path),
            ) {
                (Some(b), Some(a)) => a != b,
                _ => false,
            }
        })
        .map_or(0, |(_, _, n)| n)
}

/// The versions of `path` in `snapshots` (each with its owner), for [`trace`]: a file's bytes,
/// empty when absent or not a file; None when a snapshot cannot be read any more, and for a
/// version the previous one already had (`trace` passes over both alike), so that a file
/// unchanged across many snapshots is read once.
pub(crate) fn versions(
    reader: &Reader,
    path: &[u8],
    snapshots: impl IntoIterator<Item = (Id, u32)>,
) -> Vec<(Option<Vec<u8>>, u32)> {
    let mut prev: Option<Option<(Kind, Id)>> = None;
    let mut out = Vec::new();
    for (snap, owner) in snapshots {
        let entry = entry_at(reader, &snap, path)
            .map(|e| e.filter(|(k, _)| matches!(k, Kind::File | Kind::Executable)));
        let bytes = match entry {
            Some(e) if prev != Some(e) => {
                prev = Some(e);
                match e {
                    Some((_, blob)) => reader.read_blob(&blob).ok(),
                    None => Some(Vec::new()),
                }
            }
            _ => None,
        };
        out.push((bytes, owner));
    }
    out
}

/// One file's part of a run's changes.
#[derive(Clone, Debug)]
pub struct RunFile {
    /// The path.
    pub path: Vec<u8>,
    /// Its hunks (ids that a selection by hunk takes), None for a change taken whole.
    pub hunks: Option<Vec<ReviewHunk>>,
}

/// The hunks of `path` cut by owner as [`hunks::refine_owned`] cuts them (as
/// [`hunks::refine`] does for a file without owners), each with its owner.
pub fn refine(
    path: &[u8],
    hs: Vec<ReviewHunk>,
    owners: Option<&Owners>,
    wanted: &dyn Fn(&str) -> bool,
    by_owner: bool,
) -> Vec<(ReviewHunk, Option<u32>)> {
    match owners {
        Some(o) => hunks::refine_owned(path, hs, &|added, i| o.of(added, i), wanted, by_owner),
        None => hunks::refine(path, hs, wanted)
            .into_iter()
            .map(|h| (h, None))
            .collect(),
    }
}

/// Changes gathered by owner, for a review by run: [`ByOwner::add`] each hunk (or whole change)
/// with its owner, then [`ByOwner::groups`].
#[derive(Default)]
pub(crate) struct ByOwner {
    groups: Vec<(Option<u32>, Vec<RunFile>)>,
}

impl ByOwner {
    /// Adds a hunk of `path` (or, with `h` None, the change of `path` taken whole) to
    /// `owner`'s group; hunks of one file added one after the other stay together.
    pub(crate) fn add(&mut self, owner: Option<u32>, path: &[u8], h: Option<ReviewHunk>) {
        let at = match self.groups.iter().position(|(o, _)| *o == owner) {
            Some(i) => i,
            None => {
                self.groups.push((owner, Vec::new()));
                self.groups.len() - 1
            }
        };
        let files = &mut self.groups[at].1;
        match (files.last_mut(), h) {
            (Some(f), Some(h)) if f.path == path => {
                if let Some(hs) = f.hunks.as_mut() {
                    hs.push(h);
                }
            }
            (_, h) => files.push(RunFile {
                path: path.to_vec(),
                hunks: h.map(|h| vec![h]),
            }),
        }
    }

    /// The groups: owners in order, then the changes of no owner (0), then the parts where
    /// owners' lines interleave (None).
    pub(crate) fn groups(mut self) -> Vec<(Option<u32>, Vec<RunFile>)> {
        self.groups.sort_by_key(|(o, _)| match o {
            Some(0) => (1, 0),
            Some(n) => (0, *n),
            None => (2, 0),
        });
        self.groups
    }
}
