//! Blob and chunk records, and the segment log that holds their bytes.
//!
//! Why segments: redb stores a value inside a B-tree leaf, and a leaf is a power of two of 4 KiB
//! pages. Compressed source files are mostly 1-5 KiB, so one value per blob cost 2.2-2.7x its
//! size on disk (measured), and a 200 KiB value 1.7x. Instead, the encoded bytes of every new
//! blob and chunk are appended to a log cut into segments of [`SEGMENT_SIZE`] bytes, a size
//! that fills exactly 16 pages; a blob is located by (segment, offset, length) and may span
//! segments. Each blob is still compressed on its own, so any blob is read without touching its
//! neighbours. The cost: deleting blobs leaves holes that only a repack reclaims (see gc).
//!
//! Record formats (hand-rolled, little-endian, so they can be read in a hex dump):
//!
//! ```text
//! span   = segment:u64 offset:u32 length:u32                  where the encoded bytes are
//! blob   = 0x00 size:u64 span   raw bytes
//!        | 0x01 size:u64 span   one zstd frame
//!        | 0x02 size:u64 n:u32 (id:[u8;32] len:u32){n}        split into chunks
//!        | 0x03 size:u64 span dict:u32   one zstd frame made with dictionary `dict`
//!        | 0x04 size:u64 span skip:u32   bytes skip..skip+size of the group frame at span
//!        | 0x05 size:u64 span skip:u32   the same, a group gc made at its denser level
//!        | 0x06 size:u64 n:u32 (page:[u8;32] covered:u32){n}   chunk list in pages
//! page   = (id:[u8;32] len:u32)*   stored as a raw chunk, its id the BLAKE3 of these bytes
//! chunk  = 0x00 len:u32 span | 0x01 len:u32 span
//! ```
//!
//! `size`/`len` are the uncompressed lengths, so a reader knows how much to allocate and
//! `verify` can check them. `dict` names a row of the `dicts` table (see [`super::dict`]); tag
//! 0x03 is only ever written by gc's recompression, and a store without such records reads
//! exactly as it did before dictionaries existed. Tags 0x04 and 0x05 are small blobs compressed
//! together (see [`super::group`]): several records name the same span. Chunks never use a dictionary: at 64 KiB and
//! up (256 KiB in stores chunked before), a chunk holds enough context of its own.
//!
//! Tags 0x03-0x06 need schema 2 (see [`super::format`]): a rewind that predates them reads
//! only stores at schema 1 and refuses a store at 2 at open, saying so, rather than failing
//! mid-read on a tag it does not know. Stores written at schema 1 since the tags were added may
//! hold them too; this build reads them, and raises them to 2 when it first opens them writable.
//! A new tag, from here on, needs a format feature or a new schema version.

use redb::ReadableTable;

use crate::error::{Error, Result};
use crate::id::Id;

/// Files at least this large are split with FastCDC; smaller ones are stored whole.
pub const CHUNK_THRESHOLD: u64 = 4 << 20;
/// Smallest chunk FastCDC cuts. A quarter of [`CHUNK_AVG`]: after an edit, a cut point is
/// found again sooner the less the minimum skips (256 KiB before; see ARCHITECTURE.md).
pub const CHUNK_MIN: u32 = 64 << 10;
/// Average chunk size FastCDC aims for (512 KiB before): an edit stores the chunks it touches,
/// so this sets what a small edit in a large file costs, against chunks (and chunk-list bytes,
/// 36 per chunk) per GiB. Chunks cut with other sizes read back as they always did; only newly
/// chunked content is cut with these.
pub const CHUNK_AVG: u32 = 256 << 10;
/// Largest chunk. Bounds the memory a chunk takes while it is compressed and read back.
pub const CHUNK_MAX: u32 = 1 << 20;

/// The minimum, average and maximum chunk sizes FastCDC cuts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSizes {
    /// Smallest chunk (but a file's last).
    pub min: u32,
    /// Average.
    pub avg: u32,
    /// Largest.
    pub max: u32,
}

/// What newly chunked content is cut with.
pub const CHUNK_SIZES: ChunkSizes = ChunkSizes {
    min: CHUNK_MIN,
    avg: CHUNK_AVG,
    max: CHUNK_MAX,
};

/// What every large file was cut with before the chunk sizes changed. A file that a store holds cut this
/// way keeps being cut this way (see `ingest`), so its next versions share its chunks.
pub const CHUNK_SIZES_BEFORE: ChunkSizes = ChunkSizes {
    min: 256 << 10,
    avg: 512 << 10,
    max: 1 << 20,
};

/// Cuts `source` into content-defined chunks with [`CHUNK_SIZES`]: the chunking of every
/// large file and artifact, so equal content cuts the same way wherever it comes from.
pub fn chunker<R: std::io::Read>(source: R) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    chunker_sized(source, CHUNK_SIZES)
}

/// Cuts `source` with FastCDC (v2020, normalisation level 1) at `sizes`.
pub fn chunker_sized<R: std::io::Read>(
    source: R,
    sizes: ChunkSizes,
) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    use fastcdc::v2020::{Error as CdcError, Normalization, StreamCDC};
    StreamCDC::with_level(
        source,
        sizes.min as usize,
        sizes.avg as usize,
        sizes.max as usize,
        Normalization::Level1,
    )
    .map(|chunk| match chunk {
        Ok(c) => Ok(c.data),
        Err(CdcError::IoError(e)) => Err(e),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    })
}

/// Bytes in a full segment: 64 KiB less room for redb's leaf header and key, so that a
/// segment fills exactly 16 pages.
pub const SEGMENT_SIZE: usize = 65536 - 256;

const TAG_RAW: u8 = 0;
const TAG_ZSTD: u8 = 1;
const TAG_CHUNKED: u8 = 2;
const TAG_ZSTD_DICT: u8 = 3;
const TAG_GROUP: u8 = 4;
const TAG_GROUP_DENSE: u8 = 5;
const TAG_PAGED: u8 = 6;

/// A large file's chunk list is kept in pages (see [`pages`]) above this many chunks (about
/// 1 GiB): an 8 GiB file has 32,000 chunks, and a flat list (36 bytes each) would be written
/// whole, 1.2 MB, by every version, whatever changed.
pub const PAGED_ABOVE: usize = 4096;
/// Pages hold this many chunks on average (36 KiB)...
const PAGE_AVG: u16 = 1024;
/// ...at least this many (but a list's last page)...
const PAGE_MIN: usize = 256;
/// ...and at most this many, so the content a page covers stays under 4 GiB (it is a u32).
const PAGE_MAX: usize = 4000;

/// Where encoded bytes live in the segment log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    /// First segment.
    pub segment: u64,
    /// Offset in the first segment.
    pub offset: u32,
    /// Length in bytes (may run on into the following segments).
    pub len: u32,
}

/// One chunk of a chunked blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRef {
    /// BLAKE3 of the chunk's bytes.
    pub id: Id,
    /// Uncompressed length.
    pub len: u32,
}

/// Encoded content: raw or one zstd frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payload {
    /// Whether `bytes` is a zstd frame.
    pub zstd: bool,
    /// The bytes as stored.
    pub bytes: Vec<u8>,
}

/// A decoded blob record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobRecord {
    /// Stored whole.
    Whole {
        /// Uncompressed length.
        size: u64,
        /// Whether the stored bytes are a zstd frame.
        zstd: bool,
        /// The dictionary the frame was made with (always a zstd frame then), if any.
        dict: Option<u32>,
        /// Where they are.
        span: Span,
    },
    /// Compressed with other small blobs in one group frame (see the store's `group` module).
    Grouped {
        /// Uncompressed length.
        size: u64,
        /// Where the group's frame is (shared with the other members).
        span: Span,
        /// Where the blob starts in the group's decompressed bytes.
        skip: u32,
        /// Whether gc made the group at its denser level (otherwise a snapshot did, at its
        /// fast one, and the next gc regroups it).
        dense: bool,
    },
    /// Split into chunks, the list of which is itself cut into pages stored as chunks (see
    /// `blob::pages`): a large file's edit then writes the page it touches, not the whole list.
    Paged {
        /// Total uncompressed length.
        size: u64,
        /// The pages in order; each `len` is the content bytes the page's chunks hold.
        pages: Vec<ChunkRef>,
    },
    /// Split into chunks.
    Chunked {
        /// Total uncompressed length.
        size: u64,
        /// The chunks in order.
        chunks: Vec<ChunkRef>,
    },
}

impl BlobRecord {
    /// The blob's uncompressed length.
    pub fn size(&self) -> u64 {
        match self {
            BlobRecord::Whole { size, .. }
            | BlobRecord::Grouped { size, .. }
            | BlobRecord::Paged { size, .. }
            | BlobRecord::Chunked { size, .. } => *size,
        }
    }
}

/// A decoded chunk record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkRecord {
    /// Uncompressed length.
    pub len: u32,
    /// Whether the stored bytes are a zstd frame.
    pub zstd: bool,
    /// Where they are.
    pub span: Span,
}

/// One zstd frame of `data` at `level`; None only when zstd cannot allocate its context. Each
/// thread keeps one zstd context: creating one per blob cost 7% of a cold snapshot.
pub fn zstd_frame(data: &[u8], level: i32) -> Option<Vec<u8>> {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
            const { std::cell::RefCell::new(None) };
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            *slot = zstd::bulk::Compressor::new(level).ok().map(|c| (level, c));
        }
        slot.as_mut().and_then(|(_, c)| c.compress(data).ok())
    })
}

/// Compresses `data` at `level` when that pays (the frame is smaller), as it does not for
/// already-compressed files.
pub fn encode_payload(data: &[u8], level: i32) -> Payload {
    if data.len() >= 64
        && let Some(frame) = zstd_frame(data, level).filter(|f| f.len() < data.len())
    {
        return Payload {
            zstd: true,
            bytes: frame,
        };
    }
    Payload {
        zstd: false,
        bytes: data.to_vec(),
    }
}

fn push_span(out: &mut Vec<u8>, span: &Span) {
    out.extend_from_slice(&span.segment.to_le_bytes());
    out.extend_from_slice(&span.offset.to_le_bytes());
    out.extend_from_slice(&span.len.to_le_bytes());
}

/// Encodes the record of a whole blob.
pub fn encode_whole(size: u64, zstd: bool, span: &Span) -> Vec<u8> {
    let mut out = Vec::with_capacity(25);
    out.push(if zstd { TAG_ZSTD } else { TAG_RAW });
    out.extend_from_slice(&size.to_le_bytes());
    push_span(&mut out, span);
    out
}

/// Encodes the record of a whole blob compressed with dictionary `dict`.
pub fn encode_whole_dict(size: u64, dict: u32, span: &Span) -> Vec<u8> {
    let mut out = Vec::with_capacity(29);
    out.push(TAG_ZSTD_DICT);
    out.extend_from_slice(&size.to_le_bytes());
    push_span(&mut out, span);
    out.extend_from_slice(&dict.to_le_bytes());
    out
}

/// Encodes the record of a whole blob, with or without a dictionary.
pub fn encode_whole_record(size: u64, zstd: bool, dict: Option<u32>, span: &Span) -> Vec<u8> {
    match dict {
        Some(d) => encode_whole_dict(size, d, span),
        None => encode_whole(size, zstd, span),
    }
}

/// Encodes the record of a blob that is bytes `skip..skip + size` of the group frame at `span`.
pub fn encode_grouped(size: u64, span: &Span, skip: u32, dense: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(29);
    out.push(if dense { TAG_GROUP_DENSE } else { TAG_GROUP });
    out.extend_from_slice(&size.to_le_bytes());
    push_span(&mut out, span);
    out.extend_from_slice(&skip.to_le_bytes());
    out
}

/// Encodes the record of a blob whose chunk list is in pages: `pages` name them, each with the
/// bytes of content it covers.
pub fn encode_paged(size: u64, pages: &[ChunkRef]) -> Vec<u8> {
    let mut out = encode_chunked(size, pages);
    out[0] = TAG_PAGED;
    out
}

/// Encodes the record of a chunked blob.
pub fn encode_chunked(size: u64, chunks: &[ChunkRef]) -> Vec<u8> {
    let mut out = Vec::with_capacity(13 + chunks.len() * 36);
    out.push(TAG_CHUNKED);
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&(chunks.len() as u32).to_le_bytes());
    for c in chunks {
        out.extend_from_slice(&c.id.0);
        out.extend_from_slice(&c.len.to_le_bytes());
    }
    out
}

/// Encodes a chunk record.
pub fn encode_chunk(len: u32, zstd: bool, span: &Span) -> Vec<u8> {
    let mut out = Vec::with_capacity(21);
    out.push(if zstd { TAG_ZSTD } else { TAG_RAW });
    out.extend_from_slice(&len.to_le_bytes());
    push_span(&mut out, span);
    out
}

fn corrupt(kind: &'static str, id: &Id, why: impl Into<String>) -> Error {
    Error::Corrupt {
        kind,
        id: id.hex(),
        why: why.into(),
    }
}

fn take<const N: usize>(bytes: &mut &[u8]) -> Option<[u8; N]> {
    let (head, rest) = bytes.split_first_chunk::<N>()?;
    *bytes = rest;
    Some(*head)
}

fn take_span(bytes: &mut &[u8]) -> Option<Span> {
    Some(Span {
        segment: u64::from_le_bytes(take::<8>(bytes)?),
        offset: u32::from_le_bytes(take::<4>(bytes)?),
        len: u32::from_le_bytes(take::<4>(bytes)?),
    })
}

/// Decodes a stored blob record.
pub fn decode_blob(id: &Id, value: &[u8]) -> Result<BlobRecord> {
    let mut rest = value;
    let [tag] = take::<1>(&mut rest).ok_or_else(|| corrupt("blob", id, "empty record"))?;
    let size = take::<8>(&mut rest)
        .map(u64::from_le_bytes)
        .ok_or_else(|| corrupt("blob", id, "truncated header"))?;
    match tag {
        TAG_RAW | TAG_ZSTD | TAG_ZSTD_DICT => {
            let span =
                take_span(&mut rest).ok_or_else(|| corrupt("blob", id, "truncated location"))?;
            let dict = if tag == TAG_ZSTD_DICT {
                let d = take::<4>(&mut rest)
                    .map(u32::from_le_bytes)
                    .ok_or_else(|| corrupt("blob", id, "truncated dictionary id"))?;
                Some(d)
            } else {
                None
            };
            if !rest.is_empty() {
                return Err(corrupt("blob", id, "trailing bytes after the record"));
            }
            if tag == TAG_RAW && u64::from(span.len) != size {
                return Err(corrupt(
                    "blob",
                    id,
                    format!("raw length {} but size {size}", span.len),
                ));
            }
            Ok(BlobRecord::Whole {
                size,
                zstd: tag != TAG_RAW,
                dict,
                span,
            })
        }
        TAG_GROUP | TAG_GROUP_DENSE => {
            let span =
                take_span(&mut rest).ok_or_else(|| corrupt("blob", id, "truncated location"))?;
            let skip = take::<4>(&mut rest)
                .map(u32::from_le_bytes)
                .ok_or_else(|| corrupt("blob", id, "truncated group offset"))?;
            if !rest.is_empty() {
                return Err(corrupt("blob", id, "trailing bytes after the record"));
            }
            if u64::from(skip).saturating_add(size) > super::group::FRAME_LIMIT {
                return Err(corrupt(
                    "blob",
                    id,
                    format!("bytes {skip}+{size} lie beyond any group"),
                ));
            }
            Ok(BlobRecord::Grouped {
                size,
                span,
                skip,
                dense: tag == TAG_GROUP_DENSE,
            })
        }
        TAG_CHUNKED | TAG_PAGED => {
            let n = take::<4>(&mut rest)
                .map(u32::from_le_bytes)
                .ok_or_else(|| corrupt("blob", id, "truncated chunk count"))?;
            if rest.len() != n as usize * 36 {
                return Err(corrupt(
                    "blob",
                    id,
                    "chunk list length does not match its count",
                ));
            }
            let (list, total) = refs(rest);
            if total != size {
                return Err(corrupt(
                    "blob",
                    id,
                    format!("chunks add up to {total} bytes, header says {size}"),
                ));
            }
            Ok(if tag == TAG_PAGED {
                BlobRecord::Paged { size, pages: list }
            } else {
                BlobRecord::Chunked { size, chunks: list }
            })
        }
        t => Err(corrupt(
            "blob",
            id,
            format!("unknown encoding tag {t} (written by a newer rewind, or damaged)"),
        )),
    }
}

/// Parses `(id:[u8;32] len:u32)*` (a whole number of entries, checked by the caller) and sums
/// the lengths.
fn refs(mut rest: &[u8]) -> (Vec<ChunkRef>, u64) {
    let mut list = Vec::with_capacity(rest.len() / 36);
    let mut total = 0u64;
    while let (Some(cid), Some(len)) = (take::<32>(&mut rest), take::<4>(&mut rest)) {
        let len = u32::from_le_bytes(len);
        total += u64::from(len);
        list.push(ChunkRef { id: Id(cid), len });
    }
    (list, total)
}

/// Encodes a page of a paged chunk list: its chunks' entries, as in a chunked record.
pub fn encode_page(chunks: &[ChunkRef]) -> Vec<u8> {
    let mut out = Vec::with_capacity(chunks.len() * 36);
    for c in chunks {
        out.extend_from_slice(&c.id.0);
        out.extend_from_slice(&c.len.to_le_bytes());
    }
    out
}

/// Decodes page `id` of blob `blob`'s chunk list, which must cover `covered` bytes.
pub fn decode_page(blob: &Id, id: &Id, bytes: &[u8], covered: u32) -> Result<Vec<ChunkRef>> {
    if !bytes.len().is_multiple_of(36) || Id::of(bytes) != *id {
        return Err(corrupt(
            "blob",
            blob,
            format!("page {} of its chunk list is damaged", id.short()),
        ));
    }
    let (list, total) = refs(bytes);
    if total != u64::from(covered) {
        return Err(corrupt(
            "blob",
            blob,
            format!(
                "page {} of its chunk list covers {total} bytes, the record says {covered}",
                id.short()
            ),
        ));
    }
    Ok(list)
}

/// Reads the pages of blob `blob`'s chunk list out of a store's `chunks` and `segments`
/// tables (a read or a write transaction's) and returns its chunks in order.
pub fn read_pages(
    blob: &Id,
    pages: &[ChunkRef],
    chunks: &impl ReadableTable<[u8; 32], &'static [u8]>,
    segments: &impl ReadableTable<u64, &'static [u8]>,
) -> Result<Vec<ChunkRef>> {
    let mut out = Vec::new();
    for p in pages {
        let v = chunks.get(p.id.0)?.ok_or_else(|| Error::Missing {
            kind: "chunk",
            id: p.id.hex(),
        })?;
        let rec = decode_chunk(&p.id, v.value())?;
        let stored = read_span(segments, "chunk", &p.id, &rec.span)?;
        let bytes = inflate("chunk", &p.id, rec.zstd, u64::from(rec.len), stored)?;
        out.extend(decode_page(blob, &p.id, &bytes, p.len)?);
    }
    Ok(out)
}

/// The pages of `chunks` (see [`pages`]), each as its entry in a paged record (its id and the
/// content bytes it covers) and its bytes.
pub fn paged(chunks: &[ChunkRef]) -> Vec<(ChunkRef, Vec<u8>)> {
    pages(chunks)
        .into_iter()
        .map(|page| {
            let bytes = encode_page(page);
            let covered: u64 = page.iter().map(|c| u64::from(c.len)).sum();
            let entry = ChunkRef {
                id: Id::of(&bytes),
                len: covered as u32,
            };
            (entry, bytes)
        })
        .collect()
}

/// Cuts a large file's chunk list into pages where a chunk's id says so (its first two bytes,
/// read as a number, are a multiple of [`PAGE_AVG`]), between [`PAGE_MIN`] and [`PAGE_MAX`]
/// chunks: content-defined, so an edit that changes a few chunks changes the page or two they
/// are in and no other, whatever it does to the chunk count.
pub fn pages(chunks: &[ChunkRef]) -> Vec<&[ChunkRef]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in chunks.iter().enumerate() {
        let n = i + 1 - start;
        let cut = u16::from_le_bytes([c.id.0[0], c.id.0[1]]) % PAGE_AVG == 0;
        if (cut && n >= PAGE_MIN) || n >= PAGE_MAX {
            out.push(&chunks[start..=i]);
            start = i + 1;
        }
    }
    if start < chunks.len() {
        out.push(&chunks[start..]);
    }
    out
}

/// Decodes a stored chunk record.
pub fn decode_chunk(id: &Id, value: &[u8]) -> Result<ChunkRecord> {
    let mut rest = value;
    let [tag] = take::<1>(&mut rest).ok_or_else(|| corrupt("chunk", id, "empty record"))?;
    let len = take::<4>(&mut rest)
        .map(u32::from_le_bytes)
        .ok_or_else(|| corrupt("chunk", id, "truncated header"))?;
    let span = take_span(&mut rest).ok_or_else(|| corrupt("chunk", id, "truncated location"))?;
    if tag > TAG_ZSTD || !rest.is_empty() {
        return Err(corrupt("chunk", id, "malformed record"));
    }
    if tag == TAG_RAW && span.len != len {
        return Err(corrupt("chunk", id, "raw length does not match"));
    }
    Ok(ChunkRecord {
        len,
        zstd: tag == TAG_ZSTD,
        span,
    })
}

/// Turns stored bytes back into content, checking the length. Takes the bytes owned or
/// borrowed: a zstd frame is only read, and only stored bytes that are the content already
/// (not compressed) are copied when borrowed.
pub fn inflate(
    kind: &'static str,
    id: &Id,
    zstd: bool,
    size: u64,
    stored: impl AsRef<[u8]> + Into<Vec<u8>>,
) -> Result<Vec<u8>> {
    inflate_with(kind, id, zstd, None, size, stored)
}

/// [`inflate`] for a frame that may have been made with a dictionary (`dict`, prepared once per
/// reader by [`super::dict::Dictionaries`]).
pub fn inflate_with(
    kind: &'static str,
    id: &Id,
    zstd: bool,
    dict: Option<&zstd::zstd_safe::DDict<'static>>,
    size: u64,
    stored: impl AsRef<[u8]> + Into<Vec<u8>>,
) -> Result<Vec<u8>> {
    thread_local! {
        static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
        static DCTX: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let out = if let Some(ddict) = dict {
        DCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            let dctx = slot.get_or_insert_with(zstd::zstd_safe::DCtx::create);
            // The record's size bounds the allocation: a damaged record cannot make us
            // allocate more than it claims, and a frame that decodes longer fails.
            let mut out = Vec::with_capacity(size as usize);
            dctx.decompress_using_ddict(&mut out, stored.as_ref(), ddict)
                .map(|_| out)
                .map_err(|code| {
                    corrupt(
                        kind,
                        id,
                        format!(
                            "zstd with dictionary: {}",
                            zstd::zstd_safe::get_error_name(code)
                        ),
                    )
                })
        })?
    } else if zstd {
        DECOMPRESSOR
            .with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.is_none() {
                    *slot = Some(zstd::bulk::Decompressor::new()?);
                }
                match slot.as_mut() {
                    Some(d) => d.decompress(stored.as_ref(), size as usize),
                    None => Err(std::io::Error::other("no zstd context")),
                }
            })
            .map_err(|e| corrupt(kind, id, format!("zstd: {e}")))?
    } else {
        stored.into()
    };
    if out.len() as u64 != size {
        return Err(corrupt(
            kind,
            id,
            format!("decoded to {} bytes, expected {size}", out.len()),
        ));
    }
    Ok(out)
}

/// Appends encoded bytes to the segment log, cutting full segments as it goes.
#[derive(Debug)]
pub struct SegmentWriter {
    next: u64,
    buf: Vec<u8>,
}

impl SegmentWriter {
    /// Starts writing at segment `next` (the store's counter).
    pub fn new(next: u64) -> SegmentWriter {
        SegmentWriter {
            next,
            buf: Vec::with_capacity(SEGMENT_SIZE),
        }
    }

    /// Appends `bytes`; calls `flush(segment, data)` for every segment it fills. Returns the
    /// span the bytes occupy.
    pub fn append(
        &mut self,
        mut bytes: &[u8],
        flush: &mut dyn FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<Span> {
        let span = Span {
            segment: self.next,
            offset: self.buf.len() as u32,
            len: bytes.len() as u32,
        };
        while !bytes.is_empty() {
            let room = SEGMENT_SIZE - self.buf.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.buf.extend_from_slice(now);
            bytes = later;
            if self.buf.len() == SEGMENT_SIZE {
                flush(self.next, &self.buf)?;
                self.buf.clear();
                self.next += 1;
            }
        }
        Ok(span)
    }

    /// Writes the last, partly filled segment; returns the next free segment number.
    pub fn finish(mut self, flush: &mut dyn FnMut(u64, &[u8]) -> Result<()>) -> Result<u64> {
        if !self.buf.is_empty() {
            flush(self.next, &self.buf)?;
            self.buf.clear();
            self.next += 1;
        }
        Ok(self.next)
    }
}

/// Copies the stored bytes at `span` out of the segment log `segments` (a read or a write
/// transaction's table), naming the object `kind` `id` in any error.
pub fn read_span(
    segments: &impl ReadableTable<u64, &'static [u8]>,
    kind: &'static str,
    id: &Id,
    span: &Span,
) -> Result<Vec<u8>> {
    let want = span.len as usize;
    let mut out = Vec::with_capacity(want);
    let (mut seg, mut off) = (span.segment, span.offset as usize);
    while out.len() < want {
        let v = segments.get(seg)?.ok_or_else(|| Error::Corrupt {
            kind,
            id: id.hex(),
            why: format!("its bytes are in segment {seg}, which is missing"),
        })?;
        let data = v.value();
        let n = data.len().saturating_sub(off).min(want - out.len());
        if n == 0 {
            return Err(Error::Corrupt {
                kind,
                id: id.hex(),
                why: format!("segment {seg} is shorter than its records say"),
            });
        }
        out.extend_from_slice(&data[off..off + n]);
        seg += 1;
        off = 0;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_damage() {
        let id = Id::default();
        let span = Span {
            segment: 7,
            offset: 100,
            len: 3,
        };
        let enc = encode_whole(3, false, &span);
        assert_eq!(
            decode_blob(&id, &enc).unwrap(),
            BlobRecord::Whole {
                size: 3,
                zstd: false,
                dict: None,
                span
            }
        );
        assert!(decode_blob(&id, &enc[..enc.len() - 1]).is_err());
        assert!(
            decode_blob(&id, &encode_whole(4, false, &span)).is_err(),
            "raw size must match"
        );
        let chunks = [
            ChunkRef {
                id: Id([1; 32]),
                len: 10,
            },
            ChunkRef {
                id: Id([2; 32]),
                len: 5,
            },
        ];
        let enc = encode_chunked(15, &chunks);
        assert_eq!(
            decode_blob(&id, &enc).unwrap(),
            BlobRecord::Chunked {
                size: 15,
                chunks: chunks.to_vec()
            }
        );
        assert!(decode_blob(&id, &encode_chunked(16, &chunks)).is_err());
        assert!(decode_blob(&id, &[9, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        let c = encode_chunk(5, true, &span);
        assert_eq!(
            decode_chunk(&id, &c).unwrap(),
            ChunkRecord {
                len: 5,
                zstd: true,
                span
            }
        );
    }

    /// The byte layouts written before dictionaries existed decode as they always did, and the
    /// dictionary record is the old zstd record plus a dictionary id.
    #[test]
    fn old_layouts_still_decode_and_the_dictionary_layout_is_fixed() {
        let id = Id::default();
        let span = Span {
            segment: 2,
            offset: 5,
            len: 9,
        };
        let mut old = vec![1u8];
        old.extend_from_slice(&20u64.to_le_bytes());
        old.extend_from_slice(&2u64.to_le_bytes());
        old.extend_from_slice(&5u32.to_le_bytes());
        old.extend_from_slice(&9u32.to_le_bytes());
        assert_eq!(encode_whole(20, true, &span), old);
        assert_eq!(
            decode_blob(&id, &old).unwrap(),
            BlobRecord::Whole {
                size: 20,
                zstd: true,
                dict: None,
                span
            }
        );
        let mut dense = old.clone();
        dense[0] = 3;
        dense.extend_from_slice(&7u32.to_le_bytes());
        assert_eq!(encode_whole_dict(20, 7, &span), dense);
        assert_eq!(
            decode_blob(&id, &dense).unwrap(),
            BlobRecord::Whole {
                size: 20,
                zstd: true,
                dict: Some(7),
                span
            }
        );
        assert!(decode_blob(&id, &dense[..dense.len() - 1]).is_err());
    }

    #[test]
    fn payloads_compress_only_when_it_pays() {
        let p = encode_payload(&[7u8; 100_000], 3);
        assert!(p.zstd && p.bytes.len() < 1000);
        let back = inflate("blob", &Id::default(), true, 100_000, p.bytes).unwrap();
        assert_eq!(back, vec![7u8; 100_000]);
        assert!(!encode_payload(b"short", 3).zstd);
    }

    #[test]
    fn segment_writer_cuts_full_segments_and_spans_them() {
        let mut segs: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut flush = |n: u64, d: &[u8]| {
            segs.push((n, d.to_vec()));
            Ok(())
        };
        let mut w = SegmentWriter::new(5);
        let a = w.append(&[1u8; 1000], &mut flush).unwrap();
        let b = w.append(&vec![2u8; SEGMENT_SIZE * 2], &mut flush).unwrap();
        let next = w.finish(&mut flush).unwrap();
        assert_eq!(
            a,
            Span {
                segment: 5,
                offset: 0,
                len: 1000
            }
        );
        assert_eq!(
            b,
            Span {
                segment: 5,
                offset: 1000,
                len: (SEGMENT_SIZE * 2) as u32
            }
        );
        assert_eq!(next, 8);
        assert_eq!(segs.iter().map(|s| s.0).collect::<Vec<_>>(), [5, 6, 7]);
        assert!(segs[..2].iter().all(|s| s.1.len() == SEGMENT_SIZE));
        assert_eq!(segs[2].1.len(), 1000);
    }
}
