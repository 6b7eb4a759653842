//! Applying a file patch to in-memory bytes, tolerating drift the way GNU
//! patch does: each hunk is tried at its recorded position, then at growing
//! offsets (nearest first, after before before), then with up to `max_fuzz`
//! context lines ignored at each end. Lines are split on `\n` only, so `\r`
//! stays part of the line and CRLF content round-trips byte for byte.

use super::types::{FilePatch, Hunk, LineKind};

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
    let mut content = Vec::with_capacity(old.len());
    let mut cursor = 0usize;
    let mut drift = 0isize;
    let mut reports = Vec::with_capacity(file.hunks.len());
    for (i, hunk) in file.hunks.iter().enumerate() {
        let fail = |reason| ApplyError::HunkFailed {
            index: i + 1,
            header: hunk.header(),
            reason,
        };
        let placed = place(&lines, hunk, cursor, drift, opts.max_fuzz)
            .ok_or_else(|| fail(diagnose(&lines, hunk, cursor)))?;
        for line in &lines[cursor..placed.at] {
            content.extend_from_slice(line);
        }
        for line in &placed.replacement {
            content.extend_from_slice(line);
        }
        cursor = placed.at + placed.len;
        drift = placed.offset;
        reports.push(HunkReport {
            index: i + 1,
            offset: placed.offset,
            fuzz: placed.fuzz,
        });
    }
    for line in &lines[cursor..] {
        content.extend_from_slice(line);
    }
    if file.is_deleted && !content.is_empty() {
        return Err(ApplyError::DeleteLeftContent { len: content.len() });
    }
    Ok(Applied {
        content,
        hunks: reports,
    })
}

struct Placement<'h> {
    at: usize,
    len: usize,
    offset: isize,
    fuzz: usize,
    replacement: Vec<&'h [u8]>,
}

/// Where the hunk's old lines begin according to its header (0-based).
fn header_position(hunk: &Hunk) -> usize {
    if hunk.old_len == 0 {
        hunk.old_start
    } else {
        hunk.old_start.saturating_sub(1)
    }
}

fn place<'h>(
    lines: &[&[u8]],
    hunk: &'h Hunk,
    cursor: usize,
    drift: isize,
    max_fuzz: usize,
) -> Option<Placement<'h>> {
    let old: Vec<&[u8]> = hunk.old_lines().collect();
    let new: Vec<&[u8]> = hunk.new_lines().collect();
    let lead = hunk
        .lines
        .iter()
        .take_while(|l| l.kind == LineKind::Context)
        .count();
    let trail = hunk
        .lines
        .iter()
        .rev()
        .take_while(|l| l.kind == LineKind::Context)
        .count();
    let home = isize::try_from(header_position(hunk)).unwrap_or(isize::MAX);
    let mut last_trim = None;
    for fuzz in 0..=max_fuzz {
        let front = fuzz.min(lead);
        let back = fuzz.min(trail).min(old.len().saturating_sub(front));
        if last_trim == Some((front, back)) {
            continue;
        }
        last_trim = Some((front, back));
        let pattern = &old[front..old.len() - back];
        let target = home.saturating_add(drift).saturating_add(front as isize);
        if let Some(at) = search(lines, pattern, cursor, target) {
            let end = new.len().saturating_sub(back).max(front);
            return Some(Placement {
                at,
                len: pattern.len(),
                offset: (at as isize - front as isize).saturating_sub(home),
                fuzz,
                replacement: new.get(front..end).unwrap_or_default().to_vec(),
            });
        }
    }
    None
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

fn search(lines: &[&[u8]], pattern: &[&[u8]], lo: usize, target: isize) -> Option<usize> {
    let hi = lines.len().checked_sub(pattern.len())?;
    if lo > hi {
        return None;
    }
    candidates(lo, hi, target).find(|&p| lines[p..p + pattern.len()] == *pattern)
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
