//! Blob and chunk encoding.
//!
//! These two value formats are hand-rolled (not postcard) because they carry bulk bytes that must
//! be borrowed straight out of redb's pages without a copy, and because their layout is the part
//! of the store most worth being able to read with a hex dump:
//!
//! ```text
//! blob   = 0x00 size:u64le bytes            raw, stored whole
//!        | 0x01 size:u64le zstd-frame        compressed, stored whole
//!        | 0x02 size:u64le n:u32le (id:[u8;32] len:u32le){n}   split into chunks
//! chunk  = 0x00 len:u32le bytes | 0x01 len:u32le zstd-frame
//! ```
//!
//! `size`/`len` are the uncompressed lengths, so a reader knows how much to allocate and
//! `verify` can check them.

use crate::error::{Error, Result};
use crate::id::Id;

/// Files at least this large are split with FastCDC; smaller ones are stored whole.
pub const CHUNK_THRESHOLD: u64 = 4 << 20;
/// FastCDC bounds. The maximum stays at 1 MiB because redb rounds a value above one 4 KiB page
/// up to a power of two of pages: larger chunks would waste space and memory.
pub const CHUNK_MIN: u32 = 256 << 10;
/// Average chunk size FastCDC aims for.
pub const CHUNK_AVG: u32 = 512 << 10;
/// Largest chunk.
pub const CHUNK_MAX: u32 = 1 << 20;

const TAG_RAW: u8 = 0;
const TAG_ZSTD: u8 = 1;
const TAG_CHUNKED: u8 = 2;

/// One chunk of a chunked blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRef {
    /// BLAKE3 of the chunk's bytes.
    pub id: Id,
    /// Uncompressed length.
    pub len: u32,
}

/// A decoded blob record, borrowing from the stored value.
#[derive(Debug)]
pub enum BlobRecord<'a> {
    /// Stored whole, uncompressed.
    Raw(&'a [u8]),
    /// Stored whole, zstd-compressed; `size` is the uncompressed length.
    Zstd {
        /// Uncompressed length.
        size: u64,
        /// The zstd frame.
        frame: &'a [u8],
    },
    /// Split into chunks stored in the chunks table.
    Chunked {
        /// Total uncompressed length.
        size: u64,
        /// The chunks in order.
        chunks: Vec<ChunkRef>,
    },
}

impl BlobRecord<'_> {
    /// The blob's uncompressed length.
    pub fn size(&self) -> u64 {
        match self {
            BlobRecord::Raw(b) => b.len() as u64,
            BlobRecord::Zstd { size, .. } | BlobRecord::Chunked { size, .. } => *size,
        }
    }
}

/// Compresses `data` at `level`, or returns `None` when compression does not pay (the frame
/// would not be smaller), as with already-compressed files.
pub fn compress(data: &[u8], level: i32) -> Option<Vec<u8>> {
    if data.len() < 64 {
        return None;
    }
    let frame = zstd::bulk::compress(data, level).ok()?;
    (frame.len() < data.len()).then_some(frame)
}

/// Encodes a whole (unchunked) blob, compressing it when that pays.
pub fn encode_whole(data: &[u8], level: i32) -> Vec<u8> {
    let size = (data.len() as u64).to_le_bytes();
    match compress(data, level) {
        Some(frame) => [&[TAG_ZSTD][..], &size, &frame].concat(),
        None => [&[TAG_RAW][..], &size, data].concat(),
    }
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

/// Encodes one chunk, compressing it when that pays.
pub fn encode_chunk(data: &[u8], level: i32) -> Vec<u8> {
    let len = (data.len() as u32).to_le_bytes();
    match compress(data, level) {
        Some(frame) => [&[TAG_ZSTD][..], &len, &frame].concat(),
        None => [&[TAG_RAW][..], &len, data].concat(),
    }
}

fn corrupt(kind: &'static str, id: &Id, why: impl Into<String>) -> Error {
    Error::Corrupt {
        kind,
        id: id.hex(),
        why: why.into(),
    }
}

fn split_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*head), rest))
}

/// Decodes a stored blob value.
pub fn decode_blob<'a>(id: &Id, value: &'a [u8]) -> Result<BlobRecord<'a>> {
    let (&tag, rest) = value
        .split_first()
        .ok_or_else(|| corrupt("blob", id, "empty record"))?;
    let (size, rest) = split_u64(rest).ok_or_else(|| corrupt("blob", id, "truncated header"))?;
    match tag {
        TAG_RAW => {
            if rest.len() as u64 != size {
                return Err(corrupt(
                    "blob",
                    id,
                    format!("length {} but header says {size}", rest.len()),
                ));
            }
            Ok(BlobRecord::Raw(rest))
        }
        TAG_ZSTD => Ok(BlobRecord::Zstd { size, frame: rest }),
        TAG_CHUNKED => {
            let (n, mut rest) = rest
                .split_first_chunk::<4>()
                .map(|(n, r)| (u32::from_le_bytes(*n) as usize, r))
                .ok_or_else(|| corrupt("blob", id, "truncated chunk count"))?;
            if rest.len() != n * 36 {
                return Err(corrupt(
                    "blob",
                    id,
                    "chunk list length does not match its count",
                ));
            }
            let mut chunks = Vec::with_capacity(n);
            let mut total = 0u64;
            while let Some((cid, r)) = rest.split_first_chunk::<32>() {
                let Some((len, r)) = r.split_first_chunk::<4>() else {
                    break;
                };
                let len = u32::from_le_bytes(*len);
                total += u64::from(len);
                chunks.push(ChunkRef { id: Id(*cid), len });
                rest = r;
            }
            if total != size {
                return Err(corrupt(
                    "blob",
                    id,
                    format!("chunks add up to {total} bytes, header says {size}"),
                ));
            }
            Ok(BlobRecord::Chunked { size, chunks })
        }
        t => Err(corrupt("blob", id, format!("unknown encoding tag {t}"))),
    }
}

/// Decompresses a whole-stored blob's bytes (not for chunked blobs).
pub fn inflate_zstd(kind: &'static str, id: &Id, size: u64, frame: &[u8]) -> Result<Vec<u8>> {
    let out = zstd::bulk::decompress(frame, size as usize)
        .map_err(|e| corrupt(kind, id, format!("zstd: {e}")))?;
    if out.len() as u64 != size {
        return Err(corrupt(
            kind,
            id,
            format!("decompressed to {} bytes, expected {size}", out.len()),
        ));
    }
    Ok(out)
}

/// Decodes a stored chunk value into its bytes.
pub fn decode_chunk(id: &Id, value: &[u8]) -> Result<Vec<u8>> {
    let (&tag, rest) = value
        .split_first()
        .ok_or_else(|| corrupt("chunk", id, "empty record"))?;
    let (len, rest) = rest
        .split_first_chunk::<4>()
        .map(|(n, r)| (u32::from_le_bytes(*n), r))
        .ok_or_else(|| corrupt("chunk", id, "truncated header"))?;
    match tag {
        TAG_RAW if rest.len() as u64 == u64::from(len) => Ok(rest.to_vec()),
        TAG_RAW => Err(corrupt("chunk", id, "length does not match header")),
        TAG_ZSTD => inflate_zstd("chunk", id, u64::from(len), rest),
        t => Err(corrupt("chunk", id, format!("unknown encoding tag {t}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_blobs_round_trip_raw_and_compressed() {
        let id = Id::default();
        for data in [b"".to_vec(), b"abc".to_vec(), vec![7u8; 100_000]] {
            let enc = encode_whole(&data, 3);
            let back = match decode_blob(&id, &enc).unwrap() {
                BlobRecord::Raw(b) => b.to_vec(),
                BlobRecord::Zstd { size, frame } => inflate_zstd("blob", &id, size, frame).unwrap(),
                BlobRecord::Chunked { .. } => panic!("not chunked"),
            };
            assert_eq!(back, data);
        }
    }

    #[test]
    fn chunked_records_check_their_sizes() {
        let id = Id::default();
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
        match decode_blob(&id, &enc).unwrap() {
            BlobRecord::Chunked { size, chunks: c } => {
                assert_eq!(size, 15);
                assert_eq!(c, chunks);
            }
            other => panic!("{other:?}"),
        }
        let bad = encode_chunked(16, &chunks);
        assert!(decode_blob(&id, &bad).is_err());
        assert!(decode_blob(&id, &enc[..enc.len() - 1]).is_err());
        assert!(decode_blob(&id, &[9, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }
}
