//! Parser for git extended diffs, `git format-patch` mails, GNU `diff -u` /
//! `diff -ruN` output and plain unified diffs.
//!
//! The input is split into lines that keep their `\n`; everything that is
//! not a file header (mail headers, commit messages, diffstats, `diff -ruN`
//! command lines, `Only in` lines, mail signatures) is skipped. Hunk bodies
//! are read strictly by the counts in their `@@` header, which is what makes
//! the precise errors below possible. See the module doc of `patch` for why
//! this is our own code rather than diffy's parser.

use super::quote::unquote;
use super::types::{FilePatch, Hunk, HunkLine, LineKind, PatchFormat, PatchSet};

/// Why an input is not a valid patch. Line numbers are 1-based lines of the
/// patch input, so a user can go straight to the offending line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing in the input looked like a file patch.
    #[error("no patch found in input")]
    NoPatch,
    /// An `@@` line that does not have the `@@ -a[,b] +c[,d] @@` shape.
    #[error("line {line}: malformed hunk header {text:?}")]
    BadHunkHeader {
        /// Line of the header.
        line: usize,
        /// The header as written (lossy UTF-8).
        text: String,
    },
    /// The input ended while the hunk still expected lines.
    #[error(
        "line {line}: hunk starting at line {header_line} is truncated: \
         {old_missing} old and {new_missing} new lines missing"
    )]
    TruncatedHunk {
        /// Last line of the input.
        line: usize,
        /// Line of the hunk's `@@` header.
        header_line: usize,
        /// Old-side lines still expected.
        old_missing: usize,
        /// New-side lines still expected.
        new_missing: usize,
    },
    /// The hunk body has more or fewer lines than its header says.
    #[error(
        "line {line}: hunk starting at line {header_line} has {old_found} old and \
         {new_found} new lines where its header says {old_len} and {new_len}"
    )]
    HunkCountMismatch {
        /// Line where the mismatch became evident.
        line: usize,
        /// Line of the hunk's `@@` header.
        header_line: usize,
        /// Old-side count from the header.
        old_len: usize,
        /// New-side count from the header.
        new_len: usize,
        /// Old-side lines found in the body.
        old_found: usize,
        /// New-side lines found in the body.
        new_found: usize,
    },
    /// A line inside a hunk that is not ` `, `+`, `-` or `\`.
    #[error("line {line}: expected a hunk line (' ', '+', '-' or '\\'), found {text:?}")]
    Garbage {
        /// The offending line.
        line: usize,
        /// Its text (lossy UTF-8, without line ending).
        text: String,
    },
    /// A file header that implies content changes but has no hunk.
    #[error("line {line}: file header for {path:?} has no hunks but implies content changes")]
    MissingHunks {
        /// Line of the file header.
        line: usize,
        /// The path named by the header (lossy UTF-8).
        path: String,
    },
    /// A mode that is not an octal number.
    #[error("line {line}: invalid file mode {text:?}")]
    BadMode {
        /// Line of the mode.
        line: usize,
        /// The mode text.
        text: String,
    },
    /// A `GIT binary patch` whose data does not decode.
    #[error("line {line}: bad binary patch: {reason}")]
    BadBinary {
        /// The line of the hunk's `literal`/`delta` header.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A `diff --git` section whose headers contradict each other (git refuses these too).
    #[error("line {line}: {what}")]
    BadGitHeader {
        /// Line of the offending header.
        line: usize,
        /// What contradicts what.
        what: String,
    },
    /// A `\ No newline at end of file` marker after a line that is not the last of its
    /// side of the file: honouring it would join two lines.
    #[error("line {line}: \"No newline at end of file\" on a line that is not the file's last")]
    MisplacedNoNewline {
        /// Line of the marker.
        line: usize,
    },
    /// A malformed git-quoted path or header line.
    #[error("line {line}: malformed path in {text:?}")]
    BadPath {
        /// The offending line.
        line: usize,
        /// Its text (lossy UTF-8).
        text: String,
    },
}

impl PatchSet {
    /// Parses every file patch in `input`. See [`ParseError`] for what is
    /// rejected; anything outside file patches is skipped.
    pub fn parse(input: &[u8]) -> Result<PatchSet, ParseError> {
        let mut parser = Parser {
            lines: input.split_inclusive(|&b| b == b'\n').collect(),
            pos: 0,
        };
        let mut files = Vec::new();
        while let Some(line) = parser.peek() {
            if line.starts_with(b"diff --git ") {
                files.push(parser.git_file()?);
            } else if parser.at_unified_header() {
                files.push(parser.unified_file(FilePatch::empty(PatchFormat::Unified))?);
            } else if let Some(fp) = gnu_binary(line) {
                files.push(fp);
                parser.pos += 1;
            } else {
                parser.pos += 1;
            }
        }
        if files.is_empty() {
            return Err(ParseError::NoPatch);
        }
        Ok(PatchSet { files })
    }
}

/// The git id of the empty blob; a new or deleted file with this id has no
/// content, so git emits no hunks for it.
const EMPTY_BLOB: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

/// The old and new names of a `---`/`+++` pair (`None` for `/dev/null`).
type NamePair = (Option<Vec<u8>>, Option<Vec<u8>>);

struct Parser<'a> {
    lines: Vec<&'a [u8]>,
    pos: usize,
}

/// Removes the line ending (`\n`, and a `\r` before it) from a header line.
fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(trim_eol(bytes)).into_owned()
}

/// `Binary files X and Y differ` as printed by GNU diff (outside git).
fn gnu_binary(line: &[u8]) -> Option<FilePatch> {
    let rest = trim_eol(line).strip_prefix(b"Binary files ")?;
    let rest = rest.strip_suffix(b" differ")?;
    let split = rest.windows(5).position(|w| w == b" and ")?;
    let mut fp = FilePatch::empty(PatchFormat::Unified);
    fp.binary = true;
    fp.old_path = dev_null(&rest[..split]);
    fp.new_path = dev_null(&rest[split + 5..]);
    fp.is_new = fp.old_path.is_none();
    fp.is_deleted = fp.new_path.is_none();
    Some(fp)
}

/// `prefix` + `path`: a `rename from` name given the `a/` or `b/` that `-p1` strips.
fn with_prefix(prefix: &[u8], path: &[u8]) -> Vec<u8> {
    [prefix, path].concat()
}

fn dev_null(path: &[u8]) -> Option<Vec<u8>> {
    (path != b"/dev/null").then(|| path.to_vec())
}

/// A path value (`rename from X`, `--- X`): git-quoted or raw up to a TAB.
fn path_value(value: &[u8], line: usize) -> Result<Vec<u8>, ParseError> {
    header_name(value, line).map(|(p, _)| p)
}

/// The name and timestamp of a `---`/`+++` line's value. The name is git-quoted, or raw up
/// to a TAB, or (as GNU patch reads a header whose TAB an editor or mailer turned into
/// spaces) raw up to the spaces before a trailing timestamp.
fn header_name(value: &[u8], line: usize) -> Result<(Vec<u8>, Option<&[u8]>), ParseError> {
    if value.first() == Some(&b'"') {
        let (p, used) = unquote(value).ok_or(ParseError::BadPath {
            line,
            text: lossy(value),
        })?;
        let rest = value[used..].trim_ascii_start();
        return Ok((p, (!rest.is_empty()).then_some(rest)));
    }
    if let Some(tab) = value.iter().position(|&b| b == b'\t') {
        return Ok((value[..tab].to_vec(), Some(&value[tab + 1..])));
    }
    for (i, _) in value.iter().enumerate().filter(|&(_, &b)| b == b' ') {
        let stamp = value[i..].trim_ascii_start();
        if super::stamp::parse(stamp).is_some() {
            let name = value[..i].trim_ascii_end();
            if !name.is_empty() {
                return Ok((name.to_vec(), Some(stamp)));
            }
        }
    }
    Ok((value.to_vec(), None))
}

fn parse_mode(text: &[u8], line: usize) -> Result<u32, ParseError> {
    let bad = || ParseError::BadMode {
        line,
        text: lossy(text),
    };
    if text.is_empty() || text.len() > 7 || !text.iter().all(|b| (b'0'..=b'7').contains(b)) {
        return Err(bad());
    }
    let s = std::str::from_utf8(text).map_err(|_| bad())?;
    u32::from_str_radix(s, 8).map_err(|_| bad())
}

fn parse_percent(text: &[u8]) -> Option<u8> {
    let digits = text.strip_suffix(b"%").unwrap_or(text);
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Parses the `@@ -a[,b] +c[,d] @@ section` header.
fn parse_hunk_header(line: &[u8]) -> Option<(usize, usize, usize, usize, Vec<u8>)> {
    fn range(s: &[u8]) -> Option<(usize, usize)> {
        let s = std::str::from_utf8(s).ok()?;
        let (start, len) = match s.split_once(',') {
            Some((a, b)) => (a, b),
            None => (s, "1"),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(start) || !digits(len) {
            return None;
        }
        Some((start.parse().ok()?, len.parse().ok()?))
    }
    let rest = trim_eol(line).strip_prefix(b"@@ -")?;
    let space = rest.iter().position(|&b| b == b' ')?;
    let (old_start, old_len) = range(&rest[..space])?;
    let rest = rest[space..].strip_prefix(b" +")?;
    let space = rest.iter().position(|&b| b == b' ')?;
    let (new_start, new_len) = range(&rest[..space])?;
    let section = rest[space..].strip_prefix(b" @@")?;
    let section = section.strip_prefix(b" ").unwrap_or(section);
    Some((old_start, old_len, new_start, new_len, section.to_vec()))
}

/// Splits the text after `diff --git ` into the two paths. With quoting the
/// split is unambiguous; without it, names may contain spaces, so (like git)
/// prefer the split where both names agree after their first component, or
/// the one that matches the `rename`/`copy` headers.
fn split_git_names(
    rest: &[u8],
    hint: Option<(&[u8], &[u8])>,
    line: usize,
) -> Result<(Vec<u8>, Vec<u8>), ParseError> {
    let bad = || ParseError::BadPath {
        line,
        text: lossy(rest),
    };
    if rest.first() == Some(&b'"') {
        let (a, used) = unquote(rest).ok_or_else(bad)?;
        let tail = rest[used..].strip_prefix(b" ").ok_or_else(bad)?;
        let b = path_value(tail, line)?;
        return Ok((a, b));
    }
    if rest.last() == Some(&b'"') {
        for (i, _) in rest.iter().enumerate().filter(|&(_, &c)| c == b'"') {
            if i > 0
                && rest[i - 1] == b' '
                && let Some((b, used)) = unquote(&rest[i..])
                && i + used == rest.len()
            {
                return Ok((rest[..i - 1].to_vec(), b));
            }
        }
    }
    let spaces: Vec<usize> = (0..rest.len()).filter(|&i| rest[i] == b' ').collect();
    let split = |i: usize| (&rest[..i], &rest[i + 1..]);
    if let Some((from, to)) = hint
        && let Some(&i) = spaces.iter().find(|&&i| {
            let (a, b) = split(i);
            a.ends_with(from) && b.ends_with(to)
        })
    {
        let (a, b) = split(i);
        return Ok((a.to_vec(), b.to_vec()));
    }
    let same_tail = spaces.iter().find(|&&i| {
        let (a, b) = split(i);
        match (
            a.iter().position(|&c| c == b'/'),
            b.iter().position(|&c| c == b'/'),
        ) {
            (Some(x), Some(y)) => a[x..] == b[y..],
            (None, None) => a == b,
            _ => false,
        }
    });
    let i = same_tail.or(spaces.first()).ok_or_else(bad)?;
    let (a, b) = split(*i);
    Ok((a.to_vec(), b.to_vec()))
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a [u8]> {
        self.lines.get(self.pos).copied()
    }

    fn line_no(&self) -> usize {
        self.pos + 1
    }

    fn at_unified_header(&self) -> bool {
        let next = self.lines.get(self.pos + 1);
        self.peek().is_some_and(|l| l.starts_with(b"--- "))
            && next.is_some_and(|l| l.starts_with(b"+++ "))
    }

    /// A `diff --git` file patch: extended headers, then `---`/`+++` and
    /// hunks, or a binary marker, or nothing (mode change, rename, empty
    /// file).
    fn git_file(&mut self) -> Result<FilePatch, ParseError> {
        let header_line = self.line_no();
        let names = trim_eol(self.peek().unwrap_or_default())
            .strip_prefix(b"diff --git ")
            .unwrap_or_default();
        self.pos += 1;
        let mut fp = FilePatch::empty(PatchFormat::Git);
        let (mut from, mut to) = (None, None);
        while let Some(raw) = self.peek() {
            let line = trim_eol(raw);
            let n = self.line_no();
            let value = |prefix: &[u8]| line.strip_prefix(prefix);
            if let Some(v) = value(b"old mode ") {
                fp.old_mode = Some(parse_mode(v, n)?);
            } else if let Some(v) = value(b"new mode ") {
                fp.new_mode = Some(parse_mode(v, n)?);
            } else if let Some(v) = value(b"deleted file mode ") {
                fp.old_mode = Some(parse_mode(v, n)?);
                fp.is_deleted = true;
            } else if let Some(v) = value(b"new file mode ") {
                fp.new_mode = Some(parse_mode(v, n)?);
                fp.is_new = true;
            } else if let Some(v) = value(b"rename from ").or(value(b"rename old ")) {
                from = Some(path_value(v, n)?);
                fp.is_rename = true;
            } else if let Some(v) = value(b"rename to ").or(value(b"rename new ")) {
                to = Some(path_value(v, n)?);
                fp.is_rename = true;
            } else if let Some(v) = value(b"copy from ") {
                from = Some(path_value(v, n)?);
                fp.is_copy = true;
            } else if let Some(v) = value(b"copy to ") {
                to = Some(path_value(v, n)?);
                fp.is_copy = true;
            } else if let Some(v) = value(b"similarity index ") {
                fp.similarity = parse_percent(v);
            } else if let Some(v) = value(b"dissimilarity index ") {
                fp.dissimilarity = parse_percent(v);
            } else if let Some(v) = value(b"index ") {
                self.index_line(&mut fp, v, n)?;
            } else {
                break;
            }
            self.pos += 1;
        }
        let bad = |line: usize, what: &str| ParseError::BadGitHeader {
            line,
            what: what.to_string(),
        };
        if (fp.is_rename || fp.is_copy) && (from.is_none() || to.is_none()) {
            return Err(bad(
                header_line,
                "a rename or copy names only one of its two paths",
            ));
        }
        if fp.is_new && (fp.is_deleted || fp.is_rename || fp.is_copy) {
            return Err(bad(
                header_line,
                "a new file cannot also be deleted, renamed or copied",
            ));
        }
        if fp.is_deleted && (fp.is_rename || fp.is_copy) {
            return Err(bad(
                header_line,
                "a deleted file cannot also be renamed or copied",
            ));
        }
        let hint = from.as_deref().zip(to.as_deref());
        // git reads the names from `rename`/`copy` or `---`/`+++` lines when the `diff --git`
        // line's own cannot be split (one name, as svn writes it, or an odd quoting).
        let (a, b) = match split_git_names(names, hint, header_line) {
            Ok(split) => split,
            Err(e) => match (&from, &to, self.unified_names()?) {
                (Some(f), Some(t), _) => (with_prefix(b"a/", f), with_prefix(b"b/", t)),
                (_, _, Some((old, new))) => match (old.or(new.clone()), new) {
                    (Some(o), Some(n)) => (o, n),
                    (Some(o), None) => (o.clone(), o),
                    _ => return Err(e),
                },
                // One name and nothing else to go by: the same path on both sides.
                _ if !names.is_empty() && !names.contains(&b' ') => {
                    (names.to_vec(), names.to_vec())
                }
                _ => return Err(e),
            },
        };
        fp.old_path = (!fp.is_new).then_some(a);
        fp.new_path = (!fp.is_deleted).then_some(b);

        if self.at_unified_header() {
            return self.git_unified(fp, header_line);
        }
        if let Some(l) = self.peek()
            && (l.starts_with(b"--- ") || l.starts_with(b"+++ ") || l.starts_with(b"@@ "))
        {
            return Err(bad(
                self.line_no(),
                "a hunk or `---` line without its `---`/`+++` pair",
            ));
        }
        match self.peek().map(trim_eol) {
            Some(l) if l.starts_with(b"Binary files ") => {
                fp.binary = true;
                self.pos += 1;
            }
            Some(b"GIT binary patch") => {
                fp.binary = true;
                self.pos += 1;
                let bad = |line: usize, reason: String| ParseError::BadBinary { line, reason };
                let n = self.line_no();
                let (fwd, used) =
                    super::binary::parse_hunk(&self.lines[self.pos..]).map_err(|e| bad(n, e))?;
                self.pos += used;
                fp.binary_forward = Some(fwd);
                if self
                    .peek()
                    .is_some_and(|l| l.starts_with(b"literal ") || l.starts_with(b"delta "))
                {
                    let n = self.line_no();
                    let (rev, used) = super::binary::parse_hunk(&self.lines[self.pos..])
                        .map_err(|e| bad(n, e))?;
                    self.pos += used;
                    fp.binary_reverse = Some(rev);
                }
            }
            _ => {}
        }
        if !fp.binary && implies_content_change(&fp) {
            return Err(ParseError::MissingHunks {
                line: header_line,
                path: lossy(names),
            });
        }
        Ok(fp)
    }

    /// The names on a `---`/`+++` pair at the current line (`None` for `/dev/null`).
    fn unified_names(&self) -> Result<Option<NamePair>, ParseError> {
        if !self.at_unified_header() {
            return Ok(None);
        }
        let n = self.line_no();
        let name = |l: &[u8], n| header_name(trim_eol(&l[4..]), n).map(|(p, _)| dev_null(&p));
        let minus = self.peek().unwrap_or_default();
        let plus = self.lines.get(self.pos + 1).copied().unwrap_or_default();
        Ok(Some((name(minus, n)?, name(plus, n + 1)?)))
    }

    /// The `---`/`+++` pair and hunks of a `diff --git` section, whose names must agree with
    /// the section's (git refuses a `+++ b/g` under `diff --git a/f b/f`).
    fn git_unified(&mut self, fp: FilePatch, header_line: usize) -> Result<FilePatch, ParseError> {
        let n = self.line_no();
        if let Some((old, new)) = self.unified_names()? {
            let check = |named: Option<Vec<u8>>, ours: &Option<Vec<u8>>, gone: bool, line| {
                let ok = match (&named, ours) {
                    (None, _) => gone,
                    (Some(x), Some(y)) => x == y,
                    (Some(_), None) => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(ParseError::BadGitHeader {
                        line,
                        what: format!(
                            "the name {:?} contradicts the `diff --git` line {header_line}",
                            named.as_deref().map_or("/dev/null".into(), lossy)
                        ),
                    })
                }
            };
            check(old, &fp.old_path, fp.is_new, n)?;
            check(new, &fp.new_path, fp.is_deleted, n + 1)?;
        }
        let (old_path, new_path) = (fp.old_path.clone(), fp.new_path.clone());
        let mut fp = self.unified_file(fp)?;
        // The `diff --git` line's names stand (a `---` of `/dev/null` only confirms a creation).
        fp.old_path = old_path;
        fp.new_path = new_path;
        Ok(fp)
    }

    /// `index OLD..NEW [MODE]`.
    fn index_line(&self, fp: &mut FilePatch, v: &[u8], n: usize) -> Result<(), ParseError> {
        let text = std::str::from_utf8(v).map_err(|_| ParseError::BadPath {
            line: n,
            text: lossy(v),
        })?;
        let (ids, mode) = match text.split_once(' ') {
            Some((ids, mode)) => (ids, Some(mode)),
            None => (text, None),
        };
        if let Some((old, new)) = ids.split_once("..") {
            fp.old_index = Some(old.to_string());
            fp.new_index = Some(new.to_string());
        }
        if let Some(mode) = mode {
            let mode = parse_mode(mode.as_bytes(), n)?;
            fp.old_mode = fp.old_mode.or(Some(mode));
            fp.new_mode = fp.new_mode.or(Some(mode));
        }
        Ok(())
    }

    /// `--- X` / `+++ Y` followed by one or more hunks.
    fn unified_file(&mut self, mut fp: FilePatch) -> Result<FilePatch, ParseError> {
        let minus = self.peek().unwrap_or_default();
        let plus = self.lines.get(self.pos + 1).copied().unwrap_or_default();
        let plus_line = self.line_no() + 1;
        let (old, old_stamp) = header_name(trim_eol(&minus[4..]), plus_line - 1)?;
        let (new, new_stamp) = header_name(trim_eol(&plus[4..]), plus_line)?;
        let old_epoch = old_stamp.is_some_and(super::stamp::is_epoch);
        let new_epoch = new_stamp.is_some_and(super::stamp::is_epoch);
        self.pos += 2;
        fp.old_path = dev_null(&old);
        fp.new_path = dev_null(&new);
        fp.is_new |= fp.old_path.is_none();
        fp.is_deleted |= fp.new_path.is_none();
        while self.peek().is_some_and(|l| l.starts_with(b"@@ ")) {
            if let Some(prev) = fp.hunks.last()
                && prev.lines.iter().any(|l| l.content.last() != Some(&b'\n'))
            {
                return Err(ParseError::MisplacedNoNewline {
                    line: self.line_no(),
                });
            }
            let hunk = self.hunk()?;
            fp.hunks.push(hunk);
        }
        if fp.hunks.is_empty() {
            return Err(ParseError::MissingHunks {
                line: plus_line,
                path: lossy(&new),
            });
        }
        if let [h] = fp.hunks.as_slice() {
            // GNU `diff -N` names a missing file with the epoch timestamp.
            fp.is_new |= old_epoch && h.old_start == 0 && h.old_len == 0;
            fp.is_deleted |= new_epoch && h.new_start == 0 && h.new_len == 0;
        }
        Ok(fp)
    }

    /// One hunk, read strictly by the counts in its header.
    fn hunk(&mut self) -> Result<Hunk, ParseError> {
        let header_line = self.line_no();
        let raw = self.peek().unwrap_or_default();
        let (old_start, old_len, new_start, new_len, section) =
            parse_hunk_header(raw).ok_or_else(|| ParseError::BadHunkHeader {
                line: header_line,
                text: lossy(raw),
            })?;
        self.pos += 1;
        let mut hunk = Hunk {
            old_start,
            old_len,
            new_start,
            new_len,
            section,
            lines: Vec::new(),
        };
        let (mut old_found, mut new_found) = (0usize, 0usize);
        let mut marker = None;
        let mismatch = |line, old_found, new_found| ParseError::HunkCountMismatch {
            line,
            header_line,
            old_len,
            new_len,
            old_found,
            new_found,
        };
        while old_found < old_len || new_found < new_len {
            let Some(line) = self.peek() else {
                return Err(ParseError::TruncatedHunk {
                    line: self.lines.len(),
                    header_line,
                    old_missing: old_len - old_found,
                    new_missing: new_len - new_found,
                });
            };
            let n = self.line_no();
            let (kind, content) = match line.first() {
                Some(b' ') => (LineKind::Context, &line[1..]),
                Some(b'-') => (LineKind::Removed, &line[1..]),
                Some(b'+') => (LineKind::Added, &line[1..]),
                Some(b'\\') if !hunk.lines.is_empty() => {
                    strip_newline(&mut hunk.lines);
                    marker.get_or_insert(n);
                    self.pos += 1;
                    continue;
                }
                // An empty line is a context line whose space was eaten by
                // an editor or mailer; GNU patch and git accept it too.
                Some(b'\n') | Some(b'\r') if trim_eol(line).is_empty() => (LineKind::Context, line),
                _ if line.starts_with(b"@@ ") || line.starts_with(b"diff ") => {
                    return Err(mismatch(n, old_found, new_found));
                }
                _ => {
                    return Err(ParseError::Garbage {
                        line: n,
                        text: lossy(line),
                    });
                }
            };
            if kind != LineKind::Added {
                old_found += 1;
            }
            if kind != LineKind::Removed {
                new_found += 1;
            }
            if old_found > old_len || new_found > new_len {
                return Err(mismatch(n, old_found, new_found));
            }
            hunk.lines.push(HunkLine {
                kind,
                content: content.to_vec(),
            });
            self.pos += 1;
        }
        if self.peek().is_some_and(|l| l.starts_with(b"\\")) && !hunk.lines.is_empty() {
            strip_newline(&mut hunk.lines);
            marker.get_or_insert(self.line_no());
            self.pos += 1;
        }
        if let Some(line) = marker
            && !no_newline_only_at_end(&hunk)
        {
            return Err(ParseError::MisplacedNoNewline { line });
        }
        if let Some(next) = self.peek()
            && self.looks_like_extra_hunk_line(next)
        {
            let (extra_old, extra_new) = self.count_extra_lines();
            return Err(mismatch(
                self.line_no(),
                old_found + extra_old,
                new_found + extra_new,
            ));
        }
        Ok(hunk)
    }

    /// After a complete hunk, a further ` `/`+`/`-` line means the header
    /// undercounts. `-- ` (mail signature) and a `---`/`+++` pair (next file)
    /// are legitimate followers.
    fn looks_like_extra_hunk_line(&self, line: &[u8]) -> bool {
        match line.first() {
            Some(b' ') | Some(b'+') => true,
            Some(b'-') => {
                trim_eol(line) != b"--" && trim_eol(line) != b"-- " && !self.at_unified_header()
            }
            _ => false,
        }
    }

    fn count_extra_lines(&self) -> (usize, usize) {
        let (mut old, mut new) = (0, 0);
        for line in &self.lines[self.pos..] {
            match line.first() {
                Some(b' ') => {
                    old += 1;
                    new += 1;
                }
                Some(b'-') => old += 1,
                Some(b'+') => new += 1,
                Some(b'\\') => {}
                _ => break,
            }
        }
        (old, new)
    }
}

/// Whether only the last line of each side lacks a line ending: a marker anywhere else would
/// join two lines of the result.
fn no_newline_only_at_end(hunk: &Hunk) -> bool {
    let side_ok = |mut side: Box<dyn Iterator<Item = &[u8]> + '_>| {
        let mut cut = false;
        side.all(|l| {
            let ok = !cut;
            cut = l.last() != Some(&b'\n');
            ok
        })
    };
    side_ok(Box::new(hunk.old_lines())) && side_ok(Box::new(hunk.new_lines()))
}

/// Folds a `\ No newline at end of file` marker into the previous line.
fn strip_newline(lines: &mut [HunkLine]) {
    if let Some(last) = lines.last_mut()
        && last.content.last() == Some(&b'\n')
    {
        last.content.pop();
    }
}

/// A git header without hunks is fine for a mode change, a pure rename or
/// copy, and an empty new or deleted file; but an `index` line with two
/// different ids (other than the empty blob) says the content changed.
fn implies_content_change(fp: &FilePatch) -> bool {
    let (Some(old), Some(new)) = (&fp.old_index, &fp.new_index) else {
        return false;
    };
    let empty = |id: &str| id.len() >= 7 && EMPTY_BLOB.starts_with(id);
    let zero = |id: &str| id.bytes().all(|b| b == b'0');
    if old == new {
        return false;
    }
    if fp.is_new && zero(old) && empty(new) {
        return false;
    }
    if fp.is_deleted && empty(old) && zero(new) {
        return false;
    }
    true
}
