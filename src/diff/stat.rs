//! `--stat`, `--numstat` and `--name-status` printers, drawn as git draws
//! them (git's `show_stats`, `show_numstat`, `pprint_rename`).
//!
//! Entries are printed in the order given; the caller sorts them the way
//! git does (by path, renames by their new path).

use std::io::{self, Write};

use super::quote::{needs_quoting, push_quoted};

/// The status letter of a change, as `--name-status` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `A`
    Added,
    /// `D`
    Deleted,
    /// `M`: content and/or executable bit.
    Modified,
    /// `T`: file <-> symlink (git shows the patch as delete + add, but
    /// lists a single `T` entry).
    TypeChanged,
    /// `R<score>`, e.g. `R100`.
    Renamed {
        /// Similarity percentage.
        similarity: u8,
    },
}

/// Byte sizes git shows for a binary file in `--stat` (`Bin 7 -> 10
/// bytes`); both 0 when the content did not change (git prints `Bin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinarySizes {
    /// Size before (0 for an added file).
    pub old: u64,
    /// Size after (0 for a deleted file).
    pub new: u64,
}

/// One line of a stat listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatEntry<'a> {
    /// The (new) path.
    pub path: &'a [u8],
    /// The old path, for renames only.
    pub old_path: Option<&'a [u8]>,
    /// Kind of change.
    pub status: Status,
    /// Added lines (ignored for binaries).
    pub insertions: u64,
    /// Removed lines (ignored for binaries).
    pub deletions: u64,
    /// `Some` when either side is binary.
    pub binary: Option<BinarySizes>,
}

/// The name git shows in `--stat` and `--numstat`: the quoted path, or for
/// a rename the compact `pre{old => new}post` form (git's `pprint_rename`).
pub fn display_name(e: &StatEntry) -> Vec<u8> {
    let mut out = Vec::new();
    match e.old_path {
        Some(old) if old != e.path => pprint_rename(&mut out, old, e.path),
        _ => push_quoted(&mut out, b"", e.path),
    }
    out
}

fn pprint_rename(out: &mut Vec<u8>, a: &[u8], b: &[u8]) {
    if needs_quoting(a) || needs_quoting(b) {
        push_quoted(out, b"", a);
        out.extend_from_slice(b" => ");
        push_quoted(out, b"", b);
        return;
    }
    // Common prefix, ending at a slash.
    let mut pfx = 0;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            break;
        }
        if *x == b'/' {
            pfx = i + 1;
        }
    }
    // Common suffix, starting at a slash; C reads the NUL terminators too,
    // so index `len` is a virtual 0 byte on both sides.
    let at = |s: &[u8], i: isize| -> u8 { s.get(i as usize).copied().unwrap_or(0) };
    let (la, lb) = (a.len() as isize, b.len() as isize);
    let adj = isize::from(pfx > 0);
    let (mut oa, mut ob) = (la, lb);
    let mut sfx = 0isize;
    while pfx as isize - adj <= oa
        && pfx as isize - adj <= ob
        && oa >= 0
        && ob >= 0
        && at(a, oa) == at(b, ob)
    {
        if at(a, oa) == b'/' {
            sfx = la - oa;
        }
        oa -= 1;
        ob -= 1;
    }
    let sfx = sfx as usize;
    let a_mid = a.len().saturating_sub(pfx + sfx);
    let b_mid = b.len().saturating_sub(pfx + sfx);
    let braces = pfx + sfx > 0;
    if braces {
        out.extend_from_slice(&a[..pfx]);
        out.push(b'{');
    }
    out.extend_from_slice(&a[pfx..pfx + a_mid]);
    out.extend_from_slice(b" => ");
    out.extend_from_slice(&b[pfx..pfx + b_mid]);
    if braces {
        out.push(b'}');
        out.extend_from_slice(&a[a.len() - sfx..]);
    }
}

fn decimal_width(mut n: u64) -> usize {
    let mut w = 1;
    while n >= 10 {
        n /= 10;
        w += 1;
    }
    w
}

/// git's `scale_linear`: at least one column for any non-zero change.
fn scale_linear(it: u64, width: u64, max_change: u64) -> u64 {
    if it == 0 || max_change == 0 {
        return 0;
    }
    1 + it * width.saturating_sub(1) / max_change
}

/// Writes `git diff --stat` output for `width` columns (git uses 80 when
/// stdout is not a terminal), including the summary line. Nothing is
/// written for an empty list, as git prints nothing then.
pub fn write_stat(w: &mut dyn Write, entries: &[StatEntry], width: usize) -> io::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let names: Vec<Vec<u8>> = entries.iter().map(display_name).collect();
    let max_len = names.iter().map(Vec::len).max().unwrap_or(0);
    let mut max_change = 0u64;
    let mut bin_width = 0usize;
    let mut number_width = 0usize;
    for e in entries {
        if let Some(b) = e.binary {
            bin_width = bin_width.max(14 + decimal_width(b.new) + decimal_width(b.old));
            number_width = 3;
        } else {
            max_change = max_change.max(e.insertions + e.deletions);
        }
    }
    let number_width = number_width.max(decimal_width(max_change));
    let width = width.max(16 + 6 + number_width);
    let mut graph_width = if max_change as usize + 4 > bin_width {
        max_change as usize
    } else {
        bin_width - 4
    };
    let mut name_width = max_len;
    if name_width + number_width + 6 + graph_width > width {
        let third = (width * 3 / 8).saturating_sub(number_width + 6);
        if graph_width > third {
            graph_width = third.max(6);
        }
        let rest = width.saturating_sub(number_width + 6 + graph_width);
        if name_width > rest {
            name_width = rest;
        } else {
            graph_width = width - number_width - 6 - name_width;
        }
    }

    let mut out = Vec::new();
    let (mut adds, mut dels) = (0u64, 0u64);
    for (e, name) in entries.iter().zip(&names) {
        let (prefix, shown) = scale_name(name, name_width);
        let padding = name_width.saturating_sub(prefix.len() + shown.len());
        out.push(b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(shown);
        out.extend(std::iter::repeat_n(b' ', padding));
        out.extend_from_slice(b" | ");
        if let Some(b) = e.binary {
            out.extend_from_slice(format!("{:>number_width$}", "Bin").as_bytes());
            if b.old != 0 || b.new != 0 {
                out.extend_from_slice(format!(" {} -> {} bytes", b.old, b.new).as_bytes());
            }
            out.push(b'\n');
            continue;
        }
        adds += e.insertions;
        dels += e.deletions;
        let (mut add, mut del) = (e.insertions, e.deletions);
        let total = add + del;
        if graph_width as u64 <= max_change {
            let mut t = scale_linear(total, graph_width as u64, max_change);
            if t < 2 && add > 0 && del > 0 {
                t = 2;
            }
            if add < del {
                add = scale_linear(add, graph_width as u64, max_change);
                del = t.saturating_sub(add);
            } else {
                del = scale_linear(del, graph_width as u64, max_change);
                add = t.saturating_sub(del);
            }
        }
        out.extend_from_slice(format!("{total:>number_width$}").as_bytes());
        if total > 0 {
            out.push(b' ');
        }
        out.extend(std::iter::repeat_n(b'+', add as usize));
        out.extend(std::iter::repeat_n(b'-', del as usize));
        out.push(b'\n');
    }
    out.extend_from_slice(summary_line(entries.len(), adds, dels).as_bytes());
    w.write_all(&out)
}

/// Cuts a name that does not fit from the left, `...`-prefixed and
/// restarted at a slash when there is one, like git.
fn scale_name(name: &[u8], name_width: usize) -> (&'static [u8], &[u8]) {
    if name.len() <= name_width {
        return (b"", name);
    }
    let len = name_width.saturating_sub(3);
    let mut shown = &name[name.len() - len..];
    if let Some(p) = shown.iter().position(|&c| c == b'/') {
        shown = &shown[p..];
    }
    (b"...", shown)
}

/// git's summary, e.g. ` 3 files changed, 1 insertion(+), 2 deletions(-)`;
/// a zero count is left out unless both are zero.
pub fn summary_line(files: usize, insertions: u64, deletions: u64) -> String {
    if files == 0 {
        return " 0 files changed\n".to_string();
    }
    let mut s = format!(" {files} file{} changed", if files == 1 { "" } else { "s" });
    if insertions > 0 || deletions == 0 {
        let p = if insertions == 1 { "" } else { "s" };
        s.push_str(&format!(", {insertions} insertion{p}(+)"));
    }
    if deletions > 0 || insertions == 0 {
        let p = if deletions == 1 { "" } else { "s" };
        s.push_str(&format!(", {deletions} deletion{p}(-)"));
    }
    s.push('\n');
    s
}

/// Writes `git diff --summary`: creations, deletions, renames and mode changes, one line each
/// (git's `show_summary`). `modes` holds each entry's (old, new) git mode; 0 for a side that
/// does not exist.
pub fn write_summary(
    w: &mut dyn Write,
    entries: &[StatEntry],
    modes: &[(u32, u32)],
) -> io::Result<()> {
    let mut out = Vec::new();
    for (e, &(old, new)) in entries.iter().zip(modes) {
        match e.status {
            Status::Added => {
                out.extend_from_slice(format!(" create mode {new:06o} ").as_bytes());
                push_quoted(&mut out, b"", e.path);
                out.push(b'\n');
            }
            Status::Deleted => {
                out.extend_from_slice(format!(" delete mode {old:06o} ").as_bytes());
                push_quoted(&mut out, b"", e.path);
                out.push(b'\n');
            }
            Status::Renamed { similarity } => {
                out.extend_from_slice(b" rename ");
                out.extend_from_slice(&display_name(e));
                out.extend_from_slice(format!(" ({}%)\n", similarity.min(100)).as_bytes());
                if old != new {
                    out.extend_from_slice(
                        format!(" mode change {old:06o} => {new:06o}\n").as_bytes(),
                    );
                }
            }
            Status::Modified | Status::TypeChanged if old != new => {
                out.extend_from_slice(format!(" mode change {old:06o} => {new:06o} ").as_bytes());
                push_quoted(&mut out, b"", e.path);
                out.push(b'\n');
            }
            Status::Modified | Status::TypeChanged => {}
        }
    }
    w.write_all(&out)
}

/// Writes `git diff --numstat`: `ins<TAB>del<TAB>name`, `-` counts for
/// binaries, renames in the same `{old => new}` form as `--stat`.
pub fn write_numstat(w: &mut dyn Write, entries: &[StatEntry]) -> io::Result<()> {
    let mut out = Vec::new();
    for e in entries {
        match e.binary {
            Some(_) => out.extend_from_slice(b"-\t-\t"),
            None => {
                out.extend_from_slice(format!("{}\t{}\t", e.insertions, e.deletions).as_bytes())
            }
        }
        out.extend_from_slice(&display_name(e));
        out.push(b'\n');
    }
    w.write_all(&out)
}

/// Writes `git diff --name-status`: `A`, `D`, `M`, `T` or `R<score>` (three
/// digits, e.g. `R096`) with the old and new path for renames.
pub fn write_name_status(w: &mut dyn Write, entries: &[StatEntry]) -> io::Result<()> {
    let mut out = Vec::new();
    for e in entries {
        match e.status {
            Status::Added => out.push(b'A'),
            Status::Deleted => out.push(b'D'),
            Status::Modified => out.push(b'M'),
            Status::TypeChanged => out.push(b'T'),
            Status::Renamed { similarity } => {
                out.extend_from_slice(format!("R{:03}", similarity.min(100)).as_bytes())
            }
        }
        out.push(b'\t');
        if let (Status::Renamed { .. }, Some(old)) = (e.status, e.old_path) {
            push_quoted(&mut out, b"", old);
            out.push(b'\t');
        }
        push_quoted(&mut out, b"", e.path);
        out.push(b'\n');
    }
    w.write_all(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ren(old: &str, new: &str) -> String {
        let mut v = Vec::new();
        pprint_rename(&mut v, old.as_bytes(), new.as_bytes());
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn rename_names() {
        assert_eq!(ren("d/moved.txt", "e/moved.txt"), "{d => e}/moved.txt");
        assert_eq!(ren("ren.txt", "ren-new.txt"), "ren.txt => ren-new.txt");
        assert_eq!(ren("a/b/c", "a/c"), "a/{b => }/c");
        assert_eq!(ren("a/x", "a/y"), "a/{x => y}");
    }

    #[test]
    fn summary() {
        assert_eq!(summary_line(1, 1, 0), " 1 file changed, 1 insertion(+)\n");
        assert_eq!(
            summary_line(2, 0, 0),
            " 2 files changed, 0 insertions(+), 0 deletions(-)\n"
        );
        assert_eq!(summary_line(3, 0, 2), " 3 files changed, 2 deletions(-)\n");
    }
}
