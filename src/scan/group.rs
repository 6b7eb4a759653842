//! The walk's entries grouped by directory, and the stat cache joined with them a directory at a
//! time.
//!
//! Without the watch daemon a warm snapshot compares every file with the stat cache. Loading the
//! whole cache first copied every stored row (~90 bytes a file) into memory, where it stayed
//! beside the walk's entries until the commit. Here the rows are read in key order (one range
//! scan), each compared with its directory's entries as it comes and dropped at once: what is
//! kept per directory is an [`OldDir`], a few dozen bytes. Groups sorted by path are in the
//! cache's key order, so the join is a merge; and every directory sorts before those below it,
//! so building the trees bottom-up is a walk of the groups backwards.

use std::collections::HashSet;

use super::statcache::{DirView, StatCache, Subtree};
use super::walk::{EntryType, WalkEntry};
use crate::error::Result;
use crate::files::split_parent;
use crate::id::Id;
use crate::store::Reader;
use crate::store::tree::Kind;

/// One directory of the walk and its entries.
#[derive(Debug, Default)]
pub struct Group {
    /// The directory (relative path; empty for the root).
    pub path: Vec<u8>,
    /// Its entries, as indexes into the walk's entries: files and symlinks (whether or not they
    /// end up in the tree) and directories; not fifos, sockets or devices.
    pub kids: Vec<u32>,
    /// For each directory among `kids`, in the same order: its own group, or None for a
    /// subtree the walk took whole without reading it (an opaque entry).
    pub subdirs: Vec<Option<u32>>,
    /// What the stat cache held for this directory (None: nothing, or a damaged row).
    pub old: Option<OldDir>,
}

/// What the stat cache said about one directory: all a snapshot needs of it once its files
/// have been compared.
#[derive(Debug)]
pub struct OldDir {
    /// The tree id it had.
    pub tree: Id,
    /// Total bytes below it.
    pub size: u64,
    /// Entries it had.
    pub len: usize,
    /// For each directory among the group's `kids`, in order: its id and subtree totals in this
    /// cache if it was a directory there.
    pub subdirs: Vec<Option<(Id, Option<Subtree>)>>,
    /// Subdirectories it had that are not directories now.
    pub gone: Vec<Vec<u8>>,
}

/// Whether a walked directory entry is a subtree taken whole (not read, no group of its own).
pub fn is_opaque(e: &WalkEntry) -> bool {
    e.ty == EntryType::Dir && e.cached.is_some() && e.subtree().is_some()
}

/// Groups `entries` by parent directory, every walked directory with a group (so empty ones are
/// kept), sorted by path. Directories in `unreadable` are left out, and fifos, sockets and
/// devices (never part of a tree).
///
/// A warm snapshot waits for this between the walk and the join: at a million files it was
/// 50 ms on one thread. Large walks are grouped in two halves on two threads and merged (a
/// lookup per directory, not per entry).
pub fn group(entries: &[WalkEntry], unreadable: &HashSet<&[u8]>) -> Vec<Group> {
    let split = (entries.len() >= SPLIT_ABOVE).then_some(entries.len() / 2);
    group_split(entries, unreadable, split)
}

/// [`group`], in two halves split at `split` when given.
fn group_split(
    entries: &[WalkEntry],
    unreadable: &HashSet<&[u8]>,
    split: Option<usize>,
) -> Vec<Group> {
    let groups = match split {
        None => group_part(entries, 0, unreadable).0,
        Some(mid) => {
            let (a, b) = rayon::join(
                || group_part(&entries[..mid], 0, unreadable),
                || group_part(&entries[mid..], mid as u32, unreadable),
            );
            merge(a, b)
        }
    };
    sorted(groups)
}

/// Walks of fewer entries are grouped on one thread.
const SPLIT_ABOVE: usize = 1 << 16;

/// Group numbers by directory path.
type Slots<'e> = rustc_hash::FxHashMap<&'e [u8], u32>;

/// [`group`] of `entries`, the walk's entries from index `first` on: the groups, in the order
/// they were met, their kids' indexes global and their subdirectories numbered among them.
fn group_part<'e>(
    entries: &'e [WalkEntry],
    first: u32,
    unreadable: &HashSet<&[u8]>,
) -> (Vec<Group>, Slots<'e>) {
    let mut slots = Slots::default();
    let mut groups: Vec<Group> = Vec::new();
    fn slot<'e>(slots: &mut Slots<'e>, groups: &mut Vec<Group>, dir: &'e [u8]) -> u32 {
        *slots.entry(dir).or_insert_with(|| {
            groups.push(Group {
                path: dir.to_vec(),
                ..Group::default()
            });
            (groups.len() - 1) as u32
        })
    }
    slot(&mut slots, &mut groups, b"");
    // The walk lists a directory's entries mostly one after another: the parent's group is
    // looked up once per run of them, not once per entry.
    let mut last: (&[u8], u32) = (b"", 0);
    for (i, e) in entries.iter().enumerate() {
        let sub = match e.ty {
            EntryType::Special => continue,
            EntryType::Dir if !unreadable.is_empty() && unreadable.contains(e.path.as_slice()) => {
                continue;
            }
            EntryType::Dir if is_opaque(e) => Some(None),
            EntryType::Dir => Some(Some(slot(&mut slots, &mut groups, &e.path))),
            EntryType::File | EntryType::Symlink => None,
        };
        let (parent, _) = split_parent(&e.path);
        if last.0 != parent {
            last = (parent, slot(&mut slots, &mut groups, parent));
        }
        let g = &mut groups[last.1 as usize];
        g.kids.push(first + i as u32);
        if let Some(sub) = sub {
            g.subdirs.push(sub);
        }
    }
    (groups, slots)
}

/// The groups of two halves of a walk as one list: a directory met in both gets the first
/// half's kids, then the second's (its subdirectories in the same order, so they still pair
/// with its directory kids).
fn merge(a: (Vec<Group>, Slots), b: (Vec<Group>, Slots)) -> Vec<Group> {
    let (mut groups, slots) = a;
    let (b_groups, _) = b;
    // Where each of the second half's groups goes: the first half's group of the same
    // directory, or a new one after them (in the second half's order).
    let mut next = groups.len() as u32;
    let at_b: Vec<u32> = b_groups
        .iter()
        .map(|g| match slots.get(g.path.as_slice()) {
            Some(&n) => n,
            None => {
                next += 1;
                next - 1
            }
        })
        .collect();
    drop(slots);
    for (k, mut g) in b_groups.into_iter().enumerate() {
        for s in g.subdirs.iter_mut().flatten() {
            *s = at_b[*s as usize];
        }
        let n = at_b[k] as usize;
        if n < groups.len() {
            let into = &mut groups[n];
            into.kids.append(&mut g.kids);
            into.subdirs.append(&mut g.subdirs);
        } else {
            debug_assert_eq!(n, groups.len());
            groups.push(g);
        }
    }
    groups
}

/// The groups sorted by path, with the subdirectories' group numbers renumbered to match.
fn sorted(mut groups: Vec<Group>) -> Vec<Group> {
    let mut order: Vec<u32> = (0..groups.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| groups[a as usize].path.cmp(&groups[b as usize].path));
    let mut new_at = vec![0u32; groups.len()];
    for (at, &was) in order.iter().enumerate() {
        new_at[was as usize] = at as u32;
    }
    let mut sorted: Vec<Group> = order
        .iter()
        .map(|&was| std::mem::take(&mut groups[was as usize]))
        .collect();
    for g in &mut sorted {
        for s in g.subdirs.iter_mut().flatten() {
            *s = new_at[*s as usize];
        }
    }
    sorted
}

/// Groups joined per range scan: about 20,000 files at this tree's scale.
const JOIN_PART: usize = 1024;

/// Joins the workspace's stored stat cache with the groups (sorted by [`group`]): sets `cached`
/// on every file and symlink whose lstat its directory's row vouches for, and each group's
/// [`OldDir`]. Returns the directories the cache has and the walk did not find (their rows are
/// stale). A damaged row is taken as no row: the cache is only an accelerator.
///
/// The groups are cut in parts of consecutive paths, each joined by its own range scan of
/// the cache's rows between its first path and the next part's, on the rayon pool (the scan
/// is most of the cost, and a warm snapshot has nothing else to do meanwhile). Each part sets
/// the verdicts of its own groups' entries as it finds them ([`Disjoint`]): gathering them
/// and setting them on this thread between waves of parts left the pool idle for a tenth of
/// the join at a million files.
pub fn join_stored(
    reader: &Reader,
    ws: u64,
    groups: &mut [Group],
    entries: &mut [WalkEntry],
) -> Result<Vec<Vec<u8>>> {
    use rayon::prelude::*;
    // Each part's upper bound: the next part's first path (the last part's: the workspace's end).
    let bounds: Vec<Option<Vec<u8>>> = (0..groups.len().div_ceil(JOIN_PART))
        .map(|p| groups.get((p + 1) * JOIN_PART).map(|g| g.path.clone()))
        .collect();
    let shared = Disjoint::new(entries, groups)?;
    let stale: Vec<Vec<Vec<u8>>> = groups
        .par_chunks_mut(JOIN_PART)
        .enumerate()
        .map(|(p, part)| join_part(reader, ws, p == 0, bounds[p].as_deref(), part, &shared))
        .collect::<Result<_>>()?;
    Ok(stale.into_iter().flatten().collect())
}

/// The walk's entries, written by several threads at once, each setting only the entries of
/// the groups it holds (`&mut`): sound because no entry is a kid of two groups, which
/// [`Disjoint::new`] checks rather than trusts [`group`] for.
struct Disjoint<'e> {
    entries: *mut WalkEntry,
    len: usize,
    _borrow: std::marker::PhantomData<&'e mut [WalkEntry]>,
}

// SAFETY: the entries are reached only through `Disjoint::kid`, whose callers each hold the
// group (and so the kids) they touch, and no kid belongs to two groups.
unsafe impl Send for Disjoint<'_> {}
unsafe impl Sync for Disjoint<'_> {}

impl<'e> Disjoint<'e> {
    /// Borrows `entries` for the join of `groups`; an internal error if an entry is a kid of
    /// two groups or out of range (a bug in the grouping: the join would race).
    fn new(entries: &'e mut [WalkEntry], groups: &[Group]) -> Result<Disjoint<'e>> {
        let mut seen = vec![0u64; entries.len().div_ceil(64)];
        for &i in groups.iter().flat_map(|g| &g.kids) {
            let (word, bit) = (i as usize / 64, 1u64 << (i % 64));
            match seen.get_mut(word) {
                Some(w) if *w & bit == 0 && (i as usize) < entries.len() => *w |= bit,
                _ => {
                    return Err(crate::error::Error::Internal(format!(
                        "the walk's entry {i} is in two directories' groups"
                    )));
                }
            }
        }
        Ok(Disjoint {
            entries: entries.as_mut_ptr(),
            len: entries.len(),
            _borrow: std::marker::PhantomData,
        })
    }

    /// Kid `i` of a group.
    ///
    /// # Safety
    /// The caller holds (`&mut`) a group, among those given to [`Disjoint::new`], that has `i`
    /// among its kids, and holds no other reference to this entry meanwhile.
    #[allow(clippy::mut_from_ref)]
    unsafe fn kid(&self, i: u32) -> &mut WalkEntry {
        debug_assert!((i as usize) < self.len);
        // SAFETY: in range (checked by `new`), and by the caller's contract no other thread
        // or reference reaches this entry.
        unsafe { &mut *self.entries.add(i as usize) }
    }
}

/// One part of [`join_stored`]: the rows from its first group's path (from the workspace's
/// start for the first part, which also takes the stale rows before the root's) up to `hi`
/// (the workspace's end if None) against `groups`. Sets the verdicts of the groups' entries;
/// returns the stale directories.
fn join_part(
    reader: &Reader,
    ws: u64,
    first: bool,
    hi: Option<&[u8]>,
    groups: &mut [Group],
    entries: &Disjoint,
) -> Result<Vec<Vec<u8>>> {
    let mut stale = Vec::new();
    let lo = match groups.first() {
        Some(g) if !first => g.path.clone(),
        _ => Vec::new(),
    };
    let lo = lo.as_slice();
    let range = match hi {
        Some(hi) => reader.stat_cache.range((ws, lo)..(ws, hi))?,
        None => reader.stat_cache.range((ws, lo)..(ws + 1, &[][..]))?,
    };
    let mut at = 0;
    for item in range {
        let (k, v) = item?;
        let dir = k.value().1;
        while at < groups.len() && groups[at].path.as_slice() < dir {
            at += 1;
        }
        match groups.get_mut(at) {
            Some(g) if g.path.as_slice() == dir => {
                if let Some(view) = DirView::parse(v.value()) {
                    join_dir(g, view, Kids::Unjudged(entries));
                }
                at += 1;
            }
            _ => stale.push(dir.to_vec()),
        }
    }
    Ok(stale)
}

/// [`join_stored`] for a cache loaded before the walk (the walk compared the files with it
/// already): sets each group's [`OldDir`], and returns the stale directories when the cache
/// is complete (a narrowed one cannot tell).
pub fn join_loaded(cache: &StatCache, groups: &mut [Group], entries: &[WalkEntry]) -> Vec<Vec<u8>> {
    for g in groups.iter_mut() {
        if let Some(view) = cache.dir(&g.path) {
            join_dir(g, view, Kids::Judged(entries));
        }
    }
    if !cache.is_complete() {
        return Vec::new();
    }
    cache
        .dir_paths()
        .filter(|d| {
            groups
                .binary_search_by(|g| g.path.as_slice().cmp(d))
                .is_err()
        })
        .map(<[u8]>::to_vec)
        .collect()
}

/// How [`join_dir`] reaches a group's entries.
#[derive(Clone, Copy)]
enum Kids<'a, 'e> {
    /// The walk compared them with the cache already: they are only read.
    Judged(&'a [WalkEntry]),
    /// Not compared yet: the join sets their verdicts (only of the group it holds).
    Unjudged(&'a Disjoint<'e>),
}

/// What [`join_dir`] needs of one entry, and where it sets the verdict of one not yet judged.
struct Kid<'a> {
    path: &'a [u8],
    ty: EntryType,
    stat: &'a super::statcache::Stat,
    unjudged: Option<&'a mut Option<(Id, u64)>>,
}

impl Kids<'_, '_> {
    /// Kid `i` of the group [`join_dir`] holds.
    fn kid(&self, i: u32) -> Kid<'_> {
        match *self {
            Kids::Judged(entries) => {
                let e = &entries[i as usize];
                Kid {
                    path: &e.path,
                    ty: e.ty,
                    stat: &e.stat,
                    unjudged: None,
                }
            }
            Kids::Unjudged(shared) => {
                // SAFETY: only `join_dir` asks, for a kid of the group it holds (`&mut`), one
                // of those `join_stored` gave to `Disjoint::new` with these entries: no other
                // thread reaches this entry. Within the group each entry is one kid, taken
                // once per pass, so no two `Kid`s alias either.
                let e = unsafe { shared.kid(i) };
                let WalkEntry {
                    path,
                    ty,
                    stat,
                    cached,
                    ..
                } = e;
                Kid {
                    path,
                    ty: *ty,
                    stat,
                    unjudged: cached.is_none().then_some(cached),
                }
            }
        }
    }
}

/// One directory's row against its group: the [`OldDir`], and (for entries the walk did not
/// compare) the verdict on each file, set where the row vouches for it.
fn join_dir(g: &mut Group, view: DirView, kids: Kids) {
    let mut subdirs = Vec::with_capacity(g.subdirs.len());
    let mut matched_dirs = 0;
    let old_dirs = view.entries().filter(|c| c.kind() == Kind::Dir).count();
    for &i in &g.kids {
        let kid = kids.kid(i);
        let name = name_in(&g.path, kid.path);
        match kid.ty {
            EntryType::Dir => {
                let old = view
                    .get(name)
                    .filter(|c| c.kind() == Kind::Dir)
                    .map(|c| (c.id(), c.subtree()));
                matched_dirs += old.is_some() as usize;
                subdirs.push(old);
            }
            EntryType::File | EntryType::Symlink => {
                if let Some(verdict) = kid.unjudged
                    && let Some(c) = view.get(name).filter(|c| c.vouches_for(kid.stat))
                {
                    *verdict = Some((c.id(), c.size()));
                }
            }
            _ => {}
        }
    }
    let mut gone = Vec::new();
    if old_dirs != matched_dirs {
        let now: HashSet<&[u8]> = g
            .kids
            .iter()
            .map(|&i| kids.kid(i))
            .filter(|kid| kid.ty == EntryType::Dir)
            .map(|kid| name_in(&g.path, kid.path))
            .collect();
        gone = view
            .entries()
            .filter(|c| c.kind() == Kind::Dir && !now.contains(c.name()))
            .map(|c| c.name().to_vec())
            .collect();
    }
    g.old = Some(OldDir {
        tree: view.tree(),
        size: view.size(),
        len: view.len(),
        subdirs,
        gone,
    });
}

/// The name of an entry of directory `dir` (its parent, known: no search for the last '/').
pub fn name_in<'p>(dir: &[u8], path: &'p [u8]) -> &'p [u8] {
    match dir.len() {
        0 => path,
        n => path.get(n + 1..).unwrap_or(path),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::scan::statcache::Stat;

    fn entry(path: &str, ty: EntryType) -> WalkEntry {
        WalkEntry {
            path: path.as_bytes().to_vec(),
            ty,
            stat: Stat::default(),
            cached: None,
            fresh: false,
        }
    }

    /// A grouping as something to compare: per directory, its kids' paths, and each directory
    /// kid with the path of the group it points to (None: taken whole).
    type Shape = Vec<(Vec<u8>, Vec<Vec<u8>>, Vec<(Vec<u8>, Option<Vec<u8>>)>)>;

    fn shape(entries: &[WalkEntry], groups: &[Group]) -> Shape {
        groups
            .iter()
            .map(|g| {
                let mut kids: Vec<Vec<u8>> = g
                    .kids
                    .iter()
                    .map(|&i| entries[i as usize].path.clone())
                    .collect();
                kids.sort();
                let dirs = g
                    .kids
                    .iter()
                    .filter(|&&i| entries[i as usize].ty == EntryType::Dir);
                let mut subs: Vec<_> = dirs
                    .zip(&g.subdirs)
                    .map(|(&i, s)| {
                        let to = s.map(|n| groups[n as usize].path.clone());
                        (entries[i as usize].path.clone(), to)
                    })
                    .collect();
                subs.sort();
                (g.path.clone(), kids, subs)
            })
            .collect()
    }

    /// The join's parallel writes are sound only if no entry is the kid of two groups (or out
    /// of range): `Disjoint` refuses such groups instead of racing.
    #[test]
    fn the_parallel_join_refuses_groups_that_share_an_entry() {
        let mut entries: Vec<WalkEntry> = ["a", "b", "c"]
            .into_iter()
            .map(|p| entry(p, EntryType::File))
            .collect();
        let group = |kids: Vec<u32>| Group {
            kids,
            ..Group::default()
        };
        assert!(Disjoint::new(&mut entries, &[group(vec![0, 2]), group(vec![1])]).is_ok());
        for bad in [
            vec![group(vec![0, 1]), group(vec![1, 2])],
            vec![group(vec![0, 0])],
            vec![group(vec![0, 3])],
        ] {
            assert!(matches!(
                Disjoint::new(&mut entries, &bad),
                Err(crate::error::Error::Internal(_))
            ));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Grouped in two halves and merged, a walk's entries (in any order, split anywhere)
        /// group as they do on one thread: the same directories, sorted, with the same kids,
        /// and every directory kid pointing at its own directory's group.
        #[test]
        fn two_halves_merged_group_as_one(
            files in proptest::collection::vec((0usize..6, 0usize..4, 0u8..3), 0..80),
            order in any::<proptest::sample::Index>(),
            split in any::<proptest::sample::Index>(),
        ) {
            // A tree of directories d0..d5 (d3 inside d1, d4 inside d3, d5 taken whole) with
            // files in them, a fifo here and there.
            let dir_of = |d: usize| match d {
                0 => String::new(),
                3 => "d1/d3".to_string(),
                4 => "d1/d3/d4".to_string(),
                _ => format!("d{d}"),
            };
            let mut entries = vec![
                entry("d1", EntryType::Dir),
                entry("d2", EntryType::Dir),
                entry("d1/d3", EntryType::Dir),
                entry("d1/d3/d4", EntryType::Dir),
                WalkEntry {
                    cached: Some((crate::id::Id([1; 32]), 0)),
                    stat: Subtree::default().as_stat(),
                    ..entry("d5", EntryType::Dir)
                },
            ];
            for (n, (d, f, kind)) in files.iter().enumerate() {
                if *d == 5 {
                    continue;
                }
                let dir = dir_of(*d);
                let name = format!("f{f}-{n}");
                let path = if dir.is_empty() { name } else { format!("{dir}/{name}") };
                let ty = if *kind == 2 { EntryType::Special } else { EntryType::File };
                entries.push(entry(&path, ty));
            }
            // The walk's order is not the tree's: rotate the list.
            let at = order.index(entries.len());
            entries.rotate_left(at);
            let none = HashSet::new();
            let one = group_split(&entries, &none, None);
            let two = group_split(&entries, &none, Some(split.index(entries.len() + 1)));
            prop_assert_eq!(shape(&entries, &one), shape(&entries, &two));
            for g in &two {
                for (&i, s) in g
                    .kids
                    .iter()
                    .filter(|&&i| entries[i as usize].ty == EntryType::Dir)
                    .zip(&g.subdirs)
                {
                    if let Some(n) = s {
                        prop_assert_eq!(&two[*n as usize].path, &entries[i as usize].path);
                    }
                }
            }
        }
    }
}
