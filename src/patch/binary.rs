//! git's `GIT binary patch` format: what `git diff --binary` writes and `git apply` reads.
//!
//! A binary file patch carries a forward hunk (old -> new) and a reverse hunk (new -> old), each
//! either `literal SIZE` (the whole new content) or `delta SIZE` (git's copy/insert delta
//! against the other side), zlib-deflated and written in git's base85 lines: a length character
//! (`A`-`Z` for 1-26 bytes, `a`-`z` for 27-52) and 5 characters per 4 bytes. git applies such a
//! patch only when the `index` line holds full blob ids (SHA-1 of `blob LEN\0` + content), which
//! it checks before and after; [`git_blob_id`] computes them.
//!
//! zlib is flate2's (the format's checksum and framing are zlib's, not raw deflate). base85
//! and the delta are small enough, and git-specific enough, to be our own: no maintained crate
//! writes git's delta format (gix reads it only).

use std::io::{self, Read, Write};

use flate2::Compression;
use sha1::{Digest, Sha1};

/// git's base85 alphabet (RFC 1924's).
const B85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// Bytes per base85 line, as git writes them.
const LINE_BYTES: usize = 52;

/// How one hunk of a binary patch encodes its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    /// The whole content.
    Literal,
    /// A git delta against the other side.
    Delta,
}

/// One decoded hunk of a `GIT binary patch`: its kind and its inflated data (the content for a
/// literal, the delta instructions for a delta).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryHunk {
    /// Literal or delta.
    pub kind: BinaryKind,
    /// Inflated bytes.
    pub data: Vec<u8>,
}

impl BinaryHunk {
    /// The content this hunk makes from `base` (the other side).
    pub fn apply(&self, base: &[u8]) -> Result<Vec<u8>, String> {
        match self.kind {
            BinaryKind::Literal => Ok(self.data.clone()),
            BinaryKind::Delta => apply_delta(base, &self.data),
        }
    }
}

/// git's id of a blob: SHA-1 of `blob LEN\0` followed by the content, in hex.
pub fn git_blob_id(content: &[u8]) -> String {
    let mut h = GitBlobHasher::new(content.len() as u64);
    h.update(content);
    h.finish()
}

/// [`git_blob_id`] over content that arrives in pieces (its length known up front).
pub struct GitBlobHasher(Sha1);

impl GitBlobHasher {
    /// A hasher for a blob of `len` bytes.
    pub fn new(len: u64) -> Self {
        let mut h = Sha1::new();
        h.update(format!("blob {len}\0").as_bytes());
        GitBlobHasher(h)
    }
    /// Feeds content.
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    /// The id in hex.
    pub fn finish(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The all-zero id git writes for a missing side.
pub const NULL_GIT_ID: &str = "0000000000000000000000000000000000000000";

/// git's id of the empty blob.
pub const EMPTY_GIT_ID: &str = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

/// Writes base85 lines of whatever is written to it; [`Base85Lines::finish`] writes the last
/// short line.
pub struct Base85Lines<W: Write> {
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> Base85Lines<W> {
    /// Lines go to `out`.
    pub fn new(out: W) -> Self {
        Base85Lines {
            out,
            pending: Vec::with_capacity(LINE_BYTES),
        }
    }

    fn line(&mut self, n: usize) -> io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..n).collect();
        let mut line = Vec::with_capacity(2 + chunk.len() / 4 * 5 + 5);
        line.push(if n <= 26 {
            b'A' + n as u8 - 1
        } else {
            b'a' + n as u8 - 27
        });
        for group in chunk.chunks(4) {
            let mut v: u32 = 0;
            for i in 0..4 {
                v = (v << 8) | u32::from(group.get(i).copied().unwrap_or(0));
            }
            let mut enc = [0u8; 5];
            for slot in enc.iter_mut().rev() {
                *slot = B85[(v % 85) as usize];
                v /= 85;
            }
            line.extend_from_slice(&enc);
        }
        line.push(b'\n');
        self.out.write_all(&line)
    }

    /// Writes the last line; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.pending.is_empty() {
            let n = self.pending.len();
            self.line(n)?;
        }
        Ok(self.out)
    }
}

impl<W: Write> Write for Base85Lines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while self.pending.len() >= LINE_BYTES {
            self.line(LINE_BYTES)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// zlib at git's default level.
fn deflate(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), Compression::default());
    // Writing to a Vec cannot fail.
    let _ = z.write_all(data);
    z.finish().unwrap_or_default()
}

/// Writes one hunk (`literal N` or `delta N`, base85 lines, a blank line) that turns `from`
/// into `to`: a delta when its deflated form is smaller than the literal's, as git chooses.
pub fn write_hunk(out: &mut dyn Write, from: &[u8], to: &[u8]) -> io::Result<()> {
    let literal = deflate(to);
    let delta = (!from.is_empty() && !to.is_empty())
        .then(|| make_delta(from, to))
        .map(|d| (d.len(), deflate(&d)))
        .filter(|(_, z)| z.len() < literal.len());
    let (word, size, z) = match delta {
        Some((len, z)) => ("delta", len, z),
        None => ("literal", to.len(), literal),
    };
    writeln!(out, "{word} {size}")?;
    let mut lines = Base85Lines::new(&mut *out);
    lines.write_all(&z)?;
    lines.finish()?;
    out.write_all(b"\n")
}

/// Writes a literal hunk of content read from `r` (`len` bytes), deflating as it goes, so a
/// huge file is never held whole.
pub fn write_literal_streamed(out: &mut dyn Write, r: &mut dyn Read, len: u64) -> io::Result<()> {
    writeln!(out, "literal {len}")?;
    let mut z =
        flate2::write::ZlibEncoder::new(Base85Lines::new(&mut *out), Compression::default());
    let copied = io::copy(r, &mut z)?;
    if copied != len {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "content changed between reads",
        ));
    }
    z.finish()?.finish()?;
    out.write_all(b"\n")
}

/// Decodes one base85 line (with its length character); `None` when malformed.
fn decode_line(line: &[u8]) -> Option<Vec<u8>> {
    let (&len_ch, rest) = line.split_first()?;
    let n = match len_ch {
        b'A'..=b'Z' => (len_ch - b'A' + 1) as usize,
        b'a'..=b'z' => (len_ch - b'a' + 27) as usize,
        _ => return None,
    };
    if rest.len() != n.div_ceil(4) * 5 {
        return None;
    }
    let mut out = Vec::with_capacity(n + 3);
    for group in rest.chunks(5) {
        let mut v: u64 = 0;
        for &c in group {
            let d = B85.iter().position(|&x| x == c)? as u64;
            v = v * 85 + d;
        }
        if v > u64::from(u32::MAX) {
            return None;
        }
        out.extend_from_slice(&(v as u32).to_be_bytes());
    }
    out.truncate(n);
    Some(out)
}

/// Parses one hunk from `lines` (starting at its `literal N`/`delta N` line, ending at the
/// blank line after its data). Returns the hunk and how many lines it used.
pub fn parse_hunk(lines: &[&[u8]]) -> Result<(BinaryHunk, usize), String> {
    let trim = |l: &[u8]| -> Vec<u8> {
        let mut l = l.to_vec();
        while l.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
            l.pop();
        }
        l
    };
    let first = trim(lines.first().ok_or("missing literal or delta line")?);
    let text = String::from_utf8_lossy(&first).into_owned();
    let (kind, size) = if let Some(n) = text.strip_prefix("literal ") {
        (BinaryKind::Literal, n)
    } else if let Some(n) = text.strip_prefix("delta ") {
        (BinaryKind::Delta, n)
    } else {
        return Err(format!("expected `literal N` or `delta N`, found `{text}`"));
    };
    let size: usize = size
        .trim()
        .parse()
        .map_err(|_| format!("bad size in `{text}`"))?;
    let mut z = Vec::new();
    let mut used = 1;
    while let Some(raw) = lines.get(used) {
        used += 1;
        let l = trim(raw);
        if l.is_empty() {
            break;
        }
        z.extend(
            decode_line(&l)
                .ok_or_else(|| format!("corrupt base85 line `{}`", String::from_utf8_lossy(&l)))?,
        );
    }
    // The size is the patch's word: allocate as the data arrives, not up front.
    let mut data = Vec::with_capacity(size.min(1 << 20));
    flate2::read::ZlibDecoder::new(z.as_slice())
        .take(size as u64 + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("corrupt binary data: {e}"))?;
    if data.len() != size {
        return Err(format!(
            "binary hunk says {size} bytes but holds {}",
            data.len()
        ));
    }
    Ok((BinaryHunk { kind, data }, used))
}

/// git's varint of a delta header (7 bits a byte, low first).
fn push_size(out: &mut Vec<u8>, mut n: usize) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn read_size(d: &[u8], pos: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let b = *d.get(*pos)?;
        *pos += 1;
        n |= ((b & 0x7f) as usize).checked_shl(shift)?;
        shift += 7;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
}

/// The block length the delta finder indexes the base by.
const BLOCK: usize = 16;

/// A git delta turning `base` into `target`: copies of base ranges found through an index of
/// its 16-byte blocks, inserts for the rest.
pub fn make_delta(base: &[u8], target: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    push_size(&mut out, base.len());
    push_size(&mut out, target.len());
    let mut index: rustc_hash::FxHashMap<&[u8], usize> = Default::default();
    for (i, block) in base.chunks_exact(BLOCK).enumerate().rev() {
        index.insert(block, i * BLOCK);
    }
    let mut pending: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < target.len() {
        let found = target.get(i..i + BLOCK).and_then(|w| index.get(w).copied());
        let Some(mut at) = found else {
            pending.push(target[i]);
            i += 1;
            continue;
        };
        // Extend backwards into what would have been inserted, then forwards.
        let mut start = i;
        while start > i - pending.len() && at > 0 && base[at - 1] == target[start - 1] {
            at -= 1;
            start -= 1;
        }
        pending.truncate(pending.len() - (i - start));
        let mut len = 0;
        while start + len < target.len()
            && at + len < base.len()
            && base[at + len] == target[start + len]
        {
            len += 1;
        }
        flush_inserts(&mut out, &mut pending);
        push_copies(&mut out, at, len);
        i = start + len;
    }
    flush_inserts(&mut out, &mut pending);
    out
}

fn flush_inserts(out: &mut Vec<u8>, pending: &mut Vec<u8>) {
    for chunk in pending.chunks(0x7f) {
        out.push(chunk.len() as u8);
        out.extend_from_slice(chunk);
    }
    pending.clear();
}

/// Copy instructions for `len` bytes at `offset` (each copies at most 0x10000 bytes).
fn push_copies(out: &mut Vec<u8>, mut offset: usize, mut len: usize) {
    while len > 0 {
        let n = len.min(0x10000);
        let mut op = 0x80u8;
        let mut args = Vec::with_capacity(7);
        for i in 0..4 {
            let b = ((offset >> (8 * i)) & 0xff) as u8;
            if b != 0 {
                op |= 1 << i;
                args.push(b);
            }
        }
        // A size of 0x10000 is written as no size bytes at all.
        let size = if n == 0x10000 { 0 } else { n };
        for i in 0..3 {
            let b = ((size >> (8 * i)) & 0xff) as u8;
            if b != 0 {
                op |= 0x10 << i;
                args.push(b);
            }
        }
        out.push(op);
        out.extend_from_slice(&args);
        offset += n;
        len -= n;
    }
}

/// Applies a git delta to `base`.
pub fn apply_delta(base: &[u8], delta: &[u8]) -> Result<Vec<u8>, String> {
    let bad = |what: &str| format!("corrupt binary delta: {what}");
    let mut pos = 0;
    let src_len = read_size(delta, &mut pos).ok_or_else(|| bad("header"))?;
    let dst_len = read_size(delta, &mut pos).ok_or_else(|| bad("header"))?;
    if src_len != base.len() {
        return Err(format!(
            "the binary delta is for a {src_len}-byte file, but this one has {} bytes",
            base.len()
        ));
    }
    let mut out = Vec::with_capacity(dst_len.min(1 << 20));
    while pos < delta.len() {
        let op = delta[pos];
        pos += 1;
        if op & 0x80 != 0 {
            let mut arg = |bits: u8, count: usize| -> Result<usize, String> {
                let mut v = 0usize;
                for i in 0..count {
                    if bits & (1 << i) != 0 {
                        let b = *delta.get(pos).ok_or_else(|| bad("truncated copy"))?;
                        pos += 1;
                        v |= (b as usize) << (8 * i);
                    }
                }
                Ok(v)
            };
            let offset = arg(op & 0x0f, 4)?;
            let size = match arg((op >> 4) & 0x07, 3)? {
                0 => 0x10000,
                n => n,
            };
            let piece = offset
                .checked_add(size)
                .and_then(|end| base.get(offset..end))
                .ok_or_else(|| bad("copy outside the base"))?;
            out.extend_from_slice(piece);
        } else if op != 0 {
            let n = op as usize;
            let piece = delta
                .get(pos..pos + n)
                .ok_or_else(|| bad("truncated insert"))?;
            out.extend_from_slice(piece);
            pos += n;
        } else {
            return Err(bad("reserved opcode 0"));
        }
        if out.len() > dst_len {
            return Err(bad("result longer than its header says"));
        }
    }
    if out.len() != dst_len {
        return Err(bad("result shorter than its header says"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hunk_round_trip(from: &[u8], to: &[u8]) -> Vec<u8> {
        let mut text = Vec::new();
        write_hunk(&mut text, from, to).unwrap();
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        let (h, used) = parse_hunk(&lines).unwrap();
        assert_eq!(used, lines.len());
        h.apply(from).unwrap()
    }

    #[test]
    fn git_ids_match_git() {
        // `git hash-object /dev/null` and `printf 'hello\n' | git hash-object --stdin`.
        assert_eq!(git_blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            git_blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn empty_sides_round_trip() {
        let mut text = Vec::new();
        write_hunk(&mut text, b"x", b"").unwrap();
        assert!(text.starts_with(b"literal 0\nH"));
        assert_eq!(hunk_round_trip(b"x", b""), b"");
        // What `git diff --binary` writes for an empty side decodes too.
        let (h, _) = parse_hunk(&[b"literal 0\n", b"HcmV?d00001\n", b"\n"]).unwrap();
        assert_eq!(h.data, b"");
    }

    #[test]
    fn delta_is_chosen_for_a_small_edit() {
        let base: Vec<u8> = (0..20000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut target = base.clone();
        target[40000] ^= 0xff;
        let mut text = Vec::new();
        write_hunk(&mut text, &base, &target).unwrap();
        assert!(
            text.starts_with(b"delta "),
            "{}",
            String::from_utf8_lossy(&text[..20])
        );
        assert_eq!(hunk_round_trip(&base, &target), target);
    }

    proptest! {
        #[test]
        fn hunks_round_trip(from in prop::collection::vec(any::<u8>(), 0..3000),
                            edits in prop::collection::vec((any::<u16>(), any::<u8>()), 0..20),
                            tail in prop::collection::vec(any::<u8>(), 0..100)) {
            let mut to = from.clone();
            for (at, b) in edits {
                if !to.is_empty() {
                    let i = at as usize % to.len();
                    to[i] = b;
                }
            }
            to.extend(tail);
            prop_assert_eq!(hunk_round_trip(&from, &to), to.clone());
            prop_assert_eq!(apply_delta(&from, &make_delta(&from, &to)).unwrap(), to);
        }
    }
}
