//! Line diff for the three-way merge, shaped to align changes the way git
//! does, because where an ambiguous change is placed decides whether two
//! sides' changes touch (conflict) or not (clean).
//!
//! The longest-common-subsequence search is similar's Hunt diff (of its
//! algorithms it agrees with git's verdicts most often: ~0.15% disagreement
//! on adversarial small-alphabet triples, against ~0.5% for its Myers; its
//! plain LCS table does slightly better but needs O(N*M) memory). Around it:
//! * common leading and trailing lines are matched first, and lines that do
//!   not occur at all in the other side's middle are marked changed before
//!   the LCS search runs, so they cannot steer its choice of matches;
//! * every run of changed lines is then slid as far down as equal lines
//!   allow, unless on the way it lined up with a change in the other file,
//!   in which case it stays at the last such place (git's rule too).

use std::collections::HashSet;
use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// One changed stretch: `base` lines replaced by `side` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub base: Range<usize>,
    pub side: Range<usize>,
}

/// The edits turning `a` into `b`, in order.
pub(crate) fn diff_lines(a: &[&[u8]], b: &[&[u8]]) -> Vec<Edit> {
    let mut ca = vec![false; a.len()];
    let mut cb = vec![false; b.len()];
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (prefix..a.len() - suffix, prefix..b.len() - suffix);
    let in_a: HashSet<&[u8]> = a[ma.clone()].iter().copied().collect();
    let in_b: HashSet<&[u8]> = b[mb.clone()].iter().copied().collect();
    let keep_a: Vec<usize> = ma.clone().filter(|&i| in_b.contains(a[i])).collect();
    let keep_b: Vec<usize> = mb.clone().filter(|&j| in_a.contains(b[j])).collect();
    for i in ma {
        ca[i] = !in_b.contains(a[i]);
    }
    for j in mb {
        cb[j] = !in_a.contains(b[j]);
    }
    let sa: Vec<&[u8]> = keep_a.iter().map(|&i| a[i]).collect();
    let sb: Vec<&[u8]> = keep_b.iter().map(|&j| b[j]).collect();
    for op in capture_diff_slices(Algorithm::Hunt, &sa, &sb) {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for &i in &keep_a[old_index..old_index + old_len] {
                    ca[i] = true;
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for &j in &keep_b[new_index..new_index + new_len] {
                    cb[j] = true;
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for &i in &keep_a[old_index..old_index + old_len] {
                    ca[i] = true;
                }
                for &j in &keep_b[new_index..new_index + new_len] {
                    cb[j] = true;
                }
            }
        }
    }
    compact(a, &mut ca, &cb);
    compact(b, &mut cb, &ca);
    edits_from_flags(&ca, &cb)
}

/// Walks both change maps in step (unchanged lines pair up in order).
fn edits_from_flags(ca: &[bool], cb: &[bool]) -> Vec<Edit> {
    let (mut i, mut j) = (0, 0);
    let mut edits = Vec::new();
    while i < ca.len() || j < cb.len() {
        let (si, sj) = (i, j);
        while i < ca.len() && ca[i] {
            i += 1;
        }
        while j < cb.len() && cb[j] {
            j += 1;
        }
        if si != i || sj != j {
            edits.push(Edit {
                base: si..i,
                side: sj..j,
            });
        } else {
            i += 1;
            j += 1;
        }
    }
    edits
}

/// Whether the other file has changed lines at the place matching the
/// boundary `start` of file x (after the same number of unchanged lines).
fn other_changed_at(cx: &[bool], cy: &[bool], start: usize) -> bool {
    let mut unchanged = cx[..start].iter().filter(|&&c| !c).count();
    let mut j = 0;
    while j < cy.len() {
        if !cy[j] {
            if unchanged == 0 {
                return false;
            }
            unchanged -= 1;
        } else if unchanged == 0 {
            return true;
        }
        j += 1;
    }
    false
}

/// Slides each run of changed lines in `x` (map `cx`) down as far as equal
/// lines allow, merging runs that meet, but keeps it aligned with the
/// other file's (`cy`) changes when it passed such a place.
fn compact(x: &[&[u8]], cx: &mut [bool], cy: &[bool]) {
    let n = x.len();
    let mut start = 0;
    while start < n {
        if !cx[start] {
            start += 1;
            continue;
        }
        let mut end = start;
        while end < n && cx[end] {
            end += 1;
        }
        let (mut earliest_end, mut aligned_end);
        loop {
            let size = end - start;
            while start > 0 && !cx[start - 1] && x[start - 1] == x[end - 1] {
                start -= 1;
                end -= 1;
                cx[start] = true;
                cx[end] = false;
                while start > 0 && cx[start - 1] {
                    start -= 1;
                }
            }
            earliest_end = end;
            aligned_end = other_changed_at(cx, cy, start).then_some(end);
            while end < n && x[start] == x[end] {
                cx[start] = false;
                cx[end] = true;
                start += 1;
                end += 1;
                while end < n && cx[end] {
                    end += 1;
                }
                if other_changed_at(cx, cy, start) {
                    aligned_end = Some(end);
                }
            }
            if size == end - start {
                break;
            }
        }
        if end != earliest_end
            && let Some(target) = aligned_end
        {
            while end > target {
                start -= 1;
                end -= 1;
                cx[start] = true;
                cx[end] = false;
            }
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&[u8]> {
        s.as_bytes().split_inclusive(|&b| b == b'\n').collect()
    }

    #[test]
    fn replacement_is_aligned_like_git() {
        let e = diff_lines(&lines("0\n1\n2\n3\n"), &lines("1\n1\n2\n3\n"));
        assert_eq!(
            e,
            vec![Edit {
                base: 0..1,
                side: 0..1
            }]
        );
    }

    #[test]
    fn insertion_slides_down() {
        let e = diff_lines(&lines("a\nb\nb\nc\n"), &lines("a\nb\nb\nb\nc\n"));
        assert_eq!(
            e,
            vec![Edit {
                base: 3..3,
                side: 3..4
            }]
        );
    }
}
