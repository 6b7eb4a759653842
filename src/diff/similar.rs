//! Renames by similarity, as git finds them (`-M`): a deleted file and an added file whose
//! contents share at least the threshold (50% by default) are one file moved and edited.
//!
//! The score is git's idea of it on whole lines: the bytes of the lines both versions hold
//! (each line counted as often as both have it) over the larger version's size. Only the
//! changes exact renames left unpaired are compared, only files with files (never symlinks
//! or empty files), and not at all when there are more than [`RENAME_LIMIT`]² pairs, as
//! git's `diff.renameLimit` gives up: the cost stays bounded by what changed.

use rustc_hash::FxHashMap;

use super::tree::{ChangeStatus, FileChange};
use crate::error::Result;
use crate::store::tree::Kind;

/// git's default minimum similarity for a rename, in percent.
pub const DEFAULT_RENAME_SCORE: u8 = 50;

/// Above this many additions times this many deletions, similar renames are not looked for
/// (git's default `diff.renameLimit`).
pub const RENAME_LIMIT: usize = 1000;

/// A version's lines, counted, with its size.
struct Lines<'a> {
    counts: FxHashMap<&'a [u8], u32>,
    size: usize,
}

impl<'a> Lines<'a> {
    fn of(bytes: &'a [u8]) -> Lines<'a> {
        let mut counts: FxHashMap<&[u8], u32> = FxHashMap::default();
        for l in bytes.split_inclusive(|&b| b == b'\n') {
            *counts.entry(l).or_default() += 1;
        }
        Lines {
            counts,
            size: bytes.len(),
        }
    }

    /// The score against `other` in percent (0 when both are empty).
    fn score(&self, other: &Lines<'_>) -> u8 {
        let max = self.size.max(other.size);
        if max == 0 {
            return 0;
        }
        let (small, large) = if self.counts.len() <= other.counts.len() {
            (self, other)
        } else {
            (other, self)
        };
        let common: usize = small
            .counts
            .iter()
            .filter_map(|(l, &n)| large.counts.get(l).map(|&m| n.min(m) as usize * l.len()))
            .sum();
        (common * 100 / max) as u8
    }
}

/// The similarity of two contents in percent, as a rename's `similarity index` shows it.
pub fn similarity(old: &[u8], new: &[u8]) -> u8 {
    if old == new {
        return 100;
    }
    Lines::of(old).score(&Lines::of(new)).min(99)
}

/// Whether a size difference alone keeps two versions below `min` percent (git's quick
/// rejection before reading lines).
fn too_different(a: u64, b: u64, min: u8) -> bool {
    let (max, delta) = (a.max(b), a.abs_diff(b));
    max * u64::from(100 - min) < delta * 100
}

/// Turns pairs of a deleted and an added file of `changes` whose contents score at least
/// `min` percent into renames (the best scores first; on a tie, the same file name, then the
/// first paths). `content(change, old_side)` reads a side. Nothing happens with `min` over 99
/// or more than [`RENAME_LIMIT`]² candidate pairs.
pub fn pair_similar(
    changes: &mut Vec<FileChange>,
    min: u8,
    content: &dyn Fn(&FileChange, bool) -> Result<Vec<u8>>,
) -> Result<()> {
    if min > 99 {
        return Ok(());
    }
    let is_file = |k: Kind| matches!(k, Kind::File | Kind::Executable);
    let deleted: Vec<usize> = (0..changes.len())
        .filter(|&i| {
            let c = &changes[i];
            c.status == ChangeStatus::Deleted
                && c.old.is_some_and(|o| is_file(o.kind) && o.size > 0)
        })
        .collect();
    let added: Vec<usize> = (0..changes.len())
        .filter(|&i| {
            let c = &changes[i];
            c.status == ChangeStatus::Added && c.new.is_some_and(|n| is_file(n.kind) && n.size > 0)
        })
        .collect();
    if deleted.is_empty()
        || added.is_empty()
        || deleted.len() * added.len() > RENAME_LIMIT * RENAME_LIMIT
    {
        return Ok(());
    }
    let size = |i: usize, old: bool| {
        let c = &changes[i];
        let s = if old { c.old } else { c.new };
        s.map_or(0, |s| s.size)
    };
    // Read only files some counterpart could reach by size.
    let wanted_del: Vec<usize> = deleted
        .iter()
        .copied()
        .filter(|&d| {
            added
                .iter()
                .any(|&a| !too_different(size(d, true), size(a, false), min))
        })
        .collect();
    if wanted_del.is_empty() {
        return Ok(());
    }
    let wanted_add: Vec<usize> = added
        .iter()
        .copied()
        .filter(|&a| {
            wanted_del
                .iter()
                .any(|&d| !too_different(size(d, true), size(a, false), min))
        })
        .collect();
    let old_bytes: Vec<Vec<u8>> = wanted_del
        .iter()
        .map(|&d| content(&changes[d], true))
        .collect::<Result<_>>()?;
    let new_bytes: Vec<Vec<u8>> = wanted_add
        .iter()
        .map(|&a| content(&changes[a], false))
        .collect::<Result<_>>()?;
    let old_lines: Vec<Lines> = old_bytes.iter().map(|b| Lines::of(b)).collect();
    let new_lines: Vec<Lines> = new_bytes.iter().map(|b| Lines::of(b)).collect();
    // (score, same name, deleted index, added index)
    let mut cands: Vec<(u8, bool, usize, usize)> = Vec::new();
    for (x, &d) in wanted_del.iter().enumerate() {
        for (y, &a) in wanted_add.iter().enumerate() {
            if too_different(size(d, true), size(a, false), min) {
                continue;
            }
            let score = old_lines[x].score(&new_lines[y]);
            if score >= min {
                let same = crate::files::split_parent(&changes[d].path).1
                    == crate::files::split_parent(&changes[a].path).1;
                cands.push((score, same, d, a));
            }
        }
    }
    cands.sort_by(|p, q| {
        q.0.cmp(&p.0)
            .then(q.1.cmp(&p.1))
            .then(p.2.cmp(&q.2))
            .then(p.3.cmp(&q.3))
    });
    let mut paired = vec![false; changes.len()];
    let mut gone = vec![false; changes.len()];
    for (_, _, d, a) in cands {
        if paired[d] || paired[a] {
            continue;
        }
        paired[d] = true;
        paired[a] = true;
        gone[d] = true;
        let old_path = changes[d].path.clone();
        let old = changes[d].old;
        let c = &mut changes[a];
        c.old_path = Some(old_path);
        c.old = old;
        c.status = ChangeStatus::Renamed;
    }
    let mut i = 0;
    changes.retain(|_| {
        let keep = !gone[i];
        i += 1;
        keep
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_count_common_lines_over_the_larger_side() {
        assert_eq!(similarity(b"a\nb\n", b"a\nb\n"), 100);
        // 4 of 8 bytes shared.
        assert_eq!(similarity(b"a\nb\nc\nd\n", b"a\nb\n"), 50);
        assert_eq!(similarity(b"a\nb\nc\nd\n", b"x\ny\nc\nd\n"), 50);
        assert_eq!(similarity(b"one\n", b"two\n"), 0);
        // Never 100 for different contents.
        assert!(similarity(b"a\nb\n", b"a\nb") < 100);
        assert!(too_different(100, 40, 50));
        assert!(!too_different(100, 60, 50));
    }
}
