//! The one line diff: `rewind diff`'s hunks and counts ([`crate::diff::text`]) and the
//! three-way merge ([`super::merge`]) both run it, shaped to align changes the way git does,
//! because where an ambiguous change is placed decides both what a rendered hunk looks like
//! and whether two sides' changes touch (conflict) or not (clean).
//!
//! The steps follow what git's xdiff does with its default (Myers) diff;
//! the code is our own, written from the published algorithm and from
//! git's observable behaviour:
//! * common leading and trailing lines are matched first;
//! * in the rest, a line that occurs nowhere in the *whole* other file is
//!   marked changed before the search runs; a line that occurs there very
//!   often (at least about the square root of its own file's length) is
//!   also marked changed when it sits inside a run of such unmatched or
//!   frequent lines that is mostly unmatched ones. Counting over the whole
//!   other file matters: a line that only matches outside the changed
//!   middle still takes part in the search and steers it, as in git;
//! * the remaining lines are diffed with Myers' linear-space
//!   divide-and-conquer search (the "middle snake" of his 1986 paper),
//!   scanning diagonals in the order git does, which decides which of
//!   several equally long common subsequences is chosen;
//! * every run of changed lines is then slid as far down as equal lines
//!   allow, unless on the way it lined up with a change in the other file,
//!   in which case it stays at the last such place (git's rule too).
//!
//! Like git, a search that needs more than a few hundred edit steps in one
//! stretch gives up and splits at the furthest point reached; the result is
//! then not minimal, and git's other shortcuts for such inputs are not
//! reproduced, so for large, very different files the alignment may differ.
//! git's indent heuristic (which only moves where a change is shown, never how
//! many lines change) is not reproduced either.

use std::ops::Range;
use std::time::Instant;

use rustc_hash::FxHashMap;

/// One changed stretch: `base` lines replaced by `side` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub base: Range<usize>,
    pub side: Range<usize>,
}

/// The edits turning `a` into `b`, in order.
pub(crate) fn diff_lines(a: &[&[u8]], b: &[&[u8]]) -> Vec<Edit> {
    match changed_lines(a, b, None) {
        Some((ca, cb)) => edits_from_flags(&ca, &cb),
        None => unreachable!("no deadline, so the search always finishes"),
    }
}

/// Which lines of `a` and of `b` are changed (removed from `a`, added in `b`); `None` when
/// `deadline` passed before the search finished.
pub(crate) fn changed_lines(
    a: &[&[u8]],
    b: &[&[u8]],
    deadline: Option<Instant>,
) -> Option<(Vec<bool>, Vec<bool>)> {
    // Number the distinct lines and count them per file. FxHash, not SipHash: no untrusted
    // party picks the keys to collide, and hashing every line was most of a blame's time.
    let mut ids: FxHashMap<&[u8], usize> =
        FxHashMap::with_capacity_and_hasher(a.len().max(b.len()), Default::default());
    let ha = number_lines(a, &mut ids);
    let hb = number_lines(b, &mut ids);
    let mut count_a = vec![0usize; ids.len()];
    let mut count_b = vec![0usize; ids.len()];
    for &h in &ha {
        count_a[h] += 1;
    }
    for &h in &hb {
        count_b[h] += 1;
    }

    let mut ca = vec![false; a.len()];
    let mut cb = vec![false; b.len()];
    let prefix = ha.iter().zip(&hb).take_while(|(x, y)| x == y).count();
    let suffix = ha[prefix..]
        .iter()
        .rev()
        .zip(hb[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (prefix..a.len() - suffix, prefix..b.len() - suffix);
    let keep_a = searched_lines(&ha, ma, &count_b, &mut ca);
    let keep_b = searched_lines(&hb, mb, &count_a, &mut cb);
    let sa: Vec<usize> = keep_a.iter().map(|&i| ha[i]).collect();
    let sb: Vec<usize> = keep_b.iter().map(|&j| hb[j]).collect();
    let mut da = vec![false; sa.len()];
    let mut db = vec![false; sb.len()];
    let mut myers = Myers::new(&sa, &sb, deadline);
    myers.compare(0..sa.len(), 0..sb.len(), &mut da, &mut db);
    if myers.expired || deadline.is_some_and(|d| Instant::now() > d) {
        return None;
    }
    for (k, &i) in keep_a.iter().enumerate() {
        ca[i] = da[k];
    }
    for (k, &j) in keep_b.iter().enumerate() {
        cb[j] = db[k];
    }
    compact(a, &mut ca, &cb);
    compact(b, &mut cb, &ca);
    Some((ca, cb))
}

/// Gives each distinct line an id, shared through `ids`.
fn number_lines<'a>(lines: &[&'a [u8]], ids: &mut FxHashMap<&'a [u8], usize>) -> Vec<usize> {
    lines
        .iter()
        .map(|&l| {
            let n = ids.len();
            *ids.entry(l).or_insert(n)
        })
        .collect()
}

/// How a middle line of one file relates to the other file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Occurs {
    Nowhere,
    Some,
    Often,
}

/// Marks the lines of `middle` that the search should not consider as
/// changed (in `changed`) and returns the indices of the others.
fn searched_lines(
    h: &[usize],
    middle: Range<usize>,
    other_count: &[usize],
    changed: &mut [bool],
) -> Vec<usize> {
    let often = isqrt_ish(h.len()).min(1024);
    let occurs: Vec<Occurs> = middle
        .clone()
        .map(|i| match other_count[h[i]] {
            0 => Occurs::Nowhere,
            n if n >= often => Occurs::Often,
            _ => Occurs::Some,
        })
        .collect();
    let mut keep = Vec::new();
    for (k, i) in middle.enumerate() {
        let drop = match occurs[k] {
            Occurs::Nowhere => true,
            Occurs::Some => false,
            Occurs::Often => buried_in_unmatched(&occurs, k),
        };
        if drop {
            changed[i] = true;
        } else {
            keep.push(i);
        }
    }
    keep
}

/// A power of two near the square root of `n` (at least 1): doubles once
/// for every two bits of `n`.
fn isqrt_ish(mut n: usize) -> usize {
    let mut r = 1;
    while n > 0 {
        r <<= 1;
        n >>= 2;
    }
    r
}

/// Whether a frequently occurring line at `k` sits among lines that are
/// mostly not in the other file at all: the runs of unmatched-or-frequent
/// lines on both sides (looking at most 100 lines each way) must each
/// contain an unmatched line, and the frequent ones (this line included)
/// must be under a quarter of the whole stretch.
fn buried_in_unmatched(occurs: &[Occurs], k: usize) -> bool {
    const WINDOW: usize = 100;
    let run = |it: &mut dyn Iterator<Item = &Occurs>| {
        let (mut nowhere, mut often) = (0usize, 0usize);
        for o in it.take(WINDOW) {
            match o {
                Occurs::Nowhere => nowhere += 1,
                Occurs::Often => often += 1,
                Occurs::Some => break,
            }
        }
        (nowhere, often)
    };
    let (before_nowhere, before_often) = run(&mut occurs[..k].iter().rev());
    if before_nowhere == 0 {
        return false;
    }
    let (after_nowhere, after_often) = run(&mut occurs[k + 1..].iter());
    if after_nowhere == 0 {
        return false;
    }
    let often = before_often + after_often + 2;
    let nowhere = before_nowhere + after_nowhere;
    often * 4 < often + nowhere
}

/// Myers' divide-and-conquer diff over line ids. Diagonal `k` holds the
/// points with `x - y == k`; the furthest-reaching x per diagonal is kept
/// for the forward (from the top left) and backward (from the bottom
/// right) searches.
struct Myers<'a> {
    a: &'a [usize],
    b: &'a [usize],
    fwd: Vec<isize>,
    bwd: Vec<isize>,
    /// Index of diagonal 0 in `fwd` / `bwd`.
    zero: isize,
    /// Edit steps after which a search gives up and settles for the
    /// furthest point reached (keeps huge, very different inputs fast).
    max_cost: usize,
    /// When to stop searching altogether (the caller then shows a whole-file replacement).
    deadline: Option<Instant>,
    /// The deadline passed: the marks are incomplete.
    expired: bool,
}

impl<'a> Myers<'a> {
    fn new(a: &'a [usize], b: &'a [usize], deadline: Option<Instant>) -> Self {
        let size = a.len() + b.len() + 3;
        Myers {
            a,
            b,
            fwd: vec![0; size],
            bwd: vec![0; size],
            zero: b.len() as isize + 1,
            max_cost: isqrt_ish(size).max(256),
            deadline,
            expired: false,
        }
    }

    /// Marks the changed lines of `a[xr]` / `b[yr]` in `da` / `db`.
    fn compare(
        &mut self,
        mut xr: Range<usize>,
        mut yr: Range<usize>,
        da: &mut [bool],
        db: &mut [bool],
    ) {
        if self.expired {
            return;
        }
        while xr.start < xr.end && yr.start < yr.end && self.a[xr.start] == self.b[yr.start] {
            xr.start += 1;
            yr.start += 1;
        }
        while xr.start < xr.end && yr.start < yr.end && self.a[xr.end - 1] == self.b[yr.end - 1] {
            xr.end -= 1;
            yr.end -= 1;
        }
        if xr.is_empty() {
            db[yr].fill(true);
        } else if yr.is_empty() {
            da[xr].fill(true);
        } else {
            let (x, y) = self.middle(&xr, &yr);
            self.compare(xr.start..x, yr.start..y, da, db);
            self.compare(x..xr.end, y..yr.end, da, db);
        }
    }

    /// A point on an optimal path through the box, found where the forward
    /// and backward searches first meet. The box's first lines differ and
    /// so do its last lines, and neither side is empty.
    fn middle(&mut self, xr: &Range<usize>, yr: &Range<usize>) -> (usize, usize) {
        let (x0, x1) = (xr.start as isize, xr.end as isize);
        let (y0, y1) = (yr.start as isize, yr.end as isize);
        let (kmin, kmax) = (x0 - y1, x1 - y0);
        let (fmid, bmid) = (x0 - y0, x1 - y1);
        let odd = (fmid - bmid) & 1 == 1;
        let z = self.zero;
        let at = |k: isize| (k + z) as usize;
        self.fwd[at(fmid)] = x0;
        self.bwd[at(bmid)] = x1;
        // Diagonals reached so far by each search, clipped to the box.
        let (mut f_lo, mut f_hi) = (fmid, fmid);
        let (mut b_lo, mut b_hi) = (bmid, bmid);
        for cost in 1.. {
            // Checked every 64 steps: a clock read per step would show in long searches.
            if cost % 64 == 0 && self.deadline.is_some_and(|d| Instant::now() > d) {
                self.expired = true;
                return (xr.start, yr.start);
            }
            // Forward step: one more edit from the top left.
            let (prev_lo, prev_hi) = (f_lo, f_hi);
            f_lo = if f_lo > kmin { f_lo - 1 } else { f_lo + 1 };
            f_hi = if f_hi < kmax { f_hi + 1 } else { f_hi - 1 };
            let mut k = f_hi;
            while k >= f_lo {
                let from_del = (k > prev_lo).then(|| self.fwd[at(k - 1)] + 1);
                let from_ins = (k < prev_hi).then(|| self.fwd[at(k + 1)]);
                let mut x = match (from_del, from_ins) {
                    (Some(d), Some(i)) => d.max(i),
                    (Some(d), None) => d,
                    (None, Some(i)) => i,
                    (None, None) => unreachable!("diagonal without a predecessor"),
                };
                let mut y = x - k;
                while x < x1 && y < y1 && self.a[x as usize] == self.b[y as usize] {
                    x += 1;
                    y += 1;
                }
                self.fwd[at(k)] = x;
                if odd && b_lo <= k && k <= b_hi && self.bwd[at(k)] <= x {
                    return (x as usize, y as usize);
                }
                k -= 2;
            }
            // Backward step: one more edit from the bottom right.
            let (prev_lo, prev_hi) = (b_lo, b_hi);
            b_lo = if b_lo > kmin { b_lo - 1 } else { b_lo + 1 };
            b_hi = if b_hi < kmax { b_hi + 1 } else { b_hi - 1 };
            let mut k = b_hi;
            while k >= b_lo {
                let from_ins = (k > prev_lo).then(|| self.bwd[at(k - 1)]);
                let from_del = (k < prev_hi).then(|| self.bwd[at(k + 1)] - 1);
                let mut x = match (from_ins, from_del) {
                    (Some(i), Some(d)) => i.min(d),
                    (Some(i), None) => i,
                    (None, Some(d)) => d,
                    (None, None) => unreachable!("diagonal without a predecessor"),
                };
                let mut y = x - k;
                while x > x0 && y > y0 && self.a[x as usize - 1] == self.b[y as usize - 1] {
                    x -= 1;
                    y -= 1;
                }
                self.bwd[at(k)] = x;
                if !odd && f_lo <= k && k <= f_hi && x <= self.fwd[at(k)] {
                    return (x as usize, y as usize);
                }
                k -= 2;
            }
            if cost >= self.max_cost {
                // Too costly: split at the point, clamped into the box,
                // of whichever search got further from its corner.
                let (mut fwd_best, mut fwd_x) = (-1, x0);
                for k in (f_lo..=f_hi).rev().step_by(2) {
                    let x = self.fwd[at(k)].min(x1);
                    let (x, y) = if x - k > y1 { (y1 + k, y1) } else { (x, x - k) };
                    if x + y > fwd_best {
                        (fwd_best, fwd_x) = (x + y, x);
                    }
                }
                let (mut bwd_best, mut bwd_x) = (isize::MAX, x1);
                for k in (b_lo..=b_hi).rev().step_by(2) {
                    let x = self.bwd[at(k)].max(x0);
                    let (x, y) = if x - k < y0 { (y0 + k, y0) } else { (x, x - k) };
                    if x + y < bwd_best {
                        (bwd_best, bwd_x) = (x + y, x);
                    }
                }
                let (x, sum) = if (x1 + y1) - bwd_best < fwd_best - (x0 + y0) {
                    (fwd_x, fwd_best)
                } else {
                    (bwd_x, bwd_best)
                };
                return (x as usize, (sum - x) as usize);
            }
        }
        unreachable!("the searches always meet")
    }
}

/// Walks both change maps in step (unchanged lines pair up in order).
pub(crate) fn edits_from_flags(ca: &[bool], cb: &[bool]) -> Vec<Edit> {
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

/// For the other file's change map `cy`: entry `u` says whether it has changed lines right
/// after its `u`-th unchanged line (before the next one), i.e. at the place matching a
/// boundary of this file preceded by `u` unchanged lines. Computed once per [`compact`] so
/// that each alignment check is a lookup, not a walk over both files.
fn changes_after_unchanged(cy: &[bool]) -> Vec<bool> {
    let mut out = vec![false];
    for &changed in cy {
        if changed {
            *out.last_mut().expect("never empty") = true;
        } else {
            out.push(false);
        }
    }
    out
}

/// Slides each run of changed lines in `x` (map `cx`) down as far as equal
/// lines allow, merging runs that meet, but keeps it aligned with the
/// other file's (`cy`) changes when it passed such a place.
fn compact(x: &[&[u8]], cx: &mut [bool], cy: &[bool]) {
    let other = changes_after_unchanged(cy);
    let other_changed_at = |unchanged: usize| other.get(unchanged).copied().unwrap_or(false);
    let n = x.len();
    let mut start = 0;
    // Unchanged lines in cx[..start], kept up to date as runs slide.
    let mut unchanged = 0;
    while start < n {
        if !cx[start] {
            start += 1;
            unchanged += 1;
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
                unchanged -= 1;
                while start > 0 && cx[start - 1] {
                    start -= 1;
                }
            }
            earliest_end = end;
            aligned_end = other_changed_at(unchanged).then_some(end);
            while end < n && x[start] == x[end] {
                cx[start] = false;
                cx[end] = true;
                start += 1;
                end += 1;
                unchanged += 1;
                while end < n && cx[end] {
                    end += 1;
                }
                if other_changed_at(unchanged) {
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
                unchanged -= 1;
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

    /// A line found only in the unchanged part of the other file still
    /// takes part in the search (git counts over whole files): here theirs'
    /// "b" matches base line 0, so the middle "b c c" vs "c a" is searched
    /// and, as in git, the second "c" is kept.
    #[test]
    fn whole_file_counts_decide_what_is_searched() {
        let e = diff_lines(&lines("b\nd\na\nb\nc\nc\na"), &lines("b\nd\na\nc\na\n"));
        assert_eq!(
            e,
            vec![
                Edit {
                    base: 3..5,
                    side: 3..3
                },
                Edit {
                    base: 6..7,
                    side: 4..5
                }
            ]
        );
    }

    /// A line that is frequent in the other file but stands among lines
    /// found nowhere there is not matched (`git diff` shows one block).
    #[test]
    fn frequent_line_among_unmatched_ones_is_not_matched() {
        let xs = "x\n".repeat(10);
        let base = format!("{xs}m\nx\nn\n{xs}");
        let side = format!("{xs}A\nB\nC\nD\nx\nE\nF\nG\nH\n{xs}");
        let e = diff_lines(&lines(&base), &lines(&side));
        assert_eq!(
            e,
            vec![Edit {
                base: 10..13,
                side: 10..19
            }]
        );
    }
}
