//! Line splitting, binary detection, and hunks with context over the line diff.
//!
//! Which lines changed is decided by the one line diff the three-way merge uses too
//! (`crate::patch::linediff`, git's xdiff pipeline), so insertion and deletion counts equal
//! `git diff --numstat`; this module groups its changes into hunks as git's `xdl_emit_diff`
//! does and adds a deadline after which a file is shown as a whole replacement.

use std::time::{Duration, Instant};

pub use crate::patch::LineKind;
use crate::patch::line_number;
use crate::patch::linediff::{Edit, changed_lines, edits_from_flags};

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

/// A hunk the line diff computed: each line is its kind and its index into the old lines
/// (context, removed) or the new lines (added).
pub type Hunk = crate::patch::Hunk<(LineKind, usize)>;

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
    let (rchg1, rchg2, timed_out) = match changed_lines(&old_lines, &new_lines, deadline) {
        Some((a, b)) => (a, b, false),
        None => (
            vec![true; old_lines.len()],
            vec![true; new_lines.len()],
            true,
        ),
    };
    let edits = edits_from_flags(&rchg1, &rchg2);
    let hunks = build_hunks(&edits, old_lines.len(), new_lines.len(), opts.context);
    LineDiff {
        insertions: rchg2.iter().filter(|&&c| c).count(),
        deletions: rchg1.iter().filter(|&&c| c).count(),
        old_lines,
        new_lines,
        hunks,
        timed_out,
    }
}

/// git's `xdl_emit_diff` hunk grouping: edits separated by at most
/// `2 * context` unchanged lines share a hunk.
fn build_hunks(edits: &[Edit], n1: usize, n2: usize, ctx: usize) -> Vec<Hunk> {
    let mut hunks = Vec::new();
    let mut a = 0;
    while a < edits.len() {
        let mut e = a;
        while e + 1 < edits.len() && edits[e + 1].base.start - edits[e].base.end <= 2 * ctx {
            e += 1;
        }
        let (first, last) = (&edits[a], &edits[e]);
        let s1 = first.base.start.saturating_sub(ctx);
        let s2 = first.side.start.saturating_sub(ctx);
        let lctx = ctx.min(n1 - last.base.end).min(n2 - last.side.end);
        let e1 = last.base.end + lctx;
        let e2 = last.side.end + lctx;
        let mut lines = Vec::new();
        let mut p1 = s1;
        for edit in &edits[a..=e] {
            lines.extend((p1..edit.base.start).map(|i| (LineKind::Context, i)));
            lines.extend(edit.base.clone().map(|i| (LineKind::Removed, i)));
            lines.extend(edit.side.clone().map(|i| (LineKind::Added, i)));
            p1 = edit.base.end;
        }
        lines.extend((p1..e1).map(|i| (LineKind::Context, i)));
        hunks.push(Hunk {
            old_start: line_number(s1, e1 - s1),
            old_len: e1 - s1,
            new_start: line_number(s2, e2 - s2),
            new_len: e2 - s2,
            section: Vec::new(),
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
