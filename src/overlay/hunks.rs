//! Per-hunk review: a file change cut into the hunks of its unified diff (3 lines of
//! context, as `git diff` cuts them), each with a stable id, and the content that results
//! from taking only some of them.
//!
//! A hunk's id is a hash of the path, the hunk's position in the old file and its lines, so it
//! stays the same across `overlay diff` calls while the overlay leaves that region alone, and
//! two equal hunks at different places never share an id.

use serde::Serialize;

use crate::diff::text::{DiffOptions, LineTag, line_diff};

/// One hunk of a file's change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReviewHunk {
    /// Stable id: 12 hex digits.
    pub id: String,
    /// First old line (1-based; 0 when the hunk covers no old line).
    pub old_start: usize,
    /// Old lines covered (context and removed).
    pub old_lines: usize,
    /// First new line (1-based; 0 when it covers no new line).
    pub new_start: usize,
    /// New lines covered (context and added).
    pub new_lines: usize,
    /// The lines, each prefixed with ' ', '-' or '+' (line ending kept, lossy UTF-8).
    pub lines: Vec<String>,
    /// Whether it is still pending (not accepted already).
    pub pending: bool,
    /// The old range covered, 0-based half-open, for [`select`].
    #[serde(skip)]
    old_range: (usize, usize),
    /// The new range covered, 0-based half-open.
    #[serde(skip)]
    new_range: (usize, usize),
}

/// The hunks turning `old` into `new` for `path`.
pub fn file_hunks(path: &[u8], old: &[u8], new: &[u8]) -> Vec<ReviewHunk> {
    let d = line_diff(
        old,
        new,
        &DiffOptions {
            context: 3,
            timeout: None,
        },
    );
    d.hunks
        .iter()
        .map(|h| {
            let mut lines = Vec::with_capacity(h.lines.len());
            let mut key = blake3::Hasher::new();
            key.update(path);
            key.update(&[0]);
            key.update(&(h.old_start as u64).to_le_bytes());
            for &(tag, i) in &h.lines {
                let (mark, text) = match tag {
                    LineTag::Context => (' ', d.old_lines[i]),
                    LineTag::Delete => ('-', d.old_lines[i]),
                    LineTag::Insert => ('+', d.new_lines[i]),
                };
                key.update(&[mark as u8]);
                key.update(text);
                lines.push(format!("{mark}{}", String::from_utf8_lossy(text)));
            }
            let start = |s: usize, len: usize| if len == 0 { s } else { s + 1 };
            ReviewHunk {
                id: key.finalize().to_hex()[..12].to_string(),
                old_start: start(h.old_start, h.old_len),
                old_lines: h.old_len,
                new_start: start(h.new_start, h.new_len),
                new_lines: h.new_len,
                lines,
                pending: true,
                old_range: (h.old_start, h.old_start + h.old_len),
                new_range: (h.new_start, h.new_start + h.new_len),
            }
        })
        .collect()
}

/// The content that takes from `new` exactly the hunks whose ids `take` accepts, and keeps
/// `old` everywhere else. `hunks` must be [`file_hunks`] of the same `old` and `new`.
pub fn select(
    old: &[u8],
    new: &[u8],
    hunks: &[ReviewHunk],
    take: &dyn Fn(&str) -> bool,
) -> Vec<u8> {
    let old_l: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    let new_l: Vec<&[u8]> = new.split_inclusive(|&b| b == b'\n').collect();
    let mut out = Vec::with_capacity(old.len().max(new.len()));
    let mut at = 0;
    for h in hunks {
        for l in &old_l[at..h.old_range.0] {
            out.extend_from_slice(l);
        }
        let side = if take(&h.id) {
            &new_l[h.new_range.0..h.new_range.1]
        } else {
            &old_l[h.old_range.0..h.old_range.1]
        };
        for l in side {
            out.extend_from_slice(l);
        }
        at = h.old_range.1;
    }
    for l in &old_l[at.min(old_l.len())..] {
        out.extend_from_slice(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize, f: &dyn Fn(usize) -> String) -> Vec<u8> {
        (1..=n).map(f).collect::<String>().into_bytes()
    }

    #[test]
    fn taking_every_hunk_gives_new_and_none_gives_old() {
        let old = text(40, &|i| format!("line {i}\n"));
        let new = text(40, &|i| match i {
            3 => "changed 3\n".into(),
            20 => "changed 20\nadded\n".into(),
            38 => String::new(),
            _ => format!("line {i}\n"),
        });
        let hunks = file_hunks(b"f", &old, &new);
        assert_eq!(hunks.len(), 3);
        assert_eq!(select(&old, &new, &hunks, &|_| true), new);
        assert_eq!(select(&old, &new, &hunks, &|_| false), old);
        // One at a time, in any order, adds up to the whole.
        let mid = select(&old, &new, &hunks, &|id| id == hunks[1].id);
        assert!(String::from_utf8_lossy(&mid).contains("changed 20\nadded\n"));
        assert!(String::from_utf8_lossy(&mid).contains("line 3\n"));
        let ids: Vec<String> = hunks.iter().map(|h| h.id.clone()).collect();
        assert_eq!(
            file_hunks(b"f", &old, &new)
                .iter()
                .map(|h| h.id.clone())
                .collect::<Vec<_>>(),
            ids,
            "ids are stable"
        );
        assert_ne!(
            file_hunks(b"g", &old, &new)[0].id,
            ids[0],
            "the path is part of the id"
        );
    }

    #[test]
    fn a_file_without_a_final_newline_keeps_it_that_way() {
        let old = b"a\nb\nc".to_vec();
        let new = b"a\nB\nc".to_vec();
        let hunks = file_hunks(b"f", &old, &new);
        assert_eq!(select(&old, &new, &hunks, &|_| true), new);
        assert_eq!(select(&old, &new, &hunks, &|_| false), old);
    }
}
