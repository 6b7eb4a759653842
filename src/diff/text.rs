//! Line splitting, binary detection and the line diff.
//!
//! The diff reproduces git's xdiff pipeline closely enough that insertion
//! and deletion counts equal `git diff --numstat`: common prefix/suffix
//! trimming, xdiff's discarding of lines with no (or too many) matches on
//! the other side, then a minimal Myers diff (via `similar`) on what is left,
//! and finally git's downward sliding of change groups. git only leaves the
//! minimal diff for edit costs above 256 lines, where its heuristics kick in;
//! counts for such large rewrites can differ.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

/// How many leading bytes git inspects for a NUL to call content binary.
pub const BINARY_PEEK_LEN: usize = 8000;

/// git's binary heuristic: a NUL byte within the first 8000 bytes.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_PEEK_LEN)].contains(&0)
}

/// Splits on `\n`, keeping the terminator with each line. CR bytes and a
/// missing final newline are preserved, never normalised, so that a line
/// `"x\r\n"` differs from `"x\n"` and a final `"x"` differs from `"x\n"`,
/// exactly as in git.
pub fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// Options for [`line_diff`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    /// Context lines around each change (`-U N`); git's default is 3.
    pub context: usize,
    /// Time allowed for the diff algorithm before giving up and rendering a
    /// whole-file replacement. `None` waits forever.
    pub timeout: Option<Duration>,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            context: 3,
            timeout: Some(Duration::from_secs(5)),
        }
    }
}

/// The role of one line inside a hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineTag {
    /// Unchanged; the index refers to the old lines.
    Context,
    /// Removed; the index refers to the old lines.
    Delete,
    /// Added; the index refers to the new lines.
    Insert,
}

/// One `@@` block. Starts are 0-based line indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// First old line covered (0-based).
    pub old_start: usize,
    /// Number of old lines covered (context + deleted).
    pub old_len: usize,
    /// First new line covered (0-based).
    pub new_start: usize,
    /// Number of new lines covered (context + inserted).
    pub new_len: usize,
    /// The lines in output order, each indexing old or new lines per tag.
    pub lines: Vec<(LineTag, usize)>,
}

/// Result of [`line_diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineDiff<'a> {
    /// Old content split by [`split_lines`].
    pub old_lines: Vec<&'a [u8]>,
    /// New content split by [`split_lines`].
    pub new_lines: Vec<&'a [u8]>,
    /// Added lines (git numstat's first column).
    pub insertions: usize,
    /// Removed lines (git numstat's second column).
    pub deletions: usize,
    /// Hunks with the requested context, merged as git merges them.
    pub hunks: Vec<Hunk>,
    /// The deadline hit and the result is a whole-file replacement.
    pub timed_out: bool,
}

/// Diffs two texts line by line. See the module docs for how closely this
/// follows git.
pub fn line_diff<'a>(old: &'a [u8], new: &'a [u8], opts: &DiffOptions) -> LineDiff<'a> {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let deadline = opts.timeout.and_then(|t| Instant::now().checked_add(t));
    let (mut rchg1, mut rchg2, timed_out) = match changed_masks(&old_lines, &new_lines, deadline) {
        Some((a, b)) => (a, b, false),
        None => (
            vec![true; old_lines.len()],
            vec![true; new_lines.len()],
            true,
        ),
    };
    if !timed_out {
        slide_down(&old_lines, &mut rchg1);
        slide_down(&new_lines, &mut rchg2);
    }
    let changes = build_script(&rchg1, &rchg2);
    let hunks = build_hunks(&changes, old_lines.len(), new_lines.len(), opts.context);
    LineDiff {
        insertions: rchg2.iter().filter(|&&c| c).count(),
        deletions: rchg1.iter().filter(|&&c| c).count(),
        old_lines,
        new_lines,
        hunks,
        timed_out,
    }
}

/// git's `xdl_bogosqrt`: a rough square root used to cap match counts.
fn bogosqrt(mut n: usize) -> usize {
    let mut i = 1;
    while n > 0 {
        i <<= 1;
        n >>= 2;
    }
    i
}

const MAX_EQLIMIT: usize = 1024;
const SIMSCAN_WINDOW: usize = 100;
const KPDIS_RUN: usize = 4;

/// Per-line "changed" masks for old and new, or `None` if the deadline hit.
fn changed_masks(
    old: &[&[u8]],
    new: &[&[u8]],
    deadline: Option<Instant>,
) -> Option<(Vec<bool>, Vec<bool>)> {
    // Classify lines into ids and count occurrences per side (whole files,
    // like xdiff's classifier).
    let mut ids: HashMap<&[u8], usize> = HashMap::new();
    let mut ha1 = Vec::with_capacity(old.len());
    for &l in old {
        let n = ids.len();
        ha1.push(*ids.entry(l).or_insert(n));
    }
    let mut ha2 = Vec::with_capacity(new.len());
    for &l in new {
        let n = ids.len();
        ha2.push(*ids.entry(l).or_insert(n));
    }
    let mut cnt1 = vec![0usize; ids.len()];
    let mut cnt2 = vec![0usize; ids.len()];
    for &h in &ha1 {
        cnt1[h] += 1;
    }
    for &h in &ha2 {
        cnt2[h] += 1;
    }

    // xdl_trim_ends
    let lim = ha1.len().min(ha2.len());
    let pre = ha1.iter().zip(&ha2).take_while(|(a, b)| a == b).count();
    let suf = ha1[pre..]
        .iter()
        .rev()
        .zip(ha2[pre..].iter().rev())
        .take(lim - pre)
        .take_while(|(a, b)| a == b)
        .count();
    let (end1, end2) = (ha1.len() - suf, ha2.len() - suf);

    // xdl_cleanup_records
    let (keep1, mut rchg1) = cleanup(&ha1, pre, end1, &cnt2);
    let (keep2, mut rchg2) = cleanup(&ha2, pre, end2, &cnt1);

    let k1: Vec<usize> = keep1.iter().map(|&i| ha1[i]).collect();
    let k2: Vec<usize> = keep2.iter().map(|&i| ha2[i]).collect();
    let ops = capture_diff_slices_deadline(Algorithm::RawMyers, &k1, &k2, deadline);
    if deadline.is_some_and(|d| Instant::now() > d) {
        return None;
    }
    for op in ops {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for i in old_index..old_index + old_len {
                    rchg1[keep1[i]] = true;
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for i in new_index..new_index + new_len {
                    rchg2[keep2[i]] = true;
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for i in old_index..old_index + old_len {
                    rchg1[keep1[i]] = true;
                }
                for i in new_index..new_index + new_len {
                    rchg2[keep2[i]] = true;
                }
            }
        }
    }
    Some((rchg1, rchg2))
}

/// Marks lines in `start..end` that xdiff discards before running Myers
/// (no match on the other side, or a multi-match line amid such lines) and
/// returns the indices of the lines kept, plus the change mask so far.
fn cleanup(ha: &[usize], start: usize, end: usize, other_cnt: &[usize]) -> (Vec<usize>, Vec<bool>) {
    let mlim = bogosqrt(ha.len()).min(MAX_EQLIMIT);
    let mut dis = vec![0u8; ha.len()];
    for i in start..end {
        let nm = other_cnt[ha[i]];
        dis[i] = if nm == 0 {
            0
        } else if nm >= mlim {
            2
        } else {
            1
        };
    }
    let mut keep = Vec::with_capacity(end.saturating_sub(start));
    let mut rchg = vec![false; ha.len()];
    for i in start..end {
        if dis[i] == 1 || (dis[i] == 2 && !clean_mmatch(&dis, i, start, end)) {
            keep.push(i);
        } else {
            rchg[i] = true;
        }
    }
    (keep, rchg)
}

/// xdiff's `xdl_clean_mmatch`: discard a multi-match line only when it sits
/// in a run dominated by lines with no match at all. `end` is exclusive.
fn clean_mmatch(dis: &[u8], i: usize, start: usize, end: usize) -> bool {
    let s = start.max(i.saturating_sub(SIMSCAN_WINDOW));
    let e = (end - 1).min(i + SIMSCAN_WINDOW);
    let (mut rdis0, mut rpdis0) = (0usize, 1usize);
    let mut j = i;
    while j > s {
        j -= 1;
        match dis[j] {
            0 => rdis0 += 1,
            2 => rpdis0 += 1,
            _ => break,
        }
    }
    if rdis0 == 0 {
        return false;
    }
    let (mut rdis1, mut rpdis1) = (0usize, 1usize);
    for &d in &dis[i + 1..=e.max(i)] {
        match d {
            0 => rdis1 += 1,
            2 => rpdis1 += 1,
            _ => break,
        }
    }
    if rdis1 == 0 {
        return false;
    }
    rdis1 += rdis0;
    rpdis1 += rpdis0;
    rpdis1 * KPDIS_RUN < rpdis1 + rdis1
}

/// Slides each group of changed lines down as far as equal lines allow, as
/// git's `xdl_change_compact` does (without its indent heuristic); this only
/// moves where a change is shown, never how many lines change.
fn slide_down(lines: &[&[u8]], rchg: &mut [bool]) {
    let n = rchg.len();
    let mut start = 0;
    while start < n {
        if !rchg[start] {
            start += 1;
            continue;
        }
        let mut end = start;
        while end < n && rchg[end] {
            end += 1;
        }
        // Slide up first so that groups merge like git's.
        while start > 0 && !rchg[start - 1] && lines[start - 1] == lines[end - 1] {
            start -= 1;
            end -= 1;
            rchg[start] = true;
            rchg[end] = false;
            while start > 0 && rchg[start - 1] {
                start -= 1;
            }
        }
        while end < n && lines[start] == lines[end] {
            rchg[start] = false;
            rchg[end] = true;
            start += 1;
            end += 1;
            while end < n && rchg[end] {
                end += 1;
            }
        }
        start = end;
    }
}

/// One change atom: `(old_start, new_start, old_count, new_count)`.
type Atom = (usize, usize, usize, usize);

fn build_script(rchg1: &[bool], rchg2: &[bool]) -> Vec<Atom> {
    let (n1, n2) = (rchg1.len(), rchg2.len());
    let (mut i1, mut i2) = (0, 0);
    let mut out = Vec::new();
    while i1 < n1 || i2 < n2 {
        if i1 >= n1 || i2 >= n2 || rchg1[i1] || rchg2[i2] {
            let (s1, s2) = (i1, i2);
            while i1 < n1 && (rchg1[i1] || i2 >= n2) {
                i1 += 1;
            }
            while i2 < n2 && (rchg2[i2] || i1 >= n1) {
                i2 += 1;
            }
            out.push((s1, s2, i1 - s1, i2 - s2));
        } else {
            i1 += 1;
            i2 += 1;
        }
    }
    out
}

/// git's `xdl_emit_diff` hunk grouping: atoms separated by at most
/// `2 * context` unchanged lines share a hunk.
fn build_hunks(atoms: &[Atom], n1: usize, n2: usize, ctx: usize) -> Vec<Hunk> {
    let mut hunks = Vec::new();
    let mut a = 0;
    while a < atoms.len() {
        let mut e = a;
        while e + 1 < atoms.len() && atoms[e + 1].0 - (atoms[e].0 + atoms[e].2) <= 2 * ctx {
            e += 1;
        }
        let first = atoms[a];
        let last = atoms[e];
        let s1 = first.0.saturating_sub(ctx);
        let s2 = first.1.saturating_sub(ctx);
        let lctx = ctx.min(n1 - (last.0 + last.2)).min(n2 - (last.1 + last.3));
        let e1 = last.0 + last.2 + lctx;
        let e2 = last.1 + last.3 + lctx;
        let mut lines = Vec::new();
        let mut p1 = s1;
        for &(i1, i2, c1, c2) in &atoms[a..=e] {
            lines.extend((p1..i1).map(|i| (LineTag::Context, i)));
            lines.extend((i1..i1 + c1).map(|i| (LineTag::Delete, i)));
            lines.extend((i2..i2 + c2).map(|i| (LineTag::Insert, i)));
            p1 = i1 + c1;
        }
        lines.extend((p1..e1).map(|i| (LineTag::Context, i)));
        hunks.push(Hunk {
            old_start: s1,
            old_len: e1 - s1,
            new_start: s2,
            new_len: e2 - s2,
            lines,
        });
        a = e + 1;
    }
    hunks
}

/// The text git appends after `@@ ... @@` with its default (driverless)
/// function finder: the nearest line above `old_start` that begins with an
/// ASCII letter, `_` or `$`, cut to 80 bytes, trailing whitespace removed.
pub fn function_context<'a>(old_lines: &[&'a [u8]], old_start: usize) -> &'a [u8] {
    for &line in old_lines[..old_start.min(old_lines.len())].iter().rev() {
        if let Some(&c) = line.first()
            && (c.is_ascii_alphabetic() || c == b'_' || c == b'$')
        {
            let mut l = &line[..line.len().min(80)];
            while let Some((&last, rest)) = l.split_last() {
                if matches!(last, b' ' | b'\t' | b'\n' | b'\r') {
                    l = rest;
                } else {
                    break;
                }
            }
            return l;
        }
    }
    b""
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_rule() {
        assert!(!is_binary(b"abc"));
        assert!(is_binary(b"a\0c"));
        let mut v = vec![b'a'; 8000];
        v.push(0);
        assert!(!is_binary(&v));
    }

    #[test]
    fn counts_and_headers() {
        let d = line_diff(b"a\nb\nc\n", b"a\nB\nc\nd\n", &DiffOptions::default());
        assert_eq!((d.insertions, d.deletions), (2, 1));
        assert_eq!(d.hunks.len(), 1);
        let d = line_diff(b"", b"", &DiffOptions::default());
        assert!(d.hunks.is_empty());
    }

    #[test]
    fn timeout_falls_back_to_replacement() {
        let opts = DiffOptions {
            context: 3,
            timeout: Some(Duration::ZERO),
        };
        let d = line_diff(b"a\nb\nc\n", b"a\nx\nc\n", &opts);
        assert!(d.timed_out);
        assert_eq!((d.insertions, d.deletions), (3, 3));
    }

    #[test]
    fn funcname() {
        let lines = split_lines(b"  x\nfn main() {  \n  y\n");
        assert_eq!(function_context(&lines, 2), b"fn main() {");
        assert_eq!(function_context(&lines, 1), b"");
    }
}
