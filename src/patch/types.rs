//! Data types of a parsed patch. Everything is owned bytes: paths and lines
//! are `Vec<u8>` so that non-UTF-8 names and CRLF content survive untouched.

/// A set of file patches, in the order they appear in the input.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchSet {
    /// One entry per file touched by the patch.
    pub files: Vec<FilePatch>,
}

/// Which syntax introduced a file patch; tells the caller which prefix
/// convention (`a/` `b/`) to expect when stripping paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchFormat {
    /// Started by a `diff --git` line (git diff, git format-patch).
    Git,
    /// Plain `---`/`+++` unified diff (GNU `diff -u`, `diff -ruN`, others).
    Unified,
}

/// The change to one file.
///
/// Paths are kept exactly as written (git-unquoted, but with their `a/` `b/`
/// prefixes); use [`strip_components`] or [`FilePatch::old_path_stripped`] to
/// get repository paths, choosing the strip count like `patch -pN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// Syntax this file patch was written in.
    pub format: PatchFormat,
    /// Path before the change; `None` for `/dev/null` (file creation).
    pub old_path: Option<Vec<u8>>,
    /// Path after the change; `None` for `/dev/null` (file deletion).
    pub new_path: Option<Vec<u8>>,
    /// Mode before (`old mode`, `deleted file mode`, `index .. MODE`).
    pub old_mode: Option<u32>,
    /// Mode after (`new mode`, `new file mode`, `index .. MODE`).
    pub new_mode: Option<u32>,
    /// The file is created by this patch.
    pub is_new: bool,
    /// The file is deleted by this patch.
    pub is_deleted: bool,
    /// git `rename from`/`rename to`: the old path disappears.
    pub is_rename: bool,
    /// git `copy from`/`copy to`: the old path stays.
    pub is_copy: bool,
    /// Abbreviated blob id before, as written on the `index` line.
    pub old_index: Option<String>,
    /// Abbreviated blob id after, as written on the `index` line.
    pub new_index: Option<String>,
    /// `similarity index N%` of a rename or copy.
    pub similarity: Option<u8>,
    /// `dissimilarity index N%` of a rewrite.
    pub dissimilarity: Option<u8>,
    /// The change is binary (`Binary files .. differ` or `GIT binary patch`).
    pub binary: bool,
    /// A `GIT binary patch`'s forward hunk (old -> new), decoded; `None` for a bare `Binary
    /// files .. differ`, which carries no content.
    pub binary_forward: Option<super::binary::BinaryHunk>,
    /// Its reverse hunk (new -> old), when the patch has one (git always writes it).
    pub binary_reverse: Option<super::binary::BinaryHunk>,
    /// Text hunks, in file order.
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// An empty file patch of the given format, filled in by the parser.
    pub(crate) fn empty(format: PatchFormat) -> Self {
        FilePatch {
            format,
            old_path: None,
            new_path: None,
            old_mode: None,
            new_mode: None,
            is_new: false,
            is_deleted: false,
            is_rename: false,
            is_copy: false,
            old_index: None,
            new_index: None,
            similarity: None,
            dissimilarity: None,
            binary: false,
            binary_forward: None,
            binary_reverse: None,
            hunks: Vec::new(),
        }
    }

    /// The old path with `n` leading components removed (`patch -pN`).
    pub fn old_path_stripped(&self, n: usize) -> Option<&[u8]> {
        self.old_path
            .as_deref()
            .and_then(|p| strip_components(p, n))
    }

    /// The new path with `n` leading components removed (`patch -pN`).
    pub fn new_path_stripped(&self, n: usize) -> Option<&[u8]> {
        self.new_path
            .as_deref()
            .and_then(|p| strip_components(p, n))
    }
}

/// Removes `n` leading path components, as `patch -pN` does: each component
/// ends at a `/`, and runs of slashes count as one separator. Returns `None`
/// when the path has fewer than `n + 1` components (nothing would be left).
pub fn strip_components(path: &[u8], n: usize) -> Option<&[u8]> {
    let mut rest = path;
    for _ in 0..n {
        let slash = rest.iter().position(|&b| b == b'/')?;
        rest = &rest[slash + 1..];
        while let [b'/', tail @ ..] = rest {
            rest = tail;
        }
    }
    if rest.is_empty() { None } else { Some(rest) }
}

/// One `@@ -a,b +c,d @@` hunk, in git's numbers (see [`line_number`]): parsed from a patch,
/// its lines are [`HunkLine`]s that own their bytes; computed by the line diff
/// (`crate::diff::text`), they are each line's kind and index into the two texts' lines, so
/// rendering copies nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<L = HunkLine> {
    /// First old line (1-based; for an empty old side the line before it, 0 at file start).
    pub old_start: usize,
    /// Number of old lines (context + removed).
    pub old_len: usize,
    /// First new line (1-based; for an empty new side the line before it, 0 at file start).
    pub new_start: usize,
    /// Number of new lines (context + added).
    pub new_len: usize,
    /// Text after the closing `@@` (function context), without line ending; empty in a
    /// computed hunk (the renderer finds it in the old lines).
    pub section: Vec<u8>,
    /// Body lines in patch order.
    pub lines: Vec<L>,
}

/// git's number for the first line of a hunk side that starts at 0-based line `index` and
/// covers `len` lines: 1-based, or for an empty side the line before it (0 at the file's
/// start), as in git's `xdl_emit_hunk_hdr`.
pub fn line_number(index: usize, len: usize) -> usize {
    if len == 0 { index } else { index + 1 }
}

/// One side of a hunk header, `start[,len]` in git's numbers: the `,1` is omitted, an empty
/// side keeps its `,0`.
pub fn header_range(start: usize, len: usize) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

/// The 0-based index of the first line of a side numbered `start` (git's number) with `len`
/// lines: the inverse of [`line_number`].
fn line_index(start: usize, len: usize) -> usize {
    if len == 0 {
        start
    } else {
        start.saturating_sub(1)
    }
}

impl<L> Hunk<L> {
    /// The header as git writes it, used in error messages.
    pub fn header(&self) -> String {
        format!(
            "@@ -{} +{} @@",
            header_range(self.old_start, self.old_len),
            header_range(self.new_start, self.new_len)
        )
    }

    /// The old lines it covers, as 0-based indices.
    pub fn old_range(&self) -> std::ops::Range<usize> {
        let at = line_index(self.old_start, self.old_len);
        at..at + self.old_len
    }

    /// The new lines it covers, as 0-based indices.
    pub fn new_range(&self) -> std::ops::Range<usize> {
        let at = line_index(self.new_start, self.new_len);
        at..at + self.new_len
    }
}

impl Hunk {
    /// Lines the hunk expects in the old file (context and removed).
    pub fn old_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines
            .iter()
            .filter(|l| l.kind != LineKind::Added)
            .map(|l| l.content.as_slice())
    }

    /// Lines the hunk produces in the new file (context and added).
    pub fn new_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines
            .iter()
            .filter(|l| l.kind != LineKind::Removed)
            .map(|l| l.content.as_slice())
    }
}

/// Role of a hunk line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// ` ` line present in both versions.
    Context,
    /// `-` line only in the old version.
    Removed,
    /// `+` line only in the new version.
    Added,
}

/// One hunk line. `content` includes its line ending (`\n` or `\r\n`, kept
/// as bytes); a line followed by `\ No newline at end of file` has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// Context, removed or added.
    pub kind: LineKind,
    /// The line's bytes without the leading marker character.
    pub content: Vec<u8>,
}
