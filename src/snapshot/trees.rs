//! Building a snapshot's Merkle trees bottom-up from the walk's entries, grouped by directory
//! and joined with the stat cache (`crate::scan::group`).

use super::write::Output;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::scan::group::{Group, name_in};
use crate::scan::statcache::{CacheEntry, DirCache, DirView, Subtree, is_racy};
use crate::scan::walk::{EntryType, WalkEntry};
use crate::store::snapshot::TreeStats;
use crate::store::tree::{Kind, Tree, TreeEntry};

/// The trees of a snapshot, built bottom-up.
pub(super) struct Built {
    pub root: Id,
    pub stats: TreeStats,
    /// With [`Output::Keep`] (a dry run): the directories whose stat cache changed, and its
    /// encoding; one per directory rebuilt, so also the trees that are not known to be stored.
    /// A row lists what its tree does (names, kinds, ids, sizes), so the trees' encodings are
    /// not kept beside the rows but made again from them ([`tree_of`]). With
    /// [`Output::Write`], empty: both went into the transaction as they were made.
    pub dirty_caches: Vec<(Vec<u8>, Vec<u8>)>,
    /// Subdirectories the cache of a rebuilt directory had and the new tree has not: their
    /// caches, and everything below, are stale.
    pub stale_trees: Vec<Vec<u8>>,
}

/// A directory once built: its tree id, total size, whether its cache was reused unchanged,
/// and its subtree's totals.
#[derive(Clone, Copy)]
struct DoneDir {
    id: Id,
    size: u64,
    clean: bool,
    subtree: Subtree,
}

/// Builds the trees of `groups` (sorted by path, as `crate::scan::group::group` makes them;
/// the first is the root). A file or symlink is in the tree when its `cached` is set. A
/// directory whose entries all hit the cache, with the same count, and whose subdirectories
/// are all clean, reuses its cached tree id without encoding anything.
pub(super) fn build_trees(
    entries: &[WalkEntry],
    groups: &[Group],
    start_ns: i64,
    out: &mut Output,
) -> Result<Built> {
    let mut done: Vec<Option<DoneDir>> = vec![None; groups.len()];
    let mut stats = TreeStats::default();
    let mut dirty_caches = Vec::new();
    let mut stale_trees = Vec::new();
    // What a subdirectory became: from its group, or, for a subtree the walk took whole,
    // from its entry.
    let sub_done = |e: &WalkEntry, sub: Option<u32>, done: &[Option<DoneDir>]| -> DoneDir {
        match sub {
            Some(g) => done[g as usize].expect("a subdirectory's group comes after its parent's"),
            None => {
                let (id, size) = e.cached.unwrap_or_default();
                DoneDir {
                    id,
                    size,
                    clean: true,
                    subtree: e.subtree().unwrap_or_default(),
                }
            }
        }
    };
    // Every directory sorts after its parent: backwards, each comes before its parent.
    for (at, g) in groups.iter().enumerate().rev() {
        // The subtree's totals, and whether all below is settled (cached, none racy): from the
        // children, so a reused cache and a rebuilt one say the same.
        let mut subtree = Subtree {
            settled: true,
            ..Subtree::default()
        };
        let mut resolved = 0usize;
        let mut clean = g.old.is_some();
        let mut subs = g.subdirs.iter();
        let mut olds = g.old.as_ref().map(|o| o.subdirs.iter());
        for &i in &g.kids {
            let e = &entries[i as usize];
            match e.ty {
                EntryType::Dir => {
                    let sub = subs.next().copied().flatten();
                    let d = sub_done(e, sub, &done);
                    let old = olds.as_mut().and_then(|o| o.next()).copied().flatten();
                    stats.dirs += 1;
                    if sub.is_none() {
                        stats.dirs += d.subtree.dirs;
                        stats.files += d.subtree.files;
                        stats.symlinks += d.subtree.symlinks;
                        stats.bytes += d.size;
                    }
                    subtree.dirs += 1 + d.subtree.dirs;
                    subtree.files += d.subtree.files;
                    subtree.symlinks += d.subtree.symlinks;
                    subtree.settled &= d.subtree.settled;
                    clean &= d.clean && old == Some((d.id, Some(d.subtree)));
                    resolved += 1;
                }
                EntryType::File | EntryType::Symlink => {
                    let Some((_, size)) = e.cached else { continue };
                    if e.ty == EntryType::Symlink {
                        stats.symlinks += 1;
                        subtree.symlinks += 1;
                    } else {
                        stats.files += 1;
                        stats.bytes += size;
                        subtree.files += 1;
                    }
                    clean &= !e.fresh;
                    resolved += 1;
                }
                EntryType::Special => {}
            }
        }
        if let Some(old) = g.old.as_ref().filter(|o| clean && o.len == resolved) {
            done[at] = Some(DoneDir {
                id: old.tree,
                size: old.size,
                clean: true,
                subtree,
            });
            continue;
        }
        let mut tree_entries = Vec::with_capacity(g.kids.len());
        let mut cache_entries = Vec::with_capacity(g.kids.len());
        let mut total = 0u64;
        let mut subs = g.subdirs.iter();
        for &i in &g.kids {
            let e = &entries[i as usize];
            let name = name_in(&g.path, &e.path);
            let (kind, id, size, stat, racy) = match e.ty {
                EntryType::Dir => {
                    let d = sub_done(e, subs.next().copied().flatten(), &done);
                    (Kind::Dir, d.id, d.size, d.subtree.as_stat(), false)
                }
                EntryType::File | EntryType::Symlink => {
                    let Some((id, size)) = e.cached else { continue };
                    (e.stat.kind(), id, size, e.stat, is_racy(&e.stat, start_ns))
                }
                EntryType::Special => continue,
            };
            subtree.settled &= !racy;
            if kind != Kind::Symlink {
                total += size;
            }
            tree_entries.push(TreeEntry {
                name: name.to_vec(),
                kind,
                id,
                size,
            });
            cache_entries.push(CacheEntry {
                name: name.to_vec(),
                kind,
                id,
                size,
                stat,
                racy,
            });
        }
        let tree = Tree::from_unsorted(tree_entries);
        cache_entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        if let Some(old) = &g.old {
            stale_trees.extend(
                old.gone
                    .iter()
                    .map(|name| crate::files::child_path(&g.path, name)),
            );
        }
        let bytes = tree.encode()?;
        let id = Id::of(&bytes);
        let encoded = DirCache {
            tree: id,
            size: total,
            entries: cache_entries,
        }
        .encode();
        match out {
            Output::Keep => dirty_caches.push((g.path.clone(), encoded)),
            Output::Write(w) => {
                w.tree(id, &tree, &bytes)?;
                w.row(g.path.clone(), encoded)?;
            }
        }
        drop(tree);
        done[at] = Some(DoneDir {
            id,
            size: total,
            clean: false,
            subtree,
        });
    }
    let root = done
        .first()
        .copied()
        .flatten()
        .map(|d| d.id)
        .unwrap_or_default();
    Ok(Built {
        root,
        stats,
        dirty_caches,
        stale_trees,
    })
}

impl Built {
    /// The trees of the rebuilt directories, each made again from its cache row: (id,
    /// encoding).
    pub fn new_trees(&self) -> impl Iterator<Item = Result<(Id, Vec<u8>)>> + '_ {
        self.dirty_caches.iter().map(|(_, row)| tree_of(row))
    }
}

/// The tree a stat cache row of this snapshot was built with, and its encoding. Checked
/// against the id the row names (which the parent tree refers to): a tree stored under
/// another id than its hash would be a damaged store.
pub(super) fn tree_of(row: &[u8]) -> Result<(Id, Vec<u8>)> {
    let bad = |why: &str| Error::Internal(format!("a stat cache row this snapshot made {why}"));
    let view = DirView::parse(row).ok_or_else(|| bad("does not parse"))?;
    let tree = Tree::from_unsorted(
        view.entries()
            .map(|e| TreeEntry {
                name: e.name().to_vec(),
                kind: e.kind(),
                id: e.id(),
                size: e.size(),
            })
            .collect(),
    );
    let (id, bytes) = tree.id_and_bytes()?;
    if id != view.tree() {
        return Err(bad("lists another tree than the one it names"));
    }
    Ok((id, bytes))
}
