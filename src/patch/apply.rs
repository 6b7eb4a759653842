//! Applying a file patch to in-memory bytes, tolerating drift the way git and GNU
//! patch do: each hunk is tried at its recorded position, then at growing
//! offsets (nearest first, after before before), then (GNU's fuzz) with context
//! lines ignored. See [`apply_hunks`] for the placement rules. Lines are split on
//! `\n` only, so `\r` stays part of the line and CRLF content round-trips byte
//! for byte.

use super::types::{FilePatch, Hunk, LineKind, PatchFormat};

/// Knobs for [`apply_hunks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Most context lines that may be ignored at each end of a hunk (GNU
    /// patch's `--fuzz`); 0 demands all context to match.
    pub max_fuzz: usize,
}

impl Default for ApplyOptions {
    /// Fuzz 2, GNU patch's default.
    fn default() -> Self {
        ApplyOptions { max_fuzz: 2 }
    }
}

/// How one hunk was placed, so the caller can warn about drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkReport {
    /// 1-based hunk number within the file patch.
    pub index: usize,
    /// Lines between the header's old position and where it applied.
    pub offset: isize,
    /// Context lines ignored at each end to make it apply.
    pub fuzz: usize,
}

/// The patched content and how each hunk was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new file content.
    pub content: Vec<u8>,
    /// One report per hunk, in order.
    pub hunks: Vec<HunkReport>,
}

/// Why a hunk did not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FailureReason {
    /// No position matched; `best_line` is where the most old-side lines
    /// matched (1-based line of the content), if any position was possible.
    #[error("context mismatch: {}", describe_mismatch(*best_line, *matched, *expected))]
    ContextMismatch {
        /// 1-based line of the best partial match.
        best_line: Option<usize>,
        /// Lines matching there.
        matched: usize,
        /// Old-side lines the hunk needs.
        expected: usize,
    },
    /// The hunk only matches where it would overlap the previous hunk.
    #[error("only matches at line {line}, overlapping the previous hunk")]
    Overlap {
        /// 1-based line of that match.
        line: usize,
    },
}

fn describe_mismatch(best_line: Option<usize>, matched: usize, expected: usize) -> String {
    match best_line {
        Some(line) => format!(
            "the closest place, line {line}, matches {matched} of the hunk's {expected} old lines"
        ),
        None => format!("no place in the file matches the hunk's {expected} old lines"),
    }
}

/// Why a file patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Binary patches carry no text hunks to apply.
    #[error("binary patch cannot be applied as text")]
    Binary,
    /// A file-creation patch was given existing content.
    #[error("patch creates the file, but it already has {len} bytes")]
    NotEmpty {
        /// Length of the existing content.
        len: usize,
    },
    /// A deletion patch did not remove everything.
    #[error("patch deletes the file, but {len} bytes remain after applying it")]
    DeleteLeftContent {
        /// Bytes left over.
        len: usize,
    },
    /// A hunk did not apply.
    #[error("hunk #{index} {header} failed: {reason}")]
    HunkFailed {
        /// 1-based hunk number.
        index: usize,
        /// The hunk's `@@` header.
        header: String,
        /// What went wrong.
        reason: FailureReason,
    },
}

/// Applies `file`'s hunks to `old`. Hunks apply in order and never overlap;
/// a later hunk starts its search where the previous one's drift left it.
///
/// Placement follows git for a git-style patch and GNU patch for a traditional one. With
/// `max_fuzz` 0 both follow git: every context line must match, a hunk that starts at line 1
/// (or 0) must match at the start of the file and one without trailing context at its end.
/// With fuzz, GNU's rule: a hunk with less leading than trailing context is pinned to the
/// start of the file (when its header puts it there) and one with less trailing than leading
/// context to the end, and fuzz is counted against the side with more context. A git-style
/// patch tries git's exact rule first. A line without a final newline is never joined to the
/// next: git's rule keeps such a line at the end of the file; GNU's adds the newline.
pub fn apply_hunks(
    old: &[u8],
    file: &FilePatch,
    opts: &ApplyOptions,
) -> Result<Applied, ApplyError> {
    if file.binary {
        return Err(ApplyError::Binary);
    }
    if file.is_new && !old.is_empty() {
        return Err(ApplyError::NotEmpty { len: old.len() });
    }
    let lines: Vec<&[u8]> = old.split_inclusive(|&b| b == b'\n').collect();
    let git = file.format == PatchFormat::Git;
    let mut content = Vec::with_capacity(old.len() + old.len() / 8);
    let mut cursor = 0usize;
    let mut drift = 0isize;
    let mut reports = Vec::with_capacity(file.hunks.len());
    for (i, hunk) in file.hunks.iter().enumerate() {
        let fail = |reason| ApplyError::HunkFailed {
            index: i + 1,
            header: hunk.header(),
            reason,
        };
        let shape = Shape::of(hunk);
        let placed = locate(&lines, hunk, &shape, cursor, drift, opts.max_fuzz, git)
            .ok_or_else(|| fail(diagnose(&lines, hunk, cursor)))?;
        for line in &lines[cursor..placed.at + shape.lead] {
            push_line(&mut content, line);
        }
        for line in &shape.new[shape.lead..shape.new.len() - shape.trail] {
            push_line(&mut content, line);
        }
        cursor = placed.at + shape.old.len() - shape.trail;
        drift = placed.offset;
        reports.push(HunkReport {
            index: i + 1,
            offset: placed.offset,
            fuzz: placed.fuzz,
        });
    }
    for line in &lines[cursor..] {
        push_line(&mut content, line);
    }
    if file.is_deleted && !content.is_empty() {
        return Err(ApplyError::DeleteLeftContent { len: content.len() });
    }
    Ok(Applied {
        content,
        hunks: reports,
    })
}

/// Appends a line; a line before it that lacks its newline gets one (GNU patch's rule: a
/// `\ No newline` line placed before others never swallows the next line).
fn push_line(out: &mut Vec<u8>, line: &[u8]) {
    if out.last().is_some_and(|&b| b != b'\n') {
        out.push(b'\n');
    }
    out.extend_from_slice(line);
}

/// A hunk's old and new sides and its context at each end.
struct Shape<'h> {
    old: Vec<&'h [u8]>,
    new: Vec<&'h [u8]>,
    /// Context lines before the first change.
    lead: usize,
    /// Context lines after the last change.
    trail: usize,
}

impl<'h> Shape<'h> {
    fn of(hunk: &'h Hunk) -> Self {
        let old: Vec<&[u8]> = hunk.old_lines().collect();
        let new: Vec<&[u8]> = hunk.new_lines().collect();
        let context = |l: &&super::types::HunkLine| l.kind == LineKind::Context;
        let lead = hunk.lines.iter().take_while(context).count();
        // A hunk of context only changes nothing: all of it is "leading".
        let trail = if lead == hunk.lines.len() {
            0
        } else {
            hunk.lines.iter().rev().take_while(context).count()
        };
        Shape {
            old,
            new,
            lead,
            trail,
        }
    }
}

struct Placement {
    /// Where the hunk's first old line (fuzzed context included) sits.
    at: usize,
    offset: isize,
    fuzz: usize,
}

/// Where the hunk's old lines begin according to its header (0-based).
fn header_position(hunk: &Hunk) -> usize {
    if hunk.old_len == 0 {
        hunk.old_start
    } else {
        hunk.old_start.saturating_sub(1)
    }
}

fn locate(
    lines: &[&[u8]],
    hunk: &Hunk,
    shape: &Shape,
    cursor: usize,
    drift: isize,
    max_fuzz: usize,
    git: bool,
) -> Option<Placement> {
    let home = isize::try_from(header_position(hunk)).unwrap_or(isize::MAX);
    let guess = home.saturating_add(drift);
    let placed = |at: usize, fuzz| Placement {
        at,
        offset: (at as isize).saturating_sub(home),
        fuzz,
    };
    if git || max_fuzz == 0 {
        if let Some(at) = git_exact(lines, hunk, shape, cursor, guess) {
            return Some(placed(at, 0));
        }
        if max_fuzz == 0 {
            return None;
        }
    }
    // A git-style hunk whose new side ends without a newline stays at the end of the file,
    // as git keeps it; GNU's rule would add the newline instead.
    let must_end = git && shape.new.last().is_some_and(|l| l.last() != Some(&b'\n'));
    let most = max_fuzz.min(shape.lead.max(shape.trail));
    let first = usize::from(git);
    (first..=most).find_map(|fuzz| {
        gnu_at(lines, hunk, shape, cursor, guess, fuzz, must_end).map(|at| placed(at, fuzz))
    })
}

/// git's placement: all context matches; a hunk starting at line 0 or 1 matches at the start,
/// one without trailing context at the end (neither for a hunk without any context, which
/// `diff -U0` writes and git applies with `--unidiff-zero`).
fn git_exact(
    lines: &[&[u8]],
    hunk: &Hunk,
    shape: &Shape,
    cursor: usize,
    guess: isize,
) -> Option<usize> {
    let old = &shape.old;
    let no_context = shape.lead == 0 && shape.trail == 0;
    let begin = hunk.old_start == 0 || (hunk.old_start == 1 && !no_context);
    // A line without its newline ends the file; so does what a context-less hunk inserts at
    // line 0 (git treats it as the whole file unless told `--unidiff-zero`).
    let cut = shape.new.last().is_some_and(|l| l.last() != Some(&b'\n'));
    let end = (!no_context && shape.trail == 0) || (no_context && hunk.old_start == 0) || cut;
    let last = lines.len().checked_sub(old.len())?;
    let fits = |p: usize| p >= cursor && lines[p..p + old.len()] == **old;
    match (begin, end) {
        (true, true) => (last == 0 && fits(0)).then_some(0),
        (true, false) => fits(0).then_some(0),
        (false, true) => fits(last).then_some(last),
        (false, false) => {
            if cursor > last {
                return None;
            }
            candidates(cursor, last, guess).find(|&p| fits(p))
        }
    }
}

/// GNU patch's `locate_hunk` at one fuzz level.
fn gnu_at(
    lines: &[&[u8]],
    hunk: &Hunk,
    shape: &Shape,
    cursor: usize,
    guess: isize,
    fuzz: usize,
    must_end: bool,
) -> Option<usize> {
    let (old, len) = (&shape.old, lines.len());
    let context = shape.lead.max(shape.trail) as isize;
    let prefix_fuzz = fuzz as isize + shape.lead as isize - context;
    let suffix_fuzz = fuzz as isize + shape.trail as isize - context;
    if old.is_empty() {
        // A pure insertion without context matches anywhere: at its recorded place.
        let at = usize::try_from(guess.max(0))
            .unwrap_or(0)
            .clamp(cursor.min(len), len);
        return (!must_end || at == len).then_some(at);
    }
    let matches = |p: usize, pf: usize, sf: usize| {
        p + old.len() - sf <= len
            && lines[p + pf..p + old.len() - sf] == old[pf..old.len() - sf]
            && (!must_end || (sf == 0 && p + old.len() == len))
    };
    if prefix_fuzz < 0 && hunk.old_start <= 1 {
        // Only the start of the file (or, with too little context at both ends, all of it).
        if suffix_fuzz < 0 && old.len() != len {
            return None;
        }
        let sf = usize::try_from(suffix_fuzz.max(0)).unwrap_or(0);
        return (cursor == 0 && matches(0, 0, sf)).then_some(0);
    }
    let pf = usize::try_from(prefix_fuzz.max(0)).unwrap_or(0);
    if suffix_fuzz < 0 {
        // Only the end of the file.
        let p = len.checked_sub(old.len())?;
        return (p >= cursor && matches(p, pf, 0)).then_some(p);
    }
    let sf = usize::try_from(suffix_fuzz).unwrap_or(0);
    let last = (len + sf).checked_sub(old.len())?;
    if cursor > last {
        return None;
    }
    candidates(cursor, last, guess).find(|&p| matches(p, pf, sf))
}

/// Positions in `lo..=hi` ordered by distance from `target`, later before
/// earlier at equal distance.
fn candidates(lo: usize, hi: usize, target: isize) -> impl Iterator<Item = usize> {
    let (lo_i, hi_i) = (lo as isize, hi as isize);
    let target = target.clamp(lo_i, hi_i);
    let span = (target - lo_i).max(hi_i - target);
    (0..=span).flat_map(move |d| {
        let after = target + d;
        let before = target - d;
        let a = (after >= lo_i && after <= hi_i).then_some(after as usize);
        let b = (d > 0 && before >= lo_i && before <= hi_i).then_some(before as usize);
        a.into_iter().chain(b)
    })
}

/// Explains a failed hunk: an exact match hidden behind the previous hunk,
/// or the position where most lines matched.
fn diagnose(lines: &[&[u8]], hunk: &Hunk, cursor: usize) -> FailureReason {
    let old: Vec<&[u8]> = hunk.old_lines().collect();
    let Some(hi) = lines.len().checked_sub(old.len()) else {
        return FailureReason::ContextMismatch {
            best_line: None,
            matched: 0,
            expected: old.len(),
        };
    };
    if let Some(p) = (0..cursor.min(hi + 1)).find(|&p| lines[p..p + old.len()] == *old) {
        return FailureReason::Overlap { line: p + 1 };
    }
    let score = |p: usize| old.iter().zip(&lines[p..]).filter(|(a, b)| a == b).count();
    let home = isize::try_from(header_position(hunk)).unwrap_or(isize::MAX);
    let best = candidates(cursor.min(hi), hi, home)
        .max_by_key(|&p| (score(p), std::cmp::Reverse((p as isize).abs_diff(home))));
    FailureReason::ContextMismatch {
        best_line: best.map(|p| p + 1),
        matched: best.map(score).unwrap_or(0),
        expected: old.len(),
    }
}
