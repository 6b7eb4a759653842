//! The patch writer: git's extended unified diff format.
//!
//! Output matches `git diff` with default settings (renames on, 3 lines of
//! context, default function-name finder, default colours when enabled),
//! except that the `index` line carries rewind's BLAKE3 short ids.

use std::io::{self, BufRead, Write};

use super::quote::push_quoted;
use super::text::{self, BINARY_PEEK_LEN, DiffOptions, LineDiff, LineKind};
use super::types::{Change, EntryKind, Side};
use crate::patch::binary::{self, GitBlobHasher, NULL_GIT_ID, git_blob_id};

/// Options for [`write_patch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PatchOptions {
    /// Context lines and the diff deadline.
    pub diff: DiffOptions,
    /// Emit git's default ANSI colours (bold meta lines, cyan `@@`, red `-`,
    /// green `+`). Off by default, as for a pipe.
    pub color: bool,
    /// Write binary changes as git's `GIT binary patch` (with git's full blob ids on the
    /// `index` line, which `git apply` needs) instead of `Binary files .. differ`: what
    /// `git diff --binary` does.
    pub binary: bool,
}

/// What a rendered change amounts to, for `--stat`/`--numstat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStat {
    /// Added lines (0 for binary).
    pub insertions: u64,
    /// Removed lines (0 for binary).
    pub deletions: u64,
    /// Either side is binary; sizes are then meaningful.
    pub binary: bool,
    /// Old size in bytes as `--stat` shows it for binaries (0 when the
    /// content is unchanged, as git does).
    pub old_size: u64,
    /// New size in bytes, see `old_size`.
    pub new_size: u64,
    /// The line diff hit its deadline and was rendered as a full rewrite.
    pub timed_out: bool,
}

const RESET: &str = "\x1b[m";

/// Colour escapes; all empty when colour is off.
struct Palette {
    meta: String,
    frag: String,
    old: String,
    new: String,
    reset: &'static str,
}

impl Palette {
    fn new(color: bool) -> Self {
        use anstyle::{AnsiColor, Style};
        if !color {
            return Palette {
                meta: String::new(),
                frag: String::new(),
                old: String::new(),
                new: String::new(),
                reset: "",
            };
        }
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into())).render().to_string();
        Palette {
            meta: Style::new().bold().render().to_string(),
            frag: fg(AnsiColor::Cyan),
            old: fg(AnsiColor::Red),
            new: fg(AnsiColor::Green),
            // git writes the short reset `ESC[m`, not anstyle's `ESC[0m`.
            reset: RESET,
        }
    }
}

/// Writes one change exactly as `git diff` would and returns its line
/// statistics. `old_content`/`new_content` are the blob bytes (for symlinks,
/// the target); the side that does not exist is ignored.
///
/// A file <-> symlink change is written as git writes it: a deletion
/// followed by an addition; its statistics are those of a plain content
/// diff, matching `git diff --numstat`.
pub fn write_patch(
    w: &mut dyn Write,
    change: &Change,
    old_content: &[u8],
    new_content: &[u8],
    opts: &PatchOptions,
) -> io::Result<FileStat> {
    let pal = Palette::new(opts.color);
    let mut out = Vec::new();
    // git's full ids on the index line, for a binary change written as `GIT binary patch`.
    let full = |content: &[u8]| opts.binary && text::is_binary(content);
    let id = |content: &[u8]| git_blob_id(content);
    let stat = match *change {
        Change::Added { new } => {
            let f = full(new_content);
            added_header(&mut out, &pal, &new, f.then(|| id(new_content)).as_deref());
            body(&mut out, &pal, opts, None, Some(&new), b"", new_content)
        }
        Change::Deleted { old } => {
            let f = full(old_content);
            deleted_header(&mut out, &pal, &old, f.then(|| id(old_content)).as_deref());
            body(&mut out, &pal, opts, Some(&old), None, old_content, b"")
        }
        Change::Modified { old, new } if old.kind.is_type_change(new.kind) => {
            let f = full(old_content);
            deleted_header(&mut out, &pal, &old, f.then(|| id(old_content)).as_deref());
            body(&mut out, &pal, opts, Some(&old), None, old_content, b"");
            let f = full(new_content);
            added_header(&mut out, &pal, &new, f.then(|| id(new_content)).as_deref());
            body(&mut out, &pal, opts, None, Some(&new), b"", new_content);
            content_stat(old_content, new_content, &opts.diff)
        }
        Change::Modified { old, new } if old.kind == new.kind && old.id == new.id => {
            return Ok(FileStat::default());
        }
        Change::Modified { old, new } | Change::Renamed { old, new, .. } => {
            let similarity = match *change {
                Change::Renamed { similarity, .. } => Some(similarity),
                _ => None,
            };
            let f = full(old_content) || full(new_content);
            let ids = f.then(|| (id(old_content), id(new_content)));
            let ids = ids.as_ref().map(|(o, n)| (o.as_str(), n.as_str()));
            pair_header(&mut out, &pal, &old, &new, similarity, ids);
            if old.id == new.id {
                mode_only_stat(old_content)
            } else {
                let (o, n) = (Some(&old), Some(&new));
                body(&mut out, &pal, opts, o, n, old_content, new_content)
            }
        }
    };
    w.write_all(&out)?;
    Ok(stat)
}

/// Statistics of an unchanged blob: no lines, and for binaries no sizes
/// either (git prints just `Bin`).
fn mode_only_stat(content: &[u8]) -> FileStat {
    FileStat {
        binary: text::is_binary(content),
        ..FileStat::default()
    }
}

/// Statistics of a content diff without rendering it.
fn content_stat(old: &[u8], new: &[u8], opts: &DiffOptions) -> FileStat {
    if text::is_binary(old) || text::is_binary(new) {
        return FileStat {
            binary: true,
            old_size: old.len() as u64,
            new_size: new.len() as u64,
            ..FileStat::default()
        };
    }
    let d = text::line_diff(old, new, opts);
    FileStat {
        insertions: d.insertions as u64,
        deletions: d.deletions as u64,
        timed_out: d.timed_out,
        ..FileStat::default()
    }
}

fn meta_line(out: &mut Vec<u8>, pal: &Palette, line: &[u8]) {
    out.extend_from_slice(pal.meta.as_bytes());
    out.extend_from_slice(line);
    out.extend_from_slice(pal.reset.as_bytes());
    out.push(b'\n');
}

fn diff_git_line(out: &mut Vec<u8>, pal: &Palette, old_path: &[u8], new_path: &[u8]) {
    let mut l = b"diff --git ".to_vec();
    push_quoted(&mut l, b"a/", old_path);
    l.push(b' ');
    push_quoted(&mut l, b"b/", new_path);
    meta_line(out, pal, &l);
}

fn index_line(out: &mut Vec<u8>, pal: &Palette, old: &str, new: &str, mode: Option<EntryKind>) {
    let mut l = format!("index {old}..{new}");
    if let Some(k) = mode {
        l.push(' ');
        l.push_str(k.git_mode());
    }
    meta_line(out, pal, l.as_bytes());
}

const NULL_ID: &str = "0000000";

/// BLAKE3 of no bytes: the id of every empty file.
const EMPTY_BLAKE3: [u8; 32] = [
    0xaf, 0x13, 0x49, 0xb9, 0xf5, 0xf9, 0xa1, 0xa6, 0xa0, 0x40, 0x4d, 0xea, 0x36, 0xdc, 0xc9, 0x49,
    0x9b, 0xcb, 0x25, 0xc9, 0xad, 0xc1, 0x12, 0xb7, 0xcc, 0x9a, 0x93, 0xca, 0xe4, 0x1f, 0x32, 0x62,
];

/// The id an `index` line shows for a side: its short BLAKE3 id, except that an empty file
/// shows git's empty-blob id `e69de29`. GNU patch recognises that id (as it does the all-zero
/// one) and needs it to tell that a hunkless patch deletes or keeps an *empty* file; with any
/// other id it takes the deletion of an empty file for a reversed patch and skips it.
fn shown_id(side: &Side) -> String {
    if side.id == EMPTY_BLAKE3 {
        "e69de29".to_string()
    } else {
        side.short_id()
    }
}

/// The id an `index` line shows: git's full blob id when the content is given (a `GIT binary
/// patch` needs it), else [`shown_id`].
fn index_id(side: &Side, full: Option<&str>) -> String {
    match full {
        Some(id) => id.to_string(),
        None => shown_id(side),
    }
}

/// The missing side's id: git's full null id next to full ids.
fn null_id(full: bool) -> &'static str {
    if full { NULL_GIT_ID } else { NULL_ID }
}

/// `full`: git's id of the new content, when the index line shows git's full ids.
fn added_header(out: &mut Vec<u8>, pal: &Palette, new: &Side, full: Option<&str>) {
    diff_git_line(out, pal, new.path, new.path);
    meta_line(
        out,
        pal,
        format!("new file mode {}", new.kind.git_mode()).as_bytes(),
    );
    let id = index_id(new, full);
    index_line(out, pal, null_id(full.is_some()), &id, None);
}

/// `full`: git's id of the old content, when the index line shows git's full ids.
fn deleted_header(out: &mut Vec<u8>, pal: &Palette, old: &Side, full: Option<&str>) {
    diff_git_line(out, pal, old.path, old.path);
    meta_line(
        out,
        pal,
        format!("deleted file mode {}", old.kind.git_mode()).as_bytes(),
    );
    let id = index_id(old, full);
    index_line(out, pal, &id, null_id(full.is_some()), None);
}

/// Header of a change with both sides: modification or rename. `full`: git's ids of both
/// contents, when the index line shows git's full ids.
fn pair_header(
    out: &mut Vec<u8>,
    pal: &Palette,
    old: &Side,
    new: &Side,
    similarity: Option<u8>,
    full: Option<(&str, &str)>,
) {
    diff_git_line(out, pal, old.path, new.path);
    if old.kind != new.kind {
        meta_line(
            out,
            pal,
            format!("old mode {}", old.kind.git_mode()).as_bytes(),
        );
        meta_line(
            out,
            pal,
            format!("new mode {}", new.kind.git_mode()).as_bytes(),
        );
    }
    if let Some(sim) = similarity {
        meta_line(
            out,
            pal,
            format!("similarity index {}%", sim.min(100)).as_bytes(),
        );
        let mut l = b"rename from ".to_vec();
        push_quoted(&mut l, b"", old.path);
        meta_line(out, pal, &l);
        let mut l = b"rename to ".to_vec();
        push_quoted(&mut l, b"", new.path);
        meta_line(out, pal, &l);
    }
    if old.id != new.id {
        let mode = (old.kind == new.kind).then_some(old.kind);
        let (o, n) = (
            index_id(old, full.map(|f| f.0)),
            index_id(new, full.map(|f| f.1)),
        );
        index_line(out, pal, &o, &n, mode);
    }
}

/// `a/P` / `b/P` label, or `/dev/null` for a missing side.
fn label(prefix: &[u8], side: Option<&Side>) -> Vec<u8> {
    match side {
        Some(s) => {
            let mut l = Vec::new();
            push_quoted(&mut l, prefix, s.path);
            l
        }
        None => b"/dev/null".to_vec(),
    }
}

/// `--- a/P` / `+++ b/P`; git adds a TAB after a label containing a space so
/// that `patch` does not cut the name there.
fn file_pair_lines(out: &mut Vec<u8>, pal: &Palette, old: Option<&Side>, new: Option<&Side>) {
    for (mark, l) in [(b"--- ", label(b"a/", old)), (b"+++ ", label(b"b/", new))] {
        out.extend_from_slice(pal.meta.as_bytes());
        out.extend_from_slice(mark);
        out.extend_from_slice(&l);
        out.extend_from_slice(pal.reset.as_bytes());
        if l.contains(&b' ') {
            out.push(b'\t');
        }
        out.push(b'\n');
    }
}

fn binary_line(out: &mut Vec<u8>, old: Option<&Side>, new: Option<&Side>) {
    let mut l = b"Binary files ".to_vec();
    l.extend_from_slice(&label(b"a/", old));
    l.extend_from_slice(b" and ");
    l.extend_from_slice(&label(b"b/", new));
    l.extend_from_slice(b" differ\n");
    // git does not colour this line.
    out.extend_from_slice(&l);
}

/// Content part of a patch: binary notice or `---`/`+++` plus hunks.
fn body(
    out: &mut Vec<u8>,
    pal: &Palette,
    opts: &PatchOptions,
    old: Option<&Side>,
    new: Option<&Side>,
    old_content: &[u8],
    new_content: &[u8],
) -> FileStat {
    if text::is_binary(old_content) || text::is_binary(new_content) {
        if opts.binary {
            out.extend_from_slice(b"GIT binary patch\n");
            // Writing into a Vec cannot fail.
            let _ = binary::write_hunk(out, old_content, new_content);
            let _ = binary::write_hunk(out, new_content, old_content);
        } else {
            binary_line(out, old, new);
        }
        return FileStat {
            binary: true,
            old_size: old_content.len() as u64,
            new_size: new_content.len() as u64,
            ..FileStat::default()
        };
    }
    let d = text::line_diff(old_content, new_content, &opts.diff);
    if !d.hunks.is_empty() {
        file_pair_lines(out, pal, old, new);
        write_hunks(out, pal, &d);
    }
    FileStat {
        insertions: d.insertions as u64,
        deletions: d.deletions as u64,
        timed_out: d.timed_out,
        ..FileStat::default()
    }
}

/// One side of `@@ -a,b +c,d @@` for a side starting at 0-based line `index`.
fn range(index: usize, len: usize) -> String {
    crate::patch::header_range(crate::patch::line_number(index, len), len)
}

fn hunk_header(out: &mut Vec<u8>, pal: &Palette, h: &text::Hunk, func: &[u8]) {
    let head = h.header();
    out.extend_from_slice(pal.frag.as_bytes());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(pal.reset.as_bytes());
    if !func.is_empty() {
        // xdiff formats the header into a 128-byte buffer.
        let room = 128usize.saturating_sub(head.len() + 2);
        out.push(b' ');
        out.extend_from_slice(pal.reset.as_bytes());
        out.extend_from_slice(&func[..func.len().min(room)]);
        out.extend_from_slice(pal.reset.as_bytes());
    }
    out.push(b'\n');
}

/// One `-`/`+`/` ` line, with git's colouring and the "No newline" marker.
fn body_line(out: &mut Vec<u8>, pal: &Palette, tag: LineKind, line: &[u8]) {
    let sign = match tag {
        LineKind::Context => b' ',
        LineKind::Removed => b'-',
        LineKind::Added => b'+',
    };
    let (body, has_nl) = match line.strip_suffix(b"\n") {
        Some(b) => (b, true),
        None => (line, false),
    };
    if pal.reset.is_empty() {
        out.push(sign);
        out.extend_from_slice(line);
    } else if tag == LineKind::Added {
        // git colours the sign and the text separately for added lines and
        // highlights trailing whitespace (core.whitespace blank-at-eol).
        let keep = body.len()
            - body
                .iter()
                .rev()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\r'))
                .count();
        let (text, ws) = body.split_at(keep);
        out.extend_from_slice(pal.new.as_bytes());
        out.push(b'+');
        out.extend_from_slice(pal.reset.as_bytes());
        if !text.is_empty() {
            out.extend_from_slice(pal.new.as_bytes());
            out.extend_from_slice(text);
            out.extend_from_slice(pal.reset.as_bytes());
        }
        if !ws.is_empty() {
            out.extend_from_slice(WHITESPACE_ERROR.as_bytes());
            out.extend_from_slice(ws);
            out.extend_from_slice(pal.reset.as_bytes());
        }
    } else {
        // The reset goes before a trailing CR, as in git's emit_line_0.
        let (text, cr) = match body.strip_suffix(b"\r") {
            Some(t) => (t, &b"\r"[..]),
            None => (body, &b""[..]),
        };
        if tag == LineKind::Removed {
            out.extend_from_slice(pal.old.as_bytes());
        }
        out.push(sign);
        out.extend_from_slice(text);
        out.extend_from_slice(pal.reset.as_bytes());
        out.extend_from_slice(cr);
    }
    if has_nl {
        if !pal.reset.is_empty() {
            out.push(b'\n');
        }
    } else {
        no_newline_marker(out, pal);
    }
}

/// git's default `color.diff.whitespace`: red background.
const WHITESPACE_ERROR: &str = "\x1b[41m";

fn no_newline_marker(out: &mut Vec<u8>, pal: &Palette) {
    out.push(b'\n');
    out.extend_from_slice(b"\\ No newline at end of file");
    out.extend_from_slice(pal.reset.as_bytes());
    out.push(b'\n');
}

fn write_hunks(out: &mut Vec<u8>, pal: &Palette, d: &LineDiff) {
    for h in &d.hunks {
        let func = text::function_context(&d.old_lines, h.old_range().start);
        hunk_header(out, pal, h, func);
        for &(tag, i) in &h.lines {
            let line = match tag {
                LineKind::Context | LineKind::Removed => d.old_lines.get(i),
                LineKind::Added => d.new_lines.get(i),
            };
            body_line(out, pal, tag, line.copied().unwrap_or_default());
        }
    }
}

/// Opens (or re-opens) a blob's content as a byte stream; see
/// [`write_patch_streamed`].
pub type Opener<'r> = dyn FnMut() -> io::Result<Box<dyn BufRead + 'r>> + 'r;

/// Writes an [`Change::Added`] or [`Change::Deleted`] change whose content
/// is streamed, so that a huge file never sits in memory.
///
/// The hunk header (`@@ -0,0 +1,N @@`) must state the line count before the
/// first line, so the content is read twice: `open` is called once to count
/// lines and detect binaries (NUL in the first 8000 bytes) and once to copy
/// the lines out. Both reads must yield the same bytes (they do for a
/// content-addressed blob); if the second read disagrees an `InvalidData`
/// error is returned. Other change kinds give `InvalidInput`.
pub fn write_patch_streamed(
    w: &mut dyn Write,
    change: &Change,
    open: &mut Opener<'_>,
    opts: &PatchOptions,
) -> io::Result<FileStat> {
    let pal = Palette::new(opts.color);
    let (old, new, sign) = match change {
        Change::Added { new } => (None, Some(new), b'+'),
        Change::Deleted { old } => (Some(old), None, b'-'),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "streamed patches are only for added or deleted files",
            ));
        }
    };
    let scan = scan(&mut *open()?)?;
    // A `GIT binary patch` needs git's id of the content, whose header needs the length: one
    // more read, only for binaries written that way.
    let full = if scan.binary && opts.binary {
        let mut h = GitBlobHasher::new(scan.bytes);
        let mut r = open()?;
        loop {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            h.update(buf);
            let n = buf.len();
            r.consume(n);
        }
        Some(h.finish())
    } else {
        None
    };
    let mut head = Vec::new();
    match (old, new) {
        (None, Some(n)) => added_header(&mut head, &pal, n, full.as_deref()),
        (Some(o), _) => deleted_header(&mut head, &pal, o, full.as_deref()),
        (None, None) => {}
    }
    let mut stat = FileStat::default();
    if scan.binary && full.is_some() {
        head.extend_from_slice(b"GIT binary patch\n");
        w.write_all(&head)?;
        let mut content = open()?;
        if new.is_some() {
            binary::write_literal_streamed(w, &mut content, scan.bytes)?;
            binary::write_hunk(w, b"", b"")?;
        } else {
            binary::write_hunk(w, b"", b"")?;
            binary::write_literal_streamed(w, &mut content, scan.bytes)?;
        }
    } else if scan.binary {
        binary_line(&mut head, old, new);
        w.write_all(&head)?;
    }
    if scan.binary {
        stat.binary = true;
        if new.is_some() {
            stat.new_size = scan.bytes;
        } else {
            stat.old_size = scan.bytes;
        }
        return Ok(stat);
    }
    if new.is_some() {
        stat.insertions = scan.lines;
    } else {
        stat.deletions = scan.lines;
    }
    if scan.lines == 0 {
        w.write_all(&head)?;
        return Ok(stat);
    }
    file_pair_lines(&mut head, &pal, old, new);
    let r = range(0, scan.lines as usize);
    let header = if new.is_some() {
        format!("@@ -0,0 +{r} @@")
    } else {
        format!("@@ -{r} +0,0 @@")
    };
    head.extend_from_slice(pal.frag.as_bytes());
    head.extend_from_slice(header.as_bytes());
    head.extend_from_slice(pal.reset.as_bytes());
    head.push(b'\n');
    w.write_all(&head)?;
    copy_lines(w, &mut *open()?, &pal, sign, &scan)?;
    Ok(stat)
}

/// What the first pass over a streamed blob found.
struct Scan {
    bytes: u64,
    lines: u64,
    binary: bool,
}

fn scan(r: &mut dyn BufRead) -> io::Result<Scan> {
    let mut s = Scan {
        bytes: 0,
        lines: 0,
        binary: false,
    };
    let mut last = b'\n';
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        if s.bytes < BINARY_PEEK_LEN as u64 {
            let peek = (BINARY_PEEK_LEN as u64 - s.bytes).min(buf.len() as u64) as usize;
            s.binary |= buf[..peek].contains(&0);
        }
        s.lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[buf.len() - 1];
        s.bytes += buf.len() as u64;
        let n = buf.len();
        r.consume(n);
    }
    if last != b'\n' {
        s.lines += 1;
    }
    Ok(s)
}

/// Second pass: copies lines with their sign. Without colour this goes
/// chunk by chunk, so even a single giant line is never held whole; with
/// colour each line is buffered to place the escapes as git does.
fn copy_lines(
    w: &mut dyn Write,
    r: &mut dyn BufRead,
    pal: &Palette,
    sign: u8,
    scan: &Scan,
) -> io::Result<()> {
    let mismatch = || io::Error::new(io::ErrorKind::InvalidData, "content changed between reads");
    let tag = if sign == b'+' {
        LineKind::Added
    } else {
        LineKind::Removed
    };
    let (mut total, mut lines) = (0u64, 0u64);
    if !pal.reset.is_empty() {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = r.read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            total += n as u64;
            lines += 1;
            if total > scan.bytes {
                return Err(mismatch());
            }
            let mut out = Vec::with_capacity(line.len() + 32);
            body_line(&mut out, pal, tag, &line);
            w.write_all(&out)?;
        }
    } else {
        let mut at_start = true;
        loop {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            total += buf.len() as u64;
            if total > scan.bytes {
                return Err(mismatch());
            }
            let mut rest = buf;
            while !rest.is_empty() {
                if at_start {
                    w.write_all(&[sign])?;
                    at_start = false;
                }
                match rest.iter().position(|&b| b == b'\n') {
                    Some(p) => {
                        w.write_all(&rest[..=p])?;
                        lines += 1;
                        at_start = true;
                        rest = &rest[p + 1..];
                    }
                    None => {
                        w.write_all(rest)?;
                        rest = &[];
                    }
                }
            }
            let n = buf.len();
            r.consume(n);
        }
        if !at_start {
            lines += 1;
            let mut m = Vec::new();
            no_newline_marker(&mut m, pal);
            w.write_all(&m)?;
        }
    }
    if total != scan.bytes || lines != scan.lines {
        return Err(mismatch());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn empty_blake3_constant() {
        assert_eq!(blake3::hash(b"").as_bytes(), &super::EMPTY_BLAKE3);
    }
}
