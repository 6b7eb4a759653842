//! What the watch daemon says changed since a stat cache's token: the directories a walk must
//! not trust. Everything else the daemon watched is unchanged, so a walk can trust it and,
//! where a whole subtree is untouched, leave it unread (see `StatCache::load_narrowed`).
//!
//! The answer names what changed rather than what did not, so that it, the client's parsing and
//! the walk are O(changes) instead of O(watched directories). That inversion is only right
//! when every directory the walk enters is one the daemon watches or names: the daemon names
//! the directories it could not watch, and the client checks that the daemon's ignore globs
//! leave out no more than the snapshot's (`daemon_link::Narrowing::Changed`).

use rustc_hash::FxHashSet;

use crate::files::split_parent;

/// The directories and entries a walk must not trust.
#[derive(Clone, Debug, Default)]
pub struct Untrusted {
    /// Directories none of whose entries can be trusted.
    dirs: FxHashSet<Vec<u8>>,
    /// Entries (relative paths) that may have changed: inotify names the entry of every change
    /// in a directory, so the other entries of their directories are unchanged.
    names: FxHashSet<Vec<u8>>,
    /// Subtrees in which nothing can be trusted (a directory created, moved or deleted there,
    /// or one the daemon could not watch).
    trees: FxHashSet<Vec<u8>>,
    /// Every directory at or above one of `dirs` or `trees`, or holding one of `names`.
    on_path: FxHashSet<Vec<u8>>,
}

impl Untrusted {
    /// From the untrusted directories, entries and subtrees.
    pub fn new(
        dirs: impl IntoIterator<Item = Vec<u8>>,
        names: impl IntoIterator<Item = Vec<u8>>,
        trees: impl IntoIterator<Item = Vec<u8>>,
    ) -> Untrusted {
        let mut u = Untrusted {
            dirs: dirs.into_iter().collect(),
            names: names.into_iter().collect(),
            trees: trees.into_iter().collect(),
            on_path: FxHashSet::default(),
        };
        let parents = u.names.iter().map(|n| split_parent(n).0);
        for p in u
            .dirs
            .iter()
            .chain(u.trees.iter())
            .map(Vec::as_slice)
            .chain(parents)
        {
            let mut d = p;
            while u.on_path.insert(d.to_vec()) && !d.is_empty() {
                d = split_parent(d).0;
            }
        }
        u
    }

    /// Adds a directory that must not be trusted.
    pub fn add_dir(&mut self, dir: Vec<u8>) {
        let mut d = dir.as_slice();
        while self.on_path.insert(d.to_vec()) && !d.is_empty() {
            d = split_parent(d).0;
        }
        self.dirs.insert(dir);
    }

    /// How many directories, entries and subtrees are named.
    pub fn len(&self) -> usize {
        self.dirs.len() + self.names.len() + self.trees.len()
    }

    /// Whether nothing is named (nothing changed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `dir` or a directory above it is an untrusted subtree.
    fn covered(&self, dir: &[u8]) -> bool {
        if self.trees.is_empty() {
            return false;
        }
        let mut d = dir;
        loop {
            if self.trees.contains(d) {
                return true;
            }
            if d.is_empty() {
                return false;
            }
            d = split_parent(d).0;
        }
    }

    /// Whether the entries of `dir` are unchanged since the token, except those
    /// [`Untrusted::trusts_entry`] refuses.
    pub fn trusts(&self, dir: &[u8]) -> bool {
        !self.dirs.contains(dir) && !self.covered(dir)
    }

    /// In a directory it [trusts](Untrusted::trusts): whether the entry at `path` is unchanged.
    pub fn trusts_entry(&self, path: &[u8]) -> bool {
        self.names.is_empty() || !self.names.contains(path)
    }

    /// Whether nothing at or below `dir` changed since the token.
    pub fn untouched_below(&self, dir: &[u8]) -> bool {
        !self.on_path.contains(dir) && !self.covered(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_follows_dirs_and_trees() {
        let v = |s: &str| s.as_bytes().to_vec();
        let mut u = Untrusted::new([v("a/b")], [v("g/h/f.txt")], [v("c/d")]);
        u.add_dir(v("e"));
        assert!(!u.trusts(b"a/b") && u.trusts(b"a") && u.trusts(b"a/b/x"));
        assert!(u.trusts(b"g/h") && !u.trusts_entry(b"g/h/f.txt") && u.trusts_entry(b"g/h/e"));
        assert!(!u.untouched_below(b"g/h") && !u.untouched_below(b"g"));
        assert!(u.untouched_below(b"g/h/f.txt") && u.untouched_below(b"g/i"));
        assert!(!u.trusts(b"c/d") && !u.trusts(b"c/d/x") && u.trusts(b"c"));
        assert!(!u.untouched_below(b"") && !u.untouched_below(b"a"));
        assert!(!u.untouched_below(b"c/d/x") && !u.untouched_below(b"e"));
        assert!(u.untouched_below(b"a/b/x") && u.untouched_below(b"f"));
        assert!(u.untouched_below(b"a/bc"));
        assert_eq!(u.len(), 4);
    }
}
